-- presigned-put.lua: PUT bodies of SIZE bytes straight to an S3 server with presigned URLs.
-- URL_FILE has lines `THREAD URL` (bench/cluster/s3.py presign-puts); each wrk thread cycles
-- over its own URLs. Bodies are new bytes every time, as in put.lua. No Authorization header
-- may be sent (run wrk without -H): the signature is in the query.
--   wrk -s bench/load/presigned-put.lua http://S3HOST:PORT -- URL_FILE SIZE
dofile(os.getenv("LOAD_LUA_DIR") .. "/common.lua")

local paths = {}
local rest, headers
local counter = 0
function init(args)
  for line in io.lines(args[1]) do
    local thread, url = line:match("^(%d+)%s+(%S+)$")
    if tonumber(thread) == (thread_id or 1) then paths[#paths + 1] = url:match("^https?://[^/]+(/.*)$") end
  end
  assert(#paths > 0, "no URLs for thread " .. tostring(thread_id) .. " in " .. args[1])
  rest = filler(tonumber(args[2]) - 16, 1000 + (thread_id or 0))
  headers = { ["Content-Type"] = "application/octet-stream" }
end

function request()
  counter = counter + 1
  local body = string.format("%08x%08x", thread_id or 0, counter) .. rest
  return wrk.format("PUT", paths[counter % #paths + 1], headers, body)
end

function done(summary, latency, requests)
  report(summary, latency)
end
