// The test authorization server: oidc-provider configured for mcpgate's tests, behind a small
// node:http front that adds a headless interaction, request counters and fault switches.
// server.mjs is the command line around createIdp(); see README.md for the why of each setting.

import crypto from 'node:crypto';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

import {
  ACCOUNTS, DEFAULT_ACCESS_TOKEN_TTL, GATEWAY_CLIENT, MACHINE_CLIENTS, RESOURCE_SCOPES, SCOPES,
  staticClients, TOKEN_EXCHANGE,
} from './fixtures.mjs';
import { actorOf, registerTokenExchange } from './exchange.mjs';
import { registerJwtBearer } from './jwtbearer.mjs';
import { createStore } from './store.mjs';

export const FAULTS = Object.freeze(['none', 'hang', '500', 'garbage', 'slow', 'reset', 'far-exp', 'huge', 'cut']);
// Faults of the JWK set endpoint (GET /jwks): POST /_fault/jwks {"jwks": MODE}.
export const JWKS_FAULTS = Object.freeze(['none', 'hang', '500', 'garbage', 'huge', 'no-keys', 'empty']);
// Faults of the token exchange grant (POST /token with the token-exchange grant_type
// only; every other grant is served): POST /_fault/exchange {"exchange": MODE}.
export const EXCHANGE_FAULTS = Object.freeze(['none', 'hang', '500', 'garbage']);
const SLOW_MS = 2000;
const EXCHANGE_LOG = 1000; // token exchanges GET /_exchanges remembers
// --cimd: a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document) is
// fetched within this time and read up to this size (the draft's suggested 5 KB).
export const CLIENT_DOCUMENT_TIMEOUT_MS = 5000;
export const CLIENT_DOCUMENT_MAX_BYTES = 5120;
const CLIENT_DOCUMENT_IDS = 100; // distinct document URLs GET /_stats names

const ROUTES = Object.freeze({
  authorization: '/auth',
  token: '/token',
  introspection: '/token/introspection',
  revocation: '/token/revocation',
  registration: '/reg',
});

function epoch() {
  return Math.floor(Date.now() / 1000);
}

function claimsOf(entry) {
  const out = {};
  if (entry?.groups?.length) out.groups = [...entry.groups];
  if (entry?.tenant !== undefined) out.tenant = entry.tenant;
  return out;
}

function sendJson(res, status, body, extraHeaders = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...extraHeaders,
  });
  res.end(text);
}

function readBody(req, limit = 65536) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
      } else {
        chunks.push(c);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export const JWT_ALGS = Object.freeze(['RS256', 'PS256', 'ES256']);
export const TOKEN_FORMATS = Object.freeze(['opaque', 'jwt']);
// The grants whose access tokens --access-ttl (POST /_ttl) sets the lifetime of.
const USER_GRANTS = Object.freeze(['authorization_code', 'refresh_token']);
const MAX_TTL = 24 * 3600;
const validTtl = (s) => Number.isSafeInteger(s) && s >= 1 && s <= MAX_TTL;

// The JSON object of a test-control request's body ({} when empty); undefined, with a 400
// sent, when it is not JSON.
async function readJson(req, res) {
  try {
    return JSON.parse((await readBody(req)) || '{}');
  } catch {
    sendJson(res, 400, { error: 'invalid_request', error_description: 'body must be JSON' });
    return undefined;
  }
}

// A 200 whose body is text (a fault: garbage where JSON is expected).
function sendRaw(res, text) {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function makeJwks() {
  // Own signing keys (ID tokens, JWT access tokens) so that oidc-provider does not fall
  // back to its published development keystore. The kids are new at every start: a
  // restart on the same port is a key rotation (JWT access tokens name their key).
  const tag = crypto.randomBytes(4).toString('hex');
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    .export({ format: 'jwk' });
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    .export({ format: 'jwk' });
  // The RSA key signs RS256 and PS256 (no `alg` on it: oidc-provider picks a key by alg).
  return {
    keys: [
      { ...rsa, kid: `rsa-${tag}`, use: 'sig' },
      { ...ec, kid: `ec-${tag}`, use: 'sig', alg: 'ES256' },
    ],
  };
}

const b64url = (b) => Buffer.from(b).toString('base64url');

/**
 * A compact JWS of header and payload (test tokens the provider would never issue: another
 * issuer, expired, not yet valid, unsigned, HMAC-signed with the public key, ...).
 * key: 'rsa' or 'ec' (the provider's own keys; alg RS256/PS256 or ES256 unless the header
 * says otherwise), 'none' (alg none, empty signature), 'hmac-public' (HS256 whose secret is
 * the RSA public key in PEM: the algorithm-confusion attack), or 'other-rsa' (a key the
 * provider does not publish, under the header's kid).
 */
function signJws(jwks, { header = {}, payload = {}, key = 'rsa' }) {
  const rsa = jwks.keys.find((k) => k.kty === 'RSA');
  const ec = jwks.keys.find((k) => k.kty === 'EC');
  const h = { typ: 'at+jwt', ...header };
  let sign;
  if (key === 'none') {
    h.alg = 'none';
    sign = () => '';
  } else if (key === 'hmac-public') {
    const pem = crypto.createPublicKey({ key: { kty: 'RSA', n: rsa.n, e: rsa.e }, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' });
    h.alg = 'HS256';
    h.kid ??= rsa.kid;
    sign = (input) => b64url(crypto.createHmac('sha256', pem).update(input).digest());
  } else {
    const jwk = key === 'ec' ? ec : key === 'other-rsa' ? otherRsa() : rsa;
    const priv = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
    h.alg ??= key === 'ec' ? 'ES256' : 'RS256';
    h.kid ??= jwk.kid;
    const hash = `sha${h.alg.slice(2)}`;
    sign = (input) => b64url(crypto.sign(hash, Buffer.from(input), {
      key: priv,
      dsaEncoding: 'ieee-p1363',
      ...(h.alg.startsWith('PS') ? { padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : {}),
    }));
  }
  const input = `${b64url(JSON.stringify(h))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${sign(input)}`;
}

let otherKey;
function otherRsa() {
  otherKey ??= { ...crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'not-published' };
  return otherKey;
}

/**
 * A client_id that names a Client ID Metadata Document this server fetches (--cimd): an
 * http(s) URL on a loopback host (127.x.x.x, localhost, [::1]), written as the URL parser
 * writes it back, without credentials or fragment. Any other client_id is looked up as
 * usual (unknown: "client is invalid").
 */
export function isClientDocumentUrl(id) {
  const u = typeof id === 'string' ? URL.parse(id) : null;
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password || u.hash || u.href !== id) return false;
  return u.hostname === 'localhost' || u.hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(u.hostname);
}

/**
 * The client metadata of the Client ID Metadata Document at id (a URL isClientDocumentUrl
 * takes): fetched (no redirect followed, CLIENT_DOCUMENT_TIMEOUT_MS, CLIENT_DOCUMENT_MAX_BYTES),
 * a JSON object whose client_id is id; the client is a public one (token_endpoint_auth_method
 * none) with exactly the document's redirect_uris, grant_types and response_types (and its
 * client_name). Throws an Error saying why a document is refused.
 */
export async function fetchClientDocument(id) {
  let res;
  try {
    res = await fetch(id, {
      redirect: 'manual', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(CLIENT_DOCUMENT_TIMEOUT_MS),
    });
  } catch (e) {
    throw new Error(`fetching it failed: ${e.cause?.message || e.message}`);
  }
  const cancel = () => res.body?.cancel().catch(() => {});
  if (res.status !== 200) {
    cancel();
    throw new Error(`it answered HTTP ${res.status}, not 200`);
  }
  if (Number(res.headers.get('content-length')) > CLIENT_DOCUMENT_MAX_BYTES) {
    cancel();
    throw new Error(`it is larger than ${CLIENT_DOCUMENT_MAX_BYTES} bytes`);
  }
  const chunks = [];
  let size = 0;
  try {
    for await (const c of res.body ?? []) {
      size += c.length;
      if (size > CLIENT_DOCUMENT_MAX_BYTES) throw new Error(`it is larger than ${CLIENT_DOCUMENT_MAX_BYTES} bytes`);
      chunks.push(c);
    }
  } catch (e) {
    throw e.message.startsWith('it is larger') ? e : new Error(`reading it failed: ${e.cause?.message || e.message}`);
  }
  let doc;
  try {
    doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Error('it is not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('it is not a JSON object');
  if (doc.client_id !== id) throw new Error(`its client_id (${JSON.stringify(doc.client_id)}) is not the URL it was fetched from`);
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
    throw new Error('its token_endpoint_auth_method is not none (only public clients here)');
  }
  if ('client_secret' in doc) throw new Error('it holds a client_secret');
  const strings = (k, dflt) => {
    const v = doc[k] ?? dflt;
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string')) {
      throw new Error(`its ${k} is not a non-empty array of strings`);
    }
    return [...v];
  };
  const meta = {
    client_id: id,
    redirect_uris: strings('redirect_uris'),
    grant_types: strings('grant_types', ['authorization_code']),
    response_types: strings('response_types', ['code']),
    token_endpoint_auth_method: 'none',
  };
  if (typeof doc.client_name === 'string') meta.client_name = doc.client_name;
  return meta;
}

/**
 * Interaction cookies of clients that keep no cookies (a bare fetch following redirects):
 * oidc-provider sets `_interaction` (Path=/interaction/<uid>) and `_interaction_resume`
 * (Path=/auth/<uid>) and refuses to resume an authorization without the latter. We remember
 * what it set for those one-interaction paths and add it to a later request of exactly that
 * path when the client did not send it. Clients that do keep cookies are unaffected.
 */
function createCookieMemory() {
  const byPath = new Map(); // path -> { t, cookies: Map(name -> value) }
  const scoped = /^\/(auth|interaction)\/[A-Za-z0-9_-]+$/;
  return {
    capture(setCookie) {
      for (const line of [].concat(setCookie)) {
        const parts = String(line).split(';').map((s) => s.trim());
        const eq = parts[0].indexOf('=');
        if (eq <= 0) continue;
        const name = parts[0].slice(0, eq);
        const value = parts[0].slice(eq + 1);
        let path = '/';
        let expired = value === '';
        for (const attr of parts.slice(1)) {
          const [k, v = ''] = attr.split('=');
          const key = k.toLowerCase();
          if (key === 'path') path = v;
          if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
          if (key === 'max-age' && Number(v) <= 0) expired = true;
        }
        if (!scoped.test(path)) continue;
        let entry = byPath.get(path);
        if (!entry) {
          entry = { t: Date.now(), cookies: new Map() };
          byPath.set(path, entry);
        }
        if (expired) entry.cookies.delete(name);
        else entry.cookies.set(name, value);
      }
    },
    inject(req, pathname) {
      const entry = byPath.get(pathname);
      if (!entry || entry.cookies.size === 0) return false;
      const present = new Set((req.headers.cookie || '').split(';')
        .map((s) => s.trim().split('=')[0]).filter(Boolean));
      const add = [...entry.cookies].filter(([n]) => !present.has(n)).map(([n, v]) => `${n}=${v}`);
      if (!add.length) return false;
      req.headers.cookie = [req.headers.cookie, ...add].filter(Boolean).join('; ');
      return true;
    },
    sweep(maxAgeMs) {
      const limit = Date.now() - maxAgeMs;
      for (const [p, e] of byPath) if (e.t < limit) byPath.delete(p);
    },
  };
}

/**
 * Start the authorization server.
 * @param {object} o
 * @param {string[]} o.resources resource indicators; [0] is the default (the gateway)
 * @param {number} [o.port=0] 0 = any free port
 * @param {string} [o.host='127.0.0.1']
 * @param {string} [o.defaultUser='alice'] account logged in when there is no login_hint
 * @param {boolean} [o.strictCookies=false] true: no cookie help for cookie-less clients
 * @param {boolean} [o.loginPages=false] true: oidc-provider's own login and consent pages
 *   (devInteractions, for a browser) instead of the headless interaction
 * @param {string[]} [o.headlessClients] with loginPages: the clients whose authorizations
 *   still go through the headless interaction (token.mjs's `cli`, minting a caller's token
 *   while a browser signs in on the pages)
 * @param {string[]} [o.idJagAudiences] authorization servers (issuer URLs) ID-JAGs may be
 *   issued for (token exchange with requested_token_type id-jag)
 * @param {string[]} [o.trustIdJag] issuers whose ID-JAGs the jwt-bearer grant redeems
 *   (none: no jwt-bearer grant)
 * @param {number} [o.accessTtl] the lifetime (seconds) of the access tokens the
 *   authorization_code and refresh_token grants issue (default: DEFAULT_ACCESS_TOKEN_TTL);
 *   POST /_ttl changes it at run time
 * @param {boolean} [o.cimd=false] true: client_id_metadata_document_supported, and a
 *   client_id that is an http(s) URL on a loopback host is the URL of the client's Client
 *   ID Metadata Document, fetched when the client is looked up (fetchClientDocument)
 * @param {boolean} [o.registration=true] false: no dynamic client registration (no
 *   registration_endpoint)
 * @param {(msg: string) => void} [o.log] diagnostics (stderr in server.mjs)
 * @param {(msg: string) => void} [o.logError] internal errors (default: stderr)
 * @returns {Promise<{issuer, port, host, provider, server, stats, resetStats, setFault,
 *   fault, close}>}
 */
export async function createIdp({
  resources, port = 0, host = '127.0.0.1', defaultUser = 'alice', strictCookies = false,
  tokenFormat = 'opaque', jwtAlg = 'RS256', introspection = true,
  loginPages = false, headlessClients = [], idJagAudiences = [], trustIdJag = [], accessTtl,
  cimd = false, registration = true,
  log = () => {}, logError = (m) => process.stderr.write(`idp: ${m}\n`),
} = {}) {
  if (!Array.isArray(resources) || resources.length === 0) {
    throw new TypeError('at least one resource is required');
  }
  for (const r of resources) {
    const u = URL.parse(r);
    if (!u || u.hash) throw new TypeError(`resource must be an absolute URI without fragment: ${r}`);
  }
  if (!(defaultUser in ACCOUNTS)) throw new TypeError(`unknown default user: ${defaultUser}`);
  if (!TOKEN_FORMATS.includes(tokenFormat)) throw new TypeError(`unknown token format: ${tokenFormat}`);
  if (!JWT_ALGS.includes(jwtAlg)) throw new TypeError(`unknown JWT algorithm: ${jwtAlg}`);
  if (accessTtl !== undefined && !validTtl(accessTtl)) throw new TypeError(`access TTL must be 1 to ${MAX_TTL} seconds: ${accessTtl}`);
  for (const u of [...idJagAudiences, ...trustIdJag]) {
    const p = URL.parse(u);
    if (!p || !/^https?:$/.test(p.protocol) || p.search || p.hash) {
      throw new TypeError(`an authorization server's issuer must be an http(s) URL without query or fragment: ${u}`);
    }
  }
  // Access tokens: opaque (introspected) or JWT (RFC 9068, signed with jwtAlg); POST
  // /_format switches both at run time.
  let format = { tokenFormat, jwtAlg };
  // The lifetime of the access tokens of people's grants (authorization_code and
  // refresh_token; undefined: DEFAULT_ACCESS_TOKEN_TTL): a client's token that needs a
  // refresh soon, or at once. POST /_ttl changes it.
  let userAccessTtl = accessTtl;

  let handler = (req, res) => sendJson(res, 503, { error: 'temporarily_unavailable' });
  const server = http.createServer((req, res) => handler(req, res));
  // Node's defaults are kept on purpose (keepAliveTimeout 5 s): the gateway must cope with
  // an authorization server that closes idle keep-alive connections.
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = server.address().port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const issuer = `http://${urlHost}:${actualPort}`;

  const store = createStore();
  const cookieMemory = createCookieMemory();
  const counters = {
    introspections: 0, tokens: 0, jwks: 0, exchanges: 0, id_jags: 0, jwt_bearer: 0, refreshes: 0, revocations: 0,
    registrations: 0, client_documents: 0,
  };
  // Clients registered (DCR) and Client ID Metadata Documents accepted (--cimd): their
  // client_ids, oldest first (the last CLIENT_DOCUMENT_IDS distinct ones of the latter).
  const registeredClients = [];
  const clientDocumentIds = [];
  // Token exchanges (RFC 8693): tokens issued per subject (user name, or client_id of a
  // machine token), and the last EXCHANGE_LOG of them, with their audience parameter.
  const exchangesBySubject = new Map();
  const exchangeLog = [];
  // Tokens issued by the jwt-bearer grant (ID-JAGs redeemed), per subject.
  const jwtBearerBySubject = new Map();
  const statsOf = () => ({
    ...counters,
    exchanges_by_subject: Object.fromEntries(exchangesBySubject),
    jwt_bearer_by_subject: Object.fromEntries(jwtBearerBySubject),
    registered_clients: [...registeredClients],
    client_document_ids: [...clientDocumentIds],
  });
  function resetCounters() {
    for (const k of Object.keys(counters)) counters[k] = 0;
    registeredClients.length = 0;
    clientDocumentIds.length = 0;
    exchangesBySubject.clear();
    jwtBearerBySubject.clear();
    exchangeLog.length = 0;
  }
  let fault = { introspection: 'none', delayMs: SLOW_MS };
  let jwksFault = 'none';
  let exchangeFault = 'none';
  const hanging = new Set();

  // Resource indicators are matched exactly, or after URL normalisation (so that
  // "http://h:1/mcp" and "HTTP://h:1/mcp" name the same server); the audience is always the
  // configured spelling, byte for byte.
  const resourceByHref = new Map(resources.map((r) => [URL.parse(r).href, r]));
  const findResource = (indicator) => (resources.includes(indicator)
    ? indicator : resourceByHref.get(URL.parse(indicator)?.href));
  // What oidc-provider is told of a resource server (getResourceServerInfo); the token
  // exchange asks the same.
  function resourceServerInfo(ctx, indicator, client) {
    const audience = findResource(indicator);
    if (!audience) throw new errors.InvalidTarget(`unknown resource: ${indicator}`);
    return {
      audience,
      scope: RESOURCE_SCOPES.join(' '),
      accessTokenFormat: format.tokenFormat,
      ...(format.tokenFormat === 'jwt' ? { jwt: { sign: { alg: format.jwtAlg } } } : {}),
      accessTokenTTL: MACHINE_CLIENTS[client?.clientId]?.accessTokenTTL
        ?? (USER_GRANTS.includes(ctx?.oidc?.params?.grant_type) ? userAccessTtl : undefined)
        ?? DEFAULT_ACCESS_TOKEN_TTL,
    };
  }

  // --cimd: the Client model's lookup of a client_id that is a document's URL (and no
  // stored client) fetches that document, every time (nothing is cached: a changed
  // document counts at once); oidc-provider's own clientIdMetadataDocument feature takes
  // https URLs only, and a gateway under test is http on loopback.
  class Adapter extends store.Adapter {
    async find(id) {
      const found = await super.find(id);
      if (found || !cimd || this.name !== 'Client' || !isClientDocumentUrl(id)) return found;
      let meta;
      try {
        meta = await fetchClientDocument(id);
      } catch (e) {
        log(`client metadata document ${id} refused: ${e.message}`);
        throw new errors.InvalidClient(`client_id metadata document refused: ${e.message}`);
      }
      counters.client_documents += 1;
      if (!clientDocumentIds.includes(id)) {
        clientDocumentIds.push(id);
        if (clientDocumentIds.length > CLIENT_DOCUMENT_IDS) clientDocumentIds.shift();
      }
      log(`client metadata document ${id}: redirect_uris ${meta.redirect_uris.join(' ')}`);
      return meta;
    }
  }

  const jwks = makeJwks();
  const configuration = {
    adapter: Adapter,
    clients: staticClients({ jwtBearer: trustIdJag.length > 0 }),
    jwks,
    cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
    scopes: [...SCOPES],
    claims: { openid: ['sub', 'groups', 'tenant'] },
    // Custom client metadata: the claims of machine tokens. Only static clients may carry
    // them; dynamic registration of these properties is refused (any caller can register).
    extraClientMetadata: {
      properties: ['tenant', 'groups'],
      validator(ctx, key, value, metadata) {
        // A registered `scope` limits what the client may ask for later. The SDK registers
        // with the scopes of its first challenge and, on a step-up 403, asks for more with
        // the same registration: so a dynamically registered client gets every scope.
        if (ctx && key === 'tenant' && metadata.scope !== undefined) {
          metadata.scope = SCOPES.join(' ');
        }
        if (value === undefined) return;
        if (ctx) throw new errors.InvalidClientMetadata(`${key} cannot be registered dynamically`);
        if (key === 'tenant' && typeof value !== 'string') {
          throw new errors.InvalidClientMetadata('tenant must be a string');
        }
        if (key === 'groups' && !(Array.isArray(value) && value.every((g) => typeof g === 'string'))) {
          throw new errors.InvalidClientMetadata('groups must be an array of strings');
        }
      },
    },
    async findAccount(ctx, sub) {
      if (!Object.hasOwn(ACCOUNTS, sub)) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, ...claimsOf(ACCOUNTS[sub]) };
        },
      };
    },
    // groups/tenant on every opaque access token: the account's for user tokens, the client
    // metadata's for client_credentials tokens. They come back in introspection responses.
    // An exchanged token (exchange.mjs) also carries `act`, the client that exchanged it.
    async extraTokenClaims(ctx, token) {
      const act = actorOf(token);
      if (token.accountId) return { ...claimsOf(ACCOUNTS[token.accountId]), ...(act ? { act } : {}) };
      const client = token.client || await provider.Client.find(token.clientId);
      const meta = client?.metadata() || {};
      return { ...claimsOf({ tenant: meta.tenant, groups: meta.groups }), ...(act ? { act } : {}) };
    },
    features: {
      // Replaced by the headless GET /interaction/:uid, unless a browser is to sign in
      // through oidc-provider's own pages (loginPages).
      devInteractions: { enabled: loginPages },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: introspection,
        async allowedPolicy(ctx, client, token) {
          if (client.clientId === GATEWAY_CLIENT.id) return true;
          if (client.clientAuthMethod === 'none') return false;
          // its own tokens, and those it obtained by token exchange (it is their actor)
          return token.clientId === client.clientId || token.extra?.act?.sub === client.clientId;
        },
      },
      revocation: {
        enabled: true,
        async allowedPolicy(ctx, client, token) {
          if (client.clientId === GATEWAY_CLIENT.id) return true;
          return token.clientId === client.clientId || token.extra?.act?.sub === client.clientId;
        },
      },
      registration: { enabled: registration, initialAccessToken: false },
      resourceIndicators: {
        enabled: true,
        async defaultResource(ctx, client, oneOf) {
          return oneOf ?? resources[0];
        },
        async useGrantedResource() {
          return true;
        },
        async getResourceServerInfo(ctx, indicator, client) {
          return resourceServerInfo(ctx, indicator, client);
        },
      },
    },
    // devInteractions sets its own URL (the same path) and warns about any other.
    ...(loginPages ? {} : {
      interactions: {
        url(ctx, interaction) {
          return `/interaction/${interaction.uid}`;
        },
      },
    }),
    // Refresh tokens: with offline_access (granted only with prompt=consent, the OpenID
    // Connect rule), as oidc-provider does; and to a confidential client allowed the
    // refresh_token grant whatever it asked, as many authorization servers of third-party
    // services do for their OAuth apps (a gateway connecting people's accounts keeps one).
    issueRefreshToken(ctx, client, code) {
      return client.grantTypeAllowed('refresh_token')
        && (code.scopes.has('offline_access') || client.clientAuthMethod !== 'none');
    },
    ttl: {
      AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? DEFAULT_ACCESS_TOKEN_TTL,
      ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL
        ?? DEFAULT_ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 24 * 3600,
      DeviceCode: 600,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
    },
    // Loopback-only test server: any browser origin may call the token endpoints.
    clientBasedCORS: () => true,
    // Errors of user-facing endpoints as JSON rather than an HTML page: easier to read in
    // test logs and in token.mjs.
    async renderError(ctx, out) {
      ctx.type = 'json';
      ctx.body = out;
    },
  };

  const provider = new Provider(issuer, configuration);

  // Advertise every scope, and serve the RFC 8414 document too (oidc-provider only serves
  // /.well-known/openid-configuration; the body is the same).
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
      ctx.body.scopes_supported = [...SCOPES];
      if (cimd) ctx.body.client_id_metadata_document_supported = true;
    }
  });
  // oidc-provider's own pages import a web font from outside: served without it, so that a
  // browser signing in here never leaves loopback (the console's test checks that).
  provider.use(async (ctx, next) => {
    await next();
    if (loginPages && typeof ctx.body === 'string' && ctx.response.is('html')) {
      ctx.body = ctx.body.replace(/@import url\(https?:[^)]*\);?/g, '');
    }
  });
  provider.on('server_error', (ctx, err) => logError(`server_error: ${err.stack || err}`));
  // Tokens issued by the refresh_token grant (GET /_stats "refreshes"; refusals not counted).
  provider.on('grant.success', (ctx) => {
    if (ctx.oidc.params?.grant_type === 'refresh_token') counters.refreshes += 1;
  });
  provider.on('registration_create.success', (ctx, client) => {
    counters.registrations += 1;
    registeredClients.push(client.clientId);
    if (registeredClients.length > EXCHANGE_LOG) registeredClients.shift();
    log(`registration: client ${client.clientId} (${client.clientAuthMethod})`);
  });
  // JWT access tokens are not stored ("issued", not "saved"): their jti is kept here for
  // the front's introspection and revocation of them (structuredToken).
  // The token exchange takes them as subject tokens too, and needs their kind.
  const issuedJwts = new Map(); // jti -> { exp (s), kind }
  for (const ev of ['access_token.issued', 'client_credentials.issued']) {
    provider.on(ev, (token) => {
      if (token.format === 'jwt') {
        issuedJwts.set(token.jti, { exp: token.exp ?? epoch() + token.expiration, kind: token.kind });
      }
    });
  }

  async function resourceServer(ctx, indicator, client) {
    const identifier = indicator ?? resources[0];
    return new provider.ResourceServer(identifier, resourceServerInfo(ctx, identifier, client));
  }
  // RFC 8693 token exchange (exchange.mjs), counted per subject; and ID-JAGs for the
  // authorization servers of idJagAudiences, signed with the access tokens' key and alg.
  registerTokenExchange(provider, {
    issuer,
    jwks,
    issuedJwts,
    resourceServer,
    idJagAudiences,
    signIdJag(header, payload) {
      const key = format.jwtAlg === 'ES256' ? 'ec' : 'rsa';
      return signJws(jwks, { header: { ...header, alg: format.jwtAlg }, payload, key });
    },
    onIdJag(record) {
      counters.id_jags += 1;
      log(`ID-JAG: ${record.client_id} for ${record.subject} -> ${record.audience}${record.resource ? ` (${record.resource})` : ''}`);
    },
    onExchange(record) {
      counters.exchanges += 1;
      exchangesBySubject.set(record.subject, (exchangesBySubject.get(record.subject) ?? 0) + 1);
      exchangeLog.push({ at: epoch(), ...record });
      if (exchangeLog.length > EXCHANGE_LOG) exchangeLog.shift();
      log(`token exchange: ${record.client_id} for ${record.subject} -> ${record.resource}`);
    },
  });

  // RFC 7523 jwt-bearer grant redeeming the ID-JAGs of trusted issuers (jwtbearer.mjs).
  const jwtBearer = trustIdJag.length === 0 ? undefined : registerJwtBearer(provider, {
    issuer,
    trusted: trustIdJag,
    resourceServer,
    log,
    onIssue(record) {
      counters.jwt_bearer += 1;
      jwtBearerBySubject.set(record.subject, (jwtBearerBySubject.get(record.subject) ?? 0) + 1);
      log(`jwt-bearer: ${record.client_id} for ${record.subject} (ID-JAG of ${record.issuer}) -> ${record.resource}`);
    },
  });

  const providerCallback = provider.callback();

  // Headless interaction: log in the login_hint account (default: defaultUser) and grant
  // the requested scopes for the requested (or default) resources, in one step.
  async function interaction(req, res, uid) {
    const details = await provider.Interaction.find(uid);
    if (!details) {
      sendJson(res, 400, { error: 'invalid_request', error_description: 'interaction not found or expired' });
      return;
    }
    const { params, prompt, session } = details;
    // A login prompt (no session yet, or prompt=login) logs in login_hint; a consent-only
    // prompt keeps the account of the existing session (a client that keeps cookies).
    const loginNeeded = prompt?.name === 'login' || !session?.accountId;
    const accountId = loginNeeded
      ? (params.login_hint || session?.accountId || defaultUser)
      : session.accountId;
    let result;
    if (!Object.hasOwn(ACCOUNTS, accountId)) {
      result = { error: 'access_denied', error_description: `unknown user ${accountId}` };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId, clientId: params.client_id });
      const requested = String(params.scope || '').split(' ').filter(Boolean);
      const known = requested.filter((s) => SCOPES.includes(s));
      if (known.length) grant.addOIDCScope(known.join(' '));
      let indicators = params.resource ?? resources[0];
      if (!Array.isArray(indicators)) indicators = [indicators];
      const resourceScopes = requested.filter((s) => RESOURCE_SCOPES.includes(s));
      for (const ind of indicators) {
        if (resourceScopes.length) grant.addResourceScope(ind, resourceScopes.join(' '));
      }
      for (const [ind, scopes] of Object.entries(prompt?.details?.missingResourceScopes || {})) {
        grant.addResourceScope(ind, scopes.join(' '));
      }
      if (prompt?.details?.missingOIDCClaims?.length) {
        grant.addOIDCClaims(prompt.details.missingOIDCClaims);
      }
      const grantId = await grant.save();
      result = { consent: { grantId } };
      if (loginNeeded) result.login = { accountId };
    }
    details.result = result;
    await details.save(details.exp - epoch());
    res.writeHead(303, { Location: details.returnTo, 'Content-Length': '0' });
    res.end();
  }

  // oidc-provider refuses to introspect or revoke JWT access tokens ("Structured JWT
  // Tokens cannot be introspected") and keeps no record of them; issuers such as Keycloak
  // and Okta do both. The front does it for them: it remembers the jti of every JWT access
  // token issued, and one is active while its jti is remembered (not revoked) and it has
  // not expired, with the JWT's own claims. Only the gateway's client may ask.
  async function structuredToken(req, res, body, path) {
    const params = new URLSearchParams(body.toString('utf8'));
    const token = params.get('token') ?? '';
    const parts = token.split('.');
    if (parts.length !== 3) return false;
    let payload;
    try {
      payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return false;
    }
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [params.get('client_id'), params.get('client_secret')];
    if (id !== GATEWAY_CLIENT.id || secret !== GATEWAY_CLIENT.secret) {
      sendJson(res, 401, { error: 'invalid_client' });
      return true;
    }
    if (path === ROUTES.revocation) {
      issuedJwts.delete(payload.jti);
      res.writeHead(200, { 'Content-Length': '0' });
      res.end();
      return true;
    }
    const live = issuedJwts.has(payload.jti) && payload.exp > epoch();
    sendJson(res, 200, live ? { active: true, token_type: payload.cnf?.jkt ? 'DPoP' : 'Bearer', ...payload } : { active: false });
    return true;
  }

  // The body of a small form request, read without consuming it: put back into the
  // stream (unshift) for oidc-provider to read.
  function peekBody(req, limit = 65536) {
    return new Promise((resolve, reject) => {
      const want = Number(req.headers['content-length'] ?? NaN);
      const chunks = [];
      let size = 0;
      const done = () => {
        req.off('readable', onReadable);
        req.off('end', done);
        req.off('error', reject);
        const body = Buffer.concat(chunks);
        if (body.length) req.unshift(body);
        resolve(body);
      };
      function onReadable() {
        let c;
        while ((c = req.read()) !== null) {
          chunks.push(c);
          size += c.length;
          if (size > limit) {
            reject(new Error('body too large'));
            return;
          }
        }
        if (size >= want) done();
      }
      if (!(want >= 0)) {
        resolve(Buffer.alloc(0));
        return;
      }
      req.on('readable', onReadable);
      req.on('end', done);
      req.on('error', reject);
    });
  }

  async function introspectionFault(req, res) {
    switch (fault.introspection) {
      case 'hang':
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return true; // never answered
      case '500':
        sendJson(res, 500, { error: 'server_error', error_description: 'injected fault' });
        return true;
      case 'garbage':
        sendRaw(res, '<html>this is not JSON {"active": tr');
        return true;
      case 'reset':
        req.socket.destroy();
        return true;
      case 'far-exp': {
        // An active token for the default resource whose exp is the largest 64-bit integer
        // (written as text: a JavaScript number cannot hold it).
        const text = `{"active":true,"client_id":"machine-acme","scope":"mcp:tools",`
          + `"aud":${JSON.stringify(resources[0])},"iss":${JSON.stringify(issuer)},`
          + `"token_type":"Bearer","exp":9223372036854775807}`;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return true;
      }
      case 'huge': { // a 4 MiB JSON answer that is otherwise well formed
        const text = `{"active": true, "pad": "${'x'.repeat(4 * 1024 * 1024)}"}`;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return true;
      }
      case 'cut': { // headers and half the announced body, then the connection is cut
        const text = '{"active": true, "scope": "mcp:tools", "client_id": "machine-acme"}';
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.write(text.slice(0, 20));
        setTimeout(() => req.socket.destroy(), 50);
        return true;
      }
      case 'slow':
        await new Promise((r) => setTimeout(r, fault.delayMs));
        return false; // then the real answer
      default:
        return false;
    }
  }

  // POST /_fault/NAME {"NAME": MODE}: the mode (one of modes; absent: none), answered
  // and logged; undefined, answered 400, when the body or the mode is not one.
  async function faultSwitch(req, res, name, modes) {
    const body = await readJson(req, res);
    if (body === undefined) return undefined;
    const mode = body[name] ?? 'none';
    if (!modes.includes(mode)) {
      sendJson(res, 400, { error: 'invalid_request', error_description: `${name} must be one of ${modes.join(' ')}` });
      return undefined;
    }
    log(`fault: ${name}=${mode}`);
    sendJson(res, 200, { [name]: mode });
    return mode;
  }

  handler = async (req, res) => {
    try {
      const url = new URL(req.url, issuer);
      const path = url.pathname;
      if (path === '/_stats' && req.method === 'GET') {
        sendJson(res, 200, statsOf());
        return;
      }
      if (path === '/_exchanges' && req.method === 'GET') {
        sendJson(res, 200, { exchanges: [...exchangeLog] });
        return;
      }
      if (path === '/_fault' && req.method === 'GET') {
        // Current fault, plus the number of stored entries per model (for debugging).
        sendJson(res, 200, {
          introspection: fault.introspection, delay_ms: fault.delayMs, store: store.stats(),
        });
        return;
      }
      if (path === '/_refresh_tokens' && req.method === 'GET') {
        // The refresh tokens an account holds (live, not consumed), to revoke one at
        // /token/revocation as a test would have the person do it at the service.
        const sub = url.searchParams.get('sub');
        const tokens = store.entries('RefreshToken')
          .filter(({ payload: p }) => p.accountId === sub && !p.consumed)
          .map(({ id, payload: p }) => ({ token: id, client_id: p.clientId, sub: p.accountId, iat: p.iat, exp: p.exp }));
        sendJson(res, 200, { refresh_tokens: tokens });
        return;
      }
      if (path === '/_ttl' && req.method === 'POST') {
        const body = await readJson(req, res);
        if (body === undefined) return;
        const ttl = body.access_ttl ?? undefined;
        if (ttl !== undefined && !validTtl(ttl)) {
          sendJson(res, 400, { error: 'invalid_request', error_description: `access_ttl: 1 to ${MAX_TTL} seconds, or null` });
          return;
        }
        userAccessTtl = ttl;
        log(`access TTL of authorization_code and refresh_token grants: ${ttl ?? DEFAULT_ACCESS_TOKEN_TTL} s`);
        sendJson(res, 200, { access_ttl: ttl ?? DEFAULT_ACCESS_TOKEN_TTL });
        return;
      }
      if (path === '/_stats/reset' && req.method === 'POST') {
        resetCounters();
        sendJson(res, 200, statsOf());
        return;
      }
      if (path === '/_format' && req.method === 'POST') {
        const body = await readJson(req, res);
        if (body === undefined) return;
        const next = { tokenFormat: body.format ?? format.tokenFormat, jwtAlg: body.alg ?? format.jwtAlg };
        if (!TOKEN_FORMATS.includes(next.tokenFormat) || !JWT_ALGS.includes(next.jwtAlg)) {
          sendJson(res, 400, { error: 'invalid_request', error_description: `format: ${TOKEN_FORMATS.join('|')}, alg: ${JWT_ALGS.join('|')}` });
          return;
        }
        format = next;
        log(`format: ${format.tokenFormat} ${format.jwtAlg}`);
        sendJson(res, 200, { format: format.tokenFormat, alg: format.jwtAlg });
        return;
      }
      if (path === '/_sign' && req.method === 'POST') {
        const body = await readJson(req, res);
        if (body === undefined) return;
        // "count": N tokens of that payload, each with a jti of its own (a benchmark's pool)
        if (Number.isSafeInteger(body.count) && body.count > 0 && body.count <= 100000) {
          const tokens = [];
          for (let i = 0; i < body.count; i += 1) {
            tokens.push(signJws(jwks, { ...body, payload: { ...body.payload, jti: crypto.randomBytes(16).toString('base64url') } }));
          }
          sendJson(res, 200, { tokens });
          return;
        }
        sendJson(res, 200, { token: signJws(jwks, body) });
        return;
      }
      if (path === '/_fault/jwks' && req.method === 'POST') {
        jwksFault = await faultSwitch(req, res, 'jwks', JWKS_FAULTS) ?? jwksFault;
        return;
      }
      if (req.method === 'GET' && path === '/jwks') {
        counters.jwks += 1;
        switch (jwksFault) {
          case 'hang':
            hanging.add(res);
            res.on('close', () => hanging.delete(res));
            return;
          case '500':
            sendJson(res, 500, { error: 'server_error', error_description: 'injected fault' });
            return;
          case 'garbage':
            sendRaw(res, '<html>{"keys": [{"kt');
            return;
          case 'huge':
            sendJson(res, 200, { keys: [], pad: 'x'.repeat(4 * 1024 * 1024) });
            return;
          case 'no-keys':
            sendJson(res, 200, { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'shared' }] });
            return;
          case 'empty':
            sendJson(res, 200, { keys: [] });
            return;
          default:
            break;
        }
      }
      if (path === '/_fault' && req.method === 'POST') {
        const body = await readJson(req, res);
        if (body === undefined) return;
        const mode = body.introspection ?? 'none';
        if (!FAULTS.includes(mode)) {
          sendJson(res, 400, { error: 'invalid_request', error_description: `introspection must be one of ${FAULTS.join(' ')}` });
          return;
        }
        const delayMs = body.delay_ms ?? SLOW_MS;
        if (!Number.isSafeInteger(delayMs) || delayMs < 0) {
          sendJson(res, 400, { error: 'invalid_request', error_description: 'delay_ms must be a non-negative integer' });
          return;
        }
        fault = { introspection: mode, delayMs };
        log(`fault: introspection=${mode}${mode === 'slow' ? ` delay_ms=${delayMs}` : ''}`);
        sendJson(res, 200, { introspection: mode, delay_ms: delayMs });
        return;
      }
      if (path === '/_fault/exchange' && req.method === 'POST') {
        exchangeFault = await faultSwitch(req, res, 'exchange', EXCHANGE_FAULTS) ?? exchangeFault;
        return;
      }
      if (req.method === 'POST' && path === ROUTES.token) counters.tokens += 1;
      if (req.method === 'POST' && path === ROUTES.token && exchangeFault !== 'none' &&
          new URLSearchParams((await peekBody(req)).toString()).get('grant_type') === TOKEN_EXCHANGE.grantType) {
        switch (exchangeFault) {
          case 'hang':
            hanging.add(res);
            res.on('close', () => hanging.delete(res));
            return;
          case '500':
            sendJson(res, 500, { error: 'server_error', error_description: 'injected fault' });
            return;
          default: // garbage
            sendRaw(res, '<html>{"access_token": "x');
            return;
        }
      }
      if (req.method === 'POST' && path === ROUTES.revocation) counters.revocations += 1;
      if (req.method === 'POST' && path === ROUTES.introspection) {
        counters.introspections += 1;
        if (await introspectionFault(req, res)) return;
      }
      if (req.method === 'POST' && (path === ROUTES.introspection || path === ROUTES.revocation)) {
        if (await structuredToken(req, res, await peekBody(req), path)) return;
      }
      const m = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(path);
      if (m && req.method === 'GET' && (!loginPages
          || headlessClients.includes((await provider.Interaction.find(m[1]))?.params?.client_id))) {
        await interaction(req, res, m[1]);
        return;
      }
      // Registration open to browser pages too (oidc-provider gives its registration
      // endpoint no CORS): a page's public client registers itself.
      if (path === ROUTES.registration && req.headers.origin) {
        res.setHeader('Access-Control-Allow-Origin', req.headers.origin);
        res.setHeader('Vary', 'Origin');
        if (req.method === 'OPTIONS') {
          res.writeHead(204, {
            'Access-Control-Allow-Methods': 'POST',
            'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] || 'content-type',
            'Access-Control-Max-Age': '600',
          });
          res.end();
          return;
        }
      }
      if (path === '/.well-known/oauth-authorization-server' && (req.method === 'GET' || req.method === 'HEAD')) {
        req.url = `/.well-known/openid-configuration${url.search}`;
      }
      if (!strictCookies) {
        cookieMemory.inject(req, path);
        const setHeader = res.setHeader.bind(res);
        res.setHeader = (name, value) => {
          if (String(name).toLowerCase() === 'set-cookie') cookieMemory.capture(value);
          return setHeader(name, value);
        };
      }
      await providerCallback(req, res);
    } catch (err) {
      logError(`front error: ${err.stack || err}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'server_error', error_description: 'internal error' });
      else res.destroy();
    }
  };

  const sweeper = setInterval(() => {
    store.sweep();
    jwtBearer?.sweep();
    for (const [jti, { exp }] of issuedJwts) if (exp <= epoch()) issuedJwts.delete(jti);
    cookieMemory.sweep(15 * 60 * 1000);
  }, 30 * 1000);
  sweeper.unref();

  let closing;
  function close() {
    closing ||= new Promise((resolve) => {
      clearInterval(sweeper);
      for (const res of hanging) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  }

  return {
    issuer,
    port: actualPort,
    host,
    provider,
    server,
    stats: statsOf,
    exchanges: () => [...exchangeLog],
    resetStats: resetCounters,
    setFault(mode, delayMs = SLOW_MS) {
      if (!FAULTS.includes(mode)) throw new TypeError(`unknown fault ${mode}`);
      fault = { introspection: mode, delayMs };
    },
    fault: () => fault.introspection,
    close,
  };
}
