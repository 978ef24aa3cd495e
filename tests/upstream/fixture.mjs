#!/usr/bin/env node
// Upstream MCP fixture server for mcpgate federation tests (official TypeScript SDK,
// Streamable HTTP, stateful sessions). It exposes every tool, resource and prompt the
// MCP conformance suite (0.1.16) calls, so the suite can run through the gateway, plus a
// few helpers for relay tests. See README.md.
//
//   node tests/upstream/fixture.mjs --port P [--host 127.0.0.1] [--ready-file F] [--name NAME]
//        [--tools N] [--page-size N] [--json] [--no-resume] [--retry-ms MS]
//        [--keepalive-ms MS] [--allow-host NAME ...] [--files DIR] [--notes] [--announce] [--watched-uri URI] [--bulk]
//        [--padded-tools N] [--defs] [--quiet]
//        [--modern | --modern-only]
//        [--require-bearer ISSUER [--introspect-client ID:SECRET] [--resource URL] [--prm-path PATH [--prm-host NAME]]
//         [--public-list]]
//
// --modern serves the stateless 2026-07-28 revision too (modern.mjs), --modern-only that
// revision alone. GET /_traffic counts what arrived, by method and revision.
//
// Prints exactly one line on stdout, "ready http://HOST:PORT/mcp", once listening (also
// written to --ready-file, whole, by rename). Everything else goes to stderr. Listens on a
// loopback address only. Stops on SIGTERM/SIGINT.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { announceReady, commandLine } from '../lib/server-cli.mjs';
import { GATEWAY_CLIENT, RESOURCE_SCOPES } from '../idp/fixtures.mjs';
import { MODERN, createModern } from './modern.mjs';

// ---------------------------------------------------------------------------------------
// Command line

const USAGE = 'usage: fixture.mjs --port P [--host 127.0.0.1] [--ready-file F] [--name NAME] [--tools N] ' +
  '[--page-size N] [--json] [--no-resume] [--retry-ms MS] [--keepalive-ms MS] [--allow-host NAME ...] [--files DIR] ' +
  '[--notes] [--announce] [--watched-uri URI] [--bulk] [--schemas] [--padded-tools N] [--defs] [--quiet] [--modern | --modern-only] [--require-bearer ISSUER [--introspect-client ID:SECRET] [--resource URL] [--per-subject] [--prm-path PATH [--prm-host NAME]] [--public-list]]';

const { args, usage } = commandLine('fixture.mjs', USAGE, {
  name: { type: 'string', default: 'mcpgate-upstream-fixture' },
  tools: { type: 'string', default: '0' },
  'page-size': { type: 'string', default: '0' },
  json: { type: 'boolean', default: false },
  'no-resume': { type: 'boolean', default: false },
  'retry-ms': { type: 'string', default: '500' },
  'keepalive-ms': { type: 'string', default: '15000' },
  'allow-host': { type: 'string', multiple: true, default: [] },
  files: { type: 'string' },
  notes: { type: 'boolean', default: false },
  announce: { type: 'boolean', default: false },
  'watched-uri': { type: 'string', default: 'test://watched-resource' },
  bulk: { type: 'boolean', default: false },
  schemas: { type: 'boolean', default: false },
  'padded-tools': { type: 'string', default: '0' },
  defs: { type: 'boolean', default: false },
  'require-bearer': { type: 'string' },
  'introspect-client': { type: 'string' },
  resource: { type: 'string' },
  'per-subject': { type: 'boolean', default: false },
  'prm-path': { type: 'string' },
  'prm-host': { type: 'string' },
  'public-list': { type: 'boolean', default: false },
  modern: { type: 'boolean', default: false },
  'modern-only': { type: 'boolean', default: false },
});
if (args.modern && args['modern-only']) usage('--modern and --modern-only exclude each other');
if (!/^[a-z][a-z0-9+.-]*:\/\/[\x21-\x7e]+$/.test(args['watched-uri'])) usage('--watched-uri must be a URI (scheme://, visible ASCII)');

function count(name, max) {
  const v = args[name];
  if (!/^\d+$/.test(v) || Number(v) > max) usage(`--${name} must be an integer from 0 to ${max}`);
  return Number(v);
}
if (args.port === undefined) usage('--port is required (0 = any free port)');
const port = count('port', 65535);
const extraTools = count('tools', 100000);
const paddedTools = count('padded-tools', 100000);
const pageSize = count('page-size', 100000);
const retryMs = count('retry-ms', 600000);
const keepAliveMs = count('keepalive-ms', 3600000);

// Loopback only: never all interfaces.
const host = args.host;
const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
if (!loopback) usage(`--host must be a loopback address (127.x.x.x, ::1 or localhost), not ${host}`);

// --require-bearer ISSUER: every request to /mcp needs a bearer token that ISSUER's
// introspection says is active and meant for this server's resource (see "Bearer mode").
// Its protected resource metadata (RFC 9728) is at the well-known URL, or with
// --prm-path PATH only at PATH (the well-known URL answers 404), which its 401 names
// (resource_metadata, RFC 9728 §5.1) on this server's origin, or with --prm-host NAME
// under that host name instead of its address (another origin, the same server: what
// a gateway fetches there is seen in the record).
function httpUrl(name) {
  let u;
  try { u = new URL(args[name]); } catch { usage(`--${name} must be an http(s) URL`); }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') usage(`--${name} must be an http(s) URL`);
  return u;
}
let bearer = null;
if (args['require-bearer'] !== undefined) {
  httpUrl('require-bearer');
  if (args.resource !== undefined) httpUrl('resource');
  const ic = args['introspect-client'] ?? `${GATEWAY_CLIENT.id}:${GATEWAY_CLIENT.secret}`;
  const colon = ic.indexOf(':');
  if (colon <= 0) usage('--introspect-client must be ID:SECRET');
  bearer = {
    issuer: args['require-bearer'].replace(/\/+$/, ''),
    clientId: ic.slice(0, colon),
    clientSecret: ic.slice(colon + 1),
    resource: args.resource ?? null,	// default: this server's own MCP URL, known once listening
    metadataUrl: null,
    prmPath: args['prm-path'] ?? null,
    middleware: null,
    seen: { accepted: [], rejected: [], metadata: [] },
  };
  if (bearer.prmPath !== null && (!/^\/[A-Za-z0-9._~\/-]*$/.test(bearer.prmPath) || bearer.prmPath === '/mcp' ||
      bearer.prmPath.startsWith('/_seen') || bearer.prmPath.startsWith('/_traffic') || bearer.prmPath.startsWith('/_defs') || bearer.prmPath.startsWith('/.well-known/'))) {
    usage('--prm-path must be a path of its own (/ and [A-Za-z0-9._~-]), not /mcp, /_seen, /_traffic, /_defs or /.well-known/');
  }
  if (args['prm-host'] !== undefined && bearer.prmPath === null) usage('--prm-host goes with --prm-path');
} else if (args['introspect-client'] !== undefined || args.resource !== undefined || args['prm-path'] !== undefined ||
    args['prm-host'] !== undefined || args['per-subject'] || args['public-list']) {
  usage('--introspect-client, --resource, --per-subject, --prm-path and --public-list go with --require-bearer');
}

const log = args.quiet ? () => {} : (m) => process.stderr.write(`upstream[${args.name}]: ${m}\n`);

// Host and Origin names accepted (DNS-rebinding protection, as the SDK's Express helper).
const allowedHostnames = new Set(['localhost', '127.0.0.1', '[::1]', host.includes(':') ? `[${host}]` : host,
  ...args['allow-host'].map((h) => h.toLowerCase())]);

// ---------------------------------------------------------------------------------------
// Fixture data

// A 1x1 red PNG and a short silent WAV (8 kHz, mono, 16-bit, 8 samples).
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const WAV_BASE64 = (() => {
  const samples = 8, data = samples * 2, b = Buffer.alloc(44 + data);
  b.write('RIFF', 0); b.writeUInt32LE(36 + data, 4); b.write('WAVE', 8);
  b.write('fmt ', 12); b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24); b.writeUInt32LE(16000, 28); b.writeUInt16LE(2, 32); b.writeUInt16LE(16, 34);
  b.write('data', 36); b.writeUInt32LE(data, 40);
  return b.toString('base64');
})();

const NO_ARGS = { type: 'object', additionalProperties: false };
const sleep = (ms, signal) => new Promise((resolve) => {
  if (signal?.aborted) return resolve();
  const t = setTimeout(done, ms);
  function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); }
  signal?.addEventListener('abort', done, { once: true });
});
const text = (t) => ({ type: 'text', text: t });
const result = (t) => ({ content: [text(t)] });

// Sends a log message on the request's stream unless the session's level filters it out.
async function logTo(server, extra, level, data) {
  if (server.isMessageIgnored(level, extra.sessionId)) return;
  await extra.sendNotification({ method: 'notifications/message', params: { level, logger: args.name, data } });
}
async function progressTo(extra, progress, total, message) {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return;
  await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, message } });
}
// Server-to-client requests go on the tool call's own stream; with --json there is none
// (the SDK drops related messages), so they go on the session's GET stream instead.
function askClient(server, extra, request, schema) {
  return args.json ? server.request(request, schema) : extra.sendRequest(request, schema);
}
function requireClientCapability(server, cap) {
  if (!server.getClientCapabilities()?.[cap]) {
    return { isError: true, content: [text(`the client did not declare the ${cap} capability`)] };
  }
  return null;
}

// Tools: name → { tool (as listed), call(server, session, args, extra) → CallToolResult }.
const TOOLS = new Map();
function tool(name, description, inputSchema, call, more = {}) {
  TOOLS.set(name, { tool: { name, description, inputSchema, ...more }, call });
}

tool('test_simple_text', 'Returns one text content item', NO_ARGS,
  () => result('This is a simple text response for testing.'));
tool('test_image_content', 'Returns one image content item (a 1x1 PNG)', NO_ARGS,
  () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }));
tool('test_audio_content', 'Returns one audio content item (a short WAV)', NO_ARGS,
  () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }));
tool('test_embedded_resource', 'Returns one embedded text resource', NO_ARGS,
  () => ({
    content: [{
      type: 'resource',
      resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
    }],
  }));
tool('test_multiple_content_types', 'Returns text, image and embedded resource content', NO_ARGS,
  () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) },
      },
    ],
  }));
tool('test_error_handling', 'Always fails with a tool error (isError: true)', NO_ARGS,
  () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }));
tool('test_tool_with_logging', 'Sends three info log notifications 50 ms apart, then returns', NO_ARGS,
  async (server, session, a, extra) => {
    await logTo(server, extra, 'info', 'Tool execution started');
    await sleep(50, extra.signal);
    await logTo(server, extra, 'info', 'Tool processing data');
    await sleep(50, extra.signal);
    await logTo(server, extra, 'info', 'Tool execution completed');
    return result('Tool with logging executed successfully');
  });
tool('test_tool_with_progress', 'Reports progress 0, 50 and 100 of 100, 50 ms apart, when given a progress token', NO_ARGS,
  async (server, session, a, extra) => {
    for (const p of [0, 50, 100]) {
      if (p) await sleep(50, extra.signal);
      await progressTo(extra, p, 100, `Completed step ${p} of 100`);
    }
    return result(`Progress test completed (token ${JSON.stringify(extra._meta?.progressToken ?? null)})`);
  });
tool('test_sampling', 'Asks the client for an LLM completion (sampling/createMessage) of the prompt',
  { type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] },
  async (server, session, a, extra) => {
    const missing = requireClientCapability(server, 'sampling');
    if (missing) return missing;
    const r = await askClient(server, extra, {
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: text(String(a.prompt ?? '')) }], maxTokens: 100 },
    }, CreateMessageResultSchema);
    const reply = Array.isArray(r.content) ? r.content.find((c) => c.type === 'text')?.text : r.content?.text;
    return result(`LLM response: ${reply ?? JSON.stringify(r.content)}`);
  });
async function elicit(server, extra, message, requestedSchema) {
  const missing = requireClientCapability(server, 'elicitation');
  if (missing) return missing;
  const r = await askClient(server, extra, { method: 'elicitation/create', params: { message, requestedSchema } }, ElicitResultSchema);
  return result(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
}
tool('test_elicitation', 'Asks the user for a username and email (elicitation/create)',
  { type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] },
  (server, session, a, extra) => elicit(server, extra, String(a.message ?? 'Please provide your information'), {
    type: 'object',
    properties: {
      username: { type: 'string', description: "User's response" },
      email: { type: 'string', description: "User's email address" },
    },
    required: ['username', 'email'],
  }));
tool('test_elicitation_sep1034_defaults', 'Elicitation whose schema has defaults for every primitive type (SEP-1034)', NO_ARGS,
  (server, session, a, extra) => elicit(server, extra, 'Please review and update the form fields with defaults', {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'User name', default: 'John Doe' },
      age: { type: 'integer', description: 'User age', default: 30 },
      score: { type: 'number', description: 'User score', default: 95.5 },
      status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', description: 'Verification status', default: true },
    },
    required: [],
  }));
tool('test_elicitation_sep1330_enums', 'Elicitation with the five enum schema variants (SEP-1330)', NO_ARGS,
  (server, session, a, extra) => elicit(server, extra, 'Please pick from the enums', {
    type: 'object',
    properties: {
      untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
      titledSingle: {
        type: 'string', description: 'Titled single-select',
        oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }],
      },
      legacyEnum: {
        type: 'string', description: 'Legacy titled enum', enum: ['opt1', 'opt2', 'opt3'],
        enumNames: ['Option One', 'Option Two', 'Option Three'],
      },
      untitledMulti: {
        type: 'array', description: 'Untitled multi-select', items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
      },
      titledMulti: {
        type: 'array', description: 'Titled multi-select',
        items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] },
      },
    },
    required: [],
  }));
tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features ($schema, $defs, additionalProperties)', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
}, (server, session, a) => result(`Received: ${JSON.stringify(a)}`));
tool('test_reconnection', 'Closes its SSE stream mid-call (SEP-1699) and answers after the client resumes with Last-Event-ID', NO_ARGS,
  async (server, session, a, extra) => {
    // Offered by the SDK only with an event store and a 2025-11-25 client, which can resume.
    if (extra.closeSSEStream) extra.closeSSEStream();
    await sleep(100, extra.signal);
    return result('Reconnection test completed successfully');
  });

// Helpers for relay tests (not called by the conformance suite).
tool('echo', 'Returns its arguments as JSON text', { type: 'object', additionalProperties: true },
  (server, session, a) => result(JSON.stringify(a)));
tool('slow', 'Sleeps ms milliseconds (default 1000), reporting progress every 100 ms; stops when cancelled', {
  type: 'object',
  properties: { ms: { type: 'integer', minimum: 0, maximum: 600000, description: 'How long to sleep' } },
  additionalProperties: false,
}, async (server, session, a, extra) => {
  const ms = Math.min(Math.max(Number.isFinite(a.ms) ? a.ms : 1000, 0), 600000);
  const start = Date.now();
  for (let done = 0; done < ms && !extra.signal.aborted;) {
    await sleep(Math.min(100, ms - done), extra.signal);
    done = Math.min(Date.now() - start, ms);
    if (!extra.signal.aborted) await progressTo(extra, done, ms, `slept ${done} of ${ms} ms`);
  }
  // The SDK aborts the signal when the client's notifications/cancelled names the request.
  if (extra.signal.aborted) {
    log(`slow ${ms} ms: request ${JSON.stringify(extra.requestId)} cancelled after ${Date.now() - start} ms` +
      ` (${String(extra.signal.reason ?? 'no reason')})`);
  }
  return result(`slept ${ms} ms`);
});
tool('request_headers', 'Returns the HTTP request headers this call arrived with, as JSON text', NO_ARGS,
  (server, session, a, extra) => result(JSON.stringify(extra.requestInfo?.headers ?? {})));
tool('rpc_error', 'Fails with a JSON-RPC error (not a tool result): code (default -32603) and message', {
  type: 'object',
  properties: { code: { type: 'integer' }, message: { type: 'string' } },
  additionalProperties: false,
}, (server, session, a) => {
  throw new McpError(Number.isInteger(a.code) ? a.code : ErrorCode.InternalError, typeof a.message === 'string' ? a.message : 'rpc_error tool');
});
tool('update_watched_resource', 'Changes the watched resource (test://watched-resource, or --watched-uri) and notifies every subscribed session (notifications/resources/updated)', NO_ARGS,
  async () => {
    watched.version++;
    let n = 0;
    for (const s of sessions.values()) {
      if (!s.subscriptions.has(WATCHED)) continue;
      n++;
      await s.server.sendResourceUpdated({ uri: WATCHED }).catch((e) => log(`resources/updated: ${e.message}`));
    }
    modern?.resourceUpdated(WATCHED);
    return result(`${WATCHED} is now version ${watched.version}; ${n} subscribed session(s) notified`);
  });
// --require-bearer: who the verified token says arrived (from its introspection).
if (bearer) {
  tool('whoami', 'Returns who the bearer token of this call names, from its introspection: {sub, client_id, aud, scope, act} as JSON text', NO_ARGS,
    (server, session, a, extra) => {
      const auth = extra.authInfo;
      if (!auth) return { isError: true, content: [text('no verified token on this call')] };
      return result(JSON.stringify({
        sub: auth.extra?.sub ?? null,
        client_id: auth.clientId ?? null,
        aud: auth.extra?.aud ?? null,
        scope: auth.scopes.join(' '),
        act: auth.extra?.act ?? null,
      }));
    });
}
for (let i = 0; i < extraTools; i++) {
  tool(`echo_${i}`, `Echo tool ${i} of ${extraTools}: returns its text argument`, {
    type: 'object', properties: { text: { type: 'string', description: 'Text to echo' } }, required: ['text'], additionalProperties: false,
  }, (server, session, a) => (typeof a.text === 'string' ? result(a.text) : { isError: true, content: [text('text (a string) is required')] }));
}

// --notes: a note kept in the upstream session, as a stateful server keeps what a
// client told it (a cart, a working directory, credentials it was given).
if (args.notes) {
  tool('note_put', 'Keeps a note in this session (replacing the last one)', {
    type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false,
  }, (server, session, a) => { session.note = String(a.text); return result('kept'); });
  tool('note_get', 'The note kept in this session, or "(none)"', NO_ARGS,
    (server, session) => result(session.note ?? '(none)'));
}

// --announce: a tool that says, on the session's standalone stream (GET), that the
// prompt list changed (it stays as it is), as a server of the revisions with sessions
// announces a change.
if (args.announce) {
  tool('announce_prompts_changed', 'Sends notifications/prompts/list_changed on this session\'s standalone stream', NO_ARGS,
    async (server) => { await server.sendPromptListChanged(); return result('announced'); });
}

// --padded-tools N: a0000 … tools with 4 KiB descriptions (named to sort first), as an
// upstream listing more than a catalog holds.
for (let i = 0; i < paddedTools; i++) {
  tool(`a${String(i).padStart(4, '0')}`, `Padded tool ${i}: ${'lorem ipsum '.repeat(341)}`, NO_ARGS, () => result(`padded ${i}`));
}

// --bulk: an answer as large as asked for, from a small request.
if (args.bulk) {
  tool('bulk', 'Returns a text of kib KiB (at most 65536)', {
    type: 'object', properties: { kib: { type: 'integer', minimum: 0, maximum: 65536 } }, required: ['kib'], additionalProperties: false,
  }, (server, session, a) => result('x'.repeat(Math.min(Number(a.kib) || 0, 65536) * 1024)));
}

// --schemas: tools whose schemas say what their arguments and results must be, each
// counting the calls that reach it (checked_calls tells), so that a test can see what a
// gateway let through.
if (args.schemas) {
  const calls = {};
  const checked = (name, description, inputSchema, call, more) =>
    tool(name, description, inputSchema, (...a) => { calls[name] = (calls[name] ?? 0) + 1; return call(...a); }, more);
  const SUM = { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'], additionalProperties: false };
  const INTS = {
    type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'], additionalProperties: false,
  };
  checked('checked_add', 'Adds two integers; the sum is structured content', INTS,
    (server, session, a) => ({ content: [text(String(a.a + a.b))], structuredContent: { sum: a.a + a.b } }),
    { outputSchema: SUM });
  checked('checked_bad_output', 'Declares an integer sum, returns a string one', INTS,
    () => ({ content: [text('three')], structuredContent: { sum: 'three' } }), { outputSchema: SUM });
  checked('checked_no_structured', 'Declares an output schema, returns text alone', INTS,
    () => ({ content: [text('3')] }), { outputSchema: SUM });
  checked('checked_draft7', 'A draft-07 schema: pair is a [string, integer] tuple', {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false } },
    required: ['pair'],
  }, (server, session, a) => result(JSON.stringify(a.pair)));
  checked('checked_lookahead', 'A pattern with a lookahead, which a linear-time engine does not take', {
    type: 'object', properties: { user: { type: 'string', pattern: '^(?!admin)' } }, required: ['user'],
  }, (server, session, a) => result(a.user));
  // Twenty properties in four nested objects, of the kinds tools declare.
  const leaf = (i) => [
    { type: 'string', minLength: 1, maxLength: 64 },
    { type: 'integer', minimum: 0, maximum: 1000000 },
    { type: 'string', enum: ['low', 'medium', 'high'] },
    { type: 'string', pattern: '^[a-z][a-z0-9_-]*$' },
    { type: 'boolean' },
  ][i % 5];
  const group = (g) => ({
    type: 'object',
    properties: Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`${g}_${i}`, leaf(i)])),
    required: [0, 1, 2, 3, 4].map((i) => `${g}_${i}`),
    additionalProperties: false,
  });
  checked('checked_nested', 'Twenty properties in four nested objects', {
    type: 'object',
    properties: { p: group('p'), q: group('q'), r: group('r'), s: group('s') },
    required: ['p', 'q', 'r', 's'],
    additionalProperties: false,
  }, () => result('ok'));
  tool('checked_calls', 'How many calls reached each checked_ tool, as JSON text', NO_ARGS,
    () => result(JSON.stringify(calls)));
}

// Resources.
const WATCHED = args['watched-uri'];
const watched = { version: 1 };
const RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static text', description: 'A static text resource', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static binary', description: 'A static binary resource (a 1x1 PNG)', mimeType: 'image/png' },
  { uri: WATCHED, name: 'watched-resource', title: 'Watched resource', description: 'A resource clients can subscribe to (update_watched_resource changes it)', mimeType: 'text/plain' },
];
const TEMPLATES = [
  { uriTemplate: 'test://template/{id}/data', name: 'template-data', title: 'Template data', description: 'A resource template with an id parameter', mimeType: 'application/json' },
];
const TEMPLATE_RE = /^test:\/\/template\/([^/]+)\/data$/;
// --files DIR: the files under DIR as file:///PATH, read as a simple file server does:
// the URL's path (WHATWG: dot segments removed, a backslash taken for '/'), decoded,
// joined to DIR; nothing outside DIR. It offers the template file:///docs/{+path} and
// lists file:///docs/readme.txt; the gateway's policy may grant less than it serves.
const FILES_ROOT = args.files ? path.resolve(args.files) : null;
if (FILES_ROOT) {
  TEMPLATES.push({ uriTemplate: 'file:///docs/{+path}', name: 'docs', description: 'A file under docs/', mimeType: 'text/plain' });
  RESOURCES.push({ uri: 'file:///docs/readme.txt', name: 'readme', description: 'The docs\' readme', mimeType: 'text/plain' });
}
function readFile(uri) {
  let p;
  try { p = decodeURIComponent(new URL(uri).pathname); } catch { return null; }
  const full = path.join(FILES_ROOT, p);
  if (full !== FILES_ROOT && !full.startsWith(FILES_ROOT + path.sep)) return null;
  try { return { uri, mimeType: 'text/plain', text: fs.readFileSync(full, 'utf8') }; } catch { return null; }
}
function readResource(uri) {
  if (FILES_ROOT && uri.startsWith('file:')) return readFile(uri);
  if (uri === 'test://static-text') return { uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' };
  if (uri === 'test://static-binary') return { uri, mimeType: 'image/png', blob: PNG_BASE64 };
  if (uri === WATCHED) return { uri, mimeType: 'text/plain', text: `Watched resource content, version ${watched.version}` };
  const m = TEMPLATE_RE.exec(uri);
  if (m) {
    const id = decodeURIComponent(m[1]);
    return { uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) };
  }
  return null;
}

// Prompts.
const PROMPTS = new Map();
function prompt(name, description, argumentsList, get) {
  PROMPTS.set(name, { prompt: { name, description, ...(argumentsList.length ? { arguments: argumentsList } : {}) }, get });
}
prompt('test_simple_prompt', 'A simple prompt without arguments', [],
  () => ({ messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }] }));
prompt('test_prompt_with_arguments', 'A prompt with two required arguments (completions offered for both)', [
  { name: 'arg1', description: 'First test argument', required: true },
  { name: 'arg2', description: 'Second test argument', required: true },
], (a) => ({ messages: [{ role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }] }));
prompt('test_prompt_with_embedded_resource', 'A prompt that embeds a resource', [
  { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
], (a) => ({
  messages: [
    { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
    { role: 'user', content: text('Please process the embedded resource above.') },
  ],
}));
prompt('test_prompt_with_image', 'A prompt that includes an image', [],
  () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  }));

// Completions: prompt arguments and the template's id.
const COMPLETIONS = {
  'ref/prompt:test_prompt_with_arguments:arg1': ['paris', 'park', 'party', 'test', 'testing', 'test-value'],
  'ref/prompt:test_prompt_with_arguments:arg2': ['alpha', 'beta', 'gamma', 'test2'],
  'ref/resource:test://template/{id}/data:id': ['1', '2', '3', '42', '123'],
};

// Pagination (--page-size): the cursor is the base64url offset into the list.
function page(list, cursor, key) {
  let start = 0;
  if (cursor !== undefined) {
    const s = Buffer.from(String(cursor), 'base64url').toString();
    if (!/^\d+$/.test(s) || Number(s) > list.length) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
    start = Number(s);
  }
  if (!pageSize) return { [key]: list };
  const end = Math.min(start + pageSize, list.length);
  return { [key]: list.slice(start, end), ...(end < list.length ? { nextCursor: Buffer.from(String(end)).toString('base64url') } : {}) };
}

// ---------------------------------------------------------------------------------------
// One SDK Server per session

// --per-subject: a list that varies by person, as a server acting for each person has
// (their repositories, their boards): besides the others, a tool of the verified token's
// subject's own, mine_<sub>, listed and callable for that subject alone.
function ownTool(extra) {
  const sub = args['per-subject'] ? extra?.authInfo?.extra?.sub : undefined;
  if (typeof sub !== 'string' || sub === '') return null;
  const name = `mine_${sub.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60)}`;
  return {
    tool: { name, description: `The tools of ${sub} alone`, inputSchema: { type: 'object', properties: {} } },
    call: () => result(`${sub}'s own tool`),
  };
}

const INSTRUCTIONS = 'mcpgate upstream fixture: the MCP conformance fixtures plus echo, slow and friends.';

function createServer(session) {
  const server = new Server({ name: args.name, version: '1.0.0' }, {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
    instructions: INSTRUCTIONS,
  });
  // Read at each list (not once per session): --defs changes TOOLS for every session.
  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => {
    const toolList = [...TOOLS.values()].map((t) => t.tool);
    return page(ownTool(extra) ? [...toolList, ownTool(extra).tool] : toolList, req.params?.cursor, 'tools');
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const own = ownTool(extra);
    const t = own && own.tool.name === req.params.name ? own : TOOLS.get(req.params.name);
    if (!t) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    return t.call(server, session, req.params.arguments ?? {}, extra);
  });
  server.setRequestHandler(ListResourcesRequestSchema, (req) => page(RESOURCES, req.params?.cursor, 'resources'));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => page(TEMPLATES, req.params?.cursor, 'resourceTemplates'));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => {
    const c = readResource(req.params.uri);
    if (!c) throw new McpError(-32002, 'Resource not found', { uri: req.params.uri });
    return { contents: [c] };
  });
  server.setRequestHandler(SubscribeRequestSchema, (req) => {
    session.subscriptions.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    session.subscriptions.delete(req.params.uri);
    return {};
  });
  const promptList = [...PROMPTS.values()].map((p) => p.prompt);
  server.setRequestHandler(ListPromptsRequestSchema, (req) => page(promptList, req.params?.cursor, 'prompts'));
  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    const p = PROMPTS.get(req.params.name);
    if (!p) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
    const a = req.params.arguments ?? {};
    for (const arg of p.prompt.arguments ?? []) {
      if (arg.required && typeof a[arg.name] !== 'string') {
        throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${arg.name}`);
      }
    }
    return { description: p.prompt.description, ...p.get(a) };
  });
  server.setRequestHandler(CompleteRequestSchema, (req) => {
    const { ref, argument } = req.params;
    const all = COMPLETIONS[`${ref.type}:${ref.name ?? ref.uri}:${argument.name}`] ?? [];
    const values = all.filter((v) => v.startsWith(argument.value ?? ''));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.onerror = (e) => log(`server error: ${e.message}`);
  return server;
}

// Event store for resumability (SEP-1699), one per session, bounded: event ids are
// "<streamId>.<seq>"; a stream keeps its last 1000 events, a session its last 1000
// streams (each POST opens one: a long run of calls must not grow the process).
class SessionEventStore {
  constructor() { this.streams = new Map(); this.seq = 0; }
  async storeEvent(streamId, message) {
    const id = `${streamId}.${++this.seq}`;
    let events = this.streams.get(streamId);
    if (!events) {
      this.streams.set(streamId, (events = []));
      if (this.streams.size > 1000) this.streams.delete(this.streams.keys().next().value);
    }
    events.push({ id, message });
    if (events.length > 1000) events.shift();
    return id;
  }
  async getStreamIdForEventId(eventId) {
    const streamId = String(eventId).replace(/\.\d+$/, '');
    return this.streams.get(streamId)?.some((e) => e.id === eventId) ? streamId : undefined;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (!streamId) throw new Error(`unknown event id ${lastEventId}`);
    const events = this.streams.get(streamId);
    for (const e of events.slice(events.findIndex((x) => x.id === lastEventId) + 1)) {
      if (Object.keys(e.message).length) await send(e.id, e.message);	// skip priming events
    }
    return streamId;
  }
}

// ---------------------------------------------------------------------------------------
// HTTP

const sessions = new Map();	// session id → { server, transport, subscriptions, open, lastActive }
const MAX_BODY = 4 * 1024 * 1024;
const IDLE_MS = 30 * 60 * 1000;
// --modern, --modern-only: the 2026-07-28 path, over the same tables.
const modern = args.modern || args['modern-only'] ? createModern({
  name: args.name, log, sendJson: (...a) => sendJson(...a), tools: TOOLS, prompts: PROMPTS, resources: RESOURCES, templates: TEMPLATES,
  readResource, completions: COMPLETIONS, page, ownTool, instructions: INSTRUCTIONS, keepAliveMs,
  privateCache: bearer !== null, only: args['modern-only'],
}) : null;

function sendJson(res, status, body, headers = {}) {
  if (res.headersSent) return res.end();
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
const rpcError = (res, status, code, message, headers) =>
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);

function hostnameOf(value) {
  try { return new URL(value).hostname.toLowerCase(); } catch { return null; }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) { reject(Object.assign(new Error('body too large'), { status: 413 })); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------
// Bearer mode (--require-bearer)
//
// The SDK's own requireBearerAuth middleware checks the Authorization header and builds
// the 401 answer; the verifier below asks the issuer's RFC 7662 introspection endpoint
// (found in its RFC 8414 metadata, fetched once) and accepts only an active token whose aud
// names this server's resource. No caching of introspection answers: every request is
// verified. Tokens are never logged or kept: records hold their SHA-256.

const sha256 = (t) => createHash('sha256').update(t).digest('hex');
const FETCH_MS = 10000;
// RFC 6749 §2.3.1: client credentials are form-urlencoded before base64.
const formEncode = (v) => encodeURIComponent(v).replace(/%20/g, '+');

let authServer = null;	// promise of the issuer's metadata, kept once it resolves
function authorizationServer() {
  authServer ??= (async () => {
    const url = `${bearer.issuer}/.well-known/oauth-authorization-server`;
    const r = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_MS) });
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    const md = await r.json();
    if (md.issuer !== bearer.issuer) throw new Error(`${url}: issuer is ${md.issuer}, expected ${bearer.issuer}`);
    if (typeof md.introspection_endpoint !== 'string') throw new Error(`${url}: no introspection_endpoint`);
    log(`bearer: ${bearer.issuer} introspects at ${md.introspection_endpoint}`);
    return md;
  })().catch((e) => { authServer = null; throw e; });
  return authServer;
}

// OAuthTokenVerifier: introspection → AuthInfo.
const verifier = {
  async verifyAccessToken(token) {
    let info;
    try {
      const md = await authorizationServer();
      const r = await fetch(md.introspection_endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: `Basic ${Buffer.from(`${formEncode(bearer.clientId)}:${formEncode(bearer.clientSecret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token }),
        signal: AbortSignal.timeout(FETCH_MS),
      });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      info = await r.json();
    } catch (e) {
      throw new ServerError(`introspection failed: ${e.message}`);
    }
    if (info?.active !== true) throw new InvalidTokenError('Token is not active');
    const aud = info.aud === undefined ? [] : [].concat(info.aud);
    if (!aud.includes(bearer.resource)) throw new InvalidTokenError('Token was not issued for this resource');
    return {
      token,
      clientId: info.client_id,
      scopes: typeof info.scope === 'string' ? info.scope.split(' ').filter(Boolean) : [],
      expiresAt: info.exp,
      resource: new URL(bearer.resource),
      extra: { sub: info.sub, act: info.act, aud: info.aud },
    };
  },
};

// Set once listening (the default resource is this server's own URL).
function bearerReady(baseUrl) {
  bearer.resource ??= `${baseUrl}/mcp`;
  if (bearer.prmPath !== null) {
    const u = new URL(baseUrl);
    if (args['prm-host'] !== undefined) u.hostname = args['prm-host'];
    bearer.metadataUrl = `${u.origin}${bearer.prmPath}`;
  } else {
    bearer.metadataUrl = `${baseUrl}/.well-known/oauth-protected-resource/mcp`;
  }
  bearer.middleware = requireBearerAuth({
    verifier, resourceMetadataUrl: bearer.metadataUrl, expectedResource: new URL(bearer.resource),
  });
}

function remember(list, entry) {
  list.push(entry);
  if (list.length > 1000) list.shift();
}
// The identity a session is bound to: the person (sub), or the client of a machine token.
const subjectOf = (auth) => (auth.extra?.sub !== undefined ? `sub:${auth.extra.sub}` : `client:${auth.clientId}`);

function reject(reason, token, method) {
  const digest = token ? sha256(token) : null;
  remember(bearer.seen.rejected, { at: new Date().toISOString(), reason, method, token_sha256: digest });
  log(`bearer: rejected ${method} (${reason}), token ${digest ? `sha256:${digest.slice(0, 12)}` : 'none'}`);
}
function accept(auth, method) {
  const digest = sha256(auth.token);
  const sub = auth.extra?.sub ?? null, act = auth.extra?.act ?? null;
  remember(bearer.seen.accepted, { at: new Date().toISOString(), method, sub, client_id: auth.clientId ?? null, act, token_sha256: digest });
  log(`bearer: accepted ${method}: sub ${sub ?? '(none)'}, client_id ${auth.clientId}` +
    `${act ? `, act ${JSON.stringify(act)}` : ''}, token sha256:${digest.slice(0, 12)}`);
}

// Runs the SDK middleware with the three calls it makes on res (status, set, json)
// collected, so that the answer goes out as every other answer here does. Resolves to
// req.auth when it called next(), to null when it answered (the answer is then sent and
// recorded as rejected).
function authenticate(req, res, method) {
  return new Promise((resolve, reject_) => {
    const headers = {};
    let status = 200;
    const shim = {
      status(c) { status = c; return shim; },
      set(k, v) { headers[k] = v; return shim; },
      json(body) {
        const [type, token] = (req.headers.authorization ?? '').split(' ');
        reject(body?.error_description ?? body?.error ?? `HTTP ${status}`, type ? token : undefined, method);
        sendJson(res, status, body, headers);
        resolve(null);
        return shim;
      },
    };
    bearer.middleware(req, shim, (err) => (err ? reject_(err) : resolve(req.auth))).catch(reject_);
  });
}

// The unauthenticated endpoints of bearer mode: protected-resource metadata (RFC 9728) and
// the records of what arrived (each request for the metadata too: its path, the Host it
// named, the answer's status).
function bearerEndpoint(req, res, pathname) {
  const wellKnown = pathname === '/.well-known/oauth-protected-resource' || pathname === '/.well-known/oauth-protected-resource/mcp';
  if (wellKnown || pathname === bearer.prmPath) {
    const status = wellKnown && bearer.prmPath !== null ? 404 : req.method !== 'GET' && req.method !== 'HEAD' ? 405 : 200;
    remember(bearer.seen.metadata, { at: new Date().toISOString(), path: pathname, host: req.headers.host ?? null, status });
    if (status === 404) return sendJson(res, 404, { error: 'not found' });
    if (status === 405) return sendJson(res, 405, { error: 'method not allowed' }, { Allow: 'GET, HEAD' });
    return sendJson(res, 200, {
      resource: bearer.resource,
      authorization_servers: [bearer.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: RESOURCE_SCOPES,
    });
  }
  if (pathname === '/_seen') {
    if (req.method !== 'GET') return sendJson(res, 405, { error: 'method not allowed' }, { Allow: 'GET' });
    return sendJson(res, 200, bearer.seen, { 'Cache-Control': 'no-store' });
  }
  if (pathname === '/_seen/reset') {
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' }, { Allow: 'POST' });
    bearer.seen.accepted.length = 0;
    bearer.seen.rejected.length = 0;
    bearer.seen.metadata.length = 0;
    return sendJson(res, 200, { reset: true });
  }
  return sendJson(res, 404, { error: 'not found' });
}
// --public-list: what may be asked with no Authorization header at all (a catalog fetched
// with no token, as a gateway does for a user-oauth upstream): POSTs made only of these
// methods, on no session or an anonymous one, and GET/DELETE of an anonymous session.
// Anything else, and any request with a token, is verified as always; an anonymous
// session takes no token and a token's session no anonymous request.
const PUBLIC_METHODS = new Set(['initialize', 'notifications/initialized', 'ping', 'tools/list', 'resources/list',
  'resources/templates/list', 'prompts/list']);
function anonymousListing(req, body, badJson) {
  if (!args['public-list'] || req.headers.authorization !== undefined || badJson) return false;
  const sid = req.headers['mcp-session-id'];
  if (sid !== undefined && sessions.get(sid)?.subject !== undefined) return false;
  if (req.method !== 'POST') return sid !== undefined;
  // With --modern, the 2026-07-28 revision's discovery too.
  return (Array.isArray(body) ? body : [body]).every((m) => PUBLIC_METHODS.has(m?.method) || (modern !== null && m?.method === 'server/discover'));
}

// What arrived at /mcp, for GET /_traffic: a gateway test proves with it which revision
// the gateway spoke to this server. byMethod counts the messages of each POST (a batch's
// each), "(response)" for a client's answer, "(invalid JSON)" for a body that is not.
const traffic = {};
function resetTraffic() {
  Object.assign(traffic, { posts: 0, byMethod: {}, byRevision: { [MODERN]: 0, legacy: 0 }, sessionsOpened: 0, deletes: 0, gets: 0 });
}
resetTraffic();
function countPost(body, badJson, revision) {
  traffic.posts++;
  traffic.byRevision[revision]++;
  const names = badJson ? ['(invalid JSON)'] : (Array.isArray(body) ? body : [body]).map((m) =>
    (typeof m?.method === 'string' ? m.method : '(response)'));
  for (const n of names) traffic.byMethod[n] = (traffic.byMethod[n] ?? 0) + 1;
}
const loopbackPeer = (a) => a === '::1' || /^(::ffff:)?127\./.test(a ?? '');
function trafficEndpoint(req, res, pathname) {
  if (!loopbackPeer(req.socket.remoteAddress)) return sendJson(res, 403, { error: 'loopback only' });
  if (req.method !== 'GET') return sendJson(res, 405, { error: 'method not allowed' }, { Allow: 'GET' });
  if (pathname === '/_traffic/reset') {
    resetTraffic();
    return sendJson(res, 200, { reset: true }, { 'Cache-Control': 'no-store' });
  }
  return sendJson(res, 200, traffic, { 'Cache-Control': 'no-store' });
}

// --defs: POST /_defs changes the tool list as an upstream that changes its tools does
// (pinning tests): {"set": {NAME: {member: value, ...}}, "remove": [NAME, ...]}. A set
// NAME that exists gets those members of its listed definition replaced, a new one
// becomes a tool whose call returns "called NAME"; removed names leave tools/list. The
// changes add up across POSTs ({"reset": true} first drops them all) and show in every
// tools/list after (any session: TOOLS is read at each list). GET /_defs: the overrides.
const defs = { set: {}, remove: [] };
let baseTools = null;	// TOOLS as registered, taken at the first change
function applyDefs() {
  baseTools ??= new Map([...TOOLS].map(([n, t]) => [n, { tool: { ...t.tool }, call: t.call }]));
  TOOLS.clear();
  for (const [n, t] of baseTools) {
    if (defs.remove.includes(n)) continue;
    TOOLS.set(n, defs.set[n] ? { tool: { ...t.tool, ...defs.set[n], name: n }, call: t.call } : t);
  }
  for (const [n, over] of Object.entries(defs.set)) {
    if (baseTools.has(n) || defs.remove.includes(n)) continue;
    TOOLS.set(n, { tool: { name: n, inputSchema: NO_ARGS, ...over, name: n }, call: () => result(`called ${n}`) });
  }
}
async function defsEndpoint(req, res) {
  if (!loopbackPeer(req.socket.remoteAddress)) return sendJson(res, 403, { error: 'loopback only' });
  if (req.method === 'GET') return sendJson(res, 200, defs, { 'Cache-Control': 'no-store' });
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' }, { Allow: 'GET, POST' });
  let body;
  try { body = JSON.parse(await readBody(req)); } catch (e) { return sendJson(res, e.status ?? 400, { error: e.message }); }
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(body) || (body.set !== undefined && (!isObj(body.set) || !Object.values(body.set).every(isObj))) ||
      (body.remove !== undefined && (!Array.isArray(body.remove) || !body.remove.every((n) => typeof n === 'string')))) {
    return sendJson(res, 400, { error: 'expected {"set": {NAME: {member: value}}, "remove": [NAME], "reset": true}' });
  }
  if (body.reset === true) Object.assign(defs, { set: {}, remove: [] });
  for (const [n, over] of Object.entries(body.set ?? {})) {
    defs.set[n] = { ...defs.set[n], ...over };
    defs.remove = defs.remove.filter((r) => r !== n);
  }
  for (const n of body.remove ?? []) {
    delete defs.set[n];
    if (!defs.remove.includes(n)) defs.remove.push(n);
  }
  applyDefs();
  log(`/_defs: ${Object.keys(defs.set).length} set, ${defs.remove.length} removed; ${TOOLS.size} tools`);
  return sendJson(res, 200, defs, { 'Cache-Control': 'no-store' });
}

const BEARER_PATHS = new Set(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/_seen', '/_seen/reset']);

function track(session, res) {
  session.open++;
  session.lastActive = Date.now();
  res.on('close', () => { session.open--; session.lastActive = Date.now(); });
}

async function handle(req, res) {
  const url = new URL(req.url, 'http://fixture');
  const extraPath = bearer && (BEARER_PATHS.has(url.pathname) || url.pathname === bearer.prmPath);
  const trafficPath = url.pathname === '/_traffic' || url.pathname === '/_traffic/reset';
  const defsPath = args.defs && url.pathname === '/_defs';
  if (url.pathname !== '/mcp' && !extraPath && !trafficPath && !defsPath) return sendJson(res, 404, { error: 'not found' });

  // DNS-rebinding protection: loopback (or --allow-host) Host and Origin only.
  const hostName = hostnameOf(`http://${req.headers.host ?? ''}`);
  if (!hostName || !allowedHostnames.has(hostName)) return rpcError(res, 403, -32000, `Invalid Host: ${req.headers.host ?? ''}`);
  if (req.headers.origin !== undefined && !allowedHostnames.has(hostnameOf(req.headers.origin))) {
    return rpcError(res, 403, -32000, `Invalid Origin: ${req.headers.origin}`);
  }
  if (trafficPath) return trafficEndpoint(req, res, url.pathname);
  if (defsPath) return defsEndpoint(req, res);
  if (extraPath) return bearerEndpoint(req, res, url.pathname);
  if (req.method === 'GET') traffic.gets++;
  if (req.method === 'DELETE') traffic.deletes++;
  // --modern-only: no session, so no GET stream and nothing to delete.
  if (args['modern-only'] && req.method !== 'POST') return rpcError(res, 405, -32000, 'Method not allowed', { Allow: 'POST' });
  if (!['GET', 'POST', 'DELETE'].includes(req.method)) {
    return rpcError(res, 405, -32000, 'Method not allowed', { Allow: 'GET, POST, DELETE' });
  }

  let body, badJson = false, method = req.method, stateless = false;
  if (req.method === 'POST') {
    let raw;
    try { raw = await readBody(req); } catch (e) { return rpcError(res, e.status ?? 400, -32000, e.message); }
    try { body = JSON.parse(raw); } catch { badJson = true; }
    if (!badJson) {
      method = (Array.isArray(body) ? body : [body]).map((m) => m?.method ?? (m?.id !== undefined ? `response ${m.id}` : '?')).join(',');
    }
    // --modern: a POST of the 2026-07-28 revision goes to modern.mjs, any other to the
    // SDK's sessions as without the option; --modern-only: every POST goes there.
    stateless = modern !== null && !badJson && (args['modern-only'] || modern.claims(req, body));
    countPost(body, badJson, stateless || args['modern-only'] ? MODERN : 'legacy');
    if (!args.quiet && !badJson) {
      const what = stateless ? `${MODERN} ${method}${typeof body?.params?.name === 'string' ? ` ${body.params.name}` : ''}` : method;
      res.on('finish', () => log(`POST ${what} → ${res.statusCode}`));
    }
  } else if (!args.quiet) {
    res.on('finish', () => log(`${req.method} → ${res.statusCode}`));
  }

  // Bearer mode: the token first (a request without one learns nothing else), then the
  // session's owner.
  let auth = null;
  if (bearer && !anonymousListing(req, body, badJson)) {
    auth = await authenticate(req, res, badJson ? 'POST (invalid JSON)' : method);
    if (!auth) return;
  }
  if (badJson) {
    if (auth) accept(auth, 'POST (invalid JSON)');
    return rpcError(res, 400, -32700, 'Parse error: Invalid JSON');
  }
  if (stateless) {
    if (auth) accept(auth, method);
    return modern.handle(req, res, body, auth);
  }

  const sid = req.headers['mcp-session-id'];
  if (sid !== undefined) {
    const session = sessions.get(sid);
    if (auth && session && session.subject !== subjectOf(auth)) {
      reject('session of another subject', auth.token, method);
      return rpcError(res, 403, -32000, 'Forbidden: this session was opened by another subject');
    }
    if (auth) accept(auth, method);
    if (!session) return rpcError(res, 404, -32001, 'Session not found');
    track(session, res);
    return session.transport.handleRequest(req, res, body);
  }
  if (auth) accept(auth, method);
  const initializing = req.method === 'POST' && (Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body));
  if (!initializing) return rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');

  const session = { subscriptions: new Set(), open: 0, lastActive: Date.now() };
  if (auth) session.subject = subjectOf(auth);	// only this subject may use the session
  // The client's capabilities name who opened it in the log: a gateway's own (catalog)
  // session declares none, a caller's session carries the caller's.
  const init = (Array.isArray(body) ? body : [body]).find(isInitializeRequest);
  const caps = Object.keys(init?.params?.capabilities ?? {}).sort().join(',') || 'none';
  session.transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: args.json,
    eventStore: args['no-resume'] ? undefined : new SessionEventStore(),
    retryInterval: retryMs,
    keepAliveMs,
    onsessioninitialized: (id) => {
      sessions.set(id, session);
      traffic.sessionsOpened++;
      log(`session ${id} opened (${sessions.size} open; client capabilities: ${caps}${session.subject ? `; ${session.subject}` : ''})`);
    },
  });
  session.transport.onclose = () => {
    const id = session.transport.sessionId;
    if (id && sessions.delete(id)) log(`session ${id} closed (${sessions.size} open)`);
  };
  session.server = createServer(session);
  await session.server.connect(session.transport);
  track(session, res);
  return session.transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    log(`request failed: ${e.stack ?? e}`);
    if (!res.headersSent) rpcError(res, 500, -32603, 'Internal error');
    else res.end();
  });
});

setInterval(() => {
  const cutoff = Date.now() - IDLE_MS;
  for (const s of sessions.values()) {
    if (s.open === 0 && s.lastActive < cutoff) s.transport.close().catch(() => {});
  }
}, 60000).unref();

httpServer.on('error', (e) => {
  process.stderr.write(`fixture.mjs: ${e.message}\n`);
  process.exit(1);
});
httpServer.listen(port, host, () => {
  const addr = httpServer.address();
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${h}:${addr.port}/mcp`;
  if (bearer) bearerReady(`http://${h}:${addr.port}`);
  announceReady(url, args['ready-file']);
  log(`listening on ${url}: ${TOOLS.size} tools, ${RESOURCES.length} resources, ${PROMPTS.size} prompts` +
    `${args.json ? ', JSON responses' : ', SSE responses'}${args['no-resume'] ? '' : ', resumable'}` +
    `${args.modern ? `; ${MODERN} too (stateless)` : args['modern-only'] ? `; ${MODERN} only (stateless)` : ''}` +
    `${bearer ? `; bearer tokens of ${bearer.issuer} for ${bearer.resource}, introspected as ${bearer.clientId}` : ''}`);
});

let stopping = false;
function stop(sig) {
  if (stopping) return;
  stopping = true;
  log(`${sig}: stopping`);
  modern?.close();
  setTimeout(() => process.exit(0), 2000).unref();
  Promise.allSettled([...sessions.values()].map((s) => s.transport.close())).then(() => {
    httpServer.close(() => process.exit(0));
    httpServer.closeAllConnections();
  });
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// A suite that dies without its cleanup leaves this server an orphan: it stops when its
// parent is gone (its parent process id changes), so nothing outlives the run.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) stop('parent gone'); }, 500).unref();
