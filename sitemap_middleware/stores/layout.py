"""Part allocation, shared by every store: the merge rules of an upsert and
which part each new path joins, as a plan a store writes.

A store keeps paths in first-seen order, grouped into parts whose membership never
changes: each part holds the pages of one section (``sections.py``), and a new
path joins its section's open part (the section's highest) or opens the next
part of the store (invariant 10); a site without sections has one, the default.
Which pages list their alternates is :mod:`.hreflang`'s rule, which a plan applies.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from itertools import chain
from typing import NamedTuple

from ..model import UNDATED_SECONDS, Entry
from ..render import ORIGIN, URLSET_CLOSE, URLSET_OPEN, fragment, relink
from ..sections import DEFAULT
from ..sitemaps import MAX_ORIGIN_BYTES, RUN, RUN_BYTES
from .hreflang import Settled, pack, settle
from .records import Change, Fill, Plan, Row, Stored, Totals, weight

ENVELOPE_BYTES = len(URLSET_OPEN) + len(URLSET_CLOSE)
# Entries written in one transaction: a bulk load of millions runs in batches,
# in bounded memory, each batch all or nothing.
BATCH = 10_000

# NamedTuple's generated __new__ is a Python call; the plan makes two records
# per bulk entry, so it builds them as the tuples they are.
_make = tuple.__new__


def now() -> int:
    return int(time.time())


def epoch(moment: datetime | None, default: int) -> int:
    """Epoch seconds of an aware datetime, never later than ``default`` (now)."""
    if moment is None:
        return default
    if moment.tzinfo is None:
        raise ValueError(f"lastmod must be timezone-aware, got {moment!r}")
    return min(int(moment.timestamp()), default)


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
    title, description = entry.title, entry.description
    if old is None:
        return _new(entry, lastmod, listed)
    # An entry that knows no title (or description) keeps the stored one.
    if title is None:
        title = old.title
    if description is None:
        description = old.description
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
    row: Row = _make(
        Row, (lastmod, fingerprint, entry.route, piece, declared, title, description)
    )
    return None if row == old else row


def retitled(old: Row, row: Row) -> bool:
    """Whether ``row`` differs from ``old`` in its title or description alone:
    the part's bytes are the same, so its summary (and version) stays as it
    is."""
    return row[5:] != old[5:] and row[:5] == old[:5]


def _new(entry: Entry, lastmod: int, listed: bool) -> Row:
    """The row of a new path, dated ``lastmod``: what :func:`merge` makes."""
    piece = _piece(entry, lastmod, listed)
    declared = pack(entry.alternates) if entry.alternates else ""
    shown = entry.title, entry.description  # beside the fragment
    return _make(
        Row, (lastmod, entry.fingerprint, entry.route, piece, declared, *shown)
    )


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
        room = _Room(last, part_size, budget, current, legacy)
        return _plan_new(batch, unlisted, held, opened, room)
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
            if entry.lastmod is not moment:
                moment = entry.lastmod
                seconds = epoch(moment, current)
            row = _new(entry, seconds, path not in unlisted)
            lastmod, piece = seconds, row.fragment
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


class _Room(NamedTuple):
    """What :func:`_plan_new` plans within: the store's highest part, a part's
    URLs and bytes (less the envelope), now, and whether the store keeps no
    sections (``legacy``)."""

    top: int
    part_size: int
    budget: int
    current: int
    legacy: bool


def _plan_new(
    batch: dict[str, Entry],
    unlisted: frozenset[str],
    held: dict[int, Totals],
    opened: dict[str, int],
    room: _Room,
) -> Plan:
    """:func:`plan` of a batch of new paths only (no stored row read: none
    of the batch's paths is stored, nor any member of its clusters), the bulk
    load. Each entry is what :func:`merge` makes of a new path, and it joins
    its section's open part or opens the next: nothing is merged, moved or
    rewritten, so the loop keeps the open part's fill in locals, not in
    records, and swaps them only when the section changes from one entry to
    the next."""
    top, part_size, budget, current, legacy = room
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
                kept = urls, size, added, added_bytes, newest
                _keep(held, parts, number, section, kept)
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
        shown = entry.title, entry.description
        row = (seconds, entry.fingerprint, entry.route, piece, declared, *shown)
        changes.append(_make(Change, (path, number, _make(Row, row), True)))
    if section is not None:
        _keep(held, parts, number, section, (urls, size, added, added_bytes, newest))
    return Plan(changes, [], parts, top, opened)


def _keep(
    held: dict[int, Totals],
    parts: dict[int, Totals],
    number: int,
    section: str,
    kept: tuple[int, int, int, int, int],
) -> None:
    """What :func:`_plan_new` kept in locals of a section's open part (its
    URLs and bytes, and what the plan adds to it: URLs, bytes, newest), put
    back."""
    urls, size, added, added_bytes, newest = kept
    if number:
        held[number] = Totals(urls, size, 0, section)
    if added:
        parts[number] = Totals(added, added_bytes, newest, section)


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


def unstored(batch: dict[str, Entry], old: Mapping[str, Stored]) -> dict[str, Entry]:
    """The entries of ``batch`` an add writes: those whose path the stored rows
    read in the write (``old``) do not hold (``Adds``)."""
    return {path: entry for path, entry in batch.items() if path not in old}


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
