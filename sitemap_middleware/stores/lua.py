"""The Lua scripts of the Redis store: each runs its reads inside Redis, in one
round trip, where the rows are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError

# Releases the writers' lock only if this writer still holds it.
UNLOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# Lua's unpack() takes at most ~8000 values: scripts call with 1000 at most.
_LUA_HMGET = """
local function hmget(key, fields)
  local values = {}
  for i = 1, #fields, 1000 do
    local part = redis.call('hmget', key, unpack(fields, i, math.min(i + 999, #fields)))
    for k = 1, #part do values[#values + 1] = part[k] end
  end
  return values
end
local function split(joined)
  local items, start = {}, 1
  while true do
    local stop = string.find(joined, '\0', start, true)
    if not stop then return items end
    items[#items + 1] = string.sub(joined, start, stop - 1)
    start = stop + 1
  end
end
"""
# Every read a write needs, in one round trip inside the WATCH: the lock's
# holder, seq, the last page, (path, row, fragment) of each stored path of the
# batch, and (page, summary) of their pages and of the last page.
# KEYS: meta, lock, rows, fragments, pages. ARGV[1]: the paths, each ending in NUL.
_READ = (
    _LUA_HMGET
    + """
local meta = redis.call('hmget', KEYS[1], 'seq', 'last')
local paths = split(ARGV[1])
local rows = hmget(KEYS[3], paths)
local hits, pages, wanted = {}, {}, {}
for k = 1, #paths do
  if rows[k] then
    hits[#hits + 1] = k
    pages[string.match(rows[k], '^%[(%d+)')] = true
  end
end
local found = {}
if #hits > 0 then
  local names = {}
  for k = 1, #hits do names[k] = paths[hits[k]] end
  local fragments = hmget(KEYS[4], names)
  for k = 1, #hits do
    found[#found + 1] = names[k]
    found[#found + 1] = rows[hits[k]]
    found[#found + 1] = fragments[k] or ''
  end
end
if meta[2] then pages[meta[2]] = true end
for page in pairs(pages) do wanted[#wanted + 1] = page end
local summaries = {}
local values = hmget(KEYS[5], wanted)
for k = 1, #wanted do
  if values[k] then
    summaries[#summaries + 1] = wanted[k]
    summaries[#summaries + 1] = values[k]
  end
end
return {redis.call('get', KEYS[2]) or '', meta[1] or '0', meta[2] or '0', found,
        summaries}
"""
)
# One run of a page (keyset on seq, atomic, so no row is seen half-removed),
# joined in Redis: a run costs the client one bulk reply, not two per URL.
# KEYS: the page's sorted set, the hash to read. ARGV: the seq to start after,
# how many, 'f' (fragments joined) or 'e' (paths and rows as JSON arrays).
# Returns {seq of the last member, members read, payload...}.
_RUN = """
local members = redis.call('zrangebyscore', KEYS[1], '(' .. ARGV[1], '+inf',
                           'LIMIT', 0, tonumber(ARGV[2]))
local n = #members
if n == 0 then return {ARGV[1], 0} end
local last = redis.call('zscore', KEYS[1], members[n])
local values = redis.call('hmget', KEYS[2], unpack(members))
local out = {}
if ARGV[3] == 'f' then
  for k = 1, n do
    if values[k] then out[#out + 1] = values[k] end
  end
  return {last, n, table.concat(out)}
end
for k = 1, n do out[k] = values[k] or 'null' end
return {last, n, cjson.encode(members), '[' .. table.concat(out, ',') .. ']'}
"""
# The newest lastmod of a page's rows but those leaving it, computed where the
# rows are instead of shipping up to 50,000 of them.
# KEYS: the page's sorted set, rows. ARGV[1]: the leaving paths, each ending in NUL.
_NEWEST = (
    _LUA_HMGET
    + """
local leaving = {}
for _, path in ipairs(split(ARGV[1])) do leaving[path] = true end
local newest, start = 0, 0
while true do
  local members = redis.call('zrange', KEYS[1], start, start + 999)
  if #members == 0 then return newest end
  local rows = hmget(KEYS[2], members)
  for k = 1, #members do
    if rows[k] and not leaving[members[k]] then
      local lastmod = tonumber(string.match(rows[k], '^%[%d+,(%-?%d+)'))
      if lastmod > newest then newest = lastmod end
    end
  end
  start = start + 1000
end
"""
)


class Script:
    """A Lua script run by EVALSHA, sent in full only when the server lacks it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, client: Any, keys: Sequence[str], *args: Any) -> Any:
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return client.eval(self.source, len(keys), *keys, *args)


read = Script(_READ)
run = Script(_RUN)
newest = Script(_NEWEST)
