// Call sites of two services named by their own code in memrec view: a C++
// service (tests/programs/cpp_service: cache_store, render_response,
// record_request_log) and a Rust tokio one (tests/programs/rust_service,
// built by scripts/build-rust-service: rust_service::cache::cache_entry,
// cache_insert, build_response). Their leaks go through operator new, the
// STL and Rust's allocator, which the list must not name.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeView, openView, program, record, rendered, requireFiles, scratch } from './support.mjs';

const SERVICES = [
  { name: 'cpp_service', binary: program('cpp_service'), leak: /(^|::)cache_store$/ },
  { name: 'rust_service', binary: program('rust_service/rust_service'), leak: /(^|::)cache_entry$/ },
];
const LIBRARY = /^(operator new|alloc::|__rust_|malloc$|std::)/;

const views = [];
after(async () => {
  for (const view of views) await closeView(view);
});

for (const service of SERVICES) {
  test(`${service.name}: the call sites by leaked bytes name its own functions`, async () => {
    requireFiles(service.binary);
    const view = await openView(record(scratch(), service.name, [service.binary]));
    views.push(view);
    const { baseUrl, page } = view;
    await page.goto(`${baseUrl}/#/sites?dump=0&sort=leaked`);
    await rendered(page);
    const first = (await page.locator('table.sites tbody tr.site td.fn .label').allTextContents()).slice(0, 3);
    assert.ok(first.length > 0, 'the service leaks');
    assert.match(first[0], service.leak);
    for (const label of first) assert.doesNotMatch(label, LIBRARY);
  });
}
