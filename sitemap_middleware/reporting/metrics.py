"""The site-wide counters and the health figures as Prometheus metrics: a collector
the app registers on its own registry (``prometheus_client``, the ``prometheus``
extra, imported only when collected); the library runs no server of its own.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
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


@runtime_checkable
class _Counted(Protocol):
    """A middleware: its site-wide counters include what it has not sent."""

    def site_stats(self) -> dict[str, Any]: ...


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

    :param source: the middleware (or a store, with ``config``).
    :param config: the config of a store given alone.
    :param max_age: seconds the health figures are kept.
    :param wait: seconds a scrape waits for new health figures.

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
        self._source = source
        self._config = config
        self._max_age = max_age
        self._wait = wait
        self._clock = clock
        self._lock = threading.Lock()
        self._health: Health | None = None
        self._made = float("-inf")
        self._making: threading.Thread | None = None
        self._failed = False

    def describe(self) -> list[Metric]:
        # Nothing is read at registration: the registry then asks collect()
        # only when scraped.
        return []

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        counts = self._counts()
        if counts is not None:
            yield from _counters(counts, CounterMetricFamily)
        health = self.health()
        if health is not None:
            yield from _gauges(health, GaugeMetricFamily)

    def health(self) -> Health | None:
        """The health figures kept, made again when older than ``max_age``
        (waiting ``wait`` seconds for them); ``None`` before the first are
        made, or while the store cannot be read."""
        with self._lock:
            stale = self._clock() - self._made >= self._max_age
            making = self._making
            if stale and making is None:
                making = self._making = threading.Thread(
                    target=self._make, name="sitemap-health", daemon=True
                )
                making.start()
        if making is not None:
            making.join(self._wait)
        return self._health

    def _make(self) -> None:
        try:
            health = site_health(self._source, self._config, now=self._clock())
        except StoreError as exc:
            if not self._failed:
                logger.warning("the sitemap's health could not be read: %s", exc)
            self._failed = True
            health = None
        except Exception:
            logger.exception("the sitemap's health report failed")
            health = None
        with self._lock:
            if health is not None:
                self._health, self._made, self._failed = health, self._clock(), False
            self._making = None

    def _counts(self) -> dict[str, int] | None:
        source = self._source
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


def _counters(counts: Mapping[str, int], family: Any) -> Iterator[Metric]:
    grouped: dict[str, Any] = {}
    for (group, reason), value in sorted(by_group(Counter(counts)).items()):
        if not group:
            yield family(
                f"{PREFIX}_{reason}", f"Pages {reason}, site-wide.", value=value
            )
            continue
        if group not in grouped:
            grouped[group] = family(
                f"{PREFIX}_{group}",
                f"Responses {group}, site-wide, by reason.",
                labels=["reason"],
            )
        grouped[group].add_metric([reason], value)
    yield from grouped.values()


def _gauges(health: Health, family: Any) -> Iterator[Metric]:
    listed = family(f"{PREFIX}_urls", "URLs listed, by section.", labels=["section"])
    fetched = family(
        f"{PREFIX}_fetched_urls",
        "Listed URLs a verified crawler fetched within the window, by section "
        "and engine (engine '': any).",
        labels=["section", "engine", "window"],
    )
    never = family(
        f"{PREFIX}_never_fetched_urls",
        "Listed URLs no verified crawler's fetch of is kept, by section.",
        labels=["section"],
    )
    stale = family(
        f"{PREFIX}_stale_urls",
        "Listed URLs no client was served for stale_after seconds, by section.",
        labels=["section"],
    )
    ages = family(
        f"{PREFIX}_lastmod_urls",
        "Listed URLs by the age of their lastmod, by section.",
        labels=["section", "age"],
    )
    for section in health.sections:
        name = section.label
        listed.add_metric([name], section.listed)
        for window in section.fetched:
            days = f"{window.days}d"
            fetched.add_metric([name, "", days], window.urls)
            for engine in health.engines:
                fetched.add_metric([name, engine, days], window.engines.get(engine, 0))
        never.add_metric([name], section.never_fetched)
        stale.add_metric([name], section.stale)
        for age in ("undated", "week", "month", "year", "older"):
            ages.add_metric([name, age], getattr(section.lastmods, age))
    yield listed
    if health.crawls_kept:
        yield fetched
        yield never
        yield stale
        yield family(
            f"{PREFIX}_unlisted_fetched_urls",
            "Pages verified crawlers fetched with a 200 that the sitemap lacks.",
            value=health.unlisted,
        )
        documents = family(
            f"{PREFIX}_document_fetched_timestamp_seconds",
            "When each engine's verified crawler last fetched a sitemap document "
            "(the index, a part, robots.txt).",
            labels=["engine"],
        )
        newest: dict[str, float] = {}
        for fetch in health.documents:
            newest.setdefault(fetch.engine, fetch.at.timestamp())
        for engine, at in sorted(newest.items()):
            documents.add_metric([engine], at)
        yield documents
    yield ages
    if health.unrouted is not None:
        yield family(
            f"{PREFIX}_unrouted_routes",
            "The app's page routes of which the sitemap lists no URL.",
            value=len(health.unrouted),
        )
    yield family(
        f"{PREFIX}_health_timestamp_seconds",
        "When the health figures were made.",
        value=health.made.timestamp(),
    )
