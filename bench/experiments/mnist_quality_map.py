"""Experiment: predicting pixel quality from pixel position on mnist4 (Navot's thesis, section
5.2, figures 5.1 and 5.2, and section 5.7, figure 5.7).

Data: mnist4 (digits 0, 1, 6, 9; the thesis used all ten MNIST digits), 2000 training images
and 800 test images, binarised at grey level 127.5. Quality = Infogain (fastfs.filters.mutual_info
with discrete features and no zero correction), meta-features = the (row, column) of each pixel,
map = fastfs.quality_map's default (linear regression on 49 Gaussians of sigma 3 px).

* Figure 5.1: the 784 pixels are split at random into 392 test and 392 candidate training
  features; the map fitted on n training features (n growing) predicts the quality of the test
  features; reported: the correlation between prediction and the test features' Infogain.
* Figure 5.2: the 392 test features are ranked by the prediction of a map fitted on 100 training
  features, by their own Infogain, or at random; 1-NN (Hamming) error on the 800 test images
  using the top k.
* Figure 5.7: Infogain measured on only m of the 2000 images, directly or smoothed by the map
  fitted on all 784 pixels (in-sample), against the Infogain on all 2000 images.

Writes mnist_quality_map.png / .md / .json to --out.

    python bench/experiments/mnist_quality_map.py            # 20 repeats
    python bench/experiments/mnist_quality_map.py --smoke    # 2 repeats, fewer sizes (CI)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import fastfs
from fastfs.generated import binarize

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from benchlib import add_run_arguments, extension_stamp, output_dir, pyplot, save_figure  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "mnist4.npz"


def infogain(X, y):
    return fastfs.filters.mutual_info(X, y, discrete_features=True, alpha=0.0).scores


def corr(a, b) -> float:
    if np.std(a) == 0 or np.std(b) == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def one_nn_error(Xtr, ytr, Xte, yte) -> float:
    from sklearn.neighbors import KNeighborsClassifier

    knn = KNeighborsClassifier(n_neighbors=1, metric="hamming", algorithm="brute")
    return float(np.mean(knn.fit(Xtr, ytr).predict(Xte) != yte))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA, help="mnist4.npz")
    p.add_argument("--repeats", type=int, default=20)
    add_run_arguments(p, threads=False)
    args = p.parse_args()
    n_train_feats = [5, 10, 20, 50, 100, 200, 392]
    top_k = [5, 10, 20, 40, 80, 160, 392]
    sizes = [10, 20, 50, 100, 200, 500, 1000]
    if args.smoke:
        args.repeats = 2
        n_train_feats = [10, 100]
        top_k = [10, 80]
        sizes = [20, 200]
    out = output_dir(args)
    out.mkdir(parents=True, exist_ok=True)
    d = np.load(args.data)
    Xtr = binarize(d["X_train"], 127.5)
    Xte = binarize(d["X_test"], 127.5)
    ytr, yte = d["y_train"], d["y_test"]
    if args.smoke:
        Xtr, ytr, Xte, yte = Xtr[:600], ytr[:600], Xte[:200], yte[:200]
    n_img = Xtr.shape[0]
    t0 = time.time()
    gen = np.random.default_rng(args.seed)
    true_q = infogain(Xtr, ytr)

    # figures 5.1 and 5.2
    r51 = {n: [] for n in n_train_feats}
    r52 = {m: {k: [] for k in top_k} for m in ("predicted", "direct", "random")}
    for _ in range(args.repeats):
        perm = gen.permutation(784)
        test, pool = np.sort(perm[:392]), perm[392:]
        for n in n_train_feats:
            qm = fastfs.quality_map(Xtr, ytr, image_shape=(28, 28), quality=infogain,
                                    observed=pool[:n])
            r51[n].append(corr(qm.predicted[test], true_q[test]))
        qm = fastfs.quality_map(Xtr, ytr, image_shape=(28, 28), quality=infogain,
                                observed=pool[:100])
        orders = {"predicted": test[np.argsort(-qm.predicted[test], kind="stable")],
                  "direct": test[np.argsort(-true_q[test], kind="stable")],
                  "random": gen.permutation(test)}
        for m, order in orders.items():
            for k in top_k:
                cols = order[:k]
                r52[m][k].append(one_nn_error(Xtr[:, cols], ytr, Xte[:, cols], yte))

    # figure 5.7
    r57 = {m: {s: [] for s in sizes} for m in ("direct", "smoothed")}
    for _ in range(args.repeats):
        for s in sizes:
            idx = gen.choice(n_img, s, replace=False)
            while np.unique(ytr[idx]).size < 2:
                idx = gen.choice(n_img, s, replace=False)
            qm = fastfs.quality_map(Xtr[idx], ytr[idx], image_shape=(28, 28), quality=infogain)
            r57["direct"][s].append(corr(qm.quality, true_q))
            r57["smoothed"][s].append(corr(qm.predicted, true_q))
    elapsed = time.time() - t0

    def stats(v):
        v = np.asarray(v, dtype=float)
        return float(np.nanmean(v)), float(np.nanstd(v))

    lines = ["# Meta-features on mnist4: quality maps (Navot's thesis, figures 5.1, 5.2, 5.7)", "",
             f"{n_img} training images, {Xte.shape[0]} test images, {args.repeats} repeats, "
             f"{elapsed:.0f} s; {extension_stamp()}.", "",
             "## Figure 5.1: correlation of predicted and true Infogain of 392 test pixels", "",
             "| training features | correlation (mean +- sd) |", "|---|---|"]
    lines += [f"| {n} | {stats(r51[n])[0]:.3f} +- {stats(r51[n])[1]:.3f} |"
              for n in n_train_feats]
    lines += ["", "## Figure 5.2: 1-NN test error with the top k of the 392 test pixels", "",
              "| k | predicted (100 training features) | direct Infogain | random |",
              "|---|---|---|---|"]
    lines += [f"| {k} | " + " | ".join(f"{stats(r52[m][k])[0]:.3f}"
                                        for m in ("predicted", "direct", "random")) + " |"
              for k in top_k]
    lines += ["", "## Figure 5.7: correlation with the Infogain on all images, from m images",
              "", "| m | direct | smoothed by the map |", "|---|---|---|"]
    lines += [f"| {s} | {stats(r57['direct'][s])[0]:.3f} | {stats(r57['smoothed'][s])[0]:.3f} |"
              for s in sizes]
    md = "\n".join(lines) + "\n"
    (out / "mnist_quality_map.md").write_text(md)
    (out / "mnist_quality_map.json").write_text(json.dumps(
        {"fig5_1": {str(k): v for k, v in r51.items()},
         "fig5_2": {m: {str(k): v for k, v in r.items()} for m, r in r52.items()},
         "fig5_7": {m: {str(k): v for k, v in r.items()} for m, r in r57.items()},
         "args": {k: str(v) for k, v in vars(args).items()}}, indent=1))

    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    ax = axes[0]
    mu = [stats(r51[n]) for n in n_train_feats]
    ax.errorbar(n_train_feats, [m for m, _ in mu], yerr=[s for _, s in mu], marker="o")
    ax.set_xscale("log")
    ax.set_xlabel("training features")
    ax.set_ylabel("correlation with true Infogain")
    ax.set_title("fig. 5.1: predicting unseen pixels")
    ax = axes[1]
    for m, st in (("predicted", "-o"), ("direct", "--s"), ("random", ":^")):
        mu = [stats(r52[m][k]) for k in top_k]
        ax.errorbar(top_k, [a for a, _ in mu], yerr=[b for _, b in mu], fmt=st, label=m)
    ax.set_xscale("log")
    ax.set_xlabel("top features")
    ax.set_ylabel("1-NN test error")
    ax.set_title("fig. 5.2: ranking the 392 test pixels")
    ax.legend()
    ax = axes[2]
    for m, st in (("direct", "--s"), ("smoothed", "-o")):
        mu = [stats(r57[m][s]) for s in sizes]
        ax.errorbar(sizes, [a for a, _ in mu], yerr=[b for _, b in mu], fmt=st, label=m)
    ax.set_xscale("log")
    ax.set_xlabel("training images")
    ax.set_ylabel("correlation with Infogain on all images")
    ax.set_title("fig. 5.7: smoothing with few images")
    ax.legend()
    save_figure(fig, out / "mnist_quality_map.png")
    print(md)
    print(f"wrote {out / 'mnist_quality_map.md'}, .json, .png")


if __name__ == "__main__":
    main()
