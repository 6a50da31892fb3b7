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


def relieff(X, y, n_neighbors: int = 10, skrebate_hit_count: bool = False) -> np.ndarray:
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
    for s in range(m):
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
        w += contrib / m
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
    ||u_j|| > tol * ||X_j||. Ties: lowest index (np.argmax). Stops early when none is left.
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
        selected.append(int(np.argmax(score)))
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
