"""How long the writer keeps the GIL while it digests a batch: it lets the
request threads have it every millisecond, rather than when the interpreter's
switch interval (5 ms) takes it from the writer (a request's tail latency)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

# The longest the writer digests without letting go (each let-go costs a
# thread switch or two: not after every page).
LET_GO = 0.001


def paced(batch: Iterable[T]) -> Iterator[T]:
    """``batch``'s items, the GIL let go after any that ends the writer's turn
    (a request thread waiting for it runs then)."""
    due = time.monotonic() + LET_GO
    for item in batch:
        yield item
        if time.monotonic() >= due:
            time.sleep(0)
            due = time.monotonic() + LET_GO
