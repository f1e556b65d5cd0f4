-- wrk script of bench/scenarios/load.ts: the request (method, JSON body, bearer token) comes from the environment,
-- the summary goes out as one JSON line (prefixed WRK_JSON) for load.ts to parse.
wrk.method = os.getenv("WRK_METHOD") or "GET"
wrk.headers["content-type"] = "application/json"
local body = os.getenv("WRK_BODY")
if body ~= nil and body ~= "" then wrk.body = body end
local token = os.getenv("WRK_TOKEN")
if token ~= nil and token ~= "" then wrk.headers["authorization"] = "Bearer " .. token end
local extra = os.getenv("WRK_HEADERS")
if extra ~= nil and extra ~= "" then
  for line in extra:gmatch("[^\n]+") do
    local name, value = line:match("^([^:]+):%s*(.*)$")
    if name then wrk.headers[name] = value end
  end
end
-- A header with a value of its own per request: a per-thread prefix (each thread has its own Lua state) and a counter.
local unique = os.getenv("WRK_UNIQUE_HEADER")
if unique ~= nil and unique ~= "" then
  local prefix = tostring({}):gsub("%W", "") .. os.time()
  local counter = 0
  function request()
    counter = counter + 1
    wrk.headers[unique] = prefix .. "-" .. counter
    return wrk.format()
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
