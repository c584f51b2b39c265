"""What both middlewares share: the parsed config, the store, the policy, the
recorder and the server, and the public methods built on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import Config
from .policy import Policy
from .recorder import Recorder
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
        self._query_kept = bool(self.config.query)

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

    def _cache_key(self, path: str, query: str) -> str:
        # Dropped query parameters must not make one page look like many (the
        # WSGI adapter inlines this).
        return f"{path}?{query}" if query and self._query_kept else path
