"""Criteria for the subset searches: a criterion J maps a feature subset to a
number, higher is better. The built-in ones run in C++ with incremental state shared across a
search step (the m x m distance state for "margin" and "loo_knn_accuracy", precomputed class
statistics for the scatter criteria); a Python callable or a wrapped scikit-learn estimator
plugs into the same searches and is called once per subset.

Pass a criterion to a search as a string (its defaults) or as an instance to set parameters::

    fastfs.sfs(X, y, 5, criterion="j3")
    fastfs.sfs(X, y, 5, criterion=fastfs.criteria.LooKnnAccuracy(n_neighbors=3))
    fastfs.sfs(X, y, 5, criterion=lambda Xs, y: my_score(Xs, y))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable as CallableT

import numpy as np

import fastfs._core as _core
from ._scale import (
    SCREEN_EXPONENT,
    exact_rescale,
    exact_rescale_columns,
    scale_parameter,
    unscale,
)
from ._validation import (
    CheckedX,
    _check_y_shape,
    check_bool,
    check_int,
    check_option,
    check_real,
    check_X,
    check_y_classes,
    check_y_real,
    guard_memory,
    refuse_continuous_labels,
    require_loo_neighbours,
    resolve_n_jobs,
)

UTILITIES = ("linear", "zero_one", "sigmoid")


class Criterion:
    """Base of the criteria. ``kind`` names the C++ implementation, ``target`` what y must be
    ("classes", "real" or "any"), ``monotone`` whether J never rises when a feature is removed
    (what branch and bound needs)."""

    kind: str = ""
    target: str = "classes"
    monotone: bool = False


@dataclass(frozen=True)
class LooKnnAccuracy(Criterion):
    """Leave-one-out k-NN accuracy on the subset: the fraction of samples whose k nearest other
    samples (squared Euclidean distance; distance ties to the lower sample index) vote for
    their own class (vote ties to the class first in ``np.unique(y)`` order, as scikit-learn's
    KNeighborsClassifier breaks them)."""

    n_neighbors: int = 1
    kind = "loo_knn_accuracy"


@dataclass(frozen=True)
class Margin(Criterion):
    """The margin evaluation e(w) (Navot's thesis, ch. 3) with w the subset's 0/1 indicator
    (= ``fastfs.margin_score(X[:, subset], y, utility=..., beta=...)``)."""

    utility: str = "linear"
    beta: float = 1.0
    kind = "margin"


@dataclass(frozen=True)
class LooKnnMSE(Criterion):
    """Minus the mean squared error of the leave-one-out soft kNN regression estimate on the
    subset: -(1/m) sum (y - g_hat)^2 with g_hat the soft kNN estimate
    (``fastfs.knn_regression_score``
    with unit weights on the subset; the thesis' fwdSel criterion). k = min(n_neighbors,
    n_samples - 1), default ceil(log2 n_samples); ``beta=None`` recomputes the default
    on every subset (half the mean squared distance to the k nearest). Real y."""

    n_neighbors: int | None = None
    beta: float | None = None
    kind = "loo_knn_mse"
    target = "real"


@dataclass(frozen=True)
class LeastSquares(Criterion):
    """-min_b ||y - X_S b||^2, the negative residual sum of squares of the least-squares fit on
    the subset (X's columns and y centred first when ``fit_intercept``). Monotone. An RSS
    below 64 n_samples eps^2 ||y||^2 (eps = 2.2e-16) is the rounding of an exact fit and
    counts as 0, so subsets that fit y exactly tie (the smaller one wins a search) instead of
    being told apart by their rounding. A column whose part outside the span of the subset's
    other columns is below 1e-10 of its norm counts as inside that span (numerically
    dependent: it lowers the RSS by nothing), as with omp's default ``tol``; columns that
    share a large offset (1e11 against a spread of 1) look so, so centre them
    (``fit_intercept=True``)."""

    fit_intercept: bool = False
    kind = "least_squares"
    target = "real"
    monotone = True


@dataclass(frozen=True)
class J1(Criterion):
    """J1 = tr(S_m) / tr(S_w) on the subset; when tr(S_w) = 0 (every feature constant within
    every class) +inf if the class means differ (a perfect separation), else -inf."""

    kind = "j1"


@dataclass(frozen=True)
class J2(Criterion):
    """J2 = det(S_m) / det(S_w) on the subset, ridge * I added to S_w. Monotone.
    A subset whose S_w is singular scores -inf."""

    ridge: float = 0.0
    kind = "j2"
    monotone = True


@dataclass(frozen=True)
class J3(Criterion):
    """J3 = tr(S_w^-1 S_m) on the subset, ridge * I added to S_w. Monotone.
    A subset whose S_w is singular scores -inf."""

    ridge: float = 0.0
    kind = "j3"
    monotone = True


@dataclass(frozen=True)
class Divergence(Criterion):
    """Average divergence between Gaussian class models on the subset (as
    ``fastfs.separability.divergence``), ridge * I added to every class covariance. Monotone.
    A subset with a singular class covariance scores -inf."""

    ridge: float = 0.0
    kind = "divergence"
    monotone = True


@dataclass(frozen=True)
class Bhattacharyya(Criterion):
    """Average Bhattacharyya distance between Gaussian class models on the subset
    (as ``fastfs.separability.bhattacharyya``). Monotone (a marginal of two Gaussians is never
    farther apart than the pair). A singular class covariance scores -inf."""

    ridge: float = 0.0
    kind = "bhattacharyya"
    monotone = True


@dataclass(frozen=True)
class Callable(Criterion):
    """Any Python function ``fn(X_subset, y) -> float``, called once per evaluated subset
    with X_subset = X[:, sorted(subset)] (float64) and y's values as a NumPy array (not
    encoded). Not monotone unless you say so to branch_and_bound (``assume_monotone=True``)."""

    fn: CallableT[[np.ndarray, np.ndarray], float]
    kind = "callable"
    target = "any"


@dataclass(frozen=True)
class Wrapper(Criterion):
    """A scikit-learn estimator judged by cross-validation: J = mean of
    ``sklearn.model_selection.cross_val_score(clone(estimator), X_subset, y, cv=cv,
    scoring=scoring)``.

    ``cv`` takes what scikit-learn's ``cross_val_score`` takes (an int, a splitter, an
    iterable or a generator of (train, test) index pairs). It is turned into splits once per
    search (``sklearn.model_selection.check_cv``, as ``SequentialFeatureSelector`` does), so
    every subset is scored on the same folds, even with a splitter that shuffles without a
    seed. Splitters that need ``groups`` are not supported."""

    estimator: Any
    cv: Any = 5
    scoring: Any = None
    kind = "callable"
    target = "any"

    def __post_init__(self) -> None:
        if not (hasattr(self.estimator, "fit") and hasattr(self.estimator, "get_params")):
            raise TypeError("estimator: expected a scikit-learn estimator (with fit and "
                            f"get_params), got {type(self.estimator).__name__}")

    # scikit-learn's parameter protocol, so that a search over the estimator's parameters
    # reaches it (GridSearchCV with "sfs__criterion__estimator__n_neighbors", as with
    # mlxtend's selectors); clone() builds a new Wrapper from get_params(deep=False)
    _PARAMS = ("estimator", "cv", "scoring")

    def get_params(self, deep: bool = True) -> dict:
        out = {name: getattr(self, name) for name in self._PARAMS}
        if deep:
            out.update({f"estimator__{k}": v
                        for k, v in self.estimator.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> "Wrapper":
        nested: dict = {}
        for key, value in params.items():
            head, _, rest = key.partition("__")
            if head not in self._PARAMS:
                raise ValueError(f"Invalid parameter {head!r} for Wrapper; valid parameters "
                                 f"are {', '.join(repr(p) for p in self._PARAMS)}")
            if rest:
                nested.setdefault(head, {})[rest] = value
        direct = {k: v for k, v in params.items() if "__" not in k}
        estimator = direct.get("estimator", self.estimator)
        if not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
            raise TypeError("estimator: expected a scikit-learn estimator (with fit and "
                            f"get_params), got {type(estimator).__name__}")
        for head, value in direct.items():
            object.__setattr__(self, head, value)   # frozen for users, not for sklearn
        for head, sub in nested.items():
            getattr(self, head).set_params(**sub)
        return self


class _Learner(Criterion):
    """Shared by the learner criteria: ``task`` "classification" (L2 logistic regression with
    parameter C, ``fastfs.learners.logistic_regression``) or "regression" (ridge with alpha)."""

    @property
    def target(self) -> str:  # type: ignore[override]
        return "classes" if self.task == "classification" else "real"


@dataclass(frozen=True)
class TrainError(_Learner):
    """The error of the learner on the rows it was fitted on. Classification: the 0/1 error
    rate with ties broken by the mean log-loss l, J = -(errors + l / (1 + l)) / rows (so -J
    is the error rate to within 1 / rows). Regression: J = -mean squared error. ``rows``
    (optional row indices) restricts fitting and scoring to those rows."""

    task: str = "classification"
    C: float = 1.0
    alpha: float = 1.0
    rows: Any = None
    kind = "train_error"


@dataclass(frozen=True)
class HoldoutError(_Learner):
    """The error (as TrainError's) on held-out rows of the learner fitted on the others: a
    random ``holdout`` fraction of the rows (``random_state``; stratified by class for
    classification, as ``fastfs.criteria.split_rows``) is scored, the rest fitted;
    ``split=(fit_rows, score_rows)`` gives the two parts instead. Every class must appear in
    the fitted part and at least two in the scored part."""

    task: str = "classification"
    C: float = 1.0
    alpha: float = 1.0
    holdout: float = 0.3
    random_state: Any = 0
    split: Any = None
    kind = "holdout_error"


@dataclass(frozen=True)
class AIC(_Learner):
    """J = -AIC = 2 ln L - 2K with L the likelihood at the fitted weights and K = (|S| + 1)
    parameters per output (one output for two classes or a regression, one per class
    otherwise). Classification: L2 logistic regression with C (a large C approaches the
    maximum likelihood; C must stay finite on separable data). Regression: least squares,
    ln L = -N/2 (ln(2 pi RSS / N) + 1). Not monotone: branch_and_bound refuses it."""

    task: str = "classification"
    C: float = 1.0
    kind = "aic"


@dataclass(frozen=True)
class BIC(_Learner):
    """J = -BIC = 2 ln L - K ln N (as AIC, N the number of samples). Not monotone."""

    task: str = "classification"
    C: float = 1.0
    kind = "bic"


def _learner_params(crit: _Learner, m: int, labels: Any) -> dict:
    """fit_rows, score_rows, n_classes, C, alpha of a learner criterion, validated."""
    from .learners import check_C

    check_option(crit.task, "task", ("classification", "regression"))
    C = check_C(getattr(crit, "C", 1.0))
    alpha = check_real(getattr(crit, "alpha", 1.0), "alpha")
    if alpha < 0:
        raise ValueError(f"alpha: must be >= 0, got {alpha}")
    every = np.arange(m, dtype=np.int64)
    fit = score = every
    if isinstance(crit, TrainError) and crit.rows is not None:
        fit = score = _rows(crit.rows, m, "rows")
    elif isinstance(crit, HoldoutError):
        if crit.split is not None:
            try:
                fit, score = crit.split
            except (TypeError, ValueError):
                raise TypeError("split: expected a pair (fit_rows, score_rows)") from None
            fit, score = _rows(fit, m, "split"), _rows(score, m, "split")
        elif labels is not None:  # stratified by class, as the wrappers split
            gamma = check_real(crit.holdout, "holdout")
            if not 0.0 < gamma < 1.0:
                raise ValueError(f"holdout: must be in (0, 1), got {gamma}")
            fit, score = split_rows(labels.codes, (1.0 - gamma, gamma), crit.random_state)
        else:
            fit, score = holdout_split(m, crit.holdout, crit.random_state)
    if labels is not None:
        k = labels.classes.shape[0]
        missing = np.setdiff1d(np.arange(k), labels.codes[fit])
        if missing.size:
            raise ValueError(f"y: the rows the learner is fitted on lack class "
                             f"{labels.classes[missing[0]]!r}; every class must appear there")
        if isinstance(crit, HoldoutError) and np.unique(labels.codes[score]).size < 2:
            raise ValueError("y: the hold-out part holds a single class "
                             f"({labels.classes[labels.codes[score][0]]!r}); its error cannot "
                             "compare subsets (use more rows or another random_state)")
    return {"fit_rows": fit.tolist(), "score_rows": score.tolist(), "C": C, "alpha": alpha,
            "n_classes": 0 if labels is None else int(labels.classes.shape[0])}


def _rows(rows: Any, m: int, name: str) -> np.ndarray:
    r = np.asarray(rows)
    if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError(f"{name}: expected a non-empty 1-D array of row indices")
    if r.min() < 0 or r.max() >= m:
        raise IndexError(f"{name}: row index out of range for {m} samples")
    return r.astype(np.int64)


def split_rows(codes: np.ndarray, fractions: tuple[float, ...],
               random_state: Any) -> list[np.ndarray]:
    """Row indices of the parts (sorted): a random split stratified by class. The parts after
    the first get round(fraction * m) rows in all, shared out among the classes in proportion
    (largest remainders first, ties to the lower class), each class keeping at least one row
    in the first part; a later part of two rows or more holds two classes or more when the
    classes can spare them."""
    from ._validation import check_random_state

    m = codes.size
    rng = np.random.default_rng(check_random_state(random_state))
    k = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=k)
    members = [rng.permutation(np.flatnonzero(codes == c)) for c in range(k)]
    left = counts - 1  # rows of each class still free to leave the first part
    taken = np.zeros(k, dtype=np.int64)
    parts_rows: list[list[np.ndarray]] = []
    for f in fractions[1:]:
        total = int(round(f * m))
        exact = f * counts
        quota = np.minimum(np.floor(exact).astype(np.int64), left)
        rest = total - int(quota.sum())
        order = sorted(range(k), key=lambda c: (-(exact[c] - np.floor(exact[c])), c))
        while rest > 0 and np.any(quota < left):
            for c in order:
                if rest > 0 and quota[c] < left[c]:
                    quota[c] += 1
                    rest -= 1
        spare = np.flatnonzero((quota == 0) & (left > 0))
        if total >= 2 and np.count_nonzero(quota) == 1 and spare.size:
            # A hold-out part of one class cannot compare hypotheses: one row of the class
            # with the largest share among those that can spare one (ties: the lower class)
            # replaces one of the single class's.
            c2 = min(spare, key=lambda c: (-exact[c], c))
            quota[int(np.argmax(quota))] -= 1
            quota[c2] += 1
        if int(quota.sum()) < 1:
            if total >= 1:  # rows enough, but every class's are held back for the first part
                raise ValueError(
                    f"y: the split of {m} samples by {fractions} leaves a part empty: every "
                    f"class keeps one sample in the first part, and {k} classes leave too "
                    "few samples for the other parts (most classes need several samples)")
            raise ValueError(f"X: the split of {m} samples by {fractions} leaves a part empty")
        parts_rows.append([members[c][taken[c]:taken[c] + quota[c]] for c in range(k)])
        taken += quota
        left -= quota
    first = [members[c][taken[c]:] for c in range(k)]
    parts = [np.sort(np.concatenate(first))]
    parts += [np.sort(np.concatenate(p)) for p in parts_rows]
    return [p.astype(np.int64) for p in parts]


def holdout_split(m: int, holdout: Any, random_state: Any) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, held-out rows): a random round(holdout * m) rows held out, both sorted."""
    from ._validation import check_random_state

    gamma = check_real(holdout, "holdout")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"holdout: must be in (0, 1), got {gamma}")
    n2 = int(round(gamma * m))
    if not 1 <= n2 <= m - 1:
        raise ValueError(f"holdout: {gamma} of {m} samples leaves a part empty")
    perm = np.random.default_rng(check_random_state(random_state)).permutation(m)
    return np.sort(perm[n2:]).astype(np.int64), np.sort(perm[:n2]).astype(np.int64)


BUILT_IN: dict[str, type] = {
    "loo_knn_accuracy": LooKnnAccuracy,
    "loo_knn_mse": LooKnnMSE,
    "margin": Margin,
    "least_squares": LeastSquares,
    "j1": J1,
    "j2": J2,
    "j3": J3,
    "divergence": Divergence,
    "bhattacharyya": Bhattacharyya,
    "train_error": TrainError,
    "holdout_error": HoldoutError,
    "aic": AIC,
    "bic": BIC,
}


def resolve(criterion: Any) -> Criterion:
    """A criterion instance from a name, an instance or a plain callable."""
    if isinstance(criterion, str):
        check_option(criterion, "criterion", tuple(BUILT_IN))
        return BUILT_IN[criterion]()
    if isinstance(criterion, Criterion):
        return criterion
    if callable(criterion):
        return Callable(criterion)
    raise TypeError(
        "criterion: expected a name (" + ", ".join(repr(k) for k in BUILT_IN) + "), a "
        f"fastfs.criteria instance or a callable J(X_subset, y), got {type(criterion).__name__}"
    )


@dataclass
class Prepared:
    """What the C++ side takes: X, labels or targets, the criterion as one typed object
    (``spec``, a ``_core.CriterionSpec`` built from ``params``) and the Python function."""

    cx: CheckedX
    criterion: Criterion
    codes: np.ndarray | None
    y: np.ndarray | None
    params: dict
    fn: Any
    n_threads: int
    values: np.ndarray | None = None  # X as the core gets it (rescaled for built-in criteria)
    # J in the user's units is J on the working data times 2**(score_power * scale_exponent):
    # the exponent of X (values = X * 2**-scale_exponent) for the criteria in units of X, of y
    # (y * 2**-scale_exponent, score_source "y") for the sums of squared errors of a target
    scale_exponent: int = 0
    score_power: int = 0
    spec: Any = None  # _core.CriterionSpec of criterion.kind and params
    score_source: str = "X"

    def unscale_J(self, values: Any, *, strict: bool = True) -> Any:
        """Criterion values computed by the core, in the units of the user's data."""
        return unscale(values, self.score_power, self.scale_exponent, "J", strict=strict,
                       source=self.score_source)

    def scale_J(self, value: float, name: str = "tol") -> float:
        """A parameter in units of J (a tolerance, a temperature), for the working data."""
        return scale_parameter(value, self.score_power, self.scale_exponent, name,
                               source=self.score_source)


def criterion_spec(kind: str, params: dict) -> Any:
    """The ``_core.CriterionSpec`` of a criterion kind and its validated parameters."""
    return _core.CriterionSpec(kind, **params)


def _python_function(crit: Criterion, X: np.ndarray, y: np.ndarray):
    """fn(indices) -> float for a Callable or Wrapper criterion."""
    if isinstance(crit, Wrapper):
        from sklearn.base import clone, is_classifier
        from sklearn.model_selection import check_cv, cross_val_score

        # Split once, as scikit-learn's SequentialFeatureSelector checks cv once: a generator
        # of splits would be used up by the first subset, and a splitter that shuffles without
        # a seed would score every subset on other folds.
        try:
            splits = list(check_cv(crit.cv, y, classifier=is_classifier(crit.estimator))
                          .split(X, y))
        except ValueError as exc:  # too few samples for the folds, a bad cv value
            raise ValueError(f"cv: {exc}") from None

        def score(Xs: np.ndarray, yy: np.ndarray) -> float:
            return float(np.mean(cross_val_score(clone(crit.estimator), Xs, yy, cv=splits,
                                                 scoring=crit.scoring)))
    else:
        if not callable(crit.fn):
            raise TypeError("criterion: Callable needs a callable fn(X_subset, y)")
        score = crit.fn

    def fn(indices: np.ndarray) -> float:
        value = score(np.ascontiguousarray(X[:, indices]), y)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"criterion: the callable must return a number, got {type(value).__name__}"
            ) from None

    return fn


def _check_params(crit: Criterion, n_samples: int) -> dict:
    """The parameters the C++ criterion takes, validated."""
    if isinstance(crit, LooKnnAccuracy):
        k = check_int(crit.n_neighbors, "n_neighbors")
        if k >= n_samples:
            raise ValueError(f"n_neighbors: must be below n_samples = {n_samples}, got {k}")
        return {"n_neighbors": k}
    if isinstance(crit, LooKnnMSE):
        from .regression import default_n_neighbors

        k = (default_n_neighbors(n_samples) if crit.n_neighbors is None
             else check_int(crit.n_neighbors, "n_neighbors"))
        return {"n_neighbors": min(k, n_samples - 1),
                "beta": 0.0 if crit.beta is None else check_real(crit.beta, "beta",
                                                                 positive=True)}
    if isinstance(crit, Margin):
        check_option(crit.utility, "utility", UTILITIES)
        return {"utility": crit.utility, "beta": check_real(crit.beta, "beta", positive=True)}
    if isinstance(crit, (J2, J3, Divergence, Bhattacharyya)):
        ridge = check_real(crit.ridge, "ridge")
        if ridge < 0:
            raise ValueError(f"ridge: must be >= 0, got {ridge}")
        return {"ridge": ridge}
    if isinstance(crit, LeastSquares):
        return {"fit_intercept": check_bool(crit.fit_intercept, "fit_intercept")}
    if isinstance(crit, _Learner):
        check_option(crit.task, "task", ("classification", "regression"))
    return {}

def prepare(X: Any, y: Any, criterion: Any, n_jobs: Any, what: str, *,
            guard: bool = True) -> Prepared:
    """Validates X, y and the criterion together and applies the memory guard (not with
    ``guard=False``: fastfs.dask splits the state across workers)."""
    check_memory = guard_memory if guard else (lambda *args: None)
    crit = resolve(criterion)
    threads = resolve_n_jobs(n_jobs)
    cx = check_X(X, float64=True)
    X64 = cx.values
    m, n = X64.shape
    params = _check_params(crit, m)
    codes = yv = fn = None
    if crit.target == "classes":
        refuse_continuous_labels(y, f"criterion '{crit.kind}'", hint="; use 'least_squares' "
                                 "(or a callable) for a real target")
        labels = check_y_classes(y, m)
        codes = labels.codes
        if isinstance(crit, _Learner):
            from .learners import check_learner_scale

            check_learner_scale(X64)
            params = _learner_params(crit, m, labels)
        elif crit.kind in ("margin", "loo_knn_accuracy"):
            require_loo_neighbours(labels)
            # The float64 search state, one scratch state for from-scratch evaluations and,
            # for 1-NN accuracy, the float32 screening copy: the bytes the C++ state reports.
            check_memory(_core.memory_need(crit.kind, m, n, labels.classes.shape[0],
                                           params.get("n_neighbors", 1), threads),
                         f"{what} with criterion '{crit.kind}'",
                         f"two or three {m} x {m} distance states",
                         "subsample the rows, or raise fastfs.config.max_memory")
        elif crit.kind != "j1":  # J1 keeps diagonals only (O(n) memory)
            k = labels.classes.shape[0]
            check_memory(_core.memory_need("scatter", m, n, k, 0, threads),
                         f"{what} with criterion '{crit.kind}'", f"{k + 3} {n} x {n} matrices",
                         "filter the features first (fastfs.filters), or raise the limit")
    elif crit.target == "real":
        yv = np.ascontiguousarray(check_y_real(y, m), dtype=np.float64)
        if isinstance(crit, _Learner):
            from .learners import MAX_ABS_X, check_learner_scale

            check_learner_scale(X64)
            if float(np.max(np.abs(yv))) > MAX_ABS_X:
                raise ValueError(f"y: values above {MAX_ABS_X:g} in magnitude overflow the "
                                 "ridge learner")
            params = _learner_params(crit, m, None)
        if crit.kind == "loo_knn_mse":
            check_memory(_core.memory_need("loo_knn_mse", m, n, 1, params["n_neighbors"],
                                           threads),
                         f"{what} with criterion 'loo_knn_mse'", f"two {m} x {m} distance states",
                         "subsample the rows, or raise fastfs.config.max_memory")
    else:
        yy = _check_y_shape(y, m, "y", "targets")
        fn = _python_function(crit, X64, yy)
    values, e, power, source = X64, 0, 0, "X"
    if fn is None and not isinstance(crit, _Learner):
        # (The learners' penalty is not scale-free: they see X as given.)
        # Built-in criteria see X multiplied by a power of two (exact) that keeps squared
        # distances and scatter sums in range; parameters with units of X follow it. The
        # criteria that do not change when one column is scaled (least squares; J2, J3, the
        # divergence and Bhattacharyya without a ridge, which is in units of every column)
        # take a power of two per column instead: one column 1e155 times the others left
        # theirs to underflow (least_squares -44 for -0.295, J3 -inf at 1e200).
        if _column_scale_free(crit, params):
            values, _ = exact_rescale_columns(X64, SCREEN_EXPONENT)
        else:
            values, e = exact_rescale(X64, SCREEN_EXPONENT)
            params = _rescaled_params(crit, params, e)
        power = 1 if isinstance(crit, Margin) and params["utility"] == "linear" else 0
        if crit.target == "real":
            # J = minus a sum of squared errors of y: in units of y squared, whatever X's. A y
            # of extreme magnitude is multiplied by a power of two (exact, the same choices):
            # at 1e-200 every J vanished to -0 and the search chose by index, at 1e200 every
            # J overflowed and the search stopped with a wrong reason.
            yv, e = exact_rescale(yv)
            power, source = (2, "y") if e else (0, "X")
    return Prepared(cx, crit, codes, yv, params, fn, threads, values, e, power,
                    criterion_spec(crit.kind, params), source)


def _column_scale_free(crit: Criterion, params: dict) -> bool:
    """Whether J of every subset is unchanged when a column of X is multiplied by a constant."""
    if isinstance(crit, LeastSquares):
        return True
    return isinstance(crit, (J2, J3, Divergence, Bhattacharyya)) and params.get("ridge") == 0


def _rescaled_params(crit: Criterion, params: dict, e: int) -> dict:
    """The criterion's parameters for X * 2**-e (beta of the sigmoid margin is per unit of X,
    beta of the soft kNN and the ridges are in units of X squared)."""
    if e == 0:
        return params
    out = dict(params)
    if isinstance(crit, Margin) and out["utility"] == "sigmoid":
        out["beta"] = scale_parameter(out["beta"], -1, e, "beta")
    elif isinstance(crit, LooKnnMSE) and out["beta"] > 0:
        out["beta"] = scale_parameter(out["beta"], 2, e, "beta")
    elif "ridge" in out:
        out["ridge"] = scale_parameter(out["ridge"], 2, e, "ridge")
    return out


def evaluate(X: Any, y: Any, features: Any, criterion: Any = "j3", *,
             n_jobs: int | None = None) -> float:
    """J of one feature subset, computed from scratch.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels or real targets, as the criterion needs.
    features : int indices or a bool mask of length n_features
        The subset (non-empty).
    criterion : str, fastfs.criteria instance or callable
    n_jobs : int, optional

    Returns
    -------
    float
        J(subset); -inf where the criterion is undefined (a singular scatter matrix).
    """
    values = check_X(X, float64=True).values
    n = values.shape[1]
    idx = np.asarray(features)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"features: a mask must have length n_features = {n}")
        idx = np.flatnonzero(idx)
    elif idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        raise TypeError("features: expected integer indices or a bool mask")
    if idx.size == 0:
        raise ValueError("features: the subset is empty; J is defined on non-empty subsets")
    if idx.min() < 0 or idx.max() >= n:
        raise IndexError(f"features: index out of range for {n} features")
    if np.unique(idx).size != idx.size:
        raise ValueError("features: repeated index")
    # The criterion's state is built on the subset's columns only: J(S) reads nothing else,
    # and a state over all of X (the scatter criteria's n x n matrices, 2 GB for three
    # features of 8000) is a search's, not one evaluation's.
    p = prepare(values[:, idx], y, criterion, n_jobs, "fastfs.criteria.evaluate")
    value = float(_core.criterion_evaluate(p.values, p.codes, p.y, p.spec, p.fn,
                                           list(range(idx.size)), p.n_threads))
    return float(p.unscale_J(value))


__all__ = [
    "AIC",
    "BIC",
    "Bhattacharyya",
    "Callable",
    "Criterion",
    "Divergence",
    "HoldoutError",
    "J1",
    "J2",
    "J3",
    "LeastSquares",
    "LooKnnAccuracy",
    "LooKnnMSE",
    "Margin",
    "TrainError",
    "Wrapper",
    "evaluate",
    "holdout_split",
    "split_rows",
]
