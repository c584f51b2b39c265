"""The XML writer: escaping, fragments, schema validity and round trips of any
accepted entry."""

from __future__ import annotations

import gzip
import zlib
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.helpers import NS, parse, validate

from sitemap_middleware import Entry
from sitemap_middleware.model import PartInfo
from sitemap_middleware.render import (
    MAX_IMAGES,
    _stamp,
    escape,
    fragment,
    sitemapindex,
    urlset,
    w3c_datetime,
)
from sitemap_middleware.urls import normalise_path

BASE = "https://www.example.com"
T = int(datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp())


def page(entries: list[Entry], base: str = BASE, lastmod: int = T) -> bytes:
    """The uncompressed page of entries, through the stored-fragment path."""
    pieces = [fragment(entry, lastmod) for entry in entries]
    body = urlset(base, [b"".join(pieces[:2]), b"".join(pieces[2:])])
    return gzip.decompress(body)


def test_escape_all_five() -> None:
    assert escape("&'\"<>") == "&amp;&apos;&quot;&lt;&gt;"
    assert escape("plain") == "plain"


def test_metacharacters_round_trip() -> None:
    """Every metacharacter a stored path or base URL can carry comes back exactly."""
    root = parse(page([Entry("/a&b'c")], base="https://example.com/o'&x"))
    assert root.findtext(".//sm:loc", namespaces=NS) == "https://example.com/o'&x/a&b'c"
    assert root.findtext(".//sm:lastmod", namespaces=NS) == "2024-01-02T03:04:05+00:00"


def test_changefreq_and_priority_only_when_set() -> None:
    xml = page([Entry("/a"), Entry("/b", changefreq="daily", priority=0.3)])
    validate(xml)
    assert b"changefreq" not in xml.split(b"/b<")[0]
    assert b"<changefreq>daily</changefreq><priority>0.3</priority>" in xml


def test_alternates_and_images_validate() -> None:
    entry = Entry(
        "/en/a",
        alternates=(("en", "/en/a"), ("de-AT", "/de/a"), ("x-default", "/a")),
        images=("/img/1.png", "https://cdn.example.net/2.jpg?s=1&t=2"),
    )
    root = validate(page([entry]))
    links = root.findall(".//xhtml:link", NS)
    assert [(x.get("hreflang"), x.get("href")) for x in links] == [
        ("en", BASE + "/en/a"),
        ("de-AT", BASE + "/de/a"),
        ("x-default", BASE + "/a"),
    ]
    assert [i.text for i in root.iterfind(".//image:loc", NS)] == [
        BASE + "/img/1.png",
        "https://cdn.example.net/2.jpg?s=1&t=2",
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (Entry("relative"), "a path must be a normalised path"),
        (Entry("/a b"), "a path must be a normalised path"),
        (Entry("/" + "a" * 2040), "at most 2039 characters"),
        (Entry("/a", priority=1.5), "priority must be 0.0 to 1.0"),
        (Entry("/a", alternates=(("en us", "/a"),)), "hreflang must be a language"),
        (Entry("/a", alternates=(("en", "javascript:x()"),)), "an alternate"),
        (Entry("/a", alternates=(("en", "https://x.example/<"),)), "an alternate"),
        (Entry("/a", images=("javascript:alert(1)",)), "an image must be a path"),
        (Entry("/a", images=("/i.png",) * (MAX_IMAGES + 1)), "at most 1000 images"),
    ],
)
def test_bad_entries_refused(entry: Entry, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fragment(entry, T)


def test_one_gzip_member_and_the_level() -> None:
    entries = [Entry(f"/p/{n}") for n in range(2000)]
    pieces = b"".join(fragment(e, T) for e in entries)
    fast, small = urlset(BASE, [pieces], level=1), urlset(BASE, [pieces], level=9)
    assert gzip.decompress(fast) == gzip.decompress(small)
    assert len(small) < len(fast)
    # One member: a decoder that stops after the first member sees it all.
    reader = zlib.decompressobj(31)
    assert reader.decompress(small) == gzip.decompress(small)
    assert reader.eof and reader.unused_data == b""


def test_w3c_datetime_with_zone() -> None:
    moment = datetime(2024, 6, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
    assert w3c_datetime(moment) == "2024-06-01T12:00:00+00:00"


@given(st.integers(min_value=1, max_value=253402300799))
def test_fragment_lastmod_is_the_w3c_datetime_of_its_second(seconds: int) -> None:
    stamp = w3c_datetime(datetime.fromtimestamp(seconds, timezone.utc))
    assert f"<lastmod>{stamp}</lastmod>".encode() in fragment(Entry("/"), seconds)


paths = (
    st.text(min_size=0, max_size=200)
    .map(lambda t: normalise_path("/" + t))
    .filter(lambda p: p is not None)
)
moments = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2100, 1, 1),
    timezones=st.just(timezone.utc),
).map(lambda d: d.replace(microsecond=0))


@settings(max_examples=50)
@given(st.lists(st.tuples(paths, moments), min_size=1, max_size=30))
def test_any_accepted_entries_validate_and_round_trip(
    rows: list[tuple[str, datetime]],
) -> None:
    """Accepted entries render to XML that parses, validates and round-trips."""
    pieces = [fragment(Entry(p), int(m.timestamp())) for p, m in rows]
    xml = gzip.decompress(urlset(BASE, [b"".join(pieces)]))
    root = validate(xml)
    assert [u.findtext("sm:loc", namespaces=NS) for u in root] == [
        BASE + path for path, _ in rows
    ]
    assert [
        datetime.fromisoformat(u.findtext("sm:lastmod", namespaces=NS)) for u in root
    ] == [moment for _, moment in rows]


def test_index_validates() -> None:
    moment = datetime(2024, 1, 1, tzinfo=timezone.utc)
    pages = [PartInfo(n, 1, moment, "v", moment) for n in (1, 2, 7)]
    root = validate(sitemapindex(BASE + "/shop", pages).encode())
    assert [s.findtext("sm:loc", namespaces=NS) for s in root] == [
        f"{BASE}/shop/sitemap-{n}.xml.gz" for n in (1, 2, 7)
    ]


def test_standard_library_fallback_gives_the_same_document() -> None:
    """Without zlib-ng the page is the same document, one gzip member."""
    pieces = [b"".join(fragment(Entry(f"/p/{n}"), T) for n in range(3000))]
    default, stdlib = urlset(BASE, pieces), urlset(BASE, pieces, deflate=zlib)
    assert zlib.decompress(stdlib, 31) == gzip.decompress(default)
    assert stdlib == urlset(BASE, pieces, deflate=zlib)  # deterministic


def test_an_alternate_on_another_site_is_written_as_it_is() -> None:
    """A member on another of the app's sites keeps its own origin when the
    page's is put in; a member on the site takes the page's."""
    entry = Entry(
        "/x", alternates=(("de", "/x"), ("fr", "https://example.fr/x?a=1&b=2"))
    )
    xml = gzip.decompress(urlset("https://example.de", [fragment(entry, 0)]))
    validate(xml)
    assert b'hreflang="de" href="https://example.de/x"' in xml
    assert b'hreflang="fr" href="https://example.fr/x?a=1&amp;b=2"' in xml


@given(st.integers(min_value=1, max_value=4_102_444_800))
def test_a_stored_lastmod_is_stamped_as_its_w3c_datetime(seconds: int) -> None:
    # The stamp is tables and a date cached per day: the same text as the
    # datetime formatted, whatever the day, hour, minute and second.
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    assert _stamp(seconds) == w3c_datetime(moment)
