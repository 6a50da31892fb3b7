// Floating searches SFFS and SFBS (SPEC 5.2): after every step of the main direction, steps in
// the other direction are taken while they beat the best subset seen of the size they reach.
// The best subset of every size is remembered, and a main step that lands below it jumps to it,
// so every backtrack strictly improves some size's best and the search cannot loop. The greedy
// path (sfs / sbs) is followed alongside, so no size ends below it.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "driver.hpp"

namespace fastfs {

namespace detail {

struct BestBySize {
    std::vector<double> score;
    std::vector<Subset> subset;
    explicit BestBySize(Index n)
        : score(static_cast<std::size_t>(n) + 1, -std::numeric_limits<double>::infinity()),
          subset(static_cast<std::size_t>(n) + 1) {}
};

// Incremental criteria compute the same set's J along different paths (D accumulated in a
// different order), which can differ in the last bits. A gain must beat the best by more than
// a tie (driver.hpp), so rounding never passes for an improvement and sends the search back
// and forth between one set's two roundings.
inline bool improves(double J, double best) { return beats(J, best); }
inline bool falls_short(double J, double best) { return beats(best, J); }

// After a main step to S with value J: remember S if it is the best of its size, jump to the
// remembered one if S is worse; returns J of the subset the search continues from.
inline double settle(SearchDriver& d, BestBySize& best, double J) {
    const auto s = static_cast<std::size_t>(d.size());
    if (improves(J, best.score[s])) {
        best.score[s] = J;
        best.subset[s] = d.S();
    } else if (falls_short(J, best.score[s])) {
        d.reset(best.subset[s]);
        J = best.score[s];
    }
    return J;
}

// forward = true: SFFS (main step adds, backtracking removes); false: SFBS.
inline SearchOutcome floating(SearchDriver& d, SearchTarget t, bool forward) {
    const Index n = d.n();
    const Index K = t.best ? (forward ? n : 1) : t.k;
    return run_search(d, [&](SearchDriver& d) {
        BestBySize best(n);
        double J = 0.0;
        if (forward) {
            d.reset({});
        } else {
            d.reset_full();
            J = d.current();
            best.score[static_cast<std::size_t>(n)] = J;
            best.subset[static_cast<std::size_t>(n)] = d.S();
            d.record(J);
        }
        // The plain greedy path (sfs for SFFS, sbs for SFBS) is followed too, one step each
        // time the main step reaches a size for the first time, and its subset is that size's
        // first best: floating alone can be worse than greedy (a better subset of size s need
        // not grow into a better one of size s + 1), with it never at any size.
        Subset chain = d.S();
        // "auto" stops only once the greedy path has stalled too (a step of it that did not
        // gain, the rule sfs / sbs stop by): the floating search's better subsets of a size
        // can make its own rounds stall early (MNIST 0-3, 784 features: SFFS stopped at 5
        // features and 0.874 where sfs went on to 22 and 0.987), and so its answer is never
        // worse than sfs's / sbs's with "auto".
        // (the greedy path's test is sfs's / sbs's: a step against the best of the path before
        // it)
        double chain_best = forward ? -std::numeric_limits<double>::infinity() : J;
        bool chain_stalled = false;
        auto chain_moved = [&](double Jc) {
            if (!d.gains(Jc, chain_best)) chain_stalled = true;
            chain_best = std::max(chain_best, Jc);
        };
        auto sorted_set = [](Subset s) {
            std::sort(s.begin(), s.end());
            return s;
        };
        auto main_step = [&] {
            const bool new_size = d.size() == static_cast<Index>(chain.size());
            const bool on_chain = new_size && sorted_set(d.S()) == sorted_set(chain);
            if (new_size && !on_chain) {
                const Subset here = d.S();
                d.reset(chain);
                const auto [c, Jc] =
                    forward ? d.best_addition(d.outside()) : d.best_removal(d.inside());
                if (forward) d.add(c);
                else d.remove(c);
                chain = d.S();
                chain_moved(Jc);
                best.score[chain.size()] = Jc;
                best.subset[chain.size()] = chain;
                d.record(Jc);
                d.reset(here);
            }
            const auto [x, Jx] = forward ? d.best_addition(d.outside()) : d.best_removal(d.inside());
            if (forward) d.add(x);
            else d.remove(x);
            if (on_chain) {
                chain = d.S();
                chain_moved(Jx);
            }
            J = settle(d, best, Jx);
            d.record(J);
        };
        // Backtracking continues while it strictly beats the best of the size it reaches.
        auto back_step = [&]() -> bool {
            if (forward ? d.size() <= 1 : d.size() >= n) return false;
            // Not pick(): a conditional step with no finite move (every one singular) is no
            // step, not an error.
            const Subset cands = forward ? d.inside() : d.outside();
            const std::vector<double> scores =
                forward ? d.score_removals(cands) : d.score_additions(cands);
            const std::size_t i = first_of_max(scores);
            const Index x = cands[i];
            const double Jx = scores[i];
            const auto s = static_cast<std::size_t>(d.size() + (forward ? -1 : 1));
            if (!improves(Jx, best.score[s])) return false;
            if (forward) d.remove(x);
            else d.add(x);
            best.score[s] = Jx;
            best.subset[s] = d.S();
            J = Jx;
            d.record(J);
            return true;
        };
        while (d.size() != K) {
            d.begin_round();
            main_step();
            if (d.size() == K) {
                // the last round is not chosen if it stalled, as any other (sfs / sbs's rule)
                if (chain_stalled) d.stalled();
                break;
            }
            while (back_step()) {
            }
            if (chain_stalled && d.stalled()) break;
        }
        return t.best ? d.finish_best() : d.finish(d.S(), J);
    });
}

}  // namespace detail

inline SearchOutcome sffs(SearchDriver& d, SearchTarget t) { return detail::floating(d, t, true); }
inline SearchOutcome sfbs(SearchDriver& d, SearchTarget t) { return detail::floating(d, t, false); }

}  // namespace fastfs
