// The Maps view on a recording of tests/programs/mmap_prog, which leaves one
// 64 KiB anonymous mapping from map_anon after 4 mmaps, 1 mremap and 5
// munmaps: the page shows that mapping's size (exact bytes on hover), address
// and backtrace as /api/dumps/0/maps gives them, each stack's figures, and a
// chart; leak_three's dump, which maps nothing, says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, openView, program, record, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;

before(async () => {
  requireFiles(program('mmap_prog'), program('leak_three'));
  const dir = scratch();
  view = await openView([...record(dir, 'mmap_prog', [program('mmap_prog')]), ...record(dir, 'leak_three', [program('leak_three')])]);
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// A bucket's width as the page writes it (format.js duration): 1000 × 2^k ns.
const width = (ns) => (ns < 1e6 ? `${(ns / 1e3).toFixed(1)} µs` : ns < 1e9 ? `${(ns / 1e6).toFixed(1)} ms` : `${(ns / 1e9).toFixed(2)} s`);

test('the header\'s Maps link opens the view with the live 64 KiB mapping and its backtrace', async () => {
  const api = await getJson(baseUrl, '/api/dumps/0/maps');
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  await page.getByRole('link', { name: 'Maps', exact: true }).click();
  await page.waitForURL(/#\/maps\?dump=0$/);
  await rendered(page);
  assert.equal(await page.getByRole('link', { name: 'Maps', exact: true }).getAttribute('aria-current'), 'page');

  const calls = page.getByRole('group', { name: 'Calls' });
  assert.match(await calls.textContent(), /4 mmap · 1 mremap · 5 munmap/);
  const end = page.getByRole('group', { name: 'Mapped at the end' });
  assert.match(await end.textContent(), /^Mapped at the end64 KiB1 mapping$/);

  const table = page.getByRole('table', { name: 'Live mappings' });
  const rows = table.getByRole('row');
  assert.equal(await rows.count(), 2, 'a header and one mapping');
  const cells = rows.nth(1).getByRole('cell');
  assert.equal(await cells.nth(0).textContent(), '64 KiB');
  assert.equal(await cells.nth(0).locator('span').getAttribute('title'), '65,536 bytes');
  assert.equal(await cells.nth(1).textContent(), api.mappings[0].address);
  assert.match(await cells.nth(3).textContent(), /^map_anon ← main:\d+$/, 'the label and its caller');
  assert.match(await cells.nth(4).textContent(), /^mmap_prog\.c:\d+/);

  await rows.nth(1).click();
  await page.waitForURL(/open=0x[0-9a-f]+/);
  await rendered(page);
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  const functions = await backtrace.locator('.fn').allTextContents();
  assert.deepEqual(functions.slice(0, 2), ['map_anon', 'main']);
  assert.deepEqual(functions, api.mappings[0].frames.map((f) => f.function ?? f.label));
  assert.ok(await page.getByRole('img', { name: 'Mapped bytes and live mappings over time' }).isVisible());
  assert.equal(await page.locator('#maps-buckets').textContent(),
    `${api.series.time_ns.length} buckets of ${width(api.series.bucket_ns)}: the line is the bytes mapped at each ` +
    'bucket\'s end, the dashed one the highest in it.');
  await page.screenshot({ path: join(images, 'view-maps.png'), fullPage: true });
});

test('the stacks table has each stack\'s exact figures, the mremap under main', async () => {
  await page.goto(`${baseUrl}/#/maps?dump=0`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Mapping stacks' });
  const rows = table.getByRole('row');
  assert.equal(await rows.count(), 6, 'a header and five stacks');
  const texts = [];
  for (let i = 1; i < 6; i += 1) {
    const cells = await rows.nth(i).getByRole('cell').allTextContents();
    texts.push([cells[0].split(' ← ')[0], ...cells.slice(2, 9)]);
  }
  // Function (without its caller), mmap, mremap, Mapped, Unmapped, Live, Live count, Highest: the live stack first.
  assert.deepEqual(texts[0], ['map_anon', '1', '0', '64 KiB', '0 B', '64 KiB', '1', '64 KiB']);
  assert.deepEqual(texts.slice(1).sort(), [
    ['main', '0', '1', '512 KiB', '512 KiB', '0 B', '0', '512 KiB'],
    ['map_anon', '1', '0', '1 MiB', '1 MiB', '0 B', '0', '1 MiB'],
    ['map_anon', '1', '0', '128 KiB', '128 KiB', '0 B', '0', '128 KiB'],
    ['map_anon', '1', '0', '256 KiB', '256 KiB', '0 B', '0', '256 KiB'],
  ]);
  await rows.filter({ hasText: '512 KiB' }).click();
  await page.waitForURL(/stack=\d+/);
  await rendered(page);
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  assert.equal(await backtrace.locator('.fn').first().textContent(), 'main');
});

test('a range after the mapping was made lists no live mapping', async () => {
  const api = await getJson(baseUrl, '/api/dumps/0/maps');
  await page.goto(`${baseUrl}/#/maps?dump=0&from=${api.mappings[0].mapped_at_ns + 1}`);
  await rendered(page);
  assert.equal(await page.getByRole('heading', { name: 'Mapped in the range, still mapped at the end' }).count(), 1);
  const table = page.getByRole('table', { name: 'Live mappings' });
  assert.equal(await table.getByRole('cell').textContent(), 'No mapping made in this range is still mapped at the end.');
});

test('a drag on the chart selects a range, and the live table lists what the API lists for it', async () => {
  await page.goto(`${baseUrl}/#/maps?dump=0`);
  await rendered(page);
  const box = await page.locator('.chart .u-over').boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.3, y, { steps: 4 });
  await page.mouse.move(box.x + box.width * 0.6, y, { steps: 4 });
  await page.mouse.up();
  await page.waitForURL(/from=\d+&to=\d+/);
  await rendered(page);
  const hash = new URLSearchParams(new URL(page.url()).hash.split('?')[1]);
  const api = await getJson(baseUrl, `/api/dumps/0/maps?from=${hash.get('from')}&to=${hash.get('to')}`);
  assert.equal(await page.getByRole('heading', { name: 'Mapped in the range, still mapped at the end' }).count(), 1);
  const rows = page.getByRole('table', { name: 'Live mappings' }).getByRole('row');
  if (api.mappings_total === 0) {
    assert.equal(await rows.count(), 2);
    assert.equal(await rows.nth(1).textContent(), 'No mapping made in this range is still mapped at the end.');
  } else {
    assert.equal(await rows.count(), 1 + api.mappings.length);
    assert.equal(await rows.nth(1).getByRole('cell').nth(1).textContent(), api.mappings[0].address);
  }
  assert.equal(await page.locator('#maps-live').textContent(),
    `${api.mappings_total} ${api.mappings_total === 1 ? 'mapping' : 'mappings'}, largest first. A munmap of part of a mapping leaves its pieces.`);
});

test('a dump without anonymous mappings says so', async () => {
  await page.goto(`${baseUrl}/#/maps?dump=1`);
  await rendered(page);
  assert.match(await page.locator('#maps-none').textContent(), /^This dump has no anonymous mappings/);
  assert.equal(await page.getByRole('table').count(), 0);
});
