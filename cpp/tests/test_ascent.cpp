// The gradient-ascent driver of the weight searches (weights/ascent.hpp) with a toy step, against
// the same loop written out here: restarts, visiting orders, the running objective and its
// history, the choice of the best restart, side by side on threads, the progress hook.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fastfs/weights/ascent.hpp"

namespace {

using fastfs::AscentOptions;
using fastfs::AscentResult;
using fastfs::Index;

// A toy step: w[s % n] grows by (s + 1) * rate[t] times the sum of w, so the result depends on
// the order of the samples; sample 0 has no term (NaN). The score favours weight on feature 0.
struct ToyStep {
    Index n = 3;
    std::vector<double> rate;
    int fail_on = -1;  // a sample whose step throws
    struct Workspace {
        int calls = 0;
    };
    Index n_features() const { return n; }
    double step(Index t, Index s, std::vector<double>& w, Workspace& ws, int) const {
        ++ws.calls;
        if (s == fail_on) throw std::runtime_error("step failed");
        double sum = 0.0;
        for (double x : w) sum += x;
        w[static_cast<std::size_t>(s % n)] += static_cast<double>(s + 1) * rate[static_cast<std::size_t>(t)] * sum;
        return s == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(s);
    }
    double evaluate(const std::vector<double>& w, int, const fastfs::StopHook&) const {
        return w[0] - w[1];
    }
};

struct Expected {
    std::vector<double> raw, history, restart_scores;
    double score = -std::numeric_limits<double>::infinity();
    int best = 0;
};

// The driver's contract written out: restart r visits visiting_order(Rng(seed, first + r)),
// w from ones, running sum of the non-NaN terms, the first of the best scores wins.
Expected by_hand(const ToyStep& toy, Index m, const AscentOptions& opt) {
    Expected e;
    const int restarts = opt.sample_order.empty() ? opt.n_restarts : 1;
    for (int r = 0; r < restarts; ++r) {
        std::vector<Index> order = opt.sample_order;
        if (order.empty()) {
            fastfs::Rng rng(opt.seed, static_cast<std::uint64_t>(opt.first_restart + r));
            order = fastfs::visiting_order(rng, m, opt.n_steps > 0 ? opt.n_steps : m);
        }
        std::vector<double> w(static_cast<std::size_t>(toy.n), 1.0), history;
        ToyStep::Workspace ws;
        double running = 0.0;
        for (std::size_t t = 0; t < order.size(); ++t) {
            const double u = toy.step(static_cast<Index>(t), order[t], w, ws, 1);
            if (!std::isnan(u)) running += u;
            history.push_back(running);
        }
        const double score = toy.evaluate(w, 1, {});
        e.restart_scores.push_back(score);
        if (r == 0 || score > e.score) {
            e.score = score;
            e.best = r;
            e.raw = w;
            e.history = history;
        }
    }
    return e;
}

ToyStep toy_for(Index steps) {
    ToyStep toy;
    for (Index t = 0; t < steps; ++t) toy.rate.push_back(0.01 / static_cast<double>(t + 1));
    return toy;
}

void expect_matches(const AscentResult& got, const Expected& want) {
    EXPECT_EQ(got.raw, want.raw);
    EXPECT_EQ(got.history, want.history);
    EXPECT_EQ(got.restart_scores, want.restart_scores);
    EXPECT_EQ(got.score, want.score);
    EXPECT_EQ(got.best_restart, want.best);
    EXPECT_EQ(got.n_iter, static_cast<Index>(want.history.size()));
    EXPECT_FALSE(got.stopped_early);
    double top = 0.0;
    for (double x : want.raw) top = std::max(top, x * x);
    ASSERT_EQ(got.weights.size(), want.raw.size());
    for (std::size_t f = 0; f < want.raw.size(); ++f)
        EXPECT_DOUBLE_EQ(got.weights[f], want.raw[f] * want.raw[f] / top);
}

TEST(GradientAscent, RestartsFollowTheirSeededOrdersAndTheBestWinsForAnyThreadCount) {
    const Index m = 9;
    const ToyStep toy = toy_for(m);
    AscentOptions opt;
    opt.n_restarts = 6;
    opt.seed = 11;
    const Expected want = by_hand(toy, m, opt);
    EXPECT_NE(want.best, 0);  // the toy's restarts differ
    for (int threads : {1, 2, 3}) {
        opt.n_threads = threads;  // 2 and 3: restarts side by side
        expect_matches(fastfs::gradient_ascent(toy, m, opt), want);
    }
}

TEST(GradientAscent, FirstRestartAndStepCountAndAGivenOrder) {
    const Index m = 7;
    const ToyStep toy = toy_for(20);
    AscentOptions opt;
    opt.n_restarts = 2;
    opt.first_restart = 3;
    opt.n_steps = 20;  // more steps than samples: a fresh permutation per pass
    opt.seed = 5;
    expect_matches(fastfs::gradient_ascent(toy, m, opt), by_hand(toy, m, opt));
    AscentOptions given;
    given.n_restarts = 4;  // ignored: one run over the given order
    given.sample_order = {3, 3, 0, 6, 1};
    const AscentResult got = fastfs::gradient_ascent(toy, m, given);
    expect_matches(got, by_hand(toy, m, given));
    EXPECT_EQ(got.restart_scores.size(), 1u);
    // A restart of a run is the same restart run alone from its number.
    AscentOptions all = opt, one = opt;
    all.first_restart = 0;
    all.n_restarts = 5;
    one.first_restart = 4;
    one.n_restarts = 1;
    EXPECT_EQ(fastfs::gradient_ascent(toy, m, all).restart_scores[4],
              fastfs::gradient_ascent(toy, m, one).restart_scores[0]);
}

TEST(GradientAscent, TheProgressHookSeesEveryStepAndCanStop) {
    const Index m = 6;
    const ToyStep toy = toy_for(m);
    AscentOptions opt;
    opt.n_restarts = 3;
    opt.n_threads = 2;  // a callback keeps the restarts in order
    opt.seed = 2;
    const Expected want = by_hand(toy, m, opt);
    std::vector<double> seen;
    std::vector<Index> steps;
    const fastfs::ProgressHook all = [&](const fastfs::Progress& p) {
        EXPECT_NE(p.values, nullptr);
        if (p.restart == want.best) seen.push_back(p.score);
        steps.push_back(p.step);
        return false;
    };
    expect_matches(fastfs::gradient_ascent(toy, m, opt, {}, all), want);
    EXPECT_EQ(seen, want.history);
    EXPECT_EQ(steps.size(), static_cast<std::size_t>(3 * m));
    EXPECT_EQ(steps[static_cast<std::size_t>(m)], 1);
    // Stopping in step 4 of restart 1: restart 1 ends there (its weights after that step are
    // scored), no restart follows.
    const fastfs::ProgressHook stop = [&](const fastfs::Progress& p) {
        return p.restart == 1 && p.step == 4;
    };
    const AscentResult got = fastfs::gradient_ascent(toy, m, opt, {}, stop);
    EXPECT_TRUE(got.stopped_early);
    EXPECT_EQ(got.restart_scores.size(), 2u);
    EXPECT_EQ(got.restart_scores[0], want.restart_scores[0]);
    if (got.best_restart == 1) {
        EXPECT_EQ(got.n_iter, 4);
    }
}

TEST(GradientAscent, ErrorsOfAStepReachTheCallerAndOptionsAreChecked) {
    const Index m = 8;
    ToyStep toy = toy_for(m);
    toy.fail_on = 5;
    AscentOptions opt;
    opt.n_restarts = 4;
    for (int threads : {1, 2}) {
        opt.n_threads = threads;
        EXPECT_THROW(fastfs::gradient_ascent(toy, m, opt), std::runtime_error);
    }
    toy.fail_on = -1;
    opt.n_restarts = 0;
    EXPECT_THROW(fastfs::gradient_ascent(toy, m, opt), std::invalid_argument);
    opt.n_restarts = 1;
    opt.sample_order = {0, 8};
    EXPECT_ANY_THROW(fastfs::gradient_ascent(toy, m, opt));
    // The stop hook interrupts between steps.
    opt.sample_order.clear();
    int polls = 0;
    const fastfs::StopHook stop = [&] { return ++polls > 3; };
    EXPECT_THROW(fastfs::gradient_ascent(toy, m, opt, stop), fastfs::Interrupted);
}

}  // namespace
