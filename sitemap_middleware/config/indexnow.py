"""The ``indexnow`` key: where and how often changed URLs are pushed to
IndexNow, and the path of the key file that proves the site's key."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..paths import SITEMAP, reserved
from .checks import known, seconds

# The shared IndexNow endpoint, which passes each submission on to every
# participating search engine (indexnow.org, "Documentation").
INDEXNOW_ENDPOINT = "https://api.indexnow.org/indexnow"
# Seconds between two pushes of one process, at least: changes made meanwhile
# go in one request (and a URL changed twice, once). The floor keeps a process
# from claiming from the store and posting in a loop.
INDEXNOW_INTERVAL = 60.0
MIN_INDEXNOW_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class IndexNowOptions:
    """The ``indexnow`` key: where and how changed URLs are pushed."""

    key: str
    """The site's key: 8 to 128 of a-z, A-Z, 0-9 and "-"."""
    endpoint: str = INDEXNOW_ENDPOINT
    key_location: str = ""
    """The path the key file is served at, under the base URL (``/{key}.txt``
    unless set)."""
    interval: float = INDEXNOW_INTERVAL


# The IndexNow protocol's key: 8 to 128 characters of a-z, A-Z, 0-9 and "-"
# (indexnow.org, "Documentation").
_is_indexnow_key = re.compile(r"[a-zA-Z0-9-]{8,128}").fullmatch
# The sitemap ping endpoints Google and Bing retired in 2023: never sent to.
# Unreserved characters only (RFC 3986 §2.3): the path the adapters see is the
# path as written.
_is_key_path = re.compile(r"(/[A-Za-z0-9._~-]+)+").fullmatch
_RETIRED_PINGS = re.compile(r"(www\.)?(google|bing)\.com")


_INDEXNOW_KEYS = dict.fromkeys(("key", "endpoint", "key_location", "interval"))


def indexnow(key: str, value: Any) -> IndexNowOptions:
    expected = (
        "a dict with 'key' (8 to 128 of a-z, A-Z, 0-9 and '-') and optionally"
        f" 'endpoint' (default {INDEXNOW_ENDPOINT!r}), 'key_location' (a path"
        " such as '/indexnow-key.txt') and 'interval' (seconds)"
    )
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    known(value, _INDEXNOW_KEYS, f"unknown key {{!r}} in {key!r}")
    secret = value.get("key")
    if not isinstance(secret, str) or not _is_indexnow_key(secret):
        raise ConfigError(
            f"'{key}.key' must be 8 to 128 characters of a-z, A-Z, 0-9 and '-'"
            f" (the IndexNow protocol's key), got {secret!r}"
        )
    endpoint = value.get("endpoint", INDEXNOW_ENDPOINT)
    parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"'{key}.endpoint' must be an http(s) URL such as"
            f" {INDEXNOW_ENDPOINT!r}, got {endpoint!r}"
        )
    if _RETIRED_PINGS.fullmatch(parts.hostname) and "indexnow" not in parts.path:
        raise ConfigError(
            f"'{key}.endpoint' {endpoint!r} is not an IndexNow endpoint (the"
            f" sitemap ping endpoints are retired); use {INDEXNOW_ENDPOINT!r}"
        )
    location = value.get("key_location", f"/{secret}.txt")
    if not isinstance(location, str) or not _is_key_path(location):
        raise ConfigError(
            f"'{key}.key_location' must be a path under the base URL of"
            f" letters, digits and ._~-, such as '/{secret}.txt', got {location!r}"
        )
    # Kept out of the sitemaps' whole prefix, not only their paths.
    if reserved(location) or location.startswith(SITEMAP):
        raise ConfigError(
            f"'{key}.key_location' {location!r} is a path the sitemap answers"
        )
    interval = seconds(f"{key}.interval", value.get("interval", INDEXNOW_INTERVAL))
    if interval < MIN_INDEXNOW_INTERVAL:
        raise ConfigError(
            f"'{key}.interval' must be at least {MIN_INDEXNOW_INTERVAL:g} second"
            f" (a process's pushes are that far apart at least), got {interval!r}"
        )
    return IndexNowOptions(secret, endpoint, location, float(interval))
