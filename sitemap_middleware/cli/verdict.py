"""Why a URL is kept out of the sitemap, in words: the rule ``sitemap-middleware
explain`` names. The config's rule is ``recording.refusal.refuse`` (its words in
:data:`WORDS`, one per reason code); the response's rules are the watcher's
(``Policy.response_action``, applied by :func:`answered` to what the app answers,
its words in :data:`ANSWERS`). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from ..config import Config
from ..reasons import (
    DEPENDS,
    NOTED_NOT_ADMITTED,
    NOTED_REMOVED,
    RECORD,
    REMOVE,
    Dropped,
    Skipped,
)
from ..recording.refusal import Query, Refusal, refuse
from ..routes import Route, Routes
from ..sitemaps import MAX_URL_LENGTH
from ..watching.policy import REMOVAL_STATUSES, Policy


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
        "a matrix parameter looks like a credential (;jsessionid=...): a "
        f"visit stores the page as {said.refusal.detail!r}, never with it"
        if said.refusal.detail
        else "a path segment looks like a secret link (a token or a random id); "
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
    "(or seed) as a public page (give --app to learn what it answers now)"
)
"""The words when no rule of the config refuses the URL and the app is not
known (with the app, :func:`answered` says what its answer does)."""


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


Headers = list[tuple[str, str]]


def _header(headers: Headers, name: str) -> str:
    return ", ".join(v for k, v in headers if k.lower() == name)


def _gone(status: int, headers: Headers) -> str:
    location = _header(headers, "location")
    if status in REMOVAL_STATUSES and location and status // 100 == 3:
        return (
            f"it answers an anonymous GET with {status}, a redirect to {location}:"
            " a page moved for good is listed at its new address"
        )
    if status == 401:
        return (
            "it answers an anonymous GET with 401: it wants credentials, no page"
            " for an anonymous visitor"
        )
    if status in REMOVAL_STATUSES:
        return f"it answers an anonymous GET with {status}: a page gone is removed"
    if status != 200:
        return (
            f"it answers with {status}, a redirect to {_header(headers, 'location')},"
            " an excluded path (a login page): it wants a signed-in visitor"
        )
    return f"it answers with X-Robots-Tag: {_header(headers, 'x-robots-tag')} (noindex)"


ANSWERS: Final[dict[str, Callable[[int, Headers], str]]] = {
    Skipped.GONE: _gone,
    Skipped.STATUS: lambda status, headers: (
        f"it answers an anonymous GET with {status}: only a 200 is a page"
        + (
            f" (a temporary redirect to {_header(headers, 'location')})"
            if _header(headers, "location")
            else ""
        )
    ),
    Skipped.NOT_HTML: lambda status, headers: (
        "it answers with Content-Type "
        f"{_header(headers, 'content-type') or '(none)'!r}, not HTML"
    ),
    Skipped.SET_COOKIE: lambda status, headers: (
        "it answers with Set-Cookie and 'skip_set_cookie' is true: no response "
        "that sets a cookie is recorded"
    ),
    Skipped.PRIVATE: lambda status, headers: (
        f"it answers with Cache-Control: {_header(headers, 'cache-control')} "
        "(private or no-store): only what a shared cache may keep is listed"
    ),
    Skipped.VARY: lambda status, headers: (
        f"it answers with Vary: {_header(headers, 'vary')}: no variant is known "
        "to be the one a crawler gets"
    ),
    Skipped.ATTACHMENT: lambda status, headers: (
        "it answers with Content-Disposition: a download, not a page"
    ),
    Skipped.ENCODED: lambda status, headers: (
        f"it answers compressed (Content-Encoding: "
        f"{_header(headers, 'content-encoding')}): put the compression "
        "middleware outside the sitemap middleware"
    ),
}
"""The words of each reason ``Policy.response_action`` gives a response."""

DECIDED: Final[dict[str, str]] = {
    Skipped.NOINDEX: "the page says noindex (a robots meta tag or X-Robots-Tag)",
    Skipped.CANONICAL_OTHER: "its canonical link names another URL",
    Skipped.HREFLANG_INCOMPLETE: (
        "its hreflang alternates do not all name it back: written without them"
    ),
    Skipped.HREFLANG_MISMATCH: "its hreflang alternates disagree with another page's",
    Skipped.HEAD_TOO_LONG: (
        "its <head> goes on past what is read (a noindex may follow): not recorded"
    ),
    Skipped.UNSTORABLE: "a value no sitemap may hold (its entry does not render)",
    Skipped.NOT_EXACT: "the request was not the stored spelling of its URL",
    Dropped.CAP: "the store holds max_urls pages already",
    Dropped.ROUTE_CAP: "its route holds its max_urls pages already",
    Dropped.RATE: "more new pages than new_urls_per_minute allows",
    Dropped.QUEUE_FULL: "the recording queue was full",
    Dropped.STORE_DOWN: "the store could not be written",
    Dropped.READ_ONLY: "the store can only be read",
    NOTED_NOT_ADMITTED: "not admitted: the store or its route holds its max_urls pages",
    NOTED_REMOVED: "the middleware's removal rules took it out",
}
"""The words of what a writer decided about a page (the decisions log's
codes: the body's rules, the caps), for a page its status and headers do
not explain."""


def decided(code: str) -> str:
    """The words of a writer's decision (:data:`DECIDED`), else the code."""
    return DECIDED.get(code, code.replace("_", " "))


# The rules only the writers apply, reading the body: explain names the one
# their last decision about a path applied.
BODY_RULES: Final = frozenset(
    {
        Skipped.NOINDEX,
        Skipped.CANONICAL_OTHER,
        Skipped.HEAD_TOO_LONG,
        Skipped.UNSTORABLE,
    }
)


def kept_out(decisions: list[str]) -> str | None:
    """The body's rule that kept the page out at the writers' last decision
    about it (oldest first), in words; ``None`` when that was no such rule."""
    if not decisions or decisions[-1] not in BODY_RULES:
        return None
    return f"the last time a writer read it: {DECIDED[decisions[-1]]}"


def answered(config: Config, status: int, headers: Headers, target: str) -> str | None:
    """The rule of the watcher that keeps out a page answering an anonymous
    GET of ``target`` (a stored spelling) with ``status`` and ``headers``, in
    words; ``None`` when the answer is one a page is recorded from (as far as
    its status and headers go: the body's rules are the writers', in the
    decisions log)."""
    policy = Policy(config)
    action = policy.response_action(status, headers)
    if action == DEPENDS:
        # The request explain sends carries no cookie.
        if status == 200:
            action = policy.cookie_action("", headers)
        else:
            action = policy.redirect_action(headers, target.partition("?")[0], True)
    if action == RECORD:
        return None
    # REMOVE: the answer takes a page out, or keeps a new one out (gone).
    return ANSWERS[Skipped.GONE if action == REMOVE else action](status, headers)
