"""The Redis store's own: its options and key prefix, an unreachable server,
older data, data lost under it, eviction."""

from __future__ import annotations

import logging
import secrets
from urllib.parse import urlencode

import pytest
from support.services import require_redis
from support.store_kinds import Fresh
from support.stored import ROUTED, T0, paths, prefix_of

from sitemap_middleware import ConfigError, Entry, StoreError, open_store


@pytest.mark.services
def test_redis_options(fresh: Fresh) -> None:
    uri = fresh.redis_uri(part_size=10, timeout=0.5, connect_timeout=0.25)
    with open_store(uri) as store:
        assert (store.part_size, store.timeout, store.connect_timeout) == (
            10,
            0.5,
            0.25,
        )
        assert store.prefix.startswith("{test-")
        store.upsert([Entry("/a", T0)])
        import redis

        with redis.Redis.from_url(require_redis()) as client:
            keys = client.keys(f"{store.prefix}*")
        assert keys and all(k.decode().startswith(store.prefix) for k in keys)
    with pytest.raises(ConfigError, match="unknown option 'db'"):
        open_store("redis://127.0.0.1/0?db=1")
    with pytest.raises(ConfigError, match="hash tag"):
        open_store("redis://127.0.0.1/0?prefix={}:")
    with pytest.raises(ConfigError, match="part_size"):
        open_store("redis://127.0.0.1/0?part_size=0")


@pytest.mark.services
@pytest.mark.parametrize(
    ("given", "used"),
    [("plain", "{plain}:"), ("plain:", "{plain}:"), ("{tag}:x:", "{tag}:x:")],
)
def test_redis_prefix_gets_a_hash_tag(given: str, used: str, fresh: Fresh) -> None:
    # A plain prefix (?prefix=flaskr) works: the store adds the hash tag.
    url = require_redis()
    name = secrets.token_hex(4)
    given, used = given.replace("plain", name), used.replace("plain", name)
    given, used = given.replace("tag", name), used.replace("tag", name)
    fresh.delete_redis_keys(used)
    with open_store(f"{url}?{urlencode({'prefix': given})}") as store:
        assert store.prefix == used
        store.upsert([Entry("/a", T0)])
        assert paths(store) == ["/a"]
        import redis

        with redis.Redis.from_url(url) as client:
            keys = client.keys(f"{used}*")
        assert keys and all(k.decode().startswith(used) for k in keys)


@pytest.mark.services
def test_redis_refuses_other_schema(fresh: Fresh) -> None:
    """Data of another layout (schema 1: rows without fragments) is refused,
    never read as this one."""
    import redis

    uri = fresh.redis_uri()
    prefix = prefix_of(uri)
    with redis.Redis.from_url(require_redis()) as client:
        client.hset(prefix + "meta", "schema", "1")
    with pytest.raises(StoreError, match="schema 1, expected 2"):
        open_store(uri).count()


@pytest.mark.services
def test_redis_counts_routes_of_older_data(fresh: Fresh) -> None:
    """Data written before the per-route counts is counted once when opened."""
    import redis

    uri = fresh.redis_uri()
    prefix = prefix_of(uri, ROUTED)
    with redis.Redis.from_url(require_redis()) as client:
        client.delete(prefix + "routes")
        client.hdel(prefix + "meta", "routes")
    with open_store(uri) as store:
        assert (store.count("/<x>"), store.count()) == (2, 3)
        store.upsert([Entry("/c", T0, route="/<x>")])
        store.remove(["/a"])
        assert store.count("/<x>") == 2


@pytest.mark.services
def test_redis_write_after_data_loss_starts_a_new_epoch(fresh: Fresh) -> None:
    """Redis emptied under a connected store (a restart without persistence):
    the next write sets a new epoch, so its parts are listed, with versions
    never served before."""
    import redis

    with open_store(fresh.redis_uri()) as store:
        store.upsert([Entry("/a", T0)])
        version = store.part(1).version  # type: ignore[union-attr]
        with redis.Redis.from_url(require_redis()) as client:
            client.delete(*client.keys(f"{store.prefix}*"))  # type: ignore[attr-defined]
        assert store.parts() == []
        store.upsert([Entry("/b", T0)])
        assert [p.urls for p in store.parts()] == [1]
        assert store.part(1).version != version  # type: ignore[union-attr]


@pytest.mark.services
def test_redis_remove_takes_paths_verbatim(fresh: Fresh) -> None:
    """Paths go to Redis joined by NUL: one holding a NUL removes nothing."""
    with open_store(fresh.redis_uri()) as store:
        store.upsert([Entry("/a", T0), Entry("/b", T0)])
        assert store.remove(["/a\x00/b"]) == 0
        assert paths(store) == ["/a", "/b"]


@pytest.mark.services
def test_redis_warns_when_eviction_could_drop_entries(
    caplog: pytest.LogCaptureFixture,
    fresh: Fresh,
) -> None:
    import redis

    uri = fresh.redis_uri()
    with redis.Redis.from_url(require_redis(), decode_responses=True) as client:
        old = client.config_get("maxmemory-policy")["maxmemory-policy"]
        try:
            client.config_set("maxmemory-policy", "volatile-lru")
            with (
                caplog.at_level(logging.WARNING, "sitemap_middleware"),
                open_store(uri) as store,
            ):
                store.count()
            assert not caplog.records
            client.config_set("maxmemory-policy", "allkeys-lru")
            with caplog.at_level(logging.WARNING, "sitemap_middleware"):
                store = open_store(uri)
                store.count()
                store.close()
                store.count()  # reconnects, does not warn again
                store.close()
        finally:
            client.config_set("maxmemory-policy", old)
    [record] = caplog.records
    assert record.name == "sitemap_middleware"
    assert "allkeys-lru" in record.getMessage()
    assert "noeviction" in record.getMessage()
