"""The commands that change the pages with the app's rules: seed records the app's
pages, verify and prune remove what it no longer answers or the config refuses
(a whole run decided first, then braked).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

from ..config import Config
from ..errors import StoreError
from ..stores import Store, open_store
from ..stores.contract import Decisions, Shared
from .options import Target, common_options
from .site import (
    BRAKE_SHARE,
    BRAKE_URLS,
    Exit,
    fail,
    plural,
    progress,
)

if TYPE_CHECKING:
    from ..routes import Route
    from .held import Held
    from .replay import Answer


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


def _removals(
    config: Config, removed: list[str], preview: bool, why: Callable[[str], str]
) -> list[Acted]:
    """The removed paths (or, in a preview, those that would be) as verify
    and prune say them, each with ``why``."""
    action = "would_remove" if preview else "removed"
    return [Acted(f"{config.base_url}{path}", action, why(path)) for path in removed]


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


class _Holding:
    """The held store of a verify run (``cli.held``), made when the replay
    knows its config (a ``Hold``): the store the app's middleware opened for
    it, whose removals settle the other sites' hreflang clusters as the
    middleware's own do; else (another ``--store``) the store the config
    names, opened here; kept open until the run is decided and applied."""

    def __init__(self, writes: bool) -> None:
        self.writes = writes
        self.held: Held | None = None
        self._opened: Store | None = None

    def __call__(self, config: Config, own: Store | None) -> Config:
        from .held import held

        store = own if own is not None else config.store
        if isinstance(store, str):
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


# Why seed requests no page of a route with parameters that lists none.
UNLISTED = "a route with parameters: @sitemap(params=...) lists its pages"


@click.command()
@common_options
@_json_option
def seed(target: Target, as_json: bool) -> None:
    """Request the app's pages in process (GET routes without parameters,
    and the pages @sitemap(params=...) lists) and record those that answer
    as public pages. Pages the config refuses (excluded paths and routes,
    the middleware's own, framework pages) are never requested; pages
    already stored are left as they are. Each page not recorded is named
    with the reason."""
    from .verdict import said

    problems = 0
    refused: dict[str, str] = {}
    # Not limited by new_urls_per_minute: the URLs are the app's own.
    with target.replayed(existing=False, limited=False) as ready:
        store = ready.sitemap.store
        config = ready.sitemap.config
        paths: dict[str, str] = {}
        try:
            for template, path in ready.seeds():
                spelled = None if path is None else ready.target(path)
                if spelled is None:
                    problems += 1
                    what = path or "a parameter without a value"
                    click.echo(
                        f"skipped {template}: {what} names no URL of the site",
                        err=True,
                    )
                elif spelled in paths or spelled in refused:
                    continue
                else:
                    # Asked before the request: a GET the config refuses
                    # is never recorded, and may act (/auth/logout).
                    found = ready.refused(template, spelled)
                    if found is None:
                        paths[spelled] = template
                    else:
                        rule, route = found
                        refused[spelled] = said(
                            rule, config, spelled.partition("?")[0], route
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
        unlisted = ready.unlisted()
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
        # Route templates, not URLs: no page of them is known to request.
        "routes_without_params": unlisted,
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
        # Each page not recorded has its line, its reason in words (the
        # counters' codes would call a redirect to a login page "gone").
        _report(acted, totals, False, indent="  ")
        for template in unlisted:
            click.echo(f"  not requested: {template}: {UNLISTED}")
    if problems:
        sys.exit(Exit.PROBLEMS)


@click.command()
@common_options
@_removal_options
@_json_option
def verify(
    target: Target, dry_run: bool, check: bool, yes: bool, as_json: bool
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
    try:
        with target.replayed(existing=True, hold=holding) as ready:
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
                        # Never pushed: the config refuses it (cli.held).
                        with held.withdrawing():
                            held.remove([path])
                        continue
                    answers[path] = ready.get(path)
            ready.sitemap.flush(None)
            removed = list(held.removed)
            acted = _removals(
                config,
                removed,
                preview,
                lambda path: _why_removed(
                    config,
                    held,
                    path,
                    answers.get(path),
                    ready.route(path.partition("?")[0]),
                ),
            )
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
@common_options
@_removal_options
@_json_option
def prune(target: Target, dry_run: bool, check: bool, yes: bool, as_json: bool) -> None:
    """Apply the current config to what is stored, now: what it refuses is
    removed (excluded paths and routes, queries no longer kept, lowered
    caps), each named with the reason; changed changefreq and priority
    rewritten. Nothing is removed before every URL is checked; a run that
    would remove more than a tenth of the store asks first (or needs
    --yes)."""
    from ..recording.recheck import SETTING, Recheck, config_digest
    from .held import held

    preview = dry_run or check
    with target.judged(writes=True) as judged:
        if not isinstance(judged.store, Shared):
            fail(
                f"{type(judged.store).__name__} keeps no settings: it cannot be pruned",
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
        acted = _removals(
            config,
            removed,
            preview,
            lambda path: _why_removed(
                config, judged.store, path, None, judged.route(path)
            ),
        )
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
