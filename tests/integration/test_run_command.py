"""`memrec run`: the exit code passes through (a signal death as 128 + N),
it ends with one line counting the dumps and naming the main one, --preload,
--start-disabled and --only work."""
import os
import signal
from pathlib import Path

import memrec_support as support


def memrec_run(build, tmp_path, *args, env=None):
    return support.memrec_raw(build, ["run", *map(str, args)], env=env)


def dumps_listed(run, out_dir: Path) -> list[Path]:
    """Every dump in `out_dir`, once the closing line of `memrec run` was
    checked to count them all and to name one of them as the main one."""
    dats = sorted(out_dir.glob("*.dat"))
    count, main = support.run_summary(run.stderr)
    assert (count, main in dats) == (len(dats), True), (run.stderr, dats)
    assert support.without_run_summary(run.stderr) == [], run.describe()
    return dats


def test_exit_code_and_dump_are_passed_through(build, tmp_path):
    # given a program that exits 3
    template = tmp_path / "%e.%p.dat"
    run = memrec_run(build, tmp_path, "--output", template, "--", build.program("exit_code"), 3)
    # then memrec exits 3 and names the one dump it wrote, which holds the leak
    assert run.returncode == 3, run.describe()
    (dump,) = dumps_listed(run, tmp_path)
    assert dump.parent == tmp_path and dump.name.startswith("exit_code.") and dump.exists()
    rep = support.only_process(support.report(build, dump))
    assert support.leaked_by_function(build, rep) == {"leak_once": (1, 100)}


def test_a_signal_death_exits_128_plus_the_signal(build, tmp_path):
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", "--", build.program("exit_code"), "kill",
                     int(signal.SIGTERM))
    assert run.returncode == 128 + signal.SIGTERM, run.describe()
    assert len(dumps_listed(run, tmp_path)) == 1


def test_every_dump_of_a_process_tree_is_listed(build, tmp_path):
    run = memrec_run(build, tmp_path, "-o", tmp_path / "%e.%p.dat", "--", build.program("fork_exec"), "fork")
    assert run.returncode == 0, run.describe()
    names = sorted(p.name.split(".")[0] for p in dumps_listed(run, tmp_path))
    assert names == ["fork_exec", "fork_exec", "leak_three"]


def test_the_default_template_writes_into_the_working_directory(build, tmp_path):
    argv = [str(build.memrec), "run", str(build.program("leak_three"))]
    run = support.finish(support.start(argv, support.clean_env(), cwd=tmp_path), argv, support.TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    (dump,) = dumps_listed(run, tmp_path)
    assert dump.parent == tmp_path and dump.name == f"memrec.leak_three.{dump.name.split('.')[2]}.dat"
    assert run.stdout == "leak_three: leaked 3 x 4242\n"


def test_an_explicit_preload_is_used(build, tmp_path):
    copy = tmp_path / "copy" / "libmemrec.so"
    copy.parent.mkdir()
    copy.write_bytes(build.preload.read_bytes())
    run = memrec_run(build, tmp_path, "--preload", copy, "-o", tmp_path / "%e.%p.dat", "--",
                     build.program("leak_three"))
    assert run.returncode == 0, run.describe()
    assert len(dumps_listed(run, tmp_path)) == 1
    missing = memrec_run(build, tmp_path, "--preload", tmp_path / "nope.so", "--", build.program("leak_three"))
    assert missing.returncode == 2 and "nope.so" in missing.stderr


def test_start_disabled_records_no_allocation(build, tmp_path):
    # given leak_three started with recording off (nothing toggles it on)
    run = memrec_run(build, tmp_path, "--start-disabled", "-o", tmp_path / "%e.%p.dat", "--",
                     build.program("leak_three"))
    assert run.returncode == 0, run.describe()
    (dump,) = dumps_listed(run, tmp_path)
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
    dumps = dumps_listed(run, tmp_path)
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


# ---- --only and the closing line ---------------------------------------------

def launcher_script(build, tmp_path) -> Path:
    """A shell launcher, as a pyenv shim is one: it runs leak_three, then
    execs exit_code 3 (the program the user meant)."""
    script = tmp_path / "launch.sh"
    script.write_text(f"#!/bin/sh\n{build.program('leak_three')}\nexec {build.program('exit_code')} 3\n")
    script.chmod(0o755)
    return script


def test_only_records_the_matching_programs_of_a_launcher(build, tmp_path):
    # given a shell script that runs leak_three and then execs exit_code
    script = launcher_script(build, tmp_path)
    out = support.fresh_dir(tmp_path, "out")
    # when memrec runs it with --only for the two programs, not the shell
    run = memrec_run(build, tmp_path, "--only", "[el]*_*", "-o", out / "%e.%p.dat", "--", script)
    # then the exit code and output are the script's
    assert run.returncode == 3, run.describe()
    assert run.stdout == "leak_three: leaked 3 x 4242\n"
    # and exactly the two programs wrote a dump, the shell none
    dumps = dumps_listed(run, out)
    assert sorted(p.name.split(".")[0] for p in dumps) == ["exit_code", "leak_three"]
    # and the closing line names exit_code's as the main one: the program the
    # root process exec'd, not the child it started first
    count, main = support.run_summary(run.stderr)
    assert run.stderr == f"memrec: 2 dumps in {out}; the main one: {main}\n"
    assert main.name.startswith("exit_code.")
    doc = support.report(build, *dumps)
    by_exe = {Path(p["exe"]).name: p for p in doc["processes"]}
    assert support.leaked_by_function(build, by_exe["leak_three"]["report"]) == {"leak_here": (3, 3 * 4242)}
    assert support.leaked_by_function(build, by_exe["exit_code"]["report"]) == {"leak_once": (1, 100)}


def test_without_only_the_launcher_records_too_and_the_main_dump_is_the_last_exec(build, tmp_path):
    script = launcher_script(build, tmp_path)
    out = support.fresh_dir(tmp_path, "out")
    run = memrec_run(build, tmp_path, "-o", out / "%e.%p.dat", "--", script)
    assert run.returncode == 3, run.describe()
    dumps = dumps_listed(run, out)
    assert sorted(p.name.split(".")[0] for p in dumps) == ["exit_code", "leak_three", "sh"]
    count, main = support.run_summary(run.stderr)
    assert count == 3 and main.name.startswith("exit_code.")
    # the shell's dump and exit_code's are the same process: the root
    (shell,) = [p for p in dumps if p.name.startswith("sh.")]
    assert shell.name.split(".")[1] == main.name.split(".")[1]


def test_only_that_matches_nothing_writes_no_dump(build, tmp_path):
    out = support.fresh_dir(tmp_path, "out")
    run = memrec_run(build, tmp_path, "--only", "nothing-is-called-this", "-o", out / "%e.%p.dat", "--",
                     build.program("leak_three"))
    assert (run.returncode, run.stdout) == (0, "leak_three: leaked 3 x 4242\n"), run.describe()
    assert list(out.iterdir()) == []
    assert run.stderr == f"memrec: no dump was written under {out / '%e.%p.dat'}\n"


def test_only_matches_the_file_name_when_argv0_differs(build, tmp_path):
    # given leak_three exec'd by bash with argv[0] "renamed", under --only leak_three
    out = support.fresh_dir(tmp_path, "out")
    script = tmp_path / "argv0.sh"
    script.write_text(f"#!/bin/bash\nexec -a renamed {build.program('leak_three')}\n")
    script.chmod(0o755)
    run = memrec_run(build, tmp_path, "--only", "leak_three", "-o", out / "%e.%p.dat", "--", script)
    # then it is recorded (its dump named by argv[0]), and bash is not
    assert run.returncode == 0, run.describe()
    (dump,) = dumps_listed(run, out)
    assert dump.name.startswith("renamed.")
