"""The re-check of stored pages against the current config (invariant 21): what a
changed ``exclude``, ``include``, route, query allow-list or cap now refuses
leaves the store, changed ``changefreq``/``priority`` reach stored entries, and
a page of another section than its part's moves to its section's parts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..config import KEYS, Config, Lists
from ..errors import StoreError
from ..model import Entry
from ..reasons import MOVED, PRUNED, RECHECKED, RESTYLED, Dropped
from ..render import IMAGE_NS, ORIGIN, SITEMAP_NS, URLSET_CLOSE, URLSET_OPEN, XHTML_NS
from ..routes import Route
from ..sections import DEFAULT, Sections
from ..stores.abroad import Clusters
from ..stores.contract import Shared, Store, Withdrawing
from ..stores.hreflang import unpack
from .breaker import Bugs
from .refusal import Rules, refuse

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

# The store setting that holds the digest of the config its pages follow.
SETTING = "config"
# The version of the rules of refusal.refuse: a release that refuses more
# than the one before changes it, and every store is checked once more.
# 2: secret-looking segments, empty segments and URLs too long refused too.
# 3: a stored path holding a credential matrix parameter (;jsessionid=).
RULES = "3"

Style = tuple[str | None, float | None]


def config_digest(config: Config) -> str:
    """A digest of what decides which stored pages stay and how they are
    written (the keys that list, ``config.KEYS``); the same config always
    gives the same digest."""
    decides: list[Any] = [RULES]
    later = []
    for key in KEYS.values():
        if key.lists is Lists.ALWAYS:
            decides.append(_plain(getattr(config, key.name)))
        elif key.lists is Lists.WHEN_SET and getattr(config, key.name):
            later.append([key.name, _plain(getattr(config, key.name))])
    text = json.dumps([*decides, *later], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _plain(value: Any) -> Any:
    """A field as the digest spells it, in JSON."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, Sections):
        return value.spec()
    if isinstance(value, Mapping):  # the routes
        return {
            template: [
                options.exclude,
                options.max_urls,
                options.changefreq,
                options.priority,
                sorted(options.query or ()),
            ]
            for template, options in sorted(value.items())
        }
    return value


class Judge(Protocol):
    """The current config's verdict on a stored entry."""

    max_urls: int | None
    """The global cap (``None``: none)."""

    def refuse(self, entry: Entry) -> str | None:
        """Why the config would not record ``entry`` now, or ``None``."""

    def cap(self, entry: Entry) -> int | None:
        """The cap of ``entry``'s route (``None``: none)."""

    def style(self, entry: Entry) -> Style:
        """The ``(changefreq, priority)`` the entry is written with."""

    def section(self, entry: Entry) -> str:
        """The section whose parts hold ``entry`` (``sections.DEFAULT``: the
        default)."""


class ConfigJudge:
    """A :class:`Judge` by the rule recording follows (``refusal.refuse``:
    the path rules, the routes, the query kept) and the caps.
    ``view_for(template)`` gives the view serving a
    route template, when the app's routes are known, so that a decorator's
    options count too; without it only the config's routes do."""

    def __init__(
        self,
        config: Config,
        rules: Rules,
        resolve: Callable[[str | None, object], Route],
        view_for: Callable[[str], object] | None = None,
    ) -> None:
        self.max_urls = config.max_urls
        self._sections = config.sections
        self._base_url = config.base_url
        self._rules = rules
        self._resolve = resolve
        self._view_for = view_for

    def _route(self, entry: Entry) -> Route:
        template, view_for = entry.route, self._view_for
        view = None if template is None or view_for is None else view_for(template)
        return self._resolve(template, view)

    def refuse(self, entry: Entry) -> str | None:
        # The stored spelling, judged as recording judges a page (its query
        # included: a parameter no longer kept refuses it).
        path, _, query = entry.path.partition("?")
        route = self._route(entry)
        refused = refuse(self._rules, self._base_url, path, query, route)
        return None if refused is None else refused.reason

    def cap(self, entry: Entry) -> int | None:
        route = self._route(entry)
        return None if route.template is None else route.max_urls

    def style(self, entry: Entry) -> Style:
        route = self._route(entry)
        return route.changefreq, route.priority

    def section(self, entry: Entry) -> str:
        return self._sections.of(entry.path, entry.route)


class Written(NamedTuple):
    """What a stored fragment says beyond the entry the store reads."""

    style: Style
    alternates: tuple[tuple[str, str], ...]
    images: tuple[str, ...]


def written(fragments: Iterable[bytes]) -> Iterator[tuple[str, Written]]:
    """Each ``(path, Written)`` of a part's stored fragments, read as they
    come (a part at most in memory, as the store reads it)."""
    import xml.etree.ElementTree as ET  # only a re-check reads stored XML

    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("end",))
    parser.feed(URLSET_OPEN)
    url = f"{{{SITEMAP_NS}}}url"
    for run in fragments:
        # The origin is left out: locations read back as the stored paths.
        parser.feed(run.replace(ORIGIN, b""))
        for event in parser.read_events():
            # ("end", element) for the only events asked for.
            element = event[-1]
            if isinstance(element, ET.Element) and element.tag == url:
                yield _read(element)
                element.clear()
    parser.feed(URLSET_CLOSE)
    parser.close()


def _read(element: ET.Element) -> tuple[str, Written]:
    def text(name: str) -> str | None:
        found = element.find(f"{{{SITEMAP_NS}}}{name}")
        return None if found is None else found.text

    priority = text("priority")
    alternates = tuple(
        (link.get("hreflang", ""), link.get("href", ""))
        for link in element.iterfind(f"{{{XHTML_NS}}}link")
    )
    images = tuple(
        loc.text or ""
        for loc in element.iterfind(f"{{{IMAGE_NS}}}image/{{{IMAGE_NS}}}loc")
    )
    style = (text("changefreq"), None if priority is None else float(priority))
    return text("loc") or "", Written(style, alternates, images)


def _same(have: Style, want: Style) -> bool:
    # Priorities are written to one decimal (render.fragment).
    return have[0] == want[0] and (
        (have[1] is None) == (want[1] is None)
        and (have[1] is None or f"{have[1]:.1f}" == f"{want[1]:.1f}")
    )


class Recheck:
    """One pass over a store whose config digest is not ``digest``, a part at
    a time (:meth:`step`), started again from the first part by a new writer
    if the process stops midway. Idempotent: writers that start together do
    the same removals and rewrites, in the same order, and the last one
    stores the digest.

    Caps keep the entries first in the store's order (the oldest added): what
    a lowered cap leaves out is what it would have refused as new.
    """

    def __init__(self, store: Store, judge: Judge, digest: str) -> None:
        self._store = store
        self._clusters = store if isinstance(store, Clusters) else None
        # What the config refuses is never pushed to IndexNow: its removal
        # withdraws a push still pending (one queued before the config
        # refused it), in the same write.
        self._withdrawing: Callable[[], AbstractContextManager[None]] = (
            store.withdrawing if isinstance(store, Withdrawing) else nullcontext
        )
        self._judge = judge
        self.digest = digest
        self.done = not isinstance(store, Shared)
        self._next = 0  # 0: the store's digest not read yet
        self._last = 0
        self._kept = 0
        self._route_kept: dict[str, int] = {}
        # Paths moved to a later part in this pass, not to be counted again
        # there (a string each, only for the pages whose section changed).
        self._moved: set[str] = set()
        self.checked = 0
        """Entries read so far (the work done)."""
        self.moved = 0
        """Entries moved to their section's part so far."""

    def run(
        self,
        force: bool,
        count: Callable[[str, int], object],
        removed: Callable[[list[str]], object],
        bugs: Bugs,
    ) -> None:
        """Check the next part (every part left when ``force``): ``count``
        is given the entries read, moved, removed and restyled by their
        reasons, ``removed`` the paths removed. A bug ends the pass in this
        process (``bugs`` reports it): the pages follow the config at the
        next start (invariant 18: recording goes on).

        :raises StoreError: on an outage; the same part is checked again.
        """
        try:
            self._run(force, count, removed)
        except StoreError:
            raise
        except Exception as exc:
            self.done = True
            bugs.report("the config re-check", exc)

    def _run(
        self,
        force: bool,
        count: Callable[[str, int], object],
        removed: Callable[[list[str]], object],
    ) -> None:
        while not self.done:
            before, moved = self.checked, self.moved
            gone, rewritten = self.step()
            if self.checked > before:
                count(RECHECKED, self.checked - before)
            if self.moved > moved:
                count(MOVED, self.moved - moved)
            if gone:
                removed(gone)
                count(PRUNED, len(gone))
            if rewritten:
                count(RESTYLED, rewritten)
            if not force:
                return

    def step(self) -> tuple[list[str], int]:
        """Check the next part: ``(paths removed, entries restyled)``; the
        entries moved to their section's part add to :attr:`moved`.

        :raises StoreError: on an outage; the same part is checked again.
        """
        store = self._store
        assert isinstance(store, Shared)
        if self._next == 0:
            if store.setting(SETTING) == self.digest:
                self.done = True
                return [], 0
            parts = self._store.parts()
            self._last = parts[-1].number if parts else 0
            self._next = 1
        if self._next > self._last:
            store.set_setting(SETTING, self.digest)
            self.done = True
            return [], 0
        removed, rewritten = self._check(self._next)
        self._next += 1
        return removed, rewritten

    def _check(self, number: int) -> tuple[list[str], int]:
        judge, store = self._judge, self._store
        entries = list(store.entries(number))
        self.checked += len(entries)
        kept, route_kept = self._kept, dict(self._route_kept)
        refused: list[str] = []
        styled: dict[str, Entry] = {}
        info = store.part(number)
        held = DEFAULT if info is None else info.section
        moving: dict[str, str] = {}
        for entry in entries:
            if entry.path in self._moved:
                continue  # moved here by this pass: counted already
            reason = judge.refuse(entry)
            route_cap = judge.cap(entry)
            count = route_kept.get(entry.route or "", 0)
            if reason is None and judge.max_urls is not None:
                reason = Dropped.CAP if kept >= judge.max_urls else None
            if reason is None and route_cap is not None:
                reason = Dropped.ROUTE_CAP if count >= route_cap else None
            if reason is not None:
                refused.append(entry.path)
                continue
            kept += 1
            if entry.route is not None:
                route_kept[entry.route] = count + 1
            styled[entry.path] = entry
            section = judge.section(entry)
            if section != held:
                moving[entry.path] = section
        rewrites = []
        restyled = 0
        if styled:
            for path, was in written(store.fragments(number)):
                kept_entry = styled.get(path)
                if kept_entry is None:
                    continue
                changefreq, priority = want = judge.style(kept_entry)
                target = moving.get(path)
                same = _same(was.style, want)
                if target is None and same:
                    continue
                restyled += not same
                # Written again as it is stored, with the current style; a
                # page of another section moves (its lastmod kept: nothing
                # of the page changed, so no IndexNow push either). What it
                # declares is read for the rewrites alone (_declaring).
                rewrites.append(
                    Entry(
                        path,
                        kept_entry.lastmod,
                        kept_entry.fingerprint,
                        changefreq,
                        priority,
                        kept_entry.route,
                        was.alternates,
                        was.images,
                        section=target,
                    )
                )
        # Written before the counts move on: an outage checks the part again.
        if refused:
            with self._withdrawing():
                store.remove(refused)
        if rewrites:
            store.upsert(self._declaring(rewrites))
        # Pages moved to a part not checked yet are met there again.
        self._moved.update(moving)
        self.moved += len(moving)
        self._kept, self._route_kept = kept, route_kept
        return refused, restyled

    def _declaring(self, rewrites: list[Entry]) -> list[Entry]:
        """``rewrites`` with the alternates each page declares, as the store
        holds them: its fragment lists them only while its cluster is
        complete, and a rewrite with fewer would make the store forget them
        (the cluster then completes only once every page rewritten is
        recorded again). A row stored before rows kept what they declare,
        or a store that cannot say, is written with what its fragment
        lists."""
        if self._clusters is None:
            return rewrites
        held = self._clusters.declarations(entry.path for entry in rewrites)
        return [
            replace(entry, alternates=unpack(declared))
            if (declared := held.get(entry.path))
            else entry
            for entry in rewrites
        ]
