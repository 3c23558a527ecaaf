// A folder of the drive: where it sits (breadcrumbs), the folders in it, and its files, paged
// from /search-files as the list scrolls (a library of any size is never loaded whole);
// several selected at once are downloaded, linked, made public or private, moved to the trash,
// or given to one of the verbs of `VERBS` (move, copy, tag, rename, a playlist or gallery,
// share, unshare, zip) with the word it needs.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';
import { uploader } from './upload.js';
import { folderHref, folderTree } from './tree.js';

const PAGE = 100;
/** Pages kept in the list at once: as one more comes in at one end, one goes at the other, and
 * a spacer holds its place, so scrolling a library of any size keeps the page small. */
const KEPT = 5;

const list = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);

/** A collection of `kind` titled `title`: the account's one of that title, else a new one. */
async function collection(kind, title, ids) {
  const all = await api.call('/select-collections');
  const found = all[kind === 'gallery' ? 'galleries' : 'playlists'].find((c) => c.title === title);
  const label = kind === 'playlist' ? 'Playlist' : 'Gallery';
  if (!found) {
    await api.call(`/create-${kind}`, { title, fileIds: ids });
    return `${label} “${title}” made with the files it takes.`;
  }
  const added = await api.call(`/add-to-${kind}`, { [`${kind}Id`]: found.id, fileIds: ids });
  return `Added to ${label.toLowerCase()} “${title}”${added.skipped?.length ? ` (${added.skipped.length} it does not take)` : ''}.`;
}

/** What can be done to the selected files with one word: its label, what the word is, and the
 * call, answering what the page says after. */
const VERBS = {
  move: ['Move to folder', 'a folder path, like /Photos/2026', async (ids, v) => {
    await api.call('/move-files', { fileIds: ids, folder: v });
    return `Moved ${ids.length} file(s) to ${v}.`;
  }],
  copy: ['Copy to folder', 'a folder path', async (ids, v) => {
    const made = await api.call('/copy-files', { fileIds: ids, folder: v });
    return `Copied ${made.copies.length} file(s) to ${v}.`;
  }],
  tag: ['Tag', 'tags, comma-separated', async (ids, v) => {
    await api.call('/tag-files', { fileIds: ids, tags: list(v) });
    return `Tagged ${ids.length} file(s) ${list(v).join(', ')}.`;
  }],
  untag: ['Take tags off', 'tags, comma-separated', async (ids, v) => {
    await api.call('/tag-files', { fileIds: ids, tags: list(v), action: 'remove' });
    return `Took ${list(v).join(', ')} off ${ids.length} file(s).`;
  }],
  rename: ['Rename', 'the new name (one file selected)', async (ids, v) => {
    if (ids.length !== 1) throw new Error('Select one file to rename it.');
    const file = await api.call('/rename-file', { fileId: ids[0], fileName: v });
    return `Renamed to ${file.fileName}.`;
  }],
  playlist: ['Add to playlist', 'a playlist’s title (a new one is made)', (ids, v) => collection('playlist', v, ids)],
  gallery: ['Add to gallery', 'a gallery’s title (a new one is made)', (ids, v) => collection('gallery', v, ids)],
  share: ['Share with', 'handles, comma-separated', async (ids, v) => {
    await api.call('/share-files', { fileIds: ids, handles: list(v) });
    return `Shared ${ids.length} file(s) with ${list(v).join(', ')}.`;
  }],
  unshare: ['Stop sharing with', 'handles, comma-separated', async (ids, v) => {
    await api.call('/unshare-files', { fileIds: ids, handles: list(v) });
    return `Stopped sharing ${ids.length} file(s) with ${list(v).join(', ')}.`;
  }],
  zip: ['Zip as', 'the archive’s name', async (ids, v) => {
    await api.call('/create-archive-request', { fileIds: ids, title: v });
    return `Zipping ${ids.length} file(s): ${v}.zip lands beside the first (see Jobs).`;
  }],
};

export function filesView(path) {
  const folder = '/' + path.split('/').filter(Boolean).join('/');
  const status = h('p', { id: 'status', role: 'status' });
  const folders = h('ul', { class: 'folders', 'aria-label': 'Folders here' });
  const tree = h('details', { class: 'card', id: 'treeBox' });
  // A list (a table) or a grid of cards with each file's artwork: a picture's thumbnail, a
  // video's poster, a track's cover, made once by the farm when the file came in.
  let grid = localStorage.getItem('drive.layout') === 'grid';
  let rows = null;
  let spacer = null;
  const shown = h('div', { id: 'shown' });
  const layout = h('button', { type: 'button', id: 'layout', 'aria-pressed': String(grid), onclick: () => {
    grid = !grid;
    localStorage.setItem('drive.layout', grid ? 'grid' : 'list');
    layout.setAttribute('aria-pressed', String(grid));
    reload();
  } }, 'Grid');
  function holder() {
    spacer = grid ? h('li', { class: 'spacer', 'aria-hidden': 'true', hidden: true })
      : h('tr', { class: 'spacer', 'aria-hidden': 'true', hidden: true }, h('td', { colspan: '5' }));
    rows = grid ? h('ul', { id: 'files', class: 'grid' }, spacer) : h('tbody', { id: 'files' }, spacer);
    fill(shown, grid ? rows : h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, `Files in ${folder}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Selected')),
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
        h('th', { scope: 'col' }, 'Modified'), h('th', { scope: 'col' }, 'Access'))),
      rows,
    ));
  }
  holder();
  const more = h('button', { type: 'button', id: 'more', hidden: true }, 'Show more');
  const selected = new Set();
  const verb = h('select', { id: 'verb', 'aria-label': 'What to do with the selected files' },
    Object.entries(VERBS).map(([name, [label]]) => h('option', { value: name }, label)));
  const word = h('input', { id: 'verbWord', 'aria-label': VERBS.move[1], placeholder: VERBS.move[1] });
  verb.addEventListener('change', () => {
    word.placeholder = VERBS[verb.value][1];
    word.setAttribute('aria-label', VERBS[verb.value][1]);
  });
  const links = h('ul', { id: 'links', class: 'links' });
  const actions = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'With the selected files' });
  const sort = h(
    'select',
    { id: 'sort', 'aria-label': 'Sort by' },
    ['name', 'newest', 'oldest', 'largest', 'smallest'].map((s) => h('option', { value: s }, `Sort: ${s}`)),
  );
  // `listed`: the pages in the list, first to last, each with its number and its rows; `below`
  // is the number of the page under them, `cursors[n]` where page n starts (each page read
  // straight off the index, however deep), and `spacer` stands for the pages let go above them.
  let cursors = [undefined];
  let below = 0;
  let listed = [];
  let loading = false;

  /** Asks for page `n`; its rows, and whether another follows. */
  async function fetchPage(n) {
    const found = await api.call('/search-files', {
      folder, subfolders: false, sort: sort.value, limit: PAGE, cursor: cursors[n],
    });
    if (found.nextCursor !== null) cursors[n + 1] = found.nextCursor;
    return { n, nodes: found.files.map(row), last: found.nextCursor === null };
  }

  /** The height the rows of a page take in the list. */
  const height = ({ nodes }) => nodes.length
    ? nodes.at(-1).getBoundingClientRect().bottom - nodes[0].getBoundingClientRect().top : 0;

  async function page() {
    if (loading) return;
    loading = true;
    try {
      const next = await fetchPage(below);
      rows.append(...next.nodes);
      listed.push(next);
      below = next.n + 1;
      more.hidden = next.last;
      if (next.n === 0 && next.nodes.length === 0) {
        rows.append(grid ? h('li', { class: 'empty' }, 'No files here yet.') : h('tr', {}, h('td', { colspan: '5', class: 'empty' }, 'No files here yet.')));
      }
      if (listed.length > KEPT) {
        const gone = listed.shift();
        spacer.style.height = `${spacer.offsetHeight + height(gone)}px`;
        spacer.hidden = false;
        for (const node of gone.nodes) node.remove();
      }
      // Observed afresh, each end of the list says once more whether it is in sight: still in
      // sight (a tall window) the next page comes, as it would not from an observer that only
      // speaks when an end comes into sight.
      end.unobserve(more);
      end.observe(more);
    } catch (e) {
      say(status, e);
    } finally {
      loading = false;
    }
  }

  /** The page before the first one in the list, as the spacer above them comes into sight. */
  async function pageBefore() {
    if (loading || !listed.length || listed[0].n === 0) return;
    loading = true;
    try {
      const before = await fetchPage(listed[0].n - 1);
      spacer.after(...before.nodes);
      listed.unshift(before);
      const left = spacer.offsetHeight - height(before);
      spacer.style.height = `${Math.max(0, left)}px`;
      spacer.hidden = before.n === 0;
      if (listed.length > KEPT) {
        const gone = listed.pop();
        for (const node of gone.nodes) node.remove();
        below = gone.n;
        more.hidden = false;
      }
      start.unobserve(spacer);
      start.observe(spacer);
    } catch (e) {
      say(status, e);
    } finally {
      loading = false;
    }
  }

  function row(file) {
    const box = h('input', {
      type: 'checkbox', 'aria-label': `Select ${file.fileName}`,
      checked: selected.has(file.id),
      onchange: (event) => {
        if (event.target.checked) selected.add(file.id);
        else selected.delete(file.id);
        drawActions();
      },
    });
    if (grid) {
      return h(
        'li',
        { dataset: { id: file.id }, class: 'card' },
        h('a', { href: `#/file/${file.id}`, class: 'thumb', tabindex: '-1', 'aria-hidden': 'true' }, file.artworkUrl
          ? h('img', { src: file.artworkUrl, alt: '', loading: 'lazy' })
          : h('span', { class: 'kind' }, file.type)),
        h('label', { class: 'check' }, box, h('a', { href: `#/file/${file.id}`, class: 'name' }, file.fileName)),
        h('span', { class: 'hint' }, size(file.fileSize)),
      );
    }
    return h(
      'tr',
      { dataset: { id: file.id } },
      h('td', {}, box),
      h('td', { class: 'name' }, h('a', { href: `#/file/${file.id}` }, file.fileName)),
      h('td', { class: 'size' }, size(file.fileSize)),
      h('td', { class: 'time' }, when(file.modifiedTime ?? file.insertTime)),
      h('td', {}, file.isPublic ? 'Public' : 'Private'),
    );
  }

  function drawActions() {
    const count = selected.size;
    const act = (label, run) =>
      h('button', { type: 'button', disabled: count === 0, onclick: () => run([...selected]) }, label);
    fill(
      actions,
      h('span', { class: 'count' }, count ? `${count} selected` : 'Select files to act on them'),
      act('Download', download),
      act('Make public or private', toggle),
      act('Move to trash', trash),
      act('Copy links', copyLinks),
      act('Run a job', (ids) => { location.hash = `#/jobs/?files=${ids.join(',')}`; }),
      verb,
      word,
      act('Apply', apply),
    );
  }

  async function apply(ids) {
    if (!word.value.trim()) {
      say(status, { message: `Say ${VERBS[verb.value][1]}.` });
      word.focus();
      return;
    }
    try {
      const said = await VERBS[verb.value][2](ids, word.value.trim());
      word.value = '';
      if (['move', 'copy', 'rename'].includes(verb.value)) reload(said);
      else status.textContent = said;
    } catch (e) {
      say(status, e);
    }
  }

  /** Each file's link (a public one's permanent link, a private one's for 6 hours), listed and
   * put on the clipboard where the browser allows it. */
  async function copyLinks(ids) {
    try {
      const made = [];
      for (const id of ids) made.push(await api.call('/generate-download-url', { id }));
      fill(links, made.map((f) => h('li', {}, `${f.fileName}: `, h('a', { href: f.downloadUrl, rel: 'noopener' }, f.downloadUrl))));
      const copied = await navigator.clipboard?.writeText(made.map((f) => f.downloadUrl).join('\n')).then(() => true, () => false);
      status.textContent = `${made.length} link(s) ${copied ? 'copied' : 'below'}.`;
    } catch (e) {
      say(status, e);
    }
  }

  async function download(ids) {
    for (const id of ids) {
      const file = await api.call('/generate-download-url', { id });
      const link = h('a', { href: file.downloadUrl, download: file.fileName, rel: 'noopener' });
      link.click();
    }
  }

  async function toggle(ids) {
    try {
      for (const id of ids) await api.call('/toggle-file-access', { id });
      reload(`${ids.length} changed`);
    } catch (e) {
      say(status, e);
    }
  }

  async function trash(ids) {
    try {
      const answer = await api.call('/trash-files', ids.map((id) => ({ id })));
      reload(`${answer.trashed.length} moved to the trash`);
    } catch (e) {
      say(status, e);
    }
  }

  function reload(message) {
    selected.clear();
    cursors = [undefined];
    below = 0;
    listed = [];
    start.disconnect();
    holder();
    start.observe(spacer);
    drawActions();
    status.textContent = message ?? '';
    page();
    drawFolders().catch((e) => say(status, e));
  }

  async function drawFolders() {
    const { folders: all } = await api.call('/select-collections');
    const here = folder === '/' ? '/' : `${folder}/`;
    const inside = all.filter((f) => f.path.startsWith(here) && f.path !== here && f.path.slice(here.length).split('/').length === 2);
    fill(
      folders,
      inside.map((f) =>
        h('li', {}, h('a', { href: folderHref(f.path), class: 'folder' }, f.path.slice(here.length, -1))),
      ),
    );
    fill(tree, h('summary', {}, 'All folders'), folderTree(all.map((f) => f.path), folder));
  }

  sort.addEventListener('change', () => reload());
  more.addEventListener('click', page);
  // The next page comes as the end of the list scrolls into sight.
  const end = new IntersectionObserver((seen) => seen.some((s) => s.isIntersecting) && !more.hidden && page());
  end.observe(more);
  // And the one before as the place of those let go above comes back into sight.
  const start = new IntersectionObserver((seen) => seen.some((s) => s.isIntersecting) && pageBefore());
  start.observe(spacer);
  drawActions();
  page();
  drawFolders().catch((e) => say(status, e));

  return h(
    'section',
    { class: 'files' },
    breadcrumbs(folder),
    h('div', { class: 'tools' }, uploader(folder, () => reload('Uploaded')), sort, layout),
    tree,
    folders,
    actions,
    status,
    links,
    shown,
    more,
  );
}

function breadcrumbs(folder) {
  const parts = folder.split('/').filter(Boolean);
  const crumbs = [h('li', {}, h('a', { href: '#/files/' }, 'Drive'))];
  parts.forEach((part, i) => {
    const here = i === parts.length - 1;
    crumbs.push(h('li', {}, h('a', { href: folderHref(parts.slice(0, i + 1).join('/')), 'aria-current': here ? 'page' : null }, part)));
  });
  return h('nav', { 'aria-label': 'Breadcrumbs' }, h('h1', { class: 'visually-hidden' }, folder === '/' ? 'Drive' : parts.at(-1)), h('ol', { class: 'crumbs' }, crumbs));
}
