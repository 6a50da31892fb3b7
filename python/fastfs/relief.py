"""Neighbour-based feature weighting: Simba, Relief, ReliefF, SURF, SURF*, MultiSURF and
MultiSURF*. Each step reads one row of distances from a sample to all others in C++; nothing
m x m is stored, except ReliefF's and the radius rules' pair distances while they fit 64 MiB
(and fastfs.config.max_memory)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import fastfs._core as _core
from ._progress import Progress, run_pass
from ._results import StepState, WeightResult, ranking_by_weight, warn_if_equal
from ._scale import score_power, unscale, unscaled_hook, utility_beta
from ._validation import (
    INDEX_MAX,
    _is_sparse,
    check_int,
    check_option,
    check_random_state,
    check_real,
    check_sample_order,
    check_vector,
    check_y_classes,
    guard_visiting_order,
    prepare_scaled,
    relieff_neighbours as _relieff_neighbours,
    require_loo_neighbours,
    resolve_n_jobs,
)
from ._relief_data import prepare_relief, sparse_rows

SIMBA_UTILITIES = ("linear", "sigmoid")


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
    X, y : training data; y holds class labels of any dtype (floats must be whole numbers:
        a fractional value makes y a real target, which is refused).
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
        ``score`` = e(w / max|w|), i.e. ``margin_score(X, y, np.sqrt(weights))``;
        ``restart_scores`` = e of every restart and ``best_restart`` the one returned
        (``history`` is empty: Simba computes no score per step); ``stopped_early``.
    """
    out = _simba(X, y, n_iter=n_iter, n_restarts=n_restarts, utility=utility, beta=beta,
                 sample_order=sample_order, random_state=random_state, n_jobs=n_jobs,
                 callback=callback, verbose=verbose)
    warn_if_equal(out.weights, "simba", "weight", "simba")
    return out


def _simba(X: Any, y: Any, *, n_iter, n_restarts, utility, beta, sample_order, random_state,
           n_jobs, callback, verbose, first_restart: int = 0):
    """simba with its restarts numbered from ``first_restart`` (restart r uses the random
    stream of restart first_restart + r): fastfs.dask runs restarts as separate tasks."""
    check_option(utility, "utility", SIMBA_UTILITIES + ("zero_one",))
    if utility == "zero_one":
        raise ValueError("utility: 'zero_one' has no gradient, so Simba cannot use it; valid "
                         "options are 'linear', 'sigmoid'")
    beta = check_real(beta, "beta", positive=True)
    n_restarts = check_int(n_restarts, "n_restarts")
    steps = 0 if n_iter is None else check_int(n_iter, "n_iter", maximum=INDEX_MAX)
    seed = check_random_state(random_state)
    threads = resolve_n_jobs(n_jobs)
    cx, labels, values, e = prepare_scaled(X, y, "simba")
    # Restarts run side by side, each with its own visiting order.
    guard_visiting_order(steps, n_restarts, threads, "fastfs.simba")
    order = np.empty(0, dtype=np.int64)
    if sample_order is not None:
        if n_restarts != 1 or n_iter is not None:
            raise ValueError("sample_order fixes a single run of its own length; pass "
                             "n_restarts=1 and leave n_iter=None")
        order = check_sample_order(sample_order, cx.values.shape[0])
    progress = Progress("simba", callback, verbose)
    power = score_power(utility)

    hook = unscaled_hook(progress.hook, e, power)
    # On X * 2**-e the linear step shrinks by 2**-e (it has the units of X): scaling it back
    # reproduces the run on X exactly. The sigmoid's step is unit-free once beta is rescaled.
    step_scale = float(np.ldexp(1.0, e)) if utility == "linear" else 1.0
    try:
        out = _core.simba(values, labels.codes, utility, utility_beta(utility, beta, e), steps,
                          n_restarts, order, seed, threads, hook if progress.active else None,
                          step_scale, first_restart)
    finally:
        progress.close()
    weights = out.weights
    if not np.isfinite(weights).all():
        raise ValueError(
            f"X: its values (max |x| ~ 2**{e}) are so large that Simba's weights, whose steps "
            "have the units of X, overflow float64; divide X by a power of two (the linear "
            "utility's answer depends on the units of X) or use utility='sigmoid'")
    return WeightResult(weights=weights, ranking=ranking_by_weight(weights),
                        score=float(unscale(float(out.score), power, e, "the score")),
                        restart_scores=unscale(out.restart_scores, power, e,
                                               "the restart scores"),
                        best_restart=int(out.best_restart),
                        feature_names=cx.feature_names, stopped_early=bool(out.stopped_early))


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
    X, y : training data; y holds class labels of any dtype. X may be a SciPy sparse matrix or
        array (e.g. a bag of words): it is never densified, distances and updates touch only
        the entries of the rows involved, with the answer of X.toarray().
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
    if _is_sparse(X):
        cx, rows = sparse_rows(X)
        labels = check_y_classes(y, rows.shape[0])
        require_loo_neighbours(labels)
        e = rows.e
        guard_visiting_order(steps, 1, threads, "fastfs.relief")
        visit = (np.arange(rows.shape[0], dtype=np.int64) if steps == 0
                 else _core.relief_order(rows.shape[0], steps, seed))
        run = lambda hook: _core.relief_sparse_kira(  # noqa: E731
            *rows.args(), labels.codes, visit, threads, unscaled_hook(hook, e, 0, 2))
        weights, stopped = run_pass("relief", callback, verbose, run)
        weights = unscale(weights, 2, e, "the Relief weights")
        warn_if_equal(weights, "relief", "weight", "neighbours")
        return WeightResult(weights=weights, ranking=ranking_by_weight(weights),
                            score=float("nan"), feature_names=None,
                            stopped_early=bool(stopped))
    cx, labels, values, e = prepare_scaled(X, y, "relief")
    # The visiting order (8 bytes a step; the hit / miss records are kept for a bounded chunk).
    guard_visiting_order(steps, 1, threads, "fastfs.relief")
    weights, stopped = run_pass("relief", callback, verbose, lambda hook: _core.relief(
        values, labels.codes, steps, seed, threads, unscaled_hook(hook, e, 0, 2)))
    weights = unscale(weights, 2, e, "the Relief weights")
    warn_if_equal(weights, "relief", "weight", "neighbours")
    return WeightResult(weights=weights, ranking=ranking_by_weight(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))


if relief.__doc__:  # None under python -OO
    relief.__doc__ = relief.__doc__.replace("{callback}", _PASS_CALLBACK.format(
        selection="the weights so far",
        stopped="the weights of the samples visited so far (exactly what a run visiting only "
                "those samples returns)"))


def relieff(X: Any, y: Any, *, n_neighbors: int | float = 10, n_jobs: int | None = None,
            callback: Callable[[StepState], Any] | None = None,
            verbose: bool = False, distance_weights: Any = None, discrete_threshold: Any = 10,
            discrete_features: Any = None, target: str = "auto") -> WeightResult:
    """ReliefF (Kononenko), scored as skrebate's ``ReliefF`` scores it, on every data type skrebate
    handles (see "Data types" below; the formula here is the one of continuous features with class
    labels).

    For every sample x (all are visited): its k nearest hits and, for every other class, its k
    nearest misses under the Manhattan distance of min-max scaled features. With
    diff_i(z) = |x_i - z_i| / range_i, h hits, M misses in all and C classes, feature i gains
    ``(-(1/h) sum_hits diff + sum_c (M_c / M) (C - 1) (1/M) sum_{misses of c} diff) / n_samples``.
    The hit term is dropped when h = 0 and the miss term when M = 0. A constant feature scores 0.
    Equal distances go to the lower sample index (skrebate's order is arbitrary there, so the two
    agree on data without ties). One deliberate difference from skrebate: a sample is never its
    own neighbour (leave-one-out). When its class (or, for a continuous target, its group of
    hits) has fewer than k other samples, skrebate takes the sample itself as one of its hits (a
    zero difference that dilutes the hit average); fastfs uses the other members only. The two
    agree whenever every class has at least k other samples.

{datatypes}

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype or a continuous target; X may hold
        NaN for missing values, or be a SciPy sparse matrix (see "Sparse X" above).
    n_neighbors : int or float
        k hits and k misses per class. A float in (0, 1] is a fraction of the samples, as in
        skrebate: k = int(n_neighbors * n_samples / 2) (half, since k hits and k misses are
        taken), at least 1. The default 10 is Kononenko's; skrebate's ``ReliefF`` defaults to
        100, so compare the two with the same k.
    n_jobs : int, optional
    callback : callable(StepState) -> bool, optional
        Called after every step (a block of query samples per thread) with ``step``, ``score``
        NaN (no objective) and ``selection`` = the weights of the samples done so far (their
        contributions averaged over those samples). Return True to stop: the result then holds
        those weights and ``stopped_early`` is True.
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr.
    distance_weights : array of n_features non-negative floats, optional
        Multiply each feature's term of the neighbour distance (sum_f w_f diff_f), as
        skrebate's ``fit(X, y, weights=...)`` does for its iterative wrapper; the scores' diff
        is not weighted. Default: all ones. Not with missing values.
{typeparams}

    Returns
    -------
    WeightResult
        ``weights`` in [-1, 1], ranking by weight, ``score`` NaN (no objective),
        ``stopped_early``.
    """
    threads = resolve_n_jobs(n_jobs)
    data = prepare_relief(X, y, discrete_threshold=discrete_threshold,
                          discrete_features=discrete_features, target=target,
                          accept_sparse=True)
    cx, values = data.cx, data.values
    n_neighbors = _relieff_neighbours(n_neighbors, cx.values.shape[0])
    dw = _distance_weights(distance_weights, values.shape[1])
    if data.sparse is not None:
        run = _sparse_run(data, "relieff", n_neighbors, threads, dw)
    elif data.fast:
        run = lambda hook: _core.relieff(values, data.codes, n_neighbors, threads, hook, dw)  # noqa: E731
    else:
        run = lambda hook: _core.relief_mixed(  # noqa: E731
            values, "relieff", n_neighbors, data.discrete, data.codes, data.y, data.radius,
            threads, hook, dw)
    weights, stopped = run_pass("relieff", callback, verbose, run)
    warn_if_equal(weights, "relieff", "weight", "neighbours")
    return WeightResult(weights=weights, ranking=ranking_by_weight(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))


def _sparse_run(data: Any, rule: str, k: int, threads: int, dw: list) -> Callable[[Any], Any]:
    """The pass of ``rule`` on a sparse X (its CSR arrays, never densified)."""
    return lambda hook: _core.relief_sparse(*data.sparse.args(), rule, k, data.discrete, data.codes,
                                            data.y, data.radius, data.fast, threads, hook, dw)


def _distance_weights(distance_weights: Any, n_features: int) -> list:
    """Per-feature multipliers of the Manhattan distance ([] for none): non-negative, finite,
    not all zero."""
    if distance_weights is None:
        return []
    w = check_vector(distance_weights, "distance_weights", length=n_features,
                     length_name="n_features")
    if (w < 0).any() or not (w > 0).any():
        raise ValueError("distance_weights: expected non-negative weights, not all zero")
    return w.tolist()


_DATATYPES = """    Data types (skrebate 0.8's definitions; the fast path above is the case of continuous
    features, no missing value and class labels):

    - discrete features: a feature with at most ``discrete_threshold`` distinct non-missing
      values (skrebate's ``categorical_threshold``), or those listed in ``discrete_features``.
      Their diff is 0 or 1 (the values differ). Distances: with only discrete features,
      the number of differing features / n_features; with both kinds,
      (differing discrete features / n_discrete) * n_features + the continuous Manhattan sum;
      and then the diff of a continuous feature is 1 when |x_i - z_i| exceeds the feature's
      standard deviation (skrebate's ramp), |x_i - z_i| / range_i otherwise;
    - missing values (NaN anywhere in X): the distance of two samples is (differing discrete
      features + continuous Manhattan sum) over the features present in both, divided by their
      number (a pair with none in common is nobody's neighbour). A neighbour missing feature i
      is left out of i's hit and miss counts, and a sample missing feature i adds 0 to it. A
      feature with no value at all scores 0; a sample with no value at all is nobody's
      neighbour and adds nothing (it still counts in the division by n_samples);
    - targets: y with two classes, several classes, or a continuous target: a numeric y with
      more than ``discrete_threshold`` distinct values (10 when it is None), or any numeric y
      with ``target="continuous"``. Then the hits of x are the samples z with
      |y_x - y_z| < std(y) (ddof 1), the misses all others, and they are scored as two
      classes. Ties in y are legal. A constant continuous feature (possible with an explicit
      ``discrete_features``) scores 0.

    These cases run in exact float64 (float32 X is converted), in memory O(n_samples x
    n_features) for a scaled copy and O(n_jobs x (n_samples + n_classes x n_features)) for the
    work; never n_samples x n_samples.

    Sparse X: a SciPy sparse matrix or array (CSR; any other format is converted to CSR, never
    to a dense array), e.g. a bag of words, is scored as it is, with the same definitions and
    the same scores as X.toarray() (to rounding): ranges, standard deviations and distinct values
    count the implicit zeros, and each distance and score touches only the entries of the two
    rows. The two paths add a distance's terms in different orders, so two neighbours whose
    distances are equal in exact arithmetic (counts and other data of few distinct values make
    many such ties) can come out a unit in the last place apart and be taken in a different
    order; the scores then differ by those neighbours' share (skrebate, which orders equal
    distances arbitrarily, can differ from either). Memory O(nnz + n_jobs x (n_samples + n_features)); time per sample
    O(n_samples + the entries of the columns of its features). Missing values (NaN) are not
    supported in sparse X: pass X.toarray(). float32 entries are read exactly as float64.

    Where skrebate 0.8.4 scores otherwise (deliberate; compare on the inputs named here):

    - integer X is read as float64. skrebate writes its min-max scaled values back into an
      integer array (truncating them to 0 or 1) and wraps around the differences of unsigned
      integers: its scores on ``X.astype(float)`` are fastfs's;
    - skrebate decides the type of a numeric y by its own ``multiclass_threshold`` (default
      10), fastfs by ``discrete_threshold``: the same at the defaults; to compare with another
      ``discrete_threshold``, give skrebate ``multiclass_threshold`` equal to it;
    - a continuous target with at most ``discrete_threshold`` distinct values (only with
      ``target="continuous"``): skrebate computes the hit radius std(y) only for more
      distinct values than its ``categorical_threshold`` and uses 0 otherwise, so that every
      neighbour is a miss; fastfs uses std(y) whatever the count;
    - a column whose range is subnormal (values of about 1e-310) is rescaled by a power of two
      first (its scores depend only on (x - min) / range), so it scores as at unit scale;
    - mixed discrete and continuous features with a continuous column of about 1e154 or more
      (or 1e-145 or less): skrebate's standard deviation of the column overflows to inf (or
      underflows to 0) and its scores are off; fastfs's equal skrebate's on the column
      rescaled to unit size."""

_TYPEPARAMS = """    discrete_threshold : int or None, default 10
        Features with at most this many distinct non-missing values are discrete; None: none
        is (unless listed). Also the target rule (see above).
    discrete_features : list of feature indices or boolean mask, optional
        The discrete features, overriding ``discrete_threshold`` (``[]``: every feature
        continuous, the formula above).
    target : {"auto", "classes", "continuous"}
        "auto" follows skrebate: a numeric y with more than ``discrete_threshold`` distinct
        values is continuous; strings and booleans are class labels. When those values are
        whole numbers that repeat (five samples a value or more: 20 image classes, say),
        "auto" warns that it reads them as a continuous target; ``target="classes"`` reads
        them as labels and ``target="continuous"`` keeps the reading without the warning."""

if relieff.__doc__:
    relieff.__doc__ = relieff.__doc__.replace("{datatypes}", _DATATYPES).replace(
        "{typeparams}", _TYPEPARAMS)


# The radius members of the Relief family (SURF, SURF*, MultiSURF, MultiSURF*)

_RADIUS_DOC = """{title}

    Scored as skrebate's ``{skrebate}`` scores it, on every data type skrebate handles (see
    "Data types" below; the formula here is the one of continuous features with class labels). Instead of k nearest
    neighbours, every sample x takes all other samples within a distance threshold as its
    neighbours:

{sets}

    Distances are Manhattan on min-max scaled features, as in :func:`fastfs.relieff`. With
    diff_i(z) = |x_i - z_i| / range_i, the hits H (same class as x) and, for every other class
    c, the members M_c of a neighbour set S, M = sum_c |M_c| and C classes, the near score of S
    is ``near(S)_i = -(1/|H|) sum_H diff_i + sum_c (|M_c| (C - 1) / M^2) sum_{{M_c}} diff_i``
    (the hit term dropped when H is empty, the miss term when M = 0; with two classes the miss
    term is the mean miss difference). Feature i gains

{gain}

    summed over all samples and divided by n_samples. A constant feature scores 0.

    fastfs follows skrebate's definition, thresholds included; the details that could differ
    are fixed as follows:

    - a sample is never its own neighbour (as in skrebate);
    - a distance exactly equal to a threshold belongs to neither set (strict comparisons, as
      in skrebate). fastfs computes distances and thresholds in its own summation order, so a
      distance within a few units in the last place of a threshold may fall on the other side
      of it than in skrebate; on data without such near-ties the scores agree to rounding;

{{datatypes}}

    Memory: a min-max scaled copy of X plus O(n_jobs * n_samples + n_features). On dense
    features without missing values, while the n_samples x n_samples float64 matrix of pair
    distances fits 64 MiB (n_samples <= 2896) and ``fastfs.config.max_memory``, it is kept,
    so that every distance is computed once for both samples of its pair and each pair's two
    contributions are added as one (about twice as fast); past that, or with a callback or
    ``verbose``, the pass goes sample by sample and nothing n_samples x n_samples is built.
    The two agree to rounding (about 1e-15 relative), so a progress bar or a callback can move
    weights in their last bits.

    Parameters
    ----------
    X, y : training data; y holds class labels of any dtype (at least two classes); X may be a
        SciPy sparse matrix (see "Sparse X" above).
    n_jobs : int, optional
    callback : callable(StepState) -> bool, optional
        Called after every step (a block of samples per thread) with ``step``, ``score`` NaN
        (no objective) and ``selection`` = the weights of the samples done so far (their
        contributions averaged over those samples). Return True to stop: the result then holds
        those weights and ``stopped_early`` is True.
    verbose : bool
        Progress bar (tqdm) or one line per step on stderr.
    distance_weights : array of n_features non-negative floats, optional
        Multiply each feature's term of the neighbour distance (and so of the radius), as
        skrebate's ``fit(X, y, weights=...)`` does; the scores' diff is not weighted. Not with
        missing values.
{{typeparams}}

    Returns
    -------
    WeightResult
        ``weights`` ({bounds}), ranking by weight, ``score`` NaN (no objective),
        ``stopped_early``.

    References
    ----------
{reference}
    """


def _fill(text: str) -> str:
    """A docstring paragraph: wrapped at 96 columns, indented by 4."""
    import textwrap

    return textwrap.fill(text, 96, initial_indent="    ", subsequent_indent="    ")


def _relief_radius(rule: str, name: str, X: Any, y: Any, n_jobs: int | None,
                   callback: Callable[[StepState], Any] | None, verbose: bool,
                   distance_weights: Any = None, discrete_threshold: Any = 10,
                   discrete_features: Any = None, target: str = "auto") -> WeightResult:
    threads = resolve_n_jobs(n_jobs)
    data = prepare_relief(X, y, discrete_threshold=discrete_threshold,
                          discrete_features=discrete_features, target=target,
                          accept_sparse=True)
    cx, values = data.cx, data.values
    dw = _distance_weights(distance_weights, values.shape[1])
    if data.sparse is not None:
        run = _sparse_run(data, rule, 1, threads, dw)
    elif data.fast:
        run = lambda hook: _core.relief_radius(values, data.codes, rule, threads, hook, dw)  # noqa: E731
    else:
        run = lambda hook: _core.relief_mixed(  # noqa: E731
            values, rule, 1, data.discrete, data.codes, data.y, data.radius, threads, hook, dw)
    weights, stopped = run_pass(name, callback, verbose, run)
    warn_if_equal(weights, name, "weight", "neighbours", stacklevel=4)
    return WeightResult(weights=weights, ranking=ranking_by_weight(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=bool(stopped))


def surf(X: Any, y: Any, *, n_jobs: int | None = None,
         callback: Callable[[StepState], Any] | None = None,
         verbose: bool = False, distance_weights: Any = None, discrete_threshold: Any = 10,
         discrete_features: Any = None, target: str = "auto") -> WeightResult:
    return _relief_radius("surf", "surf", X, y, n_jobs, callback, verbose, distance_weights,
                          discrete_threshold, discrete_features, target)


def surfstar(X: Any, y: Any, *, n_jobs: int | None = None,
             callback: Callable[[StepState], Any] | None = None,
             verbose: bool = False, distance_weights: Any = None, discrete_threshold: Any = 10,
             discrete_features: Any = None, target: str = "auto") -> WeightResult:
    return _relief_radius("surf_star", "surfstar", X, y, n_jobs, callback, verbose, distance_weights,
                          discrete_threshold, discrete_features, target)


def multisurf(X: Any, y: Any, *, n_jobs: int | None = None,
              callback: Callable[[StepState], Any] | None = None,
              verbose: bool = False, distance_weights: Any = None, discrete_threshold: Any = 10,
              discrete_features: Any = None, target: str = "auto") -> WeightResult:
    return _relief_radius("multisurf", "multisurf", X, y, n_jobs, callback, verbose, distance_weights,
                          discrete_threshold, discrete_features, target)


def multisurfstar(X: Any, y: Any, *, n_jobs: int | None = None,
                  callback: Callable[[StepState], Any] | None = None,
                  verbose: bool = False, distance_weights: Any = None, discrete_threshold: Any = 10,
                  discrete_features: Any = None, target: str = "auto") -> WeightResult:
    return _relief_radius("multisurf_star", "multisurfstar", X, y, n_jobs, callback, verbose, distance_weights,
                          discrete_threshold, discrete_features, target)


_T_SETS = ("the near set N of x holds the samples at distance d < T and the far set F those "
           "at d > T, where T is the mean of the full n_samples x n_samples "
           "distance matrix, its zero diagonal included (skrebate's definition; with "
           "missing values skrebate fills only one triangle of that matrix, so T is then "
           "about half the mean pair distance, and fastfs follows it)")
_MU_SETS = ("the near set N of x holds the samples at distance d < mu - sigma / 2 and the far "
            "set F those at d > mu + sigma / 2, where mu and sigma are the mean "
            "and the population standard deviation of x's distances to the other samples; the "
            "samples in between are ignored")

surf.__doc__ = _RADIUS_DOC.format(
    title="SURF: ReliefF with a distance radius instead of k neighbours (Greene et al. 2009).",
    skrebate="SURF",
    sets=_fill("the near set N of x holds the samples at distance d < T, where T is the mean of "
               "the full n_samples x n_samples distance matrix, its zero diagonal included "
               "(skrebate's definition)."),
    gain=_fill("``near(N)_i``,"), bounds="in [-1, 1] for two classes",
    reference=_fill("Greene, Penrod, Kiralis and Moore (2009), Spatially Uniform ReliefF "
                    "(SURF) for computationally-efficient filtering of gene-gene interactions. "
                    "BioData Mining 2:5."))
surfstar.__doc__ = _RADIUS_DOC.format(
    title="SURF*: SURF that also scores the far samples, with the opposite sign "
          "(Greene et al. 2010).",
    skrebate="SURFstar", sets=_fill(_T_SETS + "."),
    gain=_fill("``near(N)_i - near(F)_i``,"), bounds="in [-2, 2] for two classes",
    reference=_fill("Greene, Himmelstein, Kiralis and Moore (2010), The informative extremes: "
                    "using both nearest and farthest individuals can improve Relief algorithms "
                    "in the domain of human genetics. EvoBIO 2010, LNCS 6023."))
multisurf.__doc__ = _RADIUS_DOC.format(
    title="MultiSURF: SURF with a threshold of its own for every sample "
          "(Urbanowicz et al. 2018).",
    skrebate="MultiSURF",
    sets=_fill("the near set N of x holds the samples at distance d < mu - sigma / 2, where mu "
               "and sigma are the mean and the population standard deviation of x's distances "
               "to the other samples."),
    gain=_fill("``near(N)_i``,"), bounds="in [-1, 1] for two classes",
    reference=_fill("Urbanowicz, Olson, Schmitt, Meeker and Moore (2018), Benchmarking "
                    "Relief-based feature selection methods for bioinformatics data mining. J. "
                    "Biomed. Inform. 85, 168-188."))
multisurfstar.__doc__ = _RADIUS_DOC.format(
    title="MultiSURF*: MultiSURF that also scores the far samples "
          "(Granizo-Mackenzie and Moore 2013).",
    skrebate="MultiSURFstar", sets=_fill(_MU_SETS + "."),
    gain=_fill("``near(N)_i + farc(F)_i``, where farc is near with every diff replaced by "
               "1 - diff (for two classes with both hits and misses in F, farc(F) = -near(F)),"),
    bounds="in [-2, 2] for two classes",
    reference=_fill("Granizo-Mackenzie and Moore (2013), Multiple threshold spatially uniform "
                    "ReliefF for the genetic analysis of complex human diseases. EvoBIO 2013, "
                    "LNCS 7833."))

for _f in (surf, surfstar, multisurf, multisurfstar):
    if _f.__doc__:
        _f.__doc__ = _f.__doc__.replace("{datatypes}", _DATATYPES).replace("{typeparams}",
                                                                           _TYPEPARAMS)
