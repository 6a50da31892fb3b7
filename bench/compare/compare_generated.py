"""Benchmark: the generated features of Navot's thesis (section 5.3.2) on binarised digit
images, fastfs's bit-packed C++ evaluation against a NumPy implementation.

The NumPy implementation is vectorised over images and shifts: for each feature it slices,
per input, the block of shifted pixel values of every image (n_images x shifts, bool), XORs the
negation, ANDs the inputs and ORs over the shifts (``any``). Both get the same features (drawn
by ``fastfs.generated.draw_features`` at random meta-feature values: numInputs 1-8, percentPos
0-100, shiftInvLen 0-8, scatter 0.5-3.5) and the same images (mnist4's 2000 training images,
binarised at 127.5; random images if the data set is missing). Results are checked equal first.

    python bench/compare/compare_generated.py              # 10,000 features over 2,000 images
    python bench/compare/compare_generated.py --smoke      # 300 features over 300 images (CI)
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

from fastfs.generated import binarize, draw_features, generated_features  # noqa: E402

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mnist4.npz"


def load_images(n: int, seed: int, data: Path) -> tuple[np.ndarray, str]:
    if data.exists():
        X = np.load(data)["X_train"][:n]
        if X.shape[0] == n:
            return binarize(X.reshape(n, 28, 28), 127.5).astype(bool), "mnist4 (binarised)"
    gen = np.random.default_rng(seed)
    return gen.random((n, 28, 28)) < 0.2, "random images (mnist4 not found)"


def numpy_features(images: np.ndarray, fs) -> np.ndarray:
    n, h, w = images.shape
    out = np.empty((n, len(fs)), dtype=bool)
    for f in range(len(fs)):
        k = int(fs.n_inputs[f])
        pix = fs.inputs[f, :k]
        rows, cols = pix // w, pix % w
        a = int(fs.shift[f])
        dy0, dy1 = max(-a, -rows.min()), min(a, h - 1 - rows.max())
        dx0, dx1 = max(-a, -cols.min()), min(a, w - 1 - cols.max())
        acc = None
        for r, c, neg in zip(rows, cols, fs.negated[f, :k]):
            block = images[:, r + dy0:r + dy1 + 1, c + dx0:c + dx1 + 1]
            block = ~block if neg else block
            acc = block.copy() if acc is None else (acc & block)
        out[:, f] = acc.reshape(n, -1).any(axis=1)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=2000)
    p.add_argument("--features", type=int, default=10000)
    p.add_argument("--data", type=Path, default=DATA, help="mnist4.npz")
    add_run_arguments(p)
    args = p.parse_args()
    if args.smoke:
        args.images, args.features = 300, 300
    args.out = output_dir(args)
    info = machine_info()
    images, source = load_images(args.images, args.seed, args.data)
    gen = np.random.default_rng(args.seed)
    U = np.column_stack([gen.integers(1, 9, args.features), gen.integers(0, 101, args.features),
                         gen.integers(0, 9, args.features), gen.uniform(0.5, 3.5, args.features)])
    fs = draw_features(U, image_shape=(28, 28), random_state=args.seed)
    t_np, ref = timed(lambda: numpy_features(images, fs))
    rows = []
    for t in args.threads:
        generated_features(images[:10], fs[:10], n_jobs=t)  # warm-up
        t_c, got = timed(lambda t=t: generated_features(images, fs, n_jobs=t))
        if not np.array_equal(got.astype(bool), ref):
            raise SystemExit("fastfs and NumPy disagree")
        rows.append({"threads": t, "numpy_s": t_np, "fastfs_s": t_c, "ratio": t_np / t_c})
        print(f"threads {t}: numpy {fmt_s(t_np)}, fastfs {fmt_s(t_c)}, "
              f"ratio {t_np / t_c:.1f}x", flush=True)
    finish_run(info)
    md = [f"# Generated features: {args.features} features over {args.images} images",
          "", f"Images: {source}. Machine: {info['cpu']}, load {info['load_before']} -> "
          f"{info['load_after']}. Values checked equal.", "",
          "| threads | NumPy | fastfs | ratio |", "|---|---|---|---|"]
    md += [f"| {r['threads']} | {fmt_s(r['numpy_s'])} | {fmt_s(r['fastfs_s'])} | "
           f"{r['ratio']:.1f}x |" for r in rows]

    def plot(path: Path) -> None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.bar(["NumPy"] + [f"fastfs {r['threads']}t" for r in rows],
               [t_np] + [r["fastfs_s"] for r in rows])
        ax.set_yscale("log")
        ax.set_ylabel("seconds")
        ax.set_title(f"{args.features} generated features, {args.images} images")
        save_figure(fig, path)

    write_report(args.out, "results_generated", "\n".join(md) + "\n", info, rows, args, plot,
                 "time_generated.png")


if __name__ == "__main__":
    main()
