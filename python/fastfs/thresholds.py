"""Thresholds that turn a weight vector (Relief, Simba, RGS, a filter's scores, any per-feature
relevance where higher is better) into a feature set: Relief's tau (Kira and Rendell), the
largest gap in the sorted weights, and the number of top features chosen by cross-validation.

Every function ranks the features by weight, largest first, equal weights keeping the lower
index first (the ranking of ``WeightResult``), and returns a ``ThresholdResult``: a
``SubsetResult`` whose ``selected`` is a prefix of that ranking, plus ``threshold``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from ._progress import Progress
from ._results import StepState, ThresholdResult
from ._validation import check_int, check_real, check_vector


def _weights(weights: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """(weights, ranking, feature_names) from a WeightResult, a FilterResult or an array."""
    names = getattr(weights, "feature_names", None)
    values = getattr(weights, "weights", None)
    if values is None:
        values = getattr(weights, "scores", weights)
    w = check_vector(values, "weights")
    if w.size == 0:
        raise ValueError("weights: empty")
    return w, np.argsort(-w, kind="stable"), names


def _result(w: np.ndarray, ranking: np.ndarray, t: int, threshold: float, score: float,
            history: np.ndarray, names: Any, stopped_early: bool = False) -> ThresholdResult:
    selected = ranking[:t].astype(np.intp)
    support = np.zeros(w.size, dtype=bool)
    support[selected] = True
    return ThresholdResult(support=support, selected=selected, score=score, history=history,
                           feature_names=names, threshold=threshold,
                           stopped_early=stopped_early)


def relief_tau(weights: Any, n_iter: int, *, alpha: float = 0.05) -> ThresholdResult:
    """Relief's relevance threshold tau = 1 / sqrt(alpha * n_iter) (Kira and Rendell, 1992).

    Relief's weight of a feature is an average of n_iter differences, each in [-1, 1] when the
    features are scaled to [0, 1]; for an irrelevant feature its mean is 0 and its variance at
    most 1 / n_iter, so by Chebyshev's inequality it reaches tau with probability at most
    alpha. The features with weight >= tau are kept.

    The weights must be on that scale: ``fastfs.relieff``'s weights are; ``fastfs.relief``'s
    are raw sums of squared differences, so run it on X scaled to [0, 1] (for example
    scikit-learn's ``MinMaxScaler``) and divide its weights by the number of samples visited.

    Parameters
    ----------
    weights : WeightResult or array-like of shape (n_features,)
    n_iter : int
        Samples the weights were averaged over (n_samples for relieff).
    alpha : float in (0, 1)
        The accepted probability that a given irrelevant feature passes.

    Returns
    -------
    ThresholdResult
        ``threshold`` = tau; ``selected``: the features with weight >= tau, best first;
        ``history``: their weights; ``score`` NaN (no criterion). When no weight reaches
        tau the result is empty and a UserWarning says so.
    """
    w, ranking, names = _weights(weights)
    n_iter = check_int(n_iter, "n_iter", maximum=2**62)
    alpha = check_real(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: must be in (0, 1), got {alpha}")
    tau = 1.0 / math.sqrt(alpha * n_iter)
    t = int(np.count_nonzero(w >= tau))
    if t == 0:
        warnings.warn(f"relief_tau: no weight reaches tau = {tau:.3g}; nothing is kept (the "
                      "bound is conservative: more samples or a larger alpha lower tau)",
                      UserWarning, stacklevel=2)
    return _result(w, ranking, t, tau, float("nan"), w[ranking[:t]], names)


def largest_gap(weights: Any) -> ThresholdResult:
    """Keep the features above the largest gap between consecutive sorted weights.

    With the weights sorted in decreasing order w_(1) >= ... >= w_(n), the gaps are
    g_t = w_(t) - w_(t+1); the t with the largest gap is chosen (ties: the smaller t) and the
    top t features kept.

    Parameters
    ----------
    weights : WeightResult or array-like of shape (n_features,), n_features >= 2

    Returns
    -------
    ThresholdResult
        ``selected``: the top t features; ``threshold``: the middle of the gap;
        ``history``: the n - 1 gaps in ranking order; ``score``: the largest gap.
        Every weight equal (no gap) is a ValueError.
    """
    w, ranking, names = _weights(weights)
    if w.size < 2:
        raise ValueError("weights: the largest gap needs at least 2 weights")
    s = w[ranking]
    gaps = s[:-1] - s[1:]
    if not np.isfinite(gaps).all():
        raise ValueError("weights: the gaps overflow float64")
    if gaps.max() <= 0:
        raise ValueError("weights: every weight is equal; there is no gap to cut at")
    t = int(np.argmax(gaps)) + 1
    return _result(w, ranking, t, float(s[t - 1] / 2 + s[t] / 2), float(gaps[t - 1]), gaps,
                   names)


def cv_top_features(X: Any, y: Any, weights: Any, estimator: Any, *, cv: Any = 5,
                    scoring: Any = None, max_features: int | None = None,
                    callback: Callable[[StepState], Any] | None = None,
                    verbose: bool = False) -> ThresholdResult:
    """The number t of top-ranked features that cross-validates best.

    For t = 1 .. max_features, the estimator is scored on the top t features by
    ``fastfs.criteria.Wrapper(estimator, cv, scoring)`` (the mean of scikit-learn's
    ``cross_val_score``; the folds are drawn once, so every t is scored on the same folds).
    The t with the largest mean wins; ties go to the smaller t.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    weights : WeightResult or array-like of shape (n_features,)
        Higher is better.
    estimator : scikit-learn estimator
    cv, scoring : as in ``cross_val_score``
    max_features : int, optional
        Largest t tried (default n_features): the cost is max_features cross-validations.
    callback : callable(StepState) -> bool, optional
        Called after every t with ``step`` = t - 1, ``score`` = its mean CV score and
        ``selection`` = its features; return True to stop (the best t so far is returned).
    verbose : bool

    Returns
    -------
    ThresholdResult
        ``selected``: the top t features; ``score``: their mean CV score; ``history``: the
        mean CV score for every t tried; ``threshold``: the weight of the last kept feature
        (features of equal weight beyond it lose to the lower index).
    """
    from .criteria import Wrapper, prepare

    w, ranking, names = _weights(weights)
    p = prepare(X, y, Wrapper(estimator, cv=cv, scoring=scoring), 1,
                "fastfs.cv_top_features")
    n = p.cx.values.shape[1]
    if w.size != n:
        raise ValueError(f"weights: expected {n} weights (n_features), got {w.size}")
    T = n if max_features is None else check_int(max_features, "max_features", maximum=n)
    progress = Progress("cv_top_features", callback, verbose, total=T)
    scores: list[float] = []
    stopped = False
    try:
        for t in range(1, T + 1):
            top = ranking[:t]
            scores.append(float(p.fn(np.sort(top))))
            if progress.active and progress.hook(0, t - 1, scores[-1], top.copy()):
                stopped = t < T
                break
    finally:
        progress.close()
    history = np.asarray(scores)
    if not np.isfinite(history).any():
        raise ValueError("estimator: no number of features gives a finite CV score")
    t = int(np.nanargmax(history)) + 1
    return _result(w, ranking, t, float(w[ranking[t - 1]]), float(history[t - 1]), history,
                   names if names is not None else p.cx.feature_names, stopped)


__all__ = ["cv_top_features", "largest_gap", "relief_tau"]
