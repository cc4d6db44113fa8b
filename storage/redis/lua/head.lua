#!lua flags=allow-cross-slot-keys
local nk = tonumber(ARGV[1])
local K = {}
for i = 1, nk do K[i] = ARGV[1 + i] end
local A = {}
for i = nk + 2, #ARGV do A[#A + 1] = ARGV[i] end
