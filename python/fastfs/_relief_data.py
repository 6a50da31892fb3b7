"""How the Relief family reads X and y, as skrebate 0.8 does: which features are discrete, whether
X has missing values, and whether y holds class labels or a continuous target. Data with only
continuous features, no missing value and class labels keep the fast path; everything else goes
to the general kernel (its definitions are in :func:`fastfs.relieff`'s docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import warnings

import numpy as np

import fastfs._core as _core
from ._validation import (
    CheckedLabels,
    CheckedX,
    _check_y_shape,
    _is_sparse,
    check_int,
    check_option,
    check_X,
    check_y_classes,
    object_numbers,
    require_loo_neighbours,
    user_stacklevel,
)
from ._scale import (
    SCREEN_EXPONENT,
    column_exponents,
    exact_rescale,
    exact_rescale_columns,
    times_power_of_two,
)

TARGETS = ("auto", "classes", "continuous")
_Y_THRESHOLD = 10  # skrebate's multiclass_threshold, used when discrete_threshold is None
_LABEL_REPEATS = 5  # samples a value, on average, from which whole numbers look like labels


@dataclass(frozen=True)
class ReliefData:
    cx: CheckedX
    values: np.ndarray  # what the core reads
    fast: bool  # continuous features, no missing value, class labels
    discrete: list  # one 0/1 flag per feature (general kernel)
    codes: Any  # class codes, or [] for a continuous target
    y: Any  # continuous target, or []
    radius: float  # continuous target: hit iff |y_a - y_b| < radius
    sparse: "SparseRows | None" = None  # sparse X: its CSR arrays (values is then the matrix)


@dataclass(frozen=True)
class SparseRows:
    """A sparse X as the core's sparse Relief passes read it: canonical CSR arrays (int64
    indptr and indices, float64 data without stored zeros), the data rescaled exactly by
    2**-e (fastfs._scale)."""

    shape: tuple
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    e: int

    def args(self) -> tuple:
        return (self.shape[0], self.shape[1], self.indptr, self.indices, self.data)


def sparse_rows(X: Any, *, missing: str = "error") -> tuple[CheckedX, SparseRows]:
    """A SciPy sparse X (any format) as CSR arrays, never densified: O(nnz) copies.

    ``missing="relief_family"``: NaN (a missing value in dense X) is refused with a message
    saying to pass a dense X, and infinity with the dense X's message; otherwise NaN and
    infinity get the usual error. The Relief family's scores read each column only through
    (x - min) / range, so for it every column is rescaled by its own power of two (``e`` is
    then 0): one factor for the whole X would leave a column of 1e-310 subnormal, whose
    1 / range overflows, or flush it to zero beside a column of 1e300."""
    caller = X
    if getattr(X, "format", None) not in ("csr", "csc", "coo"):
        X = X.tocsr()  # once, for the scan below and for check_X
    if missing == "relief_family":
        data = X.data
        if data.dtype.kind in "fc":
            if np.isinf(data).any():
                raise ValueError("X: contains infinity (missing values are NaN)")
            if np.isnan(data).any():
                raise ValueError("X: a sparse X with missing values (NaN) is not supported; "
                                 "pass X.toarray() to read the NaN as missing values")
    cx = check_X(X, accept_sparse=True)
    A = cx.values.tocsr()
    # a copy only where A still shares the caller's values (the caller's matrix is never
    # touched); conversions above already made a fresh one
    shared = np.may_share_memory(A.data, getattr(caller, "data", np.empty(0)))
    data = A.data.astype(np.float64, copy=shared)
    indices = np.asarray(A.indices, dtype=np.int64)
    indptr = np.asarray(A.indptr, dtype=np.int64)
    stored_zero = data == 0
    if stored_zero.any():  # drop stored zeros: the pattern is then the non-zeros
        row_of = np.repeat(np.arange(A.shape[0]), np.diff(indptr))
        keep = ~stored_zero
        per_row = np.bincount(row_of[keep], minlength=A.shape[0])
        data, indices = data[keep], indices[keep]
        indptr = np.concatenate(([0], np.cumsum(per_row))).astype(np.int64)
    if missing == "relief_family":
        e = 0
        if data.size:
            top = np.zeros(A.shape[1])
            np.maximum.at(top, indices, np.abs(data))
            col_e = column_exponents(top, np.float64, SCREEN_EXPONENT)
            if col_e.any():
                data = times_power_of_two(data, -col_e[indices])
    else:
        data, e = exact_rescale(data, SCREEN_EXPONENT)
    return cx, SparseRows(A.shape, np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
                          np.ascontiguousarray(data), e)


def _sparse_distinct(rows: SparseRows) -> np.ndarray:
    """Distinct values of every column of a sparse X, its implicit zeros included."""
    m, n = rows.shape
    order = np.lexsort((rows.data, rows.indices))
    c, v = rows.indices[order], rows.data[order]
    new = np.ones(c.shape[0], dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (v[1:] != v[:-1])
    counts = np.bincount(c[new], minlength=n)
    return counts + (np.bincount(rows.indices, minlength=n) < m)


def _discrete_flags(values: Any, discrete_threshold: Any,
                    discrete_features: Any, sparse: SparseRows | None = None) -> np.ndarray:
    n = values.shape[1]
    if discrete_features is not None:
        arr = np.asarray(discrete_features)
        if arr.ndim != 1:
            raise ValueError("discrete_features: expected a 1-D list of feature indices or a "
                             f"boolean mask, got shape {arr.shape}")
        if arr.dtype == bool:
            if arr.shape[0] != n:
                raise ValueError(f"discrete_features: a boolean mask needs one entry per "
                                 f"feature ({n}), got {arr.shape[0]}")
            return arr.copy()
        if arr.size and arr.dtype.kind not in "iu":
            raise TypeError("discrete_features: expected integer feature indices or a boolean "
                            f"mask, got dtype {arr.dtype}")
        # negative indices count from the end, as for every feature-index argument; the
        # range is checked in Python integers (a uint64 index would wrap in int64)
        if arr.size and (int(arr.min()) < -n or int(arr.max()) >= n):
            raise ValueError(f"discrete_features: feature index out of range for {n} features")
        idx = arr.astype(np.int64)
        flags = np.zeros(n, dtype=bool)
        flags[idx] = True
        return flags
    if discrete_threshold is None:
        return np.zeros(n, dtype=bool)
    thr = check_int(discrete_threshold, "discrete_threshold", minimum=0)
    if sparse is not None:
        return _sparse_distinct(sparse) <= thr
    # counting stops above min(thr, n_samples): a column cannot have more than n_samples values
    counts = np.asarray(_core.distinct_upto(values, min(thr, values.shape[0])))
    return counts <= thr


def continuous_target(y: Any, m: int, target: str, discrete_threshold: Any) -> bool:
    """Does the Relief family read y (m values) as a continuous target?"""
    arr = object_numbers(_check_y_shape(y, m, "y", "labels or numbers"))
    if target != "auto":
        return target == "continuous"
    if arr.dtype.kind not in "iuf":
        return False
    limit = _Y_THRESHOLD if discrete_threshold is None else int(discrete_threshold)
    finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
    distinct = np.unique(finite)
    if distinct.shape[0] <= limit:
        return False
    if (_LABEL_REPEATS * distinct.shape[0] <= m
            and np.array_equal(distinct, np.round(distinct))):
        # whole numbers, each repeated (five samples a value or more on average): likely
        # class labels (20 image classes, 40 faces) that skrebate's rule reads as a
        # continuous target; a whole-number regression target (diabetes' 214 values in 442
        # samples) repeats far less
        warnings.warn(
            f"y: {distinct.shape[0]} distinct whole-number values are read as a continuous "
            f"target (skrebate's rule: more than {limit} distinct values); if they are class "
            "labels pass target='classes' (target='continuous' keeps this reading without "
            "the warning)", UserWarning, stacklevel=user_stacklevel())
    return True


def prepare_relief(X: Any, y: Any, *, discrete_threshold: Any = 10,
                   discrete_features: Any = None, target: str = "auto",
                   accept_sparse: bool = False) -> ReliefData:
    """How the Relief family reads X and y. With ``accept_sparse``, a SciPy sparse X stays
    sparse (``sparse`` holds its CSR arrays; NaN in it is refused)."""
    check_option(target, "target", TARGETS)
    rows = None
    if accept_sparse and _is_sparse(X):
        cx, rows = sparse_rows(X, missing="relief_family")
        values, missing = cx.values, False
    else:
        cx = check_X(X, check_finite=False)
        values = cx.values
        missing = False
        if not np.isfinite(values).all():
            if np.isinf(values).any():
                raise ValueError("X: contains infinity (missing values are NaN)")
            if np.isnan(values).all():
                raise ValueError("X: every value is missing (NaN); no two samples can be "
                                 "compared")
            missing = True
    flags = _discrete_flags(values, discrete_threshold, discrete_features, rows)
    m = values.shape[0]
    arr = _check_y_shape(y, m, "y", "labels or numbers")
    continuous = continuous_target(arr, m, target, discrete_threshold)
    if continuous:
        arr = object_numbers(arr)
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"y: a continuous target must be numeric, got dtype {arr.dtype}")
        yv = arr.astype(np.float64)
        if not np.isfinite(yv).all():
            raise ValueError("y: contains NaN or infinity")
        sd = float(np.std(yv, ddof=1))
        if not sd > 0:
            raise ValueError("y: a continuous target needs at least two distinct values (it "
                             "is constant)")
        return ReliefData(cx, _general_values(values, flags, rows), False,
                          flags.astype(np.uint8).tolist(), [], yv.tolist(), sd, rows)
    labels: CheckedLabels = check_y_classes(arr, m)
    require_loo_neighbours(labels)
    if not missing and not flags.any():
        return _continuous_classes(cx, values, labels.codes, rows)
    dense = _general_values(values, flags, rows)
    return ReliefData(cx, dense, False, flags.astype(np.uint8).tolist(),
                      labels.codes.tolist(), [], 0.0, rows)


def _general_values(values: np.ndarray, flags: np.ndarray, rows: Any) -> np.ndarray:
    """The values the general kernel reads: sparse X's as they are, dense X's rescaled
    (made only on the paths that read them)."""
    return values if rows is not None else _rescaled_continuous(values, flags)


def _rescaled_continuous(values: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """X as float64 for the general kernel, each continuous column whose max |x| is outside
    the safe range multiplied by its own power of two (exact; missing values stay NaN): the
    kernel reads such a column only through (x - min) / range, and 1 / range overflows for a
    column of 1e-310. Discrete columns are left as they are (their values are categories)."""
    dense = np.ascontiguousarray(values, dtype=np.float64)
    if dense.size == 0:
        return dense
    top = np.fmax(np.fmax.reduce(dense, axis=0), -np.fmin.reduce(dense, axis=0))
    top = np.where(np.isnan(top) | flags, 0.0, top)  # all missing, or discrete: untouched
    return exact_rescale_columns(dense, SCREEN_EXPONENT, top=top)[0]


def _continuous_classes(cx: CheckedX, values: Any, codes: np.ndarray,
                        rows: SparseRows | None) -> ReliefData:
    """The fast path's data: continuous features, no missing value, class codes."""
    # Each column by its own power of two (exact; the scores read only (x - min) / range of
    # each column): one rescaling of the whole X would flush a column of 1e-200 to zero
    # beside one of 1e200, and silently score it 0.
    scaled = values if rows is not None else exact_rescale_columns(values, SCREEN_EXPONENT)[0]
    return ReliefData(cx, scaled, True, [], codes, [], 0.0, rows)


def as_continuous(data: ReliefData) -> ReliefData:
    """Class-labelled data without missing values read again with every feature
    continuous (``discrete_threshold=None``), without a second pass over X."""
    if data.fast:
        return data
    return _continuous_classes(data.cx, data.cx.values,
                               np.asarray(data.codes, dtype=np.int64), data.sparse)
