"""`memrec view`'s HTTP API (docs/api.md) on a recording of leak_three: the
figures match `memrec report`, bad requests get a 4xx with {"error": …} and
the server stays up, and the page and its scripts are served from the binary."""
from __future__ import annotations

import http.client
import json
import re
import select
import time

import pytest

import memrec_support as support


class ViewServer:
    def __init__(self, proc, port):
        self.proc, self.port = proc, port

    def get(self, path: str) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def json(self, path: str, status: int = 200):
        code, headers, body = self.get(path)
        assert code == status, f"GET {path}: HTTP {code}, {body[:300]!r}"
        assert headers.get("Content-Type", "").startswith("application/json"), headers
        return json.loads(body)


def start_view(build, dats, *args) -> ViewServer:
    argv = [build.memrec, "view", "--port", "0", "--no-progress", *args, *dats]
    proc = support.start(argv, support.clean_env())
    deadline = time.monotonic() + support.TIMEOUT_S
    line = b""
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line += proc.stdout.readline()
            match = re.search(rb"http://127\.0\.0\.1:(\d+)/", line)
            if match:
                return ViewServer(proc, int(match.group(1)))
    support.kill_tree(proc)
    out, err = proc.communicate()
    pytest.fail(f"memrec view printed no URL: {line!r} {out!r} {err.decode(errors='replace')}")


@pytest.fixture(scope="module")
def leak_dump(build, tmp_path_factory):
    run = support.record(build, "leak_three", tmp_path=tmp_path_factory.mktemp("view"))
    assert run.returncode == 0, run.stderr
    assert len(run.dats) == 1
    return run.dats[0]


@pytest.fixture(scope="module")
def server(build, leak_dump):
    if not build.memrec.exists():
        pytest.fail(f"{build.memrec} is missing: build the analyzer (ninja -C {build.root})")
    view = start_view(build, [leak_dump])
    yield view
    support.kill_tree(view.proc)
    view.proc.communicate()


def test_the_dump_list_names_the_recorded_program(server, leak_dump):
    doc = server.json("/api/dumps")
    assert [d["id"] for d in doc["dumps"]] == [0]
    assert doc["dumps"][0]["file"] == str(leak_dump)
    assert doc["dumps"][0]["exe"].endswith("/leak_three")


def test_the_summary_has_the_reports_figures(build, server, leak_dump):
    summary = server.json("/api/dumps/0/summary")
    report = support.only_process(support.report(build, leak_dump))
    assert summary["leaked"] == {"bytes": 3 * 4242, "count": 3}
    for key in ("allocations", "frees", "allocated_bytes", "peak", "duration_ns"):
        assert summary[key] == report[key], key
    assert summary["dump"]["complete"] is True
    assert "events" in summary["counters"]


def test_the_timeline_ends_at_the_leaked_heap(server):
    t = server.json("/api/dumps/0/timeline")
    n = len(t["time_ns"])
    assert 0 < n <= 512
    assert all(len(t[k]) == n for k in ("heap_bytes", "heap_max_bytes", "live_count", "rss_bytes"))
    assert t["time_ns"] == [i * t["bucket_ns"] for i in range(n)]
    assert t["heap_bytes"][-1] == 3 * 4242
    assert t["live_count"][-1] == 3
    assert max(t["heap_max_bytes"]) == server.json("/api/dumps/0/summary")["peak"]["bytes"]


def test_the_leak_list_puts_leak_here_first_with_its_backtrace(server):
    sites = server.json("/api/dumps/0/sites?sort=leaked")
    top = sites["sites"][0]
    assert top["top"]["function"] == "leak_here"
    assert (top["leaked_bytes"], top["leaked_count"]) == (3 * 4242, 3)
    site = server.json(f"/api/dumps/0/sites/{top['id']}")
    functions = [f["function"] for f in site["frames"]]
    assert functions[:2] == ["leak_here", "main"]
    assert site["frames"][0]["file"].endswith("leak_three.c")
    assert site["frames"][0]["line"] > 0


@pytest.mark.parametrize("sort", ["leaked", "count", "peak", "allocated", "allocations", "temporary", "retained"])
def test_every_sort_orders_the_sites_by_its_figure(server, sort):
    field = {"leaked": "leaked_bytes", "count": "leaked_count", "peak": "peak_bytes",
             "allocated": "allocated_bytes", "allocations": "allocations", "temporary": "temporary",
             "retained": "runtime_retained_bytes"}[sort]
    doc = server.json(f"/api/dumps/0/sites?sort={sort}&limit=1000")
    values = [s[field] for s in doc["sites"]]
    assert values == sorted(values, reverse=True)
    assert all(v > 0 for v in values)


def test_offset_and_limit_page_through_the_sites(server):
    everything = server.json("/api/dumps/0/sites?sort=allocations&limit=1000")["sites"]
    page = server.json("/api/dumps/0/sites?sort=allocations&offset=1&limit=1")
    assert page["sites"] == everything[1:2]


def test_the_flamegraph_tree_sums_the_sites_from_the_outermost_frame(server):
    flame = server.json("/api/dumps/0/flame?metric=allocated")
    summary = server.json("/api/dumps/0/summary")
    assert flame["total"] == summary["allocated_bytes"] == flame["root"]["value"]

    def find(node, name, path=()):
        if node["name"] == name:
            return path + (name,), node
        for child in node["children"]:
            assert child["value"] <= node["value"]
            found = find(child, name, path + (node["name"],))
            if found:
                return found
        return None

    path, leak = find(flame["root"], "leak_here")
    assert leak["value"] == 3 * 4242
    assert path[-2:] == ("main", "leak_here")
    leaked = server.json("/api/dumps/0/flame")
    assert leaked["metric"] == "leaked" and leaked["total"] == 3 * 4242


@pytest.mark.parametrize("path,status", [
    ("/api/dumps/0/sites?sort=bogus", 400),
    ("/api/dumps/0/sites?limit=0", 400),
    ("/api/dumps/0/sites?limit=99999", 400),
    ("/api/dumps/0/sites?offset=-1", 400),
    ("/api/dumps/0/sites?limit=1e3", 400),
    ("/api/dumps/0/sites?sort=" + "x" * 5000, 400),
    ("/api/dumps/x/summary", 400),
    ("/api/dumps/99999999999999999999/summary", 400),
    ("/api/dumps/7/summary", 404),
    ("/api/dumps/0/sites/999999", 404),
    ("/api/dumps/0/sites/abc", 400),
    ("/api/dumps/0/flame?metric=bogus", 400),
    ("/api/dumps/0/flame?metric=count", 400),
    ("/api/nothing", 404),
    ("/../../etc/passwd", 400),
    ("/src/../../../etc/passwd", 400),
    ("/%2e%2e/%2e%2e/etc/passwd", 400),
    ("/src/..%2f..%2fetc/passwd", 400),
    ("//etc/passwd", 400),
    ("/etc/passwd", 404),
])
def test_a_bad_request_gets_a_4xx_error_and_the_server_stays_up(server, path, status):
    code, headers, body = server.get(path)
    assert code == status, body[:200]
    assert headers.get("Content-Type", "").startswith("application/json")
    assert isinstance(json.loads(body)["error"], str)
    assert b"root:" not in body
    assert server.json("/api/dumps")["dumps"]  # still serving


def test_the_page_and_its_modules_are_embedded(server):
    code, headers, body = server.get("/")
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    for script in re.findall(rb'src="([^"]+)"', body):
        code, headers, _ = server.get(script.decode())
        assert code == 200 and "javascript" in headers["Content-Type"], script
    code, _, _ = server.get("/vendor/uPlot.esm.js")
    assert code == 200


@pytest.mark.parametrize("module", ["app.js", "api.js", "format.js", "overview.js", "sites.js", "flame.js"])
def test_the_pages_own_scripts_never_parse_markup(server, module):
    code, _, body = server.get(f"/src/{module}")
    assert code == 200
    for sink in (b"innerHTML", b"outerHTML", b"insertAdjacentHTML", b"document.write", b"eval("):
        assert sink not in body, f"{module} uses {sink.decode()}: names from a dump must go in as text"


def test_a_missing_dump_exits_2_without_serving(build, tmp_path):
    run = support.finish(support.start([build.memrec, "view", "--port", "0", tmp_path / "none.dat"],
                                       support.clean_env()), ["memrec", "view"], support.TIMEOUT_S)
    assert run.returncode == 2
    assert "none.dat" in run.stderr


def test_a_bad_port_is_a_usage_error(build, leak_dump):
    run = support.finish(support.start([build.memrec, "view", "--port", "70000", leak_dump], support.clean_env()),
                         ["memrec", "view"], support.TIMEOUT_S)
    assert run.returncode == 1


def test_a_request_naming_another_host_is_refused(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/api/dumps", headers={"Host": "attacker.example:80"})
        response = conn.getresponse()
        assert response.status == 403
        assert "error" in json.loads(response.read())
    finally:
        conn.close()
