"""The news articles a writer publishes (``sharing.Newsroom``), on every store
kind: an article that declares no date is dated when the store first held its
page, and a page the store held before, removed since and back, is not an
article of today. What a store cannot tell is left out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.helpers import news_stories
from support.services import require_redis
from support.sites import BASE, HTML, ROUTES, Site, make_site
from support.store_kinds import KINDS, Fresh

from sitemap_middleware import Store
from sitemap_middleware.recording import sharing
from sitemap_middleware.recording.sharing import NEWS_WATCH
from sitemap_middleware.sitemaps import NEWS_WINDOW
from sitemap_middleware.stores.contract import Article

URL = "http://localhost"
NEWS = {"pages": ["/news/*"], "name": "The Daily", "language": "en"}
HOUR = 3600


def article(title: str) -> tuple[int, dict[str, str], list[bytes]]:
    """A news page that declares no publication date."""
    body = f"<!doctype html><html><head><title>{title}</title></head><body>x</body>"
    return 200, {"Content-Type": HTML}, [body.encode()]


@pytest.fixture(params=KINDS)
def watched(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[Store]:
    """A fresh store of each kind whose writers have watched the default
    section for news longer than a window: a new undated article is dated
    when the store first holds it."""
    store = fresh.store(request.param, tmp_path)
    since = int(time.time() - NEWS_WINDOW - HOUR)
    store.set_setting(NEWS_WATCH, json.dumps({"": since}))  # type: ignore[attr-defined]
    yield store
    store.close()


@pytest.fixture
def sites(watched: Store) -> Iterator[Callable[..., Site]]:
    """``sites(news=True)``: a WSGI site on the watched store, one a
    worker (with the ``news`` key, or without)."""
    made: list[Site] = []

    def build(news: bool = True) -> Site:
        config: dict[str, Any] = {**BASE, "store": watched, "recheck_interval": 0}
        if news:
            config["news"] = NEWS
        made.append(make_site("wsgi", config))
        return made[-1]

    yield build
    for site in made:
        site.close()


def gone_and_back(site: Site, path: str) -> None:
    """``path`` answers 404 once (its page removed), then as before."""
    served = ROUTES.pop(path)
    assert site.get(path).status == 404
    site.recorded()
    assert path not in site.entries()
    ROUTES[path] = served
    site.visit(path)


def test_an_undated_article_back_after_a_404_keeps_its_first_date(
    sites: Callable[..., Site],
) -> None:
    """Its article is kept while its page is away: back, it has the date it
    was first held at, not the time of its return."""
    site = sites()
    ROUTES["/news/u"] = article("Undated")
    site.visit("/news/u")
    assert set(news_stories(site)) == {f"{URL}/news/u"}
    # As if first held an hour ago (a date the return cannot have).
    earlier = Article("/news/u", int(time.time() - HOUR), "Undated", "en", "")
    site.store.publish([earlier], int(time.time()))
    first = news_stories(site)[f"{URL}/news/u"].published
    gone_and_back(site, "/news/u")
    assert news_stories(site)[f"{URL}/news/u"].published == first


def test_a_page_held_before_the_news_key_is_no_news_after_a_404(
    sites: Callable[..., Site],
) -> None:
    """Held before the key named it, it has no date to go by; removed and
    back it is the same old page, not an article of today."""
    ROUTES["/news/old"] = article("Old")
    sites(news=False).visit("/news/old")
    site = sites()
    site.visit("/news/old")
    assert news_stories(site) == {}
    gone_and_back(site, "/news/old")
    assert "/news/old" in site.entries()
    assert news_stories(site) == {}


def test_a_store_that_forgot_removals_dates_no_undated_article(
    sites: Callable[..., Site], watched: Store
) -> None:
    """Once the removals log no longer reaches back to the first removal, a
    page the store does not hold may be one it removed long ago: an undated
    one is left out. A page that declares its date is listed all the same."""
    watched.removals_kept = 1  # type: ignore[attr-defined]
    site = sites()
    ROUTES["/news/a"] = article("A")
    ROUTES["/news/b"] = article("B")
    site.visit("/news/a", "/news/b")
    del ROUTES["/news/a"], ROUTES["/news/b"]
    site.get("/news/a")
    site.get("/news/b")
    site.recorded()
    ROUTES["/news/new"] = article("New")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - HOUR))
    dated = f'<meta property="article:published_time" content="{stamp}">'
    body = f"<html><head><title>Dated</title>{dated}</head><body>x</body></html>"
    ROUTES["/news/dated"] = (200, {"Content-Type": HTML}, [body.encode()])
    site.visit("/news/new", "/news/dated")
    assert set(news_stories(site)) == {f"{URL}/news/dated"}


@pytest.mark.services
def test_a_store_that_lost_its_data_dates_no_undated_article_anew(
    fresh: Fresh, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Redis emptied under a running worker (a restart without persistence)
    took the watch of the news sections with it: to the store, an undated
    article the worker held before is a page first seen now, left out for a
    window, as a worker started afresh on it leaves it out."""
    import redis

    monkeypatch.setattr(sharing, "EPOCH_INTERVAL", 0.0)  # the watch looks each flush
    store = fresh.store("redis", tmp_path)
    since = int(time.time() - NEWS_WINDOW - HOUR)
    store.set_setting(NEWS_WATCH, json.dumps({"": since}))  # type: ignore[attr-defined]
    site = make_site(
        "wsgi", {**BASE, "store": store, "news": NEWS, "recheck_interval": 0}
    )
    try:
        ROUTES["/news/u"] = article("Undated")
        site.visit("/news/u")
        assert set(news_stories(site)) == {f"{URL}/news/u"}
        with redis.Redis.from_url(require_redis()) as client:
            client.delete(*client.keys(f"{store.prefix}*"))  # type: ignore[attr-defined]
        site.visit("/news/u")
        assert "/news/u" in site.entries()
        assert news_stories(site) == {}
    finally:
        site.close()
        store.close()
