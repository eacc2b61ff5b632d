// The overview's chart of temporary allocations over time, under the
// allocation rate: on tests/programs/temporaries (12 temporary allocations,
// 7 from temp_here and 5 from pair_second) and tests/programs/timed_phases,
// whose total, for the run and for a range, must be `memrec report --json`'s.
// Screenshot: view-temporary.png (timed_phases' overview).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { closeView, getJson, images, memrec, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

const MS = 1e6;
let view; // memrec view and the browser page on it
let baseUrl;
let page;
let dumps;

before(async () => {
  requireFiles(program('temporaries'), program('timed_phases'));
  const dir = scratch();
  dumps = [...record(dir, 'temporaries', [program('temporaries')]), ...record(dir, 'timed_phases', [program('timed_phases')])];
  view = await openView(dumps);
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// `memrec report --json` of one dump: its report's temporary count.
function reportedTemporaries(dump, ...args) {
  const run = spawnSync(memrec, ['report', '--json', ...args, dump], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const [process] = JSON.parse(run.stdout).processes;
  return process.report.temporary;
}

const chartNamed = (total) => page.getByRole('img', { name: `Temporary allocations per second: ${total} in all`, exact: true });

test('the overview draws the temporary allocations over time with their total', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  assert.equal(reportedTemporaries(dumps[0]), 12);
  const chart = chartNamed('12');
  await chart.locator('canvas').waitFor();
  assert.equal(await page.locator('#temporary-total').textContent(),
    '12 temporary allocations (freed before their thread allocated again), each counted at its free.');
  // It sits under the allocation rate and keeps its plot in line with it.
  const names = await page.locator('.timeline .chart').evaluateAll((charts) => charts.map((c) => c.getAttribute('aria-label')));
  assert.deepEqual(names.slice(1), ['Allocations and frees per second', 'Temporary allocations per second: 12 in all']);
  const lefts = await page.locator('.timeline .chart .u-over').evaluateAll((overs) => overs.map((o) => o.getBoundingClientRect().left));
  assert.equal(new Set(lefts).size, 1, 'every plot starts at the same x');
});

test('the total is the report\'s for the run and, zoomed, for the range', async () => {
  // timed_phases: many_small's 250 blocks at 600 ms, each freed at once, and the realloc chain's.
  const whole = reportedTemporaries(dumps[1]);
  assert.ok(whole >= 250, `${whole} temporaries`);
  await page.goto(`${baseUrl}/#/overview?dump=1`);
  await rendered(page);
  await chartNamed(whole.toLocaleString('en-US')).locator('canvas').waitFor();
  await page.screenshot({ path: join(images, 'view-temporary.png'), fullPage: true });

  // A range that starts before phase three and ends before the program does.
  const summary = await getJson(baseUrl, '/api/dumps/1/summary');
  const [from, to] = [450 * MS, summary.duration_ns - 1];
  const inRange = reportedTemporaries(dumps[1], '--from', `${from}ns`, '--to', `${to}ns`);
  assert.equal((await getJson(baseUrl, `/api/dumps/1/summary?from=${from}&to=${to}`)).temporary, inRange);
  await page.goto(`${baseUrl}/#/overview?dump=1&from=${from}&to=${to}&tz=1`);
  await rendered(page);
  await chartNamed(inRange.toLocaleString('en-US')).locator('canvas').waitFor();
  // Before phase three, only what the first 450 ms freed.
  const early = reportedTemporaries(dumps[1], '--from', '0ns', '--to', `${from}ns`);
  assert.equal(early + inRange, whole, 'no temporary allocation of timed_phases spans 450 ms');
  await page.goto(`${baseUrl}/#/overview?dump=1&from=0&to=${from}&tz=1`);
  await rendered(page);
  await chartNamed(early.toLocaleString('en-US')).locator('canvas').waitFor();
});
