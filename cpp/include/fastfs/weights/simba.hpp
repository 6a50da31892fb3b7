// Simba (SPEC 2.5): stochastic gradient ascent on the margin evaluation e(w) over feature
// weights. Each step takes one sample, finds its nearest hit and miss under the current w (one
// weighted distance row, computed in parallel), and moves w along the gradient of u(theta).
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../criteria/margin.hpp"
#include "../neighbours/finder.hpp"
#include "../core/random.hpp"
#include "restarts.hpp"

namespace fastfs {

struct SimbaOptions {
    UtilitySpec utility;
    Index n_iter = 0;  // steps per restart; 0 = n_samples (one pass over a permutation)
    int n_restarts = 5;
    // Restarts are numbered from here: restart r runs with the random stream (and, for G-flip,
    // the start) of restart first_restart + r, so a run of restarts a .. b-1 alone gives those
    // restarts of the full run (fastfs.dask runs restarts as separate tasks).
    int first_restart = 0;
    std::uint64_t seed = 0;
    int n_threads = 0;
    std::vector<Index> sample_order;  // non-empty: one run visiting exactly these samples
    // Multiplies every step. A caller that ran Simba on X * 2^-k (to keep squared distances in
    // range) passes 2^k with the linear utility: the step has the units of X, so this gives bit
    // for bit the trajectory of w on X itself.
    double step_scale = 1.0;
};

// The progress hook (core/progress.hpp) gets Progress::weights after each step: the score is
// the sum of u(theta) over the samples visited so far in this restart.

struct SimbaResult {
    std::vector<double> weights;         // w^2 / max(w^2) of the winning restart
    double score = -std::numeric_limits<double>::infinity();  // e(w / max|w|)
    std::vector<double> restart_scores;  // e of every restart that finished
    int best_restart = 0;
    bool stopped_early = false;
};

template <class T>
class Simba {
public:
    Simba(const MatrixRef<T>& X, const Labels& codes, SimbaOptions opt)
        : X_(X), codes_(codes), opt_(std::move(opt)), threads_(resolve_threads(opt_.n_threads)),
          finder_(X, codes) {
        require(X.rows() == codes.size(), "X and y have different numbers of samples");
        require(opt_.utility.kind != Utility::zero_one,
                "utility: 'zero_one' has no gradient; Simba accepts 'linear' or 'sigmoid'");
        require(opt_.n_restarts >= 1, "n_restarts must be >= 1");
        require(opt_.n_iter >= 0, "n_iter must be >= 1");
        for (Index s : opt_.sample_order)
            require_index(s >= 0 && s < X.rows(), "sample_order: sample index out of range");
    }

    SimbaResult run(const StopHook& stop = {}, const ProgressHook& callback = {}) {
        const int restarts = opt_.sample_order.empty() ? opt_.n_restarts : 1;
        // Restarts are independent: without a callback (whose calls must come in order) they run
        // side by side, one per thread, with no synchronisation inside a restart. A restart's
        // result does not depend on the thread that ran it, so neither does the answer.
        if (restarts > 1 && threads_ > 1 && !callback) return run_side_by_side(restarts, stop);
        SimbaResult best;
        for (int r = 0; r < restarts && !best.stopped_early; ++r) {
            std::vector<double> w(static_cast<std::size_t>(X_.cols()), 1.0);
            best.stopped_early = pass(order_of(r), w, r, ws_, threads_, stop, callback);
            keep_if_better(best, r, evaluate(w), w);
        }
        return best;
    }

    // One Simba step on sample s (public so tests can follow the algorithm step by step).
    // Returns u(theta) of the sample, or NaN when it has no hit or no miss (no update).
    double step(Index s, std::vector<double>& w) { return step(s, w, ws_, threads_); }

    // The same step with its own work space, the distance row split over `row_threads`.
    struct Workspace {
        typename NeighbourFinder<T>::Scratch scratch;
        std::vector<double> w2;
    };
    double step(Index s, std::vector<double>& w, Workspace& ws, int row_threads) const {
        const Index n = X_.cols();
        // The distances are taken under v = w * 2^-k, max |v| in [0.5, 1) (exact scaling): w
        // grows with the units of X, and its squares would overflow beyond 1e154. Distances
        // under w are 2^k times those under v, so the step below is the same, bit for bit.
        const double down = power_of_two_scale(w), up = 1.0 / down;
        ws.w2.resize(static_cast<std::size_t>(n));
        for (Index f = 0; f < n; ++f) {
            const double v = w[static_cast<std::size_t>(f)] * down;
            ws.w2[static_cast<std::size_t>(f)] = v * v;
        }
        finder_.prepare(ws.w2.data(), ws.scratch);
        const HitMiss hm = finder_.query_parallel(s, ws.w2.data(), ws.scratch, row_threads);
        if (hm.hit < 0 || hm.miss < 0) return std::numeric_limits<double>::quiet_NaN();
        const double dh = std::sqrt(hm.hit_d), dm = std::sqrt(hm.miss_d);  // under v
        const double theta = 0.5 * (dm - dh) * up;
        const double half_slope = 0.5 * opt_.utility.derivative(theta) * opt_.step_scale;
        const T* x = X_.row(s).data();
        const T* nh = X_.row(hm.hit).data();
        const T* nm = X_.row(hm.miss).data();
        // A term whose distance is zero (a duplicate neighbour) is skipped (SPEC 1.4).
        const double inv_m = dm > 0.0 ? 1.0 / dm : 0.0, inv_h = dh > 0.0 ? 1.0 / dh : 0.0;
        for (Index f = 0; f < n; ++f) {
            const double a = static_cast<double>(x[f]) - static_cast<double>(nm[f]);
            const double b = static_cast<double>(x[f]) - static_cast<double>(nh[f]);
            auto& wf = w[static_cast<std::size_t>(f)];
            wf += half_slope * (a * a * inv_m - b * b * inv_h) * (wf * down);
        }
        return opt_.utility(theta);
    }

    // e(w / max|w|): the evaluation of the weights as reported (their square roots).
    double evaluate(const std::vector<double>& w) const { return evaluate(w, threads_); }
    double evaluate(const std::vector<double>& w, int threads) const {
        std::vector<double> v = normalised_squares(w);
        for (auto& x : v) x = std::sqrt(x);
        return utility_sum(margins_by_query(X_, codes_, v, threads), opt_.utility);
    }

private:
    std::vector<Index> order_of(int restart) const {
        if (!opt_.sample_order.empty()) return opt_.sample_order;
        Rng rng(opt_.seed, static_cast<std::uint64_t>(opt_.first_restart + restart));
        const Index m = X_.rows();
        return visiting_order(rng, m, opt_.n_iter > 0 ? opt_.n_iter : m);
    }

    // Returns true when the callback asked to stop.
    bool pass(const std::vector<Index>& order, std::vector<double>& w, int restart, Workspace& ws,
              int row_threads, const StopHook& stop, const ProgressHook& callback) const {
        double running = 0.0;
        for (std::size_t t = 0; t < order.size(); ++t) {
            if (stop && stop()) throw Interrupted();
            const double u = step(order[t], w, ws, row_threads);
            if (!std::isnan(u)) running += u;
            if (callback && callback(Progress::weights(restart, static_cast<Index>(t) + 1, running, &w)))
                return true;
        }
        return false;
    }

    SimbaResult run_side_by_side(int restarts, const StopHook& stop) {
        const SideBySide out = restarts_side_by_side(
            restarts, threads_, stop, [&](int r, auto& keep_going, std::vector<double>& w) {
                Workspace ws;
                w.assign(static_cast<std::size_t>(X_.cols()), 1.0);
                const std::vector<Index> order = order_of(r);
                for (std::size_t t = 0; t < order.size(); ++t) {
                    if (!keep_going()) return 0.0;
                    step(order[t], w, ws, 1);
                }
                return evaluate(w, 1);
            });
        SimbaResult best;
        for (int r = 0; r < restarts; ++r)
            keep_if_better(best, r, out.scores[static_cast<std::size_t>(r)],
                           out.finals[static_cast<std::size_t>(r)]);
        return best;
    }

    MatrixRef<T> X_;
    Labels codes_;
    SimbaOptions opt_;
    int threads_;
    NeighbourFinder<T> finder_;
    Workspace ws_;  // of the sequential path and the public step()
};

}  // namespace fastfs
