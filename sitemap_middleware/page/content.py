"""The content fingerprint: a digest of what a page says (the text and links of its
``<main>``, else its ``<body>``) that per-request noise leaves alone, and the images
of its content (its ``<main>``, else its ``<article>`` elements: never the chrome).

Regular expressions over HTML are fine here: they only decide what a digest
ignores, and nothing the page says is obeyed on their word (the head scanner,
which reads noindex and the canonical, keeps a real tokenizer).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..sitemaps import BODY_BUDGET, MAX_IMAGES
from .charset import ascii_compatible, decode

_MAIN = re.compile(rb"<main[\s/>]", re.IGNORECASE)
_MAIN_END = re.compile(rb"</main[\s/>]", re.IGNORECASE)
_BODY = re.compile(rb"<body[\s/>]", re.IGNORECASE)

# An attribute value, quoted or not; a quote ends at '>' too, so that a missing
# one cannot swallow the page.
_VALUE = rb"""\s*=\s*(?:"[^">]*"?|'[^'>]*'?|[^\s>]*)"""


def _element(name: bytes) -> bytes:
    # An element whose content is not text, dropped whole. Unclosed, it runs
    # to the end as in a browser (so no '<' after it is scanned twice).
    return rb"(?i:%s)\b(?:.*?</(?i:%s)\b[^>]*>|.*)" % (name, name)


# <noscript> is not among them: it is the page's own static fallback, and often
# holds the real <img> of a lazily loaded one.
_ELEMENTS = b"|".join(map(_element, (b"script", b"style", b"template")))


def _markup(articles: bool) -> re.Pattern[bytes]:
    """A piece of markup. re.split keeps, in C and in document order, the text
    between pieces and two groups: an <a>'s href and an <img>'s src, each
    captured with its name so that the digest tells it from text; with
    ``articles``, a first: the name of an <article> or </article> tag."""
    return re.compile(
        rb"<(?:"
        # Taken first: "/" would go the short way below.
        + (rb"(/?(?i:article))(?=[\s/>])[^>]*>|" if articles else b"")
        # Most tags start with none of the letters below and go the short way.
        + rb"[b-hj-ru-zB-HJ-RU-Z/?][^>]*>"
        rb"|[aA]\s[^>]*?(?<=\s)((?i:href)" + _VALUE + rb")[^>]*>"
        rb"|(?i:img)\s[^>]*?(?<=\s)((?i:src)" + _VALUE + rb")[^>]*>"
        rb"|!--(?:-?>|.*?-->|.*)"  # <!--> and <!---> are empty comments
        rb"|" + _ELEMENTS + rb"|[aAiIsStT!][^>]*>"
        rb")",
        re.DOTALL,
    )


_MARKUP = _markup(articles=False)
# For a page without <main>: the same pieces (so the same digest), and where
# its articles start and end, for their images.
_MARKUP_ARTICLES = _markup(articles=True)
_WHITESPACE = b" \t\n\r\f\v"


@dataclass(frozen=True, slots=True)
class Content:
    """A page's content fingerprint (hex) and the ``src`` of its images."""

    digest: str
    images: tuple[str, ...] = ()


def fingerprint(
    chunks: Iterable[bytes],
    ignore: Sequence[re.Pattern[bytes]] = (),
    *,
    max_images: int = MAX_IMAGES,
    budget: int = BODY_BUDGET,
    encoding: str = "utf-8",
) -> Content:
    """Digest the significant content of an HTML body and list its images.

    The region read is the first ``<main>`` to the last ``</main>``, else
    ``<body>`` to the end, else the whole body (its first ``budget`` bytes).
    The digest covers the region's text, each ``<a href>`` and each
    ``<img src>``, ignoring whitespace. All else inside tags is left out
    (nonces, CSRF tokens, hidden inputs, ``data-`` ids), and so are comments
    and ``<script>``, ``<style>`` and ``<template>`` elements. ``ignore``
    patterns are removed before hashing; they see the text as ``textContent``
    would give it (entities undecoded), then each ``href="…"`` and each
    ``src="…"`` as written, all separated by spaces. Each is a regex search
    of that text: cheap if it starts with a literal (``rb"Rendered at [\\d:]+"``),
    dearer than all the rest if it starts with a class (``rb"\\d+ views"``).

    ``images`` are the ``<img src>`` values of the page's content in document
    order: those of ``<main>``, or without one those inside its ``<article>``
    elements (an unclosed one runs to the end), none when it has neither (a
    logo in the navigation bar is no image of every page). Entities decoded,
    without repeats, empty values or ``data:`` URIs, at most ``max_images``
    (``0``: none); they are not resolved.

    ``encoding`` is the page's (:func:`~.charset.encoding_of`, as its head
    was read): one that does not write markup as ASCII bytes (UTF-16) is
    read as UTF-8 text, so that its tags are tags here too.

    Never raises on malformed HTML or bytes that are not UTF-8; linear time;
    how the body is cut into chunks does not change the result.
    """
    data = b"".join(chunks)
    if len(data) > budget:
        data = data[:budget]
    if encoding != "utf-8" and not ascii_compatible(encoding):
        data = decode(data, encoding).encode("utf-8", "surrogatepass")
    data, main = _region(data)
    # A '<' after the last '>' opens a tag that never ends, which a browser
    # drops too. Once it is cut, every '<' has a '>' after it and no tag is
    # scanned twice: without the cut, 512 KiB of '<a ' take hours.
    cut = data.find(b"<", data.rfind(b">") + 1)
    if cut >= 0:
        data = data[:cut]
    articles = not main and max_images > 0
    # text, [article,] href, src, text, ..., text; None where absent.
    parts = (_MARKUP_ARTICLES if articles else _MARKUP).split(data)
    step = 4 if articles else 3
    sources = [*filter(None, parts[step - 1 :: step])]
    stream = b" ".join(
        (b"".join(parts[::step]), *filter(None, parts[step - 2 :: step]), *sources)
    )
    for pattern in ignore:
        stream = pattern.sub(b"", stream)
    digest = hashlib.sha1(stream.translate(None, _WHITESPACE), usedforsecurity=False)
    if articles:
        sources = _in_articles(parts)
    elif not main:
        sources = []
    return Content(digest.hexdigest(), _images(sources, max_images))


def _region(data: bytes) -> tuple[bytes, bool]:
    """The ``<main>`` element, else ``<body>`` on, else all of ``data``; and
    whether it is a ``<main>``."""
    found = _MAIN.search(data)
    if found is not None:
        start = found.start()
        # The last </main>, so that a <main> nested in another ends with it.
        end = data.rfind(b"</main")
        if end < start:  # none in lower case, or none at all
            closing = _MAIN_END.search(data, start)
            end = len(data) if closing is None else closing.start()
        return data[start:end], True
    found = _BODY.search(data)
    return (data if found is None else data[found.start() :]), False


def _in_articles(parts: list[bytes | None]) -> list[bytes]:
    """The ``src=…`` captures inside ``<article>`` elements, from the pieces
    of :data:`_MARKUP_ARTICLES`."""
    tags, sources = parts[1::4], parts[3::4]
    # Interleaved in document order (a piece fills one group at most), in C.
    marks: list[bytes | None] = [None] * (2 * len(tags))
    marks[::2], marks[1::2] = tags, sources
    inside: list[bytes] = []
    depth = 0  # articles nest (a comment may be one)
    for mark in filter(None, marks):
        first = mark[:1]
        if first in (b"s", b"S"):  # src=...
            if depth:
                inside.append(mark)
        elif first == b"/":
            depth = max(depth - 1, 0)
        else:
            depth += 1
    return inside


def _images(sources: list[bytes], limit: int) -> tuple[str, ...]:
    """The image URLs of captured ``src=…`` attributes."""
    images: dict[str, None] = {}  # an ordered set
    for attribute in sources:
        if len(images) >= limit:
            break
        value = attribute.partition(b"=")[2].strip(_WHITESPACE)
        quote = value[:1]
        if quote in (b'"', b"'"):
            value = value[1:].removesuffix(quote).strip(_WHITESPACE)
        if not value or value[:5].lower() == b"data:":
            continue
        url = value.decode("utf-8", "replace")
        if "&" in url:
            url = html.unescape(url)
        images[url] = None
    return tuple(images)
