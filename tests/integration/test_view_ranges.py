"""`memrec view`'s range and instant API (docs/api.md) on recordings of the test
programs: a range's figures are `memrec report --from --to`'s, instants and
allocation rows have known values, downloads are `memrec export`'s files."""
from __future__ import annotations

import gzip
import json
import time
import urllib.parse

import pytest

import memrec_support as support
from test_view_api import start_view

MS = 1_000_000


def recording(build, tmp_path_factory, program, args=()):
    run = support.record(build, program, args, tmp_path=tmp_path_factory.mktemp(program))
    assert run.returncode == 0, run.stderr
    assert len(run.dats) == 1, run.dats
    return run.dats[0]


@pytest.fixture(scope="module")
def dumps(build, tmp_path_factory):
    names = ["timed_phases", "peak_known", "realloc_chain", "toggle", "many_threads", "leak_three",
             "diff_leak_base", "diff_leak_extra"]
    return {name: recording(build, tmp_path_factory, name) for name in names}


@pytest.fixture(scope="module")
def view(build, dumps):
    server = start_view(build, list(dumps.values()))
    server.ids = {name: i for i, name in enumerate(dumps)}
    yield server
    support.kill_tree(server.proc)
    server.proc.communicate()


def api(view, name, endpoint, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return view.json(f"/api/dumps/{view.ids[name]}/{endpoint}" + (f"?{query}" if query else ""))


def labels_and_figures(sites):
    fields = ("allocations", "allocated_bytes", "temporary", "leaked_bytes", "leaked_count",
              "runtime_retained_bytes", "runtime_retained_count", "peak_bytes")
    # The view's `top` is the site's label frame, as the report's label_frame names it.
    return sorted((s["top"]["label"] if "top" in s else s["frames"][s["label_frame"]]["label"],
                   *(s[f] for f in fields)) for s in sites)


# The figure each sort ranks by (docs/api.md): the view lists every site with a
# figure, the report's ranking only those whose own figure is not zero.
SORT_FIGURE = {
    "leaked": lambda s: 0 if s["runtime"] else s["leaked_bytes"],
    "peak": lambda s: s["peak_bytes"],
    "allocated": lambda s: s["allocated_bytes"],
    "allocations": lambda s: s["allocations"],
    "temporary": lambda s: s["temporary"],
    "retained": lambda s: s["runtime_retained_bytes"] if s["runtime"] else 0,
}


def ranked_part(rows, sort):
    figures = [SORT_FIGURE[sort](s) for s in rows]
    # The rows with a zero figure come last, so the ranking is a prefix.
    assert figures == sorted(figures, reverse=True), sort
    return [s for s, f in zip(rows, figures) if f != 0]


def duration(view, name):
    return api(view, name, "summary")["duration_ns"]


RANGES = [(0, None), (0, 300 * MS), (250 * MS, 650 * MS), (350 * MS, 599 * MS), (600 * MS, None), (1, 1)]


@pytest.mark.parametrize("start,end", RANGES)
def test_a_ranges_summary_and_sites_are_the_reports(build, view, dumps, start, end):
    # Given timed_phases, whose heap changes at 0, 300 and 600 ms
    end = duration(view, "timed_phases") if end is None else end
    # When the view and the report are asked for the same range
    summary = api(view, "timed_phases", "summary", **{"from": start, "to": end})
    report = support.only_process(support.report(build, dumps["timed_phases"],
                                                 args=["--from", f"{start}ns", "--to", f"{end}ns"]))
    # Then every figure is the same
    for key in ("window", "allocations", "frees", "allocated_bytes", "temporary", "peak", "leaked",
                "runtime_retained", "unmatched_frees", "replaced_blocks", "duration_ns", "threads", "histograms"):
        assert summary[key] == report[key], key
    assert summary["range"] == {"from_ns": start, "to_ns": end}
    for ranking, sort in (("leaked", "leaked"), ("peak", "peak"), ("allocated", "allocated"),
                          ("allocations", "allocations"), ("temporary", "temporary"),
                          ("runtime_retained", "retained")):
        answer = api(view, "timed_phases", "sites", sort=sort, limit=1000, **{"from": start, "to": end})
        assert answer["total"] == summary["sites_total"], ranking
        assert labels_and_figures(ranked_part(answer["sites"], sort)) == labels_and_figures(
            support.ranked_sites(report, ranking)), ranking


def test_the_whole_runs_summary_is_the_reports_on_every_program(build, view, dumps):
    for name, dat in dumps.items():
        summary = api(view, name, "summary")
        report = support.only_process(support.report(build, dat))
        # The whole run's figures are the report's own; a range one ns longer
        # is computed from the allocation table, and must agree.
        longer = {"from": 0, "to": summary["duration_ns"] + 1}
        computed = api(view, name, "summary", **longer)
        for key in ("allocations", "frees", "allocated_bytes", "temporary", "peak", "leaked",
                    "runtime_retained", "unmatched_frees", "replaced_blocks", "histograms"):
            assert summary[key] == report[key], (name, key)
            assert computed[key] == report[key], (name, key)
        # Every allocation is in one size class, and freed in one lifetime class or not at all.
        h = report["histograms"]
        assert sum(c["count"] for c in h["sizes"]) == report["allocations"], name
        assert sum(c["bytes"] for c in h["sizes"]) == report["allocated_bytes"], name
        assert sum(c["count"] for c in h["lifetimes_ns"]) + h["unfreed"]["count"] == report["allocations"], name
        # Still live at the end: the leaks and what the runtime keeps.
        assert h["unfreed"] == {k: report["leaked"][k] + report["runtime_retained"][k] for k in ("count", "bytes")}, name
        assert all(c["from"] <= c["to"] < 2 * max(c["from"], 1) for c in h["sizes"] + h["lifetimes_ns"]), name
        for sort in ("leaked", "peak", "allocated"):
            whole = api(view, name, "sites", sort=sort, limit=1000)["sites"]
            assert labels_and_figures(whole) == labels_and_figures(
                api(view, name, "sites", sort=sort, limit=1000, **longer)["sites"]), (name, sort)


def test_the_dump_list_has_each_dumps_headline_figures(view):
    dumps = view.json("/api/dumps")["dumps"]
    peak = dumps[view.ids["peak_known"]]
    assert peak["peak_bytes"] >= 1_000_000
    assert peak["leaked_bytes"] == 5 * 1000
    assert peak["incomplete"] is False
    assert peak["allocations"] >= 15
    assert peak["duration_ns"] > 0


def test_an_instant_in_each_phase_holds_its_known_heap(view):
    # phase one: 4 x 10000; phase two adds 2 x 50000
    one = api(view, "timed_phases", "instant", at=150 * MS)
    two = api(view, "timed_phases", "instant", at=450 * MS)
    assert two["heap_bytes"] - one["heap_bytes"] == 100000
    assert two["live_count"] - one["live_count"] == 2
    top = {row["top"]["function"]: row for row in two["top"]}
    assert top["phase_one"]["live_bytes"] == 40000 and top["phase_one"]["live_count"] == 4
    assert top["phase_two"]["live_bytes"] == 100000
    assert two["at_ns"] == 450 * MS


def test_the_heap_at_the_peak_instant_is_the_peak(view):
    # Given the peak of timed_phases' first 450 ms (phase one and two live)
    summary = api(view, "timed_phases", "summary", **{"from": 0, "to": 450 * MS})
    at = summary["peak"]["time_ns"]
    # When the heap at that instant is asked for
    instant = api(view, "timed_phases", "instant", at=at)
    # Then it is the peak, phase_two's 100000 bytes first
    assert instant["heap_bytes"] == summary["peak"]["bytes"]
    assert instant["top"][0]["top"]["function"] == "phase_two"
    assert instant["top"][0]["live_bytes"] == 100000
    live = api(view, "timed_phases", "sites", sort="live", at=at)
    assert live["sites"][0]["live_bytes"] == 100000 and live["at_ns"] == at
    flame = api(view, "timed_phases", "flame", metric="live", at=at)
    assert flame["total"] == summary["peak"]["bytes"]
    peak = api(view, "timed_phases", "flame", metric="peak", **{"from": 0, "to": 450 * MS})
    assert peak["total"] == summary["peak"]["bytes"]


def test_the_timeline_counts_every_allocation_and_free_of_the_range(view):
    for start, end in ((0, None), (250 * MS, 650 * MS)):
        end = duration(view, "timed_phases") if end is None else end
        t = api(view, "timed_phases", "timeline", **{"from": start, "to": end})
        s = api(view, "timed_phases", "summary", **{"from": start, "to": end})
        n = len(t["time_ns"])
        assert 0 < n <= 512
        assert t["time_ns"][0] == start and t["time_ns"] == [start + i * t["bucket_ns"] for i in range(n)]
        assert sum(t["alloc_count"]) == s["allocations"]
        assert sum(t["free_count"]) == s["frees"]
        assert max(t["heap_max_bytes"]) >= s["peak"]["bytes"]
        assert t["recording"] == [[start, end]]


def test_the_timeline_shows_when_recording_was_on(view):
    # toggle pauses and resumes four times: three periods on
    t = api(view, "toggle", "timeline")
    periods = t["recording"]
    assert len(periods) == 3
    assert all(a < b for a, b in periods)
    assert all(periods[i][1] < periods[i + 1][0] for i in range(2))
    assert periods[0][0] == 0 and periods[-1][1] == duration(view, "toggle")
    # the allocations all fall inside them
    rows = api(view, "toggle", "allocations", limit=1000)["rows"]
    assert all(any(a <= r["time_ns"] <= b for a, b in periods) for r in rows)


def test_allocation_filters_return_the_known_rows(view):
    big = api(view, "peak_known", "allocations", match="^alloc_big$", limit=1000)
    assert big["total"] == 10
    assert {r["size"] for r in big["rows"]} == {100000}
    assert all(r["free_ns"] is not None and r["lifetime_ns"] == r["free_ns"] - r["time_ns"] for r in big["rows"])
    leaked = api(view, "peak_known", "allocations", leaked=1, match="alloc_small")
    assert leaked["total"] == 5 and {r["size"] for r in leaked["rows"]} == {1000}
    assert all(r["free_ns"] is None and r["top"]["function"] == "alloc_small" for r in leaked["rows"])
    sized = api(view, "peak_known", "allocations", min_size=100000, max_size=100000)
    assert sized["total"] == 10
    site = big["rows"][0]["site"]
    assert api(view, "peak_known", "allocations", site=site)["total"] == 10
    # timed_phases at 450 ms: phase one's 4 blocks and phase two's 2 are live
    assert api(view, "timed_phases", "allocations", alive_at=450 * MS, match="phase_one")["total"] == 4
    assert api(view, "timed_phases", "allocations", alive_at=450 * MS, match="phase_")["total"] == 6
    assert api(view, "timed_phases", "allocations", alive_at=700 * MS, match="phase_one")["total"] == 0
    by_size = api(view, "peak_known", "allocations", sort="size", order="desc", limit=3)
    assert [r["size"] for r in by_size["rows"]][:1] == [100000]
    by_time = api(view, "peak_known", "allocations", limit=1000)["rows"]
    assert [r["time_ns"] for r in by_time] == sorted(r["time_ns"] for r in by_time)
    desc = api(view, "peak_known", "allocations", order="desc", limit=1000)["rows"]
    assert [r["index"] for r in desc] == [r["index"] for r in reversed(by_time)]
    page = api(view, "peak_known", "allocations", offset=2, limit=3)["rows"]
    assert page == by_time[2:5]
    short = api(view, "peak_known", "allocations", match="alloc_big", max_life_ns=big["rows"][0]["lifetime_ns"])
    assert 1 <= short["total"] <= 10


def test_the_thread_filter_splits_the_rows_by_thread(view):
    threads = api(view, "many_threads", "threads")["threads"]
    assert len(threads) >= 1001 and [t["index"] for t in threads] == list(range(len(threads)))
    total = api(view, "many_threads", "allocations")["total"]
    by_thread = [api(view, "many_threads", "allocations", thread=t["index"], limit=1)["total"] for t in threads[:20]]
    assert sum(by_thread) <= total
    assert any(n == 50 for n in by_thread)
    rows = api(view, "many_threads", "allocations", thread=3, limit=1000)["rows"]
    assert rows and all(r["thread"] == 3 for r in rows)


def test_a_realloc_chain_links_every_step(view):
    rows = api(view, "realloc_chain", "allocations", match="grow_buffer", leaked=1)["rows"]
    assert len(rows) == 1 and rows[0]["size"] == 50000
    detail = view.json(f"/api/dumps/{view.ids['realloc_chain']}/allocations/{rows[0]['index']}")
    assert [r["size"] for r in detail["chain"]] == [16, 100, 1000, 10000, 100000, 1000000, 50000]
    chain = detail["chain"]
    assert chain[0]["realloc_from"] is None and chain[-1]["realloc_to"] is None
    for a, b in zip(chain, chain[1:]):
        assert a["realloc_to"] == b["index"] and b["realloc_from"] == a["index"]
        assert a["free_ns"] <= b["time_ns"]
    assert detail["frames"][0]["function"] in ("realloc", "grow_buffer") or any(
        f["function"] == "grow_buffer" for f in detail["frames"])
    null = api(view, "realloc_chain", "allocations", match="realloc_null", leaked=1)["rows"]
    assert [r["size"] for r in null] == [777] and null[0]["realloc_from"] is None


def test_the_realloc_filter_keeps_the_rows_of_realloc_chains_only(view):
    # Given the program whose one chain is grow_buffer's seven blocks, and
    # whose realloc(NULL), realloc(p, 0) and failed realloc make no chain,
    # when the table keeps realloc chains only, then it is that chain, whole.
    rows = api(view, "realloc_chain", "allocations", realloc=1)["rows"]
    assert [r["size"] for r in rows] == [16, 100, 1000, 10000, 100000, 1000000, 50000]
    assert all(r["realloc_from"] is not None or r["realloc_to"] is not None for r in rows)
    by_size = api(view, "realloc_chain", "allocations", realloc=1, sort="size", order="desc", limit=2)
    assert by_size["total"] == 7 and [r["size"] for r in by_size["rows"]] == [1000000, 100000]
    assert api(view, "realloc_chain", "allocations", realloc=1, match="realloc_null")["total"] == 0
    assert api(view, "realloc_chain", "allocations", realloc=1, leaked=1)["total"] == 1
    assert api(view, "realloc_chain", "allocations", realloc=0)["total"] == api(
        view, "realloc_chain", "allocations")["total"]


def test_sparklines_add_up_to_the_heap_at_the_end_of_each_part(view):
    end = duration(view, "timed_phases")
    n = 16
    sites = api(view, "timed_phases", "sites", sort="allocated", limit=1000, spark=n)["sites"]
    assert all(len(s["spark"]) == n for s in sites)
    span = end + 1
    for j in (0, 5, n - 1):
        part_end = span * (j + 1) // n - 1
        heap = api(view, "timed_phases", "instant", at=part_end)["heap_bytes"]
        assert sum(s["spark"][j] for s in sites) == heap, j
    two = next(s for s in sites if s["top"]["function"] == "phase_two")
    assert two["spark"][-1] == 100000


def test_one_sites_figures_follow_the_range_and_the_instant(view):
    sites = api(view, "timed_phases", "sites", sort="allocated", limit=1000)["sites"]
    one = next(s for s in sites if s["top"]["function"] == "phase_one")
    whole = api(view, "timed_phases", f"sites/{one['id']}")
    assert whole["allocations"] == 4 and whole["frames"][0]["function"] == "phase_one"
    later = api(view, "timed_phases", f"sites/{one['id']}", **{"from": 300 * MS, "at": 450 * MS})
    assert later["allocations"] == 0 and later["range"]["from_ns"] == 300 * MS
    assert (later["live_bytes"], later["live_count"]) == (40000, 4)


@pytest.mark.parametrize("fmt,args", [
    ("collapsed", ["--metric", "leaked"]),
    ("svg", []),
    ("json", []),
    ("massif", []),
    ("pprof", []),
    ("heaptrack", []),
    ("collapsed", ["--from", "250000000ns", "--to", "650000000ns"]),
])
def test_an_export_download_is_the_clis_file(build, view, dumps, tmp_path, fmt, args):
    name = "timed_phases"
    out = tmp_path / "cli.out"
    run = support.memrec_raw(build, ["export", dumps[name], "--format", fmt, "-o", out, *args])
    assert run.returncode == 0, run.describe()
    params = {"format": fmt}
    if "--metric" in args:
        params["metric"] = args[args.index("--metric") + 1]
    if "--from" in args:
        params["from"] = args[args.index("--from") + 1].removesuffix("ns")
        params["to"] = args[args.index("--to") + 1].removesuffix("ns")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    code, headers, body = view.get(f"/api/dumps/{view.ids[name]}/export?{query}")
    assert code == 200, body[:300]
    stem = dumps[name].name.removesuffix(".dat")
    assert headers["Content-Disposition"].startswith(f'attachment; filename="{stem}.')
    expected = out.read_bytes()
    if fmt == "pprof":
        assert headers["Content-Type"] == "application/gzip"
        assert gzip.decompress(body) == gzip.decompress(expected)
    elif fmt == "json":
        assert json.loads(body) == json.loads(expected)
    else:
        assert body == expected


MAIN = "_start;__libc_start_main_impl;__libc_start_call_main;main"


@pytest.mark.parametrize("params,args,expected", [
    ({"thread": 1}, ["--thread-index", "1"], {"clone3;start_thread;worker_leak": 4321}),
    ({"min_size": 10000, "max_size": 10000}, ["--min-size", "10000", "--max-size", "10000"],
     {f"{MAIN};phase_one": 40000}),
    ({"alive_at": 450 * MS}, ["--alive-at", f"{450 * MS}ns"], {f"{MAIN};phase_one": 40000, f"{MAIN};phase_two": 100000}),
    ({"match": "^phase_t", "metric": "leaked"}, ["--match", "^phase_t", "--metric", "leaked"],
     {f"{MAIN};phase_two": 100000, f"{MAIN};phase_three": 21000}),
    ({"search": "phase_one", "metric": "peak", "from": 150 * MS, "to": 450 * MS},
     ["--search", "phase_one", "--metric", "peak", "--from", f"{150 * MS}ns", "--to", f"{450 * MS}ns"],
     {f"{MAIN};phase_one": 40000}),
    ({"leaked": 1, "min_size": 900}, ["--leaked-only", "--min-size", "900"],
     {f"{MAIN};phase_two": 100000, f"{MAIN};phase_three": 21000, f"{MAIN};grow_block": 900,
      "clone3;start_thread;worker_leak": 4321}),
    ({"min_life_ns": 100 * MS, "max_life_ns": 1000 * MS, "metric": "allocations"},
     ["--min-lifetime", f"{100 * MS}ns", "--max-lifetime", f"{1000 * MS}ns", "--metric", "allocations"],
     {f"{MAIN};phase_one": 4}),
])
def test_a_filtered_download_is_the_clis_filtered_file(build, view, dumps, tmp_path, params, args, expected):
    # Given timed_phases, whose thread 1 is phase-worker
    name = "timed_phases"
    assert api(view, name, "threads")["threads"][1]["name"] == "phase-worker"
    # when the view's download and memrec export get the same filter
    code, _, body = view.get(f"/api/dumps/{view.ids[name]}/export?" +
                             urllib.parse.urlencode({"format": "collapsed", **params}))
    assert code == 200, body[:300]
    out = tmp_path / "cli.folded"
    run = support.memrec_raw(build, ["export", dumps[name], "--format", "collapsed", "-o", out, *args])
    assert run.returncode == 0, run.describe()
    # then the files are the same, with exactly the selected allocations' figures
    assert body == out.read_bytes()
    lines = body.decode().splitlines()
    assert {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in lines} == expected


def test_a_download_of_one_site_is_the_clis(build, view, dumps, tmp_path):
    # the allocation table's `site` is the view's site id, which --site takes too
    sites = api(view, "timed_phases", "sites", sort="allocated", limit=1000)["sites"]
    two = next(s["id"] for s in sites if s["top"]["function"] == "phase_two")
    for fmt in ("pprof", "massif", "json"):
        code, _, body = view.get(f"/api/dumps/{view.ids['timed_phases']}/export?format={fmt}&site={two}")
        assert code == 200, body[:300]
        out = tmp_path / f"cli.{fmt}"
        run = support.memrec_raw(build, ["export", dumps["timed_phases"], "--format", fmt, "--site", str(two),
                                         "-o", out])
        assert run.returncode == 0, run.describe()
        if fmt == "pprof":
            assert gzip.decompress(body) == gzip.decompress(out.read_bytes())
        elif fmt == "json":
            assert json.loads(body) == json.loads(out.read_bytes())
            rep = support.only_process(json.loads(body))
            assert (rep["allocations"], rep["allocated_bytes"], rep["peak"]["bytes"]) == (2, 100000, 100000)
            assert rep["leaked"] == {"bytes": 100000, "count": 2}
        else:
            assert body == out.read_bytes()


def test_the_diff_flamegraph_carries_both_dumps_values(view):
    base, new = view.ids["diff_leak_base"], view.ids["diff_leak_extra"]
    doc = view.json(f"/api/diff/flame?base={base}&new={new}&metric=leaked")
    assert (doc["root"]["base"], doc["root"]["new"]) == (2000, 5333)

    def find(node, name):
        if node["name"] == name:
            return node
        return next((f for c in node["children"] if (f := find(c, name))), None)

    kept, extra = find(doc["root"], "leak_kept"), find(doc["root"], "leak_extra")
    assert (kept["base"], kept["new"]) == (2000, 2000)
    assert (extra["base"], extra["new"]) == (0, 3333)


def test_the_diff_report_download_is_memrec_diffs_output(build, dumps, view):
    # given the two builds of diff_leak loaded in one view
    base, new = view.ids["diff_leak_base"], view.ids["diff_leak_extra"]
    for fmt, flags, suffix, content_type in [("json", ["--json"], "json", "application/json"),
                                             ("text", [], "txt", "text/plain")]:
        # when the diff view's download is fetched
        code, headers, body = view.get(f"/api/diff/report?base={base}&new={new}&format={fmt}")
        # then it is the file `memrec diff BASE NEW` prints, named after both dumps
        assert code == 200 and headers["Content-Type"].startswith(content_type), body[:300]
        cli = support.memrec_raw(build, ["diff", *flags, dumps["diff_leak_base"], dumps["diff_leak_extra"]])
        assert cli.returncode == 0, cli.describe()
        assert body.decode() == cli.stdout
        stems = "-vs-".join(dumps[n].name.removesuffix(".dat") for n in ("diff_leak_base", "diff_leak_extra"))
        assert headers["Content-Disposition"] == f'attachment; filename="diff.{stems}.{suffix}"'
    # and the JSON names leak_extra's 3333 leaked bytes as new
    doc = json.loads(view.get(f"/api/diff/report?base={base}&new={new}&format=json")[2])
    assert "leak_extra" in json.dumps(doc) and "3333" in json.dumps(doc)


@pytest.mark.parametrize("path,status", [
    ("/api/diff/report?base=0&format=json", 400),
    ("/api/diff/report?base=0&new=99&format=json", 404),
    ("/api/diff/report?base=0&new=1&format=svg", 400),
    ("/api/diff/report?base=0&new=1", 400),
    ("/api/dumps/0/summary?from=5&to=4", 400),
    ("/api/dumps/0/summary?from=-1", 400),
    ("/api/dumps/0/summary?to=1.5", 400),
    ("/api/dumps/0/timeline?from=1e3", 400),
    ("/api/dumps/0/sites?sort=live", 400),
    ("/api/dumps/0/sites?spark=7", 400),
    ("/api/dumps/0/sites?spark=129", 400),
    ("/api/dumps/0/sites?at=x", 400),
    ("/api/dumps/0/flame?metric=live", 400),
    ("/api/dumps/0/instant", 400),
    ("/api/dumps/0/instant?at=-5", 400),
    ("/api/dumps/9/instant?at=5", 404),
    ("/api/dumps/0/allocations?sort=bogus", 400),
    ("/api/dumps/0/allocations?order=up", 400),
    ("/api/dumps/0/allocations?leaked=2", 400),
    ("/api/dumps/0/allocations?min_size=x", 400),
    ("/api/dumps/0/allocations?thread=99999", 400),
    ("/api/dumps/0/allocations?site=99999", 400),
    ("/api/dumps/0/allocations?match=(", 400),
    ("/api/dumps/0/allocations?match=" + "a" * 300, 400),
    ("/api/dumps/0/allocations?limit=0", 400),
    ("/api/dumps/0/allocations/99999999", 404),
    ("/api/dumps/0/allocations/x", 400),
    ("/api/dumps/x/threads", 400),
    ("/api/dumps/0/sites/0?from=9&to=3", 400),
    ("/api/dumps/0/sites/0?at=x", 400),
    ("/api/dumps/0/export?format=bogus", 400),
    ("/api/dumps/0/export?format=heaptrack&from=5", 400),
    ("/api/dumps/0/export?format=collapsed&metric=bogus", 400),
    ("/api/dumps/0/export?format=heaptrack&leaked=1", 400),
    ("/api/dumps/0/export?format=collapsed&leaked=2", 400),
    ("/api/dumps/0/export?format=collapsed&thread=x", 400),
    ("/api/dumps/0/export?format=collapsed&thread=99", 400),
    ("/api/dumps/0/export?format=collapsed&site=99999", 400),
    ("/api/dumps/0/export?format=collapsed&match=(", 400),
    ("/api/dumps/0/export?format=collapsed&min_life_ns=1.5", 400),
    ("/api/dumps/0/export?format=collapsed&search=" + "a" * 300, 400),
    ("/api/diff/flame?base=0", 400),
    ("/api/diff/flame?base=0&new=99", 404),
    ("/api/diff/flame?base=0&new=1&metric=live", 400),
])
def test_every_new_bad_request_is_a_4xx_and_the_server_stays_up(view, path, status):
    code, headers, body = view.get(path)
    assert code == status, body[:300]
    assert headers.get("Content-Type", "").startswith("application/json")
    assert isinstance(json.loads(body)["error"], str)
    assert view.json("/api/dumps")["dumps"]


def test_a_bad_regex_names_the_error(view):
    code, _, body = view.get("/api/dumps/0/allocations?match=%28")
    assert code == 400 and "regular expression" in json.loads(body)["error"]
    long_ok = view.json("/api/dumps/0/allocations?match=" + "a" * 200)
    assert long_ok["total"] == 0


def wait_for_tables(server):
    """The dump list once every table is built, within the test timeout."""
    deadline = time.monotonic() + support.TIMEOUT_S
    while True:
        dumps = server.json("/api/dumps")["dumps"]
        states = [d["table"]["state"] for d in dumps]
        assert "failed" not in states, dumps
        if all(state == "ready" for state in states):
            return dumps
        assert time.monotonic() < deadline, f"the tables were not built in {support.TIMEOUT_S} s: {dumps}"
        time.sleep(0.1)


def test_dumps_served_before_their_tables_answer_as_when_loaded_in_one_pass(build, dumps, view):
    # given every dump served before its allocation table (--serve-early always)
    early = start_view(build, list(dumps.values()), "--serve-early", "always")
    try:
        # then the whole runs answer at once, and the tables come in the background
        listed = early.json("/api/dumps")["dumps"]
        assert [d["table"]["state"] in ("building", "ready") for d in listed] == [True] * len(dumps)
        for name, i in view.ids.items():
            assert early.json(f"/api/dumps/{i}/summary") == api(view, name, "summary"), name
        wait_for_tables(early)
        # and once built, every range, instant and row is the one-pass load's
        for name, i in view.ids.items():
            end = duration(view, name)
            asks = [("summary", {"from": end // 3, "to": end // 2}), ("timeline", {}),
                    ("timeline", {"from": end // 4, "to": end}), ("instant", {"at": end // 2}),
                    ("sites", {"sort": "allocated", "spark": 16, "from": end // 5}),
                    ("sites", {"sort": "live", "at": end // 3}), ("flame", {"metric": "live", "at": end // 2}),
                    ("allocations", {"alive_at": end // 2, "limit": 1000}),
                    ("allocations", {"sort": "size", "order": "desc"})]
            for endpoint, params in asks:
                query = "&".join(f"{k}={v}" for k, v in params.items())
                path = f"/api/dumps/{i}/{endpoint}" + (f"?{query}" if query else "")
                assert early.json(path) == view.json(path), (name, path)
    finally:
        support.kill_tree(early.proc)
        _, err = early.proc.communicate()
    assert err.decode().count("the allocation table is built after") == len(dumps), err


def test_serve_early_takes_auto_always_or_never(build, dumps):
    run = support.finish(support.start([build.memrec, "view", "--port", "0", "--serve-early", "later",
                                        dumps["leak_three"]], support.clean_env()), ["memrec", "view"],
                         support.TIMEOUT_S)
    assert run.returncode == 1
    assert "--serve-early must be auto, always or never" in run.stderr
