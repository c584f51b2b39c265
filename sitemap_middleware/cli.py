"""The ``sitemap-middleware`` command line (also ``python -m sitemap_middleware``):
look into a store, list and remove its URLs, export the sitemap as files and import
one from elsewhere. Exit codes are in :class:`Exit`.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

import click

from . import render
from .config import DEFAULT_STORE, Config
from .errors import ConfigError, StoreError
from .model import Entry
from .serving import Server
from .sources import Problem, SourceError, count_problems, read
from .stores import Store, open_store
from .urls import canonical_target

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
        counts: Callable[[], dict[str, int]] | None = getattr(
            site.store, "counts", None
        )
        counters = counts() if counts is not None else {}
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
                            "lastmod": render.w3c_datetime(p.lastmod),
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
            f"{render.w3c_datetime(p.lastmod)}, version {p.version}"
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


def _stamp(entry: Entry) -> str | None:
    return None if entry.lastmod is None else render.w3c_datetime(entry.lastmod)


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
def export(store_uri: str, base_url: str, directory: str) -> None:
    """Write sitemap.xml and every part into DIRECTORY, byte for byte what the
    middleware serves, for a static host or a CDN."""
    with _site(store_uri, base_url, existing=True) as site:
        server = Server(site.config, site.store)
        parts = site.store.parts()
        if not parts:
            _fail("the store holds no URLs: nothing to export", Exit.PROBLEMS)
        os.makedirs(directory, exist_ok=True)
        paths = ["/sitemap.xml", *(f"/sitemap-{p.number}.xml.gz" for p in parts)]
        with _progress(paths, "exporting", len(paths)) as bar:
            for path in bar:
                response = server.serve("GET", path, lambda name: None)
                if response.status != 200:
                    _fail(
                        f"{path} answered {response.status}: "
                        f"{response.body.decode('utf-8', 'replace').strip()}",
                        Exit.STORE,
                    )
                _write(os.path.join(directory, path[1:]), response.body)
    click.echo(f"wrote {len(paths)} files to {directory}")
    click.echo("add this line to the site's robots.txt:")
    click.echo(f"Sitemap: {site.url('/sitemap.xml')}")


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
    parts are followed), gzip or not, or a text sitemap, from a file or an
    http(s) URL. Entries keep their lastmod; bad ones are reported and skipped."""
    problems: list[Problem] = []

    def report(problem: Problem) -> None:
        problems.append(problem)
        click.echo(f"skipped {problem.where}: {problem.reason}", err=True)

    with _site(store_uri, base_url, existing=False) as site:
        before = site.store.count()
        items = read(source, site.config.base_url, frozenset(query))
        try:
            with _progress(count_problems(items, report), "importing", None) as bar:
                written = site.store.upsert(bar)
        except SourceError as exc:
            _fail(str(exc), Exit.SOURCE)
        added = site.store.count() - before
    click.echo(
        f"imported {written:,} entries ({added:,} new URLs); {len(problems):,} skipped"
    )
    if problems:
        sys.exit(Exit.PROBLEMS)
