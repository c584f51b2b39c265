"""The app's response passes through untouched: no buffering, no re-chunking,
close() called once, the same ASGI messages in the same order."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from support.helpers import asgi_exchange, asgi_scope

from sitemap_middleware import ASGISitemapMiddleware, SitemapMiddleware
from sitemap_middleware.sitemaps import BODY_BUDGET

CONFIG = {"base_url": "http://localhost", "store": "memory://"}


class _Body:
    """A WSGI body that counts close() calls and hands out distinct chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = 0
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk

    def close(self) -> None:
        self.closed += 1


def _environ(path: str = "/page") -> dict[str, Any]:
    from werkzeug.test import EnvironBuilder

    return EnvironBuilder(path=path, base_url="http://localhost").get_environ()


@pytest.mark.parametrize("content_type", ["text/html", "application/json"])
def test_wsgi_chunks_flow_one_by_one(content_type: str) -> None:
    """Each chunk is handed on before the next is asked for, as the same object."""
    chunks = [b"<html><body>", b"middle", b"</body></html>"]
    body = _Body(chunks)

    def app(environ: dict[str, Any], start_response: Any) -> _Body:
        start_response("200 OK", [("Content-Type", content_type)])
        return body

    middleware = SitemapMiddleware(app, CONFIG)
    result = middleware(_environ(), lambda status, headers, exc_info=None: None)
    iterator = iter(result)
    for index, chunk in enumerate(chunks):
        got = next(iterator)
        assert got is chunk
        assert body.sent == index + 1
    assert list(iterator) == []
    result.close()  # type: ignore[attr-defined]
    assert body.closed == 1
    if content_type == "application/json":
        assert result is body  # not a candidate: the iterable is not even wrapped
    middleware.flush()
    assert middleware.store.count() == (1 if content_type == "text/html" else 0)


def test_wsgi_close_once_when_client_leaves_early() -> None:
    """A client gone mid-body: close() is called once and nothing is recorded."""
    body = _Body([b"<html>", b"<body>", b"</body></html>"])

    def app(environ: dict[str, Any], start_response: Any) -> _Body:
        start_response("200 OK", [("Content-Type", "text/html")])
        return body

    middleware = SitemapMiddleware(app, CONFIG)
    result = middleware(_environ(), lambda *args: None)
    next(iter(result))
    result.close()  # type: ignore[attr-defined]
    assert body.closed == 1
    middleware.flush()
    assert middleware.store.count() == 0
    assert middleware.stats()["skipped"]["incomplete"] == 1


def test_wsgi_lazy_start_response_and_write() -> None:
    """Apps that call start_response late, or use write(), are still watched."""

    def lazy(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        write = start_response("200 OK", [("Content-Type", "text/html")])
        write(b"<html>")
        yield b"<body>late</body></html>"

    middleware = SitemapMiddleware(lazy, CONFIG)
    written: list[bytes] = []
    result = middleware(_environ(), lambda *args: written.append)
    assert list(result) == [b"<body>late</body></html>"]
    assert written == [b"<html>"]
    result.close()  # type: ignore[attr-defined]
    middleware.flush()
    assert [e.path for e in middleware.store.entries(1)] == ["/page"]


def test_wsgi_app_error_propagates() -> None:
    """An exception in the app reaches the server unchanged."""

    def broken(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        raise RuntimeError("boom")

    middleware = SitemapMiddleware(broken, CONFIG)
    with pytest.raises(RuntimeError, match="boom"):
        middleware(_environ(), lambda *args: None)


def _asgi_run(app: Any, path: str = "/page") -> list[dict[str, Any]]:
    return asgi_exchange(app, asgi_scope(path))


@pytest.mark.parametrize("content_type", [b"text/html", b"text/event-stream"])
def test_asgi_messages_unchanged(content_type: bytes) -> None:
    """The wrapped app sends exactly the messages the bare app sends."""
    messages = [
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", content_type)],
        },
        {"type": "http.response.body", "body": b"<html>", "more_body": True},
        {"type": "http.response.body", "body": b"<body>x</body>", "more_body": True},
        {"type": "http.response.body", "body": b"</html>", "more_body": False},
    ]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        for message in messages:
            await send(message)

    middleware = ASGISitemapMiddleware(app, CONFIG)
    bare = _asgi_run(app)
    wrapped = _asgi_run(middleware)
    assert wrapped == bare == messages
    assert all(a is b for a, b in zip(wrapped, messages, strict=True))
    middleware.flush()
    assert middleware.store.count() == (1 if content_type == b"text/html" else 0)


def test_asgi_non_http_scopes_pass_through() -> None:
    """Websocket scopes reach the app untouched, with the same receive/send."""
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((scope, receive, send))

    middleware = ASGISitemapMiddleware(app, CONFIG)

    async def receive() -> dict[str, Any]:
        return {}

    async def send(message: Any) -> None:
        pass

    scope = {"type": "websocket", "path": "/ws", "headers": []}
    asyncio.run(middleware(scope, receive, send))
    assert seen == [(scope, receive, send)]


def test_wsgi_list_body_keeps_its_length_and_counts_a_cut() -> None:
    """A list body: its length is the list's (a server may set Content-Length
    from it), the chunks are the app's own, and a body closed before it was
    read in full records nothing and counts as cut short."""
    chunks = [b"<html><body>", b"</body></html>"]

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        return list(chunks)

    middleware = SitemapMiddleware(app, CONFIG)
    result = middleware(_environ(), lambda *args: None)
    assert len(result) == 2  # type: ignore[arg-type]
    assert all(a is b for a, b in zip(result, chunks, strict=True))
    result.close()  # type: ignore[attr-defined]
    cut = middleware(_environ("/cut"), lambda *args: None)
    next(iter(cut))
    cut.close()  # type: ignore[attr-defined]
    unread = middleware(_environ("/unread"), lambda *args: None)
    unread.close()  # type: ignore[attr-defined]
    assert middleware.flush()
    assert [e.path for e in middleware.store.entries(1)] == ["/page"]
    assert middleware.stats()["skipped"]["incomplete"] == 2


def test_wsgi_write_before_a_list_body() -> None:
    """What an app writes through write() comes first: the page noted is the
    written chunks, then the list's."""

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        write = start_response("200 OK", [("Content-Type", "text/html")])
        write(b"<html><head><title>Written first</title></head>")
        return [b"<body>then the list</body></html>"]

    middleware = SitemapMiddleware(app, CONFIG)
    written: list[bytes] = []
    result = middleware(_environ(), lambda *args: written.append)
    assert list(result) == [b"<body>then the list</body></html>"]
    result.close()  # type: ignore[attr-defined]
    assert written == [b"<html><head><title>Written first</title></head>"]
    assert middleware.flush()
    [entry] = middleware.store.entries(1)
    assert entry.title == "Written first"


@pytest.mark.parametrize("size", [100, BODY_BUDGET - 1, BODY_BUDGET, BODY_BUDGET + 1])
def test_wsgi_list_body_noted_as_a_stream_of_it_is(size: int) -> None:
    """A list body is noted as the same chunks streamed one by one: up to the
    body budget (empty chunks aside: they add nothing)."""
    chunks = [b"<html>", b"", b"x" * size, b"y" * 1000, b"</html>"]
    noted = []
    for kind in (list, iter):

        def app(environ: dict[str, Any], start_response: Any, kind: Any = kind) -> Any:
            start_response("200 OK", [("Content-Type", "text/html")])
            return kind(chunks)

        middleware = SitemapMiddleware(app, CONFIG)
        seen: list[Any] = []
        middleware.watcher.put = seen.append  # type: ignore[method-assign]
        result = middleware(_environ(), lambda *args: None)
        assert b"".join(result) == b"".join(chunks)
        result.close()  # type: ignore[attr-defined]
        [page] = seen
        noted.append(([c for c in page.body if c], page.size))
    assert noted[0] == noted[1]
    body, size_noted = noted[0]
    assert size_noted == sum(map(len, body))
    assert (size_noted > BODY_BUDGET) is (size >= BODY_BUDGET - 6)


@pytest.mark.parametrize("body", ["list", "stream"])
def test_a_recorded_pages_request_is_freed_without_the_garbage_collector(
    body: str,
) -> None:
    """The request a page was recorded from holds no cycle: once the writer
    has read it, its environ goes as the last reference does, not at the
    collector's next pass (which, on a busy site, holds every page's body)."""
    import gc

    freed: list[bool] = []

    class Marker:
        def __del__(self) -> None:
            freed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        start_response("200 OK", [("Content-Type", "text/html")])
        chunks = [b"<html><head><title>t</title></head><body>hi</body></html>"]
        return chunks if body == "list" else iter(chunks)

    middleware = SitemapMiddleware(app, CONFIG)
    middleware(_environ("/warm"), lambda *args: None)  # the writer started
    middleware.flush()
    gc.collect()
    gc.disable()
    try:
        environ = _environ()
        environ["test.marker"] = Marker()
        result = middleware(environ, lambda *args: None)
        assert b"".join(result) and not freed
        result.close()  # type: ignore[attr-defined]
        del environ, result
        middleware.flush()
        assert middleware.store.count() == 1
        assert freed == [True]
    finally:
        gc.enable()
        middleware.close()


def test_an_asgi_pages_scope_is_freed_without_the_garbage_collector() -> None:
    """ASGI's recorded page holds no cycle either: once the writer has read
    it, the request's scope goes as the last reference does. The request is
    driven by hand (its awaits never suspend): no event loop keeps a frame."""
    import gc

    freed: list[bool] = []

    class Marker:
        def __del__(self) -> None:
            freed.append(True)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/html")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b"<html><head><title>t</title></head><body>hi</body></html>"
        await send({"type": "http.response.body", "body": body})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    def run(scope: dict[str, Any]) -> None:
        request = middleware(scope, receive, send)
        with pytest.raises(StopIteration):
            request.send(None)

    middleware = ASGISitemapMiddleware(app, CONFIG)
    run(asgi_scope("/warm"))  # the writer started
    middleware.flush()
    gc.collect()
    gc.disable()
    try:
        scope = asgi_scope("/page")
        scope["test.marker"] = Marker()
        run(scope)
        assert sent[-1]["type"] == "http.response.body" and not freed
        del scope
        middleware.flush()
        assert middleware.store.count() == 2
        assert freed == [True]
    finally:
        gc.enable()
        middleware.close()


def test_a_failing_route_finder_leaves_the_response_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bug in finding a new page's route, asked as its response starts
    (invariant 15): logged, the app's response passes whole, nothing is
    recorded."""
    page = b"<html><head><title>t</title></head><body>hi</body></html>"

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        return [page]

    def find_route(environ: Any) -> Any:
        raise RuntimeError("no route")

    middleware = SitemapMiddleware(app, CONFIG, find_route=find_route)
    statuses: list[str] = []
    result = middleware(
        _environ(), lambda status, headers, exc_info=None: statuses.append(status)
    )
    assert result == [page]  # nothing to note: the app's own list
    assert statuses == ["200 OK"]
    assert middleware.flush()
    assert middleware.store.count() == 0
    assert "sitemap watcher failed on '/page'" in caplog.text
    middleware.close()


def test_wsgi_error_after_the_headers_are_sent_removes_nothing() -> None:
    """A stream that fails mid-body, whose error handler starts a 404 with
    exc_info: the server re-raises (PEP 3333: the 200 is on the wire), and the
    client got a 200 cut short, no page saying it is gone. Recorded whole
    first, the page stays."""
    page = b"<html><head><title>Article</title></head><body>" + b"x" * 500
    failing = False

    def app(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        yield page[:60]
        try:
            if failing:
                raise LookupError("the comments vanished")
            yield page[60:]
        except LookupError:
            start_response(
                "404 Not Found", [("Content-Type", "text/html")], sys.exc_info()
            )
            yield b"not found"

    def server(environ: dict[str, Any]) -> bytes:
        sent: list[bytes] = []

        def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
            if exc_info is not None and sent:  # the headers went with a chunk
                raise exc_info[1].with_traceback(exc_info[2])

        result = middleware(environ, start_response)
        try:
            for chunk in result:
                sent.append(chunk)
        finally:
            result.close()  # type: ignore[attr-defined]
        return b"".join(sent)

    middleware = SitemapMiddleware(app, {**CONFIG, "recheck_interval": 0})
    try:
        assert server(_environ()) == page
        assert middleware.flush() and middleware.store.count() == 1
        failing = True
        with pytest.raises(LookupError):
            server(_environ())
        assert middleware.flush() and middleware.store.count() == 1
        assert middleware.stats()["removed"] == 0
    finally:
        middleware.close()


def test_wsgi_error_after_start_passes_exc_info_and_records_nothing() -> None:
    """An app that fails after starting a page calls start_response again with
    exc_info (PEP 3333): the server gets the same triple and the new status,
    and the page started first is not recorded."""
    error = b"<html><body>error</body></html>"

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        try:
            raise RuntimeError("the view failed")
        except RuntimeError:
            start_response(
                "500 Internal Server Error",
                [("Content-Type", "text/html")],
                sys.exc_info(),
            )
        return [error]

    calls: list[tuple[str, Any]] = []

    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        calls.append((status, exc_info))

    middleware = SitemapMiddleware(app, CONFIG)
    result = middleware(_environ(), start_response)
    assert b"".join(result) == error
    assert [status for status, _ in calls] == ["200 OK", "500 Internal Server Error"]
    assert calls[0][1] is None
    assert calls[1][1] is not None and isinstance(calls[1][1][1], RuntimeError)
    assert middleware.flush()
    assert middleware.store.count() == 0
    assert middleware.stats()["skipped"].get("status") == 1
    middleware.close()
