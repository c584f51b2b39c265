"""Commands change the store only when they say so: loading the app builds its
middleware, whose re-check of stored pages (invariant 21) would remove what the
config newly refuses at its first flush. Each command that loads the app runs
against such a config, on Flask and FastAPI, with the app's own store and with
--store, and with several sites; only ``prune --yes`` and ``verify --yes``
remove, and exactly what they print.
"""

from __future__ import annotations

import json
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.helpers import stored_paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import BRAKE_URLS, Exit, main

BASE = "https://www.example.com"
OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)
# What the store holds, recorded before the config excluded /archive/.
PUBLIC = ["/", "/about"]
ARCHIVE = [f"/archive/{n}" for n in range(BRAKE_URLS + 5)]

# App factories: each command, a process of its own in use, builds its app.
FLASK = """
from flask import Flask
from sitemap_middleware import SitemapMiddleware

def create_app():
    app = Flask(__name__)

    @app.get("/")
    def home():
        return "<!doctype html><title>Home</title><p>home"

    @app.get("/about")
    def about():
        return "<!doctype html><title>About</title><p>about"

    @app.get("/archive/<int:n>")
    def archive(n):
        return "<!doctype html><title>Old</title><p>old"

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, CONFIG)
    return app
"""

FASTAPI = """
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from sitemap_middleware.starlette import add_sitemap

def create_app():
    app = FastAPI()

    @app.get("/", response_class=HTMLResponse)
    def home():
        return "<!doctype html><title>Home</title><p>home"

    @app.get("/about", response_class=HTMLResponse)
    def about():
        return "<!doctype html><title>About</title><p>about"

    @app.get("/archive/{n}", response_class=HTMLResponse)
    def archive(n: int):
        return "<!doctype html><title>Old</title><p>old"

    add_sitemap(app, CONFIG)
    return app
"""


def _config(uri: str, sites: bool) -> dict[str, object]:
    # The config now refuses the archive, which the store still holds.
    config: dict[str, object] = {"store": uri, "exclude": ["/archive/*"]}
    if sites:
        config["sites"] = {
            "main": {"base_url": BASE},
            "blog": {"base_url": "https://blog.example.com"},
        }
    else:
        config["base_url"] = BASE
    return config


@pytest.fixture(params=["flask", "fastapi"])
def app_module(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """``(--app value, store URI)``: an app whose config excludes what the
    store holds."""
    uri = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    source = FLASK if request.param == "flask" else FASTAPI
    name = f"loading_{request.param}_{abs(hash(str(tmp_path))):x}"
    config = _config(uri, sites=False)
    (tmp_path / f"{name}.py").write_text(
        f"CONFIG = {config!r}\n" + textwrap.dedent(source)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _store(uri)
    return f"{name}:create_app", uri


def _store(uri: str) -> None:
    store = open_store(uri)
    try:
        store.upsert([Entry(path, OLD, "print") for path in PUBLIC + ARCHIVE])
    finally:
        store.close()


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# Each command that loads the app, as a user previews or asks: none removes.
PREVIEWS = [
    ("prune", "--dry-run"),
    ("prune", "--check"),
    ("prune",),  # stopped by the brake: more than a tenth would go
    ("verify", "--dry-run"),
    ("verify", "--check"),
    ("explain", f"{BASE}/archive/1"),
    ("explain", f"{BASE}/about"),
    ("report",),
    ("seed",),
]


@pytest.mark.parametrize("own_store", [True, False], ids=["app-store", "--store"])
@pytest.mark.parametrize("command", PREVIEWS, ids=" ".join)
def test_a_command_that_says_nothing_changes_removes_nothing(
    app_module: tuple[str, str], command: tuple[str, ...], own_store: bool
) -> None:
    app, uri = app_module
    before = stored_paths(uri)
    store = () if own_store else ("--store", uri)
    code, _, err = _run(*command, "--app", app, *store)
    assert code in (Exit.OK, Exit.PROBLEMS, Exit.REFUSED), err
    assert stored_paths(uri) == before


@pytest.mark.parametrize("command", ["prune", "verify"])
def test_yes_removes_what_it_prints(app_module: tuple[str, str], command: str) -> None:
    app, uri = app_module
    code, out, err = _run(command, "--dry-run", "--json", "--app", app)
    assert code == Exit.OK, err
    previewed = {row["url"] for row in json.loads(out)["urls"]}
    assert previewed == {f"{BASE}{path}" for path in ARCHIVE}
    code, out, err = _run(command, "--yes", "--json", "--app", app)
    assert code == Exit.OK, err
    removed = {row["url"] for row in json.loads(out)["urls"]}
    assert removed == previewed
    assert stored_paths(uri) == sorted(PUBLIC)


def test_a_site_of_several_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``sites``: closing the app flushes every site's middleware, the
    one --site names and the default one alike; neither re-checks."""
    uri = f"sqlite:///{tmp_path / 'sites.sqlite3'}"
    name = f"loading_sites_{abs(hash(str(tmp_path))):x}"
    config = _config(uri, sites=True)
    (tmp_path / f"{name}.py").write_text(
        f"CONFIG = {config!r}\n" + textwrap.dedent(FLASK)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _store(uri)  # the default site's listing
    blog = f"{uri}?site=blog"
    _store(blog)
    before = (stored_paths(uri), stored_paths(blog))
    for site in ("main", "blog"):
        for command in (("prune", "--dry-run"), ("report",), ("verify", "--check")):
            code, _, err = _run(*command, "--app", f"{name}:create_app", "--site", site)
            assert code in (Exit.OK, Exit.PROBLEMS), err
            assert (stored_paths(uri), stored_paths(blog)) == before, (site, command)


@pytest.mark.parametrize("command", ["stats", "list"])
def test_a_store_command_that_loads_the_app_removes_nothing(
    app_module: tuple[str, str], command: str
) -> None:
    """stats and list with --app read the app's store through its middleware,
    held as the app commands hold it: every stored URL stays, the newly
    excluded ones included, and is shown."""
    app, uri = app_module
    before = stored_paths(uri)
    code, out, err = _run(command, "--app", app)
    assert code == Exit.OK, err
    assert stored_paths(uri) == before
    if command == "list":
        assert sorted(out.split()) == sorted(f"{BASE}{path}" for path in before)
    else:
        assert out.startswith(f"{len(before)} URLs in 1 part\n")
