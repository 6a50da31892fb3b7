"""Experiment: how many features, two spherical Gaussians (Navot's thesis, chapter 2).

Figure 2.1: the true average error of the maximum-likelihood rule against the number of
features n (``fastfs.theory.expected_ml_error``, m = 16 training samples, 200 repeats) next to
the approximation Phi(-f(n, m)) with the expectation moved inside, for six choices of mu:
2^(-j/2), 1/j, 1/sqrt(j), 1, sorted uniform random, sorted uniform random / j.

Figure 2.3: a linear SVM (hinge loss, no intercept: scikit-learn's LinearSVC(loss="hinge",
fit_intercept=False)) trained on the first n of 1000 features, its exact error computed from its
w with ``fastfs.theory.linear_rule_error``, averaged over repeats, for mu_j = 2^(-j/2),
1/j, 1/sqrt(j) and training sets of 16, 100 and 225 samples; also with each feature divided by
its training standard deviation (the thesis's dotted lines), the ML rule on the same samples,
and the n_opt of the analysis. C follows the thesis's rule, the value most favourable to SVM
with all 1000 features, chosen per (mu, m) from 1e-4 ... 10 by the mean exact error of a few
extra repeats (--C fixes it instead); the table shows the C chosen. No intercept, because the
best rule has none and because with one the thesis's small C fails in libsvm (SVC): every
multiplier sits at the bound, w = C sum y_i x_i is tiny against the intercept, and the rule
predicts one class (measured: error 0.5 at C = 1e-4 for m = 100). Writes theory_chapter2.png,
theory_chapter2.md and .json to --out.

    python bench/experiments/theory_chapter2.py            # full: 200 repeats (2.1), 50 (2.3)
    python bench/experiments/theory_chapter2.py --smoke    # seconds (CI)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm
from sklearn.svm import LinearSVC

from fastfs import theory

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    write_report,
)

FIG21 = (("a", "mu_j = 2^(-j/2)"), ("b", "mu_j = 1/j"), ("c", "mu_j = 1/sqrt(j)"),
         ("d", "mu_j = 1"), ("e", "mu_j = rand (sorted)"), ("f", "mu_j = rand / j (sorted)"))
FIG23 = (("inv_sqrt_pow2", "mu_j = 2^(-j/2)"), ("inv_j", "mu_j = 1/j"),
         ("inv_sqrt_j", "mu_j = 1/sqrt(j)"))


def fig21_mu(key: str, n: int, rng: np.random.Generator) -> np.ndarray:
    j = np.arange(1, n + 1)
    if key == "a":
        return theory.example_mu("inv_sqrt_pow2", n)
    if key == "b":
        return theory.example_mu("inv_j", n)
    if key == "c":
        return theory.example_mu("inv_sqrt_j", n)
    if key == "d":
        return theory.example_mu("constant", n)
    if key == "e":
        return np.sort(rng.random(n))[::-1]
    return np.sort(rng.random(n) / j)[::-1]


def feature_grid(n_max: int, points: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, n_max, points)).astype(int))


def svm(X: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """The weight vector of a hinge-loss linear SVM without intercept."""
    clf = LinearSVC(loss="hinge", fit_intercept=False, C=C, dual=True, max_iter=20000,
                    tol=1e-5).fit(X, y)
    return clf.coef_[0]


def svm_curves(mu: np.ndarray, m: int, grid: np.ndarray, repeats: int, C: float,
               rng: np.random.Generator) -> dict:
    """Mean exact error over repeats of SVM, SVM on scaled features and the ML rule."""
    err = {"svm": np.zeros(grid.size), "svm_scaled": np.zeros(grid.size),
           "ml": np.zeros(grid.size)}
    for _ in range(repeats):
        X, y = theory.make_two_gaussians(mu, m, random_state=rng)
        while np.unique(y).size < 2:  # SVC needs both classes
            X, y = theory.make_two_gaussians(mu, m, random_state=rng)
        sd = X.std(axis=0)
        sd[sd == 0] = 1.0
        mu_hat = (y[:, None] * X).mean(axis=0)
        for k, n in enumerate(grid):
            err["svm"][k] += theory.linear_rule_error(svm(X[:, :n], y, C), mu[:n])
            # Scaled inputs x / sd: the rule w . (x / sd) is (w / sd) . x.
            w = svm(X[:, :n] / sd[:n], y, C) / sd[:n]
            err["svm_scaled"][k] += theory.linear_rule_error(w, mu[:n])
            err["ml"][k] += theory.ml_error(mu_hat[:n], mu[:n])
    return {k: v / repeats for k, v in err.items()}


C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


def choose_C(mu: np.ndarray, m: int, repeats: int, rng: np.random.Generator) -> float:
    """The C with the lowest mean exact error of SVM on all features (the thesis's rule)."""
    err = np.zeros(len(C_GRID))
    for _ in range(repeats):
        X, y = theory.make_two_gaussians(mu, m, random_state=rng)
        while np.unique(y).size < 2:
            X, y = theory.make_two_gaussians(mu, m, random_state=rng)
        for i, C in enumerate(C_GRID):
            w = svm(X, y, C)
            err[i] += theory.linear_rule_error(w, mu)
    return C_GRID[int(np.argmin(err))]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, threads=False)
    p.add_argument("--repeats21", type=int, default=200)
    p.add_argument("--repeats23", type=int, default=50)
    p.add_argument("--features21", type=int, default=100)
    p.add_argument("--features23", type=int, default=1000)
    p.add_argument("--grid23", type=int, default=25, help="numbers of features tried (log grid)")
    p.add_argument("--sizes", default="16,100,225")
    p.add_argument("--C", type=float, default=None,
                   help="fixed SVM C (default: chosen with all features, see above)")
    args = p.parse_args(argv)
    if args.smoke:
        args.repeats21, args.repeats23, args.features21 = 5, 1, 30
        args.features23, args.grid23, args.sizes = 100, 5, "16"
    sizes = [int(v) for v in args.sizes.split(",")]
    info = machine_info()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()

    m21 = 16
    fig21 = {}
    for key, label in FIG21:
        mu = fig21_mu(key, args.features21, rng)
        true = theory.expected_ml_error(mu, m21, n_repeats=args.repeats21, random_state=rng)
        approx = norm.cdf(-theory.f_nm(mu, m21))
        fig21[key] = {"label": label, "true": true, "approx": approx,
                      "max_gap": float(np.max(np.abs(true - approx))),
                      "n_opt": theory.n_opt(mu, m21),
                      "argmin_true": int(np.argmin(true)) + 1}
    t21 = time.perf_counter() - t0

    grid = feature_grid(args.features23, args.grid23)
    fig23 = {}
    rows = []
    for name, label in FIG23:
        mu = theory.example_mu(name, args.features23)
        for m in sizes:
            C = args.C if args.C is not None else choose_C(mu, m, 3 if args.smoke else 10, rng)
            curves = svm_curves(mu, m, grid, args.repeats23, C, rng)
            nopt = theory.n_opt(mu, m)
            fig23[(name, m)] = curves
            row = {"mu": label, "m": m, "C": C, "n_opt_theory": nopt,
                   "phi_f_at_n_opt": float(norm.cdf(-theory.f_nm(mu, m, nopt)))}
            for k in ("svm", "svm_scaled", "ml"):
                i = int(np.argmin(curves[k]))
                row[f"{k}_best_n"] = int(grid[i])
                row[f"{k}_best_err"] = float(curves[k][i])
                row[f"{k}_all_err"] = float(curves[k][-1])
            rows.append(row)
            print(f"{label}, m={m}, C={C:g}: n_opt={nopt}; SVM best n={row['svm_best_n']} "
                  f"err {row['svm_best_err']:.4f}, all {grid[-1]}: {row['svm_all_err']:.4f}",
                  flush=True)
    t23 = time.perf_counter() - t0 - t21
    finish_run(info)

    out = output_dir(args)
    md = render(args, fig21, rows, grid, t21, t23, info)

    def plot_to(path: Path) -> None:
        plt = pyplot()
        ncol = max(len(sizes), 3)
        fig, axes = plt.subplots(2 + len(FIG23), ncol, figsize=(4 * ncol, 3 * (2 + len(FIG23))),
                                 squeeze=False)
        n21 = np.arange(1, args.features21 + 1)
        for ax, (key, _) in zip(axes[:2].ravel(), FIG21):
            d = fig21[key]
            ax.plot(n21, d["true"], "C0-", label="true (simulated)")
            ax.plot(n21, d["approx"], "C1--", label="E inside: Phi(-f(n, m))")
            ax.set_title(f"fig 2.1 ({key}) {d['label']}, m = {m21}", fontsize=9)
            ax.set_xlabel("number of features n")
            ax.set_ylabel("error")
            ax.legend(fontsize=7)
        for ax in axes[:2].ravel()[len(FIG21):]:
            ax.axis("off")
        for r, (name, label) in enumerate(FIG23):
            for c in range(ncol):
                ax = axes[2 + r, c]
                if c >= len(sizes):
                    ax.axis("off")
                    continue
                m = sizes[c]
                cv = fig23[(name, m)]
                ax.semilogx(grid, cv["svm"], "C0-", label="linear SVM")
                ax.semilogx(grid, cv["svm_scaled"], "C0:", label="SVM, scaled features")
                ax.semilogx(grid, cv["ml"], "C2--", label="ML rule")
                ax.axvline(theory.n_opt(theory.example_mu(name, args.features23), m),
                           color="C3", lw=0.8, label="n_opt (analysis)")
                ax.set_title(f"fig 2.3 {label}, m = {m}", fontsize=9)
                ax.set_xlabel("number of features n")
                ax.set_ylabel("error")
                ax.legend(fontsize=7)
        save_figure(fig, path)

    write_report(out, "theory_chapter2", md, info, rows, args, plot_to, "theory_chapter2.png")


def render(args, fig21, rows, grid, t21, t23, info) -> str:
    lines = [
        "# How many features: two spherical Gaussians (Navot's thesis, chapter 2)",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`; {info['cpu']}, "
        f"fastfs {info['fastfs']}; figure 2.1 took {t21:.1f} s, figure 2.3 {t23:.1f} s.",
        "",
        f"## Figure 2.1: true error of the ML rule and Phi(-f(n, m)), m = 16, "
        f"{args.repeats21} repeats, {args.features21} features",
        "",
        "| mu | largest gap true - approx | n_opt (argmax f) | argmin of the true error |",
        "|---|---:|---:|---:|",
    ]
    for key, d in fig21.items():
        lines.append(f"| ({key}) {d['label']} | {d['max_gap']:.4f} | {d['n_opt']} "
                     f"| {d['argmin_true']} |")
    lines += [
        "",
        "## Figure 2.3: linear SVM against the number of features, "
        f"{args.repeats23} repeats, n on a grid of {grid.size} values up to {grid[-1]}",
        "",
        "Exact errors of the learned rules (no test set). Best n is the grid value with the "
        "lowest mean error.",
        "",
        "| mu | m | C | n_opt (analysis) | Phi(-f) at n_opt | SVM best n | SVM error there "
        f"| SVM error, {grid[-1]} features | scaled SVM best n | scaled, {grid[-1]} "
        "| ML best n | ML error there |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['mu']} | {r['m']} | {r['C']:g} | {r['n_opt_theory']} "
                     f"| {r['phi_f_at_n_opt']:.4f} "
                     f"| {r['svm_best_n']} | {r['svm_best_err']:.4f} | {r['svm_all_err']:.4f} "
                     f"| {r['svm_scaled_best_n']} | {r['svm_scaled_all_err']:.4f} "
                     f"| {r['ml_best_n']} | {r['ml_best_err']:.4f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
