"""Process-wide settings (``fastfs.config``)."""

from __future__ import annotations

import math
import numbers
import os

from . import _core


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 1024**3


class Config:
    """Settings read by every fastfs function.

    Attributes
    ----------
    max_memory : int
        Largest work allocation (in bytes) an algorithm may make: an m x m matrix, the d x d
        matrices of every class, a Gram matrix, a visiting order of ``n_iter`` samples. Above
        it, the function raises ``MemoryError`` before allocating anything. Default: half of
        physical memory. Setting it to anything but a number >= 0 (``math.inf`` switches the
        guard off) raises ``ValueError`` or ``TypeError``. Optional matrices follow it instead
        of raising: the Relief family keeps its m x m pair distances only while they fit
        64 MiB and ``max_memory``, and otherwise computes each sample's distances afresh (the
        same scores, more arithmetic).
    kept_memory : int
        Bytes of work buffers (each of 1 MiB or more: scaled copies of X, pair matrices) that a
        finished call leaves for the next call of the same shape, which then skips the
        operating system's zeroing of fresh pages (about a tenth of a ReliefF call at
        1000 x 1000). Default 64 MiB; 0 keeps none and frees what is kept. Must be an integer
        >= 0.
    """

    def __init__(self) -> None:
        self.max_memory = _physical_memory() // 2
        self.kept_memory = _core.kept_memory_default

    @property
    def max_memory(self) -> int | float:
        return self._max_memory

    @max_memory.setter
    def max_memory(self, value: int | float) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"fastfs.config.max_memory: expected a number of bytes, got "
                            f"{type(value).__name__}")
        if math.isnan(value) or value < 0:
            raise ValueError(f"fastfs.config.max_memory: must be a number of bytes >= 0 "
                             f"(math.inf for no limit), got {value}")
        self._max_memory = value if isinstance(value, float) else int(value)
        _core.set_pair_cache_limit(float(min(value, _core.pair_cache_default)))

    @property
    def kept_memory(self) -> int:
        return self._kept_memory

    @kept_memory.setter
    def kept_memory(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"fastfs.config.kept_memory: expected an integer number of bytes, "
                            f"got {type(value).__name__}")
        if value < 0:
            raise ValueError(f"fastfs.config.kept_memory: must be >= 0 (0 keeps no buffer), "
                             f"got {value}")
        _core.set_kept_memory(min(int(value), 2**63 - 1))
        self._kept_memory = int(value)

    def __repr__(self) -> str:
        return f"fastfs.config(max_memory={self.max_memory}, kept_memory={self.kept_memory})"


config = Config()
