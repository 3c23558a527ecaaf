// What others share with the account, newest share first, a page at a time: each file with who
// shared it, to open or download (a viewer changes nothing).

import * as api from './api.js';
import { h, size, when, say } from './dom.js';

export function sharedView() {
  const status = h('p', { id: 'status', role: 'status' });
  const rows = h('tbody', { id: 'sharedFiles' });
  const more = h('button', { type: 'button', id: 'moreShared', hidden: true }, 'Show more');
  let cursor = null;

  async function page() {
    try {
      const found = await api.call('/select-shared-files', cursor ? { cursor, limit: 50 } : { limit: 50 });
      for (const shared of found.files) rows.append(row(shared));
      if (!cursor && !found.files.length) {
        rows.append(h('tr', {}, h('td', { colspan: '4', class: 'empty' }, 'Nobody shares files with you yet.')));
      }
      cursor = found.nextCursor;
      more.hidden = !cursor;
    } catch (e) {
      say(status, e);
    }
  }

  function row({ file, owner, sharedTime }) {
    const download = async () => {
      try {
        const linked = await api.call('/generate-download-url', { id: file.id });
        h('a', { href: linked.downloadUrl, download: linked.fileName, rel: 'noopener' }).click();
      } catch (e) {
        say(status, e);
      }
    };
    return h(
      'tr',
      { dataset: { id: file.id } },
      h('td', { class: 'name' }, file.fileName),
      h('td', { class: 'owner' }, owner.displayName ? `${owner.displayName} (${owner.handle})` : owner.handle),
      h('td', { class: 'time' }, `${size(file.fileSize)}, shared ${when(sharedTime)}`),
      h('td', {}, h('button', { type: 'button', onclick: download, 'aria-label': `Download ${file.fileName}` }, 'Download')),
    );
  }

  more.addEventListener('click', page);
  page();
  return h(
    'section',
    { class: 'shared' },
    h('h1', {}, 'Shared with you'),
    status,
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'From'),
        h('th', { scope: 'col' }, 'Size and time'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
      rows,
    ),
    more,
  );
}
