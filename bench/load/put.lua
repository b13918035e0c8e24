-- put.lua: PUT bodies of SIZE bytes to PREFIX<thread>-<n>, n cycling over NAMES names per
-- thread. Every body is new bytes (a unique 16-byte head on a pseudo-random filler), so a
-- content-addressed store cannot skip writing it.
--   wrk -s bench/load/put.lua URL -- PREFIX SIZE [NAMES]
dofile(os.getenv("LOAD_LUA_DIR") .. "/common.lua")

local prefix, names, rest, headers
local counter = 0
function init(args)
  prefix = args[1]
  local size = tonumber(args[2])
  names = tonumber(args[3] or "64")
  rest = filler(size - 16, 1000 + (thread_id or 0))
  headers = headers_with({ ["Content-Type"] = "application/octet-stream" })
end

function request()
  counter = counter + 1
  local body = string.format("%08x%08x", thread_id or 0, counter) .. rest
  return wrk.format("PUT", prefix .. (thread_id or 0) .. "-" .. (counter % names), headers, body)
end

function done(summary, latency, requests)
  report(summary, latency)
end
