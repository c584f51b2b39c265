"""Recording policy: is a request/response pair a page to record, one to remove, or
neither (and why)? Decided from the request line and the response headers alone.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Container, Iterable
from urllib.parse import urlsplit

from ..config import Config, host_name
from ..reasons import DEPENDS, RECORD, REMOVE, Skipped
from ..recording.observation import location
from ..sitemaps import is_noindex
from ..urls import DEFAULT_PORTS, canonical_target, wsgi_path

# A known page that answers one of these to an anonymous visitor is gone, moved
# for good, or wants credentials now (401: requests with Authorization or an
# identifying cookie never get this far). 5xx are transient and change nothing.
# Neither do 403 and 429: a firewall or a rate limiter answers them to a client
# it blocks, so a hostile client could provoke them and take a public page out
# of the sitemap (invariant 19).
REMOVAL_STATUSES = frozenset({301, 308, 401, 404, 410})
# A temporary redirect removes only when it sends the visitor to an excluded
# path, such as a login page (/auth/login?next=...): the page wants a signed-in
# visitor now. Any other one may be passing (a maintenance page, a locale
# switch) and changes nothing.
TEMPORARY_REDIRECTS = frozenset({302, 303, 307})
NO_QUERY: frozenset[str] = frozenset()
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


# "*/word/*": a whole path segment anywhere ("*" also matches "/", and "/x/*"
# also matches "/x"), for a word with no glob character in it.
_SEGMENT = re.compile(r"\*/([^/*?\[]+)/\*")


class _Everything:
    """The container of every string: the gate's initials when a document's
    path is "/" alone, which any path starts with."""

    __slots__ = ()

    def __contains__(self, item: object) -> bool:
        return True


_ANY = _Everything()
_LAST = chr(sys.maxunicode)  # the greatest character: nothing comes after it

Bucket = tuple[str, str, tuple[str, ...]]
"""Excluded paths and prefixes of paths, as the range of the paths they
match (the least of them; a string greater than each path they match) and
the prefixes."""


def _after(prefix: str) -> str:
    """The least string greater than every string that starts with
    ``prefix``, which has a character other than ``_LAST``."""
    stem = prefix.rstrip(_LAST)
    return stem[:-1] + chr(ord(stem[-1]) + 1)


def _bucket(prefixes: Iterable[str], exact: Iterable[str]) -> Bucket:
    prefixes = tuple(prefixes)
    exact = tuple(exact)
    if not prefixes and not exact:
        return "", "", ()  # no path lies between "" and ""
    # "\0" after a path: the least string greater than it.
    ends = (*map(_after, prefixes), *(path + "\0" for path in exact))
    return min(prefixes + exact), max(ends), prefixes


def _alternation(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, one branch per first character: at
    each "/" the engine tries a handful of branches, not every word."""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(
        f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in branches.items()
    )


class Globs:
    """Path globs (``*`` also matches ``/``; ``/x/*`` also matches ``/x``).

    Plain paths and ``prefix*`` patterns, nearly all of them in practice, are
    checked with a set and ``str.startswith``, asked only of a path within
    the range of those that share its second character; ``*/word/*`` patterns (a whole
    segment anywhere) the same way as the first segment and with one regex
    search for them all past it; only the rest go to a regex of their own.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        words: list[str] = []
        others: list[str] = []
        for pattern in patterns:
            segment = _SEGMENT.fullmatch(pattern)
            if segment is not None:
                # As the first segment, the fast way below ("/login" exact,
                # "/login/" a prefix); further on, one search for all words.
                word = segment.group(1)
                exact.add(f"/{word}")
                prefixes.append(f"/{word}/")
                words.append(word)
                continue
            if pattern.endswith("/*"):
                bare = pattern[:-2]  # /x/* matches /x too: a glob if x is one
                if any(c in bare for c in "*?["):
                    others.append(fnmatch.translate(bare))
                else:
                    exact.add(bare)
            head = pattern[:-1] if pattern.endswith("*") else pattern
            # A prefix of no character but _LAST ("*" alone) bounds no range.
            if any(c in head for c in "*?[") or not head.rstrip(_LAST):
                others.append(fnmatch.translate(pattern))
            elif head == pattern:
                exact.add(pattern)
            else:
                prefixes.append(head)
        self._exact = frozenset(exact)
        # Prefixes and plain paths by their second character (the one after
        # "/"), so that a path is checked against the few that may match, and
        # only when it lies in their range: two comparisons, where a set
        # lookup hashes a new path and str.startswith parses its arguments on
        # every call (most paths match none, many share the initial of one:
        # "/pages", "/password").
        starting: dict[str, list[str]] = {}
        for prefix in prefixes:
            starting.setdefault(prefix[1:2], []).append(prefix)
        plain: dict[str, list[str]] = {}
        for path in exact:
            plain.setdefault(path[1:2], []).append(path)
        short = starting.pop("", [])  # "/": any path may match
        short_plain = plain.pop("", [])  # "/" itself
        self._buckets = {
            c: _bucket(starting.get(c, []) + short, plain.get(c, []) + short_plain)
            for c in starting.keys() | plain.keys()
        }
        self._short = _bucket(short, short_plain)
        # A segment starts after a "/" and ends at the next "/" or the end.
        self._segments = (
            re.compile(f"/(?:{_alternation(words)})(?:/|\\Z)").search if words else None
        )
        self._regex = re.compile("|".join(others)) if others else None
        self.empty = not (exact or prefixes or words or others)

    def match(self, path: str) -> bool:
        return self.anchored(path) or self.deeper(path)

    def anchored(self, path: str) -> bool:
        """Whether a pattern matches, the segment words looked for in the
        first segment only: the cheap part, run on every request."""
        low, high, prefixes = self._buckets.get(path[1:2], self._short)
        if low <= path < high and (path in self._exact or path.startswith(prefixes)):
            return True
        return self._regex is not None and self._regex.match(path) is not None

    def deeper(self, path: str) -> bool:
        """Whether a segment word is a later segment of ``path``: one regex
        search, left to the pages about to be recorded."""
        return self._segments is not None and self._segments(path, 1) is not None


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
# Request headers a response may vary on and still be the page a crawler gets:
# those every client sends to negotiate the content (RFC 9110 §12.5: a page's
# types, encodings, languages; and User-Agent, which crawlers send too), the
# Host (part of the URL itself), and Authorization (a request carrying it is
# never recorded: varying on it, the response is the anonymous variant). Cookie
# is settled apart (cookie_action). A response varying on any other request
# header (htmx's HX-Request, Turbo-Frame, X-Requested-With, X-PJAX: what a
# partial request carries) is the page only to a request without that header
# (DEPENDS; varied).
NEGOTIATED = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "user-agent",
        "host",
        "authorization",
    }
)
_STAR: tuple[str, ...] = ("*",)
"""The request headers of ``Vary: *``: any at all (RFC 9110 §12.5.5)."""
# How many distinct Host values keep their verdict (an attacker can send many),
# and how many header names and media types theirs (the app chooses those).
_HOST_CACHE = 256
_NAME_CACHE = 512
# How many characters after "/" keep what they tell (any path may bring one).
_INITIAL_CACHE = 512

Initial = tuple[bool, str, str, tuple[str, ...]]
"""What the character after "/" tells of a path: whether a document's path
may start so, and the bucket of the excluded paths and prefixes that do."""


class Policy:
    """The recording rules of one configuration, compiled once."""

    def __init__(self, config: Config) -> None:
        self._excluded = Globs(config.exclude)
        self._exclude = config.exclude
        self._each_exclude: list[tuple[str, Globs]] | None = None
        self._included = Globs(config.include)
        # An exclude pattern that only a regex matches ("/*.pdf"), or include
        # patterns: few configs have either, and request_skip tests this
        # alone when there are none.
        self._rare_rules = self._excluded._regex is not None or not self._included.empty
        hosts = config.allowed_hosts
        self._any_host = "*" in hosts
        self._hosts = frozenset(h for h in hosts if not h.startswith("."))
        self._host_suffixes = tuple(h for h in hosts if h.startswith("."))
        self._host_verdicts: dict[str | bytes, bool] = {}
        # Header names (str or bytes, as sent) -> the watched name or "", and
        # Content-Type values -> whether HTML: both chosen by the app, so few.
        self._names: dict[str | bytes, str] = {}
        # Vary values (str or bytes, as sent) -> the request headers the
        # response depends on (_varies): chosen by the app, so few.
        self._varies: dict[str | bytes, tuple[str, ...]] = {}
        self._html_types: dict[str | bytes, bool] = {}
        # Cookies: None (any cookie but the harmless ones identifies), the
        # names that do, or "*" (any cookie at all does).
        named = config.session_cookies
        self._session_cookies = named
        self._any_cookie = named is not None and "*" in named
        harmless = config.harmless_cookies
        self._harmless = frozenset(n for n in harmless if not n.endswith("*"))
        self._harmless_prefixes = tuple(n[:-1] for n in harmless if n.endswith("*"))
        # Only with named session cookies may a request that reaches the app
        # carry a cookie that is not harmless: then a response varying on
        # cookies, or setting one, depends on the request's cookies (DEPENDS).
        self._vary_depends = named is not None and not self._any_cookie
        self._skip_set_cookie = config.skip_set_cookie
        self._base_url = config.base_url
        self._claim = config.documents.claim
        # What the paths of the middleware's own documents start with, and
        # the characters that follow their "/": request_skip tests the
        # prefixes only of a path whose second character is one of these.
        self._gate = config.documents.gate
        self._gate_initials: Container[str] = (
            _ANY if any(len(p) < 2 for p in self._gate) else {p[1] for p in self._gate}
        )
        # The character after "/" -> what it tells (_initial): one subscript
        # for both the gate and the exclude prefixes, as characters are met.
        self._initials: dict[str, Initial] = {}

    def is_own_path(self, path: str) -> bool:
        """Whether the middleware answers this path itself (robots.txt too:
        what is sent there is the middleware's, even when the app's). The
        claim is asked only of a path that starts as one of them does, as
        :meth:`request_skip` asks it: most paths are the app's."""
        return (
            path[1:2] in self._gate_initials
            and path.startswith(self._gate)
            and self._claim(path) is not None
        )

    def request_skip(
        self,
        method: str,
        path: str,
        host: str | bytes,
        authorization: bool,
        cookie: str,
    ) -> str | None:
        """Why a request can neither add nor remove a page, or ``None``.

        ``path`` is the decoded path; ``host`` is the ``Host`` header value
        as the adapter has it (WSGI's str, ASGI's latin-1 bytes: looked up
        as they are, decoded only when first seen).
        A path of the middleware's own documents always has a reason
        (``OWN_ENDPOINT`` when no other comes first): the adapter routes those
        paths among the requests skipped, so the others pay nothing for it.
        """
        if method != "GET":
            return Skipped.METHOD
        if authorization:
            return Skipped.AUTHORIZATION
        if cookie and self._has_session(cookie):
            return Skipped.SESSION
        try:  # a subscript costs less than a get() call
            verdict = self._host_verdicts[host]
        except KeyError:
            verdict = self._host_allowed(
                host if isinstance(host, str) else host.decode("latin-1")
            )
            if len(self._host_verdicts) < _HOST_CACHE:
                self._host_verdicts[host] = verdict
        if not verdict:
            return Skipped.HOST
        # The rules of path_skip but the exclude words past the first segment
        # (a regex search: the writer's refusal.refuse judges the pages it
        # records by them), inlined: this runs on every request. The
        # character after "/" (an index, where a slice builds a slice object
        # first; "/" alone has none) tells in one lookup whether the gate's
        # prefixes are to be tested, and which exclude prefixes.
        try:
            initial = path[1]
        except IndexError:
            initial = ""
        try:  # a subscript costs less than a get() call
            gated, low, high, prefixes = self._initials[initial]
        except KeyError:
            gated, low, high, prefixes = self._initial(initial)
        if gated and path.startswith(self._gate) and self._claim(path) is not None:
            return Skipped.OWN_ENDPOINT
        # Globs.anchored inlined (a Python call less on every request).
        if low <= path < high and (
            path in self._excluded._exact or path.startswith(prefixes)
        ):
            return Skipped.EXCLUDED
        if self._rare_rules:
            return self._rare_skip(path)
        return None

    def _rare_skip(self, path: str) -> str | None:
        """The rules of :meth:`request_skip` that few configs have: the
        exclude patterns that only a regex matches, then ``include``."""
        regex = self._excluded._regex
        if regex is not None and regex.match(path) is not None:
            return Skipped.EXCLUDED
        if not self._included.empty and not self._included.match(path):
            return Skipped.NOT_INCLUDED
        return None

    def _initial(self, initial: str) -> Initial:
        """What ``initial``, the character after "/", tells of a path;
        remembered."""
        excluded = self._excluded
        low, high, prefixes = excluded._buckets.get(initial, excluded._short)
        told = (initial in self._gate_initials, low, high, prefixes)
        if len(self._initials) < _INITIAL_CACHE:
            self._initials[initial] = told
        return told

    def path_skip(self, path: str) -> str | None:
        """Why a normalised path is never recorded, or ``None``."""
        if self.is_own_path(path):
            return Skipped.OWN_ENDPOINT
        if self._excluded.match(path):
            return Skipped.EXCLUDED
        if not self._included.empty and not self._included.match(path):
            return Skipped.NOT_INCLUDED
        return None

    def exclusion(self, path: str) -> str | None:
        """The first ``exclude`` pattern matching ``path``, or ``None``: what
        ``explain`` names (asked only of a path refused as excluded)."""
        if self._each_exclude is None:
            self._each_exclude = [(p, Globs((p,))) for p in self._exclude]
        return next((p for p, globs in self._each_exclude if globs.match(path)), None)

    def response_action(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]],
    ) -> str:
        """``RECORD``, ``REMOVE`` or the reason to skip, for an anonymous GET;
        ``DEPENDS`` when that depends on the request (a temporary redirect: see
        :meth:`redirect_action`; a response setting a cookie, or varying on
        cookies with named session cookies: see :meth:`cookie_action`; a
        response varying on a request header outside ``NEGOTIATED``: see
        :meth:`varied`). A ``noindex`` anywhere is ``REMOVE``; else the first
        reason to skip among the headers: their order changes nothing else.

        ``headers`` are WSGI's str pairs or ASGI's bytes pairs.
        """
        if status != 200:
            if status in REMOVAL_STATUSES:
                return REMOVE
            return DEPENDS if status in TEMPORARY_REDIRECTS else Skipped.STATUS
        names = self._names
        html = False
        depends = False
        # The first reason to skip, noted while the walk goes on: a noindex
        # anywhere removes the page, whatever header comes first.
        skip = None
        for raw_name, raw_value in headers:
            # Subscripts, not get(): a method call costs more than the lookup,
            # and a name or media type is new but a few times.
            try:
                name = names[raw_name]
            except KeyError:
                name = self._name(raw_name)
            if not name:  # most headers: Content-Length, Date, ETag...
                continue
            if name == "content-type":  # on every response: its value as sent
                try:
                    html = self._html_types[raw_value]
                except KeyError:
                    html = self._is_html(raw_value)
                continue
            if name == "vary":
                # A request that reaches this far carries no Authorization and
                # no identifying cookie: a response varying on them is the
                # variant a crawler gets (invariant 22); one varying on another
                # request header depends on whether the request carries it.
                try:
                    varied = self._varies[raw_value]
                except KeyError:
                    varied = self._vary(raw_value)
                if varied:
                    if varied is _STAR:
                        skip = skip or Skipped.VARY
                    else:
                        depends = True
                continue
            value = (
                raw_value.decode("latin-1")
                if isinstance(raw_value, bytes)
                else raw_value
            )
            if name == "x-robots-tag":
                if is_noindex(value):
                    return REMOVE
            elif name == "set-cookie":
                # A request that reaches this far carries no Authorization and
                # no identifying cookie: what it is answered, cookie included,
                # is the page a crawler gets (crawlers keep no cookies), such
                # as a form's CSRF token put in a new session (invariant 22).
                # What the request's query or cookies may have asked for is
                # settled by cookie_action (DEPENDS).
                if self._skip_set_cookie:
                    skip = skip or Skipped.SET_COOKIE
                depends = True
            elif name == "cache-control":
                lowered = value.lower()
                if "private" in lowered or "no-store" in lowered:
                    skip = skip or Skipped.PRIVATE
            elif name == "content-encoding":
                if value.strip().lower() not in ("", "identity"):
                    skip = skip or Skipped.ENCODED
            else:  # content-disposition
                skip = skip or Skipped.ATTACHMENT
        if skip is not None:
            return skip
        if not html:
            return Skipped.NOT_HTML
        return DEPENDS if depends else RECORD

    def varied(
        self, headers: Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]]
    ) -> tuple[str, ...]:
        """The request headers (lower-case names) a response's ``Vary``
        lines depend on, ``Cookie`` among them only with named session
        cookies (see :meth:`cookie_action`): asked of a response whose action
        is ``DEPENDS``."""
        found: tuple[str, ...] = ()
        for raw_name, raw_value in headers:
            try:
                name = self._names[raw_name]
            except KeyError:
                name = self._name(raw_name)
            if name == "vary":
                try:
                    found += self._varies[raw_value]
                except KeyError:
                    found += self._vary(raw_value)
        return found

    def _vary(self, raw: str | bytes) -> tuple[str, ...]:
        """The request headers a ``Vary`` value (str or bytes, as sent)
        depends on: ``_STAR`` for any, else the lower-case names outside
        ``NEGOTIATED`` (``cookie`` only with named session cookies);
        remembered."""
        value = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        if "*" in value:
            varied = _STAR
        else:
            names = (token.strip().lower() for token in value.split(","))
            varied = tuple(
                name
                for name in names
                if name
                and name not in NEGOTIATED
                and (name != "cookie" or self._vary_depends)
            )
        if len(self._varies) < _NAME_CACHE:
            self._varies[raw] = varied
        return varied

    def cookie_action(
        self,
        cookie: str,
        headers: Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]],
    ) -> str:
        """For a page that sets a cookie, or varies on cookies with named
        session cookies: ``RECORD``, or why not. ``cookie`` is every ``Cookie``
        line of the request joined. (A page that sets a cookie for a request
        whose query holds a parameter its URL drops, a credential perhaps, is
        the writer's to keep out: ``recording/digest.py``, where the route's
        kept parameters are known.)"""
        if self._vary_depends and cookie and self._identifies(cookie):
            # Named session cookies, and the request carries another cookie
            # that is not harmless (cart=, ab=, theme=): the page may answer
            # that cookie (a variant, a refreshed session), not what a
            # crawler gets.
            sets = any(
                (name if isinstance(name, str) else name.decode("latin-1")).lower()
                == "set-cookie"
                for name, _ in headers
            )
            return Skipped.SET_COOKIE if sets else Skipped.VARY
        return RECORD

    def redirect_action(
        self,
        headers: Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]],
        path: str,
        raw: bool,
    ) -> str:
        """For a temporary redirect: ``REMOVE`` when its ``Location`` (on the
        site's origin or relative, resolved against the request's ``path``)
        names an excluded path, such as a login page; else ``status``. A path
        outside ``include`` is no sign of a login (a redirect home is not).
        ``path`` is the wire form if ``raw``, else WSGI's ``PATH_INFO``."""
        where = location(headers)
        if where is None:
            return Skipped.STATUS
        page = path if raw else wsgi_path(path)
        # The stored form, as path_skip sees it; None for another origin.
        target = canonical_target(where, self._base_url, page, NO_QUERY)
        if target is None or not self._excluded.match(target):
            return Skipped.STATUS
        return REMOVE

    def _name(self, raw: str | bytes) -> str:
        """The watched header ``raw`` names, or ``""``; remembered."""
        text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        name = text.lower()
        if name not in _WATCHED:
            name = ""
        if len(self._names) < _NAME_CACHE:
            self._names[raw] = name
        return name

    def _is_html(self, raw: str | bytes) -> bool:
        """Whether a ``Content-Type`` value (str or bytes, as sent) is HTML;
        remembered."""
        content_type = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        # The media type is what precedes the parameters (RFC 9110 §8.3.1); a
        # full parse_options_header costs more than the rest of this method.
        html = content_type.partition(";")[0].strip().lower() in HTML_TYPES
        if len(self._html_types) < _NAME_CACHE:
            self._html_types[raw] = html
        return html

    def _host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` value is allowed (asked once a value: cached)."""
        if self._any_host:
            return True
        named, host = host, host_name(host)
        own = urlsplit(self._base_url)
        if host == own.hostname:
            # A port named with base_url's own host is base_url's (its
            # scheme's when it names none): www.example.com:8443 is another
            # origin, which an app that builds links from the request
            # (url_for(_external=True)) writes into its canonical link, and
            # that removes the page. None named is the host's (a proxy's
            # $host drops it); other allowed hosts keep any port.
            port = named.rpartition("]")[2] if named.startswith("[") else named
            own_port = own.port or DEFAULT_PORTS[own.scheme]
            return port.partition(":")[2] in ("", str(own_port))
        return host in self._hosts or (
            bool(self._host_suffixes)
            and any(
                host.endswith(suffix) or host == suffix[1:]
                for suffix in self._host_suffixes
            )
        )

    def _has_session(self, cookie: str) -> bool:
        """Whether the ``Cookie`` header makes the request private."""
        named = self._session_cookies
        if named is None:
            return self._identifies(cookie)
        if self._any_cookie:
            return not cookie.isspace()
        for pair in cookie.split(";"):
            if pair.partition("=")[0].strip() in named:
                return True
        return False

    def _identifies(self, cookie: str) -> bool:
        """Whether the ``Cookie`` header holds a cookie that is not harmless.
        Names are compared as sent (RFC 6265 §5.4: case-sensitive); a pair
        without ``=`` is a cookie with an empty name (RFC 6265bis), so it
        identifies."""
        harmless = self._harmless
        prefixes = self._harmless_prefixes
        for pair in cookie.split(";"):
            name = pair.partition("=")[0].strip()
            if name in harmless or (name and name.startswith(prefixes)):
                continue
            if name or pair.strip():
                return True
        return False
