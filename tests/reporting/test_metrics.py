"""The Prometheus collector: the site-wide counters and the health figures on a
fresh registry, read back through prometheus_client's own text parser; the
health figures kept for a while, made off the scrape, and a store outage that
leaves a scrape answering; with several ``sites``, every site's figures from one
collector, each series labelled by its site, and one site's series as they were.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.helpers import Bare
from support.sites import Site, make_site
from werkzeug.test import Client

from sitemap_middleware import Entry, SitemapCollector, SitemapMiddleware, open_store
from sitemap_middleware.stores.contract import Visit
from sitemap_middleware.stores.memory import MemoryStore

prometheus_client = pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

BASE = "https://www.example.com"
DAY = 86_400
NOW = int(time.time())
ROOT = Path(__file__).resolve().parents[2]


def _at(days: float) -> datetime:
    return datetime.fromtimestamp(NOW - days * DAY, timezone.utc)


def _scrape(
    collector: SitemapCollector,
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of one scrape: (name, sorted labels) -> value."""
    registry = prometheus_client.CollectorRegistry()
    registry.register(collector)
    text = prometheus_client.generate_latest(registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _page(environ: dict[str, object], start_response: object) -> list[bytes]:
    path = environ["PATH_INFO"]
    if path == "/missing":
        start_response("404 Not Found", [("Content-Type", "text/html")])  # type: ignore[operator]
        return [b"<title>Not found</title>"]
    start_response("200 OK", [("Content-Type", "text/html")])  # type: ignore[operator]
    return [f"<html><head><title>{path}</title></head></html>".encode()]


@pytest.fixture
def middleware() -> Iterator[SitemapMiddleware]:
    store = MemoryStore()
    made = SitemapMiddleware(_page, {"base_url": BASE, "store": store})
    yield made
    made.close()


def test_the_site_wide_counters(middleware: SitemapMiddleware) -> None:
    client = Client(middleware)
    for path in ("/", "/a", "/b", "/missing", "/admin/x"):
        assert client.get(path, base_url=BASE).data  # read in full: recorded
    assert middleware.flush()
    samples = _scrape(SitemapCollector(middleware))
    assert samples[("sitemap_recorded_total", ())] == 3
    assert samples[("sitemap_removed_total", ())] == 0
    assert samples[("sitemap_skipped_total", (("reason", "excluded"),))] == 1
    assert samples[("sitemap_skipped_total", (("reason", "gone"),))] == 1
    assert samples[("sitemap_urls", (("section", "default"),))] == 3


def test_the_health_figures() -> None:
    store = MemoryStore()
    store.upsert([Entry("/", _at(1)), Entry("/a", _at(1)), Entry("/b", _at(400))])
    store.visited(
        [
            Visit("/", "google", NOW - DAY, 200),
            Visit("/a", "bing", NOW - 10 * DAY, 200),
            Visit("/", "", NOW, 200),
            Visit("/sitemap.xml", "google", NOW - 60, 200),
            Visit("/gone", "google", NOW - 60, 200),
        ]
    )
    samples = _scrape(SitemapCollector(store, {"base_url": BASE}))
    section = ("section", "default")
    assert samples[("sitemap_urls", (section,))] == 3
    fetched = "sitemap_fetched_urls"
    assert samples[(fetched, (("engine", ""), section, ("window", "7d")))] == 1
    assert samples[(fetched, (("engine", "google"), section, ("window", "7d")))] == 1
    assert samples[(fetched, (("engine", "bing"), section, ("window", "7d")))] == 0
    assert samples[(fetched, (("engine", ""), section, ("window", "30d")))] == 2
    assert samples[(fetched, (("engine", "bing"), section, ("window", "30d")))] == 1
    assert samples[("sitemap_never_fetched_urls", (section,))] == 1
    assert samples[("sitemap_stale_urls", (section,))] == 2
    assert samples[("sitemap_unlisted_fetched_urls", ())] == 1
    documents = ("sitemap_document_fetched_timestamp_seconds", (("engine", "google"),))
    assert samples[documents] == NOW - 60
    assert samples[("sitemap_lastmod_urls", (("age", "week"), section))] == 2
    assert samples[("sitemap_lastmod_urls", (("age", "older"), section))] == 1
    assert samples[("sitemap_health_timestamp_seconds", ())] == pytest.approx(
        time.time(), abs=60
    )


def test_a_store_alone_and_one_without_visits(tmp_path: Path) -> None:
    """A store given alone: its counters as the writers shared them, its
    crawl figures; a store that keeps no visits gives no crawl figures rather
    than false zeros."""
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    try:
        store.upsert([Entry("/", _at(1)), Entry("/a", _at(100))])
        store.add_counts({"recorded": 2, "excluded": 5})  # type: ignore[attr-defined]
        samples = _scrape(SitemapCollector(store, {"base_url": BASE}))
        assert samples[("sitemap_recorded_total", ())] == 2
        assert samples[("sitemap_skipped_total", (("reason", "excluded"),))] == 5
        never = ("sitemap_never_fetched_urls", (("section", "default"),))
        assert samples[never] == 2
        samples = _scrape(SitemapCollector(Bare(store), {"base_url": BASE}))
    finally:
        store.close()
    assert samples[("sitemap_urls", (("section", "default"),))] == 2
    assert (
        samples[("sitemap_lastmod_urls", (("age", "year"), ("section", "default")))]
        == 1
    )
    assert not [name for name, _ in samples if "fetched" in name or "stale" in name]


def test_the_health_figures_are_kept_for_max_age(middleware: SitemapMiddleware) -> None:
    clock = [float(NOW)]
    collector = SitemapCollector(middleware, max_age=300, clock=lambda: clock[0])
    middleware.store.upsert([Entry("/", _at(1))])
    urls = ("sitemap_urls", (("section", "default"),))
    assert _scrape(collector)[urls] == 1
    middleware.store.upsert([Entry("/a", _at(1))])
    clock[0] += 299
    assert _scrape(collector)[urls] == 1  # kept
    clock[0] += 1
    assert _scrape(collector)[urls] == 2  # made again


class _SlowStore(MemoryStore):
    """A store whose walk takes until the test lets it go on."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def entries(self, number: int) -> Iterator[Entry]:
        self.go.wait(10)
        yield from super().entries(number)


def test_a_scrape_does_not_wait_for_a_slow_walk() -> None:
    store = _SlowStore()
    store.upsert([Entry("/", _at(1))])
    collector = SitemapCollector(store, {"base_url": BASE}, wait=0.05)
    started = time.monotonic()
    first = _scrape(collector)
    assert time.monotonic() - started < 2
    assert not [name for name, _ in first if name == "sitemap_urls"]
    store.go.set()
    deadline = time.monotonic() + 10
    while collector.health() is None:  # each call waits 0.05 s for the walk
        assert time.monotonic() < deadline, "the walk never finished"
    assert _scrape(collector)[("sitemap_urls", (("section", "default"),))] == 1


def test_a_store_outage_leaves_the_scrape_answering(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = open_store("redis://127.0.0.1:1/0")  # nothing listens there
    try:
        collector = SitemapCollector(store, {"base_url": BASE}, wait=10)
        assert _scrape(collector) == {}
        assert _scrape(collector) == {}
    finally:
        store.close()
    warnings = [r for r in caplog.records if "health could not be read" in r.message]
    assert len(warnings) == 1  # said once, not on every scrape


def test_the_package_never_needs_prometheus_client() -> None:
    code = (
        "import sys; from sitemap_middleware import SitemapCollector, site_health; "
        "assert 'prometheus_client' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_a_scrape_with_sections_sites_and_crawls_together(tmp_path: Path) -> None:
    """The docs' config with every feature that adds to ``site_stats()`` at
    once: the counters are only counters (a section's dict is none), and
    ``sitemap_urls`` has one series per section, for each site (its ``site``
    label)."""
    config = {
        "sites": {
            "main": {"base_url": BASE},
            "blog": {"base_url": "https://blog.example.com"},
        },
        "store": f"sqlite:///{tmp_path / 'sites.sqlite3'}",
        "sections": {"posts": ["/posts/*"], "docs": ["/docs/*"]},
        # Crawls kept (the default): a claim from 127.0.0.1 is no crawler's.
        "crawlers": {"engines": ["google"]},
    }
    made = SitemapMiddleware(_page, config)
    try:
        client = Client(made)
        google = {"User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1)"}
        for path in ("/", "/posts/a", "/posts/b", "/docs/x", "/missing"):
            assert client.get(path, base_url=BASE, headers=google).data
        for path in ("/", "/posts/c"):
            assert client.get(path, base_url="https://blog.example.com").data
        assert made.flush()
        assert "sections" in made.site_stats()  # what the collector once merged
        scraped = _scrape(SitemapCollector(made, wait=10))
    finally:
        made.close()
    assert {dict(labels).get("site") for _, labels in scraped} == {"main", "blog"}
    main, blog = _of_site(scraped, "main"), _of_site(scraped, "blog")
    urls = {labels: n for (name, labels), n in main.items() if name == "sitemap_urls"}
    assert urls == {
        (("section", "default"),): 1,
        (("section", "docs"),): 1,
        (("section", "posts"),): 2,
    }
    assert main[("sitemap_recorded_total", ())] == 4
    assert main[("sitemap_skipped_total", (("reason", "gone"),))] == 1
    crawls = {
        dict(labels)["reason"]: n
        for (name, labels), n in main.items()
        if name == "sitemap_crawls_total"
    }
    assert sum(crawls.values()) == 5, crawls
    reasons = {dict(labels).get("reason") for _, labels in main}
    assert not reasons & {"sections", "posts", "docs", "default", "urls", "parts"}
    blog_urls = {
        labels: n for (name, labels), n in blog.items() if name == "sitemap_urls"
    }
    assert blog_urls == {(("section", "default"),): 1, (("section", "posts"),): 1}
    assert blog[("sitemap_recorded_total", ())] == 2


def _of_site(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], site: str
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples labelled ``site=site``, that label left out."""
    return {
        (name, tuple(label for label in labels if label[0] != "site")): value
        for (name, labels), value in samples.items()
        if ("site", site) in labels
    }


SITES = {
    "de": {"base_url": "https://example.de", "hosts": ["example.de"]},
    "fr": {"base_url": "https://example.fr", "hosts": ["example.fr"]},
}


@pytest.fixture
def two(stack: str) -> Iterator[Site]:
    """Two sites on one app, on either stack: two pages on ``de``, one on ``fr``."""
    site = make_site(stack, {"sites": SITES, "store": "memory://"})
    for path, host in (("/", "example.de"), ("/about", "example.de")):
        assert site.fetch(path, [("Host", host)]) == 200
    assert site.fetch("/xhtml", [("Host", "example.fr")]) == 200
    assert site.fetch("/missing", [("Host", "example.fr")]) == 404
    assert site.middleware.flush(5.0)
    yield site
    site.close()


def test_one_collector_gives_every_site_labelled(two: Site) -> None:
    """One collector for the middleware, one registry: each site's counters
    and health figures, every series labelled by its site (the first's too),
    each metric one family, no series twice: a valid exposition."""
    registry = prometheus_client.CollectorRegistry()
    registry.register(SitemapCollector(two.middleware, wait=10))
    text = prometheus_client.generate_latest(registry).decode()
    families = list(text_string_to_metric_families(text))
    names = [family.name for family in families]
    assert len(names) == len(set(names)), names
    pairs = [
        ((sample.name, tuple(sorted(sample.labels.items()))), sample.value)
        for family in families
        for sample in family.samples
    ]
    series = [key for key, _ in pairs]
    assert len(series) == len(set(series)), sorted(series)
    assert {dict(labels).get("site") for _, labels in series} == {"de", "fr"}
    samples = dict(pairs)
    de, fr = _of_site(samples, "de"), _of_site(samples, "fr")
    assert de[("sitemap_recorded_total", ())] == 2
    assert fr[("sitemap_recorded_total", ())] == 1
    assert fr[("sitemap_skipped_total", (("reason", "gone"),))] == 1
    assert ("sitemap_skipped_total", (("reason", "gone"),)) not in de
    assert de[("sitemap_urls", (("section", "default"),))] == 2
    assert fr[("sitemap_urls", (("section", "default"),))] == 1
    assert ("sitemap_health_timestamp_seconds", ()) in de
    assert ("sitemap_health_timestamp_seconds", ()) in fr
    for site in ("de", "fr"):  # each site's health kept, the first's the default
        health = SitemapCollector(two.middleware, wait=10).health(site)
        assert health is not None
        assert health.listed == (2 if site == "de" else 1)


def test_a_site_view_is_refused(two: Site) -> None:
    """The collector is the middleware's, every site in it: one of one
    site's view would repeat that site's series beside it. The default
    site's view is the middleware itself."""
    with pytest.raises(ValueError, match=r"SitemapCollector\(middleware\)"):
        SitemapCollector(two.middleware.site("fr"))
    assert two.middleware.site("de") is two.middleware
    with pytest.raises(KeyError):
        SitemapCollector(two.middleware, wait=10).health("it")


# One site's series as they were before sites were labelled: dashboards on
# them keep working. (family, type) in order; (sample, label names).
ONE_SITE_FAMILIES = [
    ("sitemap_recorded", "counter"),
    ("sitemap_removed", "counter"),
    ("sitemap_skipped", "counter"),
    ("sitemap_urls", "gauge"),
    ("sitemap_fetched_urls", "gauge"),
    ("sitemap_never_fetched_urls", "gauge"),
    ("sitemap_stale_urls", "gauge"),
    ("sitemap_unlisted_fetched_urls", "gauge"),
    ("sitemap_document_fetched_timestamp_seconds", "gauge"),
    ("sitemap_lastmod_urls", "gauge"),
    ("sitemap_health_timestamp_seconds", "gauge"),
]
ONE_SITE_SERIES = {
    ("sitemap_document_fetched_timestamp_seconds", ("engine",)),
    ("sitemap_fetched_urls", ("engine", "section", "window")),
    ("sitemap_health_timestamp_seconds", ()),
    ("sitemap_lastmod_urls", ("age", "section")),
    ("sitemap_never_fetched_urls", ("section",)),
    ("sitemap_recorded_total", ()),
    ("sitemap_removed_total", ()),
    ("sitemap_skipped_total", ("reason",)),
    ("sitemap_stale_urls", ("section",)),
    ("sitemap_unlisted_fetched_urls", ()),
    ("sitemap_urls", ("section",)),
}


@pytest.mark.parametrize(
    "config",
    [{"base_url": BASE}, {"sites": {"main": {"base_url": BASE}}}],
    ids=["base_url", "one-site"],
)
def test_one_site_keeps_its_series_unlabelled(config: dict[str, object]) -> None:
    made = SitemapMiddleware(_page, {**config, "store": "memory://"})
    try:
        client = Client(made)
        for path in ("/", "/a", "/missing", "/admin/x"):
            assert client.get(path, base_url=BASE).data
        assert made.flush()
        made.store.upsert([Entry("/old", _at(400))])
        made.store.visited(  # type: ignore[attr-defined]
            [
                Visit("/", "google", NOW - DAY, 200),
                Visit("/sitemap.xml", "google", NOW - 60, 200),
                Visit("/gone", "google", NOW - 60, 200),
            ]
        )
        registry = prometheus_client.CollectorRegistry()
        registry.register(SitemapCollector(made, wait=10))
        text = prometheus_client.generate_latest(registry).decode()
    finally:
        made.close()
    families = list(text_string_to_metric_families(text))
    assert [(family.name, family.type) for family in families] == ONE_SITE_FAMILIES
    series = {
        (sample.name, tuple(sorted(sample.labels)))
        for family in families
        for sample in family.samples
    }
    assert series == ONE_SITE_SERIES
