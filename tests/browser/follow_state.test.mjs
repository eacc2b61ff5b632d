// memrec view --follow keeps what the user set while a live dump updates the
// page in place: each test sets one thing (an open call-site row with the
// sort and the scroll, the flamegraph's zoom and search, a fixed range and
// an instant, a range to the live edge), waits for two live updates whose
// figures differ, and finds it still set, on the same page. The screenshots
// go to MEMREC_SCREENSHOT_DIR (docs/images/ by default), view-follow-*.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeFollowed, getJson, images, openFollowedService, rendered, waitFor } from './support.mjs';

let view;

before(async () => {
  view = await openFollowedService();
  await waitFor(async () => (await getJson(view.baseUrl, '/api/dumps')).dumps.some((d) => d.state === 'live' && d.allocations > 0),
    'a live dump');
});

after(() => closeFollowed(view));

// How many live updates the page has rendered (app.js counts them).
const updates = (page) => page.evaluate(() => Number(document.getElementById('view').dataset.updates ?? 0));

// Waits for the page's next live update to be rendered; `read` gives the
// figure that must differ from the one before. Returns that figure.
async function nextUpdate(page, read) {
  const before = await updates(page);
  const was = await read();
  await waitFor(async () => (await updates(page)) > before && (await read()) !== was, 'a live update with new figures');
  await rendered(page);
  return read();
}

// Opens `hash` on a fresh load of the page, marked so that a reload shows.
async function open(page, hash) {
  await page.goto(`${view.baseUrl}/${hash}`);
  await rendered(page);
  await page.evaluate(() => { window.memrecSamePage = true; });
}

const samePage = (page) => page.evaluate(() => window.memrecSamePage === true);

// What a live update changes on the overview whatever the range: the whole
// run's timeline (its buckets) and the cards (the whole run's, or a range's
// that grows).
const overviewFigures = (page) => page.evaluate(() =>
  `${document.getElementById('buckets')?.textContent} ${document.querySelector('section.card[aria-label="Allocations"] .value')?.textContent}`);

test('an open call-site row, the sort and the scroll stay across live updates as the row\'s figures grow', async () => {
  const { page, baseUrl } = view;
  const sites = await getJson(baseUrl, '/api/dumps/0/sites?sort=allocated');
  const cache = sites.sites.find((s) => s.label.endsWith('cache_insert'));
  assert.ok(cache, `cache_insert among ${sites.sites.map((s) => s.label)}`);
  await page.setViewportSize({ width: 1280, height: 420 });
  await open(page, `#/sites?dump=0&sort=allocated&open=${cache.id}`);
  const row = page.locator(`tr.site[data-site="${cache.id}"]`);
  assert.equal(await row.getAttribute('aria-expanded'), 'true');
  await page.locator('.detail-row .backtrace').waitFor();
  const scroll = await page.evaluate(() => {
    window.scrollTo(0, Math.min(180, document.documentElement.scrollHeight - window.innerHeight));
    return window.scrollY;
  });
  assert.ok(scroll > 0, 'the page scrolls');
  // The row's allocations (the fifth figure: leaked, blocks, at peak, bytes, calls).
  const calls = () => row.locator('td.num').nth(4).textContent();
  const first = await calls();
  const second = await nextUpdate(page, calls);
  const third = await nextUpdate(page, calls);
  assert.ok(Number(third.replace(/\D/g, '')) > Number(second.replace(/\D/g, '')), `${second} then ${third}`);
  assert.ok(Number(second.replace(/\D/g, '')) > Number(first.replace(/\D/g, '')), `${first} then ${second}`);
  assert.equal(await row.getAttribute('aria-expanded'), 'true', 'the row is still open');
  assert.match(await page.locator('.detail-row').textContent(), /cache_insert/);
  assert.equal(await page.locator('#sites-sort').inputValue(), 'allocated');
  assert.equal(await page.evaluate(() => window.scrollY), scroll, 'the scroll is where it was');
  assert.ok(await samePage(page), 'the page was not reloaded');
  await page.screenshot({ path: join(images, 'view-follow-sites.png') });
  await page.setViewportSize({ width: 1280, height: 800 });
});

test('the flamegraph keeps its zoom and search across live updates while its total grows', async () => {
  const { page, baseUrl } = view;
  const flame = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocated');
  // The path of child indices to cache_insert's frame (the hash's zoom).
  const pathTo = (node, name, path) => {
    if (node.name.includes(name) && path.length > 0) return path;
    for (const [i, child] of (node.children || []).entries()) {
      const found = pathTo(child, name, [...path, i]);
      if (found) return found;
    }
    return null;
  };
  const zoom = pathTo(flame.root, 'cache_insert', []);
  assert.ok(zoom, 'cache_insert is in the flamegraph');
  await open(page, `#/flame?dump=0&metric=allocated&q=cache&zoom=${zoom.join('.')}`);
  const summary = () => page.locator('#flame-summary').textContent();
  const first = await summary();
  await nextUpdate(page, summary);
  const third = await nextUpdate(page, summary);
  assert.notEqual(third, first);
  assert.match(third, /^“cache”: /, 'the search is kept');
  const hash = new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]);
  const zoomed = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocated');
  const names = [];
  let node = zoomed.root;
  for (const i of hash.get('zoom').split('.')) {
    node = node.children[Number(i)];
    names.push(node.name);
  }
  assert.match(names[names.length - 1], /cache_insert/, 'the zoom is on the same frame');
  assert.ok(await page.getByRole('button', { name: 'Reset zoom' }).isVisible());
  assert.ok(await samePage(page));
  await page.screenshot({ path: join(images, 'view-follow-flame.png') });
});

test('a fixed range and an instant stay as they were across live updates while the timeline extends', async () => {
  const { page, baseUrl } = view;
  const dump = (await getJson(baseUrl, '/api/dumps')).dumps[0];
  const to = Math.floor(dump.duration_ns / 2);
  const from = Math.floor(to / 2);
  const at = Math.floor((from + to) / 2);
  await open(page, `#/overview?dump=0&from=${from}&to=${to}&at=${at}`);
  const hash = await page.evaluate(() => location.hash);
  const chip = () => page.locator('#context').textContent();
  const chipBefore = await chip();
  assert.match(chipBefore, /Range .* – .*Instant/);
  // The range's figures, or, while a followed dump answers no range, the server's sentence.
  const rangeText = async () => (await page.locator('#range-note, #range-refused').first().textContent());
  const rangeBefore = await rangeText();
  const figures = () => overviewFigures(page);
  await nextUpdate(page, figures);
  await nextUpdate(page, figures);
  assert.equal(await page.evaluate(() => location.hash), hash, 'the range and instant are kept');
  assert.equal(await chip(), chipBefore);
  assert.equal(await rangeText(), rangeBefore);
  assert.ok(await page.locator('section.instant').isVisible(), 'the instant panel is shown');
  assert.ok(await samePage(page));
  await page.screenshot({ path: join(images, 'view-follow-range.png'), fullPage: true });
});

test('a range dragged to the timeline\'s right end follows the live edge, and unticked stays fixed', async () => {
  const { page } = view;
  await open(page, '#/overview?dump=0');
  const over = page.locator('.chart .u-over').first();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 5 });
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await waitFor(async () => /from=\d+/.test(await page.evaluate(() => location.hash)), 'the range in the hash');
  await rendered(page);
  const query = async () => new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]);
  const hash = await page.evaluate(() => location.hash);
  assert.doesNotMatch(hash, /[?&]to=/, 'a range to the live edge has no end');
  const chip = page.locator('#context');
  assert.match(await chip.textContent(), /Range .* – live edge/);
  const toggle = page.getByRole('checkbox', { name: 'to the live edge' });
  assert.equal(await toggle.isChecked(), true);
  // The run's length in the dump list grows; the range follows it.
  const figures = () => overviewFigures(page);
  await nextUpdate(page, figures);
  await nextUpdate(page, figures);
  assert.equal(await page.evaluate(() => location.hash), hash, 'still no end');
  assert.match(await chip.textContent(), /– live edge/);
  await page.screenshot({ path: join(images, 'view-follow-live-edge.png'), fullPage: true });
  // Unticked: the range ends where the dump was, and stays there.
  await toggle.uncheck();
  await waitFor(async () => /[?&]to=\d+/.test(await page.evaluate(() => location.hash)), 'an end in the hash');
  await rendered(page);
  const fixed = await page.evaluate(() => location.hash);
  assert.ok(Number((await query()).get('to')) > Number((await query()).get('from')));
  await nextUpdate(page, figures);
  await nextUpdate(page, figures);
  assert.equal(await page.evaluate(() => location.hash), fixed, 'the fixed range did not move');
  assert.doesNotMatch(await chip.textContent(), /– live edge/);
  assert.equal(await toggle.isChecked(), false);
  assert.ok(await samePage(page));
});
