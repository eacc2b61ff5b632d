// Caller/callee in memrec view on tests/programs/caller_callee, whose call
// graph is known: alloc_block() allocates 3 x 1000 bytes for caller_a,
// 2 x 500 for caller_b (freed) and 700 at the bottom of recurse(3), which
// allocates 64 bytes of its own at each of its 4 levels. A function is picked
// from the call tree, from a zoomed flamegraph frame and from the list, and
// its self, inclusive, callers and callees read as the program made them.
// The screenshot goes to docs/images/view-callers.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, openView, place, program, record, rendered, requireFiles, scratch } from './support.mjs';

let view;
let baseUrl;
let page;

before(async () => {
  requireFiles(program('caller_callee'));
  view = await openView(record(scratch(), 'caller_callee', [program('caller_callee')]));
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// A table's rows as "cell | cell | …", '' for a table that is not there.
const rowsOf = (name) => page.getByRole('table', { name, exact: true }).locator('tbody tr').evaluateAll((trs) =>
  trs.map((tr) => [...tr.children].map((c) => c.textContent.replace(/^[▸▾·] /, '')).join(' | ')));

async function figures() {
  return [await page.locator('#fn-self').textContent(), await page.locator('#fn-inclusive').textContent()];
}

test('the bottom-up call tree opens alloc_block\'s callers and callees', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&inv=1&show=tree`);
  await rendered(page);
  const tree = page.getByRole('table', { name: 'Call tree, bottom-up' });
  await tree.getByRole('link', { name: 'alloc_block' }).click();
  await page.waitForURL(/show=callers&fn=alloc_block/);
  await rendered(page);
  assert.equal(await page.getByLabel('Show as').inputValue(), 'callers');
  assert.equal(await page.getByRole('heading', { level: 3 }).first().textContent(), 'alloc_block');
  assert.deepEqual(await figures(), ['4,700 bytes', '4,700 bytes']);
  assert.deepEqual(await rowsOf('Callers of the selected function'),
    ['caller_a | 3,000 bytes | 63.8%', 'caller_b | 1,000 bytes | 21.3%', 'recurse | 700 bytes | 14.9%']);
  assert.equal(await page.getByRole('table', { name: 'Callees of the selected function' }).count(), 0);
  assert.match(await page.getByRole('region', { name: 'Selected function' }).textContent(), /No callee\./);
});

test('a caller is selected in turn; recursion counts each stack once', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&show=callers&fn=alloc_block`);
  await rendered(page);
  await page.getByRole('table', { name: 'Callers of the selected function' }).getByRole('link', { name: 'recurse' }).click();
  await page.waitForURL(/fn=recurse/);
  await rendered(page);
  // 4 levels of 64 bytes, and alloc_block's 700 under the deepest
  assert.deepEqual(await figures(), ['256 bytes', '956 bytes']);
  assert.deepEqual(await rowsOf('Callers of the selected function'), ['main | 956 bytes | 100.0%', 'recurse | 892 bytes | 93.3%']);
  assert.deepEqual(await rowsOf('Callees of the selected function'), ['recurse | 892 bytes | 93.3%', 'alloc_block | 700 bytes | 73.2%']);
  // The metric applies: counts of allocation calls.
  await page.getByLabel('Metric').selectOption('allocations');
  await page.waitForURL(/metric=allocations/);
  await rendered(page);
  assert.deepEqual(await figures(), ['4', '5']);
  assert.deepEqual(await rowsOf('Callers of the selected function'), ['main | 5 | 100.0%', 'recurse | 4 | 80.0%']);
  await page.screenshot({ path: join(images, 'view-callers.png'), fullPage: true });
});

test('the list ranks functions by inclusive value and the search narrows it', async () => {
  // A name whose URL would pass the server's 8 KiB request line is asked for
  // by its key (FNV-1a of its bytes, as the server's `key`).
  const listed = (await getJson(baseUrl, '/api/dumps/0/functions?metric=allocated')).functions;
  const names = ['a', 'foobar', ...listed.map((f) => f.name)];
  const keys = await page.evaluate(async (list) => {
    const { nameKey } = await import('/src/callers.js');
    return list.map(nameKey);
  }, names);
  // FNV-1a's published vectors, then the server's key of every function
  assert.deepEqual(keys, ['af63dc4c8601ec8c', '85944171f73967e8', ...listed.map((f) => f.key)]);
  const requests = [];
  page.on('request', (r) => { if (r.url().includes('/functions')) requests.push(r.url()); });
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=leaked&show=callers&fn=${encodeURIComponent('<'.repeat(2100))}`);
  await rendered(page);
  page.removeAllListeners('request');
  assert.match(requests.at(-1), /[?&]key=[0-9a-f]{16}(&|$)/);
  assert.doesNotMatch(requests.at(-1), /[?&]name=/);
  assert.deepEqual(await figures(), ['0 bytes', '0 bytes']);
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=leaked&show=callers`);
  await rendered(page);
  const rows = await rowsOf('Functions by inclusive value');
  // leaked: caller_a's 3000, recurse's 256 + 700; caller_b freed its blocks
  for (const row of ['alloc_block | 3,700 bytes | 3,700 bytes', 'caller_a | 0 bytes | 3,000 bytes', 'recurse | 256 bytes | 956 bytes']) {
    assert.ok(rows.includes(row), `${row} in ${rows.join('\n')}`);
  }
  assert.ok(!rows.some((r) => r.startsWith('caller_b ')), 'caller_b leaked nothing');
  // Selected anyway (a link from another metric), it says why it is empty.
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=leaked&show=callers&fn=caller_b`);
  await rendered(page);
  assert.deepEqual(await figures(), ['0 bytes', '0 bytes']);
  assert.equal(await page.locator('#fn-absent').textContent(),
    'No call site with a non-zero leaked figure in this range has this function on its stack.');
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=leaked&show=callers`);
  await rendered(page);
  await page.getByRole('searchbox', { name: 'Search functions' }).fill('caller_');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForURL(/q=caller_/);
  await rendered(page);
  assert.deepEqual(await rowsOf('Functions by inclusive value'), ['caller_a | 0 bytes | 3,000 bytes']);
  await page.getByRole('table', { name: 'Functions by inclusive value' }).getByRole('link', { name: 'caller_a' }).click();
  await page.waitForURL(/fn=caller_a/);
  await rendered(page);
  assert.deepEqual(await figures(), ['0 bytes', '3,000 bytes']);
  assert.deepEqual(await rowsOf('Callees of the selected function'), ['alloc_block | 3,000 bytes | 100.0%']);
});

test('a zoomed flamegraph frame links to its callers and callees', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated`);
  await rendered(page);
  const canvas = page.getByRole('img', { name: 'Flamegraph of allocated' });
  await canvas.waitFor();
  const flame = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocated');
  const at = place(flame.root, 'caller_b');
  const box = await canvas.boundingBox();
  await page.mouse.click(box.x + box.width * (at.x + at.w / 2), box.y + at.depth * 18 + 9);
  await page.waitForURL(/zoom=/);
  await rendered(page);
  await page.getByRole('link', { name: 'Callers and callees of caller_b' }).click();
  await page.waitForURL(/fn=caller_b/);
  await rendered(page);
  assert.deepEqual(await figures(), ['0 bytes', '1,000 bytes']);
  assert.deepEqual(await rowsOf('Callers of the selected function'), ['main | 1,000 bytes | 100.0%']);
  assert.deepEqual(await rowsOf('Callees of the selected function'), ['alloc_block | 1,000 bytes | 100.0%']);
});

test('the range applies: up to caller_a\'s third block, alloc_block has only caller_a', async () => {
  const rows = (await getJson(baseUrl, '/api/dumps/0/allocations?sort=time')).rows;
  assert.deepEqual(rows.slice(0, 3).map((r) => r.size), [1000, 1000, 1000]);
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&show=callers&fn=alloc_block&from=0&to=${rows[2].time_ns}`);
  await rendered(page);
  assert.deepEqual(await figures(), ['3,000 bytes', '3,000 bytes']);
  assert.deepEqual(await rowsOf('Callers of the selected function'), ['caller_a | 3,000 bytes | 100.0%']);
});
