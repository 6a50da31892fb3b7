// Class-separability criteria on a feature subset (SPEC 5.3, 5.4): J1, J2, J3 from the scatter
// matrices and the average divergence / Bhattacharyya distance of Gaussian class models. The
// class means and covariances of all features are computed once; a subset's matrices are then
// principal submatrices, so evaluating a subset of size s costs O(classes^2 * s^3), independent
// of the number of samples. Definitions and the singularity rule (rank below d under
// matrix_rank's tolerance, every feature balanced to a variance near 1 first) follow
// fastfs.separability; in a search a singular subset is -inf.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../state/class_stats.hpp"
#include "criterion.hpp"

namespace fastfs {

enum class ScatterKind { j1, j2, j3, divergence, bhattacharyya };

class ScatterCriterion : public SubsetCriterion {
public:
    // X: m x n (any storage), codes in 0 .. n_classes-1, every class non-empty.
    template <class Mat>
    ScatterCriterion(const Mat& X, const Labels& codes, ScatterKind kind, double ridge)
        : kind_(kind), ridge_(ridge), n_(X.cols()) {
        const Index m = X.rows();
        Index c = 0;
        for (Index i = 0; i < m; ++i) c = std::max<Index>(c, codes[i] + 1);
        if (kind == ScatterKind::j1) {
            j1_diagonals(X, codes, c);
            return;
        }
        ClassGaussians g = class_gaussians(X, codes, c);
        priors_ = std::move(g.counts);
        means_ = std::move(g.means);
        covs_ = std::move(g.covs);
        for (double& p : priors_) p /= static_cast<double>(m);
        within_ = Eigen::MatrixXd::Zero(n_, n_);
        for (Index k = 0; k < c; ++k) within_ += priors_[static_cast<std::size_t>(k)] * covs_[static_cast<std::size_t>(k)];
        Eigen::RowVectorXd mu0 = Eigen::RowVectorXd::Zero(n_);
        for (Index k = 0; k < c; ++k) mu0 += priors_[static_cast<std::size_t>(k)] * means_.row(k);
        between_ = Eigen::MatrixXd::Zero(n_, n_);
        offsets_.resize(c, n_);
        for (Index k = 0; k < c; ++k) {
            const Eigen::RowVectorXd o = means_.row(k) - mu0;
            offsets_.row(k) = o;
            between_.noalias() += priors_[static_cast<std::size_t>(k)] * (o.transpose() * o);
        }
        balance();
    }

    Index n_features() const override { return n_; }
    bool monotone() const override { return kind_ != ScatterKind::j1; }

    // Bytes the criterion holds for n features and c classes: c covariances, the within and
    // between scatter matrices, and one more n x n matrix while a class is centred (the memory
    // guard's figure; the centred rows of the largest class, m_c x n, come on top). J1 reads
    // only the diagonals: c means and two vectors.
    static double bytes_needed(Index n, Index c, bool j1 = false) {
        const double nd = static_cast<double>(n);
        if (j1) return 8.0 * (static_cast<double>(c) + 2.0) * nd;
        return 8.0 * (static_cast<double>(c) + 3.0) * nd * nd;
    }

    double evaluate(const Subset& S) override {
        switch (kind_) {
            case ScatterKind::j1: return j1(S);
            case ScatterKind::j2: return j2_j3(S, true);
            case ScatterKind::j3: return j2_j3(S, false);
            case ScatterKind::divergence: return divergence(S);
            case ScatterKind::bhattacharyya: return bhattacharyya(S);
        }
        return kNegInf;
    }

private:
    static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

    // Every feature j scaled by a power of two d_j that brings its pooled within-class variance
    // (+ ridge) into [1/4, 1) (1 where it is 0), as fastfs.separability balances them: J2, J3,
    // the divergence and the Bhattacharyya distance do not change (the ridge is scaled with
    // the feature, ridge d_j^2) and the scaling is exact, but the rank test then compares
    // columns of comparable size. A feature in units 1e8 times the others' made an invertible
    // S_w singular (-inf), so a search's choice depended on the units. J1 is not scale-free: it
    // reads the diagonals unscaled (exact, d_j being a power of two).
    void balance() {
        scale_.assign(static_cast<std::size_t>(n_), 1.0);
        ridges_.assign(static_cast<std::size_t>(n_), ridge_);
        for (Index j = 0; j < n_; ++j) {
            const double v = within_(j, j) + ridge_;
            if (!(v > 0.0) || !std::isfinite(v)) continue;
            int e = 0;
            (void)std::frexp(std::sqrt(v), &e);
            const double d = std::ldexp(1.0, -e);
            scale_[static_cast<std::size_t>(j)] = d;
            ridges_[static_cast<std::size_t>(j)] = ridge_ * d * d;
        }
        const Eigen::Map<const Eigen::VectorXd> d(scale_.data(), n_);
        auto both = [&](Eigen::MatrixXd& A) { A = d.asDiagonal() * A * d.asDiagonal(); };
        both(within_);
        both(between_);
        for (auto& C : covs_) both(C);
        means_ = means_ * d.asDiagonal();
        offsets_ = offsets_ * d.asDiagonal();
    }

    static Eigen::MatrixXd sub(const Eigen::MatrixXd& A, const Subset& S) {
        const Index s = static_cast<Index>(S.size());
        Eigen::MatrixXd B(s, s);
        for (Index i = 0; i < s; ++i)
            for (Index j = 0; j < s; ++j) B(i, j) = A(S[static_cast<std::size_t>(i)], S[static_cast<std::size_t>(j)]);
        return B;
    }
    Eigen::VectorXd sub(Index k, const Subset& S) const {
        Eigen::VectorXd v(static_cast<Index>(S.size()));
        for (std::size_t i = 0; i < S.size(); ++i) v[static_cast<Index>(i)] = means_(k, S[i]);
        return v;
    }

    // The eigenvalues of a symmetric PSD matrix (ascending); false when it is numerically
    // rank-deficient (largest eigenvalue * d * eps, numpy.linalg.matrix_rank's tolerance).
    // Eigenvalues only: a third of the work of a decomposition with vectors; solves and
    // inverses go through a Cholesky factor instead.
    static bool nonsingular(const Eigen::MatrixXd& A, Eigen::VectorXd& w) {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A, Eigen::EigenvaluesOnly);
        if (es.info() != Eigen::Success) return false;
        w = es.eigenvalues();
        const double tol = std::max(w[w.size() - 1], 0.0) * static_cast<double>(A.rows()) *
                           std::numeric_limits<double>::epsilon();
        return (w.array() > tol).all();
    }
    static double logdet(const Eigen::VectorXd& w) { return w.array().log().sum(); }

    // A^-1 B for a symmetric positive definite A: Cholesky, or an eigendecomposition when the
    // factorisation breaks down (A passed the rank test, but a condition number near 1 / (d
    // eps) can still defeat it).
    static Eigen::MatrixXd spd_solve(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
        Eigen::LLT<Eigen::MatrixXd> llt(A);
        if (llt.info() == Eigen::Success) return llt.solve(B);
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A);
        const Eigen::MatrixXd& V = es.eigenvectors();
        return V * (es.eigenvalues().cwiseInverse().asDiagonal() * (V.transpose() * B));
    }
    Eigen::MatrixXd ridged(Eigen::MatrixXd A, const Subset& S) const {
        for (std::size_t i = 0; i < S.size(); ++i)
            A(static_cast<Index>(i), static_cast<Index>(i)) += ridges_[static_cast<std::size_t>(S[i])];
        return A;
    }

    // J1's state: the diagonals of S_w and S_b (per-feature sums of squares over the classes,
    // two passes: class means, then squared deviations), no n x n matrix.
    template <class Mat>
    void j1_diagonals(const Mat& X, const Labels& codes, Index c) {
        const Index m = X.rows();
        const ClassGaussians g = class_means(X, codes, c);
        const std::vector<double>& counts = g.counts;
        const Eigen::MatrixXd& means = g.means;
        within_diag_ = Eigen::VectorXd::Zero(n_);
        for (Index i = 0; i < m; ++i)
            for (Index j = 0; j < n_; ++j) {
                const double e = X(i, j) - means(codes[i], j);
                within_diag_[j] += e * e;
            }
        within_diag_ /= static_cast<double>(m);  // sum_k (m_k / m) S_k's diagonal
        Eigen::RowVectorXd mu0 = Eigen::RowVectorXd::Zero(n_);
        for (Index k = 0; k < c; ++k)
            mu0 += (counts[static_cast<std::size_t>(k)] / static_cast<double>(m)) * means.row(k);
        between_diag_ = Eigen::VectorXd::Zero(n_);
        for (Index k = 0; k < c; ++k)
            between_diag_ += (counts[static_cast<std::size_t>(k)] / static_cast<double>(m)) *
                             (means.row(k) - mu0).array().square().matrix().transpose();
    }

    double j1(const Subset& S) const {
        double tw = 0.0, tb = 0.0;
        for (Index f : S) {
            tw += within_diag_[f];
            tb += between_diag_[f];
        }
        // tr(S_w) = 0: features constant within every class. They separate the classes
        // perfectly when they differ between them (J1 = +inf, the limit), and say nothing
        // when they are constant overall (undefined, -inf). It was -inf in both cases, so
        // a perfectly separating feature ranked last.
        if (!(tw > 0.0)) return tb > 0.0 ? std::numeric_limits<double>::infinity() : kNegInf;
        return (tw + tb) / tw;
    }

    double j2_j3(const Subset& S, bool j2) const {
        const Eigen::MatrixXd W = ridged(sub(within_, S), S);
        Eigen::VectorXd w;
        if (!nonsingular(W, w)) return kNegInf;
        if (j2) {
            // S_m = S_w + S_b is positive definite with S_w: its log-determinant from a
            // Cholesky factor (eigenvalues if that breaks down).
            const Eigen::MatrixXd M = W + sub(between_, S);
            Eigen::LLT<Eigen::MatrixXd> llt(M);
            double logdet_m;
            if (llt.info() == Eigen::Success) {
                logdet_m = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
            } else {
                Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> em(M, Eigen::EigenvaluesOnly);
                logdet_m = logdet(em.eigenvalues());
            }
            return std::exp(logdet_m - logdet(w));
        }
        // tr(S_w^-1 S_m) = d + tr(S_w^-1 S_b) = d + sum_k P_k o_k^T S_w^-1 o_k, with o_k the
        // class offsets mu_k - mu_0 on S: S_b has rank below the number of classes.
        const Index c = offsets_.rows(), d = static_cast<Index>(S.size());
        Eigen::MatrixXd O(d, c);
        for (Index k = 0; k < c; ++k)
            for (Index i = 0; i < d; ++i) O(i, k) = offsets_(k, S[static_cast<std::size_t>(i)]);
        const Eigen::MatrixXd WO = spd_solve(W, O);
        double trace = 0.0;
        for (Index k = 0; k < c; ++k)
            trace += priors_[static_cast<std::size_t>(k)] * O.col(k).dot(WO.col(k));
        return static_cast<double>(d) + trace;
    }

    // Class covariances of S (+ ridge) and their eigenvalues; false when one is singular.
    bool class_models(const Subset& S, std::vector<Eigen::MatrixXd>& covs,
                      std::vector<Eigen::VectorXd>& eigenvalues) const {
        const std::size_t c = priors_.size();
        covs.resize(c);
        eigenvalues.resize(c);
        for (std::size_t k = 0; k < c; ++k) {
            covs[k] = ridged(sub(covs_[k], S), S);
            if (!nonsingular(covs[k], eigenvalues[k])) return false;
        }
        return true;
    }

    double divergence(const Subset& S) const {
        std::vector<Eigen::MatrixXd> covs;
        std::vector<Eigen::VectorXd> eigenvalues;
        if (!class_models(S, covs, eigenvalues)) return kNegInf;
        const Index c = static_cast<Index>(priors_.size());
        const Index d = static_cast<Index>(S.size());
        const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(d, d);
        std::vector<Eigen::MatrixXd> inv;
        for (const auto& C : covs) inv.push_back(spd_solve(C, I));
        double total = 0.0;
        for (Index a = 0; a < c; ++a)
            for (Index b = a + 1; b < c; ++b) {
                const Eigen::VectorXd dm = sub(a, S) - sub(b, S);
                const auto A = static_cast<std::size_t>(a), B = static_cast<std::size_t>(b);
                const double traces = (inv[A].array() * covs[B].array()).sum() +
                                      (inv[B].array() * covs[A].array()).sum();
                const double dab = 0.5 * traces - static_cast<double>(d) +
                                   0.5 * dm.dot((inv[A] + inv[B]) * dm);
                total += 2.0 * priors_[A] * priors_[B] * dab;
            }
        return total;
    }

    double bhattacharyya(const Subset& S) const {
        std::vector<Eigen::MatrixXd> covs;
        std::vector<Eigen::VectorXd> eigenvalues;
        if (!class_models(S, covs, eigenvalues)) return kNegInf;
        const Index c = static_cast<Index>(priors_.size());
        double total = 0.0, weight = 0.0;
        for (Index a = 0; a < c; ++a)
            for (Index b = a + 1; b < c; ++b) {
                const auto A = static_cast<std::size_t>(a), B = static_cast<std::size_t>(b);
                const Eigen::VectorXd dm = sub(a, S) - sub(b, S);
                // The average of two positive definite matrices: its Cholesky factor gives
                // both the Mahalanobis term and the log-determinant.
                const Eigen::MatrixXd avg = 0.5 * (covs[A] + covs[B]);
                double mahalanobis, logdet_avg;
                Eigen::LLT<Eigen::MatrixXd> llt(avg);
                if (llt.info() == Eigen::Success) {
                    const Eigen::VectorXd z = llt.matrixL().solve(dm);
                    mahalanobis = z.squaredNorm();
                    logdet_avg = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
                } else {
                    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> e(avg);
                    const Eigen::VectorXd proj = e.eigenvectors().transpose() * dm;
                    mahalanobis = (proj.array().square() / e.eigenvalues().array()).sum();
                    logdet_avg = logdet(e.eigenvalues());
                }
                const double bab = mahalanobis / 8.0 +
                                   0.5 * (logdet_avg - 0.5 * (logdet(eigenvalues[A]) +
                                                              logdet(eigenvalues[B])));
                total += 2.0 * priors_[A] * priors_[B] * bab;
                weight += 2.0 * priors_[A] * priors_[B];
            }
        return total / weight;
    }

    ScatterKind kind_;
    double ridge_;
    Index n_;
    std::vector<double> priors_;
    Eigen::MatrixXd means_, offsets_;  // class means and mu_k - mu_0, classes x features
    std::vector<Eigen::MatrixXd> covs_;
    Eigen::MatrixXd within_, between_;
    Eigen::VectorXd within_diag_, between_diag_;  // J1 only
    std::vector<double> scale_, ridges_;  // d_j, and ridge d_j^2 (see balance())
};

}  // namespace fastfs
