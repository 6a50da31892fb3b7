// Beam search (SPEC 5.2): forward, keeping the `width` best subsets of every size instead of
// one. A level's candidates are every kept subset plus one feature; a set reached twice is
// scored once (its first occurrence counts); ranks: J descending, J's that tie (driver.hpp)
// by the sorted indices.
#pragma once
#include <algorithm>
#include <set>

#include "driver.hpp"

namespace fastfs {

inline SearchOutcome beam(SearchDriver& d, SearchTarget t, Index width) {
    require(width >= 1, "width: must be >= 1");
    const Index K = t.best ? d.n() : t.k;
    return run_search(d, [&](SearchDriver& d) {
        struct Cand {
            Subset list, key;
            double score;
        };
        std::vector<Cand> level{Cand{{}, {}, 0.0}};
        for (Index s = 1; s <= K; ++s) {
            d.begin_round();
            std::vector<Cand> next;
            std::set<Subset> seen;
            for (const Cand& c : level) {
                d.reset(c.list);
                const Subset outs = d.outside();
                Subset fresh;  // candidates whose set has not been met at this level
                for (Index x : outs) {
                    Subset key = c.key;
                    key.insert(std::upper_bound(key.begin(), key.end(), x), x);
                    if (seen.insert(key).second) fresh.push_back(x);
                }
                const std::vector<double> J = d.score_additions(fresh);
                for (std::size_t i = 0; i < fresh.size(); ++i) {
                    Cand n2{c.list, c.key, J[i]};
                    n2.list.push_back(fresh[i]);
                    n2.key.insert(std::upper_bound(n2.key.begin(), n2.key.end(), fresh[i]),
                                  fresh[i]);
                    next.push_back(std::move(n2));
                }
            }
            require(!next.empty(), "beam: no candidate left");
            // Kept one at a time: among the candidates that tie with the best one left, the
            // smallest sorted subset (a sort cannot take a tolerance: ties do not chain).
            level.clear();
            while (static_cast<Index>(level.size()) < width && !next.empty()) {
                std::size_t top = 0;
                for (std::size_t i = 1; i < next.size(); ++i)
                    if (next[i].score > next[top].score) top = i;
                std::size_t pick = top;
                for (std::size_t i = 0; i < next.size(); ++i)
                    if (!beats(next[top].score, next[i].score) && next[i].key < next[pick].key)
                        pick = i;
                level.push_back(std::move(next[pick]));
                next.erase(next.begin() + static_cast<std::ptrdiff_t>(pick));
            }
            if (!(level.front().score > -std::numeric_limits<double>::infinity()) &&
                d.ends_without_finite_move())
                break;  // "auto" / "best": the best record so far is the answer
            require(level.front().score > -std::numeric_limits<double>::infinity(),
                    "criterion: no candidate of this step has a finite value (for j2, j3, "
                    "divergence and bhattacharyya: pass ridge > 0)");
            d.record(level.front().list, level.front().score);
            if (d.stalled()) break;
        }
        return t.best ? d.finish_best() : d.finish(level.front().list, level.front().score);
    });
}

}  // namespace fastfs
