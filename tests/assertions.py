"""Assertions shared by several test modules."""

from __future__ import annotations

from numpy.testing import assert_array_equal


def same_result(a, b):
    """Two G-flip results are identical in every field that the search determines."""
    assert_array_equal(a.support, b.support)
    assert_array_equal(a.selected, b.selected)
    assert a.score == b.score
    assert_array_equal(a.history, b.history)
    assert a.n_epochs == b.n_epochs
    assert a.n_flips == b.n_flips
    assert a.best_restart == b.best_restart
    assert_array_equal(a.restart_scores, b.restart_scores)
