"""The Redis and PostgreSQL servers tests run against: their URLs, and a skip (or, with
``SITEMAP_REQUIRE_SERVICES=1``, a failure) when none answers.
"""

from __future__ import annotations

import functools
import os

import pytest

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
DATABASE_URL = os.environ.get(
    "DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


@functools.cache
def _redis_problem() -> str | None:
    try:
        import redis

        client = redis.Redis.from_url(
            REDIS_URL, socket_connect_timeout=1, socket_timeout=1
        )
        client.ping()
        client.close()
    except Exception as exc:
        return f"no Redis at REDIS_URL={REDIS_URL} ({exc})"
    return None


@functools.cache
def _postgres_problem() -> str | None:
    try:
        import psycopg

        with psycopg.connect(DATABASE_URL, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return f"no PostgreSQL at DATABASE_URL={DATABASE_URL} ({exc})"
    return None


def _require(problem: str | None) -> None:
    if problem is None:
        return
    if os.environ.get("SITEMAP_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{problem}; SITEMAP_REQUIRE_SERVICES=1 requires it")
    pytest.skip(problem)


def require_redis() -> str:
    """``REDIS_URL`` if a server answers it; skip (or fail) the test otherwise."""
    _require(_redis_problem())
    return REDIS_URL


def require_postgres() -> str:
    """``DATABASE_URL`` if a server answers it; skip (or fail) the test otherwise."""
    _require(_postgres_problem())
    return DATABASE_URL
