#!/usr/bin/env node
// Mint, revoke or introspect tokens of the test authorization server (server.mjs).
//
//   token.mjs --issuer URL --client machine-acme [--scope "mcp:tools"] [--resource URL]
//   token.mjs --issuer URL --user alice [--scope "mcp:tools offline_access"] [--resource URL]
//   token.mjs --issuer URL --refresh RT [--resource URL]
//   token.mjs --issuer URL --exchange TOKEN [--as gateway-exchange] [--resource URL] [--scope S]
//   token.mjs --issuer URL --exchange TOKEN --id-jag AS_ISSUER [--resource URL] [--scope S]
//   token.mjs --issuer URL --jwt-bearer ID_JAG [--as gateway-exchange] [--scope S]
//   token.mjs --issuer URL --revoke TOKEN
//   token.mjs --issuer URL --introspect TOKEN
//
// Prints one JSON object on stdout: {"access_token","refresh_token"?,"expires_in","scope",
// "token_type"}, {"revoked":true}, the raw introspection response, or the token exchange
// response (RFC 8693: "issued_token_type" too; with --id-jag the ID-JAG in "access_token").
// Errors: stderr, exit 1.
// --scope defaults to "mcp:tools" (--exchange: the subject token's); --scope "" sends no
// scope. --issuer defaults to $IDP_ISSUER.

import { parseArgs } from 'node:util';

import {
  EXCHANGE_CLIENT, clientToken, exchangeToken, idJag, introspect, jwtBearer, refreshToken,
  revokeToken, userToken,
} from './lib.mjs';

const USAGE = `usage:
  token.mjs --issuer URL --client ID [--secret S] [--scope "mcp:tools"] [--resource URL] [--auth basic|post]
  token.mjs --issuer URL --user NAME [--scope "mcp:tools offline_access"] [--resource URL] [--redirect-uri URI] [--no-cookies]
  token.mjs --issuer URL --refresh REFRESH_TOKEN [--resource URL] [--scope S]
  token.mjs --issuer URL --exchange ACCESS_TOKEN [--as CLIENT] [--secret S] [--resource URL] [--scope S] [--audience A]
  token.mjs --issuer URL --exchange ACCESS_TOKEN --id-jag AS_ISSUER [--as CLIENT] [--secret S] [--resource URL] [--scope S]
  token.mjs --issuer URL --jwt-bearer ID_JAG [--as CLIENT] [--secret S] [--scope S]
  token.mjs --issuer URL --revoke TOKEN
  token.mjs --issuer URL --introspect TOKEN [--as CLIENT]
`;

function fail(msg, code = 1) {
  process.stderr.write(`token.mjs: ${msg}\n`);
  if (code === 2) process.stderr.write(USAGE);
  process.exit(code);
}

// A token is base64url: one in 64 begins with '-', which parseArgs would take for an
// option. The options that take a token get it joined as --opt=TOKEN.
const TOKEN_OPTIONS = new Set(['--refresh', '--exchange', '--jwt-bearer', '--revoke', '--introspect']);
const argv = [];
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i];
  if (TOKEN_OPTIONS.has(arg) && i + 1 < process.argv.length) argv.push(`${arg}=${process.argv[++i]}`);
  else argv.push(arg);
}

let a;
try {
  ({ values: a } = parseArgs({
    args: argv,
    options: {
      issuer: { type: 'string', default: process.env.IDP_ISSUER },
      client: { type: 'string' },
      secret: { type: 'string' },
      user: { type: 'string' },
      scope: { type: 'string' },
      resource: { type: 'string' },
      auth: { type: 'string', default: 'basic' },
      'redirect-uri': { type: 'string' },
      'no-cookies': { type: 'boolean', default: false },
      refresh: { type: 'string' },
      exchange: { type: 'string' },
      audience: { type: 'string' },
      'id-jag': { type: 'string' },
      'jwt-bearer': { type: 'string' },
      revoke: { type: 'string' },
      introspect: { type: 'string' },
      as: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (e) {
  fail(e.message, 2);
}
if (a.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (!a.issuer) fail('--issuer is required (or set IDP_ISSUER)', 2);
const modes = ['client', 'user', 'refresh', 'exchange', 'jwt-bearer', 'revoke', 'introspect'].filter((m) => a[m] !== undefined);
if (modes.length !== 1) fail('give exactly one of --client, --user, --refresh, --exchange, --jwt-bearer, --revoke, --introspect', 2);
if (a['id-jag'] !== undefined && modes[0] !== 'exchange') fail('--id-jag goes with --exchange', 2);
if (a['id-jag'] !== undefined && a.audience !== undefined) fail('--id-jag names the audience: no --audience with it', 2);
if (!['basic', 'post'].includes(a.auth)) fail('--auth must be basic or post', 2);

const issuer = a.issuer.replace(/\/+$/, '');
const scope = a.scope ?? 'mcp:tools';

try {
  let out;
  switch (modes[0]) {
    case 'client':
      out = await clientToken({
        issuer, client: a.client, secret: a.secret, scope, resource: a.resource, auth: a.auth,
      });
      break;
    case 'user':
      out = await userToken({
        issuer,
        user: a.user,
        scope,
        resource: a.resource,
        redirectUri: a['redirect-uri'],
        cookies: !a['no-cookies'],
      });
      break;
    case 'refresh':
      out = await refreshToken({
        issuer, refreshToken: a.refresh, resource: a.resource, scope: a.scope,
      });
      break;
    case 'exchange': {
      const client = a.as ?? EXCHANGE_CLIENT.id;
      const exchange = a['id-jag'] !== undefined
        ? (o) => idJag({ ...o, audience: a['id-jag'] }) : exchangeToken;
      out = await exchange({
        issuer,
        client,
        secret: a.secret,
        subjectToken: a.exchange,
        resource: a.resource,
        scope: a.scope || undefined,
        audience: a.audience,
        auth: a.auth,
      });
      if (out.error) throw new Error(`token exchange: ${out.error}${out.error_description ? `: ${out.error_description}` : ''}`);
      break;
    }
    case 'jwt-bearer':
      out = await jwtBearer({
        issuer,
        client: a.as ?? EXCHANGE_CLIENT.id,
        secret: a.secret,
        assertion: a['jwt-bearer'],
        scope: a.scope || undefined,
        auth: a.auth,
      });
      if (out.error) throw new Error(`jwt-bearer: ${out.error}${out.error_description ? `: ${out.error_description}` : ''}`);
      break;
    case 'revoke':
      out = await revokeToken({ issuer, token: a.revoke });
      break;
    case 'introspect':
      out = await introspect({ issuer, token: a.introspect, client: a.as, auth: a.auth });
      break;
    default:
      break;
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
} catch (e) {
  fail(e.message);
}
