"""Stores chosen by URI: ``memory://``, ``sqlite:///file.db``, or a registered scheme.

Backends are imported only when their scheme is used, so a missing optional
driver costs nothing until it is asked for.

Third-party stores plug in by scheme, either with :func:`register_store` or with
an entry point in the group ``sitemap_middleware.stores`` (name: the scheme;
value: ``"module:factory"``, a callable taking the URI and returning the store):

.. code-block:: toml

    [project.entry-points."sitemap_middleware.stores"]
    dynamodb = "sitemap_dynamodb:open_store"

A third-party store subclasses :class:`StoreBase` (the per-process connection,
driver errors as ``StoreError``) and plans its writes with :func:`layout.plan
<sitemap_middleware.stores.layout.plan>`: which part each new path joins, the
merge rules of ``lastmod``, and the typed records (:class:`Row`, ...) it stores.
``tests/support/example_store.py`` is a complete one, run through the contract suite.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from ..errors import ConfigError, StoreError
from ..model import Entry, PageInfo, PartInfo
from ..urls import redacted
from . import hreflang, layout
from .abroad import Abroad, Clusters
from .base import RENAMED, StoreBase
from .contract import (
    MAX_COUNT,
    NEWS_KEPT,
    Article,
    News,
    Removed,
    Store,
    Visit,
    deltas,
    newest,
    news_cutoff,
    removed,
)
from .layout import batches, plan
from .records import Change, Fill, Plan, Row, Stored, Totals, weight

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints

    from ..config import Config

__all__ = [
    "MAX_COUNT",
    "NEWS_KEPT",
    "Article",
    "Change",
    "Entry",
    "Fill",
    "Holder",
    "News",
    "PageInfo",
    "PartInfo",
    "Plan",
    "Removed",
    "Row",
    "Store",
    "StoreBase",
    "StoreError",
    "Stored",
    "Totals",
    "Visit",
    "batches",
    "deltas",
    "hreflang",
    "layout",
    "link_sites",
    "newest",
    "news_cutoff",
    "open_store",
    "plan",
    "register_store",
    "removed",
    "weight",
]

StoreFactory = Callable[[str], Store]


@runtime_checkable
class Holder(Protocol):
    """What holds a store with its config: a middleware, which ``site_map()``
    and ``site_health()`` take in a store's place."""

    @property
    def store(self) -> Store: ...

    @property
    def config(self) -> Config: ...


ENTRY_POINT_GROUP = "sitemap_middleware.stores"

# scheme -> "module:function" building the store from its URI.
_BUILTIN = {
    "memory": "sitemap_middleware.stores:_memory",
    "sqlite": "sitemap_middleware.stores:_sqlite",
    "redis": "sitemap_middleware.stores:_redis",
    "rediss": "sitemap_middleware.stores:_redis",
    "postgresql": "sitemap_middleware.stores:_postgres",
    "postgres": "sitemap_middleware.stores:_postgres",
}


_REGISTRY: dict[str, StoreFactory | str] = dict(_BUILTIN)


def register_store(scheme: str, factory: StoreFactory) -> None:
    """Make ``open_store`` build ``factory(uri)`` for URIs of ``scheme``."""
    _REGISTRY[scheme.lower()] = factory


def open_store(uri: str | Store) -> Store:
    """Build the store a URI names, or return a ready store object unchanged.

    .. code-block:: python

        store = open_store("sqlite:///instance/sitemap.sqlite3?part_size=50000")
    """
    if not isinstance(uri, str):
        return uri
    scheme = urlsplit(uri).scheme.lower()
    factory = _REGISTRY.get(scheme)
    if factory is None:
        factory = _from_entry_point(scheme)
    if factory is None:
        known = set(_REGISTRY)
        known.update(p.name.lower() for p in _entry_points())
        raise ConfigError(
            f"unknown store scheme {scheme!r} in {redacted(uri)!r}; known schemes: "
            f"{', '.join(sorted(known))}"
        )
    if isinstance(factory, str):
        module, _, name = factory.partition(":")
        factory = getattr(importlib.import_module(module), name)
    try:
        return factory(uri)
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"bad store URI {redacted(uri)!r}: {exc}") from exc


def link_sites(sites: Mapping[str, tuple[str, Store]]) -> list[Store]:
    """Let the sites' stores settle hreflang clusters across sites. ``sites``:
    each site's ``base_url`` -> the URI of its listing and the store of its
    pipeline. Each store that can (:class:`~.abroad.Clusters`) gets the others
    as its :class:`~.abroad.Abroad`, each through a store object of its own,
    built from the URI: its reads and writes never wait on a connection that
    listing's writer holds. A ``memory://`` listing lives only in its object,
    which is used itself (it reads declarations on a connection of their own,
    which waits for no writer). Returns the store objects it opened, for the
    caller to close."""
    clustered = {
        base: (uri, store)
        for base, (uri, store) in sites.items()
        if isinstance(store, Clusters)
    }
    if len(clustered) < 2:
        return []
    handles: dict[str, Clusters] = {}
    opened: list[Store] = []
    for base, (uri, store) in clustered.items():
        if urlsplit(uri).scheme == "memory":
            handles[base] = store
            continue
        handle = open_store(uri)
        opened.append(handle)
        if isinstance(handle, Clusters):
            handles[base] = handle
    for base, (_, store) in clustered.items():
        # A site's handle settles its pages as its own store does: against
        # the others.
        others = {other: h for other, h in handles.items() if other != base}
        store.abroad = Abroad(base, others)
        if base in handles:
            handles[base].abroad = store.abroad
    return opened


def _from_entry_point(scheme: str) -> StoreFactory | None:
    """The factory an installed distribution declares for ``scheme``, kept in
    the registry once loaded; ``None`` when none does."""
    for point in _entry_points():
        if point.name.lower() == scheme:
            try:
                factory: StoreFactory = point.load()
            except (ImportError, AttributeError) as exc:
                raise ConfigError(
                    f"store scheme {scheme!r}: entry point {point.value!r} "
                    f"does not load: {exc}"
                ) from exc
            _REGISTRY[scheme] = factory
            return factory
    return None


def _entry_points() -> EntryPoints:
    """The stores installed distributions declare."""
    # Imported here: importlib.metadata costs more to import than this package,
    # and only a scheme that is not built in or registered needs it.
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _options(uri: str, allowed: dict[str, type]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in parse_qsl(urlsplit(uri).query, keep_blank_values=True):
        kind = allowed.get(key)
        if kind is None and RENAMED.get(key) in allowed:
            raise ConfigError(
                f"store option {key!r} in {redacted(uri)!r} is now called"
                f" {RENAMED[key]!r}"
            )
        if kind is None:
            raise ConfigError(
                f"unknown option {key!r} in store URI {redacted(uri)!r}; "
                f"expected one of {', '.join(allowed) or 'none'}"
            )
        try:
            options[key] = kind(value)
        except ValueError as exc:
            raise ConfigError(
                f"store option {key!r} must be a {kind.__name__}, got {value!r}"
            ) from exc
    return options


# A site's listing (the option ``site``, config.site_store): a name of
# lower-case letters and digits, kept apart from the default listing's names.
_SITE = re.compile(r"[a-z][a-z0-9]{0,15}")


def _site(options: dict[str, Any]) -> str:
    name: str = options.pop("site", "")
    if name and not _SITE.fullmatch(name):
        raise ConfigError(f"store option 'site' must be a site name, got {name!r}")
    return name


def site_file(path: str, site: str) -> str:
    """The SQLite file of site ``site``'s listing (``""``: the default
    site's, ``path``): a file beside it, so that each file keeps one
    listing: ``sitemap.sqlite3`` -> ``sitemap.site-fr.sqlite3``."""
    if not site:
        return path
    root, ext = os.path.splitext(path)
    return f"{root}.site-{site}{ext}"


def _memory(uri: str) -> Store:
    from .memory import MemoryStore

    # Each memory:// store is a listing of its own already.
    options = _options(uri, {"part_size": int, "part_bytes": int, "site": str})
    _site(options)
    return MemoryStore(**options)


def _sqlite(uri: str) -> Store:
    from .sqlite import SQLiteStore

    parts = urlsplit(uri)
    if parts.netloc:
        raise ConfigError(
            f"SQLite URIs have an empty host: 'sqlite:///relative/file.db' or "
            f"'sqlite:////absolute/file.db', got {redacted(uri)!r}"
        )
    path = unquote(parts.path[1:])  # "sqlite:///x" is relative, "sqlite:////x" not
    if not path:
        raise ConfigError(f"SQLite URI {redacted(uri)!r} names no file")
    options = _options(
        uri, {"part_size": int, "part_bytes": int, "timeout": float, "site": str}
    )
    return SQLiteStore(site_file(path, _site(options)), **options)


def _missing(extra: str, exc: ImportError) -> ConfigError:
    return ConfigError(
        f"this store needs the optional dependency {exc.name or extra!r}: "
        f'pip install "sitemap-middleware[{extra}]"'
    )


def _redis(uri: str) -> Store:
    try:
        from .redis import RedisStore, tagged
    except ImportError as exc:
        raise _missing("redis", exc) from exc
    options = _options(
        uri,
        {
            "part_size": int,
            "part_bytes": int,
            "prefix": str,
            "timeout": float,
            "connect_timeout": float,
            "site": str,
        },
    )
    site = _site(options)
    if site:  # in the same hash tag: "{sitemap}:site:fr:meta"
        options["prefix"] = f"{tagged(options.get('prefix', '{sitemap}:'))}site:{site}:"
    # The query holds only our options; redis-py gets the rest of the URI.
    return RedisStore(urlsplit(uri)._replace(query="").geturl(), **options)


def _postgres(uri: str) -> Store:
    try:
        from .postgres import PostgresStore
    except ImportError as exc:
        raise _missing("postgres", exc) from exc
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    site = _site(dict(item for item in query if item[0] == "site"))
    if site:  # tables of their own: "sitemap_site_fr_url"
        prefix = next((v for k, v in query if k == "table_prefix"), "sitemap_")
        kept = [(k, v) for k, v in query if k not in ("site", "table_prefix")]
        kept.append(("table_prefix", f"{prefix}site_{site}_"))
        uri = parts._replace(query=urlencode(kept)).geturl()
    return PostgresStore(uri)
