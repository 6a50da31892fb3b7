"""Experiment: G-flip on the NIPS 2003 feature selection challenge (Navot's thesis, section
3.7.5): ARCENE and MADELON.

Only the challenge's training and validation sets are available here (the test labels were
never released), so every error below is the balanced error on the validation set, while the
published figures are on the challenge's test set.

ARCENE (100 training samples x 10000 mass-spectrometry features): PCA fitted on the training
set (scikit-learn, centred, not whitened; all 99 informative components), G-flip with the
linear utility on the training projections selects components, and on them an SVM with an
RBF kernel (C and gamma tuned by 5-fold stratified cross-validation on the training set,
balanced accuracy) and a 1-NN classifier predict the validation set. Published: 76 components,
12.66% balanced error (SVM-RBF).

MADELON (2000 x 500): G-flip with the linear utility on the raw features (the thesis applied
no preprocessing) and on z-scored features, then the same tuned SVM-RBF and 1-NN on the
selected features (standardised with the training statistics for the classifiers). Published:
18 features, 7.61% (SVM-RBF); 1-NN about one point worse. The 20 known relevant MADELON
features give the reference rows. Writes nips2003.md and nips2003.json to --out (and a plot).

    python bench/experiments/nips2003.py            # both data sets, about ten minutes
    python bench/experiments/nips2003.py --smoke    # seconds (CI)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

import fastfs

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "bench" / "experiments"))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    machine_info,
    output_dir,
    pyplot,
    save_figure,
    write_report,
)
from madelon_gflip import RELEVANT  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data"
PUBLISHED = {"arcene": (76, 12.66), "madelon": (18, 7.61)}


def load(path: Path):
    with np.load(path, allow_pickle=False) as d:
        return (d["X_train"].astype(np.float64), d["y_train"], d["X_valid"].astype(np.float64),
                d["y_valid"])


def standardise(Xtr, Xva):
    mean, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mean) / sd, (Xva - mean) / sd


def tuned_svm(Xtr, ytr, seed: int, smoke: bool):
    """SVM-RBF with C and gamma chosen by stratified 5-fold CV on the training set."""
    gamma0 = 1.0 / (Xtr.shape[1] * Xtr.var())
    grid = ({"C": [1.0, 10.0], "gamma": [gamma0]} if smoke else
            {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [gamma0 * f for f in (0.25, 0.5, 1, 2, 4)]})
    cv = StratifiedKFold(n_splits=3 if smoke else 5, shuffle=True, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf"), grid, cv=cv, scoring="balanced_accuracy")
    return search.fit(Xtr, ytr)


def errors(Xtr, ytr, Xva, yva, seed, smoke):
    """(SVM-RBF balanced error, its parameters, 1-NN balanced error) on the validation set."""
    svm = tuned_svm(Xtr, ytr, seed, smoke)
    e_svm = 1.0 - balanced_accuracy_score(yva, svm.predict(Xva))
    nn = KNeighborsClassifier(n_neighbors=1).fit(Xtr, ytr)
    e_nn = 1.0 - balanced_accuracy_score(yva, nn.predict(Xva))
    return float(e_svm), svm.best_params_, float(e_nn)


def gflip(X, y, seed, args):
    t0 = time.perf_counter()
    res = fastfs.gflip(X, y, utility="linear", random_state=seed, n_restarts=args.restarts,
                       max_epochs=args.max_epochs)
    return np.flatnonzero(res.support), res, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, threads=False)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of the .npz files")
    p.add_argument("--datasets", default="arcene,madelon")
    p.add_argument("--restarts", type=int, default=1, help="G-flip restarts")
    p.add_argument("--max-epochs", type=int, default=100)
    args = p.parse_args(argv)
    if args.smoke:
        args.max_epochs = 2
    info = machine_info()
    t_start = time.perf_counter()
    rows = []
    for ds in args.datasets.split(","):
        Xtr, ytr, Xva, yva = load(args.data / f"{ds}.npz")
        if args.smoke:  # a corner of the data
            keep = np.random.default_rng(0).permutation(Xtr.shape[0])[:min(200, Xtr.shape[0])]
            Xtr, ytr = Xtr[keep][:, :2000], ytr[keep]
            Xva = Xva[:, :2000]
        print(f"{ds}: train {Xtr.shape}, valid {Xva.shape}", flush=True)
        if ds == "arcene":
            pca = PCA(n_components=min(Xtr.shape) - 1, random_state=args.seed).fit(Xtr)
            Ptr, Pva = pca.transform(Xtr), pca.transform(Xva)
            sel, res, t = gflip(Ptr, ytr, args.seed, args)
            variants = [("G-flip (lin) on PCA components", Ptr[:, sel], Pva[:, sel], sel, res,
                         t),
                        (f"all {Ptr.shape[1]} PCA components", Ptr, Pva, None, None, None),
                        (f"all {Xtr.shape[1]} raw features", *standardise(Xtr, Xva), None,
                         None, None)]
        else:
            sel_raw, res_raw, t_raw = gflip(Xtr, ytr, args.seed, args)
            Ztr, Zva = standardise(Xtr, Xva)
            sel_z, res_z, t_z = gflip(Ztr, ytr, args.seed, args)
            relevant = RELEVANT[RELEVANT < Xtr.shape[1]]
            variants = [("G-flip (lin), raw features", Ztr[:, sel_raw], Zva[:, sel_raw],
                         sel_raw, res_raw, t_raw),
                        ("G-flip (lin), z-scored features", Ztr[:, sel_z], Zva[:, sel_z], sel_z,
                         res_z, t_z),
                        ("the 20 known relevant features", Ztr[:, relevant], Zva[:, relevant],
                         relevant, None, None),
                        (f"all {Xtr.shape[1]} features", Ztr, Zva, None, None, None)]
        for name, A, B, sel, res, t in variants:
            if A.shape[1] == 0:
                print(f"  {name}: nothing selected")
                continue
            e_svm, params, e_nn = errors(A, ytr, B, yva, args.seed, args.smoke)
            row = {"data": ds, "features": name, "n": int(A.shape[1]), "svm_error": e_svm,
                   "svm_params": {k: float(v) for k, v in params.items()}, "nn_error": e_nn,
                   "time_s": t, "epochs": None if res is None else res.n_epochs}
            if ds == "madelon" and sel is not None:
                row["relevant_hits"] = int(np.intersect1d(sel, RELEVANT).size)
            rows.append(row)
            par = ", ".join(f"{k} {float(v):.3g}" for k, v in params.items())
            print(f"  {name}: {A.shape[1]} features, SVM-RBF {e_svm:.4f} ({par}), "
                  f"1-NN {e_nn:.4f}" + ("" if t is None else f", G-flip {t:.1f} s"), flush=True)
    elapsed = time.perf_counter() - t_start
    finish_run(info)
    md = render(args, rows, elapsed, info)

    def plot_to(path: Path) -> None:
        plt = pyplot()
        data = [r["data"] for r in rows]
        names = sorted(set(data), key=data.index)
        fig, axes = plt.subplots(1, len(names), figsize=(6.5 * len(names), 4), squeeze=False)
        for ax, ds in zip(axes[0], names):
            rs = [r for r in rows if r["data"] == ds]
            y = np.arange(len(rs))
            ax.barh(y - 0.2, [100 * r["svm_error"] for r in rs], 0.4, label="SVM-RBF (tuned)")
            ax.barh(y + 0.2, [100 * r["nn_error"] for r in rs], 0.4, label="1-NN")
            ax.set_yticks(y, [f"{r['features']} ({r['n']})" for r in rs], fontsize=7)
            ax.axvline(PUBLISHED[ds][1], color="k", ls="--",
                       label=f"published {PUBLISHED[ds][1]}% (test set)")
            ax.set_xlabel("balanced error on the validation set (%)")
            ax.set_title(ds.upper(), fontsize=10)
            ax.legend(fontsize=7)
        save_figure(fig, path)

    write_report(output_dir(args), "nips2003", md, info, rows, args, plot_to, "nips2003.png")


def render(args, rows, elapsed, info) -> str:
    lines = [
        "# G-flip on the NIPS 2003 challenge: ARCENE and MADELON",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`; {info['cpu']}, "
        f"{info['usable_cores']} cores, fastfs {info['fastfs']}; total {elapsed / 60:.1f} min.",
        "",
        "Only the training and validation sets are available: errors are balanced errors on "
        "the validation set; the published ones (Navot's thesis, section 3.7.5) are on the "
        "challenge's test set. SVM-RBF: C and gamma by "
        f"{3 if args.smoke else 5}-fold CV on the training set "
        "(balanced accuracy). G-flip: linear utility, "
        f"{args.restarts} start(s), random_state={args.seed}.",
        "",
        "| data | features | # | of the 20 relevant | SVM-RBF balanced error | C, gamma "
        "| 1-NN balanced error | G-flip time | published |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in rows:
        hits = r.get("relevant_hits", "")
        par = r["svm_params"]
        pub = PUBLISHED[r["data"]]
        pub_s = f"{pub[0]} features, {pub[1]}%" if r["features"].startswith("G-flip") else ""
        tm = "" if r["time_s"] is None else f"{r['time_s']:.1f} s"
        lines.append(f"| {r['data']} | {r['features']} | {r['n']} | {hits} "
                     f"| {100 * r['svm_error']:.2f}% | {par['C']:g}, {par['gamma']:.3g} "
                     f"| {100 * r['nn_error']:.2f}% | {tm} | {pub_s} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
