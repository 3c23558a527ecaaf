// Building the page from data: every string becomes a text node, never markup, so a file
// named `<img src=x onerror=…>` shows as those characters and runs nothing.

/** An element: `h('button', { class: 'primary', onclick: f }, 'Save')`. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(element.dataset, value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `element` holds. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A labelled input: the label names it for screen readers too. */
export function field(label, props) {
  const id = props.id ?? `f-${Math.random().toString(36).slice(2)}`;
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('input', { ...props, id }));
}

/** Bytes as people read them. */
export function size(bytes) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** A time as the reader's locale writes it. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

/** The API's sentence for a failure, shown where the page says what happened. */
export function say(status, error) {
  status.textContent = error?.message ?? String(error ?? '');
}
