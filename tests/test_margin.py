"""fastfs.margins and fastfs.margin_score against the plain-NumPy reference (SPEC 1.4, 2.1-2.3)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref

TIGHT = dict(rtol=1e-12, atol=1e-12)


def _check_margins(X, y, weights=None):
    got = fastfs.margins(X, y, weights)
    want = ref.margins(X, y, weights)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    assert got.shape == (np.asarray(X).shape[0],)
    assert_array_equal(np.isnan(got), np.isnan(want))
    assert_allclose(got, want, **TIGHT)
    return got


# ------------------------------------------------------------------------------------------
# the reference itself


def test_reference_on_a_hand_computed_example():
    # 1-D points 0, 1, 3, 7 with labels a, a, b, b.
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    y = np.array(["a", "a", "b", "b"])
    # x=0: hit 1 (d=1), miss 3 (d=3) -> (3-1)/2 = 1
    # x=1: hit 0 (d=1), miss 3 (d=2) -> 0.5
    # x=3: hit 7 (d=4), miss 1 (d=2) -> -1
    # x=7: hit 3 (d=4), miss 1 (d=6) -> 1
    assert_allclose(ref.margins(X, y), [1.0, 0.5, -1.0, 1.0], **TIGHT)
    assert_allclose(fastfs.margins(X, y), [1.0, 0.5, -1.0, 1.0], **TIGHT)
    # weight 2 doubles every distance and so every margin
    assert_allclose(fastfs.margins(X, y, [2.0]), [2.0, 1.0, -2.0, 2.0], **TIGHT)


def test_reference_weighted_distances_match_definition(rng):
    X = rng.standard_normal((7, 3))
    w = rng.standard_normal(3)
    D = ref.weighted_sq_distances(X, w)
    for a in range(7):
        for b in range(7):
            assert D[a, b] == pytest.approx(np.sum(w**2 * (X[a] - X[b]) ** 2), rel=1e-14)


# ------------------------------------------------------------------------------------------
# margins


def test_margins_random_data(rng):
    X = rng.standard_normal((80, 6))
    y = rng.integers(0, 2, size=80)
    got = _check_margins(X, y)
    assert np.isfinite(got).all()


def test_margins_with_weights(rng):
    X = rng.standard_normal((70, 5))
    y = rng.integers(0, 2, size=70)
    _check_margins(X, y, rng.uniform(0.0, 2.0, size=5))
    # A subset is its 0/1 weight vector (SPEC 2.1).
    _check_margins(X, y, np.array([1.0, 0.0, 1.0, 0.0, 0.0]))


def test_margins_and_score_take_weights_and_X_of_any_layout(rng):
    # A strided weight vector, and a one-feature X and weights reversed (NumPy flags an axis of
    # length 1 contiguous whatever its stride, -8 here; the core needs plain strides).
    X = rng.standard_normal((30, 4))
    y = np.repeat([0, 1], 15)
    w = rng.uniform(0.5, 2.0, 4)
    _check_margins(X, y, np.repeat(w, 3)[::3])
    assert_allclose(fastfs.margin_score(X, y, np.repeat(w, 3)[::3]), ref.margin_score(X, y, w),
                    **TIGHT)
    X1 = X[:, :1][:, ::-1]
    assert X1.strides[1] < 0
    _check_margins(X1, y, w[:1][::-1])
    with pytest.raises(TypeError, match="weights: complex values are not supported"):
        fastfs.margins(X, y, w + 0j)
    # X whose data start one byte into a buffer: misaligned doubles are copied once, aligned
    buf = np.zeros(X.nbytes + 1, dtype=np.uint8)
    unaligned = np.frombuffer(buf.data, dtype=np.float64, count=X.size, offset=1).reshape(X.shape)
    unaligned[...] = X
    assert not unaligned.flags.aligned
    _check_margins(unaligned, y, w)


def test_margins_negative_weights_act_through_their_square(rng):
    X = rng.standard_normal((40, 4))
    y = rng.integers(0, 2, size=40)
    w = np.array([1.5, -0.5, 2.0, -1.0])
    got = _check_margins(X, y, w)
    assert_allclose(got, fastfs.margins(X, y, np.abs(w)), **TIGHT)


def test_margins_all_zero_weights_are_zero(rng):
    X = rng.standard_normal((30, 3))
    y = rng.integers(0, 2, size=30)
    got = _check_margins(X, y, np.zeros(3))
    assert_array_equal(got, 0.0)


@pytest.mark.parametrize("n_classes", [3, 4])
def test_margins_multiclass(rng, n_classes):
    X = rng.standard_normal((90, 5))
    y = rng.integers(0, n_classes, size=90)
    assert np.unique(y).size == n_classes
    _check_margins(X, y)
    _check_margins(X, y, rng.uniform(0.1, 1.0, size=5))


def test_margins_string_labels(rng):
    X = rng.standard_normal((60, 4))
    codes = rng.integers(0, 3, size=60)
    names = np.array(["setosa", "versicolor", "virginica"])
    got = _check_margins(X, names[codes])
    # Labels only matter through equality: same answer as integer codes, as object array,
    # and as a Python list.
    assert_allclose(got, fastfs.margins(X, codes), **TIGHT)
    assert_allclose(got, fastfs.margins(X, names[codes].astype(object)), **TIGHT)
    assert_allclose(got, fastfs.margins(X, list(names[codes])), **TIGHT)


def test_margins_arbitrary_integer_labels(rng):
    X = rng.standard_normal((40, 3))
    y = np.array([7, -3, 1000])[rng.integers(0, 3, size=40)]
    _check_margins(X, y)


def test_margins_ties_lowest_index(rng):
    # Small integer values: many exactly equal distances between hits and between misses.
    X = rng.integers(0, 3, size=(60, 3)).astype(np.float64)
    y = rng.integers(0, 2, size=60)
    _check_margins(X, y)
    _check_margins(X, y, np.array([1.0, 2.0, 1.0]))


def test_margins_tie_breaking_picks_lowest_index():
    # Sample 0 at the origin; hits 1 and 2 both at distance 1 and misses 3 and 4 both at
    # distance 2: any consistent tie rule gives the same margin, but the hit/miss used must be
    # a real equidistant neighbour, never sample 0 itself.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    y = np.array([0, 0, 0, 1, 1])
    got = _check_margins(X, y)
    assert got[0] == pytest.approx(0.5, abs=1e-15)


def test_margins_duplicate_samples(rng):
    X = rng.standard_normal((30, 4))
    X = np.vstack([X, X[:10], X[5:8]])  # exact duplicates: distance 0
    y = rng.integers(0, 2, size=X.shape[0])
    got = _check_margins(X, y)
    assert np.isfinite(got).all()


def test_margins_duplicate_hit_and_duplicate_miss():
    X = np.array([[0.0], [0.0], [0.0], [5.0], [5.0]])
    y = np.array([0, 0, 1, 1, 1])
    # sample 0: hit 1 at 0, miss 2 at 0 -> 0; sample 2: hit 3 at 5, miss 0 at 0 -> -2.5
    got = _check_margins(X, y)
    assert_allclose(got, [0.0, 0.0, -2.5, 2.5, 2.5], **TIGHT)


def test_margins_singleton_class_gets_nan(rng):
    X = rng.standard_normal((25, 3))
    y = np.array([0] * 12 + [1] * 12 + [2])
    got = _check_margins(X, y)
    assert np.isnan(got[-1])
    assert np.isfinite(got[:-1]).all()


def test_margins_singleton_is_still_a_miss_for_others():
    X = np.array([[0.0], [0.1], [3.0], [4.0]])
    y = np.array([0, 1, 0, 2])
    got = _check_margins(X, y)
    # sample 0: hit 2 (d=3), miss 1 (d=0.1) -> (0.1 - 3) / 2; samples 1 and 3 have no hit.
    assert got[0] == pytest.approx(-1.45, abs=1e-12)
    assert np.isnan(got[1]) and np.isnan(got[3])


def test_margins_float32_close_to_float64(rng):
    X = rng.standard_normal((80, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=80)
    got = fastfs.margins(X, y)
    want = ref.margins(X.astype(np.float64), y)
    assert got.shape == want.shape
    assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    w = rng.uniform(0.5, 1.5, size=5)
    assert_allclose(fastfs.margins(X, y, w), ref.margins(X.astype(np.float64), y, w),
                    rtol=1e-4, atol=1e-5)


def test_margins_pandas_dataframe(rng):
    pd = pytest.importorskip("pandas")
    X = rng.standard_normal((50, 4))
    y = rng.integers(0, 2, size=50)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    got = fastfs.margins(df, pd.Series(y))
    assert_allclose(got, ref.margins(X, y), **TIGHT)
    assert fastfs.margin_score(df, y) == pytest.approx(ref.margin_score(X, y), rel=1e-12)


def test_margins_smallest_legal_problem():
    # Three samples, classes of size 2 and 1: the singleton has no hit (NaN) and adds nothing.
    X = np.array([[0.0, 1.0], [1.0, 1.0], [3.0, 1.0]])
    y = np.array([0, 0, 1])
    got = _check_margins(X, y)
    assert_allclose(got[:2], [1.0, 0.5], **TIGHT)
    assert np.isnan(got[2])
    assert fastfs.margin_score(X, y) == pytest.approx(1.5, rel=1e-12)


def test_margins_n_jobs_do_not_change_the_result(rng):
    X = rng.standard_normal((120, 5))
    y = rng.integers(0, 3, size=120)
    base = fastfs.margins(X, y, n_jobs=1)
    for n_jobs in (2, -1, None):
        assert_array_equal(fastfs.margins(X, y, n_jobs=n_jobs), base)


# ------------------------------------------------------------------------------------------
# margin_score


@pytest.mark.parametrize(
    "utility, beta",
    [("linear", 1.0), ("zero_one", 1.0), ("sigmoid", 1.0), ("sigmoid", 0.3), ("sigmoid", 7.5)],
)
def test_margin_score_matches_reference(rng, utility, beta):
    X = rng.standard_normal((90, 6))
    y = rng.integers(0, 3, size=90)
    w = rng.uniform(0.0, 1.5, size=6)
    for weights in (None, w):
        got = fastfs.margin_score(X, y, weights, utility=utility, beta=beta)
        want = ref.margin_score(X, y, weights, utility=utility, beta=beta)
        assert isinstance(got, float)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_margin_score_beta_ignored_for_linear_and_zero_one(rng):
    X = rng.standard_normal((40, 3))
    y = rng.integers(0, 2, size=40)
    for utility in ("linear", "zero_one"):
        assert fastfs.margin_score(X, y, utility=utility, beta=5.0) == pytest.approx(
            fastfs.margin_score(X, y, utility=utility, beta=1.0), rel=1e-12, abs=1e-12)


def test_margin_score_sigmoid_depends_on_beta(rng):
    X = rng.standard_normal((40, 3))
    y = rng.integers(0, 2, size=40)
    a = fastfs.margin_score(X, y, utility="sigmoid", beta=0.5)
    b = fastfs.margin_score(X, y, utility="sigmoid", beta=4.0)
    assert a != pytest.approx(b)


def test_margin_score_linear_is_sum_of_margins(rng):
    X = rng.standard_normal((50, 4))
    y = rng.integers(0, 2, size=50)
    assert fastfs.margin_score(X, y) == pytest.approx(np.sum(fastfs.margins(X, y)), rel=1e-12)


def test_margin_score_zero_one_counts_positive_margins(rng):
    X = rng.integers(0, 3, size=(60, 2)).astype(float)  # ties: many margins exactly 0
    y = rng.integers(0, 2, size=60)
    theta = ref.margins(X, y)
    assert np.any(theta == 0.0)
    got = fastfs.margin_score(X, y, utility="zero_one")
    assert got == float(np.sum(theta > 0))


@pytest.mark.parametrize("utility", ["linear", "zero_one", "sigmoid"])
def test_margin_score_excludes_nan_margins(rng, utility):
    X = rng.standard_normal((31, 3))
    y = np.array([0] * 15 + [1] * 15 + [2])
    got = fastfs.margin_score(X, y, utility=utility, beta=2.0)
    want = ref.margin_score(X, y, utility=utility, beta=2.0)
    assert np.isfinite(got)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("utility", ["linear", "zero_one", "sigmoid"])
def test_margin_score_ties_and_duplicates(rng, utility):
    X = rng.integers(0, 2, size=(50, 4)).astype(float)
    X = np.vstack([X, X[:5]])
    y = rng.integers(0, 3, size=X.shape[0])
    got = fastfs.margin_score(X, y, utility=utility, beta=1.5)
    want = ref.margin_score(X, y, utility=utility, beta=1.5)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("utility", ["linear", "zero_one", "sigmoid"])
def test_margin_score_float32_close_to_float64(rng, utility):
    X = rng.standard_normal((80, 5))
    y = rng.integers(0, 2, size=80)
    got = fastfs.margin_score(X.astype(np.float32), y, utility=utility)
    want = ref.margin_score(X.astype(np.float32).astype(np.float64), y, utility=utility)
    # zero_one counts can move by one for a margin within float32 rounding of 0
    tol = 1.0 if utility == "zero_one" else 1e-4 * max(1.0, abs(want))
    assert abs(got - want) <= tol


# ------------------------------------------------------------------------------------------
# Wide data (>= 64 features): neighbour queries shortlist candidates in float32 and take exact
# float64 distances of the shortlist only; the answer must be that of an exhaustive scan.


def test_shortlist_large_offset_small_noise():
    # float32 cannot resolve the noise on top of the offset: the shortlist must widen itself.
    gen = np.random.default_rng(7)
    X = 1e4 + 1e-3 * gen.standard_normal((120, 80))
    y = gen.integers(0, 3, 120)
    _check_margins(X, y)


def test_shortlist_near_duplicates():
    gen = np.random.default_rng(8)
    base = gen.standard_normal((40, 96))
    X = np.vstack([base, base + 1e-9 * gen.standard_normal(base.shape), base[:10]])
    y = gen.integers(0, 2, X.shape[0])
    _check_margins(X, y)


def test_shortlist_integer_ties():
    gen = np.random.default_rng(9)
    X = gen.integers(0, 3, size=(150, 70)).astype(float)
    y = gen.integers(0, 2, 150)
    _check_margins(X, y)


def test_shortlist_mixed_scales_and_weights():
    gen = np.random.default_rng(10)
    X = gen.standard_normal((130, 100)) * np.logspace(-3, 6, 100)
    y = gen.integers(0, 2, 130)
    w = gen.uniform(0, 2, 100)
    w[::7] = 0.0
    _check_margins(X, y)
    _check_margins(X, y, w)
    _check_margins(X, y, np.logspace(3, -3, 100))


def test_shortlist_float32_input():
    gen = np.random.default_rng(11)
    X = gen.standard_normal((160, 90)).astype(np.float32)
    y = gen.integers(0, 2, 160)
    got = fastfs.margins(X, y)
    assert_allclose(got, ref.margins(X.astype(np.float64), y), rtol=1e-12, atol=1e-12)


def test_shortlist_weights_below_float32_normal_range_keep_the_true_nearest_hit():
    # Squared weights of 1.05e-45 are rounded by a third when the float32 screen converts
    # them; sample 2 is the true nearest hit of sample 0, yet float32 sees it farther than 1.
    n = 64
    X = np.zeros((6, n))
    w2_tiny, w2_top = 1.05e-45, 1e-34
    X[1, 0] = np.sqrt(1.1 * (n - 1) * w2_tiny * 1e12 / w2_top)
    X[2, 1:] = 1e6
    X[3:] = 1e8
    y = np.array([0, 0, 0, 0, 1, 1])
    w = np.full(n, np.sqrt(w2_tiny))
    w[0] = np.sqrt(w2_top)
    assert_allclose(fastfs.margins(X, y, w), ref.margins(X, y, w), rtol=1e-12, atol=0)


# ------------------------------------------------------------------------------------------
# All samples under one weight vector (no callback): distances of blocks of samples come from
# float32 Gram products with rigorous error bounds, then exact float64 distances of the
# candidates; extreme scales, offsets, copies and ties must not change the answer.


@pytest.mark.parametrize("case", ["tiny", "huge", "offset", "copies", "ties"])
def test_gram_screen_margins_equal_the_reference(case):
    gen = np.random.default_rng(12)
    X = gen.standard_normal((150, 24))
    if case == "tiny":
        X *= 1e-30
    elif case == "huge":
        X *= 1e30
    elif case == "offset":
        X += 1e6
    elif case == "copies":
        X = X[gen.integers(0, 12, 150)]  # every row a copy of one of 12
    else:
        X = np.round(2.0 * X)
    y = gen.integers(0, 3, 150)
    w = gen.uniform(0.0, 2.0, 24)
    w[::5] = 1e-20
    for n_jobs in (1, 2):
        for weights in (None, w):
            got = fastfs.margins(X, y, weights, n_jobs=n_jobs)
            want = ref.margins(X, y, weights)
            assert_array_equal(np.isnan(got), np.isnan(want))
            assert_allclose(got, want, **TIGHT)


def test_gram_screen_two_threads_on_a_large_problem():
    # Large enough (m^2 n >= 2^26) for the screen to split the tiles over two threads.
    gen = np.random.default_rng(13)
    X = np.vstack([gen.standard_normal((900, 80)), np.zeros((200, 80))])
    X[900:] = X[gen.integers(0, 900, 200)]  # copies
    y = gen.integers(0, 2, 1100)
    want = ref.margins(X, y)
    for n_jobs in (1, 2):
        assert_allclose(fastfs.margins(X, y, n_jobs=n_jobs), want, **TIGHT)


# ------------------------------------------------------------------------------------------
# callback / verbose (SPEC 1.7): a step is a block of samples (about 1/64, at least 64)


def test_margins_callback_reports_the_margins_so_far_and_can_stop(rng):
    X = rng.standard_normal((200, 4))
    y = rng.integers(0, 3, 200)
    X[:, 0] += y
    expected = ref.margins(X, y)
    states = []

    def callback(state):
        states.append((state.step, state.score, np.array(state.selection, copy=True)))
        return False

    theta = fastfs.margins(X, y, callback=callback)
    assert_array_equal(theta, fastfs.margins(X, y))  # a callback changes nothing
    assert [s[0] for s in states] == [1, 2, 3, 4]  # 64, 128, 192, 200 samples
    for step, score, so_far in states:
        done = min(64 * step, 200)
        assert_allclose(so_far[:done], expected[:done], rtol=1e-10, atol=1e-12)
        assert np.all(np.isnan(so_far[done:]))
        assert_allclose(score, np.nansum(expected[:done]), rtol=1e-10)

    stopped = fastfs.margins(X, y, callback=lambda s: s.step == 2)
    assert_allclose(stopped[:128], expected[:128], rtol=1e-10, atol=1e-12)
    assert np.all(np.isnan(stopped[128:]))


@pytest.mark.parametrize("utility", ["linear", "zero_one", "sigmoid"])
def test_margin_score_callback_running_sum_and_early_stop(rng, utility):
    X = rng.standard_normal((150, 3))
    y = rng.integers(0, 2, 150)
    theta = ref.margins(X, y)
    u = ref.utility_values(theta, utility, 2.0)
    scores = []
    e = fastfs.margin_score(X, y, utility=utility, beta=2.0,
                            callback=lambda s: scores.append(s.score) and False)
    assert e == fastfs.margin_score(X, y, utility=utility, beta=2.0)
    assert_allclose(scores, [np.nansum(u[:64]), np.nansum(u[:128]), np.nansum(u)], rtol=1e-10)
    assert scores[-1] == e
    early = fastfs.margin_score(X, y, utility=utility, beta=2.0, callback=lambda s: True)
    assert_allclose(early, np.nansum(u[:64]), rtol=1e-10)


def test_margins_verbose_shows_progress(rng, capsys):
    X = rng.standard_normal((100, 3))
    y = rng.integers(0, 2, 100)
    assert_array_equal(fastfs.margins(X, y, verbose=True), fastfs.margins(X, y))
    assert fastfs.margin_score(X, y, verbose=True) == fastfs.margin_score(X, y)
    assert "margin" in capsys.readouterr().err


def _word_counts(rng, m, n, frequent=12):
    """Bag-of-words-like counts: about 3 % nonzeros, a few frequent words, duplicated and empty
    documents (the screen keeps such data sparse)."""
    dens = np.full(n, 0.03)
    dens[:frequent] = 0.4
    X = np.where(rng.random((m, n)) < dens, rng.integers(1, 5, (m, n)), 0).astype(np.float64)
    X[1::9] = X[0::9][: X[1::9].shape[0]]
    X[7] = 0.0
    return X


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_margins_and_relief_on_word_counts(rng, n_jobs):
    X = _word_counts(rng, 300, 400)
    y = rng.integers(0, 3, 300)
    w = rng.random(400) + 0.5
    w[::5] = 0.0
    for weights in (None, w):
        got = fastfs.margins(X, y, weights, n_jobs=n_jobs)
        want = ref.margins(X, y, weights)
        assert_array_equal(np.isnan(got), np.isnan(want))
        assert_allclose(got, want, **TIGHT)
    assert_allclose(fastfs.relief(X, y, n_jobs=n_jobs).weights, ref.relief(X, y), **TIGHT)
    X32 = X.astype(np.float32)
    assert_allclose(fastfs.margins(X32, y, n_jobs=n_jobs), ref.margins(X32.astype(np.float64), y),
                    **TIGHT)
