"""Experiment: could a float32 screen make MultiSURF's distance pass cheaper and stay exact?

MultiSURF's thresholds are per sample (mu_i -/+ sigma_i / 2 over its m - 1 distances), so a
float32 screen must bound the threshold as well as each pair. This script measures, on the
benchmark's Gaussian data, how often a rigorous screen would still need a sample's exact float64
row. The model: the float32 distance a_ij of min-max scaled rows, with a rounding bound
|d_ij - a_ij| <= gamma a_ij + conv_ij (gamma = 2 g / (1 - g), g = (K + 1) u, u = 2^-24, where
K is how many float32 terms each accumulator lane adds before it is promoted to float64: K = n
is the engine's plain float32 sum); conv_ij the error of converting the rows to float32, either
the engine's global bound 2.02 u n or the per-pair R_i + R_j (R_i = sum_f |z_if - fl32(z_if)|).
mu_i exact (from the sorted columns), sigma_i within the RMS of the pair bounds (the standard
deviation is 1-Lipschitz in the RMS norm), so each threshold lies in a band; a sample whose
exact distances put one inside a band needs its exact row (the others: exact distances only
for the pairs whose interval meets the band).

    python bench/experiments/multisurf_screen_bound.py           # m = 2000, n = 1000, 200 rows
    python bench/experiments/multisurf_screen_bound.py --smoke   # m = 120, n = 64 (CI)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import add_run_arguments, load_average, output_dir, write_md_json

U = 2.0 ** -24


def forced_rows(Z: np.ndarray, rows: np.ndarray, K: int, per_pair_conv: bool) -> dict:
    m, n = Z.shape
    Z32 = Z.astype(np.float32)
    R = np.abs(Z - Z32.astype(np.float64)).sum(axis=1) * 1.01
    g = (K + 1) * U
    gamma = 2 * g / (1 - g)
    forced = ambiguous = 0
    for i in rows:
        keep = np.arange(m) != i
        d = np.abs(Z - Z[i]).sum(axis=1)[keep]
        a = np.abs(Z32 - Z32[i]).sum(axis=1, dtype=np.float32).astype(np.float64)[keep]
        conv = (R[i] + R)[keep] if per_pair_conv else 2.02 * U * n
        lo, hi = a / (1 + gamma) - conv, a / (1 - gamma) + conv
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        mu, s_mid, r = d.mean(), mid.std(), float(np.sqrt((half ** 2).mean()))
        hit = False
        for sign in (-1.0, 1.0):  # the near and the far threshold
            t = mu + sign * s_mid / 2
            t_lo, t_hi = t - r / 2, t + r / 2
            ambiguous += int(((hi >= t_lo) & (lo <= t_hi)).sum())
            hit = hit or bool(((d >= t_lo) & (d <= t_hi)).any())
        forced += hit
    return {"K": K, "conv": "per pair" if per_pair_conv else "global", "gamma": gamma,
            "forced_rows": forced / len(rows), "ambiguous_pairs_per_row": ambiguous / len(rows)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, smoke_help="m = 120, n = 64 (seconds)", threads=False)
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--features", type=int, default=1000)
    p.add_argument("--sample", type=int, default=200, help="query rows examined")
    args = p.parse_args()
    if args.smoke:
        args.rows, args.features, args.sample = 120, 64, 20
    gen = np.random.default_rng(args.seed)
    X = gen.standard_normal((args.rows, args.features))
    Z = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    rows = gen.choice(args.rows, min(args.sample, args.rows), replace=False)
    load = load_average()
    results = [forced_rows(Z, rows, K, pp)
               for K, pp in ((args.features, False), (args.features, True), (128, True),
                             (32, True), (8, True))]
    lines = [(f"# MultiSURF: a float32 screen's exact fallbacks ({args.rows} x {args.features}, "
              f"{len(rows)} query rows, load {load})"), "",
             ("| K (float32 terms per lane) | conversion bound | gamma | rows needing the exact "
              "row | pairs in a threshold band per row |"), "|---:|---|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['K']} | {r['conv']} | {r['gamma']:.2e} | {r['forced_rows']:.0%} | "
                     f"{r['ambiguous_pairs_per_row']:.1f} |")
    md = "\n".join(lines) + "\n"
    write_md_json(output_dir(args), "multisurf_screen_bound", md,
                  {"args": {k: str(v) for k, v in vars(args).items()}, "load": load,
                   "rows": results})
    print(md)


if __name__ == "__main__":
    main()
