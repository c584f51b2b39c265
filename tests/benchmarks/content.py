"""The content fingerprint of a realistic 32 KiB page, beside a plain SHA-1 of it.

The page is the templated blog post of ``tests/page/test_content.py`` (32 KiB, about
1,000 tags: a head of 20-odd tags, navigation, an article of 79 paragraphs with
links and figures, comments, a form with a CSRF token, inline scripts with
nonces, a footer with a clock and a view counter), sent as one chunk. In one
process, in alternating batches with the garbage collector off, it times:

sha1          ``hashlib.sha1`` over the body's chunks, what the recorder digests
              today;
fingerprint   ``content.fingerprint`` as configured by default (no ignore
              patterns); then with two ignore patterns (a clock and a view
              counter, ``tests/page/test_content.py``'s); then for the same page
              without ``<main>`` (the whole body is read);
head          ``head.scan_head``, which the writer runs on the same body (its
              quick scan), then with html.parser reading the head
              (``quick=False``, what every head cost before the quick scan);
re.split      the tokenizing step of the fingerprint alone, to show where its
              time goes.

Each line gives the median of the batch means and its ratio to sha1. The
targets: the fingerprint costs at most 1.5x a plain SHA-1 of the page, the
head scan at most 2.5x. The verdict lines compare fingerprint / sha1 (both
totals, not the part added, default configuration) with 1.5, also giving
what replacing today's SHA-1 by the fingerprint adds, (fingerprint - sha1) /
sha1, and head / sha1 with 2.5.

The ratios depend on the processor: OpenSSL's SHA-1 uses the SHA extensions
where the CPU has them, several times faster than without, while the scan
and the fingerprint are Python and regexes. Under callgrind (which offers no
SHA extensions) the head scan is 440k instructions against SHA-1's 400k.

    python tests/benchmarks/content.py            # about 20 seconds
    python tests/benchmarks/content.py --rounds 30

A measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from page.test_content import CLOCK, VIEWS, page  # noqa: E402

from sitemap_middleware.page.content import _MARKUP, _region, fingerprint  # noqa: E402
from sitemap_middleware.page.head import scan_head  # noqa: E402

BATCH = 50  # calls per timed batch
TARGET = 1.5
HEAD_TARGET = 2.5


def sha1(chunks: list[bytes]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def measure(cases: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median of per-batch mean times, in microseconds, batches interleaved."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for call in cases.values():  # warm up
        call()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, call in cases.items():
                start = time.perf_counter()
                for _ in range(BATCH):
                    call()
                times[name].append((time.perf_counter() - start) / BATCH * 1e6)
    finally:
        gc.enable()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()

    ignore: tuple[re.Pattern[bytes], ...] = (CLOCK, VIEWS)
    body = page()
    bare = page(main=False)
    chunks, bare_chunks = [body], [bare]
    region = _region(body)[0]
    cases: dict[str, Callable[[], object]] = {
        "sha1": lambda: sha1(chunks),
        "fingerprint": lambda: fingerprint(chunks),
        "fingerprint, 2 patterns": lambda: fingerprint(chunks, ignore),
        "fingerprint, no <main>": lambda: fingerprint(bare_chunks),
        "head": lambda: scan_head(chunks),
        "head, html.parser": lambda: scan_head(chunks, quick=False),
        "head + fingerprint": lambda: (scan_head(chunks), fingerprint(chunks)),
        "re.split of <main> only": lambda: _MARKUP.split(region),
    }
    print(
        f"page: {len(body):,} bytes, {body.count(b'<'):,} '<'; <main>: "
        f"{len(region):,} bytes; {args.rounds} rounds of {BATCH} calls each"
    )
    result = measure(cases, args.rounds)
    base = result["sha1"]
    print(f"{'':26}{'median':>10}{'x sha1':>9}")
    for name, micros in result.items():
        print(f"{name:26}{micros:8.1f} us{micros / base:8.2f}x")
    ratio = result["fingerprint"] / base
    verdict = "meets" if ratio <= TARGET else "misses"
    print(
        f"fingerprint / sha1 (totals) = {ratio:.2f}x: {verdict} the {TARGET}x "
        f"target; replacing sha1 adds {(result['fingerprint'] - base) / base:.2f}x "
        f"sha1; head + fingerprint = {result['head + fingerprint'] / base:.2f}x sha1"
    )
    head = result["head"] / base
    verdict = "meets" if head <= HEAD_TARGET else "misses"
    print(f"head / sha1 = {head:.2f}x: {verdict} the {HEAD_TARGET}x target")


if __name__ == "__main__":
    main()
