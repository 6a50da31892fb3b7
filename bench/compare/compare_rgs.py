"""Benchmark (SPEC 9): one RGS epoch in fastfs against the plain NumPy RGS of
bench/baselines/numpy_rgs.py.

Same process, same fixed-seed data, same sample order, same k and beta (the default of SPEC 3.3,
computed once by fastfs and passed to both). Before timing, each size checks that the two give
the same raw weights after a full epoch (relative 1e-9). fastfs is timed two ways: the public
call `fastfs.rgs(..., beta=beta)` (input checks, the epoch, and the final e(w) over all samples,
about one more epoch of neighbour work) and the epoch alone (the private core call with the
final evaluation switched off). Writes results_rgs.md, results_rgs.json and time_rgs.png to
--out.

    python bench/compare/compare_rgs.py     # m x n = 100x50, 1000x50, 1000x500, 2000x500; threads 1, 2
    python bench/compare/compare_rgs.py --smoke      # tiny sizes, a few seconds (CI)
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
from fastfs import _core

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from baselines import numpy_rgs as nr  # noqa: E402
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

CHECK_TOL = 1e-9
SMALL_FACTOR = 5  # repeats multiplier for sizes with m^2 n < 1e7


def make_data(m: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform features on [-1, 1], a target driven by the first three (no ties)."""
    gen = np.random.default_rng(seed)
    X = gen.uniform(-1.0, 1.0, (m, n))
    y = np.sin(np.pi * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * gen.standard_normal(m)
    return X, y


def timed_runs(fn, repeat: int) -> tuple[float, float, list[float], object]:
    """(median wall, median CPU/wall, all walls, last result) of ``repeat`` calls."""
    walls, busy, out = [], [], None
    for _ in range(repeat):
        c0 = time.process_time()
        wall, out = timed(fn)
        walls.append(wall)
        busy.append((time.process_time() - c0) / wall)
    return statistics.median(walls), statistics.median(busy), walls, out


def epoch_only(X, y, k, beta, order, threads):
    """The steps of one epoch and nothing else (no e(w) at the end)."""
    return _core.rgs(X, y, k, beta, order.size, np.ones(order.size), 1, order, 0, threads, None,
                     score=False).raw


def run_size(m: int, n: int, args) -> dict:
    X, y = make_data(m, n, args.seed)
    k = fastfs.regression.default_n_neighbors(m)
    fastfs.rgs(X[:2 * k + 2], y[:2 * k + 2], n_jobs=1)  # first call: thread pool, page faults
    beta = float(fastfs.regression._knn_regression(X, y, n_neighbors=k)["beta"])
    order = np.random.default_rng(args.seed + 1).permutation(m)
    row = {"m": m, "n": n, "k": k, "beta": beta, "load": load_average().split()[0],
           "fastfs": {}}

    ref = nr.rgs_epoch(X, y, order, k, beta)
    got = fastfs.rgs(X, y, sample_order=order, n_neighbors=k, beta=beta, learning_rate=1.0,
                     n_jobs=1).raw_weights
    diff = float(np.max(np.abs(ref - got)) / np.max(np.abs(ref)))
    row["check_rel_diff"] = diff
    print(f"m={m} n={n} k={k} beta={beta:.4g}: check NumPy vs fastfs raw weights after one "
          f"epoch: max rel diff {diff:.2g}", flush=True)
    if not diff <= CHECK_TOL:
        raise SystemExit(f"NumPy RGS and fastfs.rgs disagree: {diff:.3g} > {CHECK_TOL}")

    # Runs of a few milliseconds are at the mercy of the other work on a shared machine: more
    # of them for a steadier median.
    reps = args.repeat if m * m * n >= 10**7 else SMALL_FACTOR * args.repeat
    row["repeats"] = reps
    for t in args.threads:
        e_wall, e_busy, e_walls, _ = timed_runs(
            lambda: epoch_only(X, y, k, beta, order, t), reps)
        c_wall, c_busy, c_walls, _ = timed_runs(
            lambda: fastfs.rgs(X, y, sample_order=order, n_neighbors=k, beta=beta,
                               learning_rate=1.0, n_jobs=t),
            reps)
        row["fastfs"][t] = {"epoch_s": e_wall, "epoch_runs_s": e_walls, "epoch_cpu": e_busy,
                            "call_s": c_wall, "call_runs_s": c_walls, "call_cpu": c_busy}
        print(f"m={m} n={n} fastfs threads={t}: epoch {fmt_s(e_wall)} (cpu/wall {e_busy:.2f}), "
              f"call {fmt_s(c_wall)}", flush=True)

    steps = m if args.numpy_steps <= 0 else min(args.numpy_steps, m)
    wall, busy, walls, _ = timed_runs(lambda: nr.rgs_epoch(X, y, order[:steps], k, beta), reps)
    # Every step costs the same O(m n) distance row, so an epoch scales linearly in steps.
    row["numpy"] = {"s": wall * m / steps, "timed_s": wall, "runs_s": walls, "cpu": busy,
                    "steps_timed": steps, "extrapolated": steps < m}
    print(f"m={m} n={n} NumPy: epoch {fmt_s(row['numpy']['s'])}"
          f"{f' (extrapolated from {steps} steps)' if steps < m else ''}, cpu/wall {busy:.2f}",
          flush=True)
    for t, fr in row["fastfs"].items():
        print(f"    NumPy / fastfs, {t} thread(s): epoch {row['numpy']['s'] / fr['epoch_s']:.1f}x,"
              f" call {row['numpy']['s'] / fr['call_s']:.1f}x")
    return row


def render(info: dict, rows: list[dict], args) -> str:
    lines = [
        "# One RGS epoch: fastfs vs plain NumPy",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, fastfs {info['fastfs']} ({info['extension']}); {info['date']}.",
        f"Load average before / after the run: {info['load_before']} / {info['load_after']}. "
        "Load column: 1-minute load average when the size started.",
        "",
        "Data: X uniform on [-1, 1] (float64), y = sin(pi x0) + x1 x2 + 0.3 N(0, 1); k = "
        "ceil(log2 m), beta = SPEC 3.3's default, one epoch over a fixed permutation, eta = 1. "
        f"Medians of {args.repeat} runs ({SMALL_FACTOR * args.repeat} for sizes with m^2 n < "
        "1e7). 'epoch' = the m steps alone (core call without the final "
        "e(w)); 'call' = `fastfs.rgs(X, y, sample_order=order, n_neighbors=k, beta=beta, "
        "learning_rate=1.0)`, "
        "which adds input checks and e(w) over all samples. NumPy: `numpy_rgs.rgs_epoch`, "
        "single-threaded. Before timing, the raw weights of both after the epoch agree to "
        f"{CHECK_TOL:g} (relative).",
        "",
        "| m | n | threads | fastfs epoch | fastfs call | NumPy epoch | NumPy / fastfs epoch "
        "| NumPy / fastfs call | check | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        nb = r["numpy"]
        for t, fr in r["fastfs"].items():
            lines.append(
                f"| {r['m']} | {r['n']} | {t} | {fmt_s(fr['epoch_s'])} | {fmt_s(fr['call_s'])} "
                f"| {fmt_s(nb['s'])}{' (extrap.)' if nb['extrapolated'] else ''} "
                f"| {nb['s'] / fr['epoch_s']:.1f}x | {nb['s'] / fr['call_s']:.1f}x "
                f"| {r['check_rel_diff']:.1g} | {r['load']} |")
    lines += ["", "Plot: `time_rgs.png`.", ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()

    labels = [f"{r['m']}x{r['n']}" for r in rows]
    x = np.arange(len(rows))
    threads = list(rows[0]["fastfs"])
    fig, ax = plt.subplots(figsize=(7, 4.3))
    width = 0.8 / (len(threads) + 1)
    for i, t in enumerate(threads):
        ax.bar(x + i * width, [r["fastfs"][t]["epoch_s"] for r in rows], width,
               label=f"fastfs epoch, {t} thread{'s' if t > 1 else ''}")
    ax.bar(x + len(threads) * width, [r["numpy"]["s"] for r in rows], width,
           label="NumPy epoch")
    ax.set_yscale("log")
    ax.set_xticks(x + width * len(threads) / 2, labels)
    ax.set_xlabel("m x n")
    ax.set_ylabel("wall time (s)")
    ax.set_title("one RGS epoch (m steps)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=lambda s: [tuple(int(v) for v in mn.split("x"))
                                              for mn in s.split(",")],
                   default=[(100, 50), (1000, 50), (1000, 500), (2000, 500)],
                   help="comma-separated m x n, e.g. 1000x500,2000x500")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--numpy-steps", type=int, default=0,
                   help="NumPy steps to time, extrapolated to an epoch (0 = all)")
    add_run_arguments(p, smoke_help="tiny sizes for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = [(150, 12)], 2
    args.out = output_dir(args)

    info = machine_info()
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, fastfs {info['fastfs']}, load {info['load_before']}")
    rows = [run_size(m, n, args) for m, n in args.sizes]
    finish_run(info)
    write_report(args.out, "results_rgs", render(info, rows, args), info, rows, args,
                 lambda path: plot(rows, path), "time_rgs.png")


if __name__ == "__main__":
    main()
