"""Margin-based selection (Navot's thesis, ch. 3): leave-one-out hypothesis margins, the evaluation
function e(w) and the G-flip search. The heavy work happens in C++ on the shared m x m
distance state; this module validates input and shapes the results."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import fastfs._core as _core
from ._progress import Progress, run_pass
from ._results import GFlipResult, StepState, gflip_empty_message, without_constant_features
from ._scale import score_power, unscale, unscaled_hook, utility_beta
from ._validation import (
    check_int,
    check_option,
    check_random_state,
    check_real,
    check_scaled_weights,
    check_support,
    guard_memory,
    prepare_scaled,
    resolve_n_jobs,
)

UTILITIES = ("linear", "zero_one", "sigmoid")


def margins(X: Any, y: Any, weights: Any = None, *, n_jobs: int | None = None,
            callback: Callable[[StepState], Any] | None = None,
            verbose: bool = False) -> np.ndarray:
    """Leave-one-out hypothesis margin of every sample (Navot's thesis, ch. 3).

    theta(x) = (||x - nearmiss(x)||_w - ||x - nearhit(x)||_w) / 2 with
    ||z||_w = sqrt(sum_i w_i^2 z_i^2); neighbours are the nearest *other* samples under the same
    weighted distance.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels of any dtype; floats must be whole numbers (a fractional value makes y
        a real target, which is refused).
    weights : array-like of shape (n_features,), optional
        Feature weights w (default: all ones). A subset F is the 0/1 vector of F.
    n_jobs : int, optional
        Threads (scikit-learn rules).
    callback : callable(StepState) -> bool, optional
        Called after every step (a block of samples: about 1/64 of them, at least 64) with
        ``step``, ``score`` = the sum of the margins computed so far and ``selection`` = the
        margins so far (NaN for the samples not reached yet). Return True to stop: the margins
        so far are returned, NaN for the samples not reached.
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
        NaN for a sample without a hit (its class has one sample) or without a miss.

    Notes
    -----
    Neighbours are found one distance row at a time (O(n_samples * n_features) per sample, in
    parallel over samples), so memory stays O(n_jobs * n_samples): no m x m matrix. X whose
    largest magnitude lies outside about 2**-24 to 2**24 is first multiplied by a power of two
    (exact), and so are the weights, so squared distances can neither overflow nor underflow;
    the margins are returned in the units of w * X (a ValueError says when they do not fit in
    float64): weights of 1e200 give 1e200 times the margins of w = 1.
    """
    cx, labels, values, e = prepare_scaled(X, y, "margins")
    w, f = check_scaled_weights(weights, cx.values.shape[1])
    e += f  # the margins' units: X and w each rescaled by a power of two
    threads = resolve_n_jobs(n_jobs)
    theta, _ = run_pass("margins", callback, verbose, lambda hook: _core.margins(
        values, labels.codes, w, threads, unscaled_hook(hook, e, 1, 1)))
    return unscale(theta, 1, e, "the margins")


def margin_score(X: Any, y: Any, weights: Any = None, *, utility: str = "linear",
                 beta: float = 1.0, n_jobs: int | None = None,
                 callback: Callable[[StepState], Any] | None = None,
                 verbose: bool = False) -> float:
    """Evaluation function e(w) = sum over samples of u(theta(x)) (Navot's thesis, ch. 3).

    Utilities: ``"linear"`` u = theta; ``"zero_one"`` u = 1 if theta > 0 else 0;
    ``"sigmoid"`` u = 1 / (1 + exp(-beta * theta)). Samples with a NaN margin (no hit or no
    miss) add nothing. Extreme scales of X are handled as in ``margins``.

    ``callback`` (callable(StepState) -> bool) is called after every step (a block of samples:
    about 1/64 of them, at least 64) with ``step``, ``score`` = the sum of u(theta) over the
    samples done so far and ``selection`` = their margins (NaN for the samples not reached).
    Returning True stops: the sum over the samples done so far (the last ``score``) is
    returned. ``verbose=True`` shows a progress bar (tqdm) or one line per step on stderr.
    """
    check_option(utility, "utility", UTILITIES)
    beta = check_real(beta, "beta", positive=True)
    cx, labels, values, e = prepare_scaled(X, y, "margin_score")
    w, f = check_scaled_weights(weights, cx.values.shape[1])
    e += f  # the margins' units: X and w each rescaled by a power of two
    threads = resolve_n_jobs(n_jobs)
    power = score_power(utility)
    score, _ = run_pass("margin_score", callback, verbose, lambda hook: _core.margin_score(
        values, labels.codes, w, utility, utility_beta(utility, beta, e), threads,
        unscaled_hook(hook, e, power, 1)))
    return float(unscale(float(score), power, e, "the margin score"))


def gflip(X: Any, y: Any, *, utility: str = "linear", beta: float = 1.0, max_epochs: int = 100,
          n_restarts: int = 2, initial: Any = None, random_state: Any = None,
          n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
          verbose: bool = False) -> GFlipResult:
    """G-flip: greedy flip search maximising the margin evaluation e(F) (Navot's thesis, ch. 3).

    Each epoch visits the features in a fresh random order and flips a feature in or out of F
    when that strictly increases e; the search stops after an epoch without a flip or after
    ``max_epochs``. The result is a local maximum: no single flip increases e. One epoch costs
    O(n_features * n_samples^2) through an incrementally updated distance matrix, which is
    rebuilt from scratch after each epoch that changed it so rounding cannot accumulate.
    X of extreme magnitude is rescaled by a power of two first (exact, see ``margins``), so the
    selection does not depend on the units of X; scores are reported in those units.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype (floats must be whole numbers:
        a fractional value makes y a real target, which is refused).
    utility : {"linear", "zero_one", "sigmoid"}
    beta : float, sigmoid slope (> 0).
    max_epochs : int >= 1
    n_restarts : int >= 1
        Independent searches with different visiting orders; the best score wins (the first
        one on ties). Without ``initial``, restarts alternate between the empty set (restarts
        0, 2, ...) and the full set (1, 3, ...): greedy flips from the empty set can stop at
        noise features before features that only help together (on xor, 1000 x 10, the empty
        start alone finds the three relevant features for 7 of 20 seeds, the default pair for
        20 of 20); the full start costs more epochs when most features are noise (MADELON,
        2000 x 500: about 3x one empty start). With ``initial``, every restart starts there.
    initial : bool mask or int indices, optional
        Starting subset of every restart (default: see ``n_restarts``).
    random_state : None, int, Generator or RandomState
    n_jobs : int, optional
    callback : callable(StepState) -> bool, optional
        Called after every epoch with step, score, selection (bool mask) and restart; return
        True to stop: the best subset so far is returned (over the finished restarts and the
        current one's subset at that epoch), with ``stopped_early`` True.
    verbose : bool
        Progress bar (tqdm) or one line per epoch on stderr.

    Returns
    -------
    GFlipResult
        ``support``, ``selected`` (order of entry), ``score``, ``history`` (score after each
        epoch of the winning restart), ``restart_scores`` (final score of every restart),
        ``n_epochs``, ``n_flips``, ``best_restart``. A feature constant over the samples is
        never selected: it changes no distance, so no margin and not the score (a start from
        the full set would otherwise keep every one).
    """
    res = _gflip(X, y, utility=utility, beta=beta, max_epochs=max_epochs,
                 n_restarts=n_restarts, initial=initial, random_state=random_state,
                 n_jobs=n_jobs, callback=callback, verbose=verbose)
    if res.selected.size == 0 and not res.stopped_early:
        warnings.warn(gflip_empty_message(res.restart_scores, res.score, utility, n_restarts,
                                          initial), UserWarning, stacklevel=2)
    return res


def _gflip(X: Any, y: Any, *, utility, beta, max_epochs, n_restarts, initial, random_state,
           n_jobs, callback, verbose, first_restart: int = 0):
    """gflip with its restarts numbered from ``first_restart`` (restart r uses the random
    stream of restart first_restart + r): fastfs.dask runs restarts as separate tasks."""
    check_option(utility, "utility", UTILITIES)
    beta = check_real(beta, "beta", positive=True)
    max_epochs = check_int(max_epochs, "max_epochs")
    n_restarts = check_int(n_restarts, "n_restarts")
    seed = check_random_state(random_state)
    threads = resolve_n_jobs(n_jobs)
    cx, labels, values, e = prepare_scaled(X, y, "gflip")
    # G-flip keeps the m x m distance state in float64 whatever the input type.
    m, n = cx.values.shape
    guard_memory(_core.memory_need("gflip", m, n, labels.classes.shape[0], 1, threads),
                 "fastfs.gflip", f"one {m} x {m} distance state",
                 "use a subsample of the rows, or raise fastfs.config.max_memory")
    n_features = cx.values.shape[1]
    # empty: restarts alternate between the empty and the full set (see n_restarts)
    init = (np.zeros(0, dtype=np.uint8) if initial is None
            else check_support(initial, n_features).astype(np.uint8))
    progress = Progress("gflip", callback, verbose, total=None)
    power = score_power(utility)

    hook = unscaled_hook(progress.hook, e, power)
    try:
        out = _core.gflip(values, labels.codes, utility, utility_beta(utility, beta, e),
                          max_epochs, n_restarts, init, seed, threads,
                          hook if progress.active else None, first_restart)
    finally:
        progress.close()
    support, selected = without_constant_features(values, out.support, out.selected)
    return GFlipResult(
        support=support,
        selected=selected,
        score=float(unscale(float(out.score), power, e, "the score")),
        history=unscale(out.history, power, e, "the score history"),
        restart_scores=unscale(out.restart_scores, power, e, "the restart scores"),
        feature_names=cx.feature_names,
        n_epochs=int(out.n_epochs),
        n_flips=int(out.n_flips),
        best_restart=int(out.best_restart),
        stopped_early=bool(out.stopped_early),
    )
