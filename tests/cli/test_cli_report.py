"""``report`` (the health report) and what ``explain`` says of a page's section and
visits: through click's test runner, on a store of visits the test wrote and on
one that keeps none, and as a real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.helpers import Bare

from sitemap_middleware import Entry, open_store, stores
from sitemap_middleware.cli import Exit, main
from sitemap_middleware.model import UNDATED
from sitemap_middleware.stores.contract import Visits

ROOT = Path(__file__).resolve().parents[2]
BASE = "https://www.example.com"
DAY = 86_400
NOW = int(time.time())

# An app whose middleware's store holds pages and the visits the test wrote:
# a store of this process (the memory store keeps visits), named by --app.
APP = f"""
    from datetime import datetime, timezone

    from flask import Flask

    from sitemap_middleware import Entry, sitemap
    from sitemap_middleware.flask import Sitemap
    from sitemap_middleware.stores.contract import Visit
    from sitemap_middleware.stores.memory import MemoryStore

    NOW, DAY = {NOW}, {DAY}

    def at(days):
        return datetime.fromtimestamp(NOW - days * DAY, timezone.utc)

    store = MemoryStore()
    store.upsert([
        Entry("/", at(1), route="/"),
        Entry("/blog/a", at(3), route="/blog/<slug>"),
        Entry("/blog/b", at(400), route="/blog/<slug>"),
    ])
    store.note([("/draft", "noindex", at(1))])
    store.visited([
        Visit("/", "google", NOW - 2 * DAY, 200),
        Visit("/", "", NOW - 60, 200),
        Visit("/blog/a", "bing", NOW - 20 * DAY, 200),
        Visit("/blog/a", "", NOW - 40 * DAY, 200),
        Visit("/admin/users", "google", NOW - DAY, 200),
        Visit("/draft", "bing", NOW - 3 * DAY, 200),
        Visit("/sitemap.xml", "google", NOW - 3600, 200),
    ])

    app = Flask(__name__)
    app.config["SITEMAP"] = {{
        "base_url": "{BASE}",
        "store": store,
        "sections": {{"posts": ["/blog/*"]}},
    }}
    Sitemap(app)

    @app.get("/")
    def home():
        return "<title>Home</title>"

    @app.get("/blog/<slug>")
    def post(slug):
        return f"<title>{{slug}}</title>"

    @app.get("/contact")
    def contact():  # a page no one reached: no URL of its route is listed
        return "<title>Contact</title>"

    @app.get("/admin/stats")
    def stats():  # excluded: its route having no URL is as it should be
        return "<title>Stats</title>"

    @app.get("/feedback")
    @sitemap(exclude=True)
    def feedback():
        return "<title>Feedback</title>"
"""


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def crawled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``--app`` of a middleware whose store holds the visits above."""
    name = f"report_app_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(APP))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:app"


@pytest.fixture
def sqlite_uri(tmp_path: Path) -> str:
    """An SQLite store of three pages, no visits written."""
    uri = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    store = open_store(uri)
    when = datetime.fromtimestamp(NOW - 2 * DAY, timezone.utc)
    store.upsert([Entry("/", when), Entry("/a", when), Entry("/b", UNDATED)])
    store.close()
    return uri


@pytest.fixture
def uri(sqlite_uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The same pages in a store that keeps no visits: the SQLite file behind
    a scheme of this test's own."""
    monkeypatch.setitem(
        stores._REGISTRY, "bare", lambda _: Bare(open_store(sqlite_uri))
    )
    return "bare://site"


def test_report_as_json(crawled: str) -> None:
    code, out, err = _run("report", "--app", crawled, "--json")
    assert code == Exit.OK, err
    report = json.loads(out)
    assert report["crawls_kept"] is True
    assert report["listed"] == 3
    (section,) = report["sections"]  # the memory store keeps one section yet
    assert section["fetched"]["7d"] == {"urls": 1, "engines": {"google": 1}}
    assert section["fetched"]["30d"] == {
        "urls": 2,
        "engines": {"bing": 1, "google": 1},
    }
    assert section["never_fetched_examples"] == ["/blog/b"]
    assert section["stale_examples"] == ["/blog/a", "/blog/b"]
    assert section["lastmod"] == {
        "undated": 0,
        "week": 2,
        "month": 0,
        "year": 0,
        "older": 1,
    }
    unlisted = {u["url"]: u for u in report["unlisted_examples"]}
    assert report["unlisted"] == 2
    admin = unlisted[f"{BASE}/admin/users"]
    assert (admin["source"], admin["reason"]) == ("config", "excluded")
    assert "excluded by exclude pattern '*/admin/*'" in admin["why"]
    draft = unlisted[f"{BASE}/draft"]
    assert (draft["source"], draft["reason"]) == ("writer", "noindex")
    assert "noindex" in draft["why"]
    assert report["unrouted"] == ["/contact"]
    (document,) = report["documents"]
    assert (document["path"], document["engine"]) == ("/sitemap.xml", "google")


def test_report_as_text(crawled: str) -> None:
    code, out, err = _run("report", "--app", crawled)
    assert code == Exit.OK, err
    assert f"Sitemap health of {BASE}" in out
    assert "section default: 3 URLs" in out
    assert (
        "fetched by a verified crawler: 1 in 7 days (google 1), "
        "2 in 30 days (bing 1, google 1)"
    ) in out
    assert "stale (served to no one for 30 days): 2" in out
    assert "fetched by crawlers, not listed: 2" in out
    assert "why: the last time a writer read it: the page says noindex" in out
    assert "  google: /sitemap.xml " in out
    assert "routes with no URL listed: 1\n  /contact\n" in out


def test_report_stale_after_days(crawled: str) -> None:
    code, out, _ = _run("report", "--app", crawled, "--json", "--stale-after", "50")
    assert code == Exit.OK
    (section,) = json.loads(out)["sections"]
    assert section["stale_examples"] == ["/blog/b"]
    code, _, err = _run("report", "--app", crawled, "--stale-after", "0")
    assert code == Exit.USAGE
    assert "--stale-after" in err


def test_report_of_a_store_that_keeps_no_visits(uri: str) -> None:
    assert not isinstance(open_store(uri), Visits)
    code, out, _ = _run("report", "--store", uri, "--base-url", BASE)
    assert code == Exit.OK
    assert "crawl data: not kept by this store" in out
    assert "lastmod: 2 in the last 7 days, 0 in 8 to 30 days" in out
    assert "1 undated" in out
    code, out, _ = _run("report", "--store", uri, "--base-url", BASE, "--json")
    report = json.loads(out)
    assert (report["crawls_kept"], report["listed"]) == (False, 3)
    assert report["unrouted"] is None  # no app: its routes are unknown


def test_report_needs_an_app_or_a_base_url(uri: str) -> None:
    code, _, err = _run("report", "--store", uri)
    assert code == Exit.USAGE
    assert err.startswith("Error: give --app, or --base-url")


def test_report_of_a_store_that_is_not_there(tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'none.sqlite3'}"
    code, _, err = _run("report", "--store", missing, "--base-url", BASE)
    assert code == Exit.STORE
    assert "no store at" in err
    assert not (tmp_path / "none.sqlite3").exists()


def test_explain_shows_the_section_and_the_visits(crawled: str) -> None:
    code, out, _ = _run("explain", "--app", crawled, f"{BASE}/blog/a")
    assert code == Exit.OK
    assert "  section: default\n" in out  # the part's: one section yet
    assert "  fetched by bing: " in out and "(200)" in out
    assert "  last served: " in out
    code, out, _ = _run("explain", "--app", crawled, f"{BASE}/admin/users")
    assert code == Exit.PROBLEMS
    assert "  fetched by google: " in out


def test_explain_an_unlisted_page_names_the_configs_section(crawled: str) -> None:
    """No part holds it: its section is the config's for its path."""
    code, out, _ = _run("explain", "--app", crawled, f"{BASE}/blog/new")
    assert code == Exit.PROBLEMS
    assert "  section: posts\n" in out
    assert "  last served: never, as far as kept\n" in out


def test_explain_on_a_store_without_visits(uri: str) -> None:
    code, out, _ = _run("explain", "--store", uri, "--base-url", BASE, f"{BASE}/a")
    assert code == Exit.OK
    assert "  section: default\n  visits: not kept by this store\n" in out


def test_report_as_a_real_process(sqlite_uri: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "report", "--json"],
        env={**env, "SITEMAP_STORE": sqlite_uri, "SITEMAP_BASE_URL": BASE},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == Exit.OK, done.stderr
    assert json.loads(done.stdout)["listed"] == 3


FASTAPI_APP = f"""
    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse

    from sitemap_middleware.starlette import add_sitemap
    from sitemap_middleware.stores.contract import Visit
    from sitemap_middleware.stores.memory import MemoryStore

    store = MemoryStore()
    store.visited([Visit("/docs", "google", {NOW} - 3600, 200)])
    app = FastAPI()

    @app.get("/", response_class=HTMLResponse)
    def home():
        return "<title>Home</title>"

    add_sitemap(app, {{"base_url": "{BASE}", "store": store}})
"""


def test_report_names_the_apps_route_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --app, why a crawled page is not listed knows its route: FastAPI's
    own docs page is a page of the framework, which no config rule says."""
    name = f"report_fastapi_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(FASTAPI_APP))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run("report", "--app", f"{name}:app", "--json")
    assert code == Exit.OK, err
    (docs,) = json.loads(out)["unlisted_examples"]
    assert (docs["url"], docs["source"], docs["reason"]) == (
        f"{BASE}/docs",
        "config",
        "framework",
    )
    assert docs["why"] == "its route '/docs' is a page of the framework (docs, files)"


def test_flask_sitemap_report(tmp_path: Path) -> None:
    """``flask sitemap report`` reads the app's own store and config."""
    import demo_content
    import flask_app

    uri = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    app = flask_app.create_app({"store": uri})
    runner = app.test_cli_runner()
    assert runner.invoke(args=["sitemap", "seed"]).exit_code == 0
    result = runner.invoke(args=["sitemap", "report", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["base_url"] == "http://127.0.0.1:8000"
    assert report["listed"] == len(demo_content.PUBLIC_PATHS)
