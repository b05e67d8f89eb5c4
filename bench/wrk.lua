-- The load script of `npm run bench:http` (bench/wrkLoad.ts), for wrk 4.
-- Arguments after `--`: a file of request bodies, one JSON body a line
-- (each connection's requests cycle through them; every request is then a
-- POST), or nothing (the default request, a GET). Headers come from -H.
-- At the end, one JSON line: requests answered, non-2xx/3xx answers,
-- socket errors and the latency distribution in microseconds.

local requests = {}
local count = 0
local nextIndex = 0

function init(args)
  if args[1] ~= nil then
    wrk.method = "POST"
    for body in io.lines(args[1]) do
      count = count + 1
      requests[count] = wrk.format(nil, nil, nil, body)
    end
  else
    count = 1
    requests[1] = wrk.format()
  end
end

function request()
  nextIndex = nextIndex % count + 1
  return requests[nextIndex]
end

function done(summary, latency, _)
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"bytes":%d,"non2xx":%d,"socketErrors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},'
      .. '"latencyUs":{"mean":%.1f,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, errors.status,
    errors.connect, errors.read, errors.write, errors.timeout,
    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max
  ))
end
