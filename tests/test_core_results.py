"""The typed results of fastfs._core: one bound class per result (no dicts), arrays that are
views of the result's own memory, and pickling (fastfs.dask ships them between processes)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastfs import _core


def _data(rng, m=40, n=6, k=3):
    X = rng.standard_normal((m, n))
    codes = np.arange(m, dtype=np.int64) % k
    X[:, 0] += codes  # one informative feature
    return np.ascontiguousarray(X), codes


def _results(rng):
    """One result of every typed class, from small problems."""
    X, codes = _data(rng)
    m, n = X.shape
    binary = (codes == 1).astype(np.int64)
    y = X[:, 0] + 0.1 * X[:, 1]
    F = np.asfortranarray(X)
    S = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    C = S.tocsc()
    order = list(range(m))
    j3 = _core.CriterionSpec("j3", ridge=0.0)
    return {
        "ClassMoments": _core.class_moments(X, codes, 3, 1),
        "CrossMoments": _core.cross_moments(X, y - y.mean(), 1),
        "RankSums": _core.rank_sums(X, binary, 1),
        "TableStats": _core.table_stats(X, codes, 3, "quantile", 4, 0.5, 1),
        "SparseMoments": _core.sparse_moments(m, n, False, S.indptr, S.indices, S.data, codes,
                                              3, np.empty(0), 1),
        "TableStats (CSC)": _core.table_stats_csc(m, C.indptr, C.indices, C.data, codes, 3,
                                                  0.0, 1),
        "LogisticFit": _core.logistic_fit(X, codes, 3, 1.0, 1e-8, 100, None),
        "LogisticL1Path": _core.logistic_l1_path(X, binary, [0.1, 1.0], 1e-6, 100),
        "RidgeFit": _core.ridge_fit(X, y, 1.0),
        "LinearSelection": _core.omp(F, y, 3, "qr", "exact", 1e-10, 1, None),
        "LinearSelection (backward)": _core.backward_least_squares(F, y, 3, 1e-10, 1),
        "LassoPath": _core.lasso_path_data(F, y, np.array([0.5, 0.05]), 1e-8, 1000, 1),
        "GFlipResult": _core.gflip(X, codes, "linear", 1.0, 5, 2, np.zeros(n, np.uint8), 0, 1,
                                   None),
        "KnnRegressionResult": _core.knn_regression(X, y, np.ones(n), 5, 0.0, 1),
        "RgsResult": _core.rgs(X, y, 5, 0.0, m, [0.1] * m, 1, order, 0, 1, None),
        "SimbaResult": _core.simba(X, codes, "linear", 1.0, m, 2, order, 0, 1, None),
        "StirResult": _core.relief_stir(X, codes, "relieff", 3, 1),
        "SearchResult": _core.search("sfs", X, codes, None, j3, None, 3, False, False, 0.0, 0,
                                     0, 1, 0.0, False, 1, None),
        "RankResult": _core.rank_features(X, codes, None, j3, None, 2, 1),
        "CriterionSpec": _core.CriterionSpec("holdout_error", fit_rows=[0, 1, 2],
                                             score_rows=[3, 4], n_classes=3, C=2.0),
    }


def _same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        assert_array_equal(a, b)  # NaN equal to NaN
    else:
        assert type(a) is type(b) and a == b or (a != a and b != b)


def test_every_core_result_is_typed_and_pickles_round_trip(rng):
    results = _results(rng)
    names = {name.split(" ")[0] for name in results}
    assert len(names) == 18
    for name, r in results.items():
        assert not isinstance(r, dict), name
        assert type(r).__name__ == name.split(" ")[0]
        assert type(r).__module__ == "fastfs._core"
        back = pickle.loads(pickle.dumps(r))
        assert type(back) is type(r)
        assert back == r and not (back != r)
        for f in type(r)._fields:
            _same(getattr(back, f), getattr(r, f))
        assert repr(back) == repr(r)
        assert repr(r).startswith(type(r).__name__ + "(")


def test_result_arrays_are_views_of_the_result(rng):
    X, codes = _data(rng)
    r = _core.class_moments(X, codes, 3, 1)
    # no copy per access: every access sees the result's own memory
    assert r.mean.base is r and np.shares_memory(r.mean, r.mean)
    with pytest.raises(AttributeError):
        r.mean = np.zeros(3)
    # the view outlives the name of the result
    mean = r.mean
    del r
    for c in range(3):
        assert_allclose(mean[c], X[codes == c].mean(axis=0), rtol=1e-12)


def test_result_fields_against_numpy(rng):
    X, codes = _data(rng)
    r = _core.class_moments(X, codes, 3, 1)
    assert r._fields == ("counts", "mean", "m2", "centred")
    assert_array_equal(r.counts, np.bincount(codes))
    assert r.mean.shape == r.m2.shape == (3, X.shape[1])
    for c in range(3):
        dev = X[codes == c] - X[codes == c].mean(axis=0)
        assert_allclose(r.m2[c], (dev ** 2).sum(axis=0), rtol=1e-10)
    y = X[:, 0] + 0.1 * X[:, 1]
    ridge = _core.ridge_fit(X, y, 0.0)
    A = np.column_stack([X, np.ones(X.shape[0])])
    assert_allclose(ridge.coef, np.linalg.lstsq(A, y, rcond=None)[0], rtol=1e-8, atol=1e-10)
    g = _core.gflip(X, codes, "linear", 1.0, 5, 1, np.zeros(X.shape[1], np.uint8), 0, 1, None)
    assert g.support.dtype == bool
    assert_array_equal(np.flatnonzero(g.support), np.sort(g.selected))


def test_results_compare_by_value(rng):
    X, codes = _data(rng)
    a = _core.class_moments(X, codes, 3, 1)
    b = _core.class_moments(X.copy(), codes, 3, 1)
    c = _core.class_moments(X[::-1].copy(), codes, 3, 1)
    assert a == b and a != c
    assert a != _core.rank_sums(X, (codes == 1).astype(np.int64), 1)
    with pytest.raises(TypeError):
        hash(a)


def test_criterion_spec_is_checked_once():
    spec = _core.CriterionSpec("margin", utility="sigmoid", beta=2.0)
    assert (spec.kind, spec.utility, spec.beta) == ("margin", "sigmoid", 2.0)
    with pytest.raises(ValueError, match="criterion: unknown kind 'nope'"):
        _core.CriterionSpec("nope")
    with pytest.raises(ValueError, match="utility"):
        _core.CriterionSpec("margin", utility="nope")
    with pytest.raises(TypeError):
        _core.CriterionSpec("j3", {"ridge": 1.0})  # parameters are typed keywords, not a dict
