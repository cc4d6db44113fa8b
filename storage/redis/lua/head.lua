#!lua flags=allow-cross-slot-keys
local nk = tonumber(ARGV[1])
local K = {}
for i = 1, nk do K[i] = ARGV[1 + i] end
local A = {}
for i = nk + 2, #ARGV do A[#A + 1] = ARGV[i] end
-- the hot loops call these as locals: a global's lookup is two table reads a call
local rcall, format, unpack, pack, sub = redis.call, string.format, struct.unpack, struct.pack, string.sub
