"""Benchmark: every Relief-family algorithm of fastfs against skrebate 0.8 and fast-select.

Algorithms: ReliefF (k = 10), SURF, SURF*, MultiSURF, MultiSURF*, TuRF (ReliefF core, pct 0.5,
100 features kept: three scorings, of 1000, 500 and 250 features when n = 1000), VLS (ReliefF
core, 40 subsets of 5 features: with n = 1000 the subsets must cover every feature, so 200
subsets) and Iter (ReliefF core, 3 rounds, learning rate 0.1). Data: fixed-seed Gaussian
features, binary classes depending on the first five (every feature continuous for skrebate).

For each size m x n, in one run: fastfs at each thread count (median of --repeat calls, float64);
fast-select 0.3 (CPU backend, numba; one untimed call on the same data first so its JIT
compilation is not timed, then the median of --repeat calls with n_jobs = the thread count;
float32 inside); skrebate once (it is slow; single process, n_jobs=1). Scores are checked
before anything is reported: fastfs against skrebate to 1e-6 (a failure stops the run);
fast-select's max abs difference to fastfs is printed relative to the largest score (float32
rounding, plus neighbour sets that change where a distance sits on a threshold). fast-select
has no VLS and no Iter; its TuRF reports the first round's scores, so only its time is compared.
Writes results_relief_family.md / .json to --out after every algorithm (a long run keeps what it
finished). Missing packages (skrebate, fast-select) skip their columns; --skrebate-only limits
the skrebate runs to some algorithms (on a loaded 2-core machine skrebate needs minutes a run).

    python bench/compare_relief_family.py            # m = 1000, 2000; n = 1000; threads 1, 2
    python bench/compare_relief_family.py --smoke    # m = 120, n = 30, seconds (CI)
    python bench/compare_relief_family.py --sizes 2000 --skrebate-only relieff,multisurf
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import fastfs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    extension_stamp,
    fmt_s,
    load_average,
    machine_info,
    output_dir,
)

TOL = 1e-6
K = 10
TURF = {"pct": 0.5, "keep": 100}
VLS = {"n_subsets": 40, "size": 5, "seed": 0}
ITER = {"max_iter": 3, "rate": 0.1}
ALGORITHMS = ("relieff", "surf", "surfstar", "multisurf", "multisurfstar", "turf", "vls", "iter")


def make_data(m: int, n: int, seed: int):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((m, n))
    y = (X[:, :5].sum(axis=1) + gen.standard_normal(m) > 0).astype(np.int64)
    return X, y


def vls_count(n: int) -> int:
    """40 subsets, or as many as covering every feature takes (fastfs refuses fewer)."""
    return max(VLS["n_subsets"], -(-n // VLS["size"]))


def fastfs_call(name: str, X, y, t: int):
    if name == "relieff":
        return fastfs.relieff(X, y, n_neighbors=K, n_jobs=t).weights
    if name in ("surf", "surfstar", "multisurf", "multisurfstar"):
        return getattr(fastfs, name)(X, y, n_jobs=t).weights
    if name == "turf":
        return fastfs.turf(X, y, pct=TURF["pct"], n_features_to_keep=TURF["keep"],
                           n_neighbors=K, n_jobs=t).weights
    if name == "vls":
        return fastfs.vls(X, y, n_subsets=vls_count(X.shape[1]), subset_size=VLS["size"],
                          random_state=VLS["seed"], n_neighbors=K, n_jobs=t).weights
    return fastfs.iterative_relief(X, y, max_iter=ITER["max_iter"],
                                   learning_rate=ITER["rate"], n_neighbors=K, n_jobs=t).weights


def skrebate_estimator(name: str, n: int):
    import skrebate

    sel = min(10, n)
    if name == "relieff":
        return skrebate.ReliefF(n_neighbors=K, n_features_to_select=sel, n_jobs=1)
    cls = {"surf": "SURF", "surfstar": "SURFstar", "multisurf": "MultiSURF",
           "multisurfstar": "MultiSURFstar"}
    if name in cls:
        return getattr(skrebate, cls[name])(n_features_to_select=sel, n_jobs=1)
    core = skrebate.ReliefF(n_neighbors=K, n_features_to_select=sel, n_jobs=1)
    if name == "turf":
        return skrebate.TURF(core, pct=TURF["pct"], num_scores_to_return=TURF["keep"])
    if name == "vls":
        return skrebate.VLS(core, num_feature_subset=vls_count(n),
                            size_feature_subset=VLS["size"], random_state=VLS["seed"])
    return skrebate.Iter(core, max_iter=ITER["max_iter"], beta=ITER["rate"])


def fast_select_estimator(name: str, n: int, t: int):
    """None where fast-select has no such algorithm."""
    import fast_select as fs

    sel = min(10, n)
    if name == "relieff":
        return fs.ReliefF(n_neighbors=K, n_features_to_select=sel, backend="cpu", n_jobs=t)
    if name in ("surf", "surfstar"):
        return fs.SURF(n_features_to_select=sel, backend="cpu", use_star=name == "surfstar",
                       n_jobs=t)
    if name in ("multisurf", "multisurfstar"):
        return fs.MultiSURF(n_features_to_select=sel, backend="cpu",
                            use_star=name == "multisurfstar", n_jobs=t)
    if name == "turf":
        core = fs.ReliefF(n_neighbors=K, n_features_to_select=sel, backend="cpu", n_jobs=t)
        # the same three scorings as skrebate's TURF (n, n/2, n/4 features when n/4 > keep)
        return fs.TuRF(core, n_features_to_select=TURF["keep"], pct_remove=TURF["pct"],
                       n_iterations=int(1 / TURF["pct"]))
    return None


def available(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def median_runs(fn, repeat: int):
    """(median wall, walls, median CPU time of the process, last result)."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), walls, statistics.median(cpus), out


def run_one(name: str, X, y, threads, args, have) -> dict:
    m, n = X.shape
    row = {"algorithm": name, "m": m, "n": n, "load_start": load_average(), "fastfs": {},
           "fast_select": {}}
    ours = None
    for t in threads:
        med, walls, cpu, ours = median_runs(lambda: fastfs_call(name, X, y, t), args.repeat)
        row["fastfs"][t] = {"s": med, "runs_s": walls, "cpu_s": cpu}
        print(f"m={m} n={n} {name}: fastfs {t} thread(s) {fmt_s(med)} (CPU {fmt_s(cpu)})",
              flush=True)
    if have["skrebate"] and (args.skrebate_only is None or name in args.skrebate_only):
        est = skrebate_estimator(name, n)
        c0 = time.process_time()
        t0 = time.perf_counter()
        est.fit(X, y)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        ref = np.asarray(est.feature_importances_, dtype=np.float64)
        diff = float(np.abs(ref - ours).max())
        row["skrebate"] = {"s": wall, "cpu_s": cpu, "max_abs_diff": diff,
                           "max_abs_score": float(np.abs(ref).max())}
        print(f"m={m} n={n} {name}: skrebate (one run) {fmt_s(wall)} (CPU {fmt_s(cpu)}); max "
              f"|skrebate - fastfs| = {diff:.3g}", flush=True)
        if not diff <= TOL:
            raise SystemExit(f"fastfs {name} and skrebate disagree: {diff:.3g} > {TOL}")
    if have["fast_select"] and fast_select_estimator(name, n, 1) is not None:
        for t in threads:
            fast_select_estimator(name, n, t).fit(X, y)  # JIT warm-up, untimed
            med, walls, cpu, est = median_runs(
                lambda: fast_select_estimator(name, n, t).fit(X, y), args.repeat)
            rec = {"s": med, "runs_s": walls, "cpu_s": cpu}
            if name != "turf":
                got = np.asarray(est.feature_importances_, dtype=np.float64)
                rec["max_abs_diff"] = float(np.abs(got - ours).max())
                rec["rel_diff"] = rec["max_abs_diff"] / max(float(np.abs(ours).max()), 1e-300)
                rec["top10_same"] = bool(set(np.argsort(-got)[:10]) == set(np.argsort(-ours)[:10]))
            row["fast_select"][t] = rec
            extra = (f"; max |fast-select - fastfs| / max|w| = {rec['rel_diff']:.2g}, top 10 "
                     f"{'same' if rec['top10_same'] else 'differ'}") if "rel_diff" in rec else ""
            print(f"m={m} n={n} {name}: fast-select {t} thread(s) {fmt_s(med)} (CPU "
                  f"{fmt_s(cpu)}){extra}", flush=True)
    row["load_end"] = load_average()
    return row


def ratio(a, b) -> str:
    return f"{a / b:,.0f}x" if a / b >= 10 else f"{a / b:.1f}x"


def render(info: dict, rows: list, args) -> str:
    threads = args.threads
    lines = [
        "# The Relief family: fastfs against skrebate and fast-select", "",
        f"Command: `{' '.join(['python'] + sys.argv)}`", "",
        f"Machine: {info['cpu']}, {info['logical_cores']} logical cores; NumPy "
        f"{info['numpy']}, skrebate {info.get('skrebate')}, fast-select "
        f"{info.get('fast_select')}, fastfs {info['fastfs']} ({info['extension']}); "
        f"{info['date']}. Load average before / after: {info['load_before']} / "
        f"{info.get('load_after', '?')}.", "",
        "fastfs and fast-select: median of " f"{args.repeat} calls (fast-select after one untimed "
        "JIT warm-up call); skrebate: ONE run (single process), too slow to repeat. fastfs equals "
        "skrebate to 1e-6 (checked before timing is reported).", "",
        "| algorithm | m x n | " + " | ".join(f"fastfs {t}t" for t in threads)
        + " | skrebate | " + " | ".join(f"fast-select {t}t" for t in threads)
        + " | skrebate / fastfs | fast-select / fastfs | fast-select scores | load |",
        "|---|---|" + "---:|" * (2 * len(threads) + 3) + "---|---|",
    ]
    cpu_rows: list = []
    for r in rows:
        ff = [r["fastfs"][t]["s"] for t in threads]
        sk = r.get("skrebate", {}).get("s")
        fsel = [r["fast_select"].get(t, {}).get("s") for t in threads]
        sk_ratio = " / ".join(ratio(sk, f) for f in ff) if sk else "n/a"
        fs_ratio = (" / ".join(ratio(a, f) for a, f in zip(fsel, ff))
                    if all(fsel) and fsel else "n/a")
        # CPU seconds of the single-thread runs: what a share of a busy machine does not inflate
        c1 = r["fastfs"].get(1, {}).get("cpu_s")
        if c1:
            sk_cpu = r.get("skrebate", {}).get("cpu_s")
            fs_cpu = r["fast_select"].get(1, {}).get("cpu_s")
            cpu_rows.append(
                f"| {r['algorithm']} | {r['m']} x {r['n']} | {fmt_s(c1)} | "
                f"{fmt_s(sk_cpu) if sk_cpu else 'n/a'} | {fmt_s(fs_cpu) if fs_cpu else 'n/a'} | "
                f"{ratio(sk_cpu, c1) if sk_cpu else 'n/a'} | "
                f"{ratio(fs_cpu, c1) if fs_cpu else 'n/a'} |")
        rec = r["fast_select"].get(threads[0], {})
        if "rel_diff" in rec:
            sc = f"max diff {rec['rel_diff']:.1g} of max|w|, top 10 " + (
                "same" if rec["top10_same"] else "differ")
        elif rec:
            sc = "time only"
        else:
            sc = "no such algorithm"
        lines.append(
            f"| {r['algorithm']} | {r['m']} x {r['n']} | "
            + " | ".join(fmt_s(f) for f in ff) + f" | {fmt_s(sk) if sk else 'n/a'} | "
            + " | ".join(fmt_s(f) if f else "n/a" for f in fsel)
            + f" | {sk_ratio} | {fs_ratio} | {sc} | {r['load_start']} |")
    lines += ["", "CPU seconds of the 1-thread runs (process time; fast-select's and skrebate's "
              "include any helper threads they start):", "",
              "| algorithm | m x n | fastfs | skrebate | fast-select | skrebate / fastfs | "
              "fast-select / fastfs |", "|---|---|---:|---:|---:|---:|---:|"] + cpu_rows
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, smoke_help="m = 120, n = 30 (seconds)")
    p.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")],
                   default=[1000, 2000])
    p.add_argument("--features", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--algorithms", type=lambda s: s.split(","), default=list(ALGORITHMS))
    p.add_argument("--skrebate-only", type=lambda s: s.split(","), default=None,
                   help="run skrebate for these algorithms only (it takes minutes a run at "
                        "m = 2000); the others get no skrebate column")
    args = p.parse_args()
    if args.smoke:
        args.sizes, args.features, args.repeat = [120], 30, 1
        global TURF
        TURF = {"pct": 0.5, "keep": 10}
    unknown = set(args.algorithms) - set(ALGORITHMS)
    if unknown:
        raise SystemExit(f"--algorithms: unknown {sorted(unknown)}; valid: {ALGORITHMS}")
    have = {"skrebate": available("skrebate"), "fast_select": available("fast_select")}
    for k, v in have.items():
        if not v:
            print(f"{k} is not installed: its columns are skipped", flush=True)
    info = machine_info()
    info["extension"] = extension_stamp()
    info["load_before"] = load_average()
    if have["fast_select"]:
        from importlib.metadata import version

        info["fast_select"] = version("fast-select")
    if have["skrebate"]:
        from importlib.metadata import version

        info["skrebate"] = version("skrebate")
    out = output_dir(args)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for m in args.sizes:
        X, y = make_data(m, args.features, args.seed)
        for name in args.algorithms:
            rows.append(run_one(name, X, y, args.threads, args, have))
            info["load_after"] = load_average()
            (out / "results_relief_family.md").write_text(render(info, rows, args))
            (out / "results_relief_family.json").write_text(json.dumps(
                {"machine": info, "args": {k: str(v) for k, v in vars(args).items()},
                 "rows": rows}, indent=2, default=str))
    print(render(info, rows, args))


if __name__ == "__main__":
    main()
