"""fastfs.simba, fastfs.relief and fastfs.relieff (SPEC 2.5-2.7, 1.4, 1.5, 1.8) checked
against the plain-NumPy reference and, for ReliefF, against skrebate."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref

SIMBA_UTILITIES = [("linear", 1.0), ("sigmoid", 1.0), ("sigmoid", 4.0)]


# ------------------------------------------------------------------------------------------
# helpers


def run_simba(X, y, **kwargs):
    """fastfs.simba with a callback that records (restart, step, score, w) after every step."""
    states = []

    def callback(state):
        states.append((state.restart, state.step, state.score,
                       np.array(state.selection, dtype=np.float64, copy=True)))
        return None

    result = fastfs.simba(X, y, callback=callback, **kwargs)
    return result, states


def assert_weight_result(result, n_features):
    """SPEC 1.8 WeightResult: weights of the right shape, ranking = weights descending, ties to
    the lower index first."""
    assert isinstance(result, fastfs.WeightResult)
    weights = np.asarray(result.weights)
    ranking = np.asarray(result.ranking)
    assert weights.shape == (n_features,)
    assert np.all(np.isfinite(weights))
    assert np.issubdtype(ranking.dtype, np.integer)
    assert_array_equal(np.sort(ranking), np.arange(n_features))
    # descending, and among equal weights the lower index comes first
    w_ranked = weights[ranking]
    assert np.all(np.diff(w_ranked) <= 0)
    for a, b in zip(ranking[:-1], ranking[1:]):
        if weights[a] == weights[b]:
            assert a < b
    assert_array_equal(ranking, np.argsort(-weights, kind="stable"))


def assert_simba_weights(result, n_features):
    assert_weight_result(result, n_features)
    weights = np.asarray(result.weights)
    assert np.all(weights >= 0.0) and np.all(weights <= 1.0)
    assert weights.max() == 1.0


def continuous_classes(sizes, n_features, seed, informative=(0, 3)):
    """Float data without ties: standard normal features, class means shifted on the
    informative features, samples shuffled. Every feature has far more than 10 distinct values
    (so skrebate treats it as continuous)."""
    gen = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    gen.shuffle(y)
    X = gen.standard_normal((y.size, n_features))
    for j, f in enumerate(informative):
        X[:, f] += (1.0 + 0.5 * j) * (y == (j % len(sizes)))
    X[:, informative[0]] += 0.8 * y
    for i in range(n_features):
        assert np.unique(X[:, i]).size > 10
    return X, y


def skrebate_relieff(X, y, k):
    from skrebate import ReliefF

    est = ReliefF(n_neighbors=k, n_features_to_select=X.shape[1], n_jobs=1)
    est.fit(np.array(X, dtype=np.float64), np.asarray(y))
    return np.asarray(est.feature_importances_, dtype=np.float64)


@pytest.fixture(scope="module")
def wide_problem():
    """400 x 200, two classes, a few informative features: big enough for the threaded paths."""
    gen = np.random.default_rng(77)
    y = gen.integers(0, 2, size=400)
    X = gen.standard_normal((400, 200))
    X[:, [3, 50, 120]] += 1.2 * y[:, None]
    return X, y


# ------------------------------------------------------------------------------------------
# Simba against the reference, step by step


@pytest.mark.parametrize("utility, beta", SIMBA_UTILITIES)
def test_simba_matches_reference_step_by_step(random_problem, utility, beta):
    X, y = random_problem
    order = np.random.default_rng(5).integers(0, X.shape[0], size=200)  # with repeats
    result, states = run_simba(X, y, n_restarts=1, sample_order=order, utility=utility,
                               beta=beta)
    ws, _ = ref.simba_path(X, y, order, utility, beta)
    assert [s[1] for s in states] == list(range(1, order.size + 1))
    assert all(s[0] == 0 for s in states)
    got = np.array([s[3] for s in states])
    assert got.shape == ws.shape
    assert_allclose(got, ws, rtol=1e-10, atol=0)
    assert_allclose(result.weights, ref.simba_weights(ws[-1]), rtol=1e-10, atol=1e-15)
    assert_simba_weights(result, X.shape[1])


def test_simba_on_wide_few_sample_data_matches_reference():
    # Gene-expression shape (more than 2048 features, few samples): the steps screen the
    # features in two halves; duplicate rows and integer values give exact ties.
    gen = np.random.default_rng(11)
    y = gen.integers(0, 2, size=30)
    X = np.round(gen.standard_normal((30, 2200)) * 2.0)
    X[:, :40] += 2.0 * y[:, None]
    X[7], y[7] = X[3], y[3]
    X[20], y[20] = X[11], 1 - y[11]
    order = np.random.default_rng(3).integers(0, X.shape[0], size=60)
    result, states = run_simba(X, y, n_restarts=1, sample_order=order)
    ws, _ = ref.simba_path(X, y, order)
    assert_allclose(np.array([s[3] for s in states]), ws, rtol=1e-10, atol=0)
    assert_allclose(result.weights, ref.simba_weights(ws[-1]), rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("utility, beta", [("linear", 1.0), ("sigmoid", 2.0)])
def test_simba_matches_reference_on_xor_permutation(xor300, utility, beta):
    X, y = xor300
    order = np.random.default_rng(1).permutation(X.shape[0])
    result, states = run_simba(X, y, n_restarts=1, sample_order=order, utility=utility,
                               beta=beta)
    ws, _ = ref.simba_path(X, y, order, utility, beta)
    assert_allclose(np.array([s[3] for s in states]), ws, rtol=1e-10, atol=0)
    assert_allclose(result.weights, ref.simba_weights(ws[-1]), rtol=1e-10, atol=1e-15)
    # single restart: score = e(w / max|w|) and history holds it
    assert result.restart_scores.shape == (1,)
    assert result.score == result.restart_scores[0]
    want = ref.margin_score(X, y, np.sqrt(ref.simba_weights(ws[-1])), utility, beta)
    assert result.score == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("utility, beta", SIMBA_UTILITIES)
def test_simba_callback_score_is_running_sum_of_utilities(random_problem, utility, beta):
    # docstring of fastfs.simba: state.score = sum of u(theta) over the samples visited so far
    X, y = random_problem
    order = np.random.default_rng(8).permutation(X.shape[0])
    _, states = run_simba(X, y, n_restarts=1, sample_order=order, utility=utility, beta=beta)
    _, thetas = ref.simba_path(X, y, order, utility, beta)
    running = np.cumsum(ref.utility_values(thetas, utility, beta))
    assert_allclose([s[2] for s in states], running, rtol=1e-9, atol=1e-12)


def test_simba_weights_in_unit_interval_with_max_one(random_problem, xor300):
    for X, y in (random_problem, xor300):
        for seed in (0, 1):
            for utility, beta in SIMBA_UTILITIES:
                result = fastfs.simba(X, y, n_restarts=2, utility=utility, beta=beta,
                                      random_state=seed)
                assert_simba_weights(result, X.shape[1])


def test_ranking_ties_go_to_the_lower_index(random_problem):
    # Two identical columns receive identical updates in every method, so their weights tie
    # exactly; the ranking must list the lower index first.
    X, y = random_problem
    X = X.copy()
    X[:, 9] = X[:, 2]
    X[:, 7] = X[:, 2]
    for result in (fastfs.simba(X, y, random_state=0, n_restarts=2),
                   fastfs.relief(X, y),
                   fastfs.relieff(X, y, n_neighbors=5)):
        w = np.asarray(result.weights)
        assert w[2] == w[7] == w[9]
        pos = {int(f): i for i, f in enumerate(result.ranking)}
        assert pos[2] + 1 == pos[7] and pos[7] + 1 == pos[9]
        assert_weight_result(result, X.shape[1])


def test_simba_all_equal_weights_keep_index_order(random_problem):
    # visiting only a singleton-class sample leaves w = 1: all weights tie at 1 and the
    # ranking is 0..n-1
    X, y = random_problem
    y = y.copy()
    y[17] = 7
    with pytest.warns(fastfs.EqualScoresWarning, match="simba: every feature got the same "
                      "weight .1."):
        result = fastfs.simba(X, y, n_restarts=1, sample_order=[17])
    assert_array_equal(result.weights, np.ones(X.shape[1]))
    assert_array_equal(result.ranking, np.arange(X.shape[1]))


# ------------------------------------------------------------------------------------------
# Simba restarts, n_iter, score


@pytest.mark.parametrize("utility, beta", [("linear", 1.0), ("sigmoid", 3.0)])
def test_simba_restarts_return_the_best_e(random_problem, utility, beta):
    X, y = random_problem
    n_restarts = 4
    result, states = run_simba(X, y, n_restarts=n_restarts, utility=utility, beta=beta,
                               random_state=3)
    history = np.asarray(result.restart_scores, dtype=np.float64)
    assert history.shape == (n_restarts,)
    assert result.score == history.max()

    # the final w of every restart, recorded by the callback, gives that restart's e
    finals = {}
    for restart, step, _, w in states:
        finals[restart] = (step, w)
    assert sorted(finals) == list(range(n_restarts))
    for r in range(n_restarts):
        step, w = finals[r]
        assert step == X.shape[0]  # default n_iter: one pass over the samples
        e_r = ref.margin_score(X, y, w / np.max(np.abs(w)), utility, beta)
        assert history[r] == pytest.approx(e_r, rel=1e-9)

    best = int(np.argmax(history))  # first on ties
    assert result.best_restart == best and result.history.size == 0
    assert_allclose(result.weights, ref.simba_weights(finals[best][1]), rtol=1e-10,
                    atol=1e-15)
    root = np.sqrt(result.weights)
    assert result.score == pytest.approx(
        fastfs.margin_score(X, y, root, utility=utility, beta=beta), rel=1e-9)
    assert result.score == pytest.approx(ref.margin_score(X, y, root, utility, beta), rel=1e-9)
    assert_simba_weights(result, X.shape[1])


def test_simba_restarts_use_different_orders(xor300):
    X, y = xor300
    multi = fastfs.simba(X, y, n_restarts=5, random_state=11)
    assert len(set(np.round(multi.restart_scores, 9).tolist())) > 1
    assert multi.score == max(multi.restart_scores)


def test_simba_n_iter_sets_the_steps_per_restart(random_problem):
    X, y = random_problem
    result, states = run_simba(X, y, n_restarts=2, n_iter=7, random_state=0)
    assert [(s[0], s[1]) for s in states] == [(r, t) for r in range(2) for t in range(1, 8)]
    assert result.restart_scores.shape == (2,)
    assert_simba_weights(result, X.shape[1])
    # longer runs continue with further permutations
    _, states = run_simba(X, y, n_restarts=1, n_iter=2 * X.shape[0] + 3, random_state=0)
    assert [s[1] for s in states] == list(range(1, 2 * X.shape[0] + 4))


def test_simba_default_is_five_restarts_of_one_pass(random_problem):
    X, y = random_problem
    result, states = run_simba(X, y, random_state=2)
    assert result.restart_scores.shape == (5,)
    assert len(states) == 5 * X.shape[0]


def test_simba_sigmoid_running_score_is_bounded(random_problem):
    # one pass (n_iter=None) has n_samples steps; with the sigmoid every u is in (0, 1)
    X, y = random_problem
    _, states = run_simba(X, y, n_restarts=1, utility="sigmoid", random_state=4)
    assert [s[1] for s in states] == list(range(1, X.shape[0] + 1))
    assert 0.0 < states[-1][2] < X.shape[0]


def test_simba_same_seed_same_result(random_problem):
    X, y = random_problem
    a = fastfs.simba(X, y, random_state=42)
    b = fastfs.simba(X, y, random_state=42)
    assert_array_equal(a.weights, b.weights)
    assert_array_equal(a.restart_scores, b.restart_scores)
    assert a.score == b.score
    c = fastfs.simba(X, y, random_state=np.random.default_rng(5))
    d = fastfs.simba(X, y, random_state=np.random.default_rng(5))
    assert_array_equal(c.weights, d.weights)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_simba_xor_ranks_the_relevant_features_first(seed):
    X, y = fastfs.datasets.make_xor(1000, random_state=seed)
    result = fastfs.simba(X, y, random_state=seed)
    assert set(result.ranking[:3].tolist()) == {0, 1, 2}, result
    assert_simba_weights(result, X.shape[1])


# ------------------------------------------------------------------------------------------
# Relief


def test_relief_matches_reference(random_problem, xor300):
    for X, y in (random_problem, xor300):
        result = fastfs.relief(X, y)
        assert_allclose(result.weights, ref.relief(X, y), rtol=1e-12, atol=1e-12)
        assert_weight_result(result, X.shape[1])
        assert np.isnan(result.score)


@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
def test_relief_gram_screen_equals_the_reference(scale):
    # Every sample visited: neighbours of all samples from float32 Gram products with rigorous
    # bounds, then exact distances; copies (ties at distance 0) and extreme scales included.
    gen = np.random.default_rng(14)
    X = gen.standard_normal((140, 30))
    X[100:] = X[gen.integers(0, 100, 40)]
    X = X * scale + 3.0 * scale
    y = gen.integers(0, 2, 140)
    want = ref.relief(X, y)
    for n_jobs in (1, 2):
        assert_allclose(fastfs.relief(X, y, n_jobs=n_jobs).weights, want,
                        rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_relief_ties_go_to_the_lower_sample_index(rng):
    # integer data: many exactly equal distances; the reference picks the lowest index
    X = rng.integers(0, 3, size=(80, 5)).astype(np.float64)
    y = rng.integers(0, 3, size=80)
    X[:, 0] += y
    result = fastfs.relief(X, y)
    assert_allclose(result.weights, ref.relief(X, y), rtol=1e-12, atol=1e-12)


def test_relief_n_iter_is_deterministic_for_a_seed(random_problem):
    X, y = random_problem
    a = fastfs.relief(X, y, n_iter=60, random_state=9)
    b = fastfs.relief(X, y, n_iter=60, random_state=9)
    assert_array_equal(a.weights, b.weights)
    assert_array_equal(a.ranking, b.ranking)
    others = [fastfs.relief(X, y, n_iter=60, random_state=s).weights for s in range(10, 14)]
    assert any(not np.array_equal(a.weights, o) for o in others)


def test_relief_n_iter_runs_whole_permutations(random_problem):
    # n_iter samples are drawn as consecutive random permutations: n_iter = m visits every
    # sample once (= the deterministic pass), n_iter = 2m twice.
    X, y = random_problem
    m = X.shape[0]
    full = ref.relief(X, y)
    assert_allclose(fastfs.relief(X, y, n_iter=m, random_state=1).weights, full,
                    rtol=1e-12, atol=1e-12)
    assert_allclose(fastfs.relief(X, y, n_iter=2 * m, random_state=1).weights, 2 * full,
                    rtol=1e-12, atol=1e-12)


def test_relief_long_runs_keep_records_per_chunk_only(restore_max_memory):
    # 140000 visits (whole permutations of 20 samples) cross the core's chunks of 65536 hit /
    # miss records; the weights are 7000 passes' worth, and the memory needed is the 8-byte
    # visiting order alone (1.1 MB), not a record per visit as well.
    gen = np.random.default_rng(5)
    X = gen.standard_normal((20, 3))
    y = np.repeat([0, 1], 10)
    X[:, 1] += y
    restore_max_memory.max_memory = 1_500_000
    result = fastfs.relief(X, y, n_iter=140_000, random_state=3)
    assert_allclose(result.weights, 7000 * ref.relief(X, y), rtol=1e-9)


# ------------------------------------------------------------------------------------------
# ReliefF against skrebate and the reference

# (class sizes, n_features, k, seed)
RELIEFF_AGREE = [  # k below every class size: fastfs and skrebate compute the same thing
    ((60, 60), 8, 5, 0),
    ((50, 40, 30), 12, 7, 2),
    ((40, 35, 30, 5), 15, 4, 4),
]
RELIEFF_SHORT_CLASS = [  # a class with at most k samples
    ((110, 8), 10, 12, 1),       # binary
    ((70, 50, 6), 9, 10, 3),     # 3 classes
    ((45, 40, 35, 5), 8, 9, 5),  # 4 classes
]
RELIEFF_CASES = RELIEFF_AGREE + RELIEFF_SHORT_CLASS


@pytest.mark.parametrize("sizes, n_features, k, seed", RELIEFF_CASES)
def test_reference_relieff_matches_skrebate(sizes, n_features, k, seed):
    # validates the reference itself (so that fastfs vs reference is meaningful): in skrebate
    # mode it reproduces skrebate everywhere, short classes included
    X, y = continuous_classes(sizes, n_features, seed)
    assert_allclose(ref.relieff(X, y, k, skrebate_hit_count=True), skrebate_relieff(X, y, k),
                    rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("sizes, n_features, k, seed", RELIEFF_SHORT_CLASS)
def test_relieff_short_class_differs_from_skrebate_only_by_the_self_hit(sizes, n_features, k,
                                                                         seed):
    # Documented difference: skrebate counts x as its own hit when x's class has at most k
    # samples; fastfs never takes a sample as its own neighbour (SPEC 1.4).
    X, y = continuous_classes(sizes, n_features, seed)
    weights = fastfs.relieff(X, y, n_neighbors=k).weights
    assert not np.allclose(weights, skrebate_relieff(X, y, k), rtol=1e-6, atol=1e-9)
    assert_allclose(weights, ref.relieff(X, y, k, skrebate_hit_count=False), rtol=1e-10,
                    atol=1e-13)


@pytest.mark.parametrize("sizes, n_features, k, seed", RELIEFF_AGREE)
def test_relieff_matches_skrebate(sizes, n_features, k, seed):
    X, y = continuous_classes(sizes, n_features, seed)
    result = fastfs.relieff(X, y, n_neighbors=k)
    assert_weight_result(result, n_features)
    assert np.isnan(result.score)
    assert np.all(np.abs(result.weights) <= 1.0)
    assert_allclose(result.weights, skrebate_relieff(X, y, k), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("sizes, n_features, k, seed", RELIEFF_CASES)
def test_relieff_matches_reference(sizes, n_features, k, seed):
    X, y = continuous_classes(sizes, n_features, seed)
    result = fastfs.relieff(X, y, n_neighbors=k)
    assert_allclose(result.weights, ref.relieff(X, y, k), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_relieff_matches_reference_on_larger_data(k):
    X, y = continuous_classes((150, 120, 90), 20, 11)
    result = fastfs.relieff(X, y, n_neighbors=k)
    assert_allclose(result.weights, ref.relieff(X, y, k), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("k", [1, 10, 16, 17])
@pytest.mark.parametrize("rounded", [False, True])
def test_relieff_few_features_large_classes_match_reference(k, rounded):
    # Few features and classes of 128 or more: each class's k nearest are picked in class order
    # after a bound from the minima of 16 groups of its members (k <= 16). With integers 0..8
    # in every column (a range of 8), the scaled values and their sums are exact in any order,
    # so the many distances that tie (with that bound, with the k-th nearest, and the repeated
    # rows at 0) tie in the reference too.
    rng = np.random.default_rng(21)
    if rounded:
        X = rng.integers(0, 9, (730, 5)).astype(float)
        X[0], X[1] = 0.0, 8.0
        X[100:160] = X[0:60]
    else:
        X = rng.standard_normal((730, 5)) * [1.0, 3.0, 0.5, 2.0, 1.0]
    y = np.repeat([2, 0, 1], [400, 200, 130])
    rng.shuffle(y)
    for n_jobs in (1, 2):
        # every feature continuous, as the reference scores them
        result = fastfs.relieff(X, y, n_neighbors=k, n_jobs=n_jobs, discrete_threshold=None)
        assert_allclose(result.weights, ref.relieff(X, y, k), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("k", [1, 7])
def test_relieff_shortlist_path_matches_reference(k):
    # 64 or more features take the float32 shortlist of the neighbours. Its buffer was once the
    # class-candidate buffer too, indexed past its size (only a libstdc++-assertions or
    # sanitizer build, as in CI, aborted on that; a release build happened to be right).
    X, y = continuous_classes((40, 30, 12), 64, 5)
    result = fastfs.relieff(X, y, n_neighbors=k, n_jobs=2)
    assert_allclose(result.weights, ref.relieff(X, y, k), rtol=1e-10, atol=1e-13)


def test_relieff_constant_feature_scores_zero(random_problem):
    X, y = random_problem
    X = X.copy()
    X[:, 4] = 2.5
    # a constant column would be discrete by skrebate's rule (one distinct value), making the
    # data mixed: the continuous formula is asked for explicitly
    result = fastfs.relieff(X, y, n_neighbors=5, discrete_features=[])
    assert result.weights[4] == 0.0
    assert_allclose(result.weights, ref.relieff(X, y, 5), rtol=1e-10, atol=1e-13)


def test_relieff_singleton_class():
    X, y = continuous_classes((60, 50), 8, 21)
    X = np.vstack([X, np.random.default_rng(0).standard_normal((1, 8))])
    y = np.append(y, 2)
    for k in (1, 4):
        result = fastfs.relieff(X, y, n_neighbors=k)
        assert np.all(np.isfinite(result.weights))
        assert_allclose(result.weights, ref.relieff(X, y, k), rtol=1e-10, atol=1e-13)
        assert_allclose(result.weights, skrebate_relieff(X, y, k), rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------------------------------
# threads (SPEC 1.5: same seed, same result, whatever n_jobs is)


def test_simba_n_jobs_do_not_change_the_result(wide_problem):
    X, y = wide_problem
    # with n_jobs=2 and several restarts, the restarts run side by side, one per thread
    for utility in ("linear", "sigmoid"):
        kw = dict(n_restarts=2, n_iter=50, utility=utility, random_state=7)
        one = fastfs.simba(X, y, n_jobs=1, **kw)
        two = fastfs.simba(X, y, n_jobs=2, **kw)
        assert_array_equal(one.weights, two.weights)
        assert_array_equal(one.ranking, two.ranking)
        assert_array_equal(one.restart_scores, two.restart_scores)
        assert one.score == two.score


def test_relief_n_jobs_do_not_change_the_result(wide_problem):
    X, y = wide_problem
    for n_iter in (None, 250, 1000):
        one = fastfs.relief(X, y, n_iter=n_iter, random_state=7, n_jobs=1)
        two = fastfs.relief(X, y, n_iter=n_iter, random_state=7, n_jobs=2)
        assert_array_equal(one.weights, two.weights)
        assert_array_equal(one.ranking, two.ranking)


def test_relieff_n_jobs_do_not_change_the_result(wide_problem):
    X, y = wide_problem
    for k in (1, 10):
        one = fastfs.relieff(X, y, n_neighbors=k, n_jobs=1)
        two = fastfs.relieff(X, y, n_neighbors=k, n_jobs=2)
        assert_array_equal(one.weights, two.weights)
        assert_array_equal(one.ranking, two.ranking)


@pytest.mark.parametrize("scale", [1e-30, 2.0**-56, 1.0])
def test_simba_with_still_weights_matches_reference(scale):
    """Steps that leave w unchanged (a linear step below the rounding of w on data of tiny
    magnitude, or a sample without a hit) let the next steps share a pass over X (four queries,
    then a blocked Gram pass over every sample); the weights stay the reference's, also when
    they move again after a shared pass."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((160, 70))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y[11] = 2  # a class of one sample: its steps change nothing
    X = X * scale
    order = rng.integers(0, X.shape[0], size=400)
    order[::7] = 11
    ws, _ = ref.simba_path(X, y, order)
    # on the tiniest data no step moves w = 1 at all: the warning must say so (and only then)
    still = bool(np.all(ref.simba_weights(ws[-1]) == 1.0))
    assert still == (scale < 1e-10)
    with pytest.warns(fastfs.EqualScoresWarning) if still else warnings.catch_warnings():
        result = fastfs.simba(X, y, n_restarts=1, sample_order=order, n_jobs=1)
    assert_allclose(result.weights, ref.simba_weights(ws[-1]), rtol=1e-10, atol=1e-15)
    want = ref.margin_score(X, y, np.sqrt(ref.simba_weights(ws[-1])))
    assert result.score == pytest.approx(want, rel=1e-9)


def test_wide_problem_matches_reference(wide_problem):
    X, y = wide_problem
    assert_allclose(fastfs.relief(X, y, n_jobs=2).weights, ref.relief(X, y),
                    rtol=1e-12, atol=1e-12)
    assert_allclose(fastfs.relieff(X, y, n_neighbors=10, n_jobs=2).weights,
                    ref.relieff(X, y, 10), rtol=1e-10, atol=1e-13)
    order = np.random.default_rng(0).integers(0, X.shape[0], size=60)
    result, states = run_simba(X, y, n_restarts=1, sample_order=order, n_jobs=2)
    ws, _ = ref.simba_path(X, y, order)
    assert_allclose(np.array([s[3] for s in states]), ws, rtol=1e-10, atol=0)


# ------------------------------------------------------------------------------------------
# errors


def test_simba_rejects_zero_one_utility(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"utility: 'zero_one' has no gradient"):
        fastfs.simba(X, y, utility="zero_one")


def test_simba_unknown_utility_lists_the_valid_ones(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match="utility") as info:
        fastfs.simba(X, y, utility="hinge")
    message = str(info.value)
    assert "'hinge'" in message
    assert "'linear'" in message and "'sigmoid'" in message


@pytest.mark.parametrize("beta", [0.0, -1.0, float("inf"), float("nan")])
def test_simba_bad_beta(small_problem, beta):
    X, y = small_problem
    with pytest.raises(ValueError, match="beta"):
        fastfs.simba(X, y, utility="sigmoid", beta=beta)


def test_simba_sample_order_needs_a_single_run(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match="n_restarts"):
        fastfs.simba(X, y, sample_order=[0, 1, 2])  # default n_restarts=5
    with pytest.raises(ValueError, match="n_restarts"):
        fastfs.simba(X, y, n_restarts=2, sample_order=[0, 1, 2])
    with pytest.raises(ValueError, match="n_iter"):
        fastfs.simba(X, y, n_restarts=1, n_iter=3, sample_order=[0, 1, 2])


@pytest.mark.parametrize("order", [[0, 20], [-1], [3, 100, 4]])
def test_simba_sample_order_out_of_range(small_problem, order):
    X, y = small_problem  # 20 samples
    with pytest.raises(IndexError, match="sample_order"):
        fastfs.simba(X, y, n_restarts=1, sample_order=order)


def test_simba_sample_order_bad_shape_or_type(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match="sample_order"):
        fastfs.simba(X, y, n_restarts=1, sample_order=[])
    with pytest.raises(ValueError, match="sample_order"):
        fastfs.simba(X, y, n_restarts=1, sample_order=[[0, 1]])
    with pytest.raises(TypeError, match="sample_order"):
        fastfs.simba(X, y, n_restarts=1, sample_order=[0.5, 1.0])


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                        (4.0, TypeError), (True, TypeError)])
def test_bad_n_iter(small_problem, bad, error):
    X, y = small_problem
    with pytest.raises(error, match="n_iter"):
        fastfs.simba(X, y, n_iter=bad)
    with pytest.raises(error, match="n_iter"):
        fastfs.relief(X, y, n_iter=bad)


# A float is a fraction of the samples (skrebate's rule): above 1 it is an error, not a count.
@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (2.5, ValueError),
                                        (3.0, ValueError), (-0.5, ValueError), ("3", TypeError),
                                        (True, TypeError)])
def test_bad_n_neighbors(small_problem, bad, error):
    X, y = small_problem
    with pytest.raises(error, match="n_neighbors"):
        fastfs.relieff(X, y, n_neighbors=bad)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-2, ValueError), (1.5, TypeError)])
def test_bad_n_restarts(small_problem, bad, error):
    X, y = small_problem
    with pytest.raises(error, match="n_restarts"):
        fastfs.simba(X, y, n_restarts=bad)


def test_bad_n_jobs(small_problem):
    X, y = small_problem
    for call in (lambda: fastfs.simba(X, y, n_jobs=0),
                 lambda: fastfs.relief(X, y, n_jobs=0),
                 lambda: fastfs.relieff(X, y, n_jobs=0)):
        with pytest.raises(ValueError, match="n_jobs"):
            call()


def test_bad_inputs_are_rejected(small_problem):
    X, y = small_problem
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    for fn in (fastfs.simba, fastfs.relief, fastfs.relieff):
        if fn is not fastfs.relieff:  # ReliefF reads NaN as a missing value (skrebate's rule)
            with pytest.raises(ValueError):
                fn(Xnan, y)
        with pytest.raises(ValueError):
            fn(X, y[:-1])
        with pytest.raises(ValueError):
            fn(X, np.zeros(X.shape[0]))  # a single class
    with pytest.raises(TypeError, match="callback"):
        fastfs.simba(X, y, callback=3)


# ------------------------------------------------------------------------------------------
# duplicates and singleton classes (SPEC 1.4)


def _with_duplicates(seed):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((60, 6))
    y = gen.integers(0, 2, size=60)
    X[:, 1] += y
    # rows 60..67 duplicate rows 0..7 with the same label (nearest hit at distance 0),
    # rows 68..71 duplicate rows 8..11 with the other label (nearest miss at distance 0)
    X = np.vstack([X, X[:8], X[8:12]])
    y = np.concatenate([y, y[:8], 1 - y[8:12]])
    return X, y


@pytest.mark.parametrize("utility, beta", SIMBA_UTILITIES)
def test_simba_duplicates_skip_zero_distance_terms(utility, beta):
    X, y = _with_duplicates(3)
    gen = np.random.default_rng(4)
    order = np.concatenate([[0, 60, 8, 68, 1, 61], gen.permutation(X.shape[0]),
                            [9, 69, 2, 62]])
    result, states = run_simba(X, y, n_restarts=1, sample_order=order, utility=utility,
                               beta=beta)
    got = np.array([s[3] for s in states])
    assert np.all(np.isfinite(got))
    assert np.all(np.isfinite(result.weights))
    assert np.isfinite(result.score)
    ws, thetas = ref.simba_path(X, y, order, utility, beta)
    assert_allclose(got, ws, rtol=1e-10, atol=0)
    assert_simba_weights(result, X.shape[1])


def test_simba_duplicate_hit_step_is_the_miss_term_only():
    # first step on a sample whose nearest hit is a duplicate: only the miss term moves w
    X, y = _with_duplicates(3)
    result, states = run_simba(X, y, n_restarts=1, sample_order=[0])
    w = states[0][3]
    dist = np.sum((X - X[0]) ** 2, axis=1)
    dist[y == y[0]] = np.inf
    nm = int(np.argmin(dist))
    d = np.sqrt(dist[nm])
    assert_allclose(w, 1.0 + 0.5 * (X[0] - X[nm]) ** 2 / d, rtol=1e-12)


def test_relief_and_relieff_with_duplicates():
    X, y = _with_duplicates(5)
    assert_allclose(fastfs.relief(X, y).weights, ref.relief(X, y), rtol=1e-12, atol=1e-12)
    result = fastfs.relieff(X, y, n_neighbors=3)
    assert np.all(np.isfinite(result.weights))


def _with_singleton(seed):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((81, 7))
    y = np.array([0] * 40 + [1] * 40 + [2])
    X[:80, 2] += 1.5 * y[:80]
    return X, y


def test_relief_singleton_class_contributes_nothing():
    X, y = _with_singleton(0)
    result = fastfs.relief(X, y)
    assert np.all(np.isfinite(result.weights))
    assert_allclose(result.weights, ref.relief(X, y), rtol=1e-12, atol=1e-12)
    # the reference skips the singleton: the same as summing over the other samples only
    assert_allclose(ref.relief(X, y), ref.relief(X, y, order=range(80)), rtol=0, atol=0)


def test_simba_singleton_step_leaves_w_unchanged():
    X, y = _with_singleton(1)
    order = [3, 80, 50, 80, 80, 7]
    result, states = run_simba(X, y, n_restarts=1, sample_order=order)
    got = np.array([s[3] for s in states])
    assert_array_equal(got[1], got[0])
    assert_array_equal(got[3], got[2])
    assert_array_equal(got[4], got[2])
    ws, thetas = ref.simba_path(X, y, order)
    assert np.isnan(thetas[1]) and np.isnan(thetas[3])
    assert_allclose(got, ws, rtol=1e-10, atol=0)
    # the singleton adds nothing to the running score either
    assert states[1][2] == states[0][2]
    with pytest.warns(fastfs.EqualScoresWarning, match="simba: every feature"):
        only, only_states = run_simba(X, y, n_restarts=1, sample_order=[80])
    assert_array_equal(only_states[0][3], np.ones(X.shape[1]))
    assert_array_equal(only.weights, np.ones(X.shape[1]))


def test_simba_with_singleton_restarts():
    X, y = _with_singleton(2)
    result = fastfs.simba(X, y, n_restarts=2, random_state=0)
    assert_simba_weights(result, X.shape[1])
    assert result.score == pytest.approx(
        ref.margin_score(X, y, np.sqrt(result.weights)), rel=1e-9)


# ------------------------------------------------------------------------------------------
# labels, pandas, dtypes


def test_string_labels(random_problem):
    X, y = random_problem
    names = np.array(["cat", "dog", "emu"])[y]
    a = fastfs.simba(X, names, random_state=1, n_restarts=2)
    b = fastfs.simba(X, y, random_state=1, n_restarts=2)
    assert_array_equal(a.weights, b.weights)
    assert a.score == b.score
    assert_array_equal(fastfs.relief(X, names).weights, fastfs.relief(X, y).weights)
    assert_array_equal(fastfs.relief(X, names, n_iter=30, random_state=2).weights,
                       fastfs.relief(X, y, n_iter=30, random_state=2).weights)
    assert_array_equal(fastfs.relieff(X, names, n_neighbors=4).weights,
                       fastfs.relieff(X, y, n_neighbors=4).weights)
    assert_allclose(fastfs.relieff(X, names, n_neighbors=4).weights,
                    ref.relieff(X, names, 4), rtol=1e-10, atol=1e-13)


def test_pandas_dataframe_carries_feature_names(random_problem):
    pd = pytest.importorskip("pandas")
    X, y = random_problem
    cols = [f"g{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    ys = pd.Series(np.array(["a", "b", "c"])[y])
    results = [
        (fastfs.simba(df, ys, random_state=0, n_restarts=2),
         fastfs.simba(X, y, random_state=0, n_restarts=2)),
        (fastfs.relief(df, ys), fastfs.relief(X, y)),
        (fastfs.relieff(df, ys, n_neighbors=5), fastfs.relieff(X, y, n_neighbors=5)),
    ]
    for from_df, from_array in results:
        assert from_df.feature_names is not None
        assert list(from_df.feature_names) == cols
        assert from_array.feature_names is None
        assert_array_equal(from_df.weights, from_array.weights)
        assert_array_equal(from_df.ranking, from_array.ranking)


def test_float32_close_to_float64(random_problem):
    X, y = random_problem
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)  # the same values, so only rounding differs
    for utility in ("linear", "sigmoid"):
        r32 = fastfs.simba(X32, y, n_restarts=2, utility=utility, random_state=3)
        r64 = fastfs.simba(X64, y, n_restarts=2, utility=utility, random_state=3)
        assert_allclose(r32.weights, r64.weights, rtol=1e-3, atol=1e-4)
        assert r32.score == pytest.approx(r64.score, rel=1e-4)
        assert_simba_weights(r32, X.shape[1])
    assert_allclose(fastfs.relief(X32, y).weights, fastfs.relief(X64, y).weights,
                    rtol=1e-4, atol=1e-4)
    assert_allclose(fastfs.relieff(X32, y, n_neighbors=5).weights,
                    fastfs.relieff(X64, y, n_neighbors=5).weights, rtol=1e-4, atol=1e-6)


def test_non_contiguous_and_fortran_input(random_problem):
    X, y = random_problem
    F = np.asfortranarray(X)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    strided = wide[:, ::2]
    for Z in (F, strided):
        assert_array_equal(fastfs.relief(Z, y).weights, fastfs.relief(X, y).weights)
        assert_array_equal(fastfs.relieff(Z, y, n_neighbors=3).weights,
                           fastfs.relieff(X, y, n_neighbors=3).weights)
        assert_array_equal(fastfs.simba(Z, y, random_state=0, n_restarts=1).weights,
                           fastfs.simba(X, y, random_state=0, n_restarts=1).weights)


def test_result_repr_and_frozen(random_problem):
    import dataclasses

    X, y = random_problem
    result = fastfs.simba(X, y, random_state=0, n_restarts=2)
    assert repr(result).startswith("WeightResult(")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.score = 0.0  # type: ignore[misc]


def test_callback_true_stops_simba(random_problem):
    X, y = random_problem
    calls = []
    result = fastfs.simba(X, y, random_state=0, n_restarts=3,
                          callback=lambda s: calls.append(s.selection.copy()) or True)
    assert len(calls) == 1
    assert_allclose(result.weights, ref.simba_weights(calls[0]), rtol=1e-12)
    assert_simba_weights(result, X.shape[1])


def test_simba_split_row_path_is_thread_count_free():
    # 1100 x 500 is above the size at which one Simba step splits its distance row across
    # threads; a few steps suffice to compare the paths exactly.
    gen = np.random.default_rng(5)
    X = gen.standard_normal((1100, 500))
    y = gen.integers(0, 2, 1100)
    X[:, 7] += y
    one, two = (fastfs.simba(X, y, n_iter=12, n_restarts=1, random_state=3, n_jobs=j)
                for j in (1, 2))
    assert_array_equal(one.weights, two.weights)
    assert one.score == two.score
    order = np.random.default_rng(0).permutation(1100)[:6]
    got = fastfs.simba(X, y, sample_order=order, n_restarts=1).weights
    w = np.ones(500)
    for s in order:
        w, _ = ref.simba_step(X, y, w, s)
    assert_allclose(got, w**2 / np.max(w**2), rtol=1e-10)


# ReliefF with >= 64 features takes the float32-shortlist path: the neighbours, and so the
# weights, must be those of an exhaustive float64 scan, ties included.


@pytest.mark.parametrize("k", [1, 5, 12])
def test_relieff_wide_data_matches_reference(k):
    X, y = continuous_classes((90, 70, 40), 80, 21)
    assert_allclose(fastfs.relieff(X, y, n_neighbors=k).weights, ref.relieff(X, y, k),
                    rtol=1e-10, atol=1e-13)


def test_relieff_wide_data_with_exact_ties_matches_reference():
    # Small integers: many exactly equal distances, resolved toward the lower index.
    gen = np.random.default_rng(22)
    X = gen.integers(0, 3, size=(160, 72)).astype(float)
    y = gen.integers(0, 2, 160)
    X[:, 5] += y
    for k in (1, 4, 10):
        assert_allclose(fastfs.relieff(X, y, n_neighbors=k, discrete_features=[]).weights,
                        ref.relieff(X, y, k),
                        rtol=1e-10, atol=1e-13)


def test_relieff_wide_data_mixed_scales_matches_reference():
    gen = np.random.default_rng(23)
    X = gen.standard_normal((140, 96)) * np.logspace(-4, 5, 96) + 1e3
    y = gen.integers(0, 3, 140)
    X[:, 50] += 1e4 * y
    assert_allclose(fastfs.relieff(X, y, n_neighbors=6).weights, ref.relieff(X, y, 6),
                    rtol=1e-10, atol=1e-13)


def test_relieff_wide_data_matches_skrebate():
    X, y = continuous_classes((70, 60), 66, 24)
    assert_allclose(fastfs.relieff(X, y, n_neighbors=8).weights, skrebate_relieff(X, y, 8),
                    rtol=1e-6, atol=1e-9)


def test_simba_restarts_side_by_side_equal_the_sequential_run(wide_problem):
    # Without a callback, restarts run side by side (3 restarts on 2 threads); with a callback
    # they run one after another. Both must give the same answer, restart by restart.
    X, y = wide_problem
    kw = dict(n_restarts=3, n_iter=40, random_state=11, n_jobs=2)
    side = fastfs.simba(X, y, **kw)
    seen = []
    seq = fastfs.simba(X, y, callback=lambda s: seen.append(s.restart) and False, **kw)
    assert sorted(set(seen)) == [0, 1, 2]
    assert_array_equal(side.restart_scores, seq.restart_scores)
    assert_array_equal(side.weights, seq.weights)
    assert side.score == seq.score == max(side.restart_scores)


# ------------------------------------------------------------------------------------------
# WeightResult as a score function of scikit-learn's univariate selectors


def _top(scores, k):
    """The k largest scores' indices, ascending (they are distinct in these tests)."""
    return np.sort(np.argsort(-np.asarray(scores))[:k])


@pytest.mark.parametrize("name", ["relief", "relieff", "simba"])
def test_weightings_serve_selectkbest_and_selectpercentile(random_problem, name):
    from functools import partial

    from sklearn.feature_selection import SelectKBest, SelectPercentile

    X, y = random_problem
    order = np.random.default_rng(3).permutation(X.shape[0])
    func, want = {
        "relief": (fastfs.relief, ref.relief(X, y)),
        "relieff": (fastfs.relieff, ref.relieff(X, y)),
        "simba": (partial(fastfs.simba, sample_order=order, n_restarts=1),
                  ref.simba_weights(ref.simba_path(X, y, order)[0][-1])),
    }[name]
    assert np.unique(want).size == want.size
    assert_allclose(np.asarray(func(X, y)), want, rtol=1e-9, atol=1e-12)
    best = SelectKBest(func, k=3).fit(X, y)
    assert_allclose(best.scores_, want, rtol=1e-9, atol=1e-12)
    assert best.pvalues_ is None
    assert_array_equal(np.flatnonzero(best.get_support()), _top(want, 3))
    assert_array_equal(best.transform(X), X[:, _top(want, 3)])
    pct = SelectPercentile(func, percentile=25).fit(X, y)  # 3 of 12 features
    assert_array_equal(np.flatnonzero(pct.get_support()), _top(want, 3))


def test_weight_result_as_an_array(random_problem):
    X, y = random_problem
    res = fastfs.relief(X, y)
    assert np.asarray(res) is res.weights
    copied = np.array(res)
    assert copied is not res.weights
    assert_array_equal(copied, res.weights)
    assert np.asarray(res, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(res, dtype=np.float32, copy=False)


# ------------------------------------------------------------------------------------------
# callback / verbose of the one-pass methods (SPEC 1.7): a step is a block of query samples


def run_recording(fn, stop_at=None):
    """fn(callback=...) with a callback recording (step, score, selection); returns True from
    step stop_at on."""
    states = []

    def callback(state):
        assert not state.selection.flags.writeable
        states.append((state.step, state.score, np.array(state.selection, copy=True)))
        return stop_at is not None and state.step >= stop_at

    return fn(callback=callback), states


def test_relief_callback_sees_the_running_weights_and_can_stop(rng):
    X = rng.standard_normal((300, 5))
    y = rng.integers(0, 2, 300)
    X[:, 1] += y
    plain = fastfs.relief(X, y)
    result, states = run_recording(lambda **kw: fastfs.relief(X, y, **kw))
    # 300 samples in steps of 64 (the documented minimum): 64, 128, 192, 256, 300
    assert [s[0] for s in states] == [1, 2, 3, 4, 5]
    assert all(np.isnan(s[1]) for s in states)
    for step, _, weights in states:
        assert_allclose(weights, ref.relief(X, y, order=range(min(64 * step, 300))),
                        rtol=1e-12, atol=1e-12)
    assert_array_equal(result.weights, plain.weights)  # a callback changes nothing
    assert not result.stopped_early and not plain.stopped_early

    stopped, seen = run_recording(lambda **kw: fastfs.relief(X, y, **kw), stop_at=2)
    assert len(seen) == 2 and stopped.stopped_early
    # the weights of the samples visited so far: Relief over those samples alone
    assert_allclose(stopped.weights, ref.relief(X, y, order=range(128)), rtol=1e-12, atol=1e-12)
    assert_weight_result(stopped, 5)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_relieff_callback_reports_averages_over_the_samples_done(n_jobs):
    X, y = continuous_classes((20, 25, 25), 6, 31)
    plain = fastfs.relieff(X, y, n_neighbors=5, n_jobs=n_jobs)
    result, states = run_recording(
        lambda **kw: fastfs.relieff(X, y, n_neighbors=5, n_jobs=n_jobs, **kw))
    assert len(states) >= 2 and [s[0] for s in states] == list(range(1, len(states) + 1))
    assert_array_equal(states[-1][2], plain.weights)
    assert_array_equal(result.weights, plain.weights)
    assert not result.stopped_early

    stopped, seen = run_recording(
        lambda **kw: fastfs.relieff(X, y, n_neighbors=5, n_jobs=n_jobs, **kw), stop_at=1)
    assert len(seen) == 1 and stopped.stopped_early
    assert_array_equal(stopped.weights, seen[0][2])
    # ReliefF with only the first q samples as queries, for the q that was done (a whole
    # number of blocks of query samples, fewer than all)
    matches = [q for q in range(1, 70)
               if np.allclose(stopped.weights, ref.relieff(X, y, 5, queries=q),
                              rtol=1e-10, atol=1e-13)]
    assert len(matches) == 1, matches


def test_relief_and_relieff_verbose_show_progress_and_change_nothing(capsys):
    X, y = continuous_classes((60, 70), 4, 5)
    assert_array_equal(fastfs.relief(X, y, verbose=True).weights, fastfs.relief(X, y).weights)
    assert_array_equal(fastfs.relieff(X, y, verbose=True).weights, fastfs.relieff(X, y).weights)
    assert "relief" in capsys.readouterr().err


def test_one_pass_callback_must_be_callable():
    X, y = continuous_classes((20, 20), 4, 6)
    with pytest.raises(TypeError, match="callback"):
        fastfs.relief(X, y, callback=1)
    with pytest.raises(TypeError, match="callback"):
        fastfs.relieff(X, y, callback="no")


# allocation failure inside a parallel region

OUT_OF_MEMORY = """
import resource
import numpy as np
import fastfs
m = 4_000_000
U = 8 * m  # bytes of one float64 per sample
X = np.random.default_rng(0).standard_normal((m, 1))
y = (np.arange(m) % 2).astype(np.int8)
fastfs.relieff(X[:64], y[:64], n_neighbors=1, n_jobs=2)  # the thread team exists before the cap
with open("/proc/self/status") as f:
    vm = int(next(line for line in f if line.startswith("VmSize")).split()[1]) * 1024
# Room for what relieff allocates before its parallel region (about 5 U: the layout and the
# scaled copy), not for a thread's distance rows inside it (4 U each).
resource.setrlimit(resource.RLIMIT_AS, (vm + 9 * U, resource.RLIM_INFINITY))
try:
    fastfs.relieff(X, y, n_neighbors=1, n_jobs=2)
except MemoryError:
    print("MemoryError")
"""


def _sanitized():
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
def test_allocation_failure_in_a_parallel_region_is_a_memory_error():
    # std::bad_alloc thrown by a worker thread inside an OpenMP region once ended in
    # std::terminate (the interpreter aborted); it must reach Python as MemoryError.
    if _sanitized():
        pytest.skip("AddressSanitizer reserves far more address space than any cap allows")
    env = dict(os.environ, PYTHONPATH=str(Path(fastfs.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", OUT_OF_MEMORY], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "MemoryError"


def _many_copies(seed):
    """Half of the rows copy an earlier row (most with its label, some with the other one), and
    column 0 tells otherwise-equal rows apart, so that under a weight of 0 on it distinct rows
    are at distance 0 too: the neighbour searches then run on one row per group of equal rows
    of a class, and every member must get the exhaustive scan's answer (SPEC 1.4: the nearest
    other sample, the lowest index among equal distances)."""
    gen = np.random.default_rng(seed)
    m, n = 240, 24
    X = np.round(gen.standard_normal((m, n)), 1)
    y = gen.integers(0, 2, size=m)
    X[:, 1] += y
    for i in range(1, m):
        if gen.random() < 0.5:
            j = int(gen.integers(i))
            X[i], y[i] = X[j], (y[j] if gen.random() < 0.8 else 1 - y[j])
    X[:, 0] = gen.integers(0, 2, size=m)
    return X, y


@pytest.mark.parametrize("seed", [11, 12])
def test_searches_over_groups_of_equal_rows_match_the_definitions(seed):
    X, y = _many_copies(seed)
    m, n = X.shape
    w_flag_off = np.ones(n)
    w_flag_off[0] = 0.0
    w_spread = np.random.default_rng(seed).uniform(0.2, 2.0, n)
    for w in (None, w_flag_off, w_spread):
        assert_allclose(fastfs.margins(X, y, w), ref.margins(X, y, w), rtol=1e-12, atol=1e-12)
        assert fastfs.margin_score(X, y, w, utility="sigmoid", beta=2.0) == pytest.approx(
            ref.margin_score(X, y, w, "sigmoid", 2.0), rel=1e-12)
    assert_allclose(fastfs.relief(X, y).weights, ref.relief(X, y), rtol=1e-12, atol=1e-12)
    order = np.random.default_rng(seed + 1).integers(0, m, size=2 * m)
    for utility in ("linear", "sigmoid"):
        result = fastfs.simba(X, y, n_restarts=1, sample_order=order, utility=utility)
        ws, _ = ref.simba_path(X, y, order, utility)
        assert_allclose(result.weights, ref.simba_weights(ws[-1]), rtol=1e-10, atol=1e-14)
