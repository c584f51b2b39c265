"""Counts and settings (stores.contract.Shared): site-wide counters in the ``counts``
hash, saturated at ``MAX_COUNT``, and named settings in the ``settings`` hash.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contract import MAX_COUNT, deltas
from .client import Key, RedisBase, text


class CountsMixin(RedisBase):
    # Kept apart from meta, which every page write WATCHes.
    _counts_key = Key("counts")
    _settings_key = Key("settings")

    def add_counts(self, counts: Mapping[str, int]) -> None:
        # Not a MULTI: HINCRBY is atomic per field, and a pipeline is one
        # round trip.
        rows = deltas(counts)
        if not rows:
            return
        client = self._connection().redis
        pipe = client.pipeline(transaction=False)
        for reason, n in rows:
            pipe.hincrby(self._counts_key, reason, n)
        # HINCRBY refuses a sum past MAX_COUNT (and changes nothing): those
        # counters stop there.
        results = pipe.execute(raise_on_error=False)
        full = []
        for (reason, _), done in zip(rows, results, strict=True):
            if isinstance(done, Exception):
                if "overflow" not in str(done):
                    raise done
                full.append(reason)
        if full:
            client.hset(self._counts_key, mapping=dict.fromkeys(full, MAX_COUNT))

    def counts(self) -> dict[str, int]:
        found = self._connection().redis.hgetall(self._counts_key)
        return {text(reason): int(n) for reason, n in found.items()}

    def setting(self, name: str) -> str | None:
        value = self._connection().redis.hget(self._settings_key, name)
        return None if value is None else text(value)

    def set_setting(self, name: str, value: str) -> None:
        self._connection().redis.hset(self._settings_key, name, value)
