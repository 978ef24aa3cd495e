// Loads www/openapi.json and makes its component schemas usable with ajv (JSON Schema 2020-12,
// strict mode, ajv-formats). Shared by tests/www/schemas.mjs and tests/www/validate-live.mjs.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { done, ok } from '../../lib/tap.mjs';

export const top = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const require = createRequire(join(top, 'tests', 'package.json'));
const BASE = 'https://mcpgate.invalid/openapi.json';

// Rewrites "#/components/schemas/X" references to point into the schema registered by load().
function rebase(v) {
  if (Array.isArray(v)) return v.map(rebase);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [
      k,
      k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')
        ? `${BASE}#/$defs/${x.slice('#/components/schemas/'.length)}`
        : rebase(x),
    ]));
  }
  return v;
}

// load() -> { doc, validator(schema), schema(name), deref(obj) }; throws when the description
// does not parse or a component schema does not compile.
export function load() {
  const doc = JSON.parse(readFileSync(join(top, 'www', 'openapi.json'), 'utf8'));
  const Ajv2020 = require('ajv/dist/2020.js').default;
  const addFormats = require('ajv-formats').default;
  // strict: an OpenAPI-only keyword inside a schema is an error here, so the schemas stay plain
  // JSON Schema 2020-12. allowUnionTypes: the description uses "type": [..] unions.
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema({ $id: BASE, $defs: rebase(doc.components.schemas) });
  for (const name of Object.keys(doc.components.schemas)) ajv.getSchema(`${BASE}#/$defs/${name}`);

  const cache = new Map();
  const validator = (schema) => {
    const key = JSON.stringify(schema);
    if (!cache.has(key)) cache.set(key, ajv.compile(rebase(schema)));
    return cache.get(key);
  };
  const schema = (name) => ({ $ref: `#/components/schemas/${name}` });
  const deref = (obj) => {
    let o = obj;
    while (o && typeof o.$ref === 'string') {
      o = o.$ref.slice(2).split('/')
        .reduce((a, k) => a?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    }
    return o;
  };
  return { doc, validator, schema, deref };
}

// loadChecked(desc): load() as a TAP test named desc; when it throws, the test fails with the
// stack and the run ends there (done()).
export function loadChecked(desc) {
  let api;
  try {
    api = load();
    ok(true, desc);
  } catch (e) {
    ok(false, desc, e.stack);
    done();
  }
  return api;
}
