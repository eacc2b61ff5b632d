// The call sites' Growth sort on tests/programs/growth_service (a cache that
// grows 1,000 bytes every 10 ms and is cleared at shutdown, a flat pool, a
// sawtooth and one jump): the cache comes first, its slope and R² as
// `memrec report --growth --json` has them, the whole fit on hover.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeView, openView, program, record, rendered, requireFiles, scratch, memrec } from './support.mjs';

let view;
let dump;

before(async () => {
  requireFiles(program('growth_service'));
  [dump] = record(scratch(), 'growth_service', [program('growth_service'), '200', 'exit']);
  view = await openView([dump]);
});

after(() => closeView(view));

test('the Growth sort names the growing cache first, with the report\'s slope and R²', async () => {
  const run = spawnSync(memrec, ['report', '--json', '--growth', dump], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const rep = JSON.parse(run.stdout).processes[0].report;
  const first = rep.growth.sites[0];
  assert.match(rep.sites[first.site].label, /cache_insert/);
  const { page, baseUrl } = view;
  await page.goto(`${baseUrl}/#/sites?dump=0`);
  await rendered(page);
  await page.locator('#sites-sort').selectOption('growth');
  await page.locator('#sites-count', { hasText: 'sorted by growth of live bytes' }).waitFor();
  const row = page.locator('tr.site').first();
  assert.match(await row.locator('td.fn').textContent(), /cache_insert/);
  const cell = row.locator('td.num').last();
  const r2 = first.r2.toFixed(2);
  assert.match(await cell.textContent(), new RegExp(`^\\+[\\d.]+ (KiB|MiB)/min · R² ${r2.replace('.', '\\.')}$`));
  const title = await cell.getAttribute('title');
  const slope = Math.round(first.slope_bytes_per_minute).toLocaleString('en-US');
  assert.ok(title.startsWith(`${slope} bytes a minute, R² ${first.r2.toFixed(3)}, grew in `), title);
  assert.equal(await page.locator('th[aria-sort="descending"]').textContent(), 'Growth');
});
