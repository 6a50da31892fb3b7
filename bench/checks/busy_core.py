"""Benchmark: the default n_jobs against n_jobs=1 while another process keeps one core busy.

OpenMP threads that spin while they wait for each other steal the CPU from the thread that
shares its core with the other process, so on a busy machine a parallel region can take many
times longer than the same work on one thread. fastfs asks the OpenMP runtime to sleep instead
of spinning (unless the user chose a wait policy); this script measures whether the default
n_jobs still at least matches n_jobs=1 when a competing process occupies a core.

For every function with a parallel region (G-flip, Simba, sfs with loo_knn_accuracy, margins,
Relief, ReliefF, SURF, SURF*, MultiSURF, MultiSURF*, RGS, SKS, OMP, the LASSO path and a
filter) it times n_jobs=None and n_jobs=1, alternating them, with a pure-Python busy loop running in another process, and prints the median of the
repeats and the ratio None / 1 (below 1: the default is faster). With --idle it also times
them without the competing process.

    python bench/checks/busy_core.py                  # m = 1000, n = 20; 5 repeats
    python bench/checks/busy_core.py --features 300   # wide enough for the float32 screens
    python bench/checks/busy_core.py --only relieff,multisurf
    python bench/checks/busy_core.py --smoke          # tiny sizes, 2 repeats, a few seconds (CI)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

import fastfs


def _busy(stop) -> None:  # pragma: no cover - runs in the competing process
    while not stop.is_set():
        for _ in range(100_000):
            pass


def _problem(m: int, n: int, seed: int):
    X, y = fastfs.datasets.make_xor(m, n_features=n, random_state=seed)
    return X, y


def _calls(X, y, seed: int):
    t = y.astype(float) + 0.1 * X[:, 0]  # a continuous target for the regression methods
    k = min(10, X.shape[1])
    return {
        "gflip": lambda n_jobs: fastfs.gflip(X, y, n_restarts=1, random_state=seed,
                                             n_jobs=n_jobs),
        "simba": lambda n_jobs: fastfs.simba(X, y, n_restarts=2, random_state=seed,
                                             n_jobs=n_jobs),
        "sfs": lambda n_jobs: fastfs.sfs(X, y, 5, n_jobs=n_jobs),
        "margins": lambda n_jobs: fastfs.margins(X, y, n_jobs=n_jobs),
        "relief": lambda n_jobs: fastfs.relief(X, y, n_jobs=n_jobs),
        "relieff": lambda n_jobs: fastfs.relieff(X, y, n_jobs=n_jobs),
        "surf": lambda n_jobs: fastfs.surf(X, y, n_jobs=n_jobs),
        "surfstar": lambda n_jobs: fastfs.surfstar(X, y, n_jobs=n_jobs),
        "multisurf": lambda n_jobs: fastfs.multisurf(X, y, n_jobs=n_jobs),
        "multisurfstar": lambda n_jobs: fastfs.multisurfstar(X, y, n_jobs=n_jobs),
        "rgs": lambda n_jobs: fastfs.rgs(X, t, random_state=seed, n_jobs=n_jobs),
        "sks": lambda n_jobs: fastfs.sks(X, t, n_jobs=n_jobs),
        "omp": lambda n_jobs: fastfs.omp(X, t, k, n_jobs=n_jobs),
        "lasso_path": lambda n_jobs: fastfs.lasso_path(X, t, n_jobs=n_jobs),
        "anova_f": lambda n_jobs: fastfs.filters.anova_f(X, y, n_jobs=n_jobs),
    }


def _time(fn, n_jobs) -> float:
    t0 = time.perf_counter()
    fn(n_jobs)
    return time.perf_counter() - t0


def measure(calls, repeat: int) -> dict:
    """Median seconds per function and n_jobs, the two settings alternating."""
    out = {}
    for name, fn in calls.items():
        fn(1)  # warm-up: first-touch pages, thread pool creation
        times: dict = {None: [], 1: []}
        for _ in range(repeat):
            for n_jobs in (None, 1):
                times[n_jobs].append(_time(fn, n_jobs))
        out[name] = {k: statistics.median(v) for k, v in times.items()}
    return out


def _print(title: str, result: dict) -> None:
    print(f"\n{title}")
    print(f"{'function':<14} {'n_jobs=None':>12} {'n_jobs=1':>10} {'None / 1':>9}")
    for name, r in result.items():
        print(f"{name:<14} {r[None]:>11.4f}s {r[1]:>9.4f}s {r[None] / r[1]:>9.2f}")


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--idle", action="store_true", help="also time without the busy process")
    p.add_argument("--only", default=None, help="comma-separated functions (default: all)")
    p.add_argument("--busy", type=int, default=1,
                   help="competing processes, each a busy loop (default 1: one core kept busy)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.samples, args.features, args.repeat = 200, 10, 2
    X, y = _problem(args.samples, args.features, args.seed)
    calls = _calls(X, y, args.seed)
    if args.only:
        names = args.only.split(",")
        unknown = sorted(set(names) - set(calls))
        if unknown:
            p.error(f"--only: unknown function(s) {unknown}; choose from {sorted(calls)}")
        calls = {k: calls[k] for k in names}
    env = {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")}
    print(f"fastfs {fastfs.__version__}; {X.shape[0]} x {X.shape[1]}; repeats {args.repeat}; "
          f"cores {os.cpu_count()}; load {os.getloadavg()[0]:.2f}; environment {env}")
    results = {}
    if args.idle:
        results["idle"] = measure(calls, args.repeat)
        _print("no competing process", results["idle"])
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_busy, args=(stop,), daemon=True) for _ in range(args.busy)]
    for proc in procs:
        proc.start()
    try:
        time.sleep(0.2)
        results["busy"] = measure(calls, args.repeat)
    finally:
        stop.set()
        for proc in procs:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
    _print("one core kept busy by another process" if args.busy == 1 else
           f"{args.busy} competing busy processes", results["busy"])
    return results


if __name__ == "__main__":
    main()
