// The Relief family on sparse data (CSR, e.g. a bag of words), never densified: Relief (Kira
// and Rendell), ReliefF, SURF, SURF*, MultiSURF and MultiSURF*, with the definitions of the
// dense passes (relief.hpp, relief_radius.hpp, relief_mixed.hpp) on data without missing
// values: continuous features (diff = |x_f - z_f| / range_f, ranges over the whole column,
// implicit zeros included), discrete ones (diff 0 or 1), both (skrebate's distance and ramp),
// class labels or a continuous target.
//
// Distances. With per-feature weights c_f (continuous: distance weight / range_f) the
// continuous part of d(x, z) is sum_f c_f |x_f - z_f| over the union of the two rows' entries;
// it is computed as (b_x + b_z) - s(x, z) with the row sums b_x = sum_f c_f |x_f| and, over the
// features where both rows have an entry, s(x, z) = sum_f (c_f |x_f| + c_f |z_f| - c_f |x_f - z_f|),
// every product rounded as in the union sum.
// For a query x, s(x, .) is gathered for every sample at once from the columns of x's features
// (A stored by columns once), so a query costs O(m + sum of the lengths of its columns), not
// O(m n). All these sums are compensated (two-sum), so the distance is the exact sum of the
// union's rounded terms c_f |x_f - z_f| to about 2^-100 before one final rounding: pairs whose
// terms are the same up to their order (identical rows, or rows that differ from the query in
// different features of the same range by the same amounts) are at exactly the same distance,
// so they tie, and ties go to the lower sample index; two identical rows are at distance 0 to
// within about 2^-100 of their row sum. The discrete part counts differing features
// the same way: (e_x + e_z) - (2 per equal pair of entries + 1 per differing pair). Relief's
// squared Euclidean distance: (|x|^2 + |z|^2) - sum_{both} (x_f^2 + z_f^2 - (x_f - z_f)^2).
//
// Scores. A neighbour z with coefficient c adds c * diff_f(x, z) to feature f for the features
// in the union of the rows' entries only (diff is 0 where both are zero), merged over their
// sorted indices. The neighbour sets, coefficients and thresholds are those of the dense passes.
//
// Memory: the column copy of A (O(nnz)), O(m + n) for the row sums and feature scales, per
// thread O(m) for a query's distances and neighbour lists, and the partial weights of the
// blocks of one step (threads x n); never m x n or m x m. Queries are split into fixed blocks
// whose sums are added in block order, so the weights do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/progress.hpp"
#include "../core/types.hpp"
#include "../data/sparse_rows.hpp"
#include "../neighbours/engine.hpp"
#include "relief_mixed.hpp"
#include "relief_pass.hpp"

namespace fastfs {

// The rules and options of the general kernel (relief_mixed.hpp); here `discrete` may be empty
// (all continuous).
using SparseRule = MixedRule;

struct SparseReliefOptions : MixedOptions {
    // The continuous class-label pass (relief.hpp, relief_radius.hpp) gives a constant feature
    // the score 0; the general pass (relief_mixed.hpp) adds MultiSURF*'s constant term to every
    // feature. true: the former.
    bool zero_constant = true;
};

namespace detail {

// hi + lo += x with the rounding error of hi + x kept in lo (Knuth's two-sum): a sum of many
// terms to about 2^-100 relative, so the same terms added in any order give the same double
// once rounded (hi + lo), and a sum minus itself is exactly 0.
inline void add_compensated(double& hi, double& lo, double x) {
    const double s = hi + x;
    const double b = s - hi;
    lo += (hi - (s - b)) + (x - b);
    hi = s;
}

// (a + b) - c for three compensated sums, rounded once.
inline double sum_minus(double ah, double al, double bh, double bl, double ch, double cl) {
    double hi = ah, lo = al;
    add_compensated(hi, lo, bh);
    lo += bl;
    add_compensated(hi, lo, -ch);
    lo -= cl;
    return hi + lo;
}

// Calls visit(f, a, b) for every feature in the union of the entries of rows i and j of A
// (a, b their values, 0 where absent), in increasing feature order.
template <class Visit>
inline void merge_rows(const SparseRef& A, Index i, Index j, Visit&& visit) {
    Index p = A.begin(i), q = A.begin(j);
    const Index pe = A.end(i), qe = A.end(j);
    while (p < pe || q < qe) {
        const std::int64_t fi = p < pe ? A.idx[p] : std::numeric_limits<std::int64_t>::max();
        const std::int64_t fj = q < qe ? A.idx[q] : std::numeric_limits<std::int64_t>::max();
        if (fi == fj) {
            visit(static_cast<Index>(fi), A.val[p], A.val[q]);
            ++p;
            ++q;
        } else if (fi < fj) {
            visit(static_cast<Index>(fi), A.val[p], 0.0);
            ++p;
        } else {
            visit(static_cast<Index>(fj), 0.0, A.val[q]);
            ++q;
        }
    }
}

}  // namespace detail

// The prepared sparse data: feature scales, row sums, the column copy, and the distance of a
// query to every sample.
class SparseRelief {
public:
    SparseRelief(const SparseRef& A, const SparseReliefOptions& opt) : A_(A), opt_(opt) {
        m_ = A.rows;
        n_ = A.cols;
        require(m_ >= 2, "X: need at least 2 samples");
        require(n_ >= 1, "X: need at least one feature");
        require(opt.discrete.empty() || static_cast<Index>(opt.discrete.size()) == n_,
                "discrete_features: expected one flag per feature");
        require(opt.distance_weights.empty() ||
                    static_cast<Index>(opt.distance_weights.size()) == n_,
                "distance_weights: expected one weight per feature");
        require(opt.k >= 1, "n_neighbors must be >= 1");
        for (Index p = 0; p < A.nnz(); ++p)
            require(std::isfinite(A.val[p]), "X: contains NaN or infinity");
        continuous_target_ = !opt.y.empty();
        Index present = 2;
        groups_ = detail::relief_target_groups(opt, m_, present);
        factor_ = static_cast<double>(present - 1);
        At_ = transpose(A);
        disc_.assign(static_cast<std::size_t>(n_), 0);
        for (Index f = 0; f < n_; ++f) {
            disc_[static_cast<std::size_t>(f)] =
                opt.discrete.empty() ? 0 : (opt.discrete[static_cast<std::size_t>(f)] ? 1 : 0);
            (disc_[static_cast<std::size_t>(f)] ? nd_ : nc_) += 1;
        }
        const bool ramp = nc_ > 0 && nd_ > 0;
        inv_.assign(static_cast<std::size_t>(n_), 0.0);
        thr_.assign(static_cast<std::size_t>(n_), 0.0);
        dcoef_.assign(static_cast<std::size_t>(n_), 0.0);
        const SparseRef C = At_.ref();
        for (Index f = 0; f < n_; ++f) {
            const double w =
                opt.distance_weights.empty() ? 1.0 : opt.distance_weights[static_cast<std::size_t>(f)];
            if (disc_[static_cast<std::size_t>(f)]) {
                dcoef_[static_cast<std::size_t>(f)] = w;  // diff = 1 whenever the values differ
                continue;
            }
            const Index len = C.end(f) - C.begin(f);
            double lo = len < m_ ? 0.0 : std::numeric_limits<double>::infinity();
            double hi = len < m_ ? 0.0 : -std::numeric_limits<double>::infinity();
            for (Index p = C.begin(f); p < C.end(f); ++p) {
                lo = std::min(lo, C.val[p]);
                hi = std::max(hi, C.val[p]);
            }
            const double r = hi > lo ? 1.0 / (hi - lo) : 0.0;
            inv_[static_cast<std::size_t>(f)] = r;
            dcoef_[static_cast<std::size_t>(f)] = r * w;
            thr_[static_cast<std::size_t>(f)] =
                ramp ? column_sd(C, f) : std::numeric_limits<double>::infinity();
        }
        // Row sums of the distance (continuous part, discrete part) and of Relief's squares.
        // Each a compensated sum: hi at [i], lo at [m + i].
        base_c_.assign(2 * static_cast<std::size_t>(m_), 0.0);
        base_d_.assign(2 * static_cast<std::size_t>(m_), 0.0);
        base_sq_.assign(2 * static_cast<std::size_t>(m_), 0.0);
        for (Index i = 0; i < m_; ++i) {
            const std::size_t h = static_cast<std::size_t>(i), l = static_cast<std::size_t>(m_ + i);
            for (Index p = A.begin(i); p < A.end(i); ++p) {
                const Index f = static_cast<Index>(A.idx[p]);
                const double a = A.val[p];
                if (disc_[static_cast<std::size_t>(f)]) {
                    if (a != 0.0) detail::add_compensated(base_d_[h], base_d_[l], dcoef_[static_cast<std::size_t>(f)]);
                } else {
                    detail::add_compensated(base_c_[h], base_c_[l],
                                            dcoef_[static_cast<std::size_t>(f)] * std::abs(a));
                }
                detail::add_compensated(base_sq_[h], base_sq_[l], a * a);
            }
        }
    }

    Index rows() const { return m_; }
    Index cols() const { return n_; }
    Index groups() const { return groups_; }
    double class_factor() const { return factor_; }
    const SparseRef& matrix() const { return A_; }
    const std::vector<double>& inv() const { return inv_; }
    bool discrete(Index f) const { return disc_[static_cast<std::size_t>(f)] != 0; }

    Index group(Index i, Index j) const {
        if (continuous_target_)
            return std::abs(opt_.y[static_cast<std::size_t>(i)] - opt_.y[static_cast<std::size_t>(j)]) <
                           opt_.radius
                       ? 0
                       : 1;
        return static_cast<Index>(opt_.codes[static_cast<std::size_t>(j)]);
    }
    Index own(Index i) const {
        return continuous_target_ ? 0 : static_cast<Index>(opt_.codes[static_cast<std::size_t>(i)]);
    }

    // The scores' diff of feature f for a raw difference |x_f - z_f|: discrete, 1 when the
    // values differ; continuous, raw / range_f, or 1 beyond the feature's standard deviation
    // when the data mix both kinds (skrebate's ramp).
    double diff(Index f, double raw) const {
        return raw > thr_[static_cast<std::size_t>(f)] ? 1.0 : raw * inv_[static_cast<std::size_t>(f)];
    }

    // acc[f] += c * diff_f(x_i, x_j) over the union of the two rows' entries.
    void add_diffs(Index i, Index j, double c, double* acc) const {
        detail::merge_rows(A_, i, j, [&](Index f, double a, double b) {
            acc[f] += c * diff(f, std::abs(a - b));
        });
    }

    // dist[j] = d(x_i, x_j) for every j (dist[i] = 0); sc and sd are scratch of 2 m each.
    // Compensated sums throughout: the distance is the exact one of the rounded terms to about
    // 2^-100 before its final rounding, so pairs whose terms are the same up to their order
    // (a permutation of the features) get the same distance and tie by index.
    void distances(Index i, double* dist, double* sc, double* sd) const {
        std::fill(sc, sc + 2 * m_, 0.0);
        std::fill(sd, sd + 2 * m_, 0.0);
        const SparseRef C = At_.ref();
        for (Index p = A_.begin(i); p < A_.end(i); ++p) {
            const Index f = static_cast<Index>(A_.idx[p]);
            const double a = A_.val[p];
            if (a == 0.0) continue;
            const double w = dcoef_[static_cast<std::size_t>(f)];
            if (disc_[static_cast<std::size_t>(f)]) {
                for (Index q = C.begin(f); q < C.end(f); ++q) {
                    const double b = C.val[q];
                    if (b != 0.0)
                        detail::add_compensated(sd[C.idx[q]], sd[m_ + C.idx[q]], a == b ? 2.0 * w : w);
                }
            } else {
                // the terms of the union sum, each rounded as it is there: c |a|, c |b|, c |a - b|
                const double ca = w * std::abs(a);
                for (Index q = C.begin(f); q < C.end(f); ++q) {
                    const double b = C.val[q];
                    double& hi = sc[C.idx[q]];
                    double& lo = sc[m_ + C.idx[q]];
                    detail::add_compensated(hi, lo, ca);
                    detail::add_compensated(hi, lo, w * std::abs(b));
                    detail::add_compensated(hi, lo, -(w * std::abs(a - b)));
                }
            }
        }
        const std::size_t ih = static_cast<std::size_t>(i), il = static_cast<std::size_t>(m_ + i);
        const double n = static_cast<double>(n_), nd = static_cast<double>(nd_);
        for (Index j = 0; j < m_; ++j) {
            const std::size_t jh = static_cast<std::size_t>(j), jl = static_cast<std::size_t>(m_ + j);
            const double cont = nc_ ? detail::sum_minus(base_c_[ih], base_c_[il], base_c_[jh],
                                                        base_c_[jl], sc[jh], sc[jl])
                                    : 0.0;
            double d = cont;
            if (nd_) {
                const double mism = detail::sum_minus(base_d_[ih], base_d_[il], base_d_[jh],
                                                      base_d_[jl], sd[jh], sd[jl]);
                d = nc_ ? mism / nd * n + cont : mism / n;
            }
            dist[j] = d;
        }
        dist[i] = 0.0;
    }

    // Relief's squared Euclidean distances of x_i to every sample (dist[i] = 0); s is scratch
    // of 2 m. Compensated sums as in distances().
    void squared_distances(Index i, double* dist, double* s) const {
        std::fill(s, s + 2 * m_, 0.0);
        const SparseRef C = At_.ref();
        for (Index p = A_.begin(i); p < A_.end(i); ++p) {
            const Index f = static_cast<Index>(A_.idx[p]);
            const double a = A_.val[p];
            for (Index q = C.begin(f); q < C.end(f); ++q) {
                const double b = C.val[q], e = a - b;
                double& hi = s[C.idx[q]];
                double& lo = s[m_ + C.idx[q]];
                detail::add_compensated(hi, lo, a * a);
                detail::add_compensated(hi, lo, b * b);
                detail::add_compensated(hi, lo, -(e * e));
            }
        }
        const std::size_t ih = static_cast<std::size_t>(i), il = static_cast<std::size_t>(m_ + i);
        for (Index j = 0; j < m_; ++j)
            dist[j] = detail::sum_minus(base_sq_[ih], base_sq_[il], base_sq_[static_cast<std::size_t>(j)],
                                        base_sq_[static_cast<std::size_t>(m_ + j)],
                                        s[static_cast<std::size_t>(j)],
                                        s[static_cast<std::size_t>(m_ + j)]);
        dist[i] = 0.0;
    }

    // Mean of the full m x m distance matrix, zero diagonal included: 2 sum_{i<j} d_ij / m^2,
    // from each column's sorted values (sum_{i<j} |a_i - a_j| = sum_k a_(k) (2k - m + 1)) and
    // each discrete column's value counts (pairs that differ = (m^2 - sum_v count_v^2) / 2).
    double mean_pair_distance() const {
        const SparseRef C = At_.ref();
        const double m = static_cast<double>(m_);
        double cont = 0.0, disc = 0.0;
        std::vector<double> v;
        for (Index f = 0; f < n_; ++f) {
            v.assign(C.val + C.begin(f), C.val + C.end(f));
            v.erase(std::remove(v.begin(), v.end(), 0.0), v.end());
            std::sort(v.begin(), v.end());
            const Index len = static_cast<Index>(v.size()), zeros = m_ - len;
            if (disc_[static_cast<std::size_t>(f)]) {
                double sq = static_cast<double>(zeros) * static_cast<double>(zeros);
                for (Index a = 0; a < len;) {
                    Index b = a;
                    while (b < len && v[static_cast<std::size_t>(b)] == v[static_cast<std::size_t>(a)]) ++b;
                    sq += static_cast<double>(b - a) * static_cast<double>(b - a);
                    a = b;
                }
                disc += dcoef_[static_cast<std::size_t>(f)] * ((m * m - sq) / 2.0);
            } else {
                double s = 0.0;
                for (Index a = 0; a < len; ++a) {
                    const double x = v[static_cast<std::size_t>(a)];
                    const Index rank = x < 0.0 ? a : a + zeros;
                    s += x * static_cast<double>(2 * rank - m_ + 1);
                }
                cont += dcoef_[static_cast<std::size_t>(f)] * s;
            }
        }
        double total = cont;
        if (nd_) {
            const double n = static_cast<double>(n_), nd = static_cast<double>(nd_);
            total += nc_ ? disc / nd * n : disc / n;
        }
        return 2.0 * total / (m * m);
    }

private:
    // Population standard deviation of column f over all m samples, summed in sample order
    // with the zeros in place (the dense pass's sums, term by term).
    double column_sd(const SparseRef& C, Index f) const {
        double s = 0.0;
        for (Index p = C.begin(f); p < C.end(f); ++p) s += C.val[p];
        const double mean = s / static_cast<double>(m_);
        double var = 0.0;
        Index p = C.begin(f);
        for (Index i = 0; i < m_; ++i) {
            double v = 0.0;
            if (p < C.end(f) && C.idx[p] == i) v = C.val[p++];
            var += (v - mean) * (v - mean);
        }
        return std::sqrt(var / static_cast<double>(m_));
    }

    const SparseRef& A_;
    const SparseReliefOptions& opt_;
    SparseOwned At_;
    Index m_ = 0, n_ = 0, nc_ = 0, nd_ = 0, groups_ = 0;
    double factor_ = 1.0;
    bool continuous_target_ = false;
    std::vector<std::uint8_t> disc_;
    std::vector<double> inv_, thr_, dcoef_, base_c_, base_d_, base_sq_;
};

namespace detail {

// Coefficients of one neighbour set with count[g] members of group g (own = the query's
// group): the near form (-1/h for hits, (c_g / M) factor / M for group g's misses) times
// `sign`, or its complement (every diff replaced by 1 - diff: coefficients negated and the
// returned constant term).
inline double sparse_set_coefficients(const std::vector<Index>& count, Index own, double factor,
                                      double sign, bool complement, std::vector<double>& coef) {
    const Index G = static_cast<Index>(count.size());
    const double h = static_cast<double>(count[static_cast<std::size_t>(own)]);
    double M = 0.0;
    for (Index g = 0; g < G; ++g)
        if (g != own) M += static_cast<double>(count[static_cast<std::size_t>(g)]);
    double constant = 0.0;
    for (Index g = 0; g < G; ++g) {
        const double c = static_cast<double>(count[static_cast<std::size_t>(g)]);
        double k = 0.0;
        if (g == own) {
            if (h > 0) {
                k = -1.0 / h;
                if (complement) constant += -1.0;
            }
        } else if (M > 0 && c > 0) {
            k = (c / M) * factor / M;
            if (complement) constant += k * c;
        }
        coef[static_cast<std::size_t>(g)] = sign * (complement ? -k : k);
    }
    return sign * constant;
}

}  // namespace detail

// Sum of the contributions of the query samples q0 .. q1-1 (neighbours among all samples), not
// divided by anything. `stop` is polled by the calling thread between queries; `callback` gets
// the weights of the samples done so far (their sum / their count) after every step (a group
// of blocks, one per thread) and may end the pass there (status->done samples from q0).
inline std::vector<double> relief_sparse_sums(const SparseRef& A, const SparseReliefOptions& opt,
                                              Index q0, Index q1, int n_threads,
                                              const StopHook& stop = {},
                                              const ProgressHook& callback = {},
                                              PassStatus* status = nullptr) {
    require_index(0 <= q0 && q0 <= q1 && q1 <= A.rows, "query range out of bounds");
    const SparseRelief D(A, opt);
    const Index m = A.rows, n = A.cols, G = D.groups();
    const int threads = resolve_threads(n_threads);
    const SparseRule rule = opt.rule;
    const bool global = rule == SparseRule::surf || rule == SparseRule::surf_star;
    const bool with_far = rule == SparseRule::surf_star || rule == SparseRule::multisurf_star;
    const bool complement = rule == SparseRule::multisurf_star;
    const double T_global = global ? D.mean_pair_distance() : 0.0;
    StopPoll poll(stop);
    struct Scratch {
        std::vector<double> dist, sc, sd;
        std::vector<Index> grp;
        std::vector<std::vector<Index>> bucket;
        std::vector<Index> near_count, far_count;
        std::vector<double> near_coef, far_coef;
    };
    auto scratch = [&] {
        Scratch s;
        s.dist.resize(static_cast<std::size_t>(m));
        s.sc.resize(2 * static_cast<std::size_t>(m));
        s.sd.resize(2 * static_cast<std::size_t>(m));
        s.grp.resize(static_cast<std::size_t>(m));
        s.bucket.resize(static_cast<std::size_t>(G));
        s.near_count.resize(static_cast<std::size_t>(G));
        s.far_count.resize(static_cast<std::size_t>(G));
        s.near_coef.resize(static_cast<std::size_t>(G));
        s.far_coef.resize(static_cast<std::size_t>(G));
        return s;
    };
    // MultiSURF*'s constant term of each block of a step, added to its row when merged.
    std::vector<double> partial_constant;
    auto begin_step = [&](Index count) {
        partial_constant.assign(static_cast<std::size_t>(count), 0.0);
    };
    auto merge = [&](Index, Index slot, const double* acc, std::vector<double>& w) {
        const double c = partial_constant[static_cast<std::size_t>(slot)];
        for (Index f = 0; f < n; ++f) {
            if (opt.zero_constant && D.inv()[static_cast<std::size_t>(f)] == 0.0) continue;
            w[static_cast<std::size_t>(f)] += acc[f] + c;
        }
    };
    auto rows = [&](Scratch& sc_, Index i, Index, double* acc, Index slot) {
        std::vector<double>& dist = sc_.dist;
        std::vector<Index>& grp = sc_.grp;
        auto& bucket = sc_.bucket;
        auto& near_count = sc_.near_count;
        auto& far_count = sc_.far_count;
        auto& near_coef = sc_.near_coef;
        auto& far_coef = sc_.far_coef;
        double& constant = partial_constant[static_cast<std::size_t>(slot)];
        D.distances(i, dist.data(), sc_.sc.data(), sc_.sd.data());
        for (Index j = 0; j < m; ++j) grp[static_cast<std::size_t>(j)] = D.group(i, j);
        const Index own = D.own(i);
        if (rule == SparseRule::relieff) {
            for (auto& v : bucket) v.clear();
            for (Index j = 0; j < m; ++j)
                if (j != i) bucket[static_cast<std::size_t>(grp[static_cast<std::size_t>(j)])].push_back(j);
            auto closer = [&](Index a, Index z) {
                return nearer(dist[static_cast<std::size_t>(a)], a,
                              dist[static_cast<std::size_t>(z)], z);
            };
            for (Index g = 0; g < G; ++g) {
                auto& v = bucket[static_cast<std::size_t>(g)];
                const Index take = std::min<Index>(opt.k, static_cast<Index>(v.size()));
                std::partial_sort(v.begin(), v.begin() + take, v.end(), closer);
                v.resize(static_cast<std::size_t>(take));
                near_count[static_cast<std::size_t>(g)] = take;
            }
            detail::sparse_set_coefficients(near_count, own, D.class_factor(), 1.0,
                                            false, near_coef);
            for (Index g = 0; g < G; ++g)
                for (Index j : bucket[static_cast<std::size_t>(g)])
                    D.add_diffs(i, j, near_coef[static_cast<std::size_t>(g)], acc);
            return;
        }
        double near_t = T_global, far_t = T_global;
        if (!global) detail::multisurf_thresholds(dist.data(), m, i, near_t, far_t);
        std::fill(near_count.begin(), near_count.end(), Index{0});
        std::fill(far_count.begin(), far_count.end(), Index{0});
        for (Index j = 0; j < m; ++j) {
            if (j == i) continue;
            const double d = dist[static_cast<std::size_t>(j)];
            if (d < near_t) ++near_count[static_cast<std::size_t>(grp[static_cast<std::size_t>(j)])];
            else if (with_far && d > far_t)
                ++far_count[static_cast<std::size_t>(grp[static_cast<std::size_t>(j)])];
        }
        constant += detail::sparse_set_coefficients(near_count, own, D.class_factor(),
                                                    1.0, false, near_coef);
        if (with_far)
            constant += detail::sparse_set_coefficients(
                far_count, own, D.class_factor(), complement ? 1.0 : -1.0,
                complement, far_coef);
        for (Index j = 0; j < m; ++j) {
            if (j == i) continue;
            const double d = dist[static_cast<std::size_t>(j)];
            const std::size_t g = static_cast<std::size_t>(grp[static_cast<std::size_t>(j)]);
            double c = 0.0;
            if (d < near_t) c = near_coef[g];
            else if (with_far && d > far_t) c = far_coef[g];
            if (c != 0.0) D.add_diffs(i, j, c, acc);
        }
    };
    ReliefPass pass{q0, q1, n, threads, 1};
    // One step = one block per thread, so the partial sums kept are threads x n.
    pass.stepwise = true;
    return relief_block_pass(pass, poll, callback, status, scratch, rows, begin_step, merge);
}

// The weights (the sums divided by the number of samples done).
inline std::vector<double> relief_sparse(const SparseRef& A, const SparseReliefOptions& opt,
                                         int n_threads, const StopHook& stop = {},
                                         const ProgressHook& callback = {},
                                         PassStatus* status = nullptr) {
    PassStatus done;
    std::vector<double> w = relief_sparse_sums(A, opt, 0, A.rows, n_threads, stop, callback, &done);
    for (auto& v : w) v /= static_cast<double>(std::max<Index>(done.done, 1));
    if (status) *status = done;
    return w;
}

// Relief (Kira and Rendell) on sparse rows: for every visited sample x, its nearest hit and miss
// under the squared Euclidean distance (ties to the lower index, never itself), then
// w_f += (x_f - nm_f)^2 - (x_f - nh_f)^2 over the union of the three rows' entries, in visiting
// order. Samples without a hit or a miss add nothing. Steps and callback as in relief().
inline std::vector<double> relief_sparse_kira(const SparseRef& A, const std::vector<std::int64_t>& codes,
                                              const std::vector<Index>& visit, int n_threads,
                                              const StopHook& stop = {},
                                              const ProgressHook& callback = {},
                                              PassStatus* status = nullptr) {
    require(static_cast<Index>(codes.size()) == A.rows, "X and y have different numbers of samples");
    SparseReliefOptions opt;
    opt.codes = codes;
    const SparseRelief D(A, opt);
    const Index m = A.rows, n = A.cols, count = static_cast<Index>(visit.size());
    for (Index i : visit) require_index(i >= 0 && i < m, "visit: sample index out of range");
    const int threads = resolve_threads(n_threads);
    constexpr Index kChunk = Index{1} << 14;
    std::vector<Index> hit(static_cast<std::size_t>(std::min(count, kChunk))),
        miss(hit.size());
    StopPoll poll(stop);
    RegionErrors errors;
    auto find = [&](Index c0, Index c1) {
#pragma omp parallel num_threads(threads)
        {
            std::vector<double> dist, s;
            errors.run([&] {
                dist.resize(static_cast<std::size_t>(m));
                s.resize(2 * static_cast<std::size_t>(m));
            });
#pragma omp for schedule(dynamic, 4)
            for (Index t = c0; t < c1; ++t) {
                if (poll.stopped()) continue;
                errors.run([&] {
                    const Index i = visit[static_cast<std::size_t>(t)];
                    D.squared_distances(i, dist.data(), s.data());
                    Index h = -1, mi = -1;
                    const std::int64_t ci = codes[static_cast<std::size_t>(i)];
                    for (Index j = 0; j < m; ++j) {
                        if (j == i) continue;
                        const double d = dist[static_cast<std::size_t>(j)];
                        Index& best = codes[static_cast<std::size_t>(j)] == ci ? h : mi;
                        if (best < 0 || nearer(d, j, dist[static_cast<std::size_t>(best)], best)) best = j;
                    }
                    hit[static_cast<std::size_t>(t - c0)] = h;
                    miss[static_cast<std::size_t>(t - c0)] = mi;
                });
            }
        }
        errors.rethrow();
        poll.check();
    };
    auto add = [&](Index t, Index c0, std::vector<double>& w) {
        const Index h = hit[static_cast<std::size_t>(t - c0)], mi = miss[static_cast<std::size_t>(t - c0)];
        if (h < 0 || mi < 0) return;
        const Index i = visit[static_cast<std::size_t>(t)];
        // three-way merge of x, nh, nm
        Index p = A.begin(i), q = A.begin(h), r = A.begin(mi);
        const Index pe = A.end(i), qe = A.end(h), re = A.end(mi);
        constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();
        while (p < pe || q < qe || r < re) {
            const std::int64_t fp = p < pe ? A.idx[p] : kEnd, fq = q < qe ? A.idx[q] : kEnd,
                               fr = r < re ? A.idx[r] : kEnd;
            const std::int64_t f = std::min(fp, std::min(fq, fr));
            const double x = fp == f ? A.val[p++] : 0.0;
            const double nh = fq == f ? A.val[q++] : 0.0;
            const double nm = fr == f ? A.val[r++] : 0.0;
            const double a = x - nm, b = x - nh;
            w[static_cast<std::size_t>(f)] += a * a - b * b;
        }
    };
    return kira_pass(count, n, kChunk, callback, status, find, add);
}

}  // namespace fastfs
