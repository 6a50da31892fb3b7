"""SURF, SURF*, MultiSURF and MultiSURF* (SPEC 11): equal to skrebate 0.8 on continuous features
with binary and multi-class targets, and to the plain-NumPy reference of their formulas."""

from __future__ import annotations

import functools
import warnings
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref

RULES = ("surf", "surfstar", "multisurf", "multisurfstar")
SKREBATE_CLASS = {"surf": "SURF", "surfstar": "SURFstar", "multisurf": "MultiSURF",
                  "multisurfstar": "MultiSURFstar"}


def fastfs_rule(rule):
    return getattr(fastfs, rule)


# ------------------------------------------------------------------------------------------
# data generated here (never downloaded); every feature has far more than 10 distinct values,
# so skrebate treats all of them as continuous


def _shuffled_labels(gen, sizes):
    y = np.repeat(np.arange(len(sizes)), sizes)
    gen.shuffle(y)
    return y


def epistasis_xor(m=100, n=20, seed=1):
    """Two interacting features (the class is the XOR of their signs, each alone is noise)
    among noise features, plus label noise on 10% of the samples."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, n))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    flip = gen.random(m) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def epistasis_parity(m=150, n=30, seed=2):
    """Three interacting features (parity of their signs) among noise: a 3-way interaction,
    labels as strings."""
    gen = np.random.default_rng(seed)
    X = gen.uniform(-1.0, 1.0, (m, n))
    parity = ((X[:, 3] > 0).astype(int) + (X[:, 7] > 0) + (X[:, 11] > 0)) % 2
    return X, np.where(parity == 1, "case", "control")


def gaussian_classes(sizes, n, seed, shift=1.0):
    """Gaussian classes whose means differ on the first three features."""
    gen = np.random.default_rng(seed)
    y = _shuffled_labels(gen, sizes)
    X = gen.standard_normal((y.size, n))
    for f in range(3):
        X[:, f] += shift * (f + 1) * 0.6 * (y == f % len(sizes)) + 0.3 * y
    return X, y


def duplicated_rows(seed=4):
    """40 distinct rows, each twice (distance 0 between the copies, equal distances from every
    other sample to both): ties everywhere but at the thresholds."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((40, 10))
    y = gen.integers(0, 3, 40)
    X[:, 0] += y
    return np.vstack([X, X]), np.concatenate([y, y])


DATASETS = {
    "xor": lambda: epistasis_xor(),
    "parity": lambda: epistasis_parity(),
    "binary-unbalanced": lambda: gaussian_classes((15, 45), 8, 3),
    "three-classes": lambda: gaussian_classes((30, 25, 35), 12, 5),
    "four-classes-one-singleton": lambda: gaussian_classes((1, 20, 30, 24), 10, 6),
    "five-classes": lambda: gaussian_classes((12, 14, 16, 18, 20), 9, 7),
    "duplicated-rows": duplicated_rows,
    # 70 features: SURF's pairs then go through the float32 screen first
    "wide-xor": lambda: epistasis_xor(m=90, n=70, seed=8),
}


@functools.cache
def dataset(name):
    X, y = DATASETS[name]()
    for f in range(X.shape[1]):
        assert np.unique(X[:, f]).size > 10
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def skrebate_scores(rule, X, y):
    import skrebate

    est = getattr(skrebate, SKREBATE_CLASS[rule])(n_features_to_select=X.shape[1], n_jobs=1)
    est.fit(np.array(X, dtype=np.float64), np.array(y))
    return np.asarray(est.feature_importances_, dtype=np.float64)


@functools.cache
def skrebate_on(rule, name):
    return skrebate_scores(rule, *dataset(name))


# ------------------------------------------------------------------------------------------
# equality with skrebate and with the reference


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("rule", RULES)
def test_equals_skrebate(rule, name):
    X, y = dataset(name)
    result = fastfs_rule(rule)(X, y)
    assert_allclose(result.weights, skrebate_on(rule, name), rtol=0, atol=1e-6)
    # and far closer than the tolerance: the same formula, rounded differently
    assert_allclose(result.weights, skrebate_on(rule, name), rtol=0, atol=1e-12)
    assert result.weights.dtype == np.float64 and result.weights.shape == (X.shape[1],)
    assert_array_equal(result.ranking, np.argsort(-result.weights, kind="stable"))
    assert np.isnan(result.score) and not result.stopped_early


@pytest.mark.parametrize("name", ["xor", "three-classes", "four-classes-one-singleton"])
@pytest.mark.parametrize("rule", RULES)
def test_reference_equals_skrebate(rule, name):
    # validates the NumPy reference, which the callback tests below rely on
    X, y = dataset(name)
    contributions = ref.relief_radius_contributions(X, y, rule)
    assert_allclose(contributions.mean(axis=0), skrebate_on(rule, name), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("rule", RULES)
def test_equals_reference(rule, name):
    X, y = dataset(name)
    expected = ref.relief_radius_contributions(X, y, rule).mean(axis=0)
    assert_allclose(fastfs_rule(rule)(X, y).weights, expected, rtol=1e-10, atol=1e-13)


def test_the_interacting_features_rank_first():
    # the point of MultiSURF(*): XOR partners, invisible to any one-feature filter, lead (SURF's
    # single global radius is too wide for that at 100 samples)
    X, y = dataset("xor")
    for rule in ("multisurf", "multisurfstar"):
        assert set(fastfs_rule(rule)(X, y).ranking[:2]) == {0, 1}, rule


@pytest.mark.parametrize("rule", ["surf", "surfstar"])
def test_pairs_near_the_threshold_are_classified_exactly(rule):
    # With many features SURF classifies pairs by a float32 pass and recomputes in float64 only
    # the pairs whose float32 distance cannot tell their side of the threshold T. At 4000
    # features that uncertainty (about 2 n 2**-24 relative) holds dozens of pairs here.
    gen = np.random.default_rng(12)
    X = gen.standard_normal((80, 4000))
    y = gen.integers(0, 2, 80)
    X[:, :10] += 0.5 * y[:, None]
    Z = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    D = np.array([np.abs(Z - Z[s]).sum(axis=1) for s in range(80)])
    band = 4 * 4001 * 2.0**-24 * D.mean()
    assert np.sum(np.abs(D - D.mean()) < band) > 20
    assert_allclose(fastfs_rule(rule)(X, y).weights,
                    ref.relief_radius_contributions(X, y, rule).mean(axis=0), rtol=1e-10,
                    atol=1e-13)


@pytest.mark.parametrize("rule", RULES)
def test_float32_input_equals_skrebate_on_the_same_values(rule):
    X, y = dataset("three-classes")
    X32 = X.astype(np.float32)
    result = fastfs_rule(rule)(X32, y)
    assert result.weights.dtype == np.float64
    assert_allclose(result.weights, skrebate_scores(rule, X32.astype(np.float64), y), rtol=0,
                    atol=1e-6)
    # the float32 values are read exactly: the same as their float64 copy
    assert_allclose(result.weights, fastfs_rule(rule)(X32.astype(np.float64), y).weights,
                    rtol=0, atol=1e-15)


@pytest.mark.parametrize("n_features", [40, 80])
@pytest.mark.parametrize("rule", RULES)
def test_thread_count_changes_no_bit(rule, n_features):
    # 300 samples: 19 blocks of 16, shared unevenly between the threads
    gen = np.random.default_rng(11)
    X = gen.standard_normal((300, n_features))
    y = gen.integers(0, 3, 300)
    X[:, 5] += y
    one = fastfs_rule(rule)(X, y, n_jobs=1).weights
    for n_jobs in (2, 3, None):
        assert_array_equal(fastfs_rule(rule)(X, y, n_jobs=n_jobs).weights, one)
    assert_allclose(one, ref.relief_radius_contributions(X, y, rule).mean(axis=0), rtol=1e-10,
                    atol=1e-13)


@pytest.mark.parametrize("rule", RULES)
def test_layouts_and_label_types_give_the_same_weights(rule):
    X, y = dataset("three-classes")
    base = fastfs_rule(rule)(X, y).weights
    assert_array_equal(fastfs_rule(rule)(np.asfortranarray(X), y).weights, base)
    wide = np.repeat(X, 2, axis=1)[:, ::2]  # a non-contiguous view
    assert_array_equal(fastfs_rule(rule)(wide, y).weights, base)
    names = np.array(["a", "b", "c"])[y]
    assert_array_equal(fastfs_rule(rule)(X, names).weights, base)
    assert_array_equal(fastfs_rule(rule)(X, list(y + 10)).weights, base)


def test_feature_names_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = dataset("xor")
    frame = pd.DataFrame(X, columns=[f"snp{i}" for i in range(X.shape[1])])
    for rule in RULES:
        result = fastfs_rule(rule)(frame, y)
        assert list(result.feature_names) == list(frame.columns)
        assert_array_equal(result.weights, fastfs_rule(rule)(X, y).weights)


@pytest.mark.parametrize("rule", RULES)
def test_constant_feature_scores_zero_and_changes_nothing_else(rule):
    X, y = dataset("binary-unbalanced")
    with_constant = np.hstack([X[:, :3], np.full((X.shape[0], 1), 2.5), X[:, 3:]])
    # (one distinct value: discrete by skrebate's rule, which makes the data mixed)
    weights = fastfs_rule(rule)(with_constant, y, discrete_features=[]).weights
    assert weights[3] == 0.0
    assert_allclose(np.delete(weights, 3), fastfs_rule(rule)(X, y).weights, rtol=1e-12,
                    atol=1e-15)


# ------------------------------------------------------------------------------------------
# documented differences from skrebate, pinned


@pytest.mark.parametrize("rule", ["surf", "multisurfstar"])
def test_many_classes_stay_classes_when_asked(rule):
    # like skrebate, a numeric target with more than 10 distinct values is continuous by
    # default; target="classes" reads it as class labels
    X, y = gaussian_classes(tuple([8] * 12), 6, 9)
    weights = fastfs_rule(rule)(X, y, target="classes").weights
    assert_allclose(weights, ref.relief_radius_contributions(X, y, rule).mean(axis=0),
                    rtol=1e-10, atol=1e-13)
    assert not np.allclose(weights, skrebate_scores(rule, X, y), rtol=0, atol=1e-6)
    # repeated whole numbers read as a continuous target: a warning names target="classes"
    with pytest.warns(UserWarning, match="12 distinct whole-number values.*target='classes'"):
        default = fastfs_rule(rule)(X, y).weights
    assert_allclose(default, skrebate_scores(rule, X, y), rtol=0, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_array_equal(fastfs_rule(rule)(X, y, target="continuous").weights, default)
        fastfs_rule(rule)(X, y + 0.5)  # not whole numbers: a continuous target, no warning
        fastfs_rule(rule)(X, np.arange(len(y)))  # one sample a value: no warning
        # a whole-number regression target repeats a little (diabetes: 214 values in 442
        # samples) and is no set of class labels: no warning below five samples a value
        fastfs_rule(rule)(X, np.arange(len(y)) // 4)
    with pytest.warns(UserWarning, match="16 distinct whole-number values"):
        fastfs_rule(rule)(X, np.arange(len(y)) // 6)     # 96 samples: six a value


def test_a_sample_is_never_its_own_neighbour():
    # two samples of one class and one of the other: each sample's only same-class sample is
    # its partner; were x its own (distance 0, always "near") neighbour, the hit average of
    # MultiSURF would be halved.
    X = np.array([[0.0, 0.0], [0.1, 1.0], [1.0, 0.2]])
    y = np.array([0, 0, 1])
    for rule in RULES:  # (three values a feature: discrete by default, so asked continuous)
        want = ref.relief_radius_contributions(X, y, rule).mean(axis=0)
        # SURF's radius leaves some samples without neighbours: all weights 0, which warns
        with (pytest.warns(fastfs.EqualScoresWarning) if np.all(want == want[0])
              else warnings.catch_warnings()):
            got = fastfs_rule(rule)(X, y, discrete_features=[]).weights
        assert_allclose(got, want, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("rule", RULES)
def test_bad_input_gives_clear_errors(rule):
    fn = fastfs_rule(rule)
    X, y = dataset("xor")
    with pytest.raises(ValueError, match="y: .*2 classes"):
        fn(X, np.zeros(X.shape[0]))
    bad = X.copy()  # NaN is a missing value (tests/test_relief_datatypes.py); inf is refused
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="X"):
        fn(bad, y)
    with pytest.raises(ValueError, match="samples|length"):
        fn(X, y[:-1])
    with pytest.raises(ValueError, match="n_jobs"):
        fn(X, y, n_jobs=0)
    with pytest.raises(ValueError, match="y"):
        fn(X, np.stack([y, y], axis=1))
    with pytest.raises(TypeError, match="callback"):
        fn(X, y, callback=3)


# ------------------------------------------------------------------------------------------
# callback / verbose (SPEC 1.7): a step is a block of samples per thread


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("rule", RULES)
def test_callback_reports_averages_over_the_samples_done_and_can_stop(rule, n_jobs):
    X, y = dataset("parity")
    contributions = ref.relief_radius_contributions(X, y, rule)
    plain = fastfs_rule(rule)(X, y, n_jobs=n_jobs)
    states = []

    def record(state):
        assert not state.selection.flags.writeable and np.isnan(state.score)
        states.append(np.array(state.selection, copy=True))
        return False

    result = fastfs_rule(rule)(X, y, n_jobs=n_jobs, callback=record)
    assert len(states) >= 2
    assert_array_equal(states[-1], result.weights)
    # with a callback the pass goes sample by sample; without one it adds each pair's two
    # contributions as one: the same weights up to rounding
    assert_allclose(result.weights, plain.weights, rtol=1e-12,
                    atol=1e-12 * np.abs(plain.weights).max())
    assert not result.stopped_early

    seen = []
    stopped = fastfs_rule(rule)(X, y, n_jobs=n_jobs,
                                callback=lambda s: seen.append(s.selection.copy()) or True)
    assert len(seen) == 1 and stopped.stopped_early
    assert_array_equal(stopped.weights, seen[0])
    # the average contribution of the first q samples, for one q below n_samples
    matches = [q for q in range(1, X.shape[0])
               if np.allclose(stopped.weights, contributions[:q].mean(axis=0), rtol=1e-10,
                              atol=1e-13)]
    assert len(matches) == 1, matches


def test_verbose_shows_progress_and_changes_nothing_beyond_rounding(capsys):
    X, y = dataset("binary-unbalanced")
    for rule in RULES:
        plain = fastfs_rule(rule)(X, y).weights
        assert_allclose(fastfs_rule(rule)(X, y, verbose=True).weights, plain, rtol=1e-12,
                        atol=1e-12 * np.abs(plain).max())
        assert rule in capsys.readouterr().err


# ------------------------------------------------------------------------------------------
# memory: nothing n_samples x n_samples

BOUNDED_MEMORY = """
import resource
import numpy as np
import fastfs
m = 10_000  # an m x m float64 array would take 800 MB
gen = np.random.default_rng(0)
X = gen.standard_normal((m, 2))
y = (X[:, 0] + 0.5 * gen.standard_normal(m) > 0).astype(np.int64)
fastfs.multisurf(X[:64], y[:64], n_jobs=2)  # the thread team exists before the cap
with open("/proc/self/status") as f:
    vm = int(next(line for line in f if line.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 300 * 2**20, resource.RLIM_INFINITY))
for name in ("surf", "multisurf"):
    w = getattr(fastfs, name)(X, y, n_jobs=2).weights
    print(name, bool(np.isfinite(w).all() and w[0] > 0.02 > w[1]))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
def test_memory_stays_far_below_samples_squared():
    if "libasan" in Path("/proc/self/maps").read_text():
        pytest.skip("AddressSanitizer reserves far more address space than any cap allows")
    env = dict(os.environ, PYTHONPATH=str(Path(fastfs.__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", BOUNDED_MEMORY], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # the informative feature scores clearly above the noise feature, within 300 MB of extra
    # address space
    assert done.stdout.split() == ["surf", "True", "multisurf", "True"]


@pytest.mark.parametrize("name", ["relieff", "surf", "surfstar", "multisurf", "multisurfstar"])
def test_columns_of_extreme_and_mixed_magnitude_keep_their_scores(name):
    """The scores read (x - min) / range of each column only, so scaling a column by any
    power of two cannot change them. One column of magnitude 2**660 beside one of 2**-660 (no
    shared power of two brings both into float32's range) keeps the scores of the unscaled
    data; a single rescaling of the whole X had flushed the small columns to zero and scored
    them 0."""
    gen = np.random.default_rng(11)
    X = gen.standard_normal((90, 8))
    y = (X[:, 0] + X[:, 5] > 0).astype(int)
    big, small = np.ldexp(X[:, :4], 660), np.ldexp(X[:, 4:], -660)
    f = getattr(fastfs, name)
    plain = f(X, y).weights
    assert np.abs(plain[4:]).max() > 0  # the small columns do score
    assert_allclose(f(np.c_[big, small], y).weights, plain, rtol=1e-12, atol=1e-15)
    assert_allclose(f(np.c_[small, big], y).weights, f(np.c_[X[:, 4:], X[:, :4]], y).weights,
                    rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------------------------------
# SPEC 1.3: the pair matrix is optional, so fastfs.config.max_memory chooses the path

@pytest.mark.parametrize("rule", ("relieff",) + RULES)
def test_pair_matrix_follows_max_memory_with_the_same_scores(rule, monkeypatch):
    rng = np.random.default_rng(17)
    X = rng.standard_normal((300, 60))  # 60 features: ReliefF uses the pair matrix too
    y = rng.integers(0, 3, 300)
    kept = getattr(fastfs, rule)(X, y, n_jobs=1).weights
    monkeypatch.setattr(fastfs.config, "max_memory", 300 * 300 * 8 - 1)  # one byte short
    streamed = getattr(fastfs, rule)(X, y, n_jobs=1).weights
    # the two passes add the same terms in another order
    assert_allclose(streamed, kept, rtol=0, atol=1e-13 * np.abs(kept).max())
    assert np.abs(kept).max() > 0


_PEAK = """
import sys
import numpy as np
import fastfs

def peak():  # this process's own high-water mark (ru_maxrss would carry the parent's over exec)
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM")).split()[1]) * 1024

rule, limit = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(3)
X = rng.standard_normal((2800, 60))
y = rng.integers(0, 2, 2800)
fastfs.config.kept_memory = 0
if limit:
    fastfs.config.max_memory = limit
before = peak()
w = getattr(fastfs, rule)(X, y, n_jobs=1).weights
assert np.isfinite(w).all()
print(peak() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("rule", ("relieff", "multisurf"))
def test_max_memory_below_the_pair_matrix_keeps_the_peak_small(rule):
    if "libasan" in Path("/proc/self/maps").read_text():
        pytest.skip("AddressSanitizer's quarantine and redzones change the peak")
    # 2800 samples: the float64 pair matrix is 62.8 MB (it fits the default 64 MiB). With
    # max_memory at 1 MB, the peak resident size of a fresh process must not grow by it.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    grown = {}
    for limit in (0, 1_000_000):
        out = subprocess.run([sys.executable, "-c", _PEAK, rule, str(limit)],
                             capture_output=True, text=True, env=env, timeout=300, check=True)
        grown[limit] = int(out.stdout.split()[-1])
    assert grown[0] > 40e6          # the default keeps the 62.8 MB matrix (the check can fail)
    assert grown[1_000_000] < 16e6  # no m x m matrix
