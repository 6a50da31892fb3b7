"""A weighting or filter whose every feature gets the same value ranks nothing: it warns
(``EqualScoresWarning``, a UserWarning) instead of returning a quiet answer (SPEC 1), names the
function and the value, and points at the caller's line; data that rank the features stay
quiet (pytest turns warnings into errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastfs
from fastfs import EqualScoresWarning, filters

CLASS_FILTERS = ["anova_f", "f_score", "t_test", "s2n", "fisher_ratio", "auc", "chi2",
                 "mutual_info"]
WEIGHTINGS = ["relief", "relieff", "surf", "surfstar", "multisurf", "multisurfstar",
              "turf", "vls", "iterative_relief", "simba"]


def _call(name, X, y):
    if name in CLASS_FILTERS:
        return getattr(filters, name)(X, y)
    if name == "z_test":
        return filters.z_test(X, y, sigma=1.0)
    if name == "vls":
        return fastfs.vls(X, y, n_subsets=4, subset_size=2, random_state=0)
    if name == "turf":
        return fastfs.turf(X, y, n_features_to_keep=1)
    if name == "simba":
        return fastfs.simba(X, y, random_state=0)
    return getattr(fastfs, name)(X, y)


def _values(result):
    return np.asarray(getattr(result, "weights", None) if hasattr(result, "weights")
                      else result.scores)


def _problem():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("name", CLASS_FILTERS + ["z_test"] + WEIGHTINGS)
def test_constant_columns_warn_at_the_callers_line(name):
    X = np.full((40, 4), 3.0)
    y = np.repeat([0, 1], 20)
    with pytest.warns(EqualScoresWarning) as record:
        res = _call(name, X, y)
    values = _values(res)
    if name == "turf":  # its tiers differ; the first round, which scored all, tied
        values = fastfs.relieff(X[:, :1], y).weights
    # the warning is right: the values are all one number (or all NaN)
    assert np.all(values == values[0]) or np.all(np.isnan(values))
    ours = [w for w in record if issubclass(w.category, EqualScoresWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]  # wrappers: once, not per round
    text = str(ours[0].message)
    assert text.startswith(f"{name}: every feature got the same weight in the first round"
                           if name == "turf" else f"{name}: every feature")
    assert f"({values[0]:.6g})" in text or "NaN" in text
    assert ours[0].filename == __file__


@pytest.mark.parametrize("name", CLASS_FILTERS + WEIGHTINGS + ["pearson", "rgs", "sks"])
def test_features_that_rank_stay_quiet(name):
    X, y = _problem()
    if name == "pearson":
        res = filters.pearson(X, y.astype(float) + X[:, 2])
    elif name == "chi2":
        res = filters.chi2(np.round(X).astype(int) + 3, y)
    elif name in ("rgs", "sks"):
        res = getattr(fastfs, name)(X, X[:, 0] + 0.1 * X[:, 1], **(
            {"random_state": 0} if name == "rgs" else {}))
    else:
        res = _call(name, X, y)
    values = _values(res)
    assert not np.all(values == values[0])


def test_one_feature_is_never_a_tie():
    X, y = _problem()
    for name in ("anova_f", "relieff", "simba"):
        res = _call(name, X[:, :1] * 0 + 1.0, y)
        assert _values(res).shape == (1,)


def test_regression_weightings_warn_unless_y_is_constant():
    X = np.ones((12, 3))
    y = np.arange(12.0)
    with pytest.warns(EqualScoresWarning, match="sks: every feature got the same score"):
        fastfs.sks(X, y, beta=1.0)
    with pytest.warns(EqualScoresWarning, match="rgs: every feature got the same weight"):
        fastfs.rgs(X, y, beta=1.0, random_state=0)
    # a constant y has its own warning, which says why; no second one about the weights
    Xr = np.random.default_rng(0).normal(size=(30, 3))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        res = fastfs.rgs(Xr, np.full(30, 2.0), random_state=0)
    assert_array_equal(res.weights, np.ones(3))
    assert [str(w.message)[:14] for w in record] == ["y: is constant"]


def test_all_nan_scores_warn():
    from fastfs._results import warn_if_equal

    with pytest.warns(EqualScoresWarning, match="f: every feature's score is NaN"):
        warn_if_equal(np.full(3, np.nan), "f", "score", "classes", stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_equal(np.array([np.nan, 1.0, 1.0]), "f", "score", "classes")  # ranks NaN last
        warn_if_equal(np.array([2.0]), "f", "score", "classes")
        warn_if_equal(np.array([0.0, -0.0 + 1e-300]), "f", "score", "classes")


def test_rank_features_uses_the_same_warning():
    X, y = _problem()
    X = np.repeat(X[:, :1], 3, axis=1)  # three copies of one feature
    with pytest.warns(EqualScoresWarning, match="rank_features: every feature"):
        fastfs.rank_features(X, y)


@pytest.mark.parametrize("name", ["relieff", "simba", "rgs"])
def test_dask_on_local_threads_warns_once(name):
    """Without a cluster the tasks run in this process: the one-machine functions they call
    keep quiet, and the client side warns once, at the caller's line."""
    da = pytest.importorskip("dask.array")
    fd = pytest.importorskip("fastfs.dask")
    X = np.full((48, 4), 1.5)
    y, kw = np.repeat([0, 1], 24), {}
    if name == "relieff":  # a continuous target: one task runs fastfs.relieff itself
        y, kw = np.arange(48.0), {"target": "continuous"}
    elif name == "rgs":
        y, kw = np.arange(48.0), {"beta": 1.0, "n_restarts": 2, "random_state": 0}
    else:
        kw = {"n_restarts": 3, "random_state": 0}
    with pytest.warns(EqualScoresWarning) as record:
        filters_inside = list(warnings.filters)
        getattr(fd, name)(da.from_array(X, chunks=(12, 4)), y, client=None, **kw)
        # the tasks' quiet must not touch the process's warning filters (threads)
        assert warnings.filters == filters_inside
    ours = [w for w in record if issubclass(w.category, EqualScoresWarning)]
    assert len(ours) == 1 and ours[0].filename == __file__


def test_scores_equal_up_to_rounding_warn_too():
    # eight samples, two classes of four: every feature's mutual information with y is the
    # same number (each feature's quantile bins split the samples alike), computed with
    # rounding differences of about 1e-17; ranked by them, the order was noise
    X = np.random.default_rng(0).normal(size=(8, 50))
    y = np.array([0, 1] * 4)
    with pytest.warns(EqualScoresWarning, match="mutual_info: every feature got the same "
                                                "score .* up to rounding"):
        r = fastfs.filters.mutual_info(X, y)
    assert np.ptp(r.scores) <= 1e-10 * np.abs(r.scores).max()
    # scores that differ by more than a tie do not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error", EqualScoresWarning)
        fastfs.filters.anova_f(X, y)
