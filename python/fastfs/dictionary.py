"""Feature learning by dictionaries (Shalev-Shwartz and Ben-David, section 25.3) as
scikit-learn transformers.

A dictionary is k atoms mu_1..mu_k (rows of ``components_``, shape (k, n_features)); an
instance x is encoded as a vector v of k coefficients and decoded as phi(v) = sum_i v_i mu_i
(``inverse_transform``):

* ``KMeansEncoder``: the atoms are k-means centroids and psi(x) is the indicator (one-hot) of
  the nearest one.
* ``SparseCoding``: psi(x) against a given dictionary, either by orthogonal matching pursuit
  with at most s nonzero coefficients (``algorithm="omp"``), a greedy approximation of
  argmin ||x - phi(v)||^2 s.t. ||v||_0 <= s, or by the LASSO
  argmin ||x - phi(v)||^2 + lambda ||v||_1 (``algorithm="lasso"``, ``alpha`` = lambda).
* ``DictionaryLearner``: learns the atoms by alternating the two steps: code every instance
  against the current dictionary, then replace the dictionary by the least-squares solution
  of X ~ V D for the fixed codes V (atoms rescaled to unit norm; an atom no instance uses is
  moved to the instance reconstructed worst).

OMP coding runs in the C++ core: one Gram matrix D D^T and one matrix product X D^T (BLAS), then
every instance is coded in parallel with a Cholesky factor grown one atom per step (the same
rule as scikit-learn's ``orthogonal_mp_gram``, whose Python loop over instances is the slow
part; ``bench/compare/compare_dictionary.py`` measures both). Like scikit-learn's, it expects atoms of
unit norm (the atom of largest |<atom, residual>| enters). LASSO coding is scikit-learn's
``sparse_encode`` (coordinate descent). Needs scikit-learn.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

import fastfs._core as _core
from ._progress import Progress
from ._scale import exact_rescale, unscale
from ._validation import (
    as_array,
    blas_threads,
    check_random_state,
    check_X,
    object_reals,
    require_finite,
    require_real_dtype,
    resolve_n_jobs,
)

try:
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.cluster import KMeans
    from sklearn.decomposition import sparse_encode
    from sklearn.utils.validation import check_is_fitted
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("fastfs.dictionary needs scikit-learn: pip install scikit-learn") from exc
try:
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - scikit-learn < 1.6
    def validate_data(estimator, X, **kwargs):
        return estimator._validate_data(X, **kwargs)

__all__ = ["DictionaryLearner", "KMeansEncoder", "SparseCoding", "sparse_code"]

ALGORITHMS = ("omp", "lasso")
_PATIENCE = 10  # dictionary learning: iterations without improvement before it stops


def _check_algorithm(algorithm: Any) -> str:
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: unknown value {algorithm!r}; valid options are "
                         f"{', '.join(repr(a) for a in ALGORITHMS)}")
    return algorithm


def _check_positive_int(value: Any, name: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name}: must be >= 1, got {value}")
    return int(value)


def sparse_code(X: Any, dictionary: Any, *, algorithm: str = "omp",
                n_nonzero_coefs: int | None = None, alpha: float = 1.0,
                max_iter: int = 1000, n_jobs: int | None = None) -> np.ndarray:
    """Codes (n_samples, k) of the rows of X against ``dictionary`` (k, n_features).

    ``"omp"``: orthogonal matching pursuit, at most ``n_nonzero_coefs`` nonzero coefficients
    (default: a tenth of n_features, at least 1, at most k). ``"lasso"``: the minimiser of
    ||x - v D||^2 + alpha ||v||_1 (coordinate descent; scikit-learn's ``sparse_encode``
    scales its penalty differently: its ``alpha`` is half of this one). ``n_jobs`` counts
    threads, as everywhere in fastfs (the LASSO runs in this process, never in scikit-learn's
    worker processes). The products X D^T and D D^T come from NumPy's BLAS, whose sums depend
    on its thread count: codes computed with different ``n_jobs`` can differ by rounding
    (about 1e-15 relative).
    """
    _check_algorithm(algorithm)
    X = check_X(X, min_samples=1).values
    D = as_array(dictionary, "dictionary")
    if D.dtype == object:
        D = object_reals(D, "dictionary")
    require_real_dtype(D.dtype, "dictionary")
    if D.ndim != 2 or D.shape[1] != X.shape[1] or D.shape[0] == 0:
        raise ValueError(f"dictionary: expected shape (n_components, {X.shape[1]}) with at "
                         f"least one component, got {D.shape}")
    require_finite(D, "dictionary")
    if algorithm == "omp":
        s = _check_positive_int(n_nonzero_coefs, "n_nonzero_coefs", allow_none=True)
        if s is None:
            s = max(1, X.shape[1] // 10)
        s = min(s, D.shape[0], X.shape[1])
        threads = resolve_n_jobs(n_jobs)
        # X and D of extreme magnitude are multiplied by powers of two (exact) so the Gram
        # products neither overflow nor vanish (a dictionary of 1e-170 or 1e160 gave all-zero
        # codes); x = v D makes the codes scale by 2**(a - d).
        Xd, a = exact_rescale(np.ascontiguousarray(X, dtype=np.float64))
        Dd, d = exact_rescale(np.ascontiguousarray(D, dtype=np.float64))
        with blas_threads(threads):
            G = np.ascontiguousarray(Dd @ Dd.T)
            XY = np.ascontiguousarray(Xd @ Dd.T)
        codes = _core.batch_omp_gram(G, XY, s, threads)
        if a == d:
            return codes
        try:
            return unscale(codes, 1, a - d, "the codes")
        except ValueError:
            raise ValueError(
                f"dictionary: the codes of X (max |x| ~ 2**{a}) against atoms of max |d| ~ "
                f"2**{d} do not fit in float64; bring the atoms to unit norm") from None
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha > 0 \
            or not np.isfinite(alpha):
        raise ValueError(f"alpha: must be a finite number > 0, got {alpha!r}")
    # one dtype for both (scikit-learn's Cython solver takes a single one): float32 only
    # when both are
    dtype = np.float32 if X.dtype == np.float32 and D.dtype == np.float32 else np.float64
    X = np.ascontiguousarray(X, dtype=dtype)
    D = np.ascontiguousarray(D, dtype=dtype)
    # n_jobs counts threads, as everywhere in fastfs: scikit-learn's would start worker
    # processes (5 s of start-up for a 200 x 10 problem); one process, its BLAS bounded
    threads = resolve_n_jobs(n_jobs)
    with blas_threads(threads):
        return sparse_encode(X, D, algorithm="lasso_cd", alpha=float(alpha) / 2.0,
                             max_iter=max_iter, n_jobs=1)


def _sk_random_state(random_state: Any) -> np.random.RandomState:
    """A RandomState for scikit-learn's KMeans and the alternation, from the package's
    random_state rules (None, an int in [0, 2**64), a Generator or a RandomState; others are a
    ValueError naming random_state). An int below 2**32 and a RandomState keep scikit-learn's
    own streams, so the results equal KMeans(random_state=...)'s."""
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) \
            and 0 <= int(random_state) < 2**32:
        return np.random.RandomState(int(random_state))
    if random_state is None:
        return np.random.RandomState()
    seed = check_random_state(random_state)
    return np.random.RandomState(np.random.SeedSequence(seed).generate_state(1)[0])


class _Coder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared transform / inverse_transform against ``components_``."""

    def transform(self, X):
        check_is_fitted(self, "components_")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return self._encode(X).astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """phi(v) = sum_i v_i mu_i for every row v of codes."""
        check_is_fitted(self, "components_")
        V = np.asarray(X, dtype=self.components_.dtype)
        if V.ndim != 2 or V.shape[1] != self.components_.shape[0]:
            raise ValueError(f"X: expected codes of shape (n_samples, "
                             f"{self.components_.shape[0]}), got {V.shape}")
        return V @ self.components_

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class KMeansEncoder(_Coder):
    """One-hot encoding of the nearest of ``n_clusters`` k-means centroids.

    Fits scikit-learn's ``KMeans``; ``components_`` are its centroids, ``transform`` gives the
    indicator vector of the closest centroid and ``inverse_transform`` maps it back to that
    centroid.
    """

    def __init__(self, n_clusters: int = 8, *, n_init: Any = "auto", max_iter: int = 300,
                 tol: float = 1e-4, random_state: Any = None) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        _check_positive_int(self.n_clusters, "n_clusters")
        self.kmeans_ = KMeans(n_clusters=self.n_clusters, n_init=self.n_init,
                              max_iter=self.max_iter, tol=self.tol,
                              random_state=_sk_random_state(self.random_state)).fit(X)
        self.components_ = self.kmeans_.cluster_centers_.astype(X.dtype, copy=False)
        self.n_iter_ = self.kmeans_.n_iter_
        return self

    def _encode(self, X):
        # in the dtype KMeans was fitted in (its predict refuses the other float type)
        labels = self.kmeans_.predict(X.astype(self.kmeans_.cluster_centers_.dtype, copy=False))
        out = np.zeros((X.shape[0], self.components_.shape[0]), dtype=np.float64)
        out[np.arange(X.shape[0]), labels] = 1.0
        return out


class SparseCoding(_Coder):
    """Sparse codes against a fixed ``dictionary`` (shape (k, n_features)): by OMP with at most
    ``n_nonzero_coefs`` atoms, or by the LASSO with penalty ``alpha`` (see ``sparse_code``).

    ``fit`` only checks X against the dictionary and stores it as ``components_``. The
    dictionary is required (as for scikit-learn's ``SparseCoder``), so scikit-learn's generic
    estimator checks, which fit data of several widths, do not apply to this class.
    """

    def __init__(self, dictionary: Any = None, *, algorithm: str = "omp",
                 n_nonzero_coefs: int | None = None, alpha: float = 1.0,
                 lasso_max_iter: int = 1000, n_jobs: int | None = None) -> None:
        self.dictionary = dictionary
        self.algorithm = algorithm
        self.n_nonzero_coefs = n_nonzero_coefs
        self.alpha = alpha
        self.lasso_max_iter = lasso_max_iter
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        _check_algorithm(self.algorithm)
        resolve_n_jobs(self.n_jobs)  # refused at fit, not first at transform
        if self.dictionary is None:
            raise ValueError("dictionary: required, an array of shape (n_components, "
                             "n_features)")
        D = np.asarray(self.dictionary, dtype=X.dtype)
        if D.ndim != 2 or D.shape[1] != X.shape[1]:
            raise ValueError(f"dictionary: expected shape (n_components, {X.shape[1]}) for X "
                             f"with {X.shape[1]} features, got {D.shape}")
        if not np.isfinite(D).all():
            raise ValueError("dictionary: contains NaN or infinity")
        self.components_ = D.copy()
        return self

    def _encode(self, X):
        return sparse_code(X, self.components_, algorithm=self.algorithm,
                           n_nonzero_coefs=self.n_nonzero_coefs, alpha=self.alpha,
                           max_iter=self.lasso_max_iter, n_jobs=self.n_jobs)


class DictionaryLearner(_Coder):
    """Learn ``n_components`` atoms by alternating sparse coding and least-squares updates.

    Starts from ``n_components`` random instances (unit norm); each iteration codes X against
    the dictionary (``algorithm``, ``n_nonzero_coefs``, ``alpha`` as in ``SparseCoding``), then
    solves min_D ||X - V D||_F^2 for the codes V and rescales every atom to unit norm; atoms no
    instance used, or duplicating another atom (|cos| > 0.99), move to the residuals of the
    instances reconstructed worst. Coding with OMP makes the error non-monotone, so the
    dictionary with the smallest reconstruction error seen is kept; the loop stops after
    ``max_iter`` iterations or 10 iterations without a relative improvement of ``tol``. The
    alternation finds local minima that depend on the starting atoms: it is run from
    ``n_init`` random starts and the best result is kept. ``error_`` holds the mean squared
    reconstruction error (summed over features) of every iteration of the kept run,
    ``n_iter_`` its number of iterations.

    ``callback`` (optional) is called after every iteration with a :class:`~fastfs.StepState`:
    ``restart`` the start (0 to n_init - 1), ``step`` the 1-based iteration, ``score`` the
    mean squared reconstruction error of the codes against the dictionary of that iteration
    and ``selection`` a read-only copy of that dictionary. Returning True stops the fit: the
    best dictionary seen so far is kept and ``stopped_early_`` is True. ``verbose=True`` shows
    a progress bar (tqdm) or one line per iteration on stderr.
    """

    def __init__(self, n_components: int = 8, *, algorithm: str = "omp",
                 n_nonzero_coefs: int | None = None, alpha: float = 1.0, max_iter: int = 100,
                 tol: float = 1e-6, n_init: int = 3, random_state: Any = None,
                 n_jobs: int | None = None, callback: Any = None,
                 verbose: bool = False) -> None:
        self.n_components = n_components
        self.n_init = n_init
        self.algorithm = algorithm
        self.n_nonzero_coefs = n_nonzero_coefs
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.verbose = verbose

    def _code(self, X, D, inner=False):
        if not inner:
            return sparse_code(X, D, algorithm=self.algorithm,
                               n_nonzero_coefs=self.n_nonzero_coefs, alpha=self.alpha,
                               n_jobs=self.n_jobs)
        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            # The codes of an intermediate dictionary are a step of the alternation, not a
            # result: an unconverged LASSO there is refined by the next iterations.
            warnings.simplefilter("ignore", ConvergenceWarning)
            return sparse_code(X, D, algorithm=self.algorithm,
                               n_nonzero_coefs=self.n_nonzero_coefs, alpha=self.alpha,
                               n_jobs=self.n_jobs)

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        _check_algorithm(self.algorithm)
        k = _check_positive_int(self.n_components, "n_components")
        max_iter = _check_positive_int(self.max_iter, "max_iter")
        n_init = _check_positive_int(self.n_init, "n_init")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) \
                or not 0.0 <= self.tol < 1.0:
            raise ValueError(f"tol: expected a number in [0, 1) (the relative improvement "
                             f"that counts), got {self.tol!r}")
        rng = _sk_random_state(self.random_state)
        Xd = X.astype(np.float64)
        best = None
        progress = Progress("DictionaryLearner", self.callback, self.verbose,
                            total=n_init * max_iter)
        stopped = False
        try:
            # n_jobs bounds the alternation's own products (codes times atoms, least squares)
            with blas_threads(resolve_n_jobs(self.n_jobs)):
                for start in range(n_init):
                    *run, stopped = self._run(Xd, k, max_iter, rng, progress, start)
                    if best is None or run[0] < best[0]:
                        best = run
                    if stopped:
                        break
        finally:
            progress.close()
        _, D, errors = best
        self.components_ = D.astype(X.dtype, copy=False)
        self.error_ = np.array(errors)
        self.n_iter_ = len(errors)
        self.stopped_early_ = stopped
        return self

    def _run(self, Xd, k, max_iter, rng, progress, start):
        n = Xd.shape[0]
        D = Xd[rng.choice(n, size=k, replace=k > n)].copy()
        if k > n:
            D += 0.01 * rng.standard_normal(D.shape) * (np.abs(Xd).max() + 1.0)
        D = self._normalise(D, rng)
        errors = []
        best_err, best_D, since_best = np.inf, D, 0
        for it in range(max_iter):
            V = self._code(Xd, D, inner=True)
            R = Xd - V @ D
            err = float(np.einsum("ij,ij->", R, R)) / n
            errors.append(err)
            since_best = 0 if err < best_err * (1.0 - self.tol) else since_best + 1
            if err < best_err:
                best_err, best_D = err, D
            if progress.active and progress.hook(start, it + 1, err, D.copy()):
                return best_err, best_D, errors, True
            if since_best >= _PATIENCE or err == 0.0:
                break
            D = np.linalg.lstsq(V, Xd, rcond=None)[0]
            D = self._normalise(D, rng)
            self._revive(D, V, Xd - V @ D)
        return best_err, best_D, errors, False

    @staticmethod
    def _revive(D, V, R):
        """Atoms no instance used, or (nearly) equal to an earlier atom, move to the residuals
        of the instances reconstructed worst (largest first)."""
        dead = ~np.any(V != 0, axis=0)
        C = np.abs(np.triu(D @ D.T, k=1))
        dead |= (C > 0.99).any(axis=0)
        if not dead.any():
            return
        norms = np.einsum("ij,ij->i", R, R)
        worst = np.argsort(-norms, kind="stable")
        for atom, i in zip(np.flatnonzero(dead), worst):
            if norms[i] > 0:
                D[atom] = R[i] / np.sqrt(norms[i])

    @staticmethod
    def _normalise(D, rng):
        norms = np.linalg.norm(D, axis=1)
        zero = norms == 0
        if zero.any():
            D[zero] = rng.standard_normal((int(zero.sum()), D.shape[1]))
            norms[zero] = np.linalg.norm(D[zero], axis=1)
        return D / norms[:, None]

    def _encode(self, X):
        return self._code(X.astype(np.float64), self.components_.astype(np.float64))
