// The Maps view's chart (uPlot, with the overview timeline's axes): the live
// anonymously mapped bytes over the range, the highest in each bucket, and the
// number of live mappings, with the instant and the markers drawn as on the
// overview. A drag selects a range, a click an instant, as on the overview.
import uPlot from '/vendor/uPlot.esm.js';
import { bytes, el, integer } from './format.js';
import { byteIncrs, byteTick, countAxisSize, marks, pointerHooks, timeAxis, timeSeries } from './timeline.js';

// series: /maps's `series`; marked: {at, markers}; handlers: {onRange, onInstant}.
export function drawMapsChart(box, series, marked, endNs, handlers) {
  const width = Math.max(400, document.getElementById('view').clientWidth - 60);
  const chart = el('div', { class: 'chart', role: 'img', 'aria-label': 'Mapped bytes and live mappings over time',
    'data-markers': marked.markers?.length ?? 0 });
  box.append(chart);
  const x = series.time_ns.map((ns) => ns / 1e9);
  const first = series.time_ns[0] ?? 0;
  const opts = {
    width, height: 240,
    scales: { x: { time: false } },
    cursor: { drag: { x: true, y: false, setScale: false } },
    series: [timeSeries,
      { label: 'mapped', stroke: '#7a4a00', fill: 'rgba(200,120,30,0.12)', value: (_, v) => bytes(v) },
      { label: 'mapped max', stroke: '#d9a35b', dash: [4, 3], value: (_, v) => bytes(v) },
      { label: 'live mappings', stroke: '#3c9a50', scale: 'count', value: (_, v) => integer(v) }],
    axes: [timeAxis,
      { label: 'bytes', size: 80, incrs: byteIncrs, values: (_, ticks) => ticks.map(byteTick) },
      { scale: 'count', side: 1, size: countAxisSize(series.live_count), label: 'live mappings', grid: { show: false },
        values: (_, ticks) => ticks.map(integer) }],
    hooks: { ...pointerHooks(handlers), draw: [marks(marked, first, endNs)] },
  };
  new uPlot(opts, [x, series.mapped_bytes, series.mapped_max_bytes, series.live_count], chart);
}
