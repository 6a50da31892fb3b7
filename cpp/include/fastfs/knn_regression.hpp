// The leave-one-out soft kNN regression criterion of RGS (SPEC 3.1): for every sample, the
// kernel-weighted mean target of its k nearest other samples, and e = -(1/2) sum (y - g_hat)^2.
// Two ways to get the neighbours: one weighted distance row per sample (weights, used by RGS,
// knn_regression_score and SKS), or the shared m x m distance state (feature subsets, used by
// forward selection and, later, the generic sequential searches).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <type_traits>
#include <vector>

#include "distance_state.hpp"
#include "errors.hpp"
#include "pair_kernels.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace fastfs {

// Normalised kernel weights p_j of k neighbour distances sorted nearest first:
// p_j = exp(-(d_j - d_0) / beta) / sum. Shifting by the nearest distance leaves the weights
// unchanged and keeps the largest term at exactly 1, so the sum never underflows to 0 however
// far the neighbours are. Equal distances get equal weights, whatever beta; beta == 0 is the
// limit beta -> 0+ (all the weight on the neighbours at the nearest distance).
inline void kernel_weights(const double* d, int k, double beta, double* p) {
    const double d0 = d[0];
    double z = 0.0;
    for (int j = 0; j < k; ++j) {
        const double t = d[j] - d0;
        const double e = t == 0.0 ? 1.0 : (beta > 0.0 ? std::exp(-t / beta) : 0.0);
        p[j] = e;
        z += e;
    }
    for (int j = 0; j < k; ++j) p[j] /= z;
}

// The k nearest entries of a distance row other than `skip`, nearest first; equal distances go
// to the lower index (SPEC 1.4). Returns min(k, m - 1).
inline int select_k_nearest(const double* row, Index m, Index skip, int k, Index* idx,
                            double* dist) {
    int count = 0;
    for (Index b = 0; b < m; ++b) {
        if (b == skip) continue;
        const double v = row[b];
        // Scanning in index order, an equal later value never displaces an earlier one.
        if (count == k) {
            if (!(v < dist[k - 1])) continue;
        } else {
            ++count;
        }
        int i = count - 1;
        while (i > 0 && dist[i - 1] > v) {
            dist[i] = dist[i - 1];
            idx[i] = idx[i - 1];
            --i;
        }
        dist[i] = v;
        idx[i] = b;
    }
    return count;
}

// k = min(n_neighbors, m - 1): the neighbour count every function here uses.
inline int effective_k(Index n_neighbors, Index m) {
    require(n_neighbors >= 1, "n_neighbors must be >= 1");
    require(m >= 2, "need at least 2 samples");
    return static_cast<int>(std::min<Index>(n_neighbors, m - 1));
}

// float32 sweeps of the neighbour query below: out[j] += sum over four features of
// w_f (c_f[j] - x_f)^2, added in feature order, for samples j in [lo, hi). Columns are
// contiguous along samples, so the loop vectorises over samples whatever the feature count.
namespace kernels {
template <class F>
FASTFS_SIMD_CLONES void weighted_sq_columns4(const F* __restrict c0, const F* __restrict c1,
                                             const F* __restrict c2, const F* __restrict c3,
                                             F x0, F x1, F x2, F x3, const F* w, Index lo,
                                             Index hi, F* __restrict out) {
    const F w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        const F d0 = c0[j] - x0, d1 = c1[j] - x1, d2 = c2[j] - x2, d3 = c3[j] - x3;
        F acc = out[j];
        acc += w0 * (d0 * d0);
        acc += w1 * (d1 * d1);
        acc += w2 * (d2 * d2);
        acc += w3 * (d3 * d3);
        out[j] = acc;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(FASTFS_NO_CLONES)
#define FASTFS_HAVE_FMA_SWEEP 1
// The same sweep with fused multiply-adds (one rounding less per term, which only tightens the
// float32 error the bounds allow for), chosen at run time on CPUs with FMA: the default build
// keeps -ffp-contract=off and no -mfma, so the compiler never fuses on its own.
__attribute__((target("avx2,fma"))) inline void weighted_sq_columns4_fma(
    const float* __restrict c0, const float* __restrict c1, const float* __restrict c2,
    const float* __restrict c3, float x0, float x1, float x2, float x3, const float* w, Index lo,
    Index hi, float* __restrict out) {
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        const float d0 = c0[j] - x0, d1 = c1[j] - x1, d2 = c2[j] - x2, d3 = c3[j] - x3;
        float acc = out[j];
        acc = __builtin_fmaf(w0 * d0, d0, acc);
        acc = __builtin_fmaf(w1 * d1, d1, acc);
        acc = __builtin_fmaf(w2 * d2, d2, acc);
        acc = __builtin_fmaf(w3 * d3, d3, acc);
        out[j] = acc;
    }
}

inline bool cpu_has_fma() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// min of a[lo, hi), +inf when empty.
inline float block_min(const float* a, Index lo, Index hi) {
    float best = std::numeric_limits<float>::infinity();
#pragma omp simd reduction(min : best)
    for (Index j = lo; j < hi; ++j) best = a[j] < best ? a[j] : best;
    return best;
}

template <class F>
FASTFS_SIMD_CLONES void weighted_sq_column(const F* __restrict c, F x, F w, Index lo, Index hi,
                                           F* __restrict out) {
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        const F d = c[j] - x;
        out[j] += w * (d * d);
    }
}
}  // namespace kernels

// Below this many distance terms a row is computed by one thread. A parallel region per step
// costs microseconds on idle cores, but when a core is busy elsewhere every step waits for the
// descheduled thread: on the shared 2-core development machine (load ~4), splitting the rows of
// a 1000 x 500 problem made an RGS epoch 10x slower than one thread (1.6 s against 0.15 s).
// Rows of 4M terms take about a millisecond, long enough for that wait not to dominate.
constexpr Index kRowParallelWork = Index{1} << 22;

// The k nearest other samples of one sample under weights w2, exactly, without an m x m matrix.
//
// The exact distance of a pair is sum_f w2[f] (x_if - x_jf)^2 in float64, summed in feature
// order (exact_distance()); every distance this file returns is that value, bit for bit.
// Computing it for all m samples streams the whole of X per query, so a query first takes a
// float32 distance to every sample from a transposed float32 copy of X (half the bytes, twice
// the SIMD lanes, and contiguous along samples, so it vectorises over samples for any number of
// features), keeps only the samples whose float32 value could belong to the k nearest under
// rigorous error bounds, and takes the exact distance of those. Ties then go to the lower index
// exactly as an exhaustive float64 scan would decide them.
template <class T>
class KnnQuery {
public:
    struct Scratch {
        std::vector<float> w2f, approx, xi;  // xi: the query's float32 coordinates
        std::vector<Index> heap_idx, shortlist;
        std::vector<float> heap_val, block_min, block_tmp;
        double gamma = 0, conv = 0, tiny = 0;
        bool shortlist_ok = false;
    };

    explicit KnnQuery(const MatrixRef<T>& X) : X_(X), m_(X.rows()), n_(X.cols()) {
        double top = 0.0;
        for (Index i = 0; i < m_; ++i)
            for (Index f = 0; f < n_; ++f) top = std::max(top, std::abs(static_cast<double>(X(i, f))));
        top_x_ = top;
        // float32 must hold every weighted square and their sum with room to spare; with very
        // few features the exact pass is as cheap as the float32 one.
        usable_ = top <= 1e9 && n_ >= kShortlistMinFeatures;
        if (!usable_) return;
        XT_ = X.transpose().template cast<float>();
        norm_.resize(static_cast<std::size_t>(m_));
        for (Index i = 0; i < m_; ++i) {
            norm_[static_cast<std::size_t>(i)] = X.row(i).template cast<double>().norm();
            norm_max_ = std::max(norm_max_, norm_[static_cast<std::size_t>(i)]);
        }
    }

    Index n_samples() const { return m_; }

    // Sets up queries under weights w2 (non-negative, length n_features).
    void prepare(const double* w2, Scratch& s) const {
        double top = 0.0;
        for (Index f = 0; f < n_; ++f) top = w2[f] > top ? w2[f] : top;
        s.shortlist_ok = usable_ && top > 0.0 && top <= 1e9;
        if (!s.shortlist_ok) return;
        s.w2f.resize(static_cast<std::size_t>(n_));
        for (Index f = 0; f < n_; ++f) s.w2f[static_cast<std::size_t>(f)] = static_cast<float>(w2[f]);
        s.approx.resize(static_cast<std::size_t>(m_));
        s.xi.resize(static_cast<std::size_t>(n_));
        s.shortlist.resize(static_cast<std::size_t>(m_) + 1);
        const double u = 0x1.0p-24;  // float32 unit roundoff
        // Each term (difference, square, weight, product) and each of the n additions of
        // non-negative terms rounds once: relative error at most gamma_{n+4}. Doubled, which
        // also covers the float64 rounding of the exact distance the bounds are compared with.
        const double kk = static_cast<double>(n_ + 4) * u;
        s.gamma = 2.0 * kk / (1.0 - kk);
        // Converting X to float32 moves each coordinate by at most u |x|, so a weighted
        // distance (not squared) moves by at most u sqrt(max w2) (||x_i|| + ||x_j||); doubled
        // for the conversion of w2.
        s.conv = std::is_same<T, float>::value ? 0.0 : 2.0 * u * std::sqrt(top);
        // Absolute slack for results below float32's normal range (weights or products that
        // become subnormal or zero), generous: it only lengthens the shortlist by ties at ~0.
        s.tiny = 4.0 * static_cast<double>(n_) * (top + 1.0) * (4.0 * top_x_ * top_x_ + 1.0) *
                 0x1.0p-120;
    }

    double exact_distance(Index i, Index j, const double* w2) const {
        const T* a = X_.row(i).data();
        const T* b = X_.row(j).data();
        double d = 0.0;
        for (Index f = 0; f < n_; ++f) {
            const double t = static_cast<double>(a[f]) - static_cast<double>(b[f]);
            d += w2[f] * (t * t);
        }
        return d;
    }

    // The k nearest other samples of i (nearest first, equal distances to the lower index),
    // their exact distances in dist. The float32 pass is split over `threads` when the row is
    // long. Returns min(k, m - 1).
    int query(Index i, const double* w2, int k, Scratch& s, int threads, Index* idx,
              double* dist) const {
        k = static_cast<int>(std::min<Index>(k, m_ - 1));
        if (!s.shortlist_ok) {
            int count = 0;
            for (Index j = 0; j < m_; ++j)
                if (j != i) offer(exact_distance(i, j, w2), j, k, count, idx, dist);
            return count;
        }
        // From the sample's own row: a column of XT_ would touch one cache line per feature.
        // The same conversion as the one that built XT_, so the same values.
        {
            const T* xr = X_.row(i).data();
            for (Index f = 0; f < n_; ++f) s.xi[static_cast<std::size_t>(f)] = static_cast<float>(xr[f]);
        }
        const int nt = threads > 1 && m_ * n_ >= kRowParallelWork ? threads : 1;
        if (nt == 1) {
            approximate(s, 0, m_);
        } else {
#pragma omp parallel num_threads(nt)
            {
                int t = 0, team = 1;
#ifdef FASTFS_HAVE_OPENMP
                t = omp_get_thread_num();
                team = omp_get_num_threads();
#endif
                auto bound = [&](int v) {
                    return v >= team ? m_ : std::min(m_, (m_ * v / team) & ~Index{7});
                };
                approximate(s, bound(t), bound(t + 1));
            }
        }
        // The k smallest float32 values: their true distances are at most the largest of their
        // upper bounds, so the k-th nearest true distance is too. The sample itself is set to
        // +inf so that neither loop below needs a branch for it.
        if (s.heap_val.size() < static_cast<std::size_t>(k)) {
            s.heap_val.resize(static_cast<std::size_t>(k));
            s.heap_idx.resize(static_cast<std::size_t>(k));
        }
        float* a = s.approx.data();
        a[i] = std::numeric_limits<float>::infinity();
        float* hv = s.heap_val.data();
        Index* hi = s.heap_idx.data();
        int count = 0;
        float worst = std::numeric_limits<float>::infinity();
        // Each block's minimum, once (vectorised). The k-th smallest block minimum bounds the
        // k-th smallest value (k blocks each hold a value at most that large), so from the
        // start only blocks whose minimum is within it are scanned, and only their values
        // within it are offered: a scan that starts with the bound at +inf would offer
        // value after value until k are in.
        const Index n_blocks = (m_ + kBlock - 1) / kBlock;
        s.block_min.resize(static_cast<std::size_t>(n_blocks));
        float* bmin = s.block_min.data();
        for (Index b = 0; b < n_blocks; ++b)
            bmin[b] = kernels::block_min(a, b * kBlock, std::min((b + 1) * kBlock, m_));
        float cap = std::numeric_limits<float>::infinity();
        if (n_blocks >= k) {
            s.block_tmp.assign(s.block_min.begin(), s.block_min.end());
            std::nth_element(s.block_tmp.begin(), s.block_tmp.begin() + (k - 1),
                             s.block_tmp.end());
            cap = s.block_tmp[static_cast<std::size_t>(k - 1)];
        }
        for (Index b = 0; b < n_blocks; ++b) {
            if (!(bmin[b] <= cap) || (count == k && !(bmin[b] < worst))) continue;
            const Index b0 = b * kBlock, b1 = std::min(b0 + kBlock, m_);
            for (Index j = b0; j < b1; ++j) {
                const float v = a[j];
                if (!(v <= cap) || (count == k && !(v < worst))) continue;
                int p = count < k ? count++ : k - 1;
                while (p > 0 && hv[p - 1] > v) {
                    hv[p] = hv[p - 1];
                    hi[p] = hi[p - 1];
                    --p;
                }
                hv[p] = v;
                hi[p] = j;
                if (count == k) worst = hv[k - 1];
            }
        }
        double bound = 0.0;
        for (int r = 0; r < count; ++r) {
            const double av = static_cast<double>(hv[r]);
            bound = std::max(bound, std::sqrt((av + s.tiny) / (1.0 - s.gamma)) + radius(s, i, hi[r]));
        }
        // Every sample whose lower bound may not exceed it, in index order. One threshold for
        // all samples (with the largest conversion radius) keeps the scan to a float compare;
        // it can only lengthen the shortlist, by a relative 1e-7 or so.
        const double t = bound + s.conv * (norm_[static_cast<std::size_t>(i)] + norm_max_);
        const double limit = (1.0 + s.gamma) * (t * t) + s.tiny;
        float flimit = static_cast<float>(limit);
        if (static_cast<double>(flimit) < limit)
            flimit = std::nextafter(flimit, std::numeric_limits<float>::infinity());
        Index* list = s.shortlist.data();
        int kept = 0;
        for (Index b = 0; b < n_blocks; ++b) {
            if (!(bmin[b] <= flimit)) continue;
            const Index b0 = b * kBlock, b1 = std::min(b0 + kBlock, m_);
            for (Index j = b0; j < b1; ++j) {
                list[kept] = j;
                kept += a[j] <= flimit;
            }
        }
        count = 0;
        int r = 0;
        // Four exact distances at a time: each is still summed alone in feature order (the
        // same bits), but four independent chains hide the latency of the additions.
        double d4[4];
        for (; r + 4 <= kept; r += 4) {
            exact_distances4(i, list + r, w2, d4);
            for (int q = 0; q < 4; ++q)
                if (list[r + q] != i) offer(d4[q], list[r + q], k, count, idx, dist);
        }
        for (; r < kept; ++r) {
            const Index j = list[r];
            if (j == i) continue;
            offer(exact_distance(i, j, w2), j, k, count, idx, dist);
        }
        return count;
    }

private:
    static constexpr Index kShortlistMinFeatures = 8;
    static constexpr Index kTile = 1024;  // samples per tile: the float32 sums stay in L1
    static constexpr Index kBlock = 32;   // samples per skip test of the selection scans

    // Keeps the k smallest (distance, index) pairs; called in increasing index order, so an
    // equal later distance never displaces an earlier one.
    static void offer(double v, Index j, int k, int& count, Index* idx, double* dist) {
        if (count == k && !(v < dist[k - 1])) return;
        int p = count < k ? count++ : k - 1;
        while (p > 0 && dist[p - 1] > v) {
            dist[p] = dist[p - 1];
            idx[p] = idx[p - 1];
            --p;
        }
        dist[p] = v;
        idx[p] = j;
    }

    // exact_distance() of i to j[0..3], each summed in feature order as there.
    void exact_distances4(Index i, const Index* j, const double* w2, double* out) const {
        const T* a = X_.row(i).data();
        const T* b0 = X_.row(j[0]).data();
        const T* b1 = X_.row(j[1]).data();
        const T* b2 = X_.row(j[2]).data();
        const T* b3 = X_.row(j[3]).data();
        double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
        for (Index f = 0; f < n_; ++f) {
            const double af = static_cast<double>(a[f]), wf = w2[f];
            const double t0 = af - static_cast<double>(b0[f]);
            const double t1 = af - static_cast<double>(b1[f]);
            const double t2 = af - static_cast<double>(b2[f]);
            const double t3 = af - static_cast<double>(b3[f]);
            d0 += wf * (t0 * t0);
            d1 += wf * (t1 * t1);
            d2 += wf * (t2 * t2);
            d3 += wf * (t3 * t3);
        }
        out[0] = d0;
        out[1] = d1;
        out[2] = d2;
        out[3] = d3;
    }

    double radius(const Scratch& s, Index i, Index j) const {
        return s.conv * (norm_[static_cast<std::size_t>(i)] + norm_[static_cast<std::size_t>(j)]);
    }

    // float32 distances from the query (s.xi) to samples [j0, j1), four features per sweep.
    void approximate(Scratch& s, Index j0, Index j1) const {
        float* out = s.approx.data();
        const float* w = s.w2f.data();
        const float* x = s.xi.data();
        for (Index lo = j0; lo < j1; lo += kTile) {
            const Index hi = std::min(lo + kTile, j1);
            for (Index j = lo; j < hi; ++j) out[j] = 0.0f;
            Index f = 0;
            for (; f + 4 <= n_; f += 4) {
#ifdef FASTFS_HAVE_FMA_SWEEP
                if (fma_) {
                    kernels::weighted_sq_columns4_fma(
                        XT_.row(f).data(), XT_.row(f + 1).data(), XT_.row(f + 2).data(),
                        XT_.row(f + 3).data(), x[f], x[f + 1], x[f + 2], x[f + 3], w + f, lo, hi, out);
                    continue;
                }
#endif
                kernels::weighted_sq_columns4(XT_.row(f).data(), XT_.row(f + 1).data(),
                                              XT_.row(f + 2).data(), XT_.row(f + 3).data(),
                                              x[f], x[f + 1], x[f + 2],
                                              x[f + 3], w + f, lo, hi, out);
            }
            for (; f < n_; ++f)
                kernels::weighted_sq_column(XT_.row(f).data(), x[f], w[f], lo, hi, out);
        }
    }

    MatrixRef<T> X_;
    Index m_, n_;
    double top_x_ = 0.0;
    bool usable_ = false;
    RowMatrix<float> XT_;        // X transposed, float32: one feature per row
    std::vector<double> norm_;   // ||x_j||_2 in float64
    double norm_max_ = 0.0;
#ifdef FASTFS_HAVE_FMA_SWEEP
    bool fma_ = kernels::cpu_has_fma();
#endif
};

// Per-sample neighbour lists under weights w2 (k per sample, nearest first), in parallel over
// samples. Each list is computed by one thread, so the lists do not depend on the thread count.
// `stop` is polled between samples by OpenMP thread 0, which must be the thread that holds
// the caller's signal handling: pass an empty hook when calling from inside a parallel region.
template <class T>
void all_k_nearest(const KnnQuery<T>& q, const double* w2, int k, int threads,
                   std::vector<Index>& idx, std::vector<double>& dist,
                   const StopHook& stop = {}) {
    const Index m = q.n_samples();
    idx.assign(static_cast<std::size_t>(m) * k, 0);
    dist.assign(static_cast<std::size_t>(m) * k, 0.0);
    // Small problems on one thread: waking a team costs more than the whole pass.
    const bool small = static_cast<double>(m) * static_cast<double>(m) * 64.0 < 1e7;
    const int nt = small ? 1 : std::max(1, std::min<int>(threads, static_cast<int>(m)));
    // Allocated and prepared before the region: nothing inside it may throw.
    std::vector<typename KnnQuery<T>::Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) {
        q.prepare(w2, s);
        s.heap_val.resize(static_cast<std::size_t>(k));
        s.heap_idx.resize(static_cast<std::size_t>(k));
    }
    std::atomic<bool> halt{false};
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
    for (Index i = 0; i < m; ++i) {
        if (halt.load(std::memory_order_relaxed)) continue;
        int t = 0;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
#endif
        if (t == 0 && stop && stop()) {
            halt.store(true);
            continue;
        }
        q.query(i, w2, k, scratch[static_cast<std::size_t>(t)], 1,
                idx.data() + static_cast<std::size_t>(i) * k,
                dist.data() + static_cast<std::size_t>(i) * k);
    }
    if (halt.load()) throw Interrupted();
}

// SPEC 3.3's beta: half the mean squared distance from each sample to its k nearest neighbours.
inline double default_beta(const std::vector<double>& dist) {
    double s = 0.0;
    for (double d : dist) s += d;
    return 0.5 * s / static_cast<double>(dist.size());
}

// g_hat of every sample from its neighbour lists; beta > 0, or 0 for the limit.
inline std::vector<double> soft_knn_estimates(const double* y, Index m, int k,
                                              const std::vector<Index>& idx,
                                              const std::vector<double>& dist, double beta) {
    std::vector<double> g(static_cast<std::size_t>(m));
    std::vector<double> p(static_cast<std::size_t>(k));
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist.data() + o, k, beta, p.data());
        double s = 0.0;
        for (int j = 0; j < k; ++j) s += p[j] * y[idx[o + j]];
        g[static_cast<std::size_t>(i)] = s;
    }
    return g;
}

// e straight from the neighbour lists, with the caller's k-sized buffer p (no allocation, for
// use inside parallel regions); the same sum, in the same order, as the two functions around it.
inline double soft_knn_evaluation(const double* y, Index m, int k, const Index* idx,
                                  const double* dist, double beta, double* p) {
    double s = 0.0;
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist + o, k, beta, p);
        double g = 0.0;
        for (int j = 0; j < k; ++j) g += p[j] * y[idx[o + j]];
        const double r = y[i] - g;
        s += r * r;
    }
    return -0.5 * s;
}

// e = -(1/2) sum (y - g_hat)^2, summed in sample order (the same bits for any thread count).
inline double regression_evaluation(const double* y, const std::vector<double>& g) {
    double s = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const double r = y[i] - g[i];
        s += r * r;
    }
    return -0.5 * s;
}

struct KnnRegressionResult {
    std::vector<double> estimates;  // g_hat per sample
    double score = 0.0;             // e
    double beta = 0.0;              // the beta used (the default when asked for one)
    int k = 0;
};

// The criterion under feature weights w (distances sum_f w_f^2 (x_f - z_f)^2). beta <= 0 asks
// for the default of SPEC 3.3 computed under these weights.
template <class T>
KnnRegressionResult knn_regression(const KnnQuery<T>& q, Index n_features, const double* y,
                                   const double* w, Index n_neighbors, double beta,
                                   int threads, const StopHook& stop = {}) {
    const Index m = q.n_samples(), n = n_features;
    KnnRegressionResult r;
    r.k = effective_k(n_neighbors, m);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[f] * w[f];
    std::vector<Index> idx;
    std::vector<double> dist;
    all_k_nearest(q, w2.data(), r.k, resolve_threads(threads), idx, dist, stop);
    r.beta = beta > 0.0 ? beta : default_beta(dist);
    r.estimates = soft_knn_estimates(y, m, r.k, idx, dist, r.beta);
    r.score = regression_evaluation(y, r.estimates);
    return r;
}

template <class T>
KnnRegressionResult knn_regression(const MatrixRef<T>& X, const double* y, const double* w,
                                   Index n_neighbors, double beta, int threads,
                                   const StopHook& stop = {}) {
    const KnnQuery<T> q(X);
    return knn_regression(q, X.cols(), y, w, n_neighbors, beta, threads, stop);
}

// SKS (SPEC 3.4): the criterion on each feature alone, beta <= 0 meaning the default computed
// on that feature. Parallel over features; every feature's score is computed by one thread.
template <class T>
std::vector<double> single_feature_scores(const MatrixRef<T>& X, const double* y,
                                          Index n_neighbors, double beta, int threads) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    std::vector<double> scores(static_cast<std::size_t>(n));
    const int nt = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n)));
    struct Scratch {
        std::vector<double> row, dist, col, p;
        std::vector<Index> idx;
    };
    // Allocated before the region: nothing inside it may throw.
    std::vector<Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) {
        s.row.resize(static_cast<std::size_t>(m));
        s.col.resize(static_cast<std::size_t>(m));
        s.dist.resize(static_cast<std::size_t>(m) * k);
        s.idx.resize(static_cast<std::size_t>(m) * k);
        s.p.resize(static_cast<std::size_t>(k));
    }
#pragma omp parallel num_threads(nt)
    {
        int t = 0;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
#endif
        auto& row = scratch[static_cast<std::size_t>(t)].row;
        auto& dist = scratch[static_cast<std::size_t>(t)].dist;
        auto& col = scratch[static_cast<std::size_t>(t)].col;
        auto& idx = scratch[static_cast<std::size_t>(t)].idx;
        auto& p = scratch[static_cast<std::size_t>(t)].p;
#pragma omp for schedule(dynamic, 1)
        for (Index f = 0; f < n; ++f) {
            for (Index i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = static_cast<double>(X(i, f));
            for (Index i = 0; i < m; ++i) {
                const double xi = col[static_cast<std::size_t>(i)];
                for (Index j = 0; j < m; ++j) {
                    const double d = xi - col[static_cast<std::size_t>(j)];
                    row[static_cast<std::size_t>(j)] = d * d;
                }
                select_k_nearest(row.data(), m, i, k, idx.data() + static_cast<std::size_t>(i) * k,
                                 dist.data() + static_cast<std::size_t>(i) * k);
            }
            const double b = beta > 0.0 ? beta : default_beta(dist);
            scores[static_cast<std::size_t>(f)] =
                soft_knn_evaluation(y, m, k, idx.data(), dist.data(), b, p.data());
        }
    }
    return scores;
}

// ---------------------------------------------------------------------------------------------
// On the shared distance state (feature subsets).

// e of the subset whose squared distances are D + sign * delta(col) (col == nullptr: D itself).
// The state must be built on a one-class layout (ClassLayout::from_codes of zeros), so
// positions are sample indices, and mirrored (DistanceState::mirror()) after its last change.
// beta <= 0 means the default of SPEC 3.3 recomputed on this subset: half the mean squared
// distance to the k nearest. Parallel over samples; the per-sample values are summed in
// sample order, so the score has the same bits for any thread count. If `estimates` is given it
// receives g_hat per sample.
inline void check_subset_state(const DistanceState<double>& state, int k) {
    require(state.layout().n_classes() == 1,
            "knn_subset_score: the distance state must use a one-class layout");
    require(k >= 1 && k <= state.n_samples() - 1,
            "knn_subset_score: k must be in [1, n_samples - 1]");
    state.full_row(0);  // throws here, not inside a parallel region, when not mirrored
}

namespace detail {
inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates) {
    const Index m = state.n_samples();
    std::vector<Index> idx(static_cast<std::size_t>(m) * k);
    std::vector<double> dist(static_cast<std::size_t>(m) * k);
    const int nt = std::max(1, resolve_threads(threads));
    auto neighbours = [&](Index a) {
        state.k_nearest(a, col, sign, k, idx.data() + static_cast<std::size_t>(a) * k,
                        dist.data() + static_cast<std::size_t>(a) * k);
    };
    if (nt == 1) {
        for (Index a = 0; a < m; ++a) neighbours(a);
    } else {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (Index a = 0; a < m; ++a) neighbours(a);
    }
    // D + delta may round a distance of an identical pair to a tiny negative value under
    // removal; the default beta and the kernel only use differences and the mean, so clamp.
    for (double& d : dist) d = std::max(d, 0.0);
    const double b = beta > 0.0 ? beta : default_beta(dist);
    // Positions are sample indices in a one-class layout (the stable sort keeps the order).
    std::vector<double> g = soft_knn_estimates(y, m, k, idx, dist, b);
    const double e = regression_evaluation(y, g);
    if (estimates) *estimates = std::move(g);
    return e;
}
}  // namespace detail

inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates = nullptr) {
    check_subset_state(state, k);
    return detail::knn_subset_score(state, y, k, beta, col, sign, threads, estimates);
}

}  // namespace fastfs
