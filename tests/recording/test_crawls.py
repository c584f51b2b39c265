"""Crawls: the client's address through trusted proxies, the verification of a
crawler's claim (IP ranges, reverse DNS confirmed forward, timeouts, the cache, the
bounds), and what the middleware keeps and counts, on both stacks. The resolver is
injected: no test asks the network."""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from werkzeug.test import Client

from sitemap_middleware import ASGISitemapMiddleware, Config, SitemapMiddleware
from sitemap_middleware.crawlers import AGENTS_KEPT, ENGINES, Agents
from sitemap_middleware.reasons import Crawls
from sitemap_middleware.recording import crawls
from sitemap_middleware.recording.crawls import (
    Crawl,
    Verifier,
    VisitLog,
    client_address,
    confirmed_engine,
    stored_spelling,
)
from sitemap_middleware.stores.contract import Visit
from sitemap_middleware.stores.memory import MemoryStore

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0;"
    " +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36"
)
BROWSER = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"
    " Chrome/120.0.0.0 Safari/537.36"
)
GOOGLE_IP = "66.249.66.1"
BING_IP = "157.55.39.1"
SPOOFER = "203.0.113.9"


def ip(text: str) -> Any:
    return ipaddress.ip_address(text)


def nets(*texts: str) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(t) for t in texts)


class FakeDNS:
    """PTR and A/AAAA records, as a resolver answers them; counts its calls and
    may be held (a slow resolver) until released."""

    def __init__(self, ptr: dict[str, str], addresses: dict[str, list[str]]) -> None:
        self.ptr, self.addresses = ptr, addresses
        self.calls: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.failing: BaseException | None = None

    def reverse(self, address: str) -> str:
        self.calls.append(address)
        self.gate.wait(10)
        if self.failing is not None:
            raise self.failing
        if address not in self.ptr:
            raise OSError("no PTR")
        return self.ptr[address]

    def forward(self, host: str) -> Iterable[str]:
        if host not in self.addresses:
            raise OSError("no such host")
        return self.addresses[host]


def dns() -> FakeDNS:
    return FakeDNS(
        {
            GOOGLE_IP: "crawl-66-249-66-1.googlebot.com",
            BING_IP: "msnbot-157-55-39-1.search.msn.com.",
            "2001:4860:4801:10::1": "crawl.googlebot.com",
            # A spoofer's own PTR record: any name its owner likes.
            SPOOFER: "crawl-203-0-113-9.googlebot.com",
            "198.51.100.7": "vm-7.bc.googleusercontent.com",
        },
        {
            "crawl-66-249-66-1.googlebot.com": [GOOGLE_IP],
            "msnbot-157-55-39-1.search.msn.com.": [BING_IP],
            "crawl.googlebot.com": ["2001:4860:4801:10:0:0:0:1"],
            "crawl-203-0-113-9.googlebot.com": ["66.249.66.200"],
            "vm-7.bc.googleusercontent.com": ["198.51.100.7"],
        },
    )


def options(resolver: Any = None, **given: Any) -> Any:
    crawlers = Config.from_mapping(
        {
            "base_url": "https://example.com",
            "store": "memory://",
            "crawlers": {"resolver": resolver, **given},
        }
    ).crawlers
    assert crawlers is not None
    return crawlers


def crawl(engine: str = "google", peer: str = GOOGLE_IP, path: str = "/a") -> Crawl:
    return Crawl(engine, peer, "", path, "", True, 200, 1_700_000_000.0)


def settled(verifier: Verifier, within: float = 5.0) -> list[Any]:
    deadline = time.monotonic() + within
    found: list[Any] = []
    while len(verifier) and time.monotonic() < deadline:
        time.sleep(0.005)
        found += verifier.settle()
    return found


# -- the client's address -------------------------------------------------------------


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "client"),
    [
        # No trusted proxy: the header is anyone's to write.
        ("203.0.113.5", "66.249.66.1", (), "203.0.113.5"),
        # The proxy's peer is the client; what the client wrote is to its left.
        ("10.0.0.2", "66.249.66.1, 198.51.100.1", ("10.0.0.0/8",), "198.51.100.1"),
        ("10.0.0.2", "198.51.100.1,10.0.0.3", ("10.0.0.0/8",), "198.51.100.1"),
        # A peer that is not trusted: its header is not believed.
        ("198.51.100.1", "66.249.66.1", ("10.0.0.0/8",), "198.51.100.1"),
        # Every hop trusted: the leftmost.
        ("10.0.0.2", "10.0.0.9, 10.0.0.3", ("10.0.0.0/8",), "10.0.0.9"),
        # No header from a trusted proxy: the proxy.
        ("10.0.0.2", "", ("10.0.0.0/8",), None),
        # Field lines joined (duplicated headers): still right to left.
        ("10.0.0.2", "1.1.1.1, 2.2.2.2,3.3.3.3", ("10.0.0.0/8",), "3.3.3.3"),
        # Garbage where the client should be: no client address.
        ("10.0.0.2", "66.249.66.1, not-an-ip", ("10.0.0.0/8",), None),
        ("10.0.0.2", "66.249.66.1, unknown", ("10.0.0.0/8",), None),
        ("10.0.0.2", "66.249.66.1,", ("10.0.0.0/8",), None),
        # Garbage left of the client: never read.
        ("10.0.0.2", "<script>, 66.249.66.1", ("10.0.0.0/8",), "66.249.66.1"),
        # Ports and IPv6, bracketed or not, and IPv4-mapped peers.
        ("10.0.0.2", "66.249.66.1:5123", ("10.0.0.0/8",), "66.249.66.1"),
        ("::1", "[2001:4860:4801:10::1]:443", ("::1",), "2001:4860:4801:10::1"),
        ("::1", "2001:4860:4801:10::1", ("::1",), "2001:4860:4801:10::1"),
        ("::ffff:66.249.66.1", "", (), "66.249.66.1"),
        ("", "66.249.66.1", (), None),  # a Unix socket's peer
    ],
)
def test_client_address_through_x_forwarded_for(
    peer: str, forwarded: str, trusted: tuple[str, ...], client: str | None
) -> None:
    """As werkzeug's ProxyFix: the rightmost address no trusted proxy holds."""
    found = client_address(peer, forwarded, "x-forwarded-for", nets(*trusted))
    assert found == (None if client is None else ip(client))


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        ('for=66.249.66.1;proto=https, for="10.0.0.3"', "66.249.66.1"),
        ('for="[2001:4860:4801:10::1]:4711"', "2001:4860:4801:10::1"),
        ("For=66.249.66.1; by=10.0.0.2", "66.249.66.1"),
        ('for=203.0.113.1, for="_hidden"', None),  # an obfuscated node
        ("for=unknown", None),
        ("proto=https", None),  # no for=
        ('for=66.249.66.1, for=10.0.0.3;by="x,y"', "66.249.66.1"),
    ],
)
def test_client_address_through_forwarded(forwarded: str, client: str | None) -> None:
    """RFC 7239's Forwarded, when the config names it."""
    found = client_address("10.0.0.2", forwarded, "forwarded", nets("10.0.0.0/8"))
    assert found == (None if client is None else ip(client))


def test_x_forwarded_for_is_not_read_as_forwarded() -> None:
    """Only the configured header: a client's Forwarded through a proxy that
    sets X-Forwarded-For is never believed (the adapters capture one header)."""
    assert (
        client_address(
            "10.0.0.2", "for=66.249.66.1", "x-forwarded-for", nets("10.0.0.0/8")
        )
        is None
    )


# -- the claim -------------------------------------------------------------------------


def test_agents_claim_and_keep_a_bounded_number() -> None:
    agents = Agents(ENGINES.values())
    assert agents.claim(GOOGLEBOT) == "google"
    assert agents.claim(BINGBOT) == "bing"
    assert (
        agents.claim("Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)") == "google"
    )
    assert agents.claim("Mozilla/5.0 (compatible; YandexBot/3.0)") == "yandex"
    assert agents.claim("Baiduspider") == "baidu"
    assert agents.claim(BROWSER) == ""
    assert agents.claim_bytes(GOOGLEBOT.encode()) == "google"
    assert agents.str[GOOGLEBOT] == "google" and agents.str[BROWSER] == ""
    assert agents.bytes[GOOGLEBOT.encode()] == "google"
    for n in range(AGENTS_KEPT + 10):
        agents.claim(f"agent {n}")
    assert len(agents.str) == AGENTS_KEPT  # made-up agents fill nothing more
    assert agents.claim("googlebot") == ""  # tokens as the engines send them


def test_agents_of_no_engines_claim_none() -> None:
    """Crawls not kept: every agent claims none, kept for the next lookup
    all the same (the adapters make one lookup either way)."""
    agents = Agents(())
    assert agents.claim(GOOGLEBOT) == "" and agents.str[GOOGLEBOT] == ""
    assert agents.claim_bytes(GOOGLEBOT.encode()) == ""
    assert agents.bytes == {b"": "", GOOGLEBOT.encode(): ""}


# -- verification ----------------------------------------------------------------------


def test_dns_verification_confirms_forward() -> None:
    """A PTR in the engine's domains counts only if the name resolves back
    to the address: a spoofer's PTR does not; a name of another engine, or a
    Google Cloud machine's, does not verify a Google claim."""
    given = options(dns())
    resolver = given.resolver
    assert confirmed_engine(resolver, ip(GOOGLE_IP), given) == "google"
    assert confirmed_engine(resolver, ip(BING_IP), given) == "bing"
    assert confirmed_engine(resolver, ip("2001:4860:4801:10::1"), given) == "google"
    assert confirmed_engine(resolver, ip(SPOOFER), given) is None
    assert confirmed_engine(resolver, ip("198.51.100.7"), given) is None
    assert confirmed_engine(resolver, ip("192.0.2.1"), given) is None  # no PTR
    verifier = Verifier(given)
    for claim in [
        crawl(),
        crawl("bing", BING_IP),
        crawl(peer=SPOOFER),
        crawl("google", BING_IP),
    ]:
        assert verifier.verify(claim, ip(claim.peer)) is None  # never waits
    verdicts = {(v.crawl.engine, v.crawl.peer): v.reason for v in settled(verifier)}
    assert verdicts == {
        ("google", GOOGLE_IP): Crawls.VERIFIED,
        ("bing", BING_IP): Crawls.VERIFIED,
        ("google", SPOOFER): Crawls.UNVERIFIED,
        ("google", BING_IP): Crawls.UNVERIFIED,  # bing's crawler, claiming google
    }
    verifier.close()


def test_ranges_verify_without_dns(tmp_path: Path) -> None:
    """An address in the engine's published ranges is verified at once, with
    no lookup; with dns off, any other is not."""
    where = tmp_path / "googlebot.json"
    where.write_text(json.dumps({"prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}))
    resolver = dns()
    given = options(
        resolver, engines=["google"], dns=False, ranges={"google": str(where)}
    )
    verifier = Verifier(given)
    assert verifier.verify(crawl(), ip(GOOGLE_IP)).reason == Crawls.VERIFIED  # type: ignore[union-attr]
    assert verifier.verify(crawl(peer=SPOOFER), ip(SPOOFER)).reason == Crawls.UNVERIFIED  # type: ignore[union-attr]
    assert verifier.verify(crawl(), None).reason == Crawls.UNVERIFIED  # type: ignore[union-attr]
    assert resolver.calls == []


def test_a_slow_resolver_never_holds_the_writer() -> None:
    """A lookup past the timeout settles its crawls as unresolved; verify()
    and settle() return at once meanwhile; the answer that comes later is
    kept for the next crawl."""
    resolver = dns()
    resolver.gate.clear()  # every lookup hangs until released
    verifier = Verifier(options(resolver, timeout=0.2))
    started = time.monotonic()
    assert verifier.verify(crawl(), ip(GOOGLE_IP)) is None
    assert verifier.settle() == []
    assert time.monotonic() - started < 0.1
    verdicts = settled(verifier)
    assert [v.reason for v in verdicts] == [Crawls.UNRESOLVED]
    # Within UNRESOLVED_TTL, the same address is unresolved at once.
    assert verifier.verify(crawl(), ip(GOOGLE_IP)).reason == Crawls.UNRESOLVED  # type: ignore[union-attr]
    resolver.gate.set()
    deadline = time.monotonic() + 5
    while GOOGLE_IP and time.monotonic() < deadline:
        verifier.settle()
        verdict = verifier.verify(crawl(), ip(GOOGLE_IP))
        if verdict is not None and verdict.reason == Crawls.VERIFIED:
            break
        time.sleep(0.01)
    else:
        pytest.fail("the late answer was not kept")
    verifier.close()


def test_a_failing_resolver_is_unresolved_not_unverified() -> None:
    resolver = dns()
    resolver.failing = TimeoutError("timed out")
    verifier = Verifier(options(resolver))
    assert verifier.verify(crawl(), ip(GOOGLE_IP)) is None
    assert [v.reason for v in settled(verifier)] == [Crawls.UNRESOLVED]
    verifier.close()


def test_verdicts_are_cached_per_address_with_a_ttl_and_a_bound() -> None:
    resolver = dns()
    now = [0.0]
    verifier = Verifier(options(resolver, cache_size=2), clock=lambda: now[0])
    for _ in range(3):
        verifier.verify(crawl(), ip(GOOGLE_IP))
    assert [v.reason for v in settled(verifier)] == [Crawls.VERIFIED] * 3
    assert resolver.calls == [GOOGLE_IP]  # one lookup for the three
    assert verifier.verify(crawl(), ip(GOOGLE_IP)).reason == Crawls.VERIFIED  # type: ignore[union-attr]
    assert resolver.calls == [GOOGLE_IP]
    now[0] += crawls.VERDICT_TTL + 1  # expired: looked up again
    assert verifier.verify(crawl(), ip(GOOGLE_IP)) is None
    settled(verifier)
    assert resolver.calls == [GOOGLE_IP] * 2
    # Beyond cache_size, the oldest verdict goes.
    for peer in (BING_IP, SPOOFER):
        verifier.verify(crawl(peer=peer), ip(peer))
        settled(verifier)
    assert verifier.verify(crawl(), ip(GOOGLE_IP)) is None
    settled(verifier)
    assert resolver.calls.count(GOOGLE_IP) == 3
    verifier.close()


def test_the_backlog_is_bounded_and_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lookups under way (stuck ones included) and crawls waiting are
    bounded: beyond, a crawl is dropped, not queued."""
    monkeypatch.setattr(crawls, "MAX_LOOKUPS", 3)
    monkeypatch.setattr(crawls, "MAX_WAITING", 5)
    resolver = dns()
    resolver.gate.clear()
    verifier = Verifier(options(resolver, timeout=60))
    peers = [f"192.0.2.{n}" for n in range(1, 6)]
    verdicts = [verifier.verify(crawl(peer=p), ip(p)) for p in peers]
    assert verdicts[:3] == [None] * 3
    assert [v.reason for v in verdicts[3:]] == [Crawls.DROPPED] * 2  # type: ignore[union-attr]
    # Crawls from an address already being looked up wait, up to the bound.
    more = [verifier.verify(crawl(peer=peers[0]), ip(peers[0])) for _ in range(4)]
    assert more[:2] == [None, None]
    assert [v.reason for v in more[2:]] == [Crawls.DROPPED] * 2  # type: ignore[union-attr]
    assert len(verifier) == 5
    resolver.gate.set()
    assert [v.reason for v in settled(verifier)] == [Crawls.UNVERIFIED] * 5
    verifier.close()


# -- what is kept --------------------------------------------------------------------


def test_stored_spelling_of_a_crawl() -> None:
    config = Config.from_mapping({"base_url": "https://e.com", "query": ["page"]})
    assert stored_spelling(crawl(path="/a/./b/%7Ex"), config) == "/a/b/~x"
    spelled = Crawl("google", GOOGLE_IP, "", "/b", "utm_source=x&page=2", True, 200, 0)
    assert stored_spelling(spelled, config) == "/b?page=2"
    assert stored_spelling(crawl(path="/a\x00b"), config) is None
    assert stored_spelling(crawl(path="/x;jsessionid=abc"), config) == "/x"


def test_visit_log_writes_each_path_and_agent_once_an_interval() -> None:
    store = MemoryStore()
    config = Config.from_mapping(
        {"base_url": "https://e.com", "store": store, "recheck_interval": 300}
    )
    log = VisitLog(config, store)
    log.crawled(crawl())
    log.served("/a", 1_700_000_000.5)
    log.write()
    log.crawled(crawl()._replace(at=1_700_000_100.0, status=500))  # within: none
    log.crawled(crawl("bing", BING_IP)._replace(at=1_700_000_100.0))
    log.write()
    log.crawled(crawl()._replace(at=1_700_000_400.0, status=404))
    log.write()
    assert sorted(store.visits()) == [
        Visit("/a", "", 1_700_000_000, 200),
        Visit("/a", "bing", 1_700_000_100, 200),
        Visit("/a", "google", 1_700_000_400, 404),
    ]


# -- through the middleware, on both stacks -----------------------------------------


def wsgi_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    status = "404 Not Found" if environ["PATH_INFO"] == "/missing" else "200 OK"
    start_response(status, [("Content-Type", "text/html; charset=utf-8")])
    return [b"<!doctype html><html><head><title>T</title></head><body>x</body></html>"]


async def asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    status = 404 if scope["path"] == "/missing" else 200
    headers = [(b"content-type", b"text/html; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    body = b"<!doctype html><html><head><title>T</title></head><body>x</body></html>"
    await send({"type": "http.response.body", "body": body})


def site(stack: str, **crawlers: Any) -> tuple[Any, Any]:
    config = {
        "base_url": "http://testserver",
        "store": "memory://",
        "allowed_hosts": ["testserver", "localhost"],
        "crawlers": {"resolver": dns(), "trusted_proxies": ["10.0.0.0/8"], **crawlers},
    }
    if stack == "wsgi":
        middleware: Any = SitemapMiddleware(wsgi_app, config)
        return middleware, _wsgi_get(middleware)
    middleware = ASGISitemapMiddleware(asgi_app, config)
    return middleware, _asgi_get(middleware)


def _wsgi_get(middleware: Any) -> Any:
    client = Client(middleware)

    def get(path: str, agent: str, peer: str, forwarded: str | None = None) -> int:
        headers = {"User-Agent": agent}
        if forwarded is not None:
            headers["X-Forwarded-For"] = forwarded
        response = client.get(
            path, headers=headers, environ_overrides={"REMOTE_ADDR": peer}
        )
        response.get_data()  # sent in full
        response.close()
        return response.status_code

    return get


def _asgi_get(middleware: Any) -> Any:
    def get(path: str, agent: str, peer: str, forwarded: str | None = None) -> int:
        client = TestClient(middleware, client=(peer, 5000))
        headers = {"User-Agent": agent}
        if forwarded is not None:
            headers["X-Forwarded-For"] = forwarded
        return client.get(path, headers=headers).status_code

    return get


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_verified_and_spoofed_crawls_through_the_middleware(stack: str) -> None:
    """Verified crawls of pages, of a 404 and of the sitemap index are kept
    per engine, with their status; spoofed ones are counted only; every
    page served keeps its last-served time; a browser's request is no crawl."""
    middleware, get = site(stack)
    assert get("/a", GOOGLEBOT, GOOGLE_IP) == 200
    assert get("/a", GOOGLEBOT, SPOOFER) == 200
    assert get("/missing", BINGBOT, "10.0.0.5", f"192.0.2.1, {BING_IP}") == 404
    assert get("/b", BROWSER, "192.0.2.7") == 200
    assert get("/b", GOOGLEBOT, "192.0.2.7", GOOGLE_IP) == 200  # untrusted peer
    assert middleware.flush(10)  # the index lists the pages from here on
    assert get("/sitemap.xml", GOOGLEBOT, GOOGLE_IP) == 200
    assert get("/robots.txt", BINGBOT, BING_IP) == 200
    assert middleware.flush(10)
    stats = middleware.stats()
    assert stats["crawls"] == {"verified": 4, "unverified": 2}
    visits = {(v.path, v.agent): v.status for v in middleware.store.visits()}
    assert visits == {
        ("/a", "google"): 200,
        ("/missing", "bing"): 404,
        ("/sitemap.xml", "google"): 200,
        ("/robots.txt", "bing"): 200,
        ("/a", ""): 200,
        ("/b", ""): 200,
    }
    middleware.close()


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_each_request_claims_by_its_own_user_agent(stack: str) -> None:
    """Requests in a row with the same User-Agent, then another, then back:
    each one's claim is its own (the last agent's claim, kept for the next
    request, never answers another agent)."""
    middleware, get = site(stack)
    assert get("/a", BROWSER, "192.0.2.7") == 200
    assert get("/b", GOOGLEBOT, GOOGLE_IP) == 200
    assert get("/c", GOOGLEBOT, GOOGLE_IP) == 200
    assert get("/d", BROWSER, "192.0.2.7") == 200
    assert get("/e", BINGBOT, BING_IP) == 200
    assert get("/f", BROWSER, "192.0.2.7") == 200
    assert get("/g", "", "192.0.2.7") == 200
    assert middleware.flush(10)
    assert middleware.stats()["crawls"] == {"verified": 3}
    crawled = {(v.path, v.agent) for v in middleware.store.visits() if v.agent}
    assert crawled == {("/b", "google"), ("/c", "google"), ("/e", "bing")}
    middleware.close()


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_a_request_without_a_user_agent_is_no_crawl(stack: str) -> None:
    """No User-Agent header at all: served, recorded as any page, no claim."""
    middleware, _ = site(stack)
    if stack == "wsgi":
        response = Client(middleware).get("/a")
        response.get_data()
        response.close()
        assert response.status_code == 200
    else:
        client = TestClient(middleware)
        assert client.get("/a", headers={"User-Agent": ""}).status_code == 200
        client.headers.pop("user-agent", None)
        assert client.get("/c").status_code == 200
    assert middleware.flush(10)
    assert middleware.stats()["crawls"] == {}
    assert middleware.store.known(["/a", "/c"]) == (
        {"/a"} if stack == "wsgi" else {"/a", "/c"}
    )
    middleware.close()


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_crawlers_off_keeps_no_crawls(stack: str) -> None:
    config = {
        "base_url": "http://testserver",
        "store": "memory://",
        "allowed_hosts": ["testserver", "localhost"],
        "crawlers": False,
    }
    app = wsgi_app if stack == "wsgi" else asgi_app
    kind: Any = SitemapMiddleware if stack == "wsgi" else ASGISitemapMiddleware
    middleware = kind(app, config)
    get = _wsgi_get(middleware) if stack == "wsgi" else _asgi_get(middleware)
    assert get("/a", GOOGLEBOT, GOOGLE_IP) == 200
    assert middleware.flush(10)
    assert middleware.stats()["crawls"] == {}
    assert {v.agent for v in middleware.store.visits()} == {""}
    middleware.close()


EXITING = """
import sys
from werkzeug.test import Client
from sitemap_middleware import SitemapMiddleware

class Resolver:
    def reverse(self, address):
        return "crawl-66-249-66-1.googlebot.com"
    def forward(self, host):
        return ["66.249.66.1"]

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"x"]

config = {"base_url": "http://localhost", "store": sys.argv[1],
          "crawlers": {"resolver": Resolver()}}
response = Client(SitemapMiddleware(app, config)).get(
    "/sitemap.xml",
    headers={"User-Agent": sys.argv[2]},
    environ_overrides={"REMOTE_ADDR": "66.249.66.1"},
)
response.close()
# No flush: the process's exit flushes, and verifies what waits.
"""


@pytest.mark.slow
def test_a_crawl_queued_at_exit_is_verified_and_kept(tmp_path: Path) -> None:
    """The last flush, at the interpreter's exit, still looks addresses up
    (threads of its own: an executor's take no work by then)."""
    import subprocess
    import sys

    from sitemap_middleware import open_store

    uri = f"sqlite:///{tmp_path}/s.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", EXITING, uri, GOOGLEBOT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    with open_store(uri) as store:
        assert [(v.path, v.agent, v.status) for v in store.visits()] == [  # type: ignore[attr-defined]
            ("/sitemap.xml", "google", 404)
        ]
        assert store.counts() == {"verified": 1}  # type: ignore[attr-defined]


def test_a_full_crawl_queue_drops_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request path never waits: beyond the queue's bound a crawl is
    dropped, counted, and the response goes on unchanged."""
    monkeypatch.setattr(crawls, "MAX_QUEUED_CRAWLS", 2)
    middleware, get = site("wsgi")
    # The writer looks at the queue about once a second: these come first.
    assert [get(f"/p{n}", GOOGLEBOT, GOOGLE_IP) for n in range(4)] == [200] * 4
    assert middleware.flush(10)
    assert middleware.stats()["crawls"] == {"verified": 2, "dropped": 2}
    middleware.close()
