"""Throughput of the recorder's writer: N observations of distinct small HTML pages
pushed through the digest and the writer into a ``memory://`` store.

Each round makes a fresh recorder and store, submits N observations (flushing
every 5,000, so the bounded queue never drops), and times submit-to-flushed in
CPU time of the process (both threads); the
line printed gives the best and the median round. No rate limit, no cap.

With ``--page``, the writer's CPU per *changed* 33 KB page (the templated blog
post of ``tests/page/test_content.py``, its canonical its own path, a word of
its article changed at each visit of 200 paths) against a SHA-1 of the same
bytes, in rounds interleaved A B A B; the ratio of the medians is the figure
(target: 30x; the head scan's share is ``content.py``'s).

Run it from the repository root with the project's virtualenv::

    PYTHONPATH=. python tests/benchmarks/writer.py [N] [ROUNDS]
    PYTHONPATH=. python tests/benchmarks/writer.py --page [N] [ROUNDS]

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import gc
import hashlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from sitemap_middleware.config import Config  # noqa: E402
from sitemap_middleware.reasons import RECORD  # noqa: E402
from sitemap_middleware.recording.observation import Observed  # noqa: E402
from sitemap_middleware.recording.recorder import Recorder  # noqa: E402
from sitemap_middleware.routes import Routes  # noqa: E402
from sitemap_middleware.stores import open_store  # noqa: E402
from sitemap_middleware.watching.policy import Policy  # noqa: E402

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
PATHS = 200  # the paths the changed pages are visits of


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
            Observed(RECORD, path, path, "", False, ROUTE, HEADERS, chunks, size, 0.0)
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


def changed_pages(n: int) -> list[tuple[str, bytes]]:
    """``n`` visits of :data:`PATHS` paths, each visit's article a word apart."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from page.test_content import page

    template = page(word="WORD")
    visits = []
    for i in range(n):
        path = f"/blog/post-{i % PATHS}"
        body = template.replace(b"/blog/garden-shed", path.encode())
        visits.append((path, body.replace(b"WORD", f"w{i}".encode())))
    return visits


def page_round(visits: list[tuple[str, bytes]]) -> tuple[float, float]:
    """CPU seconds (all threads) to SHA-1 each body, then to record each."""
    gc.collect()
    start = time.process_time()
    for _, data in visits:
        hashlib.sha1(data, usedforsecurity=False).hexdigest()
    sha1 = time.process_time() - start
    store = open_store("memory://")
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    start = time.process_time()
    for i, (path, data) in enumerate(visits):
        recorder.submit(
            Observed(
                RECORD, path, path, "", False, ROUTE, HEADERS, [data], len(data), 1.0
            )._replace(seen=time.time())
        )
        if i % PATHS == PATHS - 1:  # each path once a batch: each visit a write
            assert recorder.flush(60)
    assert recorder.flush(60)
    took = time.process_time() - start
    assert recorder.stats()["recorded"] == len(visits), recorder.stats()
    recorder.close()
    return sha1, took


def main_page(n: int, rounds: int) -> None:
    visits = changed_pages(n)
    page_round(visits[:400])  # warm up
    sha1s, writes = zip(*(page_round(visits) for _ in range(rounds)), strict=True)
    sha1, write = statistics.median(sha1s), statistics.median(writes)
    print(
        f"{n} changed 33 KB pages x {rounds} rounds: sha1 {sha1 / n * 1e6:.1f} us,"
        f" writer {write / n * 1e6:.0f} us a page: {write / sha1:.1f}x sha1"
        " (target 30x)"
    )


def main() -> None:
    if sys.argv[1:2] == ["--page"]:
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000
        main_page(n, int(sys.argv[3]) if len(sys.argv) > 3 else 5)
        return
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
