// Leave-one-out neighbour queries without an m x m matrix: one distance row at a time, from
// one sample to all others, under the weighted squared distance sum_f w2[f] (x_f - z_f)^2.
// Shared by the margins, Simba and Relief (SPEC 1.4): a sample is never its own neighbour, and
// among equal distances the lowest sample index wins.
//
// A query first shortlists candidates from a float32 copy of X (half the bytes, twice the
// SIMD lanes), then takes the exact float64 distance of the shortlisted samples only. The
// shortlist keeps every sample whose distance could be the minimum under rigorous bounds on
// the float32 error (rounding of the products and the sum, conversion of X and w2), so the
// answer is bit for bit what an exhaustive float64 scan gives, whatever the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

// Nearest other sample with the same label (hit) and with another label (miss); index -1 and
// distance +inf when there is none. Distances are squared.
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
};

template <class T>
class NeighbourFinder {
public:
    // Per-query work space; one per thread when queries run side by side.
    struct Scratch {
        std::vector<float> w2;      // the weights in float32
        std::vector<float> approx;  // float32 squared distances of the current query (or four)
        double gamma = 0;           // relative error bound of a float32 squared distance
        double conv = 0;            // conversion error per unit of norm (distance, not squared)
        double tiny = 0;            // absolute slack for float32 underflow (squared)
        bool shortlist = false;     // false: scan exhaustively in float64
    };

    NeighbourFinder(const MatrixRef<T>& X, const Labels& codes)
        : X_(X), codes_(codes), m_(X.rows()), n_(X.cols()) {
        double top = 0.0;
        for (Index i = 0; i < m_; ++i)
            for (Index f = 0; f < n_; ++f)
                top = std::max(top, std::abs(static_cast<double>(X(i, f))));
        // float32 must hold the data and its weighted squares with room to spare; with few
        // features the extra pass costs more than it saves (measured crossover: ~64).
        usable_ = top < 1e15 && n_ >= kShortlistMinFeatures;
        if (!usable_) return;
        X32_ = X.template cast<float>();
        norm_.resize(static_cast<std::size_t>(m_));
        for (Index i = 0; i < m_; ++i)
            norm_[static_cast<std::size_t>(i)] = X.row(i).template cast<double>().norm();
    }

    // Sets up a query under weights w2 (length n_features, non-negative).
    void prepare(const double* w2, Scratch& s) const {
        double top = 0.0;
        for (Index f = 0; f < n_; ++f) top = std::max(top, w2[f]);
        s.shortlist = usable_ && top > 0.0 && std::isfinite(top);
        if (!s.shortlist) return;
        // The screen works on the weights times a power of two that brings the largest into
        // [1, 2): scaling every weight by 2^k scales every distance by 2^k, which changes no
        // comparison, and keeps the float32 pass out of the subnormal range however small the
        // weights are (Simba's irrelevant weights decay to 1e-20 and below; subnormal
        // arithmetic is tens of times slower). The bounds below are for the scaled distances,
        // the exact distances use w2 itself. A scaled weight below kFlush (relative to the
        // largest) enters the screen as 0: its terms would be subnormal or close to it.
        const int e = std::ilogb(top);
        top = std::ldexp(top, -e);
        s.w2.resize(static_cast<std::size_t>(n_));
        for (Index f = 0; f < n_; ++f) {
            const double v = std::ldexp(w2[f], -e);
            s.w2[static_cast<std::size_t>(f)] = v < kFlush ? 0.0f : static_cast<float>(v);
        }
        s.approx.resize(4 * static_cast<std::size_t>(m_));
        const double u = 0x1.0p-24;  // float32 unit roundoff
        // Every term (difference, square, weight, product) and every addition of the n-term sum
        // of non-negative terms rounds once: relative error at most gamma_{n+4}. Doubled, which
        // also covers the float64 rounding of the exact distances the shortlist is compared by.
        const double k = static_cast<double>(n_ + 4) * u;
        s.gamma = 2.0 * k / (1.0 - k);
        // Converting X to float32 moves each point by at most u * |x| per coordinate, so a
        // weighted distance moves by at most u * sqrt(max w2) * (||x_i|| + ||x_j||).
        // Converting w2 errs by u w2 (counted in gamma) plus, for a weight flushed to 0, less
        // than kFlush absolute: sum_f |dw2_f| v_f^2 <= kFlush ||v||^2, so the distance moves by
        // at most sqrt(kFlush) (||x_i|| + ||x_j||).
        const bool exact_input = std::is_same<T, float>::value;
        s.conv = (exact_input ? 0.0 : 2.0 * u * std::sqrt(top)) + std::sqrt(kFlush);
        // Products and sums below float32's smallest normal may flush to zero: absolute slack.
        s.tiny = 4.0 * static_cast<double>(n_) * (top + 1.0) * 0x1.0p-126;
    }

    // Nearest hit and miss of sample i with the row split over `threads` threads (for
    // sequential algorithms such as Simba, whose steps cannot run side by side).
    HitMiss query_parallel(Index i, const double* w2, Scratch& s, int threads) const {
        const int nt = threads > 1 && m_ * n_ >= kParallelWork ? threads : 1;
        if (!s.shortlist) {
            std::vector<HitMiss> part(static_cast<std::size_t>(nt));
#pragma omp parallel num_threads(nt)
            part[static_cast<std::size_t>(thread_id())] =
                exhaustive(i, w2, chunk(thread_id(), nt), chunk(thread_id() + 1, nt));
            HitMiss best;
            for (const auto& p : part) merge(best, p);
            return best;
        }
        std::vector<Bound> part(static_cast<std::size_t>(nt));
#pragma omp parallel num_threads(nt)
        part[static_cast<std::size_t>(thread_id())] =
            approximate(i, s, chunk(thread_id(), nt), chunk(thread_id() + 1, nt));
        Bound b;
        for (const auto& p : part) b.merge(p);
        return refine(i, w2, s, b);
    }

    // The same query by the calling thread alone (callers run queries in parallel).
    HitMiss query(Index i, const double* w2, Scratch& s) const {
        if (!s.shortlist) return exhaustive(i, w2, 0, m_);
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
        if (!s.shortlist) {
            for (int r = 0; r < rows; ++r) out[r] = exhaustive(ids[r], w2, 0, m_);
            return;
        }
        Bound b[4];
        auto query_row = [&](int r) { return X32_.row(ids[std::min(r, rows - 1)]).data(); };
        float d[4];
        for (Index j = 0; j < m_; ++j) {
            kernels::sq_dist4(X32_.row(j).data(), query_row(0), query_row(1), query_row(2),
                                   query_row(3), s.w2.data(), n_, d);
            for (int r = 0; r < rows; ++r) {
                s.approx[static_cast<std::size_t>(r) * m_ + j] = d[r];
                if (j != ids[r]) b[r].offer(d[r], j, codes_[j] == codes_[ids[r]]);
            }
        }
        for (int r = 0; r < rows; ++r) out[r] = refine(ids[r], w2, s, b[r], r);
    }

private:
    // A row split across threads pays only when it is long: a parallel region per step costs
    // microseconds, and far more when a core is busy elsewhere and the team waits for it.
    static constexpr Index kParallelWork = Index{1} << 18;
    static constexpr Index kShortlistMinFeatures = 64;
    // Scaled weights (the largest in [1, 2)) below this enter the float32 screen as 0.
    static constexpr double kFlush = 0x1.0p-100;

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

    static int thread_id() {
#ifdef FASTFS_HAVE_OPENMP
        return omp_get_thread_num();
#else
        return 0;
#endif
    }
    static void merge(HitMiss& into, const HitMiss& o) {
        if (o.hit >= 0) into.offer(o.hit_d, o.hit, true);
        if (o.miss >= 0) into.offer(o.miss_d, o.miss, false);
    }
    // Thread t's share of the samples, starting at a multiple of 4.
    Index chunk(int t, int nt) const {
        return t >= nt ? m_ : std::min(m_, (m_ * t / nt) & ~Index{3});
    }

    // Upper bound of the true distance (not squared) of sample j.
    double upper(const Scratch& s, Index i, Index j, int slot) const {
        const double a = static_cast<double>(s.approx[static_cast<std::size_t>(slot) * m_ + j]);
        return std::sqrt((a + s.tiny) / (1.0 - s.gamma)) + radius(s, i, j);
    }
    // How far converting X to float32 may move the distance between samples i and j.
    double radius(const Scratch& s, Index i, Index j) const {
        return s.conv * (norm_[static_cast<std::size_t>(i)] + norm_[static_cast<std::size_t>(j)]);
    }
    // Can sample j's true distance be <= bound? Its lower bound
    // sqrt(max(0, a - tiny) / (1 + gamma)) - radius, compared without a square root.
    bool may_reach(const Scratch& s, Index i, Index j, double bound, int slot) const {
        const double a = static_cast<double>(s.approx[static_cast<std::size_t>(slot) * m_ + j]);
        const double t = bound + radius(s, i, j);
        return std::max(0.0, a - s.tiny) <= (1.0 + s.gamma) * (t * t);
    }

    Bound approximate(Index i, Scratch& s, Index j0, Index j1) const {
        Bound b;
        const float* xi = X32_.row(i).data();
        float d[4];
        for (Index j = j0; j < j1; j += 4) {
            auto row = [&](Index r) { return X32_.row(std::min(j + r, j1 - 1)).data(); };
            kernels::sq_dist4(xi, row(0), row(1), row(2), row(3), s.w2.data(), n_, d);
            for (Index r = 0; r < 4 && j + r < j1; ++r) {
                const Index jj = j + r;
                s.approx[static_cast<std::size_t>(jj)] = d[r];
                if (jj != i) b.offer(d[r], jj, codes_[jj] == codes_[i]);
            }
        }
        return b;
    }

    // Exact float64 distances of the shortlisted samples (lower bound <= the upper bound).
    HitMiss refine(Index i, const double* w2, const Scratch& s, const Bound& b,
                   int slot = 0) const {
        HitMiss best;
        const double inf = std::numeric_limits<double>::infinity();
        const double hit_bound = b.hit >= 0 ? upper(s, i, b.hit, slot) : inf;
        const double miss_bound = b.miss >= 0 ? upper(s, i, b.miss, slot) : inf;
        Index pending[4];
        int count = 0;
        auto flush = [&] {
            double d[4];
            auto row = [&](int r) { return X_.row(pending[std::min(r, count - 1)]).data(); };
            kernels::sq_dist4(X_.row(i).data(), row(0), row(1), row(2), row(3), w2, n_, d);
            for (int r = 0; r < count; ++r)
                best.offer(d[r], pending[r], codes_[pending[r]] == codes_[i]);
            count = 0;
        };
        for (Index j = 0; j < m_; ++j) {
            if (j == i) continue;
            if (may_reach(s, i, j, codes_[j] == codes_[i] ? hit_bound : miss_bound, slot)) {
                pending[count++] = j;
                if (count == 4) flush();
            }
        }
        if (count) flush();
        return best;
    }

    // Every sample of [j0, j1) in float64, four rows per kernel call.
    HitMiss exhaustive(Index i, const double* w2, Index j0, Index j1) const {
        HitMiss best;
        const T* xi = X_.row(i).data();
        double d[4];
        for (Index j = j0; j < j1; j += 4) {
            auto row = [&](Index r) { return X_.row(std::min(j + r, j1 - 1)).data(); };
            kernels::sq_dist4(xi, row(0), row(1), row(2), row(3), w2, n_, d);
            for (Index r = 0; r < 4 && j + r < j1; ++r)
                if (j + r != i) best.offer(d[r], j + r, codes_[j + r] == codes_[i]);
        }
        return best;
    }

    MatrixRef<T> X_;
    Labels codes_;
    Index m_, n_;
    bool usable_ = false;
    RowMatrix<float> X32_;
    std::vector<double> norm_;  // ||x_j||_2 in float64
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
