"""`memrec run`: the exit code passes through (a signal death as 128 + N),
the dumps are listed, --preload and --start-disabled work."""
import os
import signal
from pathlib import Path

import memrec_support as support


def memrec_run(build, tmp_path, *args, env=None):
    return support.memrec_raw(build, ["run", *map(str, args)], env=env)


def dumps_listed(run) -> list[Path]:
    prefix = "memrec: dump written to "
    return [Path(line[len(prefix):]) for line in run.stderr.splitlines() if line.startswith(prefix)]


def test_exit_code_and_dump_are_passed_through(build, tmp_path):
    # given a program that exits 3
    template = tmp_path / "%e.%p.dat"
    run = memrec_run(build, tmp_path, "--output", template, "--", build.program("exit_code"), 3)
    # then memrec exits 3 and names the one dump it wrote, which holds the leak
    assert run.returncode == 3, run.describe()
    (dump,) = dumps_listed(run)
    assert dump.parent == tmp_path and dump.name.startswith("exit_code.") and dump.exists()
    rep = support.only_process(support.report(build, dump))
    assert support.leaked_by_function(build, rep) == {"leak_once": (1, 100)}


def test_a_signal_death_exits_128_plus_the_signal(build, tmp_path):
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", "--", build.program("exit_code"), "kill",
                     int(signal.SIGTERM))
    assert run.returncode == 128 + signal.SIGTERM, run.describe()
    assert len(dumps_listed(run)) == 1


def test_every_dump_of_a_process_tree_is_listed(build, tmp_path):
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", "--", build.program("fork_exec"), "fork")
    assert run.returncode == 0, run.describe()
    names = sorted(p.name.split(".")[0] for p in dumps_listed(run))
    assert names == ["fork_exec", "fork_exec", "leak_three"]


def test_the_default_template_writes_into_the_working_directory(build, tmp_path):
    argv = [str(build.memrec), "run", str(build.program("leak_three"))]
    run = support.finish(support.start(argv, support.clean_env(), cwd=tmp_path), argv, support.TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    (dump,) = dumps_listed(run)
    assert dump.parent == tmp_path and dump.name == f"memrec.leak_three.{dump.name.split('.')[2]}.dat"
    assert run.stdout == "leak_three: leaked 3 x 4242\n"


def test_an_explicit_preload_is_used(build, tmp_path):
    copy = tmp_path / "copy" / "libmemrec.so"
    copy.parent.mkdir()
    copy.write_bytes(build.preload.read_bytes())
    run = memrec_run(build, tmp_path, "--preload", copy, "-o", tmp_path / "%e.%p.dat", "--",
                     build.program("leak_three"))
    assert run.returncode == 0, run.describe()
    assert len(dumps_listed(run)) == 1
    missing = memrec_run(build, tmp_path, "--preload", tmp_path / "nope.so", "--", build.program("leak_three"))
    assert missing.returncode == 2 and "nope.so" in missing.stderr


def test_start_disabled_records_no_allocation(build, tmp_path):
    # given leak_three started with recording off (nothing toggles it on)
    run = memrec_run(build, tmp_path, "--start-disabled", "-o", tmp_path / "%e.%p.dat", "--",
                     build.program("leak_three"))
    assert run.returncode == 0, run.describe()
    (dump,) = dumps_listed(run)
    rep = support.only_process(support.report(build, dump))
    # then its dump holds no allocation and no leak
    assert rep["allocations"] == 0 and rep["leaked"]["count"] == 0


def test_program_arguments_that_look_like_options_are_the_programs(build, tmp_path):
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", build.program("exit_code"), "--top")
    # exit_code's atoi("--top") is 0: the argument reached it, not memrec's parser
    assert run.returncode == 0, run.describe()


def test_no_command_is_a_usage_error(build, tmp_path):
    assert memrec_run(build, tmp_path).returncode == 1
    missing = memrec_run(build, tmp_path, "-o", tmp_path / "x.%p.dat", "--", tmp_path / "no-such-program")
    assert missing.returncode == 127


def dash_exec_dumps(build, tmp_path, command, env=None):
    """`memrec run -- dash -c COMMAND`: the run, and dash's report and the
    exec'd program's from `memrec report --json` of both dumps."""
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", "--", "/usr/bin/dash", "-c", command, env=env)
    assert run.returncode == 0, run.describe()
    dumps = dumps_listed(run)
    assert len(dumps) == 2, run.describe()
    doc = support.report(build, *dumps)
    by_exe = {os.path.basename(p["exe"]): p for p in doc["processes"]}
    assert sorted(by_exe) == ["dash", "true"], list(by_exe)
    return run, dumps, by_exe["dash"], by_exe["true"]


def test_a_shell_that_execs_ends_by_exec_not_killed(build, tmp_path):
    # given `dash -c 'exec /bin/true'` under memrec run
    run, dumps, dash, true = dash_exec_dumps(build, tmp_path, "exec /bin/true")
    # then dash's dump ended by exec of /bin/true: complete, not killed
    loss = dash["report"]["dump"]
    assert (loss["complete"], loss["clean_end"], loss["ended_by_exec"]) == (True, False, True)
    assert loss["exec_path"] == "/bin/true"
    # and true's dump, the same pid, is linked under it as its exec and ended cleanly
    assert (true["pid"], true["link"], true["parent"]["pid"]) == (dash["pid"], "exec", dash["pid"])
    assert true["report"]["dump"]["clean_end"] is True
    assert true["report"]["dump"]["ended_by_exec"] is False
    # and the text reports say so too
    dash_dat = next(p for p in dumps if p.name.startswith("dash."))
    text = support.memrec_raw(build, ["report", dash_dat])
    assert text.returncode == 0, text.describe()
    assert "dump: ended by exec of /bin/true" in text.stdout
    assert "killed" not in text.stdout
    info = support.memrec_raw(build, ["info", dash_dat])
    assert info.returncode == 0, info.describe()
    assert "  end       exec of /bin/true: the process went on as that program" in info.stdout


def test_a_shell_that_searches_path_ends_by_the_exec_that_worked(build, tmp_path):
    # given `dash -c 'exec true'` with a PATH whose first folder does not
    # hold it: dash's execve fails there (ENOENT) before it works in /usr/bin
    missing = tmp_path / "no-such-folder"
    run, dumps, dash, true = dash_exec_dumps(build, tmp_path, "exec true",
                                             env={"PATH": f"{missing}:/usr/bin:/bin"})
    # then dash's dump ended by the exec that worked, not the one that failed
    loss = dash["report"]["dump"]
    assert (loss["complete"], loss["ended_by_exec"], loss["exec_path"]) == (True, True, "/usr/bin/true")
    assert true["link"] == "exec"
