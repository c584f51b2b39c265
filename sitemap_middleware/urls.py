"""URL normalisation: one canonical, percent-encoded ASCII spelling per page.

Follows RFC 3986 §6.2.2 (case, percent-encoding, dot segments) and keeps only
allow-listed query parameters, in a canonical order; tells secrets and tracking
parameters apart from what names a page. Never raises on what a page says.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import SplitResult, parse_qsl, quote, urlencode, urljoin, urlsplit

from .sitemaps import MAX_URL_LENGTH
from .tracking import TRACKING_PARAMETERS as TRACKING_PARAMETERS
from .tracking import TRACKING_PREFIXES as TRACKING_PREFIXES
from .tracking import is_tracking as is_tracking
from .tracking import only_tracking as only_tracking

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"
_PATH_SAFE = _UNRESERVED | frozenset(b"!$&'()*+,;=:@/")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# A path with a control character or DEL is never a page anyone links to.
_CONTROL = frozenset(range(0x20)) | {0x7F}
# A path of pchar and "/" only, no escape: what nearly every request sends, and
# already its own canonical spelling but for dot segments.
_PLAIN = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")


def wsgi_path(path_info: str) -> str:
    """Turn WSGI's decoded ``PATH_INFO`` (latin-1 over raw bytes) into raw form."""
    try:
        raw = path_info.encode("latin-1")
    except UnicodeEncodeError:  # not bytes as latin-1 (PEP 3333): text, as UTF-8
        raw = path_info.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/!$&'()*+,;=:@~")


def normalise_path(raw: str) -> str | None:
    """Return the canonical spelling of a raw request path, or ``None``.

    ``raw`` is the path as sent on the wire: ``%XX`` escapes are escapes and
    other characters stand for one byte each (latin-1). Unreserved characters
    are decoded, other escapes upper-cased, everything outside ``pchar``
    encoded, and dot segments removed. Paths with control characters or
    bytes that are not UTF-8 give ``None``. The result is a fixed point.
    """
    if _PLAIN.fullmatch(raw):  # the loop below would keep every character
        return remove_dot_segments(raw)
    data = bytearray()
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "%" and (m := _ESCAPE.match(raw, i)):
            byte = int(m.group(1), 16)
            i += 3
        else:
            byte = ord(ch)
            i += 1
            if byte > 0xFF:  # not latin-1: a str path that was never bytes
                encoded = ch.encode("utf-8")
                data += encoded
                out.extend(f"%{b:02X}" for b in encoded)
                continue
            if byte in _PATH_SAFE:
                data.append(byte)
                out.append(ch)
                continue
        if byte in _CONTROL:
            return None
        data.append(byte)
        out.append(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    path = "".join(out)
    return remove_dot_segments(path if path.startswith("/") else "/" + path)


# A dot segment, "." or ".." (RFC 3986 §3.3), plain or percent-encoded.
_DOT_SEGMENT = re.compile(r"/(?:\.|%2[eE]){1,2}(?=/|$)")


def has_dot_segment(raw: str) -> bool:
    """Whether a raw request path holds a dot segment, which a browser
    resolves before it sends a path (RFC 3986 §5.2.4): an app routes such a
    path as sent, not as :func:`normalise_path` spells it."""
    return ("." in raw or "%" in raw) and _DOT_SEGMENT.search(raw) is not None


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, on an absolute path."""
    if "." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    result = "/" + "/".join(kept)
    # "/a/." and "/a/.." name a directory: keep the trailing slash.
    if segments[-1] in (".", "..") and not result.endswith("/"):
        result += "/"
    return result


def filter_query(query: str, allowed: frozenset[str]) -> str:
    """Keep the allow-listed parameters of a raw query string, sorted; a name
    that looks like a credential is dropped even when allow-listed."""
    if not query or not allowed:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8")
    kept = sorted(
        (k, v)
        for k, v in pairs
        if k in allowed and not is_secret_name(k) and _is_text(v)
    )
    return urlencode(kept, quote_via=quote, safe="-._~")


def _is_text(value: str) -> bool:
    """False for a lone surrogate (a WSGI header that was never bytes), which
    has no UTF-8 spelling to percent-encode."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Words that name credentials in parameter names (``token``, ``api_key``,
# ``X-Amz-Signature``, ``jsessionid``...). A URL carrying one is private.
_SECRET_WORDS = frozenset(
    {
        "auth", "code", "credential", "credentials", "jsessionid", "key",
        "nonce", "otp", "passwd", "password", "phpsessid", "pwd", "secret",
        "session", "sessionid", "sessid", "sid", "sig", "signature", "token",
        "apikey", "accesstoken", "authtoken",
    }
)  # fmt: skip
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_secret_name(name: str) -> bool:
    """Whether a parameter name looks like it carries a credential."""
    if name.lower() in _SECRET_WORDS:
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.findall(name))


def carries_secret(query: str) -> bool:
    """Whether a raw query string holds a parameter whose name looks like it
    carries a credential (:func:`is_secret_name`)."""
    pairs = parse_qsl(query, keep_blank_values=True)
    return any(is_secret_name(name) for name, _ in pairs)


# Random identifiers in a path segment. Invitation, reset, share and download
# links carry them; a page people find by searching is named by words, numbers
# and short ids. Each is searched in the whole segment, so that prefixes
# ("tok_", "sk-live-") and extensions (".pdf") hide none.
#
# A JSON Web Token: three base64url parts, the first one '{"' encoded. It may
# be short ('{"alg":"HS256"}' and an empty payload: 26 characters).
_JWT = re.compile(r"(?<![\w-])eyJ[\w-]+\.[\w-]{2,}\.[\w-]*")
# A UUID (RFC 9562 §4), any version, any case.
_UUID = re.compile(
    r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
    r"(?![0-9A-Fa-f])"
)
# At least 16 letters and digits in a row (64 bits of hex): hex digests and
# random hex, base32 (ULIDs), base62 and unbroken base64url. Shorter ids
# (YouTube's 11 characters, 12 hex of a slug suffix) stay pages.
_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]+")
# 20 characters or more of base64url's alphabet: a token its "-" and "_"
# break into pieces too short for _RUN.
_URLSAFE_RUN = re.compile(r"[A-Za-z0-9_-]{20,}")
_SEPARATORS = re.compile("[_-]")
# Where a random string changes kind and words rarely do: a letter next to a
# digit.
_KIND_CHANGE = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
# Where capitals fall as words do not put them: an acronym's last capital
# before a small letter ("DLPbw"), a small letter alone between capitals
# ("PnK"), a capital after a one-letter word ("aDC"). An acronym ending a
# piece ("HTML5", "ABCs") or starting a word ("XMLHttp") counts once at most.
_CAPITALS = re.compile(
    r"(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Z])[a-z](?=[A-Z])|(?<=[a-z][A-Z])(?=[A-Z])"
)
# Letter/digit changes that a word with a number in it does not reach
# ("galaxys24ultra" has two).
_RANDOM_CHANGES = 3
# Capitals alone in a row this long: base32 (RFC 4648 §6), not a word.
_LONG_CAPITALS = 20
# A run this long of letters and digits both is random whatever its case.
_LONG_RUN = 24


def is_random_id(segment: str) -> bool:
    """Whether a path segment holds a random identifier: a UUID, a hex string
    of 16 digits or more, or a base32, base62 or base64url token.

    Slugs (``how-to-bake-bread-in-2024``), dates, numbers of any length,
    ``sku-12345`` and short ids (up to 15 letters and digits in a row) are not.
    """
    if _UUID.search(segment):
        return True
    for run in _RUN.findall(segment):
        if run.isdigit():
            continue  # a number: an id, sequential, not a secret
        if _HEX_RUN.fullmatch(run):
            return True  # no word is made of a-f alone
        if run.isalpha():
            if run.isupper() and len(run) >= _LONG_CAPITALS:
                return True  # base32 without a digit; no slug shouts so long
            continue  # a long word
        if len(run) >= _LONG_RUN:
            return True
        if not (run.islower() or run.isupper()):
            return True  # mixed case, letters and digits: base62 or base64url
        if len(_KIND_CHANGE.findall(run)) >= _RANDOM_CHANGES:
            return True
    for run in _URLSAFE_RUN.findall(segment):
        if run.islower() or run.isupper():
            continue  # a slug (with a hex suffix, say): base64url mixes case
        # A token, cut by "-" and "_" or not: its pieces change kind all
        # along and put capitals side by side, where Title_Case_Words,
        # CamelCase and numbers between separators do not.
        odd = sum(
            len(_KIND_CHANGE.findall(piece)) + len(_CAPITALS.findall(piece))
            for piece in _SEPARATORS.split(run)
        )
        if odd >= 4 and odd * 5 >= len(run):
            return True
    return False


# The shortest segment a secret may be (_RUN's 16 letters and digits; a JWT,
# a UUID and _URLSAFE_RUN take more): strip_secrets looks into no shorter one.
_SHORTEST_SECRET = 16
_LONG_SEGMENT = re.compile(f"[^/]{{{_SHORTEST_SECRET}}}").search


def strip_secrets(path: str, public_ids: bool = False) -> str | None:
    """Drop credential matrix parameters (``;jsessionid=...``) from a
    normalised path; ``None`` if a segment itself looks like a secret.

    A segment holding a random identifier (:func:`is_random_id`) is taken for
    a secret link (an invitation, a shared document) unless ``public_ids``
    says the route's identifiers are public; a JSON Web Token is a credential
    either way.
    """
    if ";" not in path and _LONG_SEGMENT(path) is None:
        # No parameter to drop, no segment long enough for the checks below
        # (the loop's verdict, without a list of segments): most paths.
        return path
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if ";" in segment:
            name, *params = segment.split(";")
            kept = [p for p in params if not is_secret_name(p.partition("=")[0])]
            segment = segments[index] = ";".join([name, *kept])
        if len(segment) < _SHORTEST_SECRET:
            continue  # nothing below is this short
        if _JWT.search(segment) or (not public_ids and is_random_id(segment)):
            return None
    return "/".join(segments)


# The default port of each scheme a sitemap may name (RFC 9110 §4.2.1-4.2.2).
DEFAULT_PORTS = {"http": 80, "https": 443}
# A host name label (RFC 1123 §2.1): letters, digits, inner hyphens; IDNA
# labels ("xn--...") are of this form once encoded.
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def canonical_origin(parts: SplitResult) -> str | None:
    """The canonical origin of a split http(s) URL, ``scheme://host[:port]``,
    or ``None`` when it has none: scheme and host lower-cased, the host IDNA
    encoded (RFC 3986 §6.2.3, RFC 5891), an IPv6 literal in its RFC 5952 form,
    the default port left out. A URL with a user part names no origin here."""
    return _origin(parts.scheme, parts.netloc)


# A site's pages name a few origins, over and over (their own in every
# canonical link): each worked out once. Bounded: a page may name any.
@functools.lru_cache(maxsize=256)
def _origin(scheme: str, netloc: str) -> str | None:
    """:func:`canonical_origin` of a URL's scheme and netloc."""
    parts = SplitResult(scheme, netloc, "", "", "")
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS or "@" in parts.netloc:
        return None
    hostname = parts.hostname
    if not hostname:
        return None
    try:
        port = parts.port
        # Brackets hold an IP literal (RFC 3986 §3.2.2), an IPv6 address here:
        # Python 3.10's urlsplit lets "https://[x]" through as host "x".
        if "[" in parts.netloc:
            host = f"[{ipaddress.IPv6Address(hostname).compressed}]"
        else:
            host = hostname.encode("idna").decode("ascii").lower()
            if not all(map(_LABEL.fullmatch, host.split("."))):
                return None
    except ValueError:  # UnicodeError included: a bad port, label or literal
        return None
    if port == 0:
        return None
    if port is not None and port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}"


def canonical_target(
    href: str, base_url: str, page: str, allowed: frozenset[str]
) -> str | None:
    """The path (and allowed query) a link names, in stored form, or ``None``
    when it points outside ``base_url``, cannot be read or normalised, or
    would make a ``<loc>`` too long.

    ``page`` is the stored path of the page carrying the link. Origins are
    compared in canonical form (:func:`canonical_origin`): ``https://Example.com:443/a``
    is ``https://example.com/a``. Never raises on what a page says.
    """
    home, prefix = split_base_url(base_url)
    link = rest = href.strip()
    plain = _is_origin(home)  # as a checked base URL's is
    if plain and link.startswith(home):
        rest = link[len(home) :]  # a link to this origin, as written
    if plain and _SAME_ORIGIN_PATH.fullmatch(rest) and "/." not in rest:
        # A path of this origin with nothing urljoin would resolve (a dot
        # segment) or urlsplit would drop (a tab, a line break, an empty
        # ";" part): its path and query as written, which is what they would
        # give (tests/test_urls.py compares the two). Most canonical links,
        # images and alternates are of this form.
        written, _, query = rest.partition("#")[0].partition("?")
    else:
        try:
            # urllib raises ValueError on "http://[x" and on a host that NFKC
            # normalisation changes ("a\uff0fb"): no URL at all.
            parts = urlsplit(urljoin(f"{home}{prefix}{page}", link))
        except ValueError:
            return None
        if canonical_origin(parts) != home:
            return None
        written, query = parts.path, parts.query
    # RFC 3986 §6.2.3: an empty http(s) path is "/". Lone surrogates (a WSGI
    # header that was never bytes) become bytes that are not UTF-8: refused.
    raw = (written or "/").encode("utf-8", "surrogatepass").decode("latin-1")
    path = normalise_path(raw)
    if path is None or not path.startswith(prefix + "/"):
        return None
    path = path[len(prefix) :]
    query = filter_query(query, allowed)
    target = f"{path}?{query}" if query else path
    if len(base_url) + len(target) > MAX_URL_LENGTH:
        return None
    return target


# A root-relative link whose first segment is not empty (that would be a
# network-path reference, RFC 3986 §4.2), without a character urlsplit drops
# or a ";" (urlparse's parameters, rejoined without an empty one).
_SAME_ORIGIN_PATH = re.compile(r"/(?:[^/\t\n\r;][^\t\n\r;]*)?")


@functools.lru_cache(maxsize=16)  # a process has a base URL a site
def _is_origin(home: str) -> bool:
    """Whether ``home`` is its own canonical origin."""
    scheme, _, netloc = home.partition("://")
    return _origin(scheme, netloc) == home


def names_itself(url: str, base_url: str, page: str, allowed: frozenset[str]) -> bool:
    """Whether ``url`` (a canonical link, a redirect's ``Location``) names the
    page at ``page`` itself, on ``base_url`` in its scheme or the other one:
    as an app that builds its URLs from the request writes them for a request
    in the other scheme (``url_for(_external=True)``, a redirect from http to
    https, from a host to base_url's). Not another page, so not its removal."""
    if canonical_target(url, base_url, page, allowed) == page:
        return True
    scheme, _, rest = base_url.partition("://")
    other = "http" if scheme == "https" else "https"
    return canonical_target(url, f"{other}://{rest}", page, allowed) == page


@functools.lru_cache(maxsize=16)  # a process has a base URL a site
def split_base_url(url: str) -> tuple[str, str]:
    """Split a validated ``base_url`` into origin and path prefix (no trailing /)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


# A query parameter of a URI: its name and "=" (group 1, the name group 2),
# then its value; and the words of a name that say the value is a credential
# (libpq's "password" and "sslpassword", redis-py's "password", a "token").
_PARAMETER = re.compile(r"(?<![^?&;])(([^=&;#]*)=)([^&;#]*)")
_CREDENTIAL = re.compile(r"pass|pwd|secret|token|key", re.IGNORECASE)
HIDDEN = "***"


def redacted(uri: str) -> str:
    """``uri`` as it may be shown (an error, a log line, a report): the password
    of its user info and the value of each query parameter whose name says it
    holds a credential written as ``***``, the rest as given. Every place that
    shows a store URI shows it through this function."""
    scheme, slashes, rest = uri.partition("://")
    if slashes:
        end = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
        user_info, at, host = rest[:end].rpartition("@")
        user, colon, _ = user_info.partition(":")
        if at and colon:
            rest = f"{user}:{HIDDEN}@{host}{rest[end:]}"
        uri = scheme + slashes + rest
    before, mark, after = uri.partition("?")
    if not mark:
        return uri
    query, hash_mark, fragment = after.partition("#")
    query = _PARAMETER.sub(
        lambda m: m[1] + HIDDEN if _CREDENTIAL.search(m[2]) else m[0], query
    )
    return before + mark + query + hash_mark + fragment
