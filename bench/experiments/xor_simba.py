"""Experiment: Simba and Relief on the xor problem of Navot's thesis (section 3.7.1, fig. 3.3).

Data: fastfs.datasets.make_xor (default 1000 samples, 10 features uniform on [-1, 1], label =
xor of the signs of the first 3). For each seed, Simba (linear utility, and sigmoid) and Relief
visit the same random sample order once. Every --every steps we record (i) the evaluation
e(w) = fastfs.margin_score(X, y, w / max|w|) (linear utility) and (ii) the angle in degrees
between the weight vector and the true relevance vector (1, 1, 1, 0, ..., 0). Writes
xor_simba.png (two panels: e(w) and angle against the step), xor_simba.md and xor_simba.json
to --out.

    python bench/experiments/xor_simba.py            # 1000 samples, 5 seeds
    python bench/experiments/xor_simba.py --smoke    # 200 samples, 2 seeds (CI)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import fastfs
from fastfs.datasets import make_xor

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from baselines import numpy_simba as ns  # noqa: E402
from benchlib import (  # noqa: E402
    add_run_arguments,
    extension_stamp,
    output_dir,
    pyplot,
    save_figure,
)

N_RELEVANT = 3
METHODS = ("simba_linear", "simba_sigmoid", "relief")
LABELS = {"simba_linear": "Simba (linear)", "simba_sigmoid": "Simba (sigmoid)",
          "relief": "Relief"}
STYLES = {"simba_linear": ("C0", "-"), "simba_sigmoid": ("C2", "-."), "relief": ("C3", ":")}


def angle_deg(v: np.ndarray, target: np.ndarray) -> float:
    norm = np.linalg.norm(v) * np.linalg.norm(target)
    if norm == 0:
        return float("nan")
    return float(np.degrees(np.arccos(np.clip(v @ target / norm, -1.0, 1.0))))


def checkpoints(m: int, every: int) -> np.ndarray:
    return np.unique(np.concatenate([[1], np.arange(every, m + 1, every), [m]]))


def simba_trace(X, y, order, ts, utility: str, beta: float, n_jobs) -> tuple[dict, object]:
    """Raw Simba w after each step in ``ts``, captured by the callback of fastfs.simba."""
    wanted = set(int(t) for t in ts)
    trace: dict[int, np.ndarray] = {}

    def record(state) -> bool:
        if state.step in wanted:
            trace[state.step] = np.array(state.selection, dtype=np.float64)
        return False

    res = fastfs.simba(X, y, sample_order=order, n_restarts=1, utility=utility, beta=beta,
                       n_jobs=n_jobs, callback=record)
    # The last captured w must be the one fastfs reports, or the curves show something else.
    last = ns.output_weights(trace[len(order)])
    if not np.allclose(last, res.weights, rtol=0, atol=1e-12):
        raise SystemExit(f"simba ({utility}): callback weights differ from the result")
    return trace, res


def relief_trace(X, y, order, ts) -> dict:
    """Relief's running weight vector after each step in ``ts`` over a fixed order.

    fastfs.relief returns only the final weights, and its n_iter runs draw their own orders,
    so the prefixes are computed here with the same neighbour rule (numpy_simba).
    """
    _, codes = np.unique(y, return_inverse=True)
    wanted = set(int(t) for t in ts)
    w = np.zeros(X.shape[1])
    trace = {}
    for t, s in enumerate(order, start=1):
        h, _, m, _ = ns.nearest_hit_miss(X, codes, int(s))
        if h >= 0 and m >= 0:
            w += (X[s] - X[m]) ** 2 - (X[s] - X[h]) ** 2
        if t in wanted:
            trace[t] = w.copy()
    # One visit of every sample is fastfs.relief's deterministic pass, whatever the order.
    if len(order) == X.shape[0] and len(np.unique(order)) == len(order):
        ref = fastfs.relief(X, y).weights
        if not np.allclose(w, ref, rtol=1e-9, atol=1e-9):
            raise SystemExit("NumPy Relief running sum disagrees with fastfs.relief")
    return trace


def curves(X, y, trace: dict, ts, kind: str, n_jobs) -> tuple[np.ndarray, np.ndarray]:
    """(e, angle) at each step of ``ts`` for a Simba ('simba') or Relief ('relief') trace."""
    target = np.zeros(X.shape[1])
    target[:N_RELEVANT] = 1.0
    e, ang = [], []
    for t in ts:
        w = trace[int(t)]
        if kind == "simba":
            dist_w = np.abs(w)
            out_w = ns.output_weights(w)
        else:
            # A negative Relief weight means "irrelevant"; as a distance weight it would count
            # like a positive one (the metric uses w^2), so it is clipped to zero for e(w).
            dist_w = np.maximum(w, 0.0)
            out_w = w
        top = dist_w.max()
        e.append(fastfs.margin_score(X, y, dist_w / top if top > 0 else dist_w, n_jobs=n_jobs))
        ang.append(angle_deg(out_w, target))
    return np.array(e), np.array(ang)


def top3(weights: np.ndarray) -> list[int]:
    return np.argsort(-weights, kind="stable")[:3].tolist()


def run_seed(seed: int, args, beta: float, ts: np.ndarray) -> dict:
    X, y = make_xor(args.samples, args.features, N_RELEVANT, random_state=seed)
    order = np.random.default_rng(seed + 10_000).permutation(args.samples)
    target = np.zeros(args.features)
    target[:N_RELEVANT] = 1.0
    out = {"seed": seed, "e_true": fastfs.margin_score(X, y, target, n_jobs=args.n_jobs)}
    for method in METHODS:
        t0 = time.perf_counter()
        if method == "relief":
            trace = relief_trace(X, y, order, ts)
            final = trace[args.samples]
        else:
            utility = method.split("_")[1]
            trace, res = simba_trace(X, y, order, ts, utility, beta, args.n_jobs)
            final = res.weights
        e, ang = curves(X, y, trace, ts, method.split("_")[0], args.n_jobs)
        out[method] = {"e": e.tolist(), "angle": ang.tolist(), "top3": top3(final),
                       "final_weights": np.round(final, 6).tolist(),
                       "time_s": time.perf_counter() - t0}
    return out


def summarise(runs: list[dict], ts: np.ndarray) -> dict:
    late = ts >= min(150, ts[-1] // 2)
    summary = {"e_true_mean": float(np.mean([r["e_true"] for r in runs]))}
    for method in METHODS:
        e = np.array([r[method]["e"] for r in runs])
        ang = np.array([r[method]["angle"] for r in runs])
        # Thesis fig. 3.4: how closely e(w) tracks the (unknown in practice) angle, late steps.
        corr = [float(np.corrcoef(e_i[late], a_i[late])[0, 1]) for e_i, a_i in zip(e, ang)]
        summary[method] = {
            "final_angle_mean": float(np.mean(ang[:, -1])),
            "final_angle_std": float(np.std(ang[:, -1])),
            "final_e_mean": float(np.mean(e[:, -1])),
            "final_e_std": float(np.std(e[:, -1])),
            "top3_correct": int(sum(sorted(r[method]["top3"]) == [0, 1, 2] for r in runs)),
            "corr_e_angle_late": float(np.nanmean(corr)),
        }
    return summary


def plot(runs: list[dict], ts: np.ndarray, summary: dict, beta: float, path: Path) -> None:
    plt = pyplot()

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7.5), sharex=True)
    for method in METHODS:
        color, style = STYLES[method]
        e = np.array([r[method]["e"] for r in runs])
        ang = np.array([r[method]["angle"] for r in runs])
        label = LABELS[method] + (f", beta = {beta:.3g}" if method == "simba_sigmoid" else "")
        for ax, values in ((top, e), (bottom, ang)):
            for v in values:
                ax.plot(ts, v, style, color=color, lw=0.6, alpha=0.3)
            ax.plot(ts, values.mean(axis=0), style, color=color, lw=2.2, label=label)
    top.axhline(summary["e_true_mean"], color="k", ls="--", lw=1.2,
                label="e of the true vector (1,1,1,0,...,0)")
    top.set_ylabel("e(w), linear utility, w / max|w|")
    top.set_title(f"xor problem, {runs[0]['m']} samples x {runs[0]['n']} features: mean of "
                  f"{len(runs)} seeds (thick), each seed (thin)", fontsize=10)
    bottom.set_ylabel("angle to (1,1,1,0,...,0) (degrees)")
    bottom.set_xlabel("iteration t (samples visited)")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    bottom.set_ylim(bottom=0)
    save_figure(fig, path)


def render(runs, summary, args, beta, mean_dist) -> str:
    m, n = args.samples, args.features
    lines = [
        "# Simba and Relief on the xor problem (thesis section 3.7.1)",
        "",
        f"Command: `{' '.join(['python'] + sys.argv)}`",
        "",
        f"Data: `fastfs.datasets.make_xor({m}, {n}, 3, random_state=seed)` for seeds "
        f"{[r['seed'] for r in runs]}: features uniform on [-1, 1], label = xor of the signs of "
        "features 0, 1, 2. Per seed, Simba and Relief visit the same random permutation of the "
        "samples once. Simba: `fastfs.simba(X, y, sample_order=order, n_restarts=1, utility=...)`"
        ", the raw w captured after each step with the callback. Sigmoid beta = 1 / mean "
        f"distance between samples = 1 / {mean_dist:.3f} = {beta:.3g} (the thesis' suggested "
        "starting value; at this beta, u' is at most beta/4, so each sigmoid step is "
        "smaller than a linear one). Relief: running sum over the same order in NumPy (the "
        "full-pass sum is checked against `fastfs.relief`). fastfs "
        f"{getattr(fastfs, '__version__', '?')} ({extension_stamp()}).",
        "",
        "e(w) = `fastfs.margin_score(X, y, w / max|w|)` (linear utility). Simba: w is its raw "
        "weight vector (output weights w^2/max(w^2) = (w/max|w|)^2); Relief: its weights with "
        "negative ones clipped to 0. Angle: between the output weights (Simba: w^2/max(w^2); "
        "Relief: the raw running weights) and (1, 1, 1, 0, ..., 0), in degrees. "
        f"Mean e of the true vector: {summary['e_true_mean']:.3f}.",
        "",
        "| method | final angle (deg) | final e(w) | top-3 = {0, 1, 2} | corr(e, angle), "
        "late steps |",
        "|---|---:|---:|---:|---:|",
    ]
    for method in METHODS:
        s = summary[method]
        lines.append(
            f"| {LABELS[method]} | {s['final_angle_mean']:.1f} +/- {s['final_angle_std']:.1f} "
            f"| {s['final_e_mean']:.2f} +/- {s['final_e_std']:.2f} "
            f"| {s['top3_correct']} of {len(runs)} seeds | {s['corr_e_angle_late']:.2f} |")
    lines += [
        "",
        "Mean +/- standard deviation over seeds, at t = "
        f"{m}. Late steps: t >= {min(150, m // 2)} (cf. thesis fig. 3.4), Pearson correlation "
        "per seed, averaged.",
        "",
        "Top-3 features by final weight, per seed:",
        "",
        "| seed | e of true vector | " + " | ".join(LABELS[k] for k in METHODS) + " |",
        "|---:|---:|" + "---|" * len(METHODS),
    ]
    for r in runs:
        lines.append(f"| {r['seed']} | {r['e_true']:.2f} | "
                     + " | ".join(str(r[k]["top3"]) for k in METHODS) + " |")
    lines += ["", "Plot: `xor_simba.png`.", ""]
    return "\n".join(lines)


def mean_pairwise_distance(X: np.ndarray) -> float:
    sq = np.einsum("ij,ij->i", X, X)
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0))
    m = X.shape[0]
    return float(D.sum() / (m * (m - 1)))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--features", type=int, default=10)
    p.add_argument("--seeds", type=int, default=5, help="seeds 0 .. SEEDS-1")
    p.add_argument("--every", type=int, default=10, help="record every this many steps")
    p.add_argument("--beta", type=float, default=None,
                   help="sigmoid slope (default: 1 / mean distance between samples)")
    p.add_argument("--n-jobs", type=int, default=None)
    add_run_arguments(p, smoke_help="200 samples, 2 seeds (CI)", threads=False, seed=False)
    args = p.parse_args(argv)
    if args.smoke:
        args.samples, args.seeds = 200, 2
    args.out = output_dir(args)

    X0, _ = make_xor(args.samples, args.features, N_RELEVANT, random_state=0)
    mean_dist = mean_pairwise_distance(X0)
    beta = args.beta if args.beta is not None else 1.0 / mean_dist
    ts = checkpoints(args.samples, args.every)
    print(f"xor: {args.samples} x {args.features}, {args.seeds} seeds, {ts.size} checkpoints; "
          f"sigmoid beta = {beta:.4g} (mean distance {mean_dist:.3f})", flush=True)

    runs = []
    for seed in range(args.seeds):
        r = run_seed(seed, args, beta, ts)
        r["m"], r["n"] = args.samples, args.features
        runs.append(r)
        print(f"seed {seed}: e(true) {r['e_true']:.2f}; "
              + "; ".join(f"{LABELS[k]}: angle {r[k]['angle'][-1]:.1f} deg, e {r[k]['e'][-1]:.2f}"
                          f", top-3 {r[k]['top3']}" for k in METHODS), flush=True)
    summary = summarise(runs, ts)

    args.out.mkdir(parents=True, exist_ok=True)
    plot(runs, ts, summary, beta, args.out / "xor_simba.png")
    md = render(runs, summary, args, beta, mean_dist)
    (args.out / "xor_simba.md").write_text(md)
    (args.out / "xor_simba.json").write_text(json.dumps(
        {"args": {k: str(v) for k, v in vars(args).items()}, "beta": beta,
         "mean_distance": mean_dist, "steps": ts.tolist(), "summary": summary, "runs": runs},
        indent=1))
    print()
    print(md)
    print(f"wrote {args.out / 'xor_simba.md'}, xor_simba.json, xor_simba.png")


if __name__ == "__main__":
    main()
