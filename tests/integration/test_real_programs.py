"""Programs nobody here wrote must behave the same under the preload: same
output, same exit code, and a complete dump."""
import textwrap

from memrec_support import memrec_lines

PYTHON = "/usr/bin/python3"
SQLITE = "/usr/bin/sqlite3"

PYTHON_WORKLOAD = textwrap.dedent("""
    import json, sys, threading
    def work(seed):
        table = {}
        for i in range(30000):
            table[f"key-{seed}-{i}"] = [i] * (i % 7) + [str(i)]
        lists = [sorted(v, key=str) for v in table.values() if len(v) > 3]
        return sum(len(v) for v in lists) + len(table)
    results = [None] * 4
    def run(k):
        results[k] = work(k)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps({"results": results, "total": sum(results)}, sort_keys=True))
    sys.exit(7)
""")


def sqlite_script() -> bytes:
    lines = ["CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);"]
    lines += [f"INSERT INTO t(name, v) VALUES ('name-{i}-{'x' * (i % 40)}', {i * 0.25});" for i in range(3000)]
    lines += [
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)",
        "  INSERT INTO t(name, v) SELECT 'gen-' || x, x * 0.5 FROM c;",
        "CREATE INDEX t_name ON t(name);",
        "SELECT count(*), sum(v) FROM t;",
        "UPDATE t SET v = v * 2 WHERE id % 3 = 0;",
        "SELECT id % 7, count(*), sum(v) FROM t GROUP BY id % 7 ORDER BY 1;",
        "DELETE FROM t WHERE id % 2 = 0;",
        "SELECT count(*), min(name), max(name) FROM t;",
        "SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY name LIMIT 40);",
        "SELECT * FROM no_such_table;",  # an error: exit code 1
        "SELECT 'still running';",
    ]
    return ("\n".join(lines) + "\n").encode()


def assert_same_and_recorded(run, plain, info):
    assert run.returncode == plain.returncode
    assert run.stdout == plain.stdout
    assert memrec_lines(run.stderr) == []
    assert run.stderr == plain.stderr
    assert len(run.dats) == 1, run.describe()
    dump = info(run.dats[0])
    assert dump["clean_end"] is True
    assert dump["counts"]["alloc"] > 1000
    assert dump["counts"]["free"] > 1000
    return dump


def test_python_with_threads_runs_unchanged(record, run_plain, info):
    # given CPython building dicts and lists in 4 threads, exiting 7
    args = ("-I", "-c", PYTHON_WORKLOAD)
    # when it runs with and without the preload
    run = record(PYTHON, *args)
    plain = run_plain(PYTHON, *args)
    # then output and exit code are the same, and the dump is complete
    assert plain.returncode == 7 and plain.stdout.startswith('{"results": [')
    dump = assert_same_and_recorded(run, plain, info)
    assert len(dump["threads"]) >= 5


def test_sqlite3_shell_runs_unchanged(record, run_plain, info):
    # given the sqlite3 shell on an in-memory database, fed a generated script
    # that ends with an error (so it exits 1)
    script = sqlite_script()
    # when it runs with and without the preload
    run = record(SQLITE, ":memory:", input=script)
    plain = run_plain(SQLITE, ":memory:", input=script)
    # then output and exit code are the same, and the dump is complete
    assert plain.returncode == 1 and "still running" in plain.stdout
    assert_same_and_recorded(run, plain, info)
