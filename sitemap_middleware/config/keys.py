"""The table of the config's top-level keys: each key's check, and whether it
decides what is listed. ``Config.from_mapping`` checks a dict by it; the
re-check's config digest reads it (invariant 21)."""

from __future__ import annotations

import enum
from typing import NamedTuple

from . import (
    checks,
    cookies,
    crawlers,
    documents,
    indexnow,
    listing,
    news,
    routes,
    sites,
)
from .checks import Check


class Lists(enum.Enum):
    """Whether a key decides which stored pages stay and how they are written:
    a change of it re-checks every stored page (``recording.recheck``)."""

    NO = "no"
    ALWAYS = "always"
    """Yes: its field is in every config's digest, in the table's order."""
    WHEN_SET = "when set"
    """Yes, a key added later: ``[key, its field]`` follows the others, only
    when set, so that the digests of the configs without it stay the same."""
    IN_EXCLUDE = "in exclude"
    """Yes, through the ``exclude`` field, which holds every exclusion in force."""


class Key(NamedTuple):
    """A row of the table: a top-level key. Its default is its ``Config``
    field's (a named tuple, not a dataclass: one less class to build at import)."""

    name: str
    check: Check
    lists: Lists = Lists.NO


# The order of the keys that list is their order in the digest: a store keeps
# the digest, so a change of order re-checks every store once.
KEYS = {
    key.name: key
    for key in (
        Key("base_url", sites.base_url),
        Key("store", sites.store),
        Key("allowed_hosts", sites.hosts),
        Key("sites", sites.sites),
        Key("default_exclude", listing.default_exclude, Lists.IN_EXCLUDE),
        Key("exclude", checks.patterns, Lists.ALWAYS),
        Key("include", checks.patterns, Lists.ALWAYS),
        Key("query", routes.query, Lists.ALWAYS),
        Key("changefreq", routes.changefreq, Lists.ALWAYS),
        Key("priority", routes.priority, Lists.ALWAYS),
        Key("max_urls", checks.limit, Lists.ALWAYS),
        Key("routes", routes.routes, Lists.ALWAYS),
        Key("html_sitemap", documents.html_sitemap, Lists.WHEN_SET),
        Key("llms_txt", documents.llms_txt),
        Key("section_labels", documents.section_labels),
        Key("sections", listing.sections, Lists.WHEN_SET),
        Key("new_urls_per_minute", checks.limit),
        Key("cache_max_age", checks.number(0, whole=True, seconds=True)),
        Key("gzip_level", checks.number(1, 9, whole=True)),
        Key("robots", documents.robots),
        Key("session_cookies", cookies.cookies),
        Key("harmless_cookies", cookies.harmless),
        Key("skip_set_cookie", checks.flag),
        Key("recheck_interval", checks.seconds),
        Key("stale_after", checks.seconds),
        Key("lastmod_source", listing.lastmod_source),
        Key("fingerprint_ignore", checks.regexes),
        Key("text_sitemap", checks.flag),
        Key("schema_location", checks.flag),
        Key("images", checks.flag),
        Key("indexnow", indexnow.indexnow),
        Key("news", news.news),
        Key("crawlers", crawlers.crawlers),
    )
}
