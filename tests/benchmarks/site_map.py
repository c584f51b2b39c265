"""The site map page (``html_sitemap``) beside a cold XML part, in one run.

A store of 100,000 URLs (two parts: products under a route with parameters,
a blog, a few top pages; titles with numbers). Each round, side by side:

1. the floor: ``GET /sitemap-1.xml.gz``, 50,000 URLs, on a new middleware
   (nothing cached: a crawler's first fetch; the store connected beforehand);
2. ``GET /site-map?page=N`` (2,000 links) on a middleware that served the map
   before: (a) the first request after a change of one part (one page's
   content changed: that part is read again and the map sorted again on a
   thread of its own, which the request waits for ``FRESH_WAIT`` at most
   before it serves the previous map), (b) warm: a page not served yet of
   the arrangement made;
3. the first request of a new middleware (both parts read).

Then the memory (tracemalloc) of a new middleware's first page: the peak while
it arranges, and what it keeps (the arrangement and the parts' columns),
beside what the 100,000 ``Entry`` objects alone take.

Target: (2a) and (2b) <= 2x (1); (3) <= 5x (1). Each store is filled as a
site that serves its map fills it, each page with its place (every store of
the package keeps the map's order). With
``--instructions`` (SQLite only), (1) and (3) are counted with callgrind
instead, each in a process of its own less one that only connects,
and (3) split: the store's listing read alone, then the whole first page
(the arrangement, that page's sections sorted, the page rendered); the
page asked is ``--page`` (20, in the largest section, sorted whole).

    python tests/benchmarks/site_map.py                       # SQLite, ~30 s
    python tests/benchmarks/site_map.py --only sqlite,redis,postgres
    python tests/benchmarks/site_map.py --instructions        # ~5 minutes

Redis and PostgreSQL need the test suite's servers (``REDIS_URL``,
``DATABASE_URL``); their keys and tables are removed after. A measurement, not
a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent)]

from callgrind import counted  # noqa: E402
from support.store_kinds import Fresh  # noqa: E402

from sitemap_middleware import Entry, SitemapMiddleware, open_store, site_map  # noqa: E402
from sitemap_middleware.stores.contract import Mapped  # noqa: E402

BASE = "https://www.example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
N = 100_000


def entries(n: int) -> list[Entry]:
    out = [Entry("/", T0, title="Home"), Entry("/about", T0, title="About us")]
    for i in range(n - len(out)):
        if i % 5:
            path, route, title = (
                f"/products/{i}/item-{i}",
                "/products/<int:id>/<slug>",
                f"Product {i} in size {i % 40}",
            )
        else:
            path, route, title = f"/blog/note-{i}", "/blog/<slug>", f"Note {i}"
        out.append(Entry(path, T0, f"{i:016x}", route=route, title=title))
    return out


def timed(app: SitemapMiddleware, path: str) -> float:
    """Seconds to answer ``GET path``."""
    gc.collect()
    started = time.perf_counter()
    get(app, path)
    return time.perf_counter() - started


def _nothing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b""]


def middleware(uri: str) -> SitemapMiddleware:
    built = SitemapMiddleware(
        _nothing, {"base_url": BASE, "store": uri, "html_sitemap": "/site-map"}
    )
    built.store.count()  # connected, like a serving process
    return built


def get(app: SitemapMiddleware, path: str, patient: bool = False) -> bytes:
    target, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": target,
        "QUERY_STRING": query,
        "wsgi.url_scheme": "https",
        "SERVER_NAME": "www.example.com",
        "SERVER_PORT": "443",
        "HTTP_HOST": "www.example.com",
    }
    while True:
        status: list[str] = []
        body = b"".join(app(environ, lambda s, h, *a, seen=status: seen.append(s)))
        if not (patient and status == ["503 Service Unavailable"]):
            break
        # Longer than a request waits (under tracemalloc): answered once made.
        time.sleep(0.05)
    assert status == ["200 OK"], (path, status)
    return body


def measure(uri: str, rounds: int) -> dict[str, float]:
    served = middleware(uri)
    pages = -(-N // 2000)
    get(served, "/site-map")  # arranged once: (2) starts from a served map
    changed = served.store.part(2)
    assert changed is not None and changed.urls == N - 50_000
    figures: dict[str, list[float]] = {"1": [], "2a": [], "2b": [], "3": []}
    for r in range(rounds):
        fresh = middleware(uri)
        figures["1"].append(timed(fresh, "/sitemap-1.xml.gz"))
        fresh.close()
        # One page's content changes, in part 2: a new version of that part.
        when = T0 + timedelta(days=r + 1)
        served.store.upsert([Entry("/blog/note-99995", when, f"new-{r}")])
        page = 2 + r % (pages - 2)
        figures["2a"].append(timed(served, f"/site-map?page={page}"))
        site_map(served)  # waits for the arrangement that request started
        figures["2b"].append(timed(served, f"/site-map?page={page + 1}"))
        first = middleware(uri)
        figures["3"].append(timed(first, f"/site-map?page={page}"))
        first.close()
    served.close()
    return {name: statistics.median(times) for name, times in figures.items()}


def memory(uri: str) -> tuple[float, float, float]:
    """(peak, kept) of a new middleware's first page, and the size of the
    store's entries as ``Entry`` objects, in MiB."""
    fresh = middleware(uri)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    body = get(fresh, "/site-map?page=2", patient=True)
    current, peak = tracemalloc.get_traced_memory()
    kept = current - base - len(body)  # the page's bytes are cached: not kept
    tracemalloc.stop()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    held = [e for p in fresh.store.parts() for e in fresh.store.entries(p.number)]
    listed = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(held) == N
    fresh.close()
    mib = 2**20
    return (peak - base) / mib, kept / mib, listed / mib


# A long run's servers may be slow to answer: measured, not refused.
OPTIONS: dict[str, dict[str, object]] = {
    "sqlite": {},
    "redis": {"timeout": 10},
    "postgres": {"statement_timeout": 60000},
}


@contextmanager
def fresh_uri(kind: str) -> Iterator[str]:
    """A store of ``kind`` no run has used; what a server holds of it is
    deleted after."""
    stores = Fresh()
    with tempfile.TemporaryDirectory() as folder:
        try:
            yield stores.uri(kind, Path(folder), **OPTIONS[kind])
        finally:
            stores.cleanup()


def child(what: str, uri: str, page: int) -> None:
    """One counted step on a new middleware, connected first (``none``: only
    that)."""
    app = middleware(uri)
    # Patient: under callgrind a request outwaits its bound (503), the work
    # goes on and the next one is answered from it.
    if what == "part":
        get(app, "/sitemap-1.xml.gz", patient=True)
    elif what == "listing":
        assert sum(len(run) for p in app.store.parts() for run in listed(app, p)) == N
    elif what == "page":
        site_map(app, page=page)  # arranged here, waited for
        get(app, f"/site-map?page={page}", patient=True)
    # Not closed: the process ends here (a close flushes and joins threads
    # that callgrind runs one at a time, a cost of its own).


def listed(app: SitemapMiddleware, part: Any) -> Iterator[Any]:
    yield from app.store.listing(part.number)  # type: ignore[attr-defined]


def fill(uri: str, data: list[Entry]) -> None:
    """The store of a site that serves its map: each page written with its
    place on it (``keep_places``), as the middleware's writer writes them
    once the page is configured."""
    with open_store(uri) as store:
        if isinstance(store, Mapped):
            store.keep_places()
        for i in range(0, N, 10_000):
            store.upsert(data[i : i + 10_000])


def instructions(page: int) -> None:
    """(1) and (3) of a 100,000-URL SQLite store, in instructions."""
    with tempfile.TemporaryDirectory() as folder:
        uri = f"sqlite:///{folder}/map.db"
        data = entries(N)
        fill(uri, data)
        # What a file's first opening by a middleware does once (its check)
        # done before the counts, as on a serving site.
        child("part", uri, page)
        base = counted(__file__, "--child", "none", uri, str(page))
        cost = {
            what: counted(__file__, "--child", what, uri, str(page)) - base
            for what in ("part", "listing", "page")
        }
    floor = cost["part"]
    print(f"{N:,} URLs in 2 parts, SQLite; instructions beyond connecting")
    for what, label in (
        ("part", "(1) cold XML part, 50,000 URLs"),
        ("listing", "    the store's listing read of every part"),
        ("page", f"(3) site map page {page}, first of a new middleware"),
    ):
        print(f"  {label:52} {cost[what]:>14,} {cost[what] / floor:6.2f}x (1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="sqlite", help="sqlite,redis,postgres")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--page", type=int, default=20)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        what, uri, page = args.child
        return child(what, uri, int(page))
    if args.instructions:
        return instructions(args.page)
    data = entries(N)
    print(f"{N:,} URLs in 2 parts; a site map page: 2,000 links; medians of rounds")
    for name in args.only.split(","):
        with fresh_uri(name) as uri:
            fill(uri, data)
            figures = measure(uri, args.rounds)
            peak, kept, listed = memory(uri)
        floor = figures["1"]
        print(f"{name}:")
        rows = [
            ("1", "cold XML part, 50,000 URLs (the floor)", ""),
            ("2a", "site map page, first after a change", "  target <= 2"),
            ("2b", "site map page, warm", "  target <= 2"),
            ("3", "site map page, first of a new middleware", "  target <= 5"),
        ]
        for key, label, target in rows:
            seconds = figures[key]
            print(
                f"  ({key:2}) {label:42} {seconds * 1e3:8.1f} ms"
                f" {seconds / floor:6.2f}x (1){target}"
            )
        print(
            f"  memory of the first page: peak {peak:.1f} MiB, kept {kept:.1f} MiB;"
            f" the {N:,} entries as Entry objects: {listed:.1f} MiB"
        )


if __name__ == "__main__":
    main()
