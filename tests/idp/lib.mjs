// Client side of the test authorization server: mint, revoke and introspect tokens, and start
// the server as a child process. token.mjs is the command line around these functions.
//
//   import { clientToken, userToken, exchangeToken, revokeToken, introspect, spawnIdp } from './lib.mjs';

import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  ACCOUNTS, EXCHANGE_CLIENT, EXCHANGE_CLIENTS, GATEWAY_CLIENT, ID_JAG, JWT_BEARER, MACHINE_CLIENTS,
  RESOURCE_SCOPES, SCOPES, TOKEN_EXCHANGE, USER_CLIENT, secretFor,
} from './fixtures.mjs';

export {
  ACCOUNTS, EXCHANGE_CLIENT, EXCHANGE_CLIENTS, GATEWAY_CLIENT, ID_JAG, JWT_BEARER, MACHINE_CLIENTS,
  RESOURCE_SCOPES, SCOPES, TOKEN_EXCHANGE, USER_CLIENT, secretFor,
};

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SERVER_PATH = path.join(HERE, 'server.mjs');
const DEFAULT_TIMEOUT_MS = 10000;

export class IdpError extends Error {
  constructor(message, { status, body } = {}) {
    super(message);
    this.name = 'IdpError';
    this.status = status;
    this.body = body;
  }
}

/** A minimal cookie jar: enough for oidc-provider's interaction and session cookies. */
export class CookieJar {
  #cookies = []; // { name, value, path }

  /** Store the Set-Cookie headers of a fetch Response. */
  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const parts = line.split(';').map((s) => s.trim());
      const eq = parts[0].indexOf('=');
      if (eq <= 0) continue;
      const name = parts[0].slice(0, eq);
      const value = parts[0].slice(eq + 1);
      let cpath = '/';
      let expired = false;
      for (const attr of parts.slice(1)) {
        const i = attr.indexOf('=');
        const k = (i < 0 ? attr : attr.slice(0, i)).toLowerCase();
        const v = i < 0 ? '' : attr.slice(i + 1);
        if (k === 'path' && v.startsWith('/')) cpath = v;
        if (k === 'expires' && Date.parse(v) <= Date.now()) expired = true;
        if (k === 'max-age' && Number(v) <= 0) expired = true;
      }
      this.#cookies = this.#cookies.filter((c) => !(c.name === name && c.path === cpath));
      if (!expired) this.#cookies.push({ name, value, path: cpath });
    }
  }

  /** The Cookie header value for a URL (path-matched; one host per jar is assumed). */
  header(url) {
    const p = new URL(url).pathname;
    const match = (c) => p === c.path || p.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`);
    return this.#cookies.filter(match)
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`).join('; ');
  }

  get size() {
    return this.#cookies.length;
  }
}

function b64url(buf) {
  return Buffer.from(buf).toString('base64url');
}

function basic(id, secret) {
  const enc = (s) => encodeURIComponent(s); // RFC 6749 §2.3.1: form-encode, then base64
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

async function request(url, { timeoutMs = DEFAULT_TIMEOUT_MS, ...init } = {}) {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw new IdpError(`${init.method || 'GET'} ${url}: ${e.cause?.message || e.message}`);
  }
}

async function jsonOf(res, what) {
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new IdpError(`${what}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`, { status: res.status, body: text });
  }
  if (!res.ok) {
    throw new IdpError(`${what}: HTTP ${res.status} ${body.error || ''}${body.error_description ? `: ${body.error_description}` : ''}`, { status: res.status, body });
  }
  return body;
}

const metadataCache = new Map();

/** The issuer's authorization server metadata (cached per issuer). */
export async function discover(issuer) {
  const iss = issuer.replace(/\/+$/, '');
  if (!metadataCache.has(iss)) {
    const res = await request(`${iss}/.well-known/openid-configuration`);
    const md = await jsonOf(res, 'discovery');
    if (md.issuer !== iss) throw new IdpError(`discovery: issuer is ${md.issuer}, expected ${iss}`);
    metadataCache.set(iss, md);
  }
  return metadataCache.get(iss);
}

function tokenOut(body) {
  const out = {
    access_token: body.access_token,
    expires_in: body.expires_in,
    scope: body.scope,
    token_type: body.token_type,
  };
  if (body.refresh_token) out.refresh_token = body.refresh_token;
  return out;
}

async function postForm(url, form, headers = {}, what = 'request') {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) {
    if (v === undefined || v === null) continue;
    for (const one of [].concat(v)) body.append(k, one);
  }
  const res = await request(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json', ...headers },
    body,
  });
  return jsonOf(res, what);
}

/**
 * client_credentials token.
 * @param {object} o
 * @param {string} o.issuer
 * @param {string} o.client e.g. machine-acme
 * @param {string} [o.secret] default `<client>-secret`
 * @param {string} [o.scope='mcp:tools'] '' = no scope parameter
 * @param {string} [o.resource] default: the server's first --resource
 * @param {'basic'|'post'} [o.auth='basic']
 */
export async function clientToken({
  issuer, client, secret = secretFor(client), scope = 'mcp:tools', resource, auth = 'basic',
}) {
  const md = await discover(issuer);
  const form = { grant_type: 'client_credentials', scope: scope || undefined, resource };
  const headers = {};
  if (auth === 'post') Object.assign(form, { client_id: client, client_secret: secret });
  else headers.Authorization = basic(client, secret);
  return tokenOut(await postForm(md.token_endpoint, form, headers, 'token (client_credentials)'));
}

/**
 * Follow an authorization request through the headless interaction until the redirect to
 * redirectUri; returns that final URL. `jar` null = keep no cookies (like a bare fetch).
 */
export async function followAuthorization(authorizationUrl, redirectUri, {
  jar = new CookieJar(), maxHops = 10,
} = {}) {
  let url = authorizationUrl;
  for (let hop = 0; hop <= maxHops; hop += 1) {
    const headers = {};
    const cookie = jar?.header(url);
    if (cookie) headers.Cookie = cookie;
    const res = await request(url, { redirect: 'manual', headers });
    jar?.store(res);
    const loc = res.headers.get('location');
    if (res.status < 300 || res.status > 399 || !loc) {
      const text = await res.text();
      throw new IdpError(`authorization: HTTP ${res.status} at ${url}: ${text.slice(0, 300)}`, { status: res.status, body: text });
    }
    await res.arrayBuffer().catch(() => {});
    const next = new URL(loc, url).href;
    const target = new URL(next);
    const want = new URL(redirectUri);
    if (target.origin === want.origin && target.pathname === want.pathname) return next;
    url = next;
  }
  throw new IdpError(`authorization: more than ${maxHops} redirects`);
}

/** A PKCE pair (S256). */
export function pkcePair() {
  const verifier = b64url(crypto.randomBytes(32));
  const challenge = b64url(crypto.createHash('sha256').update(verifier).digest());
  return { verifier, challenge };
}

/**
 * User token: authorization code + PKCE (S256) with the public client `cli` through the
 * headless interaction, which logs in `user` (sent as login_hint).
 * @param {object} o
 * @param {string} o.issuer
 * @param {string} [o.user='alice']
 * @param {string} [o.scope='mcp:tools'] include offline_access for a refresh token
 * @param {string} [o.resource] sent on both the authorization and the token request
 * @param {string} [o.clientId='cli']
 * @param {string} [o.redirectUri='http://127.0.0.1/callback'] any loopback port is accepted
 * @param {boolean} [o.cookies=true] false: follow redirects with no cookie jar
 * @param {CookieJar} [o.jar] reuse a jar (a browser-like session); default: a fresh one
 * @param {object} [o.extraParams] more authorization request parameters (e.g. prompt)
 */
export async function userToken({
  issuer, user = 'alice', scope = 'mcp:tools', resource, clientId = USER_CLIENT.id,
  redirectUri = USER_CLIENT.redirectUri, cookies = true, jar, extraParams = {},
}) {
  const md = await discover(issuer);
  const { verifier, challenge } = pkcePair();
  const state = b64url(crypto.randomBytes(12));
  const auth = new URL(md.authorization_endpoint);
  const q = auth.searchParams;
  q.set('client_id', clientId);
  q.set('response_type', 'code');
  q.set('redirect_uri', redirectUri);
  if (scope) q.set('scope', scope);
  q.set('state', state);
  q.set('code_challenge', challenge);
  q.set('code_challenge_method', 'S256');
  if (user) q.set('login_hint', user);
  if (resource) q.set('resource', resource);
  // OpenID Connect: offline_access is dropped unless consent is prompted for explicitly.
  if (String(scope).split(' ').includes('offline_access')) q.set('prompt', 'consent');
  for (const [k, v] of Object.entries(extraParams)) q.set(k, v);

  const final = new URL(await followAuthorization(auth.href, redirectUri, {
    jar: jar ?? (cookies ? new CookieJar() : null),
  }));
  const p = final.searchParams;
  if (p.get('error')) {
    throw new IdpError(`authorization: ${p.get('error')}${p.get('error_description') ? `: ${p.get('error_description')}` : ''}`, { body: Object.fromEntries(p) });
  }
  if (p.get('state') !== state) throw new IdpError('authorization: state mismatch');
  if (p.get('iss') && p.get('iss') !== md.issuer) throw new IdpError('authorization: iss mismatch');
  const code = p.get('code');
  if (!code) throw new IdpError(`authorization: no code in ${final.href}`);

  return tokenOut(await postForm(md.token_endpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    client_id: clientId,
    resource,
  }, {}, 'token (authorization_code)'));
}

/** refresh_token grant with the public client. */
export async function refreshToken({
  issuer, refreshToken: rt, clientId = USER_CLIENT.id, resource, scope,
}) {
  const md = await discover(issuer);
  return tokenOut(await postForm(md.token_endpoint, {
    grant_type: 'refresh_token', refresh_token: rt, client_id: clientId, resource, scope,
  }, {}, 'token (refresh_token)'));
}

/** Token of either kind: `user` given = user token, else client_credentials for `client`. */
export async function getToken(o) {
  if (o.user) return userToken(o);
  if (o.client) return clientToken(o);
  throw new TypeError('getToken needs user or client');
}

/**
 * RFC 8693 token exchange: subjectToken (an access token of this server) for a token meant
 * for `resource`, asked by a client allowed the grant. Resolves to the parsed response
 * ({access_token, issued_token_type, token_type, expires_in, scope?}) or, when the server
 * refuses, to its OAuth error ({error, error_description?}); throws only when there is no
 * JSON answer at all.
 * @param {object} o
 * @param {string} o.issuer
 * @param {string} [o.client='gateway-exchange']
 * @param {string} [o.secret] default `<client>-secret`
 * @param {string} o.subjectToken
 * @param {string} [o.resource] default: the server's first --resource
 * @param {string} [o.scope] default: the subject token's
 * @param {string|string[]} [o.audience] recorded only (GET /_exchanges)
 * @param {string} [o.subjectTokenType] default urn:ietf:params:oauth:token-type:access_token
 * @param {string} [o.requestedTokenType] not sent unless given
 * @param {'basic'|'post'} [o.auth='basic']
 */
export async function exchangeToken({
  issuer, client = EXCHANGE_CLIENT.id, secret = secretFor(client), subjectToken, resource, scope,
  audience, subjectTokenType = TOKEN_EXCHANGE.accessTokenType, requestedTokenType, auth = 'basic',
}) {
  const md = await discover(issuer);
  const form = {
    grant_type: TOKEN_EXCHANGE.grantType,
    subject_token: subjectToken,
    subject_token_type: subjectTokenType,
    requested_token_type: requestedTokenType,
    resource,
    scope,
    audience,
  };
  const headers = {};
  if (auth === 'post') Object.assign(form, { client_id: client, client_secret: secret });
  else headers.Authorization = basic(client, secret);
  try {
    return await postForm(md.token_endpoint, form, headers, 'token (token-exchange)');
  } catch (e) {
    if (e.body && typeof e.body === 'object' && typeof e.body.error === 'string') return e.body;
    throw e;
  }
}

/**
 * Leg 1 of enterprise-managed authorization: token exchange of subjectToken (a person's access
 * token of `issuer`) for an ID-JAG meant for the authorization server `audience` (an issuer
 * URL the server was given with --id-jag-audience) and its resource. Resolves to the RFC 8693
 * response ({access_token: the ID-JAG, issued_token_type: ...:id-jag, token_type: "N_A",
 * expires_in, scope?}) or to the OAuth error, like exchangeToken.
 * @param {object} o
 * @param {string} o.issuer the organisation's issuer
 * @param {string} o.subjectToken
 * @param {string} o.audience the upstream authorization server's issuer
 * @param {string} [o.resource] the upstream MCP server's resource URL
 * @param {string} [o.scope]
 * @param {string} [o.client='gateway-exchange']
 * @param {string} [o.secret] default `<client>-secret`
 */
export function idJag({
  issuer, subjectToken, audience, resource, scope, client = EXCHANGE_CLIENT.id, secret, auth,
}) {
  return exchangeToken({
    issuer, client, secret, subjectToken, resource, scope, audience, auth,
    requestedTokenType: ID_JAG.tokenType,
  });
}

/**
 * Leg 2: RFC 7523 jwt-bearer grant at the upstream's authorization server (`issuer`, started
 * with --trust-id-jag): the ID-JAG (assertion) for an access token. Resolves to the token
 * response ({access_token, token_type, expires_in, scope?}) or to the OAuth error.
 * @param {object} o
 * @param {string} o.issuer
 * @param {string} o.assertion
 * @param {string} [o.client='gateway-exchange']
 * @param {string} [o.secret] default `<client>-secret`
 * @param {string} [o.scope] a narrower scope than the ID-JAG's
 * @param {'basic'|'post'} [o.auth='basic']
 */
export async function jwtBearer({
  issuer, assertion, client = EXCHANGE_CLIENT.id, secret = secretFor(client), scope, auth = 'basic',
}) {
  const md = await discover(issuer);
  const form = { grant_type: JWT_BEARER.grantType, assertion, scope };
  const headers = {};
  if (auth === 'post') Object.assign(form, { client_id: client, client_secret: secret });
  else headers.Authorization = basic(client, secret);
  try {
    return await postForm(md.token_endpoint, form, headers, 'token (jwt-bearer)');
  } catch (e) {
    if (e.body && typeof e.body === 'object' && typeof e.body.error === 'string') return e.body;
    throw e;
  }
}

/**
 * A free loopback TCP port (bound to port 0, then released): for servers that must know each
 * other's URL before either starts (an ID-JAG issuer and the authorization server trusting it).
 */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** RFC 7662 introspection as the gateway's client; returns the raw response object. */
export async function introspect({
  issuer, token, client = GATEWAY_CLIENT.id, secret = secretFor(client), auth = 'basic',
  tokenTypeHint,
}) {
  const md = await discover(issuer);
  const form = { token, token_type_hint: tokenTypeHint };
  const headers = {};
  if (auth === 'post') Object.assign(form, { client_id: client, client_secret: secret });
  else headers.Authorization = basic(client, secret);
  return postForm(md.introspection_endpoint, form, headers, 'introspection');
}

/** RFC 7009 revocation as the gateway's client; resolves to { revoked: true }. */
export async function revokeToken({
  issuer, token, client = GATEWAY_CLIENT.id, secret = secretFor(client), tokenTypeHint,
}) {
  const md = await discover(issuer);
  const body = new URLSearchParams({ token });
  if (tokenTypeHint) body.set('token_type_hint', tokenTypeHint);
  const res = await request(md.revocation_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(client, secret) },
    body,
  });
  if (res.status !== 200) await jsonOf(res, 'revocation'); // throws with the error
  else await res.arrayBuffer();
  return { revoked: true };
}

/** Dynamic client registration (RFC 7591); returns the registration response. */
export async function registerClient({ issuer, metadata }) {
  const md = await discover(issuer);
  const res = await request(md.registration_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(metadata),
  });
  return jsonOf(res, 'registration');
}

/**
 * GET /_stats → { introspections, tokens, jwks, exchanges, id_jags, jwt_bearer, refreshes, revocations,
 * exchanges_by_subject, jwt_bearer_by_subject }
 */
export async function stats({ issuer }) {
  return jsonOf(await request(`${issuer}/_stats`), '_stats');
}

/** GET /_exchanges → the token exchanges since start or reset, oldest first. */
export async function exchanges({ issuer }) {
  return (await jsonOf(await request(`${issuer}/_exchanges`), '_exchanges')).exchanges;
}

/** POST /_stats/reset */
export async function resetStats({ issuer }) {
  return jsonOf(await request(`${issuer}/_stats/reset`, { method: 'POST' }), '_stats/reset');
}

/** POST /_fault: mode none|hang|500|garbage|slow|reset; delayMs for slow (default 2000). */
export async function setFault({ issuer, introspection = 'none', delayMs }) {
  const body = { introspection };
  if (delayMs !== undefined) body.delay_ms = delayMs;
  return jsonOf(await request(`${issuer}/_fault`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  }), '_fault');
}

/**
 * Start server.mjs as a child process and wait for its ready line.
 * @param {object} o
 * @param {string[]} o.resources
 * @param {number} [o.port=0]
 * @param {string[]} [o.args] extra command-line arguments
 * @param {number} [o.timeoutMs=15000]
 * @returns {Promise<{issuer: string, port: number, child, stderr: () => string,
 *   stop: () => Promise<number|null>}>}
 */
export function spawnIdp({
  resources, port = 0, host = '127.0.0.1', args = [], timeoutMs = 15000, quiet = true,
}) {
  const argv = [SERVER_PATH, '--port', String(port), '--host', host];
  for (const r of resources) argv.push('--resource', r);
  if (quiet) argv.push('--quiet');
  argv.push(...args);
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise((resolve) => {
    child.once('exit', (code, sig) => resolve(code ?? sig));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    const r = await exited;
    clearTimeout(t);
    return r;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`idp not ready after ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^ready (\S+)\n/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          issuer: m[1],
          port: Number(new URL(m[1]).port),
          child,
          exited,
          stderr: () => err,
          stop,
        });
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`idp exited (${code}) before ready: ${err}`));
    });
  });
}
