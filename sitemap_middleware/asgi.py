"""The ASGI adapter: a pure ASGI middleware (no ``BaseHTTPMiddleware``) that
translates the scope and ``send`` for the shared watcher, and answers the
middleware's own paths in a worker thread. The route comes from the keys
Starlette's router sets in the scope.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from time import time as _now  # a page stamped with no attribute looked up
from typing import Any, TypeVar

from ._types import ASGIApp, Message, Receive, Scope, Send
from .apps import STARLETTE
from .apps.frameworks import framework_of, refuse_second, table_of
from .config import Config, site_host
from .core import SitemapBase, logger
from .errors import ConfigError
from .reasons import RECORD, Skipped
from .recording.crawls import Crawl
from .serving.server import Response
from .sitemaps import BODY_BUDGET
from .watching.watcher import Found, Recording

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
    :raises ConfigError: for a bad config; a ``routes`` key in werkzeug's
        syntax (``/blog/<slug>``) among them. Starlette builds its middleware
        when the app starts: ``sitemap_middleware.starlette.add_sitemap``
        checks the config at once.

    The app's routes are read from ``scope["app"]`` (Starlette and FastAPI set
    it) at lifespan startup, where a ``routes`` key that names none of them is
    a ``ConfigError`` that fails the startup; without a lifespan, when the
    writer reads the first page's route, where it is one warning.

    .. code-block:: python

        app.add_middleware(
            ASGISitemapMiddleware, config={"base_url": "https://www.example.com"}
        )
    """

    def __init__(self, app: ASGIApp, config: Mapping[str, Any] | Config) -> None:
        refuse_second(app, ASGISitemapMiddleware)
        super().__init__(
            config, _locate, self._route, STARLETTE, _cookie, route_stays=True
        )
        self.app = app
        self.watcher.query_key = "query_string"
        self.watcher.header = _header
        self._looked = False
        # The route of a response, as the app's framework notes it in the
        # scope (Starlette's router, unless the app is another's).
        self._find: Callable[[Mapping[str, Any], str], Found] = _find_route
        # Crawls: User-Agent -> the engine it claims (b"": none), and the
        # trusted proxies' header.
        self._agents = self.agents.bytes
        self._last_agent: tuple[bytes, str] = (b"", "")  # one tuple: one store
        crawlers = self.config.crawlers
        header = "" if crawlers is None else crawlers.forwarded_header
        self._forwarded = header.encode("latin-1")
        self._each_site(lambda site: ASGISitemapMiddleware(app, site))

    def _route(self, scope: Mapping[str, Any], root: str) -> Found:
        if not self._looked:
            self._look(scope, final=False)
        return self._find(scope, root)

    def _look(self, scope: Mapping[str, Any], final: bool) -> None:
        """Read the app's route table, once: from ``scope["app"]``, or from
        the app this middleware wraps (the table of frameworks says which
        framework it is)."""
        self._looked = True
        app = scope.get("app") or self.app
        row, found = framework_of(app)
        if row.scope_finder is not None and found is not None:
            self._find = row.scope_finder(found)
        table = table_of(app)
        if table is not None:
            self._learn(table, final)
            for other in self._others:  # every site serves the same app
                if isinstance(other, ASGISitemapMiddleware):
                    other._looked = True
                    other._find = self._find
                    other._learn(table, final)
        elif self.config.routes:
            logger.warning(
                "the sitemap config has 'routes', but ASGISitemapMiddleware finds"
                " no routes in this app (no scope['app'] nor an app with"
                " 'routes' below it); the 'routes' options are ignored"
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                send = self._flushing_on_shutdown(send)
                receive = self._looking_on_startup(scope, receive, send)
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        try:  # a subscript costs less than a get() call; most servers set it
            root: str = scope["root_path"]
        except KeyError:
            root = ""
        if root and path.startswith(root):
            # "/blog" is the prefix of "/blog/x" and of "/blog", not of "/blogroll".
            rest = path[len(root) :]
            if not rest or rest[0] == "/":
                path = rest or "/"
        method: str = scope["method"]
        host = b""
        authorization = False
        cookie = b""
        agent = b""
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
            elif name == b"user-agent":
                agent = value
            elif name == b"authorization":
                authorization = True
            elif name == b"cookie":
                # Every field line counts: a server may pass several (RFC 9113
                # §8.2.3 splits them), and any one may carry the session.
                cookie = value if not cookie else cookie + b"; " + value
        if self._sites is not None:  # several sites: the Host selects one
            hosts = [value for name, value in scope["headers"] if name == b"host"]
            site = self._sites.get(site_host(host.decode("latin-1")))
            if len(hosts) > 1:
                # Which one the app reads is its own: recorded under none.
                host, site = b"", None
            if site is not None and site is not self:
                await site(scope, receive, send)
                return
        watcher = self.watcher
        # A bound method held in an attribute is called from a local: Python
        # 3.11 specializes that call, not a method call of the attribute.
        request_skip = watcher.request_skip
        reason = request_skip(
            method,
            path,
            host,  # looked up as sent: decoded only the first time
            authorization,
            cookie.decode("latin-1") if cookie else "",  # most requests: none
        )
        # The last User-Agent's claim, else one lookup of a User-Agent seen
        # before; a crawler's claim gets its response's start noted, whatever
        # answers it. A server hands over fresh bytes each request, which a
        # lookup hashes whole (about 500 instructions for a browser's): the
        # bytes compared with the last request's (a page's assets, a
        # crawler's run) cost a tenth of it.
        last = self._last_agent
        if agent == last[0]:
            engine = last[1]
        else:
            try:
                engine = self._agents[agent]
            except KeyError:
                engine = self.agents.claim_bytes(agent)
            self._last_agent = (agent, engine)
        if engine:
            send = self._crawled(scope, path, root, engine, send)
        if reason is not None:
            # The middleware's own paths are among these (the policy gives
            # them a reason, OWN_ENDPOINT if no other): routed here, they cost
            # the requests it watches nothing.
            if path.startswith(self._gate):
                if self._answers(path):
                    headers = _headers(scope)
                    serve = self.server.serve
                    query = scope.get("query_string", b"").decode("latin-1")
                    response = await _blocking(serve, method, path, headers.get, query)
                    await _send(send, response)
                    return
                if self._amends(path) and method in ("GET", "HEAD"):  # robots.txt
                    await self._robots(scope, receive, send, method)
                    return
            watcher.count(reason)
            await self.app(scope, receive, send)
            return
        # One slotted object per request, not a closure: its fields cost a
        # store each where a closure's cells cost an allocation each, and it
        # is built without an __init__ frame. It is the page's recording too:
        # a page costs no object more.
        watch = _Watch()
        watch._watcher = watcher
        watch.state = scope
        watch.key = path
        watch.root = root
        watch.send = send
        watch.receive = receive
        watch.noting = False
        watch.gone = False
        watch.done = None  # a page's: False while noted, True once sent in full
        app = self.app  # a local's call is specialized (above)
        try:
            await app(scope, watch, watch.send_watched)
        except BaseException:
            # Raised after its response started: a page, even one whose last
            # message was sent (a middleware inside ours may end a stream the
            # app's error cut with a clean one), is cut short.
            if watch.done is not None:
                watch.done = None
                watcher.count(Skipped.INCOMPLETE)
            raise
        # The app returned: a page sent in full is handed over (noting stops
        # at its last message: once); one cut short is counted.
        done = watch.done
        if done is not None:
            if done:
                # The server's callables stay behind: a page waiting for
                # the writer would keep its connection (uvicorn's is a
                # cycle), old enough by then for the garbage collector's
                # full collections alone to free. A task of the app's that
                # outlives it gets what a finished request gets.
                watch.send = _finished
                watch.receive = _disconnected
                put = watcher.put  # (as send)
                put(watch)
            else:
                watcher.count(Skipped.INCOMPLETE)

    def _crawled(
        self, scope: Scope, path: str, root: str, engine: str, send: Send
    ) -> Send:
        """``send`` that hands a crawl to the recorder as the response starts."""
        crawled = self.recorder.crawled
        wanted = self._forwarded
        # Every field line, in order, as one list (RFC 9110 §5.3).
        forwarded = b",".join(v for k, v in scope["headers"] if k == wanted)

        async def crawl_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                wire, query, raw = _locate(scope, path, root)
                client = scope.get("client")
                peer = str(client[0]) if client else ""
                crawl = Crawl(
                    engine,
                    peer,
                    forwarded.decode("latin-1"),
                    wire,
                    query,
                    raw,
                    int(message["status"]),
                    time.time(),
                )
                crawled(crawl)
            await send(message)

        return crawl_send

    def _flushing_on_shutdown(self, send: Send) -> Send:
        async def flushing_send(message: Message) -> None:
            if message["type"] in (
                "lifespan.shutdown.complete",
                "lifespan.shutdown.failed",
            ):
                await _blocking(self.flush)
            await send(message)

        return flushing_send

    def _looking_on_startup(
        self, scope: Scope, receive: Receive, send: Send
    ) -> Receive:
        # The app's routes are final once the server starts it: a routes key
        # naming none of them fails the startup, as a config error does.
        async def looking_receive() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup" and not self._looked:
                try:
                    self._look(scope, final=True)
                except ConfigError as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    raise
            return message

        return looking_receive

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
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in start.get("headers") or ()
        ]
        body = b"".join(
            m.get("body", b"") for m in messages if m["type"] == "http.response.body"
        )
        response = self.server.robots_for(method, start["status"], headers, body)
        if response is not None:
            await _send(send, response)
            return
        await send(start)
        await send(
            {"type": "http.response.body", "body": b"" if method == "HEAD" else body}
        )


class _Watch(Recording):
    """One request on its way through the app, and the page it may record:
    :meth:`send_watched` is the ``send`` the app is given; it asks the
    watcher about the response the app starts and, for a page to record,
    notes the body as it passes (``noting``) until its last message is sent
    (``done``); called, it is the ``receive`` the app is given, and notes a
    disconnect (``gone``): no bound method made per request. The adapter
    hands the page over once the app returns. Its fields are set by the
    adapter."""

    __slots__ = ("gone", "noting", "receive", "root", "send")

    # Whether an http.disconnect was received (the app's receive is
    # this object): a page whose last message comes after it may have
    # been ended by a middleware that stopped the stream (Starlette's
    # BaseHTTPMiddleware sends a clean last message), so it is no page.
    gone: bool
    noting: bool
    receive: Receive
    root: str
    send: Send

    async def __call__(self) -> Message:
        """The app's ``receive``: the server's, a disconnect noted."""
        receive = self.receive  # a local's call is specialized, a slot's not
        message = await receive()
        if message["type"] == "http.disconnect":
            self.gone = True
        return message

    async def send_watched(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            watcher = self._watcher
            status = message["status"]
            headers = message.get("headers") or ()
            if type(headers) is not list and type(headers) is not tuple:
                # Any iterable, says the spec: one read here is read once,
                # and the server gets the list in its place.
                headers = message["headers"] = list(headers)
            action_of = watcher.action  # (as send)
            action = action_of(status, headers)
            if action == RECORD and watcher.route_stays:
                # A page, settled here as Watcher.started settles one: a
                # frame fewer on every page served (any other answer goes
                # there).
                if self.key not in watcher.recent or self.state.get("query_string"):
                    self.headers = headers
                    self.size = 0
                    self.done = False
                    self.body = []
                    self.noting = True
                else:
                    next(watcher.fresh)  # a known page: count(Seen.FRESH)
                    self.noting = False
            elif (
                watcher.started(
                    action, self.state, self.key, status, headers, self.root, self
                )
                is not None
            ):
                self.body = []
                self.noting = True
            else:
                self.noting = False
        elif kind == "http.response.body" and self.noting:
            # note() and end(True), inlined: two frames fewer on every page.
            chunk = message.get("body", b"")
            if chunk and self.size < BODY_BUDGET:
                self.body.append(chunk)
                self.size += len(chunk)
            if not message.get("more_body", False):
                send = self.send  # a local's call is specialized, a slot's not
                await send(message)
                # Sent: a client gone mid-body raised above instead, or was
                # received before (gone). The page is handed over once the
                # app returns (ASGISitemapMiddleware.__call__), unless it
                # raises first; noting stops here.
                self.noting = False
                if not self.gone:
                    self.done = True
                    self.seen = _now()
                return
        send = self.send  # (above)
        await send(message)


async def _disconnected() -> Message:
    """``receive`` once the request is over: the client is gone (the ASGI
    spec's answer for a closed connection)."""
    return {"type": "http.disconnect"}


async def _finished(message: Message) -> None:
    """``send`` once the response is over: nothing more can be sent."""
    raise RuntimeError(f"{message.get('type')!r} sent after the response was complete")


def _locate(scope: Mapping[str, Any], path: str, root: str) -> tuple[str, str, bool]:
    query = scope.get("query_string", b"").decode("latin-1")
    raw_path = scope.get("raw_path")
    # raw_path keeps "%2F" apart from "/"; it is absent on some servers and
    # includes the mount prefix when root_path is set.
    if raw_path and not root:
        return raw_path.partition(b"?")[0].decode("latin-1"), query, True
    return path.encode("utf-8").decode("latin-1"), query, False


def _cookie(scope: Mapping[str, Any]) -> str:
    # Every field line, as the request's own check reads them.
    lines = [value for name, value in scope["headers"] if name == b"cookie"]
    return b"; ".join(lines).decode("latin-1")


def _header(scope: Mapping[str, Any], name: str) -> bool:
    # Whether any field line names it (servers give lower-case names).
    wanted = name.encode("latin-1")
    return any(key == wanted for key, _ in scope["headers"])


def _find_route(scope: Mapping[str, Any], root: str) -> Found:
    # Starlette's router (and so FastAPI's) puts the route it matched and its
    # endpoint in the scope it passes down, which is this very dict.
    route = scope.get("route")
    if hasattr(route, "routes"):
        # A Mount whose app is no router (static files, a WSGI app) stays the
        # route: its own path is no page template, its app is the view.
        return None, scope.get("endpoint")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        # FastAPI names only the endpoint of a route of its own (its docs).
        endpoint = scope.get("endpoint")
        return None if endpoint is None else (None, endpoint)
    # Mounts on the way add their matched prefix to root_path.
    mounted: str = scope.get("root_path", "")
    if len(mounted) > len(root):
        template = mounted[len(root) :] + template
    return template, scope.get("endpoint")


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
