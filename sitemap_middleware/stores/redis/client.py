"""What every piece of the Redis store shares: the client and its scripts, the keys
under the prefix, and the base each capability's mixin builds on.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import redis
from redis.commands.core import Script

from ...errors import StoreError
from ...sitemaps import RUN
from ..base import StoreBase
from ..records import Change

T = TypeVar("T")
# redis-py types its replies as unions over its sync and async clients.
Pipeline = Any
# What a write does once its reads are done: (rows changed, a function that
# queues its commands on the pipeline, between MULTI and EXEC).
Work = tuple[int, Callable[[Pipeline], None]]
# Optimistic transactions retried this often before a batch fails.
TRIES = 20
# The lock of writers that collided: how long it may be held (a killed holder
# blocks the others that long at most) and how long to wait for it.
LOCK_TTL_MS = 5000
LOCK_WAIT = 10.0
# Releases the writers' lock only if this writer still holds it.
UNLOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# A stored row is JSON [part, lastmod, fingerprint, route, declared]: part and
# lastmod first, where the scripts read them with one pattern match (rows
# stored before rows kept their declared alternates have four items).
unpack = json.loads  # takes bytes too


class Client:
    """This process's client and the scripts registered on it, each the first
    time it runs (then by its SHA). A write's pipeline runs its scripts by their
    source instead (:func:`evaluate`)."""

    __slots__ = ("_scripts", "redis")

    def __init__(self, client: Any) -> None:
        self.redis = client
        self._scripts: dict[str, Script] = {}

    def script(self, source: str) -> Script:
        found = self._scripts.get(source)
        if found is None:  # two threads may both register it: the same Script
            found = self._scripts[source] = self.redis.register_script(source)
        return found


class Key:
    """A key under the store's prefix, named where it is used:
    ``_counts = Key("counts")`` reads as ``{sitemap}:counts``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, store: RedisBase, owner: object = None) -> str:
        return store.prefix + self.name


class RedisBase(StoreBase[Client]):
    """The keys more than one capability reads, the driver's errors, and the
    hooks through which a page write reaches the capabilities it feeds (no-ops
    in a store without them)."""

    errors = (redis.RedisError,)
    label = "Redis"
    prefix: str

    # Every page write bumps meta: WATCHing it makes a batch an optimistic
    # transaction. It also holds the schema, the epoch and the removals' number.
    _meta = Key("meta")
    _rows = Key("url")  # path -> JSON row: what is listed
    _lock_key = Key("lock")  # the writers' lock, taken after a collision
    # Beside the rows, not in them: a row of the release before (JSON of 4 or 5
    # items) stays one it reads, so both releases write the same store during
    # an upgrade.
    _titles = Key("title")
    _descriptions = Key("description")
    _places = Key("place")  # path -> its place on the site map (mapped.py)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # StoreBase turns the driver's errors into StoreError in the methods of
        # a class that names ``errors`` itself: every mixin names them.
        cls.errors = RedisBase.errors
        super().__init_subclass__(**kwargs)

    def _script(
        self, source: str, keys: Sequence[str | bytes], args: Sequence[Any]
    ) -> Any:
        """Run a script outside a write's transaction."""
        return self._connection().script(source)(keys=keys, args=args)

    def _transact(
        self, work: Callable[[Pipeline, str], Work | None], conn: Client | None = None
    ) -> int:
        """Run ``work`` (its reads, then the commands it queues) until no other
        writer committed in between; it returns ``None`` when it has nothing to
        write. ``conn``: while the connection is being opened."""
        conn, token = conn or self._connection(), None
        try:
            with conn.redis.pipeline(transaction=True) as pipe:
                for _ in range(TRIES):
                    try:
                        pipe.watch(self._meta, self._lock_key)
                        todo = work(pipe, token or "")
                        if todo is None:
                            return 0
                        changed, queue = todo
                        pipe.multi()
                        queue(pipe)
                        pipe.hincrby(self._meta, "writes", 1)
                        pipe.execute()
                        return changed
                    except redis.WatchError:
                        pipe.reset()
                        if token is None:
                            token = self._wait_turn(conn.redis)
        finally:
            if token is not None:
                conn.script(UNLOCK)(keys=[self._lock_key], args=[token])
        raise StoreError(
            self._said(f"gave up after {TRIES} conflicting writes to {self._meta}")
        )

    def _wait_turn(self, client: Any) -> str:
        """Take the writers' lock. Writers take it only after a collision, and
        write without it only while nobody holds it: under load they queue instead
        of colliding again (optimistic retries alone starve). Correctness never
        depends on it: WATCH on the meta key still guards every write."""
        token, delay = secrets.token_hex(8), 0.0005
        deadline = time.monotonic() + LOCK_WAIT
        while not client.set(self._lock_key, token, nx=True, px=LOCK_TTL_MS):
            if time.monotonic() > deadline:
                raise StoreError(
                    self._said(f"waited {LOCK_WAIT} s for {self._lock_key}")
                )
            time.sleep(random.uniform(0, delay))
            delay = min(2 * delay, 0.01)
        return token

    def _queue(self, pipe: Pipeline, paths: list[str]) -> None:
        """Queue IndexNow pushes between a write's MULTI and EXEC."""

    def _withdraw(self, pipe: Pipeline, paths: list[str]) -> None:
        """Withdraw pending IndexNow pushes between a write's MULTI and EXEC."""

    def _log_removed(self, pipe: Pipeline, paths: list[str]) -> None:
        """Log removed paths between a write's MULTI and EXEC."""

    def _place(
        self, pipe: Pipeline, changes: Sequence[Change], old: Mapping[str, bytes]
    ) -> None:
        """Queue the changed rows' places on the site map (``old``: those
        they had, packed)."""

    def _unplace(
        self, pipe: Pipeline, paths: Iterable[str], old: Mapping[str, bytes]
    ) -> None:
        """Queue the removal of removed rows' places."""


def tagged(prefix: str) -> str:
    """``prefix`` with a hash tag: kept if it has one, else ``{prefix}:``.

    A hash tag is the text between the first ``{`` and the next ``}``, when
    not empty (Redis Cluster specification, "Hash tags").
    """
    opening = prefix.find("{")
    if opening >= 0 and prefix.find("}", opening) > opening + 1:
        return prefix
    name = prefix.rstrip(":")
    if not name or "{" in name or "}" in name:
        raise ValueError(
            f"prefix {prefix!r} must be a name such as 'flaskr' or hold a hash"
            " tag such as '{sitemap}:'"
        )
    return f"{{{name}}}:"


def runs(items: Sequence[T], size: int = RUN) -> Iterator[Sequence[T]]:
    """``items`` in slices of ``size``: what one command or script call takes."""
    return (items[start : start + size] for start in range(0, len(items), size))


def nul_ended(paths: Collection[str]) -> bytes:
    """Paths for a script, each ended by a NUL. A path holding one cannot be
    stored (render refuses it), and is left out rather than read as two."""
    joined = "\0".join(paths)
    if joined.count("\0") >= len(paths):
        joined = "\0".join([path for path in paths if "\0" not in path])
    return joined.encode() + b"\0" if joined else b""


def evaluate(
    pipe: Pipeline, source: str, keys: Sequence[str | bytes], args: list[Any]
) -> Any:
    """Run a script on a write's pipeline by its source (EVAL; Redis keeps it
    compiled by its SHA): a pipeline that runs one by its SHA first asks
    whether Redis holds it, a round trip more each batch."""
    return pipe.eval(source, len(keys), *keys, *args)


def text(value: Any) -> str:
    """A reply as text: the store's client decodes nothing itself."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
