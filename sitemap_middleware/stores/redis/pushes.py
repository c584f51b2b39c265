"""IndexNow's pending pushes (stores.contract.Pushes): the ``push`` sorted set, path ->
lease (0: free), which page writes feed in their own transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

from .client import Key, Pipeline, RedisBase, runs, text

# Claims up to ARGV[2] paths whose lease ended by ARGV[1], leased until ARGV[3].
CLAIM = """
local paths = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for i = 1, #paths do redis.call('zadd', KEYS[1], ARGV[3], paths[i]) end
return paths
"""
# The paths (ARGV[3]...) still held by the claim ARGV[1]: deleted when ARGV[2]
# is empty, else leased until ARGV[2]. Returns how many.
HELD = """
local claim, at, n = tonumber(ARGV[1]), ARGV[2], 0
for i = 3, #ARGV do
  local lease = redis.call('zscore', KEYS[1], ARGV[i])
  if lease and tonumber(lease) == claim then
    if at == '' then
      redis.call('zrem', KEYS[1], ARGV[i])
    else
      redis.call('zadd', KEYS[1], at, ARGV[i])
    end
    n = n + 1
  end
end
return n
"""


class PushesMixin(RedisBase):
    _push_key = Key("push")

    def queue_pushes(self, paths: Iterable[str]) -> None:
        wanted = list(paths)
        if wanted:
            pipe = self._connection().redis.pipeline(transaction=True)
            self._queue(pipe, wanted)
            pipe.execute()

    def _queue(self, pipe: Pipeline, paths: list[str]) -> None:
        for run in runs(paths):
            pipe.zadd(self._push_key, dict.fromkeys(run, 0))

    def _withdraw(self, pipe: Pipeline, paths: list[str]) -> None:
        """Withdraw a removal's pending pushes in its transaction."""
        for run in runs(paths):
            pipe.zrem(self._push_key, *run)

    def claim_pushes(self, limit: int, now: float, until: float) -> list[str]:
        found = self._script(CLAIM, [self._push_key], [repr(now), limit, repr(until)])
        return [text(path) for path in found]

    def pushed(self, paths: Iterable[str], until: float) -> int:
        return self._held(paths, until, "")

    def retry_pushes(self, paths: Iterable[str], until: float, at: float) -> None:
        self._held(paths, until, repr(at))

    def _held(self, paths: Iterable[str], until: float, at: str) -> int:
        wanted = list(paths)
        if not wanted:
            return 0
        return int(self._script(HELD, [self._push_key], [repr(until), at, *wanted]))

    def pending_pushes(self) -> int:
        return int(self._connection().redis.zcard(self._push_key))
