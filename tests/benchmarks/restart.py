"""A part after a restart, as a user meets it: a fresh middleware's first request
for a part of a large SQLite store, beside the deflate of the same XML.

A store of ``--urls`` (1,000,000 by default: 20 parts of 50,000 plain URLs,
built once in a temporary folder, about 10 s) is opened by a new middleware
each round, as a restarted worker would; its first request is
``GET /sitemap-N.xml.gz`` for the round's part (nothing cached, nothing
connected before). Beside it, the same round deflates the part's XML with the
module the package uses (zlib-ng when installed) at the server's level (6).
The table gives the medians of the rounds and of their ratios (target: the
first request <= 2.5x the deflate); then the same request again on the same
middleware with its cache emptied (a cold part on a warm process).

    python tests/benchmarks/restart.py
    python tests/benchmarks/restart.py --urls 200000 --rounds 9

A measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from site_map import get  # noqa: E402

from sitemap_middleware import SitemapMiddleware, open_store, render  # noqa: E402
from sitemap_middleware.model import Entry  # noqa: E402

BASE = "https://www.example.com"
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
TARGET = 2.5


def _nothing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b""]


def build(uri: str, urls: int) -> None:
    with open_store(uri) as store:
        for start in range(0, urls, 20_000):
            store.upsert(
                [
                    Entry(f"/products/{n}/some-item-name-{n}", T0, f"{n:016x}")
                    for n in range(start, min(urls, start + 20_000))
                ]
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    deflate = render.DEFLATE
    with tempfile.TemporaryDirectory() as folder:
        uri = f"sqlite:///{folder}/large.sqlite3"
        started = time.perf_counter()
        build(uri, args.urls)
        with open_store(uri) as store:
            parts = [p.number for p in store.parts()]
        print(
            f"{args.urls:,} URLs in {len(parts)} parts, built in"
            f" {time.perf_counter() - started:.0f} s; {args.rounds} rounds;"
            f" deflate by {deflate.__name__}"
        )
        figures: dict[str, list[float]] = {"deflate": [], "first": [], "again": []}
        ratios: dict[str, list[float]] = {"first": [], "again": []}
        for r in range(args.rounds):
            number = parts[r % len(parts)]
            app = SitemapMiddleware(_nothing, {"base_url": BASE, "store": uri})
            path = f"/sitemap-{number}.xml.gz"
            started = time.perf_counter()
            body = get(app, path)
            first = time.perf_counter() - started
            xml = gzip.decompress(body)
            started = time.perf_counter()
            deflate.compressobj(6, deflate.DEFLATED, 31).compress(xml)
            alone = time.perf_counter() - started
            app.server._cache.clear()
            started = time.perf_counter()
            get(app, path)
            again = time.perf_counter() - started
            app.close()
            for name, value in (("deflate", alone), ("first", first), ("again", again)):
                figures[name].append(value)
            ratios["first"].append(first / alone)
            ratios["again"].append(again / alone)
        ms = {name: statistics.median(values) * 1e3 for name, values in figures.items()}
        first, again = (statistics.median(ratios[k]) for k in ("first", "again"))
        print(f"deflate of the part's XML          {ms['deflate']:7.1f} ms")
        print(
            f"first request of a new middleware  {ms['first']:7.1f} ms"
            f" {first:5.2f}x  target <= {TARGET}x"
            f" {'ok' if first <= TARGET else '--'}"
        )
        print(f"the same, cache emptied            {ms['again']:7.1f} ms {again:5.2f}x")


if __name__ == "__main__":
    main()
