"""TuRF, VLS and iterative Relief on every data type of the Relief scorers: discrete, mixed and
missing-value data with binary, multi-class and continuous targets pass through the wrappers
to the scorer, equal to skrebate 0.8's TURF, VLS and Iter where skrebate defines them, and to
the scorer composed by hand where it does not (an explicit discrete list on a subset of the
columns)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
from test_relief_datatypes import K, hit_groups_larger_than, snp_data, stable_skrebate  # noqa: F401

skrebate = pytest.importorskip("skrebate")

CORES = {"relieff": lambda **kw: skrebate.ReliefF(n_neighbors=K, n_jobs=1, **kw),
         "multisurf": lambda **kw: skrebate.MultiSURF(n_jobs=1, **kw)}


def _data(kind, target, missing, n=12):
    # the first seed giving every sample more than K hits and misses (see test_relief_datatypes)
    for seed in range(20):
        X, y = snp_data(kind, target, missing, n=n, seed=seed)
        if hit_groups_larger_than(y, K, target == "continuous"):
            return X, y
    raise AssertionError("no seed gives groups larger than K")


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skrebate's own RuntimeWarnings (0/0 on NaN pairs)
        return est.fit(X.copy(), np.asarray(y), **kw).feature_importances_


def _params(core, **kw):
    return {"n_neighbors": K, **kw} if core == "relieff" else kw


CASES = [("discrete", "continuous", 0.0), ("mixed", "continuous", 0.0),
         ("mixed", "continuous", 0.1), ("discrete", "binary", 0.1),
         ("mixed", "multiclass", 0.1)]


@pytest.mark.parametrize("kind,target,missing", CASES)
@pytest.mark.parametrize("core", ["relieff", "multisurf"])
def test_turf_equals_skrebate_on_every_data_type(core, kind, target, missing):
    X, y = _data(kind, target, missing)
    want = _fit(skrebate.TURF(CORES[core](), pct=0.5, num_scores_to_return=3), X, y)
    got = fastfs.turf(X, y, method=core, pct=0.5, n_features_to_keep=3, **_params(core))
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind,target,missing", CASES)
@pytest.mark.parametrize("core", ["relieff", "multisurf"])
def test_vls_equals_skrebate_on_every_data_type(core, kind, target, missing):
    X, y = _data(kind, target, missing)
    want = _fit(skrebate.VLS(CORES[core](), num_feature_subset=5, size_feature_subset=4,
                             random_state=3), X, y)
    got = fastfs.vls(X, y, method=core, n_subsets=5, subset_size=4, random_state=3,
                     **_params(core))
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("target", ["continuous", "multiclass"])
@pytest.mark.parametrize("core", ["relieff", "multisurf"])
def test_iterative_relief_equals_skrebates_iter_on_discrete_data(core, target):
    # (binary target left out: from round 2 the distances are sums of the last scores over the
    # differing genotypes, and on these data distinct sets of genotypes tie exactly; the two
    # libraries' scores differ in the last bit (3e-17), which orders the tied neighbours
    # differently. Given the same distance weights, fastfs.relieff equals skrebate there.)
    X, y = _data("discrete", target, 0.0)
    want = _fit(skrebate.Iter(CORES[core](), max_iter=4, beta=0.2), X, y)
    got = fastfs.iterative_relief(X, y, method=core, max_iter=4, learning_rate=0.2,
                                  **_params(core))
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("target", ["continuous", "multiclass"])
@pytest.mark.parametrize("core", ["relieff", "multisurf"])
def test_iterative_relief_on_mixed_data_is_the_scorer_iterated_by_hand(core, target):
    # skrebate's Iter fails on mixed data (its weighted distance passes every feature's weight
    # to the distance of the continuous ones alone); the rule of Iter, with the scorer's
    # distance_weights, written out
    X, y = _data("mixed", target, 0.0)
    kw = _params(core, discrete_threshold=3)
    scorer = getattr(fastfs, core)
    scores = scorer(X, y, **kw).weights
    previous = None
    for _ in range(1, 4):
        unit = np.where(scores < 0, 0.0, scores / scores.max())
        dw = unit if previous is None else previous + 0.2 * (unit - previous)
        new = scorer(X, y, distance_weights=dw, **kw).weights
        done = np.all(np.abs(unit - new) < 1e-4)
        previous, scores = dw, new
        if done:
            break
    got = fastfs.iterative_relief(X, y, method=core, max_iter=4, learning_rate=0.2, **kw)
    assert_array_equal(got.weights, scores)


@pytest.mark.parametrize("core", ["relieff", "surf"])
def test_threshold_and_target_rules_reach_the_scorer(core):
    # categorical_threshold / label_type as in skrebate: a threshold that makes the continuous
    # half discrete, and an 11-valued y read as classes rather than a continuous target
    X, y = _data("mixed", "binary", 0.0)
    X[:, -1] = np.round(X[:, -1])  # a few distinct values
    est = {"relieff": lambda **kw: skrebate.ReliefF(n_neighbors=K, n_jobs=1, **kw),
           "surf": lambda **kw: skrebate.SURF(n_jobs=1, **kw)}[core]
    want = _fit(skrebate.TURF(est(categorical_threshold=4), pct=0.5, num_scores_to_return=3),
                X, y)
    got = fastfs.turf(X, y, method=core, n_features_to_keep=3,
                      **_params(core, discrete_threshold=4))
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)
    y11 = np.arange(X.shape[0]) % 11
    want = _fit(skrebate.VLS(est(label_type="multiclass"), num_feature_subset=4,
                             size_feature_subset=5, random_state=1), X, y11)
    got = fastfs.vls(X, y11, method=core, n_subsets=4, subset_size=5, random_state=1,
                     **_params(core, target="classes"))
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)


def test_explicit_discrete_features_follow_the_columns_of_each_subset():
    # skrebate's categorical_features index the columns of the data it is fitted on, so its
    # TURF and VLS would read a subset's columns with the full data's indices; fastfs gives
    # every subset its part of the list: equal to the scorer composed by hand.
    X, y = _data("continuous", "continuous", 0.05)
    listed = [0, 1, 7]
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[listed] = True
    got = fastfs.vls(X, y, n_subsets=5, subset_size=4, random_state=2, n_neighbors=K,
                     discrete_features=listed)
    by_hand = np.full(X.shape[1], -np.inf)
    for subset in fastfs.relief_wrappers.vls_subsets(X.shape[1], 5, 4, random_state=2):
        s = np.asarray(subset)
        w = fastfs.relieff(X[:, s], y, n_neighbors=K, discrete_features=mask[s]).weights
        by_hand[s] = np.maximum(by_hand[s], w)
    assert_array_equal(got.weights, by_hand)
    # TuRF, one round (12 features, keep 6): the scorer on all columns, then on the best half
    # with its part of the list; the dropped half one tier below
    got = fastfs.turf(X, y, pct=0.5, n_features_to_keep=6, n_neighbors=K,
                      discrete_features=listed)
    first = fastfs.relieff(X, y, n_neighbors=K, discrete_features=mask).weights
    kept = np.sort(np.argsort(-first, kind="stable")[:6])
    final = fastfs.relieff(X[:, kept], y, n_neighbors=K, discrete_features=mask[kept]).weights
    by_hand = np.full(X.shape[1], final.min() - 0.01 * (final.max() - final.min()))
    by_hand[kept] = final
    assert_array_equal(got.weights, by_hand)
    assert_array_equal(got.weights, fastfs.turf(X, y, pct=0.5, n_features_to_keep=6,
                                                n_neighbors=K, discrete_features=mask).weights)


def test_vls_distance_weights_equal_skrebates_subset_weights():
    X, y = _data("discrete", "continuous", 0.0)
    w = np.random.default_rng(4).uniform(0.2, 1.0, X.shape[1])
    want = _fit(skrebate.VLS(CORES["relieff"](), num_feature_subset=5, size_feature_subset=4,
                             random_state=0), X, y, weights=w)
    got = fastfs.vls(X, y, n_subsets=5, subset_size=4, random_state=0, n_neighbors=K,
                     distance_weights=w)
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)


def test_wrapper_errors_name_the_argument():
    X, y = _data("discrete", "binary", 0.1)
    bad = X.copy()
    bad[0, 0] = np.inf
    for fn in (fastfs.turf, fastfs.vls, fastfs.iterative_relief):
        with pytest.raises(ValueError, match="X: contains infinity"):
            fn(bad, y)
        with pytest.raises(ValueError, match="discrete_features: feature index out of range"):
            fn(np.nan_to_num(X), y, discrete_features=[X.shape[1]])
    with pytest.raises(ValueError, match="distance_weights"):
        fastfs.vls(X, y, distance_weights=np.ones(3))
    with pytest.raises(ValueError, match="X: contains missing values .*iterative_relief"):
        fastfs.iterative_relief(X, y)
    with pytest.raises(TypeError, match="distance_weights: iterative_relief sets"):
        fastfs.iterative_relief(np.nan_to_num(X), y, distance_weights=np.ones(X.shape[1]))
    # a continuous target with ties and a class target reach the scorer's own checks
    with pytest.raises(ValueError, match="y: .*constant"):
        fastfs.turf(X, np.zeros(X.shape[0]), target="continuous")


# ------------------------------------------------------------------------------------------
# bad input through the wrappers: the scorers' errors and documented rules


def _skrebate_relieff(**kw):
    return skrebate.ReliefF(n_jobs=1, **{"n_neighbors": K, **kw})


def test_missing_column_and_row_pass_through_as_in_skrebate():
    # an all-NaN column scores 0 and an all-NaN row adds nothing (the scorers' rules), in
    # every subset the wrappers score. (With the empty column at 4, feature 5 also scores
    # exactly 0 in TuRF's second round, and the two break that tie differently; see turf.)
    X, y = _data("mixed", "continuous", 0.05)
    X[:, 9] = np.nan
    X[7] = np.nan
    want = _fit(skrebate.TURF(_skrebate_relieff(), pct=0.5, num_scores_to_return=3), X, y)
    got = fastfs.turf(X, y, n_features_to_keep=3, n_neighbors=K)
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)
    want = _fit(skrebate.VLS(_skrebate_relieff(), num_feature_subset=5, size_feature_subset=4,
                             random_state=6), X, y)
    got = fastfs.vls(X, y, n_subsets=5, subset_size=4, random_state=6, n_neighbors=K)
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)
    assert got.weights[9] == 0.0


def test_tied_continuous_target_and_fraction_of_neighbours_as_in_skrebate():
    # a continuous target with many ties (one decimal), and n_neighbors as a fraction of the
    # samples (k = int(0.2 * m / 2) = 6 < every hit group)
    X, y = _data("discrete", "continuous", 0.1)
    y = np.round(y, 1)
    assert 10 < np.unique(y).size < y.size
    want = _fit(skrebate.TURF(_skrebate_relieff(n_neighbors=0.2), pct=0.5,
                              num_scores_to_return=3), X, y)
    got = fastfs.turf(X, y, n_features_to_keep=3, n_neighbors=0.2)
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)
    want = _fit(skrebate.VLS(_skrebate_relieff(n_neighbors=0.2), num_feature_subset=5,
                             size_feature_subset=4, random_state=2), X, y)
    got = fastfs.vls(X, y, n_subsets=5, subset_size=4, random_state=2, n_neighbors=0.2)
    assert_allclose(got.weights, want, rtol=0, atol=1e-6)
    Xc = np.nan_to_num(X)
    assert_array_equal(fastfs.iterative_relief(Xc, y, max_iter=3, n_neighbors=0.2).weights,
                       fastfs.iterative_relief(Xc, y, max_iter=3, n_neighbors=6).weights)


def test_k_larger_than_a_class_uses_every_other_member_in_each_subset():
    # the scorer's documented rule (never its own neighbour): k beyond every class is k = m
    X, y = _data("mixed", "multiclass", 0.1)
    m = X.shape[0]
    for k in (m - 1, 0.99):  # an int beyond every class, and a fraction giving one
        assert_array_equal(fastfs.vls(X, y, n_subsets=4, subset_size=4, random_state=0,
                                      n_neighbors=k).weights,
                           fastfs.vls(X, y, n_subsets=4, subset_size=4, random_state=0,
                                      n_neighbors=m).weights)
        assert_array_equal(fastfs.turf(X, y, n_features_to_keep=3, n_neighbors=k).weights,
                           fastfs.turf(X, y, n_features_to_keep=3, n_neighbors=m).weights)


WRAPPERS = {"turf": lambda X, y, **kw: fastfs.turf(X, y, n_features_to_keep=3, **kw),
            "vls": lambda X, y, **kw: fastfs.vls(X, y, n_subsets=4, subset_size=4,
                                                  random_state=0, **kw),
            "iterative_relief": lambda X, y, **kw: fastfs.iterative_relief(X, y, **kw)}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_wrapper_bad_input_gives_the_scorers_clear_errors(name):
    fn = WRAPPERS[name]
    X, y = _data("discrete", "binary", 0.0)
    with pytest.raises(ValueError, match="y: .*single class"):
        fn(X, np.zeros(X.shape[0], dtype=int))
    with pytest.raises(ValueError, match="y: .*constant"):
        fn(X, np.ones(X.shape[0]), target="continuous")
    with pytest.raises(ValueError, match="n_neighbors: the fraction 0.01 .* fewer than one"):
        fn(X, y, n_neighbors=0.01)
    with pytest.raises(ValueError, match="n_neighbors: a float is a fraction"):
        fn(X, y, n_neighbors=1.5)
    with pytest.raises(ValueError, match="X: every value is missing|X: contains missing"):
        fn(np.full(X.shape, np.nan), y)


@pytest.mark.parametrize("name", ["relieff", "surf", "surfstar", "multisurf", "multisurfstar"])
def test_all_missing_X_is_an_error(name):
    # every score would be 0: no two samples share a feature to be compared on
    X, y = _data("discrete", "binary", 0.0)
    with pytest.raises(ValueError, match="X: every value is missing"):
        getattr(fastfs, name)(np.full(X.shape, np.nan), y)
