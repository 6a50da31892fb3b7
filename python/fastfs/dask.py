"""fastfs on a Dask cluster: the same computations, the same answers, data larger than one machine.

Needs the optional extra ``fastfs[dask]`` (``dask[array]`` and ``distributed``); ``import fastfs``
never imports Dask, only ``import fastfs.dask`` does.

Every function takes the arguments of the function of the same name in :mod:`fastfs` plus
``client``: a ``dask.distributed.Client`` to run on (default: Dask's current scheduler, which is
the most recent client when one exists, else Dask's local threads), except ``callback`` and
``verbose`` (tasks on workers report to no one), ``distance_weights`` of the Relief family and
``sample_order`` of ``simba`` and ``rgs`` (call the one-machine functions for those). A Dask
array of SciPy sparse chunks is not read: compute it into one SciPy matrix and call the
one-machine function, which takes sparse X. The answers equal those of
the single-machine functions to about 1e-12 relative (the sums are merged in a different,
but fixed, order) and the selections are identical:

* **Filters** (``anova_f``, ``f_score``, ``t_test``, ``z_test``, ``s2n``, ``fisher_ratio``,
  ``pearson``, ``chi2`` with ``kind="counts"``) read a Dask array chunked by rows and by
  features, never whole. Every chunk is summarised by the same C++ kernel as one machine uses
  (per class: count, mean, sum of squared deviations; or per column: mean, sum of squares and
  cross product with y), and the summaries of the row chunks of a column block are merged in
  row order with the pairwise update of Chan, Golub and LeVeque (1979). y is small (one value a
  sample) and is read whole. The statistics that need every value of a feature (``auc``,
  ``mutual_info``, ``chi2`` with ``kind="contingency"``) rechunk X into blocks of whole
  columns and score each block with the kernel of one machine.
* **Relief-family scores and margins** (``relief``, ``relieff``, ``surf``, ``surfstar``,
  ``multisurf``, ``multisurfstar``, ``margins``, ``margin_score``) need every sample as a possible neighbour, so X is sent once to every
  worker; the query samples are split into blocks, each worker scores its blocks with the C++
  pass restricted to them (unnormalised sums), and the block sums are added in block order.
  When X itself is too big for one worker (``mode="tiled"``, or ``mode="auto"`` with X above
  a quarter of the smallest worker memory limit), all eight split X into row tiles (``tile_rows``,
  or a Dask array's row chunks) and run one task a (query tile, reference tile) pair: every
  pair's distance is computed with the float64 expression of one machine and the neighbours
  (nearest hit and miss; the k nearest of every class; MultiSURF's per-sample mean and
  deviation, carried in sample order, then its near and far sets; SURF's one threshold from
  tasks over blocks of whole columns, each column's pair sum added in column order) are
  merged across the
  reference tiles in tile order with its tie rule, so they are those of one machine; the
  contributions are added per tile and the tile sums in tile order. The tiled mode reads
  continuous features with class labels and no missing value (a ``ValueError`` otherwise:
  use ``mode="broadcast"``).
* **Restarts and candidate subsets** (``simba``, ``rgs``, ``gflip``, ``exhaustive``) run
  independent restarts, or blocks of candidate subsets, as tasks; their results are compared
  in a fixed order with the ties broken as on one machine.
* **A distance state larger than one worker** (``gflip`` with ``split_state=True``; ``sfs``,
  ``sbs``, ``sffs``, ``sfbs`` with the criterion ``"margin"`` or ``"loo_knn_accuracy"``): the
  m x m float64 distance state is split by row blocks across the workers and held there, in
  Dask actors, between steps. The search runs on the client step by step as on one machine;
  a candidate's score gathers one term a sample from the blocks (each sample's nearest hit
  and miss, or its k nearest, lie along its own row) and adds them in sample order, and the
  blocks compute every distance with the expressions of one machine: the same bits, the same
  selections. A lost worker's blocks are rebuilt on the others (the last rebuild of the state
  and the updates since, replayed in order) and the step runs again.

The scikit-learn selectors of these functions (``DaskFilterSelector``, ``DaskRelief``,
``DaskReliefF``, ``DaskSURF``, ``DaskSURFstar``, ``DaskMultiSURF``, ``DaskMultiSURFstar``,
``DaskSimba``, ``DaskGFlip``, ``DaskRGS``, ``DaskSFS``, ``DaskSBS``, ``DaskSFFS``,
``DaskSFBS``, ``DaskBeamSearch``, ``DaskExhaustive``) take a ``client=`` parameter and Dask
arrays, and otherwise behave as the selectors of ``fastfs.sklearn``.

A worker lost during a run is handled by Dask: its tasks run again on another worker (their
inputs are kept by the scheduler, and every task is a pure function of them, so the result
is the same). A task that keeps killing workers ends in ``distributed``'s ``KilledWorker``
error, never in a partial result. Bad input (NaN in a chunk, a constant y, one class) raises the
same ``ValueError`` as on one machine.
"""

from __future__ import annotations

from typing import Any

from ._dask_core import (
    anova_f,
    auc,
    beam,
    chi2,
    exhaustive,
    f_score,
    fisher_ratio,
    gflip,
    margin_score,
    margins,
    multisurf,
    multisurfstar,
    mutual_info,
    pearson,
    relief,
    relieff,
    rgs,
    s2n,
    sbs,
    sfbs,
    sffs,
    sfs,
    simba,
    surf,
    surfstar,
    t_test,
    z_test,
)

_ESTIMATORS = ("DaskBeamSearch", "DaskExhaustive", "DaskFilterSelector", "DaskGFlip",
               "DaskMultiSURF", "DaskMultiSURFstar", "DaskRGS", "DaskRelief", "DaskReliefF",
               "DaskSBS", "DaskSFBS", "DaskSFFS", "DaskSFS", "DaskSURF", "DaskSURFstar",
               "DaskSimba")


def __getattr__(name: str) -> Any:
    # The selectors build on fastfs.sklearn (scikit-learn): imported on first use.
    if name in _ESTIMATORS:
        from . import _dask_sklearn

        return getattr(_dask_sklearn, name)
    raise AttributeError(f"module 'fastfs.dask' has no attribute {name!r}")


__all__ = [
    "DaskBeamSearch",
    "DaskExhaustive",
    "DaskFilterSelector",
    "DaskGFlip",
    "DaskMultiSURF",
    "DaskMultiSURFstar",
    "DaskRGS",
    "DaskRelief",
    "DaskReliefF",
    "DaskSBS",
    "DaskSFBS",
    "DaskSFFS",
    "DaskSFS",
    "DaskSURF",
    "DaskSURFstar",
    "DaskSimba",
    "anova_f",
    "auc",
    "beam",
    "chi2",
    "exhaustive",
    "f_score",
    "fisher_ratio",
    "gflip",
    "margin_score",
    "margins",
    "multisurf",
    "multisurfstar",
    "mutual_info",
    "pearson",
    "relief",
    "relieff",
    "rgs",
    "s2n",
    "sbs",
    "sfbs",
    "sffs",
    "sfs",
    "simba",
    "surf",
    "surfstar",
    "t_test",
    "z_test",
]
