"""The site-wide counters and the health figures as Prometheus metrics: a collector
the app registers on its own registry (``prometheus_client``, the ``prometheus``
extra, imported only when collected); the library runs no server of its own.

With several ``sites``, one collector, the middleware's, gives every site's
figures, each series labelled ``site`` (the first site's too). With one site the
series are as they always were, with no ``site`` label: the dashboards on them
keep working, and a label that never varies is left out. A collector of one
site's view is refused: beside the middleware's, its series would be there twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..config import Config
from ..errors import StoreError
from ..reasons import GROUP, GROUPS
from ..recording.counters import by_group
from ..stores.contract import Shared, Store
from .health import Health, site_health

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

logger = logging.getLogger("sitemap_middleware")

# Seconds the health figures are kept: walking a large store takes about
# what exporting it takes, and they move on the scale of days; a scrape
# every 15 s reads only the counters.
HEALTH_MAX_AGE = 300.0
# Seconds a scrape waits for figures being made before it answers with the
# ones it has (none at first): Prometheus's default scrape timeout is 10 s.
HEALTH_WAIT = 2.0
PREFIX = "sitemap"
# The label of each series with several sites: the name the ``sites`` key
# gives the site.
SITE_LABEL = "site"


@runtime_checkable
class _Counted(Protocol):
    """A middleware: its site-wide counters include what it has not sent."""

    def site_stats(self) -> dict[str, Any]: ...


@runtime_checkable
class _Sited(Protocol):
    """A middleware: its config's ``sites``, and ``site(name)`` for each."""

    config: Config

    def site(self, name: str) -> Any: ...


class SitemapCollector:
    """The sitemap's metrics for a ``prometheus_client`` registry.

    Each scrape reads the site-wide counters (one small read of the store):
    ``sitemap_recorded_total``, ``sitemap_removed_total`` and the like, and
    ``sitemap_skipped_total``, ``sitemap_dropped_total``, ``sitemap_seen_total``,
    ``sitemap_errors_total`` by ``reason``. The health figures
    (:func:`~sitemap_middleware.site_health`), gauges by ``section`` (and
    ``engine``), are made at most every ``max_age`` seconds, on a thread of
    their own, one at a time: a scrape waits ``wait`` seconds at most for
    new ones, then answers with those it has, so a scrape never walks a
    large store.

    With several ``sites`` the middleware's collector gives every site's
    figures (each as ``middleware.site(name)`` has them), every series
    labelled ``site`` by the site's name, the first site's too: one
    collector, one registry, one valid exposition. With one site (no
    ``sites`` key, or one site in it), or a store, there is no ``site``
    label: the series are the same as before sites were labelled.

    :param source: the middleware (or a store, with ``config``).
    :param config: the config of a store given alone.
    :param max_age: seconds the health figures are kept.
    :param wait: seconds a scrape waits for new health figures.
    :raises ValueError: for one site's view of a middleware with several
        sites (``middleware.site("fr")``): its series are the middleware
        collector's already, and beside it would be there twice. Register
        ``SitemapCollector(middleware)`` once. (The first site's view is the
        middleware itself.)

    .. code-block:: python

        from prometheus_client import REGISTRY
        from sitemap_middleware import SitemapCollector

        REGISTRY.register(SitemapCollector(app.extensions["sitemap"]))
    """

    def __init__(
        self,
        source: Any,
        config: Config | Mapping[str, Any] | None = None,
        *,
        max_age: float = HEALTH_MAX_AGE,
        wait: float = HEALTH_WAIT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # Site name -> the source of its figures; {"": source}: one site,
        # its series unlabelled.
        self._sites = _sites(source)
        self._labelled = len(self._sites) > 1
        self._config = config
        self._max_age = max_age
        self._wait = wait
        self._clock = clock
        self._lock = threading.Lock()
        # By site: its health figures kept and when they were made; the sites
        # whose store cannot be read (warned once while it lasts).
        self._health: dict[str, Health] = {}
        self._made: dict[str, float] = {}
        self._making: threading.Thread | None = None
        self._failed: set[str] = set()

    def describe(self) -> list[Metric]:
        # Nothing is read at registration: the registry then asks collect()
        # only when scraped.
        return []

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        # One family per metric, every site's samples in it: a metric's
        # family twice in an exposition, or a series twice, is invalid.
        counters = _Families(CounterMetricFamily, self._labelled)
        for name, source in self._sites.items():
            counts = _counts(source)
            if counts is not None:
                counters.site = name
                _counters(counts, counters)
        gauges = _Families(GaugeMetricFamily, self._labelled)
        healths = self._kept()
        for name in self._sites:
            if name in healths:
                gauges.site = name
                _gauges(healths[name], gauges)
        yield from counters
        yield from gauges

    def health(self, site: str = "") -> Health | None:
        """The health figures kept of the middleware (the first site's), or
        with several ``sites`` of the one named ``site``; made again when
        older than ``max_age`` (waiting ``wait`` seconds for them); ``None``
        before the first are made, or while the store cannot be read.

        :raises KeyError: for a name not among the sites labelled.
        """
        name = site or next(iter(self._sites))
        if name not in self._sites:
            raise KeyError(site)
        return self._kept().get(name)

    def _kept(self) -> dict[str, Health]:
        """Each site's health figures kept, by name: those older than
        ``max_age`` are made again on the thread, waited for ``wait`` s."""
        with self._lock:
            stale = bool(self._stale())
            making = self._making
            if stale and making is None:
                making = self._making = threading.Thread(
                    target=self._make, name="sitemap-health", daemon=True
                )
                making.start()
        if making is not None:
            making.join(self._wait)
        with self._lock:
            return dict(self._health)

    def _stale(self) -> list[str]:
        now = self._clock()
        never = float("-inf")
        return [
            name
            for name in self._sites
            if now - self._made.get(name, never) >= self._max_age
        ]

    def _make(self) -> None:
        try:
            with self._lock:
                stale = self._stale()
            for name in stale:  # a site at a time, each kept as soon as made
                health = self._report(name)
                if health is not None:
                    with self._lock:
                        self._health[name], self._made[name] = health, self._clock()
        finally:
            with self._lock:
                self._making = None

    def _report(self, name: str) -> Health | None:
        try:
            health = site_health(self._sites[name], self._config, now=self._clock())
        except StoreError as exc:
            if name not in self._failed:
                of = f" (site {name!r})" if self._labelled else ""
                logger.warning("the sitemap's health could not be read%s: %s", of, exc)
            self._failed.add(name)
            return None
        except Exception:
            logger.exception("the sitemap's health report failed")
            return None
        self._failed.discard(name)
        return health


def _sites(source: Any) -> dict[str, Any]:
    """Site name -> the source of its figures: with several ``sites``, each
    site's middleware as ``source.site(name)`` gives it, in the config's
    order (as the command line reaches a site, ``cli/replay.py``); else
    ``{"": source}``.

    :raises ValueError: for one site's view, whose ``site()`` knows no other.
    """
    if isinstance(source, Store) or not isinstance(source, _Sited):
        return {"": source}
    config = source.config
    if not isinstance(config, Config) or len(config.sites) < 2:
        return {"": source}
    sites: dict[str, Any] = {}
    for site in config.sites:
        try:
            sites[site.name] = source.site(site.name)
        except KeyError:
            raise ValueError(
                f"SitemapCollector(middleware.site({config.site!r})): one site's"
                " view; the middleware's collector gives every site's figures,"
                f" each series labelled {SITE_LABEL}=..., and beside it this"
                " one's would be there twice: register"
                " SitemapCollector(middleware), once"
            ) from None
    return sites


def _counts(source: Any) -> dict[str, int] | None:
    try:
        if isinstance(source, _Counted):
            return _flat(source.site_stats())
        store = source if isinstance(source, Store) else None
        if isinstance(store, Shared):
            return dict(store.counts())
    except StoreError:
        return None  # said by the health figures' warning
    return None


def _flat(stats: Mapping[str, Any]) -> dict[str, int]:
    """``site_stats()`` back to counts by reason: the totals and each counter
    group's reasons, nothing else. Beside them it holds this process's queue,
    the store's size and, with sections, each one's (a dict of its own): the
    health figures give the URLs per section, as ``sitemap_urls``."""
    counts = {name: n for name, n in stats.items() if GROUP.get(name) == ""}
    for group in GROUPS:
        counts.update(stats.get(group) or {})
    return counts


_Add = Callable[[Sequence[str], float], None]


class _Families:
    """The metric families of one kind in a scrape, by name, in the order first
    asked for: every site's samples of a metric go into its one family, labelled
    ``site`` (first) when ``labelled``."""

    def __init__(self, kind: Any, labelled: bool) -> None:
        self._kind = kind
        self._labelled = labelled
        self._made: dict[str, Any] = {}  # a kind's families (add_metric)
        self.site = ""  # the site whose samples are added

    def __call__(self, name: str, text: str, labels: Sequence[str] = ()) -> _Add:
        """The family ``name`` (made now if new, samples or not): a function
        adding a sample of the current site to it by ``labels``' values."""
        family = self._made.get(name)
        if family is None:
            names = [SITE_LABEL, *labels] if self._labelled else list(labels)
            family = self._made[name] = self._kind(name, text, labels=names)
        site = [self.site] if self._labelled else []
        return lambda values, value: family.add_metric([*site, *values], value)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._made.values())


def _counters(counts: Mapping[str, int], family: _Families) -> None:
    for (group, reason), value in sorted(by_group(Counter(counts)).items()):
        if not group:  # "" sorts first: the totals, then each group's family
            family(f"{PREFIX}_{reason}", f"Pages {reason}, site-wide.")([], value)
        else:
            family(
                f"{PREFIX}_{group}",
                f"Responses {group}, site-wide, by reason.",
                ["reason"],
            )([reason], value)


def _gauges(health: Health, family: _Families) -> None:
    listed = family(f"{PREFIX}_urls", "URLs listed, by section.", ["section"])
    for section in health.sections:
        listed([section.label], section.listed)
    if health.crawls_kept:
        _crawled(health, family)
    ages = family(
        f"{PREFIX}_lastmod_urls",
        "Listed URLs by the age of their lastmod, by section.",
        ["section", "age"],
    )
    for section in health.sections:
        for age in ("undated", "week", "month", "year", "older"):
            ages([section.label, age], getattr(section.lastmods, age))
    if health.unrouted is not None:
        family(
            f"{PREFIX}_unrouted_routes",
            "The app's page routes of which the sitemap lists no URL.",
        )([], len(health.unrouted))
    made = family(
        f"{PREFIX}_health_timestamp_seconds", "When the health figures were made."
    )
    made([], health.made.timestamp())


def _crawled(health: Health, family: _Families) -> None:
    """The figures of the crawls kept (none when the store keeps none, rather
    than zeros that would read as "never crawled")."""
    fetched = family(
        f"{PREFIX}_fetched_urls",
        "Listed URLs a verified crawler fetched within the window, by section "
        "and engine (engine '': any).",
        ["section", "engine", "window"],
    )
    for section in health.sections:
        for window in section.fetched:
            days = f"{window.days}d"
            fetched([section.label, "", days], window.urls)
            for engine in health.engines:
                fetched([section.label, engine, days], window.engines.get(engine, 0))
    for name, text, figure in (
        (
            "never_fetched_urls",
            "Listed URLs no verified crawler's fetch of is kept, by section.",
            "never_fetched",
        ),
        (
            "stale_urls",
            "Listed URLs no client was served for stale_after seconds, by section.",
            "stale",
        ),
    ):
        add = family(f"{PREFIX}_{name}", text, ["section"])
        for section in health.sections:
            add([section.label], getattr(section, figure))
    family(
        f"{PREFIX}_unlisted_fetched_urls",
        "Pages verified crawlers fetched with a 200 that the sitemap lacks.",
    )([], health.unlisted)
    documents = family(
        f"{PREFIX}_document_fetched_timestamp_seconds",
        "When each engine's verified crawler last fetched a sitemap document "
        "(the index, a part, robots.txt).",
        ["engine"],
    )
    newest: dict[str, float] = {}
    for fetch in health.documents:
        newest.setdefault(fetch.engine, fetch.at.timestamp())
    for engine, at in sorted(newest.items()):
        documents([engine], at)
