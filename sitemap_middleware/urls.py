"""URL normalisation: one canonical, percent-encoded ASCII spelling per page.

Follows RFC 3986 §6.2.2 (case, percent-encoding, dot segments) and keeps only
allow-listed query parameters, in a canonical order.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"
_PATH_SAFE = _UNRESERVED | frozenset(b"!$&'()*+,;=:@/")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# A path with a control character or DEL is never a page anyone links to.
_CONTROL = frozenset(range(0x20)) | {0x7F}


def wsgi_path(path_info: str) -> str:
    """Turn WSGI's decoded ``PATH_INFO`` (latin-1 over raw bytes) into raw form."""
    return quote(path_info.encode("latin-1"), safe="/!$&'()*+,;=:@~")


def normalise_path(raw: str) -> str | None:
    """Return the canonical spelling of a raw request path, or ``None``.

    ``raw`` is the path as sent on the wire: ``%XX`` escapes are escapes and
    other characters stand for one byte each (latin-1). Unreserved characters
    are decoded, other escapes upper-cased, everything outside ``pchar``
    encoded, and dot segments removed. Paths with control characters or
    bytes that are not UTF-8 give ``None``. The result is a fixed point.
    """
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
    kept = sorted((k, v) for k, v in pairs if k in allowed and not is_secret_name(k))
    return urlencode(kept, quote_via=quote, safe="-._~")


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
# A JSON Web Token: three base64url parts, the first one '{"' encoded.
_JWT = re.compile(r"eyJ[\w-]+\.[\w-]{2,}\.[\w-]*")
_HEX = re.compile(r"[0-9A-Fa-f]{32,}")
_TOKENISH = re.compile(r"[\w-]{32,}")


def is_secret_name(name: str) -> bool:
    """Whether a parameter name looks like it carries a credential."""
    if name.lower() in _SECRET_WORDS:
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.findall(name))


def _is_secret_segment(segment: str) -> bool:
    # Long hex, JWTs and long random mixed-case tokens are invitation, reset
    # and download links, not pages; slugs are lower-case words.
    if _HEX.fullmatch(segment) or _JWT.fullmatch(segment):
        return True
    return bool(
        _TOKENISH.fullmatch(segment)
        and any(c.isupper() for c in segment)
        and any(c.islower() for c in segment)
        and any(c.isdigit() for c in segment)
    )


def strip_secrets(path: str) -> str | None:
    """Drop credential matrix parameters (``;jsessionid=...``) from a
    normalised path; ``None`` if a segment itself looks like a secret."""
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if ";" in segment:
            name, *params = segment.split(";")
            kept = [p for p in params if not is_secret_name(p.partition("=")[0])]
            segment = segments[index] = ";".join([name, *kept])
        # A JWT may be short ('{"alg":"HS256"}' and an empty payload: 26
        # characters); other tokens are long.
        if (len(segment) >= 32 or segment.startswith("eyJ")) and _is_secret_segment(
            segment
        ):
            return None
    return "/".join(segments)


def canonical_target(
    href: str, base_url: str, page: str, allowed: frozenset[str]
) -> str | None:
    """The path (and allowed query) a canonical link names, in stored form, or
    ``None`` when it points outside ``base_url`` or cannot be normalised.

    ``page`` is the stored path of the page carrying the link.
    """
    origin, prefix = split_base_url(base_url)
    parts = urlsplit(urljoin(f"{origin}{prefix}{page}", href.strip()))
    if f"{parts.scheme}://{parts.netloc}".lower() != origin.lower():
        return None
    if not parts.path.startswith(prefix + "/"):
        return None
    path = normalise_path(parts.path[len(prefix) :].encode("utf-8").decode("latin-1"))
    if path is None:
        return None
    query = filter_query(parts.query, allowed)
    return f"{path}?{query}" if query else path


def split_base_url(url: str) -> tuple[str, str]:
    """Split a validated ``base_url`` into origin and path prefix (no trailing /)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
