"""A Rust tokio service under the preload (tests/programs/rust_service, built
by scripts/build-rust-service): its cache leak is counted exactly at the
functions that make it, and those functions are named demangled, once with
Rust's legacy symbol mangling and once with v0. Stopped by SIGTERM, it shuts
down gracefully under the preload as without it."""
import re
import signal
from pathlib import Path

import pytest

import memrec_support as support
from memrec_support import only_process

# What src/main.rs, src/cache.rs and src/client.rs make exact.
CONNECTIONS = 4
REQUESTS = CONNECTIONS * 500
ENTRY_BYTES = 4096
KEY_BYTES = len("key-0-0000")
# A HashMap<String, Vec<u8>> slot: two 24-byte (pointer, capacity, length) triples.
SLOT_BYTES = 48

BINARIES = ("rust_service", "rust_service_v0")
CARGO = Path("/usr/bin/cargo")
# A Rust symbol the demangler left alone: legacy `_ZN…17h<hash>E`, v0 `_R…`,
# or a legacy name demangled with its hash kept.
MANGLED = re.compile(r"^_ZN|^_R[A-Z]|17h[0-9a-f]{16}E|::h[0-9a-f]{16}$")


def service_binary(build: support.Build, name: str) -> Path:
    path = build.programs_dir / "rust_service" / name
    if not path.exists():
        if not CARGO.exists():
            pytest.skip(f"{CARGO} is not installed (scripts/setup installs it), so {name} was not built")
        pytest.fail(f"{path} is missing: run scripts/build-rust-service {build.root}")
    return path


@pytest.fixture(scope="module", params=BINARIES)
def service(request, build, preload, memrec_cli, tmp_path_factory):
    """(Run, process report) of one recording of a build of the service."""
    program = service_binary(build, request.param)
    run = support.record(build, program, tmp_path=tmp_path_factory.mktemp(request.param))
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.describe()
    return run, only_process(support.report(build, run.dats[0]))


def rust_function(frame) -> str | None:
    """`rust_service::cache::cache_entry` -> `cache_entry`."""
    return frame["function"].rsplit("::", 1)[-1] if frame.get("function") else None


def sites_through(rep, function: str) -> list[dict]:
    """Every site with `function` somewhere on its stack, once each."""
    sites = (support.resolved_site(rep, i) for i in range(len(rep["sites"])))
    return [s for s in sites if any(rust_function(f) == function for f in s["frames"])]


def totals(sites, *fields: str) -> tuple[int, ...]:
    return tuple(sum(s[field] for s in sites) for field in fields)


def test_service_serves_every_request_and_exits_cleanly(service):
    # given the service recorded under the preload
    run, rep = service
    # then it served every request, said so, and the dump ended cleanly
    assert run.stdout.splitlines()[-1] == f"served {REQUESTS} requests, cache {REQUESTS} entries"
    assert rep["dump"]["complete"] is True
    assert rep["threads"] >= 3, "main and two tokio workers"


def test_cache_values_leak_one_block_of_entry_bytes_per_request(service):
    # given the cache, which keeps one ENTRY_BYTES value per request forever
    _, rep = service
    # then the sites through cache_entry leak exactly those blocks
    assert totals(sites_through(rep, "cache_entry"), "leaked_count", "leaked_bytes") == \
        (REQUESTS, REQUESTS * ENTRY_BYTES)
    # and those through cache_insert add the map's one table, a slot per entry at least
    count, size = totals(sites_through(rep, "cache_insert"), "leaked_count", "leaked_bytes")
    assert count == REQUESTS + 1
    assert size >= REQUESTS * (ENTRY_BYTES + SLOT_BYTES)
    # and the keys it keeps leak from parse_key, one String each
    assert totals(sites_through(rep, "parse_key"), "leaked_count", "leaked_bytes") == \
        (REQUESTS, REQUESTS * KEY_BYTES)


def test_per_request_churn_and_session_boxes_are_freed(service):
    # given build_response's Strings, one Box per connection and one Arc
    _, rep = service
    # then each allocates what the program does and leaks nothing
    churn = sites_through(rep, "build_response")
    assert totals(churn, "leaked_count") == (0,)
    assert totals(churn, "allocations")[0] >= 5 * REQUESTS, "several Strings and a Vec per request"
    assert totals(sites_through(rep, "new_session"), "allocations", "leaked_count") == (CONNECTIONS, 0)
    assert totals(sites_through(rep, "new_stats"), "allocations", "leaked_count") == (1, 0)


def test_frames_are_demangled_with_their_source_lines(service):
    # given the report's frame table
    _, rep = service
    functions = {f["function"] for f in rep["frames"] if f.get("function")}
    # then no Rust symbol is left mangled or carries its hash
    assert not [name for name in functions if MANGLED.search(name)]
    # and the service's own functions are named by their paths, with file and line
    for path in ("rust_service::cache::cache_insert", "rust_service::cache::cache_entry",
                 "rust_service::server::build_response", "rust_service::server::parse_key",
                 "rust_service::server::new_session", "rust_service::new_stats"):
        frames = [f for f in rep["frames"] if f.get("function") == path]
        assert frames, f"no frame names {path}"
        assert all(f["file"] and f["file"].endswith(".rs") and f["line"] > 0 for f in frames), frames


def test_top_sites_are_labelled_by_the_services_own_functions(service):
    # given the sites ranked by leaked and by allocated bytes
    _, rep = service
    for ranking in ("leaked", "allocated"):
        for site in support.ranked_sites(rep, ranking)[:5]:
            # then each is labelled by a frame of the service or of tokio (never
            # alloc::alloc::alloc, RawVec or hashbrown), with the std frames
            # folded under it, and says what it went through
            label = site["frames"][site["label_frame"]]
            assert label["function"].startswith(("rust_service::", "tokio::")), (ranking, site["label"])
            assert not site["label"].startswith(("alloc::", "core::", "std::", "hashbrown::")), site["label"]
            assert site["label_frame"] > 0 and site["via"], site
    # and the largest leak is the cache's values, at cache_entry, via vec::from_elem
    top = support.resolved_site(rep, rep["rankings"]["leaked"][0])
    assert top["label"] == "rust_service::cache::cache_entry"
    assert top["via"] == "vec::from_elem"
    assert top["frames"][top["label_frame"]]["file"].endswith("cache.rs")


def test_grouping_by_label_merges_the_paths_tokio_polled_the_cache_through(build, service):
    # given the cache's values, one line reached through more than one call
    # path (tokio polls a task from its worker loop or from block_on)
    run, _ = service
    grouped = only_process(support.report(build, run.dats[0], args=["--group", "label"]))
    # then grouped by label they are one site with every value
    sites = [s for s in grouped["sites"] if s["label"] == "rust_service::cache::cache_entry"]
    assert len(sites) == 1
    assert (sites[0]["leaked_count"], sites[0]["leaked_bytes"]) == (REQUESTS, REQUESTS * ENTRY_BYTES)


def run_until_sigterm(build: support.Build, program: Path, env: dict) -> support.Run:
    """Starts `program until-sigterm`, waits for its ready line, stops it with
    SIGTERM as a supervisor would, and returns the Run."""
    argv = [str(program), "until-sigterm"]
    proc = support.start(argv, support.clean_env(env))
    ready = proc.stdout.readline().decode()
    assert ready == "ready: waiting for SIGTERM\n", ready
    proc.send_signal(signal.SIGTERM)
    run = support.finish(proc, argv, support.TIMEOUT_S)
    run.stdout = ready + run.stdout
    return run


def test_sigterm_shuts_the_service_down_gracefully_as_without_the_preload(build, preload, tmp_path):
    # given the service handling SIGTERM with tokio's signal support, which
    # calls the handler it replaced: the preload's own
    program = service_binary(build, "rust_service")
    plain = run_until_sigterm(build, program, {})
    # when it is stopped with SIGTERM under the preload
    out = tmp_path / "out"
    out.mkdir()
    run = run_until_sigterm(build, program, {"LD_PRELOAD": str(build.preload),
                                             "MEMREC_OUTPUT": str(out / "%e.%p.dat")})
    # then it shuts down gracefully, exactly as without the preload
    assert (plain.returncode, plain.stdout) == (0, "ready: waiting for SIGTERM\nSIGTERM: shutting down gracefully\n"
                                                   f"served {REQUESTS} requests, cache {REQUESTS} entries\n")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    # and its dump ended cleanly with the cache's leak, exact
    (dat,) = sorted(out.iterdir())
    rep = only_process(support.report(build, dat))
    assert rep["dump"]["complete"] is True and rep["dump"]["clean_end"] is True
    assert totals(sites_through(rep, "cache_entry"), "leaked_count", "leaked_bytes") == \
        (REQUESTS, REQUESTS * ENTRY_BYTES)
