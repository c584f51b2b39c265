"""The site map for people in a real headless Chromium, served by real servers
(gunicorn for WSGI, uvicorn for ASGI): a screenshot, its links against the XML
sitemap, the keyboard's skip link, and axe-core's accessibility check.

Chromium is driven over the DevTools protocol (``websocket-client``). axe-core
is fetched once from the npm registry into ``tests/.cache`` (checked against
its published sha512) and read from there offline afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import tarfile
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.helpers import HTTPClient, free_port, running, sitemap_urls

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CACHE = Path(__file__).resolve().parents[1] / ".cache"
AXE_VERSION = "4.14.1"
AXE_SHA512 = (
    "FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37"
    "OgudVGtQ=="
)
AXE_TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz"
SCREENSHOT_COPY = Path("/work/sitemap-page.png")
REQUIRED = os.environ.get("SITEMAP_REQUIRE_SERVICES") == "1"

SERVERS = {
    "gunicorn-flask": (
        "flask_app",
        # Threads: a sync worker holds one connection at a time, and the
        # browser keeps idle ones open (preconnects), which would starve the
        # test's own requests.
        [
            "-m",
            "gunicorn",
            "-w",
            "1",
            "--threads",
            "4",
            "-b",
            "127.0.0.1:{port}",
            "entry:app",
        ],
    ),
    "uvicorn-fastapi": (
        "fastapi_app",
        ["-m", "uvicorn", "--port", "{port}", "entry:app"],
    ),
}

# The pages the servers' memory stores hold, with their titles: enough for a
# few sections and columns, a title that is markup, and no title at all.
SEED = textwrap.dedent(
    """
    from sitemap_middleware import Entry, open_store

    store = open_store("memory://")
    store.upsert(
        [
            Entry("/", title="Field Notes",
                  description="Short notes on coffee, Python and the web."),
            Entry("/about", title="About this site",
                  description="Who writes Field Notes, and how the site is made."),
            Entry("/search"),
            Entry("/blog/", route="/blog/", title="The blog"),
            *(
                Entry(f"/blog/note-{n}", route="/blog/{slug}", title=f"Note {n}")
                for n in range(1, 25)
            ),
            Entry("/blog/markup", route="/blog/{slug}",
                  title="<script>alert('not run')</script> & friends"),
            Entry("/docs/getting-started"),
            Entry("/docs/configuration", title="Configuration reference",
                  description="Every key of the config dict, its default and"
                  " what it changes."),
            Entry("/docs/stores", title="Stores: SQLite, Redis, PostgreSQL"),
            Entry("/en/", title="English"),
            Entry("/de/", title="Deutsch"),
        ]
    )
    """
)


def _unavailable(why: str) -> None:
    """Skip, except where the suite must run everything (CI)."""
    if REQUIRED:
        pytest.fail(f"{why} (SITEMAP_REQUIRE_SERVICES=1)")
    pytest.skip(why)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    _unavailable("Chromium is not installed (apt-get install -y chromium)")
    raise AssertionError  # unreachable


def _axe() -> str:
    """axe.min.js from the cache, fetched once from the npm registry."""
    script = CACHE / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if not script.exists():
        try:
            with urllib.request.urlopen(AXE_TARBALL, timeout=60) as response:
                tarball = response.read()
        except OSError as exc:
            _unavailable(f"axe-core could not be fetched from the npm registry: {exc}")
        digest = base64.b64encode(hashlib.sha512(tarball).digest()).decode()
        assert digest == AXE_SHA512, "the axe-core tarball is not the published one"
        with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
            member = archive.extractfile("package/axe.min.js")
            assert member is not None
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_bytes(member.read())
    return script.read_text("utf-8")


class Browser:
    """One headless Chromium page over the DevTools protocol."""

    events: list[dict[str, Any]]

    def __init__(self, executable: str, profile: Path) -> None:
        import websocket

        # Chromium's log goes to a file: a pipe nobody reads would block it.
        self._log = profile / "chromium.log"
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [
                    executable,
                    "--headless=new",
                    "--no-sandbox",  # tests may run as root in containers
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--hide-scrollbars",
                    "--remote-debugging-port=0",
                    f"--user-data-dir={profile / 'data'}",
                    "--window-size=1280,900",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self._socket: Any = None
        self.events = []
        port = self._port()
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/json/list", timeout=10
        ) as response:
            targets = json.load(response)
        page = next(t for t in targets if t["type"] == "page")
        self._socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True
        )
        self._ids = itertools.count(1)
        self.call("Page.enable")
        self.call("Runtime.enable")

    def _port(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = self._log.read_text("utf-8", "replace")
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", text)
            if found:
                return found.group(1)
            if self._process.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        log = self._log.read_text("utf-8", "replace")[-2000:]
        _unavailable(f"Chromium did not start: {log}")
        raise AssertionError  # unreachable

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        self._socket.send(
            json.dumps({"id": number, "method": method, "params": params})
        )
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == number:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]
            self.events.append(message)

    def open(self, url: str) -> None:
        self.events = []
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, f"{url} did not load"
            self.events.append(json.loads(self._socket.recv()))

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise AssertionError(result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        shot = self.call(
            "Page.captureScreenshot", format="png", captureBeyondViewport=True
        )
        path.write_bytes(base64.b64decode(shot["data"]))

    def press_tab(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Tab",
                code="Tab",
                windowsVirtualKeyCode=9,
            )

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


@pytest.fixture(scope="module")
def axe() -> str:
    return _axe()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    pytest.importorskip("websocket", reason="websocket-client is a test dependency")
    executable = _chromium()
    profile = tmp_path / "chromium"
    profile.mkdir()
    opened = Browser(executable, profile)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(params=sorted(SERVERS))
def server(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, str, HTTPClient]]:
    module, argv = SERVERS[request.param]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    (tmp_path / "entry.py").write_text(
        SEED
        + textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(EXAMPLES)!r})
            from {module} import create_app
            app = create_app({{
                "base_url": {base!r},
                "store": store,
                "html_sitemap": {{"path": "/site-map", "site_name": "Field Notes"}},
            }})
            """
        )
    )
    args = [a.format(port=port) for a in argv]
    what = f"{request.param} to serve a sitemap"
    with running(args, tmp_path, port, "/sitemap.xml", what) as (client, _):
        yield request.param, base, client


def test_the_site_map_in_a_browser(
    server: tuple[str, str, HTTPClient], browser: Browser, axe: str, tmp_path: Path
) -> None:
    """The served page renders, its links are exactly the sitemap's <loc>s,
    the first Tab shows the skip link, nothing runs as script, and axe-core
    finds no serious or critical violation."""
    name, base, client = server
    browser.open(f"{base}/site-map")
    shot = tmp_path / f"site-map-{name}.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if name == "gunicorn-flask":
        SCREENSHOT_COPY.write_bytes(shot.read_bytes())

    assert browser.evaluate("document.documentElement.lang") == "en"
    assert browser.evaluate("document.title") == "Site map – Field Notes"
    listed = browser.evaluate(
        "[...document.querySelectorAll('main a')].map(a => a.href)"
    )
    assert sorted(listed) == sorted(sitemap_urls(client)) and len(set(listed)) == len(
        listed
    )
    # The header names the site and links its home page; every other link
    # stays on this page: the skip link and the sections.
    home = browser.evaluate(
        "[...document.querySelectorAll('header a')].map(a => [a.href, a.rel,"
        " a.textContent])"
    )
    assert home == [[f"{base}/", "home", "Field Notes"]]
    others = browser.evaluate(
        "[...document.querySelectorAll('a:not(main a, header a)')].map(a => a.href)"
    )
    assert others and all(href.startswith(f"{base}/site-map#") for href in others)
    headings = browser.evaluate(
        "[...document.querySelectorAll('h1, h2')].map(h => h.tagName + ':' +"
        " h.textContent)"
    )
    assert headings == ["H1:Site map", "H2:Pages", "H2:Blog", "H2:Docs"]
    # The markup in a title is text, and no script was run or injected.
    assert browser.evaluate("document.scripts.length") == 0
    assert "<script>alert('not run')</script> & friends" in browser.evaluate(
        "document.querySelector('main').innerText"
    )
    assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == (
        "rgb(255, 255, 255)"
    )

    browser.press_tab()
    focused = browser.evaluate(
        "(() => { const a = document.activeElement;"
        " const box = a.getBoundingClientRect();"
        " return [a.className, box.top >= 0 && box.bottom <= innerHeight,"
        " getComputedStyle(a).outlineStyle]; })()"
    )
    assert focused[:2] == ["skip", True], focused

    browser.evaluate(axe)
    violations = browser.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then(r =>"
        " r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))"
    )
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=2)
