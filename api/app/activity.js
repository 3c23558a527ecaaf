// Activity (`#/activity/`): what happened in the drive, followed live — the event feed
// (/select-drive-events, the contract's six kinds and a mirror's), newest at the top, each event
// a sentence with its time and its files linked, asked again with its `nextCursor` as `since` and
// a `wait` for as long as the page is shown; how often others opened the account's files
// (/select-file-views, asked again when a `view` event comes); and what the account uses:
// storage against its plan and this month's images (/get-user-storage-usage) and job minutes
// (/select-file-jobs' `minutes`), asked again when an event may have changed them.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';

const CONTRACT = ['drop', 'note', 'view', 'file', 'generation', 'job'];
const MIRROR = ['trashed', 'restored', 'deleted', 'moved', 'renamed', 'access', 'shared', 'unshared'];

/** What the feed may be narrowed to: the choice's value, its label, and the kinds it asks for. */
const SHOW = [
  ['all', 'Everything', [...CONTRACT, ...MIRROR]],
  ['arrivals', 'Files arriving', ['file', 'drop', 'job', 'generation']],
  ['people', 'Views, notes and shares', ['view', 'note', 'shared', 'unshared']],
  ['changes', 'Trash, moves, names, access', ['trashed', 'restored', 'deleted', 'moved', 'renamed', 'access']],
];

const PERIODS = [
  ['1', 'the last day'],
  ['7', 'the last 7 days', true],
  ['30', 'the last 30 days'],
];

/** Events kept on the page at most: the oldest leave as new ones come. */
const KEEP = 200;
/** Seconds each ask of the feed holds when nothing is new. */
const WAIT = 25;
/** Kinds after which what the account stores or has used may differ. */
const USES = new Set(['file', 'drop', 'generation', 'job', 'deleted']);

const pause = (ms) => new Promise((done) => setTimeout(done, ms));

/** `ask` run one at a time: asked while it runs, it runs once more after. */
function once(ask) {
  let running = false;
  let again = false;
  return async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await ask();
      } while (again);
    } finally {
      running = false;
    }
  };
}
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const person = (p) => (p?.displayName ? `${p.displayName} (${p.handle})` : p?.handle || 'someone');
const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
const folderHref = (path) => `#/files/${path.split('/').filter(Boolean).map(encodeURIComponent).join('/')}`;

/** A file named in an event: a link to its page, or its name alone when it is gone. */
function fileLink(file, gone = false) {
  const name = file?.fileName ?? 'a file';
  return file?.id && !gone ? h('a', { href: `#/file/${file.id}` }, name) : h('span', { class: 'gone' }, `“${name}”`);
}

function folderLink(path) {
  return h('a', { href: folderHref(path) }, path);
}

// Folder paths by id, from /select-collections: asked once, and again (at most every 5 s) when an
// event names a folder not known yet.
let paths = null;
let pathsAsked = 0;
function folderPaths(again) {
  if (!paths || (again && Date.now() - pathsAsked > 5000)) {
    pathsAsked = Date.now();
    const asked = api.call('/select-collections').then(({ folders }) => new Map(folders.map((f) => [f.id, f.path])));
    asked.catch(() => {
      if (paths === asked) paths = null;
    });
    paths = asked;
  }
  return paths;
}

/** Where a folder id is: a link to it once its path is known. */
function place(id) {
  if (!id) return h('a', { href: '#/files/' }, 'the top of the drive');
  const link = h('a', { href: '#/files/' }, 'a folder');
  folderPaths(false)
    .then((known) => known.get(id) ?? folderPaths(true).then((again) => again.get(id)))
    .then((path) => {
      if (!path) return;
      link.textContent = path;
      link.setAttribute('href', folderHref(path));
    })
    .catch(() => {});
  return link;
}

/** A file or a folder that was shared or unshared. */
function shareOf(event, linked) {
  if (event.file) return linked ? fileLink(event.file) : fileLink(event.file, true);
  if (event.folder) return ['the folder ', linked ? folderLink(event.folder.path) : event.folder.path];
  return 'something';
}

const quote = (text) => (text ? h('blockquote', { class: 'quote' }, text) : null);
const madeList = (files) =>
  files?.length ? h('ul', { class: 'made' }, files.map((f) => h('li', {}, fileLink(f), ` (${size(f.fileSize ?? 0)})`))) : null;

/** An event as a sentence (`line`) and what goes under it (`more`), every string as text. */
function told(e) {
  switch (e.kind) {
    case 'file':
      return {
        line: [fileLink(e.file), ` was added (${size(e.file?.fileSize ?? 0)})`, e.file?.folderId ? [' in ', place(e.file.folderId)] : null, '.'],
      };
    case 'drop': {
      const files = e.files ?? [];
      return {
        line: `${e.sender?.name || 'Someone'} sent ${plural(files.length, 'file')} to your request “${e.request?.title ?? ''}”.`,
        more: [quote(e.note), madeList(files)],
      };
    }
    case 'note': {
      const at = typeof e.seconds === 'number' && e.file?.id
        ? [' at ', h('a', { href: `#/file/${e.file.id}?at=${Math.floor(e.seconds)}` }, clock(e.seconds))]
        : null;
      return {
        line: [`${e.reviewer?.name || 'Someone'} ${e.replyTo ? 'replied to a note' : 'left a note'} on `, fileLink(e.file), at,
          ` in the review “${e.review?.title ?? ''}”.`],
        more: [quote(e.text)],
      };
    }
    case 'view':
      return { line: [e.viewer ? person(e.viewer) : 'Someone', ' opened ', fileLink(e.file), '.'] };
    case 'generation':
      return e.status === 'failed'
        ? { line: `An image generation failed${e.error ? `: ${e.error}` : ''}.`, more: [quote(e.prompt)] }
        : { line: e.image ? ['An image was generated: ', fileLink(e.image), '.'] : 'An image was generated.', more: [quote(e.prompt)] };
    case 'job': {
      const job = e.job ?? {};
      const ended = { done: 'finished', failed: 'failed', stopped: 'was stopped' }[job.state] ?? job.state ?? 'ended';
      return {
        line: [`A ${job.jobType ?? ''} job ${ended}`, job.folder ? [', its results in ', folderLink(job.folder.path)] : null, '.'],
        more: [job.error ? h('p', { class: 'error' }, job.error) : null, madeList(e.files)],
      };
    }
    case 'trashed':
      return { line: [fileLink(e.file), ' went to the trash.'] };
    case 'restored':
      return { line: [fileLink(e.file), ' came back from the trash.'] };
    case 'deleted':
      return e.folder
        ? { line: `The folder ${e.folder.path} was deleted.` }
        : { line: [fileLink(e.file, true), ' was deleted for good.'] };
    case 'moved':
      return e.folder
        ? { line: [`The folder ${e.fromPath ?? ''} moved to `, folderLink(e.folder.path), '.'] }
        : { line: [fileLink(e.file), ' moved from ', place(e.fromFolderId), ' to ', place(e.file?.folderId), '.'] };
    case 'renamed':
      return { line: [`“${e.fromName ?? ''}” was renamed `, fileLink(e.file), '.'] };
    case 'access':
      return { line: [fileLink(e.file), ` was made ${e.file?.isPublic ? 'public' : 'private'}.`] };
    case 'shared':
      return e.with
        ? { line: ['You shared ', shareOf(e, true), ` with ${person(e.with)}.`] }
        : { line: [`${person(e.owner)} shared `, shareOf(e, true), ' with you.'] };
    case 'unshared':
      return e.with
        ? { line: ['You stopped sharing ', shareOf(e, true), ` with ${person(e.with)}.`] }
        : { line: [`${person(e.owner)} stopped sharing `, shareOf(e, false), ' with you.'] };
    default:
      return { line: `Something happened (${e.kind}).` };
  }
}

function eventItem(event) {
  const { line, more } = told(event);
  return h(
    'li',
    { dataset: { id: event.id, kind: event.kind } },
    h('p', { class: 'line' }, line),
    more,
    h('p', { class: 'at' }, h('time', { datetime: event.time }, when(event.time))),
  );
}

export function activityView() {
  paths = null;
  const status = h('p', { id: 'status', role: 'status' });

  // What the account uses.
  const usage = h('div', { id: 'usage', class: 'usage' }, h('p', { class: 'hint' }, 'Asking what the account uses…'));
  async function drawUsage() {
    try {
      const [stored, jobs] = await Promise.all([
        api.call('/get-user-storage-usage'),
        api.call('/select-file-jobs', { limit: 1 }),
      ]);
      fill(usage, storageGauge(stored), minutesGauge(jobs.minutes), imagesGauge(stored.images));
    } catch (e) {
      say(status, e);
    }
  }
  const refreshUsage = once(drawUsage);

  // Views of the account's files.
  const views = h('ul', { id: 'views', class: 'feed' });
  const viewsSince = h('p', { class: 'hint', id: 'viewsSince' });
  async function drawViews() {
    try {
      const found = await api.call('/select-file-views', { limit: 25 });
      viewsSince.textContent = `Opens by anyone but you since ${found.since}, most opened first. People are named only when a file is shared with them and they let it be known.`;
      fill(views, found.files.map(viewItem));
      if (!found.files.length) views.append(h('li', { class: 'empty' }, `Nobody else has opened your files since ${found.since}.`));
    } catch (e) {
      say(status, e);
    }
  }
  const viewsAgain = once(drawViews);
  const refreshViews = h('button', { type: 'button', id: 'refreshViews', onclick: viewsAgain }, 'Refresh views');

  // The feed, followed.
  const events = h('ul', { id: 'events', class: 'feed', 'aria-describedby': 'feedState' });
  const feedState = h('p', { id: 'feedState', class: 'hint' }, 'Loading what happened…');
  const news = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const show = h('select', { id: 'eventKinds' }, SHOW.map(([value, label]) => h('option', { value }, label)));
  const period = h('select', { id: 'eventPeriod' }, PERIODS.map(([value, label, selected]) => h('option', { value, selected }, label)));
  let run = 0;

  function draw(found, live) {
    if (!found.length) return;
    events.querySelector('li.empty')?.remove();
    for (const event of found) events.prepend(eventItem(event));
    while (events.children.length > KEEP) events.lastElementChild.remove();
    if (!live) return;
    news.textContent = found.length === 1 ? `New: ${events.firstElementChild.querySelector('.line').textContent}` : `${found.length} new events.`;
    if (found.some((e) => USES.has(e.kind))) refreshUsage();
    if (found.some((e) => e.kind === 'view')) viewsAgain();
    if (found.some((e) => e.folder)) paths = null;
  }

  /** Reads the feed from the period chosen to now, then asks again with `wait` while the list
   * is on the page and no newer choice has started another run. */
  async function follow() {
    const mine = ++run;
    const kinds = SHOW.find(([value]) => value === show.value)[2];
    const days = Number(period.value);
    let since = new Date(Date.now() - days * 86400000).toISOString();
    let caughtUp = false;
    let failures = 0;
    fill(events);
    delete events.dataset.following;
    feedState.textContent = 'Loading what happened…';
    do {
      try {
        const page = await api.call('/select-drive-events', { since, kinds, limit: 100, wait: caughtUp && !failures ? WAIT : 0 });
        if (mine !== run) return;
        // Asked again at once after a failure, so its sentence goes as soon as the drive answers.
        if (failures) status.textContent = '';
        failures = 0;
        since = page.nextCursor;
        draw(page.events, caughtUp);
        if (!page.more && !caughtUp) {
          caughtUp = true;
          if (!events.children.length) {
            const label = PERIODS.find(([value]) => value === period.value)[1];
            events.append(h('li', { class: 'empty' }, `Nothing happened in ${label}.`));
          }
          feedState.textContent = `Newest first, followed live: what happens now appears at the top (at most ${KEEP} shown).`;
          events.dataset.following = 'live';
        }
      } catch (e) {
        if (mine !== run) return;
        say(status, e);
        if (e.status === 401) return;
        failures += 1;
        await pause(Math.min(30000, 1000 * 2 ** failures));
      }
    } while (mine === run && events.isConnected);
  }

  show.addEventListener('change', follow);
  period.addEventListener('change', follow);
  follow();
  drawUsage();
  drawViews();

  return h(
    'section',
    { class: 'activity' },
    h('h1', {}, 'Activity'),
    status,
    h(
      'div',
      { class: 'split' },
      h(
        'section',
        { 'aria-labelledby': 'eventsHeading' },
        h('h2', { id: 'eventsHeading' }, 'What happened'),
        h(
          'div',
          { class: 'tools' },
          h('label', { for: 'eventKinds' }, 'Show'), show,
          h('label', { for: 'eventPeriod' }, 'From'), period,
        ),
        feedState,
        news,
        events,
      ),
      h(
        'div',
        {},
        h('section', { 'aria-labelledby': 'usageHeading' }, h('h2', { id: 'usageHeading' }, 'Usage'), usage),
        h(
          'section',
          { 'aria-labelledby': 'viewsHeading' },
          h('h2', { id: 'viewsHeading' }, 'Views of your files'),
          viewsSince,
          views,
          refreshViews,
        ),
      ),
    ),
  );
}

function storageGauge(u) {
  if (!u.plan) return h('p', { id: 'storageUsed' }, `No plan: ${size(u.usedBytes)} stored, and nothing new can be.`);
  const limit = u.limitBytes;
  const part = limit > 0 ? Math.min(100, (u.usedBytes / limit) * 100) : 100;
  const marks = {
    max: String(Math.max(limit, 1)), value: String(u.usedBytes),
    low: String(Math.round(limit * 0.7)), high: String(Math.round(limit * 0.9)),
  };
  return gauge('storageMeter', `Storage (${u.plan} plan)`, marks, 'storageUsed',
    `${size(u.usedBytes)} of ${size(limit)} used (${part > 0 && part < 1 ? 'under 1' : Math.round(part)}%): `
    + `${plural(u.objects, 'stored object')}, the trash included; ${size(u.remainingBytes)} left.`);
}

function minutesGauge(m) {
  if (!m.limit) return h('p', { id: 'jobMinutes' }, `No job minutes on this plan; ${m.used.toFixed(1)} used this month.`);
  const marks = {
    max: String(m.limit), value: String(m.used), low: String(m.limit * 0.7), high: String(m.limit * 0.9),
  };
  return gauge('minutesMeter', 'Job minutes this month', marks, 'jobMinutes',
    `${m.used.toFixed(1)} of ${m.limit.toFixed(0)} minutes used (the month is counted in UTC).`);
}

/** Images generated this month against the plan's allowance, when the drive counts them. */
function imagesGauge(images) {
  if (!images?.limit) return null;
  const marks = {
    max: String(images.limit), value: String(images.used),
    low: String(images.limit * 0.7), high: String(images.limit * 0.9),
  };
  return gauge('imagesMeter', 'Images generated this month', marks, 'imagesUsed',
    `${images.used} of ${images.limit} images.`);
}

/**
 * A use against its allowance: `label` over a meter (`marks`: its max and value, and its low
 * and high marks at 70% and 90% of the allowance), then the line `lineId` saying it in words.
 */
function gauge(meterId, label, marks, lineId, line) {
  return h(
    'div',
    { class: 'gauge' },
    h('label', { for: meterId }, label),
    h('meter', { id: meterId, min: '0', ...marks, optimum: '0', 'aria-describedby': lineId }),
    h('p', { id: lineId }, line),
  );
}

function viewItem(f) {
  return h(
    'li',
    { dataset: { id: f.id } },
    h('p', { class: 'line' },
      h('a', { href: `#/file/${f.id}` }, f.fileName),
      f.isPublic ? ' (public)' : null,
      `: ${plural(f.views, 'view')} in this period, ${f.allViews} in all.`),
    f.viewers.length
      ? h('ul', { class: 'viewers', 'aria-label': `People who opened ${f.fileName}` }, f.viewers.map((v) =>
        h('li', {}, `${person(v)}: ${plural(v.views, 'view')}, last on ${v.lastDay}`)))
      : null,
    f.lastViewTime ? h('p', { class: 'at' }, 'Last opened ', h('time', { datetime: f.lastViewTime }, when(f.lastViewTime))) : null,
  );
}
