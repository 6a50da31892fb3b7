// Univariate filters (SPEC 6): one pass over X per call, parallel over blocks of features,
// producing the sufficient statistics that fastfs.filters turns into scores and p-values:
// per-class moments, moments against a real target, rank sums and contingency-table statistics
// (dense row-major X, or sparse CSR / CSC). Every kernel takes the caller's stop hook
// (Ctrl-C), polled between blocks of features, and then throws fastfs::Interrupted.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES: AVX2 and baseline builds of a loop
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../state/class_stats.hpp"

namespace fastfs::filters {

// Every column is summed in a fixed row order by the one thread that owns its block, so the
// result does not depend on the thread count. Blocks are wide enough that a row contributes one
// long contiguous segment per sweep, and narrow enough that the accumulators stay in L2.
constexpr Index kMomentBlock = 1024;
// Sorting kernels gather this many columns per sweep over the rows (one cache line of doubles
// per row), then sort each column on its own.
constexpr Index kGatherBlock = 8;
// Below this many elements the thread start-up costs more than the pass.
constexpr Index kParallelMinElements = Index{1} << 16;

inline int team_for(Index elements, int n_threads) {
    return elements >= kParallelMinElements ? resolve_threads(n_threads) : 1;
}

inline Index moment_block(Index d, int team) {
    // Enough blocks to give every thread work, without cutting a row into tiny segments.
    const Index per_thread = (d + team - 1) / team;
    return std::max<Index>(64, std::min(kMomentBlock, per_thread));
}

// Calls body(j0, len) for the blocks of columns j0 .. j0 + len - 1 of an n x d pass, in
// parallel (dynamic schedule; each block's sums are its own, so the result does not depend on
// the thread count), polling the stop hook between blocks. body must not throw.
template <class Body>
void for_moment_blocks(Index n, Index d, int n_threads, const StopHook& stop, Body&& body) {
    const int team = team_for(n * d, n_threads);
    const Index block = moment_block(d, team);
    const Index n_blocks = (d + block - 1) / block;
    StopPoll poll(stop);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (Index b = 0; b < n_blocks; ++b) {
        if (poll.stopped()) continue;
        const Index j0 = b * block;
        body(j0, std::min(block, d - j0));
    }
    poll.check();
}


namespace detail {

// Row segments into the shifted sums: a1 += x - sh, a2 += (x - sh)^2 and, Weighted, a3 +=
// (x - sh) * w for the cross moments (a3 and w unused otherwise), four rows at a time so the
// accumulators are loaded and stored once per four rows: that traffic, not X's, bounds a
// one-row loop. Compiled for AVX2 and the baseline, picked at load time.
template <class T, bool Weighted>
FASTFS_SIMD_CLONES void add_rows4(const T* __restrict x0, const T* __restrict x1,
                                  const T* __restrict x2, const T* __restrict x3,
                                  const double* w, const double* __restrict sh,
                                  double* __restrict a1, double* __restrict a2,
                                  double* __restrict a3, Index len) {
    double w0 = 0.0, w1 = 0.0, w2 = 0.0, w3 = 0.0;
    if constexpr (Weighted) {
        w0 = w[0];
        w1 = w[1];
        w2 = w[2];
        w3 = w[3];
    }
#pragma omp simd
    for (Index j = 0; j < len; ++j) {
        const double s = sh[j];
        const double v0 = static_cast<double>(x0[j]) - s, v1 = static_cast<double>(x1[j]) - s;
        const double v2 = static_cast<double>(x2[j]) - s, v3 = static_cast<double>(x3[j]) - s;
        a1[j] += (v0 + v1) + (v2 + v3);
        a2[j] += (v0 * v0 + v1 * v1) + (v2 * v2 + v3 * v3);
        if constexpr (Weighted) a3[j] += (v0 * w0 + v1 * w1) + (v2 * w2 + v3 * w3);
    }
}

template <class T, bool Weighted>
FASTFS_SIMD_CLONES void add_row(const T* __restrict x, const double* __restrict sh, double w,
                                double* __restrict a1, double* __restrict a2,
                                double* __restrict a3, Index len) {
#pragma omp simd
    for (Index j = 0; j < len; ++j) {
        const double v = static_cast<double>(x[j]) - sh[j];
        a1[j] += v;
        a2[j] += v * v;
        if constexpr (Weighted) a3[j] += v * w;
    }
}

}  // namespace detail

// Clamps the tiny negatives that rounding leaves where a sum of squared deviations is 0, and
// keeps a NaN (from NaN / inf input or overflow) for the caller to see, as std::max would not.
inline double non_negative(double v) { return v < 0.0 ? 0.0 : v; }

// Per class c and feature j (row-major n_classes x n_features): mean, M2 = sum of squared
// deviations from the class mean, and the mean relative to the column's reference value
// (its first row): centred = mean - reference, formed as (class shift - reference) + the
// shifted mean, so differences between class means keep their digits when the data sit far
// from zero (1e12 + 0.2 ... 0.6: the means themselves are rounded to 1e-4 there).
struct ClassMoments {
    std::vector<Index> counts;
    std::vector<double> mean, m2, centred;
};

// Sums are taken of x - shift with shift = the first value of the class in that column, which
// keeps the one-pass M2 = S2 - S1^2 / n free of cancellation for data far from zero, and makes
// M2 exactly 0 for a column constant within the class.
template <class T>
ClassMoments class_moments(const MatrixRef<T>& X, const Labels& codes, Index n_classes,
                           int n_threads, const StopHook& stop = {}) {
    const Index n = X.rows(), d = X.cols();
    require(codes.size() == n, "X and y have different numbers of samples");
    require(n_classes >= 1, "y: needs at least one class");
    ClassMoments out;
    out.counts = class_counts(codes, n_classes);
    const std::size_t kd = static_cast<std::size_t>(n_classes * d);
    // Rows grouped by class (original order inside a class), so four consecutive rows share
    // their accumulators; the shift is the first row of each class.
    std::vector<Index> begin(static_cast<std::size_t>(n_classes) + 1, 0), order(
        static_cast<std::size_t>(n));
    for (Index c = 0; c < n_classes; ++c)
        begin[static_cast<std::size_t>(c) + 1] =
            begin[static_cast<std::size_t>(c)] + out.counts[static_cast<std::size_t>(c)];
    {
        std::vector<Index> next(begin.begin(), begin.end() - 1);
        for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(next[codes[i]]++)] = i;
    }
    std::vector<double> shift(kd), s1(kd, 0.0), s2(kd, 0.0);
    for (Index c = 0; c < n_classes; ++c) {
        const Index first = order[static_cast<std::size_t>(begin[static_cast<std::size_t>(c)])];
        for (Index j = 0; j < d; ++j)
            shift[static_cast<std::size_t>(c * d + j)] = static_cast<double>(X(first, j));
    }
    const Index stride = X.outerStride();
    const T* data = X.data();
    for_moment_blocks(n, d, n_threads, stop, [&](Index j0, Index len) {
        auto row = [&](Index p) {
            return data + order[static_cast<std::size_t>(p)] * stride + j0;
        };
        for (Index c = 0; c < n_classes; ++c) {
            const std::size_t off = static_cast<std::size_t>(c * d + j0);
            const double* sh = shift.data() + off;
            double* a1 = s1.data() + off;
            double* a2 = s2.data() + off;
            const Index end = begin[static_cast<std::size_t>(c) + 1];
            Index p = begin[static_cast<std::size_t>(c)];
            for (; p + 4 <= end; p += 4)
                detail::add_rows4<T, false>(row(p), row(p + 1), row(p + 2), row(p + 3), nullptr,
                                            sh, a1, a2, nullptr, len);
            for (; p < end; ++p) detail::add_row<T, false>(row(p), sh, 0.0, a1, a2, nullptr, len);
        }
    });
    out.mean.resize(kd);
    out.m2.resize(kd);
    out.centred.resize(kd);
    for (Index c = 0; c < n_classes; ++c) {
        const double nc = static_cast<double>(out.counts[static_cast<std::size_t>(c)]);
        for (Index j = 0; j < d; ++j) {
            const std::size_t k = static_cast<std::size_t>(c * d + j);
            out.mean[k] = shift[k] + s1[k] / nc;
            out.m2[k] = non_negative(s2[k] - s1[k] * s1[k] / nc);
            out.centred[k] = (shift[k] - static_cast<double>(X(0, j))) + s1[k] / nc;
        }
    }
    return out;
}

// Per feature j, against a real target already centred (yc sums to ~0): the mean of x_j, its
// sum of squared deviations and the centred cross product sum (x_ij - mean_j) * yc_i.
struct CrossMoments {
    std::vector<double> mean, sxx, sxy;
};

template <class T>
CrossMoments cross_moments(const MatrixRef<T>& X, const VectorRef<double>& yc, int n_threads,
                           const StopHook& stop = {}) {
    const Index n = X.rows(), d = X.cols();
    require(yc.size() == n, "X and y have different numbers of samples");
    require(n >= 1, "X: needs at least one sample");
    std::vector<double> shift(static_cast<std::size_t>(d));
    for (Index j = 0; j < d; ++j)
        shift[static_cast<std::size_t>(j)] = static_cast<double>(X(0, j));
    std::vector<double> s1(static_cast<std::size_t>(d), 0.0), s2(s1), sxy(s1);
    const Index stride = X.outerStride();
    const T* data = X.data();
    for_moment_blocks(n, d, n_threads, stop, [&](Index j0, Index len) {
        const double* sh = shift.data() + j0;
        double *a1 = s1.data() + j0, *a2 = s2.data() + j0, *a3 = sxy.data() + j0;
        auto row = [&](Index i) { return data + i * stride + j0; };
        Index i = 0;
        for (; i + 4 <= n; i += 4)
            detail::add_rows4<T, true>(row(i), row(i + 1), row(i + 2), row(i + 3),
                                       yc.data() + i, sh, a1, a2, a3, len);
        for (; i < n; ++i) detail::add_row<T, true>(row(i), sh, yc[i], a1, a2, a3, len);
    });
    // sum (x - shift) * yc = sum (x - mean) * yc + (mean - shift) * sum yc; the last term is
    // rounding noise of the centring but grows with |mean - shift|, so remove it.
    double sum_yc = 0.0;
    for (Index i = 0; i < n; ++i) sum_yc += yc[i];
    CrossMoments out;
    out.mean.resize(static_cast<std::size_t>(d));
    out.sxx.resize(static_cast<std::size_t>(d));
    out.sxy.resize(static_cast<std::size_t>(d));
    const double nn = static_cast<double>(n);
    for (std::size_t j = 0; j < static_cast<std::size_t>(d); ++j) {
        const double delta = s1[j] / nn;
        out.mean[j] = shift[j] + delta;
        out.sxx[j] = non_negative(s2[j] - s1[j] * delta);
        out.sxy[j] = sxy[j] - delta * sum_yc;
    }
    return out;
}

// Sparse X (CSR or CSC, canonical: no duplicate entries), per class c and feature j
// (row-major n_classes x n_features): sums of the stored values (implicit zeros add nothing;
// counts need these exact sums), the sums and sums of squares of x - shift over all n_c values
// of the class, zeros included, with shift = the class's first stored value in that column (the
// dense moments' rule: a class mean far from zero against its spread keeps its digits),
// optionally the weighted column sums sum_i w_i (x_ij - col_shift_j) over all n rows with
// col_shift_j the column's first stored value, and every column's minimum and maximum over all
// its n values, zeros included (constant columns, signs).
struct SparseMoments {
    std::vector<Index> counts;
    std::vector<double> sum, shift, dsum, dsumsq, col_shift, dweighted, min, max;
};

struct SparseMatrix {
    Index n_rows = 0, n_cols = 0;
    bool csc = true;  // false: CSR
};

template <class T, class I>
SparseMoments sparse_moments(const SparseMatrix& shape, const I* indptr, const I* indices,
                             const T* values, const Labels& codes, Index n_classes,
                             const double* w, int n_threads, const StopHook& stop = {}) {
    const Index n = shape.n_rows, d = shape.n_cols;
    const Index outer = shape.csc ? d : n, inner = shape.csc ? n : d;
    require(codes.size() == n, "X and y have different numbers of samples");
    for (Index o = 0; o < outer; ++o)
        require(indptr[o] <= indptr[o + 1], "X: sparse index pointers must not decrease");
    const Index nnz = static_cast<Index>(indptr[outer]);
    for (Index p = 0; p < nnz; ++p)
        require_index(indices[p] >= 0 && static_cast<Index>(indices[p]) < inner,
                      "X: sparse index out of range");
    SparseMoments out;
    out.counts = class_counts(codes, n_classes);
    const std::size_t kd = static_cast<std::size_t>(n_classes * d);
    const double inf = std::numeric_limits<double>::infinity();
    out.sum.assign(kd, 0.0);
    out.shift.assign(kd, 0.0);
    out.dsum.assign(kd, 0.0);
    out.dsumsq.assign(kd, 0.0);
    out.col_shift.assign(w ? static_cast<std::size_t>(d) : 0, 0.0);
    out.dweighted.assign(w ? static_cast<std::size_t>(d) : 0, 0.0);
    out.min.assign(static_cast<std::size_t>(d), inf);
    out.max.assign(static_cast<std::size_t>(d), -inf);
    std::vector<Index> stored(static_cast<std::size_t>(d), 0), stored_in_class(kd, 0);
    std::vector<double> w_stored(w ? static_cast<std::size_t>(d) : 0, 0.0);
    auto add = [&](Index i, Index j, double v) {
        const std::size_t cj = static_cast<std::size_t>(codes[i] * d + j);
        const auto js = static_cast<std::size_t>(j);
        if (stored_in_class[cj]++ == 0) out.shift[cj] = v;
        const double dv = v - out.shift[cj];
        out.sum[cj] += v;
        out.dsum[cj] += dv;
        out.dsumsq[cj] += dv * dv;
        if (w) {
            if (stored[js] == 0) out.col_shift[js] = v;
            out.dweighted[js] += (v - out.col_shift[js]) * w[i];
            w_stored[js] += w[i];
        }
        out.min[js] = std::min(out.min[js], v);
        out.max[js] = std::max(out.max[js], v);
        ++stored[js];
    };
    StopPoll poll(stop);
    if (shape.csc) {
        // Columns are independent: parallel, each summed in row order.
#pragma omp parallel for schedule(dynamic, 64) num_threads(team_for(nnz, n_threads))
        for (Index j = 0; j < d; ++j) {
            if (poll.stopped()) continue;
            for (I p = indptr[j]; p < indptr[j + 1]; ++p)
                add(static_cast<Index>(indices[p]), j, static_cast<double>(values[p]));
        }
    } else {
        // Rows scatter into every column: one thread, in row order (still O(nnz)).
        for (Index i = 0; i < n && !poll.stopped(); ++i)
            for (I p = indptr[i]; p < indptr[i + 1]; ++p)
                add(i, static_cast<Index>(indices[p]), static_cast<double>(values[p]));
    }
    poll.check();
    // The implicit zeros: each adds 0 - shift to the shifted sums.
    double w_total = 0.0;
    if (w)
        for (Index i = 0; i < n; ++i) w_total += w[i];
    for (Index c = 0; c < n_classes; ++c) {
        const double n_c = static_cast<double>(out.counts[static_cast<std::size_t>(c)]);
        for (Index j = 0; j < d; ++j) {
            const std::size_t cj = static_cast<std::size_t>(c * d + j);
            const double zeros = n_c - static_cast<double>(stored_in_class[cj]);
            const double s = out.shift[cj];
            if (zeros > 0 && s != 0.0) {
                out.dsum[cj] -= zeros * s;
                out.dsumsq[cj] += zeros * (s * s);
            }
        }
    }
    for (std::size_t j = 0; j < static_cast<std::size_t>(d); ++j) {
        if (w && stored[j] < n) out.dweighted[j] -= out.col_shift[j] * (w_total - w_stored[j]);
        if (stored[j] < n) {
            out.min[j] = std::min(out.min[j], 0.0);
            out.max[j] = std::max(out.max[j], 0.0);
        }
    }
    return out;
}

// Calls fn(j, column, thread) for every feature j, with the column gathered into a contiguous
// buffer, on `team` threads (thread < team indexes the caller's per-thread scratch). Blocks of
// kGatherBlock columns share one sweep over the rows; buffers are allocated before the
// parallel region so nothing inside it can throw. The stop hook is polled between blocks.
template <class T, class Fn>
void for_each_column(const MatrixRef<T>& X, int team, const StopHook& stop, Fn&& fn) {
    const Index n = X.rows(), d = X.cols();
    const Index n_blocks = (d + kGatherBlock - 1) / kGatherBlock;
    std::vector<std::vector<double>> buffers(static_cast<std::size_t>(team),
                                             std::vector<double>(static_cast<std::size_t>(
                                                 kGatherBlock * n)));
    const Index stride = X.outerStride();
    const T* data = X.data();
    StopPoll poll(stop);
#pragma omp parallel num_threads(team)
    {
        const int t = thread_index();
        double* buf = buffers[static_cast<std::size_t>(t)].data();
#pragma omp for schedule(dynamic, 1)
        for (Index b = 0; b < n_blocks; ++b) {
            if (poll.stopped()) continue;
            const Index j0 = b * kGatherBlock, len = std::min(kGatherBlock, d - j0);
            for (Index i = 0; i < n; ++i) {
                const T* x = data + i * stride + j0;
                for (Index k = 0; k < len; ++k) buf[k * n + i] = static_cast<double>(x[k]);
            }
            for (Index k = 0; k < len; ++k) fn(j0 + k, buf + k * n, t);
        }
    }
    poll.check();
}

// Rank statistic of the positive class per feature (ROC AUC, Mann-Whitney U): the sum of the
// midranks of the positive samples, and the tie term sum over tie groups of (t^3 - t).
struct RankSums {
    std::vector<double> positive_rank_sum, tie_term;
};

template <class T>
RankSums rank_sums(const MatrixRef<T>& X, const Labels& positive, int n_threads,
                   const StopHook& stop = {}) {
    const Index n = X.rows(), d = X.cols();
    require(positive.size() == n, "X and y have different numbers of samples");
    for (Index i = 0; i < n; ++i)
        require(positive[i] == 0 || positive[i] == 1, "y: positive flags must be 0 or 1");
    RankSums out;
    out.positive_rank_sum.assign(static_cast<std::size_t>(d), 0.0);
    out.tie_term.assign(static_cast<std::size_t>(d), 0.0);
    const int team = team_for(n * d, n_threads);
    std::vector<std::vector<std::pair<double, std::int8_t>>> scratch(
        static_cast<std::size_t>(team),
        std::vector<std::pair<double, std::int8_t>>(static_cast<std::size_t>(n)));
    for_each_column<T>(X, team, stop, [&](Index j, const double* col, int t) {
        auto& v = scratch[static_cast<std::size_t>(t)];
        for (Index i = 0; i < n; ++i)
            v[static_cast<std::size_t>(i)] = {col[i], static_cast<std::int8_t>(positive[i])};
        std::sort(v.begin(), v.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        double rank_sum = 0.0, ties = 0.0;
        for (Index lo = 0; lo < n;) {
            Index hi = lo + 1, pos = v[static_cast<std::size_t>(lo)].second;
            while (hi < n && v[static_cast<std::size_t>(hi)].first ==
                                 v[static_cast<std::size_t>(lo)].first)
                pos += v[static_cast<std::size_t>(hi++)].second;
            // Ranks lo+1 .. hi share their mean.
            const double size = static_cast<double>(hi - lo);
            rank_sum += static_cast<double>(pos) * 0.5 * static_cast<double>(lo + 1 + hi);
            ties += size * size * size - size;
            lo = hi;
        }
        out.positive_rank_sum[static_cast<std::size_t>(j)] = rank_sum;
        out.tie_term[static_cast<std::size_t>(j)] = ties;
    });
    return out;
}

// How a feature's values become the rows of its contingency table.
enum class Binning { none, uniform, quantile, median };

inline Binning parse_binning(const std::string& name) {
    if (name == "none") return Binning::none;
    if (name == "uniform") return Binning::uniform;
    if (name == "quantile") return Binning::quantile;
    if (name == "median") return Binning::median;
    throw std::invalid_argument("binning: unknown value '" + name +
                                "'; valid options are 'quantile', 'uniform', 'median'");
}

// Per feature: Pearson's chi-square statistic of its value x class table, the number of table
// rows (distinct values or occupied bins; the test has (rows - 1)(n_classes - 1) degrees of
// freedom), the number of samples in its largest row (the most common value: zero in sparse
// data) and the mutual information (nats) of the table with `alpha` added to every cell.
struct TableStats {
    std::vector<double> chi2, mutual_info;
    std::vector<Index> n_rows, largest_row;
};

namespace detail {
inline Index row_total(const Index* counts, Index n_classes) {
    Index t = 0;
    for (Index c = 0; c < n_classes; ++c) t += counts[c];
    return t;
}
}  // namespace detail

// Accumulates one table row at a time; the table has rows x n_classes cells and the class
// totals are known up front.
class TableAccumulator {
public:
    TableAccumulator(const std::vector<Index>& class_totals, double alpha)
        : totals_(class_totals),
          n_(0),
          alpha_(alpha),
          k_(static_cast<Index>(class_totals.size())) {
        for (Index c : totals_) n_ += c;
    }

    // Pass 1 counts the rows (the smoothed marginals depend on it), pass 2 scores them.
    void start(Index n_rows) {
        rows_ = n_rows;
        chi2_ = mi_ = 0.0;
        total_ = static_cast<double>(n_) + alpha_ * static_cast<double>(rows_ * k_);
    }

    void add_row(const Index* counts) {
        Index row_total = 0;
        for (Index c = 0; c < k_; ++c) row_total += counts[c];
        const double t = static_cast<double>(row_total), nn = static_cast<double>(n_);
        const double row = t + alpha_ * static_cast<double>(k_);
        for (Index c = 0; c < k_; ++c) {
            const double o = static_cast<double>(counts[c]);
            const double nc = static_cast<double>(totals_[static_cast<std::size_t>(c)]);
            // Expected count as scipy's expected_freq forms it: row sum * column sum / n.
            const double e = t * nc / nn;
            const double diff = o - e;
            chi2_ += diff * diff / e;
            const double cell = o + alpha_;
            if (cell > 0.0) {
                // One log of the ratio P_ij / (P_i. P_.j): the products are exact for counts
                // below 2^26, so near independence the term keeps its small absolute error
                // instead of the cancellation of four logs.
                const double col = nc + alpha_ * static_cast<double>(rows_);
                mi_ += cell / total_ * std::log(cell * total_ / (row * col));
            }
        }
    }

    double chi2() const { return chi2_; }
    double mutual_info() const { return std::max(0.0, mi_); }

private:
    const std::vector<Index>& totals_;
    Index n_;
    double alpha_;
    Index k_;
    Index rows_ = 0;
    double total_ = 0.0, chi2_ = 0.0, mi_ = 0.0;
};

namespace detail {

// NumPy's default ("linear") quantile of sorted values, with its exact operation order, so a
// value that lands on an edge goes to the same bin as np.quantile + np.digitize put it.
inline double linear_quantile(const std::vector<std::pair<double, std::int32_t>>& v, double q) {
    const Index n = static_cast<Index>(v.size());
    const double virtual_index = static_cast<double>(n - 1) * q;
    if (virtual_index >= static_cast<double>(n - 1)) return v.back().first;
    const double prev = std::floor(virtual_index);
    const Index lo = static_cast<Index>(prev);
    const double a = v[static_cast<std::size_t>(lo)].first;
    const double b = v[static_cast<std::size_t>(lo + 1)].first;
    const double gamma = virtual_index - prev;
    const double diff = b - a;
    return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

// Inner bin edges for a sorted column; a value's bin is the number of edges <= value (as
// np.digitize). Median binning is handled apart (above the median or not).
inline void bin_edges(const std::vector<std::pair<double, std::int32_t>>& v, Binning binning,
                      int bins, std::vector<double>& edges) {
    edges.clear();
    if (binning == Binning::quantile) {
        // An edge at the minimum (a value that fills the lower quantiles: the zeros of word
        // counts) would put that value in one bin with every value above it, up to the next
        // edge: a feature that is 0 in 95% of the samples and 1 in the rest read as constant.
        // Such an edge moves to the first edge above the minimum, or the next value above it
        // if that is lower, so the minimum gets a bin of its own (the edges stay sorted).
        const double lowest = v.front().first;
        const auto above = std::upper_bound(
            v.begin(), v.end(), lowest, [](double x, const auto& p) { return x < p.first; });
        for (int k = 1; k < bins; ++k)
            edges.push_back(linear_quantile(v, static_cast<double>(k) / bins));
        if (above != v.end()) {
            double target = above->first;
            for (double e : edges)
                if (e > lowest) {
                    target = std::min(target, e);
                    break;
                }
            for (double& e : edges)
                if (e <= lowest) e = target;
        }
    } else if (binning == Binning::uniform) {
        // np.linspace(lo, hi, bins + 1): k * step + lo, or k / bins * delta when step is 0.
        const double lo = v.front().first, delta = v.back().first - lo;
        const double step = delta / bins;
        for (int k = 1; k < bins; ++k)
            edges.push_back(step == 0.0 ? static_cast<double>(k) / bins * delta + lo
                                        : static_cast<double>(k) * step + lo);
    }
}

inline double sorted_median(const std::vector<std::pair<double, std::int32_t>>& v) {
    const std::size_t n = v.size(), h = n / 2;
    return n % 2 ? v[h].first : (v[h - 1].first + v[h].first) / 2.0;
}

// Walks sorted (value, class) pairs group by group, a group being one table row: equal values,
// or values in the same bin. Calls row(counts) with per-class counts of each group.
template <class Row>
void walk_groups(const std::vector<std::pair<double, std::int32_t>>& v, Binning binning,
                 const std::vector<double>& edges, double median, Index k,
                 std::vector<Index>& counts, Row&& row) {
    const std::size_t n = v.size();
    std::size_t e = 0;  // edges passed so far: the bin of the current value
    auto bin_of = [&](double x) -> std::size_t {
        if (binning == Binning::median) return x > median ? 1 : 0;
        while (e < edges.size() && edges[e] <= x) ++e;
        return e;
    };
    std::size_t lo = 0;
    while (lo < n) {
        std::fill(counts.begin(), counts.begin() + k, Index{0});
        std::size_t hi = lo;
        if (binning == Binning::none) {
            while (hi < n && v[hi].first == v[lo].first) ++counts[v[hi++].second];
        } else {
            const std::size_t bin = bin_of(v[lo].first);
            while (hi < n && bin_of(v[hi].first) == bin) ++counts[v[hi++].second];
        }
        row(counts.data());
        lo = hi;
    }
}

}  // namespace detail

template <class T>
TableStats table_stats(const MatrixRef<T>& X, const Labels& codes, Index n_classes,
                       Binning binning, int bins, double alpha, int n_threads,
                       const StopHook& stop = {}) {
    const Index n = X.rows(), d = X.cols();
    require(codes.size() == n, "X and y have different numbers of samples");
    require(binning == Binning::none || binning == Binning::median || bins >= 2,
            "bins: must be >= 2");
    require(alpha >= 0.0, "alpha: must be >= 0");
    const std::vector<Index> totals = class_counts(codes, n_classes);
    TableStats out;
    out.chi2.assign(static_cast<std::size_t>(d), 0.0);
    out.mutual_info.assign(static_cast<std::size_t>(d), 0.0);
    out.n_rows.assign(static_cast<std::size_t>(d), 0);
    out.largest_row.assign(static_cast<std::size_t>(d), 0);
    const int team = team_for(n * d, n_threads);
    using Pairs = std::vector<std::pair<double, std::int32_t>>;
    std::vector<Pairs> pairs(static_cast<std::size_t>(team), Pairs(static_cast<std::size_t>(n)));
    const std::vector<Index> per_class(static_cast<std::size_t>(n_classes), 0);
    std::vector<std::vector<Index>> counts(static_cast<std::size_t>(team), per_class);
    std::vector<std::vector<double>> edges(static_cast<std::size_t>(team));
    for (auto& e : edges) e.reserve(static_cast<std::size_t>(std::max(bins, 2)));
    std::vector<TableAccumulator> acc(static_cast<std::size_t>(team),
                                      TableAccumulator(totals, alpha));
    for_each_column<T>(X, team, stop, [&](Index j, const double* col, int t) {
        const auto ts = static_cast<std::size_t>(t);
        Pairs& v = pairs[ts];
        for (Index i = 0; i < n; ++i)
            v[static_cast<std::size_t>(i)] = {col[i], static_cast<std::int32_t>(codes[i])};
        std::sort(v.begin(), v.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        detail::bin_edges(v, binning, bins, edges[ts]);
        const double median = binning == Binning::median ? detail::sorted_median(v) : 0.0;
        Index rows = 0, largest = 0;
        detail::walk_groups(v, binning, edges[ts], median, n_classes, counts[ts],
                            [&](const Index* c) {
                                ++rows;
                                largest = std::max(largest, detail::row_total(c, n_classes));
                            });
        acc[ts].start(rows);
        detail::walk_groups(v, binning, edges[ts], median, n_classes, counts[ts],
                            [&](const Index* c) { acc[ts].add_row(c); });
        const auto js = static_cast<std::size_t>(j);
        out.chi2[js] = acc[ts].chi2();
        out.mutual_info[js] = acc[ts].mutual_info();
        out.n_rows[js] = rows;
        out.largest_row[js] = largest;
    });
    return out;
}

// The same tables from a CSC matrix without densifying it: the stored non-zero values of a
// column are sorted and grouped, and the zeros (implicit or stored) form one more row whose
// per-class counts are the class sizes minus the non-zeros.
template <class T, class I>
TableStats table_stats_csc(Index n_rows_x, Index n_cols, const I* indptr, const I* indices,
                           const T* values, const Labels& codes, Index n_classes, double alpha,
                           int n_threads, const StopHook& stop = {}) {
    require(codes.size() == n_rows_x, "X and y have different numbers of samples");
    require(alpha >= 0.0, "alpha: must be >= 0");
    const std::vector<Index> totals = class_counts(codes, n_classes);
    Index max_nnz = 0;
    for (Index j = 0; j < n_cols; ++j) {
        require(indptr[j] <= indptr[j + 1], "X: CSC column pointers must not decrease");
        max_nnz = std::max<Index>(max_nnz, static_cast<Index>(indptr[j + 1] - indptr[j]));
    }
    const Index nnz = static_cast<Index>(indptr[n_cols]);
    for (Index p = 0; p < nnz; ++p)
        require_index(indices[p] >= 0 && static_cast<Index>(indices[p]) < n_rows_x,
                      "X: CSC row index out of range");
    TableStats out;
    out.chi2.assign(static_cast<std::size_t>(n_cols), 0.0);
    out.mutual_info.assign(static_cast<std::size_t>(n_cols), 0.0);
    out.n_rows.assign(static_cast<std::size_t>(n_cols), 0);
    out.largest_row.assign(static_cast<std::size_t>(n_cols), 0);
    const int team = team_for(nnz, n_threads);
    using Pairs = std::vector<std::pair<double, std::int32_t>>;
    std::vector<Pairs> pairs(static_cast<std::size_t>(team));
    for (auto& p : pairs) p.reserve(static_cast<std::size_t>(max_nnz));
    const std::vector<Index> per_class(static_cast<std::size_t>(n_classes), 0);
    std::vector<std::vector<Index>> counts(static_cast<std::size_t>(team), per_class);
    std::vector<std::vector<Index>> zeros(static_cast<std::size_t>(team), per_class);
    std::vector<TableAccumulator> acc(static_cast<std::size_t>(team),
                                      TableAccumulator(totals, alpha));
    const std::vector<double> no_edges;
    StopPoll poll(stop);
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
    for (Index j = 0; j < n_cols; ++j) {
        if (poll.stopped()) continue;
        const int t = thread_index();
        const auto ts = static_cast<std::size_t>(t);
        Pairs& v = pairs[ts];
        v.clear();  // capacity reserved above: push_back below never allocates
        std::vector<Index>& z = zeros[ts];
        std::copy(totals.begin(), totals.end(), z.begin());
        for (I p = indptr[j]; p < indptr[j + 1]; ++p) {
            const double x = static_cast<double>(values[p]);
            if (x == 0.0) continue;
            const auto c = static_cast<std::int32_t>(codes[static_cast<Index>(indices[p])]);
            v.emplace_back(x, c);
            --z[static_cast<std::size_t>(c)];
        }
        std::sort(v.begin(), v.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        const bool has_zero = static_cast<Index>(v.size()) < n_rows_x;
        Index rows = has_zero ? 1 : 0;
        Index largest = n_rows_x - static_cast<Index>(v.size());  // the zeros
        detail::walk_groups(v, Binning::none, no_edges, 0.0, n_classes, counts[ts],
                            [&](const Index* c) {
                                ++rows;
                                largest = std::max(largest, detail::row_total(c, n_classes));
                            });
        acc[ts].start(rows);
        if (has_zero) acc[ts].add_row(z.data());
        detail::walk_groups(v, Binning::none, no_edges, 0.0, n_classes, counts[ts],
                            [&](const Index* c) { acc[ts].add_row(c); });
        const auto js = static_cast<std::size_t>(j);
        out.chi2[js] = acc[ts].chi2();
        out.mutual_info[js] = acc[ts].mutual_info();
        out.n_rows[js] = rows;
        out.largest_row[js] = largest;
    }
    poll.check();
    return out;
}

}  // namespace fastfs::filters
