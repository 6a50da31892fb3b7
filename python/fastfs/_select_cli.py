"""``fastfs select``: feature selection on a CSV or Parquet file from the command line.

Reads the file with pandas, runs one method through its ``fastfs.sklearn`` selector, prints
the selected features with their scores and the time, and optionally writes the reduced data
(CSV or Parquet, by the extension), a JSON report (``.json``) and a plot of the scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

# name -> (selector class name in fastfs.sklearn, accepts --k, needs a real target)
_METHODS: dict[str, tuple[str, bool, bool]] = {
    "gflip": ("GFlip", False, False),
    "simba": ("Simba", True, False),
    "relief": ("Relief", True, False),
    "relieff": ("ReliefF", True, False),
    "surf": ("SURF", True, False),
    "surfstar": ("SURFstar", True, False),
    "multisurf": ("MultiSURF", True, False),
    "multisurfstar": ("MultiSURFstar", True, False),
    "rgs": ("RGS", True, True),
    "sks": ("SKS", True, True),
    "omp": ("OMP", True, True),
    "backward_least_squares": ("BackwardLeastSquares", True, True),
    "sfs": ("SFS", True, False),
    "sbs": ("SBS", True, False),
    "sffs": ("SFFS", True, False),
    "sfbs": ("SFBS", True, False),
    "best_first": ("BestFirst", True, False),
    "rank_features": ("RankFeatures", True, False),
    "ordered_fs": ("OrderedFS", False, False),
    "rfe": ("RecursiveFeatureElimination", True, False),
    "greedy_logistic": ("GreedyLogistic", True, False),
}
# The command's own settings where a selector's default is slow on wide data (MADELON's 500
# features: ORDERED-FS over every size ran for more than 40 minutes, RFE on 6000 genes made
# 3000 fits one feature at a time): sizes tried at most; a tenth of the features per step
# (scikit-learn's fractional step: a tenth of the initial count each round).
_CLI_SETTINGS: dict[str, dict[str, Any]] = {
    "ordered_fs": {"max_features": 20},
    "rfe": {"step": 0.1},
}
# Filters: FilterSelector(score_func=name, mode="k_best", param=k).
_FILTERS = ("anova_f", "mutual_info", "chi2", "t_test", "f_score", "s2n", "fisher_ratio",
            "auc", "pearson")
_REAL_TARGET_FILTERS = ("pearson",)
METHOD_NAMES = tuple(sorted(_METHODS) + sorted(_FILTERS))


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "select", help="select features of a CSV or Parquet file",
        description="Select features of a table (CSV, or Parquet with pyarrow installed): "
                    "every column but the target is a feature and must be numeric.")
    p.add_argument("data", help="the input file (.csv, .parquet)")
    p.add_argument("--target", required=True, help="the name of the target column")
    p.add_argument("--method", required=True, choices=METHOD_NAMES, metavar="NAME",
                   help="one of: " + ", ".join(METHOD_NAMES) + " (the signed filters t_test, "
                        "s2n, pearson and auc rank by strength: |score|, or for auc "
                        "max(auc, 1 - auc); their scores are printed with their sign; "
                        "ordered_fs tries at most 20 sizes and rfe removes a tenth of the "
                        "features per step, step=0.1)")
    p.add_argument("--k", type=int, default=None,
                   help="number of features to keep (default: the method's own rule)")
    p.add_argument("--out", default=None,
                   help="write the selected columns and the target (.csv / .parquet), or a "
                        "JSON report (.json)")
    p.add_argument("--plot", default=None, help="save a plot of the scores (.png, .pdf, .svg)")
    p.add_argument("--n-jobs", type=int, default=None, help="threads (default: all)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run, sub=p)


def _read(path: str) -> Any:
    import pandas as pd

    file = Path(path)
    if not file.is_file():
        raise ValueError(f"DATA: no such file: {path}")
    suffix = file.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(file)
        except ImportError as exc:
            raise ValueError("DATA: reading Parquet needs pyarrow "
                             "(pip install pyarrow)") from exc
        except (OSError, ValueError) as exc:
            raise ValueError(f"DATA: cannot read {path} as Parquet: {exc}") from None
    if suffix in (".csv", ".txt", ".gz"):
        try:
            return pd.read_csv(file)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            # pandas' parser errors (not gzip, not UTF-8, empty) name neither the file nor
            # the argument
            raise ValueError(f"DATA: cannot read {path} as CSV: {exc}") from None
    raise ValueError(f"DATA: unknown file type {suffix!r}; expected .csv or .parquet")


def _write(table: Any, path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            table.to_parquet(path, index=False)
        except ImportError as exc:
            raise ValueError("--out: writing Parquet needs pyarrow (pip install pyarrow)") from exc
    elif suffix == ".csv":
        table.to_csv(path, index=False)
    else:
        raise ValueError(f"--out: unknown file type {suffix!r}; expected .csv, .parquet or "
                         ".json")


_OUT_TYPES = (".csv", ".parquet", ".pq", ".json")


def _check_outputs(args: argparse.Namespace) -> None:
    """--out and --plot refused before the selection runs (a long run is not wasted on a
    typo): a known file type, in a folder that exists."""
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if not path:
            continue
        if Path(path).expanduser().resolve() == Path(args.data).expanduser().resolve():
            raise ValueError(f"{flag}: {path!r} is the input file DATA, which it would "
                             "overwrite; give another file name")
        folder = Path(path).expanduser().parent
        if not folder.is_dir():
            raise ValueError(f"{flag}: no such folder: {str(folder)!r} (for {path!r})")
    if args.out and Path(args.out).suffix.lower() not in _OUT_TYPES:
        raise ValueError(f"--out: unknown file type {Path(args.out).suffix.lower()!r}; expected "
                         ".csv, .parquet or .json")
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if path and Path(path).expanduser().is_dir():
            raise ValueError(f"{flag}: {path!r} is a folder; give a file name")
    if args.out and Path(args.out).suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError("--out: writing Parquet needs pyarrow (pip install pyarrow)") \
                from None
    if args.plot:
        from matplotlib.figure import Figure

        kinds = Figure().canvas.get_supported_filetypes()
        suffix = Path(args.plot).suffix.lower().lstrip(".")
        if suffix not in kinds:
            raise ValueError(f"--plot: unknown image type {'.' + suffix!r}; expected one of "
                             + ", ".join("." + k for k in sorted(kinds)))


# Filters whose statistic has a sign (or, for auc, a side of 1/2): the command ranks them by
# strength, so a feature that predicts the target in the negative direction is kept too.
_SIGNED_FILTERS = ("t_test", "s2n", "pearson", "auc")


class _ByStrength:
    """A signed filter as a score function that ranks by strength (|statistic|; for auc,
    max(auc, 1 - auc)); ``signed`` keeps the last signed scores for the report."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.signed: Any = None

    def __call__(self, X: Any, y: Any) -> Any:
        from . import filters
        from ._results import FilterResult

        out = getattr(filters, self.method)(X, y)
        self.signed = np.asarray(out.scores)
        strength = (np.maximum(self.signed, 1.0 - self.signed) if self.method == "auc"
                    else np.abs(self.signed))
        return FilterResult(strength, out.pvalues, out.feature_names)


def _selector(method: str, k: int | None, n_jobs: int | None, verbose: bool,
              n_features: int) -> Any:
    from . import sklearn as sk

    if method in _FILTERS:
        func = _ByStrength(method) if method in _SIGNED_FILTERS else method
        if k is None:
            return sk.FilterSelector(func)
        return sk.FilterSelector(func, mode="k_best", param=k)
    name, takes_k, _ = _METHODS[method]
    cls = getattr(sk, name)
    params = cls().get_params()
    kwargs: dict[str, Any] = dict(_CLI_SETTINGS.get(method, {}))
    if "max_features" in kwargs:
        kwargs["max_features"] = min(kwargs["max_features"], n_features)
    if k is not None:
        if not takes_k:
            raise ValueError(f"--k: {method} chooses its own number of features")
        kwargs["n_features_to_select"] = k
    if "n_jobs" in params:
        kwargs["n_jobs"] = n_jobs
    if "verbose" in params:
        kwargs["verbose"] = verbose
    return cls(**kwargs)


def run(args: argparse.Namespace) -> int:
    try:
        import pandas  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"fastfs select needs pandas and scikit-learn ({exc.name} is missing): "
                         "pip install 'fastfs[cli]'") from None
    table = _read(args.data)
    if args.target not in table.columns:
        columns = ", ".join(map(str, table.columns[:20]))
        raise ValueError(f"--target: no column {args.target!r} in {args.data} "
                         f"(columns: {columns}{', ...' if len(table.columns) > 20 else ''})")
    if len(table) < 2:
        what = "no data row (a header only)" if len(table) == 0 else "one data row"
        raise ValueError(f"DATA: {args.data} has {what}; selecting features needs at least "
                         "2 samples")
    if args.k is not None and args.k < 1:
        raise ValueError(f"--k: must be >= 1, got {args.k}")
    _check_outputs(args)
    X = table.drop(columns=[args.target])
    y = table[args.target]
    if X.shape[1] == 0:
        raise ValueError(f"DATA: {args.data} has no column besides the target")
    if args.k is not None and args.k > X.shape[1]:
        raise ValueError(f"--k: must be at most the number of features ({X.shape[1]}), got "
                         f"{args.k}")
    missing = np.flatnonzero(y.isna().to_numpy())
    if missing.size:
        rows = ", ".join(str(i + 2) for i in missing[:5]) + (", ..." if missing.size > 5 else "")
        raise ValueError(f"--target: column {args.target!r} has {missing.size} missing "
                         f"value(s) (file lines {rows}); drop or fill those rows first")
    from pandas.api.types import is_numeric_dtype

    text = [str(c) for c in X.columns
            if not is_numeric_dtype(X[c].dtype)]
    if text:
        shown = ", ".join(repr(c) for c in text[:5]) + (", ..." if len(text) > 5 else "")
        raise ValueError(f"DATA: every column but the target must be numeric; not numeric: "
                         f"{shown} (drop or encode them first)")
    real_target = _METHODS.get(args.method, ("", False, args.method in _REAL_TARGET_FILTERS))[2]
    if real_target and not is_numeric_dtype(y.dtype):
        raise ValueError(f"--target: {args.method} needs a numeric target; column "
                         f"{args.target!r} has dtype {y.dtype}")
    verbose = not args.quiet and sys.stderr.isatty()
    selector = _selector(args.method, args.k, args.n_jobs, verbose, X.shape[1])
    start = time.perf_counter()
    try:
        selector.fit(X, y)
    except ValueError as exc:
        holes = [str(c) for c in X.columns[X.isna().any().to_numpy()]]
        if holes and "NaN" in str(exc):
            # (data rows, counted from 1: the reader skips blank lines, so file lines would
            # be off, and a Parquet file has none)
            rows = np.flatnonzero(X.isna().any(axis=1).to_numpy())
            where = ", ".join(str(i + 1) for i in rows[:5]) + (", ..." if rows.size > 5 else "")
            shown = ", ".join(repr(c) for c in holes[:5]) + (", ..." if len(holes) > 5 else "")
            raise ValueError(f"DATA: {args.method} needs every cell filled; empty cells in "
                             f"column(s) {shown} (data rows {where}): fill or drop them, or "
                             "use relieff, surf, surfstar, multisurf or multisurfstar, which "
                             "handle missing values") from None
        raise
    seconds = time.perf_counter() - start

    names = [str(c) for c in X.columns]
    support = selector.get_support()
    ranks = getattr(selector, "ranking_", None)
    scores = getattr(selector, "scores_", None)
    if isinstance(getattr(selector, "score_func", None), _ByStrength):
        scores = selector.score_func.signed  # ranked by strength, reported with their sign
    chosen = np.flatnonzero(support)
    if ranks is not None:
        chosen = chosen[np.argsort(np.asarray(ranks)[chosen], kind="stable")]
    print(f"{args.method}: {chosen.size} of {len(names)} features selected in {seconds:.3f} s")
    for place, j in enumerate(chosen, 1):
        score = "" if scores is None else f"  {float(scores[j]):.6g}"
        print(f"{place:>4}  {names[j]}{score}")

    if args.out:
        if Path(args.out).suffix.lower() == ".json":
            report = {
                "data": args.data, "target": args.target, "method": args.method, "k": args.k,
                "seconds": seconds, "n_features": len(names),
                "selected": [names[j] for j in chosen],
                "scores": None if scores is None else
                {names[j]: (None if not np.isfinite(s) else float(s))
                 for j, s in enumerate(np.asarray(scores, dtype=np.float64))},
            }
            Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
        else:
            _write(table[[names[j] for j in chosen] + [args.target]], args.out)
        print(f"wrote {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from . import plot

        ax = plot.weights(selector, title=f"{args.method} on {Path(args.data).name}")
        ax.figure.savefig(args.plot, bbox_inches="tight")
        plt.close(ax.figure)
        print(f"wrote {args.plot}")
    return 0
