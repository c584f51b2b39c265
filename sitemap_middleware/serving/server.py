"""Serving: the answers to ``/sitemap.xml``, ``/sitemap-N.xml.gz`` (and the text
sitemaps ``/sitemap-N.txt``), ``/robots.txt`` and the site map for people as
plain ``Response`` values, with validators and 304s.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from werkzeug.http import http_date, parse_options_header, quote_etag
from werkzeug.sansio.http import is_resource_modified

from .. import render
from ..config import Config
from ..errors import StoreError
from ..model import PartInfo
from ..stores.base import Store
from . import site_map

logger = logging.getLogger("sitemap_middleware")

XML = "application/xml; charset=utf-8"
# The part files are gzip themselves: no Content-Encoding, or clients would
# unpack them (invariant 11).
GZIP = "application/gzip"
TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"
ALLOW = "GET, HEAD"
# Rendered parts kept in memory, keyed by version.
CACHE_BYTES = 32 * 1024 * 1024
RETRY_AFTER = "120"
# Part numbers start at 1 with no leading zero; nine digits is far past the
# 50,000 parts an index may list, so longer numbers are 404 without a lookup.
_PART = re.compile(r"/sitemap-([1-9][0-9]{0,8})\.xml\.gz")
_TEXT_PART = re.compile(r"/sitemap-([1-9][0-9]{0,8})\.txt")
# The site map's pages, ?page=N: the same spelling rule as the parts.
_PAGE = re.compile(r"[1-9][0-9]{0,8}")
# The documents served: the index, a part (gzip XML), a part as text, a page
# of the site map for people.
INDEX, PART, TEXT_PART, SITE_MAP = "index", "part", "text", "html"
_TYPES = {INDEX: XML, PART: GZIP, TEXT_PART: TEXT, SITE_MAP: HTML}

Header = Callable[[str], "str | None"]
# Every path the middleware answers starts with one of these.
OWN_PREFIXES = ("/sitemap", "/robots.txt")


@dataclass(slots=True)
class Response:
    """A response of the middleware's own: status, headers, body."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def _text(status: int, message: str, **extra: str) -> Response:
    body = message.encode("utf-8")
    headers = [("Content-Type", TEXT), ("Content-Length", str(len(body)))]
    headers.extend((name.replace("_", "-"), value) for name, value in extra.items())
    return Response(status, headers, body)


# The body of the index's 404 while nothing is stored: where to look next.
EMPTY = (
    "No pages recorded yet.\n"
    "Every page skipped is counted by reason: stats() on the middleware gives"
    " this process's counts, site_stats() every worker's.\n"
    "When every page was skipped for one reason of the config, the"
    " 'sitemap_middleware' logger has a WARNING naming it and the setting to"
    " change.\n"
)


class Server:
    """Answers the sitemap endpoints of one configuration from one store."""

    def __init__(
        self,
        config: Config,
        store: Store,
        on_empty: Callable[[], object] | None = None,
    ) -> None:
        self._config = config
        self._store = store
        # Called when the index is asked of an empty store: the recorder's
        # hints, so that the log says why before anyone looks at stats().
        self._on_empty = on_empty
        self._cache_control = f"public, max-age={config.cache_max_age}"
        self._sitemap_url = f"{config.base_url}/sitemap.xml"
        self._gzip = (render.DEFLATE.__name__, config.gzip_level)
        self._texts = config.text_sitemap
        self._schema = config.schema_location
        self._site_map = config.html_sitemap
        # What every path the middleware answers starts with: the adapters
        # look no further for any other request.
        self.own_prefixes = OWN_PREFIXES + (
            () if config.html_sitemap is None else (config.html_sitemap,)
        )
        # The sections of the last store versions read, for every page of them.
        self._arranged: tuple[object, list[site_map.Section]] | None = None
        # version key -> body; bounded in bytes, least recently used out first.
        self._cache: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
        self._cache_bytes = 0
        self._cache_lock = threading.Lock()  # guards the dict
        self._render_lock = threading.Lock()  # one render at a time
        # The IndexNow key file ("" when off: no request path is empty).
        indexnow = config.indexnow
        self._key_path = "" if indexnow is None else indexnow.key_location
        self._key = b"" if indexnow is None else indexnow.key.encode("ascii")
        if indexnow is not None:
            self.own_prefixes += (self._key_path,)

    def serve(
        self, method: str, path: str, header: Header, query: str = ""
    ) -> Response:
        """Answer one of the sitemap paths (``is_sitemap``); ``query`` is the
        request's query string (the site map's ``page``)."""
        if method not in ("GET", "HEAD"):
            return _text(405, "Method Not Allowed\n", Allow=ALLOW)
        if path == self._key_path:
            return self._key_file(method)
        kind, number = INDEX, 0
        if path == self._site_map:
            kind, number = SITE_MAP, _page_number(query)
            if not number:
                return _text(404, "Not Found\n")
        elif path != "/sitemap.xml":
            kind, match = PART, _PART.fullmatch(path)
            if match is None and self._texts:
                kind, match = TEXT_PART, _TEXT_PART.fullmatch(path)
            if match is not None:
                number = int(match.group(1))
            elif not (self._texts and path == "/sitemap.txt"):
                return _text(404, "Not Found\n")
            # else /sitemap.txt: the text of the one part, number 0 here
        try:
            response = self._document(kind, number, header)
        except StoreError as exc:  # an outage: one line, no traceback
            logger.error("sitemap store error while serving %s: %s", path, exc)
            response = self._last_known(kind, number)
        except Exception:  # a bug: its traceback, and the app is still answered
            logger.exception("sitemap bug while serving %s", path)
            response = self._last_known(kind, number)
        if method == "HEAD":
            response.body = b""
        return response

    def is_sitemap(self, path: str) -> bool:
        """Whether ``path`` is one the middleware answers instead of the app."""
        return self._config.answers(path)

    def _key_file(self, method: str) -> Response:
        """The IndexNow key file: the key as its whole body, as text."""
        headers = [
            ("Content-Type", TEXT),
            ("Content-Length", str(len(self._key))),
            ("Cache-Control", self._cache_control),
        ]
        return Response(200, headers, b"" if method == "HEAD" else self._key)

    def _document(self, kind: str, number: int, header: Header) -> Response:
        if kind == SITE_MAP:
            parts = self._store.parts()
            if not parts:  # nothing yet: say so, and keep no copy of that
                return self._site_map_page(number, [], no_store=True)
            key: tuple[object, ...] = (kind, number, *(p.version for p in parts))
        elif kind == INDEX:
            parts = self._store.parts()
            if not parts:
                # An index must list at least one sitemap (siteindex.xsd), so
                # an empty store has no sitemap yet: 404, not to be cached.
                if self._on_empty is not None:
                    self._on_empty()
                return _text(404, EMPTY, Cache_Control="no-store")
            key = (kind, 0, *(p.version for p in parts))
        else:
            if not number:  # /sitemap.txt: there is one part, or none of it
                every = self._store.parts()
                if len(every) != 1:
                    return _text(404, "Not Found\n")
                part: PartInfo | None = every[0]
            else:
                part = self._store.part(number)
            if part is None:
                return _text(404, "Not Found\n")
            parts = [part]
            # Another deflate library or level gives other bytes: another ETag.
            extra = self._gzip if kind == PART else ()
            key = (kind, number, part.version, *extra)
            number = part.number
        # The locs are built from base_url: a moved site (http to https) on the
        # same store serves other bytes, so its validators must differ too.
        config = self._config
        looks = (config.html_sitemap_lang, config.html_sitemap_title, self._site_map)
        tag = repr((config.base_url, self._schema, looks, key)).encode()
        etag = quote_etag(hashlib.sha1(tag).hexdigest()[:20])
        changed = max(p.changed for p in parts)
        headers = [
            ("ETag", etag),
            ("Last-Modified", http_date(changed)),
            ("Cache-Control", self._cache_control),
            ("X-Robots-Tag", "noindex"),
        ]
        if kind == SITE_MAP:
            # A page for people: search engines may index it like any other.
            del headers[-1]
        if not is_resource_modified(
            http_if_none_match=header("if-none-match"),
            http_if_modified_since=header("if-modified-since"),
            etag=etag,
            last_modified=changed,
        ):
            return Response(304, headers)
        if kind == SITE_MAP:
            page = self._site_map_page(number, parts)
            if page.status != 200:
                return page
            body = page.body
        else:
            body = self._cached(key, lambda: self._render(kind, number, parts))
        headers[:0] = [
            ("Content-Type", _TYPES[kind]),
            ("Content-Length", str(len(body))),
        ]
        return Response(200, headers, body)

    def _render(self, kind: str, number: int, parts: list[PartInfo]) -> bytes:
        base_url = self._config.base_url
        if kind == INDEX:
            return render.sitemapindex(base_url, parts, self._schema).encode("utf-8")
        if kind == TEXT_PART:
            return render.text(base_url, (e.path for e in self._store.entries(number)))
        fragments = self._store.fragments(number)
        return render.urlset(
            base_url, fragments, self._config.gzip_level, schema=self._schema
        )

    def _site_map_page(
        self, page: int, parts: list[PartInfo], no_store: bool = False
    ) -> Response:
        versions = tuple(p.version for p in parts)
        arranged = self._arranged
        if arranged is None or arranged[0] != versions:
            # Every entry, in the sitemap's order: the page lists what it lists.
            entries = (e for p in parts for e in self._store.entries(p.number))
            sections = site_map.arrange(entries, self._config.base_url)
            self._arranged = arranged = (versions, sections)
        try:
            listing = site_map.paginate(arranged[1], page, site_map.PAGE_LINKS)
        except LookupError:
            return _text(404, "Not Found\n")
        config = self._config
        body = self._cached(
            (SITE_MAP, page, *versions),
            lambda: site_map.render(
                listing,
                path=config.base_url + (self._site_map or ""),
                lang=config.html_sitemap_lang,
                title=config.html_sitemap_title,
            ).encode("utf-8"),
        )
        if not no_store:
            return Response(200, [], body)
        headers = [
            ("Content-Type", HTML),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ]
        return Response(200, headers, body)

    def _cached(self, key: tuple[object, ...], build: Callable[[], bytes]) -> bytes:
        with self._cache_lock:
            body = self._cache.get(key)
        if body is not None:
            return body
        # Single flight: concurrent requests for a stale part render it once.
        with self._render_lock:
            with self._cache_lock:
                body = self._cache.get(key)
            if body is not None:
                return body
            body = build()
            with self._cache_lock:
                self._cache[key] = body
                self._cache_bytes += len(body)
                while self._cache_bytes > CACHE_BYTES and len(self._cache) > 1:
                    self._cache_bytes -= len(self._cache.popitem(last=False)[1])
        return body

    def _last_known(self, kind: str, number: int) -> Response:
        # Never an empty or truncated success (invariant 14): the last good
        # document, or 503 so that crawlers come back later.
        with self._cache_lock:
            known = next(
                (
                    body
                    for key, body in reversed(self._cache.items())
                    if key[:2] == (kind, number)
                ),
                None,
            )
        if known is None:
            return _text(
                503, "Sitemap temporarily unavailable.\n", Retry_After=RETRY_AFTER
            )
        return Response(
            200,
            [
                ("Content-Type", _TYPES[kind]),
                ("Content-Length", str(len(known))),
                ("Cache-Control", "no-cache"),
                ("X-Robots-Tag", "noindex"),
            ],
            known,
        )

    # -- robots.txt -----------------------------------------------------------

    def robots_for(
        self, method: str, status: int, headers: list[tuple[str, str]], body: bytes
    ) -> Response | None:
        """:meth:`robots`, or ``None`` (the app's answer, unchanged) if it fails:
        the middleware never turns a robots.txt into an error (invariant 13)."""
        try:
            return self.robots(method, status, headers, body)
        except Exception:
            logger.exception("robots.txt: the app's answer is passed on unchanged")
            return None

    def robots(
        self, method: str, status: int, headers: list[tuple[str, str]], body: bytes
    ) -> Response | None:
        """The robots.txt to send given the app's own answer, ``None`` to keep it.

        An app's 200 robots.txt is kept with a ``Sitemap:`` line added; a 404 or
        410 is replaced by a generated one (unless ``robots.generate`` is off);
        anything else, a 5xx included, stays the app's answer.
        """
        if status == 200:
            content_type = ""
            for name, value in headers:
                name = name.lower()
                if name == "content-type":
                    content_type = value
                elif name == "content-encoding" and value.lower() != "identity":
                    return None  # compressed by the app: leave it alone
            mime, options = parse_options_header(content_type)
            if mime != "text/plain":
                return None
            try:
                text = body.decode(options.get("charset", "utf-8"), errors="replace")
            except LookupError:  # a charset Python does not know: leave it alone
                return None
            updated = render.with_sitemap_line(text, self._sitemap_url)
            if updated is None:
                return None
            kept = [
                (name, value)
                for name, value in headers
                if name.lower() not in ("content-length", "content-type", "etag")
            ]
            return self._robots(method, updated, kept)
        if status in (404, 410) and self._config.robots_generate:
            text = render.robots_txt(self._config.robots_lines, self._sitemap_url)
            return self._robots(method, text, [("Cache-Control", self._cache_control)])
        return None

    def _robots(
        self, method: str, text: str, headers: list[tuple[str, str]]
    ) -> Response:
        body = text.encode("utf-8")
        headers = [
            ("Content-Type", TEXT),
            ("Content-Length", str(len(body))),
            *headers,
        ]
        return Response(200, headers, b"" if method == "HEAD" else body)


def _page_number(query: str) -> int:
    """The site map page a query asks for, 0 for none it can have."""
    pages = parse_qs(query, keep_blank_values=True).get("page")
    if pages is None:
        return 1
    if len(pages) != 1 or not _PAGE.fullmatch(pages[0]):
        return 0
    return int(pages[0])
