"""STIR p-values for ReliefF and MultiSURF (Le et al. 2019): against a NumPy reference that
enumerates every (sample, neighbour) pair, uniform on noise,
small for planted features, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import fastfs
import reference as ref


def _data(m=36, n=6, classes=2, seed=0, signal=1.0):
    gen = np.random.default_rng(seed)
    y = np.arange(m) % classes
    gen.shuffle(y)
    X = gen.normal(size=(m, n))
    X[:, 0] += signal * y  # one relevant feature
    return X, y


CASES = [("multisurf", 2, 10), ("multisurf", 3, 10), ("relieff", 2, 3), ("relieff", 3, 4),
         ("relieff", 2, 30)]  # k = 30 is larger than every class


@pytest.mark.parametrize("method,classes,k", CASES)
def test_equals_pairwise_reference(method, classes, k):
    X, y = _data(classes=classes, seed=classes + k)
    r = fastfs.stir(X, y, method=method, n_neighbors=k)
    hit, miss = ref.stir_pair_diffs(X, y, method, k)
    assert (r.n_hit_pairs, r.n_miss_pairs) == (hit.shape[0], miss.shape[0])
    assert_allclose(r.hit_means, hit.mean(axis=0), rtol=1e-12, atol=1e-15)
    assert_allclose(r.miss_means, miss.mean(axis=0), rtol=1e-12, atol=1e-15)
    t, p = ref.stir_test(X, y, method, k)
    assert_allclose(r.t_statistics, t, rtol=1e-9, atol=1e-12)
    assert_allclose(r.pvalues, p, rtol=1e-8, atol=1e-300)
    # the weights are the method's own scores (MultiSURF's up to rounding: STIR's pass goes
    # sample by sample, the plain one adds each pair's two contributions as one)
    plain = (fastfs.multisurf(X, y) if method == "multisurf"
             else fastfs.relieff(X, y, n_neighbors=k))
    if method == "multisurf":
        assert_allclose(r.weights, plain.weights, rtol=1e-12,
                        atol=1e-12 * np.abs(plain.weights).max())
    else:
        assert_array_equal(r.weights, plain.weights)
    assert_array_equal(r.ranking, plain.ranking)


def test_relieff_weight_is_difference_of_pair_means():
    # every class larger than k: ReliefF's weight is STIR's M - H (Le et al. 2019)
    X, y = _data(m=40, classes=2, seed=5)
    r = fastfs.stir(X, y, method="relieff", n_neighbors=5)
    assert_allclose(r.weights, r.miss_means - r.hit_means, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("method", ["multisurf", "relieff"])
def test_threads_and_dtype(method):
    X, y = _data(m=150, n=70, seed=3)  # n >= 64: the float32 shortlist of ReliefF is used
    a = fastfs.stir(X, y, method=method, n_jobs=1)
    b = fastfs.stir(X, y, method=method, n_jobs=2)
    for name in ("weights", "t_statistics", "pvalues", "hit_means", "miss_means"):
        assert_array_equal(getattr(a, name), getattr(b, name))
    c = fastfs.stir(X.astype(np.float32), y, method=method)
    assert_allclose(c.pvalues, a.pvalues, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("method,m", [("multisurf", 120), ("multisurf", 400), ("relieff", 400)])
def test_null_pvalues_are_uniform(method, m, classes):
    # pure noise, several seeds: the p-values are uniform. MultiSURF's near sets hold about a
    # third of the samples and nearly every pair twice (x near z and z near x); a t-test that
    # takes the pairs as independent gave 8-10 % below 0.05 here (and 17.8 % on 1000 x 1000)
    p = []
    for seed in range(3):
        gen = np.random.default_rng(seed)
        X = gen.normal(size=(m, 300))
        y = gen.integers(0, classes, size=m)
        r = fastfs.stir(X, y, method=method)
        assert r.selected.size <= 2  # BH at 5 %: about no discovery on noise
        p.append(r.pvalues)
    p = np.concatenate(p)
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    # the share below 0.05 within the binomial range of 5 % (about 3.4 standard deviations)
    assert abs(np.mean(p < 0.05) - 0.05) < 3.4 * np.sqrt(0.05 * 0.95 / p.size)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("method", ["multisurf", "relieff"])
def test_planted_features_are_significant(method, classes):
    gen = np.random.default_rng(11)
    m, n = 200, 100
    y = gen.integers(0, classes, size=m)
    X = gen.normal(size=(m, n))
    X[:, [3, 17, 42]] += 1.5 * y[:, None]
    r = fastfs.stir(X, y, method=method, fdr=0.05)
    assert set(r.selected[:3].tolist()) == {3, 17, 42}
    assert r.pvalues[[3, 17, 42]].max() < 1e-6
    assert_array_equal(r.significant(0.05), r.selected)
    assert set(r.significant(1e-12).tolist()) <= {3, 17, 42}


def test_benjamini_hochberg_equals_scipy():
    gen = np.random.default_rng(2)
    p = np.concatenate([gen.random(50), gen.random(10) * 1e-4, [0.0, 1.0, 0.5, 0.5]])
    assert_allclose(fastfs.benjamini_hochberg(p), stats.false_discovery_control(p),
                    rtol=1e-14)
    assert fastfs.benjamini_hochberg(np.empty(0)).size == 0
    with pytest.raises(ValueError, match="pvalues"):
        fastfs.benjamini_hochberg([0.1, np.nan])
    with pytest.raises(ValueError, match="pvalues"):
        fastfs.benjamini_hochberg([[0.1]])


def test_constant_and_separating_features():
    X, y = _data(m=30, n=4, seed=1)
    X[:, 1] = 3.0  # constant: no difference at all
    X[:, 2] = y  # separates the classes: every hit diff 0, every miss diff 1
    # every feature is read as continuous by default: the 0/1 column's scaled difference is
    # the 0/1 indicator of a class change
    r = fastfs.stir(X, y, method="relieff", n_neighbors=3)
    assert r.t_statistics[1] == 0.0 and r.pvalues[1] == 1.0
    # the variance is that of the null hypothesis (over all pairs of samples): finite
    assert r.t_statistics[2] > 5 and r.pvalues[2] < 1e-6
    assert r.pvalues[2] == r.pvalues.min()
    assert np.isfinite(r.t_statistics[[0, 3]]).all()


def test_bad_input():
    X, y = _data()
    with pytest.raises(ValueError, match="method.*'multisurf', 'relieff'"):
        fastfs.stir(X, y, method="surfstar")
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="fdr"):
            fastfs.stir(X, y, fdr=bad)
    with pytest.raises(TypeError, match="fdr"):
        fastfs.stir(X, y, fdr="0.05")
    with pytest.raises(ValueError, match="y: needs at least 2 classes"):
        fastfs.stir(X, np.zeros(len(y)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        fastfs.stir(X_nan, y)
    with pytest.raises(ValueError, match="n_neighbors"):
        fastfs.stir(X, y, method="relieff", n_neighbors=0)
    # too few pairs for a test: MultiSURF's near sets hold one hit and one miss pair in all
    with pytest.raises(ValueError, match="1 hit pairs and 1 miss pairs"):
        fastfs.stir(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), [0, 0, 1],
                    discrete_threshold=None)


@pytest.mark.parametrize("method", ["multisurf", "relieff"])
def test_data_types_are_read_as_the_relief_family_reads_them(method):
    # The weights are relieff's / multisurf's with every feature read as continuous (the
    # default); features made discrete by a discrete_threshold or discrete_features, or a
    # continuous target, are refused, naming what and how to opt in.
    X, y = _data(m=60, n=6, seed=3)
    plain = getattr(fastfs, method)
    kw = {"n_neighbors": 4} if method == "relieff" else {}
    np.testing.assert_allclose(fastfs.stir(X, y, method=method, **kw).weights,
                               plain(X, y, **kw).weights, rtol=1e-12, atol=1e-15)
    Xb = X.copy()
    Xb[:, 4] = np.random.default_rng(0).integers(0, 2, 60)  # a 0/1 feature: discrete
    with pytest.raises(ValueError, match=r"X: features 4 count as discrete.*discrete_threshold=None"):
        fastfs.stir(Xb, y, method=method, discrete_threshold=10, **kw)
    with pytest.raises(ValueError, match="X: features 1 count as discrete"):
        fastfs.stir(X, y, method=method, discrete_features=[1], **kw)
    every = fastfs.stir(Xb, y, method=method, **kw)
    np.testing.assert_allclose(every.weights, plain(Xb, y, discrete_threshold=None, **kw).weights,
                               rtol=1e-12, atol=1e-15)
    # the default reads real data with few-valued features (word counts, blank-edged image
    # pixels, SNP-like 0/1/2 codes) instead of refusing it
    Xs = np.random.default_rng(4).integers(0, 3, (60, 6)).astype(float)
    snp = fastfs.stir(Xs, y, method=method, **kw)
    np.testing.assert_allclose(snp.weights, plain(Xs, y, discrete_threshold=None, **kw).weights,
                               rtol=1e-12, atol=1e-15)
    assert np.isfinite(snp.pvalues).all()
    # a constant feature is accepted: no pair differs in it (t = 0, p = 1); the other weights
    # are those of every feature read as continuous
    Xc = X.copy()
    Xc[:, 2] = 7.0
    const = fastfs.stir(Xc, y, method=method, **kw)
    assert const.weights[2] == 0.0 and const.pvalues[2] == 1.0
    np.testing.assert_allclose(const.weights,
                               plain(Xc, y, discrete_threshold=None, **kw).weights,
                               rtol=1e-12, atol=1e-15)
    yr = X[:, 0] + 0.01 * np.arange(60)  # numeric with 60 distinct values: continuous
    with pytest.raises(ValueError, match="y: read as a continuous target.*target='classes'"):
        fastfs.stir(X, yr, method=method, **kw)


def test_fraction_of_the_samples_as_n_neighbors():
    # skrebate's rule, as fastfs.relieff: k = int(n_neighbors * m / 2); here 0.25 * 36 / 2 = 4
    X, y = _data(m=36, classes=3, seed=4)
    a = fastfs.stir(X, y, method="relieff", n_neighbors=0.25)
    b = fastfs.stir(X, y, method="relieff", n_neighbors=4)
    assert_array_equal(a.pvalues, b.pvalues)
    assert a.n_hit_pairs == 36 * 4
    with pytest.raises(ValueError, match="n_neighbors: the fraction 0.01 .* fewer than one"):
        fastfs.stir(X, y, method="relieff", n_neighbors=0.01)
