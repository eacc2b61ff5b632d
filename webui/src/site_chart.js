// An expanded call site's chart (uPlot, with the overview timeline's axes and
// marks): its live bytes and live blocks over the range, exact at the range's
// first ns and at each bucket's end (/sites/{site}/series), the instant and
// the markers drawn as on the overview; hovering names the exact figures. A
// drag selects a range, a click an instant, as on the overview.
import uPlot from '/vendor/uPlot.esm.js';
import { bytes, duration, el, integer } from './format.js';
import { byteIncrs, byteTick, countAxisSize, marks, pointerHooks, timeAxis, timeSeries } from './timeline.js';

const exactBytes = (v) => (v === null ? '—' : `${bytes(v)} (${integer(v)} bytes)`);

// series: the /series answer; at: the selected instant (ns), drawn when in
// the range; handlers: {onRange, onInstant}.
export function siteChart(series, at, handlers) {
  const { from_ns: from, to_ns: to } = series.range;
  const n = series.live_bytes.length;
  const last = { bytes: series.end.live_bytes, count: series.end.live_count };
  const box = el('div', { class: 'site-chart' });
  const chart = el('div', {
    class: 'chart', role: 'img', 'data-end-bytes': last.bytes, 'data-end-count': last.count,
    'data-markers': series.markers.length,
    'aria-label': `Live bytes and live blocks of this site from ${duration(from)} to ${duration(to)}: ` +
      `${integer(last.bytes)} bytes in ${integer(last.count)} blocks at the end`,
  });
  box.append(chart, el('p', { class: 'detail site-chart-note' },
    `Live bytes (blue) and blocks (green, dashed) from ${duration(from)} to ${duration(to)}` +
    `${n > 1 ? `, at the start and the end of each of ${integer(n - 1)} buckets of ${duration(series.bucket_ns)}` : ''}; ` +
    `at the end ${integer(last.bytes)} bytes in ${integer(last.count)} blocks.` +
    (series.markers.length > 0 ? ` Markers (dashed): ${series.markers.map((m) => m.label).join(', ')}.` : '')));
  const width = Math.max(400, document.getElementById('view').clientWidth - 80);
  const opts = {
    width, height: 220,
    scales: { x: { time: false, range: () => [from / 1e9, Math.max(to, from + 1) / 1e9] } },
    cursor: { drag: { x: Boolean(handlers), y: false, setScale: false } },
    series: [timeSeries,
      { label: 'live bytes', stroke: '#2864c8', width: 2, fill: 'rgba(40,100,200,0.10)', value: (_, v) => exactBytes(v) },
      // Dashed: where the blocks are all one size it lies on the bytes' line.
      { label: 'live blocks', stroke: '#3c9a50', dash: [6, 4], scale: 'count', value: (_, v) => integer(v) }],
    axes: [timeAxis,
      { label: 'live bytes', size: 80, incrs: byteIncrs, values: (_, ticks) => ticks.map(byteTick) },
      { scale: 'count', side: 1, size: countAxisSize(series.live_count), label: 'live blocks', grid: { show: false },
        values: (_, ticks) => ticks.map(integer) }],
    hooks: {
      ...pointerHooks(handlers),
      draw: [marks({ markers: series.markers, at: at !== undefined && at >= from && at <= to ? at : undefined }, from, to)],
    },
  };
  // Drawn once the row is in the page: uPlot measures its container.
  const draw = () => new uPlot(opts, [series.time_ns.map((ns) => ns / 1e9), series.live_bytes, series.live_count], chart);
  return { box, draw };
}
