"""A worker's memory on a growing site: what its rendered-part cache holds.

One middleware (SQLite store, parts of 5,000 URLs) serves the index and every
part after each step of 2,000 new pages (written with ``store.upsert``, as the
writers would; each path a random-looking name), up to ``--pages`` (60,000 by
default): each step changes the open part, so each step makes a new version of
one part and of the index. After
each step the table gives the pages, the bodies the cache holds and their MiB,
and the process's resident memory (``/proc/self/statm``). The cache keeps the
newest version of each document: its size follows the site's parts, and
resident memory is flat once the store's own cache and the allocator's arenas
have grown to their bounds (an older release kept every version of a part
until 32 MiB).

    python tests/benchmarks/cache_soak.py
    python tests/benchmarks/cache_soak.py --pages 100000 --step 5000

A measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from site_map import get  # noqa: E402

from sitemap_middleware import SitemapMiddleware  # noqa: E402
from sitemap_middleware.model import Entry  # noqa: E402

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def _nothing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b""]


def _slug(n: int) -> str:
    # As little alike as real names are, so that gzip does not fold them away.
    return hashlib.sha1(str(n).encode()).hexdigest()[:24]


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60_000)
    parser.add_argument("--step", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        uri = f"sqlite:///{folder}/soak.sqlite3?part_size=5000"
        app = SitemapMiddleware(
            _nothing, {"base_url": "https://example.com", "store": uri}
        )
        store = app.store
        cache = app.server._cache
        print(
            f"{'pages':>7} {'parts':>5} {'bodies':>6} {'cache MiB':>9} {'RSS MiB':>8}"
        )
        written = 0
        while written < args.pages:
            store.upsert(
                [
                    Entry(f"/products/{n}/{_slug(n)}", T0, f"{n:016x}")
                    for n in range(written, written + args.step)
                ]
            )
            written += args.step
            parts = store.parts()
            get(app, "/sitemap.xml")
            for part in parts:
                get(app, f"/sitemap-{part.number}.xml.gz")
            held = len(cache)
            size = cache.size if hasattr(cache, "size") else cache_bytes(app)
            print(
                f"{written:7,} {len(parts):5} {held:6} {size / 2**20:9.1f}"
                f" {resident_mib():8.1f}",
                flush=True,
            )
        app.close()


def cache_bytes(app: Any) -> int:
    """The cache's bytes, as a release before this one kept them."""
    return int(app.server._cache_bytes)


if __name__ == "__main__":
    main()
