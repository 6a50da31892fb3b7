"""Shared fixtures for the fastfs test suite."""

from __future__ import annotations

import numpy as np
import pytest

import fastfs


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh fixed-seed generator for every test (tests never depend on each other's draws)."""
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def xor300():
    """Navot's xor problem, 300 samples x 10 features, fixed seed."""
    return fastfs.datasets.make_xor(300, random_state=0)


@pytest.fixture(scope="session")
def xor1000():
    """Navot's xor problem as in the thesis: 1000 samples x 10 features, fixed seed."""
    return fastfs.datasets.make_xor(1000, random_state=0)


@pytest.fixture(scope="session")
def random_problem():
    """Random 3-class data with two informative features (0 and 3) among 12."""
    gen = np.random.default_rng(2024)
    n_samples, n_features = 150, 12
    y = gen.integers(0, 3, size=n_samples)
    X = gen.standard_normal((n_samples, n_features))
    X[:, 0] += 1.5 * y
    X[:, 3] -= 1.0 * (y == 1)
    return X, y


@pytest.fixture
def small_problem(rng):
    """A small two-class problem for input-validation tests."""
    X = rng.standard_normal((20, 4))
    y = np.repeat([0, 1], 10)
    return X, y


@pytest.fixture
def restore_max_memory():
    """Restore fastfs.config.max_memory after a test that changes it."""
    saved = fastfs.config.max_memory
    try:
        yield fastfs.config
    finally:
        fastfs.config.max_memory = saved
