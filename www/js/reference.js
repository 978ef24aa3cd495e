// The API reference, rendered from openapi.json in the page: the auth model, every
// operation (parameters, request body, responses, headers), every schema. Nothing from
// the document is ever inserted as HTML: text and Markdown become DOM nodes.

import { markdown } from './md.js';
import { el } from './dom.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const refName = (ref) => ref.split('/').pop();

function deref(doc, v) {
  for (let i = 0; v && typeof v.$ref === 'string' && v.$ref.startsWith('#/') && i < 8; i += 1) {
    let cur = doc;
    for (const p of v.$ref.slice(2).split('/')) cur = cur?.[p.replace(/~1/g, '/').replace(/~0/g, '~')];
    v = cur;
  }
  return v || {};
}

// A schema in a few words, schema names linked to their section.
function typeOf(s) {
  const f = document.createDocumentFragment();
  if (!s || typeof s !== 'object') return f;
  if (s.$ref) {
    f.append(el('a', { href: `#schema-${refName(s.$ref)}`, text: refName(s.$ref) }));
    return f;
  }
  const alts = s.oneOf || s.anyOf;
  if (alts) {
    f.append(s.oneOf ? 'one of ' : 'any of ');
    alts.forEach((a, i) => f.append(i ? ' | ' : '', typeOf(a)));
    return f;
  }
  if (s.allOf) {
    s.allOf.forEach((a, i) => f.append(i ? ' & ' : '', typeOf(a)));
    return f;
  }
  if ('const' in s) {
    f.append(el('code', { text: JSON.stringify(s.const) }));
    return f;
  }
  if (Array.isArray(s.enum)) {
    s.enum.forEach((v, i) => f.append(i ? ' | ' : '', el('code', { text: JSON.stringify(v) })));
    return f;
  }
  const t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type || 'any');
  if (t === 'array' && s.items) f.append('array of ', typeOf(s.items));
  else f.append(t);
  if (s.format) f.append(` (${s.format})`);
  if (s.pattern) f.append(' matching ', el('code', { text: s.pattern }));
  return f;
}

function table(head, rows) {
  const t = el('table', {}, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { text: h })))));
  const body = el('tbody');
  for (const r of rows) body.append(el('tr', {}, ...r.map((c) => (c instanceof Node ? el('td', {}, c) : el('td', { text: c ?? '' })))));
  t.append(body);
  return el('div', { class: 'scroll' }, t);
}

const pre = (v) => el('pre', { class: 'json', text: JSON.stringify(v, null, 2) });

function examples(content) {
  const ex = content.examples ? Object.entries(content.examples) : (content.example !== undefined ? [['example', { value: content.example }]] : []);
  return ex.map(([name, e]) => el('details', { class: 'example' }, el('summary', { text: e.summary || name }), pre(e.value)));
}

function contentList(doc, content) {
  const f = document.createDocumentFragment();
  for (const [type, c] of Object.entries(content || {})) {
    f.append(el('p', {}, el('code', { text: type }), c.schema ? ': ' : '', typeOf(c.schema)), ...examples(c));
  }
  return f;
}

function security(doc, op) {
  const req = op.security ?? doc.security ?? [];
  if (!req.length || req.every((r) => Object.keys(r).length === 0)) return el('p', { class: 'auth' }, 'Credentials: none (public).');
  const p = el('p', { class: 'auth' }, 'Credentials: ');
  req.forEach((r, i) => {
    Object.entries(r).forEach(([name, scopes], j) => {
      p.append(i || j ? ' or ' : '', el('a', { href: `#auth-${name}`, text: name }), scopes.length ? ` (${scopes.join(' ')})` : '');
    });
  });
  return p;
}

function operation(doc, path, method, op) {
  const id = op.operationId || `${method}-${path}`;
  const s = el('section', { class: 'op', id: `op-${id}`, 'data-testid': `op-${id}` },
    el('h4', {}, el('span', { class: `method ${method}`, text: method.toUpperCase() }), ' ', el('code', { class: 'path', text: path })),
    el('p', { class: 'summary' }, el('strong', { text: op.summary || '' }), ' ', el('span', { class: 'muted', text: `(${id})` })),
    security(doc, op));
  if (op.description) s.append(el('details', { class: 'desc' }, el('summary', { text: 'Description' }), markdown(op.description, 5)));
  const params = [...(doc.paths[path].parameters || []), ...(op.parameters || [])].map((p) => deref(doc, p));
  if (params.length) {
    s.append(el('h5', { text: 'Parameters' }), table(['name', 'in', 'type', 'required', 'description'],
      params.map((p) => [el('code', { text: p.name }), p.in, typeOf(p.schema), p.required ? 'yes' : 'no', markdown(p.description, 6)])));
  }
  if (op.requestBody) {
    const rb = deref(doc, op.requestBody);
    s.append(el('h5', { text: `Request body${rb.required ? ' (required)' : ''}` }));
    if (rb.description) s.append(markdown(rb.description, 6));
    s.append(contentList(doc, rb.content));
  }
  s.append(el('h5', { text: 'Responses' }), table(['status', 'description', 'body', 'headers'],
    Object.entries(op.responses || {}).map(([status, r0]) => {
      const r = deref(doc, r0);
      const headers = document.createDocumentFragment();
      Object.keys(r.headers || {}).forEach((h, i) => headers.append(i ? ', ' : '', el('code', { text: h })));
      return [el('strong', { class: 'status', text: status }), markdown(r.description, 6), contentList(doc, r.content), headers];
    })));
  return s;
}

function schemaSection(doc, name, s) {
  const sec = el('section', { class: 'schema', id: `schema-${name}` },
    el('h4', {}, el('code', { text: name }), s.title ? ` ${s.title}` : ''));
  if (s.description) sec.append(markdown(s.description, 5));
  sec.append(el('p', {}, 'Type: ', typeOf({ ...s, title: undefined, description: undefined })));
  const props = s.properties ? Object.entries(s.properties) : [];
  if (props.length) {
    const req = new Set(s.required || []);
    sec.append(table(['member', 'type', 'required', 'description'],
      props.map(([k, p]) => [el('code', { text: k }), typeOf(p), req.has(k) ? 'yes' : 'no', markdown(p.description, 6)])));
  }
  sec.append(el('details', {}, el('summary', { text: 'JSON Schema' }), pre(s)));
  return sec;
}

export async function renderReference(container, url) {
  const res = await fetch(url, { credentials: 'omit' });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const doc = await res.json();
  container.replaceChildren();
  const info = doc.info || {};
  container.append(el('p', {}, el('strong', { text: info.title }), ` ${info.version} — OpenAPI ${doc.openapi}. `, info.summary || ''));
  if (info.description) container.append(el('details', { class: 'desc' }, el('summary', { text: 'Overview: tools at run time, getting access, revisions, errors' }), markdown(info.description, 4)));
  if (doc.servers?.length) {
    container.append(el('p', {}, 'Servers: ', ...doc.servers.flatMap((sv, i) => [i ? ', ' : '', el('code', { text: sv.url }), sv.description ? ` (${sv.description})` : ''])));
  }

  const ops = [];
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const m of METHODS) if (item[m]) ops.push({ path, method: m, op: item[m] });
  }
  container.append(el('h3', { id: 'ref-operations', text: 'Operations' }));
  const toc = el('ul', { class: 'toc' });
  for (const { path, method, op } of ops) {
    toc.append(el('li', {}, el('a', { href: `#op-${op.operationId}` }, el('span', { class: `method ${method}`, text: method.toUpperCase() }), ' ', el('code', { text: path })), ` ${op.summary || ''}`));
  }
  container.append(toc);
  const tags = (doc.tags || []).map((t) => t.name);
  for (const { op } of ops) for (const t of op.tags || []) if (!tags.includes(t)) tags.push(t);
  const untagged = ops.filter((o) => !o.op.tags?.length);
  for (const tag of [...tags, ...(untagged.length ? [null] : [])]) {
    const mine = ops.filter((o) => (tag === null ? !o.op.tags?.length : o.op.tags?.includes(tag)));
    if (!mine.length) continue;
    const t = (doc.tags || []).find((x) => x.name === tag);
    const g = el('div', { class: 'tag' }, el('h3', { text: tag ?? 'Other' }));
    if (t?.description) g.append(markdown(t.description, 4));
    for (const o of mine) g.append(operation(doc, o.path, o.method, o.op));
    container.append(g);
  }

  const schemes = doc.components?.securitySchemes || {};
  container.append(el('h3', { id: 'ref-auth', text: 'Authentication' }));
  for (const [name, s] of Object.entries(schemes)) {
    const sec = el('section', { class: 'scheme', id: `auth-${name}` },
      el('h4', {}, el('code', { text: name }), ` ${s.type}${s.scheme ? ` (${s.scheme})` : ''}`));
    if (s.description) sec.append(markdown(s.description, 5));
    if (s.bearerFormat) sec.append(el('p', {}, 'Token: ', s.bearerFormat));
    for (const [flow, f] of Object.entries(s.flows || {})) {
      sec.append(el('p', {}, el('strong', { text: flow }), ': ',
        ...['authorizationUrl', 'tokenUrl'].filter((k) => f[k]).flatMap((k) => [`${k} `, el('code', { text: f[k] }), ' ']),
        Object.keys(f.scopes || {}).length ? `scopes: ${Object.keys(f.scopes).join(' ')}` : 'scopes: deployment-specific'));
    }
    container.append(sec);
  }

  container.append(el('h3', { id: 'ref-schemas', text: 'Schemas' }));
  for (const [name, s] of Object.entries(doc.components?.schemas || {})) container.append(schemaSection(doc, name, s));

  const ai = doc['x-service-ai-interfaces'];
  if (ai) {
    container.append(el('h3', { text: 'For agents' }), el('ul', {}, ...Object.entries(ai).map(([k, v]) => el('li', {}, `${k}: `, el('code', { text: v })))));
  }
  return doc;
}
