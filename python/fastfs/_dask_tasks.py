"""How fastfs.dask runs work: computing graphs on the client's cluster (or local threads), sending
values to every worker once, running one function per block as tasks, and the arrays a worker
hands to the core. Shared by the functions of fastfs.dask (``_dask_core``) and the split
distance state (``_dask_state``)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import dask
import numpy as np

import fastfs._core as _core

from ._validation import resolve_n_jobs


def _compute(objs: Sequence[Any], client: Any) -> list:
    """Compute dask collections / delayed objects, on ``client`` when given."""
    if client is None:
        return list(dask.compute(*objs))
    futures = _client_or_none(client).compute(list(objs))
    return client.gather(futures)


def _aligned(a: Any) -> Any:
    """An array as the core may read it: C-contiguous and aligned for its dtype. Arrays a
    worker receives are views into Dask's message buffers, which can start at any byte: a
    float64 at an odd address is undefined behaviour in C++ (the sanitizer build reports it),
    so such a view is copied, as check_X copies it on one machine."""
    if isinstance(a, np.ndarray):
        return np.require(a, requirements=["C", "A"])
    return a


def _block(b: np.ndarray) -> np.ndarray:
    """A chunk as the core reads it: float32 kept, anything else float64, C-contiguous and
    aligned."""
    dtype = np.float32 if b.dtype == np.float32 else np.float64
    return _aligned(np.ascontiguousarray(b, dtype=dtype))


def _client_or_none(client: Any) -> Any:
    """The client to use: the one given, else Dask's current one, else None (local threads)."""
    if client is not None:
        if not (hasattr(client, "submit") and hasattr(client, "scheduler_info")):
            raise TypeError("client: expected a dask.distributed.Client or None (Dask's "
                            f"current client), got {type(client).__name__}")
        return client
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def _on_workers(value: Any, client: Any) -> Any:
    """``value`` sent once to every worker (or a delayed constant without a cluster)."""
    if client is not None:
        return client.scatter(value, broadcast=True, hash=False)
    return dask.delayed(value, pure=True)


def _run_blocks(fn: Callable, args_per_block: list, client: Any) -> list:
    """Run fn(*args) for every block as a task and return the results in block order. A task
    whose worker dies is run again elsewhere by the scheduler (pure inputs, same answer)."""
    client = _client_or_none(client)
    task = dask.delayed(fn, pure=True)
    return _compute([task(*a) for a in args_per_block], client)


def _shared(client: Any, *values: Any) -> list:
    client = _client_or_none(client)
    return [None if v is None else _on_workers(v, client) for v in values]


def _score_subsets(values, codes, yv, spec, fn, subsets, n_jobs):
    """J of every subset of a block: fn for a Python criterion, else the core's criterion of
    ``spec`` (a pickled _core.CriterionSpec)."""
    if fn is not None:
        return np.array([fn(np.asarray(s, dtype=np.intp)) for s in subsets], dtype=np.float64)
    return _core.criterion_evaluate_many(_aligned(values), _aligned(codes), _aligned(yv), spec,
                                         None, [list(s) for s in subsets],
                                         resolve_n_jobs(n_jobs))
