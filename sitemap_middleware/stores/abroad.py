"""hreflang clusters that span the app's sites (``sites``): the other sites'
listings a store reads what their members declare from, inside its own write
transaction, and asks to settle their members again once that write is done.

No transaction spans two listings (two files, key prefixes or tables), so the
rule of ``hreflang.settle`` (a page lists its alternates only once every member
is stored declaring the same set) holds across sites by two steps:

1. A write of site A reads the members on site B *after* it holds A's write
   lock (SQLite's BEGIN IMMEDIATE, PostgreSQL's meta row FOR UPDATE, memory's
   lock) or under A's WATCH (Redis, whose every write bumps the watched meta).
2. Once A's write is committed, A asks B to settle again B's members of every
   cross-site cluster the write touched: a write of B, in B's transaction,
   which again reads A's members after taking B's lock. That write never asks
   A back: a listing follows the members' declared sets, which it leaves as
   they were.

Why that is enough, for a page Q of B whose cluster holds a page P of A:
every transaction that decides Q reads P inside B's lock, and every commit
that changes P (written, its set changed, removed) is followed by a settling
of Q that starts after it. Transactions on B are serialised, so the last one
to decide Q begins no earlier than the settling that followed P's last
change: it reads P as it stands. A write that read P before that change
commits before the settling takes B's lock (Redis: fails its WATCH, which the
settling's EXEC bumps, and reads P again), so it never has the last word.
Between P's commit and Q's settling, Q may still list P: a window of one
write, never a state the store keeps. If B cannot be read, A's write fails
(B's StoreError, an outage: the writer keeps the batch and tries it again);
if B cannot be written, A's write fails after its commit, and trying the
batch again asks for the settling again. The sites share one backend, so
that an outage of one listing is mostly an outage of all of them.

Never listing is safe; listing a set that is not reciprocal once both writes
are done is not, and the steps above never leave one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Protocol, runtime_checkable

from ..model import Entry
from .hreflang import Alternates, unpack
from .layout import BATCH
from .records import Stored


@runtime_checkable
class Clusters(Protocol):
    """A listing whose hreflang members another site's writes settle against
    (:class:`Abroad`), and whose pages the config re-check writes again with
    what they declare (``recording/recheck.py``); the shipped stores
    implement it."""

    abroad: Abroad | None
    """The other sites, whose members its own writes read (``None``: none)."""

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        """Path -> what the stored page declares (``hreflang.pack``; ``""``:
        nothing, or a row stored before rows kept it), for the stored ones of
        ``paths``: what is committed, without waiting for this listing's
        writers (one may be reading the asking listing in its transaction)."""

    def resettle(self, paths: Iterable[str]) -> None:
        """Decide again, in a write transaction of this listing, whether these
        stored pages list their alternates: another site's member changed."""


class Abroad:
    """The other sites of the app, seen from one site's store: ``base_url``
    is the site's own, ``sites`` each other site's base URL and listing."""

    def __init__(self, base_url: str, sites: Mapping[str, Clusters]) -> None:
        self.base_url = base_url
        # Longest first: a site whose base URL is a prefix of another's.
        self._sites = sorted(sites.items(), key=lambda item: -len(item[0]))

    def declared(self, urls: Iterable[str]) -> dict[str, Alternates | None]:
        """URL -> what the page at that URL declares, in this site's terms
        (its own pages as paths, the others' as URLs); ``None``: no site's
        listing holds it."""
        found: dict[str, Alternates | None] = dict.fromkeys(urls)
        for base, store, paths in self._grouped(found):
            held = store.declarations(paths)
            for path in paths:
                packed = held.get(path)
                if packed is not None:
                    found[base + path] = self._ours(base, unpack(packed))
        return found

    def ready(self) -> None:
        """Open each other site's listing, before the caller takes its write
        lock: opening a file may write it (SQLite), which must not wait on
        that file's writer while it reads this one."""
        for _, store in self._sites:
            store.declarations(())

    def resettle(self, urls: Iterable[str]) -> None:
        """Ask each other site to settle again its pages among ``urls``, a
        write of at most ``BATCH`` pages at a time (a bulk load's)."""
        for _, store, paths in self._grouped(urls):
            for start in range(0, len(paths), BATCH):
                store.resettle(paths[start : start + BATCH])

    def _grouped(self, urls: Iterable[str]) -> list[tuple[str, Clusters, list[str]]]:
        """``urls`` by the site whose base URL they start with, as paths;
        a URL on no site's is left out (a site taken out of the config)."""
        groups: dict[str, tuple[Clusters, list[str]]] = {}
        for url in urls:
            for base, store in self._sites:
                if url.startswith(base + "/"):
                    groups.setdefault(base, (store, []))[1].append(url[len(base) :])
                    break
        return [(base, store, paths) for base, (store, paths) in groups.items()]

    def _ours(self, base: str, alternates: Alternates) -> Alternates:
        """Pairs declared on the site of ``base`` as this site keeps them."""
        own = self.base_url + "/"
        pairs = []
        for lang, href in alternates:
            if href.startswith("/"):
                href = base + href
            elif href.startswith(own):
                href = href[len(self.base_url) :]
            pairs.append((lang, href))
        return tuple(pairs)


def reached(
    batch: Mapping[str, Entry], old: Mapping[str, Stored], paths: Collection[str]
) -> set[str]:
    """The members on other sites (absolute URLs) a settling may compare: those
    the batch's entries declare, and those declared by the stored rows of the
    batch's pages, of ``paths`` (removed, or settled again) and of the members
    on this site these name (``old`` may hold every row: only these are read)."""
    urls: set[str] = set()
    here: set[str] = set(paths)
    for path, entry in batch.items():
        here.add(path)
        for _, member in entry.alternates:
            (here if member.startswith("/") else urls).add(member)
    for path in list(here):
        stored = old.get(path)
        if stored is not None and stored.row.declared:
            for _, member in unpack(stored.row.declared):
                (here if member.startswith("/") else urls).add(member)
    for path in here:
        stored = old.get(path)
        if stored is not None and stored.row.declared and "://" in stored.row.declared:
            urls.update(url for _, url in unpack(stored.row.declared) if "://" in url)
    return urls


def crossing(
    batch: Mapping[str, Entry], old: Mapping[str, Stored], paths: Collection[str]
) -> set[str]:
    """The members on other sites whose clusters a write changes: those the
    batch's entries declare, and those the stored rows of the batch's and
    the removed ``paths`` declared."""
    urls = {url for entry in batch.values() for _, url in entry.alternates}
    for path in (*batch, *paths):
        stored = old.get(path)
        if stored is not None and stored.row.declared:
            urls.update(url for _, url in unpack(stored.row.declared))
    return {url for url in urls if not url.startswith("/")}
