// Leave-one-out neighbour queries without an m x m matrix: one distance row at a time, from
// one sample to all others, O(n_samples * n_features) each. Shared by the margins, Simba,
// Relief and ReliefF (SPEC 1.4): a sample is never its own neighbour, and among equal
// distances the lowest sample index wins.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace fastfs {

// Nearest other sample with the same label (hit) and with another label (miss); index -1 and
// distance +inf when there is none.
struct HitMiss {
    Index hit = -1, miss = -1;
    double hit_d = std::numeric_limits<double>::infinity();
    double miss_d = std::numeric_limits<double>::infinity();

    // Keeps the closer of two candidates; equal distances go to the lower index.
    static bool better(double d, Index j, double best_d, Index best) {
        return d < best_d || (d == best_d && j < best);
    }
    void offer(double d, Index j, bool same_class) {
        if (same_class) {
            if (hit < 0 || better(d, j, hit_d, hit)) { hit_d = d; hit = j; }
        } else if (miss < 0 || better(d, j, miss_d, miss)) {
            miss_d = d;
            miss = j;
        }
    }
    void merge(const HitMiss& o) {
        if (o.hit >= 0) offer(o.hit_d, o.hit, true);
        if (o.miss >= 0) offer(o.miss_d, o.miss, false);
    }
};

// Squared weighted distance sum_f w2[f] (x_f - z_f)^2 between two rows, accumulated in double
// whatever T is; w2 == nullptr means all ones.
template <class T>
inline double squared_distance(const T* x, const T* z, const double* w2, Index n) {
    double acc = 0.0;
    if (w2) {
#pragma omp simd reduction(+ : acc)
        for (Index f = 0; f < n; ++f) {
            const double d = static_cast<double>(x[f]) - static_cast<double>(z[f]);
            acc += w2[f] * (d * d);
        }
    } else {
#pragma omp simd reduction(+ : acc)
        for (Index f = 0; f < n; ++f) {
            const double d = static_cast<double>(x[f]) - static_cast<double>(z[f]);
            acc += d * d;
        }
    }
    return acc;
}

// Nearest hit and miss of sample i among samples [j0, j1) under the weighted squared distance
// (distances reported squared). The caller splits [0, m) across threads and merges.
template <class T>
inline HitMiss nearest_hit_miss(const MatrixRef<T>& X, const Labels& codes, Index i,
                                const double* w2, Index j0, Index j1) {
    HitMiss best;
    const T* xi = X.row(i).data();
    const Index n = X.cols();
    for (Index j = j0; j < j1; ++j) {
        if (j == i) continue;
        best.offer(squared_distance(xi, X.row(j).data(), w2, n), j, codes[j] == codes[i]);
    }
    return best;
}

// The same query with the row split across the threads of the calling team: for the
// sequential algorithms (Simba) whose steps cannot run side by side. min with index
// tie-breaks is exact, so the answer does not depend on the thread count.
template <class T>
inline HitMiss nearest_hit_miss_parallel(const MatrixRef<T>& X, const Labels& codes, Index i,
                                         const double* w2, int threads) {
    const Index m = X.rows();
    if (threads <= 1 || m * X.cols() < 65536) return nearest_hit_miss(X, codes, i, w2, 0, m);
    std::vector<HitMiss> part(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        int t = 0, nt = 1;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        const Index j0 = m * t / nt, j1 = m * (t + 1) / nt;
        part[static_cast<std::size_t>(t)] = nearest_hit_miss(X, codes, i, w2, j0, j1);
    }
    HitMiss best;
    for (const auto& p : part) best.merge(p);
    return best;
}

// Nearest hit and miss of every sample, in parallel over samples (each row computed whole).
template <class T>
inline std::vector<HitMiss> all_nearest_hit_miss(const MatrixRef<T>& X, const Labels& codes,
                                                 const double* w2, int threads) {
    const Index m = X.rows();
    std::vector<HitMiss> out(static_cast<std::size_t>(m));
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (Index i = 0; i < m; ++i) out[static_cast<std::size_t>(i)] = nearest_hit_miss(X, codes, i, w2, 0, m);
    return out;
}

}  // namespace fastfs
