
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
for off = 1, #blob, 25 do
  local shard, ends, member, row = struct.unpack('>I4I4c13I4', blob, off)
  local expiry_known = row >= $EXPIRY_SET
  if expiry_known then row = row - $EXPIRY_SET end
  local tag = prefix .. '{i' .. string.format('%x', shard) .. '}'
  if row ~= $NO_RECHECK then
    if buckets == nil then
      buckets = index_buckets(A)
    end
    live_hits(tag, buckets, string.sub(member, 1, 5), row, hits)
  end
  local key = tag .. bucket_suffix(ends)
  redis.call('ZADD', key, 0, member)
  if ends ~= 0 and not expiry_known then touched[key] = ends end
end
-- NX: a bucket key's expiry follows from its name, so it is set once: a key that has it is
-- left alone and nothing is replicated for it
for key, ends in pairs(touched) do redis.call('EXPIREAT', key, ends + margin, 'NX') end
return table.concat(hits)
