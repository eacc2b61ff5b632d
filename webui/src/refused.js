// A range or an instant the server will not answer for this dump (memrec
// view --follow serves a followed dump's whole run before it can answer
// ranges: docs/api.md) is said in the page, and the view shows the whole
// recording under that sentence instead of failing. A table still being
// built (`building`), a range that is wrong and an unreachable server are
// not this: they go on as errors.
import { el } from './format.js';
import { hasRange } from './state.js';

// The state without its range and instant.
export const wholeRun = (state) => ({ ...state, from: undefined, to: undefined, at: undefined });

// {answer, refused}: fetch(state)'s answer, or, when the server refused the
// state's range or instant, fetch(wholeRun(state))'s and the server's sentence.
export async function rangeOrWhole(state, fetch) {
  try {
    return { answer: await fetch(state), refused: null };
  } catch (e) {
    // A bad range is a 4xx, said as the error it is; a dump whose table will
    // not come answers 500 (docs/api.md), one still building it 503.
    if (e.building !== undefined || e.status < 500 || !(hasRange(state) || state.at !== undefined)) throw e;
    return { answer: await fetch(wholeRun(state)), refused: e.message };
  }
}

export function refusedNote(message) {
  return el('p', { class: 'detail refused', role: 'status', id: 'range-refused' },
    `The selected range or instant cannot be shown for this dump yet: the figures below are the whole recording's. ${message}`);
}
