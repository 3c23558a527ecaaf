// Jobs: a new one on the files chosen, its form drawn from the drive's own OpenAPI document (the
// options schema of the type chosen; no form is written by hand for any type), estimated by a
// dry run before it starts; and the account's jobs followed live (/select-file-jobs, its `wait`
// answering as soon as one ends), each with its progress, what it made, and a way to stop it; this month's job minutes.

import * as api from './api.js';
import { h, fill, field, when, say } from './dom.js';

let documentAsked = null;

/** The drive's OpenAPI document, once a page. */
function openapi() {
  documentAsked ??= fetch('/openapi.json', { cache: 'no-store' }).then((r) => r.json());
  return documentAsked;
}

/** A `$ref`'s schema, or the schema itself; a nullable choice is its non-null branch. */
function resolve(doc, schema) {
  let s = schema ?? {};
  for (let hops = 0; hops < 10; hops += 1) {
    if (s.$ref) s = doc.components.schemas[s.$ref.split('/').pop()] ?? {};
    else if (s.oneOf || s.anyOf) s = (s.oneOf ?? s.anyOf).find((b) => b.type !== 'null') ?? {};
    else break;
  }
  return s;
}

/** Each job type a caller may ask for, with its options schema, from CreateJobInput's branches. */
async function jobTypes() {
  const doc = await openapi();
  const input = doc.components.schemas.CreateJobInput;
  const branches = (input.allOf ?? []).flatMap((rule) => rule.oneOf ?? []);
  return branches
    .filter((b) => b.properties?.jobType?.enum)
    .map((b) => ({ type: b.properties.jobType.enum[0], options: resolve(doc, b.properties.options) }));
}

/** The inputs of one options schema; `read()` gives the options object they say. */
function optionsForm(doc, schema) {
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

export function jobsView(params) {
  const status = h('p', { id: 'status', role: 'status' });
  const list = h('ol', { id: 'jobs', class: 'jobs' });
  const minutes = h('p', { id: 'minutes' });
  const fileIds = (params.get('files') ?? '').split(',').filter(Boolean);
  let following = true;

  const maker = h('section', { class: 'card', id: 'newJob' });
  if (fileIds.length) drawMaker();

  async function drawMaker() {
    const [doc, types] = await Promise.all([openapi(), jobTypes()]);
    const choose = h('select', { id: 'jobType' }, types.map((t) => h('option', { value: t.type }, t.type)));
    const fields = h('div', { id: 'jobOptions' });
    const estimate = h('p', { id: 'estimate', role: 'status' });
    const start = h('button', { type: 'button', class: 'primary', id: 'startJob', disabled: true }, 'Start');
    let form = null;
    const drawn = () => {
      form = optionsForm(doc, types.find((t) => t.type === choose.value).options);
      fill(fields, form.inputs);
      start.disabled = true;
      estimate.textContent = '';
    };
    const body = (dryRun) => ({ jobType: choose.value, fileIds, options: form.read(), dryRun });
    const check = h('button', { type: 'button', id: 'estimateJob' }, 'Estimate');
    check.addEventListener('click', async () => {
      try {
        const dry = await api.call('/create-file-job', body(true));
        estimate.textContent = `About ${dry.estimateSeconds} s once it starts.`;
        start.disabled = false;
      } catch (e) {
        say(estimate, e);
      }
    });
    start.addEventListener('click', async () => {
      try {
        await api.call('/create-file-job', body(false));
        estimate.textContent = 'Started.';
        start.disabled = true;
        refresh();
      } catch (e) {
        say(estimate, e);
      }
    });
    choose.addEventListener('change', drawn);
    drawn();
    fill(maker, h('h2', {}, `A job on ${fileIds.length} file(s)`),
      h('div', { class: 'field' }, h('label', { for: 'jobType' }, 'Job type'), choose), fields, check, start, estimate);
  }

  function drawJobs(answer) {
    minutes.textContent = `Job minutes this month: ${answer.minutes.used.toFixed(1)} of ${answer.minutes.limit.toFixed(0)}.`;
    fill(list, answer.jobs.map((job) => {
      const stop = ['queued', 'running'].includes(job.state)
        ? h('button', { type: 'button', class: 'stop', onclick: () => cancel(job.id) }, 'Stop')
        : null;
      return h(
        'li',
        { dataset: { id: job.id, state: job.state } },
        h('strong', {}, job.jobType), ' ',
        h('span', { class: 'state' }, job.state), ' ',
        h('progress', { max: '1', value: String(job.progress), 'aria-label': `${job.jobType} progress` }),
        ` ${when(job.createTime)}`,
        job.error ? h('p', { class: 'error' }, job.error) : null,
        job.files.length ? h('ul', { class: 'made' }, job.files.map((f) => h('li', {}, h('a', { href: `#/file/${f.id}` }, f.fileName)))) : null,
        stop,
      );
    }));
  }

  async function cancel(id) {
    try {
      await api.call('/cancel-file-job', { id });
      refresh();
    } catch (e) {
      say(status, e);
    }
  }

  let shown = [];
  async function refresh() {
    const answer = await api.call('/select-file-jobs', { limit: 20 });
    shown = answer.jobs;
    drawJobs(answer);
    if (!followingNow) follow();
  }

  // While jobs shown are queued or running, and the view is up, they are asked about every two
  // seconds at most (sooner when one ends: `wait` answers then), so progress moves as it does.
  let followingNow = false;
  async function follow() {
    followingNow = true;
    try {
      while (following && document.body.contains(list)) {
        const ids = shown.filter((j) => ['queued', 'running'].includes(j.state)).map((j) => j.id);
        if (!ids.length) break;
        await api.call('/select-file-jobs', { ids, wait: 2 });
        const answer = await api.call('/select-file-jobs', { limit: 20 });
        shown = answer.jobs;
        drawJobs(answer);
      }
    } catch (e) {
      say(status, e);
    } finally {
      followingNow = false;
    }
  }
  refresh().catch((e) => say(status, e));
  addEventListener('hashchange', () => { following = false; }, { once: true });

  return h('section', { class: 'jobs-view' }, h('h1', {}, 'Jobs'), minutes, status, maker, list);
}
