"""The last visit of each path per kind of client (stores.contract.Visits): the
``visit`` hash, path -> JSON {agent: [at, status]}, and ``visited``, path by its
newest visit (what a trim ranks unlisted paths by).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...sitemaps import RUN
from ..contract import Visit, latest
from .client import Key, RedisBase, runs

# Each path's held visits merged with the new ones, a visit kept unless the one
# held is later; the path's newest visit its score in the recency set.
# KEYS: visits, recency. ARGV: (path, JSON {agent: [at, status]}) pairs.
VISIT = """
for i = 1, #ARGV, 2 do
  local held = redis.call('hget', KEYS[1], ARGV[i])
  local kept = held and cjson.decode(held) or {}
  for agent, visit in pairs(cjson.decode(ARGV[i + 1])) do
    local old = kept[agent]
    if not old or old[1] <= visit[1] then kept[agent] = visit end
  end
  local newest = 0
  for _, visit in pairs(kept) do newest = math.max(newest, visit[1]) end
  redis.call('hset', KEYS[1], ARGV[i], cjson.encode(kept))
  redis.call('zadd', KEYS[2], newest, ARGV[i])
end
return 0
"""
# A trim: each path (ARGV[1], ARGV[3], ...) dropped if it is still unlisted and
# visited no later than when the trim read it (ARGV[2], ARGV[4], ...).
# KEYS: visits, recency, the rows (hash: path -> row).
UNVISIT = """
local n = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('zscore', KEYS[2], ARGV[i])
  if redis.call('hexists', KEYS[3], ARGV[i]) == 0 and score
      and tonumber(score) <= tonumber(ARGV[i + 1]) then
    redis.call('hdel', KEYS[1], ARGV[i])
    redis.call('zrem', KEYS[2], ARGV[i])
    n = n + 1
  end
end
return n
"""


class VisitsMixin(RedisBase):
    _visit = Key("visit")
    _visited = Key("visited")

    def visited(self, visits: Iterable[Visit]) -> None:
        rows = latest(visits)
        if not rows:
            return
        grouped: dict[str, dict[str, list[int]]] = {}
        for path, agent, at, status in rows:
            grouped.setdefault(path, {})[agent] = [at, status]
        trim = self._trim_due(len(rows))
        for run in runs(list(grouped.items())):
            args: list[Any] = []
            for path, kept in run:
                args += [path, json.dumps(kept)]
            self._script(VISIT, [self._visit, self._visited], args)
        if trim:
            self._trim_visits()

    def _trim_visits(self) -> None:
        """Drop the visits of the unlisted paths beyond the most lately
        visited ``unlisted_visits_kept``: the recency set read a run at a
        time, newest first, the rows asked whether each is listed; what is
        dropped is checked again in the script that drops it."""
        client = self._connection().redis
        kept, doomed, start = 0, [], 0
        while run := client.zrevrange(
            self._visited, start, start + RUN - 1, withscores=True
        ):
            listed = client.hmget(self._rows, [path for path, _ in run])
            for (path, score), row in zip(run, listed, strict=True):
                if row is not None:
                    continue
                if kept < self.unlisted_visits_kept:
                    kept += 1
                else:
                    doomed += [path, repr(score)]
            start += RUN
        keys = [self._visit, self._visited, self._rows]
        for pairs in runs(doomed, 2 * RUN):
            self._script(UNVISIT, keys, pairs)

    def visits(self, paths: Iterable[str] | None = None) -> Iterator[Visit]:
        client = self._connection().redis
        if paths is None:
            for path, held in client.hscan_iter(self._visit, count=RUN):
                yield from _visits(path, held)
            return
        for run in runs(sorted(set(paths))):
            for path, held in zip(run, client.hmget(self._visit, run), strict=True):
                if held is not None:
                    yield from _visits(path, held)


def _visits(path: str | bytes, held: bytes) -> Iterator[Visit]:
    """A path's stored visits (JSON ``{agent: [at, status]}``) as Visits."""
    name = path if isinstance(path, str) else path.decode()
    for agent, (at, status) in json.loads(held).items():
        yield Visit(name, agent, int(at), int(status))
