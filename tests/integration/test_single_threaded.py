"""Programs that must be alone (docs/design/single_threaded.md): unshare(1)
of a user namespace, a program that checks it has one thread as Chromium's
zygote does, and Chromium itself. Under the preload each exits and prints
exactly as without it, and its dumps read."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import memrec_support as support

UNSHARE = "/usr/bin/unshare"
CHROMIUM = "/usr/bin/chromium"


def same_as_plain(record, run_plain, program: str, stdout: str) -> support.Run:
    """Runs `program` with and without the preload: both exit 0 and print
    `stdout`, and the preload adds nothing to stderr. The recorded run."""
    plain = run_plain(program)
    run = record(program)
    assert (plain.returncode, plain.stdout) == (0, stdout), plain.describe()
    assert (run.returncode, run.stdout, run.stderr) == (0, stdout, plain.stderr), run.describe()
    return run


def need_user_namespaces(run_plain) -> None:
    """Skips where the machine itself refuses user namespaces (a container
    without them): there is nothing then that the preload could break."""
    if shutil.which(UNSHARE) is None:
        pytest.skip("util-linux's unshare is not installed")
    plain = run_plain(UNSHARE, "--user", "true")
    if plain.returncode != 0:
        pytest.skip(f"user namespaces are refused here without the preload too: {plain.stderr.strip()}")


@pytest.mark.parametrize("argv", [["--user", "true"], ["--user", "--map-root-user", "id", "-u"]],
                         ids=["user-true", "map-root-user-id"])
def test_unshare_user_behaves_as_without_the_preload(record, run_plain, info, argv):
    need_user_namespaces(run_plain)
    # given unshare(1) creating a user namespace, with and without the preload
    plain = run_plain(UNSHARE, *argv)
    run = record(UNSHARE, *argv)
    # then the exit code and the output are the same ("0" for id -u as root of the namespace)
    assert plain.returncode == 0, plain.describe()
    assert (run.returncode, run.stdout, run.stderr) == (plain.returncode, plain.stdout, plain.stderr), run.describe()
    # and unshare's dump and its exec'd program's (same pid) read, ended by exec and cleanly
    dumps = info(*run.dats)
    by_exe = {Path(d["header"]["exe"]).name: d for d in dumps}
    assert sorted(by_exe) == sorted(["unshare", Path(shutil.which(argv[-2] if argv[-1] == "-u" else argv[-1])).name])
    assert by_exe["unshare"]["ended_by_exec"] is True
    assert by_exe["unshare"]["counts"]["alloc"] > 0
    program = next(d for name, d in by_exe.items() if name != "unshare")
    assert program["clean_end"] is True and program["header"]["pid"] == by_exe["unshare"]["header"]["pid"]


def test_nsenter_into_a_user_namespace_behaves_as_without_the_preload(record, run_plain, info):
    need_user_namespaces(run_plain)
    if shutil.which("nsenter") is None:
        pytest.skip("util-linux's nsenter is not installed")
    # given a process (not recorded) in a user namespace of its own, root in it
    holder = support.start([UNSHARE, "--user", "--map-root-user", "sleep", "60"], support.clean_env())
    try:
        target = str(holder.pid)  # unshare execs sleep: the same pid, once its namespace is set up
        comm = Path(f"/proc/{target}/comm")
        deadline = time.monotonic() + support.TIMEOUT_S
        while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)
        argv = ["--user", "--target", target, "id", "-u"]
        # when nsenter joins it with setns(), with and without the preload
        plain = run_plain("/usr/bin/nsenter", *argv)
        run = record("/usr/bin/nsenter", *argv)
    finally:
        support.kill_tree(holder)
    # then both print id -u's "0" and exit 0
    assert (plain.returncode, plain.stdout) == (0, "0\n"), plain.describe()
    assert (run.returncode, run.stdout, run.stderr) == (0, "0\n", plain.stderr), run.describe()
    # and nsenter's dump and id's read to their ends
    dumps = {Path(d["header"]["exe"]).name: d for d in info(*run.dats)}
    assert sorted(dumps) == ["id", "nsenter"]
    assert dumps["nsenter"]["ended_by_exec"] is True and dumps["id"]["clean_end"] is True


def test_unshare_with_the_writer_running_parks_it_and_records_on(record, run_plain, only_dump, leaks_by_function):
    need_user_namespaces(run_plain)
    # given a program whose second thread started the writer, and which then
    # calls unshare(CLONE_NEWUSER)
    # then unshare succeeds under the preload as without it
    run = same_as_plain(record, run_plain, "unshare_user", "unshare: ok\n")
    # and the one dump holds the leaks from before and after the call: the
    # writer parked for it appended to the same file after it
    dump = only_dump(run)
    assert dump["clean_end"] is True
    # (glibc keeps what pthread_create allocated for the joined thread: main's)
    support.assert_leaks(leaks_by_function(dump), {"leak_before": (3, 3 * 1111), "worker_leak": (1, 2222),
                                                   "leak_after": (2, 2 * 3333)}, ignore=("main",))
    assert dump["counts"]["threads"] == 2
    support.assert_consistent(dump)


def test_a_program_that_checks_it_is_alone_sees_one_thread(record, run_plain, only_dump, leaks_by_function):
    # given a program that counts its threads in /proc/self/task, as
    # Chromium's zygote does, after a few allocations
    # then under the preload it also sees one thread (the writer has not started)
    run = same_as_plain(record, run_plain, "alone_check", "threads: 1\n")
    # and its dump, written at exit without a writer thread, has every event
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert (dump["counts"]["alloc"], dump["counts"]["free"]) == (15, 10)
    assert leaks_by_function(dump) == {"leak_alone": (5, 2500)}
    # with times from the clock, not all the same instant
    assert dump["heap"]["peak_bytes"] >= 2500
    support.assert_consistent(dump)


PAGE = """<!doctype html>
<html><head><title>memrec</title></head>
<body><ul id="list"></ul>
<script>
  const list = document.getElementById("list");
  for (let i = 1; i <= 5; i++) {
    const item = document.createElement("li");
    item.textContent = "item " + i * i;
    list.appendChild(item);
  }
</script></body></html>
"""


def chromium_argv(page: Path, profile: Path) -> list[str]:
    # --no-sandbox: these tests run as root, where Chromium refuses its sandbox
    # (the same flags in both runs).
    return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", "--dump-dom",
            page.as_uri()]


def test_chromium_dumps_the_same_dom_under_memrec(build, memrec_cli, run_plain, info, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed: run scripts/setup")
    # given a local page whose script builds part of the DOM
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    out = support.fresh_dir(tmp_path, "dumps")
    # when chromium --headless --dump-dom loads it without and with memrec
    plain = run_plain(CHROMIUM, *chromium_argv(page, tmp_path / "profile-plain")[1:], timeout=180)
    argv = [str(build.memrec), "run", "-o", str(out / "%e.%p.dat"), "--", *chromium_argv(page, tmp_path / "profile")]
    run = support.finish(support.start(argv, support.clean_env()), argv, 180)
    # then both exit 0 and print the same DOM, the script's items in it
    assert plain.returncode == 0, plain.describe()
    assert "<li>item 25</li>" in plain.stdout
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    # and memrec run named the browser's dump as the main one: the root
    # process, /usr/bin/chromium (a shell script) having exec'd the browser
    count, main = support.run_summary(run.stderr)
    dats = sorted(out.glob("*.dat"))
    assert count == len(dats) and main in dats
    browser = info(main)
    assert Path(browser["header"]["exe"]).name == "chromium"
    assert "--type=zygote" not in browser["header"]["cmdline"]
    # and it reads to a clean end with what the recorder could see: Chromium's
    # malloc is its own (PartitionAlloc), its mmaps and RSS are ours
    assert browser["clean_end"] is True
    assert browser["counts"]["mmap"] + browser["counts"]["munmap"] > 0
    assert browser["rss"]["samples"] > 0
    assert browser["counts"]["threads"] > 1
    # and the zygote, which checks it has one thread, ran to its end too
    # (A process the browser kills the moment it starts, between the creation
    # of its dump and its header's write, leaves an empty file, which info
    # refuses by name: such files are left out here.)
    headed = [d for d in dats if d.stat().st_size > 0]
    assert len(dats) - len(headed) <= 2, [d.name for d in dats if d not in headed]
    zygotes = [d for d in info(*headed) if "--type=zygote" in d["header"]["cmdline"]]
    assert zygotes and all(z["clean_end"] for z in zygotes), [z["file"] for z in zygotes]
