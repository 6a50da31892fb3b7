"""Benchmark: fastfs.dask against scikit-learn inside Dask's map_blocks, and 1 against 2 workers.

(a) ``anova_f`` and ``pearson`` over a float32 Dask array generated chunk by chunk (never held
    whole: at the full size, 100,000 x 20,000, it is 8 GB):
    * fastfs.dask on the array chunked by rows and features (per-chunk C++ summaries merged in
      row order), and on the same data chunked by features only;
    * scikit-learn's ``f_classif`` and ``r_regression`` inside ``map_blocks`` on the feature
      blocks (each block holds every row: scikit-learn's statistics do not merge over rows).
    Both sides' answers are compared before the times are shown.
(b) G-flip (from the full set) with the m x m float64 distance state split by row blocks across
    the workers (``fd.gflip(split_state=True)``), at an m whose state exceeds one worker's memory limit:
    time per epoch and each worker's peak memory (resident set size of its process).
(d) With --tiled (included in --smoke): the tiled mode of the Relief family and the margins
    (X in row tiles, one task a pair of tiles, no worker holding X whole) against the broadcast
    mode (X sent to every worker), on 2 workers; both answers checked against one machine
    first (neighbours identical, scores to 1e-12 of the largest).
(c) The speed-up from 1 to 2 workers (one thread each) for fastfs.dask's anova_f on the
    row-and-feature chunked array, for relieff over blocks of query samples, and for G-flip on
    a split state (its answer checked equal to fastfs.gflip first).

Every cluster is a ``LocalCluster`` of worker processes started before the clock runs; times
are medians of --repeat runs. Writes dask.md and dask.json to --out.

    python bench/compare/compare_dask.py --smoke                       # seconds (CI)
    python bench/compare/compare_dask.py --rows 100000 --cols 20000 --row-chunk 25000 \\
        --col-chunk 1000 --memory-limit 3GiB                    # the full size, by hand
    python bench/compare/compare_dask.py --only-tiled --tiled-rows 20000 --tiled-features 200
    python bench/compare_dask.py --gflip-rows 30000 --gflip-workers 4 \
        --gflip-memory 3GiB                                     # (b) at 7.2 GB of state
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy: benchlib.BLAS_WORKERS_NOTE

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchlib import (  # noqa: E402
    add_run_arguments,
    finish_run,
    load_average,
    machine_info,
    output_dir,
)


def _block(block_info=None, *, seed: int, dtype=np.float32):
    """One chunk of X, a function of its position only (rows in runs of 1000, each run of a
    column block seeded by (seed, run, first column)): the same array for any row chunking and
    whichever worker makes it."""
    (r0, r1), (c0, c1) = block_info[None]["array-location"]
    out = np.empty((r1 - r0, c1 - c0), dtype=dtype)
    for a in range(r0 - r0 % 1000, r1, 1000):
        lo, hi = max(a, r0), min(a + 1000, r1)
        run = np.random.default_rng([seed, a // 1000, c0]).standard_normal(
            (1000, c1 - c0), dtype=np.float32)
        out[lo - r0:hi - r0] = run[lo - a:hi - a]
    return out


def make_array(rows: int, cols: int, row_chunk: int, col_chunk: int, seed: int):
    import dask.array as da

    chunks = (tuple(_sizes(rows, row_chunk)), tuple(_sizes(cols, col_chunk)))
    return da.map_blocks(_block, chunks=chunks, dtype=np.float32, seed=seed,
                         meta=np.empty((0, 0), np.float32))


def _sizes(total: int, step: int) -> list[int]:
    return [min(step, total - a) for a in range(0, total, step)]


def targets(rows: int, seed: int):
    g = np.random.default_rng([seed, 99])
    return g.integers(0, 3, rows), g.standard_normal(rows)


def _sk_anova(block, y):
    from sklearn.feature_selection import f_classif

    f, p = f_classif(block, y)
    return np.stack([f, p])


def _sk_pearson(block, t):
    from sklearn.feature_selection import r_regression

    return r_regression(block, t)[None, :]


def _import_sklearn() -> None:
    import sklearn.feature_selection  # noqa: F401


def median_time(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def cluster(n_workers: int, memory_limit: str):
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                     memory_limit=memory_limit, dashboard_address=":0")
    return c, Client(c)


def gflip_data(m: int, n: int, seed: int):
    """Three classes; features 0-2 carry the class, the rest is noise."""
    g = np.random.default_rng([seed, 7])
    y = g.integers(0, 3, m)
    X = g.standard_normal((m, n))
    X[:, :3] += 0.8 * np.eye(3)[y]
    return X, y


def _import_fastfs() -> None:
    import fastfs.dask  # noqa: F401


def _peak_rss() -> int:
    """Peak resident set size of this worker process, bytes."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rel_diff(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(a[ok]), 1e-300)))


def part_d(args, md: list, rows: list) -> None:
    """(d) the tiled mode against the broadcast mode, 2 workers x 1 thread."""
    import fastfs
    import fastfs.dask as fd

    m, n = args.tiled_rows, args.tiled_features
    X, y = gflip_data(m, n, args.seed + 2)
    X[:, 3] = np.round(4 * X[:, 3])      # ties between distances
    X[m // 2] = X[1]                     # a duplicate row
    cases = [("relief", lambda **k: fd.relief(X, y, **k).weights,
              lambda: fastfs.relief(X, y, n_jobs=1).weights),
             ("relieff", lambda **k: fd.relieff(X, y, n_neighbors=10, **k).weights,
              lambda: fastfs.relieff(X, y, n_neighbors=10, n_jobs=1).weights),
             ("multisurf", lambda **k: fd.multisurf(X, y, **k).weights,
              lambda: fastfs.multisurf(X, y, n_jobs=1).weights),
             ("margins", lambda **k: fd.margins(X, y, **k), lambda: fastfs.margins(X, y, n_jobs=1))]
    lc, client = cluster(2, args.memory_limit)
    try:
        client.run(_import_fastfs)
        md += ["", f"## (d) tiled against broadcast: {m} x {n} float64, tiles of "
               f"{args.tile_rows} rows ({-(-m // args.tile_rows)} tiles), 2 workers x 1 "
               f"thread; load {load_average()}", "",
               "| function | broadcast (s) | tiled (s) | tiled / broadcast | one machine, 1 "
               "thread (s) | max diff. to one machine (of the largest) |",
               "|---|---:|---:|---:|---:|---:|"]
        for name, run, one_machine in cases:
            want = one_machine()
            scale = float(np.nanmax(np.abs(want)))
            modes = {"broadcast": dict(mode="broadcast"),
                     "tiled": dict(mode="tiled", tile_rows=args.tile_rows)}
            sec, worst = {}, 0.0
            for mode, kw in modes.items():
                got = run(client=client, n_jobs=1, **kw)
                if not np.array_equal(np.isnan(got), np.isnan(want)):
                    raise SystemExit(f"{name} ({mode}): NaN where one machine has none")
                diff = float(np.nanmax(np.abs(got - want))) / scale
                if diff > 1e-12:
                    raise SystemExit(f"{name} ({mode}) differs from one machine: {diff:.1e}")
                worst = max(worst, diff)
                sec[mode] = median_time(lambda: run(client=client, n_jobs=1, **kw),
                                        args.repeat)[0]
            one_t = median_time(one_machine, args.repeat)[0]
            ratio = sec["tiled"] / sec["broadcast"]
            rows.append({"part": "d", "function": name, "rows": m, "features": n,
                         "tile_rows": args.tile_rows, "broadcast": sec["broadcast"],
                         "tiled": sec["tiled"], "one_machine": one_t, "max_diff": worst})
            md.append(f"| {name} | {sec['broadcast']:.3f} | {sec['tiled']:.3f} | "
                      f"{ratio:.2f}x | {one_t:.3f} | {worst:.1e} |")
            print(md[-1], flush=True)
    finally:
        client.close()
        lc.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, threads=False)
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--cols", type=int, default=2000)
    p.add_argument("--row-chunk", type=int, default=5000)
    p.add_argument("--col-chunk", type=int, default=500)
    p.add_argument("--memory-limit", default="2GiB", help="per worker")
    p.add_argument("--relieff-rows", type=int, default=8000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--gflip-rows", type=int, default=12000, help="(b): samples")
    p.add_argument("--gflip-features", type=int, default=50)
    p.add_argument("--gflip-workers", type=int, default=4)
    p.add_argument("--gflip-memory", default="1GiB", help="(b): memory limit per worker")
    p.add_argument("--gflip-epochs", type=int, default=1, help="(b): epochs run")
    p.add_argument("--gflip-speedup-rows", type=int, default=3000, help="(c): samples")
    p.add_argument("--skip-a", action="store_true", help="skip (a) and the filter part of (c)")
    p.add_argument("--tiled", action="store_true",
                   help="(d): tiled against broadcast mode (always on with --smoke)")
    p.add_argument("--tiled-rows", type=int, default=4000, help="(d): samples")
    p.add_argument("--tiled-features", type=int, default=100, help="(d): features")
    p.add_argument("--tile-rows", type=int, default=1000, help="(d): rows per tile")
    p.add_argument("--only-tiled", action="store_true", help="run (d) alone")
    args = p.parse_args()
    if args.only_tiled:
        args.tiled, args.skip_a = True, True
    if args.smoke:
        args.rows, args.cols, args.row_chunk, args.col_chunk = 2000, 300, 500, 100
        args.relieff_rows, args.repeat = 400, 1
        args.gflip_rows, args.gflip_features, args.gflip_workers = 600, 10, 2
        args.gflip_memory, args.gflip_speedup_rows = "1GiB", 300
        args.tiled, args.tiled_rows, args.tiled_features, args.tile_rows = True, 400, 20, 100
    args.out = output_dir(args)

    import fastfs
    import fastfs.dask as fd

    info = machine_info()
    y, t = targets(args.rows, args.seed)
    X = make_array(args.rows, args.cols, args.row_chunk, args.col_chunk, args.seed)
    Xcols = make_array(args.rows, args.cols, args.rows, args.col_chunk, args.seed)
    gb = args.rows * args.cols * 4 / 1e9
    rows = []
    md = [f"# fastfs.dask: {args.rows} x {args.cols} float32 ({gb:.2f} GB, generated chunk by "
          f"chunk), load {load_average()}", ""]

    def part_a(client) -> None:
        """(a) fastfs.dask against scikit-learn in map_blocks."""
        client.run(_import_sklearn)  # not timed: the workers' first import of scikit-learn
        sk_a = Xcols.map_blocks(_sk_anova, y, chunks=((2,), Xcols.chunks[1]), dtype=np.float64)
        sk_p = Xcols.map_blocks(_sk_pearson, t, chunks=((1,), Xcols.chunks[1]),
                                dtype=np.float64)
        cases = [
            ("anova_f", "fastfs.dask, rows x features chunks",
             lambda: fd.anova_f(X, y, client=client).scores),
            ("anova_f", "fastfs.dask, feature chunks",
             lambda: fd.anova_f(Xcols, y, client=client).scores),
            ("anova_f", "scikit-learn f_classif in map_blocks",
             lambda: client.compute(sk_a).result()[0]),
            ("pearson", "fastfs.dask, rows x features chunks",
             lambda: fd.pearson(X, t, pvalues=False, client=client).scores),
            ("pearson", "fastfs.dask, feature chunks",
             lambda: fd.pearson(Xcols, t, pvalues=False, client=client).scores),
            ("pearson", "scikit-learn r_regression in map_blocks",
             lambda: client.compute(sk_p).result()[0]),
        ]
        md.extend(["## (a) one pass over the data, 2 workers x 1 thread", "",
                   "| statistic | implementation | time (s) | max rel. diff. to the first row |",
                   "|---|---|---:|---:|"])
        first: dict = {}
        for stat, name, fn in cases:
            sec, out = median_time(fn, args.repeat)
            diff = rel_diff(first[stat], out) if stat in first else 0.0
            first.setdefault(stat, out)
            rows.append({"part": "a", "statistic": stat, "implementation": name,
                         "seconds": sec, "rel_diff": diff})
            md.append(f"| {stat} | {name} | {sec:.3f} | {diff:.1e} |")
            print(md[-1], flush=True)
        # scikit-learn sums float32 squares in float32: its digits, not fastfs's, differ
        worst = max(r["rel_diff"] for r in rows)
        if worst > 1e-3:
            raise SystemExit(f"the two sides disagree: max relative difference {worst:.2e}")

    gen = np.random.default_rng(args.seed)
    Xr = gen.standard_normal((args.relieff_rows, 50))
    yr = gen.integers(0, 2, args.relieff_rows)
    Xr[:, 0] += yr
    times: dict = {}
    tasks = [] if args.skip_a else ["anova_f", "relieff"]
    if not args.skip_a:
        for w in (1, 2):
            lc, client = cluster(w, args.memory_limit)
            try:
                fd.anova_f(X, y, client=client)   # warm-up: the workers import fastfs
                times[("anova_f", w)] = median_time(
                    lambda: fd.anova_f(X, y, client=client), args.repeat)[0]
                times[("relieff", w)] = median_time(
                    lambda: fd.relieff(Xr, yr, client=client), args.repeat)[0]
                if w == 2:
                    part_a(client)
            finally:
                client.close()
                lc.close()

    if args.tiled:
        part_d(args, md, rows)
    if args.only_tiled:
        write(args, info, md, rows)
        return

    # (b) G-flip on a split state larger than one worker's memory limit
    m, n = args.gflip_rows, args.gflip_features
    Xg, yg = gflip_data(m, n, args.seed)
    state_gb = m * m * 8 / 1e9
    lc, client = cluster(args.gflip_workers, args.gflip_memory)
    try:
        client.run(_import_fastfs)
        base = client.run(_peak_rss)
        t0 = time.perf_counter()
        res = fd.gflip(Xg, yg, split_state=True, n_restarts=1, max_epochs=args.gflip_epochs,
                       initial=np.ones(n, dtype=bool), random_state=args.seed, n_jobs=1,
                       client=client)
        sec = time.perf_counter() - t0
        peaks = client.run(_peak_rss)
        limit = lc.workers[next(iter(lc.workers))].memory_manager.memory_limit
    finally:
        client.close()
        lc.close()
    per_epoch = sec / res.n_epochs
    md += ["", f"## (b) G-flip on a split distance state: {m} x {n}, {args.gflip_workers} "
           f"workers x 1 thread, memory limit {args.gflip_memory} each", "",
           f"float64 state {state_gb:.2f} GB = {state_gb * 1e9 / limit:.1f} x one worker's "
           f"limit ({limit / 2**30:.2f} GiB); load {load_average()}", "",
           "| epochs | total (s) | per epoch (s) | flips | selected |", "|---:|---:|---:|---:|---:|",
           f"| {res.n_epochs} | {sec:.1f} | {per_epoch:.1f} | {res.n_flips} | "
           f"{res.selected.size} |", "",
           "| worker | peak RSS before (GB) | peak RSS after (GB) | limit (GB) |",
           "|---|---:|---:|---:|"]
    for wk in sorted(peaks):
        md.append(f"| {wk} | {base[wk] / 1e9:.2f} | {peaks[wk] / 1e9:.2f} | {limit / 1e9:.2f} |")
    print("\n".join(md[-8 - len(peaks):]), flush=True)
    rows.append({"part": "b", "rows": m, "features": n, "workers": args.gflip_workers,
                 "memory_limit": limit, "state_bytes": m * m * 8, "seconds": sec,
                 "epochs": res.n_epochs, "per_epoch": per_epoch,
                 "peak_rss": {k: int(v) for k, v in peaks.items()}})

    # (c) G-flip on a split state, 1 against 2 workers; checked equal to one machine first
    Xs, ys = gflip_data(args.gflip_speedup_rows, n, args.seed + 1)
    kw = dict(n_restarts=1, max_epochs=2, random_state=args.seed,
              initial=np.ones(n, dtype=bool))   # from the full set: the noise goes out
    one = fastfs.gflip(Xs, ys, n_jobs=1, **kw)
    times[("gflip, one machine", 1)] = median_time(
        lambda: fastfs.gflip(Xs, ys, n_jobs=1, **kw), args.repeat)[0]
    times[("gflip, one machine", 2)] = median_time(
        lambda: fastfs.gflip(Xs, ys, n_jobs=2, **kw), args.repeat)[0]
    for w in (1, 2):
        lc, client = cluster(w, args.memory_limit)
        try:
            client.run(_import_fastfs)
            run = lambda: fd.gflip(Xs, ys, split_state=True, n_jobs=1, client=client, **kw)
            got = run()
            if not (np.array_equal(got.selected, one.selected) and got.score == one.score
                    and np.array_equal(got.history, one.history)):
                raise SystemExit("gflip on a split state differs from fastfs.gflip")
            times[("gflip, split state", w)] = median_time(run, args.repeat)[0]
        finally:
            client.close()
            lc.close()
    tasks += ["gflip, split state", "gflip, one machine"]
    md += ["", f"## (c) 1 against 2 workers (1 thread each; one machine: 1 against 2 threads); "
           f"load {load_average()}", "",
           f"G-flip: {args.gflip_speedup_rows} x {n}, 2 epochs at most, results equal to "
           "fastfs.gflip (selection, score, history) before timing.", "",
           "| task | 1 worker (s) | 2 workers (s) | speed-up |", "|---|---:|---:|---:|"]
    for task in tasks:
        one_t, two_t = times[(task, 1)], times[(task, 2)]
        rows.append({"part": "c", "task": task, "one_worker": one_t, "two_workers": two_t,
                     "speedup": one_t / two_t})
        md.append(f"| {task} | {one_t:.3f} | {two_t:.3f} | {one_t / two_t:.2f}x |")
        print(md[-1], flush=True)
    if not args.skip_a:
        one_machine = median_time(lambda: fastfs.relieff(Xr, yr, n_jobs=1), args.repeat)[0]
        md += ["", f"relieff on one machine, 1 thread, no Dask: {one_machine:.3f} s "
               f"({args.relieff_rows} x 50).", ""]
    write(args, info, md, rows)


def write(args, info, md: list, rows: list) -> None:
    finish_run(info)
    text = "\n".join(md) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dask.md").write_text(text)
    (args.out / "dask.json").write_text(json.dumps(
        {"machine": info, "args": {k: str(v) for k, v in vars(args).items()}, "rows": rows},
        indent=2, default=str))
    print()
    print(text)
    print(f"wrote {args.out / 'dask.md'}, dask.json")


if __name__ == "__main__":
    main()
