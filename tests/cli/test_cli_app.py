"""The commands that need the app: seed, verify, prune and explain, on the Flask
and FastAPI examples, through click's test runner and as real processes, and as
``flask sitemap ...``; the pages are requested in process, through the middleware.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import demo_content
import pytest
from support.cli import run
from support.helpers import stored_paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit
from sitemap_middleware.cli.replay import fill
from sitemap_middleware.cli.verdict import refusal
from sitemap_middleware.config import Config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BASE = "http://127.0.0.1:8000"  # the examples' base_url
OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)
PRIVATE = ["/account", "/admin/", "/api/posts", "/draft", "/login", "/gone", "/old"]

# The example site's public pages: what seed lists.
PUBLIC = len(demo_content.PUBLIC_PATHS)


def _entry(uri: str, path: str) -> Entry:
    store = open_store(uri)
    try:
        found = [
            e for p in store.parts() for e in store.entries(p.number) if e.path == path
        ]
    finally:
        store.close()
    assert len(found) == 1
    return found[0]


def _crawled(example: str, uri: str) -> list[str]:
    """What the example's own crawl records: every page a visitor reaches."""
    module = __import__(example)
    app = module.create_app({"store": uri})
    if example == "flask_app":
        client = app.test_client()

        def fetch(path: str) -> tuple[int, str, bytes]:
            with client.get(path, base_url=BASE) as response:
                return response.status_code, response.content_type, response.data

        demo_content.crawl(fetch)
        app.extensions["sitemap"].close()
    else:
        from starlette.testclient import TestClient

        from sitemap_middleware.starlette import get_sitemap

        with TestClient(app, base_url=BASE) as web:

            def fetch(path: str) -> tuple[int, str, bytes]:
                response = web.get(path, follow_redirects=False)
                kind = response.headers.get("content-type", "")
                return response.status_code, kind, response.content

            demo_content.crawl(fetch)
            get_sitemap(app).close()
    return stored_paths(uri)


def _process(*args: str, program: str = "sitemap_middleware") -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(EXAMPLES)])}
    done = subprocess.run(
        [sys.executable, "-m", program, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    """An app module of the test's own, importable by ``--app``."""
    name = f"app_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


# -- seed ----------------------------------------------------------------------


def test_seed_lists_every_public_page_of_the_example(
    example: str, uri: str, tmp_path: Path
) -> None:
    code, out, err = run("seed", "--app", f"{example}:create_app", "--store", uri)
    assert code == Exit.OK, err
    seeded = stored_paths(uri)
    assert seeded == demo_content.PUBLIC_PATHS
    assert seeded == _crawled(example, f"sqlite:///{tmp_path / 'crawl.sqlite3'}")
    # The public pages, and /draft, /old and /gone; never /admin/, /api/posts,
    # /login nor /account, which the config refuses.
    assert f"requested {len(demo_content.PUBLIC_PATHS) + 3} pages" in out
    assert "4 refused by the config, not requested" in out
    assert f"recorded {len(demo_content.PUBLIC_PATHS)}" in out
    assert "skipped excluded" not in out
    assert f"not recorded: {BASE}/draft: the page says noindex" in out
    assert (
        f"not requested: {BASE}/admin/: excluded by exclude pattern '*/admin/*'"
        " (from default_exclude)"
    ) in out


def test_seed_does_not_record_private_pages(example: str, uri: str) -> None:
    code, out, _ = run("seed", "--app", f"{example}:create_app", "--store", uri)
    assert code == Exit.OK
    assert not set(PRIVATE) & set(stored_paths(uri))
    assert f"not requested: {BASE}/account: excluded" in out
    # Each page not recorded is named with the reason, in explain's words.
    assert f"not recorded: {BASE}/gone: it answers an anonymous GET with 410" in out
    assert f"not recorded: {BASE}/draft: the page says noindex" in out


SIDE_EFFECTS = """
from flask import Flask
from sitemap_middleware import sitemap
from sitemap_middleware.flask import Sitemap

CALLS = []
app = Flask(__name__)
app.config["SITEMAP"] = {{
    "base_url": "http://127.0.0.1:8000",
    "store": {uri!r},
    "exclude": ["/reports/*"],
    "routes": {{"/ping": {{"exclude": True}}}},
}}


def page(name):
    CALLS.append(name)  # every GET acts, as some apps' do
    return f"<!doctype html><html><head><title>{{name}}</title></head>" \
        f"<body><main>{{name}}</main></body></html>"


@app.get("/")
def home():
    return page("home")


@app.get("/auth/logout")
def logout():
    return page("logout")


@app.get("/admin/rebuild")
def rebuild():
    return page("rebuild")


@app.get("/reports/send")
def send():
    return page("send")


@app.get("/ping")
def ping():
    return page("ping")


@app.get("/hidden")
@sitemap(exclude=True)
def hidden():
    return page("hidden")


@app.get("/sitemap.xml.bak")
def backup():
    return page("backup")


Sitemap(app)
"""


def test_seed_requests_nothing_the_config_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    """Excluded GET routes of an app whose GETs act (a logout, a rebuild, a
    report sent) are never requested: the default excludes, ``exclude``, a
    route excluded in ``routes`` or by ``@sitemap(exclude=True)``."""
    name = _module(tmp_path, monkeypatch, SIDE_EFFECTS.format(uri=uri))
    code, out, err = run("seed", "--app", name)
    assert code == Exit.OK, err
    module = __import__(name)
    assert module.CALLS == ["home", "backup"]
    assert "5 refused by the config, not requested" in out
    for path, words in [
        ("/auth/logout", "excluded by exclude pattern '*/logout/*'"),
        ("/admin/rebuild", "excluded by exclude pattern '*/admin/*'"),
        ("/reports/send", "excluded by exclude pattern '/reports/*'"),
        ("/ping", "its route '/ping' is excluded"),
        ("/hidden", "its route '/hidden' is excluded"),
    ]:
        assert f"not requested: {BASE}{path}: {words}" in out
    assert stored_paths(uri) == ["/", "/sitemap.xml.bak"]


REDIRECTS = """
from flask import Flask, redirect
from sitemap_middleware.flask import Sitemap

app = Flask(__name__)
app.config["SITEMAP"] = {{"base_url": "http://127.0.0.1:8000", "store": {uri!r}}}


@app.get("/")
def home():
    return "<!doctype html><title>Home</title>"


@app.get("/members")
def members():
    return redirect("/login?next=/members", 302)


@app.get("/old")
def old():
    return redirect("/", 301)


@app.get("/users/<name>")
def user(name):
    return f"<!doctype html><title>{{name}}</title>"


Sitemap(app)
"""


def test_seed_says_what_a_redirect_is_and_which_routes_it_cannot_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    """A redirect is named as one, with where it goes, never as a page
    gone; a route with parameters that no params lists is named too."""
    name = _module(tmp_path, monkeypatch, REDIRECTS.format(uri=uri))
    code, out, err = run("seed", "--app", name)
    assert code == Exit.OK, err
    assert (
        f"not recorded: {BASE}/members: it answers with 302, a redirect to"
        " /login?next=/members, an excluded path (a login page)"
    ) in out
    assert (
        f"not recorded: {BASE}/old: it answers an anonymous GET with 301, a"
        " redirect to /: a page moved for good is listed at its new address"
    ) in out
    assert "not requested: /users/<name>: a route with parameters" in out
    assert "gone" not in out
    code, out, err = run("seed", "--app", name, "--json")
    assert json.loads(out)["routes_without_params"] == ["/users/<name>"]


def test_verify_never_requests_what_the_config_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    """Stored pages the config refuses (imported, or stored before an
    exclude): verify never sends their GET, which may act; they go by the
    config's rule, as prune would take them out."""
    name = _module(tmp_path, monkeypatch, SIDE_EFFECTS.format(uri=uri))
    refused = ["/auth/logout", "/admin/rebuild", "/reports/send", "/ping", "/hidden"]
    store = open_store(uri)
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    store.upsert([Entry(path, when) for path in ["/", *refused]])
    store.close()
    code, out, err = run("verify", "--app", name, "--yes")
    assert code == Exit.OK, err
    module = __import__(name)
    assert module.CALLS == ["home"]
    assert f"removed: {BASE}/reports/send: excluded by exclude pattern" in out
    assert f"removed: {BASE}/ping: its route '/ping' is excluded" in out
    assert stored_paths(uri) == ["/"]


@pytest.mark.slow
def test_seed_as_a_real_process(example: str, uri: str) -> None:
    code, out, err = _process("seed", "--app", f"{example}:create_app", "--store", uri)
    assert code == Exit.OK, err
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    assert f"recorded {PUBLIC}" in out


def test_seed_under_a_base_url_prefix(example: str, uri: str) -> None:
    """The prefix is the app's mount point (SCRIPT_NAME, root_path); the store
    holds the paths under it."""
    prefixed = f"{BASE}/shop"
    args = ("--app", f"{example}:create_app", "--store", uri, "--base-url", prefixed)
    code, _, err = run("seed", *args)
    assert code == Exit.OK, err
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    code, out, _ = run("verify", *args)
    assert code == Exit.OK
    assert f"{PUBLIC} URLs: 0 removed" in out


def test_seed_leaves_what_traffic_stored_and_a_visit_updates_it(
    example: str, uri: str
) -> None:
    """Seeding never outranks traffic: a stored page keeps its lastmod and
    fingerprint (seed only adds pages); the next visit updates it as ever."""
    store = open_store(uri)
    store.upsert([Entry("/about", OLD, "stale-fingerprint", route="/about")])
    store.close()
    code, out, _ = run("seed", "--app", f"{example}:create_app", "--store", uri)
    assert code == Exit.OK
    assert "1 already listed" in out
    kept = _entry(uri, "/about")
    assert (kept.lastmod, kept.fingerprint) == (OLD, "stale-fingerprint")
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    # verify is a visit: the page answers with other content, so it changes.
    assert run("verify", "--app", f"{example}:create_app", "--store", uri)[0] == 0
    visited = _entry(uri, "/about")
    assert visited.fingerprint != "stale-fingerprint"
    assert visited.lastmod is not None and visited.lastmod > OLD


def test_seed_is_not_held_back_by_the_rate_of_new_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str, example: str
) -> None:
    """The rate guards against made-up URLs; the app's own routes are not
    (the config and store come from the app's middleware here)."""
    name = _module(
        tmp_path,
        monkeypatch,
        f"""
        import {example}
        app = {example}.create_app({{"store": {uri!r}, "new_urls_per_minute": 2}})
        """,
    )
    code, out, _ = run("seed", "--app", name)
    assert code == Exit.OK
    assert "dropped" not in out
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_seed_with_the_middleware_as_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str, stack: str
) -> None:
    """``--app`` may name the middleware itself; ``--store`` still overrides."""
    if stack == "wsgi":
        source = f"""
        from flask import Flask
        import flask_app
        from sitemap_middleware import SitemapMiddleware

        inner = Flask(__name__)
        inner.config["SITEMAP"] = {{"base_url": {BASE!r}}}  # the pages read it
        inner.register_blueprint(flask_app.site)
        app = SitemapMiddleware(inner.wsgi_app, {{"base_url": {BASE!r}}})
        """
    else:
        source = f"""
        from starlette.applications import Starlette
        import starlette_app
        from sitemap_middleware import ASGISitemapMiddleware

        inner = Starlette(routes=starlette_app.routes)
        inner.state.base_url = {BASE!r}
        app = ASGISitemapMiddleware(inner, {{"base_url": {BASE!r}}})
        """
    name = _module(tmp_path, monkeypatch, source)
    code, _, err = run("seed", "--app", name, "--store", uri)
    assert code == Exit.OK, err
    # /pages renders the site map through the app's own get_sitemap(), which
    # finds no middleware in this bare app: it answers 500, and is not listed.
    public = [path for path in demo_content.PUBLIC_PATHS if path != "/pages"]
    assert stored_paths(uri) == public


def test_seed_reports_params_that_name_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str
) -> None:
    name = _module(
        tmp_path,
        monkeypatch,
        f"""
        from flask import Flask
        from sitemap_middleware import sitemap
        from sitemap_middleware.flask import Sitemap

        app = Flask(__name__)
        app.config["SITEMAP"] = {{"base_url": {BASE!r}, "store": {uri!r}}}

        @app.get("/tags/<tag>")
        @sitemap(params=lambda: [{{"tag": "a b"}}, {{"name": "x"}}])
        def tag(tag):
            return "<html><body>" + tag + "</body></html>"

        @app.get("/boom")
        def boom():
            raise RuntimeError("a bug")

        app.testing = True  # Flask's test client raises the view's exception
        Sitemap(app)
        """,
    )
    code, out, err = run("seed", "--app", name)
    assert code == Exit.PROBLEMS
    assert "skipped /tags/<tag>: a parameter without a value" in err
    assert f"not recorded: {BASE}/boom: it answers an anonymous GET with 500" in out
    assert stored_paths(uri) == ["/tags/a%20b"]
    assert "recorded 1" in out


def test_fill_encodes_as_a_browser_does() -> None:
    assert fill("/blog/<slug>", {"slug": "café au/lait"}, "werkzeug") == (
        "/blog/caf%C3%A9%20au%2Flait"
    )
    assert fill("/blog/{slug}", {"slug": "don't"}, "starlette") == "/blog/don't"
    assert fill("/f/<path:p>", {"p": "a/b"}, "werkzeug") == "/f/a/b"
    assert fill("/n/{id:int}", {"id": 3}, "starlette") == "/n/3"
    assert fill("/n/<int:id>", {}, "werkzeug") is None


# -- verify ----------------------------------------------------------------------


def test_verify_removes_a_page_that_turned_404(example: str, uri: str) -> None:
    assert run("seed", "--app", f"{example}:create_app", "--store", uri)[0] == 0
    store = open_store(uri)
    # A post that was public and is gone now, and a page that now redirects.
    store.upsert([Entry("/blog/deleted-post", OLD, route="/blog/<slug>")])
    store.upsert([Entry("/old", OLD)])
    store.close()
    args = ("--app", f"{example}:create_app", "--store", uri)
    code, out, _ = run("verify", *args)
    assert code == Exit.OK
    assert (
        f"removed: {BASE}/blog/deleted-post: it answers an anonymous GET with 404"
        in out
    )
    assert f"removed: {BASE}/old: it answers an anonymous GET with 301" in out
    assert f"{PUBLIC + 2} URLs: 2 removed" in out
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    code, out, _ = run("verify", "--check", *args)
    assert (code, out.strip()) == (
        Exit.OK,
        f"verified {PUBLIC} URLs: 0 would be removed (nothing changed)",
    )


@pytest.mark.slow
def test_verify_check_changes_nothing_and_exits_1_as_a_real_process(
    example: str, uri: str
) -> None:
    """As ruff --check and black --check: what would change is said, nothing
    is changed, the exit code tells."""
    store = open_store(uri)
    store.upsert([Entry("/about", OLD, "stale"), Entry("/gone", OLD)])
    store.close()
    code, out, _ = _process(
        "verify", "--check", "--app", f"{example}:create_app", "--store", uri
    )
    assert code == Exit.PROBLEMS
    assert f"would remove: {BASE}/gone: it answers an anonymous GET with 410" in out
    assert stored_paths(uri) == ["/about", "/gone"]
    assert _entry(uri, "/about").fingerprint == "stale"  # not even a visit's update


def test_verify_requests_the_stored_spelling_only(example: str, uri: str) -> None:
    """Invariant 19: a stored spelling the app answers is kept, even if
    another spelling of it would be refused."""
    store = open_store(uri)
    store.upsert([Entry("/blog/caf%C3%A9-au-lait", OLD)])
    store.close()
    code, out, _ = run("verify", "--app", f"{example}:create_app", "--store", uri)
    assert code == Exit.OK
    assert "0 removed" in out
    assert stored_paths(uri) == ["/blog/caf%C3%A9-au-lait"]


# -- prune -------------------------------------------------------------------------


def test_prune_applies_the_app_config_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str, example: str
) -> None:
    assert run("seed", "--app", f"{example}:create_app", "--store", uri)[0] == 0
    # The same site with a config that now excludes the posts; its config
    # (and store) come from the app's own middleware.
    name = _module(
        tmp_path,
        monkeypatch,
        f"""
        import {example}
        app = {example}.create_app({{"store": {uri!r}, "exclude": ["/blog/?*"]}})
        """,
    )
    code, out, _ = run("prune", "--app", name)
    assert code == Exit.OK
    assert f"removed: {BASE}/blog/hello-world" in out
    assert f"checked {PUBLIC} URLs: 5 removed" in out
    assert stored_paths(uri) == [
        "/",
        "/about",
        "/blog/",
        "/de/",
        "/en/",
        "/pages",
        "/search",
    ]


@pytest.mark.slow
def test_prune_with_the_defaults_only(uri: str) -> None:
    store = open_store(uri)
    store.upsert([Entry("/about", OLD), Entry("/admin/users", OLD)])
    store.close()
    code, out, _ = _process("prune", "--store", uri, "--base-url", BASE)
    assert code == Exit.OK
    assert f"removed: {BASE}/admin/users" in out
    assert stored_paths(uri) == ["/about"]
    assert run("prune", "--store", uri)[0] == Exit.USAGE  # no config at all


# -- explain -------------------------------------------------------------------------


def test_explain_a_listed_url(example: str, uri: str) -> None:
    assert run("seed", "--app", f"{example}:create_app", "--store", uri)[0] == 0
    template = "/blog/<slug>" if example == "flask_app" else "/blog/{slug}"
    code, out, _ = run(
        "explain", "--store", uri, "--base-url", BASE, f"{BASE}/blog/hello-world"
    )
    assert code == Exit.OK
    assert "listed: yes, in part 1 (/sitemap-1.xml.gz)" in out
    assert f"route: {template}" in out
    assert "lastmod: 20" in out


@pytest.mark.slow
def test_explain_names_the_rule_that_refuses(example: str, uri: str) -> None:
    args = ("--app", f"{example}:create_app", "--store", uri)
    assert run("seed", *args)[0] == 0
    code, out, _ = run("explain", *args, f"{BASE}/admin/")
    assert code == Exit.PROBLEMS
    assert "listed: no" in out
    assert "why: excluded by exclude pattern '*/admin/*' (from default_exclude)" in out
    assert "route: /admin/" in out
    code, out, _ = _process("explain", *args, f"{BASE}/search?q=tea")
    assert code == Exit.OK, out
    assert "query: the query parameter 'q' is not kept" in out
    assert "listed: yes" in out


def test_explain_refusals_against_a_config() -> None:
    config = Config.from_mapping(
        {"base_url": BASE, "exclude": ["/admin/*"], "query": ["page"]}
    )
    assert refusal(config, "/admin/x") == (
        "excluded by exclude pattern '*/admin/*' (from default_exclude)"
    )
    config = Config.from_mapping(
        {"base_url": BASE, "default_exclude": [], "exclude": ["/admin/*"]}
    )
    assert refusal(config, "/admin/x") == "excluded by exclude pattern '/admin/*'"
    assert refusal(config, "/sitemap.xml") is not None
    assert "secret link" in (refusal(config, "/invite/9f8a7c6b5d4e3f2a1b0c9d8e") or "")
    assert "'q' is not kept" in (refusal(config, "/search?q=x") or "")
    assert "credential" in (refusal(config, "/a?api_key=x") or "")
    assert refusal(config, "/about") is None
    included = Config.from_mapping({"base_url": BASE, "include": ["/blog/*"]})
    assert (
        refusal(included, "/about")
        == "matched by no include pattern (include: '/blog/*')"
    )


def test_explain_shows_the_decisions_the_store_recorded(
    uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitemap_middleware.stores.sqlite import SQLiteStore

    when = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)

    def decisions(self: Any, path: str) -> list[tuple[str, datetime]]:
        return [("skipped: excluded", when)] if path == "/admin/" else []

    # The store API another change adds; until then, stood in for here.
    monkeypatch.setattr(SQLiteStore, "decisions", decisions, raising=False)
    store = open_store(uri)
    store.upsert([Entry("/about", OLD)])
    store.close()
    code, out, _ = run("explain", "--store", uri, "--base-url", BASE, f"{BASE}/admin/")
    assert code == Exit.PROBLEMS
    assert "decided 2024-05-01T12:00:00+00:00: skipped: excluded" in out


ANSWERS = {
    "flask": """
from flask import Flask, redirect
from sitemap_middleware.flask import Sitemap

CALLS = []
app = Flask(__name__)
app.config["SITEMAP"] = {{"base_url": "http://127.0.0.1:8000", "store": {uri!r},
                         "skip_set_cookie": {strict!r}}}
PAGE = "<!doctype html><html><head><title>t</title></head><body>x</body></html>"


@app.get("/members")
def members():
    CALLS.append("/members")
    return PAGE, 200, {{"Cache-Control": "private, max-age=60"}}


@app.get("/post")
def post():
    CALLS.append("/post")
    return PAGE, 200, {{"Set-Cookie": "session=csrf; HttpOnly", "Vary": "Cookie"}}


@app.get("/report")
def report():
    return "{{}}", 200, {{"Content-Type": "application/json"}}


@app.get("/billing")
def billing():
    return redirect("/login?next=/billing")


Sitemap(app)
""",
    "fastapi": """
from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from sitemap_middleware.starlette import add_sitemap

CALLS = []
app = FastAPI()
PAGE = "<!doctype html><html><head><title>t</title></head><body>x</body></html>"


@app.get("/members")
def members():
    CALLS.append("/members")
    return HTMLResponse(PAGE, headers={{"Cache-Control": "private, max-age=60"}})


@app.get("/post")
def post():
    CALLS.append("/post")
    response = HTMLResponse(PAGE, headers={{"Vary": "Cookie"}})
    response.set_cookie("session", "csrf", httponly=True)
    return response


@app.get("/report")
def report():
    return JSONResponse({{}})


@app.get("/billing")
def billing():
    return RedirectResponse("/login?next=/billing", 302)


add_sitemap(app, {{"base_url": "http://127.0.0.1:8000", "store": {uri!r},
                  "skip_set_cookie": {strict!r}}})
""",
}


@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_explain_names_the_response_rule_that_keeps_a_page_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str, stack: str
) -> None:
    """With the app, explain asks it what it answers a crawler (beneath the
    middleware: nothing is recorded) and names the watcher's rule that keeps
    the page out: Cache-Control private, Set-Cookie under skip_set_cookie, a
    media type, a redirect to a login page."""
    source = ANSWERS[stack].format(uri=uri, strict=True)
    name = _module(tmp_path, monkeypatch, source)
    store = open_store(uri)
    assert store.count() == 0  # made, empty: explain reads an existing store
    store.close()
    args = ("explain", "--app", name)
    code, out, _ = run(*args, f"{BASE}/members")
    assert code == Exit.PROBLEMS
    assert "listed: no" in out
    assert "why: it answers with Cache-Control: private, max-age=60 (private" in out
    code, out, _ = run(*args, f"{BASE}/post")
    assert "why: it answers with Set-Cookie and 'skip_set_cookie' is true" in out
    code, out, _ = run(*args, f"{BASE}/report")
    assert "why: it answers with Content-Type 'application/json', not HTML" in out
    code, out, _ = run(*args, f"{BASE}/billing")
    assert "why: it answers with 302, a redirect to /login?next=/billing, an" in out
    module = __import__(name)
    assert module.CALLS == ["/members", "/post"]  # asked once each
    assert stored_paths(uri) == []  # explain records nothing


@pytest.mark.parametrize("stack", sorted(ANSWERS))
def test_explain_a_page_that_sets_a_cookie_to_a_crawler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uri: str, stack: str
) -> None:
    """Without skip_set_cookie, the page that sets a CSRF cookie is public:
    explain says so, and seed records it."""
    source = ANSWERS[stack].format(uri=uri, strict=False)
    name = _module(tmp_path, monkeypatch, source)
    store = open_store(uri)
    assert store.count() == 0
    store.close()
    code, out, _ = run("explain", "--app", name, f"{BASE}/post")
    assert code == Exit.PROBLEMS
    assert "it answers an anonymous GET with 200 as a public page" in out
    code, out, err = run("seed", "--app", name)
    assert code == Exit.OK, err
    assert stored_paths(uri) == ["/post"]
    code, out, _ = run("explain", "--app", name, f"{BASE}/post")
    assert code == Exit.OK
    assert "listed: yes" in out


# -- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module:app", "cannot import 'no_such_module'"),
        ("demo_content:nothing", "has no 'nothing'"),
        ("demo_content:POSTS", "is neither a WSGI nor an ASGI app"),
    ],
)
def test_an_app_that_cannot_be_loaded_is_exit_5(spec: str, message: str) -> None:
    code, _, err = run("seed", "--app", spec, "--store", "memory://")
    assert code == Exit.APP == 5
    assert message in err


def test_an_app_without_the_middleware_is_exit_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _module(tmp_path, monkeypatch, "from flask import Flask\napp = Flask('x')\n")
    code, _, err = run("seed", "--app", name)
    assert code == Exit.APP, err
    assert "has no sitemap middleware" in err
    assert "Traceback" not in err


def test_a_url_on_another_host_is_exit_2(example: str, uri: str) -> None:
    args = ("--app", f"{example}:create_app", "--store", uri)
    assert run("seed", *args)[0] == 0
    code, _, err = run("explain", *args, "https://elsewhere.example/about")
    assert code == Exit.USAGE
    assert f"not a URL under {BASE}" in err


@pytest.mark.slow
def test_a_store_that_cannot_be_opened_is_exit_3(example: str, tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'none.sqlite3'}"
    code, _, err = run("verify", "--app", f"{example}:create_app", "--store", missing)
    assert code == Exit.STORE
    assert "no store at" in err
    # A folder that is not there: a mistake in the URI, said at once with the
    # absolute path and the fix (a usage error), nothing made.
    unreachable = f"sqlite:///{tmp_path / 'no' / 'dir' / 'x.sqlite3'}"
    code, _, err = _process(
        "seed", "--app", f"{example}:create_app", "--store", unreachable
    )
    assert code == Exit.USAGE
    assert f"its folder {tmp_path / 'no' / 'dir'} does not exist" in err
    assert "create the folder, or fix the store URI" in err
    assert not (tmp_path / "no").exists()


# -- flask sitemap ...------------------------------------------------------------------


def test_flask_sitemap_seed(uri: str) -> None:
    import flask_app

    app = flask_app.create_app({"store": uri})
    result = app.test_cli_runner().invoke(args=["sitemap", "seed"])
    assert result.exit_code == 0, result.output
    assert f"recorded {PUBLIC}" in result.output
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    result = app.test_cli_runner().invoke(args=["sitemap", "explain", f"{BASE}/draft"])
    assert result.exit_code == Exit.PROBLEMS
    assert "listed: no" in result.output


def test_flask_sitemap_store_commands_use_the_app_config(uri: str) -> None:
    import flask_app

    app = flask_app.create_app({"store": uri})
    runner = app.test_cli_runner()
    assert runner.invoke(args=["sitemap", "seed"]).exit_code == 0
    result = runner.invoke(args=["sitemap", "stats"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{PUBLIC} URLs in 1 part")
    result = runner.invoke(args=["sitemap", "list"])
    assert result.output.splitlines()[0] == f"{BASE}/"
    result = runner.invoke(args=["sitemap", "remove", f"{BASE}/about"])
    assert (result.exit_code, result.output) == (0, f"removed: {BASE}/about\n")
    assert "/about" not in stored_paths(uri)


@pytest.mark.slow
def test_flask_sitemap_as_a_real_process(uri: str) -> None:
    args = ("--app", "flask_app:create_app", "sitemap")
    code, out, err = _process(*args, "seed", "--store", uri, program="flask")
    assert code == Exit.OK, err
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    store = open_store(uri)
    store.upsert([Entry("/blog/deleted-post", OLD)])
    store.close()
    code, out, err = _process(
        *args, "verify", "--check", "--store", uri, program="flask"
    )
    assert code == Exit.PROBLEMS, err
    assert f"would remove: {BASE}/blog/deleted-post: it answers an anonymous GET" in out
    assert "/blog/deleted-post" in stored_paths(uri)
    code, out, _ = _process(*args, "prune", "--store", uri, program="flask")
    assert code == Exit.OK
    assert "0 removed" in out


def test_explain_tells_the_title_and_the_writers_decisions(uri: str) -> None:
    """With the store's real decisions log: a page kept out by its own noindex
    says so, and a listed page shows its stored title."""
    code, _, err = run("seed", "--app", "flask_app:create_app", "--store", uri)
    assert code == Exit.OK, err
    code, out, _ = run(
        "explain", "--app", "flask_app:create_app", "--store", uri, f"{BASE}/draft"
    )
    assert code == Exit.PROBLEMS
    assert "listed: no" in out
    assert out.rstrip().endswith(": noindex"), out
    code, out, _ = run(
        "explain", "--store", uri, "--base-url", BASE, f"{BASE}/blog/hello-world"
    )
    assert code == Exit.OK
    assert "title: Hello, world" in out  # " · Field Notes" is the site's affix
    assert out.rstrip().endswith(": recorded"), out


def test_explain_names_the_body_rule_the_writers_applied(uri: str) -> None:
    """A page whose own head says noindex answers 200 with nothing against it in
    its headers: the why names the writers' noindex, never "a public page"."""
    code, _, err = run("seed", "--app", "flask_app:create_app", "--store", uri)
    assert code == Exit.OK, err
    for app in ("--app", "flask_app:create_app"), ("--base-url", BASE):
        code, out, _ = run("explain", *app, "--store", uri, f"{BASE}/draft")
        assert code == Exit.PROBLEMS
        why = next(line for line in out.splitlines() if "why:" in line)
        assert "noindex" in why, out
        assert "public page" not in why, out


def test_explain_shows_a_stored_title_as_visible_text(uri: str) -> None:
    """A title an earlier release stored with its controls (an ESC that a
    terminal reads as a command, a right-to-left override) prints as text."""
    store = open_store(uri)
    store.upsert([Entry("/old", OLD, title="Red\x1b[31m \u202etitle\x07")])
    store.close()
    code, out, _ = run("explain", "--store", uri, "--base-url", BASE, f"{BASE}/old")
    assert code == Exit.OK
    assert "  title: Red[31m title\n" in out
