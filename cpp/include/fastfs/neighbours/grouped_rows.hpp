// The nearest hit and miss searched over one sample per group of equal rows of a class
// (data/row_groups.hpp), and the answers spread back over the samples: every weighted distance
// from a member of a group has the same bits as from its first sample, so a sample's nearest
// miss is its group's (the group's first sample: the lowest index among equal rows), and its
// nearest hit is the lowest other member of its own group, at distance 0 exactly, unless
// another group of the class is also at distance 0 (equal on every weighted feature) with a
// lower index. Used where at least an eighth of the samples are copies; the pairs a search
// visits then shrink by the share of distinct rows (squared, for all samples at once).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/types.hpp"
#include "../data/row_groups.hpp"
#include "../simd/pair_kernels.hpp"
#include "engine.hpp"

namespace fastfs {

template <class T>
struct GroupedRows {
    RowGroups groups;
    std::vector<Index> second;  // group -> its second lowest sample, or -1
    RowMatrix<T> X;             // group -> its first sample's row
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> codes;

    // Whether searching the groups is worth its copy: at least an eighth of the samples (and
    // at least one) are copies. Otherwise nothing is copied and `active` is false.
    bool active = false;

    GroupedRows() = default;
    GroupedRows(const MatrixRef<T>& X_full, const Labels& codes_full)
        : groups(equal_row_groups(X_full, codes_full)) {
        const Index m = groups.n_samples(), u = groups.n_groups(), n = X_full.cols();
        active = u < m && 8 * (m - u) >= m;
        if (!active) return;
        X.resize(u, n);
        codes.resize(u);
        for (Index g = 0; g < u; ++g) {
            const Index i = groups.first[static_cast<std::size_t>(g)];
            X.row(g) = X_full.row(i);
            codes[g] = codes_full[i];
        }
        second.assign(static_cast<std::size_t>(u), -1);
        for (Index i = 0; i < m; ++i) {
            const auto g = static_cast<std::size_t>(groups.group[static_cast<std::size_t>(i)]);
            if (groups.first[g] != i && second[g] < 0) second[g] = i;
        }
    }

    Index group_of(Index i) const { return groups.group[static_cast<std::size_t>(i)]; }

    // Sample i's answer from its group's answer r (indices of groups) under squared weights w2.
    // r's distances may be NaN where the search skipped them (neighbours only); then the one
    // distance the rule needs is computed here, with the exhaustive scan's kernel.
    HitMiss lift(const HitMiss& r, Index i, const MatrixRef<T>& X_full, const double* w2) const {
        HitMiss o;
        if (r.miss >= 0) {
            o.miss = groups.first[static_cast<std::size_t>(r.miss)];
            o.miss_d = r.miss_d;
        }
        if (r.hit >= 0) {
            o.hit = groups.first[static_cast<std::size_t>(r.hit)];
            o.hit_d = r.hit_d;
        }
        const auto g = static_cast<std::size_t>(group_of(i));
        if (groups.size[g] < 2) return o;
        const Index copy = groups.first[g] == i ? second[g] : groups.first[g];
        if (o.hit >= 0 && o.hit < copy) {
            double d = o.hit_d;
            if (std::isnan(d)) {
                double d4[4];
                const T* z = X_full.row(o.hit).data();
                kernels::sq_dist4(X_full.row(i).data(), z, z, z, z, w2, X_full.cols(), d4);
                d = d4[0];
            }
            if (d == 0.0) return o;
        }
        o.hit = copy;
        o.hit_d = 0.0;
        return o;
    }
};

}  // namespace fastfs
