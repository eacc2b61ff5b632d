#!/usr/bin/python3
"""Writes memrec's reference from the binary itself, so it cannot drift from
the code: every command's `memrec COMMAND --help` and the MEMREC_* variables of
`memrec help env` (printed from preload/include/memrec/preload/environment.h,
the table the preload reads them by).

Writes docs/reference.md and the generated blocks of README.md; with --check
it only compares them (tests/integration/test_reference.py runs that); with
--man FILE it writes the man page memrec.1 instead (meson does, at build time).
scripts/reference is the front door: it builds build/ first.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_MD = ROOT / "docs" / "reference.md"
README_MD = ROOT / "README.md"
REGENERATE = "./scripts/reference"


@dataclass
class Command:
    name: str
    synopsis: str  # what follows `memrec` in the usage's command list
    summary: str   # its one-line description there, joined
    help: str      # `memrec NAME --help`


@dataclass
class Variable:
    name: str
    default: str
    meaning: str


@dataclass
class Reference:
    version: str
    usage: str
    commands: list[Command]
    environment_intro: str
    variables: list[Variable]


def run_memrec(memrec: Path, *args: str) -> str:
    # The reference must not depend on who runs it: no preload, no locale.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMREC_", "LD_PRELOAD"))}
    env["LC_ALL"] = "C"
    proc = subprocess.run([str(memrec), *args], capture_output=True, text=True, env=env, timeout=60)
    if proc.returncode != 0:
        raise SystemExit(f"reference: `memrec {' '.join(args)}` exited {proc.returncode}:\n{proc.stderr}")
    return proc.stdout


def parse_commands(usage: str) -> list[tuple[str, str, str]]:
    """The (name, synopsis, summary) of each entry of the usage's "Commands:"
    list: an entry starts at two spaces of indent, its description follows
    after two or more spaces or on lines indented further."""
    entries: list[list[str]] = []
    in_list = False
    for line in usage.splitlines():
        if line.strip() == "Commands:":
            in_list = True
            continue
        if not in_list:
            continue
        if not line.strip():
            if entries:
                break
            continue
        if re.match(r"^  [a-z]", line):
            head, _, description = line.strip().partition("  ")
            entries.append([head.strip(), description.strip()])
        elif entries and line.startswith("   "):
            entries[-1][1] = (entries[-1][1] + " " + line.strip()).strip()
        else:
            break
    if not entries:
        raise SystemExit("reference: found no command list in `memrec --help`")
    return [(head.split()[0], head, description) for head, description in entries]


def parse_environment(text: str) -> tuple[str, list[Variable]]:
    """`memrec help env`: an introduction, then per variable a NAME=DEFAULT
    line and its meaning indented by four spaces."""
    intro: list[str] = []
    variables = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.splitlines()
        m = re.fullmatch(r"(MEMREC_[A-Z0-9_]+)=(.*)", lines[0])
        if m:
            variables.append(Variable(m.group(1), m.group(2), " ".join(line.strip() for line in lines[1:])))
        elif not variables:
            intro += [line.strip() for line in lines if not line.startswith("usage:")]
    if not variables:
        raise SystemExit("reference: found no MEMREC_ variable in `memrec help env`")
    return " ".join(intro), variables


def collect(memrec: Path) -> Reference:
    usage = run_memrec(memrec, "--help")
    commands = []
    for name, synopsis, summary in parse_commands(usage):
        if name == "help":
            continue  # its topics are the other commands and the environment
        commands.append(Command(name, synopsis, summary, run_memrec(memrec, name, "--help")))
    environment = run_memrec(memrec, "help", "env")
    intro, variables = parse_environment(environment)
    version = run_memrec(memrec, "--version").strip()
    return Reference(version, usage, commands, intro, variables)


# --- Markdown -------------------------------------------------------------------


def md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def md_code(text: str) -> str:
    return f"`{text}`" if text else "(empty)"


def environment_table(ref: Reference) -> str:
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {md_code(v.default)} | {md_cell(v.meaning)} |" for v in ref.variables]
    return "\n".join(rows) + "\n"


def command_table(ref: Reference) -> str:
    rows = ["| command | what it does |", "|---|---|"]
    rows += [f"| [`memrec {md_cell(c.synopsis)}`](docs/reference.md#memrec-{c.name}) | {md_cell(c.summary)} |"
             for c in ref.commands]
    return "\n".join(rows) + "\n"


def reference_md(ref: Reference) -> str:
    out = [
        "# memrec reference",
        "",
        "<!-- Generated by scripts/reference from `memrec --help`, `memrec COMMAND --help` and",
        "     `memrec help env`. Edit those (analyzer/main.cpp, preload/include/memrec/preload/environment.h),",
        "     then run ./scripts/reference; ./scripts/test fails while this file is stale. -->",
        "",
        f"This is the help of {ref.version}, as the installed `memrec help`, `memrec COMMAND --help`,",
        "`memrec help env` and `man memrec` print it.",
        "",
        "## Commands",
        "",
        "```text",
        ref.usage.rstrip("\n"),
        "```",
        "",
    ]
    for c in ref.commands:
        out += [f"### memrec {c.name}", "", "```text", c.help.rstrip("\n"), "```", ""]
    out += ["## Environment variables", "", ref.environment_intro, "", environment_table(ref).rstrip("\n"), ""]
    return "\n".join(out)


def replace_block(text: str, name: str, body: str, path: Path) -> str:
    begin = f"<!-- BEGIN {name}: generated by scripts/reference -->"
    end = f"<!-- END {name} -->"
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"reference: {path} has no block\n  {begin}\n  ...\n  {end}")
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


def readme_md(ref: Reference, current: str) -> str:
    text = replace_block(current, "commands", command_table(ref), README_MD)
    return replace_block(text, "environment", environment_table(ref), README_MD)


# --- man page -------------------------------------------------------------------


def roff_text(text: str) -> str:
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.split("\n"))


def roff_verbatim(text: str) -> list[str]:
    return [".PP", ".nf", ".RS 2", roff_text(text.rstrip("\n")), ".RE", ".fi"]


def man_page(ref: Reference) -> str:
    version = ref.version
    out = [
        f'.TH MEMREC 1 "" "{version}" "User Commands"',
        ".SH NAME",
        "memrec \\- record the allocations of native Linux programs and analyze them",
        ".SH SYNOPSIS",
        ".B memrec run",
        "[\\fIOPTIONS\\fR] \\-\\- \\fICMD\\fR [\\fIARGS\\fR...]",
        ".br",
        ".B memrec",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] \\fIFILE\\fR...",
        ".br",
        "LD_PRELOAD=\\fIlibdir\\fR/memrec/libmemrec.so \\fIprogram\\fR",
        ".SH DESCRIPTION",
        "libmemrec.so, preloaded into a program, records every allocation and free",
        "with its backtrace into a compact dump file (.dat). The \\fBmemrec\\fR",
        "command starts programs under it and reads the dumps: reports of leaks,",
        "the peak and the call sites, exports for other tools, comparisons, and a",
        "browser UI.",
        ".SH COMMANDS",
        *roff_verbatim(ref.usage),
    ]
    for c in ref.commands:
        out += [f'.SS "memrec {c.name}"', *roff_verbatim(c.help)]
    out += [".SH ENVIRONMENT", roff_text(ref.environment_intro)]
    for v in ref.variables:
        out += [".TP", f"\\fB{v.name}\\fR (default: {roff_text(v.default) or 'empty'})", roff_text(v.meaning)]
    out += [
        ".SH EXIT STATUS",
        "0 ok, 1 usage error, 2 bad input (a missing, corrupt or foreign file), 3 internal error;",
        "\\fBmemrec run\\fR exits with the program's own status.",
        ".SH SEE ALSO",
        "\\fBheaptrack\\fR(1), \\fBvalgrind\\fR(1); the README and reference.md in the",
        "documentation directory of memrec.",
        "",
    ]
    return "\n".join(out)


# --- main -------------------------------------------------------------------------


def compare(path: Path, want: str) -> bool:
    have = path.read_text() if path.exists() else ""
    if have == want:
        return True
    sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                               f"{path.relative_to(ROOT)} (committed)",
                                               f"{path.relative_to(ROOT)} (from memrec)", n=1))
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memrec", type=Path, help="the memrec binary (default: $MEMREC_BUILD_DIR or build/)")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if a file is stale")
    parser.add_argument("--man", type=Path, metavar="FILE", help="write the man page to FILE and nothing else")
    args = parser.parse_args()
    memrec = args.memrec or Path(os.environ.get("MEMREC_BUILD_DIR", ROOT / "build")) / "analyzer" / "memrec"
    if not memrec.exists():
        raise SystemExit(f"reference: {memrec} does not exist: build memrec first (./scripts/reference does)")
    ref = collect(memrec)
    if args.man:
        args.man.write_text(man_page(ref))
        return 0
    files = {REFERENCE_MD: reference_md(ref), README_MD: readme_md(ref, README_MD.read_text())}
    if args.check:
        stale = [path for path, text in files.items() if not compare(path, text)]
        for path in stale:
            print(f"reference: {path.relative_to(ROOT)} differs from what memrec prints: run {REGENERATE}")
        return 1 if stale else 0
    for path, text in files.items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"reference: wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
