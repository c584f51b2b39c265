"""The table of served documents (``sitemap_middleware.paths``) is the one source
of the middleware's own paths: what a row builds, the table matches back to it,
the policy refuses to record, both adapters answer with the row's media type
and the config keeps configured paths off; near misses stay where they were.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest
from support.sites import ROUTES, Site

from sitemap_middleware import Config, ConfigError
from sitemap_middleware.paths import DOCUMENTS, PART, SITE_MAP, Document
from sitemap_middleware.reasons import Skipped
from sitemap_middleware.recording.sharing import NEWS_WATCH
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

BASE = "http://localhost"
KEY = "a1b2c3d4-e5f6"
# Every document on: text sitemaps, the site map for people, llms.txt, the
# key file.
EVERY = {
    "text_sitemap": True,
    "html_sitemap": "/site-map",
    "llms_txt": True,
    "indexnow": {"key": KEY, "endpoint": "http://127.0.0.1:9/indexnow"},
    "news": {"pages": ["/*"], "name": "The Daily", "language": "en"},
}


def _config(**overrides: object) -> Config:
    return Config.from_mapping({"base_url": BASE, **EVERY, **overrides})


def _built(document: Document) -> Iterator[tuple[str, int]]:
    """Paths (with their query) the row builds, and the number each names."""
    if document.numbered:
        for number in (1, 7, 999_999_999):
            yield document.build(number), number
    elif document.query:
        for number in (1, 2, 40):
            yield document.build(number), number
    else:
        yield document.build(), 0


def test_the_table_has_every_document_once() -> None:
    documents = _config().documents
    assert [d.kind for d in documents.rows] == [d.kind for d in DOCUMENTS]
    assert len({d.kind for d in DOCUMENTS}) == len(DOCUMENTS)
    paths = {d.kind: d.build(1) for d in documents.rows}
    assert paths == {
        "index": "/sitemap.xml",
        "part": "/sitemap-1.xml.gz",
        "text-index": "/sitemap.txt",
        "text-part": "/sitemap-1.txt",
        "news": "/sitemap-news.xml",
        "robots": "/robots.txt",
        "site-map": "/site-map",
        "key-file": f"/{KEY}.txt",
        "llms": "/llms.txt",
    }
    # The options turn rows off: the text sitemaps, the news sitemap, the
    # page, the key file, llms.txt.
    plain = Config.from_mapping({"base_url": BASE}).documents
    assert [d.kind for d in plain.rows] == ["index", "part", "robots"]


def test_the_gate_is_as_short_as_it_was() -> None:
    """The adapters test every request against the gate: one prefix for all
    the sitemaps, and one each for the paths outside it."""
    assert Config.from_mapping({"base_url": BASE}).documents.gate == (
        "/sitemap",
        "/robots.txt",
    )
    assert _config().documents.gate == (
        "/sitemap",
        "/robots.txt",
        "/site-map",
        f"/{KEY}.txt",
        "/llms.txt",
    )
    assert _config(html_sitemap="/sitemap.html").documents.gate == (
        "/sitemap",
        "/robots.txt",
        f"/{KEY}.txt",
        "/llms.txt",
    )


def test_a_built_path_is_matched_back_and_never_recorded() -> None:
    config = _config()
    documents, policy = config.documents, Policy(config)
    for document in documents.rows:
        for built, number in _built(document):
            path, _, query = built.partition("?")
            assert path.startswith(documents.gate), built
            assert documents.claim(path) is document, built
            assert documents.match(path, query) == (document, number), built
            assert policy.path_skip(path) == Skipped.OWN_ENDPOINT, built


def test_the_site_map_pages_are_numbered_by_the_query() -> None:
    assert SITE_MAP.at("/m").build(1) == "/m"
    assert SITE_MAP.at("/m").build(2) == "/m?page=2"
    documents = _config().documents
    for bad in ("page=0", "page=02", "page=x", "page=1&page=2", "page=1000000000"):
        assert documents.match("/site-map", bad) is None, bad
    assert documents.match("/site-map", "other=1")[1] == 1  # type: ignore[index]


@pytest.mark.parametrize("document", [d for d in DOCUMENTS if d.template])
def test_no_configured_path_may_take_a_document_s(document: Document) -> None:
    """The site map page, llms.txt and the key file may take no path of the
    table, whichever options are on."""
    path = document.build(3)
    with pytest.raises(ConfigError, match="must not be one of the sitemap's own"):
        Config.from_mapping({"base_url": BASE, "html_sitemap": path})
    with pytest.raises(ConfigError, match="must not be one of the sitemap's own"):
        Config.from_mapping({"base_url": BASE, "llms_txt": {"path": path}})
    indexnow = {"key": KEY, "key_location": path}
    with pytest.raises(ConfigError, match="is a path the sitemap answers"):
        Config.from_mapping({"base_url": BASE, "indexnow": indexnow})


@pytest.fixture
def every(make: Callable[..., Site]) -> Site:
    """A site with every document on and one part of one page, an undated
    article on a site that has watched for news for three days."""
    store = MemoryStore()
    since = int(time.time()) - 3 * 86_400
    store.set_setting(NEWS_WATCH, json.dumps({"": since}))
    site = make({**EVERY, "store": store})
    assert site.get("/").status == 200
    site.recorded()
    return site


def test_both_adapters_answer_every_row_with_its_media_type(every: Site) -> None:
    config = every.middleware.config
    for document in config.documents.rows:
        path = document.build(1)
        for method in ("GET", "HEAD"):
            reply = every.request(method, path)
            assert reply.status == 200, (method, path)
            assert reply.headers["content-type"] == document.media_type, path
            noindex = reply.headers.get("x-robots-tag") == "noindex"
            assert noindex == document.noindex, path
    assert every.recorded() == ["/"]  # none of them recorded


# The app's own 404 page is HTML; the middleware's 404 is plain text.
APP = "text/html; charset=utf-8"
OWN = "text/plain; charset=utf-8"


@pytest.mark.parametrize(
    ("path", "answered_by"),
    [
        # A number that is none: the middleware's 404, the app never asked.
        ("/sitemap-0.xml.gz", OWN),
        ("/sitemap-01.xml.gz", OWN),
        ("/sitemap-.xml.gz", OWN),
        ("/sitemap-01.txt", OWN),
        ("/sitemap-x.txt", OWN),
        # Anything else is the app's: another suffix, a slash more, a case.
        ("/sitemap-1.xml", APP),
        ("/sitemap-1.xml.gz/extra", APP),
        ("/sitemap.xml/", APP),
        ("/sitemap.txt/", APP),
        ("/Sitemap.xml", APP),
        ("/SITEMAP.XML", APP),
        ("/sitemap-1.XML.GZ", APP),
        ("/sitemap-1.TXT", APP),
        ("/ROBOTS.TXT", APP),
        ("/site-map/", APP),
        ("/llms.txt/", APP),
        ("/LLMS.txt", APP),
        ("/Site-Map", APP),
        (f"/{KEY.upper()}.txt", APP),
        ("/sitemaps", APP),
    ],
)
def test_near_misses_stay_where_they_were(
    every: Site, path: str, answered_by: str
) -> None:
    reply = every.get(path)
    assert reply.status == 404
    assert reply.headers["content-type"] == answered_by
    own = Policy(every.middleware.config).is_own_path(path)
    assert own == (answered_by == OWN)


def test_an_app_page_under_the_gate_is_recorded(make: Callable[..., Site]) -> None:
    """A path that starts as the sitemaps do but is none of them is a page."""
    ROUTES["/sitemaps-guide"] = ROUTES["/about"]
    try:
        site = make(EVERY)
        assert site.get("/sitemaps-guide").status == 200
        assert site.recorded() == ["/sitemaps-guide"]
    finally:
        del ROUTES["/sitemaps-guide"]


def test_the_index_lists_each_part_at_the_row_s_path(every: Site) -> None:
    index = every.get("/sitemap.xml").body.decode()
    assert f"<loc>{BASE}{PART.build(1)}</loc>" in index
