"""Fast linear learners: L2-regularised logistic regression (two or more classes) and ridge
regression, the learners behind the criteria "train_error", "holdout_error", "aic" and "bic",
ORDERED-FS / STANDARD-WRAP / ORDERED-FS2 and RFE.

``logistic_regression`` minimises sum_i logloss_i + ||W||^2 / (2 C) with the intercepts not
penalised, as scikit-learn's ``LogisticRegression(C=C)`` does (one weight vector for two
classes, one per class for more, the intercepts then summing to zero). It runs Newton's method
with a backtracking line search in C++, which converges in a handful of iterations on the small
subsets the searches fit, and may start from given weights (a parent subset's); with more than
64 columns (two classes) or 256 weights (more classes) each Newton step is solved by conjugate
gradients on Hessian-vector products, so no weights-by-weights matrix is built. ``ridge_regression``
with more columns than rows solves the samples-by-samples dual system. C must be
finite: on linearly separable data the unpenalised log-loss keeps falling as the weights grow,
so there is no finite optimum; a large C on such data gives large weights and more iterations.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import fastfs._core as _core
from ._results import LinearModelFit, LogisticPath
from ._scale import max_abs
from ._validation import (
    check_int,
    check_real,
    check_X,
    check_y_classes,
    check_y_real,
    refuse_continuous_labels,
)


def _names(names: Any, features: Any) -> Any:
    """The names of the columns ``_columns`` keeps (None without names)."""
    if names is None or features is None:
        return names
    idx = np.asarray(features)
    return np.asarray(names)[np.flatnonzero(idx) if idx.dtype == bool else idx]


def _columns(X: np.ndarray, features: Any) -> np.ndarray:
    if features is None:
        return X
    idx = np.asarray(features)
    if idx.dtype == bool:
        if idx.shape != (X.shape[1],):
            raise ValueError(f"features: a mask must have length n_features = {X.shape[1]}")
        idx = np.flatnonzero(idx)
    if idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        raise TypeError("features: expected integer indices or a bool mask")
    idx = idx.astype(np.intp)  # [] is float64 to NumPy
    if idx.size and (idx.min() < 0 or idx.max() >= X.shape[1]):
        raise IndexError(f"features: index out of range for {X.shape[1]} features")
    return np.ascontiguousarray(X[:, idx])


def _start(value: Any, shape: tuple, name: str) -> np.ndarray:
    """A starting point of ``shape`` (n_outputs = 1 for two classes, else one per class):
    finite numbers, reshaped when the count matches."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected an array of numbers") from None
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"{name}: expected shape {shape} (one row per output: 1 for two "
                         f"classes, else one per class), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinity")
    return arr.reshape(shape)


# The L2 penalty is not scale-free, so X cannot be rescaled behind the user's back; beyond this
# magnitude the Hessian's entries (squares of X summed over samples) overflow.
MAX_ABS_X = 1e100


def check_learner_scale(X: np.ndarray, name: str = "X") -> None:
    """Refuse values whose squares overflow in the learners' Hessians."""
    if max_abs(X) > MAX_ABS_X:
        raise ValueError(f"{name}: values above {MAX_ABS_X:g} in magnitude overflow the "
                         "logistic / ridge learners (their L2 penalty depends on the scale of "
                         "X); standardise X first")


def check_C(C: Any) -> float:
    """C > 0 and finite (a clear message about separable data otherwise)."""
    if isinstance(C, (int, float, np.integer, np.floating)) and not isinstance(C, bool) \
            and not np.isfinite(C):
        raise ValueError(f"C: must be finite, got {C}; without a penalty the logistic optimum "
                         "does not exist on linearly separable data (use a large finite C)")
    return check_real(C, "C", positive=True)


def logistic_regression(X: Any, y: Any, *, C: float = 1.0, features: Any = None,
                        coef_init: Any = None, intercept_init: Any = None, tol: float = 1e-8,
                        max_iter: int = 100) -> LinearModelFit:
    """L2-regularised logistic regression by Newton's method (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (at least 2 classes).
    C : float
        Inverse regularisation strength, finite and > 0 (scikit-learn's C).
    features : int indices or bool mask, optional
        Fit on these columns only (default: all).
    coef_init, intercept_init : array-like, optional
        Starting weights (shape (n_outputs, n_columns) and (n_outputs,)); default zero.
    tol : float
        Converged when no weight moves by more than tol * max(1, max |weight|).
    max_iter : int

    Returns
    -------
    LinearModelFit
        coef (n_outputs, n_columns), intercept, classes, loss (sum of log-losses), n_iter,
        converged. A RuntimeWarning says when max_iter was reached.
    """
    C = check_C(C)
    tol = check_real(tol, "tol", positive=True)
    max_iter = check_int(max_iter, "max_iter")
    cx = check_X(X, float64=True)
    refuse_continuous_labels(y, "logistic_regression", hint="; use ridge_regression for a "
                             "real target")
    labels = check_y_classes(y, cx.values.shape[0])
    A = _columns(cx.values, features)
    check_learner_scale(A)
    k = labels.classes.shape[0]
    outputs = 1 if k == 2 else k
    theta0 = None
    if coef_init is not None or intercept_init is not None:
        coef0 = np.zeros((outputs, A.shape[1])) if coef_init is None else \
            _start(coef_init, (outputs, A.shape[1]), "coef_init")
        b0 = np.zeros(outputs) if intercept_init is None else \
            _start(intercept_init, (outputs,), "intercept_init")
        theta0 = np.asfortranarray(np.vstack([coef0.T, b0[None, :]]))
    out = _core.logistic_fit(A, labels.codes, k, C, tol, max_iter, theta0)
    theta = np.asarray(out.theta)
    if not out.converged:
        warnings.warn(f"logistic_regression: not converged after {out.n_iter} Newton "
                      "iterations (raise max_iter, or lower C on separable data)",
                      RuntimeWarning, stacklevel=2)
    return LinearModelFit(coef=np.ascontiguousarray(theta[:-1].T),
                          intercept=theta[-1].copy(), classes=labels.classes,
                          loss=float(out.loss), n_iter=int(out.n_iter),
                          converged=bool(out.converged),
                          feature_names=_names(cx.feature_names, features))


def ridge_regression(X: Any, y: Any, *, alpha: float = 1.0,
                     features: Any = None) -> LinearModelFit:
    """Ridge regression min ||y - X w - b||^2 + alpha ||w||^2 (scikit-learn's Ridge), the
    intercept not penalised; alpha = 0 is least squares (the minimum-norm solution when X is
    rank-deficient). ``loss`` is the residual sum of squares."""
    alpha = check_real(alpha, "alpha")
    if alpha < 0:
        raise ValueError(f"alpha: must be >= 0, got {alpha}")
    cx = check_X(X, float64=True)
    t = np.ascontiguousarray(check_y_real(y, cx.values.shape[0]), dtype=np.float64)
    A = _columns(cx.values, features)
    check_learner_scale(A)
    if float(np.max(np.abs(t))) > MAX_ABS_X:
        raise ValueError(f"y: values above {MAX_ABS_X:g} in magnitude overflow ridge regression")
    out = _core.ridge_fit(A, t, alpha)
    coef = np.asarray(out.coef)
    return LinearModelFit(coef=coef[None, :-1].copy(), intercept=coef[-1:].copy(),
                          loss=float(out.rss), feature_names=_names(cx.feature_names, features))


def logistic_l1_path(X: Any, y: Any, Cs: Any = 10, *, tol: float = 1e-8,
                     max_iter: int = 100) -> LogisticPath:
    """L1-regularised logistic regression (two classes) along a path of C: minimises
    sum_i logloss_i + ||w||_1 / C with the intercept not penalised (scikit-learn's
    ``LogisticRegression(penalty="l1", C=C, solver="saga")`` objective), by proximal Newton
    steps with coordinate descent, each C warm-started from the previous one. The features
    with a non-zero weight are the embedded selection at that C.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Two classes.
    Cs : int or array-like of float
        An int n: n values from C_min = 1 / max_j |X_j^T (y - mean(y))| (the largest C at
        which every weight is zero) to 10^4 C_min, log-spaced; or the values (sorted
        ascending).
    tol : float
        A fit stops when a full Newton step moves no weight by more than tol * max(1, |w|).
    max_iter : int
        Newton steps per C.

    Returns
    -------
    LogisticPath
        Cs, coefs (n_features x n_Cs), intercepts, n_iter. A RuntimeWarning says when a C
        reached max_iter.
    """
    cx = check_X(X, float64=True)
    refuse_continuous_labels(y, "logistic_l1_path")
    labels = check_y_classes(y, cx.values.shape[0])
    if labels.classes.shape[0] != 2:
        raise ValueError(f"y: logistic_l1_path needs exactly 2 classes, got "
                         f"{labels.classes.shape[0]}")
    A = cx.values
    check_learner_scale(A)
    tol = check_real(tol, "tol", positive=True)
    max_iter = check_int(max_iter, "max_iter")
    if isinstance(Cs, (int, np.integer)) and not isinstance(Cs, bool):
        n = check_int(Cs, "Cs")
        yv = labels.codes.astype(np.float64)
        # constant columns correlate with nothing; X^T (y - mean) would give them the rounding
        # of the sum of y - mean (about 1e-16 of |x|), and C_min near 1e15
        varies = np.ptp(A, axis=0) > 0 if A.shape[0] else np.zeros(A.shape[1], dtype=bool)
        top = float(np.max(np.abs(A[:, varies].T @ (yv - yv.mean())))) if varies.any() else 0.0
        if top == 0.0:
            raise ValueError("X: no feature is correlated with y (every column is constant); "
                             "the L1 path is all zeros")
        grid = np.logspace(0.0, 4.0, n) / top
    else:
        grid = np.asarray(Cs, dtype=np.float64).reshape(-1)
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError("Cs: expected an int or positive finite values")
        grid = np.sort(grid)
    out = _core.logistic_l1_path(A, labels.codes, grid.tolist(), tol, max_iter)
    if not all(out.converged):
        warnings.warn(f"logistic_l1_path: {sum(not c for c in out.converged)} of "
                      f"{grid.size} fits reached max_iter={max_iter}", RuntimeWarning,
                      stacklevel=2)
    coefs, intercepts = np.array(out.coefs), np.array(out.intercepts)
    if isinstance(Cs, (int, np.integer)):
        # C_min is the boundary of the all-zero solution: the fit there is the null model
        # (rounding in the gradient's test could leave a weight of 1e-16)
        p = float(labels.codes.mean())
        coefs[:, 0] = 0.0
        intercepts[0] = np.log(p / (1.0 - p))
    return LogisticPath(Cs=grid, coefs=coefs,
                        intercepts=intercepts,
                        n_iter=np.asarray(out.n_iter), classes=labels.classes,
                        feature_names=cx.feature_names)


__all__ = ["logistic_l1_path", "logistic_regression", "ridge_regression"]
