"""memrec view --follow on a directory that a service under the preload
writes its dumps into: the API's figures grow between polls while it runs,
the dumps of programs it starts later appear, and once it has exited (or
was killed) its figures are `memrec report`'s of the finished file."""
from __future__ import annotations

import signal
import subprocess
import time

import pytest

import memrec_support as support
from test_view_api import start_view

FIGURES = ("allocations", "frees", "allocated_bytes", "peak", "duration_ns", "leaked")

# growth_service until SIGTERM in the background; on the first line read
# from stdin, fork_child (a parent and a forked child, each its own dump);
# on the second, SIGTERM to the service.
SCRIPT = '"$1" 1000000 sigterm & svc=$!; read go; "$2"; read stop; kill -TERM $svc; wait $svc'


def wait_for(view, predicate, what):
    """Polls /api/dumps until predicate(dumps) gives something; fails after
    support.TIMEOUT_S (a deadline, not an assertion about speed)."""
    deadline = time.monotonic() + support.TIMEOUT_S
    dumps = []
    while time.monotonic() < deadline:
        dumps = view.json("/api/dumps")["dumps"]
        found = predicate(dumps)
        if found:
            return found
        time.sleep(0.1)
    pytest.fail(f"waited in vain for {what}: {dumps}")


def of_exe(dumps, name):
    return [d for d in dumps if d["exe"].endswith("/" + name)]


def start_service(build, out_dir, argv, stdin=subprocess.DEVNULL):
    env = support.clean_env({"LD_PRELOAD": str(build.preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat"),
                             "MEMREC_FLUSH_INTERVAL_MS": "100"})
    return subprocess.Popen([str(a) for a in argv], env=env, cwd=out_dir, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def assert_figures_are_the_reports(build, view, dump):
    summary = view.json(f"/api/dumps/{dump['id']}/summary")
    report = support.only_process(support.report(build, dump["file"]))
    for key in FIGURES:
        assert summary[key] == report[key], key


def test_a_followed_service_grows_spawns_dumps_and_ends_as_its_report(build, tmp_path):
    out_dir = support.fresh_dir(tmp_path, "profiles")
    service = start_service(build, out_dir, ["/bin/sh", "-c", SCRIPT, "sh", build.program("growth_service"),
                                             build.program("fork_child")], stdin=subprocess.PIPE)
    view = start_view(build, [out_dir], "--follow", "--poll-ms", "200")
    try:
        # given the service running, its dump live
        first = wait_for(view, lambda ds: [d for d in of_exe(ds, "growth_service")
                                           if d["state"] == "live" and d["allocations"] > 0], "a live service dump")[0]
        # then its figures grow between two polls
        wait_for(view, lambda ds: [d for d in ds if d["id"] == first["id"] and d["allocations"] > first["allocations"]
                                   and d["duration_ns"] > first["duration_ns"]], "the service's figures to grow")
        assert of_exe(view.json("/api/dumps")["dumps"], "fork_child") == []
        # when it starts fork_child, whose parent and child exit at once
        service.stdin.write(b"go\n")
        service.stdin.flush()
        # then both their dumps appear, and end
        forked = wait_for(view, lambda ds: len(of_exe(ds, "fork_child")) == 2
                          and all(d["state"] == "ended" for d in of_exe(ds, "fork_child")) and of_exe(ds, "fork_child"),
                          "fork_child's two dumps, ended")
        assert {d["pid"] for d in forked} != {first["pid"]}
        # when the service is stopped and exits cleanly
        service.stdin.write(b"stop\n")
        service.stdin.flush()
        assert service.wait(timeout=support.TIMEOUT_S) == 0
        # then its dump is ended and its figures are memrec report's of the file
        ended = wait_for(view, lambda ds: [d for d in ds if d["id"] == first["id"] and d["state"] == "ended"],
                         "the service's dump to end")[0]
        assert ended["incomplete"] is False
        assert_figures_are_the_reports(build, view, ended)
        for d in forked:
            assert_figures_are_the_reports(build, view, d)
    finally:
        support.kill_tree(service)
        support.kill_tree(view.proc)


def test_a_followed_service_killed_is_cut_with_the_figures_of_its_cut_file(build, tmp_path):
    out_dir = support.fresh_dir(tmp_path, "profiles")
    service = start_service(build, out_dir, [build.program("growth_service"), 1000000, "forever"])
    view = start_view(build, [out_dir], "--follow", "--poll-ms", "200")
    try:
        live = wait_for(view, lambda ds: [d for d in ds if d["state"] == "live" and d["allocations"] > 0],
                        "a live dump")[0]
        # when the service is killed
        service.send_signal(signal.SIGKILL)
        service.wait(timeout=support.TIMEOUT_S)
        # then its dump is marked cut once its process is gone
        cut = wait_for(view, lambda ds: [d for d in ds if d["id"] == live["id"] and d["state"] == "cut"],
                       "the dump to be cut")[0]
        assert cut["incomplete"] is True
        assert_figures_are_the_reports(build, view, cut)
    finally:
        support.kill_tree(service)
        support.kill_tree(view.proc)
