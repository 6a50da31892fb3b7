"""Benchmark: the same source built by GCC and by Clang (the compiler of the macOS wheels).

Clang multiversions no function template, so a Clang build runs the loops marked for cloning
(`FASTFS_SIMD_CLONES`) at the platform's baseline width, keeping only the kernels that pick
their AVX2 version at run time, and it vectorises some loops differently from GCC. This script
builds the extension with Clang (unless given one), then times a fixed set of calls on both
builds, each build in its own processes, alternating between them round by round, and checks
first that both builds return the same results.

    python bench/checks/compilers.py                      # builds build/bench-clang, 3 rounds
    python bench/checks/compilers.py --clang-tree DIR     # DIR/fastfs: a Clang-built package
    python bench/checks/compilers.py --rounds 5 --repeat 7
    python bench/checks/compilers.py --smoke              # tiny sizes, the installed build
                                                          # against itself (CI; builds nothing)

The baseline is the installed fastfs (`--baseline-tree DIR` names another). Figures: per call,
the median over every round of each round's median of --repeat calls (one thread unless
--threads says otherwise); ratio = Clang / baseline (above 1: the Clang build is slower).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

# Results of the two builds must agree to this (relative to the largest magnitude): sums the
# compilers order differently (OMP's dot products, a Clang build's baseline-width loops) may
# differ in their last bits.
AGREE_TOL = 1e-9


# ------------------------------------------------------------------------------------------
# The worker: one build, every call, in a fresh process.

def _use_tree(tree: str) -> None:
    """Import fastfs from `tree` (a directory holding the fastfs package), ahead of an
    installed or editable copy (whose import hook would otherwise win over sys.path)."""
    if not tree:
        return
    sys.meta_path[:] = [f for f in sys.meta_path if "Redirect" not in type(f).__name__]
    sys.path.insert(0, tree)


def _calls(smoke: bool, seed: int, n_jobs: int, data_dir: Path):
    import fastfs

    m, n = (200, 40) if smoke else (1000, 300)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    order = rng.permutation(m)
    npz = np.load(data_dir / "prostate_ge.npz", allow_pickle=False)
    Xg = np.ascontiguousarray(npz["X"], dtype=np.float64)
    yg = np.unique(npz["y"], return_inverse=True)[1].astype(np.int64)
    if smoke:
        Xg = np.ascontiguousarray(Xg[:, :300])
    atoms = 10 if smoke else 50
    size, wide = f"{m} x {n}", f"prostate_ge {Xg.shape[0]} x {Xg.shape[1]}"
    return [
        ("margins", size,
         lambda: fastfs.margins(X, y, n_jobs=n_jobs)),
        ("Relief", size,
         lambda: fastfs.relief(X, y, n_jobs=n_jobs).weights),
        ("ReliefF, k = 10", size,
         lambda: fastfs.relieff(X, y, n_jobs=n_jobs).weights),
        ("Simba, one pass", size,
         lambda: fastfs.simba(X, y, sample_order=order, n_restarts=1, n_jobs=n_jobs).weights),
        ("G-flip, one epoch", size,
         lambda: fastfs.gflip(X, y, max_epochs=1, n_restarts=1, random_state=seed,
                              n_jobs=n_jobs).support),
        ("Relief", wide,
         lambda: fastfs.relief(Xg, yg, n_jobs=n_jobs).weights),
        ("Simba, one pass", wide,
         lambda: fastfs.simba(Xg, yg, sample_order=np.arange(Xg.shape[0]), n_restarts=1,
                              n_jobs=n_jobs).weights),
        (f"OMP, {atoms} atoms", wide,
         lambda: fastfs.omp(Xg, yg.astype(np.float64), atoms, n_jobs=n_jobs).selected),
    ]


def worker(args: argparse.Namespace) -> None:
    import time

    import fastfs  # from args.worker_tree: main() chose the build before anything imported it

    out = {"compiler": _compiler(), "file": fastfs.__file__,
           "calls": []}
    for name, size, call in _calls(args.smoke, args.seed, args.threads, args.data_dir):
        result = np.asarray(call(), dtype=np.float64)  # also the warm-up
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        out["calls"].append({"name": name, "size": size, "times": times,
                             "result": result.ravel().tolist()})
    print(json.dumps(out))


def _compiler() -> str:
    from fastfs._show_config import build_config

    return str(build_config()["compiler"]).strip()


# ------------------------------------------------------------------------------------------
# The driver.

def find_clang() -> tuple[str, str] | None:
    for cc, cxx in (("clang-14", "clang++-14"), ("clang", "clang++")):
        if shutil.which(cxx) and shutil.which(cc):
            return cc, cxx
    return None


def build_clang(build_dir: Path) -> Path:
    """Build the extension with Clang into build_dir; return a tree holding fastfs with it."""
    found = find_clang()
    if found is None:
        raise SystemExit("compilers.py: no clang++ on PATH (Debian: apt-get install clang-14 "
                         "libomp-14-dev), or pass --clang-tree")
    cc, cxx = found
    prefix = ";".join(subprocess.run([sys.executable, "-m", mod, *arg], check=True,
                                     capture_output=True, text=True).stdout.strip()
                      for mod, arg in (("cmeel", ["cmake"]), ("pybind11", ["--cmakedir"])))
    # cmake and ninja from PATH, or from beside this interpreter (pip's cmake and ninja wheels)
    here = Path(sys.executable).parent
    env = {**os.environ, "CC": cc, "CXX": cxx, "PATH": f"{os.environ.get('PATH', '')}:{here}"}
    cmake = shutil.which("cmake", path=env["PATH"])
    if cmake is None or shutil.which("ninja", path=env["PATH"]) is None:
        raise SystemExit("compilers.py: needs cmake and ninja (pip install cmake ninja)")
    subprocess.run([cmake, "-S", str(REPO), "-B", str(build_dir), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}",
                    f"-DCMAKE_PREFIX_PATH={prefix}"], check=True, env=env)
    subprocess.run([cmake, "--build", str(build_dir), "--target", "_core"], check=True, env=env)
    tree = build_dir / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(REPO / "python" / "fastfs", tree / "fastfs",
                    ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    for so in build_dir.glob("_core*.so"):
        shutil.copy2(so, tree / "fastfs" / so.name)
    return tree


def run_worker(tree: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker-tree", tree, "--repeat", str(args.repeat),
           "--threads", str(args.threads), "--seed", str(args.seed),
           "--data-dir", str(args.data_dir), "--worker"]
    if args.smoke:
        cmd.append("--smoke")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads),
           "OPENBLAS_NUM_THREADS": "1", "OPENBLAS_THREAD_TIMEOUT": "4"}
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--worker" in argv:  # the build under test, before benchlib (or anything) imports fastfs
        at = argv.index("--worker-tree") if "--worker-tree" in argv else -1
        _use_tree(argv[at + 1] if 0 <= at < len(argv) - 1 else "")
    from benchlib import (add_run_arguments, finish_run, machine_info, output_dir, rel_diff,
                          write_md_json)

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_arguments(p, smoke_help="tiny sizes; the installed build against itself",
                      threads=False)
    p.add_argument("--threads", type=int, default=1, help="n_jobs of every call")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=7, help="calls a round, after one warm-up")
    p.add_argument("--baseline-tree", default="",
                   help="a directory holding the baseline's fastfs (default: the installed one)")
    p.add_argument("--clang-tree", default=None,
                   help="a directory holding a Clang-built fastfs (default: build one)")
    p.add_argument("--build-dir", type=Path, default=REPO / "build" / "bench-clang")
    p.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-tree", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        p.error("--rounds, --repeat and --threads must be at least 1")
    if args.worker:
        worker(args)
        return
    if not (args.data_dir / "prostate_ge.npz").exists():
        p.error(f"--data-dir {args.data_dir} holds no prostate_ge.npz")
    if args.smoke:
        args.rounds, args.repeat = 1, 2
        clang_tree = args.clang_tree if args.clang_tree is not None else args.baseline_tree
    else:
        clang_tree = (args.clang_tree if args.clang_tree is not None
                      else str(build_clang(args.build_dir)))

    info = machine_info()
    builds = {"baseline": args.baseline_tree, "clang": clang_tree}
    runs: dict[str, list[dict]] = {k: [] for k in builds}
    for r in range(args.rounds):
        for key in (builds if r % 2 == 0 else reversed(list(builds))):
            runs[key].append(run_worker(builds[key], args))
            print(f"round {r + 1}/{args.rounds}: {key} ({runs[key][-1]['compiler']}) done",
                  flush=True)
    finish_run(info)

    base, clang = runs["baseline"], runs["clang"]
    rows = []
    for i, call in enumerate(base[0]["calls"]):
        diff = rel_diff(call["result"], clang[0]["calls"][i]["result"])
        if not diff <= AGREE_TOL:
            raise SystemExit(f"compilers.py: {call['name']} ({call['size']}) differs between "
                             f"the builds by {diff:.3g} (tolerance {AGREE_TOL:g})")
        tb = statistics.median(statistics.median(run["calls"][i]["times"]) for run in base)
        tc = statistics.median(statistics.median(run["calls"][i]["times"]) for run in clang)
        rows.append({"call": call["name"], "size": call["size"], "baseline_s": tb,
                     "clang_s": tc, "ratio": tc / tb, "agreement": diff})

    lines = [
        "# The same source built by two compilers",
        "",
        f"Command: `python bench/checks/compilers.py {' '.join(sys.argv[1:])}`",
        "",
        f"Baseline: {base[0]['compiler']} ({base[0]['file']}); other: {clang[0]['compiler']} "
        f"({clang[0]['file']}). {info['cpu']}, {info['usable_cores']} usable cores; "
        f"n_jobs = {args.threads}; {args.rounds} rounds of {args.repeat} calls, alternating "
        f"the builds; load average before / after: {info['load_before']} / "
        f"{info['load_after']}; {info['date']}.",
        "",
        "| call | data | baseline | other | other / baseline | results agree to |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(f"| {row['call']} | {row['size']} | {row['baseline_s'] * 1e3:.3g} ms | "
                     f"{row['clang_s'] * 1e3:.3g} ms | {row['ratio']:.2f}x | "
                     f"{row['agreement']:.1g} |")
    md = "\n".join(lines) + "\n"
    out = output_dir(args)
    write_md_json(out, "compilers", md, {
        "machine": info, "builds": {k: v[0]["compiler"] for k, v in runs.items()},
        "rows": rows})
    print()
    print(md)
    print(f"wrote {out / 'compilers.md'}, compilers.json")


if __name__ == "__main__":
    main()
