"""Serving: the answer to each document of the config's table (``paths``): the
index, the parts and their text, the site map for people, llms.txt, the
IndexNow key file, and the app's robots.txt amended, as plain ``Response``
values, with validators and 304s.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, partial
from typing import TYPE_CHECKING

from werkzeug.http import parse_options_header

from .. import paths, render
from ..config import Config
from ..errors import StoreError, StoreFault
from ..model import PartInfo, to_datetime
from ..paths import TEXT, Document
from ..sitemaps import MAX_NEWS, NEWS_WINDOW, escape
from ..stores.contract import News, Store, news_cutoff
from .ahead import ahead
from .bounded import Bounded
from .validators import Header, Validators, versions_of

if TYPE_CHECKING:
    from .arrangement import Map
    from .site_map import SiteMaps

logger = logging.getLogger("sitemap_middleware")

ALLOW = "GET, HEAD"
# Rendered documents kept in memory (the newest version of each), in bytes.
CACHE_BYTES = 32 * 1024 * 1024
RETRY_AFTER = "120"
# How long a request for a document waits for the store (a few round trips to
# a far one) before it is answered from the last good bytes, or 503.
SERVE_WAIT = 2.5
NOT_YET = "The sitemap is being written: try again shortly.\n"

# What answers a document: given it, its number and the request's header
# getter, the response (the body too for a HEAD: serve drops it).
Answer = Callable[[Document, int, Header], "Response"]


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


def _robots_tag(document: Document) -> list[tuple[str, str]]:
    """The robots header a document carries, live or from the last good bytes:
    a file for crawlers is no page to index; the site map page is one."""
    return [("X-Robots-Tag", "noindex")] if document.noindex else []


def _not_found() -> Response:
    return _text(404, "Not Found\n")


# The body of the index's 404 while nothing is stored: where to look next.
EMPTY = (
    "No pages recorded yet.\n"
    "Every page skipped is counted by reason: stats() on the middleware gives"
    " this process's counts, site_stats() every worker's.\n"
    "When every page was skipped for one reason of the config, the"
    " 'sitemap_middleware' logger has a WARNING naming it and the setting to"
    " change.\n"
)


# The body of the news sitemap's 404 while no article is recent: a urlset
# must hold a <url> (sitemap.xsd), and Google reads a news sitemap for the
# articles of the last two days only.
NO_NEWS = (
    "No news article of the last two days.\n"
    "The news sitemap lists the pages the 'news' key names that were published"
    " within two days (article:published_time, else JSON-LD datePublished;"
    " without either, when first recorded, once their section was watched for"
    " two days), titled, with a publication name and language (the key's, else"
    " og:site_name and <html lang>).\n"
)


# The body of a 503 while the store cannot be used until someone acts (a
# damaged file): the log says which and what to do.
UNUSABLE = (
    "Sitemap unavailable: its store needs attention; the server's log"
    " ('sitemap_middleware' logger, ERROR) says why and what to do.\n"
)


class Rendered:
    """The bodies served, by version key (a document's kind and number, then
    what its version is made of): only the newest of each document, since a
    request reads the store's current version before it asks for a body and
    an older one is never asked again but by a 304's validators; the least
    recently used documents go beyond ``limit`` bytes (the newest one kept
    whatever its size). Thread-safe."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        # (kind, number) -> (its version key, its body), least recently used first.
        self._newest: OrderedDict[tuple[object, ...], tuple[tuple[object, ...], bytes]]
        self._newest = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._newest)

    @property
    def size(self) -> int:
        """The bodies' bytes held."""
        return self._bytes

    def get(self, key: tuple[object, ...]) -> bytes | None:
        """The body of exactly this version, if held."""
        with self._lock:
            held = self._newest.get(key[:2])
            if held is None or held[0] != key:
                return None
            self._newest.move_to_end(key[:2])
            return held[1]

    def put(self, key: tuple[object, ...], body: bytes) -> None:
        """Hold ``body`` as its document's version, in place of any other."""
        with self._lock:
            newest = self._newest
            old = newest.pop(key[:2], None)
            if old is not None:
                self._bytes -= len(old[1])
            newest[key[:2]] = (key, body)
            self._bytes += len(body)
            while self._bytes > self._limit and len(newest) > 1:
                self._bytes -= len(newest.popitem(last=False)[1][1])

    def last(self, kind: str, number: int) -> bytes | None:
        """The last body held of a document, whatever its version."""
        with self._lock:
            held = self._newest.get((kind, number))
            return None if held is None else held[1]

    def clear(self) -> None:
        with self._lock:
            self._newest.clear()
            self._bytes = 0


def _site_maps(
    config: Config, store: Store, site_name: Callable[[], str | None] | None
) -> SiteMaps:
    """The site map page's arrangement, once per store version, shared by every
    thread (and by site_map() given the middleware): made when first asked
    for, so that an app that never serves the page never loads it. Two
    threads asking first may each make one; one is kept (a cache: both
    arrange the same pages)."""
    from .site_map import SiteMaps

    # Its title names the site: as the config says, else as the site's
    # titles repeat it (``site_name``, read once per arrangement).
    named = config.html_sitemap_site_name
    return SiteMaps(
        store,
        newest_first=config.html_sitemap_newest_first,
        site_name=site_name if named is None else (lambda: named),
        labels=config.section_labels,
    )


class Server:
    """Answers the sitemap endpoints of one configuration from one store."""

    def __init__(
        self,
        config: Config,
        store: Store,
        on_empty: Callable[[], object] | None = None,
        site_name: Callable[[], str | None] | None = None,
        clock: Callable[[], float] = time.time,
        wait: float | None = None,
        pending: Callable[[], bool] | None = None,
        ahead: bool = False,
    ) -> None:
        self._config = config
        # A part's next run read on a thread of its own while this one is
        # compressed (serving/ahead.py): for the middleware's requests, not
        # for export, whose reads must stay on its thread (a store's snapshot
        # is one connection that thread holds).
        self._ahead = ahead
        # A request waits ``wait`` seconds at most for its answer (None: as
        # long as the store takes, for a command's export).
        self._bounded = None if wait is None else Bounded(wait)
        # Whether this process holds pages not written yet: an empty store's
        # index is then not yet there (503), not missing (404).
        self._pending = pending
        self._store = store
        # What time it is to the news sitemap (tests move it): its articles
        # are those of the two days before.
        self.clock = clock
        self._news = store if isinstance(store, News) else None
        self._site_name = site_name
        # Called when the index is asked of an empty store: the recorder's
        # hints, so that the log says why before anyone looks at stats().
        self._on_empty = on_empty
        self._cache_control = f"public, max-age={config.cache_max_age}"
        self._sitemap_url = config.base_url + paths.INDEX.build()
        self._validators = Validators(config)
        self._schema = config.schema_location
        self._site_map = config.html_sitemap
        self._documents = config.documents
        # What answers each document the table serves alone, by its kind.
        # robots.txt has none: it is the app's answer, amended (robots_for).
        self._answers: dict[str, Answer] = {
            paths.INDEX.kind: self._index,
            paths.PART.kind: self._part,
            paths.TEXT_INDEX.kind: self._text_part,
            paths.TEXT_PART.kind: self._text_part,
            paths.SITE_MAP.kind: self._site_map_page,
            paths.KEY_FILE.kind: self._key_file,
            paths.NEWS.kind: self._news_sitemap,
            paths.LLMS.kind: self._llms_txt,
        }
        self._cache = Rendered(CACHE_BYTES)
        self._render_lock = threading.Lock()  # one render at a time
        # The faults said at ERROR (their words), each once.
        self._faults_said: set[str] = set()
        indexnow = config.indexnow
        self._key = b"" if indexnow is None else indexnow.key.encode("ascii")
        if config.html_sitemap is not None or config.llms_txt is not None:
            self.site_maps  # noqa: B018  (made now: the store keeps the map's order)

    @cached_property
    def site_maps(self) -> SiteMaps:
        """The site map page's arrangement (:func:`_site_maps`)."""
        return _site_maps(self._config, self._store, self._site_name)

    def serve(
        self, method: str, path: str, header: Header, query: str = ""
    ) -> Response:
        """Answer one of the documents of the config's table (a path it claims);
        ``query`` is the request's query string (the site map's ``page``)."""
        if method not in ("GET", "HEAD"):
            return _text(405, "Method Not Allowed\n", Allow=ALLOW)
        response = self._answer(path, header, query)
        if method == "HEAD":  # every answer's headers, a 404's too, no body
            response.body = b""
        return response

    def _answer(self, path: str, header: Header, query: str) -> Response:
        found = self._documents.match(path, query)
        if found is None:  # a number that is none, or none of the table's paths
            return _not_found()
        document, number = found
        answer = self._answers.get(document.kind)
        if answer is None:  # robots.txt: the app's answer, amended (robots_for)
            return _not_found()
        try:
            if self._bounded is None:
                response = answer(document, number, header)
            else:  # a slow store's request gets what was good before
                made = self._bounded.run(lambda: answer(document, number, header), path)
                response = made or self._last_known(document, number)
        except StoreFault as exc:  # lasts until someone acts: no copy is served
            self._faulted(path, exc)
            response = _text(
                503, UNUSABLE, Retry_After=RETRY_AFTER, Cache_Control="no-store"
            )
        except StoreError as exc:  # an outage: one line, no traceback
            logger.error("sitemap store error while serving %s: %s", path, exc)
            response = self._last_known(document, number)
        except Exception:  # a bug: its traceback, and the app is still answered
            logger.exception("sitemap bug while serving %s", path)
            response = self._last_known(document, number)
        return response

    def _faulted(self, path: str, exc: StoreFault) -> None:
        """Say a fault at ERROR once (its words name the store and what to
        do), its repeats at DEBUG: every document answers 503 while it lasts,
        and a crawler asking for each must not bury the reason."""
        words = str(exc)
        if words in self._faults_said:
            logger.debug("sitemap unavailable for %s: %s", path, words)
            return
        if len(self._faults_said) >= 100:
            self._faults_said.clear()
        self._faults_said.add(words)
        logger.error(
            "sitemap unavailable (503 for every sitemap document until the store"
            " is repaired; asked for %s): %s",
            path,
            words,
        )

    def _key_file(self, document: Document, number: int, header: Header) -> Response:
        """The IndexNow key file: the key as its whole body, as text."""
        headers = [
            ("Content-Type", document.media_type),
            ("Content-Length", str(len(self._key))),
            ("Cache-Control", self._cache_control),
        ]
        return Response(200, headers, self._key)

    def _index(self, document: Document, number: int, header: Header) -> Response:
        parts = self._store.parts()
        if not parts:
            # An index must list at least one sitemap (siteindex.xsd), so an
            # empty store has no sitemap yet.
            if self._on_empty is not None:
                self._on_empty()
            return self._empty()
        news = self._listed_news(parts)[1] if self._config.news else None
        key = (document.kind, 0, versions_of(parts), news)

        def build() -> bytes:
            index = render.sitemapindex(
                self._config.base_url, parts, self._schema, news
            )
            return index.encode("utf-8")

        return self._validated(
            document, key, parts, header, lambda: self._cached(key, build), news
        )

    def _news_sitemap(
        self, document: Document, number: int, header: Header
    ) -> Response:
        """The Google News sitemap: the articles of the last two days, at
        most 1,000, newest first; a 404 while there is none (the index lists
        it only while there is one)."""
        parts = self._store.parts()
        body, changed = self._listed_news(parts)
        if body is None or changed is None:
            return _text(404, NO_NEWS, Cache_Control="no-store")
        key = (document.kind, 0, hashlib.sha1(body).hexdigest())
        return self._validated(
            document,
            key,
            parts,
            header,
            lambda: self._cached(key, lambda: body),
            changed,
        )

    def _listed_news(
        self, parts: list[PartInfo]
    ) -> tuple[bytes | None, datetime | None]:
        """The news sitemap's body and when it changed (its newest article's
        publication, the last article's leaving the window, or a change of a
        part: a removal), ``(None, None)`` when no article of the two days
        before :attr:`clock` can be listed."""
        news = self._config.news
        if news is None or self._news is None or not parts:
            return None, None
        now = int(self.clock())
        # The articles kept, past the window too: newest first, the first one
        # past it is the last to have left (sitemaps.org: a sitemap's lastmod
        # is when the file changed). One read, as for the window alone.
        found = self._news.news(news_cutoff(now), MAX_NEWS)
        learned: list[str | None] = []  # the site's name its titles repeat, once

        def site_name() -> str:
            if not learned:
                learned.append(self._site_name() if self._site_name else None)
            return learned[0] or ""

        origin = escape(self._config.base_url)
        listed: list[str] = []
        latest = 0
        for path, published, title, language, name in found:
            if published > now:  # a clock moved back: not yet
                continue
            if published < now - NEWS_WINDOW:  # it left then; the rest before
                latest = max(latest, published + NEWS_WINDOW)
                break
            name = news.name or name or site_name()
            language = news.language or language
            try:
                url = render.news_url(path, published, title, language, name, origin)
            except ValueError:  # no name, language or title to list it under
                continue
            listed.append(url)
            latest = max(latest, published)
        if not listed:
            return None, None
        changed = max(to_datetime(latest), *(p.changed for p in parts))
        return render.news_urlset(listed, self._schema), changed

    def _part(self, document: Document, number: int, header: Header) -> Response:
        part = self._store.part(number)
        if part is None:
            return _not_found()
        key = (document.kind, number, part.version)

        def build() -> bytes:
            fragments = self._store.fragments(number)
            if self._ahead:
                fragments = ahead(fragments)
            level = self._config.gzip_level
            return render.urlset(
                self._config.base_url, fragments, level, schema=self._schema
            )

        return self._validated(
            document, key, [part], header, lambda: self._cached(key, build)
        )

    def _text_part(self, document: Document, number: int, header: Header) -> Response:
        if number:
            part = self._store.part(number)
        else:  # /sitemap.txt: there is one part, or none of it
            every = self._store.parts()
            part = every[0] if len(every) == 1 else None
        if part is None:
            return _not_found()
        key = (document.kind, number, versions_of([part]))
        entries = self._store.entries

        def build() -> bytes:
            listed = (e.path for e in entries(part.number))
            return render.text(self._config.base_url, listed)

        return self._validated(
            document, key, [part], header, lambda: self._cached(key, build)
        )

    def _site_map_page(self, document: Document, page: int, header: Header) -> Response:
        from .site_map import PAGE_LINKS

        arranged = self.site_maps.arrangement(self._store.parts())
        if page > arranged.pages(PAGE_LINKS):  # before the validators: never a 304
            return _not_found()
        # The versions the arrangement shows (the previous ones while another
        # thread arranges the newest): its validators say what it holds.
        parts = list(arranged.parts)
        key = (document.kind, page, arranged.site_name, arranged.versions)
        if not parts:  # nothing yet: say so, and keep no copy of that
            body = self._site_map_body(arranged, key, page)
            headers = [
                ("Content-Type", document.media_type),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
            ]
            return Response(200, headers, body)
        return self._validated(
            document,
            key,
            parts,
            header,
            lambda: self._site_map_body(arranged, key, page),
        )

    def _llms_txt(self, document: Document, number: int, header: Header) -> Response:
        """llms.txt: the site map's arrangement (the same pages, sections and
        order) as Markdown; while nothing is stored, as the index (:meth:`_empty`)."""
        arranged = self.site_maps.arrangement(self._store.parts())
        parts = list(arranged.parts)
        if not parts:
            return self._empty()
        key = (document.kind, 0, arranged.site_name, arranged.versions)
        from . import llms

        build = partial(llms.of, arranged, self._config)
        return self._validated(
            document, key, parts, header, lambda: self._cached(key, build)
        )

    def _empty(self) -> Response:
        """A document of an empty store, not to be cached: not there yet (503)
        while this process holds pages not written yet, else missing (404)."""
        if self._pending is not None and self._pending():
            return _text(
                503, NOT_YET, Retry_After=RETRY_AFTER, Cache_Control="no-store"
            )
        return _text(404, EMPTY, Cache_Control="no-store")

    def _validated(
        self,
        document: Document,
        key: tuple[object, ...],
        parts: list[PartInfo],
        header: Header,
        body: Callable[[], bytes],
        changed: datetime | None = None,
    ) -> Response:
        """The validators of version ``key`` of the document (``changed`` is
        its Last-Modified if later than its parts'), and a 304 when the
        request's match them; else its ``body``."""
        headers, unchanged = self._validators.check(key, parts, header, changed)
        headers.append(("Cache-Control", self._cache_control))
        headers += _robots_tag(document)
        if unchanged:
            return Response(304, headers)
        built = body()
        headers[:0] = [
            ("Content-Type", document.media_type),
            ("Content-Length", str(len(built))),
        ]
        return Response(200, headers, built)

    def _site_map_body(
        self, arranged: Map, key: tuple[object, ...], page: int
    ) -> bytes:
        """Page ``page`` of the site map, one it has."""
        from . import site_map, site_map_html

        config = self._config
        return self._cached(
            key,
            lambda: site_map_html.render(
                arranged.page(page, site_map.PAGE_LINKS, config.base_url),
                path=config.base_url + (self._site_map or ""),
                lang=config.html_sitemap_lang,
                title=config.html_sitemap_title,
                site_name=arranged.site_name,
                home=config.base_url + "/",
            ).encode("utf-8"),
        )

    def _cached(self, key: tuple[object, ...], build: Callable[[], bytes]) -> bytes:
        body = self._cache.get(key)
        if body is not None:
            return body
        # Single flight: concurrent requests for a stale part render it once.
        with self._render_lock:
            body = self._cache.get(key)
            if body is None:
                body = build()
                self._cache.put(key, body)
        return body

    def _last_known(self, document: Document, number: int) -> Response:
        # Never an empty or truncated success (invariant 14): the last good
        # document, or 503 so that crawlers come back later.
        known = self._cache.last(document.kind, number)
        if known is None:
            return _text(
                503, "Sitemap temporarily unavailable.\n", Retry_After=RETRY_AFTER
            )
        return Response(
            200,
            [
                ("Content-Type", document.media_type),
                ("Content-Length", str(len(known))),
                ("Cache-Control", "no-cache"),
                *_robots_tag(document),
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
