// Shared by the browser tests: paths in the build, recording a test program
// under `memrec run`, serving dumps with `memrec view --port 0`, and a page in
// Debian's chromium (playwright-core, headless) that fails the test on any
// script error or dialog. MEMREC_BUILD_DIR (default <repo>/build) must be built.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const buildDir = resolve(process.env.MEMREC_BUILD_DIR || join(repo, 'build'));
export const memrec = join(buildDir, 'analyzer', 'memrec');
export const preload = join(buildDir, 'preload', 'libmemrec.so');
export const program = (name) => join(buildDir, 'tests', 'programs', name);
// docs/images/ by default, to refresh the docs; scripts/test points this at its results.
export const images = resolve(process.env.MEMREC_SCREENSHOT_DIR || join(repo, 'docs', 'images'));
const chromiumPath = process.env.MEMREC_CHROMIUM || '/usr/bin/chromium';

export function requireFiles(...paths) {
  for (const path of [memrec, chromiumPath, ...paths]) {
    assert.ok(existsSync(path), `${path} is missing: build memrec (MEMREC_BUILD_DIR) and install chromium (scripts/setup)`);
  }
  mkdirSync(images, { recursive: true });
}

// Scratch folders of this test file, removed when its process exits.
const scratchDirs = [];
process.on('exit', () => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});
export const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'memrec-browser-'));
  scratchDirs.push(dir);
  return dir;
};

// Runs `argv` under memrec run in `dir`; returns the dumps it wrote, by name.
export function record(dir, name, argv) {
  const output = join(dir, `${name}.%p.dat`);
  const run = spawnSync(memrec, ['run', '--output', output, '--', ...argv], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${argv.join(' ')}: ${run.stderr}`);
  const files = readdirSync(dir).filter((f) => f.startsWith(`${name}.`) && f.endsWith('.dat')).sort();
  assert.ok(files.length > 0, `${name} wrote no dump`);
  return files.map((f) => join(dir, f));
}

function startView(dumps, env = {}) {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(memrec, ['view', '--port', '0', '--no-progress', ...dumps],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`memrec view printed no URL in 30 s: ${out} ${err}`)), 30000);
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ proc, url: match[0].replace(/\/$/, '') });
      }
    });
    proc.stderr.on('data', (chunk) => { err += chunk; });
    proc.on('exit', (code) => reject(new Error(`memrec view exited ${code}: ${err}`)));
  });
}

// A browser and one page; `dialogs` collects every alert/confirm/prompt, and
// `errors` every uncaught script error and CSP violation, so a test can assert there were none.
async function openPage() {
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--no-proxy-server'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const dialogs = [];
  const errors = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => { errors.push(e.message); });
  // A 4xx from the API is logged too: only a blocked script or style counts.
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) errors.push(m.text()); });
  return { browser, page, dialogs, errors };
}

// Waits until the page shows the view of its current hash (app.js marks it).
export async function rendered(page) {
  await page.waitForFunction(() => {
    const main = document.getElementById('view');
    return main.dataset.rendered === location.hash && !main.hasAttribute('aria-busy');
  });
}

// `memrec report --json ARGS DUMP`: the one process's report.
export function reportOf(dump, ...args) {
  const run = spawnSync(memrec, ['report', '--json', '--no-progress', ...args, dump], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout).processes[0].report;
}

// GET from memrec view in node (no proxy: node's fetch ignores http_proxy).
export async function getJson(baseUrl, path) {
  const response = await fetch(`${baseUrl}${path}`);
  assert.equal(response.status, 200, `${path}: HTTP ${response.status} ${await response.clone().text()}`);
  return response.json();
}

// The pixel x on a timeline chart of time `ns`, for a chart whose x axis runs
// from the first bucket's start to the last one's (uPlot's default range).
export async function timelineX(page, timeline, ns, chartIndex = 0) {
  const over = page.locator('.chart .u-over').nth(chartIndex);
  const box = await over.boundingBox();
  const first = timeline.time_ns[0];
  const last = timeline.time_ns[timeline.time_ns.length - 1];
  return { x: box.x + (box.width * (ns - first)) / (last - first), y: box.y + box.height / 2 };
}

// How many of a chart's canvas pixels are the markers' purple (timeline.js
// draws them #6941c6; lighter where anti-aliased on white), never a line's
// blue, green or brown: 0 on a chart without markers.
export async function markerPixels(chart) {
  return chart.locator('canvas').evaluate((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] > 0 && data[i] > data[i + 1] + 15 && data[i + 2] > data[i + 1] + 50) n += 1;
    }
    return n;
  });
}

// Where flame_canvas.js draws the first node called `name`: its row, and its
// x range as fractions of the width (children share their parent's width by value).
export function place(root, name) {
  const walk = (node, depth, x, w) => {
    if (node.name === name) return { depth, x, w };
    const total = Math.max(node.value, node.children.reduce((sum, c) => sum + c.value, 0));
    let cx = x;
    for (const child of node.children) {
      const found = walk(child, depth + 1, cx, (w * child.value) / total);
      if (found) return found;
      cx += (w * child.value) / total;
    }
    return null;
  };
  return walk(root, 0, 0, 1);
}

// `memrec view` on `dumps` and a browser page: {server, baseUrl, browser, page,
// dialogs, errors}. closeView ends both and asserts that no script error, CSP
// violation or dialog happened in any test of the file.
// `env`: variables added to memrec view's environment. memrec view listens
// before it loads the dumps: with `served`, this waits until none is loading.
export async function openView(dumps, env = {}, { served = true } = {}) {
  const { proc, url } = await startView(dumps, env);
  if (served) await waitFor(async () => !(await getJson(url, '/api/dumps')).dumps.some((d) => d.state === 'loading'), 'the dumps loaded');
  const session = await openPage();
  return { server: proc, baseUrl: url, ...session };
}

export async function closeView(view) {
  await view?.browser.close();
  view?.server.kill('SIGTERM');
  assert.deepEqual(view?.errors ?? [], [], 'no script error or CSP violation');
  assert.deepEqual(view?.dialogs ?? [], [], 'no dialog');
}

// Polls `fn` until it gives something truthy; a deadline, not a timing assertion.
export async function waitFor(fn, what) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// growth_service ticking until killed, under the preload, writing its dump
// into a scratch folder (flushed every 100 ms) that `memrec view --follow`
// reads every 200 ms: openView's session plus `service`. closeFollowed ends both.
export async function openFollowedService() {
  requireFiles(program('growth_service'), preload);
  const dir = scratch();
  const service = spawn(program('growth_service'), ['1000000', 'forever'], {
    env: { ...process.env, LD_PRELOAD: preload, MEMREC_OUTPUT: join(dir, 'growth.%p.dat'), MEMREC_FLUSH_INTERVAL_MS: '100' },
    stdio: 'ignore',
  });
  return { service, ...(await openView(['--follow', '--poll-ms', '200', dir])) };
}

export async function closeFollowed(view) {
  view?.service.kill('SIGKILL');
  await closeView(view);
}
