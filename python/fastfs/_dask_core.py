"""The functions of :mod:`fastfs.dask` (see there); the selectors live in ``_dask_sklearn``."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Callable

import dask
import dask.array as da
import numpy as np

import fastfs._core as _core

from . import filters as _filters
from ._dask_tasks import (
    _aligned,
    _block,
    _client_or_none,
    _compute,
    _run_blocks,
    _score_subsets,
    _shared,
)
from . import _dask_tiles as _tiles
from ._results import FilterResult, caller_checks_equal_scores, warn_if_equal
from ._validation import (
    check_option,
    _is_sparse,
    check_y_classes,
    frame_feature_names,
    frame_needs_float64,
    require_class_sizes,
    require_finite,
    require_real_dtype,
    resolve_n_jobs,
)

# --------------------------------------------------------------------------------------------
# equal scores


def _warns_if_equal(noun: str, cause: str) -> Callable:
    """The public function's result is checked once, here on the client, as its one-machine
    twin checks it (``EqualScoresWarning``); tasks that run a one-machine function keep quiet
    (``_quiet``), since a worker's warning would not reach the caller."""
    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            warn_if_equal(out.weights if noun == "weight" else out.scores,
                          fn.__name__, noun, cause)
            return out
        return checked
    return wrap


def _named(fn: Callable) -> Callable:
    """A filter whose result carries a DataFrame's column names, as one machine's does (the
    Dask array it is turned into has none). A SciPy sparse X, which is in memory already, is
    scored by the one-machine filter, which reads it without densifying."""
    @functools.wraps(fn)
    def named(X: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_sparse(X):
            _client_or_none(kwargs.pop("client", None))   # a wrong client is still named
            return _quiet(getattr(_filters, fn.__name__), X, *args, **kwargs)
        out = fn(X, *args, **kwargs)
        names = frame_feature_names(X)
        return out if names is None else FilterResult(out.scores, out.pvalues, names)
    return named


def _quiet(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    with caller_checks_equal_scores():
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# running a graph


def _refuse_sparse(X: Any, name: str = "X") -> None:
    """A SciPy sparse matrix, or a Dask array of sparse chunks, is not read here: say what to
    call instead (densifying a bag of words could take gigabytes)."""
    if _is_sparse(X):
        raise TypeError(f"{name}: a SciPy sparse matrix; fastfs.dask reads dense arrays here. "
                        "Call the one-machine function of fastfs instead (the filters and the "
                        "Relief family read sparse X without densifying it)")
    if isinstance(X, da.Array) and _is_sparse(getattr(X, "_meta", None)):
        raise TypeError(f"{name}: a Dask array of SciPy sparse chunks, which fastfs.dask does "
                        "not read; compute it into one SciPy matrix (X.compute()) and call "
                        "the one-machine function of fastfs, which reads sparse X")


def _as_array(X: Any, name: str = "X", min_samples: int = 2) -> da.Array:
    """X as a 2-D Dask array of float32 (kept) or float64, with known chunk sizes."""
    _refuse_sparse(X, name)
    if hasattr(X, "to_dask_array") and not isinstance(X, da.Array):
        if hasattr(X, "dtypes") and frame_needs_float64(X, name):
            X = X.astype(np.float64)   # nullable numbers (NA as NaN) and bools beside them
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        arr = np.asarray(X)
        require_real_dtype(arr.dtype, name)
        X = da.from_array(arr, chunks="auto")
    require_real_dtype(X.dtype, name)
    if X.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-D array of shape (n_samples, n_features), got {X.ndim}-D")
    if any(np.isnan(c) for cs in X.chunks for c in cs):
        raise ValueError(f"{name}: the chunk sizes are unknown; call X.compute_chunk_sizes() "
                         "first")
    n, d = X.shape
    if n < min_samples:
        raise ValueError(f"{name}: need at least {min_samples} samples, got {n}")
    if d == 0:
        raise ValueError(f"{name}: has zero features")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X


def _small(v: Any, client: Any) -> np.ndarray:
    """A vector (y, weights) as a NumPy array: computed when it is a Dask collection."""
    if isinstance(v, da.Array) or hasattr(v, "dask"):
        return np.asarray(_compute([v], client)[0])
    return v


def _labels(y: Any, n: int, what: str, client: Any, *, n_classes: int | None = None,
            min_size: int = 1):
    labels = check_y_classes(_small(y, client), n)
    require_class_sizes(labels, what, n_classes=n_classes, min_size=min_size)
    return labels


def _row_splits(X: da.Array) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)


# --------------------------------------------------------------------------------------------
# filters: per-chunk sufficient statistics, merged in row order


def _chunk_class_moments(block: np.ndarray, codes: np.ndarray, k: int, n_jobs: Any) -> tuple:
    """One chunk's per-class (count, mean - reference, M2) by the C++ kernel of one machine,
    with reference = the chunk's first row, and the column minima and maxima (None for a chunk
    without rows)."""
    if block.shape[0] == 0:
        return None
    b = _block(block)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    present = np.flatnonzero(counts)
    out = _core.class_moments(b, np.ascontiguousarray(np.searchsorted(present, codes),
                                                      dtype=np.int64),
                              present.size, resolve_n_jobs(n_jobs))
    if not (np.isfinite(out.mean).all() and np.isfinite(out.m2).all()):
        require_finite(b)
    centred = np.zeros((k, b.shape[1]))
    m2 = np.zeros((k, b.shape[1]))
    centred[present], m2[present] = out.centred, out.m2
    return (b[0].astype(np.float64), counts, centred, m2, b.min(axis=0).astype(np.float64),
            b.max(axis=0).astype(np.float64))


def _merge_class_moments(parts: list) -> tuple:
    """Fold the chunk summaries of one column block in row order (Chan, Golub and LeVeque)."""
    parts = [p for p in parts if p is not None]
    ref, counts, centred, m2, lo, hi = (np.array(a, copy=True) for a in parts[0])
    with np.errstate(over="ignore", invalid="ignore"):
        # (an overflow leaves inf for the caller, which rescales such columns)
        return _fold_class_moments(ref, counts, centred, m2, lo, hi, parts[1:])


def _fold_class_moments(ref, counts, centred, m2, lo, hi, rest):
    for r_b, n_b, c_b, m2_b, lo_b, hi_b in rest:
        # The chunk's means relative to the first chunk's reference row (a difference of two
        # data values, exact when they are close).
        c_b = (r_b - ref)[None, :] + c_b
        n = counts + n_b
        fa = np.where(n > 0, n_b / np.maximum(n, 1), 0.0)[:, None]
        fab = np.where(n > 0, counts * n_b / np.maximum(n, 1), 0.0)[:, None]
        delta = np.where(n_b[:, None] > 0, c_b - centred, 0.0)
        centred = np.where(counts[:, None] > 0, centred + delta * fa, c_b)
        m2 = m2 + m2_b + delta * delta * fab
        counts = n
        lo, hi = np.minimum(lo, lo_b), np.maximum(hi, hi_b)
    return ref, counts, centred, m2, lo, hi


def _ldexp_columns(block: np.ndarray, e: np.ndarray, block_info: Any = None) -> np.ndarray:
    c0, c1 = block_info[0]["array-location"][1]
    return np.ldexp(block, -e[c0:c1].astype(np.int32)[None, :])


def _class_moment_pass(X: da.Array, codes: np.ndarray, k: int, n_jobs: Any, client: Any):
    splits = _row_splits(X)
    blocks = X.to_delayed()
    parts_codes = [dask.delayed(codes[splits[i]:splits[i + 1]], pure=True)
                   for i in range(blocks.shape[0])]
    chunk = dask.delayed(_chunk_class_moments, pure=True)
    merge = dask.delayed(_merge_class_moments, pure=True)
    merged = [merge([chunk(blocks[i, j], parts_codes[i], k, n_jobs)
                     for i in range(blocks.shape[0])]) for j in range(blocks.shape[1])]
    res = _compute(merged, client)
    # The class counts are those of any column block; the rest is per column.
    return tuple(res[0][t] if t == 1 else np.concatenate([r[t] for r in res], axis=-1)
                 for t in range(6))


def _class_moments(X: da.Array, labels: Any, n_jobs: Any, client: Any):
    """The merged per-class moments of X as fastfs.filters computes them on one machine,
    columns of extreme magnitude summed again after an exact power-of-two rescaling."""
    k = labels.classes.shape[0]
    ref, counts, centred, m2, lo, hi = _class_moment_pass(X, labels.codes, k, n_jobs, client)
    scale = np.zeros(X.shape[1], dtype=np.int64)
    mean = ref[None, :] + centred
    cols = np.flatnonzero(_filters._extreme_columns(ref + centred, m2))
    if cols.size:
        e = np.frexp(np.maximum(hi[cols], -lo[cols]))[1].astype(np.int64)
        sub = X[:, cols].map_blocks(_ldexp_columns, e, dtype=X.dtype)
        r = _class_moment_pass(sub, labels.codes, k, n_jobs, client)
        if not (np.isfinite(r[2]).all() and np.isfinite(r[3]).all()):
            raise ValueError("X: values too large: their squares overflow float64; rescale "
                             "the features")
        centred, m2 = centred.copy(), m2.copy()
        centred[:, cols], m2[:, cols], scale[cols] = r[2], r[3], e
        mean[:, cols] = r[0][None, :] + r[2]
    if not (np.isfinite(centred).all() and np.isfinite(m2).all()):
        raise ValueError("X: values too large: their squares overflow float64; rescale the "
                         "features")
    constant = (m2 == 0).all(axis=0) & (centred == centred[0]).all(axis=0)
    return _filters._Moments(counts, mean, m2, constant, centred, scale), lo


@_warns_if_equal("score", "classes")
@_named
def anova_f(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.anova_f` on a Dask array (see the module's description)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "anova_f", client)
    n, k = X.shape[0], labels.classes.shape[0]
    if n <= k:
        raise ValueError(f"y: anova_f needs more samples than classes; got {n} samples in "
                         f"{k} classes")
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(*_filters._anova_f_scores(m, n, k), None)


@_warns_if_equal("score", "classes")
@_named
def f_score(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.f_score` on a Dask array (see the module's description)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "f_score", client, n_classes=2, min_size=2)
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(_filters._f_score_scores(m), None, None)


@_warns_if_equal("score", "classes")
@_named
def t_test(X: Any, y: Any, *, equal_var: bool = True, n_jobs: int | None = None,
           client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.t_test` on a Dask array (see the module's description)."""
    if not isinstance(equal_var, (bool, np.bool_)):
        raise TypeError(f"equal_var: expected a bool, got {type(equal_var).__name__}")
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "t_test" if equal_var else "t_test with equal_var=False",
                     client, n_classes=2, min_size=1 if equal_var else 2)
    n = X.shape[0]
    if n < 3:
        raise ValueError("X: t_test needs at least 3 samples (n - 2 degrees of freedom)")
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(*_filters._t_test_scores(m, n, equal_var), None)


@_warns_if_equal("score", "classes")
@_named
def z_test(X: Any, y: Any, *, sigma: Any, n_jobs: int | None = None,
           client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.z_test` on a Dask array (see the module's description)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "z_test", client, n_classes=2)
    s = _filters._z_sigma(sigma, X.shape[1])
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(*_filters._z_test_scores(m, s), None)


@_warns_if_equal("score", "classes")
@_named
def s2n(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.s2n` on a Dask array (see the module's description)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "s2n", client, n_classes=2, min_size=2)
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(_filters._s2n_scores(m), None, None)


@_warns_if_equal("score", "classes")
@_named
def fisher_ratio(X: Any, y: Any, *, n_jobs: int | None = None,
                 client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.fisher_ratio` on a Dask array (see the module's description)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "fisher_ratio", client)
    _filters._warn_continuous_y(labels, "fisher_ratio", "for a real target use pearson, or "
                                "bin y into classes first")
    m, _ = _class_moments(X, labels, n_jobs, client)
    return FilterResult(_filters._fisher_ratio_scores(m), None, None)


def _column_blocks(X: da.Array, block_cols: int | None) -> da.Array:
    """X rechunked into blocks of whole columns (every row), about 64 MB each by default."""
    n, d = X.shape
    if block_cols is None:
        block_cols = max(1, min(d, (64 << 20) // max(1, n * X.dtype.itemsize)))
    else:
        block_cols = int(block_cols)
        if block_cols < 1:
            raise ValueError(f"block_cols: must be >= 1, got {block_cols}")
    return X.rechunk({0: -1, 1: block_cols})


def _column_task(kind: str, block: np.ndarray, codes: np.ndarray, args: tuple,
                 n_jobs: Any) -> Any:
    """The per-column statistics of one block of whole columns, by one machine's kernel (a
    _core.TableStats or _core.RankSums, pickled back from the worker)."""
    b = _block(block)
    require_finite(b)
    threads = resolve_n_jobs(n_jobs)
    if kind == "tables":
        return _core.table_stats(b, _aligned(codes), *args, threads)
    return _core.rank_sums(b, _aligned(codes), threads)


def _per_column(kind: str, X: da.Array, codes: np.ndarray, args: tuple, n_jobs: Any,
                client: Any, block_cols: int | None) -> SimpleNamespace:
    blocks = _column_blocks(X, block_cols).to_delayed()[0]
    cw = dask.delayed(codes, pure=True)
    task = dask.delayed(_column_task, pure=True)
    res = _compute([task(kind, b, cw, args, n_jobs) for b in blocks], client)
    return SimpleNamespace(**{key: np.concatenate([getattr(r, key) for r in res])
                              for key in type(res[0])._fields})


@_warns_if_equal("score", "classes")
@_named
def chi2(X: Any, y: Any, *, kind: str = "contingency", n_jobs: int | None = None,
         client: Any = None, block_cols: int | None = None) -> FilterResult:
    """:func:`fastfs.filters.chi2` on a Dask array.

    ``kind="counts"``: per-class sums of every chunk, merged in row order. ``kind=
    "contingency"``: a table of every distinct value is no small summary of a chunk, so X is
    rechunked into blocks of whole columns (``block_cols`` columns of every row, default about
    64 MB; they must fit in a worker's memory) and each block is scored by the kernel of one
    machine: the same values, bit for bit.
    """
    check_option(kind, "kind", _filters.CHI2_KINDS)
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "chi2", client)
    _filters._warn_continuous_y(labels, "chi2", _filters._Y_REMEDY)
    if kind == "contingency":
        out = _per_column("tables", X, labels.codes, (labels.classes.shape[0], "none", 0, 0.0),
                          n_jobs, client, block_cols)
        return FilterResult(*_filters._chi2_table_scores(out, labels), None)
    m, lo = _class_moments(X, labels, n_jobs, client)
    if lo.min() < 0:
        raise ValueError("X: chi2 with kind='counts' needs non-negative values")
    observed = m.mean * m.counts[:, None]
    with np.errstate(over="ignore"):
        total = np.ldexp(observed.sum(axis=0), m.scale.astype(np.int32))
    return FilterResult(*_filters._chi2_counts_scores(observed, total, labels, m.constant),
                        None)


@_warns_if_equal("score", "classes")
@_named
def mutual_info(X: Any, y: Any, *, bins: int = 10, binning: str = "quantile",
                discrete_features: bool | str = "auto", alpha: float = 0.5,
                n_jobs: int | None = None, client: Any = None,
                block_cols: int | None = None) -> FilterResult:
    """:func:`fastfs.filters.mutual_info` on a Dask array: the bins (quantiles included) need
    every value of a feature, so X is rechunked into blocks of whole columns (see ``chi2``)
    and each block is scored by the kernel of one machine (the same values, bit for bit).
    ``discrete_features="auto"`` means False (a Dask array is dense)."""
    bins, alpha = _filters._mutual_info_options(bins, binning, discrete_features, alpha)
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "mutual_info", client)
    _filters._warn_continuous_y(labels, "mutual_info", "for a real target use pearson, or bin "
                                "y into classes first")
    discrete = discrete_features is True or discrete_features is np.True_
    out = _per_column("tables", X, labels.codes,
                      (labels.classes.shape[0], "none" if discrete else binning, bins, alpha),
                      n_jobs, client, block_cols)
    if discrete:
        _filters._warn_mutual_info_discrete(out, labels)
    return FilterResult(out.mutual_info, None, None)


@_warns_if_equal("score", "classes")
@_named
def auc(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None,
        block_cols: int | None = None) -> FilterResult:
    """:func:`fastfs.filters.auc` on a Dask array: ranks need every value of a feature, so X is
    rechunked into blocks of whole columns (see ``chi2``), each scored by the kernel of one
    machine (the same values, bit for bit)."""
    X = _as_array(X)
    labels = _labels(y, X.shape[0], "auc", client, n_classes=2)
    out = _per_column("ranks", X, labels.codes, (), n_jobs, client, block_cols)
    return FilterResult(*_filters._auc_scores(out, labels.codes), None)


# pearson: per-chunk (n, mean, sxx, sxy, sum of yc), merged in row order


def _chunk_cross_moments(block: np.ndarray, yc: np.ndarray, n_jobs: Any) -> tuple | None:
    """(reference, n, mean - reference, sum (x - mean)^2, sum (x - mean) yc, sum yc, min, max)
    of a chunk, reference = the chunk's first row, as _chunk_class_moments keeps it: the means
    merged across chunks are then of the columns' spread, not of their offset (at an offset
    of 1e10 the merge of raw means lost seven digits of r)."""
    if block.shape[0] == 0:
        return None
    b = _block(block)
    ref = b[0].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        shifted = np.subtract(b, ref, dtype=np.float64)
    out = _core.cross_moments(_aligned(shifted), _aligned(yc), resolve_n_jobs(n_jobs))
    if not (np.isfinite(out.sxx).all() and np.isfinite(out.sxy).all()):
        require_finite(b)
    return (ref, float(b.shape[0]), out.mean, out.sxx, out.sxy, float(yc.sum()),
            b.min(axis=0).astype(np.float64), b.max(axis=0).astype(np.float64))


def _merge_cross_moments(parts: list) -> tuple:
    parts = [p for p in parts if p is not None]
    with np.errstate(over="ignore", invalid="ignore"):
        return _fold_cross_moments(*parts[0], parts[1:])


def _fold_cross_moments(ref, n, mean, sxx, sxy, sy, lo, hi, rest):
    for r_b, n_b, mean_b, sxx_b, sxy_b, sy_b, lo_b, hi_b in rest:
        t = n + n_b
        # the chunk's mean relative to the first chunk's reference row (a difference of two
        # data values, exact when they are close), as _fold_class_moments does
        delta = ((r_b - ref) + mean_b) - mean
        # sum (x - mean) yc over both parts, the mean of the union being mean + delta n_b / t.
        sxy = sxy + sxy_b + delta * (n * sy_b - n_b * sy) / t
        sxx = sxx + sxx_b + delta * delta * (n * n_b / t)
        mean = mean + delta * (n_b / t)
        n, sy = t, sy + sy_b
        lo, hi = np.minimum(lo, lo_b), np.maximum(hi, hi_b)
    return mean + ref, sxx, sxy, lo, hi


def _cross_moment_pass(X: da.Array, yc: np.ndarray, n_jobs: Any, client: Any):
    """(mean, sxx, sxy, min, max) of every column of X, merged in row order."""
    splits = _row_splits(X)
    blocks = X.to_delayed()
    parts_y = [dask.delayed(np.ascontiguousarray(yc[splits[i]:splits[i + 1]]), pure=True)
               for i in range(blocks.shape[0])]
    chunk = dask.delayed(_chunk_cross_moments, pure=True)
    merge = dask.delayed(_merge_cross_moments, pure=True)
    merged = [merge([chunk(blocks[i, j], parts_y[i], n_jobs) for i in range(blocks.shape[0])])
              for j in range(blocks.shape[1])]
    res = _compute(merged, client)
    return tuple(np.concatenate([r[t] for r in res]) for t in range(5))


@_warns_if_equal("score", "correlation")
@_named
def pearson(X: Any, y: Any, *, pvalues: bool = True, n_jobs: int | None = None,
            client: Any = None) -> FilterResult:
    """:func:`fastfs.filters.pearson` on a Dask array (see the module's description)."""
    if not isinstance(pvalues, (bool, np.bool_)):
        raise TypeError(f"pvalues: expected a bool, got {type(pvalues).__name__}")
    X = _as_array(X, min_samples=3)
    n = X.shape[0]
    yc, syy = _filters._pearson_y(_small(y, client), n)
    mean, sxx, sxy, lo, hi = _cross_moment_pass(X, yc, n_jobs, client)
    cols = np.flatnonzero(_filters._extreme_columns(mean[None, :], sxx[None, :])
                          | ~np.isfinite(sxy))
    if cols.size:
        e = np.frexp(np.maximum(hi[cols], -lo[cols]))[1].astype(np.int64)
        sub = X[:, cols].map_blocks(_ldexp_columns, e, dtype=X.dtype)
        _, sxx_c, sxy_c, _, _ = _cross_moment_pass(sub, yc, n_jobs, client)
        sxx, sxy = sxx.copy(), sxy.copy()
        sxx[cols], sxy[cols] = sxx_c, sxy_c
    if not (np.isfinite(sxx).all() and np.isfinite(sxy).all()):
        raise ValueError("X: values too large: their squares overflow float64; rescale the "
                         "features")
    return FilterResult(*_filters._pearson_scores(sxx, sxy, syy, n, pvalues), None)


# --------------------------------------------------------------------------------------------
# Relief-family scores and margins: X on every worker, blocks of query samples as tasks


def _whole(X: Any, client: Any) -> Any:
    """X as one NumPy array (for the methods that need every sample as a neighbour); a Dask
    DataFrame as one pandas DataFrame, so its column names reach the result."""
    _refuse_sparse(X)
    if hasattr(X, "to_dask_array") and hasattr(X, "columns"):
        return _compute([X], client)[0]
    if isinstance(X, da.Array) or hasattr(X, "to_dask_array"):
        return np.asarray(_compute([_as_array(X)], client)[0])
    return X


def _query_ranges(m: int, block_rows: int | None) -> list[tuple[int, int]]:
    """Blocks of query samples: fixed by the number of samples only (multiples of four, the
    kernels' group size), so the answer does not depend on the number of workers."""
    if block_rows is None:
        block_rows = max(256, -(-m // 32))
    else:
        block_rows = int(block_rows)
        if block_rows < 1:
            raise ValueError(f"block_rows: must be >= 1, got {block_rows}")
    block_rows = -(-block_rows // 4) * 4
    return [(q, min(m, q + block_rows)) for q in range(0, m, block_rows)]


def _blockwise_sums(parts: list) -> np.ndarray:
    """Block results added in block order (fixed)."""
    total = np.array(parts[0], dtype=np.float64, copy=True)
    for p in parts[1:]:
        total += p
    return total


def _relief_block(values, codes, visit, n_jobs):
    return _core.relief_visit(_aligned(values), _aligned(codes), visit, resolve_n_jobs(n_jobs))


def _relieff_block(values, codes, k, q0, q1, n_jobs):
    return _core.relieff_sums(_aligned(values), _aligned(codes), k, q0, q1,
                              resolve_n_jobs(n_jobs))


def _margins_block(values, codes, w, q0, q1, n_jobs):
    return _core.margins_range(_aligned(values), _aligned(codes), _aligned(w), q0, q1,
                               resolve_n_jobs(n_jobs))


def _margin_score_block(values, codes, w, utility, beta, q0, q1, n_jobs):
    return _core.margin_score_range(_aligned(values), _aligned(codes), _aligned(w), utility,
                                    beta, q0, q1, resolve_n_jobs(n_jobs))


_TILED_DOC = """

    ``mode``: "broadcast" sends X (which must then fit in one worker's memory) to every worker
    once and splits the query samples into blocks of ``block_rows``; "tiled" splits X itself
    into row tiles (``tile_rows`` rows each; default: a Dask array's row chunks, or about 32 MB
    of a NumPy array's rows) and runs one task a (query tile, reference tile) pair, so no
    worker holds more than two tiles at a time: every pair's distance is computed with the float64 expression of one machine and the neighbours are
    merged across the reference tiles in tile order with its tie rule, so the neighbours are
    those of one machine and the scores agree to about 1e-12 relative. "auto" (the default)
    tiles when X exceeds a quarter of the smallest worker memory limit. Each tiled task is
    checked against ``fastfs.config.max_memory`` and the workers' memory limit first
    (``MemoryError`` naming the size: pass a smaller ``tile_rows``). A Dask array's tiles are
    persisted on the cluster; a NumPy array's tiles are sent from the client as tasks whose
    value is the tile (the scheduler keeps them). Either way Dask makes a tile again when the
    worker holding it is lost, and the steps that read it are retried."""

_RELIEF_TILED_DOC = """
    The tiled mode covers continuous features with class labels and no missing value; discrete
    features, missing values (NaN) or a continuous target raise a ``ValueError`` there (use
    ``mode="broadcast"``)."""


def _tiles_of(X: Any, tile_rows: Any, client: Any, bytes_per_row: Callable[[int, int], float]):
    """X's row tiles; ``bytes_per_row(n_features, itemsize)``: a task's memory per row of each
    of its two tiles (what guard_tasks checks), which bounds the default tile size."""
    _refuse_sparse(X)
    n = X.shape[1] if len(getattr(X, "shape", ())) == 2 else None
    itemsize = 4 if np.dtype(getattr(X, "dtype", np.float64)) == np.float32 else 8
    per_row = None if n is None else float(bytes_per_row(int(n), itemsize))
    return _tiles.make_tiles(X, tile_rows, client, _as_array, per_row)


def _tiled_labels(y: Any, tiles: Any, client: Any, what: str | None = None):
    from ._validation import check_loo_labels

    return check_loo_labels(_small(y, client), int(tiles.splits[-1]), what)


@_warns_if_equal("weight", "neighbours")
def relief(X: Any, y: Any, *, n_iter: int | None = None, random_state: Any = None,
           n_jobs: int | None = None, client: Any = None, block_rows: int | None = None,
           mode: str = "auto", tile_rows: int | None = None):
    """:func:`fastfs.relief` with the visited samples split into blocks run as tasks.

    ``block_rows`` visited samples per task (default: about 1/32 of them, at least 256).
    """
    from ._results import WeightResult
    from ._scale import unscale
    from ._validation import INDEX_MAX, check_int, check_random_state
    from ._results import ranking_by_weight as _ranking
    from ._validation import prepare_scaled

    client = _client_or_none(client)
    steps = 0 if n_iter is None else check_int(n_iter, "n_iter", maximum=INDEX_MAX)
    seed = check_random_state(random_state)
    if _tiles.use_tiles(mode, X, client):
        tiles = _tiles_of(X, tile_rows, client, lambda n, itemsize: 4.0 * n * itemsize)
        labels = _tiled_labels(y, tiles, client, "relief")
        m = int(tiles.splits[-1])
        _tiles.guard_tasks(tiles, 4.0 * tiles.n_features * tiles.itemsize, 0.0,
                           "fastfs.dask.relief", client)
        stats = _tiles.tile_statistics(tiles, client)
        e = _tiles.rescale_exponent(stats["max_abs"], tiles.itemsize)
        visit = np.arange(m, dtype=np.int64) if steps == 0 else np.asarray(
            _core.relief_order(m, steps, seed), dtype=np.int64)
        total = _tiles.relief_sums(tiles, labels.codes, visit, e, n_jobs, client)
        weights = unscale(total, 2, e, "the Relief weights")
        return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                            feature_names=tiles.feature_names, stopped_early=False)
    cx, labels, values, e = prepare_scaled(_whole(X, client), _small(y, client), "relief")
    m = values.shape[0]
    visit = np.arange(m, dtype=np.int64) if steps == 0 else _core.relief_order(m, steps, seed)
    Xw, cw = _shared(client, values, labels.codes)
    parts = _run_blocks(_relief_block, [(Xw, cw, visit[a:b], n_jobs)
                                        for a, b in _query_ranges(visit.size, block_rows)],
                        client)
    weights = unscale(_blockwise_sums(parts), 2, e, "the Relief weights")
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=False)


def _relief_fast_path(X: Any, y: Any, kinds: dict) -> bool:
    """Does the Relief family read (X, y) as continuous features with class labels and no
    missing value (the kernels split into blocks of query samples)? As fastfs.relieff decides."""
    from ._relief_data import prepare_relief

    return prepare_relief(X, y, **kinds).fast


def _call(fn: Callable, X: Any, y: Any, kwargs: dict) -> Any:
    return _quiet(fn, X, y, **kwargs)


def _one_task(fn: Callable, X: Any, y: Any, client: Any, **kwargs: Any) -> Any:
    """fn(X, y, **kwargs) run as one task (on a worker when there is a cluster)."""
    return _run_blocks(_call, [(fn, X, y, kwargs)], client)[0]


def _tiled_relief_data(X: Any, y: Any, tile_rows: Any, client: Any, kinds: dict, name: str,
                       per_feature: float, per_row: Callable):
    """The tiles, labels and statistics of a tiled Relief-family run: refuses what the tiled
    mode cannot read (discrete features, missing values, a continuous target) with a clear
    error, as the one-machine reading of the data would send it to the general kernel."""
    from ._relief_data import _discrete_flags, continuous_target
    from ._validation import check_int

    check_option(kinds["target"], "target", ("auto", "classes", "continuous"))
    yv = _small(y, client)
    try:   # the number of classes bounds the default tile size; y is checked below
        n_classes = int(np.unique(np.asarray(yv)).size)
    except (TypeError, ValueError):
        n_classes = 2
    tiles = _tiles_of(X, tile_rows, client,
                      lambda n, itemsize: per_feature * n + per_row(n_classes))
    m = int(tiles.splits[-1])
    if continuous_target(yv, m, kinds["target"], kinds["discrete_threshold"]):
        raise ValueError(f"y: {name} reads y as a continuous target; the tiled mode covers "
                         "class labels only: pass mode='broadcast'")
    labels = _tiled_labels(yv, tiles, client)
    threshold = None
    if kinds["discrete_features"] is not None:
        flags = _discrete_flags(np.zeros((1, tiles.n_features)), None,
                                kinds["discrete_features"])
        if flags.any():
            raise ValueError("discrete_features: the tiled mode covers continuous features "
                             "only: pass mode='broadcast'")
    elif kinds["discrete_threshold"] is not None:
        threshold = min(check_int(kinds["discrete_threshold"], "discrete_threshold",
                                  minimum=0), m)
    _tiles.guard_tasks(tiles, per_feature * tiles.n_features
                       + per_row(labels.classes.shape[0]), 0.0,
                       f"fastfs.dask.{name}", client)
    stats = _tiles.tile_statistics(tiles, client, relief_data=True, threshold=threshold)
    if stats.get("discrete"):
        raise ValueError(f"X: features {stats['discrete'][:10]} have at most "
                         f"{kinds['discrete_threshold']} distinct values and are read as "
                         "discrete (discrete_threshold); the tiled mode covers continuous "
                         "features only: pass mode='broadcast', or discrete_threshold=None")
    # one power of two per column, as the one-machine reading (the scores read only the
    # min-max scaled columns, and one exponent for all of X flushes tiny columns to zero)
    e = _tiles.rescale_exponents(stats, tiles.itemsize)
    lo, inv = _tiles.min_max_scale(stats, e)
    return tiles, labels, e, lo, inv


def _tiled_weights(tiles: Any, total: np.ndarray):
    """The Relief-family result of the summed contributions of every sample."""
    from ._results import WeightResult
    from ._results import ranking_by_weight as _ranking

    weights = total / int(tiles.splits[-1])
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=tiles.feature_names, stopped_early=False)


@_warns_if_equal("weight", "neighbours")
def relieff(X: Any, y: Any, *, n_neighbors: int | float = 10, n_jobs: int | None = None,
            client: Any = None, block_rows: int | None = None, discrete_threshold: Any = 10,
            discrete_features: Any = None, target: str = "auto", mode: str = "auto",
            tile_rows: int | None = None):
    """:func:`fastfs.relieff` with the query samples split into blocks run as tasks (in the
    broadcast mode X is sent to every worker once). ``n_neighbors``,
    ``discrete_threshold``, ``discrete_features`` and ``target`` as there. Continuous features
    with class labels (and no missing value) are split into blocks of query samples; other data
    (discrete or mixed features, missing values, a continuous target) are scored by one task
    with the general kernel of :func:`fastfs.relieff`, so the answer is always the one of one
    machine."""
    from ._results import WeightResult
    from ._results import ranking_by_weight as _ranking
    from ._validation import prepare_scaled, relieff_neighbours

    client = _client_or_none(client)
    kinds = dict(discrete_threshold=discrete_threshold, discrete_features=discrete_features,
                 target=target)
    if _tiles.use_tiles(mode, X, client):
        k = relieff_neighbours(n_neighbors, X.shape[0] if hasattr(X, "shape") else len(X))
        # per row of a tile: X, its rescaled and min-max scaled copies (float64), and the
        # candidates (index and distance) of every class
        tiles, labels, e, lo, inv = _tiled_relief_data(
            X, y, tile_rows, client, kinds, "relieff", 24.0,
            lambda n_classes: 16.0 * k * n_classes)
        return _tiled_weights(tiles, _tiles.relieff_sums(
            tiles, labels.codes, labels.classes.shape[0], k, e, lo, inv, n_jobs, client))
    Xw, yw = _whole(X, client), _small(y, client)
    if not _relief_fast_path(Xw, yw, kinds):
        from .relief import relieff as one_machine

        return _one_task(one_machine, Xw, yw, client, n_neighbors=n_neighbors, n_jobs=n_jobs,
                         **kinds)
    cx, labels, values, _ = prepare_scaled(Xw, yw)
    m = values.shape[0]
    n_neighbors = relieff_neighbours(n_neighbors, m)
    Xw, cw = _shared(client, values, labels.codes)
    parts = _run_blocks(_relieff_block, [(Xw, cw, n_neighbors, a, b, n_jobs)
                                         for a, b in _query_ranges(m, block_rows)], client)
    weights = _blockwise_sums(parts) / m
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=False)


def _radius_block(values, codes, rule, q0, q1, n_jobs):
    return _core.relief_radius_sums(_aligned(values), _aligned(codes), rule, q0, q1,
                                    resolve_n_jobs(n_jobs))


def _relief_radius(rule: str, name: str, X: Any, y: Any, n_jobs: Any, client: Any,
                   block_rows: Any, kinds: dict, mode: str = "broadcast",
                   tile_rows: Any = None):
    from .relief import multisurf, multisurfstar, surf, surfstar
    from ._results import WeightResult
    from ._results import ranking_by_weight as _ranking
    from ._validation import prepare_scaled

    client = _client_or_none(client)
    tiled = _tiles.use_tiles(mode, X, client)
    if tiled:
        # per row of a tile: X, its min-max scaled copy, and the contribution row (float64)
        tiles, labels, e, lo, inv = _tiled_relief_data(X, y, tile_rows, client, kinds, name,
                                                       32.0, lambda n_classes: 48.0)
        return _tiled_weights(tiles, _tiles.radius_sums(
            tiles, labels.codes, labels.classes.shape[0], rule, e, lo, inv, n_jobs, client))
    Xw, yw = _whole(X, client), _small(y, client)
    if not _relief_fast_path(Xw, yw, kinds):
        one_machine = {"surf": surf, "surfstar": surfstar, "multisurf": multisurf,
                       "multisurfstar": multisurfstar}[name]
        return _one_task(one_machine, Xw, yw, client, n_jobs=n_jobs, **kinds)
    cx, labels, values, _ = prepare_scaled(Xw, yw)
    m = values.shape[0]
    Xw, cw = _shared(client, values, labels.codes)
    # every task finds the thresholds from all samples (SURF's global one is a sort per
    # feature, the same bits on every worker) and scores its block of query samples
    parts = _run_blocks(_radius_block, [(Xw, cw, rule, a, b, n_jobs)
                                        for a, b in _query_ranges(m, block_rows)], client)
    weights = _blockwise_sums(parts) / m
    return WeightResult(weights=weights, ranking=_ranking(weights), score=float("nan"),
                        feature_names=cx.feature_names, stopped_early=False)


@_warns_if_equal("weight", "neighbours")
def surf(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None,
         block_rows: int | None = None, discrete_threshold: Any = 10,
         discrete_features: Any = None, target: str = "auto", mode: str = "auto",
              tile_rows: int | None = None):
    """:func:`fastfs.surf` over blocks of query samples (X sent once to every worker), or
    over pairs of row tiles of X (see ``mode``)."""
    return _relief_radius("surf", "surf", X, y, n_jobs, client, block_rows,
                          dict(discrete_threshold=discrete_threshold,
                               discrete_features=discrete_features, target=target),
                          mode, tile_rows)


@_warns_if_equal("weight", "neighbours")
def surfstar(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None,
             block_rows: int | None = None, discrete_threshold: Any = 10,
             discrete_features: Any = None, target: str = "auto", mode: str = "auto",
              tile_rows: int | None = None):
    """:func:`fastfs.surfstar` over blocks of query samples (X sent once to every worker), or
    over pairs of row tiles of X (see ``mode``)."""
    return _relief_radius("surf_star", "surfstar", X, y, n_jobs, client, block_rows,
                          dict(discrete_threshold=discrete_threshold,
                               discrete_features=discrete_features, target=target),
                          mode, tile_rows)


@_warns_if_equal("weight", "neighbours")
def multisurf(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None,
              block_rows: int | None = None, discrete_threshold: Any = 10,
              discrete_features: Any = None, target: str = "auto", mode: str = "auto",
              tile_rows: int | None = None):
    """:func:`fastfs.multisurf` over blocks of query samples (X sent once to every worker), or
    over pairs of row tiles of X (see ``mode``)."""
    return _relief_radius("multisurf", "multisurf", X, y, n_jobs, client, block_rows,
                          dict(discrete_threshold=discrete_threshold,
                               discrete_features=discrete_features, target=target),
                          mode, tile_rows)


@_warns_if_equal("weight", "neighbours")
def multisurfstar(X: Any, y: Any, *, n_jobs: int | None = None, client: Any = None,
                  block_rows: int | None = None, discrete_threshold: Any = 10,
                  discrete_features: Any = None, target: str = "auto", mode: str = "auto",
              tile_rows: int | None = None):
    """:func:`fastfs.multisurfstar` over blocks of query samples (X sent once to every
    worker), or over pairs of row tiles of X (see ``mode``)."""
    return _relief_radius("multisurf_star", "multisurfstar", X, y, n_jobs, client, block_rows,
                          dict(discrete_threshold=discrete_threshold,
                               discrete_features=discrete_features, target=target),
                          mode, tile_rows)


def _tiled_margins(X: Any, y: Any, weights: Any, n_jobs: Any, client: Any, tile_rows: Any,
                   name: str):
    """(theta in the rescaled units, the exponent of those units, feature names) of every
    sample, X in row tiles."""
    from ._validation import check_scaled_weights

    tiles = _tiles_of(X, tile_rows, client, lambda n, itemsize: 4.0 * n * itemsize)
    labels = _tiled_labels(y, tiles, client, name)
    w, f = check_scaled_weights(weights, tiles.n_features)
    _tiles.guard_tasks(tiles, 4.0 * tiles.n_features * tiles.itemsize, 0.0,
                       f"fastfs.dask.{name}", client)
    stats = _tiles.tile_statistics(tiles, client)
    e = _tiles.rescale_exponent(stats["max_abs"], tiles.itemsize)
    _, hit_d, _, miss_d = _tiles.nearest_hit_miss(tiles, labels.codes, e, w, n_jobs, client)
    # theta from the squared distances, as margin_from_squared (NaN without a hit or a miss)
    with np.errstate(invalid="ignore"):
        theta = 0.5 * (np.sqrt(np.maximum(miss_d, 0.0)) - np.sqrt(np.maximum(hit_d, 0.0)))
    theta[np.isinf(hit_d) | np.isinf(miss_d)] = np.nan
    return theta, e + f, tiles.feature_names


def margins(X: Any, y: Any, weights: Any = None, *, n_jobs: int | None = None,
            client: Any = None, block_rows: int | None = None, mode: str = "auto",
            tile_rows: int | None = None) -> np.ndarray:
    """:func:`fastfs.margins` with the samples split into blocks run as tasks."""
    from ._scale import unscale
    from ._validation import check_scaled_weights, prepare_scaled

    client = _client_or_none(client)
    if _tiles.use_tiles(mode, X, client):
        theta, e, _ = _tiled_margins(X, y, weights, n_jobs, client, tile_rows, "margins")
        return unscale(theta, 1, e, "the margins")
    cx, labels, values, e = prepare_scaled(_whole(X, client), _small(y, client), "margins")
    w, f = check_scaled_weights(weights, values.shape[1])
    Xw, cw = _shared(client, values, labels.codes)
    parts = _run_blocks(_margins_block, [(Xw, cw, w, a, b, n_jobs)
                                         for a, b in _query_ranges(values.shape[0], block_rows)],
                        client)
    return unscale(np.concatenate(parts), 1, e + f, "the margins")


def margin_score(X: Any, y: Any, weights: Any = None, *, utility: str = "linear",
                 beta: float = 1.0, n_jobs: int | None = None, client: Any = None,
                 block_rows: int | None = None, mode: str = "auto",
                 tile_rows: int | None = None) -> float:
    """:func:`fastfs.margin_score`: per-block sums of u(theta) as tasks, added in block order
    (tiled: every sample's theta from the tiles, summed in sample order as on one machine)."""
    from ._scale import unscale
    from ._scale import score_power, utility_beta
    from ._validation import check_real, check_scaled_weights, prepare_scaled
    from .margin import UTILITIES

    check_option(utility, "utility", UTILITIES)
    beta = check_real(beta, "beta", positive=True)
    client = _client_or_none(client)
    if _tiles.use_tiles(mode, X, client):
        theta, e, _ = _tiled_margins(X, y, weights, n_jobs, client, tile_rows, "margin_score")
        total = _core.utility_sum(theta, utility, utility_beta(utility, beta, e))
        return float(unscale(total, score_power(utility), e, "the margin score"))
    cx, labels, values, e = prepare_scaled(_whole(X, client), _small(y, client),
                                           "margin_score")
    w, f = check_scaled_weights(weights, values.shape[1])
    e += f  # the margins' units (see check_scaled_weights)
    b = utility_beta(utility, beta, e)
    Xw, cw = _shared(client, values, labels.codes)
    parts = _run_blocks(_margin_score_block,
                        [(Xw, cw, w, utility, b, q0, q1, n_jobs)
                         for q0, q1 in _query_ranges(values.shape[0], block_rows)], client)
    total = 0.0
    for p in parts:
        total += p
    return float(unscale(total, score_power(utility), e, "the margin score"))


# --------------------------------------------------------------------------------------------
# independent restarts as tasks


def _restart_task(kind: str, X: Any, y: Any, kwargs: dict, r: int) -> Any:
    from .margin import _gflip
    from .regression import _rgs
    from .relief import _simba

    run = {"simba": _simba, "gflip": _gflip, "rgs": _rgs}[kind]
    return _quiet(run, X, y, **dict(kwargs, n_restarts=1, callback=None, verbose=False),
                  first_restart=r)


def _restarts(kind: str, X: Any, y: Any, n_restarts: Any, kwargs: dict, client: Any) -> Any:
    """Run restart r of ``kind`` as task r (X and y sent once to every worker) and keep the
    first restart with the largest score, as one machine does."""
    import dataclasses

    from ._validation import check_int, check_random_state

    n_restarts = check_int(n_restarts, "n_restarts")
    # One seed for all restarts, drawn once here (a Generator is advanced once, as on one
    # machine); the tasks derive restart r's stream from it.
    kwargs = dict(kwargs, random_state=check_random_state(kwargs["random_state"]))
    client = _client_or_none(client)
    X, y = _whole(X, client), _small(y, client)
    Xw, yw = _shared(client, X, y)
    runs = _run_blocks(_restart_task, [(kind, Xw, yw, kwargs, r) for r in range(n_restarts)],
                       client)
    best = 0
    for r in range(1, n_restarts):
        if runs[r].score > runs[best].score:
            best = r
    res = runs[best]
    # As one machine reports them: restart_scores = the final score of every restart, in
    # restart order; best_restart = the index of the one returned; history = that restart's
    # own (its steps), never a list over restarts.
    return dataclasses.replace(
        res, best_restart=best,
        restart_scores=np.concatenate([np.asarray(r.restart_scores, dtype=np.float64)
                                       for r in runs]))


@_warns_if_equal("weight", "simba")
def simba(X: Any, y: Any, *, n_iter: int | None = None, n_restarts: int = 5,
          utility: str = "linear", beta: float = 1.0, random_state: Any = None,
          n_jobs: int | None = None, client: Any = None):
    """:func:`fastfs.simba` with every restart a task (X, which must fit in one worker's
    memory, is sent to every worker once); the same weights, score and history."""
    return _restarts("simba", X, y, n_restarts,
                     dict(n_iter=n_iter, utility=utility, beta=beta, sample_order=None,
                          random_state=random_state, n_jobs=n_jobs), client)


def gflip(X: Any, y: Any, *, utility: str = "linear", beta: float = 1.0, max_epochs: int = 100,
          n_restarts: int = 2, initial: Any = None, random_state: Any = None,
          n_jobs: int | None = None, client: Any = None, split_state: bool = False,
          n_blocks: int | None = None):
    """:func:`fastfs.gflip` on the cluster; the same selection, score and history.

    By default every restart is a task holding its own m x m distance state (the state must
    fit in one worker's memory). With ``split_state=True`` the restarts run one after the
    other on one state split by row blocks across the workers (``n_blocks`` blocks, default
    one a worker), held there between steps: each worker holds about m^2 / n_blocks float64
    entries, so m can exceed what one worker, or one machine, holds.
    """
    if not isinstance(split_state, (bool, np.bool_)):
        raise TypeError(f"split_state: expected a bool, got {type(split_state).__name__}")
    if n_blocks is not None and not split_state:
        raise ValueError("n_blocks: applies to the split state only; pass split_state=True "
                         "(each restart of the default mode holds its own whole state)")
    if split_state:
        from ._dask_state import gflip_split

        client = _client_or_none(client)
        return gflip_split(_whole(X, client), _small(y, client), utility=utility, beta=beta,
                           max_epochs=max_epochs, n_restarts=n_restarts, initial=initial,
                           random_state=random_state, n_jobs=n_jobs, client=client,
                           n_blocks=n_blocks)
    return _restarts("gflip", X, y, n_restarts,
                     dict(utility=utility, beta=beta, max_epochs=max_epochs, initial=initial,
                          random_state=random_state, n_jobs=n_jobs), client)


def rgs(X: Any, y: Any, *, n_neighbors: int | None = None, beta: float | None = None,
        n_epochs: int = 1, learning_rate: Any = "auto", n_restarts: int = 1,
        random_state: Any = None, n_jobs: int | None = None, client: Any = None):
    """:func:`fastfs.rgs` with every restart a task; the same weights, score and history."""
    from .regression import _warn_if_equal

    client = _client_or_none(client)
    y = _small(y, client)
    out = _restarts("rgs", X, y, n_restarts,
                    dict(n_neighbors=n_neighbors, beta=beta, n_epochs=n_epochs,
                         learning_rate=learning_rate, sample_order=None,
                         random_state=random_state, n_jobs=n_jobs), client)
    # as one machine checks it (not when y is constant: the tasks said so)
    _warn_if_equal(out.weights, np.asarray(y, dtype=np.float64), "rgs", "weight", stacklevel=4)
    return out


# --------------------------------------------------------------------------------------------
# distance-criterion searches on a split state


def _split_search(strategy: str, X: Any, y: Any, n_features_to_select: Any, criterion: Any,
                  tol: Any, n_jobs: Any, client: Any, n_blocks: Any, backward: bool):
    from ._dask_state import search_split

    client = _client_or_none(client)
    return search_split(strategy, _whole(X, client), _small(y, client), n_features_to_select,
                        criterion=criterion, tol=tol, n_jobs=n_jobs, client=client,
                        n_blocks=n_blocks, allow_auto=True, backward=backward)


_SPLIT_DOC = """

    The criterion ("margin" or "loo_knn_accuracy") reads the m x m distance state, split by
    row blocks across the workers (``n_blocks`` blocks, default one a worker) and held there
    between steps; each candidate's score adds one term a sample from the blocks in sample
    order, so the selection, scores and history are those of one machine, and m can exceed
    what one worker holds. X (m x n) is sent to every worker once.
    """


def sfs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
        criterion: Any = "loo_knn_accuracy", tol: float | None = None,
        n_jobs: int | None = None, client: Any = None, n_blocks: int | None = None):
    return _split_search("sfs", X, y, n_features_to_select, criterion, tol, n_jobs, client,
                         n_blocks, False)


def sbs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
        criterion: Any = "loo_knn_accuracy", tol: float | None = None,
        n_jobs: int | None = None, client: Any = None, n_blocks: int | None = None):
    return _split_search("sbs", X, y, n_features_to_select, criterion, tol, n_jobs, client,
                         n_blocks, True)


def sffs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None, client: Any = None, n_blocks: int | None = None):
    return _split_search("sffs", X, y, n_features_to_select, criterion, tol, n_jobs, client,
                         n_blocks, False)


def sfbs(X: Any, y: Any, n_features_to_select: Any = "auto", *,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None, client: Any = None, n_blocks: int | None = None):
    return _split_search("sfbs", X, y, n_features_to_select, criterion, tol, n_jobs, client,
                         n_blocks, True)


def beam(X: Any, y: Any, n_features_to_select: Any = "auto", *, width: int = 5,
         criterion: Any = "loo_knn_accuracy", tol: float | None = None,
         n_jobs: int | None = None, client: Any = None, n_blocks: int | None = None,
         block_subsets: int | None = None):
    """:func:`fastfs.beam` on a Dask cluster; the same selection, scores and history.

    With "margin" or "loo_knn_accuracy" the distance state is split by row blocks across the
    workers (``n_blocks``, as in :func:`sfs`). With a criterion evaluated from scratch on every
    subset ("j1", "j2", "j3", "divergence", "bhattacharyya" or a callable) the candidate
    subsets of every kept subset are scored in blocks of ``block_subsets`` as tasks (default:
    8 blocks), X sent once to every worker.
    """
    from ._dask_state import search_split
    from ._validation import check_int

    width = check_int(width, "width")
    if block_subsets is not None:
        block_subsets = check_int(block_subsets, "block_subsets")
    client = _client_or_none(client)
    return search_split("beam", _whole(X, client), _small(y, client), n_features_to_select,
                        criterion=criterion, tol=tol, n_jobs=n_jobs, client=client,
                        n_blocks=n_blocks, allow_auto=True, backward=False, width=width,
                        block_subsets=block_subsets, allow_tasks=True)


for _f, _name in ((sfs, "sfs"), (sbs, "sbs"), (sffs, "sffs"), (sfbs, "sfbs")):
    _f.__doc__ = f":func:`fastfs.{_name}` on a Dask cluster." + _SPLIT_DOC


# --------------------------------------------------------------------------------------------
# candidate subsets as tasks


def exhaustive(X: Any, y: Any, n_features_to_select: Any = "best", *,
               criterion: Any = "loo_knn_accuracy", max_subsets: int = 1_000_000,
               tol: float | None = None, n_jobs: int | None = None, client: Any = None,
               block_subsets: int | None = None):
    """:func:`fastfs.exhaustive` with the candidate subsets scored in blocks as tasks.

    Every subset of the asked size(s) is scored on the workers (X, which must fit in one
    worker's memory, is sent to each once; ``block_subsets`` subsets per task, default about
    1/32 of them); then the search of one machine runs over those scores, so the selection,
    the ties, ``tol``, the history and ``n_evaluations`` are exactly those of one machine.
    """
    import dataclasses
    from itertools import combinations
    from math import comb

    from . import search as _search
    from ._validation import INDEX_MAX, check_int
    from .criteria import prepare

    max_subsets = check_int(max_subsets, "max_subsets", maximum=INDEX_MAX)
    client = _client_or_none(client)
    X, y = _whole(X, client), _small(y, client)
    p = prepare(X, y, criterion, n_jobs, "fastfs.exhaustive")
    n = p.cx.values.shape[1]
    k, best, auto = _search._target(n_features_to_select, n)
    _search._tolerance(tol, n_features_to_select, best, auto, False)
    sizes = range(1, n + 1) if best else [k]
    # The search of one machine over a stand-in problem whose columns are their own indices:
    # its criterion looks the scores up.
    identity = np.tile(np.arange(n, dtype=np.float64), (2, 1))
    stand_in_y = np.array([0, 1])
    if sum(comb(n, s) for s in sizes) > max_subsets:
        # one machine's error, before anything is scored
        _search.exhaustive(identity, stand_in_y, n_features_to_select,
                           criterion=lambda Xs, yy: 0.0, max_subsets=max_subsets)
    subsets = [c for s in sizes for c in combinations(range(n), s)]
    step = max(64, -(-len(subsets) // 32)) if block_subsets is None else check_int(
        block_subsets, "block_subsets")
    shared = _shared(client, p.values, p.codes, p.y, p.fn)
    parts = _run_blocks(_score_subsets,
                        [(*shared[:3], p.spec, shared[3],
                          subsets[a:a + step], n_jobs) for a in range(0, len(subsets), step)],
                        client)
    # J in the units of X (an exact power-of-two scaling: the same comparisons)
    scores = p.unscale_J(np.concatenate(parts), strict=False)
    table = dict(zip(subsets, scores.tolist()))

    def looked_up(Xs: np.ndarray, _y: Any) -> float:
        return table[tuple(int(v) for v in Xs[0])]

    res = _search.exhaustive(identity, stand_in_y, n_features_to_select, criterion=looked_up,
                             max_subsets=max_subsets, tol=tol, n_jobs=1)
    return dataclasses.replace(res, feature_names=p.cx.feature_names)


# The scikit-learn selectors (need scikit-learn): imported on first use.


for _f in (relief, margins, margin_score):
    _f.__doc__ += _TILED_DOC
for _f in (relieff, surf, surfstar, multisurf, multisurfstar):
    _f.__doc__ += _TILED_DOC + _RELIEF_TILED_DOC
for _f in (surf, surfstar):
    _f.__doc__ += """
    In the tiled mode SURF's threshold, the mean of every pair's distance, comes from tasks
    over blocks of whole columns (about 32 MB each), with the bits of one machine."""
