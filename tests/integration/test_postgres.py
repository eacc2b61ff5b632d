"""PostgreSQL under the preload, run as a service is: a cluster made by
initdb, the postmaster on a free port with its backends loaded by pgbench,
stopped by `pg_ctl stop` in fast mode (the open session is cut off) and in
smart mode (the server waits for its last client). Each is compared with the
same steps without the preload: the same exit codes, committed transactions,
shutdown messages, and a whole dump from every process, each ending cleanly.
PostgreSQL refuses to run as root: as root, the server side runs as the
`postgres` account that Debian's package creates."""
from __future__ import annotations

import dataclasses
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

import memrec_support as support
from test_real_programs import assert_recorded_whole, free_port, functions_in_sites, need

PG_BIN = Path("/usr/lib/postgresql/15/bin")  # Debian 12's postgresql-15 (bookworm)
SUPERUSER = "bench"  # initdb -U: the name pgbench and psql connect as
# pgbench -c, -t: 400 transactions; scripts/stress runs this file with
# MEMREC_SERVER_SCALE=N for N times the clients and N times the transactions each.
SCALE = int(os.environ.get("MEMREC_SERVER_SCALE", "1"))
CLIENTS, TRANSACTIONS = 4 * SCALE, 100 * SCALE
# The postmaster's own log lines, without the timestamp and pid prefix
# (log_line_prefix '%m [%p] ', PostgreSQL 15's default).
LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+ \[(\d+)\] ")


def pg(tool: str) -> Path:
    return PG_BIN / tool


@dataclasses.dataclass(frozen=True)
class Account:
    """Who runs initdb, postgres and pg_ctl: this user, or when it is root
    (which they refuse) the package's `postgres` account."""

    uid: int
    gid: int

    @staticmethod
    def for_server() -> Account:
        if os.geteuid() != 0:
            return Account(os.getuid(), os.getgid())
        entry = pwd.getpwnam("postgres")
        return Account(entry.pw_uid, entry.pw_gid)

    def preexec(self):
        if self.uid == os.geteuid():
            return None

        def drop() -> None:
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)
        return drop

    def own(self, path: Path) -> None:
        if self.uid != os.geteuid():
            for root, dirs, files in os.walk(path):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.lchown(name, self.uid, self.gid)


@dataclasses.dataclass
class Side:
    """One run of the steps: under the preload (`dumps` set) or without it."""

    root: Path
    env: dict[str, str]
    dumps: Path | None

    @property
    def data(self) -> Path:
        return self.root / "data"


@dataclasses.dataclass
class Cluster:
    """What the module's initdb runs left: a template data directory per side."""

    work: Path
    account: Account
    preload: Path
    initdb: dict[str, support.Run]
    initdb_dumps: list[Path]


def as_server(account: Account, argv: list, env: dict[str, str], cwd: Path) -> support.Run:
    proc = support.start(argv, env, cwd=cwd, preexec_fn=account.preexec())
    return support.finish(proc, argv, support.TIMEOUT_S)


def client(*argv) -> support.Run:
    """A client tool (pgbench, psql) without the preload, as this user."""
    return support.finish(support.start(argv, support.clean_env()), argv, support.TIMEOUT_S)


@pytest.fixture(scope="module")
def cluster(build, preload):
    """initdb once under the preload and once without, in a directory under
    /tmp (a unix socket path has at most 107 bytes) owned by the account."""
    for tool in ("initdb", "postgres", "pg_ctl", "pgbench", "psql"):
        need(str(pg(tool)))
    account = Account.for_server()
    work = Path(tempfile.mkdtemp(prefix="memrec-pg-"))
    try:
        # The build directory may be out of the account's reach (a checkout under /root).
        shutil.copy(preload, work / "libmemrec.so")
        (work / "initdb-dumps").mkdir()
        account.own(work)
        env = {"recorded": support.clean_env({"LD_PRELOAD": str(work / "libmemrec.so"),
                                              "MEMREC_OUTPUT": str(work / "initdb-dumps" / "%e.%p.dat")}),
               "plain": support.clean_env()}
        runs = {}
        for name in ("recorded", "plain"):
            argv = [pg("initdb"), "-D", work / f"template-{name}", "-U", SUPERUSER, "--auth=trust", "--no-sync",
                    "-E", "UTF8", "--locale=C"]
            runs[name] = as_server(account, argv, env[name], work)
        yield Cluster(work, account, work / "libmemrec.so", runs, sorted((work / "initdb-dumps").iterdir()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_initdb_makes_the_same_cluster_and_a_whole_dump_per_process(build, cluster, info):
    # given initdb run under the preload and without it (the module's fixture)
    recorded, plain = cluster.initdb["recorded"], cluster.initdb["plain"]
    # then both succeed and say the same, but for the directory's name
    assert plain.returncode == 0 and "Success." in plain.stdout, plain.describe()
    assert recorded.returncode == 0, recorded.describe()
    assert recorded.stdout.replace("template-recorded", "template-plain") == plain.stdout
    assert support.memrec_lines(recorded.stderr) == []
    # and the clusters hold the same files
    trees = [sorted(str(p.relative_to(cluster.work / f"template-{n}")) for p in
                    (cluster.work / f"template-{n}").rglob("*")) for n in ("recorded", "plain")]
    assert trees[0] == trees[1] and "global/pg_control" in trees[0]
    # and every process initdb ran wrote a whole dump: initdb, the shells of
    # its popen()s, `locale -a`, and postgres for -V, --boot, and --single
    finished = assert_recorded_whole(build, cluster.initdb_dumps, info)
    names = Counter(Path(p["exe"]).name for p in finished)
    assert names["initdb"] == 1 and names["locale"] == 1 and names["postgres"] >= 3, names
    sites = set().union(*(functions_in_sites(p["report"]) for p in finished if Path(p["exe"]).name == "postgres"))
    assert {"BootstrapModeMain", "PostgresSingleUserMain"} <= sites


@dataclasses.dataclass
class ServerRun:
    server: support.Run  # the postmaster: its exit code, and its log (stderr)
    bench_init: support.Run
    bench: support.Run
    stop: support.Run
    held: support.Run  # the session left open across the stop
    history: str  # rows in pgbench_history, as the last client saw them
    root: Path


def side(cluster: Cluster, name: str) -> Side:
    root = cluster.work / f"{name}-{time.monotonic_ns()}"
    root.mkdir()
    shutil.copytree(cluster.work / f"template-{name}", root / "data", symlinks=True)
    dumps = None
    env = support.clean_env()
    if name == "recorded":
        dumps = root / "dumps"
        dumps.mkdir()
        env = support.clean_env({"LD_PRELOAD": str(cluster.preload), "MEMREC_OUTPUT": str(dumps / "%e.%p.dat")})
    (root / "socket").mkdir()
    cluster.account.own(root)
    os.chmod(root / "data", 0o700)
    return Side(root, env, dumps)


def log_lines(run: ServerRun) -> list[str]:
    """The postmaster's own log messages without their prefix, its directory
    as ROOT and every number as N (checkpoint figures, times, pids vary)."""
    out = []
    for line in run.server.stderr.splitlines():
        match = LOG_PREFIX.match(line)
        if match and int(match.group(1)) == run.server.pid:
            out.append(re.sub(r"\d+", "N", line[match.end():].replace(str(run.root), "ROOT")))
    return out


def wait_for_log(path: Path, proc: subprocess.Popen, message: str) -> None:
    deadline = time.monotonic() + support.TIMEOUT_S
    while message not in path.read_text(errors="replace"):
        assert proc.poll() is None, f"postgres exited {proc.returncode} before '{message}':\n{path.read_text()}"
        assert time.monotonic() < deadline, f"no '{message}' in {path}:\n{path.read_text()}"
        time.sleep(0.05)


def psql(port: int, sql: str) -> support.Run:
    return client(pg("psql"), "-X", "-A", "-t", "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, "-c", sql,
                  "postgres")


def wait_for_session(port: int, held: subprocess.Popen) -> None:
    """Until the held psql's backend is in pg_stat_activity."""
    sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'held'"
    deadline = time.monotonic() + support.TIMEOUT_S
    while psql(port, sql).stdout.strip() != "1":
        assert held.poll() is None, f"the held psql exited {held.returncode}"
        assert time.monotonic() < deadline, "the held psql never connected"
        time.sleep(0.05)


def run_server(cluster: Cluster, s: Side, mode: str) -> ServerRun:
    """postgres on a free port; pgbench -i, then CLIENTS x TRANSACTIONS; a
    psql session held open; `pg_ctl stop -m mode`. In smart mode the held
    session counts pgbench_history after the stop was asked for, then leaves,
    which lets the server go; in fast mode the stop cuts it off."""
    port = free_port()
    log_path = s.root / "server.log"
    argv = [pg("postgres"), "-D", s.data, "-p", str(port), "-k", s.root / "socket",
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]
    with open(log_path, "wb") as log:
        server = subprocess.Popen([str(a) for a in argv], env=s.env, cwd=s.root, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=log, start_new_session=True,
                                  preexec_fn=cluster.account.preexec())
    held = None
    try:
        wait_for_log(log_path, server, "database system is ready to accept connections")
        connect = ["-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER]
        bench_init = client(pg("pgbench"), *connect, "-i", "-s", "1", "-q", "postgres")
        bench = client(pg("pgbench"), *connect, "-c", str(CLIENTS), "-j", "2", "-t", str(TRANSACTIONS), "postgres")
        held_argv = [pg("psql"), "-X", "-A", "-t", *connect, "postgres"]
        held = support.start(held_argv, support.clean_env({"PGAPPNAME": "held"}), stdin=subprocess.PIPE)
        wait_for_session(port, held)
        history = psql(port, "SELECT count(*) FROM pgbench_history").stdout if mode == "fast" else ""
        stop_argv = [pg("pg_ctl"), "-D", s.data, "stop", "-m", mode, "-w" if mode == "fast" else "-W"]
        stop = as_server(cluster.account, stop_argv, support.clean_env(), s.root)
        if mode == "smart":
            wait_for_log(log_path, server, "received smart shutdown request")
        held_run = support.finish(held, held_argv, support.TIMEOUT_S,
                                  input=b"SELECT 'after stop', count(*) FROM pgbench_history;\n")
        if mode == "smart":
            history = held_run.stdout.removeprefix("after stop|")
        code = server.wait(timeout=support.TIMEOUT_S)
    finally:
        support.kill_tree(server)
        if held is not None:
            support.kill_tree(held)
    server_run = support.Run([str(a) for a in argv], server.pid, code, "", log_path.read_text(errors="replace"))
    return ServerRun(server_run, bench_init, bench, stop, held_run, history, s.root)


def assert_same_service(run: ServerRun, plain: ServerRun, mode: str) -> None:
    """Everything a user of the service sees, as without the preload."""
    expected_tx = CLIENTS * TRANSACTIONS
    for r in (run, plain):
        assert r.bench_init.returncode == 0 and "done in" in r.bench_init.stderr, r.bench_init.describe()
        assert r.bench.returncode == 0, r.bench.describe()
        assert f"number of transactions actually processed: {expected_tx}/{expected_tx}\n" in r.bench.stdout
        assert "number of failed transactions: 0 (0.000%)" in r.bench.stdout
        assert r.history == f"{expected_tx}\n", r.held.describe()
        assert r.stop.returncode == 0, r.stop.describe()
        assert r.server.returncode == 0, r.server.describe()
        assert "database system is shut down" in r.server.stderr
        assert not re.search(r"terminated by signal|PANIC|server process .* exited", r.server.stderr), \
            r.server.stderr
    assert (run.stop.stdout, run.held.returncode, run.held.stdout, run.held.stderr) == \
        (plain.stop.stdout, plain.held.returncode, plain.held.stdout, plain.held.stderr)
    # the postmaster said the same, in the same order
    assert log_lines(run) == log_lines(plain), (run.server.stderr, plain.server.stderr)
    assert f"LOG:  received {mode} shutdown request" in log_lines(run)


def assert_whole_dumps(build, info, run: ServerRun, dumps: Path) -> None:
    """A dump per process, each ending cleanly; the postmaster's names its code."""
    dats = sorted(dumps.iterdir())
    finished = assert_recorded_whole(build, dats, info)
    assert len(finished) == len(dats)
    assert all(p["report"]["dump"]["clean_end"] for p in finished), \
        [(p["pid"], p["report"]["dump"]) for p in finished if not p["report"]["dump"]["clean_end"]]
    (postmaster,) = [p for p in finished if p["pid"] == run.server.pid]
    assert {"PostmasterMain", "AllocSetContextCreateInternal"} <= functions_in_sites(postmaster["report"])
    children = [p for p in finished if p["ppid"] == run.server.pid]
    # the startup process, checkpointer, background and WAL writers, the
    # autovacuum and logical replication launchers, and a backend per connection
    # (pgbench -i, pgbench's 4 clients and its own, the held session, psql's)
    assert len(children) == len(finished) - 1 >= 6 + 1 + CLIENTS + 1 + 1
    backends = [p for p in children if "PostgresMain" in functions_in_sites(p["report"])]
    assert len(backends) >= 1 + CLIENTS + 1 + 1


@pytest.mark.parametrize("mode", ["fast", "smart"])
def test_postmaster_and_backends_under_pgbench_stop_cleanly(build, cluster, info, mode):
    # given a cluster from initdb, under the preload and without
    recorded, plain_side = side(cluster, "recorded"), side(cluster, "plain")
    # when the server serves pgbench and a held session, and pg_ctl stops it
    run = run_server(cluster, recorded, mode)
    plain = run_server(cluster, plain_side, mode)
    # then clients and server saw the same as without the preload
    assert_same_service(run, plain, mode)
    # and every process (postmaster, auxiliaries, backends) left a whole dump that ended cleanly
    assert_whole_dumps(build, info, run, recorded.dumps)
