#!/usr/bin/env node
// tests/www/llms-drift.mjs — www/llms.txt and www/llms-full.txt against www/openapi.json, the
// source the console's reference is rendered from, so that the three cannot drift: the same
// operations (method, path, credentials, answers, the 200 schema), the same request headers
// and protocol versions, the error members and statuses, the members of every public
// document, the same base address and documents. Each check is also run on altered copies,
// and must notice every alteration. TAP on stdout. Needs nothing but Node.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { done, ok } from '../lib/tap.mjs';

const www = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'www');
const read = (f) => readFileSync(join(www, f), 'utf8');
const files = new Set(['openapi.json', 'openapi.yaml', 'llms.txt', 'llms-full.txt', 'webmcp.html', 'index.html']);

const refName = (s) => s?.$ref?.split('/').pop();
const deref = (doc, v) => (v?.$ref ? doc.components[v.$ref.split('/')[2]][refName(v)] : v);
const sameSet = (a, b) => JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

function operations(doc) {
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const ok200 = op.responses['200'] && deref(doc, op.responses['200']).content?.['application/json']?.schema;
      ops.push({
        id: op.operationId, method: method.toUpperCase(), path,
        public: Array.isArray(op.security) && op.security.length === 0,
        statuses: Object.keys(op.responses),
        schema: refName(ok200),
      });
    }
  }
  return ops;
}

// Every difference between the documents and openapi.json, as sentences.
function problems(doc, short, full) {
  const out = [];
  const ops = operations(doc);
  const base = doc.servers[0].url.replace(/\/$/, '');

  // llms-full.txt §1: one table row per operation.
  const rows = [...full.matchAll(/^\| *([A-Za-z]+) *\| *([A-Z]+) (\S+) *\| *([^|]+?) *\| *([^|]+?) *\|$/gm)]
    .filter((m) => m[1] !== 'Operation').map((m) => ({ id: m[1], method: m[2], path: m[3], cred: m[4], answers: m[5] }));
  if (!sameSet(rows.map((r) => r.id), ops.map((o) => o.id))) {
    out.push(`llms-full.txt's operations table names ${rows.map((r) => r.id).join(' ')}; openapi.json has ${ops.map((o) => o.id).join(' ')}`);
  }
  for (const o of ops) {
    const r = rows.find((x) => x.id === o.id);
    if (!r) continue;
    if (r.method !== o.method || r.path !== o.path) out.push(`${o.id}: llms-full.txt says ${r.method} ${r.path}, openapi.json ${o.method} ${o.path}`);
    if ((r.cred === 'none') !== o.public) out.push(`${o.id}: llms-full.txt says credentials "${r.cred}", openapi.json ${o.public ? 'none' : 'a token'}`);
    const said = r.answers.match(/\b[1-5]\d\d\b/g) || [];
    if (!sameSet(said, o.statuses)) out.push(`${o.id}: llms-full.txt answers ${said.join(' ')}, openapi.json ${o.statuses.join(' ')}`);
    if (o.public && o.schema && !r.answers.includes(`200 ${o.schema}`)) out.push(`${o.id}: llms-full.txt does not name its 200 schema ${o.schema}`);
  }
  const count = { 5: 'five', 6: 'six', 7: 'seven', 8: 'eight' }[ops.length] || String(ops.length);
  if (!short.includes(`the ${count} HTTP operations`)) out.push(`llms.txt does not speak of "the ${count} HTTP operations"`);
  if (!full.includes(`outside the ${count} operations`)) out.push(`llms-full.txt does not speak of "the ${count} operations"`);

  // The headers of POST /mcp, and the protocol versions.
  const mcp = doc.paths['/mcp'].post;
  const headers = (mcp.parameters || []).map((p) => deref(doc, p)).filter((p) => p.in === 'header');
  const section = full.slice(full.indexOf('Request headers:'), full.indexOf('Request body:'));
  for (const h of headers) if (!section.includes(`- \`${h.name}`)) out.push(`llms-full.txt's request headers lack ${h.name}`);
  for (const m of section.matchAll(/^- `([A-Za-z-]+)[:` ]/gm)) {
    if (!headers.some((h) => h.name === m[1])) out.push(`llms-full.txt lists a request header openapi.json lacks: ${m[1]}`);
  }
  const pv = headers.find((h) => h.name === 'MCP-Protocol-Version');
  const supported = full.match(/Supported: ([^.]*)\./)?.[1].match(/\d{4}-\d\d-\d\d/g) || [];
  if (!sameSet(supported, pv?.description.match(/\d{4}-\d\d-\d\d/g) || [])) {
    out.push(`llms-full.txt supports ${supported.join(' ')}; openapi.json's MCP-Protocol-Version ${pv?.description.match(/\d{4}-\d\d-\d\d/g)?.join(' ')}`);
  }

  // Errors: HttpError's members, and the statuses of POST /mcp's failures.
  const errMembers = Object.keys(doc.components.schemas.HttpError.properties);
  const errList = full.slice(full.indexOf('## 4. Errors'), full.indexOf('| Status | Meaning'));
  const listed = [...errList.matchAll(/^- `([a-z_]+)`(?: \/ `([a-z_]+)`)?/gm)].flatMap((m) => [m[1], m[2]].filter(Boolean));
  if (!sameSet(listed, errMembers)) out.push(`llms-full.txt's HttpError members are ${listed.join(' ')}; openapi.json's ${errMembers.join(' ')}`);
  const errTable = full.slice(full.indexOf('| Status | Meaning'), full.indexOf('Failures of a JSON-RPC method'));
  const tableStatuses = [...errTable.matchAll(/^\| ([45]\d\d) \|/gm)].map((m) => m[1]);
  const failing = Object.keys(mcp.responses).filter((s) => s >= '400');
  if (!sameSet(tableStatuses, failing)) out.push(`llms-full.txt's status table has ${tableStatuses.join(' ')}; POST /mcp answers ${failing.join(' ')}`);

  // §6: every member of every public document, the required ones on its own line.
  for (const o of ops.filter((x) => x.public && x.schema)) {
    const s = doc.components.schemas[o.schema];
    const line = full.split('\n').find((l) => l.startsWith(`- \`GET ${o.path}\``));
    if (!line) {
      out.push(`llms-full.txt has no line for GET ${o.path}`);
      continue;
    }
    for (const m of Object.keys(s.properties || {})) {
      if (!full.includes(`\`${m}\``) && !full.includes(`"${m}"`)) out.push(`${o.schema}.${m} appears nowhere in llms-full.txt`);
    }
    for (const m of s.required || []) if (!line.includes(`\`${m}\``)) out.push(`GET ${o.path}: its required ${m} is not on its line`);
    if ((s.required || []).length && !line.includes('(required)')) out.push(`GET ${o.path}: its line does not say what is required`);
  }

  // Addresses: the one base address; documents that exist; the agents' interfaces.
  for (const [f, text] of [['llms.txt', short], ['llms-full.txt', full]]) {
    for (const m of text.matchAll(/https?:\/\/[^\s)`"<>]+/g)) {
      const u = m[0].replace(/[.,:;]+$/, '');
      if (/modelcontextprotocol\.io|rfc-editor\.org/.test(u)) continue;
      if (!u.startsWith(base)) out.push(`${f}: ${u} is not under the servers address ${base}`);
      const docPath = u.startsWith(`${base}/docs/`) ? u.slice(base.length + 6) : null;
      if (docPath !== null && !files.has(docPath || 'index.html')) out.push(`${f}: ${u} names no file of www/`);
    }
  }
  for (const [k, u] of Object.entries(doc['x-service-ai-interfaces'] || {})) {
    if (k === 'llms' ? !full.includes(u) : !short.includes(`(${u})`)) {
      out.push(`${k === 'llms' ? 'llms-full.txt' : 'llms.txt'} does not name x-service-ai-interfaces.${k} ${u}`);
    }
  }
  for (const o of ops) {
    if (!short.includes(`(${base}${o.path})`)) out.push(`llms.txt has no link to ${o.method} ${o.path}`);
  }
  return out;
}

const doc = JSON.parse(read('openapi.json'));
const short = read('llms.txt');
const full = read('llms-full.txt');
const found = problems(doc, short, full);
ok(found.length === 0, 'www/llms.txt and www/llms-full.txt say what www/openapi.json says', found.join('\n'));

// Each alteration must be noticed.
const mutations = {
  'an operation renamed in llms-full.txt': () => [doc, short, full.replace('| getMcpHealth |', '| getHealth |')],
  'a status missing from a row': () => [doc, short, full.replace('200, 202, 400, 401, 403, 404, 429, 500', '200, 202, 400, 401, 403, 404, 500')],
  'a response added to openapi.json': () => {
    const d = structuredClone(doc);
    d.paths['/mcp/health'].get.responses['503'] = { description: 'x' };
    return [d, short, full];
  },
  'a public operation given credentials': () => {
    const d = structuredClone(doc);
    d.paths['/server.json'].get.security = [{ bearerAuth: [] }];
    return [d, short, full];
  },
  'a header parameter added': () => {
    const d = structuredClone(doc);
    d.paths['/mcp'].post.parameters.push({ name: 'Mcp-Extra', in: 'header', schema: { type: 'string' } });
    return [d, short, full];
  },
  'a protocol version dropped from llms-full.txt': () => [doc, short, full.replace('Supported: 2024-11-05, ', 'Supported: ')],
  'an HttpError member added': () => {
    const d = structuredClone(doc);
    d.components.schemas.HttpError.properties.hint = { type: 'string' };
    return [d, short, full];
  },
  'a member added to a public document': () => {
    const d = structuredClone(doc);
    d.components.schemas.McpServerManifest.properties.packagesX = { type: 'array' };
    return [d, short, full];
  },
  'a link to a document that does not exist': () => [doc, short.replace('/docs/webmcp.html', '/docs/browser.html'), full],
  'the servers address changed': () => {
    const d = structuredClone(doc);
    d.servers[0].url = 'https://mcp.example.org';
    return [d, short, full];
  },
};
for (const [what, make] of Object.entries(mutations)) {
  const [d, s, f] = make();
  ok(problems(d, s, f).length > 0, `the check notices ${what}`);
}
done();
