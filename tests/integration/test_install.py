"""`meson install` and the container build: scripts/install-into puts memrec,
libmemrec.so, the man page and the docs under a DESTDIR; the installed memrec
records and reports a program while the source and build trees are out of
reach; scripts/install-runtime names every package the installed files link;
and docker/Dockerfile runs only these scripts, in the forms tested here.

The build directory is never reconfigured: the install goes to a temporary
DESTDIR with the prefix the build already has."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from memrec_support import REPO, TIMEOUT_S, assert_report_tables, clean_env, finish, ranked_sites, start

DOCKERFILE = REPO / "docker" / "Dockerfile"
# The scripts the Dockerfile may run, each exercised by this file.
TESTED_SCRIPTS = {"scripts/install-into", "scripts/install-runtime"}


@dataclasses.dataclass(frozen=True)
class Installed:
    dest: Path     # the DESTDIR
    prefix: Path   # dest + the build's prefix
    memrec: Path
    preload: Path
    man_page: Path
    mark_header: Path  # memrec/mark.h: memrec_mark() for programs
    doc_dir: Path
    output: str    # what scripts/install-into printed


def run(argv, env=None, timeout=TIMEOUT_S, cwd=None):
    proc = start(argv, env or clean_env(), cwd=cwd)
    return finish(proc, argv, timeout)


def build_options(build_root: Path) -> dict[str, str]:
    out = subprocess.run(["meson", "introspect", "--buildoptions", str(build_root)],
                         capture_output=True, text=True, check=True).stdout
    return {o["name"]: o["value"] for o in json.loads(out) if o["name"] in (
        "prefix", "bindir", "libdir", "mandir", "datadir", "includedir")}


def under(dest: Path, path: str) -> Path:
    return dest / path.lstrip("/")


@pytest.fixture(scope="module")
def installed(build, tmp_path_factory) -> Installed:
    dest = tmp_path_factory.mktemp("install") / "root"
    # The Dockerfile's own form (scripts/setup, build build/, install) when the
    # tests run against build/, as in ./scripts/test; another build directory
    # is installed as it is.
    if build.root == (REPO / "build").resolve():
        argv = [REPO / "scripts" / "install-into", dest]
    else:
        argv = [REPO / "scripts" / "install-into", "--build-dir", build.root, dest]
    result = run(argv, timeout=max(TIMEOUT_S, 600))
    assert result.returncode == 0, result.describe()
    opts = build_options(build.root)
    prefix = under(dest, opts["prefix"])
    return Installed(
        dest=dest,
        prefix=prefix,
        memrec=prefix / opts["bindir"] / "memrec",
        preload=prefix / opts["libdir"] / "memrec" / "libmemrec.so",
        man_page=prefix / opts["mandir"] / "man1" / "memrec.1",
        mark_header=prefix / opts["includedir"] / "memrec" / "mark.h",
        doc_dir=prefix / opts["datadir"] / "doc" / "memrec",
        output=result.stdout,
    )


def test_install_puts_exactly_memrec_the_preload_its_header_the_man_page_and_the_docs_under_destdir(installed):
    # given scripts/install-into DESTDIR (the fixture)
    # then these files, and no test program or example, are installed
    files = {p.relative_to(installed.dest) for p in installed.dest.rglob("*") if not p.is_dir()}
    docs = {installed.doc_dir / name for name in ("README.md", "reference.md", "analyzer.md", "exports.md", "api.md", "pprof.md")}
    want = {installed.memrec, installed.preload, installed.man_page, installed.mark_header, *docs}
    assert files == {p.relative_to(installed.dest) for p in want}, installed.output
    assert os.access(installed.memrec, os.X_OK)
    # and the script listed each of them
    for path in want:
        assert str(path) in installed.output


def test_installed_binaries_do_not_look_into_the_build_tree(build, installed):
    # given the installed memrec and libmemrec.so
    for binary in (installed.memrec, installed.preload):
        dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
        # then neither has a RUNPATH or RPATH into the build or source tree
        paths = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", dynamic)
        assert not [p for p in paths if str(build.root) in p or str(REPO) in p], (binary, paths)


def hide_trees_argv(build, argv) -> tuple[list[str], bool]:
    """argv run in a mount namespace where the source and build trees are
    empty tmpfs mounts, if this machine allows one (root, or user namespaces);
    else argv as it is."""
    roots = [REPO] + ([build.root] if REPO not in build.root.parents and build.root != REPO else [])
    mounts = " && ".join(f"mount -t tmpfs memrec-hidden {shlex.quote(str(r))}" for r in roots)
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            f"{mounts} && test ! -e {shlex.quote(str(build.root / 'build.ninja'))}"],
                           capture_output=True, timeout=30)
    if shutil.which("unshare") is None or probe.returncode != 0:
        return [str(a) for a in argv], False
    script = f'{mounts} && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *map(str, argv)], True


def test_installed_memrec_records_and_reports_a_program_with_the_build_tree_out_of_reach(build, installed, tmp_path):
    # given leak_three copied out of the build, which is then hidden
    prog = tmp_path / "leak_three"
    shutil.copy2(build.program("leak_three"), prog)
    out = tmp_path / "dumps"
    out.mkdir()
    # when the installed memrec runs it (run, then report), from a neutral folder
    argv, hidden = hide_trees_argv(build, [
        "sh", "-c", f'"$1" run --output "$2/%e.%p.dat" -- "$3" && "$1" report --json --top 100 "$2"/*.dat',
        "sh", installed.memrec, out, prog])
    result = run(argv, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert "leak_three: leaked 3 x 4242" in result.stdout
    # then the preload it used was the installed one, never the build's
    dats = list(out.glob("*.dat"))
    assert len(dats) == 1, result.describe()
    info = json.loads(run([installed.memrec, "info", "--json", dats[0]]).stdout)
    preloads = [m["path"] for m in info["modules"] if "libmemrec" in m["path"]]
    assert preloads == [str(installed.preload)], preloads
    assert not [m["path"] for m in info["modules"] if str(build.root) in m["path"]]
    # and the report names the leak
    doc = json.loads(result.stdout[result.stdout.index("{"):])
    assert_report_tables(doc)
    (process,) = doc["processes"]
    leaked = [s for s in ranked_sites(process["report"], "leaked")
              if any("leak_here" in (f.get("function") or "") for f in s["frames"])]
    assert sum(s["leaked_count"] for s in leaked) == 3
    assert sum(s["leaked_bytes"] for s in leaked) == 3 * 4242
    if not hidden:
        pytest.skip("ran with the build tree visible: this machine allows no mount namespace "
                    "(the preload path was still checked)")


def test_man_page_names_every_command_and_variable(installed):
    # given the installed man page and the installed memrec's own help
    page = installed.man_page.read_text()
    usage = run([installed.memrec, "--help"]).stdout
    env = run([installed.memrec, "help", "env"]).stdout
    # then it has a section for each command and an entry for each variable
    commands = [c for c in re.findall(r"^  ([a-z]+) ", usage, re.M) if c != "help"]
    assert commands, usage
    for command in commands:
        assert f'.SS "memrec {command}"' in page
    for name in re.findall(r"^(MEMREC_\w+)=", env, re.M):
        assert f"\\fB{name}\\fR" in page
    # and man renders it without a warning, where groff is installed
    if shutil.which("groff"):
        render = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(installed.man_page)],
                                capture_output=True, text=True)
        assert render.returncode == 0 and render.stderr == "", render.stderr


def candidates(library: str) -> list[str]:
    """The names dpkg may know a library by (Debian 12 merged /lib into /usr/lib)."""
    real = os.path.realpath(library)
    return list(dict.fromkeys([library, real, re.sub(r"^/usr/lib/", "/lib/", real)]))


def needed_packages(*binaries: Path) -> dict[Path, set[str]]:
    """The Debian packages of the libraries each binary links directly
    (DT_NEEDED), from one `dpkg -S` for all of them."""
    libraries: dict[Path, list[str]] = {}
    for binary in binaries:
        dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
        resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, check=True).stdout, re.M))
        libraries[binary] = [resolved[name] for name in needed if name in resolved]
    paths = sorted({c for libs in libraries.values() for lib in libs for c in candidates(lib)})
    found = subprocess.run(["dpkg", "-S", *paths], capture_output=True, text=True).stdout
    owner = {path: pkgs.split(",")[0].split(":")[0].strip()
             for pkgs, path in re.findall(r"^(.+): (/\S+)$", found, re.M)}
    result = {}
    for binary, libs in libraries.items():
        packages = set()
        for lib in libs:
            package = next((owner[c] for c in candidates(lib) if c in owner), None)
            assert package, f"dpkg -S finds no package for {lib}, which {binary.name} links"
            packages.add(package)
        result[binary] = packages
    return result


def test_install_runtime_names_every_package_the_installed_files_link(installed, tmp_path):
    script = REPO / "scripts" / "install-runtime"
    # given the lists scripts/install-runtime installs
    full = set(run([script, "--list"]).stdout.split())
    preload_only = set(run([script, "--preload-only", "--list"]).stdout.split())
    # then they hold the package of every library memrec and libmemrec.so link
    needed = needed_packages(installed.memrec, installed.preload)
    assert needed[installed.memrec] | needed[installed.preload] <= full
    assert needed[installed.preload] <= preload_only <= full
    # and, run as the Dockerfile runs it, it installs nothing more here and makes the dump folder
    dumps = tmp_path / "profiles"
    result = run([script, "--dump-dir", dumps])
    assert result.returncode == 0, result.describe()
    assert stat.S_IMODE(dumps.stat().st_mode) == 0o1777


# --- docker/Dockerfile ---------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_every_dockerfile_run_line_calls_only_scripts_that_these_tests_run():
    # given the Dockerfile's RUN lines, and the scripts its COPY lines put into an image
    copied = {}
    for word, args in dockerfile_instructions():
        if word == "COPY" and not args.startswith("--from"):
            src, dst = args.split()
            copied[dst] = src
    runs = [args for word, args in dockerfile_instructions() if word == "RUN"]
    assert runs
    for line in runs:
        # then each command of it is one of the tested scripts, and nothing else
        for command in re.split(r"&&|;|\|\|", line):
            program = shlex.split(command)[0]
            script = copied.get(program, program.removeprefix("./"))
            assert script in TESTED_SCRIPTS, f"RUN {line}: {program} is not a script that tests/ runs"
            assert (REPO / script).is_file() and os.access(REPO / script, os.X_OK), script
        # and uses only options these tests use
        for option in re.findall(r"\s(--[a-z-]+)", line):
            assert option in ("--dump-dir",), f"RUN {line}: {option} is not tested"


def test_dockerfile_ld_preload_reaches_the_installed_preload(installed, tmp_path):
    # given the Dockerfile's LD_PRELOAD, copied from the staging root's prefix
    env_line = next(args for word, args in dockerfile_instructions() if word == "ENV" and "LD_PRELOAD=" in args)
    ld_preload = re.search(r"LD_PRELOAD=(\S+)", env_line).group(1).replace("\\$", "$")
    copy = next(args for word, args in dockerfile_instructions() if word == "COPY" and args.startswith("--from=build"))
    src, dst = copy.split()[1:]
    assert src.rstrip("/").endswith(str(installed.prefix.relative_to(installed.dest))), (src, installed.prefix)
    assert ld_preload.startswith(dst), (ld_preload, dst)
    # when a program runs with it, the image's /usr/local being our installed prefix
    preload = str(installed.prefix) + "/" + ld_preload[len(dst):]
    out = tmp_path / "dumps"
    out.mkdir()
    result = run(["/bin/true"], env=clean_env({"LD_PRELOAD": preload, "MEMREC_OUTPUT": f"{out}/%e.%p.dat"}))
    assert result.returncode == 0 and result.stderr == "", result.describe()
    # then ld.so expanded $LIB to the directory meson installed libmemrec.so into
    (dat,) = out.glob("*.dat")
    info = json.loads(run([installed.memrec, "info", "--json", dat]).stdout)
    assert [m["path"] for m in info["modules"] if "libmemrec" in m["path"]] == [str(installed.preload)]


def test_the_installed_header_builds_a_program_that_runs_with_and_without_memrec(installed, tmp_path):
    # given a C program that looks memrec_mark up through the installed header
    source = tmp_path / "marks.c"
    source.write_text('#include <dlfcn.h>\n#include <stdio.h>\n#include <memrec/mark.h>\n'
                      'int main(void) {\n'
                      '  memrec_mark_fn mark = (memrec_mark_fn)dlsym(RTLD_DEFAULT, MEMREC_MARK_SYMBOL);\n'
                      '  if (mark != NULL) mark("ready");\n'
                      '  puts(mark != NULL ? "found" : "absent");\n'
                      '  return 0;\n}\n')
    exe = tmp_path / "marks"
    cc = run(["cc", "-std=c11", "-Wall", "-Werror", "-I", installed.mark_header.parent.parent, source, "-o", exe, "-ldl"])
    assert cc.returncode == 0, cc.describe()
    # then it runs without memrec, and under the installed preload it sets its marker
    plain = run([exe])
    assert (plain.returncode, plain.stdout) == (0, "absent\n"), plain.describe()
    out = tmp_path / "out"
    out.mkdir()
    env = clean_env({"LD_PRELOAD": str(installed.preload), "MEMREC_OUTPUT": str(out / "%p.dat")})
    recorded = run([exe], env=env)
    assert (recorded.returncode, recorded.stdout) == (0, "found\n"), recorded.describe()
    info = run([installed.memrec, "info", "--json", *out.iterdir()])
    assert info.returncode == 0 and '"ready"' in info.stdout, info.describe()
