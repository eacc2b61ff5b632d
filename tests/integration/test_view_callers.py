"""Caller/callee in `memrec view` (/api/dumps/ID/functions, docs/api.md) on a
recording of caller_callee, whose call graph is known: alloc_block()
allocates for caller_a (3 x 1000 bytes, leaked), caller_b (2 x 500, freed)
and the bottom of recurse(3), which allocates 64 bytes of its own at each of
its 4 levels. Each figure is checked against the program's numbers and
against the same figures worked out from `memrec report --json`'s sites."""
from __future__ import annotations

import urllib.parse

import pytest

import memrec_support as support
from test_view_api import start_view

PROGRAM_FUNCTIONS = {"alloc_block", "caller_a", "caller_b", "recurse", "main"}


@pytest.fixture(scope="module")
def dump(build, tmp_path_factory):
    run = support.record(build, "caller_callee", tmp_path=tmp_path_factory.mktemp("callers"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "caller_callee: done\n"
    assert len(run.dats) == 1
    return run.dats[0]


@pytest.fixture(scope="module")
def server(build, dump):
    view = start_view(build, [dump])
    yield view
    support.kill_tree(view.proc)
    view.proc.communicate()


def functions(server, metric, name=None, **params):
    query = {"metric": metric, "limit": 1000, **params}
    if name is not None:
        query["name"] = name
    return server.json("/api/dumps/0/functions?" + urllib.parse.urlencode(query))


def links(rows):
    return {r["name"]: r["value"] for r in rows}


def from_report(rep, field, selected):
    """Self, inclusive, callers and callees of `selected` worked out the
    obvious way from the report's sites: each site's frames from its label
    frame out, a site counted once per function and per link."""
    self_, inclusive, callers, callees = {}, {}, {}, {}
    for site in rep["sites"]:
        value = site[field]
        if value == 0 or not site["frames"]:
            continue
        path = [rep["frames"][f]["label"] for f in site["frames"]][site["label_frame"]:]
        self_[path[0]] = self_.get(path[0], 0) + value
        for name in set(path):
            inclusive[name] = inclusive.get(name, 0) + value
        up = {path[k + 1] for k in range(len(path) - 1) if path[k] == selected}
        down = {path[k - 1] for k in range(1, len(path)) if path[k] == selected}
        for name in up:
            callers[name] = callers.get(name, 0) + value
        for name in down:
            callees[name] = callees.get(name, 0) + value
    return self_, inclusive, callers, callees


def test_alloc_block_allocates_for_its_three_callers(server):
    # given caller_callee, when alloc_block is selected by allocated bytes
    doc = functions(server, "allocated", "alloc_block")
    f = doc["selected"]
    # then its self and inclusive are the 6 blocks it allocated, split by caller
    assert (f["name"], f["self"], f["inclusive"]) == ("alloc_block", 4700, 4700)
    assert [(c["name"], c["value"], c["sites"]) for c in f["callers"]] == [
        ("caller_a", 3000, 1), ("caller_b", 1000, 1), ("recurse", 700, 1)]
    assert f["callees"] == []  # malloc is folded under the label: no callee
    counts = functions(server, "allocations", "alloc_block")["selected"]
    assert (counts["self"], counts["inclusive"]) == (6, 6)
    assert links(counts["callers"]) == {"caller_a": 3, "caller_b": 2, "recurse": 1}


def test_the_metric_selects_what_is_summed(server):
    leaked = functions(server, "leaked", "alloc_block")["selected"]
    assert (leaked["self"], leaked["inclusive"]) == (3700, 3700)
    assert links(leaked["callers"]) == {"caller_a": 3000, "recurse": 700}  # caller_b freed its blocks
    gone = functions(server, "leaked", "caller_b")["selected"]
    assert (gone["self"], gone["inclusive"], gone["callers"], gone["callees"]) == (0, 0, [], [])


def test_recursion_counts_each_stack_once(server):
    # recurse(3): 4 levels of 64 bytes each and, at the bottom, alloc_block(700)
    f = functions(server, "allocated", "recurse")["selected"]
    assert (f["self"], f["inclusive"]) == (4 * 64, 4 * 64 + 700)
    assert (f["self_sites"], f["inclusive_sites"]) == (4, 5)
    # called by main in every stack, by itself in all but the outermost level's
    assert links(f["callers"]) == {"main": 956, "recurse": 3 * 64 + 700}
    assert links(f["callees"]) == {"recurse": 3 * 64 + 700, "alloc_block": 700}
    counts = functions(server, "allocations", "recurse")["selected"]
    assert (counts["self"], counts["inclusive"]) == (4, 5)
    assert links(counts["callers"]) == {"main": 5, "recurse": 4}


def test_main_calls_the_three_and_holds_everything(server):
    f = functions(server, "allocated", "main")["selected"]
    assert (f["self"], f["inclusive"]) == (0, 3000 + 1000 + 256 + 700)
    assert links(f["callees"]) == {"caller_a": 3000, "caller_b": 1000, "recurse": 956}


def test_every_function_matches_the_reports_sites(build, server, dump):
    rep = support.only_process(support.report(build, dump))
    for metric, field in (("allocated", "allocated_bytes"), ("allocations", "allocations"), ("leaked", "leaked_bytes")):
        for name in PROGRAM_FUNCTIONS:
            self_, inclusive, callers, callees = from_report(rep, field, name)
            doc = functions(server, metric, name)
            f = doc["selected"]
            assert (f["self"], f["inclusive"]) == (self_.get(name, 0), inclusive.get(name, 0)), (metric, name)
            assert links(f["callers"]) == callers, (metric, name)
            assert links(f["callees"]) == callees, (metric, name)
        doc = functions(server, metric)
        assert {r["name"]: (r["self"], r["inclusive"]) for r in doc["functions"]} == {
            n: (self_.get(n, 0), v) for n, v in inclusive.items()}
        assert doc["total"] == sum(s[field] for s in rep["sites"])


def test_the_list_is_ranked_by_inclusive_and_searchable(server):
    doc = functions(server, "allocated")
    values = [(r["inclusive"], r["self"]) for r in doc["functions"]]
    assert values == sorted(values, reverse=True)
    assert doc["matched"] == len(doc["functions"])
    found = functions(server, "allocated", search="caller_")
    assert [r["name"] for r in found["functions"]] == ["caller_a", "caller_b"]
    assert found["matched"] == 2
    assert "selected" not in found
    assert len(functions(server, "allocated", limit=2)["functions"]) == 2


def test_a_range_applies(server):
    whole = functions(server, "allocated", "alloc_block")
    duration = server.json("/api/dumps/0/summary")["duration_ns"]
    ranged = functions(server, "allocated", "alloc_block", **{"from": 0, "to": duration})
    assert ranged["selected"] == whole["selected"]
    assert ranged["range"] == {"from_ns": 0, "to_ns": duration}
    # given a range that ends at caller_a's third block (main calls caller_a first)
    rows = server.json("/api/dumps/0/allocations?sort=time")["rows"]
    assert [r["size"] for r in rows] == [1000] * 3 + [500] * 2 + [64] * 4 + [700]
    early = functions(server, "allocated", "alloc_block", **{"from": 0, "to": rows[2]["time_ns"]})
    # then only caller_a's blocks are in it
    f = early["selected"]
    assert (f["self"], f["inclusive"], links(f["callers"])) == (3000, 3000, {"caller_a": 3000})
    assert early["total"] == 3000


def fnv1a64(name: str) -> str:
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) % 2**64
    return f"{h:016x}"


def test_a_function_is_selected_by_its_key_as_by_its_name(server):
    by_name = functions(server, "allocated", "recurse")["selected"]
    assert by_name["key"] == fnv1a64("recurse")
    by_key = functions(server, "allocated", key=fnv1a64("recurse"))["selected"]
    assert by_key == by_name
    assert all(r["key"] == fnv1a64(r["name"]) for r in by_name["callers"] + by_name["callees"])
    missing = functions(server, "allocated", key=fnv1a64("no_such_function"))["selected"]
    assert (missing["name"], missing["self"], missing["inclusive"], missing["callers"]) == (None, 0, 0, [])


@pytest.mark.parametrize("query,status", [
    ("metric=bogus", 400),
    ("metric=count", 400),
    ("metric=live", 400),  # live needs at=T
    ("name=", 400),
    ("limit=0", 400),
    ("raw=2", 400),
    ("name=" + "x" * 5000, 400),
    ("key=0123456789ABCDEF", 400),
    ("key=0123", 400),
    ("name=main&key=0123456789abcdef", 400),
])
def test_bad_requests_are_refused_with_a_sentence(server, query, status):
    code, _, body = server.get("/api/dumps/0/functions?" + query)
    assert code == status, body
    assert b'"error"' in body
