// A form from a tool's input schema (JSON Schema): one field per property — text, number,
// checkbox, a choice for an enum, JSON for objects and arrays — or one JSON field for a
// schema that names no properties. read() gives the arguments object or throws with the
// field at fault; fill(args) puts arguments back.

import { el } from './dom.js';

// A local $ref (#/$defs/x, #/definitions/x) resolved against the schema's root; one level.
function resolve(root, s) {
  if (!s || typeof s.$ref !== 'string' || !s.$ref.startsWith('#/')) return s || {};
  let cur = root;
  for (const part of s.$ref.slice(2).split('/')) cur = cur?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return cur || {};
}

function kindOf(s) {
  if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string')) return 'enum';
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t === 'string') return 'string';
  if (t === 'integer' || t === 'number') return t;
  if (t === 'boolean') return 'boolean';
  return 'json';
}

export function schemaForm(container, schema, idPrefix = 'arg') {
  const root = schema && typeof schema === 'object' ? schema : {};
  const props = root.properties && typeof root.properties === 'object' ? root.properties : null;
  const required = new Set(Array.isArray(root.required) ? root.required : []);
  const fields = [];
  container.replaceChildren();

  const add = (name, s, whole) => {
    const kind = whole ? 'json' : kindOf(s);
    const id = `${idPrefix}-${fields.length}`;
    let input;
    if (kind === 'enum') {
      input = el('select', { id, name });
      if (!required.has(name)) input.append(el('option', { value: '', text: '' }));
      for (const v of s.enum) input.append(el('option', { value: v, text: v }));
    } else if (kind === 'boolean') {
      input = el('input', { id, name, type: 'checkbox' });
    } else if (kind === 'json') {
      input = el('textarea', { id, name, rows: whole ? 4 : 2, spellcheck: 'false', placeholder: whole ? '{}' : 'JSON' });
    } else {
      input = el('input', {
        id, name, type: kind === 'string' ? 'text' : 'number',
        step: kind === 'integer' ? '1' : (kind === 'number' ? 'any' : null),
        min: s.minimum, max: s.maximum, placeholder: s.default !== undefined ? String(s.default) : null,
      });
    }
    const label = el('label', { for: id },
      el('code', { text: whole ? 'arguments' : name }),
      whole ? '' : el('span', { class: 'type', text: ` ${kind === 'json' ? (s.type || 'JSON') : kind}${required.has(name) ? ', required' : ''}` }));
    const row = el('div', { class: 'field' }, label, input);
    const hint = whole ? 'the arguments as a JSON object (the schema names no properties)' : s.description;
    if (hint) row.append(el('small', { text: hint }));
    container.append(row);
    fields.push({ name, kind, input, whole, required: required.has(name) });
  };

  if (props && Object.keys(props).length) {
    for (const [name, s] of Object.entries(props)) add(name, resolve(root, s), false);
  } else if (root.additionalProperties !== false) {
    add('arguments', {}, true);
  } else {
    container.append(el('p', { class: 'muted', text: 'This tool takes no arguments.' }));
  }

  return {
    read() {
      let args = {};
      for (const f of fields) {
        const v = f.input.value.trim();
        if (f.kind === 'boolean') { if (f.input.checked || f.required) args[f.name] = f.input.checked; continue; }
        if (v === '') {
          if (f.required) throw new Error(`${f.name} is required`);
          continue;
        }
        if (f.kind === 'integer' || f.kind === 'number') {
          const n = Number(v);
          if (!Number.isFinite(n) || (f.kind === 'integer' && !Number.isInteger(n))) throw new Error(`${f.name} must be ${f.kind === 'integer' ? 'an integer' : 'a number'}`);
          args[f.name] = n;
        } else if (f.kind === 'json') {
          let parsed;
          try { parsed = JSON.parse(v); } catch (e) { throw new Error(`${f.name} is not JSON: ${e.message}`); }
          if (f.whole) {
            if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the arguments must be a JSON object');
            args = { ...args, ...parsed };
          } else args[f.name] = parsed;
        } else args[f.name] = v;
      }
      return args;
    },
    fill(args) {
      if (!args || typeof args !== 'object') return;
      for (const f of fields) {
        if (f.whole) f.input.value = JSON.stringify(args);
        else if (!(f.name in args)) continue;
        else if (f.kind === 'boolean') f.input.checked = Boolean(args[f.name]);
        else if (f.kind === 'json') f.input.value = JSON.stringify(args[f.name]);
        else f.input.value = String(args[f.name]);
      }
    },
  };
}
