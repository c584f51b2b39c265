"""The WSGI adapter: translates environ, ``start_response`` and the body iterable for
the shared watcher, and answers the middleware's own paths. Only a response that
may be recorded gets its iterable wrapped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from http import HTTPStatus
from time import time as _now  # a page stamped with no attribute looked up
from typing import Any

from ._types import Environ, ResponseHeaders, StartResponse, WSGIApp
from .apps import WERKZEUG, EnvironFinder
from .apps.flask import flask_finder, flask_table
from .apps.frameworks import FLASK, framework_of, refuse_second
from .config import Config, site_host
from .core import SitemapBase, logger
from .reasons import RECORD, Skipped
from .recording.crawls import Crawl
from .routes import ROUTE_KEY
from .serving.server import Response
from .sitemaps import BODY_BUDGET
from .watching.watcher import Found, Recording, RouteFinder, environ_key


class SitemapMiddleware(SitemapBase):
    """Record a WSGI app's public pages and serve its sitemap.

    :param app: the WSGI application to wrap.
    :param config: the config dict (see the README), parsed once here.
    :param find_route: called with the environ once the app has started a
        response that may be recorded or removed; returns the template and the
        view of the route that served it, or ``None``. By default, when
        ``app`` is a Flask app, its bound ``wsgi_app`` or WSGI middleware
        around one (through ``.app``, as werkzeug's ``ProxyFix``), Flask's
        matched rule and view; otherwise a template the app may have put in
        ``environ["sitemap_middleware.route"]`` (and one warning if the config
        has ``routes`` but no response names its route).
    :raises ConfigError: for a bad config; a ``routes`` key in Starlette's
        syntax (``/blog/{slug}``) among them.

    .. code-block:: python

        app.wsgi_app = SitemapMiddleware(
            app.wsgi_app, {"base_url": "https://www.example.com"}
        )
    """

    def __init__(
        self,
        app: WSGIApp,
        config: Mapping[str, Any] | Config,
        *,
        find_route: EnvironFinder | None = None,
    ) -> None:
        refuse_second(app, SitemapMiddleware)
        self.app = app
        self._named = False
        row, found = framework_of(app)
        flask = found if row is FLASK else None
        super().__init__(
            config,
            _locate,
            self._finder(flask if find_route is None else None, find_route),
            WERKZEUG,
            _cookie,
            own_folder=None if flask is None else flask.instance_path,
            # The template an app puts in the environ stays there; Flask's
            # request leaves it with the response, and a finder of one's own
            # may read what the request alone holds.
            route_stays=flask is None and find_route is None,
        )
        # Crawls: User-Agent -> the engine it claims ("": none), and the
        # environ key of the trusted proxies' header.
        self._agents = self.agents.str
        crawlers = self.config.crawlers
        header = "" if crawlers is None else crawlers.forwarded_header
        self._forwarded = environ_key(header)
        self._each_site(
            lambda site: SitemapMiddleware(app, site, find_route=find_route)
        )

    def __call__(
        self, environ: Environ, start_response: StartResponse
    ) -> Iterable[bytes]:
        if self._sites is not None:  # several sites: the Host selects one
            site = self._sites.get(
                site_host(environ.get("HTTP_HOST") or environ.get("SERVER_NAME", ""))
            )
            if site is not None and site is not self:
                return site(environ, start_response)  # type: ignore[no-any-return]
        # Subscripts, not get(): a method call costs more than the lookup, and
        # servers set both on nearly every request.
        try:
            path: str = environ["PATH_INFO"] or "/"
        except KeyError:
            path = "/"
        try:
            host: str = environ["HTTP_HOST"] or environ.get("SERVER_NAME", "")
        except KeyError:
            host = environ.get("SERVER_NAME", "")
        method: str = environ["REQUEST_METHOD"]
        watcher = self.watcher
        # A bound method held in an attribute is called from a local: Python
        # 3.11 specializes that call, not a method call of the attribute.
        request_skip = watcher.request_skip
        reason = request_skip(
            method,
            path,
            host,
            "HTTP_AUTHORIZATION" in environ,
            # Most requests carry none: a test costs less than a get() call.
            environ["HTTP_COOKIE"] if "HTTP_COOKIE" in environ else "",  # noqa: SIM401
        )
        # One lookup of a User-Agent seen before (a request without one
        # raises too); a crawler's claim gets its response's start noted,
        # whatever answers it.
        try:
            engine = self._agents[environ["HTTP_USER_AGENT"]]
        except KeyError:
            engine = self.agents.claim(environ.get("HTTP_USER_AGENT", ""))
        if engine:
            start_response = self._crawled(environ, path, engine, start_response)
        if reason is not None:
            # The middleware's own paths are among these (the policy gives
            # them a reason, OWN_ENDPOINT if no other): routed here, they cost
            # the requests it watches nothing.
            if path.startswith(self._gate):
                if self._answers(path):
                    header = _header_getter(environ)
                    query = environ.get("QUERY_STRING", "")
                    response = self.server.serve(method, path, header, query)
                    return _send(start_response, response)
                if self._amends(path) and method in ("GET", "HEAD"):  # robots.txt
                    return self._robots(environ, start_response, method)
            watcher.count(reason)
            return self.app(environ, start_response)

        # One slotted object per request, not a closure: its fields cost a
        # store each where a closure's cells cost an allocation each, and it
        # is built without an __init__ frame. It is the page's recording too,
        # and for a list body the iterable the server gets: a page costs no
        # object more.
        watch = _Watch()
        watch.state = environ
        watch.key = path
        watch.send = start_response
        watch._watcher = watcher
        watch.done = None  # until the app starts its response
        app = self.app  # a local's call is specialized (above)
        body = app(environ, watch.start_response)
        done = watch.done
        if done:  # nothing to note
            return body
        kind = type(body)
        # A list or tuple (not a subclass, which may have a close()): never
        # the server's file wrapper. Started, nothing written: its chunks are
        # known, the body noted is the app's own list (a tuple's a list of the
        # same chunks), no chunk copied. A list is asked first: most are.
        if kind is list:
            if done is False and not watch.size:
                watch.body = body
                return watch
        elif kind is tuple:
            if done is False and not watch.size:
                watch.body = list(body)
                return watch
        elif kind is environ.get("wsgi.file_wrapper"):
            # Left unwrapped, so that the server may send the file itself.
            if done is False:
                watch.done = True
            watcher.count(Skipped.FILE_BODY)
            return body
        # Built without an __init__ frame, as _Watch is. The chunks noted go
        # to a list of the watch's own, made here (after those written
        # through write(), if any: theirs).
        if done is False:  # a page's body to note
            if not watch.size:
                watch.body = []
            noted = _Noted()
        else:  # an app that starts its response lazily: its recording later
            watch.body = []
            noted = _ObservedList() if isinstance(body, (list, tuple)) else _Observed()
        noted._body = body
        noted._watch = watch
        return noted

    def _crawled(
        self, environ: Environ, path: str, engine: str, start_response: StartResponse
    ) -> StartResponse:
        """``start_response`` that hands a crawl to the recorder as the
        response starts."""
        crawled = self.recorder.crawled
        forwarded = environ.get(self._forwarded, "")

        def crawl_start_response(
            status: str, headers: ResponseHeaders, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            wire, query, raw = _locate(environ, path, "")
            peer = environ.get("REMOTE_ADDR", "")
            if status[:3].isdigit():  # else the server refuses it anyway
                code = int(status[:3])
                crawled(
                    Crawl(engine, peer, forwarded, wire, query, raw, code, time.time())
                )
            if exc_info is None:
                return start_response(status, headers)
            return start_response(status, headers, exc_info)

        return crawl_start_response

    def _finder(self, flask: Any, find_route: EnvironFinder | None) -> RouteFinder:
        # WSGI has no mount prefix of its own: the root is always "".
        if find_route is not None:
            return lambda environ, root: find_route(environ)
        if flask is None:
            return self._named_route
        find = flask_finder(flask)

        def find_flask_route(environ: Mapping[str, Any], root: str) -> Found:
            if self._table is None:  # Flask's url_map is final once it serves
                self._learn(flask_table(flask), final=False)
            return find(environ)

        return find_flask_route

    def _named_route(self, environ: Mapping[str, Any], root: str = "") -> Found:
        template = environ.get(ROUTE_KEY)
        if isinstance(template, str):
            self._named = True
            return template, None
        if not self._named and self.config.routes:
            self._named = True  # warned once
            logger.warning(
                "the sitemap config has 'routes', but SitemapMiddleware cannot see"
                " this app's routes: it is not a Flask app (nor wraps one through"
                " '.app' or a bound 'wsgi_app') and sets no"
                " environ[%r]; the 'routes' options and @sitemap are ignored",
                ROUTE_KEY,
            )
        return None

    def _robots(
        self, environ: Environ, start_response: StartResponse, method: str
    ) -> Iterable[bytes]:
        # The app may serve its own robots.txt: ask it (as a GET, so that a HEAD
        # gets the same headers), then keep it, add our line, or generate one.
        seen: list[Any] = []
        chunks: list[bytes] = []

        def capture(
            status: str, headers: ResponseHeaders, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            seen[:] = [status, list(headers)]
            return chunks.append

        body = self.app({**environ, "REQUEST_METHOD": "GET"}, capture)
        try:
            chunks.extend(body)
        finally:
            if hasattr(body, "close"):
                body.close()
        status, headers = seen
        content = b"".join(chunks)
        response = self.server.robots_for(method, int(status[:3]), headers, content)
        if response is None:
            start_response(status, headers)
            return [b"" if method == "HEAD" else content]
        return _send(start_response, response)


class _Watch(Recording):
    """One request on its way through the app, and the page it may record:
    :meth:`start_response` is what the app is given; it asks the watcher
    about the response the app starts and keeps the answer in ``done``:
    ``None`` until then, then ``False`` while a page's body is noted (the
    watcher sets it) and ``True`` once nothing (more) is to be noted; one
    field, not one more, for the garbage collector walks each field of
    every page queued. Its fields are set by the adapter.

    For a list or tuple body it is also the iterable the server gets: the
    page counts as sent once the body is exhausted; ``close()`` settles a
    response cut short; its length is the body's (a server may set
    Content-Length from a one-item list: wsgiref does). As ``write`` (PEP
    3333's legacy path), a chunk is noted, then written.
    """

    __slots__ = ("send", "write")

    # No root: WSGI has no mount prefix of its own (Recording.root).
    send: StartResponse
    # For a page recorded: the server's write.
    write: Callable[[bytes], object]

    def start_response(
        self, status: str, headers: ResponseHeaders, exc_info: Any = None
    ) -> Callable[[bytes], object]:
        if type(headers) is not list:  # a one-shot iterable is read once
            headers = list(headers)
        try:  # a subscript costs less than a get() call
            code = _CODES[status]
        except KeyError:
            code = _code(status)
        if exc_info is not None:
            return self._restart(status, headers, code, exc_info)
        watcher = self._watcher
        # Locals' calls are specialized, an attribute's or a slot's not.
        action_of = watcher.action
        action = action_of(code, headers)
        send = self.send
        # What the response is to record is set before the server is told,
        # which may raise.
        if action == RECORD and watcher.route_stays:
            # A page, settled here as Watcher.started settles one: a frame
            # fewer on every page served (any other answer goes there).
            if self.key not in watcher.recent or self.state.get("QUERY_STRING"):
                self.headers = headers
                self.size = 0
                self.done = False
                self.write = send(status, headers)
                return self  # noting, then writing: no bound method made per page
            next(watcher.fresh)  # a known page: count(Seen.FRESH), without a call
        elif (
            watcher.started(action, self.state, self.key, code, headers, "", self)
            is not None  # self, whose len() is its body's
        ):
            self.write = send(status, headers)
            return self
        self.done = True
        return send(status, headers)

    def _restart(
        self, status: str, headers: ResponseHeaders, code: int, exc_info: Any
    ) -> Callable[[bytes], object]:
        """PEP 3333's ``exc_info``: the server is told first, for it re-raises
        once the headers are sent, and then the response sent stands, cut
        short (nothing of it recorded, nothing removed); else this response
        takes the place of the one started, and is asked of the watcher."""
        write = self.send(status, headers, exc_info)
        if self._watcher.start(self.state, self.key, code, headers, "", self) is None:
            self.done = True
            return write
        self.write = write
        return self

    def __call__(self, chunk: bytes) -> object:
        if not self.size:  # nothing noted yet: the list of what is written
            self.body = []
        self.note(chunk)
        return self.write(chunk)

    def __iter__(self) -> Iterator[bytes]:
        # The body is the app's list, noted whole: its chunks are only
        # passed on and counted (a generator of its own: a frame fewer).
        chunks = self.body
        size = 0
        for chunk in chunks:
            size += len(chunk)
            yield chunk
        self.size = size
        if size > BODY_BUDGET:  # a large page: what note() would keep
            self.body = []
            self.size = 0
            for chunk in chunks:
                self.note(chunk)
        # end(True), inlined: a frame fewer on every page.
        if not self.done:
            self.done = True
            self.seen = _now()
            put = self._watcher.put  # a local's call is specialized (above)
            put(self)

    def close(self) -> None:
        # A list has no close() to call.
        if not self.done:  # sent in full: nothing to settle
            self.end(False)

    def __len__(self) -> int:
        return len(self.body)


class _Noted:
    """The app's iterable, passed through chunk by chunk while the body is
    noted, for a response already started (the recording known): the page
    counts as sent once the iterable is exhausted; ``close()`` closes the
    app's iterable first (PEP 3333), then settles a response cut short, or
    counts one the app never started.
    """

    __slots__ = ("_body", "_watch")

    # Set by the adapter, without an __init__ frame.
    _body: Iterable[bytes]
    _watch: _Watch

    def __iter__(self) -> Iterator[bytes]:
        return self._watch.through(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            watch = self._watch
            done = watch.done
            if done is False:  # not sent in full
                watch.end(False)
            elif done is None:
                watch._watcher.count(Skipped.NO_RESPONSE)


class _Observed(_Noted):
    """The same for a response the app had not started when it returned:
    ``watch.done`` is ``None`` until the app starts it, then ``False`` (a
    page to note) or ``True`` (nothing to note: the rest is passed on)."""

    __slots__ = ()

    def __iter__(self) -> Iterator[bytes]:
        watch = self._watch
        chunks = iter(self._body)  # one iterator: the rest may be passed on
        for chunk in chunks:
            # start_response has been called by now (PEP 3333).
            if watch.done is not False:
                yield chunk
                yield from chunks
                return
            watch.note(chunk)
            yield chunk
        if watch.done is False:
            watch.end(complete=True)


class _ObservedList(_Observed):
    """The same around a list or tuple body, whose length it keeps: a server may
    set Content-Length from a one-item list (wsgiref does)."""

    __slots__ = ()

    def __len__(self) -> int:
        return len(self._body)  # type: ignore[arg-type]


# Status lines seen, with their code (any middleware's: a status line means
# the same to all): int() of a string costs more than the rest of a
# passed-through request's status handling.
_CODES: dict[str, int] = {}


def _code(status: str) -> int:
    code = int(status[:3])
    if len(_CODES) < 64:  # apps use a handful of status lines
        _CODES[status] = code
    return code


def _locate(environ: Mapping[str, Any], path: str, root: str) -> tuple[str, str, bool]:
    # PATH_INFO is latin-1 over the raw bytes, already percent-decoded.
    return path, environ.get("QUERY_STRING", ""), False


def _cookie(environ: Mapping[str, Any]) -> str:
    return environ.get("HTTP_COOKIE", "")  # type: ignore[no-any-return]


def _header_getter(environ: Environ) -> Callable[[str], str | None]:
    def header(name: str) -> str | None:
        value = environ.get(environ_key(name))
        return value if isinstance(value, str) else None

    return header


def _send(start_response: StartResponse, response: Response) -> list[bytes]:
    start_response(
        f"{response.status} {HTTPStatus(response.status).phrase}", response.headers
    )
    return [response.body]
