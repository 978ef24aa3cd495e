// RFC 8693 token exchange for the test authorization server, through oidc-provider's own
// extension point (provider.registerGrantType): an access token this server issued is
// exchanged for one meant for one resource, for the same person (or machine client), with an
// `act` claim naming the client that exchanged it; or, with requested_token_type
// urn:ietf:params:oauth:token-type:id-jag, for an ID-JAG (an identity assertion JWT another
// authorization server redeems with the jwt-bearer grant: jwtbearer.mjs). idp.mjs registers
// it; README.md ("Token exchange", "ID-JAG") describes it.

import crypto from 'node:crypto';

import { errors } from 'oidc-provider';

import {
  ACCOUNTS, EXCHANGE_CLIENTS, ID_JAG, RESOURCE_SCOPES, TOKEN_EXCHANGE,
} from './fixtures.mjs';

// Parameters the grant reads; every other one oidc-provider strips before the handler.
// actor_token(_type) are read only to refuse them (no delegation by actor token here).
const PARAMS = [
  'subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'audience', 'scope',
  'actor_token', 'actor_token_type',
];
// May be repeated (RFC 8693 §2.1); a second resource is refused by the handler.
const DUPES = ['resource', 'audience'];

const epoch = () => Math.floor(Date.now() / 1000);

// The `act` claim of each exchanged token, until it is saved: idp.mjs's extraTokenClaims
// puts it into the token's claims (stored with an opaque token, in the payload of a JWT).
const actors = new WeakMap();

/** The `act` claim a token being saved must carry (undefined: not an exchanged token). */
export function actorOf(token) {
  return actors.get(token);
}

// oidc-provider's InvalidGrant always says "grant request is invalid"; ours say why.
function invalidGrant(description) {
  const e = new errors.InvalidGrant(description);
  e.error_description = description;
  return e;
}

const VERIFY = {
  RS256: (key) => ({ key }),
  PS256: (key) => ({ key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }),
  ES256: (key) => ({ key, dsaEncoding: 'ieee-p1363' }),
};

/** The payload of a compact JWS signed with one of the server's own keys, else undefined. */
function verifyOwnJws(jwks, token) {
  const [h, p, s] = token.split('.');
  let header;
  let payload;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (header?.typ !== 'at+jwt' || !Object.hasOwn(VERIFY, header.alg)) return undefined;
  const kty = header.alg === 'ES256' ? 'EC' : 'RSA';
  const jwk = jwks.keys.find((k) => k.kid === header.kid && k.kty === kty);
  if (!jwk) return undefined;
  const pub = kty === 'EC' ? { kty, crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty, n: jwk.n, e: jwk.e };
  const key = crypto.createPublicKey({ key: pub, format: 'jwk' });
  const good = crypto.verify('sha256', Buffer.from(`${h}.${p}`), VERIFY[header.alg](key), Buffer.from(s ?? '', 'base64url'));
  return good && payload && typeof payload === 'object' ? payload : undefined;
}

/**
 * Register the grant urn:ietf:params:oauth:grant-type:token-exchange on provider.
 * @param {object} provider oidc-provider instance
 * @param {object} o
 * @param {string} o.issuer
 * @param {{keys: object[]}} o.jwks the server's signing keys (to verify JWT subject tokens)
 * @param {Map<string, {kind: string}>} o.issuedJwts jti -> record of every JWT access token
 *   issued and not revoked
 * @param {(ctx, indicator: string|undefined, client) => Promise<object>} o.resourceServer
 *   the provider.ResourceServer of an indicator (undefined: the default); throws
 *   InvalidTarget for one the server does not know
 * @param {(record: object) => void} o.onExchange called once per token issued
 * @param {string[]} [o.idJagAudiences] the authorization servers (issuer URLs) an ID-JAG may
 *   be issued for; none: every ID-JAG request is refused (invalid_target)
 * @param {(header: object, payload: object) => string} [o.signIdJag] a compact JWS of the
 *   server's own signing key (the alg of its access tokens)
 * @param {(record: object) => void} [o.onIdJag] called once per ID-JAG issued
 */
export function registerTokenExchange(provider, {
  issuer, jwks, issuedJwts, resourceServer, onExchange,
  idJagAudiences = [], signIdJag, onIdJag = () => {},
}) {
  // Trusted audiences matched exactly or after URL normalisation (and without a trailing
  // slash); the ID-JAG's aud is the configured spelling.
  const normal = (u) => URL.parse(u)?.href.replace(/\/+$/, '');
  const audienceOf = (value) => idJagAudiences.find((a) => a === value || normal(a) === normal(value));
  // The subject token as { kind, accountId, clientId, scope, exp, act } when it is an access
  // token this server issued and still active; undefined otherwise (unknown, revoked,
  // expired, forged, a refresh token).
  async function findSubject(value) {
    if (value.split('.').length === 3) {
      const payload = verifyOwnJws(jwks, value);
      const record = payload && issuedJwts.get(payload.jti);
      if (!record || payload.iss !== issuer || !(payload.exp > epoch())) return undefined;
      return {
        kind: record.kind,
        accountId: record.kind === 'AccessToken' ? payload.sub : undefined,
        clientId: payload.client_id,
        scope: payload.scope,
        exp: payload.exp,
        act: payload.act,
      };
    }
    const found = (await provider.AccessToken.find(value))
      ?? (await provider.ClientCredentials.find(value));
    if (!found?.isValid) return undefined;
    if (found.grantId) { // as introspection does: the grant must still stand
      const grant = await provider.Grant.find(found.grantId, { ignoreExpiration: true });
      if (!grant || grant.isExpired || grant.clientId !== found.clientId
        || grant.accountId !== found.accountId) return undefined;
    }
    return {
      kind: found.kind,
      accountId: found.accountId,
      clientId: found.clientId,
      scope: found.scope,
      exp: found.exp,
      act: found.extra?.act,
    };
  }

  async function tokenExchange(ctx) {
    const { client, params } = ctx.oidc;
    if (!EXCHANGE_CLIENTS.includes(client.clientId)) {
      throw new errors.UnauthorizedClient(`client ${client.clientId} may not exchange tokens`);
    }
    for (const p of ['subject_token', 'subject_token_type']) {
      if (!params[p]) throw new errors.InvalidRequest(`missing required parameter '${p}'`);
    }
    if (params.subject_token_type !== TOKEN_EXCHANGE.accessTokenType) {
      throw new errors.InvalidRequest(`unsupported subject_token_type (only ${TOKEN_EXCHANGE.accessTokenType})`);
    }
    if (params.requested_token_type !== undefined
      && params.requested_token_type !== TOKEN_EXCHANGE.accessTokenType
      && params.requested_token_type !== ID_JAG.tokenType) {
      throw new errors.InvalidRequest(`unsupported requested_token_type (only ${TOKEN_EXCHANGE.accessTokenType} or ${ID_JAG.tokenType})`);
    }
    if (params.actor_token !== undefined || params.actor_token_type !== undefined) {
      throw new errors.InvalidRequest('actor_token is not supported');
    }
    if (params.requested_token_type === ID_JAG.tokenType) {
      await idJag(ctx);
      return;
    }
    let indicator = params.resource;
    if (Array.isArray(indicator)) {
      if (indicator.length !== 1) {
        throw new errors.InvalidTarget('only a single resource indicator value is supported for this grant type');
      }
      [indicator] = indicator;
    }
    const rs = await resourceServer(ctx, indicator, client);

    const subject = await findSubject(params.subject_token);
    if (!subject) {
      throw invalidGrant('subject_token is not an active access token of this server (unknown, revoked or expired)');
    }

    const held = new Set(String(subject.scope ?? '').split(' ').filter(Boolean));
    const asked = params.scope ? params.scope.split(' ').filter(Boolean) : undefined;
    const wider = (asked ?? []).filter((s) => !held.has(s));
    if (wider.length) {
      throw new errors.InvalidScope(`scope beyond the subject token's: ${wider.join(' ')}`);
    }
    const scope = (asked ?? [...held]).filter((s) => rs.scopes.has(s)).join(' ') || undefined;
    // Never outlives the subject token, nor the server's access token lifetime.
    const expiresIn = Math.min(subject.exp - epoch(), rs.accessTokenTTL);
    if (!(expiresIn > 0)) throw invalidGrant('subject_token has expired');
    const act = { sub: client.clientId, ...(subject.act ? { act: subject.act } : {}) };

    let token;
    if (subject.kind === 'ClientCredentials') {
      // A machine's token: the same client identity (its client_id, its claims).
      const owner = await provider.Client.find(subject.clientId);
      if (!owner) throw invalidGrant('the client of subject_token no longer exists');
      token = new provider.ClientCredentials({
        client: owner, scope, resourceServer: rs, expiresIn,
      });
    } else {
      // A person's token: the same account; issued to the exchanging client (RFC 8693 §4.3:
      // client_id is the client that asked).
      token = new provider.AccessToken({
        accountId: subject.accountId,
        client,
        gty: TOKEN_EXCHANGE.grantType,
        scope,
        resourceServer: rs,
        expiresIn,
      });
    }
    actors.set(token, act);
    const value = await token.save();
    onExchange({
      client_id: client.clientId,
      subject: subject.accountId ?? subject.clientId,
      resource: rs.audience,
      audience: params.audience,
      scope,
      expires_in: token.expiration,
    });
    ctx.body = {
      access_token: value,
      issued_token_type: TOKEN_EXCHANGE.accessTokenType,
      token_type: token.tokenType,
      expires_in: token.expiration,
      ...(scope ? { scope } : {}),
    };
  }

  // Leg 1 of enterprise-managed authorization: the caller's access token for an ID-JAG, a
  // JWT signed with this server's key that names the person to another authorization server
  // (audience), for one of its resources, for the exchanging client.
  async function idJag(ctx) {
    const { client, params } = ctx.oidc;
    let { audience } = params;
    if (audience === undefined) {
      throw new errors.InvalidRequest("missing required parameter 'audience' (the authorization server the ID-JAG is for)");
    }
    if (Array.isArray(audience)) {
      if (audience.length !== 1) throw new errors.InvalidTarget('an ID-JAG is for exactly one audience');
      [audience] = audience;
    }
    const aud = audienceOf(audience);
    if (!aud) throw new errors.InvalidTarget(`audience is not a trusted authorization server: ${audience}`);
    let { resource } = params;
    if (Array.isArray(resource)) {
      if (resource.length !== 1) throw new errors.InvalidTarget('only a single resource indicator value is supported for this grant type');
      [resource] = resource;
    }
    if (resource !== undefined) {
      const u = URL.parse(resource);
      if (!u || u.hash) throw new errors.InvalidTarget('resource must be an absolute URI without fragment');
    }
    const asked = params.scope ? params.scope.split(' ').filter(Boolean) : [];
    const unknown = asked.filter((s) => !RESOURCE_SCOPES.includes(s));
    if (unknown.length) throw new errors.InvalidScope(`unknown scope: ${unknown.join(' ')}`);
    const scope = [...new Set(asked)].join(' ') || undefined;

    const subject = await findSubject(params.subject_token);
    if (!subject) {
      throw invalidGrant('subject_token is not an active access token of this server (unknown, revoked or expired)');
    }
    if (subject.kind !== 'AccessToken' || !subject.accountId) {
      throw invalidGrant("subject_token is a client's token, not a person's: an ID-JAG names a person");
    }
    const iat = epoch();
    const payload = {
      iss: issuer,
      sub: subject.accountId,
      aud,
      client_id: client.clientId,
      jti: crypto.randomBytes(16).toString('base64url'),
      iat,
      exp: iat + ID_JAG.lifetime,
      ...(resource !== undefined ? { resource } : {}),
      ...(scope ? { scope } : {}),
    };
    const acct = ACCOUNTS[subject.accountId];
    if (acct?.tenant !== undefined) payload.tenant = acct.tenant;
    if (acct?.groups?.length) payload.groups = [...acct.groups];
    const value = signIdJag({ typ: ID_JAG.typ }, payload);
    onIdJag({
      client_id: client.clientId, subject: subject.accountId, audience: aud, resource, scope,
    });
    ctx.body = {
      access_token: value,
      issued_token_type: ID_JAG.tokenType,
      token_type: 'N_A',
      expires_in: ID_JAG.lifetime,
      ...(scope ? { scope } : {}),
    };
  }

  provider.registerGrantType(TOKEN_EXCHANGE.grantType, tokenExchange, PARAMS, DUPES);

  // A client without the grant in its grant_types is refused by oidc-provider before the
  // handler, as invalid_request; RFC 6749 §5.2 says unauthorized_client.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'token' && ctx.status === 400
      && ctx.body?.error === 'invalid_request'
      && ctx.body.error_description === 'requested grant type is not allowed for this client'
      && ctx.oidc.params?.grant_type === TOKEN_EXCHANGE.grantType) {
      ctx.body = {
        error: 'unauthorized_client',
        error_description: `client ${ctx.oidc.client?.clientId} may not exchange tokens`,
      };
    }
  });
}
