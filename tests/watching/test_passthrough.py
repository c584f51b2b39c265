"""The app's response passes through untouched: no buffering, no re-chunking,
close() called once, the same ASGI messages in the same order."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from support.helpers import asgi_exchange, asgi_scope

from sitemap_middleware import ASGISitemapMiddleware, SitemapMiddleware

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
