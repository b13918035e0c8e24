-- report.lua: no request() of its own, so wrk sends the URL it was given as a static
-- request (least client CPU per request); prints the RESULT line bench/load.sh reads.
--   wrk -s bench/load/report.lua URL
dofile(os.getenv("LOAD_LUA_DIR") .. "/common.lua")

function done(summary, latency, requests)
  report(summary, latency)
end
