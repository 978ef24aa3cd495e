#!/usr/bin/env node
// tests/www/equivalent.mjs — proves that www/openapi.json and www/openapi.yaml describe the same
// document, and that the comparison used for it does notice differences.
// TAP on stdout; exits non-zero when a test failed. Needs `npm ci --prefix tests` first.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { done, ok } from '../lib/tap.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const top = join(here, '..', '..');
const require = createRequire(join(top, 'tests', 'package.json'));


// firstDifference(a, b): null when a and b are the same JSON value (object member order ignored,
// array order significant, 1 and "1" different, a missing member different from null), else the
// JSON-pointer-like path of the first difference found and what differs there.
function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
function firstDifference(a, b, path = '') {
  const ka = kind(a);
  const kb = kind(b);
  if (ka !== kb) return `${path || '/'}: ${ka} vs ${kb}`;
  if (ka === 'array') {
    if (a.length !== b.length) return `${path || '/'}: ${a.length} items vs ${b.length}`;
    for (let i = 0; i < a.length; i += 1) {
      const d = firstDifference(a[i], b[i], `${path}/${i}`);
      if (d) return d;
    }
    return null;
  }
  if (ka === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of [...keys].sort()) {
      const p = `${path}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!Object.hasOwn(a, k)) return `${p}: missing on the left`;
      if (!Object.hasOwn(b, k)) return `${p}: missing on the right`;
      const d = firstDifference(a[k], b[k], p);
      if (d) return d;
    }
    return null;
  }
  if (ka === 'null') return null;
  if (ka === 'number' || ka === 'string' || ka === 'boolean') {
    return Object.is(a, b) ? null : `${path || '/'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  }
  return `${path || '/'}: not a JSON value (${ka})`;
}

let YAML;
try {
  YAML = require('yaml');
} catch (e) {
  ok(false, 'the yaml package is installed', `${e.message}\nrun: npm ci --prefix tests`);
  done();
}

function load(name, parse) {
  try {
    const doc = parse(readFileSync(join(top, 'www', name), 'utf8'));
    ok(kind(doc) === 'object', `www/${name} parses to an object`);
    return doc;
  } catch (e) {
    ok(false, `www/${name} parses to an object`, e.message);
    return undefined;
  }
}
const fromJson = load('openapi.json', JSON.parse);
// YAML 1.2 core schema, duplicate keys rejected: the YAML file must hold plain JSON data.
const fromYaml = load('openapi.yaml', (text) => YAML.parse(text, { schema: 'core', uniqueKeys: true }));

const diff = fromJson && fromYaml ? firstDifference(fromJson, fromYaml) : 'a file did not parse';
ok(diff === null, 'www/openapi.json and www/openapi.yaml are semantically identical',
  `first difference (json vs yaml) at ${diff}\nregenerate with: node tests/www/openapi-to-yaml.mjs`);

// The comparison itself must be able to fail: each mutation of a copy has to be noticed, and an
// unmutated copy with its members in another order must not be.
const base = fromJson ?? { a: { b: ['2.0', 1, null] } };
const clone = () => structuredClone(base);
function reorder(v) {
  if (Array.isArray(v)) return v.map(reorder);
  if (kind(v) === 'object') return Object.fromEntries(Object.keys(v).reverse().map((k) => [k, reorder(v[k])]));
  return v;
}
ok(firstDifference(base, reorder(clone())) === null,
  'the comparison ignores the order of object members');

const mutations = {
  'a string turned into a number (const "2.0" vs 2)': (d) => {
    d.components.schemas.JsonRpcRequest.properties.jsonrpc.const = 2;
  },
  'a member removed (required list of JsonRpcRequest shortened)': (d) => {
    d.components.schemas.JsonRpcRequest.required.pop();
  },
  'a member added (x-extra at the top)': (d) => {
    d['x-extra'] = true;
  },
  'two array items swapped (tags reversed)': (d) => {
    d.tags.reverse();
  },
  'a member set to null instead of removed': (d) => {
    d.info.summary = null;
  },
};
for (const [what, mutate] of Object.entries(mutations)) {
  let d;
  try {
    d = clone();
    mutate(d);
  } catch (e) {
    ok(false, `the comparison notices ${what}`, `could not mutate the copy: ${e.message}`);
    continue;
  }
  const found = firstDifference(base, d);
  ok(found !== null, `the comparison notices ${what}`, 'no difference reported');
}

done();
