"""Benchmark (SPEC 9, 11): the Relief family on the data types beyond continuous features with
class labels (discrete SNP-like features, mixed discrete and continuous, missing values,
continuous targets), fastfs against skrebate 0.8 on the same fixed-seed data, in one process.

For every case and algorithm, fastfs runs first (median of --repeat, with each thread count);
skrebate runs once (it is slow) unless --no-skrebate, and the two score vectors are checked to
agree to 1e-6 before any time is reported (ReliefF's ties: skrebate with a stable sort, which
is fastfs's documented tie rule). The machine's load is printed with the figures.

    python bench/compare_relief_datatypes.py                 # m = 1000, n = 1000, threads 1
    python bench/compare_relief_datatypes.py --smoke         # m = 60, n = 12 (CI, seconds)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import statistics
import time
import types
import warnings

import numpy as np

import fastfs

CASES = {
    "discrete/binary": ("discrete", "binary", 0.0),
    "mixed/binary": ("mixed", "binary", 0.0),
    "discrete+NaN/multiclass": ("discrete", "multiclass", 0.05),
    "continuous/continuous-y": ("continuous", "continuous", 0.0),
}
SKREBATE = {"relieff": "ReliefF", "surf": "SURF", "surfstar": "SURFstar",
            "multisurf": "MultiSURF", "multisurfstar": "MultiSURFstar"}


def snp_data(kind, target, missing, m, n, seed=0):
    gen = np.random.default_rng(seed)
    X = gen.binomial(2, gen.uniform(0.3, 0.5, n), (m, n)).astype(float)
    het = (X[:, 0] == 1) ^ (X[:, 1] == 1)
    if target == "binary":
        y = het.astype(int)
        flip = gen.random(m) < 0.1
        y[flip] = 1 - y[flip]
    elif target == "multiclass":
        y = ((X[:, 0] + X[:, 1]).astype(int) + (gen.random(m) < 0.1)) % 3
    else:
        y = 2.0 * het + 0.5 * X[:, 0] + gen.normal(0.0, 0.5, m)
    if kind == "mixed":
        X[:, n // 2:] += gen.normal(0.0, 0.4, (m, n - n // 2))
    elif kind == "continuous":
        X += gen.normal(0.0, 0.4, (m, n))
    if missing:
        X[gen.random((m, n)) < missing] = np.nan
    return X, y


def skrebate_scores(name, X, y, k):
    import skrebate
    import skrebate.relieff as module

    proxy = types.SimpleNamespace(**{a: getattr(np, a) for a in dir(np) if not a.startswith("__")})
    proxy.argsort = lambda a, **kw: np.argsort(a, kind="stable")
    module.np = proxy
    kw = {"n_neighbors": k} if name == "relieff" else {}
    est = getattr(skrebate, SKREBATE[name])(n_features_to_select=2, n_jobs=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        est.fit(X.copy(), y)
        return est.feature_importances_, time.perf_counter() - t


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--threads", default="1")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--algorithms", default=",".join(SKREBATE))
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--no-skrebate", action="store_true")
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args()
    if a.smoke:
        a.m, a.n, a.repeat, a.k = 60, 12, 1, 3
    print(f"load: {os.getloadavg()}  m={a.m} n={a.n} k={a.k}")
    for case in a.cases.split(","):
        X, y = snp_data(*CASES[case], a.m, a.n)
        for name in a.algorithms.split(","):
            fn = getattr(fastfs, name)
            kw = {"n_neighbors": a.k} if name == "relieff" else {}
            times = {}
            for t in (int(v) for v in a.threads.split(",")):
                runs = []
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    w = fn(X, y, n_jobs=t, **kw).weights
                    runs.append(time.perf_counter() - t0)
                times[t] = statistics.median(runs)
            line = f"{case:26s} {name:14s} " + " ".join(
                f"fastfs[{t}t] {v:8.3f}s" for t, v in times.items())
            if not a.no_skrebate:
                ref, ts = skrebate_scores(name, X, y, a.k)
                err = float(np.max(np.abs(ref - w)))
                if err > 1e-6:
                    raise SystemExit(f"{case} {name}: scores differ from skrebate by {err:.2e}")
                line += f"  skrebate {ts:8.2f}s  ratio(1st) {ts / next(iter(times.values())):7.0f}x  maxdiff {err:.1e}"
            print(line, flush=True)
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
