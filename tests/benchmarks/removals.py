"""What a writer's once-a-second look at the store's removals log costs
(``StoreWatch.look``: one ``removed_since`` read, then ``Recent.forget`` for each
path removed since), when nothing was removed, and after 100 and 10,000 removals
(a flood of 404s for stored pages: the most the log keeps between two looks).

Run it from the repository root with the project's virtualenv, with the store
URIs to measure (a fresh SQLite file, Redis prefix or PostgreSQL table prefix;
the store is written to)::

    PYTHONPATH=. python tests/benchmarks/removals.py memory:// \\
        sqlite:////tmp/removals.sqlite3 "redis://127.0.0.1:6379/0?prefix=bench" \\
        "postgresql://postgres@127.0.0.1/test?table_prefix=bench_"

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from sitemap_middleware import Entry, open_store  # noqa: E402
from sitemap_middleware.recording.digest import Prints  # noqa: E402
from sitemap_middleware.recording.recent import RECENT_PAGES, Recent  # noqa: E402
from sitemap_middleware.stores.contract import Removals  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
LOOKS = 200
PRINTS = Prints("raw", "content")


def measure(uri: str) -> None:
    store = open_store(uri)
    assert isinstance(store, Removals)
    # A worker that remembers as many pages as it can.
    recent = Recent(300)
    for n in range(RECENT_PAGES):
        recent.remember(f"/kept/{n}", PRINTS)
    figures = []
    for removed in (0, 100, 10_000):
        paths = [f"/gone/{n}" for n in range(removed)]
        store.upsert(Entry(path, T0, "f") for path in paths)
        seq = store.removed_since(None).seq
        store.remove(paths)
        best = float("inf")
        for _ in range(LOOKS if removed < 10_000 else 10):
            start = time.perf_counter()
            answer = store.removed_since(seq)
            for path in answer.paths or ():
                recent.forget(path, path)
            best = min(best, time.perf_counter() - start)
        assert answer.paths is not None and len(answer.paths) == removed
        figures.append(f"{removed} removed: {best * 1e3:.3f} ms")
    store.close()
    print(f"{uri.partition(':')[0]}: a look, best of runs: " + ", ".join(figures))


def main() -> None:
    for uri in sys.argv[1:] or ["memory://"]:
        measure(uri)


if __name__ == "__main__":
    main()
