"""Content shared by the three example sites: posts, page HTML, API data, a crawler.

Pure Python (no web framework), imported by ``flask_app.py``, ``starlette_app.py``
and ``fastapi_app.py`` as the top-level module ``demo_content``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit

if TYPE_CHECKING:
    from sitemap_middleware import SiteMap

#: Where every demo keeps its store, however it is started (from the checkout,
#: from examples/, or imported by ``sitemap-middleware --app``): the Flask demo's
#: instance folder, so that the three demos and the command line share one file.
INSTANCE = Path(__file__).resolve().parent / "instance"
STORE_FILE = INSTANCE / "sitemap.sqlite3"
#: The store URI of the Starlette and FastAPI demos: an absolute path.
STORE = f"sqlite:///{STORE_FILE.as_posix()}"

#: Characters a browser leaves alone when it percent-encodes a path or query.
URL_SAFE = "/%:@!$&'()*+,;=~"

#: Name and value of the (deliberately trivial) sign-in cookie.
SESSION_COOKIE = "session"
SESSION_VALUE = "demo"
#: What a sign-in sets, as keyword arguments of every framework's ``set_cookie``.
SESSION_COOKIE_ARGS = {
    "key": SESSION_COOKIE,
    "value": SESSION_VALUE,
    "httponly": True,
    "samesite": "lax",
}

HOST = "127.0.0.1"
SITE_NAME = "Field Notes"


def port() -> int:
    """The port the demo serves on: ``$PORT``, else 8000."""
    return int(os.environ.get("PORT", "8000"))


def local_base_url() -> str:
    """The origin the demo serves on, used as ``base_url`` when run as a script."""
    return f"http://{HOST}:{port()}"


def encode_url(url: str) -> str:
    """Percent-encode non-ASCII and unsafe characters the way a browser does."""
    return quote(url, safe=URL_SAFE + "?")


@dataclass(frozen=True)
class Post:
    slug: str
    title: str
    date: str
    summary: str
    modified: str
    """When the post was last edited, as its page declares it (the sitemap's
    lastmod): an ISO 8601 date-time with its zone."""

    @property
    def path(self) -> str:
        return "/blog/" + quote(self.slug, safe=URL_SAFE)


POSTS = [
    Post(
        "hello-world",
        "Hello, world",
        "2024-01-08",
        "Why this notebook exists and what will end up in it.",
        "2024-01-09T08:00:00+00:00",
    ),
    Post(
        "café-au-lait",
        "Café au lait",
        "2024-02-14",
        "Milk first or coffee first? A non-ASCII slug, percent-encoded in links.",
        "2024-02-15T18:30:00+01:00",
    ),
    Post(
        "don't-panic",
        "Don't panic",
        "2024-03-21",
        "A calm checklist for the day production goes down (the slug has a quote).",
        "2024-05-02T07:15:00+00:00",
    ),
    Post(
        "python-packaging",
        "Packaging Python in 2024",
        "2024-04-30",
        "pyproject.toml, build backends and the wheels that come out of them.",
        "2024-04-30T12:00:00+00:00",
    ),
    Post(
        "sitemaps-explained",
        "Sitemaps, explained",
        "2024-06-02",
        "What search engines read from sitemap.xml and what they ignore.",
        "2024-06-03T10:00:00+02:00",
    ),
]
POSTS_BY_SLUG = {post.slug: post for post in POSTS}

LANGUAGES = {"en": "English", "de": "Deutsch"}

#: The percent-encoded paths the sitemap must hold once the site has been crawled.
PUBLIC_PATHS = sorted(
    [
        "/",
        "/about",
        "/blog/",
        "/search",
        "/en/",
        "/de/",
        "/pages",
        *(p.path for p in POSTS),
    ]
)

_NAV = """<nav>
  <a href="/">Home</a>
  <a href="/about">About</a>
  <a href="/blog/">Blog</a>
  <a href="/search">Search</a>
</nav>"""


def _layout(
    title: str, main: str, *, lang: str = "en", head: str = "", about: str = ""
) -> str:
    # What the page is about: the site map page and llms.txt show it.
    if about:
        head = f'\n<meta name="description" content="{escape(about)}">{head}'
    return f"""<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · {SITE_NAME}</title>{head}
</head>
<body>
<header><strong>{SITE_NAME}</strong></header>
{_NAV}
<main>
{main}
</main>
<footer><p>A demo site for sitemap_middleware. <a href="/site-map">Site map</a>
(<a href="/pages">in the site's own layout</a>)</p>
</footer>
</body>
</html>
"""


def _link(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def _post_list(posts: list[Post]) -> str:
    items = "\n".join(
        f'  <li>{_link(post.path, post.title)} <time datetime="{post.date}">'
        f"{post.date}</time></li>"
        for post in posts
    )
    return f"<ul>\n{items}\n</ul>"


def home_page() -> str:
    hidden = [
        ("/draft", "A draft", "answers 200 but says noindex"),
        ("/old", "An old address", "redirects (301) to About"),
        ("/gone", "A removed page", "answers 410 Gone"),
        ("/admin/", "Admin", "excluded by default"),
        ("/api/posts", "The posts as JSON", "not HTML, and /api/* is excluded"),
        ("/account", "Your account", "personal; redirects to /login when signed out"),
    ]
    hidden_items = "\n".join(
        f"  <li>{_link(href, text)}: {escape(why)}</li>" for href, text, why in hidden
    )
    return _layout(
        "Home",
        f"""<h1>{SITE_NAME}</h1>
<p>Short notes on coffee, Python and the web.</p>
<h2>Latest posts</h2>
{_post_list(POSTS[::-1][:3])}
<p>{_link("/blog/", "All posts")}</p>
<h2>Around the site</h2>
<ul>
  <li>{_link("/about", "About")}</li>
  <li>{_link("/search?q=python", "Search for “python”")}</li>
  <li>{_link("/en/", "English")} · {_link("/de/", "Deutsch")}</li>
</ul>
<h2>Pages the sitemap leaves out</h2>
<ul>
{hidden_items}
</ul>
<p>See {_link("/sitemap.xml", "sitemap.xml")} and
{_link("/robots.txt", "robots.txt")}.</p>""",
        about="Short notes on coffee, Python and the web.",
    )


def about_page() -> str:
    return _layout(
        "About",
        """<h1>About</h1>
<p>Field Notes is a small example site. Every public page it serves is recorded
by sitemap_middleware, which then answers <code>/sitemap.xml</code> itself.</p>""",
        about="Who writes Field Notes, and how the site is made.",
    )


def _json_ld(data: dict[str, object]) -> str:
    """A JSON-LD script for the head ("</" escaped: it may not end the script)."""
    text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return f'\n<script type="application/ld+json">{text}</script>'


def blog_page() -> str:
    # The list changes when a post is added or renamed: its date is the newest
    # post's, declared in JSON-LD (the sitemap's lastmod for /blog/).
    newest = max(POSTS, key=lambda p: datetime.fromisoformat(p.modified)).modified
    return _layout(
        "Blog",
        f"<h1>Blog</h1>\n{_post_list(sorted(POSTS, key=lambda p: p.date))}",
        about="Every post, oldest first.",
        head=_json_ld(
            {"@context": "https://schema.org", "@type": "Blog", "dateModified": newest}
        ),
    )


def post_page(slug: str) -> str | None:
    """The page of the post with this (decoded) slug, or ``None`` if there is none."""
    post = POSTS_BY_SLUG.get(slug)
    if post is None:
        return None
    return _layout(
        post.title,
        f"""<article>
<h1>{escape(post.title)}</h1>
<p><time datetime="{post.date}">{post.date}</time></p>
<p>{escape(post.summary)}</p>
</article>
<p>{_link("/blog/", "← All posts")}</p>""",
        about=post.summary,
        # The dates the sitemap's lastmod comes from: Open Graph's, and the
        # same in schema.org's JSON-LD, as blog engines write both.
        head=(
            f'\n<meta property="article:published_time" content="{post.date}">'
            f'\n<meta property="article:modified_time" content="{post.modified}">'
            + _json_ld(
                {
                    "@context": "https://schema.org",
                    "@type": "BlogPosting",
                    "headline": post.title,
                    "datePublished": post.date,
                    "dateModified": post.modified,
                }
            )
        ),
    )


def search_page(query: str) -> str:
    words = query.strip().lower()
    if not words:
        results = "<p>Type a word to search the posts.</p>"
    else:
        found = [p for p in POSTS if words in f"{p.title} {p.summary}".lower()]
        count = f"{len(found)} post{'' if len(found) == 1 else 's'}"
        results = f"<p>{count} found for “{escape(query)}”.</p>"
        if found:
            results += "\n" + _post_list(found)
    return _layout(
        "Search",
        f"""<h1>Search</h1>
<form action="/search" method="get">
  <input type="search" name="q" value="{escape(query)}" aria-label="Search">
  <button type="submit">Search</button>
</form>
{results}""",
    )


def site_map_page(site_map: SiteMap) -> str:
    """The site map inside the site's own layout, from ``site_map()``: the
    same sections and titles as the middleware's page at ``/site-map``."""
    sections = []
    for section in site_map.sections:
        items = "\n".join(
            f"  <li>{_link(link.url, link.title)}</li>" for link in section.links
        )
        heading = escape(section.heading)
        sections.append(f'<h2 id="{section.id}">{heading}</h2>\n<ul>\n{items}\n</ul>')
    pager = []
    if site_map.page > 1:
        pager.append(_link(f"?page={site_map.page - 1}", "Previous page"))
    if site_map.page < site_map.pages:
        pager.append(_link(f"?page={site_map.page + 1}", "Next page"))
    main = f"<h1>All pages</h1>\n{chr(10).join(sections)}\n<p>{' '.join(pager)}</p>"
    return _layout("All pages", main)


def login_page() -> str:
    return _layout(
        "Sign in",
        """<h1>Sign in</h1>
<form action="/login" method="post">
  <button type="submit">Sign in as the demo user</button>
</form>""",
    )


def account_page() -> str:
    return _layout(
        "Your account",
        f"""<h1>Your account</h1>
<p>Signed in as <strong>{SESSION_VALUE}</strong>. This page is personal: the
sitemap never records it.</p>""",
    )


def admin_page() -> str:
    return _layout(
        "Admin",
        """<h1>Admin</h1>
<p>Nothing to administer here; the sitemap excludes <code>/admin/*</code>.</p>""",
    )


def draft_page() -> str:
    return _layout(
        "Draft",
        """<h1>A draft</h1>
<p>Not ready yet, so the page asks search engines not to index it.</p>""",
        head='\n<meta name="robots" content="noindex">',
    )


def gone_page() -> str:
    return _layout("Gone", "<h1>Gone</h1>\n<p>This page was removed on purpose.</p>")


def not_found_page() -> str:
    return _layout(
        "Not found",
        f"<h1>Not found</h1>\n<p>No page here. Try the {_link('/blog/', 'blog')}.</p>",
    )


def language_page(lang: str, base_url: str) -> str:
    """The home page of one language edition, with reciprocal hreflang links."""
    origin = base_url.rstrip("/")
    alternates = "".join(
        f'\n<link rel="alternate" hreflang="{code}" href="{escape(origin)}/{code}/">'
        for code in LANGUAGES
    )
    others = " · ".join(
        _link(f"/{code}/", name) for code, name in LANGUAGES.items() if code != lang
    )
    if lang == "de":
        main = f"<h1>Willkommen</h1>\n<p>Diese Seite gibt es auch auf {others}.</p>"
    else:
        main = f"<h1>Welcome</h1>\n<p>This page is also available in {others}.</p>"
    return _layout(LANGUAGES[lang], main, lang=lang, head=alternates)


def post_params() -> list[dict[str, str]]:
    """The path parameters of every post: ``@sitemap(params=...)`` on the post
    view, so that ``sitemap-middleware seed`` lists the posts too."""
    return [{"slug": p.slug} for p in POSTS]


def posts_json() -> list[dict[str, str]]:
    """The body of ``GET /api/posts``."""
    return [{"slug": p.slug, "title": p.title, "path": p.path} for p in POSTS]


def with_store_folder(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` unchanged, the instance folder made when its store is the demo's
    (SQLite makes the file, not the folder)."""
    if config.get("store") == STORE:
        INSTANCE.mkdir(exist_ok=True)
    return config


def banner(base_url: str, visited: list[str], middleware: Any) -> str:
    """What a demo prints before serving: every document it serves, and where
    the store is. ``middleware`` is the demo's sitemap middleware."""
    store = middleware.store
    config = middleware.config
    path = getattr(store, "path", None)
    where = os.path.abspath(path) if isinstance(path, str) else repr(store)
    parts = [part.number for part in store.parts()]
    first = parts[0] if parts else 1
    lines = [
        f"Crawled {len(visited)} paths in process; the sitemap store is {where}",
        f"  Home page:         {base_url}/",
        f"  robots.txt:        {base_url}/robots.txt",
        f"  Sitemap index:     {base_url}/sitemap.xml",
        f"  Sitemap part:      {base_url}/sitemap-{first}.xml.gz"
        f" ({len(parts)} part{'' if len(parts) == 1 else 's'})",
    ]
    if config.text_sitemap:
        lines.append(f"  Text sitemap:      {base_url}/sitemap-{first}.txt")
    if config.html_sitemap:
        lines.append(f"  Site map page:     {base_url}{config.html_sitemap}")
    if config.llms_txt:
        lines.append(f"  llms.txt:          {base_url}{config.llms_txt}")
    lines.append(f"  The app's own map: {base_url}/pages")
    if config.indexnow is not None:
        lines.append(f"  IndexNow key:      {base_url}{config.indexnow.key_location}")
    return "\n".join(lines) + "\n"


# -- crawler -----------------------------------------------------------------

Fetch = Callable[[str], tuple[int, str, bytes]]


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def links(page: str, html: str) -> list[str]:
    """Same-site ``<a href>`` targets of ``html`` served at ``page``, as paths.

    Links are resolved against ``page``; the fragment is dropped, the query kept and
    non-ASCII percent-encoded. Links with a scheme or host count as other sites.
    """
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    found: list[str] = []
    for href in parser.hrefs:
        parts = urlsplit(urljoin(page, href.strip()))
        if parts.scheme or parts.netloc:
            continue
        path = parts.path or "/"
        found.append(encode_url(f"{path}?{parts.query}" if parts.query else path))
    return found


def crawl(fetch: Fetch, start: str = "/") -> list[str]:
    """Visit the site breadth-first from ``start``; return the paths visited, in order.

    ``fetch(path_with_query)`` returns ``(status, content_type, body)``. HTML bodies
    are read as UTF-8 and their links followed, except those of redirects: a
    redirect is not followed (its target is linked anyway). Each path is fetched
    once, whatever its status.
    """
    queue = deque([encode_url(start)])
    seen = set(queue)
    visited: list[str] = []
    while queue:
        path = queue.popleft()
        status, content_type, body = fetch(path)
        visited.append(path)
        media_type = content_type.split(";")[0].strip().lower()
        if media_type != "text/html" or 300 <= status < 400:
            continue
        for link in links(path, body.decode("utf-8", "replace")):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return visited
