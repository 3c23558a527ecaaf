// Searching the drive: words in names and what is recorded of files, what is said, seen or
// written inside them (`query`, with the moments it was found at), kinds, a folder, dates and
// sizes. A moment opens the file there: the player at its second, the PDF at its page.

import * as api from './api.js';
import { h, fill, field, size, say } from './dom.js';
import { clock } from './preview.js';

const KINDS = ['Video', 'Audio', 'Image', 'Pdf', 'Text', 'Archive', 'Other'];

export function searchView() {
  const status = h('p', { id: 'status', role: 'status' });
  const results = h('ol', { id: 'results', class: 'results' });
  const form = h(
    'form',
    { id: 'searchForm', class: 'card', role: 'search' },
    field('Inside files (what is said, seen or written)', { id: 'query', name: 'query', type: 'search' }),
    field('Words in names, descriptions, tags and titles', { id: 'text', name: 'text', type: 'search' }),
    h('fieldset', {}, h('legend', {}, 'Kinds'),
      KINDS.map((kind) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'types', value: kind }), ` ${kind}`))),
    field('In the folder', { id: 'folder', name: 'folder', placeholder: '/Photos/2026' }),
    field('Tags (comma-separated)', { id: 'tags', name: 'tags' }),
    field('Uploaded after', { id: 'uploadedAfter', name: 'uploadedAfter', type: 'date' }),
    field('Uploaded before', { id: 'uploadedBefore', name: 'uploadedBefore', type: 'date' }),
    field('At least (MB)', { id: 'minSize', name: 'minSize', type: 'number', min: '0', step: 'any' }),
    field('At most (MB)', { id: 'maxSize', name: 'maxSize', type: 'number', min: '0', step: 'any' }),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'shared', value: 'include' }), ' Files shared with me too'),
    h('button', { type: 'submit', class: 'primary', id: 'searchButton' }, 'Search'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { limit: 50 };
    for (const name of ['query', 'text', 'folder']) if (data.get(name)?.trim()) body[name] = data.get(name).trim();
    const types = data.getAll('types');
    if (types.length) body.types = types;
    const tags = (data.get('tags') ?? '').split(',').map((t) => t.trim()).filter(Boolean);
    if (tags.length) body.tags = tags;
    if (data.get('uploadedAfter')) body.uploadedAfter = new Date(data.get('uploadedAfter')).toISOString();
    if (data.get('uploadedBefore')) body.uploadedBefore = new Date(data.get('uploadedBefore')).toISOString();
    if (data.get('minSize')) body.minSize = Math.round(Number(data.get('minSize')) * 1e6);
    if (data.get('maxSize')) body.maxSize = Math.round(Number(data.get('maxSize')) * 1e6);
    if (data.get('shared')) body.shared = 'include';
    say(status, { message: 'Searching…' });
    try {
      draw(await api.call('/search-files', body));
    } catch (e) {
      fill(results);
      say(status, e);
    }
  });

  function draw(found) {
    const moments = new Map();
    for (const moment of found.moments ?? []) {
      if (!moments.has(moment.fileId)) moments.set(moment.fileId, []);
      moments.get(moment.fileId).push(moment);
    }
    status.textContent = found.files.length ? `${found.files.length} found${found.nextOffset !== null ? ' (the first)' : ''}.` : 'Nothing found.';
    fill(
      results,
      found.files.map((file) =>
        h(
          'li',
          { dataset: { id: file.id } },
          h('a', { href: `#/file/${file.id}`, class: 'name' }, file.fileName),
          h('span', { class: 'where' }, ` ${file.folder} · ${size(file.fileSize)}${file.owner ? ` · from ${file.owner}` : ''}`),
          (moments.get(file.id) ?? []).length
            ? h('ul', { class: 'moments' }, moments.get(file.id).map((m) => h('li', {}, moment(file, m))))
            : null,
        ),
      ),
    );
  }

  return h('section', { class: 'search' }, h('h1', {}, 'Search'), form, status, results);
}

/** A moment as a link into its file: at its second, or at its page. */
function moment(file, m) {
  const where = m.at !== null && m.at !== undefined ? `?at=${m.at}` : m.page ? `?page=${m.page}` : '';
  const label = m.at !== null && m.at !== undefined ? clock(m.at) : m.page ? `page ${m.page}` : m.entryType;
  return h('a', { href: `#/file/${file.id}${where}`, class: 'moment' }, h('span', { class: 'at' }, label), ` ${m.text}`);
}
