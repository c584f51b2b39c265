"""Many workers on one store: 4 gunicorn sync workers (Flask) and 4 uvicorn workers
(Starlette), each on SQLite, Redis and PostgreSQL in turn, under load from 4 client
processes; afterwards the store holds exactly the pages requested, once each, and
every hreflang cluster listed is reciprocal and complete (invariant 20)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from support.helpers import free_port, stop_server
from support.reciprocal import stored_links, unreciprocated
from support.services import require_postgres, require_redis

from sitemap_middleware import open_store

pytestmark = [pytest.mark.servers, pytest.mark.slow]

SUPPORT = Path(__file__).resolve().parents[1] / "support"
ROOT = SUPPORT.parents[1]
LOAD_APP = SUPPORT / "load_app.py"
PAGES = 1000
CLIENTS = 4
REQUESTS = 3000  # in total, over the CLIENTS processes

SERVERS = {
    "gunicorn": (
        "wsgi",
        ["-m", "gunicorn", "-w", "4", "-b", "127.0.0.1:{port}", "load_app:app"],
    ),
    "uvicorn": (
        "asgi",
        ["-m", "uvicorn", "--workers", "4", "--port", "{port}", "load_app:app"],
    ),
}


def _sqlite(tmp_path: Path) -> tuple[str, Callable[[], None]]:
    return f"sqlite:///{tmp_path}/s.sqlite3", lambda: None


def _redis(tmp_path: Path) -> tuple[str, Callable[[], None]]:
    url = require_redis()
    prefix = f"{{test-{secrets.token_hex(6)}}}:"

    def cleanup() -> None:
        import redis

        with redis.Redis.from_url(url) as client:
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)

    return f"{url}?{urlencode({'prefix': prefix})}", cleanup


def _postgres(tmp_path: Path) -> tuple[str, Callable[[], None]]:
    url = require_postgres()
    prefix = f"test_{secrets.token_hex(6)}_"

    def cleanup() -> None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                f"DROP TABLE IF EXISTS {prefix}url, {prefix}page, {prefix}meta,"
                f" {prefix}count, {prefix}setting, {prefix}section"
            )

    return f"{url}?{urlencode({'table_prefix': prefix})}", cleanup


STORES = {"sqlite": _sqlite, "redis": _redis, "postgres": _postgres}


@pytest.fixture(params=sorted(STORES))
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    uri, cleanup = STORES[request.param](tmp_path)
    yield uri
    cleanup()


def _wait_until_up(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the server did not start:\n{log.read_text()}")


@contextmanager
def _serving(server: str, store_uri: str, tmp_path: Path) -> Iterator[int]:
    """Run load_app under ``server`` with 4 workers on ``store_uri``; yield its
    port; then SIGTERM it, whose orderly shutdown flushes what the workers
    queued (atexit under gunicorn, lifespan under uvicorn)."""
    stack, argv = SERVERS[server]
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, *(a.format(port=port) for a in argv)],
            cwd=SUPPORT,
            env={
                **os.environ,
                # The tests' apps, and this checkout's package before any other.
                "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT)]),
                "LOAD_STACK": stack,
                "LOAD_BASE_URL": f"http://127.0.0.1:{port}",
                "LOAD_STORE": store_uri,
            },
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_up(port, process, log)
        yield port
    finally:
        stop_server(process, 30)
    assert process.returncode in (0, -signal.SIGTERM), log.read_text()


def _clients(*argvs: list[object]) -> list[Any]:
    """Run a load client of load_app.py per ``argv``, all at once, to completion;
    what each printed."""
    clients = [
        subprocess.Popen(
            [sys.executable, str(LOAD_APP), *map(str, argv)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for argv in argvs
    ]
    printed = []
    for process in clients:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        printed.append(json.loads(out))
    return printed


def _load(port: int) -> Counter[int]:
    """Run the CLIENTS load processes to completion; their statuses summed."""
    share = REQUESTS // CLIENTS
    statuses: Counter[int] = Counter()
    for counted in _clients(
        *(["pages", port, i, CLIENTS, share, i] for i in range(CLIENTS))
    ):
        statuses.update({int(k): v for k, v in counted.items()})
    return statuses


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_workers_record_every_page_once(
    server: str, store_uri: str, tmp_path: Path
) -> None:
    """4 workers, 4 clients, 3,000 requests over the 1,000 pages ``/page/0`` ..
    ``/page/999`` (each at least once); SIGTERM, whose orderly shutdown flushes
    what the workers queued (atexit under gunicorn, lifespan under uvicorn).

    Every response is a 200 with the page's body, and the store then holds each
    of the 1,000 paths exactly once. The workers' drop counters die with them,
    so "nothing lost" is checked by the store itself: at this volume no drop is
    expected, and any lost record shows as a missing path.
    """
    with _serving(server, store_uri, tmp_path) as port:
        statuses = _load(port)
    assert statuses == {200: REQUESTS}, statuses

    log = tmp_path / "server.log"
    store = open_store(store_uri)
    try:
        paths = [e.path for p in store.parts() for e in store.entries(p.number)]
        assert len(paths) == len(set(paths)), "duplicate paths"
        assert sorted(paths) == sorted(f"/page/{n}" for n in range(PAGES)), (
            log.read_text()
        )
        assert store.count() == PAGES
        assert sum(p.urls for p in store.parts()) == PAGES
    finally:
        store.close()


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_workers_publish_reciprocal_clusters(
    server: str, store_uri: str, tmp_path: Path
) -> None:
    """20 clusters of 3 languages, each page declaring its cluster, browsed in
    random order by 4 clients, so that the members of a cluster reach
    different workers. After shutdown every xhtml:link set served is
    reciprocal (each member lists the same set, itself included), and every
    cluster whose members were all served is listed in full."""
    from support.load_app import CLUSTERS, LANGUAGES, PATHS

    with _serving(server, store_uri, tmp_path) as port:
        browsed = _clients(*(["clusters", port, seed, 60] for seed in range(CLIENTS)))
    served: set[str] = set().union(*browsed)
    base = f"http://127.0.0.1:{port}"
    store = open_store(store_uri)
    try:
        listed = stored_links(store, base)
    finally:
        store.close()
    assert {loc.removeprefix(base) for loc in listed} == served
    assert unreciprocated(listed) == []
    complete = 0
    for k in range(CLUSTERS):
        members = [f"/{lang}/{k}" for lang in LANGUAGES]
        if set(members) <= served:
            full = frozenset((lang, f"{base}/{lang}/{k}") for lang in LANGUAGES)
            assert all(listed[base + path] == full for path in members), k
            complete += 1
    assert complete >= CLUSTERS // 2, (complete, len(served), len(PATHS))
    print(f"{server}: {len(served)} of {len(PATHS)} pages, {complete} clusters whole")
