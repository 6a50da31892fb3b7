"""Benchmark (issue 6, SPEC 9): forward selection with the leave-one-out 1-NN criterion.

fastfs.sfs(criterion="loo_knn_accuracy") against scikit-learn's
SequentialFeatureSelector(KNeighborsClassifier(1), cv=5) and mlxtend's
SequentialFeatureSelector with the same estimator and cv, plus fastfs.sfs driven by the same
LOO 1-NN criterion written as a Python callable (the cost of calling back into Python). One run
per configuration (they are long), for each thread count; wall and CPU time of every run.

Configurations: synthetic m=500, n=40, 5 features; MADELON's training set (2000 x 500,
z-scored) for 20 features. The scikit-learn, mlxtend and callable runs on MADELON would take
hours, so by default they run only their first --madelon-steps forward steps and the full time
is extrapolated (marked "extrap." everywhere; see the note printed with the table).

A second table times fastfs.rank_features (every feature scored alone, top k kept) against
sfs's first step (fastfs.sfs with k = 1), which scores the same single-feature candidates.

    python bench/compare/compare_search.py            # both configurations, threads 1 and 2
    python bench/compare/compare_search.py --smoke    # tiny sizes, a few seconds (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import fastfs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    fmt_s,
    load_average,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    timed,
    write_report,
)

MADELON = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "madelon.npz"
MADELON_RELEVANT = {28, 48, 64, 105, 128, 153, 241, 281, 318, 336, 338, 378, 433, 442, 451, 453,
                    455, 472, 475, 493}
METHODS = ("fastfs", "fastfs callable", "scikit-learn", "mlxtend")


def loo_1nn_accuracy(X_subset: np.ndarray, y: np.ndarray) -> float:
    """LOO 1-NN accuracy in NumPy with the built-in criterion's rules (squared Euclidean
    distance, never the sample itself, distance ties to the lower sample index)."""
    sq = np.einsum("ij,ij->i", X_subset, X_subset)
    D = sq[:, None] + sq[None, :] - 2.0 * (X_subset @ X_subset.T)
    np.fill_diagonal(D, np.inf)
    return float(np.mean(y[np.argmin(D, axis=1)] == y))


def step_weights(n: int, k: int, cost=None) -> np.ndarray:
    """Expected cost of each of the k forward steps: step s (1-based) evaluates n - s + 1
    subsets of size s, each costing cost(s) (1 when no cost profile is given)."""
    sizes = np.arange(1, k + 1)
    per = np.ones(k) if cost is None else np.array([cost(int(s)) for s in sizes])
    return (n - sizes + 1) * per


def extrapolation(n: int, k: int, stop: int, cost=None) -> float:
    """Factor from the time of the first ``stop`` steps to all k steps."""
    w = step_weights(n, k, cost)
    return float(w.sum() / w[:stop].sum())


def cost_profile(evaluate, X, prefix, repeat: int = 3):
    """Median time of ``evaluate(X[:, prefix[:s]])`` at every size s (at most 20 sizes, then
    linearly interpolated): how a candidate's cost grows along the search. Every size, because
    the cost need not be smooth: KNeighborsClassifier's "auto" switches from a tree to brute
    force above 15 features."""
    k = len(prefix)
    sizes = sorted({int(round(v)) for v in np.linspace(1, k, min(k, 20))})
    evaluate(np.ascontiguousarray(X[:, prefix[:1]]))  # first-call costs out of the profile
    times = []
    for s in sizes:
        Xs = np.ascontiguousarray(X[:, sorted(prefix[:s])])
        times.append(float(np.median([timed(lambda: evaluate(Xs))[0] for _ in range(repeat)])))
    return (lambda s: float(np.interp(s, sizes, times))), dict(zip(sizes, times))


def cv_knn(y):
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    return lambda Xs: cross_val_score(KNeighborsClassifier(n_neighbors=1), Xs, y, cv=5)


def cpu_timed(fn):
    c0 = time.process_time()
    wall, out = timed(fn)
    return wall, (time.process_time() - c0) / wall, out


def run_fastfs(X, y, k, threads):
    wall, busy, res = cpu_timed(lambda: fastfs.sfs(X, y, k, criterion="loo_knn_accuracy",
                                                   n_jobs=threads))
    return {"s": wall, "cpu_per_wall": busy, "steps_timed": k, "extrapolated": False,
            "selected": [int(i) for i in res.selected], "score": float(res.score)}


def run_callable(X, y, k, threads, steps, cost=None):
    """fastfs.sfs with the NumPy criterion, stopped by the callback after ``steps`` steps."""
    stop = min(steps, k)
    callback = (lambda state: state.step + 1 >= stop) if stop < k else None
    wall, busy, res = cpu_timed(lambda: fastfs.sfs(X, y, k, criterion=loo_1nn_accuracy,
                                                   n_jobs=threads, callback=callback))
    n = X.shape[1]
    scale = extrapolation(n, k, stop, cost)
    return {"s": wall * scale, "timed_s": wall, "cpu_per_wall": busy, "steps_timed": stop,
            "extrapolated": stop < k, "selected": [int(i) for i in res.selected]}


def run_sklearn(X, y, k, threads, steps, cost=None):
    from sklearn.feature_selection import SequentialFeatureSelector
    from sklearn.neighbors import KNeighborsClassifier

    stop = min(steps, k)
    sfs = SequentialFeatureSelector(KNeighborsClassifier(n_neighbors=1), n_features_to_select=stop,
                                    direction="forward", cv=5, n_jobs=threads)
    wall, busy, _ = cpu_timed(lambda: sfs.fit(X, y))
    n = X.shape[1]
    scale = extrapolation(n, k, stop, cost)
    return {"s": wall * scale, "timed_s": wall, "cpu_per_wall": busy, "steps_timed": stop,
            "extrapolated": stop < k,
            "selected": [int(i) for i in np.flatnonzero(sfs.get_support())]}


def run_mlxtend(X, y, k, threads, steps, cost=None):
    from mlxtend.feature_selection import SequentialFeatureSelector
    from sklearn.neighbors import KNeighborsClassifier

    stop = min(steps, k)
    sfs = SequentialFeatureSelector(KNeighborsClassifier(n_neighbors=1), k_features=stop,
                                    forward=True, floating=False, scoring="accuracy", cv=5,
                                    n_jobs=threads, verbose=0)
    wall, busy, _ = cpu_timed(lambda: sfs.fit(X, y))
    n = X.shape[1]
    scale = extrapolation(n, k, stop, cost)
    return {"s": wall * scale, "timed_s": wall, "cpu_per_wall": busy, "steps_timed": stop,
            "extrapolated": stop < k, "selected": sorted(int(i) for i in sfs.k_feature_idx_)}


def run_ranking(X, y, k, threads, repeat: int = 5) -> dict:
    """Median wall time of rank_features (top k) and of sfs's first step (sfs to 1 feature),
    after one untimed run each; both score every feature alone with the built-in LOO 1-NN
    criterion."""
    def median(fn):
        fn()
        times = []
        for _ in range(repeat):
            wall, out = timed(fn)
            times.append(wall)
        return float(np.median(times)), out

    rank_s, rank = median(lambda: fastfs.rank_features(X, y, k, criterion="loo_knn_accuracy",
                                                       n_jobs=threads))
    first_s, first = median(lambda: fastfs.sfs(X, y, 1, criterion="loo_knn_accuracy",
                                               n_jobs=threads))
    agree = int(rank.selected[0]) == int(first.selected[0])
    return {"rank_s": rank_s, "first_step_s": first_s, "ratio": rank_s / first_s,
            "agree": agree}


def synthetic(m: int, n: int, seed: int):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=m, n_features=n, n_informative=min(5, n - 1),
                               n_redundant=0,
                               random_state=seed)
    return X, y


def madelon(m_max: int | None = None, n_max: int | None = None):
    data = np.load(MADELON.resolve())
    X = data["X_train"].astype(np.float64)
    y = data["y_train"]
    if m_max is not None:
        X, y = X[:m_max], y[:m_max]
    if n_max is not None:
        X = X[:, :n_max]
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y


def run_config(name, X, y, k, threads, steps) -> dict:
    m, n = X.shape
    row = {"data": name, "m": m, "n": n, "k": k, "load": load_average().split()[0],
           "runs": {}}
    print(f"\n== {name}: m={m} n={n}, forward selection of {k} features "
          f"(load {row['load']})", flush=True)
    costs = {"callable": None, "cv": None}
    for t in threads:
        runs = {}
        runs["fastfs"] = run_fastfs(X, y, k, t)
        if steps < k and costs["cv"] is None:
            # per-candidate cost along fastfs's own path, for the extrapolation
            prefix = runs["fastfs"]["selected"]
            costs["callable"], row["cost_callable_s"] = cost_profile(
                lambda Xs: loo_1nn_accuracy(Xs, y), X, prefix)
            costs["cv"], row["cost_cv_s"] = cost_profile(cv_knn(y), X, prefix)
            print("one candidate's cost by subset size (s: seconds): NumPy LOO 1-NN "
                  + ", ".join(f"{s}: {v:.3g}" for s, v in row["cost_callable_s"].items())
                  + "; 5-fold CV of KNeighborsClassifier(1) "
                  + ", ".join(f"{s}: {v:.3g}" for s, v in row["cost_cv_s"].items()),
                  flush=True)
        runs["fastfs callable"] = run_callable(X, y, k, t, steps, costs["callable"])
        runs["scikit-learn"] = run_sklearn(X, y, k, t, steps, costs["cv"])
        runs["mlxtend"] = run_mlxtend(X, y, k, t, steps, costs["cv"])
        for method in METHODS:
            r = runs[method]
            basis = (f"EXTRAPOLATED from {r['steps_timed']} of {k} steps "
                     f"(timed {fmt_s(r['timed_s'])})" if r["extrapolated"] else "measured")
            ratio = r["s"] / runs["fastfs"]["s"]
            print(f"{name} threads={t} {method:16s} {fmt_s(r['s']):>10s}  cpu/wall "
                  f"{r['cpu_per_wall']:.2f}  {ratio:8.1f}x fastfs  [{basis}]", flush=True)
        # the callable computes the built-in criterion: same first steps, same subsets
        cb = runs["fastfs callable"]["selected"]
        runs["callable_agrees"] = cb == runs["fastfs"]["selected"][:len(cb)]
        if not runs["callable_agrees"]:
            print(f"warning: callable and built-in selections differ: {cb} vs "
                  f"{runs['fastfs']['selected']}")
        row["runs"][t] = runs
        rk = run_ranking(X, y, k, t)
        row.setdefault("ranking", {})[t] = rk
        print(f"{name} threads={t} rank_features(top {k}) {fmt_s(rk['rank_s'])} vs sfs's first "
              f"step {fmt_s(rk['first_step_s'])}: {rk['ratio']:.2f}x"
              + ("" if rk["agree"] else "  (warning: first features differ)"), flush=True)
    sel = row["runs"][threads[0]]["fastfs"]["selected"]
    print(f"fastfs selected {sel}")
    if name.startswith("MADELON") and n == 500:
        row["relevant_found"] = len(MADELON_RELEVANT.intersection(sel))
        print(f"of which MADELON's 20 relevant features: {row['relevant_found']}")
    return row


def render(info: dict, rows: list[dict], args) -> str:
    lines = [
        "# Forward selection with LOO 1-NN: fastfs vs scikit-learn and mlxtend",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, scikit-learn {info['sklearn']}, mlxtend {info['mlxtend']}, "
        f"fastfs {info['fastfs']} ({info['extension']}); {info['date']}.",
        f"Load average before / after the run: {info['load_before']} / {info['load_after']} "
        "(the machine is shared; other work inflates the times, the 2-thread ones most).",
        "",
        "Methods, each one run per configuration and thread count t:",
        "- fastfs: `fastfs.sfs(X, y, k, criterion=\"loo_knn_accuracy\", n_jobs=t)` (built-in "
        "leave-one-out 1-NN accuracy, in C++);",
        "- fastfs callable: `fastfs.sfs` with the same criterion as a NumPy function "
        "`J(X_subset, y)` (one Python call per candidate subset);",
        "- scikit-learn: `SequentialFeatureSelector(KNeighborsClassifier(1), "
        "n_features_to_select=k, cv=5, n_jobs=t)`;",
        "- mlxtend: `SequentialFeatureSelector(KNeighborsClassifier(1), k_features=k, "
        "forward=True, floating=False, scoring=\"accuracy\", cv=5, n_jobs=t)`.",
        "",
        "The criteria differ (leave-one-out for fastfs, 5-fold CV for the others) and so may "
        "the subsets; the time is what is compared. **Extrapolated** times (marked *): the run "
        f"was stopped after its first {args.madelon_steps} forward step(s) and its time scaled "
        "by W(all k steps) / W(timed steps), where W sums over steps s = 1..k the number of "
        "candidates, n - s + 1, times one candidate's cost at size s. That cost is measured "
        "separately (median of 3) along fastfs's selected path at a few sizes and interpolated "
        "linearly: one `cross_val_score(KNeighborsClassifier(1), X_S, y, cv=5)` for "
        "scikit-learn and mlxtend, one call of the NumPy criterion for the callable "
        "(profile below the table). Library overhead per step is assumed to scale the same way.",
        "",
        "CPU/wall: CPU time of this process over wall time. scikit-learn and mlxtend with "
        "n_jobs > 1 work in joblib worker processes that it does not count, so their CPU/wall "
        "is near 0 there and means nothing.",
        "",
        "| data | m | n | k | threads | method | wall | CPU/wall | basis | time / fastfs |"
        " load |",
        "|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        for t, runs in r["runs"].items():
            for method in METHODS:
                x = runs[method]
                star = "*" if x["extrapolated"] else ""
                basis = (f"extrapolated from {x['steps_timed']} of {r['k']} steps "
                         f"({fmt_s(x['timed_s'])} timed)" if x["extrapolated"] else "measured")
                lines.append(
                    f"| {r['data']} | {r['m']} | {r['n']} | {r['k']} | {t} | {method} "
                    f"| {fmt_s(x['s'])}{star} | {x['cpu_per_wall']:.2f} | {basis} "
                    f"| {x['s'] / runs['fastfs']['s']:.0f}x | {r['load']} |")
    for r in rows:
        if "cost_cv_s" in r:
            lines.append("")
            lines.append(f"Cost of one candidate on {r['data']} by subset size (seconds): "
                         "5-fold CV of 1-NN " + ", ".join(
                             f"{s}: {v:.3g}" for s, v in r["cost_cv_s"].items())
                         + "; NumPy LOO 1-NN " + ", ".join(
                             f"{s}: {v:.3g}" for s, v in r["cost_callable_s"].items()) + ".")
        if "relevant_found" in r:
            lines.append(f"fastfs on {r['data']} found {r['relevant_found']} of MADELON's 20 "
                         "relevant features among its selection.")
    lines += [
        "",
        "## Naive ranking against sfs's first step",
        "",
        "`fastfs.rank_features(X, y, k, criterion=\"loo_knn_accuracy\", n_jobs=t)` (every "
        "feature scored alone, then J of the top k together) against "
        "`fastfs.sfs(X, y, 1, ...)`, whose one step scores the same candidates; median of 5 "
        "runs after an untimed one.",
        "",
        "| data | m | n | k | threads | rank_features | sfs first step | ratio | same first |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        for t, rk in r.get("ranking", {}).items():
            lines.append(f"| {r['data']} | {r['m']} | {r['n']} | {r['k']} | {t} "
                         f"| {fmt_s(rk['rank_s'])} | {fmt_s(rk['first_step_s'])} "
                         f"| {rk['ratio']:.2f}x | {'yes' if rk['agree'] else 'NO'} |")
    lines += ["", "Plot: `time_search.png`.", ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()

    fig, axes = plt.subplots(1, len(rows), figsize=(5.5 * len(rows), 4.3), squeeze=False)
    for ax, r in zip(axes[0], rows):
        threads = list(r["runs"])
        width = 0.8 / len(threads)
        for j, t in enumerate(threads):
            vals = [r["runs"][t][mth]["s"] for mth in METHODS]
            xs = np.arange(len(METHODS)) + (j - (len(threads) - 1) / 2) * width
            bars = ax.bar(xs, vals, width, label=f"{t} thread{'s' if t > 1 else ''}")
            for b, mth in zip(bars, METHODS):
                if r["runs"][t][mth]["extrapolated"]:
                    b.set_hatch("//")
        ax.set_xticks(np.arange(len(METHODS)), [m.replace(" ", "\n") for m in METHODS])
        ax.set_yscale("log")
        ax.set_ylabel("wall time (s); hatched = extrapolated")
        ax.set_title(f"{r['data']}: m={r['m']}, n={r['n']}, k={r['k']}")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--madelon-steps", type=int, default=1,
                   help="forward steps of the slow methods actually run on MADELON")
    p.add_argument("--no-madelon", action="store_true")
    add_run_arguments(
        p, smoke_help="m=60, n=5 synthetic and a 100 x 6 slice of MADELON, 2 features (CI)")
    args = p.parse_args(argv)
    args.out = output_dir(args)

    import mlxtend
    import sklearn

    info = machine_info()
    info["sklearn"] = sklearn.__version__
    info["mlxtend"] = mlxtend.__version__
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, scikit-learn {info['sklearn']}, mlxtend {info['mlxtend']}, "
          f"fastfs {info['fastfs']}, load {info['load_before']}")

    # Thread pools, joblib worker processes and first-call costs out of the timed runs.
    Xw, yw = synthetic(60, 4, args.seed)
    for t in args.threads:
        fastfs.sfs(Xw, yw, 2, criterion="loo_knn_accuracy", n_jobs=t)
        run_sklearn(Xw, yw, 1, t, 1)
        run_mlxtend(Xw, yw, 1, t, 1)

    rows = []
    if args.smoke:
        X, y = synthetic(60, 5, args.seed)
        rows.append(run_config("synthetic", X, y, 2, args.threads, steps=2))
        if not args.no_madelon and MADELON.exists():
            X, y = madelon(100, 6)
            rows.append(run_config("MADELON slice", X, y, 2, args.threads,
                                   steps=args.madelon_steps))
    else:
        X, y = synthetic(500, 40, args.seed)
        rows.append(run_config("synthetic", X, y, 5, args.threads, steps=5))
        if not args.no_madelon:
            X, y = madelon()
            rows.append(run_config("MADELON", X, y, 20, args.threads,
                                   steps=args.madelon_steps))
    finish_run(info)
    if any(x["extrapolated"] for r in rows for runs in r["runs"].values()
           for x in (runs[mth] for mth in METHODS)):
        print("NOTE: times marked EXTRAPOLATED were not measured in full: the first "
              f"{args.madelon_steps} step(s) were timed and scaled by the candidate count "
              "times the measured per-candidate cost at each subset size.")
    write_report(args.out, "results_search", render(info, rows, args), info, rows, args,
                 lambda path: plot(rows, path), "time_search.png")


if __name__ == "__main__":
    main()
