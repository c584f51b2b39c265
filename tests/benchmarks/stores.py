"""Upsert throughput and cold page reads of the SQLite, Redis and PostgreSQL stores,
each beside its raw driver doing the equivalent work in the same run (the floor).

Writes: N new entries (path, lastmod, fingerprint, route) in batches of 1,000,
through ``store.upsert`` and through the bare driver: sqlite3 ``executemany``
INSERT into the same table in one transaction a batch; redis-py pipelined HSET
(the same packed row) + ZADD; psycopg binary ``COPY ... FROM STDIN`` of the
rows (``write_row``) in one transaction a batch, the fastest way in; and, for
reference, one INSERT ... SELECT FROM unnest() of binary arrays a batch, whose
rate is printed after the table. The
raw runs write precomputed rows, their ``<url>`` fragments rendered beforehand:
no rendering, no read of old rows, no lastmod rules, no page summaries; that is
the store's overhead being measured.

Redis' memory (MEMORY USAGE of every key) is printed an entry, the store's
beside the raw keys'.

Reads: ``list(store.fragments(1))`` of a 50,000-URL page on a freshly opened
store (connected beforehand), against the same keyset reads of (seq, fragment)
by the bare driver (chunks of the store's size, rows fetched to tuples; psycopg
in binary, each read on a new connection opened beforehand), median of 5.

Targets: store >= 0.8x raw (PostgreSQL: >= 0.5x COPY); SQLite >= 200k entries/s,
Redis >= 40k/s;
page reads <= 1.2x raw.

Run it from the repository root with the project's virtualenv, with the servers
of the test suite (``REDIS_URL``, ``DATABASE_URL``) up::

    python tests/benchmarks/stores.py                  # 200,000 entries, ~1 minute
    python tests/benchmarks/stores.py --n 1000000      # the issue's figure
    python tests/benchmarks/stores.py --only sqlite,redis
    python tests/benchmarks/stores.py --places     # as when the site map is served
    python tests/benchmarks/stores.py --instructions --n 30000   # ~2 minutes

``--instructions`` counts SQLite's upsert and its raw ``executemany`` with
callgrind instead, each in a process of its own, at N and at a third of N
(the difference: what the entries between cost, start-up cancelled out),
making the entries and rows subtracted: a ratio the machine's load does not
move.

It cleans up its keys (prefix ``{bench-...}:``) and tables (``bench_...``). It is
a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.services import DATABASE_URL, REDIS_URL  # noqa: E402

from sitemap_middleware import Entry, Store, open_store  # noqa: E402
from sitemap_middleware.stores.contract import Mapped  # noqa: E402

# With --places: the stores that can keep the site map's order keep it, as
# when a site serves its map (what that costs a bulk write).
PLACES = False
from sitemap_middleware.render import fragment  # noqa: E402
from sitemap_middleware.sitemaps import RUN  # noqa: E402
from sitemap_middleware.stores import postgres as pg_store  # noqa: E402
from sitemap_middleware.stores import sqlite as sqlite_store  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PAGE = 50_000
# path, seq, page, lastmod, fingerprint, route, fragment
Row = tuple[str, int, int, int, str, str, bytes]


def entries(n: int) -> list[Entry]:
    return [
        Entry(f"/p/{i}", T0 + timedelta(seconds=i), f"{i:016x}", route="/p/<n>")
        for i in range(n)
    ]


def rows(n: int) -> list[Row]:
    start = int(T0.timestamp())
    return [
        (
            f"/p/{i}",
            i + 1,
            i // PAGE + 1,
            start + i,
            f"{i:016x}",
            "/p/<n>",
            fragment(Entry(f"/p/{i}"), start + i),
        )
        for i in range(n)
    ]


def batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def keyset(fetch: Callable[[int], list[Any]], run: int) -> list[Any]:
    """A page's (seq, fragment) rows read as the stores read them: ``run`` at a
    time, each after the last seq read (``fetch(after)``)."""
    out: list[Any] = []
    after = -1
    while True:
        chunk = fetch(after)
        out += chunk
        if len(chunk) < run:
            return out
        after = chunk[-1][0]


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def median_of(runs: int, run: Callable[[], object]) -> float:
    return statistics.median(timed(run) for _ in range(runs))


# --- SQLite -------------------------------------------------------------------


def sqlite_raw(folder: str) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{folder}/raw.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(sqlite_store._SCHEMA)
    return conn


def sqlite_write(conn: sqlite3.Connection, data: list[Row], size: int) -> None:
    for batch in batches(data, size):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO sitemap_url (path, seq, page, lastmod, fingerprint,"
            " route, fragment) VALUES (?, ?, ?, ?, ?, ?, ?)",
            batch,
        )
        conn.execute("COMMIT")


def sqlite_read(conn: sqlite3.Connection) -> list[Any]:
    def fetch(after: int) -> list[Any]:
        return conn.execute(
            "SELECT seq, fragment"
            " FROM sitemap_url WHERE page = ? AND seq > ? ORDER BY seq LIMIT ?",
            (1, after, RUN),
        ).fetchall()

    return keyset(fetch, RUN)


# --- Redis --------------------------------------------------------------------
# The bare driver writes what the store writes for a new URL: its row (JSON
# [page, lastmod, fingerprint, route]) and fragment in two hashes keyed by path,
# and its seq in the page's sorted set; it reads a page as a competent caller
# would, keyset on seq: ZRANGEBYSCORE, then HMGET of the fragments and ZSCORE of
# the last member (for the next run) in one pipeline, two round trips a run.


def redis_rows(data: list[Row]) -> list[tuple[str, int, int, bytes, bytes]]:
    """(path, seq, page, row, fragment): the row packed beforehand, as stored."""
    return [
        (
            r[0],
            r[1],
            r[2],
            json.dumps([r[2], *r[3:6]], separators=(",", ":")).encode(),
            r[6],
        )
        for r in data
    ]


def redis_write(
    client: Any, prefix: str, data: list[tuple[str, int, int, bytes, bytes]], size: int
) -> None:
    for batch in batches(data, size):
        pipe = client.pipeline(transaction=False)
        pipe.hset(f"{prefix}url", mapping={r[0]: r[3] for r in batch})
        pipe.hset(f"{prefix}fragment", mapping={r[0]: r[4] for r in batch})
        by_page: dict[int, dict[str, int]] = {}
        for r in batch:
            by_page.setdefault(r[2], {})[r[0]] = r[1]
        for page, members in by_page.items():
            pipe.zadd(f"{prefix}page:{page}", members)
        pipe.execute()


def redis_read(client: Any, prefix: str) -> list[Any]:
    out: list[Any] = []
    after: Any = 0
    chunk = RUN
    key = f"{prefix}page:1"
    while True:
        paths = client.zrangebyscore(key, f"({after}", "+inf", 0, chunk)
        if not paths:
            return out
        pipe = client.pipeline(transaction=False)
        fragments, after = (
            pipe.hmget(f"{prefix}fragment", paths).zscore(key, paths[-1]).execute()
        )
        out += fragments
        if len(paths) < chunk:
            return out
        after = int(after)


def redis_clean(client: Any, *prefixes: str) -> None:
    for prefix in prefixes:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for batch in batches(keys, 1000):
            client.delete(*batch)


# --- PostgreSQL ---------------------------------------------------------------


def pg_write(conn: Any, data: list[Row], size: int) -> None:
    for batch in batches(data, size):
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(
                "INSERT INTO bench_raw_url SELECT * FROM unnest(%b::text[],"
                " %b::bigint[], %b::integer[], %b::bigint[], %b::text[], %b::text[],"
                " %b::bytea[])",
                [list(column) for column in zip(*batch, strict=True)],
            )


def pg_copy(conn: Any, data: list[Row], size: int) -> None:
    for batch in batches(data, size):
        with (
            conn.transaction(),
            conn.cursor() as cur,
            cur.copy(
                "COPY bench_raw_url (path, seq, page, lastmod, fingerprint, route,"
                " fragment) FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["text", "int8", "int4", "int8", "text", "text", "bytea"])
            for row in batch:
                copy.write_row(row)


def pg_read(conn: Any) -> list[Any]:
    def fetch(after: int) -> list[Any]:
        rows: list[Any] = conn.execute(
            "SELECT seq, fragment FROM bench_raw_url"
            " WHERE page = %s AND seq > %s ORDER BY seq LIMIT %s",
            (1, after, pg_store.READ_RUN),
            prepare=True,
            binary=True,
        ).fetchall()
        return rows

    return keyset(fetch, pg_store.READ_RUN)


def pg_drop(conn: Any) -> None:
    tables = ("url", "page", "meta", "count", "setting", "push", "decision")
    tables += ("removal", "news", "section", "visit")
    for prefix in ("bench_", "bench_raw_"):
        named = ", ".join(prefix + table for table in tables)
        conn.execute(f"DROP TABLE IF EXISTS {named}")
        conn.execute(f"DROP SEQUENCE IF EXISTS {prefix}decision_seq")


# --- the runs -----------------------------------------------------------------


def measure(
    uri: str,
    write_raw: Callable[[], object],
    read_raw: Callable[[], list[Any]],
    data: list[Entry],
    size: int,
    settle: Callable[[], object] = lambda: None,
) -> dict[str, float]:
    raw_write = timed(write_raw)
    with open_store(uri) as store:
        if PLACES and isinstance(store, Mapped):
            store.keep_places()
        store_write = timed(lambda: [store.upsert(b) for b in batches(data, size)])
        assert store.count() == len(data), store.count()
    settle()  # between the writes and the reads, untimed

    def cold_read() -> float:
        store: Store
        with open_store(uri) as store:
            store.count()  # connected: the read is what is timed
            return timed(lambda: list(store.fragments(1)))

    assert len(read_raw()) == min(PAGE, len(data))
    return {
        "write": len(data) / store_write,
        "raw_write": len(data) / raw_write,
        "read": statistics.median(cold_read() for _ in range(5)),
        "raw_read": median_of(5, read_raw),
    }


def run_sqlite(data: list[Entry], raw: list[Row], size: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite_raw(folder)
        result = measure(
            f"sqlite:///{folder}/store.sqlite3",
            lambda: sqlite_write(conn, raw, size),
            lambda: sqlite_read(sqlite_raw(folder)),
            data,
            size,
        )
        conn.close()
        return result


def run_redis(data: list[Entry], raw: list[Row], size: int) -> dict[str, float]:
    import redis

    client = redis.Redis.from_url(REDIS_URL)  # fragments are bytes: no decoding
    tag = f"bench-{os.getpid()}"
    store, bare = f"{{{tag}}}:", f"{{{tag}-raw}}:"
    packed = redis_rows(raw)
    try:
        result = measure(
            f"{REDIS_URL}?prefix={store}&timeout=10",
            lambda: redis_write(client, bare, packed, size),
            lambda: redis_read(redis.Redis.from_url(REDIS_URL), bare),
            data,
            size,
        )
        held = {name: redis_memory(client, name) / len(data) for name in (store, bare)}
        return {**result, "memory": held[store], "raw_memory": held[bare]}
    finally:
        redis_clean(client, store, bare)


def redis_memory(client: Any, prefix: str) -> int:
    """The bytes Redis holds for the keys under ``prefix`` (MEMORY USAGE,
    every element counted)."""
    return sum(
        client.memory_usage(key, samples=0) or 0
        for key in client.scan_iter(match=f"{prefix}*", count=1000)
    )


def run_postgres(data: list[Entry], raw: list[Row], size: int) -> dict[str, float]:
    import psycopg

    conn = psycopg.connect(DATABASE_URL, autocommit=True)
    pg_drop(conn)
    schema = pg_store._SCHEMA.replace("{p}", "bench_raw_")
    for statement in schema.split(";"):
        conn.execute(statement)
    # Each raw read on a connection of its own, opened and used beforehand, as
    # each store read is: a new server process loads the tables' catalog rows.
    readers = [psycopg.connect(DATABASE_URL, autocommit=True) for _ in range(6)]
    for reader in readers:
        reader.execute("SELECT count(*) FROM bench_raw_page")
    fresh = iter(readers)
    try:
        # INSERT from arrays, for reference; then emptied for the COPY that
        # is the anchor (and whose rows the raw reads read).
        unnest = timed(lambda: pg_write(conn, raw, size))
        conn.execute("TRUNCATE bench_raw_url")
        result = measure(
            f"{DATABASE_URL}?table_prefix=bench_&statement_timeout=60000",
            lambda: pg_copy(conn, raw, size),
            lambda: pg_read(next(fresh)),
            data,
            size,
            # Both tables with statistics, as autovacuum leaves them: the raw
            # reads get the planner's best plan, not one for an empty table.
            lambda: conn.execute("ANALYZE bench_url, bench_raw_url"),
        )
        return {**result, "unnest_write": len(data) / unnest}
    finally:
        for reader in readers:
            reader.close()
        pg_drop(conn)
        conn.close()


RUNS = {"sqlite": run_sqlite, "redis": run_redis, "postgres": run_postgres}
WRITE_FLOOR = {"sqlite": 200_000, "redis": 40_000}
# The store's rate as a share of the raw one's: PostgreSQL's raw path is COPY,
# which no upsert (reading old rows, updating part summaries) can match.
WRITE_RATIO = {"sqlite": 0.8, "redis": 0.8, "postgres": 0.5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="entries to write")
    parser.add_argument("--batch", type=int, default=1000, help="entries a batch")
    parser.add_argument("--only", default=",".join(RUNS), help="sqlite,redis,postgres")
    parser.add_argument(
        "--places",
        action="store_true",
        help="the stores keep each page's place on the site map (the map served)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="SQLite's upsert and raw write in instructions (callgrind)",
    )
    args = parser.parse_args()
    if args.instructions:
        sqlite_instructions(args.n, args.batch)
        return
    global PLACES
    PLACES = args.places
    data, raw = entries(args.n), rows(args.n)
    print(
        f"{args.n:,} entries in batches of {args.batch:,}; page read: "
        f"{min(PAGE, args.n):,} URLs"
    )
    print(
        f"{'store':<9} {'upsert/s':>10} {'raw/s':>10} {'ratio':>6} {'target':>16}"
        f"  {'read ms':>8} {'raw ms':>8} {'ratio':>6} {'target':>7}"
    )
    for name in args.only.split(","):
        r = RUNS[name](data, raw, args.batch)
        ratio, read_ratio = r["write"] / r["raw_write"], r["read"] / r["raw_read"]
        floor, least = WRITE_FLOOR.get(name), WRITE_RATIO[name]
        target = f">={least}x" + (f", >={floor // 1000}k/s" if floor else "")
        ok = ratio >= least and (floor is None or r["write"] >= floor)
        print(
            f"{name:<9} {r['write']:>10,.0f} {r['raw_write']:>10,.0f} {ratio:>5.2f}x"
            f" {target:>14} {'ok' if ok else '--'}"
            f"  {r['read'] * 1000:>8.1f} {r['raw_read'] * 1000:>8.1f}"
            f" {read_ratio:>5.2f}x <=1.2x {'ok' if read_ratio <= 1.2 else '--'}"
        )
        if "memory" in r:
            print(
                f"{'':<9} Redis memory: {r['memory']:,.0f} bytes an entry,"
                f" raw {r['raw_memory']:,.0f} ({r['memory'] / r['raw_memory']:.2f}x)"
            )
        if "unnest_write" in r:
            unnest = r["unnest_write"]
            print(
                f"{'':<9} raw is binary COPY; INSERT ... unnest(): "
                f"{unnest:,.0f}/s (store {r['write'] / unnest:.2f}x)"
            )


def sqlite_child(what: str, n: int, size: int, folder: str) -> None:
    """One counted run: the entries and rows made, then (``what``) the raw
    write of the rows, the store's upsert of the entries, or nothing more."""
    data, raw = entries(n), rows(n)
    if what == "raw":
        conn = sqlite_raw(folder)
        sqlite_write(conn, raw, size)
        conn.close()
    elif what == "store":
        with open_store(f"sqlite:///{folder}/store.sqlite3") as store:
            for batch in batches(data, size):
                store.upsert(batch)


def sqlite_instructions(n: int, size: int) -> None:
    """Instructions an entry costs SQLite's upsert and the raw write: each run
    at ``n`` less the same at a third of it, less the entries' making."""
    sys.path.insert(0, str(Path(__file__).parent))
    from callgrind import counted

    small = n // 3
    cost: dict[str, int] = {}
    for what in ("none", "raw", "store"):
        at = []
        for count in (small, n):
            with tempfile.TemporaryDirectory() as folder:
                args = ("--child", what, str(count), str(size), folder)
                at.append(counted(__file__, *args))
        cost[what] = at[1] - at[0]
    raw, store = ((cost[w] - cost["none"]) / (n - small) for w in ("raw", "store"))
    print(f"SQLite, instructions an entry (callgrind, {n:,} less {small:,})")
    print(f"  raw executemany: {raw:10,.0f}")
    print(f"  store.upsert:    {store:10,.0f}")
    print(f"  ratio:           {raw / store:10.2f}x raw/store (target >= 0.8x)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        what, count, size, folder = sys.argv[2:6]
        sqlite_child(what, int(count), int(size), folder)
    else:
        main()
