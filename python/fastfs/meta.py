"""Meta-features: features described by properties of their own (Navot's thesis, chapter 5).

Every feature is described by a small vector u of *meta-features* (a pixel's position, the
number of inputs of a generated feature). Then:

* ``quality_map`` learns a regression from u to a feature's quality (Algorithm 5 of the
  thesis): it predicts the quality of features that were never measured, and, applied to the
  measured ones, smooths noisy quality estimates from few samples (section 5.7).
* ``transfer_quality`` carries feature quality from training tasks to a new task (section
  5.5): directly (the average quality over the tasks) or through the meta-features.
* ``mufasa`` searches the meta-feature space instead of the feature space (Algorithm 6): it
  draws a feature set at a point u, scores it, and moves u around the best point so far.
* ``GeneratedFeatures`` (the features of section 5.3.2: AND of 1-8 possibly negated pixels of a
  binarised image, OR-ed over all shifts within +-shiftInvLen) is in ``fastfs.generated``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ._progress import Progress
from ._results import (
    EqualScoresWarning,
    StepState,
    _Repr,
    caller_checks_equal_scores,
    warn_if_equal,
)
from ._validation import (
    check_bool,
    check_int,
    check_random_state,
    check_real,
    check_X,
    check_y_classes,
    refuse_continuous_labels,
)

__all__ = ["MufasaResult", "QualityMap", "TransferResult", "mufasa", "pixel_positions",
           "quality_map", "rbf_expansion", "ridge_alphas", "transfer_quality"]


# ------------------------------------------------------------------------------------------
# meta-feature matrices and the RBF expansion


def _check_meta(meta: Any, n_features: int | None, name: str = "meta_features") -> np.ndarray:
    if isinstance(meta, (str, bytes)) or meta is None:
        raise TypeError(f"{name}: expected an array of shape (n_features, k), got "
                        f"{type(meta).__name__}")
    try:
        U = np.asarray(meta, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected real numbers of shape (n_features, k)") from exc
    if U.ndim == 1:
        U = U[:, None]
    if U.ndim != 2:
        raise ValueError(f"{name}: expected shape (n_features, k), got an array with "
                         f"{U.ndim} dimensions {U.shape}")
    if n_features is not None and U.shape[0] != n_features:
        raise ValueError(f"{name}: has {U.shape[0]} rows but X has {n_features} features; "
                         "one row of meta-features per feature (column of X)")
    if U.shape[1] == 0:
        raise ValueError(f"{name}: has no columns; give at least one meta-feature")
    if not np.isfinite(U).all():
        raise ValueError(f"{name}: contains NaN or infinity")
    return U


def pixel_positions(image_shape: Sequence[int]) -> np.ndarray:
    """The (row, column) of every pixel of a row-major flattened image, shape (h * w, 2)."""
    h, w = _check_image_shape(image_shape)
    rows, cols = np.divmod(np.arange(h * w), w)
    return np.column_stack([rows, cols]).astype(np.float64)


def _check_image_shape(image_shape: Any) -> tuple[int, int]:
    try:
        h, w = (int(v) for v in image_shape)
    except (TypeError, ValueError) as exc:
        raise TypeError("image_shape: expected (height, width)") from exc
    if h < 1 or w < 1:
        raise ValueError(f"image_shape: sizes must be >= 1, got {tuple(image_shape)}")
    return h, w


def rbf_expansion(meta: Any, centers: Any, sigma: float) -> np.ndarray:
    """Responses exp(-|u - c|^2 / (2 sigma^2)) of Gaussians at ``centers`` to every row u.

    ``meta`` has shape (n, k), ``centers`` shape (n_centers, k); returns (n, n_centers).
    """
    U = _check_meta(meta, None, "meta")
    C = _check_meta(centers, None, "centers")
    if C.shape[1] != U.shape[1]:
        raise ValueError(f"centers: have {C.shape[1]} coordinates but the meta-features "
                         f"have {U.shape[1]}")
    sigma = check_real(sigma, "sigma", positive=True)
    d2 = ((U[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-d2 / (2.0 * sigma * sigma))


def _grid_centers(lo: np.ndarray, hi: np.ndarray, per_dim: int) -> np.ndarray:
    axes = [np.linspace(a, b, per_dim) if b > a else np.array([a]) for a, b in zip(lo, hi)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


class _Basis:
    """phi(u): the RBF grid (fixed from the range of every known feature's meta-features),
    the meta-features themselves ("linear"), or a user's callable."""

    def __init__(self, basis: Any, U_all: np.ndarray, grid: int, sigma: float) -> None:
        self.kind = basis
        self.k = U_all.shape[1]
        if callable(basis):
            self.centers = None
        elif basis == "rbf":
            if grid ** self.k > 4096:
                raise ValueError(f"rbf_grid: {grid} centres per meta-feature in {self.k} "
                                 f"dimensions make {grid ** self.k} Gaussians (limit 4096); "
                                 "use basis='linear', a smaller grid or a callable basis")
            self.centers = _grid_centers(U_all.min(axis=0), U_all.max(axis=0), grid)
            self.sigma = sigma
        elif basis == "linear":
            self.centers = None
        else:
            raise ValueError(f"basis: unknown value {basis!r}; valid options are 'rbf', "
                             "'linear' or a callable")

    def __call__(self, U: np.ndarray) -> np.ndarray:
        if U.shape[1] != self.k:
            raise ValueError(f"meta_features: expected {self.k} columns (the meta-features the "
                             f"map was fitted on), got {U.shape[1]}")
        if callable(self.kind):
            Phi = np.asarray(self.kind(U), dtype=np.float64)
            if Phi.ndim != 2 or Phi.shape[0] != U.shape[0] or not np.isfinite(Phi).all():
                raise ValueError("basis: the callable must return finite values of shape "
                                 f"({U.shape[0]}, n_basis), got shape {Phi.shape}")
            return Phi
        if self.kind == "linear":
            return U
        return rbf_expansion(U, self.centers, self.sigma)


def ridge_alphas(Phi: np.ndarray) -> np.ndarray:
    """The default map's penalty grid: 25 values from 1e-8 to 1e2 times the mean squared
    singular value of the centred basis matrix (trace of its Gram matrix / n_basis)."""
    Phi = np.asarray(Phi, dtype=np.float64)
    if Phi.ndim != 2 or Phi.shape[0] == 0:
        raise ValueError(f"Phi: expected a 2-D basis matrix with at least one row, got shape "
                         f"{Phi.shape}")
    Pc = Phi - Phi.mean(axis=0)
    scale = float(np.einsum("ij,ij->", Pc, Pc)) / max(Phi.shape[1], 1)
    return max(scale, 1e-300) * np.logspace(-8, 2, 25)


class _RidgeLOO:
    """Linear regression with intercept, ridge-penalised with the penalty of the grid
    ``ridge_alphas`` that gives the smallest leave-one-out squared error (exact, from one SVD).

    Plain least squares on 49 basis functions interpolates the training features when there
    are about as many of them as basis functions, and its predictions for the others then blow
    up; the penalty chosen by leave-one-out error is tiny when there are many features and
    stops that when there are few."""

    def fit(self, Phi: np.ndarray, q: np.ndarray) -> "_RidgeLOO":
        n = Phi.shape[0]
        mean = Phi.mean(axis=0)
        qm = float(q.mean())
        U, S, Vt = np.linalg.svd(Phi - mean, full_matrices=False)
        Uq = U.T @ (q - qm)
        s2 = S * S
        best = None
        for a in ridge_alphas(Phi):
            f = s2 / (s2 + a)
            fitted = U @ (f * Uq)
            h = 1.0 / n + (U * U) @ f
            loo = ((q - qm - fitted) / (1.0 - h)) ** 2
            err = float(loo.mean())
            if best is None or err < best[0]:
                best = (err, a)
        self.alpha_ = float(best[1])
        self.coef_ = Vt.T @ (S / (s2 + self.alpha_) * Uq)
        self.intercept_ = qm - float(mean @ self.coef_)
        return self

    def predict(self, Phi: np.ndarray) -> np.ndarray:
        return Phi @ self.coef_ + self.intercept_


@dataclass(frozen=True, repr=False, eq=False)
class QualityMap(_Repr):
    """A fitted map from meta-features to feature quality.

    Attributes
    ----------
    quality : ndarray, shape (n_features,)
        Measured quality of every feature of X (NaN where the feature was not observed).
    predicted : ndarray, shape (n_features,)
        The map's prediction for every feature of X; for observed features it is the smoothed
        quality (section 5.7 of the thesis).
    ranking : ndarray of int
        Features by predicted quality, best first (ties: lower index first).
    observed : ndarray of bool
        The features whose quality was measured and used to fit the map.
    meta_features : ndarray, shape (n_features, k)
    regressor : object
        The fitted regressor from phi(u) to quality (``predict``).
    feature_names : ndarray of str or None
        Column names when X was a DataFrame.
    """

    quality: np.ndarray
    predicted: np.ndarray
    ranking: np.ndarray
    observed: np.ndarray
    meta_features: np.ndarray
    regressor: Any
    basis: Any = field(default=None)
    feature_names: np.ndarray | None = None
    _repr_skip = ("meta_features", "regressor", "basis", "observed", "feature_names")

    def predict(self, meta_features: Any) -> np.ndarray:
        """Predicted quality of features described by ``meta_features`` (shape (n, k))."""
        U = _check_meta(meta_features, None)
        return np.asarray(self.regressor.predict(self.basis(U)), dtype=np.float64).ravel()


def _warn_if_meta_constant(U: np.ndarray, what: str) -> None:
    """Features that share every meta-feature value get one predicted quality: when all do,
    the map ranks nothing (EqualScoresWarning)."""
    if U.shape[0] > 1 and not np.any(np.ptp(U, axis=0)):
        warnings.warn(f"{what}: every feature has the same meta-features, so the map predicts "
                      "one quality for all and ranks them in column order only",
                      EqualScoresWarning, stacklevel=3)


def _measure(quality: Any, X: Any, y: Any, n_features: int) -> np.ndarray:
    if quality is None:
        quality = "mutual_info"
    if isinstance(quality, str):
        from . import filters

        names = ("mutual_info", "anova_f", "chi2", "fisher_ratio", "f_score", "auc", "s2n",
                 "pearson")
        if quality not in names:
            raise ValueError(f"quality: unknown filter {quality!r}; valid options are "
                             f"{', '.join(repr(n) for n in names)} or a callable")
        fn = getattr(filters, quality)
        with caller_checks_equal_scores():  # quality_map / transfer_quality warn once
            scores = np.asarray(fn(X, y).scores, dtype=np.float64)
        # the signed scores count by their strength: a feature as strongly anti-correlated
        # with y is as useful (its raw score ranked it below pure noise)
        if quality in ("pearson", "s2n"):
            scores = np.abs(scores)
        elif quality == "auc":
            scores = np.maximum(scores, 1.0 - scores)
    elif callable(quality):
        with caller_checks_equal_scores():
            out = quality(X, y)
        # a FilterResult (a tuple of scores and p-values) or a WeightResult: its scores
        scores = getattr(out, "scores", getattr(out, "weights", out))
    else:
        raise TypeError("quality: expected a filter name or a callable quality(X, y) -> "
                        f"scores, got {type(quality).__name__}")
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if scores.shape != (n_features,):
        raise ValueError(f"quality: returned {scores.size} scores for {n_features} features")
    if not np.isfinite(scores).all():
        raise ValueError("quality: returned NaN or infinite scores; the map needs a finite "
                         "quality for every observed feature")
    return scores


def _observed_mask(observed: Any, n_features: int) -> np.ndarray:
    if observed is None:
        return np.ones(n_features, dtype=bool)
    arr = np.asarray(observed)
    if arr.dtype == bool:
        if arr.shape != (n_features,):
            raise ValueError(f"observed: a mask must have length {n_features}, got shape "
                             f"{arr.shape}")
        mask = arr.copy()
    else:
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise TypeError("observed: expected a boolean mask or integer feature indices")
        if arr.size and (arr.min() < -n_features or arr.max() >= n_features):
            raise ValueError(f"observed: indices must lie in [0, {n_features})")
        mask = np.zeros(n_features, dtype=bool)
        mask[arr] = True
    if mask.sum() < 2:
        raise ValueError(f"observed: at least 2 observed features are needed to fit the map, "
                         f"got {int(mask.sum())}")
    return mask


def _resolve_meta(meta_features: Any, image_shape: Any, n_features: int) -> np.ndarray:
    if meta_features is None:
        if image_shape is None:
            raise ValueError("meta_features: give the meta-features (shape (n_features, k)) "
                             "or image_shape for pixel positions")
        h, w = _check_image_shape(image_shape)
        if h * w != n_features:
            raise ValueError(f"image_shape: {h} x {w} = {h * w} pixels but X has {n_features} "
                             "features")
        return pixel_positions((h, w))
    return _check_meta(meta_features, n_features)


def _fit_map(U: np.ndarray, q: np.ndarray, mask: np.ndarray, basis: Any, rbf_grid: int,
             sigma: float, regressor: Any):
    rbf_grid = check_int(rbf_grid, "rbf_grid", minimum=1)
    sigma = check_real(sigma, "sigma", positive=True)
    phi = _Basis(basis, U, rbf_grid, sigma)
    if regressor is None:
        measured = int(np.count_nonzero(mask))
        if measured < 2:
            raise ValueError(f"X: the default map chooses its penalty by leave-one-out error "
                             f"over the measured features, which needs at least 2 of them; "
                             f"got {measured} (measure more features, or pass a regressor)")
        reg = _RidgeLOO()
    else:
        if not (hasattr(regressor, "fit") and hasattr(regressor, "predict")):
            raise TypeError("regressor: expected an object with fit and predict (a "
                            "scikit-learn regressor)")
        from sklearn.base import clone

        reg = clone(regressor)
    reg.fit(phi(U[mask]), q[mask])
    predicted = np.asarray(reg.predict(phi(U)), dtype=np.float64).ravel()
    return phi, reg, predicted


def quality_map(X: Any, y: Any, meta_features: Any = None, *, image_shape: Any = None,
                quality: Any = "mutual_info", observed: Any = None, basis: Any = "rbf",
                rbf_grid: int = 7, sigma: float = 3.0, regressor: Any = None) -> QualityMap:
    """Learn to predict a feature's quality from its meta-features (Algorithm 5).

    Each observed feature's quality is measured on (X, y); the features then become the
    training examples of a regression from phi(u) (the expansion of their meta-features u) to
    their quality. The fitted map predicts the quality of every feature, observed or not: for
    unobserved features a prediction, for observed ones a smoothed estimate that borrows
    strength from features with similar meta-features (useful when there are few samples).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (or what ``quality`` needs).
    meta_features : array-like of shape (n_features, k), optional
        One row per feature. Without it, ``image_shape`` must be given and the meta-features
        are the (row, column) pixel positions of a row-major flattened image.
    image_shape : (height, width), optional
    quality : str or callable
        A name of a ``fastfs.filters`` score (default ``"mutual_info"``, the Infogain of the
        thesis; the signed ``"pearson"`` and ``"s2n"`` count by their absolute value, ``"auc"``
        as max(AUC, 1 - AUC)) or ``quality(X_observed, y) -> scores`` with one finite score
        per column (higher is better).
    observed : bool mask or int indices, optional
        The features whose quality is measured (default: all). Only their columns are scored.
    basis : "rbf", "linear" or callable
        phi(u). ``"rbf"`` (default): Gaussians of standard deviation ``sigma`` on a grid of
        ``rbf_grid`` points per meta-feature spanning the range of the meta-features of all
        features (for 28 x 28 pixel positions: 49 Gaussians of sigma 3 px on a 7 x 7 grid, the
        thesis' choice). ``"linear"``: u itself. A callable maps (n, k) to (n, n_basis).
    rbf_grid : int
    sigma : float
    regressor : scikit-learn regressor, optional
        Cloned and fitted on (phi(u), quality). Default: linear regression with intercept and a
        ridge penalty chosen by exact leave-one-out error from a grid (``ridge_alphas``): with
        many observed features it is essentially least squares; with about as many features as
        basis functions, plain least squares would interpolate them and predict wildly.
        ``sklearn.linear_model.LinearRegression()`` gives plain least squares.

    Returns
    -------
    QualityMap
    """
    cx = check_X(X)
    n = cx.values.shape[1]
    U = _resolve_meta(meta_features, image_shape, n)
    mask = _observed_mask(observed, n)
    values = cx.values
    Xo = values[:, mask] if not mask.all() else values
    q = np.full(n, np.nan)
    q[mask] = _measure(quality, Xo, y, int(mask.sum()))
    warn_if_equal(q[mask], "quality_map", "measured quality", "quality")
    _warn_if_meta_constant(U, "quality_map")
    phi, reg, predicted = _fit_map(U, np.nan_to_num(q), mask, basis, rbf_grid, sigma,
                                   regressor)
    ranking = np.argsort(-predicted, kind="stable")
    return QualityMap(quality=q, predicted=predicted, ranking=ranking, observed=mask,
                      meta_features=U, regressor=reg, basis=phi, feature_names=cx.feature_names)


@dataclass(frozen=True, repr=False, eq=False)
class TransferResult(_Repr):
    """Feature quality carried from training tasks to a new task (section 5.5).

    Attributes
    ----------
    task_quality : ndarray, shape (n_tasks, n_features)
        Measured quality of every feature on every training task.
    direct : ndarray, shape (n_features,)
        The average quality over the training tasks.
    indirect : ndarray, shape (n_features,)
        The meta-feature map fitted to the average quality, evaluated at every feature.
    map : QualityMap
        Its ``feature_names`` are the columns' names when a task's X is a DataFrame.
    """

    task_quality: np.ndarray
    direct: np.ndarray
    indirect: np.ndarray
    map: QualityMap
    _repr_skip = ("map", "task_quality")


def transfer_quality(tasks: Sequence[tuple[Any, Any]], meta_features: Any = None, *,
                     image_shape: Any = None, quality: Any = "mutual_info",
                     basis: Any = "rbf", rbf_grid: int = 7, sigma: float = 3.0,
                     regressor: Any = None) -> TransferResult:
    """Inductive transfer of feature quality through meta-features (section 5.5).

    ``tasks`` is a sequence of (X, y) training tasks over the same features. Each feature's
    quality is measured on every task and averaged (the *direct* transfer: a feature good on
    the other tasks is predicted good on the new one); a quality map from the meta-features to
    that average gives the *indirect* transfer, which shares what characterises good features
    rather than which features are good.
    """
    if isinstance(tasks, tuple) and len(tasks) == 2 and not isinstance(tasks[0], (tuple, list)):
        raise TypeError("tasks: expected a sequence of (X, y) pairs, got one pair; wrap it "
                        "in a list")
    tasks = list(tasks)
    if not tasks:
        raise ValueError("tasks: needs at least one (X, y) training task")
    rows = []
    n = None
    names = None  # the first task's column names that come with a DataFrame
    for t, pair in enumerate(tasks):
        try:
            Xt, yt = pair
        except (TypeError, ValueError) as exc:
            raise TypeError(f"tasks[{t}]: expected an (X, y) pair") from exc
        cx = check_X(Xt, name=f"tasks[{t}] X")
        if n is None:
            n = cx.values.shape[1]
        elif cx.values.shape[1] != n:
            raise ValueError(f"tasks[{t}]: has {cx.values.shape[1]} features, the first task "
                             f"{n}; every task must describe the same features")
        rows.append(_measure(quality, cx.values, yt, n))
        if names is None and cx.feature_names is not None:
            names = cx.feature_names
    assert n is not None
    Q = np.vstack(rows)
    direct = Q.mean(axis=0)
    warn_if_equal(direct, "transfer_quality", "mean quality", "quality")
    U = _resolve_meta(meta_features, image_shape, n)
    _warn_if_meta_constant(U, "transfer_quality")
    mask = np.ones(n, dtype=bool)
    phi, reg, predicted = _fit_map(U, direct, mask, basis, rbf_grid, sigma, regressor)
    qm = QualityMap(quality=direct, predicted=predicted,
                    ranking=np.argsort(-predicted, kind="stable"), observed=mask,
                    meta_features=U, regressor=reg, basis=phi, feature_names=names)
    return TransferResult(task_quality=Q, direct=direct, indirect=predicted, map=qm)


# ------------------------------------------------------------------------------------------
# Mufasa


@dataclass(frozen=True, repr=False, eq=False)
class MufasaResult(_Repr):
    """The best feature set Mufasa found and its search trace.

    Attributes
    ----------
    features : list
        F_best, the drawn features of the best step.
    u_best : ndarray, shape (k,)
        The meta-feature point where F_best was drawn.
    score : float
        Its quality.
    trace_u : ndarray, shape (n_steps, k)
        The point u_j of every step.
    trace_quality : ndarray, shape (n_steps,)
        The quality q_j of every step.
    best_step : int
    stopped_early : bool
        True when the callback stopped the search.
    """

    features: list
    u_best: np.ndarray
    score: float
    trace_u: np.ndarray
    trace_quality: np.ndarray
    best_step: int
    stopped_early: bool = False
    _repr_skip = ("features",)


def _linear_svm_quality(y: np.ndarray, seed: int) -> Callable[[list], float]:
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import LinearSVC

    n = y.shape[0]

    def quality(features: list) -> float:
        F = np.column_stack(features)
        cv = StratifiedKFold(n_splits=2, shuffle=True, random_state=seed % (2**32))
        return float(cross_val_score(LinearSVC(dual="auto"), F, y, cv=cv).mean())

    quality.n_samples = n  # type: ignore[attr-defined]
    return quality


def _check_feature(feature: Any, n_samples: int | None, u: np.ndarray) -> Any:
    if n_samples is None:
        if feature is None:
            raise ValueError(f"draw: returned None at u={u.tolist()}; it must return one "
                             "feature")
        return feature
    try:
        col = np.asarray(feature, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"draw: returned {type(feature).__name__} at u={u.tolist()}; with the "
                         "default quality a feature is its values on the samples, a 1-D "
                         f"array of length {n_samples}") from exc
    if col.shape != (n_samples,):
        raise ValueError(f"draw: returned a feature of shape {col.shape} at u={u.tolist()}; "
                         f"expected its values on the {n_samples} samples, shape "
                         f"({n_samples},)")
    if not np.isfinite(col).all():
        raise ValueError(f"draw: returned a feature with NaN or infinite values at "
                         f"u={u.tolist()}")
    return col


def _feature_cost(cost: Any, feature: Any) -> float:
    c = cost(feature) if callable(cost) else cost
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not math.isfinite(c) or c <= 0:
        raise ValueError(f"cost: must be a finite number > 0 for every feature, got {c!r}")
    return float(c)


def _draw_set(draw, u, rng, n_features, budget, cost, n_samples, max_draws):
    features = []
    if n_features is not None:
        for _ in range(n_features):
            features.append(_check_feature(draw(u.copy(), rng), n_samples, u))
        return features
    left = budget
    for _ in range(max_draws):
        f = _check_feature(draw(u.copy(), rng), n_samples, u)
        c = _feature_cost(cost, f)
        if c > left:
            if not features:
                return features, c
            break
        features.append(f)
        left -= c
    return features, None


def mufasa(draw: Callable[[np.ndarray, np.random.Generator], Any], u0: Any, *,
           quality: Callable[[list], float] | None = None, y: Any = None,
           n_features: int | None = None, budget: float | None = None, cost: Any = 1.0,
           n_steps: int = 50, perturbation: Any = None, step_size: Any = None,
           bounds: Any = None, max_draws: int = 100_000, random_state: Any = None,
           callback: Callable[[StepState], Any] | None = None,
           verbose: bool = False) -> MufasaResult:
    """Meta-feature aided search (Mufasa, Algorithm 6 of Navot's thesis).

    Each of ``n_steps`` steps draws a feature set at the current point u of the meta-feature
    space (``n_features`` features, or features until ``budget`` is spent), scores it with
    ``quality``, keeps it when its quality is at least the best so far (the best starts at
    -inf, so the first step is always kept; later ties move the best point forward), and moves
    u to a random perturbation of the best point.

    Parameters
    ----------
    draw : callable draw(u, rng) -> feature
        One random feature whose meta-features are u (``rng`` is a ``np.random.Generator``).
        With the default quality a feature is its values on the samples (1-D, length len(y));
        with a quality of your own it can be anything ``quality`` and ``cost`` understand.
    u0 : array-like of shape (k,)
        The starting point.
    quality : callable quality(features) -> float, optional
        Higher is better. Default: mean accuracy of a linear SVM (scikit-learn's LinearSVC)
        under 2-fold stratified cross-validation on the drawn features against ``y``.
    y : array-like, optional
        Class labels for the default quality.
    n_features, budget : exactly one of them
        Features per set, or the total cost of a set: features are drawn while they fit
        (the first one that does not fit ends the set).
    cost : float or callable cost(feature) -> float
        Cost of one feature (default 1) for ``budget``.
    n_steps : int
        J, the number of steps (default 50).
    perturbation : callable perturbation(u_best, rng) -> u, optional
        Default: u_best plus Gaussian noise of standard deviation ``step_size`` per
        meta-feature (default: a tenth of the width of ``bounds``, else 1), clipped to
        ``bounds``.
    bounds : array-like of shape (k, 2), optional
        Lower and upper limit of each meta-feature for the default perturbation.
    max_draws : int
        Safety limit on the draws of one budgeted set.
    random_state : None, int, Generator or RandomState
        Seeds the Generator passed to ``draw`` and ``perturbation`` (and the default
        quality's folds): same seed, same trace.
    callback : callable, optional
        Called after every step with a ``StepState`` (step, score = q_j, selection = u_j);
        returning True stops and returns the best result so far.
    verbose : bool
        A progress bar when tqdm is importable, else one line per step on stderr.

    Returns
    -------
    MufasaResult
    """
    if not callable(draw):
        raise TypeError("draw: expected a callable draw(u, rng) -> feature")
    if callback is not None and not callable(callback):
        raise TypeError("callback: expected a callable or None")
    check_bool(verbose, "verbose")
    u = _check_meta(u0, None, "u0").ravel()
    k = u.size
    if k == 0:
        raise ValueError("u0: needs at least one meta-feature value")
    n_steps = check_int(n_steps, "n_steps")
    max_draws = check_int(max_draws, "max_draws")
    if (n_features is None) == (budget is None):
        raise ValueError("n_features, budget: give exactly one of them")
    if n_features is not None:
        n_features = check_int(n_features, "n_features")
    else:
        budget = check_real(budget, "budget", positive=True)
        if not (callable(cost) or isinstance(cost, numbers.Real)):
            raise TypeError("cost: expected a number or a callable cost(feature) -> float")
    seed = check_random_state(random_state)
    rng = np.random.default_rng(seed)
    n_samples = None
    if quality is None:
        if y is None:
            raise ValueError("y: the default quality (cross-validated linear SVM) needs the "
                             "class labels y")
        refuse_continuous_labels(y, "mufasa's default quality (a linear SVM)",
                                 hint="; pass a quality of your own for a real target")
        yv = check_y_classes(y, int(np.shape(y)[0]) if np.ndim(y) else 0).codes
        n_samples = yv.shape[0]
        quality = _linear_svm_quality(yv, seed)
    elif not callable(quality):
        raise TypeError("quality: expected a callable quality(features) -> float")
    lo = hi = None
    if bounds is not None:
        B = np.asarray(bounds, dtype=np.float64)
        if B.shape != (k, 2) or not np.isfinite(B).all() or (B[:, 0] > B[:, 1]).any():
            raise ValueError(f"bounds: expected finite (lower, upper) pairs of shape ({k}, 2) "
                             "with lower <= upper")
        lo, hi = B[:, 0], B[:, 1]
        if ((u < lo) | (u > hi)).any():
            raise ValueError(f"u0: {u.tolist()} lies outside bounds")
    if perturbation is None:
        if step_size is None:
            scale = (hi - lo) / 10.0 if lo is not None else np.ones(k)
        else:
            given = np.asarray(step_size, dtype=np.float64)
            if given.ndim > 1 or given.size not in (1, k):
                raise ValueError(f"step_size: expected a number or {k} numbers (one per "
                                 f"meta-feature of u0), got shape {given.shape}")
            scale = np.broadcast_to(given.reshape(-1), (k,)).copy()
            if not np.isfinite(scale).all() or (scale < 0).any():
                raise ValueError("step_size: must be finite and >= 0")

        def perturbation(ub: np.ndarray, g: np.random.Generator) -> np.ndarray:
            v = ub + g.normal(size=k) * scale
            return np.clip(v, lo, hi) if lo is not None else v
    elif not callable(perturbation):
        raise TypeError("perturbation: expected a callable perturbation(u_best, rng) -> u")

    progress = Progress("mufasa", callback, verbose, total=n_steps)
    try:
        return _mufasa_loop(draw, u, k, quality, n_features, budget, cost, n_samples, max_draws,
                            n_steps, perturbation, rng, progress)
    finally:
        progress.close()


def _mufasa_loop(draw, u, k, quality, n_features, budget, cost, n_samples, max_draws, n_steps,
                 perturbation, rng, progress) -> MufasaResult:
    trace_u = np.empty((n_steps, k))
    trace_q = np.empty(n_steps)
    best_q, best_u, best_F, best_step = -np.inf, u.copy(), None, -1
    stopped = False
    done = 0
    for j in range(n_steps):
        if n_features is not None:
            F = _draw_set(draw, u, rng, n_features, None, cost, n_samples, max_draws)
        else:
            F, too_costly = _draw_set(draw, u, rng, None, budget, cost, n_samples, max_draws)
            if too_costly is not None and j == 0:
                raise ValueError(f"budget: {budget} is below the cost {too_costly} of the "
                                 f"feature drawn at u0={u.tolist()}; no feature fits")
        q = float(quality(F)) if F else -np.inf
        if math.isnan(q):
            raise ValueError(f"quality: returned NaN at step {j}")
        trace_u[j] = u
        trace_q[j] = q
        done = j + 1
        if q >= best_q and F:
            best_q, best_u, best_F, best_step = q, u.copy(), F, j
        if progress.active and progress.hook(0, j, q, u.copy()):
            stopped = j + 1 < n_steps
            break
        u = np.asarray(perturbation(best_u.copy(), rng), dtype=np.float64).ravel()
        if u.shape != (k,) or not np.isfinite(u).all():
            raise ValueError(f"perturbation: must return {k} finite meta-feature values, got "
                             f"{u!r}")
    if done and best_q == -np.inf and not stopped:
        raise ValueError(f"quality: every one of the {done} feature sets drawn scored -inf, so "
                         "the search has nothing to choose (check the quality function)")
    return MufasaResult(features=best_F if best_F is not None else [], u_best=best_u,
                        score=best_q, trace_u=trace_u[:done], trace_quality=trace_q[:done],
                        best_step=best_step, stopped_early=stopped)
