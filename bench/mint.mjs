// bench/mint.mjs — mint a pool of client_credentials access tokens from the test
// authorization server (tests/idp), one token per line, for the "fresh token per
// request" benchmark. One node process, a few requests in flight (tests/idp/lib.mjs).
//
//   node bench/mint.mjs --issuer URL --count N --out FILE [--client machine-acme]
//                       [--scope mcp:tools] [--concurrency 8]
//
// Prints "minted N tokens in S s (R/s)" on stderr. Exits 1 on any failure (a partial
// pool is never written: FILE.tmp is renamed only when complete).

import fs from 'node:fs';
import { parseArgs } from 'node:util';

import { clientToken } from '../tests/idp/lib.mjs';

const { values: o } = parseArgs({
  options: {
    issuer: { type: 'string' },
    count: { type: 'string' },
    out: { type: 'string' },
    client: { type: 'string', default: 'machine-acme' },
    scope: { type: 'string', default: 'mcp:tools' },
    concurrency: { type: 'string', default: '8' },
  },
});
if (!o.issuer || !o.count || !o.out) {
  console.error('usage: node bench/mint.mjs --issuer URL --count N --out FILE [--client ID] [--scope S] [--concurrency C]');
  process.exit(2);
}
const count = Number(o.count);
const conc = Math.max(1, Number(o.concurrency));
const tokens = new Array(count);
let next = 0;
const t0 = process.hrtime.bigint();

async function lane() {
  for (;;) {
    const i = next++;
    if (i >= count) return;
    const t = await clientToken({ issuer: o.issuer, client: o.client, scope: o.scope });
    if (!t.access_token) throw new Error(`no access_token in answer ${i}`);
    tokens[i] = t.access_token;
  }
}

try {
  await Promise.all(Array.from({ length: Math.min(conc, count) }, lane));
} catch (e) {
  console.error(`mint: ${e.message}`);
  process.exit(1);
}
if (new Set(tokens).size !== count) {
  console.error('mint: duplicate tokens');
  process.exit(1);
}
fs.writeFileSync(`${o.out}.tmp`, `${tokens.join('\n')}\n`);
fs.renameSync(`${o.out}.tmp`, o.out);
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.error(`minted ${count} tokens in ${s.toFixed(1)} s (${Math.round(count / s)}/s)`);
