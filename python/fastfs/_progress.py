"""Callback / verbose plumbing shared by every iterative algorithm."""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ._results import StepState
from ._validation import check_bool


class Progress:
    """Adapts ``callback`` and ``verbose`` to the hook the C++ loop calls between steps.

    The hook gets (restart, step, score, selection) and returns True to stop. With
    ``verbose=True`` a tqdm bar is shown when tqdm is importable, else one line per step on
    stderr.
    """

    def __init__(self, name: str, callback: Callable[[StepState], Any] | None, verbose: bool,
                 total: int | None = None) -> None:
        if callback is not None and not callable(callback):
            raise TypeError("callback: expected a callable or None")
        self.name = name
        self.callback = callback
        self.verbose = check_bool(verbose, "verbose")
        self._bar = None
        if self.verbose:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                self._bar = None
            else:
                self._bar = tqdm(total=total, desc=name, unit="step", leave=False)

    @property
    def active(self) -> bool:
        return self.callback is not None or self.verbose

    def hook(self, restart: int, step: int, score: float, selection: np.ndarray) -> bool:
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(score=f"{score:.6g}", restart=restart)
        elif self.verbose:
            print(f"[{self.name}] restart {restart} step {step}: score {score:.6g}",
                  file=sys.stderr)
        if self.callback is None:
            return False
        selection.setflags(write=False)
        return bool(self.callback(StepState(step, float(score), selection, restart)))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_pass(name: str, callback: Callable[[StepState], Any] | None, verbose: bool,
             run: Callable[[Any], Any]) -> Any:
    """Runs a one-pass computation (Relief, ReliefF, margins, SKS) as ``run(hook)``, with the
    callback / verbose hook, or None when neither is asked for."""
    progress = Progress(name, callback, verbose)
    try:
        return run(progress.hook if progress.active else None)
    finally:
        progress.close()
