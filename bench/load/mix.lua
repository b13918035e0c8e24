-- mix.lua: a mixed workload. Each request is a random line of PLAN_FILE, where a line is
-- `GET PATH` or `PUT PATH SIZE` (weights by repetition). PUT bodies are new bytes every
-- time, to PATH<thread>-<n> with n cycling over 64 names per thread.
--   wrk -s bench/load/mix.lua URL -- PLAN_FILE        (-H 'Authorization: Bearer …')
dofile(os.getenv("LOAD_LUA_DIR") .. "/common.lua")

local plan = {}
local bodies = {}
local headers
local counter = 0
function init(args)
  for line in io.lines(args[1]) do
    local method, path, size = line:match("^(%u+)%s+(%S+)%s*(%d*)$")
    if method then
      plan[#plan + 1] = { method = method, path = path, size = tonumber(size) }
      if method == "PUT" and not bodies[size] then bodies[size] = filler(tonumber(size) - 16, 2000 + (thread_id or 0)) end
    end
  end
  assert(#plan > 0, "no requests in " .. args[1])
  math.randomseed(3000 + (thread_id or 0))
  headers = headers_with({ ["Content-Type"] = "application/octet-stream" })
end

function request()
  local step = plan[math.random(#plan)]
  if step.method == "PUT" then
    counter = counter + 1
    local body = string.format("%08x%08x", thread_id or 0, counter) .. bodies[tostring(step.size)]
    return wrk.format("PUT", step.path .. (thread_id or 0) .. "-" .. (counter % 64), headers, body)
  end
  return wrk.format(step.method, step.path)
end

function done(summary, latency, requests)
  report(summary, latency)
end
