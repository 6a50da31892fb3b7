"""ORDERED-FS, STANDARD-WRAP and ORDERED-FS2 against a NumPy reference of Ng's beam search,
exhaustive search per size, and bad input."""

import itertools

import numpy as np
import pytest

import fastfs
import reference as ref


def _problem(m=90, n=5, seed=0):
    X, y = fastfs.datasets.make_ng(m, n, random_state=seed)
    return X, y


def test_ordered_fs_wide_beam_equals_exhaustive_per_size():
    X, y = _problem(m=80, n=5, seed=1)
    res = fastfs.ordered_fs(X, y, width=10, random_state=4, C=0.5)  # C(5, 2) = 10 subsets
    S1 = res.parts[0]
    for r in range(1, 6):
        best, best_S = None, None
        for S in itertools.combinations(range(5), r):  # lexicographic: ties keep the first
            J = ref.logistic_error_J(X, y, S, S1, S1, 0.5)[0]
            if best is None or (J > best and not ref._tied(J, best)):
                best, best_S = J, S
        assert res.per_size[r] == best_S
    # The reported errors, from the reference learner.
    for r, S in enumerate(res.per_size):
        assert res.train_errors[r] == pytest.approx(ref.error_rate(X, y, S, S1, S1, 0.5))
        assert res.holdout_errors[r] == pytest.approx(
            ref.error_rate(X, y, S, S1, res.parts[1], 0.5))
    r = int(np.argmin(res.holdout_errors))
    assert res.n_selected == r and tuple(res.selected) == res.per_size[r]


@pytest.mark.parametrize("seed", [0, 3])
def test_standard_wrap_against_reference(seed):
    X, y = _problem(m=90, n=6, seed=seed)
    res = fastfs.standard_wrap(X, y, holdout=0.4, width=3, max_features=3, random_state=seed)
    parts = res.parts
    assert parts[1].size == 36 and np.union1d(parts[0], parts[1]).size == 90
    per_size, Js = ref.wrapper_beam(X, y, parts, 1, 3, 3, 1.0)
    assert res.per_size == tuple(per_size)
    np.testing.assert_allclose(res.history, Js, atol=1e-9)
    r = ref.standard_wrap_choice(X, y, parts, per_size, 1.0)
    assert res.n_selected == r and tuple(res.selected) == per_size[r]


def test_ordered_fs2_against_reference():
    X, y = _problem(m=120, n=6, seed=5)
    res = fastfs.ordered_fs2(X, y, width=2, max_features=4, random_state=2)
    parts = res.parts
    assert [p.size for p in parts] == [60, 30, 30]
    per_size, Js = ref.wrapper_beam(X, y, parts, 1, 2, 4, 1.0)
    assert res.per_size == tuple(per_size)
    errs = [ref.error_rate(X, y, S, parts[0], parts[2], 1.0) for S in per_size]
    np.testing.assert_allclose(res.test_errors, errs)
    assert res.n_selected == int(np.argmin(errs))


def test_sklearn_learner_gives_the_same_beam():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression

    X, y = _problem(m=80, n=3, seed=2)
    ours = fastfs.ordered_fs(X, y, width=1, max_features=2, random_state=0)
    theirs = fastfs.ordered_fs(X, y, width=1, max_features=2, random_state=0,
                               learner=LogisticRegression(tol=1e-10, max_iter=1000))
    assert ours.per_size == theirs.per_size
    np.testing.assert_allclose(ours.history, theirs.history, atol=1e-7)
    np.testing.assert_allclose(ours.holdout_errors, theirs.holdout_errors)


def test_make_ng_targets():
    X, y = fastfs.datasets.make_ng(4000, 5, n_relevant=3, noise=0.0, random_state=0)
    np.testing.assert_array_equal(y, (X[:, :3].sum(axis=1) > 0).astype(int))
    X, y = fastfs.datasets.make_ng(4000, 5, noise=0.3, random_state=0)
    agree = np.mean(y == (X[:, 0] + 0.2 > 0))
    assert 0.67 < agree < 0.73
    with pytest.raises(ValueError, match="n_relevant"):
        fastfs.datasets.make_ng(10, 5, n_relevant=2)


def test_wrapper_bad_input():
    X, y = _problem(m=60, n=4)
    for gamma in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"holdout: must be in \(0, 1\)"):
            fastfs.ordered_fs(X, y, holdout=gamma)
    with pytest.raises(ValueError, match="max_features: 5 exceeds n_features = 4"):
        fastfs.standard_wrap(X, y, max_features=5)
    with pytest.raises(ValueError, match="fractions"):
        fastfs.ordered_fs2(X, y, fractions=(0.5, 0.5, 0.5))
    yy = np.zeros(60, dtype=int)
    yy[7] = 1
    # One sample of class 1: it stays in S1 (the split is stratified), S2 holds class 0 only.
    with pytest.raises(ValueError, match="y: the hold-out part S2 holds a single class"):
        fastfs.ordered_fs(X, yy, holdout=0.3, random_state=0, max_features=1)
    # Two samples of class 1: stratification puts one in each part.
    yy[8] = 1
    res = fastfs.ordered_fs(X, yy, holdout=0.3, random_state=0, max_features=1)
    assert yy[res.parts[0]].sum() == 1 and yy[res.parts[1]].sum() == 1
    assert res.parts[1].size == 18
    with pytest.raises(ValueError, match="C: must be finite"):
        fastfs.ordered_fs(X, y, C=np.inf)
    with pytest.raises(TypeError, match="learner"):
        fastfs.ordered_fs(X, y, learner="logistic")


_CLASSIFYING = {
    "rfe": lambda X, y: fastfs.rfe(X, y, 2),
    "greedy_logistic": lambda X, y: fastfs.greedy_logistic(X, y, 2),
    "ordered_fs": lambda X, y: fastfs.ordered_fs(X, y, random_state=0),
    "standard_wrap": lambda X, y: fastfs.standard_wrap(X, y, random_state=0),
    "ordered_fs2": lambda X, y: fastfs.ordered_fs2(X, y, random_state=0),
    "RecursiveFeatureElimination": lambda X, y: fastfs.sklearn.RecursiveFeatureElimination(
        n_features_to_select=2).fit(X, y),
    "GreedyLogistic": lambda X, y: fastfs.sklearn.GreedyLogistic(n_features_to_select=2).fit(X, y),
}


@pytest.mark.parametrize("name", sorted(_CLASSIFYING))
def test_classifying_wrappers_refuse_a_real_target(name):
    # A real y read as labels makes almost every sample a class of its own: the logistic fits
    # then choose nearly at random (rfe chose features 3 and 8 of y = 2 x0 + x1 + noise).
    # scikit-learn's RFE(LogisticRegression()) refuses such a y too ("Unknown label type").
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    y = 2 * X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(80)
    with pytest.raises(ValueError, match=r"^y: .*needs class labels, got continuous values"):
        _CLASSIFYING[name](X, y)
    # Integer-valued floats are labels, and give what the same labels as ints give.
    labels = (y > 0).astype(np.int64)
    support = [r.get_support() if hasattr(r, "get_support") else r.support
               for r in (_CLASSIFYING[name](X, labels.astype(np.float64)),
                         _CLASSIFYING[name](X, labels))]
    np.testing.assert_array_equal(support[0], support[1])


def test_rfe_regression_takes_the_real_target_the_classifier_refuses():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    y = 2 * X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(80)
    assert sorted(fastfs.rfe(X, y, 2, task="regression").selected) == [0, 1]
    with pytest.raises(ValueError, match=r"pass task='regression' for a real target"):
        fastfs.rfe(X, y, 2)


def test_hold_out_parts_of_two_rows_or_more_hold_two_classes_when_they_can():
    # 7 + 3 rows split 0.5 / 0.25 / 0.25: the proportional quotas of S2 (two rows) were both
    # the larger class's, a hold-out part whose error cannot compare hypotheses
    from fastfs.criteria import split_rows

    codes = np.array([0] * 7 + [1] * 3)
    for seed in range(6):
        parts = split_rows(codes, (0.5, 0.25, 0.25), seed)
        assert sorted(np.concatenate(parts).tolist()) == list(range(10))
        assert [p.size for p in parts] == [6, 2, 2]
        for p in parts:
            assert set(codes[p]) == {0, 1}
    # the quotas of a part that already holds two classes are the proportional ones
    codes = np.array([0] * 12 + [1] * 8)
    parts = split_rows(codes, (0.5, 0.5), 0)
    assert np.bincount(codes[parts[1]]).tolist() == [6, 4]
    # a one-feature fit on 10 rows (scikit-learn's check_fit2d_1feature) runs
    X = 3 * np.random.RandomState(0).uniform(size=(10, 1))
    y = X[:, 0].astype(int)
    assert np.bincount(y).tolist() == [0, 7, 3]
    fastfs.ordered_fs2(X, y, random_state=1)


def test_wrapper_split_messages_print_labels_as_python_values():
    X, _ = _problem(m=40, n=4)
    y = np.r_[np.zeros(38, dtype=np.int64), [7, 7]]  # the two 7s: one stays in S1, one in S2
    with pytest.raises(ValueError, match=r"S3 holds a single class \(0\);"):
        fastfs.ordered_fs2(X, y, fractions=(0.5, 0.45, 0.05), random_state=0)


def test_wrapper_split_blames_y_when_its_classes_hold_every_sample_back():
    X, _ = _problem(m=40, n=4)
    y = np.arange(40)  # forty classes of one sample: each keeps its sample in S1
    with pytest.raises(ValueError, match=r"^y: the split of 40 samples by \(0\.7, 0\.3\) "
                       r"leaves a part empty: every class keeps one sample in the first part"):
        fastfs.ordered_fs(X, y)


@pytest.mark.parametrize("classes, n_select, step", [(2, 3, 1), (3, 2, 2), (2, None, 0.3)])
def test_rfe_equals_sklearn_ranking(classes, n_select, step):
    pytest.importorskip("sklearn")
    from sklearn.feature_selection import RFE
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(classes)
    X = rng.standard_normal((120, 9)) * rng.uniform(0.5, 2, 9)
    z = X[:, 0] - X[:, 3] + 0.5 * X[:, 5] + rng.standard_normal(120)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))
    est = LogisticRegression(C=0.3, tol=1e-10, max_iter=10000)
    theirs = RFE(est, n_features_to_select=n_select, step=step).fit(X, y)
    ours = fastfs.rfe(X, y, n_select, step=step, C=0.3)
    np.testing.assert_array_equal(ours.ranks, theirs.ranking_)
    np.testing.assert_array_equal(ours.support, theirs.support_)
    np.testing.assert_allclose(ours.coef, theirs.estimator_.coef_, atol=1e-6)
    if step == 1:  # the same elimination with scikit-learn's estimator inside
        with_est = fastfs.rfe(X, y, n_select, step=step, estimator=est)
        np.testing.assert_array_equal(with_est.ranks, theirs.ranking_)


def test_rfe_ridge_and_bad_input():
    pytest.importorskip("sklearn")
    from sklearn.feature_selection import RFE
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 7))
    t = X @ np.array([3.0, 0, -2, 0, 0.5, 1, 0]) + 0.1 * rng.standard_normal(50)
    ours = fastfs.rfe(X, t, 2, task="regression", alpha=2.0)
    theirs = RFE(Ridge(alpha=2.0), n_features_to_select=2).fit(X, t)
    np.testing.assert_array_equal(ours.ranks, theirs.ranking_)
    with pytest.raises(ValueError, match="n_features_to_select: must be in"):
        fastfs.rfe(X, t, 8, task="regression")
    with pytest.raises(ValueError, match="step"):
        fastfs.rfe(X, t, 2, step=0, task="regression")
    with pytest.raises(ValueError, match="task"):
        fastfs.rfe(X, t, 2, task="ranking")


@pytest.mark.parametrize("classes", [2, 3])
def test_greedy_logistic_gradient_rule_against_sklearn(classes):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(10 + classes)
    X = rng.standard_normal((100, 8))
    z = 1.5 * X[:, 2] - X[:, 6] + 0.7 * X[:, 0] + rng.standard_normal(100)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))
    res = fastfs.greedy_logistic(X, y, 3, C=2.0)
    # The reference: gradients of the summed log-loss at scikit-learn's refits.
    Y = np.eye(classes)[y][:, 1:] if classes == 2 else np.eye(classes)[y]
    chosen = []
    for _ in range(3):
        if chosen:
            est = LogisticRegression(C=2.0, tol=1e-12, max_iter=10000).fit(X[:, chosen], y)
            P = est.predict_proba(X[:, chosen])
        else:
            P = np.tile(np.bincount(y) / y.size, (y.size, 1))
        P = P[:, 1:] if classes == 2 else P
        G = np.linalg.norm(X.T @ (P - Y), axis=1)
        G[chosen] = -1
        chosen.append(int(np.argmax(G)))
    assert list(res.selected) == chosen
    est = LogisticRegression(C=2.0, tol=1e-12, max_iter=10000).fit(X[:, chosen], y)
    np.testing.assert_allclose(res.coef, est.coef_, atol=1e-6)
    with pytest.raises(ValueError, match="n_features: 9 exceeds"):
        fastfs.greedy_logistic(X, y, 9)


def test_greedy_logistic_n_jobs_bounds_the_blas_and_keeps_the_answer():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 40))
    y = (X[:, 3] - X[:, 7] + 0.5 * rng.standard_normal(300) > 0).astype(int)
    seen = []

    def blas_threads(state):
        seen.append({p["num_threads"] for p in threadpoolctl.threadpool_info()
                     if p["user_api"] == "blas"})

    one = fastfs.greedy_logistic(X, y, 4, n_jobs=1, callback=blas_threads)
    assert seen and all(s == {1} for s in seen)
    two = fastfs.greedy_logistic(X, y, 4, n_jobs=2)
    np.testing.assert_array_equal(one.selected, two.selected)
    np.testing.assert_allclose(one.coef, two.coef, rtol=1e-10)
    with pytest.raises(ValueError, match="n_jobs"):
        fastfs.greedy_logistic(X, y, 4, n_jobs=0)
    assert fastfs.sklearn.GreedyLogistic(2, n_jobs=1).fit(X, y).support_.sum() == 2


def test_wrappers_do_not_depend_on_threads():
    X, y = fastfs.datasets.make_ng(150, 12, n_relevant=3, random_state=4)
    one = fastfs.ordered_fs(X, y, width=4, max_features=4, random_state=1, n_jobs=1)
    two = fastfs.ordered_fs(X, y, width=4, max_features=4, random_state=1, n_jobs=2)
    assert one.per_size == two.per_size
    np.testing.assert_array_equal(one.history, two.history)
    np.testing.assert_array_equal(one.holdout_errors, two.holdout_errors)


def test_h0_predicts_the_first_of_the_most_frequent_classes():
    """h_0 (no features) predicts the most frequent class of S1, ties to the first (SPEC
    7.3). With three classes the solver left tied intercepts a bit apart, so h_0 predicted
    class 2 of [5, 6, 6] and ORDERED-FS chose r = 0 where r = 1 is right."""
    y = np.repeat([0, 1, 2], [8, 8, 9])
    X = np.random.default_rng(0).normal(size=(25, 2))
    r = fastfs.wrappers.ordered_fs(X, y, random_state=0)
    S1, S2 = r.parts
    counts = np.bincount(y[S1], minlength=3)
    h0 = int(np.flatnonzero(counts == counts.max())[0])
    assert r.holdout_errors[0] == pytest.approx(np.mean(y[S2] != h0))
    for seed in range(5):  # two classes and three, other splits: the same rule
        for k in (2, 3):
            yk = np.arange(24) % k
            res = fastfs.wrappers.ordered_fs(X[:24], yk, random_state=seed)
            a, b = res.parts
            c = np.bincount(yk[a], minlength=k)
            assert res.holdout_errors[0] == pytest.approx(
                np.mean(yk[b] != np.flatnonzero(c == c.max())[0]))


def test_learners_that_are_not_classifiers_are_refused():
    """A regressor or a clusterer also has fit and predict: every error came out 1.0."""
    from sklearn.cluster import KMeans
    from sklearn.linear_model import Ridge

    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.arange(40) % 2
    for learner in (Ridge(), KMeans(2, n_init=1)):
        for func in (fastfs.wrappers.ordered_fs, fastfs.wrappers.standard_wrap,
                     fastfs.wrappers.ordered_fs2):
            with pytest.raises(TypeError, match="^learner: expected None"):
                func(X, y, learner=learner, random_state=0)


def test_rfe_step_must_be_finite():
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match="^step: "):
        fastfs.wrappers.rfe(X, np.arange(20) % 2, 2, step=float("inf"))


def test_rfe_history_is_minus_each_rounds_loss():
    """history repeated minus n_features_per_round; it is the loss of each round's fit, as
    greedy_logistic's is (checked against the learner's own fit of those features)."""
    from fastfs.learners import logistic_regression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    log = []
    res = fastfs.wrappers.rfe(X, y, 2, callback=lambda st: log.append(st.score))
    assert res.history.shape == res.n_features_per_round.shape == (4,)
    assert np.all(np.diff(res.history) <= 1e-9)  # fewer features never fit better
    first = logistic_regression(X, y, tol=1e-8)
    assert res.history[0] == pytest.approx(-first.loss, rel=1e-6)
    np.testing.assert_allclose(log, res.history)


def test_a_grid_over_the_wrapped_estimators_parameters():
    """criteria.Wrapper had no get_params / set_params, so a grid over the estimator inside
    it (mlxtend's "sfs__estimator__n_neighbors") failed with an AttributeError. The grid
    equals the loop over separately built pipelines."""
    from sklearn.base import clone
    from sklearn.datasets import load_iris
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline

    from fastfs.criteria import Wrapper
    from fastfs.sklearn import SFS

    X, y = load_iris(return_X_y=True)

    def pipe(k):
        return Pipeline([("sfs", SFS(2, criterion=Wrapper(KNeighborsClassifier(k), cv=5))),
                         ("knn", KNeighborsClassifier(2))])

    grid = GridSearchCV(pipe(5), {"sfs__criterion__estimator__n_neighbors": [1, 3, 5]},
                        cv=3).fit(X, y)
    loop = [cross_val_score(pipe(k), X, y, cv=3).mean() for k in (1, 3, 5)]
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], loop, rtol=1e-12)
    w = Wrapper(KNeighborsClassifier(3), cv=4)
    assert w.get_params()["estimator__n_neighbors"] == 3
    c = clone(w)
    assert c.cv == 4 and c.estimator is not w.estimator
    assert c.set_params(estimator__n_neighbors=7, cv=3) is c
    assert c.estimator.n_neighbors == 7 and c.cv == 3 and w.estimator.n_neighbors == 3
    with pytest.raises(ValueError, match="Invalid parameter 'bogus' for Wrapper"):
        c.set_params(bogus=1)
    with pytest.raises(TypeError, match="estimator: expected a scikit-learn estimator"):
        c.set_params(estimator=3, cv=9)
    assert c.estimator.n_neighbors == 7 and c.cv == 3    # nothing changed
