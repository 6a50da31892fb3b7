"""fastfs: fast feature selection with a C++/OpenMP core.

Public API: ``margins``, ``margin_score``, ``gflip``, ``simba``, ``relief``, ``relieff``
(margin-based selection and weighting, Navot's thesis, ch. 3), ``surf``, ``surfstar``,
``multisurf``, ``multisurfstar`` (the radius members of the Relief family, as skrebate scores
them), ``stir`` (p-values of ReliefF and MultiSURF scores, with ``benjamini_hochberg``), ``knn_regression_score``,
``rgs``, ``sks`` (regression weighting, ch. 4), ``omp``, ``backward_least_squares``,
``lasso_path``, ``lasso`` (linear selection after Shalev-Shwartz and Ben-David, ch. 25; the
feature transforms of its section 25.2 are scikit-learn transformers in ``fastfs.transforms``,
the dictionary learning of its section 25.3 in ``fastfs.dictionary``),
``ordered_fs``, ``standard_wrap``, ``ordered_fs2``, ``rfe`` and ``greedy_logistic``
(choosing features and their number with the linear learners of ``learners``: Ng, "On feature
selection"), ``rank_features`` (each feature alone) and the subset searches ``sfs``, ``sbs``, ``sffs``,
``sfbs``, ``plus_l_minus_r``, ``bidirectional``, ``beam``, ``exhaustive``,
``branch_and_bound``, ``best_first`` and ``simulated_annealing`` over the ``criteria`` module,
the thresholds on weights ``relief_tau``, ``largest_gap`` and ``cv_top_features``
(``thresholds``), the ``filters`` (univariate scores and tests) and ``separability``
(scatter matrices, J1/J2/J3, divergence, Bhattacharyya: Theodoridis and Koutroumbas, ch. 5)
modules, the meta-feature tools ``quality_map``, ``transfer_quality`` and ``mufasa`` (ch. 5;
the ``meta`` module) and the generated image features of its section 5.3.2 (``generated``),
``theory`` (how many features for two Gaussians, Navot's ch. 2, and generalisation bounds as
calculators), ``config``
(memory guard), ``has_openmp``, ``show_config`` (build and runtime
configuration), result types, and ``datasets`` with the seeds' synthetic problems.
"""

from __future__ import annotations

import os as _os


def _load_core():
    """Import the compiled core with the OpenMP runtime set to sleep rather than spin.

    While they wait at the end of a parallel loop, OpenMP threads by default spin for a while
    (libgomp: 300000 iterations). When another process keeps a core busy, those spinning
    threads take CPU time from the one thread sharing that core, and the default n_jobs runs
    several times slower than n_jobs=1. The runtime reads its wait policy once, when it is
    loaded, so OMP_WAIT_POLICY=PASSIVE is set for the load of the core only and then removed
    again (other libraries and child processes see the environment unchanged). A wait policy
    the user chose (OMP_WAIT_POLICY, GOMP_SPINCOUNT or KMP_BLOCKTIME) is left alone.
    """
    chosen = any(v in _os.environ for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                                            "KMP_BLOCKTIME"))
    if not chosen:
        _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        from . import _core as core
    finally:
        if not chosen:
            _os.environ.pop("OMP_WAIT_POLICY", None)
    return core


_core = _load_core()

from . import (  # noqa: E402
    criteria,
    datasets,
    filters,
    generated,
    learners,
    meta,
    separability,
    theory,
    thresholds,
)
from ._config import config
from ._results import (
    EqualScoresWarning,
    FilterResult,
    GFlipResult,
    GreedyLogisticResult,
    LassoPath,
    LinearModelFit,
    LinearResult,
    OneSampleResult,
    RGSResult,
    RankingResult,
    RFEResult,
    ScatterMatrices,
    SearchResult,
    StepState,
    StirResult,
    SubsetResult,
    ThresholdResult,
    WeightResult,
    WrapperResult,
)
from ._show_config import show_config
from .linear import backward_least_squares, lasso, lasso_path, omp
from .margin import gflip, margin_score, margins
from .meta import MufasaResult, QualityMap, TransferResult, mufasa, quality_map, transfer_quality
from .regression import knn_regression_score, rgs, sks
from .relief import multisurf, multisurfstar, relief, relieff, simba, surf, surfstar
from .relief_wrappers import iterative_relief, turf, vls
from .stir import benjamini_hochberg, stir
from .thresholds import cv_top_features, largest_gap, relief_tau
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

__version__: str = _core.__version__


_LAZY_MODULES = ("dask", "dictionary", "plot", "sklearn", "transforms")


def __getattr__(name: str):
    # The scikit-learn estimators and the plots need scikit-learn / matplotlib: imported on
    # first use only, so that ``import fastfs`` stays fast and works without them.
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fastfs' has no attribute {name!r}")


def has_openmp() -> bool:
    """True when the compiled core was built with OpenMP (n_jobs > 1 can use several cores)."""
    return bool(_core.has_openmp())


__all__ = [
    "EqualScoresWarning",
    "FilterResult",
    "GFlipResult",
    "GreedyLogisticResult",
    "LassoPath",
    "LinearModelFit",
    "LinearResult",
    "MufasaResult",
    "OneSampleResult",
    "QualityMap",
    "RGSResult",
    "RFEResult",
    "RankingResult",
    "ScatterMatrices",
    "SearchResult",
    "StepState",
    "SubsetResult",
    "ThresholdResult",
    "TransferResult",
    "StirResult",
    "WeightResult",
    "WrapperResult",
    "__version__",
    "backward_least_squares",
    "beam",
    "benjamini_hochberg",
    "best_first",
    "bidirectional",
    "branch_and_bound",
    "config",
    "criteria",
    "cv_top_features",
    "datasets",
    "exhaustive",
    "filters",
    "generated",
    "gflip",
    "greedy_logistic",
    "has_openmp",
    "iterative_relief",
    "knn_regression_score",
    "lasso",
    "lasso_path",
    "largest_gap",
    "learners",
    "margin_score",
    "margins",
    "meta",
    "mufasa",
    "multisurf",
    "multisurfstar",
    "omp",
    "ordered_fs",
    "ordered_fs2",
    "plus_l_minus_r",
    "quality_map",
    "rank_features",
    "relief",
    "relief_tau",
    "relieff",
    "rfe",
    "rgs",
    "sbs",
    "separability",
    "sfbs",
    "sffs",
    "sfs",
    "show_config",
    "simba",
    "simulated_annealing",
    "sks",
    "standard_wrap",
    "stir",
    "surf",
    "surfstar",
    "theory",
    "thresholds",
    "transfer_quality",
    "turf",
    "vls",
]
