"""The hreflang cluster rule, shared by every store: which pages list the
alternates they declare, decided in the write's transaction from what the store
holds (invariant 20), and how a row keeps what a page declares.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from itertools import chain
from typing import NamedTuple

from ..model import Entry
from ..reasons import Skipped
from ..render import links, relink
from .records import Row, Stored

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
