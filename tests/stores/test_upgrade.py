"""Stores written by the release before titles upgrade in place on first use: no
row lost, every fragment byte-identical, titles stored from the next write, the
removals log kept from the next removal; and a worker of that release keeps
writing (and reconnecting) while one of this release upgrades the store under it.
The visits are kept from the next visit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from io import BytesIO
from pathlib import Path

import pytest
from support.readonly import read_only_folder
from support.store_kinds import Fresh

from sitemap_middleware import Entry, Store, StoreError, StoreFault, open_store
from sitemap_middleware.model import UNDATED
from sitemap_middleware.stores.contract import Article, News, Removals, Visit, Visits

ROOT = Path(__file__).resolve().parents[2]
# The last commit of the release before titles: its package writes the stores
# this release must upgrade.
PREVIOUS = "985a72403206bf5457bc3d92ca5952657ac72001"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PAGES = 1000

# Run by the previous release's package: write PAGES entries (hreflang pairs,
# images, routes) to the store, or with "loop" keep writing batches, each on a
# store opened again, until the stop file appears; then print what it reads.
WRITER = """
import json, os, sys, time
from datetime import datetime, timezone
import sitemap_middleware
from sitemap_middleware import Entry, open_store

assert sitemap_middleware.__file__.startswith(sys.argv[3]), sitemap_middleware.__file__
uri, mode = sys.argv[1], sys.argv[2]
t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

ENTRY

if mode == "write":
    with open_store(uri) as store:
        store.upsert(entry(n) for n in range(int(sys.argv[4])))
        parts = [p.number for p in store.parts()]
        fragments = {n: b"".join(store.fragments(n)).hex() for n in parts}
        entries = [
            [e.path, e.lastmod.isoformat(), e.fingerprint, e.route]
            for n in parts for e in store.entries(n)
        ]
    print(json.dumps({"fragments": fragments, "entries": entries}))
else:
    stop, n = sys.argv[4], 0
    while not os.path.exists(stop) or n < 20:
        with open_store(uri) as store:
            store.upsert(Entry(f"/old/{n}/{i}", t0, "f") for i in range(25))
            store.upsert([Entry("/shared", t0, f"old {n}")])
            store.remove([f"/old/{n}/0"])
            store.count()
            list(store.entries(1))
        n += 1
        if n == 1:
            open(stop + ".started", "w").close()
    print(n)
"""


# The entries both releases write: hreflang pairs, images, a route.
ENTRY = """
def entry(n, title=None):
    k = n // 2
    path = f"/p/{k}" if n % 2 == 0 else f"/de/p/{k}"
    pair = (("en", f"/p/{k}"), ("de", f"/de/p/{k}"))
    extra = {"title": title} if title else {}
    return Entry(
        path, t0, f"f{n}", "weekly", 0.5, "/p/<n>",
        alternates=pair if n < 200 else (),
        images=(f"/img/{n}.png",),
        **extra,
    )
"""
WRITER = WRITER.replace("ENTRY", ENTRY)


def entry(n: int, title: str | None = None) -> Entry:
    found: dict[str, Callable[..., Entry]] = {}
    exec(ENTRY, {"Entry": Entry, "t0": T0}, found)
    return found["entry"](n, title)


def unpacked(
    commit: str, release: str, tmp_path_factory: pytest.TempPathFactory, folder: str
) -> Path:
    """The package of ``commit`` (``release``, as a skip names it when the
    checkout lacks it), unpacked from the repository's history in ``folder``."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "sitemap_middleware"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"{release} is not in this checkout: {exc}")
    where = tmp_path_factory.mktemp(folder)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    return where


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's package, unpacked from the repository's history."""
    return unpacked(PREVIOUS, "the previous release", tmp_path_factory, "previous")


def run_previous(previous: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(previous)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, args[0], args[1], str(previous), *args[2:]],
        cwd=previous,  # not the repository: its package must not be found first
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return out


def sqlite_uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/old.sqlite3"


@pytest.fixture(params=["postgres", "redis", "sqlite"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path, fresh: Fresh) -> str:
    """A fresh store of each kind the previous release wrote."""
    return fresh.uri(request.param, tmp_path)


def read(store: Store) -> dict[str, object]:
    parts = [p.number for p in store.parts()]
    return {
        "fragments": {str(n): b"".join(store.fragments(n)).hex() for n in parts},
        "entries": [
            [e.path, str(e.lastmod and e.lastmod.isoformat()), e.fingerprint, e.route]
            for n in parts
            for e in store.entries(n)
        ],
    }


@pytest.mark.slow
def test_a_store_of_the_previous_release_upgrades_in_place(
    store_uri: str, previous: Path
) -> None:
    before = json.loads(
        finished(run_previous(previous, store_uri, "write", str(PAGES)))
    )
    assert len(before["entries"]) == PAGES
    assert b"xhtml:link" in bytes.fromhex(before["fragments"]["1"])
    with open_store(store_uri) as store:
        after = read(store)
        assert after == before  # every row, every fragment byte for byte
        assert {e.title for e in store.entries(1)} == {None}
        version = store.part(1).version  # type: ignore[union-attr]
        # The next write stores titles (and a title alone moves no version).
        store.upsert(entry(n, f"Title {n}") for n in range(PAGES))
        assert store.part(1).version == version  # type: ignore[union-attr]
        titles = {e.path: e.title for e in store.entries(1)}
        assert titles["/p/1"] == "Title 2" and titles["/de/p/1"] == "Title 3"
        assert read(store) == before
        # And descriptions, kept beside the titles (a description alone moves
        # no version either).
        assert {e.description for e in store.entries(1)} == {None}
        store.upsert([replace(entry(2, "Title 2"), description="About 2")])
        assert store.part(1).version == version  # type: ignore[union-attr]
        described = {e.path: e for e in store.entries(1)}["/p/1"]
        assert (described.title, described.description) == ("Title 2", "About 2")
        assert read(store) == before
        store.note([("/p/1", "recorded", T0)])  # type: ignore[attr-defined]
    with open_store(store_uri) as store:  # opened again: nothing to upgrade
        assert read(store) == before
        assert store.decisions("/p/1") == [("recorded", T0)]  # type: ignore[attr-defined]
        # The removals log: made on open, written by the next removal.
        assert isinstance(store, Removals)
        assert store.removed_since(0).paths == ()
        assert store.remove(["/p/1", "/missing"]) == 1
        assert store.removed_since(0).paths == ("/p/1",)
        # The news articles: made on open, written beside the pages.
        assert isinstance(store, News) and store.news(0) == []
        now = int(time.time())
        store.publish([Article("/p/2", now, "T", "en", "N")], now)
        assert store.news(now) == [Article("/p/2", now, "T", "en", "N")]
        # The visits: made on open, written by the next visit.
        assert isinstance(store, Visits)
        assert list(store.visits()) == []
        store.visited([Visit("/p/2", "google", 1, 200), Visit("/none", "", 2, 404)])
        assert sorted(store.visits()) == [
            Visit("/none", "", 2, 404),
            Visit("/p/2", "google", 1, 200),
        ]


@pytest.mark.slow
def test_the_previous_release_keeps_writing_during_the_upgrade(
    store_uri: str, previous: Path, tmp_path: Path
) -> None:
    finished(run_previous(previous, store_uri, "write", "10"))
    stop = tmp_path / "stop"
    old = run_previous(previous, store_uri, "loop", str(stop))
    started = tmp_path / "stop.started"
    deadline = time.monotonic() + 60
    while not started.exists() and old.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        # The upgrade happens under the old worker; then both write.
        for n in range(20):
            with open_store(store_uri) as store:
                store.upsert(
                    Entry(f"/new/{n}/{i}", T0, "f", title=f"New {i}") for i in range(25)
                )
                store.upsert([Entry("/shared", T0, f"new {n}", title="Shared")])
                store.count()
    finally:
        stop.touch()
    loops = int(finished(old))
    assert loops >= 20
    with open_store(store_uri) as store:
        listed = [e for p in store.parts() for e in store.entries(p.number)]
        paths = {e.path for e in listed}
        assert len(paths) == len(listed) == store.count()
        assert all(f"/new/{n}/{i}" in paths for n in range(20) for i in range(25))
        assert all(f"/old/{n}/{i}" in paths for n in range(loops) for i in range(1, 25))
        assert not any(f"/old/{n}/0" in paths for n in range(loops))
        titled = {e.path: e.title for e in listed}
        assert titled["/new/3/4"] == "New 4"


@pytest.mark.slow
def test_the_previous_release_s_lastmods_stay_under_the_new_rules(
    store_uri: str, previous: Path
) -> None:
    """Rows the previous release dated (with the time first seen) keep their
    lastmod: the same content read again keeps it, a change seen moves it; a
    page new to the store has none, and its <url> no <lastmod>."""
    finished(run_previous(previous, store_uri, "write", "10"))
    seen = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=5)
    with open_store(store_uri) as store:
        assert {e.lastmod for e in store.entries(1)} == {T0}
        same, changed = entry(0), entry(1)
        store.upsert(
            [
                replace(same, lastmod=UNDATED, seen=seen),
                replace(changed, lastmod=UNDATED, fingerprint="changed", seen=seen),
                Entry("/new", UNDATED, "n", seen=seen),
            ]
        )
        after = {e.path: e.lastmod for e in store.entries(1)}
        assert len(after) == 11
        assert after[same.path] == T0 and after[changed.path] == seen
        assert after["/new"] == UNDATED
        assert b"<url><loc>\x00/new</loc></url>" in b"".join(store.fragments(1))
        assert store.part(1).lastmod == seen  # type: ignore[union-attr]


def test_a_store_of_a_newer_release_is_refused(tmp_path: Path) -> None:
    import sqlite3

    uri = sqlite_uri(tmp_path)
    with open_store(uri) as store:
        store.count()
    conn = sqlite3.connect(tmp_path / "old.sqlite3")
    conn.execute("UPDATE sitemap_meta SET value = '3' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer release of sitemap_middleware"):
        open_store(uri).count()


# -- every layout the SQLite store has written -------------------------------------

# The last commit to write each layout of the SQLite file (git log -p --
# sitemap_middleware/stores/sqlite/): what the current code must open with
# every row kept.
SQLITE_LAYOUTS = {
    # schema 1: no fragments (changefreq and priority columns), parts by count
    "1": "10ce4cd32620f447011ec44643e5becedd6e4d1e",
    # schema 2: fragments, part sizes in bytes
    "2": "9fac2fe6c5e82e1d28344885a826d1b3600ae03f",
    # + the route index (count(route))
    "2+route": "6b483f7bc3287bcebfd5476f946a17a6eaac356c",
    # + the declared alternates column (hreflang clusters settled in the store)
    "2+declared": "368c5763ed8efb2d0a21a2d772230e5c979880d9",
    # + the site's counters and settings
    "2+counts": "e4a2409e83fca007a4592182674c573174b1f998",
    # + the title column and the decisions log
    "2+titles": "01dcb4be7e9e4f77fd6626c8b03c6a008dd71fec",
    # + the pending IndexNow pushes (a branch of its own: no titles)
    "2+pushes": "8ae081db8b7a41ca2ef736f8893086a9677ee408",
    # + the removals log: the release before the news articles
    "2+removals": "b514e333dacd39311c06dd047ad0de56743c0e9f",
}
LAYOUT_PAGES = 300

# Run by a release's package: write LAYOUT_PAGES entries with whatever its
# Entry has (alternates, images), remove one, print the fields it knows.
LAYOUT_WRITER = """
import dataclasses, json, sys
from datetime import datetime, timedelta, timezone
import sitemap_middleware
from sitemap_middleware import Entry, open_store

assert sitemap_middleware.__file__.startswith(sys.argv[2]), sitemap_middleware.__file__
t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
fields = {f.name for f in dataclasses.fields(Entry)}

def entry(n):
    k = n // 2
    path = f"/p/{k}" if n % 2 == 0 else f"/de/p/{k}"
    extra = {}
    if "alternates" in fields and n < 40:
        extra["alternates"] = (("en", f"/p/{k}"), ("de", f"/de/p/{k}"))
    if "images" in fields:
        extra["images"] = (f"/img/{n}.png",)
    lastmod = t0 + timedelta(minutes=n)
    priority = (5 + n % 5) / 10
    return Entry(path, lastmod, f"f{n}", "weekly", priority, "/p/<n>", **extra)

with open_store(sys.argv[1]) as store:
    store.upsert(entry(n) for n in range(int(sys.argv[3])))
    store.remove(["/p/3"])
print(json.dumps(sorted(fields)))
"""


@pytest.fixture(scope="module", params=sorted(SQLITE_LAYOUTS))
def layout_release(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """A release's package that wrote one layout of the SQLite file."""
    commit = SQLITE_LAYOUTS[request.param]
    folder = f"layout-{request.param}"
    return request.param, unpacked(commit, commit, tmp_path_factory, folder)


def _raw_rows(path: Path) -> list[tuple[object, ...]]:
    """The rows as the old release left them, in first-seen order."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(sitemap_url)")}
        wanted = ["path", "lastmod", "fingerprint", "route"]
        wanted += ["fragment"] if "fragment" in columns else ["changefreq", "priority"]
        return conn.execute(
            f"SELECT {', '.join(wanted)} FROM sitemap_url ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()


@pytest.mark.slow
def test_every_sqlite_layout_opens_with_every_row(
    layout_release: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file written by the release of each layout the SQLite store ever had
    opens with this release: every row kept (path, lastmod, fingerprint,
    route), a schema-2 fragment byte for byte, a schema-1 row rendered with
    its changefreq and priority; the file takes writes afterwards, and is
    upgraded once."""
    import logging
    import sqlite3

    from support.helpers import NS, parse

    name, package = layout_release
    db = tmp_path / "old.sqlite3"
    writer = subprocess.run(
        [
            *(sys.executable, "-c", LAYOUT_WRITER),
            *(f"sqlite:///{db}", str(package), str(LAYOUT_PAGES)),
        ],
        cwd=package,
        env={**os.environ, "PYTHONPATH": str(package)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert writer.returncode == 0, writer.stderr
    rows = _raw_rows(db)
    assert len(rows) == LAYOUT_PAGES - 1
    # Read-only first (a read-only file system): served as it is, or, for the
    # layout that needs rewriting, a fault saying so.
    with (
        read_only_folder(
            tmp_path / "ro", lambda where: shutil.copy(db, where / "old.sqlite3")
        ) as where,
        open_store(f"sqlite:///{where}/old.sqlite3") as store,
    ):
        if name == "1":
            with pytest.raises(StoreFault, match="make it writable once"):
                store.parts()
        else:
            listed = [e for p in store.parts() for e in store.entries(p.number)]
            assert [e.path for e in listed] == [row[0] for row in rows]
            assert {e.title for e in listed} == {None}
            assert store.count("/p/<n>") == len(rows)
            assert store.counts() == {}  # type: ignore[attr-defined]
            assert store.decisions("/p/1") == []  # type: ignore[attr-defined]
            assert isinstance(store, News) and store.news(0) == []
            assert list(store.visits()) == []  # type: ignore[attr-defined]
    caplog.set_level(logging.INFO, "sitemap_middleware")
    with open_store(f"sqlite:///{db}") as store:
        listed = [e for p in store.parts() for e in store.entries(p.number)]
        assert (
            [
                (e.path, int(e.lastmod.timestamp()), e.fingerprint, e.route)  # type: ignore[union-attr]
                for e in listed
            ]
            == [tuple(row[:4]) for row in rows]
        )
        joined = b"".join(b"".join(store.fragments(p.number)) for p in store.parts())
        if name == "1":
            urlset = parse(
                b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                + joined.replace(b"\0", b"http://x")
                + b"</urlset>"
            )
            found = [
                (
                    url.findtext("sm:loc", namespaces=NS),
                    url.findtext("sm:changefreq", namespaces=NS),
                    float(url.findtext("sm:priority", namespaces=NS) or "nan"),
                )
                for url in urlset.iterfind("sm:url", NS)
            ]
            assert found == [(f"http://x{r[0]}", r[4], r[5]) for r in rows]
        else:
            assert joined == b"".join(bytes(r[4]) for r in rows)  # type: ignore[arg-type]
        store.upsert([Entry("/after", T0, "f", title="After")])
        assert store.count() == LAYOUT_PAGES
        assert store.known(["/after", "/p/3"]) == {"/after"}
        now = int(time.time())
        store.publish([Article("/after", now, "After", "en", "N")], now)  # type: ignore[attr-defined]
        assert [a.path for a in store.news(now)] == ["/after"]  # type: ignore[attr-defined]
    upgraded = [r for r in caplog.records if "upgraded" in r.getMessage()]
    assert len(upgraded) == (1 if name == "1" else 0)
    with open_store(f"sqlite:///{db}") as store:  # again: nothing to upgrade
        assert store.count() == LAYOUT_PAGES
    assert len([r for r in caplog.records if "upgraded" in r.getMessage()]) == len(
        upgraded
    )
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


# The last commit before stores kept each part's section.
BEFORE_SECTIONS = "b514e333dacd39311c06dd047ad0de56743c0e9f"


@pytest.fixture(scope="module")
def before_sections(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package of the release before sections."""
    release = "the release before sections"
    return unpacked(BEFORE_SECTIONS, release, tmp_path_factory, "before_sections")


@pytest.mark.slow
def test_a_store_of_the_release_before_sections_upgrades_in_place(
    store_uri: str, before_sections: Path
) -> None:
    """Every part of a store written before sections is the default's, read
    byte for byte as it was; sections then open parts after its highest, a
    stored page moves to its section, and a worker of the release before
    still reads and writes the store."""
    before = json.loads(
        finished(run_previous(before_sections, store_uri, "write", "300"))
    )
    with open_store(store_uri) as store:
        assert read(store) == before
        assert {info.section for info in store.parts()} == {""}
        (last,) = [info.number for info in store.parts()]
        store.upsert(
            Entry(f"/posts/{n}", T0, f"p{n}", section="posts") for n in range(3)
        )
        assert store.upsert([replace(entry(0), section="posts")]) == 1
        laid = [(info.number, info.section, info.urls) for info in store.parts()]
        assert laid == [(last, "", 299), (last + 1, "posts", 4)]
        assert [e.path for e in store.entries(last + 1)][-1] == entry(0).path
    after = json.loads(
        finished(run_previous(before_sections, store_uri, "write", "10"))
    )
    paths = [path for path, *_ in after["entries"]]
    assert len(paths) == len(set(paths)) == 303
    assert {"/posts/0", "/posts/2", entry(0).path} <= set(paths)
    with open_store(store_uri) as store:
        assert [info.section for info in store.parts()] == ["", "posts"]
        assert store.count() == 303
