// Scans along one whole row of a distance state: row a of D (every column b != a valid, as in
// a mirrored DistanceState or a row block of the split state, state/distance_block.hpp) under
// D + sign * delta(c), delta(c)_ab = (c_a - c_b)^2, samples at positions of a ClassLayout.
// One machine's state and the split state's blocks both answer their whole-row questions here
// (nearest hit and miss, the k nearest, the first sample at a distance), so the two give the
// same bits by construction: every entry is the expression of the pair kernels
// (simd/pair_kernels.hpp), min is exact, and the tie rules are written once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "../core/types.hpp"
#include "../data/class_layout.hpp"
#include "../simd/pair_kernels.hpp"

namespace fastfs {

namespace kernels {
// min over b in [lo, hi) of D[b] + S * (xa - col[b])^2 (S = 0: of D[b]): one row's minimum,
// with no column-side bookkeeping.
template <int S, class T>
FASTFS_SIMD_CLONES T row_min(const T* __restrict row, const T* __restrict col, T xa, Index lo,
                             Index hi) {
    return lane_min<T>(lo, hi, [&](Index b) {
        const T diff = xa - col[b];
        return shifted<S>(row[b], diff * diff);
    });
}

// The first b in [lo, hi) with D[b] + S * (xa - col[b])^2 == v (S = 0: D[b] == v, col unused),
// hi when there is none. Chunks of 16 are tested at once (vectorised: an early exit per entry
// would keep the loop scalar), then the chunk with a match is searched entry by entry.
template <int S, class T>
FASTFS_SIMD_CLONES Index first_equal(const T* __restrict row, const T* __restrict col, T xa,
                                     Index lo, Index hi, T v) {
    auto value = [&](Index b) {
        if constexpr (S == 0) {
            return row[b];
        } else {
            const T diff = xa - col[b];
            return shifted<S>(row[b], diff * diff);
        }
    };
    constexpr Index kChunk = 16;
    Index b = lo;
    for (; b + kChunk <= hi; b += kChunk) {
        int hit = 0;
#pragma omp simd reduction(| : hit)
        for (Index j = 0; j < kChunk; ++j) hit |= value(b + j) == v ? 1 : 0;
        if (hit) break;
    }
    for (; b < hi; ++b)
        if (value(b) == v) return b;
    return hi;
}
}  // namespace kernels

// Entry b of row a under D + sign * delta(c); c == nullptr or sign == 0: D itself.
template <class T>
inline T row_value(const T* r, const T* c, T sign, Index a, Index b) {
    T v = r[b];
    if (c && sign != T(0)) {
        const T diff = c[a] - c[b];
        v = v + sign * (diff * diff);
    }
    return v;
}

// The nearest hit and nearest miss distances of sample a along its row (+inf when none).
template <int S, class T>
void row_nearest(const ClassLayout& L, const T* r, Index a, const T* c, T& hit, T& miss) {
    const Index lo = L.begin[static_cast<std::size_t>(L.cls[static_cast<std::size_t>(a)])];
    const Index hi = L.class_end_of(a);
    const T xa = c[a];
    hit = std::min(kernels::row_min<S>(r, c, xa, lo, a), kernels::row_min<S>(r, c, xa, a + 1, hi));
    miss = std::min(kernels::row_min<S>(r, c, xa, Index{0}, lo),
                    kernels::row_min<S>(r, c, xa, hi, L.n_samples()));
}
// c must not be null (pass a zero column with sign 0 for D itself).
template <class T>
void row_nearest(const ClassLayout& L, const T* r, Index a, const T* c, T sign, T& hit, T& miss) {
    if (sign > 0) row_nearest<1>(L, r, a, c, hit, miss);
    else if (sign < 0) row_nearest<-1>(L, r, a, c, hit, miss);
    else row_nearest<0>(L, r, a, c, hit, miss);
}

// Class of the lowest original index among the samples (other than a) at exactly distance v
// from a. Positions keep the original order inside a class, so each class is scanned only up
// to its first sample at v: cheap exactly when ties are dense (discrete features).
template <class T>
std::int64_t row_first_at_distance(const ClassLayout& L, const T* r, Index a, const T* c, T sign,
                                   T v) {
    const bool shift = c && sign != T(0);
    const T xa = shift ? c[a] : T(0);
    auto first = [&](Index lo, Index hi) {
        if (!shift) return kernels::first_equal<0>(r, r, xa, lo, hi, v);
        if (sign > 0) return kernels::first_equal<1>(r, c, xa, lo, hi, v);
        return kernels::first_equal<-1>(r, c, xa, lo, hi, v);
    };
    Index best = -1;
    for (Index k = 0; k < L.n_classes(); ++k) {
        const Index lo = L.begin[static_cast<std::size_t>(k)], end = L.begin[static_cast<std::size_t>(k) + 1];
        // Skipping a itself: the part of the class before it, then the part after it.
        Index b = a >= lo && a < end ? first(lo, a) : first(lo, end);
        if (a >= lo && a < end && b == a) b = first(a + 1, end);
        if (b < end && (best < 0 || L.order[static_cast<std::size_t>(b)] < L.order[static_cast<std::size_t>(best)]))
            best = b;
    }
    return L.cls[static_cast<std::size_t>(best)];
}

// The k nearest other samples of sample a, nearest first; ties go to the lower original sample
// index (SPEC 1.4). Writes min(k, m - 1) positions and distances and returns that count.
template <class T>
int row_k_nearest(const ClassLayout& L, const T* r, Index a, const T* c, T sign, int k, Index* pos,
                  T* dist) {
    int count = 0;
    for (Index b = 0; b < L.n_samples(); ++b) {
        if (b == a) continue;
        const T v = row_value(r, c, sign, a, b);
        const Index ob = L.order[static_cast<std::size_t>(b)];
        if (count == k) {
            const Index last = pos[k - 1];
            if (v > dist[k - 1] || (v == dist[k - 1] && ob > L.order[static_cast<std::size_t>(last)]))
                continue;
        } else {
            ++count;
        }
        int i = count - 1;  // insertion sort from the back; k is small
        while (i > 0 && (dist[i - 1] > v ||
                         (dist[i - 1] == v && L.order[static_cast<std::size_t>(pos[i - 1])] > ob))) {
            dist[i] = dist[i - 1];
            pos[i] = pos[i - 1];
            --i;
        }
        dist[i] = v;
        pos[i] = b;
    }
    return count;
}

}  // namespace fastfs
