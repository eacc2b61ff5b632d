// Allocations one by one: a server-sorted, paged table over the selected range
// with filters (alive at the instant, leaked only, kept from the range, realloc
// chains only, size and lifetime ranges, thread, a function/library regex, a
// site), all in the hash. Clicking a row (`sel`) shows its backtrace and realloc chain.
import { api } from './api.js';
import { backtrace } from './backtrace.js';
import { address, bytes, durationInput, el, fill, integer, parseBytes, parseDuration, timeText } from './format.js';
import { labelParams, labelToggles, siteLocation, siteName } from './labels.js';
import { keptNote } from './kept.js';
import { rangeParams } from './state.js';

const PAGE = 100;
const SORTS = [['time', 'Time'], ['size', 'Size'], ['lifetime', 'Lifetime'], ['address', 'Address']];
const FILTER_KEYS = ['alive', 'leaked', 'kept', 'realloc', 'min_size', 'max_size', 'min_life', 'max_life', 'thread', 'site', 'match'];

function requestOf(state) {
  const sort = SORTS.some(([s]) => s === state.sort) ? state.sort : 'time';
  return {
    ...rangeParams(state),
    ...labelParams(state),
    // Kept: allocated in the range, live at the instant (or the range's end: the server's default).
    alive_at: state.alive === '1' || state.kept === '1' ? state.at : undefined,
    kept: state.kept === '1' ? 1 : undefined,
    leaked: state.leaked === '1' ? 1 : undefined,
    realloc: state.realloc === '1' ? 1 : undefined,
    min_size: state.min_size, max_size: state.max_size,
    min_life_ns: state.min_life, max_life_ns: state.max_life,
    thread: state.thread, site: state.site, match: state.match,
    sort, order: state.order === 'asc' || state.order === 'desc' ? state.order : (sort === 'time' ? 'asc' : 'desc'),
    offset: /^\d+$/.test(state.offset ?? '') ? Number(state.offset) : 0, limit: PAGE,
  };
}

function field(label, input) {
  return el('label', { class: 'field' }, el('span', {}, label), input);
}

// `problem`: why the server refused these filters (a bad regex), shown beside
// the form, which keeps what the user typed.
function filterForm(state, threads, navigate, problem) {
  const input = (name, value, placeholder) => el('input', { type: 'text', name, value: value ?? '', placeholder, 'aria-label': name, size: 9 });
  const minSize = input('Smallest size', state.min_size, 'e.g. 4k');
  const maxSize = input('Largest size', state.max_size, 'e.g. 1M');
  const minLife = input('Shortest lifetime', durationInput(state.min_life), 'e.g. 1ms');
  const maxLife = input('Longest lifetime', durationInput(state.max_life), 'e.g. 2s');
  const match = el('input', { type: 'text', name: 'match', value: state.match ?? '', placeholder: 'regex', 'aria-label': 'Function or library', size: 18 });
  const site = el('input', { type: 'text', name: 'site', value: state.site ?? '', placeholder: 'id', 'aria-label': 'Site', size: 5 });
  const thread = el('select', { 'aria-label': 'Thread' }, el('option', { value: '' }, 'all threads'),
    threads.map((t) => el('option', { value: t.index }, `${t.name ?? 'unnamed'} (tid ${t.tid})`)));
  thread.value = state.thread ?? '';
  const leaked = el('input', { type: 'checkbox', 'aria-label': 'Leaked only', checked: state.leaked === '1' });
  const realloc = el('input', { type: 'checkbox', 'aria-label': 'Realloc chains only', checked: state.realloc === '1' });
  const alive = el('input', { type: 'checkbox', 'aria-label': 'Alive at the instant', checked: state.alive === '1', disabled: state.at === undefined });
  const kept = el('input', { type: 'checkbox', 'aria-label': 'Kept from the range', checked: state.kept === '1' });
  const error = el('p', { class: 'error', role: 'alert', id: 'filter-error', hidden: !problem }, problem ?? '');
  const form = el('form', { class: 'filters', 'aria-label': 'Filters' },
    field('Size from', minSize), field('to', maxSize), field('Lifetime from', minLife), field('to', maxLife),
    field('Thread', thread), field('Function or library', match), field('Site', site),
    el('label', { class: 'check' }, leaked, ' leaked only'),
    el('label', { class: 'check', title: 'Blocks made or replaced by realloc' }, realloc, ' realloc chains only'),
    el('label', { class: 'check', title: state.at === undefined ? 'Click the timeline to pick an instant' : null }, alive, ' alive at the instant'),
    el('label', { class: 'check', title: 'Allocated in the range and still live at the instant, or at the range\'s end without one (memrec report --retained)' },
      kept, ' kept from the range'),
    el('button', { type: 'submit' }, 'Apply'),
    el('button', { type: 'button', onclick: () => navigate(Object.fromEntries([...FILTER_KEYS, 'offset', 'sel'].map((k) => [k, null]))) }, 'Clear'),
    error);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    try {
      const text = (v) => (v.trim() === '' ? null : v.trim());
      const num = (v) => (v === null ? null : String(v));
      navigate({
        min_size: num(parseBytes(minSize.value)), max_size: num(parseBytes(maxSize.value)),
        min_life: num(parseDuration(minLife.value)), max_life: num(parseDuration(maxLife.value)),
        thread: text(thread.value), match: text(match.value), site: text(site.value),
        leaked: leaked.checked ? '1' : null, kept: kept.checked ? '1' : null, realloc: realloc.checked ? '1' : null, alive: alive.checked ? '1' : null, offset: null, sel: null,
      });
    } catch (err) {
      error.hidden = false;
      error.textContent = err.message;
    }
  });
  return form;
}

function lifetime(row) {
  // Events of one clock tick share a time (FORMAT.md, "Order"): 0 is "shorter than that", not 0 ns.
  if (row.lifetime_ns === 0) return el('span', { title: 'Freed within the clock tick it was allocated in' }, '< 1 tick');
  if (row.lifetime_ns !== null && row.lifetime_ns !== undefined) return timeText(row.lifetime_ns);
  return el('span', { class: 'tag' }, 'never freed');
}

function table(answer, request, state, navigate, names) {
  const head = el('tr', {}, el('th', { scope: 'col', class: 'num' }, '#'),
    SORTS.map(([s, label]) => {
      const current = request.sort === s;
      const next = current && request.order === 'desc' ? 'asc' : current ? 'desc' : null;
      return el('th', { scope: 'col', class: s === 'address' ? '' : 'num', 'aria-sort': current ? (request.order === 'asc' ? 'ascending' : 'descending') : 'none' },
        el('button', { type: 'button', onclick: () => navigate({ sort: s, order: next, offset: null }) }, label));
    }),
    el('th', { scope: 'col' }, 'Thread'), el('th', { scope: 'col' }, 'Function'), el('th', { scope: 'col' }, 'Location'),
    el('th', { scope: 'col', class: 'num' }, 'Site'));
  const rows = answer.rows.map((r) => {
    const tr = el('tr', { class: 'site', tabindex: 0, 'data-index': r.index, 'aria-selected': state.sel === String(r.index) ? 'true' : 'false' },
      el('td', { class: 'num' }, integer(r.index)),
      el('td', { class: 'num' }, timeText(r.time_ns, true)),
      el('td', { class: 'num', title: `${integer(r.size)} bytes` }, bytes(r.size)),
      el('td', { class: 'num' }, lifetime(r)),
      el('td', { class: 'addr' }, address(r.address)),
      el('td', {}, names.get(r.thread) ?? r.thread_name ?? `thread ${r.thread}`),
      el('td', { class: 'fn' }, siteName(r, r.realloc_from !== null && r.realloc_from !== undefined ? el('span', { class: 'tag' }, 'realloc') : null)),
      el('td', { class: 'loc' }, siteLocation(r)),
      el('td', { class: 'num' }, r.site ?? '—'));
    const pick = () => navigate({ sel: String(r.index) });
    tr.addEventListener('click', pick);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') pick(); });
    return tr;
  });
  return el('table', { class: 'sites grid allocations', 'aria-label': 'Allocations' }, el('thead', {}, head), el('tbody', {}, rows));
}

function pager(answer, navigate) {
  const { offset, total } = answer;
  const last = Math.min(offset + answer.rows.length, total);
  return el('nav', { class: 'pager', 'aria-label': 'Pages of allocations' },
    el('button', { type: 'button', disabled: offset === 0, onclick: () => navigate({ offset: offset > PAGE ? String(offset - PAGE) : null }) }, '‹ Previous'),
    el('span', { id: 'alloc-page' }, total === 0 ? 'none' : `${integer(offset + 1)}–${integer(last)} of ${integer(total)}`),
    el('button', { type: 'button', disabled: last >= total, onclick: () => navigate({ offset: String(offset + PAGE) }) }, 'Next ›'));
}

function chainList(chain, state, navigate) {
  if (!chain || chain.length <= 1) return el('p', { class: 'detail' }, 'No realloc chain: this block was neither made nor moved by realloc.');
  return el('ol', { class: 'chain', 'aria-label': 'Realloc chain' }, chain.map((c) =>
    el('li', { 'aria-current': String(c.index) === state.sel ? 'true' : null },
      el('button', { type: 'button', class: 'link', onclick: () => navigate({ sel: String(c.index) }) },
        `#${integer(c.index)}: ${integer(c.size)} bytes at ${address(c.address)}, `, timeText(c.time_ns)))));
}

async function detail(state, navigate) {
  const box = el('section', { class: 'allocation-detail', 'aria-label': 'Allocation' });
  try {
    const a = await api.allocation(state.dump, state.sel, labelParams(state));
    box.append(
      el('h3', {}, `Allocation #${integer(a.index)}: ${integer(a.size)} bytes`,
        el('button', { type: 'button', class: 'link', 'aria-label': 'Close the allocation', onclick: () => navigate({ sel: null }) }, '✕')),
      el('p', { class: 'detail' }, 'made at ', timeText(a.time_ns), ' on ', a.thread_name ?? `thread ${a.thread}`, ', ',
        a.free_ns === null || a.free_ns === undefined ? 'never freed' : ['freed at ', timeText(a.free_ns)], `, address ${address(a.address)}, site ${a.site ?? '—'}`),
      el('h4', {}, 'Backtrace'), backtrace(a.frames),
      el('h4', {}, 'Realloc chain'), chainList(a.chain, state, navigate));
  } catch (e) {
    box.append(el('p', { class: 'error', role: 'alert' }, e.message));
  }
  return box;
}

export async function renderAllocations(root, state, navigate) {
  const request = requestOf(state);
  const refused = (e) => {
    if (e.status !== 400) throw e;
    return { problem: e.message };
  };
  const [answer, reply] = await Promise.all([api.allocations(state.dump, request).catch(refused), api.threads(state.dump)]);
  const threads = Array.isArray(reply) ? reply : reply.threads || [];
  // A thread's name with its tid: names repeat across a pool's threads.
  const names = new Map(threads.map((t) => [t.index, t.name ? `${t.name} (tid ${t.tid})` : `tid ${t.tid}`]));
  const rows = answer.problem !== undefined ? []
    : [pager(answer, navigate), answer.rows.length === 0 ? el('p', { class: 'empty' }, 'No allocation matches these filters in this range.') : table(answer, request, state, navigate, names)];
  fill(root, [
    el('h2', {}, 'Allocations'),
    el('div', { class: 'toolbar' }, labelToggles(state, navigate)),
    filterForm(state, threads, navigate, answer.problem),
    answer.kept ? keptNote(answer.kept, ' The other filters narrow the rows below.') : null,
    state.sel !== undefined ? await detail(state, navigate) : null,
    rows,
  ])
}
