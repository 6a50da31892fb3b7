"""fastfs.dask's tiled mode: Relief, ReliefF, SURF(*), MultiSURF(*) and the margins with X split
into row tiles that no worker holds whole.

Every task holds one tile of query samples and one tile of reference samples. A query tile's
neighbour state (nearest hit and miss; the k nearest of every class; MultiSURF's running sums and
near/far counts) is carried through the reference tiles in tile order, one task a step, by the
C++ tile reductions, which compute every pair's distance with the exact kernel of one machine
and merge with its tie rule (lowest index among equal distances; never a sample's own
neighbour). So the neighbours are those of one machine, and MultiSURF's thresholds (sums
carried in sample order) have the same bits; SURF's one threshold comes from tasks over blocks
of whole columns (each column's pair sum from its sorted values, added in column order, as one
machine adds them). The contributions are then added per query tile and the tile sums in tile
order.

Passes over the tiles: one for the statistics (NaN and infinity, the largest magnitude for the
exact power-of-two rescaling, column ranges, the discrete features), then one chain per
neighbour state, then the contributions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import dask
import dask.array as da
import numpy as np

import fastfs._core as _core

from ._dask_tasks import _aligned, _block as _tile, _client_or_none, _compute
from ._validation import check_option, require_finite, resolve_n_jobs

MODES = ("auto", "broadcast", "tiled")

# Every task key here is unique to its call (dask.delayed(..., pure=False)), and what several
# passes of one call read (the tiles, the labels, the column ranges) is held as futures
# (make_tiles, held): no pass submits a key that the scheduler may be forgetting after an
# earlier pass. Unique keys also spare hashing every tile.
# mode="auto" tiles X when X (bytes, as float64 or float32) exceeds this fraction of the
# smallest worker memory limit: the broadcast mode holds X on every worker plus the kernels'
# working copies (a float64 min-max scaled copy for the Relief family, a float32 index).
AUTO_FRACTION = 0.25
_DEFAULT_TILE_BYTES = 32 << 20


def use_tiles(mode: Any, X: Any, client: Any) -> bool:
    """Whether to run tiled: mode "tiled", or "auto" with X above AUTO_FRACTION of the
    smallest worker memory limit of the cluster."""
    check_option(mode, "mode", MODES)
    if mode != "auto":
        return mode == "tiled"
    client = _client_or_none(client)
    limit = _worker_memory(client)
    if limit is None:
        return False
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        return False
    rows = shape[0]
    if not isinstance(rows, (int, np.integer)):
        # a Dask DataFrame's row count is a lazy scalar (NaN for an array of unknown chunks,
        # which the tiles refuse with their own error)
        rows = rows.compute() if hasattr(rows, "compute") else rows
        if not np.isfinite(float(rows)):
            return True
    itemsize = 4 if np.dtype(getattr(X, "dtype", np.float64)) == np.float32 else 8
    return float(rows) * float(shape[1]) * itemsize > AUTO_FRACTION * limit


def _worker_memory(client: Any) -> float | None:
    if client is None or not hasattr(client, "scheduler_info"):
        return None
    try:
        workers = client.scheduler_info()["workers"].values()
    except (AttributeError, KeyError, TypeError, OSError):  # no memory limits known
        return None
    limits = [w.get("memory_limit") for w in workers if w.get("memory_limit")]
    return float(min(limits)) if limits else None


@dataclass
class Tiles:
    """X in row tiles: refs[t] (a delayed object or a future) holds rows splits[t] ..
    splits[t + 1] - 1 of every feature."""
    refs: list
    splits: np.ndarray
    n_features: int
    itemsize: int
    feature_names: Any
    hold: Any = None   # the persisted array, whose chunks stay on the workers while held

    @property
    def count(self) -> int:
        return len(self.refs)

    def rows(self, t: int) -> tuple[int, int]:
        return int(self.splits[t]), int(self.splits[t + 1])


def task_budget(client: Any) -> tuple[float, str]:
    """The memory one task may use: fastfs.config.max_memory, or the smallest worker memory
    limit where that is lower; and the name of the one that binds."""
    from ._config import config

    limit = float(config.max_memory)
    where = "fastfs.config.max_memory"
    worker = _worker_memory(client)
    if worker is not None and worker < limit:
        limit, where = worker, "the workers' memory limit"
    return limit, where


def _default_rows_cap(bytes_per_row: float | None, client: Any) -> int | None:
    """The most rows a default tile may have: a task (a query and a reference tile with their
    working copies, ``bytes_per_row`` per row of each) within half of the task budget, so that
    the default never trips guard_tasks (and leaves a worker room for Dask's own use)."""
    if bytes_per_row is None or bytes_per_row <= 0:
        return None
    limit, _ = task_budget(client)
    return max(1, int(0.5 * limit // (2.0 * bytes_per_row)))


def make_tiles(X: Any, tile_rows: Any, client: Any, as_array: Callable,
               bytes_per_row: float | None = None) -> Tiles:
    """The row tiles of X: a Dask array keeps its row chunks (or is rechunked to ``tile_rows``)
    and is persisted on the cluster; a NumPy array (or DataFrame) is cut into tiles of
    ``tile_rows`` rows (default about 32 MB each) sent to the workers one by one. Without
    ``tile_rows``, tiles are also kept small enough for a task of ``bytes_per_row`` per row to
    fit the task budget (a Dask array's larger row chunks are split)."""
    from ._validation import check_int

    cap = None
    if tile_rows is not None:
        tile_rows = check_int(tile_rows, "tile_rows")
    else:
        cap = _default_rows_cap(bytes_per_row, client)
    if isinstance(X, da.Array) or hasattr(X, "to_dask_array"):
        from ._validation import frame_feature_names

        names = frame_feature_names(X)   # a Dask DataFrame's columns, as one machine keeps them
        X = as_array(X)
        rows = tile_rows
        if rows is None:
            rows = X.chunks[0]
            if cap is not None and max(rows) > cap:
                rows = cap
        X = X.rechunk({0: rows, 1: -1})
        if client is not None:
            X = client.persist(X)
        refs = list(X.to_delayed()[:, 0])
        splits = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        keep = np.flatnonzero(np.diff(splits) > 0)   # chunks without rows hold nothing
        refs = [refs[t] for t in keep]
        splits = np.concatenate([[0], np.cumsum(np.diff(splits)[keep])]).astype(np.int64)
        return Tiles(refs, splits, X.shape[1], X.dtype.itemsize, names, X)
    from ._validation import check_X

    cx = check_X(X, check_finite=False)
    values = cx.values
    m, n = values.shape
    if tile_rows is None:
        tile_rows = max(1, _DEFAULT_TILE_BYTES // max(1, n * values.dtype.itemsize))
        if cap is not None:
            tile_rows = min(tile_rows, cap)
    starts = list(range(0, m, tile_rows))
    refs = [dask.delayed(np.ascontiguousarray(values[a:a + tile_rows]), pure=False)
            for a in starts]
    hold = None
    if client is not None:
        # Each tile is a task whose value is the tile itself, computed once and held: the
        # scheduler keeps the task, so a tile lost with its worker is made again (a scattered
        # tile could not be: every step after it was cancelled, "lost dependencies").
        refs = hold = client.compute(refs)
    splits = np.array(starts + [m], dtype=np.int64)
    return Tiles(refs, splits, n, values.dtype.itemsize, cx.feature_names, hold)


def held(value: Any, client: Any) -> Any:
    """A value the tasks of several passes read: on a cluster, one task whose value it is,
    computed once and held by the caller (a Future; made again if its worker is lost), so no
    pass submits a key that an earlier pass has just released; without one, a delayed
    constant."""
    value = dask.delayed(value, pure=False)
    return client.compute(value) if client is not None else value


def guard_tasks(tiles: Tiles, bytes_per_row: float, fixed: float, what: str,
                client: Any) -> None:
    """The memory guard for each task: a query tile and a reference tile with their working
    copies and states (``bytes_per_row`` per row of the two, plus ``fixed``) must fit in
    fastfs.config.max_memory and in a worker's memory limit."""
    rows = int(np.diff(tiles.splits).max())
    needed = 2 * rows * bytes_per_row + fixed
    limit, where = task_budget(client)
    if needed > limit:
        raise MemoryError(
            f"{what} (tiled) needs tasks of {needed / 2**30:.2f} GiB (a query and a reference "
            f"tile of up to {rows} rows with their working copies), above {where} = "
            f"{limit / 2**30:.2f} GiB; pass a smaller tile_rows")


# --------------------------------------------------------------------------------------------
# the statistics pass


def _tile_stats(tile: Any, relief_data: bool, threshold: int | None) -> dict:
    b = _tile(tile)
    if b.shape[0] == 0:
        return {}
    if not np.isfinite(b).all():
        if not relief_data:
            require_finite(b)
        if np.isinf(b).any():
            raise ValueError("X: contains infinity (missing values are NaN)")
        raise ValueError("X: has missing values (NaN); the tiled mode covers continuous "
                         "features with class labels and no missing value: pass "
                         "mode='broadcast' (X on every worker, the general kernel)")
    out = {"max_abs": float(max(np.max(b), -np.min(b))),
           "lo": b.min(axis=0).astype(np.float64), "hi": b.max(axis=0).astype(np.float64)}
    if threshold is not None:
        s = np.sort(b, axis=0)
        counts = 1 + (np.diff(s, axis=0) != 0).sum(axis=0)
        few = np.flatnonzero(counts <= threshold)
        out["few"] = {int(f): np.unique(s[:, f]) for f in few}
    return out


def tile_statistics(tiles: Tiles, client: Any, *, relief_data: bool = False,
                    threshold: int | None = None) -> dict:
    """max |x|, column minima and maxima over every tile; with ``threshold``, the columns with
    at most ``threshold`` distinct values (as discrete features are found on one machine)."""
    task = dask.delayed(_tile_stats, pure=False)
    parts = [p for p in _compute([task(r, relief_data, threshold) for r in tiles.refs], client)
             if p]
    out = {"max_abs": max(p["max_abs"] for p in parts),
           "lo": np.minimum.reduce([p["lo"] for p in parts]),
           "hi": np.maximum.reduce([p["hi"] for p in parts])}
    if threshold is not None:
        discrete = []
        for f in range(tiles.n_features):
            values = [p["few"].get(f) for p in parts]
            if any(v is None for v in values):
                continue
            if np.unique(np.concatenate(values)).shape[0] <= threshold:
                discrete.append(f)
        out["discrete"] = discrete
    return out


def rescale_exponent(max_abs: float, itemsize: int) -> int:
    """The exponent e of fastfs._scale.exact_rescale for data of this largest magnitude."""
    from ._scale import SCREEN_EXPONENT, column_exponents

    dtype = np.float32 if itemsize == 4 else np.float64
    return int(column_exponents(max_abs, dtype, SCREEN_EXPONENT))


def rescale_exponents(stats: dict, itemsize: int) -> np.ndarray:
    """The exponents e_j of fastfs._scale.exact_rescale_columns (the one-machine Relief
    family's reading) from the column minima and maxima: 0 for a column in range."""
    from ._scale import SCREEN_EXPONENT, column_exponents

    dtype = np.float32 if itemsize == 4 else np.float64
    top = np.maximum(np.abs(stats["lo"]), np.abs(stats["hi"]))
    return column_exponents(top, dtype, SCREEN_EXPONENT)


def _scaled(tile: Any, e: Any) -> np.ndarray:
    """The tile times 2**-e: e one exponent for all of X, or one per column."""
    b = _tile(tile)
    e = np.asarray(e)
    if e.any():
        out = np.empty_like(b)
        np.ldexp(b, -(e.astype(np.int32) if e.ndim else int(e)), out=out)
        return out
    return b


def _min_max(tile: Any, e: int, lo: np.ndarray, inv_range: np.ndarray) -> np.ndarray:
    """The min-max scaled rows (x - lo) * inv_range of one machine's ReliefF and SURF."""
    return np.ascontiguousarray((_scaled(tile, e).astype(np.float64) - lo) * inv_range)


def min_max_scale(stats: dict, e: Any) -> tuple[np.ndarray, np.ndarray]:
    """(lo, 1 / range) of the rescaled columns, as min_max_scaled computes them (0 for a
    constant column)."""
    lo, hi = np.ldexp(stats["lo"], -e), np.ldexp(stats["hi"], -e)
    wide = hi > lo
    inv = np.where(wide, 1.0 / np.where(wide, hi - lo, 1.0), 0.0)
    return lo, inv


# --------------------------------------------------------------------------------------------
# chains: a query tile's state carried through the reference tiles in order


def _aligned_all(value: Any) -> Any:
    """Every array in value (nested in tuples and lists) as the core may read it (_aligned)."""
    if isinstance(value, np.ndarray):
        return _aligned(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_aligned_all(v) for v in value)
    return value


def _aligned_step(step: Callable, *args: Any) -> Any:
    """step(*args) on a worker, with every array argument aligned first: the states, labels
    and thresholds a task receives are views into Dask's message buffers and can start at any
    byte (an int64 read at an odd address is undefined behaviour in C++; the sanitizer build
    stops the worker on it)."""
    return step(*(_aligned_all(a) for a in args))


def run_chains(tiles: Tiles, step: Callable, init: Callable, extra: Callable,
               client: Any) -> list:
    """For every query tile q: state = init(q); then state = step(state, Q, q0, R, r0,
    *extra(q)) for every reference tile in order. Returns the final states in tile order."""
    call = dask.delayed(_aligned_step, pure=False)

    def task(*args):
        return call(step, *args)

    finals = []
    for q in range(tiles.count):
        state = init(q)
        q0 = int(tiles.splits[q])
        # an array argument becomes one key of the graph, not a copy in each of its tasks
        args = [dask.delayed(a, pure=False) if isinstance(a, np.ndarray) else a
                for a in extra(q)]
        for r in range(tiles.count):
            state = task(state, tiles.refs[q], q0, tiles.refs[r], int(tiles.splits[r]), *args)
        finals.append(state)
    return _compute(finals, client)


def _codes_of(codes: np.ndarray, tiles: Tiles) -> list:
    return [np.ascontiguousarray(codes[a:b], dtype=np.int64)
            for a, b in (tiles.rows(t) for t in range(tiles.count))]


def _hit_miss_step(state, Q, q0, R, r0, e, w, qcodes, rcodes_all, splits, n_jobs):
    r = int(np.searchsorted(splits, r0, side="right") - 1)
    return _core.tile_hit_miss(_scaled(Q, e), q0, qcodes, _scaled(R, e), r0, rcodes_all[r], w,
                               *state, resolve_n_jobs(n_jobs))


def nearest_hit_miss(tiles: Tiles, codes: np.ndarray, e: int, weights: Any, n_jobs: Any,
                     client: Any) -> tuple:
    """Every sample's nearest hit and miss (global indices, -1 for none; squared distances,
    inf for none) under the squared weights, as the one-machine scan of the rescaled X."""
    per_tile = _codes_of(codes, tiles)
    w = [] if weights is None else [float(v) for v in weights]
    rcodes = held(per_tile, client)

    def init(q):
        a, b = tiles.rows(q)
        k = b - a
        return (np.full(k, -1, np.int64), np.full(k, np.inf), np.full(k, -1, np.int64),
                np.full(k, np.inf))

    finals = run_chains(tiles, _hit_miss_step, init,
                        lambda q: (e, w, per_tile[q], rcodes, tiles.splits, n_jobs), client)
    return tuple(np.concatenate([f[t] for f in finals]) for t in range(4))


def _take(tile: Any, rows: np.ndarray) -> np.ndarray:
    return _tile(tile)[rows]


def _relief_tile_sum(Q, e, local, hit, miss, parts):
    """Relief's sum over the visits of one query tile (local rows, in visit order) from the
    gathered rows of their hits and misses: parts = [(global indices, rows)] in tile order."""
    idx = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    rows = (np.concatenate([_scaled(p[1], e) for p in parts]) if parts
            else np.zeros((0, _tile(Q).shape[1]), _tile(Q).dtype))
    Xv = _aligned(np.ascontiguousarray(_scaled(Q, e)[local]))
    H = _aligned(np.ascontiguousarray(rows[np.searchsorted(idx, hit)]))
    M = _aligned(np.ascontiguousarray(rows[np.searchsorted(idx, miss)]))
    return _core.relief_rows(Xv, H, M)


def relief_sums(tiles: Tiles, codes: np.ndarray, visit: np.ndarray, e: int, n_jobs: Any,
                client: Any) -> np.ndarray:
    """Relief's unnormalised weights over the visiting order (rescaled units)."""
    hit, _, miss, _ = nearest_hit_miss(tiles, codes, e, None, n_jobs, client)
    take = dask.delayed(_take, pure=False)
    tile_sum = dask.delayed(_relief_tile_sum, pure=False)
    sums = []
    for q in range(tiles.count):
        a, b = tiles.rows(q)
        v = visit[(visit >= a) & (visit < b)]          # this tile's visits, in visit order
        v = v[(hit[v] >= 0) & (miss[v] >= 0)]          # samples without a hit or miss add 0
        if v.size == 0:
            continue
        need = np.unique(np.concatenate([hit[v], miss[v]]))
        parts = []
        for r in range(tiles.count):
            r0, r1 = tiles.rows(r)
            g = need[(need >= r0) & (need < r1)]
            if g.size:
                parts.append((g, take(tiles.refs[r], g - r0)))
        sums.append(tile_sum(tiles.refs[q], e, v - a, hit[v], miss[v], parts))
    total = np.zeros(tiles.n_features)
    for s in _compute(sums, client):
        total += s
    return total


def _knn_step(state, Q, q0, R, r0, e, lo, inv, k, C, rcodes_all, splits, n_jobs):
    r = int(np.searchsorted(splits, r0, side="right") - 1)
    return _core.tile_k_nearest_per_class(_min_max(Q, e, lo, inv), q0, _min_max(R, e, lo, inv),
                                          r0, rcodes_all[r], k, C, *state,
                                          resolve_n_jobs(n_jobs))


def _relieff_step(acc, Q, q0, R, r0, e, qcodes, idx, count, k, C, inv):
    return _core.tile_relieff_contributions(_scaled(Q, e), q0, qcodes, _scaled(R, e), r0, idx,
                                            count, k, C, inv, acc)


def relieff_sums(tiles: Tiles, codes: np.ndarray, n_classes: int, k: int, e: int,
                 lo: np.ndarray, inv: np.ndarray, n_jobs: Any, client: Any) -> np.ndarray:
    """ReliefF's sum of the contributions of every sample (before 1/m)."""
    per_tile = _codes_of(codes, tiles)
    rcodes, lo_d, inv_d = (held(v, client) for v in (per_tile, lo, inv))

    def init(q):
        a, b = tiles.rows(q)
        slots = (b - a) * n_classes
        return (np.full(slots * k, -1, np.int64), np.full(slots * k, np.inf),
                np.zeros(slots, np.int32))

    near = run_chains(tiles, _knn_step, init,
                      lambda q: (e, lo_d, inv_d, k, n_classes, rcodes, tiles.splits, n_jobs),
                      client)
    sums = run_chains(tiles, _relieff_step, lambda q: np.zeros(tiles.n_features),
                      lambda q: (e, per_tile[q], near[q][0], near[q][2], k, n_classes, inv_d),
                      client)
    total = np.zeros(tiles.n_features)
    for s in sums:
        total += s
    return total


def _sums_step(s, Q, q0, R, r0, e, lo, inv, mean, n_jobs):
    return _core.tile_distance_sums(_min_max(Q, e, lo, inv), q0, _min_max(R, e, lo, inv), r0,
                                    mean, s, resolve_n_jobs(n_jobs))


def _counts_step(state, Q, q0, R, r0, e, lo, inv, rcodes_all, splits, near_t, far_t, C,
                 n_jobs):
    r = int(np.searchsorted(splits, r0, side="right") - 1)
    return _core.tile_radius_counts(_min_max(Q, e, lo, inv), q0, _min_max(R, e, lo, inv), r0,
                                    rcodes_all[r], near_t, far_t, C, *state,
                                    resolve_n_jobs(n_jobs))


def _radius_step(acc, Q, q0, R, r0, e, lo, inv, rcodes_all, splits, near_t, far_t, C, coef,
                 n_jobs):
    r = int(np.searchsorted(splits, r0, side="right") - 1)
    return _core.tile_radius_contributions(_min_max(Q, e, lo, inv), q0,
                                           _min_max(R, e, lo, inv), r0, rcodes_all[r], near_t,
                                           far_t, C, coef, acc, resolve_n_jobs(n_jobs))


# columns of the scaled X per SURF threshold task (every row of each): about 32 MB
_COLUMN_BLOCK_BYTES = 32 * 2**20


def _scaled_columns(tile, f0, f1, e, lo, inv):
    """Columns f0 .. f1-1 of a tile, min-max scaled (elementwise: the bits of _min_max)."""
    e = np.asarray(e)
    return _min_max(_tile(tile)[:, f0:f1], e[f0:f1] if e.ndim else e, lo[f0:f1], inv[f0:f1])


def _column_pair_sums(*parts):
    return _core.column_pair_sums(np.ascontiguousarray(np.concatenate(parts, axis=0)))


def surf_threshold(tiles: Tiles, e: int, lo: np.ndarray, inv: np.ndarray, client: Any) -> float:
    """SURF's threshold, the mean distance over all pairs of samples, with one machine's bits:
    each column's pair sum from its sorted values (tasks over blocks of columns holding every
    row), added in column order."""
    m, n = int(tiles.splits[-1]), tiles.n_features
    step = max(1, int(_COLUMN_BLOCK_BYTES // (8 * max(m, 1))))
    cut = dask.delayed(_scaled_columns, pure=False)
    task = dask.delayed(_column_pair_sums, pure=False)
    lo_d, inv_d = held(lo, client), held(inv, client)
    parts = [task(*[cut(t, f0, min(n, f0 + step), e, lo_d, inv_d) for t in tiles.refs])
             for f0 in range(0, n, step)]
    sums = np.concatenate(_compute(parts, client))
    return float(_core.mean_from_column_sums(sums, m))


def radius_sums(tiles: Tiles, codes: np.ndarray, n_classes: int, rule: str, e: int,
                lo: np.ndarray, inv: np.ndarray, n_jobs: Any, client: Any) -> np.ndarray:
    """The sum of the contributions of every sample (before 1/m), constant features 0, for
    SURF ("surf"), SURF* ("surf_star"), MultiSURF ("multisurf") or MultiSURF*
    ("multisurf_star")."""
    m, n = int(tiles.splits[-1]), tiles.n_features
    per_tile = _codes_of(codes, tiles)
    rcodes, lo_d, inv_d = (held(v, client) for v in (per_tile, lo, inv))

    def zeros(q):
        a, b = tiles.rows(q)
        return np.zeros(b - a)

    with_far = rule in ("surf_star", "multisurf_star")
    if rule in ("surf", "surf_star"):
        # SURF's one threshold: the mean distance over all pairs, from column blocks
        t = surf_threshold(tiles, e, lo, inv, client)
        near_t = [np.full(b - a, t) for a, b in (tiles.rows(q) for q in range(tiles.count))]
        far_t = near_t if with_far else [None] * tiles.count
    else:
        # mu and sigma of each sample's m - 1 distances, summed in sample order as on one
        # machine
        s = run_chains(tiles, _sums_step, zeros, lambda q: (e, lo_d, inv_d, None, n_jobs),
                       client)
        mu = [v / float(m - 1) for v in s]
        v = run_chains(tiles, _sums_step, zeros, lambda q: (e, lo_d, inv_d, mu[q], n_jobs),
                       client)
        sigma = [np.sqrt(x / float(m - 1)) for x in v]
        near_t = [a - b / 2.0 for a, b in zip(mu, sigma)]
        far_t = [a + b / 2.0 for a, b in zip(mu, sigma)] if with_far else [None] * tiles.count

    def no_counts(q):
        a, b = tiles.rows(q)
        return (np.zeros((b - a) * n_classes, np.int64), np.zeros((b - a) * n_classes, np.int64))

    counts = run_chains(tiles, _counts_step, no_counts,
                        lambda q: (e, lo_d, inv_d, rcodes, tiles.splits, near_t[q], far_t[q],
                                   n_classes, n_jobs), client)
    far_complement = rule == "multisurf_star"
    coefs = [_core.radius_coefficients(per_tile[q], with_far, far_complement, n_classes,
                                       *counts[q]) for q in range(tiles.count)]

    def no_acc(q):
        a, b = tiles.rows(q)
        return np.zeros((b - a) * n)

    accs = run_chains(tiles, _radius_step, no_acc,
                      lambda q: (e, lo_d, inv_d, rcodes, tiles.splits, near_t[q], far_t[q],
                                 n_classes, coefs[q][0], n_jobs), client)
    total = np.zeros(n)
    for q in range(tiles.count):
        a, b = tiles.rows(q)
        partial = np.zeros(n)
        for row in accs[q].reshape(b - a, n):
            partial += row
        total += np.where(inv > 0, partial + float(coefs[q][1].sum()), 0.0)
    return total
