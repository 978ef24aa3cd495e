// Sign-in for the console and webmcp.html: OAuth 2.1 authorization code + PKCE (S256) as a
// public client, with the RFC 8707 resource indicator, redirecting back to the page.
//
// Discovery starts from the gateway: the 401 of /mcp names its protected-resource metadata
// (RFC 9728) and the scopes to ask for; the gateway mirrors its authorization server's
// metadata (RFC 8414). The client is registered dynamically (RFC 7591) when the server
// offers it, else <meta name="mcpgate-client-id"> names one.
//
// The access token lives in this module's memory only: never in localStorage,
// sessionStorage, a cookie or a URL. What must survive the trip to the authorization
// server (state, the PKCE verifier, the client id, what to do on return) is kept in
// sessionStorage for that trip and removed on return. The code comes back in the address's
// fragment when the server offers that (so it never reaches the web server or its logs),
// else in its query, and is taken out of the address bar at once.

const PENDING = 'mcpgate.signin';
const CLIENTS = 'mcpgate.clients';

let token = null; // { access, scope, expires }

export const accessToken = () => (token && Date.now() < token.expires ? token.access : null);
export const grantedScope = () => (token ? token.scope : '');
export function signOut() { token = null; }

// A WWW-Authenticate: Bearer challenge's parameters ({ error, scope, resource_metadata, ... }).
export function parseChallenge(header) {
  const out = {};
  if (!header || !/^\s*bearer\b/i.test(header)) return out;
  const re = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (let m; (m = re.exec(header));) out[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  return out;
}

// fetch() of the MCP endpoint; a network failure from another origin is most likely the
// gateway refusing this page's origin (its CORS preflight answers 403), and says so.
export async function fetchEndpoint(endpoint, init) {
  try {
    return await fetch(endpoint, { credentials: 'omit', ...init });
  } catch (e) {
    const there = new URL(endpoint).origin;
    if (there !== location.origin) {
      throw new Error(`${endpoint} could not be reached from this page (${e.message}). The gateway accepts `
        + `browser requests only from its own origin (${there}) and the origins in [gateway] allowed-origins; `
        + `this page is at ${location.origin}.`);
    }
    throw e;
  }
}

async function getJson(url, log) {
  const res = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'omit' });
  log?.({ kind: 'http', method: 'GET', url: String(url), status: res.status });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return res.json();
}

function b64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
const randomString = () => b64url(crypto.getRandomValues(new Uint8Array(32)));

// The page's own address: where the authorization server sends the visitor back.
export const redirectUri = () => location.origin + location.pathname;

// Everything sign-in needs to know, from the MCP endpoint: { resource, scopes, as }.
// challengeScope: the scope a 401 or an insufficient_scope 403 named, if known.
export async function discover(endpoint, log) {
  const probe = await fetchEndpoint(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
  });
  log?.({ kind: 'http', method: 'POST', url: String(endpoint), status: probe.status, note: 'without a token' });
  if (probe.status !== 401) {
    const body = await probe.json().catch(() => ({}));
    let why = `${endpoint} answered ${probe.status} ${body.error || ''} without a token, not 401`;
    if (body.error === 'forbidden_origin') {
      why = `${endpoint} refuses this page's origin (${location.origin}): 403 forbidden_origin. The gateway accepts `
        + 'browser requests only from the origin of its resource and from [gateway] allowed-origins.';
    }
    throw new Error(why);
  }
  const ch = parseChallenge(probe.headers.get('WWW-Authenticate'));
  const prmUrl = ch.resource_metadata
    || new URL(`/.well-known/oauth-protected-resource${new URL(endpoint).pathname}`, endpoint).href;
  const prm = await getJson(prmUrl, log);
  const issuer = prm.authorization_servers?.[0];
  if (!issuer) throw new Error('the protected-resource metadata names no authorization server');
  // The gateway's mirror first (same origin); the issuer's own RFC 8414 document otherwise.
  let as = null;
  try {
    as = await getJson(new URL('/.well-known/oauth-authorization-server', endpoint), log);
  } catch { /* fall through */ }
  if (!as || as.issuer !== issuer) {
    const iu = new URL(issuer);
    as = await getJson(new URL(`/.well-known/oauth-authorization-server${iu.pathname.replace(/\/$/, '')}`, iu), log);
  }
  if (as.issuer !== issuer) throw new Error(`the authorization server calls itself ${as.issuer}, not ${issuer}`);
  if (!(as.code_challenge_methods_supported || []).includes('S256')) {
    throw new Error('the authorization server does not offer PKCE with S256');
  }
  // What sign-in talks to from now on: the gateway, its metadata, the issuer and its endpoints.
  const connect = [endpoint, prmUrl, prm.resource, issuer, as.token_endpoint, as.registration_endpoint];
  narrowConnect(connect);
  return { connect, resource: prm.resource, scopes: ch.scope || (prm.scopes_supported || []).join(' '), prm, as };
}

// Once the page knows whom it talks to (found, or back from signing in), it may connect to
// them alone: the gateway and its metadata, its issuer and the authorization server's
// token and registration endpoints. The policy the
// page was served with allows any http(s) origin (the issuer is not known before); one
// added to the page can only narrow it, never widen it, so a script that found its way
// into the page cannot send a token anywhere else afterwards.
function narrowConnect(urls) {
  const origins = new Set(["'self'"]);
  for (const u of urls) if (u) origins.add(new URL(u).origin);
  const meta = document.createElement('meta');
  meta.httpEquiv = 'Content-Security-Policy';
  meta.content = `connect-src ${[...origins].join(' ')}`;
  document.head.append(meta);
}

async function clientId(as, scope, log) {
  const key = `${as.issuer} ${redirectUri()}`;
  const known = JSON.parse(sessionStorage.getItem(CLIENTS) || '{}');
  if (known[key]) return known[key];
  const meta = document.querySelector('meta[name="mcpgate-client-id"]')?.content;
  if (!as.registration_endpoint) {
    if (meta) return meta;
    throw new Error('the authorization server offers no dynamic registration and the page names no client id');
  }
  let res;
  try {
    res = await fetch(as.registration_endpoint, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({
        client_name: `MCP gateway console (${location.host})`,
        redirect_uris: [redirectUri()],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope,
      }),
    });
  } catch (e) {
    // Registration not open to browser pages (no CORS): the page's own client, if any.
    if (meta) return meta;
    throw new Error(`the authorization server's registration endpoint cannot be reached from this page (${e.message}): `
      + 'register a public client for it and name it in <meta name="mcpgate-client-id">');
  }
  log?.({ kind: 'http', method: 'POST', url: as.registration_endpoint, status: res.status, note: 'client registration' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || !body.client_id) throw new Error(`client registration failed: ${res.status} ${body.error || ''} ${body.error_description || ''}`);
  known[key] = body.client_id;
  sessionStorage.setItem(CLIENTS, JSON.stringify(known));
  return body.client_id;
}

// Off to the authorization server. after: what the page does on return (JSON-able).
export async function signIn(info, { scope, after = null, prompt = null, log } = {}) {
  const want = scope || info.scopes;
  const id = await clientId(info.as, want, log);
  const verifier = randomString();
  const state = randomString();
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({
    state, verifier, clientId: id, issuer: info.as.issuer, tokenEndpoint: info.as.token_endpoint,
    connect: info.connect.filter(Boolean).map(String), resource: info.resource, redirectUri: redirectUri(), after,
  }));
  const u = new URL(info.as.authorization_endpoint);
  const q = {
    response_type: 'code', client_id: id, redirect_uri: redirectUri(), scope: want, state,
    code_challenge: challenge, code_challenge_method: 'S256', resource: info.resource,
  };
  // The code in the fragment, when offered, never reaches the web server (nor its logs).
  if ((info.as.response_modes_supported || []).includes('fragment')) q.response_mode = 'fragment';
  if (prompt) q.prompt = prompt;
  for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
  location.assign(u.href);
}

// Back from the authorization server? null when this load is not a return; else
// { after } once the token is held, or throws with what went wrong.
export async function completeSignIn(log) {
  const frag = new URLSearchParams(location.hash.slice(1));
  const q = frag.has('state') ? frag : new URLSearchParams(location.search);
  if (!q.has('state') || (!q.has('code') && !q.has('error'))) return null;
  history.replaceState(null, '', redirectUri());
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  if (!pending || q.get('state') !== pending.state) throw new Error('sign-in answer without a matching request (state): sign in again');
  if (q.has('iss') && q.get('iss') !== pending.issuer) throw new Error(`sign-in answer from ${q.get('iss')}, not ${pending.issuer}`);
  if (q.has('error')) throw new Error(`sign-in refused: ${q.get('error')} ${q.get('error_description') || ''}`.trim());
  narrowConnect(pending.connect || [pending.issuer, pending.tokenEndpoint]);
  const res = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    credentials: 'omit',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: q.get('code'), redirect_uri: pending.redirectUri,
      client_id: pending.clientId, code_verifier: pending.verifier, resource: pending.resource,
    }),
  });
  log?.({ kind: 'http', method: 'POST', url: pending.tokenEndpoint, status: res.status, note: 'code for a token' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || !body.access_token) throw new Error(`token request failed: ${res.status} ${body.error || ''} ${body.error_description || ''}`);
  token = {
    access: body.access_token,
    scope: body.scope || '',
    expires: Date.now() + 1000 * (Number(body.expires_in) > 0 ? Number(body.expires_in) : 3600),
  };
  return { after: pending.after };
}
