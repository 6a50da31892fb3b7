"""Thresholds on feature weights: Relief's tau, the largest gap, cross-validated top t."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs


def test_relief_tau_hand_computed():
    w = np.array([0.5, 0.1, 0.3, -0.2, 0.3])
    got = fastfs.relief_tau(w, 100, alpha=0.05)  # tau = 1 / sqrt(5) = 0.4472
    assert got.threshold == pytest.approx(1 / np.sqrt(5), rel=1e-15)
    assert [int(i) for i in got.selected] == [0]
    got = fastfs.relief_tau(w, 200, alpha=0.5)  # tau = 0.1: ties at the cut are kept
    assert got.threshold == pytest.approx(0.1, rel=1e-15)
    assert [int(i) for i in got.selected] == [0, 2, 4, 1]
    assert_allclose(got.history, [0.5, 0.3, 0.3, 0.1])
    assert_array_equal(got.support, [True, True, True, False, True])
    assert np.isnan(got.score)


def test_relief_tau_bounds_the_false_positives():
    """Weights of irrelevant features as Relief forms them (averages of n_iter differences in
    [-1, 1] with mean 0; +-1, the largest variance): at most a fraction alpha reaches tau
    (Chebyshev)."""
    gen = np.random.default_rng(0)
    n_iter, alpha = 40, 0.2
    w = gen.choice([-1.0, 1.0], size=(n_iter, 20000)).mean(axis=0)
    got = fastfs.relief_tau(w, n_iter, alpha=alpha)
    assert got.support.mean() <= alpha
    assert got.support.mean() > 0  # not vacuous at these sizes


def test_relief_tau_takes_a_weight_result_and_warns_when_empty():
    pd = pytest.importorskip("pandas")
    X, y = fastfs.datasets.make_xor(100, random_state=0)
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    r = fastfs.relieff(df, y)
    with pytest.warns(UserWarning, match="nothing is kept"):
        got = fastfs.relief_tau(r, 100)
    assert got.selected.size == 0
    got = fastfs.relief_tau(r, 2000, alpha=0.9)
    keep = np.flatnonzero(r.weights >= 1 / np.sqrt(1800))
    assert keep.size > 0
    assert_array_equal(np.sort(got.selected), keep)
    assert list(got.selected_names) == [f"c{i}" for i in got.selected]


def test_largest_gap_hand_computed():
    got = fastfs.largest_gap([0.9, 0.85, 0.2, 0.1, 0.15])
    # sorted 0.9, 0.85, 0.2, 0.15, 0.1: gaps 0.05, 0.65, 0.05, 0.05
    assert [int(i) for i in got.selected] == [0, 1]
    assert_allclose(got.history, [0.05, 0.65, 0.05, 0.05], atol=1e-15)
    assert got.score == pytest.approx(0.65)
    assert got.threshold == pytest.approx(0.525)
    # equal gaps: the smaller t
    assert [int(i) for i in fastfs.largest_gap([0.0, 3.0, 1.0, 2.0]).selected] == [1]
    # ties among the weights keep the lower index first
    assert [int(i) for i in fastfs.largest_gap([1.0, 5.0, 5.0, 0.9]).selected] == [1, 2]


def test_largest_gap_invariants(rng):
    w = rng.standard_normal(30)
    got = fastfs.largest_gap(w)
    kept, dropped = w[got.support], w[~got.support]
    # a cut between the kept and the dropped weights, at the widest gap
    assert kept.min() > got.threshold > dropped.max()
    assert got.score == pytest.approx(kept.min() - dropped.max())
    s = np.sort(w)[::-1]
    assert got.score == pytest.approx(np.max(s[:-1] - s[1:]))
    # shifting and positively scaling the weights changes nothing
    assert_array_equal(fastfs.largest_gap(3 * w + 7).selected, got.selected)


def test_cv_top_features_equals_a_manual_loop():
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    gen = np.random.default_rng(1)
    y = np.repeat([0, 1], 30)
    X = gen.standard_normal((60, 6))
    X[:, 3] += 1.2 * y
    X[:, 0] += 0.7 * y
    w = np.array([0.5, 0.1, 0.2, 0.9, 0.0, 0.3])
    est = KNeighborsClassifier(3)
    got = fastfs.cv_top_features(X, y, w, est, cv=4)
    order = np.argsort(-w, kind="stable")
    manual = [np.mean(cross_val_score(est, X[:, np.sort(order[:t])], y, cv=4))
              for t in range(1, 7)]
    assert_allclose(got.history, manual, rtol=1e-12)
    t = int(np.argmax(manual)) + 1
    assert [int(i) for i in got.selected] == [int(i) for i in order[:t]]
    assert got.score == pytest.approx(max(manual))
    seen = []
    got2 = fastfs.cv_top_features(X, y, w, est, cv=4, max_features=4,
                                  callback=lambda s: seen.append(s.step) or s.step == 1)
    assert seen == [0, 1] and got2.history.shape == (2,)


def test_cv_top_features_ties_go_to_fewer_features():
    from sklearn.neighbors import KNeighborsClassifier

    gen = np.random.default_rng(2)
    y = np.repeat([0, 1], 20)
    x = gen.standard_normal(40) + y
    X = np.column_stack([x, x, x])  # copies: the same 1-NN predictions for every t
    got = fastfs.cv_top_features(X, y, [3.0, 2.0, 1.0], KNeighborsClassifier(1), cv=5)
    assert got.history[0] == got.history[1] == got.history[2]
    assert [int(i) for i in got.selected] == [0]


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        fastfs.relief_tau([0.1, 0.2], 10, alpha=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        fastfs.relief_tau([0.1, 0.2], 0)
    with pytest.raises(ValueError, match="weights"):
        fastfs.relief_tau([0.1, np.nan], 10)
    with pytest.raises(ValueError, match="weights"):
        fastfs.largest_gap([1.0])
    with pytest.raises(ValueError, match="equal"):
        fastfs.largest_gap([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="weights"):
        fastfs.largest_gap(np.ones((2, 2)))
    from sklearn.neighbors import KNeighborsClassifier

    X = np.random.default_rng(0).standard_normal((20, 3))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="weights"):
        fastfs.cv_top_features(X, y, [1.0, 2.0], KNeighborsClassifier(1))
    with pytest.raises(ValueError, match="max_features"):
        fastfs.cv_top_features(X, y, [1.0, 2.0, 3.0], KNeighborsClassifier(1), max_features=4)
    with pytest.raises(ValueError, match="y"):
        fastfs.cv_top_features(X, y[:-1], [1.0, 2.0, 3.0], KNeighborsClassifier(1))


def test_too_few_samples_for_the_folds_names_cv():
    """The folds of a wrapped estimator are drawn once; scikit-learn's complaint about them
    (more folds than samples) is reported against cv, for every user of the Wrapper."""
    from sklearn.neighbors import KNeighborsClassifier

    X = np.random.default_rng(0).standard_normal((4, 3))
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="cv: "):
        fastfs.cv_top_features(X, y, [1.0, 2.0, 3.0], KNeighborsClassifier(1), cv=5)
    with pytest.raises(ValueError, match="cv: "):
        fastfs.sfs(X, y, 1, criterion=fastfs.criteria.Wrapper(KNeighborsClassifier(1), cv=5))


def test_cv_top_features_says_when_a_callback_stopped_it():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = (X[:, 0] > 0).astype(int)
    w = np.arange(6.0)[::-1]
    stopped = fastfs.cv_top_features(X, y, w, LogisticRegression(), cv=3,
                                     callback=lambda s: True)
    assert stopped.stopped_early and stopped.history.size == 1
    full = fastfs.cv_top_features(X, y, w, LogisticRegression(), cv=3)
    assert not full.stopped_early and full.history.size == 6
    # True at the last size: the scan had ended anyway
    last = fastfs.cv_top_features(X, y, w, LogisticRegression(), cv=3,
                                  callback=lambda s: s.step == 5)
    assert not last.stopped_early
