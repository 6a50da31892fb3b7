"""STIR: p-values for Relief-family scores (Le, Urbanowicz, Moore and McKinney 2019).

STIR treats the differences of a feature over the (sample, neighbour) pairs of a ReliefF or
MultiSURF neighbourhood as two samples, the hit pairs and the miss pairs, and tests whether the
miss differences are larger on average (a one-sided test per feature whose variance accounts
for the pairs sharing samples, see :func:`stir`). The sums of the differences are accumulated
in C++ during the same pass as the weights; nothing m x m is stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import fastfs._core as _core
from ._progress import run_pass
from ._results import StirResult, check_fdr, passing_fdr, ranking_by_weight, warn_if_equal
from ._relief_data import _Y_THRESHOLD, ReliefData, as_continuous, prepare_relief
from ._validation import check_option, relieff_neighbours, resolve_n_jobs

STIR_METHODS = ("multisurf", "relieff")


def stir(X: Any, y: Any, *, method: str = "multisurf", n_neighbors: int | float = 10,
         fdr: float = 0.05, n_jobs: int | None = None, verbose: bool = False,
         discrete_threshold: Any = None, discrete_features: Any = None,
         target: str = "auto") -> StirResult:
    """STIR (STatistical Inference Relief): ReliefF or MultiSURF scores with a p-value per
    feature, and the features significant at a false discovery rate.

    The neighbourhoods are those of :func:`fastfs.relieff` (``method="relieff"``: the k nearest
    hits and the k nearest misses of every other class) or :func:`fastfs.multisurf`
    (``method="multisurf"``: the samples closer than mu - sigma / 2), under the Manhattan
    distance of min-max scaled features; a sample is never its own neighbour. Every ordered
    pair (x, z) of a sample x and a neighbour z is a hit pair (same class) or a miss pair. For
    feature i, with d(x, z) = |x_i - z_i| / range_i, STIR (Le et al. 2019, section 2) compares
    the mean H_i of d over the n_H hit pairs with its mean M_i over the n_M miss pairs; with
    several miss classes, the misses of all classes form one sample. ``t_statistics`` are

        t_i = (M_i - H_i) / sqrt(Var0(M_i - H_i)),   pvalues = P(T >= t_i),

    one-sided (a relevant feature differs more across classes than within one), T Student's
    t with m - 1 degrees of freedom.

    Le et al. take the pairs as independent observations (a pooled-variance t-test with n_H
    and n_M as sample sizes, their "pseudo t-test"). They are not: a sample enters every pair
    of its neighbourhood and of the neighbourhoods it belongs to, and the neighbour relation
    is nearly symmetric (z near x and x near z: the same difference counted twice). With
    MultiSURF, whose near sets hold about a third of the samples, that t-test put 8 to 18 %
    of the p-values of pure-noise features below 0.05 on 200 to 1000 samples. Here the
    variance is that of a weighted sum of dependent pair differences: M - H = sum over
    ordered pairs of w(x, z) d(x, z), w = 1/n_M on a miss pair and -1/n_H on a hit pair, and
    by Hoeffding's decomposition d(x, z) = theta + g(x) + g(z) + r(x, z) (g(x) the mean
    difference of x to all samples, minus theta),

        Var0(M - H) = sum_x a_x^2 g(x)^2 + Var(r) sum_{x<z} b_xz^2,
        b_xz = w(x, z) + w(z, x),   a_x = sum_z b_xz,

    where g and Var(r) are estimated from all pairs of samples regardless of the labels (the
    variance under the null hypothesis, as in a score test; O(m log m) per feature, by
    sorting) and the pair graph (a, b) is counted exactly in the same neighbour pass as the
    scores (memory O(m x classes)). On pure noise (200 and 1000 samples, 500 features, two
    and three classes, several seeds) 4.2 to 5.9 % of the p-values fall below 0.05 for
    either method. The far right tail of
    MultiSURF's statistic is heavier than Student's t (likely because its near sets are dense
    and it then behaves like an energy statistic, whose null law is a weighted sum of
    chi-squares; its large values go with chance class-mean differences): on 1000 x 1000
    noise 0.22 % of the p-values fell below 0.001 and 0.1 % below 1e-4, and
    Benjamini-Hochberg at 5 % kept one to three noise features in half of the runs.
    ReliefF's sparse k-neighbour graph keeps the far tail (0.075 % below 0.001, none below
    1e-4, no discovery). For false discovery control on many features, prefer
    ``method="relieff"``, or check a MultiSURF selection by rerunning on permuted labels.

    A feature whose differences all vanish (a constant feature) gets t = 0 and p-value 1.

    STIR's test is defined here for continuous features and class labels, the data on which
    ReliefF and MultiSURF score every feature by its scaled difference. By default
    (``discrete_threshold=None``) every feature counts as continuous, whatever its number of
    distinct values: a 0/1 column is scored by its difference, 0 or 1, and a 0/1/2 column by
    0, 1/2 or 1. The weights are then those of ``relieff(X, y, discrete_threshold=None)`` (or
    ``multisurf``). X and y are otherwise read as :func:`fastfs.relieff` reads them: with a
    ``discrete_threshold`` (relieff's default is 10) or ``discrete_features``, the features
    that these make discrete are refused with an error that names them (constant features
    are accepted: they differ in no pair), as are missing values and a continuous target.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype (at least two classes).
    method : {"multisurf", "relieff"}
    n_neighbors : int or float
        k for ``method="relieff"`` (as in :func:`fastfs.relieff`); ignored by MultiSURF.
    fdr : float in (0, 1)
        False discovery rate of the Benjamini-Hochberg selection in ``selected``.
    n_jobs : int, optional
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr.
    discrete_threshold, discrete_features, target
        As in :func:`fastfs.relieff`: which features count as discrete (refused here; by
        default none) and how y is read (a continuous target is refused here; ``target="classes"`` reads a numeric
        y with many distinct values as labels).

    Returns
    -------
    StirResult
        ``weights`` the scores of ``method`` (equal to :func:`fastfs.relieff` or
        :func:`fastfs.multisurf` with ``discrete_threshold=None``), ``ranking`` by
        weight, ``t_statistics``, ``pvalues``,
        ``qvalues`` (Benjamini-Hochberg adjusted p-values), ``selected`` (the features with
        q-value <= ``fdr``, smallest p-value first; ``significant(fdr)`` for another rate),
        ``hit_means`` and ``miss_means`` (H_i and M_i; STIR's weight is their difference,
        equal to ReliefF's when every class has more than k samples), ``n_hit_pairs``,
        ``n_miss_pairs``.

    References
    ----------
    Le, Urbanowicz, Moore and McKinney (2019), STatistical Inference Relief (STIR) feature
    selection. Bioinformatics 35(8), 1358-1365 (section 2: the pseudo t-test).
    Hoeffding (1948), A class of statistics with asymptotically normal distribution. Annals of
    Mathematical Statistics 19(3), 293-325 (the decomposition of a pair statistic).
    """
    method = check_option(method, "method", STIR_METHODS)
    fdr = check_fdr(fdr)
    threads = resolve_n_jobs(n_jobs)
    data = _stir_data(X, y, discrete_threshold, discrete_features, target)
    cx, values, codes = data.cx, data.values, data.codes
    k = relieff_neighbours(n_neighbors, cx.values.shape[0]) if method == "relieff" else 1
    out = run_pass("stir", None, verbose, lambda hook: _core.relief_stir(
        values, codes, method, k, threads, hook))
    n_hit, n_miss = float(out.n_hit), float(out.n_miss)
    if n_hit < 1 or n_miss < 1 or n_hit + n_miss < 3:
        raise ValueError(
            f"y: the {method} neighbourhoods hold {int(n_hit)} hit pairs and {int(n_miss)} miss "
            "pairs; STIR's t-test needs at least one of each and three in all (use more "
            "samples, or method='relieff' with a larger n_neighbors)")
    a, B = pair_graph_weights(out.hit_pairs, out.miss_pairs, out.mutual_hit, out.mutual_miss)
    v1, s2 = _core.stir_null_components(values, a, threads)
    t, h_mean, m_mean = stir_t_statistics(out.hit_sum, out.miss_sum, n_hit, n_miss,
                                          v1 + s2 * B)
    from scipy import stats

    pvalues = stats.t.sf(t, values.shape[0] - 1.0)
    # no difference in any pair (a constant feature): no evidence at all
    pvalues[(out.hit_sq == 0) & (out.miss_sq == 0)] = 1.0
    qvalues = benjamini_hochberg(pvalues)
    weights = out.weights
    warn_if_equal(weights, "stir", "weight", "neighbours")
    return StirResult(weights=weights, ranking=ranking_by_weight(weights), score=float("nan"),
                      feature_names=cx.feature_names, t_statistics=t, pvalues=pvalues,
                      qvalues=qvalues, fdr=fdr, selected=passing_fdr(pvalues, qvalues, fdr),
                      hit_means=h_mean, miss_means=m_mean, n_hit_pairs=int(n_hit),
                      n_miss_pairs=int(n_miss), method=method)


def _stir_data(X: Any, y: Any, discrete_threshold: Any, discrete_features: Any,
               target: str) -> ReliefData:
    """X and y as the continuous Relief path reads them, after refusing what STIR's test does
    not cover (a continuous target, missing values, discrete features); constant features
    pass (they differ in no pair, whichever rule scores them)."""
    data = prepare_relief(X, y, discrete_threshold=discrete_threshold,
                          discrete_features=discrete_features, target=target)
    if data.fast:
        return data
    if len(data.y):
        limit = _Y_THRESHOLD if discrete_threshold is None else discrete_threshold
        raise ValueError(f"y: read as a continuous target (numeric, more than {limit} distinct "
                         "values: skrebate's rule); STIR tests the differences of hits against "
                         "misses of class labels: pass target='classes' to read y as labels")
    values = data.cx.values
    if np.isnan(values).any():
        raise ValueError("X: contains missing values (NaN); STIR needs complete data (impute "
                         "them, or leave out the samples or features that have them)")
    flags = np.asarray(data.discrete, dtype=bool)
    flags &= values.max(axis=0) > values.min(axis=0)
    if flags.any():
        shown = ", ".join(str(int(j)) for j in np.flatnonzero(flags)[:10])
        more = " ..." if flags.sum() > 10 else ""
        raise ValueError(
            f"X: features {shown}{more} count as discrete (at most discrete_threshold distinct "
            "values, or listed in discrete_features), which fastfs.relieff and fastfs.multisurf "
            "score by their rules for discrete features; STIR's test is defined here for "
            "continuous features: pass discrete_threshold=None to score every feature as "
            "continuous, or leave the discrete ones out")
    return as_continuous(data)


def stir_t_statistics(hit_sum, miss_sum, n_hit: float, n_miss: float, variance):
    """(t, hit means, miss means) of STIR's test (see :func:`stir`): t = (M - H) /
    sqrt(variance), the per-feature variance of M - H under the null hypothesis."""
    h_mean = np.asarray(hit_sum, dtype=np.float64) / n_hit
    m_mean = np.asarray(miss_sum, dtype=np.float64) / n_miss
    se = np.sqrt(np.asarray(variance, dtype=np.float64))
    diff = m_mean - h_mean
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.sign(diff) * np.inf)
    t = np.where((se == 0) & (diff == 0), 0.0, t)
    return t, h_mean, m_mean


def pair_graph_weights(hit_pairs, miss_pairs, mutual_hit: int,
                       mutual_miss: int) -> tuple[np.ndarray, float]:
    """STIR's pair-graph constants (a, B) of the ordered neighbour pairs (x, z) with weight
    w(x, z) = 1 / n_M on a miss pair, -1 / n_H on a hit pair, from the counts of the neighbour
    pass: per sample the hit and miss pairs it belongs to (as the query or as the neighbour)
    and the ordered pairs whose reverse is a pair too (P_H, P_M). The sample weights are
    a_x = sum_z (w(x, z) + w(z, x)) = miss_x / n_M - hit_x / n_H, and B = sum over unordered
    pairs of (w(x, z) + w(z, x))^2 = 1 / n_M + 1 / n_H + P_M / n_M^2 + P_H / n_H^2."""
    hit = np.asarray(hit_pairs, dtype=np.float64)
    miss = np.asarray(miss_pairs, dtype=np.float64)
    n_h, n_m = hit.sum() / 2.0, miss.sum() / 2.0
    a = miss / n_m - hit / n_h
    B = 1.0 / n_m + 1.0 / n_h + mutual_miss / n_m ** 2 + mutual_hit / n_h ** 2
    return a, B


def benjamini_hochberg(pvalues: Any) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values): q_(i) = min_{j >= i} p_(j) n / j over
    the p-values sorted ascending, capped at 1. Keeping the features with q <= alpha controls
    the false discovery rate at alpha (for independent or positively dependent tests)."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues: expected a 1-D array, got shape {p.shape}")
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise ValueError("pvalues: expected values in [0, 1] without NaN")
    n = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * n / np.arange(1, n + 1)
    q = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    out = np.empty(n)
    out[order] = q
    return out


