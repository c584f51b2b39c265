"""The sitemap's health, per section: the URLs listed, which ones verified crawlers
fetched lately and which never, how old their lastmods are, which no request has
reached for a while; site-wide, the 200 pages crawlers fetched that the sitemap
lacks (and why) and when each engine last read the sitemap (:func:`site_health`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from .. import sections as _sections
from ..apps import RouteTable
from ..config import Config
from ..model import Entry, dated, to_datetime
from ..recording.refusal import refuse
from ..routes import Route, Routes
from ..stores import Holder
from ..stores.contract import Decisions, Store, Visit, Visits
from ..watching.policy import Policy

DAY = 86_400
# The windows of "fetched lately", in days: a crawler that read a page within
# a week keeps it fresh; within a month, it has not dropped it.
WINDOWS = (7, 30)
# The lastmod spread's bounds, in days (a lastmod at a bound is of the
# younger group), then "older".
AGES = (7, 30, 365)
# Example paths a report shows of each list: enough to act on, never the
# whole store.
EXAMPLES = 20
# Entries whose visits are read in one go while the parts are walked.
BATCH = 1000
# The kinds of document a crawler reads to find pages (paths.DOCUMENTS):
# the site map page and the IndexNow key file are not among them.
CRAWLED_DOCUMENTS = frozenset({"index", "part", "text-index", "text-part", "robots"})
# No reason found for a page crawlers fetch that the sitemap lacks: neither
# the config refuses it nor a writer decided about it lately; its response
# was skipped on the request path (its status or headers), which nothing
# logs per page (``explain --app`` asks the app).
UNEXPLAINED = "unexplained"


@dataclass(frozen=True, slots=True)
class Fetched:
    """Listed URLs a verified crawler fetched within a window: ``urls`` by any
    engine, ``engines`` by each (engine name -> URLs)."""

    days: int
    urls: int
    engines: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Lastmods:
    """How old the listed URLs' lastmods are: ``undated`` (none claimed), in
    the last 7 days (``week``), in 8 to 30 days (``month``), in 31 days to a
    year (``year``), or ``older``; a lastmod at a bound is of the younger."""

    undated: int = 0
    week: int = 0
    month: int = 0
    year: int = 0
    older: int = 0


@dataclass(frozen=True, slots=True)
class SectionHealth:
    """One section's figures (``name`` ``""``: the default section, shown as
    ``label``). The counts are of the URLs the sitemap lists in it; each
    ``*_examples`` names at most :data:`EXAMPLES` of them (paths)."""

    name: str
    label: str
    listed: int
    fetched: tuple[Fetched, ...]
    """By a verified crawler, one per window of :data:`WINDOWS` (7, 30 days)."""
    never_fetched: int
    """Listed, and no verified crawler's fetch of it is kept."""
    never_fetched_examples: tuple[str, ...]
    lastmods: Lastmods
    stale: int
    """Listed, and no client was served it for ``stale_after`` (or no
    serving of it was ever kept)."""
    stale_examples: tuple[str, ...]

    def within(self, days: int) -> Fetched:
        """The figures of the window of ``days`` (7 or 30)."""
        for window in self.fetched:
            if window.days == days:
                return window
        raise KeyError(days)


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A page verified crawlers fetched with a 200 that the sitemap does not
    list, and why: ``source`` ``"config"`` (a rule of the config refuses it;
    ``reason`` a code of ``recording.refusal.REASONS``, ``detail`` what it
    names), ``"writer"`` (the writers' last decision about it, ``reason``
    its code: ``noindex``, ``canonical_other``, a cap...), or ``""`` (neither:
    ``reason`` is :data:`UNEXPLAINED`)."""

    path: str
    engines: tuple[str, ...]
    last_fetched: datetime
    source: str
    reason: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentFetch:
    """A sitemap document's (index, part, robots.txt) last fetch by one
    engine's verified crawler."""

    path: str
    engine: str
    at: datetime
    status: int


@dataclass(frozen=True, slots=True)
class Health:
    """The sitemap's health at ``made``. ``crawls_kept`` is ``False`` for a
    store that keeps no visits (``stores.contract.Visits``): the crawl figures
    are then all zero and say nothing (the lastmod spread still does)."""

    made: datetime
    stale_after: float
    """Seconds without a serving after which a listed URL is stale."""
    crawls_kept: bool
    sections: tuple[SectionHealth, ...]
    unlisted: int
    """Pages verified crawlers fetched with a 200 that the sitemap lacks
    (among the visits the store keeps)."""
    unlisted_examples: tuple[Unlisted, ...]
    documents: tuple[DocumentFetch, ...]
    """The newest fetch of each sitemap document by each engine, newest first."""
    engines: tuple[str, ...] = field(default=())
    """Every engine whose verified crawler fetched a page or a document."""
    unrouted: tuple[str, ...] | None = None
    """The app's page routes (``GET``, neither the framework's nor excluded,
    by route or path rule) of which the sitemap lists no URL at all; ``None``
    when the app's routes are unknown (a store given alone, a middleware
    before its first page response)."""

    @property
    def listed(self) -> int:
        return sum(s.listed for s in self.sections)


@runtime_checkable
class _Routed(Protocol):
    """A middleware: the app's route table once known, and its options."""

    @property
    def routes(self) -> Routes: ...

    def table(self) -> RouteTable | None: ...


def site_health(
    source: Store | Any,
    config: Config | Mapping[str, Any] | None = None,
    *,
    stale_after: float | None = None,
    now: float | None = None,
    route_of: Callable[[str], Route | None] | None = None,
) -> Health:
    """The sitemap's health report, read from its store.

    It walks the listed URLs a part at a time (memory bounded whatever the
    store's size) and the crawl visits the store keeps: on a large store it
    takes about what exporting it takes, so call it from a command or a job,
    not on every request (the Prometheus collector keeps it for a while).

    :param source: a middleware (its store and config), or a store.
    :param config: the config of a store given alone (its ``sections``, its
        rules for why a page is not listed); by default the defaults.
    :param stale_after: seconds without a serving after which a listed URL is
        stale; by default the config's ``stale_after``.
    :param now: the time of the report, in epoch seconds (tests).
    :param route_of: the route serving a path, when the app is known (the
        command line's ``--app``): then why a page is not listed names its
        route's rules too (a framework page, an excluded route); else the
        config's defaults for routes judge.
    :raises StoreError: when the store cannot be read.
    :raises TypeError: for a source that is neither (an app: pass its
        middleware).

    .. code-block:: python

        from sitemap_middleware import site_health

        health = site_health(app.extensions["sitemap"])
        for section in health.sections:
            print(section.label, section.listed, section.within(7).urls)
    """
    table: tuple[RouteTable, Routes] | None = None
    if not isinstance(source, Store) and isinstance(source, Holder):
        store, checked = source.store, source.config
        if isinstance(source, _Routed):
            known = source.table()
            table = None if known is None else (known, source.routes)
    elif isinstance(source, Store):
        store = source
        checked = Config.from_mapping(
            config if config is not None else {"base_url": "http://localhost"}
        )
    else:
        raise TypeError(
            "site_health() takes the sitemap middleware or a store, got "
            f"{type(source).__name__} (a Flask app's middleware: get_sitemap(app), "
            "from sitemap_middleware.flask; a Starlette app's: "
            "sitemap_middleware.starlette.get_sitemap(app))"
        )
    moment = time.time() if now is None else now
    stale = checked.stale_after if stale_after is None else stale_after
    if stale < 0:
        raise ValueError(f"stale_after must be seconds >= 0, got {stale!r}")
    report = _Report(store, checked, int(moment), stale, route_of)
    return report.run(table)


class _Tally:
    """One section's counters as its entries pass, and its first examples."""

    def __init__(self) -> None:
        self.listed = 0
        self.fetched: dict[int, Counter[str]] = {days: Counter() for days in WINDOWS}
        self.never: list[str] = []
        self.never_count = 0
        self.ages: Counter[str] = Counter()
        self.stale: list[str] = []
        self.stale_count = 0

    def result(self, name: str) -> SectionHealth:
        return SectionHealth(
            name=name,
            label=_sections.label(name),
            listed=self.listed,
            fetched=tuple(
                Fetched(
                    days, counts[""], {e: n for e, n in sorted(counts.items()) if e}
                )
                for days, counts in self.fetched.items()
            ),
            never_fetched=self.never_count,
            never_fetched_examples=tuple(self.never),
            lastmods=Lastmods(**self.ages),
            stale=self.stale_count,
            stale_examples=tuple(self.stale),
        )


class _Report:
    def __init__(
        self,
        store: Store,
        config: Config,
        now: int,
        stale: float,
        route_of: Callable[[str], Route | None] | None,
    ) -> None:
        self.store = store
        self.route_of = route_of
        self.config = config
        self.now = now
        self.stale_since = now - stale
        self.stale_after = stale
        self.kept = isinstance(store, Visits)
        self.tallies: dict[str, _Tally] = {}
        self.engines: set[str] = set()

    def run(self, table: tuple[RouteTable, Routes] | None) -> Health:
        for part in self.store.parts():
            tally = self.tallies.setdefault(part.section, _Tally())
            for batch in _batches(self.store.entries(part.number)):
                self._count(tally, batch)
        unlisted, examples, documents = self._unlisted()
        order = {name: i for i, name in enumerate(self.config.sections.names)}
        names = sorted(self.tallies, key=lambda n: (order.get(n, len(order)), n))
        return Health(
            made=to_datetime(self.now),
            stale_after=self.stale_after,
            crawls_kept=self.kept,
            sections=tuple(self.tallies[name].result(name) for name in names),
            unlisted=unlisted,
            unlisted_examples=examples,
            documents=documents,
            engines=tuple(sorted(self.engines)),
            unrouted=None if table is None else self._unrouted(*table),
        )

    def _unrouted(self, table: RouteTable, routes: Routes) -> tuple[str, ...]:
        """The page routes with no URL listed: a count per route (an index or
        a counter in every store), for the few routes an app has."""
        policy = Policy(self.config)
        found = []
        for template in sorted(table.gets - table.framework):
            route = routes.resolve(template, table.views.get(template))
            # The path rules on the template itself: "/admin/<id>" is as
            # excluded by "*/admin/*" as each of its pages.
            if route.exclude or route.framework or policy.path_skip(template):
                continue
            if self.store.count(template) == 0:
                found.append(template)
        return tuple(found)

    def _count(self, tally: _Tally, entries: list[Entry]) -> None:
        seen: dict[str, dict[str, int]] = {}
        if isinstance(self.store, Visits):
            for visit in self.store.visits([e.path for e in entries]):
                seen.setdefault(visit.path, {})[visit.agent] = visit.at
        for entry in entries:
            tally.listed += 1
            tally.ages[self._age(entry)] += 1
            times = seen.get(entry.path, {})
            served = times.get("")
            if served is None or served < self.stale_since:
                tally.stale_count += 1
                if len(tally.stale) < EXAMPLES:
                    tally.stale.append(entry.path)
            engines = [agent for agent in times if agent]
            if not engines:
                tally.never_count += 1
                if len(tally.never) < EXAMPLES:
                    tally.never.append(entry.path)
                continue
            self.engines.update(engines)
            for days, counts in tally.fetched.items():
                since = self.now - days * DAY
                within = [agent for agent in engines if times[agent] >= since]
                if within:
                    counts[""] += 1  # any engine
                    counts.update(within)

    def _age(self, entry: Entry) -> str:
        lastmod = dated(entry.lastmod)
        if lastmod is None:
            return "undated"
        days = (self.now - lastmod.timestamp()) / DAY
        for bound, name in zip(AGES, ("week", "month", "year"), strict=True):
            if days <= bound:
                return name
        return "older"

    def _unlisted(self) -> tuple[int, tuple[Unlisted, ...], tuple[DocumentFetch, ...]]:
        """The pages crawlers fetched (200) that the store does not list, and
        the sitemap documents' last fetches: one pass over the kept visits,
        a batch at a time (the store keeps a bounded number of unlisted
        paths, so the dict of them is bounded too)."""
        if not isinstance(self.store, Visits):
            return 0, (), ()
        found: dict[str, tuple[set[str], int]] = {}
        documents: dict[tuple[str, str], Visit] = {}
        for batch in _batches(v for v in self.store.visits() if v.agent):
            pages: list[Visit] = []
            for visit in batch:
                path, _, query = visit.path.partition("?")
                matched = self.config.documents.match(path, query)
                if matched is not None:
                    if matched[0].kind in CRAWLED_DOCUMENTS:
                        key = (visit.path, visit.agent)
                        held = documents.get(key)
                        if held is None or held.at < visit.at:
                            documents[key] = visit
                elif visit.status == 200:
                    pages.append(visit)
            listed = self.store.known({v.path for v in pages}) if pages else set()
            for visit in pages:
                if visit.path in listed:
                    continue
                agents, last = found.get(visit.path, (set(), 0))
                agents.add(visit.agent)
                found[visit.path] = (agents, max(last, visit.at))
        for agent in {agent for agents, _ in found.values() for agent in agents}:
            self.engines.add(agent)
        self.engines.update(agent for _, agent in documents)
        newest = sorted(found.items(), key=lambda item: (-item[1][1], item[0]))
        examples = tuple(
            self._why(path, agents, last) for path, (agents, last) in newest[:EXAMPLES]
        )
        fetches = tuple(
            DocumentFetch(v.path, v.agent, to_datetime(v.at), v.status)
            for v in sorted(documents.values(), key=lambda v: (-v.at, v.path, v.agent))
        )
        return len(found), examples, fetches

    def _why(self, path: str, agents: set[str], last: int) -> Unlisted:
        engines, when = tuple(sorted(agents)), to_datetime(last)
        bare, _, query = path.partition("?")
        # The route of a page the sitemap lacks is not stored: the app's when
        # it is known, else the config's defaults for routes judge.
        config = self.config
        route = None if self.route_of is None else self.route_of(bare)
        if route is None:
            route = Routes(config).unknown
        refused = refuse(Policy(config), config.base_url, bare, query, route)
        if refused is not None:
            return Unlisted(
                path, engines, when, "config", refused.reason, refused.detail
            )
        if isinstance(self.store, Decisions):
            decided = self.store.decisions(bare)
            if decided:
                return Unlisted(path, engines, when, "writer", decided[-1][0])
        return Unlisted(path, engines, when, "", UNEXPLAINED)


def _batches(items: Iterable[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
