-- wrk script for `scripts/bench signin`: sends every pre-made sign-in exactly once.
--
-- Thread N (1-based) reads $SIGNIN_BENCH_DIR/requests.N, records of "<byte length>\n<raw POST /apple_redirect>",
-- and hands them to its connections in order, so no request is sent twice across threads or connections.
-- Connections are HTTP/1.1 keep-alive, as wrk opens them. When a thread has every answer it writes
-- $SIGNIN_BENCH_DIR/done.N (the script then stops wrk) and stops.
--
-- With $SIGNIN_BENCH_RATE (sign-ins a second, offered by all $SIGNIN_BENCH_THREADS threads together) each thread
-- sends its sign-ins on a fixed schedule instead of as soon as a connection is free: the load of a given number
-- of browsers arriving at that rate (an open loop, up to the connection count in flight), not a closed loop whose
-- latency is the connection count divided by the throughput. wrk's delay() counts whole milliseconds, so
-- sign-ins due within the same millisecond go together. A thread that falls behind its schedule sends at once
-- until it has caught up; the figure scripts/bench prints is the rate actually reached.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } signin_bench_timespec;
int clock_gettime(int clock, signin_bench_timespec *now);
]]
local clock_buffer = ffi.new("signin_bench_timespec")
local function now()
    ffi.C.clock_gettime(1, clock_buffer) -- CLOCK_MONOTONIC, shared by all threads
    return tonumber(clock_buffer.tv_sec) + tonumber(clock_buffer.tv_nsec) * 1e-9
end

local directory = os.getenv("SIGNIN_BENCH_DIR")
local offered_rate = tonumber(os.getenv("SIGNIN_BENCH_RATE") or "")
local thread_count = tonumber(os.getenv("SIGNIN_BENCH_THREADS") or "") or 1
-- wrk asks thread 1 for one request before starting, only to check its syntax; it is never sent.
local syntax_probe = "GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n"
-- What a connection sends once its thread has handed out every sign-in: an unfinished request, so the server
-- waits for the rest and the connection stays quiet (no answers that are not sign-ins in the latency figures).
local quiet = "GET /healthz HTTP/1.1\r\nHost: bench\r\n"

local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("id", #threads)
end

function init(args)
    local file = assert(io.open(directory .. "/requests." .. id, "rb"))
    local data = file:read("*a")
    file:close()
    requests = {}
    local at = 1
    while at <= #data do
        local newline = data:find("\n", at, true)
        local length = tonumber(data:sub(at, newline - 1))
        requests[#requests + 1] = data:sub(newline + 1, newline + length)
        at = newline + 1 + length
    end
    total, handed, answered, redirected = #requests, 0, 0, 0
    statuses = {}
    probe_pending = (id == 1)
    first_sent, last_answer = 0, 0
    -- Seconds between two of this thread's sign-ins, and when the next one is due (set at the first).
    spacing = offered_rate and offered_rate > 0 and thread_count / offered_rate or nil
    next_due = nil
end

-- Only defined with a rate: wrk then asks it before every request on every connection.
if offered_rate and offered_rate > 0 then
    function delay()
        if handed >= total or probe_pending then return 0 end
        local at = now()
        next_due = next_due or at
        local wait = next_due - at
        next_due = next_due + spacing
        return wait > 0 and wait * 1000 or 0
    end
end

function request()
    if probe_pending then
        probe_pending = false
        return syntax_probe
    end
    if handed < total then
        handed = handed + 1
        if handed == 1 then first_sent = now() end
        return requests[handed]
    end
    return quiet
end

function response(status, headers, body)
    answered = answered + 1
    if status == 303 and headers["Location"] == "/session" then
        redirected = redirected + 1
    else
        statuses[tostring(status)] = (statuses[tostring(status)] or 0) + 1
    end
    if answered == total then
        last_answer = now()
        local marker = io.open(directory .. "/done." .. id, "w")
        marker:close()
        wrk.thread:stop()
    end
end

function done(summary, latency, requests)
    local sent, answers, redirects, first, last, complete = 0, 0, 0, math.huge, 0, 1
    local others = {}
    for _, thread in ipairs(threads) do
        sent = sent + thread:get("total")
        answers = answers + thread:get("answered")
        redirects = redirects + thread:get("redirected")
        first = math.min(first, thread:get("first_sent"))
        last = math.max(last, thread:get("last_answer"))
        if thread:get("last_answer") == 0 then complete = 0 end
        for status, count in pairs(thread:get("statuses")) do
            others[#others + 1] = status .. "x" .. count
        end
    end
    local errors = summary.errors
    if complete == 0 or first == math.huge then
        first, last = 0, summary.duration / 1e6 -- some answers never came: wrk's own run time instead
    end
    -- One line for scripts/bench to read; the time runs from the first sign-in sent to the last answer.
    io.write(string.format("SIGNIN sent=%d answered=%d redirected=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f " ..
        "socket_errors=%d other=%s complete=%d\n", sent, answers, redirects, last - first,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        errors.connect + errors.read + errors.write + errors.timeout,
        #others > 0 and table.concat(others, ",") or "none", complete))
end
