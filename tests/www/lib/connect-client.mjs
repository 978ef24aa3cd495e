#!/usr/bin/env node
// An MCP client of the gateway for tests/www/connect.sh: the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2: Client over StreamableHTTPClientTransport) with a
// bearer token, declaring the URL elicitation capability of MCP 2025-11-25
// (`elicitation: {url: {}}`) or, with urlElicitation false, no capability at all.
// connect-browser.mjs imports it; the command line runs one tools/call:
//
//   MCP_BEARER_TOKEN=T node connect-client.mjs --url URL --tool NAME [--no-url-elicitation]
//
// prints one JSON line, {"result"} or {"error": {code, message, data}}, and exits 0 (2 on
// usage errors, 3 when the gateway could not be reached or initialized). The token is read
// from the environment, never from the command line.

import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';

/** The JSON-RPC error code of MCP 2025-11-25's URLElicitationRequiredError. */
export const URL_ELICITATION_REQUIRED = ErrorCode.UrlElicitationRequired; // -32042

const CALL_MS = 60000; // one call's bound: generous for a loaded machine

/**
 * A connected SDK client of the gateway at url (its /mcp), sending `Authorization: Bearer
 * token`; urlElicitation: declare `capabilities.elicitation.url` at initialize.
 * Resolves to { client, close() }.
 */
export async function connectClient({ url, token, urlElicitation = true, name = 'connect-test' }) {
  const capabilities = urlElicitation ? { elicitation: { url: {} } } : {};
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport, { timeout: CALL_MS });
  return { client, close: () => client.close().catch(() => {}) };
}

/**
 * tools/call NAME with args. Resolves to { result } or { error: { code, message, data,
 * elicitations?, urlElicitation } } (urlElicitation: the SDK made it a
 * UrlElicitationRequiredError); never throws for a JSON-RPC error.
 */
export async function callTool(client, name, args = {}) {
  try {
    return { result: await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_MS }) };
  } catch (e) {
    if (!(e instanceof McpError)) return { error: { code: null, message: String(e?.message ?? e), data: null, urlElicitation: false } };
    const error = { code: e.code, message: e.message, data: e.data ?? null, urlElicitation: e instanceof UrlElicitationRequiredError };
    if (error.urlElicitation) error.elicitations = e.elicitations;
    return { error };
  }
}

/** The JSON a tool's text content holds (whoami answers JSON text), or null. */
export function textJson(result) {
  const t = result?.content?.find((c) => c.type === 'text')?.text;
  try {
    return JSON.parse(t);
  } catch {
    return null;
  }
}

async function main() {
  const { values: opt } = parseArgs({
    options: {
      url: { type: 'string' }, tool: { type: 'string' }, 'no-url-elicitation': { type: 'boolean', default: false },
    },
  });
  const token = process.env.MCP_BEARER_TOKEN;
  if (!opt.url || !opt.tool || !token) {
    process.stderr.write('usage: MCP_BEARER_TOKEN=T connect-client.mjs --url URL --tool NAME [--no-url-elicitation]\n');
    process.exit(2);
  }
  let c;
  try {
    c = await connectClient({ url: opt.url, token, urlElicitation: !opt['no-url-elicitation'] });
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: { code: e?.code ?? null, message: `connect: ${e?.message ?? e}` } })}\n`);
    process.exit(3);
  }
  const out = await callTool(c.client, opt.tool);
  process.stdout.write(`${JSON.stringify(out)}\n`);
  await c.close();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
