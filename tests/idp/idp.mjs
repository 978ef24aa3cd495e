// The test authorization server: oidc-provider configured for mcpgate's tests, behind a small
// node:http front that adds a headless interaction, request counters and fault switches.
// server.mjs is the command line around createIdp(); see README.md for the why of each setting.

import crypto from 'node:crypto';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

import {
  ACCOUNTS, DEFAULT_ACCESS_TOKEN_TTL, GATEWAY_CLIENT, MACHINE_CLIENTS, RESOURCE_SCOPES, SCOPES,
  staticClients,
} from './fixtures.mjs';
import { createStore } from './store.mjs';

export const FAULTS = Object.freeze(['none', 'hang', '500', 'garbage', 'slow', 'reset', 'far-exp', 'huge', 'cut']);
const SLOW_MS = 2000;

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

function makeJwks() {
  // Own signing keys (ID tokens, registration access tokens are opaque anyway) so that
  // oidc-provider does not fall back to its published development keystore.
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    .export({ format: 'jwk' });
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    .export({ format: 'jwk' });
  return {
    keys: [
      { ...rsa, kid: 'rsa-1', use: 'sig', alg: 'RS256' },
      { ...ec, kid: 'ec-1', use: 'sig', alg: 'ES256' },
    ],
  };
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
 * @param {(msg: string) => void} [o.log] diagnostics (stderr in server.mjs)
 * @param {(msg: string) => void} [o.logError] internal errors (default: stderr)
 * @returns {Promise<{issuer, port, host, provider, server, stats, resetStats, setFault,
 *   fault, close}>}
 */
export async function createIdp({
  resources, port = 0, host = '127.0.0.1', defaultUser = 'alice', strictCookies = false,
  loginPages = false, log = () => {}, logError = (m) => process.stderr.write(`idp: ${m}\n`),
} = {}) {
  if (!Array.isArray(resources) || resources.length === 0) {
    throw new TypeError('at least one resource is required');
  }
  for (const r of resources) {
    const u = URL.parse(r);
    if (!u || u.hash) throw new TypeError(`resource must be an absolute URI without fragment: ${r}`);
  }
  if (!(defaultUser in ACCOUNTS)) throw new TypeError(`unknown default user: ${defaultUser}`);

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
  const counters = { introspections: 0, tokens: 0 };
  let fault = { introspection: 'none', delayMs: SLOW_MS };
  const hanging = new Set();

  // Resource indicators are matched exactly, or after URL normalisation (so that
  // "http://h:1/mcp" and "HTTP://h:1/mcp" name the same server); the audience is always the
  // configured spelling, byte for byte.
  const resourceByHref = new Map(resources.map((r) => [URL.parse(r).href, r]));
  const findResource = (indicator) => (resources.includes(indicator)
    ? indicator : resourceByHref.get(URL.parse(indicator)?.href));

  const configuration = {
    adapter: store.Adapter,
    clients: staticClients(),
    jwks: makeJwks(),
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
    async extraTokenClaims(ctx, token) {
      if (token.accountId) return claimsOf(ACCOUNTS[token.accountId]);
      const client = token.client || await provider.Client.find(token.clientId);
      const meta = client?.metadata() || {};
      return claimsOf({ tenant: meta.tenant, groups: meta.groups });
    },
    features: {
      // Replaced by the headless GET /interaction/:uid, unless a browser is to sign in
      // through oidc-provider's own pages (loginPages).
      devInteractions: { enabled: loginPages },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        async allowedPolicy(ctx, client, token) {
          if (client.clientId === GATEWAY_CLIENT.id) return true;
          if (client.clientAuthMethod === 'none') return false;
          return token.clientId === client.clientId;
        },
      },
      revocation: {
        enabled: true,
        async allowedPolicy(ctx, client, token) {
          if (client.clientId === GATEWAY_CLIENT.id) return true;
          return token.clientId === client.clientId;
        },
      },
      registration: { enabled: true, initialAccessToken: false },
      resourceIndicators: {
        enabled: true,
        async defaultResource(ctx, client, oneOf) {
          return oneOf ?? resources[0];
        },
        async useGrantedResource() {
          return true;
        },
        async getResourceServerInfo(ctx, indicator, client) {
          const audience = findResource(indicator);
          if (!audience) throw new errors.InvalidTarget(`unknown resource: ${indicator}`);
          return {
            audience,
            scope: RESOURCE_SCOPES.join(' '),
            accessTokenFormat: 'opaque',
            accessTokenTTL: MACHINE_CLIENTS[client?.clientId]?.accessTokenTTL
              ?? DEFAULT_ACCESS_TOKEN_TTL,
          };
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

  async function introspectionFault(req, res) {
    switch (fault.introspection) {
      case 'hang':
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return true; // never answered
      case '500':
        sendJson(res, 500, { error: 'server_error', error_description: 'injected fault' });
        return true;
      case 'garbage': {
        const text = '<html>this is not JSON {"active": tr';
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        return true;
      }
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

  handler = async (req, res) => {
    try {
      const url = new URL(req.url, issuer);
      const path = url.pathname;
      if (path === '/_stats' && req.method === 'GET') {
        sendJson(res, 200, { ...counters });
        return;
      }
      if (path === '/_fault' && req.method === 'GET') {
        // Current fault, plus the number of stored entries per model (for debugging).
        sendJson(res, 200, {
          introspection: fault.introspection, delay_ms: fault.delayMs, store: store.stats(),
        });
        return;
      }
      if (path === '/_stats/reset' && req.method === 'POST') {
        counters.introspections = 0;
        counters.tokens = 0;
        sendJson(res, 200, { ...counters });
        return;
      }
      if (path === '/_fault' && req.method === 'POST') {
        let body;
        try {
          body = JSON.parse((await readBody(req)) || '{}');
        } catch {
          sendJson(res, 400, { error: 'invalid_request', error_description: 'body must be JSON' });
          return;
        }
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
      if (req.method === 'POST' && path === ROUTES.token) counters.tokens += 1;
      if (req.method === 'POST' && path === ROUTES.introspection) {
        counters.introspections += 1;
        if (await introspectionFault(req, res)) return;
      }
      const m = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(path);
      if (m && req.method === 'GET' && !loginPages) {
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
    stats: () => ({ ...counters }),
    resetStats() {
      counters.introspections = 0;
      counters.tokens = 0;
    },
    setFault(mode, delayMs = SLOW_MS) {
      if (!FAULTS.includes(mode)) throw new TypeError(`unknown fault ${mode}`);
      fault = { introspection: mode, delayMs };
    },
    fault: () => fault.introspection,
    close,
  };
}
