// The overview's Recorder card, shown only for a dump that did not end cleanly
// or whose recorder lost events or cut stacks: leak_three (complete: no card),
// deep_stack (complete, one stack cut at the max depth), leak_three's dump cut
// by hand at a frame boundary (no End record) and inside a frame (cut at a
// known byte), sigkill_loop killed with SIGKILL while it allocates, and toggle,
// which takes SIGUSR1 over, recorded with recording started off (complete,
// frees only, and a note that says why).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closeView, getJson, images, preload, program, record, openView, rendered, requireFiles, scratch } from './support.mjs';

let view; // memrec view and the browser page on it
let baseUrl;
let page;
let files; // the dumps, by id
const grouped = (n) => new Intl.NumberFormat('en-US').format(n);

// Where a dump's file header ends and each complete frame ends
// (recorder-format/FORMAT.md: "MEMRECDT", the body length as a little-endian
// u32 at 12; each frame "MRFZ", its compressed size C at 4, 12 + C bytes).
function layout(bytes) {
  assert.equal(bytes.toString('latin1', 0, 8), 'MEMRECDT');
  const headerEnd = 16 + bytes.readUInt32LE(12);
  const frameEnds = [];
  let at = headerEnd;
  while (at + 12 <= bytes.length && bytes.toString('latin1', at, at + 4) === 'MRFZ') {
    const end = at + 12 + bytes.readUInt32LE(at + 4);
    if (end > bytes.length) break;
    frameEnds.push(end);
    at = end;
  }
  return { headerEnd, frameEnds };
}

// What the card says of a dump without an End record: the reader keeps every
// complete frame, and a partial one after them is bytes lost.
function cutDetail(file) {
  const bytes = readFileSync(file);
  const { headerEnd, frameEnds } = layout(bytes);
  const readable = frameEnds.at(-1) ?? headerEnd;
  return readable === bytes.length ? 'no clean end record'
    : `cut at byte ${grouped(readable)}, ${grouped(bytes.length - readable)} bytes lost`;
}

// sigkill_loop under the preload, SIGKILLed once it printed its third progress
// marker (four threads have then allocated for 200 ms); returns its dump.
async function recordKilled(dir) {
  const proc = spawn(program('sigkill_loop'), [], {
    cwd: dir,
    env: { ...process.env, LD_PRELOAD: preload, MEMREC_OUTPUT: join(dir, 'sigkill_loop.%p.dat') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(proc, 'exit');
  let out = '';
  await new Promise((resolve, reject) => {
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      if ((out.match(/^marker /gm) ?? []).length >= 3) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`sigkill_loop exited (${code}) before it was killed: ${out}`)));
  });
  proc.kill('SIGKILL');
  const [code, signal] = await exited;
  assert.deepEqual([code, signal], [null, 'SIGKILL']);
  return join(dir, `sigkill_loop.${proc.pid}.dat`);
}

// toggle with its own SIGUSR1 handler, under the preload with recording
// started off: the toggle never reaches the recorder; returns its dump.
function recordStayedOff(dir) {
  const run = spawnSync(program('toggle'), ['10', 'own-handler'], {
    cwd: dir,
    env: { ...process.env, LD_PRELOAD: preload, MEMREC_OUTPUT: join(dir, 'toggle.%p.dat'), MEMREC_START_DISABLED: '1' },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  return join(dir, `toggle.${run.pid}.dat`);
}

before(async () => {
  requireFiles(preload, program('leak_three'), program('deep_stack'), program('sigkill_loop'), program('toggle'));
  const dir = scratch();
  const [leak] = record(dir, 'leak_three', [program('leak_three')]);
  const [deep] = record(dir, 'deep_stack', [program('deep_stack')]);
  // Cut before the last frame, the one with the End record, and 20 bytes into it.
  const bytes = readFileSync(leak);
  const { headerEnd, frameEnds } = layout(bytes);
  assert.equal(frameEnds.at(-1), bytes.length, 'leak_three\'s dump is whole');
  const boundary = frameEnds.at(-2) ?? headerEnd;
  const atBoundary = join(dir, 'leak_three-at-boundary.dat');
  const insideFrame = join(dir, 'leak_three-inside-frame.dat');
  writeFileSync(atBoundary, bytes.subarray(0, boundary));
  writeFileSync(insideFrame, bytes.subarray(0, boundary + 20));
  files = [leak, deep, atBoundary, insideFrame, await recordKilled(dir), recordStayedOff(dir)];
  view = await openView(files);
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

// The Recorder card of dump `id`: [value, detail], or null when there is none.
async function recorderCard(id) {
  await page.goto(`${baseUrl}/#/overview?dump=${id}`);
  await rendered(page);
  await page.getByRole('region', { name: 'Leaked' }).waitFor();
  const card = page.getByRole('region', { name: 'Recorder' });
  if (await card.count() === 0) return null;
  assert.equal(await card.locator('h3').textContent(), 'Recorder');
  return [await card.locator('.value').textContent(), await card.locator('.detail').textContent()];
}

test('a dump that ended cleanly and lost nothing has no Recorder card', async () => {
  assert.equal(await recorderCard(0), null);
});

test('a complete dump with a stack cut at the max depth names the counter', async () => {
  assert.deepEqual(await recorderCard(1), ['complete', 'truncated_stacks: 1']);
});

test('a dump cut at a frame boundary says it has no clean end', async () => {
  assert.equal(cutDetail(files[2]), 'no clean end record');
  assert.deepEqual(await recorderCard(2), ['incomplete', 'no clean end record']);
});

test('a dump cut inside a frame says where and how many bytes were lost', async () => {
  const { headerEnd, frameEnds } = layout(readFileSync(files[0]));
  const boundary = frameEnds.at(-2) ?? headerEnd;
  assert.deepEqual(await recorderCard(3), ['incomplete', `cut at byte ${grouped(boundary)}, 20 bytes lost`]);
});

test('a dump of a process killed by SIGKILL is incomplete, and the card says why', async () => {
  const summary = await getJson(baseUrl, '/api/dumps/4/summary');
  assert.ok(summary.allocations > 0, 'events before the kill were read');
  assert.deepEqual(await recorderCard(4), ['incomplete', cutDetail(files[4])]);
  await page.screenshot({ path: join(images, 'view-recorder-card.png'), fullPage: true });
});

test('a dump whose program took the toggle signal over says recording stayed off', async () => {
  assert.deepEqual(await recorderCard(5), ['complete',
    'recording stayed off: the program took over SIGUSR1; use MEMREC_SIGNAL to pick a signal it leaves alone']);
});

test('the dump list tags exactly the cut dumps as incomplete', async () => {
  const { dumps } = await getJson(baseUrl, '/api/dumps');
  assert.deepEqual(dumps.map((d) => d.incomplete), [false, false, true, true, true, false]);
  await page.goto(`${baseUrl}/#/dumps`);
  await rendered(page);
  const table = page.getByRole('table', { name: 'Dumps' });
  for (const [id, file] of files.entries()) {
    const tags = await table.locator('tbody tr').filter({ has: page.locator(`.cmdline[title="${file}"]`) })
      .locator('.tag.warn').allTextContents();
    assert.deepEqual(tags, id >= 2 && id <= 4 ? ['incomplete'] : [], file);
  }
});
