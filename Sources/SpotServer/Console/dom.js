// Building the page: every piece of text goes in as text (textContent, attribute values),
// never as HTML, so a name like <img src=x onerror=alert(1)>.jpg stays a name.

/** An element `tag` with `attributes` (on* handlers as functions) and `children` (nodes or text). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (value === true) element.setAttribute(key, '');
    else element.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces the content of `element` with `children`. */
export function show(element, ...children) {
  element.replaceChildren(...children.flat(Infinity).filter((child) => child !== undefined && child !== null && child !== false));
}

/** A size in bytes as people read it. */
export function bytes(count) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = Number(count);
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A date as the browser's locale writes it. */
export const when = (text) => (text ? new Date(text).toLocaleString() : '');

/** A labelled form field: a label and its input, tied by id. */
export function field(label, input) {
  input.id ||= `field-${Math.random().toString(36).slice(2)}`;
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
}

/** A link to `url` shown in full, with a button that copies it and then calls `copied`. */
export function copyableLink(url, copied) {
  return [h('a', { href: url }, url), ' ',
    h('button', { type: 'button', onclick: () => navigator.clipboard.writeText(url).then(copied) }, 'Copy')];
}

/** A choice of how long a link lasts: `choices` as [seconds, label] pairs. */
export function lifetimeChoice(choices) {
  return h('select', {}, choices.map(([value, label]) => h('option', { value }, label)));
}
