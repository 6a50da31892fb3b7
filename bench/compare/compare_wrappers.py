"""Benchmark: the learner-wrapper searches on the C++ logistic regression against the same
searches with scikit-learn's LogisticRegression refits.

(a) ORDERED-FS (Ng's beam search: m samples, f features, width 50, sizes up to 10, hold-out
    0.3) with the C++ learner (each candidate warm-started from its parent's weights, candidates
    of a level in parallel) against the same beam whose every candidate is a
    ``LogisticRegression`` refit (``fastfs.ordered_fs(..., learner=LogisticRegression(...))``,
    the same code path with the learner swapped). Scores first: the training-error criterion of
    every h_r from the C++ learner equals the one from scikit-learn's fit. The full
    scikit-learn beam fits tens of thousands of models (about half an hour here), so by
    default its time is extrapolated: a timed sample of its candidate fits per size (the exact
    function the scikit-learn beam calls) times the number of candidates the beam evaluates;
    ``--full`` runs it end to end instead (and then compares the hypotheses too).
(b) RFE with the logistic learner at n x d (default 2000 x 1000) down to 10 features, step 0.1,
    against scikit-learn's ``RFE(LogisticRegression(), step=0.1)``. Scores first: the final
    coefficients equal a tight scikit-learn fit on the same survivors (1e-6). Timed against
    scikit-learn's defaults (tol=1e-4; its lbfgs stops early at 1000 features, so its
    coefficients, and the ranking, are inexact) and against tol=1e-8 (the same accuracy as
    fastfs; the rankings then agree); the agreement of the rankings is reported for both.

Writes results_wrappers.md / .json / time_wrappers.png to --out.

    python bench/compare/compare_wrappers.py            # m=1000, f=100; RFE at 2000 x 1000
    python bench/compare/compare_wrappers.py --full     # also runs the whole scikit-learn beam
    python bench/compare/compare_wrappers.py --smoke    # tiny sizes, everything run in full (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import fastfs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    fmt_s,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    timed,
    write_report,
)


def bench_ordered_fs(args, rows, lines):
    from sklearn.linear_model import LogisticRegression

    from fastfs.criteria import evaluate, TrainError
    from fastfs.wrappers import _Learner, _sk_criterion

    X, y = fastfs.datasets.make_ng(args.m, args.f, random_state=args.seed)
    sk = LogisticRegression(tol=1e-8, max_iter=1000)
    ours = {}
    for t in args.threads:
        ours[t] = timed(lambda t=t: fastfs.ordered_fs(X, y, width=args.width,
                                                      max_features=args.sizes,
                                                      random_state=0, n_jobs=t))
    res = ours[args.threads[0]][1]
    S1 = res.parts[0]
    # Scores first: the criterion of every h_r, C++ learner against scikit-learn's fit.
    fl = _Learner(X, y.astype(np.int64), 2, 1.0, sk)
    J_sk = _sk_criterion(fl, S1, S1)
    for r, S in enumerate(res.per_size[1:], start=1):
        ours_J = evaluate(X, y, list(S), TrainError(rows=S1))
        theirs = J_sk(X[:, list(S)], y)
        assert abs(ours_J - theirs) < 1e-6, (r, S, ours_J, theirs)
    lines.append(f"scores: the training-error criterion of h_1..h_{args.sizes} agrees with "
                 "scikit-learn's fit to 1e-6")
    if args.full or args.smoke:
        t_sk, res_sk = timed(lambda: fastfs.ordered_fs(
            X, y, width=args.width, max_features=args.sizes, random_state=0, learner=sk))
        assert res_sk.per_size == res.per_size, "the scikit-learn beam found other hypotheses"
        how = "run in full (same hypotheses h_r)"
    else:
        # Extrapolated: per size r, a timed sample of candidate fits (h_{r-1} plus a random
        # feature) times the candidates the beam evaluated (level 1: f; the other levels share
        # the rest equally).
        rng = np.random.default_rng(1)
        per_fit = []
        for r in range(1, args.sizes + 1):
            base = list(res.per_size[r - 1])
            outside = [j for j in range(args.f) if j not in base]
            t0 = time.perf_counter()
            for _ in range(args.sample):
                S = base + [int(rng.choice(outside))]
                J_sk(X[:, S], y)
            per_fit.append((time.perf_counter() - t0) / args.sample)
        rest = (res.n_evaluations - args.f) / max(args.sizes - 1, 1)
        t_sk = args.f * per_fit[0] + rest * sum(per_fit[1:])
        how = (f"extrapolated: {args.sample} timed candidate fits per size x "
               f"{res.n_evaluations} candidates")
    for t in args.threads:
        speed = t_sk / ours[t][0]
        rows.append({"what": "ordered_fs", "threads": t, "fastfs_s": ours[t][0],
                     "sklearn_s": t_sk, "speedup": speed, "sklearn_time": how,
                     "n_evaluations": res.n_evaluations})
        lines.append(f"| ORDERED-FS m={args.m} f={args.f} width={args.width} sizes<={args.sizes}"
                     f" | {t} | {fmt_s(ours[t][0])} | {fmt_s(t_sk)} ({how}) | {speed:.0f}x |")


def bench_rfe(args, rows, lines):
    from sklearn.feature_selection import RFE
    from sklearn.linear_model import LogisticRegression

    X, y = fastfs.datasets.make_ng(args.rfe_m, args.rfe_d, random_state=args.seed)
    t_ours, ours = timed(lambda: fastfs.rfe(X, y, 10, step=0.1))
    tight = LogisticRegression(tol=1e-10, max_iter=10000).fit(X[:, ours.selected], y)
    assert np.max(np.abs(ours.coef - tight.coef_)) < 1e-6, "final coefficients differ"
    lines.append("scores: RFE's final coefficients equal a tight scikit-learn fit to 1e-6")
    variants = [("LogisticRegression()", LogisticRegression())]
    if not args.no_tight:
        variants.append(("LogisticRegression(tol=1e-8, max_iter=1000)",
                         LogisticRegression(tol=1e-8, max_iter=1000)))
    for label, est in variants:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs's ConvergenceWarning at the default tol
            t_sk, theirs = timed(lambda est=est: RFE(est, n_features_to_select=10,
                                                     step=0.1).fit(X, y))
        same = float(np.mean(ours.ranks == theirs.ranking_))
        kept = int(np.sum(ours.support & theirs.support_))
        lines.append(f"RFE against scikit-learn with {label}: ranks equal for {same:.1%} of the "
                     f"features, {kept} of the 10 survivors shared")
        rows.append({"what": f"rfe vs {label}", "threads": "all", "fastfs_s": t_ours,
                     "sklearn_s": t_sk, "speedup": t_sk / t_ours, "rank_agreement": same,
                     "survivors_shared": kept})
        lines.append(f"| RFE {args.rfe_m} x {args.rfe_d} -> 10, step 0.1, scikit-learn {label} "
                     f"| default | {fmt_s(t_ours)} | {fmt_s(t_sk)} | {t_sk / t_ours:.1f}x |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(p)
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--f", type=int, default=100)
    p.add_argument("--width", type=int, default=50)
    p.add_argument("--sizes", type=int, default=10)
    p.add_argument("--sample", type=int, default=100)
    p.add_argument("--rfe-m", type=int, default=2000)
    p.add_argument("--rfe-d", type=int, default=1000)
    p.add_argument("--full", action="store_true", help="run the whole scikit-learn beam")
    p.add_argument("--only", choices=["ordered_fs", "rfe"], default=None)
    p.add_argument("--no-tight", action="store_true",
                   help="skip scikit-learn's RFE at tol=1e-8 (slow)")
    args = p.parse_args()
    if args.smoke:
        args.m, args.f, args.width, args.sizes = 200, 8, 2, 2
        args.rfe_m, args.rfe_d = 200, 80
        args.threads = [1]
    info = machine_info()
    rows: list = []
    lines = ["| task | threads | fastfs | scikit-learn | speed-up |", "|---|---|---|---|---|"]
    notes: list = []
    table: list = []
    from threadpoolctl import threadpool_limits

    # scikit-learn's (and NumPy's) BLAS gets as many threads as fastfs's largest n_jobs.
    with threadpool_limits(limits=max(args.threads)):
        if args.only != "rfe":
            bench_ordered_fs(args, rows, table)
        if args.only != "ordered_fs":
            bench_rfe(args, rows, table)
    notes = [ln for ln in table if not ln.startswith("|")]
    lines += [ln for ln in table if ln.startswith("|")]
    finish_run(info)
    md = ("# Learner wrappers: fastfs against scikit-learn refits\n\n" + "\n".join(lines) +
          "\n\n" + "\n".join(f"- {n}" for n in notes) +
          f"\n\nload average before / after: {info.get('load_before', 'n/a')} / "
          f"{info.get('load_after', 'n/a')}\n")

    def plot(path: Path) -> None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.2))
        labels = [f"{r['what']} ({r['threads']})" for r in rows]
        xs = np.arange(len(rows))
        ax.bar(xs - 0.2, [r["fastfs_s"] for r in rows], 0.4, label="fastfs")
        ax.bar(xs + 0.2, [r["sklearn_s"] for r in rows], 0.4, label="scikit-learn")
        ax.set_xticks(xs, labels)
        ax.set_yscale("log")
        ax.set_ylabel("seconds")
        ax.legend()
        save_figure(fig, path)

    write_report(output_dir(args), "results_wrappers", md, info, rows, args, plot,
                 "time_wrappers.png")


if __name__ == "__main__":
    main()
