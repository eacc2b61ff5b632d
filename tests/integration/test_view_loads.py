"""`memrec view` of several dumps serves each as soon as it is loaded
(docs/api.md, "Several dumps"): the server listens at once, `/api/dumps`
names each dump's state (loading with its bytes, ready, failed with why), a
request about a dump still loading gets a 503 with Retry-After, a file that is
not a dump is listed as failed while the others are served, and a view of
nothing but bad files still exits 2.

A dump stays loading as long as the test wants with the test knob
MEMREC_VIEW_HOLD_DIR (server/view_loads.cpp): its report's pass waits half-way
while DIR/<file name>.hold exists, so no assertion depends on how long a load takes.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import memrec_support as support
from test_view_api import start_view


@pytest.fixture(scope="module")
def dumps(build, tmp_path_factory):
    """Two small dumps (leak_three, diff_leak_base), a larger one
    (churn_sites, 200,000 allocations) and a file that is not a dump."""
    tmp = tmp_path_factory.mktemp("loads")
    out = {}
    for name, args in (("leak_three", []), ("diff_leak_base", []), ("churn_sites", ["200000"])):
        run = support.record(build, name, args, tmp_path=tmp)
        assert run.returncode == 0, run.describe()
        assert len(run.dats) == 1, run.describe()
        out[name] = run.dats[0]
    bad = tmp / "bad.dat"
    bad.write_bytes(b"hello, this is not a dump\n" * 50)
    out["bad"] = bad
    return out


def wait_for(what, fn):
    """Polls `fn` until it gives something truthy: a deadline, not a timing assertion."""
    deadline = time.monotonic() + support.TIMEOUT_S
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"waited in vain for {what}")


def by_file(view):
    return {Path(d["file"]).name: d for d in view.json("/api/dumps")["dumps"]}


def stop(view):
    support.kill_tree(view.proc)
    return view.proc.communicate()


def test_small_dumps_are_served_while_a_larger_one_loads_and_a_bad_file_is_listed_as_failed(build, dumps, tmp_path):
    # given churn_sites' load held half-way, among two small dumps and a bad file
    held = tmp_path / (dumps["churn_sites"].name + ".hold")
    held.touch()
    files = [dumps["churn_sites"], dumps["leak_three"], dumps["bad"], dumps["diff_leak_base"]]
    view = start_view(build, files, env={"MEMREC_VIEW_HOLD_DIR": str(tmp_path)}, served=False)
    try:
        # when the small ones are served
        listed = wait_for("the small dumps served and the large one half-way", lambda: (
            lambda d: d if d[dumps["leak_three"].name]["load"]["state"] == "ready"
            and d[dumps["diff_leak_base"].name]["load"]["state"] == "ready"
            and d[dumps["churn_sites"].name]["load"].get("bytes_read", 0) > 0 else None)(by_file(view)))
        # then the list keeps the order of the command line, with each dump's state
        assert [Path(d["file"]).name for d in view.json("/api/dumps")["dumps"]] == [f.name for f in files]
        big = listed[dumps["churn_sites"].name]
        assert big["state"] == "loading" and big["load"]["state"] == "loading"
        assert 0 < big["load"]["bytes_read"] <= big["load"]["bytes_total"] == dumps["churn_sites"].stat().st_size
        assert 0 < big["load"]["fraction"] < 1
        assert set(big) == {"id", "file", "state", "load"}, "nothing about the process before it is read"
        bad = listed["bad.dat"]
        assert bad["state"] == "failed" and "not a memrec dump" in bad["load"]["error"]
        # the served ones answer as `memrec report` does
        for name in ("leak_three", "diff_leak_base"):
            d = listed[dumps[name].name]
            assert d["state"] == "ended" and d["table"]["state"] == "ready"
            summary = view.json(f"/api/dumps/{d['id']}/summary")
            report = support.only_process(support.report(build, dumps[name]))
            for key in ("allocations", "frees", "allocated_bytes", "peak", "leaked"):
                assert summary[key] == report[key], (name, key)
        # a request about the loading dump: 503, Retry-After and how far
        code, headers, body = view.get(f"/api/dumps/{big['id']}/summary")
        assert code == 503, body
        assert headers.get("Retry-After") == "2"
        answer = json.loads(body)
        assert "is still loading" in answer["error"] and 0 <= answer["loading"] < 100
        for path in ("sites", "flame", "timeline", "instant?at=0"):
            assert view.get(f"/api/dumps/{big['id']}/{path}")[0] == 503, path
        # the bad file's requests say why it did not load
        code, _, body = view.get(f"/api/dumps/{bad['id']}/summary")
        assert code == 500 and "not a memrec dump" in json.loads(body)["error"]
        # pprof's default dump is among the served ones
        assert view.get("/debug/pprof/heap")[0] == 200

        # when the held load goes on
        held.unlink()
        done = wait_for("churn_sites served", lambda: (
            lambda d: d if d["load"]["state"] == "ready" else None)(by_file(view)[dumps["churn_sites"].name]))
        # then it answers as its report does
        summary = view.json(f"/api/dumps/{done['id']}/summary")
        report = support.only_process(support.report(build, dumps["churn_sites"]))
        for key in ("allocations", "frees", "allocated_bytes", "peak", "leaked", "temporary"):
            assert summary[key] == report[key], key
        assert report["allocations"] >= 200_000
    finally:
        _, err = stop(view)
    # and stderr says when each dump was served, and why the bad one was not
    lines = err.decode()
    for name in ("leak_three", "diff_leak_base", "churn_sites"):
        assert f"{dumps[name]} is served after " in lines, lines
    assert f"memrec: {dumps['bad']}: not a memrec dump" in lines


def test_a_view_of_one_bad_file_exits_2_without_serving(build, dumps):
    # given a file that is not a dump, alone
    run = support.memrec_raw(build, ["view", "--port", "0", "--no-progress", str(dumps["bad"])])
    # then memrec view refuses it as before: exit 2, the reason, no URL
    assert run.returncode == 2, run.describe()
    assert "not a memrec dump" in run.stderr
    assert "serving" not in run.stdout


def test_a_view_of_only_bad_files_exits_2(build, dumps, tmp_path):
    # given two files, neither a dump (one missing)
    missing = tmp_path / "missing.dat"
    run = support.memrec_raw(build, ["view", "--port", "0", "--no-progress", str(dumps["bad"]), str(missing)])
    # then there is nothing to serve: exit 2 and each reason
    assert run.returncode == 2, run.describe()
    assert "not a memrec dump" in run.stderr and str(missing) in run.stderr
