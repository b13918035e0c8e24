// Spots: found by city or near a point (the browser's position when the person allows
// it), shown on a map; a spot's page in the console to edit it and share it.
import { call, encode } from './api.js';
import { h, show, when, field, copyableLink, lifetimeChoice } from './dom.js';
import { showMap } from './map.js';
import { say, currentUser } from './app.js';
import { objectHref } from './files.js';

const spotHref = (bucket, id) => `#/spot/${encode(bucket)}/${encode(id)}`;

/** The search form and its results, as a list and on a map. */
export async function spotsView(main) {
  const bucket = h('input', { value: 'spots', size: 10 });
  const city = h('input', { type: 'search', placeholder: 'Paris' });
  const latitude = h('input', { inputmode: 'decimal', size: 9 });
  const longitude = h('input', { inputmode: 'decimal', size: 9 });
  const radius = h('input', { type: 'number', min: 1, max: 1000, value: 10 });
  const results = h('ul', { class: 'spots', 'aria-label': 'Spots found' });
  const map = h('div');
  const search = async (query) => {
    try {
      const page = await call(`/v0/b/${encode(bucket.value.trim())}/spots?${new URLSearchParams(query)}`);
      show(results, page.spots.length === 0 ? h('li', {}, 'No spot found.') : page.spots.map((spot) => h('li', {},
        h('a', { href: spotHref(spot.bucket, spot.id) }, spot.name ?? spot.id),
        ` — ${[spot.city, `${spot.photoCount} photo(s)`, spot.distanceKm !== undefined && spot.distanceKm !== null ? `${spot.distanceKm.toFixed(1)} km` : null].filter(Boolean).join(', ')}`)));
      show(map);
      showMap(map, page.spots.filter((spot) => spot.location).map((spot) => ({
        latitude: spot.location.latitude, longitude: spot.location.longitude, label: spot.name ?? spot.id, href: spotHref(spot.bucket, spot.id),
      })));
      say(`${page.spots.length} spot(s) found.`);
    } catch (error) {
      say(`Search failed: ${error.message}`);
    }
  };
  const byCity = h('form', { class: 'inline', onsubmit: (event) => { event.preventDefault(); search({ city: city.value.trim() }); } },
    field('City', city), h('button', { type: 'submit' }, 'Find by city'));
  const near = h('form', {
    class: 'inline',
    onsubmit: (event) => { event.preventDefault(); search({ near: `${latitude.value},${longitude.value}`, radiusKm: radius.value }); },
  }, field('Latitude', latitude), field('Longitude', longitude), field('Radius (km)', radius), h('button', { type: 'submit' }, 'Find near'),
  h('button', {
    type: 'button',
    onclick: () => navigator.geolocation?.getCurrentPosition(
      (position) => {
        latitude.value = position.coords.latitude.toFixed(5);
        longitude.value = position.coords.longitude.toFixed(5);
        search({ near: `${latitude.value},${longitude.value}`, radiusKm: radius.value });
      },
      () => say('Your position is not available: type a latitude and longitude.')),
  }, 'Use my position'));
  show(main, h('h1', {}, 'Spots'), field('Bucket', bucket), byCity, near, results, map);
}

/** A spot: its facts and photos; its owner edits it and makes, lists and revokes share links. */
export async function spotView(main, bucket, id) {
  const path = `/v0/b/${encode(bucket)}/spots/${encode(id)}`;
  const spot = await call(path);
  const isOwner = currentUser()?.uid === spot.owner || currentUser()?.admin;
  const name = h('input', { value: spot.name ?? '' });
  const description = h('textarea', { rows: 3 }, spot.description ?? '');
  const cityOverride = h('input', { value: spot.cityOverridden ? spot.city ?? '' : '' , placeholder: spot.city ?? '' });
  const hide = h('input', { type: 'checkbox', checked: spot.locationHidden });
  const edit = h('form', {
    class: 'card',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        await call(path, { method: 'PATCH', json: { name: name.value, description: description.value, city: cityOverride.value, hideLocation: hide.checked } });
        say('Spot saved.');
        await spotView(main, bucket, id);
      } catch (error) {
        say(`Spot not saved: ${error.message}`);
      }
    },
  }, h('h2', {}, 'Edit'), field('Name', name), field('Description', description), field('City (overrides the photos’)', cityOverride),
  field('Hide the exact location (others see the city only)', hide), h('button', { type: 'submit' }, 'Save'));
  const shares = h('ul', { class: 'shares' });
  const shareOut = h('output', { class: 'link' });
  const listShares = async () => {
    const { shares: live } = await call(`${path}/shares`);
    show(shares, live.length === 0 ? h('li', {}, 'No share link.') : live.map((share) => h('li', {}, `${share.id}, until ${when(share.expiresAt)} `,
      h('button', { type: 'button', onclick: async () => { await call(`${path}/shares/${encode(share.id)}`, { method: 'DELETE' }); listShares(); } }, 'Revoke'))));
  };
  const lifetime = lifetimeChoice([['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days']]);
  const share = h('form', {
    class: 'card',
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        const made = await call(`${path}/shares`, { method: 'POST', json: { expiresIn: Number(lifetime.value) } });
        show(shareOut, copyableLink(made.url, () => say('Link copied.')));
        listShares();
      } catch (error) {
        say(`No share link: ${error.message}`);
      }
    },
  }, h('h2', {}, 'Share'), field('Link lasts', lifetime), h('button', { type: 'submit' }, 'Make a share link'), shareOut, shares);
  const map = h('div');
  show(main,
    h('h1', {}, spot.name ?? spot.id),
    h('p', {}, [spot.city, `${spot.photoCount} photo(s)`, `owner ${spot.owner}`, spot.locationHidden ? 'location hidden' : null].filter(Boolean).join(' · ')),
    spot.description ? h('p', {}, spot.description) : null,
    h('ul', { class: 'grid', 'aria-label': 'Photos' }, spot.photos.map((photo) => h('li', { class: 'tile' },
      h('a', { href: objectHref(bucket, photo.name) },
        photo.thumbnails?.['256'] ? h('img', { src: photo.thumbnails['256'], alt: '', loading: 'lazy', width: 160, height: 160 }) : null,
        h('span', { class: 'name' }, photo.name.split('/').pop()))))),
    map,
    isOwner ? edit : null,
    isOwner ? share : null);
  if (spot.location) showMap(map, [{ latitude: spot.location.latitude, longitude: spot.location.longitude, label: spot.name ?? spot.id }]);
  if (isOwner) listShares().catch((error) => say(error.message));
}
