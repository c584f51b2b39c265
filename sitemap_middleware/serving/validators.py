"""A document's validators: its ETag, the one name of its bytes (what the
config and the release make them of, :func:`looks`, and the version of
what they list), its Last-Modified, and the one rule of a 304
(:meth:`Validators.check`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from datetime import datetime

from werkzeug.http import http_date, parse_etags, quote_etag

from .. import render
from ..config import Config
from ..model import PartInfo
from ..render import release

Header = Callable[[str], "str | None"]


def versions_of(parts: Iterable[PartInfo]) -> tuple[tuple[int, str], ...]:
    """What tells a store's parts apart: each part's number and version (a
    version counts within its part: two parts may hold the same one)."""
    return tuple((p.number, p.version) for p in parts)


def looks(config: Config) -> tuple[object, ...]:
    """Every value of ``config`` a document's bytes are made of, besides
    what the store holds, and the release that renders them: a key a
    renderer reads is named here, and only here, so that a deploy that
    changes a body changes its ETag. (The news sitemap's version is its
    body's hash: the ``news`` key needs no place.)"""
    return (
        # An upgrade may render the same store and config otherwise; the
        # version --version prints (importlib.metadata, read once a config).
        release(),
        # The locs are built from base_url: a moved site (http to https) on
        # the same store serves other bytes.
        config.base_url,
        config.schema_location,
        # Another deflate library or level gives a part other bytes.
        render.DEFLATE.__name__,
        config.gzip_level,
        # The site map page (its path is its links' own) and llms.txt.
        config.html_sitemap,
        config.html_sitemap_lang,
        config.html_sitemap_title,
        config.html_sitemap_site_name,
        config.html_sitemap_newest_first,
        config.llms_txt_max_links,
        config.llms_txt_sections,
        tuple(config.section_labels.items()),
    )


class Validators:
    """The validators of one config's documents."""

    def __init__(self, config: Config) -> None:
        self._looks = repr(looks(config))

    def check(
        self,
        key: tuple[object, ...],
        parts: Iterable[PartInfo],
        header: Header,
        changed: datetime | None = None,
    ) -> tuple[list[tuple[str, str]], bool]:
        """The ``ETag`` and ``Last-Modified`` of the version ``key`` of a
        document (what it lists: its parts' numbers and versions, anything
        else it shows), made of ``parts`` (the latest of their changes, or
        ``changed`` if later); and whether the request's ``If-None-Match``
        names that ETag (or is ``*``), the one condition a 304 answers.

        ``If-Modified-Since`` alone is answered in full: a document's
        Last-Modified cannot move with every change of its bytes. An index,
        the site map page or llms.txt lose a part that empties (the stores
        keep its summary, but no read returns it: one would be a change to
        every store), the index no longer names a news sitemap whose last
        article aged out, a deploy changes a body (:func:`looks`), two
        changes fall within one second. Only the ETag names the bytes, and
        crawlers that keep it send it.
        """
        tag = repr((self._looks, key)).encode()
        etag = hashlib.sha1(tag).hexdigest()[:20]
        latest = max([p.changed for p in parts] + ([changed] if changed else []))
        headers = [("ETag", quote_etag(etag)), ("Last-Modified", http_date(latest))]
        return headers, parse_etags(header("if-none-match")).contains_weak(etag)
