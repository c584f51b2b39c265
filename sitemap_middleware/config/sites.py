"""Where the app is: its base URL, its hosts, the ``sites`` it serves and the
store that keeps each site's listing; and the site a ``Host`` value selects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..sitemaps import MAX_ORIGIN_BYTES, escape
from ..urls import DEFAULT_PORTS, canonical_origin, normalise_path
from .checks import known, strings

# The embedded store's file: in the working directory, or in a Flask app's
# instance folder.
DEFAULT_STORE_FILE = "sitemap.sqlite3"
DEFAULT_STORE = f"sqlite:///{DEFAULT_STORE_FILE}"


@dataclass(frozen=True, slots=True)
class SiteOptions:
    """One of the sites the app serves (the ``sites`` key)."""

    name: str
    """Its name: its listing in the store, the CLI's ``--site``."""
    base_url: str
    """Its public origin (and prefix): every URL of its documents."""
    hosts: tuple[str, ...]
    """The ``Host`` values that reach it (lower case, without port)."""


# A site's name is part of table and key names: lower-case letters and digits.
_SITE_NAME = re.compile(r"[a-z][a-z0-9]{0,15}")


def sites(key: str, value: Any) -> tuple[SiteOptions, ...]:
    form = (
        "a dict of site name -> {'base_url': ..., 'hosts': [...]}, such as"
        " {'de': {'base_url': 'https://example.de', 'hosts': ['example.de',"
        " 'www.example.de']}}"
    )
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"{key!r} must be {form}, got {value!r}")
    found: list[SiteOptions] = []
    owner: dict[str, str] = {}
    for name, options in value.items():
        if not isinstance(name, str) or not _SITE_NAME.fullmatch(name):
            raise ConfigError(
                f"{key!r} names sites with 1 to 16 lower-case letters and digits,"
                f" a letter first (they name its listing in the store), got {name!r}"
            )
        where = f"{key}.{name}"
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where!r} must be a dict, got {options!r}")
        known(options, {"base_url": 0, "hosts": 0}, f"unknown key {{!r}} in {where!r}")
        if "base_url" not in options:
            raise ConfigError(f"{where!r} needs 'base_url', the site's public URL")
        url = base_url(f"{where}.base_url", options["base_url"])
        given = options.get("hosts")
        if given is None:
            given = (urlsplit(url).hostname or "",)
        named = hosts(f"{where}.hosts", given)
        for host in named:
            if host.startswith(".") or "*" in host or host != site_host(host):
                raise ConfigError(
                    f"{where + '.hosts'!r} holds host names as a Host header"
                    f" names them, without port, '*' or a leading dot, got {host!r}"
                )
            if host in owner:
                raise ConfigError(
                    f"host {host!r} is in the hosts of both {owner[host]!r} and"
                    f" {name!r} in {key!r}; a host reaches one site"
                )
            owner[host] = name
        found.append(SiteOptions(name, url, named))
    _apart(key, found, owner)
    return tuple(found)


def _apart(key: str, found: list[SiteOptions], owner: dict[str, str]) -> None:
    """Each site's URLs are its own: no two sites share a ``base_url`` (both
    would publish one /sitemap.xml, each listing part of the pages), and no
    site is reached by the host of another's ``base_url`` (its pages, visited
    at their public URLs, would be listed under the other site's)."""
    first: dict[str, str] = {}
    for site in found:
        if site.base_url in first:
            raise ConfigError(
                f"{first[site.base_url]!r} and {site.name!r} in {key!r} have the"
                f" same base_url {site.base_url!r}; each site publishes its own"
            )
        first[site.base_url] = site.name
        host = site_host(urlsplit(site.base_url).hostname or "")
        other = owner.get(host, site.name)
        if other != site.name:
            raise ConfigError(
                f"host {host!r} of the base_url of {site.name!r} is in the hosts of"
                f" {other!r} in {key!r}; a site's public host reaches that site"
            )


def with_sites(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A config with ``sites``: its first site is the default, whose
    ``base_url`` the key may repeat; each site names its own hosts."""
    found = sites("sites", mapping["sites"])
    if "allowed_hosts" in mapping:
        raise ConfigError(
            "'allowed_hosts' and 'sites' do not go together: each site names"
            " the hosts that reach it ('sites.<name>.hosts')"
        )
    values = dict(mapping)
    if "base_url" in mapping and base_url("base_url", mapping["base_url"]) != (
        found[0].base_url
    ):
        raise ConfigError(
            f"'base_url' {mapping['base_url']!r} is not the base_url of the first"
            f" of 'sites' ({found[0].name!r}, the default site); leave it out"
        )
    if len(found) > 1 and not isinstance(mapping.get("store", DEFAULT_STORE), str):
        raise ConfigError(
            "with several 'sites', 'store' must be a store URI, from which each"
            " site's listing is named (a store object holds one listing)"
        )
    values["base_url"] = found[0].base_url
    values["allowed_hosts"] = list(found[0].hosts)
    return values


def host_name(host: str) -> str:
    """The host a ``Host`` value names, as ``allowed_hosts`` spell it: lower
    case, without port; an IPv6 literal without its brackets."""
    host = host.lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.partition(":")[0]


def site_host(host: str) -> str:
    """The host a ``Host`` value names, as ``sites`` spell it: its
    :func:`host_name` without a trailing dot. Only ever compared with the
    configured hosts: it selects a site, it never builds a URL (invariant 1)."""
    host = host_name(host)
    return host[:-1] if host.endswith(".") else host


def site_store(store: str, name: str) -> str:
    """The URI of site ``name``'s listing in the store ``store`` names: the
    store option ``site`` (``stores.open_store``)."""
    if not _SITE_NAME.fullmatch(name):
        raise ConfigError(
            "a site's name is 1 to 16 lower-case letters and digits, a letter"
            f" first, got {name!r}"
        )
    # Appended as written: urlunsplit would shorten "sqlite:///file".
    return f"{store}{'&' if '?' in store else '?'}site={name}"


# Characters no URL may hold as written (RFC 3986 §2, Appendix C): controls,
# space, and the delimiters that XML, HTML or a log would take as the end of
# a URL. Each would make every <loc> built on the base URL unparsable.
_NOT_IN_URL = re.compile(r'[\x00-\x20\x7f<>"{}|\\^`]')


def base_url(key: str, value: Any) -> str:
    expected = "an absolute http(s) URL such as 'https://www.example.com'"
    if not isinstance(value, str):
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    text = value.strip()
    bad = _NOT_IN_URL.search(text)
    if bad is not None:
        raise ConfigError(
            f"{key!r} must be {expected}, without spaces, control characters "
            f'or any of <>"{{}}|\\^`; got {bad.group()!r} in {value!r}'
        )
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # "https://[x", a host NFKC changes
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}") from exc
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")
    if "@" in parts.netloc or "?" in text or "#" in text:
        raise ConfigError(
            f"{key!r} must hold no user, query or fragment, got {value!r}"
        )
    origin = canonical_origin(parts)
    if origin is None:
        raise ConfigError(
            f"{key!r} has an invalid host or port (a host name, an IPv4 address "
            f"or a bracketed IPv6 one, and a port from 1 to 65535): {value!r}"
        )
    prefix = parts.path.rstrip("/")
    if prefix:
        if not prefix.isascii():
            raise ConfigError(f"{key!r} path must be percent-encoded ASCII: {value!r}")
        # Stored and compared in the spelling every request path gets.
        normalised = normalise_path(prefix)
        if normalised is None:
            raise ConfigError(
                f"{key!r} path must be percent-encoded UTF-8 text without "
                f"control characters: {value!r}"
            )
        prefix = normalised.rstrip("/")
    url = f"{origin}{prefix}"
    # Stores size pages with this much room for the origin of each URL.
    if len(escape(url)) > MAX_ORIGIN_BYTES:
        raise ConfigError(f"{key!r} must be at most {MAX_ORIGIN_BYTES} characters")
    return url


def store(key: str, value: Any) -> Any:
    if isinstance(value, str) and "://" in value:
        return value
    if hasattr(value, "upsert") and hasattr(value, "part"):
        return value
    raise ConfigError(
        f"{key!r} must be a store URI such as {DEFAULT_STORE!r} or "
        f"'memory://', or a store object, got {value!r}"
    )


def store_hint(uri: str) -> str | None:
    """The fix of a store URI with a known slip, in words, or ``None``: an
    SQLite file named as a host (``sqlite://x.db``, two slashes where a
    relative path takes three)."""
    parts = urlsplit(uri)
    if parts.scheme.lower() == "sqlite" and parts.netloc:
        fixed = f"sqlite:///{parts.netloc}{parts.path}"
        if parts.query:
            fixed += f"?{parts.query}"
        return f"did you mean {fixed!r} (three slashes before a relative path)?"
    return None


def hosts(key: str, value: Any) -> tuple[str, ...]:
    return tuple(host.lower() for host in strings(key, value))
