"""What a failure does: the circuit breaker the writer keeps for its store and the
IndexNow pusher for its endpoint (a backoff that doubles while calls fail, one WARNING
an outage, one INFO when it ends; a fault that waiting does not end one ERROR, and
rare looks); the writer's one outage rule (Outage) and its report of bugs (Bugs).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from ..errors import StoreError, StoreFault, StoreReadOnly
from ..reasons import Errors

logger = logging.getLogger("sitemap_middleware")

T = TypeVar("T")

# A store that waiting does not mend (StoreFault: damaged, a schema this release
# cannot read) is looked at again this rarely: it may be repaired meanwhile.
FAULT_BACKOFF = 60.0
# Seconds between two tracebacks of the same bug (the counters keep the count).
BUG_INTERVAL = 60.0


class Breaker:
    """Closed while calls succeed; once one fails, open for a backoff that
    doubles from ``minimum`` up to ``maximum`` (or for as long as the other side
    asked, capped the same way), then half-open: the next call probes.

    The messages are %-style templates with named fields: ``paused``
    (``detail``, ``delay``) is logged at WARNING on the first failure of an
    outage, ``again`` (``detail``) at DEBUG on the next ones, ``resumed``
    (``seconds``) at INFO when a call succeeds again, and ``faulted``
    (``detail``, ``delay``) at ERROR once for a fault (:meth:`fault`).
    """

    __slots__ = (
        "_again",
        "_backoff",
        "_faulted",
        "_faulted_by",
        "_maximum",
        "_minimum",
        "_paused",
        "_paused_at",
        "_resumed",
        "_retry_at",
    )

    def __init__(
        self,
        paused: str,
        again: str,
        resumed: str,
        minimum: float,
        maximum: float,
        faulted: str = "%(detail)s",
    ) -> None:
        self._paused, self._again, self._resumed = paused, again, resumed
        self._faulted = faulted
        self._minimum, self._maximum = minimum, maximum
        self._backoff = 0.0
        self._retry_at = 0.0
        self._paused_at: float | None = None  # monotonic, while failing
        self._faulted_by: str | None = None  # the fault's words, while it lasts

    def allows(self) -> bool:
        """Whether the backoff is over: the next call may go."""
        return time.monotonic() >= self._retry_at

    def back_off(self, asked: float | None = None) -> float:
        """Open the breaker without a word (the caller said why): for the next
        backoff, or for longer when the other side asked for more (a
        ``Retry-After``), never beyond ``maximum``. The backoff doubles either
        way, and an answer asking for less never shortens it: an endpoint that
        says "retry at once" on every failure gets the same spaced retries as
        one that says nothing. Returns the seconds."""
        self._backoff = min(max(2 * self._backoff, self._minimum), self._maximum)
        delay = self._backoff
        if asked is not None and asked > delay:
            delay = min(asked, self._maximum)
        self._retry_at = time.monotonic() + delay
        return delay

    def trip(self, detail: object, asked: float | None = None) -> float:
        """A call failed for ``detail`` (an exception: its traceback goes with
        the DEBUG line): :meth:`back_off`, and say so once an outage."""
        delay = self.back_off(asked)
        # One warning per outage, not one per probe: a store down for an hour
        # would otherwise fill the logs while the app itself is fine. The
        # counters (errors, pending, dropped) keep the full account.
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            logger.warning(self._paused, {"detail": detail, "delay": delay})
        else:
            exc_info = detail if isinstance(detail, BaseException) else None
            logger.debug(self._again, {"detail": detail}, exc_info=exc_info)
        return delay

    def fault(self, detail: object, delay: float) -> None:
        """A call failed for ``detail``, a fault waiting does not end (a
        damaged store, a schema this release cannot read): open for ``delay``
        (a rare look: someone may repair it meanwhile), the backoff untouched.
        Said once at ERROR, not as an outage retried: again only for another
        fault; the next failures of the same at DEBUG."""
        self._retry_at = time.monotonic() + delay
        if self._paused_at is None:
            self._paused_at = time.monotonic()
        words = str(detail)
        if words == self._faulted_by:
            logger.debug(self._again, {"detail": detail})
            return
        self._faulted_by = words
        logger.error(self._faulted, {"detail": detail, "delay": delay})

    def reset(self) -> None:
        """A call succeeded: closed, the backoff from ``minimum`` again."""
        self._backoff = 0.0
        self._faulted_by = None
        if self._paused_at is not None:
            seconds = time.monotonic() - self._paused_at
            logger.info(self._resumed, {"seconds": seconds})
            self._paused_at = None


def store_breaker(minimum: float, maximum: float) -> Breaker:
    """The writer's breaker for its store, and what it says."""
    return Breaker(
        "recording paused: store unavailable (%(detail)s); pending writes are"
        " kept and retried",
        "store still unavailable: %(detail)s",
        "recording resumed: the store is back after %(seconds).1f s",
        minimum,
        maximum,
        faulted="recording stopped: %(detail)s. Pending writes are kept; the"
        " store is looked at again every %(delay).0f s",
    )


class Outage:
    """A block of store calls: a ``StoreError`` out of it is an outage, counted
    and tripping the breaker, and ends the block; ``failed`` says so. A
    ``StoreFault`` opens the breaker for ``FAULT_BACKOFF``, said once at ERROR;
    a ``StoreReadOnly`` goes to ``read_only`` (no breaker: nothing to wait
    for). Any other exception passes (a bug). The one place the writer meets
    an outage."""

    __slots__ = ("_breaker", "_count", "_read_only", "failed")

    def __init__(
        self,
        breaker: Breaker,
        count: Callable[[str], object],
        read_only: Callable[[StoreReadOnly], object] = lambda exc: None,
    ) -> None:
        self._breaker = breaker
        self._count = count
        self._read_only = read_only
        self.failed = False

    def __enter__(self) -> Outage:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        if not isinstance(exc, StoreError):
            return False
        self.failed = True
        if isinstance(exc, StoreReadOnly):
            self._read_only(exc)
            return True
        self._count(Errors.STORE)
        if isinstance(exc, StoreFault):
            self._breaker.fault(exc, FAULT_BACKOFF)
        else:
            self._breaker.trip(exc)
        return True


class Bugs:
    """Reports unexpected exceptions: each kind's traceback once per
    ``BUG_INTERVAL`` at ERROR, the repeats at DEBUG; each one counted."""

    __slots__ = ("_count", "_logged")

    def __init__(self, count: Callable[[str], object]) -> None:
        self._count = count
        self._logged: dict[tuple[str, str], float] = {}

    def report(self, where: str, exc: BaseException) -> None:
        self._count(Errors.BUG)
        kind = (where, type(exc).__qualname__)
        current = time.monotonic()
        last = self._logged.get(kind)
        if last is not None and current - last < BUG_INTERVAL:
            logger.debug("bug in %s again: %r", where, exc)
            return
        self._logged[kind] = current
        logger.error(
            "bug in %s (recording goes on without it): %r", where, exc, exc_info=exc
        )

    def isolate(
        self, where: str, call: Callable[[list[T]], int], items: list[T]
    ) -> tuple[int, list[T]]:
        """``call(items)``, its results summed; an item whose call raises a bug
        (anything but an outage, ``StoreError``, which propagates) is found by
        halving the batch, reported and left out. Returns the sum and the
        items left out."""
        if not items:
            return 0, []
        try:
            return call(items), []
        except StoreError:
            raise
        except Exception as exc:
            if len(items) == 1:
                self.report(where, exc)
                return 0, items
        half = len(items) // 2
        done, bad = self.isolate(where, call, items[:half])
        more, worse = self.isolate(where, call, items[half:])
        return done + more, bad + worse
