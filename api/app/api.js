// The drive's API as the app calls it: POST and JSON, the application header, and a short
// session held in memory. A browser signed in with a password renews its session from the
// sign-in cookie, which no script can read; one signed in with an API token keeps only its
// session, in this tab, until it ends.

const appId = document.querySelector('meta[name="drive-app"]').content;
let session = null;

export class ApiError extends Error {
  constructor(body, status) {
    super(body?.error ?? `the drive answered HTTP ${status}`);
    this.code = body?.code;
    this.field = body?.field;
    this.status = status;
  }
}

async function post(path, body, token, extra = {}) {
  const headers = { 'Content-Type': 'application/json', 'X-Drive-App': appId, ...extra };
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers,
      body: JSON.stringify(body ?? {}),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError({ error: 'the drive cannot be reached: check the connection and try again' }, 0);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { error: text.slice(0, 200) };
  }
  if (!response.ok) throw new ApiError(parsed, response.status);
  return parsed;
}

function keep(grant, how) {
  session = { token: grant.gelToken, userId: grant.userId, until: Date.now() + (grant.expiresIn - 60) * 1000, how };
  if (how === 'token') sessionStorage.setItem('drive.session', JSON.stringify(session));
}

/** Whether this browser is signed in: a session kept in this tab, or one the cookie renews. */
export async function resume() {
  if (session && session.until > Date.now()) return true;
  const kept = JSON.parse(sessionStorage.getItem('drive.session') ?? 'null');
  if (kept && kept.until > Date.now()) {
    session = kept;
    return true;
  }
  try {
    keep(await post('/renew-session'), 'password');
    return true;
  } catch (e) {
    if (e.status === 401) return false;
    throw e;
  }
}

export async function signIn(handle, password, code) {
  keep(await post('/sign-in', { handle, password, code: code || undefined }), 'password');
}

export async function acceptInvitation(invitation, password) {
  keep(await post('/accept-invitation', { invitation, password }), 'password');
}

/** Signs in for this tab with an API token: exchanged at once, never kept itself. */
export async function signInWithToken(apiToken) {
  keep(await post('/exchange-token', {}, apiToken.trim()), 'token');
}

/** Ends the sign-in and forgets everything the app kept in this browser. */
export async function signOut() {
  try {
    if (session?.how === 'password') await post('/sign-out');
  } finally {
    session = null;
    sessionStorage.clear();
    localStorage.clear();
  }
}

export function userId() {
  return session?.userId;
}

/** Calls a route of the file service; an ended session is renewed once from the cookie. */
export async function call(path, body, extra) {
  if (!session) throw new ApiError({ code: 'signed_out', error: 'sign in first' }, 401);
  if (session.how === 'password' && Date.now() > session.until) keep(await post('/renew-session'), 'password');
  try {
    return await post(path, body, session.token, extra);
  } catch (e) {
    if (e.status !== 401 || session?.how !== 'password') throw e;
    keep(await post('/renew-session'), 'password');
    return post(path, body, session.token, extra);
  }
}

/** Calls the agent (A2A 1.0 over JSON-RPC at /a2a) as this sign-in; answers the `result`, or
 * throws the agent's error as the page shows errors. */
export async function agent(method, params) {
  const answer = await call('/a2a', { jsonrpc: '2.0', id: 1, method, params }, { 'A2A-Version': '1.0' });
  if (answer?.error) throw new ApiError({ error: answer.error.message, code: String(answer.error.code) }, 200);
  return answer?.result;
}
