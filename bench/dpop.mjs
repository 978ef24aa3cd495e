// bench/dpop.mjs — a DPoP client's key, its bound token and a pool of proofs for
// bench/jwt.sh (tests/lib/dpop.mjs: ES256 proofs signed with node's crypto).
//
//   node bench/dpop.mjs --key FILE --issuer URL --token-out FILE      # the key (made when
//        missing, kept in FILE) and a DPoP-bound client_credentials token of machine-acme
//   node bench/dpop.mjs --key FILE --token FILE --htu URL --count N --out FILE
//        # N proofs for POST htu with that token, each a jti of its own, one a line
//
// Prints what it did on stderr. Exits 1 on any failure (a partial pool is never written).

import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';

import { boundToken, dpopProof } from '../tests/lib/dpop.mjs';

const { values: o } = parseArgs({
  options: {
    key: { type: 'string' },
    issuer: { type: 'string' },
    'token-out': { type: 'string' },
    token: { type: 'string' },
    htu: { type: 'string' },
    count: { type: 'string' },
    out: { type: 'string' },
  },
});
if (!o.key || !((o.issuer && o['token-out']) || (o.token && o.htu && o.count && o.out))) {
  console.error('usage: dpop.mjs --key FILE (--issuer URL --token-out FILE | --token FILE --htu URL --count N --out FILE)');
  process.exit(2);
}
let key;
if (fs.existsSync(o.key)) {
  const jwk = JSON.parse(fs.readFileSync(o.key, 'utf8'));
  const privateKey = crypto.createPrivateKey({ key: jwk, format: 'jwk' });
  const { d, ...pub } = jwk;
  key = { alg: 'ES256', privateKey, jwk: pub };
} else {
  const pair = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  fs.writeFileSync(o.key, JSON.stringify(pair.privateKey.export({ format: 'jwk' })), { mode: 0o600 });
  key = { alg: 'ES256', privateKey: pair.privateKey, jwk: pair.publicKey.export({ format: 'jwk' }) };
}
try {
  if (o['token-out']) {
    fs.writeFileSync(o['token-out'], await boundToken({ issuer: o.issuer, key }), { mode: 0o600 });
    console.error('a DPoP-bound token');
  } else {
    const token = fs.readFileSync(o.token, 'utf8').trim();
    const n = Number(o.count);
    const t0 = process.hrtime.bigint();
    const lines = [];
    for (let i = 0; i < n; i += 1) lines.push(dpopProof(key, { htm: 'POST', htu: o.htu, token }));
    fs.writeFileSync(`${o.out}.tmp`, `${lines.join('\n')}\n`);
    fs.renameSync(`${o.out}.tmp`, o.out);
    console.error(`${n} proofs in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
  }
} catch (e) {
  console.error(`dpop: ${e.message}`);
  process.exit(1);
}
