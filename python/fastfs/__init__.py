"""fastfs: fast feature selection with a C++/OpenMP core.

Public API: ``margins``, ``margin_score``, ``gflip``, ``simba``, ``relief``, ``relieff``
(margin-based selection and weighting, SPEC 2), the ``filters`` (univariate scores and tests,
SPEC 6) and ``separability`` (scatter matrices, J1/J2/J3, divergence, Bhattacharyya, SPEC
5.3-5.4) modules, ``omp``, ``backward_least_squares``, ``lasso_path``, ``lasso`` (linear
selection, SPEC 4; the feature transforms of SPEC 4.3 are scikit-learn transformers in
``fastfs.transforms``), ``config`` (memory guard), ``has_openmp``, ``show_config`` (build and
runtime configuration), result types, and ``datasets`` with the seeds' synthetic problems.
"""

from __future__ import annotations

from . import _core, datasets, filters, separability
from ._config import config
from ._results import (
    FilterResult,
    GFlipResult,
    LassoPath,
    LinearResult,
    ScatterMatrices,
    StepState,
    SubsetResult,
    WeightResult,
)
from ._show_config import show_config
from .linear import backward_least_squares, lasso, lasso_path, omp
from .margin import gflip, margin_score, margins
from .relief import relief, relieff, simba

__version__: str = _core.__version__


def has_openmp() -> bool:
    """True when the compiled core was built with OpenMP (n_jobs > 1 can use several cores)."""
    return bool(_core.has_openmp())


__all__ = [
    "FilterResult",
    "GFlipResult",
    "LassoPath",
    "LinearResult",
    "ScatterMatrices",
    "StepState",
    "SubsetResult",
    "WeightResult",
    "__version__",
    "backward_least_squares",
    "config",
    "datasets",
    "filters",
    "gflip",
    "has_openmp",
    "lasso",
    "lasso_path",
    "margin_score",
    "margins",
    "omp",
    "relief",
    "relieff",
    "simba",
    "separability",
    "show_config",
]
