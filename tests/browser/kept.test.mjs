// "Kept from the range" (allocated in [A, B], still live at C: `memrec report
// --retained A..B --at C`) in the allocation table and the call sites, on
// tests/programs/marker_phases (10 x 1,000 bytes, marker "a", 7 x 3,000,
// marker "b", 5 x 5,000, marker "b" again; nothing freed). A link naming the
// markers reproduces it; the rows, their bytes and the per-site figures are the CLI's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { closeView, getJson, openView, program, record, rendered, reportOf, requireFiles, scratch } from './support.mjs';

let view;
let dump;

before(async () => {
  requireFiles(program('marker_phases'));
  [dump] = record(scratch(), 'marker_phases', [program('marker_phases')]);
  view = await openView([dump]);
});

after(() => closeView(view));

function retained(...args) {
  const rep = reportOf(dump, '--retained', ...args);
  return { ...rep.retained, sites: rep.retained.sites.map((s) => ({ ...s, label: rep.sites[s.site].label })) };
}

// The exact bytes of every row of the allocation table (their size cells' hover).
async function rowBytes(page) {
  const titles = await page.locator('table.allocations tbody tr td:nth-child(3)').evaluateAll((cells) => cells.map((c) => c.title));
  return titles.map((t) => Number(t.replace(/[^\d]/g, '')));
}

test('the allocation table kept from mark:a to mark:b at the second b has exactly the CLI\'s rows and bytes', async () => {
  const { page, baseUrl } = view;
  const cli = retained('mark:a..mark:b', '--at', 'mark:b#2');
  assert.deepEqual([cli.bytes, cli.count], [21000, 7]);
  await page.goto(`${baseUrl}/#/allocations?dump=0&from=mark:a&to=mark:b&at=mark:b%232&kept=1`);
  await rendered(page);
  const state = new URLSearchParams(page.url().split('?')[1]);
  assert.deepEqual([state.get('from'), state.get('to'), state.get('at')].map(Number), [cli.from_ns, cli.to_ns, cli.at_ns]);
  assert.equal(await page.locator('#alloc-page').textContent(), '1–7 of 7');
  const sizes = await rowBytes(page);
  assert.equal(sizes.length, cli.count);
  assert.equal(sizes.reduce((a, b) => a + b, 0), cli.bytes);
  assert.ok(await page.getByRole('checkbox', { name: 'Kept from the range' }).isChecked());
  assert.equal(await page.locator('#kept-total').getAttribute('title'), '21,000 bytes');
  assert.match(await page.locator('#kept-note code').textContent(),
    new RegExp(`^memrec report --retained ${cli.from_ns}ns\\.\\.${cli.to_ns}ns --at ${cli.at_ns}ns$`));
});

test('without an instant the table keeps what is live at the range\'s end; toggling it off shows every allocation of the range', async () => {
  const { page, baseUrl } = view;
  // From the start to marker b: phases one and two, all still live at b.
  const cli = retained('0..mark:b');
  assert.deepEqual([cli.bytes, cli.count], [31000, 17]);
  await page.goto(`${baseUrl}/#/allocations?dump=0&to=mark:b&kept=1`);
  await rendered(page);
  assert.equal(await page.locator('#alloc-page').textContent(), `1–${cli.count} of ${cli.count}`);
  assert.equal((await rowBytes(page)).reduce((a, b) => a + b, 0), cli.bytes);
  await page.getByRole('checkbox', { name: 'Kept from the range' }).uncheck();
  await page.getByRole('button', { name: 'Apply' }).click();
  await rendered(page);
  assert.equal(await page.locator('#kept-note').count(), 0);
  const all = await getJson(baseUrl, `/api/dumps/0/allocations?to=${cli.to_ns}`);
  assert.ok(all.total >= cli.count, all.total);
});

test('the call sites sorted by kept give each site the CLI\'s retained bytes and blocks', async () => {
  const { page, baseUrl } = view;
  const cli = retained('0..mark:b#2');
  assert.deepEqual(cli.sites.map((s) => [s.label, s.bytes, s.count]),
    [['phase_three', 25000, 5], ['phase_two', 21000, 7], ['phase_one', 10000, 10]]);
  await page.goto(`${baseUrl}/#/sites?dump=0&to=mark:b%232&sort=kept`);
  await rendered(page);
  assert.equal(await page.locator('th[aria-sort="descending"]').textContent(), 'Kept from the range');
  assert.equal(await page.locator('#sites-sort').inputValue(), 'kept');
  const rows = page.locator('tr.site');
  for (const [i, s] of cli.sites.entries()) {
    const row = rows.nth(i);
    assert.equal(await row.locator('td.fn').textContent(), s.label);
    assert.equal(await row.locator('td.num').last().getAttribute('title'), `${s.bytes.toLocaleString('en-US')} bytes in ${s.count} blocks`);
  }
  assert.equal(await page.locator('#kept-total').getAttribute('title'), `${cli.bytes.toLocaleString('en-US')} bytes`);
  // The API's per-site figures, also grouped by label (one site each here).
  for (const group of ['', '&group=label']) {
    const answer = await getJson(baseUrl, `/api/dumps/0/sites?sort=kept&to=${cli.to_ns}${group}`);
    const kept = answer.sites.filter((s) => s.kept_bytes > 0).map((s) => [s.label, s.kept_bytes, s.kept_count]);
    assert.deepEqual(kept, cli.sites.map((s) => [s.label, s.bytes, s.count]));
  }
});

test('an open site sorted by kept links to the blocks it kept, which are the CLI\'s for it', async () => {
  const { page, baseUrl } = view;
  const cli = retained('mark:a..mark:b#2');
  const two = cli.sites.find((s) => s.label === 'phase_two');
  assert.deepEqual([two.bytes, two.count], [21000, 7]);
  await page.goto(`${baseUrl}/#/sites?dump=0&from=mark:a&to=mark:b%232&sort=kept`);
  await rendered(page);
  await page.locator('tr.site', { has: page.locator('td.fn', { hasText: 'phase_two' }) }).click();
  await rendered(page);
  await page.getByRole('link', { name: 'The blocks it kept' }).click();
  await rendered(page);
  assert.match(page.url(), /#\/allocations\?.*site=\d+.*kept=1/);
  assert.equal(await page.locator('#alloc-page').textContent(), `1–${two.count} of ${two.count}`);
  assert.equal((await rowBytes(page)).reduce((a, b) => a + b, 0), two.bytes);
});

test('an instant before the range is refused with a sentence, as the CLI refuses it', async () => {
  const { page, baseUrl } = view;
  await page.goto(`${baseUrl}/#/sites?dump=0&from=mark:b&at=mark:a&sort=kept`);
  await rendered(page);
  assert.match(await page.getByRole('alert').textContent(), /The instant is before the range starts/);
  const response = await fetch(`${baseUrl}/api/dumps/0/allocations?kept=1&from=1000&alive_at=10`);
  assert.equal(response.status, 400);
  assert.match((await response.json()).error, /kept=1 needs alive_at at or after the range's start/);
});

// The collapsed stacks a Downloads link gives: {function: bytes}.
async function downloaded(page) {
  await page.getByText('Downloads').click();
  const link = page.getByRole('link', { name: 'collapsed stacks' });
  const href = await link.getAttribute('href');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const text = readFileSync(await download.path(), 'utf8');
  return { href, stacks: Object.fromEntries(text.trim().split('\n').map((l) => [l.split(' ')[0].split(';').pop(), Number(l.split(' ')[1])])) };
}

test('the Downloads of the kept rows hold those allocations: at the instant, or live at the range\'s end', async () => {
  const { page, baseUrl } = view;
  await page.goto(`${baseUrl}/#/allocations?dump=0&from=mark:a&to=mark:b&at=mark:b%232&kept=1`);
  await rendered(page);
  let got = await downloaded(page);
  assert.match(await page.locator('#downloads-filters').textContent(), /^Only allocations alive at [\d.]+ (µs|ms|s)\.$/);
  assert.match(got.href, /metric=allocated&from=\d+&to=\d+&alive_at=\d+$/);
  assert.deepEqual(got.stacks, { phase_two: 21000 });
  await page.goto(`${baseUrl}/#/allocations?dump=0&to=mark:b&kept=1`);
  await rendered(page);
  got = await downloaded(page);
  assert.equal(await page.locator('#downloads-filters').textContent(), 'Only allocations live at the range\'s end.');
  const cli = retained('0..mark:b');
  const sum = Object.values(got.stacks).reduce((a, b) => a + b, 0);
  assert.equal(sum, cli.bytes);
  assert.equal(got.stacks.phase_one, 10000);
  assert.equal(got.stacks.phase_two, 21000);
});
