// memrec view --follow in the browser: growth_service writes its dump while
// the page shows it; the dump is tagged live, and the overview's timeline
// extends as the service runs, without a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { closeView, getJson, openView, preload, program, rendered, requireFiles, scratch } from './support.mjs';

let view;
let service;

before(async () => {
  requireFiles(program('growth_service'), preload);
  const dir = scratch();
  service = spawn(program('growth_service'), ['1000000', 'forever'], {
    env: { ...process.env, LD_PRELOAD: preload, MEMREC_OUTPUT: join(dir, 'growth.%p.dat'), MEMREC_FLUSH_INTERVAL_MS: '100' },
    stdio: 'ignore',
  });
  view = await openView(['--follow', '--poll-ms', '200', dir]);
});

after(async () => {
  service?.kill('SIGKILL');
  await closeView(view);
});

// Polls `fn` until it gives something truthy; a deadline, not a timing assertion.
async function waitFor(fn, what) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
