"""Callback / verbose plumbing shared by every iterative algorithm, and Ctrl-C for work that
sits in one long LAPACK call."""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
from typing import Any, Callable, TypeVar

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
            shown = {} if score != score else {"score": f"{score:.6g}"}  # NaN: no score
            if restart:
                shown["restart"] = restart
            if shown:
                self._bar.set_postfix(**shown)
        elif self.verbose:
            # the restart only for the methods that restart, the score only where there is one
            where = f"restart {restart} step {step}" if restart else f"step {step}"
            what = "" if score != score else f": score {score:.6g}"
            print(f"[{self.name}] {where}{what}", file=sys.stderr)
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


F = TypeVar("F", bound=Callable[..., Any])


def interruptible(func: F) -> F:
    """Makes Ctrl-C stop ``func`` at once even inside one long NumPy / LAPACK call.

    Python runs its signal handlers only between bytecodes, so KeyboardInterrupt waits until
    an eigendecomposition of a few thousand features (seconds) returns. Called on the main
    thread, the wrapped function runs on a worker thread while the main thread waits in short
    slices, where the interrupt is raised right away; the worker finishes the call in flight in
    the background and stops there; its result is dropped. On other threads (which get no signals) it runs
    directly. Exceptions and warnings reach the caller as usual.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return func(*args, **kwargs)
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["value"] = func(*args, **kwargs)
            except BaseException as error:  # handed to the caller below
                outcome["error"] = error

        worker = threading.Thread(target=work, name=f"fastfs-{func.__name__}", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.05)
        except BaseException:
            # Stop the worker at its next bytecode (after the LAPACK call in flight) rather
            # than let it run the rest of the computation for nothing.
            if worker.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(worker.ident), ctypes.py_object(KeyboardInterrupt))
            raise
        if "error" in outcome:
            error = outcome.pop("error")
            raise error
        return outcome["value"]

    return wrapper  # type: ignore[return-value]
