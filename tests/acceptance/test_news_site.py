"""A news site under a real server: gunicorn with two workers on SQLite, Redis
and PostgreSQL. Its articles are listed in /sitemap-news.xml with their
publication, date and title, schema-valid and read the same by a real sitemap
consumer; its other pages never are; a removed article leaves; and two days on
(the middleware's clock moved, in every worker) the articles age out."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.helpers import (
    HTTPClient,
    Story,
    free_port,
    gunicorn,
    news_stories,
    sitemap_urls,
    wait_until,
)

from sitemap_middleware import open_store
from sitemap_middleware.recording.sharing import NEWS_WATCH
from sitemap_middleware.render import w3c_datetime
from sitemap_middleware.sitemaps import NEWS_WINDOW

pytestmark = [pytest.mark.servers, pytest.mark.slow]

WORKERS = 2
HOUR = 3600

# The news site: /news/<slug> from articles.json (slug -> [title, published
# ISO time or null, and "json-ld" to declare it as a CMS does, in an @graph];
# a slug not there is 410), /about, /; each worker's
# middleware reads its clock's offset from the file "offset" (time injected).
APP = """
import html, json, os, time
from pathlib import Path
from flask import Flask, abort
from sitemap_middleware import SitemapMiddleware

HERE = Path(__file__).parent
app = Flask(__name__)

def page(title, head=""):
    title = html.escape(title)
    return (
        f'<!doctype html><html lang="en-GB"><head><title>{title}</title>'
        f'<meta property="og:site_name" content="The Daily">{head}</head>'
        f"<body><main><h1>{title}</h1><p>Words.</p></main></body></html>"
    )

@app.route("/")
def home():
    return page("Home")

@app.route("/about")
def about():
    return page("About us")

@app.route("/news/<slug>")
def article(slug):
    articles = json.loads((HERE / "articles.json").read_text())
    if slug not in articles:
        abort(410)
    title, published, *how = articles[slug]
    head = ""
    if published is not None and how == ["json-ld"]:
        graph = {"@graph": [{"@type": "NewsArticle", "datePublished": published}]}
        head = f'<script type="application/ld+json">{json.dumps(graph)}</script>'
    elif published is not None:
        head = f'<meta property="article:published_time" content="{published}">'
    return page(title, head)

middleware = SitemapMiddleware(app.wsgi_app, CONFIG)
app.wsgi_app = middleware

def clock():
    offset = HERE / "offset"
    return time.time() + (float(offset.read_text()) if offset.exists() else 0.0)

middleware.server.clock = clock
"""


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), timezone.utc).isoformat()


@pytest.fixture
def news_site(store_uri: str, tmp_path: Path) -> Iterator[tuple[str, Path, HTTPClient]]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config = {"base_url": base, "store": store_uri, "news": {"pages": ["/news/*"]}}
    # A site that has watched for news for three days: an undated article
    # first seen now appeared now.
    store = open_store(store_uri)
    try:
        since = {"": int(time.time() - 3 * 86_400)}
        store.set_setting(NEWS_WATCH, json.dumps(since))  # type: ignore[attr-defined]
    finally:
        store.close()
    (tmp_path / "articles.json").write_text("{}")
    with gunicorn(
        tmp_path, port, WORKERS, APP.replace("CONFIG", repr(config))
    ) as client:
        yield base, tmp_path, client


def test_articles_are_news_for_two_days(
    news_site: tuple[str, Path, HTTPClient],
) -> None:
    from usp.tree import sitemap_tree_for_homepage

    base, folder, client = news_site
    now = time.time()
    articles = {
        "fresh": ["Fresh & <new>", iso(now - HOUR)],
        "yesterday": ["Yesterday", iso(now - 30 * HOUR), "json-ld"],
        "undated": ["Undated", None],  # dated when first recorded
        "stale": ["Stale", iso(now - NEWS_WINDOW - HOUR)],
    }
    (folder / "articles.json").write_text(json.dumps(articles))
    # Each page a few times, so that both workers serve and record some.
    for _ in range(3):
        for path in ("/", "/about", *(f"/news/{slug}" for slug in articles)):
            assert client.get(path).status == 200
    recorded = time.time()
    expected = {f"{base}/news/{s}" for s in ("fresh", "yesterday", "undated")}
    wait_until(lambda: set(news_stories(client)) == expected, 15, "the news")
    stories = news_stories(client)
    published = w3c_datetime(datetime.fromisoformat(iso(now - HOUR)))
    assert stories[f"{base}/news/fresh"] == Story(
        "The Daily", "en", published, "Fresh & <new>"
    )
    declared = w3c_datetime(datetime.fromisoformat(iso(now - 30 * HOUR)))
    assert stories[f"{base}/news/yesterday"].published == declared  # in JSON-LD
    undated = datetime.fromisoformat(stories[f"{base}/news/undated"].published)
    assert now - 1 <= undated.timestamp() <= recorded
    # The stale article and the other pages are in the sitemap, not the news
    # (each worker's writer writes what it recorded in its own time).
    pages = {f"{base}/", f"{base}/about", f"{base}/news/stale", *expected}
    wait_until(lambda: pages <= set(sitemap_urls(client)), 15, "the sitemap")

    # A real consumer, from robots.txt: the same stories.
    tree = sitemap_tree_for_homepage(base + "/", use_known_paths=False)
    read = {
        page.url: (
            page.news_story.publication_name,
            page.news_story.publication_language,
            page.news_story.publish_date.timestamp(),
            page.news_story.title,
        )
        for page in tree.all_pages()
        if page.news_story is not None
    }
    assert read == {
        url: (
            s.name,
            s.language,
            datetime.fromisoformat(s.published).timestamp(),
            s.title,
        )
        for url, s in stories.items()
    }

    # A removed article leaves the news, whichever worker serves its 410.
    del articles["fresh"]
    (folder / "articles.json").write_text(json.dumps(articles))
    assert client.get("/news/fresh").status == 410
    expected.discard(f"{base}/news/fresh")
    wait_until(lambda: set(news_stories(client)) == expected, 15, "the removal")

    # 20 hours on, yesterday's article is past two days; the undated one not.
    (folder / "offset").write_text(str(20 * HOUR))
    assert set(news_stories(client)) == {f"{base}/news/undated"}
    # Two days on, nothing: a 404, and the index names no news sitemap.
    (folder / "offset").write_text(str(NEWS_WINDOW + HOUR))
    for _ in range(2 * WORKERS):  # every worker answers alike
        assert news_stories(client) == {}
        assert client.get("/sitemap-news.xml").status == 404
    assert expected <= set(sitemap_urls(client))  # still pages of the site
