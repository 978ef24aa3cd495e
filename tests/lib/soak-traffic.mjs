#!/usr/bin/env node
// Mixed MCP traffic for tests/soak: CLIENTS concurrent loops, each picking an action at
// random until SECONDS have passed, every answer checked against what it must be.
//
//   soak-traffic.mjs --url http://127.0.0.1:PORT/mcp --token T [--token T2...] --seconds 60
//               [--clients 6] [--out summary.json] [--seed N] [--only ACTION,...]
//
// Actions: tools/list (following one cursor), tools/call echo (JSON), tools/call slow
// with progress on an event stream (read to the end), ping, a batch, a session
// (initialize, tools/list in it, DELETE), the session's GET stream (read briefly, then
// dropped), a bad token and no token (401), a body that is not JSON (400), health, and
// a client that drops an event-stream call after its first progress event. Each request
// has a 60 s limit. The summary (JSON): per action the count, the statuses seen and the
// latencies; every unexpected answer (first 50) with what was wanted.

import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';

const { values: a } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string', multiple: true, default: [] },
    seconds: { type: 'string', default: '60' },
    clients: { type: 'string', default: '6' },
    out: { type: 'string' },
    seed: { type: 'string', default: String(Date.now() % 100000) },
    only: { type: 'string' },
  },
  strict: true,
});
if (!a.url || a.token.length === 0) {
  process.stderr.write('usage: soak-traffic.mjs --url URL --token T [--token T...] --seconds N [--clients N] [--out FILE]\n');
  process.exit(2);
}
const URL_ = a.url;
const HEALTH = new URL('/mcp/health', URL_).toString();
const END = Date.now() + Number(a.seconds) * 1000;
const LIMIT_MS = 60000;
const VERSION = '2025-11-25';

let seed = Number(a.seed) >>> 0 || 1;
function rand() { // xorshift32: a run can be repeated with --seed
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const stats = {};
const unexpected = [];
let nUnexpected = 0;
function record(action, status, ms, ok, detail) {
  const s = (stats[action] ??= { n: 0, statuses: {}, ms: [] });
  s.n += 1;
  s.statuses[status] = (s.statuses[status] ?? 0) + 1;
  s.ms.push(ms);
  if (!ok) {
    nUnexpected += 1;
    if (unexpected.length < 50) unexpected.push({ action, status, detail: String(detail).slice(0, 400), at: new Date().toISOString() });
  }
}

let nextId = 1;
const rpc = (method, params = {}) => ({ jsonrpc: '2.0', id: nextId++, method, params });
function headers(token, extra = {}) {
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...extra };
  if (token !== null) h.Authorization = `Bearer ${token}`;
  return h;
}
async function post(body, { token = pick(a.token), accept, sid, raw, signal } = {}) {
  const extra = {};
  if (accept) extra.Accept = accept;
  if (sid) Object.assign(extra, { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': VERSION });
  return fetch(URL_, {
    method: 'POST', headers: headers(token, extra), body: raw ?? JSON.stringify(body),
    signal: signal ?? AbortSignal.timeout(LIMIT_MS),
  });
}
async function json(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { return { unparsed: text.slice(0, 200) }; }
}
// sse(res, onEvent): reads an event stream to its end (or until onEvent returns true);
// returns the JSON messages.
async function sse(res, onEvent = () => false) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const msgs = [];
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data) continue;
      try { msgs.push(JSON.parse(data)); } catch { msgs.push({ unparsed: data.slice(0, 200) }); }
      if (onEvent(msgs[msgs.length - 1])) { await reader.cancel().catch(() => {}); return msgs; }
    }
  }
  return msgs;
}

const actions = {
  async list() {
    let res = await post(rpc('tools/list'));
    let b = await json(res);
    if (res.status !== 200 || !Array.isArray(b.result?.tools)) return [res.status, false, JSON.stringify(b)];
    if (b.result.nextCursor) {
      res = await post(rpc('tools/list', { cursor: b.result.nextCursor }));
      b = await json(res);
      if (res.status !== 200 || !Array.isArray(b.result?.tools)) return [res.status, false, JSON.stringify(b)];
    }
    return [res.status, true];
  },
  async call() {
    const args = { n: Math.floor(rand() * 1e6), text: 'soak ✓' };
    const res = await post(rpc('tools/call', { name: 'echo', arguments: args }), { accept: 'application/json' });
    const b = await json(res);
    const same = res.status === 200 && b.result?.content?.[0]?.text === JSON.stringify(args);
    return [res.status, same, JSON.stringify(b)];
  },
  async stream() {
    const res = await post(rpc('tools/call', { name: 'slow', arguments: { ms: 300 }, _meta: { progressToken: 'p' } }),
      { accept: 'text/event-stream' });
    if (res.status !== 200 || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return [res.status, false, await res.text()];
    }
    const msgs = await sse(res);
    const last = msgs[msgs.length - 1];
    return [res.status, last?.result?.content?.[0]?.text === 'slept 300 ms', JSON.stringify(msgs.slice(-2))];
  },
  async ping() {
    const res = await post(rpc('ping'));
    const b = await json(res);
    return [res.status, res.status === 200 && b.result && Object.keys(b.result).length === 0, JSON.stringify(b)];
  },
  async batch() {
    const body = [rpc('ping'), rpc('tools/list'), rpc('tools/call', { name: 'echo', arguments: { b: 1 } }),
      { jsonrpc: '2.0', method: 'notifications/initialized' }];
    const res = await post(body, { accept: 'application/json' });
    const b = await json(res);
    return [res.status, res.status === 200 && Array.isArray(b) && b.length === 3 && b.every((m) => m.result), JSON.stringify(b).slice(0, 300)];
  },
  async session() {
    const token = pick(a.token);
    let res = await post(rpc('initialize', { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'soak', version: '1' } }),
      { token, accept: 'application/json' });
    const sid = res.headers.get('mcp-session-id');
    let b = await json(res);
    if (res.status !== 200 || !sid) return [res.status, false, `initialize: ${JSON.stringify(b)}`];
    res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sid });
    await res.arrayBuffer();
    if (res.status !== 202) return [res.status, false, 'notifications/initialized'];
    res = await post(rpc('tools/list'), { token, sid, accept: 'application/json' });
    b = await json(res);
    if (res.status !== 200 || !Array.isArray(b.result?.tools)) return [res.status, false, `in session: ${JSON.stringify(b)}`];
    res = await fetch(URL_, { method: 'DELETE', headers: { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': VERSION }, signal: AbortSignal.timeout(LIMIT_MS) });
    await res.arrayBuffer();
    return [res.status, res.status === 204, 'DELETE'];
  },
  async listen() { // the session's GET stream, dropped after a moment
    const token = pick(a.token);
    let res = await post(rpc('initialize', { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'soak', version: '1' } }),
      { token, accept: 'application/json' });
    const sid = res.headers.get('mcp-session-id');
    await res.arrayBuffer();
    if (res.status !== 200 || !sid) return [res.status, false, 'initialize'];
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 300 + rand() * 700);
    try {
      res = await fetch(URL_, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream', 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': VERSION }, signal: ac.signal });
      // 405 when every stream slot of the process is taken: a documented answer.
      if (res.status === 200) await sse(res).catch(() => {});
      else await res.arrayBuffer();
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    } finally {
      clearTimeout(timer);
    }
    return [res.status, res.status === 200 || res.status === 405, 'GET stream'];
  },
  async dropped() { // a client that goes away after the first progress event
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10000);
    let status = 0;
    try {
      const res = await post(rpc('tools/call', { name: 'slow', arguments: { ms: 2000 }, _meta: { progressToken: 'd' } }),
        { accept: 'text/event-stream', signal: ac.signal });
      status = res.status;
      if (status === 200) await sse(res, (m) => m.method === 'notifications/progress');
      ac.abort();
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    } finally {
      clearTimeout(timer);
    }
    return [status, status === 200, 'dropped call'];
  },
  async badtoken() {
    const res = await post(rpc('tools/list'), { token: `soak-bad-${Math.floor(rand() * 1e9).toString(36)}` });
    await res.arrayBuffer();
    return [res.status, res.status === 401 && /invalid_token/.test(res.headers.get('www-authenticate') ?? ''), res.headers.get('www-authenticate')];
  },
  async notoken() {
    const res = await post(rpc('tools/list'), { token: null });
    await res.arrayBuffer();
    return [res.status, res.status === 401, 'no token'];
  },
  async badjson() {
    const res = await post(null, { raw: '{"jsonrpc":"2.0",' });
    const b = await json(res);
    return [res.status, res.status === 400 && b.jsonrpc_code === -32700, JSON.stringify(b)];
  },
  async health() {
    const res = await fetch(HEALTH, { signal: AbortSignal.timeout(LIMIT_MS) });
    const b = await json(res);
    return [res.status, res.status === 200 && b.status === 'ok', JSON.stringify(b)];
  },
};
// how often each runs (out of the sum)
const WEIGHTS = { list: 12, call: 20, stream: 10, ping: 12, batch: 8, session: 6, listen: 2, dropped: 5, badtoken: 10, notoken: 4, badjson: 4, health: 4 };
const only = a.only ? a.only.split(',') : Object.keys(WEIGHTS);
for (const k of only) if (!(k in WEIGHTS)) { process.stderr.write(`unknown action ${k}\n`); process.exit(2); }
const deck = Object.entries(WEIGHTS).filter(([k]) => only.includes(k)).flatMap(([k, w]) => Array(w).fill(k));

async function client() {
  while (Date.now() < END) {
    const action = pick(deck);
    const t0 = performance.now();
    try {
      const [status, ok, detail] = await actions[action]();
      record(action, status, Math.round(performance.now() - t0), ok, detail);
    } catch (e) {
      record(action, 'error', Math.round(performance.now() - t0), false, e?.cause?.code ?? e?.message ?? e);
    }
  }
}

const started = Date.now();
await Promise.all(Array.from({ length: Number(a.clients) }, client));
const pct = (xs, p) => { const s = [...xs].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * p))] : null; };
const summary = {
  seconds: Math.round((Date.now() - started) / 1000),
  seed: Number(a.seed),
  requests: Object.values(stats).reduce((n, s) => n + s.n, 0),
  unexpected: nUnexpected,
  actions: Object.fromEntries(Object.entries(stats).sort().map(([k, s]) => [k, { n: s.n, statuses: s.statuses, p50: pct(s.ms, 0.5), p99: pct(s.ms, 0.99), max: pct(s.ms, 1) }])),
  first_unexpected: unexpected,
};
const out = JSON.stringify(summary, null, 1);
if (a.out) writeFileSync(a.out, out + '\n');
else process.stdout.write(out + '\n');
process.exit(0);
