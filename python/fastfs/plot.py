"""Plots of what the selection methods learned (matplotlib; ``pip install matplotlib``).

* ``weights``: feature weights or scores as bars, or as an image when the features are pixels
  (``shape=(28, 28)``), from a result, a fitted ``fastfs.sklearn`` selector or an array;
* ``history``: the score along a run, one line per restart, from a ``Recorder`` passed as the
  ``callback`` (every step) or from a result's ``history`` (per epoch or per restart);
* ``accuracy_vs_features``: cross-validated score against the number of top features kept,
  for one or several rankings, computed by ``score_by_size`` for any scikit-learn estimator.

Every function draws on ``ax`` (a new figure when None) and returns the axes; nothing is shown
or saved here (``ax.figure.savefig(path)``). ``import fastfs`` does not import matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

try:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
    raise ImportError("fastfs.plot needs matplotlib: pip install matplotlib") from exc

from ._results import FilterResult, StepState, ranking_by_weight

__all__ = ["Recorder", "accuracy_vs_features", "history", "score_by_size", "weights"]


def _axes(ax: Any) -> Any:
    if ax is None:
        _, ax = plt.subplots()
    return ax


def _values_and_names(source: Any) -> tuple[np.ndarray, np.ndarray | None, str]:
    """(per-feature values, feature names or None, what they are) of a result, a fitted
    selector or an array."""
    names = getattr(source, "feature_names", None)
    if hasattr(source, "support_") and hasattr(source, "n_features_in_"):  # fitted selector
        names = getattr(source, "feature_names_in_", None)
        for attr, label in (("scores_", "score"), ("support_", "selected")):
            if getattr(source, attr, None) is not None:
                return np.asarray(getattr(source, attr), dtype=np.float64), names, label
    for attr, label in (("weights", "weight"), ("scores", "score"), ("support", "selected")):
        value = getattr(source, attr, None)
        if value is not None:
            return np.asarray(value, dtype=np.float64), names, label
    try:
        values = np.asarray(source, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"source: expected a fastfs result, a fitted fastfs.sklearn selector "
                        f"or an array of per-feature values, got {type(source).__name__}"
                        ) from None
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"source: expected one value per feature (a non-empty 1-D array), "
                         f"got shape {values.shape}")
    return values, None, "weight"


def weights(source: Any, *, shape: Sequence[int] | None = None, ax: Any = None,
            cmap: str = "viridis", title: str | None = None) -> Any:
    """Per-feature weights, scores or the selected subset.

    Parameters
    ----------
    source : WeightResult, FilterResult, SubsetResult, fitted fastfs.sklearn selector or array
        The values drawn: weights, scores, or the support (1 = selected).
    shape : (rows, cols), optional
        Draw the values as an image of this shape (features are pixels, row-major as
        ``reshape``), with a colour bar; rows * cols must equal the number of features.
    ax : matplotlib Axes, optional
    cmap, title : the image's colour map; the title.

    Returns
    -------
    matplotlib Axes
        Bars: one per feature, height = the value, labelled with the feature names when the
        source has them. Image: ``ax.images[0].get_array()`` holds the reshaped values.
    """
    values, names, label = _values_and_names(source)
    ax = _axes(ax)
    if shape is not None:
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2 or int(np.prod(shape)) != values.size:
            raise ValueError(f"shape: {shape} does not hold the {values.size} features")
        image = ax.imshow(values.reshape(shape), cmap=cmap, interpolation="nearest")
        ax.figure.colorbar(image, ax=ax, label=label)
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        positions = np.arange(values.size)
        ax.bar(positions, values)
        if names is not None and values.size <= 50:
            ax.set_xticks(positions, [str(n) for n in names], rotation=90)
        ax.set_xlabel("feature")
        ax.set_ylabel(label)
    if title is not None:
        ax.set_title(title)
    return ax


@dataclass
class Recorder:
    """A callback that records every step of a run, to plot with ``history``.

    ``fastfs.simba(X, y, callback=rec)`` (or ``Simba(callback=rec)``) appends each
    ``StepState``'s restart, step and score; it never stops the run. ``rec.steps`` /
    ``rec.scores`` / ``rec.restarts`` are the recorded arrays. scikit-learn's ``clone`` (as in
    ``GridSearchCV``) copies the parameters of an estimator, so a Recorder given to an
    estimator records only the fits of that very estimator object, not of its clones.
    """

    _rows: list = field(default_factory=list)

    def __call__(self, state: StepState) -> bool:
        self._rows.append((int(state.restart), int(state.step), float(state.score)))
        return False

    def _column(self, j: int, dtype: Any) -> np.ndarray:
        return np.array([row[j] for row in self._rows], dtype=dtype)

    @property
    def restarts(self) -> np.ndarray:
        return self._column(0, np.int64)

    @property
    def steps(self) -> np.ndarray:
        return self._column(1, np.int64)

    @property
    def scores(self) -> np.ndarray:
        return self._column(2, np.float64)


def history(source: Any, *, ax: Any = None, xlabel: str | None = None,
            title: str | None = None) -> Any:
    """The score along a run.

    Parameters
    ----------
    source : Recorder, result with a ``history``, fitted selector (its ``result_``) or array
        A ``Recorder``: one line per restart, score against step (the callback's score: for
        G-flip e after each epoch, for Simba and RGS the running sum over the visited
        samples). A result: its ``history`` against its index (G-flip: e after each epoch of
        the winning restart; searches: J after each step), or, for a result whose history is
        empty (Simba, RGS), its ``restart_scores`` against the restart.
    ax : matplotlib Axes, optional
    xlabel, title : axis label (default from the source) and title.

    Returns
    -------
    matplotlib Axes; ``ax.lines`` hold the data (one line per restart for a Recorder).
    """
    ax = _axes(ax)
    if isinstance(source, Recorder):
        if not source._rows:
            raise ValueError("source: the Recorder holds no step; pass it as the callback "
                             "of a run first")
        restarts, steps, scores = source.restarts, source.steps, source.scores
        for r in np.unique(restarts):
            keep = restarts == r
            ax.plot(steps[keep], scores[keep], marker=".", label=f"restart {r}")
        if np.unique(restarts).size > 1:
            ax.legend()
        ax.set_xlabel(xlabel or "step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        result = getattr(source, "result_", source)
        values = getattr(result, "history", result)
        if np.size(values) == 0 and np.size(getattr(result, "restart_scores", ())) > 0:
            values = result.restart_scores
            xlabel = xlabel or "restart"
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"source: expected a Recorder, a result with a history or a "
                             f"1-D array of scores, got shape {values.shape}")
        ax.plot(np.arange(1, values.size + 1), values, marker="o")
        ax.set_xlabel(xlabel or "epoch / restart / step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("score")
    if title is not None:
        ax.set_title(title)
    return ax


def _ranking_of(source: Any) -> np.ndarray:
    """Feature indices, best first, of a ranking, a result or a fitted selector."""
    if hasattr(source, "ranking_") and hasattr(source, "n_features_in_"):
        return np.argsort(np.asarray(source.ranking_), kind="stable")
    if isinstance(source, FilterResult):  # its scores, best first (NaN last)
        return ranking_by_weight(np.asarray(source.scores, dtype=np.float64))
    ranking = getattr(source, "ranking", None)
    if ranking is None:
        ranking = getattr(source, "selected", source)
    return np.asarray(ranking, dtype=np.intp)


def score_by_size(X: Any, y: Any, ranking: Any, estimator: Any, *,
                  sizes: Sequence[int] | None = None, cv: Any = 5, scoring: Any = None,
                  n_jobs: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cross-validated score of ``estimator`` on the top k features of a ranking, per k.

    Parameters
    ----------
    X, y : the data (X as an array or DataFrame; columns are taken by position).
    ranking : feature indices best first, a WeightResult / RankingResult (its ``ranking``), a
        SubsetResult (its ``selected``, in order of entry) or a fitted selector (its
        ``ranking_``).
    estimator : any scikit-learn estimator (cloned for every fold).
    sizes : the numbers of features, default 1 .. len(ranking).
    cv, scoring, n_jobs : as ``sklearn.model_selection.cross_val_score``.

    The ranking is taken as given, computed once on all of X: to measure a selection method
    without optimism, put it in a Pipeline and cross-validate that instead.

    Returns
    -------
    (sizes, mean, std) : arrays; mean and std of the fold scores per size.
    """
    from sklearn.model_selection import cross_val_score

    order = _ranking_of(ranking)
    values = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
    n = values.shape[1] if values.ndim == 2 else 0
    if order.ndim != 1 or order.size == 0 or order.min() < 0 or order.max() >= n \
            or np.unique(order).size != order.size:
        raise ValueError(f"ranking: expected distinct feature indices in [0, {n}), best first, "
                         f"got {order.tolist()[:10]}{' ...' if order.size > 10 else ''}")
    sizes = np.arange(1, order.size + 1) if sizes is None else np.asarray(sizes, dtype=np.intp)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.min() < 1 or sizes.max() > order.size:
        raise ValueError(f"sizes: expected numbers of features in [1, {order.size}], got "
                         f"{sizes.tolist()}")
    mean, std = [], []
    for k in sizes:
        scores = cross_val_score(estimator, values[:, order[:k]], y, cv=cv, scoring=scoring,
                                 n_jobs=n_jobs)
        mean.append(scores.mean())
        std.append(scores.std())
    return sizes, np.array(mean), np.array(std)


def accuracy_vs_features(rankings: Mapping[str, Any] | Any, X: Any = None, y: Any = None,
                         estimator: Any = None, *, sizes: Sequence[int] | None = None,
                         cv: Any = 5, scoring: Any = None, n_jobs: int | None = None,
                         ax: Any = None, title: str | None = None) -> Any:
    """Score against the number of selected features, one line per ranking.

    Parameters
    ----------
    rankings : {name: ranking} (or one ranking)
        Each ranking as ``score_by_size`` takes it, or an already computed
        ``(sizes, mean, std)`` tuple (then X, y and estimator are not needed).
    X, y, estimator, sizes, cv, scoring, n_jobs : passed to ``score_by_size``.
    ax, title : see the module docstring.

    Returns
    -------
    matplotlib Axes; ``ax.lines[i]`` is ranking i's mean score per size (with a band of
    +- one standard deviation).
    """
    if not isinstance(rankings, Mapping):
        rankings = {"ranking": rankings}
    ax = _axes(ax)
    for name, source in rankings.items():
        if isinstance(source, tuple) and len(source) == 3 and not isinstance(source,
                                                                             FilterResult):
            k, mean, std = (np.asarray(v) for v in source)
        else:
            if X is None or y is None or estimator is None:
                raise ValueError("X, y, estimator: needed to score a ranking (or pass "
                                 "(sizes, mean, std) tuples)")
            k, mean, std = score_by_size(X, y, source, estimator, sizes=sizes, cv=cv,
                                         scoring=scoring, n_jobs=n_jobs)
        ax.plot(k, mean, marker="o", label=str(name))
        ax.fill_between(k, mean - std, mean + std, alpha=0.2)
    ax.set_xlabel("number of features")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cross-validated score" if scoring is None else str(scoring))
    ax.legend()
    if title is not None:
        ax.set_title(title)
    return ax
