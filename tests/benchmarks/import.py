"""``sitemap-middleware import`` of a sitemap file against ``store.upsert`` of the
same entries into a new SQLite store, side by side in the same run: what reading
the file costs (the document read once, each entry's URL and dates, the config's
refusals; the store's add reads which paths it holds in its write) beyond the
store's own writing.

The sitemap: N URLs on the base URL's origin, each with a ``<lastmod>`` (every
third a date alone, the rest full W3C datetimes), a ``<changefreq>`` and a
``<priority>``, in one ``<urlset>`` (parts of 50,000 URLs under an index when N
is larger, as the protocol wants). The import runs in process through click's
test runner (no terminal: no progress bar); the upsert gets the entries the
import stores, built beforehand, on a store it opens and closes within its
time as the import does. Each is timed on a fresh store, best of 3.

Target: import <= 1.3x upsert.

Run it from the repository root with the project's virtualenv::

    python tests/benchmarks/import.py             # 100,000 URLs, ~1 minute
    python tests/benchmarks/import.py --n 20000   # a quick look
    python tests/benchmarks/import.py --n 50000 --phases   # where the time goes

``--phases`` times the import's steps apart, in process (one document of N
URLs): reading it, the config's refusals and the import's own adds (the
store's ``add``), each per URL and against the bulk upsert; the rest of
an import is the command's own start (opening the store, counting it).

``--instructions`` counts both with callgrind instead, each in a process of
its own, at N and at a third of N (the difference: what the URLs between cost,
the start-up cancelled out), the entries' making subtracted: the same count
whatever else the machine runs::

    python tests/benchmarks/import.py --n 15000 --instructions   # ~3 minutes
    python tests/benchmarks/import.py --n 15000 --instructions --phases

With ``--phases`` too, the same steps are counted apart (each run does
the steps before it as well, so that each step is the difference of two
runs): reading the document, the config's refusals, the store's ``add``,
and the rest of the command.

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from click.testing import CliRunner  # noqa: E402

from sitemap_middleware import Entry, open_store  # noqa: E402
from sitemap_middleware.cli import main  # noqa: E402

BASE = "https://www.example.com"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PART = 50_000


def _entries(n: int) -> list[Entry]:
    entries = []
    for i in range(n):
        when = T0 + timedelta(minutes=i)
        if i % 3 == 0:
            when = when.replace(hour=0, minute=0)
        entries.append(
            Entry(
                f"/blog/{i // 100}/post-{i}",
                when,
                changefreq="weekly",
                priority=0.5,
            )
        )
    return entries


def _urlset(entries: list[Entry]) -> str:
    rows = []
    for n, entry in enumerate(entries):
        assert entry.lastmod is not None
        stamp = (
            entry.lastmod.strftime("%Y-%m-%d")
            if n % 3 == 0
            else entry.lastmod.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        )
        rows.append(
            f"<url><loc>{BASE}{entry.path}</loc><lastmod>{stamp}</lastmod>"
            "<changefreq>weekly</changefreq><priority>0.5</priority></url>\n"
        )
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
    return f"{head}{''.join(rows)}</urlset>\n"


def _sitemap(folder: str, entries: list[Entry]) -> str:
    if len(entries) <= PART:
        path = os.path.join(folder, "sitemap.xml")
        Path(path).write_text(_urlset(entries))
        return path
    locs = []
    for start in range(0, len(entries), PART):
        name = f"sitemap-{start // PART + 1}.xml"
        Path(folder, name).write_text(_urlset(entries[start : start + PART]))
        locs.append(f"<sitemap><loc>{BASE}/{name}</loc></sitemap>")
    path = os.path.join(folder, "sitemap.xml")
    Path(path).write_text(f'<sitemapindex xmlns="{NS}">{"".join(locs)}</sitemapindex>')
    return path


def _timed_import(source: str, uri: str) -> float:
    start = time.perf_counter()
    result = CliRunner().invoke(
        main, ["import", "--store", uri, "--base-url", BASE, source]
    )
    took = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    return took


def _timed_upsert(entries: list[Entry], uri: str) -> float:
    # Opened and closed within the time, as the import's store is: closing
    # the last connection checkpoints the writes (SQLite's WAL), a cost of
    # theirs either way.
    start = time.perf_counter()
    with open_store(uri) as store:
        for begin in range(0, len(entries), 1000):
            store.upsert(entries[begin : begin + 1000])
    return time.perf_counter() - start


def _phases(n: int, rounds: int) -> None:
    import gc

    from sitemap_middleware.cli.sources import reading
    from sitemap_middleware.cli.store import IMPORT_BATCH, _add, _Allowed
    from sitemap_middleware.config import Config

    entries = _entries(n)
    config = Config.from_mapping({"base_url": BASE, "store": "memory://"})
    steps = ("reading", "refusals", "add in the import")
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sitemap.xml")
        Path(path).write_text(_urlset(entries))
        for round_ in range(rounds):
            took = dict.fromkeys(steps, 0.0)
            gc.disable()  # as the import does
            start = time.perf_counter()
            with reading(path, BASE) as found:
                items = list(found.items())
            took["reading"] = time.perf_counter() - start
            allowed = _Allowed(config, frozenset(), print)
            store = open_store(f"sqlite:///{folder}/phases-{round_}.sqlite3")
            store.known(["/"])  # the connection and tables made
            for begin in range(0, n, IMPORT_BATCH):
                batch = items[begin : begin + IMPORT_BATCH]
                start = time.perf_counter()
                kept = allowed(batch)
                middle = time.perf_counter()
                _add(store, kept, [])
                took["refusals"] += middle - start
                took["add in the import"] += time.perf_counter() - middle
            store.close()
            gc.enable()
            uri = f"sqlite:///{folder}/bulk-{round_}.sqlite3"
            took["store.upsert"] = _timed_upsert(entries, uri)
            for step, seconds in took.items():
                best[step] = min(best.get(step, seconds), seconds)
    print(f"{n:,} URLs, best of {rounds}, per URL")
    for step, seconds in best.items():
        ratio = seconds / best["store.upsert"]
        print(
            f"  {step + ':':22} {seconds * 1e6 / n:6.2f} us  {ratio:5.2f}x store.upsert"
        )


def _child(what: str, n: int, folder: str) -> None:
    """One counted run in a process of its own: the entries made (as every
    run makes them), then the import of ``folder``'s sitemap of ``n`` URLs,
    or the bulk upsert of the entries, or the import's steps up to one of
    :data:`STEPS` (``read``, ``refuse``, ``add``), or nothing more
    (``none``)."""
    entries = _entries(n)
    uri = f"sqlite:///{folder}/{what}.sqlite3"
    if what == "import":
        _timed_import(os.path.join(folder, "sitemap.xml"), uri)
    elif what == "upsert":
        _timed_upsert(entries, uri)
    elif what in STEPS:
        _steps(STEPS.index(what), n, os.path.join(folder, "sitemap.xml"), uri)


# The import's steps, each run of --instructions --phases doing those up to
# its own: the document read, the refusals, the store's add.
STEPS = ("read", "refuse", "add")


def _steps(last: int, n: int, source: str, uri: str) -> None:
    """The import's steps, as the command takes them, up to ``STEPS[last]``."""
    import gc

    from sitemap_middleware.cli.sources import reading
    from sitemap_middleware.cli.store import IMPORT_BATCH, _add, _Allowed
    from sitemap_middleware.config import Config

    gc.disable()  # as the import does
    with reading(source, BASE) as found:
        items = list(found.items())
    if last == 0:
        return
    config = Config.from_mapping({"base_url": BASE, "store": "memory://"})
    allowed = _Allowed(config, frozenset(), print)
    batches = [
        allowed(items[at : at + IMPORT_BATCH]) for at in range(0, n, IMPORT_BATCH)
    ]
    if last == 1:
        return
    with open_store(uri) as store:
        for batch in batches:
            _add(store, batch, [])


def _instructions(small: int, large: int, phases: bool) -> None:
    """Instructions a URL costs the import and the bulk upsert: each run at
    ``large`` less the same at ``small`` (the start-up cancels out), less
    what making the entries costs between the two (``none``); with
    ``phases``, the import's steps apart as well."""
    sys.path.insert(0, str(Path(__file__).parent))
    from callgrind import counted

    runs = ("none", "upsert", *(STEPS if phases else ()), "import")
    cost: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        for n in (small, large):
            os.makedirs(os.path.join(folder, str(n)))
            _sitemap(os.path.join(folder, str(n)), _entries(n))
        for what in runs:
            at = [
                counted(__file__, "--child", what, str(n), os.path.join(folder, str(n)))
                for n in (small, large)
            ]
            cost[what] = at[1] - at[0]
    per_url = {what: (cost[what] - cost["none"]) / (large - small) for what in runs}
    print(f"instructions a URL (callgrind, {large:,} less {small:,} URLs)")
    print(f"  store.upsert: {per_url['upsert']:10,.0f}")
    print(f"  import:       {per_url['import']:10,.0f}")
    ratio = per_url["import"] / per_url["upsert"]
    print(f"  ratio:        {ratio:10.2f}x (target <= 1.3x)")
    if phases:
        before = 0.0
        for step, name in zip(
            (*STEPS, "import"),
            ("reading", "refusals", "the store's add", "the command's rest"),
            strict=True,
        ):
            print(f"    {name + ':':20} {per_url[step] - before:10,.0f}")
            before = per_url[step]


def main_() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--phases", action="store_true")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions with callgrind (--n less a third of it)",
    )
    arguments = parser.parse_args()
    n, rounds = arguments.n, arguments.rounds
    if arguments.instructions:
        _instructions(n // 3, n, arguments.phases)
        return
    if arguments.phases:
        _phases(n, rounds)
        return
    entries = _entries(n)
    with tempfile.TemporaryDirectory() as folder:
        source = _sitemap(folder, entries)
        imports, upserts = [], []
        for round_ in range(rounds):
            uri = f"sqlite:///{folder}/import-{round_}.sqlite3"
            imports.append(_timed_import(source, uri))
            uri = f"sqlite:///{folder}/upsert-{round_}.sqlite3"
            upserts.append(_timed_upsert(entries, uri))
    best_import, best_upsert = min(imports), min(upserts)
    print(f"{n:,} URLs, best of {rounds}")
    print(f"  store.upsert: {best_upsert:6.2f} s  ({n / best_upsert:,.0f} URLs/s)")
    print(f"  import:       {best_import:6.2f} s  ({n / best_import:,.0f} URLs/s)")
    print(f"  ratio:        {best_import / best_upsert:6.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main_()
