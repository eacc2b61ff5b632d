"""`memrec report --retained A..B [--at C]`: the blocks allocated from A to B
and still live at C (default B), by call site: what a phase or a load test
left behind. tests/programs/timed_phases holds 4 x 10,000 bytes from 0 ms to
600 ms (phase_one) and leaks 2 x 50,000 at 300 ms (phase_two); growth_service
keeps 1,000 bytes every 10 ms in its cache until it is killed."""
import signal

import memrec_support as support
from test_growth import record_service


def retained_by_function(build, rep) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for s in rep["retained"]["sites"]:
        name = support.site_function(build, support.resolved_site(rep, s["site"]))
        if name is not None:
            out[name] = (s["bytes"], s["count"])
    return out


def test_retained_names_what_a_phase_left_live(build, record):
    run = record("timed_phases")
    assert run.returncode == 0, run.describe()
    dat = run.dats[0]
    # phase one's blocks are live at 350 ms, freed by 700 ms
    rep = support.only_process(support.report(build, dat, args=["--retained", "0..250ms", "--at", "350ms"]))
    assert retained_by_function(build, rep) == {"phase_one": (40000, 4)}
    assert (rep["retained"]["from_ns"], rep["retained"]["to_ns"], rep["retained"]["at_ns"]) == (0, 250_000_000,
                                                                                                 350_000_000)
    rep = support.only_process(support.report(build, dat, args=["--retained", "0..250ms", "--at", "700ms"]))
    assert "phase_one" not in retained_by_function(build, rep)
    # phase two's leak, at the span's end (the default) and at the recording's end
    for extra in ([], ["--at", "5s"]):
        rep = support.only_process(support.report(build, dat, args=["--retained", "250ms..550ms", *extra]))
        assert retained_by_function(build, rep) == {"phase_two": (100000, 2)}
        assert (rep["retained"]["bytes"], rep["retained"]["count"]) == (100000, 2)
    # the text says the span, the instant and the total
    text = support.memrec_raw(build, ["report", "--no-progress", "--retained", "250ms..550ms", dat])
    assert text.returncode == 0, text.describe()
    assert "allocated from 0.250 s to 0.550 s and still live at 0.550 s: 97.7 KiB in 2 blocks" in text.stdout


def test_retained_on_a_cut_dump_reads_to_its_last_frame(build, tmp_path):
    # given the service SIGKILLed after 3 s (its dump cut at the last flushed frame)
    run = record_service(build, tmp_path, "forever")
    assert run.returncode == -signal.SIGKILL and len(run.dats) == 1, run.describe()
    dat = run.dats[0]
    # when asked what the cache kept from [1 s, 2 s] at 2.5 s
    rep = support.only_process(support.report(build, dat, args=["--retained", "1s..2s", "--at", "2.5s"]))
    kept = retained_by_function(build, rep)["cache_insert"]
    # then it is every cache entry allocated in that second, as the windowed report counts them
    window = support.only_process(support.report(build, dat, args=["--from", "1s", "--to", "2s"]))
    allocated = support.sites_by_function(build, window, "allocated", ["allocated_bytes", "allocations"])
    assert kept == allocated["cache_insert"], (kept, allocated["cache_insert"])
    assert 90_000 <= kept[0] <= 110_000, kept


def test_retained_usage_errors(build, record):
    run = record("timed_phases")
    for args, message in ((["--at", "1s"], "--at applies to --retained only"),
                          (["--retained", "2s"], "--retained takes a span FROM..TO"),
                          (["--retained", "2s..1s"], "--retained ends before it starts"),
                          (["--retained", "1s..2s", "--at", "500ms"], "--at is before the --retained span starts"),
                          (["--retained", "soon..2s"], "--retained")):
        bad = support.memrec_raw(build, ["report", *args, run.dats[0]])
        assert bad.returncode == 1 and message in bad.stderr, bad.describe()


def test_retained_between_markers_is_the_phase_the_program_kept(build, record):
    # given marker_phases: 10 x 1000, marker a, 7 x 3000, marker b, 5 x 5000, marker b again; all kept
    run = record("marker_phases")
    assert run.returncode == 0 and "memrec_mark found" in run.stdout, run.describe()
    # when asked what was allocated between the markers and is still live at the last one
    rep = support.only_process(support.report(build, run.dats[0],
                                              args=["--retained", "mark:a..mark:b", "--at", "mark:b#2"]))
    # then it is exactly phase two
    assert retained_by_function(build, rep) == {"phase_two": (21000, 7)}
    assert (rep["retained"]["bytes"], rep["retained"]["count"]) == (21000, 7)
    # and an unknown marker is a usage error naming the dump's labels
    bad = support.memrec_raw(build, ["report", "--retained", "mark:a..mark:nope", run.dats[0]])
    assert bad.returncode == 1 and "nope" in bad.stderr, bad.describe()
