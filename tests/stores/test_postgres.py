"""The PostgreSQL store's own: its options, older tables, another schema
refused, an unreachable server."""

from __future__ import annotations

from typing import Any

import pytest
from support.services import require_postgres
from support.store_kinds import Fresh
from support.stored import ROUTED, T0, prefix_of

from sitemap_middleware import ConfigError, Entry, StoreError, open_store


@pytest.mark.services
def test_postgres_options(fresh: Fresh) -> None:
    uri = fresh.postgres_uri(part_size=10, statement_timeout=250, application_name="t")
    with open_store(uri) as store:
        assert store.part_size == 10
        with store._borrow() as conn:  # type: ignore[attr-defined]
            assert _one(conn, "SHOW statement_timeout") == "250ms"
            assert _one(conn, "SHOW application_name") == "t"
        store.upsert([Entry("/a", T0)])
        with store._borrow() as conn:  # type: ignore[attr-defined]
            assert _one(conn, f"SELECT count(*) FROM {store.prefix}url") == 1
    with pytest.raises(ConfigError, match="bogus"):
        open_store("postgresql://127.0.0.1/test?bogus=1")
    with pytest.raises(ConfigError, match="table_prefix"):
        open_store("postgresql://127.0.0.1/test?table_prefix=x;drop")


def _one(conn: Any, query: str) -> Any:
    return conn.execute(query).fetchone()[0]


@pytest.mark.services
def test_postgres_adds_the_route_index_to_older_tables(fresh: Fresh) -> None:
    """Version-2 tables made before count(route) get its index when opened."""
    import psycopg

    uri = fresh.postgres_uri()
    prefix = prefix_of(uri, ROUTED)
    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f"DROP INDEX {prefix}url_route")
        with open_store(uri) as store:
            assert store.count("/<x>") == 2
        found = conn.execute("SELECT to_regclass(%s)", (f"{prefix}url_route",))
        assert found.fetchone() == (f"{prefix}url_route",)


@pytest.mark.services
def test_postgres_refuses_other_schema(fresh: Fresh) -> None:
    import psycopg

    uri = fresh.postgres_uri()
    prefix = prefix_of(uri)
    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f"UPDATE {prefix}meta SET schema = 99")
    with pytest.raises(StoreError, match="schema 99, expected 2"):
        open_store(uri).count()
