"""What the writers share through the store: the site's counters summed over
every worker (``site_stats()``), the re-check of stored pages against a changed
config (invariant 21), and the one warning that says why nothing is listed.
"""

from __future__ import annotations

import gzip
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.helpers import NS, locs, validate
from support.store_kinds import Fresh
from werkzeug.test import Client

from sitemap_middleware import StoreError
from sitemap_middleware.recording.hints import WARN_AFTER
from sitemap_middleware.stores.sqlite import SQLiteStore
from sitemap_middleware.wsgi import SitemapMiddleware

HTML = "text/html; charset=utf-8"


def page(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    path = environ["PATH_INFO"]
    if path.startswith("/data"):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]
    start_response("200 OK", [("Content-Type", HTML)])
    return [f"<html><head><title>{path}</title></head><body>{path}</body>".encode()]


def route_of(environ: dict[str, Any]) -> tuple[str, object] | None:
    """Pages under /blog/ are served by the route ``/blog/<slug>``."""
    if environ["PATH_INFO"].startswith("/blog/"):
        return "/blog/<slug>", None
    return None


class Worker:
    """One middleware around ``app`` (:func:`page` unless told) and a client
    for it."""

    def __init__(self, uri: Any, app: Any = page, **config: Any) -> None:
        self.middleware = SitemapMiddleware(
            app,
            {"base_url": "http://localhost", "store": uri, **config},
            find_route=route_of,
        )
        self.client = Client(self.middleware, use_cookies=False)

    def get(self, path: str, **headers: str) -> tuple[int, bytes]:
        response = self.client.get(path, headers=headers)
        body = response.get_data()
        response.close()
        return response.status_code, body

    def listed(self) -> list[str]:
        status, body = self.get("/sitemap.xml")
        if status == 404:
            return []
        found: list[str] = []
        for loc in locs(validate(body)):
            status, part = self.get(loc.removeprefix("http://localhost"))
            found += locs(validate(gzip.decompress(part)))
        return sorted(found)

    def close(self) -> None:
        self.middleware.close()


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path, fresh: Fresh) -> str:
    """A fresh store of each kind that several workers can share."""
    return fresh.uri(request.param, tmp_path)


@pytest.fixture
def workers() -> Iterator[Callable[..., Worker]]:
    made: list[Worker] = []

    def make(uri: str, app: Any = page, **config: Any) -> Worker:
        made.append(Worker(uri, app, **config))
        return made[-1]

    yield make
    for worker in made:
        worker.close()


# -- the site's counters ---------------------------------------------------------


def test_site_stats_sum_every_worker(
    store_uri: str, workers: Callable[..., Worker]
) -> None:
    one, two = workers(store_uri), workers(store_uri)
    one.get("/a")
    one.get("/data")
    two.get("/b")
    two.get("/c")
    two.get("/data")
    assert one.middleware.flush() and two.middleware.flush()
    # stats() stays per process.
    assert one.middleware.stats()["recorded"] == 1
    assert two.middleware.stats()["recorded"] == 2
    for worker in (one, two):
        site = worker.middleware.site_stats()
        assert site["recorded"] == 3
        assert site["skipped"] == {"not_html": 2}
        assert (site["urls"], site["parts"]) == (3, 1)
        assert set(site) >= set(worker.middleware.stats())
    # A flush sends only what is new: nothing is counted twice.
    assert one.middleware.flush() and two.middleware.flush()
    assert one.middleware.site_stats()["recorded"] == 3


def test_site_stats_include_what_is_not_sent_yet(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    # Between two sends, this process's own counts are never missing.
    one = workers(f"sqlite:///{tmp_path}/site.sqlite3")
    one.get("/data")
    assert one.middleware.site_stats()["skipped"] == {"not_html": 1}


class _Down(SQLiteStore):
    """The real SQLite store whose counters' writes fail while ``down``."""

    down = False

    def add_counts(self, counts: Any) -> None:
        if self.down:
            raise StoreError("SQLite: database is locked")
        super().add_counts(counts)


def test_counts_of_an_outage_are_sent_with_the_next_batch(tmp_path: Path) -> None:
    store = _Down(str(tmp_path / "site.sqlite3"))
    worker = Worker(store)  # type: ignore[arg-type]
    try:
        store.down = True
        worker.get("/a")
        worker.get("/data")
        assert not worker.middleware.flush()  # counts left unsent
        assert store.counts() == {}
        assert worker.middleware.stats()["errors"]["store"] >= 1
        store.down = False
        worker.get("/b")
        assert worker.middleware.flush()
        counts = store.counts()
        assert counts["recorded"] == 2 and counts["not_html"] == 1
        assert counts["store"] >= 1  # the failed send is itself counted
    finally:
        worker.close()


# -- the sitemap follows the config (invariant 21) --------------------------------

PAGES = ["/", "/about", "/blog/a", "/blog/b", "/blog/c", "/search?page=2"]
URLS = sorted(f"http://localhost{p}" for p in PAGES)


def record(uri: str, make: Callable[..., Worker], **config: Any) -> Worker:
    worker = make(uri, query=["page"], **config)
    for path in PAGES:
        worker.get(path)
    assert worker.middleware.flush()
    assert worker.listed() == URLS
    worker.close()
    return worker


def test_a_restart_with_a_new_exclude_prunes_stored_pages(
    store_uri: str, workers: Callable[..., Worker]
) -> None:
    record(store_uri, workers)
    again = workers(store_uri, query=["page"], exclude=["/blog/*"])
    assert again.middleware.flush()
    assert again.listed() == sorted(
        f"http://localhost{p}" for p in ("/", "/about", "/search?page=2")
    )
    stats = again.middleware.stats()
    assert stats["pruned"] == 3 and stats["rechecked"] == len(PAGES)


@pytest.mark.parametrize(
    ("config", "left"),
    [
        ({"include": ["/blog/*"]}, ["/blog/a", "/blog/b", "/blog/c"]),
        (
            {"routes": {"/blog/<slug>": {"exclude": True}}},
            ["/", "/about", "/search?page=2"],
        ),
        ({"query": []}, ["/", "/about", "/blog/a", "/blog/b", "/blog/c"]),
        # Caps keep the oldest added: what they would have refused as new.
        ({"max_urls": 2}, ["/", "/about"]),
        (
            {"routes": {"/blog/<slug>": {"max_urls": 1, "query": ["page"]}}},
            ["/", "/about", "/blog/a", "/search?page=2"],
        ),
    ],
)
def test_a_restart_drops_what_the_new_config_refuses(
    config: dict[str, Any],
    left: list[str],
    tmp_path: Path,
    workers: Callable[..., Worker],
) -> None:
    uri = f"sqlite:///{tmp_path}/site.sqlite3"
    record(uri, workers)
    again = workers(uri, **{"query": ["page"], **config})
    assert again.middleware.flush()
    assert again.listed() == sorted(f"http://localhost{p}" for p in left)
    assert again.middleware.stats()["pruned"] == len(PAGES) - len(left)


def written(worker: Worker) -> dict[str, tuple[str | None, ...]]:
    """Path -> (lastmod, changefreq, priority) as part 1 lists them."""
    status, body = worker.get("/sitemap-1.xml.gz")
    assert status == 200
    return {
        url.findtext("sm:loc", namespaces=NS).removeprefix("http://localhost"): tuple(
            url.findtext(f"sm:{name}", namespaces=NS)
            for name in ("lastmod", "changefreq", "priority")
        )
        for url in validate(gzip.decompress(body)).iterfind("sm:url", NS)
    }


def test_a_restart_with_new_defaults_rewrites_stored_entries(
    store_uri: str, workers: Callable[..., Worker]
) -> None:
    record(store_uri, workers)
    before = workers(store_uri, query=["page"])
    lastmods = {path: found[0] for path, found in written(before).items()}
    before.close()
    config = {
        "changefreq": "weekly",
        "routes": {"/blog/<slug>": {"priority": 0.8, "changefreq": "daily"}},
    }
    again = workers(store_uri, query=["page"], **config)
    assert again.middleware.flush()
    blog, other = ("daily", "0.8"), ("weekly", None)
    # lastmod does not move: the content did not change.
    assert written(again) == {
        path: (lastmods[path], *(blog if path.startswith("/blog/") else other))
        for path in PAGES
    }
    assert again.middleware.stats()["restyled"] == len(PAGES)


def test_an_unchanged_config_checks_nothing(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    uri = f"sqlite:///{tmp_path}/site.sqlite3"
    record(uri, workers)
    first = workers(uri, query=["page"], exclude=["/blog/*"])
    assert first.middleware.flush()
    assert first.middleware.stats()["rechecked"] == len(PAGES)
    first.close()
    again = workers(uri, query=["page"], exclude=["/blog/*"])
    again.get("/about")
    assert again.middleware.flush()
    stats = again.middleware.stats()
    assert "rechecked" not in stats and "pruned" not in stats


def test_workers_starting_together_agree(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    import threading

    uri = f"sqlite:///{tmp_path}/site.sqlite3"
    record(uri, workers)
    config = {"query": ["page"], "exclude": ["/about"], "max_urls": 4}
    racing = [workers(uri, **config) for _ in range(4)]
    start = threading.Barrier(len(racing))

    def go(worker: Worker) -> None:
        start.wait()
        assert worker.middleware.flush()

    threads = [threading.Thread(target=go, args=(w,)) for w in racing]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = sorted(
        f"http://localhost{p}" for p in ("/", "/blog/a", "/blog/b", "/blog/c")
    )
    assert all(worker.listed() == expected for worker in racing)


def test_a_rewrite_keeps_what_the_fragment_lists() -> None:
    # A rewrite is made from the stored fragment: images and the listed
    # alternates come back as they were written.
    from datetime import datetime, timezone

    from sitemap_middleware.model import Entry
    from sitemap_middleware.recording.recheck import Written, written
    from sitemap_middleware.render import fragment

    entry = Entry(
        "/a?x=1&y='",
        datetime(2024, 1, 1, tzinfo=timezone.utc),
        changefreq="daily",
        priority=0.5,
        alternates=(("de", "/de/a"), ("en", "/a?x=1&y='")),
        images=("/i.png", "https://cdn.example.com/j.png?a=1&b=2"),
    )
    plain = Entry("/b", datetime(2024, 1, 1, tzinfo=timezone.utc))
    run = fragment(entry, 1704067200) + fragment(plain, 1704067200)
    assert list(written([run[:50], run[50:]])) == [
        ("/a?x=1&y='", Written(("daily", 0.5), entry.alternates, entry.images)),
        ("/b", Written((None, None), (), ())),
    ]


# -- why nothing is listed --------------------------------------------------------


def vary_page(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    if environ["PATH_INFO"].startswith("/static/"):
        start_response("200 OK", [("Content-Type", "text/css")])
        return [b"p {}"]
    if environ["PATH_INFO"] == "/favicon.ico":
        start_response("404 Not Found", [("Content-Type", HTML)])
        return [b"no"]
    headers = [("Content-Type", HTML), ("Vary", "Cookie")]
    start_response("200 OK", headers)
    return [b"<html><head><title>t</title></head><body>v</body></html>"]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "sitemap_middleware" and r.levelno == logging.WARNING
    ]


@pytest.mark.parametrize(
    ("config", "headers", "reason", "setting"),
    [
        ({}, {"Host": "127.0.0.1:8000"}, "'host'", "'allowed_hosts'"),
        ({"exclude": ["/*"]}, {}, "'excluded'", "'exclude'"),
        ({"include": ["/nowhere/*"]}, {}, "'not_included'", "'include'"),
        ({}, {"Cookie": "session=abc"}, "'session'", "'session_cookies'"),
    ],
)
def test_one_warning_names_the_setting_when_nothing_gets_through(
    config: dict[str, Any],
    headers: dict[str, str],
    reason: str,
    setting: str,
    caplog: pytest.LogCaptureFixture,
    workers: Callable[..., Worker],
) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    worker = workers("memory://", **config)
    for n in range(WARN_AFTER + 5):
        worker.get(f"/page/{n}", **headers)
    status, body = worker.get("/sitemap.xml")
    assert status == 404 and b"site_stats()" in body and b"WARNING" in body
    worker.middleware.flush()
    worker.middleware.stats()
    (warning,) = warnings_of(caplog)  # once, however often it is checked
    assert reason in warning and setting in warning


def test_vary_on_every_page_is_named_beside_static_files_and_404s(
    caplog: pytest.LogCaptureFixture, workers: Callable[..., Worker]
) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    # Only there is Vary: Cookie private: session_cookies names the cookies
    # that sign a visitor in, and the requests carry another one.
    worker = workers("memory://", vary_page, session_cookies=["session"])
    for n in range(WARN_AFTER):
        worker.get(f"/post/{n}", Cookie="theme=dark")
        worker.get("/static/site.css")
        worker.get("/favicon.ico")
    assert worker.get("/sitemap.xml")[0] == 404
    (warning,) = warnings_of(caplog)
    assert "'vary'" in warning and "Vary: Cookie" in warning
    assert "harmless_cookies" in warning


@pytest.mark.parametrize(
    ("config", "header", "reason", "setting"),
    [
        ({"skip_set_cookie": True}, ("Set-Cookie", "csrftoken=x"), "'set_cookie'",
         "'skip_set_cookie'"),
        ({}, ("Cache-Control", "private, no-store"), "'private'", "Cache-Control"),
        ({}, ("Content-Encoding", "gzip"), "'encoded'", "compression middleware"),
    ],
)  # fmt: skip
def test_a_response_rule_that_skips_every_page_is_named(
    config: dict[str, Any],
    header: tuple[str, str],
    reason: str,
    setting: str,
    caplog: pytest.LogCaptureFixture,
    workers: Callable[..., Worker],
) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("200 OK", [("Content-Type", HTML), header])
        return [b"<html><head><title>t</title></head><body>p</body></html>"]

    worker = workers("memory://", app, **config)
    for n in range(WARN_AFTER):
        worker.get(f"/post/{n}")
    assert worker.get("/sitemap.xml")[0] == 404
    (warning,) = warnings_of(caplog)
    assert reason in warning and setting in warning


@pytest.mark.parametrize(
    ("head", "reason", "words"),
    [
        # A staging site that keeps search engines out...
        ('<meta name="robots" content="noindex">', "'noindex'", "noindex"),
        # ...or names production's pages as the canonical ones.
        (
            '<link rel="canonical" href="https://www.example.org/elsewhere">',
            "'canonical_other'",
            "canonical",
        ),
        # Inline styles and icons that fill the head past what is read.
        (f"<style>{'a{}' * 30_000}</style>", "'head_too_long'", "64 KiB"),
    ],
)
def test_a_body_rule_that_skips_every_page_is_named(
    head: str,
    reason: str,
    words: str,
    caplog: pytest.LogCaptureFixture,
    workers: Callable[..., Worker],
) -> None:
    """The rules the writer applies to the page's head count as much as
    the request's and the headers': every page kept out by one is a site
    whose sitemap stays empty, and the warning says which."""
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    body = f"<html><head><title>t</title>{head}</head><body>p</body></html>"

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("200 OK", [("Content-Type", HTML)])
        return [body.encode()]

    worker = workers("memory://", app)
    for n in range(WARN_AFTER):
        worker.get(f"/post/{n}")  # sent whole: read by the writer
    assert worker.middleware.flush()
    assert worker.get("/sitemap.xml")[0] == 404
    (warning,) = warnings_of(caplog)
    assert reason in warning and words in warning


def test_a_noindex_header_on_every_page_is_named(
    caplog: pytest.LogCaptureFixture, workers: Callable[..., Worker]
) -> None:
    """A staging site (or a proxy) sending X-Robots-Tag: noindex on every
    page: nothing is recorded, every page is counted gone, and the warning
    names the header."""
    caplog.set_level(logging.WARNING, "sitemap_middleware")

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response("200 OK", [("Content-Type", HTML), ("X-Robots-Tag", "noindex")])
        return [b"<html><head><title>t</title></head><body>p</body></html>"]

    worker = workers("memory://", app)
    for n in range(WARN_AFTER):
        worker.get(f"/post/{n}")
    assert worker.middleware.flush()
    assert worker.middleware.stats()["skipped"] == {"gone": WARN_AFTER}
    (warning,) = warnings_of(caplog)
    assert "'gone'" in warning and "X-Robots-Tag: noindex" in warning


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_the_warning_comes_from_the_writer_without_anyone_asking(
    stack: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base_url on another host skips every request before anything is
    queued: the writer starts with the first request all the same, and its
    periodic wake warns, with no flush(), stats() or sitemap request."""
    from sitemap_middleware.recording import writer

    monkeypatch.setattr(writer, "FLUSH_INTERVAL", 0.02)
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    config = {"base_url": "https://www.example.com", "store": "memory://"}
    if stack == "wsgi":
        middleware: Any = SitemapMiddleware(page, config)
        client = Client(middleware, use_cookies=False)

        def get(path: str) -> None:
            client.get(path, base_url="http://127.0.0.1:8000").close()

    else:
        from starlette.testclient import TestClient

        from sitemap_middleware.asgi import ASGISitemapMiddleware

        async def app(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"x"})

        middleware = ASGISitemapMiddleware(app, config)
        web = TestClient(middleware, base_url="http://127.0.0.1:8000")

        def get(path: str) -> None:
            web.get(path)

    try:
        for n in range(WARN_AFTER + 4):
            get(f"/post/{n}")
        deadline = time.monotonic() + 5
        while not warnings_of(caplog) and time.monotonic() < deadline:
            time.sleep(0.01)
        (warning,) = warnings_of(caplog)
        assert "'host'" in warning and "'allowed_hosts'" in warning
    finally:
        middleware.close()


def test_a_forked_child_starts_its_writer_with_its_first_request() -> None:
    """The fork hook gives each recorder a new writer: the first request in
    the child starts it, as in the parent, and the next ones pay nothing."""
    config = {"base_url": "http://localhost", "store": "memory://"}
    middleware = SitemapMiddleware(page, config)
    watcher, recorder = middleware.watcher, middleware.recorder
    try:
        policy_skip = middleware.policy.request_skip
        assert watcher.request_skip != policy_skip
        assert watcher.request_skip("GET", "/", "localhost", False, "") is None
        assert watcher.request_skip == policy_skip
        assert recorder._writer.started
        parents = recorder._writer
        recorder._reset()  # what the fork hook runs in a child
        parents.stop(1.0)
        assert not recorder._writer.started
        assert watcher.request_skip != policy_skip
        assert watcher.request_skip("HEAD", "/", "localhost", False, "") == "method"
        assert recorder._writer.started and watcher.request_skip == policy_skip
    finally:
        middleware.close()


def test_no_warning_once_a_page_is_recorded_or_too_few_were_seen(
    caplog: pytest.LogCaptureFixture, workers: Callable[..., Worker]
) -> None:
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    few = workers("memory://")
    for n in range(WARN_AFTER - 1):
        few.get(f"/page/{n}", Host="127.0.0.1")
    few.get("/sitemap.xml")
    mixed = workers("memory://")
    mixed.get("/a")
    assert mixed.middleware.flush()
    for n in range(WARN_AFTER * 2):
        mixed.get(f"/page/{n}", Host="127.0.0.1")
    mixed.middleware.flush()
    mixed.middleware.stats()
    assert warnings_of(caplog) == []


# -- sections ---------------------------------------------------------------------


def laid_out(uri: str) -> list[tuple[int, str, list[str], str]]:
    """Each part of the store: number, section, paths, version."""
    from sitemap_middleware import open_store

    with open_store(uri) as store:
        return [
            (
                info.number,
                info.section,
                [e.path for e in store.entries(info.number)],
                info.version,
            )
            for info in store.parts()
        ]


def stored_lastmods(uri: str) -> dict[str, object]:
    from sitemap_middleware import open_store

    with open_store(uri) as store:
        return {
            e.path: e.lastmod for p in store.parts() for e in store.entries(p.number)
        }


def test_a_restart_with_new_sections_moves_pages_and_nothing_else(
    store_uri: str, workers: Callable[..., Worker]
) -> None:
    """Sections are decided in the writer, by route or path glob; a change of
    ``sections`` re-checks the store: only the pages whose section changed
    move (lastmod kept, no other part touched), and a page recorded again
    finds its section's part."""
    sections = {"blog": ["/blog/<slug>"], "search": ["/search*"]}
    record(store_uri, workers, sections=sections)
    first = laid_out(store_uri)
    assert [(n, s, paths) for n, s, paths, _ in first] == [
        (1, "", ["/", "/about"]),
        (2, "blog", ["/blog/a", "/blog/b", "/blog/c"]),
        (3, "search", ["/search?page=2"]),
    ]
    lastmods = stored_lastmods(store_uri)
    # /about joins a new section; search pages go back to the default.
    regrouped = {"blog": ["/blog/<slug>"], "about": ["/about"]}
    again = workers(store_uri, query=["page"], sections=regrouped)
    assert again.middleware.flush()
    assert again.middleware.stats()["moved"] == 2
    after = laid_out(store_uri)
    assert [(n, s, paths) for n, s, paths, _ in after] == [
        (1, "", ["/", "/search?page=2"]),
        (2, "blog", ["/blog/a", "/blog/b", "/blog/c"]),
        (4, "about", ["/about"]),
    ]
    assert after[1][3] == first[1][3]  # the blog's part: the same version
    assert again.middleware.site_stats()["sections"] == {
        "default": {"urls": 2, "parts": 1},
        "blog": {"urls": 3, "parts": 1},
        "about": {"urls": 1, "parts": 1},
    }
    assert stored_lastmods(store_uri) == lastmods
    assert again.listed() == URLS
    # Pages recorded again stay in their section's part.
    for path in PAGES:
        again.get(path, **{"Cache-Control": "no-cache"})
    assert again.middleware.flush()
    assert [(n, s, p) for n, s, p, _ in laid_out(store_uri)] == [
        (n, s, p) for n, s, p, _ in after
    ]


def test_a_restart_without_sections_gathers_every_page_in_the_default_section(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    uri = f"sqlite:///{tmp_path}/site.sqlite3"
    record(uri, workers, sections={"blog": ["/blog/<slug>"]})
    assert [s for _, s, _, _ in laid_out(uri)] == ["", "blog"]
    lastmods = stored_lastmods(uri)
    again = workers(uri, query=["page"])
    assert again.middleware.flush()
    assert again.middleware.stats()["moved"] == 3
    assert [(n, s, p) for n, s, p, _ in laid_out(uri)] == [
        (1, "", ["/", "/about", "/search?page=2", "/blog/a", "/blog/b", "/blog/c"])
    ]
    assert stored_lastmods(uri) == lastmods
    assert "sections" not in again.middleware.site_stats()
