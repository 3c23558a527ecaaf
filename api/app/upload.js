// Uploading: files picked or dropped, whole folders too, straight to the store (a form up to
// 64 MiB, parts above), with progress per file and overall. The storage left is checked first.
// A file's object key comes from its name, size and modified time, so a file stored already is
// found by `/insert-file` and not sent again, and a large one interrupted (a reload, a lost
// connection) resumes its parts when it is picked again.

import * as api from './api.js';
import { h, fill, size } from './dom.js';
import { sendForm, sendParts } from './store.js';
import { byExtension, other } from './kinds.js';

const FORM_LIMIT = 64 * 1024 * 1024;
const INTERRUPTED = 'drive.uploads';

export function uploader(folder, uploaded) {
  const list = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  const overall = h('progress', { id: 'overall', max: '1', value: '0', 'aria-label': 'All uploads' });
  const status = h('p', { id: 'uploadStatus', role: 'status' });
  const pick = h('input', { type: 'file', id: 'pickFiles', multiple: true, class: 'visually-hidden' });
  const pickFolder = h('input', { type: 'file', id: 'pickFolder', webkitdirectory: true, class: 'visually-hidden' });
  // Each input is emptied once read, so the same files picked again are a new pick.
  pick.addEventListener('change', () => {
    const items = [...pick.files].map((file) => ({ file, path: '' }));
    pick.value = '';
    start(items);
  });
  pickFolder.addEventListener('change', () => {
    const items = [...pickFolder.files].map((file) => ({
      file,
      path: file.webkitRelativePath.split('/').slice(0, -1).join('/'),
    }));
    pickFolder.value = '';
    start(items);
  });

  const zone = h(
    'div',
    { class: 'drop', id: 'dropZone' },
    h('label', { for: 'pickFiles', class: 'button' }, 'Upload files'),
    pick,
    h('label', { for: 'pickFolder', class: 'button' }, 'Upload a folder'),
    pickFolder,
    h('span', { class: 'hint' }, 'or drop them here'),
    overall,
    status,
    list,
  );
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', async (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    start(await dropped(event.dataTransfer));
  });

  const interrupted = JSON.parse(localStorage.getItem(INTERRUPTED) ?? '[]');
  if (interrupted.length) {
    status.textContent = `${interrupted.length} upload(s) did not finish (${interrupted.map((u) => u.name).join(', ')}): pick them again to go on from where they stopped.`;
  }

  async function start(items) {
    if (!items.length) return;
    status.textContent = `Sending ${items.length} file(s)…`;
    const total = items.reduce((sum, i) => sum + i.file.size, 0);
    const usage = await api.call('/get-user-storage-usage');
    if (total > usage.remainingBytes) {
      status.textContent = `Not enough storage: these ${items.length} files need ${size(total)}, and ${size(usage.remainingBytes)} is left. Nothing was sent.`;
      return;
    }
    const sent = new Map();
    const showOverall = () => {
      overall.value = total ? [...sent.values()].reduce((a, b) => a + b, 0) / total : 1;
    };
    fill(list);
    let failed = 0;
    for (const item of items) {
      const bar = h('progress', { max: String(item.file.size || 1), value: '0', 'aria-label': item.file.name });
      const said = h('span', { class: 'said' }, 'waiting');
      list.append(h('li', {}, h('span', { class: 'name' }, item.file.name), bar, said));
      const progress = (bytes) => {
        bar.value = bytes;
        sent.set(item, bytes);
        showOverall();
      };
      try {
        said.textContent = 'sending';
        said.textContent = await upload(item, joined(folder, item.path), progress);
        progress(item.file.size);
      } catch (e) {
        failed += 1;
        said.textContent = e.message;
      }
    }
    status.textContent = failed ? `${failed} of ${items.length} failed; pick them again to retry.` : `${items.length} uploaded.`;
    uploaded();
  }
  return zone;
}

/** One file: recorded already (same name, size and time), or sent and recorded. */
async function upload({ file }, folder, progress) {
  const [type, mimeType] = byExtension[file.name.split('.').pop().toLowerCase()] ?? other;
  const modifiedTime = new Date(file.lastModified).toISOString();
  const identity = new TextEncoder().encode(`${file.name}\n${file.size}\n${modifiedTime}`);
  const digest = [...new Uint8Array(await crypto.subtle.digest('SHA-256', identity))]
    .map((b) => b.toString(16).padStart(2, '0')).join('').slice(0, 32);
  const input = { type, fileName: file.name, fileSize: file.size, objectKey: `users/${api.userId()}/app/${digest}/${file.name}`, mimeType };
  const insert = () => api.call('/insert-file', { ...input, isPublic: false, creator: { id: api.userId() }, modifiedTime, folder });
  try {
    await insert();
    return 'already stored';
  } catch (e) {
    if (e.code !== 'object_not_found') throw e;
  }
  remember(file, true);
  let how = 'uploaded';
  if (file.size <= FORM_LIMIT) {
    await sendForm(await api.call('/generate-file-urls', input), file, progress);
  } else {
    const plan = await api.call('/create-multipart-upload', input);
    if (plan.resumed) how = `resumed after ${plan.parts.length} stored part(s)`;
    const sign = async (partNumbers) => (await api.call('/sign-upload-parts', { token: plan.token, partNumbers })).parts;
    await sendParts(plan, file, sign, progress);
    await api.call('/complete-multipart-upload', { token: plan.token });
  }
  await insert();
  remember(file, false);
  return how;
}

/** Keeps the names of uploads under way, so a reload can say which to pick again. */
function remember(file, underWay) {
  const kept = JSON.parse(localStorage.getItem(INTERRUPTED) ?? '[]').filter(
    (u) => !(u.name === file.name && u.size === file.size && u.lastModified === file.lastModified),
  );
  if (underWay) kept.push({ name: file.name, size: file.size, lastModified: file.lastModified });
  localStorage.setItem(INTERRUPTED, JSON.stringify(kept));
}

function joined(folder, path) {
  const parts = [...folder.split('/'), ...path.split('/')].filter(Boolean);
  return `/${parts.join('/')}`;
}

/** The files dropped, those inside dropped folders too, each with its folder's path. */
async function dropped(transfer) {
  const entries = [...transfer.items].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.length) return [...transfer.files].map((file) => ({ file, path: '' }));
  const found = [];
  async function walk(entry, path) {
    if (entry.isFile) {
      found.push({ file: await new Promise((ok, fail) => entry.file(ok, fail)), path });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
        if (!batch.length) break;
        for (const child of batch) await walk(child, path ? `${path}/${entry.name}` : entry.name);
      }
    }
  }
  for (const entry of entries) await walk(entry, '');
  return found;
}
