"""Univariate filters and statistical tests: one score per feature.

The C++ core makes one pass over X (parallel over blocks of features) and returns sufficient
statistics: per-class means and sums of squared deviations, moments against a real target,
rank sums, or contingency-table statistics. This module turns them into the statistic and,
where there is a test, its p-value from ``scipy.stats``. One-sample z and t tests with
confidence intervals (``one_sample_z``, ``one_sample_t``) and screening of features by p-value
(``screen``) complete them. Every function returns a
:class:`~fastfs.FilterResult`, which is also the tuple ``(scores, pvalues)`` that
scikit-learn's ``SelectKBest(score_func=...)`` expects.

Conventions shared by the functions here:

* Two-class statistics (``f_score``, ``t_test``, ``z_test``, ``s2n``, ``auc``) need exactly two
  classes. The *positive* class is the larger label (``np.unique(y)[1]``, scikit-learn's rule
  for binary problems), and signed statistics are positive when the feature is larger in the
  positive class: mean difference = mean(positive) - mean(negative), AUC = P(x_pos > x_neg).
* Constant features (one value in every sample) carry no information: score 0 (AUC 0.5,
  mutual information 0) and p-value 1, the rule scikit-learn applies in ``r_regression`` and
  ``f_regression`` (``force_finite=True``). A feature that is constant within each class but
  differs between classes separates them perfectly: F, t, f_score, s2n and fisher_ratio are
  then +-inf with p-value 0.
* The moment statistics do not depend on the units of a feature: a column whose values are
  so large that their squares overflow, or so small that they fall into the subnormal range
  (beyond about 1e120 or below 1e-120), is summed again after an exact power-of-two rescaling.
  Class means are compared through their deviations from the column's first value, so data
  with a large common offset (1e12 + 0.2 ... 0.6) keep their digits.
* Scores that are all equal (every column constant, say) rank nothing: ``EqualScoresWarning``.
* The statistics of classes (``chi2``, ``mutual_info``, ``fisher_ratio``) warn with a
  ``DiscretenessWarning`` when y has about one sample per distinct value (a real target).
* Sparse X (SciPy CSR/CSC) is accepted by every moment-based statistic (pearson, f_score,
  anova_f, t_test, z_test, s2n, fisher_ratio), by ``chi2`` and by ``mutual_info`` with discrete
  features; it is never densified. ``auc`` needs dense X (its ranks would densify).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import fastfs._core as _core
from ._results import FilterResult, OneSampleResult, SubsetResult, warn_if_equal
from ._scale import exact_rescale, times_power_of_two
from ._validation import (
    CheckedLabels,
    CheckedX,
    _is_sparse,
    check_int,
    check_option,
    check_real,
    check_vector,
    check_X,
    check_y_classes,
    check_y_real,
    require_class_sizes,
    require_finite,
    resolve_n_jobs,
    user_stacklevel,
)

BINNINGS = ("quantile", "uniform", "median")
_Y_REMEDY = "for a real target use pearson, or bin y into classes first"
CHI2_KINDS = ("contingency", "counts")


# ------------------------------------------------------------------------------------------
# input and sufficient statistics


def _labelled(X: Any, y: Any, what: str, *, sparse: bool | str, n_classes: int | None = None,
              min_size: int = 1, check_finite: bool = True) -> tuple[CheckedX, CheckedLabels]:
    cx = check_X(X, accept_sparse=sparse, check_finite=check_finite)
    labels = check_y_classes(y, cx.values.shape[0])
    require_class_sizes(labels, what, n_classes=n_classes, min_size=min_size)
    return cx, labels


class DiscretenessWarning(UserWarning):
    """A statistic of discrete categories got values that look continuous: nearly one sample
    per class (y) or per distinct value (X), where every feature gets the same or an infinite
    score."""


def _nearly_unique(count: Any, n: int) -> Any:
    """More categories than half the samples (and more than 10): about one sample each."""
    return np.asarray(count) > max(n / 2, 10)


def _warn_continuous_y(labels: CheckedLabels, what: str, remedy: str) -> None:
    n, k = labels.codes.shape[0], labels.classes.shape[0]
    if _nearly_unique(k, n):
        warnings.warn(
            f"y: {what} treats every distinct value of y as a class, and y has {k} distinct "
            f"values for {n} samples (continuous?), so every feature gets about the same "
            f"score; {remedy}", DiscretenessWarning, stacklevel=3)


@dataclass(frozen=True)
class _Moments:
    counts: np.ndarray    # (k,) samples per class, float64
    mean: np.ndarray      # (k, d) class means
    m2: np.ndarray        # (k, d) sums of squared deviations from the class mean
    constant: np.ndarray  # (d,) True where the feature has one value in every sample
    centred: np.ndarray   # (k, d) class means minus a per-column reference value
    # (d,) binary exponents: column j's mean, m2 and centred are those of X[:, j] * 2**-scale[j]
    scale: np.ndarray


def _overflow(values: Any) -> None:
    """The moments came out non-finite: NaN / inf in X, or squares beyond float64."""
    require_finite(values)
    raise ValueError("X: values too large: their squares overflow float64; rescale the features")


# Columns whose magnitude (largest |class mean| or root of M2) lies outside
# [2**-_EXTREME, 2**_EXTREME] are summed again after an exact power-of-two rescaling: beyond it
# the squares overflow or lose their digits in the subnormal range.
_EXTREME = 400


def _extreme_columns(mean: np.ndarray, m2: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        mag = np.maximum(np.abs(mean).max(axis=0), np.sqrt(m2.max(axis=0)))
    tiny, huge = np.ldexp(1.0, -_EXTREME), np.ldexp(1.0, _EXTREME)
    return ~np.isfinite(mag) | ((mag != 0) & ((mag < tiny) | (mag > huge)))


def _column_exponents(sub: Any) -> np.ndarray:
    """Binary exponent of every column's max |x| (0 for an all-zero column)."""
    if _is_sparse(sub):
        top = np.maximum(abs(sub.max(axis=0).toarray().ravel()),
                         abs(sub.min(axis=0).toarray().ravel()))
    else:
        top = np.maximum(sub.max(axis=0), -sub.min(axis=0))
    return np.frexp(top.astype(np.float64))[1].astype(np.int64)


def _rescaled_columns(X: Any, cols: np.ndarray) -> tuple[Any, np.ndarray]:
    """X[:, cols] with column j multiplied by 2**-e_j (exact), and the e_j."""
    if _is_sparse(X):
        sub = X.tocsc()[:, cols].tocsc()
        e = _column_exponents(sub)
        sub.data = np.ldexp(sub.data, -np.repeat(e, np.diff(sub.indptr)).astype(np.int32))
        return sub, e
    sub = np.ascontiguousarray(X[:, cols])
    if not np.isfinite(sub).all():
        _overflow(sub)
    e = _column_exponents(sub)
    return np.ascontiguousarray(np.ldexp(sub, -e[None, :].astype(np.int32))), e


def _class_moments(cx: CheckedX, labels: CheckedLabels, threads: int, *,
                   rescale: bool = True) -> _Moments:
    """Per-class moments. With ``rescale``, columns of extreme magnitude (see _EXTREME) are
    summed on X[:, j] * 2**-e_j and reported in those units (``scale``): every statistic built
    on them here is a ratio that does not depend on the column's scale."""
    X, k = cx.values, labels.classes.shape[0]
    m = _moments_of(X, labels.codes, k, threads)
    if not rescale:
        if not (np.isfinite(m.mean).all() and np.isfinite(m.m2).all()):
            _overflow(X)
        return m
    cols = np.flatnonzero(_extreme_columns(m.mean, m.m2))
    if cols.size == 0:
        return m
    sub, e = _rescaled_columns(X, cols)
    r = _moments_of(sub, labels.codes, k, threads)
    if not (np.isfinite(r.mean).all() and np.isfinite(r.m2).all()):
        _overflow(X)
    mean, m2, centred, scale = m.mean.copy(), m.m2.copy(), m.centred.copy(), m.scale.copy()
    mean[:, cols], m2[:, cols], centred[:, cols], scale[cols] = r.mean, r.m2, r.centred, e
    constant = m.constant.copy()
    constant[cols] = r.constant
    return _Moments(m.counts, mean, m2, constant, centred, scale)


def _moments_of(X: Any, codes: np.ndarray, k: int, threads: int) -> _Moments:
    if _is_sparse(X):
        return _sparse_class_moments(X, codes, k, threads)
    out = _core.class_moments(X, codes, k, threads)
    mean, m2 = out.mean, out.m2
    # check_X skipped the NaN scan: a NaN or inf anywhere in a column makes its sums non-finite.
    if not (np.isfinite(mean).all() and np.isfinite(m2).all()):
        require_finite(X)
    # Exact: the core sums x - (first value of the class), so a constant column gives exact
    # zeros and equal means.
    constant = (m2 == 0).all(axis=0) & (mean == mean[0]).all(axis=0)
    return _Moments(out.counts.astype(np.float64), mean, m2, constant, out.centred,
                    np.zeros(X.shape[1], dtype=np.int64))


def _sparse_moments(X: Any, codes: np.ndarray, k: int, w: np.ndarray | None,
                    threads: int, *, check: bool = True) -> Any:
    """Per-class sums, sums and sums of squares of the values minus the class's first stored
    value, weighted sums and column min / max of a CSR or CSC X in one C++ pass (CSC in
    parallel over columns, CSR row by row)."""
    out = _core.sparse_moments(X.shape[0], X.shape[1], X.format == "csc", X.indptr, X.indices,
                               X.data, codes, k, np.empty(0) if w is None else w, threads)
    if check and not (np.isfinite(out.dsumsq).all() and np.isfinite(out.dweighted).all()):
        _overflow(X)
    return out


def _sparse_class_moments(X: Any, codes: np.ndarray, k: int, threads: int) -> _Moments:
    out = _sparse_moments(X, codes, k, None, threads, check=False)
    if not np.isfinite(out.sum).all():
        require_finite(X)
    counts = out.counts.astype(np.float64)
    # Sums of x - shift (the class's first stored value), as the dense moments centre: a mean
    # far from zero against the spread keeps its digits.
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        delta = np.where(counts[:, None] > 0, out.dsum / counts[:, None], 0.0)
        mean = out.shift + delta
        m2 = np.maximum(out.dsumsq - out.dsum * delta, 0.0)
    # A constant column may still get M2 of the order of rounding from the sums: fix it up so
    # the constant-feature rule applies as it does for dense X.
    constant = out.min == out.max
    m2[:, constant] = 0.0
    mean[:, constant] = out.max[constant]
    # The class means against one reference per column (the first class's shift): each class
    # has its own shift, so the difference of two shifts (two data values, an exact or nearly
    # exact subtraction) plus the small delta keeps the digits a mean far from zero loses.
    with np.errstate(invalid="ignore", over="ignore"):
        centred = (out.shift - out.shift[:1]) + delta
    centred[:, constant] = 0.0
    return _Moments(counts, mean, m2, constant, centred, np.zeros(X.shape[1], dtype=np.int64))


# ------------------------------------------------------------------------------------------
# arithmetic shared by the statistics


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with den >= 0; where den == 0: 0 if num == 0, else +-inf by the sign of num."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64),
                                   np.asarray(den, dtype=np.float64))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    infinite = (den <= 0) & (num != 0)
    out[infinite] = np.copysign(np.inf, num[infinite])
    return out


def _two_sided(dist, statistic: np.ndarray, *args) -> np.ndarray:
    """2 * sf(|statistic|), the two-sided p-value of a symmetric null distribution.

    An infinite statistic (perfect separation) gets 0 and a zero one 1 without asking the
    distribution, whose parameters (degrees of freedom) may be undefined there.
    """
    p = np.where(statistic == 0, 1.0, 0.0)
    ok = np.isfinite(statistic) & (statistic != 0)
    if ok.any():
        params = [a[ok] if np.ndim(a) else a for a in args]
        p[ok] = np.minimum(1.0, 2.0 * dist.sf(np.abs(statistic[ok]), *params))
    return p


def _stats():
    # scipy.stats takes a few hundred ms to import: only pay for it when a p-value is asked.
    from scipy import stats

    return stats


def _result(scores: np.ndarray, pvalues: np.ndarray | None, cx: CheckedX,
            what: str) -> FilterResult:
    warn_if_equal(scores, what, "score", "correlation" if what == "pearson" else "classes",
                  stacklevel=4)
    return FilterResult(scores, pvalues, cx.feature_names)



# ------------------------------------------------------------------------------------------
# moment-based statistics


def pearson(X: Any, y: Any, *, pvalues: bool = True, n_jobs: int | None = None) -> FilterResult:
    """Pearson correlation r of every feature with a real target y.

    r_j = sum (x_ij - mean_j)(y_i - mean_y) / sqrt(sum (x_ij - mean_j)^2 sum (y_i - mean_y)^2),
    the same as scikit-learn's ``r_regression``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        At least 3 samples.
    y : array-like of shape (n_samples,)
        Real numbers (0/1 labels work too); must not be constant.
    pvalues : bool
        Compute the p-values (default). With few samples per feature they cost about as much
        as the pass over X; pass False to rank by r alone (``pvalues`` is then None), as
        ``r_regression`` does.
    n_jobs : int, optional
        Threads (scikit-learn rules).

    Returns
    -------
    FilterResult
        ``scores``: r in [-1, 1] (0 for a constant feature). ``pvalues``: two-sided test of
        r = 0 (Student's t with n - 2 degrees of freedom, as ``scipy.stats.pearsonr`` and the
        p-values of scikit-learn's ``f_regression``); 1 for a constant feature.
    """
    if not isinstance(pvalues, (bool, np.bool_)):
        raise TypeError(f"pvalues: expected a bool, got {type(pvalues).__name__}")
    cx = check_X(X, accept_sparse=True, min_samples=3, check_finite=False)
    Xv = cx.values
    n = Xv.shape[0]
    # r does not depend on the scale of y or of any column of X: y is multiplied by a power of
    # two (exact) when its magnitude is extreme, and so is every column of X whose sums
    # overflow or fall into the subnormal range, as scipy.stats.pearsonr normalises first.
    yc, syy = _pearson_y(y, n)
    threads = resolve_n_jobs(n_jobs)
    mean, sxx, sxy = _cross_moments(Xv, yc, threads)
    cols = np.flatnonzero(_extreme_columns(mean[None, :], sxx[None, :])
                          | ~np.isfinite(sxy))
    if cols.size:
        sub, _ = _rescaled_columns(Xv, cols)
        _, sxx_c, sxy_c = _cross_moments(sub, yc, threads)
        sxx, sxy = sxx.copy(), sxy.copy()
        sxx[cols], sxy[cols] = sxx_c, sxy_c
    if not (np.isfinite(sxx).all() and np.isfinite(sxy).all()):
        _overflow(Xv)
    r, p = _pearson_scores(sxx, sxy, syy, n, pvalues)
    return _result(r, p, cx, "pearson")


def _pearson_y(y: Any, n: int) -> tuple[np.ndarray, float]:
    """The centred target (rescaled by a power of two when its magnitude is extreme) and its
    sum of squares; a constant y raises."""
    yv, _ = exact_rescale(check_y_real(y, n))
    yc = yv - yv.mean()
    syy = float(yc @ yc)
    if syy == 0.0:
        raise ValueError("y: is constant, so its correlation with a feature is undefined")
    return yc, syy


def _pearson_scores(sxx: np.ndarray, sxy: np.ndarray, syy: float, n: int,
                    pvalues: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """r and (optionally) its p-values from the column sums of squares and cross products."""
    r = np.clip(_ratio(sxy, np.sqrt(sxx) * np.sqrt(syy)), -1.0, 1.0)
    r[sxx == 0] = 0.0
    if not pvalues:
        return r, None
    # The t test of r = 0 as an F(1, n - 2) test, F = t^2 = r^2 (n - 2) / (1 - r^2): the same
    # p-value as scipy.stats.pearsonr's Beta form, at a fraction of the cost.
    f = _ratio(r * r * (n - 2), 1.0 - r * r)
    p = np.where(np.isinf(f), 0.0, 1.0)
    ok = np.isfinite(f) & (f > 0)
    p[ok] = _stats().f.sf(f[ok], 1, n - 2)
    return r, p


def _cross_moments(Xv: Any, yc: np.ndarray, threads: int):
    """Per column: mean, sum of squared deviations and cross product with the centred y
    (non-finite where the sums overflow; NaN / inf in X raises)."""
    n = Xv.shape[0]
    if _is_sparse(Xv):
        out = _sparse_moments(Xv, np.zeros(n, dtype=np.int64), 1, yc, threads, check=False)
        if not np.isfinite(out.sum).all():
            require_finite(Xv)
        # x - shift (the column's first stored value) keeps the digits of a large mean.
        delta = out.dsum[0] / n
        mean = out.shift[0] + delta
        with np.errstate(invalid="ignore", over="ignore"):
            sxx = np.maximum(out.dsumsq[0] - out.dsum[0] * delta, 0.0)
            # sum (x - s) yc = sum (x - mean) yc + (mean - s) sum yc, and sum yc is rounding
            # noise (s: the shift of the weighted sums, the same first stored value).
            sxy = out.dweighted - (mean - out.col_shift) * yc.sum()
        sxx[out.min == out.max] = 0.0
        return mean, sxx, sxy
    out = _core.cross_moments(Xv, yc, threads)
    if not (np.isfinite(out.sxx).all() and np.isfinite(out.sxy).all()):
        require_finite(Xv)
    return out.mean, out.sxx, out.sxy


def anova_f(X: Any, y: Any, *, n_jobs: int | None = None) -> FilterResult:
    """One-way ANOVA F statistic of every feature across the classes, with p-values.

    F = [sum_c n_c (mean_c - mean)^2 / (k - 1)] / [sum_c sum_{i in c} (x_i - mean_c)^2 / (n - k)],
    the same as scikit-learn's ``f_classif``; p-values from the F(k - 1, n - k) distribution.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels of any dtype, at least 2 classes and more samples than classes.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` F >= 0 (0 for a constant feature, inf for one constant within each class
        but not overall), ``pvalues``.
    """
    cx, labels = _labelled(X, y, "anova_f", sparse=True, check_finite=False)
    n, k = cx.values.shape[0], labels.classes.shape[0]
    if n <= k:
        raise ValueError(f"y: anova_f needs more samples than classes; got {n} samples in "
                         f"{k} classes")
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(*_anova_f_scores(m, n, k), cx, "anova_f")


def _anova_f_scores(m: _Moments, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    # Deviations of the class means from a per-column reference keep their digits when the
    # data sit far from zero.
    grand = m.counts @ m.centred / n
    between = m.counts @ (m.centred - grand) ** 2 / (k - 1)
    within = m.m2.sum(axis=0) / (n - k)
    f = _ratio(between, within)
    f[m.constant] = 0.0
    p = np.where(np.isinf(f), 0.0, 1.0)
    ok = np.isfinite(f) & (f > 0)
    p[ok] = _stats().f.sf(f[ok], k - 1, n - k)
    return f, p


def f_score(X: Any, y: Any, *, n_jobs: int | None = None) -> FilterResult:
    """The two-class F-score of Chen and Lin (the slides' F-score), no p-values.

    F = [(mean_+ - mean)^2 + (mean_- - mean)^2] / [s_+^2 + s_-^2], with ``mean`` over all
    samples and s_c^2 the class variance with divisor n_c - 1.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Exactly two classes with at least 2 samples each.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` >= 0, ``pvalues`` None.
    """
    cx, labels = _labelled(X, y, "f_score", sparse=True, n_classes=2, min_size=2,
                           check_finite=False)
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(_f_score_scores(m), None, cx, "f_score")


def _f_score_scores(m: _Moments) -> np.ndarray:
    grand = m.counts @ m.centred / m.counts.sum()
    num = ((m.centred - grand) ** 2).sum(axis=0)
    den = (m.m2 / (m.counts - 1)[:, None]).sum(axis=0)
    scores = _ratio(num, den)
    scores[m.constant] = 0.0
    return scores


def t_test(X: Any, y: Any, *, equal_var: bool = True, n_jobs: int | None = None) -> FilterResult:
    """Two-sample t-test per feature: pooled (Student) or Welch's.

    t = (mean_+ - mean_-) / se. Pooled (``equal_var=True``): se^2 = s_p^2 (1/n_+ + 1/n_-) with
    s_p^2 = (M2_+ + M2_-) / (n - 2), p-values from Student's t with n - 2 degrees of freedom.
    Welch: se^2 = s_+^2/n_+ + s_-^2/n_- and Welch-Satterthwaite degrees of freedom. The same as
    ``scipy.stats.ttest_ind(x_pos, x_neg, equal_var=...)``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Exactly two classes; pooled needs at least 3 samples, Welch 2 in each class.
    equal_var : bool
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores``: signed t (positive when the positive class has the larger mean);
        ``pvalues``: two-sided.
    """
    if not isinstance(equal_var, (bool, np.bool_)):
        raise TypeError(f"equal_var: expected a bool, got {type(equal_var).__name__}")
    cx, labels = _labelled(X, y, "t_test" if equal_var else "t_test with equal_var=False",
                           sparse=True, n_classes=2, min_size=1 if equal_var else 2,
                           check_finite=False)
    n = cx.values.shape[0]
    if n < 3:
        raise ValueError("X: t_test needs at least 3 samples (n - 2 degrees of freedom)")
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(*_t_test_scores(m, n, equal_var), cx, "t_test")


def _t_test_scores(m: _Moments, n: int, equal_var: bool) -> tuple[np.ndarray, np.ndarray]:
    n0, n1 = m.counts
    diff = m.centred[1] - m.centred[0]
    if equal_var:
        dof = np.full(diff.shape, n - 2.0)
        se2 = m.m2.sum(axis=0) / (n - 2) * (1.0 / n0 + 1.0 / n1)
    else:
        v0 = m.m2[0] / (n0 - 1) / n0
        v1 = m.m2[1] / (n1 - 1) / n1
        se2 = v0 + v1
        with np.errstate(invalid="ignore", divide="ignore"):
            # 0 / 0 where both variances vanish; _two_sided never reads dof there.
            dof = se2**2 / (v0**2 / (n0 - 1) + v1**2 / (n1 - 1))
    t = _ratio(diff, np.sqrt(se2))
    t[m.constant] = 0.0
    return t, _two_sided(_stats().t, t, dof)


def z_test(X: Any, y: Any, *, sigma: Any, n_jobs: int | None = None) -> FilterResult:
    """Two-sample z-test per feature with a known standard deviation.

    z = (mean_+ - mean_-) / (sigma sqrt(1/n_+ + 1/n_-)), standard normal under the null
    hypothesis of equal means when both classes share the known sigma; two-sided p-values.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Exactly two classes.
    sigma : float or array-like of shape (n_features,)
        The known standard deviation of each feature (> 0).
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores``: signed z, ``pvalues``: two-sided.
    """
    cx, labels = _labelled(X, y, "z_test", sparse=True, n_classes=2, check_finite=False)
    s = _z_sigma(sigma, cx.values.shape[1])
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(*_z_test_scores(m, s), cx, "z_test")


def _z_sigma(sigma: Any, d: int) -> np.ndarray:
    if np.ndim(sigma) == 0:
        return np.full(d, check_real(sigma, "sigma", positive=True))
    if np.shape(sigma) != (d,):
        raise ValueError(f"sigma: expected a number or an array of shape ({d},), got "
                         f"shape {np.shape(sigma)}")
    s = check_vector(sigma, "sigma")
    if not (s > 0).all():
        raise ValueError("sigma: every value must be finite and > 0")
    return s


def _z_test_scores(m: _Moments, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n0, n1 = m.counts
    # The moments of a column of extreme magnitude were taken on the column times a power of
    # two (see _class_moments): z is their difference over sigma, then that power undone.
    # A power of two changes no bit of a normal result; a z far below 1 (X near 1e-310 with
    # sigma = 1) underflows gradually towards 0, one beyond float64 becomes inf (p = 0), as the
    # t-test's perfect separation does.
    with np.errstate(over="ignore", under="ignore"):
        z = np.ldexp((m.centred[1] - m.centred[0]) / (s * np.sqrt(1.0 / n0 + 1.0 / n1)),
                     m.scale.astype(np.int32))
    z[m.constant] = 0.0
    return z, _two_sided(_stats().norm, z)


def s2n(X: Any, y: Any, *, n_jobs: int | None = None) -> FilterResult:
    """Signal-to-noise ratio per feature: (mean_+ - mean_-) / (s_+ + s_-).

    s_c is the class standard deviation with divisor n_c - 1 (as in the t-test).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Exactly two classes with at least 2 samples each.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores``: signed ratio, ``pvalues`` None.
    """
    cx, labels = _labelled(X, y, "s2n", sparse=True, n_classes=2, min_size=2,
                           check_finite=False)
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(_s2n_scores(m), None, cx, "s2n")


def _s2n_scores(m: _Moments) -> np.ndarray:
    sd = np.sqrt(m.m2 / (m.counts - 1)[:, None])
    scores = _ratio(m.centred[1] - m.centred[0], sd.sum(axis=0))
    scores[m.constant] = 0.0
    return scores


def fisher_ratio(X: Any, y: Any, *, n_jobs: int | None = None) -> FilterResult:
    """Fisher's discriminant ratio per feature (Theodoridis and Koutroumbas, ch. 5).

    Two classes: (mean_1 - mean_2)^2 / (s_1^2 + s_2^2); more classes: the sum of that ratio
    over all pairs of classes. s_c^2 is the class variance with divisor n_c, as in the class
    covariances S_i of the scatter matrices.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        At least 2 classes.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` >= 0, ``pvalues`` None.
    """
    cx, labels = _labelled(X, y, "fisher_ratio", sparse=True, check_finite=False)
    _warn_continuous_y(labels, "fisher_ratio", "for a real target use pearson, or bin y into "
                       "classes first")
    m = _class_moments(cx, labels, resolve_n_jobs(n_jobs))
    return _result(_fisher_ratio_scores(m), None, cx, "fisher_ratio")


def _fisher_ratio_scores(m: _Moments) -> np.ndarray:
    var = m.m2 / m.counts[:, None]
    k = m.counts.shape[0]
    scores = np.zeros(m.m2.shape[1])
    # class a against every later class at once (k Python steps, not k^2 / 2), in blocks of
    # later classes that keep the temporaries near 1e6 values
    rows = max(1, (1 << 20) // max(m.m2.shape[1], 1))
    for a in range(k - 1):
        for b0 in range(a + 1, k, rows):
            b1 = min(k, b0 + rows)
            scores += _ratio((m.centred[a] - m.centred[b0:b1]) ** 2,
                             var[a] + var[b0:b1]).sum(axis=0)
    scores[m.constant] = 0.0
    return scores


# ------------------------------------------------------------------------------------------
# rank and contingency-table statistics


def auc(X: Any, y: Any, *, n_jobs: int | None = None) -> FilterResult:
    """ROC AUC of every feature used alone as a score for the positive class.

    AUC = (R_+ - n_+(n_+ + 1)/2) / (n_+ n_-), with R_+ the sum of the positive samples' ranks
    among all values and ties given their mean rank (midranks): P(x_+ > x_-) + P(x_+ = x_-)/2,
    the same as ``sklearn.metrics.roc_auc_score(y, X[:, j])``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense (ranking a sparse column would densify it).
    y : array-like of shape (n_samples,)
        Exactly two classes; the positive one is the larger label.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` in [0, 1] (0.5: no separation; 0 separates perfectly the other way).
        ``pvalues``: the two-sided Mann-Whitney U test, normal approximation with tie and
        continuity corrections (``scipy.stats.mannwhitneyu(x_pos, x_neg,
        method="asymptotic")``); 1 for a constant feature.
    """
    cx, labels = _labelled(X, y, "auc", sparse=False, n_classes=2)
    out = _core.rank_sums(cx.values, labels.codes, resolve_n_jobs(n_jobs))
    return _result(*_auc_scores(out, labels.codes), cx, "auc")


def _auc_scores(out: Any, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AUC and the Mann-Whitney p-values from the positive rank sums and tie terms."""
    n = codes.shape[0]
    n1 = float(np.count_nonzero(codes))
    n0 = n - n1
    u1 = out.positive_rank_sum - n1 * (n1 + 1) / 2
    scores = u1 / (n1 * n0)
    u = np.maximum(u1, n1 * n0 - u1)
    s = np.sqrt(n1 * n0 / 12 * ((n + 1) - out.tie_term / (n * (n - 1))))
    p = np.ones_like(scores)
    ok = s > 0
    p[ok] = np.clip(2.0 * _stats().norm.sf((u[ok] - n1 * n0 / 2 - 0.5) / s[ok]), 0.0, 1.0)
    return scores, p


def _tables(cx: CheckedX, labels: CheckedLabels, binning: str, bins: int, alpha: float,
            threads: int) -> Any:
    X, k = cx.values, labels.classes.shape[0]
    if _is_sparse(X):
        X = X.tocsc()  # the tables are per column; a no-op for CSC
        return _core.table_stats_csc(X.shape[0], X.indptr, X.indices, X.data, labels.codes, k,
                                     alpha, threads)
    return _core.table_stats(X, labels.codes, k, binning, bins, alpha, threads)


def chi2(X: Any, y: Any, *, kind: str = "contingency", n_jobs: int | None = None) -> FilterResult:
    """Chi-square test of independence between every feature and the class, with p-values.

    ``kind="contingency"`` (default): each distinct value of the feature is a category, and the
    statistic is Pearson's chi-square of the value x class contingency table, sum over cells of
    (observed - expected)^2 / expected with expected = row total * class total / n, tested with
    (values - 1)(classes - 1) degrees of freedom: ``scipy.stats.chi2_contingency(table,
    correction=False)`` for every feature. Meant for discrete features (bin continuous ones
    first, or use ``mutual_info``): a ``DiscretenessWarning`` says when a feature has about one
    sample per distinct value, where the test says nothing.

    ``kind="counts"``: X holds non-negative counts or frequencies (word counts, indicators) and
    the table is class x feature of their sums, as in scikit-learn's ``chi2`` (same values): the
    statistic compares the feature's total per class with its share by class size, with
    classes - 1 degrees of freedom.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        For sparse X the zeros are one category like any other value.
    y : array-like of shape (n_samples,)
        At least 2 classes.
    kind : {"contingency", "counts"}
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` >= 0 and ``pvalues``; a feature with a single value (or, for counts, a
        zero total) scores 0 with p-value 1.
    """
    check_option(kind, "kind", CHI2_KINDS)
    threads = resolve_n_jobs(n_jobs)
    if kind == "counts":
        cx, labels = _labelled(X, y, "chi2", sparse=True, check_finite=False)
        _warn_continuous_y(labels, "chi2", _Y_REMEDY)
        Xv = cx.values
        if _is_sparse(Xv):
            # the sums only: no square is formed, so the sums of squares may overflow
            out = _sparse_moments(Xv, labels.codes, labels.classes.shape[0], None, threads,
                                  check=False)
            if (out.min < 0).any():
                raise ValueError("X: chi2 with kind='counts' needs non-negative values")
            observed, scale = out.sum, np.zeros(Xv.shape[1], dtype=np.int64)
            constant = out.min == out.max
        else:
            # Column sums only; columns of extreme magnitude come in units of 2**scale.
            m = _class_moments(cx, labels, threads)
            if Xv.min() < 0:
                raise ValueError("X: chi2 with kind='counts' needs non-negative values")
            observed, scale, constant = m.mean * m.counts[:, None], m.scale, m.constant
        with np.errstate(over="ignore"):
            total = np.ldexp(observed.sum(axis=0), scale.astype(np.int32))
        if not np.isfinite(total).all():
            require_finite(Xv.data if _is_sparse(Xv) else Xv)
        return _result(*_chi2_counts_scores(observed, total, labels, constant), cx, "chi2")
    cx, labels = _labelled(X, y, "chi2", sparse="csc")  # the tables read columns
    _warn_continuous_y(labels, "chi2", _Y_REMEDY)
    out = _tables(cx, labels, "none", 0, 0.0, threads)
    return _result(*_chi2_table_scores(out, labels), cx, "chi2")


def _warn_one_sample_per_value(out: Any, labels: CheckedLabels, what: str, then: str) -> None:
    """DiscretenessWarning for the features whose contingency tables have about one sample per
    value (a continuous feature read as categories): more than half as many values besides the
    most common one as samples outside it, and more than 10 (the most common value, zero in
    sparse data, is set aside: a TF-IDF column is its zeros plus about one sample a value)."""
    rest = labels.codes.shape[0] - np.asarray(out.largest_row)
    wide = np.flatnonzero(np.asarray(out.n_rows) - 1 > np.maximum(rest / 2, 10))
    if wide.size:
        shown = ", ".join(str(j) for j in wide[:5]) + (", ..." if wide.size > 5 else "")
        warnings.warn(
            f"X: {what} treats every distinct value of a feature as a category, and "
            f"{wide.size} feature(s) ({shown}) have about one sample per value (continuous?), "
            f"so {then}", DiscretenessWarning, stacklevel=user_stacklevel())


def _warn_mutual_info_discrete(out: Any, labels: CheckedLabels) -> None:
    _warn_one_sample_per_value(
        out, labels, "mutual_info with discrete features",
        "their scores only grow with the number of values; pass discrete_features=False "
        "(dense X, binned) or bin them first")


def _chi2_table_scores(out: Any, labels: CheckedLabels) -> tuple[np.ndarray, np.ndarray]:
    """chi2 and p-values from the per-feature contingency tables' statistics; warns about
    features with about one sample per value."""
    _warn_one_sample_per_value(
        out, labels, "chi2 with kind='contingency'",
        "their scores say nothing; bin them first, pass kind='counts' for non-negative counts "
        "or frequencies, or use mutual_info (which bins) or anova_f")
    dof = (out.n_rows - 1) * (labels.classes.shape[0] - 1)
    scores = np.where(dof > 0, out.chi2, 0.0)
    p = np.ones(scores.shape)
    ok = dof > 0
    p[ok] = _stats().chi2.sf(scores[ok], dof[ok])
    return scores, p


def _mutual_info_options(bins: Any, binning: Any, discrete_features: Any,
                         alpha: Any) -> tuple[int, float]:
    bins = check_int(bins, "bins", minimum=2)
    check_option(binning, "binning", BINNINGS)
    alpha = check_real(alpha, "alpha")
    if alpha < 0:
        raise ValueError(f"alpha: must be >= 0, got {alpha}")
    if not (isinstance(discrete_features, (bool, np.bool_)) or discrete_features == "auto"):
        raise ValueError(f"discrete_features: unknown value {discrete_features!r}; valid "
                         "options are 'auto', True, False")
    return bins, alpha


def _chi2_counts_scores(observed: np.ndarray, total: np.ndarray, labels: CheckedLabels,
                        constant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """chi2 of the class x feature table of sums (``total``: the column totals in the units of
    X; non-finite raises as an overflow). A ``constant`` column scores 0 with p-value 1: its
    class sums are the class sizes times its value, exactly the expected shares, but their
    computed shares differ from the class priors by rounding, which the total turns into a
    statistic of about total * 1e-32 (1e170 at counts of 1e200, p = 0)."""
    if not np.isfinite(total).all():
        raise ValueError("X: values too large: a feature's total count overflows float64; "
                         "rescale the features")
    prior = (np.bincount(labels.codes) / labels.codes.shape[0])[:, None]
    scores = np.zeros(total.shape)
    ok = (total > 0) & ~constant
    # sum (O - E)^2 / E with E = prior * total, taken as total * sum (O / total - prior)^2
    # / prior: the same number, but no square of a count, which overflows from about 1e154.
    share = observed[:, ok] / observed[:, ok].sum(axis=0)
    scores[ok] = total[ok] * ((share - prior) ** 2 / prior).sum(axis=0)
    p = np.ones(total.shape)
    p[ok] = _stats().chi2.sf(scores[ok], labels.classes.shape[0] - 1)
    return scores, p


def mutual_info(X: Any, y: Any, *, bins: int = 10, binning: str = "quantile",
                discrete_features: bool | str = "auto", alpha: float = 0.5,
                n_jobs: int | None = None) -> FilterResult:
    """Mutual information (nats) between every feature and the class, from counts.

    The feature's values (discrete features) or bins (continuous features) and the classes
    form a contingency table with one row per value or occupied bin. ``alpha`` is added to
    every cell (zero correction) and the table normalised to the joint distribution P, giving
    I = sum_ij P_ij log(P_ij / (P_i. P_.j)). ``alpha=0`` is the plain plug-in estimate (the
    same as ``sklearn.metrics.mutual_info_score`` of the feature and the labels); the default
    0.5 (Krichevsky-Trofimov) pulls the estimate of rare values towards independence, which
    offsets the plug-in estimate's upward bias for features with many values. This is not
    scikit-learn's ``mutual_info_classif`` on continuous features, which estimates the
    differential quantity from nearest neighbours.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        At least 2 classes.
    bins : int >= 2
        Bins per continuous feature (``"quantile"`` and ``"uniform"``).
    binning : {"quantile", "uniform", "median"}
        How continuous features are binned. ``"quantile"``: edges at the k / bins quantiles of
        the feature (NumPy's default linear interpolation; tied edges leave bins empty; an edge
        at the feature's minimum, a value that fills the lower quantiles such as the zeros of
        word counts, moves to the next value above it, so the minimum has a bin of its own
        where ``np.digitize`` would put it with the values above);
        ``"uniform"``: equal-width bins between the feature's minimum and maximum;
        ``"median"``: two bins, above the median or not (a value equal to the median is not
        above it; ``bins`` is ignored). With ``"quantile"`` and ``"uniform"`` a value goes to
        the bin whose lower edge it reaches, as ``np.digitize`` does.
    discrete_features : "auto" or bool
        True: every distinct value is a category (no binning). ``"auto"``: True for sparse X
        (the stored values and zero are categories, for example binary indicators), False for
        dense X (scikit-learn's rule). Sparse X needs discrete features: binning a sparse
        matrix would densify it.
    alpha : float >= 0
        The additive zero correction.
    n_jobs : int, optional

    Returns
    -------
    FilterResult
        ``scores`` >= 0, ``pvalues`` None.
    """
    bins, alpha = _mutual_info_options(bins, binning, discrete_features, alpha)
    cx, labels = _labelled(X, y, "mutual_info", sparse="csc")  # the tables read columns
    _warn_continuous_y(labels, "mutual_info", "for a real target use pearson, or bin y into "
                       "classes first")
    sparse_x = _is_sparse(cx.values)
    discrete = sparse_x if discrete_features == "auto" else bool(discrete_features)
    if sparse_x and not discrete:
        raise ValueError("X: binning a sparse matrix would densify it; pass "
                         "discrete_features=True (the stored values and zero are the "
                         "categories) or a dense array")
    out = _tables(cx, labels, "none" if discrete else binning, bins, alpha,
                  resolve_n_jobs(n_jobs))
    if discrete:
        _warn_mutual_info_discrete(out, labels)
    return _result(out.mutual_info, None, cx, "mutual_info")


# ------------------------------------------------------------------------------------------
# one-sample tests and screening by p-value


def _per_feature(value: Any, name: str, d: int, *, positive: bool = False) -> np.ndarray:
    """A number or an array of shape (n_features,) as a float64 vector."""
    if np.ndim(value) == 0:
        return np.full(d, check_real(value, name, positive=positive))
    if np.shape(value) != (d,):
        raise ValueError(f"{name}: expected a number or an array of shape ({d},), got shape "
                         f"{np.shape(value)}")
    v = check_vector(value, name)
    if positive and not (v > 0).all():
        raise ValueError(f"{name}: every value must be > 0")
    return v


def _level(rho: Any) -> float:
    rho = check_real(rho, "rho")
    if not 0.0 < rho < 1.0:
        raise ValueError(f"rho: the significance level must be in (0, 1), got {rho}")
    return rho


def _mean_and_sd(X: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means, unbiased standard deviations and mean - mu, computed on the columns
    scaled by a power of two (exact) so that squares neither overflow nor underflow."""
    # Blocks of columns: the temporaries below are each the size of their block, not of X.
    d = X.shape[1]
    step = max(1, (1 << 17) // max(X.shape[0], 1))
    if d > step:
        parts = [_mean_and_sd(X[:, j:j + step], mu[j:j + step]) for j in range(0, d, step)]
        return tuple(np.concatenate(p) for p in zip(*parts))  # type: ignore[return-value]
    # Every column is scaled (its largest magnitude into [0.5, 1)), not only the columns outside
    # _scale's safe range as column_exponents would choose: a column whose values span hundreds
    # of binary orders keeps the squares of its small deviations this way.
    top = np.max(np.abs(X), axis=0)
    e = np.where(top > 0, np.frexp(np.where(top > 0, top, 1.0))[1], 0).astype(np.int32)
    Xs = times_power_of_two(X, -e)  # np.ldexp's bits at the cost of a product
    # Deviations from the first value: a constant column gets its value as the mean, sd 0 and
    # mean - mu = 0 exactly when its value is mu, and a mean far from zero against the spread
    # keeps its digits (mean - mu is (x_0 - mu) + mean(x - x_0)).
    shift = Xs[0]
    d0 = Xs - shift
    delta = d0.mean(axis=0)
    dev = d0 - delta
    sd_s = np.sqrt((dev * dev).sum(axis=0) / (X.shape[0] - 1))
    diff = np.ldexp((shift - np.ldexp(mu, -e)) + delta, e)
    return np.ldexp(shift + delta, e), np.ldexp(sd_s, e), diff


def _one_sample(X: Any, mu: Any, rho: Any, sigma: Any, what: str) -> OneSampleResult:
    rho = _level(rho)
    cx = check_X(X, float64=True)
    Xv = cx.values
    N, d = Xv.shape
    mu = _per_feature(mu, "mu", d)
    stats = _stats()
    mean, sd, diff = _mean_and_sd(Xv, mu)
    if sigma is None:
        df = float(N - 1)
        dist, args = stats.t, (df,)
        spread = sd
    else:
        df = None
        dist, args = stats.norm, ()
        spread = _per_feature(sigma, "sigma", d, positive=True)
    se = spread / np.sqrt(N)
    if not np.isfinite(se).all():
        raise ValueError(f"X: {what} overflows float64 for a column of extreme magnitude")
    q = _ratio(diff, se)
    half = dist.ppf(1.0 - rho / 2.0, *args) * se
    return OneSampleResult(scores=q, pvalues=_two_sided(dist, q, *args), mean=mean,
                           low=mean - half, high=mean + half, confidence=1.0 - rho, df=df,
                           feature_names=cx.feature_names)


def one_sample_z(X: Any, mu: Any = 0.0, *, sigma: Any, rho: float = 0.05) -> OneSampleResult:
    """One-sample z-test of H0: mean = mu per feature, with a known standard deviation.

    q = (mean - mu) / (sigma / sqrt(N)) is standard normal under H0 (for Gaussian data, or
    approximately by the central limit theorem); H0 is rejected at level rho when |q| exceeds
    the normal quantile x_rho = Phi^-1(1 - rho / 2), i.e. when the p-value is below rho. The
    confidence interval of the mean at level 1 - rho is mean -+ x_rho sigma / sqrt(N).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        One sample per column (at least 2 values).
    mu : float or array-like of shape (n_features,)
        The mean under H0.
    sigma : float or array-like of shape (n_features,)
        The known standard deviation (> 0).
    rho : float in (0, 1)
        Significance level; the interval has confidence 1 - rho.

    Returns
    -------
    OneSampleResult
        scores (q), pvalues (two-sided), mean, low, high, confidence.
    """
    if sigma is None:
        raise TypeError("one_sample_z: sigma, the known standard deviation, is required (a "
                        "number or one per feature); with sigma unknown use one_sample_t")
    return _one_sample(X, mu, rho, sigma, "one_sample_z")


def one_sample_t(X: Any, mu: Any = 0.0, *, rho: float = 0.05) -> OneSampleResult:
    """One-sample t-test of H0: mean = mu per feature, the standard deviation estimated.

    q = (mean - mu) / (s / sqrt(N)) with s^2 = sum (x - mean)^2 / (N - 1) follows Student's t
    with N - 1 degrees of freedom under H0 for Gaussian data; the same statistic and p-value
    as ``scipy.stats.ttest_1samp``. The confidence interval of the mean at level 1 - rho is
    mean -+ t_rho s / sqrt(N), t_rho the 1 - rho / 2 quantile of that t. A constant column has
    s = 0: q is 0 (p-value 1) when its value is mu and +-inf (p-value 0) otherwise, where SciPy
    gives NaN; its interval is the single value.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        One sample per column (at least 2 values).
    mu : float or array-like of shape (n_features,)
        The mean under H0.
    rho : float in (0, 1)
        Significance level; the interval has confidence 1 - rho.

    Returns
    -------
    OneSampleResult
        scores (q), pvalues (two-sided), mean, low, high, confidence, df = N - 1.
    """
    return _one_sample(X, mu, rho, None, "one_sample_t")


SCREEN_CORRECTIONS = ("none", "bonferroni")


def screen(result: Any, rho: float = 0.05, *, correction: str = "none") -> SubsetResult:
    """Keep the features whose test rejects H0 at significance level rho: p-value < rho.

    Any test's result works: a two-sample filter of this module with p-values (``t_test``,
    ``z_test``, ``anova_f``, ``chi2``, ``pearson``, ``auc``), a one-sample test, or the
    p-values themselves. With ``correction="bonferroni"`` each p-value is compared with
    rho / n_features instead, which bounds the chance of keeping any feature for which H0
    holds by rho.

    Parameters
    ----------
    result : FilterResult, OneSampleResult or array-like of shape (n_features,)
        The p-values, or a result that carries them.
    rho : float in (0, 1)
        Significance level.
    correction : "none" or "bonferroni"

    Returns
    -------
    SubsetResult
        ``selected``: the kept features, smallest p-value first (ties: lower index);
        ``support``; ``history``: their p-values in that order; ``score``: the largest of
        them (the least significant feature kept; NaN when none is kept, which warns).
    """
    rho = _level(rho)
    check_option(correction, "correction", SCREEN_CORRECTIONS)
    names = None
    if isinstance(result, (FilterResult, OneSampleResult)):
        names = result.feature_names
        if result.pvalues is None:
            raise ValueError("result: this statistic has no p-values to screen by; use a "
                             "test (t_test, z_test, anova_f, chi2, pearson, auc)")
        pvalues = result.pvalues
    else:
        pvalues = result
    p = check_vector(pvalues, "pvalues")
    if p.size == 0:
        raise ValueError("pvalues: empty")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues: every p-value must be in [0, 1]")
    level = rho / p.size if correction == "bonferroni" else rho
    order = np.argsort(p, kind="stable")
    selected = order[p[order] < level]
    support = np.zeros(p.size, dtype=bool)
    support[selected] = True
    if selected.size == 0:
        warnings.warn(f"screen: no feature has a p-value below {level:.3g}; nothing is kept",
                      UserWarning, stacklevel=2)
    return SubsetResult(support=support, selected=selected.astype(np.intp),
                        score=float(p[selected].max()) if selected.size else float("nan"),
                        history=p[selected], feature_names=names)


__all__ = [
    "DiscretenessWarning",
    "anova_f",
    "auc",
    "chi2",
    "f_score",
    "fisher_ratio",
    "mutual_info",
    "one_sample_t",
    "one_sample_z",
    "pearson",
    "s2n",
    "screen",
    "t_test",
    "z_test",
]
