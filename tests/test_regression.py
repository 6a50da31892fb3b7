"""fastfs.knn_regression_score, fastfs.rgs, fastfs.sks and the forward selection on the shared
distance state (SPEC 3), checked against the plain-NumPy reference and finite differences."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref
from fastfs import _core
from fastfs.criteria import LooKnnMSE
from fastfs.regression import _knn_regression, default_n_neighbors


def regression_problem(m=40, n=6, seed=0):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, n))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * gen.standard_normal(m)
    return X, y


def xor_like(m, seed, n=50):
    """The experiment's smoothed xor of features 0 and 1 (bench/experiments/rgs_synthetic.py)."""
    gen = np.random.default_rng(seed)
    X = gen.uniform(-1, 1, (m, n))
    y = np.tanh(3 * X[:, 0]) * np.tanh(3 * X[:, 1]) + gen.normal(0, math.sqrt(1 / 7), m)
    return X, y


# ------------------------------------------------------------------------------------------
# the criterion


@pytest.mark.parametrize("n_neighbors, beta", [(None, None), (1, None), (3, 0.7), (10, 5.0),
                                               (39, None), (100, 2.0)])
def test_score_and_estimates_match_reference(n_neighbors, beta):
    X, y = regression_problem()
    w = np.random.default_rng(1).uniform(0.2, 1.5, X.shape[1])
    for weights in (None, w):
        got = _knn_regression(X, y, weights, n_neighbors=n_neighbors, beta=beta)
        g, e, b, k = ref.knn_regression(X, y, weights, n_neighbors, beta)
        assert got["k"] == k
        assert_allclose(got["beta"], b, rtol=1e-12)
        assert_allclose(got["estimates"], g, rtol=1e-12, atol=1e-12)
        assert_allclose(got["score"], e, rtol=1e-12)
        assert_allclose(fastfs.knn_regression_score(X, y, weights, n_neighbors=n_neighbors,
                                                    beta=beta), e, rtol=1e-12)


@pytest.mark.parametrize("kind", ["gaussian", "ties", "duplicates", "counts", "float32"])
@pytest.mark.parametrize("n_neighbors", [1, 7, 32, 33])
def test_wide_data_scores_match_reference(kind, n_neighbors):
    """Few samples and many features (gene expression, word counts): the neighbour lists come
    from blocked Gram products there (up to 32 neighbours); they must be the exhaustive scan's,
    ties and duplicated rows included."""
    gen = np.random.default_rng(5)
    m, n = 300, 600
    X = gen.standard_normal((m, n))
    if kind == "duplicates":
        X[1::3] = X[0::3][: len(X[1::3])]  # every third row copied: neighbours at distance 0
    elif kind == "ties":
        X = np.round(X / 3)  # values -1, 0, 1: integer distances, many equal
    elif kind == "counts":
        X = gen.poisson(0.05, (m, n)).astype(float)  # mostly zeros: the sparse tiles
    y = np.sin(X[:, 0]) + X[:, 1] + 0.1 * gen.standard_normal(m)
    if kind == "float32":
        X = X.astype(np.float32)
    w = gen.uniform(0.2, 1.5, n)
    for weights in (None, w):
        got = _knn_regression(X, y, weights, n_neighbors=n_neighbors)
        g, e, b, k = ref.knn_regression(X.astype(float), y, weights, n_neighbors, None)
        assert got["k"] == k
        assert_allclose(got["beta"], b, rtol=1e-12)
        assert_allclose(got["estimates"], g, rtol=1e-12, atol=1e-12)
        assert_allclose(got["score"], e, rtol=1e-12)


@pytest.mark.parametrize("layout", ["strided", "reversed", "one_feature_reversed",
                                    "int", "float32", "list"])
def test_weights_of_any_layout_and_real_dtype_match_reference(layout):
    X, y = regression_problem()
    w = np.random.default_rng(1).uniform(0.2, 1.5, X.shape[1])
    if layout == "strided":
        weights = np.repeat(w, 2)[::2]
    elif layout == "reversed":
        weights = w[::-1].copy()[::-1]
    elif layout == "one_feature_reversed":  # NumPy calls it contiguous; its stride is -8
        X, w = X[:, :1], w[:1]
        weights = w[::-1]
    elif layout == "int":
        w = np.arange(1, X.shape[1] + 1).astype(np.float64)
        weights = w.astype(np.int32)
    elif layout == "float32":
        w = w.astype(np.float32).astype(np.float64)
        weights = w.astype(np.float32)
    else:
        weights = list(w)
    e = ref.knn_regression(X, y, w, None, None)[1]
    assert_allclose(fastfs.knn_regression_score(X, y, weights), e, rtol=1e-12)
    assert_allclose(fastfs.knn_regression_score(X, y, weights, beta=0.5),
                    ref.knn_regression(X, y, w, None, 0.5)[1], rtol=1e-12)


def test_weights_refuse_complex_and_non_real_dtypes():
    X, y = regression_problem(m=20, n=3)
    with pytest.raises(TypeError, match="weights: complex values are not supported"):
        fastfs.knn_regression_score(X, y, np.array([1.0, 1.0, 1.0 + 1e-3j]))
    with pytest.raises(TypeError, match="weights: expected real numbers, got dtype <U"):
        fastfs.knn_regression_score(X, y, np.array(["1", "1", "1"]))
    with pytest.raises(TypeError, match="weights: expected real numbers, got dtype timedelta"):
        fastfs.knn_regression_score(X, y, np.ones(3).astype("m8[s]"))
    for bad in (None, "1"):
        with pytest.raises(TypeError, match="weights: expected real numbers, got dtype object"):
            fastfs.knn_regression_score(X, y, np.array([1.0, bad, 1.0], dtype=object))
    assert_allclose(fastfs.knn_regression_score(X, y, np.array([1, 2.0, 0.5], dtype=object)),
                    ref.knn_regression(X, y, np.array([1, 2.0, 0.5]))[1], rtol=1e-12)
    with pytest.raises(ValueError, match="weights: contains NaN"):
        fastfs.knn_regression_score(X, y, np.array([1.0, np.inf, 1.0]))


def test_score_of_float32_input_matches_reference_on_its_values():
    X, y = regression_problem()
    X32 = X.astype(np.float32)
    _, e, _, _ = ref.knn_regression(X32.astype(np.float64), y)
    assert_allclose(fastfs.knn_regression_score(X32, y), e, rtol=1e-12)


def test_far_neighbours_do_not_underflow():
    # exp(-d / beta) underflows to 0 for every neighbour here; the shifted kernel does not.
    X, y = regression_problem()
    X = X * 1e3
    got = _knn_regression(X, y, n_neighbors=5, beta=1e-3)
    assert np.all(np.isfinite(got["estimates"]))
    g, e, _, _ = ref.knn_regression(X, y, None, 5, 1e-3)
    assert_allclose(got["estimates"], g, rtol=1e-12)
    # in the limit the estimate is the nearest neighbour's target
    idx, _ = ref.loo_neighbours(ref.weighted_sq_distances(X), 1)
    assert_allclose(got["estimates"], y[idx[:, 0]], rtol=1e-12)


@pytest.mark.parametrize("m", [60, 700])
@pytest.mark.parametrize("weights", ["ones", "extreme", "random"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_neighbours_exact_with_ties_and_extreme_weights(weights, dtype, m):
    # Small integers give many equal distances: the float32 shortlist must still return the
    # exact k nearest with ties to the lower index, as an exhaustive scan does. With 700
    # samples (22 blocks of 32) the selection starts from the k-th smallest block minimum for
    # k <= 22, and from +inf for k = 30.
    gen = np.random.default_rng(3)
    X = gen.integers(0, 3, (m, 12)).astype(dtype)
    y = gen.standard_normal(m)
    w = {"ones": np.ones(12), "extreme": np.r_[np.full(6, 1e-20), np.full(6, 3e3)],
         "random": gen.uniform(0, 2, 12)}[weights]
    for k in (1, 4, 9) if m == 60 else (1, 9, 22, 30):
        got = _knn_regression(X, y, w, n_neighbors=k, beta=0.7)
        g, _, _, _ = ref.knn_regression(X.astype(np.float64), y, w, k, 0.7)
        assert_allclose(got["estimates"], g, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300])
def test_score_depends_on_the_weights_ratios_only(scale):
    """With the default beta the soft kNN score is a function of d_w / beta, unchanged when
    every weight is multiplied by c: weights of 1e200 gave NaN and of 1e-200 the all-zero
    weights' score. With a given beta, c w and c^2 beta give the score of w and beta."""
    X, y = regression_problem(m=40, n=4)
    w = np.array([1.0, 0.5, 0.2, 0.1])
    want, _, _, _ = ref.knn_regression(X, y, w, 3, None)
    got = fastfs.knn_regression_score(X, y, w * scale, n_neighbors=3)
    assert got == pytest.approx(ref.knn_regression(X, y, w, 3, None)[1], rel=1e-12)
    assert_allclose(_knn_regression(X, y, w * scale, n_neighbors=3)["estimates"], want,
                    rtol=1e-12)
    base = fastfs.knn_regression_score(X, y, w, n_neighbors=3, beta=0.5)
    for c in (1e100, 1e-100):
        assert fastfs.knn_regression_score(X, y, w * c, n_neighbors=3, beta=0.5 * c * c) == \
            pytest.approx(base, rel=1e-12)
    with pytest.raises(ValueError, match="beta: 0.5 cannot be represented on the scale of the "
                                         "weighted distances"):
        fastfs.knn_regression_score(X, y, w * 1e200, n_neighbors=3, beta=0.5)


def exhaustive_neighbours(X, w2, i, k):
    """The k nearest other samples of i, nearest first, ties to the lower index, with the
    distance summed feature by feature in float64 (the same roundings, in the same order, as
    the library's exact distance, so the distances must agree bit for bit)."""
    Xd = X.astype(np.float64)
    d = np.zeros(X.shape[0])
    for f in range(X.shape[1]):
        t = Xd[:, f] - Xd[i, f]
        d += w2[f] * (t * t)
    others = np.delete(np.arange(X.shape[0]), i)
    order = others[np.lexsort((others, d[others]))][:k]
    return order, d[order]


def drifting_weights(gen, n, steps, start):
    """Squared weights that drift the way RGS moves them: small multiplicative steps, an
    occasional large one, features dropping to 0 and coming back, tiny weights."""
    w2 = np.empty((steps, n))
    w = start.copy()
    for t in range(steps):
        scale = 0.3 if t % 10 == 0 else 0.02
        w *= (1 + scale * gen.uniform(-1, 1, n)) * (1 + scale * gen.uniform(-1, 1, n))
        w[gen.random(n) > 0.995] = 0.0
        back = (w == 0.0) & (gen.random(n) > 0.9)
        w[back] = 0.7
        w2[t] = w
    return w2


@pytest.mark.parametrize("data", ["uniform", "ties", "offset", "scales", "heavy", "outlier"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_neighbour_query_exact_while_weights_drift(data, dtype):
    # The screen keeps sum_f w2_f z_jf^2 for reference weights and refreshes a feature only
    # when its weight has moved too far, carrying the rest as bounds: whatever the weights
    # did since, every query must return the neighbours and distances of an exhaustive scan.
    gen = np.random.default_rng(11)
    m, n, steps = 300, 23, 150
    X = {"uniform": gen.uniform(-1, 1, (m, n)),
         "ties": gen.integers(0, 3, (m, n)).astype(float),
         "offset": 1e4 + gen.uniform(-1, 1, (m, n)),
         "scales": gen.uniform(-1, 1, (m, n)) * 10.0 ** (np.arange(n) % 7 - 3),
         "heavy": gen.standard_t(1.5, (m, n)),
         "outlier": np.vstack([gen.uniform(-1, 1, (m - 1, n)), np.full((1, n), 1e3)])}[data]
    X = X.astype(dtype)
    start = np.r_[np.full(3, 1e-10), np.ones(n - 3)]
    W2 = drifting_weights(gen, n, steps, start)
    samples = gen.integers(0, m, steps).tolist()
    for k in (1, 9, 20):
        got = _core._testing.knn_query_trace(X, W2, samples, k, 1)
        for t, i in enumerate(samples):
            idx, dist = exhaustive_neighbours(X, W2[t], i, k)
            assert_array_equal(got["idx"][t], idx)
            assert_array_equal(got["dist"][t], dist)
        # The bounds were exercised: weights moved (refreshes), the first query built, and
        # the shortlist is usually far shorter than the data (an outlier row or heavy tails
        # need not widen the bounds of the other samples).
        assert got["refreshed"] > 0 and got["rebuilt"] >= 1
        assert np.median(got["kept"]) < m / 3


def test_neighbour_query_split_over_threads_is_exact():
    # Rows of at least 2^22 terms are split across threads; the result must not change.
    gen = np.random.default_rng(12)
    m = n = 2048
    X = gen.uniform(-1, 1, (m, n))
    W2 = drifting_weights(gen, n, 4, np.ones(n))
    samples = [0, 1000, 2047, 5]
    one = _core._testing.knn_query_trace(X, W2, samples, 11, 1)
    two = _core._testing.knn_query_trace(X, W2, samples, 11, 2)
    assert_array_equal(one["idx"], two["idx"])
    assert_array_equal(one["dist"], two["dist"])
    for t, i in enumerate(samples):
        idx, dist = exhaustive_neighbours(X, W2[t], i, 11)
        assert_array_equal(two["idx"][t], idx)
        assert_array_equal(two["dist"][t], dist)


def test_equal_distances_get_uniform_weights():
    # Every feature zero-weighted: all distances are 0, the default beta is 0, and each estimate
    # is the plain mean of the k lowest-index other samples.
    X, y = regression_problem(m=12)
    got = _knn_regression(X, y, np.zeros(X.shape[1]), n_neighbors=3)
    assert got["beta"] == 0.0
    expected = [np.mean(y[[j for j in range(12) if j != i][:3]]) for i in range(12)]
    assert_allclose(got["estimates"], expected, rtol=1e-15)


def test_default_n_neighbors_is_ceil_log2():
    for m in range(2, 5000):
        assert default_n_neighbors(m) == ref.default_n_neighbors(m), m
    X, y = regression_problem(m=33)
    assert _knn_regression(X, y)["k"] == 6


def test_k_is_capped_at_n_samples_minus_one():
    X, y = regression_problem(m=5)
    got = _knn_regression(X, y, n_neighbors=50)
    assert got["k"] == 4
    # with every other sample as a neighbour and beta huge, the estimate is the leave-one-out mean
    got = _knn_regression(X, y, n_neighbors=50, beta=1e12)
    assert_allclose(got["estimates"], (y.sum() - y) / 4, rtol=1e-9)


def test_default_beta_is_half_the_mean_squared_distance_to_the_k_nearest_at_w_1():
    X, y = regression_problem(m=30, n=4)
    D = ref.weighted_sq_distances(X)
    np.fill_diagonal(D, np.inf)
    k = 5  # ceil(log2 30)
    expected = 0.5 * np.mean(np.sort(D, axis=1)[:, :k])
    assert_allclose(_knn_regression(X, y)["beta"], expected, rtol=1e-12)
    res = fastfs.rgs(X, y, random_state=0)
    assert res.n_neighbors == k
    assert_allclose(res.beta, expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# the gradient (SPEC 3.2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_matches_reference_formula(seed):
    X, y = regression_problem(m=30, n=7, seed=seed)
    w = np.random.default_rng(seed + 10).uniform(0.3, 1.4, 7)
    for s in (0, 7, 29):
        grad, g, nb = _core.rgs_gradient(X, y, w, s, 5, 1.3)
        rgrad, rnb = ref.rgs_gradient(X, y, w, s, 5, 1.3)
        assert_array_equal(nb, rnb)
        assert_allclose(grad, rgrad, rtol=1e-10, atol=1e-14 * np.abs(rgrad).max())


def central_difference(X, y, w, s, nb, beta, h=1e-5):
    out = np.empty(w.size)
    for i in range(w.size):
        wp, wm = w.copy(), w.copy()
        wp[i] += h
        wm[i] -= h
        for wx in (wp, wm):  # the neighbour set must not change within the step
            idx, _ = ref.loo_neighbours(ref.weighted_sq_distances(X, wx), len(nb))
            assert_array_equal(np.sort(idx[s]), np.sort(nb))
        out[i] = (ref.sample_error(X, y, wp, s, nb, beta)
                  - ref.sample_error(X, y, wm, s, nb, beta)) / (2 * h)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_gradient_matches_central_finite_differences(seed):
    X, y = regression_problem(m=25, n=6, seed=seed)
    gen = np.random.default_rng(seed + 100)
    w = gen.uniform(0.4, 1.5, 6)
    beta = 0.8
    for s in gen.choice(25, 4, replace=False):
        grad, _, nb = _core.rgs_gradient(X, y, w, int(s), 4, beta)
        fd = central_difference(X, y, w, int(s), nb, beta)
        scale = np.abs(fd).max()
        assert scale > 1e-6  # a real signal, not zeros agreeing with zeros
        assert_allclose(grad, fd, rtol=1e-6, atol=1e-6 * scale)


def test_the_thesis_printed_sum_fails_the_finite_differences():
    # The check above can fail: the formula with a sum where SPEC 3.2 has a difference does.
    X, y = regression_problem(m=25, n=6, seed=5)
    w = np.ones(6)
    beta, s = 0.8, 3
    grad, g, nb = _core.rgs_gradient(X, y, w, s, 4, beta)
    fd = central_difference(X, y, w, s, nb, beta)
    d = ref.weighted_sq_distances(X)[s, nb]
    p = np.exp(-d / beta) / np.exp(-d / beta).sum()
    delta = (X[s] - X[nb]) ** 2
    wrong = (y[s] - g) * -(2 * w / beta) * ((p * y[nb]) @ (delta + p @ delta))
    assert not np.allclose(wrong, fd, rtol=1e-3)
    assert_allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


# ------------------------------------------------------------------------------------------
# RGS


@pytest.mark.parametrize("learning_rate", [1.0, 0.3, "invscaling", lambda t: 2.0 / (1 + t)])
def test_rgs_follows_the_reference_step_by_step(learning_rate):
    X, y = regression_problem(m=30, n=5, seed=3)
    order = np.random.default_rng(7).permutation(30)
    res = fastfs.rgs(X, y, sample_order=order, learning_rate=learning_rate, n_jobs=1)
    if learning_rate == "invscaling":
        eta = 1 / np.sqrt(np.arange(1, 31))
    elif callable(learning_rate):
        eta = [learning_rate(t) for t in range(1, 31)]
    else:
        eta = np.full(30, learning_rate)
    raw = ref.rgs_path(X, y, order, res.n_neighbors, res.beta, eta)
    assert_allclose(res.raw_weights, raw, rtol=1e-9, atol=1e-12)
    assert_allclose(res.weights, raw**2 / np.max(raw**2), rtol=1e-9, atol=1e-12)
    _, e, _, _ = ref.knn_regression(X, y, raw, res.n_neighbors, res.beta)
    assert_allclose(res.score, e, rtol=1e-9)


def test_rgs_weights_in_unit_interval_with_max_one():
    X, y = regression_problem(m=60, n=8)
    res = fastfs.rgs(X, y, n_epochs=2, n_restarts=2, random_state=0)
    assert isinstance(res, fastfs.WeightResult)
    assert np.all(res.weights >= 0) and np.all(res.weights <= 1)
    assert res.weights.max() == 1.0
    assert_array_equal(res.ranking, np.argsort(-res.weights, kind="stable"))
    assert res.restart_scores.shape == (2,) and res.history.size == 0
    assert res.score == res.restart_scores.max() == res.restart_scores[res.best_restart]


def test_rgs_finds_the_relevant_features():
    X, y = regression_problem(m=80, n=8, seed=4)
    res = fastfs.rgs(X, y, n_epochs=3, random_state=0)
    assert set(res.ranking[:2]) == {0, 1}


def test_rgs_callback_sees_running_errors_and_can_stop():
    X, y = regression_problem(m=30, n=5, seed=2)
    order = np.arange(30)
    seen = []

    def callback(state):
        seen.append((state.step, state.score, np.array(state.selection)))
        return state.step == 10

    res = fastfs.rgs(X, y, sample_order=order, callback=callback, n_jobs=1, learning_rate=1.0)
    assert res.stopped_early and [s[0] for s in seen] == list(range(1, 11))
    # the running score is the sum of -(1/2)(y - g_hat)^2 at the w before each step
    w, running = np.ones(5), 0.0
    for t in range(10):
        g, _, _, _ = ref.knn_regression(X, y, w, res.n_neighbors, res.beta)
        running += -0.5 * (y[t] - g[t]) ** 2
        assert_allclose(seen[t][1], running, rtol=1e-9)
        grad, _ = ref.rgs_gradient(X, y, w, t, res.n_neighbors, res.beta)
        w = w + grad
        assert_allclose(seen[t][2], w, rtol=1e-9)


def test_rgs_same_result_for_any_n_jobs_and_seed_reproducible():
    gen = np.random.default_rng(9)
    # 2^22 distance terms per row: the rows of the steps are split across threads
    Xl = gen.standard_normal((64, 1 << 16), dtype=np.float32)
    yl = Xl[:, 0] ** 2 + Xl[:, 1]
    order = gen.permutation(64)[:20]
    a, b = (fastfs.rgs(Xl, yl, sample_order=order, n_jobs=j) for j in (1, 2))
    assert_array_equal(a.raw_weights, b.raw_weights)
    assert a.score == b.score
    X = gen.standard_normal((300, 100))
    y = X[:, 0] ** 2 + X[:, 1]
    # restarts side by side (no callback) and in order (callback)
    Xs, ys = X[:80, :30], y[:80]
    a = fastfs.rgs(Xs, ys, n_restarts=3, random_state=5, n_jobs=1)
    b = fastfs.rgs(Xs, ys, n_restarts=3, random_state=5, n_jobs=2)
    c = fastfs.rgs(Xs, ys, n_restarts=3, random_state=5, n_jobs=2, callback=lambda s: False)
    for other in (b, c):
        assert_array_equal(a.raw_weights, other.raw_weights)
        assert_array_equal(a.history, other.history)
        assert a.score == other.score and a.best_restart == other.best_restart
    d = fastfs.rgs(Xs, ys, n_restarts=3, random_state=6, n_jobs=1)
    assert not np.array_equal(a.raw_weights, d.raw_weights)
    for fn in (lambda j: fastfs.knn_regression_score(X, y, n_jobs=j),
               lambda j: fastfs.sks(X[:, :40], y, n_jobs=j).weights,
               lambda j: fastfs.sfs(X[:, :30], y, 3, criterion="loo_knn_mse", n_jobs=j).history):
        assert_array_equal(fn(1), fn(2))


def test_rgs_restarts_return_the_best_e():
    X, y = regression_problem(m=40, n=6, seed=8)
    res = fastfs.rgs(X, y, n_restarts=4, random_state=3, n_jobs=1)
    for r in range(4):
        single = fastfs.rgs(X, y, n_restarts=r + 1, random_state=3, n_jobs=1)
        assert_array_equal(single.history, res.history[:r + 1])
    assert res.restart_scores[res.best_restart] == res.restart_scores.max()
    assert res.best_restart == int(np.argmax(res.restart_scores))
    assert res.history.size == 0  # RGS computes no score per step


def test_xor_like_rgs_ranks_both_relevant_first_while_sks_does_not():
    # The experiment's finding on the smoothed xor with 100 samples in 50 dimensions, RGS with
    # its defaults (one epoch, eta = 1), on a fixed set of seeds.
    seeds = range(8)
    rgs_hits = sks_hits = 0
    for seed in seeds:
        X, y = xor_like(100, seed)
        r = fastfs.rgs(X, y, random_state=seed)
        rgs_hits += set(r.ranking[:2]) == {0, 1}
        sks_hits += set(fastfs.sks(X, y).ranking[:2]) == {0, 1}
    assert rgs_hits > len(seeds) / 2
    assert sks_hits <= 1


def test_rgs_zero_default_beta_asks_for_one():
    X = np.ones((10, 3))
    y = np.arange(10.0)
    with pytest.raises(ValueError, match="beta"):
        fastfs.rgs(X, y)
    # constant columns: nothing to learn, so every weight stays 1 and a warning says so
    with pytest.warns(fastfs.EqualScoresWarning, match="rgs: every feature got the same "
                      "weight .1. up to rounding, so their order is arbitrary"):
        assert_array_equal(fastfs.rgs(X, y, beta=1.0).weights, np.ones(3))


# ------------------------------------------------------------------------------------------
# SKS and forward selection


@pytest.mark.parametrize("n_neighbors, beta", [(None, None), (4, 0.3)])
def test_sks_matches_reference(n_neighbors, beta):
    X, y = regression_problem(m=35, n=6)
    res = fastfs.sks(X, y, n_neighbors=n_neighbors, beta=beta)
    assert_allclose(res.weights, ref.sks(X, y, n_neighbors, beta), rtol=1e-12)
    assert_array_equal(res.ranking, np.argsort(-res.weights, kind="stable"))
    assert res.ranking[0] == 0


@pytest.mark.parametrize("subset", [[], [1], [0, 3], [2, 4, 5]])
@pytest.mark.parametrize("beta", [None, 0.9])
def test_subset_scores_on_the_distance_state_match_reference(subset, beta):
    X, y = regression_problem(m=30, n=6, seed=2)
    base, cand = _core.knn_subset_scores(X, y, subset, 4, 0.0 if beta is None else beta, 1)
    assert_allclose(base, ref.subset_regression_score(X, y, subset, 4, beta), rtol=1e-12)
    for f in range(6):
        if f in subset:
            assert np.isnan(cand[f])
        else:
            expected = ref.subset_regression_score(X, y, subset + [f], 4, beta)
            assert_allclose(cand[f], expected, rtol=1e-12)


@pytest.mark.parametrize("beta", [None, 0.5])
def test_forward_select_matches_reference(beta):
    # The thesis' fwdSel is sfs with the loo_knn_mse criterion: J = -(1/m) sum (y - g)^2
    # = 2 e / m, e the evaluation of the reference.
    X, y = regression_problem(m=40, n=7, seed=6)
    res = fastfs.sfs(X, y, 4, criterion=LooKnnMSE(beta=beta))
    sel, scores = ref.forward_select_regression(X, y, 4, None, beta)
    assert_array_equal(res.selected, sel)
    assert_allclose(res.history, 2 * np.asarray(scores) / 40, rtol=1e-12)
    assert res.support.sum() == 4 and res.score == res.history[-1]


# ------------------------------------------------------------------------------------------
# RGS and SKS as score functions of scikit-learn's univariate selectors


@pytest.mark.parametrize("name", ["rgs", "sks"])
def test_rgs_and_sks_serve_selectkbest_and_selectpercentile(name):
    from functools import partial

    from sklearn.feature_selection import SelectKBest, SelectPercentile

    X, y = regression_problem(m=40, n=8)
    order = np.random.default_rng(4).permutation(40)
    if name == "sks":
        func, want = fastfs.sks, ref.sks(X, y)
    else:
        # RGS's weights are checked against the reference step by step above; here what
        # matters is that the selectors read them.
        func = partial(fastfs.rgs, sample_order=order)
        want = func(X, y).weights
        assert np.unique(want).size == want.size
    top = np.sort(np.argsort(-want)[:2])
    best = SelectKBest(func, k=2).fit(X, y)
    assert_allclose(best.scores_, want, rtol=1e-9, atol=1e-12)
    assert best.pvalues_ is None
    assert_array_equal(np.flatnonzero(best.get_support()), top)
    pct = SelectPercentile(func, percentile=25).fit(X, y)  # 2 of 8 features
    assert_array_equal(np.flatnonzero(pct.get_support()), top)


# ------------------------------------------------------------------------------------------
# bad input


def test_bad_inputs_are_rejected():
    X, y = regression_problem(m=20, n=3)
    with pytest.raises(ValueError, match="y: expected a 1-D"):
        fastfs.rgs(X, y[:, None])
    with pytest.raises(ValueError, match="different numbers of samples"):
        fastfs.knn_regression_score(X, y[:-1])
    with pytest.raises(ValueError, match="y: contains NaN"):
        fastfs.sks(X, np.where(np.arange(20) == 3, np.nan, y))
    with pytest.raises(TypeError, match="y: expected real numbers"):
        fastfs.rgs(X, np.array(["a"] * 20))
    with pytest.raises(ValueError, match="n_neighbors: must be >= 1"):
        fastfs.knn_regression_score(X, y, n_neighbors=0)
    with pytest.raises(ValueError, match="beta: must be > 0"):
        fastfs.rgs(X, y, beta=-1.0)
    for beta in (0.0, -1.0):  # its own error, not one about the scale of the distances
        with pytest.raises(ValueError, match="beta: must be > 0"):
            fastfs.knn_regression_score(X, y, beta=beta)
    for beta in (np.nan, np.inf):
        with pytest.raises(ValueError, match="beta: must be finite"):
            fastfs.knn_regression_score(X, y, beta=beta)
    with pytest.raises(ValueError, match="weights: expected a 1-D array of length"):
        fastfs.knn_regression_score(X, y, np.ones(4))
    with pytest.raises(ValueError, match="learning_rate: unknown value 'optimal'.*'invscaling'"):
        fastfs.rgs(X, y, learning_rate="optimal")
    with pytest.raises(ValueError, match="learning_rate: must be >= 0"):
        fastfs.rgs(X, y, learning_rate=-0.1)
    with pytest.raises(ValueError, match="learning_rate: the callable returned nan for step 3"):
        fastfs.rgs(X, y, learning_rate=lambda t: np.nan if t == 3 else 1.0)
    with pytest.raises(TypeError, match="learning_rate: expected a number"):
        fastfs.rgs(X, y, learning_rate=[1.0])
    with pytest.raises(ValueError, match="n_epochs: must be >= 1"):
        fastfs.rgs(X, y, n_epochs=0)
    with pytest.raises(ValueError, match="sample_order fixes a single run"):
        fastfs.rgs(X, y, sample_order=[0, 1], n_restarts=2)
    with pytest.raises(IndexError, match="sample_order"):
        fastfs.rgs(X, y, sample_order=[0, 20])
    with pytest.raises(ValueError, match="n_features_to_select: must be in"):
        fastfs.sfs(X, y, 4, criterion="loo_knn_mse")
    with pytest.raises(ValueError, match="X: need at least 2 samples"):
        fastfs.rgs(X[:1], y[:1])


# ------------------------------------------------------------------------------------------
# Ctrl-C (SPEC 1.7)

RGS_CHILD = r"""
import sys, time
import numpy as np
import fastfs
rng = np.random.default_rng(0)
X = rng.standard_normal((1500, 2000))
y = X[:, 0] + rng.standard_normal(1500)
print("started", flush=True)
t0 = time.perf_counter()
try:
    fastfs.rgs(X, y, n_epochs=100, n_restarts=RESTARTS, random_state=0, n_jobs=JOBS)
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - t0:.3f}", flush=True)
    sys.exit(0)
print(f"finished {time.perf_counter() - t0:.3f}", flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("restarts, jobs", [(1, 1), (4, 2)], ids=["in_order", "side_by_side"])
def test_ctrl_c_stops_rgs_promptly(restarts, jobs):
    child = RGS_CHILD.replace("RESTARTS", str(restarts)).replace("JOBS", str(jobs))
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)  # let the C++ loop get going
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        latency = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.startswith("interrupted"), out
    assert latency < 5.0, latency


# ------------------------------------------------------------------------------------------
# RGS's default step


def _close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def test_rgs_default_step_does_not_depend_on_the_units_of_y():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(50, 6))
    yr = 2 * X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=50)
    a = fastfs.rgs(X, yr, n_epochs=3, random_state=0, n_jobs=1)
    b = fastfs.rgs(X, 77 * yr + 1000, n_epochs=3, random_state=0, n_jobs=1)
    np.testing.assert_array_equal(a.ranking, b.ranking)
    _close(a.weights, b.weights, 1e-6)
    _close(a.raw_weights, b.raw_weights, 1e-6)


def test_rgs_keeps_learning_on_diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    w = [fastfs.rgs(X, y, n_epochs=e, random_state=0).weights for e in (1, 5)]
    assert not np.allclose(w[0], w[1], rtol=1e-3)
    # With the thesis' eta = 1 on y in its units the weights freeze after one epoch.
    frozen = [fastfs.rgs(X, y, n_epochs=e, learning_rate=1.0, random_state=0).weights
              for e in (1, 5)]
    np.testing.assert_allclose(frozen[0], frozen[1], rtol=1e-12)
    # And the ranking it finds is a good one: the top 3 features alone predict y (soft kNN)
    # better than the top 3 of the frozen run.
    top = fastfs.rgs(X, y, n_epochs=5, random_state=0).ranking[:3]
    top_frozen = np.argsort(-frozen[1], kind="stable")[:3]
    assert (fastfs.knn_regression_score(X[:, top], y)
            > fastfs.knn_regression_score(X[:, top_frozen], y))


# ------------------------------------------------------------------------------------------
# SKS callback / verbose (SPEC 1.7): a step is a block of features


def test_sks_callback_reports_scores_so_far_and_can_stop(rng):
    X = rng.standard_normal((80, 6))
    y = X[:, 2] + 0.1 * rng.standard_normal(80)
    expected = np.array([fastfs.knn_regression_score(X[:, [j]], y) for j in range(6)])
    plain = fastfs.sks(X, y, n_jobs=1)
    assert_allclose(plain.weights, expected, rtol=1e-12)
    states = []

    def callback(state):
        states.append((state.step, np.array(state.selection, copy=True)))
        return False

    result = fastfs.sks(X, y, n_jobs=1, callback=callback)
    assert_array_equal(result.weights, plain.weights)
    assert not result.stopped_early
    # one thread, 6 features: one feature per step
    assert [s[0] for s in states] == [1, 2, 3, 4, 5, 6]
    for step, so_far in states:
        assert_array_equal(so_far[:step], plain.weights[:step])
        assert np.all(np.isnan(so_far[step:]))

    stopped = fastfs.sks(X, y, n_jobs=1, callback=lambda s: s.step == 3)
    assert stopped.stopped_early
    assert_array_equal(stopped.weights[:3], plain.weights[:3])
    assert np.all(np.isnan(stopped.weights[3:]))
    # features not reached are ranked last
    assert_array_equal(np.sort(stopped.ranking[:3]), [0, 1, 2])
    assert_array_equal(stopped.ranking[:3], np.argsort(-plain.weights[:3], kind="stable"))


def test_sks_verbose_shows_progress(rng, capsys):
    X = rng.standard_normal((40, 3))
    y = X[:, 0]
    assert_array_equal(fastfs.sks(X, y, verbose=True).weights, fastfs.sks(X, y).weights)
    assert "sks" in capsys.readouterr().err


def test_constant_target_warns_and_rgs_keeps_the_starting_weights():
    """Nothing can be learned from a constant y: a warning says so (it used to be a silent
    result, and rgs's default step 1 / var(y) divided by zero)."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.full(30, 2.5)
    with pytest.warns(UserWarning, match="y: is constant"):
        res = fastfs.rgs(X, y, random_state=0)
    assert_array_equal(res.weights, np.ones(3))
    with pytest.warns(UserWarning, match="y: is constant"):
        # every estimate is y itself, up to the rounding of the normalised kernel weights
        assert abs(fastfs.knn_regression_score(X, y)) < 1e-25
    with pytest.warns(UserWarning, match="y: is constant"):
        assert np.all(np.abs(fastfs.sks(X, y).weights) < 1e-25)
