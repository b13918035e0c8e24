-- common.lua: shared by the load scripts (loaded with dofile from $LOAD_LUA_DIR).
-- report(summary, latency): one machine-readable line that bench/load.sh parses.

function report(summary, latency)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d bytes=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d"
      .. " connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.bytes, summary.duration,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end

-- A pseudo-random string of `size` bytes (a 64 KiB random block repeated), made once per
-- thread; request bodies are this with a unique 16-byte head, so every upload has new bytes.
function filler(size, seed)
  math.randomseed(seed)
  local block = {}
  for i = 1, 65536 do block[i] = string.char(math.random(0, 255)) end
  local chunk = table.concat(block)
  return string.rep(chunk, math.floor(size / #chunk) + 1):sub(1, size)
end

-- The headers given with -H (Authorization), plus `extra`; wrk.format does not merge them itself.
function headers_with(extra)
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  for k, v in pairs(extra or {}) do h[k] = v end
  return h
end

-- Numbers wrk's threads 1, 2, …: each sees its own as `thread_id` (PUT names and bodies
-- differ per thread).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end
