#!/usr/bin/env node
// Self-test of the test authorization server and its token tools. TAP on stdout.
//   node tests/idp/selftest.mjs [-v]      (-v: print the introspection responses as # lines)
// Starts server.mjs on a free loopback port, exercises every token kind, the fault switches
// and the counters with real HTTP calls, stops the server. Bounded to 60 s.
// ID-JAG: two more servers, A (the organisation's issuer) and B (an upstream's own, trusting
// A's ID-JAGs), on free ports picked before either starts; both stopped at the end.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import crypto from 'node:crypto';

import {
  ACCOUNTS, CookieJar, ID_JAG, JWT_BEARER, SCOPES, TOKEN_EXCHANGE, clientToken, discover,
  exchangeToken, exchanges, followAuthorization, freePort, idJag, introspect, jwtBearer, pkcePair, refreshToken, registerClient,
  resetStats, revokeToken, setFault, spawnIdp, stats, userToken,
} from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VERBOSE = process.argv.includes('-v');
const R1 = 'http://127.0.0.1:18080/mcp'; // the "gateway" (nothing needs to listen there)
const R2 = 'http://127.0.0.1:18081/other/mcp'; // another resource: wrong-audience tokens
// A watchdog against a hang, not a speed limit: 1100 tokens take 40 s on a loaded machine.
const OVERALL_MS = 300000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let n = 0;
let failed = 0;
function ok(cond, name, diag) {
  n += 1;
  if (cond) {
    process.stdout.write(`ok ${n} - ${name}\n`);
  } else {
    failed += 1;
    process.stdout.write(`not ok ${n} - ${name}\n`);
    if (diag !== undefined) {
      const text = typeof diag === 'string' ? diag : JSON.stringify(diag);
      for (const line of text.split('\n')) process.stdout.write(`#   ${line}\n`);
    }
  }
  return cond;
}
function note(msg) {
  for (const line of String(msg).split('\n')) process.stdout.write(`# ${line}\n`);
}
async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    ok(false, `${name} (threw)`, e.stack || String(e));
  }
}
const audOf = (r) => [].concat(r.aud ?? []);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const now = () => Math.floor(Date.now() / 1000);
const jwtPayload = (t) => JSON.parse(Buffer.from(String(t).split('.')[1] ?? '', 'base64url').toString('utf8') || 'null');
const ACCESS_TYPE = TOKEN_EXCHANGE.accessTokenType;
async function setFormat(issuer, format, alg) {
  const res = await fetch(`${issuer}/_format`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ format, alg }),
  });
  if (res.status !== 200) throw new Error(`POST /_format ${format}: HTTP ${res.status}`);
}

let idp;
const others = new Set(); // more servers (the ID-JAG pair): stopped at the end whatever happens
const watchdog = setTimeout(async () => {
  ok(false, `selftest finished within ${OVERALL_MS / 1000} s`);
  process.stdout.write(`1..${n}\n`);
  if (idp) await idp.stop();
  await Promise.all([...others].map((o) => o.stop()));
  process.exit(1);
}, OVERALL_MS);

async function rawPost(url, body, headers = {}, timeoutMs = 5000) {
  const t0 = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, text, ms: Date.now() - t0, headers: res.headers };
}
const gatewayAuth = { Authorization: `Basic ${Buffer.from('mcpgate:mcpgate-secret').toString('base64')}` };

// --cimd and --no-registration: a server with both, and a small document server on loopback
// (its documents: good, another client_id, not JSON, too large, a secret method, never
// answered). The plain server (issuer) fetches nothing.
async function cimdCases(issuer) {
  const hits = [];
  let docBase;
  const redirectUri = 'http://127.0.0.1:33336/callback';
  const docs = {
    '/good': () => JSON.stringify({
      client_id: `${docBase}/good`, client_name: 'selftest document client', redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    }),
    '/other-id': () => JSON.stringify({ client_id: `${docBase}/good`, redirect_uris: [redirectUri] }),
    '/not-json': () => '<html>client</html>',
    '/huge': () => JSON.stringify({ client_id: `${docBase}/huge`, redirect_uris: [redirectUri], pad: 'x'.repeat(6000) }),
    '/secret': () => JSON.stringify({ client_id: `${docBase}/secret`, redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic' }),
  };
  const hanging = new Set();
  const docServer = http.createServer((req, res) => {
    hits.push(req.url);
    if (req.url === '/hang') {
      hanging.add(res);
      return;
    }
    if (req.url === '/huge-chunked') { // no Content-Length: the size is found while reading
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`{"client_id": "${docBase}/huge-chunked", "pad": "`);
      for (let i = 0; i < 8; i += 1) res.write('x'.repeat(1024));
      res.end('"}');
      return;
    }
    const body = docs[req.url]?.();
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise((r) => docServer.listen(0, '127.0.0.1', r));
  docBase = `http://127.0.0.1:${docServer.address().port}`;
  const good = `${docBase}/good`;
  const cimd = await spawnIdp({ resources: [R1], args: ['--cimd', '--no-registration'] });
  others.add(cimd);
  // GET /auth of server iss for client_id id: the JSON error it answers (a refusal), or
  // { status, location } when it goes on.
  const authorize = async (iss, id, redirect = redirectUri) => {
    const u = new URL(`${iss}/auth`);
    const { challenge } = pkcePair();
    for (const [k, v] of Object.entries({
      client_id: id, response_type: 'code', redirect_uri: redirect, scope: 'mcp:tools',
      code_challenge: challenge, code_challenge_method: 'S256', login_hint: 'bob',
    })) u.searchParams.set(k, v);
    const res = await fetch(u, { redirect: 'manual', signal: AbortSignal.timeout(20000) });
    const text = await res.text();
    try {
      return { status: res.status, ...JSON.parse(text) };
    } catch {
      return { status: res.status, location: res.headers.get('location') };
    }
  };
  try {
    const md = await discover(cimd.issuer);
    ok(md.client_id_metadata_document_supported === true, '--cimd: the metadata says client_id_metadata_document_supported: true');
    ok(!('registration_endpoint' in md), '--no-registration: no registration_endpoint in the metadata', md.registration_endpoint);
    const reg = await fetch(`${cimd.issuer}/reg`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: [redirectUri] }),
    });
    await reg.arrayBuffer();
    ok(reg.status === 404, '--no-registration: POST /reg answers 404', reg.status);

    const t = await userToken({ issuer: cimd.issuer, user: 'bob', clientId: good, redirectUri, cookies: false });
    const r = await introspect({ issuer: cimd.issuer, token: t.access_token });
    ok(r.active && r.client_id === good && r.sub === 'bob' && same(audOf(r), [R1]),
      '--cimd: a client_id that is a loopback document URL: auth code + PKCE as that public client (its token names the URL)', r);
    ok(hits.includes('/good'), '… its document was fetched', hits);
    const s = await stats({ issuer: cimd.issuer });
    ok(s.client_documents >= 2 && same(s.client_document_ids, [good]) && s.registrations === 0,
      'GET /_stats: client_documents counts the documents fetched and accepted, client_document_ids names the URL', s);
    let e = await authorize(cimd.issuer, good, 'http://127.0.0.1:33336/elsewhere');
    ok(e.status === 400 && e.error === 'invalid_redirect_uri', '--cimd: a redirect_uri the document does not list is refused', e);
    const cc = await rawPost(`${cimd.issuer}/token`, new URLSearchParams({ grant_type: 'client_credentials', client_id: good }).toString());
    ok(cc.status >= 400 && /unauthorized_client|invalid_client|invalid_request/.test(cc.text),
      '--cimd: a grant the document does not list (client_credentials) is refused', cc);

    const refused = await Promise.all([
      ['/other-id', /client_id .* is not the URL/, 'whose client_id is another URL'],
      ['/not-json', /not JSON/, 'that is not JSON'],
      ['/huge', /larger than 5120 bytes/, 'larger than 5120 bytes'],
      ['/huge-chunked', /larger than 5120 bytes/, 'larger than 5120 bytes, sent without Content-Length'],
      ['/secret', /token_endpoint_auth_method is not none/, 'of a client with a secret'],
      ['/missing', /HTTP 404/, 'that is not there (404)'],
      ['/hang', /fetching it failed/, 'that never comes (given up within 5 s)'],
    ].map(async ([p, re, what]) => [what, re, await authorize(cimd.issuer, `${docBase}${p}`)]));
    for (const [what, re, out] of refused) {
      ok(out.status === 400 && out.error === 'invalid_client' && re.test(out.error_description ?? ''),
        `--cimd: a document ${what} is refused (invalid_client, saying why)`, out);
    }
    e = await authorize(cimd.issuer, 'https://mcp.example.com/connect/client');
    ok(e.status === 400 && e.error === 'invalid_client' && e.error_description === 'client is invalid',
      '--cimd: a URL client_id on a host that is not loopback is an unknown client (not fetched)', e);
    const before = hits.length;
    e = await authorize(issuer, good);
    ok(e.status === 400 && e.error === 'invalid_client' && hits.length === before,
      'without --cimd: a document URL is an unknown client, and nothing is fetched', { e, hits: hits.slice(before) });
  } finally {
    for (const res of hanging) res.destroy();
    docServer.closeAllConnections();
    docServer.close();
    await cimd.stop();
    others.delete(cimd);
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'idp-selftest-'));
  const readyFile = path.join(tmp, 'ready');

  // --- start -------------------------------------------------------------------------------
  idp = await spawnIdp({ resources: [R1, R2], args: ['--ready-file', readyFile] });
  const { issuer } = idp;
  ok(/^http:\/\/127\.0\.0\.1:\d+$/.test(issuer), `server ready at ${issuer}`);
  ok(fs.readFileSync(readyFile, 'utf8') === `ready ${issuer}\n`, 'ready file holds the ready line');

  let md;
  await step('discovery', async () => {
    md = await discover(issuer);
    ok(md.issuer === issuer, 'discovery: issuer has no path');
    ok(md.introspection_endpoint === `${issuer}/token/introspection`, 'discovery: introspection_endpoint', md.introspection_endpoint);
    ok(md.revocation_endpoint === `${issuer}/token/revocation`, 'discovery: revocation_endpoint');
    ok(md.registration_endpoint === `${issuer}/reg`, 'discovery: registration_endpoint (DCR open)');
    ok(!('client_id_metadata_document_supported' in md), 'discovery: no client_id_metadata_document_supported without --cimd');
    ok(same(md.code_challenge_methods_supported, ['S256']), 'discovery: PKCE S256');
    ok(['authorization_code', 'client_credentials', 'refresh_token'].every((g) => md.grant_types_supported.includes(g)), 'discovery: grant types');
    ok(md.grant_types_supported.includes(TOKEN_EXCHANGE.grantType), 'discovery: grant_types_supported lists token exchange', md.grant_types_supported);
    ok(same(md.scopes_supported, [...SCOPES]), 'discovery: scopes_supported lists every scope', md.scopes_supported);
    const r8414 = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
    ok(r8414.issuer === issuer && r8414.token_endpoint === md.token_endpoint, 'RFC 8414 path serves the same metadata');
  });

  // Mint the short-lived token first; it is checked again at the end.
  let shortLived;
  let shortLivedAt;
  await step('short-lived token', async () => {
    shortLived = await clientToken({ issuer, client: 'short-lived' });
    shortLivedAt = Date.now();
    ok(shortLived.expires_in === 5, 'short-lived: expires_in 5', shortLived);
    const r = await introspect({ issuer, token: shortLived.access_token });
    ok(r.active === true && r.exp - r.iat === 5, 'short-lived: active at first, exp = iat + 5', r);
  });

  // --- machine tokens ------------------------------------------------------------------------
  let acme;
  await step('machine-acme', async () => {
    acme = await clientToken({ issuer, client: 'machine-acme' });
    ok(acme.token_type === 'Bearer' && acme.scope === 'mcp:tools' && acme.expires_in === 3600 && !acme.refresh_token,
      'machine-acme: token response', acme);
    ok(!acme.access_token.includes('.'), 'machine-acme: token is opaque (not a JWT)');
    const r = await introspect({ issuer, token: acme.access_token });
    if (VERBOSE) note(`machine token: ${JSON.stringify(r)}`);
    ok(r.active === true, 'machine-acme: introspects active', r);
    ok(audOf(r).includes(R1), 'machine-acme: aud contains the default resource', r.aud);
    ok(r.client_id === 'machine-acme', 'machine-acme: client_id');
    ok(r.scope === 'mcp:tools', 'machine-acme: scope');
    ok(same(r.groups, ['engineering', 'ops']), 'machine-acme: groups', r.groups);
    ok(r.tenant === 'acme', 'machine-acme: tenant');
    ok(r.exp > now() + 3500 && r.exp <= now() + 3601, 'machine-acme: exp about an hour ahead');
    ok(r.iss === issuer, 'machine-acme: iss');
    ok(r.token_type === 'Bearer', 'machine-acme: token_type Bearer');
    ok(!('sub' in r), 'machine-acme: no sub');
    const p = await introspect({ issuer, token: acme.access_token, auth: 'post' });
    ok(same(p, r), 'introspection with client_secret_post answers the same');
  });

  await step('machine-beta / machine-none', async () => {
    const b = await introspect({ issuer, token: (await clientToken({ issuer, client: 'machine-beta', auth: 'post' })).access_token });
    ok(b.active && b.tenant === 'beta' && same(b.groups, ['sales']) && b.client_id === 'machine-beta',
      'machine-beta (client_secret_post): tenant beta, groups [sales]', b);
    const z = await introspect({ issuer, token: (await clientToken({ issuer, client: 'machine-none' })).access_token });
    ok(z.active && !('tenant' in z) && !('groups' in z) && audOf(z).includes(R1),
      'machine-none: no tenant, no groups claim', z);
  });

  await step('scopes', async () => {
    const t = await clientToken({ issuer, client: 'machine-acme', scope: 'mcp:tools mcp:admin mcp:github mcp:read mcp:write' });
    ok(t.scope === 'mcp:tools mcp:admin mcp:github mcp:read mcp:write', 'client_credentials: every mcp scope grantable', t.scope);
    const none = await clientToken({ issuer, client: 'machine-acme', scope: '' });
    const r = await introspect({ issuer, token: none.access_token });
    ok(r.active && !('scope' in r) && audOf(r).includes(R1), 'client_credentials without scope: active, no scope member', r);
    const u = await userToken({ issuer, user: 'alice', scope: 'mcp:tools mcp:github' });
    ok(u.scope === 'mcp:tools mcp:github', 'user token: requested mcp scopes granted', u.scope);
    let err;
    try {
      await clientToken({ issuer, client: 'machine-acme', scope: 'mcp:tools nosuch:scope' });
    } catch (e) {
      err = e;
    }
    note(`unknown scope in client_credentials: ${err ? err.message : 'accepted, dropped'}`);
  });

  // --- user tokens ---------------------------------------------------------------------------
  await step('user tokens', async () => {
    for (const [user, acct] of Object.entries(ACCOUNTS)) {
      const t = await userToken({ issuer, user });
      const r = await introspect({ issuer, token: t.access_token });
      if (VERBOSE && user === 'alice') note(`user token: ${JSON.stringify(r)}`);
      const wantGroups = acct.groups.length ? acct.groups : undefined;
      ok(r.active === true && r.sub === user && r.client_id === 'cli' && audOf(r).includes(R1)
        && r.scope === 'mcp:tools' && r.token_type === 'Bearer'
        && same(r.groups, wantGroups) && r.tenant === acct.tenant && !t.refresh_token,
      `user ${user}: sub, aud, groups ${JSON.stringify(acct.groups)}, tenant ${acct.tenant ?? '(none)'}`, r);
    }
    const d = await userToken({ issuer });
    ok((await introspect({ issuer, token: d.access_token })).sub === 'alice', 'no login_hint: alice');
  });

  await step('unknown user', async () => {
    let err;
    try {
      await userToken({ issuer, user: 'mallory' });
    } catch (e) {
      err = e;
    }
    ok(err && /access_denied/.test(err.message), 'unknown user: access_denied at the redirect_uri', err?.message);
  });

  await step('loopback redirect ports, cookies', async () => {
    const t = await userToken({ issuer, user: 'bob', redirectUri: 'http://127.0.0.1:54321/callback' });
    ok((await introspect({ issuer, token: t.access_token })).sub === 'bob', 'cli: any loopback port accepted (RFC 8252)');
    const l = await userToken({ issuer, user: 'bob', redirectUri: 'http://localhost:4242/callback' });
    ok(!!l.access_token, 'cli: http://localhost:PORT/callback accepted');
    const c = await userToken({ issuer, user: 'carol', cookies: false });
    ok((await introspect({ issuer, token: c.access_token })).sub === 'carol', 'redirect follower without a cookie jar gets a token');
    const jar = new CookieJar();
    const j1 = await userToken({ issuer, user: 'carol', jar });
    const j2 = await userToken({ issuer, user: 'carol', jar, scope: 'mcp:tools mcp:read' });
    const j3 = await userToken({ issuer, user: 'carol', jar, extraParams: { prompt: 'login' } });
    const subs = await Promise.all([j1, j2, j3].map(async (x) => (await introspect({ issuer, token: x.access_token })).sub));
    ok(jar.size > 0 && same(subs, ['carol', 'carol', 'carol']) && j2.scope === 'mcp:tools mcp:read',
      'a reused cookie jar (existing session; consent-only; prompt=login) still works', { subs, j2 });
    let err;
    try {
      await userToken({ issuer, redirectUri: 'http://127.0.0.1:1234/elsewhere' });
    } catch (e) {
      err = e;
    }
    ok(err && err.status === 400, 'cli: unregistered redirect path refused', err?.message);
  });

  // --- audiences -----------------------------------------------------------------------------
  await step('wrong audience', async () => {
    const m = await clientToken({ issuer, client: 'machine-acme', resource: R2 });
    const r = await introspect({ issuer, token: m.access_token });
    if (VERBOSE) note(`wrong-audience token: ${JSON.stringify(r)}`);
    ok(r.active && audOf(r).includes(R2) && !audOf(r).includes(R1), 'machine token for --resource R2: aud R2 only', r);
    const u = await userToken({ issuer, user: 'alice', resource: R2 });
    const ru = await introspect({ issuer, token: u.access_token });
    ok(ru.active && same(audOf(ru), [R2]) && ru.sub === 'alice', 'user token for R2: aud R2 only', ru);
    const e = await userToken({ issuer, user: 'alice', resource: R1 });
    ok(same(audOf(await introspect({ issuer, token: e.access_token })), [R1]), 'user token with explicit resource R1: aud R1');
    let err;
    try {
      await clientToken({ issuer, client: 'machine-acme', resource: 'http://127.0.0.1:1/unknown' });
    } catch (x) {
      err = x;
    }
    ok(err?.body?.error === 'invalid_target', 'unknown resource: invalid_target', err?.message);
  });

  // --- refresh tokens ------------------------------------------------------------------------
  await step('refresh token', async () => {
    const t = await userToken({ issuer, user: 'alice', scope: 'mcp:tools offline_access' });
    ok(typeof t.refresh_token === 'string', 'offline_access: refresh_token issued', t);
    ok(t.scope === 'mcp:tools', 'offline_access: access token scope is the resource scope only', t.scope);
    const r = await introspect({ issuer, token: t.refresh_token });
    if (VERBOSE) note(`refresh token: ${JSON.stringify(r)}`);
    ok(r.active === true, 'refresh token introspects active (the gateway must refuse it)', r);
    ok(!('aud' in r), 'refresh token: no aud', r.aud);
    ok(!('token_type' in r), 'refresh token: no token_type', r.token_type);
    ok(r.sub === 'alice' && r.client_id === 'cli', 'refresh token: sub and client_id');
    const n2 = await refreshToken({ issuer, refreshToken: t.refresh_token });
    const r2 = await introspect({ issuer, token: n2.access_token });
    ok(r2.active && same(audOf(r2), [R1]) && r2.sub === 'alice' && r2.tenant === 'acme',
      'refresh_token grant: new access token for the gateway audience', r2);
    ok(typeof n2.refresh_token === 'string' && n2.refresh_token !== t.refresh_token, 'refresh_token grant rotates the refresh token (public client)');
    const old = await introspect({ issuer, token: t.refresh_token });
    ok(old.active === false, 'rotated refresh token is inactive', old);
  });

  // --- revocation ----------------------------------------------------------------------------
  await step('revocation', async () => {
    const m = await clientToken({ issuer, client: 'machine-beta' });
    ok(same(await revokeToken({ issuer, token: m.access_token }), { revoked: true }), 'revoke machine token: {revoked:true}');
    ok((await introspect({ issuer, token: m.access_token })).active === false, 'revoked machine token is inactive');
    const u = await userToken({ issuer, user: 'bob', scope: 'mcp:tools offline_access' });
    await revokeToken({ issuer, token: u.access_token });
    ok((await introspect({ issuer, token: u.access_token })).active === false, 'revoked user token is inactive');
    ok((await introspect({ issuer, token: u.refresh_token })).active === true, 'revoking the access token (as mcpgate) leaves the refresh token active');
    const n2 = await refreshToken({ issuer, refreshToken: u.refresh_token });
    await revokeToken({ issuer, token: n2.refresh_token });
    ok((await introspect({ issuer, token: n2.refresh_token })).active === false, 'revoked refresh token is inactive');
    ok((await introspect({ issuer, token: n2.access_token })).active === false, "revoking a refresh token also revokes its grant's access tokens");
    ok(same(await revokeToken({ issuer, token: 'not-a-token' }), { revoked: true }), 'revoking an unknown token is a 200 (RFC 7009)');
  });

  // --- who may introspect --------------------------------------------------------------------
  await step('introspection policy', async () => {
    const other = await introspect({ issuer, token: acme.access_token, client: 'machine-beta' });
    ok(other.active === false, "another machine client cannot introspect machine-acme's token", other);
    const own = await introspect({ issuer, token: acme.access_token, client: 'machine-acme' });
    ok(own.active === true, 'a client may introspect its own token');
    const bad = await rawPost(md.introspection_endpoint, `token=${acme.access_token}`, {
      Authorization: `Basic ${Buffer.from('mcpgate:wrong').toString('base64')}`,
    });
    ok(bad.status === 401 && JSON.parse(bad.text).error === 'invalid_client', 'wrong gateway secret: 401 invalid_client', bad);
    const unknown = await introspect({ issuer, token: 'no-such-token' });
    ok(same(unknown, { active: false }), 'unknown token: {"active":false}', unknown);
  });

  // --- DCR -----------------------------------------------------------------------------------
  await step('dynamic client registration', async () => {
    const redirectUri = 'http://127.0.0.1:33333/callback';
    const reg = await registerClient({
      issuer,
      metadata: {
        client_name: 'selftest SDK-like client',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'mcp:tools offline_access',
      },
    });
    ok(typeof reg.client_id === 'string' && reg.client_id.length > 0, 'DCR: client_id returned', reg);
    const t = await userToken({ issuer, user: 'eve', clientId: reg.client_id, redirectUri, cookies: false });
    const r = await introspect({ issuer, token: t.access_token });
    ok(r.active && r.client_id === reg.client_id && r.sub === 'eve' && r.tenant === 'nosuch' && same(audOf(r), [R1]),
      'DCR client: auth code + PKCE through the headless login (no cookie jar)', r);
    let err;
    try {
      await registerClient({ issuer, metadata: { redirect_uris: [redirectUri], tenant: 'acme' } });
    } catch (e) {
      err = e;
    }
    ok(err?.body?.error === 'invalid_client_metadata', 'DCR cannot register tenant/groups metadata', err?.message);
    const narrow = await registerClient({
      issuer,
      metadata: {
        redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', scope: 'mcp:tools',
      },
    });
    const up = await userToken({
      issuer, clientId: narrow.client_id, redirectUri, scope: 'mcp:tools mcp:admin',
    });
    ok(up.scope === 'mcp:tools mcp:admin', 'DCR client registered with scope mcp:tools may step up to mcp:admin', { narrow, up });

    // A confidential client allowed refresh_token gets a refresh token without offline_access;
    // one without the grant gets none.
    const codeFlow = async (grants) => {
      const reg = await registerClient({
        issuer,
        metadata: { redirect_uris: [redirectUri], grant_types: grants, response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
      });
      const { verifier, challenge } = pkcePair();
      const auth = new URL(md.authorization_endpoint);
      for (const [k, v] of Object.entries({
        client_id: reg.client_id, response_type: 'code', redirect_uri: redirectUri, scope: 'mcp:tools',
        code_challenge: challenge, code_challenge_method: 'S256', login_hint: 'alice',
      })) auth.searchParams.set(k, v);
      const back = new URL(await followAuthorization(auth.href, redirectUri));
      const r = await rawPost(md.token_endpoint, new URLSearchParams({
        grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: redirectUri, code_verifier: verifier,
      }).toString(), { Authorization: `Basic ${Buffer.from(`${reg.client_id}:${reg.client_secret}`).toString('base64')}` });
      return JSON.parse(r.text);
    };
    const kept = await codeFlow(['authorization_code', 'refresh_token']);
    ok(typeof kept.access_token === 'string' && typeof kept.refresh_token === 'string',
      'a confidential DCR client allowed refresh_token: a refresh token without offline_access', Object.keys(kept));
    const plain = await codeFlow(['authorization_code']);
    ok(typeof plain.access_token === 'string' && !('refresh_token' in plain),
      'a confidential DCR client without the refresh_token grant: no refresh token', Object.keys(plain));
  });

  // --- token exchange (RFC 8693) --------------------------------------------------------------
  let xAlice; // alice's user token (opaque), exchanged again as a JWT below
  await step('token exchange: opaque', async () => {
    const u = await userToken({ issuer, user: 'alice', scope: 'mcp:tools mcp:read' });
    xAlice = u;
    const ru = await introspect({ issuer, token: u.access_token });
    const x = await exchangeToken({ issuer, subjectToken: u.access_token, resource: R2, audience: 'upstream-github' });
    ok(x.issued_token_type === ACCESS_TYPE && x.token_type === 'Bearer' && x.scope === 'mcp:tools mcp:read'
      && Number.isInteger(x.expires_in) && x.expires_in > 3500 && x.expires_in <= 3600
      && typeof x.access_token === 'string' && !x.access_token.includes('.') && x.access_token !== u.access_token,
    'exchange: RFC 8693 response (issued_token_type, Bearer, expires_in, scope), an opaque token', x);
    ok(same(Object.keys(x).sort(), ['access_token', 'expires_in', 'issued_token_type', 'scope', 'token_type']),
      'exchange: no refresh_token, nothing else', Object.keys(x));
    const r = await introspect({ issuer, token: x.access_token });
    if (VERBOSE) note(`exchanged token: ${JSON.stringify(r)}`);
    ok(r.active === true && r.sub === 'alice' && same(audOf(r), [R2]) && r.scope === 'mcp:tools mcp:read',
      'exchanged token: active, sub alice, aud the requested resource only', r);
    ok(same(r.act, { sub: 'gateway-exchange' }), 'exchanged token: act {"sub": "gateway-exchange"} in introspection', r.act);
    ok(r.client_id === 'gateway-exchange' && r.tenant === 'acme' && same(r.groups, ['engineering']),
      "exchanged token: client_id of the exchanging client, the account's tenant and groups", r);
    ok(r.exp <= ru.exp, `exchanged token: exp ${r.exp} not after the subject's ${ru.exp}`);
    const own = await introspect({ issuer, token: x.access_token, client: 'gateway-exchange' });
    ok(own.active === true && own.sub === 'alice', 'the exchanging client may introspect the token it obtained', own);
    const subj = await introspect({ issuer, token: u.access_token });
    ok(subj.active === true, 'the subject token stays active', subj);

    const narrow = await exchangeToken({ issuer, subjectToken: u.access_token, resource: R1, scope: 'mcp:read' });
    const rn = await introspect({ issuer, token: narrow.access_token });
    ok(narrow.scope === 'mcp:read' && rn.scope === 'mcp:read' && same(audOf(rn), [R1]), 'exchange: a narrower scope is granted', { narrow, rn });
    const dflt = await exchangeToken({ issuer, subjectToken: u.access_token });
    ok(same(audOf(await introspect({ issuer, token: dflt.access_token })), [R1]), 'exchange without resource: the default resource', dflt);

    const gw = await exchangeToken({ issuer, client: 'mcpgate', subjectToken: u.access_token, resource: R2 });
    const rg = await introspect({ issuer, token: gw.access_token });
    ok(rg.active && rg.sub === 'alice' && same(rg.act, { sub: 'mcpgate' }), 'the gateway client (mcpgate) may exchange too: act {"sub": "mcpgate"}', rg);
    const again = await exchangeToken({ issuer, client: 'mcpgate', subjectToken: x.access_token, resource: R1 });
    const ra = await introspect({ issuer, token: again.access_token });
    ok(ra.active && ra.sub === 'alice' && same(ra.act, { sub: 'mcpgate', act: { sub: 'gateway-exchange' } }),
      'an exchanged token exchanged again: the earlier actor nested in act', ra);
  });

  await step('token exchange: machine subject', async () => {
    const m = await clientToken({ issuer, client: 'machine-acme', scope: 'mcp:tools mcp:admin' });
    const x = await exchangeToken({ issuer, subjectToken: m.access_token, resource: R2 });
    const r = await introspect({ issuer, token: x.access_token });
    ok(x.scope === 'mcp:tools mcp:admin' && r.active && r.client_id === 'machine-acme' && !('sub' in r)
      && r.tenant === 'acme' && same(r.groups, ['engineering', 'ops']) && same(audOf(r), [R2])
      && same(r.act, { sub: 'gateway-exchange' }),
    'client_credentials subject: the same client identity (client_id, tenant, groups), aud R2, act', r);
    const own = await introspect({ issuer, token: x.access_token, client: 'gateway-exchange' });
    ok(own.active === true, 'the exchanging client may introspect a machine token it obtained', own);
  });

  let shortX; // the exchange of a short-lived token: checked again after it expired
  await step('token exchange: expiry', async () => {
    const s0 = await clientToken({ issuer, client: 'short-lived' });
    const x = await exchangeToken({ issuer, subjectToken: s0.access_token });
    shortX = { subject: s0.access_token, token: x.access_token, at: Date.now() };
    const rs = await introspect({ issuer, token: s0.access_token });
    const rx = await introspect({ issuer, token: x.access_token });
    ok(x.expires_in >= 1 && x.expires_in <= 5 && rx.exp <= rs.exp,
      `exchange of a 5 s token: expires_in ${x.expires_in}, exp ${rx.exp} not after the subject's ${rs.exp}`, { x, rs, rx });
  });

  await step('token exchange: refusals', async () => {
    const u = await userToken({ issuer, user: 'bob' });
    const refused = async (what, want, o) => {
      const e = await exchangeToken({ issuer, subjectToken: u.access_token, ...o });
      ok(e.error === want && !('access_token' in e), `exchange refused (${what}): ${want}`, e);
    };
    await refused('unknown resource', 'invalid_target', { resource: 'http://127.0.0.1:1/unknown' });
    await refused('two resources', 'invalid_target', { resource: [R1, R2] });
    await refused('scope beyond the subject token\'s', 'invalid_scope', { scope: 'mcp:tools mcp:admin' });
    await refused('subject_token_type refresh_token', 'invalid_request', { subjectTokenType: 'urn:ietf:params:oauth:token-type:refresh_token' });
    await refused('subject_token_type jwt', 'invalid_request', { subjectTokenType: 'urn:ietf:params:oauth:token-type:jwt' });
    await refused('requested_token_type id_token', 'invalid_request', { requestedTokenType: 'urn:ietf:params:oauth:token-type:id_token' });
    await refused('client without the grant (machine-acme)', 'unauthorized_client', { client: 'machine-acme' });
    await refused('wrong client secret', 'invalid_client', { secret: 'wrong' });
    const ok1 = await exchangeToken({ issuer, subjectToken: u.access_token, requestedTokenType: ACCESS_TYPE });
    ok(typeof ok1.access_token === 'string', 'requested_token_type access_token: accepted', ok1);

    const dcr = await registerClient({
      issuer,
      metadata: {
        grant_types: [TOKEN_EXCHANGE.grantType], response_types: [], redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    });
    const d = await exchangeToken({ issuer, client: dcr.client_id, secret: dcr.client_secret, subjectToken: u.access_token });
    ok(d.error === 'unauthorized_client', 'a client registered dynamically with the grant: unauthorized_client', { dcr, d });

    const missing = await exchangeToken({ issuer, subjectToken: undefined });
    ok(missing.error === 'invalid_request', 'no subject_token: invalid_request', missing);
    const unknown = await exchangeToken({ issuer, subjectToken: 'no-such-token' });
    ok(unknown.error === 'invalid_grant', 'unknown subject token: invalid_grant', unknown);
    const rt = await userToken({ issuer, user: 'bob', scope: 'mcp:tools offline_access' });
    const byRefresh = await exchangeToken({ issuer, subjectToken: rt.refresh_token });
    ok(byRefresh.error === 'invalid_grant', 'a refresh token as subject_token: invalid_grant', byRefresh);
    await revokeToken({ issuer, token: rt.access_token });
    const revoked = await exchangeToken({ issuer, subjectToken: rt.access_token });
    ok(revoked.error === 'invalid_grant', 'revoked subject token: invalid_grant', revoked);
    const forged = (await (await fetch(`${issuer}/_sign`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ payload: { iss: issuer, sub: 'alice', client_id: 'cli', aud: R1, scope: 'mcp:tools', jti: 'never-issued', iat: now(), exp: now() + 600 } }),
    })).json()).token;
    const f = await exchangeToken({ issuer, subjectToken: forged });
    ok(f.error === 'invalid_grant', 'a JWT signed with its own key but never issued: invalid_grant', f);
  });

  await step('token exchange: JWT', async () => {
    await setFormat(issuer, 'jwt');
    try {
      const fromOpaque = await exchangeToken({ issuer, subjectToken: xAlice.access_token, resource: R2 });
      const p0 = jwtPayload(fromOpaque.access_token);
      ok(p0?.sub === 'alice' && p0.aud === R2 && same(p0.act, { sub: 'gateway-exchange' }),
        'opaque subject, JWT format: a JWT for alice with act', { fromOpaque, p0 });

      const u = await userToken({ issuer, user: 'carol', scope: 'mcp:tools mcp:write' });
      const pu = jwtPayload(u.access_token);
      const x = await exchangeToken({ issuer, subjectToken: u.access_token, resource: R2, scope: 'mcp:write' });
      const px = jwtPayload(x.access_token);
      if (VERBOSE) note(`exchanged JWT: ${JSON.stringify(px)}`);
      ok(x.issued_token_type === ACCESS_TYPE && x.token_type === 'Bearer' && x.scope === 'mcp:write', 'JWT subject: RFC 8693 response', x);
      ok(px?.sub === 'carol' && px.aud === R2 && px.scope === 'mcp:write' && px.client_id === 'gateway-exchange'
        && px.iss === issuer && px.tenant === 'beta',
      'JWT subject: a JWT for carol, aud R2, the asked scope', px);
      ok(same(px?.act, { sub: 'gateway-exchange' }), 'JWT: act {"sub": "gateway-exchange"} in the payload', px?.act);
      ok(px?.exp <= pu?.exp, `JWT: exp ${px?.exp} not after the subject's ${pu?.exp}`);
      const rx = await introspect({ issuer, token: x.access_token });
      ok(rx.active === true && same(rx.act, { sub: 'gateway-exchange' }), 'JWT exchanged token: active with act in introspection', rx);
      const wide = await exchangeToken({ issuer, subjectToken: u.access_token, scope: 'mcp:admin' });
      ok(wide.error === 'invalid_scope', 'JWT subject, scope beyond its own: invalid_scope', wide);

      const m = await clientToken({ issuer, client: 'machine-beta' });
      const pm = jwtPayload((await exchangeToken({ issuer, subjectToken: m.access_token, resource: R2 })).access_token);
      ok(pm?.sub === 'machine-beta' && pm.client_id === 'machine-beta' && pm.tenant === 'beta' && same(pm.act, { sub: 'gateway-exchange' }),
        'JWT client_credentials subject: the same client identity, with act', pm);

      await revokeToken({ issuer, token: u.access_token });
      const revoked = await exchangeToken({ issuer, subjectToken: u.access_token });
      ok(revoked.error === 'invalid_grant', 'revoked JWT subject token: invalid_grant', revoked);
      const [h, , sig] = m.access_token.split('.');
      const altered = Buffer.from(JSON.stringify({ ...jwtPayload(m.access_token), scope: 'mcp:tools mcp:admin' })).toString('base64url');
      const t = await exchangeToken({ issuer, subjectToken: `${h}.${altered}.${sig}`, scope: 'mcp:admin' });
      ok(t.error === 'invalid_grant', 'JWT subject whose payload was altered (signature broken): invalid_grant', t);

      for (const alg of ['PS256', 'ES256']) {
        await setFormat(issuer, 'jwt', alg);
        const d = await userToken({ issuer, user: 'dave' });
        const xd = await exchangeToken({ issuer, subjectToken: d.access_token, resource: R2 });
        const hd = JSON.parse(Buffer.from(String(xd.access_token).split('.')[0], 'base64url').toString('utf8') || 'null');
        ok(hd?.alg === alg && jwtPayload(xd.access_token)?.sub === 'dave', `JWT subject signed ${alg}: exchanged for a ${alg} JWT`, xd);
      }
    } finally {
      await setFormat(issuer, 'opaque', 'RS256');
    }
  });

  await step('no eviction', async () => {
    const first = await clientToken({ issuer, client: 'machine-none' });
    const N = 1100; // oidc-provider's own memory adapter would evict after 1000 entries
    let next = 0;
    const worker = async () => {
      while (next < N) {
        next += 1;
        await clientToken({ issuer, client: 'machine-none' });
      }
    };
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 8 }, worker));
    const r = await introspect({ issuer, token: first.access_token });
    ok(r.active === true, `first of ${N + 1} tokens still active (${Date.now() - t0} ms for ${N} tokens)`, r);
  });

  // --- strict cookies: the cookie jar matters ------------------------------------------------
  await step('cookie jar', async () => {
    // The jar path, with the server's help for cookie-less clients disabled, is proven by a
    // second server with --strict-cookies.
    const strict = await spawnIdp({ resources: [R1], args: ['--strict-cookies'] });
    try {
      const t = await userToken({ issuer: strict.issuer, user: 'dave' });
      ok(!!t.access_token, '--strict-cookies: flow with a cookie jar works');
      let err;
      try {
        await userToken({ issuer: strict.issuer, user: 'dave', cookies: false });
      } catch (e) {
        err = e;
      }
      ok(!!err, '--strict-cookies: flow without cookies fails', err?.message);
    } finally {
      await strict.stop();
    }
  });

  // --- login pages, with the headless interaction kept for one client --------------------------
  await step('login pages, headless client', async () => {
    const pages = await spawnIdp({ resources: [R1], args: ['--login-pages', '--headless-client', 'cli'] });
    try {
      const t = await userToken({ issuer: pages.issuer, user: 'bob' });
      const r = await introspect({ issuer: pages.issuer, token: t.access_token });
      ok(r.active && r.sub === 'bob' && r.client_id === 'cli',
        '--login-pages --headless-client cli: cli still signs in headlessly (login_hint)', r);
      const redirectUri = 'http://127.0.0.1:33334/callback';
      const reg = await registerClient({
        issuer: pages.issuer,
        metadata: { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', response_types: ['code'] },
      });
      const auth = new URL((await discover(pages.issuer)).authorization_endpoint);
      for (const [k, v] of Object.entries({
        client_id: reg.client_id, response_type: 'code', redirect_uri: redirectUri, scope: 'mcp:tools',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', login_hint: 'bob',
      })) auth.searchParams.set(k, v);
      const jar = new CookieJar();
      let url = auth.href;
      let res;
      for (let hop = 0; hop < 5; hop += 1) {
        res = await fetch(url, { redirect: 'manual', headers: jar.header(url) ? { Cookie: jar.header(url) } : {} });
        jar.store(res);
        if (res.status < 300 || res.status > 399) break;
        url = new URL(res.headers.get('location'), url).href;
      }
      const html = await res.text();
      ok(res.status === 200 && /input[^>]*name="login"/.test(html),
        '--login-pages: another client\'s authorization is shown the login page', { status: res.status, url, html: html.slice(0, 200) });
    } finally {
      await pages.stop();
    }
  });

  // --- --access-ttl, POST /_ttl, the refresh and revocation counters, GET /_refresh_tokens --------
  await step('access TTL of people\'s grants', async () => {
    const short = await spawnIdp({ resources: [R1], args: ['--access-ttl', '7'] });
    others.add(short);
    try {
      const iss = short.issuer;
      const life = async (t) => {
        const r = await introspect({ issuer: iss, token: t });
        return r.active ? r.exp - r.iat : r;
      };
      const u = await userToken({ issuer: iss, user: 'bob', scope: 'mcp:tools offline_access' });
      ok(u.expires_in === 7 && await life(u.access_token) === 7,
        '--access-ttl 7: the authorization_code grant\'s access token lives 7 s (expires_in, exp - iat)', u);
      const held = async () => (await (await fetch(`${iss}/_refresh_tokens?sub=bob`)).json()).refresh_tokens;
      const h0 = await held();
      ok(h0.length === 1 && h0[0].token === u.refresh_token && h0[0].client_id === 'cli' && h0[0].sub === 'bob',
        'GET /_refresh_tokens?sub=bob: the refresh token bob holds, its client', h0);
      const r1 = await refreshToken({ issuer: iss, refreshToken: u.refresh_token });
      ok(r1.expires_in === 7 && await life(r1.access_token) === 7, '… and the refresh_token grant\'s: 7 s', r1);
      const h1 = await held();
      ok(h1.length === 1 && h1[0].token === r1.refresh_token, '… after a refresh (rotated: cli is public), only the new one', h1);
      const m = await clientToken({ issuer: iss, client: 'machine-acme' });
      ok(m.expires_in === 3600, '… client_credentials tokens keep theirs (3600 s)', m);
      const set = async (body) => {
        const res = await fetch(`${iss}/_ttl`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      const s20 = await set({ access_ttl: 20 });
      const r2 = await refreshToken({ issuer: iss, refreshToken: r1.refresh_token });
      ok(s20.status === 200 && s20.body.access_ttl === 20 && r2.expires_in === 20, 'POST /_ttl {"access_ttl": 20}: the next refresh issues a 20 s token', { s20, r2 });
      const sNull = await set({ access_ttl: null });
      const r3 = await refreshToken({ issuer: iss, refreshToken: r2.refresh_token });
      ok(sNull.body.access_ttl === 3600 && r3.expires_in === 3600, 'POST /_ttl {"access_ttl": null}: back to 3600 s', { sNull, r3 });
      const bad = [await set({ access_ttl: 0 }), await set({ access_ttl: '5' })];
      ok(bad.every((b) => b.status === 400), 'POST /_ttl with 0 or a string: 400', bad);
      let st = await stats({ issuer: iss });
      ok(st.refreshes === 3 && st.revocations === 0, 'GET /_stats: refreshes 3 (tokens issued by the refresh_token grant)', st);
      await revokeToken({ issuer: iss, token: r3.refresh_token });
      let refused;
      try {
        await refreshToken({ issuer: iss, refreshToken: r3.refresh_token });
      } catch (e) {
        refused = e.body?.error;
      }
      st = await stats({ issuer: iss });
      ok(refused === 'invalid_grant' && st.refreshes === 3 && st.revocations === 1 && (await held()).length === 0,
        'a revoked refresh token: invalid_grant, not counted; revocations 1; bob holds none', { refused, st });
      let code;
      try {
        await promisify(execFile)(process.execPath, [path.join(HERE, 'server.mjs'), '--port', '0', '--resource', R1, '--access-ttl', '0']);
      } catch (e) {
        code = e.code;
      }
      ok(code === 2, 'server.mjs --access-ttl 0: usage error (exit 2)', code);
    } finally {
      await short.stop();
      others.delete(short);
    }
  });

  // --- registrations counted -------------------------------------------------------------------
  await step('registrations counted', async () => {
    const before = await stats({ issuer });
    const reg = await registerClient({
      issuer, metadata: { redirect_uris: ['http://127.0.0.1:33335/callback'], token_endpoint_auth_method: 'none' },
    });
    const s = await stats({ issuer });
    ok(s.registrations === before.registrations + 1 && s.registered_clients.at(-1) === reg.client_id,
      'GET /_stats: registrations counts a registration, registered_clients names its client_id', { before, s });
    let err;
    try {
      await registerClient({ issuer, metadata: { redirect_uris: ['http://127.0.0.1:33335/callback'], tenant: 'acme' } });
    } catch (e) {
      err = e;
    }
    ok(err && (await stats({ issuer })).registrations === s.registrations, 'a refused registration is not counted', err?.message);
  });

  // --- client ID metadata documents (--cimd), no registration (--no-registration) -----------------
  await step('client ID metadata documents', () => cimdCases(issuer));

  // --- ID-JAG (enterprise-managed authorization) -------------------------------------------------
  await step('ID-JAG', () => idJagCases(issuer));

  // --- counters ------------------------------------------------------------------------------
  await step('stats', async () => {
    ok(same(await resetStats({ issuer }), {
      introspections: 0, tokens: 0, jwks: 0, exchanges: 0, id_jags: 0, jwt_bearer: 0, refreshes: 0, revocations: 0,
      registrations: 0, client_documents: 0,
      exchanges_by_subject: {}, jwt_bearer_by_subject: {}, registered_clients: [], client_document_ids: [],
    }), 'POST /_stats/reset zeroes');
    const t = await clientToken({ issuer, client: 'machine-acme' });
    await introspect({ issuer, token: t.access_token });
    await introspect({ issuer, token: t.access_token });
    await introspect({ issuer, token: 'nope' });
    let s = await stats({ issuer });
    ok(s.introspections === 3 && s.tokens === 1, 'GET /_stats: 3 introspections, 1 token request', s);
    await userToken({ issuer, user: 'alice' });
    s = await stats({ issuer });
    ok(s.tokens === 2 && s.introspections === 3, 'user token flow: one more token request', s);
    ok(s.exchanges === 0, 'no exchange counted without one', s);
    const a1 = await userToken({ issuer, user: 'alice' });
    const b1 = await userToken({ issuer, user: 'bob' });
    const m1 = await clientToken({ issuer, client: 'machine-none' });
    await exchangeToken({ issuer, subjectToken: a1.access_token, resource: R2, audience: 'upstream-a' });
    await exchangeToken({ issuer, subjectToken: b1.access_token, resource: R2 });
    await exchangeToken({ issuer, subjectToken: m1.access_token, resource: R2 });
    await exchangeToken({ issuer, subjectToken: a1.access_token, resource: 'http://127.0.0.1:1/unknown' });
    await exchangeToken({ issuer, client: 'machine-acme', subjectToken: b1.access_token });
    s = await stats({ issuer });
    ok(s.exchanges === 3 && same(s.exchanges_by_subject, { alice: 1, bob: 1, 'machine-none': 1 }),
      'GET /_stats: 3 exchanges, one per caller (refused ones not counted)', s);
    ok(s.tokens === 2 + 3 + 5, 'every exchange request is a token request', s);
    const log = await exchanges({ issuer });
    ok(log.length === 3 && log[0].subject === 'alice' && log[0].audience === 'upstream-a' && log[0].resource === R2
      && log[0].client_id === 'gateway-exchange' && log[1].subject === 'bob' && !('audience' in log[1]),
    'GET /_exchanges: each exchange, with its audience parameter', log);
    await resetStats({ issuer });
    ok(same((await exchanges({ issuer })), []) && (await stats({ issuer })).exchanges === 0, 'reset empties the exchange log and counters');
  });

  // --- faults --------------------------------------------------------------------------------
  await step('faults', async () => {
    const body = `token=${acme.access_token}`;
    await setFault({ issuer, introspection: '500' });
    let r = await rawPost(md.introspection_endpoint, body, gatewayAuth);
    ok(r.status === 500, 'fault 500: HTTP 500', r);

    await setFault({ issuer, introspection: 'garbage' });
    r = await rawPost(md.introspection_endpoint, body, gatewayAuth);
    let parsed = true;
    try {
      JSON.parse(r.text);
    } catch {
      parsed = false;
    }
    ok(r.status === 200 && !parsed, 'fault garbage: 200 with a non-JSON body', r);

    await setFault({ issuer, introspection: 'hang' });
    let hung;
    try {
      await rawPost(md.introspection_endpoint, body, gatewayAuth, 1200);
    } catch (e) {
      hung = e.name;
    }
    ok(hung === 'TimeoutError', 'fault hang: no answer within 1.2 s', hung);

    await setFault({ issuer, introspection: 'reset' });
    let reset;
    try {
      await rawPost(md.introspection_endpoint, body, gatewayAuth);
    } catch (e) {
      reset = e.cause?.code || e.message;
    }
    ok(!!reset, 'fault reset: connection dropped without an answer', reset);

    await setFault({ issuer, introspection: 'slow' });
    r = await rawPost(md.introspection_endpoint, body, gatewayAuth);
    ok(r.status === 200 && JSON.parse(r.text).active === true && r.ms >= 1900, `fault slow: real answer after ${r.ms} ms`, r);

    await setFault({ issuer, introspection: 'none' });
    r = await rawPost(md.introspection_endpoint, body, gatewayAuth);
    ok(r.status === 200 && JSON.parse(r.text).active === true && r.ms < 1000, 'fault none: real path again', r);

    const bad = await fetch(`${issuer}/_fault`, { method: 'POST', body: '{"introspection":"explode"}' });
    ok(bad.status === 400, 'unknown fault mode: 400');
    const s = await stats({ issuer });
    ok(s.introspections === 6, 'every faulted introspection POST was counted', s);
  });

  // --- keep-alive as Node leaves it -----------------------------------------------------------
  await step('keep-alive', async () => {
    const ka = await new Promise((resolve, reject) => {
      const req = http.get(`${issuer}/_stats`, { agent: new http.Agent({ keepAlive: true }) }, (res) => {
        res.resume();
        resolve(res.headers['keep-alive']);
      });
      req.on('error', reject);
    });
    ok(ka === 'timeout=5', 'keep-alive: Keep-Alive: timeout=5 (Node default, idle close after 5 s)', ka);
  });

  // --- command line --------------------------------------------------------------------------
  await step('token.mjs', async () => {
    const run = promisify(execFile);
    const tool = path.join(HERE, 'token.mjs');
    const c = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--client', 'machine-acme', '--scope', 'mcp:tools mcp:admin'])).stdout);
    ok(same(Object.keys(c).sort(), ['access_token', 'expires_in', 'scope', 'token_type']) && c.scope === 'mcp:tools mcp:admin',
      'token.mjs --client: one JSON object', c);
    const u = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--user', 'carol', '--scope', 'mcp:tools offline_access', '--resource', R1])).stdout);
    ok(typeof u.refresh_token === 'string' && u.token_type === 'Bearer', 'token.mjs --user with offline_access: refresh_token', u);
    const i = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--introspect', u.access_token])).stdout);
    ok(i.active && i.sub === 'carol' && i.tenant === 'beta', 'token.mjs --introspect: raw response', i);
    const x = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--exchange', u.access_token, '--resource', R2, '--audience', 'up'])).stdout);
    const ix = await introspect({ issuer, token: x.access_token });
    ok(x.issued_token_type === ACCESS_TYPE && ix.sub === 'carol' && same(audOf(ix), [R2]) && same(ix.act, { sub: 'gateway-exchange' }),
      'token.mjs --exchange: a token for R2 with act', { x, ix });
    const xg = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--exchange', u.access_token, '--as', 'mcpgate'])).stdout);
    ok(same((await introspect({ issuer, token: xg.access_token })).act, { sub: 'mcpgate' }), 'token.mjs --exchange --as mcpgate', xg);
    let xcode;
    try {
      await run(process.execPath, [tool, '--issuer', issuer, '--exchange', u.access_token, '--as', 'machine-acme']);
    } catch (e) {
      xcode = e.code;
    }
    ok(xcode === 1, 'token.mjs --exchange by a client without the grant: exit 1', xcode);
    const v = JSON.parse((await run(process.execPath, [tool, '--issuer', issuer, '--revoke', u.access_token])).stdout);
    ok(same(v, { revoked: true }), 'token.mjs --revoke: {"revoked":true}');
    let code;
    try {
      await run(process.execPath, [tool, '--issuer', issuer, '--client', 'machine-acme', '--secret', 'wrong']);
    } catch (e) {
      code = e.code;
    }
    ok(code === 1, 'token.mjs: failure exits 1', code);
  });

  // --- expiry of the short-lived token --------------------------------------------------------
  await step('short-lived expiry', async () => {
    const wait = 6100 - (Date.now() - shortLivedAt);
    if (wait > 0) await sleep(wait);
    const r = await introspect({ issuer, token: shortLived.access_token });
    ok(r.active === false, `short-lived: inactive ${((Date.now() - shortLivedAt) / 1000).toFixed(1)} s after issue`, r);
    if (!shortX) return;
    const waitX = 6100 - (Date.now() - shortX.at);
    if (waitX > 0) await sleep(waitX);
    const e = await exchangeToken({ issuer, subjectToken: shortX.subject });
    ok(e.error === 'invalid_grant', 'expired subject token: invalid_grant', e);
    const rx = await introspect({ issuer, token: shortX.token });
    ok(rx.active === false, 'the exchange of the expired short-lived token expired with it', rx);
  });

  // --- stop ----------------------------------------------------------------------------------
  await step('SIGTERM', async () => {
    await setFault({ issuer, introspection: 'hang' });
    const pending = rawPost(md.introspection_endpoint, 'token=x', gatewayAuth, 10000).catch((e) => e);
    await sleep(100);
    const t0 = Date.now();
    const code = await idp.stop();
    // the server gives up on open requests after 2 s; well before the hanging one's 10 s
    ok(code === 0 && Date.now() - t0 < 7000, `SIGTERM stops the server (exit ${code}, ${Date.now() - t0} ms) even with a hanging request`);
    await pending;
    idp = undefined;
  });
  fs.rmSync(tmp, { recursive: true, force: true });
}

// Two more servers that must know each other's URL before either starts: A, the
// organisation's issuer (--id-jag-audience B, and one more authorization server, OTHER), and
// B, the upstream's own (--trust-id-jag A, --resource RB). Free ports are picked first; a
// port taken in between (another test run) means picking again.
async function startPair() {
  for (let attempt = 1; ; attempt += 1) {
    const [pa, pb, po] = [await freePort(), await freePort(), await freePort()];
    const A = `http://127.0.0.1:${pa}`;
    const B = `http://127.0.0.1:${pb}`;
    const OTHER = `http://127.0.0.1:${po}`; // an authorization server A trusts, not B
    const RB = `http://127.0.0.1:${po}/upstream/mcp`;
    const started = await Promise.allSettled([
      spawnIdp({ port: pa, resources: [R1], args: ['--id-jag-audience', B, '--id-jag-audience', OTHER] }),
      spawnIdp({ port: pb, resources: [RB, R2], args: ['--trust-id-jag', A] }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') others.add(s.value);
    if (started.every((s) => s.status === 'fulfilled')) {
      return { a: started[0].value, b: started[1].value, A, B, OTHER, RB };
    }
    await Promise.all(started.filter((s) => s.status === 'fulfilled').map(async (s) => {
      await s.value.stop();
      others.delete(s.value);
    }));
    if (attempt === 3) throw started.find((s) => s.status === 'rejected').reason;
  }
}

// A token response fit for a diagnostic line: the token itself never printed.
const redacted = (x) => (x && typeof x === 'object' && 'access_token' in x ? { ...x, access_token: '…' } : x);
const decodePart = (t, i) => JSON.parse(Buffer.from(String(t).split('.')[i] ?? '', 'base64url').toString('utf8') || 'null');
async function signAt(issuer, body) {
  const res = await fetch(`${issuer}/_sign`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return (await res.json()).token;
}

async function idJagCases(mainIssuer) {
  const {
    a, b, A, B, OTHER, RB,
  } = await startPair();
  try {
    ok(a.issuer === A && b.issuer === B, `ID-JAG: A ${A} (--id-jag-audience B), B ${B} (--trust-id-jag A)`);
    const mdB = await discover(B);
    ok(mdB.grant_types_supported.includes(JWT_BEARER.grantType), "B's metadata lists the jwt-bearer grant", mdB.grant_types_supported);
    ok(!(await discover(A)).grant_types_supported.includes(JWT_BEARER.grantType), 'A (no --trust-id-jag): no jwt-bearer grant');
    const alice = await userToken({ issuer: A, user: 'alice', scope: 'mcp:tools mcp:read' });

    // leg 1 at A
    const j = await idJag({
      issuer: A, subjectToken: alice.access_token, audience: B, resource: RB, scope: 'mcp:tools mcp:read',
    });
    ok(same(Object.keys(j).sort(), ['access_token', 'expires_in', 'issued_token_type', 'scope', 'token_type'])
      && j.issued_token_type === ID_JAG.tokenType && j.token_type === 'N_A' && j.expires_in === 300
      && j.scope === 'mcp:tools mcp:read',
    'leg 1: RFC 8693 response (issued_token_type id-jag, token_type N_A, expires_in 300, scope)', redacted(j));
    const h = decodePart(j.access_token, 0);
    const p = decodePart(j.access_token, 1);
    const jwksA = await (await fetch(`${A}/jwks`)).json();
    const key = jwksA.keys.find((k) => k.kid === h?.kid);
    ok(h?.typ === 'oauth-id-jag+jwt' && h.alg === 'RS256' && !!key, 'leg 1: header typ oauth-id-jag+jwt, RS256, kid of a key at A\'s /jwks', h);
    const [eh, ep, es] = j.access_token.split('.');
    ok(!!key && crypto.verify('sha256', Buffer.from(`${eh}.${ep}`), crypto.createPublicKey({ key: { kty: key.kty, n: key.n, e: key.e }, format: 'jwk' }), Buffer.from(es, 'base64url')),
      "leg 1: the signature verifies with A's published key");
    if (VERBOSE) note(`ID-JAG payload: ${JSON.stringify(p)}`);
    ok(p?.iss === A && p.sub === 'alice' && p.aud === B && p.client_id === 'gateway-exchange'
      && p.resource === RB && p.scope === 'mcp:tools mcp:read' && typeof p.jti === 'string' && p.jti.length >= 16
      && Number.isInteger(p.iat) && p.exp === p.iat + 300 && Math.abs(p.iat - now()) <= 5
      && p.tenant === 'acme' && same(p.groups, ['engineering']),
    'leg 1: claims iss A, sub alice, aud B, client_id, jti, iat, exp = iat + 300, resource, scope, tenant, groups', p);
    const j2 = await idJag({ issuer: A, subjectToken: alice.access_token, audience: B, resource: RB });
    ok(decodePart(j2.access_token, 1)?.jti !== p?.jti && !('scope' in j2) && !('scope' in (decodePart(j2.access_token, 1) ?? {})),
      'leg 1: a jti of its own each time; no scope asked, none in the ID-JAG', decodePart(j2.access_token, 1));

    // leg 2 at B
    const t = await jwtBearer({ issuer: B, assertion: j.access_token });
    ok(typeof t.access_token === 'string' && t.token_type === 'Bearer' && t.expires_in === 3600 && t.scope === 'mcp:tools mcp:read'
      && !t.refresh_token,
    'leg 2: jwt-bearer at B answers an access token (Bearer, 3600 s, the ID-JAG\'s scope)', redacted(t));
    const r = await introspect({ issuer: B, token: t.access_token });
    if (VERBOSE) note(`B's token: ${JSON.stringify(r)}`);
    ok(r.active === true && r.sub === 'alice' && same(audOf(r), [RB]) && r.iss === B && r.client_id === 'gateway-exchange'
      && r.scope === 'mcp:tools mcp:read' && r.tenant === 'acme' && !('act' in r),
    'leg 2: introspection at B (as mcpgate): active, sub alice, aud the resource, iss B', r);
    ok((await introspect({ issuer: A, token: t.access_token })).active === false, "B's token means nothing at A");
    const again = await jwtBearer({ issuer: B, assertion: j.access_token });
    ok(again.error === 'invalid_grant' && /replay|already used/.test(again.error_description), 'leg 2: the same ID-JAG again: invalid_grant (replay)', again);
    const t2 = await jwtBearer({ issuer: B, assertion: j2.access_token });
    ok(t2.scope === 'mcp:tools' && (await introspect({ issuer: B, token: t2.access_token })).scope === 'mcp:tools',
      "leg 2: an ID-JAG without scope: the resource's default (mcp:tools)", redacted(t2));

    // leg 2 refusals
    const refused = async (what, want, got, re) => ok(got.error === want && !('access_token' in got) && (!re || re.test(got.error_description ?? '')),
      `leg 2 refused (${what}): ${want}`, redacted(got));
    const fresh = (o = {}) => idJag({
      issuer: A, subjectToken: alice.access_token, audience: B, resource: RB, ...o,
    });
    const other = await fresh({ audience: OTHER });
    ok(decodePart(other.access_token, 1)?.aud === OTHER, 'leg 1 for another trusted authorization server: aud OTHER');
    await refused('an ID-JAG for another audience', 'invalid_grant', await jwtBearer({ issuer: B, assertion: other.access_token }), /audience/);
    const base = () => ({
      iss: A, sub: 'alice', aud: B, client_id: 'gateway-exchange', jti: crypto.randomBytes(12).toString('base64url'),
      iat: now(), exp: now() + 300, resource: RB,
    });
    const jagHeader = { typ: 'oauth-id-jag+jwt' };
    const good = await signAt(A, { header: jagHeader, payload: base() });
    ok(typeof (await jwtBearer({ issuer: B, assertion: good })).access_token === 'string', "control: an ID-JAG made with A's /_sign and A's key is accepted");
    await refused('signed by a key A does not publish (other-rsa)', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: jagHeader, payload: base(), key: 'other-rsa' }) }), /key/);
    await refused('signed by A\'s key id, by another key', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: { ...jagHeader, kid: key?.kid }, payload: base(), key: 'other-rsa' }) }), /signature/);
    await refused('an issuer B does not trust (the main server)', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(mainIssuer, { header: jagHeader, payload: { ...base(), iss: mainIssuer } }) }), /not trusted/);
    await refused('alg none', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: jagHeader, payload: base(), key: 'none' }) }), /alg/);
    await refused('HS256 with A\'s public key as secret', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: jagHeader, payload: base(), key: 'hmac-public' }) }), /alg/);
    await refused('expired', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: jagHeader, payload: { ...base(), iat: now() - 400, exp: now() - 10 } }) }), /expired/);
    await refused('typ at+jwt (an access token, not an ID-JAG)', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { payload: base() }) }), /typ/);
    await refused('a subject B has no account for', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: await signAt(A, { header: jagHeader, payload: { ...base(), sub: 'mallory' } }) }), /account/);
    await refused('a resource that is not B\'s', 'invalid_target',
      await jwtBearer({ issuer: B, assertion: (await fresh({ resource: 'http://127.0.0.1:1/unknown' })).access_token }));
    await refused('payload altered after signing', 'invalid_grant',
      await jwtBearer({ issuer: B, assertion: `${eh}.${Buffer.from(JSON.stringify({ ...p, sub: 'bob', jti: 'x' })).toString('base64url')}.${es}` }), /signature/);
    const forGw = await fresh();
    await refused('presented by another client (mcpgate) than its client_id', 'invalid_grant',
      await jwtBearer({ issuer: B, client: 'mcpgate', assertion: forGw.access_token }), /client/);
    ok(typeof (await jwtBearer({ issuer: B, assertion: forGw.access_token })).access_token === 'string',
      '… a refused presentation does not use it up: its own client redeems it');
    const byMcpgate = await fresh({ client: 'mcpgate' });
    const tm = await jwtBearer({ issuer: B, client: 'mcpgate', assertion: byMcpgate.access_token });
    ok((await introspect({ issuer: B, token: tm.access_token })).client_id === 'mcpgate', 'an ID-JAG asked by mcpgate: client_id mcpgate, redeemed by mcpgate');
    await refused('a client without the grant (machine-acme)', 'unauthorized_client',
      await jwtBearer({ issuer: B, client: 'machine-acme', assertion: (await fresh()).access_token }));
    await refused('wrong client secret', 'invalid_client',
      await jwtBearer({ issuer: B, secret: 'wrong', assertion: (await fresh()).access_token }));
    await refused('scope beyond the ID-JAG\'s', 'invalid_scope',
      await jwtBearer({ issuer: B, scope: 'mcp:admin', assertion: (await fresh({ scope: 'mcp:tools' })).access_token }));
    const narrow = await jwtBearer({ issuer: B, scope: 'mcp:read', assertion: (await fresh({ scope: 'mcp:tools mcp:read' })).access_token });
    ok(narrow.scope === 'mcp:read', 'leg 2 with a narrower scope parameter: that scope', redacted(narrow));
    await refused('no assertion', 'invalid_request', await jwtBearer({ issuer: B, assertion: undefined }));
    await refused('not a JWS', 'invalid_grant', await jwtBearer({ issuer: B, assertion: 'not-a-jwt' }));
    const atA = await jwtBearer({ issuer: A, assertion: (await fresh()).access_token });
    ok(atA.error === 'unsupported_grant_type' || atA.error === 'unauthorized_client', `jwt-bearer at A (no --trust-id-jag): ${atA.error}`, redacted(atA));

    // leg 1 refusals
    const refused1 = async (what, want, got) => ok(got.error === want && !('access_token' in got), `leg 1 refused (${what}): ${want}`, redacted(got));
    await refused1('an audience A does not trust', 'invalid_target', await fresh({ audience: 'http://127.0.0.1:1' }));
    await refused1('two audiences', 'invalid_target', await fresh({ audience: [B, OTHER] }));
    await refused1('no audience', 'invalid_request', await fresh({ audience: undefined }));
    await refused1('a client not allowed to exchange (machine-acme)', 'unauthorized_client', await fresh({ client: 'machine-acme' }));
    await refused1('unknown scope', 'invalid_scope', await fresh({ scope: 'mcp:tools nosuch' }));
    await refused1('a machine token as subject', 'invalid_grant',
      await fresh({ subjectToken: (await clientToken({ issuer: A, client: 'machine-acme' })).access_token }));
    await refused1('an unknown subject token', 'invalid_grant', await fresh({ subjectToken: 'no-such-token' }));
    const unknownType = await exchangeToken({ issuer: A, subjectToken: alice.access_token, audience: B, requestedTokenType: 'urn:ietf:params:oauth:token-type:jwt' });
    ok(unknownType.error === 'invalid_request', 'requested_token_type jwt (unknown): still invalid_request', redacted(unknownType));

    // JWT formats: A signs ES256, B issues JWTs
    await setFormat(A, 'jwt', 'ES256');
    await setFormat(B, 'jwt', 'PS256');
    try {
      const je = await fresh({ scope: 'mcp:write' });
      ok(decodePart(je.access_token, 0)?.alg === 'ES256', 'A in ES256: the ID-JAG is ES256', decodePart(je.access_token, 0));
      const tj = await jwtBearer({ issuer: B, assertion: je.access_token });
      const pj = jwtPayload(tj.access_token);
      ok(decodePart(tj.access_token, 0)?.alg === 'PS256' && pj?.sub === 'alice' && pj.aud === RB && pj.iss === B && pj.scope === 'mcp:write',
        'an ES256 ID-JAG at B in JWT format: a PS256 JWT for alice, aud the resource', pj);
      const rj = await introspect({ issuer: B, token: tj.access_token });
      ok(rj.active === true && rj.sub === 'alice', "B's JWT introspects active at B", rj);
    } finally {
      await setFormat(A, 'opaque', 'RS256');
      await setFormat(B, 'opaque', 'RS256');
    }

    // token.mjs
    const run = promisify(execFile);
    const tool = path.join(HERE, 'token.mjs');
    const cj = JSON.parse((await run(process.execPath, [tool, '--issuer', A, '--exchange', alice.access_token, '--id-jag', B, '--resource', RB, '--scope', 'mcp:read'])).stdout);
    ok(cj.issued_token_type === ID_JAG.tokenType && decodePart(cj.access_token, 1)?.aud === B, 'token.mjs --exchange … --id-jag B: an ID-JAG', redacted(cj));
    const cb = JSON.parse((await run(process.execPath, [tool, '--issuer', B, '--jwt-bearer', cj.access_token])).stdout);
    ok(cb.scope === 'mcp:read' && (await introspect({ issuer: B, token: cb.access_token })).sub === 'alice', 'token.mjs --jwt-bearer: a token of B for alice');
    let code;
    try {
      await run(process.execPath, [tool, '--issuer', B, '--jwt-bearer', cj.access_token]);
    } catch (e) {
      code = e.code;
    }
    ok(code === 1, 'token.mjs --jwt-bearer with a used ID-JAG: exit 1', code);

    // counters
    await resetStats({ issuer: A });
    await resetStats({ issuer: B });
    const bob = await userToken({ issuer: A, user: 'bob' });
    const x1 = await idJag({ issuer: A, subjectToken: alice.access_token, audience: B, resource: RB });
    const x2 = await idJag({ issuer: A, subjectToken: bob.access_token, audience: B, resource: RB });
    const x3 = await idJag({ issuer: A, subjectToken: alice.access_token, audience: B, resource: RB });
    await idJag({ issuer: A, subjectToken: alice.access_token, audience: 'http://127.0.0.1:1', resource: RB });
    for (const x of [x1, x2, x3]) await jwtBearer({ issuer: B, assertion: x.access_token });
    await jwtBearer({ issuer: B, assertion: x1.access_token }); // replayed: not counted
    const sa = await stats({ issuer: A });
    const sb = await stats({ issuer: B });
    ok(sa.id_jags === 3 && sa.exchanges === 0 && sa.jwt_bearer === 0, 'A /_stats: id_jags 3 (the refused one not counted), no exchanges', sa);
    ok(sb.jwt_bearer === 3 && same(sb.jwt_bearer_by_subject, { alice: 2, bob: 1 }) && sb.id_jags === 0 && sb.tokens === 4,
      'B /_stats: jwt_bearer 3, jwt_bearer_by_subject {alice: 2, bob: 1} (the replay not counted), 4 token requests', sb);
    ok(sa.jwks === 0, "B verified them with A's keys from its cache: no GET /jwks at A", sa);
    const zb = await resetStats({ issuer: B });
    ok(zb.jwt_bearer === 0 && same(zb.jwt_bearer_by_subject, {}) && (await resetStats({ issuer: A })).id_jags === 0,
      'POST /_stats/reset zeroes id_jags, jwt_bearer and jwt_bearer_by_subject');
  } finally {
    for (const s of [a, b]) {
      await s.stop();
      others.delete(s);
    }
  }
}

try {
  await main();
} catch (e) {
  ok(false, 'selftest ran to the end', e.stack || String(e));
} finally {
  if (idp) await idp.stop();
  await Promise.all([...others].map((o) => o.stop()));
  clearTimeout(watchdog);
}
process.stdout.write(`1..${n}\n`);
process.exitCode = failed ? 1 : 0;
