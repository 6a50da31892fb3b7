// The inner loops of the distance state: for rows a of D (upper triangle) and a column range,
// v = D[a, b] + sign * (x_a - x_b)^2, folded into a per-row minimum and a per-column minimum.
// On x86-64 each kernel is compiled twice, for AVX2 and the baseline, and the loader picks one
// per CPU (function multi-versioning), so wheels stay portable without -march=native.
#pragma once
#include <cmath>
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

// D[a, b] + S * q with the sign known at compile time (S in {-1, 0, 1}) saves a multiply per
// pair and gives exactly what the generic sign * q gives: x + (-1 * q) == x - q and x + 0 == x
// in IEEE arithmetic.
template <int S, class T>
inline T shifted(T d, T q) {
    if constexpr (S > 0) return d + q;
    else if constexpr (S < 0) return d - q;
    else return d;
}

// One row a: returns min_b v and lowers colmin[b] to v, for b in [lo, hi).
template <int S, class T>
FASTFS_SIMD_CLONES T scan_row(const T* __restrict row, const T* __restrict col, T xa, Index lo,
                              Index hi, T* __restrict colmin) {
    T best = std::numeric_limits<T>::infinity();
#pragma omp simd reduction(min : best)
    for (Index b = lo; b < hi; ++b) {
        const T diff = xa - col[b];
        const T v = shifted<S>(row[b], diff * diff);
        best = min_of(best, v);
        colmin[b] = min_of(colmin[b], v);
    }
    return best;
}

// Four rows a0..a0+3 against the same columns: col[b] and colmin[b] are loaded once per four
// pairs instead of once per pair. best[r] is lowered to the row minima.
template <int S, class T>
FASTFS_SIMD_CLONES void scan_rows4(const T* __restrict r0, const T* __restrict r1,
                                   const T* __restrict r2, const T* __restrict r3, const T* xa,
                                   const T* __restrict col, Index lo, Index hi,
                                   T* __restrict colmin, T* best) {
    T b0 = best[0], b1 = best[1], b2 = best[2], b3 = best[3];
    const T x0 = xa[0], x1 = xa[1], x2 = xa[2], x3 = xa[3];
#pragma omp simd reduction(min : b0, b1, b2, b3)
    for (Index b = lo; b < hi; ++b) {
        const T c = col[b];
        const T d0 = x0 - c, d1 = x1 - c, d2 = x2 - c, d3 = x3 - c;
        const T v0 = shifted<S>(r0[b], d0 * d0);
        const T v1 = shifted<S>(r1[b], d1 * d1);
        const T v2 = shifted<S>(r2[b], d2 * d2);
        const T v3 = shifted<S>(r3[b], d3 * d3);
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

// Weighted squared distances from x to four rows at once: out[r] = sum_f w2[f] (x_f - z_r,f)^2,
// in the accumulator type Acc (deduced from w2 and out): float64 for exact distances whatever
// T is, float32 for the shortlist pass of the neighbour query (twice the lanes). x and w2 are
// loaded once per four rows. Every exact distance of a query goes through this one kernel (a
// short tail repeats a row), so each value has the same bits however rows are split among
// threads.
template <class Acc, class T>
FASTFS_SIMD_CLONES void sq_dist4(const T* __restrict x, const T* __restrict z0,
                                 const T* __restrict z1, const T* __restrict z2,
                                 const T* __restrict z3, const Acc* __restrict w2, Index n,
                                 Acc* out) {
    Acc a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
    for (Index f = 0; f < n; ++f) {
        const Acc xf = static_cast<Acc>(x[f]), wf = w2[f];
        const Acc d0 = xf - static_cast<Acc>(z0[f]), d1 = xf - static_cast<Acc>(z1[f]);
        const Acc d2 = xf - static_cast<Acc>(z2[f]), d3 = xf - static_cast<Acc>(z3[f]);
        a0 += wf * (d0 * d0);
        a1 += wf * (d1 * d1);
        a2 += wf * (d2 * d2);
        a3 += wf * (d3 * d3);
    }
    out[0] = a0;
    out[1] = a1;
    out[2] = a2;
    out[3] = a3;
}

// Manhattan distances from x to four rows at once: out[r] = sum_f |x_f - z_r,f| (ReliefF).
template <class T>
FASTFS_SIMD_CLONES void l1_dist4(const T* __restrict x, const T* __restrict z0,
                                 const T* __restrict z1, const T* __restrict z2,
                                 const T* __restrict z3, Index n, T* out) {
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
    for (Index f = 0; f < n; ++f) {
        const T xf = x[f];
        a0 += std::abs(xf - z0[f]);
        a1 += std::abs(xf - z1[f]);
        a2 += std::abs(xf - z2[f]);
        a3 += std::abs(xf - z3[f]);
    }
    out[0] = a0;
    out[1] = a1;
    out[2] = a2;
    out[3] = a3;
}

}  // namespace fastfs::kernels
