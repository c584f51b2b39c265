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
from .policy import RECORD, REMOVE
from .recorder import Observation
from .serving import Response


class SitemapMiddleware(SitemapBase):
    """Record a WSGI app's public pages and serve its sitemap.

    :param app: the WSGI application to wrap.
    :param config: the config dict (see the README), parsed once here.

    .. code-block:: python

        app.wsgi_app = SitemapMiddleware(
            app.wsgi_app, {"base_url": "https://www.example.com"}
        )
    """

    def __init__(self, app: WSGIApp, config: Mapping[str, Any] | Config) -> None:
        super().__init__(config)
        self.app = app

    def __call__(
        self, environ: Environ, start_response: StartResponse
    ) -> Iterable[bytes]:
        path: str = environ.get("PATH_INFO") or "/"
        method: str = environ["REQUEST_METHOD"]
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

        query: str = environ.get("QUERY_STRING", "")
        watch = _Watch(self, path, query)

        def watching_start_response(
            status: str, headers: ResponseHeaders, exc_info: Any = None
        ) -> Callable[[bytes], object]:
            watch.action = self.policy.response_action(int(status[:3]), headers)
            if exc_info is None:
                write = start_response(status, headers)
            else:
                write = start_response(status, headers, exc_info)
            return watch.write(write) if watch.action == RECORD else write

        body = self.app(environ, watching_start_response)
        action = watch.action
        if action is None or (action == RECORD and not watch.fresh()):
            return _Observed(body, watch)  # start_response not called yet, or a page
        watch.finish(complete=True)
        return body

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


class _Watch(Observation):
    """One request's view of its response: the decision and the body seen."""

    __slots__ = ("recorder",)

    def __init__(self, middleware: SitemapMiddleware, path: str, query: str) -> None:
        super().__init__(middleware._cache_key(path, query), path, query, raw=False)
        self.recorder = middleware.recorder

    def fresh(self) -> bool:
        """Whether this is a known page digested lately (then left alone)."""
        if self.recorder.is_fresh(self.key):
            self.action = "fresh"
            return True
        return False

    def write(self, write: Callable[[bytes], object]) -> Callable[[bytes], object]:
        def watching_write(chunk: bytes) -> object:
            self.see(chunk)
            return write(chunk)

        return watching_write

    def finish(self, complete: bool) -> None:
        action = self.action
        if action == RECORD and not complete:
            action = "incomplete"
        if action in (RECORD, REMOVE):
            self.recorder.submit(self, action)
        elif action == "fresh":
            self.recorder.count("fresh", "seen")
        else:
            self.recorder.count(action or "no_response")


class _Observed:
    """The app's iterable, passed through chunk by chunk while the body is noted.

    ``close()`` closes the app's iterable first (PEP 3333), then hands the
    observation over; a response cut short (client gone) is not recorded.
    """

    __slots__ = ("_body", "_complete", "_watch")

    def __init__(self, body: Iterable[bytes], watch: _Watch) -> None:
        self._body = body
        self._watch = watch
        self._complete = False

    def __iter__(self) -> Iterator[bytes]:
        watch = self._watch
        for chunk in self._body:
            if watch.action == RECORD:
                watch.see(chunk)
            yield chunk
        self._complete = True

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            watch = self._watch
            if watch.action == RECORD:
                watch.fresh()  # a lazily started response may be a known page
            watch.finish(self._complete)


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
