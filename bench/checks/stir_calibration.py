"""Check: STIR's p-values on pure noise (uniform under the null hypothesis) and its cost.

Gaussian noise features with random class labels, for MultiSURF and ReliefF (k = 10), two and
three classes, several seeds: the share of p-values below 0.05 (with the range of two binomial
standard deviations around 5 %), below 0.001, the Kolmogorov-Smirnov p-value of uniformity, and
the runs in which Benjamini-Hochberg at 5 % keeps a noise feature. With --time, the CPU time of
the plain scores and of STIR on one thread (median of 3) on the first data set.

    python bench/checks/stir_calibration.py                 # m = 200 and 1000, n = 500, 4 seeds
    python bench/checks/stir_calibration.py --smoke         # m = 120, n = 60, 1 seed (CI)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from scipy import stats

import fastfs


def _cpu(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[200, 1000])
    ap.add_argument("--features", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--time", action="store_true", help="also time STIR against the scores")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.features, args.seeds = [120], 60, 1
    print(f"load: {os.getloadavg()}")
    for m in args.rows:
        for classes in (2, 3):
            for method in ("multisurf", "relieff"):
                p, picked = [], 0
                for seed in range(args.seeds):
                    gen = np.random.default_rng(1000 + seed)
                    X = gen.normal(size=(m, args.features))
                    y = gen.integers(0, classes, size=m)
                    r = fastfs.stir(X, y, method=method)
                    p.append(r.pvalues)
                    picked += r.selected.size > 0
                p = np.concatenate(p)
                sd = np.sqrt(0.05 * 0.95 / p.size)
                print(f"m={m} classes={classes} {method:9s} below 0.05: {np.mean(p < 0.05):.4f} "
                      f"(5 % +- 2 sd: {0.05 - 2 * sd:.4f} to {0.05 + 2 * sd:.4f}), below 0.001: "
                      f"{np.mean(p < 0.001):.4f}, KS p = {stats.kstest(p, 'uniform').pvalue:.3f}, "
                      f"runs with a BH pick: {picked}/{args.seeds}")
    if args.time:
        gen = np.random.default_rng(0)
        X = gen.normal(size=(args.rows[0], args.features))
        y = gen.integers(0, 2, size=args.rows[0])
        for method, plain in (("multisurf", fastfs.multisurf), ("relieff", fastfs.relieff)):
            a = _cpu(lambda: plain(X, y, n_jobs=1))
            b = _cpu(lambda: fastfs.stir(X, y, method=method, n_jobs=1))
            print(f"{method}: scores {a:.3f} s, STIR {b:.3f} s CPU (1 thread, median of 3)")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
