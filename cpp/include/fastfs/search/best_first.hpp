// Best-first search (SPEC 13.2; Kohavi and John, "Wrappers for feature subset selection",
// 1997, section 3.2): an open list of evaluated subsets ordered by J; each step expands the
// best open subset (every single addition, and optionally every single removal, that gives a
// subset not met before) and the search stops after `patience` expansions in a row whose
// subset does not beat the best expanded so far, at an evaluation budget, or when nothing is
// left to expand. The result is the best subset evaluated.
#pragma once
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "driver.hpp"

namespace fastfs {

struct BestFirstOptions {
    Index max_size = 0;         // largest subset considered (n for "best")
    Index patience = 5;         // expansions without improvement; <= 0: unlimited
    double max_evaluations = std::numeric_limits<double>::infinity();
    bool removals = false;      // expand by single removals too
};

inline SearchOutcome best_first(SearchDriver& d, const BestFirstOptions& o) {
    const Index n = d.n();
    const Index K = o.max_size;
    require(K >= 1 && K <= n, "n_features_to_select: must be in [1, n_features]");
    struct Node {
        Subset list, key;
        double score;
    };
    std::vector<Node> nodes;  // every subset evaluated, in evaluation order
    // The open list: J descending, then the smaller subset, then the smaller sorted subset
    // (the tie rule of the result, applied to exact values; which of two tied subsets is
    // expanded first does not change what is evaluated when patience is unlimited).
    auto cmp = [&](std::size_t a, std::size_t b) {
        const Node& x = nodes[a];
        const Node& y = nodes[b];
        if (x.score != y.score) return x.score > y.score;
        if (x.key.size() != y.key.size()) return x.key.size() < y.key.size();
        return x.key < y.key;
    };
    std::set<std::size_t, decltype(cmp)> open(cmp);
    std::set<Subset> seen;

    // Scores the children of `list` (its key: sorted) that were not met before.
    auto expand = [&](const Subset& list, const Subset& key) {
        d.reset(list);
        Subset adds, removes;
        if (static_cast<Index>(key.size()) < K)
            for (Index x : d.outside()) {
                Subset c = key;
                c.insert(std::upper_bound(c.begin(), c.end(), x), x);
                if (seen.insert(c).second) adds.push_back(x);
            }
        if (o.removals && key.size() > 1)
            for (Index x : key) {
                Subset c = key;
                c.erase(std::find(c.begin(), c.end(), x));
                if (seen.insert(c).second) removes.push_back(x);
            }
        const std::vector<double> ja = d.score_additions(adds);
        const std::vector<double> jr = d.score_removals(removes);
        auto push = [&](Subset child, double J) {
            Subset ckey = child;
            std::sort(ckey.begin(), ckey.end());
            nodes.push_back(Node{std::move(child), std::move(ckey), J});
            open.insert(nodes.size() - 1);
        };
        for (std::size_t i = 0; i < adds.size(); ++i) {
            Subset c = list;
            c.push_back(adds[i]);
            push(std::move(c), ja[i]);
        }
        for (std::size_t i = 0; i < removes.size(); ++i) {
            Subset c = list;
            c.erase(std::find(c.begin(), c.end(), removes[i]));
            push(std::move(c), jr[i]);
        }
    };

    // The best subset evaluated: J within a tie of the largest, then the smaller subset, then
    // the smaller sorted subset.
    auto best_evaluated = [&]() {
        std::size_t top = 0;
        for (std::size_t i = 1; i < nodes.size(); ++i)
            if (nodes[i].score > nodes[top].score) top = i;
        std::size_t best = top;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (beats(nodes[top].score, nodes[i].score)) continue;
            const Node& a = nodes[i];
            const Node& b = nodes[best];
            if (a.key.size() < b.key.size() || (a.key.size() == b.key.size() && a.key < b.key))
                best = i;
        }
        require(nodes[best].score > -std::numeric_limits<double>::infinity(),
                "criterion: no subset evaluated has a finite value (for j2, j3, divergence "
                "and bhattacharyya: pass ridge > 0)");
        return best;
    };

    SearchOutcome out;
    bool stopped = false;
    try {
        expand({}, {});  // the root: every single feature
        double best_expanded = -std::numeric_limits<double>::infinity();
        Index stale = 0;
        while (!open.empty() && static_cast<double>(d.evaluations()) < o.max_evaluations) {
            const std::size_t v = *open.begin();
            open.erase(open.begin());
            const Subset list = nodes[v].list, key = nodes[v].key;
            const double J = nodes[v].score;
            d.record(list, J);
            if (beats(J, best_expanded)) {
                best_expanded = J;
                stale = 0;
            } else {
                ++stale;
            }
            expand(list, key);
            if (o.patience > 0 && stale >= o.patience) break;
        }
    } catch (const SearchDriver::Stopped&) {
        stopped = true;
    }
    const std::size_t b = best_evaluated();
    out = d.finish(nodes[b].list, nodes[b].score);
    out.stopped_early = stopped;
    return out;
}

}  // namespace fastfs
