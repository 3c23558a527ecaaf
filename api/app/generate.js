// Images: one drawn from a prompt (/generate-image), its choices (model, aspect ratio, quality)
// drawn from the OpenAPI document's GenerateInput with what the plan allows said beside them,
// this month's images against the plan's allowance; the generations asked for here followed
// (/select-generations) until their image is saved, and the last day's (the `generation`
// events) listed, each image linking to its file.

import * as api from './api.js';
import { h, fill, when, say } from './dom.js';
import { openapi, resolve, schemaForm } from './schema.js';

export function generateView() {
  const status = h('p', { id: 'status', role: 'status' });
  const allowance = h('p', { id: 'allowance' });
  const choices = h('div', { id: 'imageChoices' });
  const prompt = h('textarea', { id: 'prompt', rows: '3', required: true, maxlength: '4000' });
  const draw = h('button', { type: 'submit', class: 'primary', id: 'drawButton' }, 'Draw');
  const asked = h('ol', { id: 'generations', class: 'jobs' });
  const recent = h('ol', { id: 'recentImages', class: 'jobs' });
  const following = new Map();
  let form = null;

  async function start() {
    const doc = await openapi();
    const input = resolve(doc, doc.components.schemas.GenerateInput);
    const { prompt: _, ...rest } = input.properties;
    form = schemaForm(doc, { properties: rest });
    fill(choices, form.inputs);
    await Promise.all([drawAllowance(), drawRecent()]);
  }

  async function drawAllowance() {
    const usage = await api.call('/get-user-storage-usage');
    allowance.textContent = usage.plan
      ? `${usage.images.used} of ${usage.images.limit} images used this month on the ${usage.plan} plan.`
      : 'The account has no plan: it cannot draw images.';
  }

  function item(g) {
    const image = g.image;
    return h(
      'li',
      { dataset: { id: g.id ?? '', status: g.status } },
      h('p', { class: 'asked' }, g.prompt ?? ''),
      h('p', {}, h('strong', {}, g.status), g.model ? ` with ${g.model}` : '', g.time ? `, ${when(g.time)}` : ''),
      g.error ? h('p', { role: 'alert' }, g.error) : null,
      image && h('a', { href: `#/file/${image.id}` }, image.downloadUrl
        ? h('img', { src: image.downloadUrl, alt: g.prompt ?? image.fileName, class: 'artwork', loading: 'lazy' })
        : image.fileName),
    );
  }

  async function follow() {
    while (following.size && asked.isConnected) {
      const answer = await api.call('/select-generations', { ids: [...following.keys()] });
      for (const g of answer.generations) {
        const fresh = item(g);
        following.get(g.id).replaceWith(fresh);
        following.set(g.id, fresh);
        if (g.status === 'working') continue;
        following.delete(g.id);
        if (g.status === 'done') status.textContent = 'Image saved to your drive.';
        else say(status, { message: g.error ?? 'The image could not be drawn.' });
      }
      if (following.size) await new Promise((done) => setTimeout(done, 2000));
    }
    drawAllowance().catch(() => {});
  }

  async function drawRecent() {
    const feed = await api.call('/select-drive-events', { kinds: ['generation'] });
    const events = [...feed.events].reverse();
    fill(recent, events.length ? events.map((e) => item({ ...e, time: e.time })) : h('li', { class: 'empty' }, 'No images in the last day.'));
  }

  async function submit(event) {
    event.preventDefault();
    draw.disabled = true;
    try {
      const started = await api.call('/generate-image', { prompt: prompt.value, ...(form?.read() ?? {}) });
      const shown = item({ id: started.id, status: 'working', model: started.model, prompt: prompt.value });
      asked.prepend(shown);
      const wasIdle = following.size === 0;
      following.set(started.id, shown);
      status.textContent = 'Drawing…';
      prompt.value = '';
      if (wasIdle) follow().catch((e) => say(status, e));
    } catch (e) {
      say(status, e);
    } finally {
      draw.disabled = false;
    }
  }

  start().catch((e) => say(status, e));
  return h(
    'section',
    { class: 'generate' },
    h('h1', {}, 'Images'),
    allowance,
    h(
      'form',
      { class: 'card', onsubmit: submit },
      h('div', { class: 'field' }, h('label', { for: 'prompt' }, 'What to draw'), prompt),
      choices,
      draw,
    ),
    status,
    h('h2', {}, 'Asked for here'),
    asked,
    h('h2', {}, 'The last day'),
    recent,
  );
}
