"""Helpers shared by the benchmark and experiment scripts: what machine and which build was
timed, the load on the (shared) machine, timing, and writing a report as markdown + JSON + PNG."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import fastfs


RESULTS = Path(__file__).resolve().parent / "results"

# Why every comparison script sets OPENBLAS_THREAD_TIMEOUT=4 before it imports NumPy: timings
# alternate one fastfs call and one baseline call, and with 2 threads the baseline's OpenBLAS
# worker keeps spinning for about 0.1 s after each call (the default thread timeout), on the
# core fastfs's second thread then needs. 2-thread margins on COIL-20 measured 20.7 ms that way
# and 12.4 ms with the workers put to sleep at once, the baseline's own time unchanged (43.6 and
# 46.3 ms). A value given in the environment wins; bench/run.py sets it for what it starts.
BLAS_WORKERS_NOTE = "OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS workers sleep at once after a call"


def steady_allocator(nbytes: int = 30 << 20) -> None:
    """Allocate, touch and free one block of ``nbytes``: glibc's malloc then raises its mmap
    threshold to that size (at most 32 MiB), so later arrays up to it come from the heap and
    are reused instead of being mapped, and page-faulted, afresh at every call. Without it a
    benchmark's figures depended on what ran before: NumPy's Gram margins on allaml (72 x 7129,
    two 4 MB temporaries a call) took 18 ms when the family ran first and 3.9 ms after one
    that had freed a larger array. Called once on import, for every script that uses this
    module: baselines and fastfs then run with the allocator in the same steady state."""
    block = np.ones(nbytes // 8)
    del block


steady_allocator()


def int_list(text: str) -> list[int]:
    """A comma-separated list of ints (the --threads argument)."""
    return [int(v) for v in text.split(",")]


def add_run_arguments(p: argparse.ArgumentParser, *, smoke_help: str = "tiny sizes for CI",
                      threads: bool = True, seed: bool = True) -> None:
    """The arguments the benchmarks share: --threads, --seed, --out, --smoke."""
    if threads:
        p.add_argument("--threads", type=int_list, default=[1, 2])
    if seed:
        p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None,
                   help=f"output directory (default {RESULTS}, or its smoke/ with --smoke)")
    p.add_argument("--smoke", action="store_true", help=smoke_help)


def output_dir(args: Any) -> Path:
    """--out, or bench/results (its smoke/ subfolder for a smoke run)."""
    if args.out is not None:
        return args.out
    return RESULTS / "smoke" if args.smoke else RESULTS


def pyplot():
    """matplotlib.pyplot on the file-only backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(wall seconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def rel_diff(ref: Any, got: Any) -> float:
    """max |ref - got| / max |ref| over the entries that are not NaN (the absolute difference
    when ref is all zero); inf when the shapes or the places of NaN differ."""
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if ref.shape != got.shape or not np.array_equal(np.isnan(ref), np.isnan(got)):
        return float("inf")
    ok = ~np.isnan(ref)
    top = float(np.abs(ref[ok]).max()) if ok.any() else 0.0
    diff = float(np.abs(ref[ok] - got[ok]).max()) if ok.any() else 0.0
    return diff / top if top > 0 else diff


def fmt_s(t: float) -> str:
    return f"{t:.3g} s" if t >= 1 else f"{t * 1e3:.3g} ms"


def extension_stamp() -> str:
    """The compiled module's file and build time: others rebuild it while benchmarks run."""
    from fastfs import _core

    built = datetime.datetime.fromtimestamp(os.path.getmtime(_core.__file__))
    return f"{Path(_core.__file__).name}, built {built.isoformat(timespec='seconds')}"


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": cpu,
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "fastfs": getattr(fastfs, "__version__", "?"),
        "extension": extension_stamp(),
        "platform": platform.platform(),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "load_before": load_average(),
    }


def finish_run(info: dict) -> None:
    """Record the load after the run, and say loudly if the extension was rebuilt meanwhile
    (the loaded module is then the old one, but the file on disk changed)."""
    info["load_after"] = load_average()
    if extension_stamp() != info["extension"]:
        info["extension"] += f"; WARNING: rebuilt during the run ({extension_stamp()})"
        print(f"warning: fastfs extension rebuilt during the run: {info['extension']}")


def write_md_json(out: Path, stem: str, md: str, payload: dict) -> None:
    """Write <stem>.md (the markdown) and <stem>.json (``payload``) into ``out``, creating it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.md").write_text(md)
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=2, default=str))


def write_report(out: Path, stem: str, md: str, info: dict, rows: list, args: Any,
                 plot_to: Callable[[Path], None], png_name: str) -> None:
    """Write <stem>.md, <stem>.json and the plot into ``out``, and print the markdown."""
    write_md_json(out, stem, md, {"machine": info,
                                  "args": {k: str(v) for k, v in vars(args).items()},
                                  "rows": rows})
    plot_to(out / png_name)
    print()
    print(md)
    print(f"wrote {out / (stem + '.md')}, {stem}.json, {png_name}")
