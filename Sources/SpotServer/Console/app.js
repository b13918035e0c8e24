// The SpotStore console: signs in (a token, or a one-time link), then routes by the URL's
// fragment: #/browse/BUCKET/PREFIX, #/object/BUCKET/NAME, #/spots, #/spot/BUCKET/ID, #/admin.
// It calls only the public HTTP API, so the rules decide every action as for any client.
import { call, APIError } from './api.js';
import { h, show } from './dom.js';
import { browseView, objectView } from './files.js';
import { spotsView, spotView } from './spots.js';
import { adminView } from './admin.js';

const main = document.getElementById('main');
const status = document.getElementById('status');
let session = null;

/** Tells the person what happened, in the polite live region. */
export function say(text) {
  status.textContent = text;
}

/** The signed-in user ({uid, admin, claims}), or null. */
export const currentUser = () => session?.user ?? null;

/** Shows the sign-in form. */
function signInView() {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'current-password', required: true, 'aria-describedby': 'token-help' });
  const form = h('form', {
    class: 'card narrow',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        session = await call('/v0/session', { method: 'POST', headers: { Authorization: `Bearer ${token.value.trim()}` } });
        token.value = '';
        signedIn();
      } catch (error) {
        say(`Sign-in failed: ${error.message}`);
      }
    },
  },
  h('h1', {}, 'Sign in'),
  h('div', { class: 'field' }, h('label', { for: 'token' }, 'SpotStore token'), Object.assign(token, { id: 'token' })),
  h('p', { id: 'token-help', class: 'help' },
    'A token from `spotstore users add`, or open a sign-in link from `spotstore users login-link UID`.'),
  h('button', { type: 'submit' }, 'Sign in'));
  document.getElementById('nav').hidden = true;
  document.getElementById('who').hidden = true;
  show(main, form);
  token.focus();
}

/** Shows who is signed in and the sections they may use, then the page the URL names. */
function signedIn() {
  document.getElementById('who-name').textContent = session.user.uid;
  document.getElementById('who').hidden = false;
  document.getElementById('nav').hidden = false;
  document.getElementById('nav-admin').hidden = !session.user.admin;
  if (!location.hash.startsWith('#/') || location.hash === '#/') location.hash = '#/browse';
  else route();
}

/** The path segments of the fragment, decoded. */
function fragment() {
  return location.hash.slice(2).split('/').map((segment) => decodeURIComponent(segment));
}

/** How many views were asked for: a view shows only if no later one was asked for meanwhile. */
let routes = 0;

/** Shows the view the fragment names, once it is ready (and only if it is still the one asked for). */
async function route() {
  if (!session) return;
  const turn = ++routes;
  const [section, bucket, ...rest] = fragment();
  const view = h('div');
  try {
    switch (section) {
      case 'object': await objectView(view, bucket, rest.join('/')); break;
      case 'spots': await spotsView(view); break;
      case 'spot': await spotView(view, bucket, rest.join('/')); break;
      case 'admin': await adminView(view); break;
      default: await browseView(view, bucket || 'spots', rest.join('/'));
    }
    if (turn !== routes) return;
    show(main, view);
    main.focus({ preventScroll: true });
  } catch (error) {
    if (turn !== routes) return;
    if (error instanceof APIError && error.status === 401) {
      session = null;
      say('Your session has ended; sign in again.');
      signInView();
      return;
    }
    show(main, h('div', { class: 'card error', role: 'alert' }, h('h1', {}, 'That did not work'), h('p', {}, error.message)));
  }
}

document.getElementById('sign-out').addEventListener('click', async () => {
  try {
    await call('/v0/session', { method: 'DELETE' });
  } finally {
    session = null;
    history.replaceState(null, '', '/console/');
    say('Signed out.');
    signInView();
  }
});

window.addEventListener('hashchange', route);

/** Signs in with the link in the fragment (#link=…), or with the session cookie, or asks. */
async function start() {
  const link = new URLSearchParams(location.hash.slice(1)).get('link');
  if (link) {
    // The link's secret leaves the address bar (and the history) before anything else.
    history.replaceState(null, '', '/console/');
    // Someone else's link would sign this browser in as them: ask before ending a session.
    const current = await call('/v0/session').then((answer) => answer?.user ?? null, () => null);
    if (current && !confirm(`You are signed in as ${current.uid}. Sign in with this link instead? Only do so if you asked for the link.`)) {
      session = { user: current };
      signedIn();
      return;
    }
    try {
      session = await call('/v0/session', { method: 'POST', json: { link } });
      say(`Signed in as ${session.user.uid}.`);
      signedIn();
    } catch (error) {
      say(`That sign-in link did not work: ${error.message}`);
      signInView();
    }
    return;
  }
  try {
    session = await call('/v0/session');
  } catch {
    session = null;
  }
  if (session?.user) signedIn(); else signInView();
}

start();
