// File requests (`#/requests/`): a link anyone can send files to without an account. A new one
// made with what /create-file-request takes (title, message, folder, expiry, the most bytes, the
// types it takes, the most files a sender); the account's requests (/select-file-requests, newest
// first, at most 50), each with its link to send people, closed or opened again
// (/set-file-request-open), deleted after a confirm step (/delete-file-request: what arrived
// stays), and what arrived: each sender's name and note, the files linked to their preview.

import * as api from './api.js';
import { h, fill, field, size, when, say } from './dom.js';

const list = (text) => text.split(',').map((s) => s.trim()).filter(Boolean);

/** `#/files/…` for a folder path as the API lists it (`/Clients/Acme/`). */
function folderHref(path) {
  return `#/files/${path.split('/').filter(Boolean).map(encodeURIComponent).join('/')}`;
}

/** A link to copy: a read-only field (selected when focused) and a button that copies it; `what`
 * names whose link it is, for screen readers. */
export function copyable(id, label, what, url, status) {
  const input = h('input', { id, class: 'link', readonly: true, value: url, onfocus: (e) => e.target.select() });
  const copy = async () => {
    const copied = await navigator.clipboard?.writeText(url).then(() => true, () => false);
    if (copied) status.textContent = 'Link copied.';
    else {
      input.focus();
      input.select();
      status.textContent = 'Select the link and copy it.';
    }
  };
  return h('div', { class: 'field copy' },
    h('label', { for: id }, label, h('span', { class: 'visually-hidden' }, ` for “${what}”`)),
    h('div', { class: 'tools' }, input,
      h('button', { type: 'button', class: 'copy', onclick: copy, 'aria-label': `Copy link for “${what}”` }, 'Copy link')));
}

export function requestsView() {
  const status = h('p', { id: 'status', role: 'status' });
  const items = h('ul', { id: 'requests', class: 'requests' });

  const title = h('input', { id: 'requestTitle', name: 'title', required: true, maxlength: '200' });
  const message = h('textarea', { id: 'requestMessage', name: 'message', rows: '2', maxlength: '2000' });
  const form = h(
    'form',
    { id: 'newRequest', class: 'card' },
    h('h2', {}, 'New file request'),
    h('div', { class: 'field' }, h('label', { for: 'requestTitle' }, 'Title'), title),
    h('div', { class: 'field' }, h('label', { for: 'requestMessage' }, 'Message to senders (optional)'), message),
    field('Folder where files land (optional; default a new folder named for the request)', { id: 'requestFolder', name: 'folder', placeholder: '/Clients/Acme' }),
    field('Stops taking files at (optional)', { id: 'requestExpiry', name: 'expiry', type: 'datetime-local' }),
    field('Most it takes in all, in MB (optional)', { id: 'requestMaxMb', name: 'maxMb', type: 'number', min: '0.000001', step: 'any' }),
    field('Files it takes (optional; extensions like .pdf or kinds like Image, comma-separated)', { id: 'requestTypes', name: 'types', placeholder: '.pdf, Image' }),
    field('Most files one sender may send (optional)', { id: 'requestMaxFiles', name: 'maxFiles', type: 'number', min: '1', max: '10000', step: '1' }),
    h('button', { type: 'submit', class: 'primary', id: 'createRequest' }, 'Create request'),
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { title: data.get('title').trim() };
    if (data.get('message').trim()) body.message = data.get('message');
    if (data.get('folder').trim()) body.folder = data.get('folder').trim();
    if (data.get('expiry')) body.expireTime = new Date(data.get('expiry')).toISOString();
    if (data.get('maxMb')) body.maxBytes = Math.max(1, Math.round(Number(data.get('maxMb')) * 1e6));
    const types = list(data.get('types') ?? '');
    if (types.length) body.acceptTypes = types;
    if (data.get('maxFiles')) body.maxFilesPerSender = Number(data.get('maxFiles'));
    try {
      const made = await api.call('/create-file-request', body);
      form.reset();
      status.textContent = `Request “${made.title}” made: send its link to the people who have the files.`;
      await refresh();
    } catch (e) {
      say(status, e);
    }
  });

  async function refresh() {
    try {
      const found = await api.call('/select-file-requests', {});
      fill(items, found.requests.map(item));
      if (!found.requests.length) items.append(h('li', { class: 'empty' }, 'No file requests yet.'));
    } catch (e) {
      say(status, e);
    }
  }

  /** Draws one request again, as the API has it now. */
  async function redraw(id) {
    const found = await api.call('/select-file-requests', { requestIds: [id] });
    const shown = items.querySelector(`li[data-id="${id}"]`);
    if (found.requests[0] && shown) shown.replaceWith(item(found.requests[0]));
    else await refresh();
  }

  function item(r) {
    const actions = h('div', { class: 'actions' });

    const setOpen = async (event) => {
      const wasOpen = r.open;
      event.target.disabled = true;
      try {
        const answer = await api.call('/set-file-request-open', { requestId: r.id, open: !wasOpen });
        status.textContent = answer.open
          ? `“${r.title}” is open again.`
          : wasOpen ? `“${r.title}” is closed: its link takes no more files.` : `“${r.title}” stays closed: it is past its expiry.`;
        await redraw(r.id);
      } catch (e) {
        event.target.disabled = false;
        say(status, e);
      }
    };

    const remove = async () => {
      try {
        await api.call('/delete-file-request', { requestId: r.id });
        status.textContent = `“${r.title}” deleted; what arrived stays in ${r.folder.path}.`;
        await refresh();
      } catch (e) {
        say(status, e);
      }
    };

    const buttons = () => fill(
      actions,
      h('button', { type: 'button', class: 'toggle', onclick: setOpen, 'aria-label': `${r.open ? 'Close' : 'Open again'}: ${r.title}` }, r.open ? 'Close' : 'Open again'),
      h('button', { type: 'button', class: 'delete', onclick: confirming, 'aria-label': `Delete: ${r.title}` }, 'Delete'),
    );

    function confirming() {
      const keep = h('button', { type: 'button', class: 'keep', onclick: () => { buttons(); actions.querySelector('.delete').focus(); } }, 'Keep it');
      fill(
        actions,
        h('p', { class: 'confirm' }, `Delete “${r.title}”? Its link stops working; the files that arrived stay in ${r.folder.path}.`),
        h('button', { type: 'button', class: 'confirm-delete', onclick: remove }, 'Delete it'),
        keep,
      );
      keep.focus();
    }
    buttons();

    const state = r.open ? 'Open' : r.closeTime ? `Closed ${when(r.closeTime)}` : 'Past its expiry';
    const limits = [
      `${size(r.receivedBytes)} received${r.maxBytes ? ` of at most ${size(r.maxBytes)}` : ''}`,
      r.expireTime && `stops taking files ${when(r.expireTime)}`,
      r.acceptTypes?.length && `takes ${r.acceptTypes.join(', ')}`,
      r.maxFilesPerSender && `at most ${r.maxFilesPerSender} file(s) a sender`,
      r.onArrival?.jobType && `runs ${r.onArrival.jobType} on each file`,
    ].filter(Boolean);

    return h(
      'li',
      { class: 'card', dataset: { id: r.id, open: String(r.open) } },
      h('h3', {}, r.title),
      h('p', {}, h('strong', { class: 'state' }, state), `, made ${when(r.insertTime)}. Files land in `,
        h('a', { href: folderHref(r.folder.path), class: 'folder' }, r.folder.path), '.'),
      h('p', { class: 'hint limits' }, limits.join('; ')),
      r.message && h('p', { class: 'message' }, r.message),
      copyable(`link-${r.id}`, 'Link to send', r.title, r.url, status),
      actions,
      h('h4', {}, 'What arrived'),
      r.drops.length
        ? h('ul', { class: 'drops' }, r.drops.map(drop))
        : h('p', { class: 'hint' }, 'Nothing has arrived yet.'),
    );
  }

  function drop(d) {
    return h(
      'li',
      { dataset: { id: d.id } },
      h('p', {},
        h('strong', { class: 'sender' }, d.senderName),
        h('span', { class: 'hint' }, `, ${when(d.arrivedTime)}${d.finishTime ? '' : ' (still sending)'}`),
        !d.viewed && h('span', { class: 'new' }, ' New')),
      d.note && h('p', { class: 'note' }, d.note),
      h('ul', { class: 'files' }, d.files.map((f) =>
        h('li', {}, h('a', { href: `#/file/${f.id}` }, f.fileName), h('span', { class: 'hint' }, ` ${size(f.fileSize)}`)))),
    );
  }

  refresh();
  return h(
    'section',
    { class: 'requests-view' },
    h('h1', {}, 'File requests'),
    h('p', { class: 'hint' }, 'A link anyone can send you files through, no account needed.'),
    form,
    status,
    h('div', { class: 'tools' }, h('h2', {}, 'Your requests'),
      h('button', { type: 'button', id: 'refreshRequests', onclick: refresh }, 'Refresh')),
    items,
  );
}
