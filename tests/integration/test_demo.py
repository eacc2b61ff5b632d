"""./scripts/demo, as a newcomer runs it: it says what it does, records the
example service, prints the UI's URL, serves the recording there, and stops
cleanly, exit 0, on Ctrl-C (SIGINT to its whole process group)."""
from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import time
import urllib.request

from memrec_support import REPO, clean_env, kill_tree

URL_LINE = re.compile(r"^memrec: serving (\d+) dumps? at (http://127\.0\.0\.1:(\d+)/) \(Ctrl-C stops\)$")
# scripts/setup and the build are no-ops after ./scripts/test built build/;
# the recording and the report take a few seconds on a loaded machine.
STARTUP_S = 180


def read_until_url(proc: subprocess.Popen, deadline: float) -> tuple[list[str], re.Match | None]:
    lines: list[str] = []
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for raw in complete:
            line = raw.decode(errors="replace")
            lines.append(line)
            if match := URL_LINE.match(line):
                return lines, match
    return lines, None


def test_demo_records_serves_the_ui_and_stops_cleanly_on_ctrl_c(build):
    # given ./scripts/demo on a free port (the default build, or this one as it is)
    argv = [str(REPO / "scripts" / "demo"), "--port", "0"]
    if build.root != (REPO / "build").resolve():
        argv += ["--build-dir", str(build.root)]
    proc = subprocess.Popen(argv, env=clean_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # when it has started
        lines, match = read_until_url(proc, time.monotonic() + STARTUP_S)
        assert match, "no URL line; the demo printed:\n" + "\n".join(lines)
        # then it said what it was doing before the URL
        text = "\n".join(lines)
        assert "== record: memrec run -- examples/demo_service" in text
        assert re.search(r"^== memrec report --top 3 .*\.dat ==$", text, re.M)
        assert "Ctrl-C stops it" in text
        # and the UI serves the one recording
        url = match.group(2)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        # (once loaded: the view listens before its dumps are)
        deadline = time.monotonic() + STARTUP_S
        while True:
            with opener.open(url + "api/dumps", timeout=30) as response:
                dumps = json.load(response)["dumps"]
            if not any(d["state"] == "loading" for d in dumps) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(dumps) == 1 and dumps[0]["exe"].endswith("/demo_service"), dumps

        # when Ctrl-C reaches the demo's process group
        os.killpg(proc.pid, signal.SIGINT)
        rest, _ = proc.communicate(timeout=30)
        # then it exits 0, says so, and the server is gone
        assert proc.returncode == 0, rest.decode(errors="replace")
        assert "memrec demo: stopped." in rest.decode(errors="replace")
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(match.group(3)))) != 0
    finally:
        kill_tree(proc)
