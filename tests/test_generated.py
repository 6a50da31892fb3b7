"""fastfs.generated (the generated features of Navot's thesis, section 5.3.2): the bit-packed C++
evaluation against plain NumPy loops, bit for bit; meta-features, cost, drawing by meta-feature
value, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from fastfs.generated import (
    DigitFeatureSearch,
    GeneratedFeatures,
    binarize,
    draw_features,
    generated_features,
)
from reference import generated_feature_values, generated_meta_features


def _as_lists(fs: GeneratedFeatures):
    w = fs.image_shape[1]
    inputs, negated = [], []
    for f in range(len(fs)):
        k = fs.n_inputs[f]
        inputs.append([(int(p) // w, int(p) % w) for p in fs.inputs[f, :k]])
        negated.append([bool(v) for v in fs.negated[f, :k]])
    return inputs, negated, [int(a) for a in fs.shift]


@pytest.mark.parametrize("n_images", [1, 64, 130])
def test_values_equal_numpy_loops_bit_for_bit(rng, n_images):
    h, w = 9, 11
    images = rng.random((n_images, h, w)) < 0.4
    U = np.column_stack([rng.integers(1, 9, 60), rng.integers(0, 101, 60),
                         rng.integers(0, 9, 60), rng.uniform(0.5, 3.5, 60)])
    fs = draw_features(U, image_shape=(h, w), random_state=1)
    expected = generated_feature_values(images, *_as_lists(fs))
    for n_jobs in (1, 2):
        got = generated_features(images, fs, n_jobs=n_jobs)
        assert got.shape == (n_images, 60) and got.dtype == np.uint8
        assert_array_equal(got.astype(bool), expected)
    # Flattened images with image_shape, and the packed words, say the same.
    flat = generated_features(images.reshape(n_images, -1).astype(np.uint8), fs,
                              image_shape=(h, w))
    assert_array_equal(flat, got)
    words = fs.transform(images, packed=True)
    bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :n_images]
    assert_array_equal(bits.T, expected)
    assert not np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, n_images:].any()


def test_handmade_features():
    img = np.zeros((2, 5, 5), dtype=bool)
    img[0, 2, 2] = True
    img[1, 0, 0] = True
    fs = GeneratedFeatures.from_arrays([[12], [12], [12], [6, 7]],
                                       [[False], [True], [False], [False, True]],
                                       [0, 0, 2, 1], (5, 5))
    got = fs.transform(img)
    # pixel (2,2); its negation; (2,2) shifted by up to 2 reaches (0,0); (1,1) and not (1,2)
    # over shifts of 1: image 0 has (2,2) on and (2,3) off (shift (1,1) fires), image 1 has
    # (0,0) on and (0,1) off (shift (-1,-1) fires).
    assert_array_equal(got, [[1, 0, 1, 1], [0, 1, 1, 1]])
    fs2 = GeneratedFeatures.from_arrays([[6, 7]], [[False, True]], [0], (5, 5))
    assert_array_equal(fs2.transform(img), [[0], [0]])


def test_meta_features_and_cost(rng):
    U = np.column_stack([rng.integers(1, 9, 40), rng.integers(0, 101, 40),
                         rng.integers(0, 9, 40), rng.uniform(0.5, 3.5, 40)])
    fs = draw_features(U, image_shape=(28, 28), random_state=5)
    assert_allclose(fs.meta_features, generated_meta_features(*_as_lists(fs)), atol=1e-12)
    assert_allclose(fs.cost, 0.5 * (1 + fs.shift.astype(float) ** 2))


def test_draw_follows_meta_feature_values():
    u = np.array([5.0, 60.0, 3.0, 2.0])
    fs = draw_features(u, 300, image_shape=(28, 28), random_state=0)
    mf = fs.meta_features
    assert_array_equal(mf[:, 0], 5)
    assert_array_equal(mf[:, 1], 60)  # round(0.6 * 5) = 3 positive inputs of 5
    assert_array_equal(mf[:, 2], 3)
    assert abs(np.median(mf[:, 3]) - 2.0) < 0.3
    same = draw_features(u, 300, image_shape=(28, 28), random_state=0, n_jobs=1)
    assert_array_equal(same.inputs, fs.inputs)
    assert_array_equal(same.negated, fs.negated)
    other = draw_features(u, 300, image_shape=(28, 28), random_state=1)
    assert not np.array_equal(other.inputs, fs.inputs)
    one = draw_features([1.0, 0.0, 0.0, 2.0], 50, image_shape=(6, 6), random_state=0)
    assert_array_equal(one.meta_features[:, :3], np.tile([1, 0, 0], (50, 1)))


@pytest.mark.parametrize("n, most", [(2, 0.5), (4, 0.81), (8, 1.25)])
def test_draw_below_the_smallest_scatter_takes_the_most_compact_pixels(n, most):
    """A scatter that n distinct pixels cannot reach gives the n pixels nearest a random
    centre (they were drawn anywhere in the image: a mean scatter of 9 pixels for 0.3 asked).
    The bounds: two neighbours have scatter 0.5; the 4 pixels nearest a point are a 2 x 2
    square (0.707) or a T of 4 (0.809); 8 pixels nearest a point have scatter 1.04 - 1.2."""
    fs = draw_features([float(n), 50.0, 0.0, 0.0], 200, image_shape=(28, 28), random_state=0)
    scatter = fs.meta_features[:, 3]
    assert scatter.max() <= most + 1e-12
    rows, cols = np.divmod(fs.inputs[:, :n], 28)  # within 5 x 5 (they spanned the image)
    assert (np.ptp(rows, axis=1) <= 4).all() and (np.ptp(cols, axis=1) <= 4).all()
    # above the smallest scatter the Gaussian placement still follows the wanted value
    wide = draw_features([float(n), 50.0, 0.0, 2.0], 200, image_shape=(28, 28), random_state=0)
    assert abs(np.median(wide.meta_features[:, 3]) - 2.0) < 0.3


def test_digit_search_with_mufasa_budget(rng):
    images = rng.random((80, 8, 8)) < 0.5
    y = images[:, 3, 3].astype(int) ^ images[:, 4, 5].astype(int)
    search = DigitFeatureSearch(images, y)
    res = search.run(budget=6.0, n_steps=3, random_state=0)
    assert res.trace_u.shape == (3, 4)
    assert sum(search.cost(f) for f in res.features) <= 6.0
    assert 0.0 <= res.score <= 1.0


def test_bad_input(rng):
    with pytest.raises(ValueError, match="images: expected binary values"):
        generated_features(rng.random((3, 4, 4)), draw_features([1, 100, 0, 1], 2,
                                                                image_shape=(4, 4)))
    fs = draw_features([2, 50, 1, 1], 3, image_shape=(4, 4), random_state=0)
    with pytest.raises(ValueError, match=r"image_shape: \(4, 4\) does not match"):
        generated_features(np.zeros((2, 5, 5), bool), fs)
    with pytest.raises(ValueError, match="image_shape: 4 x 4 = 16 pixels but the images have 25"):
        generated_features(np.zeros((2, 25), np.uint8), fs)
    with pytest.raises(ValueError, match="inputs: feature 0 has 9 inputs"):
        GeneratedFeatures.from_arrays([list(range(9))], [[False] * 9], [0], (4, 4))
    with pytest.raises(ValueError, match="outside the 4 x 4 image"):
        GeneratedFeatures.from_arrays([[16]], [[False]], [0], (4, 4))
    with pytest.raises(ValueError, match="shift: shiftInvLen"):
        GeneratedFeatures.from_arrays([[1]], [[False]], [9], (4, 4))
    with pytest.raises(ValueError, match="u: expected the 4 meta-features"):
        draw_features([1, 2, 3])
    with pytest.raises(ValueError, match="u: contains NaN"):
        draw_features([1, np.nan, 3, 1])
    with pytest.raises(TypeError, match="features: expected GeneratedFeatures"):
        generated_features(np.zeros((2, 4, 4), bool), [1, 2])
    assert_array_equal(binarize(np.array([[0, 100, 200]], np.uint8)), [[0, 0, 1]])


def test_draw_clips_the_inputs_to_the_pixels_of_the_image():
    """numInputs above the image's pixel count made a single input (percentPos lost)."""
    fs = draw_features((5, 50, 0, 1), 40, image_shape=(2, 2), random_state=0)
    assert_array_equal(fs.meta_features[:, 0], 4)
    assert_array_equal(fs.meta_features[:, 1], 50)
    assert_array_equal(np.sort(fs.inputs[:, :4], axis=1), np.tile(np.arange(4), (40, 1)))
    assert_array_equal(fs.inputs[:, 4:], -1)
    assert_array_equal(fs.negated[:, :4].sum(axis=1), 2)


def test_draw_clips_extreme_meta_feature_values():
    fs = draw_features([[1e300, -1e300, 1e300, 1e300], [-5, 500, -3, -1]], image_shape=(9, 9),
                       random_state=0)
    assert_array_equal(fs.meta_features[:, :3], [[8, 0, 8], [1, 100, 0]])
