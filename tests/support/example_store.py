"""An example third-party store: the whole sitemap in one ``shelve`` file, built only
from what ``sitemap_middleware.stores`` exports, and run through the contract suite
of tests/stores/contract/ as ``example:///path/to/shelf``.

What a store writes for itself is how it keeps rows and part summaries; what the
package gives it is the rest: ``StoreBase`` (part limits, a connection per process
that is reopened after fork, its driver's errors turned into ``StoreError``,
schema and epoch helpers), ``layout.plan`` (the lastmod rules and which part each
path joins, ``layout.opened`` which part of each section is open), and the
records ``plan`` trades in (``Stored``, ``Fill``, ``Change``).
"""

from __future__ import annotations

import dbm
import pickle
import shelve
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from sitemap_middleware.model import to_datetime
from sitemap_middleware.stores import (
    MAX_COUNT,
    NEWS_KEPT,
    Article,
    Entry,
    Fill,
    PartInfo,
    Plan,
    Removed,
    Store,
    StoreBase,
    Stored,
    Visit,
    batches,
    deltas,
    layout,
    newest,
    news_cutoff,
    register_store,
    removed,
)

SCHEMA_VERSION = "1"


class _Part:
    """One part: its paths in first-seen order, its summary and the section
    whose pages it holds."""

    # A class attribute: parts pickled before sections read as the default's.
    section = ""

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}
        self.bytes = 0
        self.lastmod = 0
        self.version = 0
        self.changed = 0


class ShelfStore(StoreBase["shelve.Shelf[Any]"]):
    """Shelf keys: ``meta`` (schema, epoch), ``rows`` (path -> Stored),
    ``parts`` (number -> _Part), ``routes`` (route -> paths held), ``counts``
    (the site's counters) and ``settings`` (name -> value), read and
    written whole under one lock: a toy, for the contract, not for load."""

    errors = (*dbm.error, OSError, pickle.UnpicklingError)
    label = "shelf"

    def __init__(self, path: str, **limits: int) -> None:
        super().__init__(**limits)
        self.path = path
        self._lock = threading.Lock()
        self._epoch = ""

    def _connect(self) -> shelve.Shelf[Any]:
        shelf = shelve.open(self.path)  # noqa: SIM115 - held until close()
        if "meta" not in shelf:
            shelf["meta"] = {"schema": SCHEMA_VERSION, "epoch": self._new_epoch()}
            shelf["rows"], shelf["parts"], shelf["routes"] = {}, {}, {}
        if "counts" not in shelf:  # shelves made before the site's counters
            shelf["counts"], shelf["settings"] = {}, {}
        if "pushes" not in shelf:  # IndexNow: path -> lease (0: free)
            shelf["pushes"] = {}
        if "decisions" not in shelf:  # shelves made before the decisions log
            shelf["decisions"] = {}
        if "visits" not in shelf:  # (path, agent) -> Visit
            shelf["visits"] = {}
        if "removed" not in shelf:  # the removals log: (number now, last paths)
            shelf["removed"] = (0, [])
        if "news" not in shelf:  # news articles: path -> Article
            shelf["news"] = {}
        meta = shelf["meta"]
        self._check_schema(self.path, meta["schema"], SCHEMA_VERSION)
        self._epoch = meta["epoch"]
        return shelf

    def upsert(self, entries: Iterable[Entry]) -> int:
        changed = 0
        for batch in batches(entries):
            with self._lock:
                shelf = self._connection()
                rows, parts, routes = shelf["rows"], shelf["parts"], shelf["routes"]
                current = layout.now()
                # Every row is at hand, the members of the batch's hreflang
                # clusters included (a store that reads rows by path reads
                # hreflang.members(batch, old) too); plan() raises ValueError for
                # a bad entry before anything changes.
                last = max(parts, default=0)
                todo = self._plan(
                    batch, rows, _sizes(parts), last, current, None, _open(parts)
                )
                pushes = self._pushes(todo, rows)
                _apply(rows, parts, routes, todo, current)
                if pushes:  # in the same sync as the rows
                    shelf["pushes"] = {**shelf["pushes"], **dict.fromkeys(pushes, 0.0)}
                shelf["rows"], shelf["parts"], shelf["routes"] = rows, parts, routes
                shelf.sync()
                changed += len(todo.changes)
        return changed

    def remove(self, paths: Iterable[str]) -> int:
        with self._lock:
            shelf = self._connection()
            rows, parts, routes = shelf["rows"], shelf["parts"], shelf["routes"]
            current = layout.now()
            gone = {path for path in paths if path in rows}
            if not gone:
                return 0
            # The other members of the removed pages' clusters lose their links.
            settled = self._settle({}, rows, gone)
            _drop(rows, parts, routes, gone, current)
            if self._is_pushing():
                shelf["pushes"] = {**shelf["pushes"], **dict.fromkeys(gone, 0.0)}
            elif self._is_withdrawing():  # a URL the config refuses: never sent
                pushes = shelf["pushes"]
                shelf["pushes"] = {p: at for p, at in pushes.items() if p not in gone}
            # Numbered in the removals log, in the same sync as the rows.
            top, log = shelf["removed"]
            log = [*log, *sorted(gone)][-self.removals_kept :]
            shelf["removed"] = (top + len(gone), log)
            if settled.rewrites:
                last, sizes, open_ = max(parts, default=0), _sizes(parts), _open(parts)
                todo = self._plan({}, rows, sizes, last, current, settled, open_)
                _apply(rows, parts, routes, todo, current)
            shelf["rows"], shelf["parts"], shelf["routes"] = rows, parts, routes
            shelf.sync()
            return len(gone)

    def epoch(self) -> str:
        with self._lock:
            return str(self._connection()["meta"]["epoch"])

    def removed_since(self, seq: int | None) -> Removed:
        with self._lock:
            shelf = self._connection()
            epoch, (top, log) = shelf["meta"]["epoch"], shelf["removed"]
        newer = top - seq if seq is not None and seq < top else 0
        oldest = top - len(log) + 1 if log else None
        paths = log[len(log) - newer :] if newer else []
        return removed(epoch, seq, top, oldest, paths)

    def add_counts(self, counts: Mapping[str, int]) -> None:
        with self._lock:
            shelf = self._connection()
            total = shelf["counts"]
            for reason, n in deltas(counts):
                total[reason] = min(total.get(reason, 0) + n, MAX_COUNT)
            shelf["counts"] = total
            shelf.sync()

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._connection()["counts"])

    def setting(self, name: str) -> str | None:
        with self._lock:
            value = self._connection()["settings"].get(name)
        return None if value is None else str(value)

    def set_setting(self, name: str, value: str) -> None:
        with self._lock:
            shelf = self._connection()
            shelf["settings"] = {**shelf["settings"], name: value}
            shelf.sync()

    def queue_pushes(self, paths: Iterable[str]) -> None:
        with self._lock:
            shelf = self._connection()
            shelf["pushes"] = {**shelf["pushes"], **dict.fromkeys(paths, 0.0)}
            shelf.sync()

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        with self._lock:
            shelf = self._connection()
            pushes = shelf["pushes"]
            claimed = [path for path, lease in pushes.items() if lease <= now]
            claimed = claimed[:limit]
            shelf["pushes"] = {**pushes, **dict.fromkeys(claimed, until)}
            shelf.sync()
            return claimed

    def pushed(self, paths: Iterable[str], until: float) -> int:
        with self._lock:
            shelf = self._connection()
            pushes = shelf["pushes"]
            held = [path for path in paths if pushes.get(path) == until]
            for path in held:
                del pushes[path]
            shelf["pushes"] = pushes
            shelf.sync()
            return len(held)

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        with self._lock:
            shelf = self._connection()
            pushes = shelf["pushes"]
            for path in paths:
                if pushes.get(path) == until:
                    pushes[path] = at
            shelf["pushes"] = pushes
            shelf.sync()

    def pending_pushes(self) -> int:
        with self._lock:
            return len(self._connection()["pushes"])

    def note(self, decisions: Iterable[tuple[str, str, datetime]]) -> None:
        with self._lock:
            shelf = self._connection()
            log: dict[str, list[tuple[str, int]]] = shelf["decisions"]
            for path, reason, when in decisions:
                # Taken out and put back: the newest path last.
                held = [*log.pop(path, []), (reason, int(when.timestamp()))]
                log[path] = held[-self.decisions_kept :]
            for path in list(log)[: max(len(log) - self.decision_paths, 0)]:
                del log[path]
            shelf["decisions"] = log
            shelf.sync()

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        with self._lock:
            held = self._connection()["decisions"].get(path, [])
        return [(reason, to_datetime(seconds)) for reason, seconds in held]

    def visited(self, visits: Iterable[Visit]) -> None:
        with self._lock:
            shelf = self._connection()
            kept: dict[tuple[str, str], Visit] = shelf["visits"]
            for visit in visits:
                held = kept.get((visit.path, visit.agent))
                if held is None or held.at <= visit.at:
                    kept[visit.path, visit.agent] = visit
            rows = shelf["rows"]
            newest: dict[str, int] = {}
            for (path, _), visit in kept.items():
                if path not in rows:
                    newest[path] = max(newest.get(path, 0), visit.at)
            # Beyond the listed paths, the most lately visited.
            ranked = sorted(newest, key=lambda p: (-newest[p], p))
            dropped = set(ranked[self.unlisted_visits_kept :])
            shelf["visits"] = {k: v for k, v in kept.items() if k[0] not in dropped}
            shelf.sync()

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        with self._lock:
            kept = list(self._connection()["visits"].values())
        wanted = None if paths is None else set(paths)
        yield from (v for v in kept if wanted is None or v.path in wanted)

    def count(self, route: str | None = None) -> int:
        with self._lock:
            shelf = self._connection()
            if route is None:
                return len(shelf["rows"])
            return int(shelf["routes"].get(route, 0))

    def known(self, paths: Iterable[str]) -> set[str]:
        with self._lock:
            rows = self._connection()["rows"]
        return {path for path in paths if path in rows}

    def parts(self) -> list[PartInfo]:
        with self._lock:
            parts = self._connection()["parts"]
        return [self._info(n, parts[n]) for n in sorted(parts) if parts[n].paths]

    def part(self, number: int) -> PartInfo | None:
        with self._lock:
            part = self._connection()["parts"].get(number)
        return self._info(number, part) if part and part.paths else None

    def _info(self, number: int, part: _Part) -> PartInfo:
        return PartInfo.from_row(
            self._epoch,
            number,
            len(part.paths),
            part.lastmod,
            part.version,
            part.changed,
            part.section,
        )

    def _rows(self, number: int) -> list[tuple[str, Stored]]:
        with self._lock:
            shelf = self._connection()
            part, rows = shelf["parts"].get(number), shelf["rows"]
        return [(path, rows[path]) for path in part.paths] if part else []

    def fragments(self, number: int) -> Iterator[bytes]:
        with self._lock:
            part = self._connection()["parts"].get(number)
        if part is None:
            return
        rows = self._rows(number)
        # Fewer rows a run when they are large: serving holds a run at a time.
        size = layout.run_rows(len(part.paths), part.bytes)
        for start in range(0, len(rows), size):
            run = rows[start : start + size]
            yield b"".join(stored.row.fragment for _, stored in run)

    def entries(self, number: int) -> Iterator[Entry]:
        for path, (_, row) in self._rows(number):
            yield row.entry(path)

    def publish(self, articles: Iterable[Article], now: int) -> None:
        with self._lock:
            shelf = self._connection()
            held: dict[str, Article] = shelf["news"]
            for article in articles:
                if article.published:
                    held[article.path] = article
                elif article.path in held:  # 0: the stored date stays
                    stored = held[article.path].published
                    held[article.path] = article._replace(published=stored)
            cutoff = news_cutoff(now)
            recent = (a for a in held.values() if a.published >= cutoff)
            shelf["news"] = {a.path: a for a in newest(recent, NEWS_KEPT)}
            shelf.sync()

    def news(self, since: int, limit: int = 1000) -> list[Article]:
        with self._lock:
            shelf = self._connection()
            held, rows = shelf["news"], shelf["rows"]
        found = (a for a in held.values() if a.published >= since and a.path in rows)
        return newest(found, limit)


def _sizes(parts: dict[int, _Part]) -> dict[int, Fill]:
    return {n: Fill(len(p.paths), p.bytes, p.section) for n, p in parts.items()}


def _open(parts: dict[int, _Part]) -> dict[str, int]:
    """Each section's open part, as ``layout.plan`` takes them."""
    named = {n: p.section for n, p in parts.items() if p.section}
    return layout.opened(named, max(parts, default=0))


def _apply(
    rows: dict[str, Stored],
    parts: dict[int, _Part],
    routes: dict[str, int],
    todo: Plan,
    current: int,
) -> None:
    _drop(rows, parts, routes, todo.moved, current)
    for number, totals in todo.parts.items():
        if number not in parts:  # a part the plan opens: of its section
            parts[number] = _Part()
            if totals.section:
                parts[number].section = totals.section
    for change in todo.changes:
        part = parts.setdefault(change.part, _Part())
        if change.new:
            part.paths[change.path] = None
        prior = rows.get(change.path)
        if prior is not None:
            _tally(routes, prior.row.route, -1)
        _tally(routes, change.row.route, 1)
        rows[change.path] = Stored(change.part, change.row)
    for number, totals in todo.parts.items():
        part = parts[number]
        part.bytes += totals.bytes
        part.lastmod = max(part.lastmod, totals.newest)
        part.version += 1
        part.changed = current


def _drop(
    rows: dict[str, Stored],
    parts: dict[int, _Part],
    routes: dict[str, int],
    paths: Iterable[str],
    current: int,
) -> int:
    gone = {path: rows.pop(path) for path in paths if path in rows}
    for path, stored in gone.items():
        del parts[stored.part].paths[path]
        _tally(routes, stored.row.route, -1)
    for number, totals in layout.leaving(gone.values()).items():
        part = parts[number]
        part.bytes -= totals.bytes
        part.lastmod = max((rows[p].row.lastmod for p in part.paths), default=0)
        part.version += 1
        part.changed = current
    return len(gone)


def _tally(routes: dict[str, int], route: str | None, delta: int) -> None:
    if route is not None:
        routes[route] = routes.get(route, 0) + delta
        if not routes[route]:
            del routes[route]


def open_example(uri: str) -> Store:
    """``example:///relative/shelf`` or ``example:////absolute/shelf``, with the
    options ``part_size`` and ``part_bytes``."""
    parts = urlsplit(uri)
    limits = {key: int(value) for key, value in parse_qsl(parts.query)}
    return ShelfStore(parts.path[1:], **limits)


register_store("example", open_example)
