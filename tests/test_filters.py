"""fastfs.filters (SPEC 6) against scipy.stats, scikit-learn and the NumPy references, plus the
constant-feature rule, sparse input, bad input (SPEC 1.2) and the SelectKBest protocol."""

from __future__ import annotations

import pickle
from fractions import Fraction
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from sklearn.feature_selection import SelectKBest, f_classif, mutual_info_classif, r_regression
from sklearn.feature_selection import chi2 as sk_chi2
from sklearn.metrics import mutual_info_score, roc_auc_score

import fastfs
import reference as ref
from fastfs import filters

RTOL = dict(rtol=1e-10, atol=0)


@pytest.fixture(scope="module")
def two_class():
    """Two classes of unequal size, some informative features, float64."""
    gen = np.random.default_rng(7)
    y = np.repeat(["neg", "pos"], [37, 53])
    X = gen.standard_normal((90, 8)) * gen.uniform(0.5, 3.0, 8) + gen.uniform(-5, 5, 8)
    X[y == "pos", :3] += [1.0, -0.7, 0.3]
    return X, y


@pytest.fixture(scope="module")
def three_class():
    gen = np.random.default_rng(8)
    y = gen.integers(0, 3, 120)
    X = gen.standard_normal((120, 7)) + 10.0
    X[:, 0] += y
    X[:, 1] -= 0.5 * (y == 2)
    return X, y


@pytest.fixture(scope="module")
def discrete():
    """Integer-valued features with 2 to 6 distinct values, 3 classes."""
    gen = np.random.default_rng(9)
    y = gen.integers(0, 3, 150)
    X = np.column_stack([gen.integers(0, v, 150) for v in (2, 3, 4, 5, 6, 2)]).astype(float)
    X[:, 0] = (X[:, 0] + (y == 1)) % 2
    return X, y


def _split(X, y):
    classes = np.unique(y)
    return X[y == classes[1]], X[y == classes[0]]


# ------------------------------------------------------------------------------------------
# agreement with scipy.stats and scikit-learn (1e-10 relative)


@pytest.mark.parametrize("equal_var", [True, False])
def test_t_test_matches_scipy(two_class, equal_var):
    X, y = two_class
    res = filters.t_test(X, y, equal_var=equal_var)
    pos, neg = _split(X, y)
    want = stats.ttest_ind(pos, neg, equal_var=equal_var)
    assert_allclose(res.scores, want.statistic, **RTOL)
    assert_allclose(res.pvalues, want.pvalue, **RTOL)


def test_slides_worked_t_test_example():
    # The slides' two classes of ten values: pooled q = 4.25 with 2N - 2 = 18 degrees of
    # freedom, outside the 5% acceptance interval [-2.10, 2.10], so the feature is selected.
    w1 = [3.5, 3.7, 3.9, 4.1, 3.4, 3.5, 4.1, 3.8, 3.6, 3.7]
    w2 = [3.2, 3.6, 3.1, 3.4, 3.0, 3.4, 2.8, 3.1, 3.3, 3.6]
    X = np.array(w1 + w2)[:, None]
    y = np.repeat([1, 0], 10)  # omega_1 is the positive class
    res = filters.t_test(X, y)
    assert round(float(res.scores[0]), 2) == 4.25
    bound = stats.t.ppf(0.975, 18)
    assert round(bound, 2) == 2.10
    assert abs(res.scores[0]) > bound
    assert res.pvalues[0] < 0.05
    # The slides' own arithmetic: means 3.73 / 3.25, variances 0.0601 / 0.0672.
    s_z = np.sqrt((np.var(w1, ddof=1) + np.var(w2, ddof=1)) / 2)
    assert res.scores[0] == pytest.approx((np.mean(w1) - np.mean(w2)) / (s_z * np.sqrt(2 / 10)),
                                          rel=1e-12)
    # Known-variance case of the same slide: q = (mean1 - mean2) / (sigma sqrt(2/N)), N(0, 1).
    z = filters.z_test(X, y, sigma=0.25)
    assert z.scores[0] == pytest.approx(0.48 / (0.25 * np.sqrt(0.2)), rel=1e-12)


def test_anova_f_matches_f_classif(three_class):
    X, y = three_class
    res = filters.anova_f(X, y)
    f, p = f_classif(X, y)
    assert_allclose(res.scores, f, **RTOL)
    assert_allclose(res.pvalues, p, **RTOL)


def test_anova_f_two_classes_is_t_squared(two_class):
    X, y = two_class
    assert_allclose(filters.anova_f(X, y).scores, filters.t_test(X, y).scores ** 2, rtol=1e-12)
    assert_allclose(filters.anova_f(X, y).pvalues, filters.t_test(X, y).pvalues, rtol=1e-9)


def test_chi2_matches_chi2_contingency(discrete):
    X, y = discrete
    res = filters.chi2(X, y)
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        table = np.array([[np.sum((X[:, j] == v) & (y == c)) for c in np.unique(y)]
                          for v in values])
        want = stats.chi2_contingency(table, correction=False)
        assert res.scores[j] == pytest.approx(want.statistic, rel=1e-10)
        assert res.pvalues[j] == pytest.approx(want.pvalue, rel=1e-10)


def test_chi2_counts_matches_sklearn(discrete):
    X, y = discrete
    X = X + (X[:, :1] > 0)  # no all-zero column
    res = filters.chi2(X, y, kind="counts")
    want = sk_chi2(X, y)
    assert_allclose(res.scores, want[0], **RTOL)
    assert_allclose(res.pvalues, want[1], **RTOL)


def test_auc_matches_roc_auc_score_with_ties(rng):
    y = rng.integers(0, 2, 80)
    X = np.column_stack([rng.standard_normal(80), rng.integers(0, 4, 80), rng.integers(0, 2, 80),
                         y + rng.standard_normal(80), -y * 1.0])
    res = filters.auc(X, y)
    want = [roc_auc_score(y, X[:, j]) for j in range(X.shape[1])]
    assert_allclose(res.scores, want, **RTOL)
    assert res.scores[-1] == 0.0  # separates perfectly the other way


def test_auc_pvalues_match_mannwhitneyu(rng):
    y = np.repeat(["a", "b"], [30, 45])
    X = np.column_stack([rng.standard_normal(75), rng.integers(0, 5, 75),
                         (y == "b") + rng.standard_normal(75)])
    res = filters.auc(X, y)
    pos, neg = _split(X, y)
    want = stats.mannwhitneyu(pos, neg, method="asymptotic", use_continuity=True)
    assert_allclose(res.pvalues, want.pvalue, **RTOL)


def test_pearson_matches_r_regression_and_pearsonr(rng):
    X = rng.standard_normal((60, 6)) * 4 + 100.0
    yv = X[:, 0] * 0.3 - X[:, 2] + rng.standard_normal(60) * 5
    res = filters.pearson(X, yv)
    assert_allclose(res.scores, r_regression(X, yv), **RTOL)
    want = [stats.pearsonr(X[:, j], yv).pvalue for j in range(X.shape[1])]
    assert_allclose(res.pvalues, want, rtol=1e-9)
    bare = filters.pearson(X, yv, pvalues=False)
    assert_array_equal(bare.scores, res.scores)
    assert bare.pvalues is None


def test_mutual_info_plugin_matches_sklearn(discrete):
    X, y = discrete
    res = filters.mutual_info(X, y, discrete_features=True, alpha=0.0)
    want = [mutual_info_score(X[:, j], y) for j in range(X.shape[1])]
    assert_allclose(res.scores, want, rtol=1e-10, atol=1e-15)
    assert_allclose(res.scores, mutual_info_classif(X, y, discrete_features=True), rtol=1e-10,
                    atol=1e-15)
    assert res.pvalues is None


# ------------------------------------------------------------------------------------------
# statistics without a scipy / scikit-learn counterpart: the NumPy references


def test_f_score_s2n_fisher_z_match_reference(two_class):
    X, y = two_class
    assert_allclose(filters.f_score(X, y).scores, ref.f_score(X, y), rtol=1e-12)
    assert_allclose(filters.s2n(X, y).scores, ref.s2n(X, y), rtol=1e-12)
    assert_allclose(filters.fisher_ratio(X, y).scores, ref.fisher_ratio(X, y), rtol=1e-12)
    sigma = np.linspace(0.5, 2.0, X.shape[1])
    z, p = ref.z_test(X, y, sigma)
    res = filters.z_test(X, y, sigma=sigma)
    assert_allclose(res.scores, z, rtol=1e-12)
    assert_allclose(res.pvalues, p, rtol=1e-10)
    strided = filters.z_test(X, y, sigma=np.repeat(sigma, 2)[::2])
    assert_allclose(strided.scores, z, rtol=1e-12)
    with pytest.raises(TypeError, match="sigma: complex values are not supported"):
        filters.z_test(X, y, sigma=sigma + 0j)


def test_fisher_ratio_multiclass_sums_pairs(three_class):
    X, y = three_class
    assert_allclose(filters.fisher_ratio(X, y).scores, ref.fisher_ratio(X, y), rtol=1e-12)


@pytest.mark.parametrize("binning", ["quantile", "uniform", "median"])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_mutual_info_binned_matches_reference(three_class, binning, alpha):
    X, y = three_class
    X = X.copy()
    X[:, 3] = np.round(X[:, 3], 1)  # ties, some on the quantile edges
    res = filters.mutual_info(X, y, bins=5, binning=binning, alpha=alpha)
    want = [ref.mutual_info_counts(ref.bin_codes(X[:, j], 5, binning), y, alpha)
            for j in range(X.shape[1])]
    assert_allclose(res.scores, want, rtol=1e-10, atol=1e-15)


def test_mutual_info_zero_correction_shrinks(discrete):
    X, y = discrete
    plain = filters.mutual_info(X, y, discrete_features=True, alpha=0.0).scores
    smoothed = filters.mutual_info(X, y, discrete_features=True).scores
    assert_allclose(smoothed, [ref.mutual_info_counts(X[:, j], y, 0.5)
                               for j in range(X.shape[1])], rtol=1e-10)
    assert (smoothed < plain).all()


def test_informative_features_rank_first(three_class):
    X, y = three_class
    for func in (filters.anova_f, filters.fisher_ratio, filters.mutual_info):
        assert np.argmax(func(X, y).scores) == 0


# ------------------------------------------------------------------------------------------
# constant features and perfect separation


TWO_CLASS = [filters.f_score, filters.t_test, filters.s2n, filters.auc,
             lambda X, y: filters.t_test(X, y, equal_var=False),
             lambda X, y: filters.z_test(X, y, sigma=1.0)]
ANY_CLASS = [filters.anova_f, filters.fisher_ratio, filters.chi2, filters.mutual_info,
             lambda X, y: filters.chi2(X, y, kind="counts")]


@pytest.mark.parametrize("func", TWO_CLASS + ANY_CLASS)
def test_constant_feature_scores_zero_with_pvalue_one(func, rng):
    y = np.repeat([0, 1], 20)
    X = np.column_stack([rng.uniform(1, 2, 40), np.full(40, 3.7), rng.uniform(1, 2, 40)])
    if func is filters.chi2:  # columns 0 and 2 are continuous: chi2 says so
        with pytest.warns(filters.DiscretenessWarning, match=r"\(0, 2\)"):
            res = func(X, y)
    else:
        res = func(X, y)
    assert np.isfinite(res.scores).all()
    neutral = 0.5 if func is filters.auc else 0.0
    assert res.scores[1] == neutral
    if res.pvalues is not None:
        assert res.pvalues[1] == 1.0
        assert np.isfinite(res.pvalues).all()


def test_pearson_constant_feature_and_constant_y(rng):
    X = np.column_stack([rng.standard_normal(30), np.full(30, -2.0)])
    res = filters.pearson(X, rng.standard_normal(30))
    assert res.scores[1] == 0.0 and res.pvalues[1] == 1.0
    with pytest.raises(ValueError, match=r"y.*constant"):
        filters.pearson(X, np.ones(30))


@pytest.mark.parametrize("func", [filters.anova_f, filters.t_test, filters.f_score,
                                  filters.s2n, filters.fisher_ratio])
def test_constant_within_classes_separates_perfectly(func):
    y = np.repeat([0, 1], 5)
    X = np.column_stack([np.repeat([2.0, 5.0], 5), np.arange(10.0)])
    res = func(X, y)
    assert res.scores[0] == np.inf
    if res.pvalues is not None:
        assert res.pvalues[0] == 0.0


# ------------------------------------------------------------------------------------------
# sparse input


SPARSE_OK = {
    "pearson": lambda X, y: filters.pearson(X, y.astype(float)),
    "anova_f": filters.anova_f,
    "f_score": filters.f_score,
    "t_test": filters.t_test,
    "welch": lambda X, y: filters.t_test(X, y, equal_var=False),
    "z_test": lambda X, y: filters.z_test(X, y, sigma=2.0),
    "s2n": filters.s2n,
    "fisher_ratio": filters.fisher_ratio,
    "chi2": filters.chi2,
    "chi2_counts": lambda X, y: filters.chi2(X, y, kind="counts"),
    "mutual_info": filters.mutual_info,
}


@pytest.fixture(scope="module")
def sparse_counts():
    gen = np.random.default_rng(11)
    y = np.repeat([0, 1], [40, 50])
    dense = gen.poisson(1.5, (90, 12)) * (gen.random((90, 12)) < 0.3)
    dense[y == 1, 0] += gen.poisson(2.0, 50)
    dense[:, 5] = 0  # an all-zero column
    dense[:, 6] = 1  # a full constant column
    return dense.astype(np.int64), y


@pytest.mark.parametrize("name", sorted(SPARSE_OK))
@pytest.mark.parametrize("fmt", ["csr", "csc", "csr_array"])
def test_sparse_equals_dense(name, fmt, sparse_counts):
    dense, y = sparse_counts
    func = SPARSE_OK[name]
    X = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "csr_array": sp.csr_array}[fmt](dense)
    got = func(X, y)
    want = (filters.mutual_info(dense, y, discrete_features=True) if name == "mutual_info"
            else func(dense.astype(float), y))
    assert_allclose(got.scores, want.scores, rtol=1e-10, atol=1e-12)
    if want.pvalues is not None:
        assert_allclose(got.pvalues, want.pvalues, rtol=1e-9, atol=1e-14)
    assert not sp.issparse(got.scores)


@pytest.mark.parametrize("offset", [1e6, 1e9, -3e12])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_keeps_the_spread_of_values_far_from_zero(offset, fmt):
    """Values sharing a large offset (stored sparse, with a few zeros in some columns): the
    per-class sums are taken about each class's first stored value, as the dense moments
    centre, so the spread keeps its digits. Reference: SciPy and scikit-learn on the dense
    array, whose results the dense path matches. Summing the raw values lost the within-class
    variance at these offsets: null features got t = inf and p = 0."""
    gen = np.random.default_rng(5)
    m, d = 120, 40
    y = np.repeat([0, 1], [55, 65])
    dense = offset + gen.standard_normal((m, d))
    dense[gen.random((m, d)) < 0.02] = 0.0  # a few implicit zeros
    dense[:, 3] = 0.0
    dense[gen.random(m) < 0.5, 3] = offset  # a column of zeros and offsets only
    X = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}[fmt](dense)
    t, p = stats.ttest_ind(dense[y == 1], dense[y == 0])
    got = filters.t_test(X, y)
    assert_allclose(got.scores, t, rtol=1e-7)
    assert_allclose(got.pvalues, p, rtol=1e-6)
    assert_allclose(got.scores, filters.t_test(dense, y).scores, rtol=1e-7)
    f, fp = f_classif(dense, y)
    assert_allclose(filters.anova_f(X, y).scores, f, rtol=1e-7)
    r = r_regression(dense, y.astype(float))
    assert_allclose(filters.pearson(X, y.astype(float)).scores, r, rtol=1e-7, atol=1e-12)
    for func in (filters.f_score, filters.s2n, filters.fisher_ratio):
        assert_allclose(func(X, y).scores, func(dense, y).scores, rtol=1e-7)


def test_sparse_chi2_counts_of_large_values(sparse_counts):
    """kind='counts' forms no square: counts above 1e154 give the dense answer (the sparse path
    used to refuse them because their sums of squares overflow), which is scikit-learn's chi2 of
    X / 1e200 times 1e200."""
    dense, y = sparse_counts
    # no all-zero column (scikit-learn's 0 / 0) and no constant one (scikit-learn's rounding
    # noise times 1e200; see test_chi2_counts_of_a_constant_column_is_zero_at_any_scale)
    X = np.delete(dense, [5, 6], axis=1).astype(float)
    big = X * 1e200
    want = sk_chi2(X, y)
    for Xs in (big, sp.csr_matrix(big), sp.csc_matrix(big)):
        res = filters.chi2(Xs, y, kind="counts")
        assert_allclose(res.scores, want[0] * 1e200, rtol=1e-9)
        assert_allclose(res.pvalues, filters.chi2(big, y, kind="counts").pvalues, rtol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200])
def test_chi2_counts_of_a_constant_column_is_zero_at_any_scale(sparse_counts, scale):
    """A constant column of counts is spread over the classes exactly as the class sizes are:
    chi2 0 and p-value 1 (scikit-learn: 0 up to rounding, p 1) at any scale. At counts of 1e200
    the rounding of its class shares, times its total, gave about 1e170 with p = 0."""
    dense, y = sparse_counts
    X = dense.astype(float)
    want = sk_chi2(X, y)
    assert want[0][6] < 1e-12 and want[1][6] > 1.0 - 1e-12
    others = np.setdiff1d(np.arange(X.shape[1]), [5, 6])
    big = X * scale
    for Xs in (big, sp.csr_matrix(big), sp.csc_matrix(big)):
        res = filters.chi2(Xs, y, kind="counts")
        assert res.scores[6] == 0.0 and res.pvalues[6] == 1.0
        assert_allclose(res.scores[others], want[0][others] * scale, rtol=1e-9)


def test_sparse_explicit_zeros_and_duplicates_are_handled(sparse_counts):
    dense, y = sparse_counts
    X = sp.csc_matrix(dense.astype(float))
    # Stored zeros and an unsummed duplicate entry (non-canonical CSC): same tables.
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    data[:3] = 0.0
    dense2 = sp.csc_matrix((data, indices, indptr), shape=X.shape).toarray()
    weird = sp.csc_matrix((np.r_[data, 0.0], np.r_[indices, 0], np.r_[indptr[:-1],
                                                                        indptr[-1] + 1]),
                          shape=X.shape)
    weird.has_canonical_format = False
    before = weird.data.copy()
    for func in (filters.chi2, filters.mutual_info, filters.anova_f):
        assert_allclose(func(weird, y).scores, func(sp.csc_matrix(dense2), y).scores,
                        rtol=1e-12)
    assert_array_equal(weird.data, before)  # the caller's matrix is left alone


def test_sparse_float32_and_64bit_indices(sparse_counts):
    dense, y = sparse_counts
    X = sp.csc_matrix(dense.astype(np.float32))
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    for func in (filters.anova_f, filters.chi2, filters.mutual_info):
        assert_allclose(func(X, y).scores, func(sp.csc_matrix(dense), y).scores, rtol=1e-6)
        assert_allclose(func(X.tocsr(), y).scores, func(sp.csc_matrix(dense), y).scores,
                        rtol=1e-6)


def test_auc_refuses_sparse(sparse_counts):
    dense, y = sparse_counts
    with pytest.raises(TypeError, match="X: sparse"):
        filters.auc(sp.csr_matrix(dense), y)


def test_mutual_info_refuses_binning_sparse(sparse_counts):
    dense, y = sparse_counts
    with pytest.raises(ValueError, match="densify"):
        filters.mutual_info(sp.csr_matrix(dense), y, discrete_features=False)


def test_sparse_nan_is_refused(sparse_counts):
    dense, y = sparse_counts
    X = sp.csr_matrix(dense.astype(float))
    X.data[0] = np.nan
    for func in (filters.anova_f, filters.chi2, filters.mutual_info):
        with pytest.raises(ValueError, match=r"X.*NaN"):
            func(X, y)


# ------------------------------------------------------------------------------------------
# SPEC 1: dtypes, DataFrames, n_jobs, bad input


def test_float32_and_non_contiguous_input(three_class):
    X, y = three_class
    X32 = X.astype(np.float32)
    want = f_classif(X32.astype(np.float64), y)[0]
    assert_allclose(filters.anova_f(X32, y).scores, want, **RTOL)
    Xf = np.asfortranarray(X)[:, ::2]
    assert_allclose(filters.anova_f(Xf, y).scores, f_classif(X[:, ::2], y)[0], **RTOL)
    assert_allclose(filters.auc(X32, y > 0).scores,
                    [roc_auc_score(y > 0, X32[:, j]) for j in range(X.shape[1])], **RTOL)


def test_dataframe_gives_feature_names(three_class):
    pd = pytest.importorskip("pandas")
    X, y = three_class
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    res = filters.anova_f(df, pd.Series(y))
    assert list(res.feature_names) == list(df.columns)
    assert "feature_names" in repr(res)


def test_results_do_not_depend_on_n_jobs():
    gen = np.random.default_rng(5)
    X = gen.standard_normal((400, 300))  # above the size where threads start
    y = gen.integers(0, 2, 400)
    # chi2 on these continuous columns warns (DiscretenessWarning); the scores must still
    # not depend on n_jobs.
    for func in (filters.anova_f, filters.auc, filters.mutual_info, filters.chi2,
                 lambda X, y, n_jobs: filters.pearson(X, y.astype(float), n_jobs=n_jobs)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", filters.DiscretenessWarning)
            warnings.simplefilter("ignore", fastfs.EqualScoresWarning)  # chi2's, as above
            a, b = func(X, y, n_jobs=1), func(X, y, n_jobs=2)
        assert_array_equal(a.scores, b.scores)
    Xs = sp.csc_matrix(np.where(X > -0.5, X, 0.0))  # ~83k stored values: parallel CSC paths
    for func in (filters.anova_f, filters.chi2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", filters.DiscretenessWarning)
            assert_array_equal(func(Xs, y, n_jobs=1).scores, func(Xs, y, n_jobs=2).scores)


def test_two_python_threads_at_once(three_class):
    X, y = three_class
    want = filters.anova_f(X, y).scores
    out = [None, None]

    def run(i):
        out[i] = filters.anova_f(X, y).scores

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in out:
        assert_array_equal(got, want)


ALL = {
    "pearson": filters.pearson, "anova_f": filters.anova_f, "f_score": filters.f_score,
    "t_test": filters.t_test, "z_test": lambda X, y: filters.z_test(X, y, sigma=1.0),
    "s2n": filters.s2n, "fisher_ratio": filters.fisher_ratio, "auc": filters.auc,
    "chi2": filters.chi2, "mutual_info": filters.mutual_info,
}


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_in_X(name, bad, small_problem):
    X, y = small_problem
    X = X.copy()
    X[4, 1] = bad
    with pytest.raises(ValueError, match=r"X.*NaN or inf"):
        ALL[name](X, y)


@pytest.mark.parametrize("name", ["anova_f", "pearson"])
def test_values_whose_squares_overflow_give_the_unscaled_answer(name, small_problem):
    # Squares of 1e200 overflow float64; the statistics are scale-free, so the columns are
    # rescaled exactly and the answer is that of X (it used to be an error).
    X, y = small_problem
    want = ALL[name](X, y)
    got = ALL[name](X * 1e200, y)
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-9)
    np.testing.assert_allclose(got.pvalues, want.pvalues, rtol=1e-8)


def test_z_test_on_tiny_columns_scales_with_them(small_problem):
    # z is (mean difference) / sigma: X times 2**-1000 against sigma = 1 is X against
    # sigma = 2**1000, bit for bit (powers of two change no bit of a normal result).
    X, y = small_problem
    tiny = filters.z_test(X * 2.0**-1000, y, sigma=1.0)
    assert_array_equal(tiny.scores, filters.z_test(X, y, sigma=2.0**1000).scores)
    assert (tiny.scores != 0).any()
    # Near 1e-310 (subnormal) with sigma = 1, z is about 1e-310: no error, no warning
    # (it was "sigma: out of scale with X" after an overflow warning).
    sub = filters.z_test(X * 1e-310, y, sigma=1.0)
    want = filters.z_test(X, y, sigma=1.0).scores * 1e-310
    np.testing.assert_allclose(sub.scores, want, rtol=1e-3, atol=1e-322)
    assert (sub.pvalues == 1.0).all()


@pytest.mark.parametrize("name", sorted(set(ALL) - {"pearson"}))
def test_single_class_is_refused(name, small_problem):
    X, _ = small_problem
    with pytest.raises(ValueError, match=r"y.*2 classes"):
        ALL[name](X, np.zeros(X.shape[0]))


@pytest.mark.parametrize("name", ["f_score", "t_test", "z_test", "s2n", "auc"])
def test_two_class_statistics_refuse_three(name, three_class):
    X, y = three_class
    with pytest.raises(ValueError, match=rf"y: {name} needs exactly 2 classes, got 3"):
        ALL[name](X, y)


@pytest.mark.parametrize("func", [filters.f_score, filters.s2n,
                                  lambda X, y: filters.t_test(X, y, equal_var=False)])
def test_one_sample_class_is_refused_where_a_variance_is_needed(func, rng):
    X = rng.standard_normal((6, 2))
    with pytest.raises(ValueError, match=r"y: .*at least 2 samples in every class; class 'b'"):
        func(X, np.array(["a"] * 5 + ["b"]))


@pytest.mark.parametrize("name", sorted(ALL))
def test_shape_errors(name, small_problem):
    X, y = small_problem
    func = ALL[name]
    with pytest.raises(ValueError, match="different numbers of samples"):
        func(X, y[:-1])
    with pytest.raises(ValueError, match=r"y: expected a 1-D"):
        func(X, y.reshape(-1, 1))
    with pytest.raises(ValueError, match="zero features"):
        func(X[:, :0], y)


def test_option_errors(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"binning.*'quantile', 'uniform', 'median'"):
        filters.mutual_info(X, y, binning="equal")
    with pytest.raises(ValueError, match=r"bins: must be >= 2"):
        filters.mutual_info(X, y, bins=1)
    with pytest.raises(ValueError, match=r"alpha: must be >= 0"):
        filters.mutual_info(X, y, alpha=-1.0)
    with pytest.raises(ValueError, match=r"discrete_features"):
        filters.mutual_info(X, y, discrete_features="yes")
    with pytest.raises(ValueError, match=r"kind.*'contingency', 'counts'"):
        filters.chi2(X, y, kind="pearson")
    with pytest.raises(ValueError, match=r"X: chi2 with kind='counts' needs non-negative"):
        filters.chi2(X, y, kind="counts")
    with pytest.raises(ValueError, match=r"sigma: must be > 0"):
        filters.z_test(X, y, sigma=0.0)
    with pytest.raises(ValueError, match=r"sigma: expected a number or an array of shape"):
        filters.z_test(X, y, sigma=[1.0, 2.0])
    with pytest.raises(TypeError, match=r"pvalues: expected a bool"):
        filters.pearson(X, y, pvalues=None)
    with pytest.raises(TypeError, match=r"equal_var"):
        filters.t_test(X, y, equal_var="yes")
    with pytest.raises(ValueError, match=r"anova_f needs more samples than classes"):
        filters.anova_f(X[:3], [0, 1, 2])
    with pytest.raises(TypeError, match=r"y: expected real numbers"):
        filters.pearson(X, np.array(["a"] * X.shape[0]))


# ------------------------------------------------------------------------------------------
# FilterResult and scikit-learn's SelectKBest


def test_select_k_best_accepts_the_filters(three_class):
    X, y = three_class
    ours = SelectKBest(filters.anova_f, k=3).fit(X, y)
    theirs = SelectKBest(f_classif, k=3).fit(X, y)
    assert_array_equal(ours.get_support(), theirs.get_support())
    assert_allclose(ours.pvalues_, theirs.pvalues_, **RTOL)
    Xt = SelectKBest(filters.mutual_info, k=2).fit_transform(X, y)
    assert Xt.shape == (X.shape[0], 2)
    Xs = SelectKBest(filters.chi2, k=2).fit_transform(sp.csr_matrix(np.abs(np.round(X))), y)
    assert Xs.shape == (X.shape[0], 2)


def test_filter_result_is_a_frozen_pair(three_class):
    X, y = three_class
    res = filters.anova_f(X, y)
    scores, pvalues = res
    assert scores is res.scores and pvalues is res.pvalues
    assert isinstance(res, tuple) and len(res) == 2
    assert isinstance(res, fastfs.FilterResult)
    with pytest.raises(AttributeError):
        res.scores = None
    back = pickle.loads(pickle.dumps(res))
    assert_array_equal(back.scores, res.scores)
    assert_array_equal(back.pvalues, res.pvalues)
    assert back.feature_names is None
    assert repr(res).startswith("FilterResult(scores=")


# ------------------------------------------------------------------------------------------
# large common offsets; discrete statistics on continuous input


def _close(a, b, rtol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def _exact_anova_f(groups):
    """F of one-way ANOVA in rational arithmetic on the floats' exact values."""
    vals = [[Fraction(v) for v in g] for g in groups]
    n = sum(len(g) for g in vals)
    k = len(vals)
    grand = sum(sum(g) for g in vals) / n
    means = [sum(g) / len(g) for g in vals]
    between = sum(len(g) * (m - grand) ** 2 for g, m in zip(vals, means)) / (k - 1)
    within = sum(sum((v - m) ** 2 for v in g) for g, m in zip(vals, means)) / (n - k)
    return float(between / within)


def test_anova_f_with_a_large_common_offset_matches_exact_arithmetic():
    """NIST StRD SmLs07-09 style: values 1e12 + 0.2 ... 0.6 in 9 groups of 21 (certified
    F = 21 for SmLs07; here the exact F of the same float data)."""
    base = 1e12
    offsets = [0.4, 0.5, 0.3, 0.5, 0.3, 0.5, 0.3, 0.5, 0.3]
    groups = []
    for c in offsets:
        g = [base + c] + [base + c - 0.1, base + c + 0.1] * 10
        groups.append(g)
    X = np.concatenate(groups)[:, None]
    y = np.repeat(np.arange(9), 21)
    ref = _exact_anova_f(groups)
    assert abs(ref - 21.0) < 0.05  # the NIST certified value, up to the floats' rounding
    _close(fastfs.filters.anova_f(X, y).scores[0], ref, 1e-9)
    # The two-class statistics share the accumulation.
    two = y < 2
    g0, g1 = X[two & (y == 0), 0], X[two & (y == 1), 0]
    t = fastfs.filters.t_test(X[two], y[two]).scores[0]
    f0, f1 = [Fraction(v) for v in g0], [Fraction(v) for v in g1]
    m0, m1 = sum(f0) / len(f0), sum(f1) / len(f1)
    ss = sum((v - m0) ** 2 for v in f0) + sum((v - m1) ** 2 for v in f1)
    sp2 = ss / (len(f0) + len(f1) - 2)
    t_ref = float(m1 - m0) / np.sqrt(float(sp2 * (Fraction(1, len(f0)) + Fraction(1, len(f1)))))
    _close(t, t_ref, 1e-9)


def test_discrete_statistics_warn_on_continuous_input():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 2, 60)
    y_real = rng.normal(size=60)
    # every column is a perfect table, so every score is m up to rounding, which also warns
    with pytest.warns(fastfs.EqualScoresWarning, match="chi2: every feature got the same "
                                                       "score .60. up to rounding"):
        with pytest.warns(filters.DiscretenessWarning, match="X: chi2.*kind='counts'"):
            fastfs.filters.chi2(X, y)
    for f in (fastfs.filters.chi2, fastfs.filters.mutual_info):
        with pytest.warns(filters.DiscretenessWarning, match="y: .* treats every distinct value of y"):
            f(np.round(X * 2), y_real)
    # classes of one sample have no spread: every Fisher ratio is inf, which also warns
    with pytest.warns(fastfs.EqualScoresWarning, match="fisher_ratio: .* same score .inf."):
        with pytest.warns(filters.DiscretenessWarning, match="y: .* treats every distinct value of y"):
            assert np.all(fastfs.filters.fisher_ratio(np.round(X * 2), y_real).scores == np.inf)
    # Discrete data stays quiet (pytest turns warnings into errors).
    Xd = rng.integers(0, 4, size=(60, 3))
    fastfs.filters.chi2(Xd, y)
    fastfs.filters.mutual_info(Xd, y)
    fastfs.filters.fisher_ratio(X, y)


def test_tables_warn_on_mostly_zero_columns_of_unique_values():
    """A TF-IDF column is its zeros plus about one sample a value; the one-sample-per-value
    rule counted the zero category among the values (fewer than half as many values as
    samples), so mutual_info on sparse TF-IDF ranked features by their number of values with
    no warning. The most common value is now set aside: the warning names those columns, on
    sparse and dense X, for chi2 and mutual_info; counts with zeros stay quiet."""
    from scipy import sparse

    rng = np.random.default_rng(3)
    m = 400
    y = rng.integers(0, 2, m)
    X = np.zeros((m, 4))
    for j, nnz in enumerate((40, 60, 40, 60)):
        rows = rng.choice(m, nnz, replace=False)
        X[rows, j] = rng.random(nnz) if j < 2 else rng.integers(1, 4, nnz)
    # the reference: distinct values besides the most common one against samples outside it
    for j in range(4):
        values, counts = np.unique(X[:, j], return_counts=True)
        rest = m - counts.max()
        assert (values.size - 1 > max(rest / 2, 10)) == (j < 2)
    for data in (X, sparse.csr_matrix(X), sparse.csc_matrix(X)):
        with pytest.warns(filters.DiscretenessWarning, match=r"mutual_info.*2 feature\(s\) \(0, 1\)"):
            filters.mutual_info(data, y, discrete_features=True)
        with pytest.warns(filters.DiscretenessWarning, match=r"chi2.*2 feature\(s\) \(0, 1\)"):
            filters.chi2(data, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filters.mutual_info(sparse.csr_matrix(X[:, 2:]), y)   # counts 1..3 and zeros
        filters.chi2(X[:, 2:], y)


def test_fisher_ratio_with_many_classes_equals_the_pair_sum():
    # one Python step per class (and blocks of the later classes), not one per pair: the
    # same sum as the reference's double loop over the 780 pairs of 40 classes
    gen = np.random.default_rng(11)
    X = gen.random((400, 30)) + np.arange(30)
    y = np.arange(400) % 40
    X[y == 3, 5] += 2.0
    assert_allclose(filters.fisher_ratio(X, y).scores, ref.fisher_ratio(X, y), rtol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12])
def test_sparse_moments_keep_their_digits_far_from_zero(fmt, offset):
    # The class means are compared against one reference per column (as for dense X), so
    # data with a large common offset score as the shifted data do: scikit-learn's f_classif
    # and SciPy's ttest_ind on X - offset (an exact subtraction) are the references.
    from scipy import sparse
    from scipy.stats import ttest_ind
    from sklearn.feature_selection import f_classif

    gen = np.random.default_rng(1)
    X = offset + gen.normal(size=(40, 3))
    exact = X - offset
    y3, y2 = np.arange(40) % 3, np.arange(40) % 2
    S = getattr(sparse, f"{fmt}_matrix")(X)
    assert_allclose(filters.anova_f(S, y3).scores, f_classif(exact, y3)[0], rtol=1e-12)
    want = ttest_ind(exact[y2 == 1], exact[y2 == 0]).statistic
    assert_allclose(filters.t_test(S, y2).scores, want, rtol=1e-12)
    for f, y in ((filters.f_score, y2), (filters.s2n, y2), (filters.fisher_ratio, y3)):
        assert_allclose(f(S, y).scores, f(exact, y).scores, rtol=1e-12)
    # one value a class apart by one ulp is not constant: F = 1 as on dense X
    c = np.r_[np.full(9, 1.0), np.nextafter(1.0, 2.0)][:, None]
    yc = np.arange(10) % 2
    assert_allclose(filters.anova_f(getattr(sparse, f"{fmt}_matrix")(c), yc).scores,
                    filters.anova_f(c, yc).scores, rtol=1e-12)
    assert filters.anova_f(c, yc).scores[0] == pytest.approx(1.0)


def test_mutual_info_warns_on_discrete_features_with_one_sample_a_value():
    # Every distinct value a category: a continuous column has about one sample a value and
    # its mutual information only grows with the number of values (here noise outranks a
    # 3-valued feature), which warns as chi2's contingency tables do; binned, it does not.
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, 200)
    X = np.c_[rng.randint(0, 3, 200), rng.randn(200)]
    for data, kw in ((X, {"discrete_features": True}), (sp.csr_matrix(X), {})):
        with pytest.warns(filters.DiscretenessWarning, match=r"1 feature\(s\) \(1\)"):
            filters.mutual_info(data, y, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        filters.mutual_info(X, y)
        filters.mutual_info(X[:, :1], y, discrete_features=True)


def test_quantile_bins_keep_a_dominant_minimum_apart():
    """A feature that is 0 in 95% of the samples had every quantile edge at 0, so its zeros and
    ones fell into one bin and a feature equal to y scored 0, below noise (97.6% of the
    Reuters word counts scored 0). The minimum now has a bin of its own: scikit-learn's
    mutual_info_score of the two values is the reference."""
    from sklearn.metrics import mutual_info_score

    rng = np.random.default_rng(0)
    x = np.r_[np.zeros(95), np.ones(5)]
    y = np.r_[np.zeros(95, int), np.ones(5, int)]
    counts = np.r_[np.zeros(90), rng.integers(1, 6, 10)]
    X = np.column_stack([x, counts, rng.normal(size=100)])
    got = filters.mutual_info(X, y, alpha=0).scores
    assert got[0] == pytest.approx(mutual_info_score(x, y), rel=1e-12)
    # the counts: 0 alone, then the quantile bins of the rest as NumPy forms them
    assert got[1] == pytest.approx(mutual_info_score(ref.bin_codes(counts, 10, "quantile"), y),
                                   rel=1e-12)
    assert ref.bin_codes(counts, 10, "quantile")[counts == 0].max() == 0
    assert ref.bin_codes(counts, 10, "quantile")[counts > 0].min() >= 1
    assert got[0] > got[2]
