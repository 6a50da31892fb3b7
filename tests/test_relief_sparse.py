"""The Relief family on sparse X (CSR, bag of words), scored without densifying: every algorithm
equals the same function on X.toarray(), on bag-of-words-like data (Poisson counts, term
frequencies, zero columns, duplicate rows) with binary, multi-class and continuous targets."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import fastfs

RADIUS = [fastfs.surf, fastfs.surfstar, fastfs.multisurf, fastfs.multisurfstar]
FAMILY = [fastfs.relieff] + RADIUS


def bag_of_words(m=70, n=60, lam=0.15, seed=0, tf=False):
    """Poisson counts with many all-but-empty columns, one all-zero column and duplicate rows.
    ``tf``: counts divided by the document length (term frequencies: no distance ties but the
    duplicates')."""
    rng = np.random.default_rng(seed)
    rates = lam * rng.gamma(0.5, 2.0, size=n)
    rates[: n // 5] = 0.01  # nearly empty columns
    X = rng.poisson(rates, size=(m, n)).astype(np.float64)
    X[:, n // 2] = 0.0  # a column that is all zero
    X[5] = X[3]  # duplicate rows
    X[m - 1] = X[0]
    X[7] = X[3]
    if tf:
        length = X.sum(axis=1, keepdims=True) + rng.uniform(1.0, 2.0, size=(m, 1))
        X = X / length
    return X


def targets(m, seed=0):
    rng = np.random.default_rng(seed + 100)
    binary = rng.integers(0, 2, size=m)
    multi = rng.integers(0, 3, size=m)
    continuous = rng.normal(size=m)
    return {"binary": binary, "multi": multi, "continuous": continuous}


def assert_same(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("func", FAMILY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", ["binary", "multi", "continuous"])
def test_continuous_features_equal_dense(func, kind):
    X = bag_of_words(tf=True)
    y = targets(X.shape[0])[kind]
    kw = {"discrete_threshold": None}
    dense = func(X, y, **kw).weights
    sparse = func(sp.csr_matrix(X), y, **kw).weights
    assert np.abs(dense).max() > 0
    assert_same(sparse, dense)


@pytest.mark.parametrize("func", FAMILY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("kind", ["binary", "multi", "continuous"])
def test_counts_read_as_discrete_equal_dense(func, kind):
    # Poisson counts have few distinct values: the default threshold reads them as discrete.
    X = bag_of_words(seed=1)
    y = targets(X.shape[0], 1)[kind]
    dense = func(X, y).weights
    sparse = func(sp.csr_matrix(X), y).weights
    assert np.abs(dense).max() > 0
    assert_same(sparse, dense)


@pytest.mark.parametrize("func", FAMILY, ids=lambda f: f.__name__)
def test_mixed_features_equal_dense(func):
    # counts (discrete) next to term frequencies (continuous, with skrebate's ramp)
    counts = bag_of_words(seed=2, n=30)
    tf = bag_of_words(seed=3, n=30, tf=True)
    X = np.hstack([counts, tf])
    y = targets(X.shape[0], 2)["multi"]
    dense = func(X, y).weights
    sparse = func(sp.csr_matrix(X), y).weights
    assert_same(sparse, dense)
    flags = np.arange(X.shape[1]) % 3 == 0
    assert_same(func(sp.csr_matrix(X), y, discrete_features=flags).weights,
                func(X, y, discrete_features=flags).weights)


@pytest.mark.parametrize("func", FAMILY, ids=lambda f: f.__name__)
def test_distance_weights_equal_dense(func):
    X = bag_of_words(seed=4, tf=True)
    y = targets(X.shape[0], 4)["binary"]
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=X.shape[1])
    assert_same(func(sp.csr_matrix(X), y, distance_weights=w, discrete_threshold=None).weights,
                func(X, y, distance_weights=w, discrete_threshold=None).weights)


def test_relieff_neighbour_counts_and_negative_values():
    X = bag_of_words(seed=5, tf=True)
    X[::4, 3] = -X[::4, 3] - 0.1  # negative entries; ranges over the whole column
    y = targets(X.shape[0], 5)["multi"]
    for k in (1, 3, 0.2):
        assert_same(fastfs.relieff(sp.csr_matrix(X), y, n_neighbors=k,
                                   discrete_threshold=None).weights,
                    fastfs.relieff(X, y, n_neighbors=k, discrete_threshold=None).weights)


def _relieff_exact_ties(X, y, k):
    """ReliefF (continuous features, class labels) from the definition, each distance summed
    exactly (fractions of the float64 terms |a - b| * (1 / range)) and rounded once, ties to the
    lower index."""
    from fractions import Fraction

    m, n = X.shape
    rng = X.max(axis=0) - X.min(axis=0)
    inv = np.where(rng > 0, 1.0 / np.where(rng > 0, rng, 1.0), 0.0)
    terms = [[Fraction(float(v)) for v in row] for row in (np.abs(X[:, None, :] - X[None, :, :])
                                                          * inv).reshape(m * m, n)]
    dist = np.array([float(sum(t, Fraction(0))) for t in terms]).reshape(m, m)
    _, codes = np.unique(y, return_inverse=True)
    C = codes.max() + 1
    w = np.zeros(n)
    for i in range(m):
        chosen, counts = [], []
        for c in range(C):
            cand = [j for j in range(m) if codes[j] == c and j != i]
            cand.sort(key=lambda j: (dist[i, j], j))
            chosen.append(cand[:k])
            counts.append(len(cand[:k]))
        h = counts[codes[i]]
        M = sum(counts) - h
        for c in range(C):
            coef = -1.0 / h if c == codes[i] else (counts[c] / M) * (C - 1) / M
            for j in chosen[c]:
                w += coef * np.abs(X[i] - X[j]) * inv
    return w / m


def test_relieff_exact_ties_go_to_the_lower_index():
    # Raw counts read as continuous: many pairs are at exactly the same distance (the same
    # differences in other features of the same range). The sparse distances are exact sums
    # of their terms, so these pairs tie and the lower index wins, whatever the feature order.
    rng = np.random.default_rng(21)
    X = rng.poisson(0.6, size=(36, 12)).astype(np.float64)
    X[:, :6] = np.minimum(X[:, :6], 2.0)  # equal ranges: exact ties across features
    y = rng.integers(0, 2, size=36)
    want = _relieff_exact_ties(X, y, 3)
    got = fastfs.relieff(sp.csr_matrix(X), y, n_neighbors=3, discrete_threshold=None).weights
    assert_same(got, want)
    perm = rng.permutation(12)
    permuted = fastfs.relieff(sp.csr_matrix(X[:, perm]), y, n_neighbors=3,
                              discrete_threshold=None).weights
    assert_same(permuted, got[perm])


@pytest.mark.parametrize("n_iter", [None, 150])
def test_relief_equals_dense(n_iter):
    for X in (bag_of_words(seed=6), bag_of_words(seed=7, tf=True)):
        y = targets(X.shape[0], 6)["binary"]
        dense = fastfs.relief(X, y, n_iter=n_iter, random_state=3).weights
        sparse = fastfs.relief(sp.csr_matrix(X), y, n_iter=n_iter, random_state=3).weights
        assert_same(sparse, dense)


@pytest.mark.parametrize("fmt", ["csc", "coo", "lil", "dok"])
def test_other_formats_accepted(fmt):
    X = bag_of_words(seed=8, tf=True)
    y = targets(X.shape[0], 8)["binary"]
    A = sp.csr_matrix(X).asformat(fmt)
    before = A.copy()
    assert_same(fastfs.multisurf(A, y).weights, fastfs.multisurf(X, y).weights)
    assert_same(fastfs.relief(A, y).weights, fastfs.relief(X, y).weights)
    assert (A != before).nnz == 0  # the caller's matrix is left alone


def test_sparse_array_float32_and_stored_zeros():
    X = bag_of_words(seed=9, tf=True).astype(np.float32)
    y = targets(X.shape[0], 9)["binary"]
    A = sp.csr_array(X)
    assert A.dtype == np.float32
    assert_same(fastfs.relieff(A, y).weights, fastfs.relieff(X, y).weights)
    # explicit zeros stored in .data are zeros
    B = sp.csr_matrix(X.astype(np.float64))
    B.data[::7] = 0.0
    D = B.toarray()
    assert B.nnz > np.count_nonzero(D)
    for func in (fastfs.relieff, fastfs.surfstar):
        assert_same(func(B, y).weights, func(D, y).weights)


def test_missing_and_infinite_values_refused():
    X = bag_of_words(seed=10)
    y = targets(X.shape[0], 10)["binary"]
    A = sp.csr_matrix(X)
    A.data[2] = np.nan
    with pytest.raises(ValueError, match="X: a sparse X with missing values"):
        fastfs.relieff(A, y)
    # plain Relief refuses NaN in dense X too, with the same message
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        fastfs.relief(X.copy() * np.nan, y)
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        fastfs.relief(A, y)
    A.data[2] = np.inf
    Xi = X.copy()
    Xi[0, 0] = np.inf
    for func in FAMILY:
        with pytest.raises(ValueError, match=r"X: contains infinity \(missing values are NaN\)"):
            func(Xi, y)
        with pytest.raises(ValueError, match=r"X: contains infinity \(missing values are NaN\)"):
            func(A, y)


def test_bad_input_sparse():
    X = sp.csr_matrix(bag_of_words(seed=11))
    with pytest.raises(ValueError, match="y: needs at least 2 classes"):
        fastfs.relieff(X, np.zeros(X.shape[0], dtype=int))
    with pytest.raises(ValueError, match="different numbers of samples"):
        fastfs.multisurf(X, np.arange(3) % 2)
    with pytest.raises(ValueError, match="X: has zero features"):
        fastfs.relieff(sp.csr_matrix((5, 0)), np.arange(5) % 2)


def test_callback_and_threads():
    X = bag_of_words(m=300, n=40, seed=12, tf=True)
    y = targets(X.shape[0], 12)["multi"]
    A = sp.csr_matrix(X)
    full = fastfs.relieff(A, y, n_jobs=1).weights
    assert_same(fastfs.relieff(A, y, n_jobs=2).weights, full)
    np.testing.assert_array_equal(fastfs.multisurfstar(A, y, n_jobs=1).weights,
                                  fastfs.multisurfstar(A, y, n_jobs=3).weights)
    seen = []

    def stop(state):
        seen.append(state.step)
        return True

    out = fastfs.relieff(A, y, callback=stop, n_jobs=1)
    assert seen == [1] and out.stopped_early
    # the first block's samples only (16 or more): equal to the dense pass stopped there
    dense = fastfs.relieff(X, y, callback=lambda s: True, n_jobs=1)
    assert_same(out.weights, dense.weights)


def test_against_skrebate_small():
    skrebate = pytest.importorskip("skrebate")
    X = bag_of_words(m=50, n=25, seed=13, tf=True, lam=1.0)
    X = np.unique(X, axis=0)  # skrebate's own tie order is arbitrary: no duplicates here
    X = X[:, np.ptp(X, axis=0) > 0]  # skrebate divides by the range of a continuous feature
    y = targets(X.shape[0], 13)["binary"]
    A = sp.csr_matrix(X)
    ours = fastfs.relieff(A, y, n_neighbors=5, discrete_threshold=None).weights
    ref = skrebate.ReliefF(n_neighbors=5, categorical_threshold=0, n_jobs=1).fit(X, y)
    np.testing.assert_allclose(ours, ref.feature_importances_, rtol=1e-6, atol=1e-9)
    ours = fastfs.multisurf(A, y, discrete_threshold=None).weights
    ref = skrebate.MultiSURF(categorical_threshold=0, n_jobs=1).fit(X, y)
    np.testing.assert_allclose(ours, ref.feature_importances_, rtol=1e-6, atol=1e-9)


_LARGE = """
import resource, sys
import numpy as np, scipy.sparse as sp
import fastfs
rng = np.random.default_rng(14)
m, n = 20_000, 50_000
A = sp.random(m, n, density=0.001, format="csr", random_state=rng,
              data_rvs=lambda k: rng.poisson(2.0, size=k) + 1.0)
y = rng.integers(0, 2, size=m)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
w = fastfs.relieff(A, y, n_neighbors=10, n_jobs=2).weights
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert np.isfinite(w).all() and np.abs(w).max() > 0
print(before * 1024, after * 1024)
"""


@pytest.mark.slow
def test_large_sparse_relieff_memory():
    """20,000 x 50,000 at 0.1% density (1e6 entries): ReliefF's peak memory stays O(nnz +
    threads x m), far below the 8 GB of a dense m x n float64 array (measured in a fresh
    process: the peak resident size)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _LARGE], capture_output=True, text=True,
                         env=env, timeout=600, check=True)
    before, after = (int(v) for v in out.stdout.split())
    assert after - before < 300e6  # the scores' pass: no m x n (8e9 bytes) nor m x m array
