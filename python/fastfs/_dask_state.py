"""fastfs.dask: G-flip and the distance-criterion searches with the m x m distance state split
by row blocks across the workers.

Each block (rows r0 .. r1-1 of the state, every column, samples in class order) lives in a Dask
actor on one worker for the whole run, so no worker ever holds more than its share of the m x m
matrix. The driver runs on the client, step by step as the search of one machine does: a state
change (rebuild from a subset, add or remove a feature) goes to every block; a candidate's score
gathers one term a sample from the blocks (its margin theta, or whether leave-one-out k-NN
classifies it right; each is found along the sample's own row, inside its block) and adds them
in class order, serially, as one machine does. The entries of every block are computed with the
expressions of one machine's state, so the scores are the same bits and the selections the same.

A lost worker loses the blocks it held: the driver rebuilds them on the remaining workers (from
the last rebuild of the state and the feature updates since, replayed in order: the same bits)
and runs the step again; when that keeps failing, or no worker is left, the error says so.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import fastfs._core as _core

from ._validation import resolve_n_jobs

# A step is run again at most this many times after losing workers.
_MAX_RECOVERIES = 3


class _StateBlock:
    """One row block of the distance state (runs as a Dask actor on a worker)."""

    def __init__(self, values: np.ndarray, codes: np.ndarray, r0: int, r1: int,
                 n_jobs: Any) -> None:
        from ._dask_tasks import _aligned

        self.block = _core.DistanceRowBlock(_aligned(values), _aligned(codes), int(r0),
                                            int(r1), resolve_n_jobs(n_jobs))

    def assign(self, subset: list) -> None:
        self.block.assign(subset)

    def add_feature(self, feature: int, sign: float) -> None:
        self.block.add_feature(feature, sign)

    def margins(self, features: list, signs: list) -> np.ndarray:
        return self.block.margins(features, signs)

    def margins_of_subset(self, subset: list) -> np.ndarray:
        return self.block.margins_of_subset(subset)

    def knn_correct(self, features: list, signs: list, k: int) -> np.ndarray:
        return self.block.knn_correct(features, signs, k)

    def knn_correct_of_subset(self, subset: list, k: int) -> int:
        return self.block.knn_correct_of_subset(subset, k)

    def ping(self) -> int:
        return 0


# How long a distance state waits for a worker when the cluster has none at the moment.
_WORKER_WAIT_SECONDS = 60.0


class _Done:
    """The result of a call run in this process, with the interface of an ActorFuture."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def _worker_lost(err: BaseException) -> bool:
    """Whether an actor call failed because its worker (or the connection to it) is gone,
    rather than because of the call itself (a ValueError / TypeError of the core)."""
    if isinstance(err, (ValueError, TypeError, MemoryError)) and \
            "worker" not in str(err).lower() and "actor" not in str(err).lower():
        return False
    return True


class SplitState:
    """The m x m distance state of ``values`` (samples x features, float64 or float32, class
    codes ``codes``) split into row blocks held by actors on the workers of ``client`` (in this
    process when ``client`` is None)."""

    def __init__(self, values: np.ndarray, codes: np.ndarray, client: Any, n_blocks: Any,
                 n_jobs: Any) -> None:
        self.m = int(values.shape[0])
        self.client = client
        self.n_jobs = n_jobs
        self.log: list = []          # state changes since (and including) the last assign
        self._inputs = (values, codes)
        if client is None:
            n = 1 if n_blocks is None else int(n_blocks)
        else:
            workers = self._workers()
            n = len(workers) if n_blocks is None else int(n_blocks)
        if n < 1:
            raise ValueError(f"n_blocks: must be >= 1, got {n}")
        n = min(n, self.m)
        cuts = [round(i * self.m / n) for i in range(n + 1)]
        self.bounds = list(zip(cuts[:-1], cuts[1:]))
        if client is None:
            self.shared = (values, codes)
            self.actors = [_StateBlock(values, codes, a, b, n_jobs) for a, b in self.bounds]
        else:
            self.shared = tuple(client.scatter([values, codes], broadcast=True, hash=False))
            self.actors = [None] * n
            self._place(range(n))

    def _workers(self) -> list:
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            # A cluster between workers (a nanny restarting one, an adaptive cluster scaling
            # up) gets a moment to have one again.
            if not getattr(self.client, "asynchronous", False):
                try:
                    self.client.wait_for_workers(1, timeout=_WORKER_WAIT_SECONDS)
                except Exception:  # the timeout, or a client that cannot wait
                    pass
            workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise RuntimeError("fastfs.dask: the cluster has no worker to hold the distance "
                               f"state (none joined within {_WORKER_WAIT_SECONDS:g} s)")
        return workers

    def _place(self, which: Any, avoid: Any = ()) -> None:
        """Create the actors of the blocks ``which`` on the workers (but ``avoid``),
        round-robin."""
        workers = [w for w in self._workers() if w not in avoid]
        if not workers:
            raise RuntimeError("fastfs.dask: no worker left to hold the distance state")
        self._check_memory(which, workers)
        futures = {}
        for i in which:
            a, b = self.bounds[i]
            w = workers[i % len(workers)]
            futures[i] = self.client.submit(_StateBlock, *self.shared, a, b, self.n_jobs,
                                            actor=True, workers=[w], allow_other_workers=False,
                                            pure=False)
        for i, f in futures.items():
            self.actors[i] = f.result()

    def _check_memory(self, which: Any, workers: list) -> None:
        """Refuse blocks that cannot fit: a worker past its memory limit is killed by its
        nanny, and the block would be lost again wherever it went."""
        info = self.client.scheduler_info()["workers"]
        need: dict = {}
        for i in which:
            a, b = self.bounds[i]
            w = workers[i % len(workers)]
            need[w] = need.get(w, 0) + (b - a) * self.m * 8
        for w, nbytes in need.items():
            limit = info.get(w, {}).get("memory_limit") or 0
            if limit and nbytes > 0.8 * limit:
                raise ValueError(
                    f"n_blocks: the distance state's blocks need {nbytes / 2**30:.2f} GiB on a "
                    f"worker whose memory limit is {limit / 2**30:.2f} GiB (the state is "
                    f"{self.m} x {self.m} float64 = {self.m * self.m * 8 / 2**30:.2f} GiB in "
                    f"all); use more workers, or workers with more memory")

    def close(self) -> None:
        self.actors = []
        self.shared = ()

    # ----------------------------------------------------------------------------------------

    def _call(self, name: str, *args: Any, change: bool = False) -> list:
        """name(*args) on every block, the results in block order. The blocks of a lost worker
        are rebuilt elsewhere (a state change is then complete: it is in the replayed log) and
        a query is asked again of them only."""
        if self.client is None:
            return [getattr(a, name)(*args) for a in self.actors]
        results: list = [None] * len(self.actors)
        pending = list(range(len(self.actors)))
        error: BaseException | None = None
        for _ in range(_MAX_RECOVERIES + 1):
            lost = []
            if pending:
                futures = []
                for i in pending:
                    try:   # (a proxy whose worker is known lost fails here already)
                        futures.append((i, getattr(self.actors[i], name)(*args)))
                    except Exception as err:  # noqa: BLE001 - sorted by _worker_lost
                        if not _worker_lost(err):
                            raise
                        lost.append(i)
                        error = err
                for i, f in futures:
                    try:
                        results[i] = f.result()
                    except Exception as err:  # noqa: BLE001 - sorted by _worker_lost
                        if not _worker_lost(err):
                            raise
                        lost.append(i)
                        error = err
            else:
                lost = self._dead_blocks()
            if not lost:
                return results
            try:
                self._recover(lost)
            except Exception as err:  # noqa: BLE001
                if not _worker_lost(err) and not isinstance(err, RuntimeError):
                    raise
                error = err
                pending = []          # next round: find the dead blocks and rebuild them
                continue
            pending = [] if change else lost
            if change:
                return results
        raise RuntimeError(
            f"fastfs.dask: lost the workers holding blocks of the distance state "
            f"{_MAX_RECOVERIES + 1} times in one step; the run stopped (no partial result)"
        ) from error

    def _dead_blocks(self) -> list:
        alive = set(self._workers())
        return [i for i, a in enumerate(self.actors)
                if getattr(a, "_address", None) not in alive]

    def _recover(self, lost: list) -> None:
        # The blocks of a lost worker (and any other block it held) get new actors, then the
        # state changes since the last rebuild, replayed in order: the same bits.
        # (the scheduler may list a dead worker for a while: its address is avoided)
        dead = {getattr(self.actors[i], "_address", None) for i in lost}
        lost = sorted(set(lost) | set(self._dead_blocks())
                      | {i for i, a in enumerate(self.actors)
                         if getattr(a, "_address", None) in dead})
        self.shared = tuple(self.client.scatter(list(self._inputs), broadcast=True,
                                                hash=False))
        self._place(lost, avoid=dead)
        for name, args in self.log:
            futures = [getattr(self.actors[i], name)(*args) for i in lost]
            for f in futures:
                f.result()

    def _change(self, name: str, *args: Any) -> None:
        if name == "assign":
            self.log = []
        self.log.append((name, args))
        self._call(name, *args, change=True)

    # state changes -----------------------------------------------------------------------

    def assign(self, subset: Any) -> None:
        self._change("assign", [int(j) for j in subset])

    def add_feature(self, feature: int, sign: float) -> None:
        self._change("add_feature", int(feature), float(sign))

    # scores ------------------------------------------------------------------------------

    def margin_scores(self, features: list, signs: list, utility: str, beta: float) -> list:
        """e of D + signs[k] delta(features[k]) (feature -1: D itself) for every k."""
        parts = self._call("margins", [int(f) for f in features], [float(s) for s in signs])
        theta = np.concatenate(parts, axis=1)
        return [_core.utility_sum(np.ascontiguousarray(theta[k]), utility, beta)
                for k in range(len(features))]

    def margin_score_of(self, subset: Any, utility: str, beta: float) -> float:
        parts = self._call("margins_of_subset", [int(j) for j in subset])
        return _core.utility_sum(np.ascontiguousarray(np.concatenate(parts)), utility, beta)

    def knn_accuracies(self, features: list, signs: list, k: int) -> list:
        parts = self._call("knn_correct", [int(f) for f in features],
                           [float(s) for s in signs], int(k))
        total = np.zeros(len(features), dtype=np.int64)
        for p in parts:
            total += np.asarray(p, dtype=np.int64)
        return [int(c) / self.m for c in total]

    def knn_accuracy_of(self, subset: Any, k: int) -> float:
        parts = self._call("knn_correct_of_subset", [int(j) for j in subset], int(k))
        return sum(int(p) for p in parts) / self.m


def _range2(values: np.ndarray) -> list:
    """(max - min)^2 of every feature in float64, as the core computes it."""
    v = np.asarray(values, dtype=np.float64)
    r = v.max(axis=0) - v.min(axis=0)
    return (r * r).tolist()


def _require_finite_distances(range2: list) -> None:
    total = 0.0
    for r in range2:
        total += r
    if not total <= 0.25 * np.finfo(np.float64).max:
        raise ValueError("X: values too large for a distance-based method: squared distances "
                         "between samples overflow float64; rescale X")


# --------------------------------------------------------------------------------------------
# G-flip


def _gflip_once(state: SplitState, n: int, range2: list, utility: str, beta: float,
                max_epochs: int, initial: Any, seed: int, number: int) -> dict:
    """Restart ``number`` of G-flip on the split state: GFlip::run_once of the core, step for
    step (the same candidates scored on the same state, the same comparisons)."""
    dominance = 1e4
    orders = _core.gflip_orders(seed, number, n, max_epochs)
    support = ([bool(v) for v in initial] if initial is not None
               else [number % 2 == 1] * n)
    selected = [j for j in range(n) if support[j]]
    st = {"in_range2": 0.0}

    def rebuild(skip: int = -1) -> None:
        state.assign([j for j in range(n) if support[j] and j != skip])
        total = 0.0
        for j in range(n):
            if support[j]:
                total += range2[j]
        st["in_range2"] = total

    def dominant(j: int) -> bool:
        r = range2[j]
        return r > dominance * (st["in_range2"] - r)

    def toggle(j: int) -> None:
        support[j] = not support[j]
        st["in_range2"] += range2[j] if support[j] else -range2[j]
        if support[j]:
            selected.append(j)
        else:
            selected.remove(j)

    def score_state() -> float:
        return state.margin_scores([-1], [0.0], utility, beta)[0]

    rebuild()
    current = score_state()
    history: list = []
    n_flips = n_epochs = 0
    for epoch in range(max_epochs):
        visit = [int(v) for v in orders[epoch]]
        flips, pos, block = 0, 0, 4
        while pos < n:
            first = visit[pos]
            if support[first] and dominant(first):
                rebuild(first)
                candidate = score_state()
                if candidate > current:
                    current = candidate
                    toggle(first)
                    flips += 1
                else:
                    state.add_feature(first, 1.0)
                pos += 1
                continue
            cols: list = []
            signs: list = []
            while len(cols) < block and pos + len(cols) < n:
                j = visit[pos + len(cols)]
                if cols and support[j] and dominant(j):
                    break
                cols.append(j)
                signs.append(-1.0 if support[j] else 1.0)
            scores = state.margin_scores(cols, signs, utility, beta)
            used, flipped = len(cols), False
            for k, candidate in enumerate(scores):
                if candidate > current:   # strict: ties keep F
                    state.add_feature(cols[k], signs[k])
                    current = candidate
                    toggle(visit[pos + k])
                    flips += 1
                    used, flipped = k + 1, True
                    break
            pos += used
            block = max(1, block // 2) if flipped else min(16, block * 2)
        n_flips += flips
        n_epochs = epoch + 1
        if flips > 0:
            rebuild()
            current = score_state()
        history.append(current)
        if flips == 0:
            break
    return {"support": np.array(support, dtype=bool), "selected": selected, "score": current,
            "history": history, "n_epochs": n_epochs, "n_flips": n_flips}


def gflip_split(X: Any, y: Any, *, utility: str, beta: float, max_epochs: int,
                n_restarts: int, initial: Any, random_state: Any, n_jobs: Any, client: Any,
                n_blocks: Any):
    """G-flip with the distance state split by row blocks across the workers (see the module
    docstring); the result of :func:`fastfs.gflip`."""
    from ._results import GFlipResult, gflip_empty_message, without_constant_features
    from ._scale import score_power, unscale, utility_beta
    from ._validation import (check_int, check_option, check_random_state, check_real,
                              check_support, prepare_scaled)
    from .margin import UTILITIES

    check_option(utility, "utility", UTILITIES)
    beta = check_real(beta, "beta", positive=True)
    max_epochs = check_int(max_epochs, "max_epochs")
    n_restarts = check_int(n_restarts, "n_restarts")
    seed = check_random_state(random_state)
    cx, labels, values, e = prepare_scaled(X, y, "gflip")
    n = values.shape[1]
    init = None if initial is None else check_support(initial, n).astype(bool).tolist()
    range2 = _range2(values)
    _require_finite_distances(range2)
    b = utility_beta(utility, beta, e)
    state = SplitState(values, labels.codes, client, n_blocks, n_jobs)
    try:
        runs = [_gflip_once(state, n, range2, utility, b, max_epochs, init, seed, r)
                for r in range(n_restarts)]
    finally:
        state.close()
    best = 0
    for r in range(1, n_restarts):
        if runs[r]["score"] > runs[best]["score"]:
            best = r
    res = runs[best]
    power = score_power(utility)
    support, selected = without_constant_features(values, res["support"], res["selected"])
    out = GFlipResult(
        support=support,
        selected=selected,
        score=float(unscale(float(res["score"]), power, e, "the score")),
        history=unscale(np.asarray(res["history"], dtype=np.float64), power, e,
                        "the score history"),
        restart_scores=unscale(np.array([r["score"] for r in runs], dtype=np.float64), power,
                               e, "the restart scores"),
        feature_names=cx.feature_names,
        n_epochs=int(res["n_epochs"]),
        n_flips=int(res["n_flips"]),
        best_restart=best,
        stopped_early=False,
    )
    if out.selected.size == 0:
        warnings.warn(gflip_empty_message(out.restart_scores, out.score, utility, n_restarts,
                                          initial), UserWarning, stacklevel=3)
    return out


# --------------------------------------------------------------------------------------------
# distance-criterion searches


class RemoteDistanceCriterion:
    """DistanceCriterion of the core ('margin', 'loo_knn_accuracy') over a split state: the
    search driver of one machine calls it through the core's Criterion interface."""

    def __init__(self, state: SplitState, kind: str, params: dict, range2: list) -> None:
        self.state = state
        self.kind = kind
        self.utility = params.get("utility", "linear")
        self.beta = float(params.get("beta", 1.0))
        self.k = int(params.get("n_neighbors", 1))
        self.range2 = range2
        self.S: list = []

    def _scores(self, feats: list, signs: list) -> list:
        out: list = []
        for lo in range(0, len(feats), 16):    # the core's blocks of candidates
            f, s = feats[lo:lo + 16], signs[lo:lo + 16]
            if self.kind == "margin":
                out += self.state.margin_scores(f, s, self.utility, self.beta)
            else:
                out += self.state.knn_accuracies(f, s, self.k)
        return out

    def reset(self, subset: np.ndarray) -> None:
        self.S = [int(j) for j in subset]
        self.state.assign(self.S)

    def add(self, x: int) -> None:
        self.S.append(int(x))
        self.state.add_feature(int(x), 1.0)

    def remove(self, x: int) -> None:
        self.S.remove(int(x))
        self.state.assign(self.S)

    def current(self) -> float:
        return self._scores([-1], [0.0])[0]

    def score_additions(self, cands: np.ndarray) -> list:
        c = [int(j) for j in cands]
        return self._scores(c, [1.0] * len(c))

    def score_removals(self, cands: np.ndarray) -> list:
        total = 0.0
        for f in self.S:
            total += self.range2[f]
        out: list = [0.0] * len(cands)
        easy, where = [], []
        # An exact distance tie decides 1-NN accuracy and the zero-one margin: the residue of
        # D - delta(x) must not (the core checks every sample's hit and miss against a bound
        # on it and scores the doubtful candidates from scratch, which gives the from-scratch
        # score in every case; here every removal is scored from scratch)
        exact = self.kind != "margin" or self.utility == "zero_one"
        for i, c in enumerate(int(j) for j in cands):
            r = self.range2[c]
            if exact or r > 1e4 * (total - r):
                t = list(self.S)
                t.remove(c)
                out[i] = self.evaluate(t)
            else:
                easy.append(c)
                where.append(i)
        for i, v in zip(where, self._scores(easy, [-1.0] * len(easy))):
            out[i] = v
        return out

    def evaluate(self, subset: Any) -> float:
        if self.kind == "margin":
            return self.state.margin_score_of(subset, self.utility, self.beta)
        return self.state.knn_accuracy_of(subset, self.k)


class TaskSubsetCriterion:
    """A criterion evaluated from scratch on every subset (the scatter criteria, a callable),
    its candidate moves scored in blocks as tasks (criterion_evaluate_many on the workers):
    SubsetCriterion of the core, with the moved subsets sorted as it sorts them."""

    def __init__(self, p: Any, client: Any, n_jobs: Any, block_subsets: Any) -> None:
        from ._dask_tasks import _shared

        self.shared = _shared(client, p.values, p.codes, p.y, p.fn)
        self.spec = p.spec
        self.client, self.n_jobs, self.block = client, n_jobs, block_subsets
        self.S: list = []

    def _score(self, subsets: list) -> list:
        from ._dask_tasks import _run_blocks, _score_subsets

        if not subsets:
            return []
        step = self.block or max(1, -(-len(subsets) // 8))
        v, c, yv, fn = self.shared
        parts = _run_blocks(_score_subsets,
                            [(v, c, yv, self.spec, fn, subsets[a:a + step],
                              self.n_jobs) for a in range(0, len(subsets), step)], self.client)
        return [float(x) for part in parts for x in part]

    def reset(self, subset: np.ndarray) -> None:
        self.S = [int(j) for j in subset]

    def add(self, x: int) -> None:
        self.S.append(int(x))

    def remove(self, x: int) -> None:
        self.S.remove(int(x))

    def current(self) -> float:
        return self._score([sorted(self.S)])[0]

    def score_additions(self, cands: np.ndarray) -> list:
        return self._score([sorted(self.S + [int(x)]) for x in cands])

    def score_removals(self, cands: np.ndarray) -> list:
        out = []
        for x in cands:
            t = list(self.S)
            t.remove(int(x))
            out.append(sorted(t))
        return self._score(out)

    def evaluate(self, subset: Any) -> float:
        t = [int(j) for j in subset]
        return self._score([sorted(t) if self.spec.kind == "callable" else t])[0]


_TASK_KINDS = ("j1", "j2", "j3", "divergence", "bhattacharyya", "callable")


def search_split(strategy: str, X: Any, y: Any, n_features_to_select: Any, *, criterion: Any,
                 tol: Any, n_jobs: Any, client: Any, n_blocks: Any, allow_auto: bool,
                 backward: bool, width: int = 1, block_subsets: Any = None,
                 allow_tasks: bool = False):
    """The search ``strategy`` of :mod:`fastfs.search` with a distance criterion whose state is
    split across the workers (or, with ``allow_tasks``, a criterion evaluated from scratch
    whose candidate subsets are scored in blocks as tasks); the result of one machine."""
    from . import search as _search
    from .criteria import prepare, resolve

    crit = resolve(criterion)
    tasks = allow_tasks and crit.kind in _TASK_KINDS
    if crit.kind not in ("margin", "loo_knn_accuracy") and not tasks:
        served = "'margin' and 'loo_knn_accuracy'" + (
            ", 'j1', 'j2', 'j3', 'divergence', 'bhattacharyya' and callables"
            if allow_tasks else "")
        raise ValueError(f"criterion: fastfs.dask.{strategy} serves {served}, got "
                         f"{crit.kind!r}")
    # The state is split across the workers: one machine's memory guard does not apply.
    p = prepare(X, y, crit, n_jobs, f"fastfs.{strategy}", guard=False)
    n = p.values.shape[1]
    k, best, auto = _search._target(n_features_to_select, n, allow_auto=allow_auto)
    tol = _search._tolerance(tol, n_features_to_select, best, auto, backward)
    stand_in = np.zeros((1, n))
    scaled_tol = p.scale_J(tol)
    if tasks:
        J = TaskSubsetCriterion(p, client, n_jobs, block_subsets)
        out = _core.search(strategy, stand_in, None, None, _core.CriterionSpec("remote"), J, k,
                           best, auto, scaled_tol, 0, 0, width, 0.0, False, 1, None)
        return _search._search_result(out, p)
    range2 = _range2(p.values)
    _require_finite_distances(range2)
    state = SplitState(p.values, p.codes, client, n_blocks, n_jobs)
    try:
        J = RemoteDistanceCriterion(state, crit.kind, p.params, range2)
        out = _core.search(strategy, stand_in, None, None, _core.CriterionSpec("remote"), J, k,
                           best, auto, scaled_tol, 0, 0, width, 0.0, False, 1, None)
    finally:
        state.close()
    return _search._search_result(out, p)
