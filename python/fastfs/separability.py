"""Class separability measures (Theodoridis and Koutroumbas, ch. 5): scatter matrices and the
criteria J1, J2, J3,
Fisher's discriminant ratio, and the divergence and Bhattacharyya distance between Gaussian
class models. The matrices are d x d for d features, small enough that NumPy / LAPACK does the
work; the one pass over the samples is a handful of BLAS products.

Every class is modelled by its mean mu_i and covariance S_i with divisor n_i (the maximum
likelihood estimate), and P_i = n_i / n. A matrix that has to be inverted (S_w for J2 and J3,
every S_i for the divergence and Bhattacharyya) and is singular gets a ``ValueError`` naming it,
never an inf or NaN: pass ``ridge > 0`` (adds ridge * I to each covariance) or use fewer
features. Singular means numerically rank-deficient (np.linalg.matrix_rank's tolerance) once
every feature is scaled by a power of two to a variance near 1, so the units of the features
do not decide it (J2, J3, the divergence and the Bhattacharyya distance do not depend on them).

Ctrl-C returns at once, even inside an eigendecomposition of thousands of features: the call
in flight finishes in the background and its result is dropped.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ._progress import interruptible
from ._results import ScatterMatrices
from ._scale import exact_rescale, exact_rescale_columns, scale_parameter, unscale
from ._validation import (
    CheckedLabels,
    CheckedX,
    check_bool,
    check_real,
    check_X,
    check_y_classes,
    guard_square_matrix,
    label_repr,
    refuse_continuous_labels,
)
from .filters import fisher_ratio


def _prepare(X: Any, y: Any, what: str, per_class: int | None = 1, *, per_column: bool = False
             ) -> tuple[CheckedX, CheckedLabels, np.ndarray, Any]:
    """Validated X and labels, X in float64 multiplied by 2**-e (exact; e = 0 unless its
    magnitude is beyond about 1e60 or below 1e-60, where products of X would overflow or vanish:
    see fastfs._scale), and e; ``per_class`` d x d matrices are kept for every class
    (covariances; their inverses for the divergence) besides a few shared ones. With
    ``per_column`` (the unit-free measures) e is an array, one power of two per column: one
    factor for all of X left the other columns' products to underflow when one column was
    1e100 times them (an invertible S_w refused as singular)."""
    # Determinants and inverses of near-singular matrices need float64 whatever X was (one
    # conversion, in the validation's copy)
    cx = check_X(X, float64=True)
    refuse_continuous_labels(y, f"separability.{what}", hint="; the separability measures "
                             "compare classes")
    labels = check_y_classes(y, cx.values.shape[0])
    d = cx.values.shape[1]
    if per_class is not None:  # None: no d x d matrix is made
        guard_square_matrix(d, 8, f"fastfs.separability.{what}",
                            "use fewer features or raise fastfs.config.max_memory",
                            count=per_class * labels.classes.shape[0] + 4)
    values = cx.values
    if per_column:
        values, e = exact_rescale_columns(values)
    else:
        values, e = exact_rescale(values)
    return cx, labels, values, e


def _column_ridge(ridge: float, e: Any) -> Any:
    """The ridge (units of X squared) for X with column j multiplied by 2**-e_j: one value per
    column (a scalar when no column was rescaled)."""
    if not np.any(e):
        return ridge
    return np.array([scale_parameter(ridge, 2, int(ej), "ridge") for ej in e])


def _check_ridge(ridge: Any) -> float:
    ridge = check_real(ridge, "ridge")
    if ridge < 0:
        raise ValueError(f"ridge: must be >= 0, got {ridge}")
    return ridge


def _class_covariances(X: np.ndarray, labels: CheckedLabels):
    """Counts, means (k, d) and covariances S_i (k, d, d), divisor n_i, classes sorted."""
    k, d = labels.classes.shape[0], X.shape[1]
    counts = np.bincount(labels.codes, minlength=k).astype(np.float64)
    means = np.empty((k, d))
    covs = np.empty((k, d, d))
    for c in range(k):
        Xc = X[labels.codes == c]
        means[c] = Xc.mean(axis=0)
        centred = Xc - means[c]
        covs[c] = centred.T @ centred / counts[c]
    return counts, means, covs


# Condition number beyond which the inverse of a covariance formed as a product keeps fewer
# than about 6 correct digits (its smallest eigenvalues are known to about cond * eps).
_ILL_CONDITIONED = 1e10


def _eig_nonsingular(S: np.ndarray, what: str, caller: str) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues and vectors of a symmetric positive semi-definite S, refusing a singular one.

    Singular means numerically rank-deficient, with np.linalg.matrix_rank's tolerance
    (largest eigenvalue * d * eps); the callers balance the features first (_balance). A
    condition number above 1e10 warns (RuntimeWarning): nearly collinear features (two
    columns equal to 1e-7) moved J3 by 1% with no sign of it.
    """
    w, V = np.linalg.eigh(S)
    d = S.shape[0]
    tol = max(w[-1], 0.0) * d * np.finfo(np.float64).eps
    rank = int(np.count_nonzero(w > tol))
    if rank < d:
        raise ValueError(
            f"X: {what} is singular (rank {rank} of {d} features); add a ridge (ridge > 0 adds "
            "ridge * I to each covariance) or use fewer features"
        )
    if w[-1] > _ILL_CONDITIONED * w[0]:
        warnings.warn(
            f"{caller}: {what} is ill-conditioned (condition number {w[-1] / w[0]:.1e} once "
            "the features are balanced): nearly collinear features, and the leading digits of "
            "the result may be wrong; add a ridge or drop near-duplicate features",
            RuntimeWarning, stacklevel=4)
    return w, V


def _balance(variances: np.ndarray) -> np.ndarray:
    """Powers of two d_j that bring each variance (a diagonal entry of S_w or of the pooled class
    covariance) into [1/4, 1); 1 where it is 0. J2, J3, the divergence and the Bhattacharyya
    distance are unchanged when feature j is scaled by d_j (the ridge scaled with it), and the
    scaling is exact, but the rank test and the eigenvalues are then taken on columns of
    comparable size: a column in units 1e8 times the others' made an invertible S_w singular
    under matrix_rank's tolerance, and one 1e-7 times moved J2 in its third digit."""
    e = np.zeros(variances.shape, dtype=np.int64)
    ok = np.isfinite(variances) & (variances > 0)
    e[ok] = np.frexp(np.sqrt(variances[ok]))[1]
    return np.ldexp(1.0, -e)


def _balanced(S: np.ndarray, d: np.ndarray) -> np.ndarray:
    """diag(d) S diag(d) for a matrix or a stack of them."""
    return S * d[:, None] * d[None, :]


def _inverse(w: np.ndarray, V: np.ndarray) -> np.ndarray:
    return (V / w) @ V.T


@interruptible
def scatter_matrices(X: Any, y: Any) -> ScatterMatrices:
    """Within-class, between-class and mixture scatter matrices (Theodoridis-Koutroumbas ch. 5).

    S_w = sum_i P_i S_i, S_b = sum_i P_i (mu_i - mu_0)(mu_i - mu_0)^T with mu_0 = sum_i P_i mu_i
    (the overall mean), S_m = S_w + S_b (the covariance of all samples, divisor n).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels, at least 2 classes.

    Returns
    -------
    ScatterMatrices
        ``within``, ``between``, ``mixture``, ``priors``, ``means``, ``classes``.
    """
    s, e = _scaled_scatter(X, y, "scatter_matrices")
    if e == 0:
        return s
    return ScatterMatrices(*(unscale(a, 2, e, f"the {name} scatter") for name, a in
                             (("within", s.within), ("between", s.between),
                              ("mixture", s.mixture))),
                           s.priors, unscale(s.means, 1, e, "the class means"), s.classes,
                           s.feature_names)


def _scaled_scatter(X: Any, y: Any, what: str) -> tuple[ScatterMatrices, int]:
    """The scatter matrices of X * 2**-e (see _prepare) and e: ratios of them are those of X."""
    cx, labels, Xv, e = _prepare(X, y, what)
    return _scatter(cx, labels, Xv), e


def _scatter(cx: CheckedX, labels: CheckedLabels, Xv: np.ndarray) -> ScatterMatrices:
    counts, means, covs = _class_covariances(Xv, labels)
    priors = counts / counts.sum()
    within = np.tensordot(priors, covs, axes=1)
    offsets = means - priors @ means
    between = (offsets.T * priors) @ offsets
    return ScatterMatrices(within, between, within + between, priors, means, labels.classes,
                           cx.feature_names)


def j1(X: Any, y: Any) -> float:
    """J1 = tr(S_m) / tr(S_w): total variance over the average within-class variance (>= 1).

    Raises ``ValueError`` when tr(S_w) = 0 (every feature constant within every class).
    """
    # Only the traces: per-column sums of squares, O(n_features) memory (no d x d matrix).
    _, labels, Xv, _ = _prepare(X, y, "j1", None)
    m = Xv.shape[0]
    tw = tb = 0.0
    total_mean = Xv.mean(axis=0)
    for c in range(labels.classes.shape[0]):
        Xc = Xv[labels.codes == c]
        mean = Xc.mean(axis=0)
        tw += float(((Xc - mean) ** 2).sum()) / m  # prior * tr(S_c) = (n_c / m) * ss_c / n_c
        tb += Xc.shape[0] / m * float(((mean - total_mean) ** 2).sum())
    if tw <= 0:
        raise ValueError("X: the within-class scatter S_w is zero (every feature is constant "
                         "within every class), so J1 = tr(S_m) / tr(S_w) is undefined")
    return (tw + tb) / tw


def _within_and_mixture(X: Any, y: Any, ridge: Any, what: str):
    """S_w + ridge I, S_m = that + S_b, and the eigenpairs of the former (checked non-singular)."""
    ridge = _check_ridge(ridge)
    cx, labels, Xv, e = _prepare(X, y, what, per_column=True)
    m, n = Xv.shape
    k = labels.classes.shape[0]
    if ridge == 0 and n > m - k:
        # S_w sums m - k independent centred samples at most: singular whatever the values,
        # so the O(d^3) work of finding it is not done (prostate_ge, 5966 genes: over a minute)
        raise ValueError(
            f"X: the within-class scatter S_w is singular (rank at most {m - k} = {m} samples - "
            f"{k} classes, of {n} features); add a ridge (ridge > 0 adds ridge * I to each "
            "covariance) or use fewer features")
    s = _scatter(cx, labels, Xv)
    # ridge is in units of X squared, as S_w is (per rescaled column); every feature is then
    # balanced (_balance).
    r = _column_ridge(ridge, e)
    d = _balance(np.diag(s.within) + r)
    within = _balanced(s.within, d) + np.diag(r * d * d)
    w, V = _eig_nonsingular(within, "the within-class scatter S_w", what)
    return within, within + _balanced(s.between, d), w, V


@interruptible
def j2(X: Any, y: Any, *, ridge: float = 0.0) -> float:
    """J2 = det(S_m) / det(S_w) = det(S_w^-1 S_m) (>= 1), from log-determinants.

    Parameters
    ----------
    X, y : data and class labels.
    ridge : float >= 0
        Added to the diagonal of S_w (and so of S_m = S_w + S_b) before the determinants.

    Raises
    ------
    ValueError
        When S_w (+ ridge I) is singular.
    """
    _, mixture, w, _ = _within_and_mixture(X, y, ridge, "j2")
    _, logdet_m = np.linalg.slogdet(mixture)
    log_j2 = float(logdet_m - np.sum(np.log(w)))
    if log_j2 > _LOG_MAX:
        warnings.warn(f"j2: J2 = exp({log_j2:.6g}) is beyond float64; returning inf (compare "
                      "subsets by ln J2, or use j3)", RuntimeWarning, stacklevel=2)
        return math.inf
    return math.exp(log_j2)


_LOG_MAX = math.log(np.finfo(np.float64).max)


@interruptible
def j3(X: Any, y: Any, *, ridge: float = 0.0) -> float:
    """J3 = tr(S_w^-1 S_m) (>= n_features).

    Parameters
    ----------
    X, y : data and class labels.
    ridge : float >= 0
        Added to the diagonal of S_w (and so of S_m) first.

    Raises
    ------
    ValueError
        When S_w (+ ridge I) is singular.
    """
    _, mixture, w, V = _within_and_mixture(X, y, ridge, "j3")
    # tr(S_w^-1 S_m) in S_w's eigenbasis: sum_i v_i^T S_m v_i / w_i.
    return float(np.sum(np.einsum("ji,jk,ki->i", V, mixture, V) / w))


def _gaussians(X: Any, y: Any, what: str, ridge: float):
    """Priors, means, covariances (+ ridge I), their eigendecompositions, classes."""
    cx, labels, Xv, e = _prepare(X, y, what, per_class=2, per_column=True)
    if _check_ridge(ridge) == 0:
        sizes = np.bincount(labels.codes, minlength=labels.classes.shape[0])
        c = int(np.argmin(sizes))
        if Xv.shape[1] > sizes[c] - 1:
            # a class covariance has rank at most its samples - 1: singular whatever the
            # values (see _within_and_mixture)
            raise ValueError(
                f"X: the covariance of class {label_repr(labels.classes[c])} ({int(sizes[c])} "
                f"samples) is singular (rank at most {int(sizes[c]) - 1} of {Xv.shape[1]} "
                "features); add a ridge (ridge > 0 adds ridge * I to each covariance) or use "
                "fewer features")
    counts, means, covs = _class_covariances(Xv, labels)
    # Divergence and Bhattacharyya are unit-free; the ridge has the units of the covariances.
    # Every feature is balanced by the pooled class variance (_balance).
    r = _column_ridge(ridge, e)
    priors = counts / counts.sum()
    d = _balance(np.einsum("c,cjj->j", priors, covs) + r)
    covs = _balanced(covs, d) + np.diag(r * d * d)
    means = means * d
    eig = [
        _eig_nonsingular(covs[c], f"the covariance of class {label_repr(labels.classes[c])} "
                                  f"({int(counts[c])} samples)", what)
        for c in range(covs.shape[0])
    ]
    return priors, means, covs, eig


@interruptible
def divergence(X: Any, y: Any, *, ridge: float = 0.0, pairwise: bool = False):
    """Divergence between Gaussian class models and its prior-weighted average.

    For classes i and j modelled as N(mu_i, S_i), the divergence is the symmetric
    Kullback-Leibler divergence d_ij = KL(i || j) + KL(j || i)
    = 1/2 tr(S_i^-1 S_j + S_j^-1 S_i - 2 I) + 1/2 (mu_i - mu_j)^T (S_i^-1 + S_j^-1) (mu_i - mu_j),
    and the average divergence is d = sum_i sum_j P_i P_j d_ij (for two classes 2 P_1 P_2 d_12;
    ``pairwise=True`` gives d_12 itself).

    Parameters
    ----------
    X, y : data and class labels (at least 2 classes).
    ridge : float >= 0
        Added to the diagonal of every class covariance.
    pairwise : bool
        Return the (n_classes, n_classes) matrix of d_ij (classes in sorted order) instead of
        the average.

    Raises
    ------
    ValueError
        When a class covariance is singular (for example a class with no more samples than
        features): add a ridge or use fewer features.
    """
    pairwise = check_bool(pairwise, "pairwise")
    priors, means, covs, eig = _gaussians(X, y, "divergence", _check_ridge(ridge))
    k, d = means.shape
    inverses = [_inverse(w, V) for w, V in eig]
    D = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            dm = means[a] - means[b]
            traces = np.sum(inverses[a] * covs[b]) + np.sum(inverses[b] * covs[a])
            D[a, b] = D[b, a] = 0.5 * traces - d + 0.5 * dm @ (inverses[a] + inverses[b]) @ dm
    return D if pairwise else float(priors @ D @ priors)


@interruptible
def bhattacharyya(X: Any, y: Any, *, ridge: float = 0.0, pairwise: bool = False):
    """Bhattacharyya distance between Gaussian class models (Theodoridis and Koutroumbas, ch. 5).

    B_ij = 1/8 (mu_i - mu_j)^T S^-1 (mu_i - mu_j) + 1/2 ln(det S / sqrt(det S_i det S_j)) with
    S = (S_i + S_j) / 2. For two classes the result is B_12; for more, the prior-weighted
    average over pairs of distinct classes, sum_{i != j} P_i P_j B_ij / sum_{i != j} P_i P_j
    (normalised so that it stays a distance between two classes, unlike the divergence's
    average).

    Parameters
    ----------
    X, y : data and class labels (at least 2 classes).
    ridge : float >= 0
        Added to the diagonal of every class covariance.
    pairwise : bool
        Return the (n_classes, n_classes) matrix of B_ij instead.

    Raises
    ------
    ValueError
        When a class covariance is singular: add a ridge or use fewer features.
    """
    pairwise = check_bool(pairwise, "pairwise")
    priors, means, covs, eig = _gaussians(X, y, "bhattacharyya", _check_ridge(ridge))
    k = means.shape[0]
    logdets = [np.sum(np.log(w)) for w, _ in eig]
    B = np.zeros((k, k))
    for a in range(k):
        for b in range(a + 1, k):
            dm = means[a] - means[b]
            w, V = np.linalg.eigh(0.5 * (covs[a] + covs[b]))
            mahalanobis = np.sum((V.T @ dm) ** 2 / w)
            B[a, b] = B[b, a] = (mahalanobis / 8
                                 + 0.5 * (np.sum(np.log(w)) - 0.5 * (logdets[a] + logdets[b])))
    if pairwise:
        return B
    weights = np.outer(priors, priors)
    np.fill_diagonal(weights, 0.0)
    return float(np.sum(weights * B) / np.sum(weights))


__all__ = [
    "bhattacharyya",
    "divergence",
    "fisher_ratio",
    "j1",
    "j2",
    "j3",
    "scatter_matrices",
]
