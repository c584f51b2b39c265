"""The articles of the last two news windows (stores.contract.News): the ``news``
hash, path -> JSON [title, language, name], and ``news_by``, path by published.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...sitemaps import MAX_NEWS
from ..contract import NEWS_KEPT, Article, newest, news_cutoff
from .client import Key, RedisBase, text, unpack

# KEYS: the articles' hash and their sorted set (score: published); ARGV the
# cutoff, the articles kept at most, then path, published, packed of each
# article. Published 0 keeps the stored date, and adds nothing when there is none.
PUBLISH = """
local cutoff, kept = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 3 do
  local path, published = ARGV[i], tonumber(ARGV[i + 1])
  if published ~= 0 then
    redis.call('zadd', KEYS[2], published, path)
    redis.call('hset', KEYS[1], path, ARGV[i + 2])
  elseif redis.call('zscore', KEYS[2], path) then
    redis.call('hset', KEYS[1], path, ARGV[i + 2])
  end
end
local gone = redis.call('zrangebyscore', KEYS[2], '-inf', '(' .. cutoff)
local over = redis.call('zcard', KEYS[2]) - #gone - kept
if over > 0 then
  for _, path in ipairs(redis.call('zrange', KEYS[2], #gone, #gone + over - 1)) do
    gone[#gone + 1] = path
  end
end
for _, path in ipairs(gone) do
  redis.call('zrem', KEYS[2], path)
  redis.call('hdel', KEYS[1], path)
end
return #gone
"""


class NewsMixin(RedisBase):
    _news_key = Key("news")
    _news_by = Key("news_by")

    def publish(self, articles: Iterable[Article], now: int) -> None:
        args: list[Any] = [news_cutoff(now), NEWS_KEPT]
        for a in articles:
            packed = json.dumps([a.title, a.language, a.name], ensure_ascii=False)
            args += [a.path, a.published, packed]
        self._script(PUBLISH, [self._news_key, self._news_by], args)

    def news(self, since: int, limit: int = MAX_NEWS) -> list[Article]:
        client = self._connection().redis
        # At most NEWS_KEPT: all of the window, then its pages held and sorted.
        dated = client.zrangebyscore(self._news_by, since, "+inf", withscores=True)
        if not dated:
            return []
        pipe = client.pipeline(transaction=False)
        for path, _ in dated:
            pipe.hexists(self._rows, path).hget(self._news_key, path)
        replies = pipe.execute()
        found = []
        for (path, published), held, packed in zip(
            dated, replies[::2], replies[1::2], strict=True
        ):
            if held and packed is not None:
                title, language, name = unpack(packed)
                found.append(Article(text(path), int(published), title, language, name))
        return newest(found, limit)
