
local out = {}
for i = 1, #K do out[i] = redis.call('GET', K[i]) end
local prefix = A[1]
local now = tonumber(A[2])
local blob = A[3]
local hits = {}
for off = 1, #blob, 13 do
  local row, shard, check = struct.unpack('>I4I4c5', blob, off)
  live_hits(prefix .. '{i' .. string.format('%x', shard) .. '}', check, row, now, hits)
end
out[#K + 1] = table.concat(hits)
return out
