"""Linear greedy selection and sparsity: orthogonal matching pursuit, backward
elimination for least squares, and the LASSO by coordinate descent.

All of them work in float64 and read whole columns: X is copied once to Fortran order (float32
input converted), except that OMP (method "qr", no intercept) reads a C-ordered float64 array
as it is. OMP and backward elimination scale each column of X, and y, by a power of two when
its magnitude is extreme (beyond 2^200 or below 2^-200), which leaves the selection unchanged
(it does not depend on the columns' scales); OMP's gradient rule and the LASSO, which do
depend on them, scale X as a whole (the LASSO scales y too, with its penalties). A coefficient
that float64 cannot hold in the caller's units is then a ValueError (a residual sum of squares
too, but for the LASSO's, which becomes 0 or inf: its residual norm is reported as well).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

import fastfs._core as _core
from ._progress import Progress
from ._results import EqualScoresWarning, LassoPath, LinearResult, StepState
from ._scale import (
    SAFE_EXPONENT_FLOAT64,
    column_scan,
    exact_rescale,
    exact_rescale_columns,
    max_abs,
    scale_parameter,
    unscale,
    unscaled_hook,
)
from ._validation import (
    as_contiguous,
    blas_threads,
    check_bool,
    check_int,
    guard_memory,
    guard_square_matrix,
    check_option,
    check_real,
    check_vector,
    check_X,
    check_y_real,
    require_finite,
    resolve_n_jobs,
)

OMP_METHODS = ("qr", "svd")
OMP_CRITERIA = ("exact", "gradient", "coordinate")
PRECOMPUTE = ("auto", True, False)


class ConvergenceWarning(UserWarning):
    """Coordinate descent stopped at max_iter before the duality gap fell below tol."""


def _prepare(X: Any, y: Any, fit_intercept: bool, per_column: bool = False,
             scan: bool = True):
    """Fortran float64 X (with ``scan=False``, a C-ordered array may stay so), float64 y, their
    means (zeros without an intercept), names and e.

    X is multiplied by 2**-e (exact; e = 0 unless max|x| is beyond about 2**200 or below
    2**-200) so that sums of squares and cross products stay in range; the means are those of
    the rescaled X. Coefficients found on it are 2**e times those of X. With ``per_column``
    (for selections that do not depend on each column's scale) e is an array: column j is
    multiplied by 2**-e_j, and only columns of extreme magnitude are touched.

    ``scan=False`` (no intercept only): X is neither checked for NaN and infinities nor
    rescaled (e = 0): the caller's core function checks it in its own first read
    (``check_exponent``) and asks for the full preparation when that check fails. A C-ordered
    array then stays in C order (float64 without a copy): the caller's core function reads it
    as it is.
    """
    # (Not when a float64 row spans whole 4 KiB pages, n_features a multiple of 512: the
    # samples of a column then share cache sets, and the core's reads of single columns cost
    # more than the copy saves; COIL-20's 1024 pixels took 8.9 ms against 7.8.)
    keep_rows = (not scan and isinstance(X, np.ndarray) and X.ndim == 2
                 and X.flags.c_contiguous and not X.flags.f_contiguous
                 and X.shape[1] % 512 != 0)
    cx = check_X(X, order="C" if keep_rows else "F", float64=True, check_finite=False)
    if not scan:
        if fit_intercept:
            raise AssertionError("_prepare: scan=False needs fit_intercept=False")
        yv = check_y_real(y, cx.values.shape[0])
        e = np.zeros(cx.values.shape[1], dtype=np.int64) if per_column else 0
        return (cx.values, yv, np.zeros(cx.values.shape[1]), 0.0, cx.feature_names, e)
    # One read of X for the finiteness check and the range (max |x|, of each column with
    # per_column): NumPy's checks cost a tenth of an OMP call on gene-expression data.
    if per_column:
        finite, top = column_scan(cx.values)
    else:
        finite, top = cx.finite_and_top()
    if not finite:  # raises the error of check_X for NaN or inf
        require_finite(cx.values)
    values, e = (exact_rescale_columns(cx.values, top=top) if per_column
                 else exact_rescale(cx.values, top=top))
    yv = check_y_real(y, values.shape[0])
    if check_bool(fit_intercept, "fit_intercept"):
        x_mean = values.mean(axis=0)
        y_mean = float(yv.mean())
        if (values.flags.f_contiguous and values.flags.writeable
                and not (isinstance(X, np.ndarray) and np.may_share_memory(values, X))):
            values -= x_mean  # centred in the copy validation made (never the caller's X)
        else:
            values = np.asfortranarray(values - x_mean)
        yv = yv - y_mean
    else:
        x_mean = np.zeros(values.shape[1])
        y_mean = 0.0
    return values, yv, x_mean, y_mean, cx.feature_names, e


def _nothing_to_explain(yv: np.ndarray, fit_intercept: bool) -> bool:
    """Whether y has nothing to explain: all zeros, or constant with an intercept (centred to
    zeros, or to the rounding of its mean: equal values, not zeros)."""
    return bool(yv.size) and (not np.any(yv) or (fit_intercept and np.ptp(yv) == 0))


def _warn_nothing_to_explain(yv: np.ndarray, fit_intercept: bool, what: str,
                             selected_any: bool = True) -> None:
    """A y with nothing to explain makes every column's correlation with the residual 0: the
    selection is then the column order, or nothing where the search stops on scores of 0
    (``selected_any`` False), which a warning says (EqualScoresWarning)."""
    if _nothing_to_explain(yv, fit_intercept):
        outcome = ("the selection is only the column order" if selected_any
                   else "no feature is selected")
        warnings.warn(f"{what}: y is {'constant' if fit_intercept else 'all zeros'}, so no "
                      f"feature explains any of it and {outcome}", EqualScoresWarning,
                      stacklevel=3)


def _check_n_features(n_features: Any, available: int) -> int:
    n_features = check_int(n_features, "n_features")
    if n_features > available:
        raise ValueError(
            f"n_features: asked for {n_features} features but X has only {available}"
        )
    return n_features


def _check_tol(tol: Any) -> float:
    tol = check_real(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol: must be >= 0, got {tol}")
    return tol


class _Scaled:
    """y of a least-squares selection scaled by a power of two, as ``_prepare`` scales X
    (X by 2^-ex, y by 2^-ey; both 0 for ordinary data), and the way back to the caller's units.
    Squares of y (the RSS) and coef^2 / [(X^T X)^{-1}]_jj overflow or fall into subnormals for
    extreme y as they do for extreme X; a power of two changes no rounding, so the selection is
    the one the unscaled data define."""

    def __init__(self, values: np.ndarray, yv: np.ndarray, ex: Any) -> None:
        self.values, self.ex = values, np.asarray(ex, dtype=np.int64)
        self.yv, self.ey = exact_rescale(yv)

    @property
    def top(self) -> tuple[float, float]:
        """max |X| and max |y| in the caller's units (for the error message only: a pass over
        X that an ordinary run does not pay)."""
        with np.errstate(over="ignore"):
            top_x = (np.ldexp(np.abs(self.values).max(axis=0), self.ex) if self.values.size
                     else 0.0)
        return float(np.max(top_x)), math.ldexp(max_abs(self.yv), self.ey)

    def rss(self, rss):
        """A residual sum of squares (or minus one) in the caller's units."""
        return self._back(rss, 2 * self.ey)

    def coef(self, coef: np.ndarray, selected: np.ndarray) -> np.ndarray:
        """Coefficients of the selected columns (in that order) in the caller's units."""
        return self._back(coef, self.ey - (self.ex[selected] if self.ex.ndim else self.ex))

    def _back(self, a, exponent):
        if not np.any(exponent):
            return a
        with np.errstate(over="ignore", under="ignore"):
            out = np.ldexp(a, exponent)
        lost = ~np.isfinite(out) | ((a != 0) & (np.abs(out) < np.finfo(np.float64).tiny))
        if np.any(lost):
            raise ValueError(
                "y: the residual sums of squares or coefficients lie outside the float64 range "
                f"(max |X| = {self.top[0]:.3g}, max |y| = {self.top[1]:.3g}); multiply or "
                "divide X or y by a constant (the selection does not depend on their scale)")
        return out

    def hook(self, progress: Progress):
        """progress.hook with the score (minus the RSS, units of y squared) in the caller's
        units (+-inf or 0 where they cannot hold it; the result then raises the error above)."""
        return unscaled_hook(progress.hook, self.ey, 2)


def _linear_result(out: Any, n_total: int, x_mean, y_mean: float, feature_names,
                   y_sq: float, scaled: _Scaled, backward: bool = False) -> LinearResult:
    selected = np.asarray(out.selected, dtype=np.int64)
    coef_scaled = np.asarray(out.coef, dtype=np.float64)
    coef = scaled.coef(coef_scaled, selected)
    rss = scaled.rss(np.asarray(out.rss, dtype=np.float64))
    support = np.zeros(n_total, dtype=bool)
    support[selected] = True
    # x_mean is that of the rescaled X, the coefficients for it map onto y in y's units.
    intercept = (float(y_mean - np.ldexp(x_mean[selected] @ coef_scaled, scaled.ey))
                 if selected.size else float(y_mean))
    final = float(rss[-1]) if rss.size else float(scaled.rss(y_sq))
    return LinearResult(
        support=support, selected=selected, score=0.0 - final, history=0.0 - rss,
        feature_names=feature_names, coef=coef, intercept=intercept,
        residual_norms=np.sqrt(rss),
        eliminated=np.asarray(out.eliminated, dtype=np.int64) if backward else None,
        stopped_early=bool(out.stopped_early or out.stopped_by_callback))


def omp(X: Any, y: Any, n_features: int, *, method: str = "qr", criterion: str = "exact",
        fit_intercept: bool = False, tol: float = 1e-10, n_jobs: int | None = None,
        callback: Callable[[StepState], Any] | None = None, verbose: bool = False
        ) -> LinearResult:
    """Orthogonal matching pursuit as defined in the book (Shalev-Shwartz and Ben-David, ch. 25).

    Starts from the empty set I. Each round, u_j is column X_j minus its projection on the
    span of X_I, and the column with the largest ``<u_j, y>^2 / ||u_j||^2`` (the decrease of
    the residual sum of squares when j joins I) is added, among the columns with
    ``||u_j|| > tol * ||X_j||``. The least-squares fit on I is recomputed every round.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features_total)
        Converted to float64 (float32 included). Method "qr" without an intercept reads a
        C-ordered float64 array as it is (unless its rows are whole 4 KiB pages, a multiple of
        512 features); otherwise X is copied once, in Fortran order. The result does not depend
        on the order.
    y : array-like of shape (n_samples,)
    n_features : int
        Number of rounds (columns to select); more than X has is a ValueError.
    method : {"qr", "svd"}
        "qr" (default) keeps an orthonormal basis of X_I that grows by one re-orthogonalised
        vector per round and updates ``<u_j, y>`` and ``||u_j||^2`` of every column with one
        pass over X: O(n_samples * n_features_total) per round. "svd" is the book's procedure
        for numerical stability: an SVD basis of X_I and the explicit u_j of every column each
        round, O(n_samples * n_features_total * round); the reference.
    criterion : {"exact", "gradient", "coordinate"}
        The selection rule. "exact" is the one above; "gradient" takes the largest
        ``|<X_j, r>|`` with r the current residual (classic OMP, the book's largest gradient
        coordinate); "coordinate" the best single-coordinate step, ``<X_j, r>^2 / ||X_j||^2``.
        Whatever the rule, the coefficients are refitted by least squares every round.
    fit_intercept : bool
        Centre the columns of X and y first; the intercept is reported.
    tol : float
        Relative threshold on the residual part of a column: X_j can be added only while
        ``||u_j|| > tol * ||X_j||``. A zero column never can.
    n_jobs : int, optional
        Threads for the pass over X (the result does not depend on it).
    callback : callable(StepState) -> bool, optional
        Called after every round but the last with ``step`` = the round, ``score`` = minus the
        RSS and ``selection`` = the columns chosen so far. Return True to stop there.
    verbose : bool

    Returns
    -------
    LinearResult
        ``selected`` in the order chosen, ``coef`` (least squares on them, same order),
        ``residual_norms`` = ||y - X_I coef|| after every round, ``history`` = minus the residual
        sum of squares after every round, ``score`` = its last value. When no column has a
        residual part above ``tol`` (or the callback said stop) the search ends early: fewer
        than ``n_features`` columns are returned and ``stopped_early`` is True. With method
        "qr" it also ends when no column would lower the RSS, every score being exactly zero
        (the residual is zero, y in the span of the columns chosen); method "svd" and
        scikit-learn's ``orthogonal_mp`` carry a residual at rounding level there and go on
        picking columns by it (with coefficients of about 1e-16). Ties go to the
        lowest column index; scores within a relative 1e-10 of the best count as tied, so that
        an exact tie (two columns with the same part outside the span) is not decided by
        rounding.
    """
    check_option(method, "method", OMP_METHODS)
    check_option(criterion, "criterion", OMP_CRITERIA)
    tol = _check_tol(tol)
    threads = resolve_n_jobs(n_jobs)
    # The gradient rule |<X_j, r>| depends on each column's scale; the others do not.
    per_column = criterion != "gradient"
    # Without an intercept, method "qr" checks X (finite, columns in range) in the read that
    # builds its float32 copy; X is checked and rescaled here only when that check fails.
    own_check = method == "qr" and not check_bool(fit_intercept, "fit_intercept")
    values, yv, x_mean, y_mean, names, e = _prepare(X, y, fit_intercept, per_column,
                                                    scan=not own_check)
    n_features = _check_n_features(n_features, values.shape[1])
    nothing = _nothing_to_explain(yv, fit_intercept)
    scaled = _Scaled(values, yv, e)
    progress = Progress("omp", callback, verbose, total=n_features)

    def run(check_exponent: int):
        return _core.omp(scaled.values, scaled.yv, n_features, method, criterion, tol, threads,
                         scaled.hook(progress) if progress.active else None, check_exponent)

    try:
        out = run(SAFE_EXPONENT_FLOAT64 if own_check else 0)
        if out.needs_preparation:  # NaN, infinity or a column of extreme magnitude
            # (from the converted X: no second conversion; the names are the first call's)
            values, yv, x_mean, y_mean, _, e = _prepare(values, yv, fit_intercept, per_column)
            scaled = _Scaled(values, yv, e)
            out = run(0)
    finally:
        progress.close()
    if nothing:
        _warn_nothing_to_explain(yv, fit_intercept, "omp",
                                 selected_any=len(np.asarray(out.selected)) > 0)
    return _linear_result(out, values.shape[1], x_mean, y_mean, names,
                          float(scaled.yv @ scaled.yv), scaled)


def backward_least_squares(X: Any, y: Any, n_features: int, *, fit_intercept: bool = False,
                           tol: float = 1e-10, n_jobs: int | None = None,
                           callback: Callable[[StepState], Any] | None = None,
                           verbose: bool = False) -> LinearResult:
    """Backward elimination for least squares (book section 25.1.2).

    Starts from all columns and repeatedly removes the one whose removal raises the residual
    sum of squares least, ``coef_j^2 / [(X_I^T X_I)^{-1}]_jj``, until ``n_features`` remain.
    It runs on the same incremental orthonormal basis as ``omp(method="qr")``: a removal is a
    Givens downdate of the QR factors plus one pass over X.

    Columns that lie in the span of lower-indexed columns (within ``tol``, relative to the
    column's norm; always the case for the surplus when n_features_total > n_samples) cannot
    be part of a unique least-squares fit: they are eliminated first, highest index first,
    at no cost. If ``n_features`` exceeds the rank, the surviving dependent columns get
    coefficient 0. ``callback(StepState)`` is called after every removal by cost but the last
    (``step`` = removals so far, ``score`` = minus the RSS, ``selection`` = the columns left);
    True stops there (``stopped_early``).

    Returns
    -------
    LinearResult
        ``selected`` = the kept columns in increasing index order, ``coef`` their least-squares
        coefficients, ``eliminated`` = the removed columns in removal order, ``history`` =
        minus the RSS of the fit on all columns, then after every removal (so
        ``len(eliminated) + 1`` entries), ``residual_norms`` their square roots.
    """
    tol = _check_tol(tol)
    threads = resolve_n_jobs(n_jobs)
    values, yv, x_mean, y_mean, names, e = _prepare(X, y, fit_intercept, per_column=True)
    n_features = _check_n_features(n_features, values.shape[1])
    _warn_nothing_to_explain(yv, fit_intercept, "backward_least_squares")
    scaled = _Scaled(values, yv, e)
    progress = Progress("backward_least_squares", callback, verbose)
    try:
        out = _core.backward_least_squares(scaled.values, scaled.yv, n_features, tol, threads,
                                           scaled.hook(progress) if progress.active else None)
    finally:
        progress.close()
    return _linear_result(out, values.shape[1], x_mean, y_mean, names,
                          float(scaled.yv @ scaled.yv), scaled, backward=True)


def _check_alphas(alphas: Any) -> np.ndarray:
    if np.ndim(alphas) != 1 or np.size(alphas) == 0:
        raise ValueError("alphas: expected a non-empty 1-D array of penalties")
    arr = check_vector(alphas, "alphas")
    if (arr < 0).any():
        raise ValueError("alphas: penalties must be >= 0")
    return as_contiguous(np.sort(arr)[::-1], np.float64)


def _alpha_grid(Xy: np.ndarray, n_samples: int, n_alphas: int, eps: float) -> np.ndarray:
    """scikit-learn's grid, but for X^T y = 0 only: scikit-learn also puts every penalty at
    1e-15 when alpha_max is below it, which gives the all-zero path on data of small units
    (y ~ 1e-20); fastfs's grid scales with X and y."""
    alpha_max = float(np.abs(Xy).max()) / n_samples
    if alpha_max == 0.0:
        return np.full(n_alphas, np.finfo(np.float64).resolution)
    return np.geomspace(alpha_max, alpha_max * eps, num=n_alphas)


def _require_finite_gram(yv: np.ndarray, what: str) -> None:
    """Refuse a y so large that ||y||^2 (the scale of the duality gap) is not finite."""
    with np.errstate(over="ignore"):
        y_sq = float(yv @ yv) if yv.size else 0.0
    if not np.isfinite(y_sq):
        raise ValueError(f"y: its sum of squares overflows float64, so {what} cannot measure "
                         "convergence; divide y by a power of ten (the solution scales with it)")


def _run_path(values: np.ndarray, yv: np.ndarray, alphas: np.ndarray, tol: float,
              max_iter: int, precompute: Any, threads: int, Xy: np.ndarray | None = None,
              hook: Any = None):
    m, n = values.shape
    use_gram = (m >= n) if precompute == "auto" else bool(precompute)
    if use_gram:
        guard_square_matrix(n, 8, "the LASSO with precompute=True (the Gram matrix X^T X)",
                            "pass precompute=False, or raise fastfs.config.max_memory")
        G = np.asfortranarray(values.T @ values)
        if Xy is None:
            Xy = values.T @ yv
        return _core.lasso_path_gram(G, np.ascontiguousarray(Xy), float(yv @ yv), m, alphas,
                                     tol, max_iter, hook)
    return _core.lasso_path_data(values, yv, alphas, tol, max_iter, threads, hook)


def _warn_unconverged(gaps: np.ndarray, tol: float, yv: np.ndarray, what: str) -> None:
    if (gaps > tol * float(yv @ yv)).any():
        warnings.warn(f"{what}: coordinate descent reached max_iter before the duality gap fell "
                      "below tol * ||y||^2; raise max_iter or tol", ConvergenceWarning,
                      stacklevel=3)


def lasso_path(X: Any, y: Any, *, alphas: Any = None, n_alphas: int = 100, eps: float = 1e-3,
               tol: float = 1e-7, max_iter: int = 1000, precompute: Any = "auto",
               n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
               verbose: bool = False) -> LassoPath:
    """The LASSO along a path of penalties (Shalev-Shwartz and Ben-David, ch. 25).

    For each alpha, minimises ``(1 / (2 n_samples)) ||X w - y||^2 + alpha ||w||_1`` by cyclic
    coordinate descent with soft thresholding, starting from the previous alpha's solution
    (extrapolated linearly along the path when that lowers the objective). Each pass over all
    features computes the duality gap; features that Gap Safe screening (Ndiaye et al., 2017)
    proves zero are dropped, and the sweeps run on a working set (the nonzero coefficients
    and the features violating the optimality condition), accelerated by Anderson
    extrapolation and by Newton steps on the current support and signs. An alpha is done when
    the gap of ``0.5 ||r||^2 + n_samples alpha ||w||_1`` is at most ``tol * ||y||^2``
    (scikit-learn's rule, so its ``tol`` means the same).
    Like scikit-learn's ``lasso_path``, no intercept is fitted: centre X and y first if needed.

    Parameters
    ----------
    alphas : array-like, optional
        Penalties (>= 0), used in decreasing order. Default: ``n_alphas`` values spaced
        geometrically from ``alpha_max = max_j |X_j^T y| / n_samples`` (where w = 0 is optimal)
        down to ``eps * alpha_max``, scikit-learn's grid.
    n_alphas, eps : grid size and ratio (0 < eps < 1) when ``alphas`` is None.
    tol : float
        Duality-gap tolerance relative to ||y||^2.
    max_iter : int
        Passes over all features per alpha (and sweeps per working set); a
        ``ConvergenceWarning`` says when it was not enough.
    precompute : {"auto", True, False}
        Work on the covariance G = X^T X (updates of X^T r in O(n_features) per coordinate)
        instead of the data (O(n_samples)). "auto" does when n_samples >= n_features; G is
        computed once by NumPy's BLAS.
    n_jobs : int, optional
        Threads for the duality-gap pass over X in the data form (the sweeps are sequential).
        An explicit value also bounds NumPy's BLAS during the call (the products X^T X and
        X^T y); None leaves BLAS to its own default. BLAS's sums depend on its thread count,
        so with the covariance form the coefficients for different ``n_jobs`` can differ by
        rounding (about 1e-15 relative; the selections do not); ``precompute=False`` gives
        the same bits for every ``n_jobs``.
    callback : callable, optional
        Called after each alpha with a :class:`~fastfs.StepState`: ``step`` the 1-based
        index of the alpha, ``selection`` the features with a nonzero coefficient there,
        ``score`` NaN (the path has no single score). Returning True stops the path: the
        result then holds the alphas done so far and ``stopped_early`` is True.
    verbose : bool
        Progress bar (tqdm) or one line per alpha on stderr.

    Returns
    -------
    LassoPath
        ``alphas`` (decreasing), ``coefs`` (n_features, n_alphas), ``dual_gaps``, ``n_iter``,
        ``stopped_early``.
    """
    n_alphas = check_int(n_alphas, "n_alphas")
    eps = check_real(eps, "eps", positive=True)
    if alphas is None and not eps < 1:
        raise ValueError(f"eps: must be < 1 (the grid runs down from alpha_max to eps * "
                         f"alpha_max), got {eps!r}")
    tol = _check_tol(tol)
    max_iter = check_int(max_iter, "max_iter")
    if not (isinstance(precompute, (bool, np.bool_)) or precompute == "auto"):
        raise ValueError(f"precompute: unknown value {precompute!r}; valid options are 'auto', "
                         "True, False")
    threads = resolve_n_jobs(n_jobs)
    progress = Progress("lasso_path", callback, verbose,
                        total=n_alphas if alphas is None else None)
    try:
        with blas_threads(threads):
            return _lasso_path(X, y, alphas, n_alphas, eps, tol, max_iter, precompute, threads,
                               progress)
    finally:
        progress.close()


def _lasso_path(X, y, alphas, n_alphas, eps, tol, max_iter, precompute, threads,
                progress: Progress) -> LassoPath:
    values, yv, _, _, names, e = _prepare(X, y, False)
    # y by 2**-ey when extreme (the solution is linear in y and the penalties: alpha ||w||_1
    # has the units of X y), so neither ||y||^2 nor the duality gap overflow or vanish.
    yv, ey = exact_rescale(yv)
    n_path = n_alphas if alphas is None else np.size(alphas)
    guard_memory(8 * values.shape[1] * n_path, "fastfs.lasso_path",
                 f"a {values.shape[1]} x {n_path} matrix of coefficients",
                 "use fewer alphas, or raise fastfs.config.max_memory")
    Xy = None
    if alphas is None:
        Xy = values.T @ yv
        work = _alpha_grid(Xy, values.shape[0], n_alphas, eps)
        grid = unscale(work, 1, e + ey, "the penalties")
    else:
        grid = _check_alphas(alphas)
        # alpha ||w||_1 with w on X * 2**-e and y * 2**-ey: the penalty has the units of X y.
        work = (np.array([scale_parameter(a, 1, e + ey, "alphas") for a in grid]) if e + ey
                else grid)
    _require_finite_gram(yv, "lasso_path")
    out = _run_path(values, yv, work, tol, max_iter, precompute, threads, Xy,
                    progress.hook if progress.active else None)
    _warn_unconverged(out.gaps, tol, yv, "lasso_path")
    done = out.coefs.shape[1]  # fewer than the grid when the callback stopped the path
    return LassoPath(alphas=np.asarray(grid)[:done],
                     coefs=unscale(out.coefs, -1, e - ey, "the coefficients"),
                     dual_gaps=unscale(out.gaps, 2, ey, "the duality gaps", strict=False),
                     n_iter=np.asarray(out.n_iter, dtype=np.int64), feature_names=names,
                     stopped_early=bool(out.stopped_early))


def lasso(X: Any, y: Any, alpha: float, *, fit_intercept: bool = False, tol: float = 1e-7,
          max_iter: int = 1000, precompute: Any = "auto", n_jobs: int | None = None
          ) -> LinearResult:
    """The LASSO at one penalty, as a feature subset (Shalev-Shwartz and Ben-David, ch. 25).

    Minimises ``(1 / (2 n_samples)) ||X w + b - y||^2 + alpha ||w||_1`` (b = 0 unless
    ``fit_intercept``, which centres X and y first) by the coordinate descent of
    ``lasso_path``, from w = 0. The selected features are those with a nonzero coefficient.

    Returns
    -------
    LinearResult
        ``selected`` = the nonzero coefficients' columns, largest |coef| first (ties: lower
        index), ``coef`` in that order, ``intercept``, ``score`` = minus the residual sum of
        squares, ``history`` = [score], ``residual_norms`` = [||residual||].
    """
    alpha = check_real(alpha, "alpha")
    if alpha < 0:
        raise ValueError(f"alpha: must be >= 0, got {alpha}")
    tol = _check_tol(tol)
    max_iter = check_int(max_iter, "max_iter")
    if not (isinstance(precompute, (bool, np.bool_)) or precompute == "auto"):
        raise ValueError(f"precompute: unknown value {precompute!r}; valid options are 'auto', "
                         "True, False")
    threads = resolve_n_jobs(n_jobs)
    with blas_threads(threads):
        return _lasso(X, y, alpha, fit_intercept, tol, max_iter, precompute, threads)


def _lasso(X, y, alpha, fit_intercept, tol, max_iter, precompute, threads) -> LinearResult:
    values, yv, x_mean, y_mean, names, e = _prepare(X, y, fit_intercept)
    yv, ey = exact_rescale(yv)  # as in _lasso_path
    _require_finite_gram(yv, "lasso")
    out = _run_path(values, yv, np.array([scale_parameter(alpha, 1, e + ey, "alpha")]), tol,
                    max_iter, precompute, threads)
    _warn_unconverged(out.gaps, tol, yv, "lasso")
    w = out.coefs[:, 0]
    nz = np.flatnonzero(w)
    selected = nz[np.argsort(-np.abs(w[nz]), kind="stable")].astype(np.int64)
    coef = w[selected].copy()
    resid = yv - values[:, selected] @ coef
    rss_scaled = float(resid @ resid)
    rss = unscale(rss_scaled, 2, ey, "the residual sum of squares", strict=False)
    norm = unscale(math.sqrt(rss_scaled), 1, ey, "the residual norm", strict=False)
    support = np.zeros(values.shape[1], dtype=bool)
    support[selected] = True
    intercept = (float(y_mean - np.ldexp(x_mean[selected] @ coef, ey)) if selected.size
                 else float(y_mean))
    coef = unscale(coef, -1, e - ey, "the coefficients")
    return LinearResult(support=support, selected=selected, score=-rss,
                        history=np.array([-rss]), feature_names=names, coef=coef,
                        intercept=intercept, residual_norms=np.array([norm]),
                        n_iter=int(np.asarray(out.n_iter)[0]))
