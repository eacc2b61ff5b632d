"""memrec view answers Go's net/http/pprof paths: /debug/pprof/heap and
/debug/pprof/allocs, each a gzipped profile.proto with the sample types of
`memrec export --format pprof`, read here by `go tool pprof` over HTTP as a
fleet profiler would. timed_phases: phase_one holds 4 x 10000 from 0 to 600
ms, phase_two leaks 2 x 50000 at 300 ms, phase_three 3 x 7000 at 600 ms.
fork_child: the parent leaks 1234 + 2 x 3000, its child 3 x 2000."""
import gzip
import re
import shutil
import subprocess
import time

import pytest

import memrec_support as support
from test_view_api import start_view


@pytest.fixture(scope="module")
def phases(build, tmp_path_factory):
    run = support.record(build, "timed_phases", tmp_path=tmp_path_factory.mktemp("pprof_phases"))
    assert run.returncode == 0, run.describe()
    return run.dats[0]


@pytest.fixture(scope="module")
def view(build, phases):
    server = start_view(build, [phases])
    deadline = time.monotonic() + support.TIMEOUT_S
    while server.json("/api/dumps")["dumps"][0]["table"]["state"] != "ready":
        assert time.monotonic() < deadline, "the allocation table was not built"
        time.sleep(0.1)
    yield server
    stop(server)


def stop(server):
    support.kill_tree(server.proc)
    server.proc.communicate()


def pprof_top(tmp_path, url: str, sample_index: str) -> dict[str, int]:
    """go tool pprof -top over HTTP: each function's flat value."""
    env = support.clean_env({"HOME": str(tmp_path), "PPROF_TMPDIR": str(tmp_path / "pprof"),
                             "GOCACHE": str(tmp_path / "gocache")})
    top = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", f"-sample_index={sample_index}",
                          "-unit=B", url], capture_output=True, text=True, timeout=120, env=env, check=True).stdout
    flat = {}
    for line in top.splitlines():
        match = re.match(r"\s*(-?\d+)B?\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.+)$", line)
        if match and match.group(1) != "0":
            flat[support.short_name(match.group(2))] = int(match.group(1))
    return flat


needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go (Debian golang-go) is not installed")


def test_the_heap_profile_is_the_exports_file(build, view, phases, tmp_path):
    # when the heap profile is fetched without parameters
    code, headers, body = view.get("/debug/pprof/heap")
    # then it is memrec export --format pprof's file, byte for byte
    assert code == 200 and headers["Content-Type"] == "application/octet-stream", (code, headers)
    out = tmp_path / "cli.pb.gz"
    run = support.memrec_raw(build, ["export", "--format", "pprof", "-o", str(out), str(phases)])
    assert run.returncode == 0, run.describe()
    assert body == out.read_bytes()


@needs_go
def test_go_tool_pprof_reads_the_heap_at_an_instant(view, tmp_path):
    url = f"http://127.0.0.1:{view.port}/debug/pprof/heap?at=450ms"
    # then at 450 ms phase_one holds 4 x 10000 and phase_two 2 x 50000, nothing else yet
    assert pprof_top(tmp_path, url, "inuse_space") == {"phase_one": 40000, "phase_two": 100000}
    objects = pprof_top(tmp_path, url, "inuse_objects")
    assert (objects["phase_one"], objects["phase_two"]) == (4, 2)
    # and at the end phase_one's blocks are gone and phase_three's leak is there
    at_end = pprof_top(tmp_path, f"http://127.0.0.1:{view.port}/debug/pprof/heap", "inuse_space")
    assert "phase_one" not in at_end and (at_end["phase_two"], at_end["phase_three"]) == (100000, 21000), at_end


@needs_go
def test_allocs_defaults_to_allocated_bytes_and_seconds_is_a_delta(view, tmp_path):
    # the allocs profile's default sample type is alloc_space, as Go's
    code, _, body = view.get("/debug/pprof/allocs")
    assert code == 200
    assert b"alloc_space" in gzip.decompress(body)
    # when the second before 800 ms is asked (phase_one freed at 600 ms, phase_three allocated then)
    url = f"http://127.0.0.1:{view.port}/debug/pprof/allocs?seconds=1&at=800ms"
    allocated = pprof_top(tmp_path, url, "alloc_space")
    inuse = pprof_top(tmp_path, url, "inuse_space")
    # then the allocations are those of [0, 800 ms] and in-use is the change over it, a freed block negative
    assert (allocated["phase_one"], allocated["phase_two"], allocated["phase_three"]) == (40000, 100000, 21000)
    assert (inuse.get("phase_one"), inuse["phase_two"], inuse["phase_three"]) == (None, 100000, 21000), inuse


def test_seconds_subtracts_what_was_live_before(build, tmp_path):
    # given growth_service's 3 s, whose cache keeps 1,000 bytes every 10 ms
    run = support.record(build, "growth_service", [300, "exit"], tmp_path=tmp_path)
    assert run.returncode == 0, run.describe()
    server = start_view(build, run.dats)
    try:
        deadline = time.monotonic() + support.TIMEOUT_S
        while True:
            code, _, body = server.get("/debug/pprof/heap?seconds=1&at=2500ms")
            if code != 503:
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert code == 200, body
        # then the cache's in-use change over [1.5 s, 2.5 s] is what it allocated then (it frees nothing),
        # as memrec report counts that range
        rep = support.only_process(support.report(build, run.dats[0], args=["--from", "1.5s", "--to", "2.5s"]))
        allocated = support.sites_by_function(build, rep, "allocated", ["allocated_bytes"])["cache_insert"][0]
        if shutil.which("go") is not None:
            url = f"http://127.0.0.1:{server.port}/debug/pprof/heap?seconds=1&at=2500ms"
            assert pprof_top(tmp_path, url, "inuse_space")["cache_insert"] == allocated
            assert pprof_top(tmp_path, url, "alloc_space")["cache_insert"] == allocated
        assert 95_000 <= allocated <= 105_000
        # and over the last second, in which the shutdown freed the whole cache, its change is negative:
        # minus what it held a second before the end
        if shutil.which("go") is not None:
            ns = support.only_process(support.report(build, run.dats[0]))["duration_ns"] - 1_000_000_000
            held = support.only_process(support.report(build, run.dats[0], args=["--to", f"{ns}ns"]))
            before = support.leaked_by_function(build, held)["cache_insert"][1]
            url = f"http://127.0.0.1:{server.port}/debug/pprof/heap?seconds=1"
            assert pprof_top(tmp_path, url, "inuse_space")["cache_insert"] == -before < 0
    finally:
        stop(server)


def test_the_root_process_is_the_default(build, tmp_path):
    run = support.record(build, "fork_child", tmp_path=tmp_path)
    assert run.returncode == 0 and len(run.dats) == 2, run.describe()
    server = start_view(build, run.dats)
    try:
        dumps = server.json("/api/dumps")["dumps"]
        parent = next(d for d in dumps if d["ppid"] not in [e["pid"] for e in dumps])
        child = next(d for d in dumps if d is not parent)
        code, _, body = server.get("/debug/pprof/heap")
        assert code == 200 and b"parent_leak" in gzip.decompress(body) and b"child_leak" not in gzip.decompress(body)
        code, _, body = server.get(f"/debug/pprof/heap?dump={child['id']}")
        assert code == 200 and b"child_leak" in gzip.decompress(body)
        assert parent["id"] != child["id"]
    finally:
        stop(server)


@pytest.mark.parametrize("query,status,message", [
    ("?at=mark:nope", 400, "no marker 'nope'"),
    ("?at=soon", 400, "at: "),
    ("?seconds=0", 400, "seconds must be a whole number of seconds, at least 1."),
    ("?seconds=1.5", 400, "seconds must be a whole number"),
    ("?dump=7", 404, ""),
])
def test_bad_parameters_say_why(view, query, status, message):
    body = view.json(f"/debug/pprof/heap{query}", status=status)
    assert message in body["error"], body


def test_other_profiles_are_not_served(view):
    body = view.json("/debug/pprof/profile", status=404)
    assert "heap" in body["error"] and "allocs" in body["error"], body
