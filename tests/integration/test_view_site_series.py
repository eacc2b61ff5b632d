"""An expanded site's chart and "kept from the range" in `memrec view`'s API
(docs/api.md, /sites/{site}/series, sort=kept, allocations kept=1) on a
recording of tests/programs/timed_phases (phase_one holds 4 x 10,000 bytes from
0 to 600 ms, phase_two leaks 2 x 50,000 at 300 ms, phase_three 3 x 7,000 at
600 ms): every point of a site's series is its live bytes and blocks at that
instant as `memrec report --retained 0..T --at T` counts them, and the kept
figures are `report --retained A..B --at C`'s, per site and row for row."""
from __future__ import annotations

import pytest

import memrec_support as support
from test_view_api import start_view

MS = 1_000_000


@pytest.fixture(scope="module")
def dump(build, tmp_path_factory):
    run = support.record(build, "timed_phases", tmp_path=tmp_path_factory.mktemp("timed_phases"))
    assert run.returncode == 0 and len(run.dats) == 1, run.describe()
    return run.dats[0]


@pytest.fixture(scope="module")
def view(build, dump):
    server = start_view(build, [dump])
    yield server
    support.kill_tree(server.proc)
    server.proc.communicate()


def site_ids(view, group="") -> dict[str, int]:
    """{label: site id} of the view's sites with a figure."""
    sites = view.json(f"/api/dumps/0/sites?sort=allocated&limit=1000{group}")["sites"]
    return {s["label"]: s["id"] for s in sites}


def retained(build, dump, span: str, at: str | None = None) -> tuple[dict[str, tuple[int, int]], dict]:
    """{label: (bytes, blocks)} of `memrec report --retained SPAN [--at AT]`, and its totals."""
    rep = support.only_process(support.report(build, dump, args=["--retained", span, *(["--at", at] if at else [])]))
    by_label = {rep["sites"][s["site"]]["label"]: (s["bytes"], s["count"]) for s in rep["retained"]["sites"]}
    assert len(by_label) == len(rep["retained"]["sites"]), "two report sites with one label"
    return by_label, rep["retained"]


def test_every_point_of_a_series_is_the_sites_live_bytes_at_its_instant(build, dump, view):
    # given the sites of the three phases
    ids = site_ids(view)
    phases = ("phase_one", "phase_two", "phase_three")
    # when their series over the whole run are asked for in 12 buckets
    series = {p: view.json(f"/api/dumps/0/sites/{ids[p]}/series?buckets=12") for p in phases}
    times = series["phase_one"]["time_ns"]
    assert len(times) == 13 and times[0] == 0 and times[-1] == series["phase_one"]["range"]["to_ns"]
    # then at every instant each is what the report counts live then
    for k, t in enumerate(times):
        live, _ = retained(build, dump, f"0ns..{t}ns")
        for p in phases:
            assert (series[p]["live_bytes"][k], series[p]["live_count"][k]) == live.get(p, (0, 0)), (p, t)
    # and the phases' known figures show: phase_one held 40,000 and freed them, phase_two kept 100,000
    assert max(series["phase_one"]["live_bytes"]) == 40_000 and series["phase_one"]["end"]["live_bytes"] == 0
    assert series["phase_two"]["end"] == {"live_bytes": 100_000, "live_count": 2}
    assert series["phase_three"]["end"] == {"live_bytes": 21_000, "live_count": 3}


def test_a_range_starts_with_what_was_live_at_its_start(build, dump, view):
    ids = site_ids(view)
    answer = view.json(f"/api/dumps/0/sites/{ids['phase_one']}/series?from={250 * MS}&to={450 * MS}&buckets=200")
    # 200 ms in 200 buckets of 1 ms: 201 instants from the range's start to its end
    assert answer["range"] == {"from_ns": 250 * MS, "to_ns": 450 * MS}
    assert answer["bucket_ns"] == MS + 1 and len(answer["time_ns"]) == len(answer["live_bytes"])
    assert (answer["time_ns"][0], answer["time_ns"][-1]) == (250 * MS, 450 * MS)
    # phase_one's four blocks, allocated before the range, are live all through it
    assert set(answer["live_bytes"]) == {40_000} and set(answer["live_count"]) == {4}
    live, _ = retained(build, dump, f"0ns..{450 * MS}ns")
    assert live["phase_one"] == (40_000, 4)
    assert answer["markers"] == []


def test_a_grouped_sites_series_sums_its_members(view):
    grouped = site_ids(view, "&group=label")
    one = view.json(f"/api/dumps/0/sites/{grouped['phase_two']}/series?group=label&buckets=8")
    ids = site_ids(view)
    plain = view.json(f"/api/dumps/0/sites/{ids['phase_two']}/series?buckets=8")
    assert one["live_bytes"] == plain["live_bytes"] and one["live_count"] == plain["live_count"]


@pytest.mark.parametrize("span,at,query", [
    ("0..250ms", "350ms", f"from=0&to={250 * MS}&at={350 * MS}"),
    ("0..250ms", "700ms", f"from=0&to={250 * MS}&at={700 * MS}"),
    ("250ms..550ms", None, f"from={250 * MS}&to={550 * MS}"),
    ("250ms..700ms", "650ms", f"from={250 * MS}&to={700 * MS}&at={650 * MS}"),
])
def test_kept_per_site_and_row_by_row_is_report_retained(build, dump, view, span, at, query):
    # given what the report says the span kept at the instant
    cli, totals = retained(build, dump, span, at)
    # when the call sites are sorted by kept, plain and grouped by label
    for group in ("", "&group=label"):
        answer = view.json(f"/api/dumps/0/sites?sort=kept&limit=1000&{query}{group}")
        kept = {s["label"]: (s["kept_bytes"], s["kept_count"]) for s in answer["sites"] if s["kept_bytes"] > 0}
        # then each site's figures, and the totals, are the report's
        assert kept == cli
        assert (answer["kept"]["bytes"], answer["kept"]["count"]) == (totals["bytes"], totals["count"])
        assert answer["kept"]["at_ns"] == totals["at_ns"]
        assert [s["kept_bytes"] for s in answer["sites"]] == sorted((s["kept_bytes"] for s in answer["sites"]),
                                                                    reverse=True)
    # and the allocation table's kept rows are those blocks, one by one
    rows = view.json(f"/api/dumps/0/allocations?kept=1&limit=1000&{query.replace('at=', 'alive_at=')}")
    assert rows["total"] == totals["count"] and len(rows["rows"]) == totals["count"]
    assert sum(r["size"] for r in rows["rows"]) == totals["bytes"]
    assert (rows["kept"]["bytes"], rows["kept"]["count"]) == (totals["bytes"], totals["count"])
    by_label: dict[str, tuple[int, int]] = {}
    for r in rows["rows"]:
        b, c = by_label.get(r["label"], (0, 0))
        by_label[r["label"]] = (b + r["size"], c + 1)
    assert by_label == cli


@pytest.mark.parametrize("path,status,message", [
    ("/api/dumps/0/sites/0/series?buckets=0", 400, "buckets must be a whole number from 1 to 1000"),
    ("/api/dumps/0/sites/0/series?buckets=1001", 400, "buckets must be a whole number from 1 to 1000"),
    ("/api/dumps/0/sites/999999/series", 404, "No call site has id 999999"),
    ("/api/dumps/0/sites/x/series", 400, "The site id must be a number"),
    (f"/api/dumps/0/sites/0/series?from={2 * MS}&to={MS}", 400, "from must not be after to"),
    (f"/api/dumps/0/sites?sort=kept&from={300 * MS}&at={MS}", 400, "The instant is before the range starts"),
    (f"/api/dumps/0/allocations?kept=1&from={300 * MS}&alive_at={MS}", 400, "kept=1 needs alive_at at or after"),
    ("/api/dumps/0/allocations?kept=2", 400, "kept must be 0 or 1"),
    ("/api/dumps/0/flame?metric=kept", 400, "Unknown metric 'kept'"),
])
def test_bad_requests_are_refused_with_a_sentence(view, path, status, message):
    body = view.json(path, status=status)
    assert message in body["error"], body
