"""hreflang clusters as pages declare them: the ``(hreflang, path)`` pairs an entry
carries to the store, and what this process last wrote of them.

Whether a page lists its alternates is the store's decision, made in the write's
transaction from what every process stored (``stores.hreflang.settle``): only once
every member of its cluster is stored declaring the same set, itself included, so
that each annotation written is reciprocal whatever the number of workers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from ..sitemaps import MAX_ALTERNATES
from ..urls import canonical_target

# Pages with alternates whose declared set this process remembers; beyond it
# the least recently written go (seen unchanged, they are written again).
MAX_PAGES = 10_000

Alternates = tuple[tuple[str, str], ...]


def declared(
    alternates: Iterable[tuple[str, str]],
    base_url: str,
    page: str,
    allowed: frozenset[str],
    abroad: tuple[str, ...] = (),
) -> Alternates:
    """A page's ``(hreflang, href)`` pairs as ``(hreflang, stored path)``, sorted.

    An href on ``base_url`` is kept as its stored path; one on the
    ``base_url`` of another of the app's sites (``abroad``) as that site's
    absolute URL (its base URL and stored path), which the store settles
    against that site's listing; any other is dropped: the sitemap names no
    host the app does not serve. Languages compare without case (RFC 5646
    §2.1.1); the first spelling wins. ``page`` is the stored path of the
    declaring page, ``allowed`` the query parameters kept for its route.
    """
    pairs: dict[str, tuple[str, str]] = {}
    for lang, href in alternates:
        key = lang.lower()
        if key in pairs or len(pairs) >= MAX_ALTERNATES:
            continue
        path = canonical_target(href, base_url, page, allowed)
        if path is not None:
            pairs[key] = (lang, path)
            continue
        for other in abroad:
            path = canonical_target(href, other, page, allowed)
            if path is not None:
                pairs[key] = (lang, other + path)
                break
    return tuple(pairs[key] for key in sorted(pairs))


class Declared:
    """What the pages this process wrote lately declared, path -> alternates
    (pages declaring none are not held), least recently written first.

    The store decides which pages list their alternates; the writer asks
    :meth:`holds` only to know whether a page whose content it has seen
    unchanged must be written again because its head declares another set.
    """

    def __init__(self, size: int = MAX_PAGES) -> None:
        self._size = size
        self._pages: OrderedDict[str, Alternates] = OrderedDict()

    def holds(self, path: str, alternates: Alternates) -> bool:
        """Whether ``path`` was last written declaring ``alternates``: if so,
        writing it again changes nothing about its cluster."""
        return self._pages.get(path, ()) == alternates

    def note(self, path: str, alternates: Alternates) -> None:
        pages = self._pages
        if not alternates:
            pages.pop(path, None)
            return
        pages[path] = alternates
        pages.move_to_end(path)
        while len(pages) > self._size:
            pages.popitem(last=False)

    def clear(self) -> None:
        self._pages.clear()
