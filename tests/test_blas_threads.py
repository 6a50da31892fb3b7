"""An explicit n_jobs bounds the whole call, including the matrix products a function makes
through NumPy's BLAS (the LASSO's X^T X, sparse coding's X D^T): NumPy would otherwise run them
on every core, and its idle BLAS threads keep spinning on the other cores after each product."""

from __future__ import annotations

import resource
import time

import numpy as np
import pytest

import fastfs
import fastfs.dictionary as fdict
from fastfs._validation import blas_threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_files() -> set[str]:
    return {d["filepath"] for d in threadpoolctl.threadpool_info() if d["user_api"] == "blas"}


# The BLAS libraries loaded when the tests are collected (NumPy's among them), hence before
# fastfs first bounds BLAS: the ones it bounds from then on (a library loaded later, such as
# SciPy's own, is not in the set; fastfs's products go through NumPy's).
_KNOWN = _blas_files()


def _blas_counts() -> list[int]:
    return [d["num_threads"] for d in threadpoolctl.threadpool_info()
            if d["user_api"] == "blas" and d["filepath"] in _KNOWN]


def _multithreaded_blas() -> bool:
    counts = _blas_counts()
    return bool(counts) and max(counts) > 1


def test_blas_threads_limits_inside_and_restores_after():
    before = _blas_counts()
    with blas_threads(1):
        assert _blas_counts() and all(c == 1 for c in _blas_counts())
    assert _blas_counts() == before
    with blas_threads(0):  # n_jobs=None: BLAS left as it is
        assert _blas_counts() == before


@pytest.fixture
def problem():
    gen = np.random.default_rng(0)
    X = gen.standard_normal((600, 120))
    y = X[:, 0] - 0.5 * X[:, 3] + 0.1 * gen.standard_normal(600)
    return X, y


@pytest.mark.parametrize("call", ["lasso_path", "lasso"])
def test_the_lasso_core_runs_under_the_blas_limit_of_n_jobs(monkeypatch, problem, call):
    # The Gram matrix is computed inside the same limit as the core's solve: a spy on the core
    # records the BLAS thread count while the call is under way.
    X, y = problem
    seen = []
    original = fastfs._core.lasso_path_gram

    def spy(*args):
        seen.append(_blas_counts())
        return original(*args)

    monkeypatch.setattr(fastfs._core, "lasso_path_gram", spy)
    run = {"lasso_path": lambda n_jobs: fastfs.lasso_path(X, y, n_alphas=5, n_jobs=n_jobs),
           "lasso": lambda n_jobs: fastfs.lasso(X, y, 0.05, n_jobs=n_jobs)}[call]
    before = _blas_counts()
    limited = run(1)
    assert seen and all(c == 1 for c in seen[-1])
    assert _blas_counts() == before
    seen.clear()
    default = run(None)
    assert seen[-1] == before  # None leaves BLAS alone
    if call == "lasso_path":
        np.testing.assert_array_equal(limited.coefs, default.coefs)
    else:
        np.testing.assert_array_equal(limited.coef, default.coef)


def _cpu_over_wall(run, repeat: int = 3) -> float:
    run()
    time.sleep(0.5)  # BLAS threads woken before the measurement go back to sleep
    usage = resource.getrusage(resource.RUSAGE_SELF)
    c0, t0 = usage.ru_utime + usage.ru_stime, time.perf_counter()
    for _ in range(repeat):
        run()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime - c0) / (time.perf_counter() - t0)


@pytest.mark.skipif(not _multithreaded_blas(), reason="NumPy's BLAS runs one thread here")
@pytest.mark.parametrize("call", ["lasso_path", "lasso", "sparse_code"])
def test_n_jobs_1_keeps_the_call_on_one_core(call):
    # The process's CPU time over the calls cannot exceed their wall time by much when one
    # thread does all the work; before BLAS was bounded, an idle second core took NumPy's
    # products and its spinning threads, 1.3-1.9x the wall time. (A machine with no idle core
    # lowers the ratio, never raises it.)
    gen = np.random.default_rng(1)
    X = gen.standard_normal((3000, 400))
    y = X[:, :5].sum(axis=1) + gen.standard_normal(3000)
    D = gen.standard_normal((128, 400))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    run = {"lasso_path": lambda: fastfs.lasso_path(X, y, n_alphas=10, n_jobs=1),
           "lasso": lambda: fastfs.lasso(X, y, 0.05, n_jobs=1),
           "sparse_code": lambda: fdict.sparse_code(X, D, n_nonzero_coefs=4, n_jobs=1)}[call]
    assert _cpu_over_wall(run) < 1.2


def test_dictionary_learner_fits_under_the_blas_limit(monkeypatch):
    pytest.importorskip("sklearn")
    gen = np.random.default_rng(2)
    X = gen.standard_normal((80, 12))
    seen = []
    original = fdict.DictionaryLearner._run

    def spy(self, *args):
        seen.append(_blas_counts())
        return original(self, *args)

    monkeypatch.setattr(fdict.DictionaryLearner, "_run", spy)
    fdict.DictionaryLearner(4, max_iter=3, n_init=1, n_jobs=1, random_state=0).fit(X)
    assert seen and all(c == 1 for c in seen[0])


@pytest.mark.parametrize("first_leaves_first", [True, False])
def test_overlapping_limits_from_two_threads_restore_the_original_count(first_leaves_first):
    # The limit is process-wide: a call that started under another's limit saved that limit
    # as the original and restored it at its end, leaving BLAS at 1 thread for good
    import threading

    if not _multithreaded_blas():
        pytest.skip("BLAS runs one thread here: nothing to restore")
    before = _blas_counts()
    a_in, b_in, a_go, b_go = (threading.Event() for _ in range(4))
    seen = {}

    def first():
        with blas_threads(1):
            a_in.set()
            b_in.wait(5)
            seen["both"] = _blas_counts()
            a_go.wait(5)
        b_go.set() if first_leaves_first else None

    def second():
        a_in.wait(5)
        with blas_threads(1):
            b_in.set()
            if first_leaves_first:
                a_go.set()
                b_go.wait(5)
        a_go.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    # (inside, the limit holds only where threadpoolctl lets this thread set it: once a
    # thread has set OpenBLAS's count, it alone may change it while it lives)
    assert len(seen["both"]) == len(before)
    assert _blas_counts() == before
    with blas_threads(1):  # nested in one thread: the outer call's limit holds throughout
        with blas_threads(2):
            pass
        assert all(c == 1 for c in _blas_counts())
    assert _blas_counts() == before


def test_sparse_code_lasso_n_jobs_counts_threads(monkeypatch):
    gen = np.random.default_rng(0)
    X = gen.normal(size=(200, 10))
    D = gen.normal(size=(4, 10))
    want = fdict.sparse_code(X, D, algorithm="lasso", alpha=0.1, n_jobs=1)
    calls = []
    encode = fdict.sparse_encode

    def recording(*args, **kwargs):
        calls.append((kwargs.get("n_jobs"), _blas_counts()))
        return encode(*args, **kwargs)

    monkeypatch.setattr(fdict, "sparse_encode", recording)
    got = fdict.sparse_code(X, D, algorithm="lasso", alpha=0.1, n_jobs=2)
    # scikit-learn's n_jobs=2 meant two worker processes (seconds of start-up): fastfs runs
    # it in this process, its BLAS bounded by n_jobs
    assert calls and calls[0][0] == 1
    assert all(c <= 2 for c in calls[0][1])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    for bad, error in ((0, ValueError), (True, TypeError), (1.5, TypeError)):
        with pytest.raises(error, match="n_jobs"):
            fdict.sparse_code(X, D, algorithm="lasso", alpha=0.1, n_jobs=bad)
