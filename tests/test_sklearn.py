"""fastfs.sklearn: every method as a scikit-learn selector (and the weighted k-NN predictors).

References: scikit-learn's own estimator checks and selectors (SelectKBest and friends with a
fastfs filter as score_func), the fastfs functions called directly, NumPy."""

from __future__ import annotations

import pickle
from functools import partial

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")
pd = pytest.importorskip("pandas")

from sklearn.base import clone  # noqa: E402
from sklearn.feature_selection import (  # noqa: E402
    SelectFdr,
    SelectFpr,
    SelectFwe,
    SelectKBest,
    SelectPercentile,
)
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import fastfs  # noqa: E402
from fastfs import filters  # noqa: E402
from fastfs.sklearn import (  # noqa: E402
    OMP,
    RGS,
    SBS,
    SFBS,
    SFFS,
    SFS,
    SKS,
    BackwardLeastSquares,
    BeamSearch,
    BestFirst,
    Bidirectional,
    BranchAndBound,
    Exhaustive,
    FilterSelector,
    GFlip,
    LassoSelector,
    MultiSURF,
    MultiSURFstar,
    IterativeRelief,
    TuRF,
    VLS,
    PlusLMinusR,
    RankFeatures,
    Relief,
    ReliefF,
    Simba,
    SimulatedAnnealing,
    SURF,
    SURFstar,
    SoftKNeighborsRegressor,
    WeightedKNeighborsClassifier,
    GreedyLogistic,
    OrderedFS,
    OrderedFS2,
    RecursiveFeatureElimination,
    StandardWrap,
)

# ------------------------------------------------------------------------------------------
# scikit-learn's estimator checks, on instances with small, fast parameters

CHECKED = [
    GFlip(random_state=0), Simba(n_restarts=1, random_state=0), Relief(),
    ReliefF(n_neighbors=3), SURF(), SURFstar(), MultiSURF(), MultiSURFstar(),
    TuRF(n_features_to_keep=2, method_params={"n_neighbors": 3}),
    VLS(n_subsets=20, subset_size=3, random_state=0, method="multisurf"),
    IterativeRelief(max_iter=3, method_params={"n_neighbors": 3}),
    RGS(random_state=0), SKS(), OMP(), BackwardLeastSquares(),
    LassoSelector(0.01), SFS(), SBS(), SFFS(), SFBS(), Bidirectional(), PlusLMinusR(),
    BeamSearch(width=2), Exhaustive(), BranchAndBound(), BestFirst(),
    SimulatedAnnealing(n_iter=50, random_state=0),
    # The checks' blobs separate perfectly on every feature alone, so the default
    # leave-one-out accuracy ties everywhere (rank_features warns); the margin does not.
    RankFeatures(criterion="margin"), FilterSelector(),
    WeightedKNeighborsClassifier(Simba(1.0, n_restarts=1, random_state=0)),
    WeightedKNeighborsClassifier(SFS(), n_neighbors=3),
    SoftKNeighborsRegressor(RGS(1.0, random_state=0)),
    SoftKNeighborsRegressor(SKS(), use_weights=False),
    # the defaults too: the checks seed them through their random_state (without it, two fits
    # of the default RGS differed)
    WeightedKNeighborsClassifier(), SoftKNeighborsRegressor(),
    OrderedFS(width=2, random_state=0),
    StandardWrap(width=2, random_state=0),
    OrderedFS2(width=2, random_state=0),
    RecursiveFeatureElimination(), GreedyLogistic(),
]


def _expected_failures(estimator):
    """Checks a wrapper selector fails by design. ORDERED-FS and STANDARD-WRAP may choose no
    feature at all on the checks' noise data (the intercept-only model wins), and
    scikit-learn's transform then warns."""
    if isinstance(estimator, (OrderedFS, StandardWrap)):
        return {"check_fit_idempotent": "may select no feature on noise (a warning)"}
    return {}


# G-flip warns when it keeps no feature, which it may on the checks' noise data; a weighting
# warns when every feature gets the same weight, as RGS's on the checks' two tight blobs
# (their soft kNN estimate is exact from the start) and IterativeRelief's on 10 samples.
@pytest.mark.filterwarnings("ignore:gflip. selected no feature:UserWarning")
@pytest.mark.filterwarnings("ignore::fastfs.EqualScoresWarning")
@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", [e for e in CHECKED if hasattr(e, "transform")],
                         ids=lambda e: type(e).__name__)
def test_selectors_without_y_say_so_as_scikit_learn_does(estimator):
    # fit(X, y=None) as scikit-learn's transformers: fit_transform(X) is then a ValueError
    # naming y, as SelectKBest's (it was a TypeError about a missing argument)
    import inspect

    from sklearn.feature_selection import SelectKBest

    assert inspect.signature(type(estimator).fit).parameters["y"].default is None
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        SelectKBest(k=2).fit_transform(X)
    with pytest.raises(ValueError, match=f"This {type(estimator).__name__} estimator requires "
                                         "y to be passed, but the target y is None"):
        clone(estimator).fit_transform(X)


# ------------------------------------------------------------------------------------------
# data


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(48, 6))
    y = np.where(X[:, 0] + 0.8 * X[:, 1] + 0.3 * rng.normal(size=48) > 0, "yes", "no")
    return X, y


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(48, 6))
    y = 2.0 * X[:, 0] - X[:, 2] + 0.1 * rng.normal(size=48)
    return X, y


def _scaled(X):
    return StandardScaler().fit_transform(X)


# (estimator, the grid over its size parameter, regression?, the function's support given the
# estimator's parameters on scaled X)
def _top(result, k):
    support = np.zeros(len(result.weights), dtype=bool)
    support[np.asarray(result.ranking)[:k]] = True
    return support


CASES = {
    "gflip": (GFlip(random_state=0), {"utility": ["linear", "sigmoid"]}, False,
              lambda X, y, p: fastfs.gflip(X, y, random_state=0, **p).support),
    "simba": (Simba(n_restarts=1, random_state=0), {"n_features_to_select": [2, 3]}, False,
              lambda X, y, p: _top(fastfs.simba(X, y, n_restarts=1, random_state=0),
                                   p["n_features_to_select"])),
    "relief": (Relief(), {"n_features_to_select": [2, 3]}, False,
               lambda X, y, p: _top(fastfs.relief(X, y), p["n_features_to_select"])),
    "relieff": (ReliefF(n_neighbors=5), {"n_features_to_select": [2, 3]}, False,
                lambda X, y, p: _top(fastfs.relieff(X, y, n_neighbors=5),
                                     p["n_features_to_select"])),
    "rgs": (RGS(random_state=0), {"n_features_to_select": [2, 3]}, True,
            lambda X, y, p: _top(fastfs.rgs(X, y, random_state=0), p["n_features_to_select"])),
    "sks": (SKS(), {"n_features_to_select": [2, 3]}, True,
            lambda X, y, p: _top(fastfs.sks(X, y), p["n_features_to_select"])),
    "omp": (OMP(), {"n_features_to_select": [2, 3]}, True,
            lambda X, y, p: fastfs.omp(X, y, p["n_features_to_select"]).support),
    "backward": (BackwardLeastSquares(), {"n_features_to_select": [2, 3]}, True,
                 lambda X, y, p: fastfs.backward_least_squares(
                     X, y, p["n_features_to_select"]).support),
    "lasso": (LassoSelector(), {"alpha": [0.05, 0.5]}, True,
              lambda X, y, p: fastfs.lasso(X, y, p["alpha"]).support),
    "rank": (RankFeatures(), {"n_features_to_select": [2, 3]}, False,
             lambda X, y, p: fastfs.rank_features(X, y, p["n_features_to_select"]).support),
    "filter": (FilterSelector(mode="k_best", param=2), {"param": [2, 3]}, False,
               lambda X, y, p: SelectKBest(filters.anova_f, k=p["param"]).fit(X, y)
               .get_support()),
    "branch_and_bound": (BranchAndBound(), {"n_features_to_select": [2, 3]}, False,
                         lambda X, y, p: fastfs.branch_and_bound(
                             X, y, p["n_features_to_select"]).support),
}
CASES["ordered_fs"] = (OrderedFS(width=3, random_state=0), {"max_features": [2, 3]}, False,
                      lambda X, y, p: fastfs.ordered_fs(X, y, width=3, random_state=0,
                                                        **p).support)
CASES["rfe"] = (RecursiveFeatureElimination(), {"n_features_to_select": [2, 3]}, False,
                lambda X, y, p: fastfs.rfe(X, y, p["n_features_to_select"]).support)
CASES["greedy_logistic"] = (GreedyLogistic(), {"n_features_to_select": [2, 3]}, False,
                            lambda X, y, p: fastfs.greedy_logistic(
                                X, y, p["n_features_to_select"]).support)
for _name, _cls, _func in [("surf", SURF, fastfs.surf), ("surfstar", SURFstar, fastfs.surfstar),
                           ("multisurf", MultiSURF, fastfs.multisurf),
                           ("multisurfstar", MultiSURFstar, fastfs.multisurfstar)]:
    CASES[_name] = (_cls(), {"n_features_to_select": [2, 3]}, False,
                    lambda X, y, p, f=_func: _top(f(X, y), p["n_features_to_select"]))
for _name, _cls, _func, _extra in [
        ("sfs", SFS, fastfs.sfs, {}), ("sbs", SBS, fastfs.sbs, {}),
        ("sffs", SFFS, fastfs.sffs, {}), ("sfbs", SFBS, fastfs.sfbs, {}),
        ("plus_l_minus_r", PlusLMinusR, fastfs.plus_l_minus_r, {"l": 2, "r": 1}),
        ("bidirectional", Bidirectional, fastfs.bidirectional, {}),
        ("beam", BeamSearch, fastfs.beam, {"width": 2}),
        ("exhaustive", Exhaustive, fastfs.exhaustive, {}),
        ("best_first", BestFirst, fastfs.best_first, {}),
        ("simulated_annealing", SimulatedAnnealing, fastfs.simulated_annealing,
         {"n_iter": 60, "random_state": 0})]:
    CASES[_name] = (_cls(**_extra), {"n_features_to_select": [2, 3]}, False,
                    lambda X, y, p, f=_func, e=_extra: f(X, y, p["n_features_to_select"],
                                                         **e).support)


@pytest.mark.parametrize("name", sorted(CASES))
def test_grid_search_in_a_pipeline_selects_what_the_function_selects(name, classification,
                                                                     regression):
    selector, grid, is_regression, direct = CASES[name]
    X, y = regression if is_regression else classification
    model = LinearRegression() if is_regression else LogisticRegression()
    pipe = Pipeline([("scale", StandardScaler()), ("select", selector), ("model", model)])
    search = GridSearchCV(pipe, {f"select__{k}": v for k, v in grid.items()}, cv=3)
    search.fit(X, y)
    assert len(search.cv_results_["params"]) == 2
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = {k.split("__", 1)[1]: v for k, v in search.best_params_.items()}
    fitted = search.best_estimator_.named_steps["select"]
    np.testing.assert_array_equal(fitted.support_, direct(_scaled(X), y, best))
    np.testing.assert_array_equal(fitted.get_support(), fitted.support_)
    assert fitted.n_features_in_ == X.shape[1]
    # ranking_: 1 for the best (first entered) feature, a permutation for the weight methods
    assert fitted.ranking_.shape == (X.shape[1],)
    assert set(fitted.ranking_[fitted.support_]) == set(range(1, fitted.support_.sum() + 1)) \
        or hasattr(fitted, "scores_") or name == "rfe"
    # predictions come out of the whole pipeline
    assert search.predict(X[:5]).shape == (5,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_clone_and_pickle(name, classification, regression):
    selector, _grid, is_regression, _ = CASES[name]
    X, y = regression if is_regression else classification
    copy = clone(selector)
    assert copy is not selector and copy.get_params() == selector.get_params()
    fitted = clone(selector).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.transform(X), fitted.transform(X))
    np.testing.assert_array_equal(again.support_, fitted.support_)
    # parameters are only stored: fitting changes none of them
    assert fitted.get_params() == selector.get_params()


@pytest.mark.parametrize("name", ["simba", "omp", "sfs", "filter", "gflip"])
def test_pandas_names_flow_through(name, classification, regression):
    selector, _, is_regression, _ = CASES[name]
    X, y = regression if is_regression else classification
    columns = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    fitted = clone(selector).fit(frame, y)
    np.testing.assert_array_equal(fitted.feature_names_in_, columns)
    kept = np.asarray(columns, dtype=object)[fitted.support_]
    np.testing.assert_array_equal(fitted.get_feature_names_out(), kept)
    np.testing.assert_array_equal(fitted.result_.feature_names, columns)
    out = fitted.set_output(transform="pandas").transform(frame)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(kept)
    np.testing.assert_array_equal(out.to_numpy(), X[:, fitted.support_])


# ------------------------------------------------------------------------------------------
# selection by count and threshold (weight methods)


def test_threshold_and_count_follow_select_from_model(classification):
    X, y = classification
    res = fastfs.relief(X, y)
    w = np.asarray(res.weights)
    order = np.argsort(-w, kind="stable")
    for threshold, cut in [("mean", w.mean()), ("median", np.median(w)),
                           ("1.5*mean", 1.5 * w.mean()), (0.0, 0.0)]:
        fitted = Relief(threshold=threshold).fit(X, y)
        np.testing.assert_array_equal(fitted.support_, w >= cut)
        np.testing.assert_array_equal(fitted.feature_importances_, w)
        # with a count as well: at most that many of the features above the cut
        capped = Relief(2, threshold=threshold).fit(X, y)
        expect = np.zeros(X.shape[1], dtype=bool)
        expect[order[:2]] = True
        np.testing.assert_array_equal(capped.support_, expect & (w >= cut))
    # a fraction, and the default (half)
    np.testing.assert_array_equal(np.flatnonzero(Relief(0.5).fit(X, y).support_),
                                  np.sort(order[:3]))
    np.testing.assert_array_equal(Relief().fit(X, y).support_, Relief(3).fit(X, y).support_)
    # ranking_ is scikit-learn's: rank of each feature, 1 = best
    np.testing.assert_array_equal(np.argsort(Relief().fit(X, y).ranking_), order)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_features_to_select": 0}, ValueError, "n_features_to_select: must be in"),
    ({"n_features_to_select": 7}, ValueError, "n_features=6"),
    ({"n_features_to_select": 1.5}, ValueError, "n_features_to_select: a float"),
    ({"n_features_to_select": "3"}, TypeError, "n_features_to_select"),
    ({"threshold": "max"}, ValueError, "threshold: expected"),
    ({"threshold": "x*mean"}, ValueError, "threshold: the scale"),
    ({"threshold": [1]}, TypeError, "threshold"),
])
def test_bad_selection_parameters_are_named(classification, kwargs, error, match):
    X, y = classification
    with pytest.raises(error, match=match):
        Relief(**kwargs).fit(X, y)


def test_plus_l_minus_r_names_the_features_it_lacks(classification):
    # "auto" / "best" on too few features: the message speaks of the arguments given (it
    # said "got 0 + 1 > 1" before, the size the core derives from "auto")
    X, y = classification
    for l, r, need in [(2, 1, 2), (1, 2, 2), (1, 3, 2), (3, 2, 3)]:
        with pytest.raises(ValueError, match=f"needs at least {need} features, got "
                                             f"n_features = {need - 1}"):
            fastfs.plus_l_minus_r(X[:, :need - 1], y, l=l, r=r)
        assert fastfs.plus_l_minus_r(X[:, :need], y, l=l, r=r).support.any()


def test_function_parameters_are_checked_in_fit_by_the_function(classification):
    X, y = classification
    selector = Simba(utility="zero_one")  # stored as given ...
    with pytest.raises(ValueError, match="utility"):  # ... refused by fastfs.simba in fit
        selector.fit(X, y)


# ------------------------------------------------------------------------------------------
# the filter selector equals scikit-learn's selectors with the fastfs filter as score_func


@pytest.mark.parametrize("mode, param, reference", [
    ("k_best", 2, SelectKBest), ("percentile", 40, SelectPercentile),
    ("fpr", 0.05, SelectFpr), ("fdr", 0.05, SelectFdr), ("fwe", 0.05, SelectFwe)])
@pytest.mark.parametrize("score_func", ["anova_f", "t_test"])
def test_filter_selector_equals_scikit_learn(classification, mode, param, reference,
                                             score_func):
    X, y = classification
    func = getattr(filters, score_func)
    ref = reference(func, **{"k" if mode == "k_best" else
                             "percentile" if mode == "percentile" else "alpha": param})
    ref.fit(X, y)
    fitted = FilterSelector(score_func, mode=mode, param=param).fit(X, y)
    np.testing.assert_array_equal(fitted.get_support(), ref.get_support())
    np.testing.assert_array_equal(fitted.scores_, ref.scores_)
    np.testing.assert_array_equal(fitted.pvalues_, ref.pvalues_)
    # a callable with options works too
    mi = FilterSelector(partial(filters.mutual_info, bins=4), mode="k_best", param=2).fit(X, y)
    np.testing.assert_array_equal(mi.scores_, filters.mutual_info(X, y, bins=4).scores)


@pytest.mark.parametrize("mode, param, reference", [
    ("k_best", 0, SelectKBest), ("k_best", 3, SelectKBest), ("k_best", "all", SelectKBest),
    ("percentile", 0, SelectPercentile), ("percentile", 37.5, SelectPercentile),
    ("percentile", 50, SelectPercentile), ("percentile", 100, SelectPercentile),
    ("fpr", 0.2, SelectFpr), ("fdr", 0.3, SelectFdr), ("fdr", 1e-6, SelectFdr),
    ("fwe", 0.5, SelectFwe)])
def test_filter_rules_with_ties_and_nan_equal_scikit_learn(classification, mode, param,
                                                            reference):
    X, y = classification
    scores = np.array([2.0, np.nan, 2.0, 5.0, 2.0, -1.0])
    pvalues = np.array([0.01, 0.5, 0.04, 0.001, 0.2, 0.06])

    def given(X, y):
        return fastfs.FilterResult(scores, pvalues)

    key = {"k_best": "k", "percentile": "percentile"}.get(mode, "alpha")
    ref = reference(given, **{key: param}).fit(X, y)
    fitted = FilterSelector(given, mode=mode, param=param).fit(X, y)
    np.testing.assert_array_equal(fitted.get_support(), ref.get_support())
    if mode == "k_best" and param != "all":  # ranking_ orders ties as k_best keeps them
        np.testing.assert_array_equal(fitted.ranking_ <= param, ref.get_support())


def test_filter_selector_errors(classification):
    X, y = classification
    with pytest.raises(ValueError, match="score_func: unknown filter 'anova'"):
        FilterSelector("anova").fit(X, y)
    with pytest.raises(ValueError, match="mode=.fdr. needs"):
        FilterSelector("s2n", mode="fdr", param=0.05).fit(X, y)
    with pytest.raises(ValueError, match="mode: unknown value 'best'"):
        FilterSelector(mode="best").fit(X, y)
    with pytest.raises(TypeError, match="score_func"):
        FilterSelector(3).fit(X, y)
    with pytest.raises(ValueError, match=r"score_func: 'z_test' needs the known standard "
                                         r"deviation; pass functools.partial"):
        FilterSelector("z_test").fit(X, y)
    # the partial the message names works, and gives z_test's scores
    y2 = (np.asarray(y) == np.asarray(y)[0]).astype(int)
    got = FilterSelector(partial(filters.z_test, sigma=2.0), mode="k_best", param=3).fit(X, y2)
    np.testing.assert_array_equal(got.scores_, filters.z_test(X, y2, sigma=2.0).scores)
    for mode, param, match in [("k_best", 7, "param: mode='k_best' keeps k in \\[0, "
                                               "n_features=6\\]"),
                               ("k_best", 2.0, "param: mode='k_best' takes an int"),
                               ("percentile", 101, "param: a percentile must be in"),
                               ("fdr", 2, "param: mode='fdr' takes a level in \\[0, 1\\]"),
                               ("fpr", "low", "param: mode='fpr' takes a real number")]:
        with pytest.raises((TypeError, ValueError), match=match):
            FilterSelector(mode=mode, param=param).fit(X, y)


def test_lasso_reports_its_sweeps_as_lasso_path_does(regression):
    X, y = regression
    for alpha in (0.05, 0.5):
        path = fastfs.lasso_path(X, y, alphas=[alpha])
        fitted = LassoSelector(alpha).fit(X, y)
        assert fitted.n_iter_ == fastfs.lasso(X, y, alpha).n_iter == path.n_iter[0] >= 1
        np.testing.assert_array_equal(fitted.support_, path.coefs[:, 0] != 0)


def test_linear_coefficients_are_least_squares_on_the_kept_columns(regression):
    X, y = regression
    fitted = OMP(2).fit(X, y)
    kept = fitted.support_
    coef, *_ = np.linalg.lstsq(X[:, kept], y, rcond=None)
    np.testing.assert_allclose(fitted.coef_[kept], coef, rtol=1e-10, atol=1e-12)
    assert np.all(fitted.coef_[~kept] == 0)


def test_import_fastfs_does_not_import_scikit_learn():
    import subprocess
    import sys

    code = ("import sys, fastfs; before = 'sklearn' in sys.modules; fastfs.sklearn.Simba; "
            "print(before, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False True"  # loaded on first use of fastfs.sklearn


# ------------------------------------------------------------------------------------------
# predictors under learned weights


def _split(X, y, n_train=36):
    return X[:n_train], y[:n_train], X[n_train:]


def test_weighted_knn_equals_knn_on_x_rescaled_by_simba_weights(classification):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = classification
    train, y_train, test = _split(X, y)
    res = fastfs.simba(train, y_train, n_restarts=1, random_state=3)
    # Simba's metric is ||z||_w with its raw w; its weights are w^2 / max(w^2)
    w = np.sqrt(np.asarray(res.weights))
    for k in (1, 3):
        ref = KNeighborsClassifier(k).fit(train * w, y_train)
        est = WeightedKNeighborsClassifier(Simba(1.0, n_restarts=1, random_state=3),
                                           n_neighbors=k).fit(train, y_train)
        np.testing.assert_allclose(est.feature_weights_, w, rtol=1e-12)
        np.testing.assert_array_equal(est.predict(test), ref.predict(test * w))
        np.testing.assert_array_equal(est.predict_proba(test), ref.predict_proba(test * w))
    # only the kept features, weighted / unweighted (the thesis' figure 4.5 comparison)
    top = np.asarray(res.ranking)[:2]
    w2 = np.zeros_like(w)
    w2[top] = w[top]
    for use_weights, scale in [(True, w2), (False, (w2 > 0).astype(float))]:
        est = WeightedKNeighborsClassifier(Simba(2, n_restarts=1, random_state=3),
                                           use_weights=use_weights).fit(train, y_train)
        ref = KNeighborsClassifier(1).fit(train * scale, y_train)
        np.testing.assert_array_equal(est.predict(test), ref.predict(test * scale))


def test_weighted_knn_under_a_gflip_subset_is_knn_on_the_subset(classification):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = classification
    train, y_train, test = _split(X, y)
    support = fastfs.gflip(train, y_train, random_state=0).support
    assert 0 < support.sum() < X.shape[1]
    est = WeightedKNeighborsClassifier(GFlip(random_state=0), n_neighbors=3).fit(train, y_train)
    ref = KNeighborsClassifier(3).fit(train[:, support], y_train)
    np.testing.assert_array_equal(est.predict(test), ref.predict(test[:, support]))
    np.testing.assert_array_equal(est.predict_proba(test), ref.predict_proba(test[:, support]))


def _soft_knn(train, y_train, test, w, k, beta):
    """The soft kNN estimate written from the formula: k nearest training samples under
    d_w(x, x') = sum_i w_i^2 (x_i - x'_i)^2, kernel exp(-d_w / beta)."""
    out = []
    for x in test:
        d = ((w * (x - train)) ** 2).sum(axis=1)
        near = np.argsort(d, kind="stable")[:k]
        kern = np.exp(-d[near] / beta)
        out.append((kern * y_train[near]).sum() / kern.sum())
    return np.array(out)


def test_soft_knn_regressor_equals_the_formula_with_rgs_weights(regression):
    X, y = regression
    train, y_train, test = _split(X, y)
    res = fastfs.rgs(train, y_train, random_state=2)
    est = SoftKNeighborsRegressor(RGS(1.0, random_state=2)).fit(train, y_train)
    assert est.n_neighbors_ == res.n_neighbors and est.beta_ == res.beta
    expect = _soft_knn(train, y_train, test, np.asarray(res.raw_weights), res.n_neighbors,
                       res.beta)
    np.testing.assert_allclose(est.predict(test), expect, rtol=1e-10)
    # explicit k and beta
    est = SoftKNeighborsRegressor(RGS(1.0, random_state=2), n_neighbors=4, beta=0.7)
    np.testing.assert_allclose(est.fit(train, y_train).predict(test),
                               _soft_knn(train, y_train, test, np.asarray(res.raw_weights),
                                         4, 0.7), rtol=1e-10)
    # unweighted on RGS's top 2 features: beta by the default rule under that metric
    est = SoftKNeighborsRegressor(RGS(2, random_state=2), use_weights=False).fit(train, y_train)
    w01 = np.zeros(X.shape[1])
    w01[np.asarray(res.ranking)[:2]] = 1.0
    k = res.n_neighbors
    d = ((train[:, None, :] - train[None, :, :]) ** 2 * w01 ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    beta = 0.5 * np.mean(np.sort(d, axis=1)[:, :k])
    np.testing.assert_allclose(est.beta_, beta, rtol=1e-10)
    np.testing.assert_allclose(est.predict(test), _soft_knn(train, y_train, test, w01, k, beta),
                               rtol=1e-10)
    # RGS's two best features predict the noiseless target 2 x0 - x2
    assert est.score(test, 2.0 * test[:, 0] - test[:, 2]) > 0


def test_predictor_errors(classification):
    X, y = classification
    with pytest.raises(TypeError, match="weighting: the weights of Relief do not define"):
        WeightedKNeighborsClassifier(Relief()).fit(X, y)
    # without the weights, any selector's kept features serve
    WeightedKNeighborsClassifier(Relief(), use_weights=False).fit(X, y)
    with pytest.raises(TypeError, match="weighting: expected a fastfs.sklearn selector"):
        WeightedKNeighborsClassifier(StandardScaler()).fit(X, y)
    with pytest.raises(TypeError, match="use_weights"):
        WeightedKNeighborsClassifier(use_weights="yes").fit(X, y)
    noise = np.random.default_rng(5).normal(size=(40, 3))
    labels = np.arange(40) % 2
    with pytest.warns(UserWarning, match="selected no feature"):
        assert not fastfs.gflip(noise, labels, random_state=0).support.any()  # keeps none
    with pytest.raises(ValueError, match="every feature weight 0"), \
            pytest.warns(UserWarning, match="selected no feature"):
        WeightedKNeighborsClassifier(GFlip(random_state=0)).fit(noise, labels)
    Xr, yr = X, X[:, 0]
    with pytest.raises(ValueError, match="n_neighbors: must be in"):
        SoftKNeighborsRegressor(n_neighbors=100).fit(Xr, yr)
    with pytest.raises(ValueError, match="beta: must be finite and > 0"):
        SoftKNeighborsRegressor(beta=-1.0).fit(Xr, yr)


def test_constructor_parameters_are_the_function_keywords():
    """SPEC 10: a selector's constructor parameters are its function's keyword arguments
    (plus its own selection parameters), with the same defaults. The exceptions are the
    documented ones: OMP, BackwardLeastSquares and GreedyLogistic call the size
    n_features_to_select, BranchAndBound keeps it as its own parameter, and LassoSelector and
    PlusLMinusR give defaults to arguments their functions require."""
    import inspect

    import fastfs.sklearn as skl
    renamed = {"OMP": {"n_features"}, "BackwardLeastSquares": {"n_features"},
               "GreedyLogistic": {"n_features"}, "BranchAndBound": {"n_features_to_select"}}
    given_defaults = {"LassoSelector": {"alpha"}, "PlusLMinusR": {"l", "r"}}
    checked = 0
    for name in skl.__all__:
        cls = getattr(skl, name)
        func = getattr(cls, "_function", None)
        if func is None:
            continue
        fparams = {k: v for k, v in inspect.signature(inspect.unwrap(func)).parameters.items()
                   if k not in ("X", "y") and v.kind is not v.VAR_KEYWORD}
        own = set(getattr(cls, "_own_params", ()))
        cparams = {k: v for k, v in inspect.signature(cls.__init__).parameters.items()
                   if k != "self" and k not in own}
        assert set(fparams) - set(cparams) == renamed.get(name, set()), name
        assert set(cparams) <= set(fparams), (name, set(cparams) - set(fparams))
        for k in set(fparams) & set(cparams):
            if k in given_defaults.get(name, ()):
                assert fparams[k].default is inspect.Parameter.empty, (name, k)
                continue
            fd, cd = fparams[k].default, cparams[k].default
            assert fd is cd or (type(fd) is type(cd) and fd == cd), (name, k, fd, cd)
        checked += 1
    assert checked >= 30


def test_relief_selectors_pass_distance_weights():
    g = np.random.default_rng(4)
    X = g.standard_normal((60, 5))
    y = (X[:, 0] > 0).astype(int)
    w = [1.0, 0.5, 2.0, 1.0, 0.0]
    for cls, func in [(ReliefF, fastfs.relieff), (SURF, fastfs.surf),
                      (MultiSURF, fastfs.multisurf)]:
        got = cls(3, distance_weights=w).fit(X, y)
        np.testing.assert_array_equal(got.scores_, func(X, y, distance_weights=w).weights)
        assert not np.array_equal(got.scores_, func(X, y).weights)


def test_relief_wrapper_selectors_equal_their_functions():
    """TuRF, VLS and IterativeRelief keep the weights of fastfs.turf / vls / iterative_relief
    with the method's own parameters passed through, and refuse a method parameter that is
    one of the selector's own."""
    g = np.random.default_rng(3)
    X = g.standard_normal((80, 9))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    cases = [
        (TuRF(4, pct=0.3, n_features_to_keep=3, method_params={"n_neighbors": 5}),
         fastfs.turf(X, y, pct=0.3, n_features_to_keep=3, n_neighbors=5)),
        (VLS(4, method="multisurf", n_subsets=6, subset_size=3, random_state=1),
         fastfs.vls(X, y, method="multisurf", n_subsets=6, subset_size=3, random_state=1)),
        (IterativeRelief(4, max_iter=4, method_params={"n_neighbors": 5}),
         fastfs.iterative_relief(X, y, max_iter=4, n_neighbors=5)),
    ]
    assert 1 <= cases[2][1].n_iter <= 4
    # n_iter counts the rounds of scoring: one when max_iter is 1; two when the second round
    # is within tol of the first round's transform (every score moves less than 10)
    assert fastfs.iterative_relief(X, y, max_iter=1, n_neighbors=5).n_iter == 1
    assert fastfs.iterative_relief(X, y, tol=10.0, n_neighbors=5).n_iter == 2
    for est, res in cases:
        est.fit(X, y)
        np.testing.assert_array_equal(est.scores_, res.weights)
        keep = np.zeros(9, dtype=bool)
        keep[np.asarray(res.ranking)[:4]] = True
        np.testing.assert_array_equal(est.get_support(), keep)
    with pytest.raises(ValueError, match="method_params: pct"):
        TuRF(method_params={"pct": 0.2}).fit(X, y)


@pytest.mark.parametrize("cls", [Relief, ReliefF, SURF, SURFstar, MultiSURF, MultiSURFstar])
def test_relief_selectors_take_sparse_word_counts_in_a_pipeline(cls):
    """The Relief-family functions score SciPy sparse X without densifying it; their selectors
    take it too (CSR, CSC or any other format scikit-learn converts), behind a vectoriser, and
    keep the scores of the dense matrix (the same sums, up to the order of additions)."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    g = np.random.default_rng(7)
    words = np.array(["apple", "banana", "fruit", "car", "engine", "wheel", "oil", "salad",
                      "tyre", "split", "road", "juice"])
    y = np.repeat([0, 1], 30)
    docs = [" ".join(g.choice(words[:6] if c == 0 else words[3:], size=5)) for c in y]
    vec = CountVectorizer()
    counts = vec.fit_transform(docs)
    dense = cls(n_features_to_select=4).fit(counts.toarray(), y)
    for X in (counts, sp.csc_matrix(counts), sp.coo_matrix(counts)):
        sel = cls(n_features_to_select=4).fit(X, y)
        np.testing.assert_allclose(sel.scores_, dense.scores_, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(sel.get_support(), dense.get_support())
        out = sel.transform(X)
        assert sp.issparse(out) and out.shape == (60, 4)
    pipe = make_pipeline(CountVectorizer(), cls(n_features_to_select=4), MultinomialNB())
    pipe.fit(docs, y)
    # the pipeline's selector saw the same sparse counts: the same words
    np.testing.assert_array_equal(pipe[1].get_support(), dense.get_support())
    assert pipe.predict(docs).shape == (60,)


def test_relief_wrapper_selectors_take_sparse_x():
    import scipy.sparse as sp

    X = sp.random(60, 12, density=0.3, random_state=0, format="csr")
    y = (X[:, 0].toarray().ravel() + X[:, 1].toarray().ravel() > 0.4).astype(int)
    for est in (TuRF(3, n_features_to_keep=4), VLS(3, n_subsets=4, subset_size=5, random_state=2),
                IterativeRelief(3, max_iter=3)):
        dense = clone(est).fit(X.toarray(), y)
        for A in (X, sp.csc_matrix(X)):
            sel = clone(est).fit(A, y)
            np.testing.assert_allclose(sel.scores_, dense.scores_, rtol=1e-12, atol=1e-14)
            np.testing.assert_array_equal(sel.get_support(), dense.get_support())


def test_lasso_selector_reports_a_sweep_at_alpha_max():
    """The default alpha = 1 lies at or above alpha_max on scikit-learn's check data: no sweep
    is needed, and n_iter_ was 0 where scikit-learn's Lasso reports 1 (check_transformer_n_iter
    failed; the other checks warn that no feature was selected, as SelectFromModel(Lasso())
    does there)."""
    from sklearn.utils.estimator_checks import check_transformer_n_iter

    check_transformer_n_iter("LassoSelector", LassoSelector())
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=30, n_features=4, random_state=0)
    est = LassoSelector(alpha=1e6).fit(X, y)
    assert est.n_iter_ == 1
    assert not est.support_.any()


@pytest.mark.parametrize("cls", [WeightedKNeighborsClassifier, SoftKNeighborsRegressor])
def test_knn_estimators_check_n_jobs_at_fit(cls):
    """n_jobs=0 fitted and failed at predict with joblib's message; a bool was taken."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    for bad, err in ((0, ValueError), (True, TypeError)):
        with pytest.raises(err, match="^n_jobs: "):
            cls(n_jobs=bad, random_state=0).fit(X, y)


def test_soft_knn_regressor_default_beta_at_k_equal_to_n_minus_1():
    # k = n_samples - 1 is legal: beta is half the mean squared leave-one-out distance to
    # every other sample (NumPy), not scikit-learn's error for k + 1 neighbours
    gen = np.random.default_rng(0)
    X = gen.standard_normal((12, 3))
    y = X[:, 0]
    est = SoftKNeighborsRegressor(SKS(1.0), use_weights=False, n_neighbors=11).fit(X, y)
    w = np.zeros(3)
    w[est.weighting_.support_] = 1.0
    d = (((X[:, None, :] - X[None, :, :]) * w) ** 2).sum(axis=2)
    off = ~np.eye(12, dtype=bool)
    np.testing.assert_allclose(est.beta_, 0.5 * d[off].mean(), rtol=1e-12)
    # the default k on three samples is 2 = n_samples - 1
    small = SoftKNeighborsRegressor(SKS(1.0), use_weights=False).fit(X[:3], y[:3])
    assert small.n_neighbors_ == 2 and np.isfinite(small.beta_)


def test_greedy_logistic_coef_is_per_input_feature():
    gen = np.random.default_rng(0)
    X = gen.standard_normal((60, 6))
    y = (X[:, 0] + X[:, 3] > 0).astype(int)
    est = GreedyLogistic(2).fit(X, y)
    assert est.coef_.shape == (1, 6)
    # scikit-learn's L2 logistic regression on the selected columns, in column order
    ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(X[:, est.support_], y)
    np.testing.assert_allclose(est.coef_[:, est.support_], ref.coef_, rtol=1e-5)
    np.testing.assert_array_equal(est.coef_[:, ~est.support_], 0.0)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-5)


@pytest.mark.parametrize("threshold, message", [
    (np.nan, "threshold: must be a number, got NaN"),
    ("*mean", r"threshold: the scale in '\*mean' is not a number"),
    (" * median", r"the scale in ' \* median' is not a number"),
    ("inf*mean", "must be finite"),
])
def test_weight_selector_refuses_nan_and_empty_threshold_scales(threshold, message):
    gen = np.random.default_rng(0)
    X = gen.standard_normal((30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=message):
        Relief(threshold=threshold).fit(X, y)
    # SelectFromModel's rule for the valid spellings
    w = fastfs.relief(X, y).weights
    for ok, value in (("2*mean", 2 * w.mean()), ("0.5 * median", 0.5 * np.median(w)),
                      ("mean", w.mean())):
        np.testing.assert_array_equal(Relief(threshold=ok).fit(X, y).support_, w >= value)


def test_turf_and_vls_tags_follow_the_method():
    for cls in (TuRF, VLS):
        assert cls(2).__sklearn_tags__().input_tags.allow_nan
        est = cls(2, method="relief")
        assert not est.__sklearn_tags__().input_tags.allow_nan
        X = np.random.default_rng(0).standard_normal((40, 5))
        X[3, 1] = np.nan
        with pytest.raises(ValueError, match="X: contains NaN"):
            est.fit(X, (X[:, 0] > 0).astype(int))


@pytest.mark.parametrize("task, params, error", [
    ("classification", {"alpha": "bogus"}, TypeError),
    ("classification", {"alpha": -5.0}, ValueError),
    ("regression", {"C": "bogus"}, TypeError),
    ("regression", {"C": 0.0}, ValueError),
])
def test_rfe_checks_both_learners_parameters_whichever_runs(task, params, error):
    gen = np.random.default_rng(0)
    X = gen.standard_normal((50, 7))
    y = X[:, 0] + X[:, 1]
    y = (y > 0).astype(int) if task == "classification" else y
    name = next(iter(params))
    with pytest.raises(error, match=f"^{name}: "):
        RecursiveFeatureElimination(3, task=task, **params).fit(X, y)


def test_selection_parameters_refused_before_the_method_runs_and_a_failed_refit_changes_nothing():
    # scikit-learn validates at the start of fit: a bad threshold or size is refused before
    # the method's work (a callback that counts steps sees none), and a refit that fails
    # leaves the earlier fit whole (transform still works on the data it was fitted for).
    from fastfs.sklearn import FilterSelector, ReliefF, Simba

    X = np.random.RandomState(0).randn(30, 6)
    y = np.arange(30) % 2
    steps = []
    with pytest.raises(ValueError, match="threshold"):
        Simba(threshold="bogus", callback=lambda s: steps.append(s.step)).fit(X, y)
    with pytest.raises(ValueError, match="n_features_to_select"):
        Simba(n_features_to_select=7, callback=lambda s: steps.append(s.step)).fit(X, y)
    assert steps == []
    for est, bad in ((FilterSelector(mode="k_best", param=5), X[:, :3]),
                     (ReliefF(n_features_to_select=5), X[:, :3])):
        est.fit(X, y)
        before = {k: v for k, v in vars(est).items() if k.endswith("_")}
        with pytest.raises(ValueError, match="param|n_features_to_select"):
            est.fit(bad, y)
        after = {k: v for k, v in vars(est).items() if k.endswith("_")}
        assert before.keys() == after.keys() and all(after[k] is before[k] for k in before)
        assert est.n_features_in_ == 6 and est.transform(X).shape == (30, 5)


def test_filter_selector_reads_scores_alone_and_names_a_bad_score_func():
    # As scikit-learn's selectors: a score function may return the scores alone (no p-value
    # modes then); a result of the wrong shape is an error naming score_func.
    from sklearn.feature_selection import GenericUnivariateSelect

    from fastfs.sklearn import FilterSelector

    X = np.random.RandomState(1).randn(30, 6)
    y = np.arange(30) % 2
    scores = lambda X, y: np.abs(X).sum(axis=0)  # noqa: E731
    for mode, param in (("k_best", 2), ("percentile", 50)):
        got = FilterSelector(scores, mode=mode, param=param).fit(X, y)
        want = GenericUnivariateSelect(scores, mode=mode, param=param).fit(X, y)
        np.testing.assert_array_equal(got.get_support(), want.get_support())
        assert got.pvalues_ is None
    with pytest.raises(ValueError, match="score_func: .*gives no p-values"):
        FilterSelector(scores, mode="fdr", param=0.1).fit(X, y)
    for bad, what in ((lambda X, y: np.arange(3.0), r"scores of shape \(3,\)"),
                      (lambda X, y: (np.arange(6.0), np.ones(2)), r"p-values of shape \(2,\)"),
                      (lambda X, y: (1, 2, 3), "sequence of 3 items")):
        with pytest.raises(ValueError, match=f"score_func: .*{what}"):
            FilterSelector(bad, mode="k_best", param=1).fit(X, y)


def test_a_dataframe_column_of_strings_is_named_as_the_functions_name_it():
    import pandas as pd

    from fastfs.sklearn import FilterSelector, ReliefF

    df = pd.DataFrame({"snp": ["AA", "Aa", "aa", "AA"] * 10, "x": range(40)})
    y = [0, 1] * 20
    with pytest.raises(TypeError, match="X: column 'snp'") as direct:
        fastfs.relieff(df, y)
    for est in (ReliefF(), FilterSelector()):
        with pytest.raises(TypeError, match="X: column 'snp'") as wrapped:
            est.fit(df, y)
        assert str(wrapped.value) == str(direct.value)
