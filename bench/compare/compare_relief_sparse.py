"""Benchmark (SPEC 9, 11): the Relief family on sparse X (a bag of words), never densified,
against the same fastfs function on X.toarray(), in one process; then a size where a dense X
would not fit.

Part 1, Reuters (the first --docs documents of reuters4.jsonl.gz, word counts with
CountVectorizer(min_df=3), 4 topics): each algorithm on the CSR matrix and on its dense copy,
in two readings of the counts: "counts" (the default discrete_threshold=10: words with at most
10 distinct counts are discrete, the others continuous, skrebate's mixed distance) and
"continuous" (discrete_threshold=None, on the counts times a per-entry factor in [1, 1.001]:
raw counts read as continuous put many pairs at exactly equal distances, which the sparse pass
ties to the lower index while the dense pass's summation order decides them, so the two are
compared where no distance ties). The two weight vectors are checked equal (1e-10 relative)
before any time is reported; times are medians of --repeat runs (CPU seconds of the
process and wall seconds; run with OMP_NUM_THREADS=1 / --threads 1 for one-thread CPU time).

Part 2, generated: an m x n CSR matrix of Poisson counts at --density (default 20,000 x 50,000
at 0.1%, whose dense float64 copy would take 8 GB), ReliefF (k = 10) in a fresh process: its
time and peak resident memory, next to the size of the dense array.

    python bench/compare/compare_relief_sparse.py --data-dir /work/shared/data
    python bench/compare/compare_relief_sparse.py --data-dir /work/shared/data --smoke   # CI
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import fastfs

ALGORITHMS = ("relief", "relieff", "surf", "surfstar", "multisurf", "multisurfstar")

_LARGE = """
import resource, sys, time
import numpy as np, scipy.sparse as sp
import fastfs
m, n, density, threads, algo = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(0)
A = sp.random(m, n, density=density, format="csr", random_state=rng,
              data_rvs=lambda k: rng.poisson(2.0, size=k) + 1.0)
y = rng.integers(0, 2, size=m)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c0, t0 = time.process_time(), time.perf_counter()
w = getattr(fastfs, algo)(A, y, n_jobs=threads).weights
c1, t1 = time.process_time(), time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert np.isfinite(w).all()
print(A.nnz, c1 - c0, t1 - t0, base * 1024, peak * 1024)
"""


def reuters(data: Path, docs: int):
    from sklearn.feature_extraction.text import CountVectorizer

    with gzip.open(data / "reuters4.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for _, line in zip(range(docs), fh)]
    text = [f"{r['title']} {r['body']}" for r in rows]
    X = CountVectorizer(min_df=3).fit_transform(text).astype(np.float64).tocsr()
    return X, np.array([r["topic"] for r in rows])


def timed(fn, repeat):
    cpu, wall, out = [], [], None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return statistics.median(cpu), statistics.median(wall), out


def mem_available() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", "--data", default="../shared/data")
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--algorithms", default=",".join(ALGORITHMS))
    p.add_argument("--readings", default="counts,continuous")
    p.add_argument("--m", type=int, default=20_000)
    p.add_argument("--n", type=int, default=50_000)
    p.add_argument("--density", type=float, default=0.001)
    p.add_argument("--large-algorithm", default="relieff")
    p.add_argument("--smoke", action="store_true", help="tiny sizes for CI (seconds)")
    a = p.parse_args()
    if a.smoke:
        a.docs, a.repeat, a.m, a.n = 120, 1, 2000, 5000
    print(f"load: {os.getloadavg()}  threads={a.threads}")
    path = Path(a.data_dir)
    if (path / "reuters4.jsonl.gz").exists():
        X, y = reuters(path, a.docs)
        D = X.toarray()
        print(f"Reuters: {X.shape[0]} x {X.shape[1]}, {X.nnz} entries "
              f"({100 * X.nnz / (X.shape[0] * X.shape[1]):.2f}%); dense copy {D.nbytes / 1e6:.1f} MB")
        print(f"{'algorithm':14s} {'reading':11s} {'sparse cpu':>11s} {'wall':>8s} "
              f"{'dense cpu':>11s} {'wall':>8s} {'dense/sparse':>12s}  maxreldiff")
        J = X.copy()
        J.data *= np.random.default_rng(0).uniform(1.0, 1.001, size=J.nnz)
        JD = J.toarray()
        for reading in a.readings.split(","):
            kw = {} if reading == "counts" else {"discrete_threshold": None}
            S, SD = (X, D) if reading == "counts" else (J, JD)
            for name in a.algorithms.split(","):
                fn = getattr(fastfs, name)
                k = {} if name == "relief" else kw
                if name == "relief" and reading != "counts":
                    continue  # Relief has no discrete reading
                cs, ws, out_s = timed(lambda: fn(S, y, n_jobs=a.threads, **k), a.repeat)
                cd, wd, out_d = timed(lambda: fn(SD, y, n_jobs=a.threads, **k), a.repeat)
                scale = np.abs(out_d.weights).max()
                diff = float(np.abs(out_s.weights - out_d.weights).max() / scale) if scale else 0.0
                if diff > 1e-10:
                    raise SystemExit(f"{name} {reading}: sparse and dense weights differ by {diff:.1e}")
                print(f"{name:14s} {reading:11s} {cs:10.3f}s {ws:7.3f}s {cd:10.3f}s {wd:7.3f}s "
                      f"{cd / cs if cs > 0 else float('nan'):11.1f}x  {diff:.1e}", flush=True)
    else:
        print(f"(no reuters4.jsonl.gz under {path}: part 1 skipped)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _LARGE, str(a.m), str(a.n), str(a.density),
                          str(a.threads), a.large_algorithm], capture_output=True, text=True,
                         env=env, check=True)
    nnz, cpu, wall, base, peak = (float(v) for v in out.stdout.split())
    dense = a.m * a.n * 8
    print(f"generated {a.m} x {a.n} at {100 * a.density:g}% ({int(nnz)} entries), "
          f"{a.large_algorithm}: cpu {cpu:.2f}s, wall {wall:.2f}s, peak resident {peak / 1e6:.0f} MB "
          f"(before the call {base / 1e6:.0f} MB); a dense float64 X would take {dense / 1e9:.2f} GB "
          f"(available now: {mem_available() / 1e9:.1f} GB)")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
