// Names that are markup: tests/programs/hostile_names dlopen()s a copy
// of libhostile_names_lib.so named `lib<img src=x onerror=alert(1)>.so` and
// leaks 1 × 5555 from the template `leak_from<Foo<int>&>`. Every view must show
// both names literally, as text: no element is made from them and no dialog opens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeView, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

const HOSTILE_FILE = 'lib<img src=x onerror=alert(1)>.so';
const FUNCTION = 'leak_from<Foo<int>&>';
const LABEL = 'leak_from<…>'; // a site's label elides template arguments; the full name is its title
let view; // memrec view and the browser page on it
let baseUrl;
let page;
let libPath;

before(async () => {
  const lib = program('libhostile_names_lib.so');
  requireFiles(program('hostile_names'), lib);
  const dir = scratch();
  libPath = join(dir, HOSTILE_FILE);
  copyFileSync(lib, libPath);
  const [dump] = record(dir, 'hostile_names', [program('hostile_names'), libPath]);
  view = await openView([dump]);
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// No <img> (the payload's element) anywhere, and no dialog so far.
async function assertInert() {
  assert.equal(await page.locator('img').count(), 0, 'no element made from a name');
  assert.deepEqual(view.dialogs, [], 'no dialog opened');
}

test('the call sites and the backtrace show the names as text', async () => {
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: LABEL });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.ok(cells[0].includes(LABEL), cells[0]);
  assert.ok((await row.locator('.label').getAttribute('title')).includes(FUNCTION), 'the full name on hover');
  assert.equal(cells[2], '5.42 KiB');
  assert.equal(await row.getByRole('cell').nth(2).getAttribute('title'), '5,555 bytes');
  assert.ok(cells[1].endsWith(` · ${HOSTILE_FILE}`), `the module in ${cells[1]}`);
  await row.click();
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  await backtrace.waitFor();
  const frames = await backtrace.getByRole('listitem').allTextContents();
  const frame = frames.find((f) => f.includes(FUNCTION));
  assert.ok(frame, `${FUNCTION} in ${frames}`);
  assert.ok(frame.includes(libPath), `the module ${libPath} in ${frame}`);
  await assertInert();
});

test('the flamegraph names the function as text', async () => {
  await page.goto(`${baseUrl}/#/flame?dump=0&metric=leaked&q=${encodeURIComponent(FUNCTION)}`);
  await rendered(page);
  await page.getByRole('img', { name: 'Flamegraph of leaked' }).waitFor();
  assert.ok((await page.locator('#flame-summary').textContent()).startsWith(`“${FUNCTION}”: 5,555 bytes of `));
  assert.equal(await page.getByRole('searchbox', { name: 'Search functions' }).inputValue(), FUNCTION);
  // Hover the frames along the bottom row until the function's is named.
  const box = await page.getByRole('img', { name: 'Flamegraph of leaked' }).boundingBox();
  let full = '';
  for (let y = box.y + box.height - 9; y > box.y && !full.includes(FUNCTION); y -= 18) {
    await page.mouse.move(box.x + box.width / 2, y);
    full = (await page.locator('#flame-info').getAttribute('title')) ?? '';
  }
  assert.ok(full.includes(`${FUNCTION}(Foo<int>&)`), full);
  const named = await page.locator('#flame-info').textContent();
  assert.ok(named.includes(`${LABEL}: 5,555 bytes`), named);
  await assertInert();
});

test('the allocations table and its detail show the names as text', async () => {
  await page.goto(`${baseUrl}/#/allocations?dump=0&leaked=1`);
  await rendered(page);
  const row = page.getByRole('row').filter({ hasText: LABEL });
  await row.waitFor();
  await row.click();
  await page.waitForURL(/sel=\d+/);
  await rendered(page);
  const detail = page.getByRole('region', { name: 'Allocation' });
  const frames = await detail.getByRole('list', { name: 'Backtrace, innermost first' }).getByRole('listitem').allTextContents();
  assert.ok(frames.some((f) => f.includes(FUNCTION) && f.includes(libPath)), frames.join('\n'));
  // The regex filter takes the markup too (escaped for a regex).
  await page.getByRole('textbox', { name: 'Function or library' }).fill('<img src=x');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.getElementById('alloc-page')?.textContent === '1–1 of 1');
  await assertInert();
});

test('the overview and the dump picker show the command line as text', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  await page.getByRole('region', { name: 'Leaked' }).waitFor();
  assert.ok((await page.locator('.process code').textContent()).includes(HOSTILE_FILE));
  await assertInert();
});
