"""Verified crawls under real servers (gunicorn with two workers, uvicorn) on every
server-shared store: crawler requests from verified and spoofed clients, behind a
trusted proxy, to pages and to the sitemap; the store keeps the verified ones per
engine and every worker's counts. The resolver is the app's own: no network."""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import HTTPClient, free_port, running, stop_server, wait_until

from sitemap_middleware import open_store
from sitemap_middleware.stores.contract import Shared, Visits

pytestmark = [pytest.mark.servers, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
GOOGLE_IP, BING_IP, SPOOFER = "66.249.66.1", "157.55.39.1", "203.0.113.9"

# The app's config: its resolver knows the crawlers' records and a spoofer
# whose PTR names googlebot.com but resolves elsewhere. The server's peer is
# the test (127.0.0.1): the trusted proxy, whose X-Forwarded-For names the
# client.
ENTRY = """
import sys
sys.path.insert(0, {examples!r})
from {module} import create_app

class Resolver:
    PTR = {{
        {google!r}: "crawl-66-249-66-1.googlebot.com",
        {bing!r}: "msnbot-157-55-39-1.search.msn.com",
        {spoofer!r}: "crawl-203-0-113-9.googlebot.com",
    }}
    HOSTS = {{
        "crawl-66-249-66-1.googlebot.com": [{google!r}],
        "msnbot-157-55-39-1.search.msn.com": [{bing!r}],
        "crawl-203-0-113-9.googlebot.com": ["66.249.66.200"],
    }}

    def reverse(self, address):
        if address not in self.PTR:
            raise OSError("no PTR")
        return self.PTR[address]

    def forward(self, host):
        return self.HOSTS.get(host, [])

app = create_app({{
    "base_url": {base!r},
    "store": {store!r},
    "crawlers": {{"resolver": Resolver(), "trusted_proxies": ["127.0.0.1"]}},
}})
"""

SERVERS = {
    "gunicorn": (
        "flask_app",
        ["-m", "gunicorn", "-w", "2", "-b", "{bind}", "entry:app"],
    ),
    # Its own proxy headers off: the middleware reads X-Forwarded-For itself.
    "uvicorn": (
        "starlette_app",
        ["-m", "uvicorn", "--no-proxy-headers", "--port", "{port}", "entry:app"],
    ),
}


@pytest.fixture(params=sorted(SERVERS))
def served(
    request: pytest.FixtureRequest, tmp_path: Path, store_uri: str
) -> Iterator[tuple[HTTPClient, subprocess.Popen[bytes]]]:
    module, argv = SERVERS[request.param]
    port = free_port()
    (tmp_path / "entry.py").write_text(
        textwrap.dedent(
            ENTRY.format(
                examples=str(EXAMPLES),
                module=module,
                google=GOOGLE_IP,
                bing=BING_IP,
                spoofer=SPOOFER,
                base=f"http://127.0.0.1:{port}",
                store=store_uri,
            )
        )
    )
    args = [a.format(bind=f"127.0.0.1:{port}", port=port) for a in argv]
    with running(args, tmp_path, port, "/about", "the server") as served:
        yield served


def test_verified_and_spoofed_crawls_on_every_store(
    served: tuple[HTTPClient, subprocess.Popen[bytes]], store_uri: str
) -> None:
    client, process = served

    def get(path: str, agent: str, address: str) -> int:
        headers = {"User-Agent": agent, "X-Forwarded-For": f"10.9.9.9, {address}"}
        return client.get(path, headers).status

    # Each several times: both of gunicorn's workers see some of each.
    for _ in range(6):
        assert get("/about", GOOGLEBOT, GOOGLE_IP) == 200
        assert get("/about", GOOGLEBOT, SPOOFER) == 200
        assert get("/blog/", BINGBOT, BING_IP) == 200
        assert get("/no-such-page", GOOGLEBOT, GOOGLE_IP) == 404
        assert get("/", BROWSER, "192.0.2.1") == 200
    wait_until(lambda: client.get("/sitemap.xml").status == 200, 15, "the sitemap")
    for _ in range(4):
        assert get("/sitemap.xml", GOOGLEBOT, GOOGLE_IP) == 200
        assert get("/sitemap.xml", BINGBOT, SPOOFER) == 200
        assert get("/robots.txt", BINGBOT, BING_IP) == 200
    stop_server(process, 15)  # an orderly shutdown: every worker flushes
    with open_store(store_uri) as store:
        assert isinstance(store, Visits) and isinstance(store, Shared)
        kept = {(v.path, v.agent): v.status for v in store.visits()}
        crawled = {key: status for key, status in kept.items() if key[1]}
        assert crawled == {
            ("/about", "google"): 200,
            ("/no-such-page", "google"): 404,
            ("/blog/", "bing"): 200,
            ("/sitemap.xml", "google"): 200,
            ("/robots.txt", "bing"): 200,
        }
        # The pages served to anyone: their last-served times.
        served_paths = {path for path, agent in kept if not agent}
        assert {"/", "/about", "/blog/"} <= served_paths
        assert "/no-such-page" not in served_paths
        counts = store.counts()
        assert counts.get("verified") == 6 * 3 + 4 * 2
        assert counts.get("unverified") == 6 + 4
        assert "dropped" not in counts and "unresolved" not in counts
