"""Result types: small frozen dataclasses with a readable repr.

The names below mean the same in every result that has them (docs/results.md has the full
table, tests/test_results_vocabulary.py checks it):

``history``
    The score after each recorded step of the run that was returned, in order: G-flip's e(F)
    after each epoch of the winning restart, a search's J after each step, OMP's and backward
    elimination's -RSS after each round. Never a list over restarts. Empty for the methods
    that compute no score per step (Simba, RGS, SKS, the Relief family).
``restart_scores``
    The final score of each restart, in restart order (G-flip, Simba, RGS; on one machine or
    as Dask tasks); the returned result is the restart ``best_restart`` (the first of equal
    scores).
``best_restart``
    The index of the restart whose result is returned (0 for a single run).
``stopped_early``
    True when the run ended before its natural end: a callback returned True, Ctrl-C was
    caught by a function that returns partial results, or fewer rounds than asked were
    possible (OMP and backward elimination with no column left above ``tol``).
``n_iter``
    Iterations of an inner solver (the LASSO's coordinate-descent sweeps, the logistic
    learners' Newton steps), not steps of the selection.
``n_epochs``
    G-flip: passes over all features in the winning restart.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
import warnings

from dataclasses import dataclass, field, fields

import numpy as np

import fastfs._core as _core


def _short(value: object) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return np.array2string(value, separator=", ", precision=6)
        head = np.array2string(value[:6], separator=", ", precision=6)[:-1]
        return f"{head}, ... ({value.size} items)]"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


def ranking_by_weight(weights: np.ndarray) -> np.ndarray:
    """Feature indices, largest weight first; equal weights keep the lower index first (NaN
    last): np.argsort(-weights, kind="stable"), by the core's radix sort (several times faster
    on thousands of features)."""
    w = np.asarray(weights)
    if w.ndim == 1 and w.dtype.kind == "f":
        return _core._ranking(w)
    return np.argsort(-w, kind="stable")


class EqualScoresWarning(UserWarning):
    """Every feature got the same score or weight (or every one is NaN): the ranking is then
    only the column order and selects nothing in particular. Typical causes: every column of
    X is constant, no feature differs between the classes, or too few samples for the method's
    neighbours or statistics."""


# Why every score may be equal, beside constant columns, by the kind of method.
_EQUAL_CAUSES = {
    "classes": "no feature's values differ between the classes",
    "correlation": "no feature is correlated with y",
    "neighbours": "no feature tells any sample's nearest hits from its nearest misses",
    "simba": "no feature tells any sample's nearest hit from its nearest miss, or the linear "
             "utility's steps (in the units of X) are too small to move w = 1: rescale X, or "
             "use utility='sigmoid'",
    "quality": "the quality function tells no feature from another",
    "soft_knn": "the soft kNN estimate of y changes with no feature's weight (it is exact "
                "already, or no feature relates to y)",
}


# True while a caller that checks the final result itself runs an inner scoring (a wrapper's
# rounds, a Dask task): per thread and per context, unlike warnings.catch_warnings, whose
# save-and-restore of the global filters is unsafe when tasks run in threads.
_caller_checks = contextvars.ContextVar("fastfs_caller_checks_equal_scores", default=False)


@contextlib.contextmanager
def caller_checks_equal_scores():
    """Inside this block warn_if_equal says nothing: the caller checks its own result."""
    token = _caller_checks.set(True)
    try:
        yield
    finally:
        _caller_checks.reset(token)


def warn_if_equal(values: np.ndarray, what: str, noun: str, cause: str,
                  stacklevel: int = 3) -> None:
    """Warn (``EqualScoresWarning``) when two or more features all got the same value, or all
    NaN. ``what`` names the function, ``noun`` what it computes ("score", "weight"),
    ``cause`` a key of ``_EQUAL_CAUSES`` (the likely reason beside constant columns);
    ``stacklevel`` 3 points at the caller of the function that calls this."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size < 2 or _caller_checks.get():
        return
    if np.isnan(v).all():
        warnings.warn(f"{what}: every feature's {noun} is NaN, so they rank in column order "
                      "only", EqualScoresWarning, stacklevel=stacklevel)
    elif (v == v[0]).all() or (np.isfinite(v).all()
                               and np.ptp(v) <= 1e-10 * float(np.abs(v).max())):
        # equal up to rounding (1e-10 relative, the searches' tie) counts as equal: such a
        # ranking is decided by the last bits of the arithmetic
        warnings.warn(f"{what}: every feature got the same {noun} ({v[0]:.6g}) up to "
                      "rounding, so their order is arbitrary: every column of X may be "
                      f"constant, or "
                      f"{_EQUAL_CAUSES[cause]}", EqualScoresWarning, stacklevel=stacklevel)


def warn_if_search_tied(tied: bool, score: float) -> None:
    """EqualScoresWarning when every subset a search scored got the same J (up to the
    searches' tie): its selection is then the tie rule's, not the criterion's."""
    if tied and not _caller_checks.get():
        from ._validation import user_stacklevel

        warnings.warn(
            f"criterion: every subset the search scored has the same value ({score:.6g}) up "
            "to rounding, so the selection follows the tie rule (lower feature indices), not "
            "the criterion: no feature changes it on these data (for loo_knn_accuracy, every "
            "subset classifies the same samples), or a callable criterion ignores its input",
            EqualScoresWarning, stacklevel=user_stacklevel())


class _Repr:
    _repr_skip: tuple[str, ...] = ()

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={_short(getattr(self, f.name))}"
            for f in fields(self)  # type: ignore[arg-type]
            if f.name not in self._repr_skip and getattr(self, f.name) is not None
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False)
class SubsetResult(_Repr):
    """A selected feature subset.

    Attributes
    ----------
    support : ndarray of bool, shape (n_features,)
        Mask of the selected features.
    selected : ndarray of int
        Indices of the selected features in the order they entered the subset.
    score : float
        The criterion's value on the selected subset.
    history : ndarray
        The criterion after every step (for G-flip: after every epoch).
    feature_names : ndarray of str or None
        Column names when X was a DataFrame.
    """

    support: np.ndarray
    selected: np.ndarray
    score: float
    history: np.ndarray
    feature_names: np.ndarray | None = None
    _repr_skip = ("support",)

    @property
    def selected_names(self) -> np.ndarray | None:
        """Names of the selected features in selection order (None without names)."""
        if self.feature_names is None:
            return None
        return self.feature_names[self.selected]


def without_constant_features(values: np.ndarray, support: np.ndarray,
                              selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """G-flip's answer without the features constant over the samples (columns of ``values``):
    such a feature changes no distance, so no margin. Dropping it never raises e(F) strictly,
    so a start from the full set kept every one (188 blank pixels of MNIST); the score is the
    same without them."""
    support = np.asarray(support, dtype=bool)
    selected = np.asarray(selected, dtype=np.intp)
    if selected.size:
        constant = np.flatnonzero(values.min(axis=0) == values.max(axis=0))
        if constant.size:
            support = support.copy()
            support[constant] = False
            selected = selected[support[selected]]
    return support, selected


def gflip_empty_message(restart_scores: np.ndarray, score: float, utility: str,
                        n_restarts: int, initial: object) -> str:
    """G-flip's warning when the best subset is empty, with the advice that fits the call."""
    scores = np.asarray(restart_scores, dtype=np.float64)
    msg = (f"gflip: selected no feature: the empty set scored best (e(F) = {score:.6g}, "
           f"restart scores {np.array2string(scores, precision=6)})")
    hints = []
    if initial is None and scores.size > 1 and np.sum(scores == score) > 1:
        hints.append("restarts that tie go to the first one, which starts from the empty set")
    if initial is None and n_restarts < 2:
        hints.append("start from the full set too (n_restarts >= 2)")
    if utility == "linear":
        hints.append("with utility='linear' a feature that makes some margins worse lowers "
                     "e(F); try utility='sigmoid'")
    return msg + ("; " + "; ".join(hints) if hints else "")


@dataclass(frozen=True, repr=False)
class GFlipResult(SubsetResult):
    """SubsetResult of G-flip, plus n_epochs and n_flips of the winning restart and the final
    score of every restart (``restart_scores``)."""

    n_epochs: int = 0
    n_flips: int = 0
    best_restart: int = 0
    stopped_early: bool = False
    restart_scores: np.ndarray = field(default_factory=lambda: np.empty(0))


@dataclass(frozen=True, repr=False)
class SearchResult(SubsetResult):
    """SubsetResult of a search strategy.

    Attributes (beyond SubsetResult's)
    ----------------------------------
    history : ndarray of float64
        J after every recorded step (the start subset first when the search starts from a
        non-empty one).
    subsets : tuple of tuples of int
        The subset after every recorded step, indices ascending; same length as ``history``.
    best_scores : ndarray of float64, shape (n_features + 1,)
        Index s: the best J among the recorded subsets of size s (NaN where none).
    n_evaluations : int
        How many times the criterion was evaluated.
    stopped_early : bool
        True when the callback stopped the search (the result is then the best record).
    """

    subsets: tuple = ()
    best_scores: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_evaluations: int = 0
    stopped_early: bool = False
    _repr_skip = ("support", "subsets", "best_scores")


@dataclass(frozen=True, repr=False)
class RankingResult(SubsetResult):
    """SubsetResult of a ranking: every feature scored alone, the top ones kept.

    ``selected`` holds the kept features best first, ``score`` is J of the kept features
    together and ``history`` J of each kept feature alone (``scores[selected]``).

    Attributes (beyond SubsetResult's)
    ----------------------------------
    scores : ndarray of float64, shape (n_features,)
        J of every feature alone (-inf where the criterion is undefined).
    ranking : ndarray of int, shape (n_features,)
        Every feature, best first (ties: the lower index first).
    n_evaluations : int
        How many times the criterion was evaluated.
    """

    scores: np.ndarray = field(default_factory=lambda: np.empty(0))
    ranking: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    n_evaluations: int = 0
    _repr_skip = ("support", "scores")


@dataclass(frozen=True, repr=False)
class ThresholdResult(SubsetResult):
    """SubsetResult of a threshold on feature weights (``fastfs.thresholds``): ``selected``
    is the top of the weight ranking, best first; ``threshold`` the weight cut (see the
    function for ``score`` and ``history``); ``stopped_early`` True when a callback stopped
    the scan (``cv_top_features``) before the last size."""

    threshold: float = float("nan")
    stopped_early: bool = False


@dataclass(frozen=True, repr=False)
class WeightResult(_Repr):
    """Feature weights (higher = more relevant) and the ranking they induce (best first).

    As an array it is its weights (``np.asarray(result)``), so the weighting functions serve as
    score functions of scikit-learn's ``SelectKBest`` and ``SelectPercentile``, which keep the
    features of largest score: ``SelectKBest(fastfs.relieff, k=10)``. Pass parameters with
    ``functools.partial`` (``partial(fastfs.simba, random_state=0)``). ``stopped_early`` is True
    when a callback stopped the computation before its end. ``n_iter`` is the number of
    rounds of ``iterative_relief``, None for the methods without an iterated inner solver (the
    steps of Simba or Relief are not counted there).
    """

    weights: np.ndarray
    ranking: np.ndarray
    score: float
    history: np.ndarray = field(default_factory=lambda: np.empty(0))
    feature_names: np.ndarray | None = None
    stopped_early: bool = False
    restart_scores: np.ndarray = field(default_factory=lambda: np.empty(0))
    best_restart: int = 0
    n_iter: int | None = None

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self.weights, dtype=dtype, copy=True)
        if copy is False and dtype is not None and np.dtype(dtype) != self.weights.dtype:
            raise ValueError(f"WeightResult: the weights are {self.weights.dtype}; converting "
                             f"them to {np.dtype(dtype)} needs a copy")
        return np.asarray(self.weights, dtype=dtype)


def check_fdr(fdr: object) -> float:
    if isinstance(fdr, bool) or not isinstance(fdr, numbers.Real):
        raise TypeError(f"fdr: expected a real number in (0, 1), got {type(fdr).__name__}")
    fdr = float(fdr)
    if not 0.0 < fdr < 1.0:
        raise ValueError(f"fdr: expected a false discovery rate in (0, 1), got {fdr!r}")
    return fdr


def passing_fdr(pvalues: np.ndarray, qvalues: np.ndarray, fdr: float) -> np.ndarray:
    """Indices with q <= fdr, smallest p-value first (lower index first on ties)."""
    keep = np.flatnonzero(qvalues <= fdr)
    return keep[np.argsort(pvalues[keep], kind="stable")]


@dataclass(frozen=True, repr=False)
class StirResult(WeightResult):
    """WeightResult of :func:`fastfs.stir`: the Relief scores with STIR's per-feature test.

    Attributes (beyond WeightResult's)
    ----------------------------------
    t_statistics, pvalues, qvalues : ndarray of float64, shape (n_features,)
        The pseudo t-statistic, its one-sided p-value and the Benjamini-Hochberg adjusted
        p-value of every feature.
    fdr : float
        The false discovery rate of ``selected``.
    selected : ndarray of int
        Features with q-value <= ``fdr``, smallest p-value first.
    hit_means, miss_means : ndarray of float64
        Mean scaled difference of every feature over the hit pairs and the miss pairs.
    n_hit_pairs, n_miss_pairs : int
        Numbers of (sample, neighbour) hit and miss pairs.
    method : str
        "relieff" or "multisurf".
    """

    t_statistics: np.ndarray = field(default_factory=lambda: np.empty(0))
    pvalues: np.ndarray = field(default_factory=lambda: np.empty(0))
    qvalues: np.ndarray = field(default_factory=lambda: np.empty(0))
    fdr: float = 0.05
    selected: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    hit_means: np.ndarray = field(default_factory=lambda: np.empty(0))
    miss_means: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_hit_pairs: int = 0
    n_miss_pairs: int = 0
    method: str = ""
    _repr_skip = ("history", "restart_scores", "best_restart", "hit_means", "miss_means")

    def significant(self, fdr: float = 0.05) -> np.ndarray:
        """Indices of the features with Benjamini-Hochberg q-value <= ``fdr``, smallest
        p-value first."""

        return passing_fdr(self.pvalues, self.qvalues, check_fdr(fdr))


@dataclass(frozen=True)
class StepState:
    """What a callback receives between steps (read-only copies).

    ``step`` counts the steps done, from 1 (a sample or block of a pass, an epoch, an alpha
    of a path, an OMP addition, a removal), except in the subset searches (sfs ... beam,
    exhaustive, branch_and_bound, best_first, simulated_annealing, the ORDERED-FS family and
    greedy_logistic), where it is the index of the record in the result's ``history``: 0 for
    the first record (the start subset when the search starts from one). ``score`` is the
    running objective (J for the searches; NaN where there is none), ``selection`` the
    current subset, support, weights or per-step values, and ``restart`` the start (0 when
    there is one)."""

    step: int
    score: float
    selection: np.ndarray
    restart: int = 0


@dataclass(frozen=True, repr=False, eq=False)
class FilterResult(_Repr, tuple):
    """Per-feature scores of a univariate filter, with p-values where there is a test.

    It is also the tuple ``(scores, pvalues)``: scikit-learn's ``SelectKBest`` and
    ``SelectPercentile`` accept a score function's result only when it is a tuple or a list,
    so ``SelectKBest(fastfs.filters.anova_f, k=10)`` works and
    ``scores, pvalues = fastfs.filters.anova_f(X, y)`` unpacks.

    Attributes
    ----------
    scores : ndarray of float64, shape (n_features,)
        The statistic per feature, as the filter's docstring defines it (signed for pearson,
        t_test, z_test and s2n: ``SelectKBest`` keeps the largest values, so rank by
        ``np.abs(result.scores)`` or by the p-values to keep both directions).
    pvalues : ndarray of float64, shape (n_features,), or None
        Two-sided p-values of the statistic's test; None for scores without a test.
    feature_names : ndarray of str or None
        Column names when X was a DataFrame.
    """

    scores: np.ndarray
    pvalues: np.ndarray | None = None
    feature_names: np.ndarray | None = None

    def __new__(cls, scores, pvalues=None, feature_names=None):
        return tuple.__new__(cls, (scores, pvalues))

    def __getnewargs__(self):
        # pickle and copy rebuild the tuple part from these, then restore the fields.
        return (self.scores, self.pvalues, self.feature_names)


@dataclass(frozen=True, repr=False)
class OneSampleResult(_Repr):
    """A one-sample test of the mean per feature, with its confidence interval.

    Attributes
    ----------
    scores : ndarray of float64, shape (n_features,)
        The statistic q = (mean - mu) / (sigma / sqrt(N)) (z) or with the sample standard
        deviation in place of sigma (t).
    pvalues : ndarray of float64, shape (n_features,)
        Two-sided p-values.
    mean : ndarray of float64, shape (n_features,)
        The sample means.
    low, high : ndarray of float64, shape (n_features,)
        The confidence interval of the mean at level ``confidence`` = 1 - rho.
    confidence : float
    df : float or None
        Degrees of freedom of the t-test (N - 1); None for the z-test.
    feature_names : ndarray of str or None
    """

    scores: np.ndarray
    pvalues: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    confidence: float
    df: float | None = None
    feature_names: np.ndarray | None = None


@dataclass(frozen=True, repr=False)
class ScatterMatrices(_Repr):
    """Scatter matrices of labelled data (Theodoridis and Koutroumbas, ch. 5).

    Attributes
    ----------
    within : ndarray, shape (n_features, n_features)
        S_w = sum_i P_i S_i, with S_i the covariance of class i (divisor n_i).
    between : ndarray, shape (n_features, n_features)
        S_b = sum_i P_i (mu_i - mu_0)(mu_i - mu_0)^T.
    mixture : ndarray, shape (n_features, n_features)
        S_m = S_w + S_b, the covariance of all samples (divisor n).
    priors : ndarray, shape (n_classes,)
        P_i = n_i / n.
    means : ndarray, shape (n_classes, n_features)
        Class means mu_i, classes in sorted order (``classes``).
    classes : ndarray
        The class labels.
    feature_names : ndarray of str or None
    """

    within: np.ndarray
    between: np.ndarray
    mixture: np.ndarray
    priors: np.ndarray
    means: np.ndarray
    classes: np.ndarray
    feature_names: np.ndarray | None = None
    _repr_skip = ("within", "between", "mixture", "means")


@dataclass(frozen=True, repr=False)
class RGSResult(WeightResult):
    """WeightResult of RGS (Navot's thesis, ch. 4), plus the raw weights w of the winning restart
    (``weights``
    is w^2 / max(w^2)), the k and beta it used, and which restart won."""

    raw_weights: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_neighbors: int = 0
    beta: float = 0.0


@dataclass(frozen=True, repr=False)
class LinearResult(SubsetResult):
    """SubsetResult of a linear least-squares selection (Shalev-Shwartz and Ben-David, ch. 25):
    OMP, backward elimination,
    the LASSO.

    ``score`` is minus the residual sum of squares ||y - X_I coef - intercept||^2 of the
    returned subset (higher is better) and ``history`` its value after every round (OMP: after
    each addition; backward elimination: after each removal).

    Attributes
    ----------
    coef : ndarray of float64
        Coefficients of the selected columns, in the order of ``selected``.
    intercept : float
        0 unless the call had ``fit_intercept=True``.
    residual_norms : ndarray of float64
        ||y - prediction|| after every round (``sqrt(-history)``).
    eliminated : ndarray of int or None
        Backward elimination: the removed columns, first removed first.
    n_iter : int or None
        The LASSO: full coordinate-descent sweeps it took (None for the other methods).
    stopped_early : bool
        True when fewer rounds than asked were possible (no column had a residual part above
        ``tol``) or the callback stopped the selection.
    """

    coef: np.ndarray = field(default_factory=lambda: np.empty(0))
    intercept: float = 0.0
    residual_norms: np.ndarray = field(default_factory=lambda: np.empty(0))
    eliminated: np.ndarray | None = None
    stopped_early: bool = False
    n_iter: int | None = None


@dataclass(frozen=True, repr=False)
class LassoPath(_Repr):
    """A LASSO regularisation path (Shalev-Shwartz and Ben-David, ch. 25), laid out as
    scikit-learn's ``lasso_path``.

    Attributes
    ----------
    alphas : ndarray, shape (n_alphas,)
        The penalties, decreasing.
    coefs : ndarray, shape (n_features, n_alphas)
        Column k holds the solution for ``alphas[k]``.
    dual_gaps : ndarray, shape (n_alphas,)
        Duality gap at the end of each alpha, on scikit-learn's scale
        (n_samples x the objective).
    n_iter : ndarray of int, shape (n_alphas,)
        Passes over all features (duality-gap evaluations) per alpha; 0 when the previous
        alpha's solution was already within tol.
    feature_names : ndarray of str or None
    stopped_early : bool
        True when the callback stopped the path; the arrays then hold the alphas done.
    """

    alphas: np.ndarray
    coefs: np.ndarray
    dual_gaps: np.ndarray
    n_iter: np.ndarray
    feature_names: np.ndarray | None = None
    stopped_early: bool = False
    _repr_skip = ("coefs",)


@dataclass(frozen=True, repr=False)
class LinearModelFit(_Repr):
    """A fitted linear learner (``fastfs.learners``).

    Attributes
    ----------
    coef : ndarray of float64, shape (n_outputs, n_features)
        One row for two classes or a regression, one row per class for more classes.
    intercept : ndarray of float64, shape (n_outputs,)
    classes : ndarray or None
        The class labels (None for a regression).
    loss : float
        Sum of the log-losses at the fitted weights (-ln L; logistic), or the residual sum of
        squares (ridge).
    n_iter : int
        Newton iterations (0 for ridge).
    converged : bool
    feature_names : ndarray of str or None
        The names of coef's columns when X is a DataFrame (after ``features``).
    """

    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray | None = None
    loss: float = 0.0
    n_iter: int = 0
    converged: bool = True
    feature_names: np.ndarray | None = None


@dataclass(frozen=True, repr=False)
class WrapperResult(SearchResult):
    """SubsetResult of ORDERED-FS, STANDARD-WRAP and ORDERED-FS2.

    Attributes (beyond SearchResult's)
    ----------------------------------
    per_size : tuple of tuples of int
        Entry r: the hypothesis h_r of size r (sorted indices; entry 0 is the empty set).
    train_errors : ndarray of float64
        Entry r: the 0/1 error rate of h_r on the rows it was fitted on (S1).
    holdout_errors : ndarray of float64
        Entry r: the error rate of h_r (fitted on S1) on S2.
    test_errors : ndarray of float64 or None
        ORDERED-FS2 only: the error rate of h_r on S3, which chooses r.
    n_selected : int
        The chosen size r (0 when no feature beats the intercept-only model).
    parts : tuple of ndarrays of int
        The row indices of S1, S2 (and S3).
    """

    per_size: tuple = ()
    train_errors: np.ndarray = field(default_factory=lambda: np.empty(0))
    holdout_errors: np.ndarray = field(default_factory=lambda: np.empty(0))
    test_errors: np.ndarray | None = None
    n_selected: int = 0
    parts: tuple = ()
    _repr_skip = ("support", "subsets", "best_scores", "per_size", "parts")


@dataclass(frozen=True, repr=False)
class RFEResult(SubsetResult):
    """SubsetResult of recursive feature elimination (``fastfs.rfe``).

    Attributes (beyond SubsetResult's)
    ----------------------------------
    ranks : ndarray of int, shape (n_features,)
        1 for the kept features, higher for earlier removals (scikit-learn's ``ranking_``).
    coef : ndarray of float64
        The final fit's coefficients on the kept features (n_outputs, n_kept).
    n_features_per_round : ndarray of int
        How many features each fit saw.
    stopped_early : bool
        True when the callback stopped the elimination.
    """

    ranks: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    coef: np.ndarray = field(default_factory=lambda: np.empty(0))
    n_features_per_round: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    stopped_early: bool = False


@dataclass(frozen=True, repr=False)
class GreedyLogisticResult(SubsetResult):
    """SubsetResult of greedy selection for the logistic loss (``fastfs.greedy_logistic``).

    ``score`` is minus the sum of log-losses of the final fit and ``history`` its value after
    every round.

    Attributes (beyond SubsetResult's)
    ----------------------------------
    coef : ndarray of float64, shape (n_outputs, n_selected)
        The refit's coefficients, columns in the order of ``selected``.
    intercept : ndarray of float64, shape (n_outputs,)
    gradients : ndarray of float64
        The gradient size (over outputs: the Euclidean norm) of the feature chosen each round.
    stopped_early : bool
    """

    coef: np.ndarray = field(default_factory=lambda: np.empty(0))
    intercept: np.ndarray = field(default_factory=lambda: np.empty(0))
    gradients: np.ndarray = field(default_factory=lambda: np.empty(0))
    stopped_early: bool = False


@dataclass(frozen=True, repr=False)
class LogisticPath(_Repr):
    """The L1-regularised logistic regression path (``fastfs.learners.logistic_l1_path``).

    Attributes
    ----------
    Cs : ndarray of float64, shape (n_Cs,)
        Ascending.
    coefs : ndarray of float64, shape (n_features, n_Cs)
    intercepts : ndarray of float64, shape (n_Cs,)
    n_iter : ndarray of int
        Proximal Newton steps per C.
    classes : ndarray
    feature_names : ndarray of str or None
    """

    Cs: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    n_iter: np.ndarray
    classes: np.ndarray | None = None
    feature_names: np.ndarray | None = None
