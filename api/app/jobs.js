// Jobs: a new one on the files chosen, its form drawn from the drive's own OpenAPI document (the
// options schema of the type chosen; no form is written by hand for any type), estimated by a
// dry run before it starts; and the account's jobs followed live (/select-file-jobs, its `wait`
// answering as soon as one ends), each with its progress, what it made, and a way to stop it; this month's job minutes.

import * as api from './api.js';
import { h, fill, field, when, say } from './dom.js';
import { openapi, resolve, schemaForm } from './schema.js';

/** Each job type a caller may ask for, with its options schema, from CreateJobInput's branches. */
async function jobTypes() {
  const doc = await openapi();
  const input = doc.components.schemas.CreateJobInput;
  const branches = (input.allOf ?? []).flatMap((rule) => rule.oneOf ?? []);
  return branches
    .filter((b) => b.properties?.jobType?.enum)
    .map((b) => ({ type: b.properties.jobType.enum[0], options: resolve(doc, b.properties.options) }));
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
      form = schemaForm(doc, types.find((t) => t.type === choose.value).options);
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
