"""The content fingerprint: per-request noise keeps it, content moves it; images."""

from __future__ import annotations

import os
import re
import secrets
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware.page.content import Content, fingerprint
from sitemap_middleware.sitemaps import BODY_BUDGET as BUDGET
from sitemap_middleware.sitemaps import MAX_IMAGES

CLOCK = re.compile(rb"\d{1,2}:\d{2}(?::\d{2})?")
VIEWS = re.compile(rb"[\d,]+ views")


def page(
    *,
    main: bool = True,
    csrf: str = "c5rf-t0ken",
    nonce: str = "n0nce",
    clock: str = "12:30:05",
    views: int = 1234,
    request_id: str = "r1",
    word: str = "quick",
    link: str = "/blog/related-post",
    image: str = "https://cdn.example.com/img/shed-3.jpg?w=800&amp;q=80",
    nav: str = "Home",
    footer: str = "About us",
) -> bytes:
    """A templated blog post of about 32 KiB: a head of 20-odd tags, a header and
    navigation, an article with paragraphs, links, figures and comments, a
    comment form with a CSRF token, inline scripts with nonces, a sidebar and a
    footer with the time it was rendered at and a view counter.

    The keywords before ``word`` are per-request noise; the others are content.
    Without ``main`` the article sits in a ``<div>``.
    """
    script = f'<script nonce="{nonce}">'
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>How we moved our garden shed | The Example Blog</title>",
        '<meta name="description" content="A long story about a garden shed.">',
        f'<meta name="csrf-token" content="{csrf}">',
        '<link rel="canonical" href="https://www.example.com/blog/garden-shed">',
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml">',
        '<link rel="icon" href="/static/favicon.ico">',
        '<link rel="preconnect" href="https://fonts.example.net">',
        '<link rel="stylesheet" href="/static/css/main.3f2a9c.css">',
        '<link rel="stylesheet" href="/static/css/print.css" media="print">',
        '<meta property="og:title" content="How we moved our garden shed">',
        '<meta property="og:type" content="article">',
        '<meta property="og:image" content="https://cdn.example.com/img/cover.jpg">',
        '<meta name="twitter:card" content="summary_large_image">',
        f'<style nonce="{nonce}">:root{{--accent:#c33}} body{{margin:0}}</style>',
        f"{script}window.dataLayer=window.dataLayer||[];"
        'function gtag(){dataLayer.push(arguments)}gtag("js",new Date());</script>',
        '<script type="application/ld+json">{"@context":"https://schema.org",'
        '"@type":"BlogPosting","headline":"How we moved our garden shed"}</script>',
        '<script src="/static/js/app.8c1d.js" defer></script>',
        "</head>",
    ]
    items = "".join(
        '<li class="nav-item"><a class="nav-link" '
        f'href="/section/{i}">{nav if i == 0 else f"Section {i}"}</a></li>'
        for i in range(24)
    )
    top = [
        f'<body class="post-template" data-request-id="{request_id}">',
        "<!-- Google Tag Manager (noscript) --><noscript><iframe "
        'src="https://www.googletagmanager.com/ns.html?id=GTM-X"></iframe></noscript>',
        '<header class="site-header"><div class="container">',
        '<a class="brand" href="/"><img src="/static/logo.svg" alt="Example"></a>',
        f'<nav class="site-nav" aria-label="Main"><ul class="nav">{items}</ul></nav>',
        '<form class="search" action="/search" method="get"><input type="search" '
        'name="q" placeholder="Search"><button type="submit">Go</button></form>',
        "</div></header>",
    ]
    article: list[str] = []
    for i in range(79):
        article.append(
            f"<p>Paragraph {i}: the <em>{word if i == 7 else 'quick'}</em> brown fox "
            "jumps over the lazy dog while we carried the shed across the lawn. "
            f'See <a href="/blog/post-{i}">post {i}</a> and <a rel="nofollow" '
            f'href="https://www.example.org/ref/{i}">the reference</a> for details '
            "about foundations, &amp; what to do when the ground is soft.</p>"
        )
        if i % 8 == 3:
            src = image if i == 3 else f"https://cdn.example.com/img/shed-{i}.jpg"
            article.append(
                f'<figure class="wp-block-image"><img src="{src}" alt="Step {i}" '
                f'loading="lazy" data-id="{request_id}-{i}">'
                f"<figcaption>Step {i} of the move</figcaption></figure>"
            )
        if i % 10 == 5:
            article.append(f'<h2 id="h-{i}">Part {i // 10 + 1}</h2>')
    comments = "".join(
        f'<li class="comment" id="c{i}"><p class="author">Reader {i}</p>'
        f"<p>Great post, thanks for sharing number {i}!</p></li>"
        for i in range(10)
    )
    tag = "main" if main else "div"
    body = [
        f'<{tag} id="content" class="site-main" data-nonce="{nonce}">',
        '<article class="post"><header class="post-header">',
        "<h1>How we moved our garden shed</h1>",
        '<p class="meta">By <a href="/authors/jane">Jane Doe</a> on '
        '<time datetime="2024-03-01">1 March 2024</time></p></header>',
        '<div class="post-content">',
        *article,
        f'<p>Related: <a href="{link}">a related post</a></p>',
        "</div>",
        '<section class="comments"><h2>Comments</h2>',
        f'<ol class="comment-list">{comments}</ol>',
        '<form class="comment-form" action="/blog/garden-shed/comments" method=post>',
        f'<input type="hidden" name="csrfmiddlewaretoken" value="{csrf}">',
        '<label for="comment">Comment</label><textarea id="comment" name="comment">'
        "</textarea>",
        '<button type="submit">Post comment</button></form></section>',
        f"{script}document.querySelectorAll('img').forEach(function(i)"
        "{if(i.naturalWidth<2){i.classList.add('broken')}});</script>",
        f"</article></{tag}>",
    ]
    months = "".join(
        f'<li><a href="/archive/2023/{m:02d}">Month {m}</a></li>' for m in range(1, 13)
    )
    bottom = [
        f'<aside class="sidebar"><h3>Archive</h3><ul>{months}</ul></aside>',
        f'<footer class="site-footer"><p>{footer} &middot; <a href="/privacy">'
        'Privacy</a> &middot; <a href="/contact">Contact</a></p>',
        f'<p class="rendered">Rendered at {clock} UTC &middot; {views:,} views</p>',
        "</footer>",
        f'{script}(function(){{var s=document.createElement("script");'
        's.src="/static/js/analytics.js";document.body.appendChild(s)})();</script>',
        "</body>",
        "</html>",
    ]
    return "\n".join(head + top + body + bottom).encode()


def digest(body: bytes, ignore: tuple[re.Pattern[bytes], ...] = ()) -> str:
    return fingerprint([body], ignore).digest


def noisy(**content: str) -> dict[str, Any]:
    """Fresh per-request noise: token, nonce, clock, counter, request id."""
    return {
        "csrf": secrets.token_urlsafe(32),
        "nonce": secrets.token_urlsafe(16),
        "clock": f"{secrets.randbelow(24)}:{secrets.randbelow(60):02d}:07",
        "views": 1000 + secrets.randbelow(10**6),
        "request_id": secrets.token_hex(8),
        **content,
    }


def test_the_page_is_about_32_kib() -> None:
    assert 31 * 1024 <= len(page()) <= 33 * 1024
    assert 30 * 1024 <= len(page(main=False)) <= 33 * 1024


@pytest.mark.parametrize("main", [True, False])
def test_noise_keeps_one_digest(main: bool) -> None:
    """100 renders that differ only by per-request noise give one digest."""
    ignore = (CLOCK, VIEWS)
    renders = [page(main=main, **noisy()) for _ in range(100)]
    assert len(set(renders)) == 100
    assert len({digest(body, ignore) for body in renders}) == 1


def test_noise_in_the_text_needs_a_pattern() -> None:
    """Without <main> the footer is read: its clock moves the digest unless ignored."""
    a, b = page(main=False, clock="09:15:00"), page(main=False, clock="09:16:00")
    assert digest(a) != digest(b)
    assert digest(a, (CLOCK,)) == digest(b, (CLOCK,))
    # With <main>, the footer is not read at all.
    assert digest(page(clock="09:15:00")) == digest(page(clock="09:16:00"))


@pytest.mark.parametrize("main", [True, False])
@pytest.mark.parametrize(
    "change",
    [
        {"word": "slow"},  # one word of the article
        {"link": "/blog/another-post"},  # a link target, same text
        {"image": "https://cdn.example.com/img/shed-3b.jpg"},  # an image
    ],
)
def test_content_changes_move_the_digest(main: bool, change: dict[str, Any]) -> None:
    ignore = (CLOCK, VIEWS)
    before = page(main=main, **noisy())
    after = page(main=main, **noisy(**change))
    assert digest(before, ignore) != digest(after, ignore)


@pytest.mark.parametrize("change", [{"nav": "Start"}, {"footer": "About me"}])
def test_changes_outside_main_are_not_content(change: dict[str, Any]) -> None:
    assert digest(page(**change)) == digest(page())
    # The same change is content when there is no <main>.
    assert digest(page(main=False, **change)) != digest(page(main=False))


BASE = b"<html><body><main><p>Hello <a href='/a'>world</a></p></main></body></html>"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (BASE, BASE.replace(b"<p>", b'<p class="x" data-id="42" nonce="abc">')),
        (BASE, BASE.replace(b"<p>", b"\n   <p>\n\t").replace(b"Hello ", b"Hello\n  ")),
        (BASE, BASE.replace(b"</p>", b"</p><!-- rendered in 0.12 s -->")),
        (BASE, BASE.replace(b"</p>", b"</p><script>var t = 1700000000;</script>")),
        (BASE, BASE.replace(b"</p>", b"</p><SCRIPT>x('<p>hi</p>')</SCRIPT>")),
        (BASE, BASE.replace(b"</p>", b"</p><style>.a{color:red}</style>")),
        (BASE, BASE.replace(b"</p>", b"</p><template><p>Later</p></template>")),
        (BASE, BASE.replace(b"</p>", b"</p><input type=hidden name=t value=1a2b>")),
        (BASE, BASE.replace(b"</p>", b"</p><meta name=csrf-token content=zz9>")),
        (BASE, BASE.replace(b"<a href='/a'>", b"<a class=x href='/a' data-r=7>")),
        (
            BASE,
            BASE.replace(b"<main>", b"<MAIN class=x>").replace(b"</main", b"</MAIN"),
        ),
        (BASE, BASE.replace(b"<body>", b"<body><nav><a href=/n>Nav</a></nav>")),
        (BASE, BASE.replace(b"</main>", b"</main><footer>12:00</footer>")),
        (BASE, BASE.replace(b"</p>", b"</p><!--> <!---> <!---->")),
    ],
)
def test_same_content(a: bytes, b: bytes) -> None:
    assert a != b
    assert digest(a) == digest(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (BASE, BASE.replace(b"Hello", b"Goodbye")),
        (BASE, BASE.replace(b"/a", b"/b")),
        (BASE, BASE.replace(b"<a href='/a'>", b"<a>")),  # a link lost
        (BASE, BASE.replace(b"</p>", b"</p><img src=/i.png>")),
        (BASE, BASE.replace(b"</p>", b"</p><noscript>Enable JS</noscript>")),
        (BASE, BASE.replace(b"world", b"w&ouml;rld")),
        (BASE, BASE.replace(b"Hello", b"Hello \xff\xfe")),  # not UTF-8, still text
        # A link's target is not the same as the same words in the text.
        (b"<main>/a</main>", b"<main><a href=/a></a></main>"),
        (b"<main>a < b</main>", b"<main>a b</main>"),  # '< ' is text, not a tag
    ],
)
def test_different_content(a: bytes, b: bytes) -> None:
    assert digest(a) != digest(b)


def test_ignore_patterns_see_text_content_and_links() -> None:
    body = b"<main><p>Seen <b>1,234</b> views</p><a href='/x?t=99'>x</a></main>"
    other = body.replace(b"1,234", b"98,765").replace(b"t=99", b"t=12")
    assert digest(body) != digest(other)
    assert digest(body, (VIEWS,)) != digest(other, (VIEWS,))  # the link differs
    ignore = (VIEWS, re.compile(rb"\?t=\d+"))
    assert digest(body, ignore) == digest(other, ignore)


def test_digest_is_hex_sha1_sized() -> None:
    assert re.fullmatch("[0-9a-f]{40}", digest(page()))
    assert fingerprint([]) == Content(digest(b""), ())


# -- images ---------------------------------------------------------------


def images(body: bytes, max_images: int = MAX_IMAGES) -> tuple[str, ...]:
    return fingerprint([body], max_images=max_images).images


def test_images_of_the_page() -> None:
    found = images(page())
    assert found == (
        "https://cdn.example.com/img/shed-3.jpg?w=800&q=80",  # entities decoded
        *(f"https://cdn.example.com/img/shed-{i}.jpg" for i in range(11, 79, 8)),
    )
    # Without <main>, the <article>'s: the logo in the header is site chrome.
    assert images(page(main=False)) == found


def test_images_in_main_only_in_order_without_repeats() -> None:
    body = (
        b"<body><header><img src=/logo.png></header><main>"
        b"<img src='/b.png'><p><IMG ALT=x SRC=\"/a.png\"></p><img src=/b.png>"
        b"<img src=\"data:image/gif;base64,R0lGOD\"><img src=' DATA:x'><img src=''>"
        b"<img alt=no-src><img srcset='/s.png 2x' src = ' /c.png '>"
        b"<img data-src=/lazy.png src=/d.png><image src=/svg.png>"
        b"<!-- <img src=/commented.png> --><script>'<img src=/script.png>'</script>"
        b"<template><img src=/template.png></template>"
        b"<noscript><img src=/e.png></noscript>"
        b"<img src=/f%20g.png?a=1&amp;b=2><img src='/caf\xc3\xa9.png'>"
        b"</main><footer><img src=/footer.png></footer></body>"
    )
    assert images(body) == (
        "/b.png",
        "/a.png",
        "/c.png",
        "/d.png",
        "/e.png",
        "/f%20g.png?a=1&b=2",
        "/café.png",
    )


def test_images_without_main_come_from_the_articles() -> None:
    """Without <main>, the images of every <article> in document order (nested
    ones included, an unclosed one to the end); with neither, none: a logo or
    a banner is site chrome, not an image of every page."""
    body = b"<head><title>t</title></head><body><img src=/a.png><div><img src=/b.png>"
    assert images(body) == ()
    assert images(b"<p><img src=/a.png>") == ()  # not even a body
    body = (
        b"<body><nav><img src=/logo.png></nav><ARTICLE class=post><img src=/1.png>"
        b"<article><img src=/2.png></article><img src=/3.png></Article>"
        b"<aside><img src=/ad.png></aside><!-- <article> --><img src=/ad2.png>"
        b"<article-card><img src=/card.png></article-card>"
        b"<article><img src=/4.png>"
    )
    assert images(body) == ("/1.png", "/2.png", "/3.png", "/4.png")
    # With <main>, its images only, an <article> outside it or not.
    body = b"<body><article><img src=/a.png></article><main><img src=/m.png></main>"
    assert images(body) == ("/m.png",)


def test_images_rule_leaves_the_fingerprint_alone() -> None:
    """Without <main> the body is still what the fingerprint covers: listing
    the articles' images (or none) does not change any page's digest."""
    for body in (page(main=False), b"<body><article><img src=/a.png>x</article>"):
        assert fingerprint([body]).digest == fingerprint([body], max_images=0).digest
    with_logo = b"<body><img src=/logo.png><article><p>x</p></article>"
    assert fingerprint([with_logo]).digest != fingerprint([with_logo[16:]]).digest


def test_images_are_capped() -> None:
    body = b"<main>" + b"".join(b"<img src=/i%d.png>" % i for i in range(1500))
    found = images(body)
    assert len(found) == MAX_IMAGES
    assert found[0] == "/i0.png" and found[-1] == f"/i{MAX_IMAGES - 1}.png"
    assert images(body, max_images=3) == ("/i0.png", "/i1.png", "/i2.png")
    assert images(body, max_images=0) == ()
    # Repeats do not count towards the cap.
    repeated = b"<main>" + b"<img src=/same.png>" * 2000 + b"<img src=/last.png>"
    assert images(repeated, max_images=2) == ("/same.png", "/last.png")


# -- chunks, budget, malformed input -------------------------------------


def pieces(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(body)) for cut in cuts})
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]


@settings(max_examples=50)
@given(st.lists(st.integers(0, 40 * 1024), max_size=30))
def test_chunking_does_not_change_the_page(cuts: list[int]) -> None:
    body = page()
    assert fingerprint(pieces(body, cuts), (CLOCK,)) == fingerprint([body], (CLOCK,))


TAGGY = st.lists(
    st.sampled_from(
        [
            b"<",
            b">",
            b"<main>",
            b"</main>",
            b"<body>",
            b"<a href='/x'>",
            b"<img src=",
            b"<script>",
            b"</script>",
            b"<!--",
            b"-->",
            b'"',
            b"'",
            b" ",
            b"text",
            b"\xff",
            b"<STYLE>",
            b"</style >",
            b"<p class=x>",
            b"=",
            b"&amp;",
            b"<template>",
        ]
    )
    | st.binary(max_size=8),
    max_size=60,
).map(b"".join)


@given(TAGGY, st.lists(st.integers(0, 500), max_size=6))
def test_never_raises_and_ignores_chunking(body: bytes, cuts: list[int]) -> None:
    content = fingerprint(pieces(body, cuts))
    assert content == fingerprint([body])
    assert len(content.digest) == 40


def test_the_budget_bounds_what_is_read() -> None:
    body = b"<main>" + b"x" * (BUDGET - 6)
    assert digest(body + b"change") == digest(body)
    assert digest(body[:-1] + b"y") != digest(body)
    assert fingerprint([body + b"z"], budget=10) == fingerprint([b"<main>xxxx"])


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # An unclosed <main> runs to the end.
        (b"<body><nav>N</nav><main><p>A</p><footer>F", b"<main>AF"),
        # A main nested in another ends with the outer one.
        (b"<main><main>A</main>B</main><footer>F</footer>", b"<main>AB</main>"),
        # An unclosed script swallows the rest, as in a browser.
        (b"<main>A<script>if (a<b) {B</main>", b"<main>A</main>"),
        (b"<main>A<!-- B</main>", b"<main>A"),
        # A tag that never ends is dropped, as in a browser.
        (b"<main>A<a href='/x' class", b"<main>A"),
    ],
)
def test_malformed_regions(a: bytes, b: bytes) -> None:
    assert digest(a) == digest(b)


N = BUDGET
HOSTILE = {
    "512 KiB of <": b"<" * N,
    "512 KiB of >": b">" * N,
    "binary garbage": os.urandom(N),
    "unclosed <a": b"<a " * (N // 3),
    "unclosed <a, one > at the end": b"<a " * (N // 3) + b">",
    "one long <a> without href": b"<a " + b"x" * N + b">",
    "unclosed quotes": b'<a href="' * (N // 9) + b">",
    "unclosed <script>": b"<script>" * (N // 8),
    "unclosed </script": b"<script></script" * (N // 16) + b">",
    "unclosed comments": b"<!--" * (N // 4) + b">",
    "dashes": b"<!--" + b"-" * N,
    "mains": b"<main>" * (N // 6),
    "closing mains": b"</main>" * (N // 7),
    "tags": b"<p>" * (N // 3),
    "links": b"<a href=/x>y</a>" * (N // 16),
    "images": b"".join(b"<img src=/i%d>" % i for i in range(N // 16)),
}


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail the block, rather than hang, when it runs longer than ``seconds``
    (the regex engine checks for signals while it works)."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_bodies_take_bounded_time(body: bytes) -> None:
    # Linear work takes a few tens of milliseconds here; a quadratic path, hours.
    start = time.perf_counter()
    with deadline(5.0):
        content = fingerprint([body[: N // 2], body[N // 2 :]])
    assert time.perf_counter() - start < 2.0
    assert len(content.images) <= MAX_IMAGES


@pytest.mark.parametrize(
    ("encoding", "mark"),
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b"")],
)
def test_a_utf_16_page_is_read_as_its_text(encoding: str, mark: bytes) -> None:
    """Its markup is no ASCII bytes: read as text, a per-request token in a tag
    moves nothing, and the page has the fingerprint and images it has in UTF-8."""

    def page(token: str) -> str:
        return (
            "<!doctype html><html><head><title>Contact</title></head><body><main>"
            f'<form><input type="hidden" name="csrf" value="{token}">'
            '<img src="/map.png" alt="Map"> Write to us</form></main></body></html>'
        )

    first, second = (
        fingerprint(
            [mark + page(secrets.token_hex(16)).encode(encoding)], encoding=encoding
        )
        for _ in range(2)
    )
    assert first == second
    assert first == fingerprint([page("x").encode("utf-8")])
    assert first.images == ("/map.png",)
