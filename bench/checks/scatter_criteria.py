"""Benchmark: one evaluation of a scatter criterion on many features, in C++ (what the subset
searches use) against fastfs.separability (NumPy / LAPACK) on the same data.

For j2, j3, the divergence and the Bhattacharyya distance it evaluates the criterion on all
features of Gaussian data with three classes through fastfs.criteria.evaluate, checks the
value against fastfs.separability to 1e-9 relative, and prints the medians.

    python bench/checks/scatter_criteria.py            # m = 3000, n = 800; 3 repeats
    python bench/checks/scatter_criteria.py --smoke    # m = 300, n = 40 (CI)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from fastfs import criteria, separability


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    m, n, repeat = (300, 40, 1) if args.smoke else (3000, 800, args.repeat)
    gen = np.random.default_rng(0)
    X = gen.standard_normal((m, n))
    y = gen.integers(0, 3, m)
    X[:, 0] += y
    subset = np.arange(n)
    print(f"{m} x {n}, 3 classes, median of {repeat}")
    print("| criterion | C++ (criteria.evaluate) | NumPy / LAPACK (separability) |")
    print("|---|---:|---:|")
    for name in ("j2", "j3", "divergence", "bhattacharyya"):
        def timed(run):
            times, value = [], None
            for _ in range(repeat):
                start = time.perf_counter()
                value = run()
                times.append(time.perf_counter() - start)
            return statistics.median(times), value
        t_cpp, v_cpp = timed(lambda: criteria.evaluate(X, y, subset, name))
        t_np, v_np = timed(lambda: getattr(separability, name)(X, y))
        if not np.isclose(v_cpp, v_np, rtol=1e-9, atol=0):
            raise SystemExit(f"{name}: C++ {v_cpp!r} differs from separability {v_np!r}")
        print(f"| {name} | {t_cpp:.3f} s | {t_np:.3f} s |")


if __name__ == "__main__":
    main()
