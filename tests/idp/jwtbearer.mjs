// RFC 7523 jwt-bearer grant for the test authorization server, redeeming ID-JAGs (leg 2 of
// MCP "Enterprise-Managed Authorization", draft-ietf-oauth-identity-assertion-authz-grant):
// an identity assertion JWT another authorization server (a trusted issuer, --trust-id-jag)
// signed for this one is traded for an access token of this server for the person it names,
// for the resource it names. Registered with provider.registerGrantType by idp.mjs, only when
// some issuer is trusted; README.md ("ID-JAG") describes it.

import crypto from 'node:crypto';

import { errors } from 'oidc-provider';

import {
  ACCOUNTS, DEFAULT_RESOURCE_SCOPE, EXCHANGE_CLIENTS, ID_JAG, JWT_BEARER,
} from './fixtures.mjs';

const PARAMS = ['assertion', 'scope'];
const epoch = () => Math.floor(Date.now() / 1000);
const SKEW = 60; // seconds of clock difference tolerated on iat and nbf (none on exp)
const FETCH_TIMEOUT_MS = 5000;
const KEYS_TTL_MS = 10 * 60 * 1000; // an issuer's keys are fetched again after this
const REFETCH_MS = 5000; // an unknown kid refetches the keys, at most this often

function invalidGrant(description) {
  const e = new errors.InvalidGrant(description);
  e.error_description = description;
  return e;
}

const ALGS = {
  RS256: { kty: 'RSA', opts: (key) => ({ key }) },
  PS256: { kty: 'RSA', opts: (key) => ({ key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }) },
  ES256: { kty: 'EC', crv: 'P-256', opts: (key) => ({ key, dsaEncoding: 'ieee-p1363' }) },
};

// `typ` compared as a media type: case-insensitive, "application/" optional (RFC 7515 §4.1.9).
const typOf = (t) => (typeof t === 'string' ? t.toLowerCase().replace(/^application\//, '') : undefined);

function decodePart(part) {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

async function getJson(url, what) {
  let res;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new Error(`${what}: ${e.cause?.message || e.message}`);
  }
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new Error(`${what}: not JSON`);
  }
}

/**
 * Register urn:ietf:params:oauth:grant-type:jwt-bearer on provider.
 * @param {object} provider oidc-provider instance
 * @param {object} o
 * @param {string} o.issuer this server's issuer: the `aud` an ID-JAG must carry
 * @param {string[]} o.trusted issuers whose ID-JAGs are accepted (their keys from their
 *   metadata's jwks_uri, which must be on the issuer's origin)
 * @param {(ctx, indicator: string|undefined, client) => Promise<object>} o.resourceServer
 *   as for the token exchange (throws InvalidTarget for an unknown resource)
 * @param {(record: object) => void} o.onIssue called once per token issued
 * @param {(msg: string) => void} [o.log]
 */
export function registerJwtBearer(provider, {
  issuer, trusted, resourceServer, onIssue, log = () => {},
}) {
  const trust = new Set(trusted.map((t) => t.replace(/\/+$/, '')));
  const keysets = new Map(); // issuer -> { keys, at }
  const inflight = new Map(); // issuer -> Promise of its keys
  const seen = new Map(); // `${iss} ${jti}` -> exp: the ID-JAGs redeemed (replay)

  async function fetchKeys(iss) {
    const md = await getJson(`${iss}/.well-known/openid-configuration`, `metadata of ${iss}`);
    if (md.issuer !== iss) throw new Error(`metadata of ${iss} names issuer ${md.issuer}`);
    const jwksUri = URL.parse(md.jwks_uri ?? '');
    if (!jwksUri || jwksUri.origin !== new URL(iss).origin) {
      throw new Error(`metadata of ${iss}: jwks_uri missing or on another origin`);
    }
    const set = await getJson(jwksUri.href, `keys of ${iss}`);
    if (!Array.isArray(set?.keys)) throw new Error(`keys of ${iss}: not a JWK set`);
    log(`jwt-bearer: ${set.keys.length} key(s) of ${iss}`);
    return set.keys;
  }

  // The issuer's keys: cached; fetched again when stale, or (refresh) when a kid was not
  // found, at most every REFETCH_MS. Concurrent requests share one fetch.
  async function keysOf(iss, refresh = false) {
    const cached = keysets.get(iss);
    const age = cached ? Date.now() - cached.at : Infinity;
    if (cached && age < KEYS_TTL_MS && !(refresh && age >= REFETCH_MS)) return cached.keys;
    if (!inflight.has(iss)) {
      inflight.set(iss, fetchKeys(iss)
        .then((keys) => {
          keysets.set(iss, { keys, at: Date.now() });
          return keys;
        })
        .finally(() => inflight.delete(iss)));
    }
    try {
      return await inflight.get(iss);
    } catch (e) {
      if (cached) return cached.keys;
      throw invalidGrant(`the keys of issuer ${iss} cannot be had (${e.message})`);
    }
  }

  const candidates = (keys, header) => keys.filter((k) => k && k.kty === ALGS[header.alg].kty
    && (ALGS[header.alg].crv === undefined || k.crv === ALGS[header.alg].crv)
    && (k.use === undefined || k.use === 'sig')
    && (k.alg === undefined || k.alg === header.alg)
    && (header.kid === undefined || k.kid === header.kid));

  function verifies(jwk, header, input, sig) {
    let key;
    try {
      const pub = jwk.kty === 'EC' ? { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: 'RSA', n: jwk.n, e: jwk.e };
      key = crypto.createPublicKey({ key: pub, format: 'jwk' });
    } catch {
      return false;
    }
    return crypto.verify('sha256', Buffer.from(input), ALGS[header.alg].opts(key), sig);
  }

  // The verified payload of an ID-JAG for this server; throws invalid_grant saying why not.
  async function verifyIdJag(assertion) {
    const parts = String(assertion).split('.');
    const header = parts.length === 3 ? decodePart(parts[0]) : undefined;
    const payload = header ? decodePart(parts[1]) : undefined;
    if (!header || !payload) throw invalidGrant('assertion is not a compact JWS with a JSON payload');
    if (!Object.hasOwn(ALGS, header.alg)) {
      throw invalidGrant(`assertion alg ${JSON.stringify(header.alg)} is not accepted (RS256, PS256, ES256)`);
    }
    if (typOf(header.typ) !== ID_JAG.typ) {
      throw invalidGrant(`assertion typ is ${JSON.stringify(header.typ)}, not ${ID_JAG.typ}: not an ID-JAG`);
    }
    const { iss } = payload;
    if (typeof iss !== 'string' || !trust.has(iss)) {
      throw invalidGrant(`assertion issuer ${JSON.stringify(iss)} is not trusted`);
    }
    const input = `${parts[0]}.${parts[1]}`;
    const sig = Buffer.from(parts[2], 'base64url');
    let keys = candidates(await keysOf(iss), header);
    if (!keys.length) keys = candidates(await keysOf(iss, true), header);
    if (!keys.length) {
      throw invalidGrant(`no key of issuer ${iss} matches the assertion (kid ${JSON.stringify(header.kid)}, alg ${header.alg})`);
    }
    if (!keys.some((k) => verifies(k, header, input, sig))) {
      throw invalidGrant(`the assertion's signature does not verify with the keys of ${iss}`);
    }
    const now = epoch();
    const auds = [].concat(payload.aud ?? []);
    if (!auds.includes(issuer)) {
      throw invalidGrant(`assertion audience ${JSON.stringify(payload.aud)} is not this server (${issuer})`);
    }
    if (typeof payload.exp !== 'number' || !(payload.exp > now)) throw invalidGrant('assertion has expired (or has no exp)');
    if (typeof payload.iat !== 'number' || payload.iat > now + SKEW) throw invalidGrant('assertion iat is missing or in the future');
    if (payload.nbf !== undefined && !(typeof payload.nbf === 'number' && payload.nbf <= now + SKEW)) {
      throw invalidGrant('assertion is not valid yet (nbf)');
    }
    for (const c of ['sub', 'jti', 'client_id']) {
      if (typeof payload[c] !== 'string' || !payload[c]) throw invalidGrant(`assertion has no ${c}`);
    }
    return payload;
  }

  async function jwtBearer(ctx) {
    const { client, params } = ctx.oidc;
    if (!EXCHANGE_CLIENTS.includes(client.clientId)) {
      throw new errors.UnauthorizedClient(`client ${client.clientId} may not use the jwt-bearer grant`);
    }
    if (!params.assertion) throw new errors.InvalidRequest("missing required parameter 'assertion'");
    const jag = await verifyIdJag(params.assertion);
    if (jag.client_id !== client.clientId) {
      throw invalidGrant(`the ID-JAG was issued for client ${jag.client_id}, not ${client.clientId}`);
    }
    if (!Object.hasOwn(ACCOUNTS, jag.sub)) throw invalidGrant(`the ID-JAG's subject ${jag.sub} has no account here`);
    let indicator = jag.resource;
    if (Array.isArray(indicator) && indicator.length === 1) [indicator] = indicator;
    if (indicator !== undefined && typeof indicator !== 'string') {
      throw new errors.InvalidTarget('the ID-JAG names more than one resource');
    }
    const rs = await resourceServer(ctx, indicator, client); // InvalidTarget: not ours

    const held = typeof jag.scope === 'string' ? jag.scope.split(' ').filter(Boolean) : [];
    const asked = params.scope ? params.scope.split(' ').filter(Boolean) : undefined;
    const base = held.length ? held : DEFAULT_RESOURCE_SCOPE.split(' ');
    const wider = (asked ?? []).filter((s) => !base.includes(s));
    if (wider.length) throw new errors.InvalidScope(`scope beyond the ID-JAG's: ${wider.join(' ')}`);
    const scope = (asked ?? base).filter((s) => rs.scopes.has(s)).join(' ') || undefined;

    // Checked and recorded with no await in between: two concurrent uses, one token.
    const key = `${jag.iss} ${jag.jti}`;
    if (seen.has(key)) throw invalidGrant('the ID-JAG was already used (jti replayed)');
    seen.set(key, jag.exp);

    const token = new provider.AccessToken({
      accountId: jag.sub,
      client,
      gty: JWT_BEARER.grantType,
      scope,
      resourceServer: rs,
      expiresIn: rs.accessTokenTTL,
    });
    const value = await token.save();
    onIssue({
      client_id: client.clientId, subject: jag.sub, issuer: jag.iss, resource: rs.audience, scope,
    });
    ctx.body = {
      access_token: value,
      token_type: token.tokenType,
      expires_in: token.expiration,
      ...(scope ? { scope } : {}),
    };
  }

  provider.registerGrantType(JWT_BEARER.grantType, jwtBearer, PARAMS);

  // As for the token exchange: a client without the grant is refused by oidc-provider as
  // invalid_request; RFC 6749 §5.2 says unauthorized_client.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'token' && ctx.status === 400
      && ctx.body?.error === 'invalid_request'
      && ctx.body.error_description === 'requested grant type is not allowed for this client'
      && ctx.oidc.params?.grant_type === JWT_BEARER.grantType) {
      ctx.body = {
        error: 'unauthorized_client',
        error_description: `client ${ctx.oidc.client?.clientId} may not use the jwt-bearer grant`,
      };
    }
  });

  return {
    /** Forget the redeemed ID-JAGs that have expired (they cannot be replayed any more). */
    sweep() {
      const now = epoch();
      for (const [k, exp] of seen) if (exp <= now) seen.delete(k);
    },
  };
}
