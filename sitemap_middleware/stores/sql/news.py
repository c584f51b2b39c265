"""The news sitemap's articles (stores.contract.News): the last two windows'
(news_cutoff) beside the pages, at most NEWS_KEPT, read joined with the pages
held so that any removal takes an article out.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...sitemaps import MAX_NEWS
from ..contract import NEWS_KEPT, Article, news_cutoff
from .dialect import Tables

# The table, made when first opened by a release that has it; the index
# keeps the window's read and its trimming short.
SQLITE = """
CREATE TABLE IF NOT EXISTS sitemap_news (
    path TEXT PRIMARY KEY,
    published INTEGER NOT NULL,     -- epoch seconds, UTC
    title TEXT NOT NULL,
    language TEXT NOT NULL,         -- as <news:language>, "" for none
    name TEXT NOT NULL              -- og:site_name, "" for none
)
"""
SQLITE_INDEX = (
    "CREATE INDEX IF NOT EXISTS sitemap_news_published"
    " ON sitemap_news (published DESC, path)"
)
POSTGRES = """
CREATE TABLE IF NOT EXISTS {p}news (
    path text COLLATE "C" PRIMARY KEY,
    published bigint NOT NULL,      -- epoch seconds, UTC
    title text NOT NULL,
    language text NOT NULL,         -- as <news:language>, '' for none
    name text NOT NULL              -- og:site_name, '' for none
);
CREATE INDEX IF NOT EXISTS {p}news_published ON {p}news (published DESC, path)
"""
# published 0: the stored date stays (and a row without one goes at the trim).
_PUBLISH = (
    "INSERT INTO {p}news {rows} ON CONFLICT (path) DO UPDATE SET published = CASE"
    " WHEN excluded.published = 0 THEN {p}news.published ELSE excluded.published"
    " END, title = excluded.title, language = excluded.language,"
    " name = excluded.name"
)
_TRIM = (
    "DELETE FROM {p}news WHERE published < ? OR path IN (SELECT path FROM"
    " {p}news ORDER BY published DESC, path {skip} ?)"
)
# Only the pages the store holds: a removal takes the article out.
_READ = (
    "SELECT n.path, n.published, n.title, n.language, n.name FROM {p}news n"
    " JOIN {p}url u ON u.path = n.path WHERE n.published >= ?"
    " ORDER BY n.published DESC, n.path LIMIT ?"
)
_TYPES = ("text", "int8", "text", "text", "text")


class NewsMixin(Tables):
    def publish(self, articles: Iterable[Article], now: int) -> None:
        # By path: concurrent writers lock the rows in one order.
        rows = sorted({article.path: article for article in articles}.values())
        with self._writing() as conn:
            self.dialect.many(conn, _PUBLISH, _TYPES, rows)
            conn.execute(self.dialect.sql(_TRIM), (news_cutoff(now), NEWS_KEPT))

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        return [Article(*row) for row in self._select(_READ, (since, limit))]
