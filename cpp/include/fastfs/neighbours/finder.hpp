// The nearest hit and miss reduction of the neighbour engine (engine.hpp): one distance row at a
// time, from one sample to all others, under the weighted squared distance
// sum_f w2[f] (x_f - z_f)^2, without an m x m matrix. Shared by the margins, Simba and Relief
// (SPEC 1.4): a sample is never its own neighbour, and among equal distances the lowest sample
// index wins.
//
// A query first screens every sample on the index's float32 copy of X (half the bytes, twice
// the SIMD lanes), keeping the float32-nearest hit and miss on the way, then takes the exact
// float64 distance of the shortlist only: every sample whose lower bound (WeightedL2) may reach
// the upper bound of that hit or miss. So the answer is bit for bit what an exhaustive float64
// scan gives, whatever the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "engine.hpp"

namespace fastfs {

template <class T>
class NeighbourFinder {
public:
    // Per-query work space; one per thread when queries run side by side.
    struct Scratch {
        WeightedL2<T> metric;       // the screen's weights and bounds (metric.on: screen used)
        std::vector<float> approx;  // float32 squared distances of the current query (or four)
    };

    // The screen's limits on the data: screen::kMaxAbs, screen::kMinFeatures.
    NeighbourFinder(const MatrixRef<T>& X, const Labels& codes)
        : index_(X, screen::kMinFeatures, screen::kMaxAbs, true), codes_(codes), m_(X.rows()),
          n_(X.cols()) {}

    // Sets up a query under weights w2 (length n_features, non-negative).
    void prepare(const double* w2, Scratch& s) const {
        s.metric.prepare(index_, w2);
        if (s.metric.on) s.approx.resize(4 * static_cast<std::size_t>(m_));
    }

    // Nearest hit and miss of sample i with the row split over `threads` threads (for
    // sequential algorithms such as Simba, whose steps cannot run side by side).
    HitMiss query_parallel(Index i, const double* w2, Scratch& s, int threads) const {
        const int nt = threads > 1 && m_ * n_ >= kRowParallelWork ? threads : 1;
        if (!s.metric.on)
            return split_row<HitMiss>(nt, [&](Index j0, Index j1) { return exhaustive(i, w2, j0, j1); });
        const Bound b =
            split_row<Bound>(nt, [&](Index j0, Index j1) { return approximate(i, s, j0, j1); });
        return refine(i, w2, s, b);
    }

    // The same query by the calling thread alone (callers run queries in parallel).
    HitMiss query(Index i, const double* w2, Scratch& s) const {
        if (!s.metric.on) return exhaustive(i, w2, 0, m_);
        return refine(i, w2, s, approximate(i, s, 0, m_));
    }

    // Queries of samples i0 .. i0+rows-1 (rows <= 4) under the same weights, sharing each
    // pass over the float32 data: a row of X is loaded once per four queries.
    void query_block(Index i0, int rows, const double* w2, Scratch& s, HitMiss* out) const {
        const Index ids[4] = {i0, i0 + 1, i0 + 2, i0 + 3};
        query_samples(ids, rows, w2, s, out);
    }

    // The same for any rows <= 4 samples ids[0 .. rows-1] (repeats allowed). The float32
    // values are only bounds, so computing (x_j - x_i)^2 instead of (x_i - x_j)^2 is harmless;
    // the exact distances are taken as in query(), so each answer equals query()'s.
    void query_samples(const Index* ids, int rows, const double* w2, Scratch& s,
                       HitMiss* out) const {
        if (!s.metric.on) {
            for (int r = 0; r < rows; ++r) out[r] = exhaustive(ids[r], w2, 0, m_);
            return;
        }
        Bound b[4];
        const RowMatrix<float>& X32 = index_.X32();
        auto query_row = [&](int r) { return X32.row(ids[std::min(r, rows - 1)]).data(); };
        float d[4];
        for (Index j = 0; j < m_; ++j) {
            s.metric.screen4(X32.row(j).data(), query_row(0), query_row(1), query_row(2),
                             query_row(3), n_, d);
            for (int r = 0; r < rows; ++r) {
                s.approx[static_cast<std::size_t>(r) * m_ + j] = d[r];
                if (j != ids[r]) b[r].offer(d[r], j, codes_[j] == codes_[ids[r]]);
            }
        }
        for (int r = 0; r < rows; ++r) out[r] = refine(ids[r], w2, s, b[r], r);
    }

    // What query_prefix() keeps between the queries of one sequential algorithm (a Simba
    // restart): the features in the order of the weights at the last rebuild, heaviest first,
    // and a copy of the float32 data's first `P.cols()` columns in that order (twice the
    // prefix the weights asked for then, so that the prefix can grow until the next rebuild).
    struct PrefixState {
        std::vector<Index> perm;
        RowMatrix<float> P;
        std::vector<float> w2p;
        std::vector<Index> pending, kept;
        std::vector<float> head, heads;
        std::vector<std::uint32_t> open;  // the samples the second pass looks at
        double max_norm = 0.0;  // the largest norm of the owner's rows (they never change)
        const void* owner = nullptr;  // the finder the state was built by
        Index queries = 0, next_rebuild = 1;
        bool concentrated = false;
    };

    // The nearest hit and miss of sample i as query() finds them (bit for bit), for weights
    // concentrated on few features (Simba's weights after some steps): each sample's screen
    // value is first summed over the heaviest features only (the prefix holding 7/8 of the
    // weight), and a sample whose partial sum already cannot reach the best upper bound seen
    // so far for its class is dropped. The terms are non-negative, so a partial float32 sum is
    // at most the full one and its lower bound (WeightedL2, whose error analysis holds for any
    // subset and order of the terms) bounds the true distance from below: a dropped sample
    // cannot be the nearest of its class. The survivors get their full screen value and the
    // shortlist refines as in query(). Weights spread over more than half the features take
    // the same two stages on wide data (kHalvesMinFeatures or more), the features in their own
    // order split in halves. Returns false (nothing done) where it does not apply: no screen,
    // spread weights on fewer features, or a row split over threads. Call prepare() first.
    bool query_prefix(Index i, const double* w2, Scratch& s, PrefixState& st, int threads,
                      HitMiss& out) const {
        if (!s.metric.on || (threads > 1 && m_ * n_ >= kRowParallelWork)) return false;
        const std::vector<float>& w2s = s.metric.w2s;
        if (st.owner != this) {  // a state carried over from another finder starts anew
            st = PrefixState{};
            st.owner = this;
            for (Index j = 0; j < m_; ++j) st.max_norm = std::max(st.max_norm, index_.norm(j));
        }
        if (++st.queries >= st.next_rebuild) {
            st.next_rebuild = st.queries + std::max<Index>(16, std::min<Index>(st.queries, 256));
            // Concentrated: the heaviest half of the features holds 7/8 of the weight (a
            // selection, then a sort only when it pays).
            std::vector<float> sorted(w2s);
            const auto half = sorted.begin() + static_cast<std::ptrdiff_t>(n_ / 2);
            std::nth_element(sorted.begin(), half, sorted.end(), std::greater<float>());
            double light = 0.0, total = 0.0;
            for (auto it = sorted.begin(); it != sorted.end(); ++it) {
                total += *it;
                if (it >= half) light += *it;
            }
            st.concentrated = light <= total / 8.0;
            if (st.concentrated) {
                std::vector<Index> order(static_cast<std::size_t>(n_));
                for (Index f = 0; f < n_; ++f) order[static_cast<std::size_t>(f)] = f;
                std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
                    return w2s[static_cast<std::size_t>(a)] > w2s[static_cast<std::size_t>(b)];
                });
                st.perm = std::move(order);
                const Index cols = std::min(n_, 2 * prefix_length(w2s.data(), st.perm.data()));
                const RowMatrix<float>& X32 = index_.X32();
                st.P.resize(m_, cols);
                for (Index j = 0; j < m_; ++j) {
                    const float* x = X32.row(j).data();
                    float* p = st.P.row(j).data();
                    for (Index k = 0; k < cols; ++k) p[k] = x[st.perm[static_cast<std::size_t>(k)]];
                }
            }
        }
        // Spread weights on wide data: the same two stages in the features' own order on the
        // float32 copy, the first half first (a sample whose half sum already exceeds its
        // class's bound skips the other half).
        const RowMatrix<float>& X32 = index_.X32();
        const RowMatrix<float>* P = &X32;
        const float* wp = w2s.data();
        Index h = std::min(n_, (n_ / 2 + 7) / 8 * 8);
        if (st.concentrated) {
            const Index hc = prefix_length(w2s.data(), st.perm.data());
            if (hc * 2 <= n_) {
                // (A prefix longer than the copy holds is cut to it: more samples then go on
                // to their full value, the answer is the same.)
                h = std::min(hc, st.P.cols());
                st.w2p.resize(static_cast<std::size_t>(h));
                for (Index k = 0; k < h; ++k)
                    st.w2p[static_cast<std::size_t>(k)] = w2s[static_cast<std::size_t>(st.perm[static_cast<std::size_t>(k)])];
                P = &st.P;
                wp = st.w2p.data();
            }
        }
        if (P == &X32 && n_ < kHalvesMinFeatures) return false;
        const float* xi = P->row(i).data();
        float* approx = s.approx.data();
        const double inf = std::numeric_limits<double>::infinity();
        const float inf32 = std::numeric_limits<float>::infinity();
        double reach[2] = {inf, inf};  // smallest upper bound of a full screen value: miss, hit
        st.pending.clear();
        st.head.clear();
        st.kept.clear();
        // far[c]: a partial value beyond it cannot reach class c's bound, whatever the sample
        // (checked before may_reach(), which reads the sample's norm).
        double far[2] = {inf, inf};
        // The full screen value of the pending samples, four at a time: the prefix copy holds
        // only the heaviest features, so there the whole row of X32 (query()'s value); in
        // halves, the second half added to the first.
        auto finish = [&] {
            const std::size_t count = st.pending.size();
            for (std::size_t q = 0; q < count; q += 4) {
                auto row = [&](std::size_t r) {
                    return X32.row(st.pending[std::min(q + r, count - 1)]).data();
                };
                float d[4];
                if (P == &X32)
                    kernels::sq_dist4(xi + h, row(0) + h, row(1) + h, row(2) + h, row(3) + h,
                                      wp + h, n_ - h, d);
                else
                    s.metric.screen4(X32.row(i).data(), row(0), row(1), row(2), row(3), n_, d);
                for (std::size_t r = 0; r < 4 && q + r < count; ++r) {
                    const Index j = st.pending[q + r];
                    const float a = P == &X32 ? st.head[q + r] + d[r] : d[r];
                    approx[j] = a;
                    st.kept.push_back(j);
                    const bool same = codes_[j] == codes_[i];
                    reach[same] = std::min(reach[same], s.metric.upper(index_, i, j, a));
                }
            }
            st.pending.clear();
            st.head.clear();
            for (int c = 0; c < 2; ++c) far[c] = s.metric.reach_limit(index_, i, reach[c], st.max_norm);
        };
        // Every sample's partial value first; the smallest of each class then sets its class's
        // bound, so that the second pass drops all but the samples near the final bounds (a
        // pass in index order would keep every sample met before the bounds are tight).
        st.heads.resize(static_cast<std::size_t>(m_) + 4);
        float* part = st.heads.data();
        for (Index j0 = 0; j0 < m_; j0 += 4) {
            auto row = [&](Index r) { return P->row(std::min(j0 + r, m_ - 1)).data(); };
            kernels::sq_dist4(xi, row(0), row(1), row(2), row(3), wp, h, part + j0);
        }
        // The smallest of each class (the sample itself set apart as +inf).
        const std::int64_t own = codes_[i];
        part[i] = inf32;
        float low[2];  // the other classes', the own class's
        kernels::class_minima(part, codes_.data(), m_, own, low[1], low[0]);
        Index seed[2] = {-1, -1};
        for (Index j = 0; j < m_ && (seed[0] < 0 || seed[1] < 0); ++j) {
            const int same = codes_[j] == own;
            if (seed[same] < 0 && part[j] == low[same] && j != i) seed[same] = j;
        }
        for (const Index j : seed)
            if (j >= 0) {
                st.pending.push_back(j);
                st.head.push_back(part[j]);
            }
        finish();
        // The second pass looks only at the samples not above a float32 cut beyond which a
        // partial value is out of reach of every class that has a seed (one vectorised compare
        // a sample; NaN values are kept, as every other pass keeps them), and tests those
        // against their own class's bound as the bounds tighten. A class without a seed has no
        // other sample but NaN ones.
        double far_seeded = -inf;
        for (int c = 0; c < 2; ++c)
            if (seed[c] >= 0) far_seeded = std::max(far_seeded, far[c]);
        float cut = -inf32;  // (no seed at all: the NaN values only)
        if (far_seeded >= 0.0) {  // (far + tiny) rounded up, twice over
            const double v = (far_seeded + s.metric.tiny) * (1.0 + 0x1.0p-40);
            cut = v <= static_cast<double>(std::numeric_limits<float>::max())
                      ? screen::round_up_to_float(v)
                      : inf32;
        }
        st.open.resize(static_cast<std::size_t>(m_) + 8);
        const int n_open = kernels::gather_not_above(part, m_, cut, st.open.data());
        for (int q = 0; q < n_open; ++q) {
            const Index j = st.open[static_cast<std::size_t>(q)];
            if (j == i || j == seed[0] || j == seed[1]) continue;
            const int same = codes_[j] == own;
            if (s.metric.beyond(part[j], far[same])) continue;
            const double bound = reach[same];
            if (bound < inf && !s.metric.may_reach(index_, i, j, part[j], bound)) continue;
            st.pending.push_back(j);
            st.head.push_back(part[j]);
            if (st.pending.size() >= 16) finish();
        }
        finish();
        // The shortlist against the smallest upper bound of each class (no larger than the one
        // query() takes), from the samples that got their full value: a dropped sample's lower
        // bound (from its partial value: a sum over part of the terms, bounded as any order
        // and subset of them) already exceeded a bound at least as large, so it stays out.
        std::sort(st.kept.begin(), st.kept.end());
        st.pending.clear();
        for (const Index j : st.kept)
            if (s.metric.may_reach(index_, i, j, approx[j], reach[codes_[j] == own]))
                st.pending.push_back(j);
        HitMiss best;
        exact_distances(index_, s.metric, i, st.pending.data(), st.pending.size(), w2,
                        [&](Index j, double d) { best.offer(d, j, codes_[j] == own); });
        st.pending.clear();
        out = best;
        return true;
    }

private:
    // query_prefix() splits the features of spread weights in halves from this many features
    // (measured: prostate_ge, 5966 features, 15% faster steps; 1000 x 300 data 20% slower).
    static constexpr Index kHalvesMinFeatures = 2048;

    // The hit and the miss with the smallest float32 distance. The upper bound of their true
    // distance bounds the true minimum from above (it may exceed the smallest upper bound of all
    // samples, which only lengthens the shortlist a little and saves a square root per sample).
    struct Bound {
        float hit_a = std::numeric_limits<float>::infinity(), miss_a = hit_a;
        Index hit = -1, miss = -1;
        void offer(float a, Index j, bool same_class) {
            if (same_class) {
                if (hit < 0 || a < hit_a) { hit_a = a; hit = j; }
            } else if (miss < 0 || a < miss_a) {
                miss_a = a;
                miss = j;
            }
        }
        void merge(const Bound& o) {
            if (o.hit >= 0) offer(o.hit_a, o.hit, true);
            if (o.miss >= 0) offer(o.miss_a, o.miss, false);
        }
    };

    // part(j0, j1) over nt shares of the samples, one a thread, merged in thread order.
    template <class R, class Part>
    R split_row(int nt, Part&& part) const {
        std::vector<R> parts(static_cast<std::size_t>(nt));
#pragma omp parallel num_threads(nt)
        parts[static_cast<std::size_t>(thread_index())] =
            part(chunk(thread_index(), nt), chunk(thread_index() + 1, nt));
        R out;
        for (const auto& p : parts) out.merge(p);
        return out;
    }
    // Thread t's share of the samples, starting at a multiple of 4.
    Index chunk(int t, int nt) const {
        return t >= nt ? m_ : std::min(m_, (m_ * t / nt) & ~Index{3});
    }

    // The shortest prefix of the features in `order` (identity when null) holding 7/8 of the
    // screen weights, rounded up to a multiple of 8 (a vector of floats).
    Index prefix_length(const float* w2s, const Index* order) const {
        double total = 0.0;
        for (Index f = 0; f < n_; ++f) total += w2s[f];
        double run = 0.0;
        Index k = 0;
        while (k < n_ && run < 0.875 * total) run += w2s[order ? order[k++] : k++];
        return std::min(n_, (std::max<Index>(k, 8) + 7) / 8 * 8);
    }

    // The float32-nearest hit and miss of [j0, j1), the screen values into s.approx.
    Bound approximate(Index i, Scratch& s, Index j0, Index j1) const {
        return scan<Bound, float>(
            i, index_.X32(), j0, j1,
            [&](const float* x, const float* z0, const float* z1, const float* z2, const float* z3,
                float* d) { s.metric.screen4(x, z0, z1, z2, z3, n_, d); },
            s.approx.data());
    }

    // Every sample of [j0, j1) in float64, four rows per kernel call.
    HitMiss exhaustive(Index i, const double* w2, Index j0, Index j1) const {
        return scan<HitMiss, double>(
            i, index_.X(), j0, j1,
            [&](const T* x, const T* z0, const T* z1, const T* z2, const T* z3, double* d) {
                WeightedL2<T>::exact4(x, z0, z1, z2, z3, w2, n_, d);
            },
            nullptr);
    }

    // The hit and miss of sample i among rows [j0, j1) of M by kernel (R: Bound on float32
    // values, also stored in approx; HitMiss on exact ones).
    template <class R, class S, class M, class Kernel>
    R scan(Index i, const M& X, Index j0, Index j1, Kernel&& kernel, float* approx) const {
        R best;
        const auto* xi = X.row(i).data();
        scan_rows4<S>(
            j0, j1, [&](Index j) { return X.row(j).data(); },
            [&](const auto* z0, const auto* z1, const auto* z2, const auto* z3, S* d) {
                kernel(xi, z0, z1, z2, z3, d);
            },
            [&](Index j, S d) {
                if constexpr (std::is_same<S, float>::value) approx[j] = d;
                if (j != i) best.offer(d, j, codes_[j] == codes_[i]);
            });
        return best;
    }

    // Exact float64 distances of the shortlisted samples (lower bound <= the upper bound).
    HitMiss refine(Index i, const double* w2, const Scratch& s, const Bound& b,
                   int slot = 0) const {
        HitMiss best;
        const float* a = s.approx.data() + static_cast<std::size_t>(slot) * m_;
        const double inf = std::numeric_limits<double>::infinity();
        const double hit_bound = b.hit >= 0 ? s.metric.upper(index_, i, b.hit, a[b.hit]) : inf;
        const double miss_bound = b.miss >= 0 ? s.metric.upper(index_, i, b.miss, a[b.miss]) : inf;
        refine_shortlist(
            index_, s.metric, i, a, w2,
            [&](Index j) { return codes_[j] == codes_[i] ? hit_bound : miss_bound; },
            [&](Index j, double d) { best.offer(d, j, codes_[j] == codes_[i]); });
        return best;
    }

    NeighbourIndex<T> index_;
    Labels codes_;
    Index m_, n_;
};

// Nearest hit and miss (among all samples) of the query samples q0 .. q1-1, in parallel over
// them; out[i - q0] is sample i's. `stop` is polled by the calling thread between groups of
// four samples. With `step_done`, the samples go in steps of pass_step(q1 - q0) and
// step_done(i0, i1) is called after each (samples [i0, i1) are then final); returning true
// ends the pass there, and the function returns the end of the samples done. A sample's
// neighbours do not depend on the range it is queried in (fastfs.dask splits the queries
// into blocks and gets the answer of one pass).
template <class T>
Index nearest_hit_miss_range(const MatrixRef<T>& X, const Labels& codes, const double* w2,
                             int threads, Index q0, Index q1, std::vector<HitMiss>& out,
                             const StopHook& stop = {},
                             const std::function<bool(Index, Index)>& step_done = {}) {
    require_index(0 <= q0 && q0 <= q1 && q1 <= X.rows(), "query range out of bounds");
    const NeighbourFinder<T> finder(X, codes);
    out.assign(static_cast<std::size_t>(q1 - q0), HitMiss{});
    StopPoll poll(stop);
    RegionErrors errors;
    const Index step = pass_step(q1 - q0, static_cast<bool>(step_done));
    for (Index lo = q0; lo < q1; lo += step) {
        const Index hi = std::min(q1, lo + step);
#pragma omp parallel num_threads(threads)
        {
            typename NeighbourFinder<T>::Scratch s;
            errors.run([&] { finder.prepare(w2, s); });
#pragma omp for schedule(dynamic, 2)
            for (Index i0 = lo; i0 < hi; i0 += 4) {
                if (poll.stopped()) continue;
                errors.run([&] {
                    finder.query_block(i0, static_cast<int>(std::min<Index>(4, hi - i0)), w2, s,
                                       out.data() + (i0 - q0));
                });
            }
        }
        errors.rethrow();
        poll.check();
        if (step_done && step_done(lo, hi)) return hi;
    }
    return q1;
}

// Nearest hit and miss of every sample (the range 0 .. m-1 above).
template <class T>
Index all_nearest_hit_miss(const MatrixRef<T>& X, const Labels& codes, const double* w2,
                           int threads, std::vector<HitMiss>& out, const StopHook& stop = {},
                           const std::function<bool(Index, Index)>& step_done = {}) {
    return nearest_hit_miss_range(X, codes, w2, threads, 0, X.rows(), out, stop, step_done);
}

template <class T>
std::vector<HitMiss> all_nearest_hit_miss(const MatrixRef<T>& X, const Labels& codes,
                                          const double* w2, int threads) {
    std::vector<HitMiss> out;
    all_nearest_hit_miss(X, codes, w2, threads, out);
    return out;
}

}  // namespace fastfs
