"""The one rule for whether the current config keeps a URL out of the sitemap, and
why: recording (``digest.locate``), the re-check of stored pages (invariant 21) and
``sitemap-middleware explain`` all ask :func:`refuse`. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Final, Protocol
from urllib.parse import parse_qsl

from ..reasons import Skipped
from ..routes import Route
from ..sitemaps import MAX_URL_LENGTH
from ..urls import filter_query, is_secret_name, strip_secrets


class Rules(Protocol):
    """The path rules of the config (the policy has them, compiled once for
    the request path): own endpoints, ``exclude`` and ``include``."""

    def path_skip(self, path: str) -> str | None:
        """Why a normalised path is never recorded, or ``None``."""

    def exclusion(self, path: str) -> str | None:
        """The first ``exclude`` pattern matching ``path``, or ``None``."""


class Query:
    """Why a spelling's query refuses it. Recording never meets these: it keeps
    the parameters it may (``filter_query``) and drops the rest, so only a
    stored spelling (the re-check) or an asked one (``explain``) carries them."""

    SECRET: Final = "query_secret"
    """A parameter whose name looks like a credential: never stored."""
    UNKEPT: Final = "query"
    """A parameter the route's ``query`` (and the global one) does not keep."""
    FORM: Final = "query_form"
    """Kept parameters, but not as they are stored (sorted, percent-encoded)."""


REASONS: Final = frozenset(
    {
        Skipped.BAD_PATH,
        Skipped.SECRET,
        Skipped.OWN_ENDPOINT,
        Skipped.EXCLUDED,
        Skipped.NOT_INCLUDED,
        Skipped.FRAMEWORK,
        Skipped.ROUTE_EXCLUDED,
        Query.SECRET,
        Query.UNKEPT,
        Query.FORM,
        Skipped.TOO_LONG,
    }
)
"""Every reason :func:`refuse` gives: a rule added there adds its code here
(and ``explain`` its words, ``cli/verdict.py``)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the config refuses a URL: a reason code of :data:`REASONS`, and
    what it names, when it names something (the ``exclude`` pattern, the
    route template, the query parameter; for a credential matrix parameter,
    the path a visit stores instead)."""

    reason: str
    detail: str | None = None


def refuse(
    rules: Rules,
    base_url: str,
    path: str,
    query: str,
    route: Route,
    *,
    removal: bool = False,
) -> Refusal | None:
    """Why the current config keeps ``path?query`` out of the sitemap, or
    ``None`` when no rule of it does.

    ``path`` is normalised (``normalise_path``) and ``query`` is the query,
    each as it would be stored: recording passes the path without its
    credential matrix parameters and the query parameters it keeps, the
    re-check and an import a stored spelling, ``explain`` the one asked
    about. ``route`` serves the path (``Routes.unknown`` when none is
    known): its exclusion, whether it is a framework page, the parameters it
    keeps, whether its ids are public. ``removal``: judged for a page going
    away, which is removed even from an excluded route or a framework page
    (it may have been recorded before), so the route's own rules do not
    apply.

    The order is recording's, and counted as such in ``stats()``: the
    path's form, a secret in it, the path rules, the route, the query, the
    length. (The request path checks the path rules, the framework pages and
    the route's exclusion sooner, cheaply: the same verdicts, counted alike.)
    """
    if "//" in path:
        # An empty segment names no page: an app that collapses slashes
        # would answer //admin/users past an /admin/* exclude.
        return Refusal(Skipped.BAD_PATH)
    stored = strip_secrets(path, route.public_ids)
    if stored != path:
        # A secret-looking segment (None), or a credential matrix parameter
        # (;jsessionid=), which recording leaves out of the path it stores
        # (digest.locate asks with it left out): never a stored spelling.
        return Refusal(Skipped.SECRET, stored)
    reason = rules.path_skip(path)
    if reason is not None:
        pattern = rules.exclusion(path) if reason == Skipped.EXCLUDED else None
        return Refusal(reason, pattern)
    if not removal:
        if route.framework:
            return Refusal(Skipped.FRAMEWORK, route.template)
        if route.exclude:
            return Refusal(Skipped.ROUTE_EXCLUDED, route.template)
    if query:
        kept = route.query
        for name, _ in parse_qsl(query, keep_blank_values=True):
            if is_secret_name(name):
                return Refusal(Query.SECRET, name)
            if name not in kept:
                return Refusal(Query.UNKEPT, name)
        if filter_query(query, kept) != query:
            return Refusal(Query.FORM)
    length = len(base_url) + len(path) + (len(query) + 1 if query else 0)
    if length > MAX_URL_LENGTH:
        return Refusal(Skipped.TOO_LONG)
    return None


def refusals(
    rules: Rules, base_url: str, paths: list[str], route: Route
) -> Iterator[tuple[int, Refusal]]:
    """:func:`refuse` of each of ``paths`` (normalised, each with the query
    it would be stored with) that it refuses, with its position (a bulk
    import's batch). Each path is asked of the rule itself: a faster search
    for the paths that may be refused would be a second home for the rule."""
    # A column at a time (a map of the same calls, no loop body per path):
    # a bulk import asks it of every URL, and refuses few.
    heads: Iterable[str] = paths
    queries: Iterable[str] = repeat("")
    if "?" in "".join(paths):  # else each path is its own, with no query
        heads, _, queries = zip(*map(str.partition, paths, repeat("?")), strict=True)
    verdicts = map(
        refuse, repeat(rules), repeat(base_url), heads, queries, repeat(route)
    )
    for index, refused in enumerate(verdicts):
        if refused is not None:
            yield index, refused
