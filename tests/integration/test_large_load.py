"""The load path on a mid-size dump (50 M events): the report is the same
whichever way the load is split over threads, and a long load's progress
lines say how far it is when stderr is not a terminal.

tests/programs/churn makes 25 M allocations and frees into 4,096 slots: a
dump of 50 M events in a few hundred MB. `memrec report --json --threads 1`
(one decoding thread, the events replayed in one pass) is the reference:
the default load (decoding threads, the replay split by address, see
docs/design/load_pipeline.md) must print the same bytes.
"""
from __future__ import annotations

import json
import re

import pytest

from memrec_support import build_from_env, memrec_raw, record

ALLOCATIONS = 25_000_000  # 50 M events
# Recording 50 M events and reading them three times takes minutes on a busy
# 2-core machine: every process gets that much.
SLOW_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def build():
    return build_from_env()


@pytest.fixture(scope="module")
def mid_dump(build, tmp_path_factory):
    run = record(build, "churn", [str(ALLOCATIONS)], tmp_path=tmp_path_factory.mktemp("large"),
                 timeout=SLOW_TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.describe()
    return run.dats[0]


def report_json(build, dump, *args):
    run = memrec_raw(build, ["report", "--json", "--no-progress", "--top", "1000", *args, str(dump)],
                     timeout=SLOW_TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    return run.stdout


def test_the_report_of_50m_events_is_the_same_on_one_thread_and_on_many(build, mid_dump):
    # given a dump of 50 M events (25 M allocations, each freed)
    # when it is reported by the one-thread path and by the default one
    single = report_json(build, mid_dump, "--threads", "1")
    default = report_json(build, mid_dump)
    # then both print the same bytes, and the figures are the program's own
    assert default == single
    figures = json.loads(single)["processes"][0]["report"]
    assert figures["dump"]["complete"]
    assert ALLOCATIONS <= figures["allocations"] <= ALLOCATIONS + 2  # and setup_stdout's buffer, printf's
    assert figures["frees"] >= ALLOCATIONS  # each slot's block, freed when replaced or at the end


def test_a_load_off_a_terminal_prints_its_progress_lines(build, mid_dump):
    # given a progress interval shortened from 10 s to 50 ms by the environment
    env = {"MEMREC_PROGRESS_INTERVAL_MS": "50"}
    # when the dump is reported with stderr a pipe
    run = memrec_raw(build, ["report", "--threads", "1", str(mid_dump)], timeout=SLOW_TIMEOUT_S, env=env)
    assert run.returncode == 0, run.describe()
    # then stderr has lines of bytes read, events decoded and time left, which only grow
    lines = [line for line in run.stderr.splitlines() if line.startswith(f"memrec: loading {mid_dump}: ")]
    assert len(lines) >= 2, run.stderr
    pattern = re.compile(r"(\d+)% after (\d+) s: ([\d.]+) of ([\d.]+) MB read, ([\d,]+) events decoded, "
                         r"about (\d+) s left$")
    seen = [pattern.search(line) for line in lines]
    assert all(seen), lines
    read = [float(m.group(3)) for m in seen]
    events = [int(m.group(5).replace(",", "")) for m in seen]
    assert read == sorted(read) and events == sorted(events)
    assert all(float(m.group(4)) == pytest.approx(mid_dump.stat().st_size / 1e6, abs=0.1) for m in seen)
    assert 0 < events[-1] <= 2 * ALLOCATIONS + 2
