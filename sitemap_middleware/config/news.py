"""The ``news`` key: which pages are news articles, listed in
``/sitemap-news.xml`` while recent, and the publication they appear in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..sections import Section, Sections
from ..sitemaps import is_news_language
from ..visible import visible
from .checks import known, line, strings


@dataclass(frozen=True, slots=True)
class NewsOptions:
    """The ``news`` key: which pages are news articles, listed in
    ``/sitemap-news.xml`` while recent, and the publication they appear in."""

    pages: Section
    """The route templates and path globs of the articles."""
    sections: frozenset[str] = frozenset()
    """The sections (the ``sections`` key) whose pages are articles."""
    name: str | None = None
    """The publication's name (``None``: each page's ``og:site_name``)."""
    language: str | None = None
    """Its ``<news:language>`` (``None``: each page's ``<html lang>``)."""

    def holds(self, sections: Sections, path: str, route: str | None) -> bool:
        """Whether the page at ``path`` served by ``route`` is an article."""
        if self.pages.holds(path.partition("?")[0], route):
            return True
        return bool(self.sections) and sections.of(path, route) in self.sections


_NEWS_KEYS = dict.fromkeys(("pages", "sections", "name", "language"))


def news(key: str, value: Any) -> NewsOptions | None:
    expected = (
        "a dict with 'pages' (route templates and path globs of the articles,"
        " such as ['/news/<slug>', '/20*']) and/or 'sections' (names of the"
        " 'sections' key), and optionally 'name' (the publication's name) and"
        " 'language' (an ISO 639 code such as 'en', or 'zh-cn' / 'zh-tw')"
    )
    if value is None or value is False:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    known(value, _NEWS_KEYS, f"unknown key {{!r}} in {key!r}")
    pages = value.get("pages", [])
    pages = strings(f"{key}.pages", [pages] if isinstance(pages, str) else pages)
    for pattern in pages:
        if not pattern.startswith("/"):
            raise ConfigError(
                f"'{key}.pages': {pattern!r} must start with '/' (a route"
                " template such as '/news/<slug>' or a path glob such as"
                " '/news/*')"
            )
    sections = value.get("sections", [])
    named = strings(
        f"{key}.sections", [sections] if isinstance(sections, str) else sections
    )
    if not pages and not named:
        raise ConfigError(f"{key!r} names no articles; it must be {expected}")
    name = value.get("name")
    if name is not None:
        name = line(f"{key}.name", name)
        if visible(name) != name:
            raise ConfigError(
                f"'{key}.name' must be visible text (no control or invisible"
                f" characters, single spaces), got {name!r}"
            )
    language = value.get("language")
    # Google News: "zh-cn" or "zh-tw" for Chinese, never "zh" alone.
    if language is not None and (
        not isinstance(language, str)
        or not is_news_language(language)
        or language == "zh"
    ):
        raise ConfigError(
            f"'{key}.language' must be an ISO 639 language code of 2 or 3"
            " lower-case letters such as 'en', or 'zh-cn' / 'zh-tw' for"
            f" Chinese (Google News), got {language!r}"
        )
    articles = Sections.of_mapping({"news": pages}).sections[0]
    return NewsOptions(articles, frozenset(named), name, language)
