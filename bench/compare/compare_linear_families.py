"""Benchmark: fastfs.lasso_path and fastfs.omp against scikit-learn on every data family of
compare_data_families.py (plus tox171, 171 x 5748 gene expression), 1 thread (--threads 1,2:
each row again with fastfs's n_jobs and scikit-learn's BLAS at 2).

y = the class code as a float. LASSO: the same 100-alpha grid (from alpha_max down to
1e-3 alpha_max) and tol for both; before timing, fastfs's duality gaps are checked against
tol ||y||^2 and its objective at every alpha against scikit-learn's (fastfs may not be worse
by more than tol ||y||^2; scikit-learn may stop at max_iter, then fastfs is the better
solution). OMP: `omp(X, y, k, criterion="gradient")` against
`OrthogonalMatchingPursuit(n_nonzero_coefs=k, fit_intercept=False)`, selected set and
coefficients checked equal first, and fastfs's default (exact) rule timed beside it. The
functions of a row are timed interleaved (one run of each per repeat, in rotating order), so
all of them see the same phases of a shared machine; times are medians of --repeat runs (fewer
once a row has spent --budget seconds) and a ratio is the median of the per-repeat ratios.

    python bench/compare_linear_families.py --data /work/shared/data
    python bench/compare_linear_families.py --threads 1,2    # both thread counts, row by row
    python bench/compare_linear_families.py --order C    # X C-ordered (default: Fortran)
    python bench/compare_linear_families.py --smoke      # 120 x 80 subsamples, CI
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import fastfs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_data_families as cdf  # noqa: E402
from benchlib import load_average  # noqa: E402

FAMILIES = dict(cdf.FAMILIES)
FAMILIES.setdefault("tox171", ("gene expression, toxicology", lambda d, s: tuple(
    a.astype(np.float64) if a.ndim == 2 else a for a in cdf._npz(d, "tox171", "X", "y"))))


def timed_interleaved(fns, repeat: int, budget: float):
    """(median wall time of each function, per-repeat times, last output of each): one run of
    every function per repeat, the order rotating between repeats."""
    walls = [[] for _ in fns]
    outs = [None] * len(fns)
    spent, rep = 0.0, 0
    while rep < repeat and (rep == 0 or spent <= budget):
        for k in range(len(fns)):
            i = (k + rep) % len(fns)
            t0 = time.perf_counter()
            outs[i] = fns[i]()
            walls[i].append(time.perf_counter() - t0)
            spent += walls[i][-1]
        rep += 1
    return [statistics.median(w) for w in walls], walls, outs


def ratio_of(walls, base: int, other: int) -> float:
    """Median over the repeats of base time / other time."""
    return statistics.median(b / o for b, o in zip(walls[base], walls[other]))


def objective(X, y, w, alpha):
    r = y - X @ w
    return 0.5 * (r @ r) + X.shape[0] * alpha * np.abs(w).sum()


def row_lasso(X, y, args):
    from sklearn.linear_model import lasso_path

    m = X.shape[0]
    amax = float(np.abs(X.T @ y).max()) / m
    grid = np.geomspace(amax, 1e-3 * amax, args.n_alphas)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (sk_s, ff_s), walls, (sk, ff) = timed_interleaved(
            [lambda: lasso_path(X, y, alphas=grid, tol=args.tol),
             lambda: fastfs.lasso_path(X, y, alphas=grid, tol=args.tol, n_jobs=args.n_jobs)],
            args.repeat, args.budget)
    yy = float(y @ y)
    if not np.all(ff.dual_gaps <= args.tol * yy):
        raise SystemExit("fastfs.lasso_path did not reach tol")
    worse = max(objective(X, y, ff.coefs[:, k], a) - objective(X, y, sk[1][:, k], a)
                for k, a in enumerate(grid))
    if worse > args.tol * yy:
        raise SystemExit(f"fastfs.lasso_path objective above scikit-learn's by {worse:.3g}")
    return sk_s, ff_s, ratio_of(walls, 0, 1), float(np.abs(sk[1] - ff.coefs).max())


def row_omp(X, y, args):
    from sklearn.linear_model import OrthogonalMatchingPursuit

    k = min(args.atoms, min(X.shape) - 1)

    def fit_sk():
        return OrthogonalMatchingPursuit(n_nonzero_coefs=k, fit_intercept=False).fit(X, y)

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", RuntimeWarning)
        sk = fit_sk()
    if rec:  # scikit-learn stopped on linear dependence (values of 1e-30): nothing to compare
        return None
    g = fastfs.omp(X, y, k, criterion="gradient", n_jobs=args.n_jobs)
    same = np.array_equal(np.sort(g.selected), np.flatnonzero(sk.coef_))
    diff = float(np.abs(g.coef - sk.coef_[g.selected]).max()) if same else float("inf")
    top = float(np.abs(sk.coef_).max()) or 1.0
    if not (same and diff / top <= 1e-6):
        raise SystemExit(f"{X.shape[0]} x {X.shape[1]}: omp(gradient) differs from "
                         f"scikit-learn (same set {same}, coef diff {diff / top:.3g})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (sk_s, gr_s, ex_s), walls, _ = timed_interleaved(
            [fit_sk, lambda: fastfs.omp(X, y, k, criterion="gradient", n_jobs=args.n_jobs),
             lambda: fastfs.omp(X, y, k, n_jobs=args.n_jobs)], args.repeat, args.budget)
    return sk_s, gr_s, ex_s, ratio_of(walls, 0, 1), ratio_of(walls, 0, 2)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=cdf.DATA)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--rows", default="lasso,omp")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--budget", type=float, default=20.0)
    p.add_argument("--tol", type=float, default=1e-7)
    p.add_argument("--n-alphas", type=int, default=100)
    p.add_argument("--atoms", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", default="1",
                   help="thread counts, comma-separated: fastfs's n_jobs and scikit-learn's BLAS "
                        "threads (threadpoolctl) alike")
    p.add_argument("--order", choices=("C", "F"), default="F",
                   help="memory order of X for both libraries: F (Fortran, the default: no "
                        "conversion for either) or C (NumPy's default, which fastfs's OMP reads "
                        "by rows and its LASSO path copies once)")
    p.add_argument("--smoke", action="store_true", help="120 x 80 subsamples, 2 runs (CI)")
    args = p.parse_args(argv)
    if args.smoke:
        args.repeat, args.n_alphas, args.atoms = 2, 10, 10
    from threadpoolctl import threadpool_limits

    rows = args.rows.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    if not threads or min(threads) < 1:
        raise SystemExit(f"--threads: expected positive thread counts, got {args.threads!r}")
    print(f"load {load_average()}; threads {args.threads}; tol {args.tol:g}, {args.n_alphas} "
          f"alphas, {args.atoms} OMP atoms; X in {args.order} order; median of {args.repeat}",
          flush=True)
    print("| family | m x n | threads | lasso sk | lasso fastfs | ratio | max coef diff | omp sk | "
          "omp gradient | ratio | omp exact | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.families.split(","):
        X, y = FAMILIES[name][1](args.data, args.seed)
        if args.smoke:
            X, y = cdf.subsample(X, y, 120, 80, args.seed)
        X = np.asarray(X, dtype=np.float64, order=args.order)
        y = cdf.codes_of(y).astype(np.float64)
        for t in threads:
            args.n_jobs = t
            with threadpool_limits(t):
                cells = [name, f"{X.shape[0]} x {X.shape[1]}", str(t)]
                if "lasso" in rows:
                    sk_s, ff_s, ratio, d = row_lasso(X, y, args)
                    cells += [f"{sk_s:.3f}", f"{ff_s:.3f}", f"{ratio:.2f}x", f"{d:.1g}"]
                else:
                    cells += ["", "", "", ""]
                if "omp" in rows:
                    got = row_omp(X, y, args)
                    if got is None:
                        cells += ["scikit-learn stopped (linear dependence)", "", "", "", ""]
                        print("| " + " | ".join(cells) + " |", flush=True)
                        continue
                    sk_s, gr_s, ex_s, r_gr, r_ex = got
                    cells += [f"{sk_s:.4f}", f"{gr_s:.4f}", f"{r_gr:.2f}x", f"{ex_s:.4f}",
                              f"{r_ex:.2f}x"]
                print("| " + " | ".join(cells) + " |", flush=True)
    print(f"load after {load_average()}")


if __name__ == "__main__":
    main()
