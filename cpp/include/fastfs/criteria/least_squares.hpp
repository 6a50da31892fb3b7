// The least-squares criterion (SPEC 5.1): J(S) = -min_b ||y - X_S b||^2, with X's columns and
// y centred first when an intercept is fitted (an RSS at the rounding of an exact fit is 0).
// Removing a column never lowers the residual, so J is monotone (branch and bound may use it).
//
// The state is the shared incremental orthonormal basis of OMP (ortho_basis.hpp): with it, J of
// every candidate addition is O(1) (RSS - <u_j, y>^2 / ||u_j||^2) and of every candidate
// removal O(|S|). Committing a move reads X at most once: not at all for a removal, nor for an
// addition whose Gram column an earlier pass computed on the side (the best-scored candidates
// of each scoring are handed to the basis as hints). A column of S that lies in the span of the
// others adds nothing to the fit; it is kept aside (not in the basis), and while there is one,
// removals are scored from scratch, since dropping a basis column could bring it back.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <limits>

#include "../state/ortho_basis.hpp"
#include "criterion.hpp"

namespace fastfs {

class LeastSquaresCriterion : public Criterion {
public:
    // X: m x n, y: m; both copied (column-major), centred when fit_intercept.
    template <class Mat, class Vec>
    LeastSquaresCriterion(const Mat& X, const Vec& y, bool fit_intercept, int n_threads)
        : X_(X.template cast<double>()),
          y_(y.template cast<double>()),
          basis_(center(X_, fit_intercept), center(y_, fit_intercept), kTol, n_threads),
          floor_(kRssFloor * static_cast<double>(y_.size()) * kEps * kEps * y_.squaredNorm()) {
        threads_ = resolve_threads(n_threads);
    }

    Index n_features() const override { return X_.cols(); }
    bool monotone() const override { return true; }

    void reset(const Subset& S) override {
        S_ = S;
        aside_.clear();
        basis_.clear();
        hints_.clear();
        for (std::size_t k = 0; k < S_.size(); ++k) {
            poll();
            if (!basis_.try_add(S_[k], OrthoBasis::following(S_, k))) aside_.push_back(S_[k]);
        }
    }
    void add(Index x) override {
        S_.push_back(x);
        hints_.erase(std::remove(hints_.begin(), hints_.end(), x), hints_.end());
        if (!basis_.try_add(x, hints_)) aside_.push_back(x);
        hints_.clear();
    }
    void remove(Index x) override {
        hints_.clear();  // scored for the set before the removal
        S_.erase(std::find(S_.begin(), S_.end(), x));
        const auto it = std::find(aside_.begin(), aside_.end(), x);
        if (it != aside_.end()) aside_.erase(it);  // the span does not change
        else if (aside_.empty()) basis_.remove(x);
        else reset(S_);
    }
    double current() override { return -clean(basis_.rss()); }

    void score_additions(const Subset& cands, double* out) override {
        const double rss = basis_.rss();
        for (std::size_t i = 0; i < cands.size(); ++i) {
            const double left = rss - basis_.add_gain(cands[i]);
            if (left >= kCancel * rss || rss <= floor_) {  // (an exact fit already: 0)
                out[i] = -clean(left);
            } else {
                // The column explains nearly all of the residual: RSS - gain has lost most of
                // its digits (its error is about eps RSS: 0.02 for a y of 1e6 over 100 rows),
                // so this candidate's RSS is computed from scratch.
                poll();
                Subset T = S_;
                T.push_back(cands[i]);
                std::sort(T.begin(), T.end());
                out[i] = evaluate(T);
            }
        }
        // The best candidates are the likely next additions: handed to the basis as hints, so
        // the pass over X of the coming commit also computes their Gram columns.
        std::vector<std::size_t> order(cands.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        const std::size_t top = std::min<std::size_t>(order.size(), kHints);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top),
                          order.end(), [&](std::size_t a, std::size_t b) {
                              return out[a] > out[b] || (out[a] == out[b] && a < b);
                          });
        hints_.clear();
        for (std::size_t k = 0; k < top; ++k) hints_.push_back(cands[order[k]]);
    }
    void score_removals(const Subset& cands, double* out) override {
        const double rss = basis_.rss();
        for (std::size_t i = 0; i < cands.size(); ++i) {
            if (aside_.empty()) {
                out[i] = -clean(rss + basis_.remove_cost(cands[i]));
            } else {
                poll();
                Subset T = S_;
                T.erase(std::find(T.begin(), T.end(), cands[i]));
                std::sort(T.begin(), T.end());
                out[i] = evaluate(T);
            }
        }
    }

    // From scratch: a rank-revealing QR of X_S. The residual is the part of Q^T y beyond the
    // rank (pivots at most kTol times the largest count as zero), never y - A b with b from
    // the solver: on a rank-deficient X_S (a repeated or a zero column) the solver divides by
    // a pivot that is rounding noise, or by zero, and the residual is lost.
    double evaluate(const Subset& S) override {
        Eigen::MatrixXd A(X_.rows(), static_cast<Index>(S.size()));
        for (std::size_t j = 0; j < S.size(); ++j) A.col(static_cast<Index>(j)) = X_.col(S[j]);
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
        qr.setThreshold(kTol);
        const Index rank = qr.rank();
        Eigen::VectorXd z = y_;
        z.applyOnTheLeft(qr.householderQ().setLength(qr.nonzeroPivots()).adjoint());
        return -clean(z.tail(X_.rows() - rank).squaredNorm());
    }

private:
    // A column whose part outside the span of the others is at most this fraction of its norm
    // is treated as inside the span (OMP's default tol).
    static constexpr double kTol = 1e-10;
    // An RSS below kRssFloor m eps^2 ||y||^2 is rounding: the residual of a y in the span of
    // S is of the order of eps |y| in each of the m entries (an addition's RSS - gain, whose
    // error is about eps RSS, is recomputed when it cancels). It counts as zero, so such a y
    // scores 0 along every route, never -1e-30 on one and +1e-27 on another (a gain that was
    // rounding: "auto" took it and added a noise column). Real residuals stay: eps^2 is
    // 5e-32, so a y of 1e6 over 100 rows keeps any RSS above 3e-15.
    static constexpr double kRssFloor = 64.0;
    // An addition's RSS - gain below this fraction of the RSS is recomputed from scratch.
    static constexpr double kCancel = 1e-4;
    static constexpr double kEps = std::numeric_limits<double>::epsilon();
    // How many of the best-scored additions are kept as hints for the next commit.
    static constexpr std::size_t kHints = 9;

    template <class M>
    static M& center(M& A, bool on) {
        if (on) {
            if constexpr (M::ColsAtCompileTime == 1) A.array() -= A.mean();
            else A.rowwise() -= A.colwise().mean();
        }
        return A;
    }

    double clean(double rss) const { return rss > floor_ ? rss : 0.0; }

    Eigen::MatrixXd X_;
    Eigen::VectorXd y_;
    OrthoBasis basis_;
    double floor_;
    Subset S_, aside_;
    std::vector<Index> hints_;
};

}  // namespace fastfs
