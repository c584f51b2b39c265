"""The URL normaliser (RFC 3986 §6.2.2): canonical, ASCII, idempotent."""

from __future__ import annotations

from urllib.parse import quote, unquote_to_bytes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.urls import (
    canonical_target,
    filter_query,
    is_secret_name,
    normalise_path,
    remove_dot_segments,
    strip_secrets,
    wsgi_path,
)

PCHAR = set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%"
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("/", "/"),
        ("", "/"),
        ("/A%7eB", "/A~B"),
        ("/A~B", "/A~B"),
        ("/%61bout", "/about"),
        ("/a%2fb", "/a%2Fb"),  # reserved stays encoded, hex upper-cased
        ("/a/./b/../c", "/a/c"),
        ("/a/b/..", "/a/"),
        ("/../../a", "/a"),
        ("/%2E%2E/a", "/a"),
        ("/caf\xc3\xa9", "/caf%C3%A9"),  # raw UTF-8 bytes as latin-1
        ("/caf€", "/caf%E2%82%AC"),  # beyond latin-1: taken as text, UTF-8
        ("/caf%c3%a9", "/caf%C3%A9"),
        ("/a b", "/a%20b"),
        ("/\"q'/", "/%22q'/"),
        ("/<x>", "/%3Cx%3E"),
        ("/100%", "/100%25"),
        ("/%zz", "/%25zz"),
        ("/a&b", "/a&b"),
        ("/p;jsessionid=1", "/p;jsessionid=1"),
    ],
)
def test_canonical_forms(raw: str, canonical: str) -> None:
    assert normalise_path(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    [
        "/%00",
        "/a%0Bb",
        "/%1F",
        "/%7F",
        "/a\tb",
        "/%C0%AF",
        "/%ED%A0%80",
        "/%FF",
        "/caf\xe9",
    ],
)
def test_rejected(raw: str) -> None:
    """Control characters and bytes that are not UTF-8 are refused."""
    assert normalise_path(raw) is None


def test_wsgi_path_keeps_bytes_apart_from_escapes() -> None:
    """A literal '%' in a decoded PATH_INFO is data, not an escape."""
    assert normalise_path(wsgi_path("/100%")) == "/100%25"
    assert normalise_path(wsgi_path("/caf\xc3\xa9")) == "/caf%C3%A9"
    assert normalise_path(wsgi_path("/a%2Fb")) == "/a%252Fb"


def test_remove_dot_segments_rfc_examples() -> None:
    """RFC 3986 §5.2.4's own examples."""
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("/mid/content=5/../6") == "/mid/6"


def test_filter_query() -> None:
    allowed = frozenset({"page", "lang"})
    assert filter_query("q=x&page=2&lang=de", allowed) == "lang=de&page=2"
    assert filter_query("page=a b&page=1", allowed) == "page=1&page=a%20b"
    assert filter_query("q=1", allowed) == ""
    assert filter_query("page=1", frozenset()) == ""


@given(st.text())
def test_idempotent_ascii_text(raw: str) -> None:
    """Any text: the result is ASCII pchar, and normalising it again changes nothing."""
    path = normalise_path(raw)
    if path is not None:
        assert path.isascii() and set(path) <= PCHAR
        assert path.startswith("/")
        assert normalise_path(path) == path


@given(st.binary())
def test_idempotent_on_wire_bytes(data: bytes) -> None:
    """Any bytes on the wire: ASCII fixed point or a rejection, never an error."""
    path = normalise_path("/" + data.decode("latin-1"))
    if path is not None:
        assert path.isascii()
        assert normalise_path(path) == path
        unquote_to_bytes(path).decode("utf-8")  # valid UTF-8 underneath


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"])))
def test_equivalent_spellings(text: str) -> None:
    """A path sent as raw UTF-8 bytes or percent-encoded gives one canonical form."""
    text = "/" + text.replace("%", "")
    raw = text.encode("utf-8").decode("latin-1")
    encoded = quote(text, safe="/!$&'()*+,;=:@")  # sub-delims are not equivalent
    assert normalise_path(raw) == normalise_path(encoded)


@pytest.mark.parametrize(
    "name",
    ["token", "access_token", "api_key", "apiKey", "X-Amz-Signature", "sig",
     "jsessionid", "PHPSESSID", "reset_code", "password", "auth"],
)  # fmt: skip
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["page", "q", "lang", "monkey", "sort", "category"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


SLUG = "/blog/a-very-long-slug-made-of-many-lower-case-words"
UUID = "/product/123e4567-e89b-12d3-a456-426614174000"


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/p;jsessionid=1A2B", "/p"),
        ("/p;color=red;sid=9", "/p;color=red"),
        (SLUG, SLUG),
        ("/invite/0123456789abcdef0123456789abcdef", None),
        ("/verify/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123", None),
        ("/reset/Zx8Kq2LmN4pR7sT1vW3yA6bC9dE0fGh5", None),
        (UUID, None),  # a random id is a secret unless its route says otherwise
    ],
)  # fmt: skip
def test_strip_secrets(path: str, kept: str | None) -> None:
    assert strip_secrets(path) == kept


def test_public_ids_keep_a_uuid() -> None:
    assert strip_secrets(UUID, public_ids=True) == UUID


def test_secret_query_parameters_dropped_even_if_allowed() -> None:
    assert filter_query("id=5&token=abc", frozenset({"id", "token"})) == "id=5"


@pytest.mark.parametrize(
    ("href", "target"),
    [
        ("/shop/about", "/about"),
        ("/about", None),  # outside the prefix
        ("about", "/blog/about"),
        ("https://www.example.com/shop/x?page=2&utm=1", "/x?page=2"),
        ("HTTPS://WWW.EXAMPLE.COM/shop/%7Ex", "/~x"),
        ("https://evil.example/shop/x", None),
        ("http://www.example.com/shop/x", None),  # other scheme: other origin
        ("https://www.example.com/elsewhere", None),  # outside the prefix
        ("/shop/café", "/caf%C3%A9"),
    ],
)
def test_canonical_target(href: str, target: str | None) -> None:
    base = "https://www.example.com/shop"
    assert canonical_target(href, base, "/blog/post", frozenset({"page"})) == target
