"""The scikit-learn selectors of fastfs.sklearn running on a Dask cluster (``fastfs.dask``).

Each ``Dask*`` class is the selector of the same name with one more parameter, ``client`` (a
``dask.distributed.Client``; None: Dask's current one), as LightGBM's Dask estimators extend
its scikit-learn ones. ``fit`` calls the function of ``fastfs.dask`` with X as given: a Dask
array or DataFrame is not computed by the selector (the function reads it as it does: the
filters chunk by chunk, the Relief family in row tiles under ``mode="tiled"``, the others
whole, sent to the workers); NumPy and pandas input is validated as by the base class. The
fitted attributes and the selection rules are those of the base class; a DataFrame's string
column names become ``feature_names_in_``. ``transform`` of a Dask array or DataFrame returns
the lazy selection of its columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dask_core as _fd
from . import sklearn as _skl


def _is_dask(X: Any) -> bool:
    """A Dask array or a Dask DataFrame (anything Dask turns into an array)."""
    return isinstance(X, _fd.da.Array) or (hasattr(X, "to_dask_array") and hasattr(X, "dask"))


def _fit_dask_input(est: Any, X: Any) -> int:
    """n_features_in_ and feature_names_in_ of a Dask collection, without computing it (as
    scikit-learn's validation records them: the names only when every column name is a
    string). Returns the number of features."""
    if getattr(X, "ndim", None) != 2:
        raise ValueError(f"X: expected a 2-D array of shape (n_samples, n_features), got "
                         f"{getattr(X, 'ndim', '?')}-D")
    n = int(X.shape[1])
    if n == 0:
        raise ValueError("X: has zero features")
    est.n_features_in_ = n
    columns = getattr(X, "columns", None)
    strings = [] if columns is None else [isinstance(c, str) for c in columns]
    if any(strings) and not all(strings):  # as scikit-learn's validation refuses them
        kinds = sorted({type(c).__name__ for c in columns})
        raise TypeError(f"X: column names must all be strings or none of them; got a mix of "
                        f"{', '.join(kinds)}: convert them with X.columns = "
                        "X.columns.astype(str)")
    if strings and all(strings):
        est.feature_names_in_ = np.asarray(list(columns), dtype=object)
    elif hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    return n


def _transform_dask(est: Any, X: Any) -> Any:
    """The selected columns of a Dask array or DataFrame, lazily."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    mask = est.get_support()
    if getattr(X, "ndim", None) != 2 or X.shape[1] != mask.size:
        raise ValueError(f"X: has {X.shape[-1]} features, but {type(est).__name__} was "
                         f"fitted with {mask.size}")
    keep = np.flatnonzero(mask)
    columns = getattr(X, "columns", None)
    if columns is None:
        return X[:, keep]
    names = getattr(est, "feature_names_in_", None)
    if names is not None and [str(c) for c in columns] != list(names):
        raise ValueError("X: the feature names differ from those seen in fit")
    return X[[columns[i] for i in keep]]


class _ClientParam:
    """clone() copies every parameter but ``client``, which the clone shares (a connection
    cannot be copied)."""

    def __sklearn_clone__(self):
        from sklearn.base import clone

        params = self.get_params(deep=False)
        client = params.pop("client")
        return type(self)(**{k: clone(v, safe=False) for k, v in params.items()},
                          client=client)


class DaskFilterSelector(_ClientParam, _skl.FilterSelector):
    """``FilterSelector`` whose filter runs on Dask (``fastfs.dask.<score_func>``); X may be a
    Dask array chunked by rows and features. A callable ``score_func`` is called as given, and
    a SciPy sparse X (in memory already) is scored by the filter of one machine."""

    def __init__(self, score_func="anova_f", *, mode="percentile", param=50, client=None):
        super().__init__(score_func, mode=mode, param=param)
        self.client = client

    def _score_function(self):
        func = self.score_func
        if isinstance(func, str):
            if func not in _skl._FILTER_NAMES:
                raise ValueError(f"score_func: unknown filter {func!r}; valid names are "
                                 f"{', '.join(repr(n) for n in _skl._FILTER_NAMES)}")
            dask_func = getattr(_fd, func)
            client = self.client

            def run(X, y):
                if _fd._filters._is_sparse(X):
                    _fd._client_or_none(client)     # a wrong client is still named
                    # a SciPy sparse matrix is in memory already: the filter of one machine
                    return getattr(_fd._filters, func)(X, y)
                return dask_func(X, y, client=client)
            run.__name__ = func
            return run
        return super()._score_function()

    def fit(self, X, y=None):
        """Score every feature with the filter on Dask and keep the result."""
        if not _is_dask(X):
            return super().fit(X, y)
        if y is None:  # scikit-learn's words, as for NumPy X
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, "
                             "but the target y is None.")
        if self.mode not in self._MODES:
            raise ValueError(f"mode: unknown value {self.mode!r}; valid options are "
                             f"{', '.join(repr(m) for m in self._MODES)}")
        func = self._score_function()
        with _skl._unchanged_on_error(self):
            self._score_and_select(func, X, y, _fit_dask_input(self, X))
        return self

    def transform(self, X):
        """The selected columns; for a Dask array or DataFrame, a lazy one."""
        if not _is_dask(X):
            return super().transform(X)
        return _transform_dask(self, X)


class _DaskCall(_ClientParam):
    """fit calls the fastfs.dask function with the constructor's parameters and ``client``."""

    _own_params: tuple = ("n_features_to_select", "threshold", "client")
    _sparse = False  # the fastfs.dask functions take dense NumPy or Dask arrays

    def _call(self, X, y):
        return type(self)._function(X, y, **self._function_kwargs(), client=self.client)

    def fit(self, X, y=None):
        """Run the method of fastfs.dask on (X, y) and keep its result; a Dask array or
        DataFrame is passed to it as given, not computed here."""
        if not _is_dask(X):
            return super().fit(X, y)
        if y is None:  # scikit-learn's words, as for NumPy X
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, "
                             "but the target y is None.")
        with _skl._unchanged_on_error(self):
            self._run_and_select(X, y, _fit_dask_input(self, X))
        return self

    def transform(self, X):
        """The selected columns; for a Dask array or DataFrame, a lazy one."""
        if not _is_dask(X):
            return super().transform(X)
        return _transform_dask(self, X)


class DaskRelief(_DaskCall, _skl.Relief):
    """``Relief`` over blocks of query samples on Dask (``fastfs.dask.relief``); ``mode`` and
    ``tile_rows`` choose between X sent to every worker and X split into row tiles, as there."""

    _function = staticmethod(_fd.relief)

    def __init__(self, n_features_to_select=None, *, threshold=None, n_iter=None,
                 random_state=None, n_jobs=None, block_rows=None, mode="auto", tile_rows=None,
                 client=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_iter = n_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.block_rows = block_rows
        self.mode = mode
        self.tile_rows = tile_rows
        self.client = client


class DaskReliefF(_DaskCall, _skl.ReliefF):
    """``ReliefF`` over blocks of query samples on Dask (``fastfs.dask.relieff``); ``mode`` and
    ``tile_rows`` choose between X sent to every worker and X split into row tiles, as there."""

    _function = staticmethod(_fd.relieff)

    def __init__(self, n_features_to_select=None, *, threshold=None, n_neighbors=10,
                 n_jobs=None, block_rows=None, mode="auto", tile_rows=None, client=None,
                 discrete_threshold=10, discrete_features=None, target="auto"):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs
        self.block_rows = block_rows
        self.mode = mode
        self.tile_rows = tile_rows
        self.client = client
        self.discrete_threshold = discrete_threshold
        self.discrete_features = discrete_features
        self.target = target


class DaskSimba(_DaskCall, _skl.Simba):
    """``Simba`` with its restarts as Dask tasks (``fastfs.dask.simba``)."""

    _function = staticmethod(_fd.simba)

    def __init__(self, n_features_to_select=None, *, threshold=None, n_iter=None,
                 n_restarts=5, utility="linear", beta=1.0, random_state=None, n_jobs=None,
                 client=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_iter = n_iter
        self.n_restarts = n_restarts
        self.utility = utility
        self.beta = beta
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client


class DaskGFlip(_DaskCall, _skl.GFlip):
    """``GFlip`` with its restarts as Dask tasks (``fastfs.dask.gflip``); with
    ``split_state=True`` the distance state split by row blocks across the workers
    (``n_blocks``), as there."""

    _own_params = ("client",)
    _function = staticmethod(_fd.gflip)

    def __init__(self, *, utility="linear", beta=1.0, max_epochs=100, n_restarts=2,
                 initial=None, random_state=None, n_jobs=None, split_state=False,
                 n_blocks=None, client=None):
        self.utility = utility
        self.beta = beta
        self.max_epochs = max_epochs
        self.n_restarts = n_restarts
        self.initial = initial
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.split_state = split_state
        self.n_blocks = n_blocks
        self.client = client


class DaskRGS(_DaskCall, _skl.RGS):
    """``RGS`` with its restarts as Dask tasks (``fastfs.dask.rgs``)."""

    _function = staticmethod(_fd.rgs)

    def __init__(self, n_features_to_select=None, *, threshold=None, n_neighbors=None,
                 beta=None, n_epochs=1, learning_rate="auto", n_restarts=1,
                 random_state=None, n_jobs=None, client=None):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_neighbors = n_neighbors
        self.beta = beta
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.n_restarts = n_restarts
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client


class _DaskRadius(_DaskCall):
    """A radius member of the Relief family on Dask: blocks of query samples with X sent to
    every worker, or X in row tiles (``mode``, ``tile_rows``), as the fastfs.dask function."""

    def __init__(self, n_features_to_select=None, *, threshold=None, n_jobs=None,
                 block_rows=None, mode="auto", tile_rows=None, client=None,
                 discrete_threshold=10, discrete_features=None, target="auto"):
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.block_rows = block_rows
        self.mode = mode
        self.tile_rows = tile_rows
        self.client = client
        self.discrete_threshold = discrete_threshold
        self.discrete_features = discrete_features
        self.target = target


class DaskSURF(_DaskRadius, _skl.SURF):
    """``SURF`` on Dask (``fastfs.dask.surf``)."""

    _function = staticmethod(_fd.surf)


class DaskSURFstar(_DaskRadius, _skl.SURFstar):
    """``SURFstar`` on Dask (``fastfs.dask.surfstar``)."""

    _function = staticmethod(_fd.surfstar)


class DaskMultiSURF(_DaskRadius, _skl.MultiSURF):
    """``MultiSURF`` on Dask (``fastfs.dask.multisurf``)."""

    _function = staticmethod(_fd.multisurf)


class DaskMultiSURFstar(_DaskRadius, _skl.MultiSURFstar):
    """``MultiSURFstar`` on Dask (``fastfs.dask.multisurfstar``)."""

    _function = staticmethod(_fd.multisurfstar)


class _DaskSequential(_DaskCall):
    """A sequential search on Dask with the n_samples x n_samples distance state split by row
    blocks across the workers (``n_blocks``), as the fastfs.dask function."""

    _own_params = ("client",)

    def __init__(self, n_features_to_select="auto", *, criterion="loo_knn_accuracy", tol=None,
                 n_jobs=None, n_blocks=None, client=None):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.n_blocks = n_blocks
        self.client = client


class DaskSFS(_DaskSequential, _skl.SFS):
    """``SFS`` on a split distance state (``fastfs.dask.sfs``)."""

    _function = staticmethod(_fd.sfs)


class DaskSBS(_DaskSequential, _skl.SBS):
    """``SBS`` on a split distance state (``fastfs.dask.sbs``)."""

    _function = staticmethod(_fd.sbs)


class DaskSFFS(_DaskSequential, _skl.SFFS):
    """``SFFS`` on a split distance state (``fastfs.dask.sffs``)."""

    _function = staticmethod(_fd.sffs)


class DaskSFBS(_DaskSequential, _skl.SFBS):
    """``SFBS`` on a split distance state (``fastfs.dask.sfbs``)."""

    _function = staticmethod(_fd.sfbs)


class DaskBeamSearch(_DaskCall, _skl.BeamSearch):
    """``BeamSearch`` on Dask (``fastfs.dask.beam``): the split state, or blocks of candidate
    subsets as tasks."""

    _own_params = ("client",)
    _function = staticmethod(_fd.beam)

    def __init__(self, n_features_to_select="auto", *, width=5, criterion="loo_knn_accuracy",
                 tol=None, n_jobs=None, n_blocks=None, block_subsets=None, client=None):
        self.n_features_to_select = n_features_to_select
        self.width = width
        self.criterion = criterion
        self.tol = tol
        self.n_jobs = n_jobs
        self.n_blocks = n_blocks
        self.block_subsets = block_subsets
        self.client = client


class DaskExhaustive(_DaskCall, _skl.Exhaustive):
    """``Exhaustive`` on Dask (``fastfs.dask.exhaustive``): blocks of candidate subsets as
    tasks."""

    _own_params = ("client",)
    _function = staticmethod(_fd.exhaustive)

    def __init__(self, n_features_to_select="best", *, criterion="loo_knn_accuracy",
                 max_subsets=1000000, tol=None, n_jobs=None, block_subsets=None, client=None):
        self.n_features_to_select = n_features_to_select
        self.criterion = criterion
        self.max_subsets = max_subsets
        self.tol = tol
        self.n_jobs = n_jobs
        self.block_subsets = block_subsets
        self.client = client


__all__ = ["DaskBeamSearch", "DaskExhaustive", "DaskFilterSelector", "DaskGFlip",
           "DaskMultiSURF", "DaskMultiSURFstar", "DaskRGS", "DaskRelief", "DaskReliefF",
           "DaskSBS", "DaskSFBS", "DaskSFFS", "DaskSFS", "DaskSURF", "DaskSURFstar",
           "DaskSimba"]
