"""Benchmark: do tiny feature weights or tiny data values slow the neighbour searches down?

Weights far below the largest one (Simba's irrelevant weights decay to 1e-20 and below on
xor-like labels) could push the float32 screen into subnormal arithmetic. This script times
margin_score (the margin neighbour search, as Simba and Relief use it) and
knn_regression_score (the soft kNN search of RGS and SKS) with every weight 1e-3 (the
reference), with 1e-20 / 1e-30 on all but two features, and with every weight 1e-20 / 1e-30,
on two data families (Gaussian features with xor labels; uniform features with a smooth
target), and prints the median of the repeats and the ratio to the 1e-3 time (one thread).
A second table times margin_score, relief, relieff, simba, knn_regression_score and sfs
(loo_knn_accuracy) on the same data multiplied by 1e-30 and by 1e12 against the data as it is.

    python bench/checks/tiny_weights.py              # m = 1000 / 1500, n = 300; 5 repeats
    python bench/checks/tiny_weights.py --smoke      # tiny sizes, 2 repeats (CI)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import fastfs


def _median_times(runs: list, repeat: int) -> list[float]:
    """Median seconds of each call in ``runs``, the calls alternating within every repeat, so
    that a change of the machine's load during the run moves every setting alike (timed one
    setting after another, the 1e-3 reference and the scaled data could land in different
    load phases: a quiet-machine run once printed 1.61x for margin_score on X * 1e12, 1.05x
    when alternated)."""
    for run in runs:
        run()  # warm-up
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for run, out in zip(runs, times):
            start = time.perf_counter()
            run()
            out.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    m_class, m_reg, n, repeat = (120, 150, 80, 2) if args.smoke else (1000, 1500, 300,
                                                                       args.repeat)
    gen = np.random.default_rng(0)
    Xc = gen.standard_normal((m_class, n))
    yc = (Xc[:, 0] * Xc[:, 1] > 0).astype(int)
    Xr = gen.uniform(-1, 1, (m_reg, n))
    yr = np.tanh(3 * Xr[:, 0]) * np.tanh(3 * Xr[:, 1]) + 0.1 * gen.standard_normal(m_reg)
    cases = {
        "margin_score, xor labels": lambda w: fastfs.margin_score(Xc, yc, w, n_jobs=1),
        "knn_regression_score, smooth target":
            lambda w: fastfs.knn_regression_score(Xr, yr, weights=w, n_jobs=1),
    }
    settings = [("all 1e-3", None, 1e-3)]
    for tiny in (1e-20, 1e-30):
        settings += [(f"{tiny:g} on n - 2", 1.0, tiny), (f"all {tiny:g}", None, tiny)]
    print(f"one thread, median of {repeat}; ratio = time / time with every weight 1e-3")
    print("| search | weights | time | ratio |")
    print("|---|---|---:|---:|")
    for name, run in cases.items():
        weights = []
        for _, top, tiny in settings:
            w = np.full(n, tiny)
            if top is not None:
                w[:2] = top
            weights.append(w)
        times = _median_times([lambda w=w: run(w) for w in weights], repeat)
        for (label, _, _), t in zip(settings, times):
            print(f"| {name} | {label} | {t * 1e3:.1f} ms | {t / times[0]:.2f}x |")
    print()
    print(f"one thread, median of {repeat}; ratio = time on X * scale / time on X")
    print("| function | scale | time | ratio |")
    print("|---|---|---:|---:|")
    nc = min(n, 60)
    scales = (1.0, 1e-30, 1e12)
    # the scaled copies are made before timing (each call then reads the same kind of array)
    xc = {s: Xc * s for s in scales}
    xr = {s: Xr * s for s in scales}
    xs = {s: np.ascontiguousarray(Xc[:, :nc] * s) for s in scales}
    by_scale = {
        "margin_score": lambda s: fastfs.margin_score(xc[s], yc, n_jobs=1),
        "relief": lambda s: fastfs.relief(xc[s], yc, n_jobs=1),
        "relieff": lambda s: fastfs.relieff(xc[s], yc, n_jobs=1),
        "simba (1 restart)": lambda s: fastfs.simba(xc[s], yc, n_restarts=1, random_state=0,
                                                    n_jobs=1),
        "knn_regression_score": lambda s: fastfs.knn_regression_score(xr[s], yr, n_jobs=1),
        "sfs loo_knn_accuracy (3 of 60)": lambda s: fastfs.sfs(
            xs[s], yc, 3, criterion="loo_knn_accuracy", n_jobs=1),
    }
    worst = 0.0
    for name, run in by_scale.items():
        times = _median_times([lambda s=s: run(s) for s in scales], repeat)
        for scale, t in zip(scales, times):
            worst = max(worst, t / times[0])
            print(f"| {name} | {scale:g} | {t * 1e3:.1f} ms | {t / times[0]:.2f}x |")
    print(f"worst ratio over the scaled data: {worst:.2f}x")


if __name__ == "__main__":
    main()
