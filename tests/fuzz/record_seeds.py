#!/usr/bin/python3
"""Records the seed corpus for scripts/fuzz; stdlib only.

Runs a few tests/programs binaries under libmemrec.so (each with a timeout,
in a session of its own), so the seeds are dumps of the format this checkout
writes: one thread and many, fork, mmap, realloc, every allocation function,
deep stacks, pauses, dlopen. Then adds the two kinds of damage the reader
treats as data (a frame cut short, as by SIGKILL; a zero tail, as after power
loss) and shrinks dumps over --max-bytes to their header, first frames and
last frame, so libFuzzer (which cuts inputs at -max_len) still sees whole
frames and a clean end.

usage: record_seeds.py --build BUILD_DIR --out DIR [--max-bytes N]
Prints one line: how many seeds it wrote. Exits 1 if it could record none.
"""
from __future__ import annotations

import argparse
import os
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

# program, arguments.
PROGRAMS = [
    ("leak_three", []),
    ("threads_pass", []),
    ("fork_child", []),
    ("fork_child", ["busy"]),
    ("mmap_prog", []),
    ("realloc_chain", []),
    ("aligned", []),
    ("deep_stack", ["1100"]),
    ("toggle", []),
    ("thread_exit", []),
    ("dlopen_lib", []),
]
TIMEOUT_S = 30
HEADER_PREFIX = 16
ENVELOPE = 12


def record(build: Path, program: str, args: list[str], out_dir: Path) -> None:
    exe = build / "tests" / "programs" / program
    if not exe.exists():
        print(f"record_seeds: {exe} is missing; skipped", file=sys.stderr)
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREC_") and k != "LD_PRELOAD"}
    env["LD_PRELOAD"] = str(build / "preload" / "libmemrec.so")
    env["MEMREC_OUTPUT"] = str(out_dir / f"{program}{'-' + args[0] if args else ''}.%p.dat")
    # Frames every 10 ms rather than every second: more, smaller frames, so a
    # busy program's dump still has whole frames under --max-bytes.
    env["MEMREC_FLUSH_INTERVAL_MS"] = "10"
    proc = subprocess.Popen([str(exe), *args], env=env, cwd=out_dir, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"record_seeds: {program} did not finish in {TIMEOUT_S} s; killed", file=sys.stderr)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def frames_of(data: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(header size, [(offset, end)] of the complete frames)."""
    if len(data) < HEADER_PREFIX or data[:8] != b"MEMRECDT":
        return 0, []
    at = header = HEADER_PREFIX + struct.unpack_from("<I", data, 12)[0]
    frames = []
    while len(data) - at >= ENVELOPE and data[at:at + 4] == b"MRFZ":
        end = at + ENVELOPE + struct.unpack_from("<I", data, at + 4)[0]
        if end > len(data):
            break
        frames.append((at, end))
        at = end
    return header, frames


def shrink(data: bytes, max_bytes: int) -> bytes | None:
    """The header, as many leading frames as fit, then the last frame (the
    clean end) if it still fits; None if not even the header and one frame fit."""
    if len(data) <= max_bytes:
        return data
    header, frames = frames_of(data)
    out, kept = data[:header], 0
    for start, end in frames:
        if len(out) + (end - start) > max_bytes:
            break
        out += data[start:end]
        kept += 1
    if 0 < kept < len(frames) - 1 and len(out) + frames[-1][1] - frames[-1][0] <= max_bytes:
        out += data[frames[-1][0]:frames[-1][1]]
    return out if kept > 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-bytes", type=int, default=65536)
    args = parser.parse_args()
    args.build = args.build.resolve()
    if not (args.build / "preload" / "libmemrec.so").exists():
        print(f"record_seeds: {args.build}/preload/libmemrec.so is missing: build {args.build} first",
              file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    written = 0
    with tempfile.TemporaryDirectory(prefix="memrec-seeds-") as tmp:
        for program, prog_args in PROGRAMS:
            record(args.build, program, prog_args, Path(tmp))
        for dat in sorted(Path(tmp).iterdir()):
            data = shrink(dat.read_bytes(), args.max_bytes)
            if data is None:
                continue
            seeds = {dat.stem: data}
            header, frames = frames_of(data)
            if frames:
                start, end = frames[-1]
                seeds[dat.stem + "-cut"] = data[:(start + end) // 2]
                seeds[dat.stem + "-zero-tail"] = data[:start + ENVELOPE + 2] + bytes(end - start - ENVELOPE - 2)
            for name, seed in seeds.items():
                if len(seed) <= args.max_bytes:
                    (args.out / name).write_bytes(seed)
                    written += 1
    print(f"record_seeds: {written} seeds recorded in {args.out}")
    return 0 if written > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
