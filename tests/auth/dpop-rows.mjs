#!/usr/bin/env node
// DPoP (RFC 9449) at the gateway, every row, with real DPoP-bound tokens of oidc-provider
// (tests/idp: its dPoP feature binds a token to the key of the proof sent to its token
// endpoint) and proofs made by tests/lib/dpop.mjs:
//
//   node tests/auth/dpop-rows.mjs URL --issuer ISSUER [--required] [--handoff FILE]
//
// URL is the gateway's MCP endpoint (its resource). Prints TAP (no plan: tests/auth/dpop.sh
// counts the lines). --required: the gateway runs with [auth] dpop = required (the rows
// of that mode). --handoff FILE: writes {token, proof, url} of a proof the gateway accepted
// once, for the shell to replay at another host. Exit 1 on any failure.

import fs from 'node:fs';

import {
  boundToken, dpopKey, dpopProof, thumbprint,
} from '../lib/dpop.mjs';

const argv = process.argv.slice(2);
const URL_ = argv[0];
const opt = (name) => {
  const i = argv.indexOf(name);
  return i > 0 ? argv[i + 1] : undefined;
};
const issuer = opt('--issuer');
const required = argv.includes('--required');
const handoff = opt('--handoff');
if (!URL_ || !issuer) {
  process.stderr.write('usage: dpop-rows.mjs URL --issuer ISSUER [--required] [--handoff FILE]\n');
  process.exit(2);
}

let n = 0;
let failed = 0;
function ok(cond, desc, detail) {
  n += 1;
  if (!cond) failed += 1;
  process.stdout.write(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}\n`);
  if (!cond && detail !== undefined) {
    for (const line of (typeof detail === 'string' ? detail : JSON.stringify(detail)).split('\n')) process.stdout.write(`# ${line}\n`);
  }
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
async function call({
  scheme = 'DPoP', token, proof, method = 'POST', body = LIST, headers = {},
}) {
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers };
  if (token) h.Authorization = `${scheme} ${token}`;
  if (proof !== undefined) h.DPoP = proof;
  const res = await fetch(URL_, {
    method, headers: h, body: method === 'POST' ? body : undefined, signal: AbortSignal.timeout(20000),
  });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', headers: res.headers, text };
}
const field = (challenge, name) => (new RegExp(`${name}="([^"]*)"`).exec(challenge) ?? [])[1];

const key = dpopKey('ES256');
const other = dpopKey('ES256');
let token;
let otherToken;
try {
  token = await boundToken({ issuer, key });
  otherToken = await boundToken({ issuer, key: other, client: 'machine-beta' });
} catch (e) {
  ok(false, 'DPoP-bound tokens from the authorization server', String(e.message ?? e));
  process.exit(1);
}
const jkt = thumbprint(key.jwk);
const parts = token.split('.');
if (parts.length === 3) {
  const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  ok(payload.cnf?.jkt === jkt, "the JWT access token is bound to the client's key (cnf.jkt its thumbprint)", payload.cnf);
} else {
  ok(token.length > 20, 'an opaque DPoP-bound token (its cnf.jkt comes from introspection)');
}
const proof = (over = {}) => dpopProof(key, {
  htm: 'POST', htu: URL_, token, ...over,
});

// A valid proof, then another, then the first again (a replay).
const first = proof();
let r = await call({ token, proof: first });
ok(r.status === 200 && /"tools"/.test(r.text), 'a valid proof with its bound token: 200', r);
if (handoff) {
  fs.writeFileSync(handoff, JSON.stringify({ token, proof: first, url: URL_ }), { mode: 0o600 });
}
r = await call({ token, proof: proof() });
ok(r.status === 200, 'a second request with a new proof: 200 (the token cached, the proof checked)', r.status);
r = await call({ token, proof: first });
ok(r.status === 401 && /^DPoP /.test(r.challenge) && field(r.challenge, 'error') === 'invalid_dpop_proof',
  'the first proof again (its jti seen): 401, DPoP error="invalid_dpop_proof"', r.challenge);
ok(/replayed/.test(field(r.challenge, 'error_description') ?? ''), 'replay: its reason', r.challenge);
ok(field(r.challenge, 'algs')?.split(' ').includes('ES256'), 'the challenge names the algorithms (algs)', r.challenge);
ok(field(r.challenge, 'resource_metadata')?.endsWith('/.well-known/oauth-protected-resource/mcp'),
  'the challenge names the resource metadata', r.challenge);

// Each wrong proof: 401 invalid_dpop_proof with its reason.
const now = Math.floor(Date.now() / 1000);
const rows = [
  [{ htm: 'GET' }, 'another method (htm)', 'htm GET on a POST'],
  [{ htu: URL_.replace(/\/mcp$/, '/other') }, 'another URL (htu)', 'htu of another path'],
  [{ htu: URL_.replace(/^http:/, 'https:') }, 'another URL (htu)', 'htu of another scheme'],
  [{ claims: { iat: now - 3600 } }, 'iat out of the accepted window', 'iat an hour ago'],
  [{ claims: { iat: now + 3600 } }, 'iat out of the accepted window', 'iat an hour ahead'],
  [{ token: otherToken }, 'another access token (ath)', 'a proof for another token (ath)'],
  [{ claims: { ath: undefined } }, 'another access token (ath)', 'a proof without ath'],
  [{ claims: { jti: undefined } }, 'jti', 'a proof without jti'],
  [{ header: { typ: 'JWT' } }, 'typ', 'typ JWT'],
  [{ header: { alg: 'none' } }, '', 'alg none'],
  [{ header: { alg: 'HS256' } }, 'algorithm not accepted', 'alg HS256'],
  [{ header: { jwk: { ...key.jwk, d: 'AAAA' } } }, 'no usable public key', 'a jwk with a private member'],
  [{ header: { jwk: undefined } }, 'no usable public key', 'no jwk'],
  [{ signer: other }, 'signature', 'signed by another key than its jwk'],
];
for (const [over, reason, what] of rows) {
  let p;
  try {
    p = proof(over);
  } catch (e) {
    p = `${proof({ header: { alg: 'ES256' } }).split('.').slice(0, 2).join('.')}.AAAA`; // HS256: signed as ES256, broken
  }
  r = await call({ token, proof: p });
  ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_dpop_proof'
    && (field(r.challenge, 'error_description') ?? '').includes(reason),
  `${what}: 401 invalid_dpop_proof${reason ? ` (${reason})` : ''}`, { status: r.status, challenge: r.challenge });
}
r = await call({ token });
ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_dpop_proof'
  && /missing/.test(field(r.challenge, 'error_description') ?? ''), 'Authorization: DPoP without a DPoP header: 401', r.challenge);
r = await call({ token, headers: { DPoP: `${proof()}, ${proof()}` } });
ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_dpop_proof', 'two DPoP headers: 401', r.challenge);

// The key binding.
r = await call({ token, proof: dpopProof(other, { htm: 'POST', htu: URL_, token }) });
ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_token'
  && /another key/.test(field(r.challenge, 'error_description') ?? ''),
'a valid proof signed by another key than cnf.jkt: 401 invalid_token', r.challenge);
r = await call({ scheme: 'Bearer', token });
ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_token'
  && (required ? /^DPoP .*algs="/.test(r.challenge) : /^Bearer .*, DPoP algs="/.test(r.challenge)),
`the bound token as Bearer: 401 invalid_token, ${required ? 'a DPoP challenge' : 'a Bearer and a DPoP challenge'}`, r.challenge);
r = await call({ scheme: 'Bearer', token, proof: proof() });
ok(r.status === 401, 'the bound token as Bearer even with a proof: 401', r.status);

// An unbound token.
const bearer = await (await fetch(`${issuer}/token`, {
  method: 'POST',
  headers: {
    Authorization: `Basic ${Buffer.from('machine-acme:machine-acme-secret').toString('base64')}`,
    'Content-Type': 'application/x-www-form-urlencoded',
  },
  body: 'grant_type=client_credentials&scope=mcp:tools',
})).json();
r = await call({ token: bearer.access_token, proof: dpopProof(key, { htm: 'POST', htu: URL_, token: bearer.access_token }) });
ok(r.status === 401 && field(r.challenge, 'error') === 'invalid_token' && /not DPoP-bound/.test(r.challenge),
  'an unbound token under the DPoP scheme with a valid proof: 401 invalid_token', r.challenge);
r = await call({ scheme: 'Bearer', token: bearer.access_token });
if (required) {
  ok(r.status === 401 && /only DPoP-bound/.test(r.challenge),
    'dpop = required: an unbound token as Bearer: 401', r.challenge);
} else {
  ok(r.status === 200, 'dpop = allowed: an unbound token as Bearer: 200', r.status);
}
r = await call({});
ok(r.status === 401 && (required ? /^DPoP resource_metadata="[^"]+".*algs="/.test(r.challenge) : /^Bearer resource_metadata=/.test(r.challenge)),
  `no credentials: 401, a ${required ? 'DPoP' : 'Bearer'} challenge`, r.challenge);

// A session: initialize and later requests, each with its own proof.
const init = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'dpop', version: '1' } },
});
r = await call({ token, proof: proof(), body: init });
const sid = r.headers.get('mcp-session-id');
ok(r.status === 200 && sid, 'initialize with DPoP: a session', r.status);
r = await call({
  token, proof: proof(), headers: { 'Mcp-Session-Id': sid ?? '', 'MCP-Protocol-Version': '2025-11-25' },
});
ok(r.status === 200, 'tools/list in that session with a new proof: 200', r.status);
r = await call({
  method: 'DELETE', token, proof: proof({ htm: 'DELETE' }), headers: { 'Mcp-Session-Id': sid ?? '' },
});
ok(r.status === 204, 'DELETE of the session with a proof of htm DELETE: 204', r.status);

// The protected-resource metadata.
const prmUrl = new URL(URL_);
const prm = await (await fetch(`${prmUrl.origin}/.well-known/oauth-protected-resource${prmUrl.pathname}`)).json();
ok(Array.isArray(prm.dpop_signing_alg_values_supported) && prm.dpop_signing_alg_values_supported.includes('ES256'),
  'protected-resource metadata: dpop_signing_alg_values_supported', prm);
ok(required ? prm.dpop_bound_access_tokens_required === true : prm.dpop_bound_access_tokens_required === undefined,
  `protected-resource metadata: dpop_bound_access_tokens_required ${required ? 'true' : 'absent'}`, prm);

process.exit(failed ? 1 : 0);
