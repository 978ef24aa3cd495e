#!/usr/bin/env node
// Test OAuth authorization server for mcpgate (oidc-provider). See README.md.
//
//   node tests/idp/server.mjs --port P [--host 127.0.0.1] --resource URL [--resource URL2 ...]
//        [--ready-file F] [--default-user alice] [--strict-cookies] [--login-pages [--headless-client ID ...]] [--quiet]
//        [--token-format opaque|jwt] [--jwt-alg RS256|PS256|ES256] [--no-introspection]
//        [--id-jag-audience AS_ISSUER ...] [--trust-id-jag ISSUER ...] [--access-ttl SECONDS]
//        [--cimd] [--no-registration]
//
// Prints exactly one line on stdout, "ready http://HOST:P", once listening (also written to
// --ready-file). Everything else goes to stderr. Stops on SIGTERM/SIGINT.

import { announceReady, commandLine } from '../lib/server-cli.mjs';

const USAGE = 'usage: server.mjs --port P [--host 127.0.0.1] --resource URL [--resource URL ...] [--ready-file F] ' +
  '[--default-user NAME] [--strict-cookies] [--login-pages [--headless-client ID ...]] [--quiet] [--token-format opaque|jwt] ' +
  '[--jwt-alg RS256|PS256|ES256] [--no-introspection] [--id-jag-audience AS_ISSUER ...] [--trust-id-jag ISSUER ...] ' +
  '[--access-ttl SECONDS] [--cimd] [--no-registration]';

const { args, usage } = commandLine('server.mjs', USAGE, {
  resource: { type: 'string', multiple: true },
  'default-user': { type: 'string', default: 'alice' },
  'strict-cookies': { type: 'boolean', default: false },
  'login-pages': { type: 'boolean', default: false },
  'headless-client': { type: 'string', multiple: true, default: [] },
  'token-format': { type: 'string', default: 'opaque' },
  'jwt-alg': { type: 'string', default: 'RS256' },
  'no-introspection': { type: 'boolean', default: false },
  'id-jag-audience': { type: 'string', multiple: true, default: [] },
  'trust-id-jag': { type: 'string', multiple: true, default: [] },
  'access-ttl': { type: 'string' },
  cimd: { type: 'boolean', default: false },
  'no-registration': { type: 'boolean', default: false },
});
if (args.port === undefined || !/^\d+$/.test(args.port) || Number(args.port) > 65535) {
  usage('--port is required (0 = any free port)');
}
if (!args.resource?.length) usage('at least one --resource is required');
if (args['headless-client'].length && !args['login-pages']) usage('--headless-client goes with --login-pages');
if (args['access-ttl'] !== undefined && !/^[1-9]\d{0,4}$/.test(args['access-ttl'])) usage('--access-ttl takes whole seconds, 1 or more');

const log = args.quiet ? () => {} : (m) => process.stderr.write(`idp: ${m}\n`);

// oidc-provider prints notices with console.info (stdout): keep stdout for the ready line.
// --quiet also drops its warnings (on Node 20 it always warns "Unsupported runtime", see
// README.md); console.error (errors) is kept.
const toStderr = (...a) => console.error(...a);
console.info = args.quiet ? () => {} : toStderr;
console.log = args.quiet ? () => {} : toStderr;
if (args.quiet) console.warn = () => {};

const { createIdp } = await import('./idp.mjs');

let idp;
try {
  idp = await createIdp({
    port: Number(args.port),
    host: args.host,
    resources: args.resource,
    defaultUser: args['default-user'],
    strictCookies: args['strict-cookies'],
    tokenFormat: args['token-format'],
    jwtAlg: args['jwt-alg'],
    introspection: !args['no-introspection'],
    loginPages: args['login-pages'],
    headlessClients: args['headless-client'],
    idJagAudiences: args['id-jag-audience'],
    trustIdJag: args['trust-id-jag'],
    accessTtl: args['access-ttl'] === undefined ? undefined : Number(args['access-ttl']),
    cimd: args.cimd,
    registration: !args['no-registration'],
    log,
  });
} catch (e) {
  process.stderr.write(`server.mjs: ${e.message}\n`);
  process.exit(1);
}

announceReady(idp.issuer, args['ready-file']);
log(`issuer ${idp.issuer}; resources ${args.resource.join(' ')}`);
if (args['id-jag-audience'].length) log(`ID-JAGs for ${args['id-jag-audience'].join(' ')}`);
if (args['trust-id-jag'].length) log(`jwt-bearer: trusts the ID-JAGs of ${args['trust-id-jag'].join(' ')}`);
if (args.cimd) log('client IDs may be the URLs of Client ID Metadata Documents on loopback hosts');
if (args['no-registration']) log('no dynamic client registration');

let stopping = false;
function stop(sig) {
  if (stopping) return;
  stopping = true;
  log(`${sig}: stopping`);
  const force = setTimeout(() => process.exit(0), 2000);
  force.unref();
  idp.close().then(() => process.exit(0));
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// A suite that dies without its cleanup leaves this server an orphan: it stops when its
// parent is gone (its parent process id changes), so nothing outlives the run.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) stop('parent gone'); }, 500).unref();
