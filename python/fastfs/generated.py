"""Generated features of binarised images (Navot's thesis, section 5.3.2).

A generated feature is the logical AND of 1 to 8 *inputs* (pixels, each possibly negated),
made shift invariant by OR-ing it over every shift (dy, dx) with |dy|, |dx| <= shiftInvLen
that keeps all its inputs inside the image. Its meta-features are

* ``numInputs`` (1-8),
* ``percentPos``: the percentage of inputs that are not negated (0-100, rounded),
* ``shiftInvLen`` (0-8; 0 = no shift invariance),
* ``scatter``: the mean Euclidean distance (pixels) of the inputs from their centre of gravity,

and its cost is 0.5 (1 + shiftInvLen^2). The C++ core packs the binarised images 64 to a
machine word (per pixel, across images) and evaluates every feature on every image in one
pass, in parallel over features.

``draw_features`` draws features whose meta-features are a given point u: the inputs are placed
around a centre drawn uniformly over the image at Gaussian offsets scaled so that their scatter
comes close to the wanted one (the best of up to 64 placements; exact uniform sampling over all
features with a given scatter is not attempted; a scatter below what numInputs distinct pixels
allow gives the numInputs pixels nearest a random centre, the smallest scatter there is), and
a random ``round(percentPos / 100 *
numInputs)`` of them are positive. ``DigitFeatureSearch`` bundles the draw, cost and quality
(2-fold cross-validated linear SVM) of section 5.3.2 for :func:`fastfs.mufasa`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

import fastfs._core as _core
from ._validation import check_int, check_random_state, resolve_n_jobs

__all__ = ["DigitFeatureSearch", "GeneratedFeatures", "PackedImages", "binarize",
           "draw_features", "generated_features", "pack_images"]

MAX_INPUTS = 8
MAX_SHIFT = 8
META_FEATURES = ("numInputs", "percentPos", "shiftInvLen", "scatter")


def binarize(images: Any, threshold: float | None = None) -> np.ndarray:
    """0/1 uint8 images: 1 where a pixel is above ``threshold`` (default: the midpoint of the
    data's range, 127.5 for 0-255 grey levels). The shape is kept."""
    arr = np.asarray(images)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"images: expected real numbers, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError("images: empty array")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("images: contains NaN or infinity")
    if threshold is None:
        threshold = (float(arr.min()) + float(arr.max())) / 2.0
    return (arr > threshold).astype(np.uint8)


def _image_matrix(images: Any, image_shape: Any) -> tuple[np.ndarray, tuple[int, int]]:
    arr = np.asarray(images)
    if arr.dtype == bool:
        arr = arr.view(np.uint8)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"images: expected binary numbers, got dtype {arr.dtype}")
    if arr.ndim == 3:
        shape = (int(arr.shape[1]), int(arr.shape[2]))
        if image_shape is not None and tuple(int(v) for v in image_shape) != shape:
            raise ValueError(f"image_shape: {tuple(image_shape)} does not match the images' "
                             f"shape {shape}")
        arr = arr.reshape(arr.shape[0], -1)
    elif arr.ndim == 2:
        if image_shape is None:
            raise ValueError("image_shape: needed for flattened images of shape "
                             "(n_images, n_pixels)")
        shape = (int(image_shape[0]), int(image_shape[1]))
        if shape[0] * shape[1] != arr.shape[1]:
            raise ValueError(f"image_shape: {shape[0]} x {shape[1]} = {shape[0] * shape[1]} "
                             f"pixels but the images have {arr.shape[1]}")
    else:
        raise ValueError(f"images: expected (n_images, height, width) or (n_images, n_pixels), "
                         f"got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"images: need at least one image and one pixel, got shape "
                         f"{arr.shape}")
    if arr.dtype != np.uint8:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError("images: expected binary values (0/1 or bool); binarise them "
                             "first (fastfs.generated.binarize)")
        arr = arr.astype(np.uint8)
    elif arr.max() > 1:
        raise ValueError("images: expected binary values (0/1 or bool); binarise them first "
                         "(fastfs.generated.binarize)")
    return np.ascontiguousarray(arr), shape


@dataclass(frozen=True, repr=False, eq=False)
class PackedImages:
    """Binarised images packed 64 to a word per pixel (bit i % 64 of word i // 64 = image i)."""

    bits: np.ndarray
    n_images: int
    image_shape: tuple[int, int]

    def __repr__(self) -> str:
        return f"PackedImages(n_images={self.n_images}, image_shape={self.image_shape})"


def pack_images(images: Any, image_shape: Any = None, *, n_jobs: int | None = None
                ) -> PackedImages:
    """Pack binary images (n_images, h, w), or (n_images, h * w) with ``image_shape``."""
    if isinstance(images, PackedImages):
        return images
    arr, shape = _image_matrix(images, image_shape)
    bits = _core.generated_pack(arr, resolve_n_jobs(n_jobs))
    return PackedImages(bits, int(arr.shape[0]), shape)


@dataclass(frozen=True, repr=False, eq=False)
class GeneratedFeatures:
    """A set of generated features.

    Attributes
    ----------
    image_shape : (height, width)
    inputs : ndarray of int32, shape (n_features, 8)
        Input pixels as row * width + column; unused slots are -1.
    negated : ndarray of bool, shape (n_features, 8)
    n_inputs : ndarray of int32, shape (n_features,)
    shift : ndarray of int32, shape (n_features,)
        shiftInvLen.
    """

    image_shape: tuple[int, int]
    inputs: np.ndarray
    negated: np.ndarray
    n_inputs: np.ndarray
    shift: np.ndarray

    @classmethod
    def from_arrays(cls, inputs: Any, negated: Any, shift: Any, image_shape: Sequence[int]
                    ) -> "GeneratedFeatures":
        """Build features from per-feature lists of input pixels (row * width + col), negation
        flags and shifts; checks every value."""
        h, w = (int(v) for v in image_shape)
        if h < 1 or w < 1:
            raise ValueError(f"image_shape: sizes must be >= 1, got {(h, w)}")
        inputs = list(inputs)
        negated = list(negated)
        shift = np.asarray(shift).reshape(-1)
        n = len(inputs)
        if len(negated) != n or shift.shape[0] != n:
            raise ValueError(f"inputs, negated, shift: need one entry per feature, got {n}, "
                             f"{len(negated)} and {shift.shape[0]}")
        I = np.full((n, MAX_INPUTS), -1, dtype=np.int32)
        N = np.zeros((n, MAX_INPUTS), dtype=bool)
        k = np.zeros(n, dtype=np.int32)
        for f, (pix, neg) in enumerate(zip(inputs, negated)):
            pix = np.asarray(pix).reshape(-1)
            neg = np.asarray(neg, dtype=bool).reshape(-1)
            if not 1 <= pix.size <= MAX_INPUTS:
                raise ValueError(f"inputs: feature {f} has {pix.size} inputs; 1 to 8 allowed")
            if neg.size != pix.size:
                raise ValueError(f"negated: feature {f} has {neg.size} flags for {pix.size} "
                                 "inputs")
            if pix.dtype.kind not in "iu" or pix.min() < 0 or pix.max() >= h * w:
                raise ValueError(f"inputs: feature {f} has a pixel outside the {h} x {w} image")
            if np.unique(pix).size != pix.size:
                raise ValueError(f"inputs: feature {f} uses a pixel twice")
            I[f, :pix.size] = pix
            N[f, :pix.size] = neg
            k[f] = pix.size
        if shift.size and (shift.dtype.kind not in "iu" or shift.min() < 0
                           or shift.max() > MAX_SHIFT):
            raise ValueError("shift: shiftInvLen must be an integer in 0..8")
        return cls((h, w), I, N, k, shift.astype(np.int32))

    def __len__(self) -> int:
        return int(self.n_inputs.shape[0])

    def __getitem__(self, index: Any) -> "GeneratedFeatures":
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        return GeneratedFeatures(self.image_shape, self.inputs[index], self.negated[index],
                                 self.n_inputs[index], self.shift[index])

    def __repr__(self) -> str:
        return f"GeneratedFeatures({len(self)} features, image_shape={self.image_shape})"

    @staticmethod
    def concat(parts: Sequence["GeneratedFeatures"]) -> "GeneratedFeatures":
        """One set from several (same image shape)."""
        parts = list(parts)
        if not parts:
            raise ValueError("parts: nothing to concatenate")
        shape = parts[0].image_shape
        if any(p.image_shape != shape for p in parts):
            raise ValueError("parts: features for different image shapes")
        return GeneratedFeatures(shape, np.concatenate([p.inputs for p in parts]),
                                 np.concatenate([p.negated for p in parts]),
                                 np.concatenate([p.n_inputs for p in parts]),
                                 np.concatenate([p.shift for p in parts]))

    @property
    def meta_features(self) -> np.ndarray:
        """(n_features, 4): numInputs, percentPos, shiftInvLen, scatter."""
        k = self.n_inputs.astype(np.float64)
        used = np.arange(MAX_INPUTS)[None, :] < self.n_inputs[:, None]
        pos = (used & ~self.negated).sum(axis=1)
        w = self.image_shape[1]
        rows = np.where(used, self.inputs // w, 0).astype(np.float64)
        cols = np.where(used, self.inputs % w, 0).astype(np.float64)
        cy = rows.sum(axis=1) / k
        cx = cols.sum(axis=1) / k
        dist = np.hypot(rows - cy[:, None], cols - cx[:, None])
        scatter = np.where(used, dist, 0.0).sum(axis=1) / k
        return np.column_stack([k, np.round(100.0 * pos / k), self.shift.astype(np.float64),
                                scatter])

    @property
    def cost(self) -> np.ndarray:
        """0.5 (1 + shiftInvLen^2) per feature: proportional to the locations measured."""
        return 0.5 * (1.0 + self.shift.astype(np.float64) ** 2)

    def transform(self, images: Any, *, n_jobs: int | None = None, packed: bool = False
                  ) -> np.ndarray:
        """The features' values on every image: (n_images, n_features) uint8 0/1 (a
        transposed view of the C-ordered (n_features, n_images) result), or with
        ``packed=True`` the (n_features, ceil(n_images / 64)) uint64 words."""
        return generated_features(images, self, n_jobs=n_jobs, packed=packed)


def generated_features(images: Any, features: GeneratedFeatures, *, image_shape: Any = None,
                       n_jobs: int | None = None, packed: bool = False) -> np.ndarray:
    """Values of generated ``features`` on binary ``images`` (see :class:`GeneratedFeatures`)."""
    if not isinstance(features, GeneratedFeatures):
        raise TypeError("features: expected GeneratedFeatures (fastfs.generated.draw_features "
                        "or GeneratedFeatures.from_arrays)")
    packed_images = pack_images(images, image_shape or features.image_shape, n_jobs=n_jobs)
    if packed_images.image_shape != features.image_shape:
        raise ValueError(f"features: drawn for {features.image_shape} images, got "
                         f"{packed_images.image_shape}")
    h, w = features.image_shape
    out = _core.generated_evaluate(packed_images.bits, packed_images.n_images, h, w,
                                   np.ascontiguousarray(features.inputs, dtype=np.int32),
                                   np.ascontiguousarray(features.negated, dtype=np.uint8),
                                   np.ascontiguousarray(features.n_inputs, dtype=np.int32),
                                   np.ascontiguousarray(features.shift, dtype=np.int32),
                                   bool(packed), resolve_n_jobs(n_jobs))
    return out if packed else out.T


def draw_features(u: Any, n_features: int | None = None, *, image_shape: Sequence[int] = (28, 28),
                  random_state: Any = None, n_jobs: int | None = None) -> GeneratedFeatures:
    """Draw random features whose meta-features are u = (numInputs, percentPos, shiftInvLen,
    scatter).

    ``u`` is one point (shape (4,), then ``n_features`` features are drawn there) or one point
    per feature (shape (n, 4)). Values are rounded and clipped to their ranges (numInputs 1-8
    and at most the image's pixel count, percentPos 0-100, shiftInvLen 0-8, scatter >= 0). The same ``random_state`` gives the same
    features whatever ``n_jobs`` is.
    """
    U = np.asarray(u, dtype=np.float64)
    if U.ndim == 1:
        if U.shape != (4,):
            raise ValueError(f"u: expected the 4 meta-features (numInputs, percentPos, "
                             f"shiftInvLen, scatter), got shape {U.shape}")
        n = check_int(1 if n_features is None else n_features, "n_features")
        U = np.broadcast_to(U, (n, 4))
    elif U.ndim != 2 or U.shape[1] != 4:
        raise ValueError(f"u: expected shape (4,) or (n_features, 4), got {U.shape}")
    elif n_features is not None and n_features != U.shape[0]:
        raise ValueError(f"n_features: {n_features} but u has {U.shape[0]} rows")
    if not np.isfinite(U).all():
        raise ValueError("u: contains NaN or infinity")
    h, w = (int(v) for v in image_shape)
    if h < 1 or w < 1:
        raise ValueError(f"image_shape: sizes must be >= 1, got {(h, w)}")
    seed = check_random_state(random_state)
    inputs, negated, n_inputs, shift = _core.generated_draw(
        np.ascontiguousarray(U), h, w, seed, resolve_n_jobs(n_jobs))
    return GeneratedFeatures((h, w), inputs, negated.astype(bool), n_inputs, shift)


class DigitFeatureSearch:
    """The search of section 5.3.2 for :func:`fastfs.mufasa`: ``draw`` (one generated feature
    at u), ``cost`` (0.5 (1 + shiftInvLen^2)), ``quality`` (mean accuracy of a linear SVM,
    scikit-learn's LinearSVC, under 2-fold stratified cross-validation on the features' values)
    and ``bounds`` of the four meta-features. ``search.run(budget=...)`` calls mufasa with them.

    The bounds are numInputs 1-8, percentPos 0-100, shiftInvLen 0-8 and scatter 0.5-3.5 (the
    thesis lists shiftInvLen from 1 and scatter from 1; 0 is the plain, unshifted feature and
    two neighbouring pixels have scatter 0.5). The search starts at u0 = (2, 50, 1, 1.5).

    images : binary images (n_images, h, w), or flattened with ``image_shape``.
    """

    bounds = np.array([[1.0, 8.0], [0.0, 100.0], [0.0, 8.0], [0.5, 3.5]])
    u0 = np.array([2.0, 50.0, 1.0, 1.5])

    def __init__(self, images: Any, y: Any, *, image_shape: Any = None, cv_seed: int = 0,
                 n_jobs: int | None = None) -> None:
        self.images = pack_images(images, image_shape, n_jobs=n_jobs)
        self.y = np.asarray(y)
        if self.y.ndim != 1 or self.y.shape[0] != self.images.n_images:
            raise ValueError(f"y: expected {self.images.n_images} labels, got shape "
                             f"{self.y.shape}")
        self.cv_seed = int(cv_seed)
        self.n_jobs = n_jobs

    def draw(self, u: np.ndarray, rng: np.random.Generator) -> GeneratedFeatures:
        return draw_features(u, 1, image_shape=self.images.image_shape,
                             random_state=int(rng.integers(0, 2**63)), n_jobs=1)

    @staticmethod
    def cost(feature: GeneratedFeatures) -> float:
        return float(feature.cost.sum())

    def values(self, features: Sequence[GeneratedFeatures] | GeneratedFeatures) -> np.ndarray:
        fs = features if isinstance(features, GeneratedFeatures) else \
            GeneratedFeatures.concat(features)
        return generated_features(self.images, fs, n_jobs=self.n_jobs).astype(np.float32)

    def quality(self, features: Sequence[GeneratedFeatures]) -> float:
        from sklearn.model_selection import StratifiedKFold, cross_val_score
        from sklearn.svm import LinearSVC

        cv = StratifiedKFold(n_splits=2, shuffle=True, random_state=self.cv_seed)
        return float(cross_val_score(LinearSVC(dual="auto"), self.values(features), self.y,
                                     cv=cv).mean())

    def run(self, *, budget: float | None = None, n_features: int | None = None,
            u0: Any = None, **kwargs: Any):
        from .meta import mufasa

        return mufasa(self.draw, self.u0 if u0 is None else u0, quality=self.quality,
                      budget=budget, n_features=n_features, cost=self.cost,
                      bounds=self.bounds, **kwargs)
