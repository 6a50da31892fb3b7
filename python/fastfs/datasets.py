"""Synthetic problems of Navot's and Ng's theses, generated reproducibly.

``make_xor``: Navot's xor problem (Navot's PhD thesis, section 3.7.1). The thesis gives 1000
samples, 10 features and a label that is the xor of the first three; it does not state the
feature distribution, so we draw features uniformly on [-1, 1] and take the xor of their signs.

``make_ng``: Ng's problems (Ng's MSc thesis, 1998, section 4.2): label = [x_1 + 0.2 > 0] (or,
with ``n_relevant=3``, [x_1 + x_2 + x_3 > 0]) flipped with probability ``noise`` (0.3),
features i.i.d. standard normal, the others irrelevant.

``random_state``: None, an int >= 0 (NumPy's ``default_rng`` seed), a Generator (used as is)
or a RandomState (one seed drawn from it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import check_int, check_random_state, check_real


def _rng(random_state: Any) -> np.random.Generator:
    """NumPy's generator of random_state: None, a Generator (used as is), or what
    check_random_state turns into one seed (an int >= 0 as given, a RandomState's draw)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_random_state(random_state))


def make_xor(n_samples: int = 1000, n_features: int = 10, n_relevant: int = 3,
             random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """X uniform on [-1, 1]^n_features; y = xor of the signs of the first n_relevant columns."""
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    n_features = check_int(n_features, "n_features", minimum=1)
    n_relevant = check_int(n_relevant, "n_relevant", minimum=1)
    if n_relevant > n_features:
        raise ValueError(f"n_relevant: {n_relevant} exceeds n_features={n_features}")
    rng = _rng(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    y = (np.sum(X[:, :n_relevant] > 0, axis=1) % 2).astype(np.int64)
    return X, y


def make_ng(n_samples: int = 1000, n_features: int = 20, noise: float = 0.3,
            random_state: Any = None, n_relevant: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """X ~ N(0, 1)^n_features; y = [x_1 + 0.2 > 0] (n_relevant=1) or [x_1 + x_2 + x_3 > 0]
    (n_relevant=3, Ng's second target), each label flipped with probability noise."""
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    n_features = check_int(n_features, "n_features", minimum=1)
    n_relevant = check_int(n_relevant, "n_relevant")
    if n_relevant not in (1, 3):
        raise ValueError(f"n_relevant: must be 1 or 3 (Ng's two targets), got {n_relevant}")
    if n_relevant > n_features:
        raise ValueError(f"n_relevant: {n_relevant} exceeds n_features={n_features}")
    noise = check_real(noise, "noise")
    if not 0.0 <= noise < 0.5:
        raise ValueError(f"noise: must be in [0, 0.5), got {noise}")
    rng = _rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    if n_relevant == 1:
        y = (X[:, 0] + 0.2 > 0).astype(np.int64)
    else:
        y = (X[:, :3].sum(axis=1) > 0).astype(np.int64)
    flip = rng.random(n_samples) < noise
    y[flip] = 1 - y[flip]
    return X, y
