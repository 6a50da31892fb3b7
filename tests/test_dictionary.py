"""fastfs.dictionary (book section 25.3): k-means one-hot encoding, sparse coding by OMP (against
scikit-learn's SparseCoder and the book's OMP in tests/reference.py) and by the LASSO (its
optimality conditions), dictionary learning on a planted dictionary; scikit-learn's checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("sklearn")
from sklearn.cluster import KMeans  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.decomposition import SparseCoder  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fastfs.dictionary import (  # noqa: E402
    DictionaryLearner,
    KMeansEncoder,
    SparseCoding,
    sparse_code,
)
from reference import omp_book  # noqa: E402


def _unit_rows(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


def test_kmeans_encoder_is_one_hot_of_nearest_centroid(rng):
    X = np.vstack([rng.standard_normal((30, 4)) + c for c in ([0] * 4, [6] * 4, [-6] * 4)])
    enc = KMeansEncoder(3, random_state=0).fit(X)
    km = KMeans(3, n_init="auto", random_state=0).fit(X)
    assert_allclose(enc.components_, km.cluster_centers_)
    Z = enc.transform(X)
    nearest = np.argmin(((X[:, None, :] - enc.components_[None]) ** 2).sum(axis=2), axis=1)
    assert_array_equal(Z, np.eye(3)[nearest])
    assert_allclose(enc.inverse_transform(Z), enc.components_[nearest])
    assert list(enc.get_feature_names_out()) == [f"kmeansencoder{i}" for i in range(3)]


def test_omp_codes_equal_sklearn_and_book_omp(rng):
    D = _unit_rows(rng.standard_normal((15, 20)))
    X = rng.standard_normal((25, 20))
    for s in (1, 3, 6):
        codes = SparseCoding(D, n_nonzero_coefs=s).fit(X).transform(X)
        sk = SparseCoder(D, transform_algorithm="omp", transform_n_nonzero_coefs=s).transform(X)
        assert_allclose(codes, sk, rtol=1e-10, atol=1e-12)
        for i in range(X.shape[0]):
            sel, coef, _ = omp_book(D.T, X[i], s, criterion="gradient")
            expected = np.zeros(15)
            expected[sel] = coef
            assert_allclose(codes[i], expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("scale", [1e-200, 1e-9, 1e-8, 1e100, 1e150])
def test_omp_codes_scale_with_the_signals(rng, scale):
    """OMP's codes of c x are c times those of x: its stopping rules are relative (a fixed
    threshold of 1.5e-8 on the correlations coded nothing for signals of 1e-9)."""
    D = _unit_rows(rng.standard_normal((30, 20)))
    X = rng.standard_normal((8, 20))
    want = SparseCoder(D, transform_algorithm="omp", transform_n_nonzero_coefs=3).transform(X)
    got = sparse_code(X * scale, D, n_nonzero_coefs=3)
    assert np.count_nonzero(got, axis=1).tolist() == [3] * 8
    assert_allclose(got / scale, want, rtol=1e-9, atol=1e-12)
    # the dictionary's scale too: atoms c d_j give codes v_j / c (while c^2, the Gram
    # matrix's scale, is a normal float64)
    if 1e-150 < scale < 1e150:
        assert_allclose(sparse_code(X, D * scale, n_nonzero_coefs=3) * scale, want,
                        rtol=1e-9, atol=1e-12)
    # a zero signal has the zero code
    assert_array_equal(sparse_code(np.zeros((2, 20)), D, n_nonzero_coefs=3), 0.0)


def test_dictionary_learning_at_tiny_scale_learns_the_same_atoms(rng):
    X = rng.standard_normal((60, 8))
    a = DictionaryLearner(4, n_nonzero_coefs=2, max_iter=5, random_state=0).fit(X)
    b = DictionaryLearner(4, n_nonzero_coefs=2, max_iter=5, random_state=0).fit(X * 1e-9)
    assert_allclose(b.components_, a.components_, rtol=1e-6, atol=1e-9)


def test_lasso_codes_satisfy_optimality_of_book_objective(rng):
    # min_v ||x - v D||^2 + lam ||v||_1: 2 D (x - v D) = lam sign(v) where v != 0, and
    # |2 D (x - v D)| <= lam where v == 0.
    D = _unit_rows(rng.standard_normal((12, 30)))
    X = rng.standard_normal((8, 30))
    lam = 1.5
    V = sparse_code(X, D, algorithm="lasso", alpha=lam, max_iter=100000)
    assert (V == 0).any() and (V != 0).any()
    G = 2 * (X - V @ D) @ D.T
    nz = V != 0
    assert_allclose(G[nz], lam * np.sign(V[nz]), atol=1e-3)
    assert (np.abs(G[~nz]) <= lam + 1e-3).all()
    assert_allclose(SparseCoding(D, algorithm="lasso", alpha=lam, lasso_max_iter=100000)
                    .fit(X).transform(X), V, atol=1e-8)


def test_dictionary_learning_recovers_planted_atoms():
    # Every instance is a signed multiple of one of 5 unit atoms (plus noise): the learned
    # atoms must be the planted ones up to sign and order.
    gen = np.random.default_rng(3)
    k, d, n = 5, 10, 200
    D_true = _unit_rows(gen.standard_normal((k, d)))
    V = np.zeros((n, k))
    V[np.arange(n), gen.integers(0, k, n)] = gen.uniform(1, 2, n) * gen.choice([-1, 1], n)
    X = V @ D_true + 0.01 * gen.standard_normal((n, d))
    dl = DictionaryLearner(k, n_nonzero_coefs=1, random_state=0).fit(X)
    cos = np.abs(D_true @ dl.components_.T)
    assert cos.max(axis=1).min() > 0.999
    assert dl.error_.min() < 0.01 * dl.error_[0]
    assert_allclose(np.linalg.norm(dl.components_, axis=1), 1.0)
    Z = dl.transform(X)
    assert ((Z != 0).sum(axis=1) <= 1).all()
    assert np.mean((dl.inverse_transform(Z) - X) ** 2) < 1e-3


def test_bad_input(rng):
    X = rng.standard_normal((10, 5))
    with pytest.raises(ValueError, match=r"dictionary: expected shape \(n_components, 5\)"):
        SparseCoding(np.ones((3, 4))).fit(X)
    with pytest.raises(ValueError, match="algorithm: unknown value 'lars'"):
        SparseCoding(np.ones((3, 5)), algorithm="lars").fit(X)
    with pytest.raises(ValueError, match="alpha: must be a finite number > 0"):
        sparse_code(X, np.ones((3, 5)), algorithm="lasso", alpha=0.0)
    with pytest.raises(ValueError, match="n_components: must be >= 1"):
        DictionaryLearner(0).fit(X)
    for tol in ("a", -0.1, 1.0, True):
        with pytest.raises(ValueError, match=r"tol: expected a number in \[0, 1\)"):
            DictionaryLearner(2, tol=tol).fit(X)
    with pytest.raises(ValueError, match="dictionary: required"):
        SparseCoding().fit(X)
    D = np.ones((3, 5))
    for algorithm in ("omp", "lasso"):
        with pytest.raises(ValueError, match="X: contains NaN or infinity"):
            sparse_code(np.where(X > 1, np.nan, X), D, algorithm=algorithm)
        with pytest.raises(ValueError, match="dictionary: contains NaN or infinity"):
            sparse_code(X, np.full((3, 5), np.inf), algorithm=algorithm)
        with pytest.raises(ValueError, match="X: expected a 2-D array"):
            sparse_code(X[0], D, algorithm=algorithm)


# scikit-learn's estimator checks. SparseCoding's dictionary (5 atoms of 3 features, as
# scikit-learn checks its own SparseCoder) fixes n_features: the checks that fit it on data of
# another width fail with the dictionary's shape error, as they do for SparseCoder.
SPARSE_CODING_WIDTH = ("check_estimators_overwrite_params", "check_estimators_fit_returns_self",
                       "check_readonly_memmap_input", "check_n_features_in_after_fitting",
                       "check_positive_only_tag_during_fit", "check_estimators_dtypes",
                       "check_dtype_object", "check_fit2d_1sample", "check_fit2d_1feature",
                       "check_fit_idempotent", "check_fit_check_is_fitted",
                       "check_n_features_in")


def _expected_failures(estimator):
    if isinstance(estimator, SparseCoding):
        return {name: "the dictionary fixes n_features" for name in SPARSE_CODING_WIDTH}
    return {}


@parametrize_with_checks([KMeansEncoder(3, random_state=0),
                          DictionaryLearner(3, n_nonzero_coefs=1, max_iter=5, random_state=0),
                          DictionaryLearner(3, algorithm="lasso", alpha=0.1, max_iter=3,
                                            random_state=0),
                          SparseCoding(np.random.default_rng(0).standard_normal((5, 3)))],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_omp_codes_same_for_any_thread_count_and_dependent_atoms(rng):
    D = _unit_rows(rng.standard_normal((40, 16)))
    D[5] = D[3]  # a repeated atom never enters twice
    X = rng.standard_normal((300, 16))
    a = sparse_code(X, D, n_nonzero_coefs=6, n_jobs=1)
    b = sparse_code(X, D, n_nonzero_coefs=6, n_jobs=2)
    assert_array_equal(a, b)
    assert not ((a[:, 3] != 0) & (a[:, 5] != 0)).any()
    # An instance equal to an atom is coded by that atom alone (the residual vanishes).
    c = sparse_code(D[7:8] * 2.5, D, n_nonzero_coefs=4)
    expected = np.zeros((1, 40))
    expected[0, 7] = 2.5
    assert_allclose(c, expected, atol=1e-12)


@pytest.mark.parametrize("s", [1e-170, 1e160, 2.0**-600])
def test_sparse_code_omp_with_atoms_of_extreme_magnitude(s):
    """The Gram products of a dictionary of 1e-170 vanished (1e160: overflowed) and every
    code came back 0, silently. x = v D: atoms times s give codes divided by s."""
    rng = np.random.default_rng(0)
    D = rng.standard_normal((30, 20))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    x = rng.standard_normal((3, 20))
    base = sparse_code(x, D, n_nonzero_coefs=3)
    got = sparse_code(x, D * s, n_nonzero_coefs=3)
    assert np.count_nonzero(got) == np.count_nonzero(base) == 9
    np.testing.assert_allclose(got * s, base, rtol=1e-10)
    np.testing.assert_allclose(sparse_code(x * 1e200, D, n_nonzero_coefs=3) / 1e200, base,
                               rtol=1e-10)
    with pytest.raises(ValueError, match="^dictionary: the codes"):
        sparse_code(x * 1e300, D * 1e-300, n_nonzero_coefs=3)


def test_kmeans_encoder_transforms_either_float_type_and_takes_any_seed():
    """KMeans.predict refused the float type the encoder was not fitted in (a raw Cython
    error); a Generator or a seed of 2**32 or more was refused, and -1 without naming
    random_state."""
    X = np.random.default_rng(0).normal(size=(50, 4))
    enc = KMeansEncoder(3, random_state=0).fit(X)
    assert_array_equal(enc.transform(X.astype(np.float32)), enc.transform(X))
    assert enc.transform(X.astype(np.float32)).dtype == np.float32
    assert_allclose(enc.components_, KMeans(3, random_state=0).fit(X).cluster_centers_)
    enc32 = KMeansEncoder(3, random_state=0).fit(X.astype(np.float32))
    assert enc32.transform(X).shape == (50, 3)
    for seed in (np.random.default_rng(1), 2**40):
        KMeansEncoder(3, random_state=seed).fit(X)
        DictionaryLearner(3, random_state=seed, max_iter=3).fit(X)
    a = KMeansEncoder(3, random_state=2**40).fit(X).components_
    assert_array_equal(a, KMeansEncoder(3, random_state=2**40).fit(X).components_)
    for cls in (KMeansEncoder, DictionaryLearner):
        with pytest.raises(ValueError, match="^random_state: "):
            cls(3, random_state=-1).fit(X)
    with pytest.raises(ValueError, match="^n_jobs: "):
        SparseCoding(dictionary=np.eye(4), n_jobs=0).fit(X)


@pytest.mark.parametrize("dx, dd", [(np.float32, np.float64), (np.float64, np.float32),
                                    (np.float32, np.float32)])
def test_sparse_code_lasso_takes_mixed_float_types(dx, dd):
    gen = np.random.default_rng(0)
    X = gen.standard_normal((5, 3))
    D = gen.standard_normal((2, 3))
    want = sparse_code(X, D, algorithm="lasso", alpha=0.1)
    both32 = dx == dd == np.float32
    with warnings.catch_warnings():
        # scikit-learn's float32 solver may stop a hair above its tolerance
        warnings.simplefilter("ignore", ConvergenceWarning)
        got = sparse_code(X.astype(dx), D.astype(dd), algorithm="lasso", alpha=0.1)
    assert got.dtype == (np.float32 if both32 else np.float64)
    assert_allclose(got, want, rtol=1e-3 if both32 else 1e-5, atol=1e-4 if both32 else 1e-5)


def test_sparse_code_input_errors_and_frames():
    sp = pytest.importorskip("scipy.sparse")
    gen = np.random.default_rng(1)
    X = gen.standard_normal((6, 4))
    D = gen.standard_normal((3, 4))
    with pytest.raises(TypeError, match="X: sparse matrices are not supported"):
        sparse_code(sp.csr_matrix(X), D)
    with pytest.raises(ValueError, match="dictionary: expected shape"):
        sparse_code(X, np.zeros((0, 4)))
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X).astype("Float64")
    assert_array_equal(sparse_code(frame, D, n_nonzero_coefs=2),
                       sparse_code(X, D, n_nonzero_coefs=2))


def test_dictionary_learner_callback_reports_and_stops():
    # SPEC 1.7: one StepState per iteration (restart, 1-based step, the reconstruction
    # error, the dictionary); True stops the fit, keeping the best dictionary seen so far.
    X = np.random.default_rng(0).normal(size=(60, 10))
    full = DictionaryLearner(4, random_state=0).fit(X)
    seen = []

    def record(state):
        seen.append((state.restart, state.step, state.score, state.selection.copy()))
        assert not state.selection.flags.writeable

    same = DictionaryLearner(4, random_state=0, callback=record).fit(X)
    assert_array_equal(same.components_, full.components_)
    assert not same.stopped_early_
    assert [s[0] for s in seen].count(0) >= 1 and {s[0] for s in seen} == {0, 1, 2}
    for r in range(3):
        steps = [s[1] for s in seen if s[0] == r]
        assert steps == list(range(1, len(steps) + 1))
    # the error reported is that of the codes against the dictionary reported
    r0, s0, err, D = seen[4]
    V = sparse_code(X, D)
    assert err == pytest.approx(((X - V @ D) ** 2).sum() / len(X), rel=1e-12)
    # stopping in the second start: the best of what was seen (errors of the kept run)
    stop = DictionaryLearner(4, random_state=0,
                             callback=lambda s: s.restart == 1 and s.step == 3).fit(X)
    assert stop.stopped_early_
    first = [s[2] for s in seen if s[0] == 0]
    second = [s[2] for s in seen if s[0] == 1][:3]
    kept = first if min(first) <= min(second) else second
    assert_array_equal(stop.error_, kept)
    with pytest.raises(TypeError, match="callback"):
        DictionaryLearner(4, callback=3).fit(X)
