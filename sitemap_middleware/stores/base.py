"""StoreBase, what every backend shares: part limits, the per-process
connection, driver errors as ``StoreError``, the hreflang and IndexNow write
context, the schema and epoch checks, and the context manager.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar, Generic, TypeVar

from ..errors import StoreError, StoreFault
from ..model import Entry
from ..places import Place, places
from ..sitemaps import MAX_PART_BYTES, MAX_URLS_PER_PART
from . import layout
from .abroad import Abroad, Clusters, crossing, reached
from .contract import (
    DECISION_PATHS,
    DECISIONS_KEPT,
    REMOVALS_KEPT,
    UNLISTED_VISITS_KEPT,
    Adds,
    Checked,
    Decision,
    Decisions,
    Epoch,
    Listing,
    Mapped,
    News,
    Present,
    Pushes,
    Removals,
    Shared,
    Store,
    Visits,
)
from .hreflang import Settled, settle
from .records import Change, Fill, Plan, Stored

# The protocols' home before stores/contract.py, as docs/stores.md showed it:
# a third-party store may still import them from here.
__all__ = [
    "Checked",
    "Clusters",
    "Decisions",
    "News",
    "Pushes",
    "Removals",
    "Shared",
    "Store",
    "StoreBase",
    "Visits",
]

# Options renamed with the part/page vocabulary: a URI of the old spelling is
# refused with the new name, never half-applied.
RENAMED = {"page_size": "part_size", "page_bytes": "part_bytes"}
# The smallest part_bytes a store accepts: room for the envelope and one long URL.
MIN_PART_BYTES = 4096


@contextmanager
def flagged(context: threading.local, name: str) -> Iterator[None]:
    """The block in which this thread's ``context`` has ``name`` set (a write
    context's ``pushing``, ``withdrawing``): what the writes in it carry."""
    setattr(context, name, True)
    try:
        yield
    finally:
        setattr(context, name, False)


def new_epoch() -> str:
    """A new store's epoch: part versions are ``epoch.counter``, so data made
    again from nothing never repeats a version served before."""
    import secrets  # once per new store; costs more to import than to call

    return secrets.token_hex(4)


C = TypeVar("C")

# The protocols whose methods' driver errors the base turns into StoreError:
# those that return an iterator are generators, whose errors surface while
# iterated. (``close`` releases what the store holds: it is its own.)
_PROTOCOLS = (
    Store,
    Adds,
    Clusters,
    Epoch,
    Shared,
    Pushes,
    Decisions,
    Removals,
    Visits,
    News,
    Listing,
    Mapped,
    Present,
)


def _methods(streams: bool) -> tuple[str, ...]:
    return tuple(
        name
        for protocol in _PROTOCOLS
        for name, member in vars(protocol).items()
        if callable(member)
        and not name.startswith("_")
        and name != "close"
        and member.__annotations__["return"].startswith("Iterator") == streams
    )


_CALLS, _STREAMS = _methods(streams=False), _methods(streams=True)
# The writes after which the other sites settle their members again.
_WRITES = ("upsert", "add", "remove")


class StoreBase(Generic[C]):
    """Shared plumbing of a store whose connection is a ``C``.

    A subclass implements :meth:`_connect` (open a connection for this
    process) and, unless ``C.close()`` does it, :meth:`_disconnect`; it calls
    :meth:`_connection` wherever it needs one: the connection is opened on
    first use and again in a forked child, which must never use its parent's.

    A subclass names its driver's exception classes in ``errors``; any of them
    raised by a protocol method of that class (the generators included, while iterated)
    becomes a :class:`StoreError` naming ``label`` (or what
    :meth:`_store_error` makes of it), the original kept as its
    ``__cause__``. Other exceptions pass unchanged: ``ValueError`` for a bad
    entry, and bugs.

    ``part_size`` and ``part_bytes`` may be set below the protocol's limits
    (tests use small parts); never above.
    """

    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    label: ClassVar[str] = "store"
    # Where the store is, as every message about it shows it: a file's
    # absolute path, a server's URI through ``urls.redacted`` (set by the
    # subclass; "" shows the label alone).
    where: str = ""
    # The bounds of the decisions log (tests set smaller ones).
    decisions_kept: int = DECISIONS_KEPT
    decision_paths: int = DECISION_PATHS
    # The paths the removals log keeps (tests set fewer).
    removals_kept: int = REMOVALS_KEPT
    # The unlisted paths whose visits are kept (tests set fewer).
    unlisted_visits_kept: int = UNLISTED_VISITS_KEPT

    part_size: int
    part_bytes: int
    # The app's other sites, whose listings this store's hreflang clusters
    # may reach (core.py sets it with several ``sites``; None: none).
    abroad: Abroad | None = None

    def __init__(
        self, part_size: int = MAX_URLS_PER_PART, part_bytes: int = MAX_PART_BYTES
    ) -> None:
        if not 1 <= part_size <= MAX_URLS_PER_PART:
            raise ValueError(f"part_size must be 1..{MAX_URLS_PER_PART}")
        if not MIN_PART_BYTES <= part_bytes <= MAX_PART_BYTES:
            raise ValueError(f"part_bytes must be {MIN_PART_BYTES}..{MAX_PART_BYTES}")
        self.part_size = part_size
        self.part_bytes = part_bytes
        self._opening = threading.Lock()
        self._conn: C | None = None
        self._pid = 0
        # What this thread's writes carry besides their entries: where
        # hreflang() collects its reasons (``into``) and whether pushing() or
        # withdrawing() is on (``pushing``, ``withdrawing``).
        self._write_context = threading.local()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only where the driver is named: a subclass of a store that calls
        # super() is translated there, once.
        own = _own(cls)
        if "errors" in cls.__dict__ and cls.errors:
            for name in _CALLS:
                if name in own:
                    own[name] = _translating(own[name])
                    setattr(cls, name, own[name])
            for name in _STREAMS:
                if name in own:
                    setattr(cls, name, _translating_stream(own[name]))
        # Every write, once done, tells the other sites what it changed of
        # their clusters (:meth:`_tell_abroad`), whatever the store.
        for name in _WRITES:
            if name in own:
                setattr(cls, name, _telling(own[name]))

    # -- the per-process connection ---------------------------------------------

    def _connect(self) -> C:
        """A new connection for this process (called under a lock)."""
        raise NotImplementedError

    def _disconnect(self, conn: C) -> None:
        """Release a connection this process opened."""
        conn.close()  # type: ignore[attr-defined]

    def _connection(self) -> C:
        """This process's connection, opened on first use and after fork."""
        conn = self._conn
        if conn is not None and self._pid == os.getpid():
            return conn
        with self._opening:
            if self._conn is None or self._pid != os.getpid():
                # One inherited across fork is the parent's: drop it unclosed
                # (closing it here could end the parent's session).
                self._conn = None
                self._conn = self._connect()
                self._pid = os.getpid()
            return self._conn

    def close(self) -> None:
        with self._opening:
            if self._conn is not None and self._pid == os.getpid():
                self._disconnect(self._conn)
            self._conn = None

    # -- the write path -------------------------------------------------------------
    # Every store writes a batch in one transaction, in steps named alike:
    #   _read          the stored rows of the batch
    #   _read_members  the stored rows of the hreflang clusters' other members
    #   _sizes         the fill of their parts and of each section's open
    #                  part, with the parts' sections (where _read does not)
    #   _settle, _plan hreflang's and layout's decisions on them (below)
    #   _apply         a plan: _delete its moved rows from their parts, _write
    #                  its rows, and add to the parts' _summaries
    #   _queue         the IndexNow pushes (_withdraw: a removal's, withdrawn)
    # remove: _read, _read_members, _settle, _delete, _queue or _withdraw,
    # _log_removed, and the members written again through _plan and _apply
    # (_rewrite); resettle: _read, _read_members, _settle again, _rewrite.
    # After an upsert or a removal, _tell_abroad (__init_subclass__ wraps them).

    def _plan(
        self,
        batch: dict[str, Entry],
        old: Mapping[str, Stored],
        sizes: Mapping[int, Fill],
        last: int,
        current: int,
        settled: Settled | None = None,
        open: Mapping[str, int] | None = None,
    ) -> Plan:
        """:func:`layout.plan` with this store's limits. ``old`` holds the
        stored rows of the batch and of ``hreflang.members(batch, old)``, read
        in the write's transaction; ``settled`` defaults to their
        :meth:`_settle`; ``open`` is each section's open part (``None``: a
        store that keeps no sections)."""
        if settled is None:
            settled = self._settle(batch, old)
        return layout.plan(
            batch,
            old,
            sizes,
            last,
            self.part_size,
            self.part_bytes,
            current,
            settled,
            open,
        )

    def _settle(
        self,
        batch: Mapping[str, Entry],
        old: Mapping[str, Stored],
        removed: Collection[str] = (),
        again: Collection[str] = (),
    ) -> Settled:
        """:func:`.hreflang.settle`, its reasons noted for :meth:`hreflang`.
        Called in the write's transaction, after its lock is taken: the
        members on other sites are read here (:mod:`.abroad`), and those whose
        clusters the write changes are noted for :meth:`_tell_abroad`; a
        settling (``again``: :meth:`resettle`) notes none."""
        found = None
        abroad = self.abroad
        if abroad is not None:
            urls = reached(batch, old, (*removed, *again))
            found = abroad.declared(urls) if urls else {}
            if not again:
                told = crossing(batch, old, removed)
                if told:
                    self._abroad_pending().update(told)
        settled = settle(batch, old, removed, found, again)
        into = getattr(self._write_context, "into", None)
        if into is not None and settled.reasons:
            into.update(settled.reasons)
        return settled

    def _abroad_pending(self) -> set[str]:
        pending: set[str] | None = getattr(self._write_context, "abroad", None)
        if pending is None:
            pending = self._write_context.abroad = set()
        return pending

    def _tell_abroad(self) -> None:
        """Once a write is committed: ask the other sites to settle again
        their members of the clusters it changed. Kept until they answer, so
        that a failed settling is asked again with the next write."""
        pending = getattr(self._write_context, "abroad", None)
        if pending and self.abroad is not None:
            self.abroad.resettle(pending)
            pending.clear()

    @contextmanager
    def hreflang(self) -> Iterator[dict[str, str | None]]:
        """:meth:`.contract.Hreflang.hreflang`."""
        into: dict[str, str | None] = {}
        self._write_context.into = into
        try:
            yield into
        finally:
            self._write_context.into = None

    def pushing(self) -> AbstractContextManager[None]:
        """:meth:`.contract.Pushing.pushing`."""
        return flagged(self._write_context, "pushing")

    def withdrawing(self) -> AbstractContextManager[None]:
        """:meth:`.contract.Withdrawing.withdrawing`."""
        return flagged(self._write_context, "withdrawing")

    def _pushes(self, todo: Plan, old: Mapping[str, Stored]) -> list[str]:
        """The paths of a plan to queue: new, or changed (a new ``lastmod``
        or fingerprint: a change within the second of the last one keeps its
        ``lastmod``); a member of a cluster written again keeps both. None
        outside :meth:`pushing`. ``old``: the stored rows, as before the plan."""
        if not self._is_pushing():
            return []
        pushes = []
        for path, _, row, _ in todo.changes:
            stored = old.get(path)
            if (
                stored is None
                or stored.row.lastmod != row.lastmod
                or stored.row.fingerprint != row.fingerprint
            ):
                pushes.append(path)
        return pushes

    def _is_pushing(self) -> bool:
        return bool(getattr(self._write_context, "pushing", False))

    def _is_withdrawing(self) -> bool:
        return bool(getattr(self._write_context, "withdrawing", False))

    def epoch(self) -> str:
        """:meth:`.contract.Epoch.epoch`: ``""``, a store that cannot tell."""
        return ""

    _new_epoch = staticmethod(new_epoch)

    def _trim_due(self, written: int) -> bool:
        """Whether a write of ``written`` visits trims the unlisted paths'
        (:class:`Visits`): once this object has written ``unlisted_visits_kept``
        since its last trim. A trim reads every kept visit, so it is spread
        over that many writes; between two, a writing process adds at most
        that many unlisted paths beyond the bound."""
        since = getattr(self, "_visits_since_trim", 0) + written
        due = since >= self.unlisted_visits_kept
        self._visits_since_trim = 0 if due else since
        return due

    @staticmethod
    def _grouped(decisions: Iterable[Decision]) -> dict[str, list[tuple[str, int]]]:
        """Decisions by path, each path's in the order made, as epoch seconds."""
        grouped: dict[str, list[tuple[str, int]]] = {}
        for path, reason, when in decisions:
            grouped.setdefault(path, []).append((reason, int(when.timestamp())))
        return grouped

    @staticmethod
    def _check_schema(where: str, found: object, expected: object) -> None:
        """Refuse data of another layout: never read it as this one. Columns
        and keys a release adds beside the old ones keep the version (a worker
        of the release before still reads and writes the data); only a layout
        the release before cannot read takes a new one."""
        if str(found) == str(expected):
            return
        found, expected = str(found), str(expected)
        # Not an outage: waiting does not change the data (StoreFault).
        if found.isdigit() and expected.isdigit() and int(found) > int(expected):
            raise StoreFault(
                f"{where} holds sitemap schema {found}, expected {expected}:"
                " it was written by a newer release of sitemap_middleware;"
                " upgrade sitemap_middleware on every worker that uses it"
            )
        raise StoreFault(
            f"{where} holds sitemap schema {found}, expected {expected}, which"
            " this release cannot upgrade: delete it to start again (pages are"
            " recorded again as they are visited) or use the release that wrote it"
        )

    def _store_error(self, exc: BaseException) -> StoreError:
        """The ``StoreError`` a driver error of ``errors`` becomes: an outage
        unless the store knows better (a damaged file is a ``StoreFault``)."""
        return StoreError(self._said(exc))

    def _said(self, words: object) -> str:
        """A message about this store, on one line: its label and where it
        is, then ``words``, a driver's several lines (psycopg's hint after
        its error) folded into one, as a log line or an ``Error:`` holds."""
        name = f"{self.label} {self.where}" if self.where else self.label
        return f"{name}: {' '.join(str(words).split())}"

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Placing:
    """Whether a store object writes each row's place on the site map
    (:class:`Mapped`): only once asked to (the map is served), so that a
    store whose map nobody reads pays nothing for it."""

    placing = False
    """Whether this object writes each row's place (else none)."""
    place_due = False
    """Whether rows without a place are known of (or may be), for
    ``place_rows`` to place."""

    def keep_places(self) -> None:
        self.placing = True
        self.place_due = True

    def places_of(self, changes: Sequence[Change]) -> list[Place] | None:
        """Where each changed row falls on the site map (its path, route and
        title decide), or ``None`` when this object keeps no place."""
        if not self.placing:
            return None
        return places(
            [change.path for change in changes],
            [change.row.route for change in changes],
            [change.row.title for change in changes],
        )


def _own(cls: type) -> dict[str, Any]:
    """The protocol methods a store class defines: in its body or in its
    mixins (the bases that are not stores: a capability each), as the class
    resolves them. A store's own methods are wrapped there, once."""
    theirs = {k for b in cls.__bases__ if issubclass(b, StoreBase) for k in b.__mro__}
    found = {}
    for name in (*_CALLS, *_STREAMS):
        where = next((k for k in cls.__mro__ if name in vars(k)), None)
        if where is not None and where not in theirs:
            found[name] = vars(where)[name]
    return found


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self.errors as exc:
            raise self._store_error(exc) from exc

    return call


def _telling(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def write(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Any:
        done = method(self, *args, **kwargs)
        self._tell_abroad()
        return done

    return write


def _translating_stream(method: Callable[..., Iterator[Any]]) -> Callable[..., Any]:
    @functools.wraps(method)
    def stream(self: StoreBase[Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        try:
            yield from method(self, *args, **kwargs)
        except self.errors as exc:
            raise self._store_error(exc) from exc

    return stream
