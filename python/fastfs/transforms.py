"""Feature transforms of section 25.2.1 of Shalev-Shwartz and Ben-David's book as scikit-learn
transformers.

Each one transforms every feature on its own, with parameters learned in ``fit`` from the
training values. Where scikit-learn computes exactly the book's transform it is reused:
``Centering`` and ``Standardization`` are ``StandardScaler`` (population variance, divisor m,
as the book's v), ``UnitRange`` and ``SymmetricRange`` are ``MinMaxScaler``. ``Clipping``,
``Sigmoid`` and ``Logarithmic`` are added here. Unlike scikit-learn's scalers, which treat NaN
as missing, every transformer here refuses NaN and infinity (ValueError). Needs scikit-learn
(``pip install scikit-learn``).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    from sklearn.utils.validation import check_is_fitted
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("fastfs.transforms needs scikit-learn: pip install scikit-learn") from exc
try:
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - scikit-learn < 1.6
    def validate_data(estimator, X, **kwargs):
        return estimator._validate_data(X, **kwargs)
from scipy.special import expit

from ._validation import frame_values

__all__ = ["Centering", "Clipping", "Logarithmic", "Sigmoid", "Standardization",
           "SymmetricRange", "UnitRange"]


def _check_b(b: Any, name: str = "b", *, positive: bool = True) -> float:
    if isinstance(b, bool) or not isinstance(b, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(b).__name__}")
    b = float(b)
    if not np.isfinite(b):
        raise ValueError(f"{name}: must be finite, got {b}")
    if positive and b <= 0:
        raise ValueError(f"{name}: must be > 0, got {b}")
    return b


def _reject_non_finite(X: Any) -> None:
    if hasattr(X, "tocsr"):
        return  # sparse input: scikit-learn's own checks apply
    try:
        if hasattr(X, "to_numpy") and getattr(X, "dtypes", None) is not None:
            # a DataFrame: nullable columns (Float64, Int64) give NaN for pd.NA, which the
            # check below refuses (np.asarray would give pd.NA objects that no cast reads)
            X = frame_values(X, "X")
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            # Complex numbers and strings are left to scikit-learn's validation, which refuses
            # them with its own error (a cast here would drop imaginary parts silently).
            if arr.dtype != object:
                return
            arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        return  # not numbers: scikit-learn's validation gives its own error
    if not np.isfinite(arr).all():
        raise ValueError("X: contains NaN or infinity")


class _Finite:
    """scikit-learn's scalers treat NaN as missing; fastfs refuses it, and says so
    in the estimator tags (``allow_nan`` False) that scikit-learn's tools read."""

    def partial_fit(self, X, y=None, *args, **kwargs):
        _reject_non_finite(X)
        with np.errstate(over="ignore", invalid="ignore"):
            out = super().partial_fit(X, y, *args, **kwargs)
        # values near the float64 limit: a variance (squares, beyond about 1e154) or a range
        # (max - min, beyond about 9e307) that overflows would scale by inf or NaN
        for attr, what in (("var_", "variance"), ("data_range_", "range")):
            v = getattr(self, attr, None)
            if v is not None and not np.all(np.isfinite(v)):
                bad = np.flatnonzero(~np.isfinite(v))
                raise ValueError(f"X: the {what} of feature(s) {bad[:10].tolist()} overflows "
                                 "float64 (values too large in magnitude); divide X by a "
                                 "power of ten first")
        return out

    def transform(self, X, *args, **kwargs):
        _reject_non_finite(X)
        return super().transform(X, *args, **kwargs)

    def inverse_transform(self, X, *args, **kwargs):
        _reject_non_finite(X)
        return super().inverse_transform(X, *args, **kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": False}


class Centering(_Finite, StandardScaler):
    """Centering: ``f_i <- f_i - mean(f)``, the mean learned in ``fit``.

    ``StandardScaler(with_mean=True, with_std=False)`` under the book's name; dense input only
    (centering would densify a sparse matrix).
    """

    def __init__(self, *, copy: bool = True):
        super().__init__(copy=copy, with_mean=True, with_std=False)


class Standardization(_Finite, StandardScaler):
    """Standardisation: ``f_i <- (f_i - mean(f)) / sqrt(v)`` with v the empirical variance
    ``(1/m) sum (f_i - mean(f))^2`` learned in ``fit``.

    ``StandardScaler`` under the book's name. A constant feature (v = 0) is only centred.
    """

    def __init__(self, *, copy: bool = True):
        super().__init__(copy=copy, with_mean=True, with_std=True)


class _ExactRange(_Finite):
    """MinMaxScaler with a feature constant only when its range is exactly 0. scikit-learn
    treats a range below 10 eps (about 2.2e-15) as zero, so a feature of range 1e-16 was only
    shifted by UnitRange ([0, 1e-16, ...]) and erased by SymmetricRange (all -b)."""

    def partial_fit(self, X, y=None, *args, **kwargs):
        out = super().partial_fit(X, y, *args, **kwargs)
        lo, hi = self.feature_range
        span = self.data_range_
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(span > 0, (hi - lo) / np.where(span > 0, span, 1.0), 1.0)
        bad = np.flatnonzero(~np.isfinite(scale))
        if bad.size:
            raise ValueError(f"X: the range of feature(s) {bad[:10].tolist()} is too small for "
                             "its inverse to fit in float64 (below about 1e-308); multiply X "
                             "by a power of ten first")
        self.scale_ = scale
        self.min_ = lo - self.data_min_ * scale
        return out


class UnitRange(_ExactRange, MinMaxScaler):
    """Unit range: ``f_i <- (f_i - f_min) / (f_max - f_min)``, in [0, 1] on the training data.

    ``MinMaxScaler(feature_range=(0, 1))`` under the book's name. A constant feature (range
    exactly 0) maps to 0; any other range is scaled, 1e-16 included.
    New data outside the training range leaves [0, 1] unless ``clip=True``.
    """

    def __init__(self, *, copy: bool = True, clip: bool = False):
        super().__init__(feature_range=(0, 1), copy=copy, clip=clip)


class SymmetricRange(_ExactRange, MinMaxScaler):
    """Range [-b, b]: ``f_i <- b (2 (f_i - f_min) / (f_max - f_min) - 1)``.

    ``MinMaxScaler(feature_range=(-b, b))``; b = 1 gives the book's [-1, 1]. A constant feature
    (range exactly 0) maps to -b.
    """

    def __init__(self, b: float = 1.0, *, copy: bool = True, clip: bool = False):
        # Only the parameters are stored: MinMaxScaler's feature_range follows from b.
        self.b = b
        self.copy = copy
        self.clip = clip

    @property
    def feature_range(self) -> tuple[float, float]:
        """(-b, b), read by MinMaxScaler; not a parameter of its own."""
        b = float(self.b)
        return (-b, b)

    def partial_fit(self, X, y=None, *args, **kwargs):
        _check_b(self.b)
        return super().partial_fit(X, y, *args, **kwargs)


class _Elementwise(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """A fixed element-wise map; ``fit`` only records the number of features."""

    def _check_params(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _apply(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, y=None):
        self._check_params()
        validate_data(self, X, dtype=[np.float64, np.float32])
        return self

    def transform(self, X):
        check_is_fitted(self)
        self._check_params()
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32], copy=True)
        return self._apply(X)


class Clipping(_Elementwise):
    """Clipping at b: ``f_i <- sign(f_i) min(b, |f_i|)``, i.e. values clipped to [-b, b].

    The book prints ``max`` in this formula, which would push small values out to b instead of
    clipping large ones; the text ("clips high or low values") is what is implemented.
    """

    def __init__(self, b: float = 1.0):
        self.b = b

    def _check_params(self) -> None:
        _check_b(self.b)

    def _apply(self, X):
        b = float(self.b)
        return np.clip(X, -b, b, out=X)


class Sigmoid(_Elementwise):
    """Sigmoidal transform: ``f_i <- 1 / (1 + exp(-b f_i))``, a soft clipping into (0, 1).

    The book writes ``1 / (1 + exp(b f_i))``, which reverses the order of the values; the
    increasing form is used here (pass a negative b for the book's). b != 0.
    """

    def __init__(self, b: float = 1.0):
        self.b = b

    def _check_params(self) -> None:
        if _check_b(self.b, positive=False) == 0:
            raise ValueError("b: must be nonzero (b = 0 maps every value to 1/2)")

    def _apply(self, X):
        return expit(np.multiply(X, float(self.b), out=X), out=X)


class Logarithmic(_Elementwise):
    """Logarithmic transform: ``f_i <- log(b + f_i)`` (for counts, typically b = 1).

    Every value must satisfy ``b + f_i > 0``, in ``fit`` and in ``transform``: a ValueError
    otherwise. Its estimator tags declare non-negative input (``positive_only``), the domain
    that works for every b > 0.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_positive_X": True}

    def __init__(self, b: float = 1.0):
        self.b = b

    def _check_params(self) -> None:
        _check_b(self.b, positive=False)

    def fit(self, X, y=None):
        super().fit(X, y)
        self._check_domain(validate_data(self, X, reset=False, dtype=[np.float64, np.float32]))
        return self

    def _check_domain(self, X) -> None:
        low = float(X.min()) if X.size else 0.0
        # in X's precision, as the transform adds (float32 X: b + x rounded to float32)
        t = np.dtype(X.dtype).type if X.dtype.kind == "f" else np.float64
        if X.size and t(low) + t(float(self.b)) <= 0:
            # scikit-learn's wording for input outside a non-negative domain, when it is that.
            what = "Negative values in data passed to Logarithmic: " if low < 0 else ""
            where = (f" (in {np.dtype(X.dtype).name}, b + X rounds to 0 there; pass float64 X)"
                     if low + float(self.b) > 0 else "")
            raise ValueError(f"X: {what}log(b + X) needs X > -b = {-float(self.b):g}, got a "
                             f"value {low:g}{where}")

    def _apply(self, X):
        self._check_domain(X)
        return np.log(np.add(X, float(self.b), out=X), out=X)
