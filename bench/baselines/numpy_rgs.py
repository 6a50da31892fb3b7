"""Plain NumPy RGS (SPEC 3.3): the baseline that bench/compare/compare_rgs.py times fastfs.rgs against.

Written the way a careful NumPy user would: each step computes the weighted squared distances of
one sample to all samples with one einsum, takes the k nearest with argpartition (then sorts
those k by distance and index, SPEC 1.4's tie rule), and applies the gradient of SPEC 3.2 to the
whole weight vector with vector operations; the only Python loop is the one over steps, which
RGS needs because each step depends on the previous w. It is a benchmark baseline, not part of
the library; compare_rgs.py checks it against fastfs.rgs before timing it.
"""

from __future__ import annotations

import numpy as np


def k_nearest(d: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k smallest entries, nearest first, ties to the lower index."""
    nb = np.argpartition(d, k - 1)[:k]
    # argpartition picks any of the entries equal to the k-th smallest: take them all, so the
    # lower indices win the tie at the boundary (duplicated rows make such ties common).
    nb = np.flatnonzero(d <= d[nb].max())
    return nb[np.lexsort((nb, d[nb]))][:k]


def rgs_step(X: np.ndarray, y: np.ndarray, s: int, w: np.ndarray, k: int, beta: float,
             eta: float) -> None:
    """One RGS step on sample s, updating w in place."""
    diff = X - X[s]
    # einsum rather than (diff * diff) @ w2: one pass without a temporary and no BLAS threads.
    d = np.einsum("ij,ij,j->i", diff, diff, w * w)
    d[s] = np.inf  # leave-one-out: never its own neighbour
    nb = k_nearest(d, k)
    dist = d[nb]
    p = np.exp(-(dist - dist[0]) / beta)
    p /= p.sum()
    g = p @ y[nb]
    delta = diff[nb] ** 2
    w += eta * (-(2.0 / beta) * (y[s] - g)) * w * ((p * (y[nb] - g)) @ delta)


def default_beta(X: np.ndarray, k: int) -> float:
    """Half the mean squared distance from each sample to its k nearest others (w = 1)."""
    total = 0.0
    for s in range(X.shape[0]):
        diff = X - X[s]
        d = np.einsum("ij,ij->i", diff, diff)
        d[s] = np.inf
        total += np.sort(np.partition(d, k - 1)[:k]).sum()
    return 0.5 * total / (X.shape[0] * k)


def rgs_epoch(X: np.ndarray, y: np.ndarray, order, k: int, beta: float,
              eta: float = 1.0) -> np.ndarray:
    """Raw RGS weights w after visiting the samples in ``order`` from ones (fastfs reports
    w^2 / max(w^2) as ``weights`` and w as ``raw_weights``)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(X.shape[1])
    for s in order:
        rgs_step(X, y, int(s), w, k, beta, eta)
    return w
