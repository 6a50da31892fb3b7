# Type stub of the private compiled module fastfs._core (python/bindings/). X must be a
# C-contiguous float32 or float64 array and codes an int64 array of class codes 0..C-1; the
# public wrappers (fastfs.margin, fastfs.filters) validate and convert before calling these.
from typing import Any, Callable, Optional, Sequence

import numpy as np
import numpy.typing as npt

__version__: str
# The one progress hook of every stepwise function: hook(restart, step, score, selection) ->
# True to stop, called between steps; selection is the running values (float64), the subset
# (int64 indices) or the support (bool mask), whichever the function reports.
ProgressHook = Callable[[int, int, float, Optional[npt.NDArray[Any]]], bool]
build_info: dict[str, str]

def has_openmp() -> bool: ...
def default_threads() -> int: ...
def available_cores() -> int: ...
def cpu_supports_avx2() -> bool: ...
def simd_dispatch() -> str: ...
def margins(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64],
            weights: npt.NDArray[np.floating], n_threads: int,
            callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...
def margin_score(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64],
                 weights: npt.NDArray[np.floating], utility: str, beta: float,
                 n_threads: int, callback: Optional[ProgressHook] = None) -> tuple[float, bool]: ...
def gflip(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], utility: str, beta: float,
          max_epochs: int, n_restarts: int, initial: npt.NDArray[np.uint8], seed: int,
          n_threads: int,
          callback: Optional[ProgressHook]
          ) -> dict[str, Any]: ...

# filters (fastfs/filters/filters.hpp): one-pass sufficient statistics.
def class_moments(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], n_classes: int,
                  n_threads: int) -> dict[str, npt.NDArray[Any]]: ...
def cross_moments(X: npt.NDArray[np.floating], yc: npt.NDArray[np.float64],
                  n_threads: int) -> dict[str, npt.NDArray[np.float64]]: ...
def rank_sums(X: npt.NDArray[np.floating], positive: npt.NDArray[np.int64],
              n_threads: int) -> dict[str, npt.NDArray[np.float64]]: ...
def table_stats(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], n_classes: int,
                binning: str, bins: int, alpha: float,
                n_threads: int) -> dict[str, npt.NDArray[Any]]: ...
def table_stats_csc(n_rows: int, indptr: npt.NDArray[np.integer],
                    indices: npt.NDArray[np.integer], data: npt.NDArray[np.floating],
                    codes: npt.NDArray[np.int64], n_classes: int, alpha: float,
                    n_threads: int) -> dict[str, npt.NDArray[Any]]: ...
def sparse_moments(n_rows: int, n_cols: int, csc: bool, indptr: npt.NDArray[np.integer],
                   indices: npt.NDArray[np.integer], data: npt.NDArray[np.floating],
                   codes: npt.NDArray[np.int64], n_classes: int, w: npt.NDArray[np.float64],
                   n_threads: int) -> dict[str, npt.NDArray[Any]]: ...
def simba(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], utility: str, beta: float,
          n_iter: int, n_restarts: int, sample_order: npt.NDArray[np.int64], seed: int,
          n_threads: int,
          callback: Optional[ProgressHook],
          step_scale: float = ...) -> dict[str, Any]: ...
def relief(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], n_iter: int, seed: int,
           n_threads: int,
           callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...
def relieff(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], n_neighbors: int,
            n_threads: int,
            callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...
def relief_radius(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], rule: str,
                  n_threads: int,
                  callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...
def relief_stir(X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], method: str,
                n_neighbors: int, n_threads: int,
                callback: Optional[ProgressHook] = None) -> dict[str, Any]: ...
# sparse X as CSR arrays (int64 indptr / indices, float64 data), never densified
def relief_sparse(rows: int, cols: int, indptr: npt.NDArray[np.int64],
                  indices: npt.NDArray[np.int64], data: npt.NDArray[np.float64], rule: str,
                  k: int, discrete: Sequence[int], codes: Sequence[int], y: Sequence[float],
                  radius: float, zero_constant: bool, n_threads: int,
                  callback: Optional[ProgressHook] = None,
                  distance_weights: Sequence[float] = ...) -> tuple[npt.NDArray[np.float64], bool]: ...
def relief_sparse_kira(rows: int, cols: int, indptr: npt.NDArray[np.int64],
                       indices: npt.NDArray[np.int64], data: npt.NDArray[np.float64],
                       codes: Sequence[int], visit: Sequence[int], n_threads: int,
                       callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...

# search (fastfs/search/*.hpp, fastfs/criteria/*.hpp): one strategy on the shared driver.
def search(strategy: str, X: npt.NDArray[np.float64], codes: Optional[npt.NDArray[np.int64]],
           y: Optional[npt.NDArray[np.float64]], criterion: str, params: dict[str, Any],
           fn: Optional[Callable[[npt.NDArray[np.int64]], float]], k: int, best: bool,
           auto_stop: bool, tol: float, l: int, r: int, width: int, max_subsets: float, assume_monotone: bool, n_threads: int,
           callback: Optional[ProgressHook]
           ) -> dict[str, Any]: ...
def best_first(X: npt.NDArray[np.float64], codes: Optional[npt.NDArray[np.int64]],
               y: Optional[npt.NDArray[np.float64]], criterion: str, params: dict[str, Any],
               fn: Optional[Callable[[npt.NDArray[np.int64]], float]], max_size: int,
               patience: int, max_evaluations: float, removals: bool, n_threads: int,
               callback: Optional[ProgressHook]
               ) -> dict[str, Any]: ...
# schedule: "geometric" (T0 cooling**t), "linear" (T0 (1 - t / n_iter)) or "table"; relative:
# T0 multiplies the automatic start temperature; size 0: free size.
def annealing(X: npt.NDArray[np.float64], codes: Optional[npt.NDArray[np.int64]],
              y: Optional[npt.NDArray[np.float64]], criterion: str, params: dict[str, Any],
              fn: Optional[Callable[[npt.NDArray[np.int64]], float]], size: int, n_iter: int,
              schedule: str, T0: float, cooling: float, table: list[float], relative: bool,
              n_probes: int, seed: int, start: list[int], n_threads: int,
              callback: Optional[ProgressHook]
              ) -> dict[str, Any]: ...
def rank_features(X: npt.NDArray[np.float64], codes: Optional[npt.NDArray[np.int64]],
                  y: Optional[npt.NDArray[np.float64]], criterion: str, params: dict[str, Any],
                  fn: Optional[Callable[[npt.NDArray[np.int64]], float]], k: int,
                  n_threads: int) -> dict[str, Any]: ...
def criterion_evaluate(X: npt.NDArray[np.float64], codes: Optional[npt.NDArray[np.int64]],
                       y: Optional[npt.NDArray[np.float64]], criterion: str,
                       params: dict[str, Any],
                       fn: Optional[Callable[[npt.NDArray[np.int64]], float]],
                       subset: list[int], n_threads: int) -> float: ...
# regression (fastfs/neighbours/knn_query.hpp, fastfs/weights/rgs.hpp): y is a float64 array; beta <= 0 asks
# for the default of Navot's thesis, ch. 4.
def knn_regression(X: npt.NDArray[np.floating], y: npt.NDArray[np.float64],
                   w: npt.NDArray[np.float64], n_neighbors: int, beta: float,
                   n_threads: int) -> dict[str, Any]: ...
def sks_scores(X: npt.NDArray[np.floating], y: npt.NDArray[np.float64], n_neighbors: int,
               beta: float, n_threads: int,
               callback: Optional[ProgressHook] = None) -> tuple[npt.NDArray[np.float64], bool]: ...
def rgs(X: npt.NDArray[np.floating], y: npt.NDArray[np.float64], n_neighbors: int, beta: float,
        n_steps: int, eta: npt.NDArray[np.float64], n_restarts: int,
        sample_order: npt.NDArray[np.int64], seed: int, n_threads: int,
        callback: Optional[ProgressHook],
        score: bool = ...) -> dict[str, Any]: ...
def rgs_gradient(X: npt.NDArray[np.floating], y: npt.NDArray[np.float64],
                 w: npt.NDArray[np.float64], sample: int, n_neighbors: int,
                 beta: float) -> tuple[npt.NDArray[np.float64], float, npt.NDArray[np.int64]]: ...
def knn_subset_scores(X: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
                      subset: list[int], n_neighbors: int, beta: float,
                      n_threads: int) -> tuple[float, npt.NDArray[np.float64]]: ...
# linear (fastfs/linear/omp.hpp, fastfs/linear/lasso.hpp): X Fortran-ordered float64, y / alphas float64.
def omp(X: npt.NDArray[np.float64], y: npt.NDArray[np.float64], n_features: int, method: str,
        criterion: str, tol: float, n_threads: int,
        callback: Optional[ProgressHook] = None
        ) -> dict[str, Any]: ...
def backward_least_squares(X: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
                           n_features: int, tol: float, n_threads: int,
                           callback: Optional[Callable[[int, int, float, npt.NDArray[np.int64]],
                                                       bool]] = None) -> dict[str, Any]: ...
def lasso_path_data(X: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
                    alphas: npt.NDArray[np.float64], tol: float, max_iter: int,
                    n_threads: int) -> dict[str, Any]: ...
def lasso_path_gram(G: npt.NDArray[np.float64], Xy: npt.NDArray[np.float64], yy: float,
                    n_samples: int, alphas: npt.NDArray[np.float64], tol: float,
                    max_iter: int) -> dict[str, Any]: ...
# Test hooks (knn_query_trace, ortho_basis_trace), not part of any API.
_testing: Any

# Array conversions (register_arrays.cpp)
def _fortran_copy(a: npt.NDArray[np.floating[Any]], to_float64: bool
                  ) -> tuple[npt.NDArray[np.floating[Any]], bool]: ...

# Generated features of binarised images (register_generated.cpp)
def generated_pack(images: npt.NDArray[np.uint8], n_threads: int) -> npt.NDArray[np.uint64]: ...
def generated_evaluate(bits: npt.NDArray[np.uint64], n_images: int, height: int, width: int,
                       inputs: npt.NDArray[np.int32], negated: npt.NDArray[np.uint8],
                       n_inputs: npt.NDArray[np.int32], shift: npt.NDArray[np.int32],
                       packed: bool, n_threads: int
                       ) -> npt.NDArray[np.uint8] | npt.NDArray[np.uint64]: ...
def generated_draw(u: npt.NDArray[np.float64], height: int, width: int, seed: int,
                   n_threads: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8],
                                            npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...

# Batched sparse coding (register_dictionary.cpp)
def batch_omp_gram(G: npt.NDArray[np.float64], XY: npt.NDArray[np.float64], n_nonzero: int,
                   n_threads: int) -> npt.NDArray[np.float64]: ...

# Linear learners (fastfs/linear/logistic.hpp, register_learners.cpp)
def logistic_fit(X: npt.NDArray[np.float64], codes: npt.NDArray[np.int64], n_classes: int,
                 C: float, tol: float, max_iter: int,
                 theta0: Optional[npt.NDArray[np.float64]]) -> dict[str, Any]: ...
def logistic_l1_path(X: npt.NDArray[np.float64], codes: npt.NDArray[np.int64],
                     Cs: list[float], tol: float, max_iter: int) -> dict[str, Any]: ...
def ridge_fit(X: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
              alpha: float) -> dict[str, Any]: ...

# fastfs.dask: one row block of the m x m distance state (rows r0..r1-1 in class order, every
# column), as a worker holds it when the state is split across a cluster.
class DistanceRowBlock:
    def __init__(self, X: npt.NDArray[np.floating], codes: npt.NDArray[np.int64], r0: int,
                 r1: int, n_threads: int) -> None: ...
    first_row: int
    n_rows: int
    def assign(self, subset: list[int]) -> None: ...
    def add_feature(self, feature: int, sign: float) -> None: ...
    def margins(self, features: list[int], signs: list[float]) -> npt.NDArray[np.float64]: ...
    def margins_of_subset(self, subset: list[int]) -> npt.NDArray[np.float64]: ...
    def knn_correct(self, features: list[int], signs: list[float],
                    n_neighbors: int) -> npt.NDArray[np.int64]: ...
    def knn_correct_of_subset(self, subset: list[int], n_neighbors: int) -> int: ...
def utility_sum(theta: npt.NDArray[np.float64], utility: str, beta: float) -> float: ...
def gflip_orders(seed: int, number: int, n_features: int,
                 n_epochs: int) -> npt.NDArray[np.int64]: ...
