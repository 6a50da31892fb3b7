"""One result vocabulary (docs/results.md): history, restart_scores, best_restart,
stopped_early, n_iter and n_epochs mean the same in every result that has them."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
from fastfs import _core


@pytest.fixture
def xor(rng):
    X = rng.standard_normal((80, 6))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    return X, y


def _first_best(scores):
    return int(np.flatnonzero(scores == np.max(scores))[0])


def _stop_at_first(state):
    return True


def test_restart_words_mean_the_same_for_every_restarting_method(xor):
    X, y = xor
    t = X[:, 0] * 2 + X[:, 1]
    runs = {"gflip": fastfs.gflip(X, y, n_restarts=3, random_state=1),
            "simba": fastfs.simba(X, y, n_restarts=3, n_iter=40, random_state=1),
            "rgs": fastfs.rgs(X, t, n_restarts=3, random_state=1)}
    for name, res in runs.items():
        # restart_scores: one final score per restart; best_restart: the first largest
        assert res.restart_scores.shape == (3,), name
        assert res.best_restart == _first_best(res.restart_scores), name
        assert res.stopped_early is False, name
    # history: the returned restart's own steps, never a list over restarts
    g = runs["gflip"]
    assert g.history.shape == (g.n_epochs,)
    assert g.history[-1] == g.score
    assert runs["simba"].history.size == 0 and runs["rgs"].history.size == 0


def test_stopped_early_means_a_callback_or_too_few_rounds(xor, rng):
    X, y = xor
    t = X[:, 0] * 2 + X[:, 1]
    stopped = [fastfs.gflip(X, y, callback=_stop_at_first),
               fastfs.simba(X, y, n_iter=40, callback=_stop_at_first),
               fastfs.rgs(X, t, callback=_stop_at_first),
               fastfs.sfs(X, y, 3, criterion="j3", callback=_stop_at_first),
               fastfs.omp(X, t, 3, callback=_stop_at_first),
               fastfs.relieff(X, y, callback=_stop_at_first)]
    for res in stopped:
        assert res.stopped_early is True, type(res).__name__
    # OMP: fewer rounds than asked were possible (X has rank 2)
    B = np.column_stack([X[:, 0], X[:, 1], X[:, 0] + X[:, 1], 2 * X[:, 0]])
    few = fastfs.omp(B, t, 3)
    assert few.stopped_early is True and few.selected.size == 2
    assert fastfs.omp(X, t + 0.1 * rng.standard_normal(80), 3).stopped_early is False


def test_history_is_the_score_after_each_step(xor, rng):
    X, y = xor
    t = X[:, 0] * 2 + X[:, 1] + 0.3 * rng.standard_normal(X.shape[0])
    s = fastfs.sfs(X, y, 3, criterion="j3")
    assert len(s.history) == len(s.subsets) and s.history[-1] == s.score
    for h, sub in zip(s.history, s.subsets):
        assert_allclose(h, fastfs.criteria.evaluate(X, y, list(sub), "j3"), rtol=1e-10)
    o = fastfs.omp(X, t, 3)
    assert o.history.shape == (3,)
    for r in range(1, 4):  # -RSS of least squares on the first r selected columns
        A = X[:, o.selected[:r]]
        resid = t - A @ np.linalg.lstsq(A, t, rcond=None)[0]
        assert_allclose(-o.history[r - 1], resid @ resid, rtol=1e-8)


def test_n_iter_counts_inner_solver_iterations(rng):
    X = rng.standard_normal((50, 8))
    y = X[:, 0] - 2 * X[:, 1]
    path = fastfs.lasso_path(X, y, alphas=[0.5, 0.1])
    assert path.n_iter.shape == (2,) and (path.n_iter >= 1).all()
    assert fastfs.omp(X, y, 2).n_iter is None  # no inner solver
    labels = (y > 0).astype(int)
    for res in (fastfs.simba(X, labels, random_state=0), fastfs.relief(X, labels)):
        assert res.n_iter is None  # their steps are not an inner solver's iterations
        assert "n_iter" not in repr(res)
    assert fastfs.iterative_relief(X, labels, n_neighbors=3).n_iter >= 1


def test_core_results_use_the_public_words():
    """The compiled results carry the same words as the public ones built from them."""
    for cls in (_core.SimbaResult, _core.RgsResult, _core.GFlipResult):
        assert {"restart_scores", "best_restart", "stopped_early"} <= set(cls._fields)
    assert {"history", "n_epochs"} <= set(_core.GFlipResult._fields)
    assert {"history", "subsets", "n_evaluations", "stopped_early"} <= set(
        _core.SearchResult._fields)
    assert {"n_iter"} <= set(_core.LassoPath._fields) & set(_core.LogisticFit._fields)


def test_restart_scores_hold_the_restarts_in_order(xor):
    X, y = xor
    many = fastfs.gflip(X, y, n_restarts=3, random_state=5)
    assert_array_equal(many.restart_scores[many.best_restart], many.score)
