"""fastfs.separability (SPEC 5.3, 5.4) against the textbook formulas in reference.py, closed
forms for special cases, and the errors for singular covariances."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

import fastfs
import reference as ref
from fastfs import separability as sep

TIGHT = dict(rtol=1e-10, atol=1e-12)


@pytest.fixture(scope="module")
def three_gaussians():
    """Three classes of unequal size with different means and covariances, 4 features."""
    gen = np.random.default_rng(21)
    sizes = [40, 25, 35]
    X = np.vstack([
        gen.standard_normal((n, 4)) @ gen.uniform(-1, 1, (4, 4)) + gen.uniform(-2, 2, 4) + 3.0
        for n in sizes
    ])
    y = np.repeat(["a", "b", "c"], sizes)
    return X, y


@pytest.fixture(scope="module")
def two_gaussians():
    gen = np.random.default_rng(22)
    X = np.vstack([gen.standard_normal((30, 3)), gen.standard_normal((45, 3)) * 1.5 + 1.0])
    return X, np.repeat([0, 1], [30, 45])


def test_scatter_matrices_match_reference(three_gaussians):
    X, y = three_gaussians
    s = sep.scatter_matrices(X, y)
    Sw, Sb, Sm = ref.scatter_matrices(X, y)
    assert_allclose(s.within, Sw, **TIGHT)
    assert_allclose(s.between, Sb, **TIGHT)
    # S_m computed independently in the reference: S_m = S_w + S_b holds.
    assert_allclose(s.mixture, Sm, **TIGHT)
    assert_allclose(s.mixture, np.cov(X.T, bias=True), **TIGHT)
    assert_allclose(s.priors, [0.4, 0.25, 0.35], **TIGHT)
    assert list(s.classes) == ["a", "b", "c"]
    assert s.means.shape == (3, 4)
    assert "ScatterMatrices(priors=" in repr(s)


def test_j1_j2_j3_match_reference(three_gaussians):
    X, y = three_gaussians
    assert sep.j1(X, y) == pytest.approx(ref.j1(X, y), rel=1e-10)
    assert sep.j2(X, y) == pytest.approx(ref.j2(X, y), rel=1e-10)
    assert sep.j3(X, y) == pytest.approx(ref.j3(X, y), rel=1e-10)
    assert sep.j1(X, y) >= 1 and sep.j2(X, y) >= 1 and sep.j3(X, y) >= X.shape[1]


def test_j3_of_one_feature_two_equal_classes_is_one_plus_half_fisher(rng):
    # d = 1, P_1 = P_2 = 1/2: S_b / S_w = (mu_1 - mu_2)^2 / (2 (s_1^2 + s_2^2)).
    X = rng.standard_normal((40, 1))
    X[20:] += 1.3
    y = np.repeat([0, 1], 20)
    fisher = sep.fisher_ratio(X, y).scores[0]
    assert sep.j3(X, y) == pytest.approx(1 + fisher / 2, rel=1e-12)
    assert sep.j2(X, y) == pytest.approx(1 + fisher / 2, rel=1e-12)


def test_fisher_ratio_is_the_filter(three_gaussians):
    X, y = three_gaussians
    assert sep.fisher_ratio is fastfs.filters.fisher_ratio
    assert_allclose(sep.fisher_ratio(X, y).scores, ref.fisher_ratio(X, y), rtol=1e-12)


def test_divergence_matches_reference(three_gaussians):
    X, y = three_gaussians
    avg, D = ref.divergence(X, y)
    assert sep.divergence(X, y) == pytest.approx(avg, rel=1e-10)
    got = sep.divergence(X, y, pairwise=True)
    assert_allclose(got, D, **TIGHT)
    assert_allclose(got, got.T)
    assert (np.diag(got) == 0).all() and (got[~np.eye(3, dtype=bool)] > 0).all()


def test_bhattacharyya_matches_reference(three_gaussians):
    X, y = three_gaussians
    avg, B = ref.bhattacharyya(X, y)
    assert sep.bhattacharyya(X, y) == pytest.approx(avg, rel=1e-10)
    assert_allclose(sep.bhattacharyya(X, y, pairwise=True), B, **TIGHT)


def test_two_classes(two_gaussians):
    X, y = two_gaussians
    D = sep.divergence(X, y, pairwise=True)
    P = np.array([30, 45]) / 75
    assert sep.divergence(X, y) == pytest.approx(2 * P[0] * P[1] * D[0, 1], rel=1e-12)
    # For two classes the Bhattacharyya "average" is the distance itself.
    assert sep.bhattacharyya(X, y) == pytest.approx(
        sep.bhattacharyya(X, y, pairwise=True)[0, 1], rel=1e-12)


def test_equal_covariances_reduce_to_mahalanobis(rng):
    # Same covariance in both classes: d_12 = Delta^T S^-1 Delta and B_12 = d_12 / 8.
    Z = rng.standard_normal((50, 2))
    Z = (Z - Z.mean(axis=0)) @ np.array([[1.0, 0.3], [0.0, 0.8]])
    X = np.vstack([Z, Z + [1.0, -2.0]])
    y = np.repeat([0, 1], 50)
    S = Z.T @ Z / 50
    dm = np.array([1.0, -2.0])
    maha = dm @ np.linalg.solve(S, dm)
    assert sep.divergence(X, y, pairwise=True)[0, 1] == pytest.approx(maha, rel=1e-10)
    assert sep.bhattacharyya(X, y) == pytest.approx(maha / 8, rel=1e-10)


def test_dataframe_and_string_labels(three_gaussians):
    pd = pytest.importorskip("pandas")
    X, y = three_gaussians
    df = pd.DataFrame(X, columns=list("pqrs"))
    s = sep.scatter_matrices(df, y)
    assert list(s.feature_names) == list("pqrs")
    assert sep.j3(df, pd.Series(y)) == pytest.approx(sep.j3(X, y), rel=1e-12)


@pytest.mark.parametrize("factor", [1e8, 1e-8, 1e-7, 1e150])
def test_scale_free_criteria_do_not_depend_on_a_features_units(three_gaussians, factor):
    """J2, J3, the divergence and the Bhattacharyya distance are unchanged when one feature is
    measured in other units, in the functions and as search criteria (the same subset scores
    and the same choice): a feature 1e8 times the others used to make S_w singular (-inf, then
    no candidate), one 1e-7 times moved J2 in its third digit."""
    X, y = three_gaussians
    Xs = X.copy()
    Xs[:, 1] *= factor
    for func in (sep.j2, sep.j3, sep.divergence, sep.bhattacharyya):
        assert func(Xs, y) == pytest.approx(func(X, y), rel=1e-9), func.__name__
    assert sep.j2(Xs, y) == pytest.approx(ref.j2(X, y), rel=1e-9)
    assert sep.j3(Xs, y) == pytest.approx(ref.j3(X, y), rel=1e-9)
    for criterion in ("j2", "j3", "divergence", "bhattacharyya"):
        want = fastfs.criteria.evaluate(X, y, [0, 1, 2, 3], criterion)
        got = fastfs.criteria.evaluate(Xs, y, [0, 1, 2, 3], criterion)
        assert got == pytest.approx(want, rel=1e-9), criterion
        assert (fastfs.sfs(Xs, y, 3, criterion=criterion).selected.tolist()
                == fastfs.sfs(X, y, 3, criterion=criterion).selected.tolist()), criterion
    # J1 is not scale-free: the criterion still reads the unscaled traces
    assert fastfs.criteria.evaluate(Xs, y, [0, 1], "j1") == pytest.approx(sep.j1(Xs[:, :2], y),
                                                                          rel=1e-9)


@pytest.mark.parametrize("factors", [(1e100, 1e-100), (1e160, 1.0), (1.0, 1e-160)])
def test_scale_free_measures_with_features_at_opposite_extremes(three_gaussians, factors):
    """One power of two for all of X left the other columns' products to underflow: X times
    (1e100, 1e-100) made an invertible S_w singular, (1e160, 1) moved J2 by 2e-3."""
    X, y = three_gaussians
    Xs = X.copy()
    Xs[:, 0] *= factors[0]
    Xs[:, 1] *= factors[1]
    for func in (sep.j2, sep.j3, sep.divergence, sep.bhattacharyya):
        assert func(Xs, y) == pytest.approx(func(X, y), rel=1e-9), func.__name__
    assert sep.j3(Xs, y) == pytest.approx(ref.j3(X, y), rel=1e-9)


def test_nearly_collinear_features_warn(rng):
    """Two features equal to 1e-7: S_w has a condition number near 1e14, and J3 formed from
    it was 1% off (3.7370 for 3.6937), silently."""
    n = 500
    a = rng.standard_normal(n)
    y = rng.integers(0, 3, n)
    X = np.c_[a, a + 1e-7 * rng.standard_normal(n), rng.standard_normal(n)]
    for func in (sep.j2, sep.j3, sep.divergence, sep.bhattacharyya):
        with pytest.warns(RuntimeWarning, match=r"ill-conditioned \(condition number"):
            func(X, y)
    sep.j3(X[:, [0, 2]], y)  # well-conditioned: no warning


def test_a_real_target_is_refused(rng):
    X = rng.standard_normal((60, 3))
    y = np.round(X[:, 0], 1)
    for func in (sep.scatter_matrices, sep.j1, sep.j2, sep.j3, sep.divergence,
                 sep.bhattacharyya):
        with pytest.raises(ValueError, match=r"^y: separability\.\w+ needs class labels, got "
                           "continuous values"):
            func(X, y)


def test_j1_criterion_of_a_perfectly_separating_feature_is_infinite(rng):
    """tr(S_w) = 0 with differing class means is the limit J1 = +inf; it scored -inf, so the
    best feature ranked last and sfs(criterion='j1') began with noise."""
    y = np.repeat([0, 1], 5)
    X = np.c_[rng.standard_normal(10), y * 1.0, np.ones(10)]
    scores = fastfs.rank_features(X, y, criterion="j1").scores
    assert scores[1] == np.inf
    assert scores[2] == -np.inf  # constant overall: undefined
    assert np.isfinite(scores[0])
    assert fastfs.sfs(X, y, 1, criterion="j1").selected.tolist() == [1]


# ------------------------------------------------------------------------------------------
# singular matrices, bad input


def test_singular_within_scatter_is_a_clear_error(three_gaussians):
    X, y = three_gaussians
    X = np.column_stack([X, X[:, 0] - X[:, 1]])  # linearly dependent feature
    for func in (sep.j2, sep.j3):
        with pytest.raises(ValueError, match=r"X: the within-class scatter S_w is singular \(rank 4 "
                                             r"of 5 features\).*ridge.*fewer features"):
            func(X, y)
        value = func(X, y, ridge=1e-3)
        assert np.isfinite(value) and value > 1


def test_singular_class_covariance_is_a_clear_error(rng):
    X = rng.standard_normal((14, 5))
    y = np.array(["big"] * 10 + ["small"] * 4)  # 4 samples cannot span 5 dimensions
    for func in (sep.divergence, sep.bhattacharyya):
        with pytest.raises(ValueError, match=r"covariance of class 'small' \(4 samples\) is "
                                             r"singular.*ridge"):
            func(X, y)
        assert np.isfinite(func(X, y, ridge=0.1))


def test_more_features_than_samples_is_refused_before_any_scatter_matrix(rng):
    # m - k samples cannot span S_w's d dimensions (nor n_c - 1 a class covariance's): the
    # error comes from the shapes, with the bound, not after an O(d^3) eigendecomposition
    X = rng.standard_normal((12, 40))
    y = np.repeat([0, 1, 2], 4)
    for func in (sep.j2, sep.j3):
        with pytest.raises(ValueError, match=r"S_w is singular \(rank at most 9 = 12 samples - "
                                             r"3 classes, of 40 features\).*ridge"):
            func(X, y)
        assert np.isfinite(func(X, y, ridge=0.1))
    for func in (sep.divergence, sep.bhattacharyya):
        with pytest.raises(ValueError, match=r"X: the covariance of class 0 \(4 samples\) is singular "
                                             r"\(rank at most 3 of 40 features\)"):
            func(X, y)
    # at the bound itself the rank test decides (11 samples in 2 classes span 9 of 9 dims)
    X2 = rng.standard_normal((11, 9))
    assert np.isfinite(sep.j3(X2, np.r_[np.zeros(5), np.ones(6)]))


def test_j1_zero_within_scatter(rng):
    X = np.repeat([[1.0, 2.0], [3.0, 5.0]], 5, axis=0)
    with pytest.raises(ValueError, match=r"S_w is zero.*J1"):
        sep.j1(X, np.repeat([0, 1], 5))


@pytest.mark.parametrize("func", [sep.scatter_matrices, sep.j1, sep.j2, sep.j3, sep.divergence,
                                  sep.bhattacharyya])
def test_bad_input(func, small_problem):
    X, y = small_problem
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"X.*NaN"):
        func(bad, y)
    with pytest.raises(ValueError, match=r"y.*2 classes"):
        func(X, np.zeros(len(y)))
    with pytest.raises(TypeError, match=r"X: sparse"):
        func(sp.csr_matrix(X), y)


@pytest.mark.parametrize("func", [sep.j2, sep.j3, sep.divergence, sep.bhattacharyya])
def test_ridge_must_be_non_negative(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"ridge: must be >= 0"):
        func(X, y, ridge=-1.0)


def test_memory_guard(restore_max_memory, small_problem):
    X, y = small_problem
    restore_max_memory.max_memory = 64
    with pytest.raises(MemoryError, match="scatter_matrices"):
        sep.scatter_matrices(X, y)


def test_j2_beyond_float64_warns_with_its_logarithm():
    rng = np.random.default_rng(0)
    k, n = 60, 60
    means = rng.normal(size=(k, n)) * 1e4
    X = np.vstack([means[c] + rng.normal(size=(5, n)) for c in range(k)])
    y = np.repeat(np.arange(k), 5)
    # ln J2 = ln det(S_m) - ln det(S_w), S with divisor n (NumPy, independently)
    centred = np.vstack([X[y == c] - X[y == c].mean(axis=0) for c in range(k)])
    S_w = centred.T @ centred / X.shape[0]
    S_m = np.cov(X.T, bias=True)
    want = np.linalg.slogdet(S_m)[1] - np.linalg.slogdet(S_w)[1]
    assert want > 710
    with pytest.warns(RuntimeWarning, match=r"j2: J2 = exp\((\d+\.?\d*)\) is beyond float64") as rec:
        assert fastfs.separability.j2(X, y) == np.inf
    got = float(re.search(r"exp\(([\d.e+]+)\)", str(rec[0].message)).group(1))
    assert got == pytest.approx(want, rel=1e-5)


def test_j1_needs_no_feature_by_feature_matrix(rng):
    # J1 reads only the traces: under a memory limit far below one d x d matrix it still
    # runs, as function and as a search criterion, and equals the reference's traces
    X = rng.standard_normal((40, 3000))
    X[:, :3] += np.repeat([0.0, 2.0], 20)[:, None]
    y = np.repeat([0, 1], 20)
    Sw_trace = sum(np.var(X[y == c], axis=0).sum() / 2 for c in (0, 1))
    Sm_trace = np.var(X, axis=0).sum()
    old = fastfs.config.max_memory
    try:
        fastfs.config.max_memory = 8 * 3000 * 3000 // 4
        assert_allclose(sep.j1(X, y), Sm_trace / Sw_trace, rtol=1e-12)
        res = fastfs.sfs(X, y, 3, criterion="j1")
        per_feature = [ref.j1(X[:, [j]], y) for j in range(6)]
        assert_allclose([fastfs.criteria.evaluate(X, y, [j], "j1") for j in range(6)],
                        per_feature, rtol=1e-10)
        assert_allclose(fastfs.criteria.evaluate(X, y, list(range(3000)), "j1"),
                        Sm_trace / Sw_trace, rtol=1e-10)
        # the first step is the single feature of largest J1 (per-column traces in NumPy)
        within = sum(np.var(X[y == c], axis=0) / 2 for c in (0, 1))
        assert res.selected[0] == int(np.argmax(np.var(X, axis=0) / within))
        with pytest.raises(MemoryError):
            sep.j3(X[:, :2000], y, ridge=1.0)  # the d x d measures are still guarded
    finally:
        fastfs.config.max_memory = old


@pytest.mark.parametrize("name", ["j2", "j3", "divergence", "bhattacharyya"])
def test_evaluate_builds_the_state_of_the_subset_only(rng, name):
    # one J(S) of three features out of 8000: the scatter state was built for all 8000
    # (c + 3 matrices of 8000 x 8000, 2 GB); under a limit far below one such matrix it now
    # equals the separability function on the three columns
    X = rng.standard_normal((50, 8000))
    y = np.arange(50) % 2
    X[y == 1, 1] += 1.5
    old = fastfs.config.max_memory
    try:
        fastfs.config.max_memory = 8 * 8000 * 8000 // 8
        got = fastfs.criteria.evaluate(X, y, [0, 1, 2], name)
    finally:
        fastfs.config.max_memory = old
    assert_allclose(got, getattr(sep, name)(X[:, [0, 1, 2]], y), rtol=1e-10)
