"""Benchmark (SPEC 9): fastfs.filters against scikit-learn's univariate score functions.

Pairs timed in one run on the same fixed-seed data, dense and sparse (CSR, 5% non-zeros):

* ``anova_f``                      vs ``f_classif``            (same F and p-values)
* ``pearson(pvalues=False)``       vs ``r_regression``         (same r; the default pearson,
                                                                with p-values, is timed too)
* ``chi2(kind="counts")``          vs ``chi2``                 (same statistic and p-values)
* ``mutual_info``                  vs ``mutual_info_classif``  (dense: fastfs bins the features,
  scikit-learn estimates a differential MI from nearest neighbours, a different quantity;
  sparse binary indicators: both compute the discrete MI, equal with alpha=0)

Before timing, each pair that computes the same numbers is checked to agree (relative 1e-10).
scikit-learn's mutual_info_classif is timed on the first --mi-features features and
extrapolated linearly to all of them (it scores features one by one); the table says so.
Times are medians of --repeat runs. Writes filters.md, filters.json and filters.png to --out.

    python bench/compare/compare_filters.py            # 1000 x 5000 and 10000 x 1000, threads 1, 2
    python bench/compare/compare_filters.py --smoke    # tiny sizes, a few seconds (CI)
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
import scipy.sparse as sp
from sklearn.feature_selection import chi2 as sk_chi2
from sklearn.feature_selection import f_classif, mutual_info_classif, r_regression
from threadpoolctl import threadpool_info

from fastfs import filters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    load_average,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    write_report,
)

DENSITY = 0.05


def make_data(m: int, n: int, seed: int, sparse: bool) -> dict:
    """Fixed-seed data for every statistic: Gaussian X, Poisson counts, binary indicators.

    Two classes; the first 10 features shift with the class so the scores are not all noise.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, m)
    target = rng.standard_normal(m)
    informative = min(10, n)
    if sparse:
        mask = sp.random(m, n, density=DENSITY, format="csr", random_state=seed,
                         data_rvs=np.ones)
        gauss = mask.copy()
        gauss.data = rng.standard_normal(gauss.nnz)
        counts = mask.copy()
        counts.data = 1.0 + rng.poisson(1.0, counts.nnz)
        indicators = mask.copy()
        dense_part = np.asarray(gauss[:, :informative].todense())
        target = target + dense_part.sum(axis=1)
    else:
        gauss = rng.standard_normal((m, n))
        gauss[:, :informative] += 0.5 * y[:, None]
        counts = rng.poisson(1.0 + 0.2 * y[:, None], (m, n)).astype(np.float64)
        indicators = None
        target = target + gauss[:, :informative].sum(axis=1)
    return {"y": y, "target": target, "gauss": gauss, "counts": counts,
            "indicators": indicators}


def median_time(fn, repeat: int) -> tuple[float, list[float], float]:
    """Median wall time, all runs, and the median CPU / wall ratio (well below the thread
    count: the threads did not get their cores, other work on the machine inflated the time).
    """
    # OpenBLAS workers spin for a while after a BLAS call (scikit-learn's) and would take a
    # core from the next series' threads: let them park first.
    time.sleep(0.2)
    fn()  # warm-up: first-call costs (imports, thread start, page faults) stay out
    runs, busy = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
        busy.append((time.process_time() - c0) / runs[-1])
    return statistics.median(runs), runs, statistics.median(busy)


def check_close(name: str, ours, theirs, atol: float = 1e-300) -> float:
    """Max relative difference, each value's scale floored at the median magnitude (and at
    atol): an F near 0 is where scikit-learn's raw-sum formula loses digits to cancellation,
    and an MI near 0 is a difference of logs, so a strict relative test there would measure
    rounding, not a disagreement."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    ok = np.isfinite(theirs)
    if not ok.any():
        return 0.0
    floor = max(float(np.median(np.abs(theirs[ok]))), atol)
    scale = np.maximum(np.abs(theirs[ok]), floor)
    rel = float(np.max(np.abs(ours[ok] - theirs[ok]) / scale))
    if rel > 1e-10:
        raise SystemExit(f"{name}: fastfs and scikit-learn disagree (max relative {rel:.2e})")
    return rel


def cases(d: dict, mi_features: int) -> list[dict]:
    """(statistic, fastfs call, scikit-learn call, agreement check, sklearn extrapolation)."""
    y, target = d["y"], d["target"]
    sparse = sp.issparse(d["gauss"])
    mi_X = d["indicators"] if sparse else d["gauss"]
    n = d["gauss"].shape[1]
    k = min(mi_features, n)
    mi_sub = mi_X[:, :k]
    out = [
        {"stat": "anova_f", "sklearn": "f_classif",
         "ours": lambda t: filters.anova_f(d["gauss"], y, n_jobs=t),
         "theirs": lambda: f_classif(d["gauss"], y),
         "check": lambda a, b: check_close("anova_f", a.scores, b[0])
         + check_close("anova_f p", a.pvalues, b[1])},
        {"stat": "pearson (r only)", "sklearn": "r_regression",
         "ours": lambda t: filters.pearson(d["gauss"], target, pvalues=False, n_jobs=t),
         "theirs": lambda: r_regression(d["gauss"], target),
         "check": lambda a, b: check_close("pearson", a.scores, b)},
        {"stat": "pearson (r and p-values)", "sklearn": "r_regression",
         "ours": lambda t: filters.pearson(d["gauss"], target, n_jobs=t),
         "theirs": lambda: r_regression(d["gauss"], target),
         "check": lambda a, b: check_close("pearson", a.scores, b)},
        {"stat": "chi2 (counts)", "sklearn": "chi2",
         "ours": lambda t: filters.chi2(d["counts"], y, kind="counts", n_jobs=t),
         "theirs": lambda: sk_chi2(d["counts"], y),
         "check": lambda a, b: check_close("chi2", a.scores, b[0])
         + check_close("chi2 p", a.pvalues, b[1])},
    ]
    if sparse:
        out.append(
            {"stat": "mutual_info (binary, discrete)", "sklearn": "mutual_info_classif",
             "ours": lambda t: filters.mutual_info(mi_X, y, n_jobs=t),
             "theirs": lambda: mutual_info_classif(mi_sub, y, discrete_features=True),
             "check": lambda a, b: check_close(
                 "mutual_info", filters.mutual_info(mi_sub, y, alpha=0.0).scores, b,
                 atol=1e-4),
             "extrapolate": n / k})
    else:
        out.append(
            {"stat": "mutual_info (10 quantile bins)", "sklearn": "mutual_info_classif (kNN)",
             "ours": lambda t: filters.mutual_info(mi_X, y, n_jobs=t),
             "theirs": lambda: mutual_info_classif(mi_sub, y, random_state=0),
             "check": None, "extrapolate": n / k})
    return out


def fmt(t: float) -> str:
    if t >= 1:
        return f"{t:.3g} s"
    return f"{t * 1e3:.3g} ms"


def render(info: dict, rows: list[dict], args) -> str:
    threads = args.threads
    head = ("| statistic | data | n_samples x n_features | "
            + " | ".join(f"fastfs {t} thr" for t in threads)
            + " | scikit-learn | scikit-learn call | "
            + " | ".join(f"ratio ({t} thr)" for t in threads) + " |")
    lines = [
        "# Filters: fastfs vs scikit-learn",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, scikit-learn {info['sklearn']}, fastfs {info['fastfs']} "
        f"({info['extension']}); BLAS threads {info['blas_threads']}; {info['date']}.",
        f"Load average before / after: {info['load_before']} / {info['load_after']} "
        "(the benchmark itself adds about 1; other work on the 2 cores inflates the times, "
        "the 2-thread ones most: see the CPU / wall ratios in filters.json).",
        "",
        f"Times: median of {args.repeat} runs after one warm-up, same process, same data. "
        "Ratio = scikit-learn time / fastfs time. Dense X: float64 Gaussian (counts: Poisson); "
        f"sparse X: CSR with {DENSITY:.0%} non-zeros (Gaussian values, Poisson counts or "
        "binary indicators), passed as CSR to both. Agreement (relative 1e-10) is checked "
        "before timing wherever both compute the same numbers.",
        "",
        head,
        "|---|---|---:|" + "---:|" * len(threads) + "---:|---|" + "---:|" * len(threads),
    ]
    for r in rows:
        sk = fmt(r["sklearn_s"]) + (" (extrap.)" if r["extrapolated"] else "")
        lines.append(
            f"| {r['stat']} | {r['data']} | {r['m']} x {r['n']} | "
            + " | ".join(fmt(r["fastfs_s"][str(t)]) for t in threads)
            + f" | {sk} | {r['sklearn']} | "
            + " | ".join(f"{r['sklearn_s'] / r['fastfs_s'][str(t)]:.1f}x" for t in threads)
            + " |")
    notes = [r for r in rows if r["extrapolated"]]
    if notes:
        lines += ["", "(extrap.): scikit-learn's mutual_info_classif timed on the first "
                  f"{args.mi_features} features and scaled to all of them. On dense data it "
                  "estimates a different quantity (nearest-neighbour differential MI) than "
                  "fastfs's binned estimate, so that ratio compares two methods, not two "
                  "implementations."]
    lines += ["", "Plot: `filters.png`.", ""]
    return "\n".join(lines)


def plot(rows: list[dict], threads: list[int], path: Path) -> None:
    plt = pyplot()

    labels = [f"{r['stat']}\n{r['data']} {r['m']}x{r['n']}" for r in rows]
    t = str(max(threads))
    ratios = [r["sklearn_s"] / r["fastfs_s"][t] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(rows) + 1.2))
    ax.barh(range(len(rows)), ratios, color="tab:blue")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=6)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel(f"scikit-learn time / fastfs time ({t} threads)")
    ax.set_title("Univariate filters: speed-up over scikit-learn")
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000x5000,10000x1000",
                   help="comma-separated n_samples x n_features")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--mi-features", type=int, default=20,
                   help="features on which scikit-learn's mutual_info_classif is timed")
    add_run_arguments(p, smoke_help="tiny sizes for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat, args.mi_features = "200x50", 2, 10
    args.out = output_dir(args)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]

    import sklearn

    info = machine_info()
    info["sklearn"] = sklearn.__version__
    info["blas_threads"] = ", ".join(f"{i['internal_api']} {i['num_threads']}"
                                     for i in threadpool_info() if i["user_api"] == "blas")
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"sklearn {info['sklearn']}, fastfs {info['fastfs']}, load {info['load_before']}")

    rows = []
    for m, n in sizes:
        for sparse in (False, True):
            data = make_data(m, n, args.seed, sparse)
            kind = "sparse CSR" if sparse else "dense"
            for case in cases(data, args.mi_features):
                theirs_s, theirs_runs, _ = median_time(case["theirs"], args.repeat)
                extrap = case.get("extrapolate", 1.0)
                if case["check"] is not None:
                    rel = case["check"](case["ours"](None), case["theirs"]())
                else:
                    rel = None
                row = {"stat": case["stat"], "sklearn": case["sklearn"], "data": kind,
                       "m": m, "n": n, "sklearn_s": theirs_s * extrap,
                       "sklearn_runs_s": theirs_runs, "extrapolated": extrap != 1.0,
                       "agreement_rel": rel, "fastfs_s": {}, "fastfs_runs_s": {},
                       "fastfs_cpu_per_wall": {}, "load": load_average().split()[0]}
                for t in args.threads:
                    t_s, runs, busy = median_time(lambda: case["ours"](t), args.repeat)
                    row["fastfs_s"][str(t)] = t_s
                    row["fastfs_runs_s"][str(t)] = runs
                    row["fastfs_cpu_per_wall"][str(t)] = busy
                print(f"{case['stat']:32s} {kind:10s} {m}x{n}: "
                      + ", ".join(f"fastfs {t} thr {fmt(row['fastfs_s'][str(t)])} "
                                  f"(cpu/wall {row['fastfs_cpu_per_wall'][str(t)]:.2f})"
                                  for t in args.threads)
                      + f"; {case['sklearn']} {fmt(row['sklearn_s'])}"
                      + (" (extrapolated)" if row["extrapolated"] else "")
                      + "; ratio " + ", ".join(
                          f"{row['sklearn_s'] / row['fastfs_s'][str(t)]:.1f}x"
                          for t in args.threads), flush=True)
                rows.append(row)
    finish_run(info)
    write_report(args.out, "filters", render(info, rows, args), info, rows, args,
                 lambda path: plot(rows, args.threads, path), "filters.png")


if __name__ == "__main__":
    main()
