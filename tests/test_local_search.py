"""Best-first search and simulated annealing (fastfs.best_first, fastfs.simulated_annealing)."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref
from test_search import RTOL, SMALL_CLASS, SMALL_REAL, as_subsets, class_data


def reference_best(X, y, crit, max_size=None):
    """The subset every search over all subsets of size <= max_size settles on: J within a tie
    of the largest, then the smaller subset, then the smaller sorted indices."""
    n = X.shape[1]
    max_size = n if max_size is None else max_size
    cands = [(c, crit(X, y, list(c))) for s in range(1, max_size + 1)
             for c in itertools.combinations(range(n), s)]
    top = max(v for _, v in cands)
    tied = [c for c, v in cands if not ref.beats(top, v)]
    best = min(tied, key=lambda c: (len(c), c))
    return list(best), dict(cands)[best]


def reference_best_first(X, y, crit, max_size, patience, removals=False):
    """Kohavi and John's best-first search written from its description: returns the
    expanded subsets in order and the number of evaluations."""
    n = X.shape[1]
    J = {}

    def children(key):
        out = []
        if len(key) < max_size:
            out += [tuple(sorted(key + (x,))) for x in range(n) if x not in key]
        if removals and len(key) > 1:
            out += [tuple(f for f in key if f != x) for x in key]
        return out

    open_list = []

    def expand(key):
        for c in children(key):
            if c not in J:
                J[c] = crit(X, y, list(c))
                open_list.append(c)

    expand(())
    expanded, best, stale = [], -np.inf, 0
    while open_list:
        v = min(open_list, key=lambda c: (-J[c], len(c), c))
        open_list.remove(v)
        expanded.append(v)
        if ref.beats(J[v], best):
            best, stale = J[v], 0
        else:
            stale += 1
        expand(v)
        if patience is not None and stale >= patience:
            break
    return expanded, len(J)


CRITERIA = [
    ("j3", "j3", ref.criterion("j3"), SMALL_CLASS),
    ("least_squares", "least_squares", ref.criterion("least_squares"), SMALL_REAL),
    ("loo_knn_accuracy", "loo_knn_accuracy", ref.criterion("loo_knn_accuracy"), SMALL_CLASS),
    ("margin", "margin", ref.criterion("margin"), SMALL_CLASS),
    ("j1", "j1", ref.criterion("j1"), SMALL_CLASS),
]
IDS = [c[0] for c in CRITERIA]


# ------------------------------------------------------------------------------------------
# best-first


@pytest.mark.parametrize("removals", [False, True])
@pytest.mark.parametrize("index", range(len(CRITERIA)), ids=IDS)
def test_best_first_without_patience_equals_exhaustive(index, removals):
    _, crit, ref_crit, (X, y) = CRITERIA[index]
    got = fastfs.best_first(X, y, criterion=crit, patience=None, removals=removals)
    n = X.shape[1]
    assert got.n_evaluations == 2**n - 1
    want, score = reference_best(X, y, ref_crit)
    assert sorted(int(i) for i in got.selected) == want
    assert got.score == pytest.approx(score, rel=RTOL)
    exh = fastfs.exhaustive(X, y, "best", criterion=crit)
    assert sorted(int(i) for i in got.selected) == sorted(int(i) for i in exh.selected)


@pytest.mark.parametrize("k", [1, 3])
def test_best_first_with_a_size_limit(k):
    X, y = SMALL_CLASS
    got = fastfs.best_first(X, y, k, criterion="loo_knn_accuracy", patience=None)
    want, score = reference_best(X, y, ref.criterion("loo_knn_accuracy"), k)
    assert sorted(int(i) for i in got.selected) == want
    assert all(len(s) <= k for s in got.subsets)


@pytest.mark.parametrize("patience,removals", [(1, False), (3, False), (5, True), (5, False)])
@pytest.mark.parametrize("index", [0, 1, 2], ids=IDS[:3])
def test_best_first_expansions_match_the_reference(index, patience, removals):
    _, crit, ref_crit, (X, y) = CRITERIA[index]
    got = fastfs.best_first(X, y, criterion=crit, patience=patience, removals=removals)
    expanded, n_eval = reference_best_first(X, y, ref_crit, X.shape[1], patience, removals)
    assert as_subsets(got.subsets) == tuple(expanded)
    assert_allclose(got.history, [ref_crit(X, y, list(s)) for s in expanded], rtol=RTOL)
    assert got.n_evaluations == n_eval
    # the result is the best subset evaluated: never below any expanded one
    assert got.score >= max(got.history) or ref.tied(got.score, max(got.history))
    assert got.score == pytest.approx(ref_crit(X, y, sorted(int(i) for i in got.selected)),
                                      rel=RTOL)


def test_best_first_patience_and_budget():
    X, y = class_data(4, m=60, n=10)
    got = fastfs.best_first(X, y, criterion="j3", patience=2)
    # the last two expansions did not beat the best expanded before them
    h = got.history
    assert len(h) >= 3
    assert all(not ref.beats(v, max(h[:-2])) for v in h[-2:])
    capped = fastfs.best_first(X, y, criterion="j3", patience=None, max_evaluations=40)
    # the budget is checked before each expansion: at most one expansion (<= n) beyond it
    assert 40 <= capped.n_evaluations < 40 + 10


def test_best_first_callable_callback_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = SMALL_CLASS
    calls = []

    def J(Xs, yy):
        calls.append(1)
        return ref.j3(Xs, yy)

    a = fastfs.best_first(X, y, criterion=J)
    b = fastfs.best_first(X, y, criterion="j3")
    assert as_subsets(a.subsets) == as_subsets(b.subsets)
    assert a.n_evaluations == len(calls)
    seen = []
    c = fastfs.best_first(pd.DataFrame(X, columns=list("abcdefgh")), y, criterion="j3",
                          callback=lambda s: seen.append(s.step) or s.step == 2)
    assert seen == [0, 1, 2] and c.stopped_early
    assert c.selected_names is not None


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_best_first_does_not_depend_on_threads(n_jobs):
    X, y = class_data(2, m=60, n=10)
    a = fastfs.best_first(X, y, criterion="loo_knn_accuracy", n_jobs=n_jobs)
    b = fastfs.best_first(X, y, criterion="loo_knn_accuracy", n_jobs=1)
    assert as_subsets(a.subsets) == as_subsets(b.subsets)
    assert_array_equal(a.history, b.history)


# ------------------------------------------------------------------------------------------
# simulated annealing


@pytest.mark.parametrize("k", ["best", 3])
@pytest.mark.parametrize("index", range(len(CRITERIA)), ids=IDS)
def test_annealing_reproducible_and_never_worse_than_its_start(index, k):
    _, crit, ref_crit, (X, y) = CRITERIA[index]
    a = fastfs.simulated_annealing(X, y, k, criterion=crit, n_iter=150, random_state=7)
    b = fastfs.simulated_annealing(X, y, k, criterion=crit, n_iter=150, random_state=7,
                                   n_jobs=2)
    assert as_subsets(a.subsets) == as_subsets(b.subsets)
    assert_array_equal(a.history, b.history)
    assert len(a.history) == 151
    assert a.score >= a.history[0]
    assert ref.tied(a.score, a.history.max())
    if k != "best":
        assert all(len(s) == k for s in a.subsets)
    # every recorded J is the criterion of its subset (the incremental state kept in step)
    for s, v in list(zip(a.subsets, a.history))[::15]:
        assert v == pytest.approx(ref_crit(X, y, list(s)), rel=RTOL)
    c = fastfs.simulated_annealing(X, y, k, criterion=crit, n_iter=150, random_state=8)
    assert as_subsets(c.subsets) != as_subsets(a.subsets)


def test_annealing_moves_and_acceptance():
    X, y = SMALL_CLASS
    # a zero temperature takes only moves that do not lower J
    greedy = fastfs.simulated_annealing(X, y, criterion="j3", n_iter=200,
                                        schedule=np.zeros(200), random_state=1)
    h = greedy.history
    assert all(not ref.beats(h[i], h[i + 1]) for i in range(len(h) - 1))
    # a start subset; every step moves one feature (flip) or none
    start = [0, 3]
    got = fastfs.simulated_annealing(X, y, criterion="j3", n_iter=100, initial=start,
                                     random_state=2)
    assert got.subsets[0] == (0, 3)
    for s, t in zip(got.subsets, got.subsets[1:]):
        assert len(set(s) ^ set(t)) <= 1 and len(t) >= 1
    # a huge temperature takes almost every move
    hot = fastfs.simulated_annealing(X, y, criterion="j3", n_iter=200,
                                     schedule=lambda t: 1e12, random_state=3)
    moved = sum(s != t for s, t in zip(hot.subsets, hot.subsets[1:]))
    assert moved >= 190


def test_annealing_schedules():
    X, y = SMALL_CLASS
    for kw in ({"schedule": "linear"}, {"initial_temperature": 0.5, "cooling": 0.99},
               {"initial_temperature": 0.5, "schedule": "linear"}):
        got = fastfs.simulated_annealing(X, y, criterion="j3", n_iter=50, random_state=0, **kw)
        assert got.score >= got.history[0]
    seen = []
    got = fastfs.simulated_annealing(X, y, criterion="j3", n_iter=50, random_state=0,
                                     callback=lambda s: seen.append(s.step) or s.step == 9)
    assert seen == list(range(10)) and got.stopped_early and got.history.shape == (10,)


def test_bad_input():
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="patience"):
        fastfs.best_first(X, y, criterion="j3", patience=0)
    with pytest.raises(ValueError, match="max_evaluations"):
        fastfs.best_first(X, y, criterion="j3", max_evaluations=0)
    wide = np.tile(X, 3)  # 24 features: 2**24 - 1 subsets without a stop
    with pytest.raises(ValueError, match="patience.*max_evaluations"):
        fastfs.best_first(wide, y, criterion="j3", patience=None)
    fastfs.best_first(wide, y, 2, criterion="j3", patience=None)  # 300 subsets of size <= 2
    with pytest.raises(ValueError, match="n_features_to_select"):
        fastfs.best_first(X, y, 9, criterion="j3")
    with pytest.raises(ValueError, match="n_features_to_select"):
        fastfs.simulated_annealing(X, y, "auto", criterion="j3")
    with pytest.raises(ValueError, match="criterion"):
        fastfs.best_first(X, y, criterion="nope")
    with pytest.raises(ValueError, match="n_iter"):
        fastfs.simulated_annealing(X, y, criterion="j3", n_iter=0)
    with pytest.raises(ValueError, match="schedule"):
        fastfs.simulated_annealing(X, y, criterion="j3", schedule="cubic")
    with pytest.raises(ValueError, match="schedule"):
        fastfs.simulated_annealing(X, y, criterion="j3", n_iter=5, schedule=[1.0, 2.0])
    with pytest.raises(ValueError, match="schedule"):
        fastfs.simulated_annealing(X, y, criterion="j3", n_iter=2, schedule=[1.0, -2.0])
    with pytest.raises(ValueError, match="initial_temperature"):
        fastfs.simulated_annealing(X, y, criterion="j3", initial_temperature=-1.0)
    with pytest.raises(ValueError, match="cooling"):
        fastfs.simulated_annealing(X, y, criterion="j3", cooling=1.5)
    with pytest.raises(ValueError, match="cooling"):
        fastfs.simulated_annealing(X, y, criterion="j3", cooling=0.9, schedule="linear")
    with pytest.raises(ValueError, match="initial"):
        fastfs.simulated_annealing(X, y, criterion="j3", initial=np.zeros(8, dtype=bool))
    with pytest.raises(ValueError, match="initial"):
        fastfs.simulated_annealing(X, y, 3, criterion="j3", initial=[0, 1])
    with pytest.raises(ValueError, match="X"):
        fastfs.simulated_annealing(X[:, :1], y, criterion="j3")
    with pytest.raises(TypeError, match="random_state"):
        fastfs.simulated_annealing(X, y, criterion="j3", random_state="a")


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("run", [
    lambda X, y: fastfs.best_first(X, y, criterion="j3", patience=None,
                                   max_evaluations=10**6, n_jobs=2),
    lambda X, y: fastfs.simulated_annealing(X, y, criterion="j3", n_iter=10**6,
                                            random_state=0),
], ids=["best_first", "annealing"])
def test_ctrl_c(run):
    from test_interrupt import PROMPT, seconds_to_interrupt

    gen = np.random.default_rng(2)
    X = gen.standard_normal((400, 300))
    y = gen.integers(0, 3, 400)
    latency = seconds_to_interrupt(lambda: run(X, y))
    assert latency is not None and latency < PROMPT, latency


def test_annealing_memory_guard(restore_max_memory):
    X, y = SMALL_CLASS
    fastfs.config.max_memory = 10**6
    with pytest.raises(MemoryError, match="n_iter"):
        fastfs.simulated_annealing(X, y, criterion="j3", n_iter=10**5, random_state=0)
