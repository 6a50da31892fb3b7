// The criterion side of "criterion x search" (SPEC 5.1): J maps a feature subset to a number,
// higher is better. A criterion follows the search's current subset S (reset / add / remove)
// so it can score every candidate move of a step against shared state: J(S + x) and J(S - x)
// for a whole list of candidates at once. Criteria without incremental state derive from
// SubsetCriterion, which scores a move by evaluating the moved subset from scratch, candidates
// in parallel when evaluation is thread-safe.
#pragma once
#include <algorithm>
#include <exception>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

using Subset = std::vector<Index>;

class Criterion {
public:
    virtual ~Criterion() = default;

    virtual Index n_features() const = 0;
    // Never rises when a feature is removed (branch and bound relies on it).
    virtual bool monotone() const { return false; }

    // The current subset S (any order; the criterion treats it as a set).
    virtual void reset(const Subset& S) = 0;
    virtual void add(Index x) = 0;
    virtual void remove(Index x) = 0;
    virtual double current() = 0;  // J(S)

    // out[i] = J(S + cands[i]) (cands not in S) / J(S - cands[i]) (cands in S).
    virtual void score_additions(const Subset& cands, double* out) = 0;
    virtual void score_removals(const Subset& cands, double* out) = 0;

    // J of any non-empty subset, from scratch, whatever the state.
    virtual double evaluate(const Subset& subset) = 0;
    // Whether evaluate() may run on several threads at once.
    virtual bool thread_safe() const { return true; }

    int threads() const { return threads_; }
    void set_threads(int n) { threads_ = resolve_threads(n); }

    // The search's stop hook (null: never stop), polled between candidates and chunks of a
    // long scoring or rebuild so that a stop request is seen within one candidate's work. The
    // search driver sets it for its lifetime.
    void set_stop(const StopHook* stop) { stop_ = stop; }
    const StopHook* stop_hook() const { return stop_; }

protected:
    // From the calling thread, outside parallel regions: throws Interrupted on a stop request.
    void poll() const {
        if (stop_ && *stop_ && (*stop_)()) throw Interrupted();
    }

    // Runs one(i) for every candidate i < c: in turn on this thread, polling the stop hook
    // between candidates, when parallel is false, threads_ <= 1 or c < 2; else on threads_
    // threads, a candidate at a time, the first exception rethrown after the region.
    template <class One>
    void for_each_candidate(Index c, bool parallel, One&& one) const {
        if (!parallel || threads_ <= 1 || c < 2) {
            for (Index i = 0; i < c; ++i) {
                poll();
                one(i);
            }
            return;
        }
        RegionErrors errors;
        StopPoll stop(stop_);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
        for (Index i = 0; i < c; ++i) {
            if (stop.stopped()) continue;
            errors.run([&] { one(i); });
        }
        errors.rethrow();
        stop.check();
    }

    int threads_ = 1;
    const StopHook* stop_ = nullptr;
};

// A criterion evaluated from scratch on every subset; the state is the subset itself. Subsets
// are handed to evaluate() sorted, so J is a function of the set: the same set reached by two
// paths gets the same bits.
class SubsetCriterion : public Criterion {
public:
    void reset(const Subset& S) override { S_ = S; }
    void add(Index x) override { S_.push_back(x); }
    void remove(Index x) override { S_.erase(std::find(S_.begin(), S_.end(), x)); }
    double current() override {
        Subset T = S_;
        std::sort(T.begin(), T.end());
        return evaluate(T);
    }

    void score_additions(const Subset& cands, double* out) override {
        score_moves(cands, out, [](Subset& T, Index x) { T.push_back(x); });
    }
    void score_removals(const Subset& cands, double* out) override {
        score_moves(cands, out,
                    [](Subset& T, Index x) { T.erase(std::find(T.begin(), T.end(), x)); });
    }

protected:
    Subset S_;

private:
    template <class Move>
    void score_moves(const Subset& cands, double* out, Move move) {
        for_each_candidate(static_cast<Index>(cands.size()), thread_safe(), [&](Index i) {
            Subset T = S_;
            move(T, cands[static_cast<std::size_t>(i)]);
            std::sort(T.begin(), T.end());
            out[i] = evaluate(T);
        });
    }
};

}  // namespace fastfs
