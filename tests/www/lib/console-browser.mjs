#!/usr/bin/env node
// The docs console (www/index.html, www/webmcp.html) in headless Chromium, driven by
// playwright-core (tests/package.json) with Debian's /usr/bin/chromium: nothing is
// downloaded. tests/www/console.sh starts the stack and relays this script's TAP.
//
//   1. alice (a fresh profile, desktop size): the reference shows every operation and
//      schema of www/openapi.json; she signs in through oidc-provider's own login and
//      consent pages; the list is exactly --alice; fx_slow is called from its generated
//      form and its progress shows while the call streams, then its result; fx_echo,
//      called by name, is refused with insufficient_scope and a step-up is offered; she
//      takes it (consent again), fx_echo is now listed (exactly --alice-admin) and its call
//      answers. Signed in, the page may connect to the gateway and its issuer alone; a
//      page that frames the console gets nothing of it. The same page at phone width
//      has nothing wider than the screen.
//   2. bob (a fresh profile) opens the console at http://localhost:PORT, another origin:
//      /mcp refuses it, and the page names allowed-origins; the origin is added to the
//      configuration; bob signs in, sees exactly --bob (not alice's), calls a tool, and is
//      refused fx_slow plainly (group_forbidden, no step-up offered).
//   3. webmcp.html says plainly that the browser lacks WebMCP; with a stand-in for
//      navigator.modelContext it registers bob's tools, and one of them calls through.
//   4. bob signs out; dave (no tenant) signs in at the login page and is refused plainly.
//   Throughout: no request leaves loopback; no token in localStorage, sessionStorage, a
//   cookie, the address or the page; a screenshot of each state in --artifacts.
//
//   node console-browser.mjs --base URL --issuer URL --conf FILE --artifacts DIR
//        --alice JSON --alice-admin JSON --bob JSON [--fragments FILE]
//
// Prints TAP (plan last). Stops itself after 280 s. Exit 1 on any failure.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { done, ok } from '../../lib/tap.mjs';

const { values: opt } = parseArgs({
  options: {
    base: { type: 'string' }, issuer: { type: 'string' }, conf: { type: 'string' },
    artifacts: { type: 'string' }, fragments: { type: 'string' },
    alice: { type: 'string' }, 'alice-admin': { type: 'string' }, bob: { type: 'string' },
  },
});
for (const k of ['base', 'issuer', 'conf', 'artifacts', 'alice', 'alice-admin', 'bob']) {
  if (!opt[k]) {
    process.stderr.write(`console-browser.mjs: --${k} is required\n`);
    process.exit(2);
  }
}
const BASE = opt.base.replace(/\/$/, '');
const ISSUER = opt.issuer.replace(/\/$/, '');
const PORT = new URL(BASE).port;
const OTHER = `http://localhost:${PORT}`; // another origin on the same server
const PROBE = 'http://127.0.0.1:9'; // an origin the pages must not reach once signed in
const EXPECT = { alice: JSON.parse(opt.alice), aliceAdmin: JSON.parse(opt['alice-admin']), bob: JSON.parse(opt.bob) };
const OPENAPI = JSON.parse(fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../www/openapi.json'), 'utf8'));
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const T = 60000; // one step's bound: generous for a loaded machine
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

const requests = []; // every request any page made: { who, method, url }
const secrets = { tokens: [], codes: [] };
const contexts = [];
const profiles = [];

function diag(text) {
  for (const line of String(text).split('\n')) console.log(`# ${line}`);
}

async function finish() {
  for (const c of contexts) await c.close().catch(() => {});
  for (const d of profiles) fs.rmSync(d, { recursive: true, force: true });
  if (opt.fragments) {
    const all = [...secrets.tokens, ...secrets.codes].filter((t) => t && t.length >= 24);
    fs.writeFileSync(opt.fragments, all.map((t) => `${t.slice(0, 12)}\n${t.slice(-12)}\n`).join(''), { mode: 0o600 });
  }
  done();
}
const watchdog = setTimeout(() => {
  ok(false, 'the browser run finished within 280 s');
  finish();
}, 280000);
watchdog.unref();

// A fresh profile (its own --user-data-dir), every request and token answer recorded.
async function browser(who, viewport = DESKTOP) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mcpgate-chromium-${who}-`));
  profiles.push(dir);
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport, timeout: T,
  });
  contexts.push(ctx);
  ctx.setDefaultTimeout(T);
  ctx.on('request', (r) => {
    requests.push({ who, method: r.method(), url: r.url() });
    const code = URL.parse(r.url())?.searchParams.get('code');
    if (code) secrets.codes.push(code);
  });
  ctx.on('response', async (r) => {
    const to = URL.parse(r.headers().location || '', r.url());
    for (const p of [to?.searchParams, new URLSearchParams(to?.hash.slice(1) || '')]) {
      if (p?.get('code')) secrets.codes.push(p.get('code'));
    }
    if (r.request().method() !== 'POST' || URL.parse(r.url())?.pathname !== '/token') return;
    const body = await r.json().catch(() => null);
    if (body?.access_token) secrets.tokens.push(body.access_token);
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  return { ctx, page };
}

let shotN = 0;
async function shot(page, name, full = false) {
  shotN += 1;
  const file = path.join(opt.artifacts, `${String(shotN).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: full }).catch((e) => diag(`screenshot ${name}: ${e.message}`));
}

// Through oidc-provider's own pages: the login form when it asks (user, any password),
// the consent form when it asks, until the browser is back at `back`.
async function throughIdp(page, user, back, label) {
  const pages = [];
  // The page first discovers and registers, then leaves for the authorization server.
  await page.waitForURL((u) => u.href.startsWith(`${ISSUER}/`) || (u.href.startsWith(back) && u.searchParams.has('code')), { timeout: T });
  for (let i = 0; i < 4 && page.url().startsWith(ISSUER); i += 1) {
    await page.waitForURL((u) => u.href.startsWith(back) || u.href.startsWith(`${ISSUER}/interaction/`), { timeout: T });
    if (page.url().startsWith(back)) break;
    await page.waitForLoadState('load');
    if (await page.locator('input[name="login"]').count()) {
      pages.push('login');
      await page.fill('input[name="login"]', user);
      await page.fill('input[name="password"]', 'any password');
      await shot(page, `${label}-idp-login`);
      await Promise.all([page.waitForNavigation({ timeout: T }), page.click('button[type="submit"]')]);
    } else if (await page.locator('button[type="submit"]', { hasText: 'Continue' }).count()) {
      pages.push('consent');
      await shot(page, `${label}-idp-consent`);
      await Promise.all([page.waitForNavigation({ timeout: T }), page.click('button[type="submit"]')]);
    } else {
      throw new Error(`an authorization-server page that is neither login nor consent: ${page.url()} ${(await page.textContent('body')).slice(0, 300)}`);
    }
  }
  return pages;
}

// Signed in and the tools listed: the names shown, in the order shown.
async function toolsShown(page) {
  await page.waitForFunction(() => document.getElementById('tool-count')?.textContent
    || !document.querySelector('[data-testid="error"]').hidden, null, { timeout: T });
  const err = await page.locator('[data-testid="error"]').isVisible() ? await page.textContent('[data-testid="error"]') : '';
  if (err) diag(`error shown: ${err}`);
  return page.$$eval('[data-testid="tools"] > li', (lis) => lis.map((li) => li.dataset.testid.replace(/^tool-/, '')));
}

const sameSet = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

// No token in either storage, a cookie, the address bar or the page; no sign-in half-done.
async function noTokenKept(page, who) {
  const st = await page.evaluate(() => ({
    local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie,
    url: location.href, html: document.documentElement.outerHTML,
  }));
  const where = [];
  for (const t of secrets.tokens) {
    if (JSON.stringify(st.local).includes(t)) where.push('localStorage');
    if (JSON.stringify(st.session).includes(t)) where.push('sessionStorage');
    if (st.cookie.includes(t)) where.push('cookie');
    if (st.url.includes(t)) where.push('address');
    if (st.html.includes(t)) where.push('page');
  }
  ok(secrets.tokens.length > 0 && where.length === 0,
    `${who}: the access token is in no storage, cookie, address or page (${secrets.tokens.length} token(s) seen)`, where.join(' '));
  ok(!/[?&#](code|state)=/.test(st.url) && !('mcpgate.signin' in st.session),
    `${who}: the code is out of the address and nothing of the sign-in is left in sessionStorage`, JSON.stringify({ url: st.url, session: Object.keys(st.session) }));
}

// OPTIONS /mcp from origin → its status (from Node: the gateway's answer to a preflight).
function preflight(origin) {
  return new Promise((resolve) => {
    const req = http.request(`${BASE}/mcp`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' },
      timeout: 5000,
    }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function alice() {
  const { ctx, page } = await browser('alice');
  // --- the reference --------------------------------------------------------------------
  await page.goto(`${BASE}/docs/`);
  await page.waitForSelector('[data-testid="reference"] .op', { timeout: T });
  const ops = [];
  for (const [p, item] of Object.entries(OPENAPI.paths)) {
    for (const [m, op] of Object.entries(item)) if (op.operationId) ops.push({ p, m, op });
  }
  const missing = [];
  for (const { p, m, op } of ops) {
    const sec = page.locator(`[data-testid="op-${op.operationId}"]`);
    if (!(await sec.count())) {
      missing.push(`${op.operationId}: no section`);
      continue;
    }
    const text = await sec.textContent();
    const params = (op.parameters || []).map((x) => (x.$ref ? OPENAPI.components.parameters[x.$ref.split('/').pop()].name : x.name));
    for (const want of [m.toUpperCase(), p, op.summary, ...Object.keys(op.responses), ...params]) {
      if (!text.includes(want)) missing.push(`${op.operationId}: ${want}`);
    }
  }
  ok(ops.length === 6 && missing.length === 0,
    `the reference shows all ${ops.length} operations of openapi.json with their method, path, summary, parameters and response statuses`, missing.join('\n'));
  const schemas = Object.keys(OPENAPI.components.schemas);
  const shown = await page.$$eval('[data-testid="reference"] section.schema', (s) => s.map((x) => x.id.replace(/^schema-/, '')));
  ok(sameSet(schemas, shown), `the reference shows every schema (${schemas.length})`, { schemas, shown });
  const schemes = await page.$$eval('[data-testid="reference"] section.scheme', (s) => s.map((x) => x.id.replace(/^auth-/, '')));
  ok(sameSet(Object.keys(OPENAPI.components.securitySchemes), schemes), 'the reference shows the auth model (every security scheme)', schemes);
  await page.locator('#reference').scrollIntoViewIfNeeded();
  await shot(page, 'reference');
  await page.evaluate(() => window.scrollTo(0, 0));
  ok(await page.getByTestId('signin').isVisible() && await page.locator('#workspace').isHidden(),
    'before sign-in: the sign-in control, no tools');
  await shot(page, 'signed-out');

  // --- sign-in through oidc-provider's pages -----------------------------------------------
  await page.getByTestId('signin').click();
  const pages = await throughIdp(page, 'alice', `${BASE}/docs/`, 'alice');
  ok(pages.join(' ') === 'login consent', "alice signs in through oidc-provider's own login and consent pages", pages);
  const list = await toolsShown(page);
  ok(sameSet(list, EXPECT.alice), `alice sees exactly the tools the policy gives her (${EXPECT.alice.join(' ')})`, { shown: list, policy: EXPECT.alice });
  await shot(page, 'alice-tools');
  await noTokenKept(page, 'alice');

  // --- signed in, the page may connect to the gateway and its issuer alone -----------------
  const blocked = await page.evaluate(([issuer, probe]) => new Promise((resolve) => {
    const seen = [];
    document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.effectiveDirective} ${e.blockedURI}`));
    Promise.allSettled([fetch(`${probe}/elsewhere`), fetch(`${issuer}/.well-known/openid-configuration`)])
      .then((r) => setTimeout(() => resolve({ seen, issuer: r[1].status }), 200));
  }), [ISSUER, PROBE]);
  ok(blocked.seen.length === 1 && blocked.seen[0].startsWith(`connect-src ${PROBE}`) && blocked.issuer === 'fulfilled',
    'signed in, the page may fetch from its issuer but not from another origin (connect-src narrowed)', blocked);

  // --- no other site may frame the console ----------------------------------------------------
  const framer = await ctx.newPage();
  await framer.setContent(`<iframe id="f" src="${BASE}/docs/" width="400" height="300"></iframe>`, { waitUntil: 'load' });
  const child = framer.frames().find((f) => f !== framer.mainFrame());
  const inside = child ? await child.$('[data-testid="signin"]').catch(() => null) : null;
  ok(child && !inside, 'a page that frames /docs/ gets nothing of the console (frame-ancestors \'none\')', child?.url());
  await framer.close();

  // --- a call from the generated form, its progress streamed -------------------------------
  await page.locator('[data-testid="tool-fx_slow"] button').click();
  const field = page.locator('#tool-form input[name="ms"]');
  ok(await field.getAttribute('type') === 'number' && await field.getAttribute('step') === '1',
    "fx_slow's form has an integer field ms, from its input schema");
  await field.fill('2500');
  await page.getByTestId('call').click();
  const streamed = await page.waitForFunction(() => !document.querySelector('[data-testid="progress"]').hidden
    && document.querySelector('[data-testid="result"]').textContent === 'Calling…', null, { timeout: T }).then(() => true, () => false);
  ok(streamed, 'progress shows while the call is still running (the event stream read as it comes)');
  await shot(page, 'alice-progress');
  await page.waitForFunction(() => document.querySelector('[data-testid="result"]').textContent.includes('slept'), null, { timeout: T });
  const result = await page.textContent('[data-testid="result"]');
  ok(result.includes('slept 2500 ms'), 'the result of fx_slow is shown', result);
  const ex = await page.$$eval('#exchange > li', (lis) => lis.map((li) => ({ cls: li.className, text: li.textContent })));
  const callAt = ex.findIndex((e) => e.cls === 'out' && e.text.includes('tools/call') && e.text.includes('"fx_slow"'));
  const progress = ex.map((e, i) => (e.cls === 'in' && e.text.startsWith('← event') && e.text.includes('notifications/progress') ? i : -1)).filter((i) => i > callAt);
  const resultAt = ex.findIndex((e, i) => i > callAt && e.cls === 'in' && e.text.includes('"slept 2500 ms"'));
  ok(callAt >= 0 && progress.length >= 2 && resultAt > Math.max(...progress),
    `the exchange shows the request, ${progress.length} progress events as they streamed, then the answer`, { callAt, progress, resultAt });
  await page.evaluate(() => document.getElementById('signin').scrollIntoView({ block: 'start' }));
  await shot(page, 'alice-result');

  // --- step-up ----------------------------------------------------------------------------
  await page.fill('#byname-name', 'fx_echo');
  await page.click('#byname button[type="submit"]');
  await page.fill('#tool-form textarea[name="arguments"]', '{"greeting":"hello after step-up"}');
  await page.getByTestId('call').click();
  await page.waitForSelector('[data-testid="error"]:not([hidden])', { timeout: T });
  const err = await page.textContent('[data-testid="error"]');
  const offer = page.getByTestId('stepup');
  ok(/403 insufficient_scope/.test(err) && /mcp:admin/.test(err) && /mcp:admin/.test(await offer.textContent()),
    'fx_echo by name: the 403 insufficient_scope is shown, with an offer to sign in again with mcp:admin', err);
  await shot(page, 'stepup-offered');
  await offer.click();
  const again = await throughIdp(page, 'alice', `${BASE}/docs/`, 'stepup');
  ok(again.join(' ') === 'consent', 'the step-up asks only for consent (alice is still signed in there)', again);
  const after = await toolsShown(page);
  ok(sameSet(after, EXPECT.aliceAdmin), 'after the step-up alice sees exactly the policy\'s list with mcp:admin: fx_echo added',
    { shown: after, policy: EXPECT.aliceAdmin });
  ok((await page.inputValue('#tool-form textarea[name="arguments"]')).includes('hello after step-up'),
    'the page comes back to fx_echo with its arguments');
  await page.getByTestId('call').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="result"]').textContent.includes('hello after step-up'), null, { timeout: T })
    .catch(() => {});
  const echoed = await page.textContent('[data-testid="result"]');
  ok(echoed.includes('hello after step-up') && await page.locator('[data-testid="error"]').isHidden(),
    'with the new token fx_echo answers, and no error is shown', echoed);
  await shot(page, 'stepup-done');
  await noTokenKept(page, 'alice after the step-up');

  // --- a phone ----------------------------------------------------------------------------
  await page.setViewportSize(PHONE);
  await page.evaluate(() => document.getElementById('who').scrollIntoView({ block: 'start' }));
  const wide = await page.evaluate(() => {
    const out = [];
    for (const e of document.querySelectorAll('body *')) {
      const r = e.getBoundingClientRect();
      if (r.width && r.right > window.innerWidth + 1 && !e.closest('.scroll, pre, .exchange ol')) out.push(`${e.tagName}#${e.id}.${e.className} ${Math.round(r.right)}`);
    }
    return { scroll: document.documentElement.scrollWidth, inner: window.innerWidth, out: out.slice(0, 10) };
  });
  ok(wide.scroll <= wide.inner && wide.out.length === 0, `at ${PHONE.width} px nothing is wider than the screen`, wide);
  await shot(page, 'phone-console');
  await page.locator('[data-testid="op-exchangeMcpMessage"]').scrollIntoViewIfNeeded();
  await shot(page, 'phone-reference');
}

async function bob() {
  const { ctx, page } = await browser('bob');
  // --- another origin, refused until allowed ------------------------------------------
  await page.goto(`${OTHER}/docs/`);
  await page.getByTestId('signin').click();
  await page.waitForSelector('[data-testid="error"]:not([hidden])', { timeout: T });
  const refused = await page.textContent('[data-testid="error"]');
  ok(/allowed-origins/.test(refused) && refused.includes(OTHER), `from ${OTHER} the gateway refuses /mcp and the page names allowed-origins`, refused);
  await shot(page, 'origin-refused');
  fs.appendFileSync(opt.conf, `\n[gateway]\nallowed-origins = ${OTHER}\n`);
  let status = 0;
  for (const end = Date.now() + T; Date.now() < end && status !== 204;) {
    status = await preflight(OTHER);
    if (status !== 204) await new Promise((r) => setTimeout(r, 200));
  }
  ok(status === 204, `with allowed-origins = ${OTHER} the gateway (reloaded) answers its preflight 204`, status);

  await page.getByTestId('signin').click();
  const pages = await throughIdp(page, 'bob', `${OTHER}/docs/`, 'bob');
  ok(pages.join(' ') === 'login consent', 'bob signs in through the login and consent pages', pages);
  const list = await toolsShown(page);
  ok(sameSet(list, EXPECT.bob), `bob sees exactly the tools the policy gives him (${EXPECT.bob.join(' ')})`, { shown: list, policy: EXPECT.bob });
  ok(!sameSet(list, EXPECT.alice), 'bob\'s list is not alice\'s');
  await shot(page, 'bob-tools');
  await page.locator('[data-testid="tool-fx_test_simple_text"] button').click();
  await page.getByTestId('call').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="result"]').textContent.includes('simple text'), null, { timeout: T }).catch(() => {});
  const r = await page.textContent('[data-testid="result"]');
  ok(r.includes('This is a simple text response for testing.'), 'bob calls fx_test_simple_text and its result is shown', r);
  await shot(page, 'bob-result');
  await page.fill('#byname-name', 'fx_slow');
  await page.click('#byname button[type="submit"]');
  await page.getByTestId('call').click();
  await page.waitForSelector('[data-testid="error"]:not([hidden])', { timeout: T });
  const forbidden = await page.textContent('[data-testid="error"]');
  ok(/^403 group_forbidden/.test(forbidden) && !(await page.getByTestId('stepup').count()),
    'fx_slow by name: 403 group_forbidden shown plainly, no step-up offered', forbidden);
  await shot(page, 'bob-forbidden');
  await noTokenKept(page, 'bob');

  // --- webmcp.html -------------------------------------------------------------------------
  const plain = await ctx.newPage();
  await plain.goto(`${OTHER}/docs/webmcp.html`);
  await plain.waitForFunction(() => !document.getElementById('webmcp-status').textContent.startsWith('Checking'));
  const native = await plain.evaluate(() => 'modelContext' in navigator);
  const said = await plain.textContent('[data-testid="webmcp-status"]');
  if (native) diag('this Chromium has navigator.modelContext of its own: the "missing" message is not checked');
  else ok(/does not offer WebMCP/.test(said) && await plain.getByTestId('signin').isDisabled(), 'webmcp.html says plainly that this browser lacks WebMCP', said);
  await shot(plain, 'webmcp-missing');
  await plain.close();

  const wm = await ctx.newPage();
  await wm.addInitScript(() => {
    const tools = new Map();
    window.registered = tools;
    Object.defineProperty(navigator, 'modelContext', {
      configurable: true,
      value: { registerTool(t) { tools.set(t.name, t); }, unregisterTool(n) { tools.delete(n); } },
    });
  });
  await wm.goto(`${OTHER}/docs/webmcp.html`);
  await wm.getByTestId('signin').click();
  await throughIdp(wm, 'bob', `${OTHER}/docs/webmcp.html`, 'webmcp');
  await wm.waitForFunction(() => /^Registered/.test(document.getElementById('webmcp-status').textContent)
    || !document.getElementById('error').hidden, null, { timeout: T });
  const names = await wm.evaluate(() => [...window.registered.keys()]);
  ok(sameSet(names, [...EXPECT.bob, 'get_mcp_gateway_endpoint']),
    'webmcp.html registers exactly bob\'s tools (and the public endpoint tool) with navigator.modelContext', { names, error: await wm.textContent('#error') });
  const called = await wm.evaluate(() => window.registered.get('fx_test_simple_text')?.execute({}));
  ok(JSON.stringify(called ?? null).includes('This is a simple text response for testing.'),
    'a registered tool\'s execute() calls it through the gateway', called);
  await shot(wm, 'webmcp-registered');
  await noTokenKept(wm, 'bob on webmcp.html');

  // --- signed out, another user: dave has no tenant, so /mcp refuses him -------------------
  await page.bringToFront();
  await page.click('#signout');
  // Sign out ends the session first (a DELETE to the gateway), then clears the view.
  await page.waitForFunction(() => document.getElementById('workspace').hidden
    && document.getElementById('who').textContent === 'Not signed in.', null, { timeout: T }).catch(() => {});
  ok(await page.locator('#workspace').isHidden() && (await page.textContent('#who')) === 'Not signed in.',
    'Sign out forgets the token: no tools shown');
  await page.getByTestId('signin').click();
  const dave = await throughIdp(page, 'dave', `${OTHER}/docs/`, 'dave');
  ok(dave[0] === 'login', 'signing in after a sign-out asks who signs in (prompt=login)', dave);
  await page.waitForSelector('[data-testid="error"]:not([hidden])', { timeout: T });
  const refusedDave = await page.textContent('[data-testid="error"]');
  ok(/^403 tenant_forbidden/.test(refusedDave) && !(await page.getByTestId('stepup').count()),
    'dave (no tenant): the 403 tenant_forbidden of initialize is shown plainly', refusedDave);
  await shot(page, 'dave-refused');
}

try {
  await alice();
  await bob();
} catch (e) {
  ok(false, 'the browser steps ran to the end', e.stack || String(e));
  for (const [i, c] of contexts.entries()) for (const p of c.pages()) await shot(p, `failure-${i}`, true);
}
const loopback = (u) => {
  const x = URL.parse(u);
  if (!x) return false;
  if (['data:', 'blob:', 'about:'].includes(x.protocol)) return true;
  return ['127.0.0.1', 'localhost', '[::1]'].includes(x.hostname);
};
const away = requests.filter((r) => !loopback(r.url));
ok(requests.length > 20 && away.length === 0,
  `no request left loopback (${requests.length} requests by the browser)`, away.slice(0, 20).map((r) => `${r.who} ${r.method} ${r.url}`).join('\n'));
const hosts = new Set(requests.map((r) => URL.parse(r.url)).filter((u) => /^https?:$/.test(u?.protocol)).map((u) => u.origin));
ok([...hosts].every((h) => [BASE, OTHER, ISSUER, PROBE].includes(h)),
  'the pages talked only to the gateway\'s origin and the authorization server', [...hosts]);
await finish();
