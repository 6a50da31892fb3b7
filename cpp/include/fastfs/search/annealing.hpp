// Simulated annealing over feature subsets as bit masks (SPEC 13.2). Each step proposes one
// random move of the current subset: with a free size, flipping one feature (never emptying
// the subset); with a fixed size k, swapping one feature in for one out. A move that does not
// lower J is taken; one that lowers it by delta is taken with probability exp(-delta / T_t)
// under the step's temperature. Every step is recorded (the subset held after it), so the
// result, the best record, is never worse than the start. One stream of the caller's seed
// drives every draw, so a seed gives the same run whatever the thread count.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/random.hpp"
#include "driver.hpp"

namespace fastfs {

struct AnnealingOptions {
    Index size = 0;                   // fixed subset size; 0: free size
    Index n_iter = 0;                 // steps
    // T_t = T0 cooling^t (geometric), T0 (1 - t / n_iter) (linear) or table[t] (table).
    enum class Schedule { geometric, linear, table } schedule = Schedule::geometric;
    double T0 = 1.0;
    double cooling = 1.0;
    std::vector<double> table;
    bool relative = false;            // T0 is a multiple of the automatic start temperature
    Index n_probes = 32;              // random moves of the start that set the automatic T0
    std::uint64_t seed = 0;
    Subset start;                     // empty: drawn at random
};

namespace detail {

// A proposed move: x leaves (out >= 0) and / or y enters (in >= 0).
struct Move {
    Index out = -1, in = -1;
};

inline Move propose(SearchDriver& d, Rng& rng, bool fixed) {
    const Index n = d.n();
    if (fixed) {
        const Subset inside = d.inside(), outside = d.outside();
        return Move{inside[static_cast<std::size_t>(rng.below(inside.size()))],
                    outside[static_cast<std::size_t>(rng.below(outside.size()))]};
    }
    for (;;) {
        const Index x = static_cast<Index>(rng.below(static_cast<std::uint64_t>(n)));
        if (!d.contains(x)) return Move{-1, x};
        if (d.size() > 1) return Move{x, -1};
    }
}

// J after the move; the driver is left in the moved state (undo() takes it back).
inline double try_move(SearchDriver& d, const Move& m) {
    if (m.in < 0) return d.score_removals({m.out})[0];
    if (m.out >= 0) d.remove(m.out);
    return d.score_additions({m.in})[0];
}
// Completes a move try_move() left half done (a swap's removal is already made).
inline void commit(SearchDriver& d, const Move& m) {
    if (m.in >= 0) d.add(m.in);
    else d.remove(m.out);
}
inline void undo(SearchDriver& d, const Move& m) {
    if (m.in >= 0 && m.out >= 0) d.add(m.out);
}

}  // namespace detail

inline SearchOutcome annealing(SearchDriver& d, const AnnealingOptions& o) {
    const Index n = d.n();
    const bool fixed = o.size > 0;
    require(!fixed || o.size <= n, "n_features_to_select: must be in [1, n_features]");
    require(n >= 2, "X: simulated annealing needs at least 2 features to move between subsets");
    Rng rng(o.seed, 0);
    return run_search(d, [&](SearchDriver& d) {
        Subset start = o.start;
        if (start.empty()) {
            if (fixed) {
                const Subset perm = rng.permutation(n);
                start.assign(perm.begin(), perm.begin() + o.size);
            } else {
                for (Index x = 0; x < n; ++x)
                    if (rng.below(2) == 1) start.push_back(x);
                if (start.empty())
                    start.push_back(static_cast<Index>(rng.below(static_cast<std::uint64_t>(n))));
            }
        }
        d.reset(start);
        double J = d.current();
        d.record(J);
        // A fixed size equal to n leaves no move.
        if (fixed && o.size == n) return d.finish_best();
        double scale = 1.0;
        if (o.relative) {
            // T0 = the mean loss of the probed moves that lose, over ln 2: such a move is
            // taken with probability 1/2 at the start.
            double loss = 0.0;
            Index losing = 0;
            for (Index i = 0; i < o.n_probes; ++i) {
                const detail::Move m = detail::propose(d, rng, fixed);
                const double Jm = detail::try_move(d, m);
                detail::undo(d, m);
                if (std::isfinite(Jm) && std::isfinite(J) && beats(J, Jm)) {
                    loss += J - Jm;
                    ++losing;
                }
            }
            scale = losing > 0 ? loss / static_cast<double>(losing) / std::log(2.0) : 0.0;
        }
        require(o.schedule != AnnealingOptions::Schedule::table ||
                    static_cast<Index>(o.table.size()) == o.n_iter,
                "schedule: needs one temperature per step");
        for (Index step = 0; step < o.n_iter; ++step) {
            double T;
            if (o.schedule == AnnealingOptions::Schedule::table)
                T = o.table[static_cast<std::size_t>(step)];
            else if (o.schedule == AnnealingOptions::Schedule::linear)
                T = o.T0 * (1.0 - static_cast<double>(step) / static_cast<double>(o.n_iter));
            else
                T = o.T0 * std::pow(o.cooling, static_cast<double>(step));
            T *= scale;
            const detail::Move m = detail::propose(d, rng, fixed);
            const double Jm = detail::try_move(d, m);
            const double u = rng.uniform();  // drawn every step: the stream never depends on J
            bool take;
            if (Jm == -std::numeric_limits<double>::infinity())
                take = J == Jm;
            else if (!beats(J, Jm))
                take = true;
            else
                take = T > 0.0 && u < std::exp(-(J - Jm) / T);
            if (take) {
                detail::commit(d, m);
                J = Jm;
            } else {
                detail::undo(d, m);
            }
            d.record(J);
        }
        return d.finish_best();
    });
}

}  // namespace fastfs
