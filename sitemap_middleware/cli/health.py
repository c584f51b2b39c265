"""The commands that say how the sitemap stands, changing nothing: explain (one
URL: listed or not, and why) and report (the health of every section).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import click

from .. import render
from ..config import Config
from ..model import Entry
from ..paths import PART
from ..stores import Store
from ..stores.contract import Decisions, Visits
from ..urls import canonical_target
from ..visible import visible
from .options import Target, common_options
from .site import Exit, Number, any_query, fail, stamp

if TYPE_CHECKING:
    from ..routes import Route


@click.command()
@common_options
@click.argument("url")
def explain(target: Target, url: str) -> None:
    """Whether URL is listed (its part, lastmod, route, title) and, if
    not, why: the rule of the current config that refuses it or, with the
    app, the rule its answer to an anonymous GET falls under (the app is
    asked, beneath the middleware: nothing is recorded); then the last
    decisions the writers recorded for it."""
    from ..sections import label
    from .report import visit_lines
    from .verdict import NOT_REFUSED, answered, kept_out, refusal

    with target.judged() as judged:
        config, store = judged.config, judged.store
        asked = canonical_target(url, config.base_url, "/", any_query(url))
        if asked is None:
            fail(f"{url} is not a URL under {config.base_url}", Exit.USAGE)
        stored = canonical_target(url, config.base_url, "/", config.query)
        assert stored is not None
        found = _find(store, stored)
        route = judged.route(asked.partition("?")[0])
        recent: list[tuple[str, datetime]] = []
        if isinstance(store, Decisions):
            recent = store.decisions(stored.partition("?")[0])
        why_not = None
        # The body's rules (noindex, a canonical elsewhere) are the
        # writers': their last decision says which kept it out.
        last = kept_out([decision for decision, _ in recent])
        if found is None:
            why_not = refusal(config, asked, route)
            if why_not is None and judged.answer is not None:
                # The response's rules are the watcher's, applied on the
                # request path and counted, never logged per page: ask the
                # app what it answers a crawler now (only a URL the config
                # does not refuse is requested, as seed does).
                status, headers = judged.answer(stored)
                why_not = (
                    answered(config, status, headers, stored)
                    or last
                    or (
                        f"no rule of the config refuses it, and it answers an "
                        f"anonymous GET with {status} as a public page; it is "
                        "listed once it answers a visitor (or seed)"
                    )
                )
        section = _section(config, store, found, stored, route)
        visits = list(store.visits([stored])) if isinstance(store, Visits) else None
    click.echo(f"{config.base_url}{stored}")
    if asked != stored:
        click.echo(f"  asked for: {config.base_url}{asked}")
        click.echo(f"  query: {refusal(config, asked, route)}")
    if found is not None:
        part, entry = found
        click.echo(f"  listed: yes, in part {part} ({PART.build(part)})")
        click.echo(f"  lastmod: {stamp(entry) or 'none'}")
        click.echo(f"  route: {entry.route or 'unknown'}")
        # Visible text: a row of an earlier release may hold controls.
        title = visible(getattr(entry, "title", None) or "")
        if title:
            click.echo(f"  title: {title}")
    else:
        click.echo("  listed: no")
        if route is not None and route.template is not None:
            click.echo(f"  route: {route.template}")
        click.echo(f"  why: {why_not or last or NOT_REFUSED}")
    click.echo(f"  section: {label(section)}")
    if visits is None:
        click.echo("  visits: not kept by this store")
    else:
        for line in visit_lines(visits):
            click.echo(line)
    for decision, when in recent[-5:]:
        click.echo(f"  decided {render.w3c_datetime(when)}: {decision}")
    if found is None:
        sys.exit(Exit.PROBLEMS)


@click.command()
@common_options
@click.option(
    "--stale-after",
    type=Number(),
    metavar="DAYS",
    help="Days served to no one after which a listed URL is stale; "
    "default: the config's stale_after (30 days).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def report(target: Target, stale_after: float | None, as_json: bool) -> None:
    """The sitemap's health, per section: the URLs listed, how many a
    verified crawler fetched in the last 7 and 30 days, those never
    fetched, how old their lastmods are, those served to no one for a
    while (stale); then the app's routes with no URL listed, the pages
    crawlers fetched that the sitemap lacks, each with why, and when each
    engine last read the sitemap. The sections, the routes and the
    reasons are the app's (give --app)."""
    from ..reporting.health import DAY, site_health
    from .report import as_json as health_json
    from .report import lines

    with target.judged() as judged:
        config = judged.config
        seconds = None if stale_after is None else stale_after * DAY
        # The middleware, when known, tells the app's routes too.
        health = site_health(
            judged.sitemap or judged.store,
            config,
            stale_after=seconds,
            route_of=judged.route,
        )
    if as_json:
        words = health_json(health, config, judged.route)
        click.echo(json.dumps(words, indent=2))
        return
    for line in lines(health, config, judged.route):
        click.echo(line)


def _section(
    config: Config,
    store: Store,
    found: tuple[int, Entry] | None,
    path: str,
    route: Route | None,
) -> str:
    """A page's section: its part's when listed, else the config's for it."""
    if found is not None:
        part = store.part(found[0])
        if part is not None:
            return part.section
    template = None if route is None else route.template
    return config.sections.of(path, template)


def _find(store: Store, path: str) -> tuple[int, Entry] | None:
    """The part and entry of a stored path (read a part at a time)."""
    if not store.known([path]):
        return None
    for part in store.parts():
        for entry in store.entries(part.number):
            if entry.path == path:
                return part.number, entry
    return None
