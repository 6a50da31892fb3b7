"""The one runner of fastfs's benchmarks.

    python bench/run.py --list                  every benchmark, by folder
    python bench/run.py compare_relief [ARGS]   one benchmark, full size (ARGS go to it)
    python bench/run.py --smoke [--out DIR] [--cpp BUILD_DIR] [NAME ...]
                                                every (or the named) benchmark at smoke size,
                                                as CI runs them; exit status 1 if any failed

The folders: cpp/ (C++ benchmark binaries, built with -DFASTFS_BUILD_BENCH=ON; --cpp names the
build folder that holds them), compare/ (fastfs against peers and baselines), checks/
(properties of speed: a busy core, tiny weights, scatter criteria, GCC against Clang),
experiments/ (the papers' experiments against their published figures). baselines/ holds the
NumPy implementations the comparisons time; benchlib.py what the scripts share. A script joins
the runner by being in one of the folders and taking --smoke (and --out if it writes a report).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
FOLDERS = ("compare", "checks", "experiments")
# The C++ binaries' smoke sizes: a few hundred samples, both thread counts, two repeats.
CPP_SMOKE = ["--samples", "200", "--features", "20", "--threads", "1,2", "--repeat", "2"]


def scripts() -> dict[str, Path]:
    """Every runnable script, by name (file name without .py)."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((BENCH / folder).glob("*.py")):
            if path.name.startswith("_"):
                continue
            if path.stem in found:
                raise SystemExit(f"bench/run.py: two benchmarks named {path.stem!r}")
            found[path.stem] = path
    return found


def cpp_sources() -> list[str]:
    return [p.stem for p in sorted((BENCH / "cpp").glob("bench_*.cpp"))]


def takes(path: Path, option: str) -> bool:
    """Does the script accept `option`? (benchlib.add_run_arguments gives --smoke and --out.)"""
    text = path.read_text()
    return f'"{option}"' in text or "add_run_arguments" in text


# (benchlib.BLAS_WORKERS_NOTE: OpenBLAS's spinning workers would take the core of fastfs's
# second thread in the alternating timings.)
CHILD_ENV = {"OPENBLAS_THREAD_TIMEOUT": "4", **os.environ}


def run(cmd: list[str]) -> tuple[bool, float]:
    start = time.perf_counter()
    done = subprocess.run(cmd, check=False, env=CHILD_ENV)
    return done.returncode == 0, time.perf_counter() - start


def smoke(names: list[str], out: str | None, cpp: str | None) -> int:
    table = scripts()
    unknown = [n for n in names if n not in table and n not in cpp_sources()]
    if unknown:
        raise SystemExit(f"bench/run.py: no benchmark named {', '.join(unknown)} (see --list)")
    jobs: list[tuple[str, list[str]]] = []
    if cpp is not None:
        for name in cpp_sources():
            if not names or name in names:
                binary = Path(cpp) / name
                if not binary.exists():
                    raise SystemExit(f"bench/run.py: --cpp {cpp} holds no {name}; build it with "
                                     "-DFASTFS_BUILD_BENCH=ON")
                jobs.append((name, [str(binary), *CPP_SMOKE]))
    for name, path in table.items():
        if names and name not in names:
            continue
        if not takes(path, "--smoke"):
            print(f"== {name}: no smoke mode, not run", flush=True)
            continue
        cmd = [sys.executable, str(path), "--smoke"]
        if out is not None and takes(path, "--out"):
            cmd += ["--out", out]
        jobs.append((name, cmd))
    failed = []
    for name, cmd in jobs:
        print(f"== {name} (smoke)", flush=True)
        ok, seconds = run(cmd)
        print(f"== {name}: {'ok' if ok else 'FAILED'} in {seconds:.1f} s", flush=True)
        if not ok:
            failed.append(name)
    print(f"bench/run.py: {len(jobs) - len(failed)} of {len(jobs)} smoke runs passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                usage=__doc__.split("\n\n")[1])
    p.add_argument("--list", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--out", help="report folder for the smoke runs")
    p.add_argument("--cpp", help="build folder holding the C++ benchmark binaries")
    p.add_argument("names", nargs="*")
    if argv and not argv[0].startswith("-"):
        # one benchmark at full size; everything after its name is its own
        name, rest = argv[0], argv[1:]
        table = scripts()
        if name not in table:
            raise SystemExit(f"bench/run.py: no benchmark named {name!r} (see --list)")
        return subprocess.run([sys.executable, str(table[name]), *rest], check=False,
                              env=CHILD_ENV).returncode
    args = p.parse_args(argv)
    if args.list:
        for name, path in scripts().items():
            print(f"{path.parent.name + '/':13s}{name}")
        for name in cpp_sources():
            print(f"{'cpp/':13s}{name}")
        return 0
    if args.smoke:
        return smoke(args.names, args.out, args.cpp)
    p.print_usage()
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
