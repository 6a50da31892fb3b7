"""Exact rescaling of X for the distance and least-squares methods.

Squared distances, sums of squares and cross products of X overflow when |x| reaches about
1e154 and underflow (or lose every bit) when X holds values near 1e-300. Every method that
uses them gives the same answer on ``X * 2**k`` as on X (up to the units of its outputs), so
X is multiplied by a power of two that brings its largest magnitude into [0.5, 1) whenever it
lies outside a safe range. Multiplying by a power of two is exact (no rounding), so data
inside the range is never touched and data outside gets, bit for bit, the answer of the same
data at an ordinary scale. Outputs that carry units of X are scaled back with
``unscale``, which raises a clear error when the scaled-back value is not representable.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import fastfs._core as _core

# Binary exponents of max|x| left alone: squares of differences stay far from overflow and
# from the subnormal range, also when summed over 2**40 features or samples.
SAFE_EXPONENT_FLOAT64 = 200
_SAFE_EXPONENT = {np.dtype(np.float64): SAFE_EXPONENT_FLOAT64, np.dtype(np.float32): 40}
# The neighbour searches and distance criteria screen candidates in float32 and need less: the
# squared differences and their products with the weights must stay well inside float32's
# normal range (values of 1e-30 square to 1e-60, which float32 flushes to zero; the screen then
# decides nothing and every distance is computed exactly, 4-6 times slower). For them X is
# rescaled whenever max|x| lies outside [2**-24, 2**24] (about 6e-8 to 1.7e7); the float64
# answer is unchanged bit for bit, since a power of two scales every float64 result exactly.
SCREEN_EXPONENT = 24
# Smallest magnitude a rescaled parameter or scaled-back output may take: subnormal numbers
# down to here keep at least 26 significant bits.
_SMALLEST_KEPT = 2.0**-1048


def _scannable(data: Any) -> bool:
    """Whether the core's one-read scan (finite?, max |x|) takes ``data`` as it is."""
    return (isinstance(data, np.ndarray) and data.dtype in (np.float32, np.float64)
            and data.ndim in (1, 2) and data.flags.aligned
            and (data.flags.c_contiguous or data.flags.f_contiguous))


def _scan(data: np.ndarray) -> tuple[bool, float]:
    """(every value finite, max |x|) in one read, without NumPy's temporaries."""
    finite, top = _core._finite_max_abs(data)
    return bool(finite), float(top)


def max_abs(values: Any) -> float:
    """max |x| of a dense array or a sparse matrix (0 for an empty one)."""
    data = values.data if hasattr(values, "tocsr") else values
    if data.size == 0:
        return 0.0
    if _scannable(data):  # one read (NaN propagates through the NumPy path below)
        finite, top = _scan(data)
        if finite:
            return top
    return float(max(np.max(data), -np.min(data)))


def _safe_limit(dtype: Any, limit: int | None) -> int:
    """``limit``, or by default the binary exponent range left alone for ``dtype``."""
    return _SAFE_EXPONENT.get(np.dtype(dtype), 200) if limit is None else limit


def _exponents_outside(top: Any, dtype: Any, limit: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(binary exponents of the magnitudes ``top``, mask of those outside the safe range for
    ``dtype`` (or of exponents beyond +-``limit``); a zero magnitude is never outside)."""
    top = np.asarray(top, dtype=np.float64)
    e = np.frexp(top)[1].astype(np.int64)
    limit = _safe_limit(dtype, limit)
    return e, (top != 0) & ((e < -limit) | (e > limit))


def times_power_of_two(values: np.ndarray, k: Any) -> np.ndarray:
    """values * 2**k in a new array of the same dtype and memory order, for an integer k (or an
    array of them that broadcasts against ``values``, such as one per column).

    The bits are those of ``np.ldexp(values, k)``: a product with a power of two is rounded once,
    like ldexp, and exact unless it underflows. It runs at the speed of a multiplication, where
    NumPy's ldexp calls the C library once per element (about 10% of a margins call on 1000 x
    300 values of 1e-30). Powers from the smallest subnormal one up to the largest finite one
    are one product; larger ones (subnormal data scaled up) two exact products; k outside
    those (which no rescaling of finite data needs) goes to ldexp itself."""
    dtype = values.dtype
    k = np.asarray(k, dtype=np.int64)
    info = np.finfo(dtype)
    top = info.maxexp - 1  # 2**top is the largest finite power of two
    if k.size and (k.min() < info.minexp - info.nmant or k.max() > 2 * top):
        # Beyond +-2**20 every finite nonzero value over- or underflows all the same.
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(values, np.clip(k, -(1 << 20), 1 << 20).astype(np.int32))
    first = np.minimum(k, top)
    out = np.empty_like(values)
    with np.errstate(under="ignore"):
        np.multiply(values, np.ldexp(np.ones(first.shape, dtype=dtype), first.astype(np.int32)),
                    out=out)
        rest = k - first
        if rest.any():  # data scaled up from the subnormal range: the first step was exact
            np.multiply(out, np.ldexp(np.ones(rest.shape, dtype=dtype), rest.astype(np.int32)),
                        out=out)
    return out


def exact_rescale(values: np.ndarray, limit: int | None = None, *,
                  top: float | None = None) -> tuple[np.ndarray, int]:
    """(values * 2**-e, e), with e = 0 (and the same array) when max|x| is in the safe range
    (binary exponents within +-``limit``; by default the dtype's range above). ``top``: max|x|
    when the caller already has it.

    Otherwise e is the binary exponent of max|x|, so the returned array has its largest
    magnitude in [0.5, 1). The copy keeps the dtype and the memory order (C or Fortran).
    """
    top = float(max_abs(values) if top is None else top)
    # One magnitude: math.frexp (as np.frexp: exponent 0 for 0, NaN and inf), without NumPy's
    # per-call overhead on small data.
    e = math.frexp(top)[1]
    limit = _safe_limit(values.dtype, limit)
    if top == 0 or -limit <= e <= limit:
        return values, 0
    return times_power_of_two(values, -e), e


def scale_parameter(value: float, power: int, e: int, name: str, *,
                    source: str = "X") -> float:
    """A parameter in units of X**power, expressed for the rescaled X (value * 2**(-power e)).
    ``source`` names the rescaled input ("y" for parameters in units of the target).

    Raises ValueError when it cannot be represented at the working scale.
    """
    if e == 0 or value == 0.0:
        return value
    with np.errstate(over="ignore", under="ignore"):
        out = float(np.ldexp(value, -power * e))
    if not np.isfinite(out) or abs(out) < _SMALLEST_KEPT:
        raise ValueError(
            f"{name}: {value!r} cannot be represented once {source} (max |{source.lower()}| ~ "
            f"2**{e}) is rescaled to an ordinary range; pass a {name} on the scale of {source}"
        )
    return out


def unscale(values: Any, power: int, e: int, what: str, *, strict: bool = True,
            source: str = "X") -> Any:
    """Outputs in units of X**power computed on the rescaled X, back in the units of X
    (``source="y"``: of the target, rescaled the same way).

    Raises ValueError when a finite nonzero value overflows or underflows in float64 (below
    2**-1048, where fewer than 26 bits would remain: its units cannot hold it), naming the
    input, the output and the remedy; with ``strict=False`` such a value becomes +-inf or 0
    instead (for auxiliary outputs such as a kernel width).
    """
    if e == 0:
        return values
    arr = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(arr, power * e)
    finite = np.isfinite(arr)
    # Subnormal results are kept while they hold at least 26 significant bits.
    lost = strict & finite & (arr != 0) & (~np.isfinite(out) | (np.abs(out) < _SMALLEST_KEPT))
    if lost.any():
        raise ValueError(
            f"{source}: its values (max |{source.lower()}| ~ 2**{e}) are so extreme that {what}, "
            f"which carries units of {source}**{power}, does not fit in float64; multiply "
            f"{source} by a power of two that brings it nearer 1 and interpret the result in "
            "those units"
        )
    if np.ndim(values) == 0:
        return float(out)
    return out


def unscaled_hook(hook: Any, e: int, score_power: int, selection_power: int = 0) -> Any:
    """A progress hook for a run on the rescaled X that passes the callback its ``score`` (units
    of X**score_power) and, with ``selection_power``, its ``selection`` array in the units of X
    (+-inf or 0 where float64 cannot hold them)."""
    if hook is None or e == 0 or (score_power == 0 and selection_power == 0):
        return hook

    def wrapped(restart: int, step: int, score: float, selection: Any) -> Any:
        score = unscale(score, score_power, e, "the score", strict=False)
        if selection_power:
            selection = unscale(selection, selection_power, e, "the selection", strict=False)
        return hook(restart, step, score, selection)

    return wrapped


def column_scan(values: np.ndarray) -> tuple[bool | None, np.ndarray | None]:
    """(every value finite, max |x| of every column) of a 2-D array in one read by the core
    when it is Fortran-ordered float64; (None, None) otherwise."""
    if (isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 2
            and values.flags.f_contiguous and values.flags.aligned and values.size):
        finite, top = _core._column_max_abs(values)
        return bool(finite), top
    return None, None


def column_exponents(top: np.ndarray, dtype: Any, limit: int | None = None) -> np.ndarray:
    """The per-column exponents e_j of exact_rescale_columns from each column's max |x|
    (``top``): 0 for a column already in range."""
    exponent, outside = _exponents_outside(np.asarray(top), dtype, limit)
    return np.where(outside, exponent, 0).astype(np.int64)


def exact_rescale_columns(values: np.ndarray, limit: int | None = None, *,
                          top: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(values with column j multiplied by 2**-e_j, e), for methods whose answer does not
    depend on the scale of each column (least-squares selection, the Relief family's min-max
    scaled differences): only columns whose max |x| lies outside the safe range (or beyond
    binary exponents +-``limit``) are touched (e_j = 0 for the others), so one column of
    extreme magnitude leaves the ordinary ones as they are. The same array when no column
    needs it. ``top``: the max |x| of every column when the caller already has it."""
    if values.size == 0:
        return values, np.zeros(values.shape[1], dtype=np.int64)
    if top is None:
        top = np.maximum(values.max(axis=0), -values.min(axis=0))
    e = column_exponents(top, values.dtype, limit)
    if not e.any():
        return values, e
    return times_power_of_two(values, -e[None, :]), e


def utility_beta(utility: str, beta: float, e: int) -> float:
    """The sigmoid slope for the rescaled X: beta * theta is unit-free, so beta has units of
    1 / X."""
    return scale_parameter(beta, -1, e, "beta") if utility == "sigmoid" else beta


def score_power(utility: str) -> int:
    """Units of X carried by e = sum u(theta): theta itself for the linear utility."""
    return 1 if utility == "linear" else 0
