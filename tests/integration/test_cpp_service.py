"""cpp_service (tests/programs/cpp_service.cpp), a C++ service built -O2 -g so
the STL is inlined into it as in production: 4 threads serve 2000 requests into
a cache that is leaked on purpose. Its leaks are exact by construction, its
string churn and per-thread logs are freed; the report must say so, naming the
program's functions among each site's frames (the STL's inline frames sit
above them), never addresses."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import memrec_support as support

REQUESTS = 2000  # 4 workers x 500
WORKERS = 4
VALUE_BYTES = 1000  # each cache value, a std::vector<char>
KEY_BYTES = 23  # "cache/request/%08d": 22 characters and the terminator
LOG_ENTRY_BYTES = 31  # "request %08d sent %06zu B": 30 characters and the terminator
# libstdc++'s node of unordered_map<string, vector<char>>: the next pointer,
# the key (32), the value (24) and the cached hash (std::hash<string> is not
# "fast", so the node keeps it).
NODE_BYTES = 8 + 32 + 24 + 8
# libstdc++'s std::string and std::vector<std::string> growth: a vector that
# reaches 500 elements by push_back allocates 1, 2, 4, ... 512 strings (32 bytes each).
LOG_VECTOR_GROWTHS = 10
LOG_VECTOR_BYTES = 32 * (2**LOG_VECTOR_GROWTHS - 1)
# The Cache object main allocates (a std::mutex and the map) and never deletes.
CACHE_OBJECT_BYTES = 40 + 56
# render_response's blocks per request: libstdc++ grows a string to the larger
# of what it needs and twice its capacity, so the request number's length never
# shows: the 43-character start (44), "x-request-id: request-" + N (a 15-character
# to_string grown to 30: 31), the response to 86 (87), "x-served-by: ..." + N
# (36), its "\r\n\r\n" (70: 71), the response to 172 (173) and to 344 (345).
RESPONSE_BLOCKS = [44, 31, 87, 36, 71, 173, 345]

SUMMARY = re.compile(r"^served 2000 requests \((\d+) response bytes\), cache 2000 entries in (\d+) buckets\n$")


@pytest.fixture(scope="module")
def service(build, tmp_path_factory):
    """One recorded run of cpp_service and its report, shared by the tests below."""
    run = support.record(build, "cpp_service", tmp_path=tmp_path_factory.mktemp("cpp_service"))
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.describe()
    rep = support.only_process(support.report(build, run.dats[0]))
    return run, rep


def sites_naming(rep: dict, function: str) -> list[dict]:
    """Every site of the report with `function` in one of its frames (inlined or not)."""
    sites = [support.resolved_site(rep, i) for i in range(len(rep["sites"]))]
    return [s for s in sites if any(function in (f.get("function") or "") for f in s["frames"])]


def buckets_of(run: support.Run) -> int:
    match = SUMMARY.match(run.stdout)
    assert match, run.describe()
    return int(match.group(2))


def test_the_service_prints_and_exits_as_it_does_without_memrec(build, service, run_plain):
    # given the service run once under the preload and once without it
    recorded, _ = service
    plain = run_plain("cpp_service")
    # then both served every request and printed the same summary, exit 0
    assert plain.returncode == 0, plain.describe()
    assert SUMMARY.match(plain.stdout), plain.describe()
    assert recorded.stdout == plain.stdout
    assert recorded.returncode == plain.returncode == 0
    assert support.memrec_lines(recorded.stderr) == [], recorded.describe()


def test_cache_store_leaks_exactly_the_cache(service):
    # given 2000 requests, each storing one key and one 1000-byte value, never erased
    run, rep = service
    leaks = sorted((s["leaked_count"], s["leaked_bytes"]) for s in sites_naming(rep, "cache_store")
                   if s["leaked_count"] > 0)
    # then cache_store's stacks leak the values, the keys and the map's nodes, one
    # site each, and the map's last bucket array (8 bytes a bucket)
    assert leaks == sorted([
        (REQUESTS, REQUESTS * VALUE_BYTES),
        (REQUESTS, REQUESTS * KEY_BYTES),
        (REQUESTS, REQUESTS * NODE_BYTES),
        (1, 8 * buckets_of(run)),
    ])


def test_nothing_but_the_cache_leaks(service):
    # given the cache (made by main, filled by cache_store) is the only thing the service keeps
    run, rep = service
    cache_bytes = REQUESTS * (VALUE_BYTES + KEY_BYTES + NODE_BYTES) + 8 * buckets_of(run)
    # then the process leaks exactly it, and the runtime's own blocks are not counted as leaks
    assert rep["leaked"] == {"count": 3 * REQUESTS + 1 + 1, "bytes": cache_bytes + CACHE_OBJECT_BYTES}


def test_render_response_churns_strings_and_leaks_none(service):
    # given a response string built per request by concatenation, appends and std::to_string
    _, rep = service
    sites = sites_naming(rep, "render_response")
    # then its sites make exactly the same blocks for every request, and free them all
    assert sorted((s["allocations"], s["allocated_bytes"]) for s in sites) == \
        sorted((REQUESTS, REQUESTS * size) for size in RESPONSE_BLOCKS)
    assert sum(s["leaked_count"] for s in sites) == 0


def test_record_request_log_grows_per_thread_logs_that_are_freed(service):
    # given one 31-byte entry per request pushed onto its thread's vector, freed when the thread ends
    _, rep = service
    sites = sites_naming(rep, "record_request_log")
    # then the entries and each thread's 10 vector growths are its allocations, exactly, and none leaks
    assert sum(s["allocations"] for s in sites) == REQUESTS + WORKERS * LOG_VECTOR_GROWTHS
    assert sum(s["allocated_bytes"] for s in sites) == REQUESTS * LOG_ENTRY_BYTES + WORKERS * LOG_VECTOR_BYTES
    assert sum(s["leaked_count"] for s in sites) == 0


def test_the_top_leak_is_labelled_with_cache_store(service):
    # given the report's top leaked site, the cache's values
    _, rep = service
    top = support.ranked_sites(rep, "leaked")[0]
    # then its label is the program's own frame, cache_store in cpp_service.cpp, not the STL's inline frames
    label = top["frames"][top["label_frame"]]
    assert "cache_store" in label["function"]
    assert label["file"].endswith("cpp_service.cpp")
    assert top["label"] == "(anonymous namespace)::cache_store"
    assert top["via"] == "vector::vector"


def test_top_sites_name_the_services_functions_not_the_standard_library(service):
    # given the sites ranked by allocated bytes
    _, rep = service
    labels = [s["label"] for s in support.ranked_sites(rep, "allocated")[:8]]
    # then each is one of the service's functions; none is operator new or the STL
    assert all(label.startswith("(anonymous namespace)::") or label == "main" for label in labels), labels
    assert {"(anonymous namespace)::cache_store", "(anonymous namespace)::render_response",
            "(anonymous namespace)::record_request_log"} <= set(labels)


@pytest.mark.skipif(shutil.which("go") is None, reason="go (Debian golang-go) is not installed")
def test_go_tool_pprof_names_the_program_and_its_allocating_functions_flat(build, service, tmp_path):
    # given the service exported as pprof
    run, rep = service
    out = tmp_path / "heap.pb.gz"
    export = support.memrec_raw(build, ["export", run.dats[0], "--format", "pprof", "-o", out])
    assert export.returncode == 0, export.describe()
    env = support.clean_env({"HOME": str(tmp_path), "GOCACHE": str(tmp_path / "gocache")})
    # when go tool pprof lists the bytes allocated
    top = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", "-sample_index=alloc_space", "-unit=B",
                          str(out)], capture_output=True, text=True, timeout=120, env=env, check=True).stdout
    # then the profile is the program's (its first mapping), and the program's
    # own functions hold the bytes as flat: no operator new, no STL frame is a leaf
    assert re.search(r"^File: cpp_service$", top, re.MULTILINE), top
    flat = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s*(\d+)B\s+\S+\s+\S+\s+\S+\s+\S+\s+(.+)$", top,
                                                               re.MULTILINE)}
    leaves = {name.replace("(anonymous namespace)::", "").split("(")[0]: value for name, value in flat.items()
              if value > 0}
    assert {"cache_store", "render_response", "record_request_log"} <= set(leaves), top
    assert not [n for n in leaves if "operator new" in n or n.startswith("std::")], top
    assert leaves["cache_store"] >= REQUESTS * (VALUE_BYTES + KEY_BYTES + NODE_BYTES)
