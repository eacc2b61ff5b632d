"""nginx under the preload, run as a service is: a master and two workers
serving static files (gzip on) on a free port, `nginx -s reload` (the master
reads its configuration again, forks new workers, the old ones finish and
leave), then `nginx -s quit` (graceful). Compared with the same steps without
the preload: the same responses, log events and exit code, and a whole dump
from the master and from each old and new worker, each ending cleanly."""
from __future__ import annotations

import dataclasses
import hashlib
import http.client
import os
import re
import shutil
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import memrec_support as support
from test_real_programs import assert_recorded_whole, free_port, functions_in_sites, need

NGINX = "/usr/sbin/nginx"
WORKERS = 2
# scripts/stress runs this file with MEMREC_SERVER_SCALE=N: N reloads, N times the requests.
SCALE = int(os.environ.get("MEMREC_SERVER_SCALE", "1"))
RELOADS = SCALE
REQUESTS = 150 * SCALE  # per phase, before the first reload and after each: on 3 keep-alive connections
PHASES = RELOADS + 1
# The error log's events whose count must not change with the preload (level notice).
EVENTS = {
    "reconfiguring": re.compile(r"\[notice\] \d+#\d+: reconfiguring$"),
    "worker started": re.compile(r"\[notice\] \d+#\d+: start worker process \d+$"),
    "worker exited 0": re.compile(r"\[notice\] \d+#\d+: worker process \d+ exited with code 0$"),
    "worker shut down gracefully": re.compile(r"\[notice\] \d+#\d+: gracefully shutting down$"),
    "exit": re.compile(r"\[notice\] \d+#\d+: exit$"),
    "missing file": re.compile(r"\[error\] .* open\(\) \".*/html/missing\" failed"),
    "alert or worse": re.compile(r"\[(alert|crit|emerg)\]"),
    "killed worker": re.compile(r"exited on signal"),
}
STARTED = re.compile(r"start worker process (\d+)$")


def config(prefix: Path, port: int) -> str:
    """A server of static files; as root, workers run as nobody, as a packaged nginx's do."""
    user = "user nobody nogroup;" if os.geteuid() == 0 else ""
    return textwrap.dedent(f"""\
        daemon off;
        master_process on;
        worker_processes {WORKERS};
        {user}
        pid {prefix}/nginx.pid;
        error_log {prefix}/logs/error.log notice;
        events {{ worker_connections 64; }}
        http {{
            access_log {prefix}/logs/access.log;
            client_body_temp_path {prefix}/temp/body;
            proxy_temp_path {prefix}/temp/proxy;
            fastcgi_temp_path {prefix}/temp/fastcgi;
            uwsgi_temp_path {prefix}/temp/uwsgi;
            scgi_temp_path {prefix}/temp/scgi;
            types {{ text/html html; text/plain txt; }}
            server {{
                listen 127.0.0.1:{port};
                root {prefix}/html;
                gzip on;
                gzip_types text/plain;
            }}
        }}
    """)


@dataclasses.dataclass
class Side:
    prefix: Path
    env: dict[str, str]
    dumps: Path | None

    def nginx(self, *args) -> list:
        return [NGINX, "-p", self.prefix, "-c", self.prefix / "nginx.conf", "-e", self.prefix / "logs/error.log",
                *args]


def make_side(work: Path, name: str, preload: Path) -> Side:
    prefix = work / name
    for sub in ("html", "logs", "temp"):
        (prefix / sub).mkdir(parents=True)
    (prefix / "html/index.html").write_text("<html><body>memrec under nginx</body></html>\n")
    (prefix / "html/words.txt").write_text("".join(f"line {i} of the words file\n" for i in range(4000)))
    env, dumps = support.clean_env(), None
    if name == "recorded":
        dumps = prefix / "dumps"
        dumps.mkdir()
        # Each worker opens its dump after it has dropped to nobody: the folder
        # must let it, as /tmp does.
        dumps.chmod(0o1777)
        env = support.clean_env({"LD_PRELOAD": str(preload), "MEMREC_OUTPUT": str(dumps / "%e.%p.dat")})
    return Side(prefix, env, dumps)


def fetch_all(port: int, phase: str) -> list[tuple]:
    """REQUESTS requests on three keep-alive connections: a page, a gzip'ed
    text and a missing file, in turn. Each response as (status, length, sha256)."""
    out = []
    for c in range(3):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=support.TIMEOUT_S)
        try:
            for i in range(c * REQUESTS // 3, (c + 1) * REQUESTS // 3):
                path, headers = [("/index.html", {}), ("/words.txt", {"Accept-Encoding": "gzip"}),
                                 ("/missing", {})][i % 3]
                conn.request("GET", f"{path}?{phase}-{i}", headers=headers)
                response = conn.getresponse()
                body = response.read()
                out.append((path, response.status, response.getheader("Content-Encoding"), len(body),
                            hashlib.sha256(body).hexdigest()))
        finally:
            conn.close()
    return out


def wait_until(predicate, what: str, master) -> None:
    deadline = time.monotonic() + support.TIMEOUT_S
    while not predicate():
        assert master.poll() is None, f"nginx exited {master.returncode} before {what}"
        assert time.monotonic() < deadline, f"nginx: no {what}"
        time.sleep(0.05)


def answers(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=support.TIMEOUT_S)
        conn.request("GET", "/index.html?ready")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def log_count(side: Side, pattern: re.Pattern) -> int:
    return sum(1 for line in (side.prefix / "logs/error.log").read_text().splitlines() if pattern.search(line))


@dataclasses.dataclass
class NginxRun:
    master: support.Run
    responses: list[tuple]
    reloads: list[support.Run]
    quit: support.Run
    error_log: str
    access_lines: int


def run_nginx(side: Side) -> NginxRun:
    port = free_port()
    (side.prefix / "nginx.conf").write_text(config(side.prefix, port))
    argv = side.nginx()
    master = support.start(argv, side.env, cwd=side.prefix)
    try:
        wait_until(lambda: answers(port), "answer", master)
        responses = fetch_all(port, "phase-0")
        reloads = []
        for n in range(1, PHASES):
            reloads.append(support.finish(support.start(side.nginx("-s", "reload"), support.clean_env()),
                                          ["reload"], support.TIMEOUT_S))
            # the old workers leave once their connections are closed (fetch_all closed them)
            wait_until(lambda n=n: log_count(side, EVENTS["worker exited 0"]) == n * WORKERS,
                       "old workers' exit", master)
            responses += fetch_all(port, f"phase-{n}")
        quit_run = support.finish(support.start(side.nginx("-s", "quit"), support.clean_env()), ["quit"],
                                  support.TIMEOUT_S)
        master_run = support.finish(master, argv, support.TIMEOUT_S)
    finally:
        support.kill_tree(master)
    access_lines = len((side.prefix / "logs/access.log").read_text().splitlines())
    return NginxRun(master_run, responses, reloads, quit_run, (side.prefix / "logs/error.log").read_text(),
                    access_lines)


def events(run: NginxRun) -> Counter:
    return Counter(name for line in run.error_log.splitlines() for name, p in EVENTS.items() if p.search(line))


@pytest.fixture
def work():
    """A folder under /tmp that workers running as nobody can read (pytest's own is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="memrec-nginx-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_nginx_reload_and_graceful_quit_serve_the_same_and_every_process_ends_its_dump(build, preload, info, work):
    # given nginx's configuration with two workers, under the preload and without
    need(NGINX)
    recorded, plain_side = make_side(work, "recorded", preload), make_side(work, "plain", preload)
    # when each serves requests, reloads, serves more, and quits gracefully
    run = run_nginx(recorded)
    plain = run_nginx(plain_side)
    # then the responses, control commands and exit code are the same
    each = PHASES * REQUESTS // 3
    assert Counter((r[0], r[1], r[2]) for r in plain.responses) == Counter({
        ("/index.html", 200, None): each, ("/words.txt", 200, "gzip"): each, ("/missing", 404, None): each})
    assert run.responses == plain.responses
    for r in (run, plain):
        assert [c.returncode for c in r.reloads] == [0] * RELOADS, r.reloads
        assert (r.quit.returncode, r.master.returncode) == (0, 0), r.master.describe()
        assert r.access_lines >= PHASES * REQUESTS + 1  # and the readiness probes
    assert (run.master.stdout, run.master.stderr) == (plain.master.stdout, plain.master.stderr) == ("", "")
    # and the error log tells the same story: two workers, a reload, two new
    # ones, each worker's graceful exit, the master's, nothing worse than a 404
    workers = PHASES * WORKERS
    assert events(plain) == Counter({"reconfiguring": RELOADS, "worker started": workers,
                                     "worker exited 0": workers, "worker shut down gracefully": workers,
                                     "exit": workers + 1, "missing file": each})
    assert events(run) == events(plain)
    # and the master, the old workers and the new ones each wrote a dump that
    # ends cleanly, the master's naming its configuration parser, each
    # worker's the requests it accepted
    master_pid = run.master.pid
    workers = [int(m.group(1)) for m in map(STARTED.search, run.error_log.splitlines()) if m]
    assert len(workers) == PHASES * WORKERS
    dats = sorted(recorded.dumps.iterdir())
    finished = assert_recorded_whole(build, dats, info)
    assert sorted(p["pid"] for p in finished) == sorted([master_pid, *workers])
    assert all(p["report"]["dump"]["clean_end"] for p in finished)
    by_pid = {p["pid"]: p for p in finished}
    assert {"ngx_init_cycle", "ngx_conf_parse"} <= functions_in_sites(by_pid[master_pid]["report"])
    # (the kernel hands each connection to one worker: one of a generation may
    # accept none, so the requests are looked for in each generation's pair,
    # and the spawn in every worker's sites, all of them listed)
    for generation in range(PHASES):
        served = set()
        for pid in workers[generation * WORKERS:(generation + 1) * WORKERS]:
            assert by_pid[pid]["ppid"] == master_pid
            every_site = support.only_process(support.report(build, Path(by_pid[pid]["report"]["file"]),
                                                             args=["--top", "100000"]))
            assert "ngx_spawn_process" in functions_in_sites(every_site), pid
            served |= functions_in_sites(by_pid[pid]["report"]) | functions_in_sites(every_site)
        assert {"ngx_event_accept", "ngx_http_create_request"} <= served, generation
