"""The documents served beside the sitemaps that a key shapes: robots.txt (the
``robots`` key) and the site map for people (the ``html_sitemap`` key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..paths import RESERVED, reserved
from .checks import line, patterns, strings


def robots(key: str, value: Any) -> tuple[bool, tuple[str, ...]]:
    expected = "a dict with 'generate' (bool) and 'lines' (list of strings)"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    for sub in value:
        if sub not in ("generate", "lines"):
            raise ConfigError(f"unknown key {sub!r} in {key!r}; expected {expected}")
    generate = value.get("generate", True)
    if not isinstance(generate, bool):
        raise ConfigError(f"'{key}.generate' must be true or false, got {generate!r}")
    lines = strings(f"{key}.lines", value.get("lines", []))
    if any("\n" in line or "\r" in line for line in lines):
        raise ConfigError(f"'{key}.lines' must hold single lines, got {lines!r}")
    return generate, lines


# A path spelt as every request gets it (RFC 3986 §3.3 pchar), with nothing to
# decode: unreserved characters and sub-delims, no "%", no empty segment.
_SITE_MAP_PATH = re.compile(r"(/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+/?")
# A BCP 47 tag as <html lang> takes it (RFC 5646 §2.1, its common forms).
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


_SITE_MAP_OPTIONS = ("path", "lang", "title", "site_name", "newest_first")
# path, lang, title, site_name, newest_first
_SiteMapPage = tuple[str, str, str, str | None, tuple[str, ...]]


def html_sitemap(key: str, value: Any) -> _SiteMapPage | None:
    expected = (
        "a path such as '/site-map', or a dict with 'path', 'lang' (such as "
        "'en'), 'title', 'site_name' and 'newest_first' (section paths such as"
        " ['/blog'])"
    )
    if value is None or value is False:
        return None
    options = {"path": value} if isinstance(value, str) else value
    if not isinstance(options, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    for sub in options:
        if sub not in _SITE_MAP_OPTIONS:
            raise ConfigError(f"unknown key {sub!r} in {key!r}; expected {expected}")
    path = options.get("path")
    if not isinstance(path, str) or not _SITE_MAP_PATH.fullmatch(path):
        raise ConfigError(
            f"'{key}.path' must be a path such as '/site-map': it starts with '/',"
            f" is not '/' and holds only letters, digits and -._~!$&'()*+,;=:@ "
            f"between single slashes, got {path!r}"
        )
    segments = path.strip("/").split("/")
    # Reserved whatever the options: turning text_sitemap on later cannot
    # take the page's path.
    if reserved(path) or {".", ".."} & set(segments):
        raise ConfigError(
            f"'{key}.path' must not be one of the sitemap's own paths "
            f"({', '.join(RESERVED)}) nor hold a dot segment, got {path!r}"
        )
    lang = options.get("lang", "en")
    if not isinstance(lang, str) or not _LANGUAGE_TAG.fullmatch(lang):
        raise ConfigError(
            f"'{key}.lang' must be a language tag such as 'en' or 'nb-NO', got {lang!r}"
        )
    title = line(f"{key}.title", options.get("title", "Site map"))
    site_name = options.get("site_name")
    if site_name is not None:
        site_name = line(f"{key}.site_name", site_name)
    newest = patterns(f"{key}.newest_first", options.get("newest_first", []))
    return path, lang, title, site_name, newest
