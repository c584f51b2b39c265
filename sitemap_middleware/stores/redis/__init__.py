"""``redis://host:port/db``: one sitemap shared by the workers of many machines through
Redis, every key under one prefix whose hash tag keeps them in one Cluster slot.
The store is its capabilities composed: each a mixin beside its keys and scripts.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ...sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from ...urls import redacted
from .client import Client, Pipeline, Work, tagged, text, unpack
from .counts import CountsMixin
from .decisions import DecisionsMixin
from .mapped import MapMixin
from .news import NewsMixin
from .pages import SCHEMA_VERSION, PagesMixin
from .pushes import PushesMixin
from .removals import RemovalsMixin
from .visits import VisitsMixin

__all__ = ["RedisStore", "tagged"]

logger = logging.getLogger("sitemap_middleware")


class RedisStore(
    PagesMixin,
    MapMixin,  # fed by the pages' writes (client.RedisBase's hooks)
    CountsMixin,
    PushesMixin,
    DecisionsMixin,
    RemovalsMixin,
    VisitsMixin,
    NewsMixin,
):
    """Rows and fragments in two hashes keyed by path, one sorted set per part
    (score: first-seen ``seq``), part summaries in a hash, the removals log in a
    list (numbered by meta's ``removed``), and a meta hash every write bumps,
    so that a batch is an optimistic transaction: WATCH meta, read (one
    script), plan, MULTI/EXEC (a redis-py transaction pipeline). Parts are read
    by a script that joins each run of fragments in Redis.

    :param url: ``redis://[[user]:password@]host[:port][/db]`` or ``rediss://``.
    :param part_size: URLs per sitemap part (at most 50,000).
    :param part_bytes: uncompressed bytes per part (at most 50 MiB).
    :param prefix: prefix of every key. Redis Cluster keeps keys of one hash
        tag in one slot (the scripts and transactions need that): a prefix
        that holds one (``{sitemap}:``) is kept as it is, a plain one gets
        one (``flaskr`` -> ``{flaskr}:``).
    :param timeout: seconds a command may take; ``connect_timeout`` to connect.
    """

    def __init__(
        self,
        url: str,
        part_size: int = MAX_URLS_PER_PART,
        prefix: str = "{sitemap}:",
        timeout: float = 1.0,
        connect_timeout: float = 1.0,
        part_bytes: int = MAX_PART_BYTES,
    ) -> None:
        super().__init__(part_size, part_bytes)
        prefix = tagged(prefix)
        self.url, self.prefix = url, prefix
        self.where = redacted(url)
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self._policy_checked = False

    def _client(self) -> Any:
        return redis.Redis.from_url(
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

    def _connect(self) -> Client:
        client = self._client()
        conn = Client(client)
        try:
            self._check(client)
            self._count_routes(conn)
        except BaseException:
            client.close()
            raise
        return conn

    def _disconnect(self, conn: Client) -> None:
        conn.redis.close()

    def _check(self, client: Any) -> None:
        pipe = client.pipeline(transaction=True)
        pipe.hsetnx(self._meta, "schema", SCHEMA_VERSION)
        pipe.hsetnx(self._meta, "epoch", self._new_epoch())
        pipe.hget(self._meta, "schema")
        schema = text(pipe.execute()[-1])
        self._check_schema(self._meta, schema, SCHEMA_VERSION)
        if self._policy_checked:
            return
        self._policy_checked = True
        try:
            reply = client.config_get("maxmemory-policy")
        except redis.RedisError:  # CONFIG may be disabled or renamed
            return
        policy = text(reply.get("maxmemory-policy", reply.get(b"maxmemory-policy")))
        # Our keys have no TTL: only noeviction and volatile-* never drop them.
        if policy and policy != "noeviction" and not policy.startswith("volatile-"):
            logger.warning(
                "Redis maxmemory-policy is %r: when memory runs out Redis may evict "
                "sitemap entries without a trace; use 'noeviction' for the sitemap's "
                "Redis",
                policy,
            )

    def _count_routes(self, conn: Client) -> None:
        """Make sure the per-route counts (the ``routes`` hash, kept by every
        write in its MULTI/EXEC) exist: a store written before them has its
        rows counted once, in a write of its own."""
        if not conn.redis.hexists(self._meta, "routes"):
            self._transact(self._counted_routes, conn)

    def _counted_routes(self, pipe: Pipeline, token: str) -> Work | None:
        if pipe.hexists(self._meta, "routes"):
            return None
        counts: dict[str, int] = {}
        for _, row in pipe.hscan_iter(self._rows, count=1000):
            route = unpack(row)[3]
            if route is not None:
                counts[route] = counts.get(route, 0) + 1

        def queue(pipe: Pipeline) -> None:
            pipe.delete(self._routes)
            if counts:
                pipe.hset(self._routes, mapping=counts)
            pipe.hset(self._meta, "routes", "1")

        return 0, queue

    def present(self) -> bool:
        """:meth:`.contract.Present.present`: the meta key, on a client of its
        own (opening the store sets it). A prefix no key is under is not
        told from a store nothing was recorded in: neither is one. Nor is a
        Redis that lost its data (restarted without persistence) until its
        workers write again."""
        client = self._client()
        try:
            return bool(client.exists(self._meta))
        finally:
            client.close()

    def epoch(self) -> str:
        return text(self._connection().redis.hget(self._meta, "epoch"))
