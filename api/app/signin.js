// Signing in: a handle and password, then the authenticator's code when the account asks for
// it; or an API token, for this tab only. An invitation link sets the password first.

import * as api from './api.js';
import { h, field, say } from './dom.js';

export function signInView(done) {
  const status = h('p', { id: 'status', role: 'alert' });
  const code = field('Code from your authenticator app', {
    id: 'code', name: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]*', maxlength: '6',
  });
  code.hidden = true;
  const form = h(
    'form',
    { id: 'signIn', class: 'card', novalidate: true },
    h('h1', {}, 'Sign in to your drive'),
    field('Handle', { id: 'handle', name: 'handle', autocomplete: 'username', required: true, spellcheck: 'false' }),
    field('Password', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    code,
    status,
    h('button', { type: 'submit', class: 'primary', id: 'signInButton' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    say(status, '');
    try {
      await api.signIn(data.get('handle').trim(), data.get('password'), data.get('code'));
      done();
    } catch (e) {
      if (e.code === 'code_needed') {
        code.hidden = false;
        code.querySelector('input').focus();
      }
      say(status, e);
    }
  });

  const tokenStatus = h('p', { role: 'alert' });
  const tokenForm = h(
    'form',
    { id: 'tokenSignIn' },
    field('API token', { id: 'apiToken', name: 'apiToken', type: 'password', autocomplete: 'off', spellcheck: 'false' }),
    tokenStatus,
    h('button', { type: 'submit' }, 'Sign in with the token'),
  );
  tokenForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.signInWithToken(new FormData(tokenForm).get('apiToken'));
      done();
    } catch (e) {
      say(tokenStatus, e);
    }
  });
  return h(
    'main',
    { id: 'main', class: 'center' },
    form,
    h('details', { class: 'card' }, h('summary', {}, 'Sign in with an API token instead'), tokenForm),
  );
}

export function invitationView(invitation, done) {
  const status = h('p', { id: 'status', role: 'alert' });
  const form = h(
    'form',
    { id: 'invitation', class: 'card' },
    h('h1', {}, 'Choose your password'),
    h('p', {}, 'You were invited to a drive. Choose a password of 10 characters at least to sign in with.'),
    field('New password', { id: 'newPassword', name: 'password', type: 'password', autocomplete: 'new-password', minlength: '10', required: true }),
    status,
    h('button', { type: 'submit', class: 'primary' }, 'Set the password and sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.acceptInvitation(invitation, new FormData(form).get('password'));
      done();
    } catch (e) {
      say(status, e);
    }
  });
  return h('main', { id: 'main', class: 'center' }, form);
}
