// One file, shown: a picture as the drive reads it (HEIC and camera RAW too, through
// /read-file), video and audio in the browser's player with what is said beside it (the line
// being said marked as it plays, a line clicked to seek there), a PDF's pages and a text file as
// text; beside it the file's record (/search-files with `fileIds`: what the drive read of it,
// its artwork, its tags and description, editable on one's own file), who opened it and the jobs
// it went into. `#/file/ID?at=SECONDS` opens the player at a moment, `?page=N` the PDF at a page.

import * as api from './api.js';
import { h, fill, size, when, say } from './dom.js';

export function previewView(id, params) {
  const status = h('p', { id: 'status', role: 'status' });
  const stage = h('div', { class: 'stage', id: 'stage' });
  const facts = h('dl', { class: 'facts', id: 'facts' });
  const title = h('h1', { id: 'fileName' }, 'Opening…');

  const about = h('div', { id: 'about' });

  async function show() {
    const file = await api.call('/generate-download-url', { id });
    title.textContent = file.fileName;
    drawFacts(file);
    aboutFile().catch((e) => say(status, e));
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

  /** What the drive knows of the file beyond its record; on one's own file, its tags and
   * description changed here, then who opened it and the jobs it went into. */
  async function aboutFile() {
    const found = await api.call('/search-files', { fileIds: [id], shared: 'include' });
    const hit = found.files[0];
    if (!hit) return;
    const own = hit.owner === undefined;
    const fact = (term, value) => (value === null || value === undefined || value === '' ? null : [h('dt', {}, term), h('dd', {}, value)]);
    const read = h('dl', { class: 'facts', id: 'metadata' },
      fact('Folder', hit.folder),
      fact('Shared by', hit.owner),
      fact('Title', hit.title),
      fact('Artists', hit.artists.join(', ')),
      fact('Album', hit.album),
      fact('Genre', hit.genre),
      fact('Duration', hit.duration ? clock(hit.duration) : null),
      fact('Tempo', hit.tempo ? `${Math.round(hit.tempo)} BPM` : null),
      fact('Key', hit.key),
      fact('Taken', hit.takenTime ? when(hit.takenTime) : null),
      fact('Where', hit.location ? `${hit.location.latitude.toFixed(5)}, ${hit.location.longitude.toFixed(5)}` : null),
      fact('Pixels', hit.width ? `${hit.width} × ${hit.height}` : null),
      fact('Codecs', [hit.videoCodec, hit.audioCodec].filter(Boolean).join(', ')),
      fact('Read', hit.metadataState === 'failed' ? `failed: ${hit.metadataError}` : hit.metadataState));
    const artwork = h('p', { id: 'artwork' });
    if (hit.artworkId) {
      api.call('/generate-download-url', { id: hit.artworkId })
        .then((art) => fill(artwork, h('img', { src: art.downloadUrl, alt: `Artwork of ${hit.fileName}`, class: 'artwork' })))
        .catch(() => {});
    }
    fill(about, artwork, read, own ? edits(hit) : [
      hit.description ? h('p', { id: 'description' }, hit.description) : null,
      hit.tags.length ? h('p', {}, `Tags: ${hit.tags.join(', ')}`) : null,
    ]);
    if (own) history();
  }

  function edits(hit) {
    const tags = h('ul', { class: 'tags', id: 'tags', 'aria-label': 'Tags' });
    const drawTags = (names) => fill(tags, names.map((name) => h('li', {}, name, ' ',
      h('button', { type: 'button', class: 'untag', 'aria-label': `Take the tag ${name} off`, onclick: () => retag([name], 'remove') }, '×'))));
    let names = [...hit.tags];
    drawTags(names);
    const newTag = h('input', { id: 'newTag', 'aria-label': 'New tags, comma-separated', placeholder: 'new tags, comma-separated' });
    async function retag(given, action) {
      try {
        await api.call('/tag-files', { fileIds: [id], tags: given, action });
        names = action === 'remove' ? names.filter((n) => !given.includes(n)) : [...new Set([...names, ...given])];
        drawTags(names);
        status.textContent = action === 'remove' ? `Took ${given.join(', ')} off.` : `Tagged ${given.join(', ')}.`;
      } catch (e) {
        say(status, e);
      }
    }
    const description = h('textarea', { id: 'description', rows: '4', maxlength: '5000' });
    description.value = hit.description ?? '';
    async function describe(event) {
      event.preventDefault();
      try {
        await api.call('/update-file-description', { fileId: id, description: description.value });
        status.textContent = 'Description saved.';
      } catch (e) {
        say(status, e);
      }
    }
    return [
      h('h2', {}, 'Tags'),
      tags,
      h('form', { class: 'tools', onsubmit: (event) => {
        event.preventDefault();
        const given = newTag.value.split(',').map((t) => t.trim()).filter(Boolean);
        if (given.length) retag(given, 'add').then(() => { newTag.value = ''; });
      } }, newTag, h('button', { type: 'submit' }, 'Add tags')),
      h('form', { onsubmit: describe },
        h('div', { class: 'field' }, h('label', { for: 'description' }, 'Description'), description),
        h('button', { type: 'submit', id: 'saveDescription' }, 'Save description')),
    ];
  }

  /** Who opened the file lately, and the jobs it went into. */
  async function history() {
    const [views, jobs] = await Promise.all([
      api.call('/select-file-views', { fileIds: [id] }),
      api.call('/select-file-jobs', { fileId: id, limit: 10 }),
    ]);
    const seen = views.files?.[0];
    const named = (seen?.viewers ?? []).map((v) => v.displayName ? `${v.displayName} (${v.handle})` : v.handle).filter(Boolean);
    about.append(
      h('h2', {}, 'Opened'),
      h('p', { id: 'views' }, seen?.allViews
        ? `${seen.views} open(s) in the last 30 days, ${seen.allViews} in all${named.length ? `, by ${named.join(', ')} among others` : ''}.`
        : 'Nobody else has opened it.'),
      h('h2', {}, 'Jobs'),
      jobs.jobs.length
        ? h('ul', { id: 'fileJobs' }, jobs.jobs.map((job) => h('li', {},
          h('a', { href: '#/jobs/' }, job.jobType), ` ${job.state}, ${when(job.createTime)}`)))
        : h('p', { id: 'fileJobs' }, 'No jobs have taken this file yet.'),
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
    h('div', { class: 'split' }, stage, h('div', {}, facts, about)));
}

/** Seconds as the player writes them: 1:05, 1:02:03. */
export function clock(seconds) {
  const s = Math.floor(seconds);
  const two = (n) => String(n).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
}
