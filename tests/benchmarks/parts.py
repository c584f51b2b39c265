"""Peak memory and time of a cold part, read from each store and rendered,
each against its anchor: the gzip body it makes, and the deflate of the same
XML bytes.

For each of SQLite, Redis and PostgreSQL and each case, one part is written:
``plain``, 50,000 URLs (paths like ``/products/12345/some-item-name``, a
lastmod each); ``rich``, 3,000 such URLs with 40 images each, large fragments
that fill most of a part's 50 MiB with few URLs. Then, on a store opened
afresh and connected beforehand (as a serving process is),
``render.urlset(base_url, store.fragments(1))`` (what the server runs for a
part it has not cached) is measured twice:

- its peak memory with ``tracemalloc`` (Python's allocations, the deflate
  state included; a driver's own buffers, such as libpq's result or SQLite's
  page cache, are not seen), in MiB and as a multiple of the gzip body;
- its time against the deflate of the same XML bytes with the module the
  package uses (zlib-ng when installed) and with the standard library's zlib,
  at the level the server uses (6). The three run in turn, round after round,
  so that a load that comes and goes on the machine weighs on all of them; the
  ratio is the median of the rounds' ratios, the times the medians. The store's
  server (Redis, PostgreSQL) works in its own process: its time is in the
  render's.

Targets: peak <= 2 MiB on every store; SQLite's time <= 2.5x zlib-ng's deflate.

``--instructions`` counts instead, with callgrind, the instructions of
SQLite's render of the plain part and of the two deflates (each in a process
of its own, run once and three times: the difference halved is one run,
start-up cancelling out): a figure that does not move with the machine's
load. Deflate does more per instruction than a store's read does, so this
ratio is below the time's.

Run it from the repository root with the project's virtualenv, with the servers
of the test suite (``REDIS_URL``, ``DATABASE_URL``) up::

    python tests/benchmarks/parts.py
    python tests/benchmarks/parts.py --only sqlite,postgres --case plain --rounds 15
    python tests/benchmarks/parts.py --instructions     # SQLite, ~2 minutes

It cleans up its keys and tables (prefix ``bench_part``). A measurement, not a
test: the exit status is 0 whatever the figures. ``--child`` is the entry point
of the processes ``--instructions`` counts.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from callgrind import counted  # noqa: E402
from support.services import DATABASE_URL, REDIS_URL  # noqa: E402

from sitemap_middleware import Entry, Store, open_store  # noqa: E402
from sitemap_middleware.render import DEFLATE, ORIGIN, urlset  # noqa: E402

N = 50_000
# The rich part: fewer pages, each with many images (a shop's product pages),
# 13 KB a page as a part's size counts it: about 39 MB of its 50 MiB.
N_RICH = 3_000
IMAGES = 40
BASE = "https://www.example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
LEVEL = 6  # the default gzip_level
PEAK_TARGET = 2.0  # MiB, every store
TIME_TARGET = 2.5  # x zlib-ng's deflate, SQLite
TIME_TARGETS = {"sqlite": TIME_TARGET}
STANDARD = "zlib"  # the anchor's second figure: the standard library's deflate
_DEFLATES = {"fast": DEFLATE, "zlib": zlib}


def plain() -> list[Entry]:
    return [
        Entry(
            f"/products/{i}/some-item-name-{i % 97}",
            T0 + timedelta(seconds=i),
            route="/products/<n>",
        )
        for i in range(N)
    ]


def rich() -> list[Entry]:
    return [
        Entry(
            f"/products/{i}/some-item-name-{i % 97}",
            T0 + timedelta(seconds=i),
            route="/products/<n>",
            images=tuple(f"/img/{i}/{k}/photo-{k}.jpg" for k in range(IMAGES)),
        )
        for i in range(N_RICH)
    ]


CASES: dict[str, Callable[[], list[Entry]]] = {"plain": plain, "rich": rich}


def fill(uri: str, case: str = "plain") -> bytes:
    """Write the case's part into the store at ``uri``; its XML, origin put back."""
    store: Store = open_store(uri)
    try:
        data = CASES[case]()
        for start in range(0, len(data), 1000):
            store.upsert(data[start : start + 1000])
        assert store.count() == len(data) and len(store.parts()) == 1, store.parts()
        return b"".join(store.fragments(1)).replace(ORIGIN, BASE.encode())
    finally:
        store.close()


def deflater(xml: bytes, module: ModuleType) -> Callable[[], bytes]:
    def deflate() -> bytes:
        compressor = module.compressobj(LEVEL, module.DEFLATED, 31)
        return compressor.compress(xml) + compressor.flush()  # type: ignore[no-any-return]

    return deflate


def interleaved(
    runs: dict[str, Callable[[], object]], rounds: int
) -> list[dict[str, float]]:
    """Each round's time of every run, in seconds, the runs in turn."""
    out = []
    for _ in range(rounds):
        times = {}
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            run()
            times[name] = time.perf_counter() - start
        out.append(times)
    return out


def measure(
    name: str,
    uri: str,
    rounds: int,
    case: str,
    settle: Callable[[], None] = lambda: None,
) -> None:
    xml = fill(uri, case)
    settle()
    fresh = open_store(uri)
    fresh.count()  # connected, like a serving process
    try:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        body = urlset(BASE, fresh.fragments(1), LEVEL)
        peak = (tracemalloc.get_traced_memory()[1] - before) / 2**20
        tracemalloc.stop()
        rows = interleaved(
            {
                "render": lambda: urlset(BASE, fresh.fragments(1), LEVEL),
                "fast": deflater(xml, DEFLATE),
                "zlib": deflater(xml, zlib),
            },
            rounds,
        )
    finally:
        fresh.close()
    size = len(body) / 2**20

    def median(key: str) -> float:
        return statistics.median(row[key] for row in rows)

    def ratio(key: str) -> float:
        return statistics.median(row["render"] / row[key] for row in rows)

    fast = ratio("fast")
    target = TIME_TARGETS.get(name)
    verdict = "" if target is None else f" <= {target}x {_ok(fast <= target)}"
    print(
        f"{name:8} {case:5} peak {peak:4.2f} MiB = {peak / size:4.1f}x the gzip body"
        f" ({size:.2f} MiB), <= {PEAK_TARGET:.0f} MiB {_ok(peak <= PEAK_TARGET)}\n"
        f"{'':14} time {median('render') * 1e3:5.1f} ms = {fast:4.2f}x"
        f" {DEFLATE.__name__.split('.')[-1]} ({median('fast') * 1e3:.1f} ms){verdict},"
        f" {ratio('zlib'):4.2f}x {STANDARD} ({median('zlib') * 1e3:.1f} ms)",
        flush=True,
    )


def _ok(met: bool) -> str:
    return "ok" if met else "--"


# -- instructions (SQLite) ---------------------------------------------------


def child(what: str, uri: str, times: int) -> None:
    """Run ``what`` ``times`` times: render the part, or deflate its XML."""
    fresh = open_store(uri)
    fresh.count()
    xml = b"".join(fresh.fragments(1)).replace(ORIGIN, BASE.encode())

    def render() -> bytes:
        return urlset(BASE, fresh.fragments(1), LEVEL)

    run = render if what == "render" else deflater(xml, _DEFLATES[what])
    for _ in range(times):
        run()
    fresh.close()


def _counted(what: str, uri: str, times: int) -> int:
    return counted(__file__, "--child", what, uri, str(times))


def instructions() -> None:
    with tempfile.TemporaryDirectory() as folder:
        uri = f"sqlite:///{folder}/part.db"
        fill(uri)
        one = {
            what: (_counted(what, uri, 3) - _counted(what, uri, 1)) / 2
            for what in ("render", "fast", "zlib")
        }
    fast = DEFLATE.__name__.split(".")[-1]
    print(
        f"sqlite    render {one['render'] / 1e6:6.1f} M instructions"
        f" = {one['render'] / one['fast']:4.2f}x {fast} ({one['fast'] / 1e6:.1f} M),"
        f" {one['render'] / one['zlib']:4.2f}x {STANDARD} ({one['zlib'] / 1e6:.1f} M)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="sqlite,redis,postgres")
    parser.add_argument("--case", default="plain,rich")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("WHAT", "URI", "TIMES"))
    args = parser.parse_args()
    if args.child:
        what, uri, times = args.child
        child(what, uri, int(times))
        return
    print(
        f"a cold part: plain {N:,} URLs, rich {N_RICH:,} URLs of {IMAGES} images;"
        f" gzip level {LEVEL}, deflate by {DEFLATE.__name__}"
    )
    if args.instructions:
        instructions()
        return
    only, cases = args.only.split(","), args.case.split(",")
    for case in cases:
        if "sqlite" in only:
            with tempfile.TemporaryDirectory() as folder:
                measure("sqlite", f"sqlite:///{folder}/part.db", args.rounds, case)
        if "redis" in only:
            _clean_redis()
            try:
                uri = f"{REDIS_URL}?prefix={REDIS_PREFIX}"
                measure("redis", uri, args.rounds, case)
            finally:
                _clean_redis()
        if "postgres" in only:
            _clean_postgres()
            try:
                uri = f"{DATABASE_URL}?table_prefix=bench_part_&statement_timeout=60000"
                measure("postgres", uri, args.rounds, case, _analyze)
            finally:
                _clean_postgres()


REDIS_PREFIX = "{bench_part}:"


def _clean_redis() -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{REDIS_PREFIX}*", count=1000))
    for start in range(0, len(keys), 1000):
        client.delete(*keys[start : start + 1000])
    client.close()


def _analyze() -> None:
    """The statistics autovacuum gathers within a minute of the writes: without
    them the planner takes the part's runs for a few rows, and reads each by
    sorting what is left of the part rather than walking the (page, seq) index."""
    import psycopg

    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute("ANALYZE bench_part_url")


def _clean_postgres() -> None:
    import psycopg

    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_part%'"
        ).fetchall()
        for (table,) in tables:
            conn.execute(f'DROP TABLE IF EXISTS "{table}" CASCADE')


if __name__ == "__main__":
    main()
