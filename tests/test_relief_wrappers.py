"""TuRF and VLS around the Relief-family scorers, and ReliefF's n_neighbors as a fraction:
equal to skrebate 0.8's TURF, VLS and ReliefF on generated epistasis-style data."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs

skrebate = pytest.importorskip("skrebate")


def xor_data(m=120, n=24, classes=2, seed=0):
    """Two interacting features (the class is the XOR of their signs) among noise."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, n))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    if classes == 3:
        y = np.where(X[:, 2] > 1.0, 2, y)
    return X, y


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("pct, keep", [(0.5, 5), (0.3, 10), (0.25, 100)])
def test_turf_relieff_equals_skrebate(classes, pct, keep):
    X, y = xor_data(classes=classes, seed=classes)
    want = skrebate.TURF(skrebate.ReliefF(n_neighbors=10), pct=pct,
                         num_scores_to_return=keep).fit(X, y).feature_importances_
    got = fastfs.turf(X, y, pct=pct, n_features_to_keep=keep, n_neighbors=10)
    assert_allclose(got.weights, want, rtol=0, atol=1e-12)
    assert_array_equal(got.ranking, np.argsort(-got.weights, kind="stable"))


def test_turf_multisurf_equals_skrebate():
    X, y = xor_data(m=80, n=16, seed=4)
    want = skrebate.TURF(skrebate.MultiSURF(), pct=0.5,
                         num_scores_to_return=4).fit(X, y).feature_importances_
    got = fastfs.turf(X, y, method="multisurf", pct=0.5, n_features_to_keep=4)
    assert_allclose(got.weights, want, rtol=0, atol=1e-12)


def test_turf_keeps_the_interacting_pair_on_top():
    X, y = xor_data(m=200, n=40, seed=7)
    got = fastfs.turf(X, y, pct=0.5, n_features_to_keep=4)
    assert set(got.ranking[:2]) == {0, 1}
    # The removal tiers sit below every surviving feature, in the order of removal.
    survivors = got.weights >= got.weights[got.ranking[3]]
    assert survivors.sum() == 4


def test_turf_with_a_callable_scorer_and_removal_tiers():
    # A scorer that returns each feature's column mean: the tiers are then known exactly.
    X = np.tile(np.arange(8, dtype=float), (5, 1))
    y = np.array([0, 1, 0, 1, 0])
    got = fastfs.turf(X, y, method=lambda A, b: A.mean(axis=0), pct=0.5, n_features_to_keep=2)
    # Round 1 keeps 4..7, round 2 keeps 6, 7; final scores 6, 7 (range 1, penalty 0.01).
    assert_allclose(got.weights, [5.98] * 4 + [5.99] * 2 + [6.0, 7.0])
    assert_array_equal(got.ranking[:2], [7, 6])


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n_subsets, size", [(10, 4), (8, 5), (9, 3)])
def test_vls_equals_skrebate(seed, n_subsets, size):
    X, y = xor_data(m=90, n=24, seed=seed)
    want = skrebate.VLS(skrebate.ReliefF(n_neighbors=10), num_feature_subset=n_subsets,
                        size_feature_subset=size, random_state=seed).fit(X, y)
    got = fastfs.vls(X, y, n_subsets=n_subsets, subset_size=size, random_state=seed,
                     n_neighbors=10)
    assert_allclose(got.weights, want.feature_importances_, rtol=0, atol=1e-12)


def test_vls_subsets_cover_every_feature_without_repeats():
    for n, count, size in [(24, 10, 4), (23, 8, 5), (7, 3, 7), (10, 4, 3)]:
        subsets = fastfs.relief_wrappers.vls_subsets(n, count, size, random_state=1)
        assert len(subsets) == max(count, -(-n // size))
        assert all(len(s) == size and len(set(s)) == size for s in subsets)
        assert set().union(*map(set, subsets)) == set(range(n))
    assert (fastfs.relief_wrappers.vls_subsets(24, 10, 4, random_state=5)
            == fastfs.relief_wrappers.vls_subsets(24, 10, 4, random_state=5))


@pytest.mark.parametrize("frac", [0.1, 0.25, 0.9])
def test_relieff_fraction_of_the_samples_equals_skrebate(frac):
    X, y = xor_data(m=100, n=12, seed=2)  # classes of 54 and 46 samples
    want = skrebate.ReliefF(n_neighbors=frac).fit(X, y).feature_importances_
    assert_allclose(fastfs.relieff(X, y, n_neighbors=frac).weights, want, rtol=0, atol=1e-12)
    k = int(frac * 100 * 0.5)
    assert_array_equal(fastfs.relieff(X, y, n_neighbors=frac).weights,
                       fastfs.relieff(X, y, n_neighbors=k).weights)


def test_relieff_fraction_beyond_a_class_keeps_the_documented_difference():
    # k = 50 is more than the 46 members of class 1: skrebate then counts the sample itself as
    # one of its hits; fastfs never does (leave-one-out), so the two differ there, and fastfs
    # equals its own k = 50.
    X, y = xor_data(m=100, n=12, seed=2)
    want = skrebate.ReliefF(n_neighbors=1.0).fit(X, y).feature_importances_
    got = fastfs.relieff(X, y, n_neighbors=1.0).weights
    assert np.abs(got - want).max() > 1e-4
    assert_array_equal(got, fastfs.relieff(X, y, n_neighbors=50).weights)


def test_vls_takes_numpy_generators_as_one_seed_of_its_stream():
    # SPEC 1.5: a Generator or RandomState is asked for one 64-bit seed; VLS seeds Python's
    # random with it (an int seeds it directly, as skrebate does).
    X, y = xor_data(m=40, n=10)
    for make in (np.random.default_rng, np.random.RandomState):
        seed = fastfs._validation.check_random_state(make(5))
        want = fastfs.vls(X, y, n_subsets=6, subset_size=3, random_state=seed).weights
        got = fastfs.vls(X, y, n_subsets=6, subset_size=3, random_state=make(5)).weights
        assert_array_equal(got, want)
    seed = fastfs._validation.check_random_state(np.random.default_rng(5))
    assert fastfs.relief_wrappers.vls_subsets(10, 6, 3, np.random.default_rng(5)) == \
        fastfs.relief_wrappers.vls_subsets(10, 6, 3, seed)


def test_vls_seeds_outside_64_bits_are_refused():
    # Python's random takes abs() of a seed: -7 drew 7's subsets; the package's rule is an
    # int in [0, 2**64)
    X, y = xor_data(m=40, n=10)
    for bad in (-7, -1, 2**64, 2**200):
        with pytest.raises(ValueError, match=r"random_state: must be in \[0, 2\*\*64\)"):
            fastfs.vls(X, y, n_subsets=6, subset_size=3, random_state=bad)
    fastfs.vls(X, y, n_subsets=6, subset_size=3, random_state=2**64 - 1)


def test_bad_arguments_are_clear_errors():
    X, y = xor_data(m=40, n=10)
    with pytest.raises(ValueError, match="pct"):
        fastfs.turf(X, y, pct=1.5)
    with pytest.raises(ValueError, match="pct"):
        fastfs.turf(X, y, pct=0.0)
    with pytest.raises(ValueError, match="pct: 1 drops every feature"):
        fastfs.turf(X, y, pct=1.0, n_features_to_keep=3)
    # also when n_features_to_keep is not below n_features (the default 100 here): the first
    # round runs all the same and would keep no feature (it said "X: has zero features")
    for keep in (X.shape[1], 100):
        with pytest.raises(ValueError, match="pct: 1 drops every feature"):
            fastfs.turf(X, y, pct=1.0, n_features_to_keep=keep)
    with pytest.raises(ValueError, match="method"):
        fastfs.turf(X, y, method="relief-f")
    with pytest.raises(ValueError, match="one weight per feature"):
        fastfs.turf(X, y, method=lambda A, b: np.ones(2))
    with pytest.raises(ValueError, match="n_subsets \\* subset_size"):
        fastfs.vls(X, y, n_subsets=2, subset_size=3)
    with pytest.raises(TypeError, match="random_state: expected None, an int"):
        fastfs.vls(X, y, random_state="0")
    with pytest.raises(TypeError, match="random_state: expected None, an int"):
        fastfs.vls(X, y, random_state=True)
    with pytest.raises(ValueError, match="n_neighbors"):
        fastfs.relieff(X, y, n_neighbors=1.5)
    with pytest.raises(ValueError, match="fewer than one neighbour"):
        fastfs.relieff(X, y, n_neighbors=0.01)


@pytest.mark.parametrize("rule", ["relieff", "surf", "surfstar", "multisurf", "multisurfstar"])
def test_distance_weights_equal_skrebates_weighted_fit(rule):
    X, y = xor_data(m=90, n=12, classes=3, seed=5)
    w = np.random.default_rng(1).uniform(0.0, 1.0, X.shape[1])
    w[3] = 0.0  # a feature left out of the distance still gets its score
    cls = {"relieff": "ReliefF", "surf": "SURF", "surfstar": "SURFstar",
           "multisurf": "MultiSURF", "multisurfstar": "MultiSURFstar"}[rule]
    est = getattr(skrebate, cls)(n_neighbors=10) if rule == "relieff" else getattr(skrebate, cls)()
    want = est.fit(X, y, weights=w).feature_importances_
    got = getattr(fastfs, rule)(X, y, distance_weights=w).weights
    assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[3] != 0.0
    # All-ones weights are the plain distance, bit for bit.
    assert_array_equal(getattr(fastfs, rule)(X, y, distance_weights=np.ones(12)).weights,
                       getattr(fastfs, rule)(X, y).weights)


def test_large_distance_weights_keep_the_true_nearest_neighbours():
    # With distance weights far above 1 the scaled coordinates reach 1e6, where converting them
    # to float32 moves them by up to 0.03: sample 1 is sample 0's true nearest hit (0.04
    # against 0.06 for sample 2), but float32 sees 0.0625 against 0.05. The neighbour screen
    # (64 features and more) must allow for that. 62 constant features change no distance and
    # no score, and without them the distances are computed exhaustively in float64.
    X = np.zeros((6, 2))
    X[:, 0] = [0.5, 0.5 + 2e-8, 0.5 + 5e-9, 0.0, 1.0, 0.0]
    X[:, 1] = [0.0, 0.0, 0.05, 0.0, 1.0, 0.5]
    y = np.array([0, 0, 0, 1, 1, 1])
    w = np.array([2e6, 1.0])
    padded = np.hstack([X, np.ones((6, 62))])
    w_padded = np.concatenate([w, np.ones(62)])
    for rule in ("relieff", "surf"):
        kwargs = {"n_neighbors": 1} if rule == "relieff" else {}
        want = getattr(fastfs, rule)(X, y, distance_weights=w, **kwargs).weights
        got = getattr(fastfs, rule)(padded, y, distance_weights=w_padded, **kwargs).weights
        assert_array_equal(got[:2], want, err_msg=rule)
        assert_array_equal(got[2:], 0.0, err_msg=rule)


@pytest.mark.parametrize("method, max_iter, rate", [("relieff", 3, 0.1), ("relieff", 10, 0.1),
                                                    ("multisurf", 5, 0.3)])
def test_iterative_relief_equals_skrebates_iter(method, max_iter, rate):
    X, y = xor_data(m=90, n=10, seed=6)
    core = skrebate.ReliefF(n_neighbors=10) if method == "relieff" else skrebate.MultiSURF()
    want = skrebate.Iter(core, max_iter=max_iter, beta=rate).fit(X, y).feature_importances_
    params = {"n_neighbors": 10} if method == "relieff" else {}
    got = fastfs.iterative_relief(X, y, method=method, max_iter=max_iter, learning_rate=rate,
                                  **params)
    assert_allclose(got.weights, want, rtol=0, atol=1e-12)


def test_iterative_relief_single_round_is_the_scorer():
    X, y = xor_data(m=60, n=8, seed=2)
    assert_array_equal(fastfs.iterative_relief(X, y, max_iter=1).weights,
                       fastfs.relieff(X, y).weights)


def test_distance_weight_and_iteration_errors():
    X, y = xor_data(m=40, n=6)
    with pytest.raises(ValueError, match="distance_weights"):
        fastfs.relieff(X, y, distance_weights=-np.ones(6))
    with pytest.raises(ValueError, match="distance_weights"):
        fastfs.multisurf(X, y, distance_weights=np.zeros(6))
    with pytest.raises(ValueError, match="distance_weights"):
        fastfs.surf(X, y, distance_weights=np.ones(5))
    with pytest.raises(ValueError, match="learning_rate"):
        fastfs.iterative_relief(X, y, learning_rate=2.0)
    with pytest.raises(ValueError, match="tol"):
        fastfs.iterative_relief(X, y, tol=-1.0)
    with pytest.raises(ValueError, match="method"):
        fastfs.iterative_relief(X, y, method="relief")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("method", ["relieff", "multisurf", "surfstar", "relief"])
def test_wrappers_score_sparse_x_as_its_dense_array(fmt, method):
    """TuRF, VLS and iterative Relief hand column subsets of a sparse X to the scorers, which
    score it without densifying it: the weights of X.toarray() (values without ties, so no
    rounding can reorder equal distances)."""
    import scipy.sparse as sp

    dense = sp.random(80, 30, density=0.3, random_state=1).toarray()
    y = (dense[:, 0] + dense[:, 1] > 0.5).astype(int)
    X = sp.csr_matrix(dense).asformat(fmt)
    runs = [(fastfs.turf, {"n_features_to_keep": 10}),
            (fastfs.vls, {"n_subsets": 5, "subset_size": 8, "random_state": 0})]
    if method != "relief":  # Relief takes no distance weights
        runs.append((fastfs.iterative_relief, {"max_iter": 3}))
    for f, kw in runs:
        np.testing.assert_allclose(f(X, y, method=method, **kw).weights,
                                   f(dense, y, method=method, **kw).weights,
                                   rtol=1e-12, atol=1e-14)
    Xn = sp.csr_matrix(dense)
    Xn.data[0] = np.nan
    with pytest.raises(ValueError, match="sparse X with missing values"):
        fastfs.turf(Xn, y)


@pytest.mark.parametrize("name", ["turf", "vls", "iterative_relief"])
def test_wrappers_refuse_a_callback(name):
    """A callback went through **params to every round's inner pass: True cut each pass
    short and the wrapper returned the partial weights with stopped_early False."""
    X = np.random.default_rng(0).normal(size=(60, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    with pytest.raises(TypeError, match="^callback: the Relief wrappers"):
        getattr(fastfs, name)(X, y, callback=lambda s: True)
