"""The documents served beside the sitemaps that a key shapes: robots.txt (the
``robots`` key), the site map for people (the ``html_sitemap`` key) and the
llms.txt file (``llms_txt``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..paths import RESERVED, reserved
from ..sections import DEFAULT_LABEL
from .checks import limit, line, patterns, strings


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
    path = document_path(f"{key}.path", options.get("path"), "/site-map")
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


def document_path(key: str, path: Any, example: str) -> str:
    """The path a document is configured at (the site map page's, llms.txt's):
    spelt as every request gets it, and none of the sitemap's own."""
    if not isinstance(path, str) or not _SITE_MAP_PATH.fullmatch(path):
        raise ConfigError(
            f"{key!r} must be a path such as {example!r}: it starts with '/',"
            f" is not '/' and holds only letters, digits and -._~!$&'()*+,;=:@ "
            f"between single slashes, got {path!r}"
        )
    segments = path.strip("/").split("/")
    # Reserved whatever the options: turning text_sitemap on later cannot
    # take the page's path.
    if reserved(path) or {".", ".."} & set(segments):
        raise ConfigError(
            f"{key!r} must not be one of the sitemap's own paths "
            f"({', '.join(RESERVED)}) nor hold a dot segment, got {path!r}"
        )
    return path


LLMS_PATH = "/llms.txt"
# Links a section of llms.txt lists at most by default: a reader's context is
# short, and a section's first pages (its own page, then by title or newest
# first) say what it holds.
LLMS_MAX_LINKS = 100
_LLMS_OPTIONS = ("path", "sections", "max_links")
# path, the sections listed (None: every one), links per section (None: all)
_LlmsTxt = tuple[str, tuple[str, ...] | None, int | None]


def llms_txt(key: str, value: Any) -> _LlmsTxt | None:
    expected = (
        "true, or a dict with 'path' (such as '/llms.txt'), 'sections' (the"
        " section names to list, 'default' for the pages no section names) and"
        " 'max_links' (links per section, None for all)"
    )
    if value is None or value is False:
        return None
    options = {} if value is True else value
    if not isinstance(options, Mapping):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    for sub in options:
        if sub not in _LLMS_OPTIONS:
            raise ConfigError(f"unknown key {sub!r} in {key!r}; expected {expected}")
    path = document_path(f"{key}.path", options.get("path", LLMS_PATH), LLMS_PATH)
    listed = options.get("sections")
    if listed is not None:
        listed = strings(f"{key}.sections", listed)
    most = limit(f"{key}.max_links", options.get("max_links", LLMS_MAX_LINKS))
    return path, listed, most


def section_labels(key: str, value: Any) -> Mapping[str, str]:
    """A heading in words per section name (``default`` for the pages no
    section names), as the site map page and llms.txt show it."""
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key!r} must map a section name to its heading, such as"
            f" {{'posts': 'Blog posts', {DEFAULT_LABEL!r}: 'Pages'}}, got {value!r}"
        )
    return {
        str(name): line(f"{key}.{name}", heading) for name, heading in value.items()
    }


def check_named_sections(values: Mapping[str, Any]) -> None:
    """Refuse a section that ``section_labels`` or ``llms_txt.sections`` names
    and the ``sections`` key does not define (``default`` always is)."""
    sections = values.get("sections")
    defined = {DEFAULT_LABEL, *(sections.names if sections else ())}
    llms = values.get("llms_txt")
    named = [("section_labels", n) for n in values.get("section_labels", {})]
    if llms is not None and llms[1] is not None:
        named += [("llms_txt.sections", n) for n in llms[1]]
    for key, name in named:
        if name not in defined:
            raise ConfigError(
                f"{key!r} names {name!r}, which the 'sections' key does not"
                f" define (sections: {', '.join(sorted(defined))})"
            )


def distinct_paths(*configured: tuple[str, str | None]) -> None:
    """Refuse two documents configured at one path (``(key, path)`` pairs, a
    path ``None`` for a document that is off): the first would hide the other."""
    taken: dict[str, str] = {}
    for key, path in configured:
        if path is None:
            continue
        if path in taken:
            raise ConfigError(
                f"{key!r} {path!r} is the {taken[path]!r} path; give each"
                " document a path of its own"
            )
        taken[path] = key
