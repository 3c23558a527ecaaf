// What reaches the account from outside, on the account page: the apps let in through OAuth
// (/select-connections; one revoked ends its token at once) and the webhooks the drive posts
// events to (/select-event-subscriptions: how their deliveries go; added with the kinds the
// OpenAPI document names, the signing secret shown once; removed).

import * as api from './api.js';
import { h, fill, when, say } from './dom.js';
import { openapi, resolve } from './schema.js';

export function connectionsCard() {
  const status = h('p', { role: 'status', id: 'connectionsStatus' });
  const list = h('ul', { id: 'connections', class: 'sign-ins' });

  async function draw() {
    const { connections } = await api.call('/select-connections');
    fill(list, connections.length ? connections.map((c) => h(
      'li',
      { dataset: { id: c.id } },
      h('span', { class: 'agent' }, c.clientName),
      h('span', { class: 'where' }, ` may ${c.scopes.join(', ')}, since ${when(c.insertTime)}`),
      h('button', { type: 'button', 'aria-label': `Revoke ${c.clientName}`, onclick: () => revoke(c) }, 'Revoke'),
    )) : h('li', {}, 'No app is let in.'));
  }

  async function revoke(c) {
    try {
      await api.call('/revoke-connection', { connectionId: c.id });
      status.textContent = `${c.clientName} can no longer reach your drive.`;
      await draw();
    } catch (e) {
      say(status, e);
    }
  }

  draw().catch((e) => say(status, e));
  return h('section', { class: 'card', 'aria-labelledby': 'connectionsTitle' },
    h('h2', { id: 'connectionsTitle' }, 'Apps you let in'), list, status);
}

export function webhooksCard() {
  const status = h('p', { role: 'status', id: 'webhooksStatus' });
  const list = h('ul', { id: 'webhooks', class: 'sign-ins' });
  const url = h('input', { id: 'webhookUrl', type: 'url', required: true, placeholder: 'https://…' });
  const kinds = h('fieldset', { id: 'webhookKinds' }, h('legend', {}, 'Events to send (none ticked: the first six)'));
  const secret = h('p', { id: 'webhookSecret' });

  async function draw() {
    const { subscriptions } = await api.call('/select-event-subscriptions');
    fill(list, subscriptions.length ? subscriptions.map((s) => h(
      'li',
      { dataset: { id: s.id, state: s.state } },
      h('code', {}, s.url),
      h('span', { class: 'where' }, ` ${s.kinds.join(', ')}; ${s.state}`,
        s.lastDeliveryTime ? `, last taken ${when(s.lastDeliveryTime)}` : '',
        s.failures ? `, ${s.failures} failed in a row: ${s.lastError ?? ''}` : ''),
      h('button', { type: 'button', 'aria-label': `Remove the webhook to ${s.url}`, onclick: () => remove(s) }, 'Remove'),
    )) : h('li', {}, 'No webhooks.'));
  }

  async function drawKinds() {
    const doc = await openapi();
    const input = resolve(doc, doc.components.schemas.CreateSubscriptionInput);
    const named = resolve(doc, resolve(doc, input.properties.kinds).items).enum ?? [];
    kinds.append(...named.map((kind) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: 'kind', value: kind }), kind)));
  }

  async function add(event) {
    event.preventDefault();
    const ticked = [...kinds.querySelectorAll('input:checked')].map((box) => box.value);
    try {
      const made = await api.call('/create-event-subscription', { url: url.value, kinds: ticked.length ? ticked : undefined });
      fill(secret, 'Its signing secret, shown only now: ', h('code', {}, made.secret));
      status.textContent = `Events go to ${made.subscription.url}.`;
      url.value = '';
      await draw();
    } catch (e) {
      say(status, e);
    }
  }

  async function remove(s) {
    try {
      await api.call('/delete-event-subscription', { subscriptionId: s.id });
      status.textContent = `Nothing more goes to ${s.url}.`;
      await draw();
    } catch (e) {
      say(status, e);
    }
  }

  Promise.all([draw(), drawKinds()]).catch((e) => say(status, e));
  return h('section', { class: 'card', 'aria-labelledby': 'webhooksTitle' },
    h('h2', { id: 'webhooksTitle' }, 'Webhooks'),
    list,
    h('form', { onsubmit: add },
      h('div', { class: 'field' }, h('label', { for: 'webhookUrl' }, 'Send events to'), url),
      kinds,
      h('button', { type: 'submit', id: 'addWebhook' }, 'Add the webhook')),
    secret,
    status);
}
