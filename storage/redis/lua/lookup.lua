
local prefix, blob = A[1], A[2]
local out = {}
for i = 1, #K do out[i] = redis.call('GET', K[i]) end
local hits, classes = {}, ''
if #blob > 0 then
  local buckets
  buckets, classes = index_buckets(A)
  local opening = prefix .. '{i'
  for off = 1, #blob, 13 do
    local row, shard, check = unpack('>I4I4c5', blob, off)
    live_hits(opening .. format('%x', shard) .. '}', buckets, check, row, hits)
  end
end
out[#K + 1] = table.concat(hits)
out[#K + 2] = classes
return out
