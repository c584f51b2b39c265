"""The commands on the store: stats, list, remove, export, import. They need a
store and a base URL, which the app gives when it is known (``--app``, ``flask
sitemap``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, TypeVar

import click

from .. import render
from ..config import Config
from ..model import Entry, PartInfo
from ..paths import INDEX, PART, TEXT_INDEX, TEXT_PART
from ..sections import DEFAULT, DEFAULT_LABEL, NAME, label
from ..stores import Store
from ..stores.contract import Adds, Shared, Snapshot
from ..urls import canonical_target
from .options import Target, common_options
from .site import (
    Exit,
    any_query,
    by_section,
    fail,
    lastmod_text,
    plural,
    progress,
    stamp,
)

# Items an import reads, judges and writes at a time: a store's write costs
# less an entry at a thousand than at its own 10,000 (an import of 10,000
# plain URLs: 126k instructions an entry against 132k, callgrind).
IMPORT_BATCH = 1000
_PATH = attrgetter("path")

if TYPE_CHECKING:
    from ..serving.server import Server
    from .entries import Item, Problem

T = TypeVar("T")


@click.command()
@common_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def stats(target: Target, as_json: bool) -> None:
    """Store totals, its parts, and the site-wide counters."""
    with target.site(existing=True, needs_base_url=False) as site:
        parts = site.store.parts()
        store = site.store
        counters = store.counts() if isinstance(store, Shared) else {}
    total = sum(p.urls for p in parts)
    newest = max((p.changed for p in parts), default=None)
    sections = by_section(parts)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "urls": total,
                    "parts": [
                        {
                            "number": p.number,
                            "urls": p.urls,
                            "lastmod": lastmod_text(p.lastmod),
                            "changed": render.w3c_datetime(p.changed),
                            "version": p.version,
                            **({"section": label(p.section)} if sections else {}),
                        }
                        for p in parts
                    ],
                    # Only with sections: what each section holds.
                    **(
                        {
                            "sections": {
                                name: {
                                    "urls": sum(p.urls for p in found),
                                    "parts": [p.number for p in found],
                                }
                                for name, found in sections.items()
                            }
                        }
                        if sections
                        else {}
                    ),
                    "newest_change": newest and render.w3c_datetime(newest),
                    "counters": counters,
                },
                indent=2,
            )
        )
        return
    click.echo(f"{plural(total, 'URL')} in {plural(len(parts), 'part')}")
    if newest is not None:
        click.echo(f"newest change: {render.w3c_datetime(newest)}")
    if sections:
        click.echo("sections:")
        for name, found in sections.items():
            urls = plural(sum(p.urls for p in found), "URL")
            click.echo(f"  {name}: {urls} in {plural(len(found), 'part')}")
    for p in parts:
        click.echo(
            f"  part {p.number}: {plural(p.urls, 'URL')}, lastmod "
            f"{lastmod_text(p.lastmod) or 'none'}, version {p.version}"
            + (f", section {label(p.section)}" if sections else "")
        )
    if counters:
        from collections import Counter

        from ..recording.counters import by_group

        # Each counter under its stats() group, as the docs name it
        # ("skipped.incomplete"); recorded and removed stand alone.
        click.echo("counters, all workers:")
        grouped = by_group(Counter(counters))
        for (group, reason), value in sorted(grouped.items()):
            click.echo(
                f"  {group}.{reason}: {value:,}" if group else f"  {reason}: {value:,}"
            )


@click.command("list")
@common_options
@click.option(
    "--format",
    "form",
    type=click.Choice(["txt", "csv", "json"]),
    default="txt",
    show_default=True,
    help="txt: one URL a line; csv and json add lastmod and route (and the"
    " section, when the store holds sections); json the title and description.",
)
@click.option(
    "--section",
    "only",
    metavar="NAME",
    help="Only the URLs of this section ('default': those no section names).",
)
def list_(target: Target, form: str, only: str | None) -> None:
    """The listed URLs, in sitemap order."""
    out = sys.stdout
    with target.site(existing=True, needs_base_url=True) as site:
        parts = site.store.parts()
        # A section column only for a store that holds sections (the output
        # of a site without them stays as it was).
        sectioned = only is not None or bool(by_section(parts))
        if only is not None:
            parts = [p for p in parts if label(p.section) == only]
            if not parts:
                fail(f"no part holds section {only!r}", Exit.PROBLEMS)
        entries = (
            (label(part.section), entry)
            for part in parts
            for entry in site.store.entries(part.number)
        )
        if form == "txt":
            for _, entry in entries:
                out.write(site.url(entry.path) + "\n")
        elif form == "csv":
            import csv

            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["url", "lastmod", "route", *["section"][:sectioned]])
            for section, entry in entries:
                line = [site.url(entry.path), stamp(entry), entry.route or ""]
                writer.writerow([*line, section] if sectioned else line)
        else:
            # One array, written as it is read: a million URLs need no memory.
            out.write("[")
            for number, (section, entry) in enumerate(entries):
                row = {
                    "url": site.url(entry.path),
                    "lastmod": stamp(entry),
                    "route": entry.route,
                    "title": entry.title,
                    "description": entry.description,
                }
                if sectioned:
                    row["section"] = section
                out.write(("," if number else "") + "\n  " + json.dumps(row))
            out.write("\n]\n")


@click.command()
@common_options
@click.argument("urls", nargs=-1, required=True)
def remove(target: Target, urls: tuple[str, ...]) -> None:
    """Take URLs out of the sitemap (they come back if visitors see them again
    and the config records them: exclude them in the config to keep them out)."""
    with target.site(existing=True, needs_base_url=True, writes=True) as site:
        paths = {}
        for url in urls:
            path = canonical_target(url, site.config.base_url, "/", any_query(url))
            if path is None:
                fail(f"{url} is not a URL under {site.config.base_url}", Exit.USAGE)
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


@click.command()
@common_options
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
def export(target: Target, directory: str, text: bool, schema_location: bool) -> None:
    """Write sitemap.xml and every part into DIRECTORY, byte for byte what the
    middleware serves, for a static host or a CDN: one state of the store,
    whatever its writers do meanwhile."""
    with target.site(existing=True, needs_base_url=True) as site:
        # The options add to the config's (the app's: served as it serves).
        config = replace(
            site.config,
            text_sitemap=text or site.config.text_sitemap,
            schema_location=schema_location or site.config.schema_location,
        )
        store = site.store
        # One state by the store's own means where it has them (SQLite,
        # PostgreSQL: one read transaction); the versions are checked anyway.
        with store.snapshot() if isinstance(store, Snapshot) else nullcontext():
            files, parts = _snapshot(store, config)
    os.makedirs(directory, exist_ok=True)
    # The parts before the index that names them: a host serving the folder
    # meanwhile never lists a part it does not have yet.
    for path in sorted(files, key=lambda path: path == INDEX.build()):
        _write(os.path.join(directory, path[1:]), files[path])
    click.echo(f"wrote {len(files)} files to {directory}")
    for name, found in by_section(parts).items():
        numbers = ", ".join(PART.build(p.number)[1:] for p in found)
        urls = plural(sum(p.urls for p in found), "URL")
        click.echo(f"section {name}: {urls} in {numbers}")
    click.echo("add this line to the site's robots.txt:")
    click.echo(f"Sitemap: {site.url(INDEX.build())}")


# Reads of a store that keeps changing before export gives up, and the pause
# before the second (doubling after): enough to find a writer's lull, bounded.
EXPORT_ROUNDS = 8
EXPORT_PAUSE = 0.05


def _snapshot(store: Store, config: Config) -> tuple[dict[str, bytes], list[PartInfo]]:
    """Every file of the export, by path, from one state of the store, and
    the parts' summaries of that state.

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
            fail("the store holds no URLs: nothing to export", Exit.PROBLEMS)
        for number in held.keys() - {p.number for p in before}:
            del held[number]  # a part gone since the last round
        stale = [p for p in before if held.get(p.number, ("",))[0] != p.version]
        said = "exporting" if round_ == 0 else "exporting what changed"
        with progress(stale, said, len(stale)) as bar:
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
            return files, after
    fail(
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
            fail(
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


@click.command("import")
@common_options
@click.argument("source")
@click.option(
    "--query",
    multiple=True,
    help="A query parameter kept in imported URLs (repeatable), as the "
    "config's 'query'.",
)
@click.option(
    "--section",
    metavar="NAME",
    help="The section whose parts the new URLs join (default: the default "
    "section; a visit moves a page to the section the config gives it).",
)
def import_(
    target: Target,
    source: str,
    query: tuple[str, ...],
    section: str | None,
) -> None:
    """Add the URLs of SOURCE to the store: an XML sitemap, a sitemap index (its
    parts are followed on its own site or folder), gzip or not, or a text
    sitemap, from a file or an http(s) URL. New entries keep their lastmod; a
    URL the store holds is left as visits recorded it; bad entries are
    reported and skipped."""
    into = DEFAULT if section in (None, DEFAULT_LABEL) else section
    if into and NAME.match(into) is None:
        fail(
            f"--section {section!r} must be a short lower-case word, as the"
            " config's 'sections' names them",
            Exit.USAGE,
        )
    # Imported here: the command line is loaded with every Flask app (``flask
    # sitemap``), and only this command needs an XML parser and an HTTP client.
    from .entries import SourceError
    from .sources import reading

    problems: list[Problem] = []

    def report(problem: Problem) -> None:
        problems.append(problem)
        click.echo(f"skipped {problem.where}: {problem.reason}", err=True)

    kept: list[int] = []
    written = 0
    with target.site(existing=False, needs_base_url=True, writes=True) as site:
        before = site.store.count()
        # Kept as a visit keeps them (the config's; the app's with --app),
        # and those --query names.
        kept_query = site.config.query | frozenset(query)
        allowed = _Allowed(site.config, kept_query, report)
        try:
            with (
                _paused_gc(),
                reading(
                    source, site.config.base_url, kept_query, site.config.abroad()
                ) as found,
                # The total is known once the source is read through (an
                # index's parts: each in its turn).
                progress(found.items(), "importing", found.total, "URLs") as bar,
            ):
                items = iter(bar)
                while batch := list(islice(items, IMPORT_BATCH)):
                    new = allowed(batch)
                    if into:
                        new = [replace(entry, section=into) for entry in new]
                    written += _add(site.store, new, kept)
        except SourceError as exc:
            fail(str(exc), Exit.SOURCE)
        added = site.store.count() - before
    imported = plural(written, "entry", "entries")
    click.echo(
        f"imported {imported} ({plural(added, 'new URL')}); {sum(kept):,} already"
        f" in the store, kept as they are; {len(problems):,} skipped"
    )
    if problems:
        sys.exit(Exit.PROBLEMS)


class _Allowed:
    """The entries of a batch of items the config does not refuse, each
    problem and refused entry reported in order, a refusal in explain's
    words: an import publishes nothing a visit could not record (an excluded
    path, a secret link, the middleware's own paths): the app's config with
    the app, else the config's defaults. The app's routes are not asked (a
    route's own exclusion and query): the rule of a page served by no known
    route applies, with the query parameters the import keeps. The rule is
    asked of a batch at once (``refusal.refusals``)."""

    def __init__(
        self, config: Config, query: frozenset[str], report: Callable[[Problem], None]
    ) -> None:
        from ..routes import Routes
        from ..watching.policy import Policy

        self._config = config
        self._policy = Policy(config)
        unknown = Routes(config).unknown
        self._route = replace(unknown, query=unknown.query | query)
        self._report = report

    def __call__(self, items: list[Item]) -> list[Entry]:
        from ..recording.refusal import refusals
        from .entries import Problem
        from .verdict import said

        entries = [item for item in items if type(item) is Entry]
        base, route = self._config.base_url, self._route
        paths = list(map(_PATH, entries))
        refused = dict(refusals(self._policy, base, paths, route))
        if not refused and len(entries) == len(items):
            return entries
        allowed = []
        index = 0
        for item in items:
            if type(item) is not Entry:
                assert isinstance(item, Problem)
                self._report(item)
                continue
            refusal = refused.get(index)
            index += 1
            if refusal is None:
                allowed.append(item)
                continue
            path = item.path.partition("?")[0]
            words = said(refusal, self._config, path, route)
            self._report(Problem(base + item.path, words))
        return allowed


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


def _add(store: Store, entries: list[Entry], kept: list[int]) -> int:
    """Write the entries whose path ``store`` does not hold, the last of a
    path given many times: an import adds pages, it never overrules what
    visits recorded (a page's lastmod, fingerprint and title). A store that
    ``Adds`` decides it in the write's own transaction, so that a page
    recorded meanwhile is left too; any other is asked first (:func:`_new`).
    How many were left goes to ``kept``; how many were written is returned."""
    if isinstance(store, Adds):
        written = store.add(entries)
        kept.append(len(set(map(_PATH, entries))) - written)
        return written
    new = _new(store, entries, kept)
    store.upsert(new)
    return len(new)


def _new(store: Store, entries: list[Entry], kept: list[int]) -> list[Entry]:
    """The entries whose path ``store`` does not hold (one ``known`` read),
    the last of a path given many times: an import adds pages, it never
    overrules what visits recorded (a page's lastmod, fingerprint and
    title). How many were left goes to ``kept``."""
    batch = dict(zip(map(_PATH, entries), entries, strict=True))
    held = store.known(batch)
    kept.append(len(held))
    return [entry for path, entry in batch.items() if path not in held]
