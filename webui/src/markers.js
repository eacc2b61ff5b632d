// Markers (memrec_mark(), `memrec ctl PID mark LABEL`): a link's from, to or
// at may be `mark:LABEL`, or `mark:LABEL#N` for its Nth marker, resolved to
// ns against the dump's markers as `memrec report --from mark:…` resolves
// them, so a link made from markers reproduces the view in another recording
// of the same program. No DOM but what markerList builds.
import { duration, el } from './format.js';
import { viewHash } from './state.js';

export const MARK_KEYS = ['from', 'to', 'at'];

// The `mark:` values of a hash's from, to and at: {key: label}.
export function markValues(hash) {
  const query = hash.replace(/^#\/?/, '').split('?')[1] ?? '';
  const out = {};
  for (const [key, value] of new URLSearchParams(query)) {
    if (MARK_KEYS.includes(key) && value.startsWith('mark:')) out[key] = value.slice(5);
  }
  return out;
}

// The ns of `label` among `markers` (by time): the first with that label, or,
// for a label not there that ends in #N, the Nth of the label before it.
export function resolveMark(label, markers) {
  const exact = markers.find((m) => m.label === label);
  if (exact) return exact.time_ns;
  const nth = /^(.*)#(\d+)$/.exec(label);
  if (nth) {
    const same = markers.filter((m) => m.label === nth[1]);
    const n = Number(nth[2]);
    if (n >= 1 && n <= same.length) return same[n - 1].time_ns;
    if (same.length > 0) throw new Error(`The marker “${nth[1]}” occurs ${same.length} times; mark:${label} asks for occurrence ${n}.`);
  }
  const known = [...new Set(markers.map((m) => m.label))];
  throw new Error(known.length === 0
    ? `This dump has no markers, so mark:${label} names no time.`
    : `No marker “${label}” in this dump: its markers are ${known.map((l) => `“${l}”`).join(', ')}.`);
}

// How a link names each marker: its label, with #N from its second occurrence on.
export function markerNames(markers) {
  const seen = new Map();
  return markers.map((m) => {
    const n = (seen.get(m.label) ?? 0) + 1;
    seen.set(m.label, n);
    return n === 1 ? m.label : `${m.label}#${n}`;
  });
}

// The markers under a timeline, each a link to the range from it to the next
// one (the last: to the end), named by markers so the link can be shared.
export function markerList(markers, state) {
  if (!Array.isArray(markers) || markers.length === 0) return null;
  const names = markerNames(markers);
  return el('p', { class: 'detail', id: 'markers' }, 'Markers (dashed lines): ',
    markers.map((m, i) => [i > 0 ? ' · ' : null,
      el('a', { href: viewHash(state.view || 'overview', state, { from: `mark:${names[i]}`, to: i + 1 < markers.length ? `mark:${names[i + 1]}` : null, at: null }),
        title: `From this marker to ${i + 1 < markers.length ? 'the next' : 'the end'} (${m.source})` },
      `${m.label} at ${duration(m.time_ns)}`)]));
}
