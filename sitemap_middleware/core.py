"""What both middlewares share: the parsed config, the store, the policy, the
recorder, the server and the watcher, and the public methods built on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import Config
from .policy import Policy
from .recorder import Recorder
from .routes import Routes
from .serving import Server
from .stores import Store, open_store
from .watch import CookieReader, Locator, RouteFinder, Watcher


class SitemapBase:
    """Parses the config once and wires the framework-free parts together.

    ``locate``, ``find_route`` and ``cookie`` are the adapter's translations
    of its protocol's request state (see :class:`~sitemap_middleware.watch.Watcher`).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | Config,
        locate: Locator,
        find_route: RouteFinder,
        cookie: CookieReader,
    ) -> None:
        self.config = Config.from_mapping(config)
        self.store: Store = open_store(self.config.store)
        self.policy = Policy(self.config)
        self.recorder = Recorder(self.config, self.policy, self.store)
        self.server = Server(self.config, self.store)
        self.routes = Routes(self.config)
        self.watcher = Watcher(
            self.policy, self.routes, self.recorder, locate, find_route, cookie
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

    def close(self) -> None:
        """Flush, stop the writer thread and close the store."""
        self.recorder.close()
