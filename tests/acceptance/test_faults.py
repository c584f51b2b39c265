"""Store faults on real servers: Redis killed, restarted empty and
SIGSTOPped (each test on a redis-server of its own), PostgreSQL unreachable or its
backend terminated mid-batch, a SIGKILLed process writing to SQLite, and the
SQLite file under gunicorn deleted, damaged or on a read-only file system."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from support.helpers import HTTPClient, Reply, free_port, sitemap_urls, stop_server
from support.services import require_postgres
from werkzeug.test import Client

from sitemap_middleware import SitemapMiddleware, StoreError, open_store
from sitemap_middleware.recording import writer as recorder_module
from sitemap_middleware.stores import Entry, Store

pytestmark = pytest.mark.slow

BASE_URL = "http://localhost"
LOGGER = "sitemap_middleware"
# The store's socket timeout in the Redis tests (T): no request may wait on it.
TIMEOUT = 0.5


def page_body(path: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>{path}</title></head>"
        f"<body><h1>{path}</h1></body></html>"
    ).encode()


def page_app(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> list[bytes]:
    """Every path is a public HTML page naming itself, but /robots.txt is left
    to the middleware."""
    path = environ["PATH_INFO"]
    if path == "/robots.txt":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no robots here"]
    body = page_body(path)
    start_response(
        "200 OK",
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
        ],
    )
    return [body]


class WSGIClient:
    """Direct WSGI calls into a wrapped app, each read in full and closed (the
    close is what hands a page to the recorder), timed."""

    def __init__(self, middleware: SitemapMiddleware) -> None:
        self._client = Client(middleware, use_cookies=False)

    def get(self, path: str) -> Reply:
        response = self._client.get(path)
        body = response.get_data()
        response.close()
        return Reply(response.status_code, response.headers, body)

    def timed(self, path: str) -> tuple[Reply, float]:
        start = time.perf_counter()
        reply = self.get(path)
        return reply, time.perf_counter() - start


def get_pages(client: WSGIClient, paths: Iterable[str]) -> list[float]:
    """Request each page; every answer is the app's own 200. The latencies."""
    latencies = []
    for path in paths:
        reply, seconds = client.timed(path)
        assert (reply.status, reply.body) == (200, page_body(path)), path
        latencies.append(seconds)
    return latencies


def written_before(
    middleware: SitemapMiddleware, client: WSGIClient, n: int
) -> list[str]:
    """``n`` pages requested and written while the store is up: their paths."""
    before = [f"/before/{i}" for i in range(n)]
    get_pages(client, before)
    assert middleware.flush(5.0)
    return before


def served_paths(client: WSGIClient) -> list[str]:
    """The paths the sitemap lists over HTTP, each document XSD-validated."""
    return [url.removeprefix(BASE_URL) for url in sitemap_urls(client)]


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll until ``condition()``; the seconds it took."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - start


def store_count(store: Store) -> int:
    """``store.count()``, or -1 while the store is down."""
    try:
        return store.count()
    except StoreError:
        return -1


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER and r.levelno == level
    ]


@pytest.fixture
def fast_breaker(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that flushes every 50 ms and probes a failing store every
    0.1-0.2 s, so that outages and recoveries fit in a test's seconds."""
    monkeypatch.setattr(recorder_module, "FLUSH_INTERVAL", 0.05)
    monkeypatch.setattr(recorder_module, "MIN_BACKOFF", 0.1)
    monkeypatch.setattr(recorder_module, "MAX_BACKOFF", 0.2)


# -- a private Redis ------------------------------------------------------------


class RedisServer:
    """A ``redis-server`` of the test's own on a free port, without persistence:
    a restart starts empty."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            problem = "no redis-server binary on PATH"
            if os.environ.get("SITEMAP_REQUIRE_SERVICES") == "1":
                pytest.fail(f"{problem}; SITEMAP_REQUIRE_SERVICES=1 requires it")
            pytest.skip(problem)
        self.binary, self.workdir = binary, workdir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with (self.workdir / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    *("--port", str(self.port), "--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no", "--dir", str(self.workdir)),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        import redis

        def answers() -> bool:
            assert self.process is not None and self.process.poll() is None, (
                self.workdir / "redis.log"
            ).read_text()
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as client:
                    return bool(client.ping())
            except redis.RedisError:
                return False

        wait_for(answers, 10, "redis-server start")

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # SIGKILL, even when stopped
            self.process.wait(10)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


def redis_middleware(server: RedisServer) -> SitemapMiddleware:
    options = {"timeout": TIMEOUT, "connect_timeout": TIMEOUT}
    uri = f"{server.url}?{urlencode(options)}"
    return SitemapMiddleware(page_app, {"base_url": BASE_URL, "store": uri})


def test_redis_killed_mid_load_and_restarted(
    redis_server: RedisServer,
    fast_breaker: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SIGKILL Redis between pages, keep serving, restart it on the same port.

    Every app response stays the app's 200. The writes of the outage stay
    pending (counted as errors, not dropped) and land once Redis is back,
    without a flush() call: nothing sent since the kill is lost or counted
    twice (sent == stored + dropped). The outage logs one warning, the
    recovery one info line. Redis has no persistence here, so the pages
    stored before the kill die with it; they are checked before the kill.
    """
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    middleware = redis_middleware(redis_server)
    client = WSGIClient(middleware)
    try:
        before = written_before(middleware, client, 50)
        assert sorted(served_paths(client)) == sorted(before)

        redis_server.kill()
        during = [f"/during/{i}" for i in range(100)]
        latencies = get_pages(client, during)
        wait_for(
            lambda: middleware.stats()["errors"].get("store", 0) >= 1,
            5,
            "the writer meets the dead store",
        )
        assert not middleware.flush(2.0)  # still pending: Redis is down
        stats = middleware.stats()
        assert stats["pending"] == len(during)
        assert stats["dropped"] == {}

        redis_server.start()  # same port, empty
        restarted = time.monotonic()
        after = [f"/after/{i}" for i in range(50)]
        latencies += get_pages(client, after)
        sent = during + after
        # The writer closes the breaker by itself, at its next probe: no
        # flush() needed.
        wait_for(
            lambda: store_count(middleware.store) == len(sent),
            5,
            "recording resumes after the restart",
        )
        resumed = time.monotonic() - restarted
        assert resumed < 2 * recorder_module.MAX_BACKOFF + 0.5
        assert middleware.flush(5.0)
        stats = middleware.stats()
        dropped = sum(stats["dropped"].values())
        stored = served_paths(client)
        assert len(stored) == len(set(stored)) == middleware.store.count()
        assert set(stored) <= set(sent)
        assert len(sent) == len(stored) + dropped
        assert dropped == 0  # at this volume nothing needs dropping
        assert stats["pending"] == 0 and stats["queued"] == 0
        assert stats["recorded"] == len(before) + len(sent)
        assert stats["errors"]["store"] >= 1
    finally:
        middleware.close()

    warnings = messages(caplog, logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("recording paused: store unavailable (")
    assert len(messages(caplog, logging.INFO)) == 1
    assert messages(caplog, logging.INFO)[0].startswith("recording resumed")
    assert messages(caplog, logging.ERROR) == []
    print(
        f"redis killed: max request {max(latencies) * 1000:.1f} ms over "
        f"{len(latencies)} requests; recording resumed {resumed:.2f} s after restart"
    )


def test_redis_stopped_never_delays_requests(
    redis_server: RedisServer,
    fast_breaker: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SIGSTOP Redis: the kernel still accepts connections, nothing answers.

    Page requests never wait on the store (each well under T/2 while the
    writer sits in T-long timeouts); the sitemap answers within about T with
    its last good bytes or 503 + Retry-After, never hangs; robots.txt is 200.
    After SIGCONT the pending pages land, once each (a batch whose reply timed
    out may have been applied by Redis and is written again: idempotent).
    """
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    middleware = redis_middleware(redis_server)
    client = WSGIClient(middleware)
    try:
        before = written_before(middleware, client, 20)
        good = {
            path: client.get(path) for path in ("/sitemap.xml", "/sitemap-1.xml.gz")
        }
        assert all(reply.status == 200 for reply in good.values())

        redis_server.signal(signal.SIGSTOP)
        stopped = [f"/stopped/{i}" for i in range(200)]
        latencies = []
        for path in stopped:  # spread over about 3 T: the writer times out
            latencies += get_pages(client, [path])
            time.sleep(0.007)
        wait_for(
            lambda: middleware.stats()["errors"].get("store", 0) >= 1,
            5 * TIMEOUT,
            "the writer times out",
        )
        assert max(latencies) < TIMEOUT / 2, max(latencies)

        serving = {}
        for path, last in good.items():
            reply, seconds = client.timed(path)
            serving[path] = seconds
            assert seconds < TIMEOUT + 0.5, (path, seconds)
            if reply.status == 200:
                assert reply.body == last.body  # the last good bytes
            else:
                assert reply.status == 503 and reply.headers["retry-after"]
        robots, seconds = client.timed("/robots.txt")
        assert robots.status == 200 and b"Sitemap: " in robots.body
        serving["/robots.txt"] = seconds

        redis_server.signal(signal.SIGCONT)
        sent = before + stopped
        resumed = wait_for(
            lambda: store_count(middleware.store) == len(sent),
            5,
            "recording resumes after SIGCONT",
        )
        assert middleware.flush(5.0)
        stored = served_paths(client)
        assert len(stored) == len(set(stored)) == middleware.store.count()
        assert sorted(stored) == sorted(sent)
        stats = middleware.stats()
        assert stats["dropped"] == {} and stats["pending"] == 0
    finally:
        middleware.close()

    warnings = messages(caplog, logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("recording paused: store unavailable (")
    assert [m for m in messages(caplog, logging.INFO) if "resumed" in m]
    latencies.sort()
    print(
        f"redis stopped: request p50 {latencies[len(latencies) // 2] * 1000:.2f} ms,"
        f" max {latencies[-1] * 1000:.2f} ms over {len(latencies)} requests; "
        + ", ".join(f"{p} {s:.3f} s" for p, s in serving.items())
        + f"; resumed {resumed:.2f} s after SIGCONT"
    )


def test_every_documents_fallback_keeps_its_live_headers(
    redis_server: RedisServer,
) -> None:
    """Redis killed: each document answers its last good bytes with the live
    answer's media type and robots header (the site map page, a page for
    search engines too, never gains a noindex), marked not to be cached."""
    options = {"html_sitemap": "/site-map", "text_sitemap": True}
    uri = f"{redis_server.url}?timeout={TIMEOUT}&connect_timeout={TIMEOUT}"
    middleware = SitemapMiddleware(
        page_app, {"base_url": BASE_URL, "store": uri, **options}
    )
    client = WSGIClient(middleware)
    try:
        get_pages(client, ["/a", "/b"])
        assert middleware.flush(5.0)
        paths = ("/sitemap.xml", "/sitemap-1.xml.gz", "/sitemap-1.txt", "/site-map")
        live = {path: client.get(path) for path in paths}
        assert all(reply.status == 200 for reply in live.values())
        redis_server.kill()
        for path, reply in live.items():
            fallback = client.get(path)
            assert (fallback.status, fallback.body) == (200, reply.body), path
            for name in ("content-type", "x-robots-tag"):
                assert fallback.headers.get(name) == reply.headers.get(name), path
            assert fallback.headers["cache-control"] == "no-cache"
    finally:
        middleware.close()


def test_redis_data_loss_never_serves_a_stale_sitemap(
    redis_server: RedisServer,
) -> None:
    """Redis restarted empty, twice: each time the sitemap lists what the store
    holds now. A page version seen before the loss must not come back with other
    content, or the cached bytes (and the ETag clients revalidate) of the old
    data are served as current."""
    middleware = redis_middleware(redis_server)
    client = WSGIClient(middleware)
    try:
        etags = []
        for name in ("first", "second", "third"):
            get_pages(client, [f"/{name}"])
            assert middleware.flush(5.0)
            etags.append(client.get("/sitemap.xml").headers["etag"])
            assert served_paths(client) == [f"/{name}"]
            redis_server.kill()
            redis_server.start()
        assert len(set(etags)) == len(etags)
    finally:
        middleware.close()


def test_redis_data_loss_brings_unchanged_pages_back(
    redis_server: RedisServer,
) -> None:
    """Redis restarted empty while this process remembers its pages as fresh
    for another five minutes (recheck_interval=300): the writer sees the
    store's new epoch and forgets them, so that their next requests record
    them again within seconds, not after the interval."""
    options = {"timeout": TIMEOUT, "connect_timeout": TIMEOUT}
    config = {
        "base_url": BASE_URL,
        "store": f"{redis_server.url}?{urlencode(options)}",
        "recheck_interval": 300,
    }
    middleware = SitemapMiddleware(page_app, config)
    client = WSGIClient(middleware)
    pages = [f"/kept/{i}" for i in range(20)]
    try:
        get_pages(client, pages)
        assert middleware.flush(5.0)
        assert sorted(served_paths(client)) == sorted(pages)
        get_pages(client, pages)  # fresh: passed through, nothing written
        assert middleware.stats()["seen"]["fresh"] == len(pages)
        redis_server.kill()
        redis_server.start()  # same port, empty

        def back() -> bool:
            get_pages(client, pages)
            middleware.flush(5.0)
            return store_count(middleware.store) == len(pages)

        took = wait_for(back, 5, "the pages come back after the data loss")
        assert sorted(served_paths(client)) == sorted(pages)
    finally:
        middleware.close()
    print(f"redis data loss: unchanged pages listed again after {took:.2f} s")


# -- PostgreSQL -------------------------------------------------------------------


def test_postgres_unreachable_at_start_warns_once(
    fast_breaker: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A DSN whose port nobody listens on: the app boots and serves every page;
    the recorder warns exactly once however many requests and probes follow
    (the rest is DEBUG), and keeps counting what waits for the store."""
    pytest.importorskip("psycopg")
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    # The port is closed, so libpq is refused at once whatever its timeout;
    # connect_timeout=0 (no limit) only shortens the store's wait for its pool
    # (connect_timeout + 1 s), which every probe of a down server pays in full.
    uri = (
        f"postgresql://postgres@127.0.0.1:{free_port()}/test"
        f"?connect_timeout=0&table_prefix=test_{secrets.token_hex(6)}_"
    )
    middleware = SitemapMiddleware(page_app, {"base_url": BASE_URL, "store": uri})
    client = WSGIClient(middleware)
    try:
        sent = [f"/page/{i}" for i in range(300)]
        get_pages(client, sent[:150])
        wait_for(
            lambda: middleware.stats()["errors"].get("store", 0) >= 2,
            10,
            "two failed probes",
        )
        get_pages(client, sent[150:])

        def waiting() -> int:
            stats = middleware.stats()
            return int(stats["pending"]) + int(stats["queued"])

        # Every page waits for the store, none is lost (a batch being digested
        # is briefly in neither count).
        wait_for(lambda: waiting() == len(sent), 5, "all pages kept")
        stats = middleware.stats()
        assert stats["recorded"] == 0
        assert stats["dropped"] == {}
        failures = stats["errors"]["store"]
    finally:
        middleware.close()

    warnings = messages(caplog, logging.WARNING)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("recording paused: store unavailable (")
    assert messages(caplog, logging.ERROR) == []
    assert len(messages(caplog, logging.DEBUG)) >= failures - 1 >= 1


@pytest.mark.services
def test_postgres_backend_terminated_mid_batch(tmp_path: Path) -> None:
    """pg_terminate_backend on the connection writing a 50,000-entry batch, once
    it is writing the rows: the upsert raises and its transaction leaves nothing;
    the same batch retried lands whole, each path once, and a third try changes
    nothing."""
    url = require_postgres()
    import psycopg

    prefix = f"test_{secrets.token_hex(6)}_"
    application = f"sitemap-faults-{secrets.token_hex(4)}"
    uri = (
        f"{url}?{urlencode({'table_prefix': prefix, 'application_name': application})}"
    )
    store = open_store(uri)
    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    batch = [Entry(f"/p/{i}", when, f"f{i}") for i in range(50_000)]
    try:
        assert store.count() == 0  # the tables exist, the pool is warm
        outcome: dict[str, Any] = {}

        def write() -> None:
            try:
                outcome["rows"] = store.upsert(batch)
            except Exception as exc:
                outcome["error"] = exc

        writer = threading.Thread(target=write)
        with psycopg.connect(url, autocommit=True) as killer:
            writer.start()
            terminated: list[tuple[str, str]] = []
            # A row-exclusive lock on the url table: the batch's rows are being
            # (or have been) written, in a transaction not yet committed.
            while writer.is_alive() and not terminated:
                terminated = [
                    (state, query)
                    for killed, state, query in killer.execute(
                        "SELECT pg_terminate_backend(a.pid), a.state, left(a.query, 30)"
                        " FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid"
                        " WHERE a.datname = current_database()"
                        " AND a.pid <> pg_backend_pid() AND a.application_name = %s"
                        " AND l.relation = to_regclass(%s)"
                        " AND l.mode = 'RowExclusiveLock'",
                        (application, f"{prefix}url"),
                    )
                    if killed
                ]
            writer.join(30)
        assert terminated, f"the batch finished before it could be cut: {outcome}"
        print(f"terminated mid-batch: {terminated}")
        assert isinstance(outcome.get("error"), StoreError), outcome
        assert store.count() == 0  # rolled back whole

        assert store.upsert(batch) == len(batch)
        assert store.count() == len(batch)
        pages = store.parts()
        assert sum(page.urls for page in pages) == len(batch)
        store.upsert(batch)  # idempotent: nothing new
        assert store.count() == len(batch)
        served = WSGIClient(
            SitemapMiddleware(page_app, {"base_url": BASE_URL, "store": store})
        )
        paths = served_paths(served)
        assert len(paths) == len(set(paths)) == len(batch)
        assert set(paths) == {entry.path for entry in batch}
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                f"DROP TABLE IF EXISTS {prefix}url, {prefix}page, {prefix}meta,"
                f" {prefix}count, {prefix}setting"
            )


# -- a hard kill --------------------------------------------------------------------

_KILLED = textwrap.dedent(
    """
    import sys, time
    from werkzeug.test import Client
    from sitemap_middleware import SitemapMiddleware

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [("<p>%s</p>" % environ["PATH_INFO"]).encode()]

    db, flushed, late = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # No rate limit: this process learns 3,000 new pages in about a second.
    config = {"base_url": "http://localhost", "store": "sqlite:///" + db,
              "new_urls_per_minute": None}
    wrapped = SitemapMiddleware(app, config)
    client = Client(wrapped)

    def get(path):
        response = client.get(path)
        response.get_data()
        response.close()

    for i in range(flushed):
        get("/flushed/%d" % i)
    assert wrapped.flush(30)
    print("flushed", flush=True)
    for i in range(late):
        get("/late/%d" % i)
    print("sent", flush=True)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("pause", [0.0, 0.03, 0.1])
def test_sigkill_loses_at_most_the_unflushed_batch(
    tmp_path: Path, pause: float
) -> None:
    """SIGKILL a process right after it sent M pages past its last flush (M
    above the writer's batch size, so the writer may be mid-transaction): the
    SQLite file opens and passes integrity_check, its page summaries agree with
    its rows, the N flushed pages are all there and only late pages are missing."""
    flushed, late = 500, 2 * recorder_module.BATCH + 500
    db = tmp_path / "s.sqlite3"
    process = subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(db), str(flushed), str(late)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "flushed\n"
        assert process.stdout.readline() == "sent\n"
        time.sleep(pause)
    finally:
        process.kill()
        _, errors = process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL, errors

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    store = open_store(f"sqlite:///{db}")
    middleware = SitemapMiddleware(page_app, {"base_url": BASE_URL, "store": store})
    try:
        paths = served_paths(WSGIClient(middleware))
        assert len(paths) == len(set(paths)) == store.count()
        assert sum(page.urls for page in store.parts()) == len(paths)
        first = {f"/flushed/{i}" for i in range(flushed)}
        rest = {f"/late/{i}" for i in range(late)}
        assert first <= set(paths)
        assert set(paths) - first <= rest
        missing = len(rest - set(paths))
        assert missing <= late
        # Batches commit whole and in order: what is lost is the tail of the
        # late pages, never a hole.
        kept = sorted(int(p.rsplit("/", 1)[1]) for p in set(paths) - first)
        assert kept == list(range(late - missing))
    finally:
        middleware.close()
    print(f"sigkill after {pause} s: {missing} of {late} unflushed pages lost")


# -- the SQLite file under gunicorn -------------------------------------------------

SUPPORT = Path(__file__).resolve().parents[1] / "support"
ROOT = SUPPORT.parents[1]


class Gunicorn:
    """``fault_app`` under gunicorn with ``workers`` sync workers on a SQLite
    file; its log (stdout and stderr) in ``log``."""

    def __init__(self, tmp_path: Path, db: Path, workers: int) -> None:
        self.port = free_port()
        self.log = tmp_path / "gunicorn.log"
        self.db = db
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "gunicorn", "-w", str(workers)),
                    *("-b", f"127.0.0.1:{self.port}", "fault_app:app"),
                ],
                cwd=SUPPORT,
                env={
                    **os.environ,
                    "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT)]),
                    "FAULT_BASE_URL": f"http://127.0.0.1:{self.port}",
                    "FAULT_STORE": f"sqlite:///{db}",
                    "FAULT_DELAY": "0.02",
                },
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self.client = HTTPClient("127.0.0.1", self.port)
        deadline = time.monotonic() + 30
        while True:
            assert self.process.poll() is None, self.log.read_text()
            try:
                self.client.get("/robots.txt")
                return
            except OSError:
                assert time.monotonic() < deadline, self.log.read_text()
                time.sleep(0.1)

    def visit(self, paths: Iterable[str]) -> None:
        """GET each page, several at once (so that every worker answers some:
        each takes FAULT_DELAY); each the app's 200."""
        from concurrent.futures import ThreadPoolExecutor

        wanted = list(paths)
        with ThreadPoolExecutor(6) as pool:
            for path, reply in zip(
                wanted, pool.map(self.client.get, wanted), strict=True
            ):
                assert reply.status == 200, (path, reply)

    def stop(self) -> None:
        stop_server(self.process, 30)

    def lines(self, level: str, *words: str) -> dict[int, list[str]]:
        """The package's lines at ``level`` holding every one of ``words``,
        by worker pid."""
        found: dict[int, list[str]] = {}
        for line in self.log.read_text().splitlines():
            pid, _, rest = line.partition(" ")
            if (
                pid.isdigit()
                and rest.startswith(f"{level} ")
                and all(word in rest for word in words)
            ):
                found.setdefault(int(pid), []).append(rest)
        return found


def listed_in(db: Path) -> set[str]:
    """The paths the file at ``db`` holds now (read-only, never made)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.OperationalError:
        return set()
    try:
        return {path for (path,) in conn.execute("SELECT path FROM sitemap_url")}
    except sqlite3.Error:
        return set()
    finally:
        conn.close()


@pytest.mark.servers
def test_sqlite_file_deleted_under_gunicorn(tmp_path: Path) -> None:
    """Three gunicorn workers record 60 pages; the file is deleted with its
    -wal and -shm (a cleanup job). The pages are visited again: within seconds
    the file at the path holds every one of them again and the sitemap (each
    worker's) lists them from it, though each worker remembered them as
    fresh for another five minutes; each worker that had the file open said
    so in one WARNING naming it. The new file is sound."""
    db = tmp_path / "data" / "s.sqlite3"
    db.parent.mkdir()
    pages = [f"/p/{n}" for n in range(60)]
    server = Gunicorn(tmp_path, db, workers=3)
    try:
        server.visit(pages)
        wait_for(lambda: listed_in(db) == set(pages), 10, "the pages recorded")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)

        def back() -> bool:
            server.visit(pages)
            return listed_in(db) == set(pages)

        took = wait_for(back, 15, "the pages back in the file at the path")
        for _ in range(6):  # the workers answer in turn: each serves the new file
            served = {urlsplit(url).path for url in sitemap_urls(server.client)}
            assert served == set(pages)
    finally:
        server.stop()
    # Every worker recorded some of the pages, so had the file open: each
    # moved to the new one, and said so once.
    noticed = server.lines("WARNING", str(db), "while in use: opened again")
    assert len(noticed) == 3, server.log.read_text()
    assert all(len(lines) == 1 for lines in noticed.values()), noticed
    assert server.lines("ERROR") == {}, server.log.read_text()
    assert listed_in(db) == set(pages)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    print(
        f"sqlite file deleted: pages back in {took:.2f} s;"
        f" {len(noticed)} workers noticed"
    )


def _garbage(db: Path) -> None:
    db.write_bytes(b"this is no database, " * 200)


def _damaged(db: Path) -> None:
    with open_store(f"sqlite:///{db}?part_size=100") as store:
        store.upsert(
            Entry(f"/p/{n}", datetime(2024, 1, 1, tzinfo=timezone.utc), f"{n}" * 40)
            for n in range(2000)
        )
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with db.open("r+b") as file:
        file.seek(db.stat().st_size // 2)
        file.write(b"\xff" * 16384)


@pytest.mark.servers
@pytest.mark.parametrize(
    "damage", [_garbage, _damaged], ids=["not-a-database", "damaged"]
)
def test_sqlite_damaged_file_under_gunicorn(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    """A damaged file at start-up: each worker logs an ERROR naming it and
    what to do; every sitemap document answers 503 (never an index naming
    parts that fail); pages are the app's 200."""
    db = tmp_path / "s.sqlite3"
    damage(db)
    server = Gunicorn(tmp_path, db, workers=2)
    try:
        server.visit(["/a", "/b"])
        for _ in range(6):
            for path in ("/sitemap.xml", "/sitemap-1.xml.gz", "/sitemap-10.xml.gz"):
                reply = server.client.get(path)
                assert reply.status == 503, (path, reply.status)
                assert reply.headers["retry-after"]
    finally:
        server.stop()
    started = server.lines("ERROR", "at start-up", str(db), "restore it from a backup")
    assert started, server.log.read_text()
    assert all(len(lines) == 1 for lines in started.values())
    assert server.lines("WARNING", "retried") == {}


@pytest.mark.servers
def test_sqlite_read_only_store_under_gunicorn(tmp_path: Path) -> None:
    """A store on a read-only file system: two workers serve its sitemap (200,
    every entry); pages visited are answered, and each worker that tried to
    record says once that recording is off; nothing is written beside it."""
    from support.readonly import read_only_folder

    pages = [f"/kept/{n}" for n in range(30)]

    def fill(where: Path) -> None:
        with open_store(f"sqlite:///{where}/s.sqlite3") as store:
            when = datetime(2024, 1, 1, tzinfo=timezone.utc)
            store.upsert(Entry(path, when, "f") for path in pages)

    with read_only_folder(tmp_path / "ro", fill) as where:
        files = sorted(p.name for p in where.iterdir())
        db = where / "s.sqlite3"
        server = Gunicorn(tmp_path, db, workers=2)
        try:
            for _ in range(4):
                served = [urlsplit(url).path for url in sitemap_urls(server.client)]
                assert sorted(served) == sorted(pages)
            server.visit([f"/new/{n}" for n in range(20)])
            time.sleep(2.5)  # the writers meet the store
            server.visit([f"/new/{n}" for n in range(20, 40)])
            time.sleep(1.5)
        finally:
            server.stop()
        assert sorted(p.name for p in where.iterdir()) == files
    off = server.lines("WARNING", "recording off", str(db))
    assert off, server.log.read_text()
    assert all(len(lines) == 1 for lines in off.values()), off
    assert server.lines("ERROR") == {}, server.log.read_text()
