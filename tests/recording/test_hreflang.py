"""hreflang alternates in the output: only complete, reciprocal clusters that
include each member itself are written as xhtml:link; broken ones are left out
and counted, and every document still validates."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

import pytest
from support.helpers import NS, gunzip_once, validate
from support.sites import HTML, ROUTES, Site, html

from sitemap_middleware.model import Entry
from sitemap_middleware.recording import clusters
from sitemap_middleware.stores.memory import MemoryStore

# One article in three variants: x-default at /page, English, German.
CLUSTER = {"en": "/en/page", "de": "/de/page", "x-default": "/page"}


def serve(path: str, alternates: dict[str, str], **headers: str) -> None:
    """Make ``path`` a page declaring ``alternates`` (hreflang -> href)."""
    links = "".join(
        f'<link rel="alternate" hreflang="{lang}" href="{href}">'
        for lang, href in alternates.items()
    )
    fields = {"Content-Type": HTML, **headers}
    ROUTES[path] = (200, fields, [html(path, links)])


def visit(site: Site, alternates: dict[str, str], *paths: str) -> None:
    """Make each of ``paths`` a page declaring ``alternates``, and request it."""
    for path in paths:
        serve(path, alternates)
        site.get(path)


def sitemap(site: Site) -> dict[str, list[tuple[str, str]]]:
    """loc -> its (hreflang, href) links, from the validated first page."""
    site.recorded()
    root = validate(gunzip_once(site.get("/sitemap-1.xml.gz").body))
    return {
        url.findtext("sm:loc", namespaces=NS): [
            (link.get("hreflang"), link.get("href"))
            for link in url.iterfind("xhtml:link", NS)
        ]
        for url in root.iterfind("sm:url", NS)
    }


def lastmods(site: Site) -> dict[str, datetime | None]:
    site.recorded()
    return {
        entry.path: entry.lastmod
        for page in site.store.parts()
        for entry in site.store.entries(page.number)
    }


def absolute(cluster: dict[str, str]) -> list[tuple[str, str]]:
    return sorted((lang, f"http://localhost{path}") for lang, path in cluster.items())


def test_a_cluster_is_listed_once_complete(make: Callable[..., Site]) -> None:
    """Before the last member is recorded nobody has links; after it, every
    member lists all three, itself included, and the page validates."""
    site = make()
    for path in CLUSTER.values():
        serve(path, CLUSTER)
    site.get("/en/page")
    site.get("/de/page")
    assert all(links == [] for links in sitemap(site).values())
    assert site.skipped()["hreflang_incomplete"] == 2
    site.get("/page")
    listed = sitemap(site)
    assert listed == {
        f"http://localhost{p}": absolute(CLUSTER) for p in CLUSTER.values()
    }


def test_relative_hrefs_and_language_case(make: Callable[..., Site]) -> None:
    """Hrefs resolve against the page; "EN" and "en" name one language, and
    each page's own spelling is kept in its own links."""
    site = make()
    serve("/en/page", {"EN": "page", "de": "/de/page"})
    serve("/de/page", {"en": "../en/page", "DE": "http://localhost/de/page"})
    site.get("/en/page")
    site.get("/de/page")
    listed = sitemap(site)
    assert listed["http://localhost/en/page"] == [
        ("de", "http://localhost/de/page"),
        ("EN", "http://localhost/en/page"),
    ]
    assert listed["http://localhost/de/page"] == [
        ("DE", "http://localhost/de/page"),
        ("en", "http://localhost/en/page"),
    ]


def test_a_member_that_disagrees_breaks_the_cluster(make: Callable[..., Site]) -> None:
    """One member lists another set: nobody gets alternates, and it counts."""
    site = make()
    serve("/en/page", CLUSTER)
    serve("/de/page", CLUSTER)
    serve("/page", {"en": "/en/page", "x-default": "/page"})  # no German
    for path in CLUSTER.values():
        site.get(path)
    assert all(links == [] for links in sitemap(site).values())
    assert site.skipped()["hreflang_mismatch"] >= 1


def test_a_page_missing_from_its_own_set_gets_none(make: Callable[..., Site]) -> None:
    site = make()
    others = {"en": "/en/page", "de": "/de/page"}
    serve("/en/page", others)
    serve("/de/page", others)
    serve("/page", others)  # names the others, not itself
    for path in ("/en/page", "/de/page", "/page"):
        site.get(path)
    listed = sitemap(site)
    assert listed["http://localhost/page"] == []
    assert listed["http://localhost/en/page"] == absolute(others)
    assert site.skipped()["hreflang_mismatch"] == 1


def test_a_member_that_goes_away_takes_the_links_along(
    make: Callable[..., Site],
) -> None:
    """A member answering 404 is removed, and the others lose their links."""
    site = make({"recheck_interval": 0})
    visit(site, CLUSTER, *CLUSTER.values())
    assert all(links for links in sitemap(site).values())
    del ROUTES["/de/page"]
    assert site.get("/de/page").status == 404
    assert sitemap(site) == {
        "http://localhost/en/page": [],
        "http://localhost/page": [],
    }
    # Back again: the cluster is whole once more.
    serve("/de/page", CLUSTER)
    site.get("/de/page")
    assert all(links == absolute(CLUSTER) for links in sitemap(site).values())


@pytest.mark.parametrize("leaves", ["noindex", "other set"])
def test_a_member_that_changes_unlists_the_others(
    make: Callable[..., Site], leaves: str
) -> None:
    """Its content unchanged, a member turning noindex or declaring another
    set (only the head changed) unlists the cluster."""
    site = make({"recheck_interval": 0})
    visit(site, CLUSTER, *CLUSTER.values())
    assert all(links for links in sitemap(site).values())
    if leaves == "noindex":
        serve("/de/page", CLUSTER, **{"X-Robots-Tag": "noindex"})
    else:
        serve("/de/page", {**CLUSTER, "fr": "/fr/page"})
    site.get("/de/page")
    assert all(links == [] for links in sitemap(site).values())


def test_alternates_on_other_hosts_are_dropped(make: Callable[..., Site]) -> None:
    """A foreign href never reaches the sitemap; the rest of the cluster does."""
    site = make()
    declared = {
        "en": "/en/page",
        "de": "/de/page",
        "fr": "https://evil.example/fr/page",
        "it": "//evil.example/it/page",
    }
    visit(site, declared, "/en/page", "/de/page")
    listed = sitemap(site)
    own = absolute({"en": "/en/page", "de": "/de/page"})
    assert listed == {"http://localhost/en/page": own, "http://localhost/de/page": own}
    assert b"evil" not in gunzip_once(site.get("/sitemap-1.xml.gz").body)


def test_link_headers_count_as_tags(make: Callable[..., Site]) -> None:
    site = make()
    link = (
        '</en/page>; rel="alternate"; hreflang="en",'
        " </de/page>; rel=alternate; hreflang=de"
    )
    serve("/en/page", {}, Link=link)
    serve("/de/page", {}, Link=link)
    site.get("/en/page")
    site.get("/de/page")
    own = absolute({"en": "/en/page", "de": "/de/page"})
    assert set(map(tuple, sitemap(site).values())) == {tuple(own)}


@pytest.mark.slow
def test_adding_alternates_keeps_lastmod(make: Callable[..., Site]) -> None:
    """Members are rewritten with their links; their lastmod stays."""
    site = make()
    visit(site, CLUSTER, "/en/page", "/de/page")
    before = lastmods(site)
    time.sleep(1.1)  # lastmod is to the second
    serve("/page", CLUSTER)
    site.get("/page")
    assert all(sitemap(site).values())
    after = lastmods(site)
    assert after["/en/page"] == before["/en/page"]
    assert after["/de/page"] == before["/de/page"]


def test_paths_with_ampersands_are_escaped(make: Callable[..., Site]) -> None:
    site = make()
    cluster = {"en": "/a&amp;b/en", "de": "/a&amp;b/de"}  # as written in HTML
    visit(site, cluster, "/a&b/en", "/a&b/de")
    listed = sitemap(site)
    own = absolute({"en": "/a&b/en", "de": "/a&b/de"})
    assert listed == {"http://localhost/a&b/en": own, "http://localhost/a&b/de": own}
    xml = gunzip_once(site.get("/sitemap-1.xml.gz").body)
    assert b'href="http://localhost/a&amp;b/de"' in xml


def test_writing_again_rewrites_nothing_twice() -> None:
    """The store settles clusters in the write's transaction: a batch written
    again (a retry after a failed write) changes nothing and rewrites no
    member twice; each page written without its alternates is reported once
    a write, with its reason."""
    store = MemoryStore()
    pairs = (("de", "/de"), ("en", "/en"))
    decisions = []
    for write in (
        lambda: store.upsert([Entry("/en", alternates=pairs)]),
        lambda: store.upsert([Entry("/de", alternates=pairs)]),
        lambda: store.upsert([Entry("/de", alternates=pairs)]),
        lambda: store.remove(["/de"]),
        lambda: store.remove(["/de"]),
    ):
        with store.hreflang() as decided:
            write()
        decisions.append(decided)
    assert decisions == [
        {"/en": "hreflang_incomplete"},
        {"/de": None, "/en": None},  # /en written again, with its links
        {"/de": None},
        {"/en": "hreflang_incomplete"},  # /en written again, without them
        {},
    ]
    assert b"xhtml:link" not in b"".join(store.fragments(1))


def test_the_book_is_bounded() -> None:
    """Beyond its size the least recently written pages are forgotten: seen
    unchanged, they are written again (the store keeps their clusters)."""
    book = clusters.Declared(size=2)
    pairs = (("de", "/de"), ("en", "/en"))
    book.note("/en", pairs)
    assert book.holds("/en", pairs) and not book.holds("/en", ())
    book.note("/x", (("en", "/x"),))
    book.note("/y", (("en", "/y"),))
    assert not book.holds("/en", pairs)
    assert book.holds("/z", ())  # declaring none is what an unknown page holds
