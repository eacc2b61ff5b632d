#!/usr/bin/python3
"""`meson test --wrapper` used by scripts/test so every doctest case is counted.

Runs a doctest executable with its JUnit reporter writing to
$MEMREC_DOCTEST_JUNIT_DIR/<key>.xml, where <key> is command_key() of the test
command; count_results.py computes the same key from meson's test log to pair
each meson test with its cases. A command that is not a doctest executable runs
unchanged. Standard library only; never alters the test's exit status.
"""

import hashlib
import mmap
import os
import sys

# Present in every doctest executable: the text of its --version output.
_DOCTEST_MARKER = b'doctest version is "'


def command_key(command):
    """A file-name-safe key naming one test command (executable and arguments)."""
    digest = hashlib.sha1(b"".join(arg.encode() + b"\0" for arg in command)).hexdigest()[:16]
    return f"{os.path.basename(command[0])}-{digest}"


def is_doctest_executable(path):
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(_DOCTEST_MARKER) != -1
    except (OSError, ValueError):  # not a file, unreadable, or empty
        return False


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: doctest_junit.py TEST_COMMAND [ARGS...]\n")
        return 2
    command = argv[1:]
    out_dir = os.environ.get("MEMREC_DOCTEST_JUNIT_DIR")
    if out_dir and is_doctest_executable(command[0]):
        out = os.path.join(out_dir, command_key(command) + ".xml")
        # The prefixed spellings work even where a test disables unprefixed options.
        command = command + ["--dt-reporters=junit", f"--dt-out={out}"]
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
