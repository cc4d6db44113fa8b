
local prefix, blob = A[1], A[2]
local margin = tonumber(A[5])
local r = tonumber(A[8])  -- the class sets before the values
for i = 1, #K do
  local ttl = tonumber(A[10 + r + 2 * (i - 1)])
  if ttl > 0 then redis.call('SET', K[i], A[9 + r + 2 * (i - 1)], 'EX', ttl)
  else redis.call('SET', K[i], A[9 + r + 2 * (i - 1)]) end
end
local touched = {}
local hits = {}
local buckets = nil
local opening = prefix .. '{i'
local suffixes = {}  -- a window's entries fall in a bucket or two: each suffix is formatted once
for off = 1, #blob, 25 do
  local shard, ends, member, row = unpack('>I4I4c13I4', blob, off)
  local expiry_known = row >= $EXPIRY_SET
  if expiry_known then row = row - $EXPIRY_SET end
  local suffix = suffixes[ends]
  if suffix == nil then
    suffix = bucket_suffix(ends)
    suffixes[ends] = suffix
  end
  local key
  if row ~= $NO_RECHECK then
    if buckets == nil then
      buckets = index_buckets(A)
    end
    local tag = opening .. format('%x', shard) .. '}'
    live_hits(tag, buckets, sub(member, 1, 5), row, hits)
    key = tag .. suffix
  else
    key = opening .. format('%x', shard) .. '}' .. suffix
  end
  rcall('ZADD', key, '0', member)
  if ends ~= 0 and not expiry_known then touched[key] = ends end
end
-- NX: a bucket key's expiry follows from its name, so it is set once: a key that has it is
-- left alone and nothing is replicated for it
for key, ends in pairs(touched) do redis.call('EXPIREAT', key, ends + margin, 'NX') end
return table.concat(hits)
