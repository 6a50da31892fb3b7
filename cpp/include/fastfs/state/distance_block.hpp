// Rows r0 .. r1-1 (positions in class order) of the m x m distance state of G-flip and of the
// distance-criterion searches, with every column: the share of the state one worker holds when
// the state is split by row blocks over a cluster (fastfs.dask), so that m can exceed what one
// machine holds. A sample's nearest hit and nearest miss lie along its own row, so a block finds
// those of its rows alone and a candidate's score is a sum of per-row terms over the blocks.
//
// Every entry is computed with the expressions of DistanceState: the pair (a, b) is assigned as
// the sum of (x_a - x_b)^2 over the features in their order (kernels::squares_row), updated and
// scanned as D + sign * (x_a - x_b)^2, and a difference only changes sign when its operands
// swap, so its square is the same bits; min is exact; the whole-row scans (nearest hit and
// miss, k nearest, first sample at a distance) are those of state/row_scan.hpp, which one
// machine's state and criteria use too. A block's minima are therefore bit for bit those of
// one machine's state, whatever the blocks and the thread count. A block scans whole rows (one
// machine scans the upper triangle and folds column minima), twice the pairs in all, in
// exchange for no traffic between blocks.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../data/class_layout.hpp"
#include "../simd/pair_kernels.hpp"
#include "row_scan.hpp"

namespace fastfs {

class DistanceRowBlock {
public:
    // cols: n x m, row f = feature f with the samples in class order (positions of `layout`).
    DistanceRowBlock(RowMatrix<double> cols, ClassLayout layout, Index r0, Index r1,
                     int n_threads)
        : cols_(std::move(cols)),
          layout_(std::move(layout)),
          m_(layout_.n_samples()),
          r0_(r0),
          r1_(r1),
          threads_(resolve_threads(n_threads)),
          zeros_(static_cast<std::size_t>(m_), 0.0) {
        require(cols_.cols() == m_, "DistanceRowBlock: columns and layout differ in samples");
        require(0 <= r0 && r0 <= r1 && r1 <= m_, "DistanceRowBlock: rows out of range");
        d_.setZero(r1_ - r0_, m_);
    }

    Index n_samples() const { return m_; }
    Index n_features() const { return cols_.rows(); }
    Index first_row() const { return r0_; }
    Index n_rows() const { return r1_ - r0_; }
    const ClassLayout& layout() const { return layout_; }

    // D = squared distances under the features S, in this order (the order of one machine's
    // rebuild: it fixes the order of the sum).
    void assign(const std::vector<Index>& S) {
        const std::vector<const double*> Z = subset_cols(S);
        const Index n_groups = (r1_ - r0_ + 3) / 4;
#pragma omp parallel for schedule(dynamic, 2) num_threads(team())
        for (Index g = 0; g < n_groups; ++g) {
            const Index a0 = r0_ + 4 * g;
            const int rows = static_cast<int>(std::min<Index>(4, r1_ - a0));
            double* out[4];
            for (int r = 0; r < rows; ++r) out[r] = d_.data() + (a0 + r - r0_) * m_;
            kernels::squares_tiled(out, rows, Z.data(), static_cast<int>(Z.size()), a0, Index{0}, m_);
        }
    }

    // D += sign * delta(f), the expression of DistanceState::add_feature.
    void add_feature(Index f, double sign) {
        const double* c = col(f);
        require(sign == 1.0 || sign == -1.0, "DistanceRowBlock: sign must be +1 or -1");
#pragma omp parallel for schedule(dynamic, 16) num_threads(team())
        for (Index a = r0_; a < r1_; ++a)
            kernels::update_row(d_.data() + (a - r0_) * m_, c, c[a], sign, Index{0}, m_);
    }

    // Nearest hit and miss of every row of the block under D + signs[k] * delta(feats[k])
    // (feats[k] < 0: D itself); hit / miss are count x n_rows, row-major.
    void nearest(const std::vector<Index>& feats, const std::vector<double>& signs, double* hit,
                 double* miss) const {
        require(signs.size() == feats.size(), "DistanceRowBlock: one sign per feature");
        check_features(feats);
        const Index n = n_rows();
        const std::size_t count = feats.size();
#pragma omp parallel for schedule(dynamic, 16) num_threads(team())
        for (Index i = 0; i < n; ++i) {
            const double* r = d_.data() + i * m_;
            for (std::size_t k = 0; k < count; ++k)
                row_nearest(layout_, r, r0_ + i, feat_col(feats[k]), feats[k] < 0 ? 0.0 : signs[k],
                            hit[k * n + i], miss[k * n + i]);
        }
    }

    // The same for the state of the subset S built from scratch, row by row (the stored state
    // is neither read nor changed; O(m) memory a thread).
    void nearest_of_subset(const std::vector<Index>& S, double* hit, double* miss) const {
        const std::vector<const double*> Z = subset_cols(S);
        RegionErrors errors;
#pragma omp parallel num_threads(team())
        {
            std::vector<double> buf;
            errors.run([&] { buf.resize(static_cast<std::size_t>(m_)); });
#pragma omp for schedule(dynamic, 16)
            for (Index a = r0_; a < r1_; ++a)
                errors.run([&] {
                    distances_from(Z, a, buf.data());
                    row_nearest(layout_, buf.data(), a, zeros_.data(), 0.0, hit[a - r0_], miss[a - r0_]);
                });
        }
        errors.rethrow();
    }

    // How many rows of the block leave-one-out k-NN classifies right under
    // D + signs[i] * delta(feats[i]) (feats[i] < 0: D itself), with the rules of
    // DistanceCriterion: for k = 1 the nearest hit must be strictly nearer than the nearest
    // miss, an exact tie going to the lowest original index at that distance; for k > 1 the
    // k nearest vote (distance ties to the lower original index, vote ties to the lower class).
    std::vector<std::int64_t> knn_correct(const std::vector<Index>& feats,
                                          const std::vector<double>& signs, int k) const {
        require(signs.size() == feats.size(), "DistanceRowBlock: one sign per feature");
        check_features(feats);
        std::vector<std::int64_t> out(feats.size(), 0);
        for (std::size_t i = 0; i < feats.size(); ++i)
            out[i] = count_correct(k, [&](Index a, std::vector<double>&) {
                return d_.data() + (a - r0_) * m_;
            }, feat_col(feats[i]), feats[i] < 0 ? 0.0 : signs[i]);
        return out;
    }

    // The same for the subset S from scratch (the stored state untouched).
    std::int64_t knn_correct_of_subset(const std::vector<Index>& S, int k) const {
        const std::vector<const double*> Z = subset_cols(S);
        return count_correct(k, [&](Index a, std::vector<double>& buf) -> const double* {
            distances_from(Z, a, buf.data());
            return buf.data();
        }, zeros_.data(), 0.0);
    }

private:
    static constexpr Index kParallelMin = 128;
    int team() const { return n_rows() * m_ >= kParallelMin * 512 ? threads_ : 1; }

    const double* col(Index f) const { return cols_.data() + col_index(f) * m_; }
    // Checked before a parallel region (nothing may throw inside one); < 0 means "none".
    void check_features(const std::vector<Index>& feats) const {
        for (Index f : feats)
            require(f < cols_.rows(), "DistanceRowBlock: feature index out of range");
    }
    const double* feat_col(Index f) const { return f < 0 ? zeros_.data() : cols_.data() + f * m_; }

    // The columns of the features S, in this order (checked before any parallel region).
    std::vector<const double*> subset_cols(const std::vector<Index>& S) const {
        std::vector<const double*> Z(S.size());
        for (std::size_t j = 0; j < S.size(); ++j) Z[j] = col(S[j]);
        return Z;
    }
    Index col_index(Index f) const {
        require(0 <= f && f < cols_.rows(), "DistanceRowBlock: feature index out of range");
        return f;
    }

    // Row a of D under the features Z, each pair as DistanceState::assign computes it.
    void distances_from(const std::vector<const double*>& Z, Index a, double* out) const {
        double* rows[1] = {out};
        kernels::squares_tiled(rows, 1, Z.data(), static_cast<int>(Z.size()), a, Index{0}, m_);
    }

    template <class RowOf>
    std::int64_t count_correct(int k, RowOf row_of, const double* c, double sign) const {
        const Index n_classes = layout_.n_classes();
        const int kk = static_cast<int>(std::min<Index>(k, m_ - 1));
        const double inf = std::numeric_limits<double>::infinity();
        std::int64_t correct = 0;
        RegionErrors errors;
#pragma omp parallel num_threads(team()) reduction(+ : correct)
        {
            std::vector<double> buf, dist;
            std::vector<Index> pos;
            std::vector<int> votes;
            errors.run([&] {
                buf.resize(static_cast<std::size_t>(m_));
                dist.resize(static_cast<std::size_t>(std::max(kk, 1)));
                pos.resize(static_cast<std::size_t>(std::max(kk, 1)));
                votes.resize(static_cast<std::size_t>(n_classes));
            });
#pragma omp for schedule(dynamic, 16)
            for (Index a = r0_; a < r1_; ++a)
                errors.run([&] {
                    const double* r = row_of(a, buf);
                    const std::int64_t own = layout_.cls[static_cast<std::size_t>(a)];
                    if (k <= 1) {
                        double h = 0.0, s = 0.0;
                        row_nearest(layout_, r, a, c, sign, h, s);
                        if (h < s) ++correct;
                        else if (h == s && h != inf && row_first_at_distance(layout_, r, a, c, sign, h) == own)
                            ++correct;
                        return;
                    }
                    const int got = row_k_nearest(layout_, r, a, c, sign, kk, pos.data(), dist.data());
                    std::fill(votes.begin(), votes.end(), 0);
                    for (int i = 0; i < got; ++i)
                        ++votes[static_cast<std::size_t>(layout_.cls[static_cast<std::size_t>(pos[static_cast<std::size_t>(i)])])];
                    if (std::max_element(votes.begin(), votes.end()) - votes.begin() == own)
                        ++correct;
                });
        }
        errors.rethrow();
        return correct;
    }

    RowMatrix<double> cols_;  // n x m, features in rows, samples in class order
    ClassLayout layout_;
    Index m_, r0_, r1_;
    int threads_;
    RowMatrix<double> d_;  // rows r0 .. r1-1 of D, every column
    std::vector<double> zeros_;
};

}  // namespace fastfs
