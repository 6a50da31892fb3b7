// RGS (SPEC 3.3): stochastic gradient ascent on the soft kNN regression evaluation e(w) over
// feature weights. Each step takes one sample, finds its k nearest other samples under the
// current weights (one weighted distance row, split across threads when it is long) and moves
// w along the gradient of that sample's term of e (SPEC 3.2), the neighbour set held fixed.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../neighbours/knn_query.hpp"
#include "../core/parallel.hpp"
#include "../core/random.hpp"
#include "ascent.hpp"
#include "../core/types.hpp"

namespace fastfs {

namespace detail {
// acc[f] += c (x_f - z_f)^2 (one neighbour's part of the RGS gradient), vectorised.
template <class T>
FASTFS_SIMD_CLONES void add_scaled_sq_diff(const T* __restrict x, const T* __restrict z, Index n,
                                           double c, double* __restrict acc) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double d = static_cast<double>(x[f]) - static_cast<double>(z[f]);
        acc[f] += c * (d * d);
    }
}

// grad[f] = scale w[f] acc[f].
FASTFS_SIMD_CLONES inline void scaled_products(const double* __restrict w,
                                               const double* __restrict acc, Index n,
                                               double scale, double* __restrict grad) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) grad[f] = scale * w[f] * acc[f];
}

// w[f] += eta g[f].
FASTFS_SIMD_CLONES inline void add_scaled(const double* __restrict g, Index n, double eta,
                                          double* __restrict w) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) w[f] += eta * g[f];
}
}  // namespace detail

struct RgsOptions : AscentOptions {
    Index n_neighbors = 1;  // k = min(n_neighbors, m - 1)
    double beta = 0.0;      // <= 0: the default of SPEC 3.3 (computed at w = 1)
    std::vector<double> eta;  // learning rate of step t = 0, 1, ...; one entry per step
    bool score = true;  // false: skip e(w) of each restart (benchmarks time the steps alone)
};

// The driver (ascent.hpp) runs the restarts; the running objective of a restart is the sum of
// -(1/2)(y - g_hat)^2 over the samples visited so far (each before its step), its final score
// e(w) of the raw w.
struct RgsResult : AscentResult {
    double beta = 0.0;
    int k = 0;
};

template <class T>
class Rgs {
public:
    Rgs(const MatrixRef<T>& X, const double* y, RgsOptions opt)
        : X_(X), y_(y), opt_(std::move(opt)), threads_(resolve_threads(opt_.n_threads)),
          query_(X) {
        const Index m = X.rows();
        k_ = effective_k(opt_.n_neighbors, m);
        require(opt_.n_steps >= 0, "n_steps must be >= 0");
        require(static_cast<Index>(opt_.eta.size()) >= ascent_steps(opt_, m),
                "learning_rate: need one value per step");
        for (double e : opt_.eta)
            require(std::isfinite(e) && e >= 0.0, "learning_rate: values must be finite and >= 0");
        beta_ = opt_.beta;
        require(!(beta_ > 0.0) || std::isfinite(beta_), "beta must be finite");
    }

    double beta() const { return beta_; }  // <= 0 until run() computed the default
    int k() const { return k_; }

    RgsResult run(const StopHook& stop = {}, const ProgressHook& callback = {}) {
        if (!(beta_ > 0.0)) {
            std::vector<double> ones(static_cast<std::size_t>(X_.cols()), 1.0);
            std::vector<Index> idx;
            std::vector<double> dist;
            all_k_nearest(query_, ones.data(), k_, threads_, idx, dist, stop);
            beta_ = default_beta(dist);
            require(beta_ > 0.0,
                    "beta: the default (half the mean squared distance to the k nearest "
                    "neighbours) is 0 because every sample has k exact duplicates; pass beta > 0");
        }
        RgsResult best;
        static_cast<AscentResult&>(best) = gradient_ascent(*this, X_.rows(), opt_, stop, callback);
        best.beta = beta_;
        best.k = k_;
        return best;
    }

    struct Workspace {
        typename KnnQuery<T>::Scratch scratch;
        std::vector<double> w2, dist, p, acc, grad;
        std::vector<Index> idx;
    };

    // d e_x / d w (SPEC 3.2) of sample s at w, its neighbours found under w; returns g_hat(x).
    double gradient(Index s, const std::vector<double>& w, std::vector<double>& grad,
                    Workspace& ws, int row_threads) const {
        const Index n = X_.cols();
        ws.w2.resize(static_cast<std::size_t>(n));
        ws.dist.resize(static_cast<std::size_t>(k_));
        ws.p.resize(static_cast<std::size_t>(k_));
        ws.idx.resize(static_cast<std::size_t>(k_));
        ws.acc.assign(static_cast<std::size_t>(n), 0.0);
        grad.resize(static_cast<std::size_t>(n));  // every entry written below
        kernels::scaled_squares(w.data(), n, 1.0, ws.w2.data());
        query_.prepare(ws.w2.data(), ws.scratch);
        query_.query(s, ws.w2.data(), k_, ws.scratch, row_threads, ws.idx.data(), ws.dist.data());
        kernel_weights(ws.dist.data(), k_, beta_, ws.p.data());
        double g = 0.0;
        for (int j = 0; j < k_; ++j) g += ws.p[static_cast<std::size_t>(j)] * y_[ws.idx[static_cast<std::size_t>(j)]];
        // sum_j p_j y_j (delta_j - sum_l p_l delta_l) = sum_j p_j (y_j - g) delta_j: one pass
        // over the neighbours, and no cancellation between two large sums.
        const T* xs = X_.row(s).data();
        for (int j = 0; j < k_; ++j) {
            const double c = ws.p[static_cast<std::size_t>(j)] * (y_[ws.idx[static_cast<std::size_t>(j)]] - g);
            if (c == 0.0) continue;
            const T* xj = X_.row(ws.idx[static_cast<std::size_t>(j)]).data();
            detail::add_scaled_sq_diff(xs, xj, n, c, ws.acc.data());
        }
        const double scale = -(2.0 / beta_) * (y_[s] - g);
        detail::scaled_products(w.data(), ws.acc.data(), n, scale, grad.data());
        return g;
    }

    // One RGS step on sample s: w += eta * grad. Returns -(1/2)(y - g_hat)^2 of the sample at
    // the w before the step.
    double step(Index s, std::vector<double>& w, double eta, Workspace& ws, int row_threads) const {
        const double g = gradient(s, w, ws.grad, ws, row_threads);
        detail::add_scaled(ws.grad.data(), static_cast<Index>(w.size()), eta, w.data());
        const double r = y_[s] - g;
        return -0.5 * r * r;
    }

    // e(w) at the raw weights; `stop` must be empty inside a parallel region (all_k_nearest).
    double evaluate(const std::vector<double>& w, int threads, const StopHook& stop = {}) const {
        if (!opt_.score) return std::numeric_limits<double>::quiet_NaN();
        return knn_regression(query_, y_, w.data(), k_, beta_, threads, stop).score;
    }

    // Step t of a restart (the driver's interface): learning rate eta[t].
    double step(Index t, Index s, std::vector<double>& w, Workspace& ws, int row_threads) const {
        return step(s, w, opt_.eta[static_cast<std::size_t>(t)], ws, row_threads);
    }
    Index n_features() const { return X_.cols(); }

private:
    MatrixRef<T> X_;
    const double* y_;
    RgsOptions opt_;
    int threads_;
    KnnQuery<T> query_;
    int k_ = 1;
    double beta_ = 0.0;
};

}  // namespace fastfs
