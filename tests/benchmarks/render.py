"""Rendering one 50,000-URL sitemap page, beside its floors, in one run.

For the same 50,000 URLs (paths like ``/products/12345/some-item-name``):

1. floor: ``zlib`` level 6 (one gzip member) of the finished XML bytes;
2. this project's render of the page from its stored ``<url>`` fragments:
   (a) fragments in memory, (b) a cold read from a SQLite store, both with the
   deflate it uses (zlib-ng when installed), (c) as (b) with the standard
   library's zlib, the fallback;
3. ``django.contrib.sitemaps`` rendering the same URLs (its sitemap view and
   template, ``RequestFactory``), without gzip; skipped if Django is absent
   (``pip install django``: it is installed only for this benchmark).

At 1,000,000 URLs in SQLite (``--million``): the cold render of the last page
against the first, a cached page served through the middleware against a cold
render, and the peak memory (tracemalloc) a render allocates.

Targets: (2) <= 1.5x (1); (2) >= 40x faster than (3); last page
<= 1.2x first; cached >= 100x faster than cold; peak <= 2 MiB.

    python tests/benchmarks/render.py             # 50,000-URL page, ~30 s
    python tests/benchmarks/render.py --million   # adds the 1,000,000-URL store

A measurement, not a test: the exit status is 0 whatever the figures.
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sitemap_middleware import Entry, SitemapMiddleware, open_store  # noqa: E402
from sitemap_middleware.render import DEFLATE, fragment, urlset  # noqa: E402

BASE = "https://www.example.com"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
STAMP = int(T0.timestamp())
N = 50_000


def paths(count: int, start: int = 0) -> list[str]:
    return [f"/products/{n}/some-item-name" for n in range(start, start + count)]


def best(run: Callable[[], object], rounds: int) -> float:
    """The median of ``rounds`` timed runs, in seconds."""
    times = []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def django_render(urls: list[str]) -> Callable[[], bytes]:
    import django
    from django.conf import settings

    settings.configure(
        DEBUG=False,
        ALLOWED_HOSTS=["www.example.com"],
        INSTALLED_APPS=["django.contrib.sitemaps"],
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
            }
        ],
        USE_TZ=True,
        ROOT_URLCONF=__name__,
    )
    django.setup()
    from django.contrib.sitemaps import Sitemap
    from django.contrib.sitemaps.views import sitemap
    from django.test import RequestFactory

    class Pages(Sitemap):  # type: ignore[type-arg]
        limit = N
        protocol = "https"

        def items(self) -> list[str]:
            return urls

        def location(self, item: str) -> str:
            return item

        def lastmod(self, item: str) -> datetime:
            return T0

    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="www.example.com")

    def run() -> bytes:
        response = sitemap(request, {"pages": Pages})
        response.render()
        return bytes(response.content)

    return run


def page_figures(rounds: int) -> None:
    urls = paths(N)
    pieces = [fragment(Entry(path), STAMP) for path in urls]
    runs = [b"".join(pieces[i : i + 2000]) for i in range(0, N, 2000)]
    xml = zlib.decompress(urlset(BASE, runs), 31)
    print(
        f"one page: {N:,} URLs, {len(xml):,} bytes of XML; deflate: {DEFLATE.__name__}"
    )

    def floor() -> bytes:
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
        return compressor.compress(xml) + compressor.flush()

    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{folder}/s.sqlite3")
        store.upsert(Entry(path, T0) for path in urls)
        assert zlib.decompress(urlset(BASE, store.fragments(1)), 31) == xml
        figures = {
            "1 floor: zlib level 6 of the XML": best(floor, rounds),
            "2a render from fragments in memory": best(
                lambda: urlset(BASE, runs), rounds
            ),
            "2b cold render from SQLite": best(
                lambda: urlset(BASE, store.fragments(1)), rounds
            ),
            "2c the same with the stdlib's zlib": best(
                lambda: urlset(BASE, store.fragments(1), deflate=zlib), rounds
            ),
        }
        store.close()
    try:
        django = django_render(urls)
    except ImportError:
        print("django is not installed: pip install django for figure 3")
    else:
        # The same URLs, lastmods and order (Django writes no <changefreq>).
        assert django().count(b"<url>") == N
        figures["3 django.contrib.sitemaps (no gzip)"] = best(
            django, max(3, rounds // 4)
        )
    floor_time = figures["1 floor: zlib level 6 of the XML"]
    ours = figures["2b cold render from SQLite"]
    for name, seconds in figures.items():
        print(
            f"  {name:40} {seconds * 1e3:9.1f} ms  {seconds / floor_time:6.2f}x floor"
        )
    print(f"  (2b) / (1) = {ours / floor_time:.2f}  target <= 1.5")
    if "3 django.contrib.sitemaps (no gzip)" in figures:
        django_time = figures["3 django.contrib.sitemaps (no gzip)"]
        print(f"  (3) / (2b) = {django_time / ours:.1f}  target >= 40")


def million_figures(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        uri = f"sqlite:///{folder}/s.sqlite3"
        store = open_store(uri)
        start = time.perf_counter()
        urls = paths(1_000_000)
        for i in range(0, len(urls), 20_000):
            store.upsert(Entry(path, T0) for path in urls[i : i + 20_000])
        print(
            f"1,000,000 URLs in SQLite: bulk load {time.perf_counter() - start:.1f} s"
        )
        pages = store.parts()
        assert len(pages) == 20

        def cold(number: int) -> Callable[[], bytes]:
            return lambda: urlset(BASE, store.fragments(number))

        first, last = best(cold(1), rounds), best(cold(20), rounds)
        print(f"  cold render page 1  {first * 1e3:8.1f} ms")
        print(
            f"  cold render page 20 {last * 1e3:8.1f} ms  {last / first:.2f}x page 1"
            "  target <= 1.2"
        )

        middleware = SitemapMiddleware(_nothing, {"base_url": BASE, "store": uri})
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": "/sitemap-20.xml.gz",
            "wsgi.url_scheme": "https",
            "SERVER_NAME": "www.example.com",
            "SERVER_PORT": "443",
            "HTTP_HOST": "www.example.com",
        }

        def served() -> Any:
            return b"".join(middleware(dict(environ), lambda *a: None))

        served()  # fills the cache
        cached = best(lambda: [served() for _ in range(100)], rounds) / 100
        print(
            f"  cached page 20 served {cached * 1e6:8.1f} us  "
            f"{last / cached:.0f}x faster than cold  target >= 100"
        )
        middleware.close()

        fresh = open_store(uri)
        fresh.count()  # connected, like a serving process
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        body = urlset(BASE, fresh.fragments(20))
        peak = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
        print(
            f"  peak memory of a cold render {peak / 2**20:.2f} MiB "
            f"(of which the gzip body {len(body) / 2**20:.2f} MiB)  target <= 2"
        )
        fresh.close()
        store.close()


def _nothing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--million", action="store_true")
    args = parser.parse_args()
    page_figures(args.rounds)
    if args.million:
        million_figures(args.rounds)


if __name__ == "__main__":
    main()
