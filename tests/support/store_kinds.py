"""The store kinds the contracts run on, and fresh stores of each for one test: the
Redis keys and PostgreSQL tables a test's stores write are deleted after it."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import support.example_store  # noqa: F401 - registers the example:// scheme
from support.services import DATABASE_URL, REDIS_URL, require_postgres, require_redis

from sitemap_middleware import Store, open_store

# The one list of backends: a kind added here runs every contract test of
# tests/stores/contract/ whose capability its store has. "example" is the
# third-party store of tests/support/example_store.py.
KINDS = ("example", "memory", "postgres", "redis", "sqlite")
SERVER_KINDS = ("postgres", "redis")
# Kinds whose store object is the whole data (two objects share nothing); of
# the others, two objects on one URI are two processes' view of one sitemap.
ONE_OBJECT = ("example", "memory")
SHARED_KINDS = tuple(kind for kind in KINDS if kind not in ONE_OBJECT)


@functools.cache
def has(kind: str, capabilities: tuple[type, ...]) -> bool:
    """Whether the store of ``kind`` is an instance of every one of
    ``capabilities`` (runtime-checkable protocols)."""
    probe = open_store(_probe_uri(kind))
    try:
        return all(isinstance(probe, capability) for capability in capabilities)
    finally:
        probe.close()


class Fresh:
    """Store URIs and stores no other test has used. What the servers hold for
    them is deleted by :meth:`cleanup`, which the ``fresh`` fixture runs once the
    test and every fixture holding its stores are done."""

    def __init__(self) -> None:
        self._cleanups: list[Callable[[], None]] = []

    def uri(self, kind: str, folder: Path | None = None, **options: object) -> str:
        """A URI of ``kind``; the file stores keep their file in ``folder``."""
        query = urlencode(options)
        if kind == "redis":
            return self.redis_uri(**options)
        if kind == "postgres":
            return self.postgres_uri(**options)
        if kind == "memory":
            return f"memory://?{query}"
        assert folder is not None, f"a {kind} store needs a folder"
        if kind == "sqlite":
            return f"sqlite:///{folder}/s.sqlite3?{query}"
        assert kind == "example", kind
        return f"example:///{folder}/shelf?{query}"

    def store(self, kind: str, folder: Path | None = None, **options: object) -> Store:
        return open_store(self.uri(kind, folder, **options))

    def redis_uri(self, **options: object) -> str:
        """A Redis store URI under a fresh key prefix."""
        prefix = f"{{test-{secrets.token_hex(6)}}}:"
        self.delete_redis_keys(prefix)
        return f"{require_redis()}?{urlencode({'prefix': prefix, **options})}"

    def postgres_uri(self, **options: object) -> str:
        """A PostgreSQL store URI on fresh tables."""
        url = require_postgres()
        prefix = f"test_{secrets.token_hex(6)}_"
        self._cleanups.append(lambda: _drop_tables(url, prefix))
        return f"{url}?{urlencode({'table_prefix': prefix, **options})}"

    def delete_redis_keys(self, prefix: str) -> None:
        """Delete the Redis keys under ``prefix`` after the test."""
        url = require_redis()
        self._cleanups.append(lambda: _delete_redis_keys(url, prefix))

    def cleanup(self) -> None:
        while self._cleanups:
            self._cleanups.pop()()


def _probe_uri(kind: str) -> str:
    """A URI of ``kind`` for a store that is never used: what its class
    implements is asked of it without a connection or a file."""
    if kind in SERVER_KINDS:
        return {"postgres": DATABASE_URL, "redis": REDIS_URL}[kind]
    return Fresh().uri(kind, Path("never-opened"))


def _delete_redis_keys(url: str, prefix: str) -> None:
    import redis

    with redis.Redis.from_url(url) as client:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


def _drop_tables(url: str, prefix: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # The other sites' listings of a multi-site config: "{prefix}site_fr_".
        sites = {
            name[: -len("url")]
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE starts_with(tablename, %s)"
                " AND tablename LIKE '%%\\_url'",
                (f"{prefix}site_",),
            )
        }
        for each in (prefix, *sites):
            conn.execute(
                f"DROP TABLE IF EXISTS {each}url, {each}page, {each}meta,"
                f" {each}count, {each}setting, {each}decision, {each}push,"
                f" {each}removal, {each}news, {each}section, {each}visit"
            )
            conn.execute(f"DROP SEQUENCE IF EXISTS {each}decision_seq")
