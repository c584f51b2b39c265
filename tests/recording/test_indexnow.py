"""IndexNow: the key file on both stacks, and the pusher against a real local
endpoint (an ``http.server`` on a free port) that records what it receives and
answers what the test asks. What every store keeps of the pending pushes is
tests/stores/contract/test_pushes.py.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.helpers import serve_in_thread
from support.sites import BASE, Site, make_routed_site, make_site
from support.store_kinds import Fresh

from sitemap_middleware import ConfigError, open_store
from sitemap_middleware.config import INDEXNOW_ENDPOINT, Config, IndexNowOptions
from sitemap_middleware.recording.indexnow import LEASE, MAX_URLS, Pusher
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.wsgi import SitemapMiddleware

KEY = "a1b2c3d4-e5f6"
ORIGIN = "http://localhost"


class Endpoint:
    """A local IndexNow endpoint: every request it got, and the answers to give
    (status, Retry-After or None), one a request, then 200."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.answers: list[tuple[int, str | None]] = []
        self.always: tuple[int, str | None] | None = None
        """The answer to give once ``answers`` is spent (``None``: 200)."""
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(size))
                with endpoint.lock:
                    endpoint.received.append(
                        {
                            "path": self.path,
                            "type": self.headers["Content-Type"],
                            "body": body,
                        }
                    )
                    status, retry_after = (
                        endpoint.answers.pop(0)
                        if endpoint.answers
                        else endpoint.always or (200, None)
                    )
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/indexnow"
        serve_in_thread(self.server)

    def urls(self) -> list[str]:
        with self.lock:
            return [url for r in self.received for url in r["body"]["urlList"]]

    def wait(self, count: int, timeout: float = 15.0) -> list[str]:
        """The URLs received once ``count`` of them came (or the time ran out)."""
        deadline = time.monotonic() + timeout
        while len(self.urls()) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.urls()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.close()


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, str]]:
    """Every outgoing TCP connection urllib makes: (host, port, thread name)."""
    made: list[tuple[str, int, str]] = []
    connect = socket.create_connection

    def recording(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        made.append((address[0], address[1], threading.current_thread().name))
        return connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recording)
    return made


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def options(endpoint: Endpoint, **more: Any) -> IndexNowOptions:
    return IndexNowOptions(
        KEY, more.pop("url", endpoint.url), f"/{KEY}.txt", more.pop("interval", 60)
    )


# -- config ---------------------------------------------------------------------


def test_indexnow_is_off_by_default_and_takes_the_shared_endpoint() -> None:
    """No ``indexnow`` key: off. With a key only: the shared endpoint, the key
    file at ``/{key}.txt`` and pushes a minute apart."""
    assert Config.from_mapping({"base_url": ORIGIN}).indexnow is None
    config = Config.from_mapping({"base_url": ORIGIN, "indexnow": {"key": KEY}})
    assert config.indexnow == IndexNowOptions(
        KEY, INDEXNOW_ENDPOINT, f"/{KEY}.txt", 60.0
    )
    assert INDEXNOW_ENDPOINT == "https://api.indexnow.org/indexnow"


@pytest.mark.parametrize(
    ("indexnow", "message"),
    [
        ("abc", "'indexnow' must be a dict with 'key'"),
        ({}, "'indexnow.key' must be 8 to 128 characters"),
        ({"key": "short"}, "'indexnow.key' must be 8 to 128 characters"),
        ({"key": "a" * 129}, "'indexnow.key' must be 8 to 128 characters"),
        ({"key": "abcd_efgh"}, "'indexnow.key' must be 8 to 128 characters"),
        ({"key": KEY, "endpont": "x"}, "did you mean 'endpoint'"),
        ({"key": KEY, "endpoint": "ftp://x/indexnow"}, "must be an http(s) URL"),
        (
            {"key": KEY, "endpoint": "https://www.google.com/ping"},
            "the sitemap ping endpoints are retired",
        ),
        (
            {"key": KEY, "endpoint": "https://www.bing.com/ping"},
            "the sitemap ping endpoints are retired",
        ),
        ({"key": KEY, "key_location": "key.txt"}, "must be a path under the base"),
        ({"key": KEY, "key_location": "/a b.txt"}, "must be a path under the base"),
        ({"key": KEY, "key_location": "/robots.txt"}, "is a path the sitemap answers"),
        ({"key": KEY, "interval": -1}, "'indexnow.interval' must be a number"),
        ({"key": KEY, "interval": 0}, "must be at least 1 second"),
        ({"key": KEY, "interval": 0.2}, "must be at least 1 second"),
    ],
)
def test_a_bad_indexnow_config_is_refused_by_name(indexnow: Any, message: str) -> None:
    """Each bad part of the ``indexnow`` key is a ConfigError naming it and the
    form expected; the middleware is never built."""
    with pytest.raises(ConfigError) as caught:
        Config.from_mapping({"base_url": ORIGIN, "indexnow": indexnow})
    assert message in str(caught.value)


def test_the_key_file_may_not_take_the_site_map_s_path() -> None:
    """The key file and the site map for people at one path: refused."""
    with pytest.raises(ConfigError, match="is the 'html_sitemap' path"):
        Config.from_mapping(
            {
                "base_url": ORIGIN,
                "html_sitemap": "/keys.txt",
                "indexnow": {"key": KEY, "key_location": "/keys.txt"},
            }
        )


def test_the_key_file_and_the_site_map_are_both_served(
    make: Callable[..., Site],
) -> None:
    """With the site map for people on too, each answers at its own path."""
    site = make({"html_sitemap": "/site-map", "indexnow": {"key": KEY}})
    assert site.get(f"/{KEY}.txt").body == KEY.encode()
    page = site.get("/site-map")
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"


def test_bing_s_own_indexnow_endpoint_is_accepted() -> None:
    """Only the retired ping endpoints are refused on those hosts."""
    config = Config.from_mapping(
        {
            "base_url": ORIGIN,
            "indexnow": {"key": KEY, "endpoint": "https://www.bing.com/indexnow"},
        }
    )
    assert config.indexnow is not None


# -- the key file ---------------------------------------------------------------


def test_the_key_file_is_served_at_key_txt(make: Callable[..., Site]) -> None:
    """``/{key}.txt`` answers the key as its whole body, as plain text; HEAD
    the same headers and no body, other methods 405; the app is never called
    for it."""
    site = make({"indexnow": {"key": KEY}})
    reply = site.get(f"/{KEY}.txt")
    assert reply.status == 200
    assert reply.body == KEY.encode()
    assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert reply.headers["Content-Length"] == str(len(KEY))
    head = site.head(f"/{KEY}.txt")
    assert (head.status, head.body) == (200, b"")
    assert site.request("POST", f"/{KEY}.txt").status == 405
    assert site.recorded() == []


def test_the_key_file_is_served_at_its_configured_location(
    make: Callable[..., Site],
) -> None:
    """With ``key_location``, the key is there and not at ``/{key}.txt``."""
    site = make({"indexnow": {"key": KEY, "key_location": "/keys/indexnow.txt"}})
    assert site.get("/keys/indexnow.txt").body == KEY.encode()
    assert site.get(f"/{KEY}.txt").status == 404


def test_without_indexnow_no_key_file_is_served(make: Callable[..., Site]) -> None:
    """Off by default: the path is the app's (which has no such page)."""
    site = make()
    assert site.get(f"/{KEY}.txt").status == 404


# -- the pusher -------------------------------------------------------------------


def test_a_push_is_the_protocol_s_json_post(endpoint: Endpoint) -> None:
    """One POST of {host, key, keyLocation, urlList} as JSON, absolute URLs
    on the base URL; accepted, the URLs leave the pending set."""
    store = open_store("memory://")
    store.queue_pushes(["/a", "/b?page=2"])
    pusher = Pusher(options(endpoint), "https://www.example.com/shop", store)
    assert pusher.push() == 60
    (request,) = endpoint.received
    assert request["path"] == "/indexnow"
    assert request["type"] == "application/json; charset=utf-8"
    assert request["body"] == {
        "host": "www.example.com",
        "key": KEY,
        "keyLocation": f"https://www.example.com/shop/{KEY}.txt",
        "urlList": [
            "https://www.example.com/shop/a",
            "https://www.example.com/shop/b?page=2",
        ],
    }
    assert store.pending_pushes() == 0
    assert pusher.sent == 2


@pytest.mark.parametrize("status", [200, 202])
def test_200_and_202_are_success(endpoint: Endpoint, status: int) -> None:
    """202 (key validation pending) is accepted too."""
    store = open_store("memory://")
    store.queue_pushes(["/a"])
    endpoint.answers.append((status, None))
    Pusher(options(endpoint), ORIGIN, store).push()
    assert store.pending_pushes() == 0


def test_batches_hold_at_most_10000_urls(endpoint: Endpoint) -> None:
    """25,000 pending URLs go in three requests (10,000, 10,000, 5,000); a
    full batch is followed at once by the next."""
    store = open_store("memory://")
    store.queue_pushes([f"/p{i}" for i in range(25_000)])
    pusher = Pusher(options(endpoint), ORIGIN, store)
    assert [pusher.push(), pusher.push(), pusher.push()] == [0.0, 0.0, 60]
    sizes = [len(r["body"]["urlList"]) for r in endpoint.received]
    assert sizes == [MAX_URLS, MAX_URLS, 5_000]
    assert len(set(endpoint.urls())) == 25_000


@pytest.mark.parametrize(
    ("answer", "wait"),
    [
        ((429, "7"), 7.0),
        ((503, "120"), 120.0),
        ((500, None), 1.0),  # no Retry-After: the first backoff
        # Asking for less than the backoff never shortens it.
        ((429, "Wed, 21 Oct 2015 07:28:00 GMT"), 1.0),  # a date gone by
        ((503, "0"), 1.0),
    ],
)
def test_429_and_5xx_are_retried_after_retry_after(
    endpoint: Endpoint, answer: tuple[int, str | None], wait: float
) -> None:
    """The batch stays pending, claimed until the retry (Retry-After in
    seconds or as a date, else a backoff), then sent again, the same URLs."""
    store = open_store("memory://")
    store.queue_pushes(["/a", "/b"])
    clock = Clock()
    endpoint.answers.append(answer)
    pusher = Pusher(options(endpoint), ORIGIN, store, clock=clock)
    assert pusher.push() == pytest.approx(wait, abs=1.0)
    assert store.pending_pushes() == 2
    if wait >= 1:
        clock.now += wait - 0.5
        assert pusher.push() == 60  # nothing to claim yet
        assert len(endpoint.received) == 1
    clock.now += wait + 1
    pusher.push()
    first, second = (r["body"]["urlList"] for r in endpoint.received)
    assert first == second
    assert store.pending_pushes() == 0


@pytest.mark.parametrize("retry_after", ["\xb2", "\xb9\xb2", "-1", "1e9", "9" * 400])
def test_a_retry_after_of_any_shape_is_an_answer_not_a_bug(
    endpoint: Endpoint, retry_after: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A Retry-After the pusher cannot read (a superscript digit, which
    ``str.isdigit`` takes for one, a sign, an exponent) is no Retry-After: the
    batch is leased to the backoff's retry, nothing is logged as a bug."""
    store = open_store("memory://")
    store.queue_pushes(["/a"])
    clock = Clock()
    endpoint.answers.append((503, retry_after))
    pusher = Pusher(options(endpoint), ORIGIN, store, clock=clock)
    with caplog.at_level(logging.DEBUG, "sitemap_middleware"):
        wait = pusher.push()
    assert 1.0 <= wait <= 3600.0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    clock.now += wait + 1
    pusher.push()  # retried at the backoff, not when a lease ends
    assert store.pending_pushes() == 0


def test_the_backoff_doubles_without_retry_after(endpoint: Endpoint) -> None:
    """500, 500, 500: waits of 1, 2 and 4 seconds; one WARNING for the
    outage, one INFO when it ends."""
    store = open_store("memory://")
    store.queue_pushes(["/a"])
    clock = Clock()
    endpoint.answers.extend([(500, None)] * 3)
    pusher = Pusher(options(endpoint), ORIGIN, store, clock=clock)
    waits = []
    for _ in range(3):
        waits.append(pusher.push())
        clock.now += waits[-1]
    assert waits == [1.0, 2.0, 4.0]
    assert pusher.push() == 60
    assert store.pending_pushes() == 0


class CountingStore(MemoryStore):
    """A memory store that counts the claims made of it."""

    def __init__(self) -> None:
        super().__init__()
        self.claims = 0

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        self.claims += 1
        return super().claim_pushes(limit, now, until)


def _dead_url() -> str:
    """An endpoint URL nothing listens at."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}/indexnow"


# Each way an endpoint keeps failing: (status, Retry-After), or None for one
# that cannot be reached. Those that stop the pushes post once.
FAILURES = {
    "503 retry at once": (503, "0"),
    "429 retry at once": (429, "0"),
    "500": (500, None),
    "503 retry at a date gone by": (503, "Wed, 21 Oct 2015 07:28:00 GMT"),
    "503 unreadable Retry-After": (503, "soon"),
    "403": (403, None),
    "unreachable": None,
}


@pytest.mark.parametrize("failure", FAILURES)
def test_a_failing_endpoint_gets_a_handful_of_posts_a_minute(
    failure: str, endpoint: Endpoint
) -> None:
    """Whatever a failing endpoint answers, a minute (on the pusher's clock)
    brings at most 7 POSTs and as many store claims: retries 1, 2, 4, 8, 16
    and 32 seconds apart, never the loop an endpoint that says "retry at once"
    once caused (about 1,300 POSTs in 3.5 seconds)."""
    store = CountingStore()
    store.queue_pushes(["/a", "/b"])
    clock = Clock()
    answer = FAILURES[failure]
    url = endpoint.url if answer is not None else _dead_url()
    endpoint.always = answer
    pusher = Pusher(options(endpoint, url=url), ORIGIN, store, clock=clock)
    start = clock.now
    attempts = 0
    while clock.now - start < 60 and attempts < 1000:
        clock.now += min(pusher.push(), 3600)
        attempts += 1
    posts = len(endpoint.received) if answer is not None else store.claims
    assert posts <= 7
    assert store.claims <= 7
    assert store.pending_pushes() == 2  # nothing lost
    if answer is not None and answer[0] == 403:
        assert pusher.stopped and posts == 1


@pytest.mark.slow
def test_the_pusher_thread_keeps_its_distance_from_an_endpoint_that_always_fails(
    endpoint: Endpoint,
) -> None:
    """The same on the real clock, through the pusher's own thread: in 4.5
    seconds an endpoint answering 503 with ``Retry-After: 0`` gets the first
    push (one interval in) and its retries 1 and 2 seconds later: 3 POSTs,
    3 claims."""
    store = CountingStore()
    store.queue_pushes(["/a"])
    endpoint.always = (503, "0")
    pusher = Pusher(options(endpoint, interval=1.0), ORIGIN, store)
    pusher.start()
    try:
        time.sleep(4.5)
    finally:
        pusher.stop(2.0)
    assert 2 <= len(endpoint.received) <= 3
    assert store.claims <= 4
    assert store.pending_pushes() == 1


def test_an_unreachable_endpoint_loses_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Nothing listens at the endpoint: the URLs stay pending, one WARNING
    says so, and they go once it answers."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    store = open_store("memory://")
    store.queue_pushes(["/a"])
    clock = Clock()
    dead = IndexNowOptions(KEY, f"http://127.0.0.1:{port}/indexnow", f"/{KEY}.txt")
    pusher = Pusher(dead, ORIGIN, store, clock=clock)
    with caplog.at_level(logging.DEBUG, "sitemap_middleware"):
        for _ in range(3):
            clock.now += pusher.push()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "could not be reached" in warnings[0].getMessage()
    assert store.pending_pushes() == 1


@pytest.mark.parametrize(
    ("status", "meaning"),
    [
        (403, "the key is not valid: the key file at http://localhost/"),
        (422, "the URLs do not belong to localhost"),
        (400, "malformed"),
        (301, "a redirect"),
    ],
)
def test_403_and_422_stop_with_one_line_and_keep_the_urls(
    endpoint: Endpoint,
    caplog: pytest.LogCaptureFixture,
    connections: list[tuple[str, int, str]],
    status: int,
    meaning: str,
) -> None:
    """A bad key or foreign URLs: one ERROR line naming the answer and what it
    means; this pusher sends nothing more until restart; the URLs stay
    pending, free for another worker. A redirect is not followed."""
    store = open_store("memory://")
    store.queue_pushes(["/a", "/b"])
    endpoint.answers.append((status, None))
    pusher = Pusher(options(endpoint), ORIGIN, store)
    with caplog.at_level(logging.DEBUG, "sitemap_middleware"):
        pusher.push()
        store.queue_pushes(["/c"])
        pusher.push()
        pusher.push()
    assert pusher.stopped
    (line,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.levelno == logging.ERROR
    assert f"IndexNow stopped until restart: {endpoint.url} answered {status}" in (
        line.getMessage()
    )
    assert meaning in line.getMessage()
    assert len(endpoint.received) == 1
    assert len(connections) == 1
    assert store.pending_pushes() == 3
    assert len(store.claim_pushes(10, time.time(), time.time() + LEASE)) == 3


def test_a_store_outage_is_deferred_not_lost(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    """The store cannot be read: nothing is sent, one WARNING, a backoff;
    once it is back the URLs go."""
    from sitemap_middleware.stores.sqlite import SQLiteStore

    store = SQLiteStore(str(tmp_path / "s.sqlite3"))
    store.queue_pushes(["/a"])
    store.close()
    broken = SQLiteStore(str(tmp_path / "missing" / "s.sqlite3"))
    pusher = Pusher(options(endpoint), ORIGIN, broken)
    assert pusher.push() == 1.0
    assert endpoint.received == []
    pusher = Pusher(options(endpoint), ORIGIN, store)
    pusher.push()
    assert endpoint.urls() == [f"{ORIGIN}/a"]


# -- through the middleware ----------------------------------------------------------


def _config(endpoint: Endpoint, **more: Any) -> dict[str, Any]:
    interval = more.pop("interval", 1.0)
    indexnow = {"key": KEY, "endpoint": endpoint.url, "interval": interval}
    return {"indexnow": indexnow, **more}


def test_pages_recorded_are_pushed_from_a_thread_of_its_own(
    stack: str,
    endpoint: Endpoint,
    connections: list[tuple[str, int, str]],
) -> None:
    """Pages recorded on either stack are pushed; the only host contacted is
    the configured endpoint (never the retired ping endpoints), from the
    pusher's thread, never the request's. No thread before the first page.
    ``stats()["pushed"]`` counts them, ``site_stats()`` too."""
    assert "sitemap-indexnow" not in {t.name for t in threading.enumerate()}
    site = make_site(stack, {**BASE, **_config(endpoint)})
    try:
        assert "sitemap-indexnow" not in {t.name for t in threading.enumerate()}
        for path in ("/", "/about", "/search"):
            assert site.get(path).status == 200
        assert site.middleware.flush(5.0)
        urls = endpoint.wait(3)
        assert sorted(urls) == [f"{ORIGIN}/", f"{ORIGIN}/about", f"{ORIGIN}/search"]
        # Counted once the answer is back, a moment after the endpoint got it.
        assert eventually(lambda: site.middleware.stats().get("pushed") == 3)
        assert site.middleware.site_stats()["pushed"] == 3
    finally:
        site.close()
    assert connections
    assert {(host, port) for host, port, _ in connections} == {
        ("127.0.0.1", endpoint.port)
    }
    assert {name for _, _, name in connections} == {"sitemap-indexnow"}


@pytest.mark.slow
def test_changes_and_removals_are_pushed_and_coalesced(
    stack: str, endpoint: Endpoint
) -> None:
    """A page changed three times before a push is pushed once; a removed page
    (410) is pushed; an unchanged page seen again is not."""
    site = make_routed_site(
        stack, {**BASE, **_config(endpoint, interval=2.0, recheck_interval=0)}
    )
    state = site.state
    try:
        site.get("/about")
        site.get("/preview/x")
        assert site.middleware.flush(5.0)
        assert sorted(endpoint.wait(2)) == [f"{ORIGIN}/about", f"{ORIGIN}/preview/x"]
        for version in (2, 3, 4):
            state["version"] = version
            site.get("/about")
            assert site.middleware.flush(5.0)
        state["status"] = 410
        site.get("/preview/x")
        site.get("/search")
        state.pop("status")
        site.get("/search")  # unchanged: not pushed again
        assert site.middleware.flush(5.0)
        endpoint.wait(5)
        time.sleep(2.5)  # one more interval: nothing else comes
        later = [r["body"]["urlList"] for r in endpoint.received[1:]]
    finally:
        site.close()
    assert sorted(url for urls in later for url in urls) == [
        f"{ORIGIN}/about",
        f"{ORIGIN}/preview/x",
        f"{ORIGIN}/search",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_two_workers_on_one_store_push_each_url_once(
    kind: str, endpoint: Endpoint, tmp_path: Path, fresh: Fresh
) -> None:
    """Two middlewares (two processes' worth of writers and pushers) on one
    store record the same and different pages: every URL reaches the endpoint
    exactly once."""
    uri = fresh.uri(kind, tmp_path)
    sites = [
        make_site("wsgi", {**BASE, "store": uri, **_config(endpoint, interval=1.0)})
        for _ in range(2)
    ]
    try:
        for i, site in enumerate(sites):
            for path in ("/", "/about", "/search" if i else "/a&b"):
                assert site.get(path).status == 200
            assert site.middleware.flush(5.0)
        endpoint.wait(4)
        time.sleep(0.5)  # time for a second push of anything, were there one
        urls = endpoint.urls()
    finally:
        for site in sites:
            site.close()
    assert sorted(urls) == sorted(
        f"{ORIGIN}{path}" for path in ("/", "/about", "/search", "/a&b")
    )


@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_a_pending_push_of_a_url_the_config_now_excludes_is_never_sent(
    kind: str, endpoint: Endpoint, tmp_path: Path, fresh: Fresh
) -> None:
    """Pages recorded while the endpoint cannot be reached stay pending; a
    deploy then excludes one of them: the config re-check removes it and
    withdraws its push, so the endpoint hears only of the pages still listed."""
    uri = fresh.uri(kind, tmp_path)
    dead = {"indexnow": {"key": KEY, "endpoint": _dead_url(), "interval": 60}}
    site = make_site("wsgi", {**BASE, "store": uri, **dead})
    try:
        for path in ("/blog/café", "/about"):
            assert site.get(path).status == 200
        assert site.middleware.flush(5.0)
    finally:
        site.close()
    excluding = {"store": uri, "exclude": ["/blog/*"]}
    site = make_site("wsgi", {**BASE, **excluding, **_config(endpoint)})
    try:
        assert site.get("/search").status == 200
        assert site.middleware.flush(5.0)
        endpoint.wait(2)
        time.sleep(1.5)  # one more interval: nothing else comes
        urls = endpoint.urls()
    finally:
        site.close()
    store = open_store(uri)
    try:
        listed = sorted(entry.path for entry in store.entries(1))
    finally:
        store.close()
    assert listed == ["/about", "/search"]
    assert sorted(urls) == [f"{ORIGIN}/about", f"{ORIGIN}/search"]


def test_a_store_without_pushes_turns_indexnow_off(
    endpoint: Endpoint, caplog: pytest.LogCaptureFixture
) -> None:
    """A third-party store without the protocol: one WARNING, and the site
    records and serves as before."""

    class Plain:
        part_size = 50_000
        part_bytes = 50 * 1024 * 1024

        def __init__(self) -> None:
            self._inner = open_store("memory://")

        def __getattr__(self, name: str) -> Any:
            if "push" in name:
                raise AttributeError(name)
            return getattr(self._inner, name)

    def app(environ: Any, start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<html><title>x</title></html>"]

    with caplog.at_level(logging.WARNING, "sitemap_middleware"):
        middleware = SitemapMiddleware(
            app, {"base_url": ORIGIN, "store": Plain(), **_config(endpoint)}
        )
    assert "IndexNow is off" in caplog.text
    middleware.close()
