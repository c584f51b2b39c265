"""Honest lastmod through the whole pipeline (app -> middleware -> store -> sitemap
XML) on every store kind: a page seen once without a date of its own has no
<lastmod>; a change of its content seen dates it; a date the page declares
(article:modified_time, JSON-LD dateModified, Last-Modified) is shown unless it is
in the future, before the web, or the response's own time. And the head is read
in the charset the page declares."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.helpers import sitemap_lastmods
from support.sites import BASE, HTML, ROUTES, Site, make_site
from support.store_kinds import KINDS, Fresh

from sitemap_middleware.model import UNDATED

URL = "http://localhost"
PAST = datetime(2024, 3, 2, 1, 2, 3, tzinfo=timezone.utc)
LATER = datetime(2024, 7, 8, 9, 10, 11, tzinfo=timezone.utc)


def page(words: str, head: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>T</title>{head}"
        f"</head><body><main><h1>T</h1><p>{words}</p></main></body></html>"
    ).encode()


def serve(path: str, body: bytes, **headers: str) -> None:
    fields = {
        "Content-Type": HTML,
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    ROUTES[path] = (200, fields, [body])


def article(moment: datetime | str) -> str:
    text = moment if isinstance(moment, str) else moment.isoformat()
    return f'<meta property="article:modified_time" content="{text}">'


def json_ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


def w3c(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


@pytest.fixture(params=KINDS)
def kind_site(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[Callable[..., Site]]:
    """``kind_site(config)``: a WSGI site on a fresh store of each kind."""
    made: list[Site] = []

    def build(overrides: dict[str, Any] | None = None) -> Site:
        store = fresh.uri(request.param, tmp_path)
        config = {**BASE, "store": store, "recheck_interval": 0, **(overrides or {})}
        made.append(make_site("wsgi", config))
        return made[-1]

    yield build
    for site in made:
        site.close()


def lastmods(site: Site) -> dict[str, str | None]:
    """Path -> the <lastmod> of its <url> (None: none), every document
    validated against the schemas."""
    site.recorded()  # flushed
    return {url[len(URL) :]: text for url, text in sitemap_lastmods(site).items()}


def test_first_sight_without_a_date_has_no_lastmod(
    kind_site: Callable[..., Site],
) -> None:
    site = kind_site()
    serve("/plain", page("words"))
    site.visit("/plain")
    assert lastmods(site) == {"/plain": None}
    entry = site.entries()["/plain"]
    assert entry.lastmod == UNDATED and entry.fingerprint
    # Seen again, the same: still no date. The index dates the part all the
    # same, by when the file changed.
    site.visit("/plain")
    assert lastmods(site) == {"/plain": None}
    assert b"<lastmod>" in site.get("/sitemap.xml").body
    assert (part := site.store.part(1)) is not None and part.lastmod == UNDATED


def test_a_change_of_content_is_dated_when_it_is_seen(
    kind_site: Callable[..., Site],
) -> None:
    site = kind_site()
    serve("/plain", page("first words"))
    site.visit("/plain")
    assert lastmods(site) == {"/plain": None}
    serve("/plain", page("second words"))
    before = datetime.now(timezone.utc).replace(microsecond=0)
    site.visit("/plain")
    after = datetime.now(timezone.utc)
    text = lastmods(site)["/plain"]
    assert text is not None
    assert before <= datetime.fromisoformat(text) <= after
    assert w3c(site.store.part(1).lastmod) == text  # the part's newest
    # The same content again keeps it.
    site.visit("/plain")
    assert lastmods(site)["/plain"] == text


def test_declared_dates_are_shown_and_implausible_ones_ignored(
    kind_site: Callable[..., Site],
) -> None:
    site = kind_site()
    now = datetime.now(timezone.utc)
    pages = {
        "/article": (page("a", article(PAST)), {}),
        "/json-ld": (
            page(
                "j",
                json_ld(
                    {
                        "@context": "https://schema.org",
                        "@graph": [
                            {"@type": "WebPage", "dateModified": PAST.isoformat()},
                            {"@type": "Article", "dateModified": "2023-01-01"},
                        ],
                    }
                ),
            ),
            {},
        ),
        "/header": (page("h"), {"Last_Modified": http_date(PAST)}),
        # Each source in order: the page's own words before the header.
        "/both": (page("b", article(LATER)), {"Last_Modified": http_date(PAST)}),
        "/future": (page("f", article(now + timedelta(days=2))), {}),
        "/before-the-web": (page("o", article("1990-12-31T23:59:59Z")), {}),
        # A framework stamping each response with its own time: no evidence.
        "/stamped": (page("s"), {"Last_Modified": http_date(now)}),
        # An implausible one gives way to the next source.
        "/fallback": (
            page("x", article(now + timedelta(days=400))),
            {"Last_Modified": http_date(PAST)},
        ),
        "/bad-json": (
            page("k", '<script type="application/ld+json">{"dateModified": '),
            {},
        ),
    }
    for path, (body, headers) in pages.items():
        serve(path, body, **headers)
        assert site.get(path).status == 200
    assert lastmods(site) == {
        "/article": w3c(PAST),
        "/json-ld": w3c(PAST),  # the newest of the graph's
        "/header": w3c(PAST),
        "/both": w3c(LATER),
        "/future": None,
        "/before-the-web": None,
        "/stamped": None,
        "/fallback": w3c(PAST),
        "/bad-json": None,
    }


def test_a_declared_date_moves_forward_only(kind_site: Callable[..., Site]) -> None:
    """A newer declared date moves lastmod, content changed or not; an older one
    never moves it back; a page that stops declaring keeps it until its content
    is seen to change."""
    site = kind_site()
    serve("/p", page("same", article(PAST)))
    site.visit("/p")
    assert lastmods(site) == {"/p": w3c(PAST)}
    serve("/p", page("same", article(LATER)))
    site.visit("/p")
    assert lastmods(site) == {"/p": w3c(LATER)}
    serve("/p", page("other", article(PAST)))
    site.visit("/p")
    assert lastmods(site) == {"/p": w3c(LATER)}
    serve("/p", page("other"))
    site.visit("/p")
    assert lastmods(site) == {"/p": w3c(LATER)}
    serve("/p", page("changed"))
    before = datetime.now(timezone.utc).replace(microsecond=0)
    site.visit("/p")
    text = lastmods(site)["/p"]
    assert text is not None and datetime.fromisoformat(text) >= before


@pytest.mark.parametrize("source", ["first-seen", "content"])
def test_first_seen_keeps_the_first_sight_time(
    make: Callable[..., Site], source: str
) -> None:
    """The releases before's behaviour, by name ("content" is its old name): the
    first sight counts as a change, and declared dates are not read."""
    site = make({"lastmod_source": source})
    serve("/p", page("words", article(PAST)))
    before = datetime.now(timezone.utc).replace(microsecond=0)
    site.visit("/p")
    text = lastmods(site)["/p"]
    assert text is not None and datetime.fromisoformat(text) >= before


def test_changes_ignores_declared_dates(make: Callable[..., Site]) -> None:
    site = make({"lastmod_source": "changes"})
    serve("/p", page("words", article(PAST)), Last_Modified=http_date(PAST))
    site.visit("/p")
    assert lastmods(site) == {"/p": None}


def test_an_imported_row_gaining_a_fingerprint_is_no_change(
    make: Callable[..., Site],
) -> None:
    """A row loaded in bulk (no fingerprint) keeps its lastmod, dated or not,
    when the page is first recorded: that is no change seen."""
    from sitemap_middleware import Entry

    site = make()
    site.store.upsert([Entry("/p", PAST), Entry("/q", UNDATED)])
    serve("/p", page("p"))
    serve("/q", page("q"))
    site.visit("/p", "/q")
    assert lastmods(site) == {"/p": w3c(PAST), "/q": None}
    assert all(e.fingerprint for e in site.entries().values())


# -- the property --------------------------------------------------------------------

DATES = st.sampled_from(
    [
        None,
        "2021-05-06T07:08:09Z",
        "2024-03-02T01:02:03+02:00",
        "2024-03-02",
        "1985-01-01T00:00:00Z",
        "2999-01-01T00:00:00Z",
        "not a date",
    ]
)
STEPS = st.lists(st.tuples(st.integers(0, 2), DATES), min_size=1, max_size=6)


def _plausible(text: str | None, now: datetime) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if moment.year < 1991 or moment > now - timedelta(seconds=60):
        return None
    return moment


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_lastmod_is_never_in_the_future_nor_before_a_change_seen(
    steps: list[tuple[int, str | None]],
) -> None:
    """Whatever a page serves, version after version: its lastmod is never in
    the future; without a plausible declared date it is absent until the
    content is first seen to change, and never earlier than that; it never
    moves back; and it is never before the newest plausible date declared."""
    site = make_site("wsgi", {**BASE, "recheck_interval": 0})
    try:
        shown_before: datetime | None = None
        first_change: datetime | None = None
        first_content: int | None = None
        newest_declared: datetime | None = None
        for version, declared in steps:
            head = "" if declared is None else article(declared)
            serve("/p", page(f"version {version}", head))
            start = datetime.now(timezone.utc).replace(microsecond=0)
            if first_content is None:
                first_content = version
            elif version != first_content and first_change is None:
                first_change = start
            plausible = _plausible(declared, start)
            if plausible is not None:
                newest_declared = max(filter(None, [newest_declared, plausible]))
            site.visit("/p")
            text = lastmods(site)["/p"]
            now = datetime.now(timezone.utc)
            if text is None:
                assert newest_declared is None and first_change is None
                continue
            shown = datetime.fromisoformat(text)
            assert shown <= now
            if newest_declared is None:
                assert first_change is not None and shown >= first_change
            else:
                assert shown >= newest_declared.replace(microsecond=0)
            assert shown_before is None or shown >= shown_before
            shown_before = shown
    finally:
        site.close()
        ROUTES.pop("/p", None)


# -- the head in the page's charset ----------------------------------------------------


def _charset_pages() -> dict[str, tuple[dict[str, str], bytes, str]]:
    """Path -> (headers, body, the title a person reads)."""
    title = "Café crème"
    canonical = '<link rel="canonical" href="/caf\u00e9">'  # its own path, unescaped
    latin = (
        f"<html><head><title>{title}</title>{canonical}{article(PAST)}</head>"
        "<body><p>x</p></body></html>"
    )
    japanese = "日本語のページ"
    sjis_canonical = '<link rel="canonical" href="/日本">'
    sjis = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; '
        f'charset=Shift_JIS"><title>{japanese}</title>{sjis_canonical}</head>'
        "<body><p>x</p></body></html>"
    )
    utf16 = (
        f"<html><head><title>{japanese} é</title></head><body><p>x</p></body></html>"
    )
    return {
        # The header's charset.
        "/café": (
            {"Content-Type": "text/html; charset=windows-1252"},
            latin.encode("cp1252"),
            title,
        ),
        # A <meta charset> in the head (ISO-8859-1, read as windows-1252).
        "/latin": (
            {"Content-Type": "text/html"},
            latin.replace("<head>", '<head><meta charset="ISO-8859-1">')
            .replace("/caf\u00e9", "/latin")
            .encode("latin-1"),
            title,
        ),
        # A multi-byte encoding, declared by http-equiv.
        "/日本": ({"Content-Type": "text/html"}, sjis.encode("shift_jis"), japanese),
        # UTF-16 with its byte order mark.
        "/utf16": (
            {"Content-Type": "text/html"},
            utf16.encode("utf-16"),
            f"{japanese} é",
        ),
        # An unknown charset: UTF-8, never an error.
        "/unknown": (
            {"Content-Type": "text/html; charset=x-no-such-thing"},
            page("u").replace(b"<title>T", "<title>Tö".encode()),
            "Tö",
        ),
    }


def test_the_head_is_read_in_the_charset_the_page_declares(
    make: Callable[..., Site],
) -> None:
    """Title, canonical and dates of pages in windows-1252, ISO-8859-1,
    Shift_JIS and UTF-16 read as the page declares: each page names itself as
    canonical in its own charset (read as UTF-8 its é would be another URL) and
    is listed with its title as written."""
    site = make()
    pages = _charset_pages()
    for path, (headers, body, _) in pages.items():
        ROUTES[path] = (200, headers, [body])
    try:
        for path in pages:
            assert site.get(path).status == 200
        entries = site.entries()
        assert site.skipped() == {}
        titles = {path: entry.title for path, entry in entries.items()}
        assert titles == {
            "/caf%C3%A9": "Café crème",
            "/latin": "Café crème",
            "/%E6%97%A5%E6%9C%AC": "日本語のページ",
            "/utf16": "日本語のページ é",
            "/unknown": "Tö",
        }
        shown = lastmods(site)
        assert shown["/caf%C3%A9"] == shown["/latin"] == w3c(PAST)
    finally:
        for path in pages:
            ROUTES.pop(path, None)


# -- what shows a lastmod --------------------------------------------------------------


def test_everything_that_shows_a_lastmod_shows_none(tmp_path: Path) -> None:
    """site_map(), the CLI's list, explain and stats: "none" for a page without
    a date, the date for one with; the export's parts stay valid."""
    import csv
    import io

    from click.testing import CliRunner
    from support.helpers import gunzip_once, validate

    from sitemap_middleware import Entry, open_store, site_map
    from sitemap_middleware.cli import main

    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    with open_store(uri) as store:
        store.upsert([Entry("/dated", PAST, "a"), Entry("/undated", UNDATED, "b")])
        mapped = site_map(store, URL)
        links = {link.path: link.lastmod for s in mapped.sections for link in s.links}
        assert links == {"/dated": PAST, "/undated": None}

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, "--store", uri, "--base-url", URL])
        assert result.exit_code == 0, result.output
        return result.stdout

    rows = list(csv.reader(io.StringIO(run("list", "--format", "csv"))))
    assert rows[1:] == [[f"{URL}/dated", w3c(PAST), ""], [f"{URL}/undated", "", ""]]
    listed = json.loads(run("list", "--format", "json"))
    assert [row["lastmod"] for row in listed] == [w3c(PAST), None]
    assert "lastmod: none" in run("explain", f"{URL}/undated")
    assert f"lastmod: {w3c(PAST)}" in run("explain", f"{URL}/dated")
    stats = json.loads(run("stats", "--json"))
    assert stats["parts"][0]["lastmod"] == w3c(PAST)
    run("export", str(tmp_path / "out"))
    part = validate(gunzip_once((tmp_path / "out" / "sitemap-1.xml.gz").read_bytes()))
    assert len(part) == 2
    validate((tmp_path / "out" / "sitemap.xml").read_bytes())
