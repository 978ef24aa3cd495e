// A small MCP client over Streamable HTTP for the console and webmcp.html: JSON-RPC over
// fetch, answers as JSON or as an event stream read as it arrives, the session the
// gateway hands out. Every message in and out goes to log(), for the page to show.

import { fetchEndpoint, parseChallenge } from './oauth.js';

export const PROTOCOL_VERSION = '2025-11-25';

// What a refused request looks like to the page: the HTTP status, the HttpError body,
// the WWW-Authenticate challenge; or the JSON-RPC error of a 200.
export class McpError extends Error {
  constructor(message, { status = 0, body = null, challenge = {}, rpc = null } = {}) {
    super(message);
    this.status = status;
    this.body = body;
    this.challenge = challenge;
    this.rpc = rpc;
  }
}

// Events of a text/event-stream body, as they come: yields each event's data.
async function* sseData(body) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
      if (data.length) yield data.join('\n');
    }
  }
}

export class McpClient {
  // endpoint: the /mcp URL; token(): the bearer token; log(entry): the page's exchange view.
  constructor(endpoint, token, log = () => {}) {
    this.endpoint = endpoint;
    this.token = token;
    this.log = log;
    this.session = null;
    this.version = null;
    this.nextId = 1;
    this.server = null;
  }

  headers() {
    const h = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${this.token()}`,
    };
    if (this.version) h['MCP-Protocol-Version'] = this.version;
    if (this.session) h['Mcp-Session-Id'] = this.session;
    return h;
  }

  // One JSON-RPC request; its notifications go to onMessage as they arrive. Resolves with
  // the result; rejects with an McpError.
  async request(method, params, onMessage = () => {}) {
    const id = this.nextId++;
    const msg = { jsonrpc: '2.0', id, method, params };
    this.log({ kind: 'out', message: msg });
    const res = await fetchEndpoint(this.endpoint, {
      method: 'POST', headers: this.headers(), body: JSON.stringify(msg),
    });
    const type = res.headers.get('Content-Type') || '';
    this.log({ kind: 'http', method: 'POST', url: this.endpoint, status: res.status, note: type.split(';')[0] });
    const sid = res.headers.get('Mcp-Session-Id');
    if (sid) this.session = sid;
    if (!res.ok) {
      const body = await res.json().catch(() => null);
      const challenge = parseChallenge(res.headers.get('WWW-Authenticate'));
      this.log({ kind: 'in', message: body, status: res.status });
      const why = body?.error_description || body?.message || body?.error?.message || res.statusText;
      throw new McpError(`${res.status} ${body?.error && typeof body.error === 'string' ? `${body.error}: ` : ''}${why}`,
        { status: res.status, body, challenge });
    }
    let answer = null;
    if (type.startsWith('text/event-stream')) {
      for await (const data of sseData(res.body)) {
        let m;
        try { m = JSON.parse(data); } catch { continue; }
        this.log({ kind: 'in', message: m, streamed: true });
        if (m.id === id && ('result' in m || 'error' in m)) answer = m;
        else onMessage(m);
      }
    } else {
      answer = await res.json().catch(() => null);
      this.log({ kind: 'in', message: answer });
    }
    if (!answer) throw new McpError(`no answer to ${method}`, { status: res.status });
    if (answer.error) {
      throw new McpError(`JSON-RPC error ${answer.error.code}: ${answer.error.message}`, { status: res.status, rpc: answer.error });
    }
    return answer.result;
  }

  async notify(method, params) {
    const msg = { jsonrpc: '2.0', method, ...(params ? { params } : {}) };
    this.log({ kind: 'out', message: msg });
    const res = await fetchEndpoint(this.endpoint, {
      method: 'POST', headers: this.headers(), body: JSON.stringify(msg),
    });
    this.log({ kind: 'http', method: 'POST', url: this.endpoint, status: res.status });
  }

  async initialize() {
    this.session = null;
    this.version = null;
    this.server = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'mcpgate-docs-console', version: '1.0.0' },
    });
    this.version = this.server.protocolVersion;
    await this.notify('notifications/initialized');
    return this.server;
  }

  // Every page of tools/list.
  async listTools() {
    const tools = [];
    let cursor;
    do {
      const r = await this.request('tools/list', cursor ? { cursor } : {});
      tools.push(...(r.tools || []));
      cursor = r.nextCursor;
    } while (cursor);
    return tools;
  }

  // tools/call with a progress token: onProgress(params) for each notifications/progress.
  callTool(name, args, onProgress = () => {}) {
    const progressToken = `p${this.nextId}`;
    return this.request('tools/call', { name, arguments: args, _meta: { progressToken } }, (m) => {
      if (m.method === 'notifications/progress' && m.params?.progressToken === progressToken) onProgress(m.params);
    });
  }

  async close() {
    if (!this.session) return;
    const headers = this.headers();
    this.session = null;
    await fetch(this.endpoint, { method: 'DELETE', credentials: 'omit', headers }).catch(() => {});
  }
}
