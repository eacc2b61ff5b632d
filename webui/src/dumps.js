// The loaded dumps as a process tree: a dump's parent is the latest earlier
// dump of its ppid (a fork), or of its own pid (an exec), as in `memrec report`
// (docs/analyzer.md). Each row names the program, pid, parent, duration, peak
// and leak; clicking one opens its overview.
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

export function dumpLabel(d) {
  return `${basename(d.exe) || d.file} (pid ${d.pid})`;
}

export async function renderDumps(root, state, navigate, context) {
  const rows = processTree(context.dumps).map(({ dump: d, depth, link }) => {
    const href = viewHash('overview', { dump: String(d.id) });
    const program = el('td', { class: 'program' },
      depth > 0 ? el('span', { class: 'indent' }, '└ ') : null,
      el('a', { href }, basename(d.exe) || d.file),
      link ? el('span', { class: 'tag' }, link) : null,
      d.incomplete ? el('span', { class: 'tag warn' }, 'incomplete') : null,
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
  fill(root,
    el('h2', {}, 'Dumps'),
    el('p', { class: 'detail' }, `${context.dumps.length} processes; forked and exec'd children under their parent.`),
    el('table', { class: 'sites grid dumps', 'aria-label': 'Dumps' },
      el('thead', {}, el('tr', {}, ['Program', 'pid', 'Parent', 'Duration', 'Peak', 'Leaked', 'Allocations']
        .map((h, i) => el('th', { scope: 'col', class: i === 0 ? '' : 'num' }, h)))),
      el('tbody', {}, rows)));
}
