"""Benchmark: fastfs's linear learners against scikit-learn at the same accuracy.

fastfs.learners.logistic_regression (Newton's method; conjugate-gradient steps above 64
columns with two classes or 256 weights with more) against scikit-learn's
LogisticRegression(C=1, solver="lbfgs") at tol 1e-8 (the accuracy fastfs's default tol reaches)
and at its default tol 1e-4; ridge_regression against Ridge(solver="auto") and, where the
columns outnumber the rows, Ridge(solver="svd").

Same process, fixed-seed data, one BLAS thread for both (threadpoolctl; fastfs's learners are
single-threaded). Before timing, each pair's penalised objectives are compared: fastfs's must
be no higher than scikit-learn's at tol 1e-8 plus 1e-9 relative. The shapes:

- binary / multinomial, narrow (dense Newton) and wide (conjugate gradients);
- "scaled": the same wide multinomial problem with the columns multiplied by e^u, u uniform in
  [-3, 3] (columns at scales spread over 400x, as unstandardised genes or pixels);
- "signal": labels from the first K columns plus noise instead of random labels.

    python bench/compare/compare_learners.py          # the sizes below, median of 5
    python bench/compare/compare_learners.py --smoke  # small sizes, one repeat (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

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

from fastfs.learners import logistic_regression, ridge_regression  # noqa: E402

# (name, m, d, classes, kind); classes 0 = ridge regression
FULL = [
    ("binary narrow", 5000, 40, 2, "random"),
    ("binary wide", 2000, 600, 2, "random"),
    ("multinomial narrow", 5000, 40, 4, "random"),
    ("multinomial wide", 2000, 600, 4, "random"),
    ("multinomial wide scaled", 2000, 600, 4, "scaled"),
    ("multinomial wide signal", 2000, 600, 4, "signal"),
    ("multinomial 8 classes", 6000, 1500, 8, "random"),
    ("ridge tall", 5000, 200, 0, "signal"),
    ("ridge wide", 200, 3000, 0, "signal"),
]
SMOKE = [
    ("binary wide", 300, 100, 2, "random"),
    ("multinomial wide", 300, 100, 4, "scaled"),
    ("ridge wide", 50, 300, 0, "signal"),
]


def make(m: int, d: int, k: int, kind: str, seed: int):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, d))
    if kind == "scaled":
        X *= np.exp(gen.uniform(-3, 3, d))
    if k == 0:
        w = np.zeros(d)
        w[:20] = gen.standard_normal(20)
        return X, X @ w + 0.1 * gen.standard_normal(m)
    if kind == "signal":
        return X, np.argmax(X[:, :k] + 0.5 * gen.standard_normal((m, k)), axis=1)
    return X, gen.integers(0, k, m)


def logistic_objective(X, y, coef, intercept) -> float:
    """sum_i log-loss + ||W||^2 / 2 (C = 1), computed here from the weights."""
    Z = X @ coef.T + intercept
    if Z.shape[1] == 1:
        z = Z[:, 0]
        loss = np.logaddexp(0.0, z) - (y == 1) * z
    else:
        top = Z.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(Z - top).sum(axis=1))
        loss = lse - Z[np.arange(len(y)), y]
    return float(loss.sum() + 0.5 * (coef ** 2).sum())


def ridge_objective(X, y, coef, intercept, alpha: float = 1.0) -> float:
    r = y - X @ coef.ravel() - intercept
    return float(r @ r + alpha * (coef ** 2).sum())


def median_time(fn, repeat: int):
    runs, out = [], None
    for _ in range(repeat):
        t, out = timed(fn)
        runs.append(t)
    return statistics.median(runs), runs, out


def run_row(name, m, d, k, kind, seed, repeat) -> dict:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression, Ridge
    from threadpoolctl import threadpool_limits

    X, y = make(m, d, k, kind, seed)
    row = {"name": name, "m": m, "d": d, "classes": k, "load": load_average()}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if k == 0:
            t_ff, r_ff, f = median_time(lambda: ridge_regression(X, y, alpha=1.0), repeat)
            solver = "svd" if d > m else "auto"
            t_sk, r_sk, s = median_time(lambda: Ridge(alpha=1.0, solver=solver).fit(X, y),
                                        repeat)
            o_ff = ridge_objective(X, y, f.coef, f.intercept)
            o_sk = ridge_objective(X, y, s.coef_, s.intercept_)
            row.update(baseline=f"Ridge(solver={solver!r})", fastfs_s=t_ff, fastfs_runs=r_ff,
                       sklearn_s=t_sk, sklearn_runs=r_sk, objective_fastfs=o_ff,
                       objective_sklearn=o_sk)
            rel = (o_ff - o_sk) / abs(o_sk)
        else:
            t_ff, r_ff, f = median_time(lambda: logistic_regression(X, y, C=1.0), repeat)

            def sk(tol):
                return LogisticRegression(C=1.0, tol=tol, max_iter=100000).fit(X, y)

            t_sk, r_sk, s = median_time(lambda: sk(1e-8), repeat)
            t_sk4, r_sk4, s4 = median_time(lambda: sk(1e-4), repeat)
            yc = np.searchsorted(np.unique(y), y)
            o_ff = logistic_objective(X, yc, f.coef, f.intercept)
            o_sk = logistic_objective(X, yc, s.coef_, s.intercept_)
            o_sk4 = logistic_objective(X, yc, s4.coef_, s4.intercept_)
            row.update(baseline="LogisticRegression(lbfgs, tol=1e-8)", fastfs_s=t_ff,
                       fastfs_runs=r_ff, sklearn_s=t_sk, sklearn_runs=r_sk,
                       sklearn_default_s=t_sk4, sklearn_default_runs=r_sk4,
                       objective_fastfs=o_ff, objective_sklearn=o_sk,
                       objective_sklearn_default=o_sk4, newton_iterations=f.n_iter)
            rel = (o_ff - o_sk) / abs(o_sk)
    row["objective_excess"] = rel
    if not rel <= 1e-9:
        raise SystemExit(f"{name}: fastfs's objective {o_ff!r} is above scikit-learn's "
                         f"{o_sk!r} (relative {rel:.3g})")
    extra = (f", scikit-learn tol 1e-4 {fmt_s(row['sklearn_default_s'])}"
             if "sklearn_default_s" in row else "")
    print(f"{name} ({m} x {d}): fastfs {fmt_s(t_ff)}, {row['baseline']} {fmt_s(t_sk)} "
          f"({t_sk / t_ff:.2f}x){extra}; objective excess {rel:.2g}", flush=True)
    return row


def render(info: dict, rows: list[dict], args) -> str:
    lines = [
        "# Linear learners: fastfs against scikit-learn",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['usable_cores']} usable cores; NumPy {info['numpy']}, "
        f"fastfs {info['fastfs']} ({info['extension']}); {info['date']}. Load before / after: "
        f"{info['load_before']} / {info['load_after']}.",
        "",
        f"One thread; median of {args.repeat} runs. C = 1 (logistic), alpha = 1 (ridge). "
        "Ratio = scikit-learn's time / fastfs's at the same accuracy (tol 1e-8 for lbfgs); "
        "objective excess = (fastfs - scikit-learn) / |scikit-learn| of the penalised "
        "objective, checked <= 1e-9 before the row is kept.",
        "",
        "| problem | m x d | classes | fastfs | scikit-learn (tol 1e-8) | ratio "
        "| scikit-learn tol 1e-4 | objective excess | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        default = fmt_s(r["sklearn_default_s"]) if "sklearn_default_s" in r else "-"
        lines.append(
            f"| {r['name']} | {r['m']} x {r['d']} | {r['classes'] or '-'} "
            f"| {fmt_s(r['fastfs_s'])} | {fmt_s(r['sklearn_s'])} "
            f"| {r['sklearn_s'] / r['fastfs_s']:.2f}x | {default} "
            f"| {r['objective_excess']:.1g} | {r['load']} |")
    lines += ["", "Plot: `time_learners.png`.", ""]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--rows", default=None,
                   help="comma-separated problem names (default: all)")
    add_run_arguments(p, threads=False)
    args = p.parse_args()
    table = SMOKE if args.smoke else FULL
    if args.smoke:
        args.repeat = 1
    if args.rows:
        wanted = set(args.rows.split(","))
        table = [t for t in table if t[0] in wanted]
    args.out = output_dir(args)
    info = machine_info()
    rows = [run_row(*t, args.seed, args.repeat) for t in table]
    finish_run(info)

    def plot(path: Path) -> None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
        names = [r["name"] for r in rows]
        ys = np.arange(len(rows))
        ax.barh(ys - 0.2, [r["sklearn_s"] for r in rows], 0.4, label="scikit-learn")
        ax.barh(ys + 0.2, [r["fastfs_s"] for r in rows], 0.4, label="fastfs")
        ax.set_yticks(ys, names)
        ax.set_xscale("log")
        ax.set_xlabel("seconds (one thread)")
        ax.legend()
        save_figure(fig, path)

    write_report(args.out, "results_learners", render(info, rows, args), info, rows, args,
                 plot, "time_learners.png")


if __name__ == "__main__":
    main()
