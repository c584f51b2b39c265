"""News (stores.base): the recent articles of the pages held, bounded."""

from __future__ import annotations

from collections.abc import Callable

from support.stored import T0

from sitemap_middleware import Entry, Store
from sitemap_middleware.sitemaps import MAX_NEWS, NEWS_WINDOW
from sitemap_middleware.stores.contract import NEWS_KEPT, Article, News

CAPABILITIES = (News,)


NOW = int(T0.timestamp()) + 10 * 86400


HOUR = 3600


def _article(path: str, published: int, title: str = "T") -> Article:
    return Article(path, published, title, "en", "The Daily")


def test_news_keeps_the_recent_articles_of_held_pages(
    make_store: Callable[..., Store],
) -> None:
    """Articles of the last two days, newest first, only while their page is
    held; a title, language and name written again replace the stored ones."""
    store = make_store()
    store.upsert([Entry(p, T0) for p in ("/a", "/b", "/c", "/old")])
    store.publish(
        [
            _article("/a", NOW - HOUR),
            _article("/b", NOW - 2 * HOUR),
            _article("/c", NOW - HOUR, "C & <co>"),
            _article("/old", NOW - 2 * NEWS_WINDOW - 1),  # too old: dropped at once
            _article("/unheld", NOW - HOUR),  # no such page: never listed
        ],
        NOW,
    )
    since = NOW - NEWS_WINDOW
    assert [a.path for a in store.news(since)] == ["/a", "/c", "/b"]
    assert store.news(since)[1] == Article(
        "/c", NOW - HOUR, "C & <co>", "en", "The Daily"
    )
    assert [a.path for a in store.news(since, 2)] == ["/a", "/c"]
    assert store.news(NOW - HOUR + 1) == []
    store.publish([Article("/a", NOW - 3 * HOUR, "New", "fr", "Le Quotidien")], NOW)
    assert store.news(since)[-1] == Article(
        "/a", NOW - 3 * HOUR, "New", "fr", "Le Quotidien"
    )
    # A removed page leaves the news; back, so is its article while recent.
    store.remove(["/c"])
    assert [a.path for a in store.news(since)] == ["/b", "/a"]
    store.upsert([Entry("/c", T0)])
    assert [a.path for a in store.news(since)] == ["/c", "/b", "/a"]
    # Two days on, the articles age out: the read asks from a later time.
    # Kept a window more (the newest past the window dates the news
    # sitemap's change), a write two windows on drops them.
    later = NOW + NEWS_WINDOW
    assert store.news(later - NEWS_WINDOW) == []
    store.publish([_article("/b", later - 5)], later)
    assert [a.path for a in store.news(later - NEWS_WINDOW)] == ["/b"]
    assert [a.path for a in store.news(0)] == ["/b", "/c", "/a"]
    store.publish([], NOW + 2 * NEWS_WINDOW)
    store.upsert([Entry("/a", T0)])
    assert [a.path for a in store.news(0)] == ["/b"]  # /a's row is gone


def test_news_without_a_date_keeps_the_stored_one(
    make_store: Callable[..., Store],
) -> None:
    """An article written with ``published`` 0 (a page held before it was
    known as an article) keeps the date stored and takes the rest; without
    one stored it is not kept."""
    store = make_store()
    store.upsert([Entry("/a", T0), Entry("/b", T0)])
    store.publish([_article("/a", NOW - HOUR, "First")], NOW)
    store.publish([_article("/a", 0, "Second"), _article("/b", 0)], NOW)
    assert store.news(0) == [Article("/a", NOW - HOUR, "Second", "en", "The Daily")]
    # Its page removed and back: the article, kept meanwhile, keeps its date
    # (an undated page the store held before is never dated anew).
    store.remove(["/a"])
    store.upsert([Entry("/a", T0)])
    store.publish([_article("/a", 0, "Third")], NOW)
    assert store.news(0) == [Article("/a", NOW - HOUR, "Third", "en", "The Daily")]


def test_news_is_bounded(make_store: Callable[..., Store]) -> None:
    """At most NEWS_KEPT articles are kept, the newest."""
    store = make_store()
    extra = 3
    count = NEWS_KEPT + extra
    store.upsert([Entry(f"/{n}", T0) for n in range(count)])
    store.publish([_article(f"/{n}", NOW - count + n) for n in range(count)], NOW)
    kept = store.news(0, count)
    assert len(kept) == NEWS_KEPT
    assert kept[0].path == f"/{count - 1}" and kept[-1].path == f"/{extra}"
    assert len(store.news(0)) == MAX_NEWS


def test_news_text_round_trips(make_store: Callable[..., Store]) -> None:
    """Titles and names hold any text: quotes, markup, non-ASCII, emoji."""
    store = make_store()
    store.upsert([Entry("/a", T0)])
    title = "Ünïcode \"quotes\" 'and' <b>markup</b> & 🚀 — 你好"
    store.publish([Article("/a", NOW, title, "zh-tw", '名字 & "Co"')], NOW)
    assert store.news(0) == [Article("/a", NOW, title, "zh-tw", '名字 & "Co"')]
