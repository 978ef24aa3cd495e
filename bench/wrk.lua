-- bench/wrk.lua — the requests of bench/auth.sh, bench/mcp.sh and bench/fed.sh, for wrk 4
-- (wrk -s bench/wrk.lua URL).
--
-- Settings from the environment:
--   BENCH_TARGET   mcp (default): POST <URL path> with the tools/list JSON-RPC body
--                  introspect: POST <URL path> as RFC 7662 introspection, the way
--                  mcpgate sends it (Basic auth, token=...&token_type_hint=access_token)
--                  health: GET <URL path> (GET /mcp/health)
--                  initialize, ping: POST <URL path> with that JSON-RPC request
--                  batch: POST <URL path> with a batch of BENCH_BATCH pings
--                  list: POST <URL path> tools/list, as an MCP client sends it (mcp is
--                  the same body with "Accept: application/json" only, as auth.sh did)
--                  call: POST <URL path> tools/call of BENCH_TOOL with BENCH_ARGS
--   BENCH_TOKEN    one token, sent with every request (mcp, initialize, ping, batch: as
--                  "Authorization: Bearer")
--   BENCH_SCHEME   the Authorization scheme (default Bearer; DPoP)
--   BENCH_POOL_HEADER  where a pool's entries go: Authorization (default: tokens), or
--                  DPoP (proofs, one a request, with BENCH_TOKEN in Authorization)
--   BENCH_POOL     a file of tokens, one a line: every request takes the next unused
--                  one (threads take disjoint slices); none is ever sent twice. When a
--                  thread runs out it stops and the run is reported as exhausted.
--   BENCH_CYCLE=1  go round the pool again instead of stopping (for introspect: the
--                  authorization server caches nothing, a token may be asked again)
--   BENCH_THREADS  wrk's -t (to split the pool), default 1
--   BENCH_BASIC    "Basic ..." credentials for introspect
--   BENCH_SESSION  an Mcp-Session-Id to send (ping, batch, mcp), as a client does after
--                  initialize
--   BENCH_PROTOCOL an MCP-Protocol-Version header to send (likewise)
--   BENCH_BATCH    pings per batch (default 10)
--   BENCH_TOOL     the tool that call calls; BENCH_ARGS its arguments (a JSON object,
--                  default {})
--   BENCH_WANT     what the answer must contain instead of the target's own (below), a
--                  plain substring; BENCH_WANT_N how many times at least (default 1)
--   BENCH_EXPECT   the status every answer should have (counted, not enforced)
--   BENCH_MODERN=1 requests of the stateless revision 2026-07-28 (list, mcp, call only):
--                  params._meta with io.modelcontextprotocol/protocolVersion 2026-07-28
--                  and io.modelcontextprotocol/clientCapabilities BENCH_CAPS (a JSON
--                  object, default {"elicitation":{}}), and the headers
--                  MCP-Protocol-Version: 2026-07-28, Mcp-Method (the body's method) and,
--                  for call, Mcp-Name: BENCH_TOOL; no session (BENCH_SESSION and
--                  BENCH_PROTOCOL are not sent)
--   BENCH_EXTRA_PARAMS  a JSON object whose members are added to call's params (an
--                  input_required retry: {"inputResponses":{...},"requestState":"..."})
--   BENCH_ALTERNATE=1  (call, with BENCH_EXTRA_PARAMS, no pool) each thread alternates
--                  the call without the extra params and with them; an answer is good
--                  when it holds BENCH_WANT_ALT (the answer to the call with them,
--                  counted as n_alt) or else BENCH_WANT (the other's); wrk does not say
--                  which connection an answer came on, so the two are counted, not
--                  paired: done() adds n_alt
-- Without BENCH_TOKEN and BENCH_POOL no Authorization header is sent.
--
-- An answer with the expected status whose body is not the expected one (tools/list:
-- "tools"; health: "status"; initialize: "protocolVersion" and an Mcp-Session-Id
-- header; ping: a "result"; batch: BENCH_BATCH of them; call: a "result"; or BENCH_WANT)
-- counts as bad_body.
--
-- done() prints one line starting with "BENCH " with key=value pairs: requests,
-- seconds, rps, status counts, socket errors, latency percentiles (µs), and for a pool
-- the tokens used and whether it ran out. bench/auth.sh and bench/mcp.sh parse it.

local target = os.getenv("BENCH_TARGET") or "mcp"
local fixed = os.getenv("BENCH_TOKEN")
local pool_file = os.getenv("BENCH_POOL")
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
local basic = os.getenv("BENCH_BASIC") or ""
local expect = tonumber(os.getenv("BENCH_EXPECT") or "200")
local cycle = os.getenv("BENCH_CYCLE") == "1"
local session = os.getenv("BENCH_SESSION")
local protocol = os.getenv("BENCH_PROTOCOL")
local nbatch = tonumber(os.getenv("BENCH_BATCH") or "10")
local tool = os.getenv("BENCH_TOOL") or ""
local args = os.getenv("BENCH_ARGS") or "{}"
local want_env = os.getenv("BENCH_WANT")
local scheme = os.getenv("BENCH_SCHEME") or "Bearer"
local pool_header = os.getenv("BENCH_POOL_HEADER") or "Authorization"
local modern = os.getenv("BENCH_MODERN") == "1"
local caps = os.getenv("BENCH_CAPS") or '{"elicitation":{}}'
local extra = os.getenv("BENCH_EXTRA_PARAMS")
local alternate = os.getenv("BENCH_ALTERNATE") == "1"
local want_alt = os.getenv("BENCH_WANT_ALT")

-- the JSON-RPC body of each kind of POST /mcp, and what its answer must contain
-- (a plain substring, at least how many times)
local PING = '{"jsonrpc":"2.0","id":%d,"method":"ping"}'
local bodies = {
   mcp = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
   initialize = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",' ..
      '"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}',
   ping = string.format(PING, 1),
   call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}',
}
bodies.list = bodies.mcp
local pings = {}
for i = 1, nbatch do pings[i] = string.format(PING, i) end
bodies.batch = "[" .. table.concat(pings, ",") .. "]"
local want = ({
   mcp = { '"tools"', 1 }, list = { '"tools"', 1 }, health = { '"status"', 1 },
   initialize = { '"protocolVersion"', 1 }, ping = { '"result"', 1 }, batch = { '"result"', nbatch },
   call = { '"result"', 1 },
})[target]
if want_env then want = { want_env, tonumber(os.getenv("BENCH_WANT_N") or "1") } end

-- The stateless revision (BENCH_MODERN=1): the same requests with params._meta, and
-- the method (and the tool) that its headers name. BENCH_EXTRA_PARAMS: call's params
-- get its members (after _meta); BENCH_ALTERNATE=1: bodies.call_alt has them, call not.
local MODERN = "2026-07-28"
local methods = { mcp = "tools/list", list = "tools/list", call = "tools/call" }
local function members(json) -- a JSON object's members, without its braces
   local m = assert(string.match(json, "^%s*{(.*)}%s*$"), "not a JSON object: " .. json)
   return m
end
if modern then
   assert(methods[target], "BENCH_MODERN=1 takes BENCH_TARGET list, mcp or call")
   local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. MODERN .. '",' ..
      '"io.modelcontextprotocol/clientCapabilities":' .. caps .. '}'
   bodies.mcp = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{' .. meta .. '}}'
   bodies.list = bodies.mcp
   bodies.call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' ..
      args .. ',' .. meta .. '}}'
end
if extra then
   assert(target == "call", "BENCH_EXTRA_PARAMS takes BENCH_TARGET=call")
   local m = members(extra)
   local with = string.sub(bodies.call, 1, -3) .. (m ~= "" and "," .. m or "") .. "}}"
   if alternate then bodies.call_alt = with else bodies.call = with end
end
assert(not alternate or (bodies.call_alt and want_alt and not pool_file),
   "BENCH_ALTERNATE=1 takes BENCH_TARGET=call, BENCH_EXTRA_PARAMS, BENCH_WANT_ALT and no BENCH_POOL")

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
n_alt = 0
other_codes = ""
local seen_other = {}
local static_req = nil
local alt_req, turn = nil, 0

local function build(token, body)
   if target == "introspect" then
      local body = "token=" .. token .. "&token_type_hint=access_token"
      return wrk.format("POST", nil, {
         ["Authorization"] = basic,
         ["Accept"] = "application/json",
         ["Content-Type"] = "application/x-www-form-urlencoded",
      }, body)
   end
   if target == "health" then
      return wrk.format("GET", nil, { ["Accept"] = "application/json" })
   end
   local h = { ["Content-Type"] = "application/json" }
   -- what the MCP clients send (Streamable HTTP); tools/list as bench/auth.sh always did
   h["Accept"] = target == "mcp" and "application/json" or "application/json, text/event-stream"
   if pool_header == "DPoP" then
      h["Authorization"] = scheme .. " " .. fixed
      h["DPoP"] = token
   elseif token then
      h["Authorization"] = scheme .. " " .. token
   end
   if modern then
      h["MCP-Protocol-Version"] = MODERN
      h["Mcp-Method"] = methods[target]
      if target == "call" then h["Mcp-Name"] = tool end
   else
      if session and target ~= "initialize" then h["Mcp-Session-Id"] = session end
      if protocol and target ~= "initialize" then h["MCP-Protocol-Version"] = protocol end
   end
   return wrk.format("POST", nil, h, body or assert(bodies[target], "unknown BENCH_TARGET"))
end

-- A pool's requests differ in the token alone, which (but for introspect, whose body
-- holds it) sits in a header: the request is built once around a placeholder and each
-- token put in its place, which costs wrk far less than wrk.format per request.
local head, tail

function init(args)
   if pool_file and target ~= "introspect" then
      local t = build("@@TOKEN@@")
      local at = string.find(t, "@@TOKEN@@", 1, true)
      head, tail = string.sub(t, 1, at - 1), string.sub(t, at + 9)
   end
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
      if alternate then alt_req = build(fixed, bodies.call_alt) end
   end
end

function request()
   if alt_req then
      turn = 1 - turn
      return turn == 1 and static_req or alt_req
   end
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
   if head then return head .. t .. tail end
   return build(t)
end

-- count of plain (not pattern) occurrences of needle in s
local function count(s, needle)
   local n, at = 0, 1
   while true do
      local i = string.find(s, needle, at, true)
      if not i then return n end
      n, at = n + 1, i + #needle
   end
end

local function has_header(headers, name)
   for k, _ in pairs(headers) do
      if string.lower(k) == name then return true end
   end
   return false
end

function response(status, headers, body)
   if status == expect then
      n_expect = n_expect + 1
      if alt_req and status == 200 and string.find(body or "", want_alt, 1, true) then
         n_alt = n_alt + 1
      elseif want and status == 200 and (count(body or "", want[1]) < want[2] or
            (target == "initialize" and not has_header(headers, "mcp-session-id"))) then
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
   local e, o, b, x, u, a, oc = 0, 0, 0, 0, 0, 0, ""
   for _, t in ipairs(threads) do
      e = e + (t:get("n_expect") or 0)
      o = o + (t:get("n_other") or 0)
      b = b + (t:get("n_badbody") or 0)
      x = x + (t:get("exhausted") or 0)
      u = u + (t:get("pool_used") or 0)
      a = a + (t:get("n_alt") or 0)
      oc = oc .. (t:get("other_codes") or "")
   end
   local s = summary.duration / 1e6
   local er = summary.errors
   io.write(string.format(
      "BENCH requests=%d seconds=%.3f rps=%.1f expect=%d n_expect=%d n_other=%d other_codes=%s " ..
      "bad_body=%d err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d " ..
      "p50_us=%d p90_us=%d p99_us=%d pool_used=%d exhausted=%d%s\n",
      summary.requests, s, summary.requests / s, expect, e, o, (oc == "" and "-" or oc),
      b, er.connect, er.read, er.write, er.status, er.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), u, x,
      (alternate and string.format(" n_alt=%d", a) or "")))
end
