"""The input conventions in one place: input conversion, bad-input errors, the memory guard,
random_state and n_jobs rules. Every public function validates through these helpers so the
same input always gets the same message."""

from __future__ import annotations

import contextlib
import numbers
import os
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

import fastfs._core as _core
from ._config import config
from ._scale import SCREEN_EXPONENT, _scan, _scannable, exact_rescale



_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside fastfs (for a
    warning raised at a depth that depends on the route: a function, an estimator, Dask)."""
    import sys

    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.dirname(
            os.path.abspath(frame.f_code.co_filename)).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level

@dataclass(frozen=True)
class CheckedX:
    """X as the C++ core wants it: C-contiguous float32 or float64, plus column names."""

    values: np.ndarray
    feature_names: np.ndarray | None
    # (every value finite, max |x|) when the copy that made ``values`` found them in the same
    # read; None otherwise.
    scan: tuple[bool, float] | None = None

    def finite_and_top(self) -> tuple[bool | None, float | None]:
        """(every value finite, max |x|) of ``values``: from the copy's read when it found
        them, else from one read by the core; (None, None) for an array the core cannot scan."""
        if self.scan is not None:
            return self.scan
        return _scan(self.values) if _scannable(self.values) else (None, None)


def frame_feature_names(X: Any) -> np.ndarray | None:
    """The column names of a pandas (or Dask) DataFrame as strings; None for other input."""
    columns = getattr(X, "columns", None)
    if columns is None or not (hasattr(X, "to_numpy") or hasattr(X, "to_dask_array")):
        return None
    return np.asarray([str(c) for c in columns], dtype=object)


def check_X(X: Any, *, name: str = "X", min_samples: int = 2,
            accept_sparse: bool | str = False, check_finite: bool = True, order: str = "C",
            float64: bool = False) -> CheckedX:
    """Convert ``X`` to a C-contiguous float32/float64 array, copying at most once.

    ``order="F"`` gives a Fortran-contiguous array instead (for column algorithms);
    ``accept_sparse="csc"`` turns sparse formats other than CSR and CSC into CSC (for a
    reader of columns) where True makes them CSR;
    ``float64=True`` converts float32 too.

    float32 stays float32; every other real dtype becomes float64. pandas DataFrames give
    their column names as ``feature_names``. With ``accept_sparse``, a SciPy sparse matrix
    becomes a canonical CSR or CSC matrix (never dense). ``check_finite=False`` leaves the
    NaN / inf scan to the caller, for a one-pass kernel whose own sums reveal non-finite input
    (then call ``require_finite``, which raises the same error).
    """
    feature_names = frame_feature_names(X)
    if feature_names is not None and hasattr(X, "to_numpy"):
        X = frame_values(X, name)
    if _is_sparse(X):
        if not accept_sparse:
            raise TypeError(f"{name}: sparse matrices are not supported here; pass a dense array")
        return CheckedX(_check_sparse(X, name, min_samples,
                                      "csc" if accept_sparse == "csc" else "csr"), None)
    arr = as_array(X, name)
    if arr.dtype == object:
        arr = object_reals(arr, name)
    require_real_dtype(arr.dtype, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-D array of shape (n_samples, n_features), got {arr.ndim}-D"
        )
    # float32 in either byte order stays float32 (as native-order float32)
    dtype = np.float32 if _is_float32(arr.dtype) and not float64 else np.float64
    n_samples, n_features = arr.shape
    if n_samples < min_samples:
        raise ValueError(f"{name}: need at least {min_samples} samples, got {n_samples}")
    if n_features == 0:
        raise ValueError(f"{name}: has zero features")
    if (order == "F" and arr.dtype in (np.float32, np.float64) and arr.flags.c_contiguous
            and arr.flags.aligned and not arr.flags.f_contiguous and arr.size >= _TILED_COPY_MIN):
        # Rows to columns in tiles, the finiteness check in the same read: NumPy's strided
        # copy misses the cache on every element when there are many rows (4x slower at
        # 5000 x 1000).
        arr, finite, top = _core._fortran_copy(arr, dtype == np.float64)
        if check_finite and not finite:
            raise ValueError(f"{name}: contains NaN or infinity")
        return CheckedX(arr, feature_names, (bool(finite), float(top)))
    if (order == "C" and arr.dtype in (np.float32, np.float64) and arr.flags.f_contiguous
            and arr.flags.aligned and not arr.flags.c_contiguous and arr.size >= _TILED_COPY_MIN):
        # A Fortran-ordered X is the C-ordered array of its transpose: the same tiled copy
        # turns it into rows, with the finiteness check in the same read (NumPy's strided copy
        # costs more than the neighbour search itself on gene-expression data).
        out, finite, top = _core._fortran_copy(arr.T, dtype == np.float64)
        if check_finite and not finite:
            raise ValueError(f"{name}: contains NaN or infinity")
        return CheckedX(out.T, feature_names, (bool(finite), float(top)))
    arr = as_contiguous(arr, dtype, order)
    if check_finite:
        require_finite(arr, name)
    return CheckedX(arr, feature_names)


def _is_float32(dtype: Any) -> bool:
    return dtype.kind == "f" and dtype.itemsize == 4


def as_array(values: Any, name: str) -> np.ndarray:
    """np.asarray(values), with NumPy's error for ragged nested lists restated for ``name``."""
    try:
        return np.asarray(values)
    except ValueError as err:
        if "inhomogeneous" not in str(err) and "sequence" not in str(err):
            raise
        raise ValueError(f"{name}: its rows have different lengths (a ragged nested list); "
                         "expected a rectangular array") from None


def object_reals(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array that holds only real numbers (Python or NumPy ints and floats, as a
    pandas object column gives them) as float64, as scikit-learn converts it; any other
    object array is a TypeError naming the first value of another type."""
    bad = [v for v in arr.flat if not isinstance(v, numbers.Real)][:1]
    if bad or arr.size == 0:
        shown = f" (a value of type {type(bad[0]).__name__})" if bad else ""
        raise TypeError(f"{name}: expected real numbers, got dtype object{shown}")
    return arr.astype(np.float64)


def object_numbers(arr: np.ndarray) -> np.ndarray:
    """A 1-D target of dtype object that holds only numbers (no bools, no strings) as
    float64, so that its values, not its dtype, decide whether it is continuous; any other
    array unchanged."""
    if arr.dtype != object or arr.size == 0:
        return arr
    if all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
           for v in arr.flat):
        return arr.astype(np.float64)
    return arr


def as_contiguous(arr: Any, dtype: Any, order: str = "C") -> np.ndarray:
    """``arr`` as ``dtype`` in ``order`` with the plain strides of a fresh array, copying at
    most once.

    NumPy calls an array contiguous whatever the stride of an axis of length 1 (a reversed
    1-element array keeps stride -8), but the compiled core refuses negative strides, so such
    an array is copied too, as is one whose data are not aligned for its dtype.
    """
    out = np.asarray(arr, dtype=dtype, order=order)
    step = out.itemsize
    plain = []
    for extent in (out.shape[::-1] if order == "C" else out.shape):
        plain.append(step)
        step *= max(extent, 1)
    if order == "C":
        plain.reverse()
    if out.strides != tuple(plain) or not out.flags.aligned:
        out = out.copy(order=order)
    return out


def check_vector(values: Any, name: str, *, length: int | None = None,
                 length_name: str = "") -> np.ndarray:
    """A 1-D array of real parameters (weights, penalties, ...) as a contiguous float64 copy
    the core can take: complex numbers, strings and other non-real dtypes are a TypeError (never
    silently cast), a wrong shape or NaN / inf a ValueError. ``length`` fixes its size
    (``length_name`` says what it is in the message)."""
    arr = as_array(values, name)
    if arr.dtype == object:
        arr = object_reals(arr, name)
    require_real_dtype(arr.dtype, name)
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length):
        label = f"{length_name}={length}" if length_name else str(length)
        size = "" if length is None else f" of length {label}"
        raise ValueError(f"{name}: expected a 1-D array{size}, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinity")
    return as_contiguous(arr, np.float64)


# Below this many elements NumPy's own copy is as fast.
_TILED_COPY_MIN = 1 << 16


def require_real_dtype(dtype: Any, name: str) -> None:
    """Refuse a dtype that is not bool, integer or real floating point.

    Complex numbers would lose their imaginary part and timedelta64 / datetime64 values their
    unit in a conversion to float, so both are refused rather than converted.
    """
    kind = np.dtype(dtype).kind
    if kind == "c":
        raise TypeError(f"{name}: complex values are not supported")
    if kind not in "biuf":
        raise TypeError(f"{name}: expected real numbers, got dtype {dtype}")


def _masked_numpy_dtype(dtype: Any) -> np.dtype | None:
    """The NumPy dtype behind a pandas nullable numeric dtype (Int64, Float64, boolean) or a
    sparse numeric column."""
    if isinstance(dtype, np.dtype):
        return None
    inner = getattr(dtype, "numpy_dtype", None)
    if inner is None and type(dtype).__name__ == "SparseDtype":
        inner = dtype.subtype
    if inner is None:
        return None
    inner = np.dtype(inner)
    return inner if inner.kind in "biuf" else None


def frame_needs_float64(frame: Any, name: str) -> bool:
    """Checks a (pandas or Dask) DataFrame's column dtypes, naming its first non-numeric column
    in the TypeError; True when the values must be converted column by column to float64
    (nullable numeric columns, or bool columns beside numeric ones)."""
    nullable = False
    kinds = set()
    for column, dtype in zip(frame.columns, frame.dtypes):
        if _masked_numpy_dtype(dtype) is not None:
            nullable = True
            continue
        try:
            kind = np.dtype(dtype).kind
        except TypeError:  # another pandas extension dtype (string, category, ...)
            kind = "O"
        if kind == "c":
            raise TypeError(f"{name}: column {column!r} holds complex values, which are not "
                            "supported")
        if kind not in "biuf":
            raise TypeError(f"{name}: column {column!r} has dtype {dtype}; expected real "
                            "numbers")
        kinds.add(kind)
    return nullable or ("b" in kinds and len(kinds) > 1)


def frame_values(frame: Any, name: str) -> Any:
    """A DataFrame's values: its first non-numeric column is named in the TypeError; nullable
    numeric columns (Int64, Float64, boolean) become float64 with NA as NaN (which the NaN check
    then refuses), as scikit-learn accepts them, and so do bool columns beside numeric ones."""
    dtypes = getattr(frame, "dtypes", None)
    if dtypes is None or _is_sparse(frame):
        return frame
    if frame_needs_float64(frame, name):
        # NA as NaN; pandas gives object values for bool columns beside numbers, read as
        # 0 / 1. Column by column into one C-ordered array: frame.to_numpy gives a
        # Fortran-ordered one here, which check_X would copy a second time.
        out = np.empty(frame.shape, dtype=np.float64)
        # blocks of columns: at most an eighth of the frame (the temporary) and 256 columns
        # (one pandas call per block, not per column)
        step = max(1, min(256, -(-frame.shape[1] // 8)))
        for j in range(0, frame.shape[1], step):
            out[:, j:j + step] = frame.iloc[:, j:j + step].to_numpy(dtype=np.float64,
                                                                    na_value=np.nan)
        return out
    return frame


def require_finite(values: Any, name: str = "X") -> None:
    """Raise the standard error when a dense array or a sparse matrix holds NaN or inf."""
    data = values.data if _is_sparse(values) else values
    if not (_scan(data)[0] if _scannable(data) else np.isfinite(data).all()):
        raise ValueError(f"{name}: contains NaN or infinity")



def _is_sparse(X: Any) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _check_sparse(X: Any, name: str, min_samples: int, other: str = "csr"):
    """A sparse X as canonical CSR or CSC (no duplicate entries), float32 or float64.

    CSR and CSC keep their format (kernels read both; converting costs a copy); any other
    format becomes ``other`` (CSR, or CSC for a reader of columns: one conversion, not two).
    """
    if len(X.shape) != 2:
        raise ValueError(f"{name}: expected a 2-D sparse matrix, got shape {X.shape}")
    require_real_dtype(X.dtype, name)
    dtype = np.float32 if _is_float32(X.dtype) else np.float64
    out = X if X.format in ("csr", "csc") else X.asformat(other)
    # Never fix up the caller's matrix in place; a change of dtype is the one copy.
    if out.dtype != dtype:
        out = out.astype(dtype)
    elif out is X and not X.has_canonical_format:
        out = X.copy()
    if not out.has_canonical_format:
        out.sum_duplicates()
    n_samples, n_features = out.shape
    if n_samples < min_samples:
        raise ValueError(f"{name}: need at least {min_samples} samples, got {n_samples}")
    if n_features == 0:
        raise ValueError(f"{name}: has zero features")
    require_finite(out, name)
    return out


@dataclass(frozen=True)
class CheckedLabels:
    """Class labels encoded as 0..n_classes-1 (int64), with the original class values."""

    codes: np.ndarray
    classes: np.ndarray


def _check_y_shape(y: Any, n_samples: int, name: str, what: str) -> np.ndarray:
    """y as a 1-D array with one entry per sample of X (``what`` names its entries)."""
    arr = _series_values(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        raise ValueError(
            f"{name}: expected a 1-D array, got shape {arr.shape}; use y.ravel() for a column"
        )
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of {what}, got shape {arr.shape}")
    if arr.shape[0] != n_samples:
        raise ValueError(
            f"X and {name} have different numbers of samples: {n_samples} and {arr.shape[0]}"
        )
    return arr


def _series_values(y: Any) -> np.ndarray:
    """np.asarray(y), except that a pandas nullable column (Int64, Float64, boolean, string)
    gives its NumPy values: NaN for a missing number (the NaN check refuses it), None for a
    missing string (the missing-label check refuses it)."""
    dtype = getattr(y, "dtype", None)
    if dtype is None or isinstance(dtype, np.dtype) or not hasattr(y, "to_numpy"):
        return np.asarray(y)
    inner = _masked_numpy_dtype(dtype)
    if inner is None:
        return np.asarray(y.to_numpy(dtype=object, na_value=None))
    if bool(np.asarray(y.isna()).any()):
        return np.asarray(y.to_numpy(dtype=np.float64, na_value=np.nan))
    return np.asarray(y.to_numpy(dtype=inner))


def label_repr(value: Any) -> str:
    """A class label as the user wrote it: repr(0), repr('a'), whatever the array's dtype."""
    return repr(value.item() if isinstance(value, np.generic) else value)


_INTP_MIN, _INTP_MAX = int(np.iinfo(np.intp).min), int(np.iinfo(np.intp).max)


def _small_integer_classes(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """np.unique(arr, return_inverse=True) for integer labels spanning a range of at most
    about the number of labels, by counting instead of sorting (1.4x faster on 1000 labels
    0 .. 3, 11x on 100000); None for other labels and for fewer than 256, where the sort is as
    fast."""
    if arr.dtype.kind not in "iu" or arr.size < 256 or arr.ndim != 1:
        return None
    lo, hi = int(arr.min()), int(arr.max())
    if hi - lo > arr.size + 1024 or hi > _INTP_MAX or lo < _INTP_MIN:
        return None
    shifted = arr.astype(np.intp, copy=False)
    if lo:
        shifted = shifted - lo
    present = np.bincount(shifted, minlength=hi - lo + 1) > 0
    classes = (np.nonzero(present)[0] + lo).astype(arr.dtype)
    code_of = np.cumsum(present) - 1
    return classes, code_of[shifted]


def check_y_classes(y: Any, n_samples: int, *, name: str = "y") -> CheckedLabels:
    """Validate class labels of any dtype (ints, strings, ...) and encode them."""
    arr = _check_y_shape(y, n_samples, name, "labels")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinity")
    if arr.dtype == object and any(v is None or (isinstance(v, (float, np.floating)) and v != v)
                                   for v in arr):
        raise ValueError(f"{name}: contains missing labels (None or NaN)")
    classes_codes = _small_integer_classes(arr)
    try:
        classes, codes = (classes_codes if classes_codes is not None
                          else np.unique(arr, return_inverse=True))
    except TypeError as exc:
        raise TypeError(f"{name}: labels cannot be sorted ({exc})") from None
    if classes.shape[0] < 2:
        only = f"only class {label_repr(classes[0])}" if classes.shape[0] else "no labels"
        raise ValueError(f"{name}: needs at least 2 classes, got a single class ({only})")
    return CheckedLabels(np.ascontiguousarray(codes.reshape(-1), dtype=np.int64), classes)


def refuse_continuous_labels(y: Any, what: str, *, hint: str = "", name: str = "y") -> None:
    """Refuse float labels with a non-integer value where ``what`` needs classes.

    Such a y is a real target (scikit-learn's ``type_of_target`` calls it "continuous"): read
    as labels, almost every sample would be a class of its own and the answer meaningless.
    ``hint`` ("; pass ...") says what to do instead.
    """
    if _continuous(np.asarray(y)):
        raise ValueError(f"{name}: {what} needs class labels, got continuous values{hint}")


def _continuous(arr: np.ndarray) -> bool:
    """Finite floats with a fractional part somewhere: a real target, not labels (non-finite
    values are left to the label checks' own error)."""
    return arr.dtype.kind == "f" and bool(np.isfinite(arr).all()) and bool(
        np.any(arr != np.round(arr)))


def require_class_sizes(labels: CheckedLabels, what: str, *, n_classes: int | None = None,
                        min_size: int = 1, name: str = "y") -> None:
    """Refuse labels with the wrong number of classes or a class smaller than ``min_size``.

    ``what`` names the statistic that needs it, so the message says why.
    """
    k = labels.classes.shape[0]
    if n_classes is not None and k != n_classes:
        shown = ", ".join(label_repr(c) for c in labels.classes[:5])
        shown += ", ..." if k > 5 else ""
        raise ValueError(f"{name}: {what} needs exactly {n_classes} classes, got {k} ({shown})")
    counts = np.bincount(labels.codes, minlength=k)
    small = np.flatnonzero(counts < min_size)
    if small.size:
        c = small[0]
        raise ValueError(
            f"{name}: {what} needs at least {min_size} samples in every class; class "
            f"{label_repr(labels.classes[c])} has {counts[c]}"
        )


def check_y_real(y: Any, n_samples: int, *, name: str = "y") -> np.ndarray:
    """A real-valued 1-D target (regression) as float64."""
    arr = _check_y_shape(y, n_samples, name, "numbers")
    if arr.dtype == object:
        arr = object_reals(arr, name)
    require_real_dtype(arr.dtype, name)
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinity")
    return arr


def require_loo_neighbours(labels: CheckedLabels, *, name: str = "y") -> None:
    """Refuse labels where no sample has both a same-class and an other-class neighbour.

    Single-sample classes are legal (such samples get NaN margins and add nothing
    to sums) as long as at least one class has two samples.
    """
    counts = np.bincount(labels.codes)
    if counts.max() < 2:
        real = _continuous(labels.classes)
        raise ValueError(
            f"{name}: every class has a single sample, so no sample has a leave-one-out "
            "neighbour of its own class"
            + ("; y holds continuous values, and these methods need class labels (for a real "
               f"target: {_REAL_TARGET_METHODS})" if real else "")
        )


_REAL_TARGET_METHODS = ("rgs, knn_regression_score, sks, or the Relief family's "
                        "target='continuous'")


def check_weights(weights: Any, n_features: int) -> np.ndarray:
    """Feature weights (float64) for the weighted distance; None means all ones."""
    if weights is None:
        return np.ones(n_features)
    return check_vector(weights, "weights", length=n_features, length_name="n_features")


def check_scaled_weights(weights: Any, n_features: int) -> tuple[np.ndarray, int]:
    """(w * 2**-f, f): the weights of a weighted distance, multiplied by a power of two (exact)
    when their largest magnitude lies outside the range the float32 screens work in, as X is by
    ``prepare_scaled``. Distances ||z||_w depend on w only through the products w_i x_i, so
    results in units of X are in units of 2**(e + f) for X rescaled by 2**-e: weights of 1e200
    give the margins of w = 1 times 1e200 (their squares overflowed to NaN), weights of 1e-200
    those of w = 1 times 1e-200 (they vanished to 0)."""
    w = check_weights(weights, n_features)
    return exact_rescale(w, SCREEN_EXPONENT)


def check_option(value: Any, name: str, valid: Sequence[str]) -> str:
    """An option string from a fixed set; the error lists the valid ones."""
    if not isinstance(value, str) or value not in valid:
        options = ", ".join(repr(v) for v in valid)
        raise ValueError(f"{name}: unknown value {value!r}; valid options are {options}")
    return value


# Upper bounds of the C++ integer types the parameters end up in.
INT_MAX = 2**31 - 1
INDEX_MAX = 2**63 - 1


def check_int(value: Any, name: str, *, minimum: int = 1, maximum: int = INT_MAX) -> int:
    """An integer in [minimum, maximum] (bools are refused: True is not a size).

    ``maximum`` defaults to the largest C++ ``int``, the type of every count parameter of the
    core (epochs, restarts, bins, iterations); pass ``INDEX_MAX`` for a 64-bit one.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    if value > maximum:
        raise ValueError(f"{name}: must be <= {maximum}, got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """A flag: True or False (NumPy bools too); "yes", 1 or None are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {type(value).__name__} "
                        f"{value!r}")
    return bool(value)


def check_real(value: Any, name: str, *, positive: bool = False) -> float:
    """A finite real number (strictly positive if asked)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name}: must be finite, got {value}")
    if positive and value <= 0:
        raise ValueError(f"{name}: must be > 0, got {value}")
    return value


def check_support(initial: Any, n_features: int, *, name: str = "initial") -> np.ndarray:
    """A feature subset as a bool mask: accepts a bool mask or an array of indices."""
    arr = np.asarray(initial)
    if arr.ndim > 1:
        raise ValueError(f"{name}: expected a 1-D mask or index array, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        if arr.shape != (n_features,):
            raise ValueError(
                f"{name}: a boolean mask must have shape ({n_features},), got {arr.shape}"
            )
        return arr.copy()
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name}: expected a boolean mask or integer feature indices")
    flat = arr.reshape(-1)
    # Range first, in Python integers: a uint64 index would wrap to a negative int64.
    if flat.size and (int(flat.min()) < -n_features or int(flat.max()) >= n_features):
        raise IndexError(f"{name}: feature index out of range for {n_features} features")
    idx = flat.astype(np.int64)
    if np.unique(idx % n_features if idx.size else idx).size != idx.size:
        raise ValueError(f"{name}: feature indices must be distinct")
    mask = np.zeros(n_features, dtype=bool)
    mask[idx] = True
    return mask


def check_random_state(random_state: Any) -> int:
    """Turn random_state into the one 64-bit seed the C++ side derives its streams from.

    None draws fresh entropy; an int is used as given (0 <= seed < 2**64); a Generator or
    RandomState is asked for one number (advancing it, as scikit-learn does).
    """
    if random_state is None:
        # Eight bytes of the operating system's entropy: what np.random.SeedSequence() would
        # draw and hash (128 bits of it), at a twentieth of the cost (it showed as 10% of the
        # Python overhead of a call on small data).
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63, dtype=np.int64))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(
            "random_state: expected None, an int, np.random.Generator or np.random.RandomState, "
            f"got {type(random_state).__name__}"
        )
    if not 0 <= random_state < 2**64:
        raise ValueError(f"random_state: must be in [0, 2**64), got {random_state}")
    return int(random_state)


def resolve_n_jobs(n_jobs: Any) -> int:
    """scikit-learn's n_jobs rules; returns the thread count for the core (0 = runtime default).

    None: what the OpenMP runtime allows now (OMP_NUM_THREADS, threadpoolctl limits);
    -1: all cores; -k: all but k-1 cores; 0 is an error. No call uses more threads than there
    are cores available to the process: a larger n_jobs (or OMP_NUM_THREADS) only
    oversubscribes them, and thousands of threads exhaust the OpenMP runtime, so it is clipped
    to the core count.
    """
    cores = max(1, int(_core.available_cores()))
    if n_jobs is None:
        return 0 if _core.default_threads() <= cores else cores
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs: expected None or an integer, got {type(n_jobs).__name__}")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs: 0 is not a valid number of jobs; use None, -1 or a positive int")
    if n_jobs > 0:
        return min(n_jobs, cores)
    return max(1, cores + 1 + n_jobs)


_blas_controller: Any = None


def blas_threads(threads: int) -> Any:
    """A context within which the BLAS that NumPy calls uses at most ``threads`` threads.

    An explicit ``n_jobs`` bounds the whole call, including the matrix products a function makes
    through NumPy (X^T X for the LASSO, X D^T for sparse codes): otherwise NumPy's BLAS runs
    them on every core, and its idle threads then keep spinning on the other cores for a while
    after each product. ``threads`` = 0 (n_jobs=None) leaves BLAS as it is. The BLAS libraries
    are those loaded when this is first needed (NumPy's, loaded before fastfs).
    """
    if threads <= 0:
        return contextlib.nullcontext()
    return _blas_limit(int(threads))


# The limit is process-wide (OpenBLAS has one thread pool; threadpoolctl lets only one Python
# thread at a time change it), so calls from several Python threads do not nest their limits:
# a call that starts while no other call holds one sets it (saving the libraries' counts) and
# restores it when it ends; calls that start meanwhile run under it, or unbounded once it has
# ended. Each call saving and restoring on its own let a call that started under another's
# limit restore that limit at its end, leaving BLAS at 1 thread for the rest of the process.
_blas_lock = threading.Lock()
_blas_calls = 0


@contextlib.contextmanager
def _blas_limit(threads: int):
    global _blas_controller, _blas_calls
    with _blas_lock:
        if _blas_controller is None:
            from threadpoolctl import ThreadpoolController

            _blas_controller = ThreadpoolController().select(user_api="blas")
        limiter = _blas_controller.limit(limits=threads) if _blas_calls == 0 else None
        _blas_calls += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_calls -= 1
            if limiter is not None:
                limiter.restore_original_limits()


def format_bytes(nbytes: float) -> str:
    """A byte count for messages, three significant digits in the largest unit it reaches:
    "3 GiB", "12.5 MiB", "3.12 KiB", "96 bytes"."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} bytes"


def guard_memory(needed: int, what: str, description: str, alternative: str) -> None:
    """Refuse a work allocation of ``needed`` bytes above ``fastfs.config.max_memory``.

    ``description`` says what would be allocated ("one m x m matrix", "a visiting order of
    n_iter samples"), ``alternative`` how to avoid it.
    """
    limit = config.max_memory
    if needed > limit:
        raise MemoryError(
            f"{what} needs {description} of {format_bytes(needed)}, above "
            f"fastfs.config.max_memory = {format_bytes(limit)}; {alternative}"
        )


def guard_visiting_order(n_steps: int, copies: int, threads: int, what: str,
                         bytes_per_step: int = 8) -> None:
    """The memory guard for a run of ``n_steps`` steps: the visiting order (8 bytes a step, more
    where a record per step is kept), one per restart running at the same time (at most
    ``copies``, one per thread)."""
    at_once = max(1, min(copies, threads if threads > 0 else _core.default_threads()))
    guard_memory(bytes_per_step * n_steps * at_once, what,
                 f"{at_once} visiting order{'s' if at_once > 1 else ''} of {n_steps} steps",
                 "use fewer steps (n_iter), or raise fastfs.config.max_memory")


def guard_square_matrix(n_samples: int, itemsize: int, what: str, alternative: str,
                        count: int = 1) -> None:
    """Refuse ``count`` m x m work matrices larger than ``fastfs.config.max_memory``."""
    needed = count * n_samples * n_samples * itemsize
    shape = f"{n_samples} x {n_samples}"
    description = f"one {shape} matrix" if count == 1 else f"{count} {shape} matrices"
    guard_memory(needed, what, description, alternative)


def check_sample_order(sample_order: Any, n_samples: int) -> np.ndarray:
    order = np.asarray(sample_order)
    if order.ndim != 1 or order.size == 0:
        raise ValueError("sample_order: expected a non-empty 1-D array of sample indices")
    if not np.issubdtype(order.dtype, np.integer):
        raise TypeError("sample_order: expected integer sample indices")
    if order.min() < 0 or order.max() >= n_samples:
        raise IndexError(f"sample_order: sample index out of range for {n_samples} samples")
    return order.astype(np.int64)


def prepare_classification(X: Any, y: Any):
    """Validated X and encoded class labels for the leave-one-out neighbour methods."""
    cx = check_X(X)
    labels = check_y_classes(y, cx.values.shape[0])
    require_loo_neighbours(labels)
    return cx, labels


def check_loo_labels(y: Any, n_samples: int, what: str | None = None) -> CheckedLabels:
    """Class labels for the leave-one-out neighbour methods (require_loo_neighbours); with
    ``what`` (the method's name), a real target (float labels with a fractional part,
    scikit-learn's "continuous") is refused: read as labels, nearly every sample would be a
    class of its own and the margins meaningless."""
    labels = check_y_classes(y, n_samples)
    require_loo_neighbours(labels)
    if what is not None:
        refuse_continuous_labels(y, what, hint=f" (for a real target: {_REAL_TARGET_METHODS})")
    return labels


def prepare_scaled(X: Any, y: Any, what: str | None = None):
    """prepare_classification with X rescaled exactly by 2**-e into a safe range (see
    fastfs._scale): returns (cx, labels, values, e); ``what`` as in check_loo_labels."""
    # One read of X for both the finiteness check and max|x| (the neighbour searches take
    # a few milliseconds on gene-expression data, where every extra pass over X shows).
    cx = check_X(X, check_finite=False)
    finite, top = cx.finite_and_top()
    if finite is None:
        require_finite(cx.values)
    elif not finite:
        raise ValueError("X: contains NaN or infinity")
    labels = check_loo_labels(y, cx.values.shape[0], what)
    values, e = exact_rescale(cx.values, SCREEN_EXPONENT, top=top)
    return cx, labels, values, e


def relieff_neighbours(n_neighbors: Any, n_samples: int) -> int:
    """k for ReliefF: an int >= 1, or a float fraction of the samples (skrebate's rule)."""
    if isinstance(n_neighbors, (float, np.floating)):
        frac = check_real(n_neighbors, "n_neighbors", positive=True)
        if frac > 1.0:
            raise ValueError(f"n_neighbors: a float is a fraction of the samples and must lie "
                             f"in (0, 1], got {frac!r}")
        k = int(frac * n_samples * 0.5)
        if k < 1:
            raise ValueError(f"n_neighbors: the fraction {frac!r} of {n_samples} samples gives "
                             "fewer than one neighbour (k = int(n_neighbors * n_samples / 2)); "
                             "pass a larger fraction or an int")
        return k
    return check_int(n_neighbors, "n_neighbors")
