"""An ASGI page is handed over only once it was sent in full: its last body
message sent, no ``http.disconnect`` received before it, and the app returned
without raising. Starlette's ``BaseHTTPMiddleware`` (FastAPI's
``@app.middleware("http")``) inside ours ends a stream cut by a disconnect or an
error with a clean last message: that page is counted ``incomplete``, never
recorded. And ASGI headers given as a one-shot iterable reach the server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.helpers import asgi_exchange, asgi_scope, free_port

from sitemap_middleware import ASGISitemapMiddleware

CONFIG = {"base_url": "http://localhost", "store": "memory://", "crawlers": False}
HEAD = b"<!doctype html><html><head><title>Report</title>"
NOINDEX = b"<meta name=robots content=noindex></head><body><main>"
PLAIN = b"</head><body><main>"
REST = [b"<p>row %d</p>" % i for i in range(10)] + [b"</main></body></html>"]
CT = (b"content-type", b"text/html; charset=utf-8")


def _stacked(
    *, fail: bool = False, noindex: bool = False
) -> tuple[ASGISitemapMiddleware, Any]:
    """Ours around a real BaseHTTPMiddleware around a streaming page; the
    middleware and the app to serve."""
    from starlette.applications import Starlette
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def chunks() -> AsyncIterator[bytes]:
        yield HEAD
        await asyncio.sleep(0.05)
        yield NOINDEX if noindex else PLAIN
        for index, chunk in enumerate(REST):
            if fail and index == 3:
                raise RuntimeError("the database went away")
            await asyncio.sleep(0.002)
            yield chunk

    async def report(request: Any) -> StreamingResponse:
        return StreamingResponse(chunks(), media_type="text/html")

    class Timing(BaseHTTPMiddleware):
        async def dispatch(self, request: Any, call_next: Any) -> Any:
            response = await call_next(request)
            response.headers["X-Took"] = "1"
            return response

    inner = Timing(Starlette(routes=[Route("/report", report)]))
    middleware = ASGISitemapMiddleware(inner, CONFIG)
    return middleware, middleware


def _drive(app: Any, gone_after: float | None = None) -> list[dict[str, Any]]:
    """One GET of /report; the client hangs up after ``gone_after`` seconds
    (sends after that are no-ops, as uvicorn's under ASGI spec 2.3)."""
    sent: list[dict[str, Any]] = []
    asked = [False]
    gone = [False]

    async def receive() -> dict[str, Any]:
        if not asked[0]:
            asked[0] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        if gone_after is None:
            await asyncio.sleep(3600)
        await asyncio.sleep(gone_after)
        gone[0] = True
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if not gone[0]:
            sent.append(message)

    async def main() -> None:
        scope = asgi_scope("/report", asgi={"version": "3.0", "spec_version": "2.3"})
        try:
            await app(scope, receive, send)
        except Exception as exc:
            sent.append({"type": "raised", "exc": exc})

    asyncio.run(main())
    return sent


def _outcome(middleware: ASGISitemapMiddleware) -> tuple[int, int]:
    assert middleware.flush()
    stats = middleware.stats()
    return middleware.store.count(), stats["skipped"].get("incomplete", 0)


def test_a_full_stream_behind_base_http_middleware_is_recorded() -> None:
    middleware, app = _stacked()
    _drive(app)
    assert _outcome(middleware) == (1, 0)


@pytest.mark.parametrize("noindex", [False, True])
def test_a_client_gone_behind_base_http_middleware_records_nothing(
    noindex: bool,
) -> None:
    """The client reads the first chunk and leaves: the page it left before
    its noindex is no page to publish."""
    middleware, app = _stacked(noindex=noindex)
    _drive(app, gone_after=0.02)
    assert _outcome(middleware) == (0, 1)


def test_a_stream_raising_behind_base_http_middleware_records_nothing() -> None:
    middleware, app = _stacked(fail=True)
    sent = _drive(app)
    assert sent[-1]["type"] == "raised"
    assert _outcome(middleware) == (0, 1)


PAGE = b"<!doctype html><html><head><title>t</title></head><body>Hi</body></html>"


def test_an_error_after_the_last_message_records_nothing() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [CT]})
        await send({"type": "http.response.body", "body": PAGE})
        raise RuntimeError("after the body")

    middleware = ASGISitemapMiddleware(app, CONFIG)
    with pytest.raises(RuntimeError):
        asgi_exchange(middleware, asgi_scope("/page"))
    assert _outcome(middleware) == (0, 1)


def test_a_disconnect_after_the_last_message_keeps_the_page() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [CT]})
        await send({"type": "http.response.body", "body": PAGE})
        await receive()  # the client hangs up once it has the page

    middleware = ASGISitemapMiddleware(app, CONFIG)
    _drive_page = _drive(middleware, gone_after=0.0)
    assert [m["type"] for m in _drive_page][-1] == "http.response.body"
    assert _outcome(middleware) == (1, 0)


def test_headers_as_a_generator_reach_the_server() -> None:
    """The ASGI spec allows any iterable of headers: one read by the watcher
    is put back in the message as a list."""

    def headers() -> Any:
        yield CT
        yield (b"x-extra", b"1")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers()})
        await send({"type": "http.response.body", "body": PAGE})

    middleware = ASGISitemapMiddleware(app, CONFIG)
    sent = asgi_exchange(middleware, asgi_scope("/page"))
    assert list(sent[0]["headers"]) == [CT, (b"x-extra", b"1")]
    assert _outcome(middleware) == (1, 0)


def test_uvicorn_client_gone_behind_base_http_middleware_records_nothing() -> None:
    """A real uvicorn: a client reads the start of a noindex page and hangs up."""
    import uvicorn

    middleware, app = _stacked(noindex=True)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"GET /report HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert b"200 OK" in client.recv(1000)
        deadline = time.monotonic() + 5
        while not middleware.stats()["skipped"].get("incomplete"):
            assert time.monotonic() < deadline, middleware.stats()
            time.sleep(0.01)
    finally:
        server.should_exit = True
        thread.join(5)
    assert _outcome(middleware) == (0, 1)


class _Server:
    """A server's ``receive`` and ``send`` in one object, held weakly by the
    test: what a connection is to the app (uvicorn's is a cycle)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def test_a_page_waiting_for_the_writer_keeps_no_connection() -> None:
    """Handed over, a page lets go of the server's callables: a writer that
    lags keeps no connection alive, nor what it holds, until the garbage
    collector's full collections (which grow with it) would find them."""
    import weakref

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [CT]})
        await send(
            {"type": "http.response.body", "body": HEAD + PLAIN + b"".join(REST)}
        )

    middleware = ASGISitemapMiddleware(app, CONFIG)
    server = _Server()
    gone = weakref.ref(server)
    writer = middleware.recorder._writer
    with writer._lock:  # the writer takes nothing meanwhile
        asyncio.run(middleware(asgi_scope("/report"), server.receive, server.send))
        assert [m["type"] for m in server.sent][-1] == "http.response.body"
        del server
        assert gone() is None
        assert middleware.stats()["queued"] == 1
        # What a task of the app's that outlives the request gets.
        (watch,) = middleware.recorder._intake._queue
        assert asyncio.run(watch()) == {"type": "http.disconnect"}
        with pytest.raises(RuntimeError, match="after the response was complete"):
            asyncio.run(watch.send_watched({"type": "http.response.body"}))
    assert middleware.flush() and middleware.store.count() == 1
