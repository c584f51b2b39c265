"""hreflang clusters: a page's alternates reach the sitemap only once every member of
its cluster has been recorded by this process declaring exactly the same set
(itself included), so that each annotation written is reciprocal.

The view is per process: with several workers, a cluster completes in a process
only once that process has recorded all its members; until then they are listed
without alternates, which is safe (an unlisted annotation is no wrong one).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from .head import MAX_ALTERNATES
from .model import Entry
from .reasons import Skipped
from .urls import canonical_target

# Pages with alternates whose cluster this process remembers; beyond it the
# least recently written go (their stored rows stay as last written).
MAX_PAGES = 10_000
# Stats reasons (group "skipped"), counted once for each page written without
# the alternates it declares:
# a member has not been recorded by this process (yet), or has been removed;
INCOMPLETE = Skipped.HREFLANG_INCOMPLETE
# a recorded member declares another set, or the page is missing from its own.
MISMATCH = Skipped.HREFLANG_MISMATCH

Alternates = tuple[tuple[str, str], ...]


def declared(
    alternates: Iterable[tuple[str, str]],
    base_url: str,
    page: str,
    allowed: frozenset[str],
) -> Alternates:
    """A page's ``(hreflang, href)`` pairs as ``(hreflang, stored path)``, sorted.

    Hrefs outside ``base_url`` are dropped: the sitemap names no other host.
    Languages compare without case (RFC 5646 §2.1.1); the first spelling wins.
    ``page`` is the stored path of the declaring page, ``allowed`` the query
    parameters kept for its route.
    """
    pairs: dict[str, tuple[str, str]] = {}
    for lang, href in alternates:
        key = lang.lower()
        if key in pairs or len(pairs) >= MAX_ALTERNATES:
            continue
        path = canonical_target(href, base_url, page, allowed)
        if path is not None:
            pairs[key] = (lang, path)
    return tuple(pairs[key] for key in sorted(pairs))


@dataclass(slots=True)
class _Page:
    alternates: Alternates  # as declared, sorted
    key: frozenset[tuple[str, str]]  # the same, languages lower-cased
    entry: Entry  # as last written, without alternates
    listed: bool  # whether it was last written with its alternates


class Clusters:
    """The hreflang clusters of the pages this process writes.

    The recorder hands every batch to :meth:`settle` just before writing it:
    entries carry the alternates their page declares (see :func:`declared`),
    and come back with them kept only where the cluster is complete, along
    with the other members whose listing changed as a result.
    """

    def __init__(self, count: Callable[[str], object]) -> None:
        self._count = count
        self._pages: OrderedDict[str, _Page] = OrderedDict()

    def holds(self, path: str, alternates: Alternates) -> bool:
        """Whether ``path`` was last written declaring ``alternates``: if so,
        writing it again changes nothing about its cluster."""
        page = self._pages.get(path)
        return (page.alternates if page is not None else ()) == alternates

    def settle(
        self, entries: Mapping[str, Entry], removed: Iterable[str]
    ) -> dict[str, Entry]:
        """The entries to write for a batch of ``entries`` (path -> entry with
        its declared alternates) and ``removed`` paths: the given ones with
        alternates only where complete, then rewrites of other members.

        Calling it again with the same batch (a store write failed) gives the
        given entries again and no rewrites: those were handed out already.
        """
        pages = self._pages
        touched: set[str] = set()
        for path in removed:
            page = pages.pop(path, None)
            if page is not None:
                touched.update(member for _, member in page.alternates)
        out: dict[str, Entry] = {}
        for path, entry in entries.items():
            page = pages.pop(path, None)
            if page is not None:
                touched.update(member for _, member in page.alternates)
            if not entry.alternates:
                out[path] = entry
                continue
            alternates = entry.alternates
            bare = replace(entry, alternates=())
            pages[path] = _Page(alternates, _key(alternates), bare, False)
            touched.update(member for _, member in alternates)
            touched.add(path)
            out[path] = bare
        while len(pages) > MAX_PAGES:
            pages.popitem(last=False)
        for path in touched:
            page = pages.get(path)
            if page is None:
                continue
            reason = self._broken(path, page)
            listed = reason is None
            if path not in out and listed == page.listed:
                continue  # not in the batch, and its row stays as it is
            out[path] = (
                replace(page.entry, alternates=page.alternates)
                if listed
                else page.entry
            )
            page.listed = listed
            if reason is not None:
                self._count(reason)
        return out

    def _broken(self, path: str, page: _Page) -> str | None:
        """Why ``page``'s cluster is not complete, or ``None`` if it is."""
        members = {member for _, member in page.alternates}
        if path not in members:
            return MISMATCH
        reason = None
        for member in members:
            other = self._pages.get(member)
            if other is None:
                reason = INCOMPLETE
            elif other.key != page.key:
                return MISMATCH
        return reason


def _key(alternates: Alternates) -> frozenset[tuple[str, str]]:
    return frozenset((lang.lower(), path) for lang, path in alternates)
