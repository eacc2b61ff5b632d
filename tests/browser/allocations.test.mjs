// The allocations table on tests/programs/timed_phases (see its comment): the
// server pages and sorts it, the filters narrow it (function regex, size,
// lifetime, thread, site, leaked only, realloc chains only, alive at an instant,
// the time range), and a row opens its backtrace and realloc chain (grow_block: 100 -> 500 -> 900).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

const MS = 1e6;
let view; // memrec view and the browser page on it
let baseUrl;
let page;
let phaseTwo;

before(async () => {
  requireFiles(program('timed_phases'));
  const [dump] = record(scratch(), 'timed_phases', [program('timed_phases')]);
  view = await openView([dump]);
  ({ baseUrl, page } = view);
  const timeline = await getJson(baseUrl, '/api/dumps/0/timeline');
  phaseTwo = timeline.time_ns[timeline.heap_bytes.findIndex((b) => b >= 140000)];
});

after(() => closeView(view));

const pageText = () => page.locator('#alloc-page').textContent();

async function show(hash) {
  await page.goto(`${baseUrl}/#/allocations?dump=0${hash}`);
  await rendered(page);
}

async function column(name) {
  const headers = await page.getByRole('table', { name: 'Allocations' }).getByRole('columnheader').allTextContents();
  const i = headers.findIndex((h) => h.replace(/[▲▼ ]/g, '') === name);
  assert.ok(i >= 0, `no column ${name} in ${headers}`);
  // Sizes read as KiB; their exact bytes are on hover.
  const cells = page.locator(`table.allocations tbody tr td:nth-child(${i + 1})`);
  return name === 'Size' ? cells.evaluateAll((tds) => tds.map((td) => td.title.replace(/ bytes$/, ''))) : cells.allTextContents();
}

test('the table pages on the server and keeps its page in the URL', async () => {
  await show('&match=many_small');
  assert.equal(await pageText(), '1–100 of 250');
  await page.getByRole('button', { name: 'Next ›' }).click();
  await page.waitForURL(/offset=100/);
  await page.waitForFunction(() => document.getElementById('alloc-page')?.textContent === '101–200 of 250');
  const sizes = (await column('Size')).map((s) => Number(s.replace(/,/g, '')));
  assert.deepEqual(sizes, Array.from({ length: 100 }, (_, i) => 200 + i), 'by time, the second hundred');
});

test('the filter form narrows by size and the server sorts by size', async () => {
  await show('&match=many_small');
  await page.getByRole('textbox', { name: 'Smallest size' }).fill('300');
  await page.getByRole('textbox', { name: 'Largest size' }).fill('349');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/min_size=300&max_size=349/);
  await page.waitForFunction(() => document.getElementById('alloc-page')?.textContent === '1–50 of 50');
  await page.getByRole('button', { name: 'Size' }).click();
  await page.waitForURL(/sort=size/);
  await page.waitForFunction(() => document.querySelector('table.allocations tbody td:nth-child(3)')?.title === '349 bytes');
  await page.getByRole('button', { name: 'Size' }).click();
  await page.waitForURL(/order=asc/);
  await page.waitForFunction(() => document.querySelector('table.allocations tbody td:nth-child(3)')?.title === '300 bytes');
});

test('leaked only, a thread, a site, a lifetime and an instant each narrow the table', async () => {
  await show('&leaked=1&match=phase_|grow_block|worker_leak');
  assert.equal(await pageText(), '1–7 of 7');
  assert.deepEqual((await column('Size')).sort(), ['4,321', '50,000', '50,000', '7,000', '7,000', '7,000', '900'].sort());

  await show('');
  const worker = await page.locator('select[aria-label="Thread"] option', { hasText: 'phase-worker' }).textContent();
  await page.getByRole('combobox', { name: 'Thread' }).selectOption({ label: worker });
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/thread=\d+/);
  await rendered(page);
  await page.waitForFunction(() => document.getElementById('alloc-page')?.textContent === '1–1 of 1');
  assert.deepEqual(await column('Function'), ['worker_leak']);
  // The name with its tid, as the thread menu has it: pool threads share names.
  assert.deepEqual(await column('Thread'), [worker.replace(/^phase-worker \(tid (\d+)\)$/, 'phase-worker (tid $1)')]);
  assert.match(worker, /^phase-worker \(tid \d+\)$/);

  const sites = await getJson(baseUrl, '/api/dumps/0/sites?sort=allocations&limit=1000');
  const one = sites.sites.find((s) => s.top.function === 'phase_one');
  await show(`&site=${one.id}`);
  assert.equal(await pageText(), '1–4 of 4');

  // A block never freed has an endless lifetime: the upper bound leaves it out.
  await show('&min_life=500000000&max_life=2000000000&match=phase_');
  assert.equal(await pageText(), '1–4 of 4');
  assert.deepEqual(await column('Function'), ['phase_one', 'phase_one', 'phase_one', 'phase_one']);

  await show(`&at=${phaseTwo + 150 * MS}&alive=1&match=phase_`);
  assert.equal(await pageText(), '1–6 of 6');

  await show(`&from=${phaseTwo - 150 * MS}&to=${phaseTwo + 150 * MS}`);
  assert.equal(await pageText(), '1–2 of 2');
  assert.deepEqual(await column('Function'), ['phase_two', 'phase_two']);
});

test('realloc chains only keeps the blocks that realloc made or moved', async () => {
  await show('');
  await page.getByRole('checkbox', { name: 'Realloc chains only' }).check();
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/realloc=1/);
  await page.waitForFunction(() => document.getElementById('alloc-page')?.textContent === '1–3 of 3');
  const sizes = (await column('Size')).map((s) => Number(s.replace(/,/g, '')));
  assert.deepEqual(sizes, [100, 500, 900], 'grow_block: malloc(100) -> realloc(500) -> realloc(900)');
  assert.ok((await column('Function')).every((f) => f.startsWith('grow_block')));
});

test('a lifetime within one clock tick reads as such, not as 0 ns', async () => {
  // many_small frees each of its 250 blocks at once: most share the tick
  // (or counter value) of their allocation, so their lifetimes are 0.
  const zero = await getJson(baseUrl, '/api/dumps/0/allocations?match=many_small&max_life_ns=0&limit=1');
  assert.ok(zero.total > 0, 'some blocks of many_small live less than a tick');
  await show('&match=many_small&max_life=0');
  assert.equal(await pageText(), `1–${Math.min(100, zero.total)} of ${zero.total}`);
  assert.deepEqual([...new Set(await column('Lifetime'))], ['< 1 tick']);
});

test('a bad size in the form is an error sentence, not a request', async () => {
  await show('');
  await page.getByRole('textbox', { name: 'Smallest size' }).fill('lots');
  await page.getByRole('button', { name: 'Apply' }).click();
  const alert = page.getByRole('form', { name: 'Filters' }).getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /"lots" is not a size/);
});

test('an invalid regex is an error beside the form, which keeps what was typed', async () => {
  await show('&match=many_small');
  const match = page.getByRole('textbox', { name: 'Function or library' });
  await match.fill('phase_(');
  await page.getByRole('button', { name: 'Apply' }).click();
  const alert = page.getByRole('form', { name: 'Filters' }).getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /match/);
  assert.equal(await page.getByRole('heading', { name: 'Something went wrong' }).count(), 0);
  assert.equal(await page.getByRole('textbox', { name: 'Function or library' }).inputValue(), 'phase_(');
  assert.equal(await page.getByRole('table', { name: 'Allocations' }).count(), 0);
  // Fixing it brings the table back.
  await page.getByRole('textbox', { name: 'Function or library' }).fill('phase_');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('table', { name: 'Allocations' }).waitFor();
  assert.equal(await page.locator('#filter-error').isHidden(), true);
});

test('a row opens its backtrace and its realloc chain', async () => {
  await show('&match=grow_block&leaked=1');
  assert.equal(await pageText(), '1–1 of 1');
  await page.locator('table.allocations tbody tr').first().click();
  await page.waitForURL(/sel=\d+/);
  await rendered(page);
  const detail = page.getByRole('region', { name: 'Allocation' });
  const frames = await detail.getByRole('list', { name: 'Backtrace, innermost first' }).getByRole('listitem').allTextContents();
  assert.match(frames[0], /^grow_block.*timed_phases\.c:\d+/);
  assert.match(frames[1], /^main/);
  const chain = await detail.getByRole('list', { name: 'Realloc chain' }).getByRole('listitem').allTextContents();
  assert.deepEqual(chain.map((c) => c.match(/: ([\d,]+) bytes/)[1]), ['100', '500', '900']);
  await page.screenshot({ path: join(images, 'view-allocations.png'), fullPage: true });
});
