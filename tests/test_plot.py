"""fastfs.plot, headless (Agg): the data on the axes equal what was plotted from."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pytest.importorskip("sklearn", minversion="1.6")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

import fastfs  # noqa: E402
from fastfs import plot  # noqa: E402
from fastfs.sklearn import GFlip, Simba  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def xor():
    return fastfs.datasets.make_xor(120, random_state=0)


def _bar_heights(ax):
    return np.array([patch.get_height() for patch in ax.patches])


def test_weights_as_bars_from_a_result_a_selector_and_an_array(xor):
    X, y = xor
    res = fastfs.relief(X, y)
    np.testing.assert_array_equal(_bar_heights(plot.weights(res)), res.weights)
    fitted = Simba(3, n_restarts=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(_bar_heights(plot.weights(fitted)), fitted.scores_)
    subset = GFlip(random_state=0).fit(X, y)
    np.testing.assert_array_equal(_bar_heights(plot.weights(subset)), subset.support_)
    np.testing.assert_array_equal(_bar_heights(plot.weights([0.5, 2.0])), [0.5, 2.0])
    filt = fastfs.filters.anova_f(X, y)
    ax = plot.weights(filt, title="F")
    np.testing.assert_array_equal(_bar_heights(ax), filt.scores)
    assert ax.get_title() == "F" and ax.get_ylabel() == "score"


def test_weights_carry_the_column_names(xor):
    pd = pytest.importorskip("pandas")
    X, y = xor
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    ax = plot.weights(fastfs.relief(frame, y))
    assert [t.get_text() for t in ax.get_xticklabels()] == list(frame.columns)


def test_weights_of_pixels_as_an_image():
    rng = np.random.default_rng(0)
    values = rng.random(6 * 4)
    ax = plot.weights(values, shape=(6, 4))
    np.testing.assert_array_equal(ax.images[0].get_array(), values.reshape(6, 4))
    with pytest.raises(ValueError, match="shape: \\(5, 5\\) does not hold the 24 features"):
        plot.weights(values, shape=(5, 5))


def test_weights_errors():
    with pytest.raises(TypeError, match="source: expected a fastfs result"):
        plot.weights(object())
    with pytest.raises(ValueError, match="one value per feature"):
        plot.weights(np.ones((2, 2)))


def test_history_per_restart_from_a_recorder_and_from_a_result(xor):
    X, y = xor
    rec = plot.Recorder()
    res = fastfs.gflip(X, y, n_restarts=3, random_state=0, callback=rec)
    ax = plot.history(rec)
    ax_lines = list(ax.lines)
    assert len(ax.lines) == 3  # one line per restart
    for r, line in enumerate(ax.lines):
        keep = rec.restarts == r
        np.testing.assert_array_equal(line.get_xdata(), rec.steps[keep])
        np.testing.assert_array_equal(line.get_ydata(), rec.scores[keep])
    # the winning restart's line ends at the returned score
    np.testing.assert_allclose(ax.lines[res.best_restart].get_ydata()[-1], res.score,
                               rtol=1e-12)
    ax = plot.history(res)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), res.history)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(1, res.history.size + 1))
    fitted = Simba(n_restarts=2, random_state=0).fit(X, y)
    # Simba records no per-step score: its restarts' scores are plotted instead.
    assert fitted.result_.history.size == 0
    np.testing.assert_array_equal(plot.history(fitted).lines[0].get_ydata(),
                                  fitted.result_.restart_scores)
    # G-flip's restart scores: each restart's final score, the winner's is the result's.
    assert res.restart_scores.shape == (3,)
    assert res.restart_scores[res.best_restart] == res.score == res.restart_scores.max()
    for r, line in enumerate(ax_lines):
        np.testing.assert_allclose(line.get_ydata()[-1], res.restart_scores[r], rtol=1e-12)
    with pytest.raises(ValueError, match="the Recorder holds no step"):
        plot.history(plot.Recorder())


def test_accuracy_vs_features_equals_cross_validation(xor):
    X, y = xor
    knn = KNeighborsClassifier(3)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    simba = fastfs.simba(X, y, n_restarts=1, random_state=0)
    relief = fastfs.relief(X, y)
    ax = plot.accuracy_vs_features({"Simba": simba, "Relief": relief}, X, y, knn,
                                   sizes=[1, 3, 5], cv=cv)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Simba", "Relief"]
    for line, res in zip(ax.lines, (simba, relief)):
        np.testing.assert_array_equal(line.get_xdata(), [1, 3, 5])
        expect = [cross_val_score(knn, X[:, np.asarray(res.ranking)[:k]], y, cv=cv).mean()
                  for k in (1, 3, 5)]
        np.testing.assert_allclose(line.get_ydata(), expect, rtol=1e-12)
    # a fitted selector's ranking_ and a precomputed curve
    fitted = Simba(n_restarts=1, random_state=0).fit(X, y)
    k, mean, std = plot.score_by_size(X, y, fitted, knn, sizes=[2], cv=cv)
    expect = cross_val_score(knn, X[:, np.asarray(simba.ranking)[:2]], y, cv=cv)
    np.testing.assert_allclose(mean, [expect.mean()], rtol=1e-12)
    np.testing.assert_allclose(std, [expect.std()], rtol=1e-12)
    ax = plot.accuracy_vs_features({"given": (k, mean, std)})
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), mean)
    with pytest.raises(ValueError, match="sizes: expected numbers of features in \\[1, 10\\]"):
        plot.score_by_size(X, y, simba, knn, sizes=[0])
    with pytest.raises(ValueError, match="X, y, estimator: needed"):
        plot.accuracy_vs_features(simba)


def test_score_by_size_takes_a_filter_result_and_checks_rankings(xor):
    X, y = xor
    knn = KNeighborsClassifier(3)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    f = fastfs.filters.anova_f(X, y)
    order = np.argsort(-f.scores, kind="stable")  # its scores, best first
    ax = plot.accuracy_vs_features({"anova_f": f}, X, y, knn, sizes=[1, 2], cv=cv)
    expect = [cross_val_score(knn, X[:, order[:k]], y, cv=cv).mean() for k in (1, 2)]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), expect, rtol=1e-12)
    for bad in ([0, 0, 3], [0, 10], [-1], [], np.zeros((2, 2), dtype=int)):
        with pytest.raises(ValueError, match=r"ranking: expected distinct feature indices in "
                                             r"\[0, 10\)"):
            plot.score_by_size(X, y, bad, knn)


def test_import_fastfs_does_not_import_matplotlib():
    import subprocess
    import sys

    code = "import sys, fastfs; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
