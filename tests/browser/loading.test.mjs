// The page while it waits and when the server is gone, on tests/programs/leak_three:
// while an API call is pending (held by a route in the browser, released by
// the test) the status line says "Loading…" and the view is aria-busy; once
// memrec view has stopped, the next view is an error that says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeView, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

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
