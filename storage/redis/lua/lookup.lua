
local out = {}
for i = 1, #K do out[i] = redis.call('GET', K[i]) end
local prefix = A[1]
local blob = A[2]
local buckets = split(A[3] or '')
local hits = {}
for off = 1, #blob, 13 do
  local row, shard, check = struct.unpack('>I4I4c5', blob, off)
  live_hits(prefix .. '{i' .. string.format('%x', shard) .. '}', buckets, check, row, hits)
end
out[#K + 1] = table.concat(hits)
return out
