"""Why the current config keeps a URL out of the sitemap, in words: the rule
``sitemap-middleware explain`` names. The rule is ``recording.refusal.refuse``;
this module holds its words, one entry per reason code. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from ..config import Config
from ..reasons import Skipped
from ..recording.refusal import Query, Refusal, refuse
from ..routes import Route, Routes
from ..sitemaps import MAX_URL_LENGTH
from ..watching.policy import Policy


class Refused(NamedTuple):
    """What the words of a refusal may name."""

    refusal: Refusal
    config: Config
    path: str
    route: Route


def _excluded(said: Refused) -> str:
    pattern = said.refusal.detail
    source = " (from default_exclude)" if pattern in said.config.default_exclude else ""
    return f"excluded by exclude pattern {pattern!r}{source}"


def _unkept(said: Refused) -> str:
    listed = ", ".join(map(repr, sorted(said.route.query))) or "none"
    return (
        f"the query parameter {said.refusal.detail!r} is not kept (query: {listed}); "
        f"the page is listed as {said.path} if at all"
    )


WORDS: Final[dict[str, Callable[[Refused], str]]] = {
    Skipped.BAD_PATH: lambda said: (
        "an empty path segment ('//') names no page of the site"
    ),
    Skipped.SECRET: lambda said: (
        "a path segment looks like a secret link (a token or a random id); "
        "@sitemap(public_ids=True) on its route lists such paths"
    ),
    Skipped.OWN_ENDPOINT: lambda said: (
        "a path the middleware answers itself (the sitemap, robots.txt)"
    ),
    Skipped.EXCLUDED: _excluded,
    Skipped.NOT_INCLUDED: lambda said: (
        "matched by no include pattern "
        f"(include: {', '.join(map(repr, said.config.include))})"
    ),
    Skipped.FRAMEWORK: lambda said: (
        f"its route {said.refusal.detail!r} is a page of the framework (docs, files)"
    ),
    Skipped.ROUTE_EXCLUDED: lambda said: (
        f"its route {said.refusal.detail!r} is excluded (@sitemap or 'routes')"
    ),
    Query.SECRET: lambda said: (
        f"the query parameter {said.refusal.detail!r} looks like a credential: "
        "never stored"
    ),
    Query.UNKEPT: _unkept,
    Query.FORM: lambda said: (
        "its query is not spelled as stored (parameters sorted, percent-encoded)"
    ),
    Skipped.TOO_LONG: lambda said: (
        f"the URL is longer than a sitemap may hold ({MAX_URL_LENGTH:,} characters)"
    ),
}
"""The words of each reason code ``refuse`` gives (``refusal.REASONS``)."""

NOT_REFUSED: Final = (
    "no rule of the config refuses it; it is listed once it answers a visitor "
    "(or seed) as a public page"
)
"""The words when no rule of the config refuses the URL."""


def said(refused: Refusal, config: Config, path: str, route: Route) -> str:
    """The words of a refusal of ``path`` (``refusal.refuse``'s answer)."""
    return WORDS[refused.reason](Refused(refused, config, path, route))


def refusal(config: Config, target: str, route: Route | None = None) -> str | None:
    """The rule of ``config`` that refuses ``target`` (a normalised path and
    its query, as given), in words, or ``None`` when none does. ``route``: the
    route serving it, when the app is known (its exclusion, framework pages,
    the query and identifiers it keeps); else the config's defaults."""
    path, _, query = target.partition("?")
    if route is None:
        route = Routes(config).unknown
    refused = refuse(Policy(config), config.base_url, path, query, route)
    if refused is None:
        return None
    return said(refused, config, path, route)


def why(config: Config, target: str, route: Route | None = None) -> str:
    """:func:`refusal`'s words, or those for a URL no rule refuses."""
    return refusal(config, target, route) or NOT_REFUSED
