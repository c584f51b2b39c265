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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..errors import StoreError
from .base import Entry, PageInfo, StoreBase, dedupe, now, plan, to_datetime

logger = logging.getLogger("sitemap_middleware")

SCHEMA_VERSION = "1"
# Paths read per round trip when streaming a page, and fields per HMGET/HSET.
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

T = TypeVar("T")
# redis-py types its replies as unions over its sync and async clients.
Pipeline = Any
_pack = json.JSONEncoder(separators=(",", ":")).encode
_unpack = json.JSONDecoder().decode


class RedisStore(StoreBase):
    """Rows in one hash, one sorted set per page (score: first-seen ``seq``), page
    summaries in a hash, and a meta hash every write bumps, so that a batch is an
    optimistic transaction: WATCH meta, read, compute, MULTI/EXEC.

    :param url: ``redis://[[user]:password@]host[:port][/db]`` or ``rediss://``.
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
    ) -> None:
        super().__init__(page_size)
        opening = prefix.find("{")
        if opening < 0 or prefix.find("}", opening) <= opening + 1:
            raise ValueError(
                f"prefix {prefix!r} needs a hash tag such as '{{sitemap}}:'"
            )
        self.url, self.prefix = url, prefix
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self._meta, self._rows, self._pages, self._lock_key = (
            prefix + k for k in ("meta", "url", "pages", "lock")
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
                    decode_responses=True,
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
        schema = pipe.execute()[-1]
        if schema != SCHEMA_VERSION:
            raise StoreError(
                f"{self._meta} holds sitemap schema {schema}, expected {SCHEMA_VERSION}"
            )
        if self._policy_checked:
            return
        self._policy_checked = True
        try:
            policy = client.config_get("maxmemory-policy").get("maxmemory-policy")
        except redis.RedisError:  # CONFIG may be disabled or renamed
            return
        # Our keys have no TTL: only noeviction and volatile-* never drop them.
        if policy and policy != "noeviction" and not policy.startswith("volatile-"):
            logger.warning(
                "Redis maxmemory-policy is %r: when memory runs out Redis may evict "
                "sitemap entries without a trace; use 'noeviction' for the sitemap's "
                "Redis",
                policy,
            )

    def _transact(self, work: Callable[[Pipeline], int]) -> int:
        """Run ``work`` (reads, then ``multi()`` and queued writes) until no other
        writer committed in between; it returns 0 when it has nothing to write."""
        with _errors():
            client, token = self._client(), None
            try:
                with client.pipeline(transaction=True) as pipe:
                    for _ in range(TRIES):
                        try:
                            pipe.watch(self._meta, self._lock_key)
                            if pipe.get(self._lock_key) not in (None, token):
                                raise redis.WatchError  # another's turn: wait for ours
                            changed = work(pipe)
                            if changed:
                                pipe.hincrby(self._meta, "writes", 1)
                                pipe.execute()
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

    def upsert(self, entries: Iterable[Entry]) -> int:
        batch = dedupe(entries)
        if not batch:
            return 0
        return self._transact(lambda pipe: self._upsert(pipe, batch))

    def _upsert(self, pipe: Pipeline, batch: dict[str, Entry]) -> int:
        current = now()
        seq, last_page = pipe.hmget(self._meta, "seq", "last")
        seq, last_page = int(seq or 0), int(last_page or 1)
        old = _hmget(pipe, self._rows, list(batch))
        last_urls = _summary(pipe.hget(self._pages, str(last_page)))[0]
        found = {
            path: _unpack(packed)
            for path, packed in zip(batch, old, strict=True)
            if packed
        }
        stored = {path: (row[1], tuple(row[2:])) for path, row in found.items()}
        todo = plan(batch, stored, (last_page, last_urls), self.page_size, current)
        rows: dict[str, str] = {}
        added: dict[int, dict[str, int]] = {}  # page -> {path: seq}
        for path, page, row, new in todo.changes:
            if new:
                seq += 1
                added.setdefault(page, {})[path] = seq
            rows[path] = _pack([seq if new else found[path][0], page, *row])
        last_page = todo.last_page
        if not rows:
            return 0
        numbers = list(todo.pages)
        summaries = {}
        for number, packed in zip(
            numbers, pipe.hmget(self._pages, numbers), strict=True
        ):
            urls, lastmod, version, _ = _summary(packed)
            more, newest = todo.pages[number]
            summaries[number] = (
                f"{urls + more} {max(lastmod, newest)} {version + 1} {current}"
            )
        pipe.multi()
        _hset(pipe, self._rows, rows)
        for number, members in added.items():
            for chunk in _chunks(list(members.items())):
                pipe.zadd(self._page(number), dict(chunk))
        pipe.hset(self._pages, mapping=summaries)
        pipe.hset(self._meta, mapping={"seq": seq, "last": last_page})
        return len(rows)

    def remove(self, paths: Iterable[str]) -> int:
        wanted = list(set(paths))
        if not wanted:
            return 0
        return self._transact(lambda pipe: self._remove(pipe, wanted))

    def _remove(self, pipe: Pipeline, wanted: list[str]) -> int:
        gone: dict[int, dict[str, int]] = {}  # page -> {path: lastmod}
        for path, packed in zip(wanted, _hmget(pipe, self._rows, wanted), strict=True):
            if packed:
                _, page, lastmod, *_ = _unpack(packed)
                gone.setdefault(page, {})[path] = lastmod
        if not gone:
            return 0
        current = now()
        summaries = {}
        numbers = list(gone)
        for number, packed in zip(
            numbers, pipe.hmget(self._pages, numbers), strict=True
        ):
            urls, lastmod, version, _ = _summary(packed)
            urls -= len(gone[number])
            if urls <= 0:
                lastmod = 0
            elif max(gone[number].values()) >= lastmod:
                # The newest entry may be gone: find the newest of those left.
                left = [
                    p
                    for p in pipe.zrange(self._page(number), 0, -1)
                    if p not in gone[number]
                ]
                lastmod = max(
                    (_unpack(r)[2] for r in _hmget(pipe, self._rows, left) if r),
                    default=0,
                )
            summaries[number] = f"{urls} {lastmod} {version + 1} {current}"
        pipe.multi()
        for number, members in gone.items():
            for chunk in _chunks(list(members)):
                pipe.hdel(self._rows, *chunk)
                pipe.zrem(self._page(number), *chunk)
        pipe.hset(self._pages, mapping=summaries)
        return sum(len(members) for members in gone.values())

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
    def _info(epoch: str, number: int, packed: str | None) -> PageInfo | None:
        urls, lastmod, version, changed = _summary(packed)
        if urls <= 0:
            return None
        return PageInfo.from_row(epoch, number, urls, lastmod, version, changed)

    def entries(self, number: int) -> Iterator[Entry]:
        key, after = self._page(number), -1
        dates: dict[int, Any] = {}  # rows of a bulk load share their lastmod
        while True:
            with _errors():
                client = self._client()
                # No scores: the rows hold their seq, and parsing scores costs.
                paths = client.zrangebyscore(key, f"({after}", "+inf", 0, CHUNK)
                rows = client.hmget(self._rows, paths) if paths else []
            for path, packed in zip(paths, rows, strict=True):
                if packed is None:  # removed since the range was read
                    continue
                after, _, lastmod, fingerprint, changefreq, priority, route = _unpack(
                    packed
                )
                when = dates.get(lastmod)
                if when is None:
                    when = dates[lastmod] = to_datetime(lastmod)
                yield Entry(path, when, fingerprint, changefreq, priority, route)
            if len(paths) < CHUNK:
                return

    def close(self) -> None:
        with self._lock:
            if self._redis is not None and self._pid == os.getpid():
                self._redis.close()
            self._redis = None


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as exc:
        raise StoreError(f"Redis: {exc}") from exc


def _summary(packed: str | None) -> tuple[int, int, int, int]:
    """A page summary: urls, lastmod, version, changed."""
    if not packed:
        return 0, 0, 0, 0
    urls, lastmod, version, changed = map(int, packed.split())
    return urls, lastmod, version, changed


def _chunks(items: list[T]) -> Iterator[list[T]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def _hmget(pipe: Pipeline, key: str, fields: list[str]) -> list[str | None]:
    values: list[str | None] = []
    for chunk in _chunks(fields):
        values.extend(pipe.hmget(key, chunk))
    return values


def _hset(pipe: Pipeline, key: str, mapping: dict[str, str]) -> None:
    for chunk in _chunks(list(mapping.items())):
        pipe.hset(key, mapping=dict(chunk))
