"""What the hreflang tests check of a served sitemap: each URL's ``xhtml:link``
set, and that every set listed is reciprocal."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping

from support.helpers import NS, validate

from sitemap_middleware.render import urlset
from sitemap_middleware.stores import Store

Links = frozenset[tuple[str, str]]


def links(documents: Iterable[bytes]) -> dict[str, Links]:
    """loc -> its (hreflang lower-cased, href) links, from validated urlsets."""
    listed: dict[str, Links] = {}
    for xml in documents:
        for url in validate(xml).iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            assert loc is not None and loc not in listed, loc
            listed[loc] = frozenset(
                (str(link.get("hreflang")).lower(), str(link.get("href")))
                for link in url.iterfind("xhtml:link", NS)
            )
    return listed


def stored_links(store: Store, base: str = "http://example.com") -> dict[str, Links]:
    """What the store serves, loc -> links, with ``base`` as origin."""
    return links(
        gzip.decompress(urlset(base, store.fragments(part.number)))
        for part in store.parts()
    )


def unreciprocated(listed: Mapping[str, Links]) -> list[str]:
    """The locs whose links are not reciprocal: every member listed, listing
    the same set, itself included."""
    bad = []
    for loc, own in listed.items():
        if not own:
            continue
        members = {href for _, href in own}
        if loc not in members or any(listed.get(m) != own for m in members):
            bad.append(loc)
    return bad
