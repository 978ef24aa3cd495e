#!/usr/bin/env node
// tests/www/validate-live.mjs — runs the built gateway as a CGI program and validates its live
// answers against www/openapi.json: every status must be one the description lists for the
// operation, and every JSON body must match the schema of that response (ajv, JSON Schema 2020-12).
// Answers outside the six operations (404 unknown path, 405 wrong method, 413 oversize) must be
// HttpError bodies.
//
// Environment: MCPGATE_BIN = absolute path of the built binary (default: src/mcpgate of this
// tree); a missing binary is a failure, never a skip. TAP on stdout; exits non-zero when a test failed.
// Needs `npm ci --prefix tests` first.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChecked, top } from './lib/openapi-ajv.mjs';
import { done, ok } from '../lib/tap.mjs';

// ---------------------------------------------------------------------------------------------
// The binary and its configuration.

const bin = process.env.MCPGATE_BIN || join(top, 'src', 'mcpgate');
if (!existsSync(bin)) {
  ok(false, 'the gateway binary exists (build it, or set MCPGATE_BIN)', `no file at ${bin}`);
  done();
}

const RESOURCE = 'http://127.0.0.1:8080/mcp';
const ISSUER = 'http://127.0.0.1:8081';
const MAX_BODY = 1024;
const cfg = {
  name: 'com.example/gateway',
  version: '1.0.0',
};
const dir = mkdtempSync(join(tmpdir(), 'mcpgate-validate-live-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const conf = join(dir, 'mcpgate.conf');
writeFileSync(conf, `[gateway]
resource = ${RESOURCE}
docs-url = http://127.0.0.1:8080/docs
name = ${cfg.name}
title = Example gateway
description = Test gateway
version = ${cfg.version}
website-url = https://example.com
max-body = ${MAX_BODY}
state = ${join(dir, 'state')}
[auth]
issuer = ${ISSUER}
scopes-supported = mcp:tools
required-scopes = mcp:tools
`);

// One CGI request: returns { status, headers (lower-case name -> array of values), raw, body,
// stderr, error } where error describes a malformed CGI answer.
function cgi(method, path, { headers = {}, body = '', contentType, query = '' } = {}) {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GATEWAY_INTERFACE: 'CGI/1.1',
    REQUEST_METHOD: method,
    SCRIPT_NAME: path,
    PATH_INFO: '',
    QUERY_STRING: query,
    SERVER_NAME: '127.0.0.1',
    SERVER_PORT: '8080',
    SERVER_PROTOCOL: 'HTTP/1.1',
    REMOTE_ADDR: '127.0.0.1',
    HTTP_HOST: '127.0.0.1:8080',
  };
  for (const [name, value] of Object.entries(headers)) {
    env[`HTTP_${name.toUpperCase().replaceAll('-', '_')}`] = value;
  }
  const input = Buffer.from(body);
  if (input.length > 0 || method === 'POST') env.CONTENT_LENGTH = String(input.length);
  if (contentType) env.CONTENT_TYPE = contentType;

  const r = spawnSync(bin, [], { env: { ...env, MCPGATE_CONFIG: conf }, input, timeout: 20000, maxBuffer: 8 << 20 });
  const res = { status: 0, headers: {}, raw: r.stdout ?? Buffer.alloc(0), body: '', stderr: String(r.stderr ?? '') };
  // A CGI program need not read its request body (RFC 3875 section 4.2): when it answers
  // early, writing the rest of the body fails with EPIPE, and its answer still counts.
  if (r.error && !(r.error.code === 'EPIPE' && res.raw.length > 0)) {
    return { ...res, error: `could not run ${bin}: ${r.error.message}` };
  }
  const out = res.raw.toString('utf8');
  const end = out.indexOf('\r\n\r\n');
  if (end < 0) return { ...res, error: `no CRLF CRLF after the CGI header block:\n${out.slice(0, 500)}\n${res.stderr}` };
  res.body = out.slice(end + 4);
  for (const line of out.slice(0, end).split('\r\n')) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/.exec(line);
    if (!m) return { ...res, error: `malformed CGI header line: ${JSON.stringify(line)}` };
    const name = m[1].toLowerCase();
    (res.headers[name] ??= []).push(m[2]);
  }
  const st = res.headers.status?.[0];
  if (st === undefined) res.status = 200; // CGI default when no Status line is given
  else if (/^[1-5][0-9]{2}( .*)?$/.test(st)) res.status = Number(st.slice(0, 3));
  else return { ...res, error: `malformed Status header: ${JSON.stringify(st)}` };
  return res;
}
const header = (res, name) => res.headers[name.toLowerCase()]?.[0];

// ---------------------------------------------------------------------------------------------
// The description and its schemas.

const api = loadChecked('www/openapi.json loads and all its schemas compile with ajv (draft 2020-12, strict)');
const { doc, deref } = api;

const ops = {};
for (const [path, item] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(item)) ops[op.operationId] = { path, method: method.toUpperCase(), op };
}

const validatorFor = api.validator;
function schemaName(schema) {
  return schema?.$ref?.split('/').pop() ?? 'inline schema';
}

function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: e.message };
  }
}

// Checks a JSON body against a schema; one TAP line.
function checkBody(label, res, schema) {
  const parsed = parseJson(res.body);
  if (parsed.error) return ok(false, `${label}: body is JSON`, `${parsed.error}\n${res.body.slice(0, 300)}`);
  const validate = validatorFor(schema);
  return ok(validate(parsed.value), `${label}: body matches ${schemaName(schema)}`,
    { errors: validate.errors, body: parsed.value });
}

function checkJsonType(label, res) {
  ok(/^application\/json\s*(;|$)/i.test(header(res, 'Content-Type') ?? ''),
    `${label}: Content-Type is application/json`, `got ${JSON.stringify(header(res, 'Content-Type'))}`);
}

// Error answers: X-Request-Id present and equal to the body's request_id.
function checkRequestId(label, res) {
  const id = header(res, 'X-Request-Id');
  const body = parseJson(res.body).value;
  ok(typeof id === 'string' && id.length > 0 && body?.request_id === id,
    `${label}: X-Request-Id is present and equals the body's request_id`,
    `header ${JSON.stringify(id)}, body request_id ${JSON.stringify(body?.request_id)}`);
}

// Runs the request and checks it against the operation's description. Returns the response, or
// null when the CGI answer itself was unusable.
function exchange(label, res) {
  if (!ok(!res.error, `${label}: well-formed CGI answer`, res.error)) return null;
  return res;
}

function describedCheck(label, operationId, res) {
  const { op } = ops[operationId];
  const listed = Object.keys(op.responses);
  const spec = op.responses[String(res.status)];
  if (!ok(spec !== undefined, `${label}: status ${res.status} is one ${operationId} describes (${listed.join(', ')})`,
    res.body.slice(0, 500))) return;
  const response = deref(spec);
  const media = response.content?.['application/json'];
  if (media) {
    checkJsonType(label, res);
    checkBody(label, res, media.schema);
  } else if (!response.content) {
    ok(res.body.length === 0, `${label}: no body, as described for ${res.status}`, res.body.slice(0, 300));
  }
  for (const [name, h] of Object.entries(response.headers ?? {})) {
    const hd = deref(h);
    if (hd.required) ok(header(res, name) !== undefined, `${label}: ${name} header is present`);
  }
  if (res.status >= 400) checkRequestId(label, res);
}

function undescribedError(label, res, want) {
  ok(res.status === want, `${label}: status is ${want}`, `got ${res.status}\n${res.body.slice(0, 300)}`);
  checkJsonType(label, res);
  checkBody(label, res, { $ref: '#/components/schemas/HttpError' });
  checkRequestId(label, res);
}

// ---------------------------------------------------------------------------------------------
// Public GET operations.

const bodies = {};
const publicGets = [
  ['getMcpHealth', '/mcp/health'],
  ['getMcpMetadata', '/.well-known/mcp'],
  ['getOAuthProtectedResourceMetadata', '/.well-known/oauth-protected-resource'],
  ['getOAuthProtectedResourceMetadata', '/.well-known/oauth-protected-resource/mcp'],
  ['getMcpRegistryManifest', '/server.json'],
];
for (const [operationId, path] of publicGets) {
  const label = `GET ${path}`;
  const res = exchange(label, cgi('GET', path));
  if (!res) continue;
  ok(res.status === 200, `${label}: status 200`, `got ${res.status}\n${res.body.slice(0, 300)}\n${res.stderr}`);
  describedCheck(label, operationId, res);
  bodies[path] = parseJson(res.body).value;
}

// The authorization-server metadata mirror: 200 with the document, or 500 HttpError while it
// cannot be obtained; either is checked against what the description says for that status.
{
  const label = 'GET /.well-known/oauth-authorization-server';
  const res = exchange(label, cgi('GET', '/.well-known/oauth-authorization-server'));
  if (res) describedCheck(label, 'getOAuthAuthorizationServerMetadata', res);
}

// What the documents say must agree with the configuration they were built from.
{
  const prm = bodies['/.well-known/oauth-protected-resource'];
  const prmMcp = bodies['/.well-known/oauth-protected-resource/mcp'];
  ok(prm?.resource === RESOURCE, 'protected-resource metadata: resource is the configured resource',
    `got ${JSON.stringify(prm?.resource)}`);
  ok(Array.isArray(prm?.authorization_servers) && prm.authorization_servers.includes(ISSUER),
    'protected-resource metadata: authorization_servers holds the configured issuer',
    `got ${JSON.stringify(prm?.authorization_servers)}`);
  ok(prm !== undefined && JSON.stringify(prm) === JSON.stringify(prmMcp),
    'both protected-resource metadata addresses serve the same document');
  const meta = bodies['/.well-known/mcp'];
  ok(meta?.endpoint === RESOURCE, 'MCP metadata: endpoint is the configured resource',
    `got ${JSON.stringify(meta?.endpoint)}`);
  const manifest = bodies['/server.json'];
  ok(manifest?.name === cfg.name && manifest?.version === cfg.version,
    'server.json: name and version are the configured ones',
    `got ${JSON.stringify({ name: manifest?.name, version: manifest?.version })}`);
}

// ---------------------------------------------------------------------------------------------
// POST /mcp.

const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const mcpHeaders = { Accept: 'application/json, text/event-stream' };

function checkChallenge(label, res) {
  const challenge = header(res, 'WWW-Authenticate') ?? '';
  ok(/^Bearer /.test(challenge) && challenge.includes('resource_metadata="'),
    `${label}: WWW-Authenticate is a Bearer challenge with resource_metadata`,
    `got ${JSON.stringify(challenge)}`);
  const url = /resource_metadata="([^"]*)"/.exec(challenge)?.[1];
  let path;
  try {
    path = new URL(url).pathname;
  } catch {
    path = undefined;
  }
  ok(path === '/.well-known/oauth-protected-resource/mcp' || path === '/.well-known/oauth-protected-resource',
    `${label}: resource_metadata is the absolute URL of the protected-resource metadata`,
    `got ${JSON.stringify(url)}`);
}

for (const [label, auth] of [
  ['POST /mcp without Authorization', {}],
  ['POST /mcp with a Basic credential', { Authorization: 'Basic dXNlcjpwYXNz' }],
]) {
  const res = exchange(label, cgi('POST', '/mcp', { headers: { ...mcpHeaders, ...auth }, body: toolsList, contentType: 'application/json' }));
  if (res) {
    ok(res.status === 401, `${label}: status 401`, `got ${res.status}\n${res.body.slice(0, 300)}`);
    describedCheck(label, 'exchangeMcpMessage', res);
    checkChallenge(label, res);
  }
}
{
  // Nothing answers introspection here: whatever the gateway says (401, or 500 while the
  // authorization server cannot be reached) must be what the description lists.
  const label = 'POST /mcp with an unverifiable bearer token';
  const res = exchange(label, cgi('POST', '/mcp', {
    headers: { ...mcpHeaders, Authorization: 'Bearer not-a-real-token' }, body: toolsList, contentType: 'application/json',
  }));
  if (res) describedCheck(label, 'exchangeMcpMessage', res);
}

// ---------------------------------------------------------------------------------------------
// Outside the six operations: HttpError bodies.

{
  const label = 'GET /no-such-path';
  const res = exchange(label, cgi('GET', '/no-such-path'));
  if (res) undescribedError(label, res, 404);
}
for (const [method, path, allowed] of [['PUT', '/.well-known/mcp', 'GET'], ['GET', '/mcp', 'POST']]) {
  const label = `${method} ${path}`;
  const res = exchange(label, cgi(method, path));
  if (!res) continue;
  undescribedError(label, res, 405);
  const allow = (header(res, 'Allow') ?? '').split(',').map((s) => s.trim());
  ok(allow.includes(allowed), `${label}: Allow lists ${allowed}`, `got ${JSON.stringify(header(res, 'Allow'))}`);
}
{
  const label = `POST /mcp with a body over max-body (${MAX_BODY + 1} bytes)`;
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(MAX_BODY) } });
  const res = exchange(label, cgi('POST', '/mcp', {
    headers: mcpHeaders, body: big.slice(0, MAX_BODY + 1), contentType: 'application/json',
  }));
  if (res) undescribedError(label, res, 413);
}

done();
