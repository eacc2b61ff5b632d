// The overview's charts (uPlot): heap bytes, its highest per bucket, RSS and
// live blocks; below, allocations and frees per second, and temporary
// allocations per second. All share a cursor.
// Periods when recording was off are hatched, the selected range is shaded,
// the selected instant is a line and markers are dashed lines with their label. A drag calls onRange(from_ns, to_ns), a
// click without a drag onInstant(at_ns); the caller puts them in the hash.
import uPlot from '/vendor/uPlot.esm.js';
import { bytes, duration, el, integer } from './format.js';

const toNs = (seconds) => Math.max(0, Math.round(seconds * 1e9));

// Recording-off periods: the gaps between `recording` spans within [start, end].
export function offPeriods(recording, start, end) {
  if (!Array.isArray(recording)) return [];
  const gaps = [];
  let at = start;
  for (const [start, stop] of recording) {
    if (start > at) gaps.push([at, start]);
    at = Math.max(at, stop);
  }
  if (at < end) gaps.push([at, end]);
  return gaps;
}

export function marks(marked, start, end) {
  const off = offPeriods(marked.recording, start, end);
  return (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    const x = (ns) => u.valToPos(ns / 1e9, 'x', true);
    ctx.save();
    ctx.setLineDash([]);  // a dashed series leaves its dash set
    for (const [a, b] of off) {
      ctx.fillStyle = 'rgba(120,120,120,0.16)';
      ctx.fillRect(x(a), top, Math.max(1, x(b) - x(a)), height);
    }
    if (marked.from !== undefined || marked.to !== undefined) {
      const a = x(Number(marked.from ?? 0));
      const b = x(Number(marked.to ?? end));
      ctx.fillStyle = 'rgba(40,100,200,0.12)';
      ctx.fillRect(a, top, Math.max(1, b - a), height);
      ctx.strokeStyle = 'rgba(40,100,200,0.7)';
      ctx.strokeRect(a, top, Math.max(1, b - a), height);
    }
    // Markers: a dashed line each, labelled at the top (canvas text: nothing
    // from the dump becomes markup).
    const dpr = window.devicePixelRatio || 1;
    for (const m of marked.markers ?? []) {
      const mx = x(m.time_ns);
      ctx.strokeStyle = '#6941c6';
      ctx.lineWidth = dpr;
      ctx.setLineDash([4 * dpr, 3 * dpr]);
      ctx.beginPath();
      ctx.moveTo(mx, top);
      ctx.lineTo(mx, top + height);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = '#6941c6';
      ctx.font = `${11 * dpr}px sans-serif`;
      ctx.fillText(m.label.length > 24 ? `${m.label.slice(0, 23)}…` : m.label, mx + 3 * dpr, top + 11 * dpr);
    }
    if (marked.at !== undefined) {
      ctx.strokeStyle = '#b42318';
      ctx.lineWidth = 2 * (window.devicePixelRatio || 1);
      ctx.beginPath();
      ctx.moveTo(x(Number(marked.at)), top);
      ctx.lineTo(x(Number(marked.at)), top + height);
      ctx.stroke();
    }
    ctx.restore();
  };
}

// A drag selects a range, a click (under 3 px of movement) an instant;
// without handlers, neither (a timeline drawn before ranges can be asked).
export function pointerHooks(handlers) {
  if (!handlers) return {};
  return {
    ready: [(u) => {
      let downX = null;
      u.over.addEventListener('mousedown', (e) => { downX = e.clientX; });
      u.over.addEventListener('mouseup', (e) => {
        if (downX !== null && Math.abs(e.clientX - downX) < 3) {
          const left = e.clientX - u.over.getBoundingClientRect().left;
          handlers.onInstant(toNs(u.posToVal(left, 'x')));
        }
        downX = null;
      });
    }],
    setSelect: [(u) => {
      if (u.select.width < 3) return;
      const a = toNs(u.posToVal(u.select.left, 'x'));
      const b = toNs(u.posToVal(u.select.left + u.select.width, 'x'));
      if (b > a) handlers.onRange(a, b);
    }],
  };
}

// Tick labels without a needless ".0": "150 ms", "1.25 s".
const tick = (seconds) => duration(Math.round(seconds * 1e9)).replace(/\.0+ /, ' ').replace(/(\.\d*?)0+ /, '$1 ');
// Byte ticks on binary steps (16 KiB, 64 KiB, 1 MiB), so the labels are round.
export const byteIncrs = [];
for (let scale = 1; scale <= 1024 ** 4; scale *= 1024) for (const m of [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]) byteIncrs.push(m * scale);
export const byteTick = (v) => bytes(v).replace(/\.0+ /, ' ');
// Rate ticks in thousands and millions ("50 M"): grouped digits overran the
// axis label once a churn reached tens of millions per second.
const rateTick = (v) => {
  for (const [scale, unit] of [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
    if (Math.abs(v) >= scale) return `${+(v / scale).toPrecision(3)} ${unit}`;
  }
  return integer(Math.round(v));
};

// The right axis of both charts, wide enough for the live-block count's longest
// tick label (ticks go a step past the highest value), so its title never
// overlaps the ticks. Measured in uPlot's axis font.
export function countAxisSize(counts) {
  const highest = Math.max(0, ...counts.filter((v) => v !== null));
  const context = document.createElement('canvas').getContext('2d');
  context.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif';
  const text = integer(Math.ceil(highest * 1.25) + 10);
  return Math.max(50, Math.ceil(context.measureText(text).width) + 22);
}

export const timeAxis = { label: 'time since start', space: 70, values: (_, ticks) => ticks.map(tick) };
export const timeSeries = { label: 'time', value: (_, v) => (v === null ? '—' : duration(Math.round(v * 1e9))) };

function heapChart(t, width, draw, hooks, sync, drag, rightSize) {
  const x = t.time_ns.map((ns) => ns / 1e9);
  const series = [timeSeries,
    { label: 'heap', stroke: '#2864c8', fill: 'rgba(40,100,200,0.10)', value: (_, v) => bytes(v) },
    { label: 'heap max', stroke: '#8aa8e0', dash: [4, 3], value: (_, v) => bytes(v) }];
  const data = [x, t.heap_bytes, t.heap_max_bytes];
  const rss = (t.rss_bytes || []).filter((v) => v !== null);
  if (rss.length > 0) {
    // RSS dwarfs a small heap: then it starts hidden (its legend entry shows it).
    const heapMax = Math.max(1, ...t.heap_max_bytes);
    series.push({ label: 'RSS', stroke: '#c8641e', spanGaps: true, show: Math.max(...rss) <= 8 * heapMax,
      points: { show: true, size: 4 }, value: (_, v) => bytes(v) });
    data.push(t.rss_bytes);
  }
  series.push({ label: 'live blocks', stroke: '#3c9a50', scale: 'count', value: (_, v) => integer(v) });
  data.push(t.live_count);
  const opts = {
    width, height: 260, series,
    scales: { x: { time: false } },
    cursor: { drag: { x: drag, y: false, setScale: false }, sync: { key: sync } },
    axes: [timeAxis,
      { label: 'bytes', size: 80, incrs: byteIncrs, values: (_, ticks) => ticks.map(byteTick) },
      { scale: 'count', side: 1, size: rightSize, label: 'live blocks', grid: { show: false }, values: (_, ticks) => ticks.map(integer) }],
    hooks: { ...hooks, draw: [draw] },
  };
  return [opts, data];
}

// A chart of counts per second under the heap chart: its x cursor, drag and
// marks shared, and an empty right axis as wide as the heap chart's, so the
// plots line up.
function perSecondChart(series, width, draw, hooks, sync, drag, rightSize) {
  return {
    width, height: 150, series: [timeSeries, ...series],
    scales: { x: { time: false } },
    cursor: { drag: { x: drag, y: false, setScale: false }, sync: { key: sync } },
    axes: [timeAxis, { label: 'per second', size: 80, values: (_, ticks) => ticks.map(rateTick) },
      { side: 1, label: ' ', size: rightSize, grid: { show: false }, ticks: { show: false }, values: (_, ticks) => ticks.map(() => '') }],
    hooks: { ...hooks, draw: [draw] },
  };
}

const perSecond = (t, counts) => counts.map((c) => (c === null ? null : (c * 1e9) / t.bucket_ns));
const rateValue = (_, v) => (v === null ? '—' : integer(Math.round(v)));

function rateChart(t, ...chart) {
  const opts = perSecondChart([
    { label: 'allocations/s', stroke: '#7c3aed', value: rateValue },
    { label: 'frees/s', stroke: '#0e9384', dash: [4, 3], value: rateValue }], ...chart);
  return [opts, [t.time_ns.map((ns) => ns / 1e9), perSecond(t, t.alloc_count), perSecond(t, t.free_count)]];
}

// Temporary allocations (freed before their thread's next allocation, as the
// report counts them) per second, on the rate chart's scale of units: a line
// close to the allocation rate above means most allocations were temporary.
// Each counts in the bucket of its free (docs/api.md).
function temporaryChart(t, ...chart) {
  const counts = t.temporary_count;
  const opts = perSecondChart([{ label: 'temporary/s', stroke: '#d97706', fill: 'rgba(217,119,6,0.10)',
    value: (_, v, _s, i) => (v === null || i === null ? '—' : `${integer(Math.round(v))} (${integer(counts[i])} in the bucket)`) }], ...chart);
  return [opts, [t.time_ns.map((ns) => ns / 1e9), perSecond(t, counts)]];
}

// Draws the charts into `box`. marked: {from, to, at}; endNs: where the
// drawn span ends (the dump's duration, or the range's end), for the last
// recording-off period; handlers: {onRange, onInstant}, or null for a chart
// that only shows.
export function drawTimeline(box, t, marked, endNs, handlers) {
  const width = Math.max(400, document.getElementById('view').clientWidth - 60);
  const draw = marks({ ...marked, recording: t.recording, markers: t.markers }, t.range?.from_ns ?? 0, endNs);
  const hooks = pointerHooks(handlers);
  const sync = `memrec-${Math.random()}`;
  const rightSize = countAxisSize(t.live_count);
  const heap = el('div', { class: 'chart', role: 'img', 'aria-label': 'Heap bytes, RSS and live blocks over time' });
  box.append(heap);
  new uPlot(...heapChart(t, width, draw, hooks, sync, Boolean(handlers), rightSize), heap);
  if (Array.isArray(t.alloc_count) && Array.isArray(t.free_count)) {
    const rates = el('div', { class: 'chart', role: 'img', 'aria-label': 'Allocations and frees per second' });
    box.append(rates);
    new uPlot(...rateChart(t, width, draw, hooks, sync, Boolean(handlers), rightSize), rates);
  }
  if (Array.isArray(t.temporary_count)) {
    const total = t.temporary_count.reduce((a, c) => a + c, 0);
    const label = `Temporary allocations per second: ${integer(total)} in all`;
    const temporary = el('div', { class: 'chart', role: 'img', 'aria-label': label });
    box.append(temporary, el('p', { class: 'detail', id: 'temporary-total' },
      `${integer(total)} temporary ${total === 1 ? 'allocation' : 'allocations'} (freed before their thread allocated again), ` +
      'each counted at its free.'));
    new uPlot(...temporaryChart(t, width, draw, hooks, sync, Boolean(handlers), rightSize), temporary);
  }
}
