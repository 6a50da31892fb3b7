// The k nearest other samples of every sample under one weight vector (the soft kNN criterion's
// neighbour lists: knn_regression_score, the final e(w) of RGS and its default beta) from the
// blocked float32 Gram products of gram_screen.hpp, exact all the same.
//
// The screen, its tiles (J >= I only: a tile screens its rows against its columns and its
// columns against its rows) and the bounds of a pair are gram_screen.hpp's. What changes is
// the running bound: instead of the smallest upper bound of a class, each sample keeps the k
// smallest upper bounds it has seen (sorted, k values). Those belong to k different
// samples (each pair is offered once), so the largest of them, U, is at least the exhaustive
// scan's k-th smallest distance; every sample whose lower bound exceeds U is farther than that,
// and the others are candidates. The candidates then get knn_query.hpp's float64 distances
// (the feature-order kernel, the value every k nearest query returns) and the engine's tie
// rule (keep_smallest, offered in index order), so the lists are the exhaustive scan's, bit
// for bit.
//
// Per thread, per sample: the k bounds and a list of up to 3 k + 32 candidates (the samples
// that passed the float32 prefilter against U at the time, with their products); a full list
// first drops the candidates U now excludes (when U went down since it last did), then spills,
// and past the spill area the sample goes back to the caller for the row-by-row query. Memory
// O(threads m k), never m x m. Used when k <= kMaxK and there are at least kMinFeatures
// features; otherwise the row-by-row query.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "engine.hpp"
#include "gram_screen.hpp"

namespace fastfs {
namespace gram {

constexpr int kMaxK = 32;  // larger k: the row-by-row query (knn_query.hpp)
// Fewer features: the row-by-row query, whose pass per sample is short, while here every sample
// pays for about 40 updates of its k bounds (C++, one thread, k = ceil(log2 m): 2000 x 20 took
// 14 ms against 5.4 ms, 1000 x 300 9.0 against 9.8 ms, 2000 x 500 39 against 62 ms, 102 x 5966
// 2.5 against 6.5 ms; with two threads 1000 x 300 was 7.0 against 5.4 ms).
constexpr Index kMinFeatures = 400;
// With one thread on a CPU with the 16-bit tiles (gram_screen.hpp) the product costs half as
// much, and the crossover moves down (Python, one thread, Gaussian 1000 x n, k = 10: n = 200
// 7.2 against 6.6 ms, 250 7.9 against 8.2, 300 8.1 against 9.4 ms); with two threads the row
// query, which splits its samples without merging, stays ahead at 300 (6.9 against 5.7 ms).
constexpr Index kMinFeaturesOneThread16 = 256;
inline Index min_features(int threads) {
    return resolve_threads(threads) == 1 && kernels::cpu_has_avx512_vnni() ? kMinFeaturesOneThread16
                                                                          : kMinFeatures;
}

// One thread's k smallest upper bounds and candidate list for every sample.
struct KCandidates {
    int k = 0, cap = 0;
    std::vector<double> bounds;        // m x k: the smallest upper bounds seen, ascending
    std::vector<std::int32_t> filled;  // m: values in bounds
    std::vector<float> T32;            // m: float32 prefilter threshold from U
    std::vector<std::int32_t> count;   // m
    std::vector<double> pruned_at;     // m: U when the list was last pruned
    std::vector<std::int32_t> idx;     // m x cap
    std::vector<float> g;              // m x cap: their products (bounds taken when needed)
    std::vector<char> overflow;        // m
    Index marked = 0;                  // samples with overflow set
    std::vector<Spilled> spill;
    std::size_t spill_cap = 0;
    std::vector<std::size_t> first;    // after the tiles: sample i's spill[first[i] .. first[i+1])

    void init(Index m, int kk) {
        k = kk;
        cap = 3 * kk + 32;
        const std::size_t mm = static_cast<std::size_t>(m);
        bounds.resize(mm * static_cast<std::size_t>(k));
        filled.assign(mm, 0);
        T32.assign(mm, std::numeric_limits<float>::infinity());
        count.assign(mm, 0);
        pruned_at.assign(mm, std::numeric_limits<double>::infinity());
        idx.resize(mm * static_cast<std::size_t>(cap));
        g.resize(mm * static_cast<std::size_t>(cap));
        overflow.assign(mm, 0);
        marked = 0;
        spill.clear();
        spill_cap = 32 * mm + 4096;
        first.assign(mm + 1, 0);
    }
    // U of sample i: the k-th smallest upper bound seen, +inf before k were seen.
    double U(Index i) const {
        const std::size_t si = static_cast<std::size_t>(i), kk = static_cast<std::size_t>(k);
        return filled[si] == k ? bounds[si * kk + kk - 1] : std::numeric_limits<double>::infinity();
    }
    void index_spill(Index m) { group_spill(spill, first, m); }
};

// Screens samples against samples for their k nearest, given their float32 products g.
class KRowScreen {
public:
    KRowScreen(const Screen& s, KCandidates& st) : s_(s), st_(st) {}

    // Samples i0 .. i0+ri-1 against samples j0 .. j0+rj-1, whose products are the rows of G
    // (row a at G + a * ld). `diag`: the two ranges are the same (sample i0+a skips itself).
    void screen_rows(Index i0, Index ri, const float* G, Index ld, Index j0, Index rj, bool diag,
                     unsigned char* flags) {
        const float* P = s_.P32.data() + j0;
        const std::int32_t* code = s_.code.data() + j0;  // all 0: one class
        for (Index a = 0; a < ri; ++a) {
            const Index i = i0 + a;
            const float* g = G + a * ld;
            if (st_.filled[static_cast<std::size_t>(i)] < st_.k) {
                fill(i, P, g, j0, rj);
                continue;
            }
            const float t = st_.T32[static_cast<std::size_t>(i)];
            if (!diag) {
                float h, o;
                class_minima(P, g, code, 0, rj, &h, &o);
                if (!(h <= t)) continue;
            }
            mark(P, g, code, 0, rj, t, t, flags);
            offer_marked(flags, rj, i, j0, g, [&](Index j, float gj) { offer(i, j, gj); });
        }
    }

private:
    // Sample i's first values (fewer than k bounds yet): rather than all of them, the ones
    // that complete the k bounds first (the smallest float32 values), then those the prefilter
    // of the new U lets through, each offered once.
    void fill(Index i, const float* P, const float* g, Index j0, Index rj) {
        const int need = st_.k - st_.filled[static_cast<std::size_t>(i)];
        float v[kTile] = {};
        int nv = 0;
        for (Index q = 0; q < rj; ++q)
            if (j0 + q != i) v[nv++] = P[q] - 2.0f * g[q];
        if (nv <= need) {
            for (Index q = 0; q < rj; ++q)
                if (j0 + q != i) offer(i, j0 + q, g[q]);
            return;
        }
        std::nth_element(v, v + need - 1, v + nv);
        const float vk = v[need - 1];
        for (Index q = 0; q < rj; ++q)
            if (j0 + q != i && P[q] - 2.0f * g[q] <= vk) offer(i, j0 + q, g[q]);
        const float t = st_.T32[static_cast<std::size_t>(i)];  // k bounds now
        for (Index q = 0; q < rj; ++q) {
            const float x = P[q] - 2.0f * g[q];
            if (j0 + q != i && x > vk && x <= t) offer(i, j0 + q, g[q]);
        }
    }

    // Sample j, whose product with sample i is g, passed the prefilter (its lower bound may be
    // within U): a candidate. Its upper bound lowers U when it is among the k smallest; the
    // square root is taken only when the squared test says it may be (skipping an update is
    // safe, and the update itself compares the exact bound).
    void offer(Index i, Index j, float g) {
        const std::size_t si = static_cast<std::size_t>(i);
        const int k = st_.k;
        double* h = st_.bounds.data() + si * static_cast<std::size_t>(k);
        std::int32_t& n = st_.filled[si];
        if (n < k) {
            double up, low;
            pair_bounds(s_, i, j, g, up, low);
            insert(h, n++, up);
            if (n == k) st_.T32[si] = threshold32(s_, i, h[k - 1]);
        } else {
            const double Ni = s_.N[si], Nj = s_.N[static_cast<std::size_t>(j)];
            const double a = Ni + Nj - 2.0 * static_cast<double>(g);
            const double E = s_.Gamma * (Ni + Nj) + s_.tau;
            const double W = h[k - 1] / (1.0 + s_.kappa) * (1.0 + 1e-12) -
                             (s_.r[si] + s_.r[static_cast<std::size_t>(j)]);
            if (W > 0.0 && a + E < W * W) {
                double up, low;
                pair_bounds(s_, i, j, g, up, low);
                if (up < h[k - 1]) {
                    insert(h, k - 1, up);
                    st_.T32[si] = threshold32(s_, i, h[k - 1]);
                }
            }
        }
        push(i, j, g);
    }

    // Puts v into the ascending h[0, n] (h[n] is overwritten).
    static void insert(double* h, int n, double v) {
        int p = n;
        for (; p > 0 && h[p - 1] > v; --p) h[p] = h[p - 1];
        h[p] = v;
    }

    void push(Index i, Index j, float g) {
        const std::size_t si = static_cast<std::size_t>(i);
        const double U = st_.U(i);
        push_candidate(
            st_.idx.data() + si * static_cast<std::size_t>(st_.cap),
            st_.g.data() + si * static_cast<std::size_t>(st_.cap), st_.count[si], st_.cap, j, g,
            // Drop the candidates U now excludes (none, unless U went down since the last time).
            [&] {
                if (!(U < st_.pruned_at[si])) return false;
                st_.pruned_at[si] = U;
                return true;
            },
            [&](std::int32_t q, float gq) {
                double up, low;
                pair_bounds(s_, i, q, gq, up, low);
                return low <= U;
            },
            [&] {
                double up, low;
                pair_bounds(s_, i, j, g, up, low);
                if (low <= U)
                    spill_candidate(st_.spill, st_.spill_cap, st_.overflow[si], st_.marked,
                                    Spilled{static_cast<std::int32_t>(i),
                                            static_cast<std::int32_t>(j), 0, low});
            });
    }

    const Screen& s_;
    KCandidates& st_;
};

}  // namespace gram

// The exact distances of sample i to samples j[0 .. count) under squared weights w2, handed to
// emit(j[q], d): sum_f w2[f] (x_if - x_jf)^2 in float64, summed in feature order
// (kernels::sq_dist4_in_order), eight rows per call while more than four are left, then four
// (exact_rows4); each row's sum is alone, so the grouping changes no bit. The value every k
// nearest list of the soft kNN criterion holds, from this screen and from KnnQuery alike.
template <class T, class Emit>
void knn_exact_distances(const MatrixRef<T>& X, Index i, const Index* j, std::size_t count,
                         const double* w2, Emit&& emit) {
    const Index n = X.cols();
    const T* x = X.row(i).data();
    std::size_t q = 0;
    for (; q + 4 < count; q = std::min(q + 8, count)) {  // (a short group repeats its last row)
        const T* z[8];
        for (std::size_t r = 0; r < 8; ++r) z[r] = X.row(j[std::min(q + r, count - 1)]).data();
        double d[8];
        kernels::sq_dist8_in_order(x, z, w2, n, d);
        for (std::size_t r = 0; r < 8 && q + r < count; ++r) emit(j[q + r], d[r]);
    }
    exact_rows4(
        X, i, j + q, count - q,
        [&](const T* x, const T* z0, const T* z1, const T* z2, const T* z3, double* d) {
            kernels::sq_dist4_in_order(x, z0, z1, z2, z3, w2, n, d);
        },
        emit);
}

// The k nearest other samples of every sample under squared weights w2 (1 <= k <= m - 1),
// nearest first, equal distances to the lower index: sample i's in idx / dist[i k, (i + 1) k),
// the distances those of knn_exact_distances, bit for bit. Returns false, writing
// nothing, when the screen does not apply (few samples, fewer than gram::kMinFeatures
// features, k > gram::kMaxK, weights or values it cannot take); otherwise `rest` receives the
// samples whose candidate lists overflowed (their rows are not written: the caller queries
// them one by one). `stop` is polled by the calling thread between tiles.
template <class T>
bool gram_k_nearest(const MatrixRef<T>& X, const double* w2, int k, int threads, Index* idx,
                    double* dist, std::vector<Index>& rest, const StopHook& stop = {},
                    gram::TileProduct product = gram::TileProduct::automatic) {
    using namespace gram;
    const Index m = X.rows(), n = X.cols();
    rest.clear();
    if (k < 1 || k > kMaxK || k > m - 1 || n < min_features(threads) || !worth_screening(m, n))
        return false;
    struct Release {
        ~Release() { release_storage(); }
    } release;
    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> one_class =
        Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>::Zero(m);
    Screen s;
    if (!build_screen(X, Labels(one_class), w2, s, product)) return false;

    const auto tiles = upper_tiles(m);
    const int nt = tile_threads(s, tiles.size(), threads);
    std::vector<KCandidates> state(static_cast<std::size_t>(nt));

    StopPoll poll(stop);
    RegionErrors errors;
    std::vector<char> fallback(static_cast<std::size_t>(m), 0);
    // One region: the tiles, then (after one barrier) the merge of the threads' lists: the
    // candidates within the smallest U of all threads, in index order, get their float64
    // distances.
    screen_and_merge<KRowScreen, std::vector<Index>>(
        s, tiles, state, [m, k](KCandidates& st) { st.init(m, k); }, poll, errors,
        [&](Index i, std::vector<Index>& pending) {
            const std::size_t si = static_cast<std::size_t>(i);
            bool over = false;
            double U = std::numeric_limits<double>::infinity();
            for (const auto& st : state) {
                over = over || st.overflow[si];
                U = std::min(U, st.U(i));
            }
            if (over) {
                fallback[si] = 1;
                return;
            }
            pending.clear();
            const std::size_t cap = static_cast<std::size_t>(state[0].cap);
            for (const auto& st : state) {
                for (std::int32_t q = 0; q < st.count[si]; ++q) {
                    const std::size_t e = si * cap + static_cast<std::size_t>(q);
                    double up, low;
                    pair_bounds(s, i, st.idx[e], st.g[e], up, low);
                    if (low <= U) pending.push_back(st.idx[e]);
                }
                for (std::size_t q = st.first[si]; q < st.first[si + 1]; ++q)
                    if (st.spill[q].lo <= U) pending.push_back(st.spill[q].j);
            }
            std::sort(pending.begin(), pending.end());
            Index* ii = idx + si * static_cast<std::size_t>(k);
            double* dd = dist + si * static_cast<std::size_t>(k);
            int count = 0;
            knn_exact_distances(
                X, i, pending.data(), pending.size(), w2,
                [&](Index j, double d) { keep_smallest(d, j, k, count, dd, ii); });
            // Fewer than k candidates cannot happen (U is finite only after k offers, and
            // with U infinite every offered sample stayed); the row query takes it if it does.
            if (count < k) fallback[si] = 1;
        });
    for (Index i = 0; i < m; ++i)
        if (fallback[static_cast<std::size_t>(i)]) rest.push_back(i);
    return true;
}

}  // namespace fastfs
