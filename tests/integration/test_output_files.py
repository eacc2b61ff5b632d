"""Where dumps go: the MEMREC_OUTPUT template, the default name, the file
mode, never overwriting, an output that cannot be written, and programs that
close descriptors or change directory under the recorder."""
import os
import stat
import time

import pytest

import memrec_support as support
from memrec_support import assert_leaks, memrec_lines


def test_output_template_expands_executable_name_and_pid(record):
    # given MEMREC_OUTPUT=<dir>/%e.%p.dat
    # when leak_three runs
    run = record("leak_three", output="%e.%p.dat")
    # then the dump is named after the executable and the pid
    assert [p.name for p in run.dats] == [f"leak_three.{run.pid}.dat"]


def test_e_is_the_name_the_program_was_run_as_through_a_symlink(build, tmp_path):
    # given leak_three reached through a symlink of another name, as
    # redis-check-rdb is redis-server
    alias = tmp_path / "leak_alias"
    alias.symlink_to(build.program("leak_three"))
    # when it runs under the preload with %e in the template
    run = support.record(build, alias, tmp_path=tmp_path, output="%e.%p.dat")
    # then the dump is named as the program was called, not as its target
    assert run.returncode == 0, run.describe()
    assert [p.name for p in run.dats] == [f"leak_alias.{run.pid}.dat"]


def test_output_template_expands_counter_time_and_percent(build, record, tmp_path):
    # given a template with %n (the first free number), %t (start time in
    # seconds since the epoch) and %% (a percent sign), shared by two runs
    shared = tmp_path / "shared"
    shared.mkdir()
    template = str(shared / "run.%n.%t.100%%.dat")
    # when leak_three runs twice with it
    before_s = int(time.time())
    runs = [record("leak_three", output=template) for _ in range(2)]
    after_s = int(time.time())
    # then the runs got counters 0 and 1, and their start times
    names = sorted(p.name for p in shared.iterdir())
    assert len(names) == 2, names
    for counter, name in enumerate(names):
        prefix, start_s, suffix = name.split(".", 1)[0], name.split(".")[2], ".".join(name.split(".")[3:])
        assert (prefix, name.split(".")[1], suffix) == ("run", str(counter), "100%.dat"), name
        assert before_s <= int(start_s) <= after_s, name
    assert all(r.returncode == 0 for r in runs)


def test_default_output_is_memrec_exe_pid_dat_in_the_working_directory(record):
    # given no MEMREC_OUTPUT
    # when leak_three runs in a directory
    run = record("leak_three", output=None)
    # then the dump is memrec.<exe>.<pid>.dat in that directory
    assert [p.name for p in run.dats] == [f"memrec.leak_three.{run.pid}.dat"]


def test_dump_is_created_with_mode_0600(record):
    # given a recorded run (the test runner's umask is no stricter than 077)
    old_umask = os.umask(0o022)
    try:
        # when leak_three runs
        run = record("leak_three")
    finally:
        os.umask(old_umask)
    # then only the owner may read its dump: it holds the program's data
    assert len(run.dats) == 1
    assert stat.S_IMODE(run.dats[0].stat().st_mode) == 0o600


def test_an_existing_file_is_never_overwritten(build, record, info, tmp_path):
    # given a template without %p, and a file of that name already there
    shared = tmp_path / "shared"
    shared.mkdir()
    existing = shared / "fixed.dat"
    existing.write_bytes(b"precious data")
    # when two runs use that template
    runs = [record("leak_three", output=str(existing)) for _ in range(2)]
    # then the file is untouched and each run got a file of its own
    assert existing.read_bytes() == b"precious data"
    assert all(r.returncode == 0 for r in runs)
    new_files = sorted(p for p in shared.iterdir() if p != existing)
    assert len(new_files) == 2, new_files
    dumps = info(*new_files)
    assert sorted(d["header"]["pid"] for d in dumps) == sorted(r.pid for r in runs)
    for path in new_files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlink_at_the_output_name_is_not_followed(record, tmp_path):
    # given a symlink named like the dump, pointing at a file of the user's,
    # and a dangling one for the second run
    shared = tmp_path / "shared"
    shared.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"the user's file")
    (shared / "fixed.dat").symlink_to(victim)
    (shared / "dangling.dat").symlink_to(tmp_path / "nothing-here")
    # when leak_three runs with those names
    runs = [record("leak_three", output=str(shared / name)) for name in ("fixed.dat", "dangling.dat")]
    # then neither symlink was followed: the target is untouched, no file
    # appeared behind the dangling one, and the dumps got other names
    assert all(r.returncode == 0 for r in runs)
    assert victim.read_bytes() == b"the user's file"
    assert not (tmp_path / "nothing-here").exists()
    regular = sorted(p.name for p in shared.iterdir() if not p.is_symlink())
    assert len(regular) == 2, regular


@pytest.mark.parametrize("program,args", [
    ("leak_three", ()),
    ("cpp_new", ()),
    ("threads_pass", ()),
    ("underscore_exit", ()),
    ("fatal_signal", ("TERM",)),
])
def test_unwritable_output_says_one_line_and_the_program_runs_on(record, run_plain, tmp_path, program, args):
    # given an output path whose parent is a regular file (fails even for root)
    not_a_dir = tmp_path / "not-a-directory"
    not_a_dir.write_text("")
    # when the program runs under the preload
    run = record(program, *args, output=str(not_a_dir / "memrec.%p.dat"))
    # then it prints one `memrec:` line on stderr, and otherwise behaves as
    # without the preload
    plain = run_plain(program, *args)
    assert len(memrec_lines(run.stderr)) == 1, run.stderr
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout)
    assert [line for line in run.stderr.splitlines() if not line.startswith("memrec:")] == \
        plain.stderr.splitlines()
    assert not [p for p in tmp_path.rglob("*.dat")]


def test_relative_output_is_relative_to_the_starting_directory(record, only_dump, leaks_by_function, tmp_path):
    # given MEMREC_OUTPUT=rel.%p.dat (relative) and a program that changes
    # directory before it leaks 8008 bytes
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # when it runs
    run = record("chdir_prog", str(elsewhere), output=None, env={"MEMREC_OUTPUT": "rel.%p.dat"})
    assert run.returncode == 0, run.describe()
    # then the dump is in the directory it started in, complete
    assert list(elsewhere.iterdir()) == []
    assert [p.name for p in run.dats] == [f"rel.{run.pid}.dat"]
    assert_leaks(leaks_by_function(only_dump(run)), {"leak_after_chdir": (1, 8008)})


def test_program_closing_every_descriptor_keeps_its_own_file_intact(record, tmp_path):
    # given close_fds, which closes fds 3..1023 like a daemon, then writes 100
    # lines to a file of its own (which gets a low fd) while allocating
    own_file = tmp_path / "own-file.txt"
    # when it runs under the preload
    run = record("close_fds", str(own_file))
    assert run.returncode == 0, run.describe()
    # then the recorder never wrote into the program's file
    expected = "".join(f"line {i} of the program's own file\n" for i in range(100)).encode()
    content = own_file.read_bytes()
    assert content == expected, f"{len(content)} bytes, starting {content[:64]!r}"


def test_program_closing_every_descriptor_still_gets_a_complete_dump(record, only_dump, leaks_by_function,
                                                                     tmp_path):
    # given close_fds, which closes fds 3..1023 (the recorder's too) and then
    # leaks 7007 bytes
    # when it runs under the preload
    run = record("close_fds", str(tmp_path / "own-file.txt"))
    assert run.returncode == 0, run.describe()
    # then the dump still reads, with the leak made after the descriptors closed
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_leaks(leaks_by_function(dump), {"leak_after_close": (1, 7007)})


def test_memrec_info_reads_a_cut_dump_up_to_its_last_whole_frame(build, record, info, tmp_path):
    # given a complete dump, and copies of it cut short
    run = record("leak_three")
    data = run.dats[0].read_bytes()
    full = info(run.dats[0])
    assert full["clean_end"] is True and full["truncated_at"] is None
    cut_tail = tmp_path / "cut-tail.dat"
    cut_tail.write_bytes(data[:-5])
    header_only = tmp_path / "header-only.dat"
    header_length = int.from_bytes(data[12:16], "little")
    header_only.write_bytes(data[:16 + header_length])
    # when `memrec info` reads them
    # then both read (exit 0) and say where the loss starts
    tail = info(cut_tail)
    assert tail["clean_end"] is False
    assert tail["truncated_at"] is not None and tail["truncated_at"] < len(data) - 5
    assert tail["frames"] == full["frames"] - 1
    empty = info(header_only)
    assert empty["frames"] == 0 and empty["clean_end"] is False
    assert empty["header"] == full["header"]


def test_memrec_info_rejects_a_corrupt_frame_naming_file_and_offset(build, record, tmp_path):
    # given a complete dump with a byte flipped inside its first frame's data
    run = record("leak_three")
    data = bytearray(run.dats[0].read_bytes())
    first_frame = 16 + int.from_bytes(data[12:16], "little")
    assert data[first_frame:first_frame + 4] == b"MRFZ"
    compressed_size = int.from_bytes(data[first_frame + 4:first_frame + 8], "little")
    data[first_frame + 12 + compressed_size // 2] ^= 0xFF  # zstd's checksum must catch it
    corrupt = tmp_path / "corrupt.dat"
    corrupt.write_bytes(bytes(data))
    # when `memrec info` reads it
    result = support.memrec_info_raw(build, [corrupt])
    # then it fails as bad input (exit 2) with a message naming the file
    assert result.returncode == 2, result.describe()
    assert "corrupt.dat" in result.stderr
