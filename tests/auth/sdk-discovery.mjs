#!/usr/bin/env node
// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned in
// tests/package.json) discovers mcpgate's authorization on its own and gets in:
//
//   POST /mcp → 401 + Bearer challenge → RFC 9728 protected-resource metadata (the URL in
//   the challenge) → RFC 8414 metadata of the authorization server → RFC 7591 dynamic
//   client registration → authorization code + PKCE (S256) with resource=<gateway URL>
//   through the test IdP's headless login → token → initialize, tools/list, ping.
//
// Every HTTP request is seen by a wrapper around globalThis.fetch (the SDK calls fetch
// with redirect: 'manual', so each redirect hop is logged too); the checks read that log.
// Then a negative: a token minted for another resource of the same IdP gets 401.
//
//   node tests/auth/sdk-discovery.mjs URL [--other-resource URL2] [--fragments FILE] [--no-plan] [--jwt]
//
// --jwt: the issuer issues JWT access tokens and has no introspection endpoint (the gateway
// verifies them with verify = jwt): what a token says is read from its payload, and the
// metadata must offer no introspection_endpoint.
//
// URL is the gateway's MCP endpoint (its [gateway] resource, byte for byte). Prints TAP;
// with --no-plan the "1..N" line is left to the caller (tests/auth/sdk.sh renumbers and
// counts the lines). --fragments FILE: the first and last 12 characters of every token
// seen, one per line (mode 0600), for the caller's log checks. Exit 1 on any failure.

import crypto from 'node:crypto';
import fs from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  UnauthorizedError, discoverAuthorizationServerMetadata, extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

import { clientToken, introspect } from '../idp/lib.mjs';
import { FetchLog, MemoryProvider } from '../lib/sdk-provider.mjs';

const SDK_VERSION = JSON.parse(fs.readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8')).version;
const WATCHDOG_MS = 120000; // against a hang, with room for a loaded machine
const REDIRECT_URI = 'http://127.0.0.1:8976/sdk-callback'; // never contacted: the login stops there

// --- arguments -------------------------------------------------------------------------

const argv = process.argv.slice(2);
let gatewayArg;
let otherResource;
let fragmentsFile;
let plan = true;
let jwtMode = false;
for (let i = 0; i < argv.length; i += 1) {
  const a = argv[i];
  if (a === '--other-resource') otherResource = argv[++i];
  else if (a === '--fragments') fragmentsFile = argv[++i];
  else if (a === '--no-plan') plan = false;
  else if (a === '--jwt') jwtMode = true;
  else if (!a.startsWith('--') && !gatewayArg) gatewayArg = a;
  else {
    process.stderr.write(`usage: sdk-discovery.mjs URL [--other-resource URL2] [--fragments FILE] [--no-plan] [--jwt]\n`);
    process.exit(2);
  }
}
if (!gatewayArg) {
  process.stderr.write('usage: sdk-discovery.mjs URL [--other-resource URL2] [--fragments FILE] [--no-plan] [--jwt]\n');
  process.exit(2);
}
const GATEWAY = gatewayArg; // the resource, as configured
const gatewayUrl = new URL(GATEWAY);

// --- TAP ---------------------------------------------------------------------------------

let n = 0;
let failed = 0;
function diag(text) {
  for (const line of String(text).split('\n')) process.stdout.write(`# ${line}\n`);
}
function ok(cond, desc, detail) {
  n += 1;
  if (!cond) failed += 1;
  process.stdout.write(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}\n`);
  if (!cond && detail !== undefined) diag(typeof detail === 'string' ? detail : JSON.stringify(detail));
  return !!cond;
}
function skip(desc, why) {
  n += 1;
  process.stdout.write(`ok ${n} - ${desc} # SKIP ${why}\n`);
}
function finish() {
  if (plan) process.stdout.write(`1..${n}\n`);
  process.exit(failed ? 1 : 0);
}
const watchdog = setTimeout(() => {
  ok(false, `the whole flow finished within ${WATCHDOG_MS / 1000} s`);
  printLog();
  finish();
}, WATCHDOG_MS);

// --- the fetch log (tests/lib/sdk-provider.mjs) -------------------------------------------

const flog = new FetchLog({ timeoutMs: 30000 }).install();
const log = flog.entries;
const { secret, redact } = flog;
// The test's own requests (minting and introspecting through tests/idp/lib.mjs, which uses
// the same global fetch) are tagged "harness" and left out of the checks on the client.
const harness = (fn) => flog.tagged('harness', fn);
const clientLog = () => log.filter((e) => e.tag !== 'harness');
function noQuery(u) {
  const x = new URL(u);
  return `${x.origin}${x.pathname}`;
}
const printLog = () => flog.print(diag, `fetch log (SDK ${SDK_VERSION})`);

// The in-memory OAuthClientProvider (tests/lib/sdk-provider.mjs): it registers for
// refresh tokens too, and its headless login's requests are tagged "login".
const newProvider = (o = {}) => new MemoryProvider({
  redirectUri: REDIRECT_URI,
  clientName: 'mcpgate tests/auth/sdk-discovery.mjs',
  grantTypes: ['authorization_code', 'refresh_token'],
  onSecret: secret,
  aroundLogin: (fn) => flog.tagged('login', fn),
  ...o,
});

// --- helpers -----------------------------------------------------------------------------

// What a token says: its introspection (as the gateway's client), or with --jwt its
// payload (active when its header is an RFC 9068 access token's): the gateway checks the
// signature, the test reads the claims.
async function tokenClaims(token) {
  if (!jwtMode) return harness(() => introspect({ issuer, token }));
  const [h, p] = token.split('.');
  const header = JSON.parse(Buffer.from(h ?? '', 'base64url').toString('utf8'));
  const payload = JSON.parse(Buffer.from(p ?? '', 'base64url').toString('utf8'));
  return { active: header.typ === 'at+jwt', ...payload };
}

const isGateway = (u) => noQuery(u) === noQuery(GATEWAY);
const sameOrigin = (a, b) => new URL(a).origin === new URL(b).origin;
const since = (k) => log.slice(k);
const firstAfter = (k, pred) => log.slice(k).find(pred);
const challengeOf = (e) => e?.resHeaders?.get('www-authenticate') ?? '';
const form = (e) => new URLSearchParams(e?.body ?? '');
function sdkParams(e) {
  // What the SDK itself reads from this response's challenge.
  return extractWWWAuthenticateParams(new Response(null, { status: e.status, headers: e.resHeaders }));
}
function json(e) {
  // A metadata document, as the client was served it, or { error } saying why there is none.
  if (e?.text === undefined) return { error: `Error: no document at ${e?.url}` };
  try {
    return JSON.parse(e.text);
  } catch (err) {
    return { error: String(err) };
  }
}

// --- 1. connect: 401 → discovery → registration → authorization --------------------------

diag(`@modelcontextprotocol/sdk ${SDK_VERSION}, gateway ${GATEWAY}`);
ok(SDK_VERSION === '1.32.2', `the SDK under test is @modelcontextprotocol/sdk 1.32.2 (found ${SDK_VERSION})`);

const provider = newProvider();
const clientInfo = { name: 'mcpgate-sdk-discovery', version: '1.0.0' };
const client1 = new Client(clientInfo);
const transport1 = new StreamableHTTPClientTransport(gatewayUrl, { authProvider: provider });
const { error: connectError } = await flog.attempt('connect#1', () => client1.connect(transport1));
ok(connectError instanceof UnauthorizedError,
  'first connect() stops for authorization (UnauthorizedError after redirectToAuthorization)',
  connectError ? `${connectError.name}: ${connectError.message}` : 'connect() succeeded without a token');
await client1.close().catch(() => {});

// The unauthenticated initialize.
const first = log[0];
const challenge = challengeOf(first);
const expectPrm = `${gatewayUrl.origin}/.well-known/oauth-protected-resource${gatewayUrl.pathname === '/' ? '' : gatewayUrl.pathname}`;
ok(first && first.method === 'POST' && isGateway(first.url) && !first.reqHeaders.has('authorization') && first.status === 401,
  'initialize without a token: POST /mcp → 401', first && { method: first.method, url: first.url, status: first.status ?? first.error });
ok(/^Bearer /.test(challenge) && !/,\s*(Basic|Bearer|DPoP)\b/i.test(challenge.replace(/"[^"]*"/g, '""')),
  '401 carries one Bearer challenge, first', challenge);
const parsed = first ? sdkParams(first) : {};
ok(parsed.resourceMetadataUrl?.href === expectPrm,
  `the SDK reads resource_metadata from the challenge (${expectPrm})`, { got: parsed.resourceMetadataUrl?.href ?? null, challenge });
ok(parsed.scope === 'mcp:tools', 'the SDK reads scope="mcp:tools" from the challenge', { got: parsed.scope ?? null });

// Protected-resource metadata.
const prmEntry = log[1];
ok(prmEntry && prmEntry.method === 'GET' && prmEntry.url === parsed.resourceMetadataUrl?.href && prmEntry.status === 200,
  'next request: GET of exactly the resource_metadata URL → 200 (no guessing, no fallback)',
  prmEntry && { url: prmEntry.url, status: prmEntry.status ?? prmEntry.error });
const prm = json(prmEntry);
ok(prm.resource === GATEWAY, 'protected-resource metadata: resource is the gateway URL byte for byte', { resource: prm.resource });
const issuer = prm.authorization_servers?.[0];
ok(typeof issuer === 'string' && /^https?:\/\//.test(issuer), `protected-resource metadata names the authorization server (${issuer})`, prm);

// Authorization-server metadata.
const asEntry = firstAfter(2, (e) => e.method === 'GET' && /\/\.well-known\/(oauth-authorization-server|openid-configuration)/.test(e.url));
const asTried = since(2).filter((e) => /\/\.well-known\/(oauth-authorization-server|openid-configuration)/.test(e.url)
  && log.indexOf(e) < log.indexOf(asEntry) + 1);
const expectAs = issuer ? `${new URL(issuer).origin}/.well-known/oauth-authorization-server${new URL(issuer).pathname === '/' ? '' : new URL(issuer).pathname.replace(/\/$/, '')}` : '';
ok(asEntry && asEntry.url === expectAs && asEntry.status === 200 && asTried.length === 1,
  `authorization-server metadata fetched from the issuer: GET ${expectAs} → 200, first try`,
  asTried.map((e) => `${e.url} → ${e.status ?? e.error}`).join('\n'));
diag(`AS metadata came from ${asEntry && sameOrigin(asEntry.url, GATEWAY) ? "the gateway's mirror" : 'the issuer itself'} (${asEntry?.url})`);
const asMeta = json(asEntry);
ok(asMeta.issuer === issuer, 'authorization-server metadata: issuer matches authorization_servers[0]', { issuer: asMeta.issuer });

// Dynamic client registration.
const regEntry = firstAfter(2, (e) => e.method === 'POST' && asMeta.registration_endpoint && e.url === asMeta.registration_endpoint);
let regBody = {};
try {
  regBody = JSON.parse(regEntry?.body || '{}');
} catch { /* checked below */ }
ok(regEntry && regEntry.status === 201 && provider.events.includes('saveClientInformation') && provider.clientInformation()?.client_id,
  `dynamic client registration: POST ${asMeta.registration_endpoint} → 201, client_id saved`,
  regEntry && { status: regEntry.status ?? regEntry.error, events: provider.events });
ok(JSON.stringify(regBody.redirect_uris) === JSON.stringify([REDIRECT_URI]) && regBody.scope === 'mcp:tools',
  'registration asked for our loopback redirect_uri and the challenge scope (mcp:tools)', { redirect_uris: regBody.redirect_uris, scope: regBody.scope });
const clientId = provider.clientInformation()?.client_id;

// The authorization request.
const az = provider.authorizationUrl;
const q = az?.searchParams ?? new URLSearchParams();
ok(az && noQuery(az.href) === asMeta.authorization_endpoint,
  `authorization request sent to the authorization_endpoint (${asMeta.authorization_endpoint})`, az && noQuery(az.href));
ok(q.get('resource') === GATEWAY && q.get('code_challenge_method') === 'S256',
  `authorization request carried resource=${GATEWAY} and code_challenge_method=S256`,
  { resource: q.get('resource'), code_challenge_method: q.get('code_challenge_method') });
ok(/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '') && q.get('response_type') === 'code' && q.get('client_id') === clientId
  && q.get('redirect_uri') === REDIRECT_URI && q.get('scope') === 'mcp:tools' && !!q.get('state'),
  'authorization request: code_challenge, response_type=code, the registered client_id, redirect_uri, scope=mcp:tools, state',
  Object.fromEntries([...q].filter(([k]) => k !== 'state')));
ok(provider.code && provider.callback?.searchParams.get('state') === q.get('state') && provider.callback?.searchParams.get('iss') === issuer,
  'headless login reached the redirect_uri with a code, our state and iss = the issuer',
  provider.callback ? { state_ok: provider.callback.searchParams.get('state') === q.get('state'), iss: provider.callback.searchParams.get('iss') } : 'no redirect to the redirect_uri');
const loginHops = log.filter((e) => e.tag === 'login');
ok(loginHops.length > 0 && loginHops.every((e) => sameOrigin(e.url, issuer) && e.status >= 300 && e.status < 400),
  `the login stayed at the IdP (${loginHops.length} redirects) and nothing was sent to the redirect_uri`,
  loginHops.map((e) => `${redact(e.url)} → ${e.status ?? e.error}`).join('\n'));

// --- 2. finishAuth: the code for a token ------------------------------------------------

const beforeFinish = log.length;
const { error: finishError } = await flog.attempt('finishAuth', () => transport1.finishAuth(provider.code));
const tokEntry = since(beforeFinish).find((e) => e.method === 'POST' && e.url === asMeta.token_endpoint);
const tf = form(tokEntry);
ok(!finishError && tokEntry?.status === 200, `transport.finishAuth(code): POST ${asMeta.token_endpoint} → 200`,
  finishError ? `${finishError.name}: ${finishError.message}` : { status: tokEntry?.status ?? tokEntry?.error ?? 'no token request' });
const verifier = tf.get('code_verifier') ?? '';
const s256 = crypto.createHash('sha256').update(verifier).digest('base64url');
ok(tf.get('grant_type') === 'authorization_code' && tf.get('code') === provider.code && tf.get('resource') === GATEWAY
  && tf.get('client_id') === clientId && tf.get('redirect_uri') === REDIRECT_URI && s256 === q.get('code_challenge'),
  `token request: authorization_code, the code, resource=${GATEWAY}, a code_verifier matching the S256 challenge`,
  { grant_type: tf.get('grant_type'), code_ok: tf.get('code') === provider.code, resource: tf.get('resource'), client_id_ok: tf.get('client_id') === clientId, pkce_ok: s256 === q.get('code_challenge') });
const tokens = provider.tokens();
ok(tokens?.access_token && /^bearer$/i.test(tokens.token_type ?? '') && provider.events.includes('saveTokens'),
  'token obtained and saved (token_type Bearer)', { token_type: tokens?.token_type, events: provider.events });
diag(`finishAuth repeated discovery: ${since(beforeFinish).filter((e) => e !== tokEntry).map((e) => `${e.method} ${e.url} → ${e.status ?? e.error}`).join('; ') || 'none'}`);

let intro = {};
if (tokens?.access_token) {
  try {
    intro = await tokenClaims(tokens.access_token);
  } catch (e) {
    intro = { error: String(e.message ?? e) };
  }
}
ok(intro.active === true && intro.aud === GATEWAY && String(intro.scope ?? '').split(' ').includes('mcp:tools') && intro.client_id === clientId,
  `the token ${jwtMode ? 'is a JWT access token (typ at+jwt)' : 'introspects active'}, aud = the gateway's resource, scope mcp:tools, our registered client`,
  { active: intro.active, aud: intro.aud, scope: intro.scope, client_id_ok: intro.client_id === clientId, error: intro.error });
if (jwtMode) {
  ok(asMeta.introspection_endpoint === undefined && typeof asMeta.jwks_uri === 'string',
    'the issuer offers no introspection endpoint, and a jwks_uri', { introspection_endpoint: asMeta.introspection_endpoint, jwks_uri: asMeta.jwks_uri });
}

// --- 3. connect again: initialize, tools/list, ping -------------------------------------

const beforeConnect = log.length;
const client2 = new Client(clientInfo);
const transport2 = new StreamableHTTPClientTransport(gatewayUrl, { authProvider: provider });
flog.tag = 'connect#2'; // until the client is closed: its optional GET stream too
const { error: connect2Error } = await flog.attempt('connect#2', () => client2.connect(transport2));
const init2 = since(beforeConnect).find((e) => e.method === 'POST' && isGateway(e.url) && /"method":"initialize"/.test(e.body));
ok(!connect2Error && init2?.status === 200 && init2.reqHeaders.get('authorization') === `Bearer ${tokens?.access_token}`,
  'initialize accepted after authorization: POST /mcp with the Bearer token → 200',
  connect2Error ? `${connect2Error.name}: ${connect2Error.message}` : { status: init2?.status ?? init2?.error });
const negotiated = transport2.protocolVersion;
ok(SUPPORTED_PROTOCOL_VERSIONS.includes(negotiated) && client2.getServerVersion()?.name,
  `version negotiated (${negotiated}), serverInfo ${client2.getServerVersion()?.name ?? '(none)'}`);
const initd = since(beforeConnect).find((e) => e.method === 'POST' && isGateway(e.url) && /"method":"notifications\/initialized"/.test(e.body));
ok(initd?.status === 202, 'notifications/initialized → 202', { status: initd?.status ?? initd?.error });

const { value: tools, error: toolsError } = await flog.attempt('connect#2', () => client2.listTools());
ok(!toolsError && Array.isArray(tools?.tools), `tools/list answered (${tools?.tools?.length ?? '?'} tools)`,
  toolsError ? `${toolsError.name}: ${toolsError.message}` : tools);
const { value: pong, error: pingError } = await flog.attempt('connect#2', () => client2.ping());
ok(!pingError && pong && typeof pong === 'object', 'ping answered', pingError ? `${pingError.name}: ${pingError.message}` : pong);
await new Promise((r) => { setTimeout(r, 200); }); // let the optional GET stream attempt land in the log
await client2.close().catch(() => {});
flog.tag = '';
const get2 = since(beforeConnect).find((e) => e.method === 'GET' && isGateway(e.url));
if (get2) diag(`the SDK's optional GET /mcp (SSE stream) got ${get2.status ?? get2.error}`);
const after = since(beforeConnect).filter((e) => isGateway(e.url));
ok(after.length > 0 && after.every((e) => e.status >= 200 && e.status < 300 || (e.method === 'GET' && e.status === 405)),
  'no 401/403 from the gateway once authorized', after.map((e) => `${e.method} → ${e.status ?? e.error}`).join(', '));

const gwRedirects = clientLog().filter((e) => sameOrigin(e.url, GATEWAY) && e.status >= 300 && e.status < 400);
ok(gwRedirects.length === 0, 'the gateway never answered with a redirect (the SDK follows only same-origin 307/308)',
  gwRedirects.map((e) => `${e.method} ${e.url} → ${e.status}`).join('\n'));

// The 2025-03-26 fallback: a client without protected-resource metadata takes the MCP
// origin as the authorization server; the gateway's mirror must then serve the issuer's
// RFC 8414 document (the SDK's own discovery function, pointed at the gateway).
const { value: mirrored, error: mirrorError } = await flog.attempt('legacy',
  () => discoverAuthorizationServerMetadata(new URL('/', GATEWAY)));
const mirrorEntry = log.filter((e) => e.tag === 'legacy')[0];
ok(mirrored?.issuer === issuer && mirrored?.token_endpoint === asMeta.token_endpoint
  && mirrorEntry?.url === `${gatewayUrl.origin}/.well-known/oauth-authorization-server` && mirrorEntry?.status === 200,
  "legacy fallback: the SDK's AS discovery at the gateway's origin gets the issuer's document from the mirror, first try",
  mirrorError ? String(mirrorError.message ?? mirrorError) : { url: mirrorEntry?.url, status: mirrorEntry?.status, issuer: mirrored?.issuer });

// --- 4. where the credentials went -------------------------------------------------------

const at = tokens?.access_token;
const carriers = at ? clientLog().filter((e) => e.url.includes(at) || e.body.includes(at) || [...e.reqHeaders].some(([, v]) => v.includes(at))) : [];
const badCarriers = carriers.filter((e) => !isGateway(e.url) || e.url.includes(at) || e.body.includes(at)
  || [...e.reqHeaders].some(([k, v]) => k !== 'authorization' && v.includes(at))
  || e.reqHeaders.get('authorization') !== `Bearer ${at}`);
ok(at && carriers.length > 0 && badCarriers.length === 0,
  `the access token was sent only to the gateway (${carriers.length} requests, Authorization header only): never to the IdP, a URL or a body`,
  badCarriers.map((e) => `${e.method} ${redact(e.url)}`).join('\n') || 'the token was never sent');
const codeCarriers = provider.code ? clientLog().filter((e) => e.url.includes(provider.code) || e.body.includes(provider.code)) : [];
ok(codeCarriers.length === 1 && codeCarriers[0] === tokEntry,
  'the authorization code was sent only to the token endpoint, once',
  codeCarriers.map((e) => `${e.method} ${redact(e.url)}`).join('\n'));
const gwAuthBeforeToken = log.slice(0, beforeFinish).filter((e) => isGateway(e.url) && e.reqHeaders.has('authorization'));
ok(gwAuthBeforeToken.length === 0, 'nothing was sent to the gateway with an Authorization header before the token existed');
const strangers = clientLog().filter((e) => !sameOrigin(e.url, GATEWAY) && !(issuer && sameOrigin(e.url, issuer)));
ok(strangers.length === 0, 'every request went to the gateway or the IdP', strangers.map((e) => e.url).join('\n'));

// --- 5. a token for another resource is refused ------------------------------------------

let foreign;
if (!otherResource) {
  skip('a token for another resource gets 401', 'no --other-resource');
} else {
  try {
    foreign = (await harness(() => clientToken({ issuer, client: 'machine-acme', scope: 'mcp:tools', resource: otherResource }))).access_token;
  } catch (e) {
    ok(false, `token minted for the other resource ${otherResource}`, String(e.message ?? e));
  }
  if (foreign) {
    secret(foreign, 'foreign_token');
    let fi = {};
    try {
      fi = await tokenClaims(foreign);
    } catch (e) {
      fi = { error: String(e.message ?? e) };
    }
    ok(fi.active === true && fi.aud === otherResource && fi.aud !== GATEWAY,
      `a live token for the other resource (aud ${otherResource}) exists`, { active: fi.active, aud: fi.aud, error: fi.error });
    const beforeForeign = log.length;
    const client3 = new Client(clientInfo);
    const transport3 = new StreamableHTTPClientTransport(gatewayUrl, {
      requestInit: { headers: { Authorization: `Bearer ${foreign}` } },
    });
    const { error: e3 } = await flog.attempt('foreign', () => client3.connect(transport3));
    await client3.close().catch(() => {});
    const fe = since(beforeForeign).find((e) => e.method === 'POST' && isGateway(e.url));
    ok(e3 instanceof StreamableHTTPError && e3.code === 401 && fe?.status === 401,
      'a client holding a token for another resource is refused: initialize → 401',
      e3 ? `${e3.name} code ${e3.code}: ${redact(e3.message)}` : 'connect() succeeded');
    const fp = fe ? sdkParams(fe) : {};
    ok(/^Bearer /.test(challengeOf(fe)) && fp.error === 'invalid_token' && fp.resourceMetadataUrl?.href === expectPrm,
      'its challenge: Bearer, error="invalid_token", the same resource_metadata (as the SDK reads it)',
      { challenge: redact(challengeOf(fe)), error: fp.error ?? null });
    // With an auth provider holding that token, the SDK must not keep it: it re-authorizes.
    const p4 = newProvider({
      tokens: { access_token: foreign, token_type: 'Bearer' }, clientInformation: provider.clientInformation(),
    });
    const beforeP4 = log.length;
    const client4 = new Client(clientInfo);
    const transport4 = new StreamableHTTPClientTransport(gatewayUrl, { authProvider: p4 });
    const { error: e4 } = await flog.attempt('foreign+provider', () => client4.connect(transport4));
    await client4.close().catch(() => {});
    const p4first = since(beforeP4).find((e) => e.method === 'POST' && isGateway(e.url));
    ok(p4first?.status === 401 && e4 instanceof UnauthorizedError && p4.events.includes('redirectToAuthorization')
      && p4.authorizationUrl?.searchParams.get('resource') === GATEWAY,
      'an SDK client whose stored token is for another resource gets 401 and starts a new authorization for the gateway',
      { status: p4first?.status ?? p4first?.error, error: e4 ? `${e4.name}: ${redact(e4.message)}` : 'none', events: p4.events });
  }
}

// --- the end -----------------------------------------------------------------------------

printLog();
if (fragmentsFile) {
  const all = [tokens?.access_token, tokens?.refresh_token, foreign, provider.code].filter((t) => t && t.length >= 24);
  // A JWT begins with its header, the same for every token: its pieces are from the middle
  // of its payload and the end of its signature.
  const first = (t) => (t.split('.').length === 3 ? t.slice(Math.floor(t.length / 2), Math.floor(t.length / 2) + 12) : t.slice(0, 12));
  fs.writeFileSync(fragmentsFile, all.map((t) => `${first(t)}\n${t.slice(-12)}\n`).join(''), { mode: 0o600 });
}
clearTimeout(watchdog);
finish();
