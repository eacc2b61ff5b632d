// The diff view's two ranges, one per side: base_from/base_to and
// new_from/new_to in the hash (integer ns since each dump's start, as the API
// takes them), typed as `memrec diff` reads times (1.5s, 200ms, 20us, 300ns).
// A text that is no time is refused here, in place; a range the server
// refuses (one that ends before it starts) comes back as `problem`.
import { durationInput, el, parseDuration } from './format.js';

export const RANGE_KEYS = ['base_from', 'base_to', 'new_from', 'new_to'];
const NS = /^\d{1,19}$/;
const NAMES = { base_from: 'Base from', base_to: 'Base to', new_from: 'New from', new_to: 'New to' };

// The hash's ranges as API parameters; a value that is not plain ns goes on
// as it is, for the server to refuse with a sentence.
export function rangeOf(state) {
  const out = {};
  for (const key of RANGE_KEYS) if (state[key] !== undefined) out[key] = state[key];
  return out;
}

export const hasRanges = (state) => RANGE_KEYS.some((k) => state[k] !== undefined);

// "0 – 300 ms" for a side, "whole run" without a range.
export function sideRangeText(state, side, duration) {
  const from = state[`${side}_from`];
  const to = state[`${side}_to`];
  if (from === undefined && to === undefined) return 'whole run';
  const t = (v) => (NS.test(v) ? duration(Number(v)) : v);
  return `${from === undefined ? 'start' : t(from)} – ${to === undefined ? 'end' : t(to)}`;
}

export function rangeForm(state, navigate, problem) {
  const inputs = RANGE_KEYS.map((key) => el('input', {
    type: 'text', name: key, size: 8, 'aria-label': NAMES[key], placeholder: key.endsWith('from') ? 'start' : 'end',
    value: NS.test(state[key] ?? '') ? durationInput(state[key]) : (state[key] ?? ''),
  }));
  const error = el('p', { class: 'error', role: 'alert', id: 'diff-range-error', hidden: !problem }, problem ?? '');
  const form = el('form', { class: 'filters diff-ranges', 'aria-label': 'Ranges compared' },
    el('span', { class: 'side' }, 'Base ', inputs[0], ' – ', inputs[1]),
    el('span', { class: 'side' }, 'New ', inputs[2], ' – ', inputs[3]),
    el('button', { type: 'submit' }, 'Compare ranges'),
    hasRanges(state) ? el('button', { type: 'button', onclick: () => navigate(Object.fromEntries(RANGE_KEYS.map((k) => [k, null]))) },
      'Whole runs') : null,
    error);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const change = { zoom: null };
    try {
      inputs.forEach((input, i) => {
        const ns = parseDuration(input.value);
        change[RANGE_KEYS[i]] = ns === null ? null : String(ns);
      });
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      return;
    }
    navigate(change);
  });
  return form;
}
