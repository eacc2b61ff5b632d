"""The reference cannot drift from the code: docs/reference.md, the README's
tables and the man page are printed from `memrec --help`, `memrec COMMAND
--help` and `memrec help env`; `memrec help env` prints the preload's own table
(preload/include/memrec/preload/environment.h); and the preload reads exactly
the variables of that table, records each under its header key, and uses the
documented default when it is unset."""
from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from memrec_support import REPO, clean_env, finish, info, record, start

ENVIRONMENT_H = REPO / "preload" / "include" / "memrec" / "preload" / "environment.h"

# A value that is not the default for each variable, and what the dump's header
# then records. A variable added to environment.h needs a line here.
NON_DEFAULTS = {
    "MEMREC_START_DISABLED": ("1", "1"),
    "MEMREC_SIGNAL": ("USR2", str(int(signal.SIGUSR2))),
    "MEMREC_MAX_DEPTH": ("77", "77"),
    "MEMREC_FOLLOW_EXEC": ("0", "0"),
    "MEMREC_RSS_INTERVAL_MS": ("0", "0"),
    "MEMREC_FLUSH_INTERVAL_MS": ("20", "20"),
    "MEMREC_LOSSY": ("1", "1"),
    "MEMREC_ZSTD_LEVEL": ("5", "5"),
    "MEMREC_ONLY": ("leak_*", "leak_*"),
    "MEMREC_WRITERS": ("2", "2"),
    "MEMREC_STAMP": ("tsc", "tsc"),
}
# How the header records a default that is written as a name in the docs.
HEADER_FORM = {"SIGUSR1": str(int(signal.SIGUSR1))}


def memrec(build, *args: str):
    argv = [build.memrec, *args]
    return finish(start(argv, clean_env()), argv, 60)


def table() -> dict[str, tuple[str, str]]:
    """{name: (default, header key)} as environment.h declares them."""
    entries = re.findall(r'\{\s*"(MEMREC_\w+)",\s*"([^"]*)",\s*"(\w+)"', ENVIRONMENT_H.read_text())
    assert entries, f"no variable found in {ENVIRONMENT_H}"
    return {name: (default, key) for name, default, key in entries}


def printed_variables(build) -> dict[str, str]:
    result = memrec(build, "help", "env")
    assert result.returncode == 0, result.describe()
    return dict(re.findall(r"^(MEMREC_\w+)=(.*)$", result.stdout, re.M))


def test_docs_readme_and_help_agree(build, memrec_cli):
    # given the committed docs/reference.md and README.md
    # when scripts/lib/reference.py regenerates them from this build's memrec
    check = subprocess.run(["/usr/bin/python3", str(REPO / "scripts" / "lib" / "reference.py"),
                            "--memrec", str(build.memrec), "--check"], capture_output=True, text=True, timeout=120)
    # then nothing differs
    assert check.returncode == 0, check.stdout + check.stderr


def test_help_env_prints_the_preloads_table(build, memrec_cli):
    # given environment.h's table; then `memrec help env` prints each entry with its default
    assert printed_variables(build) == {name: default for name, (default, _) in table().items()}


def test_the_preload_reads_variables_only_through_the_table():
    # given every preload source
    sources = [p for p in (REPO / "preload").rglob("*") if p.suffix in (".cpp", ".h") and p != ENVIRONMENT_H]
    # then none names a MEMREC_ variable in a string (getenv goes through the table)
    offenders = [f"{p.relative_to(REPO)}: {m}" for p in sources for m in re.findall(r'"MEMREC_\w*', p.read_text())]
    assert offenders == []


def test_every_variable_is_read_and_recorded_under_its_header_key(build, tmp_path, only_dump):
    # given a value other than the default for every variable of the table
    assert set(NON_DEFAULTS) | {"MEMREC_OUTPUT"} == set(table()), "give each new variable a value in NON_DEFAULTS"
    env = {name: value for name, (value, _) in NON_DEFAULTS.items()}
    # when leak_three runs under the preload with them
    run = record(build, "leak_three", env=env, tmp_path=tmp_path)
    assert run.returncode == 0, run.describe()
    # then the header records each, under the key the table gives it
    options = only_dump(run)["header"]["options"]
    for name, (_, recorded) in NON_DEFAULTS.items():
        assert options[table()[name][1]] == recorded, name


def test_every_unset_variable_takes_its_documented_default(build, preload, tmp_path):
    # given no MEMREC_ variable at all, in an empty folder
    argv = [build.program("leak_three")]
    env = clean_env({"LD_PRELOAD": str(preload)})
    # when leak_three runs under the preload
    result = finish(start(argv, env, cwd=tmp_path), argv, 60)
    assert result.returncode == 0, result.describe()
    # then the dump is where the default MEMREC_OUTPUT puts it
    (dat,) = tmp_path.glob("*.dat")
    assert dat.name == f"memrec.leak_three.{result.pid}.dat"
    # and its header records every documented default
    options = info(build, dat)["header"]["options"]
    for name, (default, key) in table().items():
        assert options[key] == HEADER_FORM.get(default, default), name


@pytest.mark.parametrize("command", ["run", "report", "view", "export", "diff", "info"])
def test_help_command_is_the_commands_own_help(build, memrec_cli, command):
    # when asked for a command's help both ways; then the text is the same
    via_help = memrec(build, "help", command)
    own = memrec(build, command, "--help")
    assert via_help.returncode == own.returncode == 0, via_help.describe() + own.describe()
    assert via_help.stdout == own.stdout


def test_help_of_an_unknown_topic_is_a_usage_error(build, memrec_cli):
    result = memrec(build, "help", "frobnicate")
    assert result.returncode == 1
    assert "unknown command 'frobnicate'" in result.stderr
