// The k nearest other samples of a sample under feature weights, exactly, without an m x m
// matrix: the k nearest reduction of the neighbour engine (engine.hpp: its tie rule, its
// grouped exact distances) for weights that change at every step (RGS, SKS), screened by the
// Gram expansion of gram_state.hpp (whose a_j is carried across steps and whose bounds are
// derived there), and the per-sample neighbour lists and the soft kNN regression criterion
// (soft_knn.hpp) under one weight vector.
//
// The exact distance of a pair is sum_f w2[f] (x_if - x_jf)^2 in float64, summed in feature
// order (kernels::sq_dist4_in_order), as RGS's results have always been; every distance this
// file returns is that value, bit for bit. Computing it for all m samples streams the whole of
// X per query, so a query first screens every sample in float32, keeps only the samples that
// could belong to the k nearest under rigorous error bounds, and takes the exact distance of
// those. Ties then go to the lower index exactly as an exhaustive float64 scan would decide
// them.
//
// A query takes the k smallest screen values, computes their exact distances (the k-th
// nearest exact distance is at most their largest), and then the exact distance of every
// other sample whose lower bound does not exceed it (GramExpansion::limit()).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "engine.hpp"
#include "gram_knn.hpp"
#include "gram_state.hpp"
#include "soft_knn.hpp"

namespace fastfs {

template <class T>
class KnnQuery {
public:
    // Per-query work space: the weights side of the expansion (carried across queries) and the
    // buffers of a query.
    struct Scratch : GramWeights {
        std::vector<float> approx, v;  // v: -2 w2_f z_if of the query
        std::vector<float> approx4, v4;  // the same for four queries (query4())
        std::vector<Index> heap_idx, cand, rest;
        std::vector<std::uint32_t> shortlist, pool;  // sample indices (m < 2^31)
        std::vector<double> cand_d, rest_d;
        std::vector<float> heap_val, block_min, block_tmp;
        std::uint64_t sized_for = 0;  // the expansion the buffers were sized for
        Index kept = 0;               // samples on the last query's shortlist
    };

    // copy: the screen's copy of X in half precision where the CPU converts it, or float32.
    explicit KnnQuery(const MatrixRef<T>& X, GramCopy copy = GramCopy::kAuto)
        : X_(X), m_(X.rows()), n_(X.cols()), gram_(X, copy) {}

    Index n_samples() const { return m_; }
    bool half_copy() const { return gram_.half(); }
    const MatrixRef<T>& data() const { return X_; }

    // Sets up queries under weights w2 (non-negative, length n_features). A scratch prepared
    // before keeps its a_j and refreshes the features whose weight moved too far.
    void prepare(const double* w2, Scratch& s) const {
        if (!gram_.usable()) {
            s.shortlist_ok = false;
            return;
        }
        if (s.sized_for != gram_.id()) {
            // Everything a query needs (for any k < m), so that queries do not allocate.
            const std::size_t m = static_cast<std::size_t>(m_);
            s.approx.resize(m);
            s.v.resize(static_cast<std::size_t>(n_));
            s.shortlist.resize(m + 8);
            s.pool.resize(m + 8);
            s.rest.reserve(m);
            s.rest_d.reserve(m);
            s.block_min.reserve(m / 8 + 1);
            s.block_tmp.reserve(m / 8 + 1);
            s.cand.resize(m);
            s.heap_idx.resize(m);
            s.cand_d.resize(m);
            s.heap_val.resize(m);
            s.approx4.resize(4 * m);
            s.v4.resize(static_cast<std::size_t>(4 * n_));
            s.sized_for = gram_.id();
        }
        gram_.prepare(w2, s);
    }

    // The exact distance of samples i and j under w2 (the value every query returns).
    double exact_distance(Index i, Index j, const double* w2) const {
        double d = 0.0;
        exact_distances(i, &j, 1, w2, &d);
        return d;
    }

    // The k nearest other samples of i (nearest first, equal distances to the lower index),
    // their exact distances in dist. The float32 pass is split over `threads` when the row is
    // long. Returns min(k, m - 1).
    int query(Index i, const double* w2, int k, Scratch& s, int threads, Index* idx,
              double* dist) const {
        k = static_cast<int>(std::min<Index>(k, m_ - 1));
        if (k <= 0) return 0;
        if (!s.shortlist_ok) return scan(i, w2, k, idx, dist);
        const double ai = gram_.query_terms(X_.row(i).data(), s, s.v.data());
        const int nt = threads > 1 && m_ * n_ >= kRowParallelWork ? threads : 1;
        if (nt == 1) {
            gram_.approximate(s, s.v.data(), 0, m_, s.approx.data());
        } else {
#pragma omp parallel num_threads(nt)
            {
                const int t = thread_index(), team = team_size();
                auto bound = [&](int v) {
                    return v >= team ? m_ : std::min(m_, (m_ * v / team) & ~Index{7});
                };
                gram_.approximate(s, s.v.data(), bound(t), bound(t + 1), s.approx.data());
            }
        }
        return select(i, ai, w2, k, s, s.approx.data(), idx, dist);
    }

    // query() for the samples ids[0 .. rows) (rows <= 4) under the same weights, on one thread:
    // with FMA and four samples, one sweep over the columns screens all four (each column read
    // once per four queries); the answers are query()'s.
    void query4(const Index* ids, int rows, const double* w2, int k, Scratch& s,
                Index* const* idx, double* const* dist) const {
#ifdef FASTFS_HAVE_AVX2_FMA
        const int kk = static_cast<int>(std::min<Index>(k, m_ - 1));
        if (rows == 4 && kk > 0 && s.shortlist_ok && gram_.fma()) {
            double ai[4];
            float* out[4];
            for (int q = 0; q < 4; ++q) {
                ai[q] = gram_.query_terms(X_.row(ids[q]).data(), s, s.v.data());
                for (Index f = 0; f < n_; ++f)
                    s.v4[static_cast<std::size_t>(4 * f + q)] = s.v[static_cast<std::size_t>(f)];
                out[q] = s.approx4.data() + static_cast<std::size_t>(q) * static_cast<std::size_t>(m_);
            }
            gram_.template approximate_q<4>(s, s.v4.data(), 0, m_, out);
            for (int q = 0; q < 4; ++q) select(ids[q], ai[q], w2, kk, s, out[q], idx[q], dist[q]);
            return;
        }
#endif
        for (int q = 0; q < rows; ++q) query(ids[q], w2, k, s, 1, idx[q], dist[q]);
    }

private:
    // The exhaustive float64 scan (no screen for these weights or this data).
    int scan(Index i, const double* w2, int k, Index* idx, double* dist) const {
        int count = 0;
        for (Index j0 = 0; j0 < m_; j0 += kScanBlock) {
            Index js[kScanBlock];
            std::size_t c = 0;
            for (Index j = j0; j < std::min(m_, j0 + kScanBlock); ++j)
                if (j != i) js[c++] = j;
            exact_distances_emit(i, js, c, w2, [&](Index j, double d) {
                keep_smallest(d, j, k, count, dist, idx);
            });
        }
        return count;
    }

    // The k nearest of sample i (1 <= k <= m - 1) from the screen values a of its row
    // (overwritten at i) and its own term ai.
    int select(Index i, double ai, const double* w2, int k, Scratch& s, float* a, Index* idx,
               double* dist) const {
        // approx[j] is, up to the allowances below, scale a_j - 2 sum_f w2_f z_if z_jf: a lower
        // bound of the distance minus a_i. The sample itself is set to +inf so that no loop
        // below needs a branch for it.
        a[i] = std::numeric_limits<float>::infinity();
        float* hv = s.heap_val.data();
        Index* hi = s.heap_idx.data();
        // Each block's minimum, once (vectorised). The k-th smallest block minimum, cap,
        // bounds the k-th smallest value (k blocks each hold a value at most that large), so
        // only the values within it can be among the k smallest: they are gathered first
        // (branch-free), then ranked.
        // Blocks of 32 samples, fewer (down to 8) when m < 64 k, so that there are at least
        // about 2k blocks and cap stays finite.
        const Index block = std::max<Index>(8, std::min<Index>(32, (m_ / (2 * k)) & ~Index{7}));
        const Index n_blocks = (m_ + block - 1) / block;
        s.block_min.resize(static_cast<std::size_t>(n_blocks));
        float* bmin = s.block_min.data();
#ifdef FASTFS_HAVE_AVX2_FMA
        if (gram_.fma())
            kernels::block_minima_avx2(a, m_, block, bmin);
        else
#endif
            kernels::block_minima(a, m_, block, bmin);
        const float cap = n_blocks >= k ? kth_smallest(bmin, n_blocks, k, s.block_tmp)
                                        : std::numeric_limits<float>::infinity();
        std::uint32_t* pool = s.pool.data();
        const int pooled = gather(a, cap, pool);
        int count = 0;
        for (int r = 0; r < pooled; ++r) keep_smallest(a[pool[r]], pool[r], k, count, hv, hi);
        // The exact distances of these k: the k-th nearest exact distance is at most their
        // largest.
        Index* cand = s.cand.data();
        double* cand_d = s.cand_d.data();
        count = static_cast<int>(std::remove_copy(hi, hi + count, cand, i) - cand);
        std::sort(cand, cand + count);
        exact_distances(i, cand, static_cast<std::size_t>(count), w2, cand_d);
        // (count < k cannot happen with finite values; then every sample is shortlisted.)
        double top_d = count < k ? std::numeric_limits<double>::infinity() : 0.0;
        for (int r = 0; r < count; ++r) top_d = std::max(top_d, cand_d[r]);
        // Every sample whose screen value may be within top_d (the bound of gram_state.hpp).
        const float flimit = gram_.limit(s, ai, top_d);
        std::uint32_t* list = s.shortlist.data();
        const int kept = gather(a, flimit, list);
        // The shortlisted samples that are not candidates, then their exact distances.
        s.rest.clear();
        {
            int c = 0;
            for (int r = 0; r < kept; ++r) {
                const Index j = list[r];
                while (c < count && cand[c] < j) ++c;
                if (c < count && cand[c] == j) continue;
                if (j != i) s.rest.push_back(j);
            }
        }
        const int n_rest = static_cast<int>(s.rest.size());
        s.rest_d.resize(s.rest.size());
        exact_distances(i, s.rest.data(), s.rest.size(), w2, s.rest_d.data());
        s.kept = kept;
        s.extra = n_rest;
        // The k nearest of both lists by (distance, index), which is what offering them in
        // index order gives: the candidates first, then the rest (usually farther).
        const int n_cand = count;
        count = 0;
        for (int c = 0; c < n_cand; ++c) keep_smallest(cand_d[c], cand[c], k, count, dist, idx);
        for (int r = 0; r < n_rest; ++r)
            keep_smallest(s.rest_d[static_cast<std::size_t>(r)], s.rest[static_cast<std::size_t>(r)],
                        k, count, dist, idx);
        return count;
    }

    static constexpr Index kScanBlock = 64;  // samples per block of the exhaustive scan

    // The samples whose screen value is at most t, in index order.
    int gather(const float* a, float t, std::uint32_t* out) const {
#ifdef FASTFS_HAVE_AVX2_FMA
        if (gram_.fma()) return kernels::gather_at_most_avx2(a, m_, t, out);
#endif
        return kernels::gather_at_most(a, 0, m_, t, out);
    }

    // The k-th smallest of x[0, n), 1 <= k <= n.
    static float kth_smallest(const float* x, Index n, int k, std::vector<float>& tmp) {
        tmp.assign(x, x + n);
        std::nth_element(tmp.begin(), tmp.begin() + (k - 1), tmp.end());
        return tmp[static_cast<std::size_t>(k - 1)];
    }

    // The exact distances of i to j[0..count) (knn_exact_distances: the feature-order kernel).
    template <class Emit>
    void exact_distances_emit(Index i, const Index* j, std::size_t count, const double* w2,
                              Emit&& emit) const {
        knn_exact_distances(X_, i, j, count, w2, emit);
    }
    void exact_distances(Index i, const Index* j, std::size_t count, const double* w2,
                         double* out) const {
        std::size_t q = 0;
        exact_distances_emit(i, j, count, w2, [&](Index, double d) { out[q++] = d; });
    }

    MatrixRef<T> X_;
    Index m_, n_;
    GramExpansion<T> gram_;
};

namespace detail {

// The k nearest of the samples ids[0 .. count) (all samples when ids is null), one query per
// sample through KnnQuery, in parallel over samples; rows of idx / dist as all_k_nearest's.
template <class T>
void query_rows(const KnnQuery<T>& q, const double* w2, int k, int threads, const Index* ids,
                Index count, Index* idx, double* dist, const StopHook& stop) {
    const Index m = q.n_samples();
    // Small problems on one thread: waking a team costs more than the whole pass.
    const bool small = static_cast<double>(m) * static_cast<double>(count) * 64.0 < 1e7;
    const int nt = small ? 1 : std::max(1, std::min<int>(threads, static_cast<int>(count)));
    // Allocated and prepared before the region (prepare() sizes everything a query uses):
    // nothing inside it may throw.
    std::vector<typename KnnQuery<T>::Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) q.prepare(w2, s);
    std::atomic<bool> halt{false};
    // Four samples per task: one sweep of the screen serves all four (query4()).
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (Index r0 = 0; r0 < count; r0 += 4) {
        if (halt.load(std::memory_order_relaxed)) continue;
        const int t = thread_index();
        if (t == 0 && stop && stop()) {
            halt.store(true);
            continue;
        }
        const int rows = static_cast<int>(std::min<Index>(4, count - r0));
        Index id[4];
        Index* ip[4];
        double* dp[4];
        for (int r = 0; r < rows; ++r) {
            id[r] = ids ? ids[r0 + r] : r0 + r;
            ip[r] = idx + static_cast<std::size_t>(id[r]) * static_cast<std::size_t>(k);
            dp[r] = dist + static_cast<std::size_t>(id[r]) * static_cast<std::size_t>(k);
        }
        q.query4(id, rows, w2, k, scratch[static_cast<std::size_t>(t)], ip, dp);
    }
    if (halt.load()) throw Interrupted();
}

// all_k_nearest's work on X, with the KnnQuery built only when some sample needs it: the
// blocked Gram screen (gram_knn.hpp) first, the row-by-row query for what it leaves.
template <class T, class GetQuery>
void k_nearest_lists(const MatrixRef<T>& X, GetQuery&& query, const double* w2, int k,
                     int threads, std::vector<Index>& idx, std::vector<double>& dist,
                     const StopHook& stop) {
    const Index m = X.rows();
    idx.assign(static_cast<std::size_t>(m) * k, 0);
    dist.assign(static_cast<std::size_t>(m) * k, 0.0);
    std::vector<Index> rest;
    if (gram_k_nearest(X, w2, k, threads, idx.data(), dist.data(), rest, stop)) {
        if (!rest.empty())
            query_rows(query(), w2, k, threads, rest.data(), static_cast<Index>(rest.size()),
                       idx.data(), dist.data(), stop);
        return;
    }
    query_rows(query(), w2, k, threads, nullptr, m, idx.data(), dist.data(), stop);
}

}  // namespace detail

// Per-sample neighbour lists under weights w2 (k per sample, nearest first, 1 <= k <= m - 1),
// in parallel over samples. Each list is the exhaustive scan's, so the lists do not depend on
// the thread count or the path. `stop` is polled between tiles or samples by OpenMP thread 0,
// which must be the thread that holds the caller's signal handling: pass an empty hook when
// calling from inside a parallel region.
template <class T>
void all_k_nearest(const KnnQuery<T>& q, const double* w2, int k, int threads,
                   std::vector<Index>& idx, std::vector<double>& dist,
                   const StopHook& stop = {}) {
    detail::k_nearest_lists(q.data(), [&]() -> const KnnQuery<T>& { return q; }, w2, k, threads,
                            idx, dist, stop);
}

namespace detail {

// knn_regression's work on X, the KnnQuery from query() when the row query is needed.
template <class T, class GetQuery>
KnnRegressionResult knn_regression_on(const MatrixRef<T>& X, GetQuery&& query, const double* y,
                                      const double* w, Index n_neighbors, double beta,
                                      int threads, const StopHook& stop) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[f] * w[f];
    std::vector<Index> idx;
    std::vector<double> dist;
    k_nearest_lists(X, query, w2.data(), k, resolve_threads(threads), idx, dist, stop);
    return soft_knn_result(y, m, k, idx, dist, beta);
}

}  // namespace detail

// The criterion under feature weights w (distances sum_f w_f^2 (x_f - z_f)^2). beta <= 0 asks
// for the default of SPEC 3.3 computed under these weights.
template <class T>
KnnRegressionResult knn_regression(const KnnQuery<T>& q, const double* y, const double* w,
                                   Index n_neighbors, double beta, int threads,
                                   const StopHook& stop = {}) {
    return detail::knn_regression_on(
        q.data(), [&]() -> const KnnQuery<T>& { return q; }, y, w, n_neighbors, beta, threads,
        stop);
}

// The same on X, the KnnQuery (its float32 columns) built only for the samples the Gram screen
// leaves, if any.
template <class T>
KnnRegressionResult knn_regression(const MatrixRef<T>& X, const double* y, const double* w,
                                   Index n_neighbors, double beta, int threads,
                                   const StopHook& stop = {}) {
    std::unique_ptr<KnnQuery<T>> q;
    return detail::knn_regression_on(
        X,
        [&]() -> const KnnQuery<T>& {
            if (!q) q = std::make_unique<KnnQuery<T>>(X);
            return *q;
        },
        y, w, n_neighbors, beta, threads, stop);
}

}  // namespace fastfs
