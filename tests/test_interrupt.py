"""SPEC 1.7: Ctrl-C stops a long C++ loop promptly with KeyboardInterrupt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import fastfs

CHILD = r"""
import sys, time
import numpy as np
import fastfs
rng = np.random.default_rng(0)
X = rng.standard_normal((1200, 6000))   # one epoch scores 6000 candidates: many seconds
y = rng.integers(0, 2, 1200)
print("started", flush=True)
t0 = time.perf_counter()
try:
    fastfs.gflip(X, y, random_state=0, n_jobs=1)
except KeyboardInterrupt:
    print(f"interrupted {time.perf_counter() - t0:.3f}", flush=True)
    sys.exit(0)
print(f"finished {time.perf_counter() - t0:.3f}", flush=True)
"""


SIMBA_CHILD = CHILD.replace(
    "fastfs.gflip(X, y, random_state=0, n_jobs=1)",
    "fastfs.simba(X[:, :2000], y, n_restarts=8, n_iter=20000, random_state=0, n_jobs=2)",
)

SFS_CHILD = CHILD.replace(
    "fastfs.gflip(X, y, random_state=0, n_jobs=1)",
    "fastfs.sfs(X[:, :3000], y, 'best', criterion='loo_knn_accuracy', n_jobs=1)",
)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("child", [CHILD, SIMBA_CHILD, SFS_CHILD],
                         ids=["gflip", "simba_restarts_side_by_side", "sfs"])
def test_ctrl_c_stops_long_runs_promptly(child):
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)  # let the C++ loop get going
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        latency = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.startswith("interrupted"), out
    # About a second per SPEC; generous here because CI machines are shared.
    assert latency < 5.0, latency


# ------------------------------------------------------------------------------------------
# In-process: SIGINT sent by a timer thread to this process while a long C++ loop runs on the
# main thread; Python's default handler raises KeyboardInterrupt there. Every run below would
# take far longer than the test (tens of seconds or more); the test only lasts until the stop.

DELAY = 0.4     # seconds before the signal: the loop is well under way
PROMPT = 2.0    # "about a second", with room for a shared CI machine


def seconds_to_interrupt(run):
    """Runs run() on the main thread, sends SIGINT after DELAY; returns the seconds from the
    signal to KeyboardInterrupt, or None when run() finished first."""
    sent = []
    armed = [True]

    def handler(signum, frame):
        if armed[0]:
            raise KeyboardInterrupt

    def fire():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(DELAY, fire)
    try:
        try:
            timer.start()
            run()
            armed[0] = False
            return None
        except KeyboardInterrupt:
            armed[0] = False
            return time.perf_counter() - sent[0]
    finally:
        armed[0] = False
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)


def assert_interrupted_promptly(run, name, limit=PROMPT):
    latency = seconds_to_interrupt(run)
    assert latency is not None, f"{name} finished before the signal"
    assert latency < limit, latency


@pytest.fixture(scope="module")
def wide():
    """16000 x 2000 float32: one pass of Relief, ReliefF, SURF, MultiSURF*, the margins or SKS
    takes seconds or more even on two threads (Relief and the margins, the fastest, about 3.5 s
    on two cores in November 2026; 8000 x 1000 had become faster than DELAY)."""
    gen = np.random.default_rng(0)
    X = gen.standard_normal((16000, 2000), dtype=np.float32)
    y = gen.integers(0, 2, 16000)
    return X, y


ONE_PASS = {
    "relief": lambda X, y, n_jobs: fastfs.relief(X, y, n_jobs=n_jobs),
    "relieff": lambda X, y, n_jobs: fastfs.relieff(X, y, n_jobs=n_jobs),
    "surf": lambda X, y, n_jobs: fastfs.surf(X, y, n_jobs=n_jobs),
    "multisurfstar": lambda X, y, n_jobs: fastfs.multisurfstar(X, y, n_jobs=n_jobs),
    "margins": lambda X, y, n_jobs: fastfs.margins(X, y, n_jobs=n_jobs),
    "margin_score": lambda X, y, n_jobs: fastfs.margin_score(X, y, n_jobs=n_jobs),
    "sks": lambda X, y, n_jobs: fastfs.sks(X, y.astype(np.float64), n_jobs=n_jobs),
    "knn_regression_score": lambda X, y, n_jobs: fastfs.knn_regression_score(
        X, y.astype(np.float64), n_jobs=n_jobs),
}


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("name", sorted(ONE_PASS))
def test_ctrl_c_stops_one_pass_functions_within_a_second(wide, name, n_jobs):
    X, y = wide
    assert_interrupted_promptly(lambda: ONE_PASS[name](X, y, n_jobs), name)


@pytest.fixture(scope="module")
def wide_classes():
    """2500 x 3000: building the distance state of all features takes seconds."""
    gen = np.random.default_rng(1)
    X = gen.standard_normal((2500, 3000))
    y = gen.integers(0, 2, 2500)
    return X, y


@pytest.fixture(scope="module")
def scatter_problem():
    """400 x 300: one j3 evaluation of ~300 features is an eigendecomposition, a batch of ~300
    of them takes many seconds."""
    gen = np.random.default_rng(2)
    X = gen.standard_normal((400, 300))
    y = gen.integers(0, 3, 400)
    return X, y


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_a_backward_search_inside_a_step(wide_classes, n_jobs):
    X, y = wide_classes
    latency = seconds_to_interrupt(
        lambda: fastfs.sfbs(X, y, 5, criterion="loo_knn_accuracy", n_jobs=n_jobs))
    assert latency is not None and latency < PROMPT, latency


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("run", [
    lambda X, y: fastfs.sbs(X, y, 5, criterion="j3", n_jobs=1),
    lambda X, y: fastfs.sbs(X, y, 5, criterion="j3", n_jobs=2),
    lambda X, y: fastfs.branch_and_bound(X, y, 250, criterion="j3", n_jobs=2),
    lambda X, y: fastfs.sfbs(X, y, 5, criterion="j3", n_jobs=1),
], ids=["sbs_j3_serial", "sbs_j3_parallel", "branch_and_bound_j3", "sfbs_j3"])
def test_ctrl_c_stops_between_candidates_of_a_batch(scatter_problem, run):
    X, y = scatter_problem
    latency = seconds_to_interrupt(lambda: run(X, y))
    assert latency is not None and latency < PROMPT, latency


@pytest.fixture(scope="module")
def tall():
    """20000 x 2000 float32: sorting every column (auc, mutual_info's quantile bins, chi2's
    tables) takes seconds."""
    gen = np.random.default_rng(3)
    X = gen.standard_normal((20000, 2000), dtype=np.float32)
    y = gen.integers(0, 2, 20000)
    return X, y


SORTING_FILTERS = {
    "auc": lambda X, y, n_jobs: fastfs.filters.auc(X, y, n_jobs=n_jobs),
    "mutual_info": lambda X, y, n_jobs: fastfs.filters.mutual_info(X, y, n_jobs=n_jobs),
    # Values rounded to a tenth: about 80 categories per feature, a legal contingency table.
    "chi2": lambda X, y, n_jobs: fastfs.filters.chi2(np.round(X, 1), y, n_jobs=n_jobs),
}


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("name", sorted(SORTING_FILTERS))
def test_ctrl_c_stops_sorting_filters_within_a_second(tall, name, n_jobs):
    X, y = tall
    assert_interrupted_promptly(lambda: SORTING_FILTERS[name](X, y, n_jobs), name)


@pytest.fixture(scope="module")
def many_features():
    """2500 x 1200: one eigendecomposition of a 1200 x 1200 covariance takes about a second,
    and j3, the divergence and the Bhattacharyya distance need several."""
    gen = np.random.default_rng(4)
    X = gen.standard_normal((2500, 1200))
    y = gen.integers(0, 2, 2500)
    return X, y


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
@pytest.mark.parametrize("name", ["j3", "divergence", "bhattacharyya"])
def test_ctrl_c_stops_separability_inside_an_eigendecomposition(many_features, name):
    X, y = many_features
    assert_interrupted_promptly(lambda: getattr(fastfs.separability, name)(X, y), name,
                                limit=1.0)
    # The interrupted worker does not disturb the next call.
    assert fastfs.separability.j1(X[:, :5], y) > 1.0


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_ctrl_c_stops_a_logistic_fit_between_newton_and_cg_steps():
    # one multinomial fit of 4000 x 1000 with 8 classes runs for seconds in one C++ call (the
    # Newton loop polled nothing: KeyboardInterrupt came 30-40 s late). 3000 x 600 with 5
    # classes was used until the CG preconditioner fix made it a 0.3 s fit, finished before
    # the signal.
    from fastfs.learners import logistic_regression

    gen = np.random.default_rng(0)
    X = gen.normal(size=(4000, 1000))
    y = gen.integers(0, 8, 4000)
    assert_interrupted_promptly(lambda: logistic_regression(X, y), "logistic_regression")
