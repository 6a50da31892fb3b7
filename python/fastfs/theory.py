"""How many features: the two-Gaussian analysis and generalisation bounds as calculators.

Two spherical Gaussians (Navot's thesis, chapter 2). Class +1 is N(mu, I), class -1 is
N(-mu, I), equal priors. The maximum-likelihood estimate of mu from m labelled samples is
mu_hat = (1/m) sum_i y_i x_i, and the rule is sign(mu_hat_n . x_n) on n chosen coordinates. For
a fixed mu_hat its error is exact: Phi(-(mu_hat_n . mu_n) / ||mu_hat_n||). Moving the
expectation over training sets inside Phi gives Phi(-f(n, m)) with

    f(n, m) = S_n / sqrt(n / m + S_n),   S_n = sum of the n largest mu_j^2,

and the best number of features n_opt = argmax_n f(n, m).

- ``f_nm``, ``n_opt``: the approximation and its maximiser.
- ``ml_error``: the exact error of the ML rule for a given estimate; ``linear_rule_error``:
  the exact error of any linear rule sign(w . x + b) (an SVM's, for example).
- ``expected_ml_error``: the average of ``ml_error`` over training sets of size m, by
  simulation (the estimate is drawn from its exact distribution N(mu, I / m)).
- ``example_mu`` and ``make_two_gaussians``: the thesis's choices of mu and a generator.

Bounds, evaluated as numbers:

- ``nn_margin_bound``: the 1-NN bound of Navot's theorem 3.1 (features F, margin gamma).
- ``ng_complexity``: the complexity terms of Ng's theorems 1-3 and 7 (learning without
  selection, STANDARD-WRAP, ORDERED-FS, ORDERED-FS2), with label noise.
- ``vc_confidence``, ``srm_n_features``: Vapnik's confidence term and the structural risk
  minimisation choice of the number of features l (Theodoridis and Koutroumbas, ch. 5).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._scale import exact_rescale
from ._validation import check_int, check_option, check_random_state, check_real

__all__ = [
    "SRMChoice",
    "example_mu",
    "expected_ml_error",
    "f_nm",
    "linear_rule_error",
    "make_two_gaussians",
    "ml_error",
    "n_opt",
    "ng_complexity",
    "nn_margin_bound",
    "srm_n_features",
    "vc_confidence",
]

EXAMPLES = ("inv_sqrt_pow2", "inv_j", "inv_sqrt_j", "constant")
NG_ALGORITHMS = ("none", "standard_wrap", "ordered_fs", "ordered_fs2")


# ------------------------------------------------------------------------------------------
# argument checks


def _mu(mu: Any, name: str = "mu") -> np.ndarray:
    arr = np.asarray(mu)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == np.bool_):
        raise TypeError(f"{name}: expected real numbers, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name}: expected real numbers, got complex values")
    arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D vector, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: needs at least one feature, got an empty vector")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    return arr


def _positive(value: Any, name: str) -> float:
    return check_real(value, name, positive=True)


def _prob(value: Any, name: str, *, low: float, high: float, closed_high: bool) -> float:
    v = check_real(value, name)
    ok = low < v <= high if closed_high else low < v < high
    if not ok:
        right = "]" if closed_high else ")"
        raise ValueError(f"{name}: must be in ({low}, {high}{right}, got {v}")
    return v


def _phi(z: Any) -> Any:
    from scipy.special import ndtr

    return ndtr(z)


# ------------------------------------------------------------------------------------------
# two Gaussians


def example_mu(name: str, n_features: int) -> np.ndarray:
    """The thesis's choices of mu (section 2.3 and figure 2.1), j = 1..n_features.

    ``"inv_sqrt_pow2"``: mu_j = 2^(-j/2) (example 2.1); ``"inv_j"``: 1/j (example 2.2);
    ``"inv_sqrt_j"``: 1/sqrt(j) (example 2.3); ``"constant"``: 1 (every feature equal).
    """
    check_option(name, "name", EXAMPLES)
    n = check_int(n_features, "n_features")
    j = np.arange(1, n + 1, dtype=np.float64)
    if name == "inv_sqrt_pow2":
        return 2.0 ** (-j / 2.0)
    if name == "inv_j":
        return 1.0 / j
    if name == "inv_sqrt_j":
        return 1.0 / np.sqrt(j)
    return np.ones(n)


def make_two_gaussians(mu: Any, n_samples: int, *, random_state: Any = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Samples of the two-Gaussian problem: y = +1 or -1 with probability 1/2 each, and
    x ~ N(y mu, I). Returns X of shape (n_samples, len(mu)) and y (int, values -1 and 1)."""
    mu = _mu(mu)
    m = check_int(n_samples, "n_samples")
    rng = np.random.default_rng(check_random_state(random_state))
    y = np.where(rng.random(m) < 0.5, -1, 1)
    X = rng.standard_normal((m, mu.size)) + y[:, None] * mu[None, :]
    return X, y


def _order(mu: np.ndarray) -> np.ndarray:
    # Strongest feature first; equal strengths keep their input order.
    return np.argsort(-np.abs(mu), kind="stable")


def f_nm(mu: Any, m: Any, n: int | None = None) -> Any:
    """f(n, m) = S_n / sqrt(n / m + S_n), S_n the sum of the n largest mu_j^2.

    Parameters
    ----------
    mu : 1-D array of the class mean (any order; f uses the strongest features first).
    m : training-set size, a real number > 0 (the formula is defined for any positive m).
    n : number of features, 1 <= n <= len(mu); None gives f for every n = 1..len(mu).

    Returns
    -------
    float, or an array of length len(mu) (entry n - 1 is f(n, m)) when ``n`` is None.
    """
    mu, m = _mu_and_m(mu, m)
    log_f = _log_f(mu, m)
    with np.errstate(over="ignore", under="ignore"):
        f = np.exp(log_f)  # inf or 0 only where f itself is beyond float64
    if n is None:
        return f
    n = check_int(n, "n", maximum=mu.size)
    return float(f[n - 1])


def _mu_and_m(mu: Any, m: Any) -> tuple[np.ndarray, float]:
    """The checked mu and m of f(n, m) and n_opt."""
    mu = _mu(mu)
    m = _positive(m, "m")
    if np.all(mu == 0):
        raise ValueError("mu: every entry is zero; f(n, m) is 0 for every n and no number of "
                         "features is better than another")
    return mu, m


def _log_f(mu: np.ndarray, m: float) -> np.ndarray:
    """ln f(n, m) for n = 1..len(mu), from mu / 2^k (exact; the largest |mu_j| in [1/2, 1)):
    with S'_n the sums of the rescaled squares, f = 2^k S' / sqrt(n / (m 4^k) + S'), the
    terms added as logarithms. mu of 1e200 or 1e-200 has f beyond float64 (or S_n is) but
    its logarithm and the best n are exact (f was NaN, or 0 for every n)."""
    scaled, k = exact_rescale(mu, 0)
    s = np.cumsum(np.sort(scaled ** 2)[::-1])
    ns = np.arange(1, mu.size + 1, dtype=np.float64)
    log_s = np.log(s)
    log_t = np.log(ns / m) - 2.0 * k * math.log(2.0)
    return k * math.log(2.0) + log_s - 0.5 * np.logaddexp(log_t, log_s)


def n_opt(mu: Any, m: Any) -> int:
    """The number of features that maximises f(n, m) (the smallest such n on ties)."""
    return int(np.argmax(_log_f(*_mu_and_m(mu, m)))) + 1


def linear_rule_error(w: Any, mu: Any, b: float = 0.0) -> float:
    """Exact error of sign(w . x + b) on the two Gaussians N(+-mu, I) with equal priors.

    w . x is normal with mean +-(w . mu) and variance ||w||^2, so the error is
    (Phi(-(w.mu + b) / ||w||) + Phi(-(w.mu - b) / ||w||)) / 2. A zero w is refused (the rule
    is a constant, whose error 1/2 says nothing about the features).
    """
    mu = _mu(mu)
    w = _mu(w, "w")
    if w.size != mu.size:
        raise ValueError(f"w: length {w.size} differs from mu's {mu.size}")
    b = check_real(b, "b")
    if not np.any(w):
        raise ValueError("w: is all zeros; a constant rule has error 1/2 whatever mu is")
    # sign(w . x + b) is that of (w . x + b) / 2^k: w scaled so its largest entry is in
    # [1/2, 1) (exact), so ||w|| neither overflows (w of 1e200 gave 1/2) nor vanishes
    w, k = exact_rescale(w, 0)
    b = float(np.ldexp(b, -k))
    norm = float(np.linalg.norm(w))
    a = float(w @ mu)
    return float(0.5 * (_phi(-(a + b) / norm) + _phi(-(a - b) / norm)))


def ml_error(mu_hat: Any, mu: Any, n: int | None = None) -> float:
    """Exact error of the ML rule sign(mu_hat_n . x_n) for a given estimate mu_hat.

    The n features are the n strongest of the true mu (largest |mu_j|; all when ``n`` is
    None), as in the thesis, where the coordinates are sorted by strength. The error is
    Phi(-(mu_hat_n . mu_n) / ||mu_hat_n||), and 1/2 when mu_hat_n = 0 (a constant rule).
    """
    mu = _mu(mu)
    mu_hat = _mu(mu_hat, "mu_hat")
    if mu_hat.size != mu.size:
        raise ValueError(f"mu_hat: length {mu_hat.size} differs from mu's {mu.size}")
    n = mu.size if n is None else check_int(n, "n", maximum=mu.size)
    keep = _order(mu)[:n]
    if not np.any(mu_hat[keep]):
        return 0.5  # sign(0) is a constant rule, as expected_ml_error counts a zero estimate
    return linear_rule_error(mu_hat[keep], mu[keep])


def expected_ml_error(mu: Any, m: int, *, n_repeats: int = 200, random_state: Any = None
                      ) -> np.ndarray:
    """The ML rule's error averaged over training sets of size m, for every n = 1..len(mu).

    mu_hat = (1/m) sum y_i x_i is exactly N(mu, I / m) distributed, so each repeat draws
    mu_hat from it and takes the exact error of every prefix of the strongest features (the
    thesis's "true error" of figure 2.1). Returns an array of length len(mu).
    """
    mu = _mu(mu)
    m = check_int(m, "m")
    reps = check_int(n_repeats, "n_repeats")
    rng = np.random.default_rng(check_random_state(random_state))
    mu_s = mu[_order(mu)]
    out = np.zeros(mu.size)
    for _ in range(reps):
        mu_hat = mu_s + rng.standard_normal(mu.size) / math.sqrt(m)
        num = np.cumsum(mu_hat * mu_s)
        den = np.sqrt(np.cumsum(mu_hat ** 2))
        # A prefix whose estimate is exactly zero is a constant rule: error 1/2.
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(den > 0, -num / np.where(den > 0, den, 1.0), 0.0)
        out += _phi(z)
    return out / reps


# ------------------------------------------------------------------------------------------
# bounds


def nn_margin_bound(n_samples: int, n_selected: int, n_features: int, *, gamma: float,
                    delta: float = 0.05, radius: float = 1.0,
                    train_error: float = 0.0) -> float:
    """The 1-NN generalisation bound of Navot's theorem 3.1, as a number.

    With probability 1 - delta over a sample of size m from a distribution supported on a ball
    of radius R, 1-NN on the features F has error at most

        train_error + sqrt( (2/m) ( d ln(34 e m / d) log2(578 m) + ln(8 / (gamma delta))
                                    + (|F| + 1) ln N ) ),   d = (64 R / gamma)^|F|,

    where train_error is the fraction of training samples misclassified or with margin below
    gamma. ``n_selected`` = |F|, ``n_features`` = N, ``gamma`` in (0, 1], ``delta`` in (0, 1).

    Returns the bound (not clipped at 1). When d >= 34 e m the fat-shattering term of the
    underlying theorem has no meaning (its logarithm is not positive): the bound is vacuous
    and ``inf`` is returned.
    """
    m = check_int(n_samples, "n_samples")
    k = check_int(n_selected, "n_selected", minimum=0)
    big_n = check_int(n_features, "n_features")
    if k > big_n:
        raise ValueError(f"n_selected: must be <= n_features ({big_n}), got {k}")
    gamma = _prob(gamma, "gamma", low=0.0, high=1.0, closed_high=True)
    delta = _prob(delta, "delta", low=0.0, high=1.0, closed_high=False)
    radius = _positive(radius, "radius")
    train_error = check_real(train_error, "train_error")
    if not 0.0 <= train_error <= 1.0:
        raise ValueError(f"train_error: must be in [0, 1], got {train_error}")
    log_d = k * math.log(64.0 * radius / gamma)
    log_ratio = math.log(34.0 * math.e * m) - log_d
    if log_ratio <= 0:
        return math.inf
    d = math.exp(log_d)
    inner = (d * log_ratio * math.log2(578.0 * m) + math.log(8.0 / (gamma * delta))
             + (k + 1) * math.log(big_n))
    return train_error + math.sqrt(2.0 / m * inner)


def _log_growth(h: Any, n: float) -> Any:
    """ln of the growth function of a class of VC dimension h on n points: Sauer's bound
    h (ln(n / h) + 1) where it holds (h < n) and is below n ln 2, else n ln 2 (every labelling
    of the n points). Sauer's expression alone falls for h > n and turns negative past e n,
    which made the bounds NaN or smaller for a larger class."""
    h = np.asarray(h, dtype=np.float64)
    all_labellings = n * math.log(2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sauer = h * (np.log(n / h) + 1.0)
    out = np.where(h < n, np.minimum(sauer, all_labellings), all_labellings)
    return np.where(h == 0, 0.0, out)


def _vc_term(vc: float, m_eff: float, m: float) -> float:
    # sqrt(vc / m_eff * (ln(m / vc) + 1)), the logarithm capped as in _log_growth; 0 for
    # vc = 0 (the limit).
    if vc == 0:
        return 0.0
    return math.sqrt(float(_log_growth(vc, m)) / m_eff)


def ng_complexity(algorithm: str, n_samples: int, n_features: int, *, r: int | None = None,
                  r_vc: float | None = None, f_vc: float | None = None,
                  holdout: float = 0.3, holdouts: tuple = (0.5, 0.25, 0.25),
                  noise: float = 0.0, alpha: float = 1.0) -> float:
    """The complexity term (everything but eps_g) of Ng's bounds, with unit O(.) constants.

    Ng's theorems bound the error of the selected hypothesis by the best error with r
    features, eps_g(r), plus terms that grow with the features. With m samples, f features,
    hold-out fraction gamma and r_vc the VC dimension of the hypotheses on r features
    (default r + 1, linear rules):

    - ``"none"`` (theorem 1, all f features): sqrt(f_vc / m' (ln(m / f_vc) + 1));
    - ``"standard_wrap"`` (theorem 2): sqrt(r_vc / ((1 - gamma) m') (ln(m / r_vc) + 1))
      + sqrt(f^alpha / (gamma m'));
    - ``"ordered_fs"`` (theorem 3): the same first term + sqrt(r / ((1 - gamma) m')
      (ln(f / r) + 1)) + sqrt(ln f / (gamma m'));
    - ``"ordered_fs2"`` (theorem 7, three parts gamma_1, gamma_2, gamma_3 = ``holdouts``):
      sqrt(r_vc / (gamma_1 m') (ln(m / r_vc) + 1)) + sqrt(r / (gamma_2 m') (ln(f / r) + 1))
      + sqrt(ln f / (gamma_3 m')).

    Label noise at rate eta replaces m in every denominator by m' = (1 - 2 eta)^2 m (Ng's
    rule); m' = m without noise. A term with r = 0 is 0 (its limit). In the VC terms
    vc (ln(m / vc) + 1) is capped at m ln 2 (every labelling of the m samples), which it
    exceeds for vc beyond about m / 3 and which alone holds for vc >= m (the expression
    would fall there, and turn negative past e m). The O(.) constants are
    set to 1, so the values compare algorithms and sizes; they are not absolute bounds.
    ``alpha`` (0, 1] is Ng's conjectured exponent of f in STANDARD-WRAP's hold-out term.
    """
    check_option(algorithm, "algorithm", NG_ALGORITHMS)
    m = check_int(n_samples, "n_samples")
    f = check_int(n_features, "n_features")
    noise = check_real(noise, "noise")
    if not 0.0 <= noise < 0.5:
        raise ValueError(f"noise: the label noise rate must be in [0, 0.5), got {noise}")
    m_eff = (1.0 - 2.0 * noise) ** 2 * m
    if algorithm == "none":
        vc = float(f + 1) if f_vc is None else _positive(f_vc, "f_vc")
        return _vc_term(vc, m_eff, m)
    if r is None:
        raise ValueError(f"r: the number of selected features is needed for {algorithm!r}")
    r = check_int(r, "r", minimum=0)
    if r > f:
        raise ValueError(f"r: must be <= n_features ({f}), got {r}")
    if r_vc is None:
        rvc = float(r + 1) if r > 0 else 0.0
    else:
        rvc = check_real(r_vc, "r_vc")
        if rvc < 0:
            raise ValueError(f"r_vc: must be >= 0, got {rvc}")
    sel = 0.0 if r == 0 else math.sqrt(r * (math.log(f / r) + 1.0))
    if algorithm == "ordered_fs2":
        if isinstance(holdouts, np.ndarray) and holdouts.ndim == 1:
            holdouts = holdouts.tolist()
        if not (isinstance(holdouts, (tuple, list)) and len(holdouts) == 3):
            raise ValueError("holdouts: expected three fractions (gamma_1, gamma_2, gamma_3)")
        g = [_prob(v, f"holdouts[{i}]", low=0.0, high=1.0, closed_high=False)
             for i, v in enumerate(holdouts)]
        if sum(g) > 1.0 + 1e-12:
            raise ValueError(f"holdouts: the three fractions must sum to at most 1, got "
                             f"{sum(g)}")
        return (_vc_term(rvc, g[0] * m_eff, m) + sel / math.sqrt(g[1] * m_eff)
                + math.sqrt(math.log(f) / (g[2] * m_eff)))
    gamma = _prob(holdout, "holdout", low=0.0, high=1.0, closed_high=False)
    first = _vc_term(rvc, (1.0 - gamma) * m_eff, m)
    if algorithm == "standard_wrap":
        alpha = _prob(alpha, "alpha", low=0.0, high=1.0, closed_high=True)
        return first + math.sqrt(f ** alpha / (gamma * m_eff))
    return (first + sel / math.sqrt((1.0 - gamma) * m_eff)
            + math.sqrt(math.log(f) / (gamma * m_eff)))


def vc_confidence(vc_dim: Any, n_samples: int, *, rho: float = 0.05) -> Any:
    """Vapnik's confidence term: with probability 1 - rho, every classifier f of a class of
    VC dimension h has P_e(f) <= P_e^N(f) + sqrt((h (ln(2N / h) + 1) - ln(rho / 4)) / N).

    ``vc_dim`` is a positive number or an array of them; ``n_samples`` = N. h (ln(2N / h) + 1)
    is the logarithm of Sauer's bound on the number of labellings of 2N points; where that
    exceeds all 2^(2N) labellings (h beyond about 0.65 N) or no longer holds (h >= 2N), the
    term uses 2N ln 2 instead, so it never decreases in h (the formula alone falls past 2N
    and is NaN past 2eN).
    """
    n = check_int(n_samples, "n_samples")
    rho = _prob(rho, "rho", low=0.0, high=1.0, closed_high=False)
    if isinstance(vc_dim, (str, bytes, bool, np.bool_)):
        raise TypeError(f"vc_dim: expected a number or an array of numbers, got "
                        f"{type(vc_dim).__name__}")
    h = np.asarray(vc_dim, dtype=np.float64) if not isinstance(vc_dim, numbers.Real) \
        else np.float64(check_real(vc_dim, "vc_dim"))
    if not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError("vc_dim: every VC dimension must be finite and > 0")
    val = np.sqrt((_log_growth(h, 2.0 * n) - math.log(rho / 4.0)) / n)
    return float(val) if np.ndim(val) == 0 else val


@dataclass(frozen=True)
class SRMChoice:
    """The structural-risk-minimisation choice: ``n_features`` (l, 1-based) minimises
    ``bounds`` = ``train_errors`` + ``penalties`` (entry l - 1 for l features)."""

    n_features: int
    bounds: np.ndarray
    penalties: np.ndarray
    train_errors: np.ndarray

    def __repr__(self) -> str:
        i = self.n_features - 1
        return (f"SRMChoice(n_features={self.n_features}, bound={self.bounds[i]:.4g}, "
                f"train_error={self.train_errors[i]:.4g}, penalty={self.penalties[i]:.4g})")


def srm_n_features(train_errors: Any, n_samples: int, *, vc_dims: Any = None,
                   rho: float = 0.05) -> SRMChoice:
    """Choose the number of features l by structural risk minimisation.

    ``train_errors[l - 1]`` is the training error of the best classifier on the first l
    features of a nested sequence (l = 1..L). Each l is charged its empirical error plus
    ``vc_confidence(vc_dims[l - 1], n_samples, rho=rho)``; the smallest sum wins (the
    smallest l on ties). ``vc_dims`` defaults to l + 1, a linear classifier on l features.
    """
    errs = _mu(train_errors, "train_errors")
    if np.any(errs < 0) or np.any(errs > 1):
        raise ValueError("train_errors: must be error rates in [0, 1]")
    if vc_dims is None:
        h = np.arange(2, errs.size + 2, dtype=np.float64)
    else:
        h = _mu(vc_dims, "vc_dims")
        if h.size != errs.size:
            raise ValueError(f"vc_dims: length {h.size} differs from train_errors' "
                             f"{errs.size}")
    pen = np.asarray(vc_confidence(h, n_samples, rho=rho), dtype=np.float64).reshape(-1)
    bounds = errs + pen
    return SRMChoice(int(np.argmin(bounds)) + 1, bounds, pen, errs)
