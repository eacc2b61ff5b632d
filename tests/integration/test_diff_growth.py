"""memrec diff --growth: each call site's growth of live bytes (the fit of
memrec report --growth) on both sides, matched by frames. tests/programs/
growth_service's cache keeps one entry every 10 ms: 1,000 bytes in BASE,
2,000 in NEW (its third argument), so the cache's slope doubles while the
pool, the sawtooth and the single burst stay near zero."""
import json
import re

import pytest

import memrec_support as support

TICKS = 300


def rate(run: support.Run) -> float:
    """Bytes a minute the cache grew by, from the program's own clock."""
    match = re.search(r"cache (\d+) entries of (\d+) bytes, first (\d+) ns, last (\d+) ns", run.stdout)
    assert match, run.describe()
    entries, size, first, last = map(int, match.groups())
    return (entries - 1) * size / (last - first) * 60e9


def record(build, tmp_path, entry_bytes: int) -> support.Run:
    run = support.record(build, "growth_service", [TICKS, "exit", entry_bytes], tmp_path=tmp_path / str(entry_bytes))
    assert run.returncode == 0 and len(run.dats) == 1, run.describe()
    assert f"entries of {entry_bytes} bytes" in run.stdout
    return run


@pytest.fixture(scope="module")
def two_runs(build, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff_growth")
    return record(build, tmp, 1000), record(build, tmp, 2000)


def diff_json(build, *args) -> dict:
    run = support.memrec_raw(build, ["diff", "--json", *map(str, args)])
    assert run.returncode == 0, run.describe()
    return json.loads(run.stdout)


def growth_by_function(doc) -> list[tuple[str | None, dict]]:
    frames = doc["frames"]
    return [(support.short_name(frames[s["frames"][s["label_frame"]]]["function"] or ""), s)
            for s in doc["growth"]["sites"]]


def assert_near(value, expected, share=0.05):
    assert abs(value - expected) <= share * expected, (value, expected)


def test_the_cache_that_grows_twice_as_fast_comes_first(build, two_runs):
    base, new = two_runs
    # when the two runs are diffed with --growth
    doc = diff_json(build, "--growth", base.dats[0], new.dats[0])
    ranked = growth_by_function(doc)
    # then the cache comes first, at each run's own rate (within 5 %), and the change is their difference
    name, cache = ranked[0]
    assert name == "cache_insert", [(n, s["change"]) for n, s in ranked]
    assert_near(cache["base"]["slope_bytes_per_minute"], rate(base))
    assert_near(cache["new"]["slope_bytes_per_minute"], rate(new))
    assert cache["change"]["slope_bytes_per_minute"] == pytest.approx(
        cache["new"]["slope_bytes_per_minute"] - cache["base"]["slope_bytes_per_minute"])
    assert cache["base"]["r2"] > 0.95 and cache["new"]["r2"] > 0.95
    # and the others changed by a small fraction of that, if they grew at all
    for other, site in ranked[1:]:
        assert other in ("pool_refresh", "sawtooth_push", "burst_once"), other
        assert abs(site["change"]["score"]) < 0.05 * cache["change"]["score"], (other, site)
    # and each side's window leaves out its first tenth
    for side in ("base", "new"):
        g = doc["growth"][side]
        assert g["warmup_ns"] == g["to_ns"] // 10 and g["from_ns"] == g["warmup_ns"] and g["buckets"] == 64, g
    # while the figures the diff always compares are unchanged by the option
    plain = diff_json(build, base.dats[0], new.dats[0])
    assert plain["growth"] is None
    assert support.diff_sites(plain) == support.diff_sites(doc)


def test_the_text_lists_the_cache_first_with_both_slopes(build, two_runs):
    base, new = two_runs
    run = support.memrec_raw(build, ["diff", "--growth", "--warmup", "1s", base.dats[0], new.dats[0]])
    assert run.returncode == 0, run.describe()
    section = run.stdout.split("\ngrowth of live bytes (BASE from ", 1)[1]
    assert section.startswith("1.000 s to "), section[:200]
    lines = section.splitlines()
    assert re.fullmatch(r"  \+5\.\d MiB/min -> \+11\.\d MiB/min \(\+5\.\d MiB/min\), R2 (0\.9[5-9]|1\.00) -> "
                        r"(0\.9[5-9]|1\.00)", lines[2]), lines[2]
    assert lines[3].endswith("cache_insert"), lines[3]


def test_two_ranges_of_one_dump(build, two_runs):
    base, _ = two_runs
    # when the first half of one run is compared with the second, up to before
    # the shutdown clears the cache (at 3 s)
    doc = diff_json(build, "--growth", base.dats[0], "--from", "0", "--to", "1.5s", "--from", "1.5s", "--to", "2.8s")
    name, cache = next((n, s) for n, s in growth_by_function(doc) if n == "cache_insert")
    # then the cache grew at the same rate in both, and each side's fit is within its range
    expected = rate(base)
    assert_near(cache["base"]["slope_bytes_per_minute"], expected)
    assert_near(cache["new"]["slope_bytes_per_minute"], expected)
    g = doc["growth"]
    assert (g["base"]["from_ns"], g["base"]["to_ns"]) == (150_000_000, 1_500_000_000), g["base"]
    assert (g["new"]["from_ns"], g["new"]["to_ns"]) == (1_630_000_000, 2_800_000_000), g["new"]


def test_warmup_needs_growth(build, two_runs):
    base, new = two_runs
    bad = support.memrec_raw(build, ["diff", "--warmup", "1s", base.dats[0], new.dats[0]])
    assert bad.returncode == 1 and "memrec: diff: --warmup applies to --growth only" in bad.stderr, bad.describe()
    bad = support.memrec_raw(build, ["diff", "--growth", "--warmup", "soon", base.dats[0], new.dats[0]])
    assert bad.returncode == 1 and "memrec: diff: --warmup" in bad.stderr, bad.describe()
