// The least-squares criterion (SPEC 5.1): J(S) = -min_b ||y - X_S b||^2, with X's columns and
// y centred first when an intercept is fitted. Removing a column never lowers the residual,
// so J is monotone (branch and bound may use it).
#pragma once
#include <Eigen/Dense>

#include "../search/criterion.hpp"

namespace fastfs {

class LeastSquaresCriterion : public SubsetCriterion {
public:
    // X: m x n, y: m; both copied (column-major), centred when fit_intercept.
    template <class Mat, class Vec>
    LeastSquaresCriterion(const Mat& X, const Vec& y, bool fit_intercept)
        : X_(X.template cast<double>()), y_(y.template cast<double>()) {
        if (fit_intercept) {
            X_.rowwise() -= X_.colwise().mean();
            y_.array() -= y_.mean();
        }
    }

    Index n_features() const override { return X_.cols(); }
    bool monotone() const override { return true; }

    double evaluate(const Subset& S) override {
        Eigen::MatrixXd A(X_.rows(), static_cast<Index>(S.size()));
        for (std::size_t j = 0; j < S.size(); ++j) A.col(static_cast<Index>(j)) = X_.col(S[j]);
        const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
        const Eigen::VectorXd r = y_ - A * qr.solve(y_);
        return -r.squaredNorm();
    }

private:
    Eigen::MatrixXd X_;
    Eigen::VectorXd y_;
};

}  // namespace fastfs
