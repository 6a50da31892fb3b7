"""Benchmark: batch sparse coding by OMP, fastfs.dictionary.SparseCoding against
scikit-learn's SparseCoder(transform_algorithm="omp"), and against coding every signal with
fastfs's single-target ``fastfs.omp`` (criterion "gradient", classic OMP) in a loop.

Same process, fixed-seed data: a dictionary of unit-norm Gaussian atoms, signals that are
sparse combinations of them plus noise. Codes are checked equal first. Both batch coders use
the Gram matrix of the atoms; SparseCoding codes the signals in C++ (parallel over signals,
default threads), scikit-learn in a Python loop over signals. The loop over fastfs.omp (one
single-target call per signal) shows what coding signal by signal costs.

    python bench/compare/compare_dictionary.py          # 5000 signals, 64 features, 256 atoms, s = 8
    python bench/compare/compare_dictionary.py --smoke  # 200 signals, 32 features, 64 atoms (CI)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import sys
from pathlib import Path

import numpy as np

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

import fastfs  # noqa: E402
from fastfs.dictionary import SparseCoding  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--signals", type=int, default=5000)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--atoms", type=int, default=256)
    p.add_argument("--nonzero", type=int, default=8)
    p.add_argument("--loop-signals", type=int, default=300,
                   help="signals coded by the fastfs.omp loop (its time is scaled up)")
    add_run_arguments(p, threads=False)
    args = p.parse_args()
    if args.smoke:
        args.signals, args.features, args.atoms, args.nonzero = 200, 32, 64, 4
        args.loop_signals = 50
    args.out = output_dir(args)
    from sklearn.decomposition import SparseCoder

    info = machine_info()
    gen = np.random.default_rng(args.seed)
    D = gen.standard_normal((args.atoms, args.features))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    V = np.zeros((args.signals, args.atoms))
    for i in range(args.signals):
        V[i, gen.choice(args.atoms, args.nonzero, replace=False)] = gen.standard_normal(
            args.nonzero)
    X = V @ D + 0.01 * gen.standard_normal((args.signals, args.features))
    sk = SparseCoder(D, transform_algorithm="omp", transform_n_nonzero_coefs=args.nonzero)
    ours = SparseCoding(D, n_nonzero_coefs=args.nonzero).fit(X)
    sk.transform(X[:10])
    ours.transform(X[:10])
    rows = []
    t_sk, c_sk = min((timed(lambda: sk.transform(X)) for _ in range(3)), key=lambda r: r[0])
    t_ff, c_ff = min((timed(lambda: ours.transform(X)) for _ in range(3)), key=lambda r: r[0])
    if not np.allclose(c_sk, c_ff, rtol=1e-9, atol=1e-12):
        raise SystemExit("SparseCoding and SparseCoder disagree")
    m = min(args.loop_signals, args.signals)

    def loop():
        out = np.zeros((m, args.atoms))
        for i in range(m):
            r = fastfs.omp(D.T, X[i], args.nonzero, criterion="gradient")
            out[i, r.selected] = r.coef
        return out

    t_loop, c_loop = timed(loop)
    if not np.allclose(c_loop, c_sk[:m], rtol=1e-6, atol=1e-8):
        print("note: the fastfs.omp loop's codes differ from SparseCoder's on some signals")
    t_loop_all = t_loop * args.signals / m
    rows.append({"method": "sklearn SparseCoder(omp)", "seconds": t_sk, "ratio": 1.0})
    rows.append({"method": "fastfs SparseCoding(omp)", "seconds": t_ff, "ratio": t_sk / t_ff})
    rows.append({"method": f"fastfs.omp loop (scaled from {m} signals)", "seconds": t_loop_all,
                 "ratio": t_sk / t_loop_all})
    finish_run(info)
    md = [f"# Batch sparse coding: {args.signals} signals, {args.features} features, "
          f"{args.atoms} atoms, {args.nonzero} nonzero", "",
          f"Machine: {info['cpu']}, load {info['load_before']} -> {info['load_after']}. "
          "Best of 3 for the batch coders; codes checked equal. Ratio = SparseCoder time / "
          "time (above 1 = faster than scikit-learn).", "",
          "| method | time | ratio |", "|---|---|---|"]
    md += [f"| {r['method']} | {fmt_s(r['seconds'])} | {r['ratio']:.2f} |" for r in rows]
    for r in rows:
        print(f"{r['method']}: {fmt_s(r['seconds'])} (ratio {r['ratio']:.2f})")

    def plot(path: Path) -> None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.barh([r["method"] for r in rows], [r["seconds"] for r in rows])
        ax.set_xscale("log")
        ax.set_xlabel("seconds")
        save_figure(fig, path)

    write_report(args.out, "results_dictionary", "\n".join(md) + "\n", info, rows, args, plot,
                 "time_dictionary.png")


if __name__ == "__main__":
    main()
