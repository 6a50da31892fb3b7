// The one driver of the stochastic gradient searches over feature weights (Simba, RGS): w
// starts at all ones; a restart visits the samples in a random order drawn from the seed (one
// permutation per pass), calling the algorithm's step on each; restarts run one after another,
// or side by side across threads when nothing needs their steps in order; the restart with the
// largest final score wins (the first of equal scores), and its weights are reported as
// w^2 / max(w^2).
//
// An algorithm supplies only its step, as a type with
//   struct Workspace;                      // default-constructible; one per thread
//   Index n_features() const;
//   double step(Index t, Index s, std::vector<double>& w, Workspace& ws, int row_threads) const;
//       // step t of a restart on sample s, updating w; returns the step's term of the running
//       // objective (NaN: none, e.g. a sample without a hit or a miss); row_threads may split
//       // the step's own work (1 when restarts run side by side)
//   double evaluate(const std::vector<double>& w, int threads, const StopHook& stop) const;
//       // the final score of a restart (stop is empty inside a parallel region)
// and, if it can use the samples still to come (to share a pass over X between queries that
// will run under the same weights), optionally
//   void plan(const std::vector<Index>& order, Workspace& ws) const;
//       // called before the first step of a restart with its visiting order, which outlives
//       // the restart's steps
//
// The progress hook (core/progress.hpp) gets Progress::weights after each step, its score the
// running objective of the restart (the sum of the step terms so far). Results do not depend
// on the thread count: a restart's steps always run in its own order on its own w.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/progress.hpp"
#include "../core/random.hpp"
#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"

namespace fastfs {

// 2^-k with 2^k the power of two just above max |w| (1 when w vanished): w * power_of_two_scale
// has its largest entry in [0.5, 1), so its squares can neither overflow nor vanish, and the
// scaling is exact.
inline double power_of_two_scale(const std::vector<double>& w) {
    const double top = kernels::max_entry<true>(w.data(), static_cast<Index>(w.size()));
    if (!(top > 0.0) || !std::isfinite(top)) return 1.0;
    int k = 0;
    std::frexp(top, &k);
    return std::ldexp(1.0, -k);
}

// w^2 / max(w^2), squared after an exact power-of-two scaling (so weights beyond 1e154 work);
// all zero when w vanished.
inline std::vector<double> normalised_squares(const std::vector<double>& w) {
    const double s = power_of_two_scale(w);
    double top = 0.0;
    for (double x : w) top = std::max(top, (x * s) * (x * s));
    std::vector<double> out(w.size(), 0.0);
    if (top > 0.0)
        for (std::size_t f = 0; f < w.size(); ++f) out[f] = (w[f] * s) * (w[f] * s) / top;
    return out;
}

struct AscentOptions {
    Index n_steps = 0;  // steps per restart; 0 = n_samples (one pass over a permutation)
    int n_restarts = 1;
    // Restarts are numbered from here: restart r runs with the random stream of restart
    // first_restart + r, so a run of restarts a .. b-1 alone gives those restarts of the full
    // run (fastfs.dask runs restarts as separate tasks).
    int first_restart = 0;
    std::uint64_t seed = 0;
    int n_threads = 0;
    std::vector<Index> sample_order;  // non-empty: one run visiting exactly these samples
};

struct AscentResult {
    std::vector<double> weights;  // w^2 / max(w^2) of the winning restart
    std::vector<double> raw;      // its w
    double score = -std::numeric_limits<double>::infinity();  // its final score
    std::vector<double> restart_scores;  // the final score of every restart that ran
    std::vector<double> history;  // its running objective after each of its steps
    int best_restart = 0;
    bool stopped_early = false;   // the progress hook asked to stop
    Index n_iter = 0;             // steps the winning restart took
};

// Checks the options against n_samples samples; returns the steps per restart.
inline Index ascent_steps(const AscentOptions& opt, Index n_samples) {
    require(opt.n_restarts >= 1, "n_restarts must be >= 1");
    require(opt.first_restart >= 0, "first_restart must be >= 0");
    for (Index s : opt.sample_order)
        require_index(s >= 0 && s < n_samples, "sample_order: sample index out of range");
    if (!opt.sample_order.empty()) return static_cast<Index>(opt.sample_order.size());
    return opt.n_steps > 0 ? opt.n_steps : n_samples;
}

// The samples restart r visits: the given order, or a random one from (seed, first_restart + r).
inline std::vector<Index> ascent_order(const AscentOptions& opt, Index n_samples, int r) {
    if (!opt.sample_order.empty()) return opt.sample_order;
    Rng rng(opt.seed, static_cast<std::uint64_t>(opt.first_restart + r));
    return visiting_order(rng, n_samples, ascent_steps(opt, n_samples));
}

namespace detail {
template <class Step, class = void>
struct has_plan : std::false_type {};
template <class Step>
struct has_plan<Step, std::void_t<decltype(std::declval<const Step&>().plan(
                          std::declval<const std::vector<Index>&>(),
                          std::declval<typename Step::Workspace&>()))>> : std::true_type {};

// Step::plan(order, ws) where the algorithm has one.
template <class Step>
void plan(const Step& step, const std::vector<Index>& order, typename Step::Workspace& ws) {
    if constexpr (has_plan<Step>::value) step.plan(order, ws);
}

// Restarts are compared in their own order, the first of equal scores winning, so the result
// is the same however they were scheduled.
inline void keep_if_better(AscentResult& best, int r, double score, std::vector<double>& w,
                           std::vector<double>& history) {
    best.restart_scores.push_back(score);
    if (r != 0 && !(score > best.score)) return;
    best.score = score;
    best.best_restart = r;
    best.weights = normalised_squares(w);
    best.n_iter = static_cast<Index>(history.size());
    best.raw = std::move(w);
    best.history = std::move(history);
}
}  // namespace detail

// Runs the search of `step` over n_samples samples.
template <class Step>
AscentResult gradient_ascent(const Step& step, Index n_samples, const AscentOptions& opt,
                             const StopHook& stop = {}, const ProgressHook& callback = {}) {
    ascent_steps(opt, n_samples);  // validates
    const int threads = resolve_threads(opt.n_threads);
    const int restarts = opt.sample_order.empty() ? opt.n_restarts : 1;
    const std::size_t n = static_cast<std::size_t>(step.n_features());
    AscentResult best;
    // Restarts are independent: without a callback (whose calls must come in order) they run
    // side by side, one per thread, with no synchronisation inside a restart. A restart's
    // result does not depend on the thread that ran it, so neither does the answer.
    if (restarts > 1 && threads > 1 && !callback) {
        std::vector<std::vector<double>> histories(static_cast<std::size_t>(restarts));
        SideBySide out = restarts_side_by_side(
            restarts, threads, stop, [&](int r, auto& keep_going, std::vector<double>& w) {
                typename Step::Workspace ws;
                w.assign(n, 1.0);
                const std::vector<Index> order = ascent_order(opt, n_samples, r);
                detail::plan(step, order, ws);
                std::vector<double>& history = histories[static_cast<std::size_t>(r)];
                history.reserve(order.size());
                double running = 0.0;
                for (std::size_t t = 0; t < order.size(); ++t) {
                    if (!keep_going()) return 0.0;
                    const double u = step.step(static_cast<Index>(t), order[t], w, ws, 1);
                    if (!std::isnan(u)) running += u;
                    history.push_back(running);
                }
                return step.evaluate(w, 1, StopHook{});
            });
        for (int r = 0; r < restarts; ++r)
            detail::keep_if_better(best, r, out.scores[static_cast<std::size_t>(r)],
                                   out.finals[static_cast<std::size_t>(r)],
                                   histories[static_cast<std::size_t>(r)]);
        return best;
    }
    typename Step::Workspace ws;
    for (int r = 0; r < restarts && !best.stopped_early; ++r) {
        std::vector<double> w(n, 1.0), history;
        const std::vector<Index> order = ascent_order(opt, n_samples, r);
        detail::plan(step, order, ws);
        history.reserve(order.size());
        double running = 0.0;
        for (std::size_t t = 0; t < order.size(); ++t) {
            if (stop && stop()) throw Interrupted();
            const double u = step.step(static_cast<Index>(t), order[t], w, ws, threads);
            if (!std::isnan(u)) running += u;
            history.push_back(running);
            if (callback &&
                callback(Progress::weights(r, static_cast<Index>(t) + 1, running, &w))) {
                best.stopped_early = true;
                break;
            }
        }
        const double score = step.evaluate(w, threads, stop);
        detail::keep_if_better(best, r, score, w, history);
    }
    return best;
}

}  // namespace fastfs
