// memrec view's page: reads the state from the URL hash (state.js), keeps the
// header (dump picker, views, range and instant chips, downloads) in step with
// it and renders the view, showing loading and errors in the page, never a blank.
import { api } from './api.js';
import { renderAllocations } from './allocations.js';
import { renderDiff } from './diff.js';
import { downloadLinks } from './downloads.js';
import { dumpLabel, processTree, renderDumps } from './dumps.js';
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

// While a dump is live (memrec view --follow), asks the dump list every 2 s
// and, when a dump grew, appeared or changed state, renders the view again
// in place: the range and instant are in the URL, the scroll is put back,
// and a range without an end follows the live edge.
function followLive() {
  if (following !== null || !dumps?.dumps.some((d) => d.state === 'live')) return;
  following = setTimeout(async () => {
    following = null;
    let fresh;
    try {
      fresh = await api.dumps();
    } catch {
      return; // the server is gone: the next view says so
    }
    const key = (list) => JSON.stringify(list.dumps.map((d) => [d.id, d.state, d.allocations, d.duration_ns]));
    if (key(fresh) !== key(dumps)) {
      dumps = fresh;
      const y = window.scrollY;
      await render();
      window.scrollTo(0, y);
    }
    followLive();
  }, 2000);
}

function showError(message) {
  fill(root, el('div', { class: 'error', role: 'alert' }, el('h2', {}, 'Something went wrong'), el('p', {}, message)));
}

function chip(label, text, title, onReset) {
  return el('span', { class: 'chip', role: 'group', 'aria-label': label, title },
    el('span', { class: 'chip-text' }, text),
    el('button', { type: 'button', 'aria-label': `Reset the ${label.toLowerCase()}`, onclick: onReset }, '✕'));
}

function updateChips(state) {
  const box = document.getElementById('context');
  const parts = [];
  if (hasRange(state)) {
    const from = Number(state.from ?? 0);
    const to = state.to === undefined ? null : Number(state.to);
    parts.push(chip('Range', `Range ${duration(from)} – ${to === null ? 'end' : duration(to)}` + (to === null ? '' : ` (${duration(to - from)})`),
      `${state.from ?? 0} – ${state.to ?? 'end'} ns`, () => navigate({ from: null, to: null })));
  }
  if (state.at !== undefined) {
    parts.push(chip('Instant', `Instant ${duration(Number(state.at))}`, `${state.at} ns`, () => navigate({ at: null })));
  }
  // No range to drag while the dump's allocation table is built.
  const table = dumps?.dumps.find((d) => String(d.id) === state.dump)?.table;
  const ranges = table === undefined || table.state === 'ready';
  if (parts.length === 0) {
    parts.push(el('span', { class: 'detail' },
      ranges ? 'Whole recording: drag on the overview\'s timeline to select a range.' : 'Whole recording.'));
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
  // Followed dumps join the list as they appear.
  if (select.options.length !== dumps.dumps.length) {
    select.replaceChildren(...dumps.dumps.map((d) => el('option', { value: d.id }, `${d.id}: ${dumpLabel(d)}`)));
  }
  if (!picking) {
    picking = true;
    // Another dump has its own times: the range and instant do not carry over.
    select.addEventListener('change', () => { location.hash = viewHash(readState().view || 'overview', { dump: select.value }); });
  }
  select.value = state.dump;
  updateChips(state);
  downloadLinks(document.getElementById('downloads'), state, dumps.dumps);
}

// A link's `mark:LABEL` in from, to or at becomes the marker's ns (the
// dump's summary lists them), in place, so every view reads plain times.
async function resolveMarks() {
  const marks = markValues(location.hash);
  if (Object.keys(marks).length === 0) return;
  const query = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const dump = query.get('dump') ?? String(processTree(dumps.dumps)[0]?.dump.id ?? 0);
  const { markers } = await api.summary(dump, {});
  for (const [key, label] of Object.entries(marks)) query.set(key, String(resolveMark(label, markers ?? [])));
  history.replaceState(null, '', `${location.hash.split('?')[0]}?${query}`);
}

async function render() {
  const mine = ++generation;
  let state = readState();
  status.textContent = 'Loading…';
  root.setAttribute('aria-busy', 'true');
  try {
    if (!dumps) dumps = await api.dumps();
    await resolveMarks();
    state = readState();
    if (!state.view) state.view = dumps.dumps.length > 1 ? 'dumps' : 'overview';
    // The root of the process tree (the program the user ran), not the first file.
    state.dump ??= String(processTree(dumps.dumps)[0]?.dump.id ?? 0);
    updateChrome(state);
    const view = VIEWS[state.view];
    if (!view) throw new Error(`There is no view "${state.view}": try Overview, Call sites, Flamegraph or Allocations.`);
    const dump = dumps.dumps.find((d) => String(d.id) === state.dump);
    const box = el('div');
    await view(box, state, navigate, { dumps: dumps.dumps, dump, whenBuilt: () => renderWhenBuilt(state.dump) });
    if (mine === generation) root.replaceChildren(...box.childNodes);
    // Which hash the view shows, for tests and scripts that wait for it.
    if (mine === generation) root.dataset.rendered = location.hash;
  } catch (e) {
    if (mine === generation && e.building !== undefined) {
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
  } finally {
    if (mine === generation) {
      status.textContent = '';
      root.removeAttribute('aria-busy');
    }
    followLive();
  }
}

window.addEventListener('hashchange', render);
render();
