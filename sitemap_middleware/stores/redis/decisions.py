"""The writers' decisions log (stores.contract.Decisions): each path's last decisions
in the ``decision`` hash, the paths kept by recency in ``decided``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..contract import Decision, unlogged
from .client import Key, RedisBase

# Noted at once (every writer's log read and written whole): each path's log
# extended and cut to its last ARGV[1], the path made the newest in the recency
# set, which keeps the ARGV[2] newest paths.
# KEYS: logs (hash), recency (sorted set), its counter.
# ARGV: keep, paths kept, then (path, JSON [[reason, seconds], ...]) pairs.
NOTE = """
local keep, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 2 do
  local held = redis.call('hget', KEYS[1], ARGV[i])
  local log = held and cjson.decode(held) or {}
  for _, decision in ipairs(cjson.decode(ARGV[i + 1])) do log[#log + 1] = decision end
  local cut = {}
  for k = math.max(1, #log - keep + 1), #log do cut[#cut + 1] = log[k] end
  redis.call('hset', KEYS[1], ARGV[i], cjson.encode(cut))
  redis.call('zadd', KEYS[2], redis.call('incr', KEYS[3]), ARGV[i])
end
local extra = redis.call('zcard', KEYS[2]) - limit
if extra > 0 then
  local gone = redis.call('zrange', KEYS[2], 0, extra - 1)
  redis.call('zremrangebyrank', KEYS[2], 0, extra - 1)
  for k = 1, #gone, 1000 do
    redis.call('hdel', KEYS[1], unpack(gone, k, math.min(k + 999, #gone)))
  end
end
return 0
"""


class DecisionsMixin(RedisBase):
    _log = Key("decision")
    _decided = Key("decided")
    _decided_seq = Key("decided_seq")

    def note(self, decisions: Iterable[Decision]) -> None:
        grouped = self._grouped(decisions)
        if not grouped:
            return
        args: list[Any] = [self.decisions_kept, self.decision_paths]
        for path, added in grouped.items():
            args += [path, json.dumps(added)]
        self._script(NOTE, [self._log, self._decided, self._decided_seq], args)

    def decisions(self, path: str) -> list[tuple[str, datetime]]:
        return unlogged(self._connection().redis.hget(self._log, path))
