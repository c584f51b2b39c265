"""What both middlewares share: the parsed config, the store, the policy, the
recorder and the server, and the public methods built on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import Config
from .policy import RECORD, Policy
from .reasons import Seen
from .recorder import Recorder
from .routes import OPTED_OUT, ROUTE_EXCLUDED, SKIP_KEY, Route, Routes
from .serving import Server
from .stores import Store, open_store


class SitemapBase:
    """Parses the config once and wires the framework-free parts together."""

    def __init__(self, config: Mapping[str, Any] | Config) -> None:
        self.config = Config.from_mapping(config)
        self.store: Store = open_store(self.config.store)
        self.policy = Policy(self.config)
        self.recorder = Recorder(self.config, self.policy, self.store)
        self.server = Server(self.config, self.store)
        self.routes = Routes(self.config)

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

    def _judge(
        self, action: str, state: Mapping[str, Any], path: str, query: str, root: str
    ) -> tuple[str, str, Route]:
        """Settle a ``RECORD`` or ``REMOVE`` with what the app said: the view's
        opt-out, its route's options, and the pages recorded lately.

        ``state`` is the environ or scope, ``root`` the mount prefix the
        middleware saw. Returns the action (or why none), the key of the page
        in the recent-pages cache and the route.
        """
        routes = self.routes
        if SKIP_KEY in state:
            return OPTED_OUT, path, routes.unknown
        recorder = self.recorder
        if action == RECORD and not query and recorder.is_fresh(path):
            # Recorded lately, so its route is not excluded: no need to look.
            return Seen.FRESH, path, routes.unknown
        found = self._find_route(state, root)
        if found is not None:
            route = routes.resolve(*found)
        else:
            route = routes.unknown if action == RECORD else routes.any
        if action != RECORD:
            # A page going away is removed even from an excluded route: it may
            # have been recorded before the route was excluded.
            kept = bool(query) and bool(route.query)
            return action, f"{path}?{query}" if kept else path, route
        if route.exclude:
            return ROUTE_EXCLUDED, path, route
        if query and route.query:
            # Dropped parameters would make one page look like many.
            key = f"{path}?{query}"
            fresh = recorder.is_fresh(key)
            return (Seen.FRESH if fresh else action), key, route
        return action, path, route

    def _find_route(
        self, state: Mapping[str, Any], root: str
    ) -> tuple[str, object] | None:
        """The template and view of the route that served the response."""
        raise NotImplementedError
