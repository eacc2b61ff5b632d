// Several dumps in one memrec view: diff_leak_base and diff_leak_extra (the
// same program, the second leaking 1 × 3333 more from leak_extra) and
// fork_child's parent and child. The dump list groups the forked child under
// its parent, and the diff flamegraph of base and extra grows by exactly 3333.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;
let dumps;
let forkFiles; // fork_child's two dumps

before(async () => {
  requireFiles(program('diff_leak_base'), program('diff_leak_extra'), program('fork_child'));
  const dir = scratch();
  const files = [
    ...record(dir, 'diff_leak_base', [program('diff_leak_base')]),
    ...record(dir, 'diff_leak_extra', [program('diff_leak_extra')]),
    ...record(dir, 'fork_child', [program('fork_child')]),
  ];
  assert.equal(files.length, 4, 'fork_child writes a dump for its parent and one for its child');
  forkFiles = files.slice(2);
  view = await openView(files);
  ({ baseUrl, page } = view);
  ({ dumps } = await getJson(baseUrl, '/api/dumps'));
});

after(() => closeView(view));

test('with several dumps the page opens on the list, children under their parent', async () => {
  await page.goto(`${baseUrl}/`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Dumps' });
  await table.waitFor();
  const rows = await table.locator('tbody tr').allTextContents();
  assert.equal(rows.length, 4);
  const parent = dumps.find((d) => d.exe.endsWith('/fork_child') && dumps.some((c) => c.ppid === d.pid));
  const child = dumps.find((d) => d.ppid === parent.pid);
  const at = (d) => rows.findIndex((r) => r.includes(String(d.pid)));
  assert.equal(at(child), at(parent) + 1, 'the child right under its parent');
  assert.match(rows[at(child)], /^└ fork_child\s*fork/);
  const cells = await table.locator('tbody tr').nth(at(parent)).getByRole('cell').allTextContents();
  assert.equal(cells[1], String(parent.pid));
  assert.equal(cells[5], '7.06 KiB', '1234 + 2 × 3000 leaked');
  assert.equal(await table.locator('tbody tr').nth(at(parent)).getByRole('cell').nth(5).locator('span').getAttribute('title'), '7,234 bytes');
  await page.screenshot({ path: join(images, 'view-dumps.png'), fullPage: true });

  await table.locator('tbody tr').nth(at(child)).getByRole('link').click();
  await page.waitForURL(new RegExp(`#/overview\\?dump=${child.id}$`));
  await rendered(page);
  assert.match(await page.getByRole('region', { name: 'Leaked' }).textContent(), /6,000 bytes in 3 blocks/);
});

test('the dump list sorts by a column and filters by name, pid or command line', async () => {
  await page.goto(`${baseUrl}/#/dumps`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Dumps' });
  await table.getByRole('button', { name: 'Leaked' }).click();
  await page.waitForURL(/dsort=leaked/);
  await rendered(page);
  const leaked = await table.locator('tbody tr td:nth-child(6)').allTextContents();
  assert.deepEqual(leaked, ['7.06 KiB', '5.86 KiB', '5.21 KiB', '1.95 KiB'], '7234, 6000, 5333, 2000 bytes');
  assert.equal(await table.getByRole('columnheader', { name: 'Leaked' }).getAttribute('aria-sort'), 'descending');
  await page.getByRole('searchbox', { name: 'Filter the dumps' }).fill('diff_leak');
  await page.getByRole('searchbox', { name: 'Filter the dumps' }).press('Enter');
  await page.waitForURL(/dq=diff_leak/);
  await rendered(page);
  const programs = await table.locator('tbody tr td.program a').allTextContents();
  assert.deepEqual(programs, ['diff_leak_extra', 'diff_leak_base']);
  assert.equal(await page.locator('#dumps-count').textContent(), '2 of 4 processes match.');
  await page.getByRole('button', { name: 'Back to the process tree' }).click();
  await page.waitForURL((url) => !/dsort=/.test(url.hash));
});

test('without a dump in the URL a view opens on the root of the process tree, not the first file', async () => {
  // The child's file first: it must not become the default.
  const second = await openView([...forkFiles].reverse());
  try {
    const { dumps: two } = await getJson(second.baseUrl, '/api/dumps');
    const parent = two.find((d) => two.some((c) => c.ppid === d.pid));
    assert.notEqual(parent.id, 0, 'the child is dump 0');
    await second.page.goto(`${second.baseUrl}/#/overview`);
    await rendered(second.page);
    await second.page.getByRole('region', { name: 'Leaked' }).waitFor();
    assert.match(await second.page.locator('p.process').textContent(), new RegExp(`^pid ${parent.pid}:`));
  } finally {
    await closeView(second);
  }
});

test('the diff flamegraph shows what grew in red, with exact figures', async () => {
  const base = dumps.find((d) => d.exe.endsWith('/diff_leak_base'));
  const extra = dumps.find((d) => d.exe.endsWith('/diff_leak_extra'));
  await page.goto(`${baseUrl}/#/diff?base=${base.id}&new=${extra.id}&metric=leaked`);
  await rendered(page);
  await page.getByRole('img', { name: 'Diff flamegraph of leaked' }).waitFor();
  // Conditional parts left out (no zoom, no search) once drew the text "null".
  assert.doesNotMatch(await page.locator('#view').textContent(), /null|undefined/);
  assert.match(await page.locator('#diff-summary').textContent(), /^base 2,000 bytes, new 5,333 bytes: \+3,333 bytes/);
  const box = await page.getByRole('img', { name: 'Diff flamegraph of leaked' }).boundingBox();
  await page.mouse.move(box.x + 5, box.y + 9);
  await page.waitForFunction(() => /^all: base/.test(document.getElementById('diff-info')?.textContent ?? ''));
  assert.equal(await page.locator('#diff-info').textContent(), 'all: base 2,000 bytes, new 5,333 bytes (+3,333 bytes)');

  await page.getByRole('searchbox', { name: 'Search functions' }).fill('leak_extra');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForURL(/q=leak_extra/);
  await rendered(page);
  await page.locator('#diff-match').waitFor();
  assert.equal(await page.locator('#diff-match').textContent(), '“leak_extra”: base 0 bytes, new 3,333 bytes (+3,333 bytes)');

  // The downloads are memrec diff's report of these two dumps.
  await page.locator('#downloads summary').click();
  assert.equal(await page.locator('#downloads-scope').textContent(),
    `memrec diff of dump ${base.id} (base) and dump ${extra.id} (new), whole runs`);
  const href = await page.locator('#downloads a[data-format="diff-json"]').getAttribute('href');
  assert.equal(href, `/api/diff/report?base=${base.id}&new=${extra.id}&format=json`);
  const report = await page.evaluate(async (url) => (await fetch(url)).text(), href);
  assert.ok(report.includes('leak_extra') && report.includes('3333'), report.slice(0, 300));
  assert.equal(await page.locator('#downloads a').count(), 2);
  await page.locator('#downloads summary').click();

  // Swapped, the same frames shrink.
  await page.getByRole('combobox', { name: 'Base' }).selectOption(String(extra.id));
  await page.getByRole('combobox', { name: 'New' }).selectOption(String(base.id));
  await page.waitForFunction(() => /−3,333 bytes/.test(document.getElementById('diff-summary')?.textContent ?? ''));
});
