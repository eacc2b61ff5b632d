// The loaded dumps as a process tree: a dump's parent is the latest earlier
// dump of its ppid (a fork), or of its own pid (an exec), as in `memrec report`
// (docs/analyzer.md). Each row names the program, pid, parent, duration, peak
// and leak; clicking one opens its overview. A dump memrec view still loads
// (or could not load) has no process yet: its row follows the tree, with its
// progress (or why), and becomes the dump's once it is served.
import { basename, bytesText, duration, el, fill, integer } from './format.js';
import { viewHash } from './state.js';

// [{dump, depth, link}] depth-first, children by start time.
export function processTree(dumps) {
  const ordered = [...dumps].sort((a, b) => (a.start_wall_ns ?? 0) - (b.start_wall_ns ?? 0) || a.id - b.id);
  const parent = new Map();
  ordered.forEach((d, i) => {
    const earlier = ordered.slice(0, i).reverse();
    const exec = earlier.find((e) => e.pid === d.pid);
    const fork = exec ? null : earlier.find((e) => e.pid === d.ppid);
    if (exec) parent.set(d.id, { id: exec.id, link: 'exec' });
    else if (fork) parent.set(d.id, { id: fork.id, link: 'fork' });
  });
  const out = [];
  const visit = (d, depth) => {
    out.push({ dump: d, depth, link: parent.get(d.id)?.link ?? null });
    for (const child of ordered.filter((c) => parent.get(c.id)?.id === d.id)) visit(child, depth + 1);
  };
  for (const root of ordered.filter((d) => !parent.has(d.id))) visit(root, 0);
  return out;
}

// Whether memrec view serves the dump (docs/api.md, `load`).
export const served = (d) => (d.load?.state ?? 'ready') === 'ready';

// How far a loading dump is, kept current by app.js's poll (`.load-percent`).
export const loadPercent = (d) => Math.floor(100 * (d.load?.fraction ?? 0));

export function loadProgress(d) {
  const percent = loadPercent(d);
  return el('span', { class: 'load-progress' },
    el('progress', { max: '100', value: String(percent), 'data-dump': String(d.id), 'aria-label': `Loading ${basename(d.file)}` }),
    ' ', el('span', { class: 'load-percent', 'data-dump': String(d.id) }, `${percent} %`));
}

export function dumpLabel(d) {
  if (d.load?.state === 'loading') return `${basename(d.file)} (loading)`;
  if (d.load?.state === 'failed') return `${basename(d.file)} (did not load)`;
  return `${basename(d.exe) || d.file} (pid ${d.pid})`;
}

// The rows of the dumps not served: loading ones with their progress, failed
// ones with why.
function pendingRow(d) {
  const failed = d.load.state === 'failed';
  return el('tr', { class: `pending ${d.load.state}`, 'aria-label': `${basename(d.file)}: ${failed ? 'did not load' : 'loading'}` },
    el('td', { class: 'program' }, basename(d.file),
      failed ? el('span', { class: 'tag warn' }, 'did not load') : el('span', { class: 'tag' }, 'loading'),
      el('div', { class: 'cmdline', title: d.file }, failed ? d.load.error : d.file)),
    el('td', { colspan: '6', class: 'detail' }, failed ? '' : loadProgress(d)));
}

// Sorts of the list (dsort in the hash): the process tree by default, else a
// flat list, largest first (the program's name: alphabetical).
const DUMP_SORTS = {
  program: { label: 'Program', key: (d) => (basename(d.exe) || d.file).toLowerCase(), ascending: true },
  pid: { label: 'pid', key: (d) => d.pid, ascending: true },
  duration: { label: 'Duration', key: (d) => d.duration_ns },
  peak: { label: 'Peak', key: (d) => d.peak_bytes },
  leaked: { label: 'Leaked', key: (d) => d.leaked_bytes },
  allocations: { label: 'Allocations', key: (d) => d.allocations },
};

function ordered(dumps, sort, query) {
  const text = (query || '').toLowerCase();
  const matches = (d) => !text || `${basename(d.exe) || d.file} ${d.pid} ${(d.cmdline || []).join(' ')}`.toLowerCase().includes(text);
  const spec = DUMP_SORTS[sort];
  if (!spec) return processTree(dumps).filter(({ dump }) => matches(dump));
  const sign = spec.ascending ? 1 : -1;
  return dumps.filter(matches)
    .sort((a, b) => (spec.key(a) < spec.key(b) ? -sign : spec.key(a) > spec.key(b) ? sign : a.id - b.id))
    .map((dump) => ({ dump, depth: 0, link: null }));
}

export async function renderDumps(root, state, navigate, context) {
  const sort = DUMP_SORTS[state.dsort] ? state.dsort : null;
  const list = ordered(context.dumps, sort, state.dq);
  const pending = (context.allDumps ?? context.dumps).filter((d) => !served(d));
  const loading = pending.filter((d) => d.load.state === 'loading').length;
  const failed = pending.length - loading;
  const rows = list.map(({ dump: d, depth, link }) => {
    const href = viewHash('overview', { dump: String(d.id) });
    const program = el('td', { class: 'program' },
      depth > 0 ? el('span', { class: 'indent' }, '└ ') : null,
      el('a', { href }, basename(d.exe) || d.file),
      link ? el('span', { class: 'tag' }, link) : null,
      d.state === 'live' ? el('span', { class: 'tag live', title: 'memrec view --follow reads it as it is written' }, 'live')
        : d.incomplete ? el('span', { class: 'tag warn' }, 'incomplete') : null,
      el('div', { class: 'cmdline', title: d.file }, (d.cmdline || []).join(' ')));
    program.style.paddingLeft = `${0.55 + 1.3 * depth}rem`;  // CSSOM: allowed by the CSP
    const tr = el('tr', { class: 'site', 'aria-current': String(d.id) === state.dump ? 'true' : null },
      program,
      el('td', { class: 'num' }, String(d.pid)),
      el('td', { class: 'num' }, String(d.ppid ?? '—')),
      el('td', { class: 'num' }, duration(d.duration_ns)),
      el('td', { class: 'num' }, bytesText(d.peak_bytes)),
      el('td', { class: 'num' }, bytesText(d.leaked_bytes)),
      el('td', { class: 'num' }, integer(d.allocations)));
    tr.addEventListener('click', (e) => { if (e.target.tagName !== 'A') location.hash = href; });
    return tr;
  });
  const header = (name, key) => {
    const th = el('th', { scope: 'col', class: key === 'program' ? '' : 'num', 'aria-sort': key && key === sort ? (DUMP_SORTS[key].ascending ? 'ascending' : 'descending') : 'none' },
      key ? el('button', { type: 'button', onclick: () => navigate({ dsort: key === sort ? null : key }) }, name) : name);
    return th;
  };
  const filter = el('input', { type: 'search', placeholder: 'Program, pid or command line', 'aria-label': 'Filter the dumps', value: state.dq ?? '' });
  filter.addEventListener('change', () => navigate({ dq: filter.value.trim() || null }));
  fill(root,
    el('h2', {}, 'Dumps'),
    el('div', { class: 'toolbar' }, filter,
      sort ? el('button', { type: 'button', onclick: () => navigate({ dsort: null }) }, 'Back to the process tree') : null),
    el('p', { class: 'detail', id: 'dumps-count' }, (list.length === context.dumps.length
      ? `${context.dumps.length} processes; ${sort ? `sorted by ${DUMP_SORTS[sort].label.toLowerCase()}` : "forked and exec'd children under their parent"}.`
      : `${list.length} of ${context.dumps.length} processes match.`)
      + (loading ? ` ${loading} more loading.` : '') + (failed ? ` ${failed} did not load.` : '')),
    el('table', { class: 'sites grid dumps', 'aria-label': 'Dumps' },
      el('thead', {}, el('tr', {}, header('Program', 'program'), header('pid', 'pid'), header('Parent', null),
        header('Duration', 'duration'), header('Peak', 'peak'), header('Leaked', 'leaked'), header('Allocations', 'allocations'))),
      el('tbody', {}, rows, pending.map(pendingRow))));
}
