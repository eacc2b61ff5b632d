// memrec view's page: reads the state from the URL hash (state.js), keeps the
// header (dump picker, views, range and instant chips, downloads) in step with
// it and renders the view, showing loading and errors in the page, never a blank.
import { api } from './api.js';
import { renderAllocations } from './allocations.js';
import { renderDiff } from './diff.js';
import { downloadLinks } from './downloads.js';
import { dumpLabel, loadPercent, loadProgress, processTree, renderDumps, served } from './dumps.js';
import { renderFlame } from './flame.js';
import { renderMaps } from './maps.js';
import { buildingNote, duration, el, fill } from './format.js';
import { renderOverview } from './overview.js';
import { renderSites } from './sites.js';
import { markValues, resolveMark } from './markers.js';
import { hasRange, navigate, readState, viewHash } from './state.js';

const VIEWS = {
  dumps: renderDumps, overview: renderOverview, sites: renderSites, flame: renderFlame,
  allocations: renderAllocations, maps: renderMaps, diff: renderDiff,
};
const root = document.getElementById('view');
const status = document.getElementById('status');
let dumps = null;
let generation = 0;
let polling = null;
let following = null;
let picking = false;  // the dump picker's listener is added

// While a dump's allocation table is built (a large dump is served before
// it: docs/api.md), asks the dump list every 2 s, shows its percent in the
// view's notes, and renders the view again once the table is there.
function renderWhenBuilt(dumpId) {
  if (polling !== null) return;
  const tick = async () => {
    let table = null;
    try {
      dumps = await api.dumps();
      table = dumps.dumps.find((d) => String(d.id) === dumpId)?.table ?? null;
    } catch {
      polling = null; // the server is gone: the next view says so
      return;
    }
    if (table?.state === 'building' && readState().dump === dumpId) {
      for (const span of document.querySelectorAll('.building-percent')) span.textContent = `${table.percent} %`;
      updateChips(readState());
      polling = setTimeout(tick, 2000);
      return;
    }
    polling = null;
    if (readState().dump === dumpId) render();
  };
  polling = setTimeout(tick, 2000);
}

// The dumps served, which the views show; the others are still loading or did not load.
const servedDumps = () => dumps.dumps.filter(served);

// While a dump is live (memrec view --follow) or still loading, asks the
// dump list every 2 s and, when a dump grew, appeared or changed state,
// renders the view again in place (render's live mode); a loading dump's
// progress is updated where it shows. `data-updates` on the view counts the
// renders, for tests and scripts that wait for the next one.
function followLive() {
  if (following !== null || !dumps?.dumps.some((d) => d.state === 'live' || d.state === 'loading')) return;
  following = setTimeout(async () => {
    following = null;
    let fresh;
    try {
      fresh = await api.dumps();
    } catch {
      return; // the server is gone: the next view says so
    }
    const key = (list) => JSON.stringify(list.dumps.map((d) => [d.id, d.state, d.allocations, d.duration_ns]));
    for (const d of fresh.dumps.filter((f) => f.state === 'loading')) {
      for (const node of document.querySelectorAll(`.load-percent[data-dump="${d.id}"]`)) node.textContent = `${loadPercent(d)} %`;
      for (const node of document.querySelectorAll(`progress[data-dump="${d.id}"]`)) node.value = loadPercent(d);
    }
    if (key(fresh) !== key(dumps)) {
      dumps = fresh;
      if (await render({ live: true })) root.dataset.updates = String(Number(root.dataset.updates ?? 0) + 1);
    }
    followLive();
  }, 2000);
}

// A view of a dump not served yet: shown as loading (a failed one answers its error).
function loadingError(d) {
  if (d.load.state === 'failed') return new Error(`Dump ${d.id} did not load: ${d.load.error}`);
  const e = new Error(`${d.file} is still loading.`);
  e.loading = loadPercent(d);
  return e;
}

function showError(message) {
  fill(root, el('div', { class: 'error', role: 'alert' }, el('h2', {}, 'Something went wrong'), el('p', {}, message)));
}

function chip(label, text, title, onReset) {
  return el('span', { class: 'chip', role: 'group', 'aria-label': label, title },
    el('span', { class: 'chip-text' }, text),
    el('button', { type: 'button', 'aria-label': `Reset the ${label.toLowerCase()}`, onclick: onReset }, '✕'));
}

// On a live dump, whether the range follows the live edge (it has no end:
// the server's default end is the dump's latest event) or stays fixed.
function liveEdgeToggle(state, dump) {
  const box = el('input', { type: 'checkbox', checked: state.to === undefined,
    onchange: (e) => navigate({ to: e.target.checked ? null : String(Math.max(dump.duration_ns, Number(state.from ?? 0) + 1)) }) });
  return el('label', { class: 'check live-edge', title: 'The range grows with the dump, or stays where it ends now' },
    box, ' to the live edge');
}

function updateChips(state) {
  const box = document.getElementById('context');
  const parts = [];
  const dump = dumps?.dumps.find((d) => String(d.id) === state.dump);
  const live = dump?.state === 'live';
  if (hasRange(state)) {
    const from = Number(state.from ?? 0);
    const to = state.to === undefined ? null : Number(state.to);
    const end = live ? 'live edge' : 'end';
    parts.push(chip('Range', `Range ${duration(from)} – ${to === null ? end : duration(to)}` + (to === null ? '' : ` (${duration(to - from)})`),
      `${state.from ?? 0} – ${state.to ?? end} ns`, () => navigate({ from: null, to: null })));
    if (live) parts.push(liveEdgeToggle(state, dump));
  }
  if (state.at !== undefined) {
    parts.push(chip('Instant', `Instant ${duration(Number(state.at))}`, `${state.at} ns`, () => navigate({ at: null })));
  }
  // No range to drag while the dump's allocation table is built.
  const table = dump?.table;
  const ranges = live || table === undefined || table.state === 'ready';
  if (parts.length === 0) {
    parts.push(el('span', { class: 'detail' },
      !ranges ? 'Whole recording.' : live
        ? 'Whole recording: drag on the overview\'s timeline to select a range; one dragged to its right end follows the live edge.'
        : 'Whole recording: drag on the overview\'s timeline to select a range.'));
  }
  fill(box, parts);
}

function updateChrome(state) {
  for (const view of Object.keys(VIEWS)) {
    const link = document.getElementById(`nav-${view}`);
    link.href = viewHash(view, state);
    if (view === state.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.getElementById('nav-dumps').hidden = dumps.dumps.length < 2;
  const select = document.getElementById('dump-select');
  // Followed dumps join the list as they appear, loading ones become their process.
  const labels = dumps.dumps.map((d) => `${d.id}: ${dumpLabel(d)}`);
  if ([...select.options].map((o) => o.textContent).join('\n') !== labels.join('\n')) {
    select.replaceChildren(...dumps.dumps.map((d, i) => el('option', { value: d.id }, labels[i])));
  }
  if (!picking) {
    picking = true;
    // Another dump has its own times: the range and instant do not carry over.
    select.addEventListener('change', () => { location.hash = viewHash(readState().view || 'overview', { dump: select.value }); });
  }
  select.value = state.dump;
  updateChips(state);
  downloadLinks(document.getElementById('downloads'), state, servedDumps());
}

// A link's `mark:LABEL` in from, to or at becomes the marker's ns (the
// dump's summary lists them), in place, so every view reads plain times.
async function resolveMarks() {
  const marks = markValues(location.hash);
  if (Object.keys(marks).length === 0) return;
  const query = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const dump = query.get('dump') ?? String(processTree(servedDumps())[0]?.dump.id ?? 0);
  const { markers } = await api.summary(dump, {});
  for (const [key, label] of Object.entries(marks)) query.set(key, String(resolveMark(label, markers ?? [])));
  history.replaceState(null, '', `${location.hash.split('?')[0]}?${query}`);
}

// The view of the hash. A live update (memrec view --follow) builds the new
// view off the page and swaps it in whole, the page's scroll put back. What
// else the user set is in the hash: the range, the instant, the sort, the
// open row, the flamegraph's zoom (found again by its names: flame.js).
// True when this render's view is the one shown.
async function render({ live = false } = {}) {
  const mine = ++generation;
  let state = readState();
  if (!live) status.textContent = 'Loading…';
  root.setAttribute('aria-busy', 'true');
  try {
    if (!dumps) dumps = await api.dumps();
    await resolveMarks();
    state = readState();
    if (!state.view) state.view = dumps.dumps.length > 1 ? 'dumps' : 'overview';
    // The root of the process tree (the program the user ran), not the first file.
    state.dump ??= String(processTree(servedDumps())[0]?.dump.id ?? 0);
    updateChrome(state);
    const view = VIEWS[state.view];
    if (!view) throw new Error(`There is no view "${state.view}": try Overview, Call sites, Flamegraph or Allocations.`);
    const dump = dumps.dumps.find((d) => String(d.id) === state.dump);
    const box = el('div');
    // Run once the view is in the page (uPlot measures its container).
    const shown = [];
    if (dump && !served(dump)) throw loadingError(dump);
    await view(box, state, navigate, {
      dumps: servedDumps(), allDumps: dumps.dumps, dump, live, whenBuilt: () => renderWhenBuilt(state.dump), whenShown: (fn) => shown.push(fn),
    });
    if (mine !== generation) return false;
    const x = window.scrollX;
    const y = window.scrollY;
    root.replaceChildren(...box.childNodes);
    for (const fn of shown) fn();
    if (live) window.scrollTo(x, y);
    // Which hash the view shows, for tests and scripts that wait for it.
    root.dataset.rendered = location.hash;
    return true;
  } catch (e) {
    if (mine === generation && e.loading !== undefined) {
      // Shown until the poll (followLive) sees the dump served and renders the view again.
      const d = dumps?.dumps.find((x) => String(x.id) === state.dump) ?? { id: state.dump, file: `dump ${state.dump}`, load: { fraction: e.loading / 100 } };
      fill(root, el('h2', {}, 'Loading this dump'),
        el('p', { class: 'building', role: 'status' }, `memrec view is loading ${d.file}: `, loadProgress(d),
          '. This view appears once it is read; the dumps already read are served meanwhile.'));
      root.dataset.rendered = location.hash;
    } else if (mine === generation && e.building !== undefined) {
      // The server's sentence names the percent too, which the poll would leave behind.
      fill(root, el('h2', {}, 'Building the allocation table'), buildingNote('This view appears', e.building),
        el('p', { class: 'detail' }, 'memrec view served this dump before its allocation table, which ranges, ' +
          'instants and the allocation list need. The whole run\'s figures, timeline, call sites and flamegraphs are ready.'));
      root.dataset.rendered = location.hash;
      renderWhenBuilt(state.dump);
    } else if (mine === generation) {
      showError(e.message);
      root.dataset.rendered = location.hash;
    }
    return mine === generation;
  } finally {
    if (mine === generation) {
      status.textContent = '';
      root.removeAttribute('aria-busy');
    }
    followLive();
  }
}

window.addEventListener('hashchange', () => render());
render();
