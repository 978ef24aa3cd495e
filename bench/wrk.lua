-- bench/wrk.lua — the requests of bench/auth.sh, for wrk 4 (wrk -s bench/wrk.lua URL).
--
-- Settings from the environment:
--   BENCH_TARGET   mcp (default): POST <URL path> with the tools/list JSON-RPC body
--                  introspect: POST <URL path> as RFC 7662 introspection, the way
--                  mcpgate sends it (Basic auth, token=...&token_type_hint=access_token)
--   BENCH_TOKEN    one token, sent with every request (mcp: as "Authorization: Bearer")
--   BENCH_POOL     a file of tokens, one a line: every request takes the next unused
--                  one (threads take disjoint slices); none is ever sent twice. When a
--                  thread runs out it stops and the run is reported as exhausted.
--   BENCH_CYCLE=1  go round the pool again instead of stopping (for introspect: the
--                  authorization server caches nothing, a token may be asked again)
--   BENCH_THREADS  wrk's -t (to split the pool), default 1
--   BENCH_BASIC    "Basic ..." credentials for introspect
--   BENCH_EXPECT   the status every answer should have (counted, not enforced)
-- Without BENCH_TOKEN and BENCH_POOL no Authorization header is sent.
--
-- done() prints one line starting with "BENCH " with key=value pairs: requests,
-- seconds, rps, status counts, socket errors, latency percentiles (µs), and for a pool
-- the tokens used and whether it ran out. bench/auth.sh parses it.

local target = os.getenv("BENCH_TARGET") or "mcp"
local fixed = os.getenv("BENCH_TOKEN")
local pool_file = os.getenv("BENCH_POOL")
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
local basic = os.getenv("BENCH_BASIC") or ""
local expect = tonumber(os.getenv("BENCH_EXPECT") or "200")
local cycle = os.getenv("BENCH_CYCLE") == "1"

local LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'

local threads = {}
local counter = 0

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

-- per thread (each wrk thread has its own Lua state)
local pool = {}
local used = 0
pool_used = 0
exhausted = 0
n_expect = 0
n_other = 0
n_badbody = 0
other_codes = ""
local seen_other = {}
local static_req = nil

local function build(token)
   if target == "introspect" then
      local body = "token=" .. token .. "&token_type_hint=access_token"
      return wrk.format("POST", nil, {
         ["Authorization"] = basic,
         ["Accept"] = "application/json",
         ["Content-Type"] = "application/x-www-form-urlencoded",
      }, body)
   end
   local h = { ["Content-Type"] = "application/json", ["Accept"] = "application/json" }
   if token then h["Authorization"] = "Bearer " .. token end
   return wrk.format("POST", nil, h, LIST)
end

function init(args)
   if pool_file then
      local f = assert(io.open(pool_file, "r"))
      local i = 0
      for line in f:lines() do
         if line ~= "" then
            if i % nthreads == tid then pool[#pool + 1] = line end
            i = i + 1
         end
      end
      f:close()
   else
      static_req = build(fixed)
   end
end

function request()
   if static_req then return static_req end
   used = used + 1
   pool_used = pool_used + 1
   if cycle and used > #pool then used = 1 end
   local t = pool[used]
   if t == nil then
      -- never reuse a token: stop this thread; the run is reported as exhausted
      exhausted = 1
      wrk.thread:stop()
      return build("pool-exhausted-not-a-token")
   end
   return build(t)
end

function response(status, headers, body)
   if status == expect then
      n_expect = n_expect + 1
      if target == "mcp" and status == 200 and not string.find(body, '"tools"', 1, true) then
         n_badbody = n_badbody + 1
      end
   else
      n_other = n_other + 1
      if not seen_other[status] then
         seen_other[status] = true
         other_codes = other_codes .. status .. ","
      end
   end
end

function done(summary, latency, requests)
   local e, o, b, x, u, oc = 0, 0, 0, 0, 0, ""
   for _, t in ipairs(threads) do
      e = e + (t:get("n_expect") or 0)
      o = o + (t:get("n_other") or 0)
      b = b + (t:get("n_badbody") or 0)
      x = x + (t:get("exhausted") or 0)
      u = u + (t:get("pool_used") or 0)
      oc = oc .. (t:get("other_codes") or "")
   end
   local s = summary.duration / 1e6
   local er = summary.errors
   io.write(string.format(
      "BENCH requests=%d seconds=%.3f rps=%.1f expect=%d n_expect=%d n_other=%d other_codes=%s " ..
      "bad_body=%d err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d " ..
      "p50_us=%d p90_us=%d p99_us=%d pool_used=%d exhausted=%d\n",
      summary.requests, s, summary.requests / s, expect, e, o, (oc == "" and "-" or oc),
      b, er.connect, er.read, er.write, er.status, er.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), u, x))
end
