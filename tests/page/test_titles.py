"""Titles: read from the page (its <title>, else its first <h1>), the affix the
site repeats taken out by the writer, stored beside each entry by every store,
never in the sitemap, and moving neither lastmod nor the part's version."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware import Entry, Store
from sitemap_middleware.config import Config
from sitemap_middleware.page.head import scan_head
from sitemap_middleware.page.titles import (
    MAX_DESCRIPTION,
    MAX_TITLE,
    Affix,
    Titles,
    clean,
    describe,
    heading,
)
from sitemap_middleware.reasons import RECORD
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.recording.sharing import TITLE_AFFIX
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
T1 = datetime(2024, 2, 1, tzinfo=timezone.utc)
CONFIG = Config.from_mapping(
    {"base_url": "https://www.example.com", "store": "memory://"}
    | {"new_urls_per_minute": None}
)
HTML = [("Content-Type", "text/html; charset=utf-8")]


def titles(store: Store) -> dict[str, str | None]:
    return {e.path: e.title for p in store.parts() for e in store.entries(p.number)}


# -- reading a title -------------------------------------------------------------


def test_the_head_gives_the_first_title_decoded() -> None:
    head = scan_head(
        [
            b"<html><head><title>\n  Caf&eacute; &amp;\tbar\n</title>",
            b"<title>second</title></head><body>",
        ]
    )
    assert clean(head.title) == "Café & bar"


def test_a_title_is_read_without_any_other_declaration() -> None:
    """Pages that declare nothing else (no robots, canonical) still have one."""
    assert scan_head([b"<html><head><title>Plain</title></head>"]).title == "Plain"


def test_the_first_h1_when_the_head_has_no_title() -> None:
    body = [b"<html><body><nav>x</nav><h1 class=t>Hello <em>big</em>", b"\n world"]
    assert heading([*body, b"</h1><h1>second</h1>"]) == "Hello big world"
    assert heading([b"<html><body><p>none</p>"]) is None


@pytest.mark.parametrize(
    "h1",
    [
        "<h1>Hello <script>track('h1')</script>world</h1>",
        "<h1>Hello <style>.x{color:red}</style>world</h1>",
        "<h1>Hello <template><b>later</b><template>x</template></template>world</h1>",
        "<h1>Hello <script>if (a</b) {}</script>world</h1>",
    ],
)
def test_a_heading_is_the_text_it_shows(h1: str) -> None:
    """A script, style or template in the first heading shows nothing: its
    code is no part of the title."""
    assert heading([f"<html><body>{h1}<p>more</p>".encode()]) == "Hello world"


def test_titles_are_bounded_at_a_word() -> None:
    long = "word " * 100
    cut = clean(long)
    assert cut is not None and len(cut) <= MAX_TITLE and cut.endswith("word…")
    assert clean("   ") is None


@given(st.text(max_size=1000))
def test_descriptions_follow_the_title_rules(text: str) -> None:
    """A description is visible text, whitespace collapsed, at most
    MAX_DESCRIPTION characters, cut at a word: what the title rules give
    with that bound, and the whole text when it fits."""
    described = describe(text)
    assert described == clean(text, MAX_DESCRIPTION)
    if described is None:
        return
    assert len(described) <= MAX_DESCRIPTION
    assert " ".join(described.split()) == described
    shown = clean(text, 10**6)
    if shown is not None and len(shown) <= MAX_DESCRIPTION:
        assert described == shown
    else:
        assert described.endswith("…")
        assert shown is not None and shown.startswith(described[:-1])


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("Bell\x07 and\x1b[31m escape", "Bell and[31m escape"),
        ("Zero\u200bwidth\u2060joined", "Zerowidthjoined"),
        # Overrides and isolates would reorder the text shown around a title.
        ("\u202eevil\u202c and \u2067isolated\u2069", "evil and isolated"),
        ("soft\xadhyphen\ufeff", "softhyphen"),
        ("line\u2028and\u2029paragraph", "line and paragraph"),
        ("private\ue000use", "privateuse"),
        # Joiners are how some words and emoji are written: kept between two
        # visible characters, dropped elsewhere.
        ("\u200dme\u200cxa \u200d", "me\u200cxa"),
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467 family", None),
        ("\x07\u200b\u202e", "NONE"),
    ],
)
def test_titles_are_visible_text_only(title: str, shown: str | None) -> None:
    """Controls and invisible format characters are taken out, whatever the
    script, so a title shows as text and never changes the text around it."""
    cleaned = clean(title)
    if shown == "NONE":
        assert cleaned is None
        return
    assert cleaned == (title if shown is None else shown)
    assert cleaned is not None
    assert all(c.isprintable() or c in "\u200c\u200d" for c in cleaned)


def test_a_hostile_title_is_stored_clean_through_the_writer() -> None:
    """From the page to the store, on the writer's path: the title and the
    first heading both."""
    store = MemoryStore()
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        recorder.submit(observed("/t", "<title>A\x07B&#x202e;C&#8203;D</title>"))
        recorder.submit(observed("/h", "", "<h1>\u2066E\x1bF</h1>"))
        assert recorder.flush(5.0)
    finally:
        recorder.close()
    assert titles(store) == {"/t": "ABCD", "/h": "EF"}


# -- the site's affix ------------------------------------------------------------


@pytest.mark.parametrize(
    ("seen", "page", "expected"),
    [
        (["About | Acme", "Blog | Acme", "Jobs | Acme"], "Team | Acme", "Team"),
        (["About · Acme", "Blog · Acme", "Jobs · Acme"], "Acme", "Acme"),
        (["Acme - About", "Acme - Blog", "Acme - Jobs"], "Acme - Team", "Team"),
        # No affix the pages agree on: full titles.
        (["About us", "Our blog", "Jobs"], "Team | Acme", "Team | Acme"),
        # Fewer pages than MIN_PAGES agree: full titles.
        (["About | Acme", "Blog | Acme"], "Team | Acme", "Team | Acme"),
        # The whole title is the affix: kept.
        (["About | Acme", "Blog | Acme", "Jobs | Acme"], " | Acme", " | Acme"),
    ],
)
def test_the_affix_the_site_repeats_is_taken_out(
    seen: list[str], page: str, expected: str
) -> None:
    learner = Titles()
    for n, title in enumerate(seen):
        learner.see(f"/{n}", title)
    learner.learn()
    assert learner.strip(page) == expected


def test_an_affix_packs_for_the_store() -> None:
    affix = Affix(" | Acme", False)
    assert Affix.unpack(affix.pack()) == affix
    assert Affix.unpack(None) is None
    assert Affix.unpack("junk") is None


# -- stored ----------------------------------------------------------------------


def test_titles_are_stored_and_returned(make_store: Callable[..., Store]) -> None:
    """Bulk upserts keep titles; entries(n) returns them; the fragment has none."""
    store = make_store()
    store.upsert(Entry(f"/p/{n}", T0, "f", title=f"Page {n} é") for n in range(50))
    store.upsert([Entry("/none", T0, "f")])
    got = titles(store)
    assert got["/p/7"] == "Page 7 é" and got["/none"] is None
    assert b"Page" not in b"".join(store.fragments(1))


def test_a_new_title_alone_moves_nothing(make_store: Callable[..., Store]) -> None:
    """Same content, new title: stored, lastmod and the part's version and bytes
    kept; an entry without a title keeps the stored one."""
    store = make_store()
    store.upsert([Entry("/a", T0, "f", title="Old"), Entry("/b", T0, "g")])
    (before,) = store.parts()
    fragments = b"".join(store.fragments(1))
    assert store.upsert([Entry("/a", T1, "f", title="New")]) == 1
    (after,) = store.parts()
    assert titles(store)["/a"] == "New"
    assert after.version == before.version and after.lastmod == before.lastmod
    assert b"".join(store.fragments(1)) == fragments
    assert store.upsert([Entry("/a", T1, "f")]) == 0
    assert titles(store)["/a"] == "New"
    # A content change with a title moves lastmod and the version as before.
    store.upsert([Entry("/a", T1, "changed", title="Newer")])
    (changed,) = store.parts()
    assert changed.version != before.version and titles(store)["/a"] == "Newer"


def test_a_removed_page_leaves_no_title(make_store: Callable[..., Store]) -> None:
    store = make_store()
    store.upsert([Entry("/a", T0, "f", title="A")])
    store.remove(["/a"])
    store.upsert([Entry("/a", T0, "f")])
    assert titles(store) == {"/a": None}


# -- the writer ------------------------------------------------------------------


def observed(path: str, head: str, body: str = "") -> Observation:
    chunk = f"<html><head>{head}</head><body>{body}{path}</body></html>".encode()
    route = Routes(CONFIG).unknown
    return Observed(
        RECORD, path, path, "", False, route, HTML, [chunk], len(chunk), time.time()
    )


def test_the_writer_stores_titles_without_the_sites_affix() -> None:
    store = MemoryStore()
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        recorder.submit(observed("/", "<title>Acme</title>"))
        for name in ("about", "blog", "jobs", "team"):
            recorder.submit(observed(f"/{name}", f"<title>{name} | Acme</title>"))
        recorder.submit(observed("/h", "", "<h1>Heading &amp; more</h1>"))
        recorder.submit(observed("/bare", "<meta name=x content=y>"))
        assert recorder.flush(5.0)
    finally:
        recorder.close()
    assert titles(store) == {
        "/": "Acme",
        "/about": "about",
        "/blog": "blog",
        "/jobs": "jobs",
        "/team": "team",
        "/h": "Heading & more",
        "/bare": None,
    }
    # Shared with the other writers of the site, which start from it.
    assert store.setting(TITLE_AFFIX) == "suffix  | Acme"
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        recorder.submit(observed("/new", "<title>new | Acme</title>"))
        assert recorder.flush(5.0)
    finally:
        recorder.close()
    assert titles(store)["/new"] == "new"


@pytest.mark.parametrize("encoding", ["cp1252", "shift_jis", "utf-16-le"])
def test_heading_in_the_page_s_charset(encoding: str) -> None:
    """A page without a <title> is named by its <h1>, read as it declares."""
    text = "Café" if encoding == "cp1252" else "日本語 ページ"
    body = f"<html><body><main><h1>{text}</h1>".encode(encoding)
    assert heading([body], encoding) == text
    assert heading([body]) != text  # read as UTF-8
