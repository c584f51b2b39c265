"""What the store tests read back from a store: its paths in order, a part as
served (validated), and the hreflang links each page is served with."""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from support.helpers import validate
from support.reciprocal import stored_links

from sitemap_middleware import Entry, Store, open_store
from sitemap_middleware.render import urlset
from sitemap_middleware.sitemaps import MAX_ORIGIN_BYTES

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

# The longest base URL a config accepts: pages must fit with it.
LONG_BASE = "https://example.com/" + "b" * (MAX_ORIGIN_BYTES - 20)

# One hreflang cluster of three pages, each declaring all three.
CLUSTER = (("de", "/de/a"), ("en", "/en/a"), ("x-default", "/a"))


def paths(store: Store) -> list[str]:
    """Every stored path, part after part, each part in first-seen order."""
    return [e.path for p in store.parts() for e in store.entries(p.number)]


def rendered(store: Store, number: int, base: str = LONG_BASE) -> bytes:
    """A part as served, uncompressed, validated."""
    xml = gzip.decompress(urlset(base, store.fragments(number)))
    validate(xml)
    return xml


def member(
    path: str, alternates: Iterable[tuple[str, str]] = CLUSTER, when: datetime = T0
) -> Entry:
    """A page declaring ``alternates`` (its cluster's members)."""
    return Entry(path, when, f"print-{path}", alternates=tuple(alternates))


def clustered(store: Store) -> dict[str, frozenset[tuple[str, str]]]:
    """path -> the (hreflang, path) links it is served with."""
    return {
        loc.removeprefix("http://example.com"): frozenset(
            (lang, href.removeprefix("http://example.com")) for lang, href in links
        )
        for loc, links in stored_links(store).items()
    }


def prefix_of(uri: str, entries: Iterable[Entry] = ()) -> str:
    """The key or table prefix of the server store at ``uri``, once opened
    (its keys or tables made) and ``entries`` written."""
    with open_store(uri) as store:
        store.upsert(entries)
        store.count()
        prefix: str = store.prefix  # type: ignore[attr-defined]
    return prefix


def in_section(path: str, section: str | None, hours: int = 0) -> Entry:
    """A page of ``section`` (``None``: none said), seen ``hours`` after T0."""
    return Entry(path, T0 + timedelta(hours=hours), f"f{path}", section=section)


def sections_of(store: Store) -> list[tuple[int, str, list[str]]]:
    """Each non-empty part: its number, section and paths in order."""
    return [
        (info.number, info.section, [e.path for e in store.entries(info.number)])
        for info in store.parts()
    ]


# Two paths of the route "/<x>" and one without a route.
ROUTED = [Entry("/a", T0, route="/<x>"), Entry("/b", T0, route="/<x>"), Entry("/c", T0)]
