// tests/lib/dpop.mjs — a DPoP client (RFC 9449) for the suites and benchmarks: a key
// pair, proofs signed with it (node's crypto; any claim or header overridden to make a
// wrong one), its RFC 7638 thumbprint, and a DPoP-bound client_credentials token from
// the test authorization server (tests/idp: oidc-provider's dPoP feature is on).
//
//   const key = dpopKey();                    // ES256 (P-256); dpopKey('PS256') for RSA
//   const token = await boundToken({ issuer, key, client: 'machine-acme' });
//   const proof = dpopProof(key, { htm: 'POST', htu: URL, token });

import crypto from 'node:crypto';

const b64 = (b) => Buffer.from(b).toString('base64url');

/** A key pair for proofs: { alg, privateKey, jwk (public) }. */
export function dpopKey(alg = 'ES256') {
  const pair = alg.startsWith('ES')
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { alg, privateKey: pair.privateKey, jwk: pair.publicKey.export({ format: 'jwk' }) };
}

/** RFC 7638 thumbprint of a public JWK (SHA-256, base64url). */
export function thumbprint(jwk) {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : ['e', 'kty', 'n'];
  const canon = JSON.stringify(Object.fromEntries(members.map((m) => [m, jwk[m]])));
  return crypto.createHash('sha256').update(canon).digest('base64url');
}

/** base64url SHA-256 of an access token: a proof's ath. */
export const ath = (token) => crypto.createHash('sha256').update(token).digest('base64url');

/**
 * A proof: header {typ: dpop+jwt, alg, jwk} and claims {htm, htu, iat: now, jti: random,
 * ath of token (when given)}, each overridable (header: {...}, claims: {...}; a value of
 * undefined removes it); signed with key (signer: another key to sign with than the
 * one the header names).
 */
export function dpopProof(key, {
  htm, htu, token, header = {}, claims = {}, signer = key,
}) {
  const h = {
    typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...header,
  };
  const p = {
    htm, htu, iat: Math.floor(Date.now() / 1000), jti: crypto.randomBytes(16).toString('base64url'),
    ...(token ? { ath: ath(token) } : {}),
    ...claims,
  };
  for (const o of [h, p]) for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  const input = `${b64(JSON.stringify(h))}.${b64(JSON.stringify(p))}`;
  if (h.alg === 'none') return `${input}.`;
  const sig = crypto.sign(`sha${String(h.alg).slice(2)}`, Buffer.from(input), {
    key: signer.privateKey,
    dsaEncoding: 'ieee-p1363',
    ...(String(h.alg).startsWith('PS') ? { padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : {}),
  });
  return `${input}.${b64(sig)}`;
}

/** A DPoP-bound client_credentials token of client (secret: <client>-secret) for key. */
export async function boundToken({
  issuer, key, client = 'machine-acme', scope = 'mcp:tools', resource,
}) {
  const url = `${issuer}/token`;
  const body = new URLSearchParams({ grant_type: 'client_credentials', scope });
  if (resource) body.set('resource', resource);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client}:${client}-secret`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      DPoP: dpopProof(key, { htm: 'POST', htu: url }),
    },
    body,
    signal: AbortSignal.timeout(30000),
  });
  const out = await res.json();
  if (!res.ok || !out.access_token) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(out)}`);
  if (out.token_type !== 'DPoP') throw new Error(`token_type ${out.token_type}, not DPoP`);
  return out.access_token;
}
