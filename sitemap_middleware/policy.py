"""Recording policy: is a request/response pair a page to record, one to remove, or
neither (and why)? Decided from the request line and the response headers alone.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from .config import Config
from .reasons import RECORD, REMOVE, Skipped
from .sitemaps import is_noindex

# A known page that answers one of these is gone or moved for good; other
# errors (5xx, 429) are transient and change nothing.
REMOVAL_STATUSES = frozenset({301, 308, 404, 410})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SITEMAP_PATHS = frozenset({"/sitemap.xml", "/robots.txt"})


class Globs:
    """Path globs (``*`` also matches ``/``; ``/x/*`` also matches ``/x``).

    Plain paths and ``prefix*`` patterns, nearly all of them in practice, are
    checked with a set and ``str.startswith``; only the rest go to a regex.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        others: list[str] = []
        for pattern in patterns:
            if pattern.endswith("/*"):
                exact.add(pattern[:-2])
            head = pattern[:-1] if pattern.endswith("*") else pattern
            if any(c in head for c in "*?["):
                others.append(fnmatch.translate(pattern))
            elif head == pattern:
                exact.add(pattern)
            else:
                prefixes.append(head)
        self._exact = frozenset(exact)
        # Prefixes by their second character (the one after "/"), so that a
        # path is checked against the few that may match: one-character
        # slices are cached by CPython, so the lookup allocates nothing.
        buckets: dict[str, list[str]] = {}
        for prefix in prefixes:
            buckets.setdefault(prefix[1:2], []).append(prefix)
        short = tuple(buckets.pop("", ()))  # "" or "/": any path may match
        self._buckets = {c: (*found, *short) for c, found in buckets.items()}
        self._short = short
        self._regex = re.compile("|".join(others)) if others else None
        self.empty = not (exact or prefixes or others)

    def match(self, path: str) -> bool:
        if path in self._exact:
            return True
        prefixes = self._buckets.get(path[1:2], self._short)
        if prefixes and path.startswith(prefixes):
            return True
        return self._regex is not None and self._regex.match(path) is not None


# Response headers the policy reads, by lower-case name.
_WATCHED = frozenset(
    {
        "content-type",
        "x-robots-tag",
        "set-cookie",
        "cache-control",
        "vary",
        "content-encoding",
        "content-disposition",
    }
)
# How many distinct Host values keep their verdict (an attacker can send many),
# and how many header names and media types theirs (the app chooses those).
_HOST_CACHE = 256
_NAME_CACHE = 512


class Policy:
    """The recording rules of one configuration, compiled once."""

    def __init__(self, config: Config) -> None:
        self._excluded = Globs(config.exclude)
        self._included = Globs(config.include)
        hosts = config.allowed_hosts
        self._any_host = "*" in hosts
        self._hosts = frozenset(h for h in hosts if not h.startswith("."))
        self._host_suffixes = tuple(h for h in hosts if h.startswith("."))
        self._host_verdicts: dict[str, bool] = {}
        # Header names (str or bytes, as sent) -> the watched name or "", and
        # Content-Type values -> whether HTML: both chosen by the app, so few.
        self._names: dict[str | bytes, str] = {}
        self._html_types: dict[str, bool] = {}
        self._session_cookies = config.session_cookies
        self._any_cookie = "*" in config.session_cookies

    def is_own_path(self, path: str) -> bool:
        """Whether the middleware answers this path itself."""
        return path in SITEMAP_PATHS or (
            path.startswith("/sitemap-") and path.endswith(".xml.gz")
        )

    def request_skip(
        self, method: str, path: str, host: str, authorization: bool, cookie: str
    ) -> str | None:
        """Why a request can neither add nor remove a page, or ``None``.

        ``path`` is the decoded path, after the adapter has routed the
        middleware's own paths; ``host`` is the ``Host`` header value.
        """
        if method != "GET":
            return Skipped.METHOD
        if authorization:
            return Skipped.AUTHORIZATION
        if cookie and self._has_session(cookie):
            return Skipped.SESSION
        verdict = self._host_verdicts.get(host)
        if verdict is None:
            verdict = self._host_allowed(host)
            if len(self._host_verdicts) < _HOST_CACHE:
                self._host_verdicts[host] = verdict
        if not verdict:
            return Skipped.HOST
        # The rules of path_skip but its own-path check (the adapters route
        # those paths first), inlined: this runs on every request.
        if self._excluded.match(path):
            return Skipped.EXCLUDED
        if not self._included.empty and not self._included.match(path):
            return Skipped.NOT_INCLUDED
        return None

    def path_skip(self, path: str) -> str | None:
        """Why a normalised path is never recorded, or ``None``."""
        if self.is_own_path(path):
            return Skipped.OWN_ENDPOINT
        if self._excluded.match(path):
            return Skipped.EXCLUDED
        if not self._included.empty and not self._included.match(path):
            return Skipped.NOT_INCLUDED
        return None

    def response_action(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]],
    ) -> str:
        """``RECORD``, ``REMOVE`` or the reason to skip, for an anonymous GET.

        ``headers`` are WSGI's str pairs or ASGI's bytes pairs.
        """
        if status != 200:
            return REMOVE if status in REMOVAL_STATUSES else Skipped.STATUS
        names = self._names
        html = False
        for raw_name, raw_value in headers:
            name = names.get(raw_name)
            if name is None:
                name = self._name(raw_name)
            if not name:
                continue
            value = (
                raw_value.decode("latin-1")
                if isinstance(raw_value, bytes)
                else raw_value
            )
            if name == "content-type":
                known = self._html_types.get(value)
                html = self._is_html(value) if known is None else known
            elif name == "x-robots-tag":
                if is_noindex(value):
                    return REMOVE
            elif name == "set-cookie":
                return Skipped.SET_COOKIE
            elif name == "cache-control":
                lowered = value.lower()
                if "private" in lowered or "no-store" in lowered:
                    return Skipped.PRIVATE
            elif name == "vary":
                lowered = value.lower()
                if "cookie" in lowered or "authorization" in lowered:
                    return Skipped.VARY
            elif name == "content-encoding":
                if value.strip().lower() not in ("", "identity"):
                    return Skipped.ENCODED
            else:  # content-disposition
                return Skipped.ATTACHMENT
        return RECORD if html else Skipped.NOT_HTML

    def _name(self, raw: str | bytes) -> str:
        """The watched header ``raw`` names, or ``""``; remembered."""
        text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        name = text.lower()
        if name not in _WATCHED:
            name = ""
        if len(self._names) < _NAME_CACHE:
            self._names[raw] = name
        return name

    def _is_html(self, content_type: str) -> bool:
        # The media type is what precedes the parameters (RFC 9110 §8.3.1); a
        # full parse_options_header costs more than the rest of this method.
        html = content_type.partition(";")[0].strip().lower() in HTML_TYPES
        if len(self._html_types) < _NAME_CACHE:
            self._html_types[content_type] = html
        return html

    def _host_allowed(self, host: str) -> bool:
        if self._any_host:
            return True
        host = host.lower()
        # Drop the port; an IPv6 literal loses its brackets, as in allowed_hosts.
        if host.startswith("["):
            host = host[1:].partition("]")[0]
        else:
            host = host.partition(":")[0]
        return host in self._hosts or (
            bool(self._host_suffixes)
            and any(
                host.endswith(suffix) or host == suffix[1:]
                for suffix in self._host_suffixes
            )
        )

    def _has_session(self, cookie: str) -> bool:
        if self._any_cookie:
            return not cookie.isspace()
        for pair in cookie.split(";"):
            if pair.partition("=")[0].strip() in self._session_cookies:
                return True
        return False
