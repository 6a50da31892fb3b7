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
#include <limits>
#include <numeric>
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

namespace detail {
// Order-preserving map of doubles to unsigned integers, reversed (descending values give
// ascending keys); -0 and +0 equal, NaN after everything (the keys of -inf .. +inf never reach
// ~0). No branch on the sign: weights of mixed signs would mispredict one in two.
inline std::uint64_t descending_key(double d) {
    d = d == 0.0 ? 0.0 : d;
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    const std::uint64_t negative = std::uint64_t{0} - (u >> 63);
    u = ~(u ^ (negative | (std::uint64_t{1} << 63)));
    return d != d ? ~std::uint64_t{0} : u;
}

// Stable LSD radix sort of a[0 .. n) by the top 32 bits of each item, in digits of D bits (a
// digit every item shares is skipped), with b as scratch of n items; returns a or b, whichever
// holds the sorted items. The items are 8 bytes (a 32-bit half of a key above a 32-bit
// index), half the bytes moved of a key and an index side by side.
template <int D>
inline std::uint64_t* radix_by_top_half(std::uint64_t* a, std::uint64_t* b, std::size_t n) {
    constexpr int kPasses = (32 + D - 1) / D;
    constexpr std::uint64_t kMask = (std::uint64_t{1} << D) - 1;
    if (n < 2) return a;
    std::vector<std::uint32_t> hist(static_cast<std::size_t>(kPasses) << D, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t it = a[i];
        for (int p = 0; p < kPasses; ++p)
            ++hist[(static_cast<std::size_t>(p) << D) + ((it >> (32 + D * p)) & kMask)];
    }
    for (int p = 0; p < kPasses; ++p) {
        std::uint32_t* count = hist.data() + (static_cast<std::size_t>(p) << D);
        const int shift = 32 + D * p;
        if (count[(a[0] >> shift) & kMask] == n) continue;  // every item has this digit
        std::uint32_t at = 0;
        for (std::size_t c = 0; c <= kMask; ++c) {
            const std::uint32_t here = count[c];
            count[c] = at;
            at += here;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t it = a[i];
            b[count[(it >> shift) & kMask]++] = it;
        }
        std::swap(a, b);
    }
    return a;
}
// Digits of 11 bits (three passes) from 4096 items, bytes (four) below: the 2048 counters of
// a digit then cost more than the pass they save.
inline std::uint64_t* radix_by_top_half(std::uint64_t* a, std::uint64_t* b, std::size_t n) {
    return n >= 4096 ? radix_by_top_half<11>(a, b, n) : radix_by_top_half<8>(a, b, n);
}
}  // namespace detail

// Indices 0 .. n-1 ordered by descending value, equal values in ascending index (a stable sort
// of -v); NaN last, in index order. Order-preserving 64-bit keys, sorted by their top halves
// (sign, exponent and 20 bits of the mantissa) with an LSD radix sort of (half, index) items;
// then each run of equal top halves by the bottom halves: by a stable comparison sort up to
// 256 items, by the same radix sort beyond; skipped where the whole keys are equal. Two normal
// values share a top half only within a relative 2^-20, so on most weights the second stage
// does nothing. NumPy's stable argsort of float64 is a merge sort several times slower, and
// every weight result is ranked.
inline std::vector<std::int64_t> ranking_descending(const double* v, std::size_t n) {
    std::vector<std::int64_t> out(n);
    if (n == 0) return out;
    std::vector<std::uint64_t> key(n);
    if (n > std::numeric_limits<std::uint32_t>::max()) {
        for (std::size_t i = 0; i < n; ++i) key[i] = detail::descending_key(v[i]);
        // Beyond 32-bit indices: a comparison sort of the indices (never met by a weight vector).
        std::iota(out.begin(), out.end(), std::int64_t{0});
        std::stable_sort(out.begin(), out.end(), [&](std::int64_t a, std::int64_t b) {
            return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
        });
        return out;
    }
    constexpr std::uint64_t kLow = 0xffffffffULL;
    std::vector<std::uint64_t> items(n), scratch(n);
    for (std::size_t i = 0; i < n; ++i) {
        key[i] = detail::descending_key(v[i]);
        items[i] = (key[i] & ~kLow) | i;
    }
    std::uint64_t* a = detail::radix_by_top_half(items.data(), scratch.data(), n);
    std::uint64_t* b = a == items.data() ? scratch.data() : items.data();
    for (std::size_t i = 0; i < n;) {
        const std::uint64_t top = a[i] >> 32;
        std::size_t j = i + 1;
        while (j < n && (a[j] >> 32) == top) ++j;
        // a[i .. j) share the top half and are in index order (the sort is stable).
        bool equal = true;
        if (j - i > 1) {
            const std::uint64_t k0 = key[a[i] & kLow];
            for (std::size_t p = i + 1; p < j; ++p) equal = equal && key[a[p] & kLow] == k0;
        }
        const std::size_t len = j - i;
        if (!equal && len <= 256) {
            // (A radix sort of a short run costs its counters more than the run.)
            std::stable_sort(a + i, a + j, [&](std::uint64_t x, std::uint64_t y) {
                return key[x & kLow] < key[y & kLow];
            });
        } else if (!equal) {
            for (std::size_t p = i; p < j; ++p) a[p] = (key[a[p] & kLow] << 32) | (a[p] & kLow);
            const std::uint64_t* got = detail::radix_by_top_half(a + i, b + i, len);
            if (got != a + i) std::copy(got, got + len, a + i);
        }
        i = j;
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::int64_t>(a[i] & kLow);
    return out;
}

}  // namespace fastfs
