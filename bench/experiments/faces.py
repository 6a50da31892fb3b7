"""Experiment: selecting pixels for 1-NN on face and object images (a substitute for Navot's
thesis, section 3.7.2, figures 3.6-3.8).

The thesis used the AR face database (male against female, 85 x 60 pixels), which is not
available here. This runs the same comparison on the two image sets we have, both 32 x 32 =
1024 pixels: ORL faces (40 persons, 10 images each; 5 per person for training, 5 for testing)
and COIL-20 (20 objects, 72 views each; 50 per object for training, 22 for testing). The tasks
are many-class (who is it, which object), not the thesis's two-class one, so the published
numbers are not comparable; the comparison of the methods is.

For each of --splits random stratified splits, on the training part (raw grey levels 0-255):
Simba (linear; sigmoid with beta 0.01 as in the thesis; 10 restarts), G-flip (linear and zero-
one, one point each; starts from the empty and from the full set, the better kept), Relief, and
Infogain (mutual information of each pixel, 10 quantile bins, with the class); then 1-NN
(Euclidean, scikit-learn) on the top-k pixels predicts the test part. Reported: mean accuracy
against k with the 90% interval (range without the best and the worst split), accuracy with all
pixels, and, as images, Simba's and Relief's weights and the top-100 pixels of each method in
the first split (figure 3.8's view). Writes faces.png, faces.md and faces.json to --out.

    python bench/experiments/faces.py              # 10 splits per data set
    python bench/experiments/faces.py --smoke      # seconds (CI)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.neighbors import KNeighborsClassifier

import fastfs

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    write_report,
)

DEFAULT_DATA = REPO.parent / "shared" / "data"
DATASETS = {"orl_faces": 5, "coil20": 50}  # training images per class
RANKERS = ("simba_lin", "simba_sig", "relief", "infogain")
SUBSETS = ("gflip_lin", "gflip_zo")
LABELS = {"simba_lin": "Simba (lin)", "simba_sig": "Simba (sig)", "relief": "Relief",
          "infogain": "Infogain", "gflip_lin": "G-flip (lin)", "gflip_zo": "G-flip (zero-one)"}
STYLES = {"simba_lin": ("C0", "-"), "simba_sig": ("C2", "-"), "relief": ("C3", ":"),
          "infogain": ("C1", "--"), "gflip_lin": ("C0", "*"), "gflip_zo": ("C5", "*")}
SIDE = 32


def image(v: np.ndarray) -> np.ndarray:
    # Both files store each image column by column (MATLAB order).
    return np.asarray(v).reshape(SIDE, SIDE).T


def nn_accuracy(Xtr, ytr, Xte, yte, features) -> float:
    features = np.asarray(features)
    clf = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(Xtr[:, features], ytr)
    return float(np.mean(clf.predict(Xte[:, features]) == yte))


def interval(values: np.ndarray) -> tuple[float, float]:
    v = np.sort(values)
    if v.size >= 3:
        v = v[1:-1]
    return float(v[0]), float(v[-1])


def run_method(name: str, X, y, seed: int, args):
    """(ranking or subset, weights or None, seconds)."""
    t0 = time.perf_counter()
    weights = None
    if name.startswith("simba"):
        kw = {"utility": "sigmoid", "beta": args.beta} if name == "simba_sig" else {}
        res = fastfs.simba(X, y, n_restarts=args.restarts, random_state=seed, **kw)
        out, weights = res.ranking, res.weights
    elif name.startswith("gflip"):
        utility = "zero_one" if name == "gflip_zo" else "linear"
        # fastfs's default: one start from the empty set (the thesis's) and one from the full
        # set, the better kept. From the empty set alone, the linear utility keeps the empty
        # set on ORL (measured: 0 pixels in every split; no single pixel has a positive sum of
        # margins over 40 classes).
        res = fastfs.gflip(X, y, utility=utility, random_state=seed, n_restarts=2,
                           max_epochs=args.max_epochs)
        out = np.asarray(res.selected)
    elif name == "relief":
        res = fastfs.relief(X, y)
        out, weights = res.ranking, res.weights
    else:
        scores = fastfs.filters.mutual_info(X, y, bins=10).scores
        out, weights = np.argsort(-scores, kind="stable"), scores
    return np.asarray(out), weights, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, threads=False)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of the .npz files")
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--splits", type=int, default=10)
    p.add_argument("--restarts", type=int, default=10)
    p.add_argument("--beta", type=float, default=0.01, help="sigmoid beta (the thesis's)")
    p.add_argument("--max-epochs", type=int, default=100)
    p.add_argument("--grid", type=int, default=20)
    p.add_argument("--methods", default=",".join(RANKERS + SUBSETS))
    args = p.parse_args(argv)
    if args.smoke:
        args.splits, args.restarts, args.max_epochs, args.grid = 1, 1, 2, 6
    methods = args.methods.split(",")
    info = machine_info()
    t_start = time.perf_counter()
    results = {}
    for ds in args.datasets.split(","):
        with np.load(args.data / f"{ds}.npz", allow_pickle=False) as d:
            X, y = d["X"].astype(np.float64), d["y"]
        classes = np.unique(y)
        per_class = DATASETS[ds]
        if args.smoke:  # a few classes only
            keep = np.isin(y, classes[:5])
            X, y, classes = X[keep], y[keep], classes[:5]
        n_train = per_class * classes.size
        grid = np.unique(np.round(np.geomspace(1, X.shape[1], args.grid)).astype(int))
        sss = StratifiedShuffleSplit(n_splits=args.splits, train_size=n_train,
                                     random_state=args.seed)
        acc = {m: [] for m in methods if m in RANKERS}
        sub = {m: [] for m in methods if m in SUBSETS}
        times = {m: 0.0 for m in methods}
        first = {}
        all_px = []
        for s, (tr, te) in enumerate(sss.split(X, y)):
            Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
            all_px.append(nn_accuracy(Xtr, ytr, Xte, yte, np.arange(X.shape[1])))
            line = [f"{ds} split {s + 1}/{args.splits}: all pixels {all_px[-1]:.3f}"]
            for m in methods:
                out, w, t = run_method(m, Xtr, ytr, args.seed + s, args)
                times[m] += t
                if s == 0:
                    first[m] = (out, w)
                if m in SUBSETS:
                    a = nn_accuracy(Xtr, ytr, Xte, yte, out) if out.size else float("nan")
                    sub[m].append((int(out.size), a))
                    line.append(f"{m} {out.size} px {a:.3f} ({t:.1f} s)")
                else:
                    acc[m].append([nn_accuracy(Xtr, ytr, Xte, yte, out[:k]) for k in grid])
                    line.append(f"{m} ({t:.1f} s)")
            print("; ".join(line), flush=True)
        results[ds] = {"grid": grid, "acc": {m: np.array(v) for m, v in acc.items()},
                       "sub": sub, "times": times, "first": first,
                       "all": np.array(all_px), "n_train": n_train,
                       "n_test": X.shape[0] - n_train, "classes": classes.size}
    elapsed = time.perf_counter() - t_start
    finish_run(info)
    rows = summarize(results)
    md = render(args, results, rows, elapsed, info)

    def plot_to(path: Path) -> None:
        plt = pyplot()
        names = list(results)
        panels = ["simba_lin", "relief"]
        masks = [m for m in ("simba_lin", "relief", "infogain", "gflip_zo") if m in methods]
        ncol = 1 + len([m for m in panels if m in methods]) + len(masks)
        fig, axes = plt.subplots(len(names), ncol, figsize=(3.2 * ncol + 2, 3.4 * len(names)),
                                 squeeze=False,
                                 gridspec_kw={"width_ratios": [2.2] + [1] * (ncol - 1)})
        for r, ds in enumerate(names):
            res = results[ds]
            ax = axes[r, 0]
            for m, A in res["acc"].items():
                c, ls = STYLES[m]
                ax.semilogx(res["grid"], A.mean(axis=0), color=c, ls=ls, label=LABELS[m])
                if A.shape[0] >= 3:
                    lh = np.array([interval(A[:, k]) for k in range(A.shape[1])])
                    ax.fill_between(res["grid"], lh[:, 0], lh[:, 1], color=c, alpha=0.12)
            for m, v in res["sub"].items():
                c, ls = STYLES[m]
                ax.plot(np.mean([x[0] for x in v]), np.mean([x[1] for x in v]), ls, color=c,
                        ms=10, label=LABELS[m])
            ax.axhline(res["all"].mean(), color="k", lw=0.7, label="all pixels")
            ax.set_xlabel("number of pixels")
            ax.set_ylabel("1-NN test accuracy")
            ax.set_title(f"{ds} ({res['classes']} classes)", fontsize=9)
            ax.legend(fontsize=7, loc="lower right")
            c = 1
            for m in panels:
                if m not in methods:
                    continue
                axes[r, c].imshow(image(res["first"][m][1]), cmap="gray")
                axes[r, c].set_title(f"{LABELS[m]} weights", fontsize=9)
                axes[r, c].axis("off")
                c += 1
            for m in masks:
                img = np.zeros(SIDE * SIDE)
                out = res["first"][m][0]
                img[out[:100] if m in RANKERS else out] = 1.0
                axes[r, c].imshow(image(img), cmap="gray_r")
                what = "top 100" if m in RANKERS else f"{out.size} selected"
                axes[r, c].set_title(f"{LABELS[m]}, {what}", fontsize=9)
                axes[r, c].axis("off")
                c += 1
        save_figure(fig, path)

    write_report(output_dir(args), "faces", md, info, rows, args, plot_to, "faces.png")


def summarize(results) -> list[dict]:
    rows = []
    for ds, res in results.items():
        for m, A in res["acc"].items():
            mean = A.mean(axis=0)
            i = int(np.argmax(mean))
            at = {int(k): float(mean[j]) for j, k in enumerate(res["grid"])}
            rows.append({"data": ds, "method": m, "best_k": int(res["grid"][i]),
                         "best_acc": float(mean[i]), "interval": interval(A[:, i]),
                         "curve": at})
        for m, v in res["sub"].items():
            n = np.array([x[0] for x in v])
            a = np.array([x[1] for x in v])
            rows.append({"data": ds, "method": m, "best_k": float(n.mean()),
                         "best_acc": float(a.mean()), "interval": interval(a), "curve": None})
        rows.append({"data": ds, "method": "all pixels", "best_k": 1024,
                     "best_acc": float(res["all"].mean()), "interval": interval(res["all"]),
                     "curve": None})
    return rows


def render(args, results, rows, elapsed, info) -> str:
    lines = [
        "# Pixel selection for 1-NN on ORL faces and COIL-20 (substitute for the AR faces "
        "experiment)",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`; {info['cpu']}, "
        f"{info['usable_cores']} cores, fastfs {info['fastfs']}; total {elapsed / 60:.1f} min.",
        "",
        "A substitute: the thesis's AR faces (male/female) are not available. Simba with "
        f"{args.restarts} restarts, sigmoid beta {args.beta}; {args.splits} stratified splits "
        "per data set; interval = range without the best and the worst split.",
        "",
    ]
    for ds, res in results.items():
        grid = res["grid"]
        lines += [f"## {ds}: {res['classes']} classes, {res['n_train']} training and "
                  f"{res['n_test']} test images", "",
                  "| method | best mean accuracy | at (pixels) | interval there "
                  "| run time per split |", "|---|---:|---:|---|---:|"]
        for r in rows:
            if r["data"] != ds:
                continue
            t = res["times"].get(r["method"])
            tm = "" if t is None else f"{t / args.splits:.1f} s"
            k = r["best_k"]
            k_s = f"{k:.0f}" if isinstance(k, float) else str(k)
            lines.append(f"| {LABELS.get(r['method'], r['method'])} | "
                         f"{100 * r['best_acc']:.2f}% | {k_s} | {100 * r['interval'][0]:.1f}-"
                         f"{100 * r['interval'][1]:.1f}% | {tm} |")
        rankers = list(res["acc"])
        lines += ["", "Mean accuracy (%) against the number of top-ranked pixels:", "",
                  "| pixels | " + " | ".join(LABELS[m] for m in rankers) + " |",
                  "|---:|" + "---:|" * len(rankers)]
        for j, k in enumerate(grid):
            lines.append(f"| {k} | " + " | ".join(f"{100 * res['acc'][m][:, j].mean():.2f}"
                                                  for m in rankers) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
