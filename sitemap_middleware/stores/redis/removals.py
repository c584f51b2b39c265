"""The removals log (stores.contract.Removals): the last paths removed, newest first, in
the ``removed`` list, numbered by meta's ``removed`` field; page removals feed it.
"""

from __future__ import annotations

from ..contract import Removed
from .client import Key, Pipeline, RedisBase, runs, text

# Read with the epoch in one round trip: the epoch, the removal number now,
# whether the log reaches back to ARGV[1] (1 or 0) and the paths numbered after
# it, newest first (ARGV[1] '': none asked for).
# KEYS: meta (fields epoch, removed), the log (a list, newest first).
REMOVED = """
local meta = redis.call('hmget', KEYS[1], 'epoch', 'removed')
local epoch, top = meta[1] or '', tonumber(meta[2] or '0')
if ARGV[1] == '' then return {epoch, top, 1, {}} end
local newer = top - tonumber(ARGV[1])
if newer == 0 then return {epoch, top, 1, {}} end
if newer < 0 or newer > redis.call('llen', KEYS[2]) then return {epoch, top, 0, {}} end
return {epoch, top, 1, redis.call('lrange', KEYS[2], 0, newer - 1)}
"""


class RemovalsMixin(RedisBase):
    _removed = Key("removed")

    def removed_since(self, seq: int | None) -> Removed:
        reply = self._script(
            REMOVED, [self._meta, self._removed], ["" if seq is None else seq]
        )
        epoch, top, reaches, paths = reply
        if not reaches:
            return Removed(text(epoch), int(top), None)
        # Read newest first: the oldest first, as the protocol gives them.
        return Removed(text(epoch), int(top), tuple(map(text, reversed(paths))))

    def _log_removed(self, pipe: Pipeline, paths: list[str]) -> None:
        """Keep the last ``removals_kept``; between MULTI and EXEC, so that a
        reader sees the log and its number move together."""
        names = sorted(paths)
        for run in runs(names):
            pipe.lpush(self._removed, *run)
        pipe.ltrim(self._removed, 0, self.removals_kept - 1)
        pipe.hincrby(self._meta, "removed", len(names))
