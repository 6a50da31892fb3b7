"""fastfs.transforms (SPEC 4.3): the book's section 25.2.1 formulas, written out here in NumPy,
against the transformers; fit / transform round trips, scikit-learn integration, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from fastfs.transforms import (
    Centering,
    Clipping,
    Logarithmic,
    Sigmoid,
    Standardization,
    SymmetricRange,
    UnitRange,
)


@pytest.fixture
def data(rng):
    train = rng.standard_normal((40, 5)) * [1, 3, 0.1, 10, 2] + [0, 5, -2, 100, 1]
    test = rng.standard_normal((7, 5)) * [1, 3, 0.1, 10, 2] + [0, 5, -2, 100, 1]
    return train, test


def test_centering(data):
    train, test = data
    t = Centering().fit(train)
    assert_allclose(t.transform(test), test - train.mean(axis=0))
    assert_allclose(t.fit_transform(train).mean(axis=0), 0, atol=1e-12)
    assert_allclose(t.inverse_transform(t.transform(test)), test)


def test_standardization_uses_population_variance(data):
    train, test = data
    mean = train.mean(axis=0)
    v = ((train - mean) ** 2).sum(axis=0) / train.shape[0]
    t = Standardization().fit(train)
    assert_allclose(t.transform(test), (test - mean) / np.sqrt(v))


def test_unit_range_and_symmetric_range(data):
    train, test = data
    lo, hi = train.min(axis=0), train.max(axis=0)
    u = UnitRange().fit(train)
    assert_allclose(u.transform(test), (test - lo) / (hi - lo))
    z = u.transform(train)
    assert_allclose(z.min(axis=0), 0, atol=1e-15)
    assert_allclose(z.max(axis=0), 1)
    for b in (1.0, 2.5):
        s = SymmetricRange(b).fit(train)
        assert_allclose(s.transform(test), b * (2 * (test - lo) / (hi - lo) - 1))
        assert_allclose(s.transform(train).max(axis=0), b)
        assert_allclose(s.transform(train).min(axis=0), -b)
        assert_allclose(s.inverse_transform(s.transform(test)), test)


def test_clipping_sigmoid_log_formulas(data):
    train, test = data
    assert_array_equal(Clipping(b=2.0).fit(train).transform(test),
                       np.sign(test) * np.minimum(2.0, np.abs(test)))
    assert_allclose(Sigmoid(b=0.3).fit(train).transform(test), 1 / (1 + np.exp(-0.3 * test)))
    assert_allclose(Sigmoid(b=-0.3).fit(train).transform(test), 1 / (1 + np.exp(0.3 * test)))
    counts = np.abs(np.round(train * 3))
    assert_allclose(Logarithmic(b=1.0).fit(counts).transform(counts), np.log(1.0 + counts))
    big = Sigmoid(b=1.0).fit(train).transform(np.array([[1e4, -1e4, 0, 0, 0]]))
    assert_array_equal(big[0, :3], [1.0, 0.0, 0.5])


def test_transform_does_not_modify_input_and_keeps_float32(data):
    train, test = data
    for t in (Clipping(1.0), Sigmoid(2.0), Logarithmic(1000.0)):
        before = test.copy()
        t.fit(train).transform(test)
        assert_array_equal(test, before)
        out32 = t.fit(train.astype(np.float32)).transform(test.astype(np.float32))
        assert out32.dtype == np.float32


def test_sklearn_integration(data):
    train, test = data
    pipe = make_pipeline(Standardization(), Clipping(b=1.5), Sigmoid(b=2.0))
    out = pipe.fit(train).transform(test)
    assert out.shape == test.shape and np.all((out > 0) & (out < 1))
    for t in (Centering(), Standardization(), UnitRange(), SymmetricRange(3.0), Clipping(2.0),
              Sigmoid(0.5), Logarithmic(500.0)):
        c = clone(t)
        assert c.get_params() == t.get_params()
        assert_allclose(c.fit_transform(train), t.fit(train).transform(train))
        names = t.get_feature_names_out()
        assert list(names) == [f"x{i}" for i in range(5)]


def test_bad_input(data):
    train, test = data
    with pytest.raises(ValueError, match="b: must be > 0"):
        Clipping(b=0).fit(train)
    with pytest.raises(TypeError, match="b: expected a real number"):
        Clipping(b="1").fit(train)
    with pytest.raises(ValueError, match="b: must be nonzero"):
        Sigmoid(b=0.0).fit(train)
    with pytest.raises(ValueError, match="b: must be > 0"):
        SymmetricRange(b=-1).fit(train)
    with pytest.raises(ValueError, match=r"log\(b \+ X\) needs X > -b"):
        Logarithmic(b=1.0).fit(train)
    t = Logarithmic(b=200.0).fit(train)
    with pytest.raises(ValueError, match=r"log\(b \+ X\)"):
        t.transform(test - 1000.0)
    bad = train.copy()
    bad[0, 0] = np.nan
    for est in (Clipping(1.0), Centering(), UnitRange()):
        with pytest.raises(ValueError, match="NaN"):
            est.fit(bad)
    fitted = Clipping(1.0).fit(train)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(test[:, :3])
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        Sigmoid(1.0).transform(test)


# ------------------------------------------------------------------------------------------
# scikit-learn's own estimator checks: the tags say what input is accepted (no NaN anywhere,
# non-negative X for Logarithmic), fit changes no public attribute, and so on.

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

ALL_TRANSFORMS = [Centering(), Standardization(), UnitRange(), SymmetricRange(),
                  SymmetricRange(2.5, clip=True), Clipping(), Sigmoid(), Logarithmic()]


@parametrize_with_checks(ALL_TRANSFORMS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_tags_declare_the_domain():
    get_tags = getattr(pytest.importorskip("sklearn.utils"), "get_tags", None)
    if get_tags is None:
        pytest.skip("scikit-learn < 1.6 has no get_tags")

    for est in ALL_TRANSFORMS:
        tags = get_tags(est)
        assert not tags.input_tags.allow_nan
        assert tags.input_tags.positive_only == isinstance(est, Logarithmic)


def test_symmetric_range_fit_keeps_its_parameters(data):
    train, test = data
    s = SymmetricRange(b=2.0)
    before = s.get_params()
    s.fit(train)
    s.partial_fit(test)
    assert s.get_params() == before
    assert "feature_range" not in vars(s)
    s.set_params(b=0.5).fit(train)
    assert_allclose(s.transform(train).min(axis=0), -0.5)
    assert_allclose(s.transform(train).max(axis=0), 0.5)


def test_inverse_transform_refuses_nan(data):
    train, _ = data
    bad = train[:3].copy()
    bad[1, 2] = np.inf
    for est in (Centering(), Standardization(), UnitRange(), SymmetricRange()):
        with pytest.raises(ValueError, match="NaN or infinity"):
            est.fit(train).inverse_transform(bad)


def test_values_near_the_float64_limit_are_refused_not_scaled_by_nan():
    from fastfs import transforms as T

    X = np.random.default_rng(0).normal(size=(10, 2)) * 1e200  # squares overflow
    with pytest.raises(ValueError, match=r"X: the variance of feature\(s\) \[0, 1\] overflows"):
        T.Standardization().fit(X)
    np.testing.assert_allclose(T.Standardization().fit_transform(X * 1e-100).std(axis=0), 1.0)
    wide = np.array([[1e308], [-1e308], [0.0]])  # max - min overflows
    for cls in (T.UnitRange, T.SymmetricRange):
        with pytest.raises(ValueError, match=r"X: the range of feature\(s\) \[0\] overflows"):
            cls().fit(wide)
    # float32: b + x is computed in float32, where -0.99999994 + 0.99999995 is 0
    x32 = np.array([[-0.99999994], [1.0]], dtype=np.float32)
    with pytest.raises(ValueError, match="in float32, b [+] X rounds to 0 there"):
        T.Logarithmic(0.99999995).fit(x32)
    assert np.isfinite(T.Logarithmic(0.99999995).fit_transform(x32.astype(np.float64))).all()


@pytest.mark.parametrize("c", [1e-16, 1e-200, 1e-300])
def test_ranges_below_ten_epsilon_are_scaled(c):
    """scikit-learn takes a range below 10 eps (2.2e-15) for zero: UnitRange only shifted a
    feature of range 3e-16 and SymmetricRange erased it. A range is zero only when it is."""
    x = np.c_[np.arange(4.0) * c, np.full(4, 5.0)]
    u = UnitRange().fit(x)
    assert_allclose(u.transform(x)[:, 0], [0, 1 / 3, 2 / 3, 1], rtol=1e-12)
    assert_array_equal(u.transform(x)[:, 1], 0.0)
    assert_allclose(u.inverse_transform(u.transform(x)), x, rtol=1e-12)
    assert_allclose(SymmetricRange(2.0).fit_transform(x)[:, 0], [-2, -2 / 3, 2 / 3, 2],
                    rtol=1e-12)
    assert_array_equal(SymmetricRange(2.0).fit_transform(x)[:, 1], -2.0)


def test_a_range_whose_inverse_overflows_is_an_error():
    with pytest.raises(ValueError, match=r"^X: the range of feature\(s\) \[0\] is too small"):
        UnitRange().fit(np.arange(4.0)[:, None] * 1e-320)


@pytest.mark.parametrize("cls", [Centering, Standardization, UnitRange, SymmetricRange])
def test_pandas_na_is_refused_like_nan(cls):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([[1.0, 2.0], [pd.NA, 3.0], [4.0, 5.0]], dtype="Float64")
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        cls().fit(frame)
    clean = pd.DataFrame([[1.0, 2.0], [2.0, 3.0], [4.0, 5.0]], dtype="Float64")
    est = cls().fit(clean)
    assert_array_equal(est.transform(clean), cls().fit_transform(clean.to_numpy(float)))
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        est.transform(frame)
