// An inlined frame in the backtrace panel: tests/programs/inline_alloc leaks
// 2 × 3131 from inlined_alloc, which is always_inline and inlined into
// outer_alloc. The call sites' backtrace and the allocation detail show that
// frame first, marked "inlined", then outer_alloc and main without the mark.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, images, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;

before(async () => {
  requireFiles(program('inline_alloc'));
  view = await openView(record(scratch(), 'inline_alloc', [program('inline_alloc')]));
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// The first three frames of a backtrace list: [function, class, inline tags].
async function frames(list) {
  const items = list.getByRole('listitem');
  await items.first().waitFor();
  const out = [];
  for (let i = 0; i < 3; i += 1) {
    const item = items.nth(i);
    const tags = item.locator('.tag');
    out.push([await item.locator('.fn').textContent(), await item.getAttribute('class'), await tags.allTextContents(),
      await tags.evaluateAll((ts) => ts.map((t) => t.title))]);
  }
  return out;
}

const EXPECTED = [
  ['inlined_alloc', 'frame inlined own', ['inlined'], ['inlined into the frame below']],
  ['outer_alloc', 'frame own', [], []],
  ['main', 'frame own', [], []],
];

test('the call site\'s backtrace marks the inlined frame', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: 'inlined_alloc' });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[0], 'inlined_alloc');
  assert.deepEqual(cells.slice(2, 4), ['6.12 KiB', '2']);
  await row.click();
  await page.waitForURL(/open=\d+/);
  await rendered(page);
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  assert.deepEqual(await frames(backtrace), EXPECTED);
  assert.ok(await backtrace.locator('.tag').first().isVisible(), 'the marker is visible');
  await page.screenshot({ path: join(images, 'view-inlined.png'), fullPage: true });
});

test('the allocation detail marks the inlined frame too', async () => {
  await page.goto(`${baseUrl}/#/allocations?dump=0&leaked=1`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: 'inlined_alloc' }).first();
  await row.waitFor();
  await row.click();
  await page.waitForURL(/sel=\d+/);
  await rendered(page);
  const detail = page.getByRole('region', { name: 'Allocation' });
  assert.deepEqual(await frames(detail.getByRole('list', { name: 'Backtrace, innermost first' })), EXPECTED);
});
