"""Benchmark: the ranking every weight result carries (``WeightResult.ranking``).

fastfs ranks weights with the core's radix sort (``fastfs._results.ranking_by_weight``), which
must give exactly ``np.argsort(-w, kind="stable")``. This script checks that it does, then
times both (median of the repeats, the two alternating, one thread) on:

- the Relief weights of the gene-expression families (allaml, 72 x 7129; prostate_ge,
  102 x 5966), where the ranking is a visible part of a Relief call;
- the sort's hardest input: every value sharing the top 32 bits of its key (sign, exponent and
  20 bits of the mantissa) with L - 1 others, so that runs of L values are ordered by the bottom
  halves of their keys (L = 1 is plain distinct values).

    python bench/checks/ranking.py            # 7129 and 100,000 values; 201 repeats
    python bench/checks/ranking.py --smoke    # 2000 values, 5 repeats (CI)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import fastfs
from fastfs._results import ranking_by_weight

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compare"))
import compare_data_families as cdf  # noqa: E402


def _median_us(fns: list, repeat: int) -> list[float]:
    """Median microseconds of each function, the functions alternating within each repeat."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [1e6 * statistics.median(t) for t in times]


def _near_ties(n: int, run: int, rng: np.random.Generator) -> np.ndarray:
    """n values in groups of ``run`` sharing the top 32 bits of their float64 bits (their
    keys' top halves), the bottom 32 bits random; shuffled."""
    top = (np.uint64(0x3FF00000) + np.arange(n, dtype=np.uint64) // np.uint64(run)) << np.uint64(32)
    low = rng.integers(0, 2**32, n, dtype=np.uint64)
    values = (top | low).view(np.float64)
    return values[rng.permutation(n)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=201)
    p.add_argument("--smoke", action="store_true", help="2000 values, 5 repeats (CI)")
    args = p.parse_args()
    repeat = 5 if args.smoke else args.repeat
    rng = np.random.default_rng(0)

    cases: list[tuple[str, np.ndarray]] = []
    if not args.smoke:
        for fam in ("allaml", "prostate_ge"):
            X, y = cdf.FAMILIES[fam][1](cdf.DATA, 0)
            cases.append((f"{fam} Relief weights", fastfs.relief(X, y, n_jobs=1).weights))
    sizes = [2000] if args.smoke else [7129, 100_000]
    runs = [1, 32] if args.smoke else [1, 16, 32, 128, 512]
    for n in sizes:
        for run in runs:
            cases.append((f"{n} values, runs of {run} sharing a top half", _near_ties(n, run, rng)))

    print(f"fastfs {fastfs.__version__}; median of {repeat} calls, alternating; microseconds")
    print()
    print("| weights | n | fastfs ranking | np.argsort(-w, kind='stable') | NumPy / fastfs |")
    print("|---|---:|---:|---:|---:|")
    for label, w in cases:
        got, want = ranking_by_weight(w), np.argsort(-w, kind="stable")
        if not np.array_equal(got, want):
            raise SystemExit(f"{label}: the ranking differs from NumPy's stable argsort")
        ours, numpy = _median_us([lambda: ranking_by_weight(w),
                                  lambda: np.argsort(-w, kind="stable")], repeat)
        print(f"| {label} | {w.size} | {ours:.1f} | {numpy:.1f} | {numpy / ours:.2f}x |")


if __name__ == "__main__":
    main()
