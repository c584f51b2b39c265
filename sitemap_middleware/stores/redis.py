"""``redis://host:port/db``: one sitemap shared by the workers of many machines through
Redis, every key under one prefix whose hash tag keeps them in one Cluster slot.
"""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from itertools import chain
from json.encoder import encode_basestring_ascii
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..errors import StoreError
from . import lua, resp
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
# Members read per round trip when streaming a page, and rows planned per
# round of packed commands.
CHUNK = 2000
# Optimistic transactions retried this often before a batch fails.
TRIES = 20
# The lock of writers that collided: how long it may be held (a killed holder
# blocks the others that long at most) and how long to wait for it.
LOCK_TTL_MS = 5000
LOCK_WAIT = 10.0
# redis-py types its replies as unions over its sync and async clients.
Pipeline = Any
# What a write does once its reads are done: (rows changed, packed commands).
_Work = tuple[int, Iterator[bytes]]
# A stored row is JSON [page, lastmod, fingerprint, route]: page and lastmod
# first, where the scripts above read them with one pattern match.
_unpack = json.loads  # takes bytes too


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
        (
            self._meta,
            self._rows,
            self._fragments,
            self._pages,
            self._lock_key,
            self._routes,
        ) = (prefix + k for k in ("meta", "url", "fragment", "pages", "lock", "routes"))
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
                    self._count_routes(client)
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

    def _count_routes(self, client: Any) -> None:
        """Make sure the per-route counts (the ``routes`` hash, kept by every
        write in its MULTI/EXEC) exist: a store written before them has its
        rows counted once, under a WATCH on meta, which every write bumps."""
        if client.hexists(self._meta, "routes"):
            return
        with client.pipeline(transaction=True) as pipe:
            for _ in range(TRIES):
                try:
                    pipe.watch(self._meta)
                    if pipe.hexists(self._meta, "routes"):
                        return
                    counts: dict[str, int] = {}
                    for _, row in pipe.hscan_iter(self._rows, count=1000):
                        route = _unpack(row)[3]
                        if route is not None:
                            counts[route] = counts.get(route, 0) + 1
                    pipe.multi()
                    pipe.delete(self._routes)
                    if counts:
                        pipe.hset(self._routes, mapping=counts)
                    pipe.hset(self._meta, "routes", "1")
                    pipe.execute()
                    return
                except redis.WatchError:
                    pipe.reset()
        raise StoreError(f"gave up counting routes after {TRIES} conflicting writes")

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
                            bump = resp.command(b"HINCRBY", self._meta, b"writes", b"1")
                            resp.execute(pipe.connection, chain(commands, [bump]))
                            return changed
                        except redis.WatchError:
                            pipe.reset()
                            if token is None:
                                token = self._wait_turn(client)
            finally:
                if token is not None:
                    client.eval(lua.UNLOCK, 1, self._lock_key, token)
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
        holder, seq, last, found, summaries = lua.read(
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
        # Per-route counts: a new row adds to its route, an update that
        # changes the route moves it (a moved row keeps its route).
        routes: dict[str, int] = {}
        for path, _, row, _ in todo.changes:
            prior = state.rows.get(path)
            if prior is not None:
                if prior[1][2] == row[2]:
                    continue
                _tally(routes, prior[1][2], -1)
            _tally(routes, row[2], 1)
        return len(todo.changes), chain(
            self._writes(todo, state, moved, touched), self._tallies(routes)
        )

    def _tallies(self, routes: dict[str, int]) -> Iterator[bytes]:
        for route, delta in routes.items():
            if delta:
                yield resp.command(b"HINCRBY", self._routes, route, b"%d" % delta)

    def _writes(
        self,
        todo: Plan,
        state: _State,
        moved: dict[int, list[str]],
        touched: set[int],
    ) -> Iterator[bytes]:
        """An upsert's commands, packed as they are sent (see _execute)."""
        for number, paths in moved.items():
            yield from resp.commands(b"ZREM", self._page(number), resp.fields(paths), 1)
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
            yield from resp.commands(b"HSET", self._rows, rows, 2)
            yield from resp.commands(b"HSET", self._fragments, fragments, 2)
            for number, members in added.items():
                yield from resp.commands(b"ZADD", self._page(number), members, 2)
        yield from self._summaries(state.pages, touched)
        yield resp.command(
            b"HSET", self._meta, b"seq", b"%d" % seq, b"last", b"%d" % todo.last_page
        )
        # Redis may have lost its data since this process connected (a restart
        # without persistence): a new epoch keeps page versions from repeating.
        yield resp.command(b"HSETNX", self._meta, b"schema", SCHEMA_VERSION.encode())
        yield resp.command(
            b"HSETNX", self._meta, b"epoch", secrets.token_hex(4).encode()
        )

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
                summary[2] = int(lua.newest(pipe, keys, _nul_ended(paths)))
            summary[3] += 1
            summary[4] = current
        return leaving

    def _summaries(
        self, pages: dict[int, list[int]], numbers: Iterable[int]
    ) -> Iterator[bytes]:
        summaries = [
            resp.bulk(b"%d" % number)
            + resp.bulk(b"%d %d %d %d %d" % tuple(pages[number]))
            for number in sorted(numbers)
        ]
        return resp.commands(b"HSET", self._pages, summaries, 2)

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
        gone = resp.fields(state.rows)
        commands = [
            *(
                command
                for number, paths in leaving.items()
                for command in resp.commands(
                    b"ZREM", self._page(number), resp.fields(paths), 1
                )
            ),
            *resp.commands(b"HDEL", self._rows, gone, 1),
            *resp.commands(b"HDEL", self._fragments, gone, 1),
            *self._summaries(state.pages, leaving),
        ]
        routes: dict[str, int] = {}
        for _, row in state.rows.values():
            _tally(routes, row[2], -1)
        commands += self._tallies(routes)
        return len(state.rows), iter(commands)

    def count(self, route: str | None = None) -> int:
        with _errors():
            if route is None:
                return int(self._client().hlen(self._rows))
            return int(self._client().hget(self._routes, route) or 0)

    def known(self, paths: Iterable[str]) -> set[str]:
        wanted = list(set(paths))
        if not wanted:
            return set()
        with _errors():
            pipe = self._client().pipeline(transaction=False)
            for start in range(0, len(wanted), CHUNK):
                pipe.hmget(self._rows, wanted[start : start + CHUNK])
            found = chain.from_iterable(pipe.execute())
        return {path for path, row in zip(wanted, found, strict=True) if row}

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
                reply = lua.run(self._client(), keys, after, CHUNK, mode)
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


def _tally(routes: dict[str, int], route: str | None, delta: int) -> None:
    if route is not None:
        routes[route] = routes.get(route, 0) + delta


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
