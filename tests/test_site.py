"""What the writers share through the store: the site's counters summed over
every worker (``site_stats()``), the re-check of stored pages against a changed
config (invariant 21), and the one warning that says why nothing is listed.
"""

from __future__ import annotations

import gzip
import secrets
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers import locs, validate
from services import require_postgres, require_redis
from test_stores import _CLEANUPS, _delete_redis_keys, _drop_tables
from werkzeug.test import Client

from sitemap_middleware import StoreError
from sitemap_middleware.stores.sqlite import SQLiteStore
from sitemap_middleware.wsgi import SitemapMiddleware

HTML = "text/html; charset=utf-8"


def page(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    path = environ["PATH_INFO"]
    if path.startswith("/data"):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]
    start_response("200 OK", [("Content-Type", HTML)])
    return [f"<html><head><title>{path}</title></head><body>{path}</body>".encode()]


def shared_uri(kind: str, tmp_path: Path) -> str:
    """One store URI that several middlewares open, cleaned up after the test."""
    if kind == "sqlite":
        return f"sqlite:///{tmp_path}/site.sqlite3"
    if kind == "redis":
        url = require_redis()
        prefix = f"{{test-{secrets.token_hex(6)}}}:"
        _CLEANUPS.append(lambda: _delete_redis_keys(url, prefix))
        return f"{url}?{urlencode({'prefix': prefix})}"
    url = require_postgres()
    prefix = f"test_{secrets.token_hex(6)}_"
    _CLEANUPS.append(lambda: _drop_tables(url, prefix))
    return f"{url}?{urlencode({'table_prefix': prefix})}"


@pytest.fixture(autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    while _CLEANUPS:
        _CLEANUPS.pop()()


class Worker:
    """One middleware around :func:`page` and a client for it."""

    def __init__(self, uri: str, **config: Any) -> None:
        self.middleware = SitemapMiddleware(
            page, {"base_url": "http://localhost", "store": uri, **config}
        )
        self.client = Client(self.middleware)

    def get(self, path: str, **headers: str) -> tuple[int, bytes]:
        response = self.client.get(path, headers=headers)
        body = response.get_data()
        response.close()
        return response.status_code, body

    def listed(self) -> list[str]:
        status, body = self.get("/sitemap.xml")
        if status == 404:
            return []
        found: list[str] = []
        for loc in locs(validate(body)):
            status, part = self.get(loc.removeprefix("http://localhost"))
            found += locs(validate(gzip.decompress(part)))
        return sorted(found)

    def close(self) -> None:
        self.middleware.close()


@pytest.fixture
def workers() -> Iterator[Callable[..., Worker]]:
    made: list[Worker] = []

    def make(uri: str, **config: Any) -> Worker:
        made.append(Worker(uri, **config))
        return made[-1]

    yield make
    for worker in made:
        worker.close()


# -- the site's counters ---------------------------------------------------------


@pytest.mark.parametrize("store_uri", ["sqlite", "redis", "postgres"])
def test_site_stats_sum_every_worker(
    store_uri: str, tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    uri = shared_uri(store_uri, tmp_path)
    one, two = workers(uri), workers(uri)
    one.get("/a")
    one.get("/data")
    two.get("/b")
    two.get("/c")
    two.get("/data")
    assert one.middleware.flush() and two.middleware.flush()
    # stats() stays per process.
    assert one.middleware.stats()["recorded"] == 1
    assert two.middleware.stats()["recorded"] == 2
    for worker in (one, two):
        site = worker.middleware.site_stats()
        assert site["recorded"] == 3
        assert site["skipped"] == {"not_html": 2}
        assert (site["urls"], site["parts"]) == (3, 1)
        assert set(site) >= set(worker.middleware.stats())
    # A flush sends only what is new: nothing is counted twice.
    assert one.middleware.flush() and two.middleware.flush()
    assert one.middleware.site_stats()["recorded"] == 3


def test_site_stats_include_what_is_not_sent_yet(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    # Between two sends, this process's own counts are never missing.
    one = workers(f"sqlite:///{tmp_path}/site.sqlite3")
    one.get("/data")
    assert one.middleware.site_stats()["skipped"] == {"not_html": 1}


class _Down(SQLiteStore):
    """The real SQLite store whose counters' writes fail while ``down``."""

    down = False

    def add_counts(self, counts: Any) -> None:
        if self.down:
            raise StoreError("SQLite: database is locked")
        super().add_counts(counts)


def test_counts_of_an_outage_are_sent_with_the_next_batch(tmp_path: Path) -> None:
    store = _Down(str(tmp_path / "site.sqlite3"))
    worker = Worker(store)  # type: ignore[arg-type]
    try:
        store.down = True
        worker.get("/a")
        worker.get("/data")
        assert not worker.middleware.flush()  # counts left unsent
        assert store.counts() == {}
        assert worker.middleware.stats()["errors"]["store"] >= 1
        store.down = False
        worker.get("/b")
        assert worker.middleware.flush()
        counts = store.counts()
        assert counts["recorded"] == 2 and counts["not_html"] == 1
        assert counts["store"] >= 1  # the failed send is itself counted
    finally:
        worker.close()
