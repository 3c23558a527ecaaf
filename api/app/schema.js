// Forms drawn from the drive's own OpenAPI document (served at /openapi.json): an object
// schema's properties become labelled inputs (a choice for each `enum`, numbers with their
// ranges, the descriptions and defaults as hints), so no form is written by hand for what the
// document already says (a job type's options, an image generation's choices).

import { h } from './dom.js';

let documentAsked = null;

/** The drive's OpenAPI document, once a page. */
export function openapi() {
  documentAsked ??= fetch('/openapi.json', { cache: 'no-store' }).then((r) => r.json());
  return documentAsked;
}

/** A `$ref`'s schema, or the schema itself; a nullable choice is its non-null branch. */
export function resolve(doc, schema) {
  let s = schema ?? {};
  for (let hops = 0; hops < 10; hops += 1) {
    if (s.$ref) s = doc.components.schemas[s.$ref.split('/').pop()] ?? {};
    else if (s.oneOf || s.anyOf) s = (s.oneOf ?? s.anyOf).find((b) => b.type !== 'null') ?? {};
    else break;
  }
  return s;
}

/** The inputs of one options schema; `read()` gives the options object they say. */
export function schemaForm(doc, schema) {
  const readers = [];
  const inputs = Object.entries(schema.properties ?? {}).map(([name, raw]) => {
    const s = resolve(doc, raw);
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    const id = `opt-${name}`;
    const hint = [raw.description ?? s.description, s.default !== undefined ? `default ${JSON.stringify(s.default)}` : null]
      .filter(Boolean).join('; ');
    let input;
    let read;
    if (s.enum) {
      input = h('select', { id, name }, h('option', { value: '' }, '(default)'), s.enum.filter((v) => v !== null).map((v) => h('option', { value: v }, String(v))));
      read = () => input.value || undefined;
    } else if (type === 'boolean') {
      input = h('select', { id, name }, h('option', { value: '' }, '(default)'), h('option', { value: 'true' }, 'yes'), h('option', { value: 'false' }, 'no'));
      read = () => (input.value ? input.value === 'true' : undefined);
    } else if (type === 'integer' || type === 'number') {
      input = h('input', { id, name, type: 'number', min: s.minimum, max: s.maximum, step: type === 'integer' ? '1' : 'any', placeholder: s.default ?? '' });
      read = () => (input.value === '' ? undefined : Number(input.value));
    } else if (type === 'object' || type === 'array') {
      input = h('textarea', { id, name, rows: '2', placeholder: 'JSON' });
      read = () => (input.value.trim() ? JSON.parse(input.value) : undefined);
    } else {
      input = h('input', { id, name, placeholder: s.default ?? '' });
      read = () => input.value || undefined;
    }
    readers.push([name, read]);
    return h('div', { class: 'field' }, h('label', { for: id }, name), input, hint ? h('small', { class: 'hint' }, hint) : null);
  });
  const read = () => {
    const options = {};
    for (const [name, value] of readers) {
      const v = value();
      if (v !== undefined) options[name] = v;
    }
    return Object.keys(options).length ? options : undefined;
  };
  return { inputs, read };
}
