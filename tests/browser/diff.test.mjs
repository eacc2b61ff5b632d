// The Diff view's table of changed call sites and its ranges, against
// `memrec diff --json` of the same files: diff_leak_base and diff_leak_extra
// (the second leaks 1 × 3333 more from leak_extra), and timed_phases compared
// with itself over [start, 300 ms] and [300 ms, end] (phase_one's 4 × 10000
// before, the rest after); with timed_phases alone, the Diff tab compares two of
// its ranges.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { closeView, getJson, images, memrec, openView, program, record, rendered, requireFiles, scratch } from './support.mjs';

let view;
let baseUrl;
let page;
let files; // by program
let ids; // dump ids by program

before(async () => {
  requireFiles(program('diff_leak_base'), program('diff_leak_extra'), program('timed_phases'));
  const dir = scratch();
  files = {};
  for (const name of ['diff_leak_base', 'diff_leak_extra', 'timed_phases']) [files[name]] = record(dir, name, [program(name)]);
  view = await openView(Object.values(files));
  ({ baseUrl, page } = view);
  const { dumps } = await getJson(baseUrl, '/api/dumps');
  ids = Object.fromEntries(Object.keys(files).map((name) => [name, dumps.find((d) => d.exe.endsWith(`/${name}`)).id]));
});

after(() => closeView(view));

function cliDiff(...args) {
  const run = spawnSync(memrec, ['diff', ...args, '--json'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

// The CLI's sites whose `field` changed, as the table shows them.
function cliRows(diff, field) {
  return diff.sites.filter((s) => s.change[field] !== 0)
    .map((s) => [s.label, s.status === 'changed' ? '' : s.status, s.base[field], s.new[field], s.change[field]]);
}

const sorted = (rows) => [...rows].sort((a, b) => String(a).localeCompare(String(b)));

// Each row as [label, new/vanished tag, base, new, change], exact from the
// tooltips of the sizes (or the text of counts).
async function tableRows() {
  return page.getByRole('table', { name: 'Changed sites' }).locator('tbody tr').evaluateAll((rows) => rows.map((tr) => {
    const cells = [...tr.querySelectorAll('td')];
    const number = (td) => {
      const span = td.querySelector('span');
      const text = span?.title || td.textContent;
      return Number(text.replace(/bytes/, '').replace(/[,\s+±]/g, '').replace('−', '-'));
    };
    const tag = cells[0].querySelector('.tag.new, .tag.vanished')?.textContent ?? '';
    return [cells[0].querySelector('.label').textContent, tag, number(cells[2]), number(cells[3]), number(cells[4])];
  }));
}

test('the table\'s top row is the site that grew, by memrec diff\'s exact change, and links to it', async () => {
  const base = ids.diff_leak_base;
  const extra = ids.diff_leak_extra;
  await page.goto(`${baseUrl}/#/diff?base=${base}&new=${extra}&metric=leaked`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Changed sites' });
  const cli = cliDiff(files.diff_leak_base, files.diff_leak_extra);
  const top = cli.sites.filter((s) => s.change.leaked_bytes !== 0)[0];
  assert.equal(top.label, 'leak_extra');
  assert.deepEqual(sorted(await tableRows()), sorted(cliRows(cli, 'leaked_bytes')));
  const first = table.locator('tbody tr').first();
  const cells = await first.getByRole('cell').allTextContents();
  assert.deepEqual(cells.slice(2), ['0 B', '3.25 KiB', '+3.25 KiB', 'new']);
  assert.match(cells[0], /^leak_extranew$/);
  assert.equal(await first.getByRole('cell').nth(4).locator('span').getAttribute('title'), `+${top.change.leaked_bytes.toLocaleString('en-US')} bytes`);
  assert.equal(await page.locator('#diff-sites-count').textContent(), '1 call site changed in leaked.');

  // allocated: leak_extra's 3333 more; its percent is "new"; on allocations, one call more.
  await page.getByRole('combobox', { name: 'Metric' }).selectOption('allocations');
  await page.waitForURL(/metric=allocations/);
  await rendered(page);
  assert.deepEqual(sorted(await tableRows()), sorted(cliRows(cli, 'allocations')));
  assert.deepEqual((await table.locator('tbody tr').first().getByRole('cell').allTextContents()).slice(2), ['0', '1', '+1', 'new']);

  // The row opens the site in the new dump's Call sites, sorted by the metric.
  await table.getByRole('link', { name: 'leak_extra' }).click();
  await page.waitForURL(new RegExp(`#/sites\\?dump=${extra}&sort=allocations&open=\\d+$`));
  await rendered(page);
  const open = page.locator('tr.site[aria-expanded="true"]');
  assert.match(await open.locator('.label').textContent(), /^leak_extra$/);
});

test('one dump against itself over two ranges equals memrec diff DUMP --to A --from A, sortable three ways', async () => {
  const id = ids.timed_phases;
  await page.goto(`${baseUrl}/#/diff?base=${id}&new=${id}&metric=allocated`);
  await rendered(page);
  assert.match(await page.getByRole('note').filter({ hasText: 'same dump' }).textContent(), /give each side a range/);
  await page.getByRole('textbox', { name: 'Base to' }).fill('300ms');
  await page.getByRole('textbox', { name: 'New from' }).fill('0.3s');
  await page.getByRole('button', { name: 'Compare ranges' }).click();
  await page.waitForURL(/base_to=300000000&new_from=300000000/);
  await rendered(page);
  const cli = cliDiff(files.timed_phases, '--to', '300ms', '--from', '300ms');
  assert.deepEqual(sorted(await tableRows()), sorted(cliRows(cli, 'allocated_bytes')));
  assert.equal(cli.totals.change.allocated_bytes, 143250, '100000 + 21000 + 1500 + 56125 + 4321 + main\'s 304 − 40000');
  assert.match(await page.locator('#diff-summary').textContent(),
    new RegExp(`^base ${cli.totals.base.allocated_bytes.toLocaleString('en-US')} bytes, new ${cli.totals.new.allocated_bytes.toLocaleString('en-US')} bytes: \\+143,250 bytes`));
  assert.equal(await page.locator('#diff-sides').textContent(), `Base: dump ${id}, start – 300.0 ms. New: dump ${id}, 300.0 ms – end.`);
  assert.equal(await page.getByRole('textbox', { name: 'New from' }).inputValue(), '300ms');

  const labels = () => page.getByRole('table', { name: 'Changed sites' }).locator('tbody tr .label').allTextContents();
  const byMagnitude = await labels();
  assert.deepEqual(byMagnitude.slice(0, 4), ['phase_two', 'many_small', 'phase_one', 'phase_three']);
  await page.screenshot({ path: join(images, 'view-diff.png'), fullPage: true });
  await page.getByRole('combobox', { name: 'Order sites by' }).selectOption('delta');
  await page.waitForURL(/sort=delta/);
  await rendered(page);
  const byDelta = await labels();
  assert.equal(byDelta.at(-1), 'phase_one', 'the one that shrank, last');
  assert.deepEqual(byDelta.slice(0, 3), ['phase_two', 'many_small', 'phase_three']);
  await page.getByRole('combobox', { name: 'Order sites by' }).selectOption('percent');
  await page.waitForURL(/sort=percent/);
  await rendered(page);
  const rows = page.getByRole('table', { name: 'Changed sites' }).locator('tbody tr');
  assert.equal(await rows.last().locator('.label').textContent(), 'phase_one');
  assert.equal(await rows.last().getByRole('cell').last().textContent(), '−100.0%');

  // The downloads are memrec diff's report over the same ranges.
  const href = await page.locator('#downloads a[data-format="diff-json"]').getAttribute('href');
  const report = await page.evaluate(async (url) => (await fetch(url)).json(), href);
  assert.deepEqual(report.totals, cli.totals);
  assert.deepEqual(report.new.window, { from_ns: 300000000, to_ns: null });
});

test('a range that is no time, or ends before it starts, is refused next to the fields', async () => {
  const id = ids.timed_phases;
  await page.goto(`${baseUrl}/#/diff?base=${id}&new=${id}`);
  await rendered(page);
  await page.getByRole('textbox', { name: 'Base from' }).fill('soon');
  await page.getByRole('button', { name: 'Compare ranges' }).click();
  assert.match(await page.locator('#diff-range-error').textContent(), /"soon" is not a duration/);
  assert.doesNotMatch(page.url(), /base_from/);

  await page.goto(`${baseUrl}/#/diff?base=${id}&new=${id}&base_from=500000000&base_to=100000000`);
  await rendered(page);
  assert.equal(await page.getByRole('alert').textContent(),
    'base_from (500000000 ns) is after base_to (100000000 ns): a range must not end before it starts.');
  assert.equal(await page.getByRole('textbox', { name: 'Base from' }).inputValue(), '500ms', 'the form stays, to fix it');
  assert.equal(await page.getByRole('table', { name: 'Changed sites' }).count(), 0);
});

test('with one dump loaded the Diff tab compares two of its ranges', async () => {
  const single = await openView([files.timed_phases]);
  try {
    await single.page.goto(`${single.baseUrl}/#/overview`);
    await rendered(single.page);
    await single.page.getByRole('link', { name: 'Diff', exact: true }).click();
    await single.page.waitForURL(/#\/diff\?dump=0$/);
    await rendered(single.page);
    assert.equal(await single.page.locator('#diff-sites-count').textContent(), '0 call sites changed in leaked.');
    await single.page.getByRole('textbox', { name: 'Base to' }).fill('450ms');
    await single.page.getByRole('textbox', { name: 'New from' }).fill('450ms');
    await single.page.getByRole('button', { name: 'Compare ranges' }).click();
    await single.page.waitForURL(/base_to=450000000&new_from=450000000/);
    await rendered(single.page);
    const cli = cliDiff(files.timed_phases, '--to', '450ms', '--from', '450ms');
    const labels = await single.page.getByRole('table', { name: 'Changed sites' }).locator('tbody tr .label').allTextContents();
    assert.deepEqual(labels.sort(), cli.sites.filter((s) => s.change.leaked_bytes !== 0).map((s) => s.label).sort());
    assert.ok(labels.includes('phase_three'), 'phase_three leaks 3 × 7000 after 450 ms');
  } finally {
    await closeView(single);
  }
});
