// memrec view in Debian's chromium (playwright-core, headless): records
// tests/programs/leak_three, serves it with `memrec view --port 0`, and checks
// the overview, the leak list (leak_here, 3 × 4242 = 12726 bytes, its
// backtrace), the flamegraph and the error page by role and text. Screenshots go
// to docs/images/ (MEMREC_SCREENSHOT_DIR elsewhere).
// Needs MEMREC_BUILD_DIR (default <repo>/build) built, and `npm ci` here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const buildDir = resolve(process.env.MEMREC_BUILD_DIR || join(repo, 'build'));
const memrec = join(buildDir, 'analyzer', 'memrec');
const leakThree = join(buildDir, 'tests', 'programs', 'leak_three');
// docs/images/ by default, to refresh the docs; scripts/test points this at its results.
const images = resolve(process.env.MEMREC_SCREENSHOT_DIR || join(repo, 'docs', 'images'));
const chromiumPath = process.env.MEMREC_CHROMIUM || '/usr/bin/chromium';

let server;
let baseUrl;
let browser;
let page;

function startView(dump) {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(memrec, ['view', '--port', '0', '--no-progress', dump], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`memrec view printed no URL in 30 s: ${out} ${err}`)), 30000);
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ proc, url: match[0] });
      }
    });
    proc.stderr.on('data', (chunk) => { err += chunk; });
    proc.on('exit', (code) => reject(new Error(`memrec view exited ${code}: ${err}`)));
  });
}

before(async () => {
  for (const path of [memrec, leakThree, chromiumPath]) {
    assert.ok(existsSync(path), `${path} is missing: build memrec (MEMREC_BUILD_DIR) and install chromium (scripts/setup)`);
  }
  mkdirSync(images, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'memrec-browser-'));
  const dump = join(dir, 'leak_three.dat');
  const run = spawnSync(memrec, ['run', '--output', dump, '--', leakThree], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  ({ proc: server, url: baseUrl } = await startView(dump));
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--no-proxy-server'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => { throw e; });
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
});

test('the overview shows the peak, the leak and a timeline', async () => {
  await page.goto(`${baseUrl}#/overview?dump=0`);
  const leaked = page.getByRole('region', { name: 'Leaked' });
  await leaked.waitFor();
  assert.match(await leaked.textContent(), /12,726 bytes in 3 blocks/);
  await page.getByRole('region', { name: 'Peak heap' }).waitFor();
  await page.locator('.chart canvas').first().waitFor();
  await page.screenshot({ path: join(images, 'view-overview.png'), fullPage: true });
});

test('the leak list shows leak_here with its exact bytes and expands to its backtrace', async () => {
  await page.goto(`${baseUrl}#/sites?dump=0&sort=leaked`);
  const row = page.getByRole('row').filter({ hasText: 'leak_here' });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[0], 'leak_here');
  assert.match(cells[1], /leak_three\.c:\d+$/);
  assert.equal(cells[2], '12,726');
  assert.equal(cells[3], '3');
  await row.click();
  const backtrace = page.getByRole('list', { name: 'Backtrace, innermost first' });
  await backtrace.waitFor();
  const frames = await backtrace.getByRole('listitem').allTextContents();
  assert.match(frames[0], /^leak_here/);
  assert.match(frames[1], /^main/);
  assert.match(page.url(), /open=\d+/, 'the open row is in the URL');
  await page.screenshot({ path: join(images, 'view-call-sites.png'), fullPage: true });
});

test('the sort is kept in the URL and the table follows it', async () => {
  await page.goto(`${baseUrl}#/sites?dump=0&sort=leaked`);
  await page.getByRole('button', { name: 'Allocations' }).click();
  await page.waitForURL(/sort=allocations/);
  const header = page.getByRole('columnheader', { name: 'Allocations' });
  await page.waitForFunction(() => document.querySelector('th[aria-sort="descending"]')?.textContent === 'Allocations');
  assert.equal(await header.getAttribute('aria-sort'), 'descending');
});

test('the flamegraph finds leak_here, zooms on click and keeps its state in the URL', async () => {
  await page.goto(`${baseUrl}#/flame?dump=0&metric=allocated`);
  const canvas = page.getByRole('img', { name: 'Flamegraph of allocated' });
  await canvas.waitFor();
  await page.getByRole('searchbox', { name: 'Search functions' }).fill('leak_here');
  await page.getByRole('searchbox', { name: 'Search functions' }).press('Enter');
  await page.waitForURL(/q=leak_here/);
  await page.waitForFunction(() => /leak_here/.test(document.getElementById('flame-summary')?.textContent ?? ''));
  assert.match(await page.locator('#flame-summary').textContent(), /12,726 bytes of 195,976 bytes/);
  await page.screenshot({ path: join(images, 'view-flamegraph.png'), fullPage: true });
  const box = await page.getByRole('img', { name: 'Flamegraph of allocated' }).boundingBox();
  await page.mouse.click(box.x + 5, box.y + 18 + 9);  // the first frame under the root
  await page.waitForURL(/zoom=0/);
  await page.getByRole('button', { name: 'Reset zoom' }).waitFor();
});

test('an unknown dump shows an error message, not a blank page', async () => {
  await page.goto(`${baseUrl}#/overview?dump=7`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /No dump has id 7/);
  await page.screenshot({ path: join(images, 'view-error.png') });
});
