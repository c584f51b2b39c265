"""What the app declares: routes found however the middleware is installed, route
keys checked against the app's routes and syntax, the framework's own pages never
recorded, and the Starlette helpers that check a config at once."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from support.sites import BASE, HTML, html, stored_entries

from sitemap_middleware import (
    ASGISitemapMiddleware,
    ConfigError,
    Entry,
    SitemapMiddleware,
    sitemap,
)
from sitemap_middleware.core import SitemapBase

WARNINGS = "sitemap_middleware"


def options(middleware: SitemapBase) -> dict[str, dict[str, str]]:
    """Stored path -> the changefreq and priority of its stored fragment."""
    assert middleware.flush(5.0)
    store = middleware.store
    found: dict[str, dict[str, str]] = {}
    for part in store.parts():
        xml = b"".join(store.fragments(part.number)).decode()
        for url in re.findall(r"<url>(.*?)</url>", xml, re.S):
            fields = dict(re.findall(r"<(loc|changefreq|priority)>(.*?)</\1>", url))
            found[fields.pop("loc").replace("\0", "")] = fields
    return found


def skipped(middleware: SitemapBase, reason: str) -> int:
    counts: dict[str, int] = middleware.stats()["skipped"]
    return counts.get(reason, 0)


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == WARNINGS and record.levelno == logging.WARNING
    ]


# -- Flask, however the middleware is installed ------------------------------------


def blog(**flask: Any) -> Any:
    from flask import Flask, Response

    app = Flask(__name__, **flask)

    @app.route("/about")
    def about() -> Response:
        return Response(html("About"), content_type=HTML)

    @app.route("/blog/<slug>")
    @sitemap(changefreq="weekly")
    def post(slug: str) -> Response:
        return Response(html(slug), content_type=HTML)

    return app


def get(app: Any, path: str) -> int:
    from werkzeug.test import Client

    response = Client(app).get(path)
    response.get_data()
    response.close()
    status: int = response.status_code
    return status


def wrap_bound(app: Any, config: dict[str, Any]) -> tuple[Any, SitemapMiddleware]:
    middleware = SitemapMiddleware(app.wsgi_app, config)
    app.wsgi_app = middleware
    return app, middleware


def wrap_proxy_fix(app: Any, config: dict[str, Any]) -> tuple[Any, SitemapMiddleware]:
    from werkzeug.middleware.proxy_fix import ProxyFix

    middleware = SitemapMiddleware(ProxyFix(app.wsgi_app), config)  # type: ignore[arg-type]
    app.wsgi_app = middleware
    return app, middleware


def wrap_app(app: Any, config: dict[str, Any]) -> tuple[Any, SitemapMiddleware]:
    middleware = SitemapMiddleware(app, config)
    return middleware, middleware


def wrap_outside_proxy_fix(
    app: Any, config: dict[str, Any]
) -> tuple[Any, SitemapMiddleware]:
    from werkzeug.middleware.proxy_fix import ProxyFix

    middleware = SitemapMiddleware(ProxyFix(app), config)  # type: ignore[arg-type]
    return middleware, middleware


@pytest.mark.parametrize(
    "wrap", [wrap_bound, wrap_proxy_fix, wrap_app, wrap_outside_proxy_fix]
)
def test_plain_wrapper_finds_flask_routes(wrap: Any) -> None:
    """The README's first snippet (``app.wsgi_app = SitemapMiddleware(...)``),
    a ProxyFix in between, or the Flask app itself wrapped: the stored route
    is Flask's rule, and both the config's routes and @sitemap apply."""
    config = {**BASE, "routes": {"/about": {"priority": 0.3}}}
    served, middleware = wrap(blog(), config)
    try:
        assert get(served, "/about") == 200
        assert get(served, "/blog/hello") == 200
        stored = stored_entries(middleware)
        routes = {path: entry.route for path, entry in stored.items()}
        assert routes == {"/about": "/about", "/blog/hello": "/blog/<slug>"}
        assert options(middleware) == {
            "/about": {"priority": "0.3"},
            "/blog/hello": {"changefreq": "weekly"},
        }
        table = middleware.table()
        assert table is not None
        assert set(table.views) == {"/about", "/blog/<slug>", "/static/<path:filename>"}
        assert table.framework == {"/static/<path:filename>"}
    finally:
        middleware.close()


def test_bare_wsgi_app_with_routes_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A WSGI app whose routes cannot be seen: the config's routes would be
    ignored, so one warning says why, however many pages are served."""

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", HTML)])
        return [html("Page")]

    middleware = SitemapMiddleware(app, {**BASE, "routes": {"/a": {"priority": 1}}})
    try:
        caplog.set_level(logging.WARNING, WARNINGS)
        for path in ("/a", "/b", "/c"):
            assert get(middleware, path) == 200
        # Read as the writer reads the pages' routes.
        assert {e.route for e in stored_entries(middleware).values()} == {None}
        (message,) = warnings(caplog)
        assert "cannot see this app's routes" in message
        assert "sitemap_middleware.route" in message
    finally:
        middleware.close()


def test_wsgi_app_naming_its_routes_does_not_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        environ["sitemap_middleware.route"] = "/a"
        start_response("200 OK", [("Content-Type", HTML)])
        return [html("Page")]

    middleware = SitemapMiddleware(app, {**BASE, "routes": {"/a": {"priority": 1}}})
    try:
        caplog.set_level(logging.WARNING, WARNINGS)
        assert get(middleware, "/a") == 200
        assert warnings(caplog) == []
        assert options(middleware) == {"/a": {"priority": "1.0"}}
    finally:
        middleware.close()


def test_flask_route_key_matching_no_route_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Flask's url_map may grow until the app serves: a key naming no route
    is one warning at the first page response, with the closest route."""
    app, middleware = wrap_bound(blog(), {**BASE, "routes": {"/blgo/<slug>": {}}})
    try:
        caplog.set_level(logging.WARNING, WARNINGS)
        assert warnings(caplog) == []  # routes may still be added
        for path in ("/about", "/blog/a", "/about"):
            assert get(app, path) == 200
        (message,) = warnings(caplog)
        assert "'/blgo/<slug>' matches no route" in message
        assert "did you mean '/blog/<slug>'" in message
    finally:
        middleware.close()


# -- Route keys in the other framework's syntax -----------------------------------


@pytest.mark.parametrize(
    ("key", "right"),
    [
        ("/blog/{slug}", "/blog/<slug>"),
        ("/files/{rest:path}", "/files/<path:rest>"),
        ("/items/{id:int}", "/items/<int:id>"),
    ],
)
def test_starlette_syntax_on_wsgi_is_an_error(key: str, right: str) -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        raise AssertionError("never called")

    with pytest.raises(ConfigError) as caught:
        SitemapMiddleware(app, {**BASE, "routes": {key: {"priority": 0.5}}})
    assert repr(key) in str(caught.value) and repr(right) in str(caught.value)


@pytest.mark.parametrize(
    ("key", "right"),
    [
        ("/blog/<slug>", "/blog/{slug}"),
        ("/files/<path:rest>", "/files/{rest:path}"),
        ("/items/<int:id>", "/items/{id:int}"),
    ],
)
def test_werkzeug_syntax_on_asgi_is_an_error(key: str, right: str) -> None:
    from sitemap_middleware.starlette import add_sitemap, middleware

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    config = {**BASE, "routes": {key: {"priority": 0.5}}}
    for install in (
        lambda: ASGISitemapMiddleware(app, config),
        lambda: middleware(config),
        lambda: add_sitemap(_starlette([]), config),
    ):
        with pytest.raises(ConfigError) as caught:
            install()
        assert repr(key) in str(caught.value) and repr(right) in str(caught.value)


# -- Starlette and FastAPI: route keys against the app ------------------------------


def _starlette(routes: list[Any], config: dict[str, Any] | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    sitemap = Middleware(ASGISitemapMiddleware, config=config)
    return Starlette(routes=routes, middleware=[sitemap] if config else [])


def _pages() -> list[Any]:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Mount, Route

    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse(html(request.url.path))

    return [
        Route("/about", page),
        Mount("/blog", routes=[Route("/{slug}", page)]),
    ]


def test_asgi_route_key_matching_no_route_fails_startup() -> None:
    """At lifespan startup the app's routes are final: a key naming none of
    them fails the startup, so the server does not start."""
    from starlette.testclient import TestClient

    app = _starlette(_pages(), {**BASE, "routes": {"/blog/{slgu}": {}}})
    client = TestClient(app, base_url="http://localhost")
    with pytest.raises(ConfigError, match=r"'/blog/\{slgu\}' matches no route"):
        client.__enter__()


def test_asgi_route_key_matching_no_route_warns_without_lifespan(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from starlette.testclient import TestClient

    from sitemap_middleware.starlette import get_sitemap

    app = _starlette(_pages(), {**BASE, "routes": {"/blog/{slgu}": {}}})
    client = TestClient(app, base_url="http://localhost")  # not entered: no lifespan
    caplog.set_level(logging.WARNING, WARNINGS)
    for path in ("/about", "/blog/a"):
        assert client.get(path).status_code == 200
    sitemap = get_sitemap(app)
    try:
        # Read as the writer reads the first page's route.
        assert set(stored_entries(sitemap)) == {"/about", "/blog/a"}
        (message,) = warnings(caplog)
        assert "did you mean '/blog/{slug}'" in message
    finally:
        sitemap.close()


def test_asgi_route_keys_of_mounts_are_known() -> None:
    """Mounted routes are known with their prefix; the table is there from
    lifespan startup on."""
    from starlette.testclient import TestClient

    from sitemap_middleware.starlette import get_sitemap

    config = {**BASE, "routes": {"/blog/{slug}": {"priority": 0.8}}}
    app = _starlette(_pages(), config)
    with TestClient(app, base_url="http://localhost") as client:
        sitemap = get_sitemap(app)
        table = sitemap.table()
        assert table is not None and set(table.views) == {"/about", "/blog/{slug}"}
        assert client.get("/blog/a").status_code == 200
        assert options(sitemap) == {"/blog/a": {"priority": "0.8"}}
    sitemap.close()


# -- The framework's own pages ----------------------------------------------------


@pytest.fixture
def static_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "page.html").write_bytes(html("A static page"))
    return folder


def test_flask_static_routes_are_not_recorded(static_folder: Path) -> None:
    """Flask's static route (wherever static_url_path puts it) and a
    blueprint's serve files, an .html one included: never recorded. (Flask
    sends them with ``Content-Disposition: inline``, which the response
    rules count first; the route is the framework's whatever they say.)"""
    from flask import Blueprint

    from sitemap_middleware.flask import Sitemap

    app = blog(static_folder=str(static_folder), static_url_path="/assets")
    shop = Blueprint(
        "shop",
        __name__,
        url_prefix="/shop",
        static_folder=str(static_folder),
        static_url_path="/files",
    )
    app.register_blueprint(shop)
    app.config["SITEMAP"] = BASE
    middleware = Sitemap().init_app(app)
    try:
        assert get(app, "/assets/page.html") == 200
        assert get(app, "/shop/files/page.html") == 200
        assert get(app, "/about") == 200
        assert list(stored_entries(middleware)) == ["/about"]
        table = middleware.table()
        assert table is not None
        statics = {"/assets/<path:filename>", "/shop/files/<path:filename>"}
        assert table.framework == statics
        for template in statics:
            route = middleware.routes.resolve(template, table.views[template])
            assert route.framework
        assert not middleware.routes.resolve("/about", table.views["/about"]).framework
    finally:
        middleware.close()


def _html_served(app: Any, paths: Iterable[str]) -> tuple[list[str], int]:
    """Request each of ``paths`` from ``app``, each an HTML page (200): the paths
    its sitemap then stores, and how many it skipped as the framework's."""
    from starlette.testclient import TestClient

    from sitemap_middleware.starlette import get_sitemap

    with TestClient(app, base_url="http://localhost") as client:
        for path in paths:
            reply = client.get(path)
            assert reply.status_code == 200
            assert reply.headers["content-type"].startswith("text/html")
        sitemap = get_sitemap(app)
        found = list(stored_entries(sitemap)), skipped(sitemap, "framework")
    sitemap.close()
    return found


def test_starlette_static_files_are_not_recorded(static_folder: Path) -> None:
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    files = Mount("/files", app=StaticFiles(directory=static_folder, html=True))
    app = _starlette([*_pages(), files], BASE)
    served = ("/files/page.html", "/files/page.html", "/about")
    assert _html_served(app, served) == (["/about"], 2)


def _fastapi(**paths: Any) -> Any:
    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse

    app = FastAPI(**paths)

    @app.get("/", response_class=HTMLResponse)
    async def home() -> str:
        return html("Home").decode()

    return app


@pytest.mark.parametrize(
    ("paths", "pages"),
    [
        ({}, ["/docs", "/redoc", "/docs/oauth2-redirect"]),
        (
            {
                "docs_url": "/api-docs",
                "redoc_url": "/manual",
                "swagger_ui_oauth2_redirect_url": "/back-from-sign-in",
            },
            ["/api-docs", "/manual", "/back-from-sign-in"],
        ),
    ],
)
def test_fastapi_docs_are_not_recorded(paths: dict[str, str], pages: list[str]) -> None:
    """FastAPI's docs, ReDoc and OAuth2 redirect pages, at the default paths
    and at the app's own, are found from the app and never recorded."""
    app = _fastapi(**paths)
    app.add_middleware(ASGISitemapMiddleware, config=BASE)  # type: ignore[arg-type]
    assert _html_served(app, [*pages, "/"]) == (["/"], 3)


# -- Starlette: the config checked at once ----------------------------------------


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({**BASE, "chagnefreq": "daily"}, "changefreq"),
        ({**BASE, "priority": 2}, "priority"),
        ({**BASE, "store": "sqlite:///x.db?part_size=lots"}, "part_size"),
        ({**BASE, "store": "nosuch://here"}, "nosuch"),
    ],
)
def test_add_sitemap_checks_the_config_at_the_call(
    config: dict[str, Any], key: str
) -> None:
    """A mistake raises in the app factory, before any request; the app is
    left as it was."""
    from fastapi import FastAPI

    from sitemap_middleware.starlette import add_sitemap, middleware

    app = FastAPI()
    with pytest.raises(ConfigError, match=key):
        add_sitemap(app, config)
    assert app.user_middleware == []
    with pytest.raises(ConfigError, match=key):
        middleware(config)


def test_add_sitemap_with_a_good_config_records(tmp_path: Path) -> None:
    """The store is not connected to by the check: the file appears only
    when the app records."""
    from starlette.testclient import TestClient

    from sitemap_middleware.starlette import add_sitemap, get_sitemap

    database = tmp_path / "sitemap.db"
    app = _fastapi()
    add_sitemap(app, {**BASE, "store": f"sqlite:///{database}"})
    assert not database.exists()
    with TestClient(app, base_url="http://localhost") as client:
        assert client.get("/").status_code == 200
        sitemap = get_sitemap(app)
        assert list(stored_entries(sitemap)) == ["/"]
        assert client.get("/sitemap.xml").status_code == 200
    sitemap.close()


# -- Under a real server -----------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent

FASTAPI_ENTRY = """
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from sitemap_middleware.starlette import add_sitemap

app = FastAPI(docs_url="/api-docs", redoc_url="/manual")

@app.get("/", response_class=HTMLResponse)
async def home() -> str:
    return "<!doctype html><title>Home</title><main><p>Home</p></main>"

add_sitemap(app, {{"base_url": {base!r}, "store": "sqlite:///{folder}/s.sqlite3"}})
"""

UNKNOWN_ROUTE_ENTRY = """
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from sitemap_middleware.starlette import middleware

async def home(request):
    return HTMLResponse("<title>Home</title>")

config = {{
    "base_url": {base!r},
    "store": "memory://",
    "routes": {{"/blgo/{{slug}}": {{"priority": 0.5}}}},
}}
app = Starlette(routes=[Route("/", home)], middleware=[middleware(config)])
"""


def _uvicorn(folder: Path, entry: str, port: int) -> Any:
    import subprocess
    import sys

    (folder / "entry.py").write_text(entry)
    with (folder / "server.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--port", str(port), "entry:app"],
            cwd=folder,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])},
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@pytest.mark.servers
@pytest.mark.slow
def test_fastapi_docs_are_not_recorded_under_uvicorn(tmp_path: Path) -> None:
    from support.helpers import HTTPClient, free_port, sitemap_urls, stop_server

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = _uvicorn(tmp_path, FASTAPI_ENTRY.format(base=base, folder=tmp_path), port)
    client = HTTPClient("127.0.0.1", port)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.get("/").status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)
        for path in ("/api-docs", "/manual", "/docs/oauth2-redirect"):
            assert client.get(path).status == 200
        deadline = time.monotonic() + 15  # the writer flushes about once a second
        while sitemap_urls(client) != [f"{base}/"]:
            assert time.monotonic() < deadline, sitemap_urls(client)
            time.sleep(0.2)
    finally:
        stop_server(process, 15)


@pytest.mark.servers
@pytest.mark.slow
def test_unknown_route_key_stops_uvicorn(tmp_path: Path) -> None:
    """uvicorn's default lifespan mode ("auto") goes on when an app raises
    before its startup; a startup that fails stops it."""
    from support.helpers import exited, free_port

    port = free_port()
    entry = UNKNOWN_ROUTE_ENTRY.format(base=f"http://127.0.0.1:{port}")
    assert exited(_uvicorn(tmp_path, entry, port), 30) != 0
    log = (tmp_path / "server.log").read_text()
    assert "'/blgo/{slug}' matches no route" in log
    assert "Application startup failed" in log


def test_asgi_wrapped_around_the_app_reads_its_routes(static_folder: Path) -> None:
    """Wrapped from outside, the middleware sees no ``scope["app"]``: it reads
    the routes of the app it wraps."""
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles
    from starlette.testclient import TestClient

    files = Mount("/files", app=StaticFiles(directory=static_folder))
    inner = _starlette([*_pages(), files])
    config = {**BASE, "routes": {"/blog/{slug}": {"priority": 0.8}}}
    sitemap = ASGISitemapMiddleware(inner, config)
    with TestClient(sitemap, base_url="http://localhost") as client:
        for path in ("/files/page.html", "/blog/a"):
            assert client.get(path).status_code == 200
        assert options(sitemap) == {"/blog/a": {"priority": "0.8"}}
        assert skipped(sitemap, "framework") == 1
    sitemap.close()


def test_framework_pages_stored_before_are_taken_out(tmp_path: Path) -> None:
    """A store written by a release that recorded FastAPI's docs pages: the
    re-check of the stored pages (invariant 21) takes them out once the app's
    routes are known, and keeps the pages."""
    from starlette.testclient import TestClient

    from sitemap_middleware import open_store
    from sitemap_middleware.starlette import add_sitemap, get_sitemap

    uri = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    old = open_store(uri)
    old.upsert([Entry("/", route="/"), Entry("/docs", route="/docs")])
    old.close()
    app = _fastapi()
    add_sitemap(app, {**BASE, "store": uri})
    with TestClient(app, base_url="http://localhost"):
        sitemap = get_sitemap(app)
        assert sitemap.flush()
        assert list(stored_entries(sitemap)) == ["/"]
        assert sitemap.stats()["pruned"] == 1
    sitemap.close()


def test_the_route_table_holds_fastapi_routers_and_knows_get_routes() -> None:
    """``include_router``'s routes are in the table with their prefix (newer
    FastAPI keeps them as one route), and ``gets`` names those answering GET."""
    from fastapi import APIRouter, FastAPI, WebSocket

    from sitemap_middleware.apps.starlette import starlette_table

    router = APIRouter(prefix="/blog")

    @router.get("/{slug}")
    async def post(slug: str) -> str:
        return slug

    @router.post("/comment")
    async def comment() -> str:
        return ""

    app = FastAPI()
    app.include_router(router)

    async def socket(websocket: WebSocket) -> None:
        await websocket.close()

    # The annotation as the class: older FastAPI resolves a string annotation
    # in the module's globals, which do not hold this local import.
    socket.__annotations__["websocket"] = WebSocket
    app.add_api_websocket_route("/ws", socket)

    table = starlette_table(app)
    assert table is not None
    assert table.views["/blog/{slug}"] is post
    assert "/blog/comment" in table.views
    assert "/blog/{slug}" in table.gets
    assert not {"/blog/comment", "/ws"} & table.gets
