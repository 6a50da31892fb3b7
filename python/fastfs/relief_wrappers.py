"""Wrappers around any Relief-family scorer, as skrebate 0.8 defines them: TuRF (iterative
removal of the worst-scoring fraction of the features; Moore and White 2007), VLS (scores
over random feature subsets, for very wide data; Eppstein and Haake 2008) and iterative
Relief (scores fed back as distance weights; Draper et al. 2003)."""

from __future__ import annotations

import math
import random
from typing import Any, Callable

import numpy as np

from ._relief_data import _discrete_flags, sparse_rows
from ._results import WeightResult, caller_checks_equal_scores, ranking_by_weight, warn_if_equal
from ._validation import (
    _is_sparse,
    check_int,
    check_random_state,
    check_real,
    check_vector,
    check_X,
)
from .relief import multisurf, multisurfstar, relief, relieff, surf, surfstar

# The scorers a wrapper can name; any callable(X, y) returning weights works too.
_SCORERS = {"relieff": relieff, "surf": surf, "surfstar": surfstar, "multisurf": multisurf,
            "multisurfstar": multisurfstar, "relief": relief}


def _checked_X(X: Any):
    """X as the scorers take it: NaN marks a missing value (the scorers' own rules), infinity
    is an error. A SciPy sparse X stays sparse (canonical CSR or CSC; its column subsets go to
    the scorers, which score sparse X without densifying it); NaN in it is refused as the
    scorers refuse it."""
    if _is_sparse(X):
        return sparse_rows(X, missing="relief_family")[0]
    cx = check_X(X, check_finite=False)
    if np.isinf(cx.values).any():
        raise ValueError("X: contains infinity (missing values are NaN)")
    return cx


def _columns(values: Any, columns: np.ndarray, method: Any) -> Any:
    """The columns ``columns`` of X as the scorers read them best: X itself when they are all
    of its columns in order and ``method`` is a named scorer (they never write to X; a
    user's callable gets a copy), a C-ordered copy of a dense X (``X[:, columns]`` would give
    a Fortran-ordered one, which the scorer copies once more into rows)."""
    if (isinstance(method, str) and columns.size == values.shape[1]
            and (columns == np.arange(columns.size)).all()):
        return values
    if _is_sparse(values):
        return values[:, columns]
    return np.take(values, columns, axis=1)


def _column_params(params: dict, n: int) -> dict:
    """The scorer parameters that name columns, as one entry per feature of X:
    ``discrete_features`` as a boolean mask, ``distance_weights`` as a float vector (the
    wrappers score subsets of the columns and pass each subset its part)."""
    out = {}
    if params.get("discrete_features") is not None:
        out["discrete_features"] = _discrete_flags(np.empty((0, n)), None,
                                                   params["discrete_features"])
    if params.get("distance_weights") is not None:
        out["distance_weights"] = check_vector(params["distance_weights"], "distance_weights",
                                               length=n, length_name="n_features")
    return out


def _scorer(method: Any, params: dict, n: int) -> Callable[..., np.ndarray]:
    """A function (X, y, columns=None, **extra) -> float64 weights, one per column of X, for
    X the columns ``columns`` (default: all n) of the wrapper's X; the parameters that name
    columns (``discrete_features``, ``distance_weights``) are cut to those columns."""
    if params.get("callback") is not None:
        # it reached every round's inner pass: True cut each pass short and the wrapper went
        # on with the partial weights, reporting a finished run
        raise TypeError("callback: the Relief wrappers (turf, vls, iterative_relief) take no "
                        "callback; it would stop each inner pass, not the wrapper")
    per_column = _column_params(params, n)
    if callable(method):
        fn = method
    elif isinstance(method, str) and method in _SCORERS:
        fn = _SCORERS[method]
    else:
        raise ValueError(f"method: expected one of {', '.join(map(repr, _SCORERS))} or a "
                         f"callable(X, y) returning one weight per feature, got {method!r}")

    def score(X: np.ndarray, y: Any, columns: Any = None, **extra: Any) -> np.ndarray:
        kw = dict(params)
        for name, full in per_column.items():
            kw[name] = full if columns is None else full[columns]
        with caller_checks_equal_scores():
            # a round or subset of equal weights is not the answer: the wrapper checks its own
            out = fn(X, y, **kw, **extra)
        w = np.asarray(getattr(out, "weights", out), dtype=np.float64)
        if w.shape != (X.shape[1],):
            raise ValueError(f"method: returned {w.shape} weights for {X.shape[1]} features; "
                             "expected one weight per feature")
        return w

    return score


def _result(weights: np.ndarray, names: Any, what: str, n_iter: int | None = None,
            checked: np.ndarray | None = None) -> WeightResult:
    """The wrapper's result; warns when ``checked`` (default: the weights; TuRF: its first
    round's, which score every feature) are all equal."""
    warn_if_equal(weights if checked is None else checked, what,
                  "weight" if checked is None else "weight in the first round", "neighbours",
                  stacklevel=4)
    return WeightResult(weights=weights, ranking=ranking_by_weight(weights), score=float("nan"),
                        feature_names=names, n_iter=n_iter)


def turf(X: Any, y: Any, *, method: Any = "relieff", pct: float = 0.5,
         n_features_to_keep: int = 100, **params: Any) -> WeightResult:
    """TuRF: score, drop the worst ``pct`` of the features, score again on the rest.

    Moore and White (2007), as skrebate 0.8's ``TURF`` runs it: at most ``int(1 / pct)``
    rounds; each scores the remaining features with ``method`` and keeps the best
    ``ceil(n_remaining * (1 - pct))``, stopping once at most ``n_features_to_keep`` remain.
    The features left are scored once more; their weights are those scores. A feature dropped
    in round r gets a weight below all of them: min - 0.01 (max - min) t, with t = 1 for the
    last round's drops, 2 for the round before, and so on (max - min taken as 1 when the last
    scores are all equal), so the ranking follows the order of removal.

    Parameters
    ----------
    X, y : training data (as the scorer takes them).
    method : str or callable, default "relieff"
        ``"relieff"``, ``"surf"``, ``"surfstar"``, ``"multisurf"``, ``"multisurfstar"``,
        ``"relief"``, or a callable(X, y) returning one weight per column (an array or a
        result with ``weights``).
    pct : float in (0, 1), default 0.5
        The fraction of the remaining features dropped per round.
    n_features_to_keep : int, default 100
        Stop once this many features (at most) remain (capped at the number of features).
    **params
        Passed to the scorer: ``n_neighbors``, ``n_jobs``, and the data types of
        :func:`fastfs.relieff` (``discrete_threshold``, ``discrete_features``, ``target``;
        missing values as NaN), ``distance_weights``. ``discrete_features`` and
        ``distance_weights`` name columns of X: each round gets the part of its columns.

    Returns
    -------
    WeightResult
        ``weights`` (the final scores, then the removal tiers below them), ``ranking`` (ties to
        the lower index), ``score`` NaN.

    Notes
    -----
    Each round ranks by weight with ties going to the lower index; skrebate orders equal
    scores by NumPy's unstable sort, so on exactly tied weights the two may drop different
    features.
    """
    cx = _checked_X(X)
    values = cx.values
    n = values.shape[1]
    pct = check_real(pct, "pct", positive=True)
    if pct > 1.0:
        raise ValueError(f"pct: the fraction of features dropped per round must lie in (0, 1), "
                         f"got {pct!r}")
    keep_target = min(check_int(n_features_to_keep, "n_features_to_keep"), n)
    if pct == 1.0:
        # the first round always runs (skrebate's TURF), and keeps ceil(n (1 - pct)) = 0
        raise ValueError("pct: 1 drops every feature in the first round, so TuRF cannot stop at "
                         f"n_features_to_keep = {keep_target}; pass pct < 1")
    score = _scorer(method, params, n)
    current = np.arange(n)
    tiers: list[np.ndarray] = []
    first = None  # the first round scores every feature: its ties make the tiers arbitrary
    for _ in range(int(1.0 / pct)):
        w = score(_columns(values, current, method), y, current)
        first = w if first is None else first
        keep = math.ceil(current.size * (1.0 - pct))
        kept = np.sort(ranking_by_weight(w)[:keep])
        dropped = np.setdiff1d(np.arange(current.size), kept, assume_unique=True)
        tiers.append(current[dropped])
        current = current[kept]
        if current.size <= keep_target:
            break
    final = score(_columns(values, current, method), y, current)
    weights = np.zeros(n)
    weights[current] = final
    low, high = float(final.min()), float(final.max())
    penalty = 0.01 * ((high - low) if high != low else 1.0)
    for t, tier in enumerate(reversed(tiers), start=1):
        weights[tier] = low - penalty * t
    return _result(weights, cx.feature_names, "turf", checked=first)


def vls_subsets(n_features: int, n_subsets: int, subset_size: int,
                random_state: Any = None) -> list[list[int]]:
    """The random feature subsets of VLS, drawn as skrebate 0.8 draws them.

    The feature indices are shuffled and cut into consecutive subsets of ``subset_size``; a
    short remainder is topped up with features drawn from the rest; further random subsets
    (without repeats inside one) follow until there are ``n_subsets``. Every feature is in at
    least one subset. ``random_state``: None or an int seeding Python's ``random`` generator
    (the same stream as skrebate's ``random_state``), or a NumPy Generator / RandomState,
    asked for one 64-bit seed for it (advancing it, as every other function does).
    """
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        random_state = check_random_state(random_state)
    elif random_state is not None and (isinstance(random_state, bool) or
                                       not isinstance(random_state, (int, np.integer))):
        raise TypeError("random_state: expected None, an int, np.random.Generator or "
                        f"np.random.RandomState, got {type(random_state).__name__}")
    elif random_state is not None and not 0 <= int(random_state) < 2**64:
        # Python's random takes abs() of a seed: -7 gave 7's subsets
        raise ValueError(f"random_state: must be in [0, 2**64), got {int(random_state)}")
    if n_subsets * subset_size < n_features:
        raise ValueError(f"n_subsets * subset_size ({n_subsets} * {subset_size}) must be at "
                         f"least the number of features ({n_features}), so that every feature "
                         "is scored")
    gen = random.Random(None if random_state is None else int(random_state))
    order = list(range(n_features))
    gen.shuffle(order)
    subsets = [order[i:i + subset_size]
               for i in range(0, n_features - n_features % subset_size, subset_size)]
    rest = order[len(subsets) * subset_size:]
    if rest:
        while len(rest) < subset_size:
            pick = gen.choice(order)
            if pick not in rest:
                rest.append(pick)
        subsets.append(rest)
    while len(subsets) < n_subsets:
        subsets.append(gen.sample(order, subset_size))
    return subsets


def vls(X: Any, y: Any, *, method: Any = "relieff", n_subsets: int = 40,
        subset_size: int = 5, random_state: Any = None, **params: Any) -> WeightResult:
    """VLS: score random feature subsets, keep each feature's best score.

    Eppstein and Haake (2008), as skrebate 0.8's ``VLS`` runs it: ``n_subsets`` subsets of
    ``subset_size`` features (see :func:`vls_subsets`) are scored separately with ``method``;
    a feature's weight is the largest score it got in any subset it was in. For very wide data
    the neighbours are then found in few dimensions, where the relevant features stand out.

    Parameters
    ----------
    X, y : training data.
    method : str or callable, default "relieff"
        As in :func:`turf`.
    n_subsets : int, default 40
    subset_size : int, default 5 (capped at the number of features)
        Every feature must be in a subset: ``n_subsets * subset_size`` >= n_features, so the
        defaults (skrebate's) cover at most 200 features; raise them for wider data (for
        instance ``subset_size=n_features // 20`` and the 40 subsets).
    random_state : None, int, Generator or RandomState
        An int seeds Python's ``random`` as skrebate's ``random_state`` does (the same
        subsets); a Generator or RandomState gives one 64-bit seed for it.
    **params
        Passed to the scorer, as in :func:`turf` (each subset gets its part of
        ``discrete_features`` and ``distance_weights``, as skrebate's ``VLS.fit(weights=)``).

    Returns
    -------
    WeightResult
        ``weights`` (each feature's best score), ``ranking`` (ties to the lower index),
        ``score`` NaN.
    """
    cx = _checked_X(X)
    values = cx.values
    n = values.shape[1]
    n_subsets = check_int(n_subsets, "n_subsets")
    subset_size = min(check_int(subset_size, "subset_size"), n)
    subsets = vls_subsets(n, n_subsets, subset_size, random_state)
    score = _scorer(method, params, n)
    weights = np.full(n, -np.inf)
    for subset in subsets:
        idx = np.asarray(subset)
        weights[idx] = np.maximum(weights[idx], score(_columns(values, idx, method), y, idx))
    return _result(weights, cx.feature_names, "vls")


def _unit_weights(scores: np.ndarray) -> np.ndarray:
    """Scores as distance weights: negative ones to 0, the rest divided by the largest (all 0
    when the largest is 0 or below)."""
    top = float(scores.max())
    if top <= 0.0:
        return np.zeros_like(scores)
    return np.where(scores < 0.0, 0.0, scores / top)


def iterative_relief(X: Any, y: Any, *, method: Any = "relieff", max_iter: int = 10,
                     tol: float = 1e-4, learning_rate: float = 0.1,
                     **params: Any) -> WeightResult:
    """Iterative Relief: rescore with the last scores as distance weights until they settle.

    Draper, Kaito and Bienenstock (2003), as skrebate 0.8's ``Iter`` runs it: the first round
    scores with plain distances; round 2 weights each feature's term of the distance by its
    last score s as max(s, 0) / max(s); from round 3 the distance weights move from the previous
    round's weights towards that transform by ``learning_rate`` (a Widrow-Hoff step). It stops
    after ``max_iter`` rounds, or once every score is within ``tol`` of the transform of the
    previous round's scores (skrebate's test), or when no feature scores above 0 (there is
    nothing to weight the distance by). The weights returned are the last round's scores, and
    ``n_iter`` the number of rounds run.

    Parameters
    ----------
    X, y : training data.
    method : str or callable, default "relieff"
        ``"relieff"``, ``"surf"``, ``"surfstar"``, ``"multisurf"``, ``"multisurfstar"``, or a
        callable(X, y, distance_weights=...) returning one weight per feature.
    max_iter : int, default 10
    tol : float, default 1e-4
    learning_rate : float in (0, 1], default 0.1
    **params
        Passed to the scorer: ``n_neighbors``, ``n_jobs``, and the data types of
        :func:`fastfs.relieff` (``discrete_threshold``, ``discrete_features``, ``target``).
        The distance weights are the wrapper's own (no ``distance_weights``). The scorers
        weight no distance with missing values, so X with NaN is an error with a named
        scorer (skrebate's ``Iter`` runs there); impute first, or use :func:`turf` or
        :func:`vls`.

    Returns
    -------
    WeightResult
        ``weights`` (the last round's scores), ``ranking``, ``score`` NaN.
    """
    cx = _checked_X(X)
    max_iter = check_int(max_iter, "max_iter")
    tol = check_real(tol, "tol")
    if tol < 0.0:
        raise ValueError(f"tol: must be >= 0, got {tol!r}")
    rate = check_real(learning_rate, "learning_rate", positive=True)
    if rate > 1.0:
        raise ValueError(f"learning_rate: must lie in (0, 1], got {rate!r}")
    if method == "relief":
        raise ValueError("method: 'relief' takes no distance weights; use 'relieff' or a radius "
                         "rule")
    if "distance_weights" in params:
        raise TypeError("distance_weights: iterative_relief sets the distance weights itself "
                        "(from the scores of the last round); do not pass them")
    values = cx.values
    if not callable(method) and not _is_sparse(values) and np.isnan(values).any():
        raise ValueError("X: contains missing values (NaN); iterative_relief weights the "
                         "distance by the scores, which the Relief scorers do not support with "
                         "missing values (impute X first, or use turf or vls)")
    score = _scorer(method, params, values.shape[1])
    scores = score(values, y)
    previous = None  # the distance weights of the last round (rounds >= 2)
    rounds = 1
    for _ in range(1, max_iter):
        target = _unit_weights(scores)
        dw = target if previous is None else previous + rate * (target - previous)
        if not (dw > 0).any():
            break  # no feature scores above 0: nothing to weight the distance by
        new = score(values, y, distance_weights=dw)
        rounds += 1
        done = bool(np.all(np.abs(target - new) < tol))
        previous, scores = dw, new
        if done:
            break
    return _result(scores, cx.feature_names, "iterative_relief", rounds)
