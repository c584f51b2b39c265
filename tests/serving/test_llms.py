"""llms.txt (``llms_txt``): the site map's pages and sections as Markdown, on both
stacks (validators, HEAD, the sitemap's URLs exactly, per site), its options,
and the escaping that keeps hostile titles and descriptions from changing its
structure (read back by a CommonMark parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.helpers import sitemap_urls
from support.sites import HTML, ROUTES, Site, make_site, stored_entries

from sitemap_middleware import Config, ConfigError, Entry
from sitemap_middleware.model import UNDATED, PartInfo, to_datetime
from sitemap_middleware.serving import llms
from sitemap_middleware.serving.arrangement import Arrangement, Part
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.visible import visible

BASE = "http://localhost"
LLMS = {"llms_txt": True}


def _page(title: str, description: str | None = None) -> bytes:
    meta = f'<meta name="description" content="{description}">' if description else ""
    return f"<html><head><title>{title}</title>{meta}</head><body>x</body>".encode()


def _visited(site: Site, *pages: tuple[str, str]) -> None:
    for path, title in pages:
        ROUTES[path] = (200, {"Content-Type": HTML}, [_page(title)])
        assert site.get(path).status == 200
    assert site.middleware.flush(5.0)


def _links(text: str) -> list[str]:
    return re.findall(r"^- \[.*\]\((\S+)\)", text, flags=re.MULTILINE)


def test_llms_txt_is_served_with_validators_on_both_stacks(
    make: Callable[..., Site],
) -> None:
    """Plain UTF-8 text, an ETag that a 304 honours, HEAD without a body; a
    404 while nothing is stored; off unless asked for."""
    assert make().get("/llms.txt").status == 404  # the app's: off by default
    site = make(LLMS)
    empty = site.get("/llms.txt")
    assert empty.status == 404 and empty.headers["cache-control"] == "no-store"
    _visited(site, ("/", "Home"), ("/about", "About us"))
    reply = site.get("/llms.txt")
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/plain; charset=utf-8"
    assert reply.headers["x-robots-tag"] == "noindex"
    text = reply.body.decode("utf-8")
    assert text.startswith("# localhost\n")
    assert (
        "## Pages\n\n- [Home](http://localhost/)\n- [About us](http://localhost/about)\n"
        in text
    )
    etag = reply.headers["etag"]
    assert site.get("/llms.txt", {"If-None-Match": etag}).status == 304
    head = site.head("/llms.txt")
    assert (head.status, head.body, head.headers["etag"]) == (200, b"", etag)
    assert site.request("POST", "/llms.txt").status == 405
    assert site.recorded() == ["/", "/about"]  # never recorded itself
    _visited(site, ("/jobs", "Jobs"))
    assert site.get("/llms.txt", {"If-None-Match": etag}).status == 200


def test_exactly_the_urls_the_sitemap_lists(make: Callable[..., Site]) -> None:
    """Every listed page once, and nothing else: a page the sitemap leaves
    out (excluded, noindex) is not in it."""
    site = make({**LLMS, "exclude": ["/private/*"]})
    _visited(
        site,
        ("/", "Home"),
        ("/blog/a", "A (first)"),
        ("/blog/b", "B"),
        ("/private/x", "X"),
        ("/docs/(draft)", "Draft"),
    )
    ROUTES["/hidden"] = (
        200,
        {"Content-Type": HTML},
        [b'<html><head><meta name="robots" content="noindex"><title>H</title>'],
    )
    assert site.get("/hidden").status == 200
    assert site.middleware.flush(5.0)
    listed = _links(site.get("/llms.txt").body.decode())
    expected = sitemap_urls(site)
    assert len(listed) == len(set(listed))
    assert {u.replace("%28", "(").replace("%29", ")") for u in listed} == set(expected)
    assert f"{BASE}/private/x" not in expected


def test_sections_their_labels_and_the_cap(make: Callable[..., Site]) -> None:
    """A heading per section in words, the sections asked for only, at most
    max_links links each in the map's order, the rest counted."""
    store = MemoryStore()
    store.upsert(
        [
            Entry("/", title="Home", section=""),
            *(
                Entry(f"/blog/{n}", title=f"Post {n}", section="posts")
                for n in range(5)
            ),
            Entry("/terms", title="Terms", section="legal"),
        ]
    )
    config = {
        "store": store,
        "sections": {"posts": ["/blog/*"], "legal": ["/terms"]},
        "section_labels": {"posts": "From the blog"},
        "llms_txt": {"sections": ["posts", "default"], "max_links": 2},
    }
    text = make(config).get("/llms.txt").body.decode()
    assert re.findall(r"^## (.*)$", text, flags=re.MULTILINE) == [
        "Pages",
        "From the blog",
    ]
    assert (
        "- [Post 0](http://localhost/blog/0)\n"
        "- [Post 1](http://localhost/blog/1)\n\n"
        "3 more pages of this section in the sitemap.\n" in text
    )
    assert "Terms" not in text
    every = make({**config, "llms_txt": {"max_links": None}}).get("/llms.txt")
    assert len(_links(every.body.decode())) == 7
    # Other options, other bytes: another ETag, though the store is the same.
    capped = make(config).get("/llms.txt").headers["etag"]
    assert every.headers["etag"] != capped
    relabelled = make({**config, "section_labels": {"posts": "Posts"}})
    assert relabelled.get("/llms.txt").headers["etag"] != capped


def test_the_site_map_page_s_options_it_shows_change_its_etag(
    make: Callable[..., Site],
) -> None:
    """llms.txt shows the site map's order and name: newest_first and
    site_name change its bytes, and so its ETag (a crawler revalidating after
    a deploy gets the new file)."""
    store = MemoryStore()
    store.upsert(
        [
            Entry("/blog/a", to_datetime(1_600_000_000), title="A older"),
            Entry("/blog/b", to_datetime(1_700_000_000), title="B newer"),
        ]
    )
    page = {"path": "/site-map"}
    old = make({**LLMS, "store": store, "html_sitemap": page}).get("/llms.txt")
    for options in ({"newest_first": ["/blog"]}, {"site_name": "Acme"}):
        site = make({**LLMS, "store": store, "html_sitemap": {**page, **options}})
        new = site.get("/llms.txt", {"If-None-Match": old.headers["etag"]})
        assert new.status == 200 and new.body != old.body, options
        assert new.headers["etag"] != old.headers["etag"], options


def test_each_site_has_its_own(stack: str) -> None:
    """With sites, each site's llms.txt lists its own pages under its origin."""
    sites = {
        "de": {"base_url": "https://example.de", "hosts": ["example.de"]},
        "fr": {"base_url": "https://example.fr", "hosts": ["example.fr"]},
    }
    site = make_site(stack, {"sites": sites, "store": "memory://", **LLMS})
    try:
        assert site.fetch("/about", [("Host", "example.de")]) == 200
        assert site.fetch("/xhtml", [("Host", "example.fr")]) == 200
        stored_entries(site.middleware.site("de"))
        stored_entries(site.middleware.site("fr"))
        de = site.get("/llms.txt", {"Host": "example.de"}).body.decode()
        fr = site.get("/llms.txt", {"Host": "example.fr"}).body.decode()
        assert de.startswith("# example.de\n") and fr.startswith("# example.fr\n")
        assert _links(de) == ["https://example.de/about"]
        assert _links(fr) == ["https://example.fr/xhtml"]
    finally:
        site.close()


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("yes", "'llms_txt' must be true, or a dict"),
        ({"paths": "/x"}, "unknown key 'paths' in 'llms_txt'"),
        ({"path": "llms.txt"}, "'llms_txt.path' must be a path such as '/llms.txt'"),
        ({"path": "/sitemap.xml"}, "must not be one of the sitemap's own paths"),
        ({"sections": ["posts"]}, "'llms_txt.sections' names 'posts', which"),
        ({"max_links": 0.5}, "'llms_txt.max_links' must be a whole number"),
    ],
)
def test_bad_options_are_refused(value: Any, error: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(error)):
        Config.from_mapping({"base_url": BASE, "llms_txt": value})


def test_its_path_is_its_own() -> None:
    with pytest.raises(ConfigError, match="is the 'html_sitemap' path"):
        Config.from_mapping(
            {"base_url": BASE, "html_sitemap": "/m", "llms_txt": {"path": "/m"}}
        )
    config = Config.from_mapping({"base_url": BASE, "llms_txt": {"path": "/ai.txt"}})
    assert (config.llms_txt, config.llms_txt_max_links) == ("/ai.txt", 100)


# -- escaping ----------------------------------------------------------------------

MARKDOWN = MarkdownIt("commonmark")
# Text a title or a description may hold, Markdown's markup and lines included.
hostile = st.text(
    st.sampled_from(list("[]()*_`\\<>#!|~&-+=.:1 \n\tab")) | st.characters(),
    max_size=40,
)


def _read(text: str) -> dict[str, Any]:
    """What a CommonMark reader finds in an llms.txt: the H1, the quote, and
    per H2 its items (the link's text and href, the text after it)."""
    tokens = MARKDOWN.parse(text)
    found: dict[str, Any] = {"h1": None, "quote": None, "sections": []}
    for at, token in enumerate(tokens):
        if token.type != "inline":
            continue
        opener = tokens[at - 1]
        if opener.type == "heading_open" and opener.tag == "h1":
            found["h1"] = _plain(token.children or [])
        elif opener.type == "heading_open":
            found["sections"].append((_plain(token.children or []), []))
        elif (
            opener.type == "paragraph_open"
            and at >= 2
            and tokens[at - 2].type == "blockquote_open"
        ):
            found["quote"] = _plain(token.children or [])
        elif (
            opener.type == "paragraph_open"
            and at >= 2
            and tokens[at - 2].type == "list_item_open"
        ):
            children = token.children or []
            assert children[0].type == "link_open", children
            close = next(i for i, c in enumerate(children) if c.type == "link_close")
            href = children[0].attrs["href"]
            found["sections"][-1][1].append(
                (_plain(children[1:close]), href, _plain(children[close + 1 :]))
            )
    return found


def _plain(children: list[Any]) -> str:
    assert all(c.type == "text" for c in children), [c.type for c in children]
    return "".join(c.content for c in children)


@given(
    name=hostile.filter(lambda t: visible(t) != ""),
    pages=st.lists(st.tuples(hostile, hostile), min_size=1, max_size=6),
    summary=hostile,
)
def test_hostile_titles_and_descriptions_keep_the_structure(
    name: str, pages: list[tuple[str, str]], summary: str
) -> None:
    """Whatever a title, a description or the site's name holds (brackets,
    parentheses, emphasis, entities, a leading '#', '-' or '>', newlines), a
    CommonMark reader finds one H1, one quote, one H2 and one link per page
    with the title, URL and description as written (whitespace collapsed);
    a URL's parentheses and what reads as an entity (/p&amp;x) too."""
    entries = [Entry("/", title="Home", description=summary)] + [
        Entry(f"/p{n}(x)&amp;y&#38;", title=title, description=description)
        for n, (title, description) in enumerate(pages)
    ]
    info = PartInfo(1, len(entries), UNDATED, "1.1", to_datetime(0))
    arranged = Arrangement.of((info,), [Part.read(info.version, entries)])
    text = llms.render(
        arranged.whole(BASE), site_name=name, summary=arranged.home_description()
    )
    read = _read(text)
    assert read["h1"] == visible(name)
    assert read["quote"] == (visible(summary) or None)
    [(heading, items)] = read["sections"]
    assert heading == "Pages"
    shown = {link.url: link for link in arranged.links(slice(None), BASE)}
    assert len(items) == len(entries)
    for title, href, rest in items:
        link = shown[href.replace("%28", "(").replace("%29", ")")]
        assert title == visible(link.title)
        assert rest == (
            f": {visible(link.description)}" if visible(link.description or "") else ""
        )


def test_llms_txt_of_an_empty_store_answers_as_the_index_while_pages_wait() -> None:
    """Pages seen but not written yet: llms.txt is not there yet (503 with
    ``Retry-After``), as the index, never a 404 a reader could keep."""
    from sitemap_middleware.serving.server import Server

    config = Config.from_mapping({"base_url": BASE, "store": "memory://", **LLMS})
    pending = True
    server = Server(config, MemoryStore(), pending=lambda: pending)
    for path in ("/sitemap.xml", "/llms.txt"):
        reply = server.serve("GET", path, lambda name: None)
        assert reply.status == 503, path
        assert dict(reply.headers)["Retry-After"], path
    pending = False
    assert server.serve("GET", "/llms.txt", lambda name: None).status == 404
