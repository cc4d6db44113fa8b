-- K: keys to delete. A[1]: key prefix; A[2]: index members to remove from the kept bucket, 17 bytes
-- each, big-endian: shard u32, member (13 B); A[3..]: per key, the value it must hold to be deleted
-- ('' = any: a claim is deleted only while the archived document holds it). Returns 1 or 0 per key.
local out = {}
for i = 1, #K do
  local want = A[2 + i]
  if want == '' or redis.call('GET', K[i]) == want then out[i] = redis.call('DEL', K[i]) else out[i] = 0 end
end
local prefix = A[1]
local blob = A[2]
for off = 1, #blob, 17 do
  local shard, member = struct.unpack('>I4c13', blob, off)
  redis.call('ZREM', prefix .. '{i' .. string.format('%x', shard) .. '}k', member)
end
return out
