// One file, shown: a picture as the drive reads it (HEIC and camera RAW too, through
// /read-file), video and audio in the browser's player with what is said beside it (the line
// being said marked as it plays, a line clicked to seek there), a PDF's pages and a text file as
// text; beside it the file's record. `#/file/ID?at=SECONDS` opens
// the player at a moment, `?page=N` the PDF at a page.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';

export function previewView(id, params) {
  const status = h('p', { id: 'status', role: 'status' });
  const stage = h('div', { class: 'stage', id: 'stage' });
  const facts = h('dl', { class: 'facts', id: 'facts' });
  const title = h('h1', { id: 'fileName' }, 'Opening…');

  async function show() {
    const file = await api.call('/generate-download-url', { id });
    title.textContent = file.fileName;
    drawFacts(file);
    if (file.type === 'Video' || file.type === 'Audio') return player(file);
    if (file.type === 'Image') return picture(file);
    if (file.type === 'Pdf') return pages(file, Number(params.get('page')) || 1);
    if (file.type === 'Text') return text(file, 0);
    fill(stage, h('p', {}, 'The drive does not show this kind of file; download it to open it.'),
      h('a', { href: file.downloadUrl, download: file.fileName }, 'Download'));
  }

  function drawFacts(file) {
    const fact = (term, value) => [h('dt', {}, term), h('dd', {}, value)];
    fill(
      facts,
      fact('Size', size(file.fileSize)),
      fact('Kind', `${file.type} (${file.mimeType})`),
      fact('Access', file.isPublic ? 'Public' : 'Private'),
      fact('Uploaded', when(file.insertTime)),
      file.modifiedTime ? fact('Modified', when(file.modifiedTime)) : null,
      h('dd', {}, h('a', { href: file.downloadUrl, download: file.fileName }, 'Download')),
    );
  }

  async function picture(file) {
    const read = await api.call('/read-file', { fileId: file.id });
    if (!read.image) return fill(stage, h('p', {}, read.note));
    fill(stage, h('img', { id: 'picture', src: `data:${read.image.mimeType};base64,${read.image.data}`, alt: file.fileName }));
  }

  async function player(file) {
    const media = h(file.type === 'Video' ? 'video' : 'audio', { id: 'player', controls: true, src: file.downloadUrl, preload: 'metadata' });
    const lines = h('ol', { class: 'said', id: 'said', 'aria-label': 'What is said' });
    fill(stage, media, lines);
    const at = Number(params.get('at'));
    if (at > 0) media.addEventListener('loadedmetadata', () => { media.currentTime = at; }, { once: true });
    // What is said, a few minutes a call, until the end.
    let from = 0;
    const said = [];
    for (let calls = 0; from !== undefined && calls < 50; calls += 1) {
      const read = await api.call('/read-file', { fileId: file.id, at: from });
      if (!read.said) {
        lines.replaceWith(h('p', { class: 'note' }, read.note));
        return;
      }
      for (const line of read.said) {
        const item = h('li', {}, h('button', { type: 'button', class: 'line', dataset: { at: line.at } },
          h('span', { class: 'at' }, clock(line.at)), ' ', line.text));
        item.querySelector('button').addEventListener('click', () => {
          media.currentTime = line.at;
          media.play().catch(() => {});
        });
        said.push({ ...line, item });
        lines.append(item);
      }
      from = read.nextAt;
    }
    // The line being said follows the playhead.
    media.addEventListener('timeupdate', () => {
      for (const line of said) {
        const now = media.currentTime >= line.at && media.currentTime < line.until;
        if (now) line.item.setAttribute('aria-current', 'true');
        else line.item.removeAttribute('aria-current');
      }
    });
  }

  async function pages(file, from) {
    const read = await api.call('/read-file', { fileId: file.id, fromPage: from, toPage: from + 4 });
    const nav = h('div', { class: 'tools' });
    if (read.pages) {
      const { from: first, to: last, total } = read.pages;
      nav.append(
        h('span', { id: 'pageRange' }, `Pages ${first}–${last} of ${total}`),
        first > 1 ? h('button', { type: 'button', onclick: () => pages(file, Math.max(1, first - 5)) }, 'Earlier pages') : null,
        last < total ? h('button', { type: 'button', onclick: () => pages(file, last + 1) }, 'Later pages') : null,
      );
    }
    fill(stage, nav, h('pre', { class: 'text', id: 'text' }, read.text ?? read.note));
  }

  async function text(file, offset) {
    const read = await api.call('/read-file', { fileId: file.id, offset });
    const shown = offset === 0 ? fill(stage, h('pre', { class: 'text', id: 'text' })) : stage;
    shown.querySelector('pre').append(read.text ?? read.note);
    stage.querySelector('#moreText')?.remove();
    if (read.nextOffset !== undefined) {
      stage.append(h('button', { type: 'button', id: 'moreText', onclick: () => text(file, read.nextOffset) }, 'Show more'));
    }
  }

  show().catch((e) => say(status, e));
  return h('section', { class: 'preview' }, h('p', {}, h('a', { href: '#/files/' }, '← Files')), title, status,
    h('div', { class: 'split' }, stage, facts));
}

/** Seconds as the player writes them: 1:05, 1:02:03. */
export function clock(seconds) {
  const s = Math.floor(seconds);
  const two = (n) => String(n).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
}
