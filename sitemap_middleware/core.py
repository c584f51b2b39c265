"""What both middlewares share: the parsed config, the store, the policy, the
recorder, the server, the watcher and the app's route table once known, and the
public methods built on them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from .apps import RouteTable, check_spelling, unknown_routes
from .config import Config
from .crawlers import Agents
from .errors import ConfigError, StoreError, StoreFault
from .recording.recheck import ConfigJudge
from .recording.recorder import Recorder
from .recording.sharing import site_name
from .routes import Routes
from .serving.server import SERVE_WAIT, Server
from .stores import Store, link_sites, open_store
from .stores.contract import Checked, Placed
from .watching.policy import Policy
from .watching.watcher import CookieReader, Locator, RouteFinder, Watcher

logger = logging.getLogger("sitemap_middleware")


class SitemapBase:
    """Parses the config once and wires the framework-free parts together.

    ``locate``, ``find_route`` and ``cookie`` are the adapter's translations
    of its protocol's request state (see
    :class:`~sitemap_middleware.watching.watcher.Watcher`);
    ``spelling`` is how its framework writes route templates
    (:data:`~sitemap_middleware.apps.WERKZEUG` or ``STARLETTE``);
    ``own_folder`` a folder the app owns (Flask's instance folder), made when
    the store's file is to be in it; ``route_stays`` whether the route
    ``find_route`` reads stays in the request's state once the response is
    sent (ASGI's scope), so that the writer's thread reads it.

    :raises ConfigError: for a bad config, a ``routes`` key in the other
        framework's syntax among them, or a store file named where none can
        ever be (its folder missing).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | Config,
        locate: Locator,
        find_route: RouteFinder,
        spelling: str,
        cookie: CookieReader,
        own_folder: str | None = None,
        route_stays: bool = False,
    ) -> None:
        whole = Config.from_mapping(config)
        # With several sites, this middleware is the default site's; the
        # adapter builds the others (_each_site) and selects one per request.
        first = whole.sites[0].name if whole.sites and not whole.site else ""
        self.config = whole.for_site(first) if first else whole
        self._whole = whole
        # Host -> the middleware of its site (an adapter's, called with the
        # request); None with one site, whose requests cost no lookup.
        self._sites: dict[str, Any] | None = None
        self._others: tuple[SitemapBase, ...] = ()
        self._by_name: dict[str, SitemapBase] = {}
        # The store objects through which each site reads the others'.
        self._abroad: list[Store] = []
        check_spelling(self.config.routes, spelling)
        self._table: RouteTable | None = None
        self._learning = threading.Lock()
        self.store: Store = open_store(self.config.store)
        _check(self.store, own_folder)
        self.policy = Policy(self.config)
        self.routes = Routes(self.config)
        # How stored pages are judged again after a change of config
        # (invariant 21): with the app's views once its routes are known, so
        # that @sitemap options and framework pages count too.
        self.judge = ConfigJudge(
            self.config, self.policy, self.routes.resolve, view_for=self._view_for
        )
        self.recorder = Recorder(self.config, self.policy, self.store, self.judge)
        self.server = Server(
            self.config,
            self.store,
            self.recorder.check_hints,
            site_name=partial(site_name, self.store),
            wait=SERVE_WAIT,
            pending=self.recorder.adding,
            ahead=True,
        )
        self.watcher = Watcher(
            self.policy,
            self.routes,
            self.recorder,
            locate,
            find_route,
            cookie,
            route_stays,
        )
        # The User-Agents that claim a search engine's crawler (none when
        # crawls are not kept): the adapters look each request's up.
        crawlers = self.config.crawlers
        self.agents = Agents(() if crawlers is None else crawlers.engines)
        # The middleware's own documents (paths.py): what their paths start
        # with, which an adapter tests on every request skipped; then whether
        # it answers one alone or amends the app's answer (robots.txt): two
        # predicates, not the row, since a local more in an adapter's
        # __call__ costs every request its frame slot.
        documents = self.config.documents
        self._gate = documents.gate
        self._answers = documents.answers
        self._amends = documents.amends

    def _each_site(self, build: Callable[[Config], SitemapBase]) -> None:
        """With several ``sites``: the middleware of each other site, built
        by ``build`` from its config, and which one each configured host
        selects (``config.site_host`` of the ``Host`` value). An unknown host
        selects none: the default site's documents answer it, its policy
        records nothing."""
        whole = self._whole
        if whole.site or len(whole.sites) < 2:  # one site's config: itself
            return
        by_name: dict[str, SitemapBase] = {whole.sites[0].name: self}
        for site in whole.sites[1:]:
            by_name[site.name] = build(whole.for_site(site.name))
        self._others = tuple(by_name.values())[1:]
        self._sites = {
            host: by_name[site.name] for site in whole.sites for host in site.hosts
        }
        self._by_name = by_name
        # hreflang clusters may span the sites: each store reads the others'.
        self._abroad = link_sites(
            {
                site.config.base_url: (site.config.store, site.store)
                for site in by_name.values()
                if isinstance(site.config.store, str)
            }
        )

    def site(self, name: str) -> SitemapBase:
        """The middleware of the site ``name`` of the ``sites`` key (itself
        for the default site, or with no ``sites``): its own ``stats()``,
        ``site_stats()``, ``store`` and ``config``.

        :raises KeyError: for a name ``sites`` does not hold.
        """
        if self._sites is None:
            if name in ("", self.config.site):
                return self
            raise KeyError(name)
        return self._by_name[name]

    def table(self) -> RouteTable | None:
        """The app's route table, ``None`` until known: from the first page
        response on (Flask's routes are final by then), or from lifespan
        startup on Starlette and FastAPI. ``table().views[template]`` is the
        view whose ``@sitemap`` options apply to the pages of ``template``;
        ``table().framework`` the templates of the framework's own pages."""
        return self._table

    def _view_for(self, template: str) -> object:
        table = self._table
        return None if table is None else table.views.get(template)

    def _learn(self, table: RouteTable, final: bool, quiet: bool = False) -> None:
        """The app's routes are known. A ``routes`` key naming none of them is
        a ``ConfigError`` if ``final`` (no route may be added any more), else
        one warning; either way once per middleware. ``quiet``: the app's own
        middleware has warned already (this one replaces it for a command)."""
        with self._learning:
            if self._table is not None:
                return
            self._table = table
            self.routes.use(table)
        if quiet:
            return
        self._warn_hidden(table)
        unknown = unknown_routes(self.config.routes, table)
        if not unknown:
            return
        import difflib  # only a key that names no route needs it

        close = difflib.get_close_matches(unknown[0], list(table.views), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        message = (
            f"'routes' key {unknown[0]!r} matches no route of the app{hint}"
            f" (its routes: {', '.join(sorted(table.views)[:20]) or 'none'})"
        )
        if final:
            raise ConfigError(message)
        logger.warning("%s; its options apply to no page", message)

    def _warn_hidden(self, table: RouteTable) -> None:
        """One WARNING when the app routes a path the middleware answers in
        its place (its own sitemap view): that route is unreachable now.
        robots.txt is not among them: the middleware amends the app's."""
        hidden = []
        for template in sorted(table.gets):
            path = table.path_of(template)
            document = None if path is None else self.config.documents.claim(path)
            if document is not None and not document.asks_app:
                hidden.append((template, path, document))
        if not hidden:
            return
        template, path, document = hidden[0]
        if not document.template:  # a path of a config key's
            remedy = f"the {document.option!r} key puts the middleware's elsewhere"
        elif document.option:
            remedy = f"the {document.option!r} key turns the middleware's off"
        else:
            remedy = "no key moves the middleware's: remove the app's route"
        logger.warning(
            "the app's route %r serves %s, which the sitemap middleware answers"
            " in its place: the app's page is unreachable (%s)%s",
            template,
            path,
            remedy,
            "" if len(hidden) == 1 else f"; {len(hidden) - 1} more such routes",
        )

    def hold_recheck(self) -> None:
        """Leave the stored pages as they are, whatever the config now refuses:
        no re-check of them (invariant 21) by this middleware or its other
        sites' in this process. A command that loads the app asks it first,
        so that it changes the store only as it says (``prune --yes`` removes
        what it prints)."""
        for site in (self, *self._others):
            site.recorder.hold_recheck()

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Block until everything queued so far is in the store.

        :returns: ``False`` if ``timeout`` seconds ran out first.
        """
        done = self.recorder.flush(timeout)
        for other in self._others:  # each site's own writer
            done = other.recorder.flush(timeout) and done
        return done

    def stats(self) -> dict[str, Any]:
        """Counters: ``recorded``, ``removed``; ``queued`` (observations not
        yet digested) and ``pending`` (writes waiting for the store); and by
        reason ``skipped``, ``dropped``, ``seen`` (pages not written again),
        ``errors`` (failed store writes, retried later) and ``crawls`` (what
        became of the requests claiming a search engine's crawler)."""
        return self.recorder.stats()

    def site_stats(self) -> dict[str, Any]:
        """The counters of :meth:`stats` summed over every worker and machine
        that writes to the store (each writer adds its counts to the store's
        every few seconds and when flushed), plus the store's ``urls`` (pages
        listed) and ``parts`` (sitemap files). ``queued`` and ``pending`` are
        this process's.

        :raises StoreError: when the store cannot be read.
        """
        return self.recorder.site_stats()

    def close(self) -> None:
        """Flush, stop the writer thread and close the store (of every site)."""
        self.recorder.close()
        for other in self._others:
            other.recorder.close()
        for store in self._abroad:
            store.close()


def checked(config: Mapping[str, Any] | Config, spelling: str) -> Config:
    """The config parsed, its route keys' syntax and its store URI checked
    (``open_store`` parses the URI and its options; it connects only when
    first used, so nothing is opened here), an SQLite file's folder looked
    at (``Placed``): what an adapter checks when it is installed, before the
    middleware is built.

    :raises ConfigError: naming the key at fault.
    """
    parsed = Config.from_mapping(config)
    check_spelling(parsed.routes, spelling)
    if isinstance(parsed.store, str):  # a ready store object is the caller's
        store = open_store(parsed.store)
        if isinstance(store, Placed):
            store.place()
        store.close()
    return parsed


def _check(store: Store, own_folder: str | None) -> None:
    """A store file named where none can ever be (its folder missing) is a
    ``ConfigError``: the app does not start. A store that cannot be used
    until someone acts (a damaged file, a schema this release cannot read) is
    an ERROR at start-up, naming it and what to do; the app still starts (the
    request path fails open), and the sitemap answers 503 while it lasts. An
    outage (a server down) is left to the writer, which retries it."""
    if isinstance(store, Placed):
        store.place(own_folder)
    if not isinstance(store, Checked):
        return
    try:
        store.check()
    except StoreFault as exc:
        logger.error("sitemap store unusable at start-up: %s", exc)
    except StoreError:
        pass
