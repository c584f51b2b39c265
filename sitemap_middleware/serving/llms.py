"""llms.txt (https://llmstxt.org/): the site map's sections as Markdown for
language models (:func:`render`), every text escaped so that no title or
description can change the file's structure.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

from ..config import Config
from ..sections import label
from ..visible import visible
from .arrangement import Map, Section

# What Markdown reads as markup anywhere in a line: a backslash escapes any
# ASCII punctuation (CommonMark §2.4), so each of these is written escaped.
_MARKUP = re.compile(r"([\\`*_\[\]()<>#!|~&])")
# What opens a block at the start of a line's text: a list item or a
# numbered one, a thematic break, a setext underline.
_OPENS_BLOCK = re.compile(r"^(\d*)([-+=.)])")
# A link's destination ends at the first unbalanced ")" in CommonMark and at
# any ")" in the simple parsers llms.txt readers use: a stored URL's
# parentheses go percent-encoded, as a server reads them alike.
_DESTINATION = str.maketrans({"(": "%28", ")": "%29", " ": "%20"})
# CommonMark decodes an entity reference in a destination too (a stored
# /q&amp;r would read /q&r): its "&" is backslash-escaped.
_ENTITY = re.compile(r"&(?=#?\w+;)")


def escape(text: str) -> str:
    """``text`` as Markdown that shows it as written, on one line."""
    text = _MARKUP.sub(r"\\\1", visible(text))
    return _OPENS_BLOCK.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    digits, mark = match.groups()
    if digits and mark not in ".)":  # "1-" opens nothing
        return match.group()
    return f"{digits}\\{mark}"


def render(
    sections: Iterable[tuple[Section, int]],
    *,
    site_name: str,
    summary: str | None,
    listed: Collection[str] | None = None,
) -> str:
    """The llms.txt of the map's ``sections`` (``Map.whole``: each
    with its first links and its number of links): ``# site_name``, the home
    page's description as its ``> summary``, then a ``## heading`` per
    section and a ``- [Title](URL): description`` line per link, in the
    map's order, and the number of links left out in a line of its own.
    ``listed`` names the sections to list (by ``sections.label``; a group
    by path is listed only when all are)."""
    out = [f"# {escape(site_name)}", ""]
    summary = escape(summary or "")
    if summary:
        out += [f"> {summary}", ""]
    for section, size in sections:
        if listed is not None and (
            section.name is None or label(section.name) not in listed
        ):
            continue
        out += [f"## {escape(section.heading)}", ""]
        for link in section.links:
            url = link.url.translate(_DESTINATION)
            if "&" in url:
                url = _ENTITY.sub(r"\\&", url)
            item = f"- [{escape(link.title)}]({url})"
            note = escape(link.description or "")
            out.append(f"{item}: {note}" if note else item)
        left = size - len(section.links)
        if left:
            pages = "page" if left == 1 else "pages"
            out += ["", f"{left:,} more {pages} of this section in the sitemap."]
        out.append("")
    return "\n".join(out)


def of(arranged: Map, config: Config) -> bytes:
    """The llms.txt of ``arranged`` as ``config`` asks for it: the site's name
    (else the host of its ``base_url``), its sections and their first
    ``llms_txt_max_links`` links, the home page's description."""
    origin = config.base_url
    text = render(
        arranged.whole(origin, config.llms_txt_max_links),
        site_name=arranged.site_name or urlsplit(origin).netloc,
        summary=arranged.home_description(),
        listed=config.llms_txt_sections,
    )
    return text.encode("utf-8")
