#!/usr/bin/env node
// TAP self-test of the fixture's bearer mode (fixture.mjs --require-bearer ISSUER): an
// upstream that takes only tokens meant for its own resource, as an upstream behind
// `credentials = exchange` does. Starts tests/idp/server.mjs with two resources (the
// gateway's and the upstream's) and two fixtures (one with --resource UPSTREAM, one with
// the default resource, its own URL), mints user tokens for alice and bob (audience: the
// gateway) and exchanges them (RFC 8693, client gateway-exchange) for the upstream, then
// checks with the SDK client and plain fetch who gets in, what is refused, and what the
// fixture recorded. Everything it starts is stopped on exit.
//
//   node tests/upstream/bearer-selftest.mjs [--no-plan]
//
// Prints TAP; exit 1 on any failure. Bounded: 90 s at most.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exchangeToken, setFault, userToken, RESOURCE_SCOPES } from '../idp/lib.mjs';
import { ok } from '../lib/tap.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const plan = !process.argv.includes('--no-plan');
// Resource identifiers (RFC 8707): names, not addresses; nothing listens on them.
const GATEWAY = 'http://127.0.0.1/gateway/mcp';
const UPSTREAM = 'http://127.0.0.1/upstream-bearer/mcp';

const T = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgate-bearer.'));
const children = [];
let failures = 0, tests = 0;
function check(cond, desc, detail) {
  tests++;
  if (!ok(cond, desc, detail)) failures++;
  return cond;
}
async function attempt(desc, fn) {
  try { await fn(); } catch (e) { check(false, desc, e.stack ?? String(e)); }
}
function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  fs.rmSync(T, { recursive: true, force: true });
}
async function finish() {
  // Wait (bounded) for the children to go, so that nothing outlives the run.
  await Promise.race([
    Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r))))),
    new Promise((r) => setTimeout(r, 3000).unref()),
  ]);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  cleanup();
  if (plan) console.log(`1..${tests}`);
  process.exit(failures ? 1 : 0);
}
process.on('exit', () => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanup(); process.exit(1); });
setTimeout(() => { check(false, 'bearer-selftest.mjs finished within 90 s'); finish(); }, 90000).unref();

// start(NAME, SCRIPT, ARGS) → the URL of its ready file's line; polls the file, gives up
// when the child exits or after 30 s.
async function start(name, script, argv) {
  const ready = path.join(T, `${name}.ready`);
  const logFile = path.join(T, `${name}.log`);
  const child = spawn(process.execPath, [script, '--port', '0', '--ready-file', ready, ...argv],
    { stdio: ['ignore', 'ignore', fs.openSync(logFile, 'w')] });
  children.push(child);
  const until = Date.now() + 30000;
  for (;;) {
    let line = '';
    try { line = fs.readFileSync(ready, 'utf8'); } catch { /* not yet */ }
    const m = /^ready (\S+)/.exec(line);
    if (m) return { url: m[1], child, log: () => fs.readFileSync(logFile, 'utf8') };
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > until) {
      throw new Error(`${name} did not start: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sha256 = (t) => createHash('sha256').update(t).digest('hex');
const textOf = (r) => r?.content?.find((c) => c.type === 'text')?.text;
const INIT = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bearer-selftest', version: '1' } },
};
function post(url, token, body = INIT, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15000),
  });
}
async function connect(url, token, sessionId) {
  const client = new Client({ name: 'bearer-selftest', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    sessionId, requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  return { client, transport };
}
async function refused(url, token) {
  try {
    const { client } = await connect(url, token);
    await client.close();
    return null;
  } catch (e) {
    return e;
  }
}
const getJson = async (url, init) => (await fetch(url, { signal: AbortSignal.timeout(15000), ...init })).json();
const wwwAuth = (base, description) =>
  `Bearer error="invalid_token", error_description="${description}", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;

let idp, up, own;
try {
  idp = await start('idp', path.join(HERE, '../idp/server.mjs'), ['--resource', GATEWAY, '--resource', UPSTREAM, '--quiet']);
  check(true, `idp started at ${idp.url} (resources ${GATEWAY}, ${UPSTREAM})`);
  up = await start('upstream', path.join(HERE, 'fixture.mjs'), ['--name', 'bearer', '--require-bearer', idp.url, '--resource', UPSTREAM]);
  check(true, `fixture --require-bearer --resource ${UPSTREAM} started at ${up.url}`);
  own = await start('own', path.join(HERE, 'fixture.mjs'), ['--name', 'own', '--require-bearer', idp.url]);
  check(true, `fixture --require-bearer (default resource) started at ${own.url}`);
} catch (e) {
  check(false, 'idp and fixtures started', e.message);
  await finish();
}
const issuer = idp.url;
const base = up.url.replace(/\/mcp$/, '');
const ownBase = own.url.replace(/\/mcp$/, '');
const seen = () => getJson(`${base}/_seen`);
const test = attempt;

// Tokens: each person's own (audience: the gateway), and exchanged ones for the upstream.
const tok = {};
await test('tokens minted and exchanged', async () => {
  tok.aliceOwn = (await userToken({ issuer, user: 'alice', resource: GATEWAY })).access_token;
  tok.bobOwn = (await userToken({ issuer, user: 'bob', resource: GATEWAY })).access_token;
  for (const [name, subject] of [['alice', tok.aliceOwn], ['alice2', tok.aliceOwn], ['bob', tok.bobOwn]]) {
    const r = await exchangeToken({ issuer, subjectToken: subject, resource: UPSTREAM });
    if (!r.access_token) throw new Error(`exchange for ${name}: ${JSON.stringify(r)}`);
    tok[name] = r.access_token;
  }
  const all = Object.values(tok);
  check(new Set(all).size === all.length, `5 distinct tokens: alice's and bob's own (aud gateway), 2 exchanged for alice, 1 for bob (aud upstream)`);
});

// Protected-resource metadata (RFC 9728), both paths, no token needed.
await test('protected-resource metadata', async () => {
  const want = { resource: UPSTREAM, authorization_servers: [issuer], bearer_methods_supported: ['header'], scopes_supported: [...RESOURCE_SCOPES] };
  const a = await getJson(`${base}/.well-known/oauth-protected-resource/mcp`);
  check(JSON.stringify(a) === JSON.stringify(want), '/.well-known/oauth-protected-resource/mcp: resource, authorization_servers, bearer_methods_supported, scopes_supported', { got: a, want });
  const b = await getJson(`${base}/.well-known/oauth-protected-resource`);
  check(JSON.stringify(b) === JSON.stringify(want), '/.well-known/oauth-protected-resource: the same document', b);
  const c = await getJson(`${ownBase}/.well-known/oauth-protected-resource/mcp`);
  check(c.resource === own.url, `without --resource the resource is the fixture's own URL (${own.url})`, c);
});

// No token: 401 with the SDK middleware's challenge.
await test('no token', async () => {
  const r = await post(up.url, null);
  const body = await r.json();
  check(r.status === 401 && r.headers.get('www-authenticate') === wwwAuth(base, 'Missing Authorization header') && body.error === 'invalid_token',
    'no token: 401, WWW-Authenticate Bearer error="invalid_token" with resource_metadata', { status: r.status, www: r.headers.get('www-authenticate'), body });
  const e = await refused(up.url, null);
  check(e && e.code === 401, 'no token: the SDK client cannot connect (401)', String(e));
});

// The caller's own token (audience: the gateway): active, but not for this resource.
await test("the caller's own token", async () => {
  const r = await post(up.url, tok.aliceOwn);
  await r.arrayBuffer();
  check(r.status === 401 && r.headers.get('www-authenticate') === wwwAuth(base, 'Token was not issued for this resource'),
    "alice's own token (aud gateway): 401 invalid_token \"Token was not issued for this resource\"", { status: r.status, www: r.headers.get('www-authenticate') });
  const e = await refused(up.url, tok.aliceOwn);
  check(e && e.code === 401, "alice's own token: the SDK client cannot connect (401)", String(e));
  const junk = await post(up.url, 'not-a-token-the-idp-issued');
  await junk.arrayBuffer();
  check(junk.status === 401 && junk.headers.get('www-authenticate') === wwwAuth(base, 'Token is not active'),
    'an unknown token: 401 invalid_token "Token is not active"', { status: junk.status, www: junk.headers.get('www-authenticate') });
  const wrong = await post(own.url, tok.alice);
  await wrong.arrayBuffer();
  check(wrong.status === 401 && wrong.headers.get('www-authenticate') === wwwAuth(ownBase, 'Token was not issued for this resource'),
    "an exchanged token for another upstream's resource: 401 at the default-resource fixture", { status: wrong.status });
  const s = await seen();
  check(s.accepted.length === 0, 'nothing accepted so far', s.accepted);
  const own_ = s.rejected.filter((x) => x.token_sha256 === sha256(tok.aliceOwn));
  check(own_.length >= 2 && own_.every((x) => x.reason === 'Token was not issued for this resource') && own_[0].method === 'initialize',
    "/_seen: alice's own token recorded as rejected (wrong audience, by its SHA-256, method initialize)", s.rejected);
  check(s.rejected.some((x) => x.token_sha256 === null && x.reason === 'Missing Authorization header'),
    '/_seen: the request without a token recorded as rejected, token_sha256 null', s.rejected);
});

// Alice's exchanged token: in, and whoami names her and the exchanging client.
let alice;
await test("alice's exchanged token", async () => {
  alice = await connect(up.url, tok.alice);
  check(typeof alice.transport.sessionId === 'string', "alice's exchanged token: initialize succeeds (session opened)");
  const { tools } = await alice.client.listTools();
  check(tools.some((t) => t.name === 'whoami') && tools.length === 20, 'tools/list: the 19 tools and whoami', tools.map((t) => t.name));
  const who = JSON.parse(textOf(await alice.client.callTool({ name: 'whoami', arguments: {} })));
  check(who.sub === 'alice' && who.client_id === 'gateway-exchange' && who.act?.sub === 'gateway-exchange' && who.aud === UPSTREAM && who.scope === 'mcp:tools',
    'whoami: sub alice, client_id gateway-exchange, act {sub: gateway-exchange}, aud the upstream, scope mcp:tools', who);
});

// Same subject, another token on the same session: fine. Another subject: 403.
await test('sessions bound to their subject', async () => {
  const again = await connect(up.url, tok.alice2, alice.transport.sessionId);
  const who = JSON.parse(textOf(await again.client.callTool({ name: 'whoami', arguments: {} })));
  check(who.sub === 'alice', "alice's second exchanged token on her session: accepted (same subject)", who);
  const bobOnAlice = await connect(up.url, tok.bob, alice.transport.sessionId);
  let err = null;
  try { await bobOnAlice.client.listTools(); } catch (e) { err = e; }
  check(err?.code === 403, "bob's exchanged token on alice's session: 403", String(err));
  const raw = await post(up.url, tok.bob, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
    { 'Mcp-Session-Id': alice.transport.sessionId, 'Mcp-Protocol-Version': '2025-06-18' });
  const body = await raw.json();
  check(raw.status === 403 && body.error?.code === -32000, "bob's tools/call on alice's session (fetch): 403, JSON-RPC error -32000", { status: raw.status, body });
  const bob = await connect(up.url, tok.bob);
  const bobWho = JSON.parse(textOf(await bob.client.callTool({ name: 'whoami', arguments: {} })));
  check(bobWho.sub === 'bob' && bobWho.client_id === 'gateway-exchange', "bob's exchanged token on a session of his own: whoami says bob", bobWho);
  const aliceWho = JSON.parse(textOf(await alice.client.callTool({ name: 'whoami', arguments: {} })));
  check(aliceWho.sub === 'alice', "alice's session still serves alice after bob's attempts", aliceWho);
  await bob.transport.terminateSession();
  await bob.client.close();
});

// What the fixture recorded.
await test('/_seen', async () => {
  const s = await seen();
  const names = new Map([[sha256(tok.alice), 'alice'], [sha256(tok.alice2), 'alice'], [sha256(tok.bob), 'bob']]);
  check(s.accepted.length > 0 && s.accepted.every((x) => names.get(x.token_sha256) === x.sub && x.client_id === 'gateway-exchange' && x.act?.sub === 'gateway-exchange'),
    '/_seen accepted: only the exchanged tokens, each digest with its own sub, client_id gateway-exchange, act', s.accepted);
  for (const k of ['alice', 'alice2', 'bob']) {
    check(s.accepted.some((x) => x.token_sha256 === sha256(tok[k])), `/_seen accepted: sha256 of ${k}'s exchanged token`);
  }
  const methods = s.accepted.filter((x) => x.token_sha256 === sha256(tok.alice)).map((x) => x.method);
  check(['initialize', 'notifications/initialized', 'tools/list', 'tools/call'].every((m) => methods.includes(m)),
    "/_seen accepted: alice's initialize, notifications/initialized, tools/list, tools/call", methods);
  check(s.accepted.some((x) => x.token_sha256 === sha256(tok.bob) && x.method === 'DELETE'), "/_seen accepted: bob's DELETE of his session", s.accepted.map((x) => x.method));
  check(!s.accepted.some((x) => x.token_sha256 === sha256(tok.aliceOwn) || x.token_sha256 === sha256(tok.bobOwn)),
    "/_seen accepted: never a caller's own token");
  const other = s.rejected.filter((x) => x.reason === 'session of another subject');
  check(other.length === 2 && other.every((x) => x.token_sha256 === sha256(tok.bob)) && other.some((x) => x.method === 'tools/call'),
    "/_seen rejected: bob's two requests on alice's session, reason \"session of another subject\"", other);
  check(s.rejected.every((x) => typeof x.at === 'string' && !Number.isNaN(Date.parse(x.at))) && s.accepted.every((x) => typeof x.at === 'string' && !Number.isNaN(Date.parse(x.at))),
    '/_seen: every record has an ISO time');
  const text_ = JSON.stringify(s) + up.log();
  const leaked = Object.entries(tok).filter(([, t]) => text_.includes(t)).map(([k]) => k);
  check(leaked.length === 0, 'no token in clear in /_seen or in the fixture log', leaked);
  const lines = up.log().split('\n');
  check(lines.some((l) => l.includes('bearer: accepted tools/call: sub alice') && l.includes(`sha256:${sha256(tok.alice).slice(0, 12)}`)) &&
    lines.some((l) => l.includes('bearer: rejected') && l.includes('session of another subject') && l.includes(`sha256:${sha256(tok.bob).slice(0, 12)}`)),
  'the log names sub and the first 12 hex digits of the digest, accepted and rejected', lines.filter((l) => l.includes('bearer:')).slice(-6));
  const reset = await fetch(`${base}/_seen/reset`, { method: 'POST' });
  await reset.arrayBuffer();
  const after = await seen();
  check(reset.status === 200 && after.accepted.length === 0 && after.rejected.length === 0, 'POST /_seen/reset empties both lists', after);
  await alice.client.close();
});

// The authorization server failing: no way in, and no challenge (not the token's fault).
await test('introspection failing', async () => {
  await setFault({ issuer, introspection: '500' });
  try {
    const r = await post(up.url, tok.alice);
    const body = await r.json();
    check(r.status === 500 && body.error === 'server_error' && /^introspection failed: HTTP 500/.test(body.error_description) && !r.headers.get('www-authenticate'),
      'introspection answering 500: the request gets 500 server_error "introspection failed", no WWW-Authenticate', { status: r.status, body });
  } finally {
    await setFault({ issuer, introspection: 'none' });
  }
  const s = await seen();
  check(s.accepted.length === 0 && s.rejected.length === 1 && s.rejected[0].token_sha256 === sha256(tok.alice) && /^introspection failed/.test(s.rejected[0].reason),
    '/_seen: recorded as rejected (introspection failed), nothing accepted', s);
  const r = await post(up.url, tok.alice);
  await r.arrayBuffer();
  check(r.status === 200, 'introspection back: the same token is accepted again', r.status);
});

await test('the fixture stayed healthy', async () => {
  check(!/request failed/.test(up.log()) && !/request failed/.test(own.log()), 'fixtures: no request failed', up.log().slice(-1500));
});

await finish();
