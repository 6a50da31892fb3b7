# Type stub of the private compiled module fastfs._core (python/bindings/). X must be a
# C-contiguous float32 or float64 array and codes an int64 array of class codes 0..C-1; the
# public wrappers in fastfs.margin validate and convert before calling these.
from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt

__version__: str
build_info: dict[str, str]

def has_openmp() -> bool: ...
def default_threads() -> int: ...
def available_cores() -> int: ...
def margins(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64],
            weights: npt.NDArray[np.floating], n_threads: int) -> npt.NDArray[np.float64]: ...
def margin_score(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64],
                 weights: npt.NDArray[np.floating], utility: str, beta: float,
                 n_threads: int) -> float: ...
def gflip(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], utility: str, beta: float,
          max_epochs: int, n_restarts: int, initial: npt.NDArray[np.uint8], seed: int,
          n_threads: int,
          callback: Optional[Callable[[int, int, float, npt.NDArray[np.bool_]], bool]]
          ) -> dict[str, Any]: ...
