"""What the watcher hands to the recorder: one response, sent in full, to record or
to remove, with the body chunks it saw (references, never copies).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Protocol

from ..routes import Route

# A response's headers as the app gave them: WSGI's str pairs or ASGI's bytes.
Headers = Iterable[tuple[str, str]] | Iterable[tuple[bytes, bytes]]


def location(headers: Headers) -> str | None:
    """A response's ``Location`` (the last, should there be several), as
    text: where a redirect sends the visitor."""
    found = None
    for name, value in headers:
        if (name if isinstance(name, str) else name.decode("latin-1")).lower() == (
            "location"
        ):
            found = value if isinstance(value, str) else value.decode("latin-1")
    return found


class Observation(Protocol):
    """One response to record or remove, as it was served: what the writer
    reads. A page is handed over as the watcher's own recording of it (no
    copy of its fields made at the end of every page); anything else as an
    :class:`Observed`."""

    @property
    def action(self) -> str:
        """``reasons.RECORD`` or ``reasons.REMOVE``."""

    @property
    def key(self) -> str:
        """The recent-pages cache key: the path as received, plus a kept
        query."""

    @property
    def path(self) -> str:
        """The raw (wire) form if ``raw``, else latin-1 over the UTF-8 bytes."""

    @property
    def query(self) -> str: ...

    @property
    def raw(self) -> bool: ...

    @property
    def route(self) -> Route: ...

    @property
    def headers(self) -> Headers:
        """For the writer: ``Link`` and ``Last-Modified``."""

    @property
    def body(self) -> list[bytes]:
        """The chunks sent, up to the body budget (empty for a removal)."""

    @property
    def size(self) -> int:
        """Bytes in ``body``."""

    @property
    def seen(self) -> float:
        """When the response was sent in full (``time.time()``)."""

    def settle(self) -> str | None:
        """Asked by the writer before any other field: a page's recording
        reads its spelling and route from the request here, off the request
        path. ``None``, or why the observation is not recorded after all
        (counted)."""


class Observed(NamedTuple):
    """An :class:`Observation` as a value: a removal, a replayed page."""

    action: str
    key: str
    path: str
    query: str
    raw: bool
    route: Route
    headers: Headers
    body: list[bytes]
    size: int
    seen: float

    def settle(self) -> str | None:
        """Nothing to settle: a value is whole."""
        return None
