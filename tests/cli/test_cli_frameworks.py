"""The command line on apps of other frameworks: Quart's routes are Flask's,
Litestar's OpenAPI pages are framework pages, and an ASGI app whose routes are
unknown (Datasette) is asked by explain while seed exits 5 in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.helpers import stored_paths

from sitemap_middleware import ASGISitemapMiddleware, open_store
from sitemap_middleware.cli import main

BASE = "https://www.example.com"


def cli(app: Any, *args: str) -> Any:
    runner = CliRunner()
    return runner.invoke(main, list(args), obj=_target(app))


def _target(app: Any) -> Any:
    from sitemap_middleware.cli.options import Target

    return Target(load=lambda spec: app)


def quart_app(store: str) -> Any:
    quart = pytest.importorskip("quart")
    app = quart.Quart("site")

    @app.route("/")
    async def home() -> str:
        return "<html><head><title>Home</title></head><body>Home</body></html>"

    @app.route("/about")
    async def about() -> str:
        return "<html><head><title>About</title></head><body>About</body></html>"

    app.asgi_app = ASGISitemapMiddleware(  # type: ignore[method-assign]
        app.asgi_app, {"base_url": BASE, "store": store}
    )
    return app


def test_quart_seed_uses_its_routes(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    done = cli(quart_app(store), "seed", "--app", "x")
    assert done.exit_code == 0, done.output
    assert stored_paths(store) == ["/", "/about"]
    done = cli(quart_app(store), "explain", "--app", "x", f"{BASE}/about")
    assert done.exit_code == 0, done.output
    assert "route: /about" in done.output


def test_litestar_s_openapi_pages_are_the_framework_s(tmp_path: Path) -> None:
    litestar = pytest.importorskip("litestar")
    from sitemap_middleware.apps.frameworks import LITESTAR, framework_of, table_of

    @litestar.get("/", media_type="text/html")
    async def home() -> str:
        return "<html><head><title>Home</title></head><body>Home</body></html>"

    app = litestar.Litestar([home])
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    wrapped = ASGISitemapMiddleware(app, {"base_url": BASE, "store": store})
    assert framework_of(wrapped)[0] is LITESTAR
    table = table_of(app)
    assert table is not None
    assert {"/schema", "/schema/swagger", "/schema/redoc", "/schema/elements"} <= (
        table.framework
    )
    done = cli(wrapped, "seed", "--app", "x")
    assert done.exit_code == 0, done.output
    assert stored_paths(store) == ["/"]


def _made(uri: str) -> None:
    """The store at ``uri`` made, empty, as the app's first write makes it."""
    store = open_store(uri)
    try:
        assert store.count() == 0
    finally:
        store.close()


def test_an_app_whose_routes_are_unknown_is_asked_but_not_seeded(
    tmp_path: Path,
) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/html")],
            }
        )
        await send({"type": "http.response.body", "body": b"<html>hi</html>"})

    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    wrapped = ASGISitemapMiddleware(app, {"base_url": BASE, "store": store})
    done = cli(wrapped, "seed", "--app", "x")
    assert done.exit_code == 5
    assert "routes" in done.output and "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1
    _made(store)  # seed refused before a write: nothing made
    done = cli(wrapped, "explain", "--app", "x", f"{BASE}/page")
    assert "Traceback" not in done.output
    assert "listed: no" in done.output


def test_datasette_is_asked_without_a_traceback(tmp_path: Path) -> None:
    datasette = pytest.importorskip("datasette.app")
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    inner = datasette.Datasette(memory=True).app()
    wrapped = ASGISitemapMiddleware(inner, {"base_url": BASE, "store": store})
    done = cli(wrapped, "seed", "--app", "x")
    assert done.exit_code == 5, done.output
    assert "Traceback" not in done.output
    _made(store)
    done = cli(wrapped, "explain", "--app", "x", f"{BASE}/-/versions")
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert "listed: no" in done.output
