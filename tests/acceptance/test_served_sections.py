"""Sections under real servers: gunicorn with 2 workers on SQLite, Redis and
PostgreSQL lays the pages out a section a part; restarted with other
``sections``, it lays the store out again, moving only the pages whose section
changed, and serves documents that validate against the schemas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.helpers import free_port, gunzip_once, locs, stop_server, validate
from support.load_app import get
from support.sections_app import OTHERS, PATHS, POSTS, TAGS, body
from support.store_kinds import Fresh

from sitemap_middleware import open_store
from sitemap_middleware.stores.contract import Snapshot

pytestmark = [pytest.mark.servers, pytest.mark.slow]

SUPPORT = Path(__file__).resolve().parents[1] / "support"
ROOT = SUPPORT.parents[1]
FIRST = {"posts": ["/blog/<slug>"], "tags": ["/tags/*"]}
# Tags go back to the default section; /about and /terms form their own.
SECOND = {"posts": ["/blog/<slug>"], "legal": ["/about", "/terms"]}


@pytest.fixture(params=["postgres", "redis", "sqlite"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path, fresh: Fresh) -> str:
    # Parts of 4 URLs: every section spans parts.
    return fresh.uri(request.param, tmp_path, part_size=4)


@contextmanager
def serving(store_uri: str, sections: object, tmp_path: Path) -> Iterator[int]:
    """gunicorn, 2 sync workers, on ``store_uri`` with ``sections``; SIGTERM
    after (an orderly shutdown flushes what the workers queued)."""
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                *("-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}"),
                "sections_app:app",
            ],
            cwd=SUPPORT,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT)]),
                "SECTIONS_BASE_URL": f"http://127.0.0.1:{port}",
                "SECTIONS_STORE": store_uri,
                "SECTIONS": json.dumps(sections),
            },
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            try:
                get(port, "/robots.txt")
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        yield port
    finally:
        stop_server(process, 30)
    assert process.returncode in (0, -signal.SIGTERM), log.read_text()


def visit(port: int, paths: list[str]) -> None:
    """Each path, a new connection each (so both workers serve some)."""
    for path in paths:
        assert get(port, path) == (200, body(path))


def served(port: int) -> dict[int, list[str]]:
    """Part number -> the paths it lists, as served, every document valid."""
    status, index = get(port, "/sitemap.xml")
    assert status == 200
    parts: dict[int, list[str]] = {}
    for loc in locs(validate(index)):
        path = urlsplit(loc).path
        status, data = get(port, path)
        assert status == 200
        number = int(path.removeprefix("/sitemap-").removesuffix(".xml.gz"))
        parts[number] = [urlsplit(u).path for u in locs(validate(gunzip_once(data)))]
    assert list(parts) == sorted(parts)  # the index in number order
    return parts


def layout(store_uri: str) -> dict[int, tuple[str, list[str], str]]:
    """Part number -> section, paths and version, as the store keeps them at
    one moment, while the servers' writers may be moving pages: read in a
    snapshot where the store has one, else read again until no part's
    version moved meanwhile (as export does)."""
    with open_store(store_uri) as store:
        while True:
            held = isinstance(store, Snapshot)
            with store.snapshot() if held else nullcontext():
                parts = store.parts()
                laid = {
                    info.number: (
                        info.section,
                        [e.path for e in store.entries(info.number)],
                        info.version,
                    )
                    for info in parts
                }
                if held or store.parts() == parts:
                    return laid


def by_section(laid: dict[int, tuple[str, list[str], str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for section, paths, _ in laid.values():
        assert 1 <= len(paths) <= 4
        assert not found.get(section, set()) & set(paths)
        found.setdefault(section, set()).update(paths)
    return found


def test_sections_laid_out_then_laid_out_again_after_a_config_change(
    store_uri: str, tmp_path: Path
) -> None:
    # Interleaved: posts, tags and other pages arrive mixed, at both workers.
    mixed = [
        p for group in zip(POSTS, TAGS + OTHERS + OTHERS, strict=False) for p in group
    ]
    mixed += [p for p in PATHS if p not in mixed]
    with serving(store_uri, FIRST, tmp_path) as port:
        visit(port, mixed)
    first = layout(store_uri)
    assert by_section(first) == {
        "posts": set(POSTS),
        "tags": set(TAGS),
        "": set(OTHERS),
    }
    with serving(store_uri, FIRST, tmp_path) as port:
        assert served(port) == {n: paths for n, (_, paths, _) in first.items()}

    # Restarted with other sections: the first request starts a worker's
    # writer, which walks the store and moves what changed section.
    with serving(store_uri, SECOND, tmp_path) as port:
        visit(port, ["/", "/blog/post-0"])
        deadline = time.monotonic() + 30
        while by_section(layout(store_uri)) != {
            "posts": set(POSTS),
            "": set(TAGS) | {"/"},
            "legal": {"/about", "/terms"},
        }:
            assert time.monotonic() < deadline, layout(store_uri)
            time.sleep(0.2)
        second = layout(store_uri)
        assert served(port) == {n: paths for n, (_, paths, _) in second.items()}
    # The posts' parts neither lost nor gained a page: the same versions.
    posts = {n: part for n, part in first.items() if part[0] == "posts"}
    assert {n: part for n, part in second.items() if part[0] == "posts"} == posts
    # No part of the tags section is left: each emptied as its pages moved.
    assert not [n for n, part in second.items() if part[0] == "tags"]
    # Visited again under the new sections, nothing moves.
    with serving(store_uri, SECOND, tmp_path) as port:
        visit(port, PATHS)
    assert {n: p[:2] for n, p in layout(store_uri).items()} == {
        n: p[:2] for n, p in second.items()
    }
