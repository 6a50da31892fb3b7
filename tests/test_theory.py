"""fastfs.theory: the two-Gaussian analysis (Navot's thesis, chapter 2) and the bounds as
calculators. References are closed forms derived by hand (steps written out), SciPy, and
simulation of the generator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import digamma, polygamma
from scipy.stats import norm

from fastfs import theory as T


# ------------------------------------------------------------------------------------------
# f(n, m) and its maximiser against the closed forms of examples 2.1-2.3
#
# f(n, m) = S_n / sqrt(n/m + S_n). Treating n as real, df/dn = 0 gives
#   2 S'(n/m + S) = S (1/m + S')   =>   m = (S - 2 n S') / (S S').
# The integer maximiser must then be the floor or the ceiling of the real root.


def _root(m_of_n, m, lo, hi):
    return brentq(lambda x: m_of_n(x) - m, lo, hi)


@pytest.mark.parametrize("m", [16, 100, 1000, 10000])
def test_example_2_1_geometric(m):
    # mu_j = 2^(-j/2): S_n = sum_{j<=n} 2^-j = 1 - 2^-n (geometric series), S' = ln2 2^-n.
    mu = T.example_mu("inv_sqrt_pow2", 50)
    n = np.arange(1, 51)
    s = 1.0 - 2.0 ** -n
    np.testing.assert_allclose(T.f_nm(mu, m), s / np.sqrt(n / m + s), rtol=1e-12)
    ln2 = math.log(2.0)
    root = _root(lambda x: (1 - 2 ** -x - 2 * x * ln2 * 2 ** -x)
                 / ((1 - 2 ** -x) * ln2 * 2 ** -x), m, 2.0, 49.0)
    assert T.n_opt(mu, m) in (math.floor(root), math.ceil(root))
    # The thesis's order of magnitude: 1/sqrt(m) ~ ln2 * mu_n, i.e. n ~ log2(m ln2^2)
    assert abs(T.n_opt(mu, m) - math.log2(m * ln2 ** 2)) <= 2.0


@pytest.mark.parametrize("m", [16, 100, 1000, 10000])
def test_example_2_2_inverse_j(m):
    # mu_j = 1/j: pi^2/6 - 1/n < S_n < pi^2/6 - 1/(n+1) (integral comparison), and f grows
    # with S at fixed n, so f lies between the two closed forms.
    N = 20000
    mu = T.example_mu("inv_j", N)
    n = np.arange(1, N + 1, dtype=float)
    c = math.pi ** 2 / 6
    lo, hi = c - 1 / n, c - 1 / (n + 1)
    f = T.f_nm(mu, m)
    assert np.all(f[1:] >= (lo / np.sqrt(n / m + lo))[1:] - 1e-12)
    assert np.all(f <= hi / np.sqrt(n / m + hi) + 1e-12)
    # With S = c - 1/n, S' = 1/n^2: m = n^2 (c - 3/n) / (c - 1/n) = (n^3 pi^2 - 18 n^2) /
    # (n pi^2 - 6), the thesis's relation (for large n: n ~ sqrt(m)).
    root = _root(lambda x: (x ** 3 * math.pi ** 2 - 18 * x ** 2) / (x * math.pi ** 2 - 6),
                 m, 2.0, 1e6)
    assert T.n_opt(mu, m) in (math.floor(root), math.ceil(root))


@pytest.mark.parametrize("m", [16, 100, 1000])
def test_example_2_3_inverse_sqrt_j(m):
    # mu_j = 1/sqrt(j): S_n = H_n = digamma(n + 1) + Euler's gamma, S' = trigamma(n + 1)
    # (about 1/n, which gives the thesis's m = n (H_n - 2) / H_n, m ~ n for large n).
    N = 5000
    mu = T.example_mu("inv_sqrt_j", N)
    n = np.arange(1, N + 1, dtype=float)
    h = digamma(n + 1) + np.euler_gamma
    np.testing.assert_allclose(T.f_nm(mu, m), h / np.sqrt(n / m + h), rtol=1e-10)
    def m_of_n(x):
        s, ds = digamma(x + 1) + np.euler_gamma, polygamma(1, x + 1)
        return (s - 2 * x * ds) / (s * ds)

    root = _root(m_of_n, m, 8.0, N - 1.0)
    assert 0.8 < root * (math.log(root) - 2) / math.log(root) / m < 1.25
    assert T.n_opt(mu, m) in (math.floor(root), math.ceil(root))


def test_equal_features_use_all():
    # mu_j = c: S_n = n c^2, f = c^2 sqrt(n) / sqrt(1/m + c^2), increasing in n.
    mu = np.full(30, 0.4)
    np.testing.assert_allclose(T.f_nm(mu, 10), 0.16 * np.sqrt(np.arange(1, 31))
                               / math.sqrt(0.1 + 0.16), rtol=1e-12)
    assert T.n_opt(mu, 10) == 30


def test_f_uses_the_strongest_features_first():
    mu = np.array([0.1, -2.0, 0.0, 1.0])
    # S_1 = 4, S_2 = 5, S_3 = 5.01, S_4 = 5.01; m = 2
    assert T.f_nm(mu, 2, 2) == pytest.approx(5 / math.sqrt(1 + 5), rel=1e-14)
    assert T.f_nm(mu, 2, 4) == pytest.approx(5.01 / math.sqrt(2 + 5.01), rel=1e-14)


# ------------------------------------------------------------------------------------------
# exact errors and the generator


def test_linear_rule_error_against_scipy_and_simulation():
    mu = np.array([1.0, 0.5, 0.0])
    w, b = np.array([0.3, -0.2, 1.0]), 0.4
    a, s = w @ mu, np.linalg.norm(w)
    want = 0.5 * (norm.cdf(-(a + b) / s) + norm.cdf(-(a - b) / s))
    assert T.linear_rule_error(w, mu, b) == pytest.approx(want, rel=1e-12)
    X, y = T.make_two_gaussians(mu, 200_000, random_state=1)
    sim = np.mean(np.where(X @ w + b > 0, 1, -1) != y)
    assert abs(sim - want) < 0.004  # 4 standard errors of a 200k-sample proportion


def test_ml_error_is_eq_2_3():
    mu = np.array([0.2, 1.0, 0.5])
    mu_hat = np.array([0.1, 0.7, -0.3])
    # n = 2 takes the two strongest true features, 1.0 and 0.5 (coordinates 1 and 2)
    z = (0.7 * 1.0 + -0.3 * 0.5) / math.sqrt(0.7 ** 2 + 0.3 ** 2)
    assert T.ml_error(mu_hat, mu, 2) == pytest.approx(norm.cdf(-z), rel=1e-12)


def test_generator_moments():
    mu = np.array([1.0, -0.5])
    X, y = T.make_two_gaussians(mu, 20_000, random_state=3)
    assert set(np.unique(y)) == {-1, 1}
    assert abs(np.mean(y == 1) - 0.5) < 0.02
    np.testing.assert_allclose((y[:, None] * X).mean(axis=0), mu, atol=0.03)
    np.testing.assert_allclose(np.cov((X - y[:, None] * mu).T), np.eye(2), atol=0.05)


def test_expected_error_matches_training_on_generated_sets():
    # The exact-distribution shortcut (mu_hat ~ N(mu, I/m)) against real training sets.
    mu = T.example_mu("inv_j", 12)
    m, reps = 16, 400
    fast = T.expected_ml_error(mu, m, n_repeats=reps, random_state=0)
    rng = np.random.default_rng(7)
    slow = np.zeros(12)
    for _ in range(reps):
        X, y = T.make_two_gaussians(mu, m, random_state=rng)
        mu_hat = (y[:, None] * X).mean(axis=0)
        slow += [T.ml_error(mu_hat, mu, n) for n in range(1, 13)]
    slow /= reps
    np.testing.assert_allclose(fast, slow, atol=0.015)
    # and the thesis's point of figure 2.1: Phi(-f) is close to the true average error
    np.testing.assert_allclose(fast, norm.cdf(-T.f_nm(mu, m)), atol=0.02)


def test_bad_arguments():
    with pytest.raises(ValueError, match="m: must be > 0"):
        T.f_nm([1.0], 0)
    with pytest.raises(ValueError, match="mu: every entry is zero"):
        T.n_opt([0.0, 0.0], 5)
    with pytest.raises(ValueError, match="mu: contains NaN"):
        T.f_nm([1.0, np.nan], 5)
    with pytest.raises(ValueError, match="mu: expected a 1-D"):
        T.f_nm(np.ones((2, 2)), 5)
    with pytest.raises(ValueError, match="n: must be <= 2"):
        T.f_nm([1.0, 0.5], 5, n=3)
    with pytest.raises(ValueError, match="w: is all zeros"):
        T.linear_rule_error([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="mu_hat: length 1 differs"):
        T.ml_error([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="name: unknown value 'x'"):
        T.example_mu("x", 3)
    with pytest.raises(TypeError, match="n_samples: expected an integer"):
        T.make_two_gaussians([1.0], 2.5)


# ------------------------------------------------------------------------------------------
# bounds, each against a computation written out step by step


def test_nn_margin_bound_hand_computation():
    # m = 10000, |F| = 1, N = 100, gamma = 1, delta = 0.05, R = 1, training error 0.02
    # d = (64 * 1 / 1)^1 = 64
    # d ln(34 e m / d) = 64 * ln(34 * 2.718281828 * 10000 / 64) = 64 * ln(14440.9) = 64 * 9.577818
    #                  = 612.980
    # log2(578 m) = log2(5780000) = 22.4627
    # first term = 612.980 * 22.46264 = 13769.16
    # ln(8 / (gamma delta)) = ln(160) = 5.07517
    # (|F| + 1) ln N = 2 ln 100 = 9.21034
    # sqrt(2 / 10000 * (13769.16 + 5.07517 + 9.21034)) = sqrt(2.756689) = 1.660328
    # bound = 0.02 + 1.660328 = 1.680328 (vacuous, as the thesis says worst-case bounds are)
    got = T.nn_margin_bound(10000, 1, 100, gamma=1.0, delta=0.05, train_error=0.02)
    assert got == pytest.approx(1.680328, rel=1e-6)
    # 34 e m = 924216 for m = 10000; d = 64^3 = 262144 is below it (finite bound);
    # with |F| = 4, d = 16777216 > 924216: the fat-shattering term is meaningless -> inf.
    assert math.isfinite(T.nn_margin_bound(10000, 3, 100, gamma=1.0))
    assert T.nn_margin_bound(10000, 4, 100, gamma=1.0) == math.inf
    # More features and a smaller margin both loosen it
    assert T.nn_margin_bound(10**6, 2, 100, gamma=1.0) < T.nn_margin_bound(10**6, 2, 100,
                                                                          gamma=0.9)
    with pytest.raises(ValueError, match=r"gamma: must be in \(0.0, 1.0\]"):
        T.nn_margin_bound(100, 1, 10, gamma=1.5)
    with pytest.raises(ValueError, match="n_selected: must be <= n_features"):
        T.nn_margin_bound(100, 11, 10, gamma=0.5)


def test_ng_complexity_hand_computation():
    m, f, r = 1000, 100, 5
    # theorem 1 (no selection), f_vc = f + 1 = 101:
    #   sqrt(101 / 1000 * (ln(1000 / 101) + 1)) = sqrt(0.101 * (2.292635 + 1)) = sqrt(0.332556)
    #   = 0.576677
    assert T.ng_complexity("none", m, f) == pytest.approx(0.576677, rel=1e-5)
    # with label noise 0.1: m' = (1 - 0.2)^2 * 1000 = 640 in the denominator only:
    #   sqrt(101 / 640 * 3.292635) = sqrt(0.519619) = 0.720846
    assert T.ng_complexity("none", m, f, noise=0.1) == pytest.approx(0.720846, rel=1e-5)
    # theorem 2, holdout 0.3, r_vc = 6:
    #   sqrt(6 / 700 * (ln(1000 / 6) + 1)) = sqrt(0.00857143 * 6.115996) = sqrt(0.0524228)
    #   = 0.228960;  sqrt(100 / 300) = 0.577350;  sum 0.806310
    assert T.ng_complexity("standard_wrap", m, f, r=r) == pytest.approx(0.806310, rel=1e-5)
    # theorem 3: 0.228960 + sqrt(5 / 700 * (ln(20) + 1)) + sqrt(ln(100) / 300)
    #   = 0.228960 + sqrt(0.00714286 * 3.995732) + sqrt(0.0153506)
    #   = 0.228960 + 0.168941 + 0.123898 = 0.521799
    assert T.ng_complexity("ordered_fs", m, f, r=r) == pytest.approx(0.521799, rel=1e-5)
    # theorem 7 with holdouts (0.5, 0.25, 0.25):
    #   sqrt(6 / 500 * 6.115996) + sqrt(5 / 250 * 3.995732) + sqrt(4.605170 / 250)
    #   = sqrt(0.0733920) + sqrt(0.0799146) + sqrt(0.0184207)
    #   = 0.270910 + 0.282692 + 0.135723 = 0.689324
    assert T.ng_complexity("ordered_fs2", m, f, r=r) == pytest.approx(0.689324, rel=1e-5)
    # ORDERED-FS's point: its term grows like log f, STANDARD-WRAP's like sqrt(f)
    big = 10**6
    assert (T.ng_complexity("ordered_fs", m, big, r=r)
            < T.ng_complexity("standard_wrap", m, big, r=r) / 10)
    assert T.ng_complexity("ordered_fs", m, f, r=0) == pytest.approx(
        math.sqrt(math.log(100) / 300), rel=1e-12)
    with pytest.raises(ValueError, match=r"noise: the label noise rate must be in \[0, 0.5\)"):
        T.ng_complexity("none", m, f, noise=0.5)
    with pytest.raises(ValueError, match="algorithm: unknown value 'wrap'"):
        T.ng_complexity("wrap", m, f)
    with pytest.raises(ValueError, match="r: the number of selected features is needed"):
        T.ng_complexity("ordered_fs", m, f)
    with pytest.raises(ValueError, match="holdouts: the three fractions must sum"):
        T.ng_complexity("ordered_fs2", m, f, r=2, holdouts=(0.5, 0.5, 0.5))


def test_vc_srm_hand_computation():
    # h = 3 (a linear rule on l = 2 features), N = 100, rho = 0.05:
    #   h (ln(2N/h) + 1) = 3 (ln(66.6667) + 1) = 3 * 5.199705 = 15.599114
    #   -ln(rho / 4) = -ln(0.0125) = 4.382027
    #   sqrt((15.599114 + 4.382027) / 100) = sqrt(0.1998114) = 0.447003
    assert T.vc_confidence(3, 100) == pytest.approx(0.447003, rel=1e-5)
    # SRM over l = 1, 2, 3 with training errors 0.30, 0.10, 0.09:
    #   penalties: h = 2: sqrt((2 (ln 100 + 1) + 4.382027) / 100) = sqrt(0.1559237) = 0.394872
    #              h = 3: 0.447003
    #              h = 4: sqrt((4 (ln 50 + 1) + 4.382027) / 100) = sqrt(0.2403012) = 0.490205
    #   bounds: 0.694872, 0.547003, 0.580205 -> l = 2
    res = T.srm_n_features([0.30, 0.10, 0.09], 100)
    assert res.n_features == 2
    np.testing.assert_allclose(res.penalties, [0.394872, 0.447003, 0.490205], rtol=1e-5)
    np.testing.assert_allclose(res.bounds, [0.694872, 0.547003, 0.580205], rtol=1e-5)
    assert "n_features=2" in repr(res)
    with pytest.raises(ValueError, match="train_errors: must be error rates"):
        T.srm_n_features([0.1, 1.5], 100)
    with pytest.raises(ValueError, match="vc_dims: length 1 differs"):
        T.srm_n_features([0.1, 0.2], 100, vc_dims=[3])
    with pytest.raises(ValueError, match="vc_dim: every VC dimension must be finite and > 0"):
        T.vc_confidence(0, 100)


def test_vc_terms_past_the_sauer_range():
    """Sauer's h (ln(n / h) + 1) bounds the log of the number of labellings of n points only
    for h < n, and all 2^n labellings bound it always: the terms use the smaller, so they are
    finite and never fall as the class grows (vc_confidence(1000, 10) was NaN, SRM chose 50
    features for 10 samples, ng_complexity raised 'math domain error')."""
    n = 10
    # hand computation: h = 1000 >= 2N = 20, so 2N ln 2 = 13.862944; -ln(0.0125) = 4.382027;
    # sqrt((13.862944 + 4.382027) / 10) = 1.350739
    assert T.vc_confidence(1000, n) == pytest.approx(1.350739, rel=1e-6)
    # h = 5: Sauer 5 (ln 4 + 1) = 11.931472 < 13.862944, so the formula as written
    assert T.vc_confidence(5, n) == pytest.approx(math.sqrt((11.931472 + 4.382027) / 10),
                                                  rel=1e-6)
    h = np.arange(1, 200, dtype=float)
    pen = T.vc_confidence(h, n)
    assert np.all(np.isfinite(pen)) and np.all(np.diff(pen) >= 0)
    exact = np.array([math.log(sum(math.comb(2 * n, i) for i in range(int(v) + 1)))
                      for v in h])  # the exact Sauer-Shelah sum, which both bound from above
    assert np.all(pen ** 2 * n + math.log(0.0125) >= exact - 1e-9)
    choice = T.srm_n_features(np.zeros(50), n)
    assert choice.n_features == 1 and np.all(np.diff(choice.penalties) >= 0)
    # Ng's VC term: vc = f + 1 = 101 > m = 10 samples: m ln 2 over m
    assert T.ng_complexity("none", n, 100) == pytest.approx(math.sqrt(math.log(2.0)), rel=1e-12)
    grow = [T.ng_complexity("none", n, f) for f in range(1, 60)]
    assert np.all(np.diff(grow) >= 0)


def test_extreme_scales_of_w_and_mu():
    # the rule sign(w . x) does not change when w is scaled: ||w|| of 1e200 overflowed (error
    # 1/2) and of 1e-170 squared to zero ("w: is all zeros")
    want = T.linear_rule_error([1.0, 1.0], [1.0, 1.0])
    assert want == pytest.approx(0.5 * math.erfc(math.sqrt(2.0) / math.sqrt(2.0)), rel=1e-12)
    for s in (1e200, 1e-170, 1e-300):
        assert T.linear_rule_error([s, s], [1.0, 1.0]) == pytest.approx(want, rel=1e-12)
    assert T.linear_rule_error([1e200, 0.0], [1.0, 1.0], b=1e200) == pytest.approx(
        T.linear_rule_error([1.0, 0.0], [1.0, 1.0], b=1.0), rel=1e-12)
    # f(n, m) = S_n / sqrt(n / m + S_n) by the formula in exact rational arithmetic's stead:
    # at scale c the best n is that of the formula evaluated with Python's big floats (logs)
    mu = 1.0 / np.arange(1, 30)
    for c in (1e200, 1e-200, 1.0):
        s = np.cumsum(np.sort(mu ** 2)[::-1])
        ns = np.arange(1, mu.size + 1)
        log_f = [2 * math.log(c) + math.log(s[i]) - 0.5 * math.log(
            ns[i] / 100.0 + math.exp(2 * math.log(c) + math.log(s[i]))) if c < 1e100 else
            math.log(c) + 0.5 * math.log(s[i]) for i in range(mu.size)]
        assert T.n_opt(mu * c, 100) == int(np.argmax(log_f)) + 1
    assert T.n_opt(mu * 1e200, 100) == mu.size and T.n_opt(mu * 1e-200, 100) == 1
    np.testing.assert_allclose(T.f_nm(mu * 1e200, 100), 1e200 * np.sqrt(np.cumsum(mu ** 2)),
                               rtol=1e-12)


def test_ml_error_of_a_zero_estimate_is_one_half():
    """The n strongest coordinates of mu_hat all 0: sign(0) is a constant rule (error 1/2, as
    expected_ml_error counts it); the error named an argument 'w' the call does not have."""
    assert T.ml_error([0.0, 0.0, 1.0], [1.0, 1.0, 0.0], 2) == 0.5
    assert T.ml_error([0.0, 0.0, 1.0], [1.0, 1.0, 0.0]) == pytest.approx(0.5)


def test_ng_complexity_takes_the_holdouts_as_an_array():
    a = T.ng_complexity("ordered_fs2", 100, 10, r=2, holdouts=np.array([0.5, 0.25, 0.25]))
    assert a == T.ng_complexity("ordered_fs2", 100, 10, r=2, holdouts=(0.5, 0.25, 0.25))
