"""SPEC 1.1-1.3, 1.5, 1.6: input conversion, bad-input errors, the memory guard, random_state,
n_jobs and concurrent calls, for margins, margin_score and gflip."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastfs
import reference as ref
from assertions import same_result


def _margins(X, y, **kw):
    return fastfs.margins(X, y, **kw)


def _margin_score(X, y, **kw):
    return fastfs.margin_score(X, y, **kw)


def _gflip(X, y, **kw):
    return fastfs.gflip(X, y, random_state=0, **kw)


FUNCS = pytest.mark.parametrize("func", [_margins, _margin_score, _gflip],
                                ids=["margins", "margin_score", "gflip"])


# ------------------------------------------------------------------------------------------
# X


@FUNCS
def test_nan_in_X(func, small_problem):
    X, y = small_problem
    X = X.copy()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X.*NaN"):
        func(X, y)


@FUNCS
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_inf_in_X(func, small_problem, value):
    X, y = small_problem
    X = X.copy()
    X[0, 0] = value
    with pytest.raises(ValueError, match=r"X.*inf"):
        func(X, y)


@FUNCS
def test_nan_in_float32_X(func, small_problem):
    X, y = small_problem
    X = X.astype(np.float32)
    X[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"X.*NaN"):
        func(X, y)


def unaligned_copy(X, dtype):
    """X in a buffer at an odd byte offset: a view NumPy itself flags as unaligned."""
    X = np.asarray(X, dtype=dtype)
    buf = bytearray(X.nbytes + 1)
    out = np.frombuffer(buf, dtype=dtype, offset=1, count=X.size).reshape(X.shape)
    out[...] = X
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.filterwarnings("ignore:gflip. selected no feature:UserWarning")  # noise data
def test_unaligned_X_reaches_the_core_aligned(rng, dtype, order):
    # The core loads whole floats: a view at an odd byte offset is copied (undefined behaviour
    # otherwise, as UBSan reports), and the results are those of an aligned copy.
    from fastfs._validation import check_X
    X = rng.standard_normal((300, 230))  # large enough for the tiled Fortran copy too
    y = np.arange(300) % 3
    odd = unaligned_copy(X, dtype)
    got = check_X(odd, order=order).values
    assert got.flags.aligned
    assert got.flags.c_contiguous if order == "C" else got.flags.f_contiguous
    assert_array_equal(got, X.astype(dtype))
    small = unaligned_copy(X[:40, :6], dtype)
    same_result(fastfs.gflip(small, y[:40], random_state=0),
                fastfs.gflip(np.array(small), y[:40], random_state=0))
    assert_array_equal(fastfs.relieff(small, y[:40]).weights,
                       fastfs.relieff(np.array(small), y[:40]).weights)
    assert_array_equal(fastfs.filters.anova_f(odd, y).scores,
                       fastfs.filters.anova_f(np.array(odd), y).scores)


@FUNCS
def test_fewer_than_two_samples(func):
    with pytest.raises(ValueError, match=r"X.*at least 2 samples.*got 1"):
        func(np.ones((1, 3)), np.array([0]))
    with pytest.raises(ValueError, match=r"X.*at least 2 samples.*got 0"):
        func(np.ones((0, 3)), np.array([], dtype=int))


@FUNCS
def test_zero_features(func):
    with pytest.raises(ValueError, match=r"X.*zero features"):
        func(np.ones((6, 0)), np.array([0, 0, 0, 1, 1, 1]))


@FUNCS
@pytest.mark.parametrize("shape", [(10,), (2, 5, 2)])
def test_X_not_2d(func, shape):
    X = np.arange(np.prod(shape), dtype=float).reshape(shape)
    with pytest.raises(ValueError, match=r"X.*2-D"):
        func(X, np.repeat([0, 1], 5))


@FUNCS
def test_X_strings(func):
    X = np.array([["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]])
    with pytest.raises(TypeError, match=r"X.*real numbers"):
        func(X, np.array([0, 0, 1, 1]))


@FUNCS
def test_X_object_dtype(func):
    X = np.array([[1.0, "x"], [2.0, "y"], [3.0, "z"], [4.0, "w"]], dtype=object)
    with pytest.raises(TypeError, match=r"X.*real numbers"):
        func(X, np.array([0, 0, 1, 1]))


@FUNCS
def test_X_complex(func, small_problem):
    X, y = small_problem
    with pytest.raises(TypeError, match=r"X.*complex"):
        func(X + 1j, y)


@FUNCS
def test_X_sparse(func, small_problem):
    sparse = pytest.importorskip("scipy.sparse")
    X, y = small_problem
    for fmt in (sparse.csr_matrix, sparse.csc_matrix):
        with pytest.raises(TypeError, match=r"X.*sparse"):
            func(fmt(X), y)


# ------------------------------------------------------------------------------------------
# y


@FUNCS
def test_y_2d(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"y.*1-D"):
        func(X, y.reshape(-1, 1))
    with pytest.raises(ValueError, match=r"y.*1-D"):
        func(X, np.column_stack([y, y]))


@FUNCS
def test_mismatched_lengths(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"X and y.*different numbers of samples.*20.*19"):
        func(X, y[:-1])


@FUNCS
def test_single_class(func, small_problem):
    X, _ = small_problem
    with pytest.raises(ValueError, match=r"y.*at least 2 classes"):
        func(X, np.zeros(X.shape[0], dtype=int))
    with pytest.raises(ValueError, match=r"y.*at least 2 classes"):
        func(X, np.array(["only"] * X.shape[0]))


@FUNCS
def test_every_class_a_singleton(func, rng):
    X = rng.standard_normal((5, 3))
    with pytest.raises(ValueError, match=r"y.*every class has a single sample") as err:
        func(X, np.arange(5))
    assert "continuous" not in str(err.value)
    # a real-valued y read as labels: the message says what it is and what to use
    with pytest.raises(ValueError, match=r"y: every class has a single sample.*; y holds "
                       r"continuous values, and these methods need class labels \(for a real "
                       r"target: rgs"):
        func(X, X[:, 0] * 1.5 + 0.25)


@FUNCS
def test_nan_label(func, small_problem):
    X, y = small_problem
    y = y.astype(float)
    y[2] = np.nan
    with pytest.raises(ValueError, match=r"y.*NaN"):
        func(X, y)


@FUNCS
def test_missing_label(func, small_problem):
    X, y = small_problem
    y = y.astype(object)
    y[4] = None
    with pytest.raises(ValueError, match=r"y.*missing"):
        func(X, y)


@FUNCS
def test_unsortable_labels(func, small_problem):
    X, _ = small_problem
    y = np.array([1, "a"] * 10, dtype=object)
    with pytest.raises(TypeError, match=r"y.*labels"):
        func(X, y)


@pytest.mark.parametrize("kind", ["bool", "category", "object-str"])
def test_other_label_types_work(small_problem, kind):
    pd = pytest.importorskip("pandas")
    X, y = small_problem
    labels = {
        "bool": y.astype(bool),
        "category": pd.Series(np.array(["no", "yes"])[y], dtype="category"),
        "object-str": np.array(["no", "yes"], dtype=object)[y],
    }[kind]
    assert_array_equal(fastfs.margins(X, labels), fastfs.margins(X, y))
    same_result(fastfs.gflip(X, labels, random_state=0), fastfs.gflip(X, y, random_state=0))


# ------------------------------------------------------------------------------------------
# options and sizes


@pytest.mark.parametrize("func", [_margin_score, _gflip], ids=["margin_score", "gflip"])
def test_unknown_utility_lists_valid_options(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"utility.*'hinge'.*'linear', 'zero_one', 'sigmoid'"):
        func(X, y, utility="hinge")


@pytest.mark.parametrize("func", [_margin_score, _gflip], ids=["margin_score", "gflip"])
@pytest.mark.parametrize("beta", [0.0, -1.0])
def test_beta_must_be_positive(func, small_problem, beta):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"beta.*> 0"):
        func(X, y, utility="sigmoid", beta=beta)


@pytest.mark.parametrize("beta", [np.nan, np.inf])
def test_beta_must_be_finite(small_problem, beta):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"beta.*finite"):
        fastfs.margin_score(X, y, utility="sigmoid", beta=beta)


def test_beta_must_be_a_number(small_problem):
    X, y = small_problem
    with pytest.raises(TypeError, match=r"beta"):
        fastfs.gflip(X, y, beta="1.0")


@pytest.mark.parametrize("name", ["max_epochs", "n_restarts"])
@pytest.mark.parametrize("value", [0, -1])
def test_sizes_must_be_positive(small_problem, name, value):
    X, y = small_problem
    with pytest.raises(ValueError, match=rf"{name}.*>= 1"):
        fastfs.gflip(X, y, **{name: value})


@pytest.mark.parametrize("name", ["max_epochs", "n_restarts"])
@pytest.mark.parametrize("value", [2.5, "3", True])
def test_sizes_must_be_integers(small_problem, name, value):
    X, y = small_problem
    with pytest.raises(TypeError, match=name):
        fastfs.gflip(X, y, **{name: value})


@FUNCS
def test_n_jobs_zero(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"n_jobs.*0"):
        func(X, y, n_jobs=0)


@FUNCS
def test_n_jobs_wrong_type(func, small_problem):
    X, y = small_problem
    with pytest.raises(TypeError, match=r"n_jobs"):
        func(X, y, n_jobs=1.5)


@FUNCS
def test_n_jobs_minus_one_and_none_work(func, small_problem):
    X, y = small_problem
    base = func(X, y, n_jobs=1)
    for n_jobs in (-1, None, 2, -2, 64):
        got = func(X, y, n_jobs=n_jobs)
        if func is _gflip:
            same_result(got, base)
        else:
            assert_array_equal(got, base)


@pytest.mark.parametrize("random_state", ["seed", 1.5, [1, 2], True])
def test_bad_random_state_type(small_problem, random_state):
    X, y = small_problem
    with pytest.raises(TypeError, match=r"random_state"):
        fastfs.gflip(X, y, random_state=random_state)


@pytest.mark.parametrize("random_state", [-1, 2**64])
def test_random_state_out_of_range(small_problem, random_state):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"random_state"):
        fastfs.gflip(X, y, random_state=random_state)


@pytest.mark.parametrize("func", [_margins, _margin_score], ids=["margins", "margin_score"])
@pytest.mark.parametrize("n", [3, 5, 0])
def test_weights_wrong_length(func, small_problem, n):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"weights.*n_features=4"):
        func(X, y, weights=np.ones(n))


@pytest.mark.parametrize("func", [_margins, _margin_score], ids=["margins", "margin_score"])
def test_weights_2d(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"weights"):
        func(X, y, weights=np.ones((1, 4)))


@pytest.mark.parametrize("func", [_margins, _margin_score], ids=["margins", "margin_score"])
def test_weights_not_finite(func, small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"weights.*NaN"):
        func(X, y, weights=np.array([1.0, np.nan, 1.0, 1.0]))


@pytest.mark.parametrize("initial", [[4], [0, 7], [-5]])
def test_initial_index_out_of_range(small_problem, initial):
    X, y = small_problem
    # SPEC 1.2 maps std::out_of_range to IndexError; ValueError is also a clear error.
    with pytest.raises((IndexError, ValueError), match=r"initial.*out of range"):
        fastfs.gflip(X, y, initial=initial)


def test_initial_mask_wrong_length(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match=r"initial.*mask"):
        fastfs.gflip(X, y, initial=np.ones(3, dtype=bool))


def test_initial_float_indices(small_problem):
    X, y = small_problem
    with pytest.raises(TypeError, match=r"initial"):
        fastfs.gflip(X, y, initial=[0.5, 1.0])


# ------------------------------------------------------------------------------------------
# memory guard (SPEC 1.3)


def test_memory_guard_gflip(small_problem, monkeypatch):
    # G-flip keeps an m x m float64 distance state: 20 x 20 x 8 = 3200 bytes, plus what grows
    # with m alone (the features in class order, the per-thread scans), as the C++ state
    # reports it; the guard compares that figure.
    X, y = small_problem
    m, n = X.shape
    need = fastfs._core.memory_need("gflip", m, n, 2, 1, 1)
    assert need >= 8 * m * m
    monkeypatch.setattr(fastfs.config, "max_memory", 3199)
    with pytest.raises(MemoryError, match=r"20 x 20.*fastfs\.config\.max_memory"):
        fastfs.gflip(X, y, n_jobs=1)
    # the message gives both sizes in a unit that shows them (not "0.00 GiB")
    shown = fastfs._validation.format_bytes(need)
    assert shown.endswith(" KiB")
    with pytest.raises(MemoryError, match=rf"needs one 20 x 20 distance state of "
                       rf"{re.escape(shown)}, above fastfs\.config\.max_memory = 3\.12 KiB;"):
        fastfs.gflip(X, y, n_jobs=1)
    # the state is float64 whatever X is, so float32 input needs the same memory
    with pytest.raises(MemoryError, match=r"20 x 20"):
        fastfs.gflip(X.astype(np.float32), y, n_jobs=1)
    monkeypatch.setattr(fastfs.config, "max_memory", int(need) - 1)
    with pytest.raises(MemoryError, match=r"20 x 20"):
        fastfs.gflip(X, y, n_jobs=1)
    monkeypatch.setattr(fastfs.config, "max_memory", int(need))
    assert fastfs.gflip(X, y, random_state=0, n_jobs=1).n_epochs >= 1


def test_memory_need_is_the_square_state_for_large_m():
    # The states' own figures: dominated by their m x m matrices once m is large (G-flip one
    # float64 state; margin two; 1-NN accuracy two float64 and one float32; loo_knn_mse two),
    # and the scatter criteria by their n x n matrices (one a class, and three more).
    m, n = 4000, 50
    for state, per_entry in (("gflip", 8), ("margin", 16), ("loo_knn_accuracy", 20),
                             ("loo_knn_mse", 16)):
        need = fastfs._core.memory_need(state, m, n, 3, 1, 2)
        assert per_entry * m * m <= need <= 1.05 * per_entry * m * m, state
    assert fastfs._core.memory_need("loo_knn_accuracy", m, n, 3, 3, 2) < 17 * m * m
    need = fastfs._core.memory_need("scatter", m, 500, 3, 0, 2)
    assert 8 * 3 * 500 * 500 < need <= 8 * 6 * 500 * 500
    with pytest.raises(ValueError, match="unknown state"):
        fastfs._core.memory_need("nothing", m, n, 3, 1, 2)


def test_margins_need_no_square_matrix(small_problem, monkeypatch):
    # margins and margin_score stream one distance row at a time: the guard does not apply.
    X, y = small_problem
    monkeypatch.setattr(fastfs.config, "max_memory", 1)
    assert np.isfinite(fastfs.margins(X, y)).all()
    assert np.isfinite(fastfs.margin_score(X, y))


def test_memory_guard_default_is_positive():
    assert isinstance(fastfs.config.max_memory, int)
    assert fastfs.config.max_memory > 0
    assert "max_memory" in repr(fastfs.config)


# ------------------------------------------------------------------------------------------
# layouts and dtypes (SPEC 1.1)


def _layouts(X):
    base = np.ascontiguousarray(X)
    wide = np.zeros((X.shape[0] * 2, X.shape[1] * 3))
    wide[::2, ::3] = X
    return {
        "fortran": np.asfortranarray(X),
        "strided": wide[::2, ::3],
        "negative-strides": np.ascontiguousarray(base[:, ::-1])[:, ::-1],
        "transposed-view": np.ascontiguousarray(X.T).T,
    }


def test_layouts_give_identical_results(xor300):
    X, y = xor300
    want_m = fastfs.margins(X, y)
    want_s = fastfs.margin_score(X, y, utility="sigmoid", beta=2.0)
    want_g = fastfs.gflip(X, y, random_state=1)
    for name, Xl in _layouts(X).items():
        assert not Xl.flags.c_contiguous, name
        assert_array_equal(fastfs.margins(Xl, y), want_m, err_msg=name)
        assert fastfs.margin_score(Xl, y, utility="sigmoid", beta=2.0) == want_s
        same_result(fastfs.gflip(Xl, y, random_state=1), want_g)


def test_float32_fortran_layout(xor300):
    X, y = xor300
    X32 = X.astype(np.float32)
    assert_array_equal(fastfs.margins(np.asfortranarray(X32), y), fastfs.margins(X32, y))


def test_input_is_not_modified(xor300):
    X, y = xor300
    Xf = np.asfortranarray(X.copy())
    y_copy = y.copy()
    fastfs.gflip(Xf, y, random_state=0)
    fastfs.margins(Xf, y, np.full(X.shape[1], 2.0))
    assert_array_equal(Xf, X)
    assert_array_equal(y, y_copy)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint16])
def test_integer_X_works(rng, dtype):
    X = rng.integers(0, 5, size=(40, 4))
    y = rng.integers(0, 2, size=40)
    Xi = X.astype(dtype)
    Xf = X.astype(np.float64)
    assert_array_equal(fastfs.margins(Xi, y), fastfs.margins(Xf, y))
    assert fastfs.margin_score(Xi, y) == fastfs.margin_score(Xf, y)
    same_result(fastfs.gflip(Xi, y, random_state=0), fastfs.gflip(Xf, y, random_state=0))


def test_bool_and_list_X_work(rng):
    X = rng.integers(0, 2, size=(30, 3))
    y = rng.integers(0, 2, size=30)
    want = fastfs.margins(X.astype(float), y)
    assert_array_equal(fastfs.margins(X.astype(bool), y), want)
    assert_array_equal(fastfs.margins(X.tolist(), y.tolist()), want)


def test_float16_and_longdouble_become_float64(rng):
    X = rng.standard_normal((30, 3))
    y = rng.integers(0, 2, size=30)
    X16 = X.astype(np.float16)
    assert_array_equal(fastfs.margins(X16, y), fastfs.margins(X16.astype(np.float64), y))


# ------------------------------------------------------------------------------------------
# two Python threads at once (SPEC 1.6)


def test_two_threads_call_gflip_at_once(xor300, random_problem):
    problems = [(xor300, 3), (random_problem, 4), (xor300, 8), (random_problem, 0)]
    serial = [fastfs.gflip(X, y, random_state=seed, n_restarts=2) for (X, y), seed in problems]

    results: dict[int, object] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(worker):
        try:
            barrier.wait()
            for k in range(worker, len(problems), 2):
                (X, y), seed = problems[k]
                results[k] = fastfs.gflip(X, y, random_state=seed, n_restarts=2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors
    for k, want in enumerate(serial):
        same_result(results[k], want)


def test_two_threads_call_margins_at_once(rng):
    X = rng.standard_normal((200, 6))
    y = rng.integers(0, 3, size=200)
    weights = [rng.uniform(0, 1, 6) for _ in range(6)]
    serial = [fastfs.margins(X, y, w) for w in weights]
    out: dict[int, np.ndarray] = {}
    barrier = threading.Barrier(2)

    def work(worker):
        barrier.wait()
        for k in range(worker, len(weights), 2):
            out[k] = fastfs.margins(X, y, weights[k])

    threads = [threading.Thread(target=work, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for k, want in enumerate(serial):
        assert_array_equal(out[k], want)


def test_initial_rejects_2d_and_duplicate_indices(small_problem):
    X, y = small_problem
    with pytest.raises(ValueError, match="initial: expected a 1-D"):
        fastfs.gflip(X, y, initial=np.array([[0, 1]]))
    with pytest.raises(ValueError, match="initial: feature indices must be distinct"):
        fastfs.gflip(X, y, initial=[1, 1])


# ------------------------------------------------------------------------------------------
# The tiled row-to-column copy of check_X(order="F") (large C-ordered float arrays)

@pytest.mark.parametrize("shape", [(700, 130), (97, 1201), (4100, 17)])
@pytest.mark.parametrize("dtype,float64", [(np.float64, False), (np.float32, True),
                                           (np.float32, False)])
def test_fortran_copy_equals_numpy(rng, shape, dtype, float64):
    from fastfs._validation import _TILED_COPY_MIN, check_X

    X = rng.standard_normal(shape).astype(dtype)
    assert X.size >= _TILED_COPY_MIN  # the tiled path, not NumPy's
    cx = check_X(X, order="F", float64=float64)
    got = cx.values
    want = np.asarray(X, dtype=np.float64 if float64 else dtype, order="F")
    assert got.flags.f_contiguous and got.dtype == want.dtype
    assert_array_equal(got, want)
    # The same read found max |x| (the largest value made negative and moved to an edge
    # beyond a multiple of four, which the scalar loop copies).
    assert cx.scan == (True, float(np.abs(X).max()))
    X[-1, -1] = -2 * np.abs(X).max()
    assert check_X(X, order="F", float64=float64).scan == (True, float(-X[-1, -1]))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
# In the first tile, in the last (partial) tile, in the rows and in the columns beyond a
# multiple of four (the scalar edges of the blocked float64 copy).
@pytest.mark.parametrize("where", [(0, 0), (299, 398), (300, 5), (7, 402)])
def test_fortran_copy_finds_one_non_finite_value(rng, value, dtype, where):
    from fastfs._validation import check_X

    X = rng.standard_normal((301, 403)).astype(dtype)
    X[where] = value
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        check_X(X, order="F")
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        fastfs.omp(X, rng.standard_normal(301), 3)
    # check_finite=False leaves the scan to the caller and copies anyway.
    cx = check_X(X, order="F", check_finite=False)
    assert cx.scan[0] is False
    out = cx.values
    assert_array_equal(np.isnan(out), np.isnan(X))
    assert_array_equal(np.isinf(out), np.isinf(X))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fortran_copy_of_extreme_finite_values_is_exact_and_not_flagged(rng, dtype):
    """The largest values, the smallest subnormals and -0.0 are finite: not flagged, and
    copied bit for bit."""
    from fastfs._validation import check_X

    info = np.finfo(dtype)
    X = rng.standard_normal((300, 400)).astype(dtype)
    X[0, 0], X[5, 7], X[9, 9] = info.max, -info.max, -0.0
    X[17, 3], X[299, 399] = info.smallest_subnormal, -info.smallest_subnormal
    cx = check_X(X, order="F")
    got = cx.values
    assert cx.scan == (True, float(info.max))
    assert got.dtype == dtype
    assert_array_equal(got.view(np.uint64 if dtype == np.float64 else np.uint32),
                       np.asfortranarray(X).view(np.uint64 if dtype == np.float64
                                                 else np.uint32))


@pytest.mark.parametrize("make", [
    lambda X: np.asfortranarray(X),          # already Fortran: no copy at all
    lambda X: X.astype(">f8"),               # big-endian
    lambda X: X[:, :1].copy(),               # one column (C and F contiguous at once)
    lambda X: X[::2],                        # strided
    lambda X: X.astype(np.int64),            # integers
    lambda X: X[:100, :100].copy(),          # below the tiled copy's size
], ids=["fortran", "big-endian", "one-column", "strided", "int64", "small"])
def test_fortran_copy_only_for_large_c_ordered_floats(rng, monkeypatch, make):
    from fastfs import _core
    from fastfs._validation import check_X

    def refuse(*args):
        raise AssertionError("tiled copy used")

    monkeypatch.setattr(_core, "_fortran_copy", refuse)
    X = make(np.round(rng.standard_normal((400, 300)) * 10))
    got = check_X(X, order="F", float64=True).values
    assert got.flags.f_contiguous
    assert_array_equal(got, np.asarray(X, dtype=np.float64))


@pytest.mark.parametrize("shape", [(102, 5966), (700, 130)])
@pytest.mark.parametrize("dtype,float64", [(np.float64, False), (np.float32, True),
                                           (np.float32, False)])
def test_fortran_ordered_X_to_c_order_by_the_tiled_copy(rng, monkeypatch, shape, dtype,
                                                         float64):
    """A large column-major X (the order NumPy's astype keeps) becomes C-ordered through the
    tiled copy of its transpose, with the same values and the finiteness check in that read."""
    from fastfs import _core
    from fastfs._validation import check_X

    calls = []
    tiled = _core._fortran_copy

    def spy(a, to_float64):
        calls.append(a.shape)
        return tiled(a, to_float64)

    monkeypatch.setattr(_core, "_fortran_copy", spy)
    X = np.asfortranarray(rng.standard_normal(shape).astype(dtype))
    cx = check_X(X, float64=float64)
    got = cx.values
    assert cx.scan == (True, float(np.abs(X).max()))
    want = np.ascontiguousarray(X, dtype=np.float64 if float64 else dtype)
    assert calls == [shape[::-1]]
    assert got.flags.c_contiguous and got.dtype == want.dtype
    assert_array_equal(got, want)
    X[shape[0] - 1, shape[1] - 2] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        check_X(X)
    assert_array_equal(np.isnan(check_X(X, check_finite=False).values), np.isnan(X))


# ------------------------------------------------------------------------------------------
# n_jobs above the core count (clipped), the OpenMP wait policy


def _thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.parametrize("n_jobs", [1000, 100_000, 2**70])
def test_n_jobs_above_the_core_count_is_clipped(small_problem, n_jobs):
    X, y = small_problem
    cores = fastfs._core.available_cores()
    assert fastfs._validation.resolve_n_jobs(n_jobs) == cores
    before = _thread_count()
    got = fastfs.margins(X, y, n_jobs=n_jobs)
    # The OpenMP pool keeps its threads: at most one per core beyond the caller's.
    assert _thread_count() <= max(before, 1) + cores
    np.testing.assert_allclose(got, ref.margins(X, y), rtol=1e-12)
    same_result(fastfs.gflip(X, y, random_state=0, n_jobs=n_jobs),
                fastfs.gflip(X, y, random_state=0, n_jobs=1))


def test_runtime_default_above_the_core_count_is_clipped(monkeypatch):
    # OMP_NUM_THREADS=100000 makes the runtime's default that large.
    cores = fastfs._core.available_cores()
    monkeypatch.setattr(fastfs._validation._core, "default_threads", lambda: 100_000)
    assert fastfs._validation.resolve_n_jobs(None) == cores
    monkeypatch.setattr(fastfs._validation._core, "default_threads", lambda: 1)
    assert fastfs._validation.resolve_n_jobs(None) == 0  # the runtime's own default


_SHOW_WAIT_POLICY = r"""
import ctypes, os, sys
import fastfs
print("OMP_WAIT_POLICY" in os.environ, os.environ.get("GOMP_SPINCOUNT"))
libs = [line.split()[-1] for line in open("/proc/self/maps") if "libgomp" in line]
if not libs:
    print("no-libgomp")
    sys.exit(0)
sys.stdout.flush()
ctypes.CDLL(libs[0]).omp_display_env(1)
"""


def _wait_policy(env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-c", _SHOW_WAIT_POLICY], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    if "no-libgomp" in out.stdout:
        pytest.skip("the core does not use libgomp")
    return out.stdout.splitlines()[0], out.stdout + out.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_openmp_threads_sleep_instead_of_spinning():
    # Spinning threads take the CPU from the thread that shares a core with another process;
    # the default n_jobs then ran 3-30x slower than n_jobs=1 on a busy machine.
    first, text = _wait_policy({})
    assert first == "False None"  # the environment is left as it was
    assert "GOMP_SPINCOUNT = '0'" in text


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_wait_policy_the_user_chose_is_kept():
    first, text = _wait_policy({"GOMP_SPINCOUNT": "12345"})
    assert first == "False 12345"
    assert "GOMP_SPINCOUNT = '12345'" in text


# ------------------------------------------------------------------------------------------
# integer parameters: one check, bounded by the C++ type


def _pair(rng, m=20, n=4):
    X = rng.standard_normal((m, n))
    return X, np.repeat([0, 1], m // 2)


INT_PARAMS = [
    (lambda X, y, v: fastfs.gflip(X, y, max_epochs=v, random_state=0), "max_epochs"),
    (lambda X, y, v: fastfs.gflip(X, y, n_restarts=v, random_state=0), "n_restarts"),
    (lambda X, y, v: fastfs.simba(X, y, n_restarts=v, random_state=0), "n_restarts"),
    (lambda X, y, v: fastfs.relieff(X, y, n_neighbors=v), "n_neighbors"),
    (lambda X, y, v: fastfs.filters.mutual_info(X, y, bins=v), "bins"),
    (lambda X, y, v: fastfs.lasso(X, y.astype(float), 0.1, max_iter=v), "max_iter"),
    (lambda X, y, v: fastfs.lasso_path(X, y.astype(float), max_iter=v), "max_iter"),
    (lambda X, y, v: fastfs.lasso_path(X, y.astype(float), n_alphas=v), "n_alphas"),
    (lambda X, y, v: fastfs.rgs(X, y.astype(float), n_epochs=v, random_state=0), "n_epochs"),
    (lambda X, y, v: fastfs.rgs(X, y.astype(float), n_restarts=v, random_state=0),
     "n_restarts"),
    (lambda X, y, v: fastfs.sks(X, y.astype(float), n_neighbors=v), "n_neighbors"),
    (lambda X, y, v: fastfs.beam(X, y, 2, width=v), "width"),
    (lambda X, y, v: fastfs.plus_l_minus_r(X, y, 2, l=v, r=1), "l"),
    (lambda X, y, v: fastfs.omp(X, y.astype(float), v), "n_features"),
]


@pytest.mark.parametrize("call,name", INT_PARAMS, ids=[f"{i}-{p[1]}" for i, p in
                                                       enumerate(INT_PARAMS)])
@pytest.mark.parametrize("value", [2**31, 2**63, np.int64(2**40), np.uint64(2**64 - 1)])
def test_integers_beyond_the_cpp_type_are_refused(rng, call, name, value):
    X, y = _pair(rng)
    with pytest.raises(ValueError, match=rf"^{name}: must be <= 2147483647, got {int(value)}"):
        call(X, y, value)


@pytest.mark.parametrize("func", [fastfs.simba, fastfs.relief])
def test_n_iter_of_2_31_hits_the_memory_guard(rng, func, restore_max_memory):
    X, y = _pair(rng)
    restore_max_memory.max_memory = 2**33  # 8 GiB: a 2**31-step visiting order is 16 GiB
    with pytest.raises(MemoryError, match=r"visiting order.*2147483648 steps.*max_memory"):
        func(X, y, n_iter=2**31, random_state=0)
    with pytest.raises(ValueError, match=r"^n_iter: must be <= 9223372036854775807"):
        func(X, y, n_iter=2**63, random_state=0)


# ------------------------------------------------------------------------------------------
# the memory guard's gaps


@pytest.mark.parametrize("value,error", [(float("nan"), ValueError), (-1, ValueError),
                                         ("1GB", TypeError), (True, TypeError),
                                         (None, TypeError)])
def test_max_memory_rejects_non_sizes(value, error, restore_max_memory):
    saved = restore_max_memory.max_memory
    with pytest.raises(error, match=r"max_memory"):
        restore_max_memory.max_memory = value
    assert restore_max_memory.max_memory == saved


def test_max_memory_inf_switches_the_guard_off(small_problem, restore_max_memory):
    X, y = small_problem
    restore_max_memory.max_memory = float("inf")
    assert fastfs.gflip(X, y, random_state=0).support.shape == (4,)
    restore_max_memory.max_memory = 2**20
    assert restore_max_memory.max_memory == 2**20


@pytest.mark.parametrize("func", [fastfs.separability.scatter_matrices,
                                  fastfs.separability.divergence,
                                  fastfs.separability.bhattacharyya])
def test_separability_counts_one_matrix_per_class(rng, func, restore_max_memory):
    n, k = 20, 5
    X = rng.standard_normal((200, n))
    y = np.arange(200) % k
    # One d x d matrix fits, the k class covariances (and the shared ones) do not.
    restore_max_memory.max_memory = 3 * n * n * 8
    with pytest.raises(MemoryError, match=rf"\d+ {n} x {n} matrices.*max_memory"):
        func(X, y)
    restore_max_memory.max_memory = 64 * n * n * 8
    func(X, y)


def test_gram_matrix_is_guarded(rng, restore_max_memory):
    X = rng.standard_normal((5, 300))
    y = rng.standard_normal(5)
    restore_max_memory.max_memory = 300 * 300 * 8 - 1
    with pytest.raises(MemoryError, match=r"Gram matrix.*300 x 300.*precompute=False"):
        fastfs.lasso(X, y, 0.1, precompute=True)
    with pytest.raises(MemoryError, match=r"300 x 300"):
        fastfs.lasso_path(X, y, precompute=True, n_alphas=3)
    # The data form needs no Gram matrix, and gives the same coefficients.
    a = fastfs.lasso(X, y, 0.1, precompute=False, tol=1e-12)
    restore_max_memory.max_memory = float("inf")
    b = fastfs.lasso(X, y, 0.1, precompute=True, tol=1e-12)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-6, atol=1e-9)


def test_visiting_orders_are_guarded(rng, restore_max_memory):
    X, y = _pair(rng)
    restore_max_memory.max_memory = 10**6
    with pytest.raises(MemoryError, match=r"fastfs.simba.*visiting order"):
        fastfs.simba(X, y, n_iter=10**6, n_restarts=1, random_state=0)
    with pytest.raises(MemoryError, match=r"fastfs.relief.*visiting order"):
        fastfs.relief(X, y, n_iter=10**6, random_state=0)
    with pytest.raises(MemoryError, match=r"fastfs.relief.*125001 steps"):
        fastfs.relief(X, y, n_iter=125001, random_state=0)
    with pytest.raises(MemoryError, match=r"fastfs.rgs.*steps"):
        fastfs.rgs(X, y.astype(float), n_epochs=10**5, random_state=0)
    # Below the limit they run.
    assert fastfs.relief(X, y, n_iter=1000, random_state=0).weights.shape == (4,)


# ------------------------------------------------------------------------------------------
# silently accepted values


@pytest.mark.parametrize("dtype", ["timedelta64[ns]", "datetime64[s]"])
def test_time_dtypes_are_refused(rng, dtype):
    X, y = _pair(rng)
    Xt = (np.abs(X) * 1000).astype(np.int64).astype(dtype)
    with pytest.raises(TypeError,
                       match=rf"^X: expected real numbers, got dtype {re.escape(dtype)}"):
        fastfs.margins(Xt, y)
    with pytest.raises(TypeError, match=r"^X: expected real numbers"):
        fastfs.filters.anova_f(Xt, y)
    with pytest.raises(TypeError, match=r"^y: expected real numbers"):
        fastfs.knn_regression_score(X, np.arange(20).astype("timedelta64[s]"))


def test_complex_weights_are_refused(small_problem):
    X, y = small_problem
    w = np.ones(4) + 1j
    with pytest.raises(TypeError, match=r"^weights: complex"):
        fastfs.margins(X, y, w)
    with pytest.raises(TypeError, match=r"^weights: complex"):
        fastfs.knn_regression_score(X, y.astype(float), w)
    with pytest.raises(TypeError, match=r"^weights: expected real numbers"):
        fastfs.margin_score(X, y, np.array(["1", "1", "1", "1"]))


@pytest.mark.parametrize("initial", [np.array([2**64 - 1], dtype=np.uint64),
                                     np.array([2**63], dtype=np.uint64)])
def test_uint64_initial_does_not_wrap(small_problem, initial):
    X, y = small_problem
    # 2**64 - 1 as int64 is -1, the last feature.
    with pytest.raises(IndexError, match=r"initial: feature index out of range"):
        fastfs.gflip(X, y, initial=initial, random_state=0)
    res = fastfs.gflip(X, y, initial=np.array([3], dtype=np.uint64), max_epochs=1,
                       random_state=0)
    assert res.support.shape == (4,)


FLAG_CALLS = [
    (lambda X, y, v: fastfs.gflip(X, y, verbose=v, random_state=0), "verbose"),
    (lambda X, y, v: fastfs.simba(X, y, verbose=v, random_state=0), "verbose"),
    (lambda X, y, v: fastfs.sfs(X, y, 2, verbose=v), "verbose"),
    (lambda X, y, v: fastfs.omp(X, y.astype(float), 2, verbose=v), "verbose"),
    (lambda X, y, v: fastfs.rgs(X, y.astype(float), verbose=v, random_state=0), "verbose"),
    (lambda X, y, v: fastfs.branch_and_bound(X, y, 2, criterion="margin",
                                             assume_monotone=v), "assume_monotone"),
    (lambda X, y, v: fastfs.separability.divergence(X, y, pairwise=v), "pairwise"),
    (lambda X, y, v: fastfs.separability.bhattacharyya(X, y, pairwise=v), "pairwise"),
    (lambda X, y, v: fastfs.lasso(X, y.astype(float), 0.1, fit_intercept=v), "fit_intercept"),
    (lambda X, y, v: fastfs.sfs(X, y.astype(float), 2, criterion=fastfs.criteria.LeastSquares(
        fit_intercept=v)), "fit_intercept"),
]


@pytest.mark.parametrize("call,name", FLAG_CALLS, ids=[f"{i}-{p[1]}" for i, p in
                                                       enumerate(FLAG_CALLS)])
@pytest.mark.parametrize("value", ["yes", 1, None])
def test_flags_must_be_bools(rng, call, name, value):
    X, y = _pair(rng)
    with pytest.raises(TypeError, match=rf"^{name}: expected True or False"):
        call(X, y, value)


# ------------------------------------------------------------------------------------------
# messages and pandas columns


def test_single_class_message_shows_the_label_not_a_count(small_problem):
    X, _ = small_problem
    with pytest.raises(ValueError,
                       match=r"^y: needs at least 2 classes, got a single class \(only class 0\)"):
        fastfs.margins(X, np.zeros(20, dtype=int))
    with pytest.raises(ValueError, match=r"only class 'a'\)"):
        fastfs.filters.anova_f(X, np.array(["a"] * 20, dtype=object))


def test_dataframe_non_numeric_column_is_named(rng):
    pd = pytest.importorskip("pandas")
    X, y = _pair(rng)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["colour"] = ["red"] * 20
    with pytest.raises(TypeError, match=r"^X: column 'colour' has dtype .*expected real"):
        fastfs.margins(df, y)
    df["colour"] = pd.Categorical(["red", "blue"] * 10)
    with pytest.raises(TypeError, match=r"^X: column 'colour'"):
        fastfs.filters.anova_f(df, y)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["when"] = pd.to_timedelta(np.arange(20), unit="s")
    with pytest.raises(TypeError, match=r"^X: column 'when'"):
        fastfs.margins(df, y)


@pytest.mark.parametrize("dtype", ["Int64", "Float64", "boolean"])
def test_nullable_pandas_columns_are_accepted_without_na(rng, dtype):
    pd = pytest.importorskip("pandas")
    X = rng.integers(-3, 4, size=(20, 4))
    if dtype == "boolean":
        X = X > 0
    y = np.repeat([0, 1], 10)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).astype(dtype)
    got = fastfs.margins(df, y)
    np.testing.assert_allclose(got, ref.margins(X.astype(float), y), rtol=1e-12)
    res = fastfs.filters.anova_f(df, pd.Series(y, dtype="Int64"))
    assert list(res.feature_names) == ["a", "b", "c", "d"]
    plain = fastfs.filters.anova_f(X.astype(float), y)
    np.testing.assert_array_equal(res.scores, plain.scores)
    np.testing.assert_array_equal(res.pvalues, plain.pvalues)
    yr = pd.Series(np.linspace(0, 1, 20), dtype="Float64")
    assert fastfs.knn_regression_score(df, yr) == fastfs.knn_regression_score(
        X.astype(float), np.linspace(0, 1, 20))


def test_pandas_bool_columns_beside_numeric_ones(rng):
    """pandas gives object values for a frame mixing bool and numeric columns; they are read as
    0 / 1 (scikit-learn's f_classif on the same frame is the reference)."""
    pd = pytest.importorskip("pandas")
    from sklearn.feature_selection import f_classif

    X = rng.normal(size=(30, 3))
    y = np.repeat([0, 1], 15)
    df = pd.DataFrame({"a": X[:, 0], "flag": X[:, 1] > 0, "n": rng.integers(0, 5, 30)})
    res = fastfs.filters.anova_f(df, y)
    assert list(res.feature_names) == ["a", "flag", "n"]
    np.testing.assert_allclose(res.scores, f_classif(df, y)[0], rtol=1e-10)
    plain = df.to_numpy(dtype=float)
    np.testing.assert_allclose(fastfs.margins(df, y), ref.margins(plain, y), rtol=1e-12)
    assert fastfs.omp(df, X[:, 2], 1).selected.tolist() == fastfs.omp(plain, X[:, 2], 1).selected.tolist()


def test_nullable_pandas_na_is_the_nan_error(rng):
    pd = pytest.importorskip("pandas")
    X, y = _pair(rng)
    df = pd.DataFrame(X.round(), columns=["a", "b", "c", "d"]).astype("Int64")
    df.loc[3, "b"] = pd.NA
    with pytest.raises(ValueError, match=r"^X: contains NaN"):
        fastfs.margins(df, y)
    with pytest.raises(ValueError, match=r"^X: contains NaN"):
        fastfs.filters.anova_f(df, y)
    yy = pd.Series(y, dtype="Int64")
    yy[2] = pd.NA
    with pytest.raises(ValueError, match=r"^y: contains NaN"):
        fastfs.margins(X, yy)
    ys = pd.Series(np.where(y == 0, "a", "b"), dtype="string")
    ys[2] = pd.NA
    with pytest.raises(ValueError, match=r"^y: contains missing labels"):
        fastfs.margins(X, ys)
    yf = pd.Series(np.linspace(0, 1, 20), dtype="Float64")
    yf[0] = pd.NA
    with pytest.raises(ValueError, match=r"^y: contains NaN"):
        fastfs.knn_regression_score(X, yf)


# ------------------------------------------------------------------------------------------
# object-dtype labels (a pandas Series of strings) in every label path


def _string_labels(rng, k=2, m=60, n=3):
    X = rng.standard_normal((m, n))
    codes = np.arange(m) % k
    names = np.array(["alpha", "beta", "gamma", "delta"])[:k]
    return X, codes, names[codes].astype(object)


@pytest.mark.parametrize("func", [fastfs.separability.divergence,
                                  fastfs.separability.bhattacharyya])
def test_object_labels_in_gaussian_separability(rng, func):
    pd = pytest.importorskip("pandas")
    X, codes, labels = _string_labels(rng, k=3)
    assert func(X, pd.Series(labels)) == pytest.approx(func(X, codes), rel=1e-12)
    # The singular-covariance message names the class by its label.
    Xs = X.copy()
    Xs[codes == 1, 2] = 1.0
    with pytest.raises(ValueError, match=r"covariance of class 'beta'"):
        func(Xs, pd.Series(labels))


def test_object_labels_in_class_count_errors(rng):
    pd = pytest.importorskip("pandas")
    X, codes, labels = _string_labels(rng, k=3)
    with pytest.raises(ValueError, match=r"exactly 2 classes, got 3 \('alpha', 'beta', "
                                         r"'gamma'\)"):
        fastfs.filters.t_test(X, pd.Series(labels))
    two = np.array(["beta"] * 60, dtype=object)
    two[0] = "solo"
    with pytest.raises(ValueError, match=r"class 'solo' has 1"):
        fastfs.filters.t_test(X, pd.Series(two), equal_var=False)
    with pytest.raises(ValueError, match=r"only class 'alpha'"):
        fastfs.margins(X, pd.Series(["alpha"] * 60, dtype=object))


@pytest.mark.parametrize("call,name", [
    (lambda X, y, v: fastfs.filters.z_test(X, y, sigma=v), "sigma"),
    (lambda X, y, v: fastfs.lasso_path(X, y.astype(float), alphas=v), "alphas"),
])
def test_complex_parameter_arrays_are_refused(rng, call, name):
    X, y = _pair(rng)
    with pytest.raises(TypeError, match=rf"^{name}: complex"):
        call(X, y, np.ones(4) * (1 + 1j))


def test_max_subsets_is_a_64_bit_count(rng):
    X, y = _pair(rng)
    res = fastfs.exhaustive(X, y, 2, max_subsets=2**40)
    assert len(res.selected) == 2


def test_dataframe_with_sparse_columns_still_works(rng):
    pd = pytest.importorskip("pandas")
    X = rng.integers(-2, 3, size=(20, 4)).astype(float)
    y = np.repeat([0, 1], 10)
    df = pd.DataFrame(X, columns=list("abcd")).astype(pd.SparseDtype("float64", 0.0))
    np.testing.assert_allclose(fastfs.margins(df, y), ref.margins(X, y), rtol=1e-12)
    df = pd.DataFrame({"a": pd.interval_range(0, 20), "b": np.arange(20.0)})
    with pytest.raises(TypeError, match=r"^X: column 'a' has dtype interval"):
        fastfs.margins(df, y)


# ------------------------------------------------------------------------------------------
# The one-read conversions: a Fortran-ordered X to rows, the finiteness / magnitude scan, the
# ranking of weights


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fortran_ordered_X_becomes_rows_by_the_tiled_copy(rng, dtype):
    from fastfs._validation import check_X
    X = np.asfortranarray(rng.standard_normal((130, 700)).astype(dtype))
    got = check_X(X).values
    assert got.flags.c_contiguous and got.dtype == dtype
    assert_array_equal(got, X)
    for bad in (np.nan, np.inf, -np.inf):
        Z = X.copy(order="F")
        Z[129, 699] = bad
        with pytest.raises(ValueError, match=r"X.*NaN or infinity"):
            check_X(Z)
    # The margins and Relief of gene-expression-like data held by columns: those of NumPy's
    # reference (float64, exhaustive distances).
    y = np.arange(130) % 2
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(fastfs.margins(X, y, n_jobs=1), ref.margins(X64, y),
                               rtol=1e-5 if dtype == np.float32 else 1e-10)
    np.testing.assert_allclose(fastfs.relief(X64.copy(order="F"), y, n_jobs=1).weights,
                               ref.relief(X64, y), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_finite_scan_and_max_abs_in_one_read(rng, dtype, order):
    from fastfs._scale import max_abs
    from fastfs._validation import require_finite
    for shape in [(1, 1), (3, 7), (57, 33)]:
        X = np.asarray(rng.standard_normal(shape) * 1e3, dtype=dtype, order=order)
        X.flat[X.size // 2] = -2e4  # the largest magnitude is a negative value
        assert max_abs(X) == float(np.abs(X).max())
        require_finite(X)
        for bad in (np.nan, np.inf, -np.inf):
            Z = X.copy(order=order)
            Z.flat[Z.size - 1] = bad
            with pytest.raises(ValueError, match=r"X.*NaN or infinity"):
                require_finite(Z)
            assert np.isnan(max_abs(Z)) if np.isnan(bad) else max_abs(Z) == np.inf


def test_ranking_is_numpys_stable_descending_argsort(rng):
    from fastfs._results import ranking_by_weight
    for n in [0, 1, 2, 17, 5000]:
        w = np.round(rng.standard_normal(n) * 3)  # many ties
        if n > 4:
            w[:4] = [np.nan, -0.0, np.inf, -np.inf]
            w[rng.integers(0, n, n // 5)] = 0.0
            w[rng.integers(0, n, n // 7)] = rng.standard_normal(n // 7) * 1e-300
        got = ranking_by_weight(w)
        assert got.dtype == np.int64
        assert_array_equal(got, np.argsort(-w, kind="stable"))
    # Values within a relative 2^-20 of each other (the core orders them by the low half of
    # their keys): a few to a value, and hundreds to a value among exact repeats.
    for n, spread in [(300, 3), (6000, 1000)]:
        k = rng.integers(0, spread, n).astype(float)
        base = np.where(rng.random(n) < 0.5, 1.0, -3.0) * (1 + rng.integers(0, 75, n) * (spread == 3))
        w = base * (1.0 + k * 2.0 ** -42)
        assert_array_equal(ranking_by_weight(w), np.argsort(-w, kind="stable"))


# ------------------------------------------------------------------------------------------
# buffers kept between calls (fastfs.config.kept_memory)


@pytest.fixture
def restore_kept_memory():
    saved = fastfs.config.kept_memory
    yield fastfs.config
    fastfs.config.kept_memory = saved


def test_kept_memory_keeps_a_call_buffers_and_zero_frees_them(restore_kept_memory):
    from fastfs import _core

    gen = np.random.default_rng(0)
    X = gen.standard_normal((600, 700))  # a scaled copy of 3.4 MB, a 1.4 MB pair matrix
    y = (X[:, 0] > 0).astype(np.int64)
    assert restore_kept_memory.kept_memory == 64 * 2**20
    first = fastfs.relieff(X, y, n_jobs=1).weights
    kept = _core._testing.kept_bytes()
    assert kept >= 600 * 700 * 8
    assert kept <= 64 * 2**20
    # the next call of that shape takes them back; other data, the same answer as a fresh call
    X2 = gen.standard_normal((600, 700))
    second = fastfs.relieff(X2, y, n_jobs=1).weights
    restore_kept_memory.kept_memory = 0
    assert _core._testing.kept_bytes() == 0
    fresh = fastfs.relieff(X2, y, n_jobs=1).weights
    assert _core._testing.kept_bytes() == 0
    np.testing.assert_array_equal(second, fresh)
    assert not np.array_equal(first, second)
    restore_kept_memory.kept_memory = 2**20 * 5
    fastfs.relieff(X, y, n_jobs=1)
    assert 0 < _core._testing.kept_bytes() <= 2**20 * 5
    assert "kept_memory" in repr(restore_kept_memory)


@pytest.mark.parametrize("value,error", [(-1, ValueError), (1.5, TypeError), ("64MB", TypeError),
                                         (True, TypeError), (None, TypeError)])
def test_kept_memory_rejects_non_sizes(value, error, restore_kept_memory):
    saved = restore_kept_memory.kept_memory
    with pytest.raises(error, match=r"kept_memory"):
        restore_kept_memory.kept_memory = value
    assert restore_kept_memory.kept_memory == saved


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32,
                                   np.uint64])
def test_integer_labels_are_encoded_as_numpys_unique_does(rng, dtype):
    # Integer labels in a short range are encoded by counting, not sorting: the classes (and
    # their dtype) and codes must be np.unique's, at both ends of every integer type, for a
    # wide range (the sorting path) and for values beyond int64 (uint64).
    from fastfs._validation import check_y_classes

    info = np.iinfo(dtype)
    for base in (int(info.min), int(info.max) - 40, 0):
        for span in (3, 40):
            y = np.array([base + int(v) for v in rng.integers(0, span, 300)], dtype=dtype)
            y[0], y[1] = base, base + span - 1
            got = check_y_classes(y, y.size)
            classes, codes = np.unique(y, return_inverse=True)
            assert got.classes.dtype == classes.dtype
            assert_array_equal(got.classes, classes)
            assert_array_equal(got.codes, codes)
    wide = np.tile(np.array([0, 10**6, 5, 10**6, 0], dtype=np.int64), 60)
    assert_array_equal(check_y_classes(wide, 300).codes, np.tile([0, 2, 1, 2, 0], 60))


def test_format_bytes_picks_the_unit_that_shows_the_size():
    fmt = fastfs._validation.format_bytes
    assert fmt(0) == "0 bytes"
    assert fmt(1023) == "1023 bytes"
    assert fmt(1024) == "1 KiB"
    assert fmt(1536) == "1.5 KiB"
    assert fmt(2**20 * 12.5) == "12.5 MiB"
    assert fmt(2**30 * 3) == "3 GiB"
    assert fmt(2**40) == "1.02e+03 GiB"


def test_synthetic_problems_check_their_arguments():
    from fastfs import datasets

    a = datasets.make_xor(20, random_state=3)
    b = datasets.make_xor(20, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a[0], b[0])  # an int is default_rng's seed
    for make in (datasets.make_xor, datasets.make_ng):
        with pytest.raises(ValueError, match=r"random_state: must be in \[0, 2\*\*64\), got -1"):
            make(20, random_state=-1)
        for bad in (1.5, True, "0"):
            with pytest.raises(TypeError, match="random_state: expected None, an int"):
                make(20, random_state=bad)
        X, y = make(20, random_state=np.random.RandomState(0))
        assert X.shape[0] == 20
    with pytest.raises(TypeError, match="noise: expected a real number"):
        datasets.make_ng(20, noise="0.3")


def test_theory_and_wrapper_criterion_refuse_wrong_types():
    from fastfs import criteria, theory

    with pytest.raises(TypeError, match="vc_dim: expected a number or an array of numbers"):
        theory.vc_confidence("3", 10)
    with pytest.raises(TypeError, match="vc_dim: expected a number"):
        theory.vc_confidence(True, 10)
    with pytest.raises(TypeError, match="estimator: expected a scikit-learn estimator"):
        criteria.Wrapper("knn")
    X = np.random.default_rng(0).normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(TypeError, match="estimator: expected a scikit-learn estimator"):
        fastfs.cv_top_features(X, y, np.ones(4), "knn")


@pytest.mark.parametrize("name", ["margins", "margin_score", "gflip", "simba", "relief"])
def test_a_real_target_with_repeated_values_is_refused(name, rng):
    """A rounded real target repeats values, so some 'classes' have two samples and the
    single-sample check let it through: margins of a real target read as labels."""
    X = rng.standard_normal((120, 4))
    y = np.round(X[:, 0], 1)
    assert np.unique(y).size < y.size
    with pytest.raises(ValueError, match=rf"^y: {name} needs class labels, got continuous "
                       r"values \(for a real target: rgs"):
        getattr(fastfs, name)(X, y)
    # float labels without a fractional part are classes
    getattr(fastfs, name)(X, (y > 0).astype(float))


# ------------------------------------------------------------------------------------------
# Odd containers: object arrays of numbers, ragged lists, big-endian float32, nullable frames


def test_object_arrays_of_numbers_are_read_as_float64():
    # as scikit-learn's check_array converts them; the result is the float64 array's
    gen = np.random.default_rng(0)
    X = gen.standard_normal((40, 5))
    y = (X[:, 0] > 0).astype(int)
    assert_array_equal(fastfs.filters.anova_f(X.astype(object), y).scores,
                       fastfs.filters.anova_f(X, y).scores)
    yr = X[:, 1] + 0.1 * gen.standard_normal(40)
    assert_array_equal(fastfs.rgs(X, yr.astype(object), random_state=0).weights,
                       fastfs.rgs(X, yr, random_state=0).weights)
    bad = X.astype(object)
    bad[3, 2] = "a"
    with pytest.raises(TypeError, match=r"X: expected real numbers, got dtype object \(a "
                                        r"value of type str\)"):
        fastfs.filters.anova_f(bad, y)


def test_ragged_lists_name_the_argument():
    with pytest.raises(ValueError, match="X: its rows have different lengths"):
        fastfs.relieff([[1.0, 2.0], [3.0]], [0, 1])
    with pytest.raises(ValueError, match="weights: its rows have different lengths"):
        fastfs.margins(np.eye(4), [0, 0, 1, 1], [[1.0], [1.0, 2.0]])


def test_big_endian_float32_stays_float32():
    from fastfs._validation import check_X

    X = np.random.default_rng(1).standard_normal((30, 4)).astype(">f4")
    cx = check_X(X)
    assert cx.values.dtype == np.float32 and cx.values.dtype.isnative
    assert_array_equal(cx.values, X.astype(np.float32))


def test_nullable_and_mixed_frames_are_one_c_ordered_copy():
    pd = pytest.importorskip("pandas")
    import tracemalloc

    from fastfs._validation import check_X

    gen = np.random.default_rng(2)
    X = gen.standard_normal((4000, 100))
    frame = pd.DataFrame(X).astype("Float64")
    tracemalloc.start()
    cx = check_X(frame)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert cx.values.flags.c_contiguous
    assert_array_equal(cx.values, X)
    assert peak < 1.5 * X.nbytes  # one float64 copy (pandas' to_numpy + a C copy was 2)
    mixed = pd.DataFrame({"a": X[:, 0], "b": X[:, 1] > 0, "c": np.arange(4000)})
    expected = np.column_stack([X[:, 0], X[:, 1] > 0, np.arange(4000)]).astype(float)
    assert_array_equal(check_X(mixed).values, expected)
    frame.iloc[5, 3] = pd.NA
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        check_X(frame)


def test_integer_sparse_x_is_converted_in_one_copy():
    sp = pytest.importorskip("scipy.sparse")
    import tracemalloc

    from fastfs._validation import check_X

    S = sp.random(3000, 1000, density=0.05, format="csr", random_state=0)
    S.data = np.ceil(S.data * 5)
    Si = S.astype(np.int64)
    tracemalloc.start()
    out = check_X(Si, accept_sparse=True).values
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.dtype == np.float64
    assert_array_equal(out.toarray(), S.toarray())
    # data (8 bytes) + indices (4) per stored value, once; a copy then a cast was twice that
    assert peak < 1.4 * Si.nnz * 12
    assert Si.dtype == np.int64  # the caller's matrix is left as it was


def test_sparse_readers_convert_once():
    sp = pytest.importorskip("scipy.sparse")
    import tracemalloc

    from fastfs._validation import check_X

    S = sp.random(3000, 1000, density=0.05, format="coo", random_state=1)
    S.data = np.ceil(5 * S.data)  # counts 1..5 (continuous values are warned about as tables)
    y = np.random.default_rng(1).integers(0, 3, 3000)
    assert check_X(S, accept_sparse="csc").values.format == "csc"
    assert check_X(S, accept_sparse=True).values.format == "csr"
    per_value = 12  # float64 data and int32 index per stored value
    for f in (fastfs.filters.chi2, fastfs.filters.mutual_info):
        assert_array_equal(f(S, y).scores, f(S.tocsc(), y).scores)
        tracemalloc.start()
        f(S, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 1.5 * S.nnz * per_value  # COO to CSR to CSC was two copies
    # the Relief family's rows: one conversion of a LIL matrix, no copy of a fresh one
    L = S.tolil()
    assert_array_equal(fastfs.relieff(L, y % 2).weights, fastfs.relieff(S.tocsr(), y % 2).weights)
