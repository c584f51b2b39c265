"""The protocol facts of ``sitemaps.py``: a W3C datetime read alike on every
supported Python."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.sitemaps import is_noindex, iso_moment, unavailable_after

_ZONES = st.sampled_from(["Z", "z", "+00:00", "+02:00", "-05:30", "+14:00"])


def _offset(zone: str) -> timedelta:
    if zone in ("Z", "z"):
        return timedelta(0)
    sign = -1 if zone[0] == "-" else 1
    return sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))


@given(
    st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9000, 1, 1)),
    st.text("0123456789", min_size=1, max_size=9),
    _ZONES,
)
def test_a_fraction_of_any_length_and_any_zone(
    moment: datetime, fraction: str, zone: str
) -> None:
    """W3C: "s = one or more digits representing a decimal fraction of a
    second"; the first six are kept, as Python 3.11's fromisoformat keeps
    them (3.10's reads three or six alone)."""
    text = f"{moment:%Y-%m-%dT%H:%M:%S}.{fraction}{zone}"
    expected = moment.replace(
        microsecond=int(fraction[:6].ljust(6, "0")),
        tzinfo=timezone(_offset(zone)),
    )
    read = iso_moment(text)
    assert read == expected
    assert read.utcoffset() == _offset(zone)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-02", datetime(2024, 5, 2)),
        ("2024-05-02T10:20Z", datetime(2024, 5, 2, 10, 20, tzinfo=timezone.utc)),
        ("2024-05-02T10:20:30", datetime(2024, 5, 2, 10, 20, 30)),
    ],
)
def test_the_forms_without_a_fraction(text: str, expected: datetime) -> None:
    assert iso_moment(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2024-13-01", "", "Z"])
def test_no_datetime_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        iso_moment(text)


UTC = timezone.utc


@pytest.mark.parametrize(
    ("value", "moment"),
    [
        ("unavailable_after: 2020-09-21", datetime(2020, 9, 21, tzinfo=UTC)),
        (
            "unavailable_after: 2020-09-21T10:30:00+02:00",
            datetime(2020, 9, 21, 8, 30, tzinfo=UTC),
        ),
        (
            "googlebot: unavailable_after: 25 Jun 2010 15:00:00 PST",
            datetime(2010, 6, 25, 23, 0, tzinfo=UTC),
        ),
        (
            "noarchive, UNAVAILABLE_AFTER: Fri, 25 Jun 2010 15:00:00 GMT, nosnippet",
            datetime(2010, 6, 25, 15, 0, tzinfo=UTC),
        ),
        (  # RFC 850
            "unavailable_after: Sunday, 01-Sep-24 15:00:00 GMT",
            datetime(2024, 9, 1, 15, 0, tzinfo=UTC),
        ),
        ("unavailable_after: soon", None),
        ("unavailable_after: 2020-02-30", None),
        ("unavailable_after:", None),
        ("noindex", None),
    ],
)
def test_unavailable_after(value: str, moment: datetime | None) -> None:
    assert unavailable_after(value) == moment


def test_unavailable_after_is_a_noindex_from_its_moment_on() -> None:
    value = "unavailable_after: 2020-09-21T00:00:00Z"
    moment = datetime(2020, 9, 21, tzinfo=UTC).timestamp()
    assert not is_noindex(value, now=moment - 1)
    assert is_noindex(value, now=moment)
    assert is_noindex(value)  # the clock's now
    assert not is_noindex("unavailable_after: 2999-01-01")
    assert is_noindex("index, follow, none")
