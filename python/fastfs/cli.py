"""The ``fastfs`` console command. ``fastfs demo`` runs G-flip on the seeds' synthetic problems
and prints what it chose; ``fastfs info`` prints the build configuration."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from . import _core, datasets, show_config
from .margin import UTILITIES, gflip


def _demo(args: argparse.Namespace) -> int:
    problems = [
        ("xor (Navot 3.7.1)", "features 0, 1, 2",
         datasets.make_xor(args.n_samples, 10, random_state=args.seed)),
        ("Ng 4.2: [x1 + 0.2 > 0], 30% noise", "feature 0",
         datasets.make_ng(args.n_samples, 20, noise=0.3, random_state=args.seed)),
    ]
    print(f"fastfs {_core.__version__} G-flip demo: {args.n_samples} samples, seed {args.seed}, "
          f"threads {args.n_jobs or _core.default_threads()}")
    header = f"{'problem':<36} {'utility':<9} {'relevant':<17} {'selected':<24} " \
             f"{'score':>10} {'epochs':>6} {'time [ms]':>10}"
    print(header)
    print("-" * len(header))
    for name, relevant, (X, y) in problems:
        for utility in UTILITIES:
            beta = 1.0
            start = time.perf_counter()
            res = gflip(X, y, utility=utility, beta=beta, random_state=args.seed,
                        n_jobs=args.n_jobs)
            elapsed = (time.perf_counter() - start) * 1e3
            chosen = ", ".join(str(i) for i in sorted(res.selected)) or "(none)"
            print(f"{name:<36} {utility:<9} {relevant:<17} {chosen:<24} {res.score:>10.4g} "
                  f"{res.n_epochs:>6} {elapsed:>10.1f}")
    return 0


def _info(_: argparse.Namespace) -> int:
    show_config()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fastfs", description="fast feature selection")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run G-flip on the seeds' synthetic problems")
    demo.add_argument("--n-samples", type=int, default=1000)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--n-jobs", type=int, default=None)
    demo.set_defaults(run=_demo)
    info = sub.add_parser("info", help="print the build configuration")
    info.set_defaults(run=_info)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:  # output piped into `head` and closed: not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
