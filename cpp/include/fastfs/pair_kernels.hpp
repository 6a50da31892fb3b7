// The inner loops of the distance state: for rows a of D (upper triangle) and a column range,
// v = D[a, b] + sign * (x_a - x_b)^2, folded into a per-row minimum and a per-column minimum.
// On x86-64 each kernel is compiled twice, for AVX2 and the baseline, and the loader picks one
// per CPU (function multi-versioning), so wheels stay portable without -march=native.
#pragma once
#include <limits>

#include "types.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(FASTFS_NO_CLONES)
#define FASTFS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FASTFS_SIMD_CLONES
#endif

namespace fastfs::kernels {

// By value: std::min returns a reference, and nesting it over temporaries makes GCC fall back
// to a scalar loop. Same result as std::min for the finite-or-inf values used here.
template <class T>
inline T min_of(T a, T b) {
    return b < a ? b : a;
}

// One row a: returns min_b v and lowers colmin[b] to v, for b in [lo, hi).
template <class T>
FASTFS_SIMD_CLONES T scan_row(const T* __restrict row, const T* __restrict col, T xa, T sign, Index lo,
                              Index hi, T* __restrict colmin) {
    T best = std::numeric_limits<T>::infinity();
#pragma omp simd reduction(min : best)
    for (Index b = lo; b < hi; ++b) {
        const T diff = xa - col[b];
        const T v = row[b] + sign * (diff * diff);
        best = min_of(best, v);
        colmin[b] = min_of(colmin[b], v);
    }
    return best;
}

// Four rows a0..a0+3 against the same columns: col[b] and colmin[b] are loaded once per four
// pairs instead of once per pair. best[r] is lowered to the row minima.
template <class T>
FASTFS_SIMD_CLONES void scan_rows4(const T* __restrict r0, const T* __restrict r1,
                                   const T* __restrict r2, const T* __restrict r3, const T* xa,
                                   const T* __restrict col, T sign, Index lo, Index hi,
                                   T* __restrict colmin, T* best) {
    T b0 = best[0], b1 = best[1], b2 = best[2], b3 = best[3];
    const T x0 = xa[0], x1 = xa[1], x2 = xa[2], x3 = xa[3];
#pragma omp simd reduction(min : b0, b1, b2, b3)
    for (Index b = lo; b < hi; ++b) {
        const T c = col[b];
        const T d0 = x0 - c, d1 = x1 - c, d2 = x2 - c, d3 = x3 - c;
        const T v0 = r0[b] + sign * (d0 * d0);
        const T v1 = r1[b] + sign * (d1 * d1);
        const T v2 = r2[b] + sign * (d2 * d2);
        const T v3 = r3[b] + sign * (d3 * d3);
        b0 = min_of(b0, v0);
        b1 = min_of(b1, v1);
        b2 = min_of(b2, v2);
        b3 = min_of(b3, v3);
        colmin[b] = min_of(colmin[b], min_of(min_of(v0, v1), min_of(v2, v3)));
    }
    best[0] = b0;
    best[1] = b1;
    best[2] = b2;
    best[3] = b3;
}

// D[a, b] += sign * (x_a - x_b)^2 for b in [lo, hi): the same expression as the scans, so an
// accepted candidate leaves exactly the values it was scored with.
template <class T>
FASTFS_SIMD_CLONES void update_row(T* row, const T* col, T xa, T sign, Index lo, Index hi) {
#pragma omp simd
    for (Index b = lo; b < hi; ++b) {
        const T diff = xa - col[b];
        row[b] = row[b] + sign * (diff * diff);
    }
}

}  // namespace fastfs::kernels
