// A time range and an instant on tests/programs/timed_phases, whose phases are
// 300 ms apart: 4 × 10000 held from 0 to 600 ms (phase_one), 2 × 50000 leaked
// at 300 ms (phase_two), 3 × 7000 leaked at 600 ms (phase_three). Dragging on
// the timeline over 150..450 ms must leave only phase_two's 2 allocations in
// every view; clicking at 450 ms must show phase_one and phase_two live.
// Also the call sites' sparklines, the flamegraph's live metric and the
// Downloads menu. Screenshots: overview, instant, call sites, flamegraph.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeView, getJson, images, program, record, openView, rendered, requireFiles, scratch, timelineX } from './support.mjs';

const MS = 1e6;
let view; // memrec view and the browser page on it
let baseUrl;
let page;
let timeline;

before(async () => {
  requireFiles(program('timed_phases'));
  const [dump] = record(scratch(), 'timed_phases', [program('timed_phases')]);
  view = await openView([dump]);
  ({ baseUrl, page } = view);
  timeline = await getJson(baseUrl, '/api/dumps/0/timeline');
});

after(() => closeView(view));

// The time of the first bucket whose heap reaches `bytes`: where a phase starts.
function phaseStart(bytes) {
  const i = timeline.heap_bytes.findIndex((b) => b >= bytes);
  assert.ok(i >= 0, `the heap never reached ${bytes} bytes`);
  return timeline.time_ns[i];
}

async function cardText(name) {
  const card = page.getByRole('region', { name });
  await card.waitFor();
  return card.textContent();
}

test('dragging on the timeline selects a range, and the figures follow it', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  assert.match(await cardText('Leaked'), /126,221 bytes in 7 blocks/);
  await page.locator('.chart .u-over').first().waitFor();
  const two = phaseStart(140000);  // phase_two starts
  const start = await timelineX(page, timeline, two - 150 * MS);
  const end = await timelineX(page, timeline, two + 150 * MS);
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move((start.x + end.x) / 2, start.y, { steps: 4 });
  await page.mouse.move(end.x, end.y, { steps: 4 });
  await page.mouse.up();
  await page.waitForURL(/from=\d+&to=\d+/);
  await rendered(page);
  await page.getByRole('group', { name: 'Range' }).waitFor();
  await page.waitForFunction(() => /100,000 bytes in 2 blocks/.test(document.querySelector('[aria-label="Leaked"]')?.textContent ?? ''));
  assert.match(await cardText('Allocations'), /^Allocations2100,000 bytes requested/);
  assert.match(await cardText('Peak heap'), /140,000 bytes/);
  await page.screenshot({ path: join(images, 'view-overview.png'), fullPage: true });

  // Every other view follows the range.
  await page.getByRole('link', { name: 'Call sites' }).click();
  await page.waitForURL(/#\/sites\?.*from=\d+/);
  await rendered(page);
  const rows = page.locator('tr.site');
  await rows.first().waitFor();
  // Sorted by leaked: phase_two's, the only one leaked in the range, first; the
  // rows are the same whatever the sort (phase_one's blocks are live in it).
  assert.match(await rows.first().textContent(), /^phase_two.*97\.7 KiB/);
  const leakedRows = await rows.count();
  for (let i = 1; i < leakedRows; ++i) assert.equal((await rows.nth(i).getByRole('cell').allTextContents())[2], '0 B');
  await page.getByRole('button', { name: 'At peak' }).click();
  await page.waitForURL(/sort=peak/);
  await rendered(page);
  await page.waitForFunction(() => document.querySelector('th[aria-sort="descending"]')?.textContent === 'At peak');
  assert.equal(await rows.count(), leakedRows);
  await page.getByRole('link', { name: 'Flamegraph' }).click();
  await page.waitForURL(/#\/flame\?.*from=\d+/);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of leaked' }).waitFor();
  assert.match(await page.locator('#flame-summary').textContent(), /^100,000 bytes in all/);

  // The chip's reset brings the whole recording back.
  await page.getByRole('button', { name: 'Reset the range' }).click();
  await page.waitForURL((url) => !/from=/.test(url.hash));
  await rendered(page);
  await page.waitForFunction(() => /126,221 bytes/.test(document.getElementById('flame-summary')?.textContent ?? ''));
});

test('the timeline zooms to the selected range and back', async () => {
  const two = phaseStart(140000);
  await page.goto(`${baseUrl}/#/overview?dump=0&from=${two - 150 * MS}&to=${two + 150 * MS}`);
  await rendered(page);
  const whole = await page.locator('#buckets').textContent();
  // Every card is the range's: the duration too, with the whole run's beside it.
  assert.match(await cardText('Duration'), /^Duration300\.0 msof a [\d.]+ \S+ run; 2 threads$/);
  await page.getByRole('checkbox', { name: 'zoom the timeline to the range' }).check();
  await page.waitForURL(/tz=1/);
  await rendered(page);
  const zoomed = await page.locator('#buckets').textContent();
  const width = (text) => text.match(/buckets of ([\d.]+ \S+);/)[1];
  assert.notEqual(width(zoomed), width(whole), 'finer buckets over the range');
  assert.match(width(zoomed), /µs$/, '300 ms in at most 512 buckets');
  await page.getByRole('checkbox', { name: 'zoom the timeline to the range' }).uncheck();
  await page.waitForURL((url) => !/tz=/.test(url.hash));
});

test('clicking an instant shows the heap then: bytes, blocks and the sites live', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  await page.locator('.chart .u-over').first().waitFor();
  const at = await timelineX(page, timeline, phaseStart(140000) + 150 * MS);
  await page.mouse.click(at.x, at.y);
  await page.waitForURL(/at=\d+/);
  await rendered(page);
  const panel = page.getByRole('region', { name: 'Heap at the instant' });
  await panel.getByRole('table').waitFor();
  const text = await panel.textContent();
  assert.match(text, /140,000 bytes/);
  assert.match(text, /Live blocks6/);
  const rows = panel.getByRole('row');
  const cells = async (i) => rows.nth(i).getByRole('cell').allTextContents();
  const [two, one] = [await cells(1), await cells(2)];
  assert.deepEqual([two[0], two[2], two[3]], ['phase_two', '100,000', '2']);
  assert.deepEqual([one[0], one[2], one[3]], ['phase_one', '40,000', '4']);
  await page.screenshot({ path: join(images, 'view-instant.png'), fullPage: true });

  // The sites can be sorted by bytes live then, and the flamegraph shows them.
  await page.getByRole('link', { name: 'Call sites' }).click();
  await page.getByRole('button', { name: 'Live at instant' }).click();
  await page.waitForURL(/sort=live/);
  await rendered(page);
  await page.waitForFunction(() => document.querySelector('th[aria-sort="descending"]')?.textContent === 'Live at instant');
  const first = await page.locator('tr.site').first().getByRole('cell').allTextContents();
  assert.equal(first[0], 'phase_two');
  assert.equal(first[first.length - 2], '97.7 KiB');
  await page.goto(`${page.url().replace('#/sites', '#/flame').replace(/&sort=live/, '')}&metric=live`);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of live' }).waitFor();
  assert.match(await page.locator('#flame-summary').textContent(), /^140,000 bytes in all/);
});

test('each call site has a sparkline of its live bytes and opens to its backtrace', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocations&at=${phaseStart(140000) + 150 * MS}`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: 'phase_one' });
  await row.waitFor();
  const spark = row.getByRole('img', { name: /Live bytes over the range, highest 40,000 bytes/ });
  await spark.waitFor();
  assert.equal(await spark.locator('polyline').count(), 1);
  await page.screenshot({ path: join(images, 'view-call-sites.png'), fullPage: true });
  await page.getByRole('row').filter({ hasText: 'phase_two' }).click();
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  await backtrace.waitFor();
  const frames = await backtrace.getByRole('listitem').allTextContents();
  assert.match(frames[0], /^phase_two.*timed_phases\.c:\d+/);
});

test('the call sites page from the offset in the URL', async () => {
  // 8 program sites (timed_phases.c) and whatever the runtime adds (ld.so's calloc).
  const { total } = await getJson(baseUrl, '/api/dumps/0/sites?sort=allocations');
  assert.ok(total >= 8 && total <= 100, `${total} sites`);
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocations&offset=5`);
  await rendered(page);
  assert.equal(await page.locator('#sites-page').textContent(), `6–${total} of ${total}`);
  assert.equal(await page.locator('tr.site').count(), total - 5);
  await page.getByRole('button', { name: '‹ Previous' }).click();
  await page.waitForURL((url) => !/offset=/.test(url.hash));
  await rendered(page);
  assert.equal(await page.locator('tr.site').count(), total);
  assert.equal(await page.locator('#sites-page').count(), 0, 'one page needs no pager');
});

test('the flamegraph switches to live at the peak', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0`);
  await rendered(page);
  await page.getByRole('combobox', { name: 'Metric' }).selectOption('peak');
  await page.waitForURL(/metric=peak/);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of peak' }).waitFor();
  assert.match(await page.locator('#flame-summary').textContent(), /^140,000 bytes in all/);
  await page.getByRole('searchbox', { name: 'Search functions' }).fill('phase_one');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForFunction(() => /phase_one/.test(document.getElementById('flame-summary')?.textContent ?? ''));
  assert.match(await page.locator('#flame-summary').textContent(), /40,000 bytes of 140,000 bytes/);
  await page.screenshot({ path: join(images, 'view-flamegraph.png'), fullPage: true });
});

test('the Downloads menu gives the current dump, range and metric in each format', async () => {
  const two = phaseStart(140000);
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=allocated&from=${two - 150 * MS}&to=${two + 150 * MS}`);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of allocated' }).waitFor();
  await page.getByText('Downloads').click();
  const collapsed = page.getByRole('link', { name: 'collapsed stacks' });
  assert.match(await collapsed.getAttribute('href'), /format=collapsed&metric=allocated&from=\d+&to=\d+/);
  const [download] = await Promise.all([page.waitForEvent('download'), collapsed.click()]);
  const text = readFileSync(await download.path(), 'utf8');
  assert.match(text, /phase_two 100000$/m, 'only the range, by the metric');
  assert.doesNotMatch(text, /phase_one/);
  for (const format of ['pprof', 'svg', 'massif', 'heaptrack', 'json']) {
    const href = await page.locator(`a[data-format="${format}"]`).getAttribute('href');
    const response = await fetch(`${baseUrl}${href}`);
    assert.equal(response.status, 200, `${format}: ${response.status}`);
    assert.match(response.headers.get('content-disposition') ?? '', /attachment/, format);
    assert.ok((await response.arrayBuffer()).byteLength > 0, `${format} is not empty`);
  }
});

test('the Downloads menu carries the allocation filters, and the file holds only those allocations', async () => {
  await page.goto(`${baseUrl}/#/allocations?dump=0`);
  await rendered(page);
  await page.getByRole('textbox', { name: 'Smallest size' }).fill('10000');
  await page.getByRole('textbox', { name: 'Largest size' }).fill('10000');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/min_size=10000&max_size=10000/);
  await rendered(page);
  assert.equal(await page.locator('#alloc-page').textContent(), '1–4 of 4', 'phase_one\'s four blocks');
  await page.getByText('Downloads').click();
  assert.equal(await page.locator('#downloads-filters').textContent(), 'Only allocations at least 10,000 bytes, at most 10,000 bytes.');
  const collapsed = page.getByRole('link', { name: 'collapsed stacks' });
  assert.match(await collapsed.getAttribute('href'), /format=collapsed&metric=allocated&min_size=10000&max_size=10000$/);
  const [download] = await Promise.all([page.waitForEvent('download'), collapsed.click()]);
  assert.equal(readFileSync(await download.path(), 'utf8'),
    '_start;__libc_start_main_impl;__libc_start_call_main;main;phase_one 40000\n');
  await page.getByText('Downloads').click();
  assert.equal(await page.locator('a[data-format="heaptrack"]').textContent(), 'heaptrack (whole recording, no filters)');
  assert.equal(await page.locator('a[data-format="heaptrack"]').getAttribute('href'), '/api/dumps/0/export?format=heaptrack');
  await page.getByText('Downloads').click();
});

test('the flamegraph\'s search narrows the downloads to the frames it finds', async () => {
  const two = phaseStart(140000);
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=peak&q=phase_one&from=${two - 150 * MS}&to=${two + 150 * MS}`);
  await rendered(page);
  assert.match(await page.locator('#flame-summary').textContent(), /40,000 bytes of 140,000 bytes/);
  await page.getByText('Downloads').click();
  assert.equal(await page.locator('#downloads-filters').textContent(), 'Only allocations a frame containing “phase_one”.');
  const href = await page.locator('a[data-format="collapsed"]').getAttribute('href');
  assert.match(href, /metric=peak&from=\d+&to=\d+&search=phase_one$/);
  const text = await (await fetch(`${baseUrl}${href}`)).text();
  assert.equal(text, '_start;__libc_start_main_impl;__libc_start_call_main;main;phase_one 40000\n', 'the summary\'s 40,000');
  await page.getByText('Downloads').click();
});

test('a metric that exports lack is named in the Downloads menu, not silently replaced', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=live&at=${phaseStart(140000) + 150 * MS}`);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of live' }).waitFor();
  await page.getByText('Downloads').click();
  const note = page.getByRole('note');
  await note.waitFor();
  assert.equal(await note.textContent(),
    'Exports have no “live at the instant” metric: collapsed stacks and the SVG weigh allocated bytes instead.');
  const collapsed = page.locator('a[data-format="collapsed"]');
  assert.equal(await collapsed.textContent(), 'collapsed stacks (allocated bytes)');
  assert.match(await collapsed.getAttribute('href'), /metric=allocated/);
  await page.screenshot({ path: join(images, 'view-downloads-note.png'), fullPage: true });
  await page.getByText('Downloads').click();
  // The sites' "leaked blocks" sort has one: leaked-count.
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=count`);
  await rendered(page);
  await page.getByText('Downloads').click();
  assert.equal(await page.getByRole('note').count(), 0);
  assert.match(await page.locator('a[data-format="collapsed"]').getAttribute('href'), /metric=leaked-count/);
  await page.getByText('Downloads').click();
});
