// The 2026-07-28 (stateless) path of the upstream fixture, for --modern and --modern-only:
// no initialize and no session; every request names its revision and the client's
// capabilities in params._meta, and the HTTP headers repeat what the body says.
// Server-to-client requests become InputRequiredResults (MRTR, SEP-2322), change
// notifications go on subscriptions/listen streams. Hand-written JSON-RPC over node:http,
// over the fixture's own tool, resource and prompt tables. See README.md.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

export const MODERN = '2026-07-28';
const META = 'io.modelcontextprotocol/';
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
// Methods of the earlier revisions that this one removed: 404/-32601 like any unknown one.
const NAMED = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };
const STATE_TTL_MS = 10 * 60 * 1000;

const text = (t) => ({ type: 'text', text: t });
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

// An error answered with an HTTP status of its own (the revision's transport errors).
class HttpRpcError extends McpError {
  constructor(status, code, message, data) { super(code, message, data); this.status = status; }
}
// Thrown by a tool that needs something of the client: becomes an InputRequiredResult.
class InputRequired {
  constructor(inputRequests, requestState) { this.inputRequests = inputRequests; this.requestState = requestState; }
}

// deps: { name, log, sendJson, tools, prompts, resources, templates, readResource,
//         completions, page, ownTool, instructions, keepAliveMs, privateCache, only }
export function createModern(deps) {
  const supported = deps.only ? [MODERN] : [MODERN, ...SUPPORTED_PROTOCOL_VERSIONS];
  const serverInfo = { name: deps.name, version: '1.0.0' };
  const capabilities = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    logging: {},
    completions: {},
  };
  const cacheHints = { ttlMs: 0, cacheScope: deps.privateCache ? 'private' : 'public' };

  // requestState: base64url(JSON) "." base64url(HMAC-SHA256), bound to the request it
  // continues (method and name) and valid 10 minutes; the key lives as long as the process.
  const secret = randomBytes(32);
  const mac = (body) => createHmac('sha256', secret).update(body).digest('base64url');
  function sign(target, data) {
    const body = Buffer.from(JSON.stringify({ target, exp: Date.now() + STATE_TTL_MS, data })).toString('base64url');
    return `${body}.${mac(body)}`;
  }
  function verify(target, state) {
    const [body, tag, more] = String(state).split('.');
    const want = body ? Buffer.from(mac(body)) : null;
    const got = Buffer.from(tag ?? '');
    let payload = null;
    if (more === undefined && want && got.length === want.length && timingSafeEqual(got, want)) {
      try { payload = JSON.parse(Buffer.from(body, 'base64url').toString()); } catch { payload = null; }
    }
    if (!payload || payload.target !== target) throw new McpError(ErrorCode.InvalidParams, 'requestState failed its integrity check');
    if (payload.exp < Date.now()) throw new McpError(ErrorCode.InvalidParams, 'requestState has expired');
    return payload.data;
  }

  // The answer a client gave to one input request, checked against what was asked.
  const RESULT_SHAPES = {
    'elicitation/create': (r) => ['accept', 'decline', 'cancel'].includes(r.action) && (r.content === undefined || isObject(r.content)),
    'sampling/createMessage': (r) => typeof r.role === 'string' && r.content !== undefined && typeof r.model === 'string',
    'roots/list': (r) => Array.isArray(r.roots),
  };
  function answerTo(call, key, method) {
    const r = call.inputResponses?.[key];
    if (r === undefined) return undefined;
    if (!isObject(r) || !RESULT_SHAPES[method](r)) {
      throw new McpError(ErrorCode.InvalidParams, `inputResponses.${key} is not a valid ${method} result`);
    }
    return r;
  }
  const CAPABILITY_OF = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };
  function requireCapability(call, cap) {
    if (!isObject(call.caps[cap])) {
      throw new HttpRpcError(400, -32021, `This request needs the client capability ${cap}`, { requiredCapabilities: { [cap]: {} } });
    }
  }
  // Asks for every request of `asks` (key → {method, params}) not answered yet; returns
  // the answers once all are there.
  function gather(call, asks, state) {
    const answers = {}, missing = {};
    for (const [key, req] of Object.entries(asks)) {
      requireCapability(call, CAPABILITY_OF[req.method]);
      const r = answerTo(call, key, req.method);
      if (r === undefined) missing[key] = req;
      else answers[key] = r;
    }
    if (Object.keys(missing).length) throw new InputRequired(missing, state === undefined ? undefined : sign(call.target, state));
    return answers;
  }

  const elicit = (message, properties, required = Object.keys(properties)) =>
    ({ method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties, required } } });
  const sample = (prompt, maxTokens) =>
    ({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: text(prompt) }], maxTokens } });
  const ROOTS = { method: 'roots/list', params: {} };
  const ASK_NAME = elicit('What is your name?', { name: { type: 'string' } });
  const ASK_CONFIRM = elicit('Please confirm', { ok: { type: 'boolean' } });
  const ASK_GREETING = sample('Generate a greeting', 50);
  const said = (r) => (r.action === 'accept' ? JSON.stringify(r.content ?? {}) : `(${r.action})`);
  const sampled = (r) => (Array.isArray(r.content) ? r.content : [r.content]).find((c) => c?.type === 'text')?.text ?? '(no text)';
  const rootList = (r) => r.roots.map((x) => x?.uri).join(', ') || '(none)';
  const done = (t) => ({ content: [text(t)] });

  // Tools of this revision only (MRTR, capability and subscription probes), listed after
  // the fixture's own: call(call) → result, or throws InputRequired / McpError.
  const OWN_TOOLS = new Map();
  const NO_ARGS = { type: 'object', additionalProperties: false };
  function ownTool(name, description, call) { OWN_TOOLS.set(name, { tool: { name, description, inputSchema: NO_ARGS }, call }); }

  ownTool('test_input_required_result_elicitation', 'Asks the user their name (elicitation as an InputRequiredResult), then greets them',
    (call) => {
      const { user_name: r } = gather(call, { user_name: ASK_NAME });
      return done(r.action === 'accept' ? `Hello, ${r.content?.name ?? 'stranger'}!` : `Elicitation ended: ${r.action}`);
    });
  ownTool('test_input_required_result_sampling', 'Asks the client for an LLM answer (sampling as an InputRequiredResult)',
    (call) => {
      const { capital_question: r } = gather(call, { capital_question: sample('What is the capital of France?', 100) });
      return done(`LLM response: ${sampled(r)}`);
    });
  ownTool('test_input_required_result_list_roots', 'Asks the client for its roots (roots/list as an InputRequiredResult)',
    (call) => {
      const { client_roots: r } = gather(call, { client_roots: ROOTS });
      return done(`Client roots: ${rootList(r)}`);
    });
  ownTool('test_input_required_result_request_state', 'Asks for a confirmation with a signed requestState; answers state-ok once both come back',
    (call) => {
      const { confirm } = gather(call, { confirm: ASK_CONFIRM }, { step: 'confirm' });
      if (call.state?.step !== 'confirm') throw new InputRequired({ confirm: ASK_CONFIRM }, sign(call.target, { step: 'confirm' }));
      return done(`state-ok: confirmation ${said(confirm)}`);
    });
  ownTool('test_input_required_result_multiple_inputs', 'Asks for a name (elicitation), a greeting (sampling) and the roots at once',
    (call) => {
      const a = gather(call, { user_name: ASK_NAME, greeting: ASK_GREETING, client_roots: ROOTS }, { step: 'all' });
      return done(`name ${said(a.user_name)}, greeting ${sampled(a.greeting)}, roots ${rootList(a.client_roots)}`);
    });
  ownTool('test_input_required_result_multi_round', 'Two rounds of elicitation (name, then colour), the state carried in requestState',
    (call) => {
      const round = call.state?.round ?? 1;
      if (round === 1) {
        const { step1 } = gather(call, { step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }) }, { round: 1 });
        throw new InputRequired({ step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
          sign(call.target, { round: 2, name: step1.content?.name ?? null }));
      }
      const { step2 } = gather(call, { step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }) }, call.state);
      return done(`name ${JSON.stringify(call.state.name)}, favorite color ${JSON.stringify(step2.content?.color ?? null)}`);
    });
  ownTool('test_input_required_result_tampered_state', 'Asks for a confirmation with an HMAC-signed requestState; a changed state is refused (-32602)',
    (call) => {
      const { confirm } = gather(call, { confirm: ASK_CONFIRM }, { step: 'confirm' });
      if (call.state?.step !== 'confirm') throw new InputRequired({ confirm: ASK_CONFIRM }, sign(call.target, { step: 'confirm' }));
      return done(`state verified; confirmation ${said(confirm)}`);
    });
  ownTool('test_input_required_result_capabilities', 'Asks only with what the client declared: elicitation, sampling, roots',
    (call) => {
      const asks = {};
      if (isObject(call.caps.elicitation)) asks.user_name = ASK_NAME;
      if (isObject(call.caps.sampling)) asks.greeting = ASK_GREETING;
      if (isObject(call.caps.roots)) asks.client_roots = ROOTS;
      if (!Object.keys(asks).length) return done('the client declared no capability to ask with');
      return done(`answered: ${Object.keys(gather(call, asks)).join(', ')}`);
    });
  ownTool('test_streaming_elicitation', 'Elicitation as an InputRequiredResult on an SSE answer (never a server-to-client request)',
    (call) => {
      requireCapability(call, 'elicitation');
      call.stream();
      const { confirm } = gather(call, { confirm: ASK_CONFIRM });
      return done(`confirmation ${said(confirm)}`);
    });
  ownTool('test_missing_capability', 'Needs the sampling capability: -32021 when the request does not declare it',
    (call) => {
      const { question: r } = gather(call, { question: sample('Say hello', 20) });
      return done(`LLM response: ${sampled(r)}`);
    });
  ownTool('test_logging_tool', 'Sends three info log messages when the request names a log level (_meta logLevel), none otherwise',
    (call, extra) => deps.tools.get('test_tool_with_logging').call(call.server, {}, {}, extra));
  // The trigger tools change a list for real (a tool or prompt test_changed_N, N counting
  // the changes, replaces the one before), then announce it: a gateway that fetches the
  // list again finds it changed.
  let toolChanges = 0;
  let promptChanges = 0;
  ownTool('test_trigger_tool_change', 'Changes the tool list (test_changed_N), then announces it on the subscriptions/listen streams that asked for it',
    () => {
      OWN_TOOLS.delete(`test_changed_${toolChanges}`);
      toolChanges += 1;
      ownTool(`test_changed_${toolChanges}`, 'A tool test_trigger_tool_change put here', () => done(`change ${toolChanges}`));
      return done(`${announce('toolsListChanged', 'notifications/tools/list_changed')} listen stream(s) notified`);
    });
  ownTool('test_trigger_prompt_change', 'Changes the prompt list (test_changed_N), then announces it on the subscriptions/listen streams that asked for it',
    () => {
      OWN_PROMPTS.delete(`test_changed_${promptChanges}`);
      promptChanges += 1;
      const name = `test_changed_${promptChanges}`;
      OWN_PROMPTS.set(name, { prompt: { name, description: 'A prompt test_trigger_prompt_change put here' },
        get: () => ({ messages: [{ role: 'user', content: text(`change ${promptChanges}`) }] }) });
      return done(`${announce('promptsListChanged', 'notifications/prompts/list_changed')} listen stream(s) notified`);
    });

  const OWN_PROMPTS = new Map([['test_input_required_result_prompt', {
    prompt: { name: 'test_input_required_result_prompt', description: 'A prompt that first asks the user for its context (elicitation as an InputRequiredResult)' },
    get(call) {
      const { user_context: r } = gather(call, { user_context: elicit('What context should the prompt use?', { context: { type: 'string' } }) });
      const context = r.action === 'accept' ? String(r.content?.context ?? '') : `(${r.action})`;
      return { messages: [{ role: 'user', content: text(`Answer with this context in mind: ${context}`) }] };
    },
  }]]);

  // subscriptions/listen streams: { res, id, filter }.
  const listeners = new Set();
  function send(res, message) { res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`); }
  function tagged(l, method, params = {}) {
    return { jsonrpc: '2.0', method, params: { ...params, _meta: { ...params._meta, [`${META}subscriptionId`]: l.id } } };
  }
  function announce(kind, method) {
    let n = 0;
    for (const l of listeners) if (l.filter[kind]) { send(l.res, tagged(l, method)); n++; }
    return n;
  }
  function resourceUpdated(uri) {
    for (const l of listeners) if (l.filter.resourceSubscriptions?.includes(uri)) send(l.res, tagged(l, 'notifications/resources/updated', { uri }));
  }
  function listen(msg, res, call) {
    const asked = msg.params.notifications;
    if (!isObject(asked)) throw new McpError(ErrorCode.InvalidParams, 'subscriptions/listen needs params.notifications');
    if (!call.acceptsSse) throw new HttpRpcError(406, ErrorCode.InvalidRequest, 'subscriptions/listen answers with text/event-stream: accept it');
    const filter = {};
    for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged']) if (asked[k] === true) filter[k] = true;
    if (Array.isArray(asked.resourceSubscriptions)) filter.resourceSubscriptions = asked.resourceSubscriptions.filter((u) => typeof u === 'string');
    const l = { res, id: msg.id, filter };
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    send(res, tagged(l, 'notifications/subscriptions/acknowledged', { notifications: filter }));
    listeners.add(l);
    const keepAlive = deps.keepAliveMs ? setInterval(() => res.write(': keepalive\n\n'), deps.keepAliveMs) : null;
    res.on('close', () => { listeners.delete(l); if (keepAlive) clearInterval(keepAlive); });
    deps.log(`listen ${JSON.stringify(msg.id)} opened (${listeners.size} open; ${Object.keys(filter).join(',') || 'nothing'})`);
  }
  // Ends every listen stream with its result (the server is stopping).
  function close() {
    for (const l of listeners) {
      send(l.res, { jsonrpc: '2.0', id: l.id, result: { resultType: 'complete', _meta: { [`${META}subscriptionId`]: l.id } } });
      l.res.end();
    }
    listeners.clear();
  }

  // The fixture's tools see an SDK Server and handler extra; these are what they use of
  // them, answered from the request: its client capabilities, its log level, and the
  // client requests (sampling, elicitation) as MRTR input requests.
  function shim(call, msg, req, res, auth) {
    const level = call.meta[`${META}logLevel`];
    const ask = (request, schema) => {
      const key = CAPABILITY_OF[request.method] ?? request.method;
      const r = call.inputResponses?.[key];
      if (r === undefined) throw new InputRequired({ [key]: request });
      const parsed = schema?.safeParse(r);
      if (parsed && !parsed.success) throw new McpError(ErrorCode.InvalidParams, `inputResponses.${key} is not a valid ${request.method} result`);
      return Promise.resolve(parsed ? parsed.data : r);
    };
    call.server = {
      getClientCapabilities: () => call.caps,
      isMessageIgnored: (l) => !LEVELS.includes(level) || LEVELS.indexOf(l) < LEVELS.indexOf(level),
      request: ask,
    };
    const aborter = new AbortController();
    res.on('close', () => { if (!res.writableFinished) aborter.abort('the client closed the connection'); });
    return {
      signal: aborter.signal,
      requestId: msg.id,
      _meta: call.meta,
      authInfo: auth ?? undefined,
      requestInfo: { headers: req.headers },
      sendRequest: ask,
      sendNotification: async (n) => call.notify(n),
    };
  }

  function listTools(extra) {
    const own = deps.ownTool(extra);
    const list = [...[...deps.tools.values()].map((t) => t.tool), ...[...OWN_TOOLS.values()].map((t) => t.tool)];
    return own ? [...list, own.tool] : list;
  }

  async function dispatch(msg, call, req, res, auth) {
    const p = msg.params;
    const extra = shim(call, msg, req, res, auth);
    switch (msg.method) {
      case 'server/discover':
        return { supportedVersions: supported, capabilities, instructions: deps.instructions, ...cacheHints, _meta: { [`${META}serverInfo`]: serverInfo } };
      case 'tools/list':
        return { ...deps.page(listTools(extra), p.cursor, 'tools'), ...cacheHints };
      case 'tools/call': {
        if (typeof p.name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params.name');
        const args = isObject(p.arguments) ? p.arguments : {};
        const own = deps.ownTool(extra);
        if (own && own.tool.name === p.name) return own.call(call.server, {}, args, extra);
        if (OWN_TOOLS.has(p.name)) return OWN_TOOLS.get(p.name).call(call, extra);
        const t = deps.tools.get(p.name);
        if (!t) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${p.name}`);
        return t.call(call.server, {}, args, extra);	// no session: a note lives for one call
      }
      case 'resources/list':
        return { ...deps.page(deps.resources, p.cursor, 'resources'), ...cacheHints };
      case 'resources/templates/list':
        return { ...deps.page(deps.templates, p.cursor, 'resourceTemplates'), ...cacheHints };
      case 'resources/read': {
        const c = typeof p.uri === 'string' ? deps.readResource(p.uri) : null;
        if (!c) throw new McpError(ErrorCode.InvalidParams, 'Resource not found', { uri: p.uri });
        return { contents: [c], ...cacheHints };
      }
      case 'prompts/list':
        return { ...deps.page([...[...deps.prompts.values()].map((x) => x.prompt), ...[...OWN_PROMPTS.values()].map((x) => x.prompt)], p.cursor, 'prompts'), ...cacheHints };
      case 'prompts/get': {
        if (OWN_PROMPTS.has(p.name)) return { description: OWN_PROMPTS.get(p.name).prompt.description, ...OWN_PROMPTS.get(p.name).get(call) };
        const pr = deps.prompts.get(p.name);
        if (!pr) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${p.name}`);
        const a = isObject(p.arguments) ? p.arguments : {};
        for (const arg of pr.prompt.arguments ?? []) {
          if (arg.required && typeof a[arg.name] !== 'string') throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${arg.name}`);
        }
        return { description: pr.prompt.description, ...pr.get(a) };
      }
      case 'completion/complete': {
        const { ref, argument } = p;
        if (!isObject(ref) || !isObject(argument)) throw new McpError(ErrorCode.InvalidParams, 'completion/complete needs ref and argument');
        const values = (deps.completions[`${ref.type}:${ref.name ?? ref.uri}:${argument.name}`] ?? [])
          .filter((v) => v.startsWith(argument.value ?? ''));
        return { completion: { values, total: values.length, hasMore: false } };
      }
      case 'subscriptions/listen':
        return listen(msg, res, call);
      default:
        throw new HttpRpcError(404, ErrorCode.MethodNotFound, `Method not found: ${msg.method}`);
    }
  }

  // RFC 2047-like encoding of SEP-2243 header values that are not plain ASCII.
  function headerValue(v) {
    if (v === undefined) return undefined;
    const s = String(v).trim();
    const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(s);
    return m ? Buffer.from(m[1], 'base64').toString('utf8') : s;
  }

  // The transport's checks, in order: the message, _meta, the headers against the body,
  // the revision.
  function check(msg, req) {
    if (!isObject(msg) || msg.jsonrpc !== '2.0' || typeof msg.method !== 'string') {
      throw new HttpRpcError(400, ErrorCode.InvalidRequest, 'Invalid Request: one JSON-RPC request or notification (no batches)');
    }
    const meta = msg.params?._meta;
    if (msg.method === 'initialize' && !isObject(meta)) {
      // A client of an earlier revision: tell it what this server speaks.
      throw new HttpRpcError(400, -32022, `Unsupported protocol version: ${msg.params?.protocolVersion}`,
        { supported, requested: String(msg.params?.protocolVersion ?? req.headers['mcp-protocol-version'] ?? '') });
    }
    if (msg.params !== undefined && !isObject(msg.params)) throw new HttpRpcError(400, ErrorCode.InvalidParams, 'Invalid params: not an object');
    if (!isObject(meta)) throw new HttpRpcError(400, ErrorCode.InvalidParams, 'Invalid params: _meta is required');
    const version = meta[`${META}protocolVersion`];
    if (typeof version !== 'string') throw new HttpRpcError(400, ErrorCode.InvalidParams, `Invalid params: _meta.${META}protocolVersion is required`);
    if (!isObject(meta[`${META}clientCapabilities`])) {
      throw new HttpRpcError(400, ErrorCode.InvalidParams, `Invalid params: _meta.${META}clientCapabilities is required`);
    }
    const header = headerValue(req.headers['mcp-protocol-version']);
    if (header !== version) throw new HttpRpcError(400, -32020, `Header mismatch: MCP-Protocol-Version ${header ?? '(none)'}, _meta names ${version}`);
    if (version !== MODERN) throw new HttpRpcError(400, -32022, `Unsupported protocol version: ${version}`, { supported, requested: version });
    const method = headerValue(req.headers['mcp-method']);
    if (method !== msg.method) throw new HttpRpcError(400, -32020, `Header mismatch: Mcp-Method ${method ?? '(none)'}, the body's method is ${msg.method}`);
    const field = NAMED[msg.method];
    if (field && typeof msg.params[field] === 'string') {
      const name = headerValue(req.headers['mcp-name']);
      if (name !== msg.params[field]) throw new HttpRpcError(400, -32020, `Header mismatch: Mcp-Name ${name ?? '(none)'}, params.${field} is ${msg.params[field]}`);
    }
    return meta;
  }

  function accepts(req, type) {
    const a = String(req.headers.accept ?? '*/*').toLowerCase();
    return a.includes(type) || a.includes('*/*');
  }

  // One POST of this revision. auth: the verified token (bearer mode) or null.
  async function handle(req, res, msg, auth) {
    const id = isObject(msg) && (typeof msg.id === 'string' || typeof msg.id === 'number') ? msg.id : null;
    let sse = false;
    const answer = (status, body) => {
      if (sse) { send(res, body); res.end(); } else deps.sendJson(res, status, body);
    };
    const fail = (e) => {
      const status = e instanceof HttpRpcError ? e.status : 200;
      const code = e instanceof McpError ? e.code : ErrorCode.InternalError;
      const message = e instanceof McpError ? e.message.replace(/^MCP error -?\d+: /, '') : 'Internal error';
      if (!(e instanceof McpError)) deps.log(`${msg?.method}: ${e.stack ?? e}`);
      answer(status, { jsonrpc: '2.0', id, error: { code, message, ...(e?.data !== undefined ? { data: e.data } : {}) } });
    };
    if (!String(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      return fail(new HttpRpcError(415, ErrorCode.InvalidRequest, 'Unsupported Media Type: Content-Type must be application/json'));
    }
    if (!accepts(req, 'application/json') && !accepts(req, 'text/event-stream')) {
      return fail(new HttpRpcError(406, ErrorCode.InvalidRequest, 'Not Acceptable: accept application/json or text/event-stream'));
    }
    let meta;
    try { meta = check(msg, req); } catch (e) { return fail(e); }
    if (msg.id === undefined) {	// a notification: nothing to answer
      res.writeHead(202).end();
      return;
    }
    const p = msg.params;
    const call = {
      meta,
      caps: meta[`${META}clientCapabilities`],
      acceptsSse: accepts(req, 'text/event-stream'),
      target: `${msg.method}:${p.name ?? p.uri ?? ''}`,
      inputResponses: undefined,
      state: undefined,
      // Notifications of the call (progress, logs) turn the answer into an event stream
      // when the client takes one; otherwise they are dropped.
      stream() {
        if (sse || !call.acceptsSse || res.headersSent) return sse;
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
        sse = true;
        return sse;
      },
      notify(n) { if (call.stream() && !res.writableEnded) send(res, { jsonrpc: '2.0', ...n }); },
    };
    try {
      if (['tools/call', 'prompts/get', 'resources/read'].includes(msg.method)) {
        if (p.inputResponses !== undefined) {
          if (!isObject(p.inputResponses)) throw new McpError(ErrorCode.InvalidParams, 'inputResponses must be an object');
          call.inputResponses = p.inputResponses;
        }
        if (p.requestState !== undefined) {
          if (typeof p.requestState !== 'string') throw new McpError(ErrorCode.InvalidParams, 'requestState must be a string');
          call.state = verify(call.target, p.requestState);
        }
      }
      let result;
      try {
        result = await dispatch(msg, call, req, res, auth);
      } catch (e) {
        if (!(e instanceof InputRequired)) throw e;
        result = { resultType: 'input_required', inputRequests: e.inputRequests, ...(e.requestState ? { requestState: e.requestState } : {}) };
      }
      if (msg.method === 'subscriptions/listen') return;	// the stream stays open
      answer(200, { jsonrpc: '2.0', id, result: { resultType: 'complete', ...result } });
    } catch (e) {
      fail(e);
    }
  }

  // Whether a POST of --modern (both revisions) is one of this revision's: its header or
  // its _meta names a revision, and not one the SDK's session path speaks; a session's
  // requests and an initialize without them stay there.
  function claims(req, body) {
    const header = headerValue(req.headers['mcp-protocol-version']);
    if (header === MODERN) return true;
    if (req.headers['mcp-session-id'] !== undefined) return false;
    const named = (Array.isArray(body) ? body : [body]).some((m) => isObject(m?.params?._meta) && `${META}protocolVersion` in m.params._meta);
    return named || (header !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(header));
  }

  return { handle, claims, resourceUpdated, close };
}
