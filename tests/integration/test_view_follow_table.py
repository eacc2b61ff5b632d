"""memrec view --follow grows each dump's allocation table at every poll
(model/allocation_table.h, docs/design/allocation_table.md "Growing"), so ranges,
instants, the allocation list and pprof's ?at and ?seconds answer on a dump
still being written: `go tool pprof` reads the next 2 s of a live
growth_service, and every range answered while it ran is the finished
dump's, answer for answer."""
from __future__ import annotations

import concurrent.futures
import contextlib
import gzip
import signal

import memrec_support as support
from test_view_api import start_view
from test_view_follow import start_service, wait_for
from test_view_pprof import needs_go, pprof_top

MS = 1_000_000


def proto_fields(message: bytes) -> dict[int, int]:
    """The top-level varint fields of a protobuf message (the rest skipped):
    profile.proto's time_nanos is 9, duration_nanos 10."""
    fields, at = {}, 0

    def varint():
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = message[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(message):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            fields[number] = varint()
        elif wire == 2:
            length = varint()  # read before `at` is added to
            at += length
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"wire type {wire} at {at}")
    return fields


def sites_by_label(view, dump_id, query):
    rows = view.json(f"/api/dumps/{dump_id}/sites?{query}&limit=1000")["sites"]
    return {row["label"]: {k: v for k, v in row.items() if k not in ("id", "spark")} for row in rows}


# Fields of /summary that are the whole run's, not the range's: the recorder's counters, the
# dump's state and length.
WHOLE_RUN = ("counters", "dump", "duration_ns")


def range_answers(view, dump_id, from_ns, to_ns):
    """What the API says of [from_ns, to_ns]: the summary's range figures, each
    call site's figures (by label: ids are per snapshot), the heap at its end
    and the first page of its allocations."""
    query = f"from={from_ns}&to={to_ns}"
    summary = view.json(f"/api/dumps/{dump_id}/summary?{query}")
    instant = view.json(f"/api/dumps/{dump_id}/instant?at={to_ns}")
    allocations = view.json(f"/api/dumps/{dump_id}/allocations?{query}&limit=200")
    return {"summary": {k: v for k, v in summary.items() if k not in WHOLE_RUN},
            "sites": sites_by_label(view, dump_id, query),
            "instant": {k: v for k, v in instant.items() if k != "top"},
            "instant_top": sorted((s["label"], s["live_bytes"], s["live_count"]) for s in instant["top"]),
            "total": allocations["total"],
            "allocations": [{k: row[k] for k in ("index", "time_ns", "size", "address", "thread", "label")}
                            for row in allocations["rows"]],
            # a block freed after the range is freed in the finished dump: only frees already read compare
            "freed": {row["index"]: row["free_ns"] for row in allocations["rows"] if row["free_ns"] is not None}}


def same_range_answers(now, before):
    """The answers of a range once the dump ended, against those given while it
    was live: equal, except that blocks live then may have been freed since."""
    differing = [k for k in now["summary"].keys() | before["summary"].keys()
                 if now["summary"].get(k) != before["summary"].get(k)]
    assert differing == [], {k: (before["summary"].get(k), now["summary"].get(k)) for k in differing}
    for key in now:
        if key not in ("freed", "summary"):
            assert now[key] == before[key], key
    assert {i: now["freed"][i] for i in before["freed"]} == before["freed"]


@contextlib.contextmanager
def followed_growth_service(build, tmp_path):
    """growth_service until SIGTERM, its dumps' directory followed by a view
    polling every 200 ms: yields (service, view), both stopped after."""
    out_dir = support.fresh_dir(tmp_path, "profiles")
    service = start_service(build, out_dir, [build.program("growth_service"), 1000000, "sigterm"])
    view = start_view(build, [out_dir], "--follow", "--poll-ms", "200")
    try:
        yield service, view
    finally:
        support.kill_tree(service)
        support.kill_tree(view.proc)


def ended_file(view, dump_id):
    return [d for d in view.json("/api/dumps")["dumps"] if d["id"] == dump_id][0]["file"]


@needs_go
def test_a_live_service_answers_ranges_and_pprof_seconds_as_its_finished_dump(build, tmp_path):
    with followed_growth_service(build, tmp_path) as (service, view):
        # given the service live, every event of its first 1.5 s in the view's table
        live = wait_for(view, lambda ds: [d for d in ds if d["state"] == "live" and d["table"]["state"] == "ready"
                                          and d.get("settled_ns", 0) > 1500 * MS], "a live dump settled 1.5 s in")[0]
        dump_id = live["id"]
        # when ranges before that edge are asked while it runs
        ranges = [(0, 500 * MS), (200 * MS, 1400 * MS), (1000 * MS, 1500 * MS)]
        while_live = {r: range_answers(view, dump_id, *r) for r in ranges}
        assert while_live[ranges[1]]["summary"]["allocations"] > 100, while_live[ranges[1]]["summary"]
        # and the Maps view answers too (the mappings are followed with the heap)
        maps = view.json(f"/api/dumps/{dump_id}/maps?from=0&to={1500 * MS}")
        assert "mappings" in maps, maps
        # and pprof asks for the next 2 s (the request waits for them, as Go's does)
        code, _, body = view.get(f"/debug/pprof/allocs?seconds=2&dump={dump_id}")
        assert code == 200, body[:300]
        live_profile = tmp_path / "live.pb.gz"
        live_profile.write_bytes(body)
        fields = proto_fields(gzip.decompress(body))
        assert fields[10] == 2000 * MS
        window_to = fields[9] - live["start_wall_ns"] + fields[10]
        allocated = pprof_top(tmp_path, str(live_profile), "alloc_space")
        grown = pprof_top(tmp_path, str(live_profile), "inuse_space")
        # then cache_insert allocated its 1,000-byte entries of those 2 s (a tick every 10 ms,
        # as many as the API counts in the window: how many depends on how the machine ran it),
        # and kept them all
        window = view.json(f"/api/dumps/{dump_id}/sites?from={window_to - fields[10]}&to={window_to}&limit=1000")
        inserts = [row["allocations"] for row in window["sites"] if row["label"].endswith("cache_insert")]
        assert len(inserts) == 1 and inserts[0] > 0, window["sites"]
        assert allocated["cache_insert"] == 1000 * inserts[0], (allocated, inserts)
        assert grown["cache_insert"] == allocated["cache_insert"], grown
        # when the service is stopped and its dump has ended
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=support.TIMEOUT_S) == 0
        wait_for(view, lambda ds: [d for d in ds if d["id"] == dump_id and d["state"] == "ended"], "the dump to end")
        # then every range answered while it was live is the finished dump's
        for r in ranges:
            same_range_answers(range_answers(view, dump_id, *r), while_live[r])
        # and they are those of the finished file loaded whole, by a view without --follow
        whole = start_view(build, [ended_file(view, dump_id)])
        try:
            for r in ranges:
                assert range_answers(whole, 0, *r) == range_answers(view, dump_id, *r), r
        finally:
            support.kill_tree(whole.proc)
        # and the same 2 s of the finished dump give the same profile
        ended_profile = tmp_path / "ended.pb.gz"
        code, _, body = view.get(f"/debug/pprof/allocs?seconds=2&at={window_to}ns&dump={dump_id}")
        assert code == 200, body[:300]
        ended_profile.write_bytes(body)
        assert proto_fields(gzip.decompress(body))[9] == fields[9]
        assert pprof_top(tmp_path, str(ended_profile), "alloc_space") == allocated
        assert pprof_top(tmp_path, str(ended_profile), "inuse_space") == grown


def test_seconds_beyond_the_wait_cap_on_a_live_dump_is_refused(build, tmp_path):
    with followed_growth_service(build, tmp_path) as (service, view):
        live = wait_for(view, lambda ds: [d for d in ds if d["state"] == "live"], "a live dump")[0]
        # when more than 60 s of a live dump are asked for
        code, _, body = view.get(f"/debug/pprof/allocs?seconds=61&dump={live['id']}")
        # then the request is refused at once with the cap and what to do
        assert code == 400, body
        assert "at most 60 s" in body.decode() and "?at=T" in body.decode(), body


def test_waits_on_a_live_dump_are_capped_so_the_page_keeps_its_workers(build, tmp_path):
    with followed_growth_service(build, tmp_path) as (service, view):
        live = wait_for(view, lambda ds: [d for d in ds if d["state"] == "live"], "a live dump")[0]
        # when five requests ask for the next 8 s of a live dump at once
        path = f"/debug/pprof/allocs?seconds=8&dump={live['id']}"
        with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
            asked = [pool.submit(view.get, path, 120) for _ in range(5)]
            # then one of them is refused at once with a sentence and a Retry-After,
            # while the page's own requests are still answered
            refused = next(concurrent.futures.as_completed(asked)).result()
            assert refused[0] == 503, refused
            assert refused[1].get("Retry-After") == "5", refused[1]
            assert "Already 4 requests wait" in refused[2].decode() and "?at=T" in refused[2].decode(), refused[2]
            assert any(not a.done() for a in asked), "the other four wait"
            assert view.json("/api/dumps")["dumps"], "the page's requests are still answered"
            # and the four others are answered
            assert sorted(a.result()[0] for a in asked) == [200, 200, 200, 200, 503]
        # and once they are answered a wait is taken again
        code, _, body = view.get(f"/debug/pprof/allocs?seconds=1&dump={live['id']}", 120)
        assert code == 200, body[:300]


@needs_go
def test_go_tool_pprof_reads_the_heap_at_a_live_edge_as_the_finished_dump_gives_it(build, tmp_path):
    with followed_growth_service(build, tmp_path) as (service, view):
        live = wait_for(view, lambda ds: [d for d in ds if d["state"] == "live" and d["allocations"] > 100],
                        "a live dump with allocations")[0]
        dump_id = live["id"]
        # when go tool pprof reads the heap of a service still running
        over_http = pprof_top(tmp_path, f"http://127.0.0.1:{view.port}/debug/pprof/heap?dump={dump_id}",
                              "inuse_space")
        # then the cache it grows holds a whole number of its 1,000-byte entries
        assert over_http["cache_insert"] > 0 and over_http["cache_insert"] % 1000 == 0, over_http
        # and a heap profile taken at a live edge (its duration ends at that edge) ...
        code, _, body = view.get(f"/debug/pprof/heap?dump={dump_id}")
        assert code == 200, body[:300]
        live_profile = tmp_path / "live_heap.pb.gz"
        live_profile.write_bytes(body)
        fields = proto_fields(gzip.decompress(body))
        edge = fields[9] - live["start_wall_ns"] + fields[10]
        at_edge = pprof_top(tmp_path, str(live_profile), "inuse_space")
        # ... is what the finished dump says was in use at that instant
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=support.TIMEOUT_S) == 0
        wait_for(view, lambda ds: [d for d in ds if d["id"] == dump_id and d["state"] == "ended"], "the dump to end")
        code, _, body = view.get(f"/debug/pprof/heap?at={edge}ns&dump={dump_id}")
        assert code == 200, body[:300]
        ended_profile = tmp_path / "ended_heap.pb.gz"
        ended_profile.write_bytes(body)
        assert pprof_top(tmp_path, str(ended_profile), "inuse_space") == at_edge
