// Function names in memrec view's tables: the short form (template and
// generic argument lists as <…>: the server's short_function, tested in
// tests/unit/analyzer/site_label_test.cpp) with the whole name on hover,
// broken only after `::`, `/` or a space; and, on the C++ and Rust services'
// dumps at 1280 × 800, no table cell whose text wraps inside a word.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeView, getJson, openView, program, record, rendered, requireFiles, scratch } from './support.mjs';

const SERVICES = [
  { name: 'cpp_service', binary: program('cpp_service') },
  { name: 'rust_service', binary: program('rust_service/rust_service') },
];

let view;
let baseUrl;
let page;

before(async () => {
  requireFiles(...SERVICES.map((s) => s.binary));
  const dir = scratch();
  view = await openView(SERVICES.flatMap((s) => record(dir, s.name, [s.binary])));
  ({ baseUrl, page } = view);
});

after(() => closeView(view));

test('functionName shows the short name, the whole one on hover, and breaks only after :: or a space', async () => {
  await page.goto(`${baseUrl}/#/overview?dump=0`);
  await rendered(page);
  const cases = [
    ['std::vector<…>::_M_realloc_insert', 'void std::vector<std::pair<std::map<int, std::vector<int> >, int>, std::allocator<int> >::_M_realloc_insert(int&&)'],
    ['operator<', 'bool operator<(Key const&, Key const&)'],
    ['std::operator<< <…>', 'std::operator<< <std::char_traits<char> >(std::ostream&, char const*)'],
    ['std::sort<…>', 'void std::sort<run()::<lambda()> >(run()::<lambda()>)'],
    ['rust_service::main::{{closure}}::{closure#0}', 'rust_service::main::{{closure}}::{closure#0}'],
    ['<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop', '<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop'],
  ];
  const got = await page.evaluate(async (list) => {
    const { functionName } = await import('/src/labels.js');
    return list.map(([text, full]) => {
      const span = functionName(text, full);
      return { text: span.textContent, title: span.title, pieces: [...span.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent) };
    });
  }, cases);
  assert.deepEqual(got.map((g) => [g.text, g.title]), cases);
  assert.deepEqual(got.map((g) => g.pieces), [
    ['std::', 'vector<…>::', '_M_realloc_insert'],
    ['operator<'],
    ['std::', 'operator<< ', '<…>'],
    ['std::', 'sort<…>'],
    ['rust_service::', 'main::', '{{closure}}::', '{closure#0}'],
    ['<alloc::', 'vec::', 'Vec<…> ', 'as ', 'core::', 'ops::', 'drop::', 'Drop>::', 'drop'],
  ]);
});

test('a templated frame is named by its short form in the call sites, the whole name on hover', async () => {
  // With "Library frames", the C++ service's sites are named by the STL's templates.
  const sites = (await getJson(baseUrl, '/api/dumps/0/sites?sort=allocations&raw=1&limit=1000')).sites;
  const templated = sites.find((s) => s.label.includes('<…>'));
  assert.ok(templated, `a label with <…> among ${sites.map((s) => s.label).join(', ')}`);
  assert.doesNotMatch(templated.label_full, /…/);
  await page.goto(`${baseUrl}/#/sites?dump=0&sort=allocations&raw=1`);
  await rendered(page);
  const cell = page.locator('table.sites tbody tr.site td.fn .label', { hasText: templated.label }).first();
  assert.equal(await cell.textContent(), templated.label);
  assert.equal(await cell.getAttribute('title'), templated.label_full);
});

// The cells of the view whose text breaks a line between two characters of
// one word: same text node, neither a space nor a hyphen before the break.
function midWordBreaks() {
  const found = [];
  for (const cell of document.querySelectorAll('#view td, #view th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const s = t.textContent;
      let top = null;
      for (let i = 0; i < s.length; i += 1) {
        if (/\s/.test(s[i])) {
          top = null;
          continue;
        }
        const range = document.createRange();
        range.setStart(t, i);
        range.setEnd(t, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        if (top !== null && Math.abs(rect.top - top) > 2 && s[i - 1] !== '-') found.push(`${s.slice(Math.max(0, i - 30), i)}⏎${s.slice(i, i + 30)}`);
        top = rect.top;
      }
    }
  }
  return found;
}

for (const [dump, service] of SERVICES.entries()) {
  test(`${service.name}: no table cell wraps inside a word at 1280 px`, async () => {
    assert.deepEqual(page.viewportSize(), { width: 1280, height: 800 });
    const first = (await getJson(baseUrl, `/api/dumps/${dump}/sites?sort=allocated&raw=1`)).sites[0];
    const biggest = (await getJson(baseUrl, `/api/dumps/${dump}/functions?metric=allocated&limit=1`)).functions[0];
    const views = [
      `#/sites?dump=${dump}&sort=allocated&open=${first.id}&raw=1`,
      `#/sites?dump=${dump}&sort=leaked`,
      `#/allocations?dump=${dump}`,
      `#/flame?dump=${dump}&metric=allocated&inv=1&show=tree&raw=1`,
      `#/flame?dump=${dump}&metric=allocated&show=callers&raw=1&fn=${encodeURIComponent(biggest.name)}`,
      `#/overview?dump=${dump}`,
    ];
    for (const hash of views) {
      await page.goto(`${baseUrl}/${hash}`);
      await rendered(page);
      // The call tree's first rows open, so deeper frames are laid out too.
      for (const button of await page.locator('.call-tree tbody tr .tree-toggle:not([disabled])').all().then((b) => b.slice(0, 3))) await button.click();
      assert.deepEqual(await page.evaluate(midWordBreaks), [], hash);
    }
  });
}
