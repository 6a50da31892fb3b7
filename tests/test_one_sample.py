"""One-sample z and t tests with confidence intervals, and screening by p-value
(fastfs.filters.one_sample_z / one_sample_t / screen)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import fastfs
from fastfs.filters import one_sample_t, one_sample_z, screen


def sample_with(N, mean, sd, seed=0):
    """N values with exactly this sample mean and unbiased standard deviation."""
    z = np.random.default_rng(seed).standard_normal(N)
    z = (z - z.mean()) / z.std(ddof=1)
    return (mean + sd * z).reshape(-1, 1)


def test_slides_known_sigma_example():
    # N = 16, mean 1.35, sigma = 0.23 known, H0: mu = 1.4 at rho = 0.05: the interval
    # 1.35 -+ 1.96 * 0.23 / 4 = [1.237, 1.463] holds 1.4, so H0 is accepted.
    x = sample_with(16, 1.35, 0.5)  # the sample's own spread must not matter
    got = one_sample_z(x, 1.4, sigma=0.23, rho=0.05)
    assert got.low[0] == pytest.approx(1.237, abs=5e-4)
    assert got.high[0] == pytest.approx(1.463, abs=5e-4)
    assert got.mean[0] == pytest.approx(1.35, rel=1e-14)
    assert got.scores[0] == pytest.approx((1.35 - 1.4) / (0.23 / 4), rel=1e-12)
    assert got.pvalues[0] > 0.05 and got.confidence == 0.95 and got.df is None


def test_slides_unknown_sigma_example():
    # Same numbers with sigma estimated (s = 0.23), rho = 0.025: Student's t with 15 degrees
    # of freedom, quantile 2.49, interval [1.207, 1.493]; H0 accepted.
    x = sample_with(16, 1.35, 0.23)
    got = one_sample_t(x, 1.4, rho=0.025)
    assert stats.t.ppf(1 - 0.025 / 2, 15) == pytest.approx(2.49, abs=5e-3)
    assert got.low[0] == pytest.approx(1.207, abs=5e-4)
    assert got.high[0] == pytest.approx(1.493, abs=5e-4)
    assert got.df == 15 and got.pvalues[0] > 0.025


def test_t_agrees_with_scipy(rng):
    X = rng.standard_normal((30, 7)) * [1, 2, 3, 1e-3, 1e3, 5, 1] + [0, 1, -1, 0, 5e2, 0.3, 0]
    mu = np.array([0.0, 1.5, -1.0, 1e-3, 4e2, 0.0, 0.2])
    got = one_sample_t(X, mu, rho=0.1)
    want = stats.ttest_1samp(X, mu, axis=0)
    assert_allclose(got.scores, want.statistic, rtol=1e-10, atol=0)
    assert_allclose(got.pvalues, want.pvalue, rtol=1e-10, atol=0)
    ci = want.confidence_interval(confidence_level=0.9)
    assert_allclose(got.low, ci.low, rtol=1e-10)
    assert_allclose(got.high, ci.high, rtol=1e-10)
    # a scalar mu is broadcast
    assert_allclose(one_sample_t(X, 0.5).scores, stats.ttest_1samp(X, 0.5).statistic,
                    rtol=1e-10)


def test_z_against_the_formula(rng):
    X = rng.normal(2.0, 3.0, size=(25, 4))
    sigma = np.array([3.0, 1.0, 2.0, 4.0])
    got = one_sample_z(X, 1.0, sigma=sigma, rho=0.01)
    q = (X.mean(axis=0) - 1.0) / (sigma / 5.0)
    assert_allclose(got.scores, q, rtol=1e-12)
    assert_allclose(got.pvalues, 2 * stats.norm.sf(np.abs(q)), rtol=1e-10)
    half = stats.norm.ppf(0.995) * sigma / 5.0
    assert_allclose(got.low, X.mean(axis=0) - half, rtol=1e-12)
    assert_allclose(got.high, X.mean(axis=0) + half, rtol=1e-12)


def test_interval_covers_the_true_mean_at_its_level():
    """Coverage of the t interval over many Gaussian samples is close to 1 - rho."""
    gen = np.random.default_rng(3)
    X = gen.normal(1.0, 2.0, size=(12, 4000))
    got = one_sample_t(X, 1.0, rho=0.1)
    covered = np.mean((got.low <= 1.0) & (1.0 <= got.high))
    assert abs(covered - 0.9) < 0.02
    # the interval holds mu exactly when the test does not reject at rho
    assert_array_equal((got.low <= 1.0) & (1.0 <= got.high), got.pvalues >= 0.1)


def test_extreme_magnitudes_and_constant_columns():
    x = sample_with(10, 3.0, 1.0, seed=1)
    X = np.hstack([x * 1e200, x * 1e-200, np.full((10, 1), 2.0), np.full((10, 1), 2.0)])
    got = one_sample_t(X, [2e200, 2e-200, 2.0, 1.0])
    assert_allclose(got.scores[:2], stats.ttest_1samp(x, 2.0).statistic[0], rtol=1e-10)
    assert got.scores[2] == 0 and got.pvalues[2] == 1
    assert got.scores[3] == np.inf and got.pvalues[3] == 0
    assert got.low[3] == got.high[3] == 2.0


def test_a_constant_column_equal_to_mu_is_not_significant():
    """A column whose every value is mu (0.1, 0.3, ... are not exact in binary, and a plain
    mean of them rounds away from the value): q = 0 and p = 1, as documented; SciPy gives a
    nonzero t there."""
    for v in (0.1, 0.3, 0.7, 1.1, 3.3, 1e-5):
        for n in range(2, 41):
            got = one_sample_t(np.full((n, 1), v), v)
            assert got.scores[0] == 0.0 and got.pvalues[0] == 1.0, (v, n)
            assert got.mean[0] == v and got.low[0] == v and got.high[0] == v
    with pytest.warns(UserWarning, match="nothing is kept"):
        assert screen(one_sample_t(np.full((7, 1), 0.1), 0.1)).selected.size == 0


def test_mean_far_from_zero_keeps_its_digits():
    """Values 1e12 + small integers: the mean and q from exact rational arithmetic."""
    from fractions import Fraction
    gen = np.random.default_rng(3)
    x = 1e12 + gen.integers(-5, 6, 30).astype(float)
    mu = 1e12 + 0.25
    exact = [Fraction(v) for v in x]
    mean = sum(exact) / len(exact)
    var = sum((v - mean) ** 2 for v in exact) / (len(exact) - 1)
    q = float((mean - Fraction(mu)) / Fraction(float(np.sqrt(float(var)))) *
              Fraction(float(np.sqrt(len(exact)))))
    got = one_sample_t(x[:, None], mu)
    assert got.mean[0] == float(mean)
    assert_allclose(got.scores[0], q, rtol=1e-12)


def test_z_needs_sigma():
    with pytest.raises(TypeError, match=r"^one_sample_z: sigma, the known standard deviation"):
        one_sample_z(np.ones((5, 2)), sigma=None)


def test_screen_a_two_sample_filter():
    gen = np.random.default_rng(5)
    y = np.repeat([0, 1], 40)
    X = gen.standard_normal((80, 6))
    X[:, 2] += 1.5 * y
    X[:, 4] -= 0.8 * y
    res = fastfs.filters.t_test(X, y)
    got = screen(res, 0.05)
    p = stats.ttest_ind(X[y == 1], X[y == 0]).pvalue
    keep = np.flatnonzero(p < 0.05)
    assert_array_equal(np.sort(got.selected), keep)
    assert_array_equal(got.selected, keep[np.argsort(p[keep], kind="stable")])
    assert_allclose(got.history, np.sort(p[keep]), rtol=1e-10)
    assert got.score == pytest.approx(p[keep].max(), rel=1e-10)
    # Bonferroni keeps a subset of the plain screen; raw p-values work the same way
    b = screen(res.pvalues, 0.05, correction="bonferroni")
    assert_array_equal(np.sort(b.selected), np.flatnonzero(p < 0.05 / 6))
    assert set(b.selected) <= set(got.selected)
    # other tests with p-values screen too
    for f in (fastfs.filters.anova_f, fastfs.filters.auc):
        r = f(X, y)
        assert_array_equal(screen(r, 0.01).support, r.pvalues < 0.01)


def test_screen_ties_and_names():
    pd = pytest.importorskip("pandas")
    got = screen(np.array([0.01, 0.2, 0.001, 0.01]), 0.05)
    assert [int(i) for i in got.selected] == [2, 0, 3]
    X = pd.DataFrame(np.random.default_rng(0).standard_normal((20, 3)) + [0, 0, 3],
                     columns=["a", "b", "c"])
    r = one_sample_t(X, 0.0)
    assert list(r.feature_names) == ["a", "b", "c"]
    assert "c" in list(screen(r, 0.05).selected_names)


def test_screen_nothing_kept_warns():
    with pytest.warns(UserWarning, match="nothing is kept"):
        got = screen([0.5, 0.9], 0.05)
    assert got.selected.size == 0 and np.isnan(got.score)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match="rho"):
        one_sample_t(X, rho=0.0)
    with pytest.raises(ValueError, match="rho"):
        one_sample_z(X, sigma=1.0, rho=1.5)
    with pytest.raises(TypeError, match="rho"):
        one_sample_t(X, rho="a")
    with pytest.raises(ValueError, match="sigma"):
        one_sample_z(X, sigma=0.0)
    with pytest.raises(ValueError, match="sigma"):
        one_sample_z(X, sigma=[1.0, 2.0])
    with pytest.raises(ValueError, match="sigma"):
        one_sample_z(X, sigma=[1.0, -2.0, 1.0])
    with pytest.raises(TypeError):
        one_sample_z(X)  # sigma is required
    with pytest.raises(ValueError, match="mu"):
        one_sample_t(X, mu=[1.0, 2.0])
    with pytest.raises(ValueError, match="mu"):
        one_sample_t(X, mu=np.nan)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="X"):
        one_sample_t(Xn)
    with pytest.raises(ValueError, match="X"):
        one_sample_t(X[:1])
    with pytest.raises(ValueError, match="X"):
        one_sample_t(X[:, :0])
    with pytest.raises(ValueError, match="p-values"):
        screen(fastfs.filters.f_score(X[:4], [0, 0, 1, 1]))
    with pytest.raises(ValueError, match="pvalues"):
        screen([0.1, 1.2])
    with pytest.raises(ValueError, match="correction"):
        screen([0.1], correction="holm")


def test_wide_x_is_read_in_column_blocks():
    # the means and deviations of blocks of columns: the same numbers as SciPy's, with
    # temporaries of a block, not five arrays the size of X
    import tracemalloc

    gen = np.random.default_rng(5)
    X = gen.standard_normal((500, 2000)) * np.logspace(-1, 2, 2000) + 7.0
    res = one_sample_t(X, mu=7.0)
    ref_t = stats.ttest_1samp(X, 7.0)
    np.testing.assert_allclose(res.scores, ref_t.statistic, rtol=1e-9)
    np.testing.assert_allclose(res.pvalues, ref_t.pvalue, rtol=1e-7, atol=1e-300)
    tracemalloc.start()
    one_sample_t(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < X.nbytes  # about 4 X before
