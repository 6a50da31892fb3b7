// Exhaustive search (SPEC 5.2): every subset of the asked size in lexicographic order, scored
// in parallel chunks when the criterion allows; the first subset that ties with the maximum
// wins. Refuses a run above
// max_subsets before it starts.
#pragma once
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "driver.hpp"

namespace fastfs {

// C(n, k) as a double (exact below 2^53, and only compared with a limit).
inline double n_choose_k(Index n, Index k) {
    double c = 1.0;
    for (Index i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
    return std::round(c);
}

// A subset count for a message: the integer while it is one exactly, else three digits
// (C(n, k) soon exceeds every integer type, where a cast would be undefined).
inline std::string count_text(double v) {
    if (v >= 0.0 && v < 0x1p53) return std::to_string(static_cast<long long>(v));
    if (std::isinf(v)) return "more than 1e308";
    std::ostringstream s;
    s << std::setprecision(3) << v;
    return s.str();
}

// Advances comb (ascending, values < n) to the next combination; false after the last.
inline bool next_combination(Subset& comb, Index n) {
    const Index k = static_cast<Index>(comb.size());
    Index i = k - 1;
    while (i >= 0 && comb[static_cast<std::size_t>(i)] == n - k + i) --i;
    if (i < 0) return false;
    ++comb[static_cast<std::size_t>(i)];
    for (Index j = i + 1; j < k; ++j)
        comb[static_cast<std::size_t>(j)] = comb[static_cast<std::size_t>(j - 1)] + 1;
    return true;
}

inline SearchOutcome exhaustive(SearchDriver& d, SearchTarget t, double max_subsets) {
    const Index n = d.n();
    const Index lo = t.best ? 1 : t.k, hi = t.best ? n : t.k;
    double total = 0.0;
    for (Index s = lo; s <= hi; ++s) total += n_choose_k(n, s);
    require(total <= max_subsets,
            "n_features_to_select: exhaustive search would evaluate " +
                count_text(total) + " subsets, more than max_subsets = " +
                count_text(max_subsets) +
                "; raise max_subsets or use a sequential search");
    Criterion& J = d.criterion();
    return run_search(d, [&](SearchDriver& d) {
        constexpr std::size_t kChunk = 4096;
        Subset best_subset;
        double best_score = 0.0;
        for (Index s = lo; s <= hi; ++s) {
            Subset comb(static_cast<std::size_t>(s));
            for (Index i = 0; i < s; ++i) comb[static_cast<std::size_t>(i)] = i;
            bool more = true;
            TieFrontier level;
            std::vector<Subset> chunk;
            std::vector<double> scores;
            while (more) {
                chunk.clear();
                while (more && chunk.size() < kChunk) {
                    chunk.push_back(comb);
                    more = next_combination(comb, n);
                }
                scores.assign(chunk.size(), 0.0);
                const Index c = static_cast<Index>(chunk.size());
                if (J.thread_safe() && J.threads() > 1 && c > 1) {
                    RegionErrors errors;
                    StopPoll stop(J.stop_hook());
#pragma omp parallel for schedule(dynamic, 8) num_threads(J.threads())
                    for (Index i = 0; i < c; ++i) {
                        if (stop.stopped()) continue;
                        errors.run([&] {
                            scores[static_cast<std::size_t>(i)] = J.evaluate(chunk[static_cast<std::size_t>(i)]);
                        });
                    }
                    errors.rethrow();
                    stop.check();
                } else {
                    for (Index i = 0; i < c; ++i) {
                        d.poll();
                        scores[static_cast<std::size_t>(i)] = J.evaluate(chunk[static_cast<std::size_t>(i)]);
                    }
                }
                d.count_evaluations(c);
                for (std::size_t i = 0; i < chunk.size(); ++i) {
                    const double v = d.seen(std::isnan(scores[i]) ? -std::numeric_limits<double>::infinity() : scores[i]);
                    level.offer(chunk[i], v);
                }
                d.poll();
            }
            const Subset level_best = level.subset();
            const double level_score = level.score();
            d.record(level_best, level_score);
            if (s == lo || level_score > best_score) {
                best_score = level_score;
                best_subset = level_best;
            }
        }
        return t.best ? d.finish_best() : d.finish(best_subset, best_score);
    });
}

}  // namespace fastfs
