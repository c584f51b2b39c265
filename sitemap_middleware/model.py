"""The value objects the layers trade in: an :class:`Entry` (one page of the site
as a store keeps it) and a :class:`PartInfo` (one sitemap part's summary).
Imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True, slots=True)
class Entry:
    """One page of the site: its path (with allowed query) and metadata.

    ``lastmod`` is when the page's content last changed (``None``: now).
    ``fingerprint`` is a digest of that content; a new fingerprint moves
    ``lastmod``, the same one never does. ``alternates`` are ``(hreflang,
    path)`` pairs written as ``xhtml:link``; ``images`` are paths or http(s)
    URLs written as ``image:loc`` (at most 1,000). ``title`` is the page's
    title as a person reads it (the site's repeated affix taken out), kept
    beside the entry, never in the sitemap: ``None`` in an upsert keeps the
    stored one, and a new title alone moves neither ``lastmod`` nor the
    part's version.
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


@dataclass(frozen=True, slots=True)
class PartInfo:
    """A sitemap part's summary, cheap to read: enough for headers and the index.
    ``number`` is the part's, ``/sitemap-{number}.xml.gz``.
    """

    number: int
    urls: int
    lastmod: datetime
    """The newest ``lastmod`` of the part's entries."""
    version: str
    """Changes exactly when one of the part's entries changes."""
    changed: datetime
    """When the part last changed (its ``Last-Modified``)."""

    @classmethod
    def from_row(
        cls,
        epoch: str,
        number: int,
        urls: int,
        lastmod: int,
        version: int,
        changed: int,
    ) -> PartInfo:
        """A summary from stored integers (epoch seconds, a version counter);
        ``epoch`` identifies the store's data, so versions never repeat."""
        return cls(
            number,
            urls,
            to_datetime(lastmod),
            f"{epoch}.{version}",
            to_datetime(changed),
        )


# The name before the part/page vocabulary, kept for code that imported it.
# Deprecated: use PartInfo.
PageInfo = PartInfo


def to_datetime(seconds: float) -> datetime:
    """An aware UTC datetime of whole epoch seconds."""
    return datetime.fromtimestamp(int(seconds), timezone.utc)
