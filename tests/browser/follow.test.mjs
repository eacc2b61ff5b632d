// memrec view --follow in the browser: growth_service writes its dump while
// the page shows it; the dump is tagged live, and the overview's timeline
// extends as the service runs, without a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeFollowed, getJson, openFollowedService, rendered, waitFor } from './support.mjs';

let view;

before(async () => {
  view = await openFollowedService();
});

after(() => closeFollowed(view));

test('a followed dump is tagged live and its timeline extends without a reload', async () => {
  const { baseUrl, page } = view;
  await waitFor(async () => (await getJson(baseUrl, '/api/dumps')).dumps.some((d) => d.state === 'live' && d.allocations > 0),
    'a live dump');
  // The last bucket's time of every timeline the page fetches.
  const ends = [];
  page.on('response', async (response) => {
    if (!/\/api\/dumps\/0\/timeline/.test(response.url())) return;
    const t = await response.json().catch(() => null);
    if (t?.time_ns?.length) ends.push(t.time_ns[t.time_ns.length - 1]);
  });
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  await page.evaluate(() => { window.memrecSamePage = true; });
  await waitFor(() => ends.length >= 2 && ends[ends.length - 1] > ends[0], 'the page to fetch a longer timeline');
  await rendered(page);
  assert.equal(await page.evaluate(() => window.memrecSamePage), true, 'the page was not reloaded');
  assert.ok(await page.getByRole('img', { name: 'Heap bytes, RSS and live blocks over time' }).isVisible());
  // The dump list (same page, another hash) tags it live.
  await page.evaluate(() => { location.hash = '#/dumps'; });
  await rendered(page);
  assert.equal(await page.locator('span.tag.live').first().textContent(), 'live');
  assert.equal(await page.evaluate(() => window.memrecSamePage), true, 'still the same page');
});
