"""What every command shares: the exit codes, a failure in one line, the numbers
its options take, the site a store command works on (the config of its options and
its store, shown with its password masked), an app's config with the options in
place of its own and its site's listing linked to its other sites', progress bars,
how a lastmod and a URL's query are read out.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, urlsplit

import click

from .. import render
from ..config import Config, site_store, store_hint
from ..errors import ConfigError, StoreError
from ..model import Entry, PartInfo, dated
from ..sections import DEFAULT, label
from ..stores import Store, link_sites, open_store
from ..stores.contract import Present
from ..urls import redacted

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


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, and the exit code: a user's mistake is no traceback.
    Runs of whitespace are one space: a driver's message (libpq's "connection
    failed: ...\n\tIs the server running ...") or an exception's repr may
    span lines, and a script or a log reads one."""
    click.echo(f"Error: {' '.join(message.split())}", err=True)
    sys.exit(code)


if TYPE_CHECKING:
    _NumberType = click.ParamType[float]
else:  # a generic class in newer click only; the package takes 8.2
    _NumberType = click.ParamType


class Number(_NumberType):
    """What every numeric option takes: a finite number, above 0 (0 too with
    ``zero``). click's ``FloatRange`` lets ``nan`` through (it compares false
    to any bound) and ``inf``, which then fail deep in a command: here they
    are a usage error, as a negative number is. No option has a meaning for
    one below 0."""

    name = "number"

    def __init__(self, *, zero: bool = False) -> None:
        self.zero = zero

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number) or number < 0 or (number == 0 and not self.zero):
            least = "0 or more" if self.zero else "above 0"
            self.fail(f"{value!r} is not a finite number {least}", param, ctx)
        return number


def plural(number: int, word: str, many: str | None = None) -> str:
    return f"{number:,} {word if number == 1 else many or word + 's'}"


@dataclass(frozen=True, slots=True)
class Site:
    """What a store command works on: the checked config and its store."""

    config: Config
    store: Store

    def url(self, path: str) -> str:
        return f"{self.config.base_url}{path}"


def site_listing(store_uri: str, name: str) -> str:
    """The URI of site ``name``'s listing in the store (``config.site_store``),
    or a usage error for a name no site can have."""
    try:
        return site_store(store_uri, name)
    except ConfigError as exc:
        fail(str(exc), Exit.USAGE)


def overridden(
    config: Config, store: str | None, base_url: str | None, limited: bool = True
) -> Config:
    """``config`` (an app's, of one of its sites) with another store URI or
    base URL (checked as the config checks them; the allowed hosts follow a
    new base URL when they were its), and without the rate of new URLs unless
    ``limited``. ``store`` is the store as configured: the site's listing is
    the one in it. A value equal to the app's own (once checked) is no
    change: ``config`` itself is returned when nothing changes."""
    changes: dict[str, Any] = {}
    if store is not None or base_url is not None:
        given = Config.from_mapping(
            {"base_url": base_url or config.base_url, "store": store or config.store}
        )
        if store is not None:
            # The site's listing in the store given (config.store is one).
            listing = _listing(config, config.site, given.store)
            if listing != config.store:
                changes["store"] = listing
        if base_url is not None and given.base_url != config.base_url:
            changes["base_url"] = given.base_url
            own = (urlsplit(config.base_url).hostname or "",)
            if config.allowed_hosts == own:
                changes["allowed_hosts"] = given.allowed_hosts
    if not limited and config.new_urls_per_minute is not None:
        # The rate guards against made-up URLs; the app's own routes are not.
        changes["new_urls_per_minute"] = None
    return replace(config, **changes) if changes else config


def _listing(config: Config, name: str, store: str | Store) -> str | Store:
    """The listing of site ``name`` of ``config``'s ``sites`` in ``store``:
    the store itself for the first site (or a config of one site), else the
    store option ``site`` added once (``config.site_store``)."""
    if (
        not isinstance(store, str)
        or not config.sites
        or name in ("", config.sites[0].name)
    ):
        return store
    return site_store(store, name)


def linked(
    config: Config, store: str | None, keep: Callable[[Store], object]
) -> Store | None:
    """The store of ``config``'s site on its listing (``config.store``) in
    ``store`` (a URI), linked to the listings of its other ``sites`` in the
    same store, as the middleware links them (``stores.link_sites``): its
    writes and removals settle their hreflang clusters. Each store opened is
    given to ``keep``, which closes it when the command is done. ``None``
    for a config of one site: nothing to link."""
    if store is None or len(config.sites) < 2 or not isinstance(config.store, str):
        return None
    own = open_store(config.store)
    keep(own)
    sites = {config.base_url: (config.store, own)}
    for other in config.sites:
        if other.name != config.site:
            uri = str(_listing(config, other.name, store))
            opened = open_store(uri)
            keep(opened)
            sites[other.base_url] = (uri, opened)
    for handle in link_sites(sites):
        keep(handle)
    return own


@contextmanager
def opened(
    store_uri: str | Store,
    base_url: str | None,
    *,
    existing: bool,
    site: str | None = None,
    writes: bool = False,
) -> Iterator[Site]:
    """The site of the options; ``existing``: refuse a store that holds no
    sitemap (:func:`check_exists`), rather than make one by looking at it. The
    store is a URI, or the store object an app's config holds. ``site``: the
    ``--site`` whose listing ``store_uri`` is, without the app; a command that
    ``writes`` refuses it too when it holds no sitemap (:func:`check_exists`)."""
    uri = store_uri if isinstance(store_uri, str) else None
    try:
        config = Config.from_mapping(
            {"base_url": base_url or "http://localhost", "store": store_uri}
        )
        store = open_store(config.store)
    except ConfigError as exc:
        fail(hinted(exc, uri), Exit.USAGE)
    try:
        if existing or (writes and site is not None):
            check_exists(config.store, site, writes)
        yield Site(config, store)
    except StoreError as exc:
        fail(f"the store failed: {exc}", Exit.STORE)
    finally:
        store.close()


def hinted(exc: ConfigError, store_uri: str | None) -> str:
    """The config's words, and the fix of a store URI's known slip (the URI
    in it masked)."""
    hint = store_hint(redacted(store_uri)) if store_uri else None
    return f"{exc}; {hint}" if hint else str(exc)


def check_exists(
    store: str | Store, site: str | None = None, writes: bool = False
) -> None:
    """Refuse a store that holds no sitemap (an SQLite file not there, another
    app's database, a table prefix nothing was recorded under) before a
    command that needs one uses it, which would make its tables. ``store``: a
    URI (looked at through a store object of its own) or a store object. One
    that cannot tell (:class:`~..stores.contract.Present`) is taken to hold one.

    ``site``: the ``--site`` whose listing ``store`` is, named without the
    app, which alone knows its first site, whose listing is the store itself
    (``config.site_store``): the listing of ``--site`` *first* holds nothing.
    A command that ``writes`` there would fill a listing no site serves: a
    usage error; one that reads says so too.

    :raises StoreError: the store could not be looked at.
    """
    looked = open_store(store)
    try:
        if isinstance(looked, Present) and not looked.present():
            named = (
                redacted(store)
                if isinstance(store, str)
                else f"the app's {type(store).__name__}"
            )
            if site is None:
                fail(
                    f"no store at {named} (it holds no sitemap store: nothing"
                    " recorded there yet, or another --store?)",
                    Exit.STORE,
                )
            why = (
                "without --app the command cannot tell which site is the first,"
                " whose listing is the store itself: give --app, or leave out"
                " --site for the first site"
            )
            if writes:
                fail(
                    f"--site {site} names the listing {named}, which holds no"
                    f" sitemap yet: {why}",
                    Exit.USAGE,
                )
            fail(f"no store at {named} (it holds no sitemap store; {why})", Exit.STORE)
    finally:
        if looked is not store:
            looked.close()


def progress(
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
        # Without a total (an index read a part at a time), every 1,000th.
        update_min_steps=max(1, (length or 100_000) // 100),
    )


def stored_entries(site: Site) -> Iterator[Entry]:
    for part in site.store.parts():
        yield from site.store.entries(part.number)


def by_section(parts: Iterable[PartInfo]) -> dict[str, list[PartInfo]]:
    """The parts grouped by section (shown as ``sections.label`` gives it),
    each section where its first part is; ``{}`` when every part is of the
    default section (a site without sections: shown as before)."""
    grouped: dict[str, list[PartInfo]] = {}
    for part in parts:
        grouped.setdefault(part.section, []).append(part)
    if set(grouped) <= {DEFAULT}:
        return {}
    return {label(name): found for name, found in grouped.items()}


def lastmod_text(moment: datetime) -> str | None:
    """A W3C datetime, or ``None`` for a lastmod no page claims."""
    lastmod = dated(moment)
    return None if lastmod is None else render.w3c_datetime(lastmod)


def stamp(entry: Entry) -> str | None:
    return None if entry.lastmod is None else lastmod_text(entry.lastmod)


def any_query(url: str) -> frozenset[str]:
    # remove names a stored URL exactly: whatever parameters it holds were kept.
    return frozenset(name for name, _ in parse_qsl(urlsplit(url).query))
