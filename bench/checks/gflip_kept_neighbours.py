"""Check: how many samples would a few kept neighbours decide in G-flip's candidate scoring?

G-flip scores a candidate feature f by the margins under D + s delta_f, D the squared
distances under the current set F, delta_f(a, b) = (x_af - x_bf)^2, s = +1 to add f and -1 to
remove it: each sample needs its new nearest hit and nearest miss, which fastfs finds today
by a pass over every pair. A bound per sample could skip most of that pass: keep each sample's
K nearest hits and K nearest misses under D and a lower bound LB_a on its other distances on
that side (the (K + 1)-th smallest). Then, on each side,
  * adding f (distances only grow): min over the kept b of D_ab + delta_f(a, b) is the new
    nearest distance whenever it is at most LB_a;
  * removing f: min over the kept b of D_ab - delta_f(a, b) is, whenever it is at most
    LB_a - max_b delta_f(a, b) (the largest decrease any pair of a can see).
A sample that fails either test would need its full row. This script builds D in NumPy for a
random F on each data family and prints the share of samples the kept lists decide, over all
candidates that add a feature and all that remove one (no G-flip run, no timing).

    python bench/checks/gflip_kept_neighbours.py                   # 1000 x 300, K = 16
    python bench/checks/gflip_kept_neighbours.py --k 8 --sizes 20,100
    python bench/checks/gflip_kept_neighbours.py --smoke           # 120 x 40 (CI)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compare"))
import compare_data_families as cdf  # noqa: E402


def kept_lists(D: np.ndarray, side: np.ndarray, k: int):
    """Per sample: the k smallest distances on one side (mask `side`), their columns, and the
    (k + 1)-th smallest (inf when the side has at most k samples)."""
    Dm = np.where(side, D, np.inf)
    kk = min(k, D.shape[1] - 1)
    idx = np.argpartition(Dm, kk, axis=1)[:, :kk + 1]
    vals = np.take_along_axis(Dm, idx, 1)
    order = np.argsort(vals, axis=1, kind="stable")
    idx, vals = np.take_along_axis(idx, order, 1), np.take_along_axis(vals, order, 1)
    lb = vals[:, kk] if kk == k else np.full(D.shape[0], np.inf)
    return idx[:, :kk], vals[:, :kk], lb


def decided(X: np.ndarray, codes: np.ndarray, F: np.ndarray, k: int):
    """Mean share of samples decided over the candidates that add and that remove a feature."""
    D = np.zeros((X.shape[0], X.shape[0]))
    for f in F:  # feature by feature, as the state is built (no m x m x |F| temporary)
        D += (X[:, f, None] - X[None, :, f]) ** 2
    np.fill_diagonal(D, np.inf)  # leave-one-out
    same = codes[:, None] == codes[None, :]
    sides = [kept_lists(D, same, k), kept_lists(D, ~same, k)]
    in_f = np.zeros(X.shape[1], dtype=bool)
    in_f[F] = True
    add, rem = [], []
    for f in range(X.shape[1]):
        x = X[:, f]
        if x.min() == x.max():
            continue  # G-flip never scores a constant feature
        drop = np.maximum((x - x.min()) ** 2, (x - x.max()) ** 2)
        ok = np.ones(X.shape[0], dtype=bool)
        for idx, vals, lb in sides:
            delta = (x[:, None] - x[idx]) ** 2
            if in_f[f]:
                ok &= (vals - delta).min(axis=1, initial=np.inf) <= lb - drop
            else:
                ok &= (vals + delta).min(axis=1, initial=np.inf) <= lb
        (rem if in_f[f] else add).append(ok.mean())
    mean = lambda v: float(np.mean(v)) if v else float("nan")  # noqa: E731
    return mean(add), mean(rem)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=cdf.DATA)
    p.add_argument("--families", default="gaussian,xor,ties,duplicates,mnist4,madelon")
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--sizes", default="20,50,150", help="sizes of the random set F")
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--features", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true", help="120 x 40 subsamples (CI)")
    args = p.parse_args(argv)
    if args.smoke:
        args.samples, args.features, args.sizes = 120, 40, "10"
        args.families = "gaussian,ties"
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"K = {args.k}; share of samples whose new nearest hit and miss the kept lists decide")
    print("| family | m x n | |F| | candidates adding f | candidates removing f |")
    print("|---|---|---:|---:|---:|")
    rng = np.random.default_rng(args.seed)
    for name in args.families.split(","):
        X, y = cdf.FAMILIES[name][1](args.data, args.seed)
        X, y = cdf.subsample(X, y, args.samples, args.features, args.seed)
        X = np.asarray(X, dtype=np.float64)
        codes = cdf.codes_of(y)
        for size in sizes:
            F = rng.choice(X.shape[1], min(size, X.shape[1]), replace=False)
            add, rem = decided(X, codes, F, args.k)
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {len(F)} | {add:.3f} | {rem:.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
