// Bidirectional search (SPEC 5.2): a forward search F from the empty set and a backward search
// B from the full set take turns; forward only adds features backward has kept, backward only
// removes features forward has not chosen, so F stays inside B until they meet.
#pragma once
#include "driver.hpp"

namespace fastfs {

inline SearchOutcome bidirectional(SearchDriver& d, SearchTarget t) {
    const Index n = d.n();
    const Index K = t.best ? 0 : t.k;  // 0: run until F and B meet
    return run_search(d, [&](SearchDriver& d) {
        d.reset_full();
        Subset F, B = d.S();
        double JB = d.current();
        d.record(B, JB);
        if (K == n) return d.finish(B, JB);
        std::vector<char> in_f(static_cast<std::size_t>(n), 0), in_b(static_cast<std::size_t>(n), 1);
        auto open = [&] {  // features in B and not in F, ascending
            Subset c;
            for (Index x = 0; x < n; ++x)
                if (in_b[static_cast<std::size_t>(x)] && !in_f[static_cast<std::size_t>(x)]) c.push_back(x);
            return c;
        };
        for (;;) {
            Subset c = open();
            if (c.empty()) break;
            d.reset(F);
            const auto [xf, JF] = d.best_addition(c);
            F.push_back(xf);
            in_f[static_cast<std::size_t>(xf)] = 1;
            d.record(F, JF);
            if (static_cast<Index>(F.size()) == K) return d.finish(F, JF);
            c = open();
            if (c.empty()) break;
            d.reset(B);
            const auto [xb, Jb] = d.best_removal(c);
            B.erase(std::find(B.begin(), B.end(), xb));
            in_b[static_cast<std::size_t>(xb)] = 0;
            d.record(B, Jb);
            if (static_cast<Index>(B.size()) == K) return d.finish(B, Jb);
        }
        return d.finish_best();
    });
}

}  // namespace fastfs
