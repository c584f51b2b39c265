"""Framework glue: the Flask extension, the Starlette lookup, shutdown flushing."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from sitemap_middleware import ConfigError, SitemapMiddleware, StoreError, open_store
from sitemap_middleware.flask import Sitemap, get_sitemap
from sitemap_middleware.stores.memory import MemoryStore

ASGI_CONFIG = {"base_url": "http://localhost", "store": "memory://"}


def _flask(tmp_path: Path, config: dict[str, object] | None) -> Flask:
    app = Flask(__name__, instance_path=str(tmp_path / "instance"))
    if config is not None:
        app.config["SITEMAP"] = config

    @app.get("/")
    def home() -> str:
        return "<html><body>home</body></html>"

    return app


def test_extension_defaults_to_instance_folder(tmp_path: Path) -> None:
    """Sitemap(app) wraps wsgi_app and keeps its SQLite file in the instance folder."""
    app = _flask(tmp_path, {"base_url": "http://localhost"})
    Sitemap(app)
    middleware = get_sitemap(app)
    assert app.wsgi_app is middleware
    assert isinstance(middleware, SitemapMiddleware)
    assert Path(middleware.store.path) == tmp_path / "instance" / "sitemap.sqlite3"
    with app.test_client().get("/") as response:
        assert response.data  # read in full: a body cut short is not recorded
    assert middleware.flush()
    assert [e.path for e in middleware.store.entries(1)] == ["/"]
    middleware.close()


def test_init_app_factory_style(tmp_path: Path) -> None:
    sitemap = Sitemap()
    app = _flask(tmp_path, {"base_url": "http://localhost", "store": "memory://"})
    middleware = sitemap.init_app(app)
    assert get_sitemap(app) is middleware
    with pytest.raises(ConfigError, match="already set up"):
        sitemap.init_app(app)


def test_extension_needs_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'app.config\["SITEMAP"\]'):
        Sitemap(_flask(tmp_path, None))


def test_starlette_lookup_without_sitemap() -> None:
    from starlette.applications import Starlette

    from sitemap_middleware.starlette import get_sitemap as get_asgi

    with pytest.raises(LookupError):
        get_asgi(Starlette())


def _starlette_app(lifespan: Any = None) -> Any:
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def page(request: Any) -> HTMLResponse:
        return HTMLResponse("<html><body>a page</body></html>")

    return Starlette(routes=[Route("/page", page)], lifespan=lifespan)


class _Tagged:
    """A middleware of the app's own that marks its responses."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], (b"x-tagged", b"1")]
            await send(message)

        await self.app(scope, receive, tagged)


def test_starlette_lookup_before_start_leaves_the_app_open() -> None:
    """Before start-up, get_sitemap says why it finds nothing and builds
    nothing: the app still takes middleware, and once started both serve."""
    from starlette.testclient import TestClient

    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import get_sitemap as get_asgi

    app = _starlette_app()
    app.add_middleware(ASGISitemapMiddleware, config=ASGI_CONFIG)
    with pytest.raises(LookupError, match="once the app has started"):
        get_asgi(app)
    assert app.middleware_stack is None
    app.add_middleware(_Tagged)  # raises once Starlette has built its stack
    with TestClient(app, base_url="http://localhost") as client:
        middleware = get_asgi(app)
        assert client.get("/page").headers["x-tagged"] == "1"
        assert get_asgi(app) is middleware
        middleware.flush()
        assert [e.path for e in middleware.store.entries(1)] == ["/page"]


def test_starlette_lookup_finds_the_instance_serving_requests() -> None:
    """The instance found is the one in the request path: what it records is
    what the app's own /sitemap.xml serves, and its counters move."""
    from contextlib import asynccontextmanager

    from starlette.middleware import Middleware
    from starlette.testclient import TestClient

    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import get_sitemap as get_asgi

    found: list[Any] = []

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        found.append(get_asgi(app))  # the stack exists at lifespan startup
        yield

    app = _starlette_app(lifespan)
    app.user_middleware.append(Middleware(ASGISitemapMiddleware, config=ASGI_CONFIG))
    with TestClient(app, base_url="http://localhost") as client:
        middleware = get_asgi(app)
        assert found == [middleware]
        assert client.get("/page").status_code == 200
        middleware.flush()
        assert middleware.stats()["recorded"] == 1
        body = client.get("/sitemap-1.xml.gz").content
    assert b"/page" in gzip.decompress(body)


def test_starlette_lookup_through_a_plain_asgi_chain() -> None:
    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import get_sitemap as get_asgi

    middleware = ASGISitemapMiddleware(_starlette_app(), config=ASGI_CONFIG)
    assert get_asgi(_Tagged(middleware)) is middleware
    middleware.close()


def test_asgi_lifespan_shutdown_flushes(tmp_path: Path) -> None:
    """Leaving the app's lifespan writes what is queued, with no flush() call."""
    import starlette_app
    from starlette.testclient import TestClient

    uri = f"sqlite:///{tmp_path}/s.sqlite3"
    app = starlette_app.create_app({"base_url": "http://localhost", "store": uri})
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get("/about").status_code == 200
    with open_store(uri) as store:
        assert [e.path for e in store.entries(1)] == ["/about"]


def test_interpreter_exit_flushes(tmp_path: Path) -> None:
    """Records still queued when the process exits are written by the atexit hook."""
    db = tmp_path / "s.sqlite3"
    script = textwrap.dedent(
        f"""
        from werkzeug.test import Client
        from sitemap_middleware import SitemapMiddleware

        def app(environ, start_response):
            start_response("200 OK", [("Content-Type", "text/html")])
            return [b"<p>hello</p>"]

        wrapped = SitemapMiddleware(
            app, {{"base_url": "http://localhost", "store": "sqlite:///{db}"}}
        )
        client = Client(wrapped)
        for path in ("/a", "/b", "/c"):
            response = client.get(path)
            response.get_data()
            response.close()
        assert wrapped.stats()["queued"] == 3
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    with open_store(f"sqlite:///{db}") as store:
        assert sorted(e.path for e in store.entries(1)) == ["/a", "/b", "/c"]


def test_counters_survive_their_threads() -> None:
    """Counts made on short-lived threads are kept after the threads end, and
    none is lost to a race between them."""
    import threading

    from sitemap_middleware.recording.counters import Counters

    counters = Counters()

    def work() -> None:
        for _ in range(100):
            counters.add("host")

    threads = [threading.Thread(target=work) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counters.add("host")
    assert counters.snapshot()[("skipped", "host")] == 5001


class _FailingStore(MemoryStore):
    """A memory store whose chosen methods raise, as a dead server would."""

    def __init__(self, *failing: str) -> None:
        super().__init__()
        self.failing = set(failing)

    def __getattribute__(self, name: str) -> Any:
        if name in object.__getattribute__(self, "failing"):

            def refused(*args: Any) -> Any:
                raise StoreError(f"{name}: connection refused")

            return refused
        return super().__getattribute__(name)


def test_store_errors_never_reach_the_app() -> None:
    """A failing store: the page is still served, its write waits for the store
    to come back, and the sitemap answers 503 (never an empty 200) until a good
    document exists."""
    from support.sites import make_site

    store = _FailingStore("upsert", "parts", "part")
    site = make_site("wsgi", {"base_url": "http://localhost", "store": store})
    assert site.get("/about").status == 200
    assert not site.middleware.flush()  # still pending: the store failed
    stats = site.middleware.stats()
    assert stats["errors"] == {"store": 1} and stats["pending"] == 1
    assert stats["dropped"] == {}
    reply = site.get("/sitemap.xml")
    assert reply.status == 503 and reply.headers["retry-after"]
    assert site.get("/robots.txt").status == 200
    store.failing.clear()
    assert site.recorded() == ["/about"]  # written once the store is back
    assert site.middleware.stats()["pending"] == 0
    good = site.get("/sitemap.xml")
    assert good.status == 200
    store.failing.update({"parts", "part"})
    stale = site.get("/sitemap.xml")
    assert (stale.status, stale.body) == (200, good.body)  # last good bytes
    assert site.get("/sitemap-1.xml.gz").status == 503  # never rendered: no bytes
    site.close()


def test_failed_removal_keeps_the_recorded_pages() -> None:
    """A failed removal stays pending without costing the upserts before it."""
    from support.sites import make_site

    store = _FailingStore("remove")
    site = make_site("wsgi", {"base_url": "http://localhost", "store": store})
    site.get("/about")
    site.get("/gone")  # a removal, which fails
    assert not site.middleware.flush()
    assert [e.path for e in store.entries(1)] == ["/about"]
    stats = site.middleware.stats()
    assert stats["recorded"] == 1 and stats["pending"] == 1
    store.failing.clear()
    assert site.middleware.flush()
    assert site.middleware.stats()["pending"] == 0
    site.close()


def test_sqlite_locked_by_another_process_loses_nothing(tmp_path: Path) -> None:
    """Another process holds the database with BEGIN EXCLUSIVE: pages are still
    served, writes wait, and everything lands once the lock is released."""
    from support.sites import make_site

    db = tmp_path / "s.sqlite3"
    config = {"base_url": "http://localhost", "store": f"sqlite:///{db}?timeout=0.2"}
    site = make_site("wsgi", config)
    site.get("/")
    assert site.recorded() == ["/"]  # the schema exists
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sqlite3, sys, time
                conn = sqlite3.connect({str(db)!r}, isolation_level=None)
                conn.execute("BEGIN EXCLUSIVE")
                print("locked", flush=True)
                sys.stdin.readline()
                conn.execute("COMMIT")
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        for path in ("/about", "/a&b", "/search"):
            assert site.get(path).status == 200
        assert not site.middleware.flush(5.0)
        stats = site.middleware.stats()
        assert stats["pending"] == 3 and stats["errors"]["store"] >= 1
        assert stats["dropped"] == {}
    finally:
        holder.communicate("release\n", timeout=10)
    assert site.middleware.flush(5.0)
    assert site.recorded() == ["/", "/about", "/a&b", "/search"]
    site.close()


def test_extension_after_other_middleware_finds_the_routes(tmp_path: Path) -> None:
    """Sitemap(app) on an app whose wsgi_app is already wrapped (ProxyFix)
    still stores Flask's route templates."""
    from werkzeug.middleware.proxy_fix import ProxyFix

    app = _flask(tmp_path, {"base_url": "http://localhost", "store": "memory://"})

    @app.route("/blog/<slug>")
    def post(slug: str) -> str:
        return "<!doctype html><title>Post</title><main>Post</main>"

    app.wsgi_app = ProxyFix(app.wsgi_app)  # type: ignore[method-assign]
    Sitemap(app)
    middleware = get_sitemap(app)
    try:
        response = app.test_client().get("/blog/x")
        assert response.status_code == 200
        response.get_data()
        response.close()
        assert middleware.flush(5.0)
        (entry,) = middleware.store.entries(1)
        assert entry.route == "/blog/<slug>"
    finally:
        middleware.close()


# -- One sitemap middleware per app ------------------------------------------------

MEMORY = {"base_url": "http://localhost", "store": "memory://"}


def _plain(app: Flask) -> None:
    app.wsgi_app = SitemapMiddleware(app.wsgi_app, MEMORY)  # type: ignore[method-assign]


def _behind_proxy_fix(app: Flask) -> None:
    from werkzeug.middleware.proxy_fix import ProxyFix

    app.wsgi_app = ProxyFix(app.wsgi_app)  # type: ignore[method-assign]


def _extension(app: Flask) -> None:
    app.config["SITEMAP"] = MEMORY
    Sitemap(app)


# The first install, and what the second wraps: where the refusal says it is.
FLASK_TWICE: dict[str, tuple[Any, Any, str]] = {
    "plain around plain": (
        _plain,
        lambda app: SitemapMiddleware(app.wsgi_app, MEMORY),
        "(SitemapMiddleware)",
    ),
    "plain around the extension": (
        _extension,
        lambda app: SitemapMiddleware(app.wsgi_app, MEMORY),
        "(SitemapMiddleware)",
    ),
    "the extension around plain": (_plain, _extension, "(SitemapMiddleware)"),
    "plain around other middleware around plain": (
        lambda app: (_plain(app), _behind_proxy_fix(app)),
        lambda app: SitemapMiddleware(app.wsgi_app, MEMORY),
        "(ProxyFix > SitemapMiddleware)",
    ),
    "plain around the Flask app": (
        _extension,
        lambda app: SitemapMiddleware(app, MEMORY),
        "(Flask.wsgi_app > SitemapMiddleware)",
    ),
}


@pytest.mark.parametrize("case", sorted(FLASK_TWICE))
def test_a_second_sitemap_middleware_on_flask_is_refused(
    tmp_path: Path, case: str
) -> None:
    """Two would record every page twice and count it twice: the second is
    refused, naming where the first is; the app keeps the first."""
    first, second, where = FLASK_TWICE[case]
    app = _flask(tmp_path, None)
    first(app)
    before = app.wsgi_app
    with pytest.raises(ConfigError, match="already has a sitemap middleware") as e:
        second(app)
    assert where in str(e.value)
    assert app.wsgi_app is before


def test_the_extension_twice_is_refused_naming_it(tmp_path: Path) -> None:
    app = _flask(tmp_path, MEMORY)
    Sitemap(app)
    with pytest.raises(ConfigError, match=r"already set up .*extensions\['sitemap'\]"):
        Sitemap(app)


def test_sites_build_their_middlewares_around_the_same_app(tmp_path: Path) -> None:
    """Several ``sites``: the other sites' middlewares wrap the same app; that
    is one sitemap middleware, not a second, and a replay's replacement
    (around the app beneath) is none either."""
    config = {
        "store": "memory://",
        "sites": {
            "a": {"base_url": "http://a.example", "hosts": ["a.example"]},
            "b": {"base_url": "http://b.example", "hosts": ["b.example"]},
        },
    }
    app = _flask(tmp_path, config)
    Sitemap(app)
    installed = get_sitemap(app)
    assert installed.site("b") is not installed
    replacement = SitemapMiddleware(installed.app, MEMORY)
    replacement.close()
    installed.close()


def test_a_store_in_the_flask_instance_folder_makes_the_folder(tmp_path: Path) -> None:
    """Flask leaves its instance folder to the app: a store file named in it,
    plain middleware or extension, makes it (as the extension's default store
    always did); any other missing folder is refused."""
    instance = tmp_path / "instance"
    app = _flask(tmp_path, None)
    config = {"base_url": "http://localhost", "store": f"sqlite:///{instance}/s.db"}
    middleware = SitemapMiddleware(app.wsgi_app, config)
    middleware.close()
    assert instance.is_dir()
    elsewhere = {**config, "store": f"sqlite:///{tmp_path}/data/s.db"}
    with pytest.raises(ConfigError, match=f"{tmp_path}/data does not exist"):
        SitemapMiddleware(_flask(tmp_path / "other", None).wsgi_app, elsewhere)


def test_add_sitemap_twice_is_refused_at_the_call() -> None:
    from starlette.middleware import Middleware

    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import add_sitemap, middleware

    app = _starlette_app()
    add_sitemap(app, ASGI_CONFIG)
    with pytest.raises(ConfigError, match=r"Starlette.user_middleware > ASGISitem"):
        add_sitemap(app, ASGI_CONFIG)
    assert len(app.user_middleware) == 1
    listed = _starlette_app()
    listed.user_middleware.insert(0, middleware(ASGI_CONFIG))
    assert isinstance(listed.user_middleware[0], Middleware)
    with pytest.raises(ConfigError, match="already has a sitemap middleware"):
        add_sitemap(listed, ASGI_CONFIG)
    with pytest.raises(ConfigError, match="already has a sitemap middleware"):
        ASGISitemapMiddleware(listed, ASGI_CONFIG)


def test_asgi_middleware_around_one_through_other_layers_is_refused() -> None:
    from sitemap_middleware import ASGISitemapMiddleware

    first = ASGISitemapMiddleware(_starlette_app(), ASGI_CONFIG)
    try:
        with pytest.raises(ConfigError, match=r"\(_Tagged > ASGISitemapMiddleware\)"):
            ASGISitemapMiddleware(_Tagged(first), ASGI_CONFIG)
    finally:
        first.close()


def test_a_second_declared_only_when_built_fails_the_startup() -> None:
    """Starlette builds its middleware at startup: two declared (add_middleware
    twice, or middleware() listed twice) fail it with the ConfigError rather
    than record every page twice."""
    from starlette.testclient import TestClient

    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import middleware

    app = _starlette_app()
    app.add_middleware(ASGISitemapMiddleware, config=ASGI_CONFIG)
    app.add_middleware(ASGISitemapMiddleware, config=ASGI_CONFIG)
    with (
        pytest.raises(ConfigError, match="already has a sitemap middleware"),
        TestClient(app),
    ):
        pass
    from starlette.applications import Starlette

    listed = Starlette(middleware=[middleware(ASGI_CONFIG), middleware(ASGI_CONFIG)])
    with (
        pytest.raises(ConfigError, match="already has a sitemap middleware"),
        TestClient(listed),
    ):
        pass
