"""Stores written by the release before titles upgrade in place on first use: no
row lost, every fragment byte-identical, titles stored from the next write, the
removals log kept from the next removal; and a worker of that release keeps
writing (and reconnecting) while one of this release upgrades the store under it."""

from __future__ import annotations

import json
import os
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
from support.store_kinds import Fresh

from sitemap_middleware import Entry, Store, StoreError, open_store
from sitemap_middleware.model import UNDATED
from sitemap_middleware.stores.base import Removals

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


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's package, unpacked from the repository's history."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", PREVIOUS, "sitemap_middleware"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"the previous release is not in this checkout: {exc}")
    where = tmp_path_factory.mktemp("previous")
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    return where


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
        store.note([("/p/1", "recorded", T0)])  # type: ignore[attr-defined]
    with open_store(store_uri) as store:  # opened again: nothing to upgrade
        assert read(store) == before
        assert store.decisions("/p/1") == [("recorded", T0)]  # type: ignore[attr-defined]
        # The removals log: made on open, written by the next removal.
        assert isinstance(store, Removals)
        assert store.removed_since(0).paths == ()
        assert store.remove(["/p/1", "/missing"]) == 1
        assert store.removed_since(0).paths == ("/p/1",)


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
