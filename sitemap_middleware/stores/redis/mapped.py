"""The site map's order kept with the pages (stores.contract.Mapped): each placed
row's place by path, its two members (by title, and newest first) in a sorted set
of its group, the groups counted; a page of the map read by rank in one script.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import Any

from ...model import UNDATED_SECONDS
from ...places import Place, places
from ..base import Placing
from ..contract import Listed, MapCount, MapSpan
from ..records import Change
from .client import Key, Pipeline, RedisBase, Work, evaluate, unpack
from .scripts import HELPERS

# A dated member's prefix: newest first in byte order while a lastmod stays
# below this (epoch seconds: any year a date can hold).
_SHIFT = 2**62

# A span of the site map (stores.contract.Mapped.map_rows), read by rank: the
# members of one kind (ARGV[1]: 'k' by title, 'd' newest first; each row has
# one of each in its sorted set, the 'd' ones first) of the first set (KEYS[5],
# a group's pages) merged with those of the sets after it (its loose pages, the
# loose pages of the groups it takes in: a few), ARGV[2] on, at most ARGV[3]
# (-1: all). The few are gathered in KEYS[1] (deleted after), where Redis sorts
# them; each one's place among the first set's is counted, never a member read
# beyond the span. Returns the paths, and their rows, titles and descriptions
# (KEYS[2], KEYS[3], KEYS[4]).
MAP_ROWS = (
    HELPERS
    + """
local kind, offset, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local main = KEYS[5]
local n = redis.call('zcard', main) / 2
local skip = kind == 'k' and n or 0
local few, m = {}, 0
if #KEYS > 5 then
  for i = 6, #KEYS, 999 do
    local chunk = {unpack(KEYS, i, math.min(i + 998, #KEYS))}
    redis.call('zunionstore', KEYS[1], #chunk + 1, KEYS[1], unpack(chunk))
  end
  m = redis.call('zcard', KEYS[1]) / 2
  if m > 0 then
    local first = kind == 'k' and m or 0
    few = redis.call('zrange', KEYS[1], first, first + m - 1)
  end
  redis.call('del', KEYS[1])
end
local stop = n + m
if limit >= 0 then stop = math.min(stop, offset + limit) end
local at = {}
for j = 1, m do
  at[j] = j - 1 + redis.call('zlexcount', main, '-', '(' .. few[j]) - skip
end
local a = 0
while a < m and at[a + 1] < offset do a = a + 1 end
local first = offset - a
local ranked = {}
if first < n and stop > offset then
  local last = math.min(n - 1, first + stop - offset - 1)
  ranked = redis.call('zrange', main, skip + first, skip + last)
end
local paths, j, k = {}, a + 1, 1
for i = offset, stop - 1 do
  local member
  if j <= m and at[j] == i then
    member, j = few[j], j + 1
  else
    member, k = ranked[k], k + 1
  end
  local cut = string.find(member, '\\0\\0', 1, true)
  paths[#paths + 1] = string.sub(member, cut + 2)
end
if #paths == 0 then return {{}, {}, {}, {}} end
return {paths, hmget(KEYS[2], paths), hmget(KEYS[3], paths), hmget(KEYS[4], paths)}
"""
)
# A write's moves on the site map (redis/mapped.py): each sorted set's members
# leaving and coming, the places kept and dropped, the counts' and heads'
# deltas. KEYS: places, counts, heads, then the sorted sets. ARGV: how many
# members leave and come in each set ("2 2 0 2 ..."); how many places are kept,
# dropped, counts and heads changed; the lengths of the strings (members and
# places hold NULs) and the strings joined, in that order.
MOVE = (
    HELPERS
    + """
local strings, at, blob = {}, 1, ARGV[4]
for size in string.gmatch(ARGV[3], '%d+') do
  local stop = at + tonumber(size)
  strings[#strings + 1] = string.sub(blob, at, stop - 1)
  at = stop
end
local taken = 0
local function take(n)
  local out = {}
  for i = 1, n do out[i] = strings[taken + i] end
  taken = taken + n
  return out
end
local key = 3
for leaving, coming in string.gmatch(ARGV[1], '(%d+) (%d+)') do
  key = key + 1
  call('zrem', KEYS[key], take(tonumber(leaving)))
  local scored = {}
  for _, member in ipairs(take(tonumber(coming))) do
    scored[#scored + 1] = 0
    scored[#scored + 1] = member
  end
  call('zadd', KEYS[key], scored)
end
local kept, dropped, counts, heads = string.match(ARGV[2], '(%d+) (%d+) (%d+) (%d+)')
call('hset', KEYS[1], take(2 * tonumber(kept)))
call('hdel', KEYS[1], take(tonumber(dropped)))
for tally, n in ipairs({counts, heads}) do
  local deltas = take(2 * tonumber(n))
  for i = 1, #deltas, 2 do
    redis.call('hincrby', KEYS[tally + 1], deltas[i], deltas[i + 1])
  end
end
return 0
"""
)


class MapMixin(Placing, RedisBase):
    """A row's place in the ``place`` hash (path -> packed place); in the
    sorted set of its group, own flag and loose flag, two members of score
    0, so that Redis orders them by their bytes: ``k`` + its lex member
    (its title's natural key, NULs escaped, then its path: the map's order)
    and ``d`` + its date + the same (newest first, undated last); the rows a
    group holds and the groups a row lies deeper in, counted in two hashes.
    Rows without a place are found by a scan of the rows (:meth:`place_rows`)."""

    _map_counts = Key("mapcount")  # own, loose and group -> rows
    _map_heads = Key("maphead")  # group -> rows deeper in it
    _scan_at = 0  # where the scan for rows without a place goes on

    def _bucket(self, field: bytes) -> bytes:
        return self.prefix.encode() + b"map:" + field

    def _place(
        self, pipe: Pipeline, changes: Sequence[Change], old: Mapping[str, bytes]
    ) -> None:
        found = self.places_of(changes)
        if found is None and not old:
            return  # no place kept, none to drop: a store whose map nobody reads
        new: dict[str, bytes | None] = dict.fromkeys(change.path for change in changes)
        if found is not None:
            for change, place in zip(changes, found, strict=True):
                new[change.path] = _pack(place, change.row.lastmod)
        self._move(pipe, new, old)

    def _unplace(
        self, pipe: Pipeline, paths: Iterable[str], old: Mapping[str, bytes]
    ) -> None:
        self._move(pipe, dict.fromkeys(path for path in paths if path in old), old)

    def _move(
        self, pipe: Pipeline, new: Mapping[str, bytes | None], old: Mapping[str, bytes]
    ) -> None:
        """Queue the commands that take rows from their ``old`` places (by
        path; a row not there had none) to their ``new`` ones (``None``:
        none)."""
        adds: dict[bytes, list[bytes]] = {}
        gone: dict[bytes, list[bytes]] = {}
        counts: dict[bytes, int] = {}
        heads: dict[bytes, int] = {}
        kept: list[bytes] = []
        dropped: list[bytes] = []
        for path, after in new.items():
            before = old.get(path)
            if before == after:
                continue
            if before is not None:
                field, head, members = _members(path, before)
                gone.setdefault(field, []).extend(members)
                _add(counts, field, -1)
                _add(heads, head, -1)
            if after is not None:
                field, head, members = _members(path, after)
                adds.setdefault(field, []).extend(members)
                _add(counts, field, 1)
                _add(heads, head, 1)
                kept += (path.encode(), after)
            else:
                dropped.append(path.encode())
        if not kept and not dropped:
            return
        # One script a write, its strings in two arguments (MOVE): a
        # command's arguments cost redis-py a microsecond or two each.
        keys: list[str | bytes] = [self._places, self._map_counts, self._map_heads]
        shape: list[bytes] = []
        strings: list[bytes] = []
        for field in adds | gone:
            keys.append(self._bucket(field))
            leaving, coming = gone.get(field, []), adds.get(field, [])
            shape.append(b"%d %d" % (len(leaving), len(coming)))
            strings += leaving
            strings += coming
        tallies = [
            [(name, b"%d" % delta) for name, delta in deltas.items() if delta]
            for deltas in (counts, heads)
        ]
        strings += kept
        strings += dropped
        for pairs in tallies:
            strings += chain.from_iterable(pairs)
        sizes = (len(kept) // 2, len(dropped), len(tallies[0]), len(tallies[1]))
        evaluate(
            pipe,
            MOVE,
            keys,
            [
                b" ".join(shape),
                b"%d %d %d %d" % sizes,
                b" ".join(b"%d" % len(piece) for piece in strings),
                b"".join(strings),
            ],
        )

    def place_rows(self, limit: int) -> int:
        """Rows without a place, found by a scan of the rows that goes on
        where the last one stopped (one step of the scan may find a few
        more than ``limit``); ``place_due`` goes off at its end. There, the
        places of rows a worker of an earlier release removed, if any, are
        found and dropped."""
        client = self._connection().redis
        cursor, wanted = _missing(
            client, self._rows, self._places, self._scan_at, limit
        )
        self._scan_at = cursor
        if cursor == 0 and client.hlen(self._places) > client.hlen(self._rows):
            wanted += _missing(client, self._places, self._rows, 0, None)[1]
        done = self._transact(partial(self._placing, wanted)) if wanted else 0
        if cursor == 0:
            self.place_due = False
        return done

    def _placing(self, paths: list[str], pipe: Pipeline, token: str) -> Work | None:
        """Place those of ``paths`` stored without a place, and drop the
        places of those not stored, as read under the write's WATCH."""
        read = [pipe.hmget(key, paths) for key in (self._rows, self._places)]
        titles = pipe.hmget(self._titles, paths)
        old: dict[str, bytes] = {}
        todo = []
        for path, row, at, title in zip(paths, *read, titles, strict=True):
            if row is None and at is not None:
                old[path] = at
            elif row is not None and at is None:
                todo.append((path, unpack(row), _text(title)))
        if not old and not todo:
            return None
        found = places(
            [path for path, _, _ in todo],
            [row[3] for _, row, _ in todo],
            [title for _, _, title in todo],
        )
        new: dict[str, bytes | None] = dict.fromkeys(old)
        for (path, row, _), place in zip(todo, found, strict=True):
            new[path] = _pack(place, row[1])
        return len(todo), partial(self._move, new=new, old=old)

    def map_counts(self) -> list[MapCount] | None:
        pipe = self._connection().redis.pipeline(transaction=True)
        pipe.hgetall(self._map_counts).hgetall(self._map_heads)
        counts, heads, placed, total = (
            pipe.hlen(self._places).hlen(self._rows).execute()
        )
        if placed != total:
            # A row without a place (or a place without its row, an earlier
            # release's removal): the map is arranged until the writer mends it.
            self.place_due = True
            return None
        groups: dict[tuple[str, bool], list[int]] = {}
        for field, n in counts.items():
            if int(n) > 0:
                own, loose = field[:1] == b"1", field[1:2] == b"1"
                group = field[2:].decode("utf-8", "surrogatepass")
                tally = groups.setdefault((group, own), [0, 0])
                tally[0] += int(n)
                tally[1] += int(n) if loose else 0
        deep = {
            head.decode("utf-8", "surrogatepass")
            for head, n in heads.items()
            if int(n) > 0
        }
        return [
            MapCount(group, own, pages, loose, group in deep)
            for (group, own), (pages, loose) in groups.items()
        ]

    def map_rows(
        self, span: MapSpan, offset: int = 0, limit: int | None = None
    ) -> list[Listed]:
        group, own, loose, joined, newest = span
        fields = [_field(group, own, False)]
        if loose:
            fields.append(_field(group, own, True))
        fields += [
            _field(name, mine, True) for name in joined for mine in (True, False)
        ]
        keys: list[str | bytes] = [self._bucket(b"tmp"), self._rows, self._titles]
        keys += (self._descriptions, *map(self._bucket, fields))
        paths, rows, titles, abouts = self._script(
            MAP_ROWS,
            keys,
            [b"d" if newest else b"k", offset, -1 if limit is None else limit],
        )
        found: list[Listed] = []
        for path, row, title, about in zip(paths, rows, titles, abouts, strict=True):
            if row:  # a row an earlier release removed: its place stays
                _, lastmod, _, route, *_ = unpack(row)
                found.append(
                    (path.decode(), route, _text(title), _text(about), lastmod)
                )
        return found


def _add(tally: dict[bytes, int], name: bytes | None, delta: int) -> None:
    if name is not None:
        tally[name] = tally.get(name, 0) + delta


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


def _field(group: str, own: bool, loose: bool) -> bytes:
    """A group's counts field, and its sorted set's name after ``map:``."""
    return b"%d%d%b" % (own, loose, group.encode("utf-8", "surrogatepass"))


def _pack(place: Place, lastmod: int) -> bytes:
    """A row's place as the ``place`` hash holds it: its counts field, its
    head (after a mark of whether it has one), the lastmod it was placed
    with and its key, NUL-separated (the key last: it holds NULs)."""
    group, own, loose, head, key = place
    deeper = b"-" if head is None else b"+" + head.encode("utf-8", "surrogatepass")
    return b"%b\0%b\0%d\0%b" % (_field(group, own, loose), deeper, lastmod, key)


def _members(
    path: str, packed: bytes
) -> tuple[bytes, bytes | None, tuple[bytes, bytes]]:
    """A packed place's counts field, head, and its row's two members."""
    field, deeper, lastmod, key = packed.split(b"\0", 3)
    # The key's NULs escaped, ended by two: the tuple (key, path) in bytes.
    lex = key.replace(b"\0", b"\0\1") + b"\0\0" + path.encode()
    dated = int(lastmod)
    if dated <= UNDATED_SECONDS:
        by_date = b"d1" + lex
    else:
        by_date = b"d0%016x%b" % (_SHIFT - dated, lex)
    head = deeper[1:] if deeper[:1] == b"+" else None
    return field, head, (b"k" + lex, by_date)


def _missing(
    client: Any, key: str, other: str, cursor: int, limit: int | None
) -> tuple[int, list[str]]:
    """The fields of hash ``key`` that ``other`` lacks, scanned from
    ``cursor`` until ``limit`` are found (``None``: all) or the scan ends;
    the cursor to go on from (0: the end)."""
    found: list[str] = []
    while limit is None or len(found) < limit:
        cursor, fields = client.hscan(key, cursor, count=limit or 1000)
        names = list(fields)
        if names:
            there = client.hmget(other, names)
            found += [n.decode() for n, at in zip(names, there, strict=True) if not at]
        if cursor == 0:
            break
    return cursor, found
