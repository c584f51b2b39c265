"""The pages: rows and fragments keyed by path, a sorted set per part (score: the
row's first-seen seq), part summaries and sections; written in optimistic
transactions, read by keyset in runs joined in Redis.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import chain
from typing import Any

import redis

from ...model import Entry, PartInfo, to_datetime
from ...sections import DEFAULT
from ...sitemaps import RUN
from .. import hreflang, layout
from ..contract import Listed
from ..hreflang import Settled
from ..layout import batches, leaving, now
from ..records import Change, Fill, Plan, Row, Stored
from . import scripts as lua
from . import writes
from .client import (
    Key,
    Pipeline,
    RedisBase,
    Work,
    evaluate,
    nul_ended,
    runs,
    text,
    unpack,
)

# 2: rows hold no seq and their fragment lives beside them; summaries hold bytes.
SCHEMA_VERSION = "2"


class PagesMixin(RedisBase):
    _fragments = Key("fragment")
    _summaries_key = Key("pages")
    _routes = Key("routes")
    # The section of each part of a named section (the default's parts have
    # none: a store of the release before reads as all default).
    _sections_key = Key("section")

    def _part_key(self, number: int) -> str:
        return f"{self.prefix}page:{number}"

    # -- the write path -------------------------------------------------------------
    # StoreBase's steps, each batch in one optimistic transaction (_transact):
    # _read, under the WATCH, takes the part summaries, their sections and the
    # open parts' too; _apply works a plan on the summaries read (_delete takes
    # the moved rows out of theirs), then, between MULTI and EXEC, _write
    # queues the rows and _summaries the summaries touched, and _queue the
    # IndexNow pushes.

    def upsert(self, entries: Iterable[Entry]) -> int:
        return self._upserts(entries, adding=False)

    def add(self, entries: Iterable[Entry]) -> int:
        return self._upserts(entries, adding=True)

    def _upserts(self, entries: Iterable[Entry], adding: bool) -> int:
        return sum(
            self._transact(partial(self._upsert, batch, adding))
            for batch in batches(entries)
        )

    def _upsert(
        self, batch: dict[str, Entry], adding: bool, pipe: Pipeline, token: str
    ) -> Work | None:
        """A batch's write: how many rows changed, or for an add (``adding``),
        how many of its entries are written; ``None``: nothing to write."""
        current = now()
        state = self._read(pipe, batch, token)
        if adding:
            batch = layout.unstored(batch, state.rows)
        self._read_members(pipe, state, hreflang.members(batch, state.rows), token)
        # Planned in full first, so that a bad entry changes nothing.
        todo = self._planned(batch, state, current)
        if not todo.changes:
            return None
        pushes = self._pushes(todo, state.rows)
        changed = len(batch) if adding else len(todo.changes)
        return changed, self._apply(pipe, todo, state, current, pushes)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        return self._transact(partial(self._remove, wanted)) if wanted else 0

    def resettle(self, paths: Iterable[str]) -> None:
        wanted = list(set(paths))
        if wanted:
            self._transact(partial(self._resettle, wanted))

    def _resettle(self, wanted: list[str], pipe: Pipeline, token: str) -> Work:
        state = self._read(pipe, wanted, token)
        again = list(state.rows)
        members = hreflang.members({}, state.rows, again)
        self._read_members(pipe, state, members, token)
        settled = self._settle({}, state.rows, (), again)
        rewrite: Callable[[Pipeline], None] = _nothing
        if settled.rewrites:
            current = now()
            todo = self._planned({}, state, current, settled)
            rewrite = self._apply(pipe, todo, state, current)
        # Always a write, even of nothing: its EXEC bumps meta, so that a
        # write of this listing that read the other site's members before
        # their change fails its WATCH and reads them again (abroad.py).
        return len(settled.rewrites), rewrite

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        names = list(paths)
        if not names:
            return {}
        found: dict[str, str] = {}
        for path, packed in zip(
            names, self._connection().redis.hmget(self._rows, names), strict=True
        ):
            if packed is not None:
                rest = unpack(packed)[4:]
                found[path] = (rest[0] if rest else None) or ""
        return found

    def _remove(self, wanted: list[str], pipe: Pipeline, token: str) -> Work | None:
        state = self._read(pipe, wanted, token)
        if not state.rows:
            return None
        current = now()
        gone = {path: state.rows[path] for path in state.rows}
        # The other members of the removed pages' clusters lose their links.
        self._read_members(pipe, state, hreflang.members({}, gone, gone), token)
        settled = self._settle({}, state.rows, gone)
        leaving = self._delete(pipe, gone, state.parts, current)
        routes: dict[str, int] = {}
        for stored in gone.values():
            writes.tally(routes, stored.row.route, -1)
        rewrite: Callable[[Pipeline], None] | None = None
        pushing = self._is_pushing()
        withdrawing = self._is_withdrawing()
        if settled.rewrites:
            for path in gone:
                del state.rows[path]
            todo = self._planned({}, state, current, settled)
            rewrite = self._apply(pipe, todo, state, current)

        def queue(pipe: Pipeline) -> None:
            self._unlist(pipe, leaving)
            names = list(gone)
            for run in runs(names):
                for key in (
                    self._rows,
                    self._fragments,
                    self._titles,
                    self._descriptions,
                ):
                    pipe.hdel(key, *run)
            self._summaries(pipe, state.parts, leaving)
            self._tallies(pipe, routes)
            self._unplace(pipe, names, state.places)
            if pushing:
                self._queue(pipe, names)
            elif withdrawing:
                self._withdraw(pipe, names)
            self._log_removed(pipe, names)
            if rewrite is not None:
                rewrite(pipe)

        return len(gone), queue

    def _planned(
        self,
        batch: dict[str, Entry],
        state: _State,
        current: int,
        settled: Settled | None = None,
    ) -> Plan:
        """:meth:`_plan` on what a write read, each section's open part given."""
        opened = layout.opened(state.named, state.last)
        return self._plan(
            batch, state.rows, state.sizes(), state.last, current, settled, opened
        )

    def _read(self, pipe: Pipeline, paths: Collection[str], token: str) -> _State:
        """What a write needs to know, read under the WATCH (one round trip)."""
        reply = evaluate(
            pipe,
            lua.READ,
            [
                self._meta,
                self._lock_key,
                self._rows,
                self._fragments,
                self._summaries_key,
                self._titles,
                self._sections_key,
                self._descriptions,
                self._places,
            ],
            [nul_ended(paths)],
        )
        if reply[0] and reply[0].decode() != token:
            raise redis.WatchError  # another's turn: wait for ours
        return _State.read(*reply[1:])

    def _read_members(
        self,
        pipe: Pipeline,
        state: _State,
        paths: Collection[str],
        token: str,
    ) -> None:
        """Add the rows of these paths (hreflang members) to ``state``, read
        under the same WATCH."""
        if paths:
            more = self._read(pipe, paths, token)
            state.rows.update(more.rows)
            state.places.update(more.places)
            for number, summary in more.parts.items():
                state.parts.setdefault(number, summary)
            state.named.update(more.named)

    def _apply(
        self,
        pipe: Pipeline,
        todo: Plan,
        state: _State,
        current: int,
        pushes: list[str] | None = None,
    ) -> Callable[[Pipeline], None]:
        """Apply a plan to ``state``'s summaries (reading what moved rows
        need); the function that queues its commands (and ``pushes``)."""
        moved = self._delete(
            pipe,
            {path: state.rows[path] for path in todo.moved},
            state.parts,
            current,
        )
        for number, totals in todo.parts.items():
            summary = state.parts.setdefault(number, _Summary())
            summary.urls += totals.urls
            summary.size += totals.bytes
            summary.lastmod = max(summary.lastmod, totals.newest)
            summary.version += 1
            summary.changed = current
        touched = set(todo.parts) | set(moved)
        routes = writes.routes_moved(todo.changes, state.rows)

        def queue(pipe: Pipeline) -> None:
            self._write(pipe, todo, state, moved, touched)
            self._place(pipe, todo.changes, state.places)
            self._tallies(pipe, routes)
            if pushes:
                self._queue(pipe, pushes)

        return queue

    def _delete(
        self,
        pipe: Pipeline,
        rows: Mapping[str, Stored],
        parts: dict[int, _Summary],
        current: int,
    ) -> dict[int, list[str]]:
        """Take stored rows out of their parts' summaries, reading what that
        needs; returns the paths that leave each part, for :meth:`_unlist`
        between MULTI and EXEC (the caller deletes or rewrites the rows)."""
        paths: dict[int, list[str]] = {}
        for path, stored in rows.items():
            paths.setdefault(stored.part, []).append(path)
        for number, totals in leaving(rows.values()).items():
            summary = parts.setdefault(number, _Summary())
            summary.urls -= totals.urls
            summary.size -= totals.bytes
            if summary.urls <= 0:
                summary.lastmod = 0
            elif max(rows[p].row.lastmod for p in paths[number]) >= summary.lastmod:
                # The newest row may be leaving: find the newest of those left.
                summary.lastmod = int(
                    evaluate(
                        pipe,
                        lua.NEWEST,
                        [self._part_key(number), self._rows],
                        [nul_ended(paths[number])],
                    )
                )
            summary.version += 1
            summary.changed = current
        return paths

    def _unlist(self, pipe: Pipeline, leaving: dict[int, list[str]]) -> None:
        """Queue the paths' removal from their parts' sorted sets."""
        for number, paths in leaving.items():
            for run in runs(paths):
                pipe.zrem(self._part_key(number), *run)

    def _write(
        self,
        pipe: Pipeline,
        todo: Plan,
        state: _State,
        moved: dict[int, list[str]],
        touched: set[int],
    ) -> None:
        """Queue a plan's commands: the moved rows out of their parts, the
        rows (the write script, a run of RUN rows a call), the summaries
        touched and meta."""
        self._unlist(pipe, moved)
        _beside(pipe, (self._titles, self._descriptions), todo.changes)
        seq = state.seq
        for part, rows in writes.runs(todo.changes, state.rows):
            keys = [self._rows, self._fragments]
            if part is not None:  # new rows: their part's seqs follow seq
                keys.append(self._part_key(part))
            evaluate(pipe, lua.WRITE, keys, [*writes.packed(rows), seq])
            if part is not None:
                seq += len(rows)
        self._summaries(pipe, state.parts, touched)
        sections = {
            number: totals.section
            for number, totals in todo.parts.items()
            if totals.section and number not in state.named
        }
        if sections:
            pipe.hset(self._sections_key, mapping=sections)
        pipe.hset(self._meta, mapping={"seq": seq, "last": todo.last_part})
        # Redis may have lost its data since this process connected (a restart
        # without persistence): a new epoch keeps part versions from repeating.
        pipe.hsetnx(self._meta, "schema", SCHEMA_VERSION)
        pipe.hsetnx(self._meta, "epoch", self._new_epoch())

    def _summaries(
        self, pipe: Pipeline, parts: dict[int, _Summary], numbers: Iterable[int]
    ) -> None:
        """Queue the summaries of these parts, as the write leaves them."""
        packed = {number: parts[number].pack() for number in sorted(numbers)}
        if packed:
            pipe.hset(self._summaries_key, mapping=packed)

    def _tallies(self, pipe: Pipeline, routes: dict[str, int]) -> None:
        for route, delta in routes.items():
            if delta:
                pipe.hincrby(self._routes, route, delta)

    def count(self, route: str | None = None) -> int:
        client = self._connection().redis
        if route is None:
            return int(client.hlen(self._rows))
        return int(client.hget(self._routes, route) or 0)

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = list(set(paths))
        if not wanted:
            return set()
        pipe = self._connection().redis.pipeline(transaction=False)
        for run in runs(wanted):
            pipe.hmget(self._rows, run)
        found = chain.from_iterable(pipe.execute())
        return {path for path, row in zip(wanted, found, strict=True) if row}

    def parts(self) -> list[PartInfo]:
        pipe = self._connection().redis.pipeline(transaction=False)
        epoch, summaries, named = (
            pipe.hget(self._meta, "epoch")
            .hgetall(self._summaries_key)
            .hgetall(self._sections_key)
            .execute()
        )
        infos = (
            _info(epoch, int(n), packed, named.get(n))
            for n, packed in summaries.items()
        )
        return sorted((i for i in infos if i), key=lambda info: info.number)

    def part(self, number: int) -> PartInfo | None:
        pipe = self._connection().redis.pipeline(transaction=False)
        epoch, packed, section = (
            pipe.hget(self._meta, "epoch")
            .hget(self._summaries_key, str(number))
            .hget(self._sections_key, str(number))
            .execute()
        )
        return _info(epoch, number, packed, section)

    def _runs(
        self, number: int, hash_key: str, mode: bytes, run: int = RUN
    ) -> Iterator[list[Any]]:
        """A part's members in runs of ``run``, by keyset on seq (never by rank)."""
        keys = [self._part_key(number), hash_key, self._titles, self._descriptions]
        after = b"0"
        while True:
            reply = self._script(lua.RUN, keys, [after, run, mode])
            if reply[1]:
                yield reply
            if reply[1] < run:
                return
            after = reply[0]

    def fragments(self, number: int) -> Iterator[bytes]:
        packed = self._connection().redis.hget(self._summaries_key, str(number))
        summary = _Summary.unpack(packed)
        run = layout.run_rows(summary.urls, summary.size)
        for _, _, joined in self._runs(number, self._fragments, b"f", run):
            if joined:
                yield joined

    def entries(self, number: int) -> Iterator[Entry]:
        dates: dict[int, datetime] = {}  # rows of a bulk load share their lastmod
        for _, _, paths, rows, titles, abouts in self._runs(number, self._rows, b"e"):
            for path, row, title, about in zip(
                unpack(paths), unpack(rows), unpack(titles), unpack(abouts), strict=True
            ):
                if row is None:
                    continue
                lastmod, fingerprint, route = row[1:4]
                when = dates.get(lastmod)
                if when is None:
                    when = dates[lastmod] = to_datetime(lastmod)
                yield Entry(
                    path, when, fingerprint, route=route, title=title, description=about
                )

    def listing(self, number: int) -> Iterator[list[Listed]]:
        for _, _, paths, rows, titles, abouts in self._runs(number, self._rows, b"e"):
            yield [
                (path, row[3], title, about, row[1])
                for path, row, title, about in zip(
                    unpack(paths),
                    unpack(rows),
                    unpack(titles),
                    unpack(abouts),
                    strict=True,
                )
                if row is not None
            ]


@dataclass(slots=True)
class _State:
    """What a write read under its WATCH."""

    seq: int
    last: int
    rows: dict[str, Stored]
    parts: dict[int, _Summary]
    named: dict[int, str]
    """part -> section, for every part of a named section."""
    places: dict[str, bytes]
    """path -> its packed place on the site map, of the rows placed."""

    @classmethod
    def read(
        cls, seq: bytes, last: bytes, found: list[bytes], parts: list[bytes], named: Any
    ) -> _State:
        """The state from the read script's reply (after the lock's holder)."""
        rows: dict[str, Stored] = {}
        places: dict[str, bytes] = {}
        for i in range(0, len(found), 6):
            part, lastmod, fingerprint, route, *rest = unpack(found[i + 1])
            declared = rest[0] if rest else None
            title = found[i + 3].decode() or None
            about = found[i + 4].decode() or None
            row = Row(lastmod, fingerprint, route, found[i + 2], declared, title, about)
            path = found[i].decode()
            rows[path] = Stored(part, row)
            if found[i + 5]:
                places[path] = found[i + 5]
        summaries = {
            int(parts[i]): _Summary.unpack(parts[i + 1])
            for i in range(0, len(parts), 2)
        }
        sections = {
            int(named[i]): named[i + 1].decode() for i in range(0, len(named), 2)
        }
        return cls(int(seq), int(last), rows, summaries, sections, places)

    def sizes(self) -> dict[int, Fill]:
        """The Fill of each part read, as layout.plan takes them."""
        named = self.named
        return {
            number: Fill(summary.urls, summary.size, named.get(number, DEFAULT))
            for number, summary in self.parts.items()
        }


@dataclass(slots=True)
class _Summary:
    """A part's summary as the store keeps it, packed "urls bytes lastmod
    version changed" in one hash field."""

    urls: int = 0
    size: int = 0  # bytes of its fragments
    lastmod: int = 0
    version: int = 0
    changed: int = 0

    @classmethod
    def unpack(cls, packed: bytes | None) -> _Summary:
        if not packed:
            return cls()
        urls, size, lastmod, version, changed = map(int, packed.split())
        return cls(urls, size, lastmod, version, changed)

    def pack(self) -> bytes:
        return b"%d %d %d %d %d" % (
            self.urls,
            self.size,
            self.lastmod,
            self.version,
            self.changed,
        )


def _beside(pipe: Pipeline, keys: tuple[str, str], changes: Iterable[Change]) -> None:
    """Queue the titles and descriptions of a plan's rows, each in its hash
    of ``keys``: a new row without one forgets what a removed row of its
    path left behind."""
    titles: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    untitled: list[str] = []
    undescribed: list[str] = []
    # Two columns written out, not a loop over them: a bulk load's hot loop.
    for path, _, row, new in changes:
        title, description = row.title, row.description
        if title is not None:
            titles[path] = title
        elif new:
            untitled.append(path)
        if description is not None:
            descriptions[path] = description
        elif new:
            undescribed.append(path)
    forgetting: dict[str, list[str]] = {}
    for key, known, unknown in zip(
        keys, (titles, descriptions), (untitled, undescribed), strict=True
    ):
        if unknown:
            forgetting[key] = unknown
        if known:
            pipe.hset(key, mapping=known)
    if forgetting:  # both hashes in one call: a script's run costs Redis too
        fields = [nul_ended(paths) for paths in forgetting.values()]
        evaluate(pipe, lua.FORGET, list(forgetting), fields)


def _nothing(pipe: Pipeline) -> None:
    """The commands of a write that changes no row (it bumps meta)."""


def _info(
    epoch: bytes | None, number: int, packed: bytes | None, section: bytes | None
) -> PartInfo | None:
    summary = _Summary.unpack(packed)
    if summary.urls <= 0 or epoch is None:  # no epoch: data lost, versions unknown
        return None
    return PartInfo.from_row(
        text(epoch),
        number,
        summary.urls,
        summary.lastmod,
        summary.version,
        summary.changed,
        text(section),
    )
