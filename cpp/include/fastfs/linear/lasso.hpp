// LASSO by cyclic coordinate descent with soft thresholding (SPEC 4.2, seed 002 section
// 25.1.3), along a decreasing path of alphas with warm starts. Two forms of the same updates:
// on the data (column-major X and the residual r = y - Xw), or on the covariance (G = X^T X and
// q = X^T y - G w), which is cheaper once n_samples >= n_features.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

struct LassoOptions {
    double tol = 1e-7;   // stop when the duality gap <= tol * ||y||^2 (scikit-learn's rule)
    int max_iter = 1000; // full sweeps per alpha
    int n_threads = 0;
};

struct LassoPathOut {
    Eigen::MatrixXd coefs;       // n_features x n_alphas
    Eigen::VectorXd gaps;        // duality gap at the end of each alpha (objective x n_samples)
    std::vector<int> n_iter;     // full sweeps per alpha
};

namespace detail {

// The two vector operations of a coordinate update, compiled for AVX2 and the baseline (the
// sweeps are sequential, so their speed is these loops' speed).
template <class T>
FASTFS_SIMD_CLONES T cd_dot(const T* __restrict a, const T* __restrict b, Index len) {
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (Index i = 0; i < len; ++i) s += a[i] * b[i];
    return s;
}

template <class T>
FASTFS_SIMD_CLONES void cd_axpy(T alpha, const T* __restrict x, T* __restrict y, Index len) {
#pragma omp simd
    for (Index i = 0; i < len; ++i) y[i] += alpha * x[i];
}

inline double soft_threshold(double x, double lam) {
    return x > lam ? x - lam : (x < -lam ? x + lam : 0.0);
}

// Gap of P(w) = 0.5 ||r||^2 + lam ||w||_1 against the dual point theta = s r, s scaled so that
// ||X^T theta||_inf <= lam: P - D = 0.5 ||r||^2 (1 + s^2) + lam ||w||_1 - s <r, y>.
inline double lasso_gap(double r2, double ry, double xtr_inf, double l1, double lam) {
    const double s = xtr_inf > lam ? lam / xtr_inf : 1.0;
    return 0.5 * r2 * (1.0 + s * s) + lam * l1 - s * ry;
}

// Data form: state r = y - X w.
struct DataForm {
    Eigen::Ref<const Eigen::MatrixXd> X;
    Eigen::Ref<const Eigen::VectorXd> y;
    Eigen::VectorXd col_sq, r, xtr;
    int team;

    DataForm(const Eigen::Ref<const Eigen::MatrixXd>& X_,
             const Eigen::Ref<const Eigen::VectorXd>& y_,
             int n_threads)
        : X(X_), y(y_), col_sq(X_.colwise().squaredNorm().transpose()), r(y_),
          xtr(X_.cols()),
          team(X_.rows() * X_.cols() >= (Index{1} << 20) ? resolve_threads(n_threads) : 1) {}

    Index n() const { return X.cols(); }
    double yy() const { return y.squaredNorm(); }
    void start(const Eigen::VectorXd& w) { r.noalias() = y - X * w; }
    // Returns |change| of w_j.
    double update(Index j, Eigen::VectorXd& w, double lam) {
        if (col_sq[j] == 0.0) return 0.0;
        const double old = w[j];
        const double* xj = X.data() + j * X.outerStride();
        const double rho = cd_dot(xj, r.data(), X.rows()) + col_sq[j] * old;
        const double nw = soft_threshold(rho, lam) / col_sq[j];
        if (nw != old) {
            cd_axpy(old - nw, xj, r.data(), X.rows());
            w[j] = nw;
        }
        return std::abs(nw - old);
    }
    double gap(const Eigen::VectorXd& w, double lam) {
        const Index n = X.cols();
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index j = 0; j < n; ++j)
            xtr[j] = cd_dot(X.data() + j * X.outerStride(), r.data(), X.rows());
        return lasso_gap(r.squaredNorm(), r.dot(y), xtr.cwiseAbs().maxCoeff(), w.lpNorm<1>(), lam);
    }
};

// Covariance form: state q = X^T y - G w = X^T r.
struct GramForm {
    Eigen::Ref<const Eigen::MatrixXd> G;
    Eigen::Ref<const Eigen::VectorXd> Xy;
    double yy_;
    Eigen::VectorXd q;

    GramForm(const Eigen::Ref<const Eigen::MatrixXd>& G_,
             const Eigen::Ref<const Eigen::VectorXd>& Xy_,
             double yy)
        : G(G_), Xy(Xy_), yy_(yy), q(Xy_) {}

    Index n() const { return G.cols(); }
    double yy() const { return yy_; }
    void start(const Eigen::VectorXd& w) { q.noalias() = Xy - G * w; }
    double update(Index j, Eigen::VectorXd& w, double lam) {
        const double gjj = G(j, j);
        if (gjj == 0.0) return 0.0;
        const double old = w[j];
        const double nw = soft_threshold(q[j] + gjj * old, lam) / gjj;
        if (nw != old) {
            cd_axpy(old - nw, G.data() + j * G.outerStride(), q.data(), G.rows());
            w[j] = nw;
        }
        return std::abs(nw - old);
    }
    double gap(const Eigen::VectorXd& w, double lam) const {
        // ||r||^2 = y'y - 2 w'Xy + w'Gw with Gw = Xy - q; <r, y> = y'y - w'Xy.
        const double wxy = w.dot(Xy);
        const double r2 = std::max(0.0, yy_ - wxy - w.dot(q));
        return lasso_gap(r2, yy_ - wxy, q.cwiseAbs().maxCoeff(), w.lpNorm<1>(), lam);
    }
};

// One alpha from the warm start w: a full sweep; then sweeps over the nonzero coefficients
// only (they change most and cost least) until they settle, then a full sweep again. Once a
// full sweep barely moves w, the duality gap decides; when it is still too large, the active
// sweeps go on to a tighter settling threshold (so slow, ill-conditioned problems are not left
// to expensive full sweeps).
template <class Form>
std::pair<int, double> lasso_one(Form& form, Eigen::VectorXd& w, double lam, double gap_tol,
                                 const LassoOptions& opt, const StopHook& stop) {
    const Index n = form.n();
    std::vector<Index> active;
    double gap = std::numeric_limits<double>::infinity();
    double settle = opt.tol;
    int iter = 0;
    while (iter < opt.max_iter) {
        if (stop && stop()) throw Interrupted();
        double dmax = 0.0, wmax = 0.0;
        for (Index j = 0; j < n; ++j) {
            dmax = std::max(dmax, form.update(j, w, lam));
            wmax = std::max(wmax, std::abs(w[j]));
        }
        ++iter;
        if (wmax == 0.0 || dmax <= opt.tol * wmax || iter == opt.max_iter) {
            gap = form.gap(w, lam);
            if (gap <= gap_tol || iter == opt.max_iter) break;
            settle = std::max(settle * 0.1, 1e-15);
        }
        active.clear();
        for (Index j = 0; j < n; ++j)
            if (w[j] != 0.0) active.push_back(j);
        for (int inner = 0; inner < opt.max_iter && !active.empty(); ++inner) {
            double adm = 0.0, awm = 0.0;
            for (Index j : active) {
                adm = std::max(adm, form.update(j, w, lam));
                awm = std::max(awm, std::abs(w[j]));
            }
            if (awm == 0.0 || adm <= settle * awm) break;
        }
    }
    return {iter, gap};
}

template <class Form>
LassoPathOut lasso_path_run(Form& form, const Eigen::Ref<const Eigen::VectorXd>& alphas,
                            double n_samples, const LassoOptions& opt, const StopHook& stop) {
    const Index n = form.n(), k = alphas.size();
    LassoPathOut out;
    out.coefs = Eigen::MatrixXd::Zero(n, k);
    out.gaps = Eigen::VectorXd::Zero(k);
    Eigen::VectorXd w = Eigen::VectorXd::Zero(n);
    form.start(w);
    const double gap_tol = opt.tol * form.yy();
    for (Index a = 0; a < k; ++a) {
        const auto res = lasso_one(form, w, alphas[a] * n_samples, gap_tol, opt, stop);
        out.coefs.col(a) = w;
        out.gaps[a] = res.second;
        out.n_iter.push_back(res.first);
    }
    return out;
}

}  // namespace detail

// Minimises (1 / (2 m)) ||X w - y||^2 + alpha ||w||_1 for each alpha in order (warm starts).
// Gaps are reported on the scale 0.5 ||r||^2 + m alpha ||w||_1, as scikit-learn does.
inline LassoPathOut lasso_path_data(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                    const Eigen::Ref<const Eigen::VectorXd>& y,
                                    const Eigen::Ref<const Eigen::VectorXd>& alphas,
                                    const LassoOptions& opt, const StopHook& stop = {}) {
    require(X.rows() == y.size(), "X and y have different numbers of samples");
    detail::DataForm form(X, y, opt.n_threads);
    return detail::lasso_path_run(form, alphas, static_cast<double>(X.rows()), opt, stop);
}

// The same from G = X^T X, Xy = X^T y, yy = y^T y and m.
inline LassoPathOut lasso_path_gram(const Eigen::Ref<const Eigen::MatrixXd>& G,
                                    const Eigen::Ref<const Eigen::VectorXd>& Xy, double yy,
                                    Index n_samples,
                                    const Eigen::Ref<const Eigen::VectorXd>& alphas,
                                    const LassoOptions& opt, const StopHook& stop = {}) {
    require(G.rows() == G.cols() && G.cols() == Xy.size(), "Gram: shape mismatch");
    detail::GramForm form(G, Xy, yy);
    return detail::lasso_path_run(form, alphas, static_cast<double>(n_samples), opt, stop);
}

}  // namespace fastfs
