"""The head scanner and the Link header reader: noindex, canonicals, hreflang
alternates and the modified time, from the <head> only and from RFC 8288."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from html.parser import HTMLParser
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.page import head as head_module
from sitemap_middleware.page.charset import encoding_of
from sitemap_middleware.page.head import (
    HEAD_BUDGET,
    NOTHING,
    Head,
    merge,
    scan_head,
    scan_link_header,
)
from sitemap_middleware.page.parser import MAX_ALTERNATES, MAX_DATES, HeadParser

NOINDEX = b"<meta name=robots content=noindex>"


def head_noindex(chunks: list[bytes]) -> bool:
    return scan_head(chunks).noindex


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(body)) for c in cuts})
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]


CASES = [
    (b"<html><head><meta name=robots content=noindex></head>", True),
    (b'<html><head><meta content="NoIndex, nofollow" name="ROBOTS"></head>', True),
    (b"<head><meta name='googlebot' content='none'><title>x</title>", True),
    (b'<head><META NAME=" BingBot " CONTENT="googlebot: NOINDEX" /></head>', True),
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
    # A repeated attribute is dropped: the first one counts (HTML).
    (b"<head><meta name=robots name=description content=noindex>", True),
    (b"<head><meta name=description name=robots content=noindex>", False),
    (b"<head><meta name=robots content=index content=noindex>", False),
    (b"<head><meta name=robots><meta name=robots content>", False),
    # Where the head ends: an element it may not hold, text, or an implied body.
    (b"<head><img src=/pixel.gif><meta name=robots content=noindex>", False),
    (b"<head><link rel=icon href=/i>stray<meta name=robots content=noindex>", False),
    (b"<!doctype html><title>x</title><div><meta name=robots content=noindex>", False),
    (b"<head></html><meta name=robots content=noindex>", False),
    (b"<head></div><meta name=robots content=noindex>", True),  # ignored end tag
    (b"<!DOCTYPE html>\n<html lang=en>\n<!-- c -->\n<head>\n " + NOINDEX, True),
    (b"\xef\xbb\xbf<!doctype html>" + NOINDEX, True),  # a byte order mark
    # Content that is text, code or an inert fragment holds no declarations.
    (b"<head><title>" + NOINDEX + b"</title>", False),
    (b"<head><noscript>" + NOINDEX + b"</noscript>", False),
    (b"<head><noscript><img src=/p.gif></noscript>" + NOINDEX, True),
    (b"<head><template><p>" + NOINDEX + b"</template>", False),
    (b"<head><template><template></template>" + NOINDEX + b"</template>", False),
    (b"<head><template></template>" + NOINDEX, True),
    (b"<head><script>document.write('<body>')</script>" + NOINDEX, True),
    (b"<head><script/>let a = '<div>'</script>" + NOINDEX, True),
    (b"<head><style>body { display: none }</style>" + NOINDEX, True),
    # Unclosed comments and CDATA (a bogus comment up to the next ">" in HTML).
    (b"<head><!--" + NOINDEX, False),
    (b"<head><!-- x --!>" + NOINDEX, False),
    (b"<head><![CDATA[x]]>" + NOINDEX, True),
    (b"<head><![CDATA[ > ]]>" + NOINDEX, False),
    (b"<head><![x[ ]]>" + NOINDEX, True),  # html.parser 3.11 raised here
    (b"<head><![" + NOINDEX, False),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_cases(body: bytes, expected: bool) -> None:
    assert head_noindex([body]) is expected


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_every_split_gives_the_same_answer(body: bytes, expected: bool) -> None:
    whole = scan_head([body])
    assert whole.noindex is expected
    for cut in range(len(body) + 1):
        assert scan_head([body[:cut], body[cut:]]) == whole


# Pieces of heads, good and broken, for the property tests.
FRAGMENTS = [
    b"<html>",
    b"<head>",
    b"</head>",
    b"<body>",
    b"<title>",
    b"</title>",
    b"<script>",
    b"</script>",
    b"<noscript>",
    b"</noscript>",
    b"<template>",
    b"</template>",
    b"<div>",
    b"<!--",
    b"-->",
    b"<![CDATA[",
    b"]]>",
    b"<![x[",
    b"<!doctype html>",
    NOINDEX,
    b"<meta name='GoogleBot' content='none'>",
    b"<meta name=robots content=index>",
    b'<link rel="canonical" href="/a">',
    b"<link rel='alternate canonical' href=https://x.test/b hreflang=de>",
    b"<link rel=alternate hreflang=EN-gb href=/en>",
    b"<link rel=alternate hreflang=en-GB href=/uk>",
    b"<link rel=alternate type=application/rss+xml hreflang=fr href=/feed>",
    b'<meta property="article:modified_time" content="2026-01-02T03:04:05Z">',
    b"<base href=/en/>",
    b"<meta ",
    b"<link ",
    b"name=robots ",
    b"content=noindex ",
    b"rel=canonical ",
    b"hreflang=de ",
    b"href=/c ",
    b">",
    b"/>",
    b'"',
    b"'",
    b"=",
    b" ",
    b"\n",
    b"&amp;",
    b"&#110;",
    b"\xc3\xa9",
    b"\xff",
    b"</",
    b"<",
]
html = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=6)), max_size=40
).map(b"".join)


@given(html | st.binary(max_size=2000), st.lists(st.integers(0, 4000), max_size=6))
def test_never_raises_and_ignores_splits(body: bytes, cuts: list[int]) -> None:
    assert scan_head(split(body, cuts)) == scan_head([body])


@given(html)
def test_the_precheck_hides_nothing(body: bytes) -> None:
    """Skipping the tokenizer when no word is there changes no answer."""
    with mock.patch.object(head_module, "_may_declare", return_value=True):
        tokenized = scan_head([body])
    assert scan_head([body]) == tokenized


# Declarations the standard library's tokenizer has raised AssertionError on
# (3.10 to 3.13 read "<![" as an SGML marked section): each is followed by a
# noindex, so the tokenizer runs and must read past it.
ODD_DECLARATIONS = [
    b"<![x[ ]]>",
    b"<![ '",
    b"<![>",
    b"<![=",
    b"<![if x]>",
    b"<![xendif]>",
    b"<![<meta>",
    b"<![&#",
    b"<!attlist [x]>",
    b"<!x [>",
]


@pytest.mark.parametrize("odd", ODD_DECLARATIONS)
def test_odd_declarations_never_raise(odd: bytes) -> None:
    for body in (b"<head>" + odd + NOINDEX, b"<head>" + NOINDEX + odd):
        scan_head([body])  # no exception, whatever the verdict
    assert head_noindex([b"<head>" + NOINDEX + odd]) is True


def test_where_the_tokenizer_gives_up_what_it_read_stands() -> None:
    """Without the scanner's own reading of "<![", html.parser raises inside
    itself on "<![x["; the noindex read before it still counts."""
    with mock.patch.object(
        HeadParser,
        "parse_html_declaration",
        HTMLParser.parse_html_declaration,
    ):
        assert head_noindex([b"<head>" + NOINDEX + b"<![x[ <title>"]) is True


@pytest.mark.parametrize("error", [RuntimeError("bug"), AssertionError("bug")])
def test_a_bug_in_the_scanner_is_not_swallowed(error: Exception) -> None:
    """Only the tokenizer's own failures are absorbed: an exception raised by
    the scanner's handlers reaches the caller (the writer logs it as a bug)."""
    with (
        mock.patch.object(HeadParser, "_meta", side_effect=error),
        pytest.raises(type(error), match="bug"),
    ):
        scan_head([b"<head>" + NOINDEX])


def test_budget_bounds_the_scan() -> None:
    """A noindex past the byte budget is not seen (the scan is bounded)."""
    padding = b"<head>" + b"<meta name=x content=y>" * 4000
    assert head_noindex([padding + b"<meta name=robots content=noindex>"]) is False
    assert head_noindex([b"<head><meta name=robots content=noindex>" + padding]) is True


@pytest.mark.parametrize(
    "rest",
    [
        b"<meta name=x content=y>" * 500_000,  # a 10 MB head that never ends
        b"<!--" + b"<a>" * 3_500_000,  # an unclosed comment
        b"<meta content='" + b"x" * 10_000_000,  # an unclosed attribute value
        b"x" * 10_000_000,
    ],
)
def test_a_10_mb_body_is_read_to_the_budget_only(rest: bytes) -> None:
    pulled = 0

    def chunks() -> Iterator[bytes]:
        nonlocal pulled
        body = b"<head>" + NOINDEX + rest
        for offset in range(0, len(body), 1024):
            pulled += 1
            yield body[offset : offset + 1024]

    assert scan_head(chunks()) == Head(noindex=True)
    assert pulled <= HEAD_BUDGET // 1024


@pytest.mark.parametrize(
    ("body", "canonicals"),
    [
        (b'<head><link rel="canonical" href="/a"></head>', ("/a",)),
        (
            b"<head><LINK REL='Canonical Alternate' HREF='https://x.test/b'>",
            ("https://x.test/b",),
        ),
        (b'<head><link href="/c" rel=canonical><link rel=canonical href=/d>', ("/c",)),
        (b"<head></head><body><link rel=canonical href=/e>", ()),
        (b"<head><link rel=alternate href=/f hreflang=de></head>", ()),
        (b"<head><link rel=canonical></head>", ()),
        (b"<head><link rel=canonical href=' '><link rel=canonical href=/g>", ("/g",)),
        (b"<head><link rel=canonical href='/h?a=1&amp;b=2'>", ("/h?a=1&b=2",)),
        (b"<head><link rel='nofollow\tcanonical' href=/i>", ("/i",)),
        # Hrefs resolve against the document's first <base href>, wherever
        # it stands in the head.
        (b"<head><base href=/en/><link rel=canonical href=page>", ("/en/page",)),
        (b"<head><link rel=canonical href=page><base href=/en/>", ("/en/page",)),
        (
            b"<head><base href=https://cdn.test/><link rel=canonical href=/j>",
            ("https://cdn.test/j",),
        ),
        (
            b"<head><base target=_top><base href=/a/><base href=/b/>"
            b"<link rel=canonical href=k>",
            ("/a/k",),
        ),
        (b"<head><base href='http://[x'><link rel=canonical href=/l>", ("/l",)),
    ],
)
def test_canonical(body: bytes, canonicals: tuple[str, ...]) -> None:
    head = scan_head([body])
    assert head.canonicals == canonicals
    assert head.canonical == (canonicals[0] if canonicals else None)


@pytest.mark.parametrize(
    ("body", "alternates"),
    [
        (
            b'<head><link rel="alternate" hreflang="de" href="https://x.test/de/">'
            b"<link rel=alternate hreflang=x-default href=/>"
            b"<link rel=alternate hreflang=zh-Hant-TW href=/zh>"
            b"<link rel=alternate hreflang=es-419 href=/es>",
            (
                ("de", "https://x.test/de/"),
                ("x-default", "/"),
                ("zh-Hant-TW", "/zh"),
                ("es-419", "/es"),
            ),
        ),
        # The first per language wins; languages compare without case.
        (
            b"<head><link rel=alternate hreflang=' en-GB ' href=/uk>"
            b"<link rel=alternate hreflang=en-gb href=/other>",
            (("en-GB", "/uk"),),
        ),
        (
            b"<head><link rel='Alternate canonical' hreflang=fr href=/fr>",
            (("fr", "/fr"),),
        ),
        (
            b"<head><link rel=alternate type=application/rss+xml hreflang=en href=/f>"
            b"<link rel=alternate type='text/html; charset=utf-8' hreflang=en href=/e>",
            (("en", "/e"),),
        ),
        # Not language versions: no hreflang, a malformed one, no href.
        (
            b"<head><link rel=alternate media='only screen' href=/m>"
            b"<link rel=alternate hreflang=de_AT href=/a>"
            b"<link rel=alternate hreflang='de,at' href=/b>"
            b"<link rel=alternate hreflang=toolongsubtag href=/c>"
            b"<link rel=alternate hreflang href=/d>"
            b"<link rel=alternate hreflang=it>"
            b"<link rel=stylesheet hreflang=pt href=/s.css>",
            (),
        ),
        (
            b"<head><base href=/en/><link rel=alternate hreflang=de href=../de/>",
            (("de", "/de/"),),
        ),
        (b"<head></head><link rel=alternate hreflang=de href=/de>", ()),
    ],
)
def test_alternates(body: bytes, alternates: tuple[tuple[str, str], ...]) -> None:
    assert scan_head([body]).alternates == alternates


def test_alternates_are_capped() -> None:
    links = b"".join(
        b"<link rel=alternate hreflang=x-n%d href=/%d>" % (n, n) for n in range(150)
    )
    alternates = scan_head([b"<head>" + links]).alternates
    assert len(alternates) == MAX_ALTERNATES
    assert alternates[-1] == (f"x-n{MAX_ALTERNATES - 1}", f"/{MAX_ALTERNATES - 1}")


@pytest.mark.parametrize(
    ("body", "modified"),
    [
        (
            b'<head><meta property="article:modified_time" '
            b'content=" 2026-03-02T10:15:00+01:00 ">',
            "2026-03-02T10:15:00+01:00",
        ),
        (b"<head><meta name=article:modified_time content=2026-03-02>", "2026-03-02"),
        (
            b"<head><meta property=ARTICLE:MODIFIED_TIME content=2026-01-01>"
            b"<meta property=article:modified_time content=2026-02-02>",
            "2026-01-01",
        ),
        (
            b"<head><meta property=article:modified_time content=''>"
            b"<meta property=article:modified_time content=2026-02-02>",
            "2026-02-02",
        ),
        # Not in the Open Graph protocol, and often the whole site's time.
        (b"<head><meta property=og:updated_time content=2026-01-01>", None),
        (b"<head></head><meta property=article:modified_time content=2026>", None),
    ],
)
def test_modified(body: bytes, modified: str | None) -> None:
    assert scan_head([body]) == Head(modified=modified)


DECLARATIONS = (
    NOINDEX
    + b"<link rel=canonical href=/other>"
    + b"<link rel=alternate hreflang=de href=/de>"
    + b"<meta property=article:modified_time content=2026-01-01>"
)
DECLARED = Head(
    noindex=True,
    canonicals=("/other",),
    alternates=(("de", "/de"),),
    modified="2026-01-01",
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html><head><title>t</title>" + DECLARATIONS + b"</head>", DECLARED),
        (b"<html><head><title>t</title></head><body>" + DECLARATIONS, NOTHING),
        (b"<html><head></head>" + DECLARATIONS, NOTHING),  # after </head>
        (b"<html><title>t</title><body><p>" + DECLARATIONS, NOTHING),
        (b"<title>t</title><article><p>Hi</p>" + DECLARATIONS, NOTHING),
        (b"<title>t</title>Hi " + DECLARATIONS, NOTHING),
    ],
)
def test_only_the_head_declares(body: bytes, expected: Head) -> None:
    """User content in the body (a comment, a post) declares nothing, however
    it is wrapped, and the body need not be marked up. (The title is the
    page's wherever the head ends.)"""
    head = scan_head([body])
    assert replace(head, title=None) == expected
    assert head.title == ("t" if b"<title>" in body else None)


LINK_CASES: list[tuple[list[str | bytes], Head]] = [
    (['<https://x.test/a>; rel="canonical"'], Head(canonicals=("https://x.test/a",))),
    # Commas and semicolons inside <...> belong to the URL.
    (
        ["<https://x.test/a;v=1,2>; rel=canonical"],
        Head(canonicals=("https://x.test/a;v=1,2",)),
    ),
    (["</a> ; REL = Canonical"], Head(canonicals=("/a",))),
    (
        ['</a>; rel="alternate canonical"; hreflang=de'],
        Head(canonicals=("/a",), alternates=(("de", "/a"),)),
    ),
    # The first rel counts (RFC 8288 §3.3); the first canonical wins.
    (["</a>; rel=canonical; rel=next"], Head(canonicals=("/a",))),
    (["</a>; rel=next; rel=canonical"], NOTHING),
    (["</a>; rel=canonical, </b>; rel=canonical"], Head(canonicals=("/a",))),
    (["</a>; rel=canonical", "</b>; rel=canonical"], Head(canonicals=("/a",))),
    # Alternates, several hreflang parameters, several links and lines.
    (
        [
            '</de>; rel="alternate"; hreflang="de", </fr>; hreflang=fr; rel=alternate',
            "</ch>; rel=alternate; hreflang=de-CH; hreflang=fr-CH",
        ],
        Head(
            alternates=(
                ("de", "/de"),
                ("fr", "/fr"),
                ("de-CH", "/ch"),
                ("fr-CH", "/ch"),
            )
        ),
    ),
    (
        ["</a>; rel=alternate; hreflang=DE, </b>; rel=alternate; hreflang=de"],
        Head(alternates=(("DE", "/a"),)),
    ),
    (["</feed>; rel=alternate; type=application/rss+xml; hreflang=en"], NOTHING),
    (["</a>; rel=alternate; hreflang=de_AT"], NOTHING),
    # A link with an anchor is about another resource (RFC 8288 §3.2).
    (['</a>; rel=canonical; anchor="/b"'], NOTHING),
    (['</a>; rel=canonical; anchor=""'], Head(canonicals=("/a",))),
    # Quoted strings hold commas, semicolons and escaped quotes.
    (
        [
            '</a>; title="x, \\"y\\"; z"; rel=canonical, '
            "</de>; rel=alternate; hreflang=de"
        ],
        Head(canonicals=("/a",), alternates=(("de", "/de"),)),
    ),
    (['</a>; rel="can\\onical'], Head(canonicals=("/a",))),  # unterminated
    # Empty list elements; links of other kinds.
    ([" , ,</a>;rel=canonical,"], Head(canonicals=("/a",))),
    (
        ["</app.js>; rel=preload; as=script, <https://cdn.test>; rel=preconnect"],
        NOTHING,
    ),
    # Field bytes are UTF-8 when they are (WSGI gives them as latin-1 text).
    ([b"</caf\xc3\xa9>; rel=canonical"], Head(canonicals=("/caf\xe9",))),
    (["</caf\xc3\xa9>; rel=canonical"], Head(canonicals=("/caf\xe9",))),
    ([b"</caf\xe9>; rel=canonical"], Head(canonicals=("/caf\xe9",))),
    (["</caf\u20ac>; rel=canonical"], Head(canonicals=("/caf\u20ac",))),
    # Reading a line stops at what is not a link-value; other lines go on.
    (["garbage, </a>; rel=canonical", "</b>; rel=canonical"], Head(canonicals=("/b",))),
    (
        ["</a>; rel=canonical junk; x, </b>; rel=alternate; hreflang=de"],
        Head(canonicals=("/a",), alternates=(("de", "/b"),)),
    ),
    (["", "<", "<a", "</a", ";", "</a>; rel", "<>; rel=canonical", "\x00"], NOTHING),
]


@pytest.mark.parametrize(("values", "expected"), LINK_CASES)
def test_link_header(values: list[str | bytes], expected: Head) -> None:
    assert scan_link_header(values) == expected


def test_link_header_budget() -> None:
    """Links cut by the budget are dropped: their parameters may be partial."""
    value = "</a>; rel=canonical, </de>; rel=alternate; hreflang=de-AT"
    assert scan_link_header([value], budget=len(value)) == Head(
        canonicals=("/a",), alternates=(("de-AT", "/de"),)
    )
    assert scan_link_header([value], budget=len(value) - 3) == Head(canonicals=("/a",))
    assert scan_link_header(["</a>; rel=next", value], budget=14) == NOTHING


@given(st.lists(st.text() | st.binary(), max_size=4))
def test_link_header_never_raises(values: list[str | bytes]) -> None:
    scan_link_header(values)


token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)
link_values = st.builds(
    lambda target, rel, params: f"<{target}>; rel={rel}" + "".join(params),
    st.text(
        alphabet=st.characters(
            min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="<>"
        ),
        max_size=12,
    ),
    st.sampled_from(["canonical", '"alternate canonical"', "alternate", "next"]),
    st.lists(
        st.builds(
            lambda name, value: f"; {name}={value}",
            st.sampled_from(["hreflang", "type", "title", "x"]),
            token | token.map(lambda t: f'"{t},;"'),
        ),
        max_size=3,
    ),
)


@given(st.lists(link_values, max_size=5))
def test_field_lines_read_as_one_comma_list(values: list[str]) -> None:
    """Several field lines mean what one line joined with commas means
    (RFC 9110 §5.3)."""
    assert scan_link_header(values) == scan_link_header([", ".join(values)])


def test_merge() -> None:
    page = Head(
        noindex=False,
        canonicals=("/a",),
        alternates=(("de", "/de"), ("en", "/en")),
        modified="2026-01-01",
    )
    header = Head(canonicals=("/b",), alternates=(("DE", "/x"), ("fr", "/fr")))
    assert merge(page, header) == Head(
        noindex=False,
        canonicals=("/a", "/b"),  # each must name the page
        alternates=(("de", "/de"), ("en", "/en"), ("fr", "/fr")),
        modified="2026-01-01",
    )
    assert merge(page, Head(canonicals=("/a",))).canonicals == ("/a",)
    assert merge(NOTHING, header) == header
    assert merge(page, NOTHING) == page
    assert merge(Head(noindex=True), header).noindex is True


def test_merge_caps_alternates() -> None:
    many = tuple((f"x-n{n}", f"/{n}") for n in range(MAX_ALTERNATES))
    merged = merge(Head(alternates=many), Head(alternates=(("de", "/de"),)))
    assert merged.alternates == many


def test_merge_of_scans() -> None:
    """How the recorder combines a response's body and headers."""
    page = scan_head([b"<head><link rel=canonical href=/a>"])
    header = scan_link_header(["</b>; rel=canonical"])
    assert merge(page, header).canonicals == ("/a", "/b")


# -- a head longer than the budget: flagged, never judged on half of it -------------

SCRIPT = b"<script>" + b"var x = '<meta name=robots content=noindex>';\n" * 2000
BIG = b"<script>" + b"var a = 1 < 2;\n" * 5000 + b"</script>"  # 75 KB of head


@pytest.mark.parametrize(
    "body",
    [
        b"<html><head>" + BIG + NOINDEX + b"</head><body>x",
        b"<html><head>" + BIG + b"<title>t</title></head><body>x",  # says nothing
        b"<html><head><style>" + b".a{color:red}\n" * 6000 + b"</style></head>",
        b"<head>" + b"<meta name=x content=y>" * 4000,  # never ends
    ],
)
def test_a_head_past_the_budget_is_truncated(body: bytes) -> None:
    assert len(body) > HEAD_BUDGET
    scanned = scan_head([body])
    assert scanned.truncated and not scanned.noindex
    # However the body is cut into chunks.
    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)]
    assert scan_head(chunks) == scanned


@pytest.mark.parametrize(
    "body",
    [
        # The head ends within the budget, the body goes on.
        b"<html><head><title>t</title></head><body>" + b"<p>text</p>" * 20_000,
        b"<html><head><title>t</title><div>" + b"<p>text</p>" * 20_000,
        b"<html><head>" + b"<meta name=x content=y>" * 100 + b"<body>" + BIG * 2,
        # Short: read to its end, even if the head never closes.
        b"<html><head><title>t</title>" + b"<meta name=x content=y>" * 100,
        # A script's text holds no end: only the tokenizer sees where it ends.
        b"<head><script>'</head><body>'</script></head>" + b"x" * HEAD_BUDGET,
    ],
)
def test_a_head_read_to_its_end_is_not_truncated(body: bytes) -> None:
    assert not scan_head([body]).truncated


def test_a_noindex_read_is_not_undone_by_the_cut() -> None:
    """A noindex within the budget keeps the page out whatever follows."""
    body = b"<head>" + NOINDEX + BIG * 2
    assert scan_head([body]) == Head(noindex=True)


def test_a_noindex_in_script_text_past_the_budget_is_no_tag() -> None:
    body = b"<head>" + SCRIPT + b"</script></head>"
    assert scan_head([body]).truncated


def test_merge_keeps_truncated() -> None:
    cut = Head(truncated=True)
    assert merge(cut, NOTHING).truncated
    assert merge(cut, Head(canonicals=("/a",))).truncated
    assert not merge(cut, Head(noindex=True)).truncated


# -- attribute values as HTML decodes them ------------------------------------------


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (b"<meta name=robots content='&#110;oindex'>", Head(noindex=True)),
        (b"<meta name=robots content='&#x6E;oindex'>", Head(noindex=True)),
        (b"<meta name=robots content='&#X6e;OINDEX'>", Head(noindex=True)),
        (b"<meta name=robots content='n&#111index'>", Head(noindex=True)),
        (
            b"<meta name=robots content='&#00110;&#111;&#110;&#101;'>",
            Head(noindex=True),
        ),
        (b"<meta name='&#114;obots' content=noindex>", Head(noindex=True)),
        (b"<meta name='google&#98;ot' content='&#110;one'>", Head(noindex=True)),
        (
            b"<meta name=robots content='googlebot&colon; &#110;oindex'>",
            Head(noindex=True),
        ),
        (b"<link rel='c&#97;nonical' href=/a>", Head(canonicals=("/a",))),
        (
            b"<link rel=canonical href='/a?x=1&amp;y=2'>",
            Head(canonicals=("/a?x=1&y=2",)),
        ),
        # Values only: HTML reads no reference in an attribute's name.
        (b"<link rel=alternate href=/de hre&#102;lang=de>", NOTHING),
        (
            b"<meta property='article:modified&lowbar;time'"
            b" content=2024-01-01T00:00:00Z>",
            Head(modified="2024-01-01T00:00:00Z"),
        ),
        (
            b"<meta property='article:modified&UnderBar;time'"
            b" content=2024-01-01T00:00:00Z>",
            Head(modified="2024-01-01T00:00:00Z"),
        ),
    ],
)
def test_character_references_are_decoded(tags: bytes, expected: Head) -> None:
    assert scan_head([b"<html><head>" + tags + b"</head><body>x"]) == expected


@pytest.mark.parametrize(
    "text",
    [b"&#8217;", b"&#x2019;", b"&amp;", b"&nbsp;", b"&#1100;", b"&#x6e0;", b"&#47;"],
)
def test_the_precheck_still_skips_common_references(text: bytes) -> None:
    """References to no letter, digit, '_' or ':' leave the precheck to say no."""
    assert not head_module._may_declare(b"<head><title>it" + text + b"s</title>")


@given(st.sampled_from(list(b"noindexrbtsgcaplfhmdifedm_:0123456789")), st.booleans())
def test_any_referenced_character_reaches_the_tokenizer(byte: int, hexa: bool) -> None:
    reference = f"&#x{byte:x};" if hexa else f"&#{byte};"
    assert head_module._may_declare(reference.encode())


# -- JSON-LD dateModified ----------------------------------------------------------


def json_ld(text: str, media_type: str = "application/ld+json") -> bytes:
    return f'<head><script type="{media_type}">{text}</script>'.encode()


@pytest.mark.parametrize(
    ("body", "dates"),
    [
        (
            json_ld('{"@type": "Article", "dateModified": "2024-01-02"}'),
            ("2024-01-02",),
        ),
        # The items of a @graph, in order (Yoast writes WebPage and Article).
        (
            json_ld(
                '{"@graph": [{"@type": "WebPage", "dateModified": "2024-01-02"},'
                ' {"@type": "Article", "dateModified": " 2024-03-04T05:06:07Z "}]}'
            ),
            ("2024-01-02", "2024-03-04T05:06:07Z"),
        ),
        # A top-level array of objects, the media type's case and parameters.
        (
            json_ld(
                '[{"dateModified": "2024-01-02"}, 3, null]', "Application/LD+JSON; x=1"
            ),
            ("2024-01-02",),
        ),
        # Nested objects are other things: an author's, a list item's.
        (
            json_ld('{"author": {"dateModified": "2024-01-02"}, "dateModified": 7}'),
            (),
        ),
        (json_ld('{"@graph": {"dateModified": "2024-01-02"}}'), ()),
        # Not JSON-LD, bad JSON, too deep for the parser: no date, no error.
        (json_ld('{"dateModified": "2024-01-02"}', "application/json"), ()),
        (json_ld('{"dateModified": "2024-01-02"'), ()),
        (json_ld('{"dateModified": "2024-01-02", "x": ' + "[" * 100_000), ()),
        (json_ld('{"dateModified": "2024-01-02", "x": 1' + "0" * 5000 + "}"), ()),
        # In the body it is content.
        (b"<head></head><body>" + json_ld('{"dateModified": "2024"}')[6:], ()),
    ],
)
def test_json_ld_date_modified(body: bytes, dates: tuple[str, ...]) -> None:
    assert scan_head([body]).date_modified == dates


@pytest.mark.parametrize("quick", [True, False])
def test_json_ld_date_published_is_read_beside_date_modified(quick: bool) -> None:
    """The same script, the same objects: each property's values in order,
    a head without a title sent to the parser by either word alone."""
    graph = (
        '{"@context": "https://schema.org", "@graph": ['
        '{"@type": "WebPage", "datePublished": "2024-01-01", "dateModified": 5},'
        '{"@type": "NewsArticle", "datePublished": " 2024-01-02T03:04:05Z ",'
        ' "dateModified": "2024-02-03", "author": {"datePublished": "1999-01-01"}}'
        "]}"
    )
    head = scan_head([json_ld(graph) + b"<body>"], quick=quick)
    assert head.date_published == ("2024-01-01", "2024-01-02T03:04:05Z")
    assert head.date_modified == ("2024-02-03",)
    alone = scan_head([json_ld('[{"@type": "BlogPosting", "datePublished": "2024"}]')])
    assert (alone.date_published, alone.date_modified) == (("2024",), ())
    assert head_module._may_declare(b'"datepublished"')


def test_json_ld_dates_are_capped() -> None:
    items = ", ".join('{"dateModified": "2024-01-02"}' for _ in range(100))
    head = scan_head([json_ld(f'{{"@graph": [{items}]}}')])
    assert len(head.date_modified) == MAX_DATES
    items = ", ".join('{"datePublished": "2024-01-02"}' for _ in range(100))
    head = scan_head([json_ld(f'{{"@graph": [{items}]}}')])
    assert len(head.date_published) == MAX_DATES


# -- the page's charset -------------------------------------------------------------


@pytest.mark.parametrize(
    ("charset", "start", "expected"),
    [
        (None, b"<head><title>x", "utf-8"),
        ("UTF-8", b"", "utf-8"),
        ("windows-1252", b"", "cp1252"),
        # Browsers read ISO-8859-1 and ASCII labels as windows-1252 (WHATWG).
        ("iso-8859-1", b"", "cp1252"),
        ("us-ascii", b"", "cp1252"),
        ("Shift_JIS", b"", "cp932"),
        ("utf-16", b"", "utf-16-le"),
        # The header's charset before the page's <meta>.
        ("koi8-r", b'<meta charset="windows-1252">', "koi8-r"),
        (None, b'<meta charset="windows-1252">', "cp1252"),
        (None, b"<META CHARSET = 'shift_jis' >", "cp932"),
        (
            None,
            b'<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">',
            "euc_jp",
        ),
        # A page read in ASCII to find its <meta> is no UTF-16 page.
        (None, b'<meta charset="utf-16">', "utf-8"),
        # Only the first 1024 bytes are searched (HTML's prescan).
        (None, b" " * 1024 + b'<meta charset="windows-1252">', "utf-8"),
        # A byte order mark before anything declared.
        ("windows-1252", b"\xef\xbb\xbf<head>", "utf-8"),
        (None, b"\xff\xfe<\x00", "utf-16-le"),
        (None, b"\xfe\xff\x00<", "utf-16-be"),
        # Unknown, not text, or not the web's: UTF-8.
        ("no-such-charset", b"", "utf-8"),
        ("base64", b"", "utf-8"),
        ("utf-7", b"", "utf-8"),
        ("utf-8\x00", b"", "utf-8"),
        (None, b'<meta charset="rot13">', "utf-8"),
    ],
)
def test_encoding_of(charset: str | None, start: bytes, expected: str) -> None:
    assert encoding_of(charset, start) == expected


@pytest.mark.parametrize(
    ("text", "charset", "encoding"),
    [
        ("é", "windows-1252", "cp1252"),
        ("日本語", "shift_jis", "cp932"),
        ("日本語", "euc-jp", "euc_jp"),
        ("日本語 é", "utf-16-le", "utf-16-le"),
    ],
)
def test_every_declaration_is_read_in_the_page_s_charset(
    text: str, charset: str, encoding: str
) -> None:
    page = (
        f"<html><head><title>{text}</title>"
        f'<link rel="canonical" href="/{text}">'
        f'<link rel="alternate" hreflang="de" href="/de/{text}">'
        f'<meta property="article:modified_time" content="2024-01-02">'
        f'<script type="application/ld+json">{{"dateModified": "2024-01-03"}}</script>'
        f'<meta name="robots" content="nofollow"></head><body>'
    )
    head = scan_head([page.encode(encoding)], charset=charset)
    assert head == Head(
        canonicals=(f"/{text}",),
        alternates=(("de", f"/de/{text}"),),
        modified="2024-01-02",
        title=text,
        date_modified=("2024-01-03",),
        encoding=encoding,
    )
    # Read as UTF-8, the same bytes say something else.
    assert scan_head([page.encode(encoding)]).title != text


@pytest.mark.parametrize(
    ("text", "label", "written"),
    [
        # What sites labelled with the narrower name write: the superset
        # browsers read that label as (WHATWG Encoding Standard).
        ("① 髙橋", "Shift_JIS", "cp932"),
        ("① 髙橋", "x-sjis", "cp932"),
        ("똠방각하", "EUC-KR", "cp949"),
        ("镕 €", "gb2312", "gb18030"),
        ("㗎", "big5", "big5hkscs"),
        ("€ Ğ", "iso-8859-9", "cp1254"),
        ("€ ไทย", "tis-620", "cp874"),
    ],
)
def test_a_label_is_read_as_browsers_read_it(
    text: str, label: str, written: str
) -> None:
    """A title in a character only the wider encoding has (a circled digit
    of windows-31j, a Hangul syllable of windows-949...) reads as written,
    from the header's charset and from the page's <meta> alike."""
    page = f"<html><head><title>{text}</title></head><body>".encode(written)
    assert scan_head([page], charset=label).title == text
    declared = f'<meta charset="{label}">'.encode("ascii") + page
    assert scan_head([declared]).title == text


def test_noindex_in_utf_16() -> None:
    """An encoding that writes ASCII otherwise skips the byte search."""
    body = "<head><meta name=robots content=noindex>".encode("utf-16")
    assert scan_head([body]).noindex is True
    assert scan_head([body[2:]], charset="UTF-16LE").noindex is True


@given(
    html | st.binary(max_size=2000),
    st.sampled_from(
        [None, "utf-8", "windows-1252", "shift_jis", "utf-16", "utf-16-be", "x", "hex"]
    ),
)
def test_never_raises_in_any_charset(body: bytes, charset: str | None) -> None:
    scan_head([body], charset=charset)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'<html lang="en-GB"><head><title>T</title>'
            b'<meta property="article:published_time" content=" 2026-03-02T10:15:00Z ">'
            b'<meta property="og:site_name" content="The Daily &amp; Co">',
            Head(
                title="T",
                published="2026-03-02T10:15:00Z",
                site_name="The Daily & Co",
                lang="en-GB",
            ),
        ),
        # The first of each counts; a blank one is none.
        (
            b"<html lang=''><html lang=fr><head><title>T</title>"
            b"<meta name=article:published_time content=2026-01-01>"
            b"<meta property=article:published_time content=2027-01-01>"
            b"<meta property=og:site_name content=''>"
            b"<meta property=og:site_name content=Second>",
            Head(title="T", published="2026-01-01", site_name="Second", lang="fr"),
        ),
        # Character references in the attribute, read as html.parser reads them.
        (
            b"<html l&#97;ng=de><head><title>T</title>"
            b"<meta property=article&colon;published_time content=2026-01-01>",
            Head(title="T", published="2026-01-01"),
        ),
        # In the body, an article's own tags are content, not the page's.
        (
            b"<html><head><title>T</title></head><body>"
            b"<meta property=article:published_time content=2026-01-01>",
            Head(title="T"),
        ),
        # No title, yet the published time sends the head to be read.
        (
            b"<html lang=nl><head><meta property=article:published_time content=2026>",
            Head(published="2026", lang="nl"),
        ),
        # No title and nothing else declared: the language and the site's
        # name are read all the same.
        (b"<html lang=fr><head><meta charset=utf-8></head><body>x", Head(lang="fr")),
        (
            b"<html><head><meta property=og:site_name content=Acme></head>",
            Head(site_name="Acme"),
        ),
    ],
)
def test_news_facts(body: bytes, expected: Head) -> None:
    """What a news sitemap takes from the head: the published time, the site's
    name and the page's language, the quick scan and html.parser alike."""
    assert scan_head([body]) == expected
    assert scan_head([body], quick=False) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'<head><title>T</title><meta name="Description" content=" A &amp; B ">'
            b'<meta property="og:description" content="Open Graph">',
            Head(title="T", description="A & B"),
        ),
        # Open Graph's, without a meta description; its name spelling too.
        (
            b"<head><title>T</title><meta property=og:description content=OG>",
            Head(title="T", description="OG"),
        ),
        (b"<head><meta name=og:description content=OG>", Head(description="OG")),
        # The first one counts; a blank one is none; the body's are content.
        (
            b"<head><meta name=description content=''>"
            b"<meta name=description content=First>"
            b"<meta name=description content=Second></head>"
            b"<body><meta name=description content=Body>",
            Head(description="First"),
        ),
        (
            b"<head><title>T</title></head><body><meta name=description content=B>",
            Head(title="T"),
        ),
    ],
)
def test_description(body: bytes, expected: Head) -> None:
    """A page's description: its meta description, else its og:description,
    the quick scan and html.parser alike, the precheck letting it through."""
    assert scan_head([body]) == expected
    assert scan_head([body], quick=False) == expected
