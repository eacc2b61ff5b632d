"""The recorder's descriptors never touch the program's (docs/design/descriptors.md):
a fork child that dup2()s onto the lowest free number keeps what it put there,
and the recorder adds few descriptors to the program's table."""
import os
import re
import resource
import shutil

import pytest

import memrec_support as support

STRACE = shutil.which("strace")


def test_fork_children_keep_the_descriptor_they_dup2_onto(record, run_plain):
    # 600 children of 2 ms each, 8 at a time: about 2 s under the preload on
    # 2 cores. Before the writer had a table of its own it lost 1 in 2000.
    plain = run_plain("fork_dup2", "600")
    run = record("fork_dup2", "600", output="%e.%p.dat")
    assert plain.returncode == 0, plain.describe()
    assert run.returncode == plain.returncode, run.describe()
    assert run.stdout == plain.stdout == "600 children, 0 lost descriptors\n"
    assert run.stderr == plain.stderr
    assert len(run.dats) == 601, f"one dump per process expected:\n{run.describe()}"


def _limit_descriptors(n):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return set_limit


@pytest.mark.parametrize("limit", [8])
def test_python_runs_with_few_descriptors(record, run_plain, limit):
    # python3 -c needs 6 plain; the recorder's dump, statm and stat are in its
    # writer's own table and count for nothing; libunwind's pipe takes 2.
    # (12 were needed when the recorder's files were in the program's table.)
    args = ["-c", "print(1)"]
    plain = run_plain("/usr/bin/python3", *args, preexec_fn=_limit_descriptors(limit))
    run = record("/usr/bin/python3", *args, preexec_fn=_limit_descriptors(limit))
    assert plain.returncode == 0 and plain.stdout == "1\n", plain.describe()
    assert (run.returncode, run.stdout, run.stderr) == (plain.returncode, plain.stdout, plain.stderr), run.describe()
    assert len(run.dats) == 1, run.describe()


def test_threads_keep_the_descriptors_they_dup2_onto_while_new_threads_start(record, run_plain):
    # given dup2_threads: one thread dup2()s a pipe onto the 8 numbers above
    # the program's pipe, checks each and closes them, 3000 rounds, while the
    # main thread starts threads 4 at a time that allocate (a recorder that
    # read /proc/self/maps on each new thread lost 3 to 26 of them, and made
    # some dup2() fail with EBUSY)
    plain = run_plain("dup2_threads", "3000")
    # when it runs under the preload
    run = record("dup2_threads", "3000")
    # then it loses nothing, and its own pipe and the low numbers open at the
    # end are those of the run without the preload (libunwind's pipe took 3
    # and 4 for the whole run)
    assert plain.returncode == 0, plain.describe()
    assert plain.stdout == "dup2_threads: 3000 rounds, pipe 3 4, 0 lost, 0 failed dup2, low fds: 0 1 2 3 4\n"
    assert (run.returncode, run.stdout, run.stderr) == (plain.returncode, plain.stdout, plain.stderr), run.describe()


_SYSCALL = re.compile(r"^(\d+) (?:<\.\.\. (\w+) resumed>|(\w+)\()(.*?)(?:= (-?\d+).*)?$")
_MAKES_FD = {"open", "openat", "pipe", "pipe2", "socket", "dup"}


def _descriptors_made_on_program_threads(log):
    """The descriptors made (syscall and path) on the program's threads once
    the program has started one, in an `strace -f` log. The recorder's writer
    thread (the one that gave itself a table of its own with
    close_range(CLOSE_RANGE_UNSHARE)) is not a program thread, nor are the
    pool writers it starts, which share that table."""
    lines = log.read_text().splitlines()
    # On a busy machine strace splits the call: "close_range(…, CLOSE_RANGE_UNSHARE
    # <unfinished ...>", then "<... close_range resumed>) = 0" on its own line.
    unshares = {m.group(1) for line in lines if "CLOSE_RANGE_UNSHARE" in line
                for m in [re.match(r"^(\d+) ", line)] if m}
    writers = {m.group(1) for line in lines
               if re.search(r"CLOSE_RANGE_UNSHARE\) += 0$|<\.\.\. close_range resumed>\) += 0$", line)
               for m in [re.match(r"^(\d+) ", line)] if m and m.group(1) in unshares}
    started, pending, made = False, {}, set()
    for line in lines:
        m = _SYSCALL.match(line)
        if not m:
            continue
        tid, resumed, name, rest, result = m.groups()
        name = name or resumed
        if line.endswith("<unfinished ...>"):
            pending[tid] = rest
            continue
        if resumed:
            rest = pending.pop(tid, "") + rest
        # A thread the writer starts (a pool writer) shares the writer's own
        # table: a recorder thread too.
        if name in ("clone", "clone3") and result is not None and tid in writers and int(result) > 0:
            writers.add(result)
        if name in ("clone", "clone3") and result is not None and result not in writers and int(result) > 0:
            started = True
        if started and tid not in writers and name in _MAKES_FD and result is not None and int(result) >= 0:
            path = re.search(r'"([^"]*)"', rest)
            made.add((name, path.group(1) if path else ""))
    return made


@pytest.mark.skipif(STRACE is None, reason="strace is not installed")
def test_the_recorder_makes_no_descriptor_on_a_program_thread(build, run_plain, tmp_path):
    # given dup2_threads, traced by strace, without and with the preload
    def traced(name, preload):
        log = tmp_path / f"{name}.strace"
        env = ["-E", f"LD_PRELOAD={build.preload}", "-E", f"MEMREC_OUTPUT={tmp_path}/%e.%p.dat"] if preload else []
        run = run_plain(STRACE, "-f", "-qq", "-o", log, "-e", "trace=open,openat,pipe,pipe2,socket,dup,close_range,"
                        "clone,clone3", *env, build.program("dup2_threads"), "300")
        assert run.returncode == 0, run.describe()
        return _descriptors_made_on_program_threads(log)

    plain = traced("plain", preload=False)
    # when the program's threads run under the preload
    recorded = traced("recorded", preload=True)
    # then they open nothing the program does not (the recorder once opened
    # /proc/self/maps on each new thread, on the lowest free number)
    assert plain == set()
    assert recorded == plain


def test_the_control_socket_is_not_among_the_programs_descriptors(build, tmp_path):
    # given ctl_target listing its descriptors before and after the recorder's socket exists
    plain = support.Driven(build, tmp_path, preload=False)
    try:
        plain_fds = plain.send("fds", expect=None)
    finally:
        plain.quit()
    target = support.Driven(build, tmp_path)
    try:
        pid, _ = target.listening()
        fds = target.send("fds", expect=None)
        # then the program sees what it sees without memrec
        assert fds == plain_fds
        # and no descriptor of its table is the socket the kernel lists under its name
        inodes = {line.split()[6] for line in open("/proc/net/unix") if line.rstrip().endswith(f"@memrec-ctl.{pid}")}
        assert inodes, "the socket is listening"
        held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert not {f"socket:[{i}]" for i in inodes} & held
    finally:
        target.quit()
