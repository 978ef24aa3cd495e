// Regenerates www/openapi.yaml from www/openapi.json (the JSON file is the one to edit).
// Usage: node tests/www/openapi-to-yaml.mjs
// tests/www/equivalent.mjs proves that the two files say the same thing.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const top = join(here, '..', '..');
const require = createRequire(join(here, '..', 'package.json'));
const YAML = require('yaml');

const doc = new YAML.Document(JSON.parse(readFileSync(join(top, 'www', 'openapi.json'), 'utf8')));
doc.commentBefore =
  ' Generated from openapi.json by tests/www/openapi-to-yaml.mjs: edit the JSON file, then rerun it.';
writeFileSync(join(top, 'www', 'openapi.yaml'), doc.toString({ lineWidth: 0 }));
