// Playlists and galleries. `#/collections/` lists the account's (/select-collections) and makes
// a new one (/create-playlist, /create-gallery); `#/collections/playlist/ID` and
// `#/collections/gallery/ID` show one: its files in order, each linking to its preview, moved by
// dragging or with its Move up and Move down buttons (each move saved at once with
// /reorder-playlist or /reorder-gallery), taken out, found and added; a gallery's images
// featured or not (featured ones show first, and a move keeps to its part); a playlist's cover
// (/set-cover); the collection renamed, zipped (/create-archive-request) or deleted after a
// confirm step (its files stay in the drive).
//
// A collection's files in order come with it from /select-collections (`fileIds`); their names
// from /search-files given those ids (200 a call), the account's own files and those shared
// with it.

import * as api from './api.js';
import { h, fill, say } from './dom.js';

const KINDS = {
  playlist: { label: 'Playlist', word: 'playlist', key: 'playlistId', types: ['Audio', 'Video'], takes: 'audio and video' },
  gallery: { label: 'Gallery', word: 'gallery', key: 'galleryId', types: ['Image'], takes: 'pictures' },
};

/** What a dragged item carries: its file's id. */
const DRAGGED = 'application/x-drive-file-id';

const files = (n) => `${n} file${n === 1 ? '' : 's'}`;

/** A file name for the archive from a title: no slashes or control characters. */
function archiveName(title) {
  const name = title.replace(/[/\\\u0000-\u001f\u007f]/g, '-').trim();
  return name && name !== '.' && name !== '..' ? name : 'Archive';
}

export function collectionsView(rest = []) {
  const [kind, id] = rest;
  if (KINDS[kind] && id) return collectionView(kind, decodeURIComponent(id));
  return listView();
}

function listView() {
  const status = h('p', { id: 'status', role: 'status' });
  const playlists = h('ul', { id: 'playlists', class: 'tasks', 'aria-labelledby': 'playlistsTitle' });
  const galleries = h('ul', { id: 'galleries', class: 'tasks', 'aria-labelledby': 'galleriesTitle' });

  function drawList(list, kind, all, none) {
    fill(
      list,
      all.length
        ? all.map((c) =>
          h(
            'li',
            { dataset: { id: c.id } },
            h('a', { href: `#/collections/${kind}/${c.id}` }, c.title),
            h('span', { class: 'where' }, ` · ${files(c.fileCount)} · ${c.isPublic ? 'public' : 'private'}`),
          ))
        : h('li', { class: 'empty' }, none),
    );
  }

  async function draw() {
    try {
      const all = await api.call('/select-collections');
      drawList(playlists, 'playlist', all.playlists, 'No playlists yet.');
      drawList(galleries, 'gallery', all.galleries, 'No galleries yet.');
    } catch (e) {
      say(status, e);
    }
  }

  const kind = h(
    'select',
    { id: 'newKind' },
    h('option', { value: 'playlist' }, 'Playlist (audio and video)'),
    h('option', { value: 'gallery' }, 'Gallery (pictures)'),
  );
  const title = h('input', { id: 'newTitle', required: true, maxlength: '200', autocomplete: 'off' });
  const isPublic = h('input', { type: 'checkbox', id: 'newPublic' });
  const make = h(
    'form',
    { class: 'card', id: 'newCollection', 'aria-labelledby': 'newTitleHeading' },
    h('h2', { id: 'newTitleHeading' }, 'Make one'),
    h('div', { class: 'field' }, h('label', { for: 'newKind' }, 'Kind'), kind),
    h('div', { class: 'field' }, h('label', { for: 'newTitle' }, 'Title'), title),
    h('p', {}, h('label', { class: 'check' }, isPublic, 'Public: a public one takes only your own files')),
    h('button', { type: 'submit', class: 'primary', id: 'makeCollection' }, 'Make it'),
  );
  make.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const made = await api.call(`/create-${kind.value}`, { title: title.value, isPublic: isPublic.checked });
      location.hash = `#/collections/${kind.value}/${made.id}`;
    } catch (e) {
      say(status, e);
    }
  });

  draw();
  return h(
    'section',
    { class: 'collections' },
    h('h1', {}, 'Playlists and galleries'),
    h('p', { class: 'hint' }, 'To put files in one, select them under Files and choose Add to playlist or Add to gallery, or open it here and find them.'),
    status,
    h('h2', { id: 'playlistsTitle' }, 'Playlists'),
    playlists,
    h('h2', { id: 'galleriesTitle' }, 'Galleries'),
    galleries,
    make,
  );
}

function collectionView(kind, id) {
  const K = KINDS[kind];
  const status = h('p', { id: 'status', role: 'status' });
  const title = h('h1', { id: 'collectionTitle' }, 'Opening…');
  const facts = h('p', { class: 'where', id: 'collectionFacts' });
  const itemsTitle = h('h2', { id: 'itemsTitle', tabindex: '-1' }, 'Files, in order');
  const items = h('ol', { id: 'items', class: 'order', 'aria-labelledby': 'itemsTitle' });
  const names = new Map();
  let shown = null;
  let order = [];
  let featured = 0;
  let dragged = null;
  let busy = false;

  const nameOf = (fileId) => names.get(fileId) ?? 'a file you cannot see now';

  /** The collection as it stands, and a name for each of its files. */
  async function read() {
    const all = await api.call('/select-collections');
    shown = all[`${kind === 'playlist' ? 'playlists' : 'galleries'}`].find((c) => c.id === id);
    if (!shown) throw new Error(`You have no ${K.word} with that id.`);
    order = shown.fileIds;
    featured = shown.featuredCount ?? 0;
    const wanted = order.filter((f) => !names.has(f));
    for (let i = 0; i < wanted.length; i += 200) {
      const fileIds = wanted.slice(i, i + 200);
      const found = await api.call('/search-files', { fileIds, types: K.types, shared: 'include', limit: 200 });
      for (const f of found.files) names.set(f.id, f.fileName);
    }
    // Not among them (trashed, or no longer shared): not looked for again on the next read.
    for (const f of wanted) if (!names.has(f)) names.set(f, null);
  }

  function draw(focus) {
    title.textContent = shown.title;
    facts.textContent = `${K.label} · ${files(order.length)}${featured ? ` (${featured} featured, shown first)` : ''} · ${shown.isPublic ? 'public' : 'private'}`;
    fill(items, order.length ? order.map(item) : h('li', { class: 'empty' }, `Nothing in it yet: find ${K.takes} below to add.`));
    if (!focus) return;
    const within = items.querySelector(`li[data-id="${CSS.escape(focus.id)}"]`);
    const again = within?.querySelector(`button[data-action="${focus.action}"]:not([disabled])`)
      ?? within?.querySelector('button[data-action="up"]:not([disabled]), button[data-action="down"]:not([disabled])');
    (again ?? itemsTitle).focus();
  }

  function item(fileId, index) {
    const name = nameOf(fileId);
    const isFeatured = index < featured;
    const first = isFeatured ? 0 : featured;
    const last = isFeatured ? featured - 1 : order.length - 1;
    const button = (action, label, disabled, run) =>
      h('button', { type: 'button', dataset: { action }, 'aria-label': `${label}: ${name}`, disabled, onclick: run }, label);
    const li = h(
      'li',
      { draggable: 'true', dataset: { id: fileId }, class: isFeatured ? 'featured' : null },
      h(
        'div',
        { class: 'row' },
        h('a', { class: 'name', href: `#/file/${fileId}`, draggable: 'false' }, name),
        isFeatured && h('span', { class: 'badge' }, 'Featured'),
        h(
          'span',
          { class: 'moves' },
          button('up', 'Move up', index === first, () => move(fileId, index - 1, 'up')),
          button('down', 'Move down', index === last, () => move(fileId, index + 1, 'down')),
          kind === 'gallery' && button('feature', isFeatured ? 'Stop featuring' : 'Feature', false, () => feature(fileId)),
          button('remove', 'Remove', false, () => remove(fileId)),
        ),
      ),
    );
    // Dragged onto another item, it takes that item's place (the others shift by one).
    li.addEventListener('dragstart', (event) => {
      dragged = fileId;
      event.dataTransfer.setData(DRAGGED, fileId);
      event.dataTransfer.effectAllowed = 'move';
      li.classList.add('dragging');
    });
    li.addEventListener('dragover', (event) => {
      if (!dragged && !event.dataTransfer.types.includes(DRAGGED)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      li.classList.add('over');
    });
    li.addEventListener('dragleave', () => li.classList.remove('over'));
    li.addEventListener('drop', (event) => {
      event.preventDefault();
      li.classList.remove('over');
      const from = event.dataTransfer.getData(DRAGGED) || dragged;
      dragged = null;
      if (from && from !== fileId) move(from, order.indexOf(fileId), 'drag');
    });
    li.addEventListener('dragend', () => {
      dragged = null;
      li.classList.remove('dragging');
    });
    return li;
  }

  /** Saves a new order (`body` for the reorder route), reads it back and says `said()`. */
  async function save(body, said, focus) {
    if (busy) return;
    busy = true;
    try {
      await api.call(`/reorder-${kind}`, { [K.key]: id, ...body });
      await read();
      draw(focus);
      status.textContent = said();
    } catch (e) {
      say(status, e);
      await read().then(() => draw(), () => {});
    } finally {
      busy = false;
    }
  }

  function move(fileId, to, action) {
    const from = order.indexOf(fileId);
    if (from < 0 || to < 0 || to >= order.length || from === to) return;
    if ((from < featured) !== (to < featured)) {
      say(status, { message: 'Featured images stay before the others: feature it, or stop featuring it, to move it there.' });
      return;
    }
    const next = order.filter((f) => f !== fileId);
    next.splice(to, 0, fileId);
    // Only the places up to the farthest one moved change: those are named, the rest follow.
    const named = next.slice(0, Math.max(from, to) + 1);
    save({ fileIds: named }, () => `Moved ${nameOf(fileId)} to place ${order.indexOf(fileId) + 1} of ${order.length}.`, { id: fileId, action });
  }

  function feature(fileId) {
    const now = new Set(order.slice(0, featured));
    const was = now.has(fileId);
    if (was) now.delete(fileId);
    else now.add(fileId);
    const named = order.slice(0, Math.max(order.indexOf(fileId), featured - 1) + 1);
    save(
      { fileIds: named, featuredIds: named.filter((f) => now.has(f)) },
      () => (was ? `${nameOf(fileId)} is not featured now.` : `${nameOf(fileId)} is featured: it shows among the first.`),
      { id: fileId, action: 'feature' },
    );
  }

  async function remove(fileId) {
    if (busy) return;
    busy = true;
    try {
      await api.call(`/remove-from-${kind}`, { [K.key]: id, fileIds: [fileId] });
      const name = nameOf(fileId);
      await read();
      draw();
      itemsTitle.focus();
      status.textContent = `Took ${name} out of the ${K.word}; it stays in your drive.`;
    } catch (e) {
      say(status, e);
    } finally {
      busy = false;
    }
  }

  // Finding files to add.
  const findText = h('input', { id: 'findText', type: 'search', autocomplete: 'off' });
  const found = h('ul', { id: 'found', class: 'tasks', 'aria-label': 'Files found' });
  const finder = h(
    'form',
    { class: 'card', id: 'finder', 'aria-labelledby': 'finderTitle' },
    h('h2', { id: 'finderTitle' }, 'Add files'),
    h('div', { class: 'field' }, h('label', { for: 'findText' }, `Find ${K.takes} by name`), findText),
    h('button', { type: 'submit', id: 'findButton' }, 'Find'),
    found,
  );
  finder.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const answer = await api.call('/search-files', { text: findText.value, types: K.types, shared: 'include', limit: 20 });
      fill(
        found,
        answer.files.length
          ? answer.files.map((f) =>
            h(
              'li',
              { dataset: { id: f.id } },
              h('span', { class: 'name' }, f.fileName, ' '),
              order.includes(f.id)
                ? h('span', { class: 'where' }, '(in it)')
                : h('button', { type: 'button', 'aria-label': `Add: ${f.fileName}`, onclick: (e) => add(f, e.target) }, 'Add'),
            ))
          : h('li', { class: 'empty' }, `No ${K.takes} of that name.`),
      );
    } catch (e) {
      say(status, e);
    }
  });

  async function add(file, button) {
    try {
      const now = await api.call(`/add-to-${kind}`, { [K.key]: id, fileIds: [file.id] });
      if (now.skipped.length) {
        say(status, { message: `The ${K.word} does not take ${file.fileName}${now.isPublic ? ': a public one takes only your own files' : ''}.` });
        return;
      }
      names.set(file.id, file.fileName);
      await read();
      draw();
      button.replaceWith(h('span', { class: 'where' }, '(in it)'));
      findText.focus();
      status.textContent = `Added ${file.fileName}.`;
    } catch (e) {
      say(status, e);
    }
  }

  // Renaming.
  const titleInput = h('input', { id: 'title', required: true, maxlength: '200', autocomplete: 'off' });
  const description = kind === 'gallery' ? h('textarea', { id: 'description', rows: '3', maxlength: '2000' }) : null;
  const rename = h(
    'form',
    { class: 'card', id: 'rename', 'aria-labelledby': 'renameTitle' },
    h('h2', { id: 'renameTitle' }, 'Rename'),
    h('div', { class: 'field' }, h('label', { for: 'title' }, 'Title'), titleInput),
    description && h('div', { class: 'field' }, h('label', { for: 'description' }, 'Description'), description),
    h('button', { type: 'submit', id: 'renameButton' }, 'Save the title'),
  );
  rename.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const body = { [K.key]: id, title: titleInput.value };
      if (description) body.description = description.value;
      const renamed = await api.call(`/rename-${kind}`, body);
      shown.title = renamed.title;
      title.textContent = renamed.title;
      status.textContent = `Renamed to “${renamed.title}”.`;
    } catch (e) {
      say(status, e);
    }
  });

  // Zipping.
  const zipName = h('input', { id: 'zipName', maxlength: '200', autocomplete: 'off', 'aria-describedby': 'zipHint' });
  const zip = h(
    'form',
    { class: 'card', id: 'zip', 'aria-labelledby': 'zipTitle' },
    h('h2', { id: 'zipTitle' }, 'Zip'),
    h('div', { class: 'field' }, h('label', { for: 'zipName' }, 'Name of the archive'), zipName),
    h('p', { class: 'hint', id: 'zipHint' }, 'Left empty, the title; .zip is added. The archive lands beside the first file.'),
    h('button', { type: 'submit', id: 'zipButton' }, 'Zip it'),
  );
  zip.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = zipName.value.trim() || archiveName(shown?.title ?? '');
    try {
      await api.call('/create-archive-request', { [K.key]: id, title: name });
      status.textContent = `Zipping “${shown.title}”: ${name}.zip lands beside its first file (see Jobs).`;
    } catch (e) {
      say(status, e);
    }
  });

  // A playlist's cover: one of the account's newest pictures, or none.
  const cover = h('select', { id: 'cover' }, h('option', { value: '' }, 'No cover'));
  const covering = kind !== 'playlist' ? null : h(
    'form',
    { class: 'card', id: 'covering', 'aria-labelledby': 'coverTitle' },
    h('h2', { id: 'coverTitle' }, 'Cover'),
    h('div', { class: 'field' }, h('label', { for: 'cover' }, 'Cover picture'), cover),
    h('button', { type: 'submit', id: 'coverButton' }, 'Set the cover'),
  );
  async function drawCover() {
    const [all, pictures] = await Promise.all([
      api.call('/select-collections'),
      api.call('/search-files', { types: ['Image'], sort: 'newest', limit: 100 }),
    ]);
    const now = all.playlists.find((p) => p.id === id)?.coverId ?? '';
    fill(
      cover,
      h('option', { value: '' }, 'No cover'),
      pictures.files.map((f) => h('option', { value: f.id }, f.fileName)),
      now && !pictures.files.some((f) => f.id === now) ? h('option', { value: now }, 'The cover it has (an older picture)') : null,
    );
    cover.value = now;
  }
  covering?.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.call('/set-cover', { playlistId: id, imageId: cover.value || null });
      status.textContent = cover.value ? `The cover is ${cover.selectedOptions[0].textContent}.` : 'The cover is taken off.';
    } catch (e) {
      say(status, e);
    }
  });

  // Deleting, after a confirm step.
  const ending = h('div', { class: 'tools', id: 'ending' });
  function endButtons() {
    fill(ending, h('button', { type: 'button', id: 'deleteCollection', onclick: confirming }, `Delete this ${K.word}`));
  }
  function confirming() {
    const keep = h('button', { type: 'button', id: 'confirmNo', onclick: () => { endButtons(); ending.querySelector('button').focus(); } }, 'Keep it');
    fill(
      ending,
      h('p', { class: 'confirm' }, `Delete the ${K.word} “${shown?.title ?? ''}”? Its files stay in your drive.`),
      h('button', { type: 'button', id: 'confirmYes', onclick: destroy }, 'Delete it'),
      keep,
    );
    keep.focus();
  }
  async function destroy() {
    try {
      await api.call(`/delete-${kind}`, { [K.key]: id });
      location.hash = '#/collections/';
    } catch (e) {
      say(status, e);
      endButtons();
    }
  }
  endButtons();

  read().then(
    () => {
      draw();
      titleInput.value = shown.title;
      if (description) description.value = shown.description ?? '';
    },
    (e) => {
      title.textContent = K.label;
      say(status, e);
    },
  );
  if (covering) drawCover().catch((e) => say(status, e));

  return h(
    'section',
    { class: 'collection' },
    h('nav', { 'aria-label': 'Breadcrumbs' }, h('ol', { class: 'crumbs' }, h('li', {}, h('a', { href: '#/collections/' }, 'Playlists and galleries')))),
    title,
    facts,
    status,
    itemsTitle,
    h('p', { class: 'hint', id: 'orderHint' }, 'Drag a file onto another to move it there, or use its Move up and Move down buttons. Each move is saved at once.'),
    items,
    finder,
    rename,
    covering,
    zip,
    h('section', { class: 'card', 'aria-labelledby': 'deleteTitle' }, h('h2', { id: 'deleteTitle' }, 'Delete'), ending),
  );
}
