#!/usr/bin/env node
// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2: `Client` +
// `StreamableHTTPClientTransport`), driven by tests/fed/gateway.sh: it runs a list of
// operations and prints one JSON line per operation; the checks are the suite's.
//
//   [MCP_BEARER_TOKEN=T] node tests/fed/gateway-client.mjs URL OP...
//
// Each OP is a JSON object:
//   {"op":"list"}                      tools/list, following nextCursor (at most 50 pages)
//   {"op":"call","name":N,"arguments":{...},"progress":true,"timeout":MS,
//    "killAfterProgress":PID}          tools/call; with "progress" the SDK sends a
//                                      progressToken and every notification is timed;
//                                      killAfterProgress: SIGKILL PID at the first one
//   {"op":"sleep","ms":MS}
// Every op may carry "tag" (copied to its output line), "url" (default URL) and "auth"
// (default: true when the token is set): one SDK client (one session) per url and auth.
// The token is read from the environment, never from the command line, and sent as
// `Authorization: Bearer`. With CLIENT_ANSWERS=1 the client declares elicitation,
// sampling and roots and answers what it is asked (elicitation: accept, every field of
// the requested schema filled; sampling: a fixed text; roots: one root), each request
// recorded in its op's "asked" [{method, t}].
//
// Output lines: {"tag", "op", "name"?, "ms" (time of the answer, from the op's start),
// "result"? | "error"? {code, message}, "progress"? [{t, progress, total, message}],
// "logs"? [{t, level, data}], "ctype"? (Content-Type of the tools/call answer),
// "progressToken"? (as sent), "killedAt"?, "tools"?, "pages"? (tools per page)}.
// Times are milliseconds from the op's start. A watchdog (WATCHDOG_MS, default 120 s)
// prints {"op":"watchdog"} and exits 3; exit 2 on usage errors, else 0.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [url, ...rawOps] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: [MCP_BEARER_TOKEN=T] gateway-client.mjs URL OP...\n');
  process.exit(2);
}
let ops;
try {
  ops = rawOps.map((s) => JSON.parse(s));
} catch (e) {
  process.stderr.write(`gateway-client.mjs: bad OP: ${e.message}\n`);
  process.exit(2);
}
const token = process.env.MCP_BEARER_TOKEN;
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
setTimeout(() => {
  out({ op: 'watchdog', error: { message: 'watchdog fired: a call hung' } });
  process.exit(3);
}, Number(process.env.WATCHDOG_MS ?? 120000)).unref();

let current = null;	// the op being run (notifications are attributed to it)
const since = () => (current ? Math.round(performance.now() - current.t0) : 0);

// Records, for each tools/call POST, the Content-Type of its answer and the progress
// token it carried.
function recordingFetch() {
  return async (input, init = {}) => {
    let rpc = '';
    let tokenSent;
    if (typeof init.body === 'string') {
      try {
        const m = JSON.parse(init.body);
        rpc = m.method ?? '';
        tokenSent = m.params?._meta?.progressToken;
      } catch { /* not JSON */ }
    }
    const res = await fetch(input, init);
    if (rpc === 'tools/call' && current) {
      current.ctype = res.headers.get('content-type');
      if (tokenSent !== undefined) current.progressToken = tokenSent;
    }
    return res;
  };
}

const clients = new Map();
async function clientFor(op) {
  const u = op.url ?? url;
  const auth = op.auth ?? !!token;
  const key = `${auth}|${u}`;
  if (clients.has(key)) return clients.get(key);
  const answers = process.env.CLIENT_ANSWERS === '1';
  const client = new Client({ name: 'mcpgate-fed-tests', version: '1.0.0' },
    { capabilities: answers ? { elicitation: {}, sampling: {}, roots: {} } : {} });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    if (current?.logs) current.logs.push({ t: since(), level: n.params.level, data: n.params.data });
  });
  const asked = (method) => current?.asked?.push({ method, t: since() });
  if (answers) {
    const fill = (p) => (p.type === 'number' || p.type === 'integer' ? 1 : p.type === 'boolean' ? true
      : Array.isArray(p.enum) ? p.enum[0] : 'answer');
    client.setRequestHandler(ElicitRequestSchema, (r) => {
      asked('elicitation/create');
      const props = r.params.requestedSchema?.properties ?? {};
      return { action: 'accept', content: Object.fromEntries(Object.entries(props).map(([k, p]) => [k, fill(p)])) };
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => {
      asked('sampling/createMessage');
      return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' };
    });
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked('roots/list');
      return { roots: [{ uri: 'file:///tmp/mcpgate-root', name: 'root' }] };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(u), {
    requestInit: auth ? { headers: { Authorization: `Bearer ${token}` } } : {},
    fetch: recordingFetch(),
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  await client.connect(transport, { timeout: 10000 });
  clients.set(key, client);
  return client;
}

const errOf = (e) => ({ code: e?.code, message: String(e?.message ?? e), data: e?.data });

async function run(op) {
  const rec = { tag: op.tag, op: op.op, name: op.name, t0: performance.now() };
  current = rec;
  try {
    if (op.op === 'sleep') {
      await new Promise((r) => setTimeout(r, op.ms ?? 0));
      return rec;
    }
    const client = await clientFor(op);
    const options = { timeout: op.timeout ?? 10000 };
    if (op.op === 'list') {
      rec.tools = [];
      rec.pages = [];
      let cursor;
      for (let i = 0; i < 50; i += 1) {
        const r = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
        rec.tools.push(...r.tools);
        rec.pages.push(r.tools.length);
        cursor = r.nextCursor;
        if (cursor === undefined) break;
      }
      if (cursor !== undefined) rec.error = { message: 'still a nextCursor after 50 pages' };
    } else if (op.op === 'call') {
      rec.logs = [];
      rec.asked = [];
      if (op.progress) {
        rec.progress = [];
        options.onprogress = (p) => {
          rec.progress.push({ t: since(), ...p });
          if (op.killAfterProgress && rec.killedAt === undefined) {
            rec.killedAt = since();
            try { process.kill(op.killAfterProgress, 'SIGKILL'); } catch (e) { rec.killError = String(e); }
          }
        };
      }
      rec.result = await client.callTool({ name: op.name, arguments: op.arguments ?? {} }, undefined, options);
    } else {
      rec.error = { message: `unknown op ${op.op}` };
    }
  } catch (e) {
    rec.error = errOf(e);
  }
  return rec;
}

for (const op of ops) {
  const rec = await run(op);
  rec.ms = Math.round(performance.now() - rec.t0);
  delete rec.t0;
  current = null;
  out(rec);
}
for (const c of clients.values()) await c.close().catch(() => {});
process.exit(0);
