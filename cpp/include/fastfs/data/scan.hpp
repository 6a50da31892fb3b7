// One read of a dense array for what validation needs before any algorithm runs: whether every
// value is finite and the largest magnitude (fastfs._scale brings X into a safe range with it).
// NumPy needs a pass for isfinite (with an m x n temporary of booleans), one for the maximum and
// one for the minimum; on gene-expression data (72 x 7129) those passes cost a tenth of a
// neighbour search.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <vector>

#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"
#include "fortran_copy.hpp"

namespace fastfs {

// Over `count` contiguous values (vectorised: NaN and infinities make `bad` NaN, never 0), in
// sixteen lanes of running sums and maxima (1.7x the speed of one omp simd reduction on
// 72 x 7129).
template <class S>
FASTFS_SIMD_CLONES FiniteMaxAbs finite_max_abs(const S* __restrict x, std::size_t count) {
    double bad_l[17] = {}, top_l[17] = {};
    kernels::in_sixteen_lanes(static_cast<Index>(count), [&](Index k, int l) {
        const double v = static_cast<double>(x[k]);
        bad_l[l] += detail::non_finite_mark(x[k]);
        const double a = v < 0.0 ? -v : v;
        top_l[l] = a > top_l[l] ? a : top_l[l];
    });
    double bad = bad_l[16], top = top_l[16];
    for (int l = 0; l < 16; ++l) {
        bad += bad_l[l];
        top = top_l[l] > top ? top_l[l] : top;
    }
    FiniteMaxAbs out;
    out.finite = bad == 0.0;
    out.max_abs = top;
    return out;
}

// Whether every value of an m x n column-major array is finite, and max |x| of every column
// (out: n values, meaningful when finite), in one read: the finiteness and per-column range
// checks of the least-squares selections (NumPy's isfinite, max and min along axis 0 cost
// three reads plus temporaries, 0.7 ms on 72 x 7129).
template <class S>
bool column_max_abs(const S* x, Index m, Index n, double* out) {
    bool finite = true;
    for (Index j = 0; j < n; ++j) {
        const FiniteMaxAbs r = finite_max_abs(x + j * m, static_cast<std::size_t>(m));
        finite = finite && r.finite;
        out[j] = r.max_abs;
    }
    return finite;
}

// Indices 0 .. n-1 ordered by descending value, equal values in ascending index (a stable sort
// of -v); NaN last, in index order. An LSD radix sort on order-preserving 64-bit keys (8 passes
// of 8 bits, stable, O(n)): NumPy's stable argsort of float64 is a merge sort several times
// slower, and every weight result is ranked.
inline std::vector<std::int64_t> ranking_descending(const double* v, std::size_t n) {
    std::vector<std::uint64_t> key(n), key2(n);
    std::vector<std::int64_t> idx(n), idx2(n);
    for (std::size_t i = 0; i < n; ++i) {
        double d = v[i];
        std::uint64_t u;
        if (std::isnan(d)) {
            u = ~std::uint64_t{0};  // after everything
        } else {
            if (d == 0.0) d = 0.0;  // -0 and +0 are equal
            std::memcpy(&u, &d, sizeof u);
            // Order-preserving map of ascending doubles to ascending integers, then reversed
            // (descending): the keys of -inf .. +inf never reach ~0, kept for NaN.
            u = (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
            u = ~u;
        }
        key[i] = u;
        idx[i] = static_cast<std::int64_t>(i);
    }
    if (n == 0) return idx;
    std::size_t count[256];
    for (int shift = 0; shift < 64; shift += 8) {
        std::fill(count, count + 256, std::size_t{0});
        for (std::size_t i = 0; i < n; ++i) ++count[(key[i] >> shift) & 0xff];
        if (count[(key[0] >> shift) & 0xff] == n) continue;  // every key has this byte
        std::size_t at = 0;
        for (auto& c : count) {
            const std::size_t here = c;
            c = at;
            at += here;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t to = count[(key[i] >> shift) & 0xff]++;
            key2[to] = key[i];
            idx2[to] = idx[i];
        }
        key.swap(key2);
        idx.swap(idx2);
    }
    return idx;
}

}  // namespace fastfs
