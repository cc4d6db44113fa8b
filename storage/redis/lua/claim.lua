
local out = {}
for i = 1, #K do
  local held = redis.call('GET', K[i])
  if held then
    out[i] = held
  else
    local ttl = tonumber(A[2 * i])
    if ttl > 0 then redis.call('SET', K[i], A[2 * i - 1], 'EX', ttl)
    else redis.call('SET', K[i], A[2 * i - 1]) end
    out[i] = A[2 * i - 1]
  end
end
return out
