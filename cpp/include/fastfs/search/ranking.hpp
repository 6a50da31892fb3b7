// Naive ranking (SPEC 13.1): every feature scored alone in one pass, exactly the candidates of
// sfs's first step (the driver's score_additions from the empty set), then ordered by J with
// the driver's tie rule, and the top k kept.
#pragma once
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "driver.hpp"

namespace fastfs {

struct RankOutcome {
    std::vector<double> scores;  // J({x}) per feature, NaN turned into -inf
    Subset order;                // every feature, best first
    double score = 0.0;          // J of the top k together
    long long n_evaluations = 0;
};

// Features by J descending; a J that ties (driver.hpp) with the best one left goes by feature
// index, so order[0] is the feature sfs adds first. Ties never chain: each group holds the
// values tied with its largest one.
inline Subset rank_order(const std::vector<double>& scores) {
    Subset order(scores.size());
    std::iota(order.begin(), order.end(), Index{0});
    auto at = [&](Index i) { return scores[static_cast<std::size_t>(i)]; };
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return at(a) > at(b); });
    for (auto head = order.begin(); head != order.end();) {
        auto end = head + 1;
        while (end != order.end() && !beats(at(*head), at(*end))) ++end;
        std::sort(head, end);
        head = end;
    }
    return order;
}

inline RankOutcome rank_features(SearchDriver& d, Index k) {
    require(k >= 1 && k <= d.n(), "n_features_to_select: must be in [1, n_features]");
    RankOutcome out;
    d.reset({});
    out.scores = d.score_additions(d.outside());
    out.order = rank_order(out.scores);
    require(out.scores[static_cast<std::size_t>(out.order.front())] >
                -std::numeric_limits<double>::infinity(),
            "criterion: no feature has a finite value alone (for j2, j3, divergence and "
            "bhattacharyya: every feature is constant within the classes; pass ridge > 0)");
    const Subset top(out.order.begin(), out.order.begin() + k);
    if (k == 1) {
        out.score = out.scores[static_cast<std::size_t>(top.front())];
    } else {
        d.reset(top);
        out.score = d.current();
    }
    out.n_evaluations = d.evaluations();
    return out;
}

}  // namespace fastfs
