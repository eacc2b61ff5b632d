#!/usr/bin/python3
"""Counts what scripts/test ran and prints its summary; stdlib only.

Reads each suite's own report (meson's test log plus the doctest JUnit files
written through doctest_junit.py, pytest's JUnit XML, the exit status of the
format check and of the quick bench run), prints one line per suite and the
failures, and ends with exactly one line `N passed, N failed`. Exits 0 when
nothing failed, else 1. A suite that ran nothing, or whose runner failed without
saying which test failed, counts as one failure: an empty or broken suite must
never look like a pass.
"""

import argparse
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doctest_junit import command_key  # noqa: E402

MAX_FAILURE_LINES = 60
MESON_PASSED = {"OK", "EXPECTEDFAIL"}
MESON_SKIPPED = {"SKIP"}
PYTEST_EXIT_MEANING = {2: "was interrupted (collection errors?)", 3: "hit an internal error",
                       4: "was called wrongly (is tests/integration missing?)"}


class Suite:
    def __init__(self, name, what):
        self.name, self.what = name, what
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def fail(self, message):
        self.failed += 1
        self.failures.append(message)


LOCATION = re.compile(r"^\s*(\S+:\d+):")


def failure_detail(problem):
    """`message (file:line)` for a JUnit <failure>/<error>, from doctest or pytest."""
    lines = [line.strip() for line in (problem.text or "").splitlines() if line.strip()]
    message = (problem.get("message") or "").strip().splitlines()
    detail = message[0][:200] if message else ""
    if detail in ("", "exception", "collection failure"):
        # doctest reports a crash as "exception" with the signal as text; pytest a
        # collection error on lines starting "E", the exception last.
        errors = [line[1:].strip() for line in lines if line.startswith("E ")]
        explanation = errors[-1] if errors else next((l for l in lines if not LOCATION.match(l)), "")
        detail = ": ".join(part for part in (detail, explanation[:200]) if part) or "failed"
    # doctest puts the location first, pytest last (after frames of the libraries
    # it went through, which have absolute paths): prefer the repository's.
    locations = [match.group(1) for match in map(LOCATION.match, lines) if match]
    ours = [location for location in locations if not location.startswith("/")]
    return f"{detail} ({(ours or locations)[-1]})" if locations else detail


def junit_cases(path, with_class):
    """Yields (outcome, label, detail) for each <testcase> of a JUnit XML file."""
    for case in ET.parse(path).getroot().iter("testcase"):
        parts = (case.get("classname"), case.get("name")) if with_class else (case.get("name"),)
        label = "::".join(part for part in parts if part)
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            yield "failed", label, failure_detail(problem)
        elif case.find("skipped") is not None:
            yield "skipped", label, ""
        else:
            yield "passed", label, ""


def add_cases(suite, path, prefix="", with_class=True):
    """Adds the cases of one JUnit file to `suite`; returns how many failed."""
    failed = 0
    for outcome, label, detail in junit_cases(path, with_class):
        if outcome == "failed":
            failed += 1
            suite.fail(f"{prefix}{label}: {detail}")
        elif outcome == "skipped":
            suite.skipped += 1
        else:
            suite.passed += 1
    return failed


def find_meson_log(base):
    """meson test writes BASE.json, or BASE-WRAPPER.json when run with --wrapper."""
    candidates = [base + ".json"] + sorted(glob.glob(glob.escape(base) + "-*.json"), key=os.path.getmtime)
    existing = [path for path in candidates if os.path.exists(path)]
    return existing[-1] if existing else None


def count_unit(log_base, junit_dir, exit_code):
    suite = Suite("unit", "meson test --suite unit; doctest cases")
    log_path = find_meson_log(log_base)
    if log_path is None:
        if exit_code == 0:
            suite.fail("meson test ran no test in suite 'unit': register doctest executables with "
                       "test(..., suite : 'unit')")
        else:
            suite.fail(f"meson test exited {exit_code} without writing {log_base}.json")
        return suite
    executables = 0
    with open(log_path, encoding="utf-8") as log:
        for line in log:
            if not line.strip():
                continue
            test = json.loads(line)
            executables += 1
            name, result = test["name"], test["result"]
            command = test.get("command") or []
            if command and os.path.basename(command[0]) == "doctest_junit.py":
                command = command[1:]
            xml_path = os.path.join(junit_dir, command_key(command) + ".xml") if command else ""
            cases_failed = None
            if xml_path and os.path.exists(xml_path):
                try:
                    cases_failed = add_cases(suite, xml_path, prefix=f"{name}: ", with_class=False)
                except ET.ParseError as error:
                    suite.fail(f"{name}: its doctest report {xml_path} does not parse ({error})")
                    continue
            if result in MESON_SKIPPED:
                suite.skipped += 1
            elif result in MESON_PASSED:
                if cases_failed is None:
                    suite.passed += 1  # not a doctest executable: one test
            elif not cases_failed:
                # The process failed (crash, timeout, exit status) and no case says why.
                suite.fail(f"{name}: {result} (exit status {test.get('returncode')}); "
                           f"see {log_path[:-len('.json')]}.txt")
    if exit_code != 0 and suite.failed == 0:
        suite.fail(f"meson test exited {exit_code} although no test in {log_path} failed")
    if executables == 0 or suite.passed + suite.failed == 0:
        suite.fail(f"meson test ran no unit test case ({executables} executables)")
    suite.what = f"doctest cases in {executables} test executable{'' if executables == 1 else 's'}"
    return suite


# What wrote each JUnit report, for the summary line.
JUNIT_WRITERS = {"integration": "pytest", "browser": "node --test, chromium",
                 "fuzz": "libFuzzer + ASan + UBSan on the reader"}


def count_pytest(name, xml_path, exit_code):
    suite = Suite(name, JUNIT_WRITERS.get(name, "pytest"))
    cases_failed = 0
    if os.path.exists(xml_path):
        try:
            cases_failed = add_cases(suite, xml_path)
        except ET.ParseError as error:
            suite.fail(f"pytest's report {xml_path} does not parse ({error})")
            return suite
    if exit_code == 5:
        suite.fail("pytest collected no tests (exit status 5)")
    elif exit_code != 0 and cases_failed == 0:
        meaning = PYTEST_EXIT_MEANING.get(exit_code, "failed")
        suite.fail(f"pytest {meaning}: exit status {exit_code}")
    elif exit_code == 0 and not os.path.exists(xml_path):
        suite.fail(f"pytest passed but wrote no report at {xml_path}")
    return suite


def count_check(name, what, exit_code, failure_message):
    suite = Suite(name, what)
    if exit_code == 0:
        suite.passed = 1
    else:
        suite.fail(failure_message)
    return suite


def guarded(name, count, *args):
    """Runs one counter; a bug in reading a report fails that suite, not the summary."""
    try:
        return count(*args)
    except Exception as error:  # noqa: BLE001 - any error here must still end in a count
        suite = Suite(name, "results unreadable")
        suite.fail(f"count_results.py could not read the results: {type(error).__name__}: {error}")
        return suite


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", nargs=3, metavar=("MESON_LOG_BASE", "DOCTEST_JUNIT_DIR", "EXIT"))
    parser.add_argument("--pytest", nargs=3, action="append", default=[], metavar=("NAME", "JUNIT_XML", "EXIT"))
    parser.add_argument("--format", nargs=2, metavar=("EXIT", "FILE_COUNT"))
    parser.add_argument("--bench", type=int, metavar="EXIT")
    args = parser.parse_args()

    suites = []
    if args.unit:
        log, junit_dir, code = args.unit
        suites.append(guarded("unit", count_unit, log, junit_dir, int(code)))
    for name, xml_path, code in args.pytest:
        suites.append(guarded(name, count_pytest, name, xml_path, int(code)))
    if args.format:
        code, files = int(args.format[0]), args.format[1]
        suites.append(count_check("format", f"clang-format --dry-run --Werror over {files} files", code,
                                  "clang-format: sources are not formatted (see above); run ./scripts/format"))
    if args.bench is not None:
        suites.append(count_check("bench", "scripts/bench --quick: every workload once, tiny sizes", args.bench,
                                  "scripts/bench --quick failed (see its output above)"))

    failures = [f"{suite.name}: {message}" for suite in suites for message in suite.failures]
    if failures:
        print("\n== failures ==")
        for message in failures[:MAX_FAILURE_LINES]:
            print(f"FAILED {message}")
        if len(failures) > MAX_FAILURE_LINES:
            print(f"... and {len(failures) - MAX_FAILURE_LINES} more")
    print("\n== summary ==")
    for suite in suites:
        print(f"{suite.name:<12} {suite.passed:>5} passed {suite.failed:>5} failed {suite.skipped:>5} skipped"
              f"   ({suite.what})")
    passed = sum(suite.passed for suite in suites)
    failed = sum(suite.failed for suite in suites)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
