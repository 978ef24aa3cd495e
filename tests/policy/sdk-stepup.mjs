#!/usr/bin/env node
// Scope step-up with the official MCP TypeScript SDK client (@modelcontextprotocol/sdk,
// pinned in tests/package.json) against mcpgate (docs/ARCHITECTURE.md §4): a tool that
// fails only the scope test answers 403 insufficient_scope naming the scopes the call
// needs, and the SDK authorizes again for them and succeeds on the retry.
//
//   1. connect → 401 → discovery, dynamic registration (grant_types authorization_code
//      only: with a refresh token the SDK would refresh, which keeps the old scopes,
//      instead of authorizing anew), authorization for scope mcp:tools through the
//      test IdP's headless login → UnauthorizedError → finishAuth(code) → connect.
//   2. tools/list: the fx_ tools, but not fx_echo (its group wants mcp:admin).
//   3. callTool fx_echo → 403 + WWW-Authenticate: Bearer error="insufficient_scope",
//      scope="mcp:tools mcp:admin", resource_metadata=… → the SDK authorizes for those
//      scopes → UnauthorizedError → finishAuth(code) → the same callTool succeeds, on
//      the same MCP session.
//   4. tools/list: the same tools and fx_echo.
//
//   node tests/policy/sdk-stepup.mjs URL [--fragments FILE]
//
// URL is the gateway's MCP endpoint (its [gateway] resource). Prints TAP (the plan last;
// tests/policy/stepup.sh renumbers the lines into its own). --fragments FILE: the first
// and last 12 characters of every token and code seen, one per line (mode 0600), for
// the caller's log checks. Every request is in a fetch log printed at the end, secrets
// redacted. Stops itself after 120 s. Exit 1 on any failure.

import fs from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';

import { done, ok } from '../lib/tap.mjs';
import { FetchLog, MemoryProvider } from '../lib/sdk-provider.mjs';

const SDK_VERSION = JSON.parse(fs.readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8')).version;
const WATCHDOG_MS = 120000; // against a hang, with room for a loaded machine
const REDIRECT_URI = 'http://127.0.0.1:8977/stepup-callback'; // never contacted
const TOOL = 'fx_echo';
const ARGS = { greeting: 'hello after step-up', n: 3 };

function usage() {
  process.stderr.write('usage: sdk-stepup.mjs URL [--fragments FILE]\n');
  process.exit(2);
}
const argv = process.argv.slice(2);
let GATEWAY;
let fragmentsFile;
for (let i = 0; i < argv.length; i += 1) {
  if (argv[i] === '--fragments' && argv[i + 1]) fragmentsFile = argv[++i];
  else if (!argv[i].startsWith('--') && !GATEWAY) GATEWAY = argv[i];
  else usage();
}
if (!GATEWAY) usage();
const gatewayUrl = new URL(GATEWAY);
const expectPrm = `${gatewayUrl.origin}/.well-known/oauth-protected-resource${gatewayUrl.pathname === '/' ? '' : gatewayUrl.pathname}`;

function diag(text) {
  for (const line of String(text).split('\n')) console.log(`# ${line}`);
}

const flog = new FetchLog({ timeoutMs: 30000 }).install();
const log = flog.entries;
const { redact } = flog;
const provider = new MemoryProvider({
  redirectUri: REDIRECT_URI,
  clientName: 'mcpgate tests/policy/sdk-stepup.mjs',
  grantTypes: ['authorization_code'],
  onSecret: flog.secret,
  aroundLogin: (fn) => flog.tagged('login', fn),
});
const seen = { tokens: [], codes: [] }; // for --fragments

function theEnd() {
  flog.print(diag, `fetch log (SDK ${SDK_VERSION})`);
  if (fragmentsFile) {
    const all = [...seen.tokens, ...seen.codes].filter((t) => t && t.length >= 24);
    fs.writeFileSync(fragmentsFile, all.map((t) => `${t.slice(0, 12)}\n${t.slice(-12)}\n`).join(''), { mode: 0o600 });
  }
  done();
}
setTimeout(() => {
  ok(false, `the whole flow finished within ${WATCHDOG_MS / 1000} s`);
  theEnd();
}, WATCHDOG_MS).unref();

// --- helpers -----------------------------------------------------------------------------

const noQuery = (u) => `${new URL(u).origin}${new URL(u).pathname}`;
const isGateway = (u) => noQuery(u) === noQuery(GATEWAY);
const words = (s) => String(s ?? '').split(' ').filter(Boolean).sort();
const sameSet = (a, b) => JSON.stringify(words(a)) === JSON.stringify(words(b));
const errText = (e) => (e ? `${e.name}: ${redact(e.message)}` : 'no error');
const rpcOf = (e) => {
  try {
    return JSON.parse(e.body);
  } catch {
    return {};
  }
};
const gatewayPosts = (from = 0) => log.slice(from).filter((e) => e.method === 'POST' && isGateway(e.url));
const tokenPosts = (from = 0) => log.slice(from).filter((e) => e.method === 'POST' && /\/token$/.test(noQuery(e.url)));
const bearerOf = (e) => (e?.reqHeaders.get('authorization') ?? '').replace(/^Bearer /, '');
function azParams(a) {
  const q = a?.url?.searchParams ?? new URLSearchParams();
  return { scope: q.get('scope'), resource: q.get('resource'), client_id: q.get('client_id'), prompt: q.get('prompt') };
}
const attempt = (tag, fn) => flog.attempt(tag, fn);
// Every page of tools/list: the names, sorted.
async function listNames(client, tag) {
  const names = [];
  let cursor;
  for (let page = 0; page < 20; page += 1) {
    // eslint-disable-next-line no-await-in-loop
    const r = await flog.tagged(tag, () => client.listTools(cursor ? { cursor } : {}));
    names.push(...r.tools.map((t) => t.name));
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return names.sort();
}
async function finish(transport, tag) {
  const code = provider.code;
  seen.codes.push(code);
  const before = log.length;
  const r = await attempt(tag, () => transport.finishAuth(code));
  const tok = tokenPosts(before)[0];
  const tokens = provider.tokens();
  seen.tokens.push(tokens?.access_token, tokens?.refresh_token);
  return { ...r, tok, tokens, form: new URLSearchParams(tok?.body ?? '') };
}

diag(`@modelcontextprotocol/sdk ${SDK_VERSION}, gateway ${GATEWAY}`);
ok(SDK_VERSION === '1.32.2', `the SDK under test is @modelcontextprotocol/sdk 1.32.2 (found ${SDK_VERSION})`);

// --- 1. connect: 401 → authorization for mcp:tools → finishAuth → connected --------------

const clientInfo = { name: 'mcpgate-sdk-stepup', version: '1.0.0' };
const client1 = new Client(clientInfo);
const transport1 = new StreamableHTTPClientTransport(gatewayUrl, { authProvider: provider });
const c1 = await attempt('connect#1', () => client1.connect(transport1));
await client1.close().catch(() => {});
const first = gatewayPosts()[0];
ok(first?.status === 401 && !first.reqHeaders.has('authorization') && c1.error instanceof UnauthorizedError
  && provider.events.includes('redirectToAuthorization'),
  'connect() without a token: POST /mcp → 401, the SDK authorizes (redirectToAuthorization) and throws UnauthorizedError',
  { status: first?.status ?? first?.error, error: errText(c1.error), events: provider.events });
const reg = log.find((e) => e.method === 'POST' && /\/reg$/.test(noQuery(e.url)));
let regBody = {};
try {
  regBody = JSON.parse(reg?.body || '{}');
} catch { /* checked below */ }
ok(reg?.status === 201 && JSON.stringify(regBody.grant_types) === '["authorization_code"]' && provider.clientInformation()?.client_id,
  'dynamic client registration → 201, for grant_types ["authorization_code"] only (no refresh token)',
  { status: reg?.status ?? reg?.error, grant_types: regBody.grant_types, scope: regBody.scope });
const clientId = provider.clientInformation()?.client_id;
const az1 = azParams(provider.authorizations[0]);
ok(provider.authorizations.length === 1 && az1.scope === 'mcp:tools' && az1.resource === GATEWAY && az1.client_id === clientId,
  `the authorization URL asks for scope=mcp:tools (the 401 challenge's) and resource=${GATEWAY}, nothing more`, az1);
ok(provider.code && provider.callback?.searchParams.get('iss'), 'the headless login reached the redirect_uri with a code',
  provider.callback ? Object.fromEntries([...provider.callback.searchParams].map(([k, v]) => [k, k === 'code' ? '<code>' : v])) : 'no callback');
const f1 = await finish(transport1, 'finishAuth#1');
ok(!f1.error && f1.tok?.status === 200 && f1.form.get('grant_type') === 'authorization_code' && f1.tokens?.access_token,
  'transport.finishAuth(code): POST /token (authorization_code) → 200, token saved',
  { error: errText(f1.error), status: f1.tok?.status ?? f1.tok?.error, grant_type: f1.form.get('grant_type') });
ok(f1.tokens?.scope === 'mcp:tools' && !f1.tokens?.refresh_token,
  "the token's scope is mcp:tools only, and there is no refresh token",
  { scope: f1.tokens?.scope, refresh_token: f1.tokens?.refresh_token ? 'present' : 'none' });

const client = new Client(clientInfo);
const transport = new StreamableHTTPClientTransport(gatewayUrl, { authProvider: provider });
const beforeConnect = log.length;
const c2 = await attempt('connect#2', () => client.connect(transport));
const init = gatewayPosts(beforeConnect).find((e) => rpcOf(e).method === 'initialize');
const sessionId = init?.resHeaders?.get('mcp-session-id') ?? undefined;
flog.secret(sessionId, 'session_id');
ok(!c2.error && init?.status === 200 && bearerOf(init) === f1.tokens?.access_token,
  'connect() with that token: initialize → 200', { error: errText(c2.error), status: init?.status ?? init?.error });
diag(`MCP session: ${sessionId ? 'yes' : 'none'}, protocol ${transport.protocolVersion}`);

// --- 2. tools/list without mcp:admin -----------------------------------------------------

let list1 = [];
const l1 = await attempt('list#1', async () => {
  list1 = await listNames(client, 'list#1');
});
const others = list1.filter((n) => n.startsWith('fx_') && n !== TOOL);
ok(!l1.error && !list1.includes(TOOL) && others.length >= 5 && others.length === list1.length,
  `tools/list without mcp:admin: ${others.length} fx_ tools, not ${TOOL}`,
  { error: errText(l1.error), tools: list1 });

// --- 3. callTool fx_echo: 403 insufficient_scope → step-up → retry --------------------------

const beforeCall = log.length;
const call1 = await attempt('call#1', () => client.callTool({ name: TOOL, arguments: ARGS }));
const denied = gatewayPosts(beforeCall).find((e) => rpcOf(e).method === 'tools/call');
const challenge = denied?.resHeaders?.get('www-authenticate') ?? '';
const sdkRead = denied?.resHeaders ? extractWWWAuthenticateParams(new Response(null, { status: denied.status, headers: denied.resHeaders })) : {};
ok(denied?.status === 403 && /^Bearer /.test(challenge) && sdkRead.error === 'insufficient_scope',
  `callTool ${TOOL}: POST /mcp → 403 with a Bearer challenge, error="insufficient_scope"`,
  { status: denied?.status ?? denied?.error, challenge: redact(challenge) });
const needed = words(sdkRead.scope);
ok(needed.includes('mcp:tools') && needed.includes('mcp:admin') && sdkRead.resourceMetadataUrl?.href === expectPrm,
  `the challenge names the scopes the call needs (mcp:tools and mcp:admin) and resource_metadata=${expectPrm}, as the SDK reads it`,
  { scope: sdkRead.scope ?? null, resource_metadata: sdkRead.resourceMetadataUrl?.href ?? null, challenge: redact(challenge) });
const az2 = azParams(provider.authorizations[1]);
ok(provider.authorizations.length === 2 && words(az2.scope).includes('mcp:admin') && words(az2.scope).includes('mcp:tools')
  && az2.resource === GATEWAY && az2.client_id === clientId,
  'the SDK reacts with a new authorization (redirectToAuthorization) for scope mcp:tools mcp:admin, same client and resource',
  { authorizations: provider.authorizations.length, ...az2, client_ok: az2.client_id === clientId });
const refreshes = tokenPosts(beforeCall).filter((e) => new URLSearchParams(e.body).get('grant_type') === 'refresh_token');
const regs = log.filter((e) => e.method === 'POST' && /\/reg$/.test(noQuery(e.url)));
ok(refreshes.length === 0 && regs.length === 1, 'no refresh attempt and no second registration',
  { refreshes: refreshes.length, registrations: regs.length });
ok(call1.error instanceof UnauthorizedError, 'the call itself throws UnauthorizedError (the SDK waits for the new code)',
  call1.error ? errText(call1.error) : { result: call1.value });
const f2 = await finish(transport, 'finishAuth#2');
ok(!f2.error && f2.tok?.status === 200 && f2.tokens?.access_token && f2.tokens.access_token !== f1.tokens?.access_token
  && words(f2.tokens.scope).includes('mcp:admin') && words(f2.tokens.scope).includes('mcp:tools') && !f2.tokens.refresh_token,
  'transport.finishAuth(new code) → 200: a new token with scope mcp:tools mcp:admin (no refresh token)',
  { error: errText(f2.error), status: f2.tok?.status ?? f2.tok?.error, scope: f2.tokens?.scope, new_token: f2.tokens?.access_token !== f1.tokens?.access_token });

const beforeRetry = log.length;
const call2 = await attempt('call#2', () => client.callTool({ name: TOOL, arguments: ARGS }));
const retried = gatewayPosts(beforeRetry).find((e) => rpcOf(e).method === 'tools/call');
const text = call2.value?.content?.[0]?.text;
let echoed;
try {
  echoed = JSON.parse(text);
} catch { /* checked below */ }
ok(!call2.error && call2.value?.isError !== true && JSON.stringify(echoed) === JSON.stringify(ARGS),
  `the retried callTool ${TOOL} succeeds with the echo of its arguments`,
  { error: errText(call2.error), result: call2.value });
ok(retried?.status === 200 && bearerOf(retried) === f2.tokens?.access_token
  && (retried.reqHeaders.get('mcp-session-id') ?? undefined) === sessionId,
  '… sent with the new token, on the same MCP session (the session belongs to the caller, not to one token)',
  { status: retried?.status ?? retried?.error, new_token: bearerOf(retried) === f2.tokens?.access_token,
    same_session: (retried?.reqHeaders.get('mcp-session-id') ?? undefined) === sessionId });

// --- 4. tools/list with mcp:admin ----------------------------------------------------------

let list2 = [];
const l2 = await attempt('list#2', async () => {
  list2 = await listNames(client, 'list#2');
});
ok(!l2.error && JSON.stringify(list2) === JSON.stringify([...list1, TOOL].sort()),
  `tools/list after the step-up: the same ${list1.length} tools and ${TOOL}`,
  { error: errText(l2.error), added: list2.filter((n) => !list1.includes(n)), removed: list1.filter((n) => !list2.includes(n)) });

// --- and no loop -----------------------------------------------------------------------------

const statuses = gatewayPosts(beforeConnect).map((e) => e.status ?? e.error);
ok(statuses.filter((s) => s === 403).length === 1 && statuses.filter((s) => s === 401).length === 0
  && provider.authorizations.length === 2,
  'once connected: one 403, no 401, two authorizations in all (no step-up loop)',
  { statuses, authorizations: provider.authorizations.length });

await client.close().catch(() => {});
theEnd();
