"""Plain NumPy Simba (SPEC 2.5): the baseline that bench/compare/compare_relief.py times fastfs against.

Written the way a careful NumPy user would: each step computes the weighted squared distances
of one sample to all samples with one broadcast expression, picks the nearest hit and miss with
argmin and applies the gradient update to the whole weight vector; the only Python loop is the
one over steps, which Simba needs because each step depends on the previous w. It is a
benchmark baseline, not part of the library, and compare_relief.py checks it against
fastfs.simba before timing it.
"""

from __future__ import annotations

import numpy as np

UTILITIES = ("linear", "sigmoid")


def utility_slope(theta: float, utility: str, beta: float) -> float:
    """u'(theta) for the differentiable utilities."""
    if utility == "linear":
        return 1.0
    if utility == "sigmoid":
        # tanh form of the logistic function: no overflow warning for large |beta theta|.
        s = 0.5 * (1.0 + np.tanh(0.5 * beta * theta))
        return beta * s * (1.0 - s)
    raise ValueError(f"utility: unknown value {utility!r}; valid options are {UTILITIES}")


def nearest_hit_miss(X: np.ndarray, codes: np.ndarray, s: int,
                     w2: np.ndarray | None = None) -> tuple[int, float, int, float]:
    """(hit, squared distance, miss, squared distance) of sample s; index -1 when there is none.

    Distances are sum_i w2_i (x_i - z_i)^2 (plain Euclidean when w2 is None). np.argmin returns
    the first minimum, which is the lowest-index tie rule of SPEC 1.4.
    """
    diff = X - X[s]
    # einsum rather than (diff * diff) @ w2: one pass without a temporary, and no BLAS call,
    # whose spinning threads would otherwise compete with the element-wise work for the cores.
    d = (np.einsum("ij,ij->i", diff, diff) if w2 is None
         else np.einsum("ij,ij,j->i", diff, diff, w2))
    d[s] = np.inf  # leave-one-out: never its own neighbour
    same = codes == codes[s]
    out = []
    for mask in (same, ~same):
        masked = np.where(mask, d, np.inf)
        j = int(np.argmin(masked))
        out += [j, float(masked[j])] if np.isfinite(masked[j]) else [-1, np.inf]
    return out[0], out[1], out[2], out[3]


def simba_step(X: np.ndarray, codes: np.ndarray, s: int, w: np.ndarray, utility: str,
               beta: float) -> None:
    """One Simba step on sample s, updating w in place."""
    h, dh2, m, dm2 = nearest_hit_miss(X, codes, s, w * w)
    if h < 0 or m < 0:
        return  # no hit or no miss: the sample has no margin and moves nothing
    dh, dm = np.sqrt(dh2), np.sqrt(dm2)
    half_slope = 0.5 * utility_slope(0.5 * (dm - dh), utility, beta)
    a = X[s] - X[m]
    b = X[s] - X[h]
    # A neighbour at distance zero (a duplicate) would divide by zero: its term is skipped.
    term = (a * a / dm if dm > 0 else 0.0) - (b * b / dh if dh > 0 else 0.0)
    w += half_slope * term * w


def simba_pass(X: np.ndarray, codes: np.ndarray, order: np.ndarray, utility: str = "linear",
               beta: float = 1.0) -> np.ndarray:
    """Raw Simba weights w after visiting the samples in ``order``, starting from ones.

    ``codes`` are integer class labels. fastfs reports ``output_weights(w)``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    codes = np.asarray(codes)
    w = np.ones(X.shape[1])
    for s in order:
        simba_step(X, codes, int(s), w, utility, beta)
    return w


def output_weights(w: np.ndarray) -> np.ndarray:
    """w^2 / max(w^2), all zeros when w vanished (as fastfs.simba reports its weights)."""
    sq = w * w
    top = sq.max()
    return sq / top if top > 0 else np.zeros_like(sq)
