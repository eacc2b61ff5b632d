// Markers in the UI, on tests/programs/marker_phases (10 x 1,000 bytes,
// marker "a", 7 x 3,000, marker "b", 5 x 5,000, marker "b" again): the
// overview draws and lists them, and a link naming markers (`from=mark:a&to=mark:b`)
// shows the range between them, as `memrec report --from mark:a --to mark:b` counts it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeView, openView, program, record, rendered, reportOf, requireFiles, scratch } from './support.mjs';

let view;
let dump;

before(async () => {
  requireFiles(program('marker_phases'));
  [dump] = record(scratch(), 'marker_phases', [program('marker_phases')]);
  view = await openView([dump]);
});

after(() => closeView(view));

const report = (...args) => reportOf(dump, ...args);

test('the overview lists the markers under its timeline, each a link to the range it opens', async () => {
  const { page, baseUrl } = view;
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const list = page.locator('#markers');
  const links = list.getByRole('link');
  assert.equal(await links.count(), 3);
  const texts = await links.allTextContents();
  assert.deepEqual(texts.map((t) => t.split(' at ')[0]), ['a', 'b', 'b']);
  assert.match(await links.nth(0).getAttribute('href'), /from=mark%3Aa&to=mark%3Ab(&|$)/);
  assert.match(await links.nth(1).getAttribute('href'), /from=mark%3Ab&to=mark%3Ab%232(&|$)/);
  const timeline = await (await fetch(`${baseUrl}/api/dumps/0/timeline`)).json();
  assert.deepEqual(timeline.markers.map((m) => [m.label, m.source]), [['a', 'api'], ['b', 'api'], ['b', 'api']]);
});

test('a link from mark:a to mark:b shows the range between them, as the report counts it', async () => {
  const { page, baseUrl } = view;
  const expected = report('--from', 'mark:a', '--to', 'mark:b');
  assert.equal(expected.allocated_bytes, 21000);
  await page.goto(`${baseUrl}/#/overview?dump=0&from=mark:a&to=mark:b`);
  await rendered(page);
  // The hash now holds the markers' times, so every view reads plain ns.
  const { markers } = report();
  const hash = new URLSearchParams(page.url().split('?')[1]);
  assert.equal(hash.get('from'), String(markers[0].time_ns));
  assert.equal(hash.get('to'), String(markers[1].time_ns));
  const summary = await (await fetch(`${baseUrl}/api/dumps/0/summary?from=${hash.get('from')}&to=${hash.get('to')}`)).json();
  assert.equal(summary.allocated_bytes, 21000);
  assert.equal(summary.allocations, expected.allocations);
});

test('an unknown marker says which ones the dump has', async () => {
  const { page, baseUrl } = view;
  await page.goto(`${baseUrl}/#/overview?dump=0&from=mark:nope`);
  await rendered(page);
  const alert = page.getByRole('alert');
  assert.match(await alert.textContent(), /No marker “nope” in this dump: its markers are “a”, “b”\./);
});
