// Row blocks of the distance state (state/distance_block.hpp), as fastfs.dask splits the state
// across workers: the nearest hit and miss of every row of every block, after any sequence of
// rebuilds and updates, must be bit for bit those of the whole state (DistanceState), whatever
// the blocks; and the leave-one-out 1-NN count over the blocks must be a brute-force 1-NN's
// (long double distances, lowest index among equally near samples).
#include <gtest/gtest.h>

#include <vector>

#include "fastfs/state/distance_block.hpp"
#include "fastfs/state/distance_state.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

struct Split {
    fastfs::ClassLayout layout;
    Mat<double> cols;  // n x m, class order
    std::vector<fastfs::DistanceRowBlock> blocks;
};

Split make_split(const Mat<double>& X, const Codes& codes, const std::vector<Index>& cuts) {
    Split s{fastfs::ClassLayout::from_codes(codes), Mat<double>(X.cols(), X.rows()), {}};
    for (Index p = 0; p < X.rows(); ++p) s.cols.col(p) = X.row(s.layout.order[static_cast<std::size_t>(p)]).transpose();
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
        s.blocks.emplace_back(s.cols, s.layout, cuts[i], cuts[i + 1], 2);
    return s;
}

void assign(fastfs::DistanceState<double>& st, const Split& s, const std::vector<Index>& S) {
    Mat<double> Z(s.cols.cols(), static_cast<Index>(S.size()));
    for (std::size_t j = 0; j < S.size(); ++j) Z.col(static_cast<Index>(j)) = s.cols.row(S[j]).transpose();
    st.assign(Z);
}

// Nearest of the whole state under D + sign delta(f) (f < 0: D) against the blocks' rows.
void expect_same_nearest(fastfs::DistanceState<double>& st, const Split& s, Index f, double sign) {
    fastfs::Nearest<double> nn;
    st.nearest_with(f < 0 ? nullptr : s.cols.data() + f * s.cols.cols(), sign, nn);
    for (const auto& b : s.blocks) {
        std::vector<double> hit(static_cast<std::size_t>(b.n_rows())), miss(hit.size());
        b.nearest({f}, {sign}, hit.data(), miss.data());
        for (Index i = 0; i < b.n_rows(); ++i) {
            EXPECT_EQ(hit[static_cast<std::size_t>(i)], nn.hit[static_cast<std::size_t>(b.first_row() + i)]);
            EXPECT_EQ(miss[static_cast<std::size_t>(i)], nn.miss[static_cast<std::size_t>(b.first_row() + i)]);
        }
    }
}

}  // namespace

TEST(DistanceBlock, RowsEqualTheWholeStateBitForBit) {
    for (Family fam : {Family::continuous, Family::integers, Family::near_ties}) {
        const Index m = 67, n = 7;
        Mat<double> X = make_data(fam, m, n, 5);
        X.col(3) *= 1e3;  // a column that dominates: large cancellation in D - delta
        const Codes codes = make_codes(m, 4, 9);
        Split s = make_split(X, codes, {0, 1, 30, 31, 67});
        fastfs::DistanceState<double> st(s.layout, 2);
        const std::vector<Index> S{4, 0, 3};
        assign(st, s, S);
        for (auto& b : s.blocks) b.assign(S);
        expect_same_nearest(st, s, -1, 0.0);
        for (Index f = 0; f < n; ++f) {
            expect_same_nearest(st, s, f, 1.0);
            expect_same_nearest(st, s, f, -1.0);
        }
        // updates accumulate rounding: the same rounding on both sides
        st.add_feature(s.cols.data() + 1 * m, 1.0);
        st.add_feature(s.cols.data() + 3 * m, -1.0);
        for (auto& b : s.blocks) {
            b.add_feature(1, 1.0);
            b.add_feature(3, -1.0);
        }
        for (Index f = 0; f < n; ++f) expect_same_nearest(st, s, f, f % 2 ? 1.0 : -1.0);
        // from scratch, the stored rows untouched
        fastfs::DistanceState<double> fresh(s.layout, 1);
        const std::vector<Index> T{6, 2};
        assign(fresh, s, T);
        fastfs::Nearest<double> nn;
        fresh.nearest_with(nullptr, 0.0, nn);
        for (const auto& b : s.blocks) {
            std::vector<double> hit(static_cast<std::size_t>(b.n_rows())), miss(hit.size());
            b.nearest_of_subset(T, hit.data(), miss.data());
            for (Index i = 0; i < b.n_rows(); ++i) {
                EXPECT_EQ(hit[static_cast<std::size_t>(i)], nn.hit[static_cast<std::size_t>(b.first_row() + i)]);
                EXPECT_EQ(miss[static_cast<std::size_t>(i)], nn.miss[static_cast<std::size_t>(b.first_row() + i)]);
            }
        }
        expect_same_nearest(st, s, 5, 1.0);
    }
}

TEST(DistanceBlock, OneNeighbourCountEqualsBruteForce) {
    const Index m = 59, n = 5;
    const Mat<double> X = make_data(Family::continuous, m, n, 3);
    const Codes codes = make_codes(m, 3, 4, false);
    const std::vector<Index> S{0, 2, 4};
    const Index expected = ref_loo_1nn_correct(X, codes, S);
    Split s = make_split(X, codes, {0, 20, 21, 59});
    std::int64_t stored = 0, scratch = 0;
    for (auto& b : s.blocks) {
        b.assign({0, 2});
        stored += b.knn_correct({4}, {1.0}, 1)[0];
        scratch += b.knn_correct_of_subset(S, 1);
    }
    EXPECT_EQ(stored, expected);
    EXPECT_EQ(scratch, expected);
}
