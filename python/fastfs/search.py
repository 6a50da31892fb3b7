"""Subset searches over pluggable criteria: naive ranking, sequential forward / backward
selection, the floating searches, plus-l-minus-r, bidirectional, beam, exhaustive search,
branch and bound, best-first search and simulated annealing. Every strategy runs in C++ on
one driver that keeps the criterion's state in step with the current subset; a built-in
criterion scores all candidate moves of a step at once (in parallel), a Python criterion is
called once per subset.

Shared rules
------------
* The current subset S is a list: an addition appends, a removal deletes. A step picks the
  best move by scanning candidates in ascending feature index and keeping the first one that
  ties with the maximum, so **ties go to the lower feature index**. Two values of J tie when
  they differ by at most 1e-10 relative (the same J computed along two routes differs in its
  last bits). J is never evaluated on the empty set.
* ``n_features_to_select``: an int k in [1, n_features], a float f in (0, 1] (k = max(1,
  int(f * n_features))), ``"best"``: run over every size the strategy reaches and return the
  recorded subset with the largest J (ties: the smaller subset, then the earlier record), or
  ``"auto"`` (the default of the sequential, floating, plus-l-minus-r and beam searches):
  as "best", but stop as soon as a round (a step, with the floating searches' conditional
  steps, plus-l-minus-r's l + r moves or a beam level) fails to raise the best J recorded
  before it by more than ``tol`` (scikit-learn's SequentialFeatureSelector with
  n_features_to_select="auto"; there a gain equal to tol continues, here it must exceed it,
  so tol=0 stops at the first round that does not improve J; scikit-learn's default tol=None
  does not stop on J at all and selects half of the features, where fastfs's default tol
  stops on J). The round that stalled is
  recorded but not chosen. Backward, scikit-learn always removes at least one feature and
  compares each round with the one before it; here the full set is a record and every round
  is compared with the best J recorded, so the full set can be the answer. With either, a
  forward step where no candidate has a finite J (j2, j3, divergence or bhattacharyya past as
  many features as a class has samples) ends the run there, unrecorded (a fixed k that needs
  such a step is an error). A backward step where no removal leaves a finite J (the subset and
  every subset one smaller singular) is an error whatever n_features_to_select is: pass
  ridge > 0, or search forward.
* ``tol`` (with "auto" and "best" only; default 0): the result is the smallest recorded
  subset whose J is within |tol| of the best J recorded (ties: the earlier record), a
  parsimonious choice. A negative tol, allowed for the backward searches with "auto", lets a
  round lose up to |tol| from the best J before the search stops.
* ``history`` / ``subsets`` record J and the subset (ascending) after every step; a search
  starting from a non-empty subset records it first.
* ``callback(StepState)`` is called after every record; returning True stops and returns the
  best record so far (``stopped_early=True``).
"""

from __future__ import annotations

from typing import Any, Callable

import math
import warnings

import numpy as np

import fastfs._core as _core
from ._progress import Progress
from ._results import (EqualScoresWarning, RankingResult, SearchResult, StepState,
                       warn_if_search_tied)
from ._validation import (
    INDEX_MAX,
    user_stacklevel,
    check_bool,
    check_int,
    check_option,
    check_random_state,
    check_real,
    check_support,
    check_vector,
    guard_memory,
)
from .criteria import prepare


def _target(value: Any, n_features: int, *, allow_best: bool = True,
            allow_auto: bool = False) -> tuple[int, bool, bool]:
    """(k, best, auto) from n_features_to_select."""
    words = ["an int", "a float in (0, 1]"] + (["'best'"] if allow_best else []) + \
        (["'auto'"] if allow_auto else [])
    valid = ", ".join(words[:-1]) + " or " + words[-1]
    if isinstance(value, str):
        if value == "best" and allow_best:
            return n_features, True, False
        if value == "auto" and allow_auto:
            return n_features, True, True
        raise ValueError(f"n_features_to_select: expected {valid}, got {value!r}")
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"n_features_to_select: expected {valid}, got a bool")
    if isinstance(value, (int, np.integer)):
        k = int(value)
        if not 1 <= k <= n_features:
            raise ValueError(
                f"n_features_to_select: must be in [1, {n_features}] (n_features), got {k}"
            )
        return k, False, False
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not 0.0 < f <= 1.0:
            raise ValueError(f"n_features_to_select: a fraction must be in (0, 1], got {f}")
        return max(1, int(f * n_features)), False, False
    raise TypeError(f"n_features_to_select: expected {valid}, got {type(value).__name__}")


def _tolerance(tol: Any, n_features_to_select: Any, best: bool, auto: bool,
               backward: bool) -> float:
    if tol is None:
        return 0.0
    if not best:
        raise ValueError("tol: used only with n_features_to_select='auto' or 'best', got "
                         f"n_features_to_select={n_features_to_select!r}")
    tol = check_real(tol, "tol")
    if tol < 0 and not (auto and backward):
        raise ValueError(f"tol: must be >= 0 here, got {tol} (a negative tol is for the "
                         "backward searches with n_features_to_select='auto')")
    return tol


def _run(strategy: str, X: Any, y: Any, n_features_to_select: Any, criterion: Any,
         n_jobs: Any, callback: Callable[[StepState], Any] | None, verbose: bool, *,
         l: int = 0, r: int = 0, width: int = 1, max_subsets: float = 0.0,
         assume_monotone: bool = False, allow_best: bool = True, allow_auto: bool = False,
         tol: Any = None, backward: bool = False) -> SearchResult:
    assume_monotone = check_bool(assume_monotone, "assume_monotone")
    p = prepare(X, y, criterion, n_jobs, f"fastfs.{strategy}")
    n = p.cx.values.shape[1]
    k, best, auto = _target(n_features_to_select, n, allow_best=allow_best,
                            allow_auto=allow_auto)
    tol = _tolerance(tol, n_features_to_select, best, auto, backward)
    need = (r + 1 if l > r else l + 1) if strategy == "plus_l_minus_r" and best else 0
    if n < need:
        # "best" / "auto" run to n - r features (l > r) or to l + 1 (l < r): say so in terms
        # of the arguments given, not of the size the core derives from them.
        raise ValueError(f"X: plus_l_minus_r with l = {l}, r = {r} and n_features_to_select="
                         f"{n_features_to_select!r} needs at least {need} features, got "
                         f"n_features = {n}")
    progress = Progress(strategy, callback, verbose)
    def hook(restart: int, step: int, score: float, subset: np.ndarray) -> bool:
        return progress.hook(restart, step, p.unscale_J(score, strict=False),
                             subset.astype(np.intp))
    try:
        out = _core.search(strategy, p.values, p.codes, p.y, p.spec, p.fn,
                           k, best, auto, p.scale_J(tol), l, r, width,
                           float(max_subsets), bool(assume_monotone), p.n_threads,
                           hook if progress.active else None)
    finally:
        progress.close()
    return _search_result(out, p)


def _progress_hook(progress: Progress, p: Any) -> Callable | None:
    """The driver's progress hook (restart, step, score, subset) for a Progress, J in the units
    of X."""
    if not progress.active:
        return None
    def hook(restart: int, step: int, score: float, subset: np.ndarray) -> bool:
        return progress.hook(restart, step, p.unscale_J(score, strict=False),
                             subset.astype(np.intp))
    return hook


def _search_result(out: dict, p: Any) -> SearchResult:
    """A SearchResult from the core's search outcome, J in the units of X."""
    n = p.cx.values.shape[1]
    if float(out.score) == -np.inf and not out.stopped_early:
        # exhaustive search, branch and bound and annealing keep the best of what they
        # scored: when nothing had a finite J that "best" is any subset (NaN counts as -inf);
        # the stepwise searches already refuse such a step
        raise ValueError(
            "criterion: no subset the search scored has a finite value (for j2, j3, "
            "divergence and bhattacharyya: the scatter matrices of every subset are singular, "
            "as with fewer samples per class than features or features constant within the "
            "classes: pass ridge > 0 or a smaller n_features_to_select; or the callable "
            "criterion gave NaN or -inf everywhere)")
    warn_if_search_tied(bool(out.scores_tied), float(p.unscale_J(float(out.score))))
    selected = out.selected.astype(np.intp)
    support = np.zeros(n, dtype=bool)
    support[selected] = True
    return SearchResult(
        support=support,
        selected=selected,
        score=float(p.unscale_J(float(out.score))),
        history=p.unscale_J(out.history),
        feature_names=p.cx.feature_names,
        subsets=out.subsets,  # tuples of tuples of shared ints (the binding's)
        best_scores=p.unscale_J(out.best_scores),
        n_evaluations=int(out.n_evaluations),
        stopped_early=bool(out.stopped_early),
    )


_COMMON = """
    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Dense; float32 is converted to float64 for the search.
    y : array-like of shape (n_samples,)
        Class labels, or real targets for "loo_knn_mse" and "least_squares" (a callable gets
        y's values as a NumPy array, not encoded).
    n_features_to_select : int, float in (0, 1], "best" or "auto"
        See the module docstring ("auto" only where the signature's default is "auto").
    criterion : str, fastfs.criteria instance or callable J(X_subset, y) -> float
        "loo_knn_accuracy", "margin", "loo_knn_mse", "least_squares", "j1", "j2", "j3",
        "divergence", "bhattacharyya" (see fastfs.criteria).
    n_jobs : int, optional
        Threads for the built-in criteria (scikit-learn rules); results do not depend on it.
    tol : float, optional (not branch_and_bound)
        With "auto": the gain in J a round must exceed to continue (default 0: any gain
        beyond a tie; negative only for backward searches). With "auto" and "best": return
        the smallest recorded subset within |tol| of the best J. An error with an int or
        float n_features_to_select.
    callback : callable(StepState) -> bool, optional
        Called after every recorded step with step, score and selection (the subset,
        ascending); return True to stop.
    verbose : bool

    Returns
    -------
    SearchResult
        support, selected, score, history, subsets, best_scores, n_evaluations.
"""


def _doc(text: str, extra: str = "") -> Callable:
    """Docstring = the strategy's text + the shared parameters (+ its own, after criterion)."""
    def deco(f: Callable) -> Callable:
        common = _COMMON
        if extra:
            anchor = '        "divergence", "bhattacharyya" (see fastfs.criteria).\n'
            common = common.replace(anchor, anchor + extra)
        f.__doc__ = text + "\n" + common
        return f
    return deco


@_doc("""Sequential forward selection: from the empty set, add the feature that maximises J
    until k features (all of them for "best"; by default, "auto", until an addition does not
    raise J by more than ``tol``). ``selected`` is in order of addition.""")
def sfs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
        criterion: Any = "loo_knn_accuracy", tol: float | None = None,
        n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
        verbose: bool = False) -> SearchResult:
    return _run("sfs", X, y, n_features_to_select, criterion, n_jobs, callback, verbose,
                allow_auto=True, tol=tol, backward=False)


@_doc("""Sequential backward selection: from all features, remove the feature whose removal
    leaves the largest J until k remain (down to 1 for "best"; by default, "auto", until a
    removal does not raise the best J by more than ``tol``: with tol=0 and a criterion that
    never rises when a feature is removed, such as j3, that is the full set).""")
def sbs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
        criterion: Any = "loo_knn_accuracy", tol: float | None = None,
        n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
        verbose: bool = False) -> SearchResult:
    return _run("sbs", X, y, n_features_to_select, criterion, n_jobs, callback, verbose,
                allow_auto=True, tol=tol, backward=True)


@_doc("""Sequential floating forward selection. After each addition, remove features while
    that strictly beats the best subset recorded of the smaller size. The best subset of every
    size is remembered; an addition that lands below the best of its size continues from that
    best instead, so the search never loops. The first time an addition reaches a size, sfs's
    path takes its step too (recorded) and its subset is that size's first best, so the result
    is never worse than sfs's at any size (floating alone can be: a better subset of size s need
    not grow into a better one of size s + 1). Stops when an addition reaches k (n for
    "best"). With "auto" it stops once a round stalls after sfs's path has stalled too, so its
    answer is never worse than sfs's with "auto" (its own better subsets of a size can make
    a round stall before sfs would).""")
def sffs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
         verbose: bool = False) -> SearchResult:
    return _run("sffs", X, y, n_features_to_select, criterion, n_jobs, callback, verbose,
                allow_auto=True, tol=tol, backward=False)


@_doc("""Sequential floating backward selection: the mirror image of sffs, from all features,
    each removal followed by additions while they strictly beat the best recorded subset of
    the larger size, and sbs's path followed alongside, so never worse than sbs at any size.
    Stops when a removal reaches k (1 for "best"); with "auto", once a round stalls after
    sbs's path has stalled too.""")
def sfbs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
         verbose: bool = False) -> SearchResult:
    return _run("sfbs", X, y, n_features_to_select, criterion, n_jobs, callback, verbose,
                allow_auto=True, tol=tol, backward=True)


@_doc("""Plus-l-minus-r. l > r: from the empty set, rounds of l sfs additions then r sbs
    removals; l < r: from all features, rounds of r removals then l additions. The last round
    is shortened so it ends at exactly k; needs k + r <= n_features (l > r) or k - l >= 1
    (l < r). "best" runs to k = n_features - r (l > r) or l + 1 (l < r) and returns the best
    record.""", """    l, r : int >= 1, l != r
        Additions and removals per round.
""")
def plus_l_minus_r(X: Any, y: Any, n_features_to_select: Any = "auto", *, l: int, r: int,
                   criterion: Any = "loo_knn_accuracy", tol: float | None = None,
                   n_jobs: int | None = None,
                   callback: Callable[[StepState], Any] | None = None,
                   verbose: bool = False) -> SearchResult:
    l = check_int(l, "l")
    r = check_int(r, "r")
    if l == r:
        raise ValueError(f"l, r: must differ (l > r searches forward, l < r backward), got "
                         f"l = r = {l}")
    return _run("plus_l_minus_r", X, y, n_features_to_select, criterion, n_jobs, callback,
                verbose, l=l, r=r, allow_auto=True, tol=tol, backward=l < r)


@_doc("""Bidirectional search: forward selection from the empty set F and backward selection
    from the full set B take turns (forward first). Forward only adds features B still holds;
    backward only removes features F has not chosen, so F stays inside B. Stops when F or B
    has k features (that one is the result) or, for "best", when they meet.""")
def bidirectional(X: Any, y: Any, n_features_to_select: Any = "best", *,
                  criterion: Any = "loo_knn_accuracy", tol: float | None = None,
                  n_jobs: int | None = None,
                  callback: Callable[[StepState], Any] | None = None,
                  verbose: bool = False) -> SearchResult:
    return _run("bidirectional", X, y, n_features_to_select, criterion, n_jobs, callback,
                verbose, tol=tol)


@_doc("""Beam search, forward: keep the ``width`` best subsets of every size (J descending,
    ties by the sorted indices); the next level is every kept subset plus one feature (a set
    reached twice counts once). Records the best subset of every level.""", """    width : int >= 1
        Subsets kept per level.
""")
def beam(X: Any, y: Any, n_features_to_select: Any = "auto", *, width: int = 5,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None,
         callback: Callable[[StepState], Any] | None = None,
         verbose: bool = False) -> SearchResult:
    width = check_int(width, "width")
    return _run("beam", X, y, n_features_to_select, criterion, n_jobs, callback, verbose,
                width=width, allow_auto=True, tol=tol)


@_doc("""Exhaustive search: every subset of size k (every size for "best") in lexicographic
    order; the first maximum wins. Refuses to start when that is more than ``max_subsets``
    subsets. Records the best subset of every size evaluated.""", """    max_subsets : int >= 1
        Refuse a run that would evaluate more subsets than this (default 1_000_000).
""")
def exhaustive(X: Any, y: Any, n_features_to_select: Any = "best", *,
               criterion: Any = "loo_knn_accuracy", max_subsets: int = 1_000_000,
               tol: float | None = None,
               n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
               verbose: bool = False) -> SearchResult:
    max_subsets = check_int(max_subsets, "max_subsets", maximum=INDEX_MAX)
    return _run("exhaustive", X, y, n_features_to_select, criterion, n_jobs, callback,
                verbose, max_subsets=max_subsets, tol=tol)


@_doc("""Branch and bound: the size-k subset with the largest J, exactly as exhaustive search
    finds it (ties: the lexicographically smallest), for a criterion that never rises when a
    feature is removed (j2, j3, divergence, bhattacharyya, least_squares). Features are
    removed in increasing index order so each subset has one path; the children of a node are
    scored together and visited best first, and a node below the best complete subset found so
    far is pruned. A node whose J is -inf (a singular scatter matrix: more features than a
    class has samples) bounds nothing and is never pruned, so wide data stays exact but can
    cost as much as exhaustive search down to the sizes that are not singular (pass ridge > 0
    to the criterion there). Records every improvement of that best.
    Other criteria are refused unless ``assume_monotone=True`` (then the result is exact only if
    the assumption holds). ``n_features_to_select`` is an int or a float, not "best" (for a
    monotone criterion the full set is best). Pruning depends on the data: on noise, 24
    features to 8 took about 1.4 million evaluations; ``max_evaluations`` bounds the
    work.""", """    assume_monotone : bool
        Accept a criterion not known to be monotone.
    max_evaluations : int >= 1 or None
        Stop expanding nodes once the criterion has been evaluated this often (default 2
        million: about 40 s of J3 on 200 samples and 30 features with one thread, about 2
        minutes on 102 samples and 300 genes): the result is then the best subset found so
        far, ``stopped_early`` is True and a ``UserWarning`` says it is not proven best.
        None: no limit.
""")
def branch_and_bound(X: Any, y: Any, n_features_to_select: Any, *, criterion: Any = "j3",
                     assume_monotone: bool = False,
                     max_evaluations: int | None = 2_000_000, n_jobs: int | None = None,
                     callback: Callable[[StepState], Any] | None = None,
                     verbose: bool = False) -> SearchResult:
    cap = np.inf if max_evaluations is None else float(
        check_int(max_evaluations, "max_evaluations", maximum=INDEX_MAX))
    out = _run("branch_and_bound", X, y, n_features_to_select, criterion, n_jobs, callback,
               verbose, assume_monotone=assume_monotone, allow_best=False, max_subsets=cap)
    if out.stopped_early and out.n_evaluations >= cap:
        warnings.warn(
            f"branch_and_bound: stopped after max_evaluations={max_evaluations} evaluations of "
            "the criterion; the result is the best subset of that size found so far, not "
            "proven best (raise max_evaluations or pass None; on data with more features than "
            "samples a class, ridge > 0 lets the scatter criteria bound the large subsets)",
            UserWarning, stacklevel=user_stacklevel())
    return out


def best_first(X: Any, y: Any, n_features_to_select: Any = "best", *,
               criterion: Any = "loo_knn_accuracy", patience: int | None = 5,
               max_evaluations: int | None = None, removals: bool = False,
               n_jobs: int | None = None, callback: Callable[[StepState], Any] | None = None,
               verbose: bool = False) -> SearchResult:
    return _local("best_first", X, y, n_features_to_select, criterion, n_jobs, callback,
                  verbose, patience=patience, max_evaluations=max_evaluations,
                  removals=removals)


def simulated_annealing(X: Any, y: Any, n_features_to_select: Any = "best", *,
                        criterion: Any = "loo_knn_accuracy", n_iter: int = 1000,
                        initial_temperature: float | None = None,
                        schedule: Any = "geometric", cooling: float | None = None,
                        initial: Any = None, random_state: Any = None,
                        n_jobs: int | None = None,
                        callback: Callable[[StepState], Any] | None = None,
                        verbose: bool = False) -> SearchResult:
    return _local("simulated_annealing", X, y, n_features_to_select, criterion, n_jobs,
                  callback, verbose, n_iter=n_iter, initial_temperature=initial_temperature,
                  schedule=schedule, cooling=cooling, initial=initial,
                  random_state=random_state)


SCHEDULES = ("geometric", "linear")
# Best-first search without a stop evaluates every subset: refused above this many (as
# exhaustive search's default max_subsets).
_UNBOUNDED_LIMIT = 1_000_000
_AUTO_PROBES = 32


def _temperatures(n_iter: int, initial_temperature: Any, schedule: Any, cooling: Any,
                  scale_J: Callable[[float, str], float]
                  ) -> tuple[str, float, float, list, bool]:
    """(schedule kind, T0, cooling, table, relative) on the core's scale of J (``scale_J``:
    a value in units of J to that scale); relative: T0 multiplies the automatic start
    temperature."""
    if not isinstance(schedule, str):
        if initial_temperature is not None or cooling is not None:
            raise ValueError("initial_temperature, cooling: not used with a schedule given as "
                             "a callable or an array (it gives the temperatures itself)")
        temps = [schedule(t) for t in range(n_iter)] if callable(schedule) else schedule
        temps = check_vector(temps, "schedule", length=n_iter, length_name="n_iter")
        if (temps < 0).any():
            raise ValueError("schedule: temperatures must be >= 0")
        table = [scale_J(float(v), "schedule") for v in temps]
        return "table", 1.0, 1.0, table, False
    check_option(schedule, "schedule", SCHEDULES)
    if initial_temperature is None:
        T0, relative = 1.0, True
    else:
        T0 = scale_J(check_real(initial_temperature, "initial_temperature", positive=True),
                     "initial_temperature")
        relative = False
    if schedule == "linear":
        if cooling is not None:
            raise ValueError("cooling: used only with schedule='geometric'")
        return "linear", T0, 1.0, [], relative
    if cooling is None:
        cooling = 1e-3 ** (1.0 / max(n_iter - 1, 1))
    else:
        cooling = check_real(cooling, "cooling")
        if not 0.0 < cooling < 1.0:
            raise ValueError(f"cooling: must be in (0, 1), got {cooling}")
    return "geometric", T0, cooling, [], relative


def _local(strategy: str, X: Any, y: Any, n_features_to_select: Any, criterion: Any,
           n_jobs: Any, callback: Callable[[StepState], Any] | None, verbose: bool,
           **kw: Any) -> SearchResult:
    """best_first and simulated_annealing: validation, then the core's strategy."""
    p = prepare(X, y, criterion, n_jobs, f"fastfs.{strategy}")
    n = p.cx.values.shape[1]
    k, best, _ = _target(n_features_to_select, n)
    if strategy == "best_first":
        patience = kw["patience"]
        patience = 0 if patience is None else check_int(patience, "patience",
                                                         maximum=INDEX_MAX)
        cap = kw["max_evaluations"]
        cap = np.inf if cap is None else float(check_int(cap, "max_evaluations",
                                                         maximum=INDEX_MAX))
        removals = check_bool(kw["removals"], "removals")
        if patience == 0 and cap == np.inf:
            total = sum(math.comb(n, s) for s in range(1, k + 1))
            if total > _UNBOUNDED_LIMIT:
                raise ValueError(
                    f"patience: with patience=None and no max_evaluations, best-first search "
                    f"evaluates all {total} subsets (more than {_UNBOUNDED_LIMIT}); set "
                    "max_evaluations, or a patience")
        progress = Progress(strategy, callback, verbose)
        try:
            out = _core.best_first(p.values, p.codes, p.y, p.spec, p.fn,
                                   k, patience, cap, removals, p.n_threads,
                                   _progress_hook(progress, p))
        finally:
            progress.close()
        return _search_result(out, p)
    n_iter = check_int(kw["n_iter"], "n_iter", maximum=10**9)
    kind, T0, cooling, table, relative = _temperatures(
        n_iter, kw["initial_temperature"], kw["schedule"], kw["cooling"], p.scale_J)
    seed = check_random_state(kw["random_state"])
    if n < 2:
        raise ValueError(f"X: simulated annealing needs at least 2 features, got "
                         f"n_features = {n}")
    start: list[int] = []
    if kw["initial"] is not None:
        start = [int(i) for i in np.flatnonzero(check_support(kw["initial"], n))]
        if not start:
            raise ValueError("initial: the start subset is empty")
        if not best and len(start) != k:
            raise ValueError(f"initial: has {len(start)} features, but "
                             f"n_features_to_select = {k} fixes the size")
    # Every step is recorded: its J and its subset twice (sorted and in list order).
    size = n if best else k
    guard_memory((n_iter + 1) * (16 * size + 128), f"fastfs.{strategy}",
                 f"the history of {n_iter} steps", "use fewer steps (n_iter), or raise "
                 "fastfs.config.max_memory")
    progress = Progress(strategy, callback, verbose, total=n_iter + 1)
    try:
        out = _core.annealing(p.values, p.codes, p.y, p.spec, p.fn,
                              0 if best else k, n_iter, kind, T0, cooling, table, relative,
                              _AUTO_PROBES, seed, start, p.n_threads,
                              _progress_hook(progress, p))
    finally:
        progress.close()
    return _search_result(out, p)


_NO_TOL = '''    tol : float, optional (not branch_and_bound)
        With "auto": the gain in J a round must exceed to continue (default 0: any gain
        beyond a tie; negative only for backward searches). With "auto" and "best": return
        the smallest recorded subset within |tol| of the best J. An error with an int or
        float n_features_to_select.
'''
_SIZE = '''    n_features_to_select : int, float in (0, 1], "best" or "auto"
        See the module docstring ("auto" only where the signature's default is "auto").
'''
_CRITERION = '''        "divergence", "bhattacharyya" (see fastfs.criteria).
'''


def _local_doc(text: str, size: str, extra: str) -> str:
    assert _NO_TOL in _COMMON and _SIZE in _COMMON and _CRITERION in _COMMON
    common = _COMMON.replace(_NO_TOL, "").replace(_SIZE, size).replace(
        _CRITERION, _CRITERION + extra)
    return text + "\n" + common


best_first.__doc__ = _local_doc(
    """Best-first search (Kohavi and John, 1997, section 3.2): an open list of evaluated
    subsets ordered by J. The first step scores every single feature; every later step takes
    the best open subset (J descending, then the smaller subset, then the smaller sorted
    indices), records it and expands it: every subset one addition away (and, with
    ``removals=True``, one removal away) not met before is scored and joins the open list. The
    search stops after ``patience`` expansions in a row whose subset did not beat the best one
    expanded before, once ``max_evaluations`` evaluations are reached (checked before each
    expansion, so the last expansion completes), or when the open list is empty. The result is
    the best subset evaluated (J within a tie of the largest, then the smaller subset, then the
    smaller sorted indices); with ``patience=None`` and no budget every subset is evaluated, so
    it is what exhaustive search returns.""",
    '''    n_features_to_select : int, float in (0, 1] or "best"
        "best": subsets of any size; an int k (or a fraction of n_features): the largest
        subset size considered (the result has at most k features).
''',
    '''    patience : int >= 1 or None
        Expansions without improvement before the search stops (default 5; None: never,
        refused without max_evaluations when that means more than 1_000_000 subsets).
    max_evaluations : int, optional
        Evaluation budget (default: none).
    removals : bool
        Expand by single removals as well as single additions.
''').replace("Called after every recorded step", "Called after every expansion")

simulated_annealing.__doc__ = _local_doc(
    """Simulated annealing over feature subsets as bit masks.

    From a start subset (``initial``, or drawn with ``random_state``: each feature in with
    probability 1/2, or k features at random for a fixed size), each of ``n_iter`` steps
    proposes one random move: with n_features_to_select="best", flipping one feature (never
    emptying the subset); with a size k, swapping a feature in for one out. A move that does
    not lower J is taken; one that lowers it by delta is taken with probability
    exp(-delta / T_t). Every step is recorded (the subset held after it; the start first) and
    the result is the best record (ties: the smaller subset, then the earlier record), so it is
    never worse than the start. The same seed gives the same run whatever n_jobs is.

    Temperatures: ``schedule="geometric"``: T_t = T0 cooling**t (default cooling: T falls to
    T0 / 1000 at the last step); ``"linear"``: T_t = T0 (1 - t / n_iter); or the temperatures
    themselves (a callable t -> T_t or an array of n_iter values, in the units of J). T0 is
    ``initial_temperature`` (units of J) or, by default, set from the start: the mean loss of
    the losing moves among 32 random moves of the start, over ln 2, so that such a move is
    taken with probability 1/2 at first (0, only moves that do not lose, when none loses).""",
    '''    n_features_to_select : int, float in (0, 1] or "best"
        "best": subsets of any size; an int k (or a fraction of n_features): every subset
        visited has exactly k features (k = n_features leaves no move: the full set).
''',
    '''    n_iter : int >= 1
        Steps, one evaluation each (plus the 32 probes of the automatic T0).
    initial_temperature : float > 0, optional
    schedule : "geometric", "linear", callable or array-like
    cooling : float in (0, 1), optional (geometric only)
    initial : bool mask or int indices, optional
        The start subset.
    random_state : None, int, Generator or RandomState
''')


def rank_features(X: Any, y: Any, n_features_to_select: Any = None, *,
                  criterion: Any = "loo_knn_accuracy",
                  n_jobs: int | None = None) -> RankingResult:
    """Naive ranking: score every feature alone with the criterion and keep the best ones.

    J({x}) is computed for every feature x in one pass: for a built-in criterion these are
    exactly the candidates of sfs's first step, scored together (in parallel); a callable or a
    ``criteria.Wrapper`` is called once per feature. Features are ordered by J descending, a J
    that ties with the best one left (within 1e-10 relative, as in the searches) going to the
    lower feature index, so ``selected[0]`` is the feature sfs adds first. The ranking ignores
    redundancy: two copies of a good feature rank side by side.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels, or real targets for "loo_knn_mse" and "least_squares".
    n_features_to_select : int, float in (0, 1] or None
        How many of the best features to keep (a float: that fraction of n_features, at least
        one); None keeps them all (a full ranking).
    criterion : str, fastfs.criteria instance or callable J(X_subset, y) -> float
        As in the searches (see fastfs.criteria).
    n_jobs : int, optional
        Threads for the built-in criteria; results do not depend on it.

    Returns
    -------
    RankingResult
        ``scores`` (J of every feature alone), ``ranking`` (all features, best first),
        ``selected`` (the kept ones, best first), ``support``, ``score`` (J of the kept
        features together), ``history`` (J of each kept feature alone), ``n_evaluations``.
        A feature whose J is undefined alone (-inf) ranks last; when every feature is, a
        ValueError. When every feature scores the same, a UserWarning (the order is then only
        the feature index).
    """
    p = prepare(X, y, criterion, n_jobs, "fastfs.rank_features")
    n = p.cx.values.shape[1]
    k = n if n_features_to_select is None else _target(n_features_to_select, n,
                                                        allow_best=False)[0]
    out = _core.rank_features(p.values, p.codes, p.y, p.spec, p.fn, k,
                              p.n_threads)
    scores = p.unscale_J(out.scores)
    ranking = out.order.astype(np.intp)
    if n > 1 and not np.any(_beats(scores[ranking[0]], scores)):
        warnings.warn("rank_features: every feature has the same score, so the ranking is "
                      "only the feature order; check the criterion and the data",
                      EqualScoresWarning, stacklevel=2)
    selected = ranking[:k]
    support = np.zeros(n, dtype=bool)
    support[selected] = True
    return RankingResult(
        support=support,
        selected=selected,
        score=float(p.unscale_J(float(out.score))),
        history=scores[selected],
        feature_names=p.cx.feature_names,
        scores=scores,
        ranking=ranking,
        n_evaluations=int(out.n_evaluations),
    )


def _beats(a: float, b: np.ndarray) -> np.ndarray:
    """a larger than b by more than a tie (1e-10 relative), as the C++ driver decides."""
    a = float(a)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        close = (a == b) | (np.isfinite(a) & np.isfinite(b) &
                            (np.abs(a - b) <= 1e-10 * np.maximum(abs(a), np.abs(b))))
    return (a > b) & ~close


__all__ = [
    "beam",
    "best_first",
    "bidirectional",
    "branch_and_bound",
    "exhaustive",
    "plus_l_minus_r",
    "rank_features",
    "sbs",
    "sfbs",
    "sffs",
    "sfs",
    "simulated_annealing",
]
