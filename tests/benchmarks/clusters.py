"""The write cost of hreflang clusters, decided by the store in the write's
transaction: N pages in clusters of 3 languages through ``store.upsert`` in
batches of 1,000, language by language (so each batch reads the members stored by
earlier batches and rewrites them), against the same pages without alternates;
and the same clusters across 3 sites (a language a site, each its own listing,
linked as the middleware links them: each batch reads the other sites' members
and has them settled again there).

Run it from the repository root with the servers of the test suite up::

    python tests/benchmarks/clusters.py --n 30000 --only sqlite,redis,postgres

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.services import DATABASE_URL, REDIS_URL  # noqa: E402

from sitemap_middleware import Entry, open_store  # noqa: E402
from sitemap_middleware.stores import link_sites  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
LANGUAGES = ("en", "de", "fr")


def entries(n: int, clustered: bool) -> list[Entry]:
    clusters = n // len(LANGUAGES)
    out = []
    for lang in LANGUAGES:
        for k in range(clusters):
            alternates = (
                tuple((other, f"/{other}/{k}") for other in LANGUAGES)
                if clustered
                else ()
            )
            out.append(Entry(f"/{lang}/{k}", T0, f"f{k}", alternates=alternates))
    return out


def across(n: int) -> dict[str, list[Entry]]:
    """The clustered pages, each language on a site of its own: site -> its
    pages, the other sites' members as their URLs."""
    clusters = n // len(LANGUAGES)
    out: dict[str, list[Entry]] = {}
    for lang in LANGUAGES:
        out[lang] = [
            Entry(
                f"/{lang}/{k}",
                T0,
                f"f{k}",
                alternates=tuple(
                    (other, ("" if other == lang else site(other)) + f"/{other}/{k}")
                    for other in LANGUAGES
                ),
            )
            for k in range(clusters)
        ]
    return out


def site(lang: str) -> str:
    return f"https://{lang}.example"


def uri(kind: str, folder: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{folder}/{secrets.token_hex(4)}.db"
    if kind == "redis":
        return (
            f"{REDIS_URL}?{urlencode({'prefix': f'{{bench-{secrets.token_hex(4)}}}:'})}"
        )
    return f"{DATABASE_URL}?table_prefix=bench_{secrets.token_hex(4)}_"


def cleanup(kind: str, store: object) -> None:
    if kind == "redis":
        client = store._connection().redis  # type: ignore[attr-defined]
        keys = list(client.scan_iter(match=f"{store.prefix}*"))  # type: ignore[attr-defined]
        if keys:
            client.delete(*keys)
    elif kind == "postgres":
        with store._borrow() as conn:  # type: ignore[attr-defined]
            p = store.prefix  # type: ignore[attr-defined]
            conn.execute(f"DROP TABLE {p}url, {p}page, {p}meta")


def run(kind: str, n: int, clustered: bool, folder: str) -> float:
    store = open_store(uri(kind, folder))
    batch = entries(n, clustered)
    store.count()  # connected
    start = time.perf_counter()
    for i in range(0, len(batch), 1000):
        store.upsert(batch[i : i + 1000])
    seconds = time.perf_counter() - start
    cleanup(kind, store)
    store.close()
    return len(batch) / seconds


def run_sites(kind: str, n: int, folder: str) -> float:
    uris = {lang: uri(kind, folder) for lang in LANGUAGES}
    stores = {lang: open_store(uris[lang]) for lang in LANGUAGES}
    handles = link_sites({site(lang): (uris[lang], stores[lang]) for lang in uris})
    pages = across(n)
    for store in [*stores.values(), *handles]:
        store.count()  # connected
    start = time.perf_counter()
    for lang in LANGUAGES:
        batch = pages[lang]
        for i in range(0, len(batch), 1000):
            stores[lang].upsert(batch[i : i + 1000])
    seconds = time.perf_counter() - start
    for store in stores.values():
        cleanup(kind, store)
    for store in [*stores.values(), *handles]:
        store.close()
    return sum(map(len, pages.values())) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=30_000)
    parser.add_argument("--only", default="sqlite,redis,postgres")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{args.n:,} pages, clusters of 3, batches of 1,000")
        print(
            f"{'store':10} {'plain/s':>10} {'clusters/s':>11} {'ratio':>6}"
            f" {'sites/s':>10} {'ratio':>6}"
        )
        for kind in args.only.split(","):
            plain = run(kind, args.n, False, folder)
            clustered = run(kind, args.n, True, folder)
            sites = run_sites(kind, args.n, folder)
            print(
                f"{kind:10} {plain:10,.0f} {clustered:11,.0f} {clustered / plain:5.2f}x"
                f" {sites:10,.0f} {sites / plain:5.2f}x"
            )


if __name__ == "__main__":
    main()
