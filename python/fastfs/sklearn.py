"""Every fastfs method as a scikit-learn selector, and k-NN predictors under learned weights.

Each selector is a ``SelectorMixin`` / ``BaseEstimator`` over one fastfs function: its
constructor parameters are the function's keyword arguments (stored as given; they are checked
in ``fit``, by the function), and ``fit(X, y)`` calls the function and keeps what it returned
as ``result_``. So a selector drops into ``Pipeline``, ``GridSearchCV``, ``cross_val_score``
and ``clone``, and ``transform``, ``get_support``, ``get_feature_names_out`` and
``set_output(transform="pandas")`` come from scikit-learn's mixins::

    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from fastfs.sklearn import Simba

    pipe = make_pipeline(Simba(random_state=0), KNeighborsClassifier(1))
    GridSearchCV(pipe, {"simba__n_features_to_select": [2, 5, 10]}).fit(X, y)

Fitted attributes, named as scikit-learn names them:

* ``result_``: the function's result (``WeightResult``, ``SubsetResult`` or
  ``FilterResult``), with ``feature_names`` set when X had string column names;
* ``support_``: boolean mask of the kept features; ``n_features_in_``,
  ``feature_names_in_`` (DataFrames with string column names only);
* ``ranking_``: ``ranking_[j]`` is the rank of feature j, 1 = best (scikit-learn's RFE
  convention; the results' own ``ranking`` lists feature indices best first). Subset
  selectors rank the kept features by the order they entered the subset (1 = first) and give
  every other feature ``len(selected) + 1``;
* weight and score selectors: ``scores_`` (the weights or scores) and, for the weight methods,
  ``feature_importances_`` (the same weights); filters: ``pvalues_``.

Weight methods (``Simba``, ``Relief``, ``ReliefF``, the SURF and MultiSURF family, the
Relief wrappers ``TuRF``, ``VLS`` and ``IterativeRelief``, ``RGS``, ``SKS``, ``RankFeatures``) keep
features by ``n_features_to_select`` (an int, or a float fraction of n_features, at least one)
and/or ``threshold`` (a number, ``"mean"``, ``"median"`` or ``"1.5*mean"`` as in
``SelectFromModel``: features with a weight >= threshold). Weights are compared signed: a
negative Relief or SKS weight means a feature worse than useless and ranks below every positive
one (``SelectFromModel`` wrapped around these selectors would compare absolute values and keep
strongly negative features; use their own ``threshold`` instead). With both, the features above the
threshold, at most ``n_features_to_select`` of them (the best by ranking); with neither, the
best half (scikit-learn's ``RFE`` default). Subset methods keep the subset their function
returns; their size parameter is ``n_features_to_select`` as in the function (``OMP`` and
``BackwardLeastSquares`` call it so too, for the functions' ``n_features``).

There is one class per search strategy rather than one class with ``strategy=``: the
strategies take different parameters (``l`` and ``r``, ``width``, ``patience``, the annealing
schedule...), and one class each keeps every constructor equal to its function's signature, so
no parameter is silently ignored. To search over strategies, put the selectors themselves in
the grid: ``GridSearchCV(pipe, {"select": [SFS(), SFFS(), BeamSearch()]})``.

``WeightedKNeighborsClassifier`` and ``SoftKNeighborsRegressor`` predict with the weights a
selector learned (Navot's thesis, section 3.5.2 and figure 4.5).

Needs scikit-learn (``pip install scikit-learn``); ``import fastfs`` does not import it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
    from sklearn.feature_selection import SelectorMixin
    from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("fastfs.sklearn needs scikit-learn >= 1.6: pip install scikit-learn"
                      ) from exc

from . import filters as _filters
from .linear import backward_least_squares, lasso, omp
from .margin import gflip
from .regression import rgs, sks
from .relief import multisurf, multisurfstar, relief, relieff, simba, surf, surfstar
from .relief_wrappers import iterative_relief, turf, vls
from .wrappers import greedy_logistic, ordered_fs, ordered_fs2, rfe, standard_wrap
from .search import (
    beam,
    best_first,
    bidirectional,
    branch_and_bound,
    exhaustive,
    plus_l_minus_r,
    rank_features,
    sbs,
    sfbs,
    sffs,
    sfs,
    simulated_annealing,
)
from ._validation import check_X, resolve_n_jobs

__all__ = [
    "BackwardLeastSquares", "BeamSearch", "BestFirst", "Bidirectional", "BranchAndBound",
    "Exhaustive", "FilterSelector", "GFlip", "GreedyLogistic", "IterativeRelief",
    "LassoSelector", "MultiSURF",
    "MultiSURFstar", "OMP", "OrderedFS", "OrderedFS2", "PlusLMinusR",
    "RecursiveFeatureElimination", "StandardWrap", "RGS", "RankFeatures", "Relief", "ReliefF", "SBS", "SFBS", "SFFS",
    "SFS", "SKS", "SURF", "SURFstar", "Simba", "SimulatedAnnealing", "SoftKNeighborsRegressor",
    "TuRF", "VLS", "WeightedKNeighborsClassifier",
]

_DTYPES = [np.float64, np.float32]


def _n_to_keep(value: Any, n: int, name: str = "n_features_to_select") -> int:
    """An int k in [1, n] or a float fraction in (0, 1] (k = max(1, int(f * n)))."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an int or a float in (0, 1], got {value!r}")
    if isinstance(value, numbers.Integral):
        if not 1 <= value <= n:
            raise ValueError(f"{name}: must be in [1, n_features={n}], got {value}")
        return int(value)
    if isinstance(value, numbers.Real):
        if not 0 < value <= 1:
            raise ValueError(f"{name}: a float must be in (0, 1], got {value}")
        return max(1, int(value * n))
    raise TypeError(f"{name}: expected an int or a float in (0, 1], got "
                    f"{type(value).__name__}")


def _threshold_value(threshold: Any, scores: np.ndarray) -> float:
    """SelectFromModel's threshold rule: a number, "mean", "median" or "<scale>*mean"."""
    if isinstance(threshold, str):
        scale, _, ref = threshold.rpartition("*")
        ref = ref.strip()
        if ref not in ("mean", "median"):
            raise ValueError(f"threshold: expected a number, 'mean', 'median' or "
                             f"'<scale>*mean' / '<scale>*median', got {threshold!r}")
        try:
            factor = float(scale.strip() or "missing") if "*" in threshold else 1.0
        except ValueError:
            raise ValueError(f"threshold: the scale in {threshold!r} is not a number") from None
        if not np.isfinite(factor):
            raise ValueError(f"threshold: the scale in {threshold!r} must be finite")
        finite = scores[np.isfinite(scores)]
        if finite.size == 0:
            raise ValueError("threshold: no finite score to take the mean or median of")
        return factor * float(np.mean(finite) if ref == "mean" else np.median(finite))
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold: expected a number or a string, got "
                        f"{type(threshold).__name__}")
    if np.isnan(threshold):
        raise ValueError("threshold: must be a number, got NaN")
    return float(threshold)


def _validate_fit(est: Any, X: Any, y: Any, *, regression: bool,
                  accept_sparse: Any = False) -> tuple[Any, Any]:
    """validate_data for fit, with NaN and infinity left to the fastfs function (which refuses
    them: one pass over X, not two). A float NumPy X of at least 2 x 1 with a matching 1-D
    NumPy y (numeric for regression) is what scikit-learn's validation would return
    unchanged: it is taken as is, and only n_features_in_ is recorded, which saves the
    validation's fixed ~0.2 ms (several percent of a fast method on 1000 x 500)."""
    if (type(X) is np.ndarray and X.ndim == 2 and X.dtype in _DTYPES and X.shape[0] >= 2
            and X.shape[1] >= 1 and type(y) is np.ndarray and y.shape == (X.shape[0],)
            and (y.dtype.kind in "iuf" if regression else y.dtype.kind in "biufUS")):
        est.n_features_in_ = X.shape[1]
        if hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        return X, y
    try:
        return validate_data(est, X, y, dtype=_DTYPES, y_numeric=regression,
                             accept_sparse=accept_sparse, ensure_min_samples=2,
                             ensure_all_finite=False)
    except (TypeError, ValueError) as err:
        # scikit-learn's conversion error for a DataFrame column of strings ("could not
        # convert string to float: 'AA'") names neither X nor the column; the fastfs
        # functions' check does. (Other inputs keep scikit-learn's messages, which its
        # estimator checks expect.)
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            try:
                check_X(X, check_finite=False)
            except TypeError as named:
                if str(named).startswith("X: column"):
                    raise named from None
        raise err


def _with_fitted_names(est: Any, result: Any) -> Any:
    """The result with the estimator's feature_names_in_ as its feature_names, if it has any."""
    names = getattr(est, "feature_names_in_", None)
    if names is not None and dataclasses.is_dataclass(result):
        result = dataclasses.replace(result, feature_names=np.asarray(names, dtype=object))
    return result


@contextlib.contextmanager
def _unchanged_on_error(est: Any):
    """A fit that raises leaves the estimator as it was (a refit that fails keeps the earlier
    fit whole: no n_features_in_ of the new X beside the old support_)."""
    state = dict(est.__dict__)
    try:
        yield
    except BaseException:
        est.__dict__.clear()
        est.__dict__.update(state)
        raise


def _ranks(order: np.ndarray, n: int) -> np.ndarray:
    """scikit-learn's ranking_ (rank of each feature, 1 = best) from indices best first."""
    ranks = np.empty(n, dtype=np.intp)
    ranks[np.asarray(order, dtype=np.intp)] = np.arange(1, n + 1)
    return ranks


class _Selector(SelectorMixin, BaseEstimator):
    """fit validates X and y, calls the function with the constructor's parameters and keeps
    its result; subclasses say which function, how y is read and how the result selects."""

    _function: Any = None          # the fastfs function (set by each subclass)
    _regression: bool = False      # y must be numeric (real targets)
    _own_params: tuple[str, ...] = ()  # parameters of the estimator, not of the function
    _sparse = False                # the function takes SciPy sparse X (scored as such)

    def _function_kwargs(self) -> dict:
        params = self.get_params(deep=False)
        for name in self._own_params:
            params.pop(name)
        return params

    def _call(self, X: np.ndarray, y: np.ndarray) -> Any:
        return type(self)._function(X, y, **self._function_kwargs())

    def fit(self, X, y=None):
        """Run the method on (X, y) and keep its result.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels, or real targets for the regression methods.

        Returns
        -------
        self
        """
        with _unchanged_on_error(self):
            X, y = _validate_fit(self, X, y, regression=self._regression,
                                 accept_sparse=["csr", "csc"] if self._sparse else False)
            self._run_and_select(X, y, X.shape[1])
        return self

    def _run_and_select(self, X: Any, y: Any, n: int) -> None:
        """Check the selection parameters, run the method on the validated (X, y) of n
        features, keep its result (with the fitted feature names) and select."""
        self._check_selection(n)  # before the method runs, not after
        self.result_ = _with_fitted_names(self, self._call(X, y))
        self._select(self.result_, n)

    def _check_selection(self, n: int) -> None:
        """Refuse the selection parameters (of n features) before the method runs."""

    def _select(self, result: Any, n: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = self._sparse
        return tags


class _WeightSelector(_Selector):
    """A method that weights every feature: keeps the best by count and/or threshold."""

    _own_params = ("n_features_to_select", "threshold")

    def _select(self, result: Any, n: int) -> None:
        weights = np.asarray(result.weights, dtype=np.float64)
        order = np.asarray(result.ranking, dtype=np.intp)
        self.scores_ = weights
        self.feature_importances_ = weights
        self.ranking_ = _ranks(order, n)
        self.support_ = self._keep(weights, order, n)

    def _check_selection(self, n: int) -> None:
        if self.n_features_to_select is not None:
            _n_to_keep(self.n_features_to_select, n)
        if self.threshold is not None:
            _threshold_value(self.threshold, np.ones(1))

    def _keep(self, scores: np.ndarray, order: np.ndarray, n: int) -> np.ndarray:
        k, threshold = self.n_features_to_select, self.threshold
        if k is None:
            k = n if threshold is not None else max(1, n // 2)
        else:
            k = _n_to_keep(k, n)
        support = np.zeros(n, dtype=bool)
        support[order[:k]] = True
        if threshold is not None:
            support &= scores >= _threshold_value(threshold, scores)
        return support


class _SubsetSelector(_Selector):
    """A method that returns one subset: keeps it; ranks it by the order of entry."""

    def _select(self, result: Any, n: int) -> None:
        selected = np.asarray(result.selected, dtype=np.intp)
        ranks = np.full(n, selected.size + 1, dtype=np.intp)
        ranks[selected] = np.arange(1, selected.size + 1)
        self.ranking_ = ranks
        self.support_ = np.asarray(result.support, dtype=bool).copy()


# ------------------------------------------------------------------------------------------
# margin-based methods and the Relief family (Navot's thesis, ch. 3)


class GFlip(_SubsetSelector):
    """G-flip as a selector: the subset that locally maximises the margin score e(F).

    Parameters are ``fastfs.gflip``'s; ``result_`` is its ``GFlipResult``. G-flip chooses the
    number of features itself (it has no size parameter).
    """

    _function = staticmethod(gflip)

    def __init__(self, *, utility="linear", beta=1.0, max_epochs=100, n_restarts=2,
                 initial=None, random_state=None, n_jobs=None, callback=None, verbose=False):
        self.utility = utility
        self.beta = beta
        self.max_epochs = max_epochs
        self.n_restarts = n_restarts
        self.initial = initial
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    @property
    def _metric_scale(self) -> np.ndarray:
        return self.support_.astype(np.float64)


class Simba(_WeightSelector):
    """Simba as a selector: margin-maximising feature weights, the best of them kept.

    Parameters are ``fastfs.simba``'s plus ``n_features_to_select`` and ``threshold`` (see the
    module docstring); ``result_`` is its ``WeightResult``, ``scores_`` and
    ``feature_importances_`` its weights w^2 / max(w^2).
    """

    _function = staticmethod(simba)

    def __init__(self, n_features_to_select=None, *, threshold=None, n_iter=None,
                 n_restarts=5, utility="linear", beta=1.0, sample_order=None,
                 random_state=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_iter = n_iter
        self.n_restarts = n_restarts
        self.utility = utility
        self.beta = beta
        self.sample_order = sample_order
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    @property
    def _metric_scale(self) -> np.ndarray:
        # The metric Simba learned is ||z||_w with the raw w; its weights are w^2 / max(w^2),
        # so |w| / max|w| = sqrt(weights).
        return np.sqrt(np.maximum(self.scores_, 0.0))


class Relief(_WeightSelector):
    """Relief (Kira and Rendell) as a selector; parameters are ``fastfs.relief``'s plus
    ``n_features_to_select`` and ``threshold``."""

    _function = staticmethod(relief)
    _sparse = True

    def __init__(self, n_features_to_select=None, *, threshold=None, n_iter=None,
                 random_state=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_iter = n_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class ReliefF(_WeightSelector):
    """ReliefF (Kononenko; skrebate's scores) as a selector; parameters are
    ``fastfs.relieff``'s plus ``n_features_to_select`` and ``threshold``."""

    _function = staticmethod(relieff)
    _sparse = True  # word counts and other sparse X, scored block by block, never densified

    def __init__(self, n_features_to_select=None, *, threshold=None, n_neighbors=10,
                 n_jobs=None, callback=None, verbose=False, distance_weights=None,
                 discrete_threshold=10,
                 discrete_features=None, target="auto"):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose
        self.distance_weights = distance_weights
        self.discrete_threshold = discrete_threshold
        self.discrete_features = discrete_features
        self.target = target

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values, as skrebate reads them
        return tags


class _RadiusRelief(_WeightSelector):
    """A radius member of the Relief family (skrebate's scores); parameters are the
    function's plus ``n_features_to_select`` and ``threshold``."""

    _sparse = True

    def __init__(self, n_features_to_select=None, *, threshold=None, n_jobs=None,
                 callback=None, verbose=False, distance_weights=None,
                 discrete_threshold=10, discrete_features=None,
                 target="auto"):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose
        self.distance_weights = distance_weights
        self.discrete_threshold = discrete_threshold
        self.discrete_features = discrete_features
        self.target = target

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values, as skrebate reads them
        return tags


class SURF(_RadiusRelief):
    """SURF (Greene et al., 2009) as a selector: ``fastfs.surf``'s weights."""

    _function = staticmethod(surf)


class SURFstar(_RadiusRelief):
    """SURF* (Greene et al., 2010) as a selector: ``fastfs.surfstar``'s weights."""

    _function = staticmethod(surfstar)


class MultiSURF(_RadiusRelief):
    """MultiSURF (Urbanowicz et al., 2018) as a selector: ``fastfs.multisurf``'s weights."""

    _function = staticmethod(multisurf)


class MultiSURFstar(_RadiusRelief):
    """MultiSURF* (Granizo-Mackenzie and Moore, 2013) as a selector:
    ``fastfs.multisurfstar``'s weights."""

    _function = staticmethod(multisurfstar)


class _ReliefWrapper(_WeightSelector):
    """A wrapper of the Relief family around a core algorithm: ``method`` names it (or is a
    callable(X, y) returning one weight per feature) and ``method_params`` holds that
    algorithm's own parameters (``n_neighbors``, ``discrete_threshold``, ``n_jobs``, ...),
    passed to every call of it."""

    _own_params = ("n_features_to_select", "threshold", "method_params")
    _sparse = True  # the wrappers score column subsets of a sparse X as it is

    def _call(self, X, y):
        extra = dict(self.method_params or {})
        kwargs = self._function_kwargs()
        clash = sorted(set(extra) & set(kwargs))
        if clash:
            raise ValueError(f"method_params: {', '.join(clash)} are parameters of "
                             f"{type(self).__name__} itself; set them there")
        return type(self)._function(X, y, **kwargs, **extra)


class TuRF(_ReliefWrapper):
    """TuRF (Moore and White, 2007) as a selector: ``fastfs.turf``'s weights (features
    dropped in earlier rounds rank below the ones kept)."""

    _function = staticmethod(turf)

    def __init__(self, n_features_to_select=None, *, threshold=None, method="relieff",
                 pct=0.5, n_features_to_keep=100, method_params=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.method = method
        self.pct = pct
        self.n_features_to_keep = n_features_to_keep
        self.method_params = method_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # missing values, as the Relief family reads them; plain Relief refuses them
        tags.input_tags.allow_nan = not (isinstance(self.method, str)
                                         and self.method == "relief")
        return tags


class VLS(_ReliefWrapper):
    """VLS (Eppstein and Haake, 2008) as a selector: ``fastfs.vls``'s weights, each feature's
    best score over random feature subsets."""

    _function = staticmethod(vls)

    def __init__(self, n_features_to_select=None, *, threshold=None, method="relieff",
                 n_subsets=40, subset_size=5, random_state=None, method_params=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.method = method
        self.n_subsets = n_subsets
        self.subset_size = subset_size
        self.random_state = random_state
        self.method_params = method_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # missing values, as the Relief family reads them; plain Relief refuses them
        tags.input_tags.allow_nan = not (isinstance(self.method, str)
                                         and self.method == "relief")
        return tags


class IterativeRelief(_ReliefWrapper):
    """Iterative Relief (Draper, Kaito and Bienenstock, 2003) as a selector:
    ``fastfs.iterative_relief``'s weights, rescored with the last scores as distance weights
    until they settle."""

    _function = staticmethod(iterative_relief)

    def __init__(self, n_features_to_select=None, *, threshold=None, method="relieff",
                 max_iter=10, tol=1e-4, learning_rate=0.1, method_params=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.method_params = method_params

    def _select(self, result, n):
        super()._select(result, n)
        self.n_iter_ = result.n_iter  # rounds of scoring run


# ------------------------------------------------------------------------------------------
# regression weights (Navot's thesis, ch. 4)


class RGS(_WeightSelector):
    """RGS as a selector: soft-kNN regression weights, the best of them kept.

    Parameters are ``fastfs.rgs``'s plus ``n_features_to_select`` and ``threshold``; y is a
    real target. ``result_`` is its ``RGSResult`` (raw weights, the k and beta it used).
    """

    _function = staticmethod(rgs)
    _regression = True

    def __init__(self, n_features_to_select=None, *, threshold=None, n_neighbors=None,
                 beta=None, n_epochs=1, learning_rate="auto", n_restarts=1, sample_order=None,
                 random_state=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.beta = beta
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.n_restarts = n_restarts
        self.sample_order = sample_order
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    @property
    def _metric_scale(self) -> np.ndarray:
        # d_w = sum w_i^2 (x_i - x'_i)^2 with the raw w, the metric RGS's beta belongs to.
        return np.abs(np.asarray(self.result_.raw_weights, dtype=np.float64))


class SKS(_WeightSelector):
    """SKS (each feature's soft-kNN regression score alone) as a selector; parameters are
    ``fastfs.sks``'s plus ``n_features_to_select`` and ``threshold``."""

    _function = staticmethod(sks)
    _regression = True

    def __init__(self, n_features_to_select=None, *, threshold=None, n_neighbors=None,
                 beta=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.beta = beta
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


# ------------------------------------------------------------------------------------------
# linear selection (Shalev-Shwartz and Ben-David, ch. 25)


def _set_coef(est: Any, result: Any, n: int) -> None:
    est.coef_ = np.zeros(n)
    est.coef_[np.asarray(result.selected, dtype=np.intp)] = result.coef
    est.intercept_ = float(result.intercept)


class _LinearSelector(_SubsetSelector):
    _regression = True
    _own_params = ("n_features_to_select",)

    def _call(self, X, y):
        k = self.n_features_to_select
        k = max(1, X.shape[1] // 2) if k is None else _n_to_keep(k, X.shape[1])
        return type(self)._function(X, y, k, **self._function_kwargs())

    def _select(self, result, n):
        super()._select(result, n)
        _set_coef(self, result, n)


class OMP(_LinearSelector):
    """Orthogonal matching pursuit as a selector (``fastfs.omp``; its ``n_features`` is
    ``n_features_to_select`` here: an int, a float fraction, or None for half; fewer when
    no column is left to lower the residual first, as ``result_.stopped_early`` says).
    ``coef_`` holds the least-squares coefficients per feature (0 for the others)."""

    _function = staticmethod(omp)

    def __init__(self, n_features_to_select=None, *, method="qr", criterion="exact",
                 fit_intercept=False, tol=1e-10, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.method = method
        self.criterion = criterion
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class BackwardLeastSquares(_LinearSelector):
    """Backward elimination by least squares as a selector (``fastfs.backward_least_squares``;
    its ``n_features`` is ``n_features_to_select`` here). ``coef_`` as in ``OMP``."""

    _function = staticmethod(backward_least_squares)

    def __init__(self, n_features_to_select=None, *, fit_intercept=False, tol=1e-10,
                 n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class LassoSelector(_SubsetSelector):
    """The LASSO at one penalty as a selector: the features with a nonzero coefficient
    (``fastfs.lasso``; its size parameter is ``alpha``, larger keeps fewer). ``coef_`` as in
    ``OMP``. An alpha so large that no feature survives selects none (scikit-learn warns in
    ``transform``). ``n_iter_``: the coordinate-descent sweeps the fit took. ``alpha``
    defaults to 1.0, scikit-learn's ``Lasso`` default (``fastfs.lasso`` has no default: a
    selector needs one to be constructed without arguments)."""

    _function = staticmethod(lasso)
    _regression = True

    def __init__(self, alpha=1.0, *, fit_intercept=False, tol=1e-7, max_iter=1000,
                 precompute="auto", n_jobs=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.precompute = precompute
        self.n_jobs = n_jobs

    def _select(self, result, n):
        super()._select(result, n)
        _set_coef(self, result, n)
        # at least 1, as scikit-learn's Lasso reports it: an alpha at or above alpha_max
        # needs no sweep (every coefficient stays 0), which the path counts as 0
        self.n_iter_ = max(1, int(result.n_iter))


# ------------------------------------------------------------------------------------------
# subset searches over a criterion (Theodoridis and Koutroumbas; Navot's thesis, ch. 1)


class _SearchSelector(_SubsetSelector):
    """The searches' common parameters: n_features_to_select, criterion, n_jobs, callback,
    verbose (see fastfs.search); result_ is the SearchResult."""

    @property
    def _metric_scale(self) -> np.ndarray:
        return self.support_.astype(np.float64)


class SFS(_SearchSelector):
    """Sequential forward selection (``fastfs.sfs``) as a selector.

    The default ``n_features_to_select="auto"`` with ``tol=None`` stops at the first step
    that does not raise J (see ``fastfs.search``); scikit-learn's SequentialFeatureSelector
    with the same defaults selects half of the features. Pass ``n_features_to_select=0.5``
    for scikit-learn's count."""

    _function = staticmethod(sfs)

    def __init__(self, n_features_to_select="auto", *, criterion="loo_knn_accuracy", tol=None,
                 n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class SBS(SFS):
    """Sequential backward selection (``fastfs.sbs``) as a selector."""

    _function = staticmethod(sbs)


class SFFS(SFS):
    """Sequential floating forward selection (``fastfs.sffs``) as a selector."""

    _function = staticmethod(sffs)


class SFBS(SFS):
    """Sequential floating backward selection (``fastfs.sfbs``) as a selector."""

    _function = staticmethod(sfbs)


class Bidirectional(_SearchSelector):
    """Bidirectional search (``fastfs.bidirectional``) as a selector."""

    _function = staticmethod(bidirectional)

    def __init__(self, n_features_to_select="best", *, criterion="loo_knn_accuracy", tol=None,
                 n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class PlusLMinusR(_SearchSelector):
    """Plus-l-minus-r search (``fastfs.plus_l_minus_r``) as a selector. ``l`` and ``r``
    default to 2 and 1 (plus 2, minus 1: the forward form; ``fastfs.plus_l_minus_r`` has no
    default: a selector needs one to be constructed without arguments)."""

    _function = staticmethod(plus_l_minus_r)

    def __init__(self, n_features_to_select="auto", *, l=2, r=1,  # noqa: E741
                 criterion="loo_knn_accuracy", tol=None, n_jobs=None, callback=None,
                 verbose=False):
        self.n_features_to_select = n_features_to_select
        self.l = l  # noqa: E741
        self.r = r
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class BeamSearch(_SearchSelector):
    """Beam search (``fastfs.beam``) as a selector."""

    _function = staticmethod(beam)

    def __init__(self, n_features_to_select="auto", *, width=5, criterion="loo_knn_accuracy",
                 tol=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.width = width
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class Exhaustive(_SearchSelector):
    """Exhaustive search (``fastfs.exhaustive``) as a selector."""

    _function = staticmethod(exhaustive)

    def __init__(self, n_features_to_select="best", *, criterion="loo_knn_accuracy",
                 max_subsets=1_000_000, tol=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.max_subsets = max_subsets
        self.tol = tol
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class BranchAndBound(_SearchSelector):
    """Branch and bound (``fastfs.branch_and_bound``) as a selector; the function's required
    ``n_features_to_select`` defaults to half of the features here."""

    _function = staticmethod(branch_and_bound)
    _own_params = ("n_features_to_select",)

    def __init__(self, n_features_to_select=None, *, criterion="j3", assume_monotone=False,
                 max_evaluations=2_000_000, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.assume_monotone = assume_monotone
        self.max_evaluations = max_evaluations
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    def _call(self, X, y):
        k = self.n_features_to_select
        k = max(1, X.shape[1] // 2) if k is None else k
        return branch_and_bound(X, y, k, **self._function_kwargs())


class BestFirst(_SearchSelector):
    """Best-first search (``fastfs.best_first``) as a selector."""

    _function = staticmethod(best_first)

    def __init__(self, n_features_to_select="best", *, criterion="loo_knn_accuracy",
                 patience=5, max_evaluations=None, removals=False, n_jobs=None, callback=None,
                 verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.patience = patience
        self.max_evaluations = max_evaluations
        self.removals = removals
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class SimulatedAnnealing(_SearchSelector):
    """Simulated annealing over subsets (``fastfs.simulated_annealing``) as a selector."""

    _function = staticmethod(simulated_annealing)

    def __init__(self, n_features_to_select="best", *, criterion="loo_knn_accuracy",
                 n_iter=1000, initial_temperature=None, schedule="geometric", cooling=None,
                 initial=None, random_state=None, n_jobs=None, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.n_iter = n_iter
        self.initial_temperature = initial_temperature
        self.schedule = schedule
        self.cooling = cooling
        self.initial = initial
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class OrderedFS(_SubsetSelector):
    """ORDERED-FS (``fastfs.ordered_fs``) as a selector: keeps the hypothesis the hold-out part
    chose (possibly none of the features, when the intercept-only model wins)."""

    _function = staticmethod(ordered_fs)

    def __init__(self, *, holdout=0.3, width=50, max_features=None, learner=None, C=1.0,
                 random_state=None, n_jobs=None, callback=None, verbose=False):
        self.holdout = holdout
        self.width = width
        self.max_features = max_features
        self.learner = learner
        self.C = C
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class StandardWrap(OrderedFS):
    """STANDARD-WRAP (``fastfs.standard_wrap``) as a selector."""

    _function = staticmethod(standard_wrap)


class OrderedFS2(_SubsetSelector):
    """ORDERED-FS2 (``fastfs.ordered_fs2``) as a selector."""

    _function = staticmethod(ordered_fs2)

    def __init__(self, *, fractions=(0.5, 0.25, 0.25), width=50, max_features=None,
                 learner=None, C=1.0, random_state=None, n_jobs=None, callback=None,
                 verbose=False):
        self.fractions = fractions
        self.width = width
        self.max_features = max_features
        self.learner = learner
        self.C = C
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose


class RecursiveFeatureElimination(_SubsetSelector):
    """Recursive feature elimination (``fastfs.rfe``) as a selector; ``ranking_`` is the
    elimination rank (1 for the kept features), as scikit-learn's ``RFE``."""

    _function = staticmethod(rfe)

    def __init__(self, n_features_to_select=None, *, step=1, estimator=None,
                 task="classification", C=1.0, alpha=1.0, callback=None, verbose=False):
        self.n_features_to_select = n_features_to_select
        self.step = step
        self.estimator = estimator
        self.task = task
        self.C = C
        self.alpha = alpha
        self.callback = callback
        self.verbose = verbose

    def _select(self, result, n):
        self.ranking_ = np.asarray(result.ranks, dtype=np.intp).copy()
        self.support_ = np.asarray(result.support, dtype=bool).copy()


class GreedyLogistic(_SubsetSelector):
    """Greedy selection for the logistic loss (``fastfs.greedy_logistic``) as a selector;
    ``n_features_to_select`` defaults to half of the features; ``coef_`` (n_outputs,
    n_features) / ``intercept_`` are the final refit's, one column per input feature (0 for
    the features not selected), as the linear selectors' ``coef_``."""

    _function = staticmethod(greedy_logistic)
    _own_params = ("n_features_to_select",)

    def __init__(self, n_features_to_select=None, *, C=1.0, n_jobs=None, callback=None,
                 verbose=False):
        self.n_features_to_select = n_features_to_select
        self.C = C
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    def _call(self, X, y):
        k = self.n_features_to_select
        k = max(1, X.shape[1] // 2) if k is None else _n_to_keep(k, X.shape[1])
        return greedy_logistic(X, y, k, **self._function_kwargs())

    def _select(self, result, n):
        super()._select(result, n)
        coef = np.asarray(result.coef)
        self.coef_ = np.zeros((coef.shape[0], n), dtype=coef.dtype)
        self.coef_[:, np.asarray(result.selected, dtype=np.intp)] = coef
        self.intercept_ = result.intercept


class RankFeatures(_WeightSelector):
    """Each feature scored alone by a criterion (``fastfs.rank_features``) as a selector:
    ``scores_`` is J of every feature alone; the best are kept by ``n_features_to_select``
    and/or ``threshold`` as for the weight methods. ``result_`` is the full ranking
    (``rank_features`` of every feature, its ``support`` all True); the selection is
    ``support_`` / ``ranking_``."""

    def __init__(self, n_features_to_select=None, *, threshold=None,
                 criterion="loo_knn_accuracy", n_jobs=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.criterion = criterion
        self.n_jobs = n_jobs

    def _call(self, X, y):
        return rank_features(X, y, None, **self._function_kwargs())

    def _select(self, result, n):
        order = np.asarray(result.ranking, dtype=np.intp)
        self.scores_ = np.asarray(result.scores, dtype=np.float64)
        self.ranking_ = _ranks(order, n)
        self.support_ = self._keep(self.scores_, order, n)


# ------------------------------------------------------------------------------------------
# univariate filters


def _linear_percentile(ascending: np.ndarray, p: float) -> float:
    """np.percentile(values, p) (its default "linear" method, with its exact arithmetic) of
    values already sorted ascending: no second sort or partition of the scores."""
    n = ascending.size
    virtual = (n - 1) * (p / 100)
    if virtual >= n - 1:
        return float(ascending[-1])
    lo = math.floor(virtual)
    gamma = virtual - lo
    a, b = float(ascending[lo]), float(ascending[lo + 1])
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def _filter_support(mode: str, param: Any, clean: np.ndarray, order: np.ndarray,
                    pvalues: np.ndarray | None) -> np.ndarray:
    """scikit-learn's rules of SelectKBest, SelectPercentile, SelectFpr, SelectFdr and
    SelectFwe, with fastfs's errors for bad parameters. ``clean``: the scores with NaN as the
    smallest float; ``order``: their stable ascending argsort, reversed (best first)."""
    n = clean.size
    if mode == "k_best":
        if isinstance(param, str) and param == "all":
            return np.ones(n, dtype=bool)
        if isinstance(param, (bool, np.bool_)) or not isinstance(param, numbers.Integral):
            raise TypeError(f"param: mode='k_best' takes an int or 'all', got {param!r}")
        if not 0 <= param <= n:
            raise ValueError(f"param: mode='k_best' keeps k in [0, n_features={n}] features, "
                             f"got {param}")
        mask = np.zeros(n, dtype=bool)
        mask[order[:int(param)]] = True
        return mask
    if isinstance(param, (bool, np.bool_)) or not isinstance(param, numbers.Real):
        raise TypeError(f"param: mode={mode!r} takes a real number, got {param!r}")
    param = float(param)
    if mode == "percentile":
        if not 0 <= param <= 100:
            raise ValueError(f"param: a percentile must be in [0, 100], got {param}")
        if param == 100 or param == 0:
            return np.full(n, param == 100)
        threshold = _linear_percentile(clean[order[::-1]], 100 - param)
        mask = clean > threshold
        ties = np.flatnonzero(clean == threshold)
        mask[ties[:max(0, int(n * param / 100) - int(mask.sum()))]] = True
        return mask
    if not 0 <= param <= 1:
        raise ValueError(f"param: mode={mode!r} takes a level in [0, 1], got {param}")
    if mode == "fpr":
        return pvalues < param
    if mode == "fwe":
        return pvalues < param / n
    passed = np.sort(pvalues)  # fdr: Benjamini-Hochberg
    passed = passed[passed <= param / n * np.arange(1, n + 1)]
    if passed.size == 0:
        return np.zeros(n, dtype=bool)
    return pvalues <= passed.max()


# The filters FilterSelector takes by name (those returning per-feature scores from (X, y)),
# and the score NaN counts as (below every real score, as SelectKBest ranks it).
_FILTER_NAMES = tuple(sorted(n for n in _filters.__all__
                             if n not in ("DiscretenessWarning", "screen", "one_sample_t",
                                          "one_sample_z", "z_test")))
_LOWEST = np.finfo(np.float64).min


def _scores_and_pvalues(result: Any, n: int, func: Any) -> tuple[np.ndarray, Any]:
    """(scores, pvalues or None) of a score function's result: a FilterResult, a
    (scores, pvalues) tuple or list, or the scores alone (as scikit-learn's selectors read
    it), each of length n."""
    name = getattr(func, "__name__", type(func).__name__)
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise ValueError(f"score_func: {name!r} returned a sequence of {len(result)} "
                             "items; expected (scores, pvalues) or the scores alone")
        scores, pvalues = result
    else:
        scores, pvalues = result, None
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (n,):
        raise ValueError(f"score_func: {name!r} returned scores of shape {scores.shape}; "
                         f"expected one score a feature, shape ({n},)")
    if pvalues is not None:
        pvalues = np.asarray(pvalues, dtype=np.float64)
        if pvalues.shape != (n,):
            raise ValueError(f"score_func: {name!r} returned p-values of shape "
                             f"{pvalues.shape}; expected shape ({n},)")
    return scores, pvalues


class FilterSelector(_Selector):
    """A univariate filter of ``fastfs.filters`` with scikit-learn's selection rules.

    Parameters
    ----------
    score_func : str or callable, default "anova_f"
        The name of a function of ``fastfs.filters`` (``"anova_f"``, ``"t_test"``,
        ``"mutual_info"``...) or any callable ``(X, y)`` returning a ``FilterResult``, a
        ``(scores, pvalues)`` pair or the scores alone (pass a filter's own options with
        ``functools.partial``).
    mode : {"percentile", "k_best", "fpr", "fdr", "fwe"}, default "percentile"
        As ``GenericUnivariateSelect``: keep the ``param`` percent of the features with the
        largest score, the ``param`` largest (an int, or "all"), or the features whose p-value
        passes the false positive rate, Benjamini-Hochberg false discovery rate or family-wise
        error test at level ``param``. The p-value modes need a filter with a test (not
        ``f_score``, ``s2n``, ``fisher_ratio`` or ``pearson(pvalues=False)``).
        The rules, NaN scores and ties included, are those of ``SelectKBest``,
        ``SelectPercentile``, ``SelectFpr``, ``SelectFdr`` and ``SelectFwe``; unlike
        ``SelectKBest``, a k above n_features is a ValueError.
    param : float or int, default 50
        The mode's parameter.

    ``z_test`` needs the known standard deviation: pass
    ``functools.partial(fastfs.filters.z_test, sigma=...)``. The two-class filters (t_test,
    z_test, f_score, s2n, auc) refuse y with another number of classes, as the functions do.

    Signed statistics (pearson, t_test, z_test, s2n) are ranked by their signed value in
    "percentile" and "k_best"; use a p-value mode to keep both directions. Sparse X is
    accepted where the filter accepts it. Attributes: ``result_`` (the ``FilterResult``),
    ``scores_``, ``pvalues_``, ``ranking_`` (1 = largest score; equal scores: the higher
    index first, as ``SelectKBest`` keeps them), ``support_`` and the mixins' ones.
    """

    _MODES = ("percentile", "k_best", "fpr", "fdr", "fwe")

    def __init__(self, score_func="anova_f", *, mode="percentile", param=50):
        self.score_func = score_func
        self.mode = mode
        self.param = param

    def _score_function(self):
        func = self.score_func
        if isinstance(func, str):
            names = _FILTER_NAMES
            if func == "z_test":
                raise ValueError("score_func: 'z_test' needs the known standard deviation; "
                                 "pass functools.partial(fastfs.filters.z_test, sigma=...)")
            if func not in names:
                raise ValueError(f"score_func: unknown filter {func!r}; valid names are "
                                 f"{', '.join(repr(n) for n in names)}")
            return getattr(_filters, func)
        if not callable(func):
            raise TypeError(f"score_func: expected a name of a fastfs.filters function or a "
                            f"callable, got {type(func).__name__}")
        return func

    def fit(self, X, y=None):
        """Score every feature with the filter and keep the result."""
        if self.mode not in self._MODES:
            raise ValueError(f"mode: unknown value {self.mode!r}; valid options are "
                             f"{', '.join(repr(m) for m in self._MODES)}")
        func = self._score_function()
        with _unchanged_on_error(self):
            X, y = _validate_fit(self, X, y, regression=False, accept_sparse=["csr", "csc"])
            self._score_and_select(func, X, y, X.shape[1])
        return self

    def _score_and_select(self, func: Any, X: Any, y: Any, n: int) -> None:
        """Check the parameter against n, score the n features of (X, y) with func, keep the
        result and select."""
        _filter_support(self.mode, self.param, np.zeros(n), np.arange(n), np.ones(n))
        result = func(X, y)
        scores, pvalues = _scores_and_pvalues(result, n, func)
        if self.mode in ("fpr", "fdr", "fwe") and pvalues is None:
            raise ValueError(f"score_func: {getattr(func, '__name__', func)!r} gives no "
                             f"p-values, which mode={self.mode!r} needs; use 'percentile' "
                             "or 'k_best'")
        self.result_ = _with_fitted_names(self, result)
        self._select((scores, pvalues), n)

    def _select(self, result, n):
        scores, pvalues = result
        self.scores_ = np.asarray(scores, dtype=np.float64)
        self.pvalues_ = None if pvalues is None else np.asarray(pvalues, dtype=np.float64)
        nan = np.isnan(self.scores_)
        clean = np.where(nan, _LOWEST, self.scores_) if nan.any() else self.scores_
        # SelectKBest keeps the last k of a stable ascending sort (equal scores: the higher
        # index first); ranking_ follows the same order, so ranking_ <= k is the k_best mask.
        order = np.argsort(clean, kind="mergesort")[::-1]
        self.ranking_ = _ranks(order, n)
        self.support_ = _filter_support(self.mode, self.param, clean, order, self.pvalues_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # passed on to the filter (most accept SciPy sparse X)
        return tags


# ------------------------------------------------------------------------------------------
# predictors under learned weights (Navot's thesis, section 3.5.2 and figure 4.5)


def _fit_weighting(weighting: Any, default: Any, use_weights: Any, n_jobs: Any, X: np.ndarray,
                   y: np.ndarray) -> tuple[Any, np.ndarray]:
    """Fit a clone of the weighting selector and return it with the per-feature scale s:
    distances are Euclidean on X * s. The kNN estimator's own n_jobs is checked first, by the
    package's rules (scikit-learn's neighbours met it only at predict)."""
    if not isinstance(use_weights, (bool, np.bool_)):
        raise TypeError(f"use_weights: expected a bool, got {type(use_weights).__name__}")
    resolve_n_jobs(n_jobs)
    selector = clone(default if weighting is None else weighting)
    if not isinstance(selector, _Selector):
        raise TypeError(f"weighting: expected a fastfs.sklearn selector, got "
                        f"{type(selector).__name__}")
    if use_weights and not hasattr(type(selector), "_metric_scale"):
        raise TypeError(f"weighting: the weights of {type(selector).__name__} do not define "
                        "a distance; use Simba, RGS, GFlip or a search selector, or "
                        "use_weights=False to use only the features it keeps")
    selector.fit(X, y)
    scale = selector.support_.astype(np.float64)
    if use_weights:
        scale *= selector._metric_scale
    if not np.any(scale > 0):
        raise ValueError(f"weighting: {type(selector).__name__} gave every feature weight 0, "
                         "so every distance is 0; nothing to predict with")
    return selector, scale


class WeightedKNeighborsClassifier(ClassifierMixin, BaseEstimator):
    """k-NN classification under a metric learned by a fastfs selector (Navot's thesis,
    section 3.5.2: use the weights "directly by using the induced distance measure").

    ``fit`` fits a clone of ``weighting`` and then scikit-learn's ``KNeighborsClassifier`` on
    ``X * feature_weights_``: the Euclidean distance there is the weighted distance
    ``||z||_w = sqrt(sum_i w_i^2 z_i^2)`` of the selector. Simba: w = |w_raw| / max|w_raw| =
    sqrt(Simba's weights); G-flip and the search selectors: w = 1 on the selected subset, 0
    elsewhere. Features the selector does not keep get weight 0, so ``Simba(10)`` weights the
    10 best features and drops the rest (the thesis' figure 4.5 compares this with
    ``use_weights=False``: the same features, equally weighted).

    Parameters
    ----------
    weighting : fastfs.sklearn selector, default None
        None: ``Simba(1.0)`` (every feature, weighted). With ``use_weights=True`` it must
        define a metric (Simba, RGS, GFlip or a search selector); with False any selector.
    n_neighbors : int, default 1
    use_weights : bool, default True
        False: w = 1 on the selected features, 0 elsewhere.
    n_jobs : int, optional
        Passed to ``KNeighborsClassifier`` (the selector takes its own ``n_jobs``).
    random_state : None, int, Generator or RandomState
        Seeds the default ``Simba(1.0)`` (a given ``weighting`` keeps its own).

    Attributes
    ----------
    weighting_ : the fitted selector; feature_weights_ : ndarray (n_features,), the w above;
    knn_ : the fitted KNeighborsClassifier; classes_, n_features_in_, feature_names_in_.
    """

    def __init__(self, weighting=None, *, n_neighbors=1, use_weights=True, n_jobs=None,
                 random_state=None):
        self.weighting = weighting
        self.n_neighbors = n_neighbors
        self.use_weights = use_weights
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=_DTYPES, ensure_min_samples=2)
        check_classification_targets(y)
        self.weighting_, self.feature_weights_ = _fit_weighting(
            self.weighting, Simba(1.0, random_state=self.random_state), self.use_weights,
            self.n_jobs, X, y)
        self.knn_ = KNeighborsClassifier(n_neighbors=self.n_neighbors, n_jobs=self.n_jobs)
        self.knn_.fit(X * self.feature_weights_, y)
        self.classes_ = self.knn_.classes_
        return self

    def _scaled(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_DTYPES, reset=False)
        return X * self.feature_weights_

    def predict(self, X):
        """Class of the k nearest training samples under the learned metric."""
        X = self._scaled(X)
        return self.knn_.predict(X)

    def predict_proba(self, X):
        """Fraction of the k nearest training samples in each class."""
        X = self._scaled(X)
        return self.knn_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class SoftKNeighborsRegressor(RegressorMixin, BaseEstimator):
    """The soft kNN regression of Navot's thesis (ch. 4) under weights learned by RGS.

    For a new sample x, with ``d_w(x, x') = sum_i w_i^2 (x_i - x'_i)^2`` and N(x) its k
    nearest training samples under d_w::

        g(x) = sum_{x' in N} y(x') exp(-d_w(x, x') / beta) / sum_{x' in N} exp(-d_w(x, x') / beta)

    (a training sample given to ``predict`` counts as its own neighbour; ``fastfs.rgs`` scores
    leave-one-out). w is RGS's raw weight vector (``result_.raw_weights``, the metric its
    beta belongs to) on the features the selector keeps, 0 elsewhere; with
    ``use_weights=False`` w = 1 on them (the unweighted baseline of the thesis' figure 4.5).
    Equal distances among the k nearest follow scikit-learn's ``NearestNeighbors``.

    Parameters
    ----------
    weighting : fastfs.sklearn selector, default None
        None: ``RGS(1.0)`` (every feature, weighted). With ``use_weights=True`` it must define
        a metric (RGS, Simba, GFlip or a search selector); with False any selector.
    n_neighbors : int, optional
        k; default the k of the RGS fit, or ceil(log2(n_samples)) for other selectors.
    beta : float > 0, optional
        Default: the beta of the RGS fit when its weights are used; otherwise half the mean
        squared distance from each training sample to its k nearest others under w (the rule
        RGS uses at w = 1).
    use_weights : bool, default True
    n_jobs : int, optional
        Passed to ``NearestNeighbors``.
    random_state : None, int, Generator or RandomState
        Seeds the default ``RGS(1.0)`` (a given ``weighting`` keeps its own): without it two
        fits of the default differ, as RGS visits the samples in a random order.

    Attributes
    ----------
    weighting_, feature_weights_ (w), n_neighbors_, beta_, n_features_in_, feature_names_in_.
    """

    def __init__(self, weighting=None, *, n_neighbors=None, beta=None, use_weights=True,
                 n_jobs=None, random_state=None):
        self.weighting = weighting
        self.n_neighbors = n_neighbors
        self.beta = beta
        self.use_weights = use_weights
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=_DTYPES, y_numeric=True, ensure_min_samples=2)
        selector, scale = _fit_weighting(self.weighting, RGS(1.0, random_state=self.random_state),
                                         self.use_weights, self.n_jobs, X, y)
        m = X.shape[0]
        result = selector.result_
        k = self.n_neighbors
        if k is None:
            k = getattr(result, "n_neighbors", 0) or int(np.ceil(np.log2(m)))
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(f"n_neighbors: expected an int, got {type(k).__name__}")
        if not 1 <= k <= m:
            raise ValueError(f"n_neighbors: must be in [1, n_samples={m}], got {k}")
        Xs = np.asarray(X * scale, dtype=np.float64)
        self.nn_ = NearestNeighbors(n_neighbors=int(k), n_jobs=self.n_jobs).fit(Xs)
        beta = self.beta
        if beta is None:
            beta = getattr(result, "beta", None) if self.use_weights else None
            if beta is None:
                if m < 2 or k > m - 1:
                    raise ValueError(f"n_neighbors: the default beta needs k <= n_samples - 1 "
                                     f"= {m - 1}, got {k}; pass beta")
                # kneighbors() of the fitted samples leaves each one out of its own list
                dist, _ = NearestNeighbors(n_neighbors=int(k)).fit(Xs).kneighbors()
                beta = 0.5 * float(np.mean(dist ** 2))
        if isinstance(beta, (bool, np.bool_)) or not isinstance(beta, numbers.Real):
            raise TypeError(f"beta: expected a real number, got {type(beta).__name__}")
        if not (np.isfinite(beta) and beta > 0):
            raise ValueError(f"beta: must be finite and > 0, got {beta}; pass an explicit "
                             "beta (every sample may have k exact duplicates)")
        self.weighting_, self.feature_weights_ = selector, scale
        self.n_neighbors_, self.beta_ = int(k), float(beta)
        self.y_train_ = np.asarray(y, dtype=np.float64)
        return self

    def predict(self, X):
        """Soft kNN estimate under the learned weights."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_DTYPES, reset=False)
        dist, idx = self.nn_.kneighbors(np.asarray(X * self.feature_weights_, np.float64))
        d = dist ** 2
        p = np.exp(-(d - d[:, :1]) / self.beta_)  # shifted by the nearest: no underflow
        return (p * self.y_train_[idx]).sum(axis=1) / p.sum(axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
