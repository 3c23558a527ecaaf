// The trash (`#/trash/`): the account's trashed files, most recently trashed first
// (/select-trashed-files), each with the folder it was in; those selected are restored
// (/restore-files: each goes back to its folder, a deleted folder made again) or deleted forever
// (/delete-files, 100 a call), and the whole trash emptied (/purge-trashed-files). Deleting asks
// first, in the page.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';

export function trashView() {
  const status = h('p', { id: 'status', role: 'status' });
  const heading = h('h1', { id: 'trashTitle', tabindex: '-1' }, 'Trash');
  const rows = h('tbody', { id: 'trashed' });
  const actions = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'With the selected files' });
  const all = h('input', { type: 'checkbox', id: 'selectAll', 'aria-label': 'Select every file in the trash' });
  const selected = new Set();
  let trashed = [];
  let folders = new Map();
  let loaded = false;

  async function load(said) {
    try {
      const [files, collections] = await Promise.all([api.call('/select-trashed-files'), api.call('/select-collections')]);
      trashed = files;
      folders = new Map(collections.folders.map((f) => [f.id, f.path]));
      for (const id of [...selected]) if (!trashed.some((f) => f.id === id)) selected.delete(id);
      loaded = true;
      drawRows();
      drawActions();
      if (said) status.textContent = said;
    } catch (e) {
      say(status, e);
    }
  }

  /** Where it was: a file trashed with its folder keeps no folder (the record says only that it
   * is not in one), and restoring makes that folder again. */
  function where(file) {
    return folders.get(file.folderId) ?? '/ or a deleted folder';
  }

  function drawRows() {
    fill(
      rows,
      trashed.length
        ? trashed.map((file) =>
          h(
            'tr',
            { dataset: { id: file.id } },
            h('td', {}, h('input', {
              type: 'checkbox',
              'aria-label': `Select ${file.fileName}`,
              checked: selected.has(file.id),
              onchange: (event) => {
                if (event.target.checked) selected.add(file.id);
                else selected.delete(file.id);
                drawActions();
              },
            })),
            h('td', { class: 'name' }, file.fileName),
            h('td', { class: 'size' }, size(file.fileSize)),
            h('td', { class: 'time' }, when(file.trashTime)),
            h('td', { class: 'name' }, where(file)),
          ))
        : h('tr', {}, h('td', { colspan: '5', class: 'empty' }, 'The trash is empty.')),
    );
  }

  function drawActions() {
    const count = selected.size;
    all.checked = count > 0 && count === trashed.length;
    all.indeterminate = count > 0 && count < trashed.length;
    all.disabled = trashed.length === 0;
    fill(
      actions,
      h('span', { class: 'count' }, count ? `${count} selected` : 'Select files to restore or delete them'),
      h('button', { type: 'button', id: 'restore', disabled: count === 0, onclick: () => restore([...selected]) }, 'Restore'),
      h('button', { type: 'button', id: 'deleteForever', disabled: count === 0, onclick: (e) => deleting([...selected], e.target) }, 'Delete forever'),
      h('button', { type: 'button', id: 'emptyTrash', disabled: !loaded || trashed.length === 0, onclick: (e) => emptying(e.target) }, 'Empty the trash'),
    );
  }

  /** Asks `question` in the page before `run`; the asking button gets the focus back if kept. */
  function confirming(question, yes, run, from) {
    const keep = () => {
      drawActions();
      actions.querySelector(`#${from.id}`)?.focus();
    };
    const no = h('button', { type: 'button', id: 'confirmNo', onclick: keep }, 'Keep them');
    fill(
      actions,
      h('p', { class: 'confirm', id: 'confirmQuestion' }, question),
      h('button', { type: 'button', id: 'confirmYes', onclick: run }, yes),
      no,
    );
    no.focus();
  }

  /** After an action its button may be gone or disabled: the focus goes to the heading. */
  function refocus() {
    const now = document.activeElement;
    if (!now || now === document.body || !now.isConnected || now.disabled) heading.focus();
  }

  async function restore(ids) {
    try {
      const done = await api.call('/restore-files', ids.map((id) => ({ id })));
      selected.clear();
      await load(`Restored ${done.restored.length} file(s): each is back in its folder.`);
    } catch (e) {
      say(status, e);
    }
    refocus();
  }

  function deleting(ids, from) {
    confirming(`Delete ${ids.length} file(s) forever? This cannot be undone.`, 'Delete forever', async () => {
      try {
        let gone = 0;
        for (let i = 0; i < ids.length; i += 100) {
          const done = await api.call('/delete-files', ids.slice(i, i + 100).map((id) => ({ id })));
          gone += done.deleted.length;
        }
        selected.clear();
        await load(`Deleted ${gone} file(s) forever.`);
      } catch (e) {
        say(status, e);
        await load();
      }
      refocus();
    }, from);
  }

  function emptying(from) {
    confirming(`Delete everything in the trash (${trashed.length} file(s)) forever? This cannot be undone.`, 'Empty the trash', async () => {
      try {
        const done = await api.call('/purge-trashed-files');
        selected.clear();
        await load(`The trash is empty: ${done.deleted.length} file(s) deleted forever.`);
      } catch (e) {
        say(status, e);
        await load();
      }
      refocus();
    }, from);
  }

  all.addEventListener('change', () => {
    if (all.checked) for (const f of trashed) selected.add(f.id);
    else selected.clear();
    drawRows();
    drawActions();
  });

  drawActions();
  load();
  return h(
    'section',
    { class: 'trash' },
    heading,
    h('p', { class: 'hint' }, 'Files in the trash count toward your storage until deleted forever.'),
    actions,
    status,
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, 'Files in the trash'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, all),
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
        h('th', { scope: 'col' }, 'Trashed'), h('th', { scope: 'col' }, 'Was in'))),
      rows,
    ),
  );
}
