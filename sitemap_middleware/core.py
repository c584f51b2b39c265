"""What both middlewares share: the parsed config, the store, the policy, the
recorder, the server and the watcher, and the public methods built on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import Config
from .policy import Policy
from .prune import ConfigJudge
from .recorder import Recorder
from .routes import Routes
from .serving import Server
from .stores import Store, open_store
from .watch import Locator, RouteFinder, Watcher


class SitemapBase:
    """Parses the config once and wires the framework-free parts together.

    ``locate`` and ``find_route`` are the adapter's translations of its
    protocol's request state (see :class:`~sitemap_middleware.watch.Watcher`).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | Config,
        locate: Locator,
        find_route: RouteFinder,
    ) -> None:
        self.config = Config.from_mapping(config)
        self.store: Store = open_store(self.config.store)
        self.policy = Policy(self.config)
        self.routes = Routes(self.config)
        # How stored pages are judged again after a change of config
        # (invariant 21). Hook: an adapter that knows the app's route table
        # passes view_for(template) -> view, so that @sitemap options count.
        self.judge = ConfigJudge(
            self.config, self.policy, self.routes.resolve, view_for=None
        )
        self.recorder = Recorder(self.config, self.policy, self.store, self.judge)
        self.server = Server(self.config, self.store, self.recorder.explain)
        self.watcher = Watcher(
            self.policy, self.routes, self.recorder, locate, find_route
        )

    def flush(self, timeout: float | None = 5.0) -> bool:
        """Block until everything queued so far is in the store.

        :returns: ``False`` if ``timeout`` seconds ran out first.
        """
        return self.recorder.flush(timeout)

    def stats(self) -> dict[str, Any]:
        """Counters: ``recorded``, ``removed``; ``queued`` (observations not
        yet digested) and ``pending`` (writes waiting for the store); and by
        reason ``skipped``, ``dropped``, ``seen`` (pages not written again) and
        ``errors`` (failed store writes, retried later)."""
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
        """Flush, stop the writer thread and close the store."""
        self.recorder.close()
