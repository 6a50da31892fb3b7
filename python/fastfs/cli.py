"""The ``fastfs`` console command. ``fastfs demo`` runs G-flip on the seeds' synthetic problems
and explains what it chose; ``fastfs select DATA --target COLUMN --method NAME`` selects
features of a CSV or Parquet file; ``fastfs info`` prints the build configuration; ``fastfs
--version`` prints the version. ``python -m fastfs`` is the same command. Bad option values
and files that cannot be read or written are reported by argparse (a one-line error, exit
status 2), never as a traceback."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
import warnings
from typing import Callable, Sequence

from . import _core, _select_cli, datasets, show_config
from .margin import UTILITIES, gflip

_SEED_MAX = 2**32 - 1

_INTRO = """\
G-flip (Gilad-Bachrach, Navot and Tishby) looks for the subset of features under which the
samples sit far from the other classes and close to their own: it flips one feature at a time
in or out of the subset while that raises the score e, and stops when no single flip does.
It runs here on two synthetic problems whose relevant features are known."""

_PROBLEMS_TEXT = {
    "xor": """\
xor (Navot's thesis, section 3.7.1): {m} samples, 10 features drawn uniformly from [-1, 1];
the label is the xor of the signs of features 0, 1 and 2. Each of them alone says nothing
about the label, only the three together do; features 3-9 are noise.""",
    "ng": """\
Ng's problem (Ng's MSc thesis, 1998, section 4.2): {m} samples, 20 standard normal features;
the label is [x0 + 0.2 > 0] with 30% of the labels flipped at random.
Only feature 0 is relevant.""",
}

_SCORE_TEXT = """\
score = e(F), a sum over the samples of u(theta), where theta (the hypothesis margin) is half
the distance to the nearest sample of another class minus half the distance to the nearest
other sample of the same class, measured on the selected features only. The utilities differ:
  linear    u = theta: the summed margins, in the units of the data (here, feature values);
  sigmoid   u = 1 / (1 + exp(-beta theta)), beta = 1: between 0 and the number of samples;
  zero_one  u = 1 if theta > 0: the number of samples a leave-one-out 1-nearest-neighbour
            classifier on the selected features gets right.
Scores are comparable only within one utility and one problem.
found: whether the selection holds every relevant feature, and how many noise features came
with them.
zero_one is the fragile one: it changes only when a flip changes which samples are classified
right, so it is flat almost everywhere. On xor no relevant feature alone beats chance, and a
noise feature that happens to get a few more samples right is a local maximum that a search
from the empty set cannot leave; the start from the full set, where the relevant features are
already in, avoids it. On Ng's problem every utility keeps feature 0 but usually some noise
features too: with 30% of the labels wrong, a noise feature reshuffles the nearest neighbours
and on this sample that can raise e by chance (the subset is judged on the same samples it
was chosen on)."""


def _verdict(chosen: set[int], relevant: set[int]) -> str:
    missed = sorted(relevant - chosen)
    noise = len(chosen - relevant)
    if not missed:
        return "all relevant" + (f" + {noise} noise" if noise else "")
    return "missed " + ", ".join(str(i) for i in missed) + (f" (+{noise} noise)" if noise else "")


def _wrap(text: str) -> str:
    return "\n".join(textwrap.fill(p, 94, break_long_words=False) if not p.startswith("  ")
                     else p for p in text.split("\n"))


def _demo(args: argparse.Namespace) -> int:
    m = args.n_samples
    problems = [
        ("xor", "xor (Navot 3.7.1)", {0, 1, 2},
         datasets.make_xor(m, 10, random_state=args.seed)),
        ("ng", "Ng 4.2, 30% noise", {0},
         datasets.make_ng(m, 20, noise=0.3, random_state=args.seed)),
    ]
    print(f"fastfs {_core.__version__} G-flip demo: {m} samples, seed {args.seed}, "
          f"threads {args.n_jobs or _core.default_threads()}")
    print()
    print(_INTRO)
    for key, _, _, _ in problems:
        print()
        print(_PROBLEMS_TEXT[key].format(m=m))
    print()
    header = f"{'problem':<20} {'utility':<9} {'relevant':<9} {'selected':<26} " \
             f"{'found':<24} {'score':>10} {'epochs':>6} {'time [ms]':>10}"
    print(header)
    print("-" * len(header))
    for _, name, relevant, (X, y) in problems:
        for utility in UTILITIES:
            start = time.perf_counter()
            res = gflip(X, y, utility=utility, beta=1.0, random_state=args.seed,
                        n_jobs=args.n_jobs)
            elapsed = (time.perf_counter() - start) * 1e3
            chosen = {int(i) for i in res.selected}
            shown = ", ".join(str(i) for i in sorted(chosen)) or "(none)"
            rel = ", ".join(str(i) for i in sorted(relevant))
            print(f"{name:<20} {utility:<9} {rel:<9} {shown:<26} "
                  f"{_verdict(chosen, relevant):<24} {res.score:>10.4g} {res.n_epochs:>6} "
                  f"{elapsed:>10.1f}")
    print()
    print(_SCORE_TEXT)
    print()
    print("selected: the features G-flip kept (the best of its default restarts, one from the "
          "empty\nset and one from the full set); epochs: passes over the features of the "
          "winning restart.")
    return 0


def _info(_: argparse.Namespace) -> int:
    show_config()
    return 0


def _int_in(lo: int | None, hi: int | None, what: str,
            nonzero: bool = False) -> Callable[[str], int]:
    """An argparse type: an int in [lo, hi] (None: unbounded)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi) or \
                (nonzero and value == 0):
            raise argparse.ArgumentTypeError(f"{what}, got {value}")
        return value
    parse.__name__ = "int"
    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fastfs", description="fast feature selection")
    parser.add_argument("--version", action="version", version=f"fastfs {_core.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run G-flip on the seeds' synthetic problems and "
                                       "explain the result")
    demo.add_argument("--n-samples", type=_int_in(20, 20000, "must be in [20, 20000]"),
                      default=1000, help="samples per problem (default 1000)")
    demo.add_argument("--seed", type=_int_in(0, _SEED_MAX, f"must be in [0, {_SEED_MAX}]"),
                      default=0, help="seed of the data and of G-flip (default 0)")
    demo.add_argument("--n-jobs", type=_int_in(None, None, "must not be 0", nonzero=True),
                      default=None, help="threads (scikit-learn's rules; default: all)")
    demo.set_defaults(run=_demo, sub=demo)
    _select_cli.add_parser(sub)
    info = sub.add_parser("info", help="print the build configuration")
    info.set_defaults(run=_info, sub=info)
    return parser


_DEFAULT_SHOWWARNING = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line on stderr: the library's source line means nothing at a shell."""
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            if warnings.showwarning is _DEFAULT_SHOWWARNING:  # not under a test's recorder
                warnings.showwarning = _show_warning
            return int(args.run(args))
    except BrokenPipeError:  # output piped into `head` and closed: not an error
        sys.stderr.close()
        return 0
    except (ValueError, TypeError, MemoryError, KeyError) as exc:  # a value refused
        args.sub.error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except OSError as exc:  # a file that cannot be read or written (permissions, disk full)
        where = f": {exc.filename}" if exc.filename else ""
        args.sub.error(f"{exc.strerror or str(exc) or type(exc).__name__}{where}")
        return 2  # pragma: no cover (error() exits)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
