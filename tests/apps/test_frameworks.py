"""The table of frameworks: each row recognises its app down the layers a
middleware adds, reads its routes and its own pages, and says where the
middleware sits; the ASGI middleware finds a response's route as the row says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import ASGISitemapMiddleware, ConfigError, SitemapMiddleware
from sitemap_middleware.apps import DJANGO, STARLETTE, WERKZEUG, RouteTable
from sitemap_middleware.apps.frameworks import (
    ANY_ASGI,
    ANY_WSGI,
    FLASK,
    LITESTAR,
    QUART,
    STARLETTE_APP,
    framework_of,
    refuse_second,
    table_of,
)
from sitemap_middleware.cli.replay import fill

BASE = "https://www.example.com"
PAGE = "<html><head><title>{0}</title></head><body>{0}</body></html>"


def _flask() -> Any:
    from flask import Flask

    app = Flask("site")
    app.add_url_rule("/", "home", lambda: PAGE.format("Home"))
    return app


def _quart() -> Any:
    quart = pytest.importorskip("quart")
    app = quart.Quart("site")

    @app.route("/blog/<slug>")
    async def post(slug: str) -> str:
        return PAGE.format(slug)

    return app


def _litestar() -> Any:
    litestar = pytest.importorskip("litestar")
    from litestar.params import FromPath

    @litestar.get("/blog/{slug:str}", media_type="text/html")
    async def post(slug: FromPath[str]) -> str:
        return PAGE.format(slug)

    return litestar.Litestar([post])


def _starlette() -> Any:
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    async def home(request: Any) -> HTMLResponse:
        return HTMLResponse(PAGE.format("Home"))

    return Starlette(routes=[Route("/", home)])


def _wsgi(environ: Any, start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/html")])
    return [PAGE.format("Hi").encode()]


async def _asgi(scope: Any, receive: Any, send: Any) -> None:
    raise NotImplementedError


def test_each_framework_is_its_row_beneath_other_layers() -> None:
    flask, quart, litestar, starlette = _flask(), _quart(), _litestar(), _starlette()
    assert framework_of(flask) == (FLASK, flask)
    # A bound wsgi_app leads to its Flask app, as ProxyFix's .app does.
    assert framework_of(flask.wsgi_app) == (FLASK, flask)
    assert framework_of(quart) == (QUART, quart)
    assert framework_of(quart.asgi_app) == (QUART, quart)
    assert framework_of(litestar) == (LITESTAR, litestar)
    assert framework_of(starlette) == (STARLETTE_APP, starlette)
    assert framework_of(_wsgi) == (ANY_WSGI, None)
    assert framework_of(_asgi) == (ANY_ASGI, None)
    assert framework_of(object()) == (ANY_WSGI, None)


def test_each_row_reads_its_routes_in_its_spelling() -> None:
    quart = table_of(_quart())
    assert quart is not None and quart.spelling == WERKZEUG
    assert "/blog/<slug>" in quart.views
    litestar = table_of(_litestar())
    assert litestar is not None and litestar.spelling == STARLETTE
    assert "/blog/{slug}" in litestar.views
    # Litestar's OpenAPI pages, as FastAPI's, are the framework's.
    assert {"/schema", "/schema/swagger", "/schema/redoc", "/schema/elements"} <= (
        litestar.framework
    )
    assert "/blog/{slug}" not in litestar.framework
    assert table_of(_wsgi) is None


def test_a_second_middleware_is_refused_where_the_row_says(tmp_path: Path) -> None:
    quart = _quart()
    config = {"base_url": BASE, "store": "memory://"}
    quart.asgi_app = ASGISitemapMiddleware(quart.asgi_app, config)
    with pytest.raises(ConfigError, match=r"Quart\.asgi_app > ASGISitemapMiddleware"):
        refuse_second(quart, ASGISitemapMiddleware)
    flask = _flask()
    flask.wsgi_app = SitemapMiddleware(flask.wsgi_app, config)
    with pytest.raises(ConfigError, match=r"Flask\.wsgi_app > SitemapMiddleware"):
        SitemapMiddleware(flask, config)


def _recorded(middleware: Any) -> dict[str, str | None]:
    assert middleware.flush(5.0)
    store = middleware.store
    return {
        entry.path: entry.route
        for part in store.parts()
        for entry in store.entries(part.number)
    }


@pytest.mark.parametrize("make", [_quart, _litestar], ids=["quart", "litestar"])
def test_the_asgi_middleware_finds_the_route_as_the_row_says(make: Any) -> None:
    from starlette.testclient import TestClient

    app = make()
    config = {"base_url": BASE, "store": "memory://"}
    if framework_of(app)[0] is QUART:
        app.asgi_app = middleware = ASGISitemapMiddleware(app.asgi_app, config)
        root = app
    else:
        root = middleware = ASGISitemapMiddleware(app, config)
    with TestClient(root, base_url=BASE) as client:
        assert client.get("/blog/hello").status_code == 200
        client.get("/schema/swagger")
    template = "/blog/<slug>" if make is _quart else "/blog/{slug}"
    assert _recorded(middleware) == {"/blog/hello": template}
    middleware.close()


def test_a_route_the_middleware_answers_is_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Wherever the routes are known (here Flask's), a route at a path the
    middleware answers in the app's place is said once; robots.txt, which
    it amends, is not."""
    import logging

    from werkzeug.test import Client

    app = _flask()
    app.add_url_rule("/sitemap.xml", "old", lambda: "<urlset/>")
    app.add_url_rule("/robots.txt", "robots", lambda: "User-agent: *\n")
    app.add_url_rule("/sitemap-2.xml.gz", "old_part", lambda: "")
    app.wsgi_app = middleware = SitemapMiddleware(
        app.wsgi_app, {"base_url": BASE, "store": "memory://"}
    )
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    client = Client(app)
    client.get("/", base_url=BASE)
    client.get("/", base_url=BASE)
    said = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(said) == 1
    assert "'/sitemap-2.xml.gz'" in said[0] and "1 more" in said[0]
    assert "robots" not in said[0]
    middleware.close()


_SEGMENT = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"))
    | st.sampled_from("-_.~"),
    min_size=1,
    max_size=12,
)


@given(st.lists(_SEGMENT, min_size=1, max_size=4), st.booleans())
def test_a_django_route_serves_one_path_when_it_is_plain(
    segments: list[str], slash: bool
) -> None:
    path = "/".join(segments) + ("/" if slash else "")
    table = RouteTable({}, frozenset(), spelling=DJANGO)
    assert table.path_of(path) == "/" + path
    assert table.path_of("^" + re.escape(path) + "$") == "/" + path
    assert table.path_of(path + "<int:n>/") is None
    assert table.path_of("^" + re.escape(path) + "(?P<n>[0-9]+)/$") is None
    assert fill(path + "<slug:slug>/", {"slug": "a b"}, DJANGO) == f"/{path}a%20b/"


def test_the_warning_names_the_key_that_moves_the_middleware_s_page(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from werkzeug.test import Client

    app = _flask()
    app.add_url_rule("/site-map", "mine", lambda: PAGE.format("All pages"))
    config = {"base_url": BASE, "store": "memory://", "html_sitemap": "/site-map"}
    app.wsgi_app = middleware = SitemapMiddleware(app.wsgi_app, config)
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    Client(app).get("/", base_url=BASE)
    said = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(said) == 1
    assert "'/site-map'" in said[0] and "'html_sitemap' key" in said[0]
    middleware.close()
