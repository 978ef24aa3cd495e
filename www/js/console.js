// The docs page's live console: sign in (oauth.js), see the tools this identity may use,
// call one with a form made from its input schema, and watch the JSON-RPC exchange,
// progress included. Also renders the API reference from openapi.json (reference.js).

import { accessToken, completeSignIn, discover, grantedScope, signIn, signOut } from './oauth.js';
import { McpClient } from './mcp.js';
import { renderReference } from './reference.js';
import { schemaForm } from './schema-form.js';
import { el } from './dom.js';

const $ = (id) => document.getElementById(id);
const endpoint = new URL(document.querySelector('meta[name="mcpgate-endpoint"]')?.content || '/mcp', location.href).href;
const MAX_LOG = 300;

let info = null; // discovery: resource, scopes, metadata
let client = null;
let tools = [];
let current = null; // { name, form }
let signedOut = false;

// The exchange: HTTP lines, JSON-RPC messages out and in (never a header, so never a token).
function log(entry) {
  const list = $('exchange');
  let item;
  if (entry.kind === 'http') {
    item = el('li', { class: `http s${String(entry.status)[0]}` },
      `${entry.method} ${entry.url} → ${entry.status}${entry.note ? ` (${entry.note})` : ''}`);
  } else {
    const m = entry.message;
    const what = m?.method || (m && 'result' in m ? 'result' : (m?.error ? 'error' : ''));
    item = el('li', { class: entry.kind },
      el('span', { class: 'dir', text: entry.kind === 'out' ? '→ sent' : (entry.streamed ? '← event' : '← answer') }),
      ` ${what}`, el('pre', { text: JSON.stringify(m, null, m?.method?.startsWith('notifications/') ? 0 : 2) }));
  }
  list.append(item);
  while (list.children.length > MAX_LOG) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight; // the newest in view, without moving the page
}

function clearError() {
  $('error').hidden = true;
  $('error').replaceChildren();
}

// An error shown as it is; offer: { label, scope, after } adds a sign-in button for it.
function showError(message, offer = null) {
  const box = $('error');
  box.replaceChildren(el('p', { text: message }));
  if (offer) {
    const b = el('button', { type: 'button', 'data-testid': 'stepup', text: offer.label });
    b.addEventListener('click', () => startSignIn(offer.scope, offer.after));
    box.append(b);
  }
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

async function startSignIn(scope = null, after = null) {
  clearError();
  try {
    info ||= await discover(endpoint, log);
    await signIn(info, { scope, after, prompt: signedOut ? 'login' : null, log });
  } catch (e) {
    showError(`Sign-in failed: ${e.message}`);
  }
}

function signedInView(on) {
  $('signin').textContent = on ? 'Sign in again' : 'Sign in';
  $('signout').hidden = !on;
  $('who').textContent = on ? `Signed in. Scopes granted: ${grantedScope() || '(none)'}` : 'Not signed in.';
  $('workspace').hidden = !on;
}

function renderTools() {
  const list = $('tools');
  list.replaceChildren();
  for (const t of tools) {
    const b = el('button', { type: 'button', class: 'tool', text: t.name });
    b.addEventListener('click', () => select(t));
    list.append(el('li', { 'data-testid': `tool-${t.name}` }, b, el('small', { text: t.description || '' })));
  }
  $('tool-count').textContent = `${tools.length} tool${tools.length === 1 ? '' : 's'}`;
}

function select(tool, note = '') {
  clearError();
  for (const li of $('tools').children) li.classList.toggle('selected', li.dataset.testid === `tool-${tool.name}`);
  $('tool-name').textContent = tool.name;
  $('tool-desc').textContent = note || tool.description || '';
  $('tool-schema').textContent = JSON.stringify(tool.inputSchema ?? {}, null, 2);
  current = { name: tool.name, form: schemaForm($('tool-form'), tool.inputSchema) };
  $('call').disabled = false;
  $('result').textContent = '';
  $('progress').hidden = true;
  $('progress-note').textContent = '';
  $('tool-panel').hidden = false;
}

async function loadTools() {
  tools = await client.listTools();
  renderTools();
}

async function afterSignIn(after) {
  signedInView(true);
  client = new McpClient(endpoint, accessToken, log);
  await client.initialize();
  await loadTools();
  if (after?.tool) {
    const t = tools.find((x) => x.name === after.tool);
    select(t || { name: after.tool, inputSchema: {} },
      `Signed in again with ${grantedScope()}: ${t ? 'now in your list' : 'still not in your list'}; call it when ready.`);
    current.form.fill(after.args);
  }
}

function showResult(r) {
  const out = $('result');
  out.replaceChildren();
  out.classList.toggle('tool-error', Boolean(r?.isError));
  if (r?.isError) out.append(el('p', { class: 'warn', text: 'The tool ran and reported an error (isError).' }));
  for (const c of r?.content || []) {
    if (c.type === 'text') out.append(el('pre', { text: c.text }));
    else out.append(el('pre', { text: JSON.stringify(c, null, 2) }));
  }
  if (r?.structuredContent !== undefined) out.append(el('pre', { text: JSON.stringify(r.structuredContent, null, 2) }));
  if (!out.children.length) out.append(el('pre', { text: JSON.stringify(r, null, 2) }));
}

function explain(e, after) {
  const ch = e.challenge || {};
  if (e.status === 403 && ch.error === 'insufficient_scope') {
    const scope = [...new Set(`${grantedScope()} ${ch.scope || ''}`.split(/\s+/).filter(Boolean))].join(' ');
    showError(`403 insufficient_scope: this needs the scopes ${ch.scope || '(unnamed)'}; your token has ${grantedScope() || 'none'}.`,
      { label: `Sign in again with ${scope}`, scope, after });
  } else if (e.status === 401) {
    showError(`401: ${e.body?.error_description || 'the token was refused'}. Sign in again.`,
      { label: 'Sign in again', scope: null, after });
  } else {
    showError(e.message);
  }
}

async function call() {
  if (!current) return;
  clearError();
  let args;
  try {
    args = current.form.read();
  } catch (e) {
    showError(`Arguments: ${e.message}`);
    return;
  }
  const name = current.name;
  const bar = $('progress');
  $('call').disabled = true;
  $('result').textContent = 'Calling…';
  $('progress-note').textContent = '';
  bar.hidden = true;
  try {
    const r = await client.callTool(name, args, (p) => {
      bar.hidden = false;
      if (p.total) {
        bar.max = p.total;
        bar.value = p.progress;
      } else bar.removeAttribute('value');
      bar.textContent = `${p.progress}${p.total ? ` of ${p.total}` : ''}`;
      $('progress-note').textContent = p.message || `${p.progress}${p.total ? ` of ${p.total}` : ''}`;
    });
    showResult(r);
  } catch (e) {
    $('result').textContent = '';
    explain(e, { tool: name, args });
  } finally {
    $('call').disabled = false;
  }
}

function openByName(ev) {
  ev.preventDefault();
  const name = $('byname-name').value.trim();
  if (!name) return;
  select(tools.find((t) => t.name === name) || { name, inputSchema: {} },
    tools.some((t) => t.name === name) ? '' : 'Not in your list: the gateway will say why when you call it.');
}

async function main() {
  $('signin').addEventListener('click', () => startSignIn());
  $('signout').addEventListener('click', async () => {
    await client?.close();
    client = null;
    signOut();
    signedOut = true;
    tools = [];
    renderTools();
    signedInView(false);
  });
  $('call').addEventListener('click', call);
  $('byname').addEventListener('submit', openByName);
  $('refresh').addEventListener('click', () => loadTools().catch((e) => explain(e, null)));
  $('clear-log').addEventListener('click', () => $('exchange').replaceChildren());
  $('endpoint').textContent = endpoint;
  signedInView(false);
  renderReference($('reference-body'), 'openapi.json')
    .catch((e) => $('reference-body').replaceChildren(el('p', { class: 'warn', text: `Could not render openapi.json: ${e.message}` })));
  try {
    const back = await completeSignIn(log);
    if (back) await afterSignIn(back.after);
  } catch (e) {
    if (e.status) explain(e, null);
    else showError(e.message);
  }
}

main();
