// The Relief family (ReliefF, SURF, SURF*, MultiSURF, MultiSURF*) on the data types skrebate
// 0.8 handles beyond continuous features with class labels: discrete features, a mix of
// discrete and continuous ones, missing values (NaN) and continuous targets. The continuous,
// complete, class-label case keeps its own faster path (relief.hpp, relief_radius.hpp); this
// one reproduces skrebate's definitions in every case, in exact float64.
//
// Features: each is discrete (a flag given by the caller) or continuous, with range_f and the
// population standard deviation sd_f of its non-missing values.
// Distance between samples a and b (skrebate's three forms):
//   * X without missing values: cont = sum_{continuous} |a_f - b_f| / range_f and
//     mism = number of discrete features with a_f != b_f;
//       only discrete features:  d = mism / n;   only continuous: d = cont;
//       both:                    d = (mism / n_discrete) * n + cont;
//   * X with a missing value anywhere: the sums over the features present in both samples,
//       d = (mism + cont) / (number of features present in both), NaN when there is none.
//   A NaN distance puts a pair in no radius set and last in every k-nearest order.
// Diff of feature f between the query x and a neighbour z (scores): discrete: x_f != z_f;
// continuous: |x_f - z_f| / range_f, or 1 when the data mix both kinds and |x_f - z_f| > sd_f
// (skrebate's ramp). A neighbour missing f is left out of f's counts; a query missing f adds 0
// for f.
// Groups: with class labels, a sample's group is its class (C groups, own = its class); with a
// continuous target y, the neighbours with |y_x - y_z| < radius are hits (group 0) and the others
// misses (group 1), C = 2.
// Score of one neighbour set S for feature f, with S_g the sum of diffs and n_g the count of
// neighbours of group g that have f, h = n_own, M = sum_{g != own} n_g:
//   near(S) = -S_own / h + sum_{g != own} S_g (n_g / M) (C - 1) / M
// (each term dropped when its count is 0); the complement form farc(S) (MultiSURF*'s far set)
// replaces every diff by 1 - diff. Contributions: ReliefF, SURF, MultiSURF: near(N);
// SURF*: near(N) - near(F); MultiSURF*: near(N) + farc(F), summed and divided by n_samples.
// Neighbour sets: ReliefF, the k nearest of every group (ordered by distance, then index; NaN
// distances last); SURF/SURF*, d < T (near) and d > T (far) with T the mean of skrebate's
// distance array (2 sum_{i<j} d_ij / m^2 without missing values; with them skrebate stores one
// triangle, so T = sum_{i<j} d_ij / (m^2 - number of NaN pairs)); MultiSURF/MultiSURF*,
// d < mu - sigma / 2 and d > mu + sigma / 2 with mu, sigma (population) over the sample's
// non-NaN distances to the others. A sample is never its own neighbour.
//
// Two passes, the same weights up to rounding (the same distances, thresholds and sets):
//  * the radius rules on data without missing values, over every sample and without a
//    callback, when the m x m float64 matrix of pair distances takes at most 64 MB (m <= 2896):
//    each distance computed once for both samples and kept, a pair's two contributions added
//    as one (detail::mixed_pair_sums, the cached pass of relief_radius.hpp on these diffs);
//  * otherwise sample by sample: per thread the distance rows of four queries (4 m), the
//    neighbour lists and their group sums (4 x C x n, plus counts when values are missing).
//    Over every sample (ReliefF, a callback, missing values) the distances come from the
//    same kept matrix while it fits (the same bits as computing them); past it, or for a
//    range of queries, nothing m x m.
// Memory besides: one float64 copy of the continuous features scaled to [0, 1] and int32 codes
// of the discrete ones. Queries (or pairs) are split in fixed blocks summed in block order, so
// the result does not depend on the number of threads; four queries at a time share each pass
// over the data.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "relief.hpp"
#include "relief_pass.hpp"
#include "relief_radius.hpp"

namespace fastfs {

enum class MixedRule { relieff, surf, surf_star, multisurf, multisurf_star };

struct MixedOptions {
    MixedRule rule = MixedRule::relieff;
    Index k = 10;                          // ReliefF's neighbours per group
    std::vector<std::uint8_t> discrete;    // one flag per feature
    std::vector<double> distance_weights;  // empty = none (data without missing values only)
    std::vector<std::int64_t> codes;       // class codes 0..C-1, or empty with a continuous y
    std::vector<double> y;                 // continuous target, or empty
    double radius = 0.0;                   // continuous target: hit iff |y_x - y_z| < radius
};

namespace detail {

// The groups of a Relief target (the options' codes or y, m samples): with a continuous y, 2
// (hits and misses) and `present` = 2; with class codes, the largest code + 1 and `present` the
// classes that occur (at least 2).
inline Index relief_target_groups(const MixedOptions& opt, Index m, Index& present) {
    if (!opt.y.empty()) {
        require(static_cast<Index>(opt.y.size()) == m, "X and y have different numbers of samples");
        present = 2;
        return 2;
    }
    require(static_cast<Index>(opt.codes.size()) == m, "X and y have different numbers of samples");
    std::int64_t c = 0;
    for (auto v : opt.codes) {
        require(v >= 0, "y: class codes must be non-negative");
        c = std::max<std::int64_t>(c, v + 1);
    }
    const Index groups = static_cast<Index>(c);
    std::vector<Index> size(static_cast<std::size_t>(groups), 0);
    for (auto v : opt.codes) ++size[static_cast<std::size_t>(v)];
    present = 0;
    for (Index s : size) present += s > 0;
    require(present >= 2, "y: need at least 2 classes, got " + std::to_string(present));
    return groups;
}

// Pair statistics of the distance with missing values (the continuous sum and the mismatches
// over the features present in both, and their number); without missing values the continuous
// sum is l1_rows' (MixedRelief::row_distances).
// The sums of real numbers below run in one fixed order (feature f in lane f % L, the lanes
// combined in one tree: kernels::combine_lanes), so that a distance has the same bits on every
// CPU (the AVX2 and baseline clones) and with every compiler; a reduction left to the compiler
// summed in the order of its vectors, which decided exact ties between neighbours differently
// (iterative Relief's weighted mismatches under Clang). Counts are exact in any order.
FASTFS_SIMD_CLONES inline double cont_l1_missing(const double* __restrict a,
                                                 const double* __restrict b, Index n,
                                                 double& present) {
    constexpr int L = kernels::kLanes<double>;
    double s[L] = {};
    double p = 0.0;
    Index f = 0;
    for (; f + L <= n; f += L) {
#pragma omp simd reduction(+ : p)
        for (int l = 0; l < L; ++l) {
            const double t = std::abs(a[f + l] - b[f + l]);
            const bool ok = t == t;
            s[l] += ok ? t : 0.0;
            p += ok ? 1.0 : 0.0;
        }
    }
    for (int l = 0; f < n; ++f, ++l) {
        const double t = std::abs(a[f] - b[f]);
        const bool ok = t == t;
        s[l] += ok ? t : 0.0;
        p += ok ? 1.0 : 0.0;
    }
    present += p;
    return kernels::combine_lanes(s);
}

FASTFS_SIMD_CLONES inline double mismatches(const std::int32_t* __restrict a,
                                            const std::int32_t* __restrict b,
                                            const double* __restrict w, Index n) {
    if (!w) {  // unweighted: an exact integer count
        std::int32_t s = 0;
#pragma omp simd reduction(+ : s)
        for (Index f = 0; f < n; ++f) s += a[f] != b[f] ? 1 : 0;
        return static_cast<double>(s);
    }
    constexpr int L = kernels::kLanes<double>;
    double s[L] = {};
    Index f = 0;
    for (; f + L <= n; f += L) {
#pragma omp simd
        for (int l = 0; l < L; ++l) s[l] += a[f + l] != b[f + l] ? w[f + l] : 0.0;
    }
    for (int l = 0; f < n; ++f, ++l) s[l] += a[f] != b[f] ? w[f] : 0.0;
    return kernels::combine_lanes(s);
}

FASTFS_SIMD_CLONES inline double mismatches_missing(const std::int32_t* __restrict a,
                                 const std::int32_t* __restrict b, Index n, double& present) {
    std::int32_t s = 0, p = 0;
#pragma omp simd reduction(+ : s, p)
    for (Index f = 0; f < n; ++f) {
        const bool ok = (a[f] >= 0) & (b[f] >= 0);
        p += ok ? 1 : 0;
        s += (ok & (a[f] != b[f])) ? 1 : 0;
    }
    present += static_cast<double>(p);
    return static_cast<double>(s);
}

// Adds the diffs of one neighbour row z against the query x to sum (and, with missing values,
// the presence counts to cnt): diff = 1 when |x - z| > thr, else |x - z| * inv. GCC turns the
// choice into a vector select only when it may assume that comparisons raise no floating-point
// exception flags (no-trapping-math, which changes no value), hence the attribute.
#if defined(__GNUC__) && !defined(__clang__)
#define FASTFS_SELECT_SIMD __attribute__((optimize("no-trapping-math")))
#else
#define FASTFS_SELECT_SIMD
#endif

template <class T>
FASTFS_SIMD_CLONES FASTFS_SELECT_SIMD inline void add_diffs(
    const T* __restrict x, const T* __restrict z, const double* __restrict thr,
    const double* __restrict inv, double* __restrict sum, Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double raw = __builtin_fabs(static_cast<double>(x[f]) - static_cast<double>(z[f]));
        const double scaled = raw * inv[f];
        sum[f] += raw > thr[f] ? 1.0 : scaled;
    }
}

template <class T>
FASTFS_SIMD_CLONES FASTFS_SELECT_SIMD inline void add_diffs_missing(
    const T* __restrict x, const T* __restrict z, const double* __restrict thr,
    const double* __restrict inv, double* __restrict sum, double* __restrict cnt, Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double raw = __builtin_fabs(static_cast<double>(x[f]) - static_cast<double>(z[f]));
        const double scaled = raw * inv[f];
        double d = scaled;
        if (raw > thr[f]) d = 1.0;
        const bool ok = d == d;  // a missing value on either side gives NaN
        sum[f] += ok ? d : 0.0;
        cnt[f] += ok ? 1.0 : 0.0;
    }
}

// acc[f] += sum_r c_r diff_f(q_r, z) for four rows q_r against z, diff as in add_diffs, added
// left to right in every clone (the pair sums of the cached pass, into one row); and the same
// for one row.
template <class T>
FASTFS_SIMD_CLONES FASTFS_SELECT_SIMD inline void add_diffs4_sum(
    const T* __restrict z, const T* __restrict q0, const T* __restrict q1,
    const T* __restrict q2, const T* __restrict q3, const double* c,
    const double* __restrict thr, const double* __restrict inv, double* __restrict acc, Index n) {
    const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double v = static_cast<double>(z[f]), t = thr[f], s = inv[f];
        const double r0 = __builtin_fabs(static_cast<double>(q0[f]) - v);
        const double r1 = __builtin_fabs(static_cast<double>(q1[f]) - v);
        const double r2 = __builtin_fabs(static_cast<double>(q2[f]) - v);
        const double r3 = __builtin_fabs(static_cast<double>(q3[f]) - v);
        acc[f] += c0 * (r0 > t ? 1.0 : r0 * s) + c1 * (r1 > t ? 1.0 : r1 * s) +
                  c2 * (r2 > t ? 1.0 : r2 * s) + c3 * (r3 > t ? 1.0 : r3 * s);
    }
}

template <class T>
FASTFS_SIMD_CLONES FASTFS_SELECT_SIMD inline void add_diffs1_sum(
    const T* __restrict z, const T* __restrict q0, double c0, const double* __restrict thr,
    const double* __restrict inv, double* __restrict acc, Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double r0 = __builtin_fabs(static_cast<double>(q0[f]) - static_cast<double>(z[f]));
        acc[f] += c0 * (r0 > thr[f] ? 1.0 : r0 * inv[f]);
    }
}

}  // namespace detail

// The prepared data (see the header) and the distance of two samples.
template <class T>
class MixedRelief {
public:
    MixedRelief(const MatrixRef<T>& X, const MixedOptions& opt) : X_(X), opt_(opt) {
        m_ = X.rows();
        n_ = X.cols();
        require(m_ >= 2, "X: need at least 2 samples");
        require(n_ >= 1, "X: need at least one feature");
        require(static_cast<Index>(opt.discrete.size()) == n_,
                "discrete_features: expected one flag per feature");
        continuous_target_ = !opt.y.empty();
        groups_ = detail::relief_target_groups(opt, m_, classes_present_);
        require(opt.k >= 1, "n_neighbors must be >= 1");
        require(opt.distance_weights.empty() || static_cast<Index>(opt.distance_weights.size()) == n_,
                "distance_weights: expected one weight per feature");
        for (Index f = 0; f < n_; ++f) (opt.discrete[static_cast<std::size_t>(f)] ? disc_ : cont_).push_back(f);
        for (Index i = 0; i < m_ && !missing_; ++i)
            for (Index f = 0; f < n_; ++f)
                if (std::isnan(static_cast<double>(X(i, f)))) { missing_ = true; break; }
        require(!missing_ || opt.distance_weights.empty(),
                "distance_weights: not supported with missing values");
        ramp_ = !cont_.empty() && !disc_.empty();
        thr_.assign(static_cast<std::size_t>(n_), 0.0);
        inv_.assign(static_cast<std::size_t>(n_), 0.0);
        const Index nc = static_cast<Index>(cont_.size()), nd = static_cast<Index>(disc_.size());
        Zc_.resize(m_, nc);
        for (Index c = 0; c < nc; ++c) {
            const Index f = cont_[static_cast<std::size_t>(c)];
            double lo = std::numeric_limits<double>::infinity(), hi = -lo, s = 0.0, cnt = 0.0;
            for (Index i = 0; i < m_; ++i) {
                const double v = static_cast<double>(X(i, f));
                if (std::isnan(v)) continue;
                lo = std::min(lo, v);
                hi = std::max(hi, v);
                s += v;
                cnt += 1.0;
            }
            double var = 0.0;
            const double mean = cnt > 0 ? s / cnt : 0.0;
            for (Index i = 0; i < m_; ++i) {
                const double v = static_cast<double>(X(i, f));
                if (!std::isnan(v)) var += (v - mean) * (v - mean);
            }
            const double r = hi > lo ? 1.0 / (hi - lo) : 0.0;
            inv_[static_cast<std::size_t>(f)] = r;
            thr_[static_cast<std::size_t>(f)] =
                ramp_ ? (cnt > 0 ? std::sqrt(var / cnt) : 0.0) : std::numeric_limits<double>::infinity();
            const double w = opt.distance_weights.empty() ? 1.0 : opt.distance_weights[static_cast<std::size_t>(f)];
            for (Index i = 0; i < m_; ++i) {
                const double v = static_cast<double>(X(i, f));
                Zc_(i, c) = std::isnan(v) ? v : (v - (hi > lo ? lo : v)) * r * w;
            }
        }
        // Discrete features: codes of the sorted distinct values, -1 for a missing value.
        Zd_.resize(m_, nd);
        wd_.assign(static_cast<std::size_t>(nd), 1.0);
        std::vector<double> vals;
        for (Index c = 0; c < nd; ++c) {
            const Index f = disc_[static_cast<std::size_t>(c)];
            if (!opt.distance_weights.empty()) wd_[static_cast<std::size_t>(c)] = opt.distance_weights[static_cast<std::size_t>(f)];
            vals.clear();
            for (Index i = 0; i < m_; ++i) {
                const double v = static_cast<double>(X(i, f));
                if (!std::isnan(v)) vals.push_back(v);
            }
            std::sort(vals.begin(), vals.end());
            vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
            for (Index i = 0; i < m_; ++i) {
                const double v = static_cast<double>(X(i, f));
                Zd_(i, c) = std::isnan(v) ? -1
                    : static_cast<std::int32_t>(std::lower_bound(vals.begin(), vals.end(), v) - vals.begin());
            }
            thr_[static_cast<std::size_t>(f)] = 0.0;  // diff = 1 whenever the values differ
            inv_[static_cast<std::size_t>(f)] = 0.0;
        }
    }

    Index rows() const { return m_; }
    Index groups() const { return groups_; }
    bool missing() const { return missing_; }

    // Distances of the samples i0 .. i0+rows-1 to every sample j >= j_begin, out(r, j) (j == i
    // included). Without missing values the continuous part goes through l1_rows (the Relief
    // family's exact kernel, four samples per call, wide rows a block of features at a time), so
    // a pair has the same bits whichever of its samples asks and however the rows are batched.
    void row_distances(Index i0, Index rows, RowMatrix<double>& out, Index j_begin = 0) const {
        if (missing_) {
            for (Index r = 0; r < rows; ++r)
                for (Index j = j_begin; j < m_; ++j) out(r, j) = distance(i0 + r, j);
            return;
        }
        if (Zc_.cols()) l1_rows(Zc_, i0, rows, out, j_begin);
        if (Zd_.cols() == 0) return;
        for (Index r = 0; r < rows; ++r)
            for (Index j = j_begin; j < m_; ++j) out(r, j) = complete(out(r, j), i0 + r, j);
    }

    // The distance of two samples (the value row_distances gives).
    double distance(Index a, Index b) const {
        const Index nc = Zc_.cols(), nd = Zd_.cols();
        if (!missing_) {
            double cont[4] = {0.0, 0.0, 0.0, 0.0};
            const double* za = Zc_.row(a).data();
            if (nc) kernels::l1_dist4(Zc_.row(b).data(), za, za, za, za, nc, cont);
            return complete(cont[0], a, b);
        }
        double present = 0.0;
        const double cont = nc ? detail::cont_l1_missing(Zc_.row(a).data(), Zc_.row(b).data(), nc, present) : 0.0;
        const double mism = nd ? detail::mismatches_missing(Zd_.row(a).data(), Zd_.row(b).data(), nd, present) : 0.0;
        return (mism + cont) / present;  // NaN when no feature is present in both
    }

    // Group of neighbour j for query i, and the query's own group.
    Index group(Index i, Index j) const {
        if (continuous_target_) {
            const double a = opt_.y[static_cast<std::size_t>(i)], b = opt_.y[static_cast<std::size_t>(j)];
            return std::abs(a - b) < opt_.radius ? 0 : 1;
        }
        return static_cast<Index>(opt_.codes[static_cast<std::size_t>(j)]);
    }
    Index own(Index i) const {
        return continuous_target_ ? 0 : static_cast<Index>(opt_.codes[static_cast<std::size_t>(i)]);
    }
    // C in the miss weights: classes present, or 2 (hits and misses) for a continuous target.
    double class_factor() const { return continuous_target_ ? 1.0 : static_cast<double>(classes_present_ - 1); }
    // C itself: the classes present, or 2.
    Index classes() const { return continuous_target_ ? 2 : classes_present_; }

    const MatrixRef<T>& X() const { return X_; }
    const std::vector<double>& thr() const { return thr_; }
    const std::vector<double>& inv() const { return inv_; }
    Index cols() const { return n_; }

private:
    // Without missing values: the distance of samples a and b from the continuous sum `cont`
    // (unused without continuous features) and their discrete mismatches.
    double complete(double cont, Index a, Index b) const {
        const Index nc = Zc_.cols(), nd = Zd_.cols();
        if (nd == 0) return cont;
        const double mism = detail::mismatches(Zd_.row(a).data(), Zd_.row(b).data(),
                                               opt_.distance_weights.empty() ? nullptr : wd_.data(), nd);
        if (nc == 0) return mism / static_cast<double>(n_);
        return mism / static_cast<double>(nd) * static_cast<double>(n_) + cont;
    }

    const MatrixRef<T>& X_;
    const MixedOptions& opt_;
    Index m_ = 0, n_ = 0, groups_ = 0, classes_present_ = 2;
    bool continuous_target_ = false, missing_ = false, ramp_ = false;
    std::vector<Index> cont_, disc_;
    RowMatrix<double> Zc_;
    RowMatrix<std::int32_t> Zd_;
    std::vector<double> wd_, thr_, inv_;
};

namespace detail {

// Per-thread sums of one neighbour set: S (groups x n) and, with missing values, the counts
// per feature; without, one count per group.
struct GroupSums {
    RowMatrix<double> sum, cnt;
    std::vector<double> size;
    bool missing = false;

    void reset(Index groups, Index n, bool with_missing) {
        missing = with_missing;
        sum.setZero(groups, n);
        if (missing) cnt.setZero(groups, n);
        size.assign(static_cast<std::size_t>(groups), 0.0);
    }
    template <class T>
    void add(const MixedRelief<T>& D, Index i, Index j, Index g) {
        const T* x = D.X().row(i).data();
        const T* z = D.X().row(j).data();
        if (missing)
            add_diffs_missing(x, z, D.thr().data(), D.inv().data(), sum.row(g).data(),
                              cnt.row(g).data(), D.cols());
        else
            add_diffs(x, z, D.thr().data(), D.inv().data(), sum.row(g).data(), D.cols());
        size[static_cast<std::size_t>(g)] += 1.0;
    }
    double count(Index g, Index f) const {
        return missing ? cnt(g, f) : size[static_cast<std::size_t>(g)];
    }
    // acc[f] += sign * near(S)_f (or farc(S)_f), skipping the features the query misses.
    template <class T>
    void score(const MixedRelief<T>& D, Index i, double sign, bool complement, double* acc) const {
        const Index G = sum.rows(), own = D.own(i), n = D.cols();
        const double factor = D.class_factor();
        const T* x = D.X().row(i).data();
        for (Index f = 0; f < n; ++f) {
            if (std::isnan(static_cast<double>(x[f]))) continue;
            const double h = count(own, f);
            double M = 0.0;
            for (Index g = 0; g < G; ++g)
                if (g != own) M += count(g, f);
            if (h == 0.0 && M == 0.0) continue;
            double v = 0.0;
            if (M > 0.0) {
                for (Index g = 0; g < G; ++g) {
                    if (g == own) continue;
                    const double c = count(g, f);
                    const double s = complement ? c - sum(g, f) : sum(g, f);
                    v += s * (c / M) * factor;
                }
                v /= M;
            }
            if (h > 0.0) v += -(complement ? h - sum(own, f) : sum(own, f)) / h;
            acc[f] += sign * v;
        }
    }
};

// The mean of skrebate's distance array (SURF's threshold): sum_{i<j} d_ij, each sample's
// distances to the later samples summed in order and the samples' sums in sample order;
// 2 s / m^2 without missing values, s / (m^2 - NaN pairs) with them (skrebate keeps one
// triangle there).
template <class T>
double mixed_mean_distance(const MixedRelief<T>& D, int threads, StopPoll& poll,
                           const RowMatrix<double>* kept = nullptr) {
    const Index m = D.rows();
    constexpr Index kBatch = kPairBatch;
    std::vector<double> row_sum(static_cast<std::size_t>(m), 0.0), row_nan(static_cast<std::size_t>(m), 0.0);
    RegionErrors errors;
#pragma omp parallel num_threads(threads)
    {
        RowMatrix<double> rows;
        errors.run([&] { rows.resize(kept ? 0 : kBatch, m); });
#pragma omp for schedule(dynamic, 1)
        for (Index i0 = 0; i0 < m; i0 += kBatch) errors.run([&] {
            if (poll.stopped()) return;
            const Index count = std::min(kBatch, m - i0);
            if (!kept) D.row_distances(i0, count, rows, i0);
            for (Index r = 0; r < count; ++r) {
                // from the kept distances when there are, the same values
                const double* dr = kept ? kept->row(i0 + r).data() : rows.row(r).data();
                double s = 0.0, z = 0.0;
                for (Index j = i0 + r + 1; j < m; ++j) {
                    const double d = dr[j];
                    if (std::isnan(d)) z += 1.0;
                    else s += d;
                }
                row_sum[static_cast<std::size_t>(i0 + r)] = s;
                row_nan[static_cast<std::size_t>(i0 + r)] = z;
            }
        });
    }
    errors.rethrow();
    poll.check();
    double s = 0.0, z = 0.0;
    for (Index i = 0; i < m; ++i) {
        s += row_sum[static_cast<std::size_t>(i)];
        z += row_nan[static_cast<std::size_t>(i)];
    }
    const double mm = static_cast<double>(m) * static_cast<double>(m);
    return D.missing() ? s / (mm - z) : 2.0 * s / mm;
}

// Every pair's distance, each computed once for both samples:
// the values row_distances gives in either sample's row.
template <class T>
RecycledMatrix<double> mixed_pair_distances(const MixedRelief<T>& D, int threads, StopPoll& poll) {
    return symmetric_pairs<double>(
        D.rows(), threads, poll, [] { return 0; },
        [&](int, Index i0, Index count, RowMatrix<double>& out) {
            D.row_distances(i0, count, out, i0);
        });
}

// The radius rules over every sample with all pair distances kept (data without missing
// values; relief_radius.hpp's cached pass on the mixed data): every sample's thresholds and
// group coefficients, then the pair sums sum_{i<j} (c_i(j) + c_j(i)) diff(i, j) with skrebate's
// diffs of the mixed data (add_diffs), plus the complement form's constant on every feature
// (the per-sample pass adds it to every feature too). The weights equal the per-sample pass's
// up to the order of the additions.
template <class T>
std::vector<double> mixed_pair_sums(const MixedRelief<T>& D, const RowMatrix<double>& dist,
                                    MixedRule rule, double T_global, int threads, StopPoll& poll,
                                    PassStatus* status) {
    const Index m = D.rows(), n = D.cols();
    RadiusShape shape;
    shape.global = rule == MixedRule::surf || rule == MixedRule::surf_star;
    shape.with_far = rule == MixedRule::surf_star || rule == MixedRule::multisurf_star;
    shape.far_complement = rule == MixedRule::multisurf_star;
    shape.global_threshold = T_global;
    shape.C = D.classes();
    auto group = [&](Index i, Index j) { return static_cast<std::int64_t>(D.group(i, j)); };
    const PairCoefficients coef = pair_coefficients(
        shape, dist, D.groups(), group, [&](Index i) { return static_cast<std::int64_t>(D.own(i)); },
        threads);
    auto v = [&](Index i0, Index count, Index j, double* out) {
        coef.pair_values(shape, dist, i0, count, j, group, out);
    };
    const MatrixRef<T>& X = D.X();
    const double* thr = D.thr().data();
    const double* inv = D.inv().data();
    auto add4 = [&](Index j, const Index* i, const double* c, double* acc, Index f0, Index len) {
        add_diffs4_sum(X.row(j).data() + f0, X.row(i[0]).data() + f0, X.row(i[1]).data() + f0,
                       X.row(i[2]).data() + f0, X.row(i[3]).data() + f0, c, thr + f0, inv + f0,
                       acc + f0, len);
    };
    auto add1 = [&](Index j, Index i, double c, double* acc, Index f0, Index len) {
        add_diffs1_sum(X.row(j).data() + f0, X.row(i).data() + f0, c, thr + f0, inv + f0,
                       acc + f0, len);
    };
    std::vector<double> w =
        pair_sums(m, n, threads, poll, v, [&](const PairLists& s, Index i0, double* acc) {
            add_pair_lists(s, i0, m, n, acc, add4, add1);
        });
    for (auto& x : w) x += coef.constant;
    if (status) *status = PassStatus{m, false};
    return w;
}

}  // namespace detail

// Sum of the contributions of the query samples q0 .. q1-1 (neighbours among all samples), not
// divided by anything (fastfs.dask adds blocks of queries and divides once). `stop` and
// `callback` as in relieff_sums.
template <class T>
std::vector<double> relief_mixed_sums(const MatrixRef<T>& X, const MixedOptions& opt, Index q0,
                                      Index q1, int n_threads, const StopHook& stop = {},
                                      const ProgressHook& callback = {},
                                      PassStatus* status = nullptr) {
    require_index(0 <= q0 && q0 <= q1 && q1 <= X.rows(), "query range out of bounds");
    const MixedRelief<T> D(X, opt);
    const Index m = X.rows(), n = X.cols(), G = D.groups();
    const int threads = resolve_threads(n_threads);
    const MixedRule rule = opt.rule;
    const bool global = rule == MixedRule::surf || rule == MixedRule::surf_star;
    const bool with_far = rule == MixedRule::surf_star || rule == MixedRule::multisurf_star;
    const bool complement = rule == MixedRule::multisurf_star;
    StopPoll poll(stop);

    // Every sample a query: while they fit, the pair distances are computed once and kept (the
    // values row_distances gives, so the same weights; with missing values too, where the
    // distance of a pair is symmetric as well).
    const bool kept = q0 == 0 && q1 == m && pair_cache_fits<double>(m);
    RecycledMatrix<double> dist_all;
    if (kept) dist_all = detail::mixed_pair_distances(D, threads, poll);
    // SURF's threshold: the mean of skrebate's distance array, from every pair once (each
    // sample's distances to the later ones, the sums added in sample order).
    double T_global = 0.0;
    if (global) T_global = detail::mixed_mean_distance(D, threads, poll, kept ? &dist_all : nullptr);

    // No per-step view either: the radius rules add each pair's two contributions as one.
    if (kept && !D.missing() && rule != MixedRule::relieff && !callback)
        return detail::mixed_pair_sums(D, dist_all, rule, T_global, threads, poll, status);

    // Four queries at a time: every row of the data is read once for the four (their
    // distances, then their scores), each query's sums kept apart in the same order.
    constexpr Index R = 4;
    struct Scratch {
        RowMatrix<double> rows;
        std::vector<double> dist[R];
        std::vector<Index> grp[R];
        std::vector<std::uint8_t> member[R];  // 1 near, 2 far
        std::vector<std::vector<Index>> bucket;
        detail::GroupSums near[R], far[R];
    };
    auto scratch = [&] {
        Scratch s;
        s.rows.resize(kept ? 0 : R, m);
        for (Index r = 0; r < R; ++r) {
            s.dist[r].resize(static_cast<std::size_t>(m));
            s.grp[r].resize(static_cast<std::size_t>(m));
            s.member[r].resize(static_cast<std::size_t>(m));
        }
        s.bucket.resize(static_cast<std::size_t>(G));
        return s;
    };
    auto rows_of = [&](Scratch& s, Index i0, Index rows, double* out, Index) {
        auto& dist = s.dist;
        auto& grp = s.grp;
        auto& member = s.member;
        auto& near = s.near;
        auto& far = s.far;
        if (!kept) D.row_distances(i0, rows, s.rows);
        for (Index j = 0; j < m; ++j)
            for (Index r = 0; r < rows; ++r) {
                const Index i = i0 + r;
                dist[r][static_cast<std::size_t>(j)] = j == i ? 0.0 : kept ? dist_all(i, j) : s.rows(r, j);
                grp[r][static_cast<std::size_t>(j)] = D.group(i, j);
            }
        for (Index r = 0; r < rows; ++r) {
            near[r].reset(G, n, D.missing());
            if (with_far) far[r].reset(G, n, D.missing());
        }
        if (rule == MixedRule::relieff) {
            for (Index r = 0; r < rows; ++r) {
                const Index i = i0 + r;
                const std::vector<double>& dr = dist[r];
                for (auto& v : s.bucket) v.clear();
                for (Index j = 0; j < m; ++j)
                    if (j != i) s.bucket[static_cast<std::size_t>(grp[r][static_cast<std::size_t>(j)])].push_back(j);
                auto closer = [&](Index a, Index z) {
                    const double da = dr[static_cast<std::size_t>(a)], dz = dr[static_cast<std::size_t>(z)];
                    const bool na = std::isnan(da), nz = std::isnan(dz);
                    if (na != nz) return nz;
                    if (na) return a < z;
                    return da < dz || (da == dz && a < z);
                };
                for (Index g = 0; g < G; ++g) {
                    auto& v = s.bucket[static_cast<std::size_t>(g)];
                    const Index take = std::min<Index>(opt.k, static_cast<Index>(v.size()));
                    std::partial_sort(v.begin(), v.begin() + take, v.end(), closer);
                    for (Index t = 0; t < take; ++t) near[r].add(D, i, v[static_cast<std::size_t>(t)], g);
                }
            }
        } else {
            for (Index r = 0; r < rows; ++r) {
                const Index i = i0 + r;
                const std::vector<double>& dr = dist[r];
                double near_t = T_global, far_t = T_global;
                if (!global) {
                    double sum = 0.0, c = 0.0;
                    for (Index j = 0; j < m; ++j) {
                        const double d = dr[static_cast<std::size_t>(j)];
                        if (j != i && !std::isnan(d)) { sum += d; c += 1.0; }
                    }
                    const double mu = sum / c;
                    double v = 0.0;
                    for (Index j = 0; j < m; ++j) {
                        const double d = dr[static_cast<std::size_t>(j)];
                        if (j != i && !std::isnan(d)) v += (d - mu) * (d - mu);
                    }
                    const double sigma = std::sqrt(v / c);
                    near_t = mu - sigma / 2.0;
                    far_t = mu + sigma / 2.0;
                }
                for (Index j = 0; j < m; ++j) {
                    const double d = dr[static_cast<std::size_t>(j)];
                    member[r][static_cast<std::size_t>(j)] =
                        j == i ? 0 : d < near_t ? 1 : (with_far && d > far_t) ? 2 : 0;
                }
            }
            for (Index j = 0; j < m; ++j)
                for (Index r = 0; r < rows; ++r) {
                    const std::uint8_t k = member[r][static_cast<std::size_t>(j)];
                    if (k == 1) near[r].add(D, i0 + r, j, grp[r][static_cast<std::size_t>(j)]);
                    else if (k == 2) far[r].add(D, i0 + r, j, grp[r][static_cast<std::size_t>(j)]);
                }
        }
        for (Index r = 0; r < rows; ++r) {
            near[r].score(D, i0 + r, 1.0, false, out);
            if (with_far) far[r].score(D, i0 + r, complement ? 1.0 : -1.0, complement, out);
        }
    };
    return relief_block_pass(ReliefPass{q0, q1, n, threads, R}, poll, callback, status, scratch,
                             rows_of);
}

template <class T>
std::vector<double> relief_mixed(const MatrixRef<T>& X, const MixedOptions& opt, int n_threads,
                                 const StopHook& stop = {}, const ProgressHook& callback = {},
                                 PassStatus* status = nullptr) {
    PassStatus done;
    std::vector<double> w = relief_mixed_sums(X, opt, 0, X.rows(), n_threads, stop, callback, &done);
    for (auto& v : w) v /= static_cast<double>(done.done);
    if (status) *status = done;
    return w;
}

// Distinct non-missing values of every column, counted up to `cap` + 1 (a column with more is
// reported as cap + 1): deciding which features are discrete costs about cap reads for a
// continuous column.
template <class T>
std::vector<Index> distinct_upto(const MatrixRef<T>& X, Index cap) {
    const Index m = X.rows(), n = X.cols();
    std::vector<Index> out(static_cast<std::size_t>(n), 0);
    std::vector<double> seen;
    for (Index f = 0; f < n; ++f) {
        seen.clear();
        for (Index i = 0; i < m; ++i) {
            const double v = static_cast<double>(X(i, f));
            if (std::isnan(v) || std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
            seen.push_back(v);
            if (static_cast<Index>(seen.size()) > cap) break;
        }
        out[static_cast<std::size_t>(f)] = static_cast<Index>(seen.size());
    }
    return out;
}

}  // namespace fastfs
