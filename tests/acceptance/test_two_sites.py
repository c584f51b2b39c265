"""Two sites from one app under a real server: gunicorn with two workers on
SQLite, Redis and PostgreSQL, one store. Each site's index, parts and
robots.txt name only its own origin and pages, schema-valid and read the same
by a real sitemap consumer; a request for a host no site names records
nothing."""

from __future__ import annotations

import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import HTTPClient, free_port, running, sitemap_urls, wait_until

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2

FLASK_APP = """
import html
from flask import Flask, abort
from sitemap_middleware import SitemapMiddleware

app = Flask(__name__)

@app.route("/<path:slug>")
@app.route("/")
def page(slug=""):
    if slug == "robots.txt":  # the middleware generates one
        abort(404)
    title = html.escape(slug or "Home")
    return f"<!doctype html><html><head><title>{title}</title></head></html>"

app.wsgi_app = SitemapMiddleware(app.wsgi_app, CONFIG)
"""

STARLETTE_APP = """
import html
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from sitemap_middleware.starlette import add_sitemap

async def page(request):
    slug = request.path_params.get("slug", "")
    if slug == "robots.txt":  # the middleware generates one
        return Response(status_code=404)
    title = html.escape(slug or "Home")
    return HTMLResponse(f"<!doctype html><html><title>{title}</title></html>")

app = Starlette(routes=[Route("/", page), Route("/{slug:path}", page)])
add_sitemap(app, CONFIG)
"""

SERVERS = {
    "gunicorn": (FLASK_APP, ["-m", "gunicorn", "-w", str(WORKERS), "-b"]),
    "uvicorn": (
        STARLETTE_APP,
        ["-m", "uvicorn", "--workers", str(WORKERS), "--host", "127.0.0.1", "--port"],
    ),
}


class HostClient(HTTPClient):
    """A client that sends one ``Host`` on every request, as a browser of
    that site would."""

    def __init__(self, port: int, host: str) -> None:
        super().__init__("127.0.0.1", port)
        self.site_host = host

    def request(self, method: str, path: str, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return super().request(
            method, path, {"Host": self.site_host, **(headers or {})}
        )


def two_hosts(port: int, path: str) -> None:
    """A request with two Host lines: refused by the server, or recorded
    under neither site."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(
            f"GET {path} HTTP/1.1\r\nHost: localhost\r\nHost: 127.0.0.1\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        while conn.recv(65536):
            pass


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def served(
    server: str, store_uri: str, tmp_path: Path
) -> Iterator[tuple[int, dict[str, str]]]:
    port = free_port()
    # The origins carry the server's port: the real consumer fetches them.
    origins = {
        "one": f"http://127.0.0.1:{port}",
        "two": f"http://localhost:{port}",
    }
    config = {
        "sites": {
            "one": {"base_url": origins["one"], "hosts": ["127.0.0.1"]},
            "two": {"base_url": origins["two"], "hosts": ["localhost"]},
        },
        "store": store_uri,
    }
    (tmp_path / "entry.py").write_text(
        textwrap.dedent(SERVERS[server][0]).replace("CONFIG", repr(config))
    )
    where = f"127.0.0.1:{port}" if server == "gunicorn" else str(port)
    argv = [*SERVERS[server][1], where]
    with running([*argv, "entry:app"], tmp_path, port, "/", f"{server} to start"):
        yield port, origins


def test_two_sites_on_one_store(served: tuple[int, dict[str, str]]) -> None:
    from usp.tree import sitemap_tree_for_homepage

    port, origins = served
    one, two = HostClient(port, "127.0.0.1"), HostClient(port, "localhost")
    stranger = HostClient(port, "evil.example")
    # Each page a few times, so that both workers serve and record some.
    for _ in range(3):
        for path in ("/", "/a", "/b"):
            assert one.get(path).status == 200
        for path in ("/", "/x"):
            assert two.get(path).status == 200
        assert stranger.get("/stranger").status == 200
        assert one.get("/c", {"X-Forwarded-Host": "localhost"}).status == 200
        assert stranger.get("/d", {"Forwarded": "host=localhost"}).status == 200
        assert HostClient(port, "LOCALHOST.").get("/dot").status == 200
        two_hosts(port, "/both")
    expected = {
        "one": {origins["one"] + p for p in ("/", "/a", "/b", "/c")},
        "two": {origins["two"] + p for p in ("/", "/x")},
    }
    for name, client in (("one", one), ("two", two)):
        wait_until(
            lambda c=client, n=name: set(sitemap_urls(c)) == expected[n],  # type: ignore[misc]
            15,
            f"site {name}'s pages",
        )
        robots = client.get("/robots.txt").body.decode()
        assert f"Sitemap: {origins[name]}/sitemap.xml" in robots
        other = origins["two" if name == "one" else "one"]
        assert other not in robots
        assert other not in client.get("/sitemap.xml").body.decode()
        # A real consumer, from the site's robots.txt: the same pages.
        tree = sitemap_tree_for_homepage(origins[name] + "/", use_known_paths=False)
        assert {page.url for page in tree.all_pages()} == expected[name]
    # A host no site names gets the default site's documents.
    assert set(sitemap_urls(stranger)) == expected["one"]
    # Nothing was recorded for it, nor for two Host lines, nor for a
    # trailing dot: after a flush of every worker's writer (a second), the
    # same pages.
    time.sleep(1.5)
    assert set(sitemap_urls(one)) == expected["one"]
    assert set(sitemap_urls(two)) == expected["two"]
