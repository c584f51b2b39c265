"""Throughput of the recorder's writer: N observations of distinct small HTML pages
pushed through the digest and the writer into a ``memory://`` store.

Each round makes a fresh recorder and store, submits N observations (flushing
every 5,000, so the bounded queue never drops), and times submit-to-flushed in
CPU time of the process (both threads); the
line printed gives the best and the median round. No rate limit, no cap.

Run it from the repository root with the project's virtualenv::

    PYTHONPATH=. python tests/benchmarks/writer.py [N] [ROUNDS]

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import gc
import sys
import time

from sitemap_middleware.config import Config
from sitemap_middleware.reasons import RECORD
from sitemap_middleware.recording.observation import Observation
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores import open_store
from sitemap_middleware.watching.policy import Policy

CONFIG = Config.from_mapping(
    {
        "base_url": "https://www.example.com",
        "store": "memory://",
        "new_urls_per_minute": None,
        "max_urls": None,
    }
)
ROUTE = Routes(CONFIG).unknown
HEADERS = [("Content-Type", "text/html; charset=utf-8")]
FLUSH_EVERY = 5000


def body(n: int) -> list[bytes]:
    """A small page of about 400 bytes, its own canonical link in its head."""
    return [
        (
            f"<!doctype html><html><head><title>Page {n}</title>"
            f'<link rel="canonical" href="/p/{n}"></head>'
            f"<body><h1>Page {n}</h1><p>{'lorem ipsum ' * 20}</p></body></html>"
        ).encode()
    ]


def round_(first: int, n: int) -> float:
    """CPU seconds (all threads) to record ``n`` new pages, from the first
    submit to flushed: less noisy than wall time on a shared machine."""
    store = open_store("memory://")
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    observations = []
    for i in range(first, first + n):
        path, chunks = f"/p/{i}", body(i)
        size = sum(map(len, chunks))
        observations.append(
            Observation(
                RECORD, path, path, "", False, ROUTE, HEADERS, chunks, size, 0.0
            )
        )
    gc.collect()
    start = time.process_time()
    for i, observation in enumerate(observations):
        recorder.submit(observation._replace(seen=time.time()))
        if i % FLUSH_EVERY == FLUSH_EVERY - 1:
            assert recorder.flush(60)
    assert recorder.flush(60)
    took = time.process_time() - start
    assert recorder.stats()["recorded"] == n == store.count()
    recorder.close()
    return took


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    times = sorted(round_(r * n, n) for r in range(rounds))
    median = times[rounds // 2]
    print(
        f"{n} pages x {rounds} rounds: best {times[0]:.3f} s, median {median:.3f} s"
        f" ({n / median / 1000:.1f}k pages/s, {median / n * 1e6:.0f} us a page)"
    )


if __name__ == "__main__":
    main()
