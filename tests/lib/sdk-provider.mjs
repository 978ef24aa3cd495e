// tests/lib/sdk-provider.mjs — what the suites that drive the official MCP SDK client
// (@modelcontextprotocol/sdk) through its OAuth flow share:
//
//   FetchLog       wraps globalThis.fetch and keeps every request the process makes (the
//                  SDK calls fetch with redirect: 'manual', so each redirect hop is an
//                  entry of its own), tagged by phase, with a per-request time limit; it
//                  knows the secrets seen so far and prints the log with them redacted.
//   MemoryProvider an in-memory OAuthClientProvider for authorization code + PKCE with
//                  dynamic client registration, whose "browser" is the test IdP's
//                  headless login (followAuthorization of tests/idp/lib.mjs, no cookies).
//
//   const flog = new FetchLog().install();
//   const provider = new MemoryProvider({ redirectUri, clientName, onSecret: flog.secret,
//     aroundLogin: (fn) => flog.tagged('login', fn) });
//
// Used by tests/auth/sdk-discovery.mjs and tests/policy/sdk-stepup.mjs.

import crypto from 'node:crypto';

import { followAuthorization } from '../idp/lib.mjs';

function bodyText(body) {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return Buffer.from(body).toString('utf8');
  return `[${Object.prototype.toString.call(body)}]`;
}

/**
 * The fetch log. Entries: {i, method, url, reqHeaders (Headers), body (text), tag,
 * status?, resHeaders?, text? (bodies of successful GETs of /.well-known/ documents),
 * error?}. `tag` is the phase a request belongs to: set `flog.tag`, or run a function
 * under a tag with `flog.tagged(tag, fn)` (or `flog.attempt(tag, fn)`, which catches).
 */
export class FetchLog {
  constructor({ timeoutMs = 10000 } = {}) {
    this.entries = [];
    this.tag = '';
    this.timeoutMs = timeoutMs;
    this.secrets = new Map(); // value → label, redacted from every printed line
    this.realFetch = undefined;
    this.secret = this.secret.bind(this);
    this.redact = this.redact.bind(this);
  }

  /** Replace globalThis.fetch with the logging wrapper; returns this. */
  install() {
    const realFetch = globalThis.fetch;
    const self = this;
    this.realFetch = realFetch;
    globalThis.fetch = async function loggedFetch(input, init = {}) {
      const isReq = typeof Request !== 'undefined' && input instanceof Request;
      const url = isReq ? input.url : String(input);
      const method = (init.method ?? (isReq ? input.method : 'GET')).toUpperCase();
      const reqHeaders = new Headers(isReq ? input.headers : undefined);
      for (const [k, v] of new Headers(init.headers ?? {})) reqHeaders.set(k, v);
      const entry = { i: self.entries.length + 1, method, url, reqHeaders, body: bodyText(init.body), tag: self.tag };
      self.entries.push(entry);
      const timeout = AbortSignal.timeout(self.timeoutMs);
      const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
      try {
        const res = await realFetch(input, { ...init, signal });
        entry.status = res.status;
        entry.resHeaders = res.headers;
        // Keep the metadata documents the client was served, to check them as it saw them.
        if (method === 'GET' && url.includes('/.well-known/') && res.ok) entry.text = await res.clone().text();
        return res;
      } catch (e) {
        entry.error = e?.name === 'TimeoutError' ? `timed out after ${self.timeoutMs} ms` : String(e?.cause?.code ?? e?.message ?? e);
        throw e;
      }
    };
    return this;
  }

  /** Run fn with every request it makes tagged `tag`. */
  async tagged(tag, fn) {
    const saved = this.tag;
    this.tag = tag;
    try {
      return await fn();
    } finally {
      this.tag = saved;
    }
  }

  /** Run fn as tagged() does: { value } with what it returned, or { error } with what it threw. */
  async attempt(tag, fn) {
    try {
      return { value: await this.tagged(tag, fn) };
    } catch (error) {
      return { error };
    }
  }

  /** Remember a secret (a token, a code, ...): printed lines show <label> instead. */
  secret(value, label) {
    if (value) this.secrets.set(String(value), label);
  }

  redact(s) {
    let out = String(s);
    for (const [v, label] of this.secrets) out = out.split(v).join(`<${label}>`);
    return out.replace(/([?&](?:code|access_token|refresh_token)=)[^&#\s]+/g, '$1<redacted>');
  }

  /** Print the log through diag (one call per line), secrets redacted. */
  print(diag, title = 'fetch log') {
    diag(`${title}, tokens and codes redacted:`);
    for (const e of this.entries) {
      const auth = e.reqHeaders.get('authorization');
      const authNote = auth ? ` [Authorization: ${auth.split(' ')[0]} …]` : '';
      const res = e.error ? `error: ${e.error}` : String(e.status);
      const loc = e.resHeaders?.get('location');
      const www = e.resHeaders?.get('www-authenticate');
      diag(`${String(e.i).padStart(2)} ${e.tag ? `[${e.tag}] ` : ''}${e.method} ${this.redact(e.url)}${authNote} → ${res}`
        + `${loc ? ` Location: ${this.redact(loc)}` : ''}${www ? ` WWW-Authenticate: ${this.redact(www)}` : ''}`);
    }
  }
}

/**
 * An in-memory OAuthClientProvider (the SDK's interface) for a public client: dynamic
 * registration, authorization code + PKCE, no client secret.
 *
 * Options: redirectUri (never contacted: the headless login stops at it), clientName,
 * grantTypes (registered; default ['authorization_code']: without 'refresh_token' the
 * server issues no refresh token, so the SDK authorizes anew where it would otherwise
 * refresh), onSecret(value, label) (called for every secret the provider receives),
 * aroundLogin(fn) (runs the headless login, e.g. to tag its requests), tokens and
 * clientInformation (start with these, as if saved earlier).
 *
 * What happened: events (names of the provider calls that save or redirect, in order),
 * authorizationUrl / callback / code of the last authorization (callback: the
 * redirect_uri URL reached, with code, state and iss), and authorizations, every one of
 * them as {url, callback, code}.
 */
export class MemoryProvider {
  constructor({
    redirectUri, clientName = 'mcpgate tests', grantTypes = ['authorization_code'],
    onSecret = () => {}, aroundLogin = (fn) => fn(), tokens, clientInformation,
  } = {}) {
    if (!redirectUri) throw new TypeError('MemoryProvider needs a redirectUri');
    this._redirectUri = redirectUri;
    this._clientName = clientName;
    this._grantTypes = [...grantTypes];
    this._onSecret = onSecret;
    this._aroundLogin = aroundLogin;
    this.events = [];
    this._client = clientInformation;
    this._tokens = tokens;
    this._verifier = undefined;
    this._state = undefined;
    this.authorizationUrl = undefined;
    this.callback = undefined;
    this.code = undefined;
    this.authorizations = [];
  }

  get redirectUrl() {
    return this._redirectUri;
  }

  get clientMetadata() {
    return {
      client_name: this._clientName,
      redirect_uris: [this._redirectUri],
      grant_types: [...this._grantTypes],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this._state = crypto.randomBytes(16).toString('base64url');
    return this._state;
  }

  clientInformation() {
    return this._client;
  }

  saveClientInformation(info) {
    this.events.push('saveClientInformation');
    this._client = info;
    this._onSecret(info.client_secret, 'client_secret');
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this.events.push('saveTokens');
    this._tokens = tokens;
    this._onSecret(tokens.access_token, 'access_token');
    this._onSecret(tokens.refresh_token, 'refresh_token');
  }

  saveCodeVerifier(v) {
    this.events.push('saveCodeVerifier');
    this._verifier = v;
    this._onSecret(v, 'code_verifier');
  }

  codeVerifier() {
    if (!this._verifier) throw new Error('no code verifier saved');
    return this._verifier;
  }

  // Headless "browser": the IdP's redirects followed by hand with no cookie jar (the test
  // IdP remembers the one-interaction cookies of cookie-less clients), up to the
  // redirect_uri, which is not contacted.
  async redirectToAuthorization(url) {
    this.events.push('redirectToAuthorization');
    const record = { url: new URL(url), callback: undefined, code: undefined };
    this.authorizations.push(record);
    this.authorizationUrl = record.url;
    this.callback = undefined;
    this.code = undefined;
    const final = await this._aroundLogin(() => followAuthorization(record.url.href, this._redirectUri, { jar: null }));
    record.callback = new URL(final);
    record.code = record.callback.searchParams.get('code') ?? undefined;
    this._onSecret(record.code, 'code');
    this.callback = record.callback;
    this.code = record.code;
  }
}
