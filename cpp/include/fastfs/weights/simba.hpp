// Simba (SPEC 2.5): stochastic gradient ascent on the margin evaluation e(w) over feature
// weights. Each step takes one sample, finds its nearest hit and miss under the current w (one
// weighted distance row, computed in parallel), and moves w along the gradient of u(theta).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../criteria/margin.hpp"
#include "../neighbours/gram_screen.hpp"
#include "../neighbours/finder.hpp"
#include "../neighbours/grouped_rows.hpp"
#include "../core/random.hpp"
#include "ascent.hpp"

namespace fastfs {

namespace detail {
// The Simba update of every weight, w_f += c (a_f^2 inv_m - b_f^2 inv_h) (w_f down) with
// a = x - nm, b = x - nh, in one vectorised pass; returns whether any weight changed.
template <class T>
FASTFS_SIMD_CLONES bool simba_update(const T* __restrict x, const T* __restrict nh,
                                     const T* __restrict nm, Index n, double c, double inv_m,
                                     double inv_h, double down, double* __restrict w) {
    int moved = 0;
#pragma omp simd reduction(| : moved)
    for (Index f = 0; f < n; ++f) {
        const double a = static_cast<double>(x[f]) - static_cast<double>(nm[f]);
        const double b = static_cast<double>(x[f]) - static_cast<double>(nh[f]);
        const double before = w[f];
        const double after = before + c * (a * a * inv_m - b * b * inv_h) * (before * down);
        w[f] = after;
        moved |= after != before;
    }
    return moved != 0;
}
}  // namespace detail

struct SimbaOptions : AscentOptions {
    SimbaOptions() { n_restarts = 5; }
    UtilitySpec utility;
    // Multiplies every step. A caller that ran Simba on X * 2^-k (to keep squared distances in
    // range) passes 2^k with the linear utility: the step has the units of X, so this gives bit
    // for bit the trajectory of w on X itself.
    double step_scale = 1.0;
};

// The driver (ascent.hpp) runs the restarts; the running objective of a restart is the sum of
// u(theta) over the samples visited so far, its final score e(w / max|w|).
using SimbaResult = AscentResult;

template <class T>
class Simba {
public:
    Simba(const MatrixRef<T>& X, const Labels& codes, SimbaOptions opt)
        : X_(X), codes_(codes), opt_(std::move(opt)), threads_(resolve_threads(opt_.n_threads)),
          grouped_(X, codes),
          finder_(grouped_.active ? MatrixRef<T>(grouped_.X) : X,
                  grouped_.active ? Labels(grouped_.codes) : codes) {
        require(X.rows() == codes.size(), "X and y have different numbers of samples");
        require(opt_.utility.kind != Utility::zero_one,
                "utility: 'zero_one' has no gradient; Simba accepts 'linear' or 'sigmoid'");
        require(opt_.n_steps >= 0, "n_iter must be >= 1");
        ascent_steps(opt_, X.rows());
    }

    SimbaResult run(const StopHook& stop = {}, const ProgressHook& callback = {}) const {
        return gradient_ascent(*this, X_.rows(), opt_, stop, callback);
    }

    // One Simba step on sample s (public so tests can follow the algorithm step by step).
    // Returns u(theta) of the sample, or NaN when it has no hit or no miss (no update).
    double step(Index s, std::vector<double>& w) { return step(0, s, w, ws_, threads_); }

    // The same step with its own work space, the distance row split over `row_threads`.
    struct Workspace {
        typename NeighbourFinder<T>::Scratch scratch;
        typename NeighbourFinder<T>::PrefixState prefix;
        std::vector<double> w2;
        // Queries shared while the weights stand still (see step()): the restart's order, the
        // answers for its steps ahead_t0 .. ahead_t0 + ahead_n - 1 under the weights ahead_w2,
        // and whether the last step left w unchanged.
        const std::vector<Index>* order = nullptr;
        std::vector<double> ahead_w2;
        HitMiss ahead[4];
        Index ahead_t0 = 0;
        int ahead_n = 0;
        bool still = false;
        // Every sample's answer under the weights all_w2 (one blocked Gram pass), once the
        // weights stood still for still_run >= gram_after steps.
        std::vector<HitMiss> all;
        std::vector<double> all_w2;
        bool all_valid = false;
        Index still_run = 0, gram_after = 8, served = 0;
    };

    // The driver's hook (ascent.hpp): the samples of the restart's steps.
    void plan(const std::vector<Index>& order, Workspace& ws) const {
        ws.order = &order;
        ws.ahead_n = 0;
        ws.still = false;
        ws.all_valid = false;
        ws.still_run = 0;
    }
    double step(Index t, Index s, std::vector<double>& w, Workspace& ws,
                int row_threads) const {
        const Index n = X_.cols();
        // The distances are taken under v = w * 2^-k, max |v| in [0.5, 1) (exact scaling): w
        // grows with the units of X, and its squares would overflow beyond 1e154. Distances
        // under w are 2^k times those under v, so the step below is the same, bit for bit.
        const double down = power_of_two_scale(w), up = 1.0 / down;
        ws.w2.resize(static_cast<std::size_t>(n));
        kernels::scaled_squares(w.data(), n, down, ws.w2.data());
        HitMiss hm;
        if (!shared_query(t, s, ws, row_threads, hm)) {
            finder_.prepare(ws.w2.data(), ws.scratch);
            // The pruned query on one thread whenever it applies: it skips most of the row
            // (Simba's weights concentrate), which a split of the full row over two threads
            // does not make up for (1000 x 300, one restart, n_jobs=2: 62 ms against 24 ms
            // on one thread), least of all when the other core is busy.
            const Index q = finder_row(s);
            if (!finder_.query_prefix(q, ws.w2.data(), ws.scratch, ws.prefix, 1, hm))
                hm = finder_.query_parallel(q, ws.w2.data(), ws.scratch, row_threads);
            hm = lifted(hm, s, ws.w2.data());
        }
        if (hm.hit < 0 || hm.miss < 0) {
            ws.still = true;
            ++ws.still_run;
            return std::numeric_limits<double>::quiet_NaN();
        }
        const double dh = std::sqrt(hm.hit_d), dm = std::sqrt(hm.miss_d);  // under v
        const double theta = 0.5 * (dm - dh) * up;
        const double half_slope = 0.5 * opt_.utility.derivative(theta) * opt_.step_scale;
        const T* x = X_.row(s).data();
        const T* nh = X_.row(hm.hit).data();
        const T* nm = X_.row(hm.miss).data();
        // A term whose distance is zero (a duplicate neighbour) is skipped (SPEC 1.4).
        const double inv_m = dm > 0.0 ? 1.0 / dm : 0.0, inv_h = dh > 0.0 ? 1.0 / dh : 0.0;
        const bool moved =
            detail::simba_update(x, nh, nm, n, half_slope, inv_m, inv_h, down, w.data());
        ws.still = !moved;
        ws.still_run = moved ? 0 : ws.still_run + 1;
        return opt_.utility(theta);
    }

    // e(w / max|w|): the evaluation of the weights as reported (their square roots).
    double evaluate(const std::vector<double>& w) const { return evaluate(w, threads_); }
    double evaluate(const std::vector<double>& w, int threads, const StopHook& = {}) const {
        std::vector<double> v = normalised_squares(w);
        for (auto& x : v) x = std::sqrt(x);
        return utility_sum(margins_by_query(X_, codes_, v, threads, {}, {}, nullptr, {}, &grouped_),
                           opt_.utility);
    }

    Index n_features() const { return X_.cols(); }

private:
    // Step t's neighbours when they can come from a pass shared with the steps after it: the
    // weights of step t (ws.w2) are those its answer was computed under, or the last step left
    // w unchanged (a step whose update is below the rounding of w, as on data of tiny
    // magnitude, where the linear step has the units of X), so that the next steps are likely
    // to query under these weights too; then steps t .. t + 3 are queried in one pass over X
    // (query_samples(), whose answers are query()'s, bit for bit). Returns false when the
    // step must query alone (no order known, a row split over threads, weights that move).
    bool shared_query(Index t, Index s, Workspace& ws, int row_threads, HitMiss& hm) const {
        if (ws.all_valid) {
            if (ws.all_w2 == ws.w2) {
                hm = ws.all[static_cast<std::size_t>(s)];
                ++ws.served;
                return true;
            }
            // The weights moved: a pass that served fewer than a quarter of the samples waits
            // for twice the run of still steps before the next one.
            ws.all_valid = false;
            if (4 * ws.served < X_.rows()) ws.gram_after *= 2;
        }
        if (ws.ahead_n > 0 && t >= ws.ahead_t0 && t < ws.ahead_t0 + ws.ahead_n &&
            ws.ahead_w2 == ws.w2) {
            hm = ws.ahead[t - ws.ahead_t0];
            return true;
        }
        ws.ahead_n = 0;
        if (!ws.still || !ws.order) return false;
        // (Bounded, so that a pass between two polls of the stop hook stays about a second.)
        const double work = static_cast<double>(X_.rows()) * static_cast<double>(X_.rows()) *
                            static_cast<double>(X_.cols());
        if (ws.still_run >= ws.gram_after && work <= kSharedPassWork) {
            // Long still: the answers of every sample from one blocked Gram pass (the
            // exhaustive scan's, bit for bit, as the finder's are).
            if (gram_nearest_hit_miss(grouped_, X_, codes_, ws.w2.data(), row_threads, ws.all)) {
                ws.all_valid = true;
                ws.all_w2 = ws.w2;
                ws.served = 1;
                hm = ws.all[static_cast<std::size_t>(s)];
                return true;
            }
            ws.gram_after = std::numeric_limits<Index>::max();  // the screen cannot take X
        }
        if (row_threads > 1) return false;
        const std::vector<Index>& order = *ws.order;
        if (t < 0 || t >= static_cast<Index>(order.size()) || order[static_cast<std::size_t>(t)] != s)
            return false;
        const int rows = static_cast<int>(std::min<Index>(4, static_cast<Index>(order.size()) - t));
        Index rows_of[4];
        for (int r = 0; r < rows; ++r) rows_of[r] = finder_row(order[static_cast<std::size_t>(t + r)]);
        finder_.prepare(ws.w2.data(), ws.scratch);
        finder_.query_samples(rows_of, rows, ws.w2.data(), ws.scratch, ws.ahead);
        for (int r = 0; r < rows; ++r)
            ws.ahead[r] = lifted(ws.ahead[r], order[static_cast<std::size_t>(t + r)], ws.w2.data());
        ws.ahead_w2 = ws.w2;
        ws.ahead_t0 = t;
        ws.ahead_n = rows;
        hm = ws.ahead[0];
        return true;
    }

    static constexpr double kSharedPassWork = 4e9;  // multiply-adds of a shared Gram pass

    // The finder searches one row per group of equal rows of a class when at least an eighth
    // of the samples are copies (grouped_rows.hpp): sample s is its row finder_row(s), and an
    // answer in the finder's rows becomes s's by lifted().
    Index finder_row(Index s) const { return grouped_.active ? grouped_.group_of(s) : s; }
    HitMiss lifted(const HitMiss& hm, Index s, const double* w2) const {
        return grouped_.active ? grouped_.lift(hm, s, X_, w2) : hm;
    }

    MatrixRef<T> X_;
    Labels codes_;
    SimbaOptions opt_;
    int threads_;
    GroupedRows<T> grouped_;
    NeighbourFinder<T> finder_;  // holds references to grouped_'s rows: Simba is not copied

public:
    Simba(const Simba&) = delete;
    Simba& operator=(const Simba&) = delete;

private:
    Workspace ws_;  // of the public step()
};

}  // namespace fastfs
