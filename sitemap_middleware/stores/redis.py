"""``redis://host:port/db``: one sitemap shared by the workers of many machines through
Redis, every key under one prefix whose hash tag keeps them in one Cluster slot.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import chain
from json.encoder import encode_basestring_ascii
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.exceptions import NoScriptError
from redis.retry import Retry

from ..errors import StoreError
from .base import (
    MAX_PAGE_BYTES,
    Entry,
    PageInfo,
    Plan,
    Row,
    StoreBase,
    batches,
    now,
    to_datetime,
    weight,
)

logger = logging.getLogger("sitemap_middleware")

# 2: rows hold no seq and their fragment lives beside them; summaries hold bytes.
SCHEMA_VERSION = "2"
# Members read per round trip when streaming a page, and fields a command.
CHUNK = 2000
# Optimistic transactions retried this often before a batch fails.
TRIES = 20
# The lock of writers that collided: how long it may be held (a killed holder
# blocks the others that long at most) and how long to wait for it.
LOCK_TTL_MS = 5000
LOCK_WAIT = 10.0
_UNLOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# Lua's unpack() takes at most ~8000 values: scripts call with 1000 at most.
_LUA_HMGET = """
local function hmget(key, fields)
  local values = {}
  for i = 1, #fields, 1000 do
    local part = redis.call('hmget', key, unpack(fields, i, math.min(i + 999, #fields)))
    for k = 1, #part do values[#values + 1] = part[k] end
  end
  return values
end
local function split(joined)
  local items, start = {}, 1
  while true do
    local stop = string.find(joined, '\0', start, true)
    if not stop then return items end
    items[#items + 1] = string.sub(joined, start, stop - 1)
    start = stop + 1
  end
end
"""
# Every read a write needs, in one round trip inside the WATCH: the lock's
# holder, seq, the last page, (path, row, fragment) of each stored path of the
# batch, and (page, summary) of their pages and of the last page.
# KEYS: meta, lock, rows, fragments, pages. ARGV[1]: the paths, each ending in NUL.
_READ = (
    _LUA_HMGET
    + """
local meta = redis.call('hmget', KEYS[1], 'seq', 'last')
local paths = split(ARGV[1])
local rows = hmget(KEYS[3], paths)
local hits, pages, wanted = {}, {}, {}
for k = 1, #paths do
  if rows[k] then
    hits[#hits + 1] = k
    pages[string.match(rows[k], '^%[(%d+)')] = true
  end
end
local found = {}
if #hits > 0 then
  local names = {}
  for k = 1, #hits do names[k] = paths[hits[k]] end
  local fragments = hmget(KEYS[4], names)
  for k = 1, #hits do
    found[#found + 1] = names[k]
    found[#found + 1] = rows[hits[k]]
    found[#found + 1] = fragments[k] or ''
  end
end
if meta[2] then pages[meta[2]] = true end
for page in pairs(pages) do wanted[#wanted + 1] = page end
local summaries = {}
local values = hmget(KEYS[5], wanted)
for k = 1, #wanted do
  if values[k] then
    summaries[#summaries + 1] = wanted[k]
    summaries[#summaries + 1] = values[k]
  end
end
return {redis.call('get', KEYS[2]) or '', meta[1] or '0', meta[2] or '0', found,
        summaries}
"""
)
# One run of a page (keyset on seq, atomic, so no row is seen half-removed),
# joined in Redis: a run costs the client one bulk reply, not two per URL.
# KEYS: the page's sorted set, the hash to read. ARGV: the seq to start after,
# how many, 'f' (fragments joined) or 'e' (paths and rows as JSON arrays).
# Returns {seq of the last member, members read, payload...}.
_RUN = """
local members = redis.call('zrangebyscore', KEYS[1], '(' .. ARGV[1], '+inf',
                           'LIMIT', 0, tonumber(ARGV[2]))
local n = #members
if n == 0 then return {ARGV[1], 0} end
local last = redis.call('zscore', KEYS[1], members[n])
local values = redis.call('hmget', KEYS[2], unpack(members))
local out = {}
if ARGV[3] == 'f' then
  for k = 1, n do
    if values[k] then out[#out + 1] = values[k] end
  end
  return {last, n, table.concat(out)}
end
for k = 1, n do out[k] = values[k] or 'null' end
return {last, n, cjson.encode(members), '[' .. table.concat(out, ',') .. ']'}
"""
# The newest lastmod of a page's rows but those leaving it, computed where the
# rows are instead of shipping up to 50,000 of them.
# KEYS: the page's sorted set, rows. ARGV[1]: the leaving paths, each ending in NUL.
_NEWEST = (
    _LUA_HMGET
    + """
local leaving = {}
for _, path in ipairs(split(ARGV[1])) do leaving[path] = true end
local newest, start = 0, 0
while true do
  local members = redis.call('zrange', KEYS[1], start, start + 999)
  if #members == 0 then return newest end
  local rows = hmget(KEYS[2], members)
  for k = 1, #members do
    if rows[k] and not leaving[members[k]] then
      local lastmod = tonumber(string.match(rows[k], '^%[%d+,(%-?%d+)'))
      if lastmod > newest then newest = lastmod end
    end
  end
  start = start + 1000
end
"""
)

# redis-py types its replies as unions over its sync and async clients.
Pipeline = Any
# What a write does once its reads are done: (rows changed, packed commands).
_Work = tuple[int, Iterator[bytes]]
# A stored row is JSON [page, lastmod, fingerprint, route]: page and lastmod
# first, where the scripts above read them with one pattern match.
_unpack = json.loads  # takes bytes too
_MULTI = b"*1\r\n$5\r\nMULTI\r\n"
_EXEC = b"*1\r\n$4\r\nEXEC\r\n"


class _Script:
    """A Lua script run by EVALSHA, sent in full only when the server lacks it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, client: Any, keys: Sequence[str], *args: Any) -> Any:
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return client.eval(self.source, len(keys), *keys, *args)


_read = _Script(_READ)
_run = _Script(_RUN)
_newest = _Script(_NEWEST)


class RedisStore(StoreBase):
    """Rows and fragments in two hashes keyed by path, one sorted set per page
    (score: first-seen ``seq``), page summaries in a hash, and a meta hash every
    write bumps, so that a batch is an optimistic transaction: WATCH meta, read
    (one script), plan, MULTI/EXEC. Pages are read by a script that joins each
    run of fragments in Redis.

    :param url: ``redis://[[user]:password@]host[:port][/db]`` or ``rediss://``.
    :param page_size: URLs per sitemap page (at most 50,000).
    :param page_bytes: uncompressed bytes per page (at most 50 MiB).
    :param prefix: prefix of every key; must hold a hash tag such as ``{sitemap}``.
    :param timeout: seconds a command may take; ``connect_timeout`` to connect.
    """

    def __init__(
        self,
        url: str,
        page_size: int = 50_000,
        prefix: str = "{sitemap}:",
        timeout: float = 1.0,
        connect_timeout: float = 1.0,
        page_bytes: int = MAX_PAGE_BYTES,
    ) -> None:
        super().__init__(page_size, page_bytes)
        opening = prefix.find("{")
        if opening < 0 or prefix.find("}", opening) <= opening + 1:
            raise ValueError(
                f"prefix {prefix!r} needs a hash tag such as '{{sitemap}}:'"
            )
        self.url, self.prefix = url, prefix
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self._meta, self._rows, self._fragments, self._pages, self._lock_key = (
            prefix + k for k in ("meta", "url", "fragment", "pages", "lock")
        )
        self._lock = threading.Lock()
        self._redis: Any = None
        self._pid = 0
        self._policy_checked = False

    def _page(self, number: int) -> str:
        return f"{self.prefix}page:{number}"

    def _client(self) -> Any:
        # A client inherited across fork must not be used by the child: make a new
        # one (redis-py closes the parent's sockets only in the parent).
        client = self._redis
        if client is not None and self._pid == os.getpid():
            return client
        with self._lock:
            if self._redis is None or self._pid != os.getpid():
                client = redis.Redis.from_url(
                    self.url,
                    socket_timeout=self.timeout,
                    socket_connect_timeout=self.connect_timeout,
                    # A retried EXEC after a timeout could apply a batch twice over
                    # another writer's; a failed batch is the caller's to retry.
                    retry=Retry(NoBackoff(), 0),
                    # Fragments are served as the bytes stored: nothing is decoded
                    # but the few strings this module decodes itself.
                    decode_responses=False,
                )
                with _errors():
                    self._check(client)
                self._redis, self._pid = client, os.getpid()
            return self._redis

    def _check(self, client: Any) -> None:
        pipe = client.pipeline(transaction=True)
        pipe.hsetnx(self._meta, "schema", SCHEMA_VERSION)
        pipe.hsetnx(self._meta, "epoch", secrets.token_hex(4))
        pipe.hget(self._meta, "schema")
        schema = _text(pipe.execute()[-1])
        if schema != SCHEMA_VERSION:
            raise StoreError(
                f"{self._meta} holds sitemap schema {schema}, expected {SCHEMA_VERSION}"
            )
        if self._policy_checked:
            return
        self._policy_checked = True
        try:
            reply = client.config_get("maxmemory-policy")
        except redis.RedisError:  # CONFIG may be disabled or renamed
            return
        policy = _text(reply.get("maxmemory-policy", reply.get(b"maxmemory-policy")))
        # Our keys have no TTL: only noeviction and volatile-* never drop them.
        if policy and policy != "noeviction" and not policy.startswith("volatile-"):
            logger.warning(
                "Redis maxmemory-policy is %r: when memory runs out Redis may evict "
                "sitemap entries without a trace; use 'noeviction' for the sitemap's "
                "Redis",
                policy,
            )

    def _transact(self, work: Callable[[Pipeline, str], _Work | None]) -> int:
        """Run ``work`` (its reads, then the commands it returns) until no other
        writer committed in between; it returns ``None`` when it has nothing to
        write."""
        with _errors():
            client, token = self._client(), None
            try:
                with client.pipeline(transaction=True) as pipe:
                    for _ in range(TRIES):
                        try:
                            pipe.watch(self._meta, self._lock_key)
                            todo = work(pipe, token or "")
                            if todo is None:
                                return 0
                            changed, commands = todo
                            bump = _command(b"HINCRBY", self._meta, b"writes", b"1")
                            _execute(pipe.connection, chain(commands, [bump]))
                            return changed
                        except redis.WatchError:
                            pipe.reset()
                            if token is None:
                                token = self._wait_turn(client)
            finally:
                if token is not None:
                    client.eval(_UNLOCK, 1, self._lock_key, token)
        raise StoreError(f"gave up after {TRIES} conflicting writes to {self._meta}")

    def _wait_turn(self, client: Any) -> str:
        """Take the writers' lock. Writers take it only after a collision, and
        write without it only while nobody holds it: under load they queue instead
        of colliding again (optimistic retries alone starve). Correctness never
        depends on it: WATCH on the meta key still guards every write."""
        token, delay = secrets.token_hex(8), 0.0005
        deadline = time.monotonic() + LOCK_WAIT
        while not client.set(self._lock_key, token, nx=True, px=LOCK_TTL_MS):
            if time.monotonic() > deadline:
                raise StoreError(f"waited {LOCK_WAIT} s for {self._lock_key}")
            time.sleep(random.uniform(0, delay))
            delay = min(2 * delay, 0.01)
        return token

    def _read(self, pipe: Pipeline, paths: Collection[str], token: str) -> _State:
        """What a write needs to know, read under the WATCH (one round trip)."""
        holder, seq, last, found, summaries = _read(
            pipe,
            (self._meta, self._lock_key, self._rows, self._fragments, self._pages),
            _nul_ended(paths),
        )
        if holder and holder.decode() != token:
            raise redis.WatchError  # another's turn: wait for ours
        rows: dict[str, tuple[int, Row]] = {}
        for i in range(0, len(found), 3):
            page, lastmod, fingerprint, route = _unpack(found[i + 1])
            rows[found[i].decode()] = (
                page,
                (lastmod, fingerprint, route, found[i + 2]),
            )
        pages = {
            int(summaries[i]): _summary(summaries[i + 1])
            for i in range(0, len(summaries), 2)
        }
        return _State(int(seq), int(last), rows, pages)

    def upsert(self, entries: Iterable[Entry]) -> int:
        return sum(
            self._transact(partial(self._upsert, batch)) for batch in batches(entries)
        )

    def _upsert(
        self, batch: dict[str, Entry], pipe: Pipeline, token: str
    ) -> _Work | None:
        current = now()
        state = self._read(pipe, batch, token)
        sizes = {number: (s[0], s[1]) for number, s in state.pages.items()}
        # Planned in full first, so that a bad entry changes nothing.
        todo = self._plan(batch, state.rows, sizes, state.last, current)
        if not todo.changes:
            return None
        moved = self._unlink(
            pipe, {path: state.rows[path] for path in todo.moved}, state.pages, current
        )
        for number, (urls, size, newest) in todo.pages.items():
            summary = state.pages.setdefault(number, [0, 0, 0, 0, 0])
            summary[0] += urls
            summary[1] += size
            summary[2] = max(summary[2], newest)
            summary[3] += 1
            summary[4] = current
        touched = set(todo.pages) | set(moved)
        return len(todo.changes), self._writes(todo, state, moved, touched)

    def _writes(
        self,
        todo: Plan,
        state: _State,
        moved: dict[int, list[str]],
        touched: set[int],
    ) -> Iterator[bytes]:
        """An upsert's commands, packed as they are sent (see _execute)."""
        for number, paths in moved.items():
            yield from _commands(b"ZREM", self._page(number), _fields(paths), 1)
        # The hot loop of a bulk load: each argument is packed to RESP here,
        # once, and the row's JSON is formatted by hand.
        seq = state.seq
        routes: dict[str | None, bytes] = {None: b"null"}  # a batch has a few
        for start in range(0, len(todo.changes), CHUNK):
            rows: list[bytes] = []  # packed (path, row) pairs
            fragments: list[bytes] = []  # packed (path, fragment) pairs
            added: dict[int, list[bytes]] = {}  # page -> packed (seq, path) pairs
            for path, page, (lastmod, fingerprint, route, piece), new in todo.changes[
                start : start + CHUNK
            ]:
                key = path.encode()
                size = len(key)
                known = routes.get(route)
                if known is None:
                    known = routes[route] = _json(route)
                row = b"[%d,%d,%b,%b]" % (page, lastmod, _json(fingerprint), known)
                rows.append(b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (size, key, len(row), row))
                fragments.append(
                    b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (size, key, len(piece), piece)
                )
                if new:
                    seq += 1
                    score = b"%d" % seq
                    added.setdefault(page, []).append(
                        b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(score), score, size, key)
                    )
            yield from _commands(b"HSET", self._rows, rows, 2)
            yield from _commands(b"HSET", self._fragments, fragments, 2)
            for number, members in added.items():
                yield from _commands(b"ZADD", self._page(number), members, 2)
        yield from self._summaries(state.pages, touched)
        yield _command(
            b"HSET", self._meta, b"seq", b"%d" % seq, b"last", b"%d" % todo.last_page
        )
        # Redis may have lost its data since this process connected (a restart
        # without persistence): a new epoch keeps page versions from repeating.
        yield _command(b"HSETNX", self._meta, b"schema", SCHEMA_VERSION.encode())
        yield _command(b"HSETNX", self._meta, b"epoch", secrets.token_hex(4).encode())

    def _unlink(
        self,
        pipe: Pipeline,
        rows: Mapping[str, tuple[int, Row]],
        pages: dict[int, list[int]],
        current: int,
    ) -> dict[int, list[str]]:
        """Take stored rows out of their pages' summaries, reading what that
        needs; returns the paths that leave each page, for the caller to take
        out of its sorted set."""
        leaving: dict[int, list[str]] = {}
        for path, (number, _) in rows.items():
            leaving.setdefault(number, []).append(path)
        for number, paths in leaving.items():
            summary = pages.setdefault(number, [0, 0, 0, 0, 0])
            summary[0] -= len(paths)
            summary[1] -= sum(weight(rows[path][1][3]) for path in paths)
            if summary[0] <= 0:
                summary[2] = 0
            elif max(rows[path][1][0] for path in paths) >= summary[2]:
                # The newest row may be leaving: find the newest of those left.
                keys = (self._page(number), self._rows)
                summary[2] = int(_newest(pipe, keys, _nul_ended(paths)))
            summary[3] += 1
            summary[4] = current
        return leaving

    def _summaries(
        self, pages: dict[int, list[int]], numbers: Iterable[int]
    ) -> Iterator[bytes]:
        summaries = [
            _bulk(b"%d" % number) + _bulk(b"%d %d %d %d %d" % tuple(pages[number]))
            for number in sorted(numbers)
        ]
        return _commands(b"HSET", self._pages, summaries, 2)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        return self._transact(partial(self._remove, wanted))

    def _remove(self, wanted: list[str], pipe: Pipeline, token: str) -> _Work | None:
        state = self._read(pipe, wanted, token)
        if not state.rows:
            return None
        leaving = self._unlink(pipe, state.rows, state.pages, now())
        gone = _fields(state.rows)
        commands = [
            *(
                command
                for number, paths in leaving.items()
                for command in _commands(b"ZREM", self._page(number), _fields(paths), 1)
            ),
            *_commands(b"HDEL", self._rows, gone, 1),
            *_commands(b"HDEL", self._fragments, gone, 1),
            *self._summaries(state.pages, leaving),
        ]
        return len(state.rows), iter(commands)

    def count(self) -> int:
        with _errors():
            return int(self._client().hlen(self._rows))

    def pages(self) -> list[PageInfo]:
        with _errors():
            pipe = self._client().pipeline(transaction=False)
            epoch, summaries = (
                pipe.hget(self._meta, "epoch").hgetall(self._pages).execute()
            )
        infos = (self._info(epoch, int(n), packed) for n, packed in summaries.items())
        return sorted((i for i in infos if i), key=lambda info: info.number)

    def page(self, number: int) -> PageInfo | None:
        with _errors():
            pipe = self._client().pipeline(transaction=False)
            epoch, packed = (
                pipe.hget(self._meta, "epoch").hget(self._pages, str(number)).execute()
            )
        return self._info(epoch, number, packed)

    @staticmethod
    def _info(
        epoch: bytes | None, number: int, packed: bytes | None
    ) -> PageInfo | None:
        urls, _, lastmod, version, changed = _summary(packed)
        if urls <= 0 or epoch is None:  # no epoch: data lost, versions unknown
            return None
        return PageInfo.from_row(_text(epoch), number, urls, lastmod, version, changed)

    def _runs(self, number: int, hash_key: str, mode: bytes) -> Iterator[list[Any]]:
        """A page's members in runs of CHUNK, by keyset on seq (never by rank)."""
        keys, after = (self._page(number), hash_key), b"0"
        while True:
            with _errors():
                reply = _run(self._client(), keys, after, CHUNK, mode)
            if reply[1]:
                yield reply
            if reply[1] < CHUNK:
                return
            after = reply[0]

    def fragments(self, number: int) -> Iterator[bytes]:
        for reply in self._runs(number, self._fragments, b"f"):
            if reply[2]:
                yield reply[2]

    def entries(self, number: int) -> Iterator[Entry]:
        dates: dict[int, datetime] = {}  # rows of a bulk load share their lastmod
        for reply in self._runs(number, self._rows, b"e"):
            for path, row in zip(_unpack(reply[2]), _unpack(reply[3]), strict=True):
                if row is None:
                    continue
                _, lastmod, fingerprint, route = row
                when = dates.get(lastmod)
                if when is None:
                    when = dates[lastmod] = to_datetime(lastmod)
                yield Entry(path, when, fingerprint, route=route)

    def close(self) -> None:
        with self._lock:
            if self._redis is not None and self._pid == os.getpid():
                self._redis.close()
            self._redis = None


@dataclass(slots=True)
class _State:
    """What a write read under its WATCH."""

    seq: int
    last: int
    rows: dict[str, tuple[int, Row]]  # path -> (page, row)
    pages: dict[int, list[int]]  # number -> [urls, bytes, lastmod, version, changed]


def _execute(conn: Any, commands: Iterable[bytes]) -> None:
    """MULTI, the commands and EXEC on the watching connection.

    The commands are packed by this module, not by redis-py (about 0.7 µs an
    argument, longer than Redis takes to store it, and a bulk load sends six a
    URL), and each is sent once packed, so a batch is never held packed in
    full. Whatever goes wrong before EXEC's reply is read, the connection is
    closed: Redis then drops the transaction, and no reply is left unread.
    """
    try:
        conn.send_packed_command([_MULTI])
        queued = 0
        for command in commands:
            conn.send_packed_command([command])
            queued += 1
        conn.send_packed_command([_EXEC])
        for _ in range(queued + 1):
            conn.read_response()  # +OK, then +QUEUED for each command
        replies = conn.read_response()
    except BaseException:
        conn.disconnect()
        raise
    if replies is None:
        raise redis.WatchError
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply


def _command(*args: str | bytes) -> bytes:
    """One command in RESP."""
    return b"*%d\r\n" % len(args) + b"".join(
        [_bulk(arg.encode() if isinstance(arg, str) else arg) for arg in args]
    )


def _commands(
    command: bytes, key: str, items: list[bytes], width: int
) -> Iterator[bytes]:
    """``command key`` over items of ``width`` packed arguments each, in
    commands of at most CHUNK items."""
    head = _bulk(command) + _bulk(key.encode())
    for i in range(0, len(items), CHUNK):
        part = items[i : i + CHUNK]
        yield b"*%d\r\n%b%b" % (2 + width * len(part), head, b"".join(part))


def _fields(paths: Iterable[str]) -> list[bytes]:
    return [_bulk(path.encode()) for path in paths]


def _bulk(arg: bytes) -> bytes:
    """One argument in RESP."""
    return b"$%d\r\n%b\r\n" % (len(arg), arg)


def _nul_ended(paths: Collection[str]) -> bytes:
    """Paths for a script, each ended by a NUL. A path holding one cannot be
    stored (render refuses it), and is left out rather than read as two."""
    joined = "\0".join(paths)
    if joined.count("\0") >= len(paths):
        joined = "\0".join([path for path in paths if "\0" not in path])
    return joined.encode() + b"\0" if joined else b""


def _json(value: str | None) -> bytes:
    return b"null" if value is None else encode_basestring_ascii(value).encode()


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as exc:
        raise StoreError(f"Redis: {exc}") from exc


def _text(value: Any) -> str:
    """A reply as text: this module's client decodes nothing itself."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _summary(packed: bytes | None) -> list[int]:
    """A page summary: urls, bytes, lastmod, version, changed."""
    if not packed:
        return [0, 0, 0, 0, 0]
    return [int(n) for n in packed.split()]
