"""Independent plain-NumPy references: SPEC section 2 (margins, e(w), G-flip, Simba, Relief,
ReliefF), the filters of SPEC 6 that scipy.stats and scikit-learn do not compute, and the
separability measures of SPEC 5.3 / 5.4. Nothing here imports fastfs.

Section 2 is written from SPEC 1.4 and 2.1-2.7 only (ReliefF from the formula documented in
``fastfs.relieff``), deliberately slow and direct:

* weighted squared distances are computed from explicit differences (``np.subtract`` on
  broadcast arrays), never through the ``|a|^2 + |b|^2 - 2ab`` expansion;
* leave-one-out neighbours: a sample is never its own neighbour, the nearest hit is the nearest
  other sample of the same label, the nearest miss the nearest sample of another label, ties go to
  the lowest sample index; no hit or no miss gives a NaN margin;
* e(w) sums the utility over samples whose margin is not NaN.

Everything is computed in float64 whatever the input dtype.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

UTILITIES = ("linear", "zero_one", "sigmoid")


# --------------------------------------------------------------------------------------------
# distances and margins


def _as_float64(X) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError("reference: X must be 2-D")
    return X.astype(np.float64)


def _encode(y) -> np.ndarray:
    """Labels of any dtype -> integer codes (only equality matters for margins)."""
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    return codes.reshape(-1)


def weighted_sq_distances(X, w=None) -> np.ndarray:
    """D[a, b] = sum_i w_i^2 (x_{a,i} - x_{b,i})^2, from explicit differences (SPEC 2.1).

    Accumulated one feature at a time (each an m x m broadcast subtraction) so memory stays
    O(m^2) instead of O(m^2 n_features).
    """
    X = _as_float64(X)
    m, n_features = X.shape
    w = np.ones(n_features) if w is None else np.asarray(w, dtype=np.float64)
    assert w.shape == (n_features,)
    D = np.zeros((m, m))
    for i in range(n_features):
        col = X[:, i]
        d = np.subtract(col[:, None], col[None, :])
        D += (w[i] * w[i]) * (d * d)
    return D


def subset_sq_distances(X, support) -> np.ndarray:
    """Squared Euclidean distances on the features of ``support`` (bool mask or indices),
    accumulated feature by feature to keep memory at O(m^2)."""
    X = _as_float64(X)
    idx = _support_indices(support, X.shape[1])
    m = X.shape[0]
    D = np.zeros((m, m))
    for i in idx:
        col = X[:, i]
        d = np.subtract(col[:, None], col[None, :])
        D += d * d
    return D


def _support_indices(support, n_features: int) -> np.ndarray:
    s = np.asarray(support)
    if s.dtype == np.bool_:
        assert s.shape == (n_features,)
        return np.flatnonzero(s)
    return np.unique(s.astype(np.int64))


def margins_from_distances(D: np.ndarray, y) -> np.ndarray:
    """theta(x) = (||x - nearmiss|| - ||x - nearhit||) / 2 from squared distances D.

    Candidates that are not allowed (the sample itself; other labels for the hit; the same
    label for the miss) are masked with +inf. ``np.argmin`` returns the first minimum, so ties
    go to the lowest sample index.
    """
    D = np.asarray(D, dtype=np.float64)
    codes = _encode(y)
    m = D.shape[0]
    same = codes[:, None] == codes[None, :]
    hit_ok = same & ~np.eye(m, dtype=bool)
    miss_ok = ~same
    rows = np.arange(m)
    hit = np.argmin(np.where(hit_ok, D, np.inf), axis=1)
    miss = np.argmin(np.where(miss_ok, D, np.inf), axis=1)
    theta = 0.5 * (np.sqrt(D[rows, miss]) - np.sqrt(D[rows, hit]))
    valid = hit_ok.any(axis=1) & miss_ok.any(axis=1)
    return np.where(valid, theta, np.nan)


def margins(X, y, w=None) -> np.ndarray:
    """Leave-one-out hypothesis margins under weights w (SPEC 2.2); NaN without hit or miss."""
    return margins_from_distances(weighted_sq_distances(X, w), y)


# --------------------------------------------------------------------------------------------
# evaluation function


def utility_values(theta: np.ndarray, utility: str = "linear", beta: float = 1.0) -> np.ndarray:
    theta = np.asarray(theta, dtype=np.float64)
    if utility == "linear":
        return theta.copy()
    if utility == "zero_one":
        return np.where(theta > 0, 1.0, 0.0)
    if utility == "sigmoid":
        # 1 / (1 + exp(-z)), evaluated without overflow for large |z|
        z = beta * theta
        e = np.exp(-np.abs(z))
        return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    raise ValueError(f"unknown utility {utility!r}")


def score_from_margins(theta: np.ndarray, utility: str = "linear", beta: float = 1.0) -> float:
    theta = np.asarray(theta, dtype=np.float64)
    ok = ~np.isnan(theta)
    return float(np.sum(utility_values(theta[ok], utility, beta)))


def margin_score(X, y, w=None, utility: str = "linear", beta: float = 1.0) -> float:
    """e(w) = sum over samples with a finite margin of u(theta) (SPEC 2.3)."""
    return score_from_margins(margins(X, y, w), utility, beta)


def subset_score(X, y, support, utility: str = "linear", beta: float = 1.0) -> float:
    """e(F) for a feature subset F (bool mask or indices), recomputed from scratch."""
    return score_from_margins(margins_from_distances(subset_sq_distances(X, support), y),
                              utility, beta)


# --------------------------------------------------------------------------------------------
# G-flip checks


def flip_improvements(X, y, support, utility: str = "linear", beta: float = 1.0):
    """e(F) and, for every feature i, e(F xor {i}) - e(F), all recomputed from scratch."""
    X = _as_float64(X)
    n_features = X.shape[1]
    mask = np.zeros(n_features, dtype=bool)
    mask[_support_indices(support, n_features)] = True
    base = subset_score(X, y, mask, utility, beta)
    gains = np.empty(n_features)
    for i in range(n_features):
        # From scratch on the flipped subset (not by adding or subtracting one feature's
        # squared differences) so the check does not share the incremental update it verifies.
        flipped = mask.copy()
        flipped[i] = not flipped[i]
        gains[i] = subset_score(X, y, flipped, utility, beta) - base
    return base, gains


def gflip_is_local_max(X, y, support, utility: str = "linear", beta: float = 1.0,
                       rtol: float = 1e-9) -> tuple[bool, float]:
    """True when no single flip increases e by more than ``rtol * max(1, |e(F)|)``.

    Returns ``(is_local_max, worst_improvement)`` where worst_improvement is the largest
    e(F xor {i}) - e(F) over features i (<= 0 at a strict local maximum).
    """
    base, gains = flip_improvements(X, y, support, utility, beta)
    worst = float(np.max(gains))
    return worst <= rtol * max(1.0, abs(base)), worst


def gflip(X, y, orders: Iterable[Sequence[int]], utility: str = "linear", beta: float = 1.0,
          initial=None):
    """Brute-force G-flip (SPEC 2.4) with explicit visiting orders, one order per epoch.

    Each epoch visits the features in the given order; feature i is flipped when e(F xor {i})
    is strictly larger than e(F). Stops after an epoch without a flip or when the orders run
    out. Returns (support mask, score, history) with history = e(F) after every epoch.
    """
    X = _as_float64(X)
    n_features = X.shape[1]
    mask = np.zeros(n_features, dtype=bool)
    if initial is not None:
        mask[_support_indices(initial, n_features)] = True
    current = subset_score(X, y, mask, utility, beta)
    history = []
    for order in orders:
        changed = False
        for i in order:
            flipped = mask.copy()
            flipped[i] = not flipped[i]
            value = subset_score(X, y, flipped, utility, beta)
            if value > current:
                mask, current, changed = flipped, value, True
        history.append(current)
        if not changed:
            break
    return mask, current, np.asarray(history)


# --------------------------------------------------------------------------------------------
# neighbour searches shared by Simba, Relief and ReliefF (SPEC 1.4)


def _row_sq_distances(X: np.ndarray, s: int, w=None) -> np.ndarray:
    """d[j] = sum_i w_i^2 (x_{s,i} - x_{j,i})^2 for every sample j, by broadcast subtraction."""
    diff = np.subtract(X, X[s][None, :])
    if w is None:
        return np.sum(diff * diff, axis=1)
    w2 = np.asarray(w, dtype=np.float64) ** 2
    return np.sum(w2[None, :] * (diff * diff), axis=1)


def _nearest_hit_miss(dist: np.ndarray, codes: np.ndarray, s: int):
    """Indices of the nearest hit and nearest miss of sample s (None when there is none).

    The sample itself is never a candidate; ``np.argmin`` returns the first minimum, so ties go
    to the lowest sample index.
    """
    assert dist.shape == codes.shape
    hit_ok = codes == codes[s]
    hit_ok[s] = False
    miss_ok = codes != codes[s]
    hit = int(np.argmin(np.where(hit_ok, dist, np.inf))) if hit_ok.any() else None
    miss = int(np.argmin(np.where(miss_ok, dist, np.inf))) if miss_ok.any() else None
    return hit, miss


# --------------------------------------------------------------------------------------------
# Simba (SPEC 2.5)


def utility_derivative(theta: float, utility: str = "linear", beta: float = 1.0) -> float:
    """u'(theta): 1 for linear; beta * s * (1 - s) with s = sigmoid(beta * theta) for sigmoid."""
    if utility == "linear":
        return 1.0
    if utility == "sigmoid":
        s = float(utility_values(np.array([theta]), "sigmoid", beta)[0])
        return beta * s * (1.0 - s)
    raise ValueError(f"no derivative for utility {utility!r}")


def simba_step(X, codes, w, s: int, utility: str = "linear", beta: float = 1.0):
    """One Simba step on sample s: returns (new w, theta) -- theta is NaN and w is returned
    unchanged when s has no hit or no miss.

    Neighbours are found under the current weights w; every w_i then gains
    0.5 * u'(theta) * ((x_i - nm_i)^2 / ||x - nm||_w - (x_i - nh_i)^2 / ||x - nh||_w) * w_i,
    where a term whose distance is zero is skipped (SPEC 1.4).
    """
    X = _as_float64(X)
    codes = np.asarray(codes).reshape(-1)
    w = np.asarray(w, dtype=np.float64).copy()
    dist = _row_sq_distances(X, s, w)
    hit, miss = _nearest_hit_miss(dist, codes, s)
    if hit is None or miss is None:
        return w, float("nan")
    d_hit = np.sqrt(dist[hit])
    d_miss = np.sqrt(dist[miss])
    theta = 0.5 * (d_miss - d_hit)
    du = utility_derivative(theta, utility, beta)
    grad = np.zeros_like(w)
    if d_miss > 0:
        dm = X[s] - X[miss]
        grad += (dm * dm) / d_miss
    if d_hit > 0:
        dh = X[s] - X[hit]
        grad -= (dh * dh) / d_hit
    return w + 0.5 * du * grad * w, float(theta)


def simba_path(X, y, order: Sequence[int], utility: str = "linear", beta: float = 1.0):
    """Simba from w = 1 over the given sample order.

    Returns (ws, thetas): ws[t] is w after step t + 1 and thetas[t] the margin of the sample of
    step t + 1 under the w it was visited with (NaN when it has no hit or no miss).
    """
    X = _as_float64(X)
    codes = _encode(y)
    w = np.ones(X.shape[1])
    ws, thetas = [], []
    for s in order:
        w, theta = simba_step(X, codes, w, int(s), utility, beta)
        ws.append(w.copy())
        thetas.append(theta)
    return np.array(ws), np.array(thetas)


def simba_weights(w) -> np.ndarray:
    """Reported Simba weights: w^2 / max(w^2)."""
    w2 = np.asarray(w, dtype=np.float64) ** 2
    return w2 / np.max(w2)


# --------------------------------------------------------------------------------------------
# Relief (SPEC 2.6)


def relief(X, y, order: Sequence[int] | None = None) -> np.ndarray:
    """Relief weights: from zero, each visited sample adds (x - nm)^2 - (x - nh)^2 with the
    nearest hit and miss under the plain Euclidean distance. Default order: every sample once.
    A sample without a hit or a miss adds nothing."""
    X = _as_float64(X)
    codes = _encode(y)
    w = np.zeros(X.shape[1])
    if order is None:
        order = range(X.shape[0])
    for s in order:
        s = int(s)
        hit, miss = _nearest_hit_miss(_row_sq_distances(X, s), codes, s)
        if hit is None or miss is None:
            continue
        dm = X[s] - X[miss]
        dh = X[s] - X[hit]
        w += dm * dm - dh * dh
    return w


# --------------------------------------------------------------------------------------------
# ReliefF (SPEC 2.7, formula of fastfs.relieff's docstring / skrebate's continuous scoring)


def relieff(X, y, n_neighbors: int = 10, skrebate_hit_count: bool = False,
            queries: int | None = None) -> np.ndarray:
    """ReliefF on min-max scaled features with the Manhattan distance.

    For every sample x: its k nearest hits and, for every other class c, its k nearest misses of
    class c (ties to the lower index; fewer when the class is smaller). With
    diff_i(z) = |x_i - z_i| / range_i, M_c misses of class c, M = sum_c M_c and C classes,
    feature i gains
        (-(1/h) sum_hits diff_i + sum_c (M_c / M) (C - 1) (1/M) sum_{misses of c} diff_i) / n
    (miss term dropped when M = 0). A constant feature has diff 0.

    By default the hit divisor is the number of real hits, min(k, n_c - 1) (SPEC 1.4: a sample is
    never its own neighbour), which is what fastfs computes.

    ``skrebate_hit_count=True`` reproduces skrebate instead: the hit divisor is h = min(k, n_c)
    where n_c is the size of x's class *including x*. skrebate walks all samples in order
    of distance with x itself last (distance sys.maxsize); when x's class has fewer than k other
    samples, that walk reaches x and counts it as a hit whose difference is 0, so the hit sum of
    the n_c - 1 real hits is divided by n_c, not by n_c - 1. With k <= n_c - 1 this is the plain
    "k nearest other hits" rule. A singleton class gives a hit term of 0.

    The two differ only when some class has at most k samples.

    ``queries=q``: only the first q samples are queried (neighbours still come from all), and
    the weights are averaged over those q (n above becomes q).
    """
    X = _as_float64(X)
    codes = _encode(y)
    m, n_features = X.shape
    k = int(n_neighbors)
    n_classes = int(codes.max()) + 1
    lo = X.min(axis=0)
    rng = X.max(axis=0) - lo
    safe = np.where(rng > 0, rng, 1.0)
    Z = np.where(rng > 0, (X - lo) / safe, 0.0)
    w = np.zeros(n_features)
    index = np.arange(m)
    q = m if queries is None else int(queries)
    for s in range(q):
        diffs = np.abs(np.subtract(Z, Z[s][None, :]))  # diffs[j, i] = |x_i - z_{j,i}| / range_i
        dist = np.sum(diffs, axis=1)  # Manhattan distance of the scaled features
        contrib = np.zeros(n_features)
        # hits: stable sort on (distance, index) -> ties to the lower index
        hit_idx = index[(codes == codes[s]) & (index != s)]
        hits = hit_idx[np.lexsort((hit_idx, dist[hit_idx]))][:k]
        misses_by_class = []
        for c in range(n_classes):
            if c == codes[s]:
                continue
            cand = index[codes == c]
            misses_by_class.append(cand[np.lexsort((cand, dist[cand]))][:k])
        M = sum(len(mc) for mc in misses_by_class)
        if M > 0:
            miss_term = np.zeros(n_features)
            for mc in misses_by_class:
                if len(mc):
                    miss_term += (len(mc) / M) * (n_classes - 1) * diffs[mc].sum(axis=0)
            contrib += miss_term / M
        # skrebate's divisor counts x itself once its class is exhausted (see the docstring)
        h = min(k, int(np.sum(codes == codes[s]))) if skrebate_hit_count else len(hits)
        if len(hits) > 0:
            contrib -= diffs[hits].sum(axis=0) / h
        w += contrib / q
    return w


# filters (SPEC 6) without a scipy / scikit-learn counterpart. Per feature, per class, with
# NumPy's own mean / var; positive class = the larger label.


def _two_classes(X, y):
    X = _as_float64(X)
    y = np.asarray(y)
    classes = np.unique(y)
    assert classes.shape[0] == 2
    return X[y == classes[1]], X[y == classes[0]]


def f_score(X, y) -> np.ndarray:
    """Chen and Lin's F-score: [(m+ - m)^2 + (m- - m)^2] / [var+ + var-] (ddof 1)."""
    pos, neg = _two_classes(X, y)
    mean = _as_float64(X).mean(axis=0)
    num = (pos.mean(axis=0) - mean) ** 2 + (neg.mean(axis=0) - mean) ** 2
    return num / (pos.var(axis=0, ddof=1) + neg.var(axis=0, ddof=1))


def s2n(X, y) -> np.ndarray:
    """(mean+ - mean-) / (sd+ + sd-), sd with ddof 1."""
    pos, neg = _two_classes(X, y)
    return (pos.mean(axis=0) - neg.mean(axis=0)) / (pos.std(axis=0, ddof=1)
                                                    + neg.std(axis=0, ddof=1))


def z_test(X, y, sigma):
    """Two-sample z with known sigma and its two-sided normal p-value (math.erfc)."""
    import math

    pos, neg = _two_classes(X, y)
    z = (pos.mean(axis=0) - neg.mean(axis=0)) / (
        np.asarray(sigma, dtype=np.float64) * np.sqrt(1 / pos.shape[0] + 1 / neg.shape[0]))
    p = np.array([math.erfc(abs(v) / math.sqrt(2)) for v in z])
    return z, p


def fisher_ratio(X, y) -> np.ndarray:
    """Sum over class pairs of (mu_a - mu_b)^2 / (var_a + var_b), var with divisor n_c."""
    X = _as_float64(X)
    y = np.asarray(y)
    classes = np.unique(y)
    out = np.zeros(X.shape[1])
    for a in range(classes.shape[0]):
        for b in range(a + 1, classes.shape[0]):
            xa, xb = X[y == classes[a]], X[y == classes[b]]
            out += (xa.mean(axis=0) - xb.mean(axis=0)) ** 2 / (xa.var(axis=0) + xb.var(axis=0))
    return out


def bin_codes(x, bins: int, binning: str) -> np.ndarray:
    """Bin index of every value: np.digitize on np.quantile or np.linspace edges, or
    above-the-median for "median"."""
    x = np.asarray(x, dtype=np.float64)
    if binning == "median":
        return (x > np.median(x)).astype(np.int64)
    if binning == "quantile":
        edges = np.quantile(x, np.arange(1, bins) / bins)
        above = x[x > x.min()]
        if above.size:  # an edge at the minimum moves to the first edge or value above it
            target = min([above.min()] + [e for e in edges if e > x.min()])
            edges = np.where(edges <= x.min(), target, edges)
    elif binning == "uniform":
        edges = np.linspace(x.min(), x.max(), bins + 1)[1:-1]
    else:
        raise ValueError(binning)
    return np.digitize(x, edges)


def mutual_info_counts(x, y, alpha: float) -> float:
    """Mutual information (nats) of a discrete x and labels y from their contingency table
    (one row per distinct x, one column per class) with alpha added to every cell."""
    _, xi = np.unique(np.asarray(x), return_inverse=True)
    _, yi = np.unique(np.asarray(y), return_inverse=True)
    table = np.zeros((xi.max() + 1, yi.max() + 1))
    np.add.at(table, (xi.reshape(-1), yi.reshape(-1)), 1.0)
    P = (table + alpha) / (table + alpha).sum()
    outer = P.sum(axis=1, keepdims=True) * P.sum(axis=0, keepdims=True)
    nz = P > 0
    return float(np.sum(P[nz] * np.log(P[nz] / outer[nz])))


# --------------------------------------------------------------------------------------------
# separability (SPEC 5.3, 5.4), by the textbook formulas: explicit sums of outer products,
# np.linalg.inv and np.linalg.det.


def class_gaussians(X, y):
    """Priors P_i = n_i / n, means and covariances with divisor n_i (explicit outer products)."""
    X = _as_float64(X)
    y = np.asarray(y)
    priors, means, covs = [], [], []
    for c in np.unique(y):
        Xc = X[y == c]
        mu = Xc.sum(axis=0) / Xc.shape[0]
        S = sum(np.outer(x - mu, x - mu) for x in Xc) / Xc.shape[0]
        priors.append(Xc.shape[0] / X.shape[0])
        means.append(mu)
        covs.append(S)
    return np.array(priors), np.array(means), np.array(covs)


def scatter_matrices(X, y):
    """(S_w, S_b, S_m) with S_m computed on its own as the covariance of all samples (divisor
    n), so that S_m = S_w + S_b is checked, not assumed."""
    X = _as_float64(X)
    P, mu, S = class_gaussians(X, y)
    Sw = sum(p * s for p, s in zip(P, S))
    mu0 = sum(p * m for p, m in zip(P, mu))
    Sb = sum(p * np.outer(m - mu0, m - mu0) for p, m in zip(P, mu))
    Sm = sum(np.outer(x - mu0, x - mu0) for x in X) / X.shape[0]
    return Sw, Sb, Sm


def j1(X, y) -> float:
    Sw, _, Sm = scatter_matrices(X, y)
    return float(np.trace(Sm) / np.trace(Sw))


def j2(X, y) -> float:
    Sw, _, Sm = scatter_matrices(X, y)
    return float(np.linalg.det(Sm) / np.linalg.det(Sw))


def j3(X, y) -> float:
    Sw, _, Sm = scatter_matrices(X, y)
    return float(np.trace(np.linalg.inv(Sw) @ Sm))


def divergence_pair(m1, S1, m2, S2) -> float:
    """d_12 = KL(1||2) + KL(2||1) for Gaussians, each KL by its closed form."""
    def kl(ma, Sa, mb, Sb):
        d = ma.shape[0]
        Sb_inv = np.linalg.inv(Sb)
        dm = mb - ma
        return 0.5 * (np.trace(Sb_inv @ Sa) + dm @ Sb_inv @ dm - d
                      + np.log(np.linalg.det(Sb) / np.linalg.det(Sa)))

    return float(kl(m1, S1, m2, S2) + kl(m2, S2, m1, S1))


def divergence(X, y):
    """(average sum_i sum_j P_i P_j d_ij, pairwise matrix d_ij)."""
    P, mu, S = class_gaussians(X, y)
    k = P.shape[0]
    D = np.array([[divergence_pair(mu[a], S[a], mu[b], S[b]) if a != b else 0.0
                   for b in range(k)] for a in range(k)])
    return float(sum(P[a] * P[b] * D[a, b] for a in range(k) for b in range(k))), D


def bhattacharyya_pair(m1, S1, m2, S2) -> float:
    S = (S1 + S2) / 2
    dm = m1 - m2
    return float(dm @ np.linalg.inv(S) @ dm / 8
                 + 0.5 * np.log(np.linalg.det(S) / np.sqrt(np.linalg.det(S1) * np.linalg.det(S2))))


def bhattacharyya(X, y):
    """(prior-weighted average over pairs i != j, normalised by the weights; pairwise matrix)."""
    P, mu, S = class_gaussians(X, y)
    k = P.shape[0]
    B = np.array([[bhattacharyya_pair(mu[a], S[a], mu[b], S[b]) if a != b else 0.0
                   for b in range(k)] for a in range(k)])
    num = sum(P[a] * P[b] * B[a, b] for a in range(k) for b in range(k) if a != b)
    den = sum(P[a] * P[b] for a in range(k) for b in range(k) if a != b)
    return float(num / den), B


# --------------------------------------------------------------------------------------------
# search: criteria and strategies (SPEC 5.1, 5.2), written from the issue-6 contract only.
#
# A criterion is a function (X, y, subset) -> float of the features in ``subset`` (any order;
# every built-in one is computed from scratch on X[:, sorted(subset)], so it is a function of
# the set). A strategy takes (X, y, n_features_to_select, criterion) and returns
# (selected list, score, history list, subsets list of sorted tuples, best_scores array).
# Candidates are scanned in ascending feature index and the first maximum wins.

import itertools
import math


def _subset_columns(X, subset) -> np.ndarray:
    X = _as_float64(X)
    return X[:, sorted(int(i) for i in subset)]


def _is_singular(M: np.ndarray) -> bool:
    """Numerically rank-deficient by NumPy's default SVD rank rule."""
    return bool(np.linalg.matrix_rank(M, hermitian=True) < M.shape[0])


def _knn_table(D: np.ndarray, k: int) -> np.ndarray:
    """Row i: the k nearest other samples of i by (distance, index) ascending (a stable sort
    keeps the lower index first among equal distances; i itself is pushed last by +inf)."""
    D = np.array(D, dtype=np.float64)
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def crit_loo_knn_accuracy(X, y, subset, n_neighbors: int = 1) -> float:
    """Fraction of samples whose leave-one-out k-NN majority vote is their own label; vote
    ties go to the class that comes first in np.unique(y)."""
    Xs = _subset_columns(X, subset)
    codes = _encode(y)
    n_classes = int(codes.max()) + 1
    D = subset_sq_distances(Xs, np.arange(Xs.shape[1]))
    m = D.shape[0]
    k = min(int(n_neighbors), m - 1)
    correct = 0
    table = _knn_table(D, k)
    for i in range(m):
        nb = table[i]
        votes = np.bincount(codes[nb], minlength=n_classes)
        correct += int(np.argmax(votes) == codes[i])  # argmax: first (lowest) class on ties
    return correct / m


def crit_margin(X, y, subset, utility: str = "linear", beta: float = 1.0) -> float:
    """e(w) of SPEC 2.3 with w = the indicator of the subset."""
    Xs = _subset_columns(X, subset)
    return margin_score(Xs, y, None, utility, beta)


def crit_loo_knn_mse(X, y, subset, n_neighbors=None, beta=None) -> float:
    """-(1/m) sum_i (y_i - g_i)^2 with g_i the soft kNN estimate over the k nearest other
    samples, kernel exp(-(d - d_min) / beta) normalised; uniform when beta == 0."""
    Xs = _subset_columns(X, subset)
    yv = np.asarray(y, dtype=np.float64)
    D = subset_sq_distances(Xs, np.arange(Xs.shape[1]))
    m = D.shape[0]
    k = math.ceil(math.log2(m)) if n_neighbors is None else int(n_neighbors)
    k = min(k, m - 1)
    neighbours = list(_knn_table(D, k))
    if beta is None:
        beta = 0.5 * float(np.mean([np.mean(D[i, nb]) for i, nb in enumerate(neighbours)]))
    total = 0.0
    for i, nb in enumerate(neighbours):
        d = D[i, nb]
        if beta == 0 or np.all(d == d[0]):
            p = np.full(k, 1.0 / k)
        else:
            e = np.exp(-(d - d.min()) / beta)
            p = e / e.sum()
        g = float(np.sum(p * yv[nb]))
        total += (yv[i] - g) ** 2
    return -total / m


def crit_least_squares(X, y, subset, fit_intercept: bool = False) -> float:
    """-min_b ||y - X_S b||^2 (columns and y centred first with an intercept)."""
    Xs = _subset_columns(X, subset)
    yv = np.asarray(y, dtype=np.float64)
    if fit_intercept:
        Xs = Xs - Xs.mean(axis=0)
        yv = yv - yv.mean()
    b = np.linalg.lstsq(Xs, yv, rcond=None)[0]
    r = yv - Xs @ b
    return -float(r @ r)


def crit_j1(X, y, subset) -> float:
    return j1(_subset_columns(X, subset), y)


def _ridged_scatter(X, y, subset, ridge: float):
    Sw, Sb, _ = scatter_matrices(_subset_columns(X, subset), y)
    Sw = Sw + ridge * np.eye(Sw.shape[0])
    return Sw, Sw + Sb


def crit_j2(X, y, subset, ridge: float = 0.0) -> float:
    Sw, Sm = _ridged_scatter(X, y, subset, ridge)
    if _is_singular(Sw):
        return -math.inf
    return float(np.linalg.det(Sm) / np.linalg.det(Sw))


def crit_j3(X, y, subset, ridge: float = 0.0) -> float:
    Sw, Sm = _ridged_scatter(X, y, subset, ridge)
    if _is_singular(Sw):
        return -math.inf
    return float(np.trace(np.linalg.inv(Sw) @ Sm))


def _ridged_gaussians(X, y, subset, ridge: float):
    P, mu, S = class_gaussians(_subset_columns(X, subset), y)
    S = S + ridge * np.eye(S.shape[1])[None, :, :]
    return P, mu, S


def crit_divergence(X, y, subset, ridge: float = 0.0) -> float:
    """sum_i sum_j P_i P_j d_ij; -inf when a class covariance is singular."""
    P, mu, S = _ridged_gaussians(X, y, subset, ridge)
    if any(_is_singular(s) for s in S):
        return -math.inf
    k = P.shape[0]
    return float(sum(P[a] * P[b] * divergence_pair(mu[a], S[a], mu[b], S[b])
                     for a in range(k) for b in range(k) if a != b))


def crit_bhattacharyya(X, y, subset, ridge: float = 0.0) -> float:
    """Prior-weighted average of the pairwise Bhattacharyya distances over pairs a != b."""
    P, mu, S = _ridged_gaussians(X, y, subset, ridge)
    if any(_is_singular(s) for s in S):
        return -math.inf
    k = P.shape[0]
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    num = sum(P[a] * P[b] * bhattacharyya_pair(mu[a], S[a], mu[b], S[b]) for a, b in pairs)
    return float(num / sum(P[a] * P[b] for a, b in pairs))


CRITERIA = {
    "loo_knn_accuracy": crit_loo_knn_accuracy,
    "margin": crit_margin,
    "loo_knn_mse": crit_loo_knn_mse,
    "least_squares": crit_least_squares,
    "j1": crit_j1,
    "j2": crit_j2,
    "j3": crit_j3,
    "divergence": crit_divergence,
    "bhattacharyya": crit_bhattacharyya,
}


def criterion(name: str, **params):
    """The reference criterion ``name`` with parameters bound: a function (X, y, subset)."""
    func = CRITERIA[name]
    return lambda X, y, subset: func(X, y, subset, **params)


# Two J's within this relative distance tie (rounding must not decide a tie).
TIE_RTOL = 1e-10


def tied(a: float, b: float) -> bool:
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= TIE_RTOL * max(abs(a), abs(b))


def beats(a: float, b: float) -> bool:
    """a is larger than b by more than a tie."""
    return a > b and not tied(a, b)


def first_of_max(values) -> int:
    """Index of the first value tied with the maximum."""
    top = max(values)
    return next(i for i, v in enumerate(values) if not beats(top, v))


class _Search:
    """Criterion calls (memoised on the set), argmax with ties to the lower index, records."""

    def __init__(self, X, y, crit):
        self.X, self.y, self.crit = X, y, crit
        self.n = np.asarray(X).shape[1]
        self.cache: dict = {}
        self.records: list = []  # (list order, sorted tuple, J)

    def J(self, subset) -> float:
        assert len(subset) > 0, "J is never evaluated on the empty set"
        key = tuple(sorted(subset))
        if key not in self.cache:
            self.cache[key] = float(self.crit(self.X, self.y, list(key)))
        return self.cache[key]

    def pick(self, moves):
        """moves: (x, subset after the move), x ascending -> the first x tied with the max."""
        moves = list(moves)
        values = [self.J(T) for _, T in moves]
        i = first_of_max(values)
        if values[i] == -math.inf:
            raise ValueError("every move has J = -inf: try ridge")
        return moves[i][0], values[i]

    def best_addition(self, S, allowed=None):
        return self.pick((x, S + [x]) for x in range(self.n)
                         if x not in S and (allowed is None or x in allowed))

    def best_removal(self, S, allowed=None):
        return self.pick((x, [f for f in S if f != x]) for x in sorted(S)
                         if allowed is None or x in allowed)

    def record(self, S, value=None):
        v = self.J(S) if value is None else value
        self.records.append((list(S), tuple(sorted(S)), v))

    def best_record(self):
        """Largest J; ties: smaller size first, then the earlier record."""
        top = max(rec[2] for rec in self.records)
        best = None
        for rec in self.records:
            if not beats(top, rec[2]) and (best is None or len(rec[1]) < len(best[1])):
                best = rec
        return best

    def result(self, S=None):
        if S is None:
            S = self.best_record()[0]
        best_scores = np.full(self.n + 1, np.nan)
        for _, key, v in self.records:
            if np.isnan(best_scores[len(key)]) or v > best_scores[len(key)]:
                best_scores[len(key)] = v
        return (list(S), self.J(S), [r[2] for r in self.records], [r[1] for r in self.records],
                best_scores)


def resolve_k(n_features_to_select, n: int):
    """int k as is; float f -> max(1, int(f n)); "best" -> None."""
    if isinstance(n_features_to_select, str):
        assert n_features_to_select == "best"
        return None
    if isinstance(n_features_to_select, float):
        return max(1, int(n_features_to_select * n))
    return int(n_features_to_select)


def search_sfs(X, y, n_features_to_select, crit):
    s = _Search(X, y, crit)
    k = resolve_k(n_features_to_select, s.n)
    K = s.n if k is None else k
    S: list = []
    while len(S) < K:
        x, v = s.best_addition(S)
        S = S + [x]
        s.record(S, v)
    return s.result(None if k is None else S)


def search_sbs(X, y, n_features_to_select, crit):
    s = _Search(X, y, crit)
    k = resolve_k(n_features_to_select, s.n)
    K = 1 if k is None else k
    S = list(range(s.n))
    s.record(S)
    while len(S) > K:
        x, v = s.best_removal(S)
        S = [f for f in S if f != x]
        s.record(S, v)
    return s.result(None if k is None else S)


def search_sffs(X, y, n_features_to_select, crit, max_loops: int = 100_000):
    s = _Search(X, y, crit)
    k = resolve_k(n_features_to_select, s.n)
    K = s.n if k is None else k
    best: dict = {}  # size -> (list, J)

    def best_j(size):
        return best[size][1] if size in best else -math.inf

    S: list = []
    chain: list = []  # sfs's path, one step each time the main step reaches a new size
    for _ in range(max_loops):
        on_chain = len(S) == len(chain) and sorted(S) == sorted(chain)
        if len(S) == len(chain) and not on_chain:
            c, vc = s.best_addition(chain)
            chain = chain + [c]
            best[len(chain)] = (list(chain), vc)
            s.record(chain, vc)
        x, v = s.best_addition(S)
        S = S + [x]
        if on_chain:
            chain = list(S)
        if beats(v, best_j(len(S))):
            best[len(S)] = (list(S), v)
        elif beats(best_j(len(S)), v):
            S, v = list(best[len(S)][0]), best[len(S)][1]
        s.record(S, v)
        if len(S) == K:
            break
        while len(S) > 1:
            try:
                x, v = s.best_removal(S)
            except ValueError:  # every conditional move singular: no step
                break
            if beats(v, best_j(len(S) - 1)):
                S = [f for f in S if f != x]
                best[len(S)] = (list(S), v)
                s.record(S, v)
            else:
                break
    else:
        raise RuntimeError("reference sffs did not terminate")
    return s.result(None if k is None else S)


def search_sfbs(X, y, n_features_to_select, crit, max_loops: int = 100_000):
    s = _Search(X, y, crit)
    n = s.n
    k = resolve_k(n_features_to_select, n)
    K = 1 if k is None else k
    S = list(range(n))
    best = {n: (list(S), s.J(S))}

    def best_j(size):
        return best[size][1] if size in best else -math.inf

    s.record(S)
    chain = list(S)  # sbs's path, one step each time the main step reaches a new size
    for _ in range(max_loops):
        on_chain = len(S) == len(chain) and sorted(S) == sorted(chain)
        if len(S) == len(chain) and not on_chain:
            c, vc = s.best_removal(chain)
            chain = [f for f in chain if f != c]
            best[len(chain)] = (list(chain), vc)
            s.record(chain, vc)
        x, v = s.best_removal(S)
        S = [f for f in S if f != x]
        if on_chain:
            chain = list(S)
        if beats(v, best_j(len(S))):
            best[len(S)] = (list(S), v)
        elif beats(best_j(len(S)), v):
            S, v = list(best[len(S)][0]), best[len(S)][1]
        s.record(S, v)
        if len(S) == K:
            break
        while len(S) < n:
            try:
                x, v = s.best_addition(S)
            except ValueError:  # every conditional move singular: no step
                break
            if beats(v, best_j(len(S) + 1)):
                S = S + [x]
                best[len(S)] = (list(S), v)
                s.record(S, v)
            else:
                break
    else:
        raise RuntimeError("reference sfbs did not terminate")
    return s.result(None if k is None else S)


def search_plus_l_minus_r(X, y, n_features_to_select, crit, l: int, r: int):
    s = _Search(X, y, crit)
    n = s.n
    k = resolve_k(n_features_to_select, n)
    assert l >= 1 and r >= 1 and l != r
    if l > r:
        K = n - r if k is None else k
        assert K + r <= n
        S: list = []
        while True:
            for _ in range(min(l, K + r - len(S))):
                x, v = s.best_addition(S)
                S = S + [x]
                s.record(S, v)
            for _ in range(r):
                x, v = s.best_removal(S)
                S = [f for f in S if f != x]
                s.record(S, v)
            if len(S) == K:
                break
    else:
        K = l + 1 if k is None else k
        assert K - l >= 1
        S = list(range(n))
        s.record(S)
        while True:
            for _ in range(min(r, len(S) - (K - l))):
                x, v = s.best_removal(S)
                S = [f for f in S if f != x]
                s.record(S, v)
            for _ in range(l):
                x, v = s.best_addition(S)
                S = S + [x]
                s.record(S, v)
            if len(S) == K:
                break
    return s.result(None if k is None else S)


def search_bidirectional(X, y, n_features_to_select, crit):
    s = _Search(X, y, crit)
    n = s.n
    k = resolve_k(n_features_to_select, n)
    F: list = []
    B = list(range(n))
    s.record(B)
    if k == n:
        return s.result(B)
    while True:
        free = [x for x in B if x not in F]
        if not free:
            break
        best_x, best_v = s.best_addition(F, allowed=set(free))
        F = F + [best_x]
        s.record(F, best_v)
        if k is not None and len(F) == k:
            return s.result(F)
        free = [x for x in B if x not in F]
        if not free:
            break
        x, v = s.best_removal(B, allowed=set(free))
        B = [f for f in B if f != x]
        s.record(B, v)
        if k is not None and len(B) == k:
            return s.result(B)
    return s.result(None)


def search_beam(X, y, n_features_to_select, crit, width: int = 5):
    s = _Search(X, y, crit)
    n = s.n
    k = resolve_k(n_features_to_select, n)
    K = n if k is None else k

    def keep(candidates):
        """Repeatedly: among the candidates tied with the best left, the smallest sorted set."""
        scored = [(c, s.J(c)) for c in candidates]
        kept = []
        while scored and len(kept) < width:
            top = max(v for _, v in scored)
            i = min((i for i, (c, v) in enumerate(scored) if not beats(top, v)),
                    key=lambda i: tuple(sorted(scored[i][0])))
            kept.append(scored.pop(i))
        return kept

    level = keep([[x] for x in range(n)])
    s.record(level[0][0], level[0][1])
    for _ in range(2, K + 1):
        seen, candidates = set(), []
        for subset, _v in level:
            for x in range(n):
                if x in subset:
                    continue
                key = frozenset(subset + [x])
                if key not in seen:
                    seen.add(key)
                    candidates.append(subset + [x])
        level = keep(candidates)
        s.record(level[0][0], level[0][1])
    return s.result(None if k is None else level[0][0])


def search_exhaustive(X, y, n_features_to_select, crit):
    s = _Search(X, y, crit)
    n = s.n
    k = resolve_k(n_features_to_select, n)
    sizes = range(1, n + 1) if k is None else [k]
    chosen = None
    for size in sizes:
        combs = [list(c) for c in itertools.combinations(range(n), size)]
        i = first_of_max([s.J(c) for c in combs])
        best, best_v = combs[i], s.J(combs[i])
        s.record(best, best_v)
        chosen = best
    return s.result(None if k is None else chosen)


def n_evaluations_exhaustive(n: int, k) -> int:
    return (2 ** n - 1) if k is None else math.comb(n, k)


STRATEGIES = {
    "sfs": search_sfs,
    "sbs": search_sbs,
    "sffs": search_sffs,
    "sfbs": search_sfbs,
    "plus_l_minus_r": search_plus_l_minus_r,
    "bidirectional": search_bidirectional,
    "beam": search_beam,
    "exhaustive": search_exhaustive,
}
# regression (SPEC 3): the leave-one-out soft kNN estimate, its gradient, RGS, SKS and forward
# selection, written from SPEC 3.1-3.4 and the numerics fixed in fastfs.knn_regression_score's
# docstring: k = min(n_neighbors, m - 1) nearest other samples (ties to the lower index), kernel
# weights exp(-(d - d_min) / beta) normalised (uniform when all k distances are equal), default
# beta = half the mean squared distance to the k nearest. Distances from weighted_sq_distances.


def default_n_neighbors(m: int) -> int:
    """ceil(log2 m) by floating point, checked against the exact integer rule in the tests."""
    return max(1, int(np.ceil(np.log2(m))))


def loo_neighbours(D: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, distances) of the k nearest other samples per row, nearest first; a stable sort
    puts the lower index first among equal distances."""
    D = D.copy()
    np.fill_diagonal(D, np.inf)
    idx = np.argsort(D, axis=1, kind="stable")[:, :k]
    return idx, np.take_along_axis(D, idx, axis=1)


def regression_kernel(dist: np.ndarray, beta: float) -> np.ndarray:
    """Normalised kernel weights of one sample's sorted neighbour distances."""
    t = dist - dist[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(t == 0, 1.0, np.exp(-t / beta) if beta > 0 else 0.0)
    return e / e.sum()


def knn_regression(X, y, w=None, n_neighbors=None, beta=None):
    """(g_hat per sample, e, beta used, k) of SPEC 3.1 under weights w (None = ones)."""
    X = _as_float64(X)
    y = np.asarray(y, dtype=np.float64)
    m = X.shape[0]
    k = min(default_n_neighbors(m) if n_neighbors is None else n_neighbors, m - 1)
    idx, dist = loo_neighbours(weighted_sq_distances(X, w), k)
    if beta is None:
        beta = 0.5 * dist.mean()
    g = np.array([regression_kernel(dist[i], beta) @ y[idx[i]] for i in range(m)])
    return g, -0.5 * np.sum((y - g) ** 2), beta, k


def sample_error(X, y, w, s: int, neighbours, beta: float) -> float:
    """-(1/2)(y_s - g_hat(x_s))^2 at weights w with a fixed neighbour set (for finite
    differences; the kernel here is the unshifted one of SPEC 3.1, deliberately)."""
    X = _as_float64(X)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    d = ((X[neighbours] - X[s]) ** 2) @ (w * w)
    a = np.exp(-d / beta)
    g = a @ y[neighbours] / a.sum()
    return -0.5 * (y[s] - g) ** 2


def rgs_gradient(X, y, w, s: int, n_neighbors: int, beta: float):
    """(d e_s / d w by the formula of SPEC 3.2 as printed, neighbour indices) at weights w."""
    X = _as_float64(X)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    m = X.shape[0]
    k = min(n_neighbors, m - 1)
    D = weighted_sq_distances(X, w)
    idx, dist = loo_neighbours(D, k)
    nb, p = idx[s], regression_kernel(dist[s], beta)
    g = p @ y[nb]
    delta = (X[s] - X[nb]) ** 2                    # k x n
    mean_delta = p @ delta                          # sum_x'' p(x'') delta_i(x'')
    dg = -(2 * w / beta) * ((p * y[nb]) @ (delta - mean_delta))
    return (y[s] - g) * dg, nb


def rgs_path(X, y, order, n_neighbors: int, beta: float, eta) -> np.ndarray:
    """Raw RGS weights after visiting ``order`` from w = 1 with learning rates eta[t]."""
    w = np.ones(_as_float64(X).shape[1])
    for t, s in enumerate(order):
        grad, _ = rgs_gradient(X, y, w, int(s), n_neighbors, beta)
        w = w + eta[t] * grad
    return w


def sks(X, y, n_neighbors=None, beta=None) -> np.ndarray:
    """e of every feature alone (beta None: the default on that feature)."""
    X = _as_float64(X)
    return np.array([knn_regression(X[:, [j]], y, None, n_neighbors, beta)[1]
                     for j in range(X.shape[1])])


def subset_regression_score(X, y, subset, n_neighbors=None, beta=None) -> float:
    """e on the unweighted features of ``subset`` (indices; empty = all distances zero)."""
    X = _as_float64(X)
    w = np.zeros(X.shape[1])
    w[list(subset)] = 1.0
    return knn_regression(X, y, w, n_neighbors, beta)[1]


def forward_select_regression(X, y, n_select: int, n_neighbors=None, beta=None):
    """(selected, e after each addition): greedy forward selection, lower index on ties."""
    n = _as_float64(X).shape[1]
    selected, scores = [], []
    for _ in range(n_select):
        cand = [(subset_regression_score(X, y, selected + [f], n_neighbors, beta), f)
                for f in range(n) if f not in selected]
        best = max(c[0] for c in cand)
        f = min(c[1] for c in cand if c[0] == best)
        selected.append(f)
        scores.append(best)
    return selected, scores
# linear (SPEC 4.1 and the book's section 25.1.2), written from the SPEC: OMP with an SVD basis
# of X_I every round and explicit residual parts u_j = X_j - V V^T X_j; backward elimination by
# refitting every candidate subset with np.linalg.lstsq.


def _svd_basis(XI: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column span of XI (left singular vectors above round-off)."""
    if XI.shape[1] == 0:
        return np.zeros((XI.shape[0], 0))
    U, s, _ = np.linalg.svd(XI, full_matrices=False)
    keep = s > s[0] * np.finfo(np.float64).eps * max(XI.shape)
    return U[:, keep]


def omp_book(X, y, n_rounds: int, criterion: str = "exact", tol: float = 1e-10):
    """The book's OMP: returns (selected in order, lstsq coef on them, RSS after each round).

    criterion "exact": argmax <u_j, y>^2 / ||u_j||^2; "gradient": argmax |<u_j, y>| (equal to
    |<X_j, r>|); "coordinate": argmax <X_j, r>^2 / ||X_j||^2. Candidates: j not in I with
    ||u_j|| > tol * ||X_j||. Ties: the lowest index among the scores within a relative 1e-10
    of the best (so exact ties are not decided by rounding). Stops early when none is left.
    """
    X = _as_float64(X)
    y = np.asarray(y, dtype=np.float64)
    col_norm = np.linalg.norm(X, axis=0)
    selected: list[int] = []
    rss = []
    for _ in range(n_rounds):
        V = _svd_basis(X[:, selected])
        U = X - V @ (V.T @ X)
        r = y - V @ (V.T @ y)
        u_norm = np.linalg.norm(U, axis=0)
        ok = (u_norm > tol * col_norm) & (col_norm > 0)
        ok[selected] = False
        if not ok.any():
            break
        corr = U.T @ r
        if criterion == "exact":
            score = np.where(ok, corr**2 / np.where(ok, u_norm**2, 1.0), -np.inf)
        elif criterion == "gradient":
            score = np.where(ok, np.abs(corr), -np.inf)
        elif criterion == "coordinate":
            score = np.where(ok, corr**2 / np.where(ok, col_norm**2, 1.0), -np.inf)
        else:
            raise ValueError(criterion)
        best = score.max()
        with np.errstate(invalid="ignore"):  # best = inf: the window is NaN, inf ties itself
            tied = (score >= best) | (score >= best - 1e-10 * abs(best))
        selected.append(int(np.flatnonzero(tied)[0]))
        V = _svd_basis(X[:, selected])
        res = y - V @ (V.T @ y)
        rss.append(float(res @ res))
    coef = np.linalg.lstsq(X[:, selected], y, rcond=None)[0] if selected else np.empty(0)
    return np.array(selected, dtype=np.int64), coef, np.array(rss)


def lstsq_rss(X, y, subset) -> float:
    """Residual sum of squares of the least-squares fit of y on the columns in ``subset``."""
    X = _as_float64(X)
    y = np.asarray(y, dtype=np.float64)
    if len(subset) == 0:
        return float(y @ y)
    coef = np.linalg.lstsq(X[:, list(subset)], y, rcond=None)[0]
    res = y - X[:, list(subset)] @ coef
    return float(res @ res)


def backward_book(X, y, n_keep: int):
    """Backward elimination from all columns (full column rank assumed): remove the column
    whose removal gives the smallest refitted RSS, lowest index on ties. Returns (kept sorted,
    removal order, RSS of the start and after each removal)."""
    current = list(range(np.asarray(X).shape[1]))
    order, rss = [], [lstsq_rss(X, y, current)]
    while len(current) > n_keep:
        costs = [lstsq_rss(X, y, [c for c in current if c != j]) for j in current]
        j = current[int(np.argmin(costs))]
        current.remove(j)
        order.append(j)
        rss.append(min(costs))
    return np.array(sorted(current)), np.array(order), np.array(rss)


# --------------------------------------------------------------------------------------------
# SURF, SURF*, MultiSURF, MultiSURF* (SPEC 11; the formulas of fastfs.surf's docstring, which
# are skrebate's continuous scoring)


def relief_radius_contributions(X, y, rule: str) -> np.ndarray:
    """Per-sample contributions (n_samples x n_features, before the division by n_samples) of
    the radius rules, from the full distance matrix of min-max scaled features (Manhattan).

    Thresholds: "surf" / "surfstar": the mean of the whole distance matrix, zero diagonal
    included; near d < T, far d > T. "multisurf" / "multisurfstar": per sample, mean mu and
    population std sigma of its distances to the others; near d < mu - sigma/2, far
    d > mu + sigma/2. A sample is never in its own sets.
    near(S) = -(1/|H|) sum_H diff + sum_c (|M_c| (C-1) / M^2) sum_{M_c} diff (terms dropped
    when empty); "surfstar" adds -near(F); "multisurfstar" adds near(F) computed on 1 - diff.
    A constant feature contributes 0.
    """
    X = _as_float64(X)
    codes = _encode(y)
    m, n_features = X.shape
    n_classes = np.unique(codes).size
    lo = X.min(axis=0)
    rng = X.max(axis=0) - lo
    Z = np.where(rng > 0, (X - lo) / np.where(rng > 0, rng, 1.0), 0.0)
    D = np.array([np.abs(Z - Z[s]).sum(axis=1) for s in range(m)])
    T = D.mean()

    def near(s, members, diffs):
        out = np.zeros(n_features)
        hits = members[codes[members] == codes[s]]
        misses = members[codes[members] != codes[s]]
        if hits.size:
            out -= diffs[hits].sum(axis=0) / hits.size
        M = misses.size
        for c in np.unique(codes[misses]):
            mc = misses[codes[misses] == c]
            out += mc.size * (n_classes - 1) / M ** 2 * diffs[mc].sum(axis=0)
        return out

    contrib = np.zeros((m, n_features))
    for s in range(m):
        d = D[s]
        others = np.flatnonzero(np.arange(m) != s)
        if rule in ("surf", "surfstar"):
            lo_t = hi_t = T
        else:
            mu, sigma = d[others].mean(), d[others].std()
            lo_t, hi_t = mu - sigma / 2, mu + sigma / 2
        diffs = np.abs(Z - Z[s])
        near_set = others[d[others] < lo_t]
        far_set = others[d[others] > hi_t]
        contrib[s] = near(s, near_set, diffs)
        if rule == "surfstar":
            contrib[s] -= near(s, far_set, diffs)
        elif rule == "multisurfstar":
            contrib[s] += near(s, far_set, 1.0 - diffs)
    contrib[:, rng == 0] = 0.0
    return contrib


def stir_pairs(X, y, method: str, n_neighbors: int = 10):
    """STIR's ordered (sample, neighbour) pairs, every one enumerated: a list of (x, z, hit).

    Neighbourhoods under the Manhattan distance of min-max scaled features, self excluded:
    "relieff": the k nearest of x's class (hits) and the k nearest of every other class
    (misses), ties to the lower index; "multisurf": every other sample at distance
    d < mu - sigma/2 (mu, sigma: mean and population std of x's distances to the others),
    a hit when it has x's class, else a miss.
    """
    X = _as_float64(X)
    codes = _encode(y)
    m = X.shape[0]
    lo = X.min(axis=0)
    rng = X.max(axis=0) - lo
    Z = np.where(rng > 0, (X - lo) / np.where(rng > 0, rng, 1.0), 0.0)
    pairs = []
    for s in range(m):
        dist = {t: np.abs(Z[s] - Z[t]).sum() for t in range(m) if t != s}
        others = list(dist.values())
        for j in range(m):
            if j == s:
                continue
            if method == "multisurf":
                inside = dist[j] < np.mean(others) - np.std(others) / 2
            else:
                same = [t for t in dist if codes[t] == codes[j]]
                ranked = sorted(same, key=lambda t: (dist[t], t))
                inside = j in ranked[:n_neighbors]
            if inside:
                pairs.append((s, j, bool(codes[j] == codes[s])))
    return pairs, Z


def stir_pair_diffs(X, y, method: str, n_neighbors: int = 10):
    """STIR's two samples of every feature (see stir_pairs): (hit diffs, miss diffs), arrays
    of shape (n_pairs, n_features) of |x_i - z_i| / range_i."""
    pairs, Z = stir_pairs(X, y, method, n_neighbors)
    n = Z.shape[1]
    hit = [np.abs(Z[s] - Z[j]) for s, j, h in pairs if h]
    miss = [np.abs(Z[s] - Z[j]) for s, j, h in pairs if not h]
    return np.array(hit).reshape(-1, n), np.array(miss).reshape(-1, n)


def stir_test(X, y, method: str, n_neighbors: int = 10):
    """STIR's test of M - H (mean miss-pair diff minus mean hit-pair diff) per feature, with
    the variance of a weighted sum of dependent pair differences, written out: (t, p).

    M - H = sum over ordered pairs (x, z) of w(x, z) d(x, z), w = 1/n_M on a miss pair and
    -1/n_H on a hit pair. Hoeffding: d(x, z) = theta + g(x) + g(z) + r(x, z), so
    Var(M - H) = s1 sum_x a_x^2 + s2 sum_{x<z} b_xz^2 with b_xz = w(x, z) + w(z, x),
    a_x = sum_z b_xz, s1 = Var g and s2 = Var r, estimated over all pairs of distinct samples
    regardless of the labels; t against Student's t with m - 1 degrees of freedom."""
    from scipy import stats

    pairs, Z = stir_pairs(X, y, method, n_neighbors)
    m, n = Z.shape
    n_hit = sum(1 for p in pairs if p[2])
    n_miss = len(pairs) - n_hit
    b = np.zeros((m, m))
    for s, j, h in pairs:
        w = -1.0 / n_hit if h else 1.0 / n_miss
        b[s, j] += w
        b[j, s] += w
    a = b.sum(axis=1)
    B = sum(b[x, z] ** 2 for x in range(m) for z in range(x + 1, m))
    t = np.empty(n)
    for f in range(n):
        d = np.abs(Z[:, f][:, None] - Z[:, f][None, :])
        off = ~np.eye(m, dtype=bool)
        theta = d[off].mean()
        g = np.array([d[x][off[x]].mean() for x in range(m)]) - theta
        s1 = np.mean(g ** 2)
        s2 = max(np.mean(d[off] ** 2) - theta ** 2 - 2 * s1, 0.0)
        diff = sum(b[x, z] * d[x, z] for x in range(m) for z in range(x + 1, m))
        t[f] = diff / np.sqrt(sum(a[x] ** 2 * g[x] ** 2 for x in range(m)) + s2 * B)
    return t, stats.t.sf(t, m - 1)


def stir_pair_counts(Z, codes, method: str, k: int, block_cells: int = 1 << 22,
                     keep_bytes: int = 64 << 20):
    """STIR's pair graph counted from blocks of distance rows (SciPy cdist, Manhattan on the
    min-max scaled Z, never a sample to itself), the neighbourhoods of stir_pairs: per sample
    the hit pairs and the miss pairs it belongs to as the query or as the neighbour (cnt, shape
    (m, 2)), and the ordered pairs whose reverse is a pair too (mutual: hit, miss). Two passes
    (each sample's boundary, then the counts); memory O(block x m + m x classes)."""
    from scipy.spatial.distance import cdist

    Z = np.asarray(Z, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    m = Z.shape[0]
    C = int(codes.max()) + 1
    block = max(1, min(256, block_cells // m))

    def distance_rows(rows):
        D = cdist(Z[rows], Z, "cityblock")
        D[np.arange(rows.size), rows] = np.inf  # never its own neighbour
        return D

    # pass 1: each sample's neighbourhood boundary
    if method == "multisurf":
        thr = np.empty(m)
    else:
        kd = np.full((m, C), np.inf)  # (distance, index) of the k-th nearest of class c
        ki = np.full((m, C), m, dtype=np.int64)
        members = [np.flatnonzero(codes == c) for c in range(C)]
    kept = {} if 8 * m * m <= keep_bytes else None
    for b0 in range(0, m, block):
        rows = np.arange(b0, min(m, b0 + block))
        D = distance_rows(rows)
        if kept is not None:
            kept[b0] = D
        if method == "multisurf":
            Dm = np.where(np.isinf(D), np.nan, D)
            mu = np.nanmean(Dm, axis=1)
            thr[rows] = mu - np.sqrt(np.nanmean((Dm - mu[:, None]) ** 2, axis=1)) / 2.0
        else:
            for c in range(C):
                cols = members[c]
                others = cols.size - (codes[rows] == c)  # the class without the query
                full = others > k  # a class of at most k others: all of them (kd = inf)
                if not full.any():
                    continue
                sub = D[full][:, cols]
                # the k-th smallest distance, then among the columns at that distance (in
                # index order) the one that completes k: ties go to the lower index
                v = np.partition(sub, k - 1, axis=1)[:, k - 1]
                need = k - (sub < v[:, None]).sum(axis=1)
                at = np.cumsum(sub == v[:, None], axis=1) >= need[:, None]
                kd[rows[full], c] = v
                ki[rows[full], c] = cols[np.argmax(at, axis=1)]
    # pass 2: out- and in-counts of hit and miss pairs per sample, and the mutual pairs
    cnt = np.zeros((m, 2), dtype=np.int64)  # per sample: hit pairs, miss pairs (out + in)
    mutual = np.zeros(2, dtype=np.int64)
    j = np.arange(m)
    for b0 in range(0, m, block):
        rows = np.arange(b0, min(m, b0 + block))
        D = kept.pop(b0) if kept is not None else distance_rows(rows)
        if method == "multisurf":
            out = D < thr[rows, None]  # z in near(x)
            inn = D < thr[None, :]  # x in near(z)
        else:
            cd, ci = kd[rows][:, codes], ki[rows][:, codes]
            out = (D < cd) | ((D == cd) & (j[None, :] <= ci))
            out &= np.isfinite(D)
            cd, ci = kd[:, codes[rows]].T, ki[:, codes[rows]].T
            inn = (D < cd) | ((D == cd) & (rows[:, None] <= ci))
            inn &= np.isfinite(D)
        same = codes[rows, None] == codes[None, :]
        for h, mask in ((0, same), (1, ~same)):
            cnt[rows, h] = (out & mask).sum(axis=1) + (inn & mask).sum(axis=1)
            mutual[h] += (out & inn & mask).sum()
    return cnt, mutual


def stir_pair_graph_constants(cnt, mutual):
    """STIR's pair-graph constants (a, B) from stir_pair_counts' counts, for the ordered
    neighbour pairs (x, z) with weight w(x, z) = 1 / n_M on a miss pair, -1 / n_H on a hit
    pair: a_x = sum_z (w(x, z) + w(z, x)), and B = sum over unordered pairs of
    (w(x, z) + w(z, x))^2 = 1 / n_M + 1 / n_H + P_M / n_M^2 + P_H / n_H^2 (P: the mutual
    ordered pairs)."""
    cnt = np.asarray(cnt, dtype=np.float64)
    n_h, n_m = cnt[:, 0].sum() / 2.0, cnt[:, 1].sum() / 2.0
    a = cnt[:, 1] / n_m - cnt[:, 0] / n_h
    B = 1.0 / n_m + 1.0 / n_h + mutual[1] / n_m ** 2 + mutual[0] / n_h ** 2
    return a, B


def stir_hoeffding_components(X, a, block: int = 64):
    """Per feature of X min-max scaled to [0, 1] (a constant feature: all 0), from the
    Hoeffding decomposition d(x, z) = theta + g(x) + g(z) + r(x, z) of d = |x - z| over all
    pairs of distinct samples (theta their mean, g(x) = mean_z d(x, z) - theta): v1 = sum_x
    a_x^2 g(x)^2 (a: the sample weights of stir_pair_graph_constants) and s2 = Var d - 2 Var g
    (clipped at 0), the variance of the remainder r. O(m log m) per feature, by sorting
    (stir_test writes the same out over every pair)."""
    V = np.asarray(X, dtype=np.float64)
    lo = V.min(axis=0)
    rng = V.max(axis=0) - lo
    Z = np.where(rng > 0, (V - lo) / np.where(rng > 0, rng, 1.0), 0.0)
    a2 = np.asarray(a, dtype=np.float64) ** 2
    m, n = Z.shape
    v1 = np.empty(n)
    s2 = np.empty(n)
    r = np.arange(m, dtype=np.float64)
    for f0 in range(0, n, block):
        order = np.argsort(Z[:, f0:f0 + block], axis=0, kind="stable")
        S = np.take_along_axis(Z[:, f0:f0 + block], order, axis=0)
        cs = np.cumsum(S, axis=0)
        # sum_z |s_r - z| = s_r r - (cs_r - s_r) + (cs_last - cs_r) - s_r (m - 1 - r)
        tot = S * r[:, None] - (cs - S) + (cs[-1] - cs) - S * (m - 1 - r)[:, None]
        g = tot / (m - 1)
        theta = g.mean(axis=0)
        g -= theta
        v1[f0:f0 + block] = (a2[order] * g ** 2).sum(axis=0)
        s1 = (g ** 2).mean(axis=0)
        # mean of d^2 over ordered pairs x != z: 2 m / (m - 1) times the population variance
        var_d = 2.0 * m / (m - 1) * S.var(axis=0) - theta ** 2
        s2[f0:f0 + block] = np.maximum(var_d - 2.0 * s1, 0.0)
    return v1, s2


# --------------------------------------------------------------------------------------------
# generated features of binarised images (Navot's thesis, section 5.3.2)


def generated_feature_values(images, inputs, negated, shifts):
    """Plain loops: for every feature, the AND of its (possibly negated) input pixels at every
    shift (dy, dx) with |dy|, |dx| <= shift that keeps all inputs inside the image, OR-ed over
    those shifts. images: bool (n, h, w); inputs: per feature a list of (row, col)."""
    images = np.asarray(images, dtype=bool)
    n, h, w = images.shape
    out = np.zeros((n, len(inputs)), dtype=bool)
    for f, (pix, neg, a) in enumerate(zip(inputs, negated, shifts)):
        for dy in range(-a, a + 1):
            for dx in range(-a, a + 1):
                if not all(0 <= r + dy < h and 0 <= c + dx < w for r, c in pix):
                    continue
                v = np.ones(n, dtype=bool)
                for (r, c), ng in zip(pix, neg):
                    v &= images[:, r + dy, c + dx] != bool(ng)
                out[:, f] |= v
    return out


def generated_meta_features(inputs, negated, shifts):
    """numInputs, percentPos (rounded), shiftInvLen, scatter (mean distance to the inputs'
    centre of gravity) of each feature."""
    rows = []
    for pix, neg, a in zip(inputs, negated, shifts):
        p = np.asarray(pix, dtype=float)
        cog = p.mean(axis=0)
        scatter = float(np.mean([np.hypot(*(q - cog)) for q in p]))
        pos = sum(1 for ng in neg if not ng)
        rows.append([len(pix), round(100.0 * pos / len(pix)), a, scatter])
    return np.array(rows, dtype=float)


# --- Choosing the number of features (ORDERED-FS, STANDARD-WRAP, ORDERED-FS2) -------------

def logistic_newton(A: np.ndarray, y: np.ndarray, C: float, iters: int = 60) -> np.ndarray:
    """Binary L2 logistic regression (intercept not penalised) by plain Newton steps with step
    halving; returns [w, b]."""
    m, d = A.shape
    A1 = np.column_stack([A, np.ones(m)])
    theta = np.zeros(d + 1)
    pen = np.r_[np.full(d, 1.0 / C), 0.0]

    def f(t):
        z = A1 @ t
        return np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(pen * t * t)

    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(A1 @ theta)))
        g = A1.T @ (p - y) + pen * theta
        H = (A1 * (p * (1 - p))[:, None]).T @ A1 + np.diag(pen)
        step = np.linalg.solve(H, g)
        t = 1.0
        while f(theta - t * step) > f(theta) + 1e-12 * abs(f(theta)) and t > 1e-8:
            t /= 2
        theta = theta - t * step
        if np.max(np.abs(t * step)) < 1e-12:
            break
    return theta


def logistic_error_J(X, y, S, fit, score, C):
    """-(errors + l / (1 + l)) / rows of the learner on columns S fitted on `fit`, scored on
    `score` (l: mean log-loss there); also returns the error rate."""
    S = list(S)
    theta = logistic_newton(X[np.ix_(fit, S)], y[fit], C)
    z = X[np.ix_(score, S)] @ theta[:-1] + theta[-1]
    ys = y[score]
    errors = np.sum((z > 0).astype(int) != ys)
    l = np.mean(np.logaddexp(0.0, z) - ys * z)
    return -(errors + l / (1 + l)) / score.size, errors / score.size


def _tied(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-10 * max(abs(a), abs(b))


def wrapper_beam(X, y, parts, rank_part, width, max_features, C):
    """The beam of Ng's figure 1 (two classes): per level, every beam subset plus one feature,
    fitted on parts[0] and ranked by the error J on parts[rank_part] (ties: the smaller sorted
    subset); h_r the best of level r. Returns [(), h_1, ...] and the J's of h_1, ..."""
    n = X.shape[1]
    beam, per_size, Js = [()], [()], []
    for _ in range(max_features):
        cands = sorted({tuple(sorted(b + (x,))) for b in beam for x in range(n) if x not in b})
        scored = [(logistic_error_J(X, y, c, parts[0], parts[rank_part], C)[0], c)
                  for c in cands]
        level = []
        while scored and len(level) < width:
            top = max(s for s, _ in scored)
            pick = min((c for s, c in scored if _tied(s, top)))
            level.append(pick)
            scored = [(s, c) for s, c in scored if c != pick]
        beam = level
        per_size.append(level[0])
        Js.append(logistic_error_J(X, y, level[0], parts[0], parts[rank_part], C)[0])
    return per_size, Js


def standard_wrap_choice(X, y, parts, per_size, C):
    """STANDARD-WRAP's choice: the h_r with the best hold-out J (ties: the smaller r)."""
    J = [logistic_error_J(X, y, S, parts[0], parts[1], C)[0] if S else
         _intercept_J(y, parts[0], parts[1]) for S in per_size]
    best = 0
    for r in range(1, len(J)):
        if J[r] > J[best] and not _tied(J[r], J[best]):
            best = r
    return best


def _intercept_J(y, fit, score):
    p = np.clip(np.mean(y[fit]), 1e-300, 1 - 1e-16)
    b = np.log(p / (1 - p))
    ys = y[score]
    errors = np.sum(int(b > 0) != ys)
    l = np.mean(np.logaddexp(0.0, b) - ys * b)
    return -(errors + l / (1 + l)) / score.size


def error_rate(X, y, S, fit, rows, C):
    """0/1 error rate on `rows` of the learner on S fitted on `fit` (S empty: intercept)."""
    if not S:
        b = np.log(np.mean(y[fit]) / (1 - np.mean(y[fit])))
        return np.mean(int(b > 0) != y[rows])
    return logistic_error_J(X, y, S, fit, rows, C)[1]
