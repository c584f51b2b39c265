"""The commands that load the app: seed, verify, prune and explain, each request
sent through the app in process, and report, which reads the app's config
(``app_commands``; ``flask sitemap`` has them too).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import render
from ..config import DEFAULT_STORE, Config
from ..errors import ConfigError, StoreError
from ..model import Entry
from ..paths import PART
from ..stores import Store, open_store
from ..stores.base import Decisions, Shared, Visits
from ..urls import canonical_target
from ..visible import visible
from .site import (
    BRAKE_SHARE,
    BRAKE_URLS,
    Exit,
    Number,
    any_query,
    check_exists,
    fail,
    hinted,
    opened,
    plural,
    progress,
    site_listing,
    stamp,
)

if TYPE_CHECKING:
    from ..recording.recheck import Judge
    from ..routes import Route
    from .held import Held
    from .replay import Answer, Replay

T = TypeVar("T")


AppSource = Callable[[str | None], object | None]
"""From the ``--app`` option's value (``None``: not given): the app, if any."""


def load_app(spec: str | None) -> object | None:
    if spec is None:
        return None
    from .replay import AppError, load

    try:
        return load(spec)
    except AppError as exc:
        fail(str(exc), Exit.APP)


# Where --site leaves its value for _replayed and _judged (click's meta,
# shared by the command's contexts).
SITE_KEY = "sitemap_middleware.site"


def _overrides(command: Callable[..., Any]) -> Any:
    command = click.option(
        "--site",
        envvar="SITEMAP_SITE",
        expose_value=False,
        callback=lambda context, _, value: context.meta.__setitem__(SITE_KEY, value),
        help="A site of the config's 'sites': its name; default: the first"
        " (env SITEMAP_SITE).",
    )(command)
    command = click.option(
        "--base-url",
        envvar="SITEMAP_BASE_URL",
        help="The site's public URL; default: the app's config (env SITEMAP_BASE_URL).",
    )(command)
    return click.option(
        "--store",
        "store_uri",
        envvar="SITEMAP_STORE",
        help="The store URI; default: the app's config, else "
        f"{DEFAULT_STORE} (env SITEMAP_STORE).",
    )(command)


def _json_option(command: Callable[..., Any]) -> Any:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="One JSON object on stdout: the totals, and each URL acted on with "
        "its action and reason.",
    )(command)


def _removal_options(command: Callable[..., Any]) -> Any:
    """``--dry-run``, ``--check`` and ``--yes`` of the commands that remove."""
    command = click.option(
        "--yes",
        "-y",
        is_flag=True,
        help=f"Remove without asking, even more than {BRAKE_SHARE:.0%} of the store.",
    )(command)
    command = click.option(
        "--check",
        is_flag=True,
        help="Change nothing; exit 1 if a URL would be removed (for CI).",
    )(command)
    return click.option(
        "--dry-run",
        is_flag=True,
        help="Print what would be removed, and why; change nothing.",
    )(command)


def _brake(removing: int, stored: int, yes: bool) -> None:
    """Go on only when removing ``removing`` of ``stored`` URLs is small
    (:data:`BRAKE_SHARE`, :data:`BRAKE_URLS`), given ``--yes``, or confirmed
    on a terminal; else stop with :attr:`Exit.REFUSED`, nothing removed."""
    if yes or removing <= BRAKE_URLS or removing <= stored * BRAKE_SHARE:
        return
    what = (
        f"this would remove {removing:,} of the {plural(stored, 'URL')} stored "
        f"({removing / max(stored, 1):.0%})"
    )
    if sys.stdin.isatty() and sys.stderr.isatty():
        if click.confirm(f"{what}. Remove them?", err=True):
            return
        fail("nothing removed", Exit.REFUSED)
    fail(
        f"{what}: nothing removed; see them with --dry-run, remove them with --yes",
        Exit.REFUSED,
    )


@dataclass(frozen=True, slots=True)
class Acted:
    """A URL a command acted on (or would), as its output says it."""

    url: str
    action: str
    reason: str | None = None

    def line(self) -> str:
        words = self.action.replace("_", " ")
        return f"{words}: {self.url}" + (f": {self.reason}" if self.reason else "")


def _report(
    acted: Iterable[Acted], totals: dict[str, Any], as_json: bool, indent: str = ""
) -> None:
    """The URLs acted on, a line each; or with ``--json`` one object: the
    totals and ``urls``, each with its action and reason."""
    rows = list(acted)
    if as_json:
        urls = [{"url": a.url, "action": a.action, "reason": a.reason} for a in rows]
        click.echo(json.dumps({**totals, "urls": urls}, indent=2))
        return
    for row in rows:
        click.echo(f"{indent}{row.line()}")


@dataclass(frozen=True, slots=True)
class Judged:
    """What prune and explain need: the config, its store and its judge, and
    the app's route of a path when the app is known."""

    config: Config
    store: Store
    judge: Judge
    route: Callable[[str], Route | None]
    answer: Callable[[str], Answer] | None = None
    """What the app beneath the middleware answers an anonymous GET of a
    path (nothing recorded), when the app is known."""
    sitemap: object | None = None
    """The app's middleware, when the app is known (its route table)."""


@contextmanager
def _replayed(
    app: object,
    store_uri: str | None,
    base_url: str | None,
    *,
    existing: bool,
    limited: bool = True,
    hold: Callable[[Config], Config] | None = None,
) -> Iterator[Replay]:
    from .replay import AppError, replay

    try:
        site = click.get_current_context().meta.get(SITE_KEY)
        with replay(app, store_uri, base_url, limited, hold, site) as ready:
            store = ready.sitemap.config.store
            if existing and isinstance(store, str):
                check_exists(store)
            yield ready
    except AppError as exc:
        fail(str(exc), Exit.APP)
    except ConfigError as exc:
        fail(hinted(exc, store_uri), Exit.USAGE)
    except StoreError as exc:
        fail(f"the store failed: {exc}", Exit.STORE)


@contextmanager
def _judged(
    app: object | None, store_uri: str | None, base_url: str | None
) -> Iterator[Judged]:
    if app is not None:
        with _replayed(app, store_uri, base_url, existing=True) as ready:
            sitemap = ready.sitemap
            yield Judged(
                sitemap.config,
                sitemap.store,
                sitemap.judge,
                ready.route,
                ready.answer,
                sitemap,
            )
        return
    if base_url is None:
        fail("give --app, or --base-url (and --store)", Exit.USAGE)
    from ..recording.recheck import ConfigJudge
    from ..routes import Routes
    from ..watching.policy import Policy

    store_uri = store_uri or DEFAULT_STORE
    name = click.get_current_context().meta.get(SITE_KEY)
    if name:  # the site's listing, as the store commands' --site names it
        store_uri = site_listing(store_uri, name)
    with opened(store_uri, base_url, existing=True) as site:
        config = site.config
        judge = ConfigJudge(config, Policy(config), Routes(config).resolve)
        yield Judged(config, site.store, judge, lambda path: None)


class _Holding:
    """The held store of a verify run (``cli.held``), made when the replay
    knows its config: the store the config names, opened here, kept open
    until the run is decided and applied."""

    def __init__(self, writes: bool) -> None:
        self.writes = writes
        self.held: Held | None = None
        self._opened: Store | None = None

    def __call__(self, config: Config) -> Config:
        from .held import held

        store = config.store
        if isinstance(store, str):
            check_exists(store)
            store = self._opened = open_store(store)
        self.held = held(store, self.writes)
        return replace(config, store=self.held)

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()


def _why_removed(
    config: Config,
    store: Store,
    path: str,
    answer: Answer | None,
    route: Route | None,
) -> str:
    """Why a stored page goes, in explain's words: the rule of the config
    that refuses it (the re-check), else the rule its answer falls under,
    else what the writer decided from its body."""
    from .verdict import answered, decided, refusal

    words = refusal(config, path, route)
    if words is None and answer is not None:
        status, headers = answer
        words = answered(config, status, headers, path)
    if words is None and isinstance(store, Decisions):
        noted = store.decisions(path.partition("?")[0])
        if noted:
            words = decided(noted[-1][0])
    if words is None and answer is not None:
        words = f"it answers an anonymous GET with {answer[0]}"
    return words or "more than the caps allow (max_urls, a route's max_urls)"


def app_commands(source: AppSource, with_option: bool) -> list[click.Command]:
    """``seed``, ``verify``, ``prune``, ``explain`` and ``report``;
    ``with_option``: they take ``--app`` (the ``flask sitemap`` group knows its
    app)."""

    def app_option(required: bool) -> Callable[[Callable[..., Any]], Any]:
        def decorate(command: Callable[..., Any]) -> Any:
            if not with_option:
                return command
            return click.option(
                "--app",
                "app_spec",
                metavar="MODULE:ATTR",
                envvar="SITEMAP_APP",
                required=required,
                help="The app: a Flask, Starlette or FastAPI app, a factory "
                "(called with no arguments) or the sitemap middleware "
                "(env SITEMAP_APP).",
            )(command)

        return decorate

    @click.command()
    @app_option(required=True)
    @_overrides
    @_json_option
    def seed(
        store_uri: str | None,
        base_url: str | None,
        as_json: bool,
        app_spec: str | None = None,
    ) -> None:
        """Request the app's pages in process (GET routes without parameters,
        and the pages @sitemap(params=...) lists) and record those that answer
        as public pages. Pages the config refuses (excluded paths and routes,
        the middleware's own, framework pages) are never requested; pages
        already stored are left as they are. Each page not recorded is named
        with the reason."""
        from .verdict import said

        problems = 0
        refused: dict[str, str] = {}
        app = source(app_spec)
        # Not limited by new_urls_per_minute: the URLs are the app's own.
        with _replayed(
            app, store_uri, base_url, existing=False, limited=False
        ) as ready:
            store = ready.sitemap.store
            config = ready.sitemap.config
            paths: dict[str, str] = {}
            try:
                for template, path in ready.seeds():
                    target = None if path is None else ready.target(path)
                    if target is None:
                        problems += 1
                        what = path or "a parameter without a value"
                        click.echo(
                            f"skipped {template}: {what} names no URL of the site",
                            err=True,
                        )
                    elif target in paths or target in refused:
                        continue
                    else:
                        # Asked before the request: a GET the config refuses
                        # is never recorded, and may act (/auth/logout).
                        found = ready.refused(template, target)
                        if found is None:
                            paths[target] = template
                        else:
                            rule, route = found
                            refused[target] = said(
                                rule, config, target.partition("?")[0], route
                            )
            except Exception as exc:  # the app's own generator
                fail(f"listing the pages of the app failed: {exc!r}", Exit.APP)
            listed = store.known(paths)
            asked = [path for path in paths if path not in listed]
            answers: dict[str, Answer] = {}
            with progress(asked, "seeding", len(asked)) as bar:
                for path in bar:
                    answers[path] = ready.get(path)
            ready.sitemap.flush(None)
            counts = ready.sitemap.stats()
            recorded = store.known(asked)
            base = config.base_url
            acted = [
                Acted(f"{base}{path}", "not_requested", why_not)
                for path, why_not in refused.items()
            ]
            for path in asked:
                if path in recorded:
                    continue
                served = ready.route(path.partition("?")[0])
                why_not = _why_removed(config, store, path, answers[path], served)
                acted.append(Acted(f"{base}{path}", "not_recorded", why_not))
        totals: dict[str, Any] = {
            "requested": len(asked),
            "already_listed": len(listed),
            "refused": len(refused),
            "recorded": len(recorded),
        }
        if as_json:
            recorded_rows = [
                Acted(f"{base}{p}", "recorded") for p in asked if p in recorded
            ]
            _report([*recorded_rows, *acted], totals, True)
        else:
            click.echo(
                f"requested {plural(len(asked), 'page')} ({len(listed):,} already "
                f"listed, left as they are; {len(refused):,} refused by the "
                f"config, not requested); recorded {len(recorded):,}"
            )
            _report(acted, totals, False, indent="  ")
            for group in ("skipped", "dropped"):
                for reason, number in sorted(counts[group].items()):
                    click.echo(f"  {group} {reason}: {number:,}")
        if problems:
            sys.exit(Exit.PROBLEMS)

    @click.command()
    @app_option(required=True)
    @_overrides
    @_removal_options
    @_json_option
    def verify(
        store_uri: str | None,
        base_url: str | None,
        dry_run: bool,
        check: bool,
        yes: bool,
        as_json: bool,
        app_spec: str | None = None,
    ) -> None:
        """Request every stored URL in process, as stored; those that no longer
        answer as public pages (404, 410, 301, 308, 401, noindex, a redirect
        to a login page) are removed by the middleware's own rules, each named
        with the reason. Nothing is removed before the whole store is
        verified; a run that would remove more than a tenth of it asks first
        (or needs --yes). A URL the config refuses is never requested (its GET
        may have side effects): it goes by the config's rule, as prune
        removes it."""
        from ..recording.refusal import refuse

        preview = dry_run or check
        holding = _Holding(writes=not preview)
        app = source(app_spec)
        try:
            with _replayed(
                app, store_uri, base_url, existing=True, hold=holding
            ) as ready:
                held = holding.held
                assert held is not None
                paths = [
                    entry.path
                    for part in held.parts()
                    for entry in held.entries(part.number)
                ]
                answers: dict[str, Answer] = {}
                sitemap = ready.sitemap
                config, policy = sitemap.config, sitemap.policy
                with progress(paths, "verifying", len(paths)) as bar:
                    for path in bar:
                        bare, _, query = path.partition("?")
                        route = ready.route(bare) or sitemap.routes.unknown
                        if refuse(policy, config.base_url, bare, query, route):
                            held.remove([path])
                            continue
                        answers[path] = ready.get(path)
                ready.sitemap.flush(None)
                removed = list(held.removed)
                action = "would_remove" if preview else "removed"
                acted = [
                    Acted(
                        f"{config.base_url}{path}",
                        action,
                        _why_removed(
                            config,
                            held,
                            path,
                            answers.get(path),
                            ready.route(path.partition("?")[0]),
                        ),
                    )
                    for path in removed
                ]
            if not preview:
                if removed:
                    _brake(len(removed), len(paths), yes)
                try:
                    held.apply(config.indexnow is not None)
                except StoreError as exc:
                    fail(f"the store failed: {exc}", Exit.STORE)
        finally:
            holding.close()
        totals = {
            "verified": len(paths),
            ("would_remove" if preview else "removed"): len(removed),
            "changed": not preview,
        }
        _report(acted, totals, as_json)
        if not as_json:
            done = "would be removed (nothing changed)" if preview else "removed"
            verified = plural(len(paths), "URL")
            click.echo(f"verified {verified}: {len(removed):,} {done}")
        if check and removed:
            sys.exit(Exit.PROBLEMS)

    @click.command()
    @app_option(required=False)
    @_overrides
    @_removal_options
    @_json_option
    def prune(
        store_uri: str | None,
        base_url: str | None,
        dry_run: bool,
        check: bool,
        yes: bool,
        as_json: bool,
        app_spec: str | None = None,
    ) -> None:
        """Apply the current config to what is stored, now: what it refuses is
        removed (excluded paths and routes, queries no longer kept, lowered
        caps), each named with the reason; changed changefreq and priority
        rewritten. Nothing is removed before every URL is checked; a run that
        would remove more than a tenth of the store asks first (or needs
        --yes)."""
        from ..recording.recheck import SETTING, Recheck, config_digest
        from .held import held

        preview = dry_run or check
        with _judged(source(app_spec), store_uri, base_url) as judged:
            if not isinstance(judged.store, Shared):
                fail(
                    f"{type(judged.store).__name__} keeps no settings: it cannot "
                    "be pruned",
                    Exit.STORE,
                )
            store = held(judged.store, writes=not preview)
            # Forget the digest: the pass runs whatever the store says it
            # followed, and stores the current one once done (both held
            # until the removals are made).
            assert isinstance(store, Shared)
            store.set_setting(SETTING, "")
            recheck = Recheck(store, judged.judge, config_digest(judged.config))
            rewritten = 0
            while not recheck.done:
                _, changed = recheck.step()
                rewritten += changed
            config = judged.config
            removed = list(store.removed)
            action = "would_remove" if preview else "removed"
            acted = [
                Acted(
                    f"{config.base_url}{path}",
                    action,
                    _why_removed(config, judged.store, path, None, judged.route(path)),
                )
                for path in removed
            ]
            if not preview:
                if removed:
                    _brake(len(removed), recheck.checked, yes)
                store.apply(config.indexnow is not None)
        would = "would be " if preview else ""
        totals = {
            "checked": recheck.checked,
            ("would_remove" if preview else "removed"): len(removed),
            ("would_rewrite" if preview else "rewritten"): rewritten,
            ("would_move" if preview else "moved"): recheck.moved,
            "changed": not preview,
        }
        _report(acted, totals, as_json)
        if not as_json:
            click.echo(
                f"checked {plural(recheck.checked, 'URL')}: {len(removed):,} "
                f"{would}removed, {rewritten:,} {would}rewritten"
                + (
                    f", {recheck.moved:,} {would}moved to their section's part"
                    if recheck.moved
                    else ""
                )
                + (" (nothing changed)" if preview else "")
            )
        if check and removed:
            sys.exit(Exit.PROBLEMS)

    @click.command()
    @app_option(required=False)
    @_overrides
    @click.argument("url")
    def explain(
        store_uri: str | None,
        base_url: str | None,
        url: str,
        app_spec: str | None = None,
    ) -> None:
        """Whether URL is listed (its part, lastmod, route, title) and, if
        not, why: the rule of the current config that refuses it or, with the
        app, the rule its answer to an anonymous GET falls under (the app is
        asked, beneath the middleware: nothing is recorded); then the last
        decisions the writers recorded for it."""
        from ..sections import label
        from .report import visit_lines
        from .verdict import NOT_REFUSED, answered, kept_out, refusal

        with _judged(source(app_spec), store_uri, base_url) as judged:
            config, store = judged.config, judged.store
            target = canonical_target(url, config.base_url, "/", any_query(url))
            if target is None:
                fail(f"{url} is not a URL under {config.base_url}", Exit.USAGE)
            stored = canonical_target(url, config.base_url, "/", config.query)
            assert stored is not None
            found = _find(store, stored)
            route = judged.route(target.partition("?")[0])
            recent: list[tuple[str, datetime]] = []
            if isinstance(store, Decisions):
                recent = store.decisions(stored.partition("?")[0])
            why_not = None
            # The body's rules (noindex, a canonical elsewhere) are the
            # writers': their last decision says which kept it out.
            last = kept_out([decision for decision, _ in recent])
            if found is None:
                why_not = refusal(config, target, route)
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
        if target != stored:
            click.echo(f"  asked for: {config.base_url}{target}")
            click.echo(f"  query: {refusal(config, target, route)}")
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
    @app_option(required=False)
    @_overrides
    @click.option(
        "--stale-after",
        type=Number(),
        metavar="DAYS",
        help="Days served to no one after which a listed URL is stale; "
        "default: the config's stale_after (30 days).",
    )
    @click.option("--json", "as_json", is_flag=True, help="One JSON object.")
    def report(
        store_uri: str | None,
        base_url: str | None,
        stale_after: float | None,
        as_json: bool,
        app_spec: str | None = None,
    ) -> None:
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

        with _judged(source(app_spec), store_uri, base_url) as judged:
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

    return [seed, verify, prune, explain, report]


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
