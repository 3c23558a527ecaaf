// A folder of the drive: where it sits (breadcrumbs), the folders in it, and its files, paged
// from /search-files as the list scrolls (a library of any size is never loaded whole);
// several selected at once are downloaded, made public or private, or moved to the trash.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';
import { uploader } from './upload.js';

const PAGE = 100;

export function filesView(path) {
  const folder = '/' + path.split('/').filter(Boolean).join('/');
  const status = h('p', { id: 'status', role: 'status' });
  const folders = h('ul', { class: 'folders', 'aria-label': 'Folders here' });
  const rows = h('tbody', { id: 'files' });
  const more = h('button', { type: 'button', id: 'more', hidden: true }, 'Show more');
  const selected = new Set();
  const shareWith = h('input', { id: 'shareWith', 'aria-label': 'People to share with: handles, comma-separated', placeholder: 'handles, comma-separated' });
  const actions = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'With the selected files' });
  const sort = h(
    'select',
    { id: 'sort', 'aria-label': 'Sort by' },
    ['name', 'newest', 'oldest', 'largest', 'smallest'].map((s) => h('option', { value: s }, `Sort: ${s}`)),
  );
  let offset = 0;
  let loading = false;

  async function page() {
    if (loading) return;
    loading = true;
    try {
      const found = await api.call('/search-files', {
        folder, subfolders: false, sort: sort.value, limit: PAGE, offset,
      });
      for (const file of found.files) rows.append(row(file));
      const first = offset === 0;
      offset = found.nextOffset ?? offset + found.files.length;
      more.hidden = found.nextOffset === null;
      if (first && found.files.length === 0) rows.append(h('tr', {}, h('td', { colspan: '5', class: 'empty' }, 'No files here yet.')));
    } catch (e) {
      say(status, e);
    } finally {
      loading = false;
    }
  }

  function row(file) {
    const box = h('input', {
      type: 'checkbox', 'aria-label': `Select ${file.fileName}`,
      onchange: (event) => {
        if (event.target.checked) selected.add(file.id);
        else selected.delete(file.id);
        drawActions();
      },
    });
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
      act('Run a job', (ids) => { location.hash = `#/jobs/?files=${ids.join(',')}`; }),
      shareWith,
      act('Share', share),
    );
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

  async function share(ids) {
    const handles = shareWith.value.split(',').map((s) => s.trim()).filter(Boolean);
    if (!handles.length) {
      say(status, { message: 'Say with whom: their handles, comma-separated.' });
      shareWith.focus();
      return;
    }
    try {
      await api.call('/share-files', { fileIds: ids, handles });
      status.textContent = `Shared ${ids.length} file(s) with ${handles.join(', ')}.`;
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
    offset = 0;
    rows.replaceChildren();
    drawActions();
    status.textContent = message ?? '';
    page();
  }

  async function drawFolders() {
    const { folders: all } = await api.call('/select-collections');
    const here = folder === '/' ? '/' : `${folder}/`;
    const inside = all.filter((f) => f.path.startsWith(here) && f.path !== here && f.path.slice(here.length).split('/').length === 2);
    fill(
      folders,
      inside.map((f) =>
        h('li', {}, h('a', { href: `#/files${f.path.replace(/\/$/, '')}`, class: 'folder' }, f.path.slice(here.length, -1))),
      ),
    );
  }

  sort.addEventListener('change', () => reload());
  more.addEventListener('click', page);
  // The next page comes as the end of the list scrolls into sight.
  new IntersectionObserver((seen) => seen.some((s) => s.isIntersecting) && !more.hidden && page()).observe(more);
  drawActions();
  page();
  drawFolders().catch((e) => say(status, e));

  return h(
    'section',
    { class: 'files' },
    breadcrumbs(folder),
    h('div', { class: 'tools' }, uploader(folder, () => reload('Uploaded')), sort),
    folders,
    actions,
    status,
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, `Files in ${folder}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Selected')),
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
        h('th', { scope: 'col' }, 'Modified'), h('th', { scope: 'col' }, 'Access'))),
      rows,
    ),
    more,
  );
}

function breadcrumbs(folder) {
  const parts = folder.split('/').filter(Boolean);
  const crumbs = [h('li', {}, h('a', { href: '#/files/' }, 'Drive'))];
  parts.forEach((part, i) => {
    const here = i === parts.length - 1;
    crumbs.push(h('li', {}, h('a', { href: `#/files/${parts.slice(0, i + 1).join('/')}`, 'aria-current': here ? 'page' : null }, part)));
  });
  return h('nav', { 'aria-label': 'Breadcrumbs' }, h('h1', { class: 'visually-hidden' }, folder === '/' ? 'Drive' : parts.at(-1)), h('ol', { class: 'crumbs' }, crumbs));
}
