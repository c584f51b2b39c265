"""The news sitemap (``/sitemap-news.xml``, the ``news`` key): the articles of the
last two days with their publication, date and title, schema-valid, on both
stacks; hostile titles and names written as visible, escaped text; articles
age out, removed pages leave, other pages are never in it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest
from support.helpers import (
    NS,
    Reply,
    Story,
    news_stories,
    parse,
    sitemap_lastmods,
    sitemap_urls,
    validate,
)
from support.sites import HTML, ROUTES, Site
from werkzeug.http import parse_date

from sitemap_middleware import render
from sitemap_middleware.recording.sharing import NEWS_WATCH
from sitemap_middleware.sitemaps import NEWS_WINDOW, news_language
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.visible import visible

BASE_URL = "http://localhost"
HOUR = 3600
NEWS = {"pages": ["/news/*"]}


def article(
    title: str,
    published: float | None = None,
    lang: str | None = "en-GB",
    site_name: str | None = "The Daily",
    json_ld: object = None,
) -> tuple[int, dict[str, str], list[bytes]]:
    """A news page: its title, published time, language and site name (each
    left out when ``None``), and a JSON-LD script of ``json_ld``."""
    head = f"<title>{title}</title>"
    if published is not None:
        stamp = datetime.fromtimestamp(published, timezone.utc).isoformat()
        head += f'<meta property="article:published_time" content="{stamp}">'
    if json_ld is not None:
        script = json.dumps(json_ld)
        head += f'<script type="application/ld+json">{script}</script>'
    if site_name is not None:
        head += f'<meta property="og:site_name" content="{site_name}">'
    opening = "<html>" if lang is None else f'<html lang="{lang}">'
    body = f"<!doctype html>{opening}<head>{head}</head><body><p>Words.</p></body>"
    return 200, {"Content-Type": HTML}, [body.encode()]


def w3c(seconds: float) -> str:
    return render.w3c_datetime(datetime.fromtimestamp(int(seconds), timezone.utc))


def watched(days: float, sections: tuple[str, ...] = ("",)) -> MemoryStore:
    """A store whose writers have watched ``sections`` (the default one) for
    news for ``days``, as a site running that long has."""
    store = MemoryStore()
    since = int(time.time() - days * 86_400)
    store.set_setting(NEWS_WATCH, json.dumps(dict.fromkeys(sections, since)))
    return store


def later(site: Site, seconds: float) -> None:
    """Move the news sitemap's clock ``seconds`` on (time injected)."""
    site.middleware.server.clock = lambda: time.time() + seconds


def test_recent_articles_are_listed_and_age_out(make: Callable[..., Site]) -> None:
    """Articles published (or first recorded, on a site watched for news for
    a while) within two days are listed with their publication's name and
    language, date and title; older ones and pages that are no articles never
    are; two days on, they leave, the news sitemap answers 404 and the index
    no longer names it."""
    now = time.time()
    ROUTES["/news/fresh"] = article("Fresh", now - HOUR)
    ROUTES["/news/stale"] = article("Stale", now - NEWS_WINDOW - HOUR)
    ROUTES["/news/undated"] = article("Undated | The Daily")
    # Implausible dates are none: dated when first recorded.
    ROUTES["/news/future"] = article("Future", now + HOUR)
    ROUTES["/news/ancient"] = article("Ancient", 0)
    ROUTES["/news/untitled"] = (200, {"Content-Type": HTML}, [b"<p>no title</p>"])
    site = make({"news": NEWS, "store": watched(days=3)})
    assert site.get("/sitemap-news.xml").status == 404  # nothing yet
    site.visit("/", "/about", *[p for p in ROUTES if p.startswith("/news/")])
    stories = news_stories(site)
    assert set(stories) == {
        f"{BASE_URL}/news/{name}" for name in ("fresh", "undated", "future", "ancient")
    }
    assert stories[f"{BASE_URL}/news/fresh"] == Story(
        "The Daily", "en", w3c(now - HOUR), "Fresh"
    )
    undated = stories[f"{BASE_URL}/news/undated"]
    assert undated.title == "Undated | The Daily"
    for name in ("undated", "future", "ancient"):
        published = stories[f"{BASE_URL}/news/{name}"].published
        assert now - 1 <= datetime.fromisoformat(published).timestamp() <= time.time()
    # Every page of the news sitemap is one the parts list.
    assert set(stories) <= set(sitemap_urls(site))
    # A day on, all still there; two days after the newest, none.
    later(site, NEWS_WINDOW - 2 * HOUR)
    assert set(news_stories(site)) == set(stories)
    later(site, NEWS_WINDOW + 2 * HOUR)
    assert news_stories(site) == {}
    reply = site.get("/sitemap-news.xml")
    assert reply.status == 404 and reply.headers["cache-control"] == "no-store"
    assert f"{BASE_URL}/news/fresh" in sitemap_urls(site)  # still a page


def test_a_removed_article_leaves_the_news(make: Callable[..., Site]) -> None:
    """A page the sitemap no longer lists is not in the news sitemap either."""
    ROUTES["/news/a"] = article("A", time.time() - HOUR)
    ROUTES["/news/b"] = article("B", time.time() - HOUR)
    site = make({"news": NEWS})
    site.visit("/news/a", "/news/b")
    assert set(news_stories(site)) == {f"{BASE_URL}/news/a", f"{BASE_URL}/news/b"}
    ROUTES["/news/a"] = (410, {"Content-Type": HTML}, [b"gone"])
    assert site.get("/news/a").status == 410
    site.recorded()
    assert set(news_stories(site)) == {f"{BASE_URL}/news/b"}


def test_the_config_names_the_publication(make: Callable[..., Site]) -> None:
    """The key's name and language win over the page's; a page that gives
    neither (and a site that gives none) is left out, since Google requires
    both; a language the news sitemap cannot name is none."""
    when = time.time() - HOUR  # one instant: a second may pass meanwhile
    ROUTES["/news/bare"] = article("Bare", when, None, None)
    ROUTES["/news/chinese"] = article("Chinese", when, "zh-Hant-TW")
    ROUTES["/news/fictional"] = article("Klingon", when, "i-klingon")
    site = make({"news": NEWS})
    site.visit("/news/bare", "/news/chinese", "/news/fictional")
    assert news_stories(site) == {
        f"{BASE_URL}/news/chinese": Story("The Daily", "zh-tw", w3c(when), "Chinese")
    }
    named = make({"news": {**NEWS, "name": "Le Quotidien", "language": "fr"}})
    named.visit("/news/bare", "/news/chinese")
    assert {s.name for s in news_stories(named).values()} == {"Le Quotidien"}
    assert {s.language for s in news_stories(named).values()} == {"fr"}


def test_hostile_titles_and_names_are_visible_escaped_text(
    make: Callable[..., Site],
) -> None:
    """Markup, entities, control and invisible characters in a title or the
    site's name: the document stays valid and says the visible text."""
    title = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; \"q\" 'a' \x07\u202e\ufeffRLO"
    name = "Evil &lt;b&gt;News\x1b[31m &amp; Co"
    ROUTES["/news/hostile"] = article(title, time.time() - HOUR, "en", name)
    ROUTES["/news/long"] = article("word " * 400, time.time() - HOUR)
    site = make({"news": NEWS})
    site.visit("/news/hostile", "/news/long")
    stories = news_stories(site)
    hostile = stories[f"{BASE_URL}/news/hostile"]
    assert hostile.title == "<script>alert(1)</script> & \"q\" 'a' RLO"
    assert hostile.name == "Evil <b>News[31m & Co"
    assert len(stories[f"{BASE_URL}/news/long"].title) <= 200


def test_articles_by_section_and_route(routed: Callable[..., Site], stack: str) -> None:
    """The key names articles by the sections key's sections, and by route
    template in the framework's syntax, not only by path glob."""
    template = "/products/<path:slug>" if stack == "wsgi" else "/products/{slug:path}"
    site = routed(
        {
            "sections": {"posts": ["/blog/*"]},
            "news": {"sections": ["posts"], "pages": [template], "name": "Daily"},
            # The pages declare no date: news once their sections are watched.
            "store": watched(days=3, sections=("posts", "")),
        }
    )
    site.visit("/blog/hello", "/products/a/b", "/about")
    assert set(news_stories(site)) == {
        f"{BASE_URL}/blog/hello",
        f"{BASE_URL}/products/a/b",
    }


def test_validators_and_head(make: Callable[..., Site]) -> None:
    """ETag and Last-Modified like the other documents: a 304 to the ETag
    while nothing changed (not to If-Modified-Since alone: an article ages
    out without a date), another ETag once an article is added; HEAD has no
    body."""
    ROUTES["/news/a"] = article("A", time.time() - 2 * HOUR)
    ROUTES["/news/b"] = article("B", time.time() - HOUR)
    site = make({"news": NEWS})
    site.visit("/news/a")
    first = site.get("/sitemap-news.xml")
    assert first.status == 200 and first.headers["x-robots-tag"] == "noindex"
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert site.get("/sitemap-news.xml", {"If-None-Match": etag}).status == 304
    assert site.get("/sitemap-news.xml", {"If-Modified-Since": modified}).status == 200
    head = site.head("/sitemap-news.xml")
    assert (head.status, head.body) == (200, b"")
    assert head.headers["content-length"] == str(len(first.body))
    site.visit("/news/b")
    second = site.get("/sitemap-news.xml", {"If-None-Match": etag})
    assert second.status == 200 and second.headers["etag"] != etag
    index = validate(site.get("/sitemap.xml").body)
    dates = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in index.iterfind("sm:sitemap", NS)
    }
    # When it changed, as its Last-Modified says.
    changed = parse_date(second.headers["last-modified"])
    assert changed is not None
    assert dates[f"{BASE_URL}/sitemap-news.xml"] == w3c(changed.timestamp())


def test_an_article_that_ages_out_leaves_no_304(make: Callable[..., Site]) -> None:
    """An article that ages out changes the news sitemap, and the last one
    the index (which no longer names the news sitemap, and whose
    Last-Modified goes back): the old validators get the new documents."""
    now = time.time()
    ROUTES["/news/old"] = article("Old", now - NEWS_WINDOW + HOUR)
    ROUTES["/news/new"] = article("New", now - HOUR)
    site = make({"news": NEWS})
    site.visit("/news/old", "/news/new")
    news, index = site.get("/sitemap-news.xml"), site.get("/sitemap.xml")
    listed = f"{BASE_URL}/sitemap-news.xml".encode()
    assert listed in index.body

    def refetched(path: str, old: Reply) -> bytes:
        body = site.get(path).body
        for name, validator in (
            ("If-Modified-Since", "last-modified"),
            ("If-None-Match", "etag"),
        ):
            again = site.get(path, {name: old.headers[validator]})
            assert (again.status, again.body) == (200, body), (path, name)
        return body

    later(site, 2 * HOUR)  # "old" is out
    assert set(news_stories(site)) == {f"{BASE_URL}/news/new"}
    refetched("/sitemap-news.xml", news)
    later(site, NEWS_WINDOW)  # and "new": no news sitemap
    assert site.get("/sitemap-news.xml").status == 404
    assert listed not in refetched("/sitemap.xml", index)


def test_an_article_that_ages_out_dates_the_news_sitemap(
    make: Callable[..., Site],
) -> None:
    """An article that leaves the window changes the news sitemap then: its
    Last-Modified and its ``<lastmod>`` in the index are that moment (two days
    after its publication) when that is its latest change, and the index's
    ETag moves with the lastmod it shows (sitemaps.org: a sitemap's lastmod is
    when the file was modified)."""
    now = time.time()
    old = now - NEWS_WINDOW + HOUR
    ROUTES["/news/old"] = article("Old", old)
    ROUTES["/news/new"] = article("New", now - 2 * HOUR)
    site = make({"news": NEWS})
    site.visit("/news/old", "/news/new")
    before = site.get("/sitemap.xml")
    later(site, 2 * HOUR)  # "old" left an hour ago, after "new" and the visits
    assert set(news_stories(site)) == {f"{BASE_URL}/news/new"}
    left = w3c(int(old) + NEWS_WINDOW)
    news = site.get("/sitemap-news.xml")
    modified = parse_date(news.headers["last-modified"])
    assert modified is not None and w3c(modified.timestamp()) == left
    index = site.get("/sitemap.xml", {"If-None-Match": before.headers["etag"]})
    assert index.status == 200 and index.headers["etag"] != before.headers["etag"]
    dates = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in validate(index.body).iterfind("sm:sitemap", NS)
    }
    assert dates[f"{BASE_URL}/sitemap-news.xml"] == left


def test_a_page_known_before_news_was_on(make: Callable[..., Site]) -> None:
    """A page the store held before the news key named it, that declares no
    published time, has no date to list it under: it is not news. One that
    declares its time is listed."""
    store = MemoryStore()
    ROUTES["/news/old"] = article("Old")
    ROUTES["/news/dated"] = article("Dated", time.time() - HOUR)
    before = make({"store": store})
    before.visit("/news/old", "/news/dated")
    after = make({"store": store, "news": NEWS})
    after.visit("/news/old", "/news/dated")
    assert set(news_stories(after)) == {f"{BASE_URL}/news/dated"}


def test_an_undated_article_is_news_once_its_section_was_watched(
    make: Callable[..., Site],
) -> None:
    """An article that declares no date is news only if the store saw it
    appear: first held a whole news window after its section was first
    watched. A new store's first visits find old articles as much as new
    ones, so none of them is listed as published today; a dated one is."""
    now = time.time()
    ROUTES["/news/old"] = article("Old")  # 400 days old, says nothing
    ROUTES["/news/dated"] = article("Dated", now - HOUR)
    store = MemoryStore()
    site = make({"news": NEWS, "store": store})
    site.visit("/news/old", "/news/dated")
    assert set(news_stories(site)) == {f"{BASE_URL}/news/dated"}
    since = json.loads(store.setting(NEWS_WATCH) or "{}")
    assert set(since) == {""} and now - 5 <= since[""] <= time.time()
    # Another day: still within the first window, an undated page is no news.
    store.set_setting(NEWS_WATCH, json.dumps({"": int(now - 86_400)}))
    ROUTES["/news/second"] = article("Second")
    again = make({"news": NEWS, "store": store})
    again.visit("/news/second")
    assert set(news_stories(again)) == {f"{BASE_URL}/news/dated"}
    # Watched for longer than a window: a new undated article appeared when
    # the store first held it. Those held before stay out (no date to go by).
    store.set_setting(NEWS_WATCH, json.dumps({"": int(now - NEWS_WINDOW - HOUR)}))
    ROUTES["/news/third"] = article("Third")
    third = make({"news": NEWS, "store": store})
    third.visit("/news/third", "/news/second", "/news/old")
    stories = news_stories(third)
    assert set(stories) == {f"{BASE_URL}/news/dated", f"{BASE_URL}/news/third"}
    first_held = datetime.fromisoformat(stories[f"{BASE_URL}/news/third"].published)
    assert now - 1 <= first_held.timestamp() <= time.time()


def test_a_damaged_watch_setting_starts_the_watch_again(
    make: Callable[..., Site],
) -> None:
    """Another writer's unreadable value is no watch: from now on, as in a
    new store (never a date out of it)."""
    store = MemoryStore()
    store.set_setting(NEWS_WATCH, '{"": "yesterday", "x": [1]')
    ROUTES["/news/undated"] = article("Undated")
    site = make({"news": NEWS, "store": store})
    site.visit("/news/undated")
    assert news_stories(site) == {}
    since = json.loads(store.setting(NEWS_WATCH) or "{}")
    assert isinstance(since[""], int)


GRAPH = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "WebSite", "name": "The Daily"},
        {
            "@type": "NewsArticle",
            "headline": "Graph",
            "datePublished": "PUBLISHED",
            "dateModified": "MODIFIED",
        },
    ],
}


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), timezone.utc).isoformat()


@pytest.mark.parametrize(
    "shape",
    ["graph", "top", "array", "blog"],
)
def test_an_article_dated_in_json_ld(make: Callable[..., Site], shape: str) -> None:
    """The publication date a CMS writes in JSON-LD (``datePublished`` of a
    NewsArticle, Article or BlogPosting, at the top level, in an array, in an
    ``@graph``) dates the article as the meta tag does; a 400-day-old one is
    no news, never news of today; lastmod reads the same script's
    ``dateModified``."""
    now = time.time()
    recent, modified, old = now - 3 * HOUR, now - 2 * HOUR, now - 400 * 86_400

    def node(published: float) -> object:
        dates = {"datePublished": _stamp(published), "dateModified": _stamp(modified)}
        if shape == "graph":
            return {
                **GRAPH,
                "@graph": [GRAPH["@graph"][0], {"@type": "NewsArticle", **dates}],
            }
        if shape == "array":
            return [{"@type": "Organization"}, {"@type": "Article", **dates}]
        kind = "BlogPosting" if shape == "blog" else "NewsArticle"
        return {"@context": "https://schema.org", "@type": kind, **dates}

    ROUTES["/news/recent"] = article("Recent", json_ld=node(recent))
    ROUTES["/news/old"] = article("Old", json_ld=node(old))
    site = make({"news": NEWS})  # a new store: no date taken from first sight
    site.visit("/news/recent", "/news/old")
    stories = news_stories(site)
    assert set(stories) == {f"{BASE_URL}/news/recent"}
    assert stories[f"{BASE_URL}/news/recent"].published == w3c(recent)
    lastmods = sitemap_lastmods(site)
    assert lastmods[f"{BASE_URL}/news/recent"] == w3c(modified)


def test_the_meta_tag_comes_before_json_ld(make: Callable[..., Site]) -> None:
    """Both declared: the meta tag's date, as for lastmod; of several
    JSON-LD dates the earliest plausible (a page's WebPage and its Article)."""
    now = time.time()
    both = {"@type": "NewsArticle", "datePublished": _stamp(now - 5 * HOUR)}
    ROUTES["/news/both"] = article("Both", now - HOUR, json_ld=both)
    graph = {
        "@graph": [
            {"@type": "WebPage", "datePublished": _stamp(now - 4 * HOUR)},
            {"@type": "Article", "datePublished": _stamp(now - 6 * HOUR)},
            {"@type": "Article", "datePublished": "not a date"},
            {"@type": "Article", "datePublished": _stamp(now + HOUR)},
        ]
    }
    ROUTES["/news/graph"] = article("Graph", json_ld=graph)
    site = make({"news": NEWS})
    site.visit("/news/both", "/news/graph")
    stories = news_stories(site)
    assert stories[f"{BASE_URL}/news/both"].published == w3c(now - HOUR)
    assert stories[f"{BASE_URL}/news/graph"].published == w3c(now - 6 * HOUR)


def test_off_by_default(site: Site) -> None:
    """Without the key: no news sitemap, the app's own path."""
    site.visit("/")
    assert site.get("/sitemap-news.xml").status == 404
    assert all("news" not in loc for loc in sitemap_urls(site))


# -- rendering ----------------------------------------------------------------


def _document(*urls: str, schema: bool = False) -> Any:
    return validate(render.news_urlset(list(urls), schema))


@pytest.mark.parametrize("schema", [False, True])
def test_rendered_news_is_schema_valid(schema: bool) -> None:
    origin = render.escape("https://example.com/a&b")
    url = render.news_url("/x?a=1&b='2'", 1_700_000_000, "T", "zh-cn", "N", origin)
    root = _document(url, schema=schema)
    assert root.findtext("sm:url/sm:loc", namespaces=NS) == (
        "https://example.com/a&b/x?a=1&b='2'"
    )
    assert root.findtext("sm:url/news:news/news:publication_date", namespaces=NS) == (
        "2023-11-14T22:13:20+00:00"
    )


@pytest.mark.parametrize(
    "hostile",
    [
        "<b>bold</b> & <!-- c --> ]]> <![CDATA[x]]>",
        "\x00\x01\x08\x0b\x0c\x1f\x7f\x85 controls",
        "\ud800 lone surrogate",
        "\ufffe\uffff nonchars \U0010ffff",
        "\u200b\u200e\u202e\u2066 invisible",
        "x" * 5000,
        "emoji 🚀 and 中文",
    ],
)
def test_hostile_text_renders_valid_xml(hostile: str) -> None:
    """Whatever a store hands back as a title or name, the document is valid
    XML that reads back as the visible text."""
    url = render.news_url(
        "/a", 1_700_000_000, hostile, "en", hostile, "https://example.com"
    )
    root = _document(url)
    title = root.findtext("sm:url/news:news/news:title", namespaces=NS)
    assert title == visible(hostile) and title


@pytest.mark.parametrize(
    ("title", "language", "name"),
    [
        ("", "en", "N"),
        ("\x07", "en", "N"),
        ("T", "en", " "),
        ("T", "EN", "N"),
        ("T", "en-GB", "N"),
        ("T", "english", "N"),
        ("T", "", "N"),
    ],
)
def test_unlistable_articles_are_refused(title: str, language: str, name: str) -> None:
    with pytest.raises(ValueError):
        render.news_url("/a", 1_700_000_000, title, language, name, "http://x")


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("en", "en"),
        ("en-GB", "en"),
        ("EN_us", "en"),
        ("fil", "fil"),
        ("zh-Hans", "zh-cn"),
        ("zh-CN", "zh-cn"),
        ("zh-Hant-HK", "zh-tw"),
        ("zh-TW", "zh-tw"),
        ("zh", None),
        ("x-default", None),
        ("i-klingon", None),
        ("", None),
        ("e", None),
        ("<en>", None),
    ],
)
def test_news_language(tag: str, language: str | None) -> None:
    """A page's <html lang> as <news:language>: ISO 639 codes, Chinese by
    script or region, nothing for what the news sitemap cannot name."""
    assert news_language(tag) == language


def test_the_index_lists_the_news_sitemap_last() -> None:
    from sitemap_middleware.model import PartInfo

    part = PartInfo.from_row("e", 1, 1, 0, 1, 1_700_000_000)
    index = render.sitemapindex(
        "http://x", [part], news=datetime(2026, 1, 2, tzinfo=timezone.utc)
    )
    root = parse(index.encode())
    validate(index.encode())
    assert [s.findtext("sm:loc", namespaces=NS) for s in root] == [
        "http://x/sitemap-1.xml.gz",
        "http://x/sitemap-news.xml",
    ]
