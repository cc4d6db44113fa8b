
for i = 1, #K do
  local ttl = tonumber(A[4 + 2 * i])
  if ttl > 0 then redis.call('SET', K[i], A[3 + 2 * i], 'EX', ttl)
  else redis.call('SET', K[i], A[3 + 2 * i]) end
end
local prefix = A[1]
local now = tonumber(A[2])
local blob = A[3]
local turn = tonumber(A[4])
local touched = {}
local hits = {}
for off = 1, #blob, 25 do
  local shard, member, row = struct.unpack('>I4c17I4', blob, off)
  local key = prefix .. '{i' .. string.format('%x', shard) .. '}'
  if row ~= $NO_RECHECK then
    live_hits(key, string.sub(member, 1, 5), row, now, hits)
  end
  redis.call('ZADD', key, 0, member)
  touched[key] = true
end
local n = 0
for key, _ in pairs(touched) do
  if n % $CLEAN_EVERY == turn then
    local sample = redis.call('ZRANDMEMBER', key, $SAMPLE)
    for j = 1, #sample do
      local m = sample[j]
      if #m ~= 17 or struct.unpack('>I4', m, 6) <= now then redis.call('ZREM', key, m) end
    end
  end
  n = n + 1
end
return table.concat(hits)
