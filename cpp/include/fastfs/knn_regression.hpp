// The leave-one-out soft kNN regression criterion of RGS (SPEC 3.1): for every sample, the
// kernel-weighted mean target of its k nearest other samples, and e = -(1/2) sum (y - g_hat)^2.
// Two ways to get the neighbours: one weighted distance row per sample (weights, used by RGS,
// knn_regression_score and SKS), or the shared m x m distance state (feature subsets, used by
// forward selection and, later, the generic sequential searches).
#pragma once
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <vector>

#include "distance_state.hpp"
#include "errors.hpp"
#include "pair_kernels.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace fastfs {

// Normalised kernel weights p_j of k neighbour distances sorted nearest first:
// p_j = exp(-(d_j - d_0) / beta) / sum. Shifting by the nearest distance leaves the weights
// unchanged and keeps the largest term at exactly 1, so the sum never underflows to 0 however
// far the neighbours are. Equal distances get equal weights, whatever beta; beta == 0 is the
// limit beta -> 0+ (all the weight on the neighbours at the nearest distance).
inline void kernel_weights(const double* d, int k, double beta, double* p) {
    const double d0 = d[0];
    double z = 0.0;
    for (int j = 0; j < k; ++j) {
        const double t = d[j] - d0;
        const double e = t == 0.0 ? 1.0 : (beta > 0.0 ? std::exp(-t / beta) : 0.0);
        p[j] = e;
        z += e;
    }
    for (int j = 0; j < k; ++j) p[j] /= z;
}

// The k nearest entries of a distance row other than `skip`, nearest first; equal distances go
// to the lower index (SPEC 1.4). Returns min(k, m - 1).
inline int select_k_nearest(const double* row, Index m, Index skip, int k, Index* idx,
                            double* dist) {
    int count = 0;
    for (Index b = 0; b < m; ++b) {
        if (b == skip) continue;
        const double v = row[b];
        // Scanning in index order, an equal later value never displaces an earlier one.
        if (count == k) {
            if (!(v < dist[k - 1])) continue;
        } else {
            ++count;
        }
        int i = count - 1;
        while (i > 0 && dist[i - 1] > v) {
            dist[i] = dist[i - 1];
            idx[i] = idx[i - 1];
            --i;
        }
        dist[i] = v;
        idx[i] = b;
    }
    return count;
}

// k = min(n_neighbors, m - 1): the neighbour count every function here uses.
inline int effective_k(Index n_neighbors, Index m) {
    require(n_neighbors >= 1, "n_neighbors must be >= 1");
    require(m >= 2, "need at least 2 samples");
    return static_cast<int>(std::min<Index>(n_neighbors, m - 1));
}

// Below this many distance terms a row is computed by one thread: a parallel region costs
// microseconds, more than the row itself.
constexpr Index kRowParallelWork = Index{1} << 17;

// Weighted squared distances from sample i to every sample: out[j] = sum_f w2[f] (x_if - x_jf)^2,
// through the one kernel every exact distance uses, so each value has the same bits however the
// row is split among threads.
template <class T>
void weighted_row(const MatrixRef<T>& X, Index i, const double* w2, double* out, int threads) {
    const Index m = X.rows(), n = X.cols();
    const T* xi = X.row(i).data();
    auto range = [&](Index j0, Index j1) {
        double d[4];
        for (Index j = j0; j < j1; j += 4) {
            auto row = [&](Index r) { return X.row(std::min(j + r, j1 - 1)).data(); };
            kernels::sq_dist4(xi, row(0), row(1), row(2), row(3), w2, n, d);
            for (Index r = 0; r < 4 && j + r < j1; ++r) out[j + r] = d[r];
        }
    };
    const int nt = threads > 1 && m * n >= kRowParallelWork ? threads : 1;
    if (nt == 1) {
        range(0, m);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int t = 0, team = 1;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
        team = omp_get_num_threads();
#endif
        auto bound = [&](int u) { return u >= team ? m : std::min(m, (m * u / team) & ~Index{3}); };
        range(bound(t), bound(t + 1));
    }
}

// Per-sample neighbour lists under weights w2 (k per sample, nearest first), in parallel over
// samples. Each list is computed by one thread from its own row, so the lists do not depend on
// the thread count.
template <class T>
void all_k_nearest(const MatrixRef<T>& X, const double* w2, int k, int threads,
                   std::vector<Index>& idx, std::vector<double>& dist) {
    const Index m = X.rows();
    idx.assign(static_cast<std::size_t>(m) * k, 0);
    dist.assign(static_cast<std::size_t>(m) * k, 0.0);
    const int nt = std::max(1, std::min<int>(threads, static_cast<int>(m)));
    std::vector<double> rows(static_cast<std::size_t>(nt) * m);  // allocated before the region
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
    for (Index i = 0; i < m; ++i) {
        int t = 0;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
#endif
        double* row = rows.data() + static_cast<std::size_t>(t) * m;
        weighted_row(X, i, w2, row, 1);
        select_k_nearest(row, m, i, k, idx.data() + static_cast<std::size_t>(i) * k,
                         dist.data() + static_cast<std::size_t>(i) * k);
    }
}

// SPEC 3.3's beta: half the mean squared distance from each sample to its k nearest neighbours.
inline double default_beta(const std::vector<double>& dist) {
    double s = 0.0;
    for (double d : dist) s += d;
    return 0.5 * s / static_cast<double>(dist.size());
}

// g_hat of every sample from its neighbour lists; beta > 0, or 0 for the limit.
inline std::vector<double> soft_knn_estimates(const double* y, Index m, int k,
                                              const std::vector<Index>& idx,
                                              const std::vector<double>& dist, double beta) {
    std::vector<double> g(static_cast<std::size_t>(m));
    std::vector<double> p(static_cast<std::size_t>(k));
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist.data() + o, k, beta, p.data());
        double s = 0.0;
        for (int j = 0; j < k; ++j) s += p[j] * y[idx[o + j]];
        g[static_cast<std::size_t>(i)] = s;
    }
    return g;
}

// e straight from the neighbour lists, with the caller's k-sized buffer p (no allocation, for
// use inside parallel regions); the same sum, in the same order, as the two functions around it.
inline double soft_knn_evaluation(const double* y, Index m, int k, const Index* idx,
                                  const double* dist, double beta, double* p) {
    double s = 0.0;
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist + o, k, beta, p);
        double g = 0.0;
        for (int j = 0; j < k; ++j) g += p[j] * y[idx[o + j]];
        const double r = y[i] - g;
        s += r * r;
    }
    return -0.5 * s;
}

// e = -(1/2) sum (y - g_hat)^2, summed in sample order (the same bits for any thread count).
inline double regression_evaluation(const double* y, const std::vector<double>& g) {
    double s = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const double r = y[i] - g[i];
        s += r * r;
    }
    return -0.5 * s;
}

struct KnnRegressionResult {
    std::vector<double> estimates;  // g_hat per sample
    double score = 0.0;             // e
    double beta = 0.0;              // the beta used (the default when asked for one)
    int k = 0;
};

// The criterion under feature weights w (distances sum_f w_f^2 (x_f - z_f)^2). beta <= 0 asks
// for the default of SPEC 3.3 computed under these weights.
template <class T>
KnnRegressionResult knn_regression(const MatrixRef<T>& X, const double* y, const double* w,
                                   Index n_neighbors, double beta, int threads) {
    const Index m = X.rows(), n = X.cols();
    KnnRegressionResult r;
    r.k = effective_k(n_neighbors, m);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[f] * w[f];
    std::vector<Index> idx;
    std::vector<double> dist;
    all_k_nearest(X, w2.data(), r.k, resolve_threads(threads), idx, dist);
    r.beta = beta > 0.0 ? beta : default_beta(dist);
    r.estimates = soft_knn_estimates(y, m, r.k, idx, dist, r.beta);
    r.score = regression_evaluation(y, r.estimates);
    return r;
}

// SKS (SPEC 3.4): the criterion on each feature alone, beta <= 0 meaning the default computed
// on that feature. Parallel over features; every feature's score is computed by one thread.
template <class T>
std::vector<double> single_feature_scores(const MatrixRef<T>& X, const double* y,
                                          Index n_neighbors, double beta, int threads) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    std::vector<double> scores(static_cast<std::size_t>(n));
    const int nt = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n)));
    struct Scratch {
        std::vector<double> row, dist, col, p;
        std::vector<Index> idx;
    };
    // Allocated before the region: nothing inside it may throw.
    std::vector<Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) {
        s.row.resize(static_cast<std::size_t>(m));
        s.col.resize(static_cast<std::size_t>(m));
        s.dist.resize(static_cast<std::size_t>(m) * k);
        s.idx.resize(static_cast<std::size_t>(m) * k);
        s.p.resize(static_cast<std::size_t>(k));
    }
#pragma omp parallel num_threads(nt)
    {
        int t = 0;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
#endif
        auto& row = scratch[static_cast<std::size_t>(t)].row;
        auto& dist = scratch[static_cast<std::size_t>(t)].dist;
        auto& col = scratch[static_cast<std::size_t>(t)].col;
        auto& idx = scratch[static_cast<std::size_t>(t)].idx;
        auto& p = scratch[static_cast<std::size_t>(t)].p;
#pragma omp for schedule(dynamic, 1)
        for (Index f = 0; f < n; ++f) {
            for (Index i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = static_cast<double>(X(i, f));
            for (Index i = 0; i < m; ++i) {
                const double xi = col[static_cast<std::size_t>(i)];
                for (Index j = 0; j < m; ++j) {
                    const double d = xi - col[static_cast<std::size_t>(j)];
                    row[static_cast<std::size_t>(j)] = d * d;
                }
                select_k_nearest(row.data(), m, i, k, idx.data() + static_cast<std::size_t>(i) * k,
                                 dist.data() + static_cast<std::size_t>(i) * k);
            }
            const double b = beta > 0.0 ? beta : default_beta(dist);
            scores[static_cast<std::size_t>(f)] =
                soft_knn_evaluation(y, m, k, idx.data(), dist.data(), b, p.data());
        }
    }
    return scores;
}

// ---------------------------------------------------------------------------------------------
// On the shared distance state (feature subsets).

// e of the subset whose squared distances are D + sign * delta(col) (col == nullptr: D itself).
// The state must be built on a one-class layout (ClassLayout::from_codes of zeros), so
// positions are sample indices, and mirrored (DistanceState::mirror()) after its last change.
// beta <= 0 means the default of SPEC 3.3 recomputed on this subset: half the mean squared
// distance to the k nearest. Parallel over samples; the per-sample values are summed in
// sample order, so the score has the same bits for any thread count. If `estimates` is given it
// receives g_hat per sample.
inline void check_subset_state(const DistanceState<double>& state, int k) {
    require(state.layout().n_classes() == 1,
            "knn_subset_score: the distance state must use a one-class layout");
    require(k >= 1 && k <= state.n_samples() - 1,
            "knn_subset_score: k must be in [1, n_samples - 1]");
    state.full_row(0);  // throws here, not inside a parallel region, when not mirrored
}

namespace detail {
inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates) {
    const Index m = state.n_samples();
    std::vector<Index> idx(static_cast<std::size_t>(m) * k);
    std::vector<double> dist(static_cast<std::size_t>(m) * k);
    const int nt = std::max(1, resolve_threads(threads));
    auto neighbours = [&](Index a) {
        state.k_nearest(a, col, sign, k, idx.data() + static_cast<std::size_t>(a) * k,
                        dist.data() + static_cast<std::size_t>(a) * k);
    };
    if (nt == 1) {
        for (Index a = 0; a < m; ++a) neighbours(a);
    } else {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (Index a = 0; a < m; ++a) neighbours(a);
    }
    // D + delta may round a distance of an identical pair to a tiny negative value under
    // removal; the default beta and the kernel only use differences and the mean, so clamp.
    for (double& d : dist) d = std::max(d, 0.0);
    const double b = beta > 0.0 ? beta : default_beta(dist);
    // Positions are sample indices in a one-class layout (the stable sort keeps the order).
    std::vector<double> g = soft_knn_estimates(y, m, k, idx, dist, b);
    const double e = regression_evaluation(y, g);
    if (estimates) *estimates = std::move(g);
    return e;
}
}  // namespace detail

inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates = nullptr) {
    check_subset_state(state, k);
    return detail::knn_subset_score(state, y, k, beta, col, sign, threads, estimates);
}

struct ForwardSelectResult {
    std::vector<Index> selected;  // in selection order
    std::vector<double> scores;   // e after each addition
};

// Forward selection with the criterion above (the thesis' fwdSel): from the empty set, add the
// feature whose subset scores highest (the lower index on ties) until n_select are chosen.
// Candidates of a step are scored in parallel, each by one thread.
template <class T>
ForwardSelectResult knn_forward_select(const MatrixRef<T>& X, const double* y, Index n_select,
                                       Index n_neighbors, double beta, int threads,
                                       const StopHook& stop = {}) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    require(n_select >= 1 && n_select <= n, "n_features_to_select must be in [1, n_features]");
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> zeros = decltype(zeros)::Zero(m);
    DistanceState<double> state(ClassLayout::from_codes(zeros), 1);
    RowMatrix<double> cols = X.transpose().template cast<double>();  // one feature per row
    std::vector<char> chosen(static_cast<std::size_t>(n), 0);
    std::vector<double> scores(static_cast<std::size_t>(n));
    ForwardSelectResult out;
    const int nt = std::max(1, resolve_threads(threads));
    for (Index step = 0; step < n_select; ++step) {
        if (stop && stop()) throw Interrupted();
        state.mirror();
        check_subset_state(state, k);
        const double ninf = -std::numeric_limits<double>::infinity();
        std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (Index f = 0; f < n; ++f) {
            try {  // only bad_alloc can get here; no exception may leave the region
                scores[static_cast<std::size_t>(f)] =
                    chosen[static_cast<std::size_t>(f)]
                        ? ninf
                        : detail::knn_subset_score(state, y, k, beta, cols.row(f).data(), 1.0, 1,
                                                   nullptr);
            } catch (...) {
#pragma omp critical(fastfs_fwd_error)
                if (!error) error = std::current_exception();
            }
        }
        if (error) std::rethrow_exception(error);
        Index best = -1;
        for (Index f = 0; f < n; ++f)
            if (!chosen[static_cast<std::size_t>(f)] &&
                (best < 0 || scores[static_cast<std::size_t>(f)] > scores[static_cast<std::size_t>(best)]))
                best = f;
        chosen[static_cast<std::size_t>(best)] = 1;
        state.add_feature(cols.row(best).data(), 1.0);
        out.selected.push_back(best);
        out.scores.push_back(scores[static_cast<std::size_t>(best)]);
    }
    return out;
}

}  // namespace fastfs
