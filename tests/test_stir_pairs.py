"""STIR's pair graph, counted in the C++ neighbour pass (per sample the hit and miss pairs it
belongs to, as the query or as the neighbour, and the mutual ordered pairs), against the NumPy /
SciPy count of tests/reference.py on the same neighbourhoods: ReliefF with k = 1, 3, 10 and
classes smaller than k, MultiSURF; continuous data, exact ties and duplicate rows; binary and
multi-class; 1 and 2 threads (the pass goes in steps of one block per thread, so 2 threads
decide pairs across and within steps differently)."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from fastfs import _core
from numpy.testing import assert_allclose, assert_array_equal

# fastfs.stir's own module (the package exports the function under the same name)
stir_module = __import__("fastfs.stir", fromlist=["pair_graph_weights"])


def _scaled(X):
    lo = X.min(axis=0)
    rng = X.max(axis=0) - lo
    return np.where(rng > 0, (X - lo) / np.where(rng > 0, rng, 1.0), 0.0)


def _data(kind, m, n, classes, seed):
    gen = np.random.default_rng(seed)
    y = gen.integers(0, classes, size=m)
    if kind == "ties":
        # values 0 .. 4 with both ends in every column: the scaled values are multiples of
        # 1/4 and every distance is exact, so many are exactly equal (ties at the k-th place)
        X = gen.integers(0, 5, size=(m, n)).astype(np.float64)
        X[0], X[1] = 0.0, 4.0
    else:
        X = gen.normal(size=(m, n))
        X[:, 0] += y
    if kind == "duplicates":
        X[10:20] = X[0]  # distance 0 to each other, across classes
        X[40:43] = X[39]
    return np.ascontiguousarray(X), y


def _counts(X, y, method, k, threads):
    return _core.relief_stir(X, y.astype(np.int64), method, k, threads, None)


CASES = ([("relieff", k) for k in (1, 3, 10, 80)]  # k = 80: larger than every class
         + [("multisurf", 1)])


@pytest.mark.parametrize("kind", ["continuous", "ties", "duplicates"])
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("method,k", CASES)
def test_pair_counts_equal_reference(method, k, classes, kind):
    X, y = _data(kind, m=150, n=6, classes=classes, seed=classes + k)
    cnt, mutual = ref.stir_pair_counts(_scaled(X), y, method, k)
    assert mutual.sum() > 0
    for threads in (1, 2):
        out = _counts(X, y, method, k, threads)
        assert_array_equal(out.hit_pairs, cnt[:, 0])
        assert_array_equal(out.miss_pairs, cnt[:, 1])
        assert (out.mutual_hit, out.mutual_miss) == (mutual[0], mutual[1])
        # every pair has two ends
        assert out.hit_pairs.sum() == 2 * out.n_hit and out.miss_pairs.sum() == 2 * out.n_miss


@pytest.mark.parametrize("method,k", [("relieff", 3), ("multisurf", 1)])
def test_pair_counts_many_features_and_samples(method, k):
    # n >= 64: ReliefF's float32 shortlist picks the neighbours; m = 700: 11 samples per block,
    # raised to 16, so 44 blocks and many steps with 2 threads
    X, y = _data("continuous", m=700, n=70, classes=3, seed=9)
    cnt, mutual = ref.stir_pair_counts(_scaled(X), y, method, k)
    for threads in (1, 2):
        out = _counts(X, y, method, k, threads)
        assert_array_equal(out.hit_pairs, cnt[:, 0])
        assert_array_equal(out.miss_pairs, cnt[:, 1])
        assert (out.mutual_hit, out.mutual_miss) == (mutual[0], mutual[1])


def test_pair_graph_weights_equal_reference():
    X, y = _data("continuous", m=90, n=5, classes=2, seed=4)
    cnt, mutual = ref.stir_pair_counts(_scaled(X), y, "relieff", 5)
    a_ref, B_ref = ref.stir_pair_graph_constants(cnt, mutual)
    out = _counts(X, y, "relieff", 5, 2)
    a, B = stir_module.pair_graph_weights(out.hit_pairs, out.miss_pairs, out.mutual_hit,
                                          out.mutual_miss)
    assert_allclose(a, a_ref, rtol=1e-15, atol=1e-18)
    assert_allclose(B, B_ref, rtol=1e-15)
    # the written-out sum over pairs (b_xz per unordered pair) of the pairwise reference
    pairs, _ = ref.stir_pairs(X, y, "relieff", 5)
    n_hit = sum(1 for p in pairs if p[2])
    n_miss = len(pairs) - n_hit
    b = np.zeros((90, 90))
    for s, j, h in pairs:
        w = -1.0 / n_hit if h else 1.0 / n_miss
        b[s, j] += w
        b[j, s] += w
    assert_allclose(a, b.sum(axis=1), rtol=1e-12, atol=1e-15)
    assert_allclose(B, (np.triu(b, 1) ** 2).sum(), rtol=1e-12)



@pytest.mark.parametrize("kind", ["continuous", "ties", "duplicates"])
def test_null_components_equal_reference(kind):
    X, _ = _data(kind, m=150, n=40, classes=2, seed=3)
    X[:, 5] = 2.5  # a constant feature: no difference at all
    a = np.random.default_rng(0).normal(size=150)
    v1_ref, s2_ref = ref.stir_hoeffding_components(X, a)
    v1, s2 = _core.stir_null_components(X, a, 1)
    assert_allclose(v1, v1_ref, rtol=1e-11, atol=1e-300)
    assert_allclose(s2, s2_ref, rtol=1e-9, atol=1e-15)
    assert v1[5] == 0.0 and s2[5] == 0.0
    v1_2, s2_2 = _core.stir_null_components(X, a, 2)
    assert_array_equal(v1_2, v1)
    assert_array_equal(s2_2, s2)
    # float32 input: the same formula on the float32 values
    X32 = X.astype(np.float32)
    v1_32, s2_32 = _core.stir_null_components(X32, a, 2)
    v1_r32, s2_r32 = ref.stir_hoeffding_components(X32, a)
    assert_allclose(v1_32, v1_r32, rtol=1e-11, atol=1e-300)
    assert_allclose(s2_32, s2_r32, rtol=1e-9, atol=1e-15)
