"""The content fingerprint: a digest of what a page says (the text and links of its
``<main>``, else its ``<body>``) that per-request noise leaves alone, and its images.

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

from .sitemaps import BODY_BUDGET, MAX_IMAGES

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

# A piece of markup. re.split keeps, in C and in document order, the text
# between pieces and two groups: an <a>'s href and an <img>'s src, each
# captured with its name so that the digest tells it from text.
_MARKUP = re.compile(
    rb"<(?:"
    # Most tags start with none of the letters below and go the short way.
    rb"[b-hj-ru-zB-HJ-RU-Z/?][^>]*>"
    rb"|[aA]\s[^>]*?(?<=\s)((?i:href)" + _VALUE + rb")[^>]*>"
    rb"|(?i:img)\s[^>]*?(?<=\s)((?i:src)" + _VALUE + rb")[^>]*>"
    rb"|!--(?:-?>|.*?-->|.*)"  # <!--> and <!---> are empty comments
    rb"|" + _ELEMENTS + rb"|[aAiIsStT!][^>]*>"
    rb")",
    re.DOTALL,
)
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

    ``images`` are the region's ``<img src>`` values in document order,
    entities decoded, without repeats, empty values or ``data:`` URIs, at most
    ``max_images``; they are not resolved.

    Never raises on malformed HTML or bytes that are not UTF-8; linear time;
    how the body is cut into chunks does not change the result.
    """
    data = b"".join(chunks)
    if len(data) > budget:
        data = data[:budget]
    data = _region(data)
    # A '<' after the last '>' opens a tag that never ends, which a browser
    # drops too. Once it is cut, every '<' has a '>' after it and no tag is
    # scanned twice: without the cut, 512 KiB of '<a ' take hours.
    cut = data.find(b"<", data.rfind(b">") + 1)
    if cut >= 0:
        data = data[:cut]
    parts = _MARKUP.split(data)  # text, href, src, text, ..., text; None if absent
    sources = [*filter(None, parts[2::3])]
    stream = b" ".join((b"".join(parts[::3]), *filter(None, parts[1::3]), *sources))
    for pattern in ignore:
        stream = pattern.sub(b"", stream)
    digest = hashlib.sha1(stream.translate(None, _WHITESPACE), usedforsecurity=False)
    return Content(digest.hexdigest(), _images(sources, max_images))


def _region(data: bytes) -> bytes:
    """The ``<main>`` element, else ``<body>`` on, else all of ``data``."""
    found = _MAIN.search(data)
    if found is not None:
        start = found.start()
        # The last </main>, so that a <main> nested in another ends with it.
        end = data.rfind(b"</main")
        if end < start:  # none in lower case, or none at all
            closing = _MAIN_END.search(data, start)
            end = len(data) if closing is None else closing.start()
        return data[start:end]
    found = _BODY.search(data)
    return data if found is None else data[found.start() :]


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
