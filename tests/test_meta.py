"""fastfs.quality_map / transfer_quality / mufasa (meta-features, Navot's thesis ch. 5): planted
smooth quality maps and planted optimal meta-feature values, against explicit NumPy / sklearn
computations; reproducibility and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
from fastfs.meta import pixel_positions, rbf_expansion, ridge_alphas


def _bump(h, w, centre=(4.0, 7.0), width=3.0):
    pos = pixel_positions((h, w))
    return np.exp(-((pos - centre) ** 2).sum(axis=1) / (2 * width**2))


def _thesis_basis():
    # 49 Gaussians of sigma 3 px on a 7 x 7 grid over the pixel positions, written out here.
    grid = np.linspace(0, 27, 7)
    centres = np.array([(a, b) for a in grid for b in grid])
    rows, cols = np.divmod(np.arange(784), 28)
    d2 = (rows[:, None] - centres[None, :, 0]) ** 2 + (cols[:, None] - centres[None, :, 1]) ** 2
    return np.exp(-d2 / 18.0), np.column_stack([rows, cols])


@pytest.mark.parametrize("n_observed", [30, 49, 300, 784])
def test_default_map_is_rbf_grid_with_loo_ridge(rng, n_observed):
    from sklearn.linear_model import LinearRegression, RidgeCV

    X = rng.integers(0, 2, size=(60, 784)).astype(float)
    y = rng.integers(0, 2, size=60)
    obs = np.sort(rng.choice(784, n_observed, replace=False))
    res = fastfs.quality_map(X, y, image_shape=(28, 28), quality="anova_f", observed=obs)
    phi, pos = _thesis_basis()
    q = fastfs.filters.anova_f(X[:, obs], y).scores
    # The penalty grid: 25 log-spaced values, 1e-8 .. 1e2 times trace(Pc^T Pc) / 49.
    Pc = phi[obs] - phi[obs].mean(axis=0)
    grid = (Pc**2).sum() / 49 * np.logspace(-8, 2, 25)
    assert_allclose(ridge_alphas(phi[obs]), grid)
    expected = RidgeCV(alphas=grid).fit(phi[obs], q).predict(phi)
    assert_allclose(res.predicted, expected, rtol=1e-8, atol=1e-10)
    assert_allclose(res.quality[obs], q)
    assert_array_equal(res.ranking, np.argsort(-res.predicted, kind="stable"))
    assert_allclose(res.predict(pos[:5]), expected[:5], rtol=1e-8, atol=1e-10)
    if n_observed == 784:
        plain = fastfs.quality_map(X, y, image_shape=(28, 28), quality="anova_f",
                                   regressor=LinearRegression())
        assert_allclose(plain.predicted, LinearRegression().fit(phi, q).predict(phi),
                        rtol=1e-8, atol=1e-10)


def test_recovers_planted_smooth_map_for_unobserved_features(rng):
    h, w = 12, 14
    amp = _bump(h, w, width=4.0)
    n = 400
    y = rng.integers(0, 2, size=n)
    X = rng.standard_normal((n, h * w)) + 1.5 * amp * (2 * y[:, None] - 1)
    observed = rng.choice(h * w, size=h * w // 3, replace=False)
    res = fastfs.quality_map(X, y, image_shape=(h, w), quality="anova_f", observed=observed,
                             rbf_grid=5, sigma=3.0)
    unseen = ~res.observed
    assert np.isnan(res.quality[unseen]).all() and np.isfinite(res.quality[~unseen]).all()
    # Predicted quality of never-measured features tracks the planted signal strength (the
    # F statistic grows as the squared mean difference)...
    assert np.corrcoef(res.predicted[unseen], amp[unseen] ** 2)[0, 1] > 0.95
    # ...and as well as the direct measurement of those same features does.
    direct = fastfs.filters.anova_f(X[:, unseen], y).scores
    assert np.corrcoef(res.predicted[unseen], direct)[0, 1] > 0.9


def test_smoothing_beats_direct_quality_with_few_samples(rng):
    # Section 5.7: with few samples the map fitted on every feature (in-sample) estimates the
    # real quality better than the noisy direct estimate.
    h, w = 16, 16
    amp = 0.8 * _bump(h, w, centre=(8, 8), width=4)
    gen = np.random.default_rng(7)
    wins = 0
    for _ in range(5):
        y = gen.integers(0, 2, size=30)
        X = gen.standard_normal((30, h * w)) + amp * (2 * y[:, None] - 1)
        res = fastfs.quality_map(X, y, image_shape=(h, w), quality="anova_f", rbf_grid=4,
                                 sigma=4.0)
        wins += (np.corrcoef(res.predicted, amp**2)[0, 1]
                 > np.corrcoef(res.quality, amp**2)[0, 1])
    assert wins == 5


def test_quality_callable_regressor_and_linear_basis(rng):
    from sklearn.linear_model import Ridge

    U = rng.uniform(0, 1, size=(50, 3))
    planted = U @ np.array([1.0, -2.0, 0.5]) + 3.0
    X = rng.standard_normal((10, 50))
    y = np.r_[np.zeros(5), np.ones(5)]
    res = fastfs.quality_map(X, y, U, quality=lambda Xo, yo: planted[: Xo.shape[1]],
                             basis="linear", observed=np.arange(30))
    assert_allclose(res.predicted, planted, atol=1e-10)
    ridge = fastfs.quality_map(X, y, U, quality=lambda Xo, yo: planted, basis="linear",
                               regressor=Ridge(alpha=1e-9))
    assert_allclose(ridge.predicted, planted, atol=1e-6)
    assert_allclose(rbf_expansion([[0.0, 0.0]], [[3.0, 4.0]], 5.0), [[np.exp(-0.5)]])


def test_quality_callable_may_return_a_filter_or_weight_result(rng):
    # a FilterResult is a (scores, p-values) tuple: its scores, not 2 x n numbers, are used
    X = rng.standard_normal((30, 16)) + np.r_[np.zeros(15), np.ones(15)][:, None]
    y = np.r_[np.zeros(15), np.ones(15)]
    by_name = fastfs.quality_map(X, y, image_shape=(4, 4), quality="anova_f", rbf_grid=2)
    by_call = fastfs.quality_map(X, y, image_shape=(4, 4), quality=fastfs.filters.anova_f,
                                 rbf_grid=2)
    assert_allclose(by_call.quality, by_name.quality)
    assert_allclose(by_call.quality, fastfs.filters.anova_f(X, y).scores)
    weights = fastfs.quality_map(X, y, image_shape=(4, 4), rbf_grid=2,
                                 quality=lambda Xo, yo: fastfs.relieff(Xo, yo))
    assert_allclose(weights.quality, fastfs.relieff(X, y).weights)
    tasks = [(X, y), (X[::-1], y[::-1])]
    res = fastfs.transfer_quality(tasks, image_shape=(4, 4), quality=fastfs.filters.anova_f,
                                  rbf_grid=2)
    assert_allclose(res.direct, fastfs.filters.anova_f(X, y).scores)


def test_dataframe_names_and_repr(rng):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(rng.standard_normal((20, 6)), columns=list("abcdef"))
    y = np.r_[np.zeros(10), np.ones(10)]
    res = fastfs.quality_map(X, y, image_shape=(2, 3), quality="anova_f", rbf_grid=2)
    assert list(res.feature_names) == list("abcdef")
    assert repr(res).startswith("QualityMap(quality=")


def test_transfer_direct_is_average_and_indirect_is_its_map(rng):
    h, w = 6, 6
    tasks = []
    for _ in range(3):
        y = rng.integers(0, 2, size=40)
        tasks.append((rng.standard_normal((40, h * w)) + 0.5 * y[:, None], y))
    res = fastfs.transfer_quality(tasks, image_shape=(h, w), quality="anova_f", rbf_grid=3)
    per_task = np.vstack([fastfs.filters.anova_f(X, y).scores for X, y in tasks])
    assert_allclose(res.task_quality, per_task)
    assert_allclose(res.direct, per_task.mean(axis=0))
    grid = np.linspace(0, 5, 3)
    centres = np.array([(a, b) for a in grid for b in grid])
    phi = rbf_expansion(pixel_positions((h, w)), centres, 3.0)
    from sklearn.linear_model import RidgeCV

    expected = RidgeCV(alphas=ridge_alphas(phi)).fit(phi, res.direct).predict(phi)
    assert_allclose(res.indirect, expected, rtol=1e-8, atol=1e-10)


def test_quality_map_bad_input(rng):
    X = rng.standard_normal((20, 12))
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError, match="meta_features: has 11 rows but X has 12"):
        fastfs.quality_map(X, y, np.zeros((11, 2)))
    with pytest.raises(ValueError, match="meta_features: expected shape"):
        fastfs.quality_map(X, y, np.zeros((12, 2, 1)))
    with pytest.raises(ValueError, match="meta_features: contains NaN"):
        fastfs.quality_map(X, y, np.full((12, 1), np.nan))
    with pytest.raises(ValueError, match="meta_features: has no columns"):
        fastfs.quality_map(X, y, np.zeros((12, 0)))
    with pytest.raises(ValueError, match="image_shape: 3 x 5 = 15 pixels but X has 12"):
        fastfs.quality_map(X, y, image_shape=(3, 5))
    with pytest.raises(ValueError, match="meta_features: give"):
        fastfs.quality_map(X, y)
    with pytest.raises(ValueError, match="observed: at least 2"):
        fastfs.quality_map(X, y, image_shape=(3, 4), observed=[3])
    with pytest.raises(ValueError, match="basis: unknown value 'cubic'"):
        fastfs.quality_map(X, y, image_shape=(3, 4), basis="cubic")
    with pytest.raises(ValueError, match="quality: unknown filter 'gain'"):
        fastfs.quality_map(X, y, image_shape=(3, 4), quality="gain")
    with pytest.raises(ValueError, match="quality: returned 3 scores for 12"):
        fastfs.quality_map(X, y, image_shape=(3, 4), quality=lambda a, b: np.ones(3))
    res = fastfs.quality_map(X, y, image_shape=(3, 4), quality="anova_f")
    with pytest.raises(ValueError, match="meta_features: expected 2 columns"):
        res.predict(np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"tasks\[1\]: has 5 features"):
        fastfs.transfer_quality([(X, y), (X[:, :5], y)], image_shape=(3, 4))


# ------------------------------------------------------------------------------------------
# Mufasa


def _planted_draw(y, optimum=7.0):
    # The feature drawn at u carries the label with noise growing with |u - optimum|.
    def draw(u, g):
        return (2 * y - 1) + g.standard_normal(y.shape[0]) * (0.5 + 0.6 * abs(u[0] - optimum))
    return draw


def test_mufasa_reaches_planted_optimum_with_default_svm_quality(rng):
    y = rng.integers(0, 2, size=300)
    res = fastfs.mufasa(_planted_draw(y), [1.0], y=y, n_features=3, n_steps=40,
                        bounds=[[0.0, 10.0]], step_size=1.5, random_state=0)
    assert abs(res.u_best[0] - 7.0) < 1.0
    assert res.trace_u.shape == (40, 1) and res.trace_quality.shape == (40,)
    assert res.score == res.trace_quality.max()
    assert_array_equal(res.u_best, res.trace_u[res.best_step])
    assert len(res.features) == 3
    # The best is the last step reaching the maximum (q >= q_best moves it forward).
    assert res.best_step == np.flatnonzero(res.trace_quality == res.score)[-1]


def test_mufasa_budget_reaches_optimum_and_spends_budget():
    # Quality = -distance of the drawn value from 3 per feature; cost grows with u: at the
    # optimum u = 3 features are cheap enough that the budget buys several.
    def draw(u, g):
        return float(u[0] + 0.01 * g.standard_normal())

    def quality(F):
        return -float(np.mean(np.abs(np.array(F) - 3.0)))

    res = fastfs.mufasa(draw, [9.0], quality=quality, budget=10.0, cost=lambda f: 1 + f / 10,
                        n_steps=60, step_size=1.0, random_state=3)
    assert abs(res.u_best[0] - 3.0) < 0.3
    spent = sum(1 + f / 10 for f in res.features)
    assert spent <= 10.0 and spent + 1 + max(res.features) / 10 > 10.0 - 1e-9 - 0.2


def test_mufasa_trace_reproducible_for_a_seed(rng):
    y = rng.integers(0, 2, size=60)
    kw = {"y": y, "n_features": 2, "n_steps": 8, "bounds": [[0.0, 10.0]]}
    a = fastfs.mufasa(_planted_draw(y), [2.0], random_state=11, **kw)
    b = fastfs.mufasa(_planted_draw(y), [2.0], random_state=11, **kw)
    c = fastfs.mufasa(_planted_draw(y), [2.0], random_state=12, **kw)
    assert_array_equal(a.trace_u, b.trace_u)
    assert_array_equal(a.trace_quality, b.trace_quality)
    assert not np.array_equal(a.trace_u, c.trace_u)


def test_mufasa_callback_stops_and_verbose(capsys):
    seen = []

    def cb(state):
        seen.append((state.step, state.score, state.selection.copy()))
        with pytest.raises(ValueError):
            state.selection[0] = 1.0
        return state.step == 2

    res = fastfs.mufasa(lambda u, g: float(u[0]), [0.0], quality=lambda F: -abs(F[0] - 1),
                        n_features=1, n_steps=10, random_state=0, callback=cb, verbose=True)
    assert res.stopped_early and res.trace_u.shape == (3, 1) and len(seen) == 3
    assert_array_equal([s[2][0] for s in seen], res.trace_u[:, 0])
    assert "mufasa" in capsys.readouterr().err  # a tqdm bar, or one line per step


def test_mufasa_bad_input(rng):
    y = rng.integers(0, 2, size=30)
    with pytest.raises(ValueError, match=r"draw: returned a feature of shape \(29,\)"):
        fastfs.mufasa(lambda u, g: np.zeros(29), [0.0], y=y, n_features=2, n_steps=2)
    with pytest.raises(ValueError, match="draw: returned a feature with NaN"):
        fastfs.mufasa(lambda u, g: np.full(30, np.nan), [0.0], y=y, n_features=2, n_steps=2)
    with pytest.raises(ValueError, match="draw: returned None"):
        fastfs.mufasa(lambda u, g: None, [0.0], quality=len, n_features=2, n_steps=2)
    with pytest.raises(ValueError, match="budget: 0.4 is below the cost 0.5"):
        fastfs.mufasa(lambda u, g: 1, [0.0], quality=len, budget=0.4, cost=0.5)
    with pytest.raises(ValueError, match="cost: must be a finite number > 0"):
        fastfs.mufasa(lambda u, g: 1, [0.0], quality=len, budget=3, cost=lambda f: -1)
    with pytest.raises(ValueError, match="n_features, budget: give exactly one"):
        fastfs.mufasa(lambda u, g: 1, [0.0], quality=len)
    with pytest.raises(ValueError, match="y: the default quality"):
        fastfs.mufasa(lambda u, g: 1, [0.0], n_features=2)
    with pytest.raises(ValueError, match="bounds: expected"):
        fastfs.mufasa(lambda u, g: 1, [0.0, 1.0], quality=len, n_features=1,
                      bounds=[[0, 1]])
    with pytest.raises(ValueError, match="u0: .* outside bounds"):
        fastfs.mufasa(lambda u, g: 1, [5.0], quality=len, n_features=1, bounds=[[0, 1]])
    with pytest.raises(TypeError, match="draw: expected a callable"):
        fastfs.mufasa(None, [0.0], quality=len, n_features=1)


def test_mufasa_and_transfer_argument_checks(rng):
    draw = lambda u, g: g.normal(size=20)  # noqa: E731
    with pytest.raises(ValueError, match="u0: needs at least one meta-feature value"):
        fastfs.mufasa(draw, [], quality=lambda f: 0.0, n_features=3)
    with pytest.raises(ValueError, match=r"step_size: expected a number or 2 numbers .* got "
                                         r"shape \(3,\)"):
        fastfs.mufasa(draw, [1.0, 2.0], quality=lambda f: 0.0, n_features=3,
                      step_size=[1.0, 2.0, 3.0])
    # tasks as a tuple of [X, y] lists is two tasks, not "one pair"
    X = rng.standard_normal((20, 4))
    y = np.r_[np.zeros(10), np.ones(10)]
    res = fastfs.transfer_quality(([X, y], [X, y]), np.arange(4.0), quality="anova_f")
    assert_allclose(res.direct, fastfs.filters.anova_f(X, y).scores)


def test_mufasa_refuses_when_every_quality_is_minus_inf():
    draw = lambda u, g: g.normal(size=20)  # noqa: E731
    with pytest.raises(ValueError, match="quality: every one of the 5 feature sets drawn "
                                         "scored -inf"):
        fastfs.mufasa(draw, [1.0], quality=lambda f: -np.inf, n_features=3, n_steps=5,
                      random_state=0)
    # one finite score among them is a result
    calls = iter([-np.inf, 2.0, -np.inf, -np.inf, -np.inf])
    res = fastfs.mufasa(draw, [1.0], quality=lambda f: next(calls), n_features=3, n_steps=5,
                        random_state=0)
    assert res.score == 2.0 and res.best_step == 1


def test_quality_map_warns_when_it_can_rank_nothing(rng):
    X = rng.standard_normal((20, 9))
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.warns(fastfs.EqualScoresWarning, match="quality_map: every feature got the "
                                                       "same measured quality"):
        fastfs.quality_map(X, y, image_shape=(3, 3), quality=lambda a, b: np.ones(a.shape[1]))
    with pytest.warns(fastfs.EqualScoresWarning, match="quality_map: every feature has the "
                                                       "same meta-features"):
        fastfs.quality_map(X, y, np.ones((9, 2)), quality="anova_f")
    with pytest.warns(fastfs.EqualScoresWarning, match="transfer_quality: every feature got "
                                                       "the same mean quality"):
        fastfs.transfer_quality([(X, y), (X, y)], image_shape=(3, 3),
                                quality=lambda a, b: np.ones(a.shape[1]))


@pytest.mark.parametrize("quality", ["pearson", "s2n", "auc"])
def test_signed_filter_qualities_count_by_strength(quality):
    """A feature anti-correlated with y is as useful as a correlated one: by its raw pearson,
    s2n or AUC score it ranked below pure noise."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] - X[:, 5] > 0).astype(int)
    qm = fastfs.meta.quality_map(X, y, np.arange(6.0)[:, None], quality=quality,
                                 basis=lambda u: np.eye(6))
    assert set(qm.ranking[:2].tolist()) == {0, 5}
    raw = getattr(fastfs.filters, quality)(X, y).scores
    want = np.maximum(raw, 1 - raw) if quality == "auc" else np.abs(raw)
    assert_allclose(qm.quality, want, rtol=1e-12)


def test_mufasa_default_quality_refuses_a_real_target():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^y: mufasa's default quality"):
        fastfs.meta.mufasa(lambda u, r: r.normal(size=60), [2.0], y=rng.normal(size=60),
                           n_features=3, n_steps=5)


def test_transfer_quality_keeps_the_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    res = fastfs.meta.transfer_quality([(df, y), (X, y)], np.arange(4.0)[:, None],
                                       basis="linear")
    assert list(res.map.feature_names) == ["a", "b", "c", "d"]


def test_quality_map_warns_once_at_the_callers_line():
    """The inner filter's EqualScoresWarning came through too, pointing into fastfs."""
    import warnings

    X = np.ones((20, 4))
    y = np.arange(20) % 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fastfs.meta.quality_map(X, y, np.arange(4.0)[:, None], basis="linear")
    assert [w.category for w in caught] == [fastfs.EqualScoresWarning]
    assert caught[0].filename == __file__


def test_default_map_needs_two_measured_features_and_ridge_alphas_a_row(rng):
    X = rng.standard_normal((30, 1))
    y = np.r_[np.zeros(15), np.ones(15)]
    with pytest.raises(ValueError, match="X: the default map .* needs at least 2 of them; got 1"):
        fastfs.quality_map(X, y, np.zeros((1, 1)), quality="anova_f")
    with pytest.raises(ValueError, match="Phi: expected a 2-D basis matrix with at least one"):
        ridge_alphas(np.zeros((0, 3)))
    Phi = rng.standard_normal((10, 3))
    Pc = Phi - Phi.mean(axis=0)
    np.testing.assert_allclose(ridge_alphas(Phi),
                               (Pc ** 2).sum() / 3 * np.logspace(-8, 2, 25), rtol=1e-12)
