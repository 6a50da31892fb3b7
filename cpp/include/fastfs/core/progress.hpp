// The one progress report of the core. Every algorithm that runs in steps (a block of query
// samples in a pass, a sample in Simba and RGS, an epoch in G-flip, a subset size in the
// searches, OMP and backward elimination) calls the same hook type between its steps, from the
// calling thread, with what it has: the restart, the 1-based step, the running objective, and
// either its running values (weights, or the pass's per-sample / per-feature result), the
// current subset (feature indices) or the current support (one flag a feature). The hook
// returns true to stop; the algorithm then ends after that step and reports it stopped early.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "types.hpp"

namespace fastfs {

struct Progress {
    Index restart = 0;  // 0 when the run has a single start
    Index step = 0;     // 1-based
    Index done = 0;     // passes: samples (features) finished so far; 0 elsewhere
    double score = std::numeric_limits<double>::quiet_NaN();  // NaN where there is none
    const std::vector<double>* values = nullptr;        // running weights or pass result
    const std::vector<Index>* subset = nullptr;         // the current subset
    const std::vector<std::uint8_t>* support = nullptr;  // the current support

    // A step of a one-pass computation (Relief family, margins, SKS).
    static Progress pass(Index step, Index done, double score, const std::vector<double>* values) {
        Progress p = at(0, step, score);
        p.done = done;
        p.values = values;
        return p;
    }
    // A step of a weight search (Simba, RGS): the weights after the step.
    static Progress weights(Index restart, Index step, double score,
                            const std::vector<double>* w) {
        Progress p = at(restart, step, score);
        p.values = w;
        return p;
    }
    // A step of a subset search (the search driver, OMP, backward elimination).
    static Progress selection(Index restart, Index step, double score,
                              const std::vector<Index>* subset) {
        Progress p = at(restart, step, score);
        p.subset = subset;
        return p;
    }
    // An epoch of a flip search (G-flip): the support after it.
    static Progress flips(Index restart, Index step, double score,
                          const std::vector<std::uint8_t>* support) {
        Progress p = at(restart, step, score);
        p.support = support;
        return p;
    }

private:
    static Progress at(Index restart, Index step, double score) {
        Progress p;
        p.restart = restart;
        p.step = step;
        p.score = score;
        return p;
    }
};
using ProgressHook = std::function<bool(const Progress&)>;

}  // namespace fastfs
