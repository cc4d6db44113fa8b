
local top = string.rep('\255', 12)
local function live_hits(key, check, row, now, hits)
  local got = redis.call('ZRANGE', key, '[' .. check, '[' .. check .. top, 'BYLEX')
  for j = 1, #got do
    local m = got[j]
    if #m == 17 and struct.unpack('>I4', m, 6) > now then
      hits[#hits + 1] = struct.pack('>I4', row) .. string.sub(m, 10)
    end
  end
end
