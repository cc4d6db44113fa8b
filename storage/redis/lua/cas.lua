
local held = redis.call('GET', KEYS[1])
local version = 0
if held then version = tonumber(string.sub(held, 1, 20)) end
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
