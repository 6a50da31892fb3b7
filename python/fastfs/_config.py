"""Process-wide settings (``fastfs.config``)."""

from __future__ import annotations

import os


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
        Largest m x m work matrix (in bytes) an algorithm may allocate. Above it, the function
        raises ``MemoryError`` before allocating anything. Default: half of physical memory.
    """

    def __init__(self) -> None:
        self.max_memory: int = _physical_memory() // 2

    def __repr__(self) -> str:
        return f"fastfs.config(max_memory={self.max_memory})"


config = Config()
