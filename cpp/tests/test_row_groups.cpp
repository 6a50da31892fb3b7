// equal_row_groups (data/row_groups.hpp): samples of one class with equal rows (value by value,
// -0 == +0) form one group, numbered by their lowest sample. Checked against a brute force that
// compares every pair of rows, on copies that differ from other rows only in their last column
// (past the first blocks of the refinement), signed zeros, NaN (never equal), equal rows in
// different classes, and data without any copy.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "fastfs/data/row_groups.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

// Brute force: sample i joins the group of the lowest j < i of its class with an equal row.
template <class T>
std::vector<Index> brute_groups(const Mat<T>& X, const Codes& codes) {
    const Index m = X.rows();
    std::vector<Index> lead(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) {
        lead[static_cast<std::size_t>(i)] = i;
        for (Index j = 0; j < i; ++j) {
            bool eq = codes[i] == codes[j];
            for (Index f = 0; f < X.cols() && eq; ++f) eq = X(i, f) == X(j, f);
            if (eq) {
                lead[static_cast<std::size_t>(i)] = j;
                break;
            }
        }
    }
    return lead;
}

template <class T>
void check_groups(const Mat<double>& X64, const Codes& codes, const std::string& label) {
    const Mat<T> X = X64.cast<T>();
    const auto G = fastfs::equal_row_groups<T>(X, codes);
    const auto lead = brute_groups(X, codes);
    const Index m = X.rows();
    ASSERT_EQ(G.n_samples(), m) << label;
    Index groups = 0;
    std::vector<Index> size(static_cast<std::size_t>(m), 0);
    for (Index i = 0; i < m; ++i) {
        const Index l = lead[static_cast<std::size_t>(i)];
        if (l == i) ++groups;
        ++size[static_cast<std::size_t>(l)];
        const Index g = G.group[static_cast<std::size_t>(i)];
        ASSERT_GE(g, 0) << label;
        ASSERT_LT(g, G.n_groups()) << label;
        EXPECT_EQ(G.first[static_cast<std::size_t>(g)], l) << label << ", sample " << i;
    }
    EXPECT_EQ(G.n_groups(), groups) << label;
    for (Index g = 0; g < G.n_groups(); ++g) {
        const Index l = G.first[static_cast<std::size_t>(g)];
        EXPECT_EQ(G.size[static_cast<std::size_t>(g)], size[static_cast<std::size_t>(l)]) << label;
        if (g > 0) {
            EXPECT_LT(G.first[static_cast<std::size_t>(g - 1)], l) << label << ": numbered by lowest sample";
        }
    }
}

template <class T>
class RowGroupsTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RowGroupsTest, Scalars);

TYPED_TEST(RowGroupsTest, EqualsTheBruteForce) {
    using T = TypeParam;
    for (Index n : {1, 5, 16, 17, 90, 3000}) {
        const Index m = 120;
        Gen g(static_cast<std::uint64_t>(n));
        Mat<double> X = make_data(Family::integers, m, n, static_cast<std::uint64_t>(n) + 1);
        for (Index i = 1; i < m; ++i) {
            const Index kind = g.below(6);
            if (kind == 0) {
                X.row(i) = X.row(g.below(i));  // a copy
            } else if (kind == 1) {
                X.row(i) = X.row(g.below(i));  // equal but for the last column
                X(i, n - 1) += 1.0;
            } else if (kind == 2) {
                X.row(i) = -X.row(g.below(i));  // 0 becomes -0: still a copy when all are 0
                for (Index f = 0; f < n; ++f)
                    if (X(i, f) != 0.0) X(i, f) = -X(i, f);
            }
        }
        X.row(7).setConstant(std::numeric_limits<double>::quiet_NaN());
        X.row(8).setConstant(std::numeric_limits<double>::quiet_NaN());
        for (int classes : {1, 3}) {
            const Codes codes = make_codes(m, classes, static_cast<std::uint64_t>(n) + 2, false);
            check_groups<T>(X, codes, "n " + std::to_string(n) + ", " +
                                          std::to_string(classes) + " class(es)");
        }
    }
    // No copies at all, and all samples copies of one row.
    const Mat<double> distinct = make_data(Family::continuous, 200, 40, 9);
    check_groups<T>(distinct, make_codes(200, 2, 10, false), "distinct rows");
    Mat<double> same(50, 40);
    same.rowwise() = distinct.row(0);
    check_groups<T>(same, make_codes(50, 2, 11, false), "one row");
}

// A huge value in the first column of every block of the refinement (16, 32, 64, 128 columns)
// swamps the rest of each block's sum, so every row of a class gets the same keys and the
// confirmation sees one set of many different rows (the sorted path, past the first few
// heads): copies, near-copies, signed zeros and NaN must still be told apart exactly.
TYPED_TEST(RowGroupsTest, RowsWhoseSumsAllCollide) {
    using T = TypeParam;
    const Index m = 400, n = 200;
    Gen g(77);
    Mat<double> X = make_data(Family::integers, m, n, 78);
    for (Index i = 1; i < m; ++i) {
        const Index kind = g.below(5);
        if (kind == 0) {
            X.row(i) = X.row(g.below(i));
        } else if (kind == 1) {
            X.row(i) = X.row(g.below(i));
            X(i, 1 + g.below(n - 1)) += 1.0;  // equal but for one column, anywhere
        } else if (kind == 2) {
            X.row(i) = X.row(g.below(i));
            for (Index f = 0; f < n; ++f)
                if (X(i, f) == 0.0) X(i, f) = -0.0;
        }
    }
    for (Index i : {5, 6, 90}) X(i, 3) = std::numeric_limits<double>::quiet_NaN();
    X.row(91) = X.row(90);  // a copy holding NaN: not equal
    for (Index f : {0, 16, 48, 112}) X.col(f).setConstant(1e20);
    for (int classes : {1, 2}) {
        const Codes codes = make_codes(m, classes, 79, false);
        check_groups<T>(X, codes, std::to_string(classes) + " class(es), colliding sums");
    }
    // One set of 7 to 10 different rows (the heads' limit is 8, the sorted path from 9), each
    // copied a few times in a shuffled order, plus NaN in different columns of otherwise equal
    // rows.
    for (Index distinct : {7, 8, 9, 10}) {
        const Index rows = 4 * distinct + 3;
        Mat<double> Y(rows, 40);
        const Mat<double> base = make_data(Family::integers, distinct, 40, 80 + static_cast<std::uint64_t>(distinct));
        for (Index i = 0; i < rows - 3; ++i) Y.row(i) = base.row((i * 11 + 3) % distinct);
        for (Index i = rows - 3; i < rows; ++i) {
            Y.row(i) = base.row(0);
            Y(i, 5 + 7 * (i - (rows - 3))) = std::numeric_limits<double>::quiet_NaN();
        }
        for (Index f : {0, 16}) Y.col(f).setConstant(1e20);
        check_groups<T>(Y, Codes::Zero(rows), std::to_string(distinct) + " different rows in one set");
    }
}

// -0 and +0 are the same value; the rows below have distinct sums only through the sign of a
// zero, which a comparison by bits would split.
TEST(RowGroups, SignedZerosAreEqual) {
    Mat<double> X = Mat<double>::Zero(4, 3);
    X(1, 0) = -0.0;
    X(2, 2) = -0.0;
    X(3, 1) = 1.0;
    Codes codes = Codes::Zero(4);
    const auto G = fastfs::equal_row_groups<double>(X, codes);
    EXPECT_EQ(G.n_groups(), 2);
    EXPECT_EQ(G.group[0], 0);
    EXPECT_EQ(G.group[1], 0);
    EXPECT_EQ(G.group[2], 0);
    EXPECT_EQ(G.group[3], 1);
    EXPECT_EQ(G.size[0], 3);
}

}  // namespace
