"""fastfs: fast feature selection with a C++/OpenMP core.

Public API: ``margins``, ``margin_score``, ``gflip``, ``simba``, ``relief``, ``relieff``
(margin-based selection and weighting, SPEC 2),
``config`` (memory guard), ``has_openmp``, result types, and ``datasets`` with the seeds'
synthetic problems.
"""

from __future__ import annotations

from . import _core, datasets
from ._config import config
from ._results import GFlipResult, StepState, SubsetResult, WeightResult
from .margin import gflip, margin_score, margins
from .relief import relief, relieff, simba

__version__: str = _core.__version__


def has_openmp() -> bool:
    """True when the compiled core was built with OpenMP (n_jobs > 1 can use several cores)."""
    return bool(_core.has_openmp())


__all__ = [
    "GFlipResult",
    "StepState",
    "SubsetResult",
    "WeightResult",
    "__version__",
    "config",
    "datasets",
    "gflip",
    "has_openmp",
    "margin_score",
    "margins",
    "relief",
    "relieff",
    "simba",
]
