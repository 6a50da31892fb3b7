// The neighbour engine's reductions restricted to a reference tile, for X split into row tiles
// that no single place holds whole (fastfs.dask's tiled mode): the query rows Q (samples q0 ..
// q0 + |Q| - 1) against the reference rows R (samples r0 .. r0 + |R| - 1), every pair's
// distance computed exactly by the metric's exact kernel (WeightedL2::exact4, kernels::l1_dist4)
// with the query as x, as the one-machine scan computes it (the kernels are symmetric in their
// roles and each lane sums alone), and merged into a state carried from one reference tile to
// the next. The merges use the engine's tie rule (nearer(), keep_smallest()), whose answer does
// not depend on the order the candidates come in, and a sample is never its own neighbour
// (global indices compared); the running sums are carried in sample order, so after the last
// reference tile every state is the one of a scan over all samples:
//  * nearest hit and miss (HitMiss) under squared weights w2 (Relief, the margins);
//  * the k nearest of every class (ReliefF);
//  * the sum of a query's distances to the other samples, and the sum of their squared
//    deviations from a given mean (MultiSURF's per-sample thresholds).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "engine.hpp"

namespace fastfs {

namespace tiles {

// visit(j, d) for every reference row j (local index) with d the exact distance of query row x,
// four reference rows per kernel call (a short last group repeats its last row).
template <class T, class Kernel, class Visit>
inline void scan_reference(const MatrixRef<T>& R, Kernel&& kernel, Visit&& visit) {
    scan_rows4<double>(Index{0}, R.rows(), [&](Index j) { return R.row(j).data(); },
                       std::forward<Kernel>(kernel), std::forward<Visit>(visit));
}

// visit(j, d) for every reference row j with d the Manhattan distance of query row i (ReliefF
// and the radius rules, on min-max scaled rows).
template <class Visit>
inline void scan_l1(const MatrixRef<double>& Q, Index i, const MatrixRef<double>& R,
                    Visit&& visit) {
    const double* x = Q.row(i).data();
    const Index n = Q.cols();
    scan_reference(
        R,
        [&](const double* z0, const double* z1, const double* z2, const double* z3,
            double* d) { kernels::l1_dist4(x, z0, z1, z2, z3, n, d); },
        std::forward<Visit>(visit));
}

inline void check_tiles(Index q_cols, Index r_cols, Index q0, Index r0) {
    require(q_cols == r_cols, "query and reference tiles have different numbers of features");
    require_index(q0 >= 0 && r0 >= 0, "tile offsets must be non-negative");
}

// The reference tile's class codes: one a row, each below n_classes.
inline void check_codes(const Labels& codes, Index rows, Index n_classes) {
    require(codes.size() == rows, "a tile and its labels have different numbers of samples");
    for (Index j = 0; j < rows; ++j)
        require(codes[j] >= 0 && codes[j] < n_classes, "class code out of range");
}

}  // namespace tiles

// Nearest hit and miss of every query row among the reference rows under the squared weights
// w2 (n values), merged into hm[0 .. |Q|) (indices are global sample indices).
template <class T>
void tile_nearest_hit_miss(const MatrixRef<T>& Q, Index q0, const Labels& qcodes,
                           const MatrixRef<T>& R, Index r0, const Labels& rcodes, const double* w2,
                           HitMiss* hm, int n_threads) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
    require(qcodes.size() == Q.rows() && rcodes.size() == R.rows(),
            "tiles and their labels have different numbers of samples");
    const Index n = Q.cols();
#pragma omp parallel for schedule(dynamic, 4) num_threads(resolve_threads(n_threads))
    for (Index i = 0; i < Q.rows(); ++i) {
        const T* x = Q.row(i).data();
        const Index gi = q0 + i;
        const std::int64_t own = qcodes[i];
        HitMiss& h = hm[i];
        tiles::scan_reference(
            R,
            [&](const T* z0, const T* z1, const T* z2, const T* z3, double* d) {
                WeightedL2<T>::exact4(x, z0, z1, z2, z3, w2, n, d);
            },
            [&](Index j, double d) {
                if (r0 + j != gi) h.offer(d, r0 + j, rcodes[j] == own);
            });
    }
}

// The k nearest of every class c < n_classes for every query row, Manhattan distance on the
// (scaled) rows: for query i and class c, idx/dist[(i n_classes + c) k + s], s < count[i
// n_classes + c], nearest first by (distance, index), merged with the reference rows.
inline void tile_k_nearest_per_class(const MatrixRef<double>& Q, Index q0,
                                     const MatrixRef<double>& R, Index r0, const Labels& rcodes,
                                     int k, Index n_classes, Index* idx, double* dist,
                                     int* count, int n_threads) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
    tiles::check_codes(rcodes, R.rows(), n_classes);
    require(k >= 1, "n_neighbors must be >= 1");
#pragma omp parallel for schedule(dynamic, 4) num_threads(resolve_threads(n_threads))
    for (Index i = 0; i < Q.rows(); ++i) {
        const Index gi = q0 + i;
        tiles::scan_l1(Q, i, R, [&](Index j, double d) {
            if (r0 + j == gi) return;
            const std::size_t slot =
                static_cast<std::size_t>(i * n_classes + rcodes[j]);
            keep_smallest(d, r0 + j, k, count[slot], dist + slot * static_cast<std::size_t>(k),
                          idx + slot * static_cast<std::size_t>(k));
        });
    }
}

// Running sums over the other samples j of each query row i, in increasing j (the order of
// the one-machine loop, carried from tile to tile): with mean == nullptr, sum[i] += d(i, j);
// else sum[i] += (d(i, j) - mean[i])^2. Manhattan distance on the (scaled) rows.
inline void tile_distance_sums(const MatrixRef<double>& Q, Index q0, const MatrixRef<double>& R,
                               Index r0, const double* mean, double* sum, int n_threads) {
    tiles::check_tiles(Q.cols(), R.cols(), q0, r0);
#pragma omp parallel for schedule(dynamic, 4) num_threads(resolve_threads(n_threads))
    for (Index i = 0; i < Q.rows(); ++i) {
        const Index gi = q0 + i;
        double s = sum[i];
        tiles::scan_l1(Q, i, R, [&](Index j, double d) {
            if (r0 + j == gi) return;
            if (mean) s += (d - mean[i]) * (d - mean[i]);
            else s += d;
        });
        sum[i] = s;
    }
}

}  // namespace fastfs
