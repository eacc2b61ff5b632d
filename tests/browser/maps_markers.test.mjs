// Markers on the Maps view's chart, on tests/programs/mapped_marks (mmap 64
// KiB kept, marker "mapped", mmap and munmap 256 KiB, marker "unmapped"): the
// chart draws them as the overview's timeline does (purple dashed lines), the
// list under it links to the range between them, and that range's chart
// draws only the markers in it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, markerPixels, openView, program, record, rendered, requireFiles, scratch } from './support.mjs';

let view;

before(async () => {
  requireFiles(program('mapped_marks'));
  view = await openView(record(scratch(), 'mapped_marks', [program('mapped_marks')]));
});

after(() => closeView(view));

test('the Maps chart draws the dump\'s two markers and lists them as links', async () => {
  const { page, baseUrl } = view;
  const answer = await getJson(baseUrl, '/api/dumps/0/maps');
  assert.deepEqual(answer.markers.map((m) => [m.label, m.source]), [['mapped', 'api'], ['unmapped', 'api']]);
  assert.equal(answer.totals.live_bytes, 64 * 1024);
  await page.goto(`${baseUrl}/#/maps?dump=0`);
  await rendered(page);
  const chart = page.locator('.chart').first();
  await chart.locator('canvas').waitFor();
  assert.equal(await chart.getAttribute('data-markers'), '2');
  assert.ok(await markerPixels(chart) > 50, 'the markers are drawn');
  const links = page.locator('#markers').getByRole('link');
  assert.deepEqual((await links.allTextContents()).map((t) => t.split(' at ')[0]), ['mapped', 'unmapped']);
  assert.match(await links.first().getAttribute('href'), /^#\/maps\?.*from=mark%3Amapped&to=mark%3Aunmapped/);
  await page.screenshot({ path: join(images, 'view-maps-markers.png') });
});

test('a range before the first marker draws none', async () => {
  const { page, baseUrl } = view;
  const { markers } = await getJson(baseUrl, '/api/dumps/0/maps');
  await page.goto(`${baseUrl}/#/maps?dump=0&from=0&to=${markers[0].time_ns - 1}`);
  await rendered(page);
  const chart = page.locator('.chart').first();
  await chart.locator('canvas').waitFor();
  assert.equal(await chart.getAttribute('data-markers'), '0');
  assert.equal(await markerPixels(chart), 0);
  assert.equal(await page.locator('#markers').count(), 0);
});
