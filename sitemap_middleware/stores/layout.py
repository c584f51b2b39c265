"""Part allocation and hreflang clusters, shared by every store: the merge rules of
an upsert, which part each new path joins, which pages list their alternates, and
the typed records a store reads and writes.

A store keeps paths in first-seen order, grouped into parts whose membership never
changes: each part holds the pages of one section (``sections.py``), and a new
path joins its section's open part (the section's highest) or opens the next
part of the store (invariant 10); a site without sections has one, the default.
Clusters are decided in the write's transaction from what the store holds, so that
every process publishes the same annotations (invariant 20).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import NamedTuple

from ..model import UNDATED_SECONDS, Entry
from ..reasons import Skipped
from ..render import ORIGIN, URLSET_CLOSE, URLSET_OPEN, fragment, links, relink
from ..sections import DEFAULT
from ..sitemaps import MAX_ORIGIN_BYTES, RUN, RUN_BYTES

ENVELOPE_BYTES = len(URLSET_OPEN) + len(URLSET_CLOSE)
# Entries written in one transaction: a bulk load of millions runs in batches,
# in bounded memory, each batch all or nothing.
BATCH = 10_000


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


# NamedTuple's generated __new__ is a Python call; the plan makes two records
# per bulk entry, so it builds them as the tuples they are.
_make = tuple.__new__


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


def now() -> int:
    return int(time.time())


def epoch(moment: datetime | None, default: int) -> int:
    """Epoch seconds of an aware datetime, never later than ``default`` (now)."""
    if moment is None:
        return default
    if moment.tzinfo is None:
        raise ValueError(f"lastmod must be timezone-aware, got {moment!r}")
    return min(int(moment.timestamp()), default)


def weight(piece: bytes) -> int:
    """The bytes a fragment takes in a part once the origin is in."""
    return len(piece) + piece.count(ORIGIN) * (MAX_ORIGIN_BYTES - 1)


def run_rows(urls: int, size: int) -> int:
    """The rows of a part to read at once when it is served, from its URLs
    and the bytes of its fragments (its ``Fill``): RUN, fewer when that many
    of its fragments would weigh more than RUN_BYTES on average."""
    if urls <= 0 or size <= 0:
        return RUN
    return max(1, min(RUN, RUN_BYTES * urls // size))


def merge(
    old: Row | None, entry: Entry, current: int, listed: bool = True
) -> Row | None:
    """The row to store for ``entry`` given the stored one, or ``None`` if unchanged.

    ``lastmod`` moves only with a new fingerprint (or, for entries without one,
    a newer explicit ``lastmod``), and never backwards (invariant 12). An
    entry read from a response (``seen`` set) is the page's word: a date it
    declares moves ``lastmod`` when newer, whatever the fingerprint; without
    one (``UNDATED``) a new row has no lastmod, and ``seen`` becomes it only
    when the fingerprint replaces another one: a fingerprint replacing none
    (a row imported or loaded in bulk) is no change seen. The fragment lists
    the entry's alternates only if ``listed`` (see :func:`settle`).
    """
    lastmod = current if entry.lastmod is None else epoch(entry.lastmod, current)
    fingerprint = entry.fingerprint
    declared = pack(entry.alternates) if entry.alternates else ""
    title = entry.title
    if old is None:
        piece = _piece(entry, lastmod, listed)
        return _make(Row, (lastmod, fingerprint, entry.route, piece, declared, title))
    if title is None:
        title = old.title  # an entry that knows no title keeps the stored one
    if entry.seen is not None:  # read from a response (recording/digest.py)
        if fingerprint is None:
            fingerprint = old.fingerprint
        if lastmod <= UNDATED_SECONDS:  # no date declared: a change seen dates it
            changed = old.fingerprint is not None and fingerprint != old.fingerprint
            lastmod = epoch(entry.seen, current) if changed else old.lastmod
        lastmod = max(lastmod, old.lastmod)
    elif fingerprint is None:
        fingerprint = old.fingerprint
        if entry.lastmod is None or lastmod < old.lastmod:
            lastmod = old.lastmod
    elif fingerprint == old.fingerprint or lastmod < old.lastmod:
        lastmod = old.lastmod
    piece = _piece(entry, lastmod, listed)
    row: Row = _make(Row, (lastmod, fingerprint, entry.route, piece, declared, title))
    return None if row == old else row


def retitled(old: Row, row: Row) -> bool:
    """Whether ``row`` differs from ``old`` in its title alone: the part's
    bytes are the same, so its summary (and version) stays as it is."""
    return row.title != old.title and row[:5] == old[:5]


def _piece(entry: Entry, lastmod: int, listed: bool) -> bytes:
    """The entry's fragment, its alternates listed or not. Unlisted ones are
    rendered all the same (and taken out): the store keeps them, so they are
    checked like the rest."""
    piece = fragment(entry, lastmod)
    return piece if listed or not entry.alternates else relink(piece, "")


def plan(
    batch: dict[str, Entry],
    old: Mapping[str, Stored],
    sizes: Mapping[int, Fill],
    last: int,
    part_size: int,
    part_bytes: int,
    current: int,
    settled: Settled | None = None,
    open: Mapping[str, int] | None = None,
) -> Plan:
    """Merge a de-duplicated batch with the stored rows (``old``: path ->
    Stored). New paths join their section's open part while it has room for
    them, by count and by bytes, then open the next part of the store:
    membership never changes, except that a row which grows past its part's
    byte limit, or whose entry names another section than its part's, moves
    to the end (its section's open part).

    ``old`` holds the stored rows of the batch's paths and of the cluster
    members :func:`members` names; ``settled`` is :func:`settle`'s decision
    on them (worked out here when not given): the batch's entries are written
    with their alternates or without, and the members whose listing changes
    are written again (their ``lastmod`` kept).

    ``last`` is the store's highest part (0 for an empty store) and ``open``
    each section's open part (its highest); ``sizes`` holds the Fill of every
    open part and of every part in ``old``. ``open=None`` is a store that
    keeps no sections: every part is of the default section, the highest
    open, and the entries' sections are not read. An entry's ``section``
    ``None`` keeps a stored path in its part and sends a new one to the
    default section. Raises ``ValueError`` (an entry no sitemap may hold)
    before anything is written.
    """
    if settled is None:
        settled = settle(batch, old)
    unlisted, rewrites = settled.unlisted, settled.rewrites
    budget = part_bytes - ENVELOPE_BYTES
    extra = MAX_ORIGIN_BYTES - 1
    held = {
        n: Totals(urls, size, 0, section) for n, (urls, size, section) in sizes.items()
    }
    legacy = open is None
    opened = dict(open) if open is not None else {DEFAULT: last} if last else {}
    if not old and not rewrites:
        return _plan_new(
            batch, unlisted, held, opened, last, part_size, budget, current, legacy
        )
    top = last
    changes: list[Change] = []
    moved: list[str] = []
    parts: dict[int, Totals] = {}
    # Bulk loads mostly share one lastmod object: convert it once.
    moment: datetime | None = None
    seconds = current
    items: Iterable[tuple[str, Entry | Row]] = batch.items()
    if rewrites:
        items = chain(items, ((p, r) for p, r in rewrites.items() if p not in batch))
    for path, item in items:
        previous = old.get(path)
        section: str | None = None  # the row's section; None: where it is
        if type(item) is Row:  # a member rewritten with its listing changed
            row = item
            lastmod, piece = row.lastmod, row.fragment
        elif previous is None:
            entry: Entry = item  # type: ignore[assignment]
            section = entry.section
            # merge() of a new path, inlined: this loop runs per bulk entry.
            if entry.lastmod is not moment:
                moment = entry.lastmod
                seconds = epoch(moment, current)
            lastmod = seconds
            if entry.alternates:
                piece = _piece(entry, seconds, path not in unlisted)
                declared = pack(entry.alternates)
            else:
                piece, declared = fragment(entry, seconds), ""
            row = _make(
                Row,
                (seconds, entry.fingerprint, entry.route, piece, declared, entry.title),
            )
        else:
            section = None if legacy else item.section  # type: ignore[union-attr]
            if section is not None and section == held[previous.part].section:
                section = None
            merged = merge(previous.row, item, current, path not in unlisted)  # type: ignore[arg-type]
            if merged is None:
                if section is None:
                    continue
                merged = previous.row  # unchanged, in another section: moved
            elif section is None and retitled(previous.row, merged):
                changes.append(_make(Change, (path, previous.part, merged, False)))
                continue
            row = merged
            lastmod, piece = row.lastmod, row.fragment
        size = len(piece) + piece.count(ORIGIN) * extra  # weight(piece), inlined
        if size > budget:
            raise ValueError(f"{path}: {size} bytes do not fit in a sitemap page")
        if previous is not None:
            number, was = previous
            other = held[number]
            grown = size - weight(was.fragment)
            if section is None and other.bytes + grown <= budget:
                other.bytes += grown
                changes.append(_make(Change, (path, number, row, False)))
                written = parts.get(number)
                if written is None:
                    written = parts[number] = Totals(section=other.section)
                written.bytes += grown
                if lastmod > written.newest:
                    written.newest = lastmod
                continue
            other.urls -= 1
            other.bytes -= weight(was.fragment)
            moved.append(path)
            if section is None:  # grown past its part: to its section's end
                section = other.section
        if section is None or legacy:
            section = DEFAULT
        number = opened.get(section, 0)
        part = held.setdefault(number, Totals(section=section)) if number else None
        if part is None or part.urls >= part_size or part.bytes + size > budget:
            top += 1
            number = opened[section] = top
            part = held[top] = Totals(section=section)
        part.urls += 1
        part.bytes += size
        changes.append(_make(Change, (path, number, row, True)))
        totals = parts.get(number)
        if totals is None:
            totals = parts[number] = Totals(section=section)
        totals.urls += 1
        totals.bytes += size
        if lastmod > totals.newest:
            totals.newest = lastmod
    kept = {n: t for n, t in parts.items() if t.urls or t.bytes or t.newest}
    return Plan(changes, moved, kept, top, opened)


def opened(named: Mapping[int, str], last: int) -> dict[str, int]:
    """Each section's open part (its highest), for :func:`plan`: from the
    sections of the parts that are not the default's (``named``: part ->
    section) and the store's highest part (``last``); the default's is the
    highest part ``named`` lacks."""
    found: dict[str, int] = {}
    for number, section in named.items():
        if number > found.get(section, 0):
            found[section] = number
    number = last
    while number > 0 and number in named:
        number -= 1
    if number > 0:
        found[DEFAULT] = number
    return found


def _plan_new(
    batch: dict[str, Entry],
    unlisted: frozenset[str],
    held: dict[int, Totals],
    opened: dict[str, int],
    top: int,
    part_size: int,
    budget: int,
    current: int,
    legacy: bool,
) -> Plan:
    """:func:`plan` of a batch of new paths only (no stored row read: none
    of the batch's paths is stored, nor any member of its clusters), the bulk
    load. Each entry is what :func:`merge` makes of a new path, and it joins
    its section's open part or opens the next: nothing is merged, moved or
    rewritten, so the loop keeps the open part's fill in locals, not in
    records, and swaps them only when the section changes from one entry to
    the next."""
    extra = MAX_ORIGIN_BYTES - 1
    changes: list[Change] = []
    parts: dict[int, Totals] = {}
    section: str | None = None  # whose open part the locals hold
    number = urls = size = added = added_bytes = newest = 0
    moment: datetime | None = None
    seconds = current
    for path, entry in batch.items():
        if entry.lastmod is not moment:
            moment = entry.lastmod
            if moment is None or moment.tzinfo is None:
                seconds = epoch(moment, current)  # now, or epoch's refusal
            else:  # epoch(), inlined: a bulk load's lastmods mostly differ
                seconds = int(moment.timestamp())
                if seconds > current:
                    seconds = current
        if entry.alternates:
            piece = _piece(entry, seconds, path not in unlisted)
            declared = pack(entry.alternates)
        else:
            piece, declared = fragment(entry, seconds), ""
        weighs = len(piece) + piece.count(ORIGIN) * extra  # weight(piece), inlined
        if weighs > budget:
            raise ValueError(f"{path}: {weighs} bytes do not fit in a sitemap page")
        wanted = entry.section
        if wanted is None or legacy:
            wanted = DEFAULT
        if wanted != section:
            if section is not None:
                _keep(
                    held, parts, number, section, urls, size, added, added_bytes, newest
                )
            section = wanted
            number = opened.get(wanted, 0)
            urls = size = added = added_bytes = newest = 0
            if number:
                fill = held.setdefault(number, Totals(section=wanted))
                urls, size = fill.urls, fill.bytes
                written = parts.get(number)
                if written is not None:
                    added, added_bytes, newest = (
                        written.urls,
                        written.bytes,
                        written.newest,
                    )
        if not number or urls >= part_size or size + weighs > budget:
            if added:
                parts[number] = Totals(added, added_bytes, newest, section)
            top += 1
            number = opened[section] = top
            urls = size = added = added_bytes = newest = 0
        urls += 1
        size += weighs
        added += 1
        added_bytes += weighs
        if seconds > newest:
            newest = seconds
        row = (seconds, entry.fingerprint, entry.route, piece, declared, entry.title)
        changes.append(_make(Change, (path, number, _make(Row, row), True)))
    if section is not None:
        _keep(held, parts, number, section, urls, size, added, added_bytes, newest)
    return Plan(changes, [], parts, top, opened)


def _keep(
    held: dict[int, Totals],
    parts: dict[int, Totals],
    number: int,
    section: str,
    urls: int,
    size: int,
    added: int,
    added_bytes: int,
    newest: int,
) -> None:
    """What :func:`_plan_new` kept in locals of a section's open part, put back."""
    if number:
        held[number] = Totals(urls, size, 0, section)
    if added:
        parts[number] = Totals(added, added_bytes, newest, section)


# -- hreflang clusters ----------------------------------------------------------

Alternates = tuple[tuple[str, str], ...]
# A cluster as compared: (hreflang lower-cased, path) pairs.
Key = frozenset[tuple[str, str]]
# Why a page is written without the alternates it declares (stats() group
# "skipped"): a member is not stored (yet, or any more);
INCOMPLETE = Skipped.HREFLANG_INCOMPLETE
# a stored member declares another set, or the page is missing from its own.
MISMATCH = Skipped.HREFLANG_MISMATCH


class Settled(NamedTuple):
    """What :func:`settle` decided for a write."""

    unlisted: frozenset[str]
    """Paths of the batch written without the alternates they declare."""
    rewrites: dict[str, Row]
    """Stored rows beyond the batch whose listing changes: their new rows."""
    reasons: dict[str, str | None]
    """Path -> why it is written without its alternates (``None``: with
    them), for each entry of the batch that declares some and each rewrite."""


NOTHING = Settled(frozenset(), {}, {})


def pack(alternates: Iterable[tuple[str, str]]) -> str:
    """Alternates as a row keeps them: ``"hreflang path"`` lines (neither
    holds a space or a line break once checked by the renderer)."""
    return "\n".join(f"{lang} {path}" for lang, path in alternates)


def unpack(declared: str | None) -> Alternates:
    if not declared:
        return ()
    return tuple(_pair(line) for line in declared.split("\n"))


def _pair(line: str) -> tuple[str, str]:
    lang, _, path = line.partition(" ")
    return lang, path


def members(
    batch: Mapping[str, Entry],
    old: Mapping[str, Stored],
    removed: Collection[str] = (),
) -> set[str]:
    """The paths, beyond ``batch`` and ``old``, whose stored rows
    :func:`settle` needs: the members that the batch's entries declare, and
    that they (and the ``removed`` paths, whose rows are in ``old``) declared
    before. A store reads them into ``old`` in the write's transaction."""
    wanted: set[str] = set()
    for path in chain(batch, removed):
        entry = batch.get(path)
        if entry is not None and entry.alternates:
            wanted.update(member for _, member in entry.alternates)
        stored = old.get(path)
        if stored is not None and stored.row.declared:
            wanted.update(member for _, member in unpack(stored.row.declared))
    return {
        path
        for path in wanted
        if path not in batch and path not in old and is_local(path)
    }


def is_local(member: str) -> bool:
    """Whether a member is a page of this listing (a path), not another
    site's (an absolute URL, :mod:`.abroad`)."""
    return member.startswith("/")


def settle(
    batch: Mapping[str, Entry],
    old: Mapping[str, Stored],
    removed: Collection[str] = (),
    abroad: Mapping[str, Alternates | None] | None = None,
    again: Collection[str] = (),
) -> Settled:
    """Which pages list their alternates once ``batch`` is written and
    ``removed`` deleted, given the stored rows in ``old`` (those of the batch,
    of the removed paths and of :func:`members`).

    Members on other sites (absolute URLs) are decided by ``abroad``: what
    each declares, in this listing's terms (``None``: not stored there),
    read in the write's transaction; without it, a cluster that reaches
    another site is never listed. The stored paths in ``again`` are decided
    again whatever the write (another site's member changed).

    A page lists the alternates it declares only when it is among them and
    every member is stored declaring the same set (languages compared without
    case, RFC 5646 §2.1.1), so that every annotation written is reciprocal.
    A stored member is decided again only when its own set names a page of
    the write: nothing else can change its cluster. A row stored before rows
    kept what they declare is written without alternates once its cluster is
    touched (never listing one is safe; listing a wrong one is not).
    """
    gone = frozenset(removed)
    if (
        not gone
        and not again
        and not any(
            entry.alternates or ((stored := old.get(path)) and stored.row.declared)
            for path, entry in batch.items()
        )
    ):
        return NOTHING
    # The members of a cluster mostly declare the same set, spelled the same:
    # what is worked out from a set is worked out once a write.
    sets: dict[str | None, Alternates] = {}
    keys: dict[Alternates, Key] = {}
    joined: dict[Alternates, str] = {}
    states: dict[Key, str | None] = {}
    found: dict[str, Key | None] = {}

    def unpacked(declared: str | None) -> Alternates:
        alternates = sets.get(declared)
        if alternates is None:
            alternates = sets[declared] = unpack(declared)
        return alternates

    def key_of(alternates: Alternates) -> Key:
        key = keys.get(alternates)
        if key is None:
            key = keys[alternates] = _key(alternates)
        return key

    def key(path: str) -> Key | None:
        """What ``path`` declares once written (``None``: not stored)."""
        if path in found:
            return found[path]
        entry = batch.get(path)
        if entry is not None:
            held: Key | None = key_of(entry.alternates)
        elif not is_local(path):
            theirs = None if abroad is None else abroad.get(path)
            held = None if theirs is None else key_of(theirs)
        elif path in gone or (stored := old.get(path)) is None:
            held = None
        else:
            held = key_of(unpacked(stored.row.declared))
        found[path] = held
        return held

    def broken(path: str, alternates: Alternates) -> str | None:
        own = key_of(alternates)
        if all(member != path for _, member in alternates):
            return MISMATCH
        if own in states:
            return states[own]
        reason = None
        for _, member in own:
            theirs = key(member)
            if theirs is None:
                reason = INCOMPLETE
            elif theirs != own:
                reason = MISMATCH
                break
        states[own] = reason
        return reason

    unlisted: set[str] = set()
    reasons: dict[str, str | None] = {}
    touched: set[str] = set()
    for path, entry in batch.items():
        stored = old.get(path)
        if stored is not None and stored.row.declared:
            touched.update(member for _, member in unpacked(stored.row.declared))
        if entry.alternates:
            touched.update(member for _, member in entry.alternates)
            reason = reasons[path] = broken(path, entry.alternates)
            if reason is not None:
                unlisted.add(path)
    for path in gone:
        stored = old.get(path)
        if stored is not None and stored.row.declared:
            touched.update(member for _, member in unpacked(stored.row.declared))
    touched.update(again)
    rewrites: dict[str, Row] = {}
    for path in touched:
        stored = old.get(path)
        if stored is None or path in batch or path in gone:
            continue
        row = stored.row
        reason = None
        if row.declared is None:
            listing = ""
        else:
            alternates = unpacked(row.declared)
            if path not in again and not any(
                p in batch or p in gone for _, p in alternates
            ):
                continue  # its cluster holds no page of this write
            reason = broken(path, alternates)
            listing = ""
            if reason is None:
                listing = joined.get(alternates) or joined.setdefault(
                    alternates, links(alternates)
                )
        piece = relink(row.fragment, listing)
        if piece != row.fragment:
            rewrites[path] = row._replace(fragment=piece)
            if row.declared is not None:
                reasons[path] = reason
    return Settled(frozenset(unlisted), rewrites, reasons)


def _key(alternates: Iterable[tuple[str, str]]) -> Key:
    return frozenset((lang.lower(), path) for lang, path in alternates)


def leaving(rows: Iterable[Stored]) -> dict[int, Totals]:
    """The URLs and bytes that leave each part when these stored rows go
    (``newest`` stays 0: a store works out its part's newest row left)."""
    parts: dict[int, Totals] = {}
    for part, row in rows:
        totals = parts.get(part)
        if totals is None:
            totals = parts[part] = Totals()
        totals.urls += 1
        totals.bytes += weight(row.fragment)
    return parts


def batches(entries: Iterable[Entry], size: int = BATCH) -> Iterator[dict[str, Entry]]:
    """De-duplicated batches of at most ``size`` entries, in the order given."""
    batch: dict[str, Entry] = {}
    for entry in entries:
        batch[entry.path] = entry
        if len(batch) >= size:
            yield batch
            batch = {}
    if batch:
        yield batch
