
for i = 1, #K do
  local ttl = tonumber(A[4 + 2 * i])
  if ttl > 0 then redis.call('SET', K[i], A[3 + 2 * i], 'EX', ttl)
  else redis.call('SET', K[i], A[3 + 2 * i]) end
end
local prefix = A[1]
local blob = A[2]
local margin = tonumber(A[3])
local buckets = split(A[4])
local touched = {}
local hits = {}
for off = 1, #blob, 25 do
  local shard, ends, member, row = struct.unpack('>I4I4c13I4', blob, off)
  local tag = prefix .. '{i' .. string.format('%x', shard) .. '}'
  if row ~= $NO_RECHECK then
    live_hits(tag, buckets, string.sub(member, 1, 5), row, hits)
  end
  local key = tag .. bucket_suffix(ends)
  redis.call('ZADD', key, 0, member)
  if ends ~= 0 then touched[key] = ends end
end
-- NX: a bucket key's expiry follows from its name, so it is set once: a key that has it is
-- left alone and nothing is replicated for it
for key, ends in pairs(touched) do redis.call('EXPIREAT', key, ends + margin, 'NX') end
return table.concat(hits)
