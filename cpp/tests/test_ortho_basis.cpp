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
