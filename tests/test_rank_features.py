"""fastfs.rank_features: every feature scored alone (naive ranking), against a loop over single
features with the NumPy reference criteria."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref
from test_search import OTHER_IDS, RTOL, SMALL_CLASS, SMALL_REAL, class_data, other_criteria


def reference_ranking(values):
    """Repeatedly the first remaining feature tied with the remaining maximum."""
    left = list(range(len(values)))
    order = []
    while left:
        i = ref.first_of_max([values[j] for j in left])
        order.append(left.pop(i))
    return order


@pytest.mark.parametrize("index", range(12), ids=OTHER_IDS)
def test_equals_a_loop_over_single_features(index):
    _, make, ref_crit, (X, y) = other_criteria()[index]
    crit = make()
    n = X.shape[1]
    want = [ref_crit(X, y, [j]) for j in range(n)]
    got = fastfs.rank_features(X, y, 3, criterion=crit)
    assert_allclose(got.scores, want, rtol=RTOL, atol=0)
    # the same through the public single-subset evaluation
    assert_allclose(got.scores, [fastfs.criteria.evaluate(X, y, [j], criterion=crit)
                                 for j in range(n)], rtol=RTOL, atol=0)
    order = reference_ranking(want)
    assert [int(i) for i in got.ranking] == order
    assert [int(i) for i in got.selected] == order[:3]
    mask = np.zeros(n, dtype=bool)
    mask[order[:3]] = True
    assert_array_equal(got.support, mask)
    assert got.score == pytest.approx(ref_crit(X, y, sorted(order[:3])), rel=RTOL)
    assert_allclose(got.history, np.asarray(want)[order[:3]], rtol=RTOL)
    # the first feature is the one sfs adds first, with the same J
    first = fastfs.sfs(X, y, 1, criterion=crit)
    assert int(first.selected[0]) == order[0]
    assert first.history[0] == got.history[0]


@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_j3_and_least_squares_full_ranking(criterion):
    X, y = SMALL_CLASS if criterion == "j3" else SMALL_REAL
    got = fastfs.rank_features(X, y, criterion=criterion)
    want = [ref.CRITERIA[criterion](X, y, [j]) for j in range(X.shape[1])]
    assert [int(i) for i in got.ranking] == reference_ranking(want)
    assert got.support.all() and got.selected.shape == (X.shape[1],)
    assert got.n_evaluations == X.shape[1] + 1


def test_ties_go_to_the_lower_index():
    X, y = class_data(3, m=40, n=8, n_classes=2)
    X = X[:, [5, 1, 1, 0, 5, 1]]  # copies of features tie exactly
    got = fastfs.rank_features(X, y, criterion="j3")
    s = got.scores
    assert s[1] == s[2] == s[5] and s[0] == s[4]
    order = [int(i) for i in got.ranking]
    assert order.index(1) < order.index(2) < order.index(5)
    assert order.index(0) < order.index(4)
    # values within a tie (1e-10 relative) of each other tie too
    X2 = X.copy()
    X2[:, 2] += 1e-9 * np.sin(np.arange(X.shape[0]))
    got2 = fastfs.rank_features(X2, y, criterion="j3")
    assert got2.scores[2] != s[2] and ref.tied(got2.scores[2], s[1])
    assert [int(i) for i in got2.ranking] == order


def test_callable_and_wrapper():
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    X, y = class_data(11, m=50, n=7, n_classes=2)
    calls = []

    def J(Xs, yy):
        calls.append(Xs.shape[1])
        return ref.j1(Xs, yy)

    got = fastfs.rank_features(X, y, 2, criterion=J)
    want = [ref.j1(X[:, [j]], y) for j in range(7)]
    assert_allclose(got.scores, want, rtol=1e-12)
    assert [int(i) for i in got.selected] == reference_ranking(want)[:2]
    assert calls == [1] * 7 + [2]
    est = KNeighborsClassifier(3)
    got = fastfs.rank_features(X, y, 0.3, criterion=fastfs.criteria.Wrapper(est, cv=4))
    manual = [float(np.mean(cross_val_score(clone(est), X[:, [j]], y, cv=4)))
              for j in range(7)]
    assert_allclose(got.scores, manual, rtol=1e-12)
    assert [int(i) for i in got.selected] == reference_ranking(manual)[:2]


def test_feature_names_and_repr():
    pd = pytest.importorskip("pandas")
    X, y = SMALL_CLASS
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    got = fastfs.rank_features(df, y, 2, criterion="j1")
    assert list(got.selected_names) == [f"f{i}" for i in got.selected]
    assert "RankingResult(" in repr(got)


def test_undefined_features_rank_last_and_all_undefined_is_an_error():
    X, y = class_data(3, m=40, n=8, n_classes=2)
    X[:, 2] = 1.0  # constant: S_w singular, J3 = -inf
    got = fastfs.rank_features(X, y, criterion="j3")
    assert got.scores[2] == -np.inf and int(got.ranking[-1]) == 2
    with pytest.raises(ValueError, match="ridge"):
        fastfs.rank_features(np.ones((40, 3)), y, criterion="j3")


def test_every_score_equal_warns():
    X, y = class_data(3, m=40, n=8, n_classes=2)
    X = np.repeat(X[:, :1], 4, axis=1)
    with pytest.warns(UserWarning, match="same score"):
        fastfs.rank_features(X, y, criterion="j1")


@pytest.mark.parametrize("bad,match,exc", [
    (0, "n_features_to_select", ValueError),
    (11, "n_features_to_select", ValueError),
    ("best", "n_features_to_select", ValueError),
    (1.5, "n_features_to_select", ValueError),
    (True, "n_features_to_select", TypeError),
])
def test_bad_sizes(bad, match, exc):
    X, y = SMALL_CLASS
    with pytest.raises(exc, match=match):
        fastfs.rank_features(X, y, bad, criterion="j3")


def test_bad_input():
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="criterion"):
        fastfs.rank_features(X, y, criterion="nope")
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        fastfs.rank_features(Xn, y, criterion="j3")
    with pytest.raises(ValueError, match="y"):
        fastfs.rank_features(X, y[:-1], criterion="j3")
    with pytest.raises(ValueError, match="y"):
        fastfs.rank_features(X, y.reshape(-1, 1), criterion="j3")
    with pytest.raises(ValueError, match="X"):
        fastfs.rank_features(X[:, :0], y, criterion="j3")
    with pytest.raises(ValueError, match="n_jobs"):
        fastfs.rank_features(X, y, criterion="j3", n_jobs=0)
