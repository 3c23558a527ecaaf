// The drive's folders as a tree, from the paths /select-collections answers: each a link to its
// view, the branch down to the folder shown open and marked, the others closed until asked.

import { h } from './dom.js';

/** A folder's address in the app: each name encoded, so `#` or `?` in a name stays a name. */
export function folderHref(path) {
  return `#/files/${path.split('/').filter(Boolean).map(encodeURIComponent).join('/')}`;
}

/** The tree of `paths` (each `/A/B/`), the folder `current` (`/A/B`, or `/`) marked. */
export function folderTree(paths, current) {
  const root = new Map();
  for (const path of paths) {
    let level = root;
    for (const name of path.split('/').filter(Boolean)) {
      if (!level.has(name)) level.set(name, new Map());
      level = level.get(name);
    }
  }
  const branch = (level, above) => h('ul', {}, [...level.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, below]) => {
      const path = `${above}/${name}`;
      const link = h('a', { href: folderHref(path), 'aria-current': path === current ? 'page' : null }, name);
      if (!below.size) return h('li', {}, link);
      const open = current === path || current.startsWith(`${path}/`);
      return h('li', {}, h('details', { open }, h('summary', {}, link), branch(below, path)));
    }));
  return h(
    'nav',
    { class: 'tree', 'aria-label': 'All folders' },
    h('a', { href: '#/files/', 'aria-current': current === '/' ? 'page' : null }, 'Drive'),
    branch(root, ''),
  );
}
