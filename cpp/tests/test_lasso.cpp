// The LASSO's two forms (linear/lasso.hpp) must agree on the objective of a trial point, which
// decides whether an extrapolated or Newton point replaces the coordinate-descent iterate: the
// covariance form's 0.5 y'y - v'X'y + 0.5 v' G_SS v + lam ||v||_1 against the residual form's
// 0.5 ||y - X_S v||^2 + lam ||v||_1, on sets small and large against the number of features
// (the covariance form takes a different route for each) and with zeros inside v.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "fastfs/linear/lasso.hpp"

using fastfs::Index;

TEST(Lasso, GramFormTrialObjectiveEqualsTheResidualForm) {
    std::mt19937_64 gen(23);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (Index n : {5, 40, 300}) {
        const Index m = 60;
        Eigen::MatrixXd X(m, n);
        for (Index i = 0; i < m; ++i)
            for (Index j = 0; j < n; ++j) X(i, j) = normal(gen);
        Eigen::VectorXd y(m);
        for (Index i = 0; i < m; ++i) y[i] = normal(gen);
        const Eigen::MatrixXd G = X.transpose() * X;
        const Eigen::VectorXd Xy = X.transpose() * y;
        fastfs::detail::GramForm gram(G, Xy, y.squaredNorm());
        fastfs::detail::DataForm data(X, y, 1);
        for (Index s : {Index{1}, Index{3}, n / 9 + 1, n / 2, n}) {
            std::vector<Index> set;
            for (Index j = 0; j < n && static_cast<Index>(set.size()) < s; ++j)
                if (u(gen) < 0.7 || n - j <= s - static_cast<Index>(set.size())) set.push_back(j);
            Eigen::VectorXd v(static_cast<Index>(set.size()));
            for (Index k = 0; k < v.size(); ++k) v[k] = k % 5 == 2 ? 0.0 : normal(gen);
            const double lam = 0.3;
            const double got = gram.try_objective(v, set, lam);
            const double want = data.try_objective(v, set, lam);
            // Both sum the same quantity in different orders: within rounding of the terms'
            // magnitudes (|X| |v| bounds every residual and product).
            Eigen::VectorXd full = Eigen::VectorXd::Zero(n);
            for (Index k = 0; k < v.size(); ++k) full[set[static_cast<std::size_t>(k)]] = v[k];
            const double scale = y.squaredNorm() + (X.cwiseAbs() * full.cwiseAbs()).squaredNorm() +
                                 Xy.cwiseAbs().dot(full.cwiseAbs()) + 1.0;
            EXPECT_NEAR(got, want, 1e-12 * scale) << "n " << n << " set of " << set.size();
        }
    }
}
