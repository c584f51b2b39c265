"""The Django middleware: translates Django's request and response for the shared
watcher (the response's body noted as it passes, a streaming one untouched but
for a generator around its chunks), and answers the middleware's own paths.
It runs sync or async, as the handler of the project's server calls it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, HttpResponseBase

from ..apps import DJANGO
from ..apps.django import django_table
from ..config import Config, site_host
from ..core import SitemapBase
from ..reasons import Skipped
from ..recording.crawls import Crawl
from ..serving.server import Response
from ..watching.watcher import Found, Recording, environ_key

# Where the response's route is noted in request.META for the watcher: the
# template and view of ``request.resolver_match``.
ROUTE = "sitemap_middleware.django.route"
LABEL = "sitemap_middleware"


class DjangoSitemap(SitemapBase):
    """What the middleware shares across requests and handlers: the config,
    store, writer, server and watcher (one per process, the app's)."""

    def __init__(self, config: Mapping[str, Any] | Config) -> None:
        if not isinstance(config, Config):
            # Django gives anonymous visitors its CSRF cookie: a page they see
            # with it is as public as without (the fingerprint ignores tokens).
            from django.conf import settings

            given = config.get("harmless_cookies", ())
            if isinstance(given, (list, tuple)):  # else the check says why not
                harmless = [*given, settings.CSRF_COOKIE_NAME]
                config = {**config, "harmless_cookies": harmless}
        super().__init__(config, _locate, _found, DJANGO, _cookie)
        self._each_site(DjangoSitemap)

    def for_host(self, meta: Mapping[str, Any]) -> DjangoSitemap:
        """The site of the request's ``Host`` (itself with one site)."""
        if self._sites is None:
            return self
        host = meta.get("HTTP_HOST") or meta.get("SERVER_NAME", "")
        site = self._sites.get(site_host(host))
        return self if site is None else site

    def learn(self) -> None:
        """The project's URL patterns, read once, when the app builds it: the
        URLconf is final by then (a handler loads its middleware, a request or
        a test asks for the sitemap)."""
        if self._table is None:
            table = django_table()
            self._learn(table, final=False)
            for other in self._others:
                other._learn(table, final=False)

    def skip_reason(self, request: HttpRequest) -> tuple[str | None, str]:
        """Why the request is not watched (``None``: it is), and the search
        engine whose crawler its User-Agent claims ("": none)."""
        meta = request.META
        reason = self.watcher.request_skip(
            request.method or "GET",
            request.path_info,
            meta.get("HTTP_HOST") or meta.get("SERVER_NAME", ""),
            "HTTP_AUTHORIZATION" in meta,
            meta.get("HTTP_COOKIE", ""),
        )
        agent = meta.get("HTTP_USER_AGENT", "")
        try:
            engine = self.agents.str[agent]
        except KeyError:
            engine = self.agents.claim(agent)
        return reason, engine

    def own(self, request: HttpRequest) -> Response | None:
        """The middleware's answer to one of its own paths, else ``None``."""
        path = request.path_info
        if not path.startswith(self.config.documents.gate):
            return None
        if not self.config.documents.answers(path):
            return None
        meta = request.META

        def header(name: str) -> str | None:
            value = meta.get(environ_key(name))
            return value if isinstance(value, str) else None

        query = meta.get("QUERY_STRING", "")
        return self.server.serve(request.method or "GET", path, header, query)

    def amends(self, request: HttpRequest) -> bool:
        """Whether the app's answer is the middleware's to amend (robots.txt)."""
        path = request.path_info
        return request.method in ("GET", "HEAD") and (
            path.startswith(self.config.documents.gate)
            and self.config.documents.amends(path)
        )

    def robots(self, request: HttpRequest, response: HttpResponseBase) -> Any:
        """The app's robots.txt, amended (or generated when it has none)."""
        if response.streaming:
            return response  # never read whole: passed on as it is
        amended = self.server.robots_for(
            request.method or "GET",
            response.status_code,
            headers(response),
            response.content,
        )
        return response if amended is None else _response(amended)

    def crawl(self, request: HttpRequest, code: int, engine: str) -> None:
        """A request claiming ``engine``'s crawler, answered ``code``."""
        meta = request.META
        wire, query, raw = _locate(meta, request.path_info, "")
        crawls = self.config.crawlers
        header = "" if crawls is None else crawls.forwarded_header
        forwarded = meta.get(environ_key(header), "")
        peer = meta.get("REMOTE_ADDR", "")
        self.recorder.crawled(
            Crawl(engine, peer, forwarded, wire, query, raw, code, time.time())
        )

    def watch(self, request: HttpRequest, response: HttpResponseBase) -> None:
        """Hand the response to the watcher: a page is noted as its body
        passes, and counts once sent in full."""
        meta = request.META
        path = request.path_info
        code = response.status_code
        match = request.resolver_match
        if match is not None:
            meta[ROUTE] = (match.route, match.func)
        recording = self.watcher.start(meta, path, code, headers(response))
        if recording is None:
            return
        if not response.streaming:
            recording.note(response.content)
            recording.end(True)
        elif getattr(response, "file_to_stream", None) is not None:
            # Left as it is, so that the server may send the file itself.
            recording.done = True
            self.watcher.count(Skipped.FILE_BODY)
        elif response.is_async:
            chunks = response.streaming_content
            response.streaming_content = _noted_async(chunks, recording)
        else:
            chunks = response.streaming_content
            response.streaming_content = _noted(chunks, recording)


class SitemapMiddleware:
    """Record the project's public pages and serve its sitemap: the first entry
    of ``MIDDLEWARE``, configured by ``settings.SITEMAP`` (the config dict of
    the other adapters), with ``sitemap_middleware.django`` in
    ``INSTALLED_APPS``. Sync or async, as the handler calls it.

    :raises ImproperlyConfigured: for a bad ``SITEMAP`` (naming the key), or
        the app missing from ``INSTALLED_APPS``; when the handler loads its
        middleware, at start-up.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        try:
            self._app = apps.get_app_config(LABEL)
        except LookupError:
            raise ImproperlyConfigured(
                "sitemap_middleware.django.SitemapMiddleware needs"
                " 'sitemap_middleware.django' in INSTALLED_APPS"
            ) from None
        self._app.sitemap()  # built at start-up: a bad SITEMAP fails it
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self._async:
            return self.__acall__(request)
        sitemap = self._app.sitemap().for_host(request.META)
        reason, engine = sitemap.skip_reason(request)
        if reason is None:
            response = self.get_response(request)
        else:
            own = sitemap.own(request)
            if own is not None:
                response = _response(own)
            elif sitemap.amends(request):
                response = sitemap.robots(request, self.get_response(request))
            else:
                sitemap.watcher.count(reason)
                response = self.get_response(request)
        return _after(sitemap, request, response, reason, engine)

    async def __acall__(self, request: HttpRequest) -> Any:
        sitemap = self._app.sitemap().for_host(request.META)
        reason, engine = sitemap.skip_reason(request)
        if reason is None:
            response = await self.get_response(request)
        else:
            # The store is read off the event loop.
            own = await sync_to_async(sitemap.own, thread_sensitive=False)(request)
            if own is not None:
                response = _response(own)
            elif sitemap.amends(request):
                answer = await self.get_response(request)
                response = sitemap.robots(request, answer)
            else:
                sitemap.watcher.count(reason)
                response = await self.get_response(request)
        return _after(sitemap, request, response, reason, engine)


def _after(
    sitemap: DjangoSitemap,
    request: HttpRequest,
    response: HttpResponseBase,
    reason: str | None,
    engine: str,
) -> HttpResponseBase:
    """The response, once its crawl is noted and, if watched, its page."""
    if engine:
        sitemap.crawl(request, response.status_code, engine)
    if reason is None:
        sitemap.watch(request, response)
    return response


def get_sitemap() -> DjangoSitemap:
    """The project's sitemap middleware (its shared part): ``flush()``,
    ``stats()``, ``store``, ``config``, as the other adapters'."""
    sitemap: DjangoSitemap = apps.get_app_config(LABEL).sitemap()
    return sitemap


def _noted(chunks: Iterator[bytes], recording: Recording) -> Iterator[bytes]:
    # Closed early (the client went away): the page is not recorded.
    try:
        yield from recording.through(chunks)
    finally:
        recording.end(False)  # nothing if sent in full


async def _noted_async(
    chunks: AsyncIterator[bytes], recording: Recording
) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            recording.note(chunk)
            yield chunk
        recording.end(True)
    finally:
        recording.end(False)


def headers(response: HttpResponseBase) -> list[tuple[str, str]]:
    """The response's header lines, its cookies' included (Django keeps them
    apart until the handler sends them)."""
    lines = list(response.items())
    lines.extend(
        ("Set-Cookie", cookie.OutputString()) for cookie in response.cookies.values()
    )
    return lines


def _response(own: Response) -> HttpResponse:
    response = HttpResponse(own.body, status=own.status)
    for name, value in own.headers:
        if name in response.headers and name.lower() != "content-type":
            value = f"{response.headers[name]}, {value}"
        response.headers[name] = value
    return response


def _locate(meta: Mapping[str, Any], path: str, root: str) -> tuple[str, str, bool]:
    # request.path_info is decoded: the wire form is its UTF-8, as the ASGI
    # adapter's without a raw path.
    return path.encode("utf-8").decode("latin-1"), meta.get("QUERY_STRING", ""), False


def _found(meta: Mapping[str, Any], root: str) -> Found:
    found: Found = meta.get(ROUTE)
    return found


def _cookie(meta: Mapping[str, Any]) -> str:
    return meta.get("HTTP_COOKIE", "")  # type: ignore[no-any-return]
