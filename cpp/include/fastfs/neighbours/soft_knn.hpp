// The soft kNN regression step of RGS, SKS and the kNN-regression subset criterion (SPEC 3.1 -
// 3.4): from k neighbour lists (nearest first) to kernel weights, estimates g_hat and the
// evaluation e = -(1/2) sum (y - g_hat)^2; SKS's single-feature scores (one-dimensional rows,
// the engine's LineNeighbours) and e on the shared distance state (feature subsets). The
// neighbour lists under feature weights come from the k nearest query (knn_query.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/progress.hpp"
#include "../core/types.hpp"
#include "../state/distance_state.hpp"
#include "engine.hpp"

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

// k = min(n_neighbors, m - 1): the neighbour count every function here uses.
inline int effective_k(Index n_neighbors, Index m) {
    require(n_neighbors >= 1, "n_neighbors must be >= 1");
    require(m >= 2, "need at least 2 samples");
    return static_cast<int>(std::min<Index>(n_neighbors, m - 1));
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

// The criterion from every sample's k neighbour lists (nearest first); beta <= 0 asks for the
// default of SPEC 3.3 computed from these distances.
inline KnnRegressionResult soft_knn_result(const double* y, Index m, int k,
                                           const std::vector<Index>& idx,
                                           const std::vector<double>& dist, double beta) {
    KnnRegressionResult r;
    r.k = k;
    r.beta = beta > 0.0 ? beta : default_beta(dist);
    r.estimates = soft_knn_estimates(y, m, k, idx, dist, r.beta);
    r.score = regression_evaluation(y, r.estimates);
    return r;
}

// SKS (SPEC 3.4): the criterion on each feature alone, beta <= 0 meaning the default computed
// on that feature. Parallel over features; every feature's score is computed by one thread.
// `stop` is polled by the calling thread between samples; `callback` gets the scores after
// every step (a group of features; NaN for those not reached) and may end the pass there.
template <class T>
std::vector<double> single_feature_scores(const MatrixRef<T>& X, const double* y,
                                          Index n_neighbors, double beta, int threads,
                                          const StopHook& stop = {},
                                          const ProgressHook& callback = {},
                                          PassStatus* status = nullptr) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    // (The sorted lists of LineNeighbours need an order: no NaN.)
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f)
            require(!std::isnan(static_cast<double>(X(i, f))), "X must not contain NaN");
    std::vector<double> scores(static_cast<std::size_t>(n),
                               std::numeric_limits<double>::quiet_NaN());
    const int nt = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n)));
    struct Scratch {
        std::vector<double> dist, col, p;
        std::vector<Index> idx;
        LineNeighbours line;
    };
    // Allocated before the region: nothing inside it may throw.
    std::vector<Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) {
        s.col.resize(static_cast<std::size_t>(m));
        s.dist.resize(static_cast<std::size_t>(m) * k);
        s.idx.resize(static_cast<std::size_t>(m) * k);
        s.p.resize(static_cast<std::size_t>(k));
        s.line.reserve(m);
    }
    StopPoll poll(stop);
    // Features per step: all of them in one region unless a callback wants progress.
    const Index group = callback ? std::max<Index>(nt, (n + 63) / 64) : n;
    PassStatus done;
    for (Index f0 = 0; f0 < n && !done.stopped_early; f0 += group) {
        const Index f1 = std::min(n, f0 + group);
#pragma omp parallel num_threads(nt)
        {
            const int t = thread_index();
            auto& dist = scratch[static_cast<std::size_t>(t)].dist;
            auto& col = scratch[static_cast<std::size_t>(t)].col;
            auto& idx = scratch[static_cast<std::size_t>(t)].idx;
            auto& p = scratch[static_cast<std::size_t>(t)].p;
            auto& line = scratch[static_cast<std::size_t>(t)].line;
#pragma omp for schedule(dynamic, 1)
            for (Index f = f0; f < f1; ++f) {
                if (poll.stopped()) continue;
                for (Index i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = static_cast<double>(X(i, f));
                line.run(col.data(), m, k, idx.data(), dist.data());
                if (poll.stopped()) continue;
                const double b = beta > 0.0 ? beta : default_beta(dist);
                scores[static_cast<std::size_t>(f)] =
                    soft_knn_evaluation(y, m, k, idx.data(), dist.data(), b, p.data());
            }
        }
        poll.check();
        done.done = f1;
        if (callback && callback(Progress::pass(f0 / group + 1, f1,
                                              std::numeric_limits<double>::quiet_NaN(), &scores)))
            done.stopped_early = f1 < n;
    }
    if (status) *status = done;
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

}  // namespace fastfs
