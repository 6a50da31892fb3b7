// What OMP's two column states (state/ortho_basis.hpp, state/float32_columns.hpp) need of every
// column before the first round: ||X_j||^2, <X_j, y> and max_i |X_ij|, from one read of X_j.
// Whichever state reads X first fills them and hands them to the other. X may be column-major
// (compute, a column at a time) or row-major (compute_rows, a block of columns at a time).
#pragma once
#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES

namespace fastfs {

namespace detail {
// The moments are sums in a fixed order, so that a column-major and a row-major X give the same
// bits: element i goes to lane i % kMomentLanes in sample order, and the lanes are added in one
// tree (moment_lanes_sum). The lanes are independent, so a compiler can keep them in vector
// registers without reordering a sum.
constexpr int kMomentLanes = 16;

template <class T>
inline T moment_lanes_sum(const T* s) {
    T h[kMomentLanes / 2];
    for (int l = 0; l < kMomentLanes / 2; ++l) h[l] = s[l] + s[l + kMomentLanes / 2];
    for (int w = kMomentLanes / 4; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) h[l] = h[l] + h[l + w];
    return h[0];
}

// ||x||^2, <x, y> and max |x_i| in one read of x (a NaN in x reaches the sums, not the max).
template <class T>
FASTFS_SIMD_CLONES void sq_dot_top(const T* __restrict x, const T* __restrict y, Index m,
                                   T* sq, T* dot, T* top) {
    constexpr int L = kMomentLanes;
    T s[L] = {}, d[L] = {}, t[L] = {};
    Index i = 0;
    for (; i + L <= m; i += L) {
#pragma omp simd
        for (int l = 0; l < L; ++l) {
            const T a = x[i + l];
            s[l] += a * a;
            d[l] += a * y[i + l];
            const T b = std::abs(a);
            t[l] = b > t[l] ? b : t[l];
        }
    }
    for (int l = 0; l < L && i < m; ++i, ++l) {
        const T a = x[i];
        s[l] += a * a;
        d[l] += a * y[i];
        const T b = std::abs(a);
        t[l] = b > t[l] ? b : t[l];
    }
    *sq = moment_lanes_sum(s);
    *dot = moment_lanes_sum(d);
    T mx = 0;
    for (int l = 0; l < L; ++l) mx = t[l] > mx ? t[l] : mx;
    *top = mx;
}
// <x, y> summed in the lanes' order: the same bits wherever x is stored.
template <class T>
FASTFS_SIMD_CLONES T lanes_dot(const T* __restrict x, const T* __restrict y, Index m) {
    constexpr int L = kMomentLanes;
    T d[L] = {};
    Index i = 0;
    for (; i + L <= m; i += L) {
#pragma omp simd
        for (int l = 0; l < L; ++l) d[l] += x[i + l] * y[i + l];
    }
    for (int l = 0; l < L && i < m; ++i, ++l) d[l] += x[i] * y[i];
    return moment_lanes_sum(d);
}

// sq_dot_top for w columns of a row-major X (m rows, row i at x + i * ld), in the same order: a
// row's values go to the lane i % kMomentLanes of their columns. `work` holds
// (2 kMomentLanes + 1) w values (the lanes' sums and the maxima); the rows are read whole, so a
// block of columns a few thousand wide streams from memory.
template <class T>
FASTFS_SIMD_CLONES void sq_dot_top_rows(const T* __restrict x, Index ld, const T* __restrict y,
                                        Index m, Index w, T* __restrict work, T* sq, T* dot,
                                        T* top) {
    constexpr int L = kMomentLanes;
    T* __restrict s = work;
    T* __restrict d = work + L * w;
    T* __restrict t = work + 2 * L * w;
    std::fill(work, work + (2 * L + 1) * w, T(0));
    for (Index i = 0; i < m; ++i) {
        const T* __restrict row = x + i * ld;
        const T yi = y[i];
        T* __restrict sl = s + (i % L) * w;
        T* __restrict dl = d + (i % L) * w;
#pragma omp simd
        for (Index l = 0; l < w; ++l) {
            const T a = row[l];
            sl[l] += a * a;
            dl[l] += a * yi;
            const T b = std::abs(a);
            t[l] = b > t[l] ? b : t[l];
        }
    }
    T lanes[L];
    for (Index l = 0; l < w; ++l) {
        for (int k = 0; k < L; ++k) lanes[k] = s[k * w + l];
        sq[l] = moment_lanes_sum(lanes);
        for (int k = 0; k < L; ++k) lanes[k] = d[k * w + l];
        dot[l] = moment_lanes_sum(lanes);
        top[l] = t[l];
    }
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

    // Columns j0 .. j0 + w - 1 of a row-major X of m rows, row i at X + i * ld: compute()'s
    // sums in compute()'s order, so the same bits. `work`: row_work(w) values.
    static Index row_work(Index w) { return (2 * detail::kMomentLanes + 1) * w; }
    void compute_rows(const double* X, Index ld, const double* y, Index m, Index j0, Index w,
                      double* work) {
        detail::sq_dot_top_rows(X + j0, ld, y, m, w, work, &sq[j0], &xty[j0], &top[j0]);
    }
};

}  // namespace fastfs
