"""Plain NumPy G-flip (SPEC 2.4): the baseline that bench/compare/compare_gflip.py times fastfs against.

Written the way a careful NumPy user would: one m x m squared-distance matrix D on the current
subset, each candidate scored on D +/- its squared differences with whole-matrix operations,
no per-sample Python loops and no tricks beyond that. It is a benchmark baseline, not part of
the library, and is checked against fastfs.margin_score by compare_gflip.py.
"""

from __future__ import annotations

import numpy as np

UTILITIES = ("linear", "zero_one", "sigmoid")


def class_masks(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean m x m masks (hit, miss): same class without the diagonal, other class."""
    codes = np.asarray(codes)
    same = codes[:, None] == codes[None, :]
    hit = same.copy()
    np.fill_diagonal(hit, False)  # leave-one-out: a sample is never its own nearest hit
    return hit, ~same


def utility_sum(theta: np.ndarray, utility: str, beta: float) -> float:
    """e = sum of u(theta); NaN margins (no hit or no miss) add nothing, as in fastfs."""
    theta = theta[~np.isnan(theta)]
    if utility == "linear":
        return float(theta.sum())
    if utility == "zero_one":
        return float(np.count_nonzero(theta > 0))
    if utility == "sigmoid":
        # tanh form of 1 / (1 + exp(-beta theta)): no overflow warnings for large |theta|.
        return float((0.5 * (1.0 + np.tanh(0.5 * beta * theta))).sum())
    raise ValueError(f"utility: unknown value {utility!r}; valid options are {UTILITIES}")


def score_from_distances(D: np.ndarray, masks: tuple[np.ndarray, np.ndarray], utility: str,
                         beta: float) -> float:
    """e(F) from the squared-distance matrix D of subset F."""
    hit_mask, miss_mask = masks
    hit = np.where(hit_mask, D, np.inf).min(axis=1)
    miss = np.where(miss_mask, D, np.inf).min(axis=1)
    # Subtracting a feature can leave -1e-16 where the true distance is 0: clamp before sqrt.
    with np.errstate(invalid="ignore"):
        theta = 0.5 * (np.sqrt(np.maximum(miss, 0.0)) - np.sqrt(np.maximum(hit, 0.0)))
    theta[np.isinf(hit) | np.isinf(miss)] = np.nan
    return utility_sum(theta, utility, beta)


def feature_delta(col: np.ndarray) -> np.ndarray:
    """m x m squared differences of one feature column."""
    diff = col[:, None] - col[None, :]
    return diff * diff


def candidate_score(D: np.ndarray, col: np.ndarray, sign: float,
                    masks: tuple[np.ndarray, np.ndarray], utility: str = "linear",
                    beta: float = 1.0) -> float:
    """e(F with the feature flipped): sign +1 adds column ``col`` to F, -1 removes it."""
    return score_from_distances(D + sign * feature_delta(col), masks, utility, beta)


def squared_distances(X: np.ndarray, support: np.ndarray) -> np.ndarray:
    """D from scratch on the features in ``support`` (Gram-matrix form)."""
    Z = np.ascontiguousarray(X[:, support], dtype=np.float64)
    sq = np.einsum("ij,ij->i", Z, Z)
    D = sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T)
    np.maximum(D, 0.0, out=D)
    np.fill_diagonal(D, 0.0)
    return D


def epoch(X: np.ndarray, codes: np.ndarray, D: np.ndarray, support: np.ndarray,
          order: np.ndarray, utility: str = "linear", beta: float = 1.0, *,
          masks: tuple[np.ndarray, np.ndarray] | None = None,
          current: float | None = None) -> tuple[float, int]:
    """One G-flip epoch over the features in ``order``; updates D and support in place.

    ``masks`` and ``current`` (e of the current subset) can be passed in so a caller timing
    only the candidate loop does not pay for them. Returns (score after the epoch, flips).
    """
    if masks is None:
        masks = class_masks(codes)
    if current is None:
        current = score_from_distances(D, masks, utility, beta)
    flips = 0
    for i in order:
        sign = -1.0 if support[i] else 1.0
        delta = feature_delta(X[:, i])
        Dc = D + sign * delta
        candidate = score_from_distances(Dc, masks, utility, beta)
        if candidate > current:  # strict increase only: ties keep F
            D[...] = Dc
            support[i] = not support[i]
            current = candidate
            flips += 1
    return current, flips


def gflip(X: np.ndarray, y: np.ndarray, *, utility: str = "linear", beta: float = 1.0,
          max_epochs: int = 100, random_state: int | None = None) -> tuple[np.ndarray, float, int]:
    """Full G-flip from the empty set; returns (support, score, n_epochs).

    D is rebuilt from scratch after every epoch that changed F, like fastfs, so the reported
    score does not carry rounding from a long chain of +/- updates.
    """
    X = np.asarray(X, dtype=np.float64)
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    rng = np.random.default_rng(random_state)
    masks = class_masks(codes)
    support = np.zeros(X.shape[1], dtype=bool)
    D = np.zeros((X.shape[0], X.shape[0]))
    score = score_from_distances(D, masks, utility, beta)
    n_epochs = 0
    for n_epochs in range(1, max_epochs + 1):
        _, flips = epoch(X, codes, D, support, rng.permutation(X.shape[1]), utility, beta,
                         masks=masks, current=score)
        if flips:
            D = squared_distances(X, support)
        score = score_from_distances(D, masks, utility, beta)
        if not flips:
            break
    return support, score, n_epochs
