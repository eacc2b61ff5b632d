// memrec view's page: reads the state from the URL hash (#/VIEW?dump=N&…),
// renders that view, and shows loading and errors in the page, never a blank.
import { api } from './api.js';
import { el } from './format.js';
import { renderOverview } from './overview.js';
import { renderSites } from './sites.js';
import { renderFlame } from './flame.js';

const VIEWS = { overview: renderOverview, sites: renderSites, flame: renderFlame };
const root = document.getElementById('view');
const status = document.getElementById('status');
let dumps = null;
let generation = 0;

function readState() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [view, query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  const get = (name) => params.get(name);
  return { view: view || 'overview', dump: get('dump') ?? '0', sort: get('sort'), open: get('open'),
    metric: get('metric'), zoom: get('zoom'), q: get('q') };
}

function writeHash(state) {
  const params = new URLSearchParams({ dump: state.dump });
  for (const key of ['sort', 'open', 'metric', 'zoom', 'q']) {
    if (state[key]) params.set(key, state[key]);
  }
  return `#/${state.view}?${params}`;
}

function navigate(change) {
  location.hash = writeHash({ ...readState(), ...change });
}

function showError(message) {
  root.replaceChildren(el('div', { class: 'error', role: 'alert' }, el('h2', {}, 'Something went wrong'), el('p', {}, message)));
}

function updateChrome(state) {
  for (const view of Object.keys(VIEWS)) {
    const link = document.getElementById(`nav-${view}`);
    link.href = writeHash({ view, dump: state.dump });
    if (view === state.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const select = document.getElementById('dump-select');
  if (select.options.length === 0 && dumps) {
    for (const d of dumps.dumps) {
      select.append(el('option', { value: d.id }, `${d.file} (pid ${d.pid})`));
    }
    select.addEventListener('change', () => navigate({ dump: select.value, open: null }));
  }
  select.value = state.dump;
}

async function render() {
  const mine = ++generation;
  const state = readState();
  status.textContent = 'Loading…';
  root.setAttribute('aria-busy', 'true');
  try {
    if (!dumps) dumps = await api.dumps();
    updateChrome(state);
    const view = VIEWS[state.view];
    if (!view) throw new Error(`There is no view "${state.view}": try Overview, Call sites or Flamegraph.`);
    const box = el('div');
    await view(box, state, navigate);
    if (mine === generation) root.replaceChildren(...box.childNodes);
  } catch (e) {
    if (mine === generation) showError(e.message);
  } finally {
    if (mine === generation) {
      status.textContent = '';
      root.removeAttribute('aria-busy');
    }
  }
}

window.addEventListener('hashchange', render);
render();
