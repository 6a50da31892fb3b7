"""Neighbour-based feature weighting: Simba, Relief and ReliefF. Each step
reads one row of distances from a sample to all others in C++; nothing m x m is stored."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _core
from ._progress import Progress, run_pass
from ._results import StepState, WeightResult
from ._scale import unscale, unscaled_hook
from ._validation import (
    INDEX_MAX,
    check_int,
    check_option,
    check_random_state,
    check_real,
    guard_visiting_order,
    resolve_n_jobs,
)
from .margin import prepare_scaled, score_power, utility_beta

SIMBA_UTILITIES = ("linear", "sigmoid")


def _ranking(weights: np.ndarray) -> np.ndarray:
    """Feature indices, largest weight first; equal weights keep the lower index first."""
    return np.argsort(-weights, kind="stable")


def _check_sample_order(sample_order: Any, n_samples: int) -> np.ndarray:
    order = np.asarray(sample_order)
    if order.ndim != 1 or order.size == 0:
        raise ValueError("sample_order: expected a non-empty 1-D array of sample indices")
    if not np.issubdtype(order.dtype, np.integer):
        raise TypeError("sample_order: expected integer sample indices")
    if order.min() < 0 or order.max() >= n_samples:
        raise IndexError(f"sample_order: sample index out of range for {n_samples} samples")
    return order.astype(np.int64)


def simba(X: Any, y: Any, *, n_iter: int | None = None, n_restarts: int = 5,
          utility: str = "linear", beta: float = 1.0, sample_order: Any = None,
          random_state: Any = None, n_jobs: int | None = None,
          callback: Callable[[StepState], Any] | None = None,
          verbose: bool = False) -> WeightResult:
    """Simba: gradient ascent on the margin evaluation e(w) over feature weights (Navot, ch. 3).

    w starts at all ones. Each step takes a sample x, finds its nearest hit and miss under the
    current weighted distance, and adds to every w_i
    ``0.5 * u'(theta) * ((x_i - nm_i)^2 / ||x - nm||_w - (x_i - nh_i)^2 / ||x - nh||_w) * w_i``
    (a term whose distance is zero is skipped). A sample without a hit or a miss changes nothing.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype.
    n_iter : int, optional
        Steps per restart; default n_samples (one pass over a random permutation). More steps
        continue with further permutations.
    n_restarts : int
        Independent runs from w = 1 with different sample orders; the one with the largest
        e(w) is returned (the first on ties).
    utility : {"linear", "sigmoid"}
        "zero_one" has no gradient and is refused.
    beta : float, sigmoid slope (> 0).
    sample_order : array of sample indices, optional
        Visit exactly these samples, in this order, in a single run (for reproducing a run
        step by step); then ``n_restarts`` must be 1 and ``n_iter`` None.
    random_state, n_jobs : see the package conventions.
    callback : callable(StepState) -> bool, optional
        Called after every step with ``step``, ``restart``, ``score`` = sum of u(theta) over the
        samples visited so far in this restart, and ``selection`` = the current w (before
        squaring). Return True to stop; the best finished restart, or the current one if none
        finished, is returned (``stopped_early`` True).
    verbose : bool

    The linear step has the units of X (w grows in them), so Simba is not scale-free; the
    distances are taken under w scaled by a power of two, and X of extreme magnitude is
    rescaled by a power of two with the step scaled back (both exact), so that the answer is
    the one of the formula above, not of an overflow, for X up to about 1e300 and down to the
    subnormal range. With ``utility="sigmoid"`` the answer on c * X with beta / c equals the
    one on X with beta.

    Returns
    -------
    WeightResult
        ``weights`` = w^2 / max(w^2) (all zero if w vanished); ``ranking`` by weight;
        ``score`` = e(w / max|w|), i.e. ``margin_score(X, y, np.sqrt(weights))``; ``history``
        = e of every restart; ``stopped_early``.
    """
    check_option(utility, "utility", SIMBA_UTILITIES + ("zero_one",))
    if utility == "zero_one":
        raise ValueError("utility: 'zero_one' has no gradient, so Simba cannot use it; valid "
                         "options are 'linear', 'sigmoid'")
    beta = check_real(beta, "beta", positive=True)
    n_restarts = check_int(n_restarts, "n_restarts")
    steps = 0 if n_iter is None else check_int(n_iter, "n_iter", maximum=INDEX_MAX)
    seed = check_random_state(random_state)
    threads = resolve_n_jobs(n_jobs)
    cx, labels, values, e = prepare_scaled(X, y)
    # Restarts run side by side, each with its own visiting order.
    guard_visiting_order(steps, n_restarts, threads, "fastfs.simba")
    order = np.empty(0, dtype=np.int64)
    if sample_order is not None:
        if n_restarts != 1 or n_iter is not None:
            raise ValueError("sample_order fixes a single run of its own length; pass "
                             "n_restarts=1 and leave n_iter=None")
        order = _check_sample_order(sample_order, cx.values.shape[0])
    progress = Progress("simba", callback, verbose)
    power = score_power(utility)

    hook = unscaled_hook(progress.hook, e, power)
    # On X * 2**-e the linear step shrinks by 2**-e (it has the units of X): scaling it back
    # reproduces the run on X exactly. The sigmoid's step is unit-free once beta is rescaled.
    step_scale = float(np.ldexp(1.0, e)) if utility == "linear" else 1.0
    try:
        out = _core.simba(values, labels.codes, utility, utility_beta(utility, beta, e), steps,
                          n_restarts, order, seed, threads, hook if progress.active else None,
                          step_scale)
    finally:
        progress.close()
    weights = out["weights"]
    if not np.isfinite(weights).all():
        raise ValueError(
            f"X: its values (max |x| ~ 2**{e}) are so large that Simba's weights, whose steps "
            "have the units of X, overflow float64; divide X by a power of two (the linear "
            "utility's answer depends on the units of X) or use utility='sigmoid'")
    return WeightResult(weights=weights, ranking=_ranking(weights),
                        score=float(unscale(float(out["score"]), power, e, "the score")),
                        history=unscale(out["restart_scores"], power, e, "the restart scores"),
                        feature_names=cx.feature_names, stopped_early=bool(out["stopped_early"]))


_PASS_CALLBACK = """    callback : callable(StepState) -> bool, optional
        Called after every step (a block of visited samples: about 1/64 of them, at least 64)
        with ``step``, ``score`` NaN (no objective) and ``selection`` = {selection}. Return
        True to stop: the result then holds {stopped} and ``stopped_early`` is True.
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr."""


def relief(X: Any, y: Any, *, n_iter: int | None = None, random_state: Any = None,
           n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
           verbose: bool = False) -> WeightResult:
    """Relief (Kira and Rendell, as used in Navot's thesis).

    w starts at zero; for each visited sample x, ``w_i += (x_i - nm_i)^2 - (x_i - nh_i)^2`` with
    the nearest hit and miss under the plain Euclidean distance. With ``n_iter=None`` every
    sample is visited once (deterministic); otherwise ``n_iter`` samples are drawn as
    consecutive random permutations. Samples without a hit or a miss add nothing.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype.
    n_iter : int, optional
    random_state, n_jobs : see the package conventions.
{callback}

    Returns
    -------
    WeightResult
        Raw weights (not normalised; units of X squared) and the ranking by weight. Relief
        optimises no objective, so ``score`` is NaN. X with extreme values is rescaled by a
        power of two first (exact) and the weights scaled back; when they do not fit in float64
        (X beyond about 1e154 or near 1e-300) a ValueError says so. ``stopped_early`` as above.
    """
    steps = 0 if n_iter is None else check_int(n_iter, "n_iter", maximum=INDEX_MAX)
    seed = check_random_state(random_state)
    threads = resolve_n_jobs(n_jobs)
    cx, labels, values, e = prepare_scaled(X, y)
    # The visiting order (8 bytes a step; the hit / miss records are kept for a bounded chunk).
    guard_visiting_order(steps, 1, threads, "fastfs.relief")
    weights, stopped = run_pass("relief", callback, verbose, lambda hook: _core.relief(
        values, labels.codes, steps, seed, threads, unscaled_hook(hook, e, 0, 2)))
    weights = unscale(weights, 2, e, "the Relief weights")
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))


if relief.__doc__:  # None under python -OO
    relief.__doc__ = relief.__doc__.replace("{callback}", _PASS_CALLBACK.format(
        selection="the weights so far",
        stopped="the weights of the samples visited so far (exactly what a run visiting only "
                "those samples returns)"))


def relieff(X: Any, y: Any, *, n_neighbors: int = 10, n_jobs: int | None = None,
            callback: Callable[[StepState], Any] | None = None,
            verbose: bool = False) -> WeightResult:
    """ReliefF (Kononenko), scored as skrebate's ``ReliefF`` scores continuous features.

    For every sample x (all are visited): its k nearest hits and, for every other class, its k
    nearest misses under the Manhattan distance of min-max scaled features. With
    diff_i(z) = |x_i - z_i| / range_i, h hits, M misses in all and C classes, feature i gains
    ``(-(1/h) sum_hits diff + sum_c (M_c / M) (C - 1) (1/M) sum_{misses of c} diff) / n_samples``.
    The hit term is dropped when h = 0 and the miss term when M = 0. A constant feature scores 0.
    Equal distances go to the lower sample index (skrebate's order is arbitrary there, so the two
    agree on data without ties). Two deliberate differences from skrebate:

    - a sample is never its own neighbour (leave-one-out). When its class has at most k samples,
      skrebate takes the sample itself as one of its hits (a zero difference that dilutes the
      hit average); fastfs uses the other members only. The two agree whenever k is smaller than
      every class;
    - skrebate treats features with at most 10 distinct values as discrete (Hamming
      differences); fastfs always uses the continuous formula.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype.
    n_neighbors : int
    n_jobs : int, optional
    callback : callable(StepState) -> bool, optional
        Called after every step (a block of query samples per thread) with ``step``, ``score``
        NaN (no objective) and ``selection`` = the weights of the samples done so far (their
        contributions averaged over those samples). Return True to stop: the result then holds
        those weights and ``stopped_early`` is True.
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr.

    Returns
    -------
    WeightResult
        ``weights`` in [-1, 1], ranking by weight, ``score`` NaN (no objective),
        ``stopped_early``.
    """
    n_neighbors = check_int(n_neighbors, "n_neighbors")
    threads = resolve_n_jobs(n_jobs)
    cx, labels, values, _ = prepare_scaled(X, y)
    weights, stopped = run_pass("relieff", callback, verbose, lambda hook: _core.relieff(
        values, labels.codes, n_neighbors, threads, hook))
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))
