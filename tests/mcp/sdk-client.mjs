#!/usr/bin/env node
// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2, pinned in
// tests/package.json: `Client` + `StreamableHTTPClientTransport`) against mcpgate's
// POST /mcp, once for every protocol revision the SDK speaks over Streamable HTTP:
//
//   connect (initialize asking for revision V) → the negotiated revision is V →
//   tools/list is [] (no upstreams) → ping is {} → another transport given the session
//   id continues it → terminateSession() (DELETE, 2xx) → the ended id gets 404.
//
// The SDK (1.32.2) always asks for LATEST_PROTOCOL_VERSION in initialize and has no
// option to ask for another: `fetch` (a transport option) is wrapped here, and on the
// initialize POST its params.protocolVersion is rewritten to V. Everything else stays the
// SDK's own: it checks the answer against SUPPORTED_PROTOCOL_VERSIONS, sets
// transport.protocolVersion to it and sends it as MCP-Protocol-Version from then on. The
// wrapper also records every request (method, JSON-RPC method, headers, status) for the
// checks. Last, initialize asking for a revision nobody knows is answered with the
// latest one the SDK supports.
//
//   MCP_BEARER_TOKEN=T node tests/mcp/sdk-client.mjs URL [--label L] [--no-plan]
//
// URL is the gateway's MCP endpoint; the token (read from the environment, never from
// the command line) goes in through requestInit.headers. Prints TAP; --no-plan leaves
// "1..N" to the caller (tests/mcp/clients.sh renumbers the lines); --label prefixes each
// description. Every client call has a timeout, and a watchdog ends the run after 120 s.
// Exit 1 on any failure.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const UNKNOWN_REVISION = '2099-01-01';
const CALL_TIMEOUT_MS = 30000;
const WATCHDOG_MS = 120000; // against a hang, with room for a loaded machine

// --- arguments -------------------------------------------------------------------------

const USAGE = 'usage: MCP_BEARER_TOKEN=T sdk-client.mjs URL [--label L] [--no-plan]\n';
const argv = process.argv.slice(2);
let url;
let label = '';
let plan = true;
for (let i = 0; i < argv.length; i += 1) {
  const a = argv[i];
  if (a === '--no-plan') plan = false;
  else if (a === '--label' && i + 1 < argv.length) label = `${argv[++i]}: `;
  else if (!a.startsWith('--') && !url) url = a;
  else {
    process.stderr.write(USAGE);
    process.exit(2);
  }
}
const token = process.env.MCP_BEARER_TOKEN;
if (!url || !token) {
  process.stderr.write(USAGE);
  process.exit(2);
}

// --- TAP ---------------------------------------------------------------------------------

let n = 0;
let failed = 0;
function diag(text) {
  for (const line of String(text).split('\n').slice(0, 30)) process.stdout.write(`# ${line}\n`);
}
function ok(cond, desc, detail) {
  n += 1;
  if (!cond) failed += 1;
  process.stdout.write(`${cond ? 'ok' : 'not ok'} ${n} - ${label}${desc}\n`);
  if (!cond && detail !== undefined) diag(typeof detail === 'string' ? detail : JSON.stringify(detail));
  return !!cond;
}
function finish() {
  if (plan) process.stdout.write(`1..${n}\n`);
  process.exit(failed ? 1 : 0);
}
const watchdog = setTimeout(() => {
  ok(false, `the run ended within ${WATCHDOG_MS / 1000} s`, 'watchdog fired: a call hung');
  finish();
}, WATCHDOG_MS);

// --- a fetch that records, and asks for another revision --------------------------------

/** One entry per HTTP request: {method, rpc, session, version, status, error}. */
let wire = [];
function recordingFetch(wantVersion) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    let { body } = init;
    let rpc = '';
    if (typeof body === 'string') {
      try {
        const msg = JSON.parse(body);
        rpc = Array.isArray(msg) ? 'batch' : msg.method ?? 'response';
        if (!Array.isArray(msg) && msg.method === 'initialize' && wantVersion) {
          msg.params = { ...msg.params, protocolVersion: wantVersion };
          body = JSON.stringify(msg);
        }
      } catch { /* not JSON: sent as it is */ }
    }
    const entry = {
      method: init.method ?? 'GET',
      rpc,
      session: headers.get('mcp-session-id'),
      version: headers.get('mcp-protocol-version'),
      sentVersion: rpc === 'initialize' && typeof body === 'string' ? JSON.parse(body).params?.protocolVersion : undefined,
      status: 0,
    };
    wire.push(entry);
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(CALL_TIMEOUT_MS)])
      : AbortSignal.timeout(CALL_TIMEOUT_MS);
    try {
      const res = await fetch(input, { ...init, body, signal });
      entry.status = res.status;
      return res;
    } catch (e) {
      entry.error = String(e);
      throw e;
    }
  };
}
const find = (pred) => wire.filter(pred).at(-1);
const show = () => wire.map((e) => `${e.method} ${e.rpc || '-'} → ${e.status || e.error}` +
  `${e.version ? ` [MCP-Protocol-Version ${e.version}]` : ''}${e.session ? ' [session]' : ''}`).join('\n');

function transportFor(wantVersion, sessionId) {
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: recordingFetch(wantVersion),
    sessionId,
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
}
const newClient = () => new Client({ name: 'mcpgate-tests-sdk-client', version: '1.0.0' });
const opts = { timeout: CALL_TIMEOUT_MS };
const errText = (e) => `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`;

// --- one revision ------------------------------------------------------------------------

async function revision(v) {
  wire = [];
  const t = `${v}:`;
  const client = newClient();
  const transport = transportFor(v);
  try {
    await client.connect(transport, opts);
  } catch (e) {
    ok(false, `${t} connect (initialize for ${v})`, `${errText(e)}\n${show()}`);
    await client.close().catch(() => {});
    return;
  }
  const init = find((e) => e.rpc === 'initialize');
  ok(init?.sentVersion === v && init.status === 200 && !init.version,
    `${t} initialize asked for ${v} (200, no MCP-Protocol-Version on its POST)`, show());
  ok(transport.protocolVersion === v, `${t} negotiated revision is ${v}`,
    `transport.protocolVersion = ${transport.protocolVersion}`);
  const sid = transport.sessionId;
  ok(typeof sid === 'string' && /^[\x21-\x7e]+$/.test(sid), `${t} Mcp-Session-Id issued (visible ASCII)`, `sessionId = ${sid}`);
  const info = client.getServerVersion();
  ok(typeof info?.name === 'string' && typeof info?.version === 'string', `${t} serverInfo has name and version`, info);
  const initd = find((e) => e.rpc === 'notifications/initialized');
  ok(initd?.status === 202 && initd.version === v && initd.session === sid,
    `${t} notifications/initialized → 202 with the session and MCP-Protocol-Version ${v}`, show());

  try {
    const r = await client.listTools(undefined, opts);
    ok(Array.isArray(r.tools) && r.tools.length === 0 && r.nextCursor === undefined,
      `${t} tools/list is [] (no upstreams)`, r);
  } catch (e) {
    ok(false, `${t} tools/list is [] (no upstreams)`, `${errText(e)}\n${show()}`);
  }
  const list = find((e) => e.rpc === 'tools/list');
  ok(list?.version === v && list.session === sid,
    `${t} tools/list carried MCP-Protocol-Version ${v} and the session id`, show());

  try {
    const r = await client.ping(opts);
    ok(r && typeof r === 'object' && Object.keys(r).length === 0, `${t} ping → {}`, r);
  } catch (e) {
    ok(false, `${t} ping → {}`, `${errText(e)}\n${show()}`);
  }

  // A client on a fresh transport given the session id (connect() does not initialize
  // when the transport already has one): its tools/list there.
  const listOnSession = async (c) => {
    const tr = transportFor(undefined, sid);
    await c.connect(tr, opts);
    tr.setProtocolVersion(v);
    return c.listTools(undefined, opts);
  };

  // Control for the 404 below: the live id is served.
  const resumed = newClient();
  try {
    const r = await listOnSession(resumed);
    const last = find((x) => x.rpc === 'tools/list' && x.session === sid);
    ok(Array.isArray(r.tools) && last?.status === 200, `${t} a second transport continues the live session`, show());
  } catch (e) {
    ok(false, `${t} a second transport continues the live session`, `${errText(e)}\n${show()}`);
  }
  await resumed.close().catch(() => {});

  try {
    await transport.terminateSession();
    const del = find((e) => e.method === 'DELETE');
    ok(del?.status >= 200 && del.status < 300 && del.session === sid && transport.sessionId === undefined,
      `${t} terminateSession(): DELETE → ${del?.status}`, show());
  } catch (e) {
    ok(false, `${t} terminateSession(): DELETE → 2xx`, `${errText(e)}\n${show()}`);
  }
  await client.close().catch(() => {});

  // The ended id, presented the same way: 404, which the SDK reports as such.
  const again = newClient();
  try {
    const r = await listOnSession(again);
    ok(false, `${t} the ended session id gets 404`, `tools/list answered ${JSON.stringify(r)}\n${show()}`);
  } catch (e) {
    const last = find((x) => x.rpc === 'tools/list' && x.session === sid);
    ok(e instanceof StreamableHTTPError && e.code === 404 && last?.status === 404,
      `${t} the ended session id gets 404`, `${errText(e)} (code ${e?.code})\n${show()}`);
  }
  await again.close().catch(() => {});
}

// --- a revision nobody knows -------------------------------------------------------------

async function unknownRevision() {
  wire = [];
  const desc = `initialize asking for ${UNKNOWN_REVISION} is answered with ${LATEST_PROTOCOL_VERSION}`;
  const client = newClient();
  const transport = transportFor(UNKNOWN_REVISION);
  try {
    await client.connect(transport, opts);
    ok(transport.protocolVersion === LATEST_PROTOCOL_VERSION, desc, `negotiated ${transport.protocolVersion}`);
    await transport.terminateSession().catch(() => {});
  } catch (e) {
    ok(false, desc, `${errText(e)}\n${show()}`);
  }
  await client.close().catch(() => {});
}

const missing = REVISIONS.filter((v) => !SUPPORTED_PROTOCOL_VERSIONS.includes(v));
ok(missing.length === 0, `the SDK supports ${REVISIONS.join(', ')}`, `missing: ${missing.join(', ')}`);
for (const v of REVISIONS) await revision(v);
await unknownRevision();
clearTimeout(watchdog);
finish();
