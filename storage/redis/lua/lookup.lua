
local prefix, blob = A[1], A[2]
local r = tonumber(A[8])
local R = {}
for i = 1, r do R[i] = A[8 + i] end
local out = {}
for i = 1, #K do out[i] = redis.call('GET', K[i]) end
local hits, classes = {}, ''
if #blob > 0 then
  local buckets
  buckets, classes = class_buckets(R, tonumber(A[3]), tonumber(A[4]), tonumber(A[5]), tonumber(A[6]), A[7])
  for off = 1, #blob, 13 do
    local row, shard, check = struct.unpack('>I4I4c5', blob, off)
    live_hits(prefix .. '{i' .. string.format('%x', shard) .. '}', buckets, check, row, hits)
  end
end
out[#K + 1] = table.concat(hits)
out[#K + 2] = classes
return out
