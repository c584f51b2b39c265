"""The Lua scripts of the pages (sources only), which share the helpers below (as
the site map's do, mapped.py): each runs its reads inside Redis, in one round trip,
where the rows are.
"""

from __future__ import annotations

# Lua's unpack() takes at most ~8000 values: scripts call with 1000 at most.
HELPERS = """
local function hmget(key, fields)
  local values = {}
  for i = 1, #fields, 1000 do
    local part = redis.call('hmget', key, unpack(fields, i, math.min(i + 999, #fields)))
    for k = 1, #part do values[#values + 1] = part[k] end
  end
  return values
end
local function call(command, key, values)
  for i = 1, #values, 1000 do
    redis.call(command, key, unpack(values, i, math.min(i + 999, #values)))
  end
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
# takes six a URL; this script takes five a run of up to sitemaps.RUN rows.
# KEYS: rows, fragments and, for new rows, their part's sorted set.
# ARGV: the paths and the rows, each ending in NUL; the fragments' lengths
# (space-separated) and the fragments joined (they hold NULs themselves); the
# seq before the first new row (new rows of one part take the next ones).
WRITE = (
    HELPERS
    + """
local paths, rows, joined = split(ARGV[1]), split(ARGV[2]), ARGV[4]
local seq = tonumber(ARGV[5])
local stored, fragments, members = {}, {}, {}
local at, k = 1, 0
for size in string.gmatch(ARGV[3], '%d+') do
  k = k + 1
  local stop = at + tonumber(size)
  stored[#stored + 1] = paths[k]
  stored[#stored + 1] = rows[k]
  fragments[#fragments + 1] = paths[k]
  fragments[#fragments + 1] = string.sub(joined, at, stop - 1)
  at = stop
  if KEYS[3] then
    members[#members + 1] = seq + k
    members[#members + 1] = paths[k]
  end
end
call('hset', KEYS[1], stored)
call('hset', KEYS[2], fragments)
if KEYS[3] then call('zadd', KEYS[3], members) end
return k
"""
)
# HDEL of many fields in one argument: KEYS[1] the hash, ARGV[1] the fields,
# each ending in NUL (a bulk load's new paths cost one string, not an argument
# each to encode and send). A hash not there has none of them: nothing split.
FORGET = (
    HELPERS
    + """
if redis.call('exists', KEYS[1]) == 0 then return 0 end
local fields = split(ARGV[1])
call('hdel', KEYS[1], fields)
return #fields
"""
)
