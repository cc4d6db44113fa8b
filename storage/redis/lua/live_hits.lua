
local top = string.rep('\255', 8)
-- the hits' row prefix is made only where a bucket holds members under the check: most hold none
local function live_hits(tag, buckets, check, row, hits)
  local lo, hi = '[' .. check, '[' .. check .. top
  local head = nil
  for b = 1, #buckets do
    local got = rcall('ZRANGE', tag .. buckets[b], lo, hi, 'BYLEX')
    if #got > 0 then
      head = head or pack('>I4', row)
      for j = 1, #got do hits[#hits + 1] = head .. sub(got[j], 6) end
    end
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
local function bucket_end(t, w)
  return (math.floor(t / w) + 1) * w
end
-- The bucket suffixes to read for the ttl classes registered in the class sets R (members: a ttl
-- in seconds, '0' for kept, and 'v': this store registers its classes), the same sums as
-- KeyLayout.lookup_buckets and write_buckets: lag < 0, a lookup (buckets from now's to that of now + ttl + margin);
-- else the race recheck (those of now - lag + ttl to now + lag + ttl). Where no set says 'v' (a
-- store written before classes were registered, a node holding no set) every bucket in
-- ``fallback`` is read. Returns the suffixes and what the sets hold: 'v' and the classes found,
-- comma-separated ('' where no set says 'v').
local function class_buckets(R, now, w, margin, lag, fallback)
  local classes, names, known = {}, {}, false
  for i = 1, #R do
    local got = redis.call('SMEMBERS', R[i])
    for j = 1, #got do
      if got[j] == 'v' then known = true
      elseif classes[got[j]] == nil and tonumber(got[j]) then
        classes[got[j]] = tonumber(got[j])
        names[#names + 1] = got[j]
      end
    end
  end
  if not known then return split(fallback), '' end
  local out, seen = {}, {}
  for _, ttl in pairs(classes) do
    local first, last = 0, 0
    if ttl > 0 and lag < 0 then first, last = bucket_end(now, w), bucket_end(now + ttl + margin, w)
    elseif ttl > 0 then first, last = bucket_end(now - lag + ttl, w), bucket_end(now + lag + ttl, w) end
    local e = first
    repeat
      if not seen[e] then seen[e] = true; out[#out + 1] = bucket_suffix(e) end
      e = e + w
    until e > last or first == 0
  end
  table.sort(names)
  return out, 'v' .. (#names > 0 and ',' or '') .. table.concat(names, ',')
end
-- class_buckets with the arguments as the index scripts get them (store.py): A[3..7] now, the
-- width, the margin, the lag and the fallback; A[8] a count r, then the r class sets
local function index_buckets(A)
  local R = {}
  for i = 1, tonumber(A[8]) do R[i] = A[8 + i] end
  return class_buckets(R, tonumber(A[3]), tonumber(A[4]), tonumber(A[5]), tonumber(A[6]), A[7])
end
