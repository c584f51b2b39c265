"""Peak memory and time of a cold 50,000-URL part, read from each store and
rendered, beside the gzip body it makes.

For each of SQLite, Redis and PostgreSQL: 50,000 URLs (paths like
``/products/12345/some-item-name``, a lastmod each) are written in one part;
then, on a store opened afresh and connected beforehand (as a serving process
is), ``render.urlset(base_url, store.fragments(1))`` (what the server runs for
a part it has not cached) is measured twice: its peak memory with
``tracemalloc`` (Python's allocations; a driver's own buffers, such as libpq's
result, are not seen), and its time, median of several runs, against the
deflate of the same XML bytes with the module the package uses (zlib-ng when
installed), in the same process.

Targets: peak <= 2 MiB on every store (the gzip body is about 0.14 MiB);
SQLite's time <= 2.5x the deflate's.

Run it from the repository root with the project's virtualenv, with the servers
of the test suite (``REDIS_URL``, ``DATABASE_URL``) up::

    python tests/benchmarks/parts.py
    python tests/benchmarks/parts.py --only sqlite,postgres

It cleans up its keys and tables (prefix ``bench_part``). A measurement, not a
test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.services import DATABASE_URL, REDIS_URL  # noqa: E402

from sitemap_middleware import Entry, Store, open_store  # noqa: E402
from sitemap_middleware.render import DEFLATE, ORIGIN, urlset  # noqa: E402

N = 50_000
BASE = "https://www.example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PEAK_TARGET = 2.0  # MiB
TIME_TARGET = 2.5  # x deflate, SQLite


def entries() -> list[Entry]:
    return [
        Entry(
            f"/products/{i}/some-item-name-{i % 97}",
            T0 + timedelta(seconds=i),
            route="/products/<n>",
        )
        for i in range(N)
    ]


def median_time(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(name: str, uri: str, rounds: int, clean: Callable[[], None]) -> None:
    store: Store = open_store(uri)
    try:
        data = entries()
        for start in range(0, N, 1000):
            store.upsert(data[start : start + 1000])
        assert store.count() == N and len(store.parts()) == 1, store.parts()
        xml = b"".join(store.fragments(1)).replace(ORIGIN, BASE.encode())

        def deflate() -> bytes:
            compressor = DEFLATE.compressobj(6, DEFLATE.DEFLATED, 31)
            return compressor.compress(xml) + compressor.flush()

        fresh = open_store(uri)
        fresh.count()  # connected, like a serving process
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        body = urlset(BASE, fresh.fragments(1))
        peak = (tracemalloc.get_traced_memory()[1] - before) / 2**20
        tracemalloc.stop()
        cold = median_time(lambda: urlset(BASE, fresh.fragments(1)), rounds)
        floor = median_time(deflate, rounds)
        fresh.close()
        verdict = "ok" if peak <= PEAK_TARGET else "--"
        print(
            f"{name:9} peak {peak:5.2f} MiB (gzip body {len(body) / 2**20:.2f} MiB,"
            f" target <= {PEAK_TARGET:.0f}) {verdict}   render {cold * 1e3:6.1f} ms"
            f" = {cold / floor:.2f}x deflate ({floor * 1e3:.1f} ms)",
            flush=True,
        )
    finally:
        store.close()
        clean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="sqlite,redis,postgres")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    only = args.only.split(",")
    print(f"a cold {N:,}-URL part, deflate by {DEFLATE.__name__}")
    if "sqlite" in only:
        with tempfile.TemporaryDirectory() as folder:
            uri = f"sqlite:///{folder}/part.db"
            measure("sqlite", uri, args.rounds, lambda: None)
    if "redis" in only:
        import redis

        prefix = "{bench_part}:"

        def clean_redis() -> None:
            client = redis.Redis.from_url(REDIS_URL)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])
            client.close()

        clean_redis()
        measure("redis", f"{REDIS_URL}?prefix={prefix}", args.rounds, clean_redis)
    if "postgres" in only:
        import psycopg

        def clean_postgres() -> None:
            with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
                tables = conn.execute(
                    "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_part%'"
                ).fetchall()
                for (table,) in tables:
                    conn.execute(f'DROP TABLE IF EXISTS "{table}" CASCADE')

        clean_postgres()
        uri = f"{DATABASE_URL}?table_prefix=bench_part_&statement_timeout=60000"
        measure("postgres", uri, args.rounds, clean_postgres)


if __name__ == "__main__":
    main()
