"""Two sites from one app under a real server: gunicorn with two workers on
SQLite, Redis and PostgreSQL, one store. Each site's index, parts and
robots.txt name only its own origin and pages, schema-valid and read the same
by a real sitemap consumer; a request for a host no site names records
nothing; an hreflang cluster across both sites is listed by both, reciprocal,
once both hold it, and by neither once one page is gone."""

from __future__ import annotations

import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.helpers import (
    HTTPClient,
    free_port,
    gunzip_once,
    locs,
    running,
    sitemap_urls,
    validate,
    wait_until,
)
from support.reciprocal import Links, links, unreciprocated

pytestmark = [pytest.mark.servers, pytest.mark.slow]

WORKERS = 2

# The pages under /h/ declare the same page on both sites ("en" on the first,
# "de" on the second); one is gone (404) while a file "gone-HOST-h_K" exists.
ALTERNATES = """
import os
ORIGINS = [site["base_url"] for site in CONFIG["sites"].values()]

def alternates(host, slug):
    if not slug.startswith("h/"):
        return 200, ""
    if os.path.exists(f"gone-{host.partition(':')[0]}-{slug.replace('/', '_')}"):
        return 404, ""
    return 200, "".join(
        f'<link rel="alternate" hreflang="{lang}" href="{origin}/{slug}">'
        for lang, origin in zip(("en", "de"), ORIGINS)
    )
"""

FLASK_APP = """
import html
from flask import Flask, abort, request
from sitemap_middleware import SitemapMiddleware

app = Flask(__name__)

@app.route("/<path:slug>")
@app.route("/")
def page(slug=""):
    if slug == "robots.txt":  # the middleware generates one
        abort(404)
    status, links = alternates(request.host, slug)
    if status != 200:
        abort(status)
    title = html.escape(slug or "Home")
    return f"<!doctype html><html><head><title>{title}</title>{links}</head></html>"

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
    status, links = alternates(request.headers.get("host", ""), slug)
    if status != 200:
        return Response(status_code=status)
    title = html.escape(slug or "Home")
    return HTMLResponse(
        f"<!doctype html><html><head><title>{title}</title>{links}</head></html>"
    )

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
    source = ALTERNATES + textwrap.dedent(SERVERS[server][0])
    (tmp_path / "entry.py").write_text(source.replace("CONFIG", repr(config)))
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


def served_links(client: HTTPClient) -> dict[str, Links]:
    """loc -> its hreflang links, over every part the site's index names,
    each validated against the schemas (sitemap, xhtml)."""
    reply = client.get("/sitemap.xml")
    if reply.status == 404:
        return {}
    parts = [urlsplit(loc).path for loc in locs(validate(reply.body))]
    return links(gunzip_once(client.get(path).body) for path in parts)


@pytest.mark.parametrize("server", ["gunicorn"])
def test_a_cross_site_hreflang_cluster(
    served: tuple[int, dict[str, str]], tmp_path: Path
) -> None:
    """/h/1 and /h/2 of both sites declare each other: each site lists its
    page with both links, reciprocal across the two sitemaps; /h/3 is served
    by the first site only, so its cluster is never listed. Once the second
    site's /h/2 answers 404, both sites list their /h/2 without links."""
    port, origins = served
    one, two = HostClient(port, "127.0.0.1"), HostClient(port, "localhost")
    for _ in range(3):  # both workers serve and record some
        for path in ("/h/1", "/h/2", "/h/3"):
            assert one.get(path).status == 200
        for path in ("/h/1", "/h/2"):
            assert two.get(path).status == 200

    def cluster(path: str) -> Links:
        return frozenset({("en", origins["one"] + path), ("de", origins["two"] + path)})

    expected = {
        origins["one"] + "/h/1": cluster("/h/1"),
        origins["one"] + "/h/2": cluster("/h/2"),
        origins["one"] + "/h/3": frozenset(),
        origins["two"] + "/h/1": cluster("/h/1"),
        origins["two"] + "/h/2": cluster("/h/2"),
    }

    def both() -> dict[str, Links]:
        """The /h/ pages both sites list ("/" too: the server's readiness)."""
        listed = {**served_links(one), **served_links(two)}
        return {loc: own for loc, own in listed.items() if "/h/" in loc}

    wait_until(lambda: both() == expected, 15, "the cross-site cluster listed")
    assert not unreciprocated(both())

    (tmp_path / "gone-localhost-h_2").touch()
    for _ in range(3):
        assert two.get("/h/2").status == 404
    del expected[origins["two"] + "/h/2"]
    expected[origins["one"] + "/h/2"] = frozenset()
    wait_until(lambda: both() == expected, 15, "the cluster unlisted on both")
    assert not unreciprocated(both())
