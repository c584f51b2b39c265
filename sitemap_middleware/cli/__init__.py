"""The ``sitemap-middleware`` command line (also ``python -m sitemap_middleware``):
look into a store, list and remove its URLs, export the sitemap as files and import
one from elsewhere; with the app, seed, verify, prune and explain its pages (also
``flask sitemap ...``). Exit codes are in :class:`Exit`.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

import click

# Only what the package itself loads, and click: ``--version``, ``--help`` and
# ``flask sitemap`` (loaded with every Flask app) start fast. Each command
# imports what it needs (the recorder, the server, the app's replay, the XML
# parser); tests/cli/test_startup.py holds it.
from .. import render
from ..config import DEFAULT_STORE, Config, store_hint
from ..errors import ConfigError, StoreError
from ..model import Entry, PartInfo, dated
from ..paths import INDEX, PART, TEXT_INDEX, TEXT_PART
from ..stores import Store, batches, open_store
from ..stores.base import Decisions, Shared, Snapshot
from ..urls import canonical_target
from ..visible import visible

if TYPE_CHECKING:
    from ..recording.recheck import Judge
    from ..routes import Route
    from ..serving.server import Server
    from .held import Held
    from .replay import Answer, Replay
    from .sources import Problem

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
    REFUSED = 6
    """A run of verify or prune would remove more than :data:`BRAKE_SHARE` of
    the store (and more than :data:`BRAKE_URLS` URLs), and it was not
    confirmed (no terminal to ask, an answer no, no ``--yes``): nothing
    removed."""


# A run that would remove more than this share of the stored URLs, and more
# than this many, asks first: a config or an app that is wrong (a new
# exclude, a base URL of another site, the app's database empty) turns most
# pages into removals, and it is rarely what was meant.
BRAKE_SHARE = 0.10
BRAKE_URLS = 10


def _fail(message: str, code: int) -> NoReturn:
    """One line on stderr, and the exit code: a user's mistake is no traceback."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def _plural(number: int, word: str, many: str | None = None) -> str:
    return f"{number:,} {word if number == 1 else many or word + 's'}"


class _Main(click.Group):
    """The command group, whose errors are one line each: a usage error
    names the help to read, an unreadable or unwritable path its reason."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "sitemap-middleware"
            _fail(f"{exc.format_message()} (see '{where} --help')", exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", Exit.PROBLEMS)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # the reader left (| head): not an error
                sys.exit(Exit.OK)
            # A file or folder named on the command line (export's DIRECTORY).
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(f"{where}{exc.strerror or exc}", Exit.USAGE)
        sys.exit(code if isinstance(code, int) else Exit.OK)


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
        _fail(_hinted(exc, store_uri), Exit.USAGE)
    try:
        yield Site(config, store)
    except StoreError as exc:
        _fail(f"the store {store_uri} failed: {exc}", Exit.STORE)
    finally:
        store.close()


def _hinted(exc: ConfigError, store_uri: str | None) -> str:
    """The config's words, and the fix of a store URI's known slip."""
    hint = store_hint(store_uri) if store_uri else None
    return f"{exc}; {hint}" if hint else str(exc)


def _check_exists(uri: str) -> None:
    parts = urlsplit(uri)
    # A host ('sqlite://x.db') is refused by open_store, naming the fix.
    if (
        parts.scheme == "sqlite"
        and not parts.netloc
        and not os.path.exists(unquote(parts.path[1:]))
    ):
        _fail(
            f"no store at {uri} (nothing recorded there yet, or another --store?)",
            Exit.STORE,
        )


def _progress(
    items: Iterable[T], label: str, length: int | None, unit: str | None = None
) -> AbstractContextManager[Iterable[T]]:
    """A progress bar on a terminal; elsewhere (a pipe, a log) nothing. With
    ``unit``, it shows the count and the rate too, and is drawn about a
    hundred times in all (a draw per item costs more than an entry)."""
    if not sys.stderr.isatty():
        return nullcontext(items)
    if unit is None:
        return click.progressbar(items, length=length, label=label, file=sys.stderr)
    started = time.monotonic()
    done = [0]

    def rate(item: object) -> str:
        seconds = time.monotonic() - started
        return f"{done[0] / seconds:,.0f} {unit}/s" if seconds > 0.5 else ""

    def counted() -> Iterator[T]:
        for item in items:
            done[0] += 1
            yield item

    return click.progressbar(
        counted(),
        length=length,
        label=label,
        file=sys.stderr,
        show_pos=True,
        item_show_func=rate,
        update_min_steps=max(1, (length or 0) // 100),
    )


def _entries(site: Site) -> Iterator[Entry]:
    for part in site.store.parts():
        yield from site.store.entries(part.number)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
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
            import csv

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
        if path in stored:
            click.echo(f"removed: {url}")
        else:
            click.echo(f"not listed: {url}", err=True)
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
    from ..serving.server import Server

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
    from .sources import SourceError, count_problems, reading

    problems: list[Problem] = []

    def report(problem: Problem) -> None:
        problems.append(problem)
        click.echo(f"skipped {problem.where}: {problem.reason}", err=True)

    kept: list[int] = []
    with _site(store_uri, base_url, existing=False) as site:
        before = site.store.count()
        try:
            with (
                _paused_gc(),
                reading(source, site.config.base_url, frozenset(query)) as found,
            ):
                items = found.items()
                # The total is known once every document is checked.
                with _progress(items, "importing", found.total, "URLs") as bar:
                    entries = count_problems(iter(bar), report)
                    allowed = _allowed(site.config, frozenset(query), entries, report)
                    written = site.store.upsert(_new(site.store, allowed, kept))
        except SourceError as exc:
            _fail(str(exc), Exit.SOURCE)
        added = site.store.count() - before
    imported = _plural(written, "entry", "entries")
    click.echo(
        f"imported {imported} ({_plural(added, 'new URL')}); {sum(kept):,} already"
        f" in the store, kept as they are; {len(problems):,} skipped"
    )
    if problems:
        sys.exit(Exit.PROBLEMS)


def _allowed(
    config: Config,
    query: frozenset[str],
    entries: Iterable[Entry],
    report: Callable[[Problem], None],
) -> Iterator[Entry]:
    """The entries the config does not refuse, each refused one reported in
    explain's words: an import publishes nothing a visit could not record
    (an excluded path, a secret link, the middleware's own paths). Without
    the app, its routes are unknown: the config's defaults apply, with the
    query parameters the import keeps."""
    from ..recording.refusal import refuse
    from ..routes import Routes
    from ..watching.policy import Policy
    from .sources import Problem
    from .verdict import said

    policy, base = Policy(config), config.base_url
    unknown = Routes(config).unknown
    route = replace(unknown, query=unknown.query | query)
    for entry in entries:
        path, _, kept = entry.path.partition("?")
        refused = refuse(policy, base, path, kept, route)
        if refused is None:
            yield entry
        else:
            report(Problem(base + entry.path, said(refused, config, path, route)))


@contextmanager
def _paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: an import allocates an element
    and an entry per URL, none in a cycle (elements know no parent, entries
    are frozen), and the collector's passes over them cost a sixth of an
    import's time. Reference counting frees them all the same."""
    import gc

    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


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
    from .replay import AppError, load

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
        f"this would remove {removing:,} of the {_plural(stored, 'URL')} stored "
        f"({removing / max(stored, 1):.0%})"
    )
    if sys.stdin.isatty() and sys.stderr.isatty():
        if click.confirm(f"{what}. Remove them?", err=True):
            return
        _fail("nothing removed", Exit.REFUSED)
    _fail(
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
        with replay(app, store_uri, base_url, limited, hold) as ready:
            store = ready.sitemap.config.store
            if existing and isinstance(store, str):
                _check_exists(store)
            yield ready
    except AppError as exc:
        _fail(str(exc), Exit.APP)
    except ConfigError as exc:
        _fail(_hinted(exc, store_uri), Exit.USAGE)
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
    from ..recording.recheck import ConfigJudge
    from ..routes import Routes
    from ..watching.policy import Policy

    with _site(store_uri or DEFAULT_STORE, base_url, existing=True) as site:
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
            _check_exists(store)
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
                _fail(f"listing the pages of the app failed: {exc!r}", Exit.APP)
            listed = store.known(paths)
            asked = [path for path in paths if path not in listed]
            answers: dict[str, Answer] = {}
            with _progress(asked, "seeding", len(asked)) as bar:
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
                f"requested {_plural(len(asked), 'page')} ({len(listed):,} already "
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
        from .verdict import refusal

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
                config = ready.sitemap.config
                with _progress(paths, "verifying", len(paths)) as bar:
                    for path in bar:
                        route = ready.route(path.partition("?")[0])
                        if refusal(config, path, route) is not None:
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
                    _fail(f"the store failed: {exc}", Exit.STORE)
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
            verified = _plural(len(paths), "URL")
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
                _fail(
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
            "changed": not preview,
        }
        _report(acted, totals, as_json)
        if not as_json:
            click.echo(
                f"checked {_plural(recheck.checked, 'URL')}: {len(removed):,} "
                f"{would}removed, {rewritten:,} {would}rewritten"
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
        from .verdict import NOT_REFUSED, answered, kept_out, refusal

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
