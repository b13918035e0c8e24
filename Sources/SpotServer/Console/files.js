// Files: a folder's objects as a grid of thumbnails or a list, paged; uploads by drag and
// drop or a picker, each with its own progress and the server's refusal beside it; an
// object's details, metadata, links and deletion.
import { call, encode, objectPath, replacing } from './api.js';
import { h, show, bytes, when, field, copyableLink, lifetimeChoice } from './dom.js';
import { upload } from './upload.js';
import { showMap } from './map.js';
import { say, currentUser } from './app.js';

const pageSize = 100;
/** Files uploaded at once. */
const parallelUploads = 4;
let layout = 'grid';

/** The fragment of a folder. */
const folderHref = (bucket, prefix) => `#/browse/${encode(bucket)}/${prefix.split('/').map(encode).join('/')}`;
/** The fragment of an object. */
export const objectHref = (bucket, name) => `#/object/${encode(bucket)}/${name.split('/').map(encode).join('/')}`;

/** The folder path leading to `prefix`, each part a link. */
function breadcrumb(bucket, prefix) {
  const parts = prefix.split('/').filter(Boolean);
  const links = [h('a', { href: folderHref(bucket, '') }, bucket)];
  parts.forEach((part, index) => {
    links.push(' / ', h('a', { href: folderHref(bucket, `${parts.slice(0, index + 1).join('/')}/`) }, part));
  });
  return h('nav', { class: 'breadcrumb', 'aria-label': 'Folder' }, links);
}

/** One object in the grid: its thumbnail (loaded when on screen) or its type. */
function tile(item, selected) {
  const thumb = item.thumbnails?.['256'];
  const check = h('input', { type: 'checkbox', 'aria-label': `Select ${item.name}`, onchange: (event) => selected(item, event.target.checked) });
  return h('li', { class: 'tile' },
    check,
    h('a', { href: objectHref(item.bucket, item.name) },
      thumb ? h('img', { src: thumb, alt: '', loading: 'lazy', width: 160, height: 160 }) : h('span', { class: 'type' }, item.contentType),
      h('span', { class: 'name' }, item.name.split('/').pop())));
}

/** One object as a row of the list. */
function row(item, selected) {
  return h('tr', {},
    h('td', {}, h('input', { type: 'checkbox', 'aria-label': `Select ${item.name}`, onchange: (event) => selected(item, event.target.checked) })),
    h('td', {}, h('a', { href: objectHref(item.bucket, item.name) }, item.name.split('/').pop())),
    h('td', {}, bytes(item.size)), h('td', {}, item.contentType), h('td', {}, item.owner), h('td', {}, when(item.timeCreated)));
}

/** The upload panel: a drop zone and pickers; each file's progress and outcome beside it. */
function uploadPanel(bucket, prefix, done) {
  const list = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  const overall = h('progress', { max: 1, value: 0, 'aria-label': 'All uploads' });
  const send = async (files) => {
    let total = files.reduce((sum, entry) => sum + entry.file.size, 0) || 1;
    const sent = new Map();
    // Every file gets its row at once; `parallelUploads` go at a time (the server takes 16
    // uploads a client at once, and a dropped folder may hold thousands of files).
    const jobs = files.map(({ file, path }) => {
      const bar = h('progress', { max: file.size || 1, value: 0, 'aria-label': `Upload of ${path}` });
      const outcome = h('span', { class: 'outcome' }, 'waiting');
      list.append(h('li', {}, h('span', { class: 'name' }, path), bar, outcome));
      return async () => {
        try {
          await upload(bucket, prefix + path, file, (count) => {
            bar.value = count;
            sent.set(path, count);
            overall.value = [...sent.values()].reduce((sum, value) => sum + value, 0) / total;
            outcome.textContent = `${Math.round((100 * count) / (file.size || 1))}%`;
          });
          outcome.textContent = 'stored';
          outcome.className = 'outcome ok';
        } catch (error) {
          outcome.textContent = error.message;
          outcome.className = 'outcome refused';
          total -= file.size;
        }
      };
    });
    const worker = async () => {
      while (jobs.length > 0) await jobs.shift()();
    };
    await Promise.all(Array.from({ length: Math.min(parallelUploads, jobs.length) }, worker));
    say(`${files.length} upload(s) finished.`);
    done();
  };
  const picker = h('input', { type: 'file', multiple: true, onchange: (event) => send([...event.target.files].map((file) => ({ file, path: file.name }))) });
  const folderPicker = h('input', {
    type: 'file', webkitdirectory: true,
    onchange: (event) => send([...event.target.files].map((file) => ({ file, path: file.webkitRelativePath || file.name }))),
  });
  const zone = h('div', {
    class: 'drop', tabindex: 0,
    ondragover: (event) => { event.preventDefault(); zone.classList.add('over'); },
    ondragleave: () => zone.classList.remove('over'),
    ondrop: async (event) => {
      event.preventDefault();
      zone.classList.remove('over');
      send(await droppedFiles(event.dataTransfer));
    },
  }, 'Drop files or folders here');
  return h('section', { class: 'card', 'aria-label': 'Upload' },
    h('h2', {}, 'Upload'), zone, field('Files', picker), field('A whole folder', folderPicker), overall, list);
}

/** The files of a drop, folders walked, each with its path under the drop. */
async function droppedFiles(transfer) {
  const entries = [...transfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length === 0) return [...transfer.files].map((file) => ({ file, path: file.name }));
  const files = [];
  const walk = async (entry, path) => {
    if (entry.isFile) {
      files.push({ file: await new Promise((resolve, reject) => { entry.file(resolve, reject); }), path: path + entry.name });
    } else {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => { reader.readEntries(resolve, reject); });
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, `${path}${entry.name}/`);
      }
    }
  };
  for (const entry of entries) await walk(entry, '');
  return files;
}

/** A folder: its subfolders and objects, paged, in a grid or a list, with uploads. */
export async function browseView(main, bucket, prefix) {
  const selected = new Map();
  const choose = (item, on) => {
    if (on) selected.set(item.name, item); else selected.delete(item.name);
    remove.disabled = selected.size === 0;
    remove.textContent = `Delete selected (${selected.size})`;
  };
  const folders = h('ul', { class: 'folders', 'aria-label': 'Folders' });
  const grid = h('ul', { class: 'grid', 'aria-label': 'Objects' });
  const table = h('table', { class: 'list' }, h('caption', { class: 'visually-hidden' }, 'Objects'),
    h('thead', {}, h('tr', {}, ['', 'Name', 'Size', 'Type', 'Owner', 'Created'].map((title) => h('th', { scope: 'col' }, title)))));
  const body = h('tbody');
  table.append(body);
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const remove = h('button', {
    type: 'button', class: 'danger', disabled: true,
    onclick: async () => {
      if (!confirm(`Delete ${selected.size} object(s)? This cannot be undone.`)) return;
      for (const item of selected.values()) {
        try {
          await call(objectPath(bucket, item.name), { method: 'DELETE' });
        } catch (error) {
          say(`${item.name}: ${error.message}`);
        }
      }
      await browseView(main, bucket, prefix);
    },
  }, 'Delete selected (0)');
  const switcher = h('button', {
    type: 'button', 'aria-pressed': String(layout === 'list'),
    onclick: () => { layout = layout === 'grid' ? 'list' : 'grid'; browseView(main, bucket, prefix); },
  }, layout === 'grid' ? 'Show as list' : 'Show as grid');
  const bucketField = h('input', { value: bucket, name: 'bucket', size: 12 });
  const goBucket = h('form', { class: 'inline', onsubmit: (event) => { event.preventDefault(); location.hash = folderHref(bucketField.value.trim(), ''); } },
    field('Bucket', bucketField), h('button', { type: 'submit' }, 'Open'));
  let pageToken;
  /** Lists the folder again from its first page (after uploads), keeping the upload panel. */
  const reload = async () => {
    pageToken = undefined;
    show(folders);
    show(grid);
    show(body);
    await load();
  };
  const load = async () => {
    const query = new URLSearchParams({ prefix, delimiter: '/', maxResults: String(pageSize) });
    if (pageToken) query.set('pageToken', pageToken);
    const page = await call(`/v0/b/${encode(bucket)}/o?${query}`);
    for (const folder of page.prefixes ?? []) {
      folders.append(h('li', {}, h('a', { href: folderHref(bucket, folder) }, `${folder.slice(prefix.length)}`)));
    }
    for (const item of page.items ?? []) {
      if (layout === 'grid') grid.append(tile(item, choose)); else body.append(row(item, choose));
    }
    pageToken = page.nextPageToken;
    more.hidden = !pageToken;
  };
  more.addEventListener('click', load);
  const mine = currentUser() && prefix === '' && bucket !== 'spots'
    ? h('p', {}, h('a', { href: folderHref(bucket, `${currentUser().uid}/`) }, `Your folder in ${bucket}`)) : null;
  await load();
  show(main,
    h('h1', {}, 'Files'), goBucket, breadcrumb(bucket, prefix), mine,
    h('div', { class: 'toolbar' }, switcher, remove),
    folders, layout === 'grid' ? grid : table, more,
    uploadPanel(bucket, prefix, reload));
}

/** The details of an object: preview, photo facts, map, metadata, links, deletion. */
export async function objectView(main, bucket, name) {
  const object = await call(objectPath(bucket, name));
  const photo = object.photo;
  const location = photo?.location;
  const facts = [
    ['Name', object.name], ['Size', bytes(object.size)], ['Type', object.contentType], ['Owner', object.owner],
    ['Created', when(object.timeCreated)], ['Updated', when(object.updated)],
    photo && ['Pixels', `${photo.width} × ${photo.height}`],
    photo?.camera && ['Camera', [photo.camera.make, photo.camera.model].filter(Boolean).join(' ')],
    photo?.takenAt && ['Taken', photo.takenAt],
    location?.city && ['City', [location.city, location.region, location.country].filter(Boolean).join(', ')],
    location?.latitude !== undefined && location?.latitude !== null && ['Coordinates', `${location.latitude.toFixed(5)}, ${location.longitude.toFixed(5)}`],
  ].filter(Boolean);
  const preview = object.thumbnails?.['1024'] ?? object.thumbnails?.['256'];
  const map = h('div');
  const metadata = h('tbody');
  const addRow = (key = '', value = '') => {
    metadata.append(h('tr', {},
      h('td', {}, h('input', { value: key, 'aria-label': 'Metadata key' })),
      h('td', {}, h('input', { value, 'aria-label': 'Metadata value' })),
      h('td', {}, h('button', { type: 'button', onclick: (event) => event.target.closest('tr').remove() }, 'Remove'))));
  };
  for (const [key, value] of Object.entries(object.metadata ?? {})) addRow(key, value);
  const saveMetadata = h('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      const wanted = {};
      for (const tr of metadata.querySelectorAll('tr')) {
        const [key, value] = [...tr.querySelectorAll('input')].map((input) => input.value);
        if (key.trim()) wanted[key.trim()] = value;
      }
      try {
        await call(objectPath(bucket, name), { method: 'PATCH', json: { metadata: replacing(object.metadata, wanted) } });
        say('Metadata saved.');
      } catch (error) {
        say(`Metadata not saved: ${error.message}`);
      }
    },
  }, h('table', {}, h('caption', {}, 'Custom metadata'), metadata),
  h('button', { type: 'button', onclick: () => addRow() }, 'Add a field'), ' ', h('button', { type: 'submit' }, 'Save metadata'));

  const linkOut = h('output', { class: 'link' });
  const lifetime = lifetimeChoice([['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days']]);
  const makeLink = h('form', {
    class: 'inline',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        const signed = await call(`${objectPath(bucket, name)}?alt=signedUrl&expiresIn=${lifetime.value}`);
        show(linkOut, copyableLink(signed.url, () => say('Link copied.')));
      } catch (error) {
        say(`No link: ${error.message}`);
      }
    },
  }, field('Link lasts', lifetime), h('button', { type: 'submit' }, 'Make a signed link'));

  const tokens = h('ul', { class: 'tokens' });
  const listTokens = async () => {
    try {
      const { tokens: live } = await call(`${objectPath(bucket, name)}?alt=downloadTokens`);
      show(tokens, live.length === 0 ? h('li', {}, 'none') : live.map((token) => h('li', {}, `${token.id} (made ${when(token.timeCreated)}) `,
        h('button', {
          type: 'button',
          onclick: async () => {
            await call(`${objectPath(bucket, name)}?alt=downloadTokens&id=${encode(token.id)}`, { method: 'DELETE' }).catch((error) => say(error.message));
            listTokens();
          },
        }, 'Revoke'))));
    } catch (error) {
      show(tokens, h('li', {}, error.message));
    }
  };
  const remove = h('button', {
    type: 'button', class: 'danger',
    onclick: async () => {
      if (!confirm(`Delete ${name}? This cannot be undone.`)) return;
      await call(objectPath(bucket, name), { method: 'DELETE' });
      say(`${name} deleted.`);
      const folder = name.includes('/') ? name.slice(0, name.lastIndexOf('/') + 1) : '';
      window.location.hash = folderHref(bucket, folder);
    },
  }, 'Delete');
  const folder = name.includes('/') ? name.slice(0, name.lastIndexOf('/') + 1) : '';
  show(main,
    breadcrumb(bucket, folder),
    h('h1', {}, name.split('/').pop()),
    h('div', { class: 'details' },
      preview ? h('a', { href: `${objectPath(bucket, name)}?alt=media` }, h('img', { src: preview, alt: `Preview of ${name}`, class: 'preview' }))
        : h('p', {}, h('a', { href: `${objectPath(bucket, name)}?alt=media` }, 'Open the file')),
      h('dl', { class: 'facts' }, facts.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]))),
    map,
    h('section', { class: 'card' }, h('h2', {}, 'Metadata'), saveMetadata),
    h('section', { class: 'card' }, h('h2', {}, 'Links'), makeLink, linkOut, h('h3', {}, 'Download tokens'), tokens),
    h('section', { class: 'card' }, h('h2', {}, 'Delete'), remove));
  listTokens();
  if (location?.latitude !== undefined && location?.latitude !== null) {
    showMap(map, [{ latitude: location.latitude, longitude: location.longitude, label: name }]);
  }
}
