"""Benchmark: what the scikit-learn estimators of fastfs.sklearn add to the function's time.

For each method, on the same fixed-seed data in the same process, three things are timed in
alternation, --repeat times each (median reported): the function alone, the estimator's
``fit`` end to end (validation, the same function, the selection), and the estimator's own
work alone: ``fit`` with the function replaced by its result, computed beforehand. On a shared
machine the first two differ by noise of several percent either way, so the overhead is the
third over the first (target: the estimator adds less than 5% at 1000 x 500); the end-to-end
ratio is printed too. Before timing, the estimator's support is checked to be the function's.
Writes results_sklearn.md, results_sklearn.json and overhead_sklearn.png to --out.

    python bench/compare/compare_sklearn.py            # 1000 x 500, 1 thread, median of 5
    python bench/compare/compare_sklearn.py --smoke    # 150 x 20, seconds (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

import fastfs
from fastfs import filters
from fastfs import sklearn as fsk

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    fmt_s,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    timed,
    write_report,
)


def make_data(m: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian features; class labels and a real target that depend on the first three."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    signal = X[:, 0] + 0.8 * X[:, 1] - 0.6 * X[:, 2]
    labels = (signal + 0.5 * rng.normal(size=m) > 0).astype(np.int64)
    target = signal + 0.1 * rng.normal(size=m)
    return X, labels, target


def cases(n: int, threads: int) -> list[tuple]:
    """(name, function call, estimator, regression?) with the same parameters."""
    k = max(1, n // 10)
    return [
        ("gflip", lambda X, y: fastfs.gflip(X, y, n_restarts=1, random_state=0,
                                            n_jobs=threads).support,
         fsk.GFlip(n_restarts=1, random_state=0, n_jobs=threads), False),
        ("simba", lambda X, y: _top(fastfs.simba(X, y, n_restarts=1, random_state=0,
                                                 n_jobs=threads), k),
         fsk.Simba(k, n_restarts=1, random_state=0, n_jobs=threads), False),
        ("relieff", lambda X, y: _top(fastfs.relieff(X, y, n_jobs=threads), k),
         fsk.ReliefF(k, n_jobs=threads), False),
        ("rgs", lambda X, y: _top(fastfs.rgs(X, y, random_state=0, n_jobs=threads), k),
         fsk.RGS(k, random_state=0, n_jobs=threads), True),
        ("omp", lambda X, y: fastfs.omp(X, y, k, n_jobs=threads).support,
         fsk.OMP(k, n_jobs=threads), True),
        ("anova_f (filter)", lambda X, y: _kbest(filters.anova_f(X, y, n_jobs=threads), k),
         fsk.FilterSelector(lambda X, y: filters.anova_f(X, y, n_jobs=threads), mode="k_best",
                            param=k), False),
    ]


def _without_function(estimator, result):
    """A clone whose fit does everything but call the function (it returns ``result``)."""
    from sklearn.base import clone

    twin = clone(estimator)
    if isinstance(twin, fsk.FilterSelector):
        twin._score_function = lambda: (lambda X, y: result)
    else:
        twin._call = lambda X, y: result
    return twin


def _top(result, k: int) -> np.ndarray:
    support = np.zeros(len(result.weights), dtype=bool)
    support[np.asarray(result.ranking)[:k]] = True
    return support


def _kbest(result, k: int) -> np.ndarray:
    support = np.zeros(len(result.scores), dtype=bool)
    support[np.argsort(result.scores, kind="mergesort")[-k:]] = True
    return support


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--features", type=int, default=500)
    p.add_argument("--repeat", type=int, default=5)
    add_run_arguments(p, threads=False)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.smoke:
        args.samples, args.features, args.repeat = 150, 20, 3
    info = machine_info()
    X, labels, target = make_data(args.samples, args.features, args.seed)
    rows = []
    for name, call, estimator, regression in cases(args.features, args.threads):
        y = target if regression else labels
        direct = call(X, y)
        fitted = estimator.fit(X, y)
        if not np.array_equal(fitted.support_, direct):
            raise SystemExit(f"{name}: the estimator's support differs from the function's")
        wrapper = _without_function(estimator, fitted.result_)
        t_func, t_est, t_own = [], [], []
        for _ in range(args.repeat):  # alternate, so a change of load hits all alike
            t_func.append(timed(lambda: call(X, y))[0])
            t_est.append(timed(lambda: estimator.fit(X, y))[0])
            t_own.append(timed(lambda: wrapper.fit(X, y))[0])
        f, e, o = (statistics.median(t) for t in (t_func, t_est, t_own))
        rows.append({"method": name, "function_s": f, "estimator_s": e, "own_s": o,
                     "overhead": o / f, "end_to_end": e / f - 1})
        print(f"{name:18s} function {fmt_s(f):>9s}  estimator.fit {fmt_s(e):>9s} "
              f"({100 * (e / f - 1):+.1f}%)  its own work {fmt_s(o):>9s} = "
              f"{100 * o / f:.2f}% of the function", flush=True)
    finish_run(info)

    md = [f"# fastfs.sklearn: estimator overhead, {args.samples} x {args.features}",
          "", f"{info['cpu']}, {args.threads} thread(s), median of {args.repeat} "
          f"alternating runs; load {info['load_before']} -> {info['load_after']}", "",
          "| method | function | estimator.fit (end to end) | estimator's own work | "
          "overhead |", "|---|---|---|---|---|"]
    md += [f"| {r['method']} | {fmt_s(r['function_s'])} | {fmt_s(r['estimator_s'])} "
           f"({100 * r['end_to_end']:+.1f}%) | {fmt_s(r['own_s'])} | "
           f"{100 * r['overhead']:.2f}% |" for r in rows]
    md = "\n".join(md) + "\n"

    def plot_to(path: Path) -> None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.barh([r["method"] for r in rows], [100 * r["overhead"] for r in rows])
        ax.axvline(5, color="red", linestyle="--", label="5% target")
        ax.set_xlabel("estimator's own work, % of the function's time")
        ax.legend()
        save_figure(fig, path)

    write_report(output_dir(args), "results_sklearn", md, info, rows, args, plot_to,
                 "overhead_sklearn.png")


if __name__ == "__main__":
    main()
