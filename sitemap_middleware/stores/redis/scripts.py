"""The Lua scripts of the pages (sources only), which share the helpers below (as
the site map's do, mapped.py): each runs its reads inside Redis, in one round trip,
where the rows are.
"""

from __future__ import annotations

# Lua's unpack() takes at most ~8000 values: scripts call with 2000 at most.
# The tables are filled by a count kept, not #t + 1 (a search each time).
HELPERS = """
local function hmget(key, fields)
  local count = #fields
  if count == 0 then return {} end
  if count <= 1000 then return redis.call('hmget', key, unpack(fields)) end
  local values, n = {}, 0
  for i = 1, #fields, 1000 do
    local part = redis.call('hmget', key, unpack(fields, i, math.min(i + 999, #fields)))
    for k = 1, #part do
      n = n + 1
      values[n] = part[k]
    end
  end
  return values
end
local function call(command, key, values)
  for i = 1, #values, 2000 do
    redis.call(command, key, unpack(values, i, math.min(i + 1999, #values)))
  end
end
local function split(joined)
  local items, n, start, find, sub = {}, 0, 1, string.find, string.sub
  while true do
    local stop = find(joined, '\0', start, true)
    if not stop then return items end
    n = n + 1
    items[n] = sub(joined, start, stop - 1)
    start = stop + 1
  end
end
"""
# Every read a write needs, in one round trip inside the WATCH: the lock's
# holder, seq, the last page, (path, row, fragment) of each stored path of the
# batch, (page, summary) of their pages, of the last page and of each
# section's open page (its highest; the default's: the highest no section
# names), and (page, section) of every page of a named section.
# KEYS: meta, lock, rows, fragments, pages, titles, sections, descriptions,
# places. ARGV[1]: the paths, each ending in NUL. A hit is (path, row,
# fragment, title or '', description or '', place or '').
READ = (
    HELPERS
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
  local titles = hmget(KEYS[6], names)
  local descriptions = hmget(KEYS[8], names)
  local places = hmget(KEYS[9], names)
  for k = 1, #hits do
    found[#found + 1] = names[k]
    found[#found + 1] = rows[hits[k]]
    found[#found + 1] = fragments[k] or ''
    found[#found + 1] = titles[k] or ''
    found[#found + 1] = descriptions[k] or ''
    found[#found + 1] = places[k] or ''
  end
end
if meta[2] then pages[meta[2]] = true end
local named = redis.call('hgetall', KEYS[7])
local open, held = {}, {}
for k = 1, #named, 2 do
  local page = tonumber(named[k])
  held[page] = true
  if not open[named[k + 1]] or page > open[named[k + 1]] then
    open[named[k + 1]] = page
  end
end
for _, page in pairs(open) do pages[tostring(page)] = true end
local default = tonumber(meta[2] or '0')
while default > 0 and held[default] do default = default - 1 end
if default > 0 then pages[tostring(default)] = true end
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
        summaries, named}
"""
)
# One run of a page (keyset on seq, atomic, so no row is seen half-removed),
# joined in Redis: a run costs the client one bulk reply, not two per URL.
# KEYS: the page's sorted set, the hash to read. ARGV: the seq to start after,
# how many, 'f' (fragments joined) or 'e' (paths, rows and, from KEYS[3] and
# KEYS[4], the titles and descriptions as JSON arrays). Returns {seq of the
# last member, members read, payload...}.
RUN = """
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
local texts = {}
for key = 3, 4 do
  local found = redis.call('hmget', KEYS[key], unpack(members))
  for k = 1, n do found[k] = found[k] and cjson.encode(found[k]) or 'null' end
  texts[key - 2] = '[' .. table.concat(found, ',') .. ']'
end
return {last, n, cjson.encode(members), '[' .. table.concat(out, ',') .. ']',
        texts[1], texts[2]}
"""
# The newest lastmod of a page's rows but those leaving it, computed where the
# rows are instead of shipping up to 50,000 of them.
# KEYS: the page's sorted set, rows. ARGV[1]: the leaving paths, each ending in NUL.
NEWEST = (
    HELPERS
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

# An upsert's rows, written where they are stored: redis-py packs each argument
# of a command in Python (about a microsecond each), and an HSET/ZADD of its own
# takes six a URL; this script takes four a run of up to sitemaps.RUN rows.
# KEYS: rows, fragments and, for new rows, their part's sorted set.
# ARGV: each path and its row, each ending in NUL (split, they are the rows
# hash's HSET as it is); the fragments' lengths (space-separated) and the
# fragments joined (they hold NULs themselves); the seq before the first new
# row (new rows of one part take the next ones). Its time is mostly Lua making
# a string of each path, row and fragment; the fewer steps and tables around
# them cut Redis' time by a tenth (3.9 against 4.3 ms for 1,000 new rows).
WRITE = (
    HELPERS
    + """
local stored = split(ARGV[1])
local n, joined, seq, part = #stored, ARGV[3], tonumber(ARGV[4]), KEYS[3]
local fragments, members = {}, {}
local at, k = 1, 0
for size in string.gmatch(ARGV[2], '%d+') do
  local stop = at + size
  local path = stored[k + 1]
  fragments[k + 1] = path
  fragments[k + 2] = string.sub(joined, at, stop - 1)
  at = stop
  if part then
    members[k + 1] = seq + k / 2 + 1
    members[k + 2] = path
  end
  k = k + 2
end
call('hset', KEYS[1], stored)
call('hset', KEYS[2], fragments)
if part then call('zadd', part, members) end
return n / 2
"""
)
# HDEL of many fields in one argument: KEYS the hashes, ARGV[k] the fields of
# KEYS[k], each ending in NUL (a bulk load's new paths cost one string, not an
# argument each to encode and send; the titles' and descriptions' one call).
# A hash not there has none of them: nothing split.
FORGET = (
    HELPERS
    + """
local n = 0
for k = 1, #KEYS do
  if redis.call('exists', KEYS[k]) == 1 then
    local fields = split(ARGV[k])
    call('hdel', KEYS[k], fields)
    n = n + #fields
  end
end
return n
"""
)
