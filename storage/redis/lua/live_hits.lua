
local top = string.rep('\255', 8)
local function live_hits(tag, buckets, check, row, hits)
  local lo, hi = '[' .. check, '[' .. check .. top
  local head = struct.pack('>I4', row)
  for b = 1, #buckets do
    local got = redis.call('ZRANGE', tag .. buckets[b], lo, hi, 'BYLEX')
    for j = 1, #got do hits[#hits + 1] = head .. string.sub(got[j], 6) end
  end
end
local function split(list)
  local out = {}
  for part in string.gmatch(list, '[^,]+') do out[#out + 1] = part end
  return out
end
local function bucket_suffix(ends)
  if ends == 0 then return 'k' end
  return string.format('%x', ends)
end
