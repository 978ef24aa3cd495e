#!/usr/bin/env node
// tests/proto/run.mjs — the data-driven protocol suite for POST /mcp (tests/proto/README.md).
// Runs every case of tests/proto/cases/ against one or more targets and prints TAP:
//
//   node tests/proto/run.mjs --url [NAME=]URL ... --cgi [NAME=]BIN ... --conf FILE
//        --token TOKEN [--only NAME[,NAME...]] [--cases DIR] [--jobs N] [--timeout S]
//        [--list] [--no-plan]
//
// A --url target gets the exact bytes and headers of a case over node:http (no header
// is added but Host, and Content-Length when the request has a body); a --cgi target
// runs the binary once per case with the CGI environment of tests/cgi/lib.sh and the
// body on stdin. Exit status 0 only when every test passed.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// --- command line -------------------------------------------------------------------
function usage(msg) {
  if (msg) process.stderr.write(`run.mjs: ${msg}\n`);
  process.stderr.write('usage: run.mjs (--url [NAME=]URL | --cgi [NAME=]BIN)... [--conf FILE] [--token TOKEN]\n'
    + '       [--only NAME[,NAME...]] [--cases DIR] [--jobs N] [--timeout SECONDS] [--list] [--no-plan]\n');
  process.exit(2);
}

const opt = {
  targets: [], conf: process.env.MCPGATE_CONFIG || '', token: process.env.TOKEN || '',
  only: [], cases: join(here, 'cases'), jobs: 4, timeout: 30, list: false, plan: true,
};
{
  const a = process.argv.slice(2);
  const val = (i) => { if (i + 1 >= a.length) usage(`${a[i]} needs a value`); return a[i + 1]; };
  const named = (v, kind) => {
    const m = /^([A-Za-z0-9_.-]+)=(.*)$/.exec(v);
    if (m && !/^[a-z]+:\/\//i.test(v)) return { name: m[1], where: m[2], kind };
    return { name: null, where: v, kind };
  };
  for (let i = 0; i < a.length; i++) {
    switch (a[i]) {
      case '--url': opt.targets.push(named(val(i), 'url')); i++; break;
      case '--cgi': opt.targets.push(named(val(i), 'cgi')); i++; break;
      case '--conf': opt.conf = val(i); i++; break;
      case '--token': opt.token = val(i); i++; break;
      case '--only': opt.only.push(...val(i).split(',').filter(Boolean)); i++; break;
      case '--cases': opt.cases = resolve(val(i)); i++; break;
      case '--jobs': opt.jobs = Math.max(1, Number(val(i)) || 1); i++; break;
      case '--timeout': opt.timeout = Math.max(1, Number(val(i)) || 30); i++; break;
      case '--list': opt.list = true; break;
      case '--no-plan': opt.plan = false; break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
  for (const t of opt.targets) {
    if (t.kind === 'cgi') {
      if (!t.where) t.where = process.env.MCPGATE_BIN || '';
      if (!t.where) usage('--cgi needs a binary (or MCPGATE_BIN)');
      t.name = t.name || 'cgi';
    } else {
      let u;
      try { u = new URL(t.where); } catch { usage(`not a URL: ${t.where}`); }
      t.url = u;
      t.name = t.name || u.host;
    }
  }
  if (!opt.list && opt.targets.length === 0) usage('no target');
  if (opt.targets.some((t) => t.kind === 'cgi') && !opt.conf) usage('--cgi needs --conf FILE (or MCPGATE_CONFIG)');
}

// --- strict JSON (numbers keep their text; duplicate keys are an error) --------------
class JNum {
  constructor(raw) { this.raw = raw; }
  get isInteger() { return /^-?\d+$/.test(this.raw); }
}
const NUM_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS_RE = /[ \t\n\r]*/y;

function parseJSON(text) {
  let i = 0;
  const fail = (why) => { throw new SyntaxError(`${why} at offset ${i}`); };
  const ws = () => { WS_RE.lastIndex = i; WS_RE.exec(text); i = WS_RE.lastIndex; };
  // A string: scanned by hand (a regex would backtrack over megabytes), checked by
  // JSON.parse when it holds an escape or a control character.
  const str = () => {
    const start = ++i;
    let plain = true;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const ch = text.charCodeAt(i);
      if (ch === 0x22) break;
      if (ch === 0x5c) { plain = false; i += 2; continue; }
      if (ch < 0x20) fail('control character in a string');
      i++;
    }
    const body = text.slice(start, i++);
    if (plain) return body;
    try { return JSON.parse(`"${body}"`); } catch { return fail('bad escape in a string'); }
  };
  const value = (depth) => {
    if (depth > 1000) fail('too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o = Object.create(null);
      ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a member name');
        const k = str();
        if (Object.prototype.hasOwnProperty.call(o, k)) fail(`duplicate member ${JSON.stringify(k)}`);
        ws();
        if (text[i++] !== ':') fail('expected :');
        o[k] = value(depth + 1);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return o; }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(text);
    if (!m) fail('unexpected character');
    i = NUM_RE.lastIndex;
    return new JNum(m[0]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('trailing data');
  return v;
}

// Compact, stable rendering for diffs (JNum prints as written).
function show(v, max = 2000) {
  let s;
  try {
    s = JSON.stringify(v, function mark(k, x) { return this[k] instanceof JNum ? `\u0000${this[k].raw}\u0000` : x; });
  } catch { s = String(v); }
  s = (s === undefined ? 'undefined' : s).replace(/"\\u0000(.*?)\\u0000"/g, '$1');
  return s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;
}

// --- patterns -----------------------------------------------------------------------
function numEqual(a, b) {
  if (a.isInteger && b.isInteger) return BigInt(a.raw) === BigInt(b.raw);
  return Number(a.raw) === Number(b.raw);
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JNum);

// match(pattern, got, path, out): pushes "path: why" for every mismatch.
function match(p, g, path, out) {
  if (out.length >= 20) return;
  if (typeof p === 'string') {
    switch (p) {
      case '<any>': if (g === undefined) out.push(`${path}: missing`); return;
      case '<string>': if (typeof g !== 'string') out.push(`${path}: expected a string, got ${show(g, 200)}`); return;
      case '<number>': if (!(g instanceof JNum)) out.push(`${path}: expected a number, got ${show(g, 200)}`); return;
      case '<integer>': if (!(g instanceof JNum && g.isInteger)) out.push(`${path}: expected an integer, got ${show(g, 200)}`); return;
      default:
        if (g !== p) out.push(`${path}: expected ${show(p, 200)}, got ${show(g, 200)}`);
        return;
    }
  }
  if (p instanceof JNum) {
    if (!(g instanceof JNum) || !numEqual(p, g)) out.push(`${path}: expected ${p.raw}, got ${show(g, 200)}`);
    return;
  }
  if (p === null || typeof p === 'boolean') {
    if (g !== p) out.push(`${path}: expected ${show(p)}, got ${show(g, 200)}`);
    return;
  }
  if (Array.isArray(p)) {
    if (!Array.isArray(g)) { out.push(`${path}: expected an array, got ${show(g, 200)}`); return; }
    if (p.length === 3 && p[0] === '<repeat>') {
      const n = p[2] instanceof JNum ? Number(p[2].raw) : NaN;
      if (g.length !== n) { out.push(`${path}: expected ${n} elements, got ${g.length}`); return; }
      g.forEach((el, k) => match(p[1], el, `${path}[${k}]`, out));
      return;
    }
    if (g.length !== p.length) out.push(`${path}: expected ${p.length} elements, got ${g.length}`);
    for (let k = 0; k < Math.min(p.length, g.length); k++) match(p[k], g[k], `${path}[${k}]`, out);
    return;
  }
  if (isObj(p)) {
    if (!isObj(g)) { out.push(`${path}: expected an object, got ${show(g, 200)}`); return; }
    const more = p['<more>'] === true;
    for (const k of Object.keys(p)) {
      if (k === '<more>') continue;
      const sub = `${path}.${/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : JSON.stringify(k)}`;
      if (!(k in g)) { out.push(`${sub}: missing`); continue; }
      match(p[k], g[k], sub, out);
    }
    if (!more) {
      for (const k of Object.keys(g)) if (!(k in p)) out.push(`${path}: unexpected member ${JSON.stringify(k)}`);
    }
    return;
  }
  out.push(`${path}: bad pattern ${show(p)}`);
}

// --- cases --------------------------------------------------------------------------
const DEFAULT_HEADERS = [
  ['Content-Type', 'application/json'],
  ['Accept', 'application/json, text/event-stream'],
  ['Authorization', 'Bearer $TOKEN'],
];

function lines(file) {
  if (!existsSync(file)) return null;
  return readFileSync(file, 'utf8').split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

function headerSet(file) {
  const hs = DEFAULT_HEADERS.map(([n, v]) => ({ name: n, value: v, dflt: true }));
  for (const l of lines(file) || []) {
    const c = l.indexOf(':');
    if (c <= 0) throw new Error(`headers: not "Name: value": ${l}`);
    const name = l.slice(0, c).trim();
    const value = l.slice(c + 1).trim();
    const lc = name.toLowerCase();
    if (value === '') {
      for (let k = hs.length - 1; k >= 0; k--) if (hs[k].name.toLowerCase() === lc) hs.splice(k, 1);
      continue;
    }
    const d = hs.find((h) => h.dflt && h.name.toLowerCase() === lc);
    if (d) { d.name = name; d.value = value; d.dflt = false; } else hs.push({ name, value, dflt: false });
  }
  return hs.map((h) => [h.name, h.value]);
}

function expectHeaders(file) {
  return (lines(file) || []).map((l) => {
    if (l.startsWith('!')) return { name: l.slice(1).trim(), absent: true };
    const c = l.indexOf(':');
    if (c <= 0) throw new Error(`expect-headers: not "Name: pattern": ${l}`);
    return { name: l.slice(0, c).trim(), pattern: l.slice(c + 1).trim() };
  });
}

async function loadCase(dir, name) {
  const p = (f) => join(dir, f);
  const c = { name, dir };
  c.description = existsSync(p('description')) ? readFileSync(p('description'), 'utf8').split('\n')[0].trim() : name;
  c.method = existsSync(p('method')) ? readFileSync(p('method'), 'utf8').trim() : 'POST';
  if (existsSync(p('request.mjs'))) {
    const mod = await import(pathToFileURL(p('request.mjs')).href);
    const b = await mod.default();
    c.body = Buffer.isBuffer(b) ? b : Buffer.from(String(b), 'utf8');
  } else if (existsSync(p('request.json'))) {
    c.body = readFileSync(p('request.json'));
  } else {
    c.body = null;
  }
  if (!existsSync(p('status'))) throw new Error('no status file');
  c.status = Number(readFileSync(p('status'), 'utf8').trim());
  if (!Number.isInteger(c.status)) throw new Error('status is not a number');
  c.headers = headerSet(p('headers'));
  c.expectHeaders = expectHeaders(p('expect-headers'));
  c.pattern = undefined;
  if (existsSync(p('response.json'))) c.pattern = parseJSON(readFileSync(p('response.json'), 'utf8'));
  return c;
}

function caseDirs() {
  const all = readdirSync(opt.cases).filter((d) => statSync(join(opt.cases, d)).isDirectory()).sort();
  if (opt.only.length === 0) return all;
  return all.filter((d) => opt.only.some((o) => d === o || d.startsWith(`${o}-`) || d.includes(o)));
}

// --- transports ---------------------------------------------------------------------
// Methods for which a request without a body carries no Content-Length.
const NO_BODY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE', 'TRACE']);

function withToken(headers) {
  return headers.map(([n, v]) => [n, v.split('$TOKEN').join(opt.token)]);
}

function sendHttp(target, c) {
  return new Promise((resolveP) => {
    const u = target.url;
    const raw = [];
    // With headers given as a list, node:http adds no Host of its own.
    if (!c.headers.some(([n]) => n.toLowerCase() === 'host')) raw.push('Host', u.host);
    for (const [n, v] of withToken(c.headers)) raw.push(n, v);
    const body = c.body ?? Buffer.alloc(0);
    if (c.body !== null || !NO_BODY_METHODS.has(c.method.toUpperCase())) raw.push('Content-Length', String(body.length));
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request({
      host: u.hostname, port: u.port || (u.protocol === 'https:' ? 443 : 80), path: `${u.pathname}${u.search}`,
      method: c.method, headers: raw, agent: false,
    }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const headers = new Map();
        for (let k = 0; k < res.rawHeaders.length; k += 2) {
          const n = res.rawHeaders[k].toLowerCase();
          headers.set(n, headers.has(n) ? `${headers.get(n)}, ${res.rawHeaders[k + 1]}` : res.rawHeaders[k + 1]);
        }
        resolveP({ status: res.statusCode, headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (e) => resolveP({ error: `response: ${e.message}` }));
    });
    req.setTimeout(opt.timeout * 1000, () => req.destroy(new Error(`no answer in ${opt.timeout} s`)));
    req.on('error', (e) => resolveP({ error: `request: ${e.message}` }));
    req.end(body.length ? body : undefined);
  });
}

function cgiEnv(c) {
  const env = {
    PATH: process.env.PATH, GATEWAY_INTERFACE: 'CGI/1.1', SERVER_PROTOCOL: 'HTTP/1.1',
    SERVER_NAME: '127.0.0.1', SERVER_PORT: '8080', REMOTE_ADDR: '127.0.0.1',
    REQUEST_METHOD: c.method, SCRIPT_NAME: '/mcp', PATH_INFO: '', QUERY_STRING: '',
  };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) if (process.env[k]) env[k] = process.env[k];
  const body = c.body ?? Buffer.alloc(0);
  if (c.body !== null || !NO_BODY_METHODS.has(c.method.toUpperCase())) env.CONTENT_LENGTH = String(body.length);
  for (const [n, v] of withToken(c.headers)) {
    const lc = n.toLowerCase();
    let key;
    if (lc === 'content-type') key = 'CONTENT_TYPE';
    else if (lc === 'content-length') key = 'CONTENT_LENGTH';
    else key = `HTTP_${n.toUpperCase().replace(/-/g, '_')}`;
    env[key] = key in env && key.startsWith('HTTP_') ? `${env[key]}, ${v}` : v;	// repeated headers are joined
  }
  return env;
}

function sendCgi(target, c) {
  return new Promise((resolveP) => {
    // A CGI run takes its configuration from the environment the server sets, never argv.
    const child = spawn(target.where, [], { env: { ...cgiEnv(c), MCPGATE_CONFIG: opt.conf }, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    let done = false;
    const timer = setTimeout(() => { child.kill('SIGKILL'); }, opt.timeout * 1000);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => { if (!done) { done = true; clearTimeout(timer); resolveP({ error: `spawn: ${e.message}` }); } });
    child.on('close', (code, signal) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      if (signal) { resolveP({ error: `mcpgate killed by ${signal}${signal === 'SIGKILL' ? ` (no answer in ${opt.timeout} s?)` : ''}; stderr: ${stderr.slice(-500)}` }); return; }
      const raw = Buffer.concat(out);
      let sep = raw.indexOf('\r\n\r\n');
      let skip = 4;
      const lf = raw.indexOf('\n\n');
      if (sep < 0 || (lf >= 0 && lf < sep)) { sep = lf; skip = 2; }
      if (sep < 0) { resolveP({ error: `no CGI header block (exit ${code}); output: ${show(raw.toString('utf8'), 300)}; stderr: ${stderr.slice(-500)}` }); return; }
      const headers = new Map();
      let status = 200;
      for (const l of raw.subarray(0, sep).toString('latin1').split(/\r?\n/)) {
        const k = l.indexOf(':');
        if (k <= 0) continue;
        const n = l.slice(0, k).trim().toLowerCase();
        const v = l.slice(k + 1).trim();
        if (n === 'status') { status = Number(v.split(' ')[0]); continue; }
        headers.set(n, headers.has(n) ? `${headers.get(n)}, ${v}` : v);
      }
      resolveP({ status, headers, body: raw.subarray(sep + skip), exit: code, stderr });
    });
    child.stdin.on('error', () => {});	// the gateway may answer before reading everything
    child.stdin.end(c.body ?? undefined);
  });
}

// --- checking -----------------------------------------------------------------------
function headerOk(pattern, value) {
  if (pattern === '<any>') return value !== undefined;
  if (value === undefined) return false;
  const re = /^\/(.*)\/([a-z]*)$/.exec(pattern);
  if (re) return new RegExp(re[1], re[2]).test(value);
  return value === pattern;
}

// The body as the pattern sees it: JSON, or the data of each `event: message` of an event stream.
function decodeBody(res) {
  const ct = (res.headers.get('content-type') || '').toLowerCase();
  const text = res.body.toString('utf8');
  if (/^text\/event-stream\b/.test(ct)) {
    const events = [];
    for (const block of text.split(/\r?\n\r?\n/)) {
      if (block.trim() === '') continue;
      let event = 'message';
      const data = [];
      for (const l of block.split(/\r?\n/)) {
        if (l.startsWith(':')) continue;
        const m = /^([^:]*)(?::\s?(.*))?$/.exec(l);
        if (m[1] === 'event') event = m[2] ?? '';
        else if (m[1] === 'data') data.push(m[2] ?? '');
      }
      if (data.length === 0) continue;
      if (event !== 'message') throw new SyntaxError(`event stream: unexpected event type ${JSON.stringify(event)}`);
      events.push(parseJSON(data.join('\n')));
    }
    return events;
  }
  if (!/^application\/json\s*(;|$)/.test(ct)) throw new SyntaxError(`Content-Type ${JSON.stringify(ct)} is neither application/json nor text/event-stream`);
  return parseJSON(text);
}

function check(c, res) {
  const why = [];
  if (res.error) return [res.error];
  if (res.status !== c.status) why.push(`status: expected ${c.status}, got ${res.status}`);
  for (const h of c.expectHeaders) {
    const v = res.headers.get(h.name.toLowerCase());
    if (h.absent) { if (v !== undefined) why.push(`header ${h.name}: expected absent, got ${JSON.stringify(v)}`); continue; }
    if (!headerOk(h.pattern, v)) why.push(`header ${h.name}: expected ${h.pattern}, got ${v === undefined ? '(absent)' : JSON.stringify(v)}`);
  }
  let got;
  if (c.pattern === undefined) {
    if (res.body.length) why.push(`body: expected none, got ${res.body.length} bytes: ${show(res.body.toString('utf8'), 300)}`);
  } else {
    try {
      got = decodeBody(res);
    } catch (e) {
      why.push(`body: ${e.message}`);
      why.push(`got body: ${show(res.body.toString('utf8'), 500)}`);
    }
    if (got !== undefined) {
      const out = [];
      match(c.pattern, got, '$', out);
      why.push(...out);
      // Every HttpError names the request it answers: request_id = X-Request-Id.
      if (isObj(got) && typeof got.request_id === 'string' && got.request_id !== res.headers.get('x-request-id')) {
        why.push(`request_id ${JSON.stringify(got.request_id)} differs from X-Request-Id ${JSON.stringify(res.headers.get('x-request-id'))}`);
      }
      if (why.length) {
        why.push(`expected: ${show(c.pattern, 1500)}`);
        why.push(`got:      ${show(got, 1500)}`);
      }
    }
  }
  if (why.length && res.stderr) why.push(`stderr: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return why;
}

// --- main ---------------------------------------------------------------------------
const names = caseDirs();
if (opt.list) { for (const n of names) console.log(n); process.exit(0); }
if (names.length === 0) { console.log('Bail out! no case matches'); process.exit(1); }

const cases = [];
for (const n of names) {
  try {
    cases.push(await loadCase(join(opt.cases, n), n));
  } catch (e) {
    cases.push({ name: n, description: n, loadError: e.message });
  }
}

const jobs = [];
for (const t of opt.targets) for (const c of cases) jobs.push({ t, c });
if (opt.plan) console.log(`1..${jobs.length}`);

const results = new Array(jobs.length);
let next = 0;
let printed = 0;
let failed = 0;
function flush() {
  while (printed < jobs.length && results[printed]) {
    const { t, c } = jobs[printed];
    const why = results[printed];
    const title = `${t.name}: ${c.name}: ${c.description}`.replace(/#/g, '\\#');
    if (why.length === 0) console.log(`ok ${printed + 1} - ${title}`);
    else {
      failed++;
      console.log(`not ok ${printed + 1} - ${title}`);
      for (const w of why) for (const l of String(w).split('\n')) console.log(`# ${l}`);
    }
    results[printed] = true;	// free the detail
    printed++;
  }
}
async function worker() {
  while (next < jobs.length) {
    const k = next++;
    const { t, c } = jobs[k];
    let why;
    if (c.loadError) why = [`case does not load: ${c.loadError}`];
    else {
      const res = t.kind === 'cgi' ? await sendCgi(t, c) : await sendHttp(t, c);
      try { why = check(c, res); } catch (e) { why = [`runner: ${e.stack || e}`]; }
    }
    results[k] = why;
    flush();
  }
}
await Promise.all(Array.from({ length: Math.min(opt.jobs, jobs.length) }, worker));
flush();
if (!opt.plan) console.log(`# ${jobs.length} tests, ${failed} failed`);
process.exit(failed ? 1 : 0);
