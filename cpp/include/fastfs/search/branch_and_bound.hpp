// Branch and bound (SPEC 5.2) for a criterion that never rises when a feature is removed: the
// search removes features in increasing index order (so every subset of size k is reached by
// one path), scores all children of a node in one batch, visits the best first, and drops a
// node whose J is already below the best complete subset: nothing under it can do better.
// A node that ties with the incumbent is still explored, so ties resolve exactly as in
// exhaustive search (the lexicographically smallest subset among those tied with the best),
// and so is a node whose J is -inf or NaN (no bound: a singular superset of finite subsets).
#pragma once
#include <algorithm>
#include <limits>
#include <numeric>

#include "driver.hpp"

namespace fastfs {

// max_evaluations: once the criterion has been evaluated that often, no further node is
// expanded and the best complete subset found so far is returned with stopped_early (the
// caller warns that it is not proven best); none found by then is an error.
inline SearchOutcome branch_and_bound(
        SearchDriver& d, Index k,
        double max_evaluations = std::numeric_limits<double>::infinity()) {
    const Index n = d.n();
    require(k >= 1 && k <= n, "n_features_to_select: out of range");
    struct Capped {};
    return run_search(d, [&](SearchDriver& d) {
        TieFrontier best;
        auto offer = [&](const Subset& S, double J) {
            Subset key = S;
            std::sort(key.begin(), key.end());
            if (best.offer(key, J)) d.record(best.subset(), best.score());
        };
        // Node: the subset S (all features >= start are still in it), its J.
        auto visit = [&](auto&& self, const Subset& S, Index start, double J) -> void {
            if (static_cast<Index>(S.size()) == k) {
                offer(S, J);
                return;
            }
            if (static_cast<double>(d.evaluations()) >= max_evaluations) throw Capped{};
            const Index to_remove = static_cast<Index>(S.size()) - k;
            Subset cands;
            for (Index x = start; x <= n - to_remove; ++x) cands.push_back(x);
            d.reset(S);
            const std::vector<double> scores = d.score_removals(cands);
            std::vector<std::size_t> order(cands.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
            for (std::size_t i : order) {
                // J = -inf (a singular scatter matrix: more features than samples a class)
                // or NaN bounds nothing below it, since its subsets may be finite: such a
                // node is never dropped (it cost wrong answers where the full set is singular)
                const bool bounds = scores[i] > -std::numeric_limits<double>::infinity();
                if (bounds && !best.empty() && beats(best.max(), scores[i])) continue;
                Subset child = S;
                child.erase(std::find(child.begin(), child.end(), cands[i]));
                self(self, child, cands[i] + 1, scores[i]);
            }
        };
        d.reset_full();
        const double J = d.current();
        const Subset all = d.S();  // a copy: visit() moves the driver's subset
        try {
            visit(visit, all, 0, J);
        } catch (const Capped&) {
            require(!best.empty(),
                    "max_evaluations: reached before any subset of size n_features_to_select "
                    "was complete (raise it, or pass ridge > 0 to a scatter criterion whose "
                    "large subsets are singular: those bound nothing)");
            SearchOutcome out = d.finish(best.subset(), best.score());
            out.stopped_early = true;
            return out;
        }
        return d.finish(best.subset(), best.score());
    });
}

}  // namespace fastfs
