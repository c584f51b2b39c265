"""Test helpers: schema validation of sitemap documents, one client API over the
WSGI and ASGI stacks, and the links of an HTML page by landmark."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import pathlib
import socketserver
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

XSD = pathlib.Path(__file__).parent / "xsd"
EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
NS = {
    "sm": "http://www.sitemaps.org/schemas/sitemap/0.9",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
}
# One schema set for pages: sitemap.xsd's extension points are "strict", so
# xhtml:link, image:image and news:news validate only when their schemas are
# loaded too.
_URLSET = f"""<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
<xsd:import namespace="{NS["sm"]}" schemaLocation="{XSD / "sitemap.xsd"}"/>
<xsd:import namespace="{NS["image"]}" schemaLocation="{XSD / "sitemap-image.xsd"}"/>
<xsd:import namespace="{NS["xhtml"]}" schemaLocation="{XSD / "xhtml1-strict.xsd"}"/>
<xsd:import namespace="{NS["news"]}" schemaLocation="{XSD / "sitemap-news.xsd"}"/>
</xsd:schema>"""
_SCHEMAS: dict[str, etree.XMLSchema] = {}


class _LocalXML(etree.Resolver):
    """xhtml1-strict.xsd imports the xml: namespace schema from w3.org."""

    def resolve(self, url: str, pubid: object, context: object) -> Any:
        if url.endswith("/xml.xsd"):
            return self.resolve_filename(str(XSD / "xml.xsd"), context)
        return None


def schema(name: str) -> etree.XMLSchema:
    if name not in _SCHEMAS:
        parser = etree.XMLParser(no_network=True)
        parser.resolvers.add(_LocalXML())
        if name == "urlset":
            document = etree.fromstring(_URLSET.encode(), parser).getroottree()
        else:
            document = etree.parse(str(XSD / name), parser)
        _SCHEMAS[name] = etree.XMLSchema(document)
    return _SCHEMAS[name]


def parse(xml: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    return etree.fromstring(xml, parser)


def validate(xml: bytes) -> etree._Element:
    """Parse a sitemap or index and assert it is valid against its schemas."""
    assert xml.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    root = parse(xml)
    name = "siteindex.xsd" if root.tag.endswith("sitemapindex") else "urlset"
    checker = schema(name)
    assert checker.validate(root), checker.error_log
    return root


def locs(root: etree._Element) -> list[str]:
    return [loc.text for loc in root.iterfind(".//sm:loc", NS)]


def gunzip_once(body: bytes) -> bytes:
    """Decompress a page, checking it is gzip exactly once."""
    assert body[:2] == b"\x1f\x8b"
    xml = gzip.decompress(body)
    assert xml.startswith(b"<?xml")
    return xml


@dataclass
class Reply:
    status: int
    headers: Any  # case-insensitive mapping
    body: bytes


def stored_paths(uri: str) -> list[str]:
    """Every path the store at ``uri`` lists, sorted (opened and closed here)."""
    from sitemap_middleware import open_store

    store = open_store(uri)
    try:
        return sorted(e.path for p in store.parts() for e in store.entries(p.number))
    finally:
        store.close()


def pending_pushes(uri: str) -> list[str]:
    """The paths whose IndexNow push the store at ``uri`` holds pending, as a
    pusher would claim them now (opened and closed here)."""
    import time

    from sitemap_middleware import open_store

    store: Any = open_store(uri)
    try:
        now = time.time()
        return list(store.claim_pushes(10_000, now, now + 60))
    finally:
        store.close()


def sitemap_urls(client: Any, prefix: str = "") -> list[str]:
    """Every <loc> of every page the index lists, each document validated.

    ``prefix`` is the path prefix of ``base_url``, absent from the app's paths.
    None while the store is empty: a 404, or the 503 with ``Retry-After`` of a
    worker whose first pages are on their way to the store.
    """
    reply = client.get("/sitemap.xml")
    if reply.status == 404:
        return []
    if reply.status == 503 and reply.headers["retry-after"]:
        assert b"being written" in reply.body, reply
        return []
    assert reply.status == 200, reply
    assert reply.headers["content-type"] == "application/xml; charset=utf-8"
    urls: list[str] = []
    for page_url in locs(validate(reply.body)):
        path = urlsplit(page_url).path
        assert path.startswith(prefix)
        if path == f"{prefix}/sitemap-news.xml":  # its pages are in the parts
            continue
        page = client.get(path[len(prefix) :])
        assert page.status == 200
        assert page.headers["content-type"] == "application/gzip"
        assert "content-encoding" not in page.headers
        urls.extend(locs(validate(gunzip_once(page.body))))
    return urls


def sitemap_lastmods(client: Any) -> dict[str, str | None]:
    """Every listed URL and the text of its ``<lastmod>`` (``None``: it has
    none), from every part the index lists, each document validated."""
    reply = client.get("/sitemap.xml")
    if reply.status == 404:
        return {}
    assert reply.status == 200, reply
    found: dict[str, str | None] = {}
    for page_url in locs(validate(reply.body)):
        if urlsplit(page_url).path == "/sitemap-news.xml":  # its pages are in the parts
            continue
        page = client.get(urlsplit(page_url).path)
        assert page.status == 200
        root = validate(gunzip_once(page.body))
        for url in root.iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            assert loc is not None
            found[loc] = url.findtext("sm:lastmod", namespaces=NS)
    return found


class HTTPClient:
    """A client for a real server: no redirects followed, HEAD without a body."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def request(
        self, method: str, path: str, headers: dict[str, str] | None = None
    ) -> Reply:
        import http.client

        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request(method, path, headers=headers or {})
            response = conn.getresponse()
            body = response.read()
            return Reply(response.status, response.headers, body)
        finally:
            conn.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self.request("GET", path, headers)

    def head(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self.request("HEAD", path, headers)


def serve_in_thread(server: socketserver.BaseServer) -> None:
    """Serve ``server`` on a daemon thread until ``server.shutdown()``, which it
    checks for every 10 ms: serve_forever's default of half a second would add as
    much to the teardown of every test that stops a server."""
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    ).start()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_server(process: Any, timeout: float) -> None:
    """SIGTERM (an orderly shutdown that flushes), SIGKILL after ``timeout``."""
    import signal
    import subprocess

    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def asgi_scope(
    path: str,
    headers: list[tuple[bytes, bytes]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A raw ASGI http scope for a GET of ``path`` (headers: the Host only)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"localhost")] if headers is None else headers,
        "server": ("localhost", 80),
        "client": ("127.0.0.1", 5000),
        **extra,
    }


def asgi_exchange(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    """Run one request through an ASGI app; the messages it sent."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


class _Page(HTMLParser):
    """The links of a page by landmark, its headings, its title and its lang."""

    def __init__(self) -> None:
        super().__init__()
        self.lang: str | None = None
        self.title = ""
        self._in_title = False
        self.where: list[str] = []
        self.links: dict[str, list[tuple[str, str]]] = {}
        self.headings: list[tuple[str, str]] = []
        self._href: str | None = None
        self._heading: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "html":
            self.lang = values.get("lang")
        elif tag in ("header", "nav", "main"):
            self.where.append(tag)
        elif tag == "a":
            self._href, self._text = values.get("href") or "", []
        elif tag in ("h1", "h2", "h3"):
            self._heading, self._text = tag, []
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in ("header", "nav", "main"):
            self.where.pop()
        elif tag == "a" and self._href is not None:
            place = self.where[-1] if self.where else "body"
            self.links.setdefault(place, []).append((self._href, "".join(self._text)))
            self._href = None
        elif tag == self._heading:
            self.headings.append((tag, "".join(self._text)))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        self._text.append(data)


def parse_page(body: bytes) -> _Page:
    page = _Page()
    page.feed(body.decode("utf-8"))
    page.close()
    return page


@dataclass(frozen=True)
class Story:
    """One ``<url>`` of a news sitemap, as read back."""

    name: str
    language: str
    published: str
    title: str


def news_stories(client: Any, prefix: str = "") -> dict[str, Story]:
    """The articles of /sitemap-news.xml by URL, the document validated
    (``{}`` for its 404); the index names it exactly when it answers 200."""
    index = client.get("/sitemap.xml")
    named = index.status == 200 and any(
        urlsplit(loc).path == f"{prefix}/sitemap-news.xml"
        for loc in locs(validate(index.body))
    )
    reply = client.get("/sitemap-news.xml")
    assert named == (reply.status == 200), (index.status, reply.status)
    if reply.status != 200:
        assert reply.status == 404, reply
        return {}
    assert reply.headers["content-type"] == "application/xml; charset=utf-8"
    root = validate(reply.body)
    found: dict[str, Story] = {}
    for url in root.iterfind("sm:url", NS):
        loc = url.findtext("sm:loc", namespaces=NS)
        assert loc is not None and loc not in found
        found[loc] = Story(
            url.findtext("news:news/news:publication/news:name", "", NS),
            url.findtext("news:news/news:publication/news:language", "", NS),
            url.findtext("news:news/news:publication_date", "", NS),
            url.findtext("news:news/news:title", "", NS),
        )
    return found


class Bare:
    """A store of the base protocol only, as a third-party store may be: it
    keeps the pages of ``inner`` and none of the optional features (visits,
    counters, decisions)."""

    def __init__(self, inner: Any) -> None:
        self.part_size, self.part_bytes = inner.part_size, inner.part_bytes
        self.upsert, self.remove = inner.upsert, inner.remove
        self.count, self.known = inner.count, inner.known
        self.parts, self.part = inner.parts, inner.part
        self.fragments, self.entries = inner.fragments, inner.entries
        self.close = inner.close


def wait_until(check: Any, timeout: float, what: str) -> float:
    """Seconds until ``check()`` held (a server up, a write seen); fails after
    ``timeout`` naming ``what`` and the last answer or error."""
    import time

    start = time.monotonic()
    last: object = None
    while time.monotonic() - start < timeout:
        try:
            last = check()
            if last:
                return time.monotonic() - start
        except (OSError, AssertionError) as exc:
            last = exc
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}: {last!r}")


@contextlib.contextmanager
def running(
    args: list[str], folder: pathlib.Path, port: int, ready: str, what: str
) -> Iterator[tuple[HTTPClient, Any]]:
    """A server process, ``python *args``, run in ``folder`` with ``folder``
    and the checkout first on its path (the checkout's package, whatever the
    environment has installed), once ``ready`` answers 200; stopped after,
    its log shown unless it exited cleanly."""
    import signal

    process = started(args, folder)
    log = folder / "server.log"
    client = HTTPClient("127.0.0.1", port)
    try:
        wait_until(lambda: client.get(ready).status == 200, 30, what)
        yield client, process
    finally:
        stop_server(process, 15)
        assert process.returncode in (0, -signal.SIGTERM), log.read_text()


@contextlib.contextmanager
def gunicorn(
    folder: pathlib.Path, port: int, workers: int, entry: str
) -> Iterator[HTTPClient]:
    """``app`` of the module ``entry`` (see :func:`write_entry`) under gunicorn
    with ``workers`` sync workers, once ``/`` answers 200 (see :func:`running`)."""
    write_entry(folder, entry)
    argv = ["-m", "gunicorn", "-w", str(workers), "-b", f"127.0.0.1:{port}"]
    with running([*argv, "entry:app"], folder, port, "/", "gunicorn to start") as (
        client,
        _,
    ):
        yield client


def write_entry(folder: pathlib.Path, source: str) -> None:
    """A server's module, ``folder/entry.py``: ``source`` (dedented), with the
    examples first on its path."""
    (folder / "entry.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\n{textwrap.dedent(source)}"
    )


def started(args: list[str], folder: pathlib.Path) -> Any:
    """``python *args`` run in ``folder``, with ``folder`` and the checkout
    first on its path, its output in ``folder/server.log``."""
    import os
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    with (folder / "server.log").open("wb") as output:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=folder,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(root)])},
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def exited(process: Any, timeout: float) -> int:
    """The exit code of a server expected to stop by itself within
    ``timeout`` (one still running is killed: the wait raises)."""
    try:
        return int(process.wait(timeout))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
