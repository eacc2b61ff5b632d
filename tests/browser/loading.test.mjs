// The page while it waits and when the server is gone, on tests/programs/leak_three:
// while an API call is pending (held by a route in the browser, released by
// the test) the status line says "Loading…" and the view is aria-busy; while
// the allocation table is built (503s and "building" states made by routes),
// the views say so, the overview draws the whole run's timeline without
// ranges, and the rest appears once it is; once memrec view has stopped, the
// next view is an error that says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { closeView, images, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;

before(async () => {
  requireFiles(program('leak_three'));
  view = await openView(record(scratch(), 'leak_three', [program('leak_three')]));
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// Holds the page's next request for `pathname` until release() is called;
// `requested` resolves when the page has asked for it. release() returns once
// the request went on to the server and the route is gone.
async function hold(pathname) {
  let requested;
  let release;
  let continued;
  const seen = new Promise((resolve) => { requested = resolve; });
  const gate = new Promise((resolve) => { release = resolve; });
  const passed = new Promise((resolve, reject) => { continued = { resolve, reject }; });
  const match = (url) => url.pathname === pathname;
  await page.route(match, async (route) => {
    requested();
    await gate;
    await route.continue().then(continued.resolve, continued.reject);
  }, { times: 1 });
  return {
    requested: seen,
    release: async () => {
      release();
      await passed;
      await page.unroute(match);
    },
  };
}

const status = () => page.getByRole('status');
const busy = () => page.locator('#view').getAttribute('aria-busy');

test('the first view shows a visible loading state until its data arrives', async () => {
  const summary = await hold('/api/dumps/0/summary');
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await summary.requested;
  assert.equal(await status().textContent(), 'Loading…');
  assert.ok(await status().isVisible(), 'the status line is visible');
  assert.equal(await busy(), 'true');
  assert.equal(await page.locator('#view').textContent(), 'Loading…');
  assert.ok(await page.locator('#view .loading').isVisible());
  await summary.release();
  await rendered(page);
  assert.equal(await status().textContent(), '');
  assert.equal(await busy(), null);
  await page.getByRole('region', { name: 'Leaked' }).waitFor();
});

test('another view keeps the page and says it is loading until its data arrives', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const flame = await hold('/api/dumps/0/flame');
  await page.locator('#nav-flame').click();
  await flame.requested;
  assert.equal(await status().textContent(), 'Loading…');
  assert.ok(await status().isVisible(), 'the status line is visible');
  assert.equal(await busy(), 'true');
  assert.ok(await page.getByRole('region', { name: 'Leaked' }).isVisible(), 'the overview stays until then');
  await flame.release();
  await rendered(page);
  assert.equal(await status().textContent(), '');
  assert.equal(await busy(), null);
  await page.getByRole('img', { name: 'Flamegraph of leaked' }).waitFor();
});

// Stands in for memrec view while it builds dump 0's allocation table (a
// large dump is served before it): `paths` answer 503 with the percent and
// the dump list says "building", until set(null) says it is built.
async function building(paths, percent) {
  let now = percent;
  const held = (url) => paths.includes(url.pathname);
  const list = (url) => url.pathname === '/api/dumps';
  await page.route(held, async (route) => {
    if (now === null) return route.continue();
    return route.fulfill({ status: 503, json: { error: `This dump's allocation table is still being built (${now} %).`, building: now } });
  });
  await page.route(list, async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    if (now !== null) for (const d of body.dumps) d.table = { state: 'building', percent: now };
    return route.fulfill({ response, json: body });
  });
  return {
    set: (p) => { now = p; },
    done: async () => { await page.unroute(held); await page.unroute(list); },
  };
}

test('while the allocation table is built the overview draws the whole run\'s timeline, and ranges come once it is', async () => {
  // memrec view answers the whole run's timeline from the report's pass then, and says the table is built
  const table = await building([], 42);
  let percent = 42;
  const timeline = (url) => url.pathname === '/api/dumps/0/timeline';
  await page.route(timeline, async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    if (percent !== null) body.table = { state: 'building', percent };
    return route.fulfill({ response, json: body });
  });
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  await page.getByRole('region', { name: 'Leaked' }).waitFor();
  const note = page.locator('#early-note .building');
  assert.equal(await note.textContent(),
    'Ranges, instants and a timeline in finer buckets come once memrec view has built the allocation table (42 % done).');
  assert.equal(await page.locator('#buckets').count(), 1, 'the timeline is drawn');
  // a drag across it selects nothing yet, and a click picks no instant
  const over = await page.locator('.chart .u-over').first().boundingBox();
  const y = over.y + over.height / 2;
  await page.mouse.move(over.x + over.width * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(over.x + over.width * 0.5, y, { steps: 4 });
  await page.mouse.move(over.x + over.width * 0.7, y, { steps: 4 });
  await page.mouse.up();
  await page.mouse.click(over.x + over.width * 0.4, y);
  assert.doesNotMatch(page.url(), /from=|at=/);
  // the page asks again every 2 s and keeps the percent current
  percent = 57;
  table.set(57);
  await page.waitForFunction(() => document.querySelector('#view .building-percent')?.textContent === '57 %');
  assert.equal(await page.locator('#context').textContent(), 'Whole recording.');
  await page.screenshot({ path: join(images, 'view-building.png'), fullPage: true });
  percent = null;
  table.set(null);
  await page.locator('#early-note').waitFor({ state: 'detached' });
  assert.match(await page.locator('#view .detail').first().textContent(), /Drag on the timeline to select a range/);
  assert.match(await page.locator('#context').textContent(), /drag on the overview's timeline/);
  await page.getByRole('region', { name: 'Leaked' }).waitFor();
  await page.unroute(timeline);
  await table.done();
});

test('a view that needs the allocation table says it is being built and appears once it is', async () => {
  const table = await building(['/api/dumps/0/allocations'], 8);
  await page.goto(`${baseUrl}/#/allocations?dump=0`);
  await rendered(page);
  assert.equal(await page.locator('#view h2').textContent(), 'Building the allocation table');
  assert.equal(await page.locator('#view .building').textContent(),
    'This view appears once memrec view has built the allocation table (8 % done).');
  assert.equal(await page.getByRole('alert').count(), 0, 'not an error');
  table.set(null);
  await page.locator('#alloc-page').waitFor();
  assert.equal(await page.locator('#view .building').count(), 0);
  await table.done();
});

test('the call sites come at once while the table is built, their sparklines once it is', async () => {
  const table = await building([], 30);
  let built = false;
  const sites = (url) => url.pathname === '/api/dumps/0/sites';
  await page.route(sites, async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    if (!built) {
      body.table = { state: 'building', percent: 30 };
      for (const s of body.sites) delete s.spark;
    }
    return route.fulfill({ response, json: body });
  });
  await page.goto(`${baseUrl}/#/sites?dump=0`);
  await rendered(page);
  assert.ok(await page.locator('tr.site').count() > 0);
  assert.equal(await page.locator('svg.spark').count(), 0);
  assert.equal(await page.locator('#view .building').textContent(),
    'Sparklines appear once memrec view has built the allocation table (30 % done).');
  built = true;
  table.set(null);
  await page.locator('svg.spark').first().waitFor();
  assert.equal(await page.locator('#view .building').count(), 0);
  await page.unroute(sites);
  await table.done();
});

// Last: it stops the server.
test('when memrec view has stopped the page says so instead of a blank view', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const exited = once(view.server, 'exit');
  view.server.kill('SIGTERM');
  await exited;
  await page.locator('#nav-sites').click();
  await page.waitForURL(/#\/sites/);
  await rendered(page);
  const alert = page.getByRole('alert');
  assert.equal(await alert.locator('h2').textContent(), 'Something went wrong');
  assert.equal(await alert.locator('p').textContent(), 'Cannot reach memrec view (Failed to fetch). Is it still running?');
  assert.ok(await alert.isVisible());
  assert.equal(await status().textContent(), '');
});
