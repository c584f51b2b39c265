"""The search engines whose crawlers are recognised (leaf): each one's User-Agent
tokens and the host names its crawlers' addresses resolve to, and the one test the
request path makes of a User-Agent (``Agents``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple


class Engine(NamedTuple):
    """A search engine's crawlers, as the engine documents them."""

    name: str
    tokens: tuple[str, ...]
    """Product tokens its crawlers put in their User-Agent (case as sent)."""
    hosts: tuple[str, ...]
    """Domains their addresses' reverse DNS names end in (the engine's
    documented verification: the name, then a forward lookup that gives the
    address back)."""


# The engines' own pages on verifying their crawlers:
# https://developers.google.com/search/docs/crawling-indexing/verifying-googlebot
# https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26
# https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html
# https://www.baidu.com/search/spider_english.html
# https://support.apple.com/en-us/119829
ENGINES: Mapping[str, Engine] = {
    engine.name: engine
    for engine in (
        Engine(
            "google",
            (
                "Googlebot",
                "Google-InspectionTool",
                "GoogleOther",
                "Storebot-Google",
                "AdsBot-Google",
                "Mediapartners-Google",
                "APIs-Google",
            ),
            # Google's user-triggered fetchers resolve under gae.googleusercontent.com;
            # the rest of googleusercontent.com names any Google Cloud machine.
            ("googlebot.com", "google.com", "gae.googleusercontent.com"),
        ),
        Engine(
            "bing",
            ("bingbot", "BingPreview", "msnbot", "adidxbot"),
            ("search.msn.com",),
        ),
        Engine(
            "yandex",
            ("YandexBot", "YandexImages", "YandexMobileBot", "YandexNews"),
            ("yandex.ru", "yandex.net", "yandex.com"),
        ),
        Engine("baidu", ("Baiduspider",), ("baidu.com", "baidu.jp")),
        Engine("apple", ("Applebot",), ("applebot.apple.com",)),
    )
}

# User-Agents whose answer Agents keeps: a client sending ever new ones pays
# the regex search each time, and fills nothing.
AGENTS_KEPT = 4096


class Agents:
    """User-Agent -> the engine it claims (``""``: none), for the request
    path: one dict lookup of a User-Agent seen before (a handful of strings
    make most of a site's traffic); the regex over every token on first
    sight. A claim is only a claim: the writer verifies the client.

    With no engines (crawls not kept) every agent claims none, kept all the
    same: the adapters then make the same one lookup, and no test of whether
    crawls are kept at all."""

    __slots__ = ("_pattern", "_tokens", "bytes", "str")

    def __init__(self, engines: Iterable[Engine]) -> None:
        self._tokens = {token: e.name for e in engines for token in e.tokens}
        alternatives = sorted(self._tokens, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(map(re.escape, alternatives))) if alternatives else None
        )
        # Looked up by the adapters: WSGI's str, ASGI's bytes (b"": no
        # User-Agent sent, which claims none).
        self.str: dict[str, str] = {}
        self.bytes: dict[bytes, str] = {b"": ""}

    def _engine(self, agent: str) -> str:
        found = None if self._pattern is None else self._pattern.search(agent)
        return "" if found is None else self._tokens[found.group()]

    def claim(self, agent: str) -> str:
        """The engine ``agent`` claims to be a crawler of, or ``""``; kept
        for the next lookup while there is room."""
        engine = self._engine(agent)
        if len(self.str) < AGENTS_KEPT:
            self.str[agent] = engine
        return engine

    def claim_bytes(self, agent: bytes) -> str:
        """:meth:`claim` of a header's bytes (ASGI), kept by its bytes only."""
        engine = self._engine(agent.decode("latin-1"))
        if len(self.bytes) < AGENTS_KEPT:
            self.bytes[agent] = engine
        return engine


def host_engine(host: str, engines: Iterable[Engine]) -> str | None:
    """The engine whose domains hold ``host`` (a reverse DNS name), if any."""
    name = host.rstrip(".").lower()
    for engine in engines:
        for domain in engine.hosts:
            if name == domain or name.endswith("." + domain):
                return engine.name
    return None
