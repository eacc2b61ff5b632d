// memrec view on tests/programs/leak_three (3 × 4242 = 12726 bytes leaked from
// leak_here) and tests/programs/toggle (recording off twice): the overview, the
// recording-off periods, the leak list and its backtrace, the sort in the URL,
// the flamegraph's search and zoom, its count of allocations (3 from leak_here,
// 100 and a malloc(0) from churn), and the error page.
// Screenshots (the error page, the histograms, the bottom-up call tree) go to
// docs/images/ (MEMREC_SCREENSHOT_DIR elsewhere).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, place, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;

before(async () => {
  requireFiles(program('leak_three'), program('toggle'), program('churn'), program('many_live'));
  const dir = scratch();
  const dumps = [...record(dir, 'leak_three', [program('leak_three')]), ...record(dir, 'toggle', [program('toggle')]),
    ...record(dir, 'churn', [program('churn'), '1000']), ...record(dir, 'many_live', [program('many_live')])];
  view = await openView(dumps);
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

test('the overview shows the peak, the leak and a timeline', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  assert.equal(await page.locator('#recording-off').count(), 0, 'recording was never off');
  const leaked = page.getByRole('region', { name: 'Leaked' });
  await leaked.waitFor();
  assert.match(await leaked.textContent(), /12,726 bytes in 3 blocks/);
  await page.getByRole('region', { name: 'Peak heap' }).waitFor();
  await page.locator('.chart canvas').first().waitFor();
});

test('the overview names the top call sites, each a link to its open row', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const leaked = page.getByRole('region', { name: 'Largest leaks' });
  await leaked.waitFor();
  const items = await leaked.getByRole('listitem').allTextContents();
  assert.equal(items.length, 1, 'only leak_here leaks');
  assert.match(items[0], /^leak_here leak_three\.c:\d+ · leak_three12\.4 KiB$/);
  assert.equal(await leaked.locator('li .num').getAttribute('title'), '12,726 bytes');
  // churn's loop makes 100, leak_here 3, churn's malloc(0) 1.
  const allocations = await page.getByRole('region', { name: 'Most allocation calls' }).getByRole('listitem').allTextContents();
  assert.deepEqual(allocations.map((t) => t.replace(/ leak_three\.c:\d+ · leak_three/, '')), ['churn100', 'leak_here3', 'churn1']);
  // The last block of the loop and the malloc(0) are freed before the next allocation.
  assert.equal(await page.getByRole('region', { name: 'Most temporaries' }).getByRole('listitem').count(), 2);
  await leaked.getByRole('link', { name: 'leak_here' }).click();
  await page.waitForURL(/#\/sites\?dump=0&sort=leaked&open=\d+$/);
  await rendered(page);
  await page.getByRole('list', { name: 'Backtrace, innermost first' }).waitFor();
});

test('the overview has the size classes of every allocation and their lifetimes', async () => {
  // leak_three: malloc(i * 37 + 1) for i < 100, a malloc(0) and 3 × 4242.
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const sizes = page.getByRole('table', { name: 'Allocation sizes' });
  await sizes.waitFor();
  const rows = await sizes.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.children].slice(0, 2).map((c) => c.textContent).join(': ')));
  assert.deepEqual(rows, ['0 B: 1', '1 B: 1', '32 B – 64 B: 1', '64 B – 128 B: 2', '128 B – 256 B: 3', '256 B – 512 B: 7',
    '512 B – 1 KiB: 14', '1 KiB – 2 KiB: 28', '2 KiB – 4 KiB: 44', '4 KiB – 8 KiB: 3']);
  const lifetimes = await page.getByRole('table', { name: 'Lifetimes' }).locator('tbody tr td:first-of-type').allTextContents();
  assert.equal(lifetimes.reduce((a, t) => a + Number(t.replace(/,/g, '')), 0), 101, 'every freed block');
  assert.equal(await page.locator('#unfreed').textContent(), '3 allocations (12.4 KiB) still live at the end.');
  await page.getByRole('region', { name: 'Histograms' }).screenshot({ path: join(images, 'view-histograms.png') });
});

test('the overview names the periods when recording was off', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=1`);
  await rendered(page);
  assert.match(await page.getByRole('region', { name: 'Leaked' }).textContent(), /3,009 bytes in 3 blocks/);
  assert.match(await page.locator('#recording-off').textContent(),
    /^Recording was off \(grey\): [\d.]+ \S+ – [\d.]+ \S+, [\d.]+ \S+ – [\d.]+ \S+\.$/);
});

test('the live-block axis is wide enough for its six-digit ticks', async () => {
  // many_live holds 200,000 blocks at once: the axis once kept 50 px, and its
  // title overlapped "200,000".
  await page.goto(`${baseUrl}/#/overview?dump=3`);
  await rendered(page);
  await page.locator('.chart canvas').first().waitFor();
  const [axis, needed] = await page.evaluate(() => {
    const right = [...document.querySelectorAll('.chart')[0].querySelectorAll('.u-axis')].at(-1);
    const context = document.createElement('canvas').getContext('2d');
    context.font = '12px system-ui, sans-serif';
    return [right.getBoundingClientRect().width, context.measureText('200,000').width];
  });
  assert.ok(axis >= needed + 15, `the axis is ${axis} px; "200,000" takes ${needed} px and the ticks 15`);
  const widths = await page.locator('.chart').evaluateAll((charts) =>
    charts.map((c) => [...c.querySelectorAll('.u-axis')].at(-1).getBoundingClientRect().width));
  assert.equal(new Set(widths).size, 1, 'both charts keep the same right axis, so their plots line up');
});

test('the leak list shows leak_here with its exact bytes and expands to its backtrace', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: 'leak_here' });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[0], 'leak_here');
  assert.match(cells[1], /leak_three\.c:\d+ · leak_three$/);
  assert.equal(cells[2], '12.4 KiB');
  assert.equal(await row.getByRole('cell').nth(2).getAttribute('title'), '12,726 bytes');
  assert.equal(cells[3], '3');
  await row.click();
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  await backtrace.waitFor();
  const frames = await backtrace.getByRole('listitem').allTextContents();
  assert.match(frames[0], /^leak_here/);
  assert.match(frames[1], /^main/);
  assert.match(page.url(), /open=\d+/, 'the open row is in the URL');
  // The program's frames stand out, glibc's around main are dimmed.
  const kinds = await backtrace.getByRole('listitem').evaluateAll((items) =>
    items.map((li) => `${li.querySelector('.fn').textContent}: ${['own', 'library', 'folded'].find((k) => li.classList.contains(k))}`));
  assert.deepEqual(kinds.slice(0, 4),
    ['leak_here: own', 'main: own', '__libc_start_call_main: library', '__libc_start_main_impl: library']);
  assert.equal(await backtrace.locator('li.own .fn').first().evaluate((e) => getComputedStyle(e).fontWeight), '600');
});

test('an open site links to its allocations and to its frames in the flamegraph', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  const row = page.locator('tr.site').filter({ hasText: 'leak_here' });
  const id = await row.getAttribute('data-site');
  await row.click();
  await page.getByRole('link', { name: 'Its 3 allocations' }).click();
  await page.waitForURL(new RegExp(`#/allocations\\?dump=0&site=${id}$`));
  await rendered(page);
  await page.getByRole('table', { name: 'Allocations' }).waitFor();
  const sizes = page.locator('table.allocations tbody tr td:nth-child(3)');
  assert.deepEqual(await sizes.allTextContents(), ['4.14 KiB', '4.14 KiB', '4.14 KiB']);
  assert.deepEqual(await sizes.evaluateAll((tds) => tds.map((td) => td.title)), ['4,242 bytes', '4,242 bytes', '4,242 bytes']);

  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked&open=${id}`);
  await rendered(page);
  await page.getByRole('link', { name: 'In the flamegraph' }).click();
  await page.waitForURL(/#\/flame\?dump=0&metric=leaked&q=leak_here$/);
  await rendered(page);
  await page.locator('#flame-summary').waitFor();
  assert.match(await page.locator('#flame-summary').textContent(), /^“leak_here”: 12,726 bytes of 12,726 bytes/);
});

test('the sort is kept in the URL and the table follows it', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  await page.getByRole('button', { name: 'Allocations', exact: true }).click();
  await page.waitForURL(/sort=allocations/);
  await rendered(page);
  await page.waitForFunction(() => document.querySelector('th[aria-sort="descending"]')?.textContent === 'Allocations');
  const header = page.getByRole('columnheader', { name: 'Allocations' });
  assert.equal(await header.getAttribute('aria-sort'), 'descending');
});

test('a sort with no non-zero figure keeps the header, the rows and a way to other sorts', async () => {
  // churn frees everything: sorted by leaked, its one site has 0 leaked bytes.
  await page.goto(`${baseUrl}/#/sites?dump=2&sort=leaked`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: 'churn_alloc' });
  await row.waitFor();
  assert.equal((await row.getByRole('cell').allTextContents())[2], '0 B');
  assert.equal(await page.getByRole('columnheader', { name: 'Leaked bytes' }).getAttribute('aria-sort'), 'descending');
  const rowsBy = async () => page.locator('tr.site').count();
  assert.equal(await rowsBy(), 1);
  // Temporary and runtime-retained are sorts too, each shown as a column when chosen.
  await page.getByLabel('Sort by').selectOption('temporary');
  await page.waitForURL(/sort=temporary/);
  await rendered(page);
  const temporary = page.getByRole('columnheader', { name: 'Temporary' });
  await temporary.waitFor();
  assert.equal(await temporary.getAttribute('aria-sort'), 'descending');
  assert.equal(await rowsBy(), 1);
  assert.equal((await page.getByRole('row').filter({ hasText: 'churn_alloc' }).getByRole('cell').allTextContents())[7], '1');
  assert.match(await page.locator('#sites-count').textContent(), /^1 site with a non-zero figure, sorted by temporary allocations\./);
});

test('the flamegraph finds leak_here, zooms on click and keeps its state in the URL', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated`);
  await rendered(page);
  const canvas = page.getByRole('img', { name: 'Flamegraph of allocated' });
  await canvas.waitFor();
  await page.getByRole('searchbox', { name: 'Search functions' }).fill('leak_here');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForURL(/q=leak_here/);
  await rendered(page);
  await page.waitForFunction(() => /leak_here/.test(document.getElementById('flame-summary')?.textContent ?? ''));
  assert.match(await page.locator('#flame-summary').textContent(), /12,726 bytes of 195,976 bytes/);
  const box = await page.getByRole('img', { name: 'Flamegraph of allocated' }).boundingBox();
  await page.mouse.click(box.x + 5, box.y + 18 + 9);  // the first frame under the root
  await page.waitForURL(/zoom=0/);
  await rendered(page);
  await page.getByRole('button', { name: 'Reset zoom' }).waitFor();
});

test('bottom-up, the call tree lists the allocating functions first, each opening to its callers', async () => {
  // leak_three allocated 183,250 bytes in churn (malloc(i * 37 + 1), i < 100) and 3 × 4242 in leak_here.
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&inv=1&show=tree`);
  await rendered(page);
  const tree = page.getByRole('table', { name: 'Call tree, bottom-up' });
  await tree.waitFor();
  const cells = () => tree.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.children].map((c) => c.textContent.replace(/^[▸▾·] /, '')).join(' | ')));
  assert.deepEqual(await cells(), ['churn | 183,250 bytes | 93.5%', 'leak_here | 12,726 bytes | 6.5%']);
  const leakHere = tree.locator('tbody tr').nth(1);
  await leakHere.getByRole('button').click();
  assert.deepEqual(await cells(), ['churn | 183,250 bytes | 93.5%', 'leak_here | 12,726 bytes | 6.5%', 'main | 12,726 bytes | 6.5%']);
  await tree.locator('tbody tr').nth(2).getByRole('button').click();  // main opens to its caller too
  assert.equal(await tree.locator('tbody tr').count(), 4);
  await page.screenshot({ path: join(images, 'view-call-tree.png'), fullPage: true });
  await leakHere.getByRole('button').click();  // closing leak_here closes everything under it
  assert.equal(await tree.locator('tbody tr').count(), 2);
  // Top-down, the outermost frame comes first and holds everything.
  await page.getByLabel('Order').selectOption('');
  await page.waitForURL((url) => !/inv=/.test(url.hash));
  await rendered(page);
  const down = page.getByRole('table', { name: 'Call tree, top-down' });
  await down.waitFor();
  assert.match((await down.locator('tbody tr').allTextContents())[0], /195,976 bytes100\.0%$/);
  // And the bottom-up tree drawn as a flamegraph.
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&inv=1`);
  await rendered(page);
  await page.getByRole('img', { name: 'Inverted flamegraph of allocated' }).waitFor();
});

test('the flamegraph of allocations counts calls, not bytes', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated`);
  await rendered(page);
  await page.getByRole('combobox', { name: 'Metric' }).selectOption('allocations');
  await page.waitForURL(/metric=allocations/);
  await rendered(page);
  const canvas = page.getByRole('img', { name: 'Flamegraph of allocations' });
  await canvas.waitFor();
  assert.equal(await page.getByRole('combobox', { name: 'Metric' }).inputValue(), 'allocations');
  assert.equal(await page.locator('#flame-summary').textContent(), '104 in all');
  // Hovering leak_here's frame names its count of calls and its share.
  const flame = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocations');
  const at = place(flame.root, 'leak_here');
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width * (at.x + at.w / 2), box.y + at.depth * 18 + 9);
  await page.waitForFunction(() => document.getElementById('flame-info')?.textContent !== '\u00a0');
  assert.equal(await page.locator('#flame-info').textContent(), 'leak_here: 3 (2.9%)');
  // The search sums counts as well.
  await page.getByRole('searchbox', { name: 'Search functions' }).fill('churn');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForURL(/q=churn/);
  await rendered(page);
  assert.equal(await page.locator('#flame-summary').textContent(), '“churn”: 101 of 104');
});

test('an unknown dump shows an error message, not a blank page', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=7`);
  await rendered(page);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /No dump has id 7/);
  await page.screenshot({ path: join(images, 'view-error.png') });
});
