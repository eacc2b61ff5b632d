// Several dumps, one still loading (memrec view's test knob
// MEMREC_VIEW_HOLD_DIR holds its load half-way while a file says so) and one
// file that is not a dump: the dump list shows the first as a row with its
// progress and the other with why it did not load, the loading one's
// overview says it is loading, with no error on the page, and once its load
// goes on the same page shows it as a dump, without a reload.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeView, getJson, images, program, record, openView, rendered, requireFiles, scratch, waitFor } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;
let gate; // the file that holds held.dat's load

before(async () => {
  requireFiles(program('leak_three'), program('diff_leak_base'));
  const dir = scratch();
  const [leak] = record(dir, 'leak_three', [program('leak_three')]);
  const [base] = record(dir, 'diff_leak_base', [program('diff_leak_base')]);
  const held = join(dir, 'held.dat');
  copyFileSync(leak, held);
  gate = join(dir, 'held.dat.hold');
  writeFileSync(gate, '');
  const bad = join(dir, 'bad.dat');
  writeFileSync(bad, 'hello, this is not a dump\n'.repeat(50));
  view = await openView([leak, base, held, bad], { MEMREC_VIEW_HOLD_DIR: dir }, { served: false });
  ({ baseUrl, page } = view);
  await waitFor(async () => {
    const { dumps } = await getJson(baseUrl, '/api/dumps');
    return dumps[0].state === 'ended' && dumps[1].state === 'ended' && dumps[2].state === 'loading' && dumps[3].state === 'failed';
  }, 'the two small dumps served, held.dat loading, bad.dat failed');
});

after(() => {
  rmSync(gate, { force: true });
  return closeView(view);
});

test('a dump still loading is a row with its progress, and its view says it loads until it is served', async () => {
  await page.goto(`${baseUrl}/`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Dumps' });
  assert.equal(await table.locator('tbody tr').count(), 4);
  const failed = page.getByRole('row', { name: 'bad.dat: did not load' });
  assert.match(await failed.textContent(), /bad\.dat\s*did not load.*bad\.dat: not a memrec dump/);
  const row = page.getByRole('row', { name: 'held.dat: loading' });
  await row.waitFor();
  assert.match(await row.textContent(), /held\.dat\s*loading/);
  const bar = row.getByRole('progressbar', { name: 'Loading held.dat' });
  assert.ok(await bar.isVisible());
  const { dumps } = await getJson(baseUrl, '/api/dumps');
  assert.equal(await bar.getAttribute('value'), String(Math.floor(100 * dumps[2].load.fraction)));
  assert.match(await page.locator('#dumps-count').textContent(), /2 processes; .* 1 more loading\. 1 did not load\./);
  assert.equal(await page.getByRole('alert').count(), 0, 'no error on the page');
  await page.screenshot({ path: join(images, 'view-loading-dumps.png'), fullPage: true });

  // its overview: a note with the progress, no error
  await page.goto(`${baseUrl}/#/overview?dump=2`);
  await rendered(page);
  await page.getByRole('heading', { name: 'Loading this dump' }).waitFor();
  assert.match(await page.getByRole('status').filter({ hasText: 'memrec view is loading' }).textContent(), /held\.dat:\s+\d+ %/);
  assert.equal(await page.getByRole('alert').count(), 0, 'no error on the page');
  assert.match(await page.locator('#dump-select option[value="2"]').textContent(), /held\.dat \(loading\)/);

  // once its load goes on, the same page shows the dump
  rmSync(gate);
  await page.getByRole('region', { name: 'Leaked' }).waitFor({ timeout: 60000 });
  assert.equal(await page.getByRole('heading', { name: 'Loading this dump' }).count(), 0);
  assert.match(await page.getByRole('region', { name: 'Leaked' }).textContent(), /12,726 bytes in 3 blocks/);
  assert.match(await page.locator('#dump-select option[value="2"]').textContent(), /leak_three \(pid \d+\)/);
});

test('once every dump that loads is served the list shows them as processes, and the bad file as such', async () => {
  await page.goto(`${baseUrl}/#/dumps`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Dumps' });
  assert.equal(await table.locator('tbody tr.loading').count(), 0);
  assert.equal(await table.locator('tbody tr').count(), 4);
  assert.match(await page.locator('#dumps-count').textContent(), /^3 processes; .* 1 did not load\.$/);
});

test('a file that did not load says why when its views are asked for', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=3`);
  await rendered(page);
  assert.match(await page.getByRole('alert').textContent(), /Dump 3 did not load: .*bad\.dat: not a memrec dump/);
});
