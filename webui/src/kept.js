// "Kept from the range": the allocations made in the range [A, B] that are
// still live at C, the selected instant or else B; what `memrec report
// --retained A..B --at C` counts, and not the runtime's retained caches (the
// call sites' "runtime retained" sort). The call sites sort by it, the
// allocation table filters by it (`kept=1`); both say what it counted here.
import { bytes, duration, el, integer } from './format.js';

// What "kept" counts, with the command that counts the same (times in ns
// since the start); `more`: a sentence after it.
export function keptNote(kept, more = '') {
  return el('p', { class: 'detail', id: 'kept-note' },
    `Kept from the range: allocated from ${duration(kept.from_ns)} to ${duration(kept.to_ns)} and still live at ` +
    `${duration(kept.at_ns)}${kept.at_ns === kept.to_ns ? ' (the range\'s end; click the timeline for another instant)' : ' (the instant)'}: `,
    el('span', { id: 'kept-total', title: `${integer(kept.bytes)} bytes` }, `${bytes(kept.bytes)} in ${integer(kept.count)} ${kept.count === 1 ? 'block' : 'blocks'}`),
    '. The same as ', el('code', {}, `memrec report --retained ${kept.from_ns}ns..${kept.to_ns}ns --at ${kept.at_ns}ns`),
    `; not the runtime's retained caches.${more}`);
}
