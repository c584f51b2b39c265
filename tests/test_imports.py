"""What an app imports through the package, in a fresh interpreter: a Flask app
neither the ASGI adapter nor asyncio, a Starlette app not the WSGI adapter, and
``import sitemap_middleware`` alone neither adapter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sitemap_middleware
from sitemap_middleware import asgi, wsgi

# This checkout's package first, whatever the working directory.
ROOT = Path(sitemap_middleware.__file__).resolve().parent.parent
ASYNC = {"asyncio", "anyio", "starlette", "sitemap_middleware.asgi"}
WSGI = {"sitemap_middleware.wsgi", "sitemap_middleware.flask", "flask"}

FLASK_APP = """
    from flask import Flask

    import sitemap_middleware
    from sitemap_middleware import SitemapMiddleware
    from sitemap_middleware.flask import Sitemap, get_sitemap

    app = Flask(__name__)
    app.config["SITEMAP"] = {"base_url": "http://localhost", "store": "memory://"}
    Sitemap(app)

    @app.get("/")
    def home():
        return "<html><head><title>Home</title></head></html>"

    client = app.test_client()
    with client.get("/") as response:
        assert response.data  # read in full: a body cut short is not recorded
    get_sitemap(app).flush()
    assert get_sitemap(app).stats()["recorded"] == 1
    assert client.get("/sitemap.xml").status_code == 200
    assert isinstance(get_sitemap(app), SitemapMiddleware)
"""

STARLETTE_APP = """
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from sitemap_middleware import ASGISitemapMiddleware
    from sitemap_middleware.starlette import add_sitemap, get_sitemap

    async def home(request):
        return HTMLResponse("<html><head><title>Home</title></head></html>")

    app = Starlette(routes=[Route("/", home)])
    add_sitemap(app, {"base_url": "http://testserver", "store": "memory://"})
    with TestClient(app) as client:
        assert client.get("/").status_code == 200
        get_sitemap(app).flush()
        assert get_sitemap(app).stats()["recorded"] == 1
        assert client.get("/sitemap.xml").status_code == 200
        assert isinstance(get_sitemap(app), ASGISitemapMiddleware)
"""


def imported(code: str) -> set[str]:
    """The modules a new interpreter holds once ``code`` has run."""
    script = textwrap.dedent(code) + "\nimport sys\nprint(' '.join(sys.modules))\n"
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    assert "sitemap_middleware" in modules
    return modules


def test_the_package_alone_imports_no_adapter() -> None:
    modules = imported("import sitemap_middleware")
    assert not modules & (ASYNC | WSGI)
    # The version is read when asked for: importlib.metadata is slow to import.
    assert "importlib.metadata" not in modules


def test_a_flask_app_imports_no_asgi() -> None:
    assert not imported(FLASK_APP) & ASYNC


@pytest.mark.parametrize(
    "code",
    [
        "from sitemap_middleware import SitemapMiddleware",
        "import sitemap_middleware.flask",
    ],
)
def test_the_wsgi_names_import_no_asgi(code: str) -> None:
    modules = imported(code)
    assert "sitemap_middleware.wsgi" in modules
    assert not modules & ASYNC


def test_a_starlette_app_imports_no_wsgi_adapter() -> None:
    modules = imported(STARLETTE_APP)
    assert "sitemap_middleware.asgi" in modules
    assert not modules & WSGI


# What an app's start-up leaves for later: the page readers (the writer's first
# page), the site map page (its first request), the command line (flask's).
LATER = {
    "html.parser",
    "sitemap_middleware.page.facts",
    "sitemap_middleware.page.head",
    "sitemap_middleware.page.titles",
    "sitemap_middleware.serving.arrangement",
    "sitemap_middleware.serving.site_map",
    "sitemap_middleware.cli",
}
FLASK_SET_UP = """
    from flask import Flask

    from sitemap_middleware.flask import Sitemap

    app = Flask(__name__)
    app.config["SITEMAP"] = {"base_url": "http://localhost", "store": "memory://"}
    Sitemap(app)
"""
STARLETTE_SET_UP = """
    from starlette.applications import Starlette

    from sitemap_middleware.starlette import add_sitemap

    app = Starlette()
    add_sitemap(app, {"base_url": "http://localhost", "store": "memory://"})
    app.middleware_stack = app.build_middleware_stack()
"""


@pytest.mark.parametrize(
    "code",
    ["import sitemap_middleware", FLASK_SET_UP, STARLETTE_SET_UP],
    ids=["package", "flask", "starlette"],
)
def test_start_up_leaves_what_no_request_needs_yet(code: str) -> None:
    assert not imported(code) & LATER


def test_what_start_up_left_loads_when_used() -> None:
    """A served page loads the page readers; the site map's names and
    ``flask sitemap``'s commands are there when asked for."""
    code = (
        FLASK_APP
        + """
    import click

    from sitemap_middleware import SiteMap, site_map

    assert isinstance(site_map(get_sitemap(app)), SiteMap)
    group = app.cli.commands["sitemap"]
    with click.Context(group) as context:
        assert "seed" in group.list_commands(context)
        assert group.get_command(context, "seed") is not None
"""
    )
    assert imported(code) >= LATER


def test_the_adapters_are_the_modules_classes() -> None:
    """The names the package imports on first use are the adapters' own."""
    assert sitemap_middleware.SitemapMiddleware is wsgi.SitemapMiddleware
    assert sitemap_middleware.ASGISitemapMiddleware is asgi.ASGISitemapMiddleware
    assert {"SitemapMiddleware", "ASGISitemapMiddleware"} <= set(
        dir(sitemap_middleware)
    )
    assert sitemap_middleware.__version__
    with pytest.raises(AttributeError, match="no attribute 'SitemapMiddlewares'"):
        sitemap_middleware.SitemapMiddlewares  # noqa: B018
