"""The WSGI adapter: watches the wrapped app's responses and answers the
sitemap endpoints. Only responses that may be recorded get their iterable wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from http import HTTPStatus
from typing import Any

from ._types import Environ, ResponseHeaders, StartResponse, WSGIApp
from .config import Config
from .core import SitemapBase
from .observation import Draft
from .policy import RECORD, REMOVE, SKIPS
from .reasons import Seen
from .routes import OPTED_OUT, ROUTE_EXCLUDED, ROUTE_KEY
from .serving import OWN_PREFIXES, Response

RouteFinder = Callable[[Mapping[str, Any]], "tuple[str, object] | None"]
"""Finds the template and view of the route that served a request."""

# The reasons a response is left alone, once the app has answered.
_LEFT_ALONE = SKIPS | {OPTED_OUT, ROUTE_EXCLUDED}


class SitemapMiddleware(SitemapBase):
    """Record a WSGI app's public pages and serve its sitemap.

    :param app: the WSGI application to wrap.
    :param config: the config dict (see the README), parsed once here.
    :param find_route: called with the environ once the app has started a
        response that may be recorded or removed; returns the template and the
        view of the route that served it, or ``None``. The Flask extension
        passes one; the default reads a template the app may have put in
        ``environ["sitemap_middleware.route"]``.

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
        find_route: RouteFinder | None = None,
    ) -> None:
        super().__init__(config)
        self.app = app
        self.find_route = find_route or _environ_route

    def __call__(
        self, environ: Environ, start_response: StartResponse
    ) -> Iterable[bytes]:
        path: str = environ.get("PATH_INFO") or "/"
        method: str = environ["REQUEST_METHOD"]
        if path.startswith(OWN_PREFIXES):  # one C call for every other request
            if self.server.is_sitemap(path):
                header = _header_getter(environ)
                return _send(start_response, self.server.serve(method, path, header))
            if path == "/robots.txt" and method in ("GET", "HEAD"):
                return self._robots(environ, start_response, method)
        reason = self.policy.request_skip(
            method,
            path,
            environ.get("HTTP_HOST") or environ.get("SERVER_NAME", ""),
            "HTTP_AUTHORIZATION" in environ,
            environ.get("HTTP_COOKIE", ""),
        )
        if reason is not None:
            self.recorder.count(reason)
            return self.app(environ, start_response)

        # Per-request state lives in this closure; an Observation is built only
        # for a response that is recorded or removed.
        recorder = self.recorder
        decided: list[Any] = [None, None]  # the action, then the observation

        def watching_start_response(
            status: str, headers: ResponseHeaders, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            action = self.policy.response_action(int(status[:3]), headers)
            if action in (RECORD, REMOVE):
                # The app has answered: its route and opt-out are known now.
                query: str = environ.get("QUERY_STRING", "")
                action, key, route = self._judge(action, environ, path, query, "")
                if action in (RECORD, REMOVE):
                    observation = decided[1] = Draft(key, path, query, False, route)
                    observation.headers = headers  # for Link and Last-Modified
            decided[0] = action
            if exc_info is None:
                write = start_response(status, headers)
            else:
                write = start_response(status, headers, exc_info)
            if action != RECORD:
                return write
            observation = decided[1]

            def watching_write(chunk: bytes) -> object:
                observation.see(chunk)
                return write(chunk)

            return watching_write

        body = self.app(environ, watching_start_response)
        action = decided[0]
        if action is None or action == RECORD:
            # A page to record, or start_response not called yet.
            return _Observed(body, decided, self)
        # The common cases, settled in one call.
        if action == Seen.FRESH:
            recorder.count(Seen.FRESH)
        elif action in _LEFT_ALONE:
            recorder.count(action)
        else:
            self._settle(decided, complete=True)
        return body

    def _find_route(
        self, state: Mapping[str, Any], root: str
    ) -> tuple[str, object] | None:
        return self.find_route(state)

    def _settle(self, decided: list[Any], complete: bool) -> None:
        """Hand a finished response to the recorder, or count why not."""
        action, observation = decided
        recorder = self.recorder
        if action == RECORD and complete:
            recorder.submit(observation.finish(RECORD))
        elif action == REMOVE:
            recorder.submit(observation.finish(REMOVE))
        elif action == Seen.FRESH:
            recorder.count(Seen.FRESH)
        elif action == RECORD:
            recorder.count("incomplete")
        else:
            recorder.count(action or "no_response")

    def _robots(
        self, environ: Environ, start_response: StartResponse, method: str
    ) -> Iterable[bytes]:
        # The app may serve its own robots.txt: ask it (as a GET, so that a HEAD
        # gets the same headers), then keep it, add our line, or generate one.
        seen: list[Any] = []

        def capture(
            status: str, headers: ResponseHeaders, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            seen[:] = [status, headers]
            return chunks.append

        chunks: list[bytes] = []
        body = self.app({**environ, "REQUEST_METHOD": "GET"}, capture)
        try:
            chunks.extend(body)
        finally:
            if hasattr(body, "close"):
                body.close()
        status, headers = seen
        content = b"".join(chunks)
        response = self.server.robots(method, int(status[:3]), headers, content)
        if response is None:
            start_response(status, headers)
            return [b"" if method == "HEAD" else content]
        return _send(start_response, response)


class _Observed:
    """The app's iterable, passed through chunk by chunk while the body is noted.

    ``close()`` closes the app's iterable first (PEP 3333), then settles the
    response; a response cut short (client gone) is not recorded.
    """

    __slots__ = ("_body", "_complete", "_decided", "_middleware")

    def __init__(
        self, body: Iterable[bytes], decided: list[Any], middleware: SitemapMiddleware
    ) -> None:
        self._body = body
        self._decided = decided
        self._middleware = middleware
        self._complete = False

    def __iter__(self) -> Iterator[bytes]:
        decided = self._decided
        for chunk in self._body:
            # start_response has been called by now (PEP 3333): the decision
            # is known, and a page to record has its observation.
            if decided[0] == RECORD:
                decided[1].see(chunk)
            yield chunk
        self._complete = True

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._middleware._settle(self._decided, self._complete)


def _environ_route(environ: Mapping[str, Any]) -> tuple[str, object] | None:
    template = environ.get(ROUTE_KEY)
    return (template, None) if isinstance(template, str) else None


def _header_getter(environ: Environ) -> Callable[[str], str | None]:
    def header(name: str) -> str | None:
        value = environ.get("HTTP_" + name.upper().replace("-", "_"))
        return value if isinstance(value, str) else None

    return header


def _send(start_response: StartResponse, response: Response) -> list[bytes]:
    start_response(
        f"{response.status} {HTTPStatus(response.status).phrase}", response.headers
    )
    return [response.body]
