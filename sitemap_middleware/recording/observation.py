"""What the watcher hands to the recorder: one response, sent in full, to record or
to remove, with the body chunks it saw (references, never copies).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..routes import Route

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
