"""The XML writer: escaping, schema validity and round trips of any accepted entry."""

from __future__ import annotations

from datetime import datetime, timezone

from helpers import NS, parse, validate
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_middleware import Entry
from sitemap_middleware.render import escape, gzip, sitemapindex, urlset, w3c_datetime
from sitemap_middleware.stores.base import PageInfo
from sitemap_middleware.urls import normalise_path

BASE = "https://www.example.com"


def test_escape_all_five() -> None:
    assert escape("&'\"<>") == "&amp;&apos;&quot;&lt;&gt;"
    assert escape("plain") == "plain"


def test_metacharacters_round_trip() -> None:
    """Every metacharacter a stored path could carry comes back exactly."""
    entries = [
        Entry("/a&b'c\"d<e>f", datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    ]
    root = parse("".join(urlset(BASE, entries)).encode())
    assert root.findtext(".//sm:loc", namespaces=NS) == BASE + "/a&b'c\"d<e>f"
    assert root.findtext(".//sm:lastmod", namespaces=NS) == "2024-01-02T03:04:05+00:00"


def test_changefreq_and_priority_only_when_set() -> None:
    entries = [Entry("/a"), Entry("/b", changefreq="daily", priority=0.3)]
    xml = "".join(urlset(BASE, entries)).encode()
    validate(xml)
    assert b"changefreq" not in xml.split(b"/b<")[0]
    assert b"<changefreq>daily</changefreq><priority>0.3</priority>" in xml
    defaulted = "".join(urlset(BASE, entries, "weekly", 0.5))
    assert defaulted.count("<changefreq>weekly</changefreq>") == 1
    assert defaulted.count("<priority>0.5</priority>") == 1


def test_w3c_datetime_with_zone() -> None:
    moment = datetime(2024, 6, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
    assert w3c_datetime(moment) == "2024-06-01T12:00:00+00:00"


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
    """Accepted entries render to XML that parses, validates and round-trips,
    as a page and through gzip."""
    entries = [Entry(path, lastmod) for path, lastmod in rows]
    pieces = list(urlset(BASE, entries))
    xml = "".join(pieces).encode()
    root = validate(xml)
    assert [u.findtext("sm:loc", namespaces=NS) for u in root] == [
        BASE + e.path for e in entries
    ]
    assert [
        datetime.fromisoformat(u.findtext("sm:lastmod", namespaces=NS)) for u in root
    ] == [e.lastmod for e in entries]
    import gzip as stdlib_gzip

    assert stdlib_gzip.decompress(gzip(pieces)) == xml


def test_index_validates() -> None:
    moment = datetime(2024, 1, 1, tzinfo=timezone.utc)
    pages = [PageInfo(n, 1, moment, "v", moment) for n in (1, 2, 7)]
    root = validate(sitemapindex(BASE + "/shop", pages).encode())
    assert [s.findtext("sm:loc", namespaces=NS) for s in root] == [
        f"{BASE}/shop/sitemap-{n}.xml.gz" for n in (1, 2, 7)
    ]
