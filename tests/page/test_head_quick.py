"""The head's quick scan finds what html.parser finds: generated heads (entities,
comments, scripts and templates inside the head, broken and unusual tags, heads
past the quick scan's first decode and past the budget) read both ways agree.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware.page.head import HEAD_BUDGET, QUICK_BYTES, Head, scan_head

SPACES = st.sampled_from([" ", "  ", "\n", "\t", "\r\n", "\f", "\xa0", "\x0b"])
VALUES = st.sampled_from(
    [
        "robots",
        "ROBOTS",
        " googlebot ",
        "bingbot",
        "noindex",
        "NoIndex, follow",
        "none",
        "&#110;oindex",
        "no&#105;ndex",
        "article:modified_time",
        "article&colon;modified_time",
        "article:published_time",
        "og:site_name",
        "OG:Site_Name",
        "description",
        "og:description",
        "De&#115;cription",
        "2024-05-01T10:00:00Z",
        "canonical",
        "Canonical",
        "alternate",
        "alternate stylesheet",
        "&#99;anonical",
        "/a",
        "/a/",
        " /b ",
        "https://www.example.com/x?y=1&amp;z=2",
        "en",
        "fr-CA",
        "x-default",
        "bad tag",
        "text/html",
        "application/rss+xml",
        "application/ld+json",
        "",
        "a>b",
        'x"y',
        "it's",
    ]
)
NAMES = st.sampled_from(
    [
        *("name", "NAME", "content", "property", "rel", "href", "hreflang", "type"),
        *("charset", "http-equiv", "data-x", "async", "a:b", "x_y", "lang"),
    ]
)
QUOTES = st.sampled_from(['"', "'", "", "bare"])


@st.composite
def attribute(draw: st.DrawFn) -> str:
    name, value, quote = draw(NAMES), draw(VALUES), draw(QUOTES)
    space = draw(st.sampled_from(["", " ", "\n"]))
    if quote == "bare":
        return name
    if quote and quote in value:
        quote = '"' if quote == "'" else "'"
    return f"{name}{space}={space}{quote}{value}{quote}"


@st.composite
def tag(draw: st.DrawFn) -> str:
    name = draw(
        st.sampled_from(["meta", "link", "base", "META", "Link", "script", "style"])
        | st.sampled_from(["html", "head", "title", "noscript", "template", "br"])
        | st.sampled_from(["div", "img", "body", "svg", "meta-x", "textarea"])
    )
    attributes = draw(st.lists(attribute(), max_size=4))
    written = "".join(draw(SPACES) + a for a in attributes)
    close = draw(st.sampled_from([">", ">", "/>", " />", " / >", ""]))
    return f"<{name}{written}{draw(st.sampled_from(['', ' ']))}{close}"


@st.composite
def declaration(draw: st.DrawFn) -> str:
    """A tag that declares something, written in one of many ways."""
    pairs = draw(
        st.sampled_from(
            [
                [("name", "robots"), ("content", "noindex")],
                [("NAME", "Googlebot"), ("content", "&#110;oindex, nofollow")],
                [("name", "bingbot"), ("content", "none")],
                [("property", "article:modified_time"), ("content", "2024-05-01")],
                [("rel", "canonical"), ("href", "/page")],
                [("rel", "Canonical"), ("href", "https://www.example.com/p?a=1&amp;b")],
                [("rel", "alternate"), ("hreflang", "fr"), ("href", "/fr/")],
                [("rel", "alternate"), ("hreflang", "de-AT"), ("href", "/de")],
                [("href", "/base/")],
                [("type", "application/ld+json")],
            ]
        )
    )
    name = {"href": "base", "type": "script"}.get(pairs[0][0], "meta")
    if pairs[0][0] == "rel":
        name = "link"
    if draw(st.booleans()):
        name = name.upper()
    quote = draw(st.sampled_from(['"', "'", ""]))
    written = ""
    for key, value in draw(st.permutations(pairs)):
        # A plain value cannot hold a space.
        mark = '"' if not quote and (" " in value or not value) else quote
        value = f"{mark}{value}{mark}"
        written += f"{draw(SPACES)}{key}={value}"
    extra = draw(st.lists(attribute(), max_size=2))
    written += "".join(draw(SPACES) + a for a in extra)
    close = draw(st.sampled_from([">", ">", "/>", " />"]))
    if name.lower() == "script":
        return f"<{name}{written}>{draw(SCRIPTS)}</script>"
    return f"<{name}{written}{close}"


TEXT = st.sampled_from(
    [
        "",
        "\n",
        "  \t",
        "A title &amp; more",
        "caf&eacute; &#8217;s",
        "&nbsp;",
        "&#32;",
        "&amp",
        "<b>bold</b>",
        "x < y",
        "<",
        "words",
        "</title",
    ]
)
SCRIPTS = st.sampled_from(
    [
        "var a = 1;",
        'var s = "</div>";',
        "if (a < b) {}",
        "<!-- x -->",
        "<!-- <script>x</script> -->",
        '{"@type": "WebPage", "dateModified": "2024-05-01"}',
        '{"@graph": [{"dateModified": "2023-01-01T00:00:00Z"}]}',
        "{bad json, dateModified",
        "",
    ]
)
OTHER = st.sampled_from(
    [
        "<!-- a comment -->",
        "<!---->",
        "<!-->",
        "<!--->",
        "<!-- a -- b -->",
        "<!-- x --!>",
        "<!-- unterminated",
        "<!DOCTYPE html>",
        "<!doctype html>",
        "<![CDATA[x]]>",
        "<![if x]>",
        "<?php echo 1; ?>",
        "<!x>",
        "</head>",
        "</HEAD >",
        "</ head>",
        "</br>",
        "</div>",
        "</title>",
        "</script>",
        "</template>",
        "<body>",
        "text",
        "&#32;",
        "&nbsp;",
        "<",
        "< a",
        "\n",
    ]
)


PLAIN = [
    "<title>A &amp; B</title>",
    "<TITLE>x</TITLE>",
    '<meta charset="utf-8">',
    '<link rel="stylesheet" href="/s.css">',
    "<script>var a = 1 < 2;</script>",
    "<style>p{}</style>",
    "<!-- a comment -->",
    "\n",
    "<base href=/b/>",
]


@st.composite
def piece(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["tag", "said", "said", "title", "raw", "other"]))
    if kind == "said":
        return draw(declaration())
    if kind == "tag":
        return draw(tag())
    if kind == "title":
        end = draw(st.sampled_from(["</title>", "</TITLE>", "</title >", ""]))
        return f"<title>{draw(TEXT)}{end}"
    if kind == "raw":
        name = draw(st.sampled_from(["script", "style", "SCRIPT"]))
        opened = draw(tag().filter(lambda t: t.endswith(">"))).split(" ", 1)
        attributes = opened[1] if len(opened) > 1 else ">"
        end = draw(st.sampled_from([f"</{name}>", "</script >", "</style>", ""]))
        return f"<{name} {attributes}{draw(SCRIPTS)}{end}"
    return draw(OTHER)


@st.composite
def document(draw: st.DrawFn) -> tuple[bytes, int]:
    start = draw(st.sampled_from(["", "<!doctype html>", "\ufeff", " \n"]))
    opening = draw(st.sampled_from(["<html><head>", "<html lang=en>\n<head>", ""]))
    # Plain heads, which the quick scan reads to their end, and any others.
    plain = st.one_of(declaration(), st.sampled_from(PLAIN))
    pieces = draw(
        st.lists(plain | piece() if draw(st.booleans()) else plain, max_size=12)
    )
    # Heads that go on past the quick scan's first decode and the budget.
    filler = draw(st.sampled_from([0, 0, 0, QUICK_BYTES - 40, QUICK_BYTES + 10]))
    if filler:
        pieces.insert(
            draw(st.integers(0, len(pieces))), f"<style>{'a' * filler}</style>"
        )
    ending = draw(st.sampled_from(["</head><body><p>x</p>", "<body>", "", "<main>"]))
    text = start + opening + "\n".join(pieces) + ending
    data = text.encode(draw(st.sampled_from(["utf-8", "utf-8", "latin-1"])), "replace")
    budget = draw(
        st.sampled_from([HEAD_BUDGET, HEAD_BUDGET, QUICK_BYTES, len(data) // 2 + 1])
    )
    return data, budget


def both(data: bytes, budget: int, charset: str | None) -> tuple[object, object]:
    def read(quick: bool) -> Head | str:
        try:
            return scan_head([data], budget, charset, quick=quick)
        except Exception as exc:  # compared, not raised: both or neither
            return type(exc).__name__

    return read(True), read(False)


@settings(max_examples=250, deadline=None)
@given(document(), st.sampled_from([None, None, "utf-8", "windows-1252"]))
def test_the_quick_scan_reads_generated_heads_as_html_parser(
    case: tuple[bytes, int], charset: str | None
) -> None:
    data, budget = case
    quick, parsed = both(data, budget, charset)
    assert quick == parsed


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(document(), st.sampled_from([None, "utf-8", "windows-1252", "shift_jis"]))
def test_the_quick_scan_reads_many_generated_heads_as_html_parser(
    case: tuple[bytes, int], charset: str | None
) -> None:
    data, budget = case
    quick, parsed = both(data, budget, charset)
    assert quick == parsed


def test_the_quick_scan_reads_a_plain_head() -> None:
    # Not only the same result: a result worth comparing, read by the quick
    # scan (a plain head, as most pages write it).
    data = (
        b"<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset=utf-8>\n"
        b"<title>Caf&eacute; &amp; co</title>\n"
        b'<meta name="robots" content="index, follow">\n'
        b'<meta property="article:modified_time" content="2024-05-01T10:00:00Z">\n'
        b'<meta property="article:published_time" content="2024-04-01">\n'
        b'<meta property="og:site_name" content="Caf&eacute;s">\n'
        b'<link rel="canonical" href="/caf%C3%A9">\n'
        b'<link rel="alternate" hreflang="fr" href="/fr/cafe">\n'
        b'<script type="application/ld+json">{"dateModified": "2024-05-02"}</script>\n'
        b"<style>p{color:red}</style>\n</head>\n<body><p>x</p></body>"
    )
    quick, parsed = both(data, HEAD_BUDGET, None)
    assert (
        quick
        == parsed
        == Head(
            canonicals=("/caf%C3%A9",),
            alternates=(("fr", "/fr/cafe"),),
            modified="2024-05-01T10:00:00Z",
            title="Café & co",
            date_modified=("2024-05-02",),
            published="2024-04-01",
            site_name="Cafés",
            lang="en",
        )
    )


def test_a_head_past_the_first_decode_is_read_whole() -> None:
    style = f"<style>{'a' * QUICK_BYTES}</style>"
    data = f"<head><title>t</title>{style}<meta name=robots content=noindex>"
    data += "</head><body>x</body>"
    quick, parsed = both(data.encode(), HEAD_BUDGET, None)
    assert quick == parsed
    assert isinstance(quick, Head) and quick.noindex


@pytest.mark.parametrize("inside", ["x" * 4000, "x-" * 2000, "-x" * 2000, "x--" * 1000])
def test_an_unclosed_comment_is_read_in_one_pass(inside: str) -> None:
    """A comment that never ends, as an attacker's page may hold: read in
    one pass by both scans, never by trying every split of it (a repeat
    inside a repeat, without possessive repeats, hangs here)."""
    data = f"<head><title>t</title><!--{inside}<meta name=robots content=noindex>"
    quick, parsed = both(data.encode(), HEAD_BUDGET, None)
    assert quick == parsed
