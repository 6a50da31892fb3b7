"""Experiment: the cost of fastfs.stir and of its parts, CPU time (all threads) and wall.

Gaussian features, binary labels from the first two features; ReliefF (k = 10) and MultiSURF,
n_jobs = 1 and 2, the median of --repeat calls after a warm-up call (imports outside the
timings); with 1 thread also the neighbour pass alone (_core.relief_stir) and the per-feature
null components (_core.stir_null_components). The machine's load is printed before and after.
To compare with an older version, run it with PYTHONPATH pointing at that version's package.

    python bench/experiments/stir_cost.py --rows 2000 --features 1000 --repeat 3
    python bench/experiments/stir_cost.py --smoke           # 200 x 50, 1 call (CI)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import fastfs
import numpy as np
from fastfs import _core
from fastfs._validation import prepare_scaled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--features", type=int, default=1000)
    ap.add_argument("--methods", default="relieff,multisurf")
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.features, args.repeat = 200, 50, 1
    print("load:", os.getloadavg(), flush=True)
    gen = np.random.default_rng(1)
    fastfs.stir(gen.normal(size=(40, 5)), np.arange(40) % 2, method="relieff", n_neighbors=3)
    X = np.random.default_rng(0).normal(size=(args.rows, args.features))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    for method in args.methods.split(","):
        for jobs in map(int, args.jobs.split(",")):
            cpu, wall = [], []
            for _ in range(args.repeat):
                c0, w0 = time.process_time(), time.perf_counter()
                r = fastfs.stir(X, y, method=method, n_jobs=jobs)
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
            print(f"stir {method} {args.rows} x {args.features} n_jobs={jobs}: CPU "
                  f"{statistics.median(cpu):.2f} s, wall {statistics.median(wall):.2f} s "
                  f"(median of {args.repeat}); selected {r.selected.size}", flush=True)
            if jobs != 1:
                continue
            _, labels, values, _ = prepare_scaled(X, y)
            k = 10 if method == "relieff" else 1
            c0 = time.process_time()
            out = _core.relief_stir(values, labels.codes, method, k, 1, None)
            t_pass = time.process_time() - c0
            msg = f"  parts, 1 thread: neighbour pass {t_pass:.2f} s"
            if hasattr(_core, "stir_null_components"):
                a = out.miss_pairs / out.n_miss - out.hit_pairs / out.n_hit
                c0 = time.process_time()
                _core.stir_null_components(values, a, 1)
                msg += f", null components {time.process_time() - c0:.2f} s"
            print(msg, flush=True)
    print("load:", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
