// Samples regrouped so each class is one contiguous range: the nearest hit of a sample is then
// searched in its own range and the nearest miss outside it, with no per-element mask.
#pragma once
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/types.hpp"

namespace fastfs {

struct ClassLayout {
    std::vector<Index> order;      // order[p] = original index of the sample at position p
    std::vector<Index> position;   // inverse of order
    std::vector<Index> begin;      // begin[c] .. begin[c + 1]: positions of class c
    std::vector<std::int64_t> cls; // class of the sample at position p

    Index n_samples() const { return static_cast<Index>(order.size()); }
    Index n_classes() const { return static_cast<Index>(begin.size()) - 1; }
    Index class_end_of(Index p) const { return begin[static_cast<std::size_t>(cls[p]) + 1]; }

    // codes: class code per sample in 0 .. n_classes-1. The stable sort keeps original order
    // inside a class, so "lowest index wins" among equals survives the regrouping.
    static ClassLayout from_codes(const Labels& codes) {
        const Index m = codes.size();
        require(m >= 2, "y: need at least 2 samples, got " + std::to_string(m));
        std::int64_t n_classes = 0;
        for (Index i = 0; i < m; ++i) {
            require(codes[i] >= 0, "y: class codes must be non-negative");
            n_classes = std::max<std::int64_t>(n_classes, codes[i] + 1);
        }
        ClassLayout L;
        L.order.resize(static_cast<std::size_t>(m));
        std::iota(L.order.begin(), L.order.end(), Index{0});
        std::stable_sort(L.order.begin(), L.order.end(),
                         [&](Index a, Index b) { return codes[a] < codes[b]; });
        L.position.resize(static_cast<std::size_t>(m));
        L.cls.resize(static_cast<std::size_t>(m));
        L.begin.assign(static_cast<std::size_t>(n_classes) + 1, 0);
        for (Index p = 0; p < m; ++p) {
            L.position[static_cast<std::size_t>(L.order[p])] = p;
            L.cls[p] = codes[L.order[p]];
            ++L.begin[static_cast<std::size_t>(L.cls[p]) + 1];
        }
        std::partial_sum(L.begin.begin(), L.begin.end(), L.begin.begin());
        return L;
    }
};

}  // namespace fastfs
