"""Benchmark (SPEC 9): fastfs.gflip against the plain NumPy G-flip in bench/baselines/numpy_gflip.py.

Both run in the same process on the same fixed-seed data. Reported per size m and fastfs thread
count: (a) the time of one G-flip epoch from the empty set and (b) the time of one candidate
evaluation, each with the NumPy/fastfs ratio. Writes results.md, results.json and
time_per_candidate.png to --out.

    python bench/compare/compare_gflip.py                 # m = 1000, 2000; n = 500; threads 1, 2
    python bench/compare/compare_gflip.py --smoke         # m = 200, n = 20, a few seconds (CI)
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
from baselines import numpy_gflip as ng  # noqa: E402
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



def make_data(m: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian features; the two classes depend on the first 5 so some flips get accepted."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    y = (X[:, :5].sum(axis=1) + rng.standard_normal(m) > 0).astype(np.int64)
    return X, y


def check_agreement(X: np.ndarray, y: np.ndarray, seed: int) -> float:
    """Both implementations must score the same thing before their times are compared."""
    rng = np.random.default_rng(seed + 1)
    n = X.shape[1]
    support = rng.random(n) < 0.2
    j = int(rng.integers(n))
    _, codes = np.unique(y, return_inverse=True)
    D = ng.squared_distances(X, support)
    ours = ng.candidate_score(D, X[:, j], -1.0 if support[j] else 1.0, ng.class_masks(codes))
    flipped = support.copy()
    flipped[j] = ~flipped[j]
    ref = fastfs.margin_score(X, y, flipped.astype(np.float64))
    rel = abs(ours - ref) / max(abs(ref), 1e-300)
    if rel > 1e-9:
        raise SystemExit(f"NumPy and fastfs scores disagree: {ours!r} vs {ref!r} (rel {rel:.2e})")
    return rel


def time_fastfs(X, y, threads: int, repeat: int, seed: int) -> dict:
    walls, cpus, res = [], [], None
    for _ in range(repeat):
        c0 = time.process_time()
        wall, res = timed(lambda: fastfs.gflip(X, y, max_epochs=1, n_restarts=1,
                                               random_state=seed, n_jobs=threads))
        walls.append(wall)
        cpus.append(time.process_time() - c0)
    epoch = statistics.median(walls)
    # CPU time / wall time well below the thread count means the threads did not get their
    # cores (other work on the machine), so the wall time is inflated.
    busy = statistics.median(c / w for c, w in zip(cpus, walls))
    return {"epoch_s": epoch, "epoch_runs_s": walls, "cpu_per_wall": busy,
            "candidate_s": epoch / X.shape[1], "flips": res.n_flips}


def time_numpy(X, y, n_candidates: int, repeat: int, seed: int) -> dict:
    m, n = X.shape
    _, codes = np.unique(y, return_inverse=True)
    order = np.random.default_rng(seed).permutation(n)[:n_candidates]
    setups, loops, busy, flips = [], [], [], 0
    for _ in range(repeat):
        D = np.zeros((m, m))
        support = np.zeros(n, dtype=bool)

        def setup():
            mk = ng.class_masks(codes)
            return mk, ng.score_from_distances(D, mk, "linear", 1.0)

        t_setup, (masks, current) = timed(setup)
        c0 = time.process_time()
        t_loop, (_, flips) = timed(lambda: ng.epoch(X, codes, D, support, order,
                                                    masks=masks, current=current))
        busy.append((time.process_time() - c0) / t_loop)
        setups.append(t_setup)
        loops.append(t_loop)
    setup, loop = statistics.median(setups), statistics.median(loops)
    # Every candidate costs the same dense m x m work, so the loop scales linearly with n.
    epoch = setup + loop * n / n_candidates

    D = np.zeros((m, m))
    masks = ng.class_masks(codes)
    col = X[:, order[0]]
    single = statistics.median(
        timed(lambda: ng.candidate_score(D, col, 1.0, masks))[0] for _ in range(max(repeat, 3)))
    return {"epoch_s": epoch, "setup_s": setup, "loop_s": loop, "loop_runs_s": loops,
            "candidates_timed": n_candidates, "extrapolated": n_candidates < n,
            "flips": flips, "candidate_s": single, "cpu_per_wall": statistics.median(busy)}


def render(info: dict, rows: list[dict], args) -> str:
    lines = [
        "# G-flip: fastfs vs plain NumPy",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, fastfs {info['fastfs']} ({info['extension']}); "
        f"{info['date']}.",
        f"Load average before / after the run: {info['load_before']} / {info['load_after']} "
        "(other work on the machine inflates the times, the 2-thread ones most).",
        "",
        "Data: fixed-seed Gaussian X (float64), 2 classes driven by the first 5 features. "
        f"fastfs: median of {args.repeat} runs of `fastfs.gflip(X, y, max_epochs=1, "
        f"n_restarts=1, random_state={args.seed}, n_jobs=threads)` from the empty set, which includes input "
        "checks, the column copy and the rebuild of D after the epoch. NumPy: "
        "`numpy_gflip.epoch` from the empty set, single-threaded (element-wise NumPy), "
        f"median of {args.repeat} runs. The two visit the features in different random orders "
        "(fastfs uses its own generator), so they accept different flips; the cost of an "
        "epoch is dominated by its n candidate evaluations, which cost the same whatever the "
        "order. Before timing, each size checks that `numpy_gflip.candidate_score` equals "
        "`fastfs.margin_score` (relative 1e-9).",
        "",
        "## (a) One epoch (n candidate evaluations)",
        "",
        "CPU/wall: process CPU time over wall time of the timed runs (about equal to the "
        "thread count when the threads had their cores to themselves; NumPy uses one). Load: "
        "1-minute load average when the size started (this benchmark itself adds about 1).",
        "",
        "| m | n | fastfs threads | fastfs epoch | fastfs flips | fastfs CPU/wall "
        "| NumPy epoch | NumPy basis | NumPy flips | NumPy CPU/wall | NumPy / fastfs | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        nb = r["numpy"]
        basis = (f"extrapolated from {nb['candidates_timed']} of {r['n']} candidates"
                 if nb["extrapolated"] else f"measured, all {r['n']} candidates")
        flips = (f"{nb['flips']} in {nb['candidates_timed']}" if nb["extrapolated"]
                 else str(nb["flips"]))
        for t, fr in r["fastfs"].items():
            lines.append(
                f"| {r['m']} | {r['n']} | {t} | {fmt_s(fr['epoch_s'])} | {fr['flips']} "
                f"| {fr['cpu_per_wall']:.2f} "
                f"| {fmt_s(nb['epoch_s'])}{' (extrap.)' if nb['extrapolated'] else ''} "
                f"| {basis} | {flips} | {nb['cpu_per_wall']:.2f} "
                f"| {nb['epoch_s'] / fr['epoch_s']:.1f}x | {r['load']} |")
    lines += [
        "",
        "## (b) One candidate evaluation",
        "",
        "fastfs: epoch time / n (fastfs does not expose a single candidate; the per-epoch "
        "overhead is charged to fastfs). NumPy: median of direct `candidate_score` calls.",
        "",
        "| m | n | fastfs threads | fastfs / candidate | NumPy / candidate | NumPy / fastfs |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        nb = r["numpy"]
        for t, fr in r["fastfs"].items():
            lines.append(
                f"| {r['m']} | {r['n']} | {t} | {fmt_s(fr['candidate_s'])} "
                f"| {fmt_s(nb['candidate_s'])} | {nb['candidate_s'] / fr['candidate_s']:.1f}x |")
    lines += ["", "Plot: `time_per_candidate.png`.", ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()

    ms = [r["m"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for t in rows[0]["fastfs"]:
        ax.plot(ms, [r["fastfs"][t]["candidate_s"] for r in rows], "o-",
                label=f"fastfs, {t} thread{'s' if t > 1 else ''}")
    ax.plot(ms, [r["numpy"]["candidate_s"] for r in rows], "s--", label="NumPy")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ms, [str(m) for m in ms])
    ax.minorticks_off()
    ax.set_xlabel("m (samples)")
    ax.set_ylabel("time per candidate (s)")
    ax.set_title(f"G-flip candidate evaluation, n = {rows[0]['n']} features")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")],
                   default=[1000, 2000], help="comma-separated m values")
    p.add_argument("--features", type=int, default=500)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--numpy-candidates", type=int, default=25,
                   help="candidates of the NumPy epoch to time, extrapolated to n (0 = all)")
    add_run_arguments(p, smoke_help="tiny sizes (m=200, n=20) for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.sizes, args.features, args.numpy_candidates = [200], 20, 0
    args.out = output_dir(args)

    info = machine_info()
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, fastfs {info['fastfs']}, load {info['load_before']}")

    # First call pays for thread-pool start-up and page faults; keep it out of the medians.
    Xw, yw = make_data(100, 10, args.seed)
    for t in args.threads:
        fastfs.gflip(Xw, yw, max_epochs=1, n_jobs=t)

    rows = []
    for m in args.sizes:
        n = args.features
        X, y = make_data(m, n, args.seed)
        rel = check_agreement(X, y, args.seed)
        k = n if args.numpy_candidates <= 0 else min(args.numpy_candidates, n)
        row = {"m": m, "n": n, "agreement_rel": rel, "load": load_average().split()[0],
               "fastfs": {}}
        for t in args.threads:
            row["fastfs"][t] = fr = time_fastfs(X, y, t, args.repeat, args.seed)
            print(f"m={m} n={n} fastfs threads={t}: epoch {fmt_s(fr['epoch_s'])}, "
                  f"candidate {fmt_s(fr['candidate_s'])}, flips {fr['flips']}, "
                  f"cpu/wall {fr['cpu_per_wall']:.2f}", flush=True)
        row["numpy"] = nb = time_numpy(X, y, k, args.repeat, args.seed)
        label = f"extrapolated from {k}/{n} candidates" if nb["extrapolated"] else "measured"
        print(f"m={m} n={n} NumPy: epoch {fmt_s(nb['epoch_s'])} ({label}), "
              f"candidate {fmt_s(nb['candidate_s'])}, cpu/wall {nb['cpu_per_wall']:.2f}",
              flush=True)
        for t, fr in row["fastfs"].items():
            print(f"    ratio NumPy/fastfs, {t} thread(s): epoch "
                  f"{nb['epoch_s'] / fr['epoch_s']:.1f}x, candidate "
                  f"{nb['candidate_s'] / fr['candidate_s']:.1f}x")
        rows.append(row)
    finish_run(info)
    write_report(args.out, "results", render(info, rows, args), info, rows, args,
                 lambda path: plot(rows, path), "time_per_candidate.png")


if __name__ == "__main__":
    main()
