// What OMP's two column states (state/ortho_basis.hpp, state/float32_columns.hpp) need of every
// column before the first round: ||X_j||^2, <X_j, y> and max_i |X_ij|, from one read of X_j.
// Whichever state reads X first fills them and hands them to the other.
#pragma once
#include <cmath>

#include <Eigen/Core>

#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES

namespace fastfs {

namespace detail {
// ||x||^2, <x, y> and max |x_i| in one read of x.
template <class T>
FASTFS_SIMD_CLONES void sq_dot_top(const T* __restrict x, const T* __restrict y, Index m,
                                   T* sq, T* dot, T* top) {
    T s = 0, d = 0, t = 0;
#pragma omp simd reduction(+ : s, d) reduction(max : t)
    for (Index i = 0; i < m; ++i) {
        s += x[i] * x[i];
        d += x[i] * y[i];
        const T a = std::abs(x[i]);
        t = a > t ? a : t;
    }
    *sq = s;
    *dot = d;
    *top = t;
}
}  // namespace detail

struct ColumnMoments {
    Eigen::VectorXd sq, xty, top;  // ||X_j||^2, <X_j, y>, max_i |X_ij|

    void resize(Index n) {
        sq.resize(n);
        xty.resize(n);
        top.resize(n);
    }
    // Column j of the column-major X (m rows) against y.
    void compute(const double* xj, const double* y, Index m, Index j) {
        detail::sq_dot_top(xj, y, m, &sq[j], &xty[j], &top[j]);
    }
};

}  // namespace fastfs
