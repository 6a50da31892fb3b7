"""The linear learners (logistic regression, ridge) and the learner criteria train_error,
holdout_error, aic and bic, against scikit-learn and the formulas."""

import numpy as np
import pytest

import fastfs
from fastfs import criteria as cr
from fastfs.learners import logistic_regression, ridge_regression

sklearn = pytest.importorskip("sklearn")
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402


def _data(m=150, n=5, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    z = X[:, 0] - 0.5 * X[:, 1] + rng.standard_normal(m)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


@pytest.mark.parametrize("classes, C", [(2, 1.0), (2, 0.05), (3, 1.0), (4, 10.0)])
def test_logistic_equals_sklearn(classes, C):
    X, y = _data(classes=classes, seed=classes)
    ours = logistic_regression(X, y, C=C)
    ref = LogisticRegression(C=C, tol=1e-10, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(ours.coef, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept, ref.intercept_, atol=1e-6)
    assert ours.converged
    np.testing.assert_allclose(ours.loss, log_loss(y, ref.predict_proba(X), normalize=False),
                               rtol=1e-8)


@pytest.mark.parametrize("classes", [2, 3])
def test_logistic_warm_start_equals_cold(classes):
    X, y = _data(classes=classes, seed=7)
    cold = logistic_regression(X, y, C=0.7, features=[0, 1, 2, 3])
    outputs = cold.coef.shape[0]
    # The parent's weights (features 0, 1, 2) with a zero for the new feature 3.
    parent = logistic_regression(X, y, C=0.7, features=[0, 1, 2])
    warm = logistic_regression(X, y, C=0.7, features=[0, 1, 2, 3],
                               coef_init=np.hstack([parent.coef, np.zeros((outputs, 1))]),
                               intercept_init=parent.intercept)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-9)
    np.testing.assert_allclose(warm.intercept, cold.intercept, atol=1e-9)
    assert warm.n_iter <= cold.n_iter


def test_logistic_features_and_starting_points_checked():
    X, y = _data(classes=3, seed=2)
    # no feature: the intercept-only model, which scikit-learn fits on a column of zeros
    empty = logistic_regression(X, y, features=[])
    assert empty.coef.shape == (3, 0)
    ref = LogisticRegression(tol=1e-10, max_iter=10000).fit(np.zeros((X.shape[0], 1)), y)
    np.testing.assert_allclose(empty.intercept, ref.intercept_, atol=1e-6)
    for bad, message in ((np.full((3, 5), np.nan), "coef_init: contains NaN or infinity"),
                         (np.zeros(5), r"coef_init: expected shape \(3, 5\)"),
                         ("abc", "coef_init: expected an array of numbers")):
        with pytest.raises((ValueError, TypeError), match=message):
            logistic_regression(X, y, coef_init=bad)
    with pytest.raises(ValueError, match=r"intercept_init: expected shape \(3,\)"):
        logistic_regression(X, y, intercept_init=[0.0, 1.0])


def test_logistic_l1_path_ignores_constant_columns():
    from fastfs.learners import logistic_l1_path

    y = np.r_[np.zeros(50), np.ones(50)]
    with pytest.raises(ValueError, match="X: no feature is correlated with y"):
        logistic_l1_path(np.ones((100, 3)), y)  # C_min was about 5e14 from rounding
    X, y = _data(m=100, n=3, seed=4)
    with_constant = np.column_stack([X[:, :1], np.full(100, 7.0), X[:, 1:]])
    a = logistic_l1_path(X, y, 4)
    b = logistic_l1_path(with_constant, y, 4)
    np.testing.assert_allclose(b.Cs, a.Cs, rtol=1e-12)  # C_min from the varying columns
    np.testing.assert_array_equal(b.coefs[1], 0.0)


def test_logistic_separable_needs_finite_C():
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match="C: must be finite.*separable"):
        logistic_regression(X, y, C=np.inf)
    with pytest.raises(ValueError, match="C: must be > 0"):
        logistic_regression(X, y, C=0.0)
    # A large finite C on separable data: a finite optimum, equal to scikit-learn's.
    ours = logistic_regression(X, y, C=100.0)
    ref = LogisticRegression(C=100.0, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef, ref.coef_, rtol=1e-5)


def test_ridge_equals_sklearn():
    X, _ = _data(seed=3)
    t = X @ np.arange(5.0) + np.random.default_rng(3).standard_normal(X.shape[0])
    for alpha in (0.0, 2.5):
        ours = ridge_regression(X, t, alpha=alpha, features=[1, 3, 4])
        ref = Ridge(alpha=alpha).fit(X[:, [1, 3, 4]], t)
        np.testing.assert_allclose(ours.coef[0], ref.coef_, atol=1e-9)
        np.testing.assert_allclose(ours.intercept[0], ref.intercept_, atol=1e-9)


def _sk_error_score(Xf, yf, Xs, ys, C):
    """J of train_error / holdout_error from scikit-learn: -(errors + l/(1+l)) / rows."""
    est = LogisticRegression(C=C, tol=1e-12, max_iter=10000).fit(Xf, yf)
    errors = np.sum(est.predict(Xs) != ys)
    l = log_loss(ys, est.predict_proba(Xs), labels=est.classes_)
    return -(errors + l / (1 + l)) / ys.shape[0]


@pytest.mark.parametrize("classes", [2, 3])
def test_error_criteria_against_sklearn(classes):
    X, y = _data(m=120, classes=classes, seed=11)
    S = [0, 2, 3]
    got = cr.evaluate(X, y, S, cr.TrainError(C=0.5))
    assert got == pytest.approx(_sk_error_score(X[:, S], y, X[:, S], y, 0.5), abs=1e-7)
    crit = cr.HoldoutError(C=0.5, holdout=0.25, random_state=3)
    fit, score = cr.split_rows(np.asarray(y), (0.75, 0.25), 3)
    assert fit.size == 90 and np.intersect1d(fit, score).size == 0
    # Stratified: each class in proportion in the held-out part.
    np.testing.assert_allclose(np.bincount(y[score]), np.bincount(y) / 4, atol=1)
    got = cr.evaluate(X, y, S, crit)
    ref = _sk_error_score(X[fit][:, S], y[fit], X[score][:, S], y[score], 0.5)
    assert got == pytest.approx(ref, abs=1e-7)


@pytest.mark.parametrize("classes", [2, 3])
def test_aic_bic_formulas(classes):
    X, y = _data(m=100, classes=classes, seed=5)
    S = [1, 4]
    est = LogisticRegression(C=3.0, tol=1e-12, max_iter=10000).fit(X[:, S], y)
    lnL = -log_loss(y, est.predict_proba(X[:, S]), normalize=False)
    K = (len(S) + 1) * (1 if classes == 2 else classes)
    assert cr.evaluate(X, y, S, cr.AIC(C=3.0)) == pytest.approx(2 * lnL - 2 * K, abs=1e-6)
    assert cr.evaluate(X, y, S, cr.BIC(C=3.0)) == pytest.approx(2 * lnL - K * np.log(100),
                                                                abs=1e-6)


def test_aic_bic_gaussian_formulas():
    X, _ = _data(m=80, seed=6)
    t = 2 * X[:, 0] + np.random.default_rng(6).standard_normal(80)
    S = [0, 3]
    A = np.column_stack([X[:, S], np.ones(80)])
    rss = np.sum((t - A @ np.linalg.lstsq(A, t, rcond=None)[0]) ** 2)
    lnL = -40 * (np.log(2 * np.pi * rss / 80) + 1)
    assert cr.evaluate(X, t, S, cr.AIC(task="regression")) == pytest.approx(2 * lnL - 6)
    assert cr.evaluate(X, t, S, cr.BIC(task="regression")) == pytest.approx(
        2 * lnL - 3 * np.log(80))
    # AIC in a search: sfs picks the relevant feature first.
    assert fastfs.sfs(X, t, 1, criterion=cr.AIC(task="regression")).selected[0] == 0


def test_searches_use_learner_criteria_with_warm_starts():
    # The beam's warm-started scores equal from-scratch evaluations of the same subsets.
    X, y = _data(m=100, n=6, classes=3, seed=9)
    res = fastfs.beam(X, y, 3, criterion="train_error", width=3)
    for subset, J in zip(res.subsets, res.history):
        assert J == pytest.approx(cr.evaluate(X, y, list(subset), "train_error"), abs=1e-10)
    res = fastfs.sbs(X, y, 2, criterion="bic")
    for subset, J in zip(res.subsets, res.history):
        assert J == pytest.approx(cr.evaluate(X, y, list(subset), "bic"), abs=1e-7)


def test_branch_and_bound_refuses_aic_bic():
    X, y = _data(m=60, seed=1)
    for name in ("aic", "bic"):
        with pytest.raises(ValueError, match="AIC and BIC are not monotone"):
            fastfs.branch_and_bound(X, y, 2, criterion=name, assume_monotone=True)


def test_holdout_bad_input():
    X, y = _data(m=40, seed=2)
    with pytest.raises(ValueError, match=r"holdout: must be in \(0, 1\)"):
        cr.evaluate(X, y, [0], cr.HoldoutError(holdout=1.0))
    y1 = y.copy()
    y1[:10] = 0
    y1[10:] = 1
    with pytest.raises(ValueError, match="hold-out part holds a single class"):
        cr.evaluate(X, y1, [0], cr.HoldoutError(split=(np.arange(5, 40), np.arange(5))))
    with pytest.raises(ValueError, match="lack class"):
        cr.evaluate(X, y1, [0], cr.HoldoutError(split=(np.arange(10, 40), np.arange(12))))
    with pytest.raises(ValueError, match="task"):
        cr.evaluate(X, y, [0], cr.TrainError(task="ranking"))


def test_logistic_many_columns_conjugate_gradient_path():
    # Two classes and more than 64 columns: the Newton step is solved by conjugate gradients.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((150, 90)) * rng.uniform(0.2, 3, 90)
    y = (X[:, 0] + X[:, 1] + rng.standard_normal(150) > 0).astype(int)
    ours = logistic_regression(X, y, C=0.5)
    ref = LogisticRegression(C=0.5, tol=1e-10, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept, ref.intercept_, atol=1e-6)
    warm = logistic_regression(X, y, C=0.5, coef_init=ours.coef * 0.9,
                               intercept_init=ours.intercept)
    np.testing.assert_allclose(warm.coef, ours.coef, atol=1e-9)


def test_logistic_l1_path_kkt_and_sklearn():
    from fastfs.learners import logistic_l1_path

    rng = np.random.default_rng(8)
    X = rng.standard_normal((120, 10))
    y = (X[:, 0] - 0.7 * X[:, 4] + rng.standard_normal(120) > 0).astype(int)
    path = logistic_l1_path(X, y, 6)
    assert np.all(np.diff(path.Cs) > 0)
    assert np.count_nonzero(path.coefs[:, 0]) == 0  # C_min: every weight zero
    for c in range(path.Cs.size):
        w, b = path.coefs[:, c], path.intercepts[c]
        g = X.T @ (y - 1 / (1 + np.exp(-(X @ w + b))))  # minus the log-loss gradient
        lam = 1 / path.Cs[c]
        nz = w != 0
        # Optimality (KKT): g_j = lam sign(w_j) on the support, |g_j| <= lam off it.
        np.testing.assert_allclose(g[nz], lam * np.sign(w[nz]), atol=1e-6)
        assert np.all(np.abs(g[~nz]) <= lam + 1e-6)
        assert abs(np.sum(y - 1 / (1 + np.exp(-(X @ w + b))))) < 1e-6
    ref = LogisticRegression(l1_ratio=1.0, C=path.Cs[-1], solver="saga", tol=1e-12,
                             max_iter=200000).fit(X, y)
    np.testing.assert_allclose(path.coefs[:, -1], ref.coef_[0], atol=1e-4)
    assert np.count_nonzero(path.coefs[:, 2]) < np.count_nonzero(path.coefs[:, -1])
    with pytest.raises(ValueError, match="exactly 2 classes"):
        logistic_l1_path(X, np.arange(120) % 3)


def test_logistic_fits_refuse_a_real_target():
    """A real target read as labels made one class a sample (scikit-learn's
    LogisticRegression refuses it as 'continuous'); greedy_logistic already refused it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="^y: logistic_regression needs class labels"):
        fastfs.learners.logistic_regression(X, y)
    with pytest.raises(ValueError, match="^y: logistic_l1_path needs class labels"):
        fastfs.learners.logistic_l1_path(X, y)
    fastfs.learners.logistic_regression(X, (y > 0).astype(float))


def test_linear_fits_keep_the_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int)
    assert list(logistic_regression(df, y).feature_names) == ["a", "b", "c"]
    assert list(logistic_regression(df, y, features=[2, 0]).feature_names) == ["c", "a"]
    assert list(ridge_regression(df, df["b"], features=np.array([False, True, True]))
                .feature_names) == ["b", "c"]
    assert logistic_regression(df.to_numpy(), y).feature_names is None


def test_logistic_l1_path_first_point_is_the_null_model():
    # C_min is the largest C with every weight zero: exactly zero weights there, and the
    # intercept of the model without features (scikit-learn with a zero column)
    from fastfs.learners import logistic_l1_path

    for seed in range(20):
        gen = np.random.default_rng(seed)
        X = gen.normal(size=(60, 5))
        y = (X[:, 0] + 0.5 * gen.normal(size=60) > 0).astype(int)
        path = logistic_l1_path(X, y, Cs=5)
        np.testing.assert_array_equal(path.coefs[:, 0], 0.0)
        null = LogisticRegression(C=1e10, tol=1e-12).fit(np.zeros((60, 1)), y).intercept_[0]
        np.testing.assert_allclose(path.intercepts[0], null, rtol=1e-6)
        assert np.count_nonzero(path.coefs[:, 1]) >= 1  # above C_min a weight leaves zero


@pytest.mark.parametrize("classes, shape", [(3, (150, 90)), (5, (60, 400))])
def test_logistic_many_weights_multinomial_conjugate_gradient_path(classes, shape):
    # (d + 1) K above 256: the multinomial Newton step by conjugate gradients on
    # Hessian-vector products (the dense Hessian of (d + 1) K squared entries is never built)
    rng = np.random.default_rng(classes)
    m, n = shape
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3, n)
    z = X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(m)
    y = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1]))
    ours = logistic_regression(X, y, C=0.5)
    assert ours.converged
    # the optimality condition in NumPy: X^T (P - Y) + W / C = 0, sum(P - Y) = 0
    Z = X @ ours.coef.T + ours.intercept
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    R = P - np.eye(classes)[y]
    grad = X.T @ R + ours.coef.T / 0.5
    assert np.abs(grad).max() <= 1e-8 * max(1.0, np.abs(X).max() * m)
    np.testing.assert_allclose(R.sum(axis=0), 0.0, atol=1e-9)
    # scikit-learn's lbfgs stops a little short of that optimum: the same weights to its
    # accuracy, and an objective no lower than ours
    ref = LogisticRegression(C=0.5, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.coef, ref.coef_, atol=1e-4)
    np.testing.assert_allclose(ours.intercept, ref.intercept_, atol=1e-4)
    ref_loss = log_loss(y, ref.predict_proba(X), normalize=False) + (ref.coef_ ** 2).sum()
    assert ours.loss + (ours.coef ** 2).sum() <= ref_loss + 1e-9
    warm = logistic_regression(X, y, C=0.5, coef_init=ours.coef * 0.9,
                               intercept_init=ours.intercept)
    np.testing.assert_allclose(warm.coef, ours.coef, atol=1e-8)


def _peak_rss_growth_mb(code: str) -> float:
    import subprocess
    import sys

    script = ("import resource, numpy as np, fastfs\n"
              "from fastfs.learners import logistic_regression, ridge_regression\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              f"{code}\n"
              "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, check=True)
    return float(out.stdout.split()[-1])


def test_wide_learners_build_no_feature_by_feature_matrix():
    # 20 samples of 3000 features: the multinomial Hessian was (3001 x 3)^2 entries (650 MB)
    # and ridge's Gram matrix 3000^2 (72 MB, twice with its factor); both now stay in the
    # samples' dimension (the ridge dual, an m x m system) or in vectors (CG)
    grow = _peak_rss_growth_mb(
        "g = np.random.default_rng(0); X = g.normal(size=(20, 3000)); y = np.arange(20) % 3\n"
        "logistic_regression(X, y)\n"
        "ridge_regression(X, g.normal(size=20), alpha=1.0)")
    assert grow < 40


@pytest.mark.parametrize("alpha", [1e-3, 1.0, 100.0])
def test_ridge_more_columns_than_rows_equals_sklearn(alpha):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((15, 200)) * 3 + 1
    y = X[:, 0] - 2 * X[:, 5] + rng.standard_normal(15)
    ours = ridge_regression(X, y, alpha=alpha)
    ref = Ridge(alpha=alpha, solver="svd").fit(X, y)
    np.testing.assert_allclose(np.ravel(ours.coef), ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.ravel(ours.intercept), ref.intercept_, rtol=1e-9)


def _penalised(X, y, coef, intercept, C):
    """sum of log-losses + ||W||^2 / (2C), computed here from the weights."""
    Z = X @ coef.T + intercept
    top = Z.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(Z - top).sum(axis=1))
    return float((lse - Z[np.arange(len(y)), y]).sum() + 0.5 * (coef ** 2).sum() / C)


@pytest.mark.parametrize("C", [1e-12, 1e-10, 1e-6])
def test_multinomial_cg_path_fits_the_intercepts_at_a_tiny_C(C):
    # At C = 1e-10 the weights are ~0 and the intercepts are the centred log class
    # frequencies: the CG path's intercept preconditioner held 1/C and left them at 0
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 100))
    y = (X @ rng.standard_normal((100, 3)) * 5 + rng.gumbel(size=(200, 3))).argmax(1)
    fit = logistic_regression(X, y, C=C)
    sk = LogisticRegression(C=C, tol=1e-12, max_iter=100000).fit(X, y)
    freq = np.log(np.bincount(y) / y.size)
    np.testing.assert_allclose(fit.intercept, sk.intercept_, atol=1e-6)
    if C <= 1e-10:
        np.testing.assert_allclose(fit.intercept, freq - freq.mean(), atol=1e-6)
    assert _penalised(X, y, fit.coef, fit.intercept, C) <= \
        _penalised(X, y, sk.coef_, sk.intercept_, C) * (1 + 1e-10)


@pytest.mark.parametrize("start", [20.0, 30.0, 45.0])
def test_multinomial_cg_path_recovers_from_a_far_start(start):
    # intercepts of +-30 make every probability 0 or 1: the truncated Newton step found no
    # descent and the fit returned its start (loss 9360 where the optimum has 22.6)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 80))
    y = (X @ rng.standard_normal((80, 5)) + rng.gumbel(size=(300, 5))).argmax(1)
    cold = logistic_regression(X, y)
    warm = logistic_regression(X, y, intercept_init=[start, -start, 0, 0, 0], max_iter=1000)
    assert warm.converged
    assert warm.loss == pytest.approx(cold.loss, rel=1e-8)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-6)


@pytest.mark.parametrize("n", [10, 80])  # the dense Newton path and the CG path
@pytest.mark.parametrize("start", [30.0, 45.0, 200.0])
def test_binary_fits_recover_from_a_far_start(n, start):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, n))
    y = (X @ rng.standard_normal(n) + rng.logistic(size=300) > 0).astype(int)
    cold = logistic_regression(X, y)
    warm = logistic_regression(X, y, intercept_init=[start], max_iter=1000)
    assert warm.converged
    assert warm.loss == pytest.approx(cold.loss, rel=1e-8)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-6)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("offset", [1e3, 1e8])
def test_logistic_fits_do_not_depend_on_an_offset(classes, offset):
    """The intercept is not penalised, so adding a constant to a column changes the intercept
    only: scikit-learn's fit of the unshifted X is the reference. At an offset of 1e8 Newton
    stalled after one step at weights of 7e-19, reported converged, and rfe, the learner
    criteria and ORDERED-FS chose by it; the L1 path stopped converging from 1e3."""
    from fastfs.learners import logistic_l1_path

    X, y = _data(m=120, n=6, classes=classes, seed=2)
    ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit(X, y)
    for shift in (np.full(6, offset), np.r_[np.zeros(5), offset]):   # all columns, or one
        ours = logistic_regression(X + shift, y)
        assert ours.converged
        np.testing.assert_allclose(ours.coef, ref.coef_, atol=1e-6)
        want = ref.intercept_ - ref.coef_ @ shift
        if classes > 2:
            want = want - want.mean()
        # the intercept of the centred problem, b + w . shift, is the reference's (its
        # cancellation costs about eps * offset)
        np.testing.assert_allclose(ours.intercept + ours.coef @ shift,
                                   ref.intercept_ - (ref.intercept_.mean() if classes > 2
                                                     else 0.0),
                                   atol=1e-5 + 1e-14 * offset)
        # warm-started from the unshifted fit's weights: the same optimum
        warm = logistic_regression(X + shift, y, coef_init=ref.coef_,
                                   intercept_init=want)
        np.testing.assert_allclose(warm.coef, ref.coef_, atol=1e-6)
    if classes == 2:
        import warnings

        base = logistic_l1_path(X, y, Cs=[0.1, 0.5, 2.0])
        for small in (2.0 * np.ptp(X, axis=0), 0.5 * np.ptp(X, axis=0)):  # offsets of a range
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                near = logistic_l1_path(X + small, y, Cs=[0.1, 0.5, 2.0])
            np.testing.assert_allclose(near.coefs, base.coefs, atol=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # every C converges
            moved = logistic_l1_path(X + offset, y, Cs=[0.1, 0.5, 2.0])
        np.testing.assert_allclose(moved.coefs, base.coefs, atol=1e-6)
        np.testing.assert_allclose(moved.intercepts + offset * moved.coefs.sum(axis=0),
                                   base.intercepts, atol=1e-5 + 1e-14 * offset)
    # what the fits feed: rfe chooses as on the unshifted X
    np.testing.assert_array_equal(fastfs.rfe(X + offset, y, 3).selected,
                                  fastfs.rfe(X, y, 3).selected)
