// The account: where it is signed in (each sign-in ended on its own, or all at once), its
// password, its second factor (an authenticator app's codes), and what reaches it from outside
// (apps let in, webhooks).

import * as api from './api.js';
import { h, fill, field, when, say } from './dom.js';
import { connectionsCard, webhooksCard } from './connections.js';

export function accountView() {
  const status = h('p', { id: 'status', role: 'status' });
  const signIns = h('ul', { id: 'signIns', class: 'sign-ins' });

  async function drawSignIns() {
    const { signIns: all } = await api.call('/select-sign-ins');
    fill(
      signIns,
      all.map((s) =>
        h(
          'li',
          { dataset: { id: s.signInId } },
          h('span', { class: 'agent' }, s.userAgent || 'An unnamed browser'),
          h('span', { class: 'where' }, ` from ${s.address ?? 'somewhere'}, last used ${when(s.lastUseTime)}`),
          s.current ? h('strong', {}, ' (this browser)') : null,
          h('button', { type: 'button', onclick: () => end(s.signInId, s.current) }, s.current ? 'Sign out here' : 'End'),
        ),
      ),
      all.length ? null : h('li', {}, 'Signed in with an API token only.'),
    );
  }

  async function end(signInId, current) {
    try {
      await api.call('/end-sign-ins', signInId ? { signInId } : {});
      if (current || !signInId) {
        await api.signOut().catch(() => {});
        location.hash = '#/';
        return;
      }
      say(status, { message: 'Signed out there.' });
      drawSignIns();
    } catch (e) {
      say(status, e);
    }
  }

  const passwordStatus = h('p', { role: 'alert' });
  const password = h(
    'form',
    { id: 'password', class: 'card' },
    h('h2', {}, 'Password'),
    field('Password now', { name: 'password', type: 'password', autocomplete: 'current-password' }),
    field('New password', { name: 'newPassword', type: 'password', autocomplete: 'new-password', minlength: '10' }),
    passwordStatus,
    h('button', { type: 'submit' }, 'Change the password'),
  );
  password.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(password);
    try {
      await api.call('/update-password', { password: data.get('password') || undefined, newPassword: data.get('newPassword') });
      password.reset();
      say(passwordStatus, { message: 'The password is changed.' });
    } catch (e) {
      say(passwordStatus, e);
    }
  });

  const factorStatus = h('p', { role: 'alert' });
  const factor = h('div', { id: 'factorSteps' });
  const begin = h('button', { type: 'button', id: 'beginTotp' }, 'Set up an authenticator app');
  begin.addEventListener('click', async () => {
    try {
      const begun = await api.call('/begin-totp');
      const confirm = h(
        'form',
        { id: 'confirmTotp' },
        h('p', {}, 'Add this key to your authenticator app, then type the code it shows.'),
        h('p', {}, h('code', { id: 'totpSecret' }, begun.secret)),
        h('p', {}, h('a', { href: begun.link, id: 'totpLink' }, 'Open in an authenticator app on this device')),
        field('Code', { name: 'code', id: 'totpCode', inputmode: 'numeric', autocomplete: 'one-time-code' }),
        h('button', { type: 'submit' }, 'Turn it on'),
      );
      confirm.addEventListener('submit', async (event) => {
        event.preventDefault();
        try {
          await api.call('/confirm-totp', { code: new FormData(confirm).get('code') });
          fill(factor);
          say(factorStatus, { message: 'Signing in now asks for the app’s code too.' });
        } catch (e) {
          say(factorStatus, e);
        }
      });
      fill(factor, confirm);
    } catch (e) {
      say(factorStatus, e);
    }
  });
  const remove = h(
    'form',
    { id: 'removeTotp' },
    field('Password, to turn the second factor off', { name: 'password', type: 'password', autocomplete: 'current-password' }),
    h('button', { type: 'submit' }, 'Turn it off'),
  );
  remove.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.call('/remove-totp', { password: new FormData(remove).get('password') || undefined });
      remove.reset();
      say(factorStatus, { message: 'Signing in asks for the password only.' });
    } catch (e) {
      say(factorStatus, e);
    }
  });

  drawSignIns().catch((e) => say(status, e));
  return h(
    'section',
    { class: 'account' },
    h('h1', {}, 'Account'),
    status,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'signInsTitle' },
      h('h2', { id: 'signInsTitle' }, 'Where you are signed in'),
      signIns,
      h('button', { type: 'button', id: 'signOutEverywhere', onclick: () => end(null, true) }, 'Sign out everywhere'),
    ),
    password,
    h('section', { class: 'card', 'aria-labelledby': 'factorTitle' }, h('h2', { id: 'factorTitle' }, 'Second factor'), begin, factor, remove, factorStatus),
    connectionsCard(),
    webhooksCard(),
  );
}
