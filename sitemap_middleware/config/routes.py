"""A route's options, as the ``routes`` key or the ``sitemap`` decorator gives
them, and the checks of what a route and the whole config share: the query
parameters kept, ``changefreq`` and ``priority``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from ..sitemaps import CHANGEFREQS
from ..urls import is_secret_name
from .checks import Check, flag, known, limit, names, number


@dataclass(frozen=True, slots=True)
class RouteOptions:
    """What the config's ``routes`` or the ``sitemap`` decorator says about one
    route; ``None`` means "not said", so that the two can be merged."""

    changefreq: str | None = None
    priority: float | None = None
    exclude: bool | None = None
    """``True``: the route's pages are never recorded."""
    max_urls: int | None = None
    """Per-route cap on stored URLs."""
    query: frozenset[str] | None = None
    """Query parameters kept for this route, on top of the global ``query``."""
    public_ids: bool | None = None
    """``True``: random-looking identifiers in the route's paths (UUIDs, long
    hex, tokens) name public pages, not secret links."""


def query(key: str, value: Any) -> frozenset[str]:
    named = names(key, value)
    for name in sorted(named):
        if is_secret_name(name):
            raise ConfigError(
                f"{key!r} lists {name!r}, which looks like a credential; such "
                "parameters are never published in a sitemap"
            )
    return named


def changefreq(key: str, value: Any) -> str | None:
    if value is None or value in CHANGEFREQS:
        return value  # type: ignore[no-any-return]
    raise ConfigError(f"{key!r} must be one of {', '.join(CHANGEFREQS)}, got {value!r}")


_fraction = number(0.0, 1.0)


def priority(key: str, value: Any) -> float | None:
    # None is the default, unsaid in the message: a route's "not said".
    return None if value is None else float(_fraction(key, value))


_ROUTE_KEYS: dict[str, Check] = {
    "changefreq": changefreq,
    "priority": priority,
    "exclude": flag,
    "max_urls": limit,
    "query": query,
    "public_ids": flag,
}


def route_options(where: str, options: Mapping[str, Any]) -> RouteOptions:
    """Check one route's options; ``where`` names them in error messages."""
    known(options, _ROUTE_KEYS, f"unknown key {{!r}} in {where}")
    return RouteOptions(
        **{
            name: _ROUTE_KEYS[name](f"{where}.{name}", value)
            for name, value in options.items()
        }
    )


def routes(key: str, value: Any) -> Mapping[str, RouteOptions]:
    expected = (
        "a dict of route template -> options, such as "
        "{'/blog/<slug>': {'changefreq': 'weekly', 'max_urls': 50000}}"
    )
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    checked: dict[str, RouteOptions] = {}
    for template, options in value.items():
        # Django's patterns have no leading '/' ('blog/<slug:slug>/'); a key
        # naming no route of the app is said once its routes are known.
        if not isinstance(template, str):
            raise ConfigError(
                f"{key!r} keys are route templates as the app declares them, "
                f"got {template!r}"
            )
        where = f"{key}[{template!r}]"
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where} must be a dict of options, got {options!r}")
        checked[template] = route_options(where, options)
    return MappingProxyType(checked)
