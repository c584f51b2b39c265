"""The date a page declares, as read_content takes it: from the sources the config
names, in order, and only when plausible (not before the web, not the response's
own time, not in the future); the images it keeps, as canonical_target reads
their URLs."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitemap_middleware.config import Config
from sitemap_middleware.page import facts
from sitemap_middleware.page.facts import (
    EARLIEST,
    RECENT,
    published_date,
    read_content,
    read_head,
)
from sitemap_middleware.page.head import Head
from sitemap_middleware.urls import canonical_target

SEEN = datetime(2025, 6, 1, 12, tzinfo=timezone.utc).timestamp()
ARTICLE = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
JSON_LD = datetime(2024, 2, 3, tzinfo=timezone.utc)
HEADER = datetime(2024, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
BODY = [
    b"<html><head>"
    b"<meta property='article:modified_time' content='2024-01-02T03:04:05Z'>"
    b'<script type="application/ld+json">{"@graph": [{"dateModified": "2024-02-03"},'
    b' {"dateModified": "2023-12-31"}]}</script></head><body>x'
]
HEADERS = [("Last-Modified", "Mon, 04 Mar 2024 05:06:07 GMT")]


def declared(
    source: str, body: list[bytes] = BODY, headers: object = HEADERS
) -> object:
    config = Config.from_mapping({"base_url": "http://a", "lastmod_source": source})
    head, _ = read_head(config, "/", frozenset(), body, headers)  # type: ignore[arg-type]
    return read_content(config, "/", body, headers, head, SEEN).lastmod  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("declared", ARTICLE),
        ("article", ARTICLE),
        ("last-modified", HEADER),
        ("changes", None),
        ("first-seen", None),
        ("content", None),
    ],
)
def test_the_source_decides(source: str, expected: datetime | None) -> None:
    assert declared(source) == expected


def test_each_source_in_order_and_the_newest_json_ld_date() -> None:
    body = [BODY[0].replace(b"article:modified_time", b"article:other")]
    assert declared("declared", body) == JSON_LD
    assert declared("declared", [b"<head><title>t</title></head>"]) == HEADER


def _header(moment: float) -> list[tuple[str, str]]:
    from werkzeug.http import http_date

    return [("Last-Modified", http_date(moment))]


@pytest.mark.parametrize(
    ("moment", "taken"),
    [
        (SEEN - RECENT - 1, True),
        (SEEN - RECENT + 1, False),  # the response's own time, give or take
        (SEEN, False),
        (SEEN + 3600, False),  # in the future
        (EARLIEST.timestamp(), True),
        (EARLIEST.timestamp() - 1, False),  # before the web
        (0, False),
    ],
)
def test_only_a_plausible_date_counts(moment: float, taken: bool) -> None:
    found = declared("last-modified", [b"x"], _header(moment))
    assert (found is not None) == taken
    if taken:
        assert found == datetime.fromtimestamp(int(moment), timezone.utc)


SERVED = datetime(2026, 6, 1, 12, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("published", "expected"),
    [
        ("2026-06-01T11:00:00+02:00", datetime(2026, 6, 1, 9, tzinfo=timezone.utc)),
        ("2026-06-01T12:00:00Z", datetime(2026, 6, 1, 12, tzinfo=timezone.utc)),
        # A moment ago is a fresh article, not a stamp of the response.
        ("2026-06-01T11:59:59Z", datetime(2026, 6, 1, 11, 59, 59, tzinfo=timezone.utc)),
        ("2026-05-31", datetime(2026, 5, 31, tzinfo=timezone.utc)),
        # A fraction of any length (W3C), on every supported Python.
        (
            "2026-06-01T11:00:00.5Z",
            datetime(2026, 6, 1, 11, 0, 0, 500000, tzinfo=timezone.utc),
        ),
        # Not plausible: after the response, before the web, no zone, no date.
        ("2026-06-01T12:00:01Z", None),
        ("1970-01-01T00:00:00Z", None),
        ("1990-12-31T23:59:59Z", None),
        ("2026-06-01T10:00:00", None),
        ("yesterday", None),
        ("9999-12-31T23:59:59-14:00", None),
        (None, None),
    ],
)
def test_published_date(published: str | None, expected: datetime | None) -> None:
    """An article's article:published_time, when plausible by the rule of
    declared dates (after 1990, not after it was seen) without its minute."""
    assert published_date(Head(published=published), SERVED) == expected
    assert EARLIEST.year == 1991
    # The same rule for JSON-LD's datePublished.
    said = () if published is None else (published,)
    assert published_date(Head(date_published=said), SERVED) == expected


def test_published_date_reads_the_meta_tag_then_json_ld() -> None:
    """The meta tag first; else the earliest plausible datePublished (a
    WebPage's and its Article's); never the modified dates."""
    at = datetime(2026, 5, 30, tzinfo=timezone.utc)
    meta = "2026-05-31T00:00:00Z"
    json_ld = ("2026-06-02", "2026-05-30", "nonsense", "2026-05-31")
    assert published_date(Head(published=meta, date_published=json_ld), SERVED) == (
        datetime(2026, 5, 31, tzinfo=timezone.utc)
    )
    assert published_date(Head(date_published=json_ld), SERVED) == at
    # An implausible meta tag is no date: JSON-LD's is read.
    head = Head(published="1970-01-01T00:00:00Z", date_published=json_ld)
    assert published_date(head, SERVED) == at
    modified = Head(modified="2026-05-01T00:00:00Z", date_modified=("2026-05-01",))
    assert published_date(modified, SERVED) is None


def test_a_backslash_in_an_image_url_is_a_slash() -> None:
    r"""As a browser reads an http(s) URL (WHATWG URL standard): a "\" is a
    "/", so "\\cdn.example\b.png" is another host's image."""
    config = Config.from_mapping({"base_url": "https://www.example.com"})
    sources = [r"/img\a.png", r"\\cdn.example\b.png", r"https:\\www.example.com\c.png"]
    assert facts._images(config, "/p", sources) == ("/img/a.png", "/c.png")


IMAGE_URLS = st.lists(
    st.tuples(
        st.sampled_from(["", "", "https:", "http:", "HTTPS:", "ftp:", " ", "\t"]),
        st.sampled_from(["//", "//", "/", ""]),
        st.sampled_from(
            ["www.example.com", "cdn.example.com", "WWW.example.com", "localhost"]
        )
        | st.sampled_from(["www.example.com.", "a..b", "x@www.example.com", ""])
        | st.sampled_from(["www.example.com:443", "localhost:8000", "xn--bcher-kva"]),
        st.sampled_from(["", "/", "/img/a.png", "/blog/a.png?x=1", "?q", "#f"])
        | st.sampled_from(["\n.evil/a", "/a\tb", "/./a", "/" + "x" * 2100]),
    ).map("".join),
    max_size=6,
)


@pytest.mark.parametrize(
    "base_url", ["https://www.example.com", "http://localhost:8000/blog"]
)
@settings(max_examples=300)
@given(IMAGE_URLS)
@example(["//", "///img/a.png", "https:///a.png", "//www.example.com/b.png"])
def test_images_are_what_canonical_target_reads(
    base_url: str, sources: list[str]
) -> None:
    """The shortcuts for a plain path and a plain foreign origin keep what
    resolving each URL keeps."""
    config = Config.from_mapping({"base_url": base_url})
    resolved = (canonical_target(s, base_url, "/p/a", frozenset()) for s in sources)
    expected = tuple(dict.fromkeys(i for i in resolved if i is not None))
    assert facts._images(config, "/p/a", sources) == expected


def test_a_utf_16_page_s_content_is_read_in_its_encoding() -> None:
    """As the head is read, so is the content: the fingerprint of a UTF-16
    page (its byte order mark says so) is the one it has in UTF-8."""
    config = Config.from_mapping({"base_url": "https://www.example.com"})
    text = (
        "<html><head><title>Contact</title></head><body><main>"
        '<input type="hidden" name="csrf" value="{}"> Write to us</main></body></html>'
    )
    html = [("text/html; charset=utf-8", text.format("a").encode())]
    html.append(("text/html", b"\xff\xfe" + text.format("b").encode("utf-16-le")))
    prints = set()
    for content_type, body in html:
        headers = [("Content-Type", content_type)]
        head, reason = read_head(config, "/contact", frozenset(), [body], headers)
        assert reason is None and head.title == "Contact"
        facts_ = read_content(config, "/contact", [body], headers, head)
        prints.add(facts_.fingerprint)
    assert len(prints) == 1
