"""The site map as one accessible HTML page (:func:`render`): a header naming
the site and linking its home page, its sections' index, its links with their
descriptions, a pager; every title and URL escaped, no script.
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from .arrangement import SiteMap

# Sections a page's index names at most. Beyond, a site of many small
# sections (a profile per user) would carry its whole index on every page,
# many times its links: the index then names the sections on the page.
MAX_INDEX = 200

# Contrast (WCAG 2.2 SC 1.4.3, 4.5:1 for text): #1a1a1a on white is 17:1,
# links #0b57d0 are 6.1:1, the muted #555 is 7.5:1.
_STYLE = """\
*{box-sizing:border-box}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;\
color:#1a1a1a;background:#fff}
.wrap{max-width:72rem;margin:0 auto;padding:0 1.25rem}
a{color:#0b57d0;text-underline-offset:.15em}
a:visited{color:#6b2fb3}
a:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px;border-radius:2px}
.skip{position:absolute;left:1rem;top:-4rem;background:#fff;padding:.5rem 1rem;\
border:2px solid #1a1a1a;z-index:1}
.skip:focus{top:1rem}
header{border-bottom:1px solid #ddd;padding:1.5rem 0 1rem}
.site{margin:0 0 .5rem;font-size:1.125rem;font-weight:600}
.site a{color:#1a1a1a;text-decoration:none}
.site a:hover{text-decoration:underline}
h1{margin:0;font-size:2rem;line-height:1.2}
header p.summary{margin:.25rem 0 0;color:#555}
nav ul,main ul{list-style:none;margin:0;padding:0}
.sections{padding:1rem 0;border-bottom:1px solid #ddd}
.sections ul{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}
.count{color:#555;font-size:.875rem}
main{padding:.5rem 0 2rem}
section{margin-top:1.5rem}
h2{font-size:1.25rem;margin:0 0 .5rem;padding-bottom:.25rem;\
border-bottom:2px solid #eee}
main ul{columns:16rem;column-gap:2rem}
main li{break-inside:avoid;padding:.15rem 0}
.described{columns:auto}
.described li{padding:.35rem 0;max-width:48rem}
.note{display:block;color:#555;font-size:.875rem}
.pages{display:flex;gap:1.5rem;align-items:center;padding:1rem 0;\
border-top:1px solid #ddd}
"""


def render(
    site_map: SiteMap,
    *,
    path: str,
    lang: str = "en",
    title: str = "Site map",
    site_name: str | None = None,
    home: str | None = None,
) -> str:
    """The HTML page of ``site_map``, served at ``path``, its ``<title>``
    naming the site after the page, its header the site (``site_name``, else
    the ``home`` page's address) linking ``home``. Every title and URL is
    escaped; there is no script. Titles, descriptions and headings are
    isolated (``dir="auto"``, HTML's bidirectional isolation): one in a
    right-to-left script never reorders the text around it."""
    heading = title if site_map.pages == 1 else f"{title}, page {site_map.page}"
    if site_name:
        heading = f"{heading} – {site_name}"
    out = [
        "<!doctype html>",
        f'<html lang="{_attr(lang)}">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(heading)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        '<a class="skip" href="#main">Skip to the list of pages</a>',
        '<header><div class="wrap">',
        *_site(site_name, home),
        f"<h1>{_text(title)}</h1>",
        f'<p class="summary">{_summary(site_map)}</p>',
        "</div></header>",
    ]
    index, label = site_map.index, "Sections"
    if len(index) > MAX_INDEX:
        here = {section.id for section in site_map.sections}
        index = tuple(entry for entry in index if entry.id in here)
        label = "Sections on this page"
    if index:
        out.append(f'<nav class="sections" aria-label="{label}"><div class="wrap"><ul>')
        for entry in index:
            href = f"#{entry.id}" if entry.page == site_map.page else None
            if href is None:
                href = f"{_page_href(path, entry.page)}#{entry.id}"
            out.append(
                f'<li><a href="{_attr(href)}" dir="auto">{_text(entry.heading)}</a>'
                f' <span class="count">({entry.links})</span></li>'
            )
        out.append("</ul></div></nav>")
    out.append('<main id="main" tabindex="-1"><div class="wrap">')
    if not site_map.sections:
        out.append("<p>No pages are listed yet.</p>")
    for section in site_map.sections:
        name = _text(section.heading)
        if section.continued:
            name += " (continued)"
        # A section whose pages say what they are about lists them in one
        # column, each description under its link.
        described = any(link.description for link in section.links)
        out.append(
            f'<section aria-labelledby="{section.id}">'
            f'<h2 id="{section.id}" dir="auto">{name}</h2>'
            + ('<ul class="described">' if described else "<ul>")
        )
        out.extend(
            f'<li><a href="{_attr(link.url)}" dir="auto">{_text(link.title)}</a>'
            f"{_date(link.lastmod) if section.newest else ''}"
            f"{_note(link.description)}</li>"
            for link in section.links
        )
        out.append("</ul></section>")
    out.append("</div></main>")
    if site_map.pages > 1:
        out.append(_pager(site_map, path))
    out.append("</body>\n</html>\n")
    return "\n".join(out)


def _site(site_name: str | None, home: str | None) -> list[str]:
    """The header's first line: the site's name, a link to its home page."""
    if home is None:
        return (
            [f'<p class="site" dir="auto">{_text(site_name)}</p>'] if site_name else []
        )
    shown = _text(site_name or home)
    return [
        f'<p class="site"><a href="{_attr(home)}" rel="home" dir="auto">{shown}</a></p>'
    ]


def _note(description: str | None) -> str:
    """A link's description, under it (none without one)."""
    if not description:
        return ""
    return f' <span class="note" dir="auto">{_text(description)}</span>'


def _date(lastmod: datetime | None) -> str:
    """A link's date, as a newest-first section shows it (none without one)."""
    if lastmod is None:
        return ""
    day = lastmod.date().isoformat()
    return f' <time datetime="{day}">{day}</time>'


def _summary(site_map: SiteMap) -> str:
    pages = "page" if site_map.links == 1 else "pages"
    sections = "section" if len(site_map.index) == 1 else "sections"
    text = f"{site_map.links} {pages} in {len(site_map.index)} {sections}"
    if site_map.pages > 1:
        text += f"; page {site_map.page} of {site_map.pages}"
    return text + "."


def _pager(site_map: SiteMap, path: str) -> str:
    parts = ['<nav class="wrap pages" aria-label="Pages of the site map">']
    if site_map.page > 1:
        href = _page_href(path, site_map.page - 1)
        parts.append(f'<a href="{_attr(href)}" rel="prev">Previous page</a>')
    parts.append(f"<span>Page {site_map.page} of {site_map.pages}</span>")
    if site_map.page < site_map.pages:
        href = _page_href(path, site_map.page + 1)
        parts.append(f'<a href="{_attr(href)}" rel="next">Next page</a>')
    parts.append("</nav>")
    return "".join(parts)


def _page_href(path: str, page: int) -> str:
    # Page 1 has one address, the path itself.
    return path if page == 1 else f"{path}?page={page}"


def _text(value: str) -> str:
    return escape(value, quote=False)


def _attr(value: str) -> str:
    return escape(value, quote=True)
