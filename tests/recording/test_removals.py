"""Only a page can remove itself (invariant 19), and only the stored spelling moves
its lastmod: requests whose target is another spelling of a stored URL (a dropped
query parameter, dot segments, percent-encoding, a stripped matrix parameter) never
remove or change it, on both stacks; a real removal is forgotten by the recent-pages
cache at once; paths with empty segments are never recorded."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
from support.helpers import free_port, stop_server
from support.sites import HTML, ROUTES, Site, html

from sitemap_middleware import open_store
from sitemap_middleware.recording.digest import Prints
from sitemap_middleware.recording.recent import Recent
from sitemap_middleware.tracking import is_tracking, only_tracking, untracked

Make = Callable[..., Site]
ROOT = str(Path(__file__).resolve().parents[2])
NOINDEX = html("Pricing", '<meta name="robots" content="noindex">')
PRICING = (200, {"Content-Type": HTML}, [html("Pricing")])


def counts(site: Site) -> dict[str, Any]:
    return site.middleware.stats()


def test_a_page_gone_at_a_url_never_stored_is_counted(make: Make) -> None:
    """A 404, a 410, a noindex header or a redirect to a login page at a URL
    the store does not hold removes nothing and is counted as gone (every
    answer is counted: invariant 8); at a stored URL it is a removal."""
    site = make()
    ROUTES["/pricing"] = PRICING
    site.get("/pricing")
    assert site.recorded() == ["/pricing"]
    ROUTES["/pricing"] = (404, {}, [b""])
    ROUTES["/hidden"] = (200, {"Content-Type": HTML, "X-Robots-Tag": "none"}, [b"x"])
    ROUTES["/members"] = (302, {"Location": "/auth/login"}, [b""])
    ROUTES["/old"] = (410, {}, [b""])
    for path in ("/pricing", "/nope", "/hidden", "/members", "/old"):
        site.get(path)
    assert site.recorded() == []
    assert counts(site)["removed"] == 1
    assert site.skipped() == {"gone": 4}


# -- forged removals ---------------------------------------------------------------

# (request target, what the app answers to it, the stored page it lands on)
FORGED = [
    ("/pricing?page=999", (404, {"Content-Type": HTML}, [html("No page")]), "/pricing"),
    ("/pricing?lang=de", (301, {"Location": "/de/pricing"}, [b""]), "/pricing"),
    ("/pricing?print=1", (200, {"Content-Type": HTML}, [NOINDEX]), "/pricing"),
    ("/pricing?utm_source=x", (404, {}, [b""]), "/pricing"),
    ("/nope/..", (404, {}, [b""]), "/"),
    ("/x/../pricing", (404, {}, [b""]), "/pricing"),
    ("/x/./../pricing", (410, {}, [b""]), "/pricing"),
    ("/x/%2E%2E/pricing", (404, {}, [b""]), "/pricing"),
    ("/pricing;jsessionid=1", (404, {}, [b""]), "/pricing"),
    ("/pricing/.", (404, {}, [b""]), "/pricing/"),
]


@pytest.mark.parametrize(
    ("wire", "answer", "target"), FORGED, ids=[r[0] for r in FORGED]
)
def test_a_forged_removal_removes_nothing(
    make: Make, wire: str, answer: Any, target: str
) -> None:
    """Each request below used to remove a listed page: its target is not the
    stored spelling, so whatever the app answers to it, the page stays listed
    and the refusal is counted (skipped.not_exact)."""
    site = make()
    ROUTES["/pricing"] = ROUTES["/pricing/"] = PRICING
    for path in ("/", "/pricing", "/pricing/"):
        assert site.fetch(path) == 200
    before = site.entries()
    assert sorted(before) == ["/", "/pricing", "/pricing/"]
    # The app answers the hostile request as given (the worst case: the very
    # stored page answers it), with no recent-pages cache to hide behind.
    site.middleware.recorder._recent.clear()
    path = unquote_to_bytes(wire.partition("?")[0]).decode()
    ROUTES[target] = ROUTES[path] = answer
    assert site.fetch(wire) == answer[0]
    assert site.entries() == before
    assert counts(site)["removed"] == 0
    assert counts(site)["skipped"] == {"not_exact": 1}


@pytest.mark.parametrize(
    ("wire", "answer", "target"), FORGED, ids=[r[0] for r in FORGED]
)
def test_the_stored_spelling_still_removes(
    make: Make, wire: str, answer: Any, target: str
) -> None:
    """The same answers at the stored spelling itself remove the page."""
    site = make()
    ROUTES["/pricing"] = ROUTES["/pricing/"] = PRICING
    assert site.fetch(target) == 200
    assert list(site.entries()) == [target]
    site.middleware.recorder._recent.clear()  # a noindex meta is read, not fresh
    ROUTES[target] = answer
    assert site.fetch(target) == answer[0]
    assert site.entries() == {}
    assert counts(site)["removed"] == 1


def test_percent_encoding_is_a_spelling_where_the_app_sees_it(make: Make) -> None:
    """/%70ricing and lower-case escapes reach an ASGI app as raw_path, another
    spelling: no removal. A WSGI server decodes them into PATH_INFO, so the
    app answered for /pricing itself: that removal is the page's own."""
    site = make()
    ROUTES["/pricing"] = PRICING
    ROUTES["/café"] = (200, {"Content-Type": HTML}, [html("Café")])
    for path in ("/pricing", "/caf%C3%A9"):
        assert site.fetch(path) == 200
    assert sorted(site.entries()) == ["/caf%C3%A9", "/pricing"]
    ROUTES["/pricing"] = ROUTES["/café"] = (404, {}, [b""])
    site.fetch("/%70ricing")
    site.fetch("/caf%c3%a9")
    if site.stack == "asgi":
        assert sorted(site.entries()) == ["/caf%C3%A9", "/pricing"]
        assert counts(site)["skipped"] == {"not_exact": 2}
    else:
        assert site.entries() == {}
    site.fetch("/pricing")
    site.fetch("/caf%C3%A9")
    assert site.entries() == {}


def test_a_route_query_page_is_removed_by_its_own_spelling(
    stack: str, routed: Make
) -> None:
    """A page kept with its route's parameter (/preview/x?page=2) is removed by
    exactly that target: not with another parameter on top, tracking ones
    included, nor with the kept ones spelled otherwise."""
    preview = "/preview/<slug>" if stack == "wsgi" else "/preview/{slug}"
    site = routed({"routes": {preview: {"query": ["page", "lang"]}}})
    site.get("/preview/x?page=2")
    site.get("/preview/x?lang=de&page=2")
    assert sorted(site.entries()) == ["/preview/x?lang=de&page=2", "/preview/x?page=2"]
    site.state["status"] = 404
    for wire in (
        "/preview/x?page=2&sort=new",
        "/preview/x?page=2&utm_source=news",
        "/preview/x?page=%32",
        "/preview/x?page=2&lang=de",
        "/preview/x?status=404&page=2",
    ):
        assert site.get(wire).status == 404
        assert len(site.entries()) == 2, wire
    assert counts(site)["skipped"] == {"not_exact": 5}
    site.get("/preview/x?page=2")
    site.get("/preview/x?lang=de&page=2")
    assert site.entries() == {}
    assert counts(site)["removed"] == 2


# -- dropped queries and lastmod -------------------------------------------------------


def test_a_dropped_query_never_moves_lastmod(make: Make) -> None:
    """/search?q=x, ?q=y... and /?alert=one, two: each variant's content is not
    the stored page's, so neither the fingerprint nor lastmod moves, whether the
    page was written by this process or found in the store; the stored
    spelling's own change still moves it."""
    site = make({"recheck_interval": 0})
    ROUTES["/search"] = (200, {"Content-Type": HTML}, [html("Search")])
    site.get("/search")
    site.get("/")
    before = site.entries()
    for n, wire in enumerate(
        ["/search?q=x", "/search?q=y", "/?alert=one", "/?alert=two"]
    ):
        path = wire.partition("?")[0]
        ROUTES[path] = (200, {"Content-Type": HTML}, [html(f"Results {wire}")])
        if n % 2:  # as if another process had written it
            site.middleware.recorder._recent.clear()
        assert site.get(wire).status == 200
        assert site.entries() == before, wire
    assert counts(site)["seen"] == {"query_dropped": 4}
    assert counts(site)["recorded"] == 2
    site.get("/search")
    after = site.entries()
    assert after["/search"].fingerprint != before["/search"].fingerprint
    assert after["/"] == before["/"]


def test_tracking_parameters_add_the_bare_page_but_never_change_it(
    make: Make,
) -> None:
    """/about?utm_source=news&gclid=1 adds /about, but an answer to it may
    print the parameters (a share link built from the request): a client
    sending new values would date the page at will. Its change is recorded
    at its next visit without them."""
    site = make({"recheck_interval": 0})
    site.get("/about?utm_source=news&utm_medium=mail&gclid=1&fbclid=2")
    before = site.entries()["/about"]
    for value in ("a", "b"):
        ROUTES["/about"] = (200, {"Content-Type": HTML}, [html(f"Shared as {value}")])
        site.get(f"/about?utm_source={value}")
        assert site.entries()["/about"] == before
    site.get("/about")
    assert site.entries()["/about"].fingerprint != before.fingerprint
    assert counts(site)["recorded"] == 2
    assert counts(site)["seen"] == {"query_dropped": 2}


def test_a_first_visit_with_a_dropped_query_adds_the_page(make: Make) -> None:
    """A page not stored is added by a visit with a dropped query (a stand-in);
    its stored spelling, visited next, is read at once (the stand-in is not
    fresh) and its own content replaces the stand-in's."""
    site = make()
    ROUTES["/search"] = (200, {"Content-Type": HTML}, [html("Results for x")])
    site.get("/search?q=x")
    stand_in = site.entries()["/search"]
    ROUTES["/search"] = (200, {"Content-Type": HTML}, [html("Search")])
    site.get("/search?q=y")  # the page is known now: nothing to write
    assert site.entries()["/search"] == stand_in
    site.get("/search")
    assert site.entries()["/search"].fingerprint != stand_in.fingerprint
    assert counts(site)["seen"] == {"query_dropped": 1}
    assert counts(site)["recorded"] == 2


def test_another_path_spelling_adds_but_never_changes(make: Make) -> None:
    """/about;jsessionid=1 lands on /about: on an empty store it adds it, on
    a stored page it changes nothing (seen.other_spelling). A page served to
    /x/../about does neither: the app routed the path as sent (a catch-all
    route answers /docs/../anything), not /about (bad_path)."""
    site = make({"recheck_interval": 0})
    ROUTES["/x/../about"] = ROUTES["/about;jsessionid=1"] = (
        200,
        {"Content-Type": HTML},
        [html("Something else")],
    )
    assert site.fetch("/x/../about") == 200
    assert site.entries() == {}
    assert site.fetch("/about;jsessionid=1") == 200
    first = site.entries()
    assert list(first) == ["/about"]
    site.get("/about")  # the stored spelling: its own content
    own = site.entries()
    assert own["/about"].fingerprint != first["/about"].fingerprint
    for wire in ("/x/../about", "/about;jsessionid=1"):
        site.middleware.recorder._recent.clear()
        site.fetch(wire)
        assert site.entries() == own
    assert counts(site)["seen"].get("other_spelling") == 1
    assert counts(site)["skipped"] == {"bad_path": 2}


# -- a real removal is forgotten at once ---------------------------------------------


@pytest.mark.slow
def test_a_removed_page_comes_back_at_once(make: Make) -> None:
    """After a removal at the stored spelling the recent-pages cache no longer
    holds the page fresh: the next 200 records it again, within the recheck
    interval, with a new lastmod (the first-seen one: a page first seen
    without a date has none)."""
    site = make({"recheck_interval": 3600, "lastmod_source": "first-seen"})
    site.get("/about")
    first = site.entries()["/about"]
    assert site.middleware.recorder.is_fresh("/about")
    saved = ROUTES["/about"]
    ROUTES["/about"] = (404, {}, [b""])
    site.get("/about")
    assert site.entries() == {}
    assert not site.middleware.recorder.is_fresh("/about")
    time.sleep(1.05)  # lastmod is to the second
    ROUTES["/about"] = saved
    site.get("/about")
    again = site.entries()["/about"]
    assert again.lastmod > first.lastmod
    assert counts(site)["seen"] == {} and counts(site)["recorded"] == 2


def test_a_removal_forgets_every_key_of_its_page(stack: str, routed: Make) -> None:
    """A page recorded through a tracking link (its own cache key) is recorded
    again at once after its removal, like the stored spelling."""
    preview = "/preview/<slug>" if stack == "wsgi" else "/preview/{slug}"
    site = routed({"routes": {preview: {"query": ["page"]}}, "recheck_interval": 3600})
    site.get("/preview/x?page=2&utm_source=news")
    assert list(site.entries()) == ["/preview/x?page=2"]
    site.state["status"] = 404
    site.get("/preview/x?page=2")
    assert site.entries() == {}
    site.state["status"] = 200
    site.get("/preview/x?page=2&utm_source=news")
    assert list(site.entries()) == ["/preview/x?page=2"]
    assert counts(site)["seen"] == {}


def test_recent_forgets_a_path_under_all_its_keys() -> None:
    prints = Prints("raw", "content")
    recent = Recent(60.0, size=3)
    recent.remember("/a?utm_source=x", prints, "/a")
    recent.remember("/a", prints, "/a")
    recent.remember("/b", prints)
    recent.forget("/a", "/a")
    assert recent.get("/a?utm_source=x") is None and recent.get("/a") is None
    assert list(recent.fresh) == ["/b"]
    recent.remember("/c", prints, fresh=False)
    assert recent.get("/c") == prints and "/c" not in recent.fresh
    recent.remember("/c?utm_source=x", prints, "/c")
    assert recent._keys == {"/c": {"/c?utm_source=x"}}
    for key in ("/d", "/e", "/f"):  # evicts /b and /c, and their paths
        recent.remember(key, prints)
    # Nothing is kept of the pages evicted; a page's own key is no spelling.
    assert recent._keys == {}
    recent.remember("/d?utm_source=y", prints, "/d")
    recent.forget("/d", "/d")
    assert recent.get("/d") is None and recent.get("/d?utm_source=y") is None
    assert recent._keys == {}


# -- empty segments --------------------------------------------------------------------


@pytest.mark.parametrize("wire", ["//admin/users", "/a//b", "/blog//", "/x/.//y"])
def test_paths_with_empty_segments_are_never_recorded(make: Make, wire: str) -> None:
    """An app that collapses slashes answers //admin/users as /admin/users:
    such a path is no page's and would pass the /admin/* exclude."""
    site = make()
    ROUTES[unquote_to_bytes(wire).decode()] = (200, {"Content-Type": HTML}, [html("A")])
    # Flask may merge the slashes (a redirect, or its own route): a removal
    # at such a path is refused alike.
    site.fetch(wire)
    assert site.entries() == {}
    # "admin" is excluded as a segment anywhere: a page there is refused
    # before its path is read; a removal (Flask's redirect to the merged
    # path) reaches the path check.
    reasons = {"excluded", "bad_path"} if "admin" in wire else {"bad_path"}
    skipped = counts(site)["skipped"]
    assert sum(skipped.values()) == 1 and set(skipped) <= reasons, skipped


# -- the tracking parameters -----------------------------------------------------------


def test_tracking_parameters() -> None:
    assert all(map(is_tracking, ["utm_source", "UTM_Campaign", "gclid", "fbclid"]))
    assert not any(map(is_tracking, ["page", "q", "utm", "source"]))
    assert untracked("page=2&utm_source=x&&gclid=1&q=a+b") == "page=2&q=a+b"
    assert untracked("utm%5Fsource=x") == ""
    assert only_tracking("utm_source=x&msclkid=1") and only_tracking("")
    assert not only_tracking("utm_source=x&ref=1")


# -- through a real server -------------------------------------------------------------

GUNICORN_APP = """
import os
from sitemap_middleware import SitemapMiddleware

def page(title, head=""):
    return (f"<!doctype html><html><head><title>{title}</title>{head}</head>"
            f"<body><main><h1>{title}</h1></main></body></html>").encode()

PAGES = {"/": page("Home"), "/pricing": page("Pricing"), "/about": page("About"),
         "/contact": page("Contact")}
HTML = [("Content-Type", "text/html; charset=utf-8")]

def app(environ, start_response):
    # Routes on PATH_INFO as given, as most WSGI routers do.
    path, query = environ["PATH_INFO"], environ["QUERY_STRING"]
    body = PAGES.get(path)
    if body is None or query == "page=999" or os.path.exists(path.strip("/") + ".gone"):
        start_response("404 Not Found", HTML)
        return [page("Not found")]
    if query == "lang=de":
        start_response("301 Moved Permanently", [("Location", "/de" + path)])
        return [b""]
    if query == "print=1":
        body = page("Print", '<meta name="robots" content="noindex">')
    start_response("200 OK", HTML)
    return [body]

app = SitemapMiddleware(app, {"base_url": "http://127.0.0.1", "store": STORE})
"""


def _raw_get(port: int, target: str) -> int:
    """Send ``GET target`` byte for byte (no client normalises it); the status."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Connection: close\r\n\r\n".encode("latin-1")
        )
        reply = b""
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply.split(b" ", 2)[1])


@pytest.mark.servers
@pytest.mark.slow
def test_forged_removals_through_gunicorn(tmp_path: Path) -> None:
    """Raw requests to a gunicorn worker: dot segments (plain and escaped), a
    dropped query (404, 301, noindex) and a matrix parameter remove nothing; the
    stored spelling answering 404 does."""
    uri = f"sqlite:///{tmp_path}/s.sqlite3"
    (tmp_path / "entry.py").write_text(
        f"STORE = {uri!r}\n" + textwrap.dedent(GUNICORN_APP)
    )
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        # One worker: its queue is written in order, so a page recorded after
        # the forged requests shows they were digested.
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", "1", "-b", f"127.0.0.1:{port}",
             "entry:app"],
            cwd=tmp_path,
            # This checkout's package, whichever one the interpreter has installed.
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])},
            stdout=output,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    store = open_store(uri)

    def wait_for(paths: set[str], present: bool) -> None:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if (store.known(paths) == paths) == present:
                return
            time.sleep(0.1)
        raise AssertionError(f"{paths} never {'stored' if present else 'removed'}")

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert _raw_get(port, "/") == 200
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert _raw_get(port, "/pricing") == 200
        wait_for({"/", "/pricing"}, present=True)
        forged = {
            "/x/../pricing": 404,
            "/x/%2E%2E/pricing": 404,
            "/x/%2e%2e/pricing": 404,
            "/nope/..": 404,
            "/pricing?page=999": 404,
            "/pricing?lang=de": 301,
            "/pricing?print=1": 200,
            "/pricing;jsessionid=1": 404,
        }
        assert {target: _raw_get(port, target) for target in forged} == forged
        for marker in ("/about", "/contact"):  # the second: the first's batch is done
            assert _raw_get(port, marker) == 200
            wait_for({marker}, present=True)
        assert store.known({"/", "/pricing"}) == {"/", "/pricing"}

        (tmp_path / "pricing.gone").touch()
        assert _raw_get(port, "/pricing") == 404
        wait_for({"/pricing"}, present=False)
        assert store.known({"/", "/about", "/contact"}) == {"/", "/about", "/contact"}
    finally:
        store.close()
        stop_server(process, 15)
        assert process.returncode in (0, -signal.SIGTERM), log.read_text()
