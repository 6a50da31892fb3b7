// Criteria built on the linear learners (SPEC 7.2): the learner is fitted on the subset's
// columns of the fit rows and judged by
//   train_error   : its error on the rows it was fitted on,
//   holdout_error : its error on other rows,
//   aic / bic     : -(2K - 2 ln L) / -(K ln N - 2 ln L), L the likelihood at the fitted weights.
// Classification (logistic): the error is the 0/1 error rate with ties broken by the mean
// log-loss l on the same rows: J = -(errors + l / (1 + l)) / rows, so -J rounds down to the
// error count over rows. Regression (ridge): J = -mean squared error. AIC/BIC count
// K = (|S| + 1) (K' classes' columns, 1 for two classes) parameters; the Gaussian model of a
// real target uses least squares (ln L = -N/2 (ln(2 pi RSS / N) + 1)).
//
// A child subset's fit starts from its parent's weights (0 for a new feature, the feature's
// row dropped for a removal); the weights of every subset fitted recently are kept, keyed by
// the sorted subset, so a beam's next level starts from them too.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "../linear/logistic.hpp"
#include "criterion.hpp"

namespace fastfs {

enum class LearnerScore { train_error, holdout_error, aic, bic };

class LearnerCriterion : public Criterion {
public:
    // X: m x n (any layout). fit_rows / score_rows: row indices (score_rows ignored for
    // train_error, aic, bic). codes (classification, n_classes >= 2) or y (regression).
    template <class Mat>
    LearnerCriterion(const Mat& X, const std::vector<Index>& fit_rows,
                     const std::vector<Index>& score_rows, const Eigen::VectorXi* codes,
                     const Eigen::VectorXd* y, int n_classes, LearnerScore score, double C,
                     double alpha, int n_threads)
        : score_(score), n_classes_(n_classes), classify_(codes != nullptr), alpha_(alpha) {
        threads_ = resolve_threads(n_threads);
        opt_.C = C;
        const bool holdout = score == LearnerScore::holdout_error;
        require(!fit_rows.empty(), "criterion: no rows to fit on");
        require(!holdout || !score_rows.empty(), "criterion: no rows to score on");
        Xfit_ = take(X, fit_rows);
        if (holdout) Xscore_ = take(X, score_rows);
        if (classify_) {
            require(n_classes >= 2, "criterion: needs at least 2 classes");
            require(std::isfinite(C) && C > 0,
                    "C: must be finite and > 0 (without a penalty the logistic optimum does "
                    "not exist on linearly separable data)");
            cfit_ = pick(*codes, fit_rows);
            if (holdout) cscore_ = pick(*codes, score_rows);
        } else {
            require(y != nullptr, "criterion: needs class labels or real targets");
            require(std::isfinite(alpha) && alpha >= 0, "alpha: must be finite and >= 0");
            yfit_ = pick(*y, fit_rows);
            if (holdout) yscore_ = pick(*y, score_rows);
        }
    }

    Index n_features() const override { return Xfit_.cols(); }

    void reset(const Subset& S) override { S_ = S; }
    void add(Index x) override { S_.push_back(x); }
    void remove(Index x) override { S_.erase(std::find(S_.begin(), S_.end(), x)); }
    double current() override { return evaluate_from(S_, start_for(S_)); }

    void score_additions(const Subset& cands, double* out) override {
        const Eigen::MatrixXd parent = start_for(S_);
        score_moves(cands, out, parent, true);
    }
    void score_removals(const Subset& cands, double* out) override {
        const Eigen::MatrixXd parent = start_for(S_);
        score_moves(cands, out, parent, false);
    }

    double evaluate(const Subset& S) override { return evaluate_from(S, Eigen::MatrixXd()); }

private:
    template <class Mat>
    static Eigen::MatrixXd take(const Mat& X, const std::vector<Index>& rows) {
        Eigen::MatrixXd out(static_cast<Index>(rows.size()), X.cols());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            require_index(rows[i] >= 0 && rows[i] < X.rows(), "criterion: row out of range");
            out.row(static_cast<Index>(i)) = X.row(rows[i]).template cast<double>();
        }
        return out;
    }
    template <class V>
    static V pick(const V& v, const std::vector<Index>& rows) {
        V out(static_cast<Index>(rows.size()));
        for (std::size_t i = 0; i < rows.size(); ++i) out[static_cast<Index>(i)] = v[rows[i]];
        return out;
    }

    Index width() const { return classify_ ? (n_classes_ == 2 ? 1 : n_classes_) : 1; }

    // Cached weights of S in S's order (empty matrix when unknown).
    Eigen::MatrixXd start_for(const Subset& S) {
        if (!classify_) return {};
        Subset key = S;
        std::sort(key.begin(), key.end());
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = cache_.find(key);
        if (it == cache_.end()) return {};
        // The cache holds the rows in sorted order: permute to S's order.
        Eigen::MatrixXd th(static_cast<Index>(S.size()) + 1, width());
        for (std::size_t j = 0; j < S.size(); ++j) {
            const Index pos = std::lower_bound(key.begin(), key.end(), S[j]) - key.begin();
            th.row(static_cast<Index>(j)) = it->second.row(pos);
        }
        th.row(static_cast<Index>(S.size())) = it->second.row(static_cast<Index>(key.size()));
        return th;
    }

    void remember(const Subset& S, const Eigen::MatrixXd& theta) {
        Subset key = S;
        std::vector<std::size_t> order(S.size());
        for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return S[a] < S[b]; });
        Eigen::MatrixXd th(theta.rows(), theta.cols());
        for (std::size_t j = 0; j < order.size(); ++j) {
            key[j] = S[order[j]];
            th.row(static_cast<Index>(j)) = theta.row(static_cast<Index>(order[j]));
        }
        th.row(theta.rows() - 1) = theta.row(theta.rows() - 1);
        std::lock_guard<std::mutex> lock(mutex_);
        cache_[key] = th;
    }

    double evaluate_from(const Subset& S, const Eigen::MatrixXd& start) {
        const Eigen::MatrixXd A = gather_columns(Xfit_, S);
        const double N = static_cast<double>(Xfit_.rows());
        const double K = static_cast<double>((static_cast<Index>(S.size()) + 1) * width());
        if (!classify_) {
            const bool ls = score_ == LearnerScore::aic || score_ == LearnerScore::bic;
            const RidgeFit r = fit_ridge(A, yfit_, ls ? 0.0 : alpha_);
            if (score_ == LearnerScore::train_error) return -r.rss / N;
            if (score_ == LearnerScore::holdout_error) {
                const Eigen::MatrixXd B = gather_columns(Xscore_, S);
                return -ridge_sse(B, yscore_, r.coef) / static_cast<double>(B.rows());
            }
            const double lnL = -0.5 * N * (std::log(2.0 * kPi * r.rss / N) + 1.0);
            return score_ == LearnerScore::aic ? 2.0 * lnL - 2.0 * K : 2.0 * lnL - K * std::log(N);
        }
        const LogisticFit f = fit_logistic(A, cfit_, n_classes_, opt_, start.size() ? &start : nullptr);
        remember(S, f.theta);
        switch (score_) {
            case LearnerScore::aic: return -2.0 * f.loss - 2.0 * K;
            case LearnerScore::bic: return -2.0 * f.loss - K * std::log(N);
            case LearnerScore::train_error: {  // the fit's own scores and loss
                const Eigen::VectorXi p = predict_classes(f.Z);
                return error_score(static_cast<Index>((p.array() != cfit_.array()).count()),
                                   f.loss, A.rows());
            }
            case LearnerScore::holdout_error: {
                const Eigen::MatrixXd B = gather_columns(Xscore_, S);
                const auto e = logistic_errors(B, cscore_, f.theta);
                return error_score(e.first, e.second, B.rows());
            }
        }
        return 0.0;
    }

    static double error_score(Index errors, double loss_sum, Index rows) {
        const double l = loss_sum / static_cast<double>(rows);
        return -(static_cast<double>(errors) + l / (1.0 + l)) / static_cast<double>(rows);
    }

    // Each candidate starts from the parent's weights with the moved feature's row inserted
    // (zero) or dropped.
    void score_moves(const Subset& cands, double* out, const Eigen::MatrixXd& parent, bool add) {
        const Index c = static_cast<Index>(cands.size());
        // Emptied between scorings only (never while candidates run in parallel), so which
        // weights a later fit starts from does not depend on the thread count.
        if (cache_.size() > kCacheLimit) cache_.clear();
        auto one = [&](Index i) {
            const Index x = cands[static_cast<std::size_t>(i)];
            Subset T = S_;
            Eigen::MatrixXd start;
            if (add) {
                T.push_back(x);
                if (parent.size()) {
                    start = Eigen::MatrixXd::Zero(parent.rows() + 1, parent.cols());
                    start.topRows(parent.rows() - 1) = parent.topRows(parent.rows() - 1);
                    start.row(start.rows() - 1) = parent.row(parent.rows() - 1);
                }
            } else {
                const Index pos = std::find(T.begin(), T.end(), x) - T.begin();
                T.erase(T.begin() + pos);
                if (parent.size()) {
                    start.resize(parent.rows() - 1, parent.cols());
                    Index r = 0;
                    for (Index k = 0; k < parent.rows(); ++k)
                        if (k != pos) start.row(r++) = parent.row(k);
                }
            }
            out[i] = evaluate_from(T, start);
        };
        for_each_candidate(c, true, one);
    }

    static constexpr std::size_t kCacheLimit = 1u << 18;
    static constexpr double kPi = 3.14159265358979323846;

    LearnerScore score_;
    int n_classes_;
    bool classify_;
    double alpha_;
    LogisticOptions opt_;
    Eigen::MatrixXd Xfit_, Xscore_;
    Eigen::VectorXi cfit_, cscore_;
    Eigen::VectorXd yfit_, yscore_;
    Subset S_;
    std::map<Subset, Eigen::MatrixXd> cache_;
    std::mutex mutex_;
};

}  // namespace fastfs
