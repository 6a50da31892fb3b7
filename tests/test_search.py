"""Search strategies and criteria (SPEC 5.1, 5.2; issue 6) checked against the brute-force
references of tests/reference.py, scikit-learn's cross_val_score and invariants."""

from __future__ import annotations

import itertools
import math
import re

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref

RTOL = 1e-9


# ------------------------------------------------------------------------------------------
# problems (module level and fixed-seed so that the reference runs once per problem)


def class_data(seed: int, m: int = 60, n: int = 10, n_classes: int = 3):
    """Gaussian classes with informative, correlated and noise features: greedy steps are
    not optimal on it, so the floating searches really float (checked below)."""
    gen = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), m // n_classes)
    gen.shuffle(y)
    X = gen.standard_normal((m, n))
    X[:, 1] += 0.8 * y
    X[:, 4] += 0.8 * (y == 1)
    X[:, 6] = X[:, 1] + X[:, 4] + 0.5 * gen.standard_normal(m)
    if n > 8:
        X[:, 8] += 0.5 * (y == 2) + 0.5 * X[:, 6]
    return X, y


def regression_data(seed: int, m: int = 40, n: int = 10):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, n))
    X[:, 3] = X[:, 0] + X[:, 5] + 0.3 * gen.standard_normal(m)
    X[:, 7] = X[:, 2] - X[:, 5] + 0.3 * gen.standard_normal(m)
    y = X[:, 0] + X[:, 2] + 0.5 * X[:, n - 1] + 0.5 * gen.standard_normal(m)
    return X, y


PROBLEMS = {"j3": class_data(0), "least_squares": regression_data(1)}
SMALL_CLASS = class_data(7, m=48, n=8, n_classes=2)
SMALL_REAL = regression_data(8, m=36, n=8)

STRATEGY_CASES = [
    ("sfs", {}),
    ("sbs", {}),
    ("sffs", {}),
    ("sfbs", {}),
    ("plus_l_minus_r", {"l": 2, "r": 1}),
    ("plus_l_minus_r", {"l": 1, "r": 2}),
    ("plus_l_minus_r", {"l": 3, "r": 2}),
    ("bidirectional", {}),
    ("beam", {"width": 1}),
    ("beam", {"width": 3}),
    ("exhaustive", {}),
]
SIZES = [1, 3, 6, "best", 0.45]


def case_id(case):
    name, kw = case
    return name + "".join(f"-{k}{v}" for k, v in kw.items())


def valid_size(name, kw, k, n):
    """Sizes the contract allows for plus_l_minus_r (K + r <= n, K - l >= 1); sfbs and
    plus_l_minus_r with l < r are not asked to start at K = n."""
    K = ref.resolve_k(k, n)
    if name == "plus_l_minus_r" and K is not None:
        l, r = kw["l"], kw["r"]
        return K + r <= n if l > r else (K - l >= 1 and K < n)
    return True


def fastfs_search(name, X, y, k, criterion, **kw):
    return getattr(fastfs, name)(X, y, k, criterion=criterion, **kw)


def as_subsets(subsets):
    return tuple(tuple(int(i) for i in s) for s in subsets)


def assert_search_equal(got, expected, ordered: bool = True):
    """A SearchResult equals a reference tuple (selected, score, history, subsets,
    best_scores): same subsets exactly, J within RTOL; with ``ordered`` also ``selected`` in
    S's list order (for "best" that order is checked on its own in
    test_best_keeps_the_list_order)."""
    selected, score, history, subsets, best_scores = expected
    n = got.support.shape[0]
    got_selected = [int(i) for i in got.selected]
    assert sorted(got_selected) == sorted(selected)
    mask = np.zeros(n, dtype=bool)
    mask[selected] = True
    assert_array_equal(got.support, mask)
    assert as_subsets(got.subsets) == tuple(subsets)
    assert_allclose(got.history, history, rtol=RTOL, atol=0)
    assert got.score == pytest.approx(score, rel=RTOL)
    assert got.best_scores.shape == (n + 1,)
    assert_allclose(got.best_scores, best_scores, rtol=RTOL, atol=0, equal_nan=True)
    assert got.stopped_early is False
    if ordered:  # last, so that a wrong order is told apart from a wrong subset
        assert got_selected == selected, "selected: same set, not in S's list order"


# ------------------------------------------------------------------------------------------
# every strategy, result and history, for j3 and least_squares


def test_problems_make_the_floating_searches_float():
    """Guard on the data: the reference SFFS takes conditional exclusions and SFBS conditional
    inclusions on both problems, so the comparisons below exercise them."""
    for name, (X, y) in PROBLEMS.items():
        crit = ref.criterion(name)
        sizes_f = [len(s) for s in ref.search_sffs(X, y, "best", crit)[3]]
        sizes_b = [len(s) for s in ref.search_sfbs(X, y, "best", crit)[3]]
        assert any(b < a for a, b in zip(sizes_f, sizes_f[1:])), name
        assert any(b > a for a, b in zip(sizes_b, sizes_b[1:])), name


@pytest.mark.parametrize("k", SIZES, ids=str)
@pytest.mark.parametrize("case", STRATEGY_CASES, ids=case_id)
@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_strategy_matches_reference(criterion, case, k):
    name, kw = case
    X, y = PROBLEMS[criterion]
    n = X.shape[1]
    if not valid_size(name, kw, k, n):
        pytest.skip("size outside the strategy's domain (tested in the error tests)")
    expected = ref.STRATEGIES[name](X, y, k, ref.criterion(criterion), **kw)
    got = fastfs_search(name, X, y, k, criterion, **kw)
    assert isinstance(got, fastfs.SearchResult)
    assert isinstance(got, fastfs.SubsetResult)
    assert_search_equal(got, expected, ordered=k != "best")
    K = ref.resolve_k(k, n)
    if K is not None:
        assert len(got.selected) == K


@pytest.mark.parametrize("case", [("sbs", {}), ("sfbs", {}), ("plus_l_minus_r", {"l": 1, "r": 2}),
                                  ("plus_l_minus_r", {"l": 2, "r": 3})], ids=case_id)
@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_backward_searches_asked_for_every_feature_stop_at_the_start(criterion, case):
    """k = n_features: a backward search starts at the full set, already of the asked size. It
    evaluates that set once, moves no feature, and reports it."""
    name, kw = case
    X, y = PROBLEMS[criterion]
    n = X.shape[1]
    got = fastfs_search(name, X, y, n, criterion, **kw)
    full = tuple(range(n))
    J = ref.criterion(criterion)(X, y, list(full))
    assert_array_equal(got.selected, full)
    assert as_subsets(got.subsets) == (full,)
    assert_allclose(got.history, [J], rtol=RTOL)
    assert got.score == pytest.approx(J, rel=RTOL)
    assert np.isnan(got.best_scores[:n]).all()
    assert got.best_scores[n] == pytest.approx(J, rel=RTOL)
    assert got.n_evaluations == 1
    assert got.stopped_early is False


@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_sfs_and_exhaustive_count_their_evaluations(criterion):
    X, y = PROBLEMS[criterion]
    n = X.shape[1]
    for k in (1, 4, n):
        assert fastfs.sfs(X, y, k, criterion=criterion).n_evaluations == sum(
            n - s for s in range(k))
        assert fastfs.exhaustive(X, y, k, criterion=criterion).n_evaluations == math.comb(n, k)
    assert fastfs.exhaustive(X, y, "best", criterion=criterion).n_evaluations == 2 ** n - 1


# ------------------------------------------------------------------------------------------
# the other built-in criteria: sfs and sbs


def other_criteria():
    """(id, fastfs criterion, reference criterion, data); classes built lazily so that one
    missing class fails only its own tests."""
    C = fastfs.criteria
    cls, real = SMALL_CLASS, SMALL_REAL
    return [
        ("margin", lambda: "margin", ref.criterion("margin"), cls),
        ("margin-sigmoid", lambda: C.Margin(utility="sigmoid", beta=2.0),
         ref.criterion("margin", utility="sigmoid", beta=2.0), cls),
        ("loo_knn_accuracy-1", lambda: "loo_knn_accuracy", ref.criterion("loo_knn_accuracy"),
         cls),
        ("loo_knn_accuracy-3", lambda: C.LooKnnAccuracy(n_neighbors=3),
         ref.criterion("loo_knn_accuracy", n_neighbors=3), cls),
        ("loo_knn_mse", lambda: "loo_knn_mse", ref.criterion("loo_knn_mse"), real),
        ("loo_knn_mse-4-0.5", lambda: C.LooKnnMSE(n_neighbors=4, beta=0.5),
         ref.criterion("loo_knn_mse", n_neighbors=4, beta=0.5), real),
        ("least_squares-intercept", lambda: C.LeastSquares(fit_intercept=True),
         ref.criterion("least_squares", fit_intercept=True), real),
        ("j1", lambda: "j1", ref.criterion("j1"), cls),
        ("j2", lambda: "j2", ref.criterion("j2"), cls),
        ("j3-ridge", lambda: C.J3(ridge=0.5), ref.criterion("j3", ridge=0.5), cls),
        ("divergence", lambda: "divergence", ref.criterion("divergence"), cls),
        ("bhattacharyya", lambda: "bhattacharyya", ref.criterion("bhattacharyya"), cls),
    ]


OTHER_IDS = ["margin", "margin-sigmoid", "loo_knn_accuracy-1", "loo_knn_accuracy-3",
             "loo_knn_mse", "loo_knn_mse-4-0.5", "least_squares-intercept", "j1", "j2",
             "j3-ridge", "divergence", "bhattacharyya"]


@pytest.mark.parametrize("k", [3, "best"], ids=str)
@pytest.mark.parametrize("strategy", ["sfs", "sbs"])
@pytest.mark.parametrize("index", range(12), ids=OTHER_IDS)
def test_sfs_sbs_other_criteria(index, strategy, k):
    _, make, ref_crit, (X, y) = other_criteria()[index]
    crit = make()
    expected = ref.STRATEGIES[strategy](X, y, k, ref_crit)
    got = fastfs_search(strategy, X, y, k, crit)
    assert_search_equal(got, expected, ordered=k != "best")
    # incremental values along the path equal from-scratch evaluations
    for subset, value in zip(got.subsets, got.history):
        assert fastfs.criteria.evaluate(X, y, list(subset), criterion=crit) == pytest.approx(
            value, rel=RTOL)


@pytest.mark.parametrize("k", [3, "best"], ids=str)
@pytest.mark.parametrize("case", [("sffs", {}), ("sfbs", {}), ("bidirectional", {}),
                                  ("beam", {"width": 3}), ("plus_l_minus_r", {"l": 2, "r": 1})],
                         ids=case_id)
@pytest.mark.parametrize("criterion", ["margin", "loo_knn_accuracy"])
def test_other_strategies_with_neighbour_criteria(criterion, case, k):
    """Beyond the contract's minimum: the neighbour criteria, whose values tie often (accuracy
    takes m + 1 values), through the strategies with the most tie-breaking."""
    name, kw = case
    X, y = SMALL_CLASS
    expected = ref.STRATEGIES[name](X, y, k, ref.criterion(criterion), **kw)
    got = fastfs_search(name, X, y, k, criterion, **kw)
    assert_search_equal(got, expected, ordered=k != "best")


@pytest.mark.parametrize("index", range(12), ids=OTHER_IDS)
def test_evaluate_matches_reference_on_random_subsets(index, rng):
    _, make, ref_crit, (X, y) = other_criteria()[index]
    crit = make()
    n = X.shape[1]
    for _ in range(6):
        size = int(rng.integers(1, n + 1))
        subset = sorted(int(i) for i in rng.choice(n, size=size, replace=False))
        expected = ref_crit(X, y, subset)
        got = fastfs.criteria.evaluate(X, y, subset, criterion=crit)
        assert isinstance(got, float)
        assert got == pytest.approx(expected, rel=RTOL), subset


@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_evaluate_j3_least_squares(criterion, rng):
    X, y = PROBLEMS[criterion]
    n = X.shape[1]
    for _ in range(8):
        subset = sorted(int(i) for i in rng.choice(n, size=int(rng.integers(1, n + 1)),
                                                   replace=False))
        assert fastfs.criteria.evaluate(X, y, subset, criterion=criterion) == pytest.approx(
            ref.criterion(criterion)(X, y, subset), rel=RTOL)


def test_evaluate_does_not_depend_on_the_order_of_features():
    X, y = SMALL_CLASS
    for crit in ("j3", "margin", "loo_knn_accuracy", "divergence"):
        a = fastfs.criteria.evaluate(X, y, [5, 1, 3], criterion=crit)
        b = fastfs.criteria.evaluate(X, y, [1, 3, 5], criterion=crit)
        assert a == pytest.approx(b, rel=RTOL)


# ------------------------------------------------------------------------------------------
# singular matrices: J = -inf, never chosen; a step with only -inf moves is an error


def test_singular_subsets_are_never_chosen(rng):
    X, y = class_data(3, m=60, n=7)
    X[:, 5] = X[:, 1]  # any subset holding both 1 and 5 has a singular S_w
    for crit in ("j2", "j3", "divergence", "bhattacharyya"):
        assert fastfs.criteria.evaluate(X, y, [1, 5], criterion=crit) == -math.inf
        got = fastfs.sfs(X, y, 4, criterion=crit)
        assert not (got.support[1] and got.support[5])
        assert_search_equal(got, ref.search_sfs(X, y, 4, ref.criterion(crit)))
        got = fastfs.sbs(X, y, 3, criterion=crit)
        assert_search_equal(got, ref.search_sbs(X, y, 3, ref.criterion(crit)))


def test_identical_columns_tie_whatever_the_rounding():
    """With columns 1 and 5 identical, every subset holding both is singular, so the backward
    searches' first step must remove 1 or 5; both removals leave the same J mathematically
    (computed, they may differ in the last bits), and ties go to the lower index: 1."""
    X, y = class_data(3, m=60, n=7)
    X[:, 5] = X[:, 1]
    for crit in ("j2", "j3", "divergence", "bhattacharyya"):
        a = fastfs.criteria.evaluate(X, y, [0, 2, 3, 4, 5, 6], criterion=crit)
        b = fastfs.criteria.evaluate(X, y, [0, 1, 2, 3, 4, 6], criterion=crit)
        assert a == pytest.approx(b, rel=1e-12)
        for name in ("sbs", "sfbs"):
            got = getattr(fastfs, name)(X, y, 3, criterion=crit)
            assert as_subsets(got.subsets)[1] == (0, 2, 3, 4, 5, 6), (name, crit)
    assert ref.first_of_max([1.0, 1.0 + 3e-16, 0.5]) == 0
    assert ref.first_of_max([1.0, 1.0 + 1e-9, 0.5]) == 1


def test_all_moves_singular_is_an_error_suggesting_ridge(rng):
    col = rng.standard_normal(30)
    X = np.column_stack([col, col, col])
    y = np.repeat([0, 1], 15)
    with pytest.raises(ValueError, match="ridge"):
        fastfs.sfs(X, y, 2, criterion="j3")
    # the ridge makes every subset regular again
    got = fastfs.sfs(X, y, 2, criterion=fastfs.criteria.J3(ridge=0.1))
    assert_search_equal(got, ref.search_sfs(X, y, 2, ref.criterion("j3", ridge=0.1)))


def test_all_removals_singular_is_an_error_that_does_not_suggest_a_smaller_size(rng):
    # More features than a class has samples: the full set and every subset one smaller are
    # singular, so no backward step can start, whatever size was asked; the forward search
    # works and the message says to use it or a ridge.
    X = rng.standard_normal((8, 10))
    y = np.arange(8) % 2
    X[:, 0] += 2 * y
    j3 = ref.criterion("j3")
    assert all(j3(X, y, [j for j in range(10) if j != i]) == -np.inf for i in range(10))
    assert fastfs.sfs(X, y, 2, criterion="j3").selected[0] == 0
    for call in (lambda: fastfs.sbs(X, y, 1, criterion="j3"),
                 lambda: fastfs.sfbs(X, y, 2, criterion="j3"),
                 lambda: fastfs.bidirectional(X, y, "best", criterion="j3")):
        with pytest.raises(ValueError, match="no removal of this step.*ridge > 0, or search "
                                             "forward") as err:
            call()
        assert "smaller n_features_to_select" not in str(err.value)
    got = fastfs.sbs(X, y, 2, criterion=fastfs.criteria.J3(ridge=0.1))
    assert_search_equal(got, ref.search_sbs(X, y, 2, ref.criterion("j3", ridge=0.1)))


@pytest.mark.parametrize("name", ["sbs", "sfbs"])
def test_auto_never_returns_the_round_that_stalled(rng, name):
    """With "auto" the round that fails to raise J by more than tol is recorded, not chosen
    (the module's rule, and scikit-learn's SequentialFeatureSelector): for a backward search
    it is the smaller subset, which the parsimony of tol used to pick."""
    X = rng.standard_normal((30, 7))
    y = np.arange(30) % 2
    by_size = {7: 0.0, 6: 10.0, 5: 10.5}  # 6 gains 10, 5 only 0.5
    crit = lambda Xs, yy: by_size.get(Xs.shape[1], 0.0)  # noqa: E731
    search = getattr(fastfs, name)
    got = search(X, y, criterion=crit, tol=2.0)  # 0.5 <= tol: the 5-feature round stalls
    assert len(got.selected) == 6 and got.score == 10.0
    assert got.history.tolist() == [0.0, 10.0, 10.5]  # recorded all the same
    by_size[5] = 10.0  # a tie stalls with tol = 0
    with warnings.catch_warnings():
        # (sbs's candidates then all tie: the tie rule chooses, which warns; test_all_features_tied)
        warnings.simplefilter("ignore", fastfs.EqualScoresWarning)
        got = search(X, y, criterion=crit)
    assert len(got.selected) == 6 and got.history.tolist() == [0.0, 10.0, 10.0]
    by_size[5] = 12.5  # a gain beyond tol goes on, to the round after it, which stalls
    got = search(X, y, criterion=crit, tol=2.0)
    assert len(got.selected) == 5 and got.score == 12.5
    # forward searches: the stalled round is the larger subset (never chosen either)
    fwd = {1: 1.0, 2: 5.0, 3: 5.5}
    got = fastfs.sfs(X, y, criterion=lambda Xs, yy: fwd.get(Xs.shape[1], 0.0), tol=2.0)
    assert len(got.selected) == 2 and got.history.tolist() == [1.0, 5.0, 5.5]


def test_searches_that_keep_their_best_refuse_when_nothing_is_finite(rng):
    """Exhaustive search, branch and bound and annealing keep the best subset they scored;
    when every J is -inf (or NaN) that is any subset, so it is an error, as a stepwise
    search's all-singular step is; on one machine and in fastfs.dask alike."""
    X = rng.standard_normal((12, 14))  # 6 samples a class: S_w of 11 features is singular
    y = np.arange(12) % 2
    # the reference agrees: every 11-feature J3 is -inf, every 3-feature one finite
    j3 = ref.criterion("j3")
    assert j3(X, y, list(range(11))) == -np.inf and np.isfinite(j3(X, y, [0, 1, 2]))
    for search in (fastfs.exhaustive, fastfs.branch_and_bound):
        with pytest.raises(ValueError, match="criterion: no subset the search scored has a "
                                             "finite value.*ridge"):
            search(X[:, :12], y, 11, criterion="j3")
    with pytest.raises(ValueError, match="criterion: no subset .*NaN or -inf everywhere"):
        fastfs.simulated_annealing(X[:, :5], y, criterion=lambda Xs, yy: np.nan,
                                   n_iter=20, random_state=0)
    with pytest.raises(ValueError, match="criterion: no subset .*finite"):
        fastfs.exhaustive(X[:, :6], y, 2, criterion=lambda Xs, yy: -np.inf)
    # some sizes finite: "best" keeps the best finite subset, no error
    got = fastfs.exhaustive(X[:, :12], y, "best", criterion="j3")
    assert np.isfinite(got.score) and len(got.selected) <= 10
    fd = pytest.importorskip("fastfs.dask")
    with pytest.raises(ValueError, match="criterion: no subset the search scored"):
        fd.exhaustive(X[:, :12], y, 11, criterion="j3", client=None)


# ------------------------------------------------------------------------------------------
# SFFS against SFS, branch and bound against exhaustive


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("criterion", ["j3", "least_squares"])
def test_sffs_never_worse_than_sfs_at_any_size(criterion, seed):
    X, y = class_data(seed) if criterion == "j3" else regression_data(seed)
    n = X.shape[1]
    forward = fastfs.sfs(X, y, "best", criterion=criterion).best_scores
    floating = fastfs.sffs(X, y, "best", criterion=criterion).best_scores
    for s in range(1, n + 1):
        assert floating[s] >= forward[s] - RTOL * abs(forward[s]), s
    backward = fastfs.sbs(X, y, "best", criterion=criterion).best_scores
    floating_b = fastfs.sfbs(X, y, "best", criterion=criterion).best_scores
    for s in range(1, n + 1):
        assert floating_b[s] >= backward[s] - RTOL * abs(backward[s]), s


def _table_criterion(table, default=-10.0):
    """A callable J from a table {subset: J}: column j of the data holds j in its first row."""
    def J(Xs, yy):
        return table.get(frozenset(int(v) for v in Xs[0]), default)
    return J


def test_sffs_auto_goes_on_while_sfs_would():
    # sfs's path {0}, {0,1}, {0,1,2}, {0,1,2,3} gains every step; SFFS backtracks from
    # {0,1,2} to {1,2} (better than {0,1} at size 2), its next round only gets back to J = 3
    # and stalled, so "auto" stopped at 3 features where sfs's "auto" reaches J = 4
    table = {frozenset(k): v for k, v in [((0,), 1.0), ((0, 1), 2.0), ((0, 1, 2), 3.0),
                                           ((1, 2), 2.5), ((0, 1, 2, 3), 4.0)]}
    X = np.tile(np.arange(5.0), (12, 1))
    y = np.arange(12) % 2
    crit = _table_criterion(table)
    greedy = fastfs.sfs(X, y, criterion=crit)
    assert greedy.score == 4.0 and sorted(greedy.selected) == [0, 1, 2, 3]
    floating = fastfs.sffs(X, y, criterion=crit)
    assert 2.5 in floating.history  # it did backtrack
    assert floating.score == 4.0 and sorted(floating.selected) == [0, 1, 2, 3]
    # on random criteria too: "auto" is never worse than sfs's
    gen = np.random.default_rng(0)
    for _ in range(20):
        vals = {}

        def rand_J(Xs, yy):
            key = frozenset(int(v) for v in Xs[0])
            return vals.setdefault(key, float(gen.uniform(0, len(key))))
        a = fastfs.sfs(X, y, criterion=rand_J).score
        b = fastfs.sffs(X, y, criterion=rand_J).score
        assert b >= a, (a, b)
        c = fastfs.sbs(X, y, criterion=rand_J).score
        d = fastfs.sfbs(X, y, criterion=rand_J).score
        assert d >= c, (c, d)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_least_squares_scores_an_exact_fit_zero_along_every_route(rng, fit_intercept):
    # y in the span of one column: -RSS is 0 for every subset holding it, not +1e-27 on the
    # route of an addition (RSS - gain) and -1e-30 on another, which "auto" took as a gain
    Z = rng.standard_normal((50, 8))
    yz = 3 * Z[:, 2] + (5.0 if fit_intercept else 0.0)
    crit = fastfs.criteria.LeastSquares(fit_intercept=fit_intercept)
    got = fastfs.sfs(Z, yz, criterion=crit)
    assert_array_equal(got.selected, [2])
    assert np.all(got.history <= 0) and got.history[0] == 0
    assert_array_equal(fastfs.sbs(Z, yz, "best", criterion=crit).selected, [2])
    assert_array_equal(fastfs.sffs(Z, yz, criterion=crit).selected, [2])
    assert fastfs.criteria.evaluate(Z, yz, [2, 5], crit) == 0
    # a fit short of exact keeps its RSS
    noisy = yz + 1e-3 * rng.standard_normal(50)
    assert -fastfs.criteria.evaluate(Z, noisy, [2], crit) == pytest.approx(
        ref.lstsq_rss(Z - Z.mean(0) if fit_intercept else Z,
                      noisy - noisy.mean() if fit_intercept else noisy, [2]), rel=1e-9)


def test_sfbs_auto_does_not_choose_the_last_round_that_stalled():
    # The last round (down to one feature) left the loop before its stall test, so its
    # smaller subset could be chosen: sfbs returned (2,) with 1.0 where sbs keeps (0, 2), 1.3
    X = np.tile(np.arange(3.0), (3, 1))
    X[1:] = np.random.default_rng(0).standard_normal((2, 3))
    y = np.array([0, 1, 0])
    tab = {(0, 1, 2): 1.0, (0, 1): 0.9, (0, 2): 1.3, (1, 2): 0.5, (0,): 0.2, (1,): 0.1,
           (2,): 1.0}

    def J(Xs, yy):
        return tab[tuple(int(v) for v in Xs[0])]
    for tol, single in ((-0.3, 1.0), (0.0, 1.3)):  # a loss within |tol|; a tie
        tab[(2,)] = single
        a = fastfs.sbs(X, y, criterion=J, tol=tol)
        b = fastfs.sfbs(X, y, criterion=J, tol=tol)
        assert sorted(a.selected) == [0, 2] and a.score == 1.3
        assert sorted(b.selected) == [0, 2] and b.score == 1.3


def test_least_squares_keeps_real_residuals_beside_a_large_offset(rng):
    # y = 1e6 + 0.1 x1 without an intercept: the constant column's RSS (about 0.93) and the
    # RSS with x1 (about 1e-6) are far above rounding; a cut-off relative to ||y||^2 (1e14)
    # called both exact fits and sfs stopped at the constant column
    m = 100
    x1 = rng.standard_normal(m)
    X = np.column_stack([np.ones(m), x1, rng.standard_normal((m, 3))])
    y = 1e6 + 0.1 * x1 + 1e-4 * rng.standard_normal(m)
    crit = fastfs.criteria.LeastSquares()
    for subset in ([0], [0, 1]):
        want = ref.lstsq_rss(X, y, subset)
        assert want > 1e-7
        assert -fastfs.criteria.evaluate(X, y, subset, crit) == pytest.approx(want, rel=1e-4)
    assert sorted(fastfs.sfs(X, y, criterion=crit).selected[:2]) == [0, 1]


def _never_below(floating, greedy, sizes):
    for s in sizes:
        assert floating[s] >= greedy[s] - ref.TIE_RTOL * abs(greedy[s]), s


def test_floating_never_worse_than_greedy_on_wine_with_a_wrapper():
    """Floating alone is not: on wine with Gaussian naive Bayes, SFFS's best subset of size 5
    grows into a worse size 6 than sfs's (so SFFS follows sfs's path too)."""
    from sklearn.datasets import load_wine
    from sklearn.naive_bayes import GaussianNB

    X, y = load_wine(return_X_y=True)
    crit = fastfs.criteria.Wrapper(GaussianNB(), cv=5)
    forward = fastfs.sfs(X, y, 8, criterion=crit)
    floating = fastfs.sffs(X, y, 8, criterion=crit)
    _never_below(floating.best_scores, forward.best_scores, range(1, 9))
    assert floating.score >= forward.score - ref.TIE_RTOL * abs(forward.score)


@pytest.mark.slow
def test_floating_never_worse_than_greedy_on_breast_cancer():
    """SFFS against sfs and SFBS against sbs at every size, with leave-one-out 1-NN accuracy
    on scikit-learn's breast cancer data (SFFS alone fell below sfs at sizes 19-22)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    n = X.shape[1]
    forward = fastfs.sfs(X, y, "best", criterion="loo_knn_accuracy").best_scores
    floating = fastfs.sffs(X, y, "best", criterion="loo_knn_accuracy").best_scores
    _never_below(floating, forward, range(1, n + 1))
    backward = fastfs.sbs(X, y, "best", criterion="loo_knn_accuracy").best_scores
    floating_b = fastfs.sfbs(X, y, "best", criterion="loo_knn_accuracy").best_scores
    _never_below(floating_b, backward, range(1, n + 1))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("criterion", ["j3", "least_squares", "margin", "loo_knn_accuracy"])
def test_floating_steps_only_take_strict_improvements(criterion, seed):
    """Every recorded subset of a size has J <= the best of that size so far, so a conditional
    step (SFFS: a removal, SFBS: an addition) records a subset of that size never recorded
    before, with J strictly above every earlier record of its size: revisiting a subset, or
    an equal J, is never an improvement (whatever the rounding of incremental updates)."""
    X, y = regression_data(seed) if criterion == "least_squares" else class_data(seed)
    for name, conditional in (("sffs", lambda a, b: b < a), ("sfbs", lambda a, b: b > a)):
        got = getattr(fastfs, name)(X, y, "best", criterion=criterion)
        subsets, history = as_subsets(got.subsets), list(got.history)
        for i in range(1, len(subsets)):
            earlier = [(s, v) for s, v in zip(subsets[:i], history[:i])
                       if len(s) == len(subsets[i])]
            if conditional(len(subsets[i - 1]), len(subsets[i])):
                assert subsets[i] not in [s for s, _ in earlier], (name, i)
                assert all(history[i] > v for _, v in earlier), (name, i)


MONOTONE = ["j2", "j3", "least_squares", "divergence", "bhattacharyya"]


@pytest.mark.parametrize("k", [1, 3, 5, 8])
@pytest.mark.parametrize("criterion", MONOTONE)
def test_branch_and_bound_equals_exhaustive(criterion, k):
    X, y = SMALL_REAL if criterion == "least_squares" else SMALL_CLASS
    exh = ref.search_exhaustive(X, y, k, ref.criterion(criterion))
    got = fastfs.branch_and_bound(X, y, k, criterion=criterion)
    assert [int(i) for i in got.selected] == exh[0]  # ascending
    assert got.score == pytest.approx(exh[1], rel=RTOL)
    subsets = as_subsets(got.subsets)
    assert len(subsets) == len(got.history) >= 1
    assert subsets[-1] == tuple(exh[0])
    assert got.history[-1] == pytest.approx(exh[1], rel=RTOL)
    assert all(len(s) == k for s in subsets)
    assert np.all(np.diff(got.history) >= 0)
    crit = ref.criterion(criterion)
    for s, v in zip(subsets, got.history):
        assert v == pytest.approx(crit(X, y, list(s)), rel=RTOL)
    assert got.n_evaluations >= 1


@pytest.mark.parametrize("criterion", ["j2", "j3", "divergence", "bhattacharyya"])
def test_branch_and_bound_equals_exhaustive_when_the_full_set_is_singular(criterion):
    """More features than samples a class: J of the full set is -inf, and a -inf node bounds
    nothing (its subsets may be finite). Pruning on it returned a subset with a far lower J
    than exhaustive search's, silently (23 to 29 seeds in 30)."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(12, 9))
        y = np.arange(12) % 2
        X[:, 3] += 2 * y
        exh = ref.search_exhaustive(X, y, 2, ref.criterion(criterion))
        got = fastfs.branch_and_bound(X, y, 2, criterion=criterion)
        assert [int(i) for i in got.selected] == exh[0], seed
        assert got.score == pytest.approx(exh[1], rel=RTOL)
        assert_array_equal(got.selected,
                           fastfs.exhaustive(X, y, 2, criterion=criterion).selected)


@pytest.mark.parametrize("strategy", ["sfs", "sffs", "beam", "plus_l_minus_r"])
@pytest.mark.parametrize("target", ["best", "auto"])
def test_best_and_auto_end_where_the_criterion_turns_singular(strategy, target):
    """n_features_to_select 'best' / 'auto' returns the best recorded subset: a forward search
    on wide data reaches sizes where every candidate's scatter matrix is singular (J = -inf);
    that ends the run instead of failing it (it raised 'no candidate of this step has a finite
    value')."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 15))
    y = np.arange(12) % 2
    X[:, 3] += 2 * y
    kw = {"l": 2, "r": 1} if strategy == "plus_l_minus_r" else {}
    got = getattr(fastfs, strategy)(X, y, target, criterion="j3", **kw)
    assert np.isfinite(got.score)
    assert np.isfinite(got.history).all()  # the step without a finite move is not recorded
    if target == "best":
        assert got.score == got.history.max()
        assert max(len(s) for s in got.subsets) < 12  # ended at the singular sizes
    assert got.score == pytest.approx(
        ref.criterion("j3")(X, y, [int(i) for i in got.selected]), rel=RTOL)
    # a fixed size past the singular point is still an error
    if strategy == "sfs":
        with pytest.raises(ValueError, match="no candidate of this step has a finite value"):
            fastfs.sfs(X, y, 14, criterion="j3")


def test_branch_and_bound_prunes_on_an_easy_problem(rng):
    m, n, k = 120, 12, 3
    y = np.repeat([0, 1, 2], m // 3)
    X = rng.standard_normal((m, n))
    X[:, 2] += 3.0 * y
    X[:, 7] += 3.0 * (y == 1)
    X[:, 10] -= 3.0 * (y == 2)
    got = fastfs.branch_and_bound(X, y, k, criterion="j3")
    exh = fastfs.exhaustive(X, y, k, criterion="j3")
    assert [int(i) for i in got.selected] == [2, 7, 10] == [int(i) for i in exh.selected]
    assert exh.n_evaluations == math.comb(n, k)
    assert got.n_evaluations < exh.n_evaluations


@pytest.mark.parametrize("criterion", ["margin", "loo_knn_accuracy", "j1", "loo_knn_mse"])
def test_branch_and_bound_refuses_non_monotone(criterion):
    X, y = SMALL_REAL if criterion == "loo_knn_mse" else SMALL_CLASS
    with pytest.raises(ValueError, match="assume_monotone"):
        fastfs.branch_and_bound(X, y, 3, criterion=criterion)
    got = fastfs.branch_and_bound(X, y, 3, criterion=criterion, assume_monotone=True)
    assert len(got.selected) == 3
    assert got.score == pytest.approx(
        ref.criterion(criterion)(X, y, [int(i) for i in got.selected]), rel=RTOL)


def test_branch_and_bound_refuses_callables_unless_told(rng):
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="assume_monotone"):
        fastfs.branch_and_bound(X, y, 3, criterion=lambda Xs, yy: ref.j3(Xs, yy))
    got = fastfs.branch_and_bound(X, y, 3, criterion=lambda Xs, yy: ref.j3(Xs, yy),
                                  assume_monotone=True)
    exh = ref.search_exhaustive(X, y, 3, ref.criterion("j3"))
    assert [int(i) for i in got.selected] == exh[0]


def test_branch_and_bound_best_is_an_error():
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="n_features_to_select"):
        fastfs.branch_and_bound(X, y, "best", criterion="j3")


# ------------------------------------------------------------------------------------------
# callables and Wrapper


def checking_callable(X, reference_fn, calls):
    """A callable criterion that checks it receives X[:, sorted(S)] as float64."""
    n = X.shape[1]

    def J(X_subset, y):
        calls.append(1)
        assert isinstance(X_subset, np.ndarray) and X_subset.dtype == np.float64
        cols = [next(j for j in range(n) if np.array_equal(X_subset[:, c], X[:, j]))
                for c in range(X_subset.shape[1])]
        assert cols == sorted(cols)
        return reference_fn(X_subset, y)

    return J


@pytest.mark.parametrize("strategy,kw", [("sfs", {}), ("sbs", {}), ("sffs", {}), ("sfbs", {}),
                                         ("beam", {"width": 2}), ("bidirectional", {}),
                                         ("plus_l_minus_r", {"l": 2, "r": 1})])
def test_callable_twin_gives_the_same_subsets(strategy, kw):
    X, y = SMALL_CLASS
    calls: list = []
    fn = checking_callable(X, lambda Xs, yy: ref.j3(Xs, yy), calls)
    a = fastfs_search(strategy, X, y, 4, fn, **kw)
    b = fastfs_search(strategy, X, y, 4, "j3", **kw)
    assert [int(i) for i in a.selected] == [int(i) for i in b.selected]
    assert as_subsets(a.subsets) == as_subsets(b.subsets)
    assert_allclose(a.history, b.history, rtol=RTOL)
    assert a.n_evaluations == len(calls)
    c = fastfs_search(strategy, X, y, 4, fastfs.criteria.Callable(fn), **kw)
    assert as_subsets(c.subsets) == as_subsets(a.subsets)


def test_callable_least_squares_twin():
    X, y = SMALL_REAL

    def rss(Xs, yy):
        b = np.linalg.lstsq(Xs, yy, rcond=None)[0]
        return -float(np.sum((yy - Xs @ b) ** 2))

    for strategy in ("sfs", "sffs", "exhaustive"):
        a = fastfs_search(strategy, X, y, 3, rss)
        b = fastfs_search(strategy, X, y, 3, "least_squares")
        assert as_subsets(a.subsets) == as_subsets(b.subsets)
        assert [int(i) for i in a.selected] == [int(i) for i in b.selected]


def test_wrapper_equals_manual_cross_validation():
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    X, y = class_data(11, m=50, n=7, n_classes=2)
    est = KNeighborsClassifier(1)
    wrapper = fastfs.criteria.Wrapper(est, cv=5)

    def manual(XX, yy, subset):
        return float(np.mean(cross_val_score(clone(est), XX[:, sorted(subset)], yy, cv=5)))

    for subset in ([0], [1, 4], [0, 2, 3, 6]):
        assert fastfs.criteria.evaluate(X, y, subset, criterion=wrapper) == pytest.approx(
            manual(X, y, subset), rel=1e-12)
    got = fastfs.sfs(X, y, 2, criterion=wrapper)
    assert_search_equal(got, ref.search_sfs(X, y, 2, manual))


def test_wrapper_takes_a_generator_of_splits():
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    X, y = class_data(11, m=48, n=7, n_classes=2)
    est = KNeighborsClassifier(3)

    def manual(XX, yy, subset):
        return float(np.mean(cross_val_score(est, XX[:, sorted(subset)], yy, cv=KFold(4))))

    want = ref.search_sfs(X, y, 2, manual)
    for cv in (KFold(4).split(X), list(KFold(4).split(X))):
        got = fastfs.sfs(X, y, 2, criterion=fastfs.criteria.Wrapper(est, cv=cv))
        assert_search_equal(got, want)


def test_wrapper_scores_every_subset_on_the_same_folds():
    from sklearn.model_selection import ShuffleSplit, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    class RecordingSplit(ShuffleSplit):
        """A splitter that shuffles without a seed and remembers what it handed out."""

        def __init__(self):
            super().__init__(n_splits=3, test_size=0.25, random_state=None)
            self.handed_out = []

        def split(self, X, y=None, groups=None):
            splits = list(super().split(X, y, groups))
            self.handed_out.append(splits)
            return iter(splits)

    X, y = class_data(5, m=40, n=7, n_classes=2)
    est = KNeighborsClassifier(1)
    cv = RecordingSplit()
    got = fastfs.sbs(X, y, 2, criterion=fastfs.criteria.Wrapper(est, cv=cv))
    assert len(cv.handed_out) == 1
    splits = cv.handed_out[0]
    for subset, score in zip(got.subsets, got.history):
        assert score == pytest.approx(
            np.mean(cross_val_score(est, X[:, list(subset)], y, cv=splits)), rel=1e-12)


# ------------------------------------------------------------------------------------------
# ties break toward the lower index


def tie_data(rng):
    """Small integers (every distance and margin is exact): column 3 duplicates column 1, the
    most informative one; column 5 is constant."""
    m = 40
    y = np.repeat([0, 1], m // 2)
    X = rng.integers(0, 4, size=(m, 7)).astype(np.float64)
    X[:, 1] = 2 * y + rng.integers(0, 3, size=m)
    X[:, 3] = X[:, 1]
    X[:, 5] = 1.0
    return X, y


@pytest.mark.parametrize("criterion", ["loo_knn_accuracy", "margin"])
def test_ties_go_to_the_lower_index(criterion, rng):
    X, y = tie_data(rng)
    crit = ref.criterion(criterion)
    for strategy in ("sfs", "sbs", "sffs", "sfbs", "bidirectional", "exhaustive"):
        for k in (1, 2, 4, "best"):
            got = fastfs_search(strategy, X, y, k, criterion)
            assert_search_equal(got, ref.STRATEGIES[strategy](X, y, k, crit),
                                ordered=k != "best")
    # the duplicate pair: forward picks 1 first, never 3 ahead of it
    first = int(fastfs.sfs(X, y, 1, criterion=criterion).selected[0])
    assert crit(X, y, [1]) == crit(X, y, [3])
    if crit(X, y, [1]) == max(crit(X, y, [j]) for j in range(7)):
        assert first == 1


def test_all_features_tied(rng):
    # every candidate ties: the tie rule decides, and each search says so (EqualScoresWarning)
    X = np.ones((20, 5))
    y = np.repeat([0, 1], 10)

    def sel(search, *args, **kw):
        with pytest.warns(fastfs.EqualScoresWarning, match="every subset the search scored"):
            return [int(i) for i in search(X, y, *args, **kw).selected]

    assert sel(fastfs.sfs, 3, criterion="loo_knn_accuracy") == [0, 1, 2]
    assert sel(fastfs.sbs, 2, criterion="loo_knn_accuracy") == [3, 4]
    # "best": ties go to the smaller size, then the earlier record
    assert sel(fastfs.sfs, "best", criterion="loo_knn_accuracy") == [0]
    assert sel(fastfs.sbs, "best", criterion="loo_knn_accuracy") == [4]
    assert sel(fastfs.exhaustive, 2, criterion="margin") == [0, 1]
    for search in (fastfs.beam, fastfs.best_first, fastfs.bidirectional, fastfs.sffs):
        sel(search, criterion=lambda Xs, yy: 1.0)
    sel(fastfs.simulated_annealing, criterion=lambda Xs, yy: 1.0, n_iter=50, random_state=0)
    # a criterion that tells the features apart says nothing; neither does a search with a
    # single candidate (nothing to choose between)
    Xr = rng.standard_normal((20, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastfs.sfs(Xr, y, 2, criterion="loo_knn_accuracy")
        fastfs.sfs(X[:, :1], y, 1, criterion="loo_knn_accuracy")
        fastfs.exhaustive(Xr, y, 2, criterion="margin")


# ------------------------------------------------------------------------------------------
# n_features_to_select, callback, threads, feature names


def test_float_and_best_sizes():
    X, y = PROBLEMS["j3"]
    n = X.shape[1]
    assert len(fastfs.sfs(X, y, 0.05, criterion="j3").selected) == 1
    assert len(fastfs.sfs(X, y, 0.35, criterion="j3").selected) == int(0.35 * n)
    assert len(fastfs.sfs(X, y, 1.0, criterion="j3").selected) == n
    best = fastfs.sbs(X, y, "best", criterion="j3")
    hist = np.asarray(best.history)
    subsets = as_subsets(best.subsets)
    top = hist.max()
    winners = [i for i, v in enumerate(hist) if v == top]
    winner = min(winners, key=lambda i: (len(subsets[i]), i))
    assert tuple(sorted(int(i) for i in best.selected)) == subsets[winner]
    assert best.score == top


@pytest.mark.parametrize("case", [("sfs", {}), ("sffs", {}), ("beam", {"width": 3}),
                                  ("plus_l_minus_r", {"l": 2, "r": 1}), ("bidirectional", {})],
                         ids=case_id)
def test_best_keeps_the_list_order(case):
    """"best" returns a recorded subset; `selected` is still in S's list order at that record
    (order of addition for forward searches), as for an int size."""
    name, kw = case
    X, y = PROBLEMS["j3"]
    expected = ref.STRATEGIES[name](X, y, "best", ref.criterion("j3"), **kw)
    got = fastfs_search(name, X, y, "best", "j3", **kw)
    assert [int(i) for i in got.selected] == expected[0]


@pytest.mark.parametrize("bad", [0, -1, 11, 0.0, 1.5, -0.2, "all", "BEST"])
def test_bad_sizes(bad):
    X, y = PROBLEMS["j3"]
    with pytest.raises(ValueError, match="n_features_to_select"):
        fastfs.sfs(X, y, bad, criterion="j3")


@pytest.mark.parametrize("bad", [None, [3], object()])
def test_bad_size_types(bad):
    X, y = PROBLEMS["j3"]
    with pytest.raises((TypeError, ValueError), match="n_features_to_select"):
        fastfs.sfs(X, y, bad, criterion="j3")


@pytest.mark.parametrize("strategy,kw", [("sfs", {}), ("sbs", {}), ("sffs", {}),
                                         ("beam", {"width": 2})])
def test_callback_stops_and_returns_the_best_so_far(strategy, kw):
    X, y = SMALL_CLASS
    states = []

    def callback(state):
        states.append((state.step, state.score, tuple(int(i) for i in state.selection)))
        return len(states) == 3

    got = fastfs_search(strategy, X, y, "best", "margin", callback=callback, **kw)
    full = ref.STRATEGIES[strategy](X, y, "best", ref.criterion("margin"), **kw)
    assert got.stopped_early is True
    assert len(states) == 3
    assert [s[0] for s in states] == [0, 1, 2]
    assert [s[2] for s in states] == list(full[3][:3])
    assert_allclose([s[1] for s in states], full[2][:3], rtol=RTOL)
    assert as_subsets(got.subsets) == tuple(full[3][:3])
    top = max(full[2][:3])
    i = min((i for i in range(3) if full[2][i] == top), key=lambda i: (len(full[3][i]), i))
    assert tuple(sorted(int(j) for j in got.selected)) == full[3][i]
    assert got.score == pytest.approx(top, rel=RTOL)


def test_callback_returning_none_does_not_stop():
    X, y = SMALL_CLASS
    seen = []
    got = fastfs.sfs(X, y, 4, criterion="j3", callback=lambda s: seen.append(s.step))
    assert seen == [0, 1, 2, 3]
    assert got.stopped_early is False


@pytest.mark.parametrize("criterion", ["loo_knn_accuracy", "margin", "j3", "loo_knn_mse"])
@pytest.mark.parametrize("strategy", ["sfs", "sffs", "beam", "exhaustive"])
def test_threads_give_identical_results(strategy, criterion):
    X, y = SMALL_REAL if criterion == "loo_knn_mse" else SMALL_CLASS
    k = 3
    a = fastfs_search(strategy, X, y, k, criterion, n_jobs=1)
    b = fastfs_search(strategy, X, y, k, criterion, n_jobs=2)
    assert_array_equal(a.selected, b.selected)
    assert_array_equal(a.history, b.history)
    assert a.score == b.score
    assert as_subsets(a.subsets) == as_subsets(b.subsets)
    assert a.n_evaluations == b.n_evaluations


def test_feature_names_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = SMALL_CLASS
    names = [f"f{i}" for i in range(X.shape[1])]
    got = fastfs.sffs(pd.DataFrame(X, columns=names), pd.Series(y), 3, criterion="j3")
    plain = fastfs.sffs(X, y, 3, criterion="j3")
    assert_array_equal(got.selected, plain.selected)
    assert list(got.feature_names) == names
    assert list(got.selected_names) == [names[int(i)] for i in plain.selected]
    assert plain.feature_names is None


def test_string_labels(rng):
    X, y = SMALL_CLASS
    labels = np.array(["b", "a"])[y]
    a = fastfs.sfs(X, labels, 3, criterion="loo_knn_accuracy")
    assert_search_equal(a, ref.search_sfs(X, labels, 3, ref.criterion("loo_knn_accuracy")))


# ------------------------------------------------------------------------------------------
# errors


def test_plus_l_minus_r_bad_parameters():
    X, y = PROBLEMS["j3"]
    n = X.shape[1]
    with pytest.raises(ValueError, match=r"\bl\b.*\br\b|\br\b.*\bl\b"):
        fastfs.plus_l_minus_r(X, y, 3, l=2, r=2, criterion="j3")
    with pytest.raises(ValueError, match=r"\bl\b"):
        fastfs.plus_l_minus_r(X, y, 3, l=0, r=2, criterion="j3")
    with pytest.raises(ValueError, match=r"\br\b"):
        fastfs.plus_l_minus_r(X, y, 3, l=2, r=0, criterion="j3")
    with pytest.raises(ValueError, match="n_features_to_select"):  # K + r > n
        fastfs.plus_l_minus_r(X, y, n - 1, l=3, r=2, criterion="j3")
    with pytest.raises(ValueError, match="n_features_to_select"):  # K - l < 1
        fastfs.plus_l_minus_r(X, y, 2, l=2, r=3, criterion="j3")
    with pytest.raises(TypeError):
        fastfs.plus_l_minus_r(X, y, 3, l=2.5, r=1, criterion="j3")


def test_exhaustive_limit():
    X, y = PROBLEMS["j3"]
    with pytest.raises(ValueError, match=r"252.*max_subsets|max_subsets.*252"):
        fastfs.exhaustive(X, y, 5, criterion="j3", max_subsets=100)
    with pytest.raises(ValueError, match=r"1023.*max_subsets|max_subsets.*1023"):
        fastfs.exhaustive(X, y, "best", criterion="j3", max_subsets=1000)
    assert len(fastfs.exhaustive(X, y, 5, criterion="j3", max_subsets=252).selected) == 5


def test_unknown_criterion_lists_the_valid_ones():
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="criterion") as info:
        fastfs.sfs(X, y, 2, criterion="j4")
    for name in ("loo_knn_accuracy", "margin", "least_squares", "j3", "bhattacharyya"):
        assert name in str(info.value)
    with pytest.raises(ValueError, match="criterion"):
        fastfs.criteria.evaluate(X, y, [0], criterion="accuracy")
    with pytest.raises(TypeError, match="criterion"):
        fastfs.sfs(X, y, 2, criterion=3)


def test_real_criterion_needs_real_y():
    X, y = SMALL_CLASS
    with pytest.raises(TypeError, match="y"):
        fastfs.sfs(X, np.array(["a", "b"])[y], 2, criterion="least_squares")


@pytest.mark.parametrize("criterion", ["j3", "loo_knn_accuracy", "divergence"])
def test_class_criterion_with_real_valued_y(criterion, rng):
    X, _ = SMALL_CLASS
    y = rng.standard_normal(X.shape[0])  # every value its own "class"
    with pytest.raises(ValueError, match="y"):
        fastfs.sfs(X, y, 2, criterion=criterion)


@pytest.mark.parametrize("width,exc", [(0, ValueError), (-2, ValueError), (1.5, TypeError)])
def test_bad_width(width, exc):
    X, y = SMALL_CLASS
    with pytest.raises(exc, match="width"):
        fastfs.beam(X, y, 2, width=width, criterion="j3")


def test_bad_criterion_parameters():
    """Rejected when built or at the latest when used."""
    C = fastfs.criteria
    X, y = SMALL_CLASS
    for make, name in ((lambda: C.LooKnnAccuracy(n_neighbors=0), "n_neighbors"),
                       (lambda: C.J3(ridge=-1.0), "ridge"),
                       (lambda: C.Divergence(ridge=-0.5), "ridge"),
                       (lambda: C.Margin(utility="cubic"), "utility")):
        with pytest.raises(ValueError, match=name):
            fastfs.criteria.evaluate(X, y, [0, 1], criterion=make())


def test_bad_inputs():
    X, y = SMALL_CLASS
    with pytest.raises(ValueError, match="X"):
        fastfs.sfs(np.where(np.eye(X.shape[0], X.shape[1]) > 0, np.nan, X), y, 2,
                   criterion="j3")
    with pytest.raises(ValueError, match="y"):
        fastfs.sfs(X, y[:-1], 2, criterion="j3")
    with pytest.raises(ValueError, match="n_jobs"):
        fastfs.sfs(X, y, 2, criterion="j3", n_jobs=0)
    with pytest.raises(ValueError, match="features"):
        fastfs.criteria.evaluate(X, y, [], criterion="j3")
    with pytest.raises((ValueError, IndexError), match="features"):
        fastfs.criteria.evaluate(X, y, [0, X.shape[1]], criterion="j3")


@pytest.mark.parametrize("n, k", [(70, "best"), (1000, 500), (1100, 550), (40, 20)])
def test_exhaustive_refusal_states_the_subset_count(n, k):
    # The count is C(n, k) summed over the sizes: beyond any integer type for wide data, where
    # it was once cast to one (undefined behaviour; the message read -9223372036854775808).
    X = np.random.default_rng(0).standard_normal((12, n))
    y = np.arange(12) % 2
    sizes = range(1, n + 1) if k == "best" else [k]
    count = sum(math.comb(n, s) for s in sizes)
    text = (str(count) if count < 2**53 else f"{float(count):.3g}" if count < 10**308
            else "more than 1e308")
    with pytest.raises(ValueError, match=f"would evaluate {re.escape(text)} subsets, more than "
                                         "max_subsets = 1000;"):
        fastfs.exhaustive(X, y, k, criterion="j3", max_subsets=1000)


def test_reference_exhaustive_is_brute_force():
    """The reference itself: exhaustive = first maximum over itertools.combinations."""
    X, y = SMALL_CLASS
    crit = ref.criterion("j3")
    for k in (2, 5):
        values = [(crit(X, y, list(c)), c) for c in itertools.combinations(range(8), k)]
        top = max(v for v, _ in values)
        assert tuple(ref.search_exhaustive(X, y, k, crit)[0]) == next(c for v, c in values
                                                                      if v == top)


# ------------------------------------------------------------------------------------------
# 1-NN accuracy screens candidate additions on a float32 copy of the distance state and
# decides the samples the rounding bound leaves open exactly in float64. Data built to sit on
# that boundary: a large common offset (float32 keeps 24 bits, so it rounds away the small
# parts), differences below float32's resolution of the offset, exact duplicates and exact
# distance ties. Every value is a multiple of 2^-20 below 2^21, so every float64 distance is
# exact whatever the order of its sum: the search (incremental) and the reference (from
# scratch) see the same numbers, and any difference would be the screen's.


def screen_data(seed: int, offset: float, m: int = 520, n: int = 8):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=(m, n)).astype(np.float64)
    X = offset + base + rng.choice([0.0, 2.0**-10, 2.0**-9, 2.0**-16, 2.0**-20], size=(m, n))
    X[5] = X[6]                      # a duplicate pair
    y = (base[:, 0] + base[:, 1] + rng.integers(0, 2, m)) % 3
    return X, y


@pytest.mark.parametrize("offset", [2.0**10, 2.0**20])  # float32 keeps 2^-13 / 2^-3 of x
@pytest.mark.parametrize("seed", [0, 1])
def test_screened_accuracy_equals_float64_and_the_reference(seed, offset):
    # m >= 512 also runs the exact rechecks on two threads.
    X, y = screen_data(seed, offset)
    crit = ref.CRITERIA["loo_knn_accuracy"]
    expected = ref.search_sfs(X, y, 4, crit)
    for n_jobs in (1, 2):
        got = fastfs.sfs(X, y, 4, criterion="loo_knn_accuracy", n_jobs=n_jobs)
        assert_search_equal(got, expected)
        for subset, value in zip(got.subsets, got.history):
            # evaluate() scores on the float64 state alone, without the screen
            assert fastfs.criteria.evaluate(X, y, list(subset), "loo_knn_accuracy") == value


def test_first_forward_step_on_single_features_with_ties_and_underflow(rng):
    # The first step of a forward search scores each feature alone by sorting it. Exact ties
    # (repeated values) and squared differences that underflow to 0 (1e-200 apart) must be
    # decided as on the distance state: the lowest original index among the equally near.
    m = 90
    X = rng.choice([0.0, 1e-200, -1e-200, 1.0, 2.0, 2.0 + 2.0**-51], size=(m, 6))
    X[:, 5] = rng.integers(0, 3, m)
    y = rng.integers(0, 3, m)
    crit = ref.CRITERIA["loo_knn_accuracy"]
    got = fastfs.sfs(X, y, 1, criterion="loo_knn_accuracy")
    values = [crit(X, y, [f]) for f in range(6)]
    assert got.history[0] == max(values)
    assert got.selected[0] == int(np.argmax(values))
    for f in range(6):
        # sfs on one column scores that column through the sorted path; evaluate() on the state
        assert fastfs.sfs(X[:, [f]], y, 1, criterion="loo_knn_accuracy").history[0] == values[f]
        assert fastfs.criteria.evaluate(X, y, [f], "loo_knn_accuracy") == values[f]


# ------------------------------------------------------------------------------------------
# least squares criterion on rank-deficient subsets


def _close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def _lstsq_rss(A, b):
    coef = np.linalg.lstsq(A, b, rcond=None)[0]
    return float(np.sum((b - A @ coef) ** 2))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_least_squares_criterion_equals_lstsq_on_rank_deficient_subsets(fit_intercept):
    """A column repeated or scaled (the solver sees a pivot of rounding size and takes huge
    coefficients whose residual is noise) or a zero column (0 / 0): J = -RSS of lstsq."""
    rng = np.random.default_rng(11)
    X = 0.05 * rng.normal(size=(80, 4))  # diabetes-like scales
    y = 150 + 77 * (X[:, 0] / 0.05 + rng.normal(size=80))
    crit = fastfs.criteria.LeastSquares(fit_intercept=fit_intercept)
    copies = [X[:, 1], 0.47 * X[:, 1], 2.11 * X[:, 0], 1.37 * X[:, 2], np.zeros(80)]
    Xd = np.column_stack([X] + copies)
    subsets = [[0, 1, 4], [0, 1, 5], [0, 1, 2, 6], [2, 3, 7], [0, 8], [8], [1, 4, 5]]
    for subset in subsets:
        A, b = Xd[:, subset], y
        if fit_intercept:
            A, b = A - A.mean(axis=0), b - b.mean()
        _close(fastfs.criteria.evaluate(Xd, y, subset, crit), -_lstsq_rss(A, b), 1e-9)
    # Small samples, a target far from X's scale: the cases where the solver's residual was
    # up to 40% off.
    for t in range(40):
        m, p = 12 + 3 * t, 1 + t % 5
        Xt = 0.05 * rng.normal(size=(m, p))
        Xt = np.column_stack([Xt, (0.84, 1.0, 1.58, 1.21)[t % 4] * Xt[:, t % p]])
        yt = 150 + 77 * rng.normal(size=m)
        A, b = Xt, yt
        if fit_intercept:
            A, b = A - A.mean(axis=0), b - b.mean()
        _close(fastfs.criteria.evaluate(Xt, yt, np.arange(p + 1), crit), -_lstsq_rss(A, b),
              1e-9)


# ------------------------------------------------------------------------------------------
# n_features_to_select="auto" and tol


AUTO_CASES = [("sfs", {}), ("sbs", {}), ("sffs", {}), ("sfbs", {}),
              ("plus_l_minus_r", {"l": 2, "r": 1}), ("plus_l_minus_r", {"l": 1, "r": 2}),
              ("beam", {"width": 3})]


@pytest.mark.parametrize("case", AUTO_CASES, ids=case_id)
@pytest.mark.parametrize("criterion", ["j3", "least_squares", "loo_knn_accuracy"])
def test_auto_is_best_cut_at_the_first_round_without_gain(criterion, case):
    """"auto" walks the same path as "best" (the reference's records are a prefix), and the
    cut: single-step strategies stop at the first record that does not beat every earlier
    one; every strategy returns the smallest of its records tied with their maximum."""
    name, kw = case
    X, y = PROBLEMS["least_squares" if criterion == "least_squares" else "j3"]
    full = ref.STRATEGIES[name](X, y, "best", ref.criterion(criterion), **kw)
    got = fastfs_search(name, X, y, "auto", criterion, **kw)
    assert fastfs_search(name, X, y, "best", criterion, **kw).subsets == tuple(full[3])
    hist, subsets = list(got.history), as_subsets(got.subsets)
    assert subsets == tuple(full[3][:len(subsets)])
    assert_allclose(hist, full[2][:len(hist)], rtol=RTOL)
    if name in ("sfs", "sbs", "beam"):
        stop = next((i for i in range(1, len(full[2]))
                     if not ref.beats(full[2][i], max(full[2][:i]))), len(full[2]) - 1)
        assert len(hist) == stop + 1
    top = max(hist)
    winner = min((i for i, v in enumerate(hist) if not ref.beats(top, v)),
                 key=lambda i: (len(subsets[i]), i))
    assert tuple(sorted(int(i) for i in got.selected)) == subsets[winner]
    assert got.score == hist[winner]


def test_auto_is_the_default_and_stops_early():
    X, y = class_data(5, m=90, n=40)
    got = fastfs.sfs(X, y)
    assert got.subsets == fastfs.sfs(X, y, "auto").subsets
    assert len(got.history) < 20
    assert fastfs.sbs(X, y, criterion="j3").selected.size == 40  # j3 falls with every removal


def test_auto_with_tol_matches_scikit_learn():
    """fastfs.sfs(..., "auto", tol) with a Wrapper = SequentialFeatureSelector(
    n_features_to_select="auto", tol) with the same estimator and folds."""
    from sklearn.datasets import load_wine
    from sklearn.feature_selection import SequentialFeatureSelector
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    est = make_pipeline(StandardScaler(), KNeighborsClassifier(3))
    for tol in (0.005, 0.02, 0.1):
        sk = SequentialFeatureSelector(est, n_features_to_select="auto", tol=tol, cv=5).fit(X, y)
        got = fastfs.sfs(X, y, "auto", tol=tol,
                         criterion=fastfs.criteria.Wrapper(est, cv=5))
        assert_array_equal(got.support, sk.get_support()), tol


def test_tol_picks_the_smallest_subset_within_tol_of_the_best():
    X, y = PROBLEMS["j3"]
    plain = fastfs.sbs(X, y, "best", criterion="j3")
    hist, subsets = np.asarray(plain.history), as_subsets(plain.subsets)
    for tol in (0.0, 0.05, 0.3, 1.0):
        got = fastfs.sbs(X, y, "best", criterion="j3", tol=tol)
        assert as_subsets(got.subsets) == subsets
        ok = [i for i, v in enumerate(hist) if v >= hist.max() - tol or ref.tied(v, hist.max())]
        winner = min(ok, key=lambda i: (len(subsets[i]), i))
        assert tuple(sorted(int(i) for i in got.selected)) == subsets[winner]
    # a negative tol lets backward "auto" lose up to |tol| before it stops
    assert fastfs.sbs(X, y, "auto", criterion="j3", tol=-2.5).selected.size < X.shape[1]


def test_bad_tol_and_auto():
    X, y = PROBLEMS["j3"]
    with pytest.raises(ValueError, match="tol: used only with"):
        fastfs.sfs(X, y, 3, criterion="j3", tol=0.1)
    with pytest.raises(ValueError, match="tol: must be >= 0"):
        fastfs.sfs(X, y, "auto", criterion="j3", tol=-0.1)
    with pytest.raises(ValueError, match="tol: must be >= 0"):
        fastfs.sbs(X, y, "best", criterion="j3", tol=-0.1)
    with pytest.raises(ValueError, match="tol: must be finite"):
        fastfs.sfs(X, y, "auto", criterion="j3", tol=float("nan"))
    with pytest.raises(TypeError, match="tol"):
        fastfs.sfs(X, y, "auto", criterion="j3", tol="0.1")
    for name in ("exhaustive", "bidirectional"):
        with pytest.raises(ValueError, match="n_features_to_select.*'best', got 'auto'"):
            getattr(fastfs, name)(X, y, "auto", criterion="j3")


FORWARD_STRATEGIES = [("sfs", 0, 0, 1), ("sffs", 0, 0, 1), ("bidirectional", 0, 0, 1),
                      ("plus_l_minus_r", 2, 1, 1), ("beam", 0, 0, 2)]


def core_search(strategy, X, y, criterion, params, k, l, r, width):
    """The extension's search itself, below any rescaling the Python layer may do."""
    from fastfs import _core
    codes = None if criterion == "loo_knn_mse" else np.unique(y, return_inverse=True)[1]
    yy = np.asarray(y, dtype=np.float64) if criterion == "loo_knn_mse" else None
    return _core.search(strategy, np.ascontiguousarray(X, dtype=np.float64),
                        None if codes is None else codes.astype(np.int64), yy,
                        _core.CriterionSpec(criterion, **params), None, k, False, False, 0.0,
                        l, r, width, 0.0, False, 1, None)


@pytest.mark.parametrize("strategy, l, r, width", FORWARD_STRATEGIES)
def test_distance_criteria_refuse_squared_distances_that_overflow(strategy, l, r, width):
    # Squared differences of |x| ~ 1e154 overflow float64. They once read one element before an
    # index array in the first forward step (scores that depended on heap bytes, or SIGABRT)
    # and turned later scores into nonsense; the core now refuses such data whatever the
    # caller does. Scaling by a power of two is exact for every squared distance, so up to the
    # overflow the search must not change at all.
    X, y = class_data(3, m=60, n=8)
    X = X / np.abs(X).max()
    params = {"n_neighbors": 1}
    base = core_search(strategy, X, y, "loo_knn_accuracy", params, 3, l, r, width)
    big = core_search(strategy, X * 2.0**500, y, "loo_knn_accuracy", params, 3, l, r, width)
    assert_array_equal(big.selected, base.selected)
    assert_array_equal(big.history, base.history)
    for scale in (2.0**512, 1e154, 1e300):
        with pytest.raises(ValueError, match="X: values too large.*overflow"):
            core_search(strategy, X * scale, y, "loo_knn_accuracy", params, 3, l, r, width)
        with pytest.raises(ValueError, match="X: values too large.*overflow"):
            core_search(strategy, X * scale, y, "loo_knn_accuracy", {"n_neighbors": 3}, 3, l, r,
                        width)
        with pytest.raises(ValueError, match="X: values too large.*overflow"):
            core_search(strategy, X * scale, y, "margin", {"utility": "linear", "beta": 1.0}, 3,
                        l, r, width)


def test_loo_knn_mse_and_gflip_refuse_squared_distances_that_overflow():
    from fastfs import _core
    X, y = class_data(4, m=42, n=8)
    X = X / np.abs(X).max()
    target = X[:, 0] + 0.1 * X[:, 1]
    params = {"n_neighbors": 4, "beta": 0.0}
    # the default beta adds up the 4 nearest squared distances of all 40 samples
    base = core_search("sfs", X, target, "loo_knn_mse", params, 2, 0, 0, 1)
    big = core_search("sfs", X * 2.0**495, target, "loo_knn_mse", params, 2, 0, 0, 1)
    assert_array_equal(big.selected, base.selected)
    with pytest.raises(ValueError, match="X: values too large.*overflow"):
        core_search("sfs", X * 2.0**510, target, "loo_knn_mse", params, 2, 0, 0, 1)
    codes = np.unique(y, return_inverse=True)[1].astype(np.int64)
    with pytest.raises(ValueError, match="X: values too large.*overflow"):
        _core.gflip(X * 1e160, codes, "linear", 1.0, 5, 1, np.zeros(8, np.uint8), 0, 1, None)


def test_recorded_subsets_share_one_int_per_feature():
    # A backward search over n features records about n^2 / 2 indices: each index is one
    # shared Python int (8 bytes an entry, not a 28-byte int of its own), and the subsets
    # are those the search walked (each one feature fewer than the one before).
    X = np.random.default_rng(5).normal(size=(30, 300))
    y = np.arange(30) % 2
    r = fastfs.sbs(X, y, n_features_to_select=296)
    assert [len(s) for s in r.subsets] == [300, 299, 298, 297, 296]
    assert all(set(b) < set(a) for a, b in zip(r.subsets, r.subsets[1:]))
    assert r.subsets[-1] == tuple(sorted(r.selected))
    ids = {id(v) for s in r.subsets for v in s if v == 299}
    assert len(ids) == 1 and all(type(v) is int for v in r.subsets[0])


def test_branch_and_bound_max_evaluations():
    # Noise prunes badly (24 features to 8: about 1.4 million evaluations). The cap stops
    # the expansion: the result is the best complete subset found, stopped_early, a warning;
    # with no cap the answer is exhaustive search's.
    gen = np.random.default_rng(0)
    X = gen.normal(size=(120, 14))
    y = (X[:, :3].sum(axis=1) > 0).astype(int)
    full = fastfs.branch_and_bound(X, y, 5, max_evaluations=None)
    ex = fastfs.exhaustive(X, y, 5, criterion="j3")
    assert not full.stopped_early and full.n_evaluations > 2000
    assert full.selected.tolist() == ex.selected.tolist()
    assert full.score == pytest.approx(ex.score, rel=1e-12)
    with pytest.warns(UserWarning, match="max_evaluations=2000 .*not proven best"):
        capped = fastfs.branch_and_bound(X, y, 5, max_evaluations=2000)
    assert capped.stopped_early and 2000 <= capped.n_evaluations < 2000 + X.shape[1]
    # the best of what it scored: the last improvement it recorded, a real size-5 subset
    assert len(capped.selected) == 5 and capped.score == capped.history[-1] <= full.score
    assert fastfs.criteria.evaluate(X, y, capped.selected, "j3") == pytest.approx(
        capped.score, rel=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastfs.branch_and_bound(X, y, 5, max_evaluations=full.n_evaluations + 1)
    with pytest.raises(ValueError, match="max_evaluations: reached before any subset"):
        fastfs.branch_and_bound(X, y, 5, max_evaluations=3)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_evaluations"):
            fastfs.branch_and_bound(X, y, 5, max_evaluations=bad)
    for bad in (1.5, "10"):
        with pytest.raises(TypeError, match="max_evaluations"):
            fastfs.branch_and_bound(X, y, 5, max_evaluations=bad)


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("crit", ["loo_knn_accuracy", "zero_one"])
def test_a_subsets_score_does_not_depend_on_the_path_to_it(dataset, crit):
    """Backward steps scored a removal on D - delta(x), whose rounding residue broke the exact
    distance ties of data with repeated values: sbs on iris recorded (2, 3) at 0.96 where its
    leave-one-out 1-NN accuracy is 0.9533 (sffs recorded it at both), and the floating
    searches then chose by the residue. Every recorded J must be the subset's own."""
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    criterion = {"loo_knn_accuracy": "loo_knn_accuracy",
                 "zero_one": fastfs.criteria.Margin("zero_one"),
                 "loo_knn_accuracy_3": fastfs.criteria.LooKnnAccuracy(3)}[crit]
    k = 3 if crit == "loo_knn_accuracy_3" else 1
    for search, size in ((fastfs.sbs, 1), (fastfs.sffs, "best"), (fastfs.sfbs, "best"),
                         (fastfs.plus_l_minus_r, 2)):
        kw = {"l": 1, "r": 2} if search is fastfs.plus_l_minus_r else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastfs.EqualScoresWarning)
            res = search(X, y, size, criterion=criterion, **kw)
        for subset, J in zip(res.subsets, res.history):
            if subset:
                assert J == fastfs.criteria.evaluate(X, y, list(subset), criterion), \
                    (search.__name__, subset)
        if crit != "zero_one":   # the NumPy reference: stable sort of float64 distances
            assert res.score == pytest.approx(
                ref.crit_loo_knn_accuracy(X, y, list(res.selected), k), abs=1e-12)
    if dataset == "iris" and crit == "loo_knn_accuracy":
        res = fastfs.sbs(X, y, 2)
        assert sorted(res.selected.tolist()) == [2, 3]
        assert res.score == pytest.approx(143 / 150)


def test_removals_on_exact_data_keep_their_ties():
    """On whole numbers (pixel levels: sklearn's digits) every distance sum is exact, so the
    removals keep D - delta(x) without a check; the recorded J are still the subsets' own."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:300, 18:38], y[:300]
    for criterion in ("loo_knn_accuracy", fastfs.criteria.Margin("zero_one")):
        for search, size in ((fastfs.sbs, 1), (fastfs.sfbs, "best")):
            res = search(X, y, size, criterion=criterion)
            for subset, J in zip(res.subsets, res.history):
                if subset:
                    assert J == fastfs.criteria.evaluate(X, y, list(subset), criterion)
    res = fastfs.sbs(X, y, 5)
    assert res.score == pytest.approx(ref.crit_loo_knn_accuracy(X, y, list(res.selected)),
                                      abs=1e-12)
