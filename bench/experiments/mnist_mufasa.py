"""Experiment: guided feature generation by Mufasa on mnist4 (Navot's thesis, section 5.3.2,
figures 5.3 and 5.4).

Data: mnist4 (digits 0, 1, 6, 9; the thesis used all ten MNIST digits and 2000 test images),
2000 training and 800 test images, binarised at grey level 127.5. Features: the generated
features of section 5.3.2 (fastfs.generated: AND of 1-8 possibly negated pixels, OR over shifts
within +-shiftInvLen), meta-features (numInputs, percentPos, shiftInvLen, scatter), cost
0.5 (1 + shiftInvLen^2). For every budget:

* Mufasa: fastfs.mufasa with the defaults of DigitFeatureSearch (features drawn at u until the
  budget is spent, quality = 2-fold CV accuracy of a linear SVM), J steps from u0 = (2, 50, 1, 1.5);
* MF + Norm-Infogain: features drawn at uniformly random meta-feature values up to 50 times the
  budget, sorted by Infogain / cost, the prefix that fits the budget;
* MF + Rand: J feature sets of the budget, each at a uniformly random meta-feature value, the one
  with the best 2-fold CV accuracy.

The test error is that of a linear SVM (scikit-learn's LinearSVC) trained on the 2000 images with
the chosen features. Figure 5.4: Mufasa's u_best against the budget. Writes mnist_mufasa.png /
.md / .json to --out.

    python bench/experiments/mnist_mufasa.py            # budgets 10-400, J = 30, 3 repeats
    python bench/experiments/mnist_mufasa.py --smoke    # 2 budgets, J = 3, 1 repeat (CI)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import fastfs
from fastfs.generated import (
    DigitFeatureSearch,
    GeneratedFeatures,
    binarize,
    draw_features,
    generated_features,
)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from benchlib import add_run_arguments, extension_stamp, output_dir, pyplot, save_figure  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "mnist4.npz"
METHODS = ("mufasa", "norm_infogain", "rand")
LABELS = {"mufasa": "Mufasa", "norm_infogain": "MF + Norm-Infogain", "rand": "MF + Rand"}


def test_error(Ftr: GeneratedFeatures, Itr, ytr, Ite, yte) -> float:
    from sklearn.svm import LinearSVC

    A = generated_features(Itr, Ftr).astype(np.float32)
    B = generated_features(Ite, Ftr).astype(np.float32)
    return float(np.mean(LinearSVC(dual="auto").fit(A, ytr).predict(B) != yte))


def norm_infogain(Itr, ytr, budget: float, lo, hi, gen) -> GeneratedFeatures:
    parts, spent = [], 0.0
    while spent < 50 * budget:
        U = gen.uniform(lo, hi, size=(2000, 4))
        fs = draw_features(U, image_shape=Itr.image_shape,
                           random_state=int(gen.integers(2**63)))
        cum = spent + np.cumsum(fs.cost)
        take = int(np.searchsorted(cum, 50 * budget, side="right"))
        parts.append(fs[np.arange(max(take, 1))])
        spent = float(cum[max(take, 1) - 1])
        if take < len(fs):
            break
    pool = GeneratedFeatures.concat(parts)
    values = generated_features(Itr, pool)
    ig = fastfs.filters.mutual_info(values, ytr, discrete_features=True, alpha=0.0).scores
    order = np.argsort(-ig / pool.cost, kind="stable")
    cum = np.cumsum(pool.cost[order])
    return pool[order[: int(np.searchsorted(cum, budget, side="right"))]]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA, help="mnist4.npz")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--budgets", type=str, default="10,25,50,100,200,400")
    add_run_arguments(p, threads=False)
    args = p.parse_args()
    budgets = [float(b) for b in args.budgets.split(",")]
    if args.smoke:
        args.repeats, args.steps, budgets = 1, 3, [10.0, 25.0]
    out = output_dir(args)
    out.mkdir(parents=True, exist_ok=True)
    d = np.load(args.data)
    Xtr = binarize(d["X_train"], 127.5).reshape(-1, 28, 28)
    Xte = binarize(d["X_test"], 127.5).reshape(-1, 28, 28)
    ytr, yte = d["y_train"], d["y_test"]
    if args.smoke:
        Xtr, ytr, Xte, yte = Xtr[:300], ytr[:300], Xte[:200], yte[:200]
    Itr = fastfs.generated.pack_images(Xtr)
    Ite = fastfs.generated.pack_images(Xte)
    lo, hi = DigitFeatureSearch.bounds[:, 0], DigitFeatureSearch.bounds[:, 1]
    gen = np.random.default_rng(args.seed)
    t0 = time.time()
    err = {m: {b: [] for b in budgets} for m in METHODS}
    ubest = {b: [] for b in budgets}
    n_feat = {m: {b: [] for b in budgets} for m in METHODS}
    for r in range(args.repeats):
        search = DigitFeatureSearch(Itr, ytr, cv_seed=r)
        for b in budgets:
            res = search.run(budget=b, n_steps=args.steps, random_state=int(gen.integers(2**63)))
            F = GeneratedFeatures.concat(res.features)
            err["mufasa"][b].append(test_error(F, Itr, ytr, Ite, yte))
            n_feat["mufasa"][b].append(len(F))
            ubest[b].append(res.u_best.tolist())
            F = norm_infogain(Itr, ytr, b, lo, hi, gen)
            err["norm_infogain"][b].append(test_error(F, Itr, ytr, Ite, yte))
            n_feat["norm_infogain"][b].append(len(F))
            rand = fastfs.mufasa(search.draw, search.u0, quality=search.quality, budget=b,
                                 cost=search.cost, n_steps=args.steps,
                                 perturbation=lambda ub, g: g.uniform(lo, hi),
                                 random_state=int(gen.integers(2**63)))
            F = GeneratedFeatures.concat(rand.features)
            err["rand"][b].append(test_error(F, Itr, ytr, Ite, yte))
            n_feat["rand"][b].append(len(F))
            print(f"repeat {r} budget {b:g}: " + ", ".join(
                f"{LABELS[m]} {err[m][b][-1]:.3f}" for m in METHODS)
                + f"; u_best {np.round(res.u_best, 2).tolist()}", flush=True)
    elapsed = time.time() - t0
    names = ("numInputs", "percentPos", "shiftInvLen", "scatter")
    lines = ["# Mufasa on mnist4 (Navot's thesis, figures 5.3 and 5.4)", "",
             f"{Xtr.shape[0]} training images, {Xte.shape[0]} test images, J = {args.steps} "
             f"steps, {args.repeats} repeats, {elapsed:.0f} s; {extension_stamp()}.", "",
             "## Figure 5.3: linear-SVM test error (mean over repeats; features in brackets)",
             "", "| budget | " + " | ".join(LABELS[m] for m in METHODS) + " |",
             "|---|---|---|---|"]
    lines += [f"| {b:g} | " + " | ".join(
        f"{np.mean(err[m][b]):.3f} ({np.mean(n_feat[m][b]):.0f})" for m in METHODS) + " |"
        for b in budgets]
    lines += ["", "## Figure 5.4: Mufasa's best meta-feature values (mean, [min, max])", "",
              "| budget | " + " | ".join(names) + " |", "|---|---|---|---|---|"]
    for b in budgets:
        U = np.array(ubest[b])
        lines.append(f"| {b:g} | " + " | ".join(
            f"{U[:, i].mean():.2f} [{U[:, i].min():.2f}, {U[:, i].max():.2f}]"
            for i in range(4)) + " |")
    md = "\n".join(lines) + "\n"
    (out / "mnist_mufasa.md").write_text(md)
    (out / "mnist_mufasa.json").write_text(json.dumps(
        {"error": {m: {str(b): v for b, v in e.items()} for m, e in err.items()},
         "n_features": {m: {str(b): v for b, v in e.items()} for m, e in n_feat.items()},
         "u_best": {str(b): v for b, v in ubest.items()},
         "args": {k: str(v) for k, v in vars(args).items()}}, indent=1))
    plt = pyplot()
    fig, axes = plt.subplots(1, 5, figsize=(20, 3.8))
    for m, st in zip(METHODS, ("-o", "--s", ":^")):
        axes[0].plot(budgets, [np.mean(err[m][b]) for b in budgets], st, label=LABELS[m])
    axes[0].set_xscale("log")
    axes[0].set_xlabel("budget")
    axes[0].set_ylabel("test error")
    axes[0].set_title("fig. 5.3")
    axes[0].legend()
    for i in range(4):
        U = [np.array(ubest[b])[:, i] for b in budgets]
        mean = [u.mean() for u in U]
        axes[i + 1].errorbar(budgets, mean, yerr=[[m - u.min() for m, u in zip(mean, U)],
                                                  [u.max() - m for m, u in zip(mean, U)]],
                             fmt="-o")
        axes[i + 1].set_xscale("log")
        axes[i + 1].set_xlabel("budget")
        axes[i + 1].set_title(f"fig. 5.4: {names[i]}")
    save_figure(fig, out / "mnist_mufasa.png")
    print(md)
    print(f"wrote {out / 'mnist_mufasa.md'}, .json, .png")


if __name__ == "__main__":
    main()
