
-- K: index keys of the old layouts on this node: unbucketed ({i<S>}: members check + expiry u32 +
-- ref) or buckets of another width ({i<S>}<end hex>). A[1]: the width W; A[2]: the margin; A[3]:
-- now. Each key's live entries are re-filed into the buckets of width W of the same shard (so the
-- same slot), then the key is deleted. Returns {entries moved, entries dropped as expired}.
local w, margin, now = tonumber(A[1]), tonumber(A[2]), tonumber(A[3])
local moved, dropped = 0, 0
local touched = {}
local function file(tag, ends, member)
  local key = tag .. bucket_suffix(ends)
  redis.call('ZADD', key, 0, member)
  if ends ~= 0 then touched[key] = ends end
  moved = moved + 1
end
for i = 1, #K do
  local close = string.find(K[i], '}', 1, true)
  local tag, suffix = string.sub(K[i], 1, close), string.sub(K[i], close + 1)
  local members = redis.call('ZRANGE', K[i], 0, -1)
  local old_end = tonumber(suffix, 16)
  for j = 1, #members do
    local m = members[j]
    local expiry = old_end
    local entry = m
    if suffix == '' then
      expiry = struct.unpack('>I4', m, 6)
      entry = string.sub(m, 1, 5) .. string.sub(m, 10)
    end
    if expiry == $NEVER then file(tag, 0, entry)
    elseif expiry <= now then dropped = dropped + 1
    elseif suffix == '' then file(tag, (math.floor(expiry / w) + 1) * w, entry)
    else file(tag, math.ceil(expiry / w) * w, entry) end
  end
  redis.call('DEL', K[i])
end
for key, ends in pairs(touched) do redis.call('EXPIREAT', key, ends + margin) end
return {moved, dropped}
