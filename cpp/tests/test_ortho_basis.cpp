// state/ortho_basis.hpp: adding a column from the part explicit_part computed (try_add_explicit,
// what OMP's float32 screen does for its pick) builds the basis try_add builds, up to rounding:
// the same residual, coefficients and a Q with orthonormal columns, X_I = Q R.
#include <gtest/gtest.h>

#include <vector>

#include <Eigen/Dense>

#include "fastfs/state/ortho_basis.hpp"
#include "reference.hpp"

using fastfs::Index;
using fastfs::OrthoBasis;
using fastfs_test::Gen;

TEST(OrthoBasis, TryAddExplicitMatchesTryAdd) {
    Gen g(11);
    const Index m = 40, n = 12;
    Eigen::MatrixXd X(m, n);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i) X(i, j) = g.normal();
    X.col(5) = X.col(1) + 1e-3 * X.col(9);  // nearly in the span: the second projection runs
    Eigen::VectorXd y(m);
    for (Index i = 0; i < m; ++i) y[i] = g.normal();
    const std::vector<Index> order = {3, 1, 7, 5, 0, 10};
    OrthoBasis a(X, y, 1e-10, 1), b(X, y, 1e-10, 1, OrthoBasis::Track::basis_only);
    Eigen::VectorXd u, h, s;
    for (Index j : order) {
        ASSERT_TRUE(a.try_add(j));
        double corr = 0.0;
        const double nj = b.explicit_part(j, u, h, &corr, &s);
        EXPECT_NEAR(nj, u.squaredNorm(), 1e-12 * nj);
        EXPECT_NEAR(corr, u.dot(b.residual()), 1e-12);
        ASSERT_TRUE(b.try_add_explicit(j, u, s));
        EXPECT_NEAR(a.rss(), b.rss(), 1e-10 * a.rss());
    }
    EXPECT_EQ(a.selected(), b.selected());
    const Eigen::VectorXd ca = a.coef(), cb = b.coef();
    EXPECT_LE((ca - cb).cwiseAbs().maxCoeff(), 1e-9 * ca.cwiseAbs().maxCoeff());
    const Index t = b.size();
    const Eigen::MatrixXd Q = b.basis_vectors();
    EXPECT_LE((Q.transpose() * Q - Eigen::MatrixXd::Identity(t, t)).cwiseAbs().maxCoeff(), 1e-13);
    // A part that does not match the basis is refused; a column already in the set is not added.
    EXPECT_THROW(b.try_add_explicit(2, u, Eigen::VectorXd::Zero(t + 1)), std::invalid_argument);
    double corr = 0.0;
    b.explicit_part(2, u, h, &corr, &s);
    EXPECT_FALSE(b.try_add_explicit(3, u, s));
    EXPECT_EQ(b.size(), t);
}

// OMP's staged candidates: column_products gives h = Q^T X_j (checked against Eigen on the
// basis) and X_j, and explicit_part_from continuing from them returns explicit_part's u, s,
// ||u||^2 and <u, r> bit for bit, for columns that take one Gram-Schmidt pass and for columns
// mostly in the span (two passes). Mean-dominated columns (every value near 480, as raw
// MADELON) are the case where the second pass always runs.
TEST(OrthoBasis, ExplicitPartFromProductsIsExplicitPart) {
    Gen g(12);
    const Index m = 300, n = 10;
    Eigen::MatrixXd X(m, n);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i) X(i, j) = (j < 5 ? 480.0 : 0.0) + g.normal();
    Eigen::VectorXd y(m);
    for (Index i = 0; i < m; ++i) y[i] = g.normal();
    OrthoBasis b(X, y, 1e-10, 1, OrthoBasis::Track::basis_only);
    Eigen::VectorXd u, h, s, w, h0, u2, h2, s2;
    for (Index added : {0, 6, 2}) {
        for (Index j = 0; j < n; ++j) {
            if (b.in_set(j)) continue;
            double c1 = 0.0, c2 = 0.0;
            const double n1 = b.explicit_part(j, u, h, &c1, &s);
            b.column_products(j, w, h0);
            ASSERT_EQ(h0.size(), b.size());
            if (b.size() > 0) {
                const Eigen::VectorXd want = b.basis_vectors().transpose() * X.col(j);
                EXPECT_LE((h0 - want).cwiseAbs().maxCoeff(), 1e-9 * X.col(j).norm());
            }
            EXPECT_TRUE(w == X.col(j));  // the column it read, for explicit_part_from
            const double n2 = b.explicit_part_from(j, h0, u2, h2, &c2, s2);
            EXPECT_EQ(n1, n2);
            EXPECT_EQ(c1, c2);
            EXPECT_TRUE(u == u2);
            EXPECT_TRUE(s == s2);
            double c3 = 0.0;
            Eigen::VectorXd u3, h3, s3;
            const double n3 = b.explicit_part_from(j, h0, u3, h3, &c3, s3, &w);
            EXPECT_EQ(n1, n3);
            EXPECT_EQ(c1, c3);
            EXPECT_TRUE(u == u3);
            EXPECT_TRUE(s == s3);
            // ||u||^2 = ||X_j||^2 - ||Q^T X_j||^2, the identity the staged bound rests on.
            EXPECT_NEAR(n1, X.col(j).squaredNorm() - h0.squaredNorm(),
                        1e-10 * X.col(j).squaredNorm());
        }
        ASSERT_TRUE(b.try_add(added));
    }
    EXPECT_THROW(b.explicit_part_from(1, Eigen::VectorXd::Zero(1), u, h, nullptr, s),
                 std::invalid_argument);
    b.column_products(1, w, h0);
    const Eigen::VectorXd short_x = w.head(m - 1);
    EXPECT_THROW(b.explicit_part_from(1, h0, u, h, nullptr, s, &short_x), std::invalid_argument);
}
