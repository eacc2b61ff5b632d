// The overview: summary cards and the heap/RSS timeline (uPlot).
import uPlot from '/vendor/uPlot.esm.js';
import { api } from './api.js';
import { bytes, duration, el, integer } from './format.js';

function card(label, value, detail) {
  return el('section', { class: 'card', 'aria-label': label },
    el('h3', {}, label), el('p', { class: 'value' }, value), detail ? el('p', { class: 'detail' }, detail) : null);
}

function cards(s) {
  const list = [
    card('Peak heap', bytes(s.peak.bytes),
      `${integer(s.peak.bytes)} bytes` + (s.peak.time_ns !== null ? ` at ${duration(s.peak.time_ns)}` : '')),
    card('Leaked', bytes(s.leaked.bytes), `${integer(s.leaked.bytes)} bytes in ${integer(s.leaked.count)} blocks`),
    card('Allocations', integer(s.allocations), `${bytes(s.allocated_bytes)} requested, ${integer(s.temporary)} temporary`),
    card('Duration', duration(s.duration_ns), `${integer(s.threads)} threads`),
  ];
  if (s.runtime_retained.bytes > 0) {
    list.push(card('Kept by the runtime', bytes(s.runtime_retained.bytes), `${integer(s.runtime_retained.count)} blocks`));
  }
  const lost = Object.entries(s.counters || {}).filter(([, v]) => v > 0);
  if (!s.dump.complete || lost.length > 0) {
    const why = [];
    if (s.dump.truncated_at !== null) why.push(`cut at byte ${integer(s.dump.truncated_at)}, ${integer(s.dump.lost_bytes)} bytes lost`);
    if (s.dump.error) why.push(s.dump.error);
    if (!s.dump.clean_end && s.dump.truncated_at === null) why.push('no clean end record');
    for (const [name, value] of lost) why.push(`${name}: ${integer(value)}`);
    list.push(card('Recorder', s.dump.complete ? 'complete' : 'incomplete', why.join('; ')));
  }
  return el('div', { class: 'cards' }, list);
}

function chart(t, width) {
  const x = t.time_ns.map((ns) => ns / 1e9);
  const hasRss = t.rss_bytes.some((v) => v !== null);
  const series = [
    { label: 'time', value: (_, v) => (v === null ? '—' : duration(Math.round(v * 1e9))) },
    { label: 'heap', stroke: '#2864c8', fill: 'rgba(40,100,200,0.12)', value: (_, v) => bytes(v) },
    { label: 'heap max', stroke: '#8aa8e0', dash: [4, 3], value: (_, v) => bytes(v) },
  ];
  const data = [x, t.heap_bytes, t.heap_max_bytes];
  if (hasRss) {
    series.push({ label: 'RSS', stroke: '#c8641e', spanGaps: true, points: { show: true, size: 5 }, value: (_, v) => bytes(v) });
    data.push(t.rss_bytes);
  }
  series.push({ label: 'live blocks', stroke: '#3c9a50', scale: 'count', value: (_, v) => integer(v) });
  data.push(t.live_count);
  const opts = {
    width,
    height: 300,
    scales: { x: { time: false } },
    axes: [
      { label: 'time since start', values: (_, ticks) => ticks.map((t) => duration(Math.round(t * 1e9))) },
      { label: 'bytes', size: 80, values: (_, ticks) => ticks.map(bytes) },
      { scale: 'count', side: 1, label: 'live blocks', grid: { show: false } },
    ],
    series,
  };
  return { opts, data };
}

export async function renderOverview(root, state) {
  const [summary, timeline] = await Promise.all([api.summary(state.dump), api.timeline(state.dump)]);
  root.replaceChildren(
    el('h2', {}, 'Overview'),
    el('p', { class: 'process' }, `pid ${summary.pid}: `, el('code', {}, (summary.cmdline || []).join(' ') || summary.exe)),
    cards(summary),
    el('h2', {}, 'Heap over time'),
  );
  const box = el('div', { class: 'chart', role: 'img', 'aria-label': 'Heap bytes, RSS and live blocks over time' });
  root.append(box);
  if (timeline.time_ns.length === 0) {
    box.append(el('p', { class: 'empty' }, 'This dump has no heap events to draw.'));
    return;
  }
  const { opts, data } = chart(timeline, Math.max(400, document.getElementById('view').clientWidth - 40));
  new uPlot(opts, data, box);
  root.append(el('p', { class: 'detail' },
    `${timeline.time_ns.length} buckets of ${duration(timeline.bucket_ns)}; the line is the heap at each bucket's end, the dashed one its highest.`));
}
