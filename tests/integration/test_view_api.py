"""`memrec view`'s HTTP API (docs/api.md) on a recording of leak_three: the
figures match `memrec report`, bad requests get a 4xx with {"error": …} and
the server stays up, and the page and its scripts are served from the binary.
Also: an inlined frame in a backtrace (inline_alloc), and the address it
listens on (--host)."""
from __future__ import annotations

import errno
import http.client
import ipaddress
import json
import re
import select
import socket
import subprocess
import time
from pathlib import Path

import pytest

import memrec_support as support


WEBUI_SRC = support.REPO / "webui" / "src"


class ViewServer:
    def __init__(self, proc, host, port, url_line):
        self.proc, self.host, self.port, self.url_line = proc, host, port, url_line

    def get(self, path: str, timeout: float = 10) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
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


def start_view(build, dats, *args, host="127.0.0.1", env=None, served=True) -> ViewServer:
    """`memrec view --port 0` on `dats`; waits for the URL it prints, which
    must name `host` (in brackets when IPv6), and, with `served`, until no
    dump is still loading (the server listens before it loads them).
    `env`: variables to add."""
    url_host = re.escape(f"[{host}]" if ":" in host else host).encode()
    argv = [build.memrec, "view", "--port", "0", "--no-progress", *args, *dats]
    proc = support.start(argv, support.clean_env(env))
    deadline = time.monotonic() + support.TIMEOUT_S
    line = b""
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line += proc.stdout.readline()
            match = re.search(rb"http://" + url_host + rb":(\d+)/", line)
            if match:
                view = ViewServer(proc, host, int(match.group(1)), line.decode())
                if served:
                    wait_until_served(view, proc, deadline)
                return view
    support.kill_tree(proc)
    out, err = proc.communicate()
    pytest.fail(f"memrec view printed no URL: {line!r} {out!r} {err.decode(errors='replace')}")


def wait_until_served(view, proc, deadline):
    """Until /api/dumps lists no dump as loading (each served or failed)."""
    while time.monotonic() < deadline and proc.poll() is None:
        if not any(d["state"] == "loading" for d in view.json("/api/dumps")["dumps"]):
            return
        time.sleep(0.05)
    support.kill_tree(proc)
    out, err = proc.communicate()
    pytest.fail(f"memrec view did not load its dumps: {out!r} {err.decode(errors='replace')}")


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
    # Every site with a figure is listed whatever the sort, so the rows stay put.
    assert doc["total"] == len(doc["sites"]) == server.json("/api/dumps/0/summary")["sites_total"] == 3


def test_offset_and_limit_page_through_the_sites(server):
    everything = server.json("/api/dumps/0/sites?sort=allocations&limit=1000")["sites"]
    page = server.json("/api/dumps/0/sites?sort=allocations&offset=1&limit=1")
    assert page["sites"] == everything[1:2]


def find_node(node, name, path=()):
    """(names from the root, node) of the first node called `name`, depth
    first; checks on the way that no child outweighs its parent."""
    if node["name"] == name:
        return path + (name,), node
    for child in node["children"]:
        assert child["value"] <= node["value"]
        found = find_node(child, name, path + (node["name"],))
        if found:
            return found
    return None


def test_the_flamegraph_tree_sums_the_sites_from_the_outermost_frame(server):
    flame = server.json("/api/dumps/0/flame?metric=allocated")
    summary = server.json("/api/dumps/0/summary")
    assert flame["total"] == summary["allocated_bytes"] == flame["root"]["value"]

    path, leak = find_node(flame["root"], "leak_here")
    assert leak["value"] == 3 * 4242
    assert path[-2:] == ("main", "leak_here")
    leaked = server.json("/api/dumps/0/flame")
    assert leaked["metric"] == "leaked" and leaked["total"] == 3 * 4242


def test_the_inverted_flamegraph_starts_at_the_allocating_functions(server):
    flame = server.json("/api/dumps/0/flame?metric=allocated&invert=1")
    assert flame["inverted"] is True
    assert flame["total"] == flame["root"]["value"] == server.json("/api/dumps/0/summary")["allocated_bytes"]
    # the root's children are the sites' labels, each over its callers
    top = {c["name"]: c for c in flame["root"]["children"]}
    assert set(top) == {"leak_here", "churn"}
    assert top["leak_here"]["value"] == 3 * 4242
    assert [c["name"] for c in top["leak_here"]["children"]] == ["main"]
    assert top["churn"]["value"] == sum(i * 37 + 1 for i in range(100))
    assert server.json("/api/dumps/0/flame?metric=allocated")["inverted"] is False


def test_the_allocations_flamegraph_counts_calls_not_bytes(server):
    # given leak_three: 3 calls from leak_here, 100 + malloc(0) from churn
    # when the flamegraph is asked for the allocations metric
    flame = server.json("/api/dumps/0/flame?metric=allocations")
    # then every node is a count of calls, and the root is the summary's count
    summary = server.json("/api/dumps/0/summary")
    assert flame["metric"] == "allocations"
    assert flame["total"] == flame["root"]["value"] == summary["allocations"] == 3 + 100 + 1
    assert flame["pruned"] == 0
    path, leak = find_node(flame["root"], "leak_here")
    assert path[-2:] == ("main", "leak_here")
    assert (leak["value"], leak["children"]) == (3, [])
    _, churn = find_node(flame["root"], "churn")
    assert (churn["value"], churn["children"]) == (101, [])
    _, main = find_node(flame["root"], "main")
    assert sorted((c["name"], c["value"]) for c in main["children"]) == [("churn", 101), ("leak_here", 3)]


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
    ("/api/dumps/0/flame?invert=2", 400),
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


def raw_exchange(server, request: bytes) -> bytes:
    """Sends `request` as it is on a fresh connection and returns the first
    answer: its head and Content-Length bytes of body, or what came before
    the server closed the connection (or 10 s passed)."""
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while True:
            head_end = answer.find(b"\r\n\r\n")
            if head_end >= 0:
                length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", answer[:head_end])
                if length and len(answer) >= head_end + 4 + int(length.group(1)):
                    break
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            answer += chunk
    return answer


def status_of(answer: bytes) -> int:
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    assert match, answer[:200]
    return int(match.group(1))


@pytest.mark.parametrize("name,request_bytes,status", [
    ("garbage request line", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http\r\n\r\n", 400),
    ("no version", b"GET /api/dumps\r\n\r\n", 400),
    ("bad percent escape", b"GET /api/dumps/%zz/summary HTTP/1.1\r\nHOST\r\n\r\n", 400),
    ("bad escape in a parameter", b"GET /api/dumps/0/sites?sort=%G1 HTTP/1.1\r\nHOST\r\n\r\n", 400),
    ("POST", b"POST /api/dumps HTTP/1.1\r\nHOST\r\nContent-Length: 2\r\n\r\n{}", 404),
    ("PUT", b"PUT /index.html HTTP/1.1\r\nHOST\r\nContent-Length: 1\r\n\r\nx", 404),
    ("DELETE", b"DELETE /api/dumps/0 HTTP/1.1\r\nHOST\r\n\r\n", 404),
    ("a 100 KB URL", b"GET /api/dumps?" + b"a" * 100_000 + b" HTTP/1.1\r\nHOST\r\n\r\n", 414),
    ("a 100 KB header", b"GET /api/dumps HTTP/1.1\r\nHOST\r\nX-Big: " + b"b" * 100_000 + b"\r\n\r\n", 400),
])
def test_a_malformed_http_request_gets_a_4xx_and_the_server_stays_up(server, name, request_bytes, status):
    # Given the server, when a client sends bytes that are not a well-formed
    # GET (HOST stands for a valid Host header and Connection: close), then
    # the answer is that 4xx with a JSON error, and the server goes on serving.
    host = f"Host: {server.host}:{server.port}\r\nConnection: close\r\n".encode()
    answer = raw_exchange(server, request_bytes.replace(b"HOST\r\n", host))
    assert status_of(answer) == status, (name, answer[:300])
    assert server.proc.poll() is None
    assert server.json("/api/dumps")["dumps"]


def test_the_page_and_its_modules_are_embedded(server):
    code, headers, body = server.get("/")
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    for script in re.findall(rb'src="([^"]+)"', body):
        code, headers, _ = server.get(script.decode())
        assert code == 200 and "javascript" in headers["Content-Type"], script
    code, _, _ = server.get("/vendor/uPlot.esm.js")
    assert code == 200


def test_the_page_preloads_every_module_it_imports(server):
    # The import chain app.js → overview.js → timeline.js → uPlot fetched one
    # level at a time cost ~1.6 s before the first paint; the page lists every
    # module so chromium fetches them at once. A module added to webui/src but
    # not to index.html would bring the waterfall back.
    _, _, body = server.get("/")
    preloaded = set(re.findall(rb'<link rel="modulepreload" href="([^"]+)">', body))
    modules = {f"/src/{n}".encode() for n in webui_src_files() if n.endswith(".js")}
    assert preloaded == modules | {b"/vendor/uPlot.esm.js"}
    for href in preloaded:
        code, headers, _ = server.get(href.decode())
        assert code == 200 and "javascript" in headers["Content-Type"], href


def webui_src_files() -> list[str]:
    return sorted(p.name for p in WEBUI_SRC.iterdir() if p.is_file())


def test_every_file_in_webui_src_is_built_into_memrec():
    # webui/meson.build lists its inputs by hand: a file missing there is
    # still embedded, but a change to it does not rebuild memrec.
    listed = re.findall(r"'src/([^']+)'", (WEBUI_SRC.parent / "meson.build").read_text())
    assert sorted(listed) == webui_src_files()
    assert {"app.js", "api.js", "format.js", "overview.js", "backtrace.js", "style.css"} <= set(listed)


# The DOM and JS APIs that turn a string into markup or code.
MARKUP_SINKS = (b"innerHTML", b"outerHTML", b"insertAdjacentHTML", b"document.write", b"eval(",
                b"new Function", b"DOMParser", b"createContextualFragment", b"srcdoc", b"HTMLUnsafe")


@pytest.mark.parametrize("name", webui_src_files())
def test_the_pages_own_files_never_parse_markup(server, name):
    # given a file of webui/src, as memrec serves it
    code, _, body = server.get(f"/src/{name}")
    assert code == 200
    assert body == (WEBUI_SRC / name).read_bytes(), f"memrec serves another {name}: rebuild (ninja -C build)"
    # then it uses no API that parses a string as markup or code
    for sink in MARKUP_SINKS:
        assert sink not in body, f"{name} uses {sink.decode()}: names from a dump must go in as text"


def test_a_missing_dump_exits_2_without_serving(build, tmp_path):
    run = support.finish(support.start([build.memrec, "view", "--port", "0", tmp_path / "none.dat"],
                                       support.clean_env()), ["memrec", "view"], support.TIMEOUT_S)
    assert run.returncode == 2
    assert "none.dat" in run.stderr


def test_a_bad_port_is_a_usage_error(build, leak_dump):
    run = support.finish(support.start([build.memrec, "view", "--port", "70000", leak_dump], support.clean_env()),
                         ["memrec", "view"], support.TIMEOUT_S)
    assert run.returncode == 1


def test_a_second_view_on_a_busy_port_exits_3_and_the_first_keeps_every_request(build, server, leak_dump):
    # cpp-httplib's default socket options set SO_REUSEPORT, which let a second
    # server bind the same port and take every other request.
    run = support.finish(support.start([build.memrec, "view", "--port", str(server.port), "--no-progress", leak_dump],
                                       support.clean_env()), ["memrec", "view"], support.TIMEOUT_S)
    assert run.returncode == 3
    assert f"cannot listen on 127.0.0.1:{server.port}" in run.stderr
    assert "serving" not in run.stdout
    for _ in range(8):
        assert server.get("/api/dumps")[0] == 200


def test_a_request_naming_another_host_is_refused(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/api/dumps", headers={"Host": "attacker.example:80"})
        response = conn.getresponse()
        assert response.status == 403
        assert "error" in json.loads(response.read())
    finally:
        conn.close()


def listening_addresses(port: int) -> list[tuple[str, str]]:
    """(tcp or tcp6, address) of every socket listening on `port` in this
    network namespace, from /proc/net/tcp{,6} (proc(5)): each address is hex
    in 32-bit words of host byte order (little-endian here), the port big hex."""
    found = []
    for family in ("tcp", "tcp6"):
        for line in open(f"/proc/net/{family}").read().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: TCP_LISTEN
                continue
            raw = b"".join(bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, len(address), 8))
            found.append((family, str(ipaddress.ip_address(raw))))
    return sorted(found)


def connect_error(host: str, port: int) -> int:
    """The errno of a TCP connect to host:port, 0 when it is accepted."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        return sock.connect_ex((host, port))


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_by_default_it_listens_on_127_0_0_1_only(server):
    # given memrec view started without --host
    # then its one listening socket is on 127.0.0.1, which answers
    assert listening_addresses(server.port) == [("tcp", "127.0.0.1")]
    assert server.url_line == f"memrec: serving 1 dump at http://127.0.0.1:{server.port}/ (Ctrl-C stops)\n"
    assert server.json("/api/dumps")["dumps"]
    # and another loopback address, v4 or v6, is refused
    assert connect_error("127.0.0.2", server.port) == errno.ECONNREFUSED
    if has_ipv6_loopback():
        assert connect_error("::1", server.port) == errno.ECONNREFUSED


def test_host_ipv6_loopback_prints_a_bracketed_url_and_answers_there(build, leak_dump):
    if not has_ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (::1)")
    # given memrec view --host ::1
    view = start_view(build, [leak_dump], "--host", "::1", host="::1")
    try:
        # then it prints its URL with the address in brackets
        assert view.url_line == f"memrec: serving 1 dump at http://[::1]:{view.port}/ (Ctrl-C stops)\n"
        # and listens on ::1 only, where the page and the API answer
        assert listening_addresses(view.port) == [("tcp6", "::1")]
        assert [d["id"] for d in view.json("/api/dumps")["dumps"]] == [0]
        code, headers, _ = view.get("/")
        assert code == 200 and headers["Content-Type"].startswith("text/html")
        assert connect_error("127.0.0.1", view.port) == errno.ECONNREFUSED
    finally:
        support.kill_tree(view.proc)
        view.proc.communicate()


def test_host_any_prints_a_loopback_url_and_says_who_else_can_read(build, leak_dump):
    # given memrec view --host 0.0.0.0 (every IPv4 interface)
    view = start_view(build, [leak_dump], "--host", "0.0.0.0", host="127.0.0.1")
    try:
        # then the URL names 127.0.0.1, which a browser opens (0.0.0.0 it may refuse),
        # and the line warns that the dumps are readable from elsewhere
        assert view.url_line == (f"memrec: serving 1 dump at http://127.0.0.1:{view.port}/ (Ctrl-C stops); "
                                 f"listening on every interface: whoever reaches this machine's port {view.port} "
                                 "can read the dumps, their file names, paths and command lines\n")
        assert listening_addresses(view.port) == [("tcp", "0.0.0.0")]
        assert [d["id"] for d in view.json("/api/dumps")["dumps"]] == [0]
    finally:
        support.kill_tree(view.proc)
        view.proc.communicate()


def own_address() -> str | None:
    """An IPv4 address of this machine other than loopback, if it has one."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except OSError:
        return None
    return next((a for a in out if "." in a and not a.startswith("127.")), None)


def test_host_other_than_loopback_says_who_else_can_read(build, leak_dump):
    address = own_address()
    if address is None:
        pytest.skip("this machine has no IPv4 address but loopback")
    # given memrec view --host ADDRESS, one of this machine's own
    view = start_view(build, [leak_dump], "--host", address, host=address)
    try:
        # then the line warns that the dumps are readable from the network
        assert view.url_line == (f"memrec: serving 1 dump at http://{address}:{view.port}/ (Ctrl-C stops); "
                                 f"listening on {address}, not loopback: whoever reaches it on port {view.port} "
                                 "can read the dumps, their file names, paths and command lines\n")
        assert listening_addresses(view.port) == [("tcp", address)]
    finally:
        support.kill_tree(view.proc)
        view.proc.communicate()
    # while another loopback address than 127.0.0.1 is no warning
    view = start_view(build, [leak_dump], "--host", "127.0.0.2", host="127.0.0.2")
    try:
        assert view.url_line == f"memrec: serving 1 dump at http://127.0.0.2:{view.port}/ (Ctrl-C stops)\n"
    finally:
        support.kill_tree(view.proc)
        view.proc.communicate()


INLINE_SOURCE = support.REPO / "tests" / "programs" / "inline_alloc.c"


def source_line(path, text: str) -> int:
    """The 1-based number of the one line of `path` that contains `text`."""
    lines = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} in {path}: lines {lines}"
    return lines[0]


@pytest.fixture(scope="module")
def inline_server(build, tmp_path_factory):
    run = support.record(build, "inline_alloc", tmp_path=tmp_path_factory.mktemp("view-inline"))
    assert run.returncode == 0, run.stderr
    assert len(run.dats) == 1
    view = start_view(build, run.dats)
    yield view
    support.kill_tree(view.proc)
    view.proc.communicate()


def test_an_inlined_frame_is_flagged_in_the_backtrace(inline_server):
    # given inline_alloc: 2 x 3131 leaked from always_inline inlined_alloc()
    # inlined into outer_alloc()
    # when its leaks are listed
    sites = inline_server.json("/api/dumps/0/sites?sort=leaked")
    # then one site leaks, named by its inlined innermost frame
    assert sites["total"] == 1
    top = sites["sites"][0]
    assert (top["leaked_bytes"], top["leaked_count"]) == (2 * 3131, 2)
    assert (top["top"]["function"], top["top"]["inlined"]) == ("inlined_alloc", True)
    # and its backtrace has the inlined frame at the malloc call, then the
    # function it was inlined into at the inlined call's line, then main
    site = inline_server.json(f"/api/dumps/0/sites/{top['id']}")
    frames = [(f["function"], f["inlined"], f["line"]) for f in site["frames"][:3]]
    assert frames == [
        ("inlined_alloc", True, source_line(INLINE_SOURCE, "void* ptr = malloc(size);")),
        ("outer_alloc", False, source_line(INLINE_SOURCE, "return inlined_alloc(kBlockBytes);")),
        ("main", False, source_line(INLINE_SOURCE, "keep(outer_alloc());")),
    ]
    assert [f["file"].rsplit("/", 1)[-1] for f in site["frames"][:3]] == ["inline_alloc.c"] * 3
    assert site["frames"][0]["module"] == site["frames"][1]["module"]
    assert all(f["inlined"] is False for f in site["frames"][1:])


def stop(view: ViewServer) -> str:
    support.kill_tree(view.proc)
    return view.proc.communicate()[1].decode(errors="replace")


def test_the_table_lives_in_unlinked_files_of_the_spill_dir(build, leak_dump, tmp_path):
    """Given --spill-dir DIR, the allocation table's columns are mapped from
    files in DIR that have no name (nothing is left in it), and every answer
    equals that of a table in memory (--spill-dir "")."""
    spill = tmp_path / "spill"
    spill.mkdir()
    spilled = start_view(build, [leak_dump], "--spill-dir", spill)
    in_memory = start_view(build, [leak_dump], "--spill-dir", "")
    try:
        maps = (Path("/proc") / str(spilled.proc.pid) / "maps").read_text()
        assert f"{spill}/" in maps
        assert list(spill.iterdir()) == []
        assert f"{spill}/" not in (Path("/proc") / str(in_memory.proc.pid) / "maps").read_text()
        for path in ("/api/dumps/0/summary", "/api/dumps/0/sites?limit=50", "/api/dumps/0/allocations?limit=100",
                     "/api/dumps/0/flame?metric=allocated", "/api/dumps/0/timeline"):
            assert spilled.json(path) == in_memory.json(path), path
    finally:
        stop(spilled)
        stop(in_memory)


def test_a_spill_dir_that_cannot_hold_files_is_a_warning_not_an_error(build, leak_dump, tmp_path):
    missing = tmp_path / "missing"
    view = start_view(build, [leak_dump], "--spill-dir", missing)
    summary = view.json("/api/dumps/0/summary")
    err = stop(view)
    assert summary["leaked"] == {"bytes": 3 * 4242, "count": 3}
    assert f"memrec: cannot keep allocation tables in {missing} (No such file or directory)" in err
