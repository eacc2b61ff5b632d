"""`scripts/bench --perf`: where memrec spends the time of churn-1t.

Records the workload under libmemrec.so with `perf record -g` (frame-pointer
call graphs; the self-time ranking below does not need them) and prints the
share of samples per thread (the program's, memrec-writer) and shared object,
then the hottest symbols, self time. Debian's libunwind is stripped: its
hottest unnamed addresses are unw_backtrace's static fast path (tdep_trace).
Used by bench.py only.
"""

import os
import re
import subprocess

import bench_measure as measure


def _perf(args):
    result = subprocess.run(["perf", *args], capture_output=True, text=True, env=measure.clean_env())
    if result.returncode != 0:
        raise measure.BenchError(f"perf {' '.join(args)} failed: {result.stderr.strip()[-2000:]}")
    return result.stdout


def _report_lines(data, sort, limit, extra=()):
    text = _perf(["report", "-i", data, "--stdio", "--no-children", "--sort", sort, "--percent-limit", str(limit),
                  *extra])
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


_ROW = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+(\S+)\s+\[.\]\s+(.*)$")


def _merge_unnamed(lines):
    """(share, thread, object, symbol) rows, best first, with the bare addresses
    of a stripped library summed into one row per thread and library."""
    totals = {}
    for line in lines:
        match = _ROW.match(line)
        if match is None:
            continue
        share, comm, dso, symbol = float(match.group(1)), match.group(2), match.group(3), match.group(4).strip()
        if symbol.startswith("0x"):
            symbol = "(unnamed code: no symbols for this library)"
        totals[(comm, dso, symbol)] = totals.get((comm, dso, symbol), 0.0) + share
    return sorted(((share, *key) for key, share in totals.items()), reverse=True)


def perf_profile(workload, preload, work_dir, data):
    output = os.path.join(work_dir, "memrec.perf.%p.dat")
    # perf itself must not run under the preload: env(1) hands it to the target only.
    target = ["env", f"LD_PRELOAD={preload}", f"MEMREC_OUTPUT={output}", *workload.argv]
    if os.path.exists(data):
        os.unlink(data)  # else perf keeps it as DATA.old
    _perf(["record", "-g", "-F", "4000", "-o", data, "--", *target])
    print(f"== perf: samples by thread and shared object ({workload.name} under memrec: {workload.describe}) ==")
    for line in _report_lines(data, "comm,dso", 0.5, ["-g", "none"]):
        print(line)
    print("== perf: hottest symbols, self time, by thread ==")
    for share, comm, dso, symbol in _merge_unnamed(_report_lines(data, "comm,dso,sym", 0.1, ["-g", "none"]))[:25]:
        print(f"{share:8.2f}%  {comm:<14} {dso:<20} {symbol}")
    print(f"== perf: hottest symbols in {os.path.basename(preload)} ==")
    for line in _report_lines(data, "sym", 0.2, ["-g", "none", "--dsos", os.path.basename(preload)])[:30]:
        print(line)
    print(f"(`perf report -i {data}` explores the profile further)")
