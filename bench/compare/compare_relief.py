"""Benchmark (SPEC 9): fastfs.relieff against skrebate's ReliefF, one fastfs.simba pass
against the plain NumPy Simba in bench/baselines/numpy_simba.py, and fastfs.surf, surfstar, multisurf
and multisurfstar against skrebate's SURF, SURFstar, MultiSURF and MultiSURFstar.

All run in the same process on the same fixed-seed data. For each size m and fastfs thread
count: (a) ReliefF with k neighbours (skrebate: one run, it is slow; fastfs: median of
--repeat), after checking that the two score vectors agree to 1e-6; (b) one Simba pass of m
steps over a fixed sample order, after checking that fastfs and NumPy give the same weights
(1e-9) for the linear and the sigmoid utility; (c) at the --radius-sizes (skrebate's radius
algorithms are slower still), each radius algorithm, scores checked to 1e-6 first. Writes
results_relief.md, results_relief.json and time_relief.png to --out.

    python bench/compare/compare_relief.py              # m = 1000, 2000; n = 500; threads 1, 2
    python bench/compare/compare_relief.py --smoke      # m = 150, n = 12, a few seconds (CI)
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
from baselines import numpy_simba as ns  # noqa: E402
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
from compare_gflip import make_data  # noqa: E402

RELIEFF_TOL = 1e-6
# fastfs function -> skrebate class, for (c)
RADIUS = {"surf": "SURF", "surfstar": "SURFstar", "multisurf": "MultiSURF",
          "multisurfstar": "MultiSURFstar"}
SIMBA_TOL = 1e-9
# Any slope works for the agreement check; this one keeps beta * theta of order one on the
# benchmark data, so the sigmoid branch is really exercised rather than nearly linear.
CHECK_SIGMOID_BETA = 1.0


def timed_runs(fn, repeat: int) -> tuple[float, float, list[float], object]:
    """(median wall, median CPU/wall, all walls, last result) of ``repeat`` calls."""
    walls, busy, out = [], [], None
    for _ in range(repeat):
        c0 = time.process_time()
        wall, out = timed(fn)
        walls.append(wall)
        busy.append((time.process_time() - c0) / wall)
    return statistics.median(walls), statistics.median(busy), walls, out


def run_relieff(X, y, threads: list[int], args) -> dict:
    from skrebate import ReliefF

    m, n = X.shape
    res = {"fastfs": {}}
    for t in threads:
        wall, busy, walls, out = timed_runs(
            lambda: fastfs.relieff(X, y, n_neighbors=args.neighbors, n_jobs=t), args.repeat)
        res["fastfs"][t] = {"s": wall, "runs_s": walls, "cpu_per_wall": busy}
        ours = out.weights
        print(f"m={m} n={n} ReliefF fastfs threads={t}: {fmt_s(wall)}, cpu/wall {busy:.2f}",
              flush=True)

    print(f"m={m} n={n} ReliefF skrebate: one run, single process (slow: pure-Python loop "
          "over samples and features) ...", flush=True)
    c0 = time.process_time()
    est = ReliefF(n_neighbors=args.neighbors, n_features_to_select=min(10, n), n_jobs=1)
    wall, _ = timed(lambda: est.fit(X, y))
    ref = np.asarray(est.feature_importances_, dtype=np.float64)
    diff = float(np.abs(ref - ours).max())
    res["skrebate"] = {"s": wall, "cpu_per_wall": (time.process_time() - c0) / wall}
    res["max_abs_diff"] = diff
    res["max_abs_score"] = float(np.abs(ref).max())
    print(f"m={m} n={n} ReliefF skrebate: {fmt_s(wall)}; max |skrebate - fastfs| = {diff:.3g} "
          f"(scores up to {res['max_abs_score']:.3g})", flush=True)
    if not diff <= RELIEFF_TOL:
        raise SystemExit(f"fastfs.relieff and skrebate ReliefF disagree: max abs diff {diff:.3g}"
                         f" > {RELIEFF_TOL}")
    for t, fr in res["fastfs"].items():
        print(f"    ratio skrebate/fastfs, {t} thread(s): {wall / fr['s']:.1f}x")
    return res


def run_radius(X, y, threads: list[int], args) -> dict:
    """(c): every radius algorithm, fastfs (median of --repeat per thread count) against one
    skrebate run, after checking the scores agree to RELIEFF_TOL."""
    import skrebate

    m, n = X.shape
    out = {}
    for name, cls in RADIUS.items():
        res = {"fastfs": {}}
        for t in threads:
            wall, busy, walls, got = timed_runs(
                lambda: getattr(fastfs, name)(X, y, n_jobs=t), args.repeat)
            res["fastfs"][t] = {"s": wall, "runs_s": walls, "cpu_per_wall": busy}
            ours = got.weights
            print(f"m={m} n={n} {name} fastfs threads={t}: {fmt_s(wall)}, cpu/wall {busy:.2f}",
                  flush=True)
        c0 = time.process_time()
        est = getattr(skrebate, cls)(n_features_to_select=min(10, n), n_jobs=1)
        wall, _ = timed(lambda: est.fit(X, y))
        ref = np.asarray(est.feature_importances_, dtype=np.float64)
        diff = float(np.abs(ref - ours).max())
        res["skrebate"] = {"s": wall, "cpu_per_wall": (time.process_time() - c0) / wall}
        res["max_abs_diff"] = diff
        res["max_abs_score"] = float(np.abs(ref).max())
        print(f"m={m} n={n} {cls} skrebate: {fmt_s(wall)}; max |skrebate - fastfs| = "
              f"{diff:.3g} (scores up to {res['max_abs_score']:.3g})", flush=True)
        if not diff <= RELIEFF_TOL:
            raise SystemExit(f"fastfs.{name} and skrebate {cls} disagree: max abs diff "
                             f"{diff:.3g} > {RELIEFF_TOL}")
        for t, fr in res["fastfs"].items():
            print(f"    ratio skrebate/fastfs, {t} thread(s): {wall / fr['s']:.1f}x")
        out[name] = res
    return out


def check_simba(X, codes, y, order) -> dict:
    """Both implementations must compute the same weights before their times are compared."""
    diffs = {}
    for utility, beta in (("linear", 1.0), ("sigmoid", CHECK_SIGMOID_BETA)):
        ref = ns.output_weights(ns.simba_pass(X, codes, order, utility, beta))
        got = fastfs.simba(X, y, sample_order=order, n_restarts=1, utility=utility, beta=beta,
                           n_jobs=1).weights
        diffs[utility] = d = float(np.abs(ref - got).max())
        if not d <= SIMBA_TOL:
            raise SystemExit(f"NumPy Simba and fastfs.simba disagree ({utility}): max abs diff "
                             f"{d:.3g} > {SIMBA_TOL}")
    return diffs


def run_simba(X, y, threads: list[int], args) -> dict:
    m, n = X.shape
    _, codes = np.unique(y, return_inverse=True)
    order = np.random.default_rng(args.seed + 2).permutation(m)
    res = {"check_max_abs_diff": check_simba(X, codes, y, order), "fastfs": {}}
    print(f"m={m} n={n} Simba check (full pass, NumPy vs fastfs, output weights): max abs diff "
          + ", ".join(f"{u} {d:.2g}" for u, d in res["check_max_abs_diff"].items()), flush=True)

    for t in threads:
        wall, busy, walls, out = timed_runs(
            lambda: fastfs.simba(X, y, sample_order=order, n_restarts=1, n_jobs=t), args.repeat)
        # fastfs.simba ends by scoring its weights, e(w) over all m samples: as much neighbour
        # work as the pass itself. Time it alone so the pass can be compared on its own.
        v = np.sqrt(out.weights)
        e_wall, _, _, _ = timed_runs(lambda: fastfs.margin_score(X, y, v, n_jobs=t), args.repeat)
        # A difference of two noisy medians: only meaningful when it is not lost in the noise.
        pass_s = wall - e_wall if wall - e_wall > 0.1 * wall else None
        res["fastfs"][t] = {"s": wall, "runs_s": walls, "cpu_per_wall": busy, "score_s": e_wall,
                            "pass_s": pass_s}
        print(f"m={m} n={n} Simba fastfs threads={t}: call {fmt_s(wall)} (of which final e(w) "
              f"about {fmt_s(e_wall)}), cpu/wall {busy:.2f}", flush=True)

    k = m if args.numpy_steps <= 0 else min(args.numpy_steps, m)
    wall, busy, walls, _ = timed_runs(lambda: ns.simba_pass(X, codes, order[:k]), args.repeat)
    # Every step costs the same O(m n) row of distances, so the pass scales linearly in steps.
    res["numpy"] = {"s": wall * m / k, "timed_s": wall, "runs_s": walls, "cpu_per_wall": busy,
                    "steps_timed": k, "extrapolated": k < m}
    label = f"extrapolated from {k}/{m} steps" if k < m else "measured, all steps"
    print(f"m={m} n={n} Simba NumPy: pass {fmt_s(res['numpy']['s'])} ({label}), "
          f"cpu/wall {busy:.2f}", flush=True)
    for t, fr in res["fastfs"].items():
        print(f"    ratio NumPy/fastfs, {t} thread(s): call {res['numpy']['s'] / fr['s']:.1f}x, "
              f"pass only {pass_ratio(res['numpy']['s'], fr['pass_s'])}")
    return res


def pass_ratio(numpy_s: float, pass_s: float | None) -> str:
    return "n/a (e(w) ~ whole call)" if pass_s is None else f"{numpy_s / pass_s:.1f}x"


def render(info: dict, rows: list[dict], radius_rows: list[dict], args) -> str:
    lines = [
        "# ReliefF and Simba: fastfs vs skrebate and plain NumPy",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores "
        f"({info['usable_cores']} usable), {info['platform']}; Python {info['python']}, "
        f"NumPy {info['numpy']}, skrebate {info['skrebate']}, fastfs {info['fastfs']} "
        f"({info['extension']}); {info['date']}.",
        f"Load average before / after the run: {info['load_before']} / {info['load_after']} "
        "(other work on the machine inflates the times, the 2-thread ones most). Load column: "
        "1-minute load average when the size started (this benchmark itself adds about 1).",
        "",
        "Data: fixed-seed Gaussian X (float64, no ties), 2 classes driven by the first 5 "
        "features. CPU/wall: process CPU time over wall time (about the thread count when the "
        "threads had their cores to themselves).",
        "",
        f"## (a) ReliefF, k = {args.neighbors}",
        "",
        f"fastfs: median of {args.repeat} runs of `fastfs.relieff(X, y, "
        f"n_neighbors={args.neighbors}, n_jobs=threads)`. skrebate: one run of "
        f"`ReliefF(n_neighbors={args.neighbors}, n_jobs=1).fit(X, y)` (its default, single "
        "process). Before the times are compared, the two score vectors must agree to "
        f"{RELIEFF_TOL:g} (max abs diff column).",
        "",
        "| m | n | fastfs threads | fastfs | fastfs CPU/wall | skrebate | skrebate CPU/wall "
        "| skrebate / fastfs | max abs diff | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rf = r["relieff"]
        sk = rf["skrebate"]
        for t, fr in rf["fastfs"].items():
            lines.append(
                f"| {r['m']} | {r['n']} | {t} | {fmt_s(fr['s'])} | {fr['cpu_per_wall']:.2f} "
                f"| {fmt_s(sk['s'])} | {sk['cpu_per_wall']:.2f} | {sk['s'] / fr['s']:.0f}x "
                f"| {rf['max_abs_diff']:.2g} | {r['load']} |")
    lines += [
        "",
        "## (b) One Simba pass (m steps, one restart, linear utility)",
        "",
        f"fastfs: median of {args.repeat} runs of `fastfs.simba(X, y, sample_order=order, "
        "n_restarts=1, n_jobs=threads)` over a fixed random permutation `order`; the call "
        "includes input checks and the final evaluation e(w) over all m samples, which costs "
        "about as much neighbour work as the pass. 'e(w)' is the median time of "
        "`fastfs.margin_score` on the returned weights, and 'pass only' = call - e(w) (n/a when "
        "that difference is under 10% of the call, i.e. lost in timing noise). NumPy: "
        f"median of {args.repeat} runs of `numpy_simba.simba_pass` over the same order "
        "(single-threaded element-wise NumPy, no final evaluation). Before timing, each size "
        "checks that both give the same output weights w^2/max(w^2) after the full pass "
        f"(max abs diff <= {SIMBA_TOL:g}), for the linear and the sigmoid (beta = "
        f"{CHECK_SIGMOID_BETA:g}) utility.",
        "",
        "| m | n | fastfs threads | fastfs call | of which e(w) | fastfs CPU/wall | NumPy pass "
        "| NumPy basis | NumPy CPU/wall | NumPy / fastfs call | NumPy / fastfs pass only "
        "| check diff (lin / sig) | load |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        sb = r["simba"]
        nb = sb["numpy"]
        basis = (f"extrapolated from {nb['steps_timed']} of {r['m']} steps"
                 if nb["extrapolated"] else "measured, all steps")
        chk = sb["check_max_abs_diff"]
        for t, fr in sb["fastfs"].items():
            lines.append(
                f"| {r['m']} | {r['n']} | {t} | {fmt_s(fr['s'])} | {fmt_s(fr['score_s'])} "
                f"| {fr['cpu_per_wall']:.2f} "
                f"| {fmt_s(nb['s'])}{' (extrap.)' if nb['extrapolated'] else ''} | {basis} "
                f"| {nb['cpu_per_wall']:.2f} | {nb['s'] / fr['s']:.1f}x "
                f"| {pass_ratio(nb['s'], fr['pass_s'])} "
                f"| {chk['linear']:.1g} / {chk['sigmoid']:.1g} "
                f"| {r['load']} |")
    lines += [
        "",
        "## (c) SURF, SURF*, MultiSURF, MultiSURF*",
        "",
        f"fastfs: median of {args.repeat} runs of `fastfs.<algorithm>(X, y, n_jobs=threads)`. "
        "skrebate: one run of `<Class>(n_jobs=1).fit(X, y)`. Before the times are compared, "
        f"the two score vectors must agree to {RELIEFF_TOL:g} (max abs diff column).",
        "",
        "| algorithm | m | n | fastfs threads | fastfs | fastfs CPU/wall | skrebate "
        "| skrebate / fastfs | max abs diff | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in radius_rows:
        for name, res in r["radius"].items():
            sk = res["skrebate"]
            for t, fr in res["fastfs"].items():
                lines.append(
                    f"| {RADIUS[name]} | {r['m']} | {r['n']} | {t} | {fmt_s(fr['s'])} "
                    f"| {fr['cpu_per_wall']:.2f} | {fmt_s(sk['s'])} | {sk['s'] / fr['s']:.0f}x "
                    f"| {res['max_abs_diff']:.2g} | {r['load']} |")
    lines += ["", "Plot: `time_relief.png` (sections a and b).", ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()
    from matplotlib.ticker import NullLocator

    ms = [r["m"] for r in rows]
    threads = list(rows[0]["relieff"]["fastfs"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3))
    panels = (("relieff", "skrebate", "skrebate ReliefF", "fastfs.relieff", "ReliefF (k = {k})"),
              ("simba", "numpy", "NumPy Simba (pass)", "fastfs.simba call (pass + e(w))",
               "one Simba pass (m steps)"))
    for ax, (key, base, base_label, ours, title) in zip(axes, panels):
        for t in threads:
            ax.plot(ms, [r[key]["fastfs"][t]["s"] for r in rows], "o-",
                    label=f"{ours}, {t} thread{'s' if t > 1 else ''}")
        ax.plot(ms, [r[key][base]["s"] for r in rows], "s--", label=base_label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(ms, [str(m) for m in ms])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("m (samples)")
        ax.set_ylabel("wall time (s)")
        ax.set_title(f"{title.format(k=rows[0]['k'])}, n = {rows[0]['n']} features")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")],
                   default=[1000, 2000], help="comma-separated m values")
    p.add_argument("--features", type=int, default=500)
    p.add_argument("--neighbors", type=int, default=10, help="ReliefF k")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--radius-sizes", type=lambda s: [int(v) for v in s.split(",")],
                   default=[1000], help="comma-separated m values for (c)")
    p.add_argument("--radius-features", type=int, default=500, help="n for (c)")
    p.add_argument("--numpy-steps", type=int, default=0,
                   help="Simba steps of the NumPy pass to time, extrapolated to m (0 = all)")
    add_run_arguments(p, smoke_help="tiny sizes (m=150, n=12) for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.sizes, args.features = [150], 12
        args.radius_sizes, args.radius_features = [60], 8
    args.out = output_dir(args)

    import skrebate

    info = machine_info()
    info["skrebate"] = getattr(skrebate, "__version__", "?")
    print(f"machine: {info['cpu']}, {info['usable_cores']}/{info['logical_cores']} cores, "
          f"numpy {info['numpy']}, skrebate {info['skrebate']}, fastfs {info['fastfs']}, "
          f"load {info['load_before']}")

    # First calls pay for thread-pool start-up and page faults; keep them out of the medians.
    Xw, yw = make_data(100, 10, args.seed)
    for t in args.threads:
        fastfs.relieff(Xw, yw, n_jobs=t)
        fastfs.simba(Xw, yw, n_restarts=1, n_jobs=t)
        for name in RADIUS:
            getattr(fastfs, name)(Xw, yw, n_jobs=t)

    rows = []
    for m in args.sizes:
        n = args.features
        X, y = make_data(m, n, args.seed)
        row = {"m": m, "n": n, "k": args.neighbors, "load": load_average().split()[0]}
        row["relieff"] = run_relieff(X, y, args.threads, args)
        row["simba"] = run_simba(X, y, args.threads, args)
        rows.append(row)
    radius_rows = []
    for m in args.radius_sizes:
        n = args.radius_features
        X, y = make_data(m, n, args.seed)
        row = {"section": "radius", "m": m, "n": n, "load": load_average().split()[0]}
        row["radius"] = run_radius(X, y, args.threads, args)
        radius_rows.append(row)
    finish_run(info)
    write_report(args.out, "results_relief", render(info, rows, radius_rows, args), info,
                 rows + radius_rows, args, lambda path: plot(rows, path), "time_relief.png")


if __name__ == "__main__":
    main()
