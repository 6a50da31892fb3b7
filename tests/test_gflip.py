"""fastfs.gflip (SPEC 2.4, 1.5, 1.7, 1.8) checked against the plain-NumPy reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastfs
from assertions import same_result
import reference as ref

UTILITIES = ["linear", "zero_one", "sigmoid"]


def assert_valid_result(result, X, y, utility="linear", beta=1.0, *, local_max=True):
    """The SPEC 2.4 / 1.8 contract for one G-flip result."""
    X = np.asarray(X)
    n_features = X.shape[1]
    assert isinstance(result, fastfs.GFlipResult)
    assert isinstance(result, fastfs.SubsetResult)

    support = np.asarray(result.support)
    assert support.dtype == np.bool_
    assert support.shape == (n_features,)

    # selected: exactly the support's indices, each once (order = order of entry)
    selected = np.asarray(result.selected)
    assert np.issubdtype(selected.dtype, np.integer)
    assert len(set(selected.tolist())) == selected.size
    assert_array_equal(np.sort(selected), np.flatnonzero(support))

    # score = a from-scratch recomputation (relative 1e-9)
    assert isinstance(result.score, float)
    want = ref.subset_score(X, y, support, utility, beta)
    assert result.score == pytest.approx(want, rel=1e-9, abs=1e-9)

    # history: score after each epoch, non-decreasing, ends at the score
    history = np.asarray(result.history, dtype=np.float64)
    assert history.ndim == 1
    assert history.size == result.n_epochs >= 1
    tol = 1e-12 * max(1.0, abs(result.score))
    assert np.all(np.diff(history) >= -tol), history
    assert history[-1] == pytest.approx(result.score, rel=1e-12, abs=1e-12)

    assert result.n_flips >= 0
    if local_max:
        ok, worst = ref.gflip_is_local_max(X, y, support, utility, beta, rtol=1e-9)
        assert ok, f"a single flip improves e by {worst} (score {result.score})"


# ------------------------------------------------------------------------------------------
# correctness against the reference


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_data_local_max(random_problem, seed):
    X, y = random_problem
    result = fastfs.gflip(X, y, random_state=seed)
    assert_valid_result(result, X, y)


@pytest.mark.parametrize("seed", [0, 5, 7])
def test_xor300_local_max(xor300, seed):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=seed)
    assert_valid_result(result, X, y)


@pytest.mark.parametrize("utility, beta", [("linear", 1.0), ("zero_one", 1.0),
                                           ("sigmoid", 1.0), ("sigmoid", 10.0)])
def test_all_utilities_local_max(random_problem, xor300, utility, beta):
    for X, y in (random_problem, xor300):
        result = fastfs.gflip(X, y, utility=utility, beta=beta, random_state=11)
        assert_valid_result(result, X, y, utility, beta)


def test_multiclass_string_labels(rng):
    X = rng.standard_normal((100, 8))
    codes = rng.integers(0, 4, size=100)
    X[:, 2] += 4 * codes  # clearly separated: G-flip selects feature 2
    y = np.array(["w", "x", "y", "z"])[codes]
    result = fastfs.gflip(X, y, random_state=0)
    assert_valid_result(result, X, y)
    same_result(result, fastfs.gflip(X, codes, random_state=0))


def test_ties_and_duplicates(rng):
    X = rng.integers(0, 3, size=(60, 6)).astype(np.float64)
    X = np.vstack([X, X[:10]])
    y = rng.integers(0, 2, size=X.shape[0])
    X[:, 1] += 2 * y
    for utility in UTILITIES:
        result = fastfs.gflip(X, y, utility=utility, random_state=4)
        assert_valid_result(result, X, y, utility)


def test_every_flip_accepted_and_constant_columns(rng):
    # Duplicated rows make every added feature raise e (each one only adds to the misses), so
    # every candidate of the first epoch flips and each flip is applied by the next candidate's
    # pass over the state; constant columns (one of them in the initial set) can never flip,
    # and are left out of the answer (they change no margin).
    X = rng.standard_normal((150, 12))
    X = np.vstack([X, X[:90]])
    X[:, [3, 8]] = 2.5
    y = rng.integers(0, 3, size=150)
    y = np.concatenate([y, y[:90]])
    X[:, 0] += y
    for start in (None, [3, 5]):
        result = fastfs.gflip(X, y, initial=start, random_state=2)
        assert_valid_result(result, X, y)
        assert not result.support[8] and not result.support[3]
        assert 3 not in result.selected
    first = fastfs.gflip(X, y, max_epochs=1, n_restarts=1, random_state=2)
    assert first.n_flips >= 8


def test_singleton_class(rng):
    X = rng.standard_normal((41, 5))
    y = np.array([0] * 20 + [1] * 20 + [2])
    X[:40, 0] += 2 * y[:40]
    result = fastfs.gflip(X, y, random_state=0)
    assert_valid_result(result, X, y)


def test_xor1000_linear_selects_the_three_relevant_features(xor1000):
    X, y = xor1000
    result = fastfs.gflip(X, y, utility="linear", random_state=0)
    assert set(np.flatnonzero(result.support).tolist()) == {0, 1, 2}
    assert_valid_result(result, X, y)


def test_defaults_find_xor_for_19_of_20_seeds():
    """Navot's xor (1000 x 10, label = xor of the signs of features 0, 1, 2): G-flip with its
    default arguments must find exactly the three relevant features for nearly every seed
    (one empty start alone: 7 of 20)."""
    found = 0
    for seed in range(20):
        X, y = fastfs.datasets.make_xor(1000, 10, random_state=seed)
        found += set(fastfs.gflip(X, y, random_state=seed).selected.tolist()) == {0, 1, 2}
    assert found >= 19


def test_default_restarts_alternate_empty_and_full_starts(rng):
    """Feature 0 separates the classes, features 1-4 are constant (flipping them never changes
    e, so no flip of theirs is a strict increase): a start from the empty set ends at {0}, a
    start from the full set keeps everything."""
    y = np.repeat([0, 1], 15)
    X = np.column_stack([y + 0.1 * rng.standard_normal(30), np.ones((30, 4))])
    states = []
    fastfs.gflip(X, y, random_state=0, n_restarts=3,
                 callback=lambda s: states.append((s.restart, s.selection.tolist())))
    last = {r: sel for r, sel in states}
    assert last == {0: [True] + [False] * 4, 1: [True] * 5, 2: [True] + [False] * 4}
    for r, sel in states:
        assert sel[1:] == [r == 1] * 4
    # with initial, every restart starts there
    got = fastfs.gflip(X, y, random_state=0, n_restarts=2, initial=[])
    assert got.selected.tolist() == [0]


def test_reference_gflip_agrees_on_xor(xor300):
    # The brute-force reference G-flip with its own visiting orders also finds a local
    # maximum, and fastfs started from the reference's answer does not move.
    X, y = xor300
    gen = np.random.default_rng(0)
    orders = [gen.permutation(X.shape[1]) for _ in range(20)]
    mask, score, history = ref.gflip(X, y, orders)
    assert np.all(np.diff(history) >= 0)
    assert ref.gflip_is_local_max(X, y, mask)[0]
    result = fastfs.gflip(X, y, initial=mask, random_state=0)
    assert_array_equal(result.support, mask)
    assert result.score == pytest.approx(score, rel=1e-9)
    assert result.n_flips == 0


@pytest.mark.parametrize("utility", UTILITIES)
@pytest.mark.parametrize("start", ["empty", "full"])
def test_mixed_feature_scales_float64(utility, start):
    # Unscaled data: one irrelevant column of order 1e8 next to xor features of order 1. Its
    # squared differences (~1e16) dwarf the others, so removing it from the distance matrix by
    # subtraction cancels catastrophically; SPEC 2.4 requires the answer not to depend on such
    # rounding (result = local maximum, score = from-scratch value to 1e-9).
    X, y = fastfs.datasets.make_xor(200, n_features=6, random_state=0)
    X[:, 5] = np.random.default_rng(0).standard_normal(200) * 1e8
    initial = None if start == "empty" else np.ones(6, dtype=bool)
    result = fastfs.gflip(X, y, utility=utility, initial=initial, random_state=0)
    assert_valid_result(result, X, y, utility)


@pytest.mark.parametrize("seed", [3, 5])
def test_mixed_feature_scales_float32(seed):
    # The same effect in float32 for a column of order 1e3, which is ordinary raw data. The
    # tolerance is far above float32 rounding of the margins: a missed improvement of more
    # than 2% of the samples is a wrong answer, not rounding.
    X, y = fastfs.datasets.make_xor(200, n_features=6, random_state=seed)
    X[:, 5] = np.random.default_rng(seed).standard_normal(200) * 1e3
    X32 = X.astype(np.float32)
    result = fastfs.gflip(X32, y, utility="zero_one", random_state=seed)
    base, gains = ref.flip_improvements(X32, y, result.support, "zero_one")
    assert result.score == pytest.approx(base, abs=1.0)
    assert gains.max() <= 0.02 * X.shape[0], (
        f"flipping feature {int(np.argmax(gains))} raises e from {base} by {gains.max()}")


# ------------------------------------------------------------------------------------------
# randomness, threads, restarts


def test_n_jobs_do_not_change_the_result(xor300, random_problem):
    for X, y in (xor300, random_problem):
        for n_restarts in (1, 3):
            one = fastfs.gflip(X, y, random_state=123, n_jobs=1, n_restarts=n_restarts)
            two = fastfs.gflip(X, y, random_state=123, n_jobs=2, n_restarts=n_restarts)
            same_result(one, two)


def test_random_state_int_is_deterministic(xor300):
    X, y = xor300
    same_result(fastfs.gflip(X, y, random_state=42), fastfs.gflip(X, y, random_state=42))


def test_random_state_generator_is_deterministic(xor300):
    X, y = xor300
    a = fastfs.gflip(X, y, random_state=np.random.default_rng(9))
    b = fastfs.gflip(X, y, random_state=np.random.default_rng(9))
    same_result(a, b)


def test_random_state_randomstate_is_deterministic(xor300):
    X, y = xor300
    a = fastfs.gflip(X, y, random_state=np.random.RandomState(9))
    b = fastfs.gflip(X, y, random_state=np.random.RandomState(9))
    same_result(a, b)


def test_random_state_none_works(xor300):
    X, y = xor300
    assert_valid_result(fastfs.gflip(X, y, random_state=None), X, y)
    assert_valid_result(fastfs.gflip(X, y), X, y)


def test_random_state_extreme_seeds(xor300):
    X, y = xor300
    for seed in (0, 2**32, 2**63, 2**64 - 1):
        assert_valid_result(fastfs.gflip(X, y, random_state=seed, max_epochs=3), X, y,
                            local_max=False)


def test_different_seeds_visit_in_different_orders(xor300):
    # xor300 has several local maxima; not every seed may land on the same one.
    X, y = xor300
    outcomes = {tuple(fastfs.gflip(X, y, random_state=s, n_jobs=1).history.round(9))
                for s in range(8)}
    assert len(outcomes) > 1


@pytest.mark.parametrize("seed", range(4))
def test_restarts_never_worse_than_one(xor300, seed):
    X, y = xor300
    single = fastfs.gflip(X, y, random_state=seed, n_restarts=1)
    multi = fastfs.gflip(X, y, random_state=seed, n_restarts=3)
    assert multi.score >= single.score
    assert 0 <= multi.best_restart < 3
    assert_valid_result(multi, X, y)


def test_restarts_can_improve(xor300):
    # xor300 has poor local maxima that some single runs end in; extra restarts escape them.
    X, y = xor300
    for seed in range(10):
        one = fastfs.gflip(X, y, random_state=seed, n_restarts=1, n_jobs=1)
        four = fastfs.gflip(X, y, random_state=seed, n_restarts=4, n_jobs=1)
        assert four.score >= one.score
        if four.score > one.score:
            assert four.best_restart > 0
            break
    else:
        pytest.fail("no seed in range(10) where restarts improved the score")


# ------------------------------------------------------------------------------------------
# dtypes and inputs


def test_float32_close_to_float64(xor300):
    X, y = xor300
    r64 = fastfs.gflip(X, y, random_state=0)
    r32 = fastfs.gflip(X.astype(np.float32), y, random_state=0)
    assert_array_equal(r32.support, r64.support)
    assert r32.score == pytest.approx(r64.score, rel=1e-4)
    assert r32.score == pytest.approx(
        ref.subset_score(X.astype(np.float32), y, r32.support), rel=1e-4)


def test_pandas_feature_names(xor300):
    pd = pytest.importorskip("pandas")
    X, y = xor300
    names = [f"f{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    result = fastfs.gflip(df, pd.Series(y), random_state=0)
    same_result(result, fastfs.gflip(X, y, random_state=0))
    assert result.feature_names is not None
    assert list(result.feature_names) == names
    assert list(result.selected_names) == [names[i] for i in result.selected]


def test_no_feature_names_for_arrays(xor300):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=0, max_epochs=2)
    assert result.feature_names is None
    assert result.selected_names is None


# ------------------------------------------------------------------------------------------
# initial subset


def test_initial_mask_and_indices_agree(xor300):
    X, y = xor300
    mask = np.zeros(X.shape[1], dtype=bool)
    mask[[1, 4, 7]] = True
    a = fastfs.gflip(X, y, initial=mask, random_state=3)
    b = fastfs.gflip(X, y, initial=np.array([1, 4, 7]), random_state=3)
    c = fastfs.gflip(X, y, initial=[7, 1, 4], random_state=3)
    same_result(a, b)
    assert_array_equal(a.support, c.support)
    assert a.score == c.score
    assert_valid_result(a, X, y)


def test_initial_at_a_local_max_stays(xor300):
    X, y = xor300
    first = fastfs.gflip(X, y, random_state=0)
    for initial in (first.support, np.flatnonzero(first.support)):
        again = fastfs.gflip(X, y, initial=initial, random_state=99)
        assert_array_equal(again.support, first.support)
        assert again.score == pytest.approx(first.score, rel=1e-12)
        assert again.n_flips == 0
        assert again.n_epochs == 1


def test_initial_empty_list_is_empty_set(xor300):
    X, y = xor300
    # restart 0 of the default starts from the empty set too
    same_result(fastfs.gflip(X, y, initial=[], random_state=5, n_restarts=1),
                fastfs.gflip(X, y, random_state=5, n_restarts=1))


def test_initial_full_set(random_problem):
    X, y = random_problem
    result = fastfs.gflip(X, y, initial=np.ones(X.shape[1], dtype=bool), random_state=0)
    assert_valid_result(result, X, y)


# ------------------------------------------------------------------------------------------
# epochs, callback, verbose


def test_max_epochs_one(xor300):
    X, y = xor300
    result = fastfs.gflip(X, y, max_epochs=1, random_state=0)
    assert result.n_epochs == 1
    assert result.history.size == 1
    assert_valid_result(result, X, y, local_max=False)


def test_max_epochs_is_respected(xor1000):
    X, y = xor1000
    full = fastfs.gflip(X, y, random_state=0, n_restarts=1)
    assert full.n_epochs >= 3  # this seed needs several epochs
    short = fastfs.gflip(X, y, random_state=0, max_epochs=2, n_restarts=1)
    assert short.n_epochs == 2
    assert_array_equal(short.history, full.history[:2])


def test_stops_after_an_epoch_without_change(xor300):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=0, max_epochs=100)
    assert result.n_epochs < 100
    # the last epoch changed nothing, so its score repeats the previous one
    if result.n_epochs >= 2:
        assert result.history[-1] == pytest.approx(result.history[-2], rel=1e-12)


def test_callback_receives_step_states(xor300):
    X, y = xor300
    states = []

    def callback(state):
        states.append(state)
        return None

    result = fastfs.gflip(X, y, random_state=0, callback=callback, n_restarts=1)
    same_result(result, fastfs.gflip(X, y, random_state=0, n_restarts=1))
    assert not result.stopped_early
    assert len(states) == result.n_epochs
    for state in states:
        assert isinstance(state, fastfs.StepState)
        assert state.restart == 0
        assert state.selection.dtype == np.bool_
        assert state.selection.shape == (X.shape[1],)
        assert not state.selection.flags.writeable
        with pytest.raises(dataclasses.FrozenInstanceError):
            state.score = 0.0  # type: ignore[misc]
    steps = [s.step for s in states]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    np.testing.assert_allclose([s.score for s in states], result.history, rtol=1e-12)
    assert_array_equal(states[-1].selection, result.support)


def test_callback_true_stops_after_first_epoch(xor300):
    X, y = xor300
    calls = []

    def stop(state):
        calls.append(state)
        return True

    result = fastfs.gflip(X, y, random_state=0, callback=stop)
    assert len(calls) == 1
    assert result.n_epochs == 1
    assert result.stopped_early is True
    assert result.history.size == 1
    assert result.score == pytest.approx(calls[0].score, rel=1e-12)
    assert_array_equal(result.support, calls[0].selection)
    assert_valid_result(result, X, y, local_max=False)


def test_callback_with_restarts_stops_everything(xor300):
    X, y = xor300
    calls = []
    result = fastfs.gflip(X, y, random_state=0, n_restarts=3,
                          callback=lambda s: calls.append(s) or True)
    assert len(calls) == 1
    assert result.stopped_early is True
    assert result.n_epochs == 1


def test_callback_stop_in_a_later_restart_returns_best_so_far(xor300):
    # Stop at the first epoch of restart 1: the result is the better of restart 0's final
    # subset and restart 1's current one (SPEC 1.7: "the best result so far").
    X, y = xor300
    for seed in (3, 5):
        first = fastfs.gflip(X, y, random_state=seed, n_restarts=1)
        calls = []
        result = fastfs.gflip(X, y, random_state=seed, n_restarts=2,
                              callback=lambda s: calls.append(s) or s.restart == 1)
        assert calls[-1].restart == 1 and calls[-1].step == calls[0].step
        assert result.score == pytest.approx(max(first.score, calls[-1].score), rel=1e-12)
        assert_valid_result(result, X, y, local_max=False)


def test_callback_exception_propagates(xor300):
    X, y = xor300

    class Boom(RuntimeError):
        pass

    def callback(state):
        raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        fastfs.gflip(X, y, random_state=0, callback=callback)


def test_callback_must_be_callable(xor300):
    X, y = xor300
    with pytest.raises(TypeError, match="callback"):
        fastfs.gflip(X, y, callback=42)


def test_verbose(xor300, capsys):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=0, verbose=True)
    same_result(result, fastfs.gflip(X, y, random_state=0))
    captured = capsys.readouterr()
    assert "gflip" in captured.err
    assert captured.out == ""


def test_verbose_with_callback(xor300, capsys):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=0, verbose=True, callback=lambda s: True)
    assert result.n_epochs == 1 and result.stopped_early
    assert "gflip" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------
# result object


def test_result_is_frozen_with_readable_repr(xor300):
    X, y = xor300
    result = fastfs.gflip(X, y, random_state=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.score = 1.0  # type: ignore[misc]
    text = repr(result)
    assert text.startswith("GFlipResult(")
    assert "score=" in text and "selected=" in text and "n_epochs=" in text


def test_stopped_early_is_set_whatever_restart_wins(xor300):
    # The callback stops during restart 1; the flag reports that the search was cut short
    # even when restart 0's subset is the one returned.
    X, y = xor300
    for seed in (3, 5):
        result = fastfs.gflip(X, y, random_state=seed, n_restarts=3,
                              callback=lambda s: s.restart == 1)
        assert result.stopped_early is True
        assert result.best_restart in (0, 1)


def test_larger_multiclass_problem_with_odd_class_sizes():
    # 613 samples in classes of 7, 200 and 406 samples: exercises the threaded path, the
    # four-row groups with remainders at class boundaries and the blocked candidate scoring.
    gen = np.random.default_rng(99)
    y = np.repeat([0, 1, 2], [7, 200, 406])
    gen.shuffle(y)
    X = gen.standard_normal((y.size, 25))
    X[:, 4] += y
    X[:, 11] -= 0.7 * (y == 2)
    results = [fastfs.gflip(X, y, random_state=1, n_jobs=j) for j in (1, 2, 3)]
    for r in results[1:]:
        assert np.array_equal(r.support, results[0].support)
        assert r.score == results[0].score
        assert np.array_equal(r.history, results[0].history)
    r = results[0]
    assert ref.subset_score(X, y, r.support) == pytest.approx(r.score, rel=1e-9)
    ok, worst = ref.gflip_is_local_max(X, y, r.support, "linear")
    assert ok, worst


def test_an_empty_selection_warns():
    # Every sample has a sample of the other class at distance 0 and its nearest hit farther on
    # every feature, so from the empty set no single feature raises e: nothing is selected, and
    # an empty subset is not an answer to return silently.
    X = np.repeat(np.arange(6.0), 2)[:, None] * np.array([[1.0, 2.0]])
    y = np.tile([0, 1], 6)
    with pytest.warns(UserWarning, match="selected no feature") as rec:
        res = fastfs.gflip(X, y, n_restarts=1, random_state=0)
    assert res.selected.size == 0
    text = str(rec[0].message)
    assert "start from the full set too (n_restarts >= 2)" in text
    assert "try utility='sigmoid'" in text


def test_the_empty_selection_warning_gives_the_advice_that_fits_the_call():
    # Three-valued noise: the empty start and the full start end on the same score, and the
    # tie goes to the first restart (the empty one). The call already starts from both sets
    # and uses the sigmoid utility, so the warning says what happened and advises neither.
    gen = np.random.default_rng(9)
    X = gen.integers(0, 3, size=(50, 4)).astype(float)
    y = gen.integers(0, 3, 50)
    with pytest.warns(UserWarning, match="selected no feature") as rec:
        res = fastfs.gflip(X, y, utility="sigmoid", random_state=0)
    assert res.selected.size == 0 and res.best_restart == 0
    assert res.restart_scores[0] == res.restart_scores[1] == res.score
    text = str(rec[0].message)
    assert "restarts that tie go to the first one, which starts from the empty set" in text
    # from a given start no restart is the empty one: no word about it
    B = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.warns(UserWarning, match="selected no feature") as rec:
        fastfs.gflip(np.repeat(B, 2, 0), np.array([0, 1] * 20), initial=[0, 1, 2],
                     n_restarts=2)
    assert "empty set" not in str(rec[0].message).split("(e(F)")[1]
    assert "n_restarts >= 2" not in text and "try utility" not in text


def test_constant_features_are_never_selected(rng):
    # From the full start, dropping a constant feature never raises e(F) strictly, so every
    # one stayed (188 blank pixels of MNIST): they are left out, and the score is the same
    X = rng.standard_normal((60, 6))
    y = (X[:, 0] + 0.3 * rng.standard_normal(60) > 0).astype(int)
    X = np.column_stack([X, np.full(60, 3.0), np.zeros(60)])  # features 6 and 7 constant
    res = fastfs.gflip(X, y, random_state=0)
    assert not res.support[6:].any()
    assert set(res.selected) == set(np.flatnonzero(res.support))
    assert res.score == pytest.approx(ref.subset_score(X, y, res.support), rel=1e-9)
    full = np.ones(8, dtype=bool)
    with_all = fastfs.gflip(X, y, initial=full, n_restarts=1, random_state=0)
    assert not with_all.support[6:].any()
    kept = with_all.support.copy()
    kept[6:] = True  # the constant features change no margin
    assert ref.subset_score(X, y, kept) == pytest.approx(with_all.score, rel=1e-12)


def test_verbose_lines_show_restarts_and_scores_only_where_there_are_any(xor300, capsys):
    # one line a step on stderr (no tqdm bar captured here): Relief's pass has neither a
    # restart nor a score, G-flip's epochs have a score
    X, y = xor300
    import fastfs._progress as progress

    bar = progress.Progress("relieff", None, True)
    if bar._bar is not None:  # tqdm installed: the plain lines are not used
        bar.close()
        pytest.skip("tqdm draws the progress")
    bar.hook(0, 2, float("nan"), np.zeros(1))
    bar.hook(1, 3, 0.5, np.zeros(1))
    assert capsys.readouterr().err.splitlines() == [
        "[relieff] step 2", "[relieff] restart 1 step 3: score 0.5"]
