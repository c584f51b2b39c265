"""Why the current config keeps a URL out of the sitemap, in words: the rule
``sitemap-middleware explain`` names. Pure: a stored spelling and a Config in.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from ..config import Config
from ..reasons import Skipped
from ..routes import Route
from ..urls import is_secret_name, strip_secrets
from ..watching.policy import Globs, Policy


def refusal(config: Config, target: str, route: Route | None = None) -> str | None:
    """The rule of ``config`` that refuses ``target`` (a normalised path and
    its query, as given), or ``None`` when none does. ``route``: the route
    serving it, when the app is known (its exclusion, framework pages, the
    query and identifiers it keeps)."""
    path, _, query = target.partition("?")
    reason = Policy(config).path_skip(path)
    if reason == Skipped.OWN_ENDPOINT:
        return "a path the middleware answers itself (the sitemap, robots.txt)"
    if reason == Skipped.EXCLUDED:
        pattern = next(p for p in config.exclude if Globs((p,)).match(path))
        source = " (from default_exclude)" if pattern in config.default_exclude else ""
        return f"excluded by exclude pattern {pattern!r}{source}"
    if reason == Skipped.NOT_INCLUDED:
        patterns = ", ".join(map(repr, config.include))
        return f"matched by no include pattern (include: {patterns})"
    if route is not None and route.exclude:
        return f"its route {route.template!r} is excluded (@sitemap or 'routes')"
    if route is not None and route.framework:
        return f"its route {route.template!r} is a page of the framework (docs, files)"
    public_ids = route is not None and route.public_ids
    if strip_secrets(path, public_ids) is None:
        return (
            "a path segment looks like a secret link (a token or a random id); "
            "@sitemap(public_ids=True) on its route lists such paths"
        )
    kept = config.query if route is None else route.query
    for name, _ in parse_qsl(query, keep_blank_values=True):
        if is_secret_name(name):
            return f"the query parameter {name!r} looks like a credential: never stored"
        if name not in kept:
            listed = ", ".join(map(repr, sorted(kept))) or "none"
            return (
                f"the query parameter {name!r} is not kept (query: {listed}); "
                f"the page is listed as {path} if at all"
            )
    return None
