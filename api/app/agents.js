// Agents: asking the agent (A2A SendMessage at /a2a as this sign-in, followed with GetTask until
// it replies or begins to wait), and the account's agent tasks, whichever token, app or sign-in
// started them (/select-agent-tasks), the latest change first, a page at a time. A waiting task
// says what it waits for and until when; one that has not ended can be stopped here
// (/stop-agent-task), which cancels it ("waiting tasks appear under Agents in the app; stopping
// one there cancels its task"). The list is asked again every 10 seconds while it is shown.

import * as api from './api.js';
import { h, fill, when, say } from './dom.js';

const STATES = [
  ['', 'All'],
  ['waiting', 'Waiting'],
  ['working', 'Working'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['canceled', 'Stopped'],
];

const STARTED_WITH = { token: 'API token', app: 'app', signIn: 'signed in' };

/** A random UUID, also where `crypto.randomUUID` is not (a page served over plain http). */
function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** A message's parts as the page shows them: text as text, a link the agent made as a link. */
function said(message) {
  return (message?.parts ?? []).map((part) => {
    if (part.text !== undefined) return h('p', {}, part.text);
    let safe = null;
    try {
      safe = ['https:', 'http:'].includes(new URL(part.url).protocol) ? part.url : null;
    } catch {
      safe = null;
    }
    return safe && h('p', {}, h('a', { href: safe, rel: 'noopener noreferrer', target: '_blank' }, part.filename || safe));
  });
}

const pause = (ms) => new Promise((done) => setTimeout(done, ms));

export function agentsView() {
  const status = h('p', { id: 'status', role: 'status' });
  const list = h('ul', { id: 'agentTasks', class: 'tasks' });
  const more = h('button', { type: 'button', id: 'moreTasks', hidden: true }, 'Show more');
  const filter = h('select', { id: 'taskState' }, STATES.map(([value, label]) => h('option', { value }, label)));
  let cursor = null;
  let shown = 0;

  async function page(again) {
    try {
      const body = { limit: again ? Math.min(100, Math.max(shown, 20)) : 20 };
      if (filter.value) body.state = filter.value;
      if (!again && cursor) body.cursor = cursor;
      const found = await api.call('/select-agent-tasks', body);
      if (again || !cursor) fill(list);
      for (const task of found.tasks) list.append(item(task));
      shown = list.children.length;
      if (!shown) list.append(h('li', { class: 'empty' }, filter.value ? 'No task stands so.' : 'No agent tasks yet.'));
      cursor = found.nextCursor;
      more.hidden = !cursor;
    } catch (e) {
      say(status, e);
    }
  }

  function item(task) {
    const stop = async (event) => {
      event.target.disabled = true;
      try {
        await api.call('/stop-agent-task', { taskId: task.taskId });
        status.textContent = 'Task stopped.';
        await page(true);
      } catch (e) {
        event.target.disabled = false;
        say(status, e);
      }
    };
    const live = task.state === 'working' || task.state === 'waiting';
    return h(
      'li',
      { dataset: { id: task.taskId, state: task.state } },
      h('p', { class: 'asked' }, task.asked || '(no words)'),
      h('p', {},
        h('strong', { class: 'state' }, task.state),
        ` since ${when(task.statusTime)}, started by ${task.startedBy} (${STARTED_WITH[task.startedWith] ?? task.startedWith})`),
      task.waitingFor
        ? h('p', { class: 'waits' }, `Waits for ${task.waitingFor}, until ${when(task.waitUntil)}`)
        : task.said && h('p', { class: 'said-by-agent' }, task.said),
      live && h('button', { type: 'button', class: 'stop', onclick: stop, 'aria-label': `Stop the task “${task.asked.slice(0, 60)}”` }, 'Stop'),
    );
  }

  const question = h('textarea', { id: 'question', rows: '2', required: true });
  const goOn = h('input', { type: 'checkbox', id: 'goOn', disabled: true });
  const askButton = h('button', { type: 'submit', class: 'primary', id: 'askButton' }, 'Ask');
  const reply = h('div', { id: 'agentReply', 'aria-live': 'polite' });
  let context = null;

  async function ask(event) {
    event.preventDefault();
    const message = { messageId: uuid(), role: 'ROLE_USER', parts: [{ text: question.value }] };
    if (goOn.checked && context) message.contextId = context;
    askButton.disabled = true;
    fill(reply, h('p', { class: 'hint' }, 'The agent is working…'));
    try {
      let { task } = await api.agent('SendMessage', { message, configuration: { returnImmediately: true } });
      context = task.contextId;
      goOn.disabled = false;
      question.value = '';
      page(true);
      const waits = (t) => /^Waiting for/.test(t.status.message?.parts?.[0]?.text ?? '');
      while (task.status.state === 'TASK_STATE_WORKING' && !waits(task) && reply.isConnected) {
        await pause(1500);
        task = await api.agent('GetTask', { id: task.id, historyLength: 0 });
      }
      fill(reply, said(task.status.message));
      page(true);
    } catch (e) {
      fill(reply);
      say(status, e);
    } finally {
      askButton.disabled = false;
    }
  }

  filter.addEventListener('change', () => {
    cursor = null;
    page(false);
  });
  more.addEventListener('click', () => page(false));
  page(false);
  const timer = setInterval(() => {
    if (!list.isConnected) clearInterval(timer);
    else page(true);
  }, 10000);
  return h(
    'section',
    { class: 'agents' },
    h('h1', {}, 'Agents'),
    h(
      'form',
      { class: 'card', onsubmit: ask },
      h('div', { class: 'field' }, h('label', { for: 'question' }, 'Ask the agent to work your drive'), question),
      h('div', { class: 'tools' }, askButton, h('label', { class: 'check' }, goOn, 'Go on with the last conversation')),
      reply,
    ),
    h('h2', {}, 'Tasks'),
    h('div', { class: 'tools' }, h('label', { for: 'taskState' }, 'Show'), filter),
    status,
    list,
    more,
  );
}
