"""Headline run: MultiSURF on a generated data set of the size of a skrebate user's report
(2,350 samples x 230,000 features, float64; the report: 32 hours on 64 vCPUs with skrebate).

Data: generated row chunk by row chunk into one preallocated float64 array (no second copy):
binary labels, SNP-like features (0, 1, 2) for a few epistatic pairs whose class is decided by
their combined parity plus noise, and Gaussian noise features for the rest. One timed call of
fastfs.multisurf (n_jobs = --threads); we record the wall time, the CPU time, the peak
resident memory of the process (resource.getrusage ru_maxrss; X itself included) and the ratio
of core-hours (skrebate's 32 h x 64 vCPUs against wall x threads here), with the load average
before and after. The planted features' ranks are printed as a sanity check. Writes
multisurf_headline.md and .json to --out.

    nice python bench/experiments/multisurf_headline.py             # 2350 x 230000, 2 threads
    python bench/experiments/multisurf_headline.py --smoke          # 200 x 2000 (CI)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

import fastfs

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from benchlib import extension_stamp, load_average, machine_info, output_dir  # noqa: E402

REPORT_HOURS, REPORT_CPUS = 32.0, 64  # the skrebate run of the user report
N_PAIRS = 3  # epistatic pairs planted among the features


def make_data(m: int, n: int, seed: int, chunk: int = 64):
    """(X, y, planted): X float64 (m, n) filled in chunks of rows; planted feature indices."""
    gen = np.random.default_rng(seed)
    y = np.arange(m) % 2
    gen.shuffle(y)
    planted = np.arange(2 * N_PAIRS) * (n // (2 * N_PAIRS))
    X = np.empty((m, n))
    for r0 in range(0, m, chunk):
        r1 = min(m, r0 + chunk)
        X[r0:r1] = gen.standard_normal((r1 - r0, n))
    # each pair (a, b): genotypes in {0, 1, 2}, each alone independent of the class, whose sum
    # has the parity of the class for 90 % of the samples (an XOR-like interaction)
    for p in range(N_PAIRS):
        a, b = planted[2 * p], planted[2 * p + 1]
        ga = gen.integers(0, 3, size=m)
        target = y ^ (gen.random(m) < 0.1).astype(y.dtype)
        parity = (target - ga) % 2  # gb's parity
        gb = np.where(parity == 1, 1, 2 * gen.integers(0, 2, size=m))
        X[:, a] = ga
        X[:, b] = gb
    return X, y, planted


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=2350)
    p.add_argument("--features", type=int, default=230_000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--smoke", action="store_true", help="200 x 2000 (CI)")
    args = p.parse_args()
    if args.smoke:
        args.samples, args.features = 200, 2000
    out = output_dir(args)
    info = machine_info()
    info["extension"] = extension_stamp()
    m, n, t = args.samples, args.features, args.threads

    t0 = time.perf_counter()
    X, y, planted = make_data(m, n, args.seed)
    gen_s = time.perf_counter() - t0
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(f"data {m} x {n} float64 ({X.nbytes / 2**30:.2f} GiB) generated in {gen_s:.1f} s; "
          f"peak RSS so far {rss_data:.2f} GiB", flush=True)

    load_before = load_average()
    print(f"load before: {load_before}", flush=True)
    c0 = time.process_time()
    w0 = time.perf_counter()
    res = fastfs.multisurf(X, y, n_jobs=t)
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    load_after = load_average()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    core_hours = wall * t / 3600.0
    ratio = REPORT_HOURS * REPORT_CPUS / core_hours
    rank = np.empty(n, dtype=np.int64)
    rank[res.ranking] = np.arange(n)
    planted_ranks = rank[planted].tolist()
    print(f"fastfs.multisurf {m} x {n}, n_jobs={t}: {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"(cpu/wall {cpu / wall:.2f}); peak RSS {peak:.2f} GiB (X alone "
          f"{X.nbytes / 2**30:.2f} GiB); {core_hours:.3f} core-hours against "
          f"{REPORT_HOURS:g} h x {REPORT_CPUS} vCPUs = {REPORT_HOURS * REPORT_CPUS:g}: "
          f"{ratio:,.0f}x fewer; load before {load_before}, after {load_after}; planted "
          f"features ranked {planted_ranks}", flush=True)

    row = {"samples": m, "features": n, "threads": t, "wall_s": wall, "cpu_s": cpu,
           "peak_rss_gib": peak, "x_gib": X.nbytes / 2**30, "data_gen_s": gen_s,
           "core_hours": core_hours, "skrebate_report_core_hours": REPORT_HOURS * REPORT_CPUS,
           "core_hour_ratio": ratio, "load_before": load_before, "load_after": load_after,
           "planted": planted.tolist(), "planted_ranks": planted_ranks}
    info["load_after"] = load_after
    md = (f"# MultiSURF headline run ({m} x {n}, float64)\n\n"
          f"Machine: {info.get('cpu', '')}; {info['extension']}\n\n"
          "| samples | features | threads | wall | CPU | peak RSS | X | core-hours | "
          "vs 32 h x 64 vCPUs | load before / after |\n|---|---|---|---|---|---|---|---|---|---|\n"
          f"| {m} | {n} | {t} | {wall:.1f} s | {cpu:.1f} s | {peak:.2f} GiB | "
          f"{X.nbytes / 2**30:.2f} GiB | {core_hours:.3f} | {ratio:,.0f}x | "
          f"{load_before} / {load_after} |\n\n"
          f"Planted SNP-like features {planted.tolist()} ranked {planted_ranks} (0 = best).\n")
    out.mkdir(parents=True, exist_ok=True)
    (out / "multisurf_headline.md").write_text(md)
    (out / "multisurf_headline.json").write_text(json.dumps(
        {"machine": info, "args": {k: str(v) for k, v in vars(args).items()}, "rows": [row]},
        indent=2))
    print(md)


if __name__ == "__main__":
    main()
