#!/usr/bin/env node
// Connected accounts end to end: an MCP client of the gateway (connect-client.mjs, the SDK)
// and headless Chromium (Debian's chromium driven by playwright-core; nothing downloaded)
// against nginx + mcpgate + two authorization servers (tests/idp with their own login and
// consent pages): the organisation's (ORG, the gateway's issuer) and a third party's (TP, the
// tracker upstream's own). tests/www/connect.sh starts the stack and relays this script's TAP.
//
//   1. alice's session (elicitation.url declared) lists tr_whoami; its call answers -32042
//      with one URL elicitation to connect-path?ticket=...; a session that did not declare
//      the capability gets a JSON-RPC error whose message holds such a URL.
//   2. Refusals, each an HTML page with Cache-Control: no-store and a CSP: a ticket used
//      twice (the first use: 302 to ORG's authorization endpoint, code + PKCE S256, the
//      gateway's client, redirect_uri connect-path, resource the gateway, scope openid, a
//      state, and the mcpgate_connect cookie), an altered ticket, one it never made;
//      alice's link opened where bob signs in at ORG (403, "made for another person");
//      ORG's callback with its state altered; TP's answer "access_denied" (the person
//      cancels at TP's consent page); TP's callback with the iss of another issuer.
//   3. The happy path, in a fresh browser: alice's call → -32042 → the URL → ORG's login
//      and consent as alice → (ORG's callback: 302 to TP, code + PKCE S256, the gateway's client
//      there, resource the tracker, scope user-scopes, a new state) → TP's login and consent
//      as alice → "Connected" → the same call again answers, with the token TP issued
//      for alice (whoami: sub alice, client the gateway's at TP, audience the tracker);
//      the time from the elicitation to the connected call is printed. Both callbacks
//      replayed afterwards: 400.
//   4. Afterwards: alice's session without the capability is served too; bob is still
//      asked to connect his own account.
//   5. connect-path with nothing asked, in alice's browser: her connections (the tracker
//      connected); its Disconnect form, submitted by the browser, leaves it not connected,
//      and her next call is asked to connect again.
//   Throughout: no request leaves loopback; a screenshot of each state in --artifacts.
//
//   ALICE_TOKEN=T BOB_TOKEN=T node connect-browser.mjs --base URL --org ISSUER --tp ISSUER
//        --tracker URL --org-client ID --tp-client ID --artifacts DIR [--fragments FILE]
//
// Prints TAP (plan last). Stops itself after 280 s. Exit 1 on any failure.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { done, ok } from '../../lib/tap.mjs';
import { URL_ELICITATION_REQUIRED, callTool, connectClient, textJson } from './connect-client.mjs';

const { values: opt } = parseArgs({
  options: {
    base: { type: 'string' }, org: { type: 'string' }, tp: { type: 'string' }, tracker: { type: 'string' },
    'org-client': { type: 'string' }, 'tp-client': { type: 'string' },
    artifacts: { type: 'string' }, fragments: { type: 'string' },
  },
});
for (const k of ['base', 'org', 'tp', 'tracker', 'org-client', 'tp-client', 'artifacts']) {
  if (!opt[k]) {
    process.stderr.write(`connect-browser.mjs: --${k} is required\n`);
    process.exit(2);
  }
}
const TOKENS = { alice: process.env.ALICE_TOKEN, bob: process.env.BOB_TOKEN };
if (!TOKENS.alice || !TOKENS.bob) {
  process.stderr.write('connect-browser.mjs: ALICE_TOKEN and BOB_TOKEN must be set\n');
  process.exit(2);
}
const BASE = opt.base.replace(/\/$/, '');
const MCP = `${BASE}/mcp`;
const CONNECT = `${BASE}/mcp/connect`;
const ORG = opt.org.replace(/\/$/, '');
const TP = opt.tp.replace(/\/$/, '');
const TOOL = 'tr_whoami';
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const T = 60000; // one step's bound: generous for a loaded machine

const requests = []; // every request a browser made: { who, method, url }
const answers = []; // every answer of connect-path: { via, who, url, status, headers, body? }
const callbacks = []; // requests to connect-path carrying a code or an error: { who, url }
const secrets = new Set(); // tickets, states, codes: their pieces must be in no log
const contexts = [];
const profiles = [];

function diag(text) {
  for (const line of String(text).split('\n')) console.log(`# ${line}`);
}

async function finish() {
  for (const c of contexts) await c.close().catch(() => {});
  for (const d of profiles) fs.rmSync(d, { recursive: true, force: true });
  if (opt.fragments) {
    const all = [...secrets].filter((t) => t && t.length >= 24);
    fs.writeFileSync(opt.fragments, all.map((t) => `${t.slice(Math.floor(t.length / 2), Math.floor(t.length / 2) + 12)}\n${t.slice(-12)}\n`).join(''), { mode: 0o600 });
  }
  done();
}
const watchdog = setTimeout(() => {
  ok(false, 'the run finished within 280 s');
  finish();
}, 280000);
watchdog.unref();

const parse = (u, base) => URL.parse(u, base);
const isConnect = (u) => {
  const x = parse(u);
  return !!x && `${x.origin}${x.pathname}` === CONNECT;
};
// The tickets, states and codes of a URL (query and fragment) are secrets.
function remember(u, base) {
  const x = parse(u, base);
  if (!x) return;
  for (const p of [x.searchParams, new URLSearchParams(x.hash.slice(1))]) {
    for (const k of ['ticket', 'state', 'code']) if (p.get(k)) secrets.add(p.get(k));
  }
}
const guarded = (a) => /no-store/i.test(a.headers['cache-control'] ?? '') && !!a.headers['content-security-policy'];
const html = (a) => /^text\/html/i.test(a.headers['content-type'] ?? '');
// What a page says: its text without markup, styles or scripts.
const said = (body) => body?.replace(/<(style|script)\b[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 400);
const brief = (a) => (a ? { url: a.url, status: a.status, 'content-type': a.headers['content-type'], 'cache-control': a.headers['cache-control'], csp: a.headers['content-security-policy'], location: a.headers.location, says: said(a.body) } : 'no answer');

// A GET of connect-path from Node, redirects not followed; recorded in answers.
async function fetchConnect(url, cookie) {
  remember(url);
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { Cookie: cookie } : {}, signal: AbortSignal.timeout(T) });
  const a = {
    via: 'node', who: 'node', url, status: res.status, headers: Object.fromEntries(res.headers),
    setCookie: res.headers.getSetCookie(), body: await res.text(),
  };
  if (a.headers.location) remember(a.headers.location, url);
  answers.push(a);
  return a;
}

// A fresh profile (its own --user-data-dir); its requests, connect-path's answers and the
// callbacks recorded.
async function browser(who) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mcpgate-chromium-${who}-`));
  profiles.push(dir);
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1100, height: 800 }, timeout: T,
  });
  contexts.push(ctx);
  ctx.setDefaultTimeout(T);
  ctx.on('request', (r) => {
    requests.push({ who, method: r.method(), url: r.url() });
    remember(r.url());
    const x = parse(r.url());
    if (isConnect(r.url()) && (x.searchParams.has('code') || x.searchParams.has('error'))) callbacks.push({ who, url: r.url() });
  });
  ctx.on('response', async (r) => {
    if (!isConnect(r.url())) return;
    const a = { via: 'browser', who, url: r.url(), status: r.status(), headers: r.headers() };
    if (a.headers.location) remember(a.headers.location, r.url());
    answers.push(a);
    if (r.status() < 300 || r.status() > 399) a.body = await r.text().catch(() => '');
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  return { ctx, page };
}

// The last answer of connect-path a browser got, once its body is read.
async function lastAnswer(who) {
  const a = answers.filter((x) => x.who === who).at(-1);
  for (let i = 0; a && a.body === undefined && a.status >= 200 && (a.status < 300 || a.status > 399) && i < 50; i += 1) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return a;
}

let shotN = 0;
async function shot(page, name) {
  shotN += 1;
  const file = path.join(opt.artifacts, `${String(shotN).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file }).catch((e) => diag(`screenshot ${name}: ${e.message}`));
}

// Which authorization server's page, and which page, the browser is at (null: neither's).
async function idpPage(page) {
  const u = parse(page.url());
  const who = u?.origin === ORG ? 'org' : u?.origin === TP ? 'tp' : null;
  if (!who || !u.pathname.startsWith('/interaction/')) return null;
  await page.waitForLoadState('load');
  if (await page.locator('input[name="login"]').count()) return `${who}-login`;
  if (await page.locator('button[type="submit"]', { hasText: 'Continue' }).count()) return `${who}-consent`;
  throw new Error(`an authorization-server page that is neither login nor consent: ${page.url()} ${(await page.textContent('body')).slice(0, 300)}`);
}

// Through the authorization servers' login and consent pages as users.org / users.tp until
// the browser is at neither's pages, at the page stopAt, or at a page of a server users do
// not name (neither submitted). Returns { passed: ['org-login', 'org-consent', ...], at }.
async function walk(page, users, label, stopAt) {
  const passed = [];
  for (let i = 0; i < 8; i += 1) {
    const at = await idpPage(page);
    // stopAt, or a server nobody is to sign in at here: left as it is
    if (!at || at === stopAt || !users[at.split('-')[0]]) return { passed, at };
    passed.push(at);
    await shot(page, `${label}-${at}`);
    if (at.endsWith('-login')) {
      await page.fill('input[name="login"]', users[at.split('-')[0]]);
      await page.fill('input[name="password"]', 'any password');
    }
    await Promise.all([page.waitForNavigation({ timeout: T }), page.click('button[type="submit"]')]);
  }
  throw new Error(`more than 8 authorization-server pages: ${passed.join(' ')}`);
}

// Submits the login or consent form the page shows with the browser's own cookies (its
// context's request API) and follows the redirects one by one, up to the first one to
// connect-path: that callback's URL, not visited.
async function submitAndCatch(ctx, page) {
  const form = await page.$eval('form', (f) => ({ action: f.action, fields: Object.fromEntries(new FormData(f)) }));
  let res = await ctx.request.post(form.action, { form: form.fields, maxRedirects: 0 });
  for (let i = 0; i < 8; i += 1) {
    const loc = res.headers().location;
    if (res.status() < 300 || res.status() > 399 || !loc) {
      throw new Error(`the redirects ended at ${res.url()} (${res.status()}) before reaching ${CONNECT}: ${(await res.text()).slice(0, 300)}`);
    }
    const next = new URL(loc, res.url()).href;
    remember(next);
    if (isConnect(next)) return next;
    res = await ctx.request.get(next, { maxRedirects: 0 });
  }
  throw new Error('more than 8 redirects before the callback');
}

// One character of a parameter flipped (in its middle: not the padding of a base64 end).
function flip(u, name) {
  const x = new URL(u);
  const v = x.searchParams.get(name) ?? '';
  const i = Math.floor(v.length / 2);
  x.searchParams.set(name, v.slice(0, i) + (v[i] === 'A' ? 'B' : 'A') + v.slice(i + 1));
  return x.href;
}
function withParam(u, name, value) {
  const x = new URL(u);
  x.searchParams.set(name, value);
  return x.href;
}

// A tools/call of tr_whoami as who, in a session that declared the URL elicitation
// capability (or not): { error } or { result }, and the connect URL the answer offers.
async function whoami(who, urlElicitation = true) {
  const c = await connectClient({ url: MCP, token: TOKENS[who], urlElicitation, name: `connect-test-${who}` });
  try {
    const out = await callTool(c.client, TOOL);
    const url = out.error?.elicitations?.[0]?.url;
    if (url) remember(url);
    return { out, url };
  } finally {
    await c.close();
  }
}
// A fresh connect URL for who (an elicitation), or an exception saying what came instead.
async function ticketUrl(who) {
  const { out, url } = await whoami(who);
  if (!url || !isConnect(url)) throw new Error(`no URL elicitation for ${who}'s ${TOOL}: ${JSON.stringify(out).slice(0, 600)}`);
  return url;
}

async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    ok(false, `${name}: the step ran to the end`, e.stack || String(e));
    for (const [i, c] of contexts.entries()) for (const p of c.pages()) await shot(p, `failure-${name.replace(/\W+/g, '-')}-${i}`);
  }
}

const metadata = new Map();
async function authorizationEndpoint(issuer) {
  if (!metadata.has(issuer)) {
    metadata.set(issuer, await (await fetch(`${issuer}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(T) })).json());
  }
  return metadata.get(issuer).authorization_endpoint;
}

// --- 1. the elicitation ----------------------------------------------------------------------
async function elicitation() {
  const c = await connectClient({ url: MCP, token: TOKENS.alice, urlElicitation: true });
  try {
    const tools = (await c.client.listTools()).tools.map((t) => t.name);
    ok(tools.includes(TOOL), `tools/list as alice (not connected yet) lists ${TOOL}: the tracker's catalog, fetched with the gateway's own client_credentials token at the third party`, tools);
    const out = await callTool(c.client, TOOL);
    const e = out.error;
    const el = e?.elicitations?.[0];
    ok(e?.code === URL_ELICITATION_REQUIRED && e.urlElicitation,
      `alice's ${TOOL} with no connected account, in a session that declared elicitation.url: JSON-RPC error -32042 (the SDK's UrlElicitationRequiredError)`, out);
    ok(e?.elicitations?.length === 1 && el?.mode === 'url' && typeof el.elicitationId === 'string' && el.elicitationId.length > 0
      && typeof el.message === 'string' && el.message.length > 0 && typeof el.url === 'string' && el.url.startsWith(`${CONNECT}?ticket=`),
    `error.data.elicitations[0] is {mode: "url", elicitationId, url: ${CONNECT}?ticket=..., message}`, e?.data ?? out);
    if (el?.url) remember(el.url);
    if (el?.message) diag(`the elicitation's message: ${el.message}`);
  } finally {
    await c.close();
  }
  const { out, url } = await whoami('alice', false);
  const m = out.error?.message ?? '';
  const inMessage = /https?:\/\/\S+/.exec(m)?.[0]?.replace(/[.,;)"']+$/, '');
  if (inMessage) remember(inMessage);
  ok(out.error && out.error.code !== URL_ELICITATION_REQUIRED && Number.isInteger(out.error.code) && m.includes(`${CONNECT}?ticket=`) && !url,
    `a session that did not declare elicitation.url: a JSON-RPC error (not -32042) whose message holds ${CONNECT}?ticket=...`, out);
}

// --- 2. refusals -----------------------------------------------------------------------------
async function ticketTwice() {
  const url = await ticketUrl('alice');
  const first = await fetchConnect(url);
  const to = parse(first.headers.location ?? '', url);
  const q = to?.searchParams;
  const want = await authorizationEndpoint(ORG);
  ok(first.status === 302 && to && `${to.origin}${to.pathname}` === want,
    `GET connect-path?ticket=T: 302 to the organisation's authorization endpoint (${want})`, brief(first));
  const checks = {
    response_type: q?.get('response_type') === 'code',
    client_id: q?.get('client_id') === opt['org-client'],
    redirect_uri: q?.get('redirect_uri') === CONNECT,
    code_challenge: /^[A-Za-z0-9_-]{43}$/.test(q?.get('code_challenge') ?? ''),
    code_challenge_method: q?.get('code_challenge_method') === 'S256',
    resource: q?.get('resource') === MCP,
    scope: (q?.get('scope') ?? '').split(' ').includes('openid'),
    state: (q?.get('state') ?? '').length >= 16,
  };
  ok(Object.values(checks).every(Boolean),
    `… asking for a code with PKCE S256 as client ${opt['org-client']}, redirect_uri ${CONNECT} exactly, resource ${MCP}, scope openid, a state`,
    { checks, location: first.headers.location });
  const cookie = first.setCookie.find((c) => c.startsWith('mcpgate_connect='));
  const attrs = (cookie ?? '').split(';').map((s) => s.trim().toLowerCase());
  ok(!!cookie && attrs.includes('httponly') && attrs.includes('samesite=lax') && attrs.includes('path=/mcp/connect'),
    '… and sets the cookie mcpgate_connect: HttpOnly, SameSite=Lax, Path=/mcp/connect', first.setCookie);
  const again = await fetchConnect(url, cookie?.split(';')[0]);
  ok(again.status === 400 && html(again), 'the same ticket a second time: 400, an HTML page', brief(again));

  const other = await ticketUrl('alice');
  const altered = await fetchConnect(flip(other, 'ticket'));
  ok(altered.status === 400 && html(altered), 'a ticket with one character flipped: 400, an HTML page', brief(altered));
  const garbage = await fetchConnect(`${CONNECT}?ticket=bm90LWEtdGlja2V0`);
  ok(garbage.status === 400 && html(garbage), 'a ticket the gateway never made: 400, an HTML page', brief(garbage));
}

// alice's link, opened in a browser where bob signs in at the organisation.
async function anotherPerson() {
  const url = await ticketUrl('alice');
  const { page } = await browser('bob');
  await page.goto(url);
  const { passed, at } = await walk(page, { org: 'bob' }, 'bob');
  const a = await lastAnswer('bob');
  await shot(page, 'bob-refused');
  ok(passed[0] === 'org-login' && !at && a?.status === 403 && html(a) && /another person/i.test(a.body ?? ''),
    "alice's link opened where bob signs in at the organisation: 403, an HTML page saying it was made for another person",
    { passed, at: at ?? page.url(), answer: brief(a) });
}

// In one browser of alice's: ORG's callback with its state altered; TP's access_denied;
// TP's callback with another issuer's iss.
async function alteredCallbacks() {
  const { ctx, page } = await browser('alice-attacks');
  // ORG's callback, caught before the browser follows it, its state altered.
  await page.goto(await ticketUrl('alice'));
  const { passed, at } = await walk(page, { org: 'alice' }, 'state', 'org-consent');
  if (at !== 'org-consent') throw new Error(`expected the organisation's consent page after its login, got ${page.url()} (passed ${passed.join(' ')}): ${JSON.stringify(brief(await lastAnswer('alice-attacks')))}`);
  const orgBack = await submitAndCatch(ctx, page);
  const x = new URL(orgBack);
  ok(x.searchParams.has('code') && x.searchParams.has('state') && x.searchParams.get('iss') === ORG,
    'the organisation sends alice back to connect-path with code, state and iss', orgBack.replace(/code=[^&]+/, 'code=…'));
  const r = await page.goto(flip(orgBack, 'state'));
  const a = await lastAnswer('alice-attacks');
  await shot(page, 'state-altered');
  ok(r?.status() === 400 && html(a) && a.url.includes('code='), "the organisation's callback with its state altered (one character): 400, an HTML page", brief(a));

  // The person cancels at TP's consent page: TP answers error=access_denied.
  await page.goto(await ticketUrl('alice'));
  const tp = await walk(page, { org: 'alice', tp: 'alice' }, 'cancel', 'tp-consent');
  if (tp.at !== 'tp-consent') throw new Error(`expected the third party's consent page, got ${page.url()} (passed ${tp.passed.join(' ')}): ${JSON.stringify(brief(await lastAnswer('alice-attacks')))}`);
  ok(!tp.passed.includes('org-login') && tp.passed.includes('tp-login'),
    "signed in at the organisation already, alice goes straight to the third party's login page", tp.passed);
  await Promise.all([page.waitForNavigation({ timeout: T }), page.click('text=[ Cancel ]')]);
  const d = await lastAnswer('alice-attacks');
  await shot(page, 'tp-denied');
  ok(d?.status === 400 && html(d) && /access_denied/.test(d.body ?? '') && /[?&]error=access_denied/.test(d.url),
    "the third party's answer error=access_denied (alice cancels at its consent page): 400, an HTML page naming access_denied", brief(d));

  // TP's callback, caught, with the organisation's issuer as iss.
  await page.goto(await ticketUrl('alice'));
  const again = await walk(page, { org: 'alice', tp: 'alice' }, 'iss', 'tp-consent');
  if (again.at !== 'tp-consent') throw new Error(`expected the third party's consent page, got ${page.url()} (passed ${again.passed.join(' ')}): ${JSON.stringify(brief(await lastAnswer('alice-attacks')))}`);
  const tpBack = await submitAndCatch(ctx, page);
  ok(new URL(tpBack).searchParams.get('iss') === TP && new URL(tpBack).searchParams.has('code'),
    'the third party sends alice back to connect-path with code, state and its own iss', tpBack.replace(/code=[^&]+/, 'code=…'));
  const w = await page.goto(withParam(tpBack, 'iss', ORG));
  const i = await lastAnswer('alice-attacks');
  await shot(page, 'iss-other');
  ok(w?.status() === 400 && html(i), "the third party's callback with iss of another issuer (the organisation's): 400, an HTML page", brief(i));
}

// --- 3. the happy path -----------------------------------------------------------------------
let aliceConnected = false;
let alicePage; // the happy path's browser page, signed in at the organisation
async function happyPath() {
  const c = await connectClient({ url: MCP, token: TOKENS.alice, urlElicitation: true, name: 'connect-test-alice' });
  try {
    const t0 = performance.now();
    const first = await callTool(c.client, TOOL);
    const url = first.error?.elicitations?.[0]?.url;
    if (!url) throw new Error(`no URL elicitation: ${JSON.stringify(first).slice(0, 600)}`);
    remember(url);
    const { ctx, page } = await browser('alice');
    alicePage = page;
    await page.goto(url);
    const cookie = (await ctx.cookies(CONNECT)).find((k) => k.name === 'mcpgate_connect');
    ok(cookie?.httpOnly === true && cookie.sameSite === 'Lax' && cookie.path === '/mcp/connect',
      'the browser holds the cookie mcpgate_connect (HttpOnly, SameSite=Lax, Path=/mcp/connect)', cookie ?? await ctx.cookies());
    const { passed } = await walk(page, { org: 'alice', tp: 'alice' }, 'alice');
    const a = await lastAnswer('alice');
    await shot(page, 'alice-connected');
    ok(passed.join(' ') === 'org-login org-consent tp-login tp-consent',
      "alice goes through the organisation's login and consent, then the third party's", passed);
    const fromOrg = answers.find((x) => x.who === 'alice' && parse(x.url).searchParams.get('iss') === ORG);
    const toTp = parse(fromOrg?.headers.location ?? '', CONNECT);
    const q = toTp?.searchParams;
    const orgState = parse(fromOrg?.url ?? '')?.searchParams.get('state');
    const checks = {
      status: fromOrg?.status === 302,
      endpoint: !!toTp && `${toTp.origin}${toTp.pathname}` === await authorizationEndpoint(TP),
      response_type: q?.get('response_type') === 'code',
      client_id: q?.get('client_id') === opt['tp-client'],
      redirect_uri: q?.get('redirect_uri') === CONNECT,
      code_challenge: /^[A-Za-z0-9_-]{43}$/.test(q?.get('code_challenge') ?? ''),
      code_challenge_method: q?.get('code_challenge_method') === 'S256',
      resource: q?.get('resource') === opt.tracker,
      scope: q?.get('scope') === 'mcp:tools',
      state: (q?.get('state') ?? '').length >= 16 && q?.get('state') !== orgState,
    };
    ok(Object.values(checks).every(Boolean),
      `the organisation's callback for alice: 302 to the third party's authorization endpoint, code + PKCE S256 as client ${opt['tp-client']}, redirect_uri ${CONNECT}, resource the tracker, scope mcp:tools (user-scopes), a new state`,
      { checks, answer: brief(fromOrg) });
    ok(a?.status === 200 && html(a) && /Connected/.test(a.body ?? ''), 'the gateway answers 200, an HTML page saying "Connected"', brief(a));
    const second = await callTool(c.client, TOOL);
    const ms = Math.round(performance.now() - t0);
    const who = textJson(second.result);
    ok(!second.error && !second.result?.isError && who?.sub === 'alice' && who.client_id === opt['tp-client'] && who.aud === opt.tracker,
      `the same ${TOOL} again, in the same session: answered with the token the third party issued for alice (sub alice, client ${opt['tp-client']}, audience the tracker)`, second);
    aliceConnected = who?.sub === 'alice';
    diag(`from the elicitation to the connected call: ${ms} ms (browser steps included)`);

    // Both callbacks of this browser, replayed.
    const mine = callbacks.filter((k) => k.who === 'alice').map((k) => k.url);
    const orgBack = mine.find((u) => new URL(u).searchParams.get('iss') === ORG);
    const tpBack = mine.find((u) => new URL(u).searchParams.get('iss') === TP);
    if (!orgBack || !tpBack) throw new Error(`the two callbacks were not seen: ${mine.length} callback(s)`);
    const r1 = await page.goto(tpBack);
    const b1 = await lastAnswer('alice');
    const r2 = await page.goto(orgBack);
    const b2 = await lastAnswer('alice');
    await shot(page, 'replayed');
    ok(r1?.status() === 400 && html(b1), "the third party's callback replayed (the same code and state): 400, an HTML page", brief(b1));
    ok(r2?.status() === 400 && html(b2), "the organisation's callback replayed: 400, an HTML page", brief(b2));
  } finally {
    await c.close();
  }
}

// --- 4. afterwards ---------------------------------------------------------------------------
async function afterwards() {
  const plain = await whoami('alice', false);
  const who = textJson(plain.out.result);
  ok(who?.sub === 'alice', 'alice, in a session without elicitation.url: served too (the account is hers, not the session\'s)', plain.out);
  const bob = await whoami('bob');
  ok(bob.out.error?.code === URL_ELICITATION_REQUIRED && isConnect(bob.url ?? ''),
    'bob, who connected nothing, is still asked to connect (-32042)', bob.out);
}

// --- 5. her connections, and a disconnect -----------------------------------------------------
async function connections() {
  const page = alicePage;
  await page.goto(CONNECT);
  const { passed } = await walk(page, { org: 'alice' }, 'list');
  const list = await lastAnswer('alice');
  await shot(page, 'alice-connections');
  const row = async () => (await page.locator('tr', { hasText: 'tracker' }).locator('td').allTextContents().catch(() => [])).join(' | ');
  const before = await row();
  ok(list?.status === 200 && html(list) && /^tracker \| connected\b/.test(before),
    'connect-path with nothing asked, in alice\'s browser: once she signs in at the organisation, her connections, the tracker connected', { passed, row: before, answer: brief(list) });
  const posted = page.waitForRequest((r) => r.method() === 'POST' && isConnect(r.url()), { timeout: T });
  await Promise.all([page.waitForNavigation({ timeout: T }), page.locator('tr', { hasText: 'tracker' }).locator('button[type="submit"]', { hasText: 'Disconnect' }).click()]);
  const origin = (await posted.catch(() => null))?.headers().origin;
  const after = await row();
  await shot(page, 'alice-disconnected');
  ok(/^tracker \| not connected/.test(after), 'Disconnect (the form, submitted by the browser): the tracker is not connected any more',
    { row: after, 'the POST\'s Origin': origin ?? '(none)', answer: brief(await lastAnswer('alice')) });
  const again = await whoami('alice');
  ok(again.out.error?.code === URL_ELICITATION_REQUIRED && isConnect(again.url ?? ''), 'alice\'s next call is asked to connect again (-32042)', again.out);
}

await step('the elicitation', elicitation);
await step('a ticket used twice', ticketTwice);
await step('another person', anotherPerson);
await step('altered callbacks', alteredCallbacks);
await step('the happy path', happyPath);
if (aliceConnected) {
  await step('afterwards', afterwards);
  await step('connections', connections);
} else {
  ok(false, 'afterwards: alice is connected', 'the happy path did not connect her');
}

const guardedAll = answers.filter((a) => !guarded(a));
ok(answers.length >= 12 && guardedAll.length === 0,
  `every answer of connect-path carried Cache-Control: no-store and a Content-Security-Policy (${answers.length} answers)`,
  guardedAll.slice(0, 8).map(brief));
const loopback = (u) => {
  const x = parse(u);
  if (!x) return false;
  if (['data:', 'blob:', 'about:'].includes(x.protocol)) return true;
  return ['localhost', '[::1]'].includes(x.hostname) || /^127\.\d+\.\d+\.\d+$/.test(x.hostname);
};
const away = requests.filter((r) => !loopback(r.url));
ok(requests.length > 10 && away.length === 0,
  `no request left loopback (${requests.length} requests by the browsers)`, away.slice(0, 20).map((r) => `${r.who} ${r.method} ${r.url}`).join('\n'));
await finish();
