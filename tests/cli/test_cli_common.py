"""Every command takes the common options (--app, --store, --base-url, --site):
with --app, a store command (stats, list, remove, export, import) finds the app's
middleware, its store and base URL, the Flask extension's store in the app's
instance folder included; its options override them. ``flask sitemap`` has the
same commands on its app, without --app.
"""

from __future__ import annotations

import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.helpers import pending_pushes, stored_paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit, main
from sitemap_middleware.config import DEFAULT_STORE_FILE

BASE = "https://www.example.com"
OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)
PAGES = ["/", "/about"]

# The Flask extension, its store left to its default: the instance folder.
FLASK = """
from flask import Flask
from sitemap_middleware.flask import Sitemap

def create_app():
    app = Flask(__name__, instance_path=INSTANCE)
    app.config["SITEMAP"] = {"base_url": BASE}

    @app.get("/")
    @app.get("/about")
    def page():
        return "<!doctype html><title>A page</title><p>a page"

    Sitemap(app)
    return app
"""

FASTAPI = """
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from sitemap_middleware.starlette import add_sitemap

def create_app():
    app = FastAPI()

    @app.get("/", response_class=HTMLResponse)
    @app.get("/about", response_class=HTMLResponse)
    def page():
        return "<!doctype html><title>A page</title><p>a page"

    add_sitemap(app, {"base_url": BASE, "store": f"sqlite:///{INSTANCE}/s.db"})
    return app
"""


def _module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, source: str
) -> str:
    """The ``--app`` value of an app written into ``tmp_path``."""
    name = f"common_{kind}_{abs(hash(str(tmp_path))):x}"
    constants = f"INSTANCE = {str(tmp_path / 'instance')!r}\nBASE = {BASE!r}\n"
    (tmp_path / f"{name}.py").write_text(constants + textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:create_app"


def _filled(uri: str, paths: list[str]) -> None:
    store = open_store(uri)
    try:
        store.upsert([Entry(path, OLD, "page") for path in paths])
    finally:
        store.close()


@pytest.fixture(params=["flask-extension", "fastapi"])
def app_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """``(--app value, the URI of the store its middleware uses)``, the store
    holding :data:`PAGES`."""
    (tmp_path / "instance").mkdir()
    if request.param == "fastapi":
        uri = f"sqlite:///{tmp_path / 'instance' / 's.db'}"
        app = _module(tmp_path, monkeypatch, "fastapi", FASTAPI)
    else:
        uri = f"sqlite:///{tmp_path / 'instance' / DEFAULT_STORE_FILE}"
        app = _module(tmp_path, monkeypatch, "flask", FLASK)
    _filled(uri, PAGES)
    return app, uri


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_store_commands_find_the_app_s_store(
    app_store: tuple[str, str], tmp_path: Path
) -> None:
    app, uri = app_store
    code, out, err = _run("stats", "--app", app)
    assert (code, out.splitlines()[0]) == (Exit.OK, "2 URLs in 1 part"), err
    code, out, err = _run("list", "--app", app)
    assert (code, out) == (Exit.OK, f"{BASE}/\n{BASE}/about\n"), err
    code, out, err = _run("export", str(tmp_path / "public"), "--app", app)
    assert code == Exit.OK, err
    assert out.endswith(f"Sitemap: {BASE}/sitemap.xml\n")
    code, out, err = _run("remove", "--app", app, f"{BASE}/about")
    assert (code, out) == (Exit.OK, f"removed: {BASE}/about\n"), err
    assert stored_paths(uri) == ["/"]
    code, out, err = _run("import", str(tmp_path / "public/sitemap.xml"), "--app", app)
    assert code == Exit.OK, err
    assert out.startswith("imported 1 entry (1 new URL); 1 already in the store")
    assert stored_paths(uri) == PAGES


def test_the_options_override_the_app_s_store_and_base_url(
    app_store: tuple[str, str], tmp_path: Path
) -> None:
    app, _ = app_store
    other = f"sqlite:///{tmp_path / 'other.db'}"
    _filled(other, ["/elsewhere"])
    code, out, err = _run("list", "--app", app, "--store", other)
    assert (code, out) == (Exit.OK, f"{BASE}/elsewhere\n"), err
    code, out, err = _run("list", "--app", app, "--base-url", "https://example.org")
    assert (code, out) == (Exit.OK, "https://example.org/\nhttps://example.org/about\n")
    code, _, err = _run("stats", "--app", app, "--store", "sqlite://x.db")
    assert code == Exit.USAGE
    assert "did you mean 'sqlite:///x.db'" in err


@pytest.mark.parametrize("kind", ["flask", "fastapi"])
def test_a_store_of_the_app_that_is_not_there_is_refused_and_not_made(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 3 and nothing made, whichever way the app holds its middleware:
    the one Starlette builds at start-up is flushed at shut-down, with
    nothing to write."""
    instance = tmp_path / "instance"
    instance.mkdir()
    app = _module(tmp_path, monkeypatch, kind, FASTAPI if kind == "fastapi" else FLASK)
    for command in (("stats",), ("report",), ("explain", f"{BASE}/")):
        code, _, err = _run(*command, "--app", app)
        assert (code, list(instance.iterdir())) == (Exit.STORE, []), err
        assert "no store at" in err


def test_without_the_app_a_store_command_is_as_before(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 's.db'}"
    _filled(uri, PAGES)
    code, _, err = _run("list", "--store", uri)
    assert code == Exit.USAGE
    assert "Missing option '--base-url'" in err
    code, out, _ = _run("stats", "--store", uri)
    assert (code, out.splitlines()[0]) == (Exit.OK, "2 URLs in 1 part")


def test_an_app_command_still_needs_the_app() -> None:
    code, _, err = _run("seed", "--store", "memory://")
    assert code == Exit.USAGE
    assert "Missing option '--app'" in err


TWO_SITES = """
from flask import Flask
from sitemap_middleware import SitemapMiddleware

def create_app():
    app = Flask(__name__)

    @app.get("/")
    @app.get("/about")
    def page():
        return "<!doctype html><title>A page</title><p>a page"

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, {
        "store": f"sqlite:///{INSTANCE}/s.db",
        "sites": {
            "main": {"base_url": BASE},
            "blog": {"base_url": "https://blog.example.com"},
        },
    })
    return app
"""


def test_site_names_the_app_s_site_and_its_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "instance").mkdir()
    app = _module(tmp_path, monkeypatch, "sites", TWO_SITES)
    code, _, err = _run("seed", "--app", app, "--site", "blog")
    assert code == Exit.OK, err
    code, out, err = _run("list", "--app", app, "--site", "blog")
    expected = "https://blog.example.com/\nhttps://blog.example.com/about\n"
    assert (code, out) == (Exit.OK, expected), err
    # A site the app lacks is a bad option, as without --app.
    code, _, err = _run("stats", "--app", app, "--site", "shop")
    assert code == Exit.USAGE
    assert "the app's sitemap config has no site 'shop'" in err


def test_flask_sitemap_stats_reads_the_extension_s_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "instance").mkdir()
    spec = _module(tmp_path, monkeypatch, "flask", FLASK)
    _filled(f"sqlite:///{tmp_path / 'instance' / DEFAULT_STORE_FILE}", PAGES)
    module, _, factory = spec.partition(":")
    app = getattr(__import__(module), factory)()
    runner = app.test_cli_runner()
    result = runner.invoke(args=["sitemap", "stats"])
    assert result.exit_code == Exit.OK, result.output
    assert result.output.startswith("2 URLs in 1 part\n")
    result = runner.invoke(args=["sitemap", "list", "--base-url", "https://x.org"])
    assert result.output == "https://x.org/\nhttps://x.org/about\n"
    # The app is flask's: its commands take every common option but --app.
    result = runner.invoke(args=["sitemap", "stats", "--help"])
    assert "--store" in result.output
    assert "--app MODULE:ATTR" not in result.output


# A plain app whose config the test gives (CONFIG).
CONFIGURED = """
from flask import Flask
from sitemap_middleware import SitemapMiddleware

def create_app():
    app = Flask(__name__)

    @app.get("/")
    def home():
        return "<!doctype html><title>Home</title><p>home"

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, CONFIG)
    return app
"""


def _configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, object]
) -> str:
    return _module(
        tmp_path, monkeypatch, "configured", f"CONFIG = {config!r}\n" + CONFIGURED
    )


def _urlset(*paths: str) -> str:
    urls = "".join(f"<url><loc>{BASE}{path}</loc></url>" for path in paths)
    return (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    )


def test_import_with_the_app_follows_its_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the app's config refuses (its exclude, the middleware's own
    paths as its config turns them on) is skipped; the query it keeps is
    kept."""
    uri = f"sqlite:///{tmp_path / 's.db'}"
    config = {
        "base_url": BASE,
        "store": uri,
        "exclude": ["/private/*"],
        "llms_txt": True,
        "query": ["page"],
    }
    app = _configured(tmp_path, monkeypatch, config)
    source = tmp_path / "sitemap.xml"
    source.write_text(_urlset("/fine", "/list?page=2", "/private/pay", "/llms.txt"))
    code, out, err = _run("import", "--app", app, str(source))
    assert stored_paths(uri) == ["/fine", "/list?page=2"], (out, err)
    assert code == Exit.PROBLEMS
    assert f"{BASE}/private/pay: excluded by exclude pattern '/private/*'" in err
    assert f"{BASE}/llms.txt: a path the middleware answers itself" in err


def test_export_with_the_app_is_what_its_middleware_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Byte for byte, its serving keys included: the gzip level (not the
    default's), the text sitemaps (without --text)."""
    from werkzeug.test import Client

    uri = f"sqlite:///{tmp_path / 's.db'}"
    _filled(uri, [f"/page/{n}-{'x' * (n % 50)}" for n in range(2000)])
    config = {"base_url": BASE, "store": uri, "gzip_level": 1, "text_sitemap": True}
    app = _configured(tmp_path, monkeypatch, config)
    code, _, err = _run("export", "--app", app, str(tmp_path / "out"))
    assert code == Exit.OK, err
    module, _, factory = app.partition(":")
    served = getattr(__import__(module), factory)()
    client = Client(served)
    try:
        for name in ("sitemap-1.xml.gz", "sitemap-1.txt"):
            written = (tmp_path / "out" / name).read_bytes()
            assert written == client.get(f"/{name}", base_url=BASE).data, name
    finally:
        served.wsgi_app.close()


def test_verify_withdraws_the_pending_push_of_a_url_the_config_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored URL the app's config now refuses is removed by verify and
    never sent to IndexNow: its push, queued before, is withdrawn; a page
    that answers keeps its own."""
    uri, app = _pushing(tmp_path, monkeypatch, ["/", "/private/x"], ["/", "/private/x"])
    result = CliRunner().invoke(main, ["verify", "--app", app, "--yes"])
    assert result.exit_code == Exit.OK, result.output
    assert stored_paths(uri) == ["/"]
    assert pending_pushes(uri) == ["/"]


def test_verify_withdraws_what_the_config_refuses_and_pushes_what_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one run: the refused URL's pending push is withdrawn, the removal
    of a page that stopped answering (404) is pushed; a dry run before it
    changes nothing."""
    paths = ["/", "/gone", "/private/x"]
    uri, app = _pushing(tmp_path, monkeypatch, paths, ["/private/x"])
    dry = CliRunner().invoke(main, ["verify", "--app", app, "--dry-run"])
    assert dry.exit_code == Exit.OK, dry.output
    assert stored_paths(uri) == ["/", "/gone", "/private/x"]
    store = open_store(uri)
    assert store.pending_pushes() == 1  # type: ignore[attr-defined]
    store.close()
    result = CliRunner().invoke(main, ["verify", "--app", app, "--yes"])
    assert result.exit_code == Exit.OK, result.output
    assert stored_paths(uri) == ["/"]
    assert pending_pushes(uri) == ["/gone"]


def _pushing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: list[str], pushed: list[str]
) -> tuple[str, str]:
    """An app that excludes /private/* and pushes to IndexNow, its store
    holding ``paths`` and pending pushes of ``pushed``: its store and app."""
    uri = f"sqlite:///{tmp_path / 's.db'}"
    config = {
        "base_url": BASE,
        "store": uri,
        "exclude": ["/private/*"],
        # Nothing listens there: no push leaves the machine.
        "indexnow": {"key": "abcdef123456", "endpoint": "http://127.0.0.1:1/x"},
    }
    app = _configured(tmp_path, monkeypatch, config)
    _filled(uri, paths)
    store = open_store(uri)
    store.queue_pushes(pushed)  # type: ignore[attr-defined]
    store.close()
    return uri, app
