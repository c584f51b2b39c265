"""The watcher on both stacks from one table, driven through raw WSGI and raw ASGI:
each exchange is recorded, removed or counted under the same reason whichever
adapter carried it. And the exchanges that used to break the response or the
privacy rules: one-shot header iterables, list bodies and their length, file
wrappers, bodies iterated without close(), two Cookie lines, a response start
without headers, odd robots.txt charsets, root paths, a moved base_url.
"""

from __future__ import annotations

import io
import wsgiref.handlers
import wsgiref.util
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from support.helpers import asgi_exchange, asgi_scope
from werkzeug.test import Client, EnvironBuilder

from sitemap_middleware import ASGISitemapMiddleware, SitemapMiddleware, open_store

CONFIG = {"base_url": "http://localhost", "store": "memory://"}
PAGE = (
    b"<!doctype html><html><head><title>t</title></head>"
    b"<body><main>Hi</main></body></html>"
)

# (request headers, status, response headers, what is counted): "recorded",
# "removed" or a reason of stats()["skipped"] / ["seen"].
TABLE: list[tuple[dict[str, str], int, list[tuple[str, str]], str]] = [
    ({}, 200, [("Content-Type", "text/html")], "recorded"),
    ({}, 200, [("content-type", "TEXT/HTML; charset=utf-8")], "recorded"),
    ({}, 200, [("Content-Type", "application/xhtml+xml")], "recorded"),
    ({}, 200, [("Content-Type", "application/json")], "not_html"),
    ({}, 200, [], "not_html"),
    ({}, 201, [("Content-Type", "text/html")], "status"),
    ({}, 500, [("Content-Type", "text/html")], "status"),
    ({}, 404, [("Content-Type", "text/html")], "removed"),
    ({}, 410, [], "removed"),
    ({}, 301, [("Location", "/x")], "removed"),
    ({}, 200, [("Content-Type", "text/html"), ("X-Robots-Tag", "noindex")], "removed"),
    ({}, 200, [("Content-Type", "text/html"), ("Set-Cookie", "a=b")], "recorded"),
    (
        {"Cookie": "_ga=GA1.2.3"},
        200,
        [("Set-Cookie", "session=csrf"), ("Content-Type", "text/html")],
        "recorded",
    ),
    ({}, 200, [("Content-Type", "text/html"), ("Cache-Control", "private")], "private"),
    ({}, 200, [("Content-Type", "text/html"), ("Vary", "Cookie")], "recorded"),
    ({}, 200, [("Content-Type", "text/html"), ("Vary", "*")], "vary"),
    ({}, 200, [("Content-Type", "text/html"), ("Content-Encoding", "gzip")], "encoded"),
    (
        {},
        200,
        [("Content-Type", "text/html"), ("Content-Disposition", "attachment")],
        "attachment",
    ),
    (
        {"Authorization": "Bearer x"},
        200,
        [("Content-Type", "text/html")],
        "authorization",
    ),
    ({"Cookie": "session=abc"}, 200, [("Content-Type", "text/html")], "session"),
    ({"Host": "evil.test"}, 200, [("Content-Type", "text/html")], "host"),
]


def _wsgi_exchange(
    middleware: SitemapMiddleware, path: str, headers: dict[str, str]
) -> Iterable[bytes]:
    environ = EnvironBuilder(
        path=path, base_url="http://localhost", headers=headers
    ).get_environ()
    if "Host" in headers:
        environ["HTTP_HOST"] = headers["Host"]
    result = middleware(environ, lambda status, headers, exc_info=None: None)
    chunks = list(result)
    close = getattr(result, "close", None)
    if close is not None:
        close()
    return chunks


def _scope(
    path: str, headers: list[tuple[bytes, bytes]], **extra: Any
) -> dict[str, Any]:
    return asgi_scope(path, headers, **extra)


_asgi_exchange = asgi_exchange


def _counted(middleware: Any) -> str:
    stats = middleware.stats()
    if stats["recorded"]:
        return "recorded"
    if stats["removed"]:
        return "removed"
    reasons = {**stats["skipped"], **stats["seen"]}
    assert len(reasons) == 1, stats
    return next(iter(reasons))


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
@pytest.mark.parametrize(
    ("request_headers", "status", "headers", "expected"),
    TABLE,
    ids=[f"{row[1]}-{row[3]}-{i}" for i, row in enumerate(TABLE)],
)
def test_the_watcher_decides_alike_on_both_stacks(
    stack: str,
    request_headers: dict[str, str],
    status: int,
    headers: list[tuple[str, str]],
    expected: str,
) -> None:
    store = open_store("memory://")
    if expected == "removed":
        from sitemap_middleware import Entry

        store.upsert([Entry("/page")])
    config = {**CONFIG, "store": store}
    body = [PAGE]
    if stack == "wsgi":

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            start_response(f"{status} X", list(headers))
            return body

        middleware: Any = SitemapMiddleware(app, config)
        assert _wsgi_exchange(middleware, "/page", request_headers) == body
    else:

        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            encoded = [(k.lower().encode(), v.encode()) for k, v in headers]
            await send(
                {"type": "http.response.start", "status": status, "headers": encoded}
            )
            await send({"type": "http.response.body", "body": PAGE})

        middleware = ASGISitemapMiddleware(asgi, config)
        fields = {"Host": "localhost", **request_headers}
        raw = [(k.lower().encode(), v.encode()) for k, v in fields.items()]
        sent = _asgi_exchange(middleware, _scope("/page", raw))
        assert sent[1]["body"] == PAGE
    assert middleware.flush()
    assert _counted(middleware) == expected
    if expected in ("recorded", "removed"):
        assert store.count() == (1 if expected == "recorded" else 0)
    middleware.close()


# -- WSGI: what the server gets is what the app gave ------------------------------


def test_one_shot_header_iterables_reach_the_server() -> None:
    """PEP 3333 asks for a list, but an app that passes a one-shot iterator must
    not have its headers eaten by the middleware."""
    seen: list[Any] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", iter([("Content-Type", "text/html"), ("X-A", "1")]))
        return [PAGE]

    middleware = SitemapMiddleware(app, CONFIG)
    environ = EnvironBuilder(path="/page", base_url="http://localhost").get_environ()
    result = middleware(environ, lambda s, h, e=None: seen.append(list(h)))
    assert list(result) == [PAGE]
    result.close()  # type: ignore[attr-defined]
    assert seen == [[("Content-Type", "text/html"), ("X-A", "1")]]
    assert middleware.flush() and middleware.store.count() == 1


def _wsgiref_output(app: Callable[..., Any]) -> bytes:
    environ = EnvironBuilder(path="/page", base_url="http://localhost").get_environ()
    out = io.BytesIO()
    handler = wsgiref.handlers.SimpleHandler(
        io.BytesIO(), out, io.StringIO(), environ, multithread=False
    )
    handler.run(app)
    return out.getvalue()


def test_a_one_item_list_body_keeps_its_content_length_under_wsgiref() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        return [PAGE]

    bare = _wsgiref_output(app)
    middleware = SitemapMiddleware(app, CONFIG)
    wrapped = _wsgiref_output(middleware)
    assert f"Content-Length: {len(PAGE)}".encode() in bare
    assert wrapped.split(b"\r\n\r\n", 1)[1] == bare.split(b"\r\n\r\n", 1)[1]
    assert f"Content-Length: {len(PAGE)}".encode() in wrapped
    assert middleware.flush() and middleware.store.count() == 1


def test_a_file_wrapper_body_is_handed_on_unwrapped() -> None:
    """The server may then send the file itself (sendfile); the page is counted
    as left alone, not recorded from a body nobody saw."""
    wrapper = wsgiref.util.FileWrapper

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/html")])
        return environ["wsgi.file_wrapper"](io.BytesIO(PAGE))

    middleware = SitemapMiddleware(app, CONFIG)
    environ = EnvironBuilder(path="/page", base_url="http://localhost").get_environ()
    environ["wsgi.file_wrapper"] = wrapper
    result = middleware(environ, lambda s, h, e=None: None)
    assert type(result) is wrapper
    assert b"".join(result) == PAGE
    assert middleware.flush()
    assert middleware.stats()["skipped"] == {"file_body": 1}
    assert middleware.store.count() == 0


def test_a_body_iterated_to_its_end_counts_without_close() -> None:
    """werkzeug's test client without .close(): the page was sent in full."""

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        yield PAGE[:20]
        yield PAGE[20:]

    middleware = SitemapMiddleware(app, CONFIG)
    response = Client(middleware).get("/page")
    assert response.get_data() == PAGE  # read, never closed
    assert middleware.flush() and middleware.store.count() == 1


def test_a_body_left_midway_records_nothing() -> None:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        yield PAGE[:20]
        yield PAGE[20:]

    middleware = SitemapMiddleware(app, CONFIG)
    environ = EnvironBuilder(path="/page", base_url="http://localhost").get_environ()
    result = middleware(environ, lambda s, h, e=None: None)
    next(iter(result))
    result.close()  # type: ignore[attr-defined]
    assert middleware.flush() and middleware.store.count() == 0
    assert middleware.stats()["skipped"] == {"incomplete": 1}


# -- ASGI ----------------------------------------------------------------------------


async def _page(scope: Any, receive: Any, send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/html")],
        }
    )
    await send({"type": "http.response.body", "body": PAGE})


@pytest.mark.parametrize(
    "lines",
    [
        [b"session=alice", b"theme=dark"],
        [b"theme=dark", b"session=alice"],
        [b"theme=dark", b"a=b; session=alice"],
    ],
)
def test_every_cookie_line_counts(lines: list[bytes]) -> None:
    """Two Cookie field lines: a session in either keeps the page out."""
    middleware = ASGISitemapMiddleware(_page, CONFIG)
    headers = [(b"host", b"localhost"), *((b"cookie", line) for line in lines)]
    _asgi_exchange(middleware, _scope("/page", headers))
    assert middleware.flush() and middleware.store.count() == 0
    assert middleware.stats()["skipped"] == {"session": 1}


def test_a_response_start_without_headers() -> None:
    """``headers`` is optional in ``http.response.start`` (ASGI spec): a page
    without them is simply not HTML, and robots.txt passes through."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200})
        await send({"type": "http.response.body", "body": b"User-agent: *\n"})

    middleware = ASGISitemapMiddleware(app, CONFIG)
    headers = [(b"host", b"localhost")]
    sent = _asgi_exchange(middleware, _scope("/page", headers))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    robots = _asgi_exchange(middleware, _scope("/robots.txt", headers))
    assert robots[0]["status"] == 200
    assert middleware.stats()["skipped"] == {"not_html": 1}


def test_a_root_path_is_a_whole_segment() -> None:
    """With root_path "/blog", "/blogroll" is not "/roll" below it."""
    middleware = ASGISitemapMiddleware(_page, CONFIG)
    headers = [(b"host", b"localhost")]
    _asgi_exchange(middleware, _scope("/blogroll", headers, root_path="/blog"))
    _asgi_exchange(middleware, _scope("/blog/post", headers, root_path="/blog"))
    assert middleware.flush()
    assert sorted(e.path for e in middleware.store.entries(1)) == ["/blogroll", "/post"]


# -- robots.txt and validators -------------------------------------------------------


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_a_robots_txt_in_an_unknown_charset_passes_unchanged(stack: str) -> None:
    """Never a 5xx for a robots.txt the app answered (RFC 9309 §2.3.1.4 reads a
    5xx as "disallow all")."""
    body = b"User-agent: *\nDisallow: /x\n"
    content_type = "text/plain; charset=utf8mb4"
    if stack == "wsgi":

        def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            start_response("200 OK", [("Content-Type", content_type)])
            return [body]

        response = Client(SitemapMiddleware(app, CONFIG)).get("/robots.txt")
        assert (response.status_code, response.get_data()) == (200, body)
    else:

        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", content_type.encode())],
                }
            )
            await send({"type": "http.response.body", "body": body})

        middleware = ASGISitemapMiddleware(asgi, CONFIG)
        sent = _asgi_exchange(
            middleware, _scope("/robots.txt", [(b"host", b"localhost")])
        )
        assert sent[0]["status"] == 200 and sent[1]["body"] == body


def test_validators_change_with_base_url() -> None:
    """A site moved from http to https on the same store: a client holding the
    old ETag must get the new body, not a 304."""
    from sitemap_middleware import Entry

    store = open_store("memory://")
    store.upsert([Entry("/a")])

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("404 Not Found", [])
        return [b""]

    old = Client(
        SitemapMiddleware(app, {"base_url": "http://example.com", "store": store})
    )
    new = Client(
        SitemapMiddleware(app, {"base_url": "https://example.com", "store": store})
    )
    for path in ("/sitemap.xml", "/sitemap-1.xml.gz"):
        etag = old.get(path).headers["ETag"]
        again = new.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 200
        assert again.headers["ETag"] != etag


def test_a_lazy_iterable_is_iterated_once() -> None:
    """An app that starts its response from its body's ``__iter__`` (a new
    iterator each time): the rest of a response not to record is passed on from
    the same iterator, never restarted."""

    class Lazy:
        def __init__(self, start_response: Any) -> None:
            self.start_response = start_response

        def __iter__(self) -> Any:
            self.start_response("200 OK", [("Content-Type", "application/json")])
            return iter([b"a", b"b", b"c"])

    def app(environ: dict[str, Any], start_response: Any) -> Lazy:
        return Lazy(start_response)

    middleware = SitemapMiddleware(app, CONFIG)
    environ = EnvironBuilder(path="/page", base_url="http://localhost").get_environ()
    result = middleware(environ, lambda s, h, e=None: None)
    assert list(result) == [b"a", b"b", b"c"]
    result.close()  # type: ignore[attr-defined]
    assert middleware.stats()["skipped"] == {"not_html": 1}
