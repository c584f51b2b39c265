"""The value objects the layers trade in: an :class:`Entry` (one page of the site
as a store keeps it) and a :class:`PartInfo` (one sitemap part's summary).
Imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, fields
from datetime import datetime, timezone
from typing import Any

# The lastmod of a page that claims none: no date of its own, no change of its
# content seen yet. Stored as 0 epoch seconds (every store's integer column
# keeps it, and a part's newest lastmod, a MAX, ignores it); read back as this
# instant, which writes back as 0. Its <url> has no <lastmod> (the element is
# optional, https://www.sitemaps.org/protocol.html): a date that is not true
# is worse than none (Google uses lastmod only when it is "consistently and
# verifiably accurate").
UNDATED = datetime(1970, 1, 1, tzinfo=timezone.utc)
UNDATED_SECONDS = 0


@dataclass(frozen=True, slots=True)
class Entry:
    """One page of the site: its path (with allowed query) and metadata.

    ``lastmod`` is when the page's content last changed (``None``: now;
    :data:`UNDATED`: no date claimed, see :func:`dated`). ``fingerprint`` is
    a digest of that content; a new fingerprint moves ``lastmod``, the same
    one never does. ``seen`` is set on an entry read from a response, to when
    it was served: its ``lastmod`` is then the date the page declares
    (taken if newer, whatever the fingerprint) or :data:`UNDATED`, and
    ``seen`` becomes the lastmod only when the fingerprint replaces another
    one (a change seen): a page first seen without a date has none.
    ``alternates`` are ``(hreflang,
    path)`` pairs written as ``xhtml:link`` (a member on another of the app's
    ``sites``: its http(s) URL, written as it is); ``images`` are paths or http(s)
    URLs written as ``image:loc`` (at most 1,000). ``title`` is the page's
    title as a person reads it (the site's repeated affix taken out), kept
    beside the entry, never in the sitemap: ``None`` in an upsert keeps the
    stored one, and a new title alone moves neither ``lastmod`` nor the
    part's version. ``section`` is the section whose part the page belongs
    in (``sections.py``; ``""``: the default): ``None`` says none, and a
    stored page then stays in its part, a new one goes to the default
    section; a stored page of another section moves to that section's part.
    ``description`` is what the page says it is about (its meta description,
    else ``og:description``), kept as its title is: ``None`` in an upsert
    keeps the stored one, and a new description alone moves neither
    ``lastmod`` nor the part's version.
    """

    path: str
    lastmod: datetime | None = None
    fingerprint: str | None = None
    changefreq: str | None = None
    priority: float | None = None
    route: str | None = None
    alternates: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    title: str | None = None
    seen: datetime | None = None
    section: str | None = None
    description: str | None = None


def _slot_init(cls: type) -> tuple[Callable[..., None], type]:
    """The ``__init__`` dataclass writes for the frozen class of slots
    ``cls`` (the same parameters and defaults), made faster, and a class of
    the same slots whose instances are made as ``cls``'s (see
    :func:`entries`): an entry is made per page written and per URL
    imported.

    A frozen class refuses ``self.name = value``, and setting each slot
    through its descriptor (or ``object.__setattr__``) is a call per field.
    So the new object is first given a class of the same slots in the same
    order (its layout: ``__class__`` may be assigned between the two) that
    sets them as any mutable object does, a store the interpreter
    specialises, then its own class back (callgrind: 6.3k instructions an
    entry, against 10.6k through the descriptors). An instance of a subclass
    (slots of its own, perhaps) is set through the descriptors."""
    names = [field.name for field in fields(cls)]
    slots = cls.__dict__["__slots__"]
    assert tuple(names) == tuple(slots), slots
    scope: dict[str, object] = {"_cls": cls, "_set_class": object.__setattr__}
    parameters = []
    for field in fields(cls):
        assert field.default_factory is MISSING, field.name
        scope[f"_set_{field.name}"] = cls.__dict__[field.name].__set__
        if field.default is MISSING:
            parameters.append(field.name)
        else:
            scope[f"_default_{field.name}"] = field.default
            parameters.append(f"{field.name}=_default_{field.name}")
    fast = "".join(f"    self.{name} = {name}\n" for name in names)
    slow = "".join(f"        _set_{name}(self, {name})\n" for name in names)
    signature = f"(self, {', '.join(parameters)}):\n"
    made: dict[str, Callable[..., None]] = {}
    exec(
        f"def __init__{signature}"
        "    if type(self) is not _cls:\n"
        f"{slow}"
        "        return\n"
        '    _set_class(self, "__class__", _layout)\n'
        f"{fast}"
        "    self.__class__ = _cls\n"
        # The layout's own: made as it, then given the class.
        f"def _made{signature}{fast}    self.__class__ = _cls\n",
        scope,
        made,
    )
    made["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    layout = type(
        f"_{cls.__name__}Layout", (), {"__slots__": slots, "__init__": made["_made"]}
    )
    scope["_layout"] = layout
    return made["__init__"], layout


Entry.__init__, _EntryLayout = _slot_init(Entry)  # type: ignore[method-assign]


def entries(*columns: Iterable[Any]) -> list[Entry]:
    """``list(map(Entry, *columns))``: the entries of columns of their
    fields, in :class:`Entry`'s order (paths, lastmods, ...), each made as
    an instance of its layout, then given its class: one class assignment
    where ``Entry()`` makes two (4.4k instructions an entry, callgrind)."""
    return list(map(_EntryLayout, *columns))


@dataclass(frozen=True, slots=True)
class PartInfo:
    """A sitemap part's summary, cheap to read: enough for headers and the index.
    ``number`` is the part's, ``/sitemap-{number}.xml.gz``.
    """

    number: int
    urls: int
    lastmod: datetime
    """The newest ``lastmod`` of the part's entries (:data:`UNDATED` when
    none has one)."""
    version: str
    """Changes exactly when one of the part's entries changes."""
    changed: datetime
    """When the part last changed (its ``Last-Modified``)."""
    section: str = ""
    """The section whose pages the part holds (``sections.py``; ``""``: the
    default section, every part of a site without sections)."""

    @classmethod
    def from_row(
        cls,
        epoch: str,
        number: int,
        urls: int,
        lastmod: int,
        version: int,
        changed: int,
        section: str = "",
    ) -> PartInfo:
        """A summary from stored integers (epoch seconds, a version counter);
        ``epoch`` identifies the store's data, so versions never repeat."""
        return cls(
            number,
            urls,
            to_datetime(lastmod),
            f"{epoch}.{version}",
            to_datetime(changed),
            section,
        )


# The name before the part/page vocabulary, kept for code that imported it.
# Deprecated: use PartInfo.
PageInfo = PartInfo


def to_datetime(seconds: float) -> datetime:
    """An aware UTC datetime of whole epoch seconds."""
    return datetime.fromtimestamp(int(seconds), timezone.utc)


def dated(moment: datetime | None) -> datetime | None:
    """``moment`` if it is a date a page can show, else ``None``: for
    :data:`UNDATED` (and anything not after it), and for ``None``."""
    if moment is None or moment <= UNDATED:
        return None
    return moment
