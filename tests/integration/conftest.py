"""Fixtures for the integration tests. The build directory is
$MEMREC_BUILD_DIR (absolute, as ./scripts/test sets it), else <repo>/build.
The helpers themselves live in memrec_support.py."""
from __future__ import annotations

import functools
import signal
from pathlib import Path

import pytest

pytest.register_assert_rewrite("memrec_support")
import memrec_support as support  # noqa: E402  (after the rewrite hook)

# A shell without job control starts background commands with SIGINT ignored
# (`./scripts/test &`, some CI runners), and an ignored signal stays ignored
# across exec: the programs under test would then survive the Ctrl-C and the
# raise(SIGINT) that the tests send them. Handled here, it is back to the
# default in every child.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def build() -> support.Build:
    return support.build_from_env()


@pytest.fixture(scope="session")
def preload(build) -> Path:
    if not build.preload.exists():
        pytest.fail(f"{build.preload} is missing: build the preload (ninja -C {build.root})")
    return build.preload


@pytest.fixture(scope="session")
def memrec_cli(build) -> Path:
    if not build.memrec.exists():
        pytest.fail(f"{build.memrec} is missing: build the analyzer (ninja -C {build.root})")
    return build.memrec


@pytest.fixture
def record(build, preload, tmp_path):
    """record(program, *args, env={...}, output="%e.%p.dat", timeout=..., cwd=..., input=b"...")
    runs the program under the preload with its dumps going to a fresh directory
    and returns a memrec_support.Run (returncode, stdout, stderr, pid, dats)."""
    def _record(program, *args, **kwargs) -> support.Run:
        return support.record(build, program, args, tmp_path=tmp_path, **kwargs)
    return _record


@pytest.fixture
def run_plain(build):
    """run_plain(program, *args, env=..., input=...): the same, without the preload."""
    def _run_plain(program, *args, **kwargs) -> support.Run:
        return support.run_plain(build, program, args, **kwargs)
    return _run_plain


@pytest.fixture(scope="session")
def info(build, memrec_cli):
    """info(dat) -> dict; info(a, b) -> [dict, dict]: `memrec info --json`."""
    return functools.partial(support.info, build)


@pytest.fixture(scope="session")
def leaks_by_function(build):
    """leaks_by_function(info_json) -> {function: (count, bytes)} by the
    innermost frame that lies in a test program or test library."""
    return functools.partial(support.leaks_by_function, build)


@pytest.fixture(scope="session")
def only_dump(info):
    """The info of a run's single dump; fails if there is not exactly one."""
    def _only_dump(run: support.Run) -> dict:
        assert len(run.dats) == 1, f"expected one dump, got {len(run.dats)}\n{run.describe()}"
        return info(run.dats[0])
    return _only_dump
