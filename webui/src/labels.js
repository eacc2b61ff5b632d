// How the page names a call site: its label (the program's own innermost
// frame, short; the whole function on hover), its file:line, and a dimmed
// "via X" for the library call folded under it. Also the two toggles that
// change the naming, kept in the hash: raw=1 and group=label (docs/api.md).
import { el, locationText } from './format.js';

// `text` as a span that wraps only after a `::`, a `/` or a space (a <wbr>
// there; style.css forbids breaks inside a word), `title` on hover.
export function breakable(text, cls, title = null) {
  const parts = String(text).split(/(?<=::|\/|\s)/).filter((p) => p !== '');
  return el('span', { class: cls, title }, parts.flatMap((p, i) => (i === 0 ? [p] : [el('wbr'), p])));
}

// A function's name as every table shows it: `text`, the server's short
// form (template and generic argument lists as `<…>`, no return type or
// parameters: site_label.h short_function), `full`, the whole demangled
// name, on hover.
export const functionName = (text, full, cls = 'fn-name') => breakable(text, cls, full ?? text);

// The site's name cell contents: label, via, and tags.
export function siteName(site, ...tags) {
  const label = site.label ?? site.top?.label ?? '?';
  return [functionName(label, site.label_full ?? site.top?.function ?? null, 'label'),
    site.via ? el('span', { class: 'via', title: 'The library call this site allocates through' }, ` via ${site.via}`) : null,
    ...tags];
}

// The label frame's file:line (or module).
export const siteLocation = (site) => locationText(site.top);

// The hash's naming as API parameters ({} for the default).
export function labelParams(state) {
  return { raw: state.raw === '1' ? 1 : undefined, group: state.group === 'label' ? 'label' : undefined };
}

function toggle(text, title, checked, onChange) {
  const box = el('input', { type: 'checkbox', checked });
  box.addEventListener('change', () => onChange(box.checked));
  return el('label', { class: 'check', title }, box, ` ${text}`);
}

// The toggles; `group` false leaves out "Group by line" (a flamegraph merges by name already).
// Either change renumbers the sites, so an open row, page or site filter is dropped.
export function labelToggles(state, navigate, { group = true } = {}) {
  const reset = { open: null, offset: null, sel: null, site: null, zoom: null };
  return el('span', { class: 'label-toggles', role: 'group', 'aria-label': 'Site naming' },
    toggle('Library frames', 'Name sites by their innermost frame, allocator and standard library included',
      state.raw === '1', (on) => navigate({ ...reset, raw: on ? '1' : null })),
    group ? toggle('Group by line', 'Merge the sites whose label is the same function, file and line',
      state.group === 'label', (on) => navigate({ ...reset, group: on ? 'label' : null })) : null);
}
