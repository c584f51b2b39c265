"""Time and peak memory of the health report (``site_health``) on a large store.

``--urls`` URLs (default 200,000, in parts of 50,000) are written, each with a
lastmod; on a store that keeps visits, each page gets a visit from any client
and half of them a verified crawler's fetch, plus the unlisted paths the store
keeps at most. Then ``site_health`` is measured twice on the same store: its
peak memory with ``tracemalloc`` (Python's allocations: the store's own data
is outside the measurement only for a server store, so the memory store's
figure is the report's copies), and its time, median of three runs.

Target: peak memory that does not grow with ``--urls`` (examples and counters
only; the unlisted paths are bounded by the store).

    python tests/benchmarks/health.py
    python tests/benchmarks/health.py --urls 50000 --only sqlite

A measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from sitemap_middleware import Entry, Store, open_store, site_health  # noqa: E402
from sitemap_middleware.stores.contract import (  # noqa: E402
    UNLISTED_VISITS_KEPT,
    Visit,
    Visits,
)

BASE = "https://www.example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
NOW = int(time.time())


def fill(store: Store, urls: int) -> None:
    batch: list[Entry] = []
    for i in range(urls):
        batch.append(Entry(f"/products/{i}", T0 + timedelta(seconds=i)))
        if len(batch) == 5000:
            store.upsert(batch)
            batch = []
    store.upsert(batch)
    if not isinstance(store, Visits):
        return
    visits = [Visit(f"/products/{i}", "", NOW - i, 200) for i in range(urls)]
    visits += [
        Visit(f"/products/{i}", "google", NOW - i, 200) for i in range(0, urls, 2)
    ]
    visits += [
        Visit(f"/unlisted/{i}", "bing", NOW - i, 200)
        for i in range(UNLISTED_VISITS_KEPT)
    ]
    store.visited(visits)


def measure(store: Store) -> tuple[float, float]:
    gc.collect()
    tracemalloc.start()
    site_health(store, {"base_url": BASE}, now=NOW)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times = []
    for _ in range(3):
        started = time.perf_counter()
        site_health(store, {"base_url": BASE}, now=NOW)
        times.append(time.perf_counter() - started)
    return peak / 2**20, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--only", default="memory,sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        uris = {
            "memory": "memory://",
            "sqlite": f"sqlite:///{folder}/bench.sqlite3",
        }
        for kind in args.only.split(","):
            store = open_store(uris[kind])
            try:
                fill(store, args.urls)
                peak, seconds = measure(store)
            finally:
                store.close()
            visits = "with visits" if isinstance(store, Visits) else "no visits"
            print(
                f"{kind:7} {args.urls:,} URLs ({visits}): peak {peak:.2f} MiB, "
                f"{seconds:.2f} s ({args.urls / seconds:,.0f} URLs/s)"
            )


if __name__ == "__main__":
    main()
