// Maps with Leaflet (Debian's libjs-leaflet, served at /console/vendor/leaflet/) when the
// server has it, on the tile server the server names; without either, no map, and the
// console works on.
let settings;
let leafletLoaded;

/** The server's console settings (map tiles, whether Leaflet is there). */
export async function consoleSettings() {
  settings ??= fetch('/console/settings.json').then((response) => response.json()).catch(() => ({}));
  return settings;
}

/** Loads Leaflet's script and style once; resolves to window.L, or null without Leaflet. */
async function leaflet() {
  const { leaflet: present } = await consoleSettings();
  if (!present) return null;
  leafletLoaded ??= new Promise((resolve) => {
    const style = document.createElement('link');
    style.rel = 'stylesheet';
    style.href = '/console/vendor/leaflet/leaflet.css';
    document.head.append(style);
    const script = document.createElement('script');
    script.src = '/console/vendor/leaflet/leaflet.js';
    script.onload = () => resolve(window.L ?? null);
    script.onerror = () => resolve(null);
    document.head.append(script);
  });
  return leafletLoaded;
}

/**
 * Shows `points` ([{latitude, longitude, label, href}]) on a map in `element`; returns false
 * (and leaves `element` empty) when there is no map to show.
 */
export async function showMap(element, points) {
  const L = await leaflet();
  if (!L || points.length === 0) return false;
  const { mapTiles } = await consoleSettings();
  element.classList.add('map');
  element.setAttribute('role', 'region');
  element.setAttribute('aria-label', 'Map');
  const map = L.map(element);
  if (mapTiles) L.tileLayer(mapTiles, { maxZoom: 19, attribution: '© OpenStreetMap contributors' }).addTo(map);
  const markers = points.map((point) => {
    const marker = L.marker([point.latitude, point.longitude], { title: point.label, alt: point.label }).addTo(map);
    if (point.href) marker.on('click', () => { location.hash = point.href; });
    return marker;
  });
  map.fitBounds(L.featureGroup(markers).getBounds().pad(0.2), { maxZoom: 14 });
  return true;
}
