// An expanded call site's chart, on tests/programs/marker_phases (10 x 1,000
// bytes in phase_one, marker "a", 7 x 3,000 in phase_two, marker "b", 5 x
// 5,000 in phase_three, marker "b" again; nothing freed) and growth_service
// (its cache keeps 1,000 bytes every 10 ms): the chart is drawn from
// /sites/{site}/series, whose last point is the site's live bytes at the
// range's end as `memrec report --retained 0..T --at T` counts them, with the
// markers drawn (purple pixels) on one and none on the other.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, markerPixels, openView, program, record, rendered, reportOf, requireFiles, scratch } from './support.mjs';

let view;
let phases;
let service;

before(async () => {
  requireFiles(program('marker_phases'), program('growth_service'));
  const dir = scratch();
  [phases] = record(dir, 'marker_phases', [program('marker_phases')]);
  [service] = record(dir, 'growth_service', [program('growth_service'), '150', 'exit']);
  view = await openView([phases, service]);
});

after(() => closeView(view));

// {function: [bytes, blocks]} live at `ns` (since the start), as the report's
// retention counts everything allocated before it.
function liveAt(dump, ns) {
  const rep = reportOf(dump, '--retained', `0ns..${ns}ns`, '--at', `${ns}ns`);
  // A label's function without its namespace: `(anonymous namespace)::cache_insert` is cache_insert.
  return Object.fromEntries(rep.retained.sites.map((s) => [rep.sites[s.site].label.split('::').pop(), [s.bytes, s.count]]));
}

// Expands the first row naming `fn` and waits for its chart; its /series answer too.
async function expand(page, baseUrl, fn, hash) {
  await page.goto(`${baseUrl}/${hash}`);
  await rendered(page);
  const row = page.locator('tr.site', { has: page.locator('td.fn', { hasText: fn }) }).first();
  const id = await row.getAttribute('data-site');
  await row.click();
  await rendered(page);
  const chart = page.locator('.site-chart .chart');
  await chart.locator('canvas').waitFor();
  const state = new URLSearchParams(page.url().split('?')[1]);
  const range = ['from', 'to'].filter((k) => state.has(k)).map((k) => `&${k}=${state.get(k)}`).join('');
  const series = await getJson(baseUrl, `/api/dumps/${state.get('dump')}/sites/${id}/series?buckets=200${range}`);
  return { chart, series, state };
}

test('phase_two\'s chart ends at its 21,000 live bytes in 7 blocks, with the three markers drawn', async () => {
  const { page, baseUrl } = view;
  const { chart, series } = await expand(page, baseUrl, 'phase_two', '#/sites?dump=0');
  const end = series.range.to_ns;
  assert.deepEqual(liveAt(phases, end).phase_two, [21000, 7]);
  assert.deepEqual([series.end.live_bytes, series.end.live_count], [21000, 7]);
  assert.equal(series.live_bytes.at(-1), 21000);
  assert.equal(series.live_bytes[0], 0);
  assert.equal(series.time_ns.length, 201);
  assert.deepEqual([series.time_ns[0], series.time_ns.at(-1)], [0, end]);
  // What the chart drew is that answer: its label and note name its end figures.
  assert.equal(await chart.getAttribute('data-end-bytes'), '21000');
  assert.match(await chart.getAttribute('aria-label'), /21,000 bytes in 7 blocks at the end$/);
  assert.deepEqual(series.markers.map((m) => m.label), ['a', 'b', 'b']);
  assert.equal(await chart.getAttribute('data-markers'), '3');
  assert.match(await page.locator('.site-chart-note').textContent(), /Markers \(dashed\): a, b, b\./);
  assert.ok(await markerPixels(chart) > 50, 'the markers are drawn on the chart');
  // Hovering names the exact bytes at that time: the chart's right edge is the end.
  const over = chart.locator('.u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
  await page.locator('.site-chart .u-legend', { hasText: '(21,000 bytes)' }).waitFor();
  await page.screenshot({ path: join(images, 'view-site-chart.png') });
});

test('over the range mark:a to mark:b, phase_one\'s chart ends at what it held at b, before the range', async () => {
  const { page, baseUrl } = view;
  const { chart, series, state } = await expand(page, baseUrl, 'phase_one', '#/sites?dump=0&from=mark:a&to=mark:b');
  const { markers } = reportOf(phases);
  assert.equal(state.get('from'), String(markers[0].time_ns));
  assert.deepEqual([series.range.from_ns, series.range.to_ns], [markers[0].time_ns, markers[1].time_ns]);
  assert.deepEqual(liveAt(phases, markers[1].time_ns).phase_one, [10000, 10]);
  assert.deepEqual([series.end.live_bytes, series.end.live_count], [10000, 10]);
  assert.ok(series.live_bytes.every((v) => v === 10000), 'flat over the range: phase_one allocated before it');
  assert.deepEqual(series.markers.map((m) => m.label), ['a', 'b']);
  assert.equal(await chart.getAttribute('data-end-count'), '10');
});

test('the growth service\'s cache climbs to its live bytes at 1 s, and its chart has no marker', async () => {
  const { page, baseUrl } = view;
  const { chart, series } = await expand(page, baseUrl, 'cache_insert', '#/sites?dump=1&sort=growth&from=0&to=1000000000');
  const [bytes, count] = liveAt(service, 1000000000).cache_insert;
  assert.ok(bytes >= 90000 && bytes <= 110000, `about 100 entries of 1,000 bytes by 1 s: ${bytes}`);
  assert.deepEqual([series.end.live_bytes, series.end.live_count], [bytes, count]);
  for (let i = 1; i < series.live_bytes.length; i += 1) assert.ok(series.live_bytes[i] >= series.live_bytes[i - 1]);
  assert.equal(series.markers.length, 0);
  assert.equal(await markerPixels(chart), 0);
  assert.equal(await chart.getAttribute('data-end-bytes'), String(bytes));
});
