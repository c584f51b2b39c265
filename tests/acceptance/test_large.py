"""Large sites: a million URLs across 20 pages, stable page membership and
ETags, single-flight renders, and constant-time answers for absent pages."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from support.helpers import locs, validate
from werkzeug.test import Client

from sitemap_middleware import Entry, SitemapMiddleware, open_store
from sitemap_middleware.stores.sqlite import SQLiteStore

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
BASE = "https://www.example.com"


class Traced(SQLiteStore):
    """The SQLite store, recording every SQL statement and page read."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.statements: list[str] = []
        self.reads = 0
        self.lookups = 0

    def _connect(self) -> Any:
        conn = super()._connect()
        conn.set_trace_callback(self.statements.append)
        return conn

    def fragments(self, number: int) -> Iterator[bytes]:
        self.reads += 1
        return super().fragments(number)

    def part(self, number: int) -> Any:
        self.lookups += 1
        return super().part(number)


def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not here"]


def client(store: Any) -> tuple[Client, SitemapMiddleware]:
    middleware = SitemapMiddleware(app, {"base_url": BASE, "store": store})
    # The writer's first run (started by the first request, of any kind)
    # checks the stored pages against the config by reading them: done now,
    # so that a test counts what serving reads.
    assert middleware.flush()
    if isinstance(store, Traced):
        store.reads = store.lookups = 0
        store.statements.clear()
    return Client(middleware), middleware


def bulk(store: Any, paths: Iterator[str] | range, batch: int = 20_000) -> None:
    entries: list[Entry] = []
    for path in paths:
        entries.append(Entry(str(path), T0))
        if len(entries) == batch:
            store.upsert(entries)
            entries.clear()
    store.upsert(entries)


@pytest.fixture(scope="module")
def million(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1,000,000-URL SQLite store, built once with the bulk API."""
    path = tmp_path_factory.mktemp("million") / "sitemap.sqlite3"
    with open_store(f"sqlite:///{path}") as store:
        bulk(store, (f"/products/{n}/item" for n in range(1_000_000)))
        assert store.count() == 1_000_000
    return path


@pytest.mark.slow
def test_a_million_urls(million: Path) -> None:
    """The index lists 20 full pages; the first and the last validate; every
    read is keyset-paginated (no OFFSET)."""
    store = Traced(str(million))
    web, _ = client(store)
    index = locs(validate(web.get("/sitemap.xml").data))
    assert index == [f"{BASE}/sitemap-{n}.xml.gz" for n in range(1, 21)]
    for number, first in ((1, 0), (20, 950_000)):
        reply = web.get(f"/sitemap-{number}.xml.gz")
        assert reply.status_code == 200
        urls = locs(validate(gzip.decompress(reply.data)))
        assert len(urls) == 50_000
        assert urls[0] == f"{BASE}/products/{first}/item"
        assert urls[-1] == f"{BASE}/products/{first + 49_999}/item"
    assert store.reads == 2
    reads = [s for s in store.statements if "sitemap_url" in s]
    assert reads and all("seq >=" in s or "min(seq)" in s for s in reads)
    assert not [s for s in store.statements if "OFFSET" in s.upper()]
    store.close()


@pytest.mark.slow
def test_page_membership_and_etags_are_stable(tmp_path: Path) -> None:
    """120,000 URLs on 3 pages: adding 10 URLs and changing one on page 1
    changes the ETag of page 1 and the last page only."""
    store = open_store(f"sqlite:///{tmp_path}/s.sqlite3")
    bulk(store, (f"/p/{n}" for n in range(120_000)))
    web, middleware = client(store)

    def etags() -> dict[int, str]:
        return {
            n: web.head(f"/sitemap-{n}.xml.gz").headers["ETag"] for n in range(1, 4)
        }

    before = etags()
    bodies = {n: web.get(f"/sitemap-{n}.xml.gz").data for n in range(1, 4)}
    store.upsert([Entry("/p/7", T0, "changed")])
    store.upsert(Entry(f"/new/{n}", T0) for n in range(10))
    after = etags()
    assert after[1] != before[1] and after[3] != before[3]
    assert after[2] == before[2]
    assert web.get("/sitemap-2.xml.gz").data == bodies[2]
    last = gzip.decompress(web.get("/sitemap-3.xml.gz").data)
    assert locs(validate(last))[-10:] == [f"{BASE}/new/{n}" for n in range(10)]
    middleware.close()


@pytest.mark.slow
def test_stale_page_renders_once_under_a_stampede(tmp_path: Path) -> None:
    """200 concurrent requests for a page that just changed: one render, and
    every request gets the same bytes."""
    store = Traced(str(tmp_path / "s.sqlite3"))
    bulk(store, (f"/p/{n}" for n in range(20_000)))
    web, middleware = client(store)
    web.get("/sitemap-1.xml.gz")
    store.upsert([Entry("/p/1", T0, "changed")])
    store.reads = 0
    bodies: list[bytes] = []
    start = threading.Barrier(200)

    def fetch() -> None:
        start.wait()
        bodies.append(Client(middleware).get("/sitemap-1.xml.gz").data)

    threads = [threading.Thread(target=fetch) for _ in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.reads == 1
    assert len(bodies) == 200 and len(set(bodies)) == 1
    assert b"/p/19999<" in gzip.decompress(bodies[0])
    middleware.close()


def test_conditional_requests_read_no_rows(tmp_path: Path) -> None:
    store = Traced(str(tmp_path / "s.sqlite3"))
    bulk(store, (f"/p/{n}" for n in range(100)))
    web, middleware = client(store)
    etag = web.get("/sitemap-1.xml.gz").headers["ETag"]
    store.reads = 0
    store.statements.clear()
    assert (
        web.get("/sitemap-1.xml.gz", headers={"If-None-Match": etag}).status_code == 304
    )
    assert store.reads == 0
    assert not [s for s in store.statements if "sitemap_url" in s]
    middleware.close()


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-0.xml.gz",
        "/sitemap-01.xml.gz",
        "/sitemap--1.xml.gz",
        "/sitemap-1e3.xml.gz",
        "/sitemap-" + "9" * 10 + ".xml.gz",
        "/sitemap-" + "1" * 5000 + ".xml.gz",
        "/sitemap-١.xml.gz",  # an Arabic-Indic digit: int() would accept it
    ],
)
def test_malformed_page_numbers_never_reach_the_store(
    tmp_path: Path, path: str
) -> None:
    store = Traced(str(tmp_path / "s.sqlite3"))
    bulk(store, ["/a"])
    web, middleware = client(store)
    assert web.get(path).status_code == 404
    assert store.lookups == 0
    middleware.close()


def test_pages_past_the_end_cost_one_lookup(tmp_path: Path) -> None:
    store = Traced(str(tmp_path / "s.sqlite3"))
    bulk(store, ["/a"])
    web, middleware = client(store)
    assert web.get("/sitemap-2.xml.gz").status_code == 404
    assert web.get("/sitemap-999999999.xml.gz").status_code == 404
    assert (store.lookups, store.reads) == (2, 0)
    middleware.close()


def test_a_flood_of_404s_for_unknown_paths_writes_nothing(tmp_path: Path) -> None:
    """Removal checks for paths never stored are one read each batch: no write
    transaction, so other processes' writers never wait for them."""
    store = Traced(str(tmp_path / "s.sqlite3"))
    bulk(store, ["/kept"])
    version = store.part(1).version  # type: ignore[union-attr]
    store.statements.clear()
    assert store.remove(f"/missing/{n}" for n in range(5000)) == 0
    assert not [s for s in store.statements if s.startswith(("BEGIN", "DELETE"))]
    assert store.part(1).version == version  # type: ignore[union-attr]
    assert store.remove(["/kept", "/missing/1"]) == 1 and store.count() == 0
