// Reviews (`#/reviews/`): a link to watch one of the account's videos or tracks and leave notes
// at its moments. A new one on a file picked from the account's videos and tracks (/search-files
// with `types`) or given by its id (/create-file-review); the account's reviews
// (/select-file-reviews, newest first, at most 50), each with its link to send reviewers and its
// notes as an edit list in timeline order: the moment (m:ss, linked to the preview there), who
// wrote it, the text, the replies under it, a reply field (/reply-to-review-note) and resolved or
// not (/set-review-note-resolved). A review's link is closed after a confirm step
// (/close-file-review; its notes stay).

import * as api from './api.js';
import { h, fill, field, when, say } from './dom.js';
import { clock } from './preview.js';
import { copyable } from './requests.js';

const who = (reviewer) => (reviewer.owner ? `${reviewer.name} (owner)` : reviewer.name);

export function reviewsView() {
  const status = h('p', { id: 'status', role: 'status' });
  const items = h('ul', { id: 'reviews', class: 'reviews' });

  const pick = h('select', { id: 'reviewFile' }, h('option', { value: '' }, 'Loading your videos and tracks…'));
  const fileId = h('input', { id: 'reviewFileId', name: 'fileId', required: true, 'aria-describedby': 'reviewFileIdHint', spellcheck: 'false', autocomplete: 'off' });
  pick.addEventListener('change', () => {
    if (pick.value) fileId.value = pick.value;
  });
  const form = h(
    'form',
    { id: 'newReview', class: 'card' },
    h('h2', {}, 'New review'),
    h('div', { class: 'field' }, h('label', { for: 'reviewFile' }, 'Video or track'), pick),
    h('div', { class: 'field' }, h('label', { for: 'reviewFileId' }, 'Its file id'), fileId,
      h('small', { class: 'hint', id: 'reviewFileIdHint' }, 'Filled in by the choice above, or paste a file id.')),
    field('Title (optional; default the file’s name)', { id: 'reviewTitle', name: 'title', maxlength: '200' }),
    h('button', { type: 'submit', class: 'primary', id: 'createReview' }, 'Create review'),
  );

  async function offer() {
    try {
      const found = await api.call('/search-files', { types: ['Video', 'Audio'], limit: 200 });
      fill(pick,
        h('option', { value: '' }, found.files.length ? 'Choose one…' : 'No videos or tracks yet'),
        found.files.map((f) => h('option', { value: f.id }, `${f.fileName} (${f.type}, ${f.folder})`)));
    } catch (e) {
      fill(pick, h('option', { value: '' }, 'Your files could not be listed'));
      say(status, e);
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { fileId: data.get('fileId').trim() };
    if (data.get('title').trim()) body.title = data.get('title').trim();
    try {
      const made = await api.call('/create-file-review', body);
      form.reset();
      status.textContent = `Review “${made.title}” made: send its link to the people who should watch it.`;
      await refresh();
    } catch (e) {
      say(status, e);
    }
  });

  async function refresh() {
    try {
      const found = await api.call('/select-file-reviews', {});
      fill(items, found.reviews.map(item));
      if (!found.reviews.length) items.append(h('li', { class: 'empty' }, 'No reviews yet.'));
    } catch (e) {
      say(status, e);
    }
  }

  /** Draws one review again, as the API has it now; `focus` (a selector in it) is focused after. */
  async function redraw(id, focus) {
    const found = await api.call('/select-file-reviews', { reviewIds: [id] });
    const shown = items.querySelector(`li.review[data-id="${id}"]`);
    if (!found.reviews[0] || !shown) return refresh();
    const drawn = item(found.reviews[0]);
    shown.replaceWith(drawn);
    if (focus) drawn.querySelector(focus)?.focus();
  }

  function item(r) {
    const open = !r.closeTime;
    const actions = h('div', { class: 'actions' });

    const close = async () => {
      try {
        await api.call('/close-file-review', { reviewId: r.id });
        status.textContent = `“${r.title}” is closed: its link takes no more notes; the notes stay here.`;
        await redraw(r.id);
      } catch (e) {
        say(status, e);
      }
    };
    const buttons = () => fill(actions, open && h('button', { type: 'button', class: 'close', onclick: confirming, 'aria-label': `Close the review “${r.title}”` }, 'Close the review'));
    function confirming() {
      const keep = h('button', { type: 'button', class: 'keep', onclick: () => { buttons(); actions.querySelector('.close')?.focus(); } }, 'Keep it open');
      fill(
        actions,
        h('p', { class: 'confirm' }, `Close “${r.title}”? Its link stops taking notes, for good; its notes stay here.`),
        h('button', { type: 'button', class: 'confirm-close', onclick: close }, 'Close it'),
        keep,
      );
      keep.focus();
    }
    buttons();

    const resolved = r.notes.filter((n) => n.resolved).length;
    return h(
      'li',
      { class: 'review card', dataset: { id: r.id, open: String(open) } },
      h('h3', {}, r.title),
      h('p', {},
        h('strong', { class: 'state' }, open ? 'Open' : `Closed ${when(r.closeTime)}`),
        `, made ${when(r.insertTime)}, on `,
        h('a', { href: `#/file/${r.file.id}`, class: 'file' }, r.file.fileName),
        ` (${r.file.type}).`),
      open && copyable(`link-${r.id}`, 'Link to send', r.title, r.url, status),
      actions,
      h('h4', {}, `Notes (${r.notes.length}, ${resolved} resolved)`),
      r.notes.length
        ? h('ol', { class: 'notes', 'aria-label': `Notes on “${r.title}”, in timeline order` }, r.notes.map((n) => note(r, n)))
        : h('p', { class: 'hint' }, 'No notes yet.'),
    );
  }

  function note(r, n) {
    const at = clock(n.seconds);
    const about = `the note of ${n.reviewer.name} at ${at}`;
    const toggle = async (event) => {
      event.target.disabled = true;
      try {
        await api.call('/set-review-note-resolved', { noteId: n.id, resolved: !n.resolved });
        status.textContent = `Marked ${about} ${n.resolved ? 'unresolved' : 'resolved'}.`;
        await redraw(r.id, `li[data-id="${n.id}"] button.resolve`);
      } catch (e) {
        event.target.disabled = false;
        say(status, e);
      }
    };
    const replyId = `reply-${n.id}`;
    const text = h('textarea', { id: replyId, class: 'reply-text', rows: '2', required: true, maxlength: '2000' });
    const send = async (event) => {
      event.preventDefault();
      if (!text.value.trim()) return;
      try {
        await api.call('/reply-to-review-note', { noteId: n.id, text: text.value });
        status.textContent = `Replied to ${about}.`;
        await redraw(r.id, `#${CSS.escape(replyId)}`);
      } catch (e) {
        say(status, e);
      }
    };
    return h(
      'li',
      { class: n.resolved ? 'note resolved' : 'note', dataset: { id: n.id, resolved: String(n.resolved) } },
      h('p', {},
        h('a', { class: 'at', href: `#/file/${r.file.id}?at=${n.seconds}`, title: n.timecode, 'aria-label': `${at}, open the file there` }, at),
        ' ',
        h('strong', { class: 'reviewer' }, who(n.reviewer)),
        h('span', { class: 'hint' }, ` ${when(n.insertTime)}`),
        n.resolved && h('span', { class: 'state' }, ' Resolved')),
      h('p', { class: 'text' }, n.text),
      n.replies.length
        ? h('ul', { class: 'replies', 'aria-label': `Replies to ${about}` }, n.replies.map((reply) =>
          h('li', { dataset: { id: reply.id } },
            h('strong', { class: 'reviewer' }, who(reply.reviewer)),
            h('span', { class: 'hint' }, ` ${when(reply.insertTime)}`),
            h('p', { class: 'text' }, reply.text))))
        : null,
      h('form', { class: 'reply', onsubmit: send },
        h('div', { class: 'field' }, h('label', { for: replyId }, 'Reply', h('span', { class: 'visually-hidden' }, ` to ${about}`)), text),
        h('div', { class: 'tools' },
          h('button', { type: 'submit', class: 'send-reply', 'aria-label': `Send reply to ${about}` }, 'Send reply'),
          h('button', { type: 'button', class: 'resolve', onclick: toggle, 'aria-label': `Mark ${n.resolved ? 'unresolved' : 'resolved'}: ${about}` },
            n.resolved ? 'Mark unresolved' : 'Mark resolved'))),
    );
  }

  offer();
  refresh();
  return h(
    'section',
    { class: 'reviews-view' },
    h('h1', {}, 'Reviews'),
    h('p', { class: 'hint' }, 'A link to watch a video or track and leave notes at its moments, no account needed.'),
    form,
    status,
    h('div', { class: 'tools' }, h('h2', {}, 'Your reviews'),
      h('button', { type: 'button', id: 'refreshReviews', onclick: refresh }, 'Refresh')),
    items,
  );
}
