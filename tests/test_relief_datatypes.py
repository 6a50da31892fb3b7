"""The Relief family on every data type skrebate 0.8 handles: discrete features (by the
distinct-value threshold or an explicit list), mixed discrete and continuous features, missing
values (NaN), and binary, multi-class and continuous targets. Each algorithm equals skrebate to
1e-6 on generated epistasis data (SNP-like features 0/1/2, two of them interacting, among noise
features, as in the GAMETES sets); the deliberate differences are pinned."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs

skrebate = pytest.importorskip("skrebate")

ALGORITHMS = ("relieff", "surf", "surfstar", "multisurf", "multisurfstar")
SKREBATE_CLASS = {"relieff": "ReliefF", "surf": "SURF", "surfstar": "SURFstar",
                  "multisurf": "MultiSURF", "multisurfstar": "MultiSURFstar"}
K = 3  # ReliefF's neighbours in the comparisons (smaller than every class / hit group)


@pytest.fixture(autouse=True)
def stable_skrebate(monkeypatch):
    """skrebate orders ReliefF's neighbours with np.argsort's default (unstable) sort, so among
    equal distances its choice is arbitrary; fastfs takes the lowest sample index (a stable
    sort). Discrete data have many equal distances, so skrebate is compared with a stable
    sort: that is the only change, and it is fastfs's documented tie rule."""
    import skrebate.relieff as module

    proxy = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    proxy.argsort = lambda a, **kw: np.argsort(a, kind="stable")
    monkeypatch.setattr(module, "np", proxy)


def snp_data(kind="discrete", target="binary", missing=0.0, m=60, n=10, seed=0):
    """SNP-like genotypes 0/1/2 (minor allele frequency 0.3-0.5); the class depends on an
    interaction of features 0 and 1 only (XOR-like penetrance), with 10% label noise. kind
    "mixed" makes the second half of the features continuous (feature 1 stays a SNP);
    "continuous" makes every feature continuous (genotype plus noise)."""
    gen = np.random.default_rng(seed)
    maf = gen.uniform(0.3, 0.5, n)
    X = gen.binomial(2, maf, (m, n)).astype(float)
    het = (X[:, 0] == 1) ^ (X[:, 1] == 1)
    if target == "binary":
        y = het.astype(int)
        flip = gen.random(m) < 0.1
        y[flip] = 1 - y[flip]
    elif target == "multiclass":
        y = ((X[:, 0] + X[:, 1]).astype(int) + (gen.random(m) < 0.1)) % 3
        y = np.array(["aa", "bb", "cc"])[y]
    else:
        y = 2.0 * het + 0.5 * X[:, 0] + gen.normal(0.0, 0.5, m)
    if kind == "mixed":
        X[:, n // 2:] = X[:, n // 2:] + gen.normal(0.0, 0.4, (m, n - n // 2))
    elif kind == "continuous":
        X = X + gen.normal(0.0, 0.4, (m, n))
    if missing:
        X[gen.random((m, n)) < missing] = np.nan
    return X, y


def hit_groups_larger_than(y, k, continuous):
    """Every sample has more than k same-group and more than k other-group samples."""
    y = np.asarray(y)
    if continuous:
        sd = np.std(y, ddof=1)
        hit = np.abs(y[:, None] - y[None, :]) < sd
        np.fill_diagonal(hit, False)
        hits = hit.sum(axis=1)
        misses = len(y) - 1 - hits
        return hits.min() > k and misses.min() > k
    return np.unique(y, return_counts=True)[1].min() > k + 1


def skrebate_scores(name, X, y, **kw):
    est = getattr(skrebate, SKREBATE_CLASS[name])(n_features_to_select=2, n_jobs=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skrebate's own RuntimeWarnings (0/0 on NaN pairs)
        est.fit(X.copy(), np.asarray(y))
    return est.feature_importances_


def fastfs_scores(name, X, y, **kw):
    if name == "relieff":
        kw.setdefault("n_neighbors", K)
    return getattr(fastfs, name)(X, y, **kw).weights


def sk_kwargs(name, **kw):
    if name == "relieff":
        kw.setdefault("n_neighbors", K)
    return kw


# ------------------------------------------------------------------------------------------
# equality with skrebate


@pytest.mark.parametrize("target", ["binary", "multiclass", "continuous"])
@pytest.mark.parametrize("kind,missing", [("discrete", 0.0), ("mixed", 0.0),
                                          ("discrete", 0.1), ("mixed", 0.1),
                                          ("continuous", 0.1)])
@pytest.mark.parametrize("name", ALGORITHMS)
def test_equals_skrebate(name, kind, missing, target):
    # the first fixed seed whose data give every sample more than K hits and misses (so that
    # skrebate never counts a sample as its own neighbour)
    for seed in range(20):
        X, y = snp_data(kind, target, missing, seed=seed)
        if hit_groups_larger_than(y, K, target == "continuous"):
            break
    assert hit_groups_larger_than(y, K, target == "continuous")
    got = fastfs_scores(name, X, y)
    assert np.isfinite(got).all()
    assert_allclose(got, skrebate_scores(name, X, y, **sk_kwargs(name)), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_continuous_features_with_a_continuous_target_equal_skrebate(name):
    X, y = snp_data("continuous", "continuous", 0.0, seed=5)
    assert_allclose(fastfs_scores(name, X, y), skrebate_scores(name, X, y, **sk_kwargs(name)),
                    rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_interacting_snps_rank_first(name):
    X, y = snp_data("discrete", "binary", 0.0, m=200, n=20, seed=3)
    weights = fastfs_scores(name, X, y)
    assert set(np.argsort(-weights)[:2]) == {0, 1}


@pytest.mark.parametrize("name", ["relieff", "multisurfstar"])
def test_explicit_discrete_features_equal_skrebates_list(name):
    X, y = snp_data("continuous", "binary", 0.05, seed=7)
    listed = [0, 2, 5]
    got = fastfs_scores(name, X, y, discrete_features=listed)
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[listed] = True
    assert_array_equal(got, fastfs_scores(name, X, y, discrete_features=mask))
    # negative indices count from the end, as NumPy and scikit-learn read them
    negative = [i - X.shape[1] for i in listed]
    assert_array_equal(got, fastfs_scores(name, X, y, discrete_features=negative))
    assert_allclose(got, skrebate_scores(name, X, y, **sk_kwargs(name, categorical_features=listed)),
                    rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["relieff", "surf"])
def test_discrete_threshold_equals_skrebates_categorical_threshold(name):
    X, y = snp_data("discrete", "binary", 0.0, seed=8)
    X[:, 2] = X[:, 2] + 0.5 * (np.arange(X.shape[0]) % 2)  # 6 distinct values
    for threshold in (2, 5, 6):
        assert_allclose(fastfs_scores(name, X, y, discrete_threshold=threshold),
                        skrebate_scores(name, X, y, **sk_kwargs(name, categorical_threshold=threshold)),
                        rtol=0, atol=1e-6)


def test_results_do_not_depend_on_the_thread_count():
    X, y = snp_data("mixed", "multiclass", 0.1, m=80, seed=4)
    for name in ALGORITHMS:
        assert_array_equal(fastfs_scores(name, X, y, n_jobs=1), fastfs_scores(name, X, y, n_jobs=2))


# ------------------------------------------------------------------------------------------
# documented rules and differences, pinned


def test_tie_rule_is_the_lowest_sample_index():
    # duplicated rows make equal distances; fastfs takes the lower index (skrebate with a
    # stable sort, see the fixture)
    X, y = snp_data("discrete", "binary", 0.0, m=40, n=4, seed=9)
    X = np.vstack([X, X])
    y = np.concatenate([y, y])
    assert_allclose(fastfs_scores("relieff", X, y),
                    skrebate_scores("relieff", X, y, n_neighbors=K), rtol=0, atol=1e-12)


def test_k_larger_than_a_class_uses_every_other_member():
    # skrebate then counts the sample itself as one of its hits; fastfs never does: with k at
    # least every class, each sample's neighbours are all the other samples
    X, y = snp_data("discrete", "binary", 0.0, m=30, n=5, seed=10)
    diff = (X[:, None, :] != X[None, :, :]).astype(float)
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    other = y[:, None] != y[None, :]
    expected = np.mean([-diff[i][same[i]].mean(axis=0) + diff[i][other[i]].mean(axis=0)
                        for i in range(len(y))], axis=0)
    assert_allclose(fastfs_scores("relieff", X, y, n_neighbors=len(y)), expected, rtol=0,
                    atol=1e-12)
    assert not np.allclose(expected, skrebate_scores("relieff", X, y, n_neighbors=len(y)),
                           atol=1e-6)


@pytest.mark.parametrize("name", ["surf", "multisurfstar"])
def test_target_rule_counts_distinct_values(name):
    # more than discrete_threshold distinct numbers: a continuous target (as skrebate);
    # target="classes" reads them as labels (skrebate's label_type="multiclass")
    X, y = snp_data("discrete", "binary", 0.0, m=66, seed=11)
    y = np.arange(66) % 11
    with pytest.warns(UserWarning, match="11 distinct whole-number values"):
        default = fastfs_scores(name, X, y)
    assert_allclose(default, skrebate_scores(name, X, y), rtol=0, atol=1e-6)
    assert_allclose(fastfs_scores(name, X, y, target="classes"),
                    skrebate_scores(name, X, y, label_type="multiclass"), rtol=0, atol=1e-6)
    # ties in a continuous target change nothing: hits are |y_a - y_b| < std(y)
    assert_allclose(fastfs_scores(name, X, y + 0.5), default, rtol=0, atol=0)


def test_existing_fast_path_is_kept_for_continuous_class_data():
    gen = np.random.default_rng(12)
    X = gen.standard_normal((50, 6))
    y = (X[:, 0] > 0).astype(int)
    for name in ALGORITHMS:
        assert_array_equal(fastfs_scores(name, X, y),
                           fastfs_scores(name, X, y, discrete_features=[]))


# ------------------------------------------------------------------------------------------
# bad input: clear errors or documented rules


@pytest.mark.parametrize("name", ALGORITHMS)
def test_all_missing_column_scores_zero_as_in_skrebate(name):
    X, y = snp_data("mixed", "binary", 0.05, seed=13)
    X[:, 3] = np.nan
    got = fastfs_scores(name, X, y)
    assert got[3] == 0.0 and np.isfinite(got).all()
    assert_allclose(got, skrebate_scores(name, X, y, **sk_kwargs(name)), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_all_missing_row_adds_nothing_as_in_skrebate(name):
    X, y = snp_data("discrete", "binary", 0.05, seed=14)
    X[5] = np.nan
    got = fastfs_scores(name, X, y)
    assert np.isfinite(got).all()
    assert_allclose(got, skrebate_scores(name, X, y, **sk_kwargs(name)), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("case", ["missing", "continuous_target", "mixed", "sparse"])
def test_columns_of_subnormal_magnitude_score_as_at_unit_scale(name, case):
    """Scores read each column through (x - min) / range, so a column's scale cannot matter.
    A column of about 1e-310 (subnormal: 1 / range overflows) used to give NaN or all-zero
    weights on the general kernel and the sparse path. Reference: the same data at unit
    scale (skrebate agrees there), exactly when the factor is a power of two."""
    import scipy.sparse as sp
    kind = "mixed" if case == "mixed" else "continuous"
    target = "continuous" if case == "continuous_target" else "binary"
    X, y = snp_data(kind, target, 0.05 if case == "missing" else 0.0, seed=21)
    if case == "sparse":
        X = np.abs(X) * (np.random.default_rng(1).random(X.shape) < 0.6)
    col = X.shape[1] - 1  # continuous in every case
    form = sp.csr_matrix if case == "sparse" else np.asarray
    Xs = X.copy()
    Xs[:, col] *= 1e-310
    got = fastfs_scores(name, form(Xs), y)
    # the same subnormal values scaled up by a power of two (exact): the same bits
    up = Xs.copy()
    up[:, col] *= 2.0 ** 515
    up[:, col] *= 2.0 ** 515
    want = fastfs_scores(name, form(up), y)
    assert np.isfinite(want).all()
    assert_array_equal(got, want)
    # and close to the data before the column was made subnormal
    assert_allclose(got, fastfs_scores(name, form(X), y), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_bad_input_gives_clear_errors(name):
    fn = getattr(fastfs, name)
    X, y = snp_data("discrete", "binary", 0.1, seed=15)
    with pytest.raises(ValueError, match="y: .*single class"):
        fn(X, np.zeros(X.shape[0], dtype=int))
    with pytest.raises(ValueError, match="y: .*constant"):
        fn(X, np.zeros(X.shape[0]), target="continuous")
    with pytest.raises(ValueError, match="y: a continuous target must be numeric"):
        fn(X, y.astype(str), target="continuous")
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="X: contains infinity"):
        fn(bad, y)
    with pytest.raises(ValueError, match="discrete_features: feature index out of range"):
        fn(X, y, discrete_features=[0, X.shape[1]])
    with pytest.raises(ValueError, match="discrete_features: feature index out of range"):
        fn(X, y, discrete_features=[-X.shape[1] - 1])
    with pytest.raises(ValueError, match="discrete_features: feature index out of range"):
        fn(X, y, discrete_features=np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(ValueError, match="discrete_features: a boolean mask"):
        fn(X, y, discrete_features=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="discrete_threshold"):
        fn(X, y, discrete_threshold=-1)
    with pytest.raises(ValueError, match="target: .*'auto', 'classes', 'continuous'"):
        fn(X, y, target="regression")
    with pytest.raises(ValueError, match="distance_weights: not supported with missing values"):
        fn(X, y, distance_weights=np.ones(X.shape[1]))


def test_callback_stops_the_general_path_early():
    X, y = snp_data("discrete", "binary", 0.1, m=300, n=6, seed=16)
    seen = []

    def stop(state):
        seen.append(state.step)
        return True

    result = fastfs.multisurf(X, y, callback=stop)
    assert result.stopped_early and seen == [1]
    assert np.isfinite(result.weights).all()


@pytest.mark.parametrize("name", ALGORITHMS)
def test_numeric_object_target_is_read_by_its_values(name):
    # a pandas object column of numbers: skrebate counts distinct values whatever the dtype,
    # so 15 distinct values are a continuous target, as the float array is (it was scored as
    # 15 classes)
    for seed in range(20):
        X, y = snp_data("continuous", "continuous", 0.0, seed=seed)
        y = np.round(y, 1)
        if hit_groups_larger_than(y, K, True):
            break
    assert np.unique(y).size > 10
    got = fastfs_scores(name, X, y.astype(object))
    assert_array_equal(got, fastfs_scores(name, X, y))
    assert_allclose(got, skrebate_scores(name, X, y.astype(object), **sk_kwargs(name)),
                    rtol=0, atol=1e-6)
    # labels stay labels: strings and bools in an object array
    labels = np.where(y > np.median(y), "hi", "lo").astype(object)
    assert_allclose(fastfs_scores(name, X, labels),
                    fastfs_scores(name, X, (y > np.median(y)).astype(int)), rtol=1e-12,
                    atol=1e-15)


def test_float32_x_is_not_copied_to_float64_for_class_labels():
    import tracemalloc

    gen = np.random.default_rng(3)
    X = gen.standard_normal((2000, 300)).astype(np.float32)
    y = np.repeat([0, 1], 1000)
    tracemalloc.start()
    w = fastfs.relieff(X, y).weights
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the fast path reads X itself; a float64 copy (2 X) was made and never read
    assert peak < 0.5 * X.nbytes
    assert_allclose(w, fastfs.relieff(X.astype(np.float64), y).weights, rtol=0, atol=1e-6)
