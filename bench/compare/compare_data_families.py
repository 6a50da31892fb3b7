"""Benchmark (SPEC 9): fastfs against its baselines on every kind of data, not one.

A speed figure must hold on Gaussian noise, xor-like labels (Simba's weights decay to tiny
values), sparse word counts, gene expression (few samples, thousands of features), images,
MADELON (raw and z-scored), many duplicate rows, values of 1e-30 and data rounded to a few
values (ties). For each data family and each row below, the fastfs call and its baseline run in
the same process on the same data. The baseline's first run is checked against fastfs within
the tolerance stated per row before any time is reported (a mismatch leaves the cell untimed
and fails the run); that run also counts as the baseline's first 1-thread sample. Times are
medians of --repeat runs (a slow baseline stops repeating after --budget seconds; at least one
run). A row's fastfs call and baseline are timed interleaved, one call of each per repeat, so
that both see the same phases of a shared machine. The baselines run with BLAS limited to
fastfs's thread count.

Rows (fastfs call vs baseline):
  margins   fastfs.margins vs NumPy: one BLAS Gram product for the distances, nearest hit /
            miss by argmin (diagonal excluded), chosen distances recomputed exactly
  simba     one Simba pass (fastfs.simba, one restart, fixed order; the call includes the
            final e(w)) vs bench/baselines/numpy_simba.py
  relief    fastfs.relief vs the Gram-product NumPy Relief
  margins_sk, relief_sk   the same fastfs calls vs scikit-learn's NearestNeighbors (brute
            force: its pairwise-distance reductions, float64 Gram products in chunks) fitted on
            each class (hits) and on its complement (misses)
  relieff   fastfs.relieff (k = 10) vs a NumPy/SciPy ReliefF (cdist cityblock)
  skrebate  fastfs.relieff (k = 10) vs skrebate's ReliefF on a subsample (it is slow)
  knn       fastfs.knn_regression_score (unit weights, k = ceil(log2 m), the default beta)
            vs NumPy: one BLAS Gram product, k nearest by argpartition with ties ranked by
            index, chosen distances recomputed exactly, target = the class label as a float
  rgs       one RGS epoch (fastfs.rgs with a fixed order; the call includes the final e(w))
            vs bench/baselines/numpy_rgs.py; target = the class label as a float
  sfs       fastfs.sfs(criterion="loo_knn_accuracy", 3 features) vs a NumPy forward loop of
            leave-one-out 1-NN over the candidate subsets (features subsampled)
  sfs_sk    the same fastfs.sfs vs scikit-learn's SequentialFeatureSelector with
            KNeighborsClassifier(1) and cv=LeaveOneOut() (the same criterion; m fits per
            candidate, so on a subsample: --sfs-sk-rows, --sfs-sk-cols)
  gflip     one G-flip epoch from the empty set vs bench/baselines/numpy_gflip.py

    python bench/compare/compare_data_families.py                  # every family and row, 1 thread
    python bench/compare/compare_data_families.py --threads 1,2 --families xor,madelon --rows simba
    python bench/compare/compare_data_families.py --smoke          # 120 x 80 subsamples, CI
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import fastfs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from baselines import numpy_gflip as ng  # noqa: E402
from baselines import numpy_rgs as nr  # noqa: E402
from baselines import numpy_simba as ns  # noqa: E402
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    fmt_s,
    load_average,
    machine_info,
    output_dir,
    pyplot,
    rel_diff,
    save_figure,
    timed,
    write_report,
)
from compare_gflip import make_data  # noqa: E402
from compare_gflip import time_fastfs as gflip_fastfs  # noqa: E402
from compare_gflip import time_numpy as gflip_numpy  # noqa: E402

# Every feature read as continuous and y as class labels (fastfs.relieff's default reads a
# feature with at most 10 values as discrete, as skrebate's does): the NumPy ReliefF and
# skrebate's ReliefF(categorical_features=[]) score continuous features.
CONTINUOUS = dict(discrete_features=[], target="classes")
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data"

# Tolerances of the agreement checks (relative to the largest magnitude of the reference).
GRAM_TOL = 1e-8       # margins, Relief: the Gram product picks neighbours to rounding level
RELIEFF_TOL = 1e-8    # NumPy ReliefF (same tie rule) against fastfs
SKREBATE_TOL = 1e-6   # skrebate's documented agreement on data without distance ties
SIMBA_TOL = 1e-9      # output weights w^2 / max w^2 (absolute, they are in [0, 1])
RGS_TOL = 1e-9        # raw weights, relative
GFLIP_TOL = 1e-9      # one candidate's e, relative

WIDE = 2000           # n above this is "wide": quadratic NumPy baselines get WIDE features
SFS_K = 3
RELIEFF_K = 10

ROWS = ("margins", "margins_sk", "simba", "relief", "relief_sk", "relieff", "skrebate", "knn",
        "rgs", "sfs", "sfs_sk", "gflip")
ROW_TITLES = {
    "margins": "margins",
    "margins_sk": "margins vs sklearn NN",
    "relief_sk": "Relief vs sklearn NN",
    "simba": "Simba pass",
    "relief": "Relief",
    "relieff": "ReliefF vs NumPy",
    "skrebate": "ReliefF vs skrebate",
    "knn": "kNN regression e(w)",
    "rgs": "RGS epoch",
    "sfs": "SFS loo 1-NN",
    "sfs_sk": "SFS vs sklearn SFS",
    "gflip": "G-flip epoch",
}


# ------------------------------------------------------------------------------------------
# Data families

def _npz(data: Path, name: str, *keys: str):
    with np.load((data / f"{name}.npz").resolve()) as d:
        return tuple(d[k] for k in keys)


def _gaussian(seed: int):
    return make_data(1000, 300, seed)


def _xor(seed: int):
    X = np.random.default_rng(seed).standard_normal((1000, 300))
    return X, (X[:, 0] * X[:, 1] > 0).astype(np.int64)


def _duplicates(seed: int):
    X, y = make_data(1000, 300, seed)
    gen = np.random.default_rng(seed + 7)
    for i in range(1, X.shape[0]):
        if gen.random() < 0.5:
            j = int(gen.integers(i))
            X[i], y[i] = X[j], y[j]
    return X, y


def _tiny(seed: int):
    X, y = make_data(1000, 300, seed)
    return X * 1e-30, y


def _ties(seed: int):
    X, y = make_data(1000, 300, seed)
    return np.round(X * 2.0), y


def _reuters(data: Path, docs: int = 1000):
    from sklearn.feature_extraction.text import CountVectorizer

    with gzip.open((data / "reuters4.jsonl.gz").resolve(), "rt") as fh:
        rows = [json.loads(line) for _, line in zip(range(docs), fh)]
    text = [f"{r['title']} {r['body']}" for r in rows]
    X = CountVectorizer(min_df=3).fit_transform(text).toarray().astype(np.float64)
    return X, np.array([r["topic"] for r in rows])


def _madelon(data: Path, z: bool):
    X, y = _npz(data, "madelon", "X_train", "y_train")
    X = X.astype(np.float64)
    if z:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y


def _mnist(data: Path, seed: int):
    X, y = _npz(data, "mnist4", "X_train", "y_train")
    rows = np.sort(np.random.default_rng(seed + 11).choice(X.shape[0], 1000, replace=False))
    return X[rows].astype(np.float64), y[rows]


# name -> (description, loader(data_dir, seed) -> (X, y))
FAMILIES = {
    "gaussian": ("Gaussian noise, 2 classes from the first 5 features", lambda d, s: _gaussian(s)),
    "xor": ("Gaussian, y = sign(x0 x1)", lambda d, s: _xor(s)),
    "reuters": ("Reuters, first 1000 documents, word counts (min_df = 3), 4 topics",
                lambda d, s: _reuters(d)),
    "allaml": ("gene expression ALL/AML", lambda d, s: tuple(
        a.astype(np.float64) if a.ndim == 2 else a for a in _npz(d, "allaml", "X", "y"))),
    "prostate_ge": ("gene expression, prostate", lambda d, s: tuple(
        a.astype(np.float64) if a.ndim == 2 else a for a in _npz(d, "prostate_ge", "X", "y"))),
    "mnist4": ("MNIST digits 0/1/6/9, 1000 of the 2000 training images",
               lambda d, s: _mnist(d, s)),
    "coil20": ("COIL-20 images, 20 objects", lambda d, s: tuple(
        a.astype(np.float64) if a.ndim == 2 else a for a in _npz(d, "coil20", "X", "y"))),
    "madelon": ("MADELON training set, raw integers", lambda d, s: _madelon(d, False)),
    "madelon_z": ("MADELON training set, z-scored", lambda d, s: _madelon(d, True)),
    "duplicates": ("Gaussian, each row a copy of an earlier one with probability 1/2",
                   lambda d, s: _duplicates(s)),
    "tiny": ("Gaussian * 1e-30", lambda d, s: _tiny(s)),
    "ties": ("round(2 * Gaussian): integers -6..6", lambda d, s: _ties(s)),
}


def subsample(X, y, rows: int | None, cols: int | None, seed: int):
    """At most ``rows`` samples and ``cols`` features (random, kept in their order)."""
    gen = np.random.default_rng(seed)
    if rows is not None and X.shape[0] > rows:
        keep = np.sort(gen.choice(X.shape[0], rows, replace=False))
        X, y = X[keep], y[keep]
    if cols is not None and X.shape[1] > cols:
        X = X[:, np.sort(gen.choice(X.shape[1], cols, replace=False))]
    return np.ascontiguousarray(X), y


def codes_of(y) -> np.ndarray:
    return np.unique(y, return_inverse=True)[1]


# ------------------------------------------------------------------------------------------
# Timing

def runs(fn, repeat: int, budget: float, first: float | None = None
         ) -> tuple[float, list[float], object]:
    """(median wall, walls, last result) of up to ``repeat`` calls, stopping once ``budget``
    seconds have been spent (always at least one call). ``first``: the wall time of a call
    already made (the baseline's checked run), counted as the first sample."""
    walls, out = ([] if first is None else [first]), None
    spent = sum(walls)
    while len(walls) < repeat and (not walls or spent <= budget):
        wall, out = timed(fn)
        walls.append(wall)
        spent += wall
    return statistics.median(walls), walls, out


def checked_run(fn):
    """(wall seconds, result) of the baseline's first run, on one BLAS thread: its result is
    checked against fastfs, and its time is the first 1-thread sample."""
    with blas_threads(1):
        return timed(fn)


def blas_threads(t: int):
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=t)


def steps_for(m: int, n: int, args) -> int:
    """Steps of a NumPy Simba / RGS pass to time (each costs one O(m n) row; the pass is
    extrapolated linearly to m steps)."""
    return int(min(m, max(args.min_steps, args.step_work // (m * n))))


# ------------------------------------------------------------------------------------------
# NumPy baselines written here

def gram_hit_miss(X: np.ndarray, codes: np.ndarray):
    """Nearest hit and miss of every sample from one BLAS Gram product:
    D = |x|^2 + |x'|^2 - 2 X X^T, diagonal excluded, argmin (first minimum = lowest index).
    D carries rounding of order 1e-16 |x|^2, so neighbours closer than that to a tie may be
    chosen differently from an exact computation. Returns (hit, miss, has_hit, has_miss)."""
    sq = np.einsum("ij,ij->i", X, X)
    D = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.fill_diagonal(D, np.inf)
    same = codes[:, None] == codes[None, :]
    hit = np.where(same, D, np.inf).argmin(axis=1)
    miss = np.where(same, np.inf, D).argmin(axis=1)
    counts = np.bincount(codes)
    has_hit = counts[codes] > 1
    has_miss = counts[codes] < codes.size
    return hit, miss, has_hit, has_miss


def numpy_margins(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    hit, miss, has_hit, has_miss = gram_hit_miss(X, codes)
    # The chosen distances exactly (m rows of differences), not from the Gram form: a
    # duplicate's distance 0 would otherwise come out as sqrt(rounding) ~ 1e-8 |x|.
    dh = np.sqrt(np.einsum("ij,ij->i", X - X[hit], X - X[hit]))
    dm = np.sqrt(np.einsum("ij,ij->i", X - X[miss], X - X[miss]))
    theta = 0.5 * (dm - dh)
    theta[~(has_hit & has_miss)] = np.nan
    return theta


def numpy_relief(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    hit, miss, has_hit, has_miss = gram_hit_miss(X, codes)
    ok = has_hit & has_miss
    a = X[ok] - X[miss[ok]]
    b = X[ok] - X[hit[ok]]
    return np.einsum("ij,ij->j", a, a) - np.einsum("ij,ij->j", b, b)


def numpy_knn_score(X: np.ndarray, y: np.ndarray, k: int, beta: float) -> float:
    """The soft kNN regression evaluation e = -(1/2) sum (y - g_hat)^2 under unit weights from
    one BLAS Gram product: the k nearest other samples of each row by argpartition, then the
    samples at the k-th smallest value (ties) ranked by (distance, index) as fastfs does; the
    chosen distances recomputed exactly (k rows of differences per sample), then the kernel
    weights exp(-(d - d_min) / beta)."""
    sq = np.einsum("ij,ij->i", X, X)
    D = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.fill_diagonal(D, np.inf)
    part = np.argpartition(D, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(D, part, axis=1).max(axis=1)
    g = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        cand = np.flatnonzero(D[i] <= kth[i])
        nn = cand[np.lexsort((cand, D[i, cand]))[:k]]
        diff = X[nn] - X[i]
        d = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((nn, d))
        d, nn = d[order], nn[order]
        p = np.exp(-(d - d[0]) / beta)
        g[i] = p @ y[nn] / p.sum()
    return -0.5 * float(np.sum((y - g) ** 2))


def sklearn_hit_miss(X: np.ndarray, codes: np.ndarray):
    """Nearest hit and miss of every sample from scikit-learn's NearestNeighbors (brute force:
    chunked float64 Gram products, multithreaded by OpenMP): per class, the 2 nearest members
    of each member (the first that is not the sample itself is its hit) and the nearest sample
    of the other classes. Equal distances may be ordered differently from fastfs (lowest index);
    the margins do not depend on which one is taken. Returns (hit, miss, has_hit, has_miss)."""
    from sklearn.neighbors import NearestNeighbors

    m = X.shape[0]
    hit = np.zeros(m, dtype=np.int64)
    miss = np.zeros(m, dtype=np.int64)
    counts = np.bincount(codes)
    for c in np.flatnonzero(counts):
        mem = np.flatnonzero(codes == c)
        other = np.flatnonzero(codes != c)
        if mem.size > 1:
            nb = NearestNeighbors(n_neighbors=2, algorithm="brute").fit(X[mem]).kneighbors(
                X[mem], return_distance=False)
            first_is_self = mem[nb[:, 0]] == mem
            hit[mem] = np.where(first_is_self, mem[nb[:, 1]], mem[nb[:, 0]])
        if other.size:
            nb = NearestNeighbors(n_neighbors=1, algorithm="brute").fit(X[other]).kneighbors(
                X[mem], return_distance=False)
            miss[mem] = other[nb[:, 0]]
    return hit, miss, counts[codes] > 1, counts[codes] < m


def margins_from(X: np.ndarray, hit, miss, has_hit, has_miss) -> np.ndarray:
    dh = np.sqrt(np.einsum("ij,ij->i", X - X[hit], X - X[hit]))
    dm = np.sqrt(np.einsum("ij,ij->i", X - X[miss], X - X[miss]))
    theta = 0.5 * (dm - dh)
    theta[~(has_hit & has_miss)] = np.nan
    return theta


def relief_from(X: np.ndarray, hit, miss, has_hit, has_miss) -> np.ndarray:
    ok = has_hit & has_miss
    a = X[ok] - X[miss[ok]]
    b = X[ok] - X[hit[ok]]
    return np.einsum("ij,ij->j", a, a) - np.einsum("ij,ij->j", b, b)


def sklearn_margins(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return margins_from(X, *sklearn_hit_miss(X, codes))


def sklearn_relief(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return relief_from(X, *sklearn_hit_miss(X, codes))


def numpy_relieff(X: np.ndarray, codes: np.ndarray, k: int, chunk: int = 64,
                  tie_slack: bool = False):
    """ReliefF as fastfs.relieff documents it (skrebate's scoring of continuous features):
    Manhattan distances of min-max scaled features (scipy cdist), for every sample its k
    nearest hits and k nearest misses of every other class (stable sort: distance ties to the
    lower index), feature i gains -(1/h) sum_hits diff + sum_c (M_c / M) (C - 1) (1/M)
    sum_{misses of c} diff, all divided by m. The distances are Manhattan, so no Gram product.

    With ``tie_slack`` also returns how far any weight may move when neighbours at distances
    equal to rounding level (1e-12 relative) to the first one left out are exchanged for it:
    on integer data (counts, pixels, rounded values) many distances are equal in exact
    arithmetic, and which of them rounding makes smaller depends on the summation order (SciPy
    and fastfs sum differently). Each exchange moves a weight by at most |coefficient| / m
    (a scaled difference is at most 1), twice for the one removed and the one added."""
    from scipy.spatial.distance import cdist

    m, n = X.shape
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    live = span > 0
    Xs = np.zeros_like(X)
    Xs[:, live] = (X[:, live] - lo[live]) / span[live]  # a constant feature differs nowhere
    D = cdist(Xs, Xs, "cityblock")
    np.fill_diagonal(D, np.inf)
    members = [np.flatnonzero(codes == c) for c in range(codes.max() + 1)]
    C = len(members)
    w = np.zeros(n)
    slack = 0.0
    for a, qa in enumerate(members):
        h = min(k, qa.size - 1)
        mc = {c: min(k, members[c].size) for c in range(C) if c != a}
        M = sum(mc.values())
        for c, qc in enumerate(members):
            kk = h if c == a else mc[c]
            if kk == 0:
                continue
            coef = -1.0 / h if c == a else (mc[c] / M) * (C - 1) / M
            for s in range(0, qa.size, chunk):
                q = qa[s:s + chunk]
                sub = D[np.ix_(q, qc)]
                order = np.argsort(sub, axis=1, kind="stable")
                nb = qc[order[:, :kk]]
                w += coef * np.abs(Xs[q][:, None, :] - Xs[nb]).sum(axis=(0, 1))
                if tie_slack and kk < sub.shape[1]:
                    ds = np.take_along_axis(sub, order[:, :kk + 1], axis=1)
                    first_out = ds[:, kk:kk + 1]
                    near = ds[:, :kk] >= first_out - 1e-12 * np.maximum(first_out, 1.0)
                    if near.any():
                        # Exchanging identical rows (duplicates) changes nothing.
                        r, j = np.nonzero(near)
                        out_row = Xs[qc[order[r, kk]]]
                        differs = np.any(Xs[qc[order[r, j]]] != out_row, axis=1)
                        slack += 2.0 * abs(coef) * int(differs.sum())
    return (w / m, slack / m) if tie_slack else w / m


def relieff_agrees(ref_slack, got: np.ndarray) -> tuple[float, float, bool]:
    """(max |ref - got| / max |ref|, tie slack relative to max |ref|, within 1e-8 + slack)."""
    ref, slack = ref_slack
    top = float(np.abs(ref).max()) or 1.0
    diff = float(np.abs(ref - got).max())
    return diff / top, slack / top, diff <= RELIEFF_TOL * top + slack


def numpy_sfs(X: np.ndarray, codes: np.ndarray, k: int) -> tuple[list[int], float]:
    """Forward selection of k features by leave-one-out 1-NN accuracy: the m x m squared
    distances of the chosen subset are kept, each candidate adds its column's squared
    differences (numpy_gflip.feature_delta) and is scored by argmin over each row (the
    diagonal at inf; first minimum = lowest index). Accuracy ties go to the lower feature."""
    m, n = X.shape
    D = np.zeros((m, m))
    np.fill_diagonal(D, np.inf)
    chosen: list[int] = []
    best = -1.0
    for _ in range(k):
        best, best_j = -1.0, -1
        for j in range(n):
            if j in chosen:
                continue
            acc = float(np.mean(codes[np.argmin(D + ng.feature_delta(X[:, j]), axis=1)]
                                == codes))
            if acc > best:
                best, best_j = acc, j
        chosen.append(best_j)
        D += ng.feature_delta(X[:, best_j])
    return chosen, best


def gflip_check(X: np.ndarray, y, codes: np.ndarray, seed: int) -> float:
    """numpy_gflip.candidate_score against fastfs.margin_score on one flip of a random subset
    of at most 30 features; D from direct squared differences (a Gram product would turn the
    duplicates' zero distances into sqrt(rounding))."""
    gen = np.random.default_rng(seed + 1)
    n = X.shape[1]
    support = np.zeros(n, dtype=bool)
    support[gen.choice(n, min(30, max(1, n // 5)), replace=False)] = True
    j = int(gen.integers(n))
    D = np.zeros((X.shape[0],) * 2)
    for i in np.flatnonzero(support):
        D += ng.feature_delta(X[:, i])
    ours = ng.candidate_score(D, X[:, j], -1.0 if support[j] else 1.0, ng.class_masks(codes))
    flipped = support.copy()
    flipped[j] = not flipped[j]
    ref = fastfs.margin_score(X, y, flipped.astype(np.float64), n_jobs=1)
    return abs(ours - ref) / max(abs(ref), 1e-300)


# ------------------------------------------------------------------------------------------
# Rows: each returns {"check": ..., "tol": ..., "fastfs": {t: seconds}, "base": {t: seconds},
# "base_name": ..., "used": "m x n", "note": ...}

class Mismatch(Exception):
    pass


def _require(diff: float, tol: float, what: str) -> None:
    if not diff <= tol:
        raise Mismatch(f"{what}: difference {diff:.3g} > {tol:g}")


def _time_pair(fast, base, threads, args, first: float | None = None) -> tuple[dict, dict]:
    """Median times of the fastfs call fast(t) and of the baseline base() for every thread
    count; the baseline runs with BLAS limited to t threads. ``first``: the time of the
    checked 1-thread baseline run, reused as a sample."""
    ff, bb = {}, {}
    for t in threads:
        fast(t)  # warm-up: thread pool, page faults
        # Interleaved (one call of each per repeat), so that both see the same phases of a
        # shared machine; the baseline stops once it has spent the budget.
        fw, bw = [], ([first] if t == 1 and first is not None else [])
        for _ in range(args.repeat):
            fw.append(timed(lambda: fast(t))[0])
            if len(bw) < args.repeat and (not bw or sum(bw) <= args.budget):
                with blas_threads(t):
                    bw.append(timed(base)[0])
        ff[t], bb[t] = statistics.median(fw), statistics.median(bw)
    return ff, bb


def row_margins(X, y, codes, threads, args) -> dict:
    first, ref = checked_run(lambda: numpy_margins(X, codes))
    diff = rel_diff(ref, fastfs.margins(X, y, n_jobs=1))
    _require(diff, GRAM_TOL, "margins")
    ff, bb = _time_pair(lambda t: fastfs.margins(X, y, n_jobs=t),
                        lambda: numpy_margins(X, codes), threads, args, first)
    return {"check": diff, "tol": GRAM_TOL, "fastfs": ff, "base": bb,
            "base_name": "NumPy Gram"}


def soft_knn_setting(X, codes) -> tuple[np.ndarray, int, float]:
    """The knn and rgs rows' target (the class code as a float), k = ceil(log2 m) and fastfs's
    default beta for them."""
    yr = codes.astype(np.float64)
    k = fastfs.regression.default_n_neighbors(X.shape[0])
    beta = float(fastfs.regression._knn_regression(X, yr, n_neighbors=k)["beta"])
    return yr, k, beta


def row_knn(X, y, codes, threads, args) -> dict:
    yr, k, beta = soft_knn_setting(X, codes)
    first, ref = checked_run(lambda: numpy_knn_score(X, yr, k, beta))
    got = fastfs.knn_regression_score(X, yr, n_neighbors=k, beta=beta, n_jobs=1)
    diff = abs(ref - got) / max(abs(ref), 1e-300)
    _require(diff, GRAM_TOL, "knn")
    ff, bb = _time_pair(lambda t: fastfs.knn_regression_score(X, yr, n_neighbors=k, beta=beta,
                                                              n_jobs=t),
                        lambda: numpy_knn_score(X, yr, k, beta), threads, args, first)
    return {"check": diff, "tol": GRAM_TOL, "fastfs": ff, "base": bb,
            "base_name": "NumPy Gram", "note": f"k = {k}"}


def row_margins_sk(X, y, codes, threads, args) -> dict:
    import sklearn.neighbors  # noqa: F401  (imported before the checked run is timed)

    first, ref = checked_run(lambda: sklearn_margins(X, codes))
    diff = rel_diff(ref, fastfs.margins(X, y, n_jobs=1))
    _require(diff, GRAM_TOL, "margins vs sklearn")
    ff, bb = _time_pair(lambda t: fastfs.margins(X, y, n_jobs=t),
                        lambda: sklearn_margins(X, codes), threads, args, first)
    return {"check": diff, "tol": GRAM_TOL, "fastfs": ff, "base": bb,
            "base_name": "sklearn NearestNeighbors"}


def row_relief_sk(X, y, codes, threads, args) -> dict:
    import sklearn.neighbors  # noqa: F401  (imported before the checked run is timed)

    first, ref = checked_run(lambda: sklearn_relief(X, codes))
    diff = rel_diff(ref, fastfs.relief(X, y, n_jobs=1).weights)
    _require(diff, GRAM_TOL, "relief vs sklearn")
    ff, bb = _time_pair(lambda t: fastfs.relief(X, y, n_jobs=t),
                        lambda: sklearn_relief(X, codes), threads, args, first)
    return {"check": diff, "tol": GRAM_TOL, "fastfs": ff, "base": bb,
            "base_name": "sklearn NearestNeighbors"}


def row_relief(X, y, codes, threads, args) -> dict:
    first, ref = checked_run(lambda: numpy_relief(X, codes))
    diff = rel_diff(ref, fastfs.relief(X, y, n_jobs=1).weights)
    _require(diff, GRAM_TOL, "relief")
    ff, bb = _time_pair(lambda t: fastfs.relief(X, y, n_jobs=t),
                        lambda: numpy_relief(X, codes), threads, args, first)
    return {"check": diff, "tol": GRAM_TOL, "fastfs": ff, "base": bb,
            "base_name": "NumPy Gram"}


def row_relieff(X, y, codes, threads, args) -> dict:
    # The checked run also measures the tie slack (a little more work): not a timing sample.
    rel, slack, ok = relieff_agrees(numpy_relieff(X, codes, RELIEFF_K, tie_slack=True),
                                    fastfs.relieff(X, y, n_neighbors=RELIEFF_K, n_jobs=1, **CONTINUOUS).weights)
    if not ok:
        raise Mismatch(f"relieff vs NumPy: difference {rel:.3g} > {RELIEFF_TOL:g} + tie slack "
                       f"{slack:.3g}")
    ff, bb = _time_pair(lambda t: fastfs.relieff(X, y, n_neighbors=RELIEFF_K, n_jobs=t, **CONTINUOUS),
                        lambda: numpy_relieff(X, codes, RELIEFF_K), threads, args)
    note = (f"distance ties at rounding level: checked to {RELIEFF_TOL:g} + {slack:.2g}"
            if slack > 0 else "")
    return {"check": rel, "tol": RELIEFF_TOL, "fastfs": ff, "base": bb,
            "base_name": "NumPy/SciPy cdist", "note": note}


def row_skrebate(X, y, codes, threads, args) -> dict:
    """skrebate on at most --skrebate-rows x --skrebate-cols (constant features dropped: they
    score 0 in fastfs, skrebate divides by their zero range), k lowered below the smallest
    class of the subsample if needed (fastfs documents a deliberate difference otherwise)."""
    from skrebate import ReliefF

    Xs, ys = subsample(X, y, args.skrebate_rows, args.skrebate_cols, args.seed + 5)
    Xs = np.ascontiguousarray(Xs[:, np.ptp(Xs, axis=0) > 0])
    cs = codes_of(ys)
    used = f"{Xs.shape[0]} x {Xs.shape[1]}"
    # fastfs and skrebate agree when k is below every class size (documented difference).
    k = min(RELIEFF_K, int(np.bincount(cs).min()) - 1)
    if k < 1:
        return {"skipped": f"a class of the {used} subsample has one sample", "used": used}
    label_type = "binary" if cs.max() == 1 else "multiclass"

    def base():
        est = ReliefF(n_neighbors=k, n_features_to_select=1, n_jobs=1, categorical_features=[],
                      label_type=label_type)
        return np.asarray(est.fit(Xs, ys).feature_importances_, dtype=np.float64)

    first, ref = timed(base)  # skrebate is slow: this checked run is its only timing
    got = fastfs.relieff(Xs, ys, n_neighbors=k, n_jobs=1, **CONTINUOUS).weights
    diff = float(np.abs(ref - got).max())
    note = ""
    if not diff <= SKREBATE_TOL:
        # skrebate orders equal distances arbitrarily, fastfs by index (documented): only a
        # difference of that kind is tolerated, and only on data with distance ties.
        if not relieff_agrees(numpy_relieff(Xs, cs, k, tie_slack=True), got)[2]:
            raise Mismatch(f"skrebate: fastfs differs from skrebate ({diff:.3g}) and from "
                           "the NumPy ReliefF")
        note = (f"skrebate differs by {diff:.2g}: equal distances ordered differently "
                "(fastfs agrees with the NumPy ReliefF within its tie slack)")
    ff = {}
    for t in threads:
        fastfs.relieff(Xs, ys, n_neighbors=k, n_jobs=t, **CONTINUOUS)  # warm-up
        ff[t] = runs(lambda: fastfs.relieff(Xs, ys, n_neighbors=k, n_jobs=t, **CONTINUOUS), args.repeat,
                     args.budget)[0]
    bb = {t: first for t in threads}  # skrebate runs single-process whatever t is
    return {"check": diff, "tol": SKREBATE_TOL, "fastfs": ff, "base": bb, "used": used,
            "base_name": "skrebate",
            "note": "; ".join(v for v in (note, "" if k == RELIEFF_K else f"k = {k}") if v)}


def row_simba(X, y, codes, threads, args) -> dict:
    m, n = X.shape
    order = np.random.default_rng(args.seed + 2).permutation(m)
    S = steps_for(m, n, args)
    first, raw = checked_run(lambda: ns.simba_pass(X, codes, order[:S]))
    ref = ns.output_weights(raw)
    got = fastfs.simba(X, y, sample_order=order[:S], n_restarts=1, n_jobs=1).weights
    diff = float(np.abs(ref - got).max())
    _require(diff, SIMBA_TOL, "simba")
    ff, bb, score = {}, {}, {}
    for t in threads:
        def fast():
            return fastfs.simba(X, y, sample_order=order, n_restarts=1, n_jobs=t)
        out = fast()
        ff[t] = runs(fast, args.repeat, args.budget)[0]
        v = np.sqrt(out.weights)
        score[t] = runs(lambda: fastfs.margin_score(X, y, v, n_jobs=t), args.repeat,
                        args.budget)[0]
        with blas_threads(t):
            bb[t] = runs(lambda: ns.simba_pass(X, codes, order[:S]), args.repeat,
                         args.budget, first if t == 1 else None)[0] * m / S
    note = "fastfs call includes e(w): " + ", ".join(
        f"{fmt_s(score[t])} at {t} thr" for t in threads)
    if S < m:
        note += f"; NumPy pass extrapolated from {S} of {m} steps (check on those steps)"
    return {"check": diff, "tol": SIMBA_TOL, "fastfs": ff, "base": bb, "score_s": score,
            "steps": S, "base_name": "numpy_simba", "note": note}


def row_rgs(X, y, codes, threads, args) -> dict:
    m, n = X.shape
    yr, k, beta = soft_knn_setting(X, codes)
    eta = 1.0 / float(np.var(yr))  # fastfs's "auto" rate: the thesis' eta = 1 on standardised y
    order = np.random.default_rng(args.seed + 3).permutation(m)
    S = steps_for(m, n, args)
    first, ref = checked_run(lambda: nr.rgs_epoch(X, yr, order[:S], k, beta, eta))
    got = fastfs.rgs(X, yr, sample_order=order[:S], n_neighbors=k, beta=beta,
                     learning_rate=eta, n_jobs=1).raw_weights
    diff = rel_diff(ref, got)
    _require(diff, RGS_TOL, "rgs")
    ff, bb, score = {}, {}, {}
    for t in threads:
        def fast():
            return fastfs.rgs(X, yr, sample_order=order, n_neighbors=k, beta=beta,
                              learning_rate=eta, n_jobs=t)
        out = fast()
        ff[t] = runs(fast, args.repeat, args.budget)[0]
        score[t] = runs(lambda: fastfs.knn_regression_score(
            X, yr, out.raw_weights, n_neighbors=k, beta=beta, n_jobs=t), args.repeat,
            args.budget)[0]
        with blas_threads(t):
            bb[t] = runs(lambda: nr.rgs_epoch(X, yr, order[:S], k, beta, eta), args.repeat,
                         args.budget, first if t == 1 else None)[0] * m / S
    note = f"k = {k}; fastfs call includes e(w): " + ", ".join(
        f"{fmt_s(score[t])} at {t} thr" for t in threads)
    if S < m:
        note += f"; NumPy epoch extrapolated from {S} of {m} steps (check on those steps)"
    return {"check": diff, "tol": RGS_TOL, "fastfs": ff, "base": bb, "score_s": score,
            "steps": S, "base_name": "numpy_rgs", "note": note}


def row_sfs(X, y, codes, threads, args) -> dict:
    cap = args.sfs_wide_cols if X.shape[1] > WIDE else args.sfs_cols
    Xs, _ = subsample(X, y, None, cap, args.seed + 4)
    used = f"{Xs.shape[0]} x {Xs.shape[1]}"
    first, (sel, acc) = checked_run(lambda: numpy_sfs(Xs, codes, SFS_K))
    res = fastfs.sfs(Xs, y, SFS_K, criterion="loo_knn_accuracy", n_jobs=1)
    got = [int(i) for i in res.selected]
    if got != sel or abs(float(res.score) - acc) > 1e-12:
        raise Mismatch(f"sfs: fastfs chose {got} (J = {float(res.score)!r}), NumPy {sel} "
                       f"(J = {acc!r})")
    ff, bb = _time_pair(lambda t: fastfs.sfs(Xs, y, SFS_K, criterion="loo_knn_accuracy",
                                             n_jobs=t),
                        lambda: numpy_sfs(Xs, codes, SFS_K), threads, args, first)
    return {"check": 0.0, "tol": 0.0, "fastfs": ff, "base": bb, "used": used,
            "base_name": "NumPy loop", "note": f"same {SFS_K} features, J = {acc:.4g}"}


def sklearn_sfs(X: np.ndarray, y, k: int) -> list[int]:
    """scikit-learn's forward SequentialFeatureSelector on leave-one-out 1-NN accuracy, the
    criterion of fastfs.sfs(criterion="loo_knn_accuracy"); the chosen features, sorted (its
    support_ is a mask)."""
    from sklearn.feature_selection import SequentialFeatureSelector
    from sklearn.model_selection import LeaveOneOut
    from sklearn.neighbors import KNeighborsClassifier

    sel = SequentialFeatureSelector(KNeighborsClassifier(n_neighbors=1, algorithm="brute"),
                                    n_features_to_select=k, direction="forward",
                                    scoring="accuracy", cv=LeaveOneOut(), n_jobs=1)
    sel.fit(X, y)
    return np.flatnonzero(sel.get_support()).tolist()


def row_sfs_sk(X, y, codes, threads, args) -> dict:
    import sklearn.feature_selection  # noqa: F401  (imported before the checked run is timed)

    Xs, y = subsample(X, y, args.sfs_sk_rows, args.sfs_sk_cols, args.seed + 4)
    used = f"{Xs.shape[0]} x {Xs.shape[1]}"
    first, sel = checked_run(lambda: sklearn_sfs(Xs, y, SFS_K))
    res = fastfs.sfs(Xs, y, SFS_K, criterion="loo_knn_accuracy", n_jobs=1)
    got = sorted(int(i) for i in res.selected)
    if got != sel:
        # Equal 1-NN distances make the criterion depend on which tied neighbour counts:
        # fastfs takes the lowest index, scikit-learn its own order, so the greedy paths may
        # part. Then the two are not comparable (skipped); on distinct distances they must agree.
        from scipy.spatial.distance import pdist

        cols = [pdist(Xs[:, [j]], "sqeuclidean") for j in range(Xs.shape[1])]
        if all(np.unique(d).size == d.size for d in cols):  # no tie on any single feature
            raise Mismatch(f"sfs vs sklearn: fastfs chose {got}, scikit-learn {sel}")
        return {"skipped": f"tied 1-NN distances in the {used} subsample: fastfs chose {got}, "
                           f"scikit-learn {sel}", "used": used}
    ff, bb = _time_pair(lambda t: fastfs.sfs(Xs, y, SFS_K, criterion="loo_knn_accuracy",
                                             n_jobs=t),
                        lambda: sklearn_sfs(Xs, y, SFS_K), threads, args, first)
    return {"check": 0.0, "tol": 0.0, "fastfs": ff, "base": bb, "used": used,
            "base_name": "sklearn SFS (LOO 1-NN)", "note": f"same {SFS_K} features"}


def row_gflip(X, y, codes, threads, args) -> dict:
    Xs, _ = subsample(X, y, None, WIDE, args.seed + 6)
    m, n = Xs.shape
    diff = gflip_check(Xs, y, codes, args.seed)
    _require(diff, GFLIP_TOL, "gflip")
    ff, bb = {}, {}
    cands = n if args.gflip_candidates <= 0 else min(args.gflip_candidates, n)
    for t in threads:
        gflip_fastfs(Xs, y, t, 1, args.seed)  # warm-up
        ff[t] = gflip_fastfs(Xs, y, t, args.repeat, args.seed)["epoch_s"]
        with blas_threads(t):
            bb[t] = gflip_numpy(Xs, y, cands, min(args.repeat, 3), args.seed)["epoch_s"]
    note = f"NumPy epoch extrapolated from {cands} of {n} candidates" if cands < n else ""
    return {"check": diff, "tol": GFLIP_TOL, "fastfs": ff, "base": bb, "used": f"{m} x {n}",
            "base_name": "numpy_gflip", "note": note}


ROW_FUNCS = {"knn": row_knn, "margins": row_margins, "margins_sk": row_margins_sk, "relief_sk": row_relief_sk,
             "simba": row_simba, "relief": row_relief,
             "relieff": row_relieff, "skrebate": row_skrebate, "rgs": row_rgs,
             "sfs": row_sfs, "sfs_sk": row_sfs_sk, "gflip": row_gflip}


# ------------------------------------------------------------------------------------------
# Report

def cell(r: dict, t: int) -> str:
    if "skipped" in r:
        return "skipped"
    if "error" in r:
        return "**MISMATCH**"
    f, b = r["fastfs"][t], r["base"][t]
    return f"{fmt_s(f)} / {fmt_s(b)} = **{b / f:.1f}x**"


def worst(results: list[dict], row: str, t: int):
    done = [(f["name"], f["rows"][row]) for f in results
            if row in f["rows"] and "fastfs" in f["rows"][row]]
    if not done:
        return None
    return min(done, key=lambda nr_: nr_[1]["base"][t] / nr_[1]["fastfs"][t])


def render(info: dict, results: list[dict], args) -> str:
    rows = [r for r in ROWS if any(r in f["rows"] for f in results)]
    lines = [
        "# fastfs against its baselines on every data family",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, fastfs {info['fastfs']} ({info['extension']}); "
        f"{info['date']}.",
        f"Load average (1, 5, 15 min) before / after the run: {info['load_before']} / "
        f"{info['load_after']} (the machine is shared; this benchmark itself adds about 1). "
        f"Wall time of the run: {info['run_s']:.0f} s.",
        "",
        f"Cells: fastfs / baseline = baseline / fastfs (medians of up to {args.repeat} runs; "
        f"a baseline stops repeating after {args.budget:g} s). Baselines run with BLAS "
        "limited to the same thread count as fastfs. In every cell the baseline's result was "
        "checked against fastfs's before any time was reported (its first, checked run is also "
        "its first 1-thread sample); tolerances in the details below.",
        "",
    ]
    for t in args.threads:
        lines += [f"## {t} thread{'s' if t > 1 else ''}", "",
                  "| family | m x n | " + " | ".join(ROW_TITLES[r] for r in rows) + " |",
                  "|---|---|" + "---:|" * len(rows)]
        for f in results:
            lines.append(f"| {f['name']} | {f['m']} x {f['n']} | " + " | ".join(
                cell(f["rows"][r], t) if r in f["rows"] else "" for r in rows) + " |")
        lines.append("")
        lines.append("Worst family per row (smallest baseline / fastfs):")
        lines.append("")
        for r in rows:
            w = worst(results, r, t)
            if w is not None:
                name, x = w
                lines.append(f"- {ROW_TITLES[r]}: {name}, {x['base'][t] / x['fastfs'][t]:.1f}x "
                             f"({fmt_s(x['fastfs'][t])} vs {fmt_s(x['base'][t])})")
        lines.append("")
    lines += ["## Details per cell", "",
              "| family | row | data used | baseline | check (tol) | note |",
              "|---|---|---|---|---|---|"]
    for f in results:
        for r in rows:
            if r not in f["rows"]:
                continue
            x = f["rows"][r]
            used = x.get("used", f"{f['m']} x {f['n']}")
            if "skipped" in x or "error" in x:
                lines.append(f"| {f['name']} | {ROW_TITLES[r]} | {used} | | | "
                             f"{x.get('skipped', x.get('error'))} |")
                continue
            lines.append(f"| {f['name']} | {ROW_TITLES[r]} | {used} | {x['base_name']} "
                         f"| {x['check']:.1g} ({x['tol']:g}) | {x.get('note', '')} |")
    lines += [
        "",
        "Rows: margins = `fastfs.margins` vs NumPy with one Gram product X X^T (distances "
        "|x|^2 + |x'|^2 - 2 x.x', diagonal excluded, nearest hit / miss by argmin, the chosen "
        "distances then recomputed exactly); the Gram form rounds at 1e-16 |x|^2, so it can "
        f"pick a different neighbour only within rounding of a tie: checked to {GRAM_TOL:g} "
        "relative. Relief: `fastfs.relief` vs the same Gram neighbours. The sklearn NN rows: the "
        "same calls against scikit-learn's NearestNeighbors (algorithm=\"brute\": chunked "
        "float64 Gram products) fitted per class for the hits and on the other classes for the "
        "misses, checked to the same tolerance. kNN regression e(w): "
        "`fastfs.knn_regression_score` (unit weights, k = ceil(log2 m), the default beta, "
        "target = the class code as a float) vs NumPy from the same Gram product (k nearest by "
        "argpartition, ties ranked by index, the chosen distances recomputed exactly), the "
        "score checked to the same tolerance. ReliefF: "
        f"`fastfs.relieff(k={RELIEFF_K})` vs NumPy with SciPy's cdist (Manhattan distances on "
        "min-max scaled features, which a Gram product cannot give) and vs skrebate's ReliefF "
        f"(categorical_features=[], on at most {args.skrebate_rows} rows x "
        f"{args.skrebate_cols} features, one run). Simba: one pass, one restart, fixed order "
        "(`fastfs.simba(sample_order=order, n_restarts=1)`, which also computes e(w) at the "
        "end) vs `numpy_simba.simba_pass`; RGS: one epoch (`fastfs.rgs(sample_order=order, "
        "n_neighbors=ceil(log2 m), beta=default, learning_rate=1/var(y))`, also computing e(w)) "
        "vs `numpy_rgs.rgs_epoch`, target = the class code as a float. The NumPy Simba / RGS "
        "passes are timed on their first steps and extrapolated linearly (each step costs one "
        f"O(m n) row). SFS: `fastfs.sfs(criterion=\"loo_knn_accuracy\", {SFS_K})` vs a NumPy "
        f"forward loop on at most {args.sfs_cols} features ({args.sfs_wide_cols} for n > "
        f"{WIDE}). G-flip: one epoch from the empty set (`fastfs.gflip(max_epochs=1, "
        "n_restarts=1)`) vs `numpy_gflip.epoch`, extrapolated from "
        f"{args.gflip_candidates} candidates, on at most {WIDE} features.",
        "",
        "Families:",
        "",
    ]
    for f in results:
        lines.append(f"- {f['name']}: {FAMILIES[f['name']][0]} ({f['m']} x {f['n']}, "
                     f"{f['classes']} classes; load {f['load']} when it started)")
    lines.append("")
    return "\n".join(lines)


def plot(results: list[dict], threads: list[int], path: Path) -> None:
    plt = pyplot()
    rows = [r for r in ROWS if any(r in f["rows"] and "fastfs" in f["rows"][r]
                                   for f in results)]
    t = threads[0]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / max(1, len(rows))
    x = np.arange(len(results))
    for i, r in enumerate(rows):
        vals = [f["rows"][r]["base"][t] / f["rows"][r]["fastfs"][t]
                if r in f["rows"] and "fastfs" in f["rows"][r] else np.nan for f in results]
        ax.bar(x + i * width, vals, width, label=ROW_TITLES[r])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(x + 0.4 - width / 2, [f["name"] for f in results], rotation=30, ha="right")
    ax.set_ylabel("baseline / fastfs")
    ax.set_title(f"speed-up over the baseline, {t} thread{'s' if t > 1 else ''}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=4)
    save_figure(fig, path)


def names(text: str, valid) -> list[str]:
    out = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in out if v not in valid]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown {bad}; valid: {', '.join(valid)}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--families", type=lambda s: names(s, FAMILIES), default=list(FAMILIES))
    p.add_argument("--rows", type=lambda s: names(s, ROWS), default=list(ROWS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--budget", type=float, default=6.0,
                   help="seconds after which a timing stops repeating (at least one run)")
    p.add_argument("--data-dir", type=Path, default=DATA)
    p.add_argument("--max-rows", type=int, default=None, help="subsample every family")
    p.add_argument("--max-cols", type=int, default=None, help="subsample every family")
    p.add_argument("--step-work", type=int, default=60_000_000,
                   help="m n S budget for the timed NumPy Simba / RGS steps S")
    p.add_argument("--min-steps", type=int, default=60)
    p.add_argument("--gflip-candidates", type=int, default=25)
    p.add_argument("--sfs-cols", type=int, default=150)
    p.add_argument("--sfs-wide-cols", type=int, default=100)
    p.add_argument("--sfs-sk-cols", type=int, default=6,
                   help="features of the sklearn SFS comparison (it fits m models a candidate)")
    p.add_argument("--sfs-sk-rows", type=int, default=300,
                   help="samples of the sklearn SFS comparison (its time grows like m^2)")
    p.add_argument("--skrebate-rows", type=int, default=300)
    p.add_argument("--skrebate-cols", type=int, default=200)
    add_run_arguments(p, smoke_help="120 x 80 subsamples, 1 repeat (CI)")
    p.set_defaults(threads=[1])
    args = p.parse_args(argv)
    if args.smoke:
        args.max_rows, args.max_cols, args.repeat, args.budget = 120, 80, 1, 0.0
        args.skrebate_rows, args.skrebate_cols = 40, 10
        args.gflip_candidates, args.sfs_cols, args.sfs_wide_cols = 10, 20, 20
        args.sfs_sk_cols, args.sfs_sk_rows = 4, 30
    args.out = output_dir(args)

    info = machine_info()
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, fastfs {info['fastfs']}, load {info['load_before']}",
          flush=True)
    start = time.perf_counter()
    results, failures = [], []
    for name in args.families:
        X, y = FAMILIES[name][1](args.data_dir, args.seed)
        X, y = subsample(np.asarray(X, dtype=np.float64), np.asarray(y), args.max_rows,
                         args.max_cols, args.seed)
        codes = codes_of(y)
        fam = {"name": name, "m": X.shape[0], "n": X.shape[1], "classes": int(codes.max()) + 1,
               "load": load_average().split()[0], "rows": {}}
        print(f"\n== {name}: {X.shape[0]} x {X.shape[1]}, {fam['classes']} classes "
              f"(load {fam['load']})", flush=True)
        for row in args.rows:
            t0 = time.perf_counter()
            try:
                res = ROW_FUNCS[row](X, y, codes, args.threads, args)
            except Mismatch as exc:
                res = {"error": str(exc)}
                failures.append(f"{name}/{row}: {exc}")
            fam["rows"][row] = res
            if "fastfs" in res:
                print(f"{name:12s} {ROW_TITLES[row]:20s} " + "; ".join(
                    f"{t} thr: {fmt_s(res['fastfs'][t])} vs {fmt_s(res['base'][t])} "
                    f"({res['base'][t] / res['fastfs'][t]:.1f}x)" for t in args.threads)
                    + f"  check {res['check']:.2g}  [{time.perf_counter() - t0:.0f} s]"
                    + (f"  {res['note']}" if res.get("note") else ""), flush=True)
            else:
                print(f"{name:12s} {ROW_TITLES[row]:20s} "
                      f"{res.get('skipped') or 'MISMATCH: ' + res['error']}", flush=True)
        results.append(fam)
    info["run_s"] = time.perf_counter() - start
    finish_run(info)
    write_report(args.out, "results_families", render(info, results, args), info, results,
                 args, lambda path: plot(results, args.threads, path), "speedup_families.png")
    for t in args.threads:
        print(f"\nworst family per row, {t} thread(s):")
        for r in args.rows:
            w = worst(results, r, t)
            if w is not None:
                print(f"  {ROW_TITLES[r]:20s} {w[0]:12s} "
                      f"{w[1]['base'][t] / w[1]['fastfs'][t]:.1f}x")
    if failures:
        print("\nchecks failed (not timed):\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
