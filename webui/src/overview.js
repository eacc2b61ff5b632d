// The overview: summary cards for the selected range (the whole dump when
// none), the timeline, on which a drag selects a range and a click an instant,
// and the heap at that instant.
import { api } from './api.js';
import { buildingNote, bytes, duration, el, fill, integer } from './format.js';
import { histograms } from './histograms.js';
import { instantPanel } from './instant.js';
import { hasRange, rangeParams } from './state.js';
import { markerList } from './markers.js';
import { drawTimeline, offPeriods } from './timeline.js';
import { refusedNote, rangeOrWhole, wholeRun } from './refused.js';
import { topSites } from './top_sites.js';

function card(label, value, detail) {
  return el('section', { class: 'card', 'aria-label': label },
    el('h3', {}, label), el('p', { class: 'value' }, value), detail ? el('p', { class: 'detail' }, detail) : null);
}

function exact(n) {
  return el('span', { title: `${integer(n)} bytes` }, bytes(n));
}

// The summary names the counters that mean events were lost or stacks cut
// (loss_counters, docs/api.md); the others are plain counts.
function recorderCard(s) {
  const loss = s.loss_counters || [];
  const lost = Object.entries(s.counters || {}).filter(([name, v]) => loss.includes(name) && v > 0);
  // Why the dump holds less than the program did (docs/analyzer.md, "Dump notes").
  const notes = s.dump.notes || [];
  if (s.dump.complete && lost.length === 0 && notes.length === 0) return null;
  const why = notes.map((n) => n.message);
  if (s.dump.truncated_at !== null) why.push(`cut at byte ${integer(s.dump.truncated_at)}, ${integer(s.dump.lost_bytes)} bytes lost`);
  if (s.dump.error) why.push(s.dump.error);
  if (!s.dump.clean_end && !s.dump.ended_by_exec && s.dump.truncated_at === null) why.push('no clean end record');
  for (const [name, value] of lost) why.push(`${name}: ${integer(value)}`);
  return card('Recorder', s.dump.complete ? 'complete' : 'incomplete', why.join('; '));
}

// Under a range, the range's length: the other cards are the range's too.
function durationCard(s) {
  const threads = `${integer(s.threads)} thread${s.threads === 1 ? '' : 's'}`;
  const range = s.range;
  if (!range || (range.from_ns === 0 && range.to_ns >= s.duration_ns)) return card('Duration', duration(s.duration_ns), threads);
  return card('Duration', duration(range.to_ns - range.from_ns), `of a ${duration(s.duration_ns)} run; ${threads}`);
}

function cards(s) {
  return el('div', { class: 'cards' },
    card('Peak heap', exact(s.peak.bytes),
      `${integer(s.peak.bytes)} bytes` + (s.peak.time_ns !== null ? ` at ${duration(s.peak.time_ns)}` : '')),
    card('Leaked', exact(s.leaked.bytes), `${integer(s.leaked.bytes)} bytes in ${integer(s.leaked.count)} blocks`),
    card('Allocations', integer(s.allocations), `${integer(s.allocated_bytes)} bytes requested, ${integer(s.temporary)} temporary`),
    durationCard(s),
    s.runtime_retained.bytes > 0
      ? card('Kept by the runtime', exact(s.runtime_retained.bytes), `${integer(s.runtime_retained.count)} blocks`) : null,
    recorderCard(s));
}

function rangeNote(s, state) {
  if (state.from === undefined && state.to === undefined) {
    return el('p', { class: 'detail' }, 'The whole recording. Drag on the timeline to select a range; click to see the heap at an instant.');
  }
  const from = Number(s.range?.from_ns ?? state.from ?? 0);
  const to = Number(s.range?.to_ns ?? state.to ?? s.duration_ns);
  return el('p', { class: 'detail', id: 'range-note' },
    `Figures for ${duration(from)} – ${duration(to)}: allocations made in the range; leaked means still live at its end.`);
}

// Above a timeline drawn before the dump's allocation table is built (or
// when it will not be): what comes with the table.
function earlyNote(table) {
  if (table.state === 'failed') {
    return el('p', { class: 'detail', id: 'early-note' },
      `The whole recording. Ranges and instants are not available: ${table.error}`);
  }
  return el('div', { id: 'early-note' }, el('p', { class: 'detail' }, 'The whole recording.'),
    buildingNote('Ranges, instants and a timeline in finer buckets come', table.percent));
}

export async function renderOverview(root, state, navigate, context) {
  // The timeline shows the whole run with the range shaded, or (`tz=1`) only the range.
  const zoomed = state.tz === '1' && hasRange(state);
  // A large dump is served before its allocation table: the whole run's
  // summary and timeline come at once (the timeline in the report's coarser
  // buckets, `table` saying so), a range's timeline once the table is built.
  // A range's figures wait for the table: their 503 shows the app's building view.
  // A followed dump may refuse ranges (refused.js): the whole run's cards then.
  const [{ answer: summary, refused }, { answer: timeline }, { answer: top }] = await Promise.all([
    rangeOrWhole(state, (s) => api.summary(s.dump, rangeParams(s))),
    rangeOrWhole(zoomed ? state : wholeRun(state), (s) => api.timeline(s.dump, rangeParams(s))),
    rangeOrWhole(state, topSites)]);
  const n = timeline.time_ns.length;
  const endNs = context.dump?.duration_ns ?? (n > 0 ? timeline.time_ns[n - 1] + timeline.bucket_ns : 0);
  // The whole run's timeline before the table: drawn, but no range or instant to pick yet.
  const early = timeline.table !== undefined && timeline.table.state !== 'ready';
  fill(root,
    el('h2', {}, 'Overview'),
    el('p', { class: 'process' }, `pid ${summary.pid}: `, el('code', {}, (summary.cmdline || []).join(' ') || summary.exe)),
    refused ? refusedNote(refused) : early ? earlyNote(timeline.table) : rangeNote(summary, state),
    cards(summary),
    top,
    el('div', { class: 'toolbar' }, el('h2', {}, 'Heap over time'),
      hasRange(state) ? el('label', { class: 'check' },
        el('input', { type: 'checkbox', checked: zoomed, onchange: (e) => navigate({ tz: e.target.checked ? '1' : null }) }),
        ' zoom the timeline to the range') : null));
  const box = el('div', { class: 'timeline' });
  root.append(box);
  if (timeline.time_ns.length === 0) {
    box.append(el('p', { class: 'empty' }, 'This dump has no heap events to draw.'));
  } else {
    const marked = zoomed ? { at: state.at } : { from: state.from, to: state.to, at: state.at };
    // On a live dump, a range dragged into the last bucket ends at the live edge: no `to`.
    const live = context.dump?.state === 'live';
    drawTimeline(box, timeline, marked, zoomed ? Number(state.to ?? endNs) : endNs, early && !live ? null : {
      onRange: (from, to) => navigate({ from: String(from), to: live && to >= endNs - timeline.bucket_ns ? null : String(to) }),
      onInstant: (at) => navigate({ at: String(at) }),
    });
    const markers = markerList(timeline.markers, state);
    if (markers) root.append(markers);
    const off = offPeriods(timeline.recording, timeline.range?.from_ns ?? 0, zoomed ? Number(state.to) : endNs);
    root.append(el('p', { class: 'detail', id: 'buckets' },
      `${timeline.time_ns.length} buckets of ${duration(timeline.bucket_ns)}; the line is the heap at each bucket's end, ` +
      'the dashed one its highest.'));
    if (off.length > 0) {
      root.append(el('p', { class: 'detail', id: 'recording-off' },
        `Recording was off (grey): ${off.map(([a, b]) => `${duration(a)} – ${duration(b)}`).join(', ')}.`));
    }
  }
  const classes = histograms(summary);
  if (classes) root.append(classes);
  if (early && timeline.table.state === 'building') context.whenBuilt?.();
  if (state.at !== undefined && (!early || context.dump?.state === 'live')) root.append(await instantPanel(state, () => navigate({ at: null })));
}
