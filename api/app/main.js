// The app's shell: who is signed in, the header, and which view the address names
// (`#/files/Some/Folder`, `#/agents/`, `#/account`; `#invite=…` from an invitation link).

import * as api from './api.js';
import { h, fill } from './dom.js';
import { signInView, invitationView } from './signin.js';
import { filesView } from './files.js';
import { accountView } from './account.js';
import { sharedView } from './shared.js';
import { searchView } from './search.js';
import { previewView } from './preview.js';
import { jobsView } from './jobs.js';
import { agentsView } from './agents.js';
import { generateView } from './generate.js';
import { activityView } from './activity.js';
import { requestsView } from './requests.js';
import { reviewsView } from './reviews.js';
import { collectionsView } from './collections.js';
import { trashView } from './trash.js';

const root = document.getElementById('app');

async function show() {
  const invitation = new URLSearchParams(location.hash.slice(1)).get('invite');
  if (invitation) {
    // Off the address at once: it is a secret, and history would keep it.
    history.replaceState(null, '', location.pathname);
    return fill(root, invitationView(invitation, () => go('#/files/')));
  }
  let signedIn = false;
  try {
    signedIn = await api.resume();
  } catch (e) {
    return fill(root, h('main', { id: 'main', class: 'center' }, h('p', { role: 'alert' }, e.message)));
  }
  if (!signedIn) return fill(root, signInView(() => show()));
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const [, section = 'files', ...rest] = path.split('/');
  const main = h('main', { id: 'main', tabindex: '-1' });
  fill(root, header(section), main);
  const views = {
    account: accountView,
    shared: sharedView,
    search: searchView,
    file: () => previewView(rest[0], new URLSearchParams(query)),
    jobs: () => jobsView(new URLSearchParams(query)),
    agents: agentsView,
    images: generateView,
    activity: activityView,
    requests: requestsView,
    reviews: reviewsView,
    collections: () => collectionsView(rest),
    trash: trashView,
  };
  const view = views[section]?.() ?? filesView(decodeURIComponent(rest.join('/')));
  fill(main, view);
}

function header(section) {
  const link = (name, label) =>
    h('a', { href: `#/${name}/`, 'aria-current': section === name ? 'page' : null }, label);
  return h(
    'header',
    { class: 'bar' },
    h('a', { class: 'brand', href: '#/files/' }, 'Drive'),
    h('nav', { 'aria-label': 'Sections' }, link('files', 'Files'), link('search', 'Search'), link('jobs', 'Jobs'), link('images', 'Images'), link('agents', 'Agents'), link('activity', 'Activity'), link('collections', 'Playlists'), link('requests', 'Requests'), link('reviews', 'Reviews'), link('shared', 'Shared with me'), link('trash', 'Trash'), link('account', 'Account')),
    h('button', { type: 'button', id: 'signOut', onclick: signOut }, 'Sign out'),
  );
}

async function signOut() {
  await api.signOut().catch(() => {});
  go('#/');
}

export function go(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

window.addEventListener('hashchange', show);
addEventListener('unhandledrejection', (event) => {
  if (event.reason?.code === 'signed_out' || event.reason?.status === 401) show();
});
show();
