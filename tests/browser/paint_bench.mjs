// Not a test: scripts/lib/bench_view.py runs it to time the overview's first
// paint in Debian's chromium against a running `memrec view`.
// Usage: node paint_bench.mjs URL REPS — prints {"first_paint_ms": [...]}: for
// each repetition, a fresh browser context (nothing cached), from navigation
// to the overview of dump 0 drawn (its cards and the timeline's chart).
import { chromium } from 'playwright-core';

const [url, reps = '3'] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.MEMREC_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-proxy-server'],
});
const times = [];
try {
  for (let i = 0; i < Number(reps); ++i) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${url}/#/overview?dump=0`);
    await page.waitForFunction(() => {
      const main = document.getElementById('view');
      return main.dataset.rendered === location.hash && !main.hasAttribute('aria-busy') &&
        document.querySelector('#view canvas') !== null;
    }, null, { timeout: 60000 });
    times.push(performance.now() - started);
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify({ first_paint_ms: times }));
