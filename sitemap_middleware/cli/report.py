"""The health report as ``sitemap-middleware report`` shows it: readable lines, or
one JSON object (``--json``); why each page crawlers fetch is not listed, in
explain's words (``verdict.py``); and a page's visits, as ``explain`` shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .. import render
from ..config import Config
from ..model import to_datetime
from ..recording.refusal import Refusal
from ..reporting.health import DAY, Fetched, Health, SectionHealth, Unlisted
from ..routes import Route, Routes
from ..stores.contract import Visit
from .site import plural
from .verdict import decided, said

UNEXPLAINED_WORDS = (
    "no rule of the config refuses it and no writer decided about it lately: "
    "its response is skipped as it is served (its status or headers; "
    "explain --app URL asks the app)"
)


RouteOf = Callable[[str], Route | None]


def _unknown(path: str) -> Route | None:
    return None


def why(unlisted: Unlisted, config: Config, route_of: RouteOf = _unknown) -> str:
    """Why a page crawlers fetch is not listed, in explain's words."""
    if unlisted.source == "config":
        refused = Refusal(unlisted.reason, unlisted.detail)
        path = unlisted.path.partition("?")[0]
        route = route_of(path) or Routes(config).unknown
        return said(refused, config, path, route)
    if unlisted.source == "writer":
        return f"the last time a writer read it: {decided(unlisted.reason)}"
    return UNEXPLAINED_WORDS


def _when(seconds: float) -> str:
    return render.w3c_datetime(to_datetime(seconds))


def _days(seconds: float) -> str:
    days = seconds / DAY
    return plural(int(days), "day") if days == int(days) else f"{days:g} days"


def _engines(window: Fetched) -> str:
    if not window.engines:
        return ""
    return " (" + ", ".join(f"{e} {n:,}" for e, n in window.engines.items()) + ")"


def lines(
    health: Health, config: Config, route_of: RouteOf = _unknown
) -> Iterator[str]:
    """The report as a person reads it."""
    yield f"Sitemap health of {config.base_url}, {render.w3c_datetime(health.made)}"
    sections = plural(len(health.sections), "section")
    yield f"{plural(health.listed, 'URL')} listed in {sections}"
    if not health.crawls_kept:
        yield (
            "crawl data: not kept by this store (no visits): which pages crawlers "
            "fetch, and when visitors last came, are unknown"
        )
    for section in health.sections:
        yield ""
        yield from _section(section, health)
    if health.unrouted is not None:
        yield ""
        yield f"routes with no URL listed: {len(health.unrouted):,}"
        for template in health.unrouted:
            yield f"  {template}"
    if not health.crawls_kept:
        return
    yield ""
    yield f"fetched by crawlers, not listed: {health.unlisted:,}"
    for page in health.unlisted_examples:
        engines = ", ".join(page.engines)
        last = render.w3c_datetime(page.last_fetched)
        yield f"  {config.base_url}{page.path} ({engines}, last {last})"
        yield f"    why: {why(page, config, route_of)}"
    yield ""
    if not health.documents:
        yield "sitemap documents: no verified crawler's fetch kept"
    else:
        yield "sitemap documents, last fetch by a verified crawler:"
        for fetch in health.documents:
            yield (
                f"  {fetch.engine}: {fetch.path} {render.w3c_datetime(fetch.at)}"
                f" ({fetch.status})"
            )


def _section(section: SectionHealth, health: Health) -> Iterator[str]:
    yield f"section {section.label}: {plural(section.listed, 'URL')}"
    if health.crawls_kept:
        week, month = section.within(7), section.within(30)
        yield (
            f"  fetched by a verified crawler: {week.urls:,} in 7 days"
            f"{_engines(week)}, {month.urls:,} in 30 days{_engines(month)}"
        )
        yield f"  never fetched: {section.never_fetched:,}"
        yield from _examples(section.never_fetched_examples, section.never_fetched)
    spread = section.lastmods
    yield (
        f"  lastmod: {spread.week:,} in the last 7 days, {spread.month:,} in 8 to "
        f"30 days, {spread.year:,} in 31 days to a year, {spread.older:,} older, "
        f"{spread.undated:,} undated"
    )
    if health.crawls_kept:
        yield (
            f"  stale (served to no one for {_days(health.stale_after)}): "
            f"{section.stale:,}"
        )
        yield from _examples(section.stale_examples, section.stale)


def _examples(paths: tuple[str, ...], count: int) -> Iterator[str]:
    for path in paths:
        yield f"    {path}"
    if count > len(paths):
        yield f"    ... and {count - len(paths):,} more"


def as_json(
    health: Health, config: Config, route_of: RouteOf = _unknown
) -> dict[str, Any]:
    """The report as one JSON object."""
    return {
        "base_url": config.base_url,
        "made": render.w3c_datetime(health.made),
        "crawls_kept": health.crawls_kept,
        "stale_after": health.stale_after,
        "listed": health.listed,
        "engines": list(health.engines),
        "sections": [_section_json(s) for s in health.sections],
        "unrouted": None if health.unrouted is None else list(health.unrouted),
        "unlisted": health.unlisted,
        "unlisted_examples": [
            {
                "url": f"{config.base_url}{page.path}",
                "engines": list(page.engines),
                "last_fetched": render.w3c_datetime(page.last_fetched),
                "source": page.source,
                "reason": page.reason,
                "detail": page.detail,
                "why": why(page, config, route_of),
            }
            for page in health.unlisted_examples
        ],
        "documents": [
            {
                "path": fetch.path,
                "engine": fetch.engine,
                "at": render.w3c_datetime(fetch.at),
                "status": fetch.status,
            }
            for fetch in health.documents
        ],
    }


def _section_json(section: SectionHealth) -> dict[str, Any]:
    spread = section.lastmods
    return {
        "name": section.name,
        "label": section.label,
        "listed": section.listed,
        "fetched": {
            f"{w.days}d": {"urls": w.urls, "engines": dict(w.engines)}
            for w in section.fetched
        },
        "never_fetched": section.never_fetched,
        "never_fetched_examples": list(section.never_fetched_examples),
        "lastmod": {
            "undated": spread.undated,
            "week": spread.week,
            "month": spread.month,
            "year": spread.year,
            "older": spread.older,
        },
        "stale": section.stale,
        "stale_examples": list(section.stale_examples),
    }


def visit_lines(visits: Iterable[Visit]) -> Iterator[str]:
    """A page's kept visits as explain shows them: when it was last served,
    then each engine's last verified fetch and its status."""
    by_agent: Mapping[str, Visit] = {v.agent: v for v in visits}
    served = by_agent.get("")
    yield f"  last served: {_when(served.at) if served else 'never, as far as kept'}"
    engines = sorted(agent for agent in by_agent if agent)
    if not engines:
        yield "  fetched by a verified crawler: never, as far as kept"
    for engine in engines:
        visit = by_agent[engine]
        yield f"  fetched by {engine}: {_when(visit.at)} ({visit.status})"
