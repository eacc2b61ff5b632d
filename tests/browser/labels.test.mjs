// Call sites named by their label (the program's own innermost frame) in
// memrec view, on tests/programs/cpp_new, a C++ program allocating through
// operator new, std::string and exceptions. Its leaks name leak_widgets and
// its neighbours, not operator new (whose frame the preload does not record:
// it forwards its caller's). By allocated bytes, throw_and_catch comes first,
// through __cxa_allocate_exception: "Library frames" names that site by
// __cxa_allocate_exception again, and its backtrace keeps that frame, dimmed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { closeView, getJson, images, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view;
let baseUrl;
let page;

before(async () => {
  requireFiles(program('cpp_new'));
  const dir = scratch();
  view = await openView(record(dir, 'cpp_new', [program('cpp_new')]));
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// The label text of the call sites list's rows, top down.
async function labels() {
  return page.locator('table.sites tbody tr.site td.fn .label').allTextContents();
}

test('the call sites list names the program\'s functions, not operator new', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  const first = (await labels()).slice(0, 3);
  assert.equal(first.length, 3);
  assert.match(first[0], /leak_widgets$/);
  assert.match(first[1], /leak_big_aligned$/);
  assert.match(first[2], /leak_nothrow$/);
  for (const label of first) assert.doesNotMatch(label, /operator new/);
  // The full name on hover, and file:line.
  const row = page.locator('table.sites tbody tr.site').first();
  assert.match(await row.locator('.label').getAttribute('title'), /leak_widgets\(\)/);
  assert.match(await row.locator('td.loc').textContent(), /cpp_new\.cpp:\d+/);
  // By allocated bytes, the exceptions' site, with the library call it goes through dimmed beside it.
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocated`);
  await rendered(page);
  assert.match((await labels())[0], /throw_and_catch$/);
  assert.equal(await page.locator('table.sites tbody tr.site').first().locator('.via').textContent(), ' via __cxa_allocate_exception');
  await page.screenshot({ path: join(images, 'view-labels.png') });
});

test('the expanded backtrace keeps the folded library frames, dimmed', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocated`);
  await rendered(page);
  await page.locator('table.sites tbody tr.site').first().click();
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  await backtrace.waitFor();
  const folded = backtrace.locator('li.frame.folded');
  assert.ok(await folded.count() >= 1, '__cxa_allocate_exception is in the backtrace');
  assert.match(await folded.first().textContent(), /^__cxa_allocate_exception/);
  assert.equal(await folded.first().evaluate((li) => getComputedStyle(li).opacity), '0.5');
  // The label frame itself is not folded.
  const own = backtrace.locator('li.frame:not(.folded)').first();
  assert.match(await own.textContent(), /throw_and_catch/);
});

test('"Library frames" names the sites by their innermost frame again, kept in the URL', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocated`);
  await rendered(page);
  await page.getByRole('checkbox', { name: 'Library frames' }).check();
  await page.waitForURL(/raw=1/);
  await rendered(page);
  assert.equal((await labels())[0], '__cxa_allocate_exception');
  // The flamegraph keeps the toggle and its library leaves.
  await page.getByRole('link', { name: 'Flamegraph' }).click();
  await page.waitForURL(/#\/flame\?.*raw=1/);
  await rendered(page);
  assert.equal(await page.getByRole('checkbox', { name: 'Library frames' }).isChecked(), true);
  const raw = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocated&raw=1');
  const labelled = await getJson(baseUrl, '/api/dumps/0/flame?metric=allocated');
  const names = (node) => [node.name, ...node.children.flatMap(names)];
  assert.ok(names(raw.root).includes('__cxa_allocate_exception'));
  assert.ok(!names(labelled.root).includes('__cxa_allocate_exception'));
});

test('"Group by line" merges sites of one line and the API refuses other values', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocated`);
  await rendered(page);
  await page.getByRole('checkbox', { name: 'Group by line' }).check();
  await page.waitForURL(/group=label/);
  await rendered(page);
  const grouped = await getJson(baseUrl, '/api/dumps/0/sites?sort=allocated&group=label&limit=1000');
  const plain = await getJson(baseUrl, '/api/dumps/0/sites?sort=allocated&limit=1000');
  assert.ok(grouped.total <= plain.total);
  const sum = (answer) => answer.sites.reduce((s, r) => s + r.allocated_bytes, 0);
  assert.equal(sum(grouped), sum(plain));
  assert.equal((await labels()).length, Math.min(grouped.total, 100));
  const bad = await fetch(`${baseUrl}/api/dumps/0/sites?group=line`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /group must be label or none/);
});
