// The neighbour engine: exact leave-one-out neighbour searches with a float32 screen, shared by
// the margins, Simba and Relief (nearest hit and miss, finder.hpp), ReliefF (k nearest of every
// class), SURF (every sample within a radius), and the k nearest of the soft kNN criterion
// (knn_query.hpp, screened by the Gram expansion of gram_state.hpp, whose bounds are built from
// the rounding primitives here; its tie rule and grouped exact distances are the ones below).
//
// The parts, each defined once here:
//  * the tie rule: among equal distances the lower sample index wins (SPEC 1.4), nearer() and
//    keep_smallest(), whatever order the candidates are offered in;
//  * the rounding bounds of a float32 screen (screen::gamma, WeightedL2::prepare, ScaledL1):
//    an exact float64 distance d and the float32 value a the screen computes for the same pair
//    satisfy lower(a) <= d <= upper(a), derived below for each metric, with the limits of the
//    data a screen takes (screen::kMaxAbs, screen::kMinFeatures) and the bound of the float32
//    distance-state screen of the 1-NN accuracy criterion (screen::state_update_error);
//  * an index built once per X (NeighbourIndex: a float32 copy, norms, column maxima, and the
//    test of whether float32 may screen the data at all);
//  * metrics: the weighted squared Euclidean distance (WeightedL2) and the Manhattan distance on
//    pre-scaled rows (ScaledL1, ReliefF's min-max scaled data). A metric supplies the float32
//    and the exact kernel for four rows at a time and the bounds; a new metric (mixed or
//    missing values, say) supplies the same members: screen4(), exact4(), upper(), may_reach().
//  * the exact distances of any rows, four per kernel call (exact_rows4()), whatever the kernel;
//  * reductions on top: the shortlist (refine_shortlist(): every sample whose lower bound may
//    reach its group's bound gets its exact distance), the k-th smallest screen value of every
//    class (class_bounds()), k nearest of every class (k_nearest_per_class()), k nearest
//    overall (k_nearest()) and the split of a row at a radius (within_radius()). The nearest
//    hit and miss, the hot path of the margins, fuses its bound into the screen pass
//    (NeighbourFinder, finder.hpp).
// Every answer is the one an exhaustive float64 scan with the same exact kernel gives, bit for
// bit, for any thread count: the screen only decides which exact distances to compute.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/memory.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../data/class_layout.hpp"
#include "../simd/pair_kernels.hpp"

namespace fastfs {

// Below this many distance terms a row (one query against every sample) is computed by one
// thread, in every sequential algorithm that queries a row per step (Simba, RGS, SKS). A
// parallel region per step costs microseconds on idle cores, but when a core is busy elsewhere
// every step waits for the descheduled thread: on the shared 2-core development machine (load
// ~4), splitting the rows of a 1000 x 500 problem made an RGS epoch 10x slower than one thread
// (1.6 s against 0.15 s); with the threshold at 2^18, a Simba pass on 1000 x 300 duplicated
// rows took 80 ms with n_jobs=2 against 39 ms on one thread, at load 1. Rows of 4M terms take
// about a millisecond, long enough for that wait not to dominate.
constexpr Index kRowParallelWork = Index{1} << 22;

// ---------------------------------------------------------------------------------------------
// The tie rule.

// Is (d, j) before (best_d, best)? Smaller distance first; equal distances to the lower index.
template <class V>
inline bool nearer(V d, Index j, V best_d, Index best) {
    return d < best_d || (d == best_d && j < best);
}

// Keeps the k smallest (value, index) pairs in val/idx[0, count), in the order of nearer():
// the same k pairs in the same order, whatever order the pairs are offered in.
template <class V>
inline void keep_smallest(V v, Index j, int k, int& count, V* val, Index* idx) {
    if (count == k && !nearer(v, j, val[k - 1], idx[k - 1])) return;
    int p = count < k ? count++ : k - 1;
    while (p > 0 && nearer(v, j, val[p - 1], idx[p - 1])) {
        val[p] = val[p - 1];
        idx[p] = idx[p - 1];
        --p;
    }
    val[p] = v;
    idx[p] = j;
}

// The k nearest entries of a distance row other than `skip`, nearest first. Returns
// min(k, m - 1).
inline int select_k_nearest(const double* row, Index m, Index skip, int k, Index* idx,
                            double* dist) {
    int count = 0;
    for (Index b = 0; b < m; ++b)
        if (b != skip) keep_smallest(row[b], b, k, count, dist, idx);
    return count;
}

// The k nearest other samples of every sample on one feature, c[0 .. m): the lists of
// select_k_nearest on the rows d_j = (c_i - c_j)^2, bit for bit (nearest first, equal
// distances to the lower index), from the values sorted once instead of m rows of m. On each
// side of a sample in the order of (value, index) the computed distances never decrease
// (subtraction and squaring round monotonically), so its k nearest are the first levels of
// distance met walking outwards on both sides: a level's members share one distance and enter
// by index, and the last level gives only the lowest indices it needs. Equal values run in
// index order, so a level made of one run per side merges two ascending lists; a level that
// spans several values (distances that round alike) is sorted. O(m log m + m k) for the
// feature (runs found by binary search) instead of O(m^2). The values must not be NaN.
// Sample i's list is idx / dist[i k, (i + 1) k); 1 <= k <= m - 1.
class LineNeighbours {
public:
    // Sizes the work space for m samples: run() on at most m samples then allocates nothing.
    void reserve(Index m) {
        order_.reserve(static_cast<std::size_t>(m));
        pos_.reserve(static_cast<std::size_t>(m));
        level_.reserve(static_cast<std::size_t>(m));
        sorted_.reserve(static_cast<std::size_t>(m));
    }

    void run(const double* c, Index m, int k, Index* idx, double* dist) {
        order_.resize(static_cast<std::size_t>(m));
        pos_.resize(static_cast<std::size_t>(m));
        for (Index j = 0; j < m; ++j) order_[static_cast<std::size_t>(j)] = j;
        // By value, equal values by index (-0 and +0 equal); no buffer, unlike stable_sort.
        std::sort(order_.begin(), order_.end(),
                  [&](Index a, Index b) { return c[a] < c[b] || (!(c[b] < c[a]) && a < b); });
        sorted_.resize(static_cast<std::size_t>(m));
        for (Index p = 0; p < m; ++p) {
            pos_[static_cast<std::size_t>(order_[static_cast<std::size_t>(p)])] = p;
            sorted_[static_cast<std::size_t>(p)] = c[order_[static_cast<std::size_t>(p)]];
        }
        for (Index i = 0; i < m; ++i)
            one(c, m, i, k, idx + i * static_cast<Index>(k), dist + i * static_cast<Index>(k));
    }

private:
    void one(const double* c, Index m, Index i, int k, Index* idx, double* dist) {
        const Index* o = order_.data();
        const double* v = sorted_.data();
        const double ci = c[i];
        auto d_at = [&](Index p) {
            const double t = ci - c[o[p]];
            return t * t;
        };
        auto run_start = [&](Index q) {  // the first position of q's run of equal values
            return q > 0 && v[q - 1] == v[q] ? std::lower_bound(v, v + q, v[q]) - v : q;
        };
        auto run_end = [&](Index q) {  // one past the last position of q's run
            return q + 1 < m && v[q + 1] == v[q] ? std::upper_bound(v + q + 1, v + m, v[q]) - v
                                                 : q + 1;
        };
        const Index p = pos_[static_cast<std::size_t>(i)];
        Index L = p - 1, R = p + 1;  // the next positions on each side
        int count = 0;
        while (count < k && (L >= 0 || R < m)) {
            // The level: the smallest distance left on either side, and the blocks holding it.
            const bool has_l = L >= 0, has_r = R < m;
            const double dl = has_l ? d_at(L) : 0.0, dr = has_r ? d_at(R) : 0.0;
            const double D = !has_l ? dr : !has_r ? dl : std::min(dl, dr);
            // Left block [l1, L], right block [R, r1): whole runs of equal values, found by
            // binary search (a constant feature would otherwise cost m per sample).
            Index l1 = L + 1, r1 = R;
            if (has_l && dl == D)
                do l1 = run_start(l1 - 1);
                while (l1 > 0 && d_at(l1 - 1) == D);
            if (has_r && dr == D)
                do r1 = run_end(r1);
                while (r1 < m && d_at(r1) == D);
            const Index nl = L + 1 - l1, nr = r1 - R;
            const int need = k - count;
            const bool one_run = (nl == 0 || v[l1] == v[L]) && (nr == 0 || v[R] == v[r1 - 1]);
            if (one_run) {
                // Two ascending lists of indices: merge the first `need`.
                Index a = l1, b = R;
                while (count < k && (a <= L || b < r1)) {
                    const bool take_a = b >= r1 || (a <= L && o[a] < o[b]);
                    idx[count] = take_a ? o[a++] : o[b++];
                    dist[count++] = D;
                }
            } else {
                level_.clear();
                for (Index q = l1; q <= L; ++q) level_.push_back(o[q]);
                for (Index q = R; q < r1; ++q) level_.push_back(o[q]);
                const std::size_t take = std::min(level_.size(), static_cast<std::size_t>(need));
                std::partial_sort(level_.begin(), level_.begin() + static_cast<std::ptrdiff_t>(take), level_.end());
                for (std::size_t q = 0; q < take; ++q) {
                    idx[count] = level_[q];
                    dist[count++] = D;
                }
            }
            L = l1 - 1;
            R = r1;
        }
    }

    std::vector<Index> order_, pos_, level_;
    std::vector<double> sorted_;  // the values in that order
};

// Nearest other sample with the same label (hit) and with another label (miss); index -1 and
// distance +inf when there is none. Distances are squared.
struct HitMiss {
    Index hit = -1, miss = -1;
    double hit_d = std::numeric_limits<double>::infinity();
    double miss_d = std::numeric_limits<double>::infinity();

    void offer(double d, Index j, bool same_class) {
        if (same_class) {
            if (hit < 0 || nearer(d, j, hit_d, hit)) { hit_d = d; hit = j; }
        } else if (miss < 0 || nearer(d, j, miss_d, miss)) {
            miss_d = d;
            miss = j;
        }
    }
    void merge(const HitMiss& o) {
        if (o.hit >= 0) offer(o.hit_d, o.hit, true);
        if (o.miss >= 0) offer(o.miss_d, o.miss, false);
    }
};

// ---------------------------------------------------------------------------------------------
// Rounding bounds.

namespace screen {
inline constexpr double kUnit32 = 0x1.0p-24;  // float32 unit roundoff
inline constexpr double kUnit16 = 0x1.0p-11;  // half-precision unit roundoff
inline constexpr double kUnit64 = 0x1.0p-53;  // float64 unit roundoff

// gamma_k = k u / (1 - k u): a sum or product of k roundings, each within a factor (1 +- u),
// errs by at most gamma_k relatively (Higham, Accuracy and Stability, section 3.1).
inline double gamma(Index k, double unit) {
    const double ku = static_cast<double>(k) * unit;
    return ku / (1.0 - ku);
}

// The data the screens take: every |x| below kMaxAbs (float32 then holds the data, its
// weighted squares and their sums with room to spare), and at least kMinFeatures features for
// the direct screens (with fewer, the extra float32 pass costs more than it saves: measured
// crossover ~64). The Gram expansion of gram_state.hpp has its own limits (its expansion
// cancels, and it costs about half a direct one per sample).
inline constexpr double kMaxAbs = 1e15;
inline constexpr Index kMinFeatures = 64;

// Upper bound on |v32 - v64| for one update of a distance state, v64 = D + (x_p - x_b)^2 at
// most V, v32 = fl32(fl32(D) + fl32(fl32(fl32(x_p) - fl32(x_b))^2)), A bounding |x_p| + |x_b|
// (the float32 screen of the 1-NN accuracy criterion, criteria/distance.hpp). The terms:
// rounding D to float32; the difference of the rounded x (error at most u (A + t),
// t = |x_p - x_b| <= sqrt(V)) carried through the square; rounding the square and the sum to
// float32; the float64 path's own roundings; float32 underflow.
inline double state_update_error(double V, double A) {
    constexpr double u = kUnit32;
    const double t = std::sqrt(V) * (1.0 + 1e-12);
    const double ed = 1.001 * u * (A + t) + 1e-44;
    const double sq = 2.0 * t * ed + ed * ed;
    const double e = u * V + sq + u * (t + ed) * (t + ed) + 2.0 * u * (V + sq) + 4e-16 * V + 1e-37;
    return 1.01 * e;
}

// The power of two the screens divide weights by: 2^-exponent(top) brings the largest weight
// top (> 0, finite) into [1, 2). Scaling every weight by 2^k scales every weighted distance by
// 2^k, which changes no comparison, and keeps the float32 pass and its absolute allowances away
// from the subnormal range however small the weights are (Simba's irrelevant weights decay to
// 1e-20 and below; subnormal arithmetic is tens of times slower).
inline int exponent(double top) { return std::ilogb(top); }

// The smallest float at least v (v finite or +inf): a float32 threshold that lets through every
// value a float64 bound lets through.
inline float round_up_to_float(double v) {
    float f = static_cast<float>(v);
    if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return f;
}

// v 2^-e rounded up (v >= 0): a bound in the units of a screen whose weights were divided by
// 2^e (exact unless the result falls below float64's normal range).
inline double scaled_up(double v, int e) {
    if (!std::isfinite(v)) return v;
    const double s = std::ldexp(v, -e);
    return std::ldexp(s, e) >= v ? s : std::nextafter(s, std::numeric_limits<double>::infinity());
}
}  // namespace screen

// ---------------------------------------------------------------------------------------------
// The index.

// What a float32 screen needs of X, built once per X: the float32 copy, the float64 norm of
// every row (for WeightedL2's conversion radius), the sum over features of max_j |x_jf| (for
// ScaledL1's), and whether a screen is worth it at all: float32 must hold the data with room
// to spare (max |x| < max_abs), and with few features (< min_features) the extra float32 pass
// costs more than it saves.
template <class T>
class NeighbourIndex {
public:
    NeighbourIndex(const MatrixRef<T>& X, Index min_features, double max_abs, bool norms,
                   int threads = 1)
        : X_(X), m_(X.rows()), n_(X.cols()) {
        // Rows split into `threads` ranges (the first touch of X32 and its copy in parallel);
        // maxima are exact, so the values do not depend on the split.
        const int team = static_cast<int>(std::max<Index>(1, std::min<Index>(threads, m_)));
        auto range = [&](int t) {
            return std::pair<Index, Index>{m_ * t / team, m_ * (t + 1) / team};
        };
        // max |x| row by row (vectorised; NaN skipped, as std::max(top, |x|) from 0 skips it).
        std::vector<double> tops(static_cast<std::size_t>(team), 0.0);
        RegionErrors errors;
        // one range an iteration (a work-sharing loop: every range is done even if the
        // runtime gives fewer threads)
#pragma omp parallel for schedule(static, 1) num_threads(team)
        for (int t = 0; t < team; ++t) {
            errors.run([&] {
                std::vector<double> row;
                double top = 0.0;
                for (Index i = range(t).first; i < range(t).second; ++i) {
                    const double* x = nullptr;
                    if constexpr (std::is_same<T, double>::value) {
                        x = X.row(i).data();
                    } else {
                        row.assign(X.row(i).data(), X.row(i).data() + n_);
                        x = row.data();
                    }
                    top = std::max(top, kernels::max_entry<true>(x, n_));
                }
                tops[static_cast<std::size_t>(t)] = top;
            });
        }
        errors.rethrow();
        double top = 0.0;
        for (double v : tops) top = std::max(top, v);
        usable_ = top < max_abs && n_ >= min_features;
        if (!usable_) return;
        X32_.resize(m_, n_);
        std::vector<std::vector<double>> colmaxes(static_cast<std::size_t>(norms ? 0 : team));
        if (norms) norm_.resize(static_cast<std::size_t>(m_));
#pragma omp parallel for schedule(static, 1) num_threads(team)
        for (int t = 0; t < team; ++t) {
            errors.run([&] {
                const auto [i0, i1] = range(t);
                X32_.middleRows(i0, i1 - i0) = X.middleRows(i0, i1 - i0).template cast<float>();
                if (norms) {
                    for (Index i = i0; i < i1; ++i)
                        norm_[static_cast<std::size_t>(i)] =
                            X.row(i).template cast<double>().norm();
                } else {
                    // The column maxima row by row (a column walk of a row-major X misses the
                    // cache), per range of rows, then the largest of the ranges'.
                    std::vector<double>& colmax = colmaxes[static_cast<std::size_t>(t)];
                    colmax.assign(static_cast<std::size_t>(n_), 0.0);
                    for (Index i = i0; i < i1; ++i) {
                        const T* x = X.row(i).data();
                        for (Index f = 0; f < n_; ++f) {
                            double& c = colmax[static_cast<std::size_t>(f)];
                            c = std::max(c, std::abs(static_cast<double>(x[f])));
                        }
                    }
                }
            });
        }
        errors.rethrow();
        if (!norms) {
            // summed in feature order as before
            for (Index f = 0; f < n_; ++f) {
                double c = 0.0;
                for (const auto& cm : colmaxes) c = std::max(c, cm[static_cast<std::size_t>(f)]);
                col_abs_sum_ += c;
            }
            col_abs_sum_ *= 1.0 + static_cast<double>(n_ + 1) * screen::kUnit64;  // rounded up
        }
    }

    const MatrixRef<T>& X() const { return X_; }
    const RowMatrix<float>& X32() const { return X32_; }
    Index rows() const { return m_; }
    Index cols() const { return n_; }
    bool usable() const { return usable_; }
    double norm(Index i) const { return norm_[static_cast<std::size_t>(i)]; }
    double col_abs_sum() const { return col_abs_sum_; }

private:
    MatrixRef<T> X_;
    Index m_, n_;
    bool usable_ = false;
    RecycledMatrix<float> X32_;
    std::vector<double> norm_;    // ||x_j||_2 in float64
    double col_abs_sum_ = 0.0;    // sum_f max_j |x_jf|, rounded up
};

// ---------------------------------------------------------------------------------------------
// Metrics.

// The weighted squared Euclidean distance sum_f w2[f] (x_f - z_f)^2, exact through
// kernels::sq_dist4 in float64. Its bounds compare in the square-root domain, where converting
// X to float32 is a shift of at most a radius per pair.
template <class T>
struct WeightedL2 {
    std::vector<float> w2s;  // the screen's weights: 2^-exponent w2, tiny ones flushed to 0
    double gamma = 0;        // relative error bound of a float32 squared distance
    double conv = 0;         // conversion error per unit of norm (distance, not squared)
    double tiny = 0;         // absolute slack for float32 underflow (squared)
    bool on = false;         // false: no screen (scan exhaustively in float64)

    // A scaled weight (the largest in [1, 2)) below kFlush enters the screen as 0: its terms
    // would be subnormal or close to it.
    static constexpr double kFlush = 0x1.0p-100;

    // Sets up the screen for weights w2 (n non-negative values) on an index.
    void prepare(const NeighbourIndex<T>& index, const double* w2) {
        const Index n = index.cols();
        double top = kernels::max_entry<false>(w2, n);
        on = index.usable() && top > 0.0 && std::isfinite(top);
        if (!on) return;
        // The bounds below are for the scaled distances (screen::exponent), the exact
        // distances use w2 itself.
        const int e = screen::exponent(top);
        top = std::ldexp(top, -e);
        w2s.resize(static_cast<std::size_t>(n));
        float* out = w2s.data();
        // w2 * 2^-e: a product with an exact power of two (a normal double) rounds exactly as
        // ldexp does, at a fraction of the cost of a library call per weight (Simba prepares a
        // screen every step).
        if (e >= -1022 && e <= 1022) {
            kernels::scaled_floats_flushed(w2, n, std::ldexp(1.0, -e), kFlush, out);
        } else {
            for (Index f = 0; f < n; ++f) {
                const double v = std::ldexp(w2[f], -e);
                out[f] = v < kFlush ? 0.0f : static_cast<float>(v);
            }
        }
        const double u = screen::kUnit32;
        // Every term (difference, square, weight, product) and every addition of the n-term sum
        // of non-negative terms rounds once: relative error at most gamma_{n+4}. Doubled, which
        // also covers the float64 rounding of the exact distances the shortlist is compared by.
        const double k = static_cast<double>(n + 4) * u;
        gamma = 2.0 * k / (1.0 - k);
        // Converting X to float32 moves each point by at most u * |x| per coordinate, so a
        // weighted distance moves by at most u * sqrt(max w2) * (||x_i|| + ||x_j||).
        // Converting w2 errs by u w2 (counted in gamma) plus, for a weight flushed to 0, less
        // than kFlush absolute: sum_f |dw2_f| v_f^2 <= kFlush ||v||^2, so the distance moves by
        // at most sqrt(kFlush) (||x_i|| + ||x_j||).
        const bool exact_input = std::is_same<T, float>::value;
        conv = (exact_input ? 0.0 : 2.0 * u * std::sqrt(top)) + std::sqrt(kFlush);
        // Products and sums below float32's smallest normal may flush to zero: absolute slack.
        tiny = 4.0 * static_cast<double>(n) * (top + 1.0) * 0x1.0p-126;
    }

    // How far converting X to float32 may move the distance between samples i and j.
    double radius(const NeighbourIndex<T>& index, Index i, Index j) const {
        return conv * (index.norm(i) + index.norm(j));
    }
    // Upper bound of the true distance (not squared) of a pair with screen value a.
    double upper(const NeighbourIndex<T>& index, Index i, Index j, float a) const {
        return std::sqrt((static_cast<double>(a) + tiny) / (1.0 - gamma)) + radius(index, i, j);
    }
    // Can the pair's true distance (not squared) be <= bound? Its lower bound
    // sqrt(max(0, a - tiny) / (1 + gamma)) - radius, compared without a square root.
    bool may_reach(const NeighbourIndex<T>& index, Index i, Index j, float a,
                   double bound) const {
        const double t = bound + radius(index, i, j);
        return std::max(0.0, static_cast<double>(a) - tiny) <= (1.0 + gamma) * (t * t);
    }
    // may_reach() for every j whose norm is at most max_norm at once: beyond(a, limit) with
    // limit = reach_limit(index, i, bound, max_norm) means that may_reach() is false for every
    // such j (the same operations on a norm no smaller give a limit no smaller).
    double reach_limit(const NeighbourIndex<T>& index, Index i, double bound,
                       double max_norm) const {
        const double t = bound + conv * (index.norm(i) + max_norm);
        return (1.0 + gamma) * (t * t);
    }
    bool beyond(float a, double limit) const {
        return std::max(0.0, static_cast<double>(a) - tiny) > limit;
    }

    void screen4(const float* x, const float* z0, const float* z1, const float* z2,
                 const float* z3, Index n, float* out) const {
        kernels::sq_dist4(x, z0, z1, z2, z3, w2s.data(), n, out);
    }
    // The exact distance is a function of w2 (the caller's weights, not the screen's).
    static void exact4(const T* x, const T* z0, const T* z1, const T* z2, const T* z3,
                       const double* w2, Index n, double* out) {
        kernels::sq_dist4(x, z0, z1, z2, z3, w2, n, out);
    }
};

// The Manhattan distance sum_f |x_f - z_f| on rows scaled beforehand (ReliefF and SURF read
// min-max scaled data, optionally times per-feature distance weights), exact through
// kernels::l1_dist4 in float64. No weights: exact4's w2 is ignored.
struct ScaledL1 {
    double gamma = 0;  // relative error bound of a float32 sum
    double conv = 0;   // absolute error of converting the rows to float32
    bool on = false;

    // The screen values come from kernels::l1_dist4 (or l1_lanes4, the same bits), whose sum
    // runs in L = 8 float32 lanes, term f to lane f % L, the lanes combined pairwise at the end.
    // A term is one rounding (|a - b|) and passes through at most ceil(n / L) - 1 additions in
    // its lane and 3 combining ones, so the float32 sum of these non-negative terms errs by at
    // most gamma_{ceil(n/L) + 3} relatively (Higham, section 4.2): taken with one to spare,
    // doubled for margin (and the float64 rounding of the exact values). A sequential sum would
    // need gamma_n, 8 times wider on wide data, where the distances of a query crowd together.
    // Converting to float32 moves every coordinate z_jf by at most u |z_jf| (plus 2^-150 below
    // the normal range), a distance by at most u sum_f (|z_if| + |z_jf|) <= 2 u sum_f max_j
    // |z_jf|, with 1% to spare (for min-max scaled data without weights, at most 2.02 n u).
    // The bounds multiply by 1 / (1 -+ gamma) rounded, not divide: a relative change of an
    // ulp, far inside the doubled allowance, and a multiplication in the loops over every
    // sample instead of a division. Both bounds depend on the screen value only and never
    // decrease as it grows (kBoundsByValue): the k-th smallest upper bound is the upper bound
    // of the k-th smallest screen value.
    static constexpr bool kBoundsByValue = true;
    double up = 0, down = 0;  // 1 / (1 - gamma), 1 / (1 + gamma)

    void prepare(const NeighbourIndex<double>& index) {
        on = index.usable();
        if (!on) return;
        const Index n = index.cols();
        constexpr Index L = kernels::kLanes<float>;
        const double g = static_cast<double>((n + L - 1) / L + 4) * screen::kUnit32;
        gamma = 2.0 * g / (1.0 - g);
        up = 1.0 / (1.0 - gamma);
        down = 1.0 / (1.0 + gamma);
        conv = 2.02 * screen::kUnit32 * index.col_abs_sum() +
               static_cast<double>(2 * n) * 0x1.0p-149;
    }
    double upper(const NeighbourIndex<double>&, Index, Index, float a) const {
        return static_cast<double>(a) * up + conv;
    }
    double lower(float a) const { return static_cast<double>(a) * down - conv; }
    bool may_reach(const NeighbourIndex<double>&, Index, Index, float a, double bound) const {
        return lower(a) <= bound;
    }

    static void screen4(const float* x, const float* z0, const float* z1, const float* z2,
                        const float* z3, Index n, float* out) {
        kernels::l1_dist4(x, z0, z1, z2, z3, n, out);
    }
    static void exact4(const double* x, const double* z0, const double* z1, const double* z2,
                       const double* z3, const double*, Index n, double* out) {
        kernels::l1_dist4(x, z0, z1, z2, z3, n, out);
    }
};

// ---------------------------------------------------------------------------------------------
// Passes and reductions.

// Distances from the query rows ids[0 .. rows-1] (rows <= 4, repeats allowed) of M to every
// row j, out[r * stride + j], through kernel(j_row, q0, q1, q2, q3, d): each row of M is read
// once per four queries. The kernels are symmetric in their roles up to the float32 bounds
// (screen) or exactly (|a - b| = |b - a|, (a - b)^2 = (b - a)^2), so the values are those of
// the queries' own rows.
template <class S, class Kernel>
inline void distance_rows4(const RowMatrix<S>& M, const Index* ids, int rows, Kernel&& kernel,
                           S* out, Index stride) {
    auto q = [&](int r) { return M.row(ids[std::min(r, rows - 1)]).data(); };
    S d[4];
    for (Index j = 0; j < M.rows(); ++j) {
        kernel(M.row(j).data(), q(0), q(1), q(2), q(3), d);
        for (int r = 0; r < rows; ++r) out[static_cast<std::size_t>(r) * stride + j] = d[r];
    }
}

// Rows j0 .. j1-1 four per kernel call: kernel(row(j), row(j + 1), row(j + 2), row(j + 3), d)
// (a short last group repeats its last row), then visit(j, d[.]) for each row in order.
template <class S, class RowOf, class Kernel, class Visit>
inline void scan_rows4(Index j0, Index j1, RowOf&& row_of, Kernel&& kernel, Visit&& visit) {
    S d[4];
    for (Index j = j0; j < j1; j += 4) {
        auto row = [&](Index r) { return row_of(std::min(j + r, j1 - 1)); };
        kernel(row(0), row(1), row(2), row(3), d);
        for (Index r = 0; r < 4 && j + r < j1; ++r) visit(j + r, d[r]);
    }
}

// The exact distances of rows j[0 .. count) of X from row i, four rows per kernel call
// exact4(x, z0, z1, z2, z3, out) (a short last group repeats its last row), handed to
// emit(j[q], d) in order. The kernels sum each lane alone, so the values do not depend on how the
// rows are grouped in fours: every exact distance of the engine and of the queries built on it
// goes through here.
template <class T, class Exact4, class Emit>
inline void exact_rows4(const MatrixRef<T>& X, Index i, const Index* j, std::size_t count,
                        Exact4&& exact4, Emit&& emit) {
    for (std::size_t q = 0; q < count; q += 4) {
        auto row = [&](std::size_t r) { return X.row(j[std::min(q + r, count - 1)]).data(); };
        double d[4];
        exact4(X.row(i).data(), row(0), row(1), row(2), row(3), d);
        for (std::size_t r = 0; r < 4 && q + r < count; ++r) emit(j[q + r], d[r]);
    }
}

// The shortlist: the exact distance of every sample j != i whose screen value approx[j] may
// reach its group's bound (bound_of(j), in the metric's bound domain), four per kernel call,
// handed to emit(j, d) in increasing j.
template <class T, class Metric, class Bound, class Emit>
inline void refine_shortlist(const NeighbourIndex<T>& index, const Metric& metric, Index i,
                             const float* approx, const double* w2, Bound&& bound_of,
                             Emit&& emit) {
    const Index m = index.rows(), n = index.cols();
    auto exact4 = [&](const T* x, const T* z0, const T* z1, const T* z2, const T* z3,
                      double* d) { metric.exact4(x, z0, z1, z2, z3, w2, n, d); };
    Index pending[4];
    std::size_t count = 0;
    for (Index j = 0; j < m; ++j) {
        if (j == i) continue;
        if (metric.may_reach(index, i, j, approx[j], bound_of(j))) {
            pending[count++] = j;
            if (count == 4) {
                exact_rows4(index.X(), i, pending, count, exact4, emit);
                count = 0;
            }
        }
    }
    if (count) exact_rows4(index.X(), i, pending, count, exact4, emit);
}

// The exact distances of samples j[0 .. count) from i under the metric, handed to emit(j[q], d).
template <class T, class Metric, class Emit>
inline void exact_distances(const NeighbourIndex<T>& index, const Metric& metric, Index i,
                            const Index* j, std::size_t count, const double* w2, Emit&& emit) {
    const Index n = index.cols();
    exact_rows4(index.X(), i, j, count,
                [&](const T* x, const T* z0, const T* z1, const T* z2, const T* z3, double* d) {
                    metric.exact4(x, z0, z1, z2, z3, w2, n, d);
                },
                emit);
}

// Whether a metric's bounds depend on the screen value only, never decreasing as it grows
// (Metric::kBoundsByValue): then a selection by bound can select by screen value.
template <class Metric, class = void>
struct BoundsByValue : std::false_type {};
template <class Metric>
struct BoundsByValue<Metric, std::void_t<decltype(Metric::kBoundsByValue)>>
    : std::bool_constant<Metric::kBoundsByValue> {};
template <class Metric>
constexpr bool metric_bounds_by_value() {
    return BoundsByValue<Metric>::value;
}

// The k-th smallest of a stream of values, in one read: `top` keeps the k smallest so far,
// sorted, and a value enters only when it is below the current k-th. In a stream of n values in
// no particular order about k log(n / k) enter, so for a small k the cost is one comparison a
// value (copying the values and std::nth_element cost several times that: the selection was a
// sixth of a ReliefF call). The k-th value is that of the multiset, as nth_element gives it.
constexpr Index kStreamedSelection = 64;  // larger k: copy and std::nth_element

inline void push_k_smallest(std::vector<double>& top, Index k, double v) {
    if (static_cast<Index>(top.size()) == k) {
        if (!(v < top.back())) return;
        top.pop_back();
    }
    top.insert(std::upper_bound(top.begin(), top.end(), v), v);
}

// The k-th smallest of value(j) over the samples j = member(p) != i, p in [b, e) (+inf when
// there are at most k of them); `buf` is scratch.
template <class Member, class Value>
inline double kth_smallest(Index b, Index e, Member&& member, Index i, Index k,
                           std::vector<double>& buf, Value&& value) {
    buf.clear();
    Index count = 0;
    for (Index p = b; p < e; ++p) {
        const Index j = member(p);
        if (j == i) continue;
        ++count;
        if (k <= kStreamedSelection) push_k_smallest(buf, k, value(j));
        else buf.push_back(value(j));
    }
    if (count <= k) return std::numeric_limits<double>::infinity();
    if (k > kStreamedSelection) std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end());
    return buf[static_cast<std::size_t>(k - 1)];
}

// For every class c of L, a bound (metric domain) that the k-th nearest exact distance of i
// among the members of c other than i cannot exceed: the k-th smallest upper bound of theirs
// (+inf when the class has at most k such members).
template <class T, class Metric>
inline void class_bounds(const NeighbourIndex<T>& index, const Metric& metric,
                         const ClassLayout& L, Index k, Index i, const float* approx,
                         std::vector<double>& upper, std::vector<double>& bound) {
    bound.assign(static_cast<std::size_t>(L.n_classes()), std::numeric_limits<double>::infinity());
    constexpr bool by_value = metric_bounds_by_value<Metric>();
    for (Index c = 0; c < L.n_classes(); ++c) {
        const double kth = kth_smallest(
            L.begin[static_cast<std::size_t>(c)], L.begin[static_cast<std::size_t>(c) + 1],
            [&](Index p) { return L.order[p]; }, i, k, upper, [&](Index j) {
                if constexpr (by_value) return static_cast<double>(approx[j]);
                else return metric.upper(index, i, j, approx[j]);
            });
        if (kth != std::numeric_limits<double>::infinity())
            bound[static_cast<std::size_t>(c)] =
                by_value ? metric.upper(index, i, i, static_cast<float>(kth)) : kth;
    }
}

// The screened distance row of sample i for its k nearest of every class: dist[j] is the exact
// distance of every sample that can be among the k nearest of its class (ties included) and
// +inf for the others and for i itself, so selecting by (distance, index) from dist gives the
// selection of the exact row. approx: the screen values of i's row.
template <class T, class Metric>
inline void k_nearest_per_class(const NeighbourIndex<T>& index, const Metric& metric,
                                const ClassLayout& L, const Labels& codes, Index k, Index i,
                                const float* approx, const double* w2, double* dist,
                                std::vector<double>& tmp, std::vector<double>& bound) {
    class_bounds(index, metric, L, k, i, approx, tmp, bound);
    std::fill(dist, dist + index.rows(), std::numeric_limits<double>::infinity());
    refine_shortlist(index, metric, i, approx, w2,
                     [&](Index j) { return bound[static_cast<std::size_t>(codes[j])]; },
                     [&](Index j, double d) { dist[j] = d; });
}

// k_nearest_per_class for a caller that needs each class's k nearest as a set, not their
// distances (ReliefF without STIR: its contribution reads the neighbours' rows only). A class
// whose screen already settles it (exactly min(k, members) of its members may reach its bound:
// each of the others is farther than the bound, and it than each of these) gets their screen
// values (float32, as double) instead of exact distances, so selecting by (value, index) from
// dist takes the same members, possibly in another order; the other classes get exact distances
// as in k_nearest_per_class. `cand` (one list per class) and `tmp`, `bound` are scratch.
template <class T, class Metric>
inline void k_nearest_sets_per_class(const NeighbourIndex<T>& index, const Metric& metric,
                                     const ClassLayout& L, const Labels& codes, Index k, Index i,
                                     const float* approx, const double* w2, double* dist,
                                     std::vector<std::vector<Index>>& cand,
                                     std::vector<double>& tmp, std::vector<double>& bound) {
    const Index m = index.rows(), C = L.n_classes();
    class_bounds(index, metric, L, k, i, approx, tmp, bound);
    std::fill(dist, dist + m, std::numeric_limits<double>::infinity());
    cand.resize(static_cast<std::size_t>(C));
    for (auto& c : cand) c.clear();
    for (Index j = 0; j < m; ++j) {
        if (j == i) continue;
        const auto c = static_cast<std::size_t>(codes[j]);
        if (metric.may_reach(index, i, j, approx[j], bound[c])) cand[c].push_back(j);
    }
    for (Index c = 0; c < C; ++c) {
        const auto& list = cand[static_cast<std::size_t>(c)];
        const Index members = L.begin[static_cast<std::size_t>(c) + 1] -
                              L.begin[static_cast<std::size_t>(c)] - (codes[i] == c ? 1 : 0);
        if (static_cast<Index>(list.size()) == std::min(k, members)) {
            for (Index j : list) dist[j] = static_cast<double>(approx[j]);
        } else {
            exact_distances(index, metric, i, list.data(), list.size(), w2,
                            [&](Index j, double d) { dist[j] = d; });
        }
    }
}

// The k nearest other samples of i overall (idx/dist, nearest first), from the screen values
// approx of its row (a single class). Returns min(k, m - 1).
template <class T, class Metric>
inline int k_nearest(const NeighbourIndex<T>& index, const Metric& metric, Index k, Index i,
                     const float* approx, const double* w2, Index* idx, double* dist,
                     std::vector<double>& tmp) {
    const Index m = index.rows();
    constexpr bool by_value = metric_bounds_by_value<Metric>();
    auto value = [&](Index j) {
        if constexpr (by_value) return static_cast<double>(approx[j]);
        else return metric.upper(index, i, j, approx[j]);
    };
    const double kth = kth_smallest(0, m, [](Index p) { return p; }, i, k, tmp, value);
    double bound = std::numeric_limits<double>::infinity();
    if (kth != std::numeric_limits<double>::infinity())
        bound = by_value ? metric.upper(index, i, i, static_cast<float>(kth)) : kth;
    int count = 0;
    const int kk = static_cast<int>(std::min<Index>(k, m - 1));
    refine_shortlist(index, metric, i, approx, w2, [&](Index) { return bound; },
                     [&](Index j, double d) { keep_smallest(d, j, kk, count, dist, idx); });
    return count;
}

// The split of sample i's row at a radius (in the metric's bound domain: the distance, not
// squared, for WeightedL2; i itself included):
// dist[j] = -1 where the exact distance is certainly below T, +inf where certainly above, and
// the exact distance otherwise, so that comparing dist with T classifies every pair as the
// exact distances would. Only the samples j >= j_begin (approx and dist are still indexed by j).
template <class T, class Metric>
inline void within_radius(const NeighbourIndex<T>& index, const Metric& metric, double radius,
                          Index i, const float* approx, const double* w2, double* dist,
                          std::vector<Index>& pending, Index j_begin = 0) {
    const Index m = index.rows();
    pending.clear();
    for (Index j = j_begin; j < m; ++j) {
        if (metric.upper(index, i, j, approx[j]) < radius) dist[j] = -1.0;
        else if (!metric.may_reach(index, i, j, approx[j], radius))
            dist[j] = std::numeric_limits<double>::infinity();
        else pending.push_back(j);
    }
    exact_distances(index, metric, i, pending.data(), pending.size(), w2,
                    [&](Index j, double d) { dist[j] = d; });
}

}  // namespace fastfs
