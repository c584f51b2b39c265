"""The ASGI adapter: a pure ASGI middleware (no ``BaseHTTPMiddleware``) that wraps
``send`` to watch responses and answers the sitemap endpoints in a worker thread.
The route comes from the keys Starlette's router sets in the scope.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ._types import ASGIApp, Message, Receive, Scope, Send
from .config import Config
from .core import SitemapBase
from .observation import Draft
from .policy import RECORD, REMOVE
from .reasons import Seen
from .routes import Route
from .serving import OWN_PREFIXES, Response

T = TypeVar("T")

try:  # anyio (Starlette's runtime) also runs under trio
    from anyio.to_thread import run_sync as _to_thread
except ImportError:  # pragma: no cover - plain asyncio servers without anyio
    _to_thread = asyncio.to_thread  # type: ignore[assignment]


async def _blocking(func: Callable[..., T], *args: Any) -> T:
    """Run a blocking store call off the event loop."""
    return await _to_thread(func, *args)


class ASGISitemapMiddleware(SitemapBase):
    """Record an ASGI app's public pages and serve its sitemap.

    :param app: the ASGI application to wrap.
    :param config: the config dict (see the README), parsed once here.

    .. code-block:: python

        app.add_middleware(
            ASGISitemapMiddleware, config={"base_url": "https://www.example.com"}
        )
    """

    def __init__(self, app: ASGIApp, config: Mapping[str, Any] | Config) -> None:
        super().__init__(config)
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                send = self._flushing_on_shutdown(send)
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        method: str = scope["method"]
        if path.startswith(OWN_PREFIXES):
            if self.server.is_sitemap(path):
                headers = _headers(scope)
                serve = self.server.serve
                await _send(send, await _blocking(serve, method, path, headers.get))
                return
            if path == "/robots.txt" and method in ("GET", "HEAD"):
                await self._robots(scope, receive, send, method)
                return
        host = authorization = cookie = b""
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
            elif name == b"authorization":
                authorization = b"1"
            elif name == b"cookie":
                cookie = value
        reason = self.policy.request_skip(
            method,
            path,
            host.decode("latin-1"),
            bool(authorization),
            cookie.decode("latin-1"),
        )
        if reason is not None:
            self.recorder.count(reason)
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Watch(self, scope, path, root, send).send)

    def _find_route(
        self, state: Mapping[str, Any], root: str
    ) -> tuple[str, object] | None:
        # Starlette's router (and so FastAPI's) puts the route it matched and
        # its endpoint in the scope it passes down, which is this very dict.
        route = state.get("route")
        template = getattr(route, "path", None)
        # A Mount whose app is no router (static files, a WSGI app) stays the
        # route: its own path is no page template.
        if not isinstance(template, str) or hasattr(route, "routes"):
            return None
        # Mounts on the way add their matched prefix to root_path.
        mounted: str = state.get("root_path", "")
        if len(mounted) > len(root):
            template = mounted[len(root) :] + template
        return template, state.get("endpoint")

    def _flushing_on_shutdown(self, send: Send) -> Send:
        async def flushing_send(message: Message) -> None:
            if message["type"] in (
                "lifespan.shutdown.complete",
                "lifespan.shutdown.failed",
            ):
                await _blocking(self.flush)
            await send(message)

        return flushing_send

    async def _robots(
        self, scope: Scope, receive: Receive, send: Send, method: str
    ) -> None:
        # The app may serve its own robots.txt: ask it (as a GET, so that a HEAD
        # gets the same headers), then keep it, add our line, or generate one.
        messages: list[Message] = []

        async def capture(message: Message) -> None:
            messages.append(message)

        await self.app({**scope, "method": "GET"}, receive, capture)
        start = next(m for m in messages if m["type"] == "http.response.start")
        headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in start["headers"]
        ]
        body = b"".join(
            m.get("body", b"") for m in messages if m["type"] == "http.response.body"
        )
        response = self.server.robots(method, start["status"], headers, body)
        if response is not None:
            await _send(send, response)
            return
        await send(start)
        await send(
            {"type": "http.response.body", "body": b"" if method == "HEAD" else body}
        )


class _Watch:
    """One request's ``send`` wrapper: forwards every message unchanged and
    notes the decision and, for a page to record, the body as it passes."""

    __slots__ = ("middleware", "observation", "path", "root", "scope", "send_")

    def __init__(
        self,
        middleware: ASGISitemapMiddleware,
        scope: Scope,
        path: str,
        root: str,
        send: Send,
    ) -> None:
        self.middleware = middleware
        self.scope = scope
        self.path = path
        self.root = root  # root_path as the middleware saw it, before any Mount
        self.send_ = send
        self.observation: Draft | None = None  # while a page is being sent

    def _observe(self, key: str, query: str, route: Route) -> Draft:
        raw_path = self.scope.get("raw_path")
        # raw_path keeps "%2F" apart from "/"; it is absent on some servers and
        # includes the mount prefix when root_path is set.
        if raw_path and not self.root:
            wire = raw_path.partition(b"?")[0].decode("latin-1")
            return Draft(key, wire, query, True, route)
        latin = self.path.encode("utf-8").decode("latin-1")
        return Draft(key, latin, query, False, route)

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            middleware = self.middleware
            recorder = middleware.recorder
            action = middleware.policy.response_action(
                message["status"], message.get("headers", ())
            )
            if action in (RECORD, REMOVE):
                # The app has answered: its route and opt-out are known now.
                scope = self.scope
                query = scope.get("query_string", b"").decode("latin-1")
                action, key, route = middleware._judge(
                    action, scope, self.path, query, self.root
                )
                if action == RECORD:
                    observation = self.observation = self._observe(key, query, route)
                    # For the writer: the Link and Last-Modified headers.
                    observation.headers = message.get("headers", ())
                elif action == REMOVE:
                    recorder.submit(self._observe(key, query, route).finish(REMOVE))
                elif action == Seen.FRESH:
                    recorder.count(Seen.FRESH)
                else:
                    recorder.count(action)
            else:
                recorder.count(action)
        elif kind == "http.response.body" and self.observation is not None:
            observation = self.observation
            observation.see(message.get("body", b""))
            if not message.get("more_body", False):
                await self.send_(message)
                self.observation = None
                self.middleware.recorder.submit(observation.finish(RECORD))
                return
        await self.send_(message)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}


async def _send(send: Send, response: Response) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": response.status,
            "headers": [
                (k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers
            ],
        }
    )
    await send({"type": "http.response.body", "body": response.body})
