"""The ``sitemap-middleware`` command line (also ``python -m sitemap_middleware``):
look into a store, list and remove its URLs, export the sitemap as files and import
one from elsewhere; with the app, seed, verify, prune and explain its pages (also
``flask sitemap ...``). Exit codes are in :class:`Exit`.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from enum import IntEnum
from typing import Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

import click

from .. import render
from ..config import DEFAULT_STORE, Config
from ..errors import ConfigError, StoreError
from ..model import Entry, PartInfo, dated
from ..paths import INDEX, PART, TEXT_INDEX, TEXT_PART
from ..recording.recheck import SETTING, ConfigJudge, Judge, Recheck, config_digest
from ..routes import Route, Routes
from ..serving.server import Server
from ..stores import Store, batches, open_store
from ..stores.base import Decisions, Shared, Snapshot
from ..urls import canonical_target
from ..visible import visible
from ..watching.policy import Policy
from .replay import Answer, AppError, Replay, load, replay
from .verdict import NOT_REFUSED, answered, decided, refusal, said

T = TypeVar("T")


class Exit(IntEnum):
    """What a script may rely on: the command's exit status."""

    OK = 0
    PROBLEMS = 1
    """Done, but some input was refused or not found (each one reported)."""
    USAGE = 2
    """A bad option, store URI or URL (click's own code for usage errors)."""
    STORE = 3
    """The store could not be opened or reached."""
    SOURCE = 4
    """The source to import could not be read."""
    APP = 5
    """The app could not be imported or built, holds no sitemap middleware, or
    failed while its pages were listed."""


def _fail(message: str, code: Exit) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


@dataclass(frozen=True, slots=True)
class Site:
    """What a store command works on: the checked config and its store."""

    config: Config
    store: Store

    def url(self, path: str) -> str:
        return f"{self.config.base_url}{path}"


def _site_options(needs_base_url: bool) -> Callable[[Callable[..., Any]], Any]:
    def decorate(command: Callable[..., Any]) -> Any:
        command = click.option(
            "--base-url",
            envvar="SITEMAP_BASE_URL",
            required=needs_base_url,
            help="The site's public URL, as in the config's base_url "
            "(env SITEMAP_BASE_URL).",
        )(command)
        return click.option(
            "--store",
            "store_uri",
            envvar="SITEMAP_STORE",
            default=DEFAULT_STORE,
            show_default=True,
            help="The store URI, as in the config (env SITEMAP_STORE).",
        )(command)

    return decorate


@contextmanager
def _site(store_uri: str, base_url: str | None, *, existing: bool) -> Iterator[Site]:
    """The site of the options; ``existing``: refuse an SQLite file that is not
    there, rather than create an empty store by looking at it."""
    try:
        config = Config.from_mapping(
            {"base_url": base_url or "http://localhost", "store": store_uri}
        )
        if existing:
            _check_exists(store_uri)
        store = open_store(config.store)
    except ConfigError as exc:
        _fail(str(exc), Exit.USAGE)
    try:
        yield Site(config, store)
    except StoreError as exc:
        _fail(f"the store {store_uri} failed: {exc}", Exit.STORE)
    finally:
        store.close()


def _check_exists(uri: str) -> None:
    parts = urlsplit(uri)
    if parts.scheme == "sqlite" and not os.path.exists(unquote(parts.path[1:])):
        _fail(
            f"no store at {uri} (nothing recorded there yet, or another --store?)",
            Exit.STORE,
        )


def _progress(
    items: Iterable[T], label: str, length: int | None
) -> AbstractContextManager[Iterable[T]]:
    """A progress bar on a terminal; elsewhere (a pipe, a log) nothing."""
    if not sys.stderr.isatty():
        return nullcontext(items)
    return click.progressbar(items, length=length, label=label, file=sys.stderr)


def _entries(site: Site) -> Iterator[Entry]:
    for part in site.store.parts():
        yield from site.store.entries(part.number)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sitemap-middleware")
def main() -> None:
    """Look into a sitemap store, export it as files, import a sitemap into it."""


@main.command()
@_site_options(needs_base_url=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def stats(store_uri: str, base_url: str | None, as_json: bool) -> None:
    """Store totals, its parts, and the site-wide counters."""
    with _site(store_uri, base_url, existing=True) as site:
        parts = site.store.parts()
        store = site.store
        counters = store.counts() if isinstance(store, Shared) else {}
    total = sum(p.urls for p in parts)
    newest = max((p.changed for p in parts), default=None)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "urls": total,
                    "parts": [
                        {
                            "number": p.number,
                            "urls": p.urls,
                            "lastmod": _when(p.lastmod),
                            "changed": render.w3c_datetime(p.changed),
                            "version": p.version,
                        }
                        for p in parts
                    ],
                    "newest_change": newest and render.w3c_datetime(newest),
                    "counters": counters,
                },
                indent=2,
            )
        )
        return
    click.echo(f"{total:,} URLs in {len(parts)} part{'s' * (len(parts) != 1)}")
    if newest is not None:
        click.echo(f"newest change: {render.w3c_datetime(newest)}")
    for p in parts:
        click.echo(
            f"  part {p.number}: {p.urls:,} URLs, lastmod "
            f"{_when(p.lastmod) or 'none'}, version {p.version}"
        )
    if counters:
        click.echo("counters, all workers:")
        for name in sorted(counters):
            click.echo(f"  {name}: {counters[name]:,}")


@main.command("list")
@_site_options(needs_base_url=True)
@click.option(
    "--format",
    "form",
    type=click.Choice(["txt", "csv", "json"]),
    default="txt",
    show_default=True,
    help="txt: one URL a line; csv and json add lastmod and route.",
)
def list_(store_uri: str, base_url: str, form: str) -> None:
    """The listed URLs, in sitemap order."""
    out = sys.stdout
    with _site(store_uri, base_url, existing=True) as site:
        entries = _entries(site)
        if form == "txt":
            for entry in entries:
                out.write(site.url(entry.path) + "\n")
        elif form == "csv":
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["url", "lastmod", "route"])
            for entry in entries:
                writer.writerow(
                    [site.url(entry.path), _stamp(entry), entry.route or ""]
                )
        else:
            # One array, written as it is read: a million URLs need no memory.
            out.write("[")
            for number, entry in enumerate(entries):
                row = {
                    "url": site.url(entry.path),
                    "lastmod": _stamp(entry),
                    "route": entry.route,
                }
                out.write(("," if number else "") + "\n  " + json.dumps(row))
            out.write("\n]\n")


def _when(moment: datetime) -> str | None:
    """A W3C datetime, or ``None`` for a lastmod no page claims."""
    lastmod = dated(moment)
    return None if lastmod is None else render.w3c_datetime(lastmod)


def _stamp(entry: Entry) -> str | None:
    return None if entry.lastmod is None else _when(entry.lastmod)


@main.command()
@_site_options(needs_base_url=True)
@click.argument("urls", nargs=-1, required=True)
def remove(store_uri: str, base_url: str, urls: tuple[str, ...]) -> None:
    """Take URLs out of the sitemap (they come back if visitors see them again
    and the config records them: exclude them in the config to keep them out)."""
    with _site(store_uri, base_url, existing=True) as site:
        paths = {}
        for url in urls:
            path = canonical_target(url, site.config.base_url, "/", _any_query(url))
            if path is None:
                _fail(f"{url} is not a URL under {site.config.base_url}", Exit.USAGE)
            paths[path] = url
        stored = site.store.known(paths)
        site.store.remove(stored)
    for path, url in paths.items():
        click.echo(f"{'removed' if path in stored else 'not listed'}: {url}")
    if len(stored) < len(paths):
        sys.exit(Exit.PROBLEMS)


def _any_query(url: str) -> frozenset[str]:
    # remove names a stored URL exactly: whatever parameters it holds were kept.
    return frozenset(name for name, _ in parse_qsl(urlsplit(url).query))


@main.command()
@_site_options(needs_base_url=True)
@click.argument(
    "directory", type=click.Path(file_okay=False, writable=True, resolve_path=True)
)
@click.option(
    "--text", is_flag=True, help="Also the text sitemaps, as text_sitemap serves them."
)
@click.option(
    "--schema-location",
    is_flag=True,
    help="With xsi:schemaLocation, as schema_location serves them.",
)
def export(
    store_uri: str, base_url: str, directory: str, text: bool, schema_location: bool
) -> None:
    """Write sitemap.xml and every part into DIRECTORY, byte for byte what the
    middleware serves, for a static host or a CDN: one state of the store,
    whatever its writers do meanwhile."""
    with _site(store_uri, base_url, existing=True) as site:
        config = replace(
            site.config, text_sitemap=text, schema_location=schema_location
        )
        store = site.store
        # One state by the store's own means where it has them (SQLite,
        # PostgreSQL: one read transaction); the versions are checked anyway.
        with store.snapshot() if isinstance(store, Snapshot) else nullcontext():
            files = _snapshot(store, config)
    os.makedirs(directory, exist_ok=True)
    # The parts before the index that names them: a host serving the folder
    # meanwhile never lists a part it does not have yet.
    for path in sorted(files, key=lambda path: path == INDEX.build()):
        _write(os.path.join(directory, path[1:]), files[path])
    click.echo(f"wrote {len(files)} files to {directory}")
    click.echo("add this line to the site's robots.txt:")
    click.echo(f"Sitemap: {site.url(INDEX.build())}")


# Reads of a store that keeps changing before export gives up, and the pause
# before the second (doubling after): enough to find a writer's lull, bounded.
EXPORT_ROUNDS = 8
EXPORT_PAUSE = 0.05


def _snapshot(store: Store, config: Config) -> dict[str, bytes]:
    """Every file of the export, by path, from one state of the store.

    Each part is served at the version its summary names; the index and the
    parts are one state when the summaries read after them are those read
    before (a version changes exactly when its part changes, never back).
    Else another round serves again what changed, up to
    :data:`EXPORT_ROUNDS`; a store that never stays still is an error.
    """
    held: dict[int, tuple[str, dict[str, bytes]]] = {}  # part: version, files
    for round_ in range(EXPORT_ROUNDS):
        if round_:
            time.sleep(EXPORT_PAUSE * 2 ** (round_ - 1))
        # A new server each round: nothing cached, so no older bytes served.
        server = Server(config, store)
        before = store.parts()
        if not before:
            _fail("the store holds no URLs: nothing to export", Exit.PROBLEMS)
        for number in held.keys() - {p.number for p in before}:
            del held[number]  # a part gone since the last round
        stale = [p for p in before if held.get(p.number, ("",))[0] != p.version]
        label = "exporting" if round_ == 0 else "exporting what changed"
        with _progress(stale, label, len(stale)) as bar:
            for part in bar:
                paths = [PART.build(part.number)]
                if config.text_sitemap:
                    paths.append(TEXT_PART.build(part.number))
                files = _served(server, paths)
                if files is not None:
                    held[part.number] = (part.version, files)
        whole = [INDEX.build()]
        if config.text_sitemap and len(before) == 1:
            whole.append(TEXT_INDEX.build())
        files = _served(server, whole)
        after = store.parts()
        if (
            files is not None
            and _versions(after) == _versions(before)
            and all(held.get(p.number, ("",))[0] == p.version for p in before)
        ):
            for part in before:
                files.update(held[part.number][1])
            return files
    _fail(
        f"the store changed during each of {EXPORT_ROUNDS} reads of it: run export"
        " again, or while its writers are stopped",
        Exit.STORE,
    )


def _versions(parts: list[PartInfo]) -> list[tuple[int, str]]:
    return [(p.number, p.version) for p in parts]


def _served(server: Server, paths: list[str]) -> dict[str, bytes] | None:
    """The bodies the server answers for ``paths``; ``None`` if one is a 404
    (what the summaries named is gone: the round does not count)."""
    files: dict[str, bytes] = {}
    for path in paths:
        response = server.serve("GET", path, lambda name: None)
        if response.status == 404:
            return None
        if response.status != 200:
            _fail(
                f"{path} answered {response.status}: "
                f"{response.body.decode('utf-8', 'replace').strip()}",
                Exit.STORE,
            )
        files[path] = response.body
    return files


def _write(path: str, body: bytes) -> None:
    # Whole files or none: a reader never sees half of one.
    temporary = f"{path}.partial"
    with open(temporary, "wb") as file:
        file.write(body)
    os.replace(temporary, path)


@main.command("import")
@_site_options(needs_base_url=True)
@click.argument("source")
@click.option(
    "--query",
    multiple=True,
    help="A query parameter kept in imported URLs (repeatable), as the "
    "config's 'query'.",
)
def import_(store_uri: str, base_url: str, source: str, query: tuple[str, ...]) -> None:
    """Add the URLs of SOURCE to the store: an XML sitemap, a sitemap index (its
    parts are followed on its own site or folder), gzip or not, or a text
    sitemap, from a file or an http(s) URL. New entries keep their lastmod; a
    URL the store holds is left as visits recorded it; bad entries are
    reported and skipped."""
    # Imported here: the command line is loaded with every Flask app (``flask
    # sitemap``), and only this command needs an XML parser and an HTTP client.
    from .sources import Problem, SourceError, count_problems, read

    problems: list[Problem] = []

    def report(problem: Problem) -> None:
        problems.append(problem)
        click.echo(f"skipped {problem.where}: {problem.reason}", err=True)

    kept: list[int] = []
    with _site(store_uri, base_url, existing=False) as site:
        before = site.store.count()
        items = read(source, site.config.base_url, frozenset(query))
        try:
            with _progress(count_problems(items, report), "importing", None) as bar:
                written = site.store.upsert(_new(site.store, bar, kept))
        except SourceError as exc:
            _fail(str(exc), Exit.SOURCE)
        added = site.store.count() - before
    click.echo(
        f"imported {written:,} entries ({added:,} new URLs); {sum(kept):,} already"
        f" in the store, kept as they are; {len(problems):,} skipped"
    )
    if problems:
        sys.exit(Exit.PROBLEMS)


def _new(store: Store, entries: Iterable[Entry], kept: list[int]) -> Iterator[Entry]:
    """The entries whose path ``store`` does not hold (one ``known`` read a
    batch): an import adds pages, it never overrules what visits recorded (a
    page's lastmod, fingerprint and title). How many were left goes to
    ``kept``."""
    for batch in batches(entries):
        held = store.known(batch)
        kept.append(len(held))
        yield from (entry for path, entry in batch.items() if path not in held)


# -- commands that need the app ------------------------------------------------

AppSource = Callable[[str | None], object | None]
"""From the ``--app`` option's value (``None``: not given): the app, if any."""


def _load(spec: str | None) -> object | None:
    if spec is None:
        return None
    try:
        return load(spec)
    except AppError as exc:
        _fail(str(exc), Exit.APP)


def _overrides(command: Callable[..., Any]) -> Any:
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


@contextmanager
def _replayed(
    app: object,
    store_uri: str | None,
    base_url: str | None,
    *,
    existing: bool,
    limited: bool = True,
) -> Iterator[Replay]:
    try:
        with replay(app, store_uri, base_url, limited) as ready:
            store = ready.sitemap.config.store
            if existing and isinstance(store, str):
                _check_exists(store)
            yield ready
    except AppError as exc:
        _fail(str(exc), Exit.APP)
    except ConfigError as exc:
        _fail(str(exc), Exit.USAGE)
    except StoreError as exc:
        _fail(f"the store failed: {exc}", Exit.STORE)


@contextmanager
def _judged(
    app: object | None, store_uri: str | None, base_url: str | None
) -> Iterator[Judged]:
    if app is not None:
        with _replayed(app, store_uri, base_url, existing=True) as ready:
            sitemap = ready.sitemap
            yield Judged(
                sitemap.config, sitemap.store, sitemap.judge, ready.route, ready.answer
            )
        return
    if base_url is None:
        _fail("give --app, or --base-url (and --store)", Exit.USAGE)
    with _site(store_uri or DEFAULT_STORE, base_url, existing=True) as site:
        config = site.config
        judge = ConfigJudge(config, Policy(config), Routes(config).resolve)
        yield Judged(config, site.store, judge, lambda path: None)


def app_commands(source: AppSource, with_option: bool) -> list[click.Command]:
    """``seed``, ``verify``, ``prune`` and ``explain``; ``with_option``: they
    take ``--app`` (the ``flask sitemap`` group knows its app)."""

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
    def seed(
        store_uri: str | None, base_url: str | None, app_spec: str | None = None
    ) -> None:
        """Request the app's pages in process (GET routes without parameters,
        and the pages @sitemap(params=...) lists) and record those that answer
        as public pages. Pages the config refuses (excluded paths and routes,
        the middleware's own, framework pages) are never requested; pages
        already stored are left as they are."""
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
                _fail(f"listing the pages of the app failed: {exc!r}", Exit.APP)
            listed = store.known(paths)
            asked = [path for path in paths if path not in listed]
            answers: dict[str, int] = {}
            with _progress(asked, "seeding", len(asked)) as bar:
                for path in bar:
                    answers[path] = ready.get(path)
            ready.sitemap.flush(None)
            counts = ready.sitemap.stats()
            recorded = store.known(asked)
        click.echo(
            f"requested {len(asked):,} pages ({len(listed):,} already listed, left "
            f"as they are; {len(refused):,} refused by the config, not requested); "
            f"recorded {len(recorded):,}"
        )
        base = ready.sitemap.config.base_url
        for path, why_not in refused.items():
            click.echo(f"  not requested: {base}{path}: {why_not}")
        for path in asked:
            if path not in recorded:
                click.echo(f"  not recorded: {base}{path} (answered {answers[path]})")
        for group in ("skipped", "dropped"):
            for reason, number in sorted(counts[group].items()):
                click.echo(f"  {group} {reason}: {number:,}")
        if problems:
            sys.exit(Exit.PROBLEMS)

    @click.command()
    @app_option(required=True)
    @_overrides
    @click.option(
        "--check", is_flag=True, help="Exit 1 if a page was removed (for CI)."
    )
    def verify(
        store_uri: str | None,
        base_url: str | None,
        check: bool,
        app_spec: str | None = None,
    ) -> None:
        """Request every stored URL in process, as stored; those that no longer
        answer as public pages (404, 410, 301, 308, 401, noindex, a redirect
        to a login page) are removed by the middleware's own rules."""
        with _replayed(source(app_spec), store_uri, base_url, existing=True) as ready:
            store = ready.sitemap.store
            paths = [
                entry.path
                for part in store.parts()
                for entry in store.entries(part.number)
            ]
            answers: dict[str, int] = {}
            with _progress(paths, "verifying", len(paths)) as bar:
                for path in bar:
                    answers[path] = ready.get(path)
            ready.sitemap.flush(None)
            kept = store.known(paths)
            base = ready.sitemap.config.base_url
        removed = [path for path in paths if path not in kept]
        for path in removed:
            click.echo(f"removed: {base}{path} (answered {answers[path]})")
        click.echo(f"verified {len(paths):,} URLs: {len(removed):,} removed")
        if check and removed:
            sys.exit(Exit.PROBLEMS)

    @click.command()
    @app_option(required=False)
    @_overrides
    def prune(
        store_uri: str | None, base_url: str | None, app_spec: str | None = None
    ) -> None:
        """Apply the current config to what is stored, now: what it refuses is
        removed (excluded paths and routes, queries no longer kept, lowered
        caps), changed changefreq and priority rewritten."""
        with _judged(source(app_spec), store_uri, base_url) as judged:
            store = judged.store
            if not isinstance(store, Shared):
                _fail(
                    f"{type(store).__name__} keeps no settings: it cannot be pruned",
                    Exit.STORE,
                )
            # Forget the digest: the pass runs whatever the store says it
            # followed, and stores the current one once done.
            store.set_setting(SETTING, "")
            recheck = Recheck(store, judged.judge, config_digest(judged.config))
            removed: list[str] = []
            rewritten = 0
            while not recheck.done:
                paths, changed = recheck.step()
                removed += paths
                rewritten += changed
            base = judged.config.base_url
        for path in removed:
            click.echo(f"removed: {base}{path}")
        click.echo(
            f"checked {recheck.checked:,} URLs: {len(removed):,} removed, "
            f"{rewritten:,} rewritten"
        )

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
        with _judged(source(app_spec), store_uri, base_url) as judged:
            config, store = judged.config, judged.store
            target = canonical_target(url, config.base_url, "/", _any_query(url))
            if target is None:
                _fail(f"{url} is not a URL under {config.base_url}", Exit.USAGE)
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
            last = decided([decision for decision, _ in recent])
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
        click.echo(f"{config.base_url}{stored}")
        if target != stored:
            click.echo(f"  asked for: {config.base_url}{target}")
            click.echo(f"  query: {refusal(config, target, route)}")
        if found is not None:
            part, entry = found
            click.echo(f"  listed: yes, in part {part} ({PART.build(part)})")
            click.echo(f"  lastmod: {_stamp(entry) or 'none'}")
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
        for decision, when in recent[-5:]:
            click.echo(f"  decided {render.w3c_datetime(when)}: {decision}")
        if found is None:
            sys.exit(Exit.PROBLEMS)

    return [seed, verify, prune, explain]


def _find(store: Store, path: str) -> tuple[int, Entry] | None:
    """The part and entry of a stored path (read a part at a time)."""
    if not store.known([path]):
        return None
    for part in store.parts():
        for entry in store.entries(part.number):
            if entry.path == path:
                return part.number, entry
    return None


for _command in app_commands(_load, with_option=True):
    main.add_command(_command)

STORE_COMMANDS = ("stats", "list", "remove", "export", "import")
"""The commands that need only the store and the base URL."""
