"""Feature weighting for regression (Navot's thesis, ch. 4): the leave-one-out soft kNN
criterion, RGS
(gradient ascent on the weights) and SKS (each feature alone). The neighbour work runs in C++,
one weighted distance row per sample; nothing m x m is stored, except by the forward selection,
which uses the shared distance state."""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Callable

import numpy as np

import fastfs._core as _core
from ._progress import Progress, run_pass
from ._results import RGSResult, StepState, WeightResult, ranking_by_weight, warn_if_equal
from ._scale import (
    SCREEN_EXPONENT,
    exact_rescale,
    scale_parameter,
    unscale,
    unscaled_hook,
)
from ._validation import (
    check_int,
    check_option,
    check_random_state,
    check_real,
    check_sample_order,
    check_weights,
    check_X,
    check_y_real,
    guard_memory,
    resolve_n_jobs,
)

LEARNING_RATES = ("auto", "invscaling")


def default_n_neighbors(n_samples: int) -> int:
    """The default k: ceil(log2(n_samples)), computed exactly on integers (1 for 2 samples)."""
    return max(1, (int(n_samples) - 1).bit_length())


def _prepare(X: Any, y: Any):
    """(cx, target, values, e, g): validated X and y, X rescaled exactly by 2**-e and y by
    2**-g into safe ranges (fastfs._scale). The estimates g_hat carry the units of y, e(w) and
    the gradient those of y squared; the neighbours and kernel weights do not depend on y, so
    a y of 1e100 or 1e-100 gives, bit for bit, the weights of that y at an ordinary scale."""
    cx = check_X(X)
    target = check_y_real(y, cx.values.shape[0])
    if target.size and target.min() == target.max():
        warnings.warn("y: is constant, so every feature and every weighting scores the same "
                      "(there is nothing to learn)", UserWarning, stacklevel=3)
    values, e = exact_rescale(cx.values, SCREEN_EXPONENT)
    target, g = exact_rescale(target)
    return cx, target, values, e, g


def _in_units_of_y(values: Any, power: int, g: int, what: str, *, strict: bool = True) -> Any:
    """Outputs in units of y**power computed on y * 2**-g, in the units of the given y (a
    ValueError naming y when float64 cannot hold them)."""
    return unscale(values, power, g, what, strict=strict, source="y")


def _warn_if_equal(weights: np.ndarray, target: np.ndarray, what: str, noun: str,
                   stacklevel: int) -> None:
    """EqualScoresWarning for equal weights, unless y is constant (``_prepare`` said so)."""
    if target.size and target.min() != target.max():
        warn_if_equal(weights, what, noun, "soft_knn", stacklevel=stacklevel)


def _n_neighbors(n_neighbors: Any, n_samples: int) -> int:
    if n_neighbors is None:
        return default_n_neighbors(n_samples)
    return check_int(n_neighbors, "n_neighbors")


def _beta(beta: Any, e: int = 0) -> float:
    """The core's convention: 0 asks for the default. beta has the units of X squared, so it
    is rescaled with X."""
    if beta is None:
        return 0.0
    return scale_parameter(check_real(beta, "beta", positive=True), 2, e, "beta")


_NUMERICS = """
    With d_w(x, x') = sum_i w_i^2 (x_i - x'_i)^2 and the k = min(n_neighbors, n_samples - 1)
    nearest other samples N(x) under d_w (a sample is never its own neighbour; equal distances go
    to the lower sample index), the leave-one-out estimate is
    ``g_hat(x) = sum_{x' in N(x)} p(x') y(x')`` with kernel weights
    ``p(x') = exp(-(d_w(x, x') - d_min) / beta) / Z``, d_min the nearest of the k distances and Z
    the sum that makes them add up to 1. The shift by d_min leaves the kernel weights
    unchanged and keeps the largest term at exactly 1, so the sum cannot underflow however far
    the neighbours are. Equal distances get equal weights (so if all k are equal the weights
    are uniform, whatever beta is)."""


def _knn_regression(X: Any, y: Any, weights: Any = None, *, n_neighbors: int | None = None,
                    beta: float | None = None, n_jobs: int | None = None) -> dict:
    """knn_regression_score's work: a dict with ``estimates`` (g_hat per sample), ``score``,
    ``beta`` (the one used) and ``k``."""
    cx, target, values, e, g = _prepare(X, y)
    m, n = cx.values.shape
    w = check_weights(weights, n)
    # The weights enter d_w as w * x: scaled by a power of two 2^-f (exact) so the largest is
    # in [1/2, 1), with beta in the same units; the score depends on w only through d_w / beta,
    # so weights of 1e200 or 1e-200 give the answer of their ratios (they overflowed to NaN or
    # vanished to the all-zero weights' score).
    w, f = exact_rescale(w, 0)
    k = _n_neighbors(n_neighbors, m)
    if beta is not None:
        check_real(beta, "beta", positive=True)  # its own errors first (not the scale's)
    try:
        b = _beta(beta, e + f)
    except ValueError:
        raise ValueError(f"beta: {beta!r} cannot be represented on the scale of the weighted "
                         f"distances d_w (max |w| ~ 2**{f}, max |x| ~ 2**{e}); pass a beta on "
                         "that scale, or beta=None for the default") from None
    out = _core.knn_regression(values, target, w, k, b, resolve_n_jobs(n_jobs))
    used = unscale(float(out.beta), 2, e + f, "beta", strict=False) if e + f else out.beta
    return {"estimates": _in_units_of_y(out.estimates, 1, g, "the estimates g_hat"),
            "score": _in_units_of_y(float(out.score), 2, g, "e(w)"), "beta": used, "k": out.k}


def knn_regression_score(X: Any, y: Any, weights: Any = None, *, n_neighbors: int | None = None,
                         beta: float | None = None, n_jobs: int | None = None) -> float:
    """Leave-one-out soft kNN regression evaluation e(w) = -(1/2) sum_x (y(x) - g_hat(x))^2
    (Navot's thesis, ch. 4). Higher is better; 0 means every sample is predicted exactly.
    {numerics}

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), real targets.
    weights : array-like of shape (n_features,), optional
        The feature weights w (they enter squared); None means all ones. With the default
        beta only their ratios matter (c w scores as w for any c > 0, 1e-300 or 1e300
        included); a given beta is in the units of d_w.
    n_neighbors : int, optional
        k; default ceil(log2(n_samples)) (Navot's thesis, ch. 4).
    beta : float > 0, optional
        Kernel width; default half the mean squared distance d_w from each sample to its k
        nearest neighbours, under these weights (the thesis' rule, which is "at w = 1" when
        ``weights`` is None).
    n_jobs : int, optional
        Threads (scikit-learn rules); the score is the same for any value.

    Returns
    -------
    float
    """
    return float(_knn_regression(X, y, weights, n_neighbors=n_neighbors, beta=beta,
                                 n_jobs=n_jobs)["score"])


if knn_regression_score.__doc__:  # None under python -OO
    knn_regression_score.__doc__ = knn_regression_score.__doc__.replace("{numerics}", _NUMERICS)


def _learning_rates(learning_rate: Any, n_steps: int, target: np.ndarray | None = None
                    ) -> np.ndarray:
    """eta_t for t = 1..n_steps, evaluated here so the C++ loop never calls back into Python.

    "auto" is 1 / var(y) (1 for a constant y): the gradient of e has the units of y squared, so
    this step is the one of the standardised target and does not depend on the units of y.
    """
    if isinstance(learning_rate, str):
        check_option(learning_rate, "learning_rate", LEARNING_RATES)
        if learning_rate == "auto":
            var = float(np.var(target)) if target is not None else 0.0
            return np.full(n_steps, 1.0 / var if var > 0 and np.isfinite(1.0 / var) else 1.0)
        return 1.0 / np.sqrt(np.arange(1, n_steps + 1, dtype=np.float64))
    if callable(learning_rate):
        eta = np.empty(n_steps)
        for t in range(1, n_steps + 1):
            value = learning_rate(t)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"learning_rate: the callable returned "
                                f"{type(value).__name__} for step {t}; expected a real number")
            eta[t - 1] = float(value)
        bad = np.flatnonzero(~np.isfinite(eta) | (eta < 0))
        if bad.size:
            t = int(bad[0]) + 1
            raise ValueError(f"learning_rate: the callable returned {eta[t - 1]} for step {t}; "
                             "expected a finite number >= 0")
        return eta
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
        raise TypeError("learning_rate: expected a number, 'invscaling' or a callable, got "
                        f"{type(learning_rate).__name__}")
    value = check_real(learning_rate, "learning_rate")
    if value < 0:
        raise ValueError(f"learning_rate: must be >= 0, got {value}")
    return np.full(n_steps, value)


def rgs(X: Any, y: Any, *, n_neighbors: int | None = None, beta: float | None = None,
        n_epochs: int = 1, learning_rate: Any = "auto", n_restarts: int = 1,
        sample_order: Any = None, random_state: Any = None, n_jobs: int | None = None,
        callback: Callable[[StepState], Any] | None = None,
        verbose: bool = False) -> RGSResult:
    """RGS: stochastic gradient ascent on the soft kNN regression evaluation e(w) (Navot, ch. 4).

    w starts at all ones. Each step t takes a sample x (consecutive random permutations of the
    samples, one per epoch), finds its k nearest other samples under the current weights and
    adds ``eta_t * d e_x / d w`` to w, with the neighbour set held fixed (Navot's thesis, ch. 4):

        d e_x / d w_i = -(2 w_i / beta) (y(x) - g_hat(x)) sum_{x'} p(x') y(x')
                        (delta_i(x') - sum_{x''} p(x'') delta_i(x'')),

    delta_i(x') = (x_i - x'_i)^2. (The thesis prints a sum where this difference belongs; the
    tests check the formula against central finite differences.) It is computed as
    ``sum_{x'} p(x') (y(x') - g_hat(x)) delta_i(x')``, the same value in one pass.
    {numerics}

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), real targets.
    n_neighbors : int, optional
        k; default ceil(log2(n_samples)).
    beta : float > 0, optional
        Default: half the mean squared distance from each sample to its k nearest neighbours at
        w = 1, fixed for the whole run. If that is 0 (every sample has k exact duplicates) a
        ValueError asks for an explicit beta.
    n_epochs : int
        Passes over the samples per restart (T = n_epochs * n_samples steps).
    learning_rate : "auto", float >= 0, "invscaling" or callable
        eta_t for t = 1..T (counted per restart). The gradient has the units of y squared, so a
        fixed number means different things for different units of y (with eta = 1, as in the
        thesis, a target with standard deviation 77 takes steps so large that w freezes after
        the first epoch). "auto" (default) is eta = 1 / var(y), the thesis' eta = 1 on the
        standardised target (y - mean) / std: the weights are then the same for y and
        a * y + b. A constant is used as given (1 reproduces the thesis on a target in its
        units); "invscaling" = 1 / sqrt(t); a callable t -> eta_t is evaluated for every t
        before the run starts.
    n_restarts : int
        Independent runs from w = 1 with different sample orders; the one with the largest e(w)
        at its final w wins (the first on ties).
    sample_order : array of sample indices, optional
        Visit exactly these samples in this order in a single run (n_restarts must be 1 and
        n_epochs 1); for following a run step by step.
    random_state, n_jobs : see the package conventions; the result is the same for any n_jobs.
    callback : callable(StepState) -> bool, optional
        Called after every step with ``step``, ``restart``, ``score`` = the sum of
        -(1/2)(y - g_hat)^2 over the samples visited so far in this restart (each at the w
        before its step) and ``selection`` = the current w. Return True to stop; the best
        finished restart, or the current one, is returned.
    verbose : bool

    Returns
    -------
    RGSResult
        ``weights`` = w^2 / max(w^2) (all zero if w vanished), ``ranking`` by weight (ties to the
        lower index), ``score`` = e(w) at the returned raw w (``raw_weights``), i.e.
        ``knn_regression_score(X, y, res.raw_weights, n_neighbors=res.n_neighbors,
        beta=res.beta)``; ``restart_scores`` = e of every restart (``history`` is empty:
        RGS computes no score per step); ``n_neighbors`` (the k used),
        ``beta`` (the one used, in units of X squared: 0 or inf when X is so extreme that it
        does not fit in float64), ``best_restart``, ``stopped_early``. X and y of extreme
        magnitude are rescaled by powers of two first (exact): the weights do not depend on
        the units of X, and the scores carry those of y squared (a ValueError naming y when
        they do not fit in float64).
    """
    return _rgs(X, y, n_neighbors=n_neighbors, beta=beta, n_epochs=n_epochs,
                learning_rate=learning_rate, n_restarts=n_restarts, sample_order=sample_order,
                random_state=random_state, n_jobs=n_jobs, callback=callback, verbose=verbose)


def _rgs(X: Any, y: Any, *, n_neighbors, beta, n_epochs, learning_rate, n_restarts,
         sample_order, random_state, n_jobs, callback, verbose, first_restart: int = 0):
    """rgs with its restarts numbered from ``first_restart`` (restart r uses the random
    stream of restart first_restart + r): fastfs.dask runs restarts as separate tasks."""
    n_restarts = check_int(n_restarts, "n_restarts")
    n_epochs = check_int(n_epochs, "n_epochs")
    seed = check_random_state(random_state)
    threads = resolve_n_jobs(n_jobs)
    cx, target, values, e, g = _prepare(X, y)
    m = cx.values.shape[0]
    k = _n_neighbors(n_neighbors, m)
    b = _beta(beta, e)
    order = np.empty(0, dtype=np.int64)
    if sample_order is not None:
        if n_restarts != 1 or n_epochs != 1:
            raise ValueError("sample_order fixes a single run of its own length; pass "
                             "n_restarts=1 and n_epochs=1")
        order = check_sample_order(sample_order, m)
    n_steps = order.size if order.size else n_epochs * m
    # The learning rates and, per restart running at the same time, a visiting order.
    at_once = min(n_restarts, threads if threads > 0 else _core.default_threads())
    guard_memory(8 * n_steps * (1 + max(1, at_once)), "fastfs.rgs",
                 f"learning rates and visiting orders for {n_steps} steps",
                 "use fewer epochs, or raise fastfs.config.max_memory")
    eta = _learning_rates(learning_rate, n_steps, target)
    if g and not (isinstance(learning_rate, str) and learning_rate == "auto"):
        # eta has the units of 1 / y squared (the gradient those of y squared); "auto" is
        # 1 / var of the rescaled y already
        eta = _in_units_of_y(eta, 2, g, "learning_rate")
    progress = Progress("rgs", callback, verbose, total=n_steps * n_restarts)
    # the callback's score in units of y squared
    hook = unscaled_hook(progress.hook, g, 2) if progress.active else None
    try:
        out = _core.rgs(values, target, k, b, n_steps, eta, n_restarts, order, seed, threads,
                        hook, True, first_restart)
    finally:
        progress.close()
    if not np.all(np.isfinite(out.raw)):
        # steps of eta times a gradient in units of y squared: a fixed eta far too large for
        # y's units drives w past float64 (NaN weights and score, all-zero normalised weights)
        raise ValueError(
            "learning_rate: the weights overflowed float64 (a step is eta times a gradient in "
            "units of y squared, so a fixed eta fits one scale of y only); use "
            "learning_rate='auto' (1 / var(y), which does not depend on the units of y) or a "
            "smaller rate")
    weights = out.weights
    _warn_if_equal(weights, target, "rgs", "weight", stacklevel=5)
    return RGSResult(weights=weights, ranking=ranking_by_weight(weights),
                     score=float(_in_units_of_y(float(out.score), 2, g, "e(w)")),
                     restart_scores=_in_units_of_y(out.restart_scores, 2, g, "e(w)"),
                     feature_names=cx.feature_names,
                     raw_weights=out.raw, n_neighbors=int(out.k),
                     beta=float(unscale(float(out.beta), 2, e, "beta", strict=False)),
                     best_restart=int(out.best_restart),
                     stopped_early=bool(out.stopped_early))


if rgs.__doc__:
    rgs.__doc__ = rgs.__doc__.replace("{numerics}", _NUMERICS)


def sks(X: Any, y: Any, *, n_neighbors: int | None = None, beta: float | None = None,
        n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
        verbose: bool = False) -> WeightResult:
    """SKS: every feature scored alone by the soft kNN regression evaluation (Navot, ch. 4).

    ``weights[j] = knn_regression_score(X[:, [j]], y, n_neighbors=n_neighbors, beta=beta)``.
    With ``beta=None`` the default is computed on each feature alone (half the mean squared
    distance to the k nearest neighbours along that feature), so every feature is judged at its
    own scale. k defaults to ceil(log2(n_samples)).

    ``callback`` (callable(StepState) -> bool) is called after every step (a block of
    features: about 1/64 of them, at least one per thread) with ``step``, ``score`` NaN and
    ``selection`` = the scores so far (NaN for the features not reached yet). Returning True
    stops: the result then holds those scores (the features not reached are NaN and ranked
    last) and ``stopped_early`` is True. ``verbose=True`` shows a progress bar (tqdm) or one
    line per step on stderr.

    Returns
    -------
    WeightResult
        ``weights`` = e per feature (<= 0; higher is better), ``ranking`` best first (ties to the
        lower index), ``score`` NaN (no joint objective), ``stopped_early``.
    """
    cx, target, values, e, g = _prepare(X, y)
    k = _n_neighbors(n_neighbors, cx.values.shape[0])
    threads = resolve_n_jobs(n_jobs)
    scores, stopped = run_pass("sks", callback, verbose, lambda hook: _core.sks_scores(
        values, target, k, _beta(beta, e), threads, unscaled_hook(hook, g, 0, 2)))
    scores = _in_units_of_y(scores, 2, g, "the scores e")
    _warn_if_equal(scores, target, "sks", "score", stacklevel=4)
    return WeightResult(weights=scores, ranking=ranking_by_weight(scores), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))
