// Beam search (SPEC 5.2): forward, keeping the `width` best subsets of every size instead of
// one. A level's candidates are every kept subset plus one feature; a set reached twice is
// scored once (its first occurrence counts); ranks: J descending, then the sorted indices.
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
            std::stable_sort(next.begin(), next.end(), [](const Cand& a, const Cand& b) {
                if (a.score != b.score) return a.score > b.score;
                return a.key < b.key;
            });
            require(next.front().score > -std::numeric_limits<double>::infinity(),
                    "criterion: no candidate of this step has a finite value (for j2, j3, "
                    "divergence and bhattacharyya: pass ridge > 0)");
            if (static_cast<Index>(next.size()) > width) next.resize(static_cast<std::size_t>(width));
            level = std::move(next);
            d.record(level.front().list, level.front().score);
        }
        return t.best ? d.finish_best() : d.finish(level.front().list, level.front().score);
    });
}

}  // namespace fastfs
