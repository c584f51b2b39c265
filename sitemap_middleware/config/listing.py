"""What is listed and when it is looked at again: the default exclusions, the
caps, the ``sections`` and where ``lastmod`` comes from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..sections import DEFAULT_LABEL, Sections
from ..sections import NAME as SECTION_NAME
from .checks import strings

# Paths that are personal, private or not pages on almost every site. A pattern
# ending in "/*" also covers the bare prefix ("/api/*" covers "/api"); one of the
# form "*/word/*" matches "word" as a whole path segment anywhere ("/auth/login",
# "/en/account/settings", "/admin"; not "/login-tips" or "/blogin"). "api" is
# anchored at the root: "/docs/api/..." is public documentation on many sites.
DEFAULT_EXCLUDE = (
    "*/admin/*",
    "*/account/*",
    "*/accounts/*",
    "*/login/*",
    "*/logout/*",
    "*/signin/*",
    "*/sign_in/*",
    "*/sign-in/*",
    "*/signout/*",
    "*/sign_out/*",
    "*/sign-out/*",
    "*/signup/*",
    "*/sign_up/*",
    "*/sign-up/*",
    "*/register/*",
    "*/password/*",
    "*/auth/*",
    "*/oauth/*",
    "*/cart/*",
    "*/basket/*",
    "*/wishlist/*",
    "*/checkout/*",
    "/api/*",
    "/static/*",
    "/_*",
    "/.well-known/*",
)
# The cardinality bounds (invariant 7). A million URLs is twenty full sitemap
# pages: more than nearly any site has, few enough that a slug explosion
# cannot fill a disk. A thousand new URLs a minute per process is far more
# than a site publishes and lets a first crawl teach the store a large site
# within hours, while an attack adds at most that much before the caps hold.
DEFAULT_MAX_URLS = 1_000_000
DEFAULT_NEW_URLS_PER_MINUTE = 1000
DEFAULT_RECHECK_INTERVAL = 300.0
# A listed page no client was served for 30 days is stale in the health
# report: a crawler revisits a page it keeps indexed within weeks, and a
# visitor-less month is when a site owner asks whether the page should stay.
DEFAULT_STALE_AFTER = 30 * 86_400.0


def default_exclude(key: str, value: Any) -> tuple[str, ...]:
    patterns = strings(key, value)
    for pattern in patterns:
        if pattern not in DEFAULT_EXCLUDE:
            raise ConfigError(
                f"{key!r} turns defaults off and may only keep some of them "
                f"({', '.join(DEFAULT_EXCLUDE)}); put patterns of your own in "
                f"'exclude', got {pattern!r}"
            )
    return patterns


def check_stale_after(values: Mapping[str, Any]) -> None:
    # A page served within a recheck_interval is not seen again: a shorter
    # stale_after would call pages stale that visitors read every minute.
    stale = values.get("stale_after", DEFAULT_STALE_AFTER)
    recheck = values.get("recheck_interval", DEFAULT_RECHECK_INTERVAL)
    if stale < recheck:
        raise ConfigError(
            f"'stale_after' ({stale:g} s) must be at least 'recheck_interval' "
            f"({recheck:g} s): the time a page was served is kept once a "
            "recheck_interval"
        )


LASTMOD_SOURCES = ("declared", "article", "last-modified", "changes", "first-seen")
# Names kept for configs written for an earlier release.
_LASTMOD_ALIASES = {"content": "first-seen"}


def lastmod_source(key: str, value: Any) -> str:
    if value in _LASTMOD_ALIASES:
        return _LASTMOD_ALIASES[value]
    if value in LASTMOD_SOURCES:
        return str(value)
    raise ConfigError(
        f"{key!r} must be one of {', '.join(map(repr, LASTMOD_SOURCES))}, got {value!r}"
    )


def sections(key: str, value: Any) -> Sections:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key!r} must map a section name to a list of route templates"
            " and path globs, such as {'posts': ['/blog/<slug>', '/news/*']}"
        )
    checked: dict[str, tuple[str, ...]] = {}
    for name, patterns in value.items():
        if not isinstance(name, str) or not SECTION_NAME.match(name):
            raise ConfigError(
                f"{key!r}: section name {name!r} must be a short lower-case word"
                " (letters, digits, '-' and '_', at most 40)"
            )
        if name == DEFAULT_LABEL:
            raise ConfigError(
                f"{key!r}: {DEFAULT_LABEL!r} is the section of pages no section"
                " names; give this section another name"
            )
        where = f"{key}.{name}"
        if isinstance(patterns, str):
            patterns = [patterns]
        listed = strings(where, patterns)
        if not listed:
            raise ConfigError(f"{where!r} names no route template or path glob")
        for pattern in listed:
            if not pattern.startswith("/"):
                raise ConfigError(
                    f"{where!r}: {pattern!r} must start with '/' (a route"
                    " template such as '/blog/<slug>' or a path glob such as"
                    " '/blog/*')"
                )
        checked[name] = listed
    return Sections.of_mapping(checked)
