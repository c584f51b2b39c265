"""An :class:`Entry` as its constructors make it (``Entry()``, ``entries()``):
every field as given or defaulted, frozen, of its own class."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import datetime, timezone

import pytest

from sitemap_middleware.model import UNDATED, Entry, entries

WHEN = datetime(2024, 5, 1, tzinfo=timezone.utc)
FIELDS = {
    "path": "/a",
    "lastmod": WHEN,
    "fingerprint": "f",
    "changefreq": "daily",
    "priority": 0.5,
    "route": "/<x>",
    "alternates": (("de", "/de/a"),),
    "images": ("/i.png",),
    "title": "A",
    "seen": UNDATED,
    "section": "blog",
    "description": "About a",
}


def test_an_entry_holds_each_field_given_or_its_default() -> None:
    entry = Entry(**FIELDS)
    assert {f.name: getattr(entry, f.name) for f in dataclasses.fields(Entry)} == (
        FIELDS
    )
    assert Entry(*FIELDS.values()) == entry
    bare = Entry("/b")
    assert (bare.path, bare.lastmod, bare.alternates, bare.description) == (
        "/b",
        None,
        (),
        None,
    )


@pytest.mark.parametrize(
    "make", [Entry, lambda *values: entries(*map(list, zip(values)))[0]]
)
def test_an_entry_made_is_frozen_of_its_class_and_copied_whole(make: object) -> None:
    assert callable(make)
    entry = make(*FIELDS.values())
    assert type(entry) is Entry
    assert entry == Entry(**FIELDS)
    assert hash(entry) == hash(Entry(**FIELDS))
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.path = "/b"  # type: ignore[misc]
    assert copy.copy(entry) == pickle.loads(pickle.dumps(entry)) == entry
    assert dataclasses.replace(entry, path="/b") == Entry(**{**FIELDS, "path": "/b"})


def test_entries_are_made_of_columns_as_entry_makes_each() -> None:
    paths = ["/a", "/b", "/c"]
    lastmods = [WHEN, UNDATED, None]
    made = entries(paths, lastmods, [None] * 3, ["daily", None, "weekly"])
    assert made == [
        Entry("/a", WHEN, None, "daily"),
        Entry("/b", UNDATED, None, None),
        Entry("/c", None, None, "weekly"),
    ]
    assert entries([], []) == []


def test_a_subclass_of_entry_stays_of_its_class() -> None:
    class Marked(Entry):
        __slots__ = ("mark",)

    marked = Marked("/a", WHEN)
    assert type(marked) is Marked
    assert (marked.path, marked.lastmod, marked.images) == ("/a", WHEN, ())
