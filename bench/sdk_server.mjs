#!/usr/bin/env node
// bench/sdk_server.mjs — the peer of bench/run's row 3: an MCP server written with the
// official TypeScript SDK (@modelcontextprotocol/sdk from tests/node_modules) the way its
// documentation shows a remote server: Express (the SDK's createMcpExpressApp, with its
// DNS-rebinding protection on 127.0.0.1 and express.json()), the Streamable HTTP transport,
// and the SDK's requireBearerAuth middleware in front of POST /mcp, with a token verifier
// that asks the authorization server (RFC 7662 introspection, client_secret_basic) and
// caches its answers — what mcpgate does for the same request.
//
//   node bench/sdk_server.mjs --port P --issuer URL --resource URL --tools FILE
//        --mode stateless|session [--client-id mcpgate] [--client-secret mcpgate-secret]
//        [--cache-ttl 3600] [--sse] [--ready-file F]
//
// --tools FILE: a JSON array of tool definitions (name, description, inputSchema, ...),
// served as they are by tools/list: bench/run gives it the tools of mcpgate's own answer,
// so that both answer the same bytes. The SDK's low-level Server serves them (its
// README's "Low-Level Server"; McpServer.registerTool takes zod schemas only, and would
// not give the same definitions). tools/call answers any of them with its arguments as
// JSON text.
//
// --mode stateless: the SDK's stateless pattern, a new Server and transport per request
// (sessionIdGenerator undefined), closed when the answer is done. --mode session: the
// stateful pattern, a transport per session in a map by Mcp-Session-Id, created by an
// initialize without one. Answers are JSON (enableJsonResponse), as mcpgate's; --sse for
// event streams.
//
// The cache: an accepted token's AuthInfo by the token, until the earlier of its exp and
// --cache-ttl seconds; a refused token is not cached. GET /_stats: {"introspections": N,
// "cached": M}. Prints "ready http://127.0.0.1:PORT/mcp" on stdout (and in --ready-file,
// whole, by rename) once listening; stops on SIGTERM/SIGINT.

import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

// The SDK of tests/node_modules (bench/ has no node_modules of its own): its ES modules by
// path, which is what `import '@modelcontextprotocol/sdk/...'` gives a file in tests/.
const SDK = new URL('../tests/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const sdk = (path) => import(new URL(path, SDK).href);
const { Server } = await sdk('server/index.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');
const { createMcpExpressApp } = await sdk('server/express.js');
const { requireBearerAuth } = await sdk('server/auth/middleware/bearerAuth.js');
const { InvalidTokenError, ServerError } = await sdk('server/auth/errors.js');
const { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } = await sdk('types.js');

const { values: o } = parseArgs({
  options: {
    port: { type: 'string' },
    issuer: { type: 'string' },
    resource: { type: 'string' },
    tools: { type: 'string' },
    mode: { type: 'string', default: 'stateless' },
    'client-id': { type: 'string', default: 'mcpgate' },
    'client-secret': { type: 'string', default: 'mcpgate-secret' },
    'cache-ttl': { type: 'string', default: '3600' },
    sse: { type: 'boolean', default: false },
    'ready-file': { type: 'string' },
  },
});
if (!o.port || !o.issuer || !o.resource || !o.tools || !['stateless', 'session'].includes(o.mode)) {
  process.stderr.write('usage: sdk_server.mjs --port P --issuer URL --resource URL --tools FILE --mode stateless|session ' +
    '[--client-id ID] [--client-secret S] [--cache-ttl S] [--sse] [--ready-file F]\n');
  process.exit(2);
}
const TOOLS = JSON.parse(fs.readFileSync(o.tools, 'utf8'));
const TTL = Number(o['cache-ttl']);
const BASIC = `Basic ${Buffer.from(`${encodeURIComponent(o['client-id'])}:${encodeURIComponent(o['client-secret'])}`).toString('base64')}`;
const INTROSPECT = new URL('/token/introspection', o.issuer).href;

// --- The token verifier: RFC 7662 introspection, answers cached --------------------------
const cache = new Map();
let introspections = 0;
const verifier = {
  async verifyAccessToken(token) {
    const now = Date.now() / 1000;
    const hit = cache.get(token);
    if (hit && hit.until > now) return hit.info;
    introspections++;
    let r;
    try {
      const res = await fetch(INTROSPECT, {
        method: 'POST',
        headers: { Authorization: BASIC, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      });
      if (!res.ok) throw new Error(`introspection: HTTP ${res.status}`);
      r = await res.json();
    } catch (e) {
      throw new ServerError(`introspection failed: ${e.message}`);
    }
    if (r.active !== true) throw new InvalidTokenError('Token is not active');
    const aud = Array.isArray(r.aud) ? r.aud[0] : r.aud;
    const info = {
      token,
      clientId: r.client_id,
      scopes: typeof r.scope === 'string' ? r.scope.split(' ') : [],
      expiresAt: r.exp,
      resource: aud ? new URL(aud) : undefined,
    };
    cache.set(token, { info, until: Math.min(now + TTL, r.exp ?? now) });
    return info;
  },
};

// --- The MCP server ------------------------------------------------------------------------
function getServer() {
  const server = new Server({ name: 'bench-sdk-server', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => ({
    content: [{ type: 'text', text: JSON.stringify(req.params.arguments ?? {}) }],
  }));
  return server;
}

const app = createMcpExpressApp();
const resourceUrl = new URL(o.resource);
const auth = requireBearerAuth({
  verifier,
  requiredScopes: ['mcp:tools'],
  resourceMetadataUrl: new URL(`/.well-known/oauth-protected-resource${resourceUrl.pathname}`, resourceUrl).href,
  expectedResource: resourceUrl,
});
const rpcError = (res, status, code, message) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

app.get('/_stats', (req, res) => res.json({ introspections, cached: cache.size }));

if (o.mode === 'stateless') {
  app.post('/mcp', auth, async (req, res) => {
    const server = getServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !o.sse });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      if (!res.headersSent) rpcError(res, 500, -32603, 'Internal server error');
    }
  });
} else {
  const transports = {};
  app.post('/mcp', auth, async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    let transport;
    if (sid && transports[sid]) {
      transport = transports[sid];
    } else if (!sid && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: !o.sse,
        onsessioninitialized: (id) => { transports[id] = transport; },
      });
      transport.onclose = () => {
        if (transport.sessionId) delete transports[transport.sessionId];
      };
      await getServer().connect(transport);
    } else {
      return rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    }
    await transport.handleRequest(req, res, req.body);
  });
}

const httpServer = app.listen(Number(o.port), '127.0.0.1', () => {
  const line = `ready http://127.0.0.1:${httpServer.address().port}/mcp\n`;
  if (o['ready-file']) {
    fs.writeFileSync(`${o['ready-file']}.tmp`, line);
    fs.renameSync(`${o['ready-file']}.tmp`, o['ready-file']);
  }
  process.stdout.write(line);
});
httpServer.on('error', (e) => {
  process.stderr.write(`sdk_server.mjs: ${e.message}\n`);
  process.exit(1);
});
const stop = () => {
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
