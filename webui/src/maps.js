// The Maps view: the anonymous mmap/munmap/mremap regions of the dump
// (docs/api.md, /maps). The run's totals, the live mapped bytes over the
// range, the mappings still live at the end (those mapped in the range), and
// per stack what its mappings did over the whole run. A row opens to its
// backtrace; which one is open is in the hash (`open`: an address, `stack`: an id).
import { api } from './api.js';
import { backtrace } from './backtrace.js';
import { bytes, duration, el, fill, integer, timeText } from './format.js';
import { siteLocation, siteName } from './labels.js';
import { drawMapsChart } from './maps_chart.js';
import { markerList } from './markers.js';
import { hasRange, rangeParams } from './state.js';

// "64 KiB" when the size is a whole number of the unit (mappings are whole
// pages), otherwise as every table has it; the exact bytes on hover.
function sizeText(n) {
  let text = bytes(n);
  for (const [scale, unit] of [[1024 ** 3, 'GiB'], [1024 ** 2, 'MiB'], [1024, 'KiB']]) {
    if (n >= scale) {
      if (n % scale === 0) text = `${n / scale} ${unit}`;
      break;
    }
  }
  return el('span', { title: `${integer(n)} bytes` }, text);
}

function figure(label, value, detail) {
  return el('div', { class: 'figure', role: 'group', 'aria-label': label },
    el('span', { class: 'figure-label' }, label), el('span', { class: 'figure-value' }, value),
    detail ? el('span', { class: 'exact' }, detail) : null);
}

const plural = (n, one, many) => `${integer(n)} ${n === 1 ? one : many}`;

function totals(t) {
  return el('div', { class: 'figures' },
    figure('Mapped at the end', sizeText(t.live_bytes), plural(t.live_count, 'mapping', 'mappings')),
    figure('Highest mapped', sizeText(t.peak_bytes), t.peak_at_ns === null ? null : el('span', {}, 'at ', timeText(t.peak_at_ns))),
    figure('Calls', `${integer(t.mmaps)} mmap · ${integer(t.mremaps)} mremap · ${integer(t.munmaps)} munmap`,
      el('span', {}, sizeText(t.mapped_bytes), ' mapped, ', sizeText(t.unmapped_bytes), ' unmapped',
        t.missed_munmaps > 0 ? `; ${plural(t.missed_munmaps, 'munmap', 'munmaps')} of no anonymous mapping (a file's, or one made before recording)` : '')));
}

// Stacks that map from one function differ in its callers: the one above the
// label frame is named under it ("← main:38").
function caller(row) {
  const f = row.frames[(row.label_frame ?? 0) + 1];
  if (!f) return null;
  return el('span', { class: 'via', title: 'Its caller' }, ` ← ${f.function ?? f.label}${f.line ? `:${f.line}` : ''}`);
}

function stackCells(row) {
  const name = row.label === null ? el('span', { class: 'detail' }, 'no stack recorded') : [siteName(row), caller(row)];
  return [el('td', { class: 'fn' }, name), el('td', { class: 'loc' }, row.label === null ? '' : siteLocation(row))];
}

// A row that opens to its backtrace (the frames came with the row).
function openable(cells, columns, open, onToggle, row, key) {
  const tr = el('tr', { class: 'site', 'aria-expanded': open ? 'true' : 'false', tabindex: 0, 'data-key': key }, cells);
  tr.addEventListener('click', onToggle);
  tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onToggle(); } });
  if (!open) return [tr];
  const detail = row.frames.length > 0 ? backtrace(row.frames, row.truncated)
    : el('p', { class: 'detail' }, 'The recorder kept no stack for this mapping.');
  return [tr, el('tr', { class: 'detail-row' }, el('td', { colspan: columns }, detail))];
}

function header(names) {
  return el('thead', {}, el('tr', {}, names.map(([name, num, title]) =>
    el('th', { scope: 'col', class: num ? 'num' : null, title }, name))));
}

function mappingsTable(answer, state, navigate) {
  const names = [['Size', true], ['Address'], ['Mapped at', true], ['Function'], ['Location']];
  const rows = answer.mappings.map((m) => openable([
    el('td', { class: 'num' }, sizeText(m.size_bytes)),
    el('td', { class: 'addr' }, m.address),
    el('td', { class: 'num' }, timeText(m.mapped_at_ns, true)),
    ...stackCells(m)], names.length, state.open === m.address,
  () => navigate({ open: state.open === m.address ? null : m.address }), m, m.address));
  const body = rows.length > 0 ? rows
    : el('tr', {}, el('td', { class: 'empty', colspan: names.length }, hasRange(state)
      ? 'No mapping made in this range is still mapped at the end.' : 'Every mapping was unmapped before the end.'));
  return el('table', { class: 'grid', 'aria-label': 'Live mappings' }, header(names), el('tbody', {}, body));
}

function stacksTable(answer, state, navigate) {
  const names = [['Function'], ['Location'], ['mmap', true, 'mmap calls with this stack'],
    ['mremap', true, 'mremap calls that left a range with this stack'], ['Mapped', true, 'Bytes mapped by both'],
    ['Unmapped', true, 'Of those, bytes released since'], ['Live', true, 'Bytes still mapped at the end'],
    ['Live count', true, 'Mappings (or pieces of one) still mapped at the end'],
    ['Highest', true, 'The most bytes its mappings held at once'], ['First', true], ['Last', true, 'The last change']];
  const rows = answer.stacks.map((s) => openable([...stackCells(s),
    el('td', { class: 'num' }, integer(s.mmaps)), el('td', { class: 'num' }, integer(s.mremaps)),
    el('td', { class: 'num' }, sizeText(s.mapped_bytes)), el('td', { class: 'num' }, sizeText(s.unmapped_bytes)),
    el('td', { class: 'num' }, sizeText(s.live_bytes)), el('td', { class: 'num' }, integer(s.live_count)),
    el('td', { class: 'num' }, sizeText(s.peak_bytes)),
    el('td', { class: 'num' }, timeText(s.first_ns, true)), el('td', { class: 'num' }, timeText(s.last_ns, true))],
  names.length, state.stack === String(s.stack),
  () => navigate({ stack: state.stack === String(s.stack) ? null : String(s.stack) }), s, `stack-${s.stack}`));
  return el('table', { class: 'grid', 'aria-label': 'Mapping stacks' }, header(names), el('tbody', {}, rows));
}

const shown = (n, total, what) => (total > n ? ` The ${integer(n)} largest of ${integer(total)} ${what} are listed.` : '');

export async function renderMaps(root, state, navigate) {
  const answer = await api.maps(state.dump, rangeParams(state));
  const t = answer.totals;
  if (t.mmaps + t.mremaps === 0) {
    fill(root, el('h2', {}, 'Anonymous mappings'),
      el('p', { class: 'empty', id: 'maps-none' }, 'This dump has no anonymous mappings: the program made no mmap call ' +
        'with MAP_ANONYMOUS while it was recorded.' + (t.munmaps > 0 ? ` Its ${plural(t.munmaps, 'munmap call', 'munmap calls')} ` +
        'released no mapping the recorder saw made (file mappings, or ones made before recording).' : '')));
    return;
  }
  const chart = el('div');
  fill(root, el('h2', {}, 'Anonymous mappings'),
    el('p', { class: 'detail' }, 'mmap calls with MAP_ANONYMOUS, munmap and mremap, over the whole run; ' +
      'the chart and the live mappings follow the range. Heap allocations are not counted here.'),
    totals(t), chart, markerList(answer.markers, state),
    el('p', { class: 'detail', id: 'maps-buckets' }, `${plural(answer.series.time_ns.length, 'bucket', 'buckets')} of ` +
      `${duration(answer.series.bucket_ns)}: the line is the bytes mapped at each bucket's end, the dashed one the highest in it.`),
    el('h3', {}, hasRange(state) ? 'Mapped in the range, still mapped at the end' : 'Still mapped at the end'),
    el('p', { class: 'detail', id: 'maps-live' }, `${plural(answer.mappings_total, 'mapping', 'mappings')}, largest first. ` +
      'A munmap of part of a mapping leaves its pieces.' + shown(answer.mappings.length, answer.mappings_total, 'mappings')),
    mappingsTable(answer, state, navigate),
    el('h3', {}, 'By stack, over the whole run'),
    el('p', { class: 'detail', id: 'maps-stacks' }, `${plural(answer.stacks_total, 'stack', 'stacks')} made mappings. ` +
      'Click a row for its backtrace.' + shown(answer.stacks.length, answer.stacks_total, 'stacks')),
    stacksTable(answer, state, navigate));
  drawMapsChart(chart, answer.series, { at: state.at, markers: answer.markers }, answer.range.to_ns, {
    onRange: (from, to) => navigate({ from: String(from), to: String(to), open: null }),
    onInstant: (at) => navigate({ at: String(at) }),
  });
}
