"""``memory://``: a store in process memory, for tests and single-process demos.

Nothing is shared between processes and nothing survives a restart. It has no
backend to lose, so it never raises ``StoreError``: only ``ValueError`` for an
entry no sitemap may hold.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from ..model import Entry, PartInfo
from ..sections import DEFAULT
from ..sitemaps import MAX_NEWS, MAX_PART_BYTES, MAX_URLS_PER_PART
from .base import StoreBase, new_epoch
from .contract import (
    MAX_COUNT,
    NEWS_KEPT,
    Article,
    Decision,
    Removed,
    Visit,
    deltas,
    logged,
    newest,
    news_cutoff,
    removed,
    unlogged,
)
from .hreflang import Settled
from .layout import batches, leaving, now, opened, run_rows
from .records import Change, Fill, Plan, Stored, Totals


@dataclass(slots=True)
class _Part:
    paths: dict[str, None]  # insertion-ordered set: first-seen order
    bytes: int = 0
    lastmod: int = 0
    version: int = 0
    changed: int = 0
    section: str = DEFAULT


class MemoryStore(StoreBase[None]):
    """Dicts behind one lock."""

    def __init__(
        self, part_size: int = MAX_URLS_PER_PART, part_bytes: int = MAX_PART_BYTES
    ) -> None:
        super().__init__(part_size, part_bytes)
        self._lock = threading.Lock()
        self._rows: dict[str, Stored] = {}
        self._parts: list[_Part] = []
        self._routes: dict[str, int] = {}  # route template -> stored paths
        self._epoch = new_epoch()
        self._counts: Counter[str] = Counter()
        self._settings: dict[str, str] = {}
        self._pending: dict[str, float] = {}  # IndexNow: path -> lease (0: free)
        self._log: dict[str, str] = {}  # insertion order: oldest first
        # The removals log: the last removals_kept paths removed, oldest first,
        # the newest numbered _removed_seq.
        self._removed: deque[str] = deque()
        self._removed_seq = 0
        # Visits: (path, agent) -> Visit, oldest visit first per insertion.
        self._visits: dict[tuple[str, str], Visit] = {}
        # News: path -> article.
        self._news: dict[str, Article] = {}

    # -- the write path -------------------------------------------------------------
    # StoreBase's steps, each batch under the lock. Every row is at hand, so
    # nothing is _read: _sizes gives the fill and section of every part and
    # the open ones; a removal or a settling writes its members again (_rewrite).

    def upsert(self, entries: Iterable[Entry]) -> int:
        return sum(self._upsert(batch) for batch in batches(entries))

    def _upsert(self, batch: dict[str, Entry]) -> int:
        with self._lock:
            current = now()
            # Planned in full first, so that a bad entry changes nothing; every
            # row is at hand, the clusters' members included.
            sizes, last, opened = self._sizes()
            todo = self._plan(batch, self._rows, sizes, last, current, None, opened)
            pushes = self._pushes(todo, self._rows)
            self._apply(todo, current)
            self._queue(pushes)
        return len(todo.changes)

    def remove(self, paths: Iterable[str]) -> int:
        with self._lock:
            current = now()
            gone = {path for path in paths if path in self._rows}
            if not gone:
                return 0
            # The members of the removed pages' clusters lose their links.
            settled = self._settle({}, self._rows, gone)
            self._delete(gone, current)
            if self._is_pushing():
                self._queue(gone)
            self._log_removed(gone)
            if settled.rewrites:
                self._rewrite(settled, current)
            return len(gone)

    def resettle(self, paths: Iterable[str]) -> None:
        with self._lock:
            again = [path for path in paths if path in self._rows]
            if not again:
                return
            current = now()
            settled = self._settle({}, self._rows, (), again)
            if settled.rewrites:
                self._rewrite(settled, current)

    def _rewrite(self, settled: Settled, current: int) -> None:
        """Write again the stored rows whose listing ``settled`` changes."""
        sizes, last, opened = self._sizes()
        todo = self._plan({}, self._rows, sizes, last, current, settled, opened)
        self._apply(todo, current)

    def declarations(self, paths: Iterable[str]) -> dict[str, str]:
        # Without the lock: the asking site's writer holds its own, and this
        # one's may be asking it back. One dict read each (atomic); a row read
        # while its write goes on is settled again once that write is done.
        rows = self._rows
        found: dict[str, str] = {}
        for path in paths:
            stored = rows.get(path)
            if stored is not None:
                found[path] = stored.row.declared or ""
        return found

    def _sizes(self) -> tuple[dict[int, Fill], int, dict[str, int]]:
        """The Fill of every part; the highest; each section's open part."""
        parts = self._parts
        sizes = {
            n: Fill(len(p.paths), p.bytes, p.section) for n, p in enumerate(parts, 1)
        }
        named = {n: p.section for n, p in enumerate(parts, 1) if p.section}
        return sizes, len(parts), opened(named, len(parts))

    def _apply(self, todo: Plan, current: int) -> None:
        self._delete(todo.moved, current)
        parts = self._parts
        for number in sorted(n for n in todo.parts if n > len(parts)):
            while len(parts) < number - 1:
                parts.append(_Part({}))
            parts.append(_Part({}, section=todo.parts[number].section))
        self._write(todo.changes)
        self._summaries(todo.parts, current)

    def _queue(self, paths: Iterable[str]) -> None:
        """Queue IndexNow pushes, free."""
        for path in paths:
            self._pending[path] = 0.0

    def _log_removed(self, paths: Iterable[str]) -> None:
        """Number the removed paths in the removals log."""
        log = self._removed
        for path in sorted(paths):
            log.append(path)
            self._removed_seq += 1
        while len(log) > self.removals_kept:
            log.popleft()

    def removed_since(self, seq: int | None) -> Removed:
        with self._lock:
            top, log = self._removed_seq, self._removed
            newer = top - seq if seq is not None else 0
            paths = list(islice(reversed(log), newer))[::-1] if newer > 0 else []
            oldest = top - len(log) + 1 if log else None
            return removed(self._epoch, seq, top, oldest, paths)

    def _delete(self, paths: Iterable[str], current: int) -> int:
        gone = {path: self._rows.pop(path) for path in paths if path in self._rows}
        for path, stored in gone.items():
            del self._parts[stored.part - 1].paths[path]
            self._tally(stored.row.route, -1)
        for number, totals in leaving(gone.values()).items():
            part = self._parts[number - 1]
            part.bytes -= totals.bytes
            part.lastmod = max(
                (self._rows[p].row.lastmod for p in part.paths), default=0
            )
            part.version += 1
            part.changed = current
        return len(gone)

    def _write(self, changes: list[Change]) -> None:
        parts = self._parts
        for change in changes:
            while len(parts) < change.part:
                parts.append(_Part({}))
            if change.new:
                parts[change.part - 1].paths[change.path] = None
            prior = self._rows.get(change.path)
            if prior is not None:
                self._tally(prior.row.route, -1)
            self._tally(change.row.route, 1)
            self._rows[change.path] = Stored(change.part, change.row)

    def _summaries(self, parts: dict[int, Totals], current: int) -> None:
        for number, totals in parts.items():
            part = self._parts[number - 1]
            part.bytes += totals.bytes
            part.lastmod = max(part.lastmod, totals.newest)
            part.version += 1
            part.changed = current

    def _tally(self, route: str | None, delta: int) -> None:
        if route is not None:
            held = self._routes.get(route, 0) + delta
            if held:
                self._routes[route] = held
            else:
                self._routes.pop(route, None)

    def epoch(self) -> str:
        return self._epoch

    def add_counts(self, counts: Mapping[str, int]) -> None:
        with self._lock:
            found = self._counts
            for reason, n in deltas(counts):
                found[reason] = min(found[reason] + n, MAX_COUNT)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def setting(self, name: str) -> str | None:
        with self._lock:
            return self._settings.get(name)

    def set_setting(self, name: str, value: str) -> None:
        with self._lock:
            self._settings[name] = value

    def queue_pushes(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._queue(paths)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        with self._lock:
            claimed: list[str] = []
            for path, lease in self._pending.items():
                if len(claimed) >= limit:
                    break
                if lease <= now:
                    claimed.append(path)
            for path in claimed:
                self._pending[path] = until
            return claimed

    def pushed(self, paths: Iterable[str], until: float) -> int:
        with self._lock:
            held = [p for p in paths if self._pending.get(p) == until]
            for path in held:
                del self._pending[path]
            return len(held)

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        with self._lock:
            for path in paths:
                if self._pending.get(path) == until:
                    self._pending[path] = at

    def pending_pushes(self) -> int:
        with self._lock:
            return len(self._pending)

    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        with self._lock:
            log = self._log
            for path, added in grouped.items():
                log[path] = logged(log.pop(path, None), added, self.decisions_kept)
            while len(log) > self.decision_paths:
                del log[next(iter(log))]

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        with self._lock:
            return unlogged(self._log.get(path))

    def visited(self, visits: Iterable[Visit]) -> None:
        with self._lock:
            kept = self._visits
            for visit in visits:
                key = (visit.path, visit.agent)
                held = kept.get(key)
                if held is None or held.at <= visit.at:
                    kept.pop(key, None)  # to the end: the newest last
                    kept[key] = visit
            unlisted = {path for path, _ in kept if path not in self._rows}
            # Beyond the paths listed, keep the most lately visited.
            if len(unlisted) > self.unlisted_visits_kept:
                newest: dict[str, int] = {}
                for (path, _), visit in kept.items():
                    if path in unlisted:
                        newest[path] = max(newest.get(path, 0), visit.at)
                ranked = sorted(unlisted, key=lambda p: newest[p])
                dropped = set(ranked[: len(unlisted) - self.unlisted_visits_kept])
                for key in [k for k in kept if k[0] in dropped]:
                    del kept[key]

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        with self._lock:
            if paths is None:
                found = list(self._visits.values())
            else:
                wanted = set(paths)
                found = [v for (p, _), v in self._visits.items() if p in wanted]
        yield from found

    def count(self, route: str | None = None) -> int:
        with self._lock:
            if route is None:
                return len(self._rows)
            return self._routes.get(route, 0)

    def known(self, paths: Iterable[str]) -> set[str]:
        with self._lock:
            return {path for path in paths if path in self._rows}

    def parts(self) -> list[PartInfo]:
        with self._lock:
            return [
                info
                for number in range(1, len(self._parts) + 1)
                if (info := self._info(number)) is not None
            ]

    def part(self, number: int) -> PartInfo | None:
        with self._lock:
            return self._info(number)

    def _info(self, number: int) -> PartInfo | None:
        if not 1 <= number <= len(self._parts):
            return None
        part = self._parts[number - 1]
        if not part.paths:
            return None
        return PartInfo.from_row(
            self._epoch,
            number,
            len(part.paths),
            part.lastmod,
            part.version,
            part.changed,
            part.section,
        )

    def _part_rows(self, number: int) -> list[tuple[str, Stored]]:
        with self._lock:
            if not 1 <= number <= len(self._parts):
                return []
            return [(p, self._rows[p]) for p in self._parts[number - 1].paths]

    def fragments(self, number: int) -> Iterator[bytes]:
        # Joined a run at a time, as a database store reads them.
        rows = self._part_rows(number)
        if not rows:
            return
        with self._lock:
            run = run_rows(len(rows), self._parts[number - 1].bytes)
        for i in range(0, len(rows), run):
            yield b"".join(stored.row.fragment for _, stored in rows[i : i + run])

    def entries(self, number: int) -> Iterator[Entry]:
        for path, (_, row) in self._part_rows(number):
            yield row.entry(path)

    def publish(self, articles: Iterable[Article], now: int) -> None:
        with self._lock:
            held = self._news
            for article in articles:
                if article.published:
                    held[article.path] = article
                elif article.path in held:
                    stored = held[article.path].published
                    held[article.path] = article._replace(published=stored)
            cutoff = news_cutoff(now)
            kept = newest(
                (a for a in held.values() if a.published >= cutoff), NEWS_KEPT
            )
            self._news = {a.path: a for a in kept}

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        with self._lock:
            found = [
                a
                for a in self._news.values()
                if a.published >= since and a.path in self._rows
            ]
        return newest(found, limit)
