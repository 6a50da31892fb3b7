// The radius members of the Relief family, scored as skrebate 0.8 scores continuous features:
// SURF (Greene et al. 2009), SURF* (Greene et al. 2010), MultiSURF (Urbanowicz et al. 2018)
// and MultiSURF* (Granizo-Mackenzie and Moore 2013). Instead of k nearest neighbours, every
// sample x takes as "near" neighbours all other samples closer than a threshold and, for the
// starred variants, as "far" neighbours all samples beyond a second threshold.
//
// Distance: d(x, z) = sum_f |x_f - z_f| / range_f (Manhattan on min-max scaled features, as in
// ReliefF). Thresholds:
//  * SURF, SURF*: one global T = (sum of d over all ordered pairs i != j) / m^2, i.e. the mean
//    of the full m x m distance matrix, its zero diagonal included (skrebate's definition);
//    near: d < T, far (SURF*): d > T;
//  * MultiSURF, MultiSURF*: per sample, mu and sigma (population standard deviation) of its
//    m - 1 distances to the other samples; near: d < mu - sigma / 2, far: d > mu + sigma / 2.
// Scoring of one neighbour set S of x (diff_f(z) = |x_f - z_f| / range_f), with H the hits in S
// (same class), M_c the members of S of each other class c, M = sum_c |M_c| and C classes:
//    near(S)_f = -(1/|H|) sum_H diff_f + sum_c (|M_c| (C - 1) / M^2) sum_{M_c} diff_f,
// the hit term dropped when H is empty and the miss term when M = 0. The contributions are
//    SURF, MultiSURF:  near(N)                  SURF*:  near(N) - near(F)
//    MultiSURF*:       near(N) + farc(F)  with  farc(S)_f = -(1/|H|) sum_H (1 - diff_f)
//                                                 + sum_c (|M_c| (C - 1) / M^2) sum_{M_c} (1 - diff_f)
// summed over all samples and divided by m. A sample is never its own neighbour. A constant
// feature (range 0) scores 0.
//
// Two passes, the same weights up to rounding:
//  * without a callback or STIR's pair moments, over every sample, when the m x m matrix of
//    pair distances takes at most 64 MB (m <= 2896): every distance is computed once for both
//    samples of its pair and kept, and since all contributions go into the same sums, a pair's
//    two are added as one, (c_i(j) + c_j(i)) |z_i - z_j| (detail::radius_pair_sums). Memory
//    beyond X's scaled copy: that matrix (a fixed cap, not growing with m past it) and a row of
//    n per block of samples;
//  * otherwise, sample by sample in the Relief family's block pass (relief_pass.hpp), so a
//    callback sees the mean contribution of the samples done: O(threads * (m + n)) for the
//    distance rows, coefficients and sums of a batch of 16 samples per thread, and O(n) per
//    block of samples; nothing m x m. Within a batch, each row of the data is read from memory
//    once for the 16 samples' distances and once for their scores.
// The global SURF threshold comes from the sorted columns (sum_{i<j} |a_i - a_j| =
// sum_k a_(k) (2k - m + 1) for the sorted values a_(0..m-1)), so no extra pass over the pairs is
// needed. Fixed blocks whose partial sums are added in block order make the weights independent
// of the thread count in both passes.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../data/class_layout.hpp"
#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"
#include "../core/parallel.hpp"
#include "relief.hpp"
#include "relief_pass.hpp"

namespace fastfs {

enum class RadiusRule { surf, surf_star, multisurf, multisurf_star };

namespace detail {

// acc_r[f] += c_r |q_r[f] - z[f]| for four query rows q_r against one neighbour row z (z read
// once for all four). Each element is one multiply-add in a fixed order, the same in every
// clone, so the result does not depend on the CPU.
FASTFS_SIMD_CLONES inline void add_abs_diff4(const double* __restrict z, const double* __restrict q0,
                                             const double* __restrict q1, const double* __restrict q2,
                                             const double* __restrict q3, const double* c,
                                             double* __restrict a0, double* __restrict a1,
                                             double* __restrict a2, double* __restrict a3,
                                             Index n) {
    const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double v = z[f];
        a0[f] += c0 * std::abs(q0[f] - v);
        a1[f] += c1 * std::abs(q1[f] - v);
        a2[f] += c2 * std::abs(q2[f] - v);
        a3[f] += c3 * std::abs(q3[f] - v);
    }
}

// The same update for one and for two query rows (a neighbour that only some of the four
// samples count): the same per-element operation, so the result is the one of add_abs_diff4
// with zero coefficients for the others.
FASTFS_SIMD_CLONES inline void add_abs_diff1(const double* __restrict z, const double* __restrict q0,
                                             double c0, double* __restrict a0, Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) a0[f] += c0 * std::abs(q0[f] - z[f]);
}

FASTFS_SIMD_CLONES inline void add_abs_diff2(const double* __restrict z, const double* __restrict q0,
                                             const double* __restrict q1, double c0, double c1,
                                             double* __restrict a0, double* __restrict a1,
                                             Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double v = z[f];
        a0[f] += c0 * std::abs(q0[f] - v);
        a1[f] += c1 * std::abs(q1[f] - v);
    }
}

// STIR's pair moments: sum[f] += |q[f] - z[f]|, sq[f] += |q[f] - z[f]|^2.
FASTFS_SIMD_CLONES inline void add_diff_moments(const double* __restrict z,
                                                const double* __restrict q,
                                                double* __restrict sum, double* __restrict sq,
                                                Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double d = std::abs(q[f] - z[f]);
        sum[f] += d;
        sq[f] += d * d;
    }
}

// Mean of the full m x m matrix of d (zero diagonal included), from the sorted columns of Z.
// Columns are sorted in parallel (one column per task, buffers allocated before the region)
// and their sums added in column order, so the value does not depend on the thread count;
// `poll` is checked between columns (sorting thousands of long columns takes seconds).
// One column's sum over the ordered pairs i < j of |z_i - z_j|: sorted, sum_k z_(k) (2k - m + 1)
// in k order. Sorts `col` in place. (The Dask tiled mode computes it on column blocks.)
// Sorts finite doubles in ascending order: std::sort below 256 values, else a least-significant
// digit radix sort of their bit patterns (sign-folded so that the unsigned order is the numeric
// one, -0 before +0), six passes of 11 bits, a pass skipped when every value has the same digit
// there (min-max scaled columns share their top bits). SURF's threshold at 1000 x 1000 went from
// about 35 to 14 ms with it; the order of equal values does not matter to the callers.
inline void sort_values(std::vector<double>& v) {
    const std::size_t m = v.size();
    if (m < 256) {
        std::sort(v.begin(), v.end());
        return;
    }
    constexpr int kBits = 11, kPasses = 6;
    constexpr std::size_t kBins = std::size_t{1} << kBits;
    constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
    thread_local std::vector<std::uint64_t> a, b;
    thread_local std::vector<std::uint32_t> hist;
    a.resize(m);
    b.resize(m);
    hist.assign(kPasses * kBins, 0);
    for (std::size_t i = 0; i < m; ++i) {
        std::uint64_t u;
        std::memcpy(&u, &v[i], sizeof u);
        u = (u & kSign) ? ~u : (u | kSign);
        a[i] = u;
        for (int p = 0; p < kPasses; ++p) ++hist[p * kBins + ((u >> (p * kBits)) & (kBins - 1))];
    }
    for (int p = 0; p < kPasses; ++p) {
        std::uint32_t* h = hist.data() + p * kBins;
        if (h[(a[0] >> (p * kBits)) & (kBins - 1)] == m) continue;  // one digit: order kept
        std::uint32_t pos = 0;
        for (std::size_t d = 0; d < kBins; ++d) {
            const std::uint32_t c = h[d];
            h[d] = pos;
            pos += c;
        }
        for (std::size_t i = 0; i < m; ++i) b[h[(a[i] >> (p * kBits)) & (kBins - 1)]++] = a[i];
        a.swap(b);
    }
    for (std::size_t i = 0; i < m; ++i) {
        const std::uint64_t u = (a[i] & kSign) ? (a[i] & ~kSign) : ~a[i];
        std::memcpy(&v[i], &u, sizeof u);
    }
}

inline double column_pair_sum(std::vector<double>& col) {
    const Index m = static_cast<Index>(col.size());
    sort_values(col);
    double s = 0.0;
    for (Index k = 0; k < m; ++k)
        s += col[static_cast<std::size_t>(k)] * static_cast<double>(2 * k - m + 1);
    return s;
}

// The mean distance over all ordered pairs from the column sums, added in column order.
inline double mean_from_column_sums(const std::vector<double>& column_sum, Index m) {
    double total = 0.0;
    for (double s : column_sum) total += s;
    return 2.0 * total / (static_cast<double>(m) * static_cast<double>(m));
}

inline double mean_pair_distance(const RowMatrix<double>& Z, int threads, StopPoll& poll) {
    const Index m = Z.rows(), n = Z.cols();
    std::vector<double> column_sum(static_cast<std::size_t>(n), 0.0);
    const int team = std::max(1, std::min<int>(threads, static_cast<int>(n)));
    std::vector<std::vector<double>> cols(static_cast<std::size_t>(team),
                                          std::vector<double>(static_cast<std::size_t>(m)));
#pragma omp parallel for schedule(dynamic, 4) num_threads(team)
    for (Index f = 0; f < n; ++f) {
        if (poll.stopped()) continue;
        const int t = thread_index();
        std::vector<double>& col = cols[static_cast<std::size_t>(t)];
        for (Index i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = Z(i, f);
        column_sum[static_cast<std::size_t>(f)] = column_pair_sum(col);
    }
    poll.check();
    return mean_from_column_sums(column_sum, m);
}

// Per-class coefficients of one neighbour set (see the header): coef[c] multiplies the diffs
// of the members of class c; the returned value is the set's constant term of the complement
// form (farc) before the sign.
inline double set_coefficients(const std::vector<Index>& count, std::int64_t own, Index C,
                               double sign, bool complement, std::vector<double>& coef) {
    const double h = static_cast<double>(count[static_cast<std::size_t>(own)]);
    double M = 0.0;
    for (Index c = 0; c < static_cast<Index>(count.size()); ++c)
        if (c != own) M += static_cast<double>(count[static_cast<std::size_t>(c)]);
    double constant = 0.0;
    for (Index c = 0; c < static_cast<Index>(count.size()); ++c) {
        const double cnt = static_cast<double>(count[static_cast<std::size_t>(c)]);
        double k = 0.0;
        if (c == own) {
            if (h > 0) {
                k = -1.0 / h;
                if (complement) constant += -1.0;  // -(1/h) sum_H 1
            }
        } else if (M > 0) {
            k = cnt * static_cast<double>(C - 1) / (M * M);
            if (complement) constant += k * cnt;
        }
        // the complement form scores (1 - diff): the diff coefficient flips sign
        coef[static_cast<std::size_t>(c)] = sign * (complement ? -k : k);
    }
    return sign * constant;
}

// The rule's shape: which thresholds and sets it has, and the global threshold (SURF, SURF*).
struct RadiusShape {
    bool global = false, with_far = false, far_complement = false;
    double global_threshold = 0.0;
    Index C = 0;  // classes present
};

// One sample's thresholds (near: d < near_t; far: d > far_t) and the constant term of its
// contribution; the coefficient of every class in its near and far sets goes to near_coef and
// far_coef.
struct RadiusSample {
    double near_t = 0.0, far_t = 0.0, constant = 0.0;
};

// MultiSURF's thresholds of sample i from its distance row d[0 .. m) (d[i] is not used):
// mu -/+ sigma / 2, with mu and sigma (population) of the m - 1 other distances. Each sum runs in
// four interleaved parts (j % 4, added as (s0 + s1) + (s2 + s3)), four chains of additions
// instead of one. The sparse pass computes its thresholds here too.
inline void multisurf_thresholds(const double* d, Index m, Index i, double& near_t,
                                 double& far_t) {
    auto parts = [&](auto term) {
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        Index j = 0;
        for (; j + 4 <= m; j += 4) {
            s0 += term(j);
            s1 += term(j + 1);
            s2 += term(j + 2);
            s3 += term(j + 3);
        }
        for (; j < m; ++j) s0 += term(j);
        return (s0 + s1) + (s2 + s3);
    };
    const double mu = parts([&](Index j) { return j == i ? 0.0 : d[j]; }) /
                      static_cast<double>(m - 1);
    const double v = parts([&](Index j) {
        const double e = d[j] - mu;
        return j == i ? 0.0 : e * e;
    });
    const double sigma = std::sqrt(v / static_cast<double>(m - 1));
    near_t = mu - sigma / 2.0;
    far_t = mu + sigma / 2.0;
}

// Sample i's thresholds, sets and coefficients from its distance row di[0 .. m) (di[i] is not
// read; -1 / +inf where the screen settled a pair below / above SURF's threshold); group(j) is
// the group of sample j for i (its class, or hit / miss by a continuous target) and own i's.
template <class Group>
RadiusSample radius_sample(const RadiusShape& r, Group&& group, std::int64_t own, Index i,
                           const double* di, Index m, std::vector<Index>& near_count,
                           std::vector<Index>& far_count, std::vector<double>& near_coef,
                           std::vector<double>& far_coef) {
    RadiusSample s;
    s.near_t = s.far_t = r.global_threshold;
    if (!r.global) multisurf_thresholds(di, m, i, s.near_t, s.far_t);
    std::fill(near_count.begin(), near_count.end(), Index{0});
    std::fill(far_count.begin(), far_count.end(), Index{0});
    // no branch on the distances (about a third of them fall on either side of near_t)
    for (Index j = 0; j < m; ++j) {
        const double d = di[j];
        const Index other = j != i;
        const std::size_t g = static_cast<std::size_t>(group(j));
        near_count[g] += other & Index{d < s.near_t};
        if (r.with_far) far_count[g] += other & Index{d > s.far_t};
    }
    s.constant = set_coefficients(near_count, own, r.C, 1.0, false, near_coef);
    if (r.with_far)
        s.constant += set_coefficients(far_count, own, r.C, r.far_complement ? 1.0 : -1.0,
                                       r.far_complement, far_coef);
    return s;
}

inline RadiusSample radius_sample(const RadiusShape& r, const Labels& codes, Index i,
                                  const double* di, Index m, std::vector<Index>& near_count,
                                  std::vector<Index>& far_count, std::vector<double>& near_coef,
                                  std::vector<double>& far_coef) {
    return radius_sample(
        r, [&](Index j) { return codes[j]; }, codes[i], i, di, m, near_count, far_count,
        near_coef, far_coef);
}

// The coefficient, in a sample's contribution, of another sample of class cj at distance d:
// near_coef[cj] when d < near_t, far_coef[cj] when the rule has a far set and d > far_t, else 0
// (chosen by selects, not branches: about a third of the distances fall on either side).
inline double radius_coefficient(const RadiusShape& r, const RadiusSample& s, double d,
                                 const double* near_coef, const double* far_coef,
                                 std::int64_t cj) {
    const double near = near_coef[cj], far = r.with_far ? far_coef[cj] : 0.0;
    const double c = d > s.far_t ? far : 0.0;
    return d < s.near_t ? near : c;
}

// Every sample's thresholds and group coefficients from the kept pair distances (near in
// columns 0 .. groups-1 of coef, far after them), and the sum of the samples' constant terms;
// group(i, j) is the group of j for i, own(i) i's own. One parallel pass over the samples.
struct PairCoefficients {
    std::vector<RadiusSample> sample;
    RowMatrix<double> coef;
    Index groups = 0;
    double constant = 0.0;

    // The pair values v(i, j) = c_i(j) + c_j(i) (radius_coefficient of each for the other) of
    // the samples i = i0 .. i0+count-1 against j, into out[0 .. count), the distances read from
    // row j of the symmetric matrix dist (contiguous); group(i, j) is the group of j for i.
    template <class Group>
    void pair_values(const RadiusShape& r, const RowMatrix<double>& dist, Index i0, Index count,
                     Index j, Group&& group, double* out) const {
        const double* dj = dist.row(j).data() + i0;
        const RadiusSample& sj = sample[static_cast<std::size_t>(j)];
        const double* cj = coef.row(j).data();
        for (Index k = 0; k < count; ++k) {
            const Index i = i0 + k;
            const double d = dj[k];
            const double* ci = coef.row(i).data();
            out[k] = radius_coefficient(r, sample[static_cast<std::size_t>(i)], d, ci,
                                        ci + groups, group(i, j)) +
                     radius_coefficient(r, sj, d, cj, cj + groups, group(j, i));
        }
    }
};

template <class Group, class Own>
PairCoefficients pair_coefficients(const RadiusShape& rule, const RowMatrix<double>& dist,
                                   Index groups, Group&& group, Own&& own, int threads) {
    const Index m = dist.rows();
    PairCoefficients out;
    out.groups = groups;
    out.sample.resize(static_cast<std::size_t>(m));
    out.coef.resize(m, 2 * groups);
    RegionErrors errors;
#pragma omp parallel num_threads(threads)
    {
        std::vector<Index> near_count, far_count;
        std::vector<double> near_coef, far_coef;
        errors.run([&] {
            near_count.resize(static_cast<std::size_t>(groups));
            far_count.resize(static_cast<std::size_t>(groups));
            near_coef.assign(static_cast<std::size_t>(groups), 0.0);
            far_coef.assign(static_cast<std::size_t>(groups), 0.0);
        });
#pragma omp for schedule(static)
        for (Index i = 0; i < m; ++i) errors.run([&] {
            out.sample[static_cast<std::size_t>(i)] = radius_sample(
                rule, [&](Index j) { return group(i, j); }, own(i), i, dist.row(i).data(), m,
                near_count, far_count, near_coef, far_coef);
            std::copy(near_coef.begin(), near_coef.end(), out.coef.row(i).data());
            std::copy(far_coef.begin(), far_coef.end(), out.coef.row(i).data() + groups);
        });
    }
    errors.rethrow();
    for (const RadiusSample& s : out.sample) out.constant += s.constant;
    return out;
}

// The lists of one block of pair_sums (rows i0 .. of the block): for each sample j > i0, the
// block's rows that count j (use: the row within the block) and their coefficients c, in
// entries start[j - i0 - 1] .. start[j - i0] - 1.
struct PairLists {
    std::vector<std::uint8_t> use;
    std::vector<double> c;
    std::vector<Index> start;
};

// The pair sums sum_{i<j} v(i, j) diff(i, j) of every feature, with v(i, j) the pair's two
// coefficients as one (zero pairs skipped), in the Relief family's block pass with fixed
// blocks of 64 samples i (each against every later sample j, blocks merged in block order, so
// the sums do not depend on the thread count). A block first lists, for each j in increasing
// order, the rows that count j and their coefficients (PairLists; v(i0, count, j, out) gives
// v(i0 + k, j) in out[k] for k < count); add(lists, i0, acc) then adds the block's diffs into
// its row acc of n.
template <class Coef, class AddLists>
std::vector<double> pair_sums(Index m, Index n, int threads, StopPoll& poll, Coef&& v,
                              AddLists&& add) {
    constexpr Index kRows = 64;
    ReliefPass pass{0, m, n, threads, kRows};
    pass.fixed_block = kRows;
    auto scratch = [&] {
        PairLists s;
        s.use.resize(static_cast<std::size_t>(kRows * m));
        s.c.resize(static_cast<std::size_t>(kRows * m));
        s.start.resize(static_cast<std::size_t>(m + 1));
        return s;
    };
    auto rows_of = [&](PairLists& s, Index i0, Index rows, double* out, Index) {
        std::size_t k = 0;
        double c[kRows];
        for (Index j = i0 + 1; j < m; ++j) {
            s.start[static_cast<std::size_t>(j - i0 - 1)] = static_cast<Index>(k);
            const Index count = std::min(rows, j - i0);
            v(i0, count, j, c);
            for (Index r = 0; r < count; ++r) {  // written always, kept when not zero
                s.use[k] = static_cast<std::uint8_t>(r);
                s.c[k] = c[r];
                k += c[r] != 0.0;
            }
        }
        s.start[static_cast<std::size_t>(std::max<Index>(0, m - i0 - 1))] = static_cast<Index>(k);
        add(static_cast<const PairLists&>(s), i0, out);
    };
    return relief_block_pass(pass, poll, ProgressHook{}, nullptr, scratch, rows_of);
}

// pair_sums' add for diffs of any kind: a chunk of 512 features at a time (the block's rows
// stay in cache), each j's entries handed to add4(j, i[4], c[4], acc, f0, len) four at a time
// and add1(j, i, c, acc, f0, len) for the rest, which add the diffs of features f0 ..
// f0+len-1 into acc[f0 ..].
template <class Add4, class Add1>
void add_pair_lists(const PairLists& s, Index i0, Index m, Index n, double* out, Add4&& add4,
                    Add1&& add1) {
    constexpr Index kChunk = 512;
    for (Index f0 = 0; f0 < n; f0 += kChunk) {
        const Index len = std::min(kChunk, n - f0);
        auto q = [&](std::size_t t) { return i0 + s.use[t]; };
        for (Index j = i0 + 1; j < m; ++j) {
            std::size_t t = static_cast<std::size_t>(s.start[static_cast<std::size_t>(j - i0 - 1)]);
            const std::size_t e = static_cast<std::size_t>(s.start[static_cast<std::size_t>(j - i0)]);
            for (; t + 3 < e; t += 4) {
                const Index i[4] = {q(t), q(t + 1), q(t + 2), q(t + 3)};
                add4(j, i, &s.c[t], out, f0, len);
            }
            for (; t < e; ++t) add1(j, q(t), s.c[t], out, f0, len);
        }
    }
}

// pair_sums' add for the plain diffs |z_i - z_j| of the rows of Z (kernels::weighted_l1_lists):
// 512 features at a time and tiles of 32 samples j (the block's rows and the tile's stay in
// cache while the kernel sweeps them 16 features at a time).
inline void add_l1_pair_lists(const PairLists& s, const RowMatrix<double>& Z, Index i0,
                              double* out) {
    constexpr Index kChunk = 512, kTile = 32;
    const Index m = Z.rows(), n = Z.cols();
    for (Index f0 = 0; f0 < n; f0 += kChunk) {
        const Index len = std::min(kChunk, n - f0);
        for (Index j0 = i0 + 1; j0 < m; j0 += kTile)
            kernels::weighted_l1_lists(Z.row(j0).data() + f0, n, std::min(kTile, m - j0),
                                       s.start.data() + (j0 - i0 - 1), s.use.data(), s.c.data(),
                                       Z.row(i0).data() + f0, n, len, out + f0);
    }
}

// The pass over every sample with all pair distances kept (m x m float64, at most
// kPairCacheBytes): each distance is computed once for both samples of its pair, and since
// every sample's contribution goes into the same sums, a pair's two contributions are added as
// one, (c_i(j) + c_j(i)) |z_i - z_j| (i < j). Three parallel passes: the distances (a batch of
// rows against every later row, written to both halves of the matrix), every sample's
// thresholds and coefficients, and the pair sums (pair_sums), so the weights do not depend on
// the thread count.
template <class Metric>
std::vector<double> radius_pair_sums(const RowMatrix<double>& Z, const RowMatrix<double>& D,
                                     const NeighbourIndex<double>& index, const Metric& metric,
                                     bool screen, const Labels& codes, Index n_codes,
                                     const RadiusShape& rule, int threads, StopPoll& poll,
                                     PassStatus* status, const std::vector<double>& inv_range) {
    const Index m = Z.rows(), n = Z.cols();
    // Every pair's distance once; with SURF's screen, -1 / +inf where the float32 pass settles
    // the pair below / above the threshold.
    struct Screen {
        RowMatrix<float> approx;
        std::vector<Index> pending;
    };
    const RecycledMatrix<double> dist =
        !screen ? pair_l1(D, threads, poll)
                : symmetric_pairs<double>(
                      m, threads, poll,
                      [&] {
                          Screen s;
                          s.approx.resize(kPairBatch, m);
                          return s;
                      },
                      [&](Screen& s, Index i0, Index count, RowMatrix<double>& out) {
                          l1_rows(index.X32(), i0, count, s.approx, i0);
                          for (Index r = 0; r < count; ++r)
                              within_radius(index, metric, rule.global_threshold, i0 + r,
                                            s.approx.row(r).data(), nullptr, out.row(r).data(),
                                            s.pending, i0);
                      });
    const PairCoefficients coef = pair_coefficients(
        rule, dist, n_codes, [&](Index, Index j) { return codes[j]; },
        [&](Index i) { return codes[i]; }, threads);
    auto v = [&](Index i0, Index count, Index j, double* out) {
        coef.pair_values(
            rule, dist, i0, count, j, [&](Index, Index b) { return codes[b]; }, out);
    };
    std::vector<double> w = pair_sums(
        m, n, threads, poll, v,
        [&](const PairLists& s, Index i0, double* acc) { add_l1_pair_lists(s, Z, i0, acc); });
    for (Index f = 0; f < n; ++f)
        w[static_cast<std::size_t>(f)] =
            inv_range[static_cast<std::size_t>(f)] > 0.0 ? w[static_cast<std::size_t>(f)] + coef.constant
                                                         : 0.0;
    if (status) *status = PassStatus{m, false};
    return w;
}

}  // namespace detail

// Scores of the radius rule `rule` (see the header). `stop` is polled by the calling thread
// between groups of four samples; `callback` gets the weights of the samples done so far (their
// sum / their count) after every step (a group of blocks, one per thread) and may end the pass
// there (status->done samples).
//
// relief_radius_sums is the pass over the query samples q0 .. q1-1 only (neighbours and
// thresholds from all samples), returning the sum of their contributions, not divided by
// anything: fastfs.dask adds the sums of blocks of queries and divides once. status->done
// counts from q0.
template <class T>
std::vector<double> relief_radius_sums(const MatrixRef<T>& X, const Labels& codes,
                                       RadiusRule rule, Index q0, Index q1, int n_threads,
                                       const StopHook& stop = {},
                                       const ProgressHook& callback = {},
                                       PassStatus* status = nullptr,
                                       const std::vector<double>& distance_weights = {},
                                       PairMoments* moments = nullptr) {
    require(X.rows() == codes.size(), "X and y have different numbers of samples");
    require_index(0 <= q0 && q0 <= q1 && q1 <= X.rows(), "query range out of bounds");
    require(!moments || rule == RadiusRule::surf || rule == RadiusRule::multisurf,
            "pair moments (STIR) are defined for the near set only: SURF or MultiSURF");
    const Index m = X.rows(), n = X.cols();
    require(n >= 1, "X: need at least one feature");
    const ClassLayout L = ClassLayout::from_codes(codes);
    const Index n_codes = L.n_classes();
    Index C = 0;  // classes present
    for (Index c = 0; c < n_codes; ++c)
        if (L.begin[static_cast<std::size_t>(c) + 1] > L.begin[static_cast<std::size_t>(c)]) ++C;
    require(C >= 2, "y: need at least 2 classes, got " + std::to_string(C));

    std::vector<double> inv_range;
    // Z: the min-max scaled copy the scores' diffs read; D: the one distances read (Z itself,
    // or Z with each column times its distance weight).
    const int threads = resolve_threads(n_threads);
    const RecycledMatrix<double> Z = min_max_scaled(X, inv_range, {}, threads);
    RecycledMatrix<double> Zw;
    if (!distance_weights.empty()) {
        // min_max_scaled's weighted copy (z_f = ((x_f - min_f) * inv_range_f) * weight_f, the
        // same products) without a second pass over X.
        require(static_cast<Index>(distance_weights.size()) == X.cols(),
                "distance_weights: expected one weight per feature");
        Zw.resize(Z.rows(), Z.cols());
        const Eigen::Map<const Eigen::RowVectorXd> w(distance_weights.data(), X.cols());
        for (Index i = 0; i < Z.rows(); ++i) Zw.row(i) = Z.row(i).cwiseProduct(w);
    }
    const RowMatrix<double>& D = distance_weights.empty() ? Z : Zw;
    const bool global = rule == RadiusRule::surf || rule == RadiusRule::surf_star;
    const bool with_far = rule == RadiusRule::surf_star || rule == RadiusRule::multisurf_star;
    const bool far_complement = rule == RadiusRule::multisurf_star;
    StopPoll poll(stop);
    const double global_threshold = global ? detail::mean_pair_distance(D, threads, poll) : 0.0;
    // SURF's threshold is known before any distance: with many features, a float32 pass on the
    // engine's index settles most pairs and only those it cannot settle get an exact float64
    // distance (within_radius).
    const NeighbourIndex<double> index(
        D, global ? screen::kMinFeatures : std::numeric_limits<Index>::max(), screen::kMaxAbs,
        false, threads);
    ScaledL1 metric;
    metric.prepare(index);
    const bool screen = metric.on;
    detail::RadiusShape shape;
    shape.global = global;
    shape.with_far = with_far;
    shape.far_complement = far_complement;
    shape.global_threshold = global_threshold;
    shape.C = C;
    // Every sample a query, no per-step view or pair moments, and the pair distances fit the
    // cache: each distance once and each pair's two contributions as one.
    if (!moments && !callback && q0 == 0 && q1 == m && pair_cache_fits<double>(m))
        return detail::radius_pair_sums(Z, D, index, metric, screen, codes, n_codes, shape,
                                        threads, poll, status, inv_range);

    // With the pair moments, a row of 4 n + 2 per block of a step (O(threads * n)); a
    // constant term per block (the complement form's).
    // Batches of 16 queries: their distance rows, coefficients and sums per thread
    // (O(16 (m + n))), each row of D and Z read from memory once per batch.
    constexpr Index kBatch = 16;
    ReliefPass pass{q0, q1, n, threads, kBatch};
    pass.stepwise = moments != nullptr;
    std::vector<double> partial_constant(static_cast<std::size_t>(pass.blocks()), 0.0);
    RowMatrix<double> block_moments;
    std::optional<detail::PairGraphPass> graph;
    detail::start_pair_moments(moments, m, n, q0, q1, threads, 0, pass,
                               static_cast<bool>(callback), block_moments, graph);
    struct Scratch {
        RowMatrix<double> dist, coef, acc;
        RowMatrix<float> approx;
        std::vector<Index> near_count, far_count, pending;
        std::vector<double> near_coef, far_coef;
    };
    auto scratch = [&] {
        Scratch s;
        s.approx.resize(screen ? kBatch : 0, m);
        s.dist.resize(kBatch, m);
        s.coef.resize(kBatch, m);
        s.acc.resize(kBatch, n);
        s.near_count.resize(static_cast<std::size_t>(n_codes));
        s.far_count.resize(static_cast<std::size_t>(n_codes));
        s.near_coef.resize(static_cast<std::size_t>(n_codes));
        s.far_coef.resize(static_cast<std::size_t>(n_codes));
        return s;
    };
    const Index block = pass.block();
    auto rows_of = [&](Scratch& s, Index i0, Index rows, double* out, Index slot) {
        // the block of i0 (its constant term)
        const Index b = (i0 - q0) / block;
        auto q = [&](Index r) { return Z.row(std::min(i0 + r, i0 + rows - 1)).data(); };
        if (screen) {
            l1_rows(index.X32(), i0, rows, s.approx);
            for (Index r = 0; r < rows; ++r)
                within_radius(index, metric, global_threshold, i0 + r, s.approx.row(r).data(),
                              nullptr, s.dist.row(r).data(), s.pending);
        } else {
            l1_rows(D, i0, rows, s.dist);
        }
        for (Index r = 0; r < rows; ++r) {
            const Index i = i0 + r;
            const double* di = s.dist.row(r).data();
            const detail::RadiusSample rs = detail::radius_sample(
                shape, codes, i, di, m, s.near_count, s.far_count, s.near_coef, s.far_coef);
            const double near_t = rs.near_t;
            const std::int64_t own = codes[i];
            partial_constant[static_cast<std::size_t>(b)] += rs.constant;
            // the coefficient of every other sample in x's contribution
            double* cr = s.coef.row(r).data();
            for (Index j = 0; j < m; ++j)
                cr[j] = j == i ? 0.0  // never its own neighbour
                               : detail::radius_coefficient(shape, rs, di[j], s.near_coef.data(),
                                                            s.far_coef.data(), codes[j]);
            if (moments) {
                // every pair (i, j) of the near set, as a hit or a miss
                double* mom = block_moments.row(slot).data();
                Index hits = 0, misses = 0;
                for (Index j = 0; j < m; ++j) {
                    if (j == i || !(di[j] < near_t)) continue;
                    const bool hit = codes[j] == own;
                    double* sum = mom + (hit ? 0 : 2 * n);
                    detail::add_diff_moments(Z.row(j).data(), Z.row(i).data(), sum, sum + n, n);
                    ++(hit ? hits : misses);
                    graph->add_pair(i, own, j, hit, di[j], b);
                }
                mom[4 * n] += static_cast<double>(hits);
                mom[4 * n + 1] += static_cast<double>(misses);
                graph->set_radius(i, near_t);
                graph->add_out(i, hits, misses);
            }
        }
        // acc_r += sum_j coef_rj |z_r - z_j| for every query r of the batch, j in increasing
        // order for each element: each row z_j of Z is read once for the whole batch, the
        // queries that count j taken four per kernel call (the batch's rows and sums stay in
        // cache). Every element is updated alone, so which queries share a call changes no bit,
        // and skipping a zero coefficient neither (c * |.| = +0 leaves a sum that started at +0
        // unchanged).
        s.acc.setZero();
        for (Index j = 0; j < m; ++j) {
            const double* zj = Z.row(j).data();
            Index use[32];  // the queries that count j: at most kBatch (16)
            double c[32];
            Index k = 0;
            for (Index r = 0; r < rows; ++r) {
                const double v = s.coef(r, j);
                if (v != 0.0) {
                    use[k] = r;
                    c[k++] = v;
                }
            }
            auto a = [&](Index t) { return s.acc.row(use[t]).data(); };
            auto x = [&](Index t) { return q(use[t]); };
            Index t = 0;
            for (; t + 3 < k; t += 4)
                detail::add_abs_diff4(zj, x(t), x(t + 1), x(t + 2), x(t + 3), c + t, a(t),
                                      a(t + 1), a(t + 2), a(t + 3), n);
            if (k - t >= 2) {
                detail::add_abs_diff2(zj, x(t), x(t + 1), c[t], c[t + 1], a(t), a(t + 1), n);
                t += 2;
            }
            if (k - t == 1) detail::add_abs_diff1(zj, x(t), c[t], a(t), n);
        }
        for (Index r = 0; r < rows; ++r)
            for (Index f = 0; f < n; ++f) out[f] += s.acc(r, f);
    };
    auto begin_step = [&](Index) {
        if (moments) block_moments.setZero();
    };
    const Index n_blocks = pass.blocks(), step = pass.step_blocks(static_cast<bool>(callback));
    auto merge = [&](Index b, Index slot, const double* acc, std::vector<double>& w) {
        for (Index f = 0; f < n; ++f)
            if (inv_range[static_cast<std::size_t>(f)] > 0.0)
                w[static_cast<std::size_t>(f)] +=
                    acc[f] + partial_constant[static_cast<std::size_t>(b)];
        if (moments) detail::add_block_moments(block_moments.row(slot).data(), n, *moments);
        if (graph && b + 1 == std::min(n_blocks, b - slot + step))
            graph->end_step(D, codes, (b - slot) * block, std::min(m, (b + 1) * block), threads);
    };
    std::vector<double> w =
        relief_block_pass(pass, poll, callback, status, scratch, rows_of, begin_step, merge);
    if (graph) graph->finish(*moments);
    return w;
}

template <class T>
std::vector<double> relief_radius(const MatrixRef<T>& X, const Labels& codes, RadiusRule rule,
                                  int n_threads, const StopHook& stop = {},
                                  const ProgressHook& callback = {},
                                  PassStatus* status = nullptr,
                                  const std::vector<double>& distance_weights = {},
                                  PairMoments* moments = nullptr) {
    PassStatus done;
    std::vector<double> w = relief_radius_sums(X, codes, rule, 0, X.rows(), n_threads, stop,
                                               callback, &done, distance_weights, moments);
    for (auto& v : w) v /= static_cast<double>(done.done);
    if (status) *status = done;
    return w;
}

}  // namespace fastfs
