"""The head scanner: meta robots noindex and the canonical, in the <head> only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.head import Head, scan_head


def head_noindex(chunks: list[bytes]) -> bool:
    return scan_head(chunks).noindex


CASES = [
    (b"<html><head><meta name=robots content=noindex></head>", True),
    (b'<html><head><meta content="NoIndex, nofollow" name="ROBOTS"></head>', True),
    (b"<head><meta name='googlebot' content='none'><title>x</title>", True),
    (
        b"<head><meta name=robots content='index, follow'></head><body>none</body>",
        False,
    ),
    (b"<head><title>x</title></head><body><meta name=robots content=noindex>", False),
    (b"<head><title>x</title><body><meta name=robots content=noindex>", False),
    (b"<head><!-- <meta name=robots content=noindex> --></head>", False),
    (b"<head><meta name=description content=noindex></head>", False),
    (b"<head><meta name=robots content=noindex", False),  # unfinished tag
    (b"<head><meta name=robots content='noindex,\xff\xfe'></head>", True),
    (b"", False),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_cases(body: bytes, expected: bool) -> None:
    assert head_noindex([body]) is expected


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_every_split_gives_the_same_answer(body: bytes, expected: bool) -> None:
    for cut in range(len(body) + 1):
        assert head_noindex([body[:cut], body[cut:]]) is expected


@given(st.binary(max_size=2000), st.lists(st.integers(0, 2000), max_size=5))
def test_never_raises_and_ignores_splits(body: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [
        body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)
    ]
    assert head_noindex(pieces) == head_noindex([body])


def test_budget_bounds_the_scan() -> None:
    """A noindex past the byte budget is not seen (the scan is bounded)."""
    padding = b"<head>" + b"<meta name=x content=y>" * 4000
    assert head_noindex([padding + b"<meta name=robots content=noindex>"]) is False
    assert head_noindex([b"<head><meta name=robots content=noindex>" + padding]) is True


@pytest.mark.parametrize(
    ("body", "canonical"),
    [
        (b'<head><link rel="canonical" href="/a"></head>', "/a"),
        (
            b"<head><LINK REL='Canonical Alternate' HREF='https://x.test/b'>",
            "https://x.test/b",
        ),
        (b'<head><link href="/c" rel=canonical><link rel=canonical href=/d>', "/c"),
        (b"<head></head><body><link rel=canonical href=/e>", None),
        (b"<head><link rel=alternate href=/f hreflang=de></head>", None),
        (b"<head><link rel=canonical></head>", None),
    ],
)
def test_canonical(body: bytes, canonical: str | None) -> None:
    assert scan_head([body]) == Head(noindex=False, canonical=canonical)
