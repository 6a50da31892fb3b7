// Relief (SPEC 2.6) and ReliefF (SPEC 2.7). Both score features by how much they differ
// between a sample and its nearest neighbours of the same class (hits) and of other classes
// (misses). Neighbour rows are computed in parallel, one sample per task, with O(threads * m)
// memory; the per-sample contributions are summed in a fixed order, so the weights do not
// depend on the thread count.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "../data/class_layout.hpp"
#include "../core/errors.hpp"
#include "../core/memory.hpp"
#include "../neighbours/engine.hpp"
#include "../neighbours/finder.hpp"
#include "../neighbours/gram_screen.hpp"
#include "../simd/column_kernels.hpp"
#include "../simd/pair_kernels.hpp"
#include "relief_pass.hpp"

namespace fastfs {

// w_f += (x_f - nm_f)^2 - (x_f - nh_f)^2 in float64 for every f: element-wise, so vectorised
// or not it gives the same bits.
template <class T>
FASTFS_SIMD_CLONES void relief_add(const T* __restrict x, const T* __restrict nh,
                                   const T* __restrict nm, Index n, double* __restrict w) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double a = static_cast<double>(x[f]) - static_cast<double>(nm[f]);
        const double b = static_cast<double>(x[f]) - static_cast<double>(nh[f]);
        w[f] += a * a - b * b;
    }
}

// Relief (Kira and Rendell): w_f += (x_f - nm_f)^2 - (x_f - nh_f)^2 for every visited sample,
// neighbours under the plain Euclidean distance. Samples without a hit or a miss add nothing.
// `stop` is polled between samples by the calling thread; `callback` gets the weights after
// every step (Progress::pass; score NaN) and may end the pass there, which leaves the weights of
// the samples visited so far (status->done of them).
template <class T>
std::vector<double> relief(const MatrixRef<T>& X, const Labels& codes,
                           const std::vector<Index>& visit, int n_threads,
                           const StopHook& stop = {}, const ProgressHook& callback = {},
                           PassStatus* status = nullptr) {
    require(X.rows() == codes.size(), "X and y have different numbers of samples");
    const Index n = X.cols();
    const Index count = static_cast<Index>(visit.size());
    // Hit / miss records for one chunk of the visiting order at a time: memory does not grow
    // with n_iter beyond the visiting order itself. The weights are summed in visiting order,
    // so chunking changes no bit.
    constexpr Index kChunk = Index{1} << 16;
    std::vector<HitMiss> hm(static_cast<std::size_t>(std::min(count, kChunk)));
    const std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
    // Visiting most samples without progress reports: every sample's neighbours at once from
    // blocked Gram products, the visits then read them (`all` stays empty otherwise).
    std::vector<HitMiss> all;
    if (!callback && 2 * count >= X.rows())
        gram_nearest_hit_miss(X, codes, ones.data(), resolve_threads(n_threads), all, stop,
                              nullptr, false);
    std::optional<NeighbourFinder<T>> finder;
    if (all.empty()) finder.emplace(X, codes);
    StopPoll poll(stop);
    RegionErrors errors;
    auto find = [&](Index c0, Index c1) {
        if (!all.empty()) {
            for (Index t = c0; t < c1; ++t)
                hm[static_cast<std::size_t>(t - c0)] = all[static_cast<std::size_t>(visit[static_cast<std::size_t>(t)])];
            return;
        }
#pragma omp parallel num_threads(resolve_threads(n_threads))
        {
            typename NeighbourFinder<T>::Scratch s;
            errors.run([&] { finder->prepare(ones.data(), s); });
            // Four visits per pass over X (query_samples), each answer equal to query()'s.
            const Index groups = (c1 - c0 + 3) / 4;
#pragma omp for schedule(dynamic, 2)
            for (Index g = 0; g < groups; ++g) {
                if (poll.stopped()) continue;
                errors.run([&] {
                    const Index t = c0 + 4 * g;
                    const int rows = static_cast<int>(std::min<Index>(4, c1 - t));
                    Index ids[4];
                    for (int r = 0; r < rows; ++r)
                        ids[r] = visit[static_cast<std::size_t>(t + r)];
                    finder->query_samples(ids, rows, ones.data(), s, hm.data() + (t - c0));
                });
            }
        }
        errors.rethrow();
        poll.check();
    };
    auto add = [&](Index t, Index c0, std::vector<double>& w) {
        const HitMiss& h = hm[static_cast<std::size_t>(t - c0)];
        if (h.hit < 0 || h.miss < 0) return;
        relief_add(X.row(visit[static_cast<std::size_t>(t)]).data(), X.row(h.hit).data(),
                   X.row(h.miss).data(), n, w.data());
    };
    return kira_pass(count, n, kChunk, callback, status, find, add);
}

// Min-max scaled float64 copy of X: z_f = (x_f - min_f) / range_f, every value in [0, 1]; a
// constant feature becomes 0. inv_range[f] = 1 / range_f (0 for a constant feature). With
// distance weights (empty = none; else one non-negative weight a feature), column f is also
// multiplied by weight[f], so Manhattan distances on Z are sum_f weight_f |x_f - z_f| / range_f
// (skrebate's weighted distance, used by the iterative wrapper); the scores' diff is unchanged.
template <class T>
RecycledMatrix<double> min_max_scaled(const MatrixRef<T>& X, std::vector<double>& inv_range,
                                 const std::vector<double>& weights = {}, int threads = 1) {
    const Index m = X.rows(), n = X.cols();
    require(weights.empty() || static_cast<Index>(weights.size()) == n,
            "distance_weights: expected one weight per feature");
    // Row by row within stripes of 256 columns, the stripes in parallel: X is row-major, and a
    // column walk strides by a whole row per value. Minima and maxima are exact, and
    // z * 1.0 == z, so these are the values of a column walk whatever the thread count.
    inv_range.assign(static_cast<std::size_t>(n), 0.0);
    RecycledMatrix<double> Z(m, n);
    if (m == 0) return Z;
    std::vector<double> lo(static_cast<std::size_t>(n)), hi(static_cast<std::size_t>(n));
    double* l = lo.data();
    double* h = hi.data();
    double* r = inv_range.data();
    constexpr Index kStripe = 256;
    const Index stripes = (n + kStripe - 1) / kStripe;
#pragma omp parallel for schedule(static) num_threads(std::max<int>(1, std::min<Index>(threads, stripes)))
    for (Index s = 0; s < stripes; ++s) {
        const Index f0 = s * kStripe, f1 = std::min(n, f0 + kStripe);
        for (Index f = f0; f < f1; ++f) l[f] = h[f] = static_cast<double>(X(0, f));
        for (Index i = 1; i < m; ++i) {
            const T* x = X.row(i).data();
            for (Index f = f0; f < f1; ++f) {
                const double v = static_cast<double>(x[f]);
                l[f] = v < l[f] ? v : l[f];
                h[f] = h[f] < v ? v : h[f];
            }
        }
        for (Index f = f0; f < f1; ++f) r[f] = h[f] > l[f] ? 1.0 / (h[f] - l[f]) : 0.0;
        for (Index i = 0; i < m; ++i) {
            const T* x = X.row(i).data();
            double* z = Z.row(i).data();
            for (Index f = f0; f < f1; ++f) z[f] = (static_cast<double>(x[f]) - l[f]) * r[f];
            if (!weights.empty())
                for (Index f = f0; f < f1; ++f) z[f] *= weights[static_cast<std::size_t>(f)];
        }
    }
    return Z;
}

// STIR (Le, Urbanowicz, Moore and McKinney 2019) tests each feature on the differences of
// every (sample, neighbour) pair: the sums and sums of squares of diff_f = |x_f - z_f| / range_f
// over the hit pairs and over the miss pairs, and the numbers of pairs. Passed to the ReliefF
// and radius passes, they fill it in the same pass as the weights; the moments of a block of
// samples are added in block order, so they do not depend on the thread count either.
// With them, the pass also counts STIR's pair graph: per sample, the hit pairs and the miss
// pairs it belongs to (as the query x or as the neighbour z of a pair (x, z)), and the ordered
// pairs whose reverse is a pair too (mutual), hit and miss; integers, so they do not depend on
// the thread count either.
struct PairMoments {
    std::vector<double> hit_sum, hit_sq, miss_sum, miss_sq;
    double n_hit = 0.0, n_miss = 0.0;
    std::vector<std::int64_t> hit_pairs, miss_pairs;
    std::int64_t mutual_hit = 0, mutual_miss = 0;
};

namespace detail {

// One block's moments: 4 rows of n (hit sum, hit squares, miss sum, miss squares) and 2 counts,
// stored as one row of length 4 n + 2.
inline void add_block_moments(const double* row, Index n, PairMoments& out) {
    std::vector<double>* dst[4] = {&out.hit_sum, &out.hit_sq, &out.miss_sum, &out.miss_sq};
    for (int a = 0; a < 4; ++a)
        for (Index f = 0; f < n; ++f) (*dst[a])[static_cast<std::size_t>(f)] += row[a * n + f];
    out.n_hit += row[4 * n];
    out.n_miss += row[4 * n + 1];
}

inline void reset_moments(PairMoments& out, Index n) {
    for (auto* v : {&out.hit_sum, &out.hit_sq, &out.miss_sum, &out.miss_sq})
        v->assign(static_cast<std::size_t>(n), 0.0);
    out.n_hit = out.n_miss = 0.0;
}

// STIR's pair graph (see PairMoments) from the neighbour sets of a full pass (every sample a
// query), as the pass finds them: each query x records the boundary of its set (ReliefF: per
// class, the (distance, index) of its k-th chosen neighbour, +inf when the class has at most k
// other samples and all are chosen; a radius rule: its radius), its own hits and misses, and
// adds one to the in-count of each neighbour (atomic integer increments: any order gives the
// same counts). A pair (x, z) is mutual when x is in z's set too, which needs z's boundary.
// The pass goes in steps (the blocks of a step run together, the steps one after the other):
// when z's step came before x's, x's query decides the pair (both orders at once, + 2); when
// it comes later, z's query will; pairs within one step are decided after the step, on their
// distances recomputed by the kernel of the pass's rows (l1_dist4 sums |a - b| = |b - a| in a
// fixed order, so the same bits whichever sample is the query). Memory O(m C); the
// recomputation costs (samples per step) / m of one distance pass, about threads / 64.
class PairGraphPass {
public:
    // m samples; C classes for ReliefF's per-class boundaries, 0 for a radius rule; the pass's
    // samples per block and blocks per step.
    PairGraphPass(Index m, Index C, Index block, Index step_blocks, Index blocks)
        : m_(m), C_(C), step_(block * std::max<Index>(1, step_blocks)),
          bound_d_(static_cast<std::size_t>(m * std::max<Index>(1, C))),
          bound_i_(C > 0 ? static_cast<std::size_t>(m * C) : 0),
          out_(static_cast<std::size_t>(2 * m), 0), in_(static_cast<std::size_t>(2 * m), 0),
          mutual_(static_cast<std::size_t>(2 * blocks), 0) {}

    // ReliefF: x's set holds the members j of class c with (d_j, j) up to (d, j_last).
    void set_bound(Index x, Index c, double d, Index j_last) {
        bound_d_[static_cast<std::size_t>(x * C_ + c)] = d;
        bound_i_[static_cast<std::size_t>(x * C_ + c)] = j_last;
    }
    void set_all(Index x, Index c) { set_bound(x, c, kInf, m_); }
    // A radius rule: x's set holds the samples at distance below t.
    void set_radius(Index x, double t) { bound_d_[static_cast<std::size_t>(x)] = t; }

    // Is x (of class cx) in z's set, at distance d?
    bool contains(Index z, Index x, std::int64_t cx, double d) const {
        if (C_ == 0) return d < bound_d_[static_cast<std::size_t>(z)];
        const std::size_t s = static_cast<std::size_t>(z * C_ + cx);
        return d < bound_d_[s] || (d == bound_d_[s] && x <= bound_i_[s]);
    }

    // Query x's own pairs (called once per query, by its thread).
    void add_out(Index x, Index hits, Index misses) {
        out_[static_cast<std::size_t>(2 * x)] = hits;
        out_[static_cast<std::size_t>(2 * x + 1)] = misses;
    }

    // The pair (x, z) of x's set at distance d, x of class cx, in block `block` of the pass.
    void add_pair(Index x, std::int64_t cx, Index z, bool hit, double d, Index block) {
        std::int64_t& in = in_[static_cast<std::size_t>(2 * z + (hit ? 0 : 1))];
#pragma omp atomic
        ++in;
        if (z / step_ < x / step_ && contains(z, x, cx, d))
            mutual_[static_cast<std::size_t>(2 * block + (hit ? 0 : 1))] += 2;
    }

    // After the step of samples s0 .. s1-1: the mutual pairs within it, on the distance rows of
    // D (the matrix the pass's distances read).
    void end_step(const RowMatrix<double>& D, const Labels& codes, Index s0, Index s1,
                  int threads) {
        const Index n = D.cols(), groups = (s1 - s0 + 3) / 4;
        std::int64_t mh = 0, mm = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : mh, mm)
        for (Index g = 0; g < groups; ++g) {
            const Index x0 = s0 + 4 * g, last = std::min<Index>(4, s1 - x0) - 1;
            auto q = [&](Index r) { return D.row(x0 + std::min(r, last)).data(); };
            const double *q0 = q(0), *q1 = q(1), *q2 = q(2), *q3 = q(3);
            double d[4];
            for (Index z = s0; z < s1; ++z) {
                kernels::l1_dist4(D.row(z).data(), q0, q1, q2, q3, n, d);
                for (Index r = 0; r <= last; ++r) {
                    const Index x = x0 + r;
                    if (x == z || !contains(x, z, codes[z], d[r]) ||
                        !contains(z, x, codes[x], d[r]))
                        continue;
                    ++(codes[x] == codes[z] ? mh : mm);
                }
            }
        }
        mutual_hit_ += mh;
        mutual_miss_ += mm;
    }

    void finish(PairMoments& out) const {
        out.hit_pairs.resize(static_cast<std::size_t>(m_));
        out.miss_pairs.resize(static_cast<std::size_t>(m_));
        for (std::size_t x = 0; x < static_cast<std::size_t>(m_); ++x) {
            out.hit_pairs[x] = out_[2 * x] + in_[2 * x];
            out.miss_pairs[x] = out_[2 * x + 1] + in_[2 * x + 1];
        }
        out.mutual_hit = mutual_hit_;
        out.mutual_miss = mutual_miss_;
        for (std::size_t b = 0; b < mutual_.size(); b += 2) {
            out.mutual_hit += mutual_[b];
            out.mutual_miss += mutual_[b + 1];
        }
    }

private:
    static constexpr double kInf = std::numeric_limits<double>::infinity();
    Index m_, C_, step_;
    std::vector<double> bound_d_;
    std::vector<Index> bound_i_;
    std::vector<std::int64_t> out_, in_, mutual_;
    std::int64_t mutual_hit_ = 0, mutual_miss_ = 0;
};

// A full pass's STIR bookkeeping, when pair moments are asked for (moments not null; every
// sample [q0, q1) must then be a query): the moments zeroed, a row of 4 n + 2 per block of a
// step in block_moments (at most `threads` rows), and the pair graph (C classes for ReliefF's
// boundaries, 0 for a radius rule), stepped as a pass with a callback would be.
inline void start_pair_moments(PairMoments* moments, Index m, Index n, Index q0, Index q1,
                               int threads, Index C, const ReliefPass& pass, bool callback,
                               RowMatrix<double>& block_moments,
                               std::optional<PairGraphPass>& graph) {
    if (!moments) return;
    require(q0 == 0 && q1 == m, "pair moments (STIR) need every sample as a query");
    reset_moments(*moments, n);
    block_moments.resize(std::min<Index>(threads, pass.blocks()), 4 * n + 2);
    graph.emplace(m, C, pass.block(), pass.step_blocks(callback), pass.blocks());
}

// keep_smallest out of line, returning the new count: a class's scan calls it about
// k log(members / k) times, and inlined it took the registers of the scan's loop.
[[gnu::noinline]] inline int keep_nearest(double d, Index z, int k, int count, double* val,
                                          Index* idx) {
    keep_smallest(d, z, k, count, val, idx);
    return count;
}

// A bound on the k-th nearest (k <= 16) of the members [b, e) of a class-ordered row other
// than `self` (e when the query is not a member): the minima of 16 disjoint groups of them are
// 16 of their distances, so at least k members lie at or below the k-th smallest minimum. On a
// large class it lets a few times k members into the selection, against about
// k (1 + log(members / k)) entering a plain stream.
inline double group_bound(const double* dist, Index b, Index self, Index e, Index k) {
    double mins[16];
    std::fill(mins, mins + 16, std::numeric_limits<double>::infinity());
    kernels::lane_minima16(dist + b, self - b, mins);
    if (self < e) kernels::lane_minima16(dist + self + 1, e - self - 1, mins);
    std::nth_element(mins, mins + (k - 1), mins + 16);
    return mins[k - 1];
}

}  // namespace detail

// Classes of at least this many members get a bound on their k-th nearest
// (detail::group_bound) before ReliefF's class-ordered selection.
inline constexpr Index kGroupBoundMembers = 128;

// The weight of each of the `take` chosen neighbours of one class in a sample's ReliefF
// contribution, given the numbers of chosen hits and misses and C classes (see relieff_sums).
inline double relieff_coefficient(bool own_class, Index take, Index hits, Index misses,
                                  Index C) {
    if (own_class) return hits > 0 ? -1.0 / static_cast<double>(hits) : 0.0;
    return misses > 0 ? (static_cast<double>(take) / misses) * static_cast<double>(C - 1) / misses
                      : 0.0;
}

// acc[f] += (c sum_r |x_f - z_r,f|) inv_range[f] over the `count` rows z (the chosen
// neighbours of sample x in one class, which share the coefficient c). Sixteen features at a
// time run over all the rows with their sums in registers (four chains of additions), so acc
// is read once per class, not once per neighbour. Each lane adds its terms in row order, as the
// scalar tail does, so every clone gives the same bits.
template <class T>
FASTFS_SIMD_CLONES void relieff_add(const T* __restrict x, const T* const* z, Index count,
                                    double c, const double* __restrict inv_range, Index n,
                                    double* __restrict acc) {
    if (count == 0) return;
    Index f = 0;
#ifdef FASTFS_VECTOR_LANES
    using V = kernels::LaneVector<double>::type;
    constexpr int L = kernels::kLanes<double>, B = 4;
    for (; f + B * L <= n; f += B * L) {
        V xv[B], s[B] = {}, zv;
        for (int b = 0; b < B; ++b) kernels::load_lanes<double>(xv[b], x + f + b * L);
        for (Index r = 0; r < count; ++r)
            for (int b = 0; b < B; ++b) {
                kernels::load_lanes<double>(zv, z[r] + f + b * L);
                kernels::add_abs_lanes(s[b], xv[b] - zv);
            }
        for (int b = 0; b < B; ++b)
            for (int l = 0; l < L; ++l) acc[f + b * L + l] += c * s[b][l] * inv_range[f + b * L + l];
    }
#endif
    for (; f < n; ++f) {
        const double v = static_cast<double>(x[f]);
        double s = 0.0;
        for (Index r = 0; r < count; ++r) s += std::abs(v - static_cast<double>(z[r][f]));
        acc[f] += c * s * inv_range[f];
    }
}

// Adds sample i's ReliefF contribution (before the final 1/m) to acc, given its distance row;
// with `mom` (a block's moments row, see PairMoments), also the moments of its pairs. With
// `shortlisted`, the row is k_nearest_per_class's: +inf for the samples its bounds ruled out,
// and at least k finite entries in every class with more than k other members, so only the
// finite entries are candidates (the same k nearest, far fewer to sort). With `class_ordered`
// (k <= kStreamedSelection, no shortlist), dist[p] is the distance to sample L.order[p], so a
// class's distances are contiguous: they are taken 64 at a time, through a mask of those that
// can still enter (and, on a class of kGroupBoundMembers or more, a bound on its k-th nearest
// first). `kept` is scratch.
template <class T>
void relieff_contribution(const MatrixRef<T>& X, const Labels& codes, const ClassLayout& L,
                          const std::vector<double>& inv_range, Index k, Index i,
                          const double* dist, std::vector<Index>& idx, std::vector<Index>& chosen,
                          std::vector<const T*>& rows, std::vector<Index>& per_class,
                          std::vector<double>& kept, double* acc, double* mom = nullptr,
                          bool shortlisted = false, bool class_ordered = false) {
    const Index C = L.n_classes(), n = X.cols();
    require(!class_ordered || (k <= kStreamedSelection && !shortlisted),
            "relieff: a class-ordered row needs k <= 64 and no shortlist");
    // k nearest of every class, ordered by (distance, index), self excluded.
    chosen.clear();
    Index hits = 0, misses = 0;
    const std::int64_t ci = codes[i];
    auto closer = [&](Index a, Index z) { return nearer(dist[a], a, dist[z], z); };
    constexpr double inf = std::numeric_limits<double>::infinity();
    const bool streamed = k <= kStreamedSelection;
    if (streamed) kept.resize(static_cast<std::size_t>(k));
    for (Index c = 0; c < C; ++c) {
        Index cnt = 0, members = 0, take = 0;
        const Index b = L.begin[static_cast<std::size_t>(c)];
        const Index e = L.begin[static_cast<std::size_t>(c) + 1];
        if (streamed) {
            // The k nearest by (distance, index) kept as the members stream past (about
            // k log(members / k) of them enter; the others cost one comparison), instead of
            // gathering every candidate and sorting part of them: the same k, in the same
            // order. Without a shortlist the candidates are the whole class.
            const int kk = static_cast<int>(k);
            int count = 0;
            // The k-th kept (distance, key) once k are kept; the key is the sample's index, or
            // its position in a class-ordered row (positions rank as indices inside a class:
            // the layout is stable).
            double worst = inf;
            Index worst_key = 0;
            auto offer = [&](double d, Index key) {
                if (count == kk && !nearer(d, key, worst, worst_key)) return;
                count = detail::keep_nearest(d, key, kk, count, kept.data(), idx.data());
                if (count == kk) worst = kept[k - 1], worst_key = idx[k - 1];
            };
            auto scan = [&](auto skip_ruled_out) {
                for (Index p = b; p < e; ++p) {
                    const Index z = L.order[p];
                    if (z == i) continue;
                    const double d = dist[z];
                    if (decltype(skip_ruled_out)::value && d == inf) continue;
                    ++cnt;
                    offer(d, z);
                }
            };
            // Below k kept, a sample enters if at most `bound` (+inf: any sample), which at
            // least k other members of the class are at, so no sample beyond it is among the
            // k nearest.
            double bound = inf;
            auto run = [&](Index p0, Index p1) {
                for (Index q = p0; q < p1; q += 64) {
                    const int len = static_cast<int>(std::min<Index>(64, p1 - q));
                    // a superset of those that can still enter, as the k-th only gets nearer
                    const double t = count == kk ? worst : bound;
                    std::uint64_t left = t < inf ? kernels::at_most_mask(dist + q, len, t)
                                                 : ~std::uint64_t{0} >> (64 - len);
                    for (; left; left &= left - 1) {
                        const Index p = q + kernels::lowest_bit(left);
                        offer(dist[p], p);
                    }
                }
            };
            if (class_ordered) {
                const Index self = c == ci ? L.position[static_cast<std::size_t>(i)] : e;
                if (k <= 16 && e - b >= kGroupBoundMembers)
                    bound = detail::group_bound(dist, b, self, e, k);
                run(b, self);
                if (self < e) run(self + 1, e);
                for (int r = 0; r < count; ++r)
                    idx[static_cast<std::size_t>(r)] = L.order[idx[static_cast<std::size_t>(r)]];
                cnt = count;
            } else if (shortlisted) {
                scan(std::true_type{});
            } else {
                scan(std::false_type{});
            }
            members = e - b - (codes[i] == c ? 1 : 0);
            take = count;
        } else {
            for (Index p = b; p < e; ++p) {
                const Index z = L.order[p];
                if (z == i) continue;
                ++members;
                if (!shortlisted || dist[z] != inf) idx[static_cast<std::size_t>(cnt++)] = z;
            }
            take = std::min(k, cnt);
            std::partial_sort(idx.begin(), idx.begin() + take, idx.begin() + cnt, closer);
        }
        require(cnt >= std::min(k, members), "relieff: the shortlist lost a neighbour");
        chosen.insert(chosen.end(), idx.begin(), idx.begin() + take);
        per_class[static_cast<std::size_t>(c)] = take;
        (c == ci ? hits : misses) += take;
    }
    // One class's chosen neighbours at a time: they share a coefficient.
    const T* xi = X.row(i).data();
    rows.clear();
    for (const Index z : chosen) rows.push_back(X.row(z).data());
    std::size_t pos = 0;
    for (Index c = 0; c < C; ++c) {
        const Index take = per_class[static_cast<std::size_t>(c)];
        relieff_add(xi, rows.data() + pos, take, relieff_coefficient(c == ci, take, hits, misses, C),
                    inv_range.data(), n, acc);
        pos += static_cast<std::size_t>(take);
    }
    for (std::size_t s = 0; mom && s < chosen.size(); ++s) {
        const T* xz = rows[s];
        const bool hit = codes[chosen[s]] == ci;
        double* sum = mom + (hit ? 0 : 2 * n);
        double* sq = sum + n;
        for (Index f = 0; f < n; ++f) {
            const double d = std::abs(static_cast<double>(xi[f]) - static_cast<double>(xz[f])) *
                             inv_range[static_cast<std::size_t>(f)];
            sum[f] += d;
            sq[f] += d * d;
        }
    }
    if (mom) {
        mom[4 * n] += static_cast<double>(hits);
        mom[4 * n + 1] += static_cast<double>(misses);
    }
}

// Sample i's ReliefF neighbour set into STIR's pair graph: its chosen neighbours, per class
// (chosen, per_class and dist as relieff_contribution left them), in block `block`.
inline void add_relieff_pairs(detail::PairGraphPass& graph, const Labels& codes,
                              const ClassLayout& L, Index k, Index i, const double* dist,
                              const std::vector<Index>& chosen,
                              const std::vector<Index>& per_class, Index block) {
    const std::int64_t ci = codes[i];
    Index pos = 0, hits = 0, misses = 0;
    for (Index c = 0; c < L.n_classes(); ++c) {
        const Index take = per_class[static_cast<std::size_t>(c)];
        const Index others = L.begin[static_cast<std::size_t>(c) + 1] -
                             L.begin[static_cast<std::size_t>(c)] - (c == ci ? 1 : 0);
        if (others > k) {
            const Index last = chosen[static_cast<std::size_t>(pos + take - 1)];
            graph.set_bound(i, c, dist[last], last);
        } else {
            graph.set_all(i, c);
        }
        for (Index s = pos; s < pos + take; ++s) {
            const Index z = chosen[static_cast<std::size_t>(s)];
            graph.add_pair(i, ci, z, c == ci, dist[z], block);
        }
        (c == ci ? hits : misses) += take;
        pos += take;
    }
    graph.add_out(i, hits, misses);
}

// Manhattan distances of the query samples i0 .. i0+rows-1 of Z to every sample: out(r, j)
// for j in 0 .. m-1, four queries and two rows of Z per kernel call (kernels::l1_lanes2x4,
// the bits of ScaledL1's kernel l1_dist4; each row of Z read once per four queries). With more
// than four queries, the rows of Z go in tiles that stay in cache while every group of four
// reads them, so a row comes from memory once per batch of queries; each value is that of the
// same kernel call as without tiles (a short group repeats its last query).
// Wide rows (more than kL1Block features) are walked a block of features at a time, the tile's
// and the queries' blocks in cache, the kernel's lane sums carried from block to block: the same
// bits as one call over the whole row (kernels::l1_lanes4). Only the samples j >= j_begin (out
// is still indexed by j).
constexpr Index kL1Block = 512;

template <class S>
void l1_rows(const RowMatrix<S>& Z, Index i0, Index rows, RowMatrix<S>& out, Index j_begin = 0) {
    constexpr Index kTile = 32;
    constexpr int L = kernels::kLanes<S>;
    const Index m = Z.rows(), n = Z.cols();
    auto queries = [&](Index g, const S** q) {
        const Index last = std::min(rows, g + 4) - 1;
        for (Index r = 0; r < 4; ++r) q[r] = Z.row(i0 + std::min(g + r, last)).data();
        return last;
    };
    const Index body = n - n % L;
    if (n <= kL1Block) {
        for (Index j0 = j_begin; j0 < m; j0 += kTile) {
            const Index j1 = std::min(m, j0 + kTile);
            for (Index g = 0; g < rows; g += 4) {
                const S* q[4];
                const Index last = queries(g, q);
                S d[4], e[4];
                Index j = j0;
                for (; j + 1 < j1; j += 2) {  // two tile rows a call (see l1_lanes2x4)
                    S s0[4][L] = {}, s1[4][L] = {};
                    kernels::l1_lanes2x4(Z.row(j).data(), Z.row(j + 1).data(), q[0], q[1], q[2],
                                         q[3], 0, body, s0, s1);
                    kernels::l1_finish4(Z.row(j).data(), q[0], q[1], q[2], q[3], n, s0, d);
                    kernels::l1_finish4(Z.row(j + 1).data(), q[0], q[1], q[2], q[3], n, s1, e);
                    for (Index r = g; r <= last; ++r) out(r, j) = d[r - g], out(r, j + 1) = e[r - g];
                }
                if (j < j1) {
                    kernels::l1_dist4(Z.row(j).data(), q[0], q[1], q[2], q[3], n, d);
                    for (Index r = g; r <= last; ++r) out(r, j) = d[r - g];
                }
            }
        }
        return;
    }
    // lane sums of every (group of four queries, sample of the tile): at most 64 KB, allocated
    // per call (small beside the call's work: every row it reads is wider than 512 features)
    const Index groups = (rows + 3) / 4;
    std::vector<S> lanes(static_cast<std::size_t>(groups * kTile * 4 * L));
    auto sums = [&](Index g, Index t) {
        return reinterpret_cast<S(*)[L]>(lanes.data() + ((g / 4) * kTile + t) * 4 * L);
    };
    for (Index j0 = j_begin; j0 < m; j0 += kTile) {
        const Index j1 = std::min(m, j0 + kTile);
        std::fill(lanes.begin(), lanes.end(), S(0));
        for (Index f0 = 0; f0 < body; f0 += kL1Block) {
            const Index f1 = std::min(body, f0 + kL1Block);
            for (Index g = 0; g < rows; g += 4) {
                const S* q[4];
                queries(g, q);
                Index j = j0;
                for (; j + 1 < j1; j += 2)
                    kernels::l1_lanes2x4(Z.row(j).data(), Z.row(j + 1).data(), q[0], q[1], q[2],
                                         q[3], f0, f1, sums(g, j - j0), sums(g, j + 1 - j0));
                if (j < j1)
                    kernels::l1_lanes4(Z.row(j).data(), q[0], q[1], q[2], q[3], f0, f1,
                                       sums(g, j - j0));
            }
        }
        for (Index g = 0; g < rows; g += 4) {
            const S* q[4];
            const Index last = queries(g, q);
            S d[4];
            for (Index j = j0; j < j1; ++j) {
                kernels::l1_finish4(Z.row(j).data(), q[0], q[1], q[2], q[3], n, sums(g, j - j0), d);
                for (Index r = g; r <= last; ++r) out(r, j) = d[r - g];
            }
        }
    }
}

// Whether the m x m matrix of S (pair distances kept whole, both halves) fits the process's
// PairCacheLimit (64 MiB, or fastfs.config.max_memory when lower).
template <class S>
bool pair_cache_fits(Index m) {
    return static_cast<double>(m) * static_cast<double>(m) * sizeof(S) <=
           PairCacheLimit::bytes().load(std::memory_order_relaxed);
}

// With every distance exact, a query's distances come from the transposed copy of the scaled
// data (kernels::l1_columns) when there are at most this many features, or when the pair matrix
// would not fit: faster than l1_rows there, and than the pair matrix up to about 40 features
// (each pair is computed twice, but eight pairs at a time in registers; measured at m = 1000).
constexpr Index kColumnL1Features = 40;

// Samples per batch of symmetric_pairs (at most `count` rows of a rows() call).
constexpr Index kPairBatch = 64;

// The m x m matrix (both halves) of a symmetric value of every pair of samples, each pair
// computed once: batches of kPairBatch samples i0 .. in parallel, rows(scratch, i0, count, out)
// filling out(r, j) for every j >= i0 (make_scratch() builds a thread's buffers inside the
// region).
template <class S, class MakeScratch, class Rows>
RecycledMatrix<S> symmetric_pairs(Index m, int threads, StopPoll& poll,
                                  MakeScratch&& make_scratch, Rows&& rows) {
    constexpr Index kBatch = kPairBatch;
    const Index batches = (m + kBatch - 1) / kBatch;
    RecycledMatrix<S> D(m, m);
    RegionErrors errors;
#pragma omp parallel num_threads(threads)
    {
        std::optional<decltype(make_scratch())> s;
        RowMatrix<S> rows_d;
        errors.run([&] {
            s.emplace(make_scratch());
            rows_d.resize(kBatch, m);
        });
#pragma omp for schedule(dynamic, 1)
        for (Index b = 0; b < batches; ++b) errors.run([&] {
            if (poll.stopped()) return;
            const Index i0 = b * kBatch, count = std::min(kBatch, m - i0);
            rows(*s, i0, count, rows_d);
            for (Index r = 0; r < count; ++r)  // the batch's rows, then their transpose
                std::copy(rows_d.row(r).data() + i0, rows_d.row(r).data() + m,
                          D.row(i0 + r).data() + i0);
            for (Index j = i0; j < m; ++j)
                for (Index r = 0; r < count; ++r) D(j, i0 + r) = rows_d(r, j);
        });
    }
    errors.rethrow();
    poll.check();
    return D;
}

// Samples of a transposed copy of n features read per tile by kernels::l1_columns: at most
// 128 KB of the copy, which stays in cache while every query of a batch reads it.
inline Index column_tile(Index n) {
    return std::max<Index>(256, (Index{1} << 14) / std::max<Index>(n, 1));
}

// Manhattan distances of the queries Z.row(i0 + r), r < count, to the samples j in
// [j_begin, m) of the transposed copy Zt (n x m): out(r, j), each value l1_rows' bit for bit.
inline void l1_column_rows(const RowMatrix<double>& Z, const RowMatrix<double>& Zt, Index i0,
                           Index count, RowMatrix<double>& out, Index j_begin = 0) {
    const Index m = Zt.cols(), n = Zt.rows(), tile = column_tile(n);
    for (Index j0 = j_begin; j0 < m; j0 += tile)
        for (Index r = 0; r < count; ++r)
            kernels::l1_columns(Z.row(i0 + r).data(), Zt.data(), m, n, j0,
                                std::min(m, j0 + tile), out.row(r).data());
}

// The Manhattan distances of every pair of rows of Z, each pair computed once. |a - b| =
// |b - a| and the additions go in the same order, so every value is, bit for bit, the one
// l1_rows gives in either sample's row. Exact distances of at most kColumnL1Features features
// come from a transposed copy (l1_column_rows: the same bits, several times faster there).
template <class S>
RecycledMatrix<S> pair_l1(const RowMatrix<S>& Z, int threads, StopPoll& poll) {
    if constexpr (std::is_same_v<S, double>) {
        if (Z.cols() <= kColumnL1Features) {
            RecycledMatrix<double> Zt;
            Zt = Z.transpose();
            return symmetric_pairs<S>(Z.rows(), threads, poll, [] { return 0; },
                                      [&](int, Index i0, Index count, RowMatrix<S>& out) {
                                          l1_column_rows(Z, Zt, i0, count, out, i0);
                                      });
        }
    }
    return symmetric_pairs<S>(
        Z.rows(), threads, poll, [] { return 0; },
        [&](int, Index i0, Index count, RowMatrix<S>& out) { l1_rows(Z, i0, count, out, i0); });
}

// ReliefF (Kononenko) scored as skrebate's ReliefF scores continuous features:
//  * distance = sum_f |x_f - z_f| / range_f (Manhattan on min-max scaled features);
//  * for sample x: its k nearest hits H and, for every other class c, its k nearest misses M_c
//    (fewer when a class is smaller); h = |H|, M = sum_c |M_c|, C = number of classes;
//  * per feature, with diff(z) = |x_f - z_f| / range_f:
//      contribution = [ -(1/h) sum_H diff + sum_c (|M_c| / M) (C - 1) (1/M) sum_{M_c} diff ] / m,
//    the hit term dropped when h = 0 and the miss term when M = 0;
//  * a constant feature (range 0) scores 0.
// Ties between equal distances go to the lower sample index (skrebate's order is arbitrary
// there, which is why the two agree on data without ties). Unlike skrebate, a sample never
// counts itself as a hit when its class has at most k samples (SPEC 1.4).
//
// `stop` is polled by the calling thread between groups of four samples; `callback` gets the
// weights of the samples done so far (their sum / their count) after every step (a group of
// blocks, one per thread) and may end the pass there (status->done samples).
//
// relieff_sums is the pass over the query samples q0 .. q1-1 only (neighbours among all
// samples), returning the sum of their contributions, not divided by anything: fastfs.dask
// adds the sums of blocks of queries and divides once. status->done counts from q0.
template <class T>
std::vector<double> relieff_sums(const MatrixRef<T>& X, const Labels& codes, Index k,
                                 Index q0, Index q1, int n_threads, const StopHook& stop = {},
                                 const ProgressHook& callback = {},
                                 PassStatus* status = nullptr,
                                 const std::vector<double>& distance_weights = {},
                                 PairMoments* moments = nullptr) {
    require(X.rows() == codes.size(), "X and y have different numbers of samples");
    require(k >= 1, "n_neighbors must be >= 1");
    require_index(0 <= q0 && q0 <= q1 && q1 <= X.rows(), "query range out of bounds");
    const Index m = X.rows(), n = X.cols();
    const ClassLayout L = ClassLayout::from_codes(codes);
    const Index C = L.n_classes();

    // Min-max scaled copy (what the distance reads) and the scale of each feature.
    std::vector<double> inv_range;
    const int threads = resolve_threads(n_threads);
    const RecycledMatrix<double> Z = min_max_scaled(X, inv_range, distance_weights, threads);

    // With many features, a float32 pass on the engine's index shortlists the neighbours
    // (k_nearest_per_class) and only the shortlist gets exact float64 distances; with few,
    // every distance is exact at once.
    const NeighbourIndex<double> index(Z, screen::kMinFeatures, screen::kMaxAbs, false, threads);
    ScaledL1 metric;
    metric.prepare(index);
    const bool shortlist = metric.on;
    StopPoll poll(stop);
    // Every sample a query and the matrix fits: every pair's distance (float32 for the
    // shortlist, else exact) computed once for both samples and kept; the same values, so the
    // same weights, as the rows computed four samples at a time.
    // With few features and every distance exact, each query's row comes from the transposed
    // copy (kernels::l1_columns, the same bits), faster than computing each pair once.
    // Its samples go in class order when only the selection reads the rows (no STIR pair
    // graph, which looks distances up by sample), so a class's distances are contiguous.
    const bool columns = !shortlist && (n <= kColumnL1Features || !pair_cache_fits<double>(m));
    const bool class_ordered = columns && k <= kStreamedSelection && moments == nullptr;
    RecycledMatrix<double> Zt;
    if (columns) {
        Zt.resize(n, m);
        for (Index p = 0; p < m; ++p)
            Zt.col(p) = Z.row(class_ordered ? L.order[static_cast<std::size_t>(p)] : p).transpose();
    }
    const bool cached = q0 == 0 && q1 == m && !columns &&
                        (shortlist ? pair_cache_fits<float>(m) : pair_cache_fits<double>(m));
    RecycledMatrix<float> approx_all;
    RecycledMatrix<double> dist_all;
    if (cached && shortlist) approx_all = pair_l1(index.X32(), threads, poll);
    else if (cached) dist_all = pair_l1(Z, threads, poll);
    // With the pair moments, a row of 4 n + 2 per block of a step (O(threads * n)).
    ReliefPass pass{q0, q1, n, threads};
    pass.stepwise = moments != nullptr;
    RowMatrix<double> block_moments;
    std::optional<detail::PairGraphPass> graph;
    detail::start_pair_moments(moments, m, n, q0, q1, threads, C, pass,
                               static_cast<bool>(callback), block_moments, graph);
    // Per thread: the distance rows of four samples at a time (each row of Z is read once per
    // four samples; |a - b| = |b - a|, so the values are those of the samples' own rows), and
    // idx (a class's candidates, indexed up to m) apart from the shortlist's buffers.
    struct Scratch {
        RowMatrix<double> dist;
        RowMatrix<float> approx;
        std::vector<Index> idx, chosen, per_class;
        std::vector<const T*> rows;
        std::vector<double> bound, tmp;
        std::vector<std::vector<Index>> cand;
    };
    auto scratch = [&] {
        Scratch s;
        s.dist.resize(cached && !shortlist ? 0 : 4, m);
        s.approx.resize(shortlist && !cached ? 4 : 0, m);
        s.idx.resize(static_cast<std::size_t>(m));
        s.per_class.resize(static_cast<std::size_t>(C));
        return s;
    };
    auto rows = [&](Scratch& s, Index i0, Index count, double* acc, Index slot) {
        if (shortlist) {
            if (!cached) l1_rows(index.X32(), i0, count, s.approx);
            for (Index r = 0; r < count; ++r) {
                const float* approx =
                    cached ? approx_all.row(i0 + r).data() : s.approx.row(r).data();
                // Without STIR's moments only the neighbour sets matter: a class the screen
                // settles needs no exact distance.
                if (moments == nullptr)
                    k_nearest_sets_per_class(index, metric, L, codes, k, i0 + r, approx, nullptr,
                                             s.dist.row(r).data(), s.cand, s.tmp, s.bound);
                else
                    k_nearest_per_class(index, metric, L, codes, k, i0 + r, approx, nullptr,
                                        s.dist.row(r).data(), s.tmp, s.bound);
            }
        } else if (columns) {
            // Zt's samples may be in class order: the queries are rows of Z
            l1_column_rows(Z, Zt, i0, count, s.dist);
        } else if (!cached) {
            l1_rows(Z, i0, count, s.dist);
        }
        for (Index r = 0; r < count; ++r) {
            const double* dist = cached && !shortlist ? dist_all.row(i0 + r).data()
                                                      : s.dist.row(r).data();
            relieff_contribution(X, codes, L, inv_range, k, i0 + r, dist, s.idx, s.chosen,
                                 s.rows, s.per_class, s.tmp, acc,
                                 moments ? block_moments.row(slot).data() : nullptr, shortlist,
                                 class_ordered);
            if (graph)
                add_relieff_pairs(*graph, codes, L, k, i0 + r, dist, s.chosen, s.per_class,
                                  (i0 - q0) / pass.block());
        }
    };
    auto begin_step = [&](Index) {
        if (moments) block_moments.setZero();
    };
    const Index n_blocks = pass.blocks(), step = pass.step_blocks(static_cast<bool>(callback));
    auto merge = [&](Index b, Index slot, const double* acc, std::vector<double>& w) {
        for (Index f = 0; f < n; ++f) w[static_cast<std::size_t>(f)] += acc[f];
        if (moments) detail::add_block_moments(block_moments.row(slot).data(), n, *moments);
        if (graph && b + 1 == std::min(n_blocks, b - slot + step))
            graph->end_step(Z, codes, (b - slot) * pass.block(),
                            std::min(m, (b + 1) * pass.block()), threads);
    };
    std::vector<double> w =
        relief_block_pass(pass, poll, callback, status, scratch, rows, begin_step, merge);
    if (graph) graph->finish(*moments);
    return w;
}

template <class T>
std::vector<double> relieff(const MatrixRef<T>& X, const Labels& codes, Index k, int n_threads,
                            const StopHook& stop = {}, const ProgressHook& callback = {},
                            PassStatus* status = nullptr,
                            const std::vector<double>& distance_weights = {},
                            PairMoments* moments = nullptr) {
    PassStatus done;
    std::vector<double> w = relieff_sums(X, codes, k, 0, X.rows(), n_threads, stop, callback,
                                         &done, distance_weights, moments);
    for (auto& v : w) v /= static_cast<double>(done.done);
    if (status) *status = done;
    return w;
}

}  // namespace fastfs
