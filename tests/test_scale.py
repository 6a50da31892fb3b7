"""Answers that must not depend on the units of the data: the distance methods, the linear
methods and the moment filters on X multiplied by 2**510 (squared distances beyond float64)
or by 1e-300 (squares in the subnormal range). Each reference is the same computation on the
unscaled data, or SciPy on it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import fastfs

BIG = 2.0**510  # squared differences of a few units overflow float64
SMALL = 1e-300


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(50, 6))
    y = (X[:, 0] + 0.5 * X[:, 2] + 0.3 * rng.normal(size=50) > 0).astype(int)
    yr = 2 * X[:, 0] + X[:, 1] + 0.2 * rng.normal(size=50)
    return X, y, yr


def close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


# ------------------------------------------------------------------------------------------
# distance methods


@pytest.mark.parametrize("s", [BIG, SMALL])
def test_margins_and_gflip_do_not_depend_on_the_scale(data, s):
    X, y, _ = data
    rtol = 1e-12 if s == BIG else 1e-9  # 1e-300 * X rounds every entry once
    close(fastfs.margins(X * s, y), fastfs.margins(X, y) * s, rtol)
    close(fastfs.margin_score(X * s, y), fastfs.margin_score(X, y) * s, rtol)
    close(fastfs.margin_score(X * s, y, utility="sigmoid", beta=2.0 / s),
          fastfs.margin_score(X, y, utility="sigmoid", beta=2.0), rtol)
    assert fastfs.margin_score(X * s, y, utility="zero_one") == fastfs.margin_score(
        X, y, utility="zero_one")
    a, b = fastfs.gflip(X * s, y, random_state=0), fastfs.gflip(X, y, random_state=0)
    assert a.selected.size > 0
    np.testing.assert_array_equal(a.selected, b.selected)
    close(a.score, b.score * s, rtol)
    close(a.history, b.history * s, rtol)


@pytest.mark.parametrize("s", [BIG, SMALL])
def test_neighbour_weightings_do_not_depend_on_the_scale(data, s):
    X, y, _ = data
    rtol = 1e-12 if s == BIG else 1e-9
    close(fastfs.relieff(X * s, y).weights, fastfs.relieff(X, y).weights, rtol)
    # Simba's sigmoid step is unit-free once beta is per unit of X.
    a = fastfs.simba(X * s, y, utility="sigmoid", beta=3.0 / s, n_restarts=2, random_state=1,
                     n_jobs=1)
    b = fastfs.simba(X, y, utility="sigmoid", beta=3.0, n_restarts=2, random_state=1, n_jobs=1)
    close(a.weights, b.weights, 1e-12 if s == BIG else 1e-6)
    np.testing.assert_array_equal(a.ranking, b.ranking)
    # The linear step has the units of X: no invariance to test, but a meaningful answer.
    if s == SMALL:
        # steps of the order of 1e-300 cannot move w = 1: every weight stays 1, which warns
        with pytest.warns(fastfs.EqualScoresWarning, match="simba: .*utility='sigmoid'"):
            lin = fastfs.simba(X * s, y, random_state=1)
    else:
        lin = fastfs.simba(X * s, y, random_state=1)
    assert np.isfinite(lin.weights).all() and lin.weights.max() == 1.0
    assert np.isfinite(lin.score)


def test_simba_weights_beyond_float64_are_an_error():
    # The linear steps grow w in the units of X: near the float maximum w overflows.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="Simba's weights.*overflow float64"):
        fastfs.simba(X * 2.0**1020, y, random_state=0)


def test_relief_weights_carry_squared_units(data):
    X, y, _ = data
    s = 2.0**490
    close(fastfs.relief(X * s, y).weights, fastfs.relief(X, y).weights * s**2)
    # 1e-600 and 1e310 are not float64 numbers: a clear error instead of all-zero or NaN weights.
    for s in (SMALL, BIG):
        with pytest.raises(ValueError, match="Relief weights.*does not fit in float64"):
            fastfs.relief(X * s, y)


@pytest.mark.parametrize("s", [BIG, SMALL])
def test_soft_knn_regression_does_not_depend_on_the_scale(data, s):
    X, _, yr = data
    rtol = 1e-12 if s == BIG else 1e-8
    close(fastfs.knn_regression_score(X * s, yr), fastfs.knn_regression_score(X, yr), rtol)
    close(fastfs.sks(X * s, yr).weights, fastfs.sks(X, yr).weights, rtol)
    a, b = fastfs.rgs(X * s, yr, random_state=0), fastfs.rgs(X, yr, random_state=0)
    close(a.weights, b.weights, 1e-9 if s == BIG else 1e-6)
    np.testing.assert_array_equal(a.ranking, b.ranking)
    close(a.score, b.score, 1e-9 if s == BIG else 1e-6)
    # A user's beta is in units of X squared.
    close(fastfs.knn_regression_score(X * BIG, yr, beta=0.7 * BIG**2),
          fastfs.knn_regression_score(X, yr, beta=0.7))


@pytest.mark.parametrize("s", [BIG, SMALL])
@pytest.mark.parametrize("criterion", ["loo_knn_accuracy", "margin", "j3"])
def test_searches_do_not_depend_on_the_scale(data, s, criterion):
    X, y, _ = data
    a = fastfs.sfs(X * s, y, 3, criterion=criterion, n_jobs=1)
    b = fastfs.sfs(X, y, 3, criterion=criterion, n_jobs=1)
    np.testing.assert_array_equal(a.selected, b.selected)
    unit = s if criterion == "margin" else 1.0
    close(a.history, b.history * unit, 1e-9)


@pytest.mark.parametrize("s", [BIG, SMALL])
@pytest.mark.parametrize("criterion", ["loo_knn_mse", "least_squares"])
def test_regression_searches_do_not_depend_on_the_scale(data, s, criterion):
    X, _, yr = data
    a = fastfs.sfs(X * s, yr, 3, criterion=criterion, n_jobs=1)
    b = fastfs.sfs(X, yr, 3, criterion=criterion, n_jobs=1)
    np.testing.assert_array_equal(a.selected, b.selected)
    close(a.history, b.history, 1e-8)


@pytest.mark.parametrize("s", [BIG, SMALL])
def test_omp_and_lasso_do_not_depend_on_the_scale(data, s):
    X, _, yr = data
    a, b = fastfs.omp(X * s, yr, 3), fastfs.omp(X, yr, 3)
    np.testing.assert_array_equal(a.selected, b.selected)
    close(a.coef * s, b.coef, 1e-9)
    close(a.history, b.history, 1e-9)
    # On X * s the same model has coefficients / s and needs alpha * s.
    la, lb = fastfs.lasso(X * s, yr, 0.1 * s), fastfs.lasso(X, yr, 0.1)
    assert lb.selected.size > 0
    np.testing.assert_array_equal(la.selected, lb.selected)
    close(la.coef * s, lb.coef, 1e-6)


def test_lasso_near_the_float_maximum_finds_the_model(data):
    """scikit-learn raises here; fastfs rescales X exactly and finds the same model as on X."""
    X, _, yr = data
    c = 2.0**1020 / np.abs(X).max()
    c = 2.0 ** np.floor(np.log2(c))  # a power of two: X * c is exact
    la, lb = fastfs.lasso(X * c, yr, 0.05 * c), fastfs.lasso(X, yr, 0.05)
    assert lb.selected.size > 0
    np.testing.assert_array_equal(la.selected, lb.selected)
    close(la.coef * c, lb.coef, 1e-6)
    # alpha in natural units is a negligible penalty at this scale: the least-squares model,
    # every column (it used to be the empty model). As for alpha -> 0 in scikit-learn, the
    # duality gap cannot certify it.
    with pytest.warns(fastfs.linear.ConvergenceWarning):
        assert fastfs.lasso(X * c, yr, 0.05).selected.size == X.shape[1]
    path = fastfs.lasso_path(X * c, yr, n_alphas=5)
    ref = fastfs.lasso_path(X, yr, n_alphas=5)
    close(path.alphas, ref.alphas * c)
    close(path.coefs * c, ref.coefs, 1e-6)


# ------------------------------------------------------------------------------------------
# moment filters against SciPy on the unscaled data


@pytest.fixture(scope="module")
def two_class():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4)) + np.array([0.0, 1.0, 5.0, -2.0])
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] += 1.0
    return X, y


@pytest.mark.parametrize("s", [1e-300, 1e200, "mixed"])
def test_moment_filters_at_extreme_scales_agree_with_scipy(two_class, s):
    X, y = two_class
    scale = (np.array([1e-300, 1e200, 1.0, 1e-200]) if s == "mixed"
             else np.full(X.shape[1], s))
    Xs = X * scale
    t_ref = stats.ttest_ind(X[y == 1], X[y == 0])
    for arr in (Xs, __import__("scipy.sparse", fromlist=["csc_matrix"]).csc_matrix(Xs)):
        t = fastfs.filters.t_test(arr, y)
        close(t.scores, t_ref.statistic, 1e-9)
        close(t.pvalues, t_ref.pvalue, 1e-8)
        f = fastfs.filters.anova_f(arr, y)
        f_ref = stats.f_oneway(X[y == 0], X[y == 1])
        close(f.scores, f_ref.statistic, 1e-9)
    close(fastfs.filters.s2n(Xs, y).scores, fastfs.filters.s2n(X, y).scores, 1e-9)
    close(fastfs.filters.f_score(Xs, y).scores, fastfs.filters.f_score(X, y).scores, 1e-9)
    close(fastfs.filters.fisher_ratio(Xs, y).scores,
          fastfs.filters.fisher_ratio(X, y).scores, 1e-9)
    close(fastfs.filters.z_test(Xs, y, sigma=1.5 * scale).scores,
          fastfs.filters.z_test(X, y, sigma=1.5).scores, 1e-9)


@pytest.mark.parametrize("sx, sy", [(1e90, 1.0), (1.0, 1e-200), (1e90, 1e90), (1e-300, 1e200)])
def test_pearson_at_extreme_scales_agrees_with_scipy(two_class, sx, sy):
    X, _ = two_class
    rng = np.random.default_rng(5)
    yr = X[:, 0] - X[:, 2] + rng.normal(size=X.shape[0])
    res = fastfs.filters.pearson(X * sx, yr * sy)
    for j in range(X.shape[1]):
        ref = stats.pearsonr(X[:, j], yr)
        close(res.scores[j], ref.statistic, 1e-9)
        close(res.pvalues[j], ref.pvalue, 1e-7)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_regression_target_of_extreme_magnitude_is_a_clear_error(scale):
    """e(w) is in units of y squared: at 1e200 it overflowed to -inf, at 1e-200 every score
    vanished to 0. Either is refused with an error that names y."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    y = X[:, 0] * scale
    for call in (lambda: fastfs.knn_regression_score(X, y), lambda: fastfs.sks(X, y),
                 lambda: fastfs.rgs(X, y, random_state=0)):
        with pytest.raises(ValueError, match="^y: "):
            call()
    assert np.isfinite(fastfs.knn_regression_score(X, y / scale))


@pytest.mark.parametrize("c", [1e300, 2.0**600, 1e-20, 1e-50, 1e-150, 2.0**-900])
def test_lasso_on_a_target_of_any_scale_finds_the_same_model(c):
    """The LASSO is linear in y and the penalties: on y * c with alpha * c it has the
    coefficients times c. ||y||^2 (the scale of the duality gap) used to overflow at 1e300
    (an error), and below about 1e-15 the default grid put every penalty at 1e-15, an all-zero
    path; the reference is the same problem at c = 1, and no warning escapes (warnings are
    errors in this suite)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    y = 2 * X[:, 0] - X[:, 2] + 0.1 * rng.normal(size=40)
    a, b = fastfs.lasso(X, y * c, alpha=0.05 * c), fastfs.lasso(X, y, alpha=0.05)
    assert b.selected.size > 0
    np.testing.assert_array_equal(a.selected, b.selected)
    close(a.coef / c, b.coef, 1e-9)
    close(a.residual_norms / c, b.residual_norms, 1e-9)
    if 1e-150 < c < 1e150:  # the residual sum of squares fits in float64
        close(a.score / c**2, b.score, 1e-9)
    path, ref = fastfs.lasso_path(X, y * c, n_alphas=6), fastfs.lasso_path(X, y, n_alphas=6)
    close(path.alphas / c, ref.alphas, 1e-12)
    close(path.coefs / c, ref.coefs, 1e-9)
    assert np.abs(ref.coefs[:, -1]).max() > 1.0


@pytest.mark.parametrize("c", [2.0**510, 2.0**300, 2.0**-300, 1e-300])
def test_separability_at_extreme_scales(c):
    """J1, J2, J3, divergence and Bhattacharyya are unit-free; the scatter matrices carry units
    of X squared and the means units of X. A ridge has the units of the covariances."""
    from fastfs import separability as sep

    rng = np.random.default_rng(9)
    X = rng.normal(size=(60, 3)) * [1.0, 2.0, 0.5]
    y = np.repeat([0, 1, 2], 20)
    X[y == 1] += 1.0
    Xc = X * c
    for f in (sep.j1, sep.j2, sep.j3, sep.divergence, sep.bhattacharyya):
        close(f(Xc, y), f(X, y), 1e-9)
    if 1e-300 < c * c < 1e300:  # X squared (a ridge, the scatter) fits in float64
        close(sep.j3(Xc, y, ridge=0.1 * c * c), sep.j3(X, y, ridge=0.1), 1e-9)
        close(sep.divergence(Xc, y, ridge=0.1 * c * c), sep.divergence(X, y, ridge=0.1), 1e-9)
    b = sep.scatter_matrices(X, y)
    with np.errstate(over="ignore", under="ignore"):
        want = (b.within * c) * c
    if np.all(np.isfinite(want)) and np.all(np.abs(want) > 1e-300):
        a = sep.scatter_matrices(Xc, y)
        close(a.within, want, 1e-9)
        close(a.means, b.means * c, 1e-12)
    else:
        with pytest.raises(ValueError, match="scatter"):
            sep.scatter_matrices(Xc, y)


@pytest.mark.parametrize("c", [1e200, 1e-300])
def test_chi2_counts_at_extreme_scales_is_scikit_learns_times_the_scale(c):
    """scikit-learn's chi2 on counts is homogeneous of degree 1 in X: its squares of counts
    overflowed to inf (and sklearn's own formula does too) from about 1e154."""
    from sklearn.feature_selection import chi2 as sk_chi2

    rng = np.random.default_rng(4)
    X = rng.poisson(3.0, size=(40, 5)).astype(float)
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] += 4
    want = sk_chi2(X, y)[0] * c
    got = fastfs.filters.chi2(X * c, y, kind="counts").scores
    close(got, want, 1e-9)


def test_least_squares_selection_with_one_column_of_extreme_magnitude():
    """OMP and backward elimination do not depend on the scale of each column: one column
    1e200 times the others must not push those to the edge of float64 (OMP used to stop after
    one round with them rescaled to ~1e-200)."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(60, 5))
    y = 3 * X[:, 2] - 2 * X[:, 1] + X[:, 0] * 0.5 + 0.01 * rng.normal(size=60)
    Xs = X.copy()
    Xs[:, 0] *= 1e200
    for fit_intercept in (False, True):
        a = fastfs.omp(X, y, 3, fit_intercept=fit_intercept)
        b = fastfs.omp(Xs, y, 3, fit_intercept=fit_intercept)
        np.testing.assert_array_equal(b.selected, a.selected)
        scale = np.where(a.selected == 0, 1e-200, 1.0)
        close(b.coef, a.coef * scale, 1e-9)
        close(b.history, a.history, 1e-9)
        c = fastfs.backward_least_squares(Xs, y, 2, fit_intercept=fit_intercept)
        d = fastfs.backward_least_squares(X, y, 2, fit_intercept=fit_intercept)
        np.testing.assert_array_equal(c.selected, d.selected)


@pytest.mark.parametrize("k", [-100, -30, 40])
def test_power_of_two_scales_give_bit_identical_neighbour_answers(data, k):
    # Inside float64's safe range the neighbour methods still rescale X (their float32 screens
    # need max|x| near 1); a power of two must then change the answers by exactly 2**k per unit
    # of X, bit for bit, as it does for every float64 computation without under- or overflow.
    X, y, yr = data
    s = 2.0**k
    np.testing.assert_array_equal(fastfs.margins(X * s, y), fastfs.margins(X, y) * s)
    np.testing.assert_array_equal(fastfs.relief(X * s, y).weights,
                                  fastfs.relief(X, y).weights * s**2)
    np.testing.assert_array_equal(fastfs.relieff(X * s, y).weights, fastfs.relieff(X, y).weights)
    assert fastfs.knn_regression_score(X * s, yr) == fastfs.knn_regression_score(X, yr)
    a = fastfs.sfs(X * s, y, 3, criterion="margin", n_jobs=1)
    b = fastfs.sfs(X, y, 3, criterion="margin", n_jobs=1)
    np.testing.assert_array_equal(a.selected, b.selected)
    np.testing.assert_array_equal(a.history, b.history * s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rescaling_by_multiplication_has_the_bits_of_ldexp(dtype):
    # The rescaling multiplies by a power of two (ldexp per element is slow). The reference is
    # NumPy's ldexp, compared as bit patterns (signed zeros and subnormal results included), at
    # every binary exponent of the dtype: data scaled down into the subnormal range (rounded,
    # once, in both), and subnormal data scaled up by more than the largest finite power.
    from fastfs._scale import times_power_of_two

    rng = np.random.default_rng(3)
    info = np.finfo(dtype)
    bits = np.uint64 if dtype == np.float64 else np.uint32
    for e in range(info.minexp - info.nmant, info.maxexp, 7):
        for order in "CF":
            X = np.asarray(np.ldexp(rng.standard_normal((9, 4)), e), dtype=dtype, order=order)
            top = np.abs(X).max(axis=0)
            columns = -np.frexp(np.where(top > 0, top, 1.0))[1]
            whole = -int(np.frexp(np.abs(X).max())[1])
            X[0, 0], X[1, 1], X[2, 2], X[3, 3], X[4, 0] = 0.0, -0.0, np.nan, np.inf, -np.inf
            for k in (whole, -40, 40, columns, columns[None, :]):
                with np.errstate(all="ignore"):
                    want = np.ldexp(X, np.asarray(k, dtype=np.int32))
                if np.isinf(want[np.isfinite(X)]).any():
                    continue
                got = times_power_of_two(X, k)
                assert got.dtype == X.dtype
                assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous
                np.testing.assert_array_equal(got.view(bits), want.view(bits))
    # Powers no rescaling of finite data needs go to ldexp itself (far below the smallest
    # subnormal power, beyond twice the largest finite one, beyond int32).
    X = np.asarray([[1.5, -0.0, np.inf], [2.0**-20, 3.0, np.nan]], dtype=dtype)
    for k in (-3000, 3000, 2**40, -(2**40)):
        with np.errstate(all="ignore"):
            want = np.ldexp(X, int(np.clip(k, -(1 << 20), 1 << 20)))
            got = times_power_of_two(X, k)
        np.testing.assert_array_equal(got.view(bits), want.view(bits))


@pytest.mark.parametrize("s", [2.0**300, 2.0**-300, 1e61])
def test_regression_target_of_any_representable_scale(data, s):
    """y beyond about 1e60 (or below 1e-60) was refused though e(w), in units of y squared,
    fits in float64 up to about 1e154: y is rescaled by a power of two as X is, so the weights
    are those of y at an ordinary scale and the scores carry y's units."""
    X, _, yr = data
    exact = s != 1e61  # y * 1e61 rounds; a power of two does not
    rtol = 1e-13
    out = fastfs.knn_regression_score(X, yr * s)
    close(out, fastfs.knn_regression_score(X, yr) * s * s, rtol)
    a, b = fastfs.rgs(X, yr * s, random_state=0), fastfs.rgs(X, yr, random_state=0)
    if exact:
        np.testing.assert_array_equal(a.weights, b.weights)
    else:
        np.testing.assert_allclose(a.weights, b.weights, rtol=0, atol=1e-12)
    close(a.score, b.score * s * s, rtol)
    close(a.restart_scores, b.restart_scores * s * s, rtol)
    # a fixed learning rate has the units of 1 / y squared
    a = fastfs.rgs(X, yr * s, learning_rate=0.3 / (s * s), random_state=1)
    b = fastfs.rgs(X, yr, learning_rate=0.3, random_state=1)
    np.testing.assert_allclose(a.weights, b.weights, rtol=0, atol=1e-12)
    log_a, log_b = [], []
    fastfs.rgs(X, yr * s, random_state=2, callback=lambda st: log_a.append(st.score))
    fastfs.rgs(X, yr, random_state=2, callback=lambda st: log_b.append(st.score))
    close(np.array(log_a), np.array(log_b) * s * s, rtol)
    a, b = fastfs.sks(X, yr * s), fastfs.sks(X, yr)
    close(a.weights, b.weights * s * s, rtol)
    np.testing.assert_array_equal(a.ranking, b.ranking)
    for criterion in ("loo_knn_mse", "least_squares"):
        a = fastfs.sfs(X, yr * s, 3, criterion=criterion)
        b = fastfs.sfs(X, yr, 3, criterion=criterion)
        np.testing.assert_array_equal(a.selected, b.selected)
        close(a.history, b.history * s * s, rtol)


@pytest.mark.parametrize("s", [1e-200, 1e200])
def test_searches_on_a_target_whose_squares_leave_float64_are_a_clear_error(data, s):
    """The sums of squared errors of y * 1e-200 all vanished to -0 (sfs then chose by index,
    silently); at 1e200 they overflowed and the search blamed singular scatter matrices."""
    X, _, yr = data
    for criterion in ("loo_knn_mse", "least_squares"):
        with pytest.raises(ValueError, match="^y: .*units of y\\*\\*2"):
            fastfs.sfs(X, yr * s, 2, criterion=criterion)


@pytest.mark.parametrize("c", [1e200, 1e-200, 2.0**-700, 1e300])
def test_margins_with_weights_of_extreme_magnitude(data, c):
    """Weights of 1e200 squared to inf (NaN margins, and margin_score skipped the NaN samples:
    a plausible wrong number); 1e-200 gave all-zero margins. theta is linear in w."""
    X, y, _ = data
    w = np.linspace(0.5, 2.0, X.shape[1])
    base = fastfs.margins(X, y, w)
    close(fastfs.margins(X, y, w * c), base * c, 1e-12)
    assert fastfs.margin_score(X, y, w * c, utility="zero_one") == fastfs.margin_score(
        X, y, w, utility="zero_one")
    close(fastfs.margin_score(X, y, w * c), fastfs.margin_score(X, y, w) * c, 1e-12)
    close(fastfs.margin_score(X, y, w * c, utility="sigmoid", beta=1.5 / c),
          fastfs.margin_score(X, y, w, utility="sigmoid", beta=1.5), 1e-12)
    # X and w at opposite extremes: w * X is ordinary
    close(fastfs.margins(X * (1 / c), y, w * c), base, 1e-9)


def test_margins_callback_reports_the_sum_in_the_units_of_X(data):
    X, y, _ = data
    for s in (1e8, 1e-30):
        log = []
        theta = fastfs.margins(X * s, y, callback=lambda st: log.append(st.score))
        close(log[-1], np.nansum(theta), 1e-12)


@pytest.mark.parametrize("c", [1e155, 1e200, 1e-200, 2.0**900])
def test_column_scale_free_criteria_with_one_column_of_extreme_magnitude(data, c):
    """least_squares, J2, J3, divergence and Bhattacharyya do not change when one column is
    scaled. One factor for all of X left the ordinary columns to underflow once another was
    1e155 times larger: least_squares scored -44 for -0.295, J3 lost digits, then -inf."""
    X, y, yr = data
    Xm = X.copy()
    Xm[:, 0] *= c
    for target, criterion in ((yr, "least_squares"), (y, "j2"), (y, "j3"), (y, "divergence"),
                              (y, "bhattacharyya")):
        for subset in ([1], [0, 1], [0, 2, 3]):
            close(fastfs.criteria.evaluate(Xm, target, subset, criterion),
                  fastfs.criteria.evaluate(X, target, subset, criterion), 1e-9)
        a = fastfs.sfs(Xm, target, 3, criterion=criterion)
        b = fastfs.sfs(X, target, 3, criterion=criterion)
        np.testing.assert_array_equal(a.selected, b.selected)
