"""What the watcher hands to the recorder: one response, sent in full, to record or
to remove, with the body chunks it saw (references, never copies).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple

from .routes import Route
from .sitemaps import BODY_BUDGET

# A response's headers as the app gave them: WSGI's str pairs or ASGI's bytes.
Headers = Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]]


class Observation(NamedTuple):
    """One response to record or remove, as it was served."""

    action: str
    """``reasons.RECORD`` or ``reasons.REMOVE``."""
    key: str
    """The recent-pages cache key: the path as received, plus a kept query."""
    path: str
    """The raw (wire) form if ``raw``, else latin-1 over the UTF-8 bytes."""
    query: str
    raw: bool
    route: Route
    headers: Headers
    """For the writer: ``Link`` and ``Last-Modified``."""
    body: list[bytes]
    """The chunks sent, up to the body budget (empty for a removal)."""
    size: int
    """Bytes in ``body``."""
    seen: float
    """When the response was sent in full (``time.time()``)."""


class Draft:
    """An observation in the making, for the adapters until the watcher builds
    :class:`Observation` itself: notes the body chunks as they pass, up to
    ``BODY_BUDGET``, then :meth:`finish` gives the record."""

    __slots__ = ("body", "headers", "key", "path", "query", "raw", "route", "size")

    def __init__(
        self, key: str, path: str, query: str, raw: bool, route: Route
    ) -> None:
        self.key, self.path, self.query, self.raw = key, path, query, raw
        self.route = route
        self.body: list[bytes] = []  # references to the chunks sent, never copies
        self.headers: Headers = ()
        self.size = 0

    def see(self, chunk: bytes) -> None:
        """Note a body chunk, up to the byte budget."""
        if self.size < BODY_BUDGET:
            self.body.append(chunk)
            self.size += len(chunk)

    def finish(self, action: str) -> Observation:
        """The observation, sent in full now, to ``RECORD`` or ``REMOVE``."""
        return Observation(
            action,
            self.key,
            self.path,
            self.query,
            self.raw,
            self.route,
            self.headers,
            self.body,
            self.size,
            time.time(),
        )
