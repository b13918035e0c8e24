// Administration, for users with the admin role: users (paged; create with the token shown
// once, claims, revoke, delete), the rules in force with a playground, the health of every
// backend, and the store's statistics.
import { call, encode, replacing } from './api.js';
import { h, show, when, field, bytes } from './dom.js';
import { say } from './app.js';

const pageSize = 50;

/** Claims as `team=blue, role=editor`. */
const claimsText = (claims) => Object.entries(claims).map(([key, value]) => `${key}=${value}`).join(', ');

/** `team=blue, role=editor` as claims. */
const parseClaims = (text) => Object.fromEntries(text.split(',').map((pair) => pair.trim()).filter(Boolean).map((pair) => pair.split('=')));

/** The users table, one page at a time, with the actions on each. */
async function usersSection() {
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'More users');
  /** Adds `user` as a row with its actions. */
  const append = (user) => {
    const claims = h('td', {}, claimsText(user.claims));
    const actions = h('td', {},
      h('button', {
        type: 'button',
        onclick: () => {
          const input = h('input', { value: claims.textContent, 'aria-label': `Claims of ${user.uid} (key=value, comma-separated)` });
          const form = h('form', {
            class: 'inline',
            onsubmit: async (event) => {
              event.preventDefault();
              try {
                const updated = await call(`/v0/admin/users/${encode(user.uid)}/claims`, {
                  method: 'PATCH', json: { claims: replacing(user.claims, parseClaims(input.value)) },
                });
                user.claims = updated.claims;
                show(claims, claimsText(updated.claims));
                say(`Claims of ${user.uid} saved.`);
              } catch (error) {
                say(`Claims not saved: ${error.message}`);
              }
            },
          }, input, h('button', { type: 'submit' }, 'Save'));
          show(claims, form);
          input.focus();
        },
      }, 'Claims'), ' ',
      h('button', {
        type: 'button',
        onclick: async () => {
          if (!confirm(`Revoke every token and session of ${user.uid}?`)) return;
          await call(`/v0/admin/users/${encode(user.uid)}/tokens`, { method: 'DELETE' }).then(() => say(`${user.uid} revoked.`), (error) => say(error.message));
        },
      }, 'Revoke'), ' ',
      h('button', {
        type: 'button', class: 'danger',
        onclick: async (event) => {
          if (!confirm(`Delete user ${user.uid}? Their objects stay.`)) return;
          await call(`/v0/admin/users/${encode(user.uid)}`, { method: 'DELETE' }).then(() => {
            event.target.closest('tr').remove();
            say(`${user.uid} deleted.`);
          }, (error) => say(error.message));
        },
      }, 'Delete'));
    body.append(h('tr', {}, h('td', {}, user.uid), h('td', {}, user.admin ? 'admin' : ''), claims,
      h('td', {}, String(user.tokenCount)), h('td', {}, when(user.createdAt)), actions));
  };
  let pageToken;
  const load = async () => {
    const query = new URLSearchParams({ maxResults: String(pageSize) });
    if (pageToken) query.set('pageToken', pageToken);
    const page = await call(`/v0/admin/users?${query}`);
    page.users.forEach(append);
    pageToken = page.nextPageToken;
    more.hidden = !pageToken;
  };
  more.addEventListener('click', load);
  await load();
  const uid = h('input', { required: true, autocomplete: 'off' });
  const claims = h('input', { placeholder: 'team=blue, role=editor' });
  const created = h('output', { class: 'link' });
  const create = h('form', {
    class: 'inline',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        const made = await call('/v0/admin/users', { method: 'POST', json: { uid: uid.value.trim(), claims: parseClaims(claims.value) } });
        show(created, `Token of ${made.user.uid} (shown only now): `, h('code', {}, made.token));
        append(made.user);
        say(`User ${uid.value} created.`);
      } catch (error) {
        say(`User not created: ${error.message}`);
      }
    },
  }, field('New user id', uid), field('Claims', claims), h('button', { type: 'submit' }, 'Create user'));
  return h('section', { class: 'card' }, h('h2', {}, 'Users'), create, created,
    h('table', { class: 'list' }, h('caption', { class: 'visually-hidden' }, 'Users'),
      h('thead', {}, h('tr', {}, ['User', 'Role', 'Claims', 'Tokens', 'Created', 'Actions'].map((title) => h('th', { scope: 'col' }, title)))), body),
    more);
}

/** The rules in force, and a playground that decides a request with them. */
async function rulesSection() {
  const { text } = await call('/v0/admin/rules');
  const uid = h('input', { placeholder: 'not signed in', autocomplete: 'off' });
  const operation = h('select', {}, ['read', 'list', 'write', 'delete'].map((value) => h('option', { value }, value)));
  const path = h('input', { required: true, placeholder: 'spots/eiffel/1.jpg', size: 30 });
  const size = h('input', { type: 'number', min: 0, placeholder: 'bytes' });
  const type = h('input', { placeholder: 'image/jpeg' });
  const verdict = h('output', { class: 'verdict', 'aria-live': 'polite' });
  const form = h('form', {
    class: 'inline',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        const decision = await call('/v0/admin/rules/decide', {
          method: 'POST',
          json: {
            uid: uid.value.trim() || undefined, operation: operation.value, path: path.value.trim(),
            size: size.value === '' ? undefined : Number(size.value), contentType: type.value.trim() || undefined,
          },
        });
        show(verdict, h('strong', { class: decision.allowed ? 'ok' : 'refused' }, `${decision.operation}: ${decision.allowed ? 'allow' : 'deny'}`), ' ',
          decision.allowed ? decision.rule : decision.explanation, decision.limits ? h('span', { class: 'help' }, ` (limits: ${decision.limits})`) : null);
      } catch (error) {
        show(verdict, error.message);
      }
    },
  }, field('User id', uid), field('Operation', operation), field('Path (bucket/name)', path), field('Size', size), field('Content type', type),
  h('button', { type: 'submit' }, 'Decide'));
  return h('section', { class: 'card' }, h('h2', {}, 'Rules'),
    h('details', {}, h('summary', {}, 'The rules in force'), h('pre', { class: 'rules' }, text)),
    h('h3', {}, 'Playground'), h('p', { class: 'help' }, 'Decides a request with the server’s own rules and limits, as the store holds the user, spot and object, without doing it.'),
    form, verdict);
}

/** Each backend and how its check went. */
async function healthSection() {
  const health = await fetch('/healthz?deep=1').then((response) => response.json()).catch((error) => ({ error: error.message }));
  const backends = Object.entries(health).filter(([, value]) => value && typeof value === 'object' && 'kind' in value);
  return h('section', { class: 'card' }, h('h2', {}, 'Health'),
    h('p', {}, `Status: ${health.status ?? 'unknown'}`),
    h('ul', {}, backends.map(([role, backend]) => h('li', {}, `${role}: ${backend.kind}, ${backend.status ?? 'not checked'}${backend.message ? ` (${backend.message})` : ''}`))));
}

/** The store's statistics, counted when asked (it walks every blob). */
function statsSection() {
  const out = h('div', { 'aria-live': 'polite' });
  const count = h('button', {
    type: 'button',
    onclick: async () => {
      count.disabled = true;
      show(out, h('p', {}, 'Counting…'));
      try {
        const stats = await call('/v0/admin/stats');
        show(out,
          h('dl', { class: 'facts' }, [
            ['Objects', stats.objects], ['Blobs', `${stats.blobs} (${bytes(stats.bytesStored)})`], ['Logical bytes', bytes(stats.logicalBytes)],
            ['Saved by storing identical bytes once', bytes(stats.dedupSavings)], ['Thumbnails', `${stats.thumbnails} (${bytes(stats.thumbnailBytes)})`],
            ['Objects of deleted users', stats.objectsOfDeletedUsers],
          ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, String(value))])),
          h('table', { class: 'list' }, h('caption', {}, 'Buckets'),
            h('thead', {}, h('tr', {}, ['Bucket', 'Objects', 'Bytes'].map((title) => h('th', { scope: 'col' }, title)))),
            h('tbody', {}, stats.buckets.map((bucket) => h('tr', {},
              h('td', {}, h('a', { href: `#/browse/${encode(bucket.name)}/` }, bucket.name)), h('td', {}, String(bucket.objects)), h('td', {}, bytes(bucket.bytes)))))));
      } catch (error) {
        show(out, h('p', {}, error.message));
      } finally {
        count.disabled = false;
      }
    },
  }, 'Count');
  return h('section', { class: 'card' }, h('h2', {}, 'Store statistics'), count, out);
}

/** The administration page. */
export async function adminView(main) {
  const [users, rules, health] = await Promise.all([usersSection(), rulesSection(), healthSection()]);
  show(main, h('h1', {}, 'Administration'), users, rules, health, statsSection());
}
