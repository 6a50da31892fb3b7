// relief_sparse.hpp and data/sparse_rows.hpp: the transpose, the sparse distances against the
// dense definitions written here, exact zero distance between duplicate rows, and the sparse
// passes against the dense ones (relief.hpp, relief_radius.hpp, relief_mixed.hpp) on the same
// data, for any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "fastfs/weights/relief.hpp"
#include "fastfs/weights/relief_mixed.hpp"
#include "fastfs/weights/relief_radius.hpp"
#include "fastfs/weights/relief_sparse.hpp"

using fastfs::Index;
using Mat = fastfs::RowMatrix<double>;

namespace {

// CSR arrays of a dense matrix (zeros left out).
fastfs::SparseOwned to_csr(const Mat& X) {
    fastfs::SparseOwned c;
    c.rows = X.rows();
    c.cols = X.cols();
    c.ptr.push_back(0);
    for (Index i = 0; i < X.rows(); ++i) {
        for (Index f = 0; f < X.cols(); ++f)
            if (X(i, f) != 0.0) {
                c.idx.push_back(f);
                c.val.push_back(X(i, f));
            }
        c.ptr.push_back(static_cast<std::int64_t>(c.idx.size()));
    }
    return c;
}

// Sparse counts: about one entry in four, a zero column (2) and duplicate rows (5 = 1, 9 = 1).
Mat counts(Index m, Index n, bool fractional) {
    Mat X = Mat::Zero(m, n);
    std::uint64_t s = 12345;
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            const std::uint64_t r = s >> 33;
            if (f != 2 && r % 4 == 0)
                X(i, f) = static_cast<double>(1 + r % 3) + (fractional ? static_cast<double>(r % 1000) / 997.0 : 0.0);
        }
    X.row(5) = X.row(1);
    X.row(9) = X.row(1);
    return X;
}

std::vector<std::int64_t> labels(Index m, int classes) {
    std::vector<std::int64_t> c(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) c[static_cast<std::size_t>(i)] = (i * 7 + i / 3) % classes;
    return c;
}

}  // namespace

TEST(SparseRows, TransposeListsEachColumnInSampleOrder) {
    const Mat X = counts(12, 6, true);
    const fastfs::SparseOwned c = to_csr(X);
    const fastfs::SparseRef A = c.ref();
    A.validate();
    const fastfs::SparseOwned T = fastfs::transpose(A);
    ASSERT_EQ(T.rows, 6);
    for (Index f = 0; f < 6; ++f) {
        Index p = T.ptr[static_cast<std::size_t>(f)];
        for (Index i = 0; i < 12; ++i)
            if (X(i, f) != 0.0) {
                ASSERT_LT(p, T.ptr[static_cast<std::size_t>(f) + 1]);
                EXPECT_EQ(T.idx[static_cast<std::size_t>(p)], i);
                EXPECT_EQ(T.val[static_cast<std::size_t>(p)], X(i, f));
                ++p;
            }
        EXPECT_EQ(p, T.ptr[static_cast<std::size_t>(f) + 1]);
    }
}

TEST(SparseRelief, DistancesMatchTheDefinitionAndDuplicatesTie) {
    const Index m = 30, n = 8;
    const Mat X = counts(m, n, true);
    const fastfs::SparseOwned c = to_csr(X);
    const fastfs::SparseRef A = c.ref();
    fastfs::SparseReliefOptions o;
    o.codes = labels(m, 2);
    o.discrete = {1, 0, 0, 1, 0, 0, 0, 0};
    const fastfs::SparseRelief D(A, o);
    std::vector<double> range(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) range[static_cast<std::size_t>(f)] = X.col(f).maxCoeff() - X.col(f).minCoeff();
    std::vector<double> dist(static_cast<std::size_t>(m)), s1(2 * dist.size()), s2(s1);
    for (Index i = 0; i < m; ++i) {
        D.distances(i, dist.data(), s1.data(), s2.data());
        for (Index j = 0; j < m; ++j) {
            double mism = 0.0, cont = 0.0;
            for (Index f = 0; f < n; ++f) {
                if (f == 0 || f == 3) mism += X(i, f) != X(j, f) ? 1.0 : 0.0;
                else if (range[static_cast<std::size_t>(f)] > 0) cont += std::abs(X(i, f) - X(j, f)) / range[static_cast<std::size_t>(f)];
            }
            const double expected = mism / 2.0 * static_cast<double>(n) + cont;
            EXPECT_NEAR(dist[static_cast<std::size_t>(j)], expected, 1e-13 * (1.0 + expected));
        }
    }
    D.distances(1, dist.data(), s1.data(), s2.data());
    EXPECT_NEAR(dist[5], 0.0, 1e-25);  // duplicates: zero to the compensated sums' precision
    EXPECT_EQ(dist[5], dist[9]);
    D.distances(0, dist.data(), s1.data(), s2.data());
    EXPECT_EQ(dist[1], dist[5]);  // and exactly as far from any other sample
    EXPECT_EQ(dist[1], dist[9]);
    D.squared_distances(1, dist.data(), s1.data());
    EXPECT_NEAR(dist[5], 0.0, 1e-25);
}

TEST(SparseRelief, PassesEqualTheDensePasses) {
    const Index m = 40, n = 7;
    const Mat X = counts(m, n, true);
    const fastfs::SparseOwned c = to_csr(X);
    const fastfs::SparseRef A = c.ref();
    const std::vector<std::int64_t> codes = labels(m, 3);
    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> cv =
        Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>(codes.data(), m);
    const fastfs::MatrixRef<double> XR(X);
    auto close = [](const std::vector<double>& a, const std::vector<double>& b) {
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t f = 0; f < a.size(); ++f) EXPECT_NEAR(a[f], b[f], 1e-12) << "feature " << f;
    };
    // continuous features, class labels: relief.hpp and relief_radius.hpp
    fastfs::SparseReliefOptions o;
    o.codes = codes;
    o.k = 3;
    o.rule = fastfs::SparseRule::relieff;
    close(fastfs::relief_sparse(A, o, 1), fastfs::relieff(XR, cv, 3, 1));
    const fastfs::SparseRule rules[] = {fastfs::SparseRule::surf, fastfs::SparseRule::surf_star,
                                        fastfs::SparseRule::multisurf,
                                        fastfs::SparseRule::multisurf_star};
    const fastfs::RadiusRule dense_rules[] = {fastfs::RadiusRule::surf, fastfs::RadiusRule::surf_star,
                                              fastfs::RadiusRule::multisurf,
                                              fastfs::RadiusRule::multisurf_star};
    for (int r = 0; r < 4; ++r) {
        o.rule = rules[r];
        const auto a = fastfs::relief_sparse(A, o, 1);
        close(a, fastfs::relief_radius(XR, cv, dense_rules[r], 1));
        const auto b = fastfs::relief_sparse(A, o, 3);
        for (std::size_t f = 0; f < a.size(); ++f) EXPECT_EQ(a[f], b[f]);
    }
    // discrete and continuous features: relief_mixed.hpp
    fastfs::MixedOptions mo;
    mo.discrete = {1, 1, 0, 0, 0, 1, 0};
    mo.codes = codes;
    mo.k = 3;
    o.discrete = mo.discrete;
    o.zero_constant = false;
    const fastfs::MixedRule mixed_rules[] = {fastfs::MixedRule::relieff, fastfs::MixedRule::surf,
                                             fastfs::MixedRule::surf_star,
                                             fastfs::MixedRule::multisurf,
                                             fastfs::MixedRule::multisurf_star};
    const fastfs::SparseRule all[] = {fastfs::SparseRule::relieff, fastfs::SparseRule::surf,
                                      fastfs::SparseRule::surf_star, fastfs::SparseRule::multisurf,
                                      fastfs::SparseRule::multisurf_star};
    for (int r = 0; r < 5; ++r) {
        mo.rule = mixed_rules[r];
        o.rule = all[r];
        close(fastfs::relief_sparse(A, o, 2), fastfs::relief_mixed(XR, mo, 1));
    }
}
