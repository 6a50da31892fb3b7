// Sequential forward (SFS) and backward (SBS) selection and plus-l-minus-r (SPEC 5.2): greedy
// single-feature moves on the driver.
#pragma once
#include <algorithm>
#include <string>

#include "driver.hpp"

namespace fastfs {

inline SearchOutcome sfs(SearchDriver& d, SearchTarget t) {
    return run_search(d, [&](SearchDriver& d) {
        const Index K = t.best ? d.n() : t.k;
        d.reset({});
        double J = 0.0;
        while (d.size() < K) {
            d.begin_round();
            const auto [x, Jx] = d.best_addition(d.outside());
            d.add(x);
            J = Jx;
            d.record(J);
            if (d.stalled()) break;
        }
        return t.best ? d.finish_best() : d.finish(d.S(), J);
    });
}

inline SearchOutcome sbs(SearchDriver& d, SearchTarget t) {
    return run_search(d, [&](SearchDriver& d) {
        const Index K = t.best ? 1 : t.k;
        d.reset_full();
        double J = d.current();
        d.record(J);
        while (d.size() > K) {
            d.begin_round();
            const auto [x, Jx] = d.best_removal(d.inside());
            d.remove(x);
            J = Jx;
            d.record(J);
            if (d.stalled()) break;
        }
        return t.best ? d.finish_best() : d.finish(d.S(), J);
    });
}

// l > r: from the empty set, rounds of l additions then r removals; l < r: from the full set,
// rounds of r removals then l additions. The last round is shortened so it ends exactly at k.
inline SearchOutcome plus_l_minus_r(SearchDriver& d, SearchTarget t, Index l, Index r) {
    require(l >= 1 && r >= 1, "l, r: must both be >= 1");
    require(l != r, "l, r: must differ (l > r searches forward, l < r backward)");
    const Index n = d.n();
    const Index K = t.best ? (l > r ? n - r : l + 1) : t.k;
    if (l > r)
        require(K >= 1 && K + r <= n,
                "n_features_to_select: plus_l_minus_r with l > r needs n_features_to_select + r "
                "<= n_features (got " + std::to_string(K) + " + " + std::to_string(r) + " > " +
                    std::to_string(n) + ")");
    else
        require(K - l >= 1 && K <= n,
                "n_features_to_select: plus_l_minus_r with l < r needs n_features_to_select - l "
                ">= 1 (got " + std::to_string(K) + " - " + std::to_string(l) + ")");
    return run_search(d, [&](SearchDriver& d) {
        double J = 0.0;
        auto add_one = [&] {
            const auto [x, Jx] = d.best_addition(d.outside());
            d.add(x);
            J = Jx;
            d.record(J);
        };
        auto remove_one = [&] {
            const auto [x, Jx] = d.best_removal(d.inside());
            d.remove(x);
            J = Jx;
            d.record(J);
        };
        if (l > r) {
            d.reset({});
            do {
                d.begin_round();
                const Index adds = std::min(l, K + r - d.size());
                for (Index i = 0; i < adds; ++i) add_one();
                for (Index i = 0; i < r; ++i) remove_one();
                if (d.stalled()) break;
            } while (d.size() != K);
        } else {
            d.reset_full();
            J = d.current();
            d.record(J);
            while (d.size() != K) {
                d.begin_round();
                const Index removals = std::min(r, d.size() - (K - l));
                for (Index i = 0; i < removals; ++i) remove_one();
                for (Index i = 0; i < l; ++i) add_one();
                if (d.stalled()) break;
            }
        }
        return t.best ? d.finish_best() : d.finish(d.S(), J);
    });
}

}  // namespace fastfs
