// Fixed data of the test authorization server: scopes, accounts, clients.
// Imported by server.mjs (to configure oidc-provider) and re-exported by lib.mjs (for tests).

/** Every scope the server knows. The mcp:* ones are also the scopes of each resource server. */
export const SCOPES = Object.freeze([
  'openid', 'offline_access',
  'mcp:tools', 'mcp:admin', 'mcp:github', 'mcp:read', 'mcp:write',
]);

/** Scopes that may be granted for a resource (the MCP gateway audience). */
export const RESOURCE_SCOPES = Object.freeze(SCOPES.filter((s) => s.startsWith('mcp:')));

/** The introspection (resource server) client that the gateway authenticates as. */
export const GATEWAY_CLIENT = Object.freeze({ id: 'mcpgate', secret: 'mcpgate-secret' });

/** Public client used for user tokens (authorization code + PKCE S256). */
export const USER_CLIENT = Object.freeze({ id: 'cli', redirectUri: 'http://127.0.0.1/callback' });

/** Confidential clients follow the convention secret = `<client_id>-secret`. */
export const secretFor = (clientId) => `${clientId}-secret`;

/** Token exchange (RFC 8693): its grant type and the one token type it takes and issues. */
export const TOKEN_EXCHANGE = Object.freeze({
  grantType: 'urn:ietf:params:oauth:grant-type:token-exchange',
  accessTokenType: 'urn:ietf:params:oauth:token-type:access_token',
});

/**
 * ID-JAG (Identity Assertion JWT Authorization Grant, draft-ietf-oauth-identity-assertion-authz-grant;
 * MCP "Enterprise-Managed Authorization"): the token type asked for at the organisation's
 * issuer (token exchange), the JWS `typ` of the assertion, its lifetime, and the RFC 7523
 * grant that redeems it at the upstream's own authorization server.
 */
export const ID_JAG = Object.freeze({
  tokenType: 'urn:ietf:params:oauth:token-type:id-jag',
  typ: 'oauth-id-jag+jwt',
  lifetime: 300,
});
export const JWT_BEARER = Object.freeze({ grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer' });

/** The scope of a token issued for an ID-JAG that names none (the resource's default). */
export const DEFAULT_RESOURCE_SCOPE = 'mcp:tools';

/** A confidential client whose only grant is token exchange (a gateway's own identity). */
export const EXCHANGE_CLIENT = Object.freeze({ id: 'gateway-exchange', secret: secretFor('gateway-exchange') });

/**
 * The clients that may exchange tokens: the flag the grant checks. Any other client is
 * refused (unauthorized_client), even one registered dynamically with the grant.
 */
export const EXCHANGE_CLIENTS = Object.freeze([GATEWAY_CLIENT.id, EXCHANGE_CLIENT.id]);

/**
 * Users. `tenant` absent = no tenant claim; `groups` empty = no groups claim.
 * The claims appear in introspection responses of user tokens.
 */
export const ACCOUNTS = Object.freeze({
  alice: { tenant: 'acme', groups: ['engineering'] },
  bob: { tenant: 'acme', groups: ['sales'] },
  carol: { tenant: 'beta', groups: ['engineering', 'ops'] },
  dave: { groups: [] },
  eve: { tenant: 'nosuch', groups: ['engineering'] },
});

/** Machine clients (client_credentials) and the claims their tokens carry. */
export const MACHINE_CLIENTS = Object.freeze({
  'machine-acme': { tenant: 'acme', groups: ['engineering', 'ops'] },
  'machine-beta': { tenant: 'beta', groups: ['sales'] },
  'machine-none': { groups: [] },
  // Access tokens live 2 s: for expired-token tests.
  'short-lived': { tenant: 'acme', groups: ['engineering'], accessTokenTTL: 5 },
});

/** Default access token lifetime (seconds) when nothing more specific applies. */
export const DEFAULT_ACCESS_TOKEN_TTL = 3600;

/**
 * Static client metadata handed to oidc-provider. jwtBearer: the exchange clients also have
 * the jwt-bearer grant (only when it is registered: oidc-provider refuses a client whose
 * grant_types name a grant it does not know).
 */
export function staticClients({ jwtBearer = false } = {}) {
  const exchangeGrants = [TOKEN_EXCHANGE.grantType, ...(jwtBearer ? [JWT_BEARER.grantType] : [])];
  const clients = [
    {
      // The gateway: introspection, revocation and token exchange; basic or post
      // authentication.
      client_id: GATEWAY_CLIENT.id,
      client_secret: GATEWAY_CLIENT.secret,
      client_name: 'mcpgate gateway (introspection)',
      grant_types: [...exchangeGrants],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      // The gateway asking for upstream tokens: token exchange (RFC 8693), and its own
      // token (client_credentials) for what no caller is there for (an upstream's catalog).
      client_id: EXCHANGE_CLIENT.id,
      client_secret: EXCHANGE_CLIENT.secret,
      client_name: 'mcpgate gateway (token exchange)',
      grant_types: [...exchangeGrants, 'client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      // Public native client: RFC 8252 loopback redirect URIs, any port.
      client_id: USER_CLIENT.id,
      client_name: 'mcpgate test CLI',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [
        'http://127.0.0.1/callback',
        'http://localhost/callback',
        'http://[::1]/callback',
      ],
    },
  ];
  for (const [id, m] of Object.entries(MACHINE_CLIENTS)) {
    const c = {
      client_id: id,
      client_secret: secretFor(id),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    };
    if (m.tenant !== undefined) c.tenant = m.tenant;
    if (m.groups.length) c.groups = [...m.groups];
    clients.push(c);
  }
  return clients;
}
