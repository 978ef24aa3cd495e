#!/usr/bin/env node
// Checks what the conformance suite does not call: the relay helpers of fixture.mjs
// (echo, echo_N, slow, request_headers, rpc_error, update_watched_resource), pagination,
// log-level filtering, resumption after test_reconnection, and the HTTP answers of the
// session layer. Needs a fixture started with --tools 50 --page-size 20 --name NAME.
//
//   node tests/upstream/extras.mjs URL NAME [--no-plan]
//
// Prints TAP (tests/upstream/selftest.sh renumbers it); exit 1 on any failure.

import http from 'node:http';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ok, done } from '../lib/tap.mjs';

const [url, name, ...rest] = process.argv.slice(2);
if (!url || !name) {
  process.stderr.write('usage: extras.mjs URL NAME [--no-plan]\n');
  process.exit(2);
}
const plan = !rest.includes('--no-plan');
const EXTRA_TOOLS = 50, PAGE = 20, BASE_TOOLS = 19;
setTimeout(() => { ok(false, 'extras.mjs finished within 120 s'); finish(); }, 120000).unref();

function finish() {
  if (plan) done();
  process.exit(process.exitCode ?? 0);
}
// Without --no-plan tap.mjs's done() prints the plan and sets the exit status; with it,
// track failures ourselves.
function check(cond, desc, detail) {
  if (!ok(cond, desc, detail)) process.exitCode = 1;
  return cond;
}
async function attempt(desc, fn) {
  try { await fn(); } catch (e) { check(false, desc, e.stack ?? String(e)); }
}
const textOf = (r) => r?.content?.find((c) => c.type === 'text')?.text;

async function connect(headers = {}) {
  const client = new Client({ name: 'extras', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const a = await connect({ 'x-fixture-test': 'hello' });
const { client } = a;
check(client.getServerVersion()?.name === name, `serverInfo.name is --name (${name})`, client.getServerVersion());

// Pagination over every tool.
await attempt('tools/list pages', async () => {
  const first = await client.listTools();
  check(first.tools.length === PAGE && typeof first.nextCursor === 'string', `tools/list: first page holds --page-size (${PAGE}) tools and a nextCursor`,
    { count: first.tools.length, nextCursor: first.nextCursor });
  const all = [...first.tools];
  let cursor = first.nextCursor, pages = 1;
  while (cursor && pages < 50) {
    const p = await client.listTools({ cursor });
    all.push(...p.tools); cursor = p.nextCursor; pages++;
  }
  const names = all.map((t) => t.name);
  check(all.length === BASE_TOOLS + EXTRA_TOOLS && new Set(names).size === names.length,
    `tools/list: ${pages} pages, ${BASE_TOOLS} + ${EXTRA_TOOLS} distinct tools`, { count: all.length, pages });
  const echoes = names.filter((n) => /^echo_\d+$/.test(n)).sort((x, y) => x.localeCompare(y, 'en', { numeric: true }));
  check(echoes.length === EXTRA_TOOLS && echoes[0] === 'echo_0' && echoes.at(-1) === `echo_${EXTRA_TOOLS - 1}`,
    `--tools ${EXTRA_TOOLS}: echo_0..echo_${EXTRA_TOOLS - 1}`, echoes.slice(0, 3));
  const bad = all.filter((t) => !t.description || t.inputSchema?.type !== 'object');
  check(bad.length === 0, 'every tool has a description and an object inputSchema', bad.map((t) => t.name));
  for (const want of ['echo', 'slow', 'request_headers', 'rpc_error', 'update_watched_resource', 'json_schema_2020_12_tool', 'test_reconnection']) {
    if (!names.includes(want)) check(false, `tool ${want} listed`);
  }
});
await attempt('bad cursor', async () => {
  let err;
  try { await client.listTools({ cursor: 'not-a-cursor!' }); } catch (e) { err = e; }
  check(err?.code === -32602, 'tools/list with a bad cursor: -32602', err?.message);
});

// Tools.
await attempt('echo', async () => {
  const args = { a: 1, b: 'x', c: [true, null], d: { e: 'é' } };
  const r = await client.callTool({ name: 'echo', arguments: args });
  check(JSON.stringify(JSON.parse(textOf(r))) === JSON.stringify(args), 'echo returns its arguments as JSON text', r);
});
await attempt('echo_N', async () => {
  const r = await client.callTool({ name: 'echo_7', arguments: { text: 'seven' } });
  check(textOf(r) === 'seven' && !r.isError, 'echo_7 echoes its text argument', r);
  const e = await client.callTool({ name: 'echo_7', arguments: {} });
  check(e.isError === true, 'echo_7 without text: isError', e);
});
await attempt('slow progress', async () => {
  const progress = [];
  const t0 = Date.now();
  const r = await client.callTool({ name: 'slow', arguments: { ms: 450 } }, CallToolResultSchema, { onprogress: (p) => progress.push(p) });
  const ms = Date.now() - t0;
  const increasing = progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress);
  check(textOf(r) === 'slept 450 ms' && ms >= 440, `slow {ms: 450} sleeps and answers (${ms} ms)`, r);
  // About one per 100 ms: at least 3 even on a loaded machine.
  check(progress.length >= 3 && increasing && progress.at(-1).progress === 450 && progress.every((p) => p.total === 450),
    `slow: progress notifications every 100 ms, increasing, up to 450/450 (${progress.length})`, progress);
});
await attempt('slow cancel', async () => {
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort('test'), 300);
  let err;
  try { await client.callTool({ name: 'slow', arguments: { ms: 20000 } }, CallToolResultSchema, { signal: ac.signal }); } catch (e) { err = e; }
  check(err !== undefined && Date.now() - t0 < 3000, 'slow {ms: 20000} cancelled after 300 ms: the call ends at once', String(err));
  const r = await client.callTool({ name: 'echo_1', arguments: { text: 'still here' } });
  check(textOf(r) === 'still here', 'the session works after a cancellation', r);
});
await attempt('request_headers', async () => {
  const h = JSON.parse(textOf(await client.callTool({ name: 'request_headers', arguments: {} })));
  check(h['x-fixture-test'] === 'hello' && h['mcp-session-id'] === a.transport.sessionId && /^\d{4}-\d{2}-\d{2}$/.test(h['mcp-protocol-version'] ?? ''),
    'request_headers returns the call\'s HTTP headers (custom header, Mcp-Session-Id, MCP-Protocol-Version)', h);
});
await attempt('rpc_error', async () => {
  let err;
  try { await client.callTool({ name: 'rpc_error', arguments: { code: -32050, message: 'boom' } }); } catch (e) { err = e; }
  check(err?.code === -32050 && /boom/.test(err?.message), 'rpc_error {code: -32050}: a JSON-RPC error, not a result', err?.message);
  let unknown;
  try { await client.callTool({ name: 'no_such_tool', arguments: {} }); } catch (e) { unknown = e; }
  check(unknown?.code === -32602, 'unknown tool: JSON-RPC error -32602', unknown?.message);
});
await attempt('resumption', async () => {
  const r = await client.callTool({ name: 'test_reconnection', arguments: {} });
  check(/completed/.test(textOf(r) ?? ''), 'test_reconnection: the SDK client resumes with Last-Event-ID and gets the result', r);
});

// Resources, completions, logging.
await attempt('resources', async () => {
  const r = await client.readResource({ uri: 'test://template/abc%2F1/data' });
  check(JSON.parse(r.contents[0].text).id === 'abc/1', 'resource template: the id is substituted (percent-decoded)', r);
  let err;
  try { await client.readResource({ uri: 'test://nothing' }); } catch (e) { err = e; }
  check(err?.code === -32002, 'unknown resource: -32002', err?.message);
  const t = await client.listResourceTemplates();
  check(t.resourceTemplates?.[0]?.uriTemplate === 'test://template/{id}/data', 'resources/templates/list', t);
});
await attempt('completion', async () => {
  const r = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
  check(JSON.stringify(r.completion.values) === '["paris","park","party"]', 'completion/complete filters by prefix', r);
});
await attempt('log level', async () => {
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel('warning');
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  const filtered = logs.length;
  await client.setLoggingLevel('debug');
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  check(filtered === 0 && logs.length === 3 && logs.every((l) => l.level === 'info' && l.logger === name),
    'logging/setLevel warning filters the info logs; debug lets all three through', { filtered, logs });
});
await attempt('subscriptions', async () => {
  const b = await connect();
  let uri = null;
  b.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { uri = n.params.uri; });
  await b.client.subscribeResource({ uri: 'test://watched-resource' });
  const before = (await client.readResource({ uri: 'test://watched-resource' })).contents[0].text;
  // The update goes on B's GET stream, which the SDK client opens on its own after
  // initialize: until it is open, updates are lost, so update until one arrives.
  for (const t0 = Date.now(); uri === null && Date.now() - t0 < 5000;) {
    await client.callTool({ name: 'update_watched_resource', arguments: {} });
    await new Promise((r) => setTimeout(r, 250));
  }
  const after = (await client.readResource({ uri: 'test://watched-resource' })).contents[0].text;
  check(uri === 'test://watched-resource' && before !== after,
    'update_watched_resource: a subscribed session gets notifications/resources/updated; the content changed', { uri, before, after });
  await b.transport.terminateSession();
  await b.client.close();
});

// The HTTP session layer.
const post = (body, headers = {}) => fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  body: JSON.stringify(body),
  signal: AbortSignal.timeout(5000),
});
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
await attempt('http', async () => {
  let r = await post(LIST);
  check(r.status === 400, 'tools/list without a session: 400', r.status);
  r = await post(LIST, { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-11-25' });
  check(r.status === 404 && (await r.json()).error?.code === -32001, 'unknown session: 404, -32001', r.status);
  // fetch never sends a Host of our choosing: node:http does.
  const status = await new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { host: 'evil.example.com', 'content-type': 'application/json' }, timeout: 5000 },
      (res) => { res.resume(); resolve(res.statusCode); });
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timeout')));
    req.end(JSON.stringify(LIST));
  });
  check(status === 403, 'foreign Host: 403', status);
  r = await post(LIST, { origin: 'http://evil.example.com' });
  check(r.status === 403, 'foreign Origin: 403', r.status);
  r = await fetch(url, { method: 'PUT', signal: AbortSignal.timeout(5000) });
  check(r.status === 405 && r.headers.get('allow') === 'GET, POST, DELETE', 'PUT: 405 with Allow: GET, POST, DELETE', r.status);
  r = await fetch(new URL('/other', url), { signal: AbortSignal.timeout(5000) });
  check(r.status === 404, 'another path: 404', r.status);
  r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":', signal: AbortSignal.timeout(5000) });
  check(r.status === 400 && (await r.json()).error?.code === -32700, 'bad JSON: 400, -32700', r.status);
});
await attempt('delete', async () => {
  const sid = a.transport.sessionId;
  await a.transport.terminateSession();
  const r = await post(LIST, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
  check(r.status === 404, 'after DELETE the session is gone: 404', r.status);
  await client.close();
});

finish();
