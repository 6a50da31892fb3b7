"""Choosing the number of features with a learner (Ng, "On feature selection", sections 3-5):
ORDERED-FS, STANDARD-WRAP and ORDERED-FS2 as beam searches whose every candidate is a fitted
logistic regression, recursive feature elimination, and greedy selection for the logistic loss.

The rows are split at random (``random_state``), stratified by class, into S1, on which every
hypothesis is fitted, and S2 (and S3 for ORDERED-FS2): the later parts get round(fraction * m)
rows, every class in proportion and keeping at least one row in S1 (a hold-out part of two
rows or more gets two classes where the classes can spare them). h_0 is the learner on no
features: the intercept-only model, which predicts the class most frequent in S1 (ties: the
first class). For r = 1, 2, ... every subset of the beam grows by one feature, every candidate
is fitted on S1, h_r is the best candidate of size r and the ``width`` best candidates form
the next beam (ties: the smaller sorted subset).

* ORDERED-FS ranks candidates by their training error on S1 and lets S2 choose only r: the
  h_r with the lowest error on S2 (ties: the smaller r). Only max_features + 1 hypotheses meet
  the hold-out set, so it is hard to overfit with many irrelevant features.
* STANDARD-WRAP ranks candidates by their error on S2 and returns the best hypothesis seen at
  any size (ties: the smaller r): every candidate meets the hold-out set.
* ORDERED-FS2 (Ng, section 5.3) has three parts: candidates are ranked by their error on S2,
  and r is chosen on S3.

Errors are 0/1 error rates with ties broken by the mean log-loss on the same rows (see
``fastfs.criteria.TrainError``). The C++ learner is the L2-regularised logistic regression of
``fastfs.learners`` (parameter C; each candidate starts from its parent's weights); any
scikit-learn classifier may replace it (``learner=``), fitted once per candidate.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from scipy.special import expit

import fastfs._core as _core
from ._results import GreedyLogisticResult, RFEResult, StepState, WrapperResult
from ._validation import (
    blas_threads,
    check_int,
    check_real,
    check_X,
    check_y_classes,
    refuse_continuous_labels,
    resolve_n_jobs,
)
from .criteria import Callable as CallableCriterion
from .criteria import HoldoutError, TrainError, split_rows
from .learners import check_C, check_learner_scale


def _label(value: Any) -> Any:
    """A class label for a message: the Python value of a NumPy scalar (1, not np.int64(1))."""
    return value.item() if isinstance(value, np.generic) else value


def _check_parts(codes: np.ndarray, classes: np.ndarray, parts: list[np.ndarray]) -> None:
    k = classes.shape[0]
    missing = np.setdiff1d(np.arange(k), codes[parts[0]])
    if missing.size:
        raise ValueError(f"y: the training part S1 lacks class {_label(classes[missing[0]])!r}; "
                         "every class must appear there (use more rows or another "
                         "random_state)")
    for name, p in zip(("S2", "S3"), parts[1:]):
        present = np.unique(codes[p])
        if present.size < 2:
            raise ValueError(f"y: the hold-out part {name} holds a single class "
                             f"({_label(classes[present[0]])!r}); its error cannot compare "
                             "hypotheses (use more rows, a larger hold-out fraction or another "
                             "random_state)")


class _Learner:
    """Fits on given rows / columns and scores on given rows: the C++ logistic regression or a
    scikit-learn classifier."""

    def __init__(self, X: np.ndarray, codes: np.ndarray, n_classes: int, C: float,
                 estimator: Any) -> None:
        self.X, self.codes, self.k, self.C, self.estimator = X, codes, n_classes, C, estimator

    def _intercept_only(self, fit: np.ndarray) -> Any:
        """h_0's weights in closed form where every class has a row: the log class counts,
        centred over the classes as the fit leaves them (binary: the log odds). Classes of
        equal count then tie exactly and h_0 predicts the first of them (the solver's last
        bits decided such ties, and with them ORDERED-FS's choice)."""
        counts = np.bincount(self.codes[fit], minlength=self.k)
        if counts.min() == 0:
            return _core.logistic_fit(np.zeros((fit.size, 0)), self.codes[fit], self.k, self.C,
                                      1e-8, 100, None).theta
        logs = np.log(counts.astype(np.float64))
        if self.k == 2:
            return np.array([[logs[1] - logs[0]]])
        return (logs - logs.mean())[None, :]

    def fit(self, features: tuple, fit: np.ndarray) -> Any:
        if not features:
            return ("intercept", self._intercept_only(fit))
        A = np.ascontiguousarray(self.X[np.ix_(fit, list(features))])
        if self.estimator is None:
            return ("cpp", _core.logistic_fit(A, self.codes[fit], self.k, self.C, 1e-8, 100,
                                              None).theta)
        from sklearn.base import clone

        return ("sklearn", clone(self.estimator).fit(A, self.codes[fit]))

    def score(self, model: Any, features: tuple, rows: np.ndarray) -> tuple[int, float]:
        """(errors, mean log-loss) on the rows."""
        kind, m = model
        y = self.codes[rows]
        if kind == "sklearn":
            A = self.X[np.ix_(rows, list(features))]
            errors = int(np.sum(m.predict(A) != y))
            return errors, _sk_log_loss(m, A, y, self.k)
        A = self.X[np.ix_(rows, list(features))] if features else np.zeros((rows.size, 0))
        Z = A @ m[:-1] + m[-1]
        if Z.shape[1] == 1:
            z = Z[:, 0]
            pred = (z > 0).astype(np.int64)
            loss = np.logaddexp(0.0, z) - np.where(y == 1, z, 0.0)
        else:
            pred = np.argmax(Z, axis=1)
            top = Z.max(axis=1)
            loss = top + np.log(np.exp(Z - top[:, None]).sum(axis=1)) - Z[np.arange(y.size), y]
        return int(np.sum(pred != y)), float(np.mean(loss))


def _sk_log_loss(est: Any, A: np.ndarray, y: np.ndarray, k: int) -> float:
    if not hasattr(est, "predict_proba"):
        return 0.0
    P = np.zeros((y.size, k))
    P[:, np.asarray(est.classes_, dtype=np.int64)] = est.predict_proba(A)
    return float(-np.mean(np.log(np.clip(P[np.arange(y.size), y], 1e-300, None))))


def _error_score(errors: int, loss: float, rows: int) -> float:
    return -(errors + loss / (1.0 + loss)) / rows


def _sk_criterion(learner: _Learner, fit: np.ndarray, score: np.ndarray) -> Callable:
    def J(Xs: np.ndarray, _y: Any, features: list | None = None) -> float:
        from sklearn.base import clone

        est = clone(learner.estimator).fit(Xs[fit], learner.codes[fit])
        y = learner.codes[score]
        errors = int(np.sum(est.predict(Xs[score]) != y))
        return _error_score(errors, _sk_log_loss(est, Xs[score], y, learner.k), score.size)
    return J


def _check_estimator(learner: Any) -> Any:
    if learner is None:
        return None
    from sklearn.base import is_classifier

    if not (hasattr(learner, "fit") and hasattr(learner, "predict")) or \
            not is_classifier(learner):
        # (a regressor or a clusterer "predicts" too: every error came out 1.0, silently)
        raise TypeError("learner: expected None (the C++ logistic regression) or a "
                        f"scikit-learn classifier, got {type(learner).__name__}")
    return learner


def _wrapper(method: str, X: Any, y: Any, fractions: tuple[float, ...], width: Any,
             max_features: Any, learner: Any, C: Any, random_state: Any, n_jobs: Any,
             callback: Callable[[StepState], Any] | None, verbose: bool) -> WrapperResult:
    from .search import _run

    cx = check_X(X, float64=True)
    Xv = cx.values
    m, n = Xv.shape
    refuse_continuous_labels(y, method)
    labels = check_y_classes(y, m)
    codes, k = labels.codes, labels.classes.shape[0]
    C = check_C(C)
    check_learner_scale(Xv)
    width = check_int(width, "width")
    K = n if max_features is None else check_int(max_features, "max_features")
    if K > n:
        raise ValueError(f"max_features: {K} exceeds n_features = {n}")
    estimator = _check_estimator(learner)
    parts = split_rows(codes, fractions, random_state)
    _check_parts(codes, labels.classes, parts)
    S1, S2 = parts[0], parts[1]
    rank_rows = S1 if method == "ordered_fs" else S2
    fl = _Learner(Xv, codes, k, C, estimator)
    if estimator is None:
        crit = (TrainError(C=C, rows=S1) if method == "ordered_fs"
                else HoldoutError(C=C, split=(S1, S2)))
    else:
        crit = CallableCriterion(_sk_criterion(fl, S1, rank_rows))
    # The beam runs on X as given (names kept), y as class codes.
    search = _run("beam", X, codes, K, crit, n_jobs, callback, verbose, width=width)
    per_size = ((),) + tuple(search.subsets)
    sizes = len(per_size)
    train = np.empty(sizes)
    hold = np.empty(sizes)
    test = np.empty(sizes) if len(parts) == 3 else None
    rank_J = np.empty(sizes)
    for r, S in enumerate(per_size):
        model = fl.fit(S, S1)
        e1, l1 = fl.score(model, S, S1)
        e2, l2 = fl.score(model, S, S2)
        train[r], hold[r] = e1 / S1.size, e2 / S2.size
        rank_J[r] = _error_score(e1, l1, S1.size) if method == "ordered_fs" else \
            _error_score(e2, l2, S2.size)
        if test is not None:
            e3, _ = fl.score(model, S, parts[2])
            test[r] = e3 / parts[2].size
    if method == "standard_wrap":
        r_best = int(np.argmax(rank_J))  # the best hold-out J (first: the smaller r)
        chosen = hold
    elif method == "ordered_fs":
        r_best = int(np.argmin(hold))
        chosen = hold
    else:
        r_best = int(np.argmin(test))
        chosen = test
    selected = np.asarray(per_size[r_best], dtype=np.intp)
    support = np.zeros(n, dtype=bool)
    support[selected] = True
    return WrapperResult(
        support=support, selected=selected, score=float(chosen[r_best]),
        history=search.history, feature_names=cx.feature_names, subsets=search.subsets,
        best_scores=search.best_scores, n_evaluations=search.n_evaluations,
        stopped_early=search.stopped_early, per_size=per_size, train_errors=train,
        holdout_errors=hold, test_errors=test, n_selected=r_best, parts=tuple(parts))


_WRAP_PARAMS = """
    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (two or more classes).
{split}
    width : int
        Beam width (Ng used 50).
    max_features : int, optional
        The largest size r searched (default: all features; more than n_features is an
        error).
    learner : scikit-learn classifier, optional
        Replaces the C++ logistic regression (cloned and fitted once per candidate; its
        ``predict_proba``, when it has one, breaks ties of the 0/1 error by log-loss).
    C : float
        Inverse L2 penalty of the C++ logistic regression (scikit-learn's C; finite).
    random_state : None, int, Generator or RandomState
        The random split of the rows.
    n_jobs : int, optional
        Threads for the candidates of a beam level (the result does not depend on it).
    callback : callable(StepState) -> bool, optional
        Called after every beam level with the level's best J and subset; True stops.
    verbose : bool

    Returns
    -------
    WrapperResult
        ``selected`` (ascending) and ``support`` of the chosen hypothesis; ``score`` its error
        rate on the part that chose it; ``per_size`` (h_0, h_1, ...), ``train_errors``,
        ``holdout_errors`` (and for ORDERED-FS2 ``test_errors``) per size; ``n_selected``;
        ``parts`` (the row indices of S1, S2[, S3]); ``history`` the ranking criterion's J of
        h_1, h_2, ...
"""


def _holdout(holdout: Any) -> float:
    gamma = check_real(holdout, "holdout")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"holdout: must be in (0, 1), got {gamma}")
    return gamma


def ordered_fs(X: Any, y: Any, *, holdout: float = 0.3, width: int = 50,
               max_features: int | None = None, learner: Any = None, C: float = 1.0,
               random_state: Any = None, n_jobs: int | None = None,
               callback: Callable[[StepState], Any] | None = None,
               verbose: bool = False) -> WrapperResult:
    gamma = _holdout(holdout)
    return _wrapper("ordered_fs", X, y, (1 - gamma, gamma), width, max_features, learner, C,
                    random_state, n_jobs, callback, verbose)


def standard_wrap(X: Any, y: Any, *, holdout: float = 0.3, width: int = 50,
                  max_features: int | None = None, learner: Any = None, C: float = 1.0,
                  random_state: Any = None, n_jobs: int | None = None,
                  callback: Callable[[StepState], Any] | None = None,
                  verbose: bool = False) -> WrapperResult:
    gamma = _holdout(holdout)
    return _wrapper("standard_wrap", X, y, (1 - gamma, gamma), width, max_features, learner,
                    C, random_state, n_jobs, callback, verbose)


def ordered_fs2(X: Any, y: Any, *, fractions: Any = (0.5, 0.25, 0.25), width: int = 50,
                max_features: int | None = None, learner: Any = None, C: float = 1.0,
                random_state: Any = None, n_jobs: int | None = None,
                callback: Callable[[StepState], Any] | None = None,
                verbose: bool = False) -> WrapperResult:
    try:
        fr = tuple(float(f) for f in fractions)
    except (TypeError, ValueError):
        raise TypeError("fractions: expected three numbers (S1, S2, S3)") from None
    if len(fr) != 3 or min(fr) <= 0 or not np.isclose(sum(fr), 1.0):
        raise ValueError(f"fractions: expected three positive fractions summing to 1, got {fr}")
    return _wrapper("ordered_fs2", X, y, fr, width, max_features, learner, C, random_state,
                    n_jobs, callback, verbose)


ordered_fs.__doc__ = """ORDERED-FS (Ng, section 3.3, figure 1): per size r the subset with the
    lowest training error on S1 (beam search), the hold-out part S2 choosing only r. See the
    module docstring for the rules.
""" + _WRAP_PARAMS.format(split="""    holdout : float in (0, 1)
        gamma: the fraction of rows in S2 (default 0.3).""")
standard_wrap.__doc__ = """STANDARD-WRAP (Ng, section 3.2): the beam ranks candidates by their
    error on the hold-out part S2 and the best hypothesis seen at any size is returned. See
    the module docstring.
""" + _WRAP_PARAMS.format(split="""    holdout : float in (0, 1)
        gamma: the fraction of rows in S2 (default 0.3).""")
ordered_fs2.__doc__ = """ORDERED-FS2 (Ng, section 5.3): candidates fitted on S1 and ranked by
    their error on S2; S3 chooses r. See the module docstring.
""" + _WRAP_PARAMS.format(split="""    fractions : three floats summing to 1
        The sizes of S1, S2, S3 (default (0.5, 0.25, 0.25)).""")


__all__ = ["ordered_fs", "ordered_fs2", "standard_wrap"]


def _rfe_sizes(n_features_to_select: Any, step: Any, n: int) -> tuple[int, int]:
    if n_features_to_select is None:
        k = n // 2
    elif isinstance(n_features_to_select, (bool, np.bool_)):
        raise TypeError("n_features_to_select: expected None, an int or a float in (0, 1]")
    elif isinstance(n_features_to_select, (int, np.integer)):
        k = int(n_features_to_select)
        if not 1 <= k <= n:
            raise ValueError(f"n_features_to_select: must be in [1, {n}] (n_features), got {k}")
    elif isinstance(n_features_to_select, (float, np.floating)):
        f = float(n_features_to_select)
        if not 0.0 < f <= 1.0:
            raise ValueError(f"n_features_to_select: a fraction must be in (0, 1], got {f}")
        k = max(1, int(n * f))
    else:
        raise TypeError("n_features_to_select: expected None, an int or a float in (0, 1], got "
                        f"{type(n_features_to_select).__name__}")
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, float, np.integer,
                                                                   np.floating)):
        raise TypeError("step: expected an int >= 1 or a float in (0, 1)")
    if 0.0 < step < 1.0:
        s = int(max(1, step * n))
    elif step >= 1 and math.isfinite(step) and float(step) == int(step):
        s = int(step)
    else:
        raise ValueError(f"step: expected an int >= 1 or a float in (0, 1), got {step}")
    return max(k, 1), s


def rfe(X: Any, y: Any, n_features_to_select: Any = None, *, step: Any = 1,
        estimator: Any = None, task: str = "classification", C: float = 1.0,
        alpha: float = 1.0, callback: Callable[[StepState], Any] | None = None,
        verbose: bool = False) -> RFEResult:
    """Recursive feature elimination, as scikit-learn's ``RFE``: fit, drop the ``step``
    features with the smallest importance (the sum over outputs of the squared coefficients;
    stable order, so ties drop the lower index first), refit, until ``n_features_to_select``
    remain. ``ranks`` is 1 for the survivors and grows with earlier removals, equal to
    scikit-learn's ``ranking_`` with the same estimator and step.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (classification) or real targets (regression).
    n_features_to_select : None, int or float in (0, 1]
        None: half the features (rounded down); a float: that fraction of n_features.
    step : int >= 1 or float in (0, 1)
        Features removed per round; a float is a fraction of the *initial* number of features
        (at least 1), as in scikit-learn.
    estimator : scikit-learn estimator with ``coef_`` (or ``feature_importances_``), optional
        Replaces the C++ learner (cloned and fitted every round).
    task : {"classification", "regression"}
        The C++ learner: L2 logistic regression with C, each round started from the previous
        round's weights, or ridge regression with alpha.
    C, alpha : float
    callback : callable(StepState) -> bool, optional
        Called after every round with step, ``score`` = minus the loss of the round's fit
        (NaN with an estimator) and the features kept; True stops (the features kept so far
        are returned).
    verbose : bool

    Returns
    -------
    RFEResult
        ``selected`` (ascending), ``support``, ``ranks``, ``coef`` of the final fit,
        ``n_features_per_round``; ``score`` = minus the final fit's loss (sum of log-losses, or
        residual sum of squares) with the C++ learner, NaN with an estimator; ``history`` the
        same for the fit of every round (on ``n_features_per_round`` features; it was minus
        those counts).
    """
    from ._progress import Progress
    from ._validation import check_option, check_y_real

    check_option(task, "task", ("classification", "regression"))
    # both learners' parameters are checked whichever runs (scikit-learn checks every
    # parameter at fit)
    C = check_C(C)
    alpha = check_real(alpha, "alpha")
    if alpha < 0:
        raise ValueError(f"alpha: must be >= 0, got {alpha}")
    cx = check_X(X, float64=True)
    Xv = cx.values
    m, n = Xv.shape
    k, s = _rfe_sizes(n_features_to_select, step, n)
    if estimator is None:
        check_learner_scale(Xv)
    if estimator is not None and not hasattr(estimator, "fit"):
        raise TypeError("estimator: expected a scikit-learn estimator with coef_, got "
                        f"{type(estimator).__name__}")
    if task == "classification" and estimator is None:
        refuse_continuous_labels(y, "rfe with task='classification'",
                                 hint="; pass task='regression' for a real target")
        labels = check_y_classes(y, m)
        codes, nc = labels.codes, labels.classes.shape[0]
        target = codes
    elif estimator is None:
        target = np.ascontiguousarray(check_y_real(y, m), dtype=np.float64)
    else:
        target = np.asarray(y)
    progress = Progress("rfe", callback, verbose)
    support = np.ones(n, dtype=bool)
    ranks = np.ones(n, dtype=np.intp)
    theta = None
    rounds, losses = [], []
    stopped = False

    def fit(features: np.ndarray, theta0: Any) -> tuple[np.ndarray, Any, float]:
        """(coef (n_outputs, len(features)), new theta, loss)."""
        A = np.ascontiguousarray(Xv[:, features])
        if estimator is not None:
            from sklearn.base import clone

            est = clone(estimator).fit(A, target)
            if hasattr(est, "coef_"):
                coef = np.asarray(est.coef_, dtype=np.float64)
            elif hasattr(est, "feature_importances_"):
                coef = np.asarray(est.feature_importances_, dtype=np.float64)
            else:
                raise TypeError("estimator: has neither coef_ nor feature_importances_ after "
                                "fit")
            return coef.reshape(-1, features.size), None, float("nan")
        if task == "classification":
            out = _core.logistic_fit(A, codes, nc, C, 1e-8, 100, theta0)
            th = np.asarray(out.theta)
            return np.ascontiguousarray(th[:-1].T), th, float(out.loss)
        out = _core.ridge_fit(A, target, alpha)
        return np.asarray(out.coef)[None, :-1], None, float(out.rss)

    try:
        while support.sum() > k:
            features = np.flatnonzero(support)
            coef, theta, loss = fit(features, theta)
            rounds.append(features.size)
            losses.append(loss)
            importances = (coef ** 2).sum(axis=0)
            order = np.argsort(importances, kind="stable")
            drop = order[:min(s, features.size - k)]
            support[features[drop]] = False
            ranks[~support] += 1
            if theta is not None:
                # warm start: the survivors' weights, and the dropped columns' part of the
                # scores at their means moved into the intercept (columns offset by 1e8 had
                # left the intercept 1e6 away from the next optimum)
                keep = np.setdiff1d(np.arange(features.size), drop)
                mean = Xv[:, features[drop]].mean(axis=0)
                theta = np.asfortranarray(np.vstack([theta[keep],
                                                     theta[-1:] + mean @ theta[drop]]))
            if progress.hook(0, len(rounds), -loss, np.flatnonzero(support).astype(np.intp)):
                stopped = True
                break
    finally:
        progress.close()
    features = np.flatnonzero(support)
    coef, _, loss = fit(features, theta)
    return RFEResult(support=support, selected=features.astype(np.intp), score=-loss,
                     history=-np.asarray(losses, dtype=np.float64),
                     feature_names=cx.feature_names, ranks=ranks, coef=coef,
                     n_features_per_round=np.asarray(rounds, dtype=np.intp),
                     stopped_early=stopped)


__all__ += ["rfe"]


def greedy_logistic(X: Any, y: Any, n_features: int, *, C: float = 1.0,
                    n_jobs: int | None = None,
                    callback: Callable[[StepState], Any] | None = None,
                    verbose: bool = False) -> GreedyLogisticResult:
    """Greedy selection for the logistic loss by the gradient rule (Shalev-Shwartz and
    Ben-David, section 25.1.2: OMP's idea with a smooth loss), fully corrective.

    Start from the intercept-only model. Each round, at the current fit, compute the gradient
    of the summed log-loss with respect to every unselected feature's weight,
    g_j = X_j^T (p - Y) (one number for two classes, one per class for more: its Euclidean
    norm), add the feature with the largest |g_j| (ties within 1e-10 relative: the lower
    index), and refit the L2-regularised logistic regression (C, intercept unpenalised) on the
    selected features from the previous weights (0 for the new one). The rule compares raw
    gradients, so it depends on the columns' scales: standardise X first when they differ.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features_total)
    y : array-like of shape (n_samples,)
        Class labels (two or more classes).
    n_features : int
        Rounds (features to select), at most n_features_total.
    C : float
        Inverse L2 penalty of the refits (finite, > 0).
    n_jobs : int, optional
        Threads of the gradient products X^T (p - Y), which NumPy's BLAS computes (None: the
        BLAS's own setting, unless OMP_NUM_THREADS asks for more threads than there are
        cores). The refits run on one thread.
    callback : callable(StepState) -> bool, optional
        Called after every round but the last with step, minus the summed log-loss and the
        features chosen so far; True stops.
    verbose : bool

    Returns
    -------
    GreedyLogisticResult
    """
    from ._progress import Progress

    cx = check_X(X, float64=True)
    Xv = cx.values
    m, n = Xv.shape
    refuse_continuous_labels(y, "greedy_logistic")
    labels = check_y_classes(y, m)
    codes, k = labels.codes, labels.classes.shape[0]
    C = check_C(C)
    threads = resolve_n_jobs(n_jobs)
    check_learner_scale(Xv)
    n_features = check_int(n_features, "n_features")
    if n_features > n:
        raise ValueError(f"n_features: {n_features} exceeds n_features_total = {n}")
    outputs = 1 if k == 2 else k
    Y = (codes[:, None] == np.arange(k)[None, :]).astype(np.float64)
    if k == 2:
        Y = Y[:, 1:]
    with blas_threads(threads):
        theta = np.asfortranarray(_core.logistic_fit(np.zeros((m, 0)), codes, k, C, 1e-8, 100,
                                                     None).theta)
        selected: list[int] = []
        history, grads = [], []
        progress = Progress("greedy_logistic", callback, verbose)
        stopped = False
        loss = float("nan")
        try:
            for step in range(n_features):
                A = Xv[:, selected]
                Z = A @ theta[:-1] + theta[-1]
                if outputs == 1:
                    P = expit(Z)  # 1 / (1 + exp(-Z)) without exp's overflow warning
                else:
                    P = np.exp(Z - Z.max(axis=1, keepdims=True))
                    P /= P.sum(axis=1, keepdims=True)
                G = np.sqrt(((Xv.T @ (P - Y)) ** 2).sum(axis=1))
                G[selected] = -np.inf
                top = G.max()
                j = int(np.flatnonzero(G >= top - 1e-10 * abs(top))[0])
                selected.append(j)
                grads.append(float(top))
                start = np.asfortranarray(np.vstack([theta[:-1], np.zeros((1, outputs)),
                                                     theta[-1:]]))
                out = _core.logistic_fit(np.ascontiguousarray(Xv[:, selected]), codes, k, C,
                                         1e-8, 100, start)
                theta = np.asarray(out.theta)
                loss = float(out.loss)
                history.append(-loss)
                if step < n_features - 1 and progress.hook(
                        0, step, -loss, np.asarray(selected, dtype=np.intp)):
                    stopped = True
                    break
        finally:
            progress.close()
    sel = np.asarray(selected, dtype=np.intp)
    support = np.zeros(n, dtype=bool)
    support[sel] = True
    return GreedyLogisticResult(
        support=support, selected=sel, score=-loss, history=np.asarray(history),
        feature_names=cx.feature_names, coef=np.ascontiguousarray(theta[:-1].T),
        intercept=theta[-1].copy(), gradients=np.asarray(grads), stopped_early=stopped)


__all__ += ["greedy_logistic"]
