// The heap at one instant (`at` in the hash): its bytes, live blocks and RSS,
// and the call sites that held the most then. Shown under the overview's
// timeline; a failure stays inside the panel, as an alert.
import { api } from './api.js';
import { bytesText, duration, el, integer } from './format.js';
import { labelParams, siteLocation, siteName } from './labels.js';
import { hashFor } from './state.js';

function figure(label, value) {
  return el('div', { class: 'figure' }, el('span', { class: 'figure-label' }, label), el('span', { class: 'figure-value' }, value));
}

function topTable(rows, state) {
  if (!rows || rows.length === 0) return el('p', { class: 'empty' }, 'No block was live then.');
  return el('table', { class: 'grid', 'aria-label': 'Call sites live at the instant' },
    el('thead', {}, el('tr', {},
      el('th', { scope: 'col' }, 'Function'), el('th', { scope: 'col' }, 'Location'),
      el('th', { scope: 'col', class: 'num' }, 'Live bytes'), el('th', { scope: 'col', class: 'num' }, 'Live blocks'))),
    el('tbody', {}, rows.map((s) => el('tr', {},
      el('td', { class: 'fn' }, el('a', { href: hashFor({ view: 'sites', dump: state.dump, sort: 'live', at: state.at, open: s.id, raw: state.raw, group: state.group }) },
        siteName(s))),
      el('td', { class: 'loc' }, siteLocation(s)),
      el('td', { class: 'num', title: `${integer(s.live_bytes)} bytes` }, integer(s.live_bytes)),
      el('td', { class: 'num' }, integer(s.live_count))))));
}

export async function instantPanel(state, onClose) {
  const panel = el('section', { class: 'instant', 'aria-label': 'Heap at the instant' },
    el('h3', {}, `Heap at ${duration(Number(state.at))}`,
      el('button', { type: 'button', class: 'link', onclick: onClose, 'aria-label': 'Close the instant' }, '✕')));
  try {
    const i = await api.instant(state.dump, state.at, labelParams(state));
    panel.append(
      el('div', { class: 'figures' },
        figure('Heap', el('span', {}, bytesText(i.heap_bytes), el('span', { class: 'exact' }, ` ${integer(i.heap_bytes)} bytes`))),
        figure('Live blocks', integer(i.live_count)),
        figure('RSS', i.rss_bytes === null || i.rss_bytes === undefined ? 'not sampled' : bytesText(i.rss_bytes)),
        figure('Exact time', `${integer(i.at_ns)} ns`)),
      topTable(i.top, state));
  } catch (e) {
    panel.append(el('p', { class: 'error', role: 'alert' }, e.message));
  }
  return panel;
}
