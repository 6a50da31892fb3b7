"""Benchmark (issue 5, SPEC 9): fastfs.omp against scikit-learn's OrthogonalMatchingPursuit and
fastfs.lasso_path against scikit-learn's lasso_path.

Same process, same fixed-seed data (Gaussian X, float64, C order as most users hold it; y from
`atoms` random coefficients plus noise). For each size and thread count t (fastfs n_jobs=t,
scikit-learn's BLAS limited to t threads by threadpoolctl):

(a) OMP with `atoms` rounds: scikit-learn `OrthogonalMatchingPursuit(n_nonzero_coefs=atoms,
    fit_intercept=False).fit(X, y)`; fastfs `omp(X, y, atoms)` with the book's exact rule
    (method "qr", the default) and with `criterion="gradient"` (classic OMP, the same rule as
    scikit-learn: its selected set and coefficients are checked against scikit-learn's first);
(b) the LASSO path on the same 100-alpha grid (computed once, passed to both), same tol.

Writes results_linear.md, results_linear.json and time_linear.png to --out.

    python bench/compare/compare_linear.py            # (m, d) = (1000, 5000) and (5000, 1000), 100 atoms
    python bench/compare/compare_linear.py --smoke    # (200, 400), 20 atoms: a few seconds (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import statistics
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

COEF_TOL = 1e-8


def make_data(m: int, d: int, atoms: int, seed: int):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, d))
    w = np.zeros(d)
    idx = gen.choice(d, size=min(atoms, d), replace=False)
    w[idx] = gen.standard_normal(idx.size)
    y = X @ w + 0.1 * gen.standard_normal(m)
    return X, y


def timed_runs(fn, repeat: int):
    """(median wall, median CPU/wall, all walls, last result)."""
    walls, busy, out = [], [], None
    for _ in range(repeat):
        c0 = time.process_time()
        wall, out = timed(fn)
        walls.append(wall)
        busy.append((time.process_time() - c0) / wall)
    return statistics.median(walls), statistics.median(busy), walls, out


def run_omp(X, y, atoms: int, threads: list[int], repeat: int) -> dict:
    from sklearn.linear_model import OrthogonalMatchingPursuit
    from threadpoolctl import threadpool_limits

    m, d = X.shape
    res: dict = {}
    for t in threads:
        with threadpool_limits(t):
            sk_s, sk_busy, sk_runs, sk = timed_runs(
                lambda: OrthogonalMatchingPursuit(n_nonzero_coefs=atoms,
                                                  fit_intercept=False).fit(X, y), repeat)
        grad_s, grad_busy, grad_runs, g = timed_runs(
            lambda: fastfs.omp(X, y, atoms, criterion="gradient", n_jobs=t), repeat)
        qr_s, qr_busy, qr_runs, _ = timed_runs(lambda: fastfs.omp(X, y, atoms, n_jobs=t), repeat)
        same = np.array_equal(np.sort(g.selected), np.flatnonzero(sk.coef_))
        diff = float(np.abs(g.coef - sk.coef_[g.selected]).max()) if same else float("inf")
        if not (same and diff <= COEF_TOL):
            raise SystemExit(f"fastfs.omp(criterion='gradient') and scikit-learn's OMP disagree "
                             f"(same set: {same}, max coef diff {diff:.3g})")
        res[t] = {"sklearn_s": sk_s, "sklearn_runs": sk_runs, "sklearn_cpu": sk_busy,
                  "exact_s": qr_s, "exact_runs": qr_runs, "exact_cpu": qr_busy,
                  "gradient_s": grad_s, "gradient_runs": grad_runs, "gradient_cpu": grad_busy,
                  "coef_diff": diff}
        print(f"m={m} d={d} OMP {atoms} atoms, {t} thread(s): scikit-learn {fmt_s(sk_s)}, "
              f"fastfs exact {fmt_s(qr_s)} ({sk_s / qr_s:.2f}x), gradient {fmt_s(grad_s)} "
              f"({sk_s / grad_s:.2f}x); gradient == scikit-learn (coef diff {diff:.1g})",
              flush=True)
    return res


def run_lasso(X, y, threads: list[int], repeat: int, tol: float, n_alphas: int) -> dict:
    import warnings

    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
    from sklearn.linear_model import lasso_path
    from threadpoolctl import threadpool_limits

    m, d = X.shape
    alpha_max = float(np.abs(X.T @ y).max()) / m
    grid = np.geomspace(alpha_max, 1e-3 * alpha_max, n_alphas)
    res: dict = {}
    for t in threads:
        with threadpool_limits(t), warnings.catch_warnings():
            warnings.simplefilter("ignore", SkConvergenceWarning)
            sk_s, sk_busy, sk_runs, sk = timed_runs(
                lambda: lasso_path(X, y, alphas=grid, tol=tol), repeat)
            ff_s, ff_busy, ff_runs, ff = timed_runs(
                lambda: fastfs.lasso_path(X, y, alphas=grid, tol=tol, n_jobs=t), repeat)
        diff = float(np.abs(sk[1] - ff.coefs).max())
        res[t] = {"sklearn_s": sk_s, "sklearn_runs": sk_runs, "sklearn_cpu": sk_busy,
                  "fastfs_s": ff_s, "fastfs_runs": ff_runs, "fastfs_cpu": ff_busy,
                  "coef_diff": diff, "form": "covariance" if m >= d else "data"}
        print(f"m={m} d={d} lasso_path {n_alphas} alphas tol={tol:g}, {t} thread(s): "
              f"scikit-learn {fmt_s(sk_s)}, fastfs {fmt_s(ff_s)} ({sk_s / ff_s:.2f}x), "
              f"max |coef diff| {diff:.2g}", flush=True)
    return res


def render(info: dict, rows: list[dict], args) -> str:
    lines = [
        "# Linear selection: fastfs vs scikit-learn",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, scikit-learn {info['sklearn']}, fastfs {info['fastfs']} "
        f"({info['extension']}); {info['date']}.",
        f"Load average before / after the run: {info['load_before']} / {info['load_after']} "
        "(the machine is shared; other work inflates the times, the 2-thread ones most). Load "
        "column: 1-minute load average when the size started.",
        "",
        f"Times: median of {args.repeat} runs (OMP) and {args.lasso_repeat} runs (LASSO path). "
        "Threads: fastfs n_jobs and scikit-learn's BLAS threads (threadpoolctl). X is float64 in "
        "C order; fastfs's one conversion to Fortran order is included in its time.",
        "",
        "## (a) OMP",
        "",
        "scikit-learn: `OrthogonalMatchingPursuit(n_nonzero_coefs=atoms, fit_intercept=False)"
        ".fit(X, y)`. fastfs exact: `omp(X, y, atoms)` (book's rule <u_j, y>^2 / ||u_j||^2, "
        "method 'qr'). fastfs gradient: `omp(X, y, atoms, criterion='gradient')`, the rule "
        "scikit-learn uses; its set and coefficients were checked equal to scikit-learn's "
        f"(coef diff column, tolerance {COEF_TOL:g}) before timing.",
        "",
        "| m | d | atoms | threads | scikit-learn | fastfs exact | sk / exact | fastfs gradient "
        "| sk / gradient | coef diff | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for t, o in r["omp"].items():
            lines.append(
                f"| {r['m']} | {r['d']} | {r['atoms']} | {t} | {fmt_s(o['sklearn_s'])} "
                f"| {fmt_s(o['exact_s'])} | {o['sklearn_s'] / o['exact_s']:.2f}x "
                f"| {fmt_s(o['gradient_s'])} | {o['sklearn_s'] / o['gradient_s']:.2f}x "
                f"| {o['coef_diff']:.1g} | {r['load']} |")
    lines += [
        "",
        f"## (b) LASSO path ({args.n_alphas} alphas, tol = {args.lasso_tol:g})",
        "",
        "Both on the same geometric grid from alpha_max down to 1e-3 alpha_max, same tol "
        "(duality gap <= tol ||y||^2 for both). fastfs uses the covariance form when m >= d "
        "(as scikit-learn's precompute='auto'), the data form otherwise.",
        "",
        "| m | d | threads | form | scikit-learn | fastfs | sk / fastfs | max coef diff | load |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for t, o in r["lasso"].items():
            lines.append(
                f"| {r['m']} | {r['d']} | {t} | {o['form']} | {fmt_s(o['sklearn_s'])} "
                f"| {fmt_s(o['fastfs_s'])} | {o['sklearn_s'] / o['fastfs_s']:.2f}x "
                f"| {o['coef_diff']:.1g} | {r['load']} |")
    lines += ["", "Plot: `time_linear.png`.", ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3))
    labels, sk, ex, gr, lsk, lff = [], [], [], [], [], []
    for r in rows:
        for t in r["omp"]:
            labels.append(f"{r['m']}x{r['d']}\n{t} thr")
            sk.append(r["omp"][t]["sklearn_s"])
            ex.append(r["omp"][t]["exact_s"])
            gr.append(r["omp"][t]["gradient_s"])
            lsk.append(r["lasso"][t]["sklearn_s"])
            lff.append(r["lasso"][t]["fastfs_s"])
    x = np.arange(len(labels))
    ax = axes[0]
    ax.bar(x - 0.27, sk, 0.27, label="scikit-learn OMP")
    ax.bar(x, ex, 0.27, label="fastfs omp (exact, qr)")
    ax.bar(x + 0.27, gr, 0.27, label="fastfs omp (gradient)")
    ax.set_title(f"OMP, {rows[0]['atoms']} atoms")
    ax2 = axes[1]
    ax2.bar(x - 0.2, lsk, 0.4, label="scikit-learn lasso_path")
    ax2.bar(x + 0.2, lff, 0.4, label="fastfs lasso_path")
    ax2.set_title("LASSO path")
    for a in axes:
        a.set_xticks(x, labels)
        a.set_ylabel("wall time (s)")
        a.grid(True, axis="y", alpha=0.3)
        a.legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000x5000,5000x1000",
                   help="comma-separated MxD sample x feature sizes")
    p.add_argument("--atoms", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--lasso-repeat", type=int, default=3)
    p.add_argument("--lasso-tol", type=float, default=1e-7)
    p.add_argument("--n-alphas", type=int, default=100)
    add_run_arguments(p, smoke_help="tiny sizes (200x400, 20 atoms) for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.sizes, args.atoms, args.repeat, args.lasso_repeat = "200x400", 20, 2, 1
        args.n_alphas = 20
    args.out = output_dir(args)
    sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.sizes.split(",")]

    import sklearn

    info = machine_info()
    info["sklearn"] = sklearn.__version__
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, scikit-learn {info['sklearn']}, fastfs {info['fastfs']}, "
          f"load {info['load_before']}")
    # First calls pay for thread-pool start-up and page faults; keep them out of the medians.
    Xw, yw = make_data(100, 50, 5, args.seed)
    for t in args.threads:
        fastfs.omp(Xw, yw, 5, n_jobs=t)
        fastfs.lasso_path(Xw, yw, n_alphas=5, n_jobs=t)

    rows = []
    for m, d in sizes:
        X, y = make_data(m, d, args.atoms, args.seed)
        row = {"m": m, "d": d, "atoms": args.atoms, "load": load_average().split()[0]}
        row["omp"] = run_omp(X, y, args.atoms, args.threads, args.repeat)
        row["lasso"] = run_lasso(X, y, args.threads, args.lasso_repeat, args.lasso_tol,
                                 args.n_alphas)
        rows.append(row)
    finish_run(info)
    write_report(args.out, "results_linear", render(info, rows, args), info, rows, args,
                 lambda path: plot(rows, path), "time_linear.png")


if __name__ == "__main__":
    main()
