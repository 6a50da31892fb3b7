// ReliefF and the per-sample radius rules (MultiSURF, MultiSURF*) over X split into row tiles
// (fastfs.dask's tiled mode): once the neighbours of a tile of query samples are known (the
// tile reductions of neighbours/tiles.hpp, merged over every reference tile), each reference
// tile adds the contributions of the neighbours it holds, with the per-pair expressions of
// relieff_sums and relief_radius_sums (relieff_coefficient / relieff_add,
// detail::set_coefficients / detail::add_abs_diff1). The radius rules carry each query's
// contribution row from one reference tile to the next in sample order, as the one-machine
// loop adds them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "../neighbours/tiles.hpp"
#include "relief.hpp"
#include "relief_radius.hpp"

namespace fastfs {

// acc[0 .. n) += the ReliefF contributions (before 1/m) of the query rows Q (samples q0 ..)
// from their chosen neighbours that lie in the reference rows R (samples r0 ..): idx/count as
// tile_k_nearest_per_class left them after the last reference tile. X rows (not scaled).
template <class T>
void tile_relieff_contributions(const MatrixRef<T>& Q, Index q0, const Labels& qcodes,
                                const MatrixRef<T>& R, Index r0, const Index* idx,
                                const int* count, int k, Index n_classes,
                                const double* inv_range, double* acc) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
    const Index n = Q.cols(), r1 = r0 + R.rows();
    std::vector<const T*> rows;
    for (Index i = 0; i < Q.rows(); ++i) {
        const std::int64_t own = qcodes[i];
        require(own >= 0 && own < n_classes, "class code out of range");
        const int* cnt = count + i * n_classes;
        Index hits = 0, misses = 0;
        for (Index c = 0; c < n_classes; ++c) (c == own ? hits : misses) += cnt[c];
        for (Index c = 0; c < n_classes; ++c) {
            const double coef = relieff_coefficient(c == own, cnt[c], hits, misses, n_classes);
            const Index* chosen = idx + (i * n_classes + c) * k;
            rows.clear();
            for (int s = 0; s < cnt[c]; ++s)
                if (chosen[s] >= r0 && chosen[s] < r1) rows.push_back(R.row(chosen[s] - r0).data());
            relieff_add(Q.row(i).data(), rows.data(), static_cast<Index>(rows.size()), coef,
                        inv_range, n, acc);
        }
    }
}

// The thresholds of the radius rules, per query: near d < near_t[i]; far d > far_t[i].
struct RadiusTiles {
    const double* near_t;
    const double* far_t;  // nullptr: no far set
};

// near/far_count[i n_classes + c] += the members of class c in query i's near (far) set among
// the reference rows (Manhattan distance on the scaled rows).
inline void tile_radius_counts(const MatrixRef<double>& Q, Index q0, const MatrixRef<double>& R,
                               Index r0, const Labels& rcodes, const RadiusTiles& rule,
                               Index n_classes, Index* near_count, Index* far_count,
                               int n_threads) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
    tiles::check_codes(rcodes, R.rows(), n_classes);
#pragma omp parallel for schedule(dynamic, 4) num_threads(resolve_threads(n_threads))
    for (Index i = 0; i < Q.rows(); ++i) {
        tiles::scan_l1(Q, i, R, [&](Index j, double d) {
            if (r0 + j == q0 + i) return;
            if (d < rule.near_t[i]) ++near_count[i * n_classes + rcodes[j]];
            else if (rule.far_t && d > rule.far_t[i]) ++far_count[i * n_classes + rcodes[j]];
        });
    }
}

// Per query i: the coefficient of every class in its near and far sets (coef[(2 i + s)
// n_classes + c], s = 0 near, 1 far) and the constant term of its contribution, from its
// final counts (detail::set_coefficients, as relief_radius_sums).
inline void radius_coefficients(const Labels& qcodes, bool with_far, bool far_complement,
                                Index n_classes, const Index* near_count, const Index* far_count,
                                double* coef, double* constant) {
    std::vector<Index> count(static_cast<std::size_t>(n_classes));
    std::vector<double> c(static_cast<std::size_t>(n_classes));
    for (Index i = 0; i < qcodes.size(); ++i) {
        const std::int64_t own = qcodes[i];
        require(own >= 0 && own < n_classes, "class code out of range");
        std::copy(near_count + i * n_classes, near_count + (i + 1) * n_classes, count.begin());
        double k = detail::set_coefficients(count, own, n_classes, 1.0, false, c);
        std::copy(c.begin(), c.end(), coef + 2 * i * n_classes);
        std::fill(coef + (2 * i + 1) * n_classes, coef + (2 * i + 2) * n_classes, 0.0);
        if (with_far) {
            std::copy(far_count + i * n_classes, far_count + (i + 1) * n_classes, count.begin());
            k += detail::set_coefficients(count, own, n_classes, far_complement ? 1.0 : -1.0,
                                          far_complement, c);
            std::copy(c.begin(), c.end(), coef + (2 * i + 1) * n_classes);
        }
        constant[i] = k;
    }
}

// acc[i n ..] += sum over the reference rows j of coef(i, j) |q_i - z_j| (scaled rows), j in
// increasing order: query i's contribution row carried from tile to tile as relief_radius_sums
// adds it over all samples.
inline void tile_radius_contributions(const MatrixRef<double>& Q, Index q0,
                                      const MatrixRef<double>& R, Index r0, const Labels& rcodes,
                                      const RadiusTiles& rule, Index n_classes,
                                      const double* coef, double* acc, int n_threads) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
    tiles::check_codes(rcodes, R.rows(), n_classes);
    const Index n = Q.cols();
#pragma omp parallel for schedule(dynamic, 4) num_threads(resolve_threads(n_threads))
    for (Index i = 0; i < Q.rows(); ++i) {
        const double* x = Q.row(i).data();
        const double* near_coef = coef + 2 * i * n_classes;
        const double* far_coef = near_coef + n_classes;
        double* a = acc + i * n;
        tiles::scan_l1(Q, i, R, [&](Index j, double d) {
            if (r0 + j == q0 + i) return;
            double c = 0.0;
            if (d < rule.near_t[i]) c = near_coef[rcodes[j]];
            else if (rule.far_t && d > rule.far_t[i]) c = far_coef[rcodes[j]];
            if (c != 0.0) detail::add_abs_diff1(R.row(j).data(), x, c, a, n);
        });
    }
}

}  // namespace fastfs
