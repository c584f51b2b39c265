"""The typed records a store reads and writes around a plan: a stored row, its
part and fill, a change, a part's totals, the plan itself, and what a fragment
weighs in a part.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..model import Entry, to_datetime
from ..render import ORIGIN
from ..sections import DEFAULT
from ..sitemaps import MAX_ORIGIN_BYTES


class Row(NamedTuple):
    """A stored row: what a store keeps of an entry beside its path."""

    lastmod: int
    """Epoch seconds; :data:`~..model.UNDATED_SECONDS` for none claimed."""
    fingerprint: str | None
    route: str | None
    fragment: bytes
    """The finished ``<url>`` element serving copies out (changefreq, priority,
    the alternates listed and images live only there)."""
    declared: str | None = None
    """The alternates the page declares (:func:`pack`), listed in the fragment
    or not: ``""`` for none; ``None`` in a row stored before rows kept them."""
    title: str | None = None
    """The page's title (:attr:`Entry.title`); not in the fragment."""
    description: str | None = None
    """What the page says it is about (:attr:`Entry.description`); not in
    the fragment."""

    def entry(self, path: str) -> Entry:
        """What ``entries()`` gives of this row, stored for ``path``."""
        return Entry(
            path,
            to_datetime(self.lastmod),
            self.fingerprint,
            route=self.route,
            title=self.title,
            description=self.description,
        )


class Stored(NamedTuple):
    """A stored path's part and row, as a store reads them before a write."""

    part: int
    row: Row


class Fill(NamedTuple):
    """How full a part is: its URLs and the bytes of its fragments; and the
    section whose pages it holds."""

    urls: int
    bytes: int
    section: str = DEFAULT


class Change(NamedTuple):
    """One row an upsert writes, in batch order."""

    path: str
    part: int
    row: Row
    new: bool
    """A new row (it takes the next first-seen ``seq``), else an update in place."""


@dataclass(slots=True)
class Totals:
    """What a write adds to one part: URLs, bytes (negative when they leave)
    and the newest ``lastmod`` among the rows it writes there. Mutable: the
    planner adds to it row by row."""

    urls: int = 0
    bytes: int = 0
    newest: int = 0
    section: str = DEFAULT
    """The part's section: what a store keeps of a part it makes."""

    def add(self, other: Totals) -> None:
        self.urls += other.urls
        self.bytes += other.bytes
        if other.newest > self.newest:
            self.newest = other.newest


class Plan(NamedTuple):
    """What an upsert batch writes, worked out once for every store."""

    changes: list[Change]
    moved: list[str]
    """Stored paths to delete first: they grew past their part's byte limit
    and are written again as new rows (the one case a URL changes part)."""
    parts: dict[int, Totals]
    """part -> what the changes add to it, for every part written."""
    last_part: int
    """The store's highest part once the plan is written (0: none)."""
    open: dict[str, int]
    """section -> its open part once the plan is written: what the next
    plan of a batch planned in runs starts from."""

    def advance(self, sizes: dict[int, Fill], old: Mapping[str, Stored]) -> None:
        """Update ``sizes`` (part -> Fill) to what this plan leaves: for a store
        that plans a batch in several runs, each from where the last left off."""
        for path in self.moved:
            part, row = old[path]
            urls, size, section = sizes[part]
            sizes[part] = Fill(urls - 1, size - weight(row.fragment), section)
        for part, totals in self.parts.items():
            urls, size, section = sizes.get(part, (0, 0, totals.section))
            sizes[part] = Fill(urls + totals.urls, size + totals.bytes, section)


def weight(piece: bytes) -> int:
    """The bytes a fragment takes in a part once the origin is in."""
    return len(piece) + piece.count(ORIGIN) * (MAX_ORIGIN_BYTES - 1)
