// Small, fast linear learners on a subset of columns (SPEC 7.1): L2-regularised logistic
// regression (binary and multinomial) by Newton's method with a backtracking line search, and
// ridge regression in closed form. They are the inner loop of the wrapper searches (ORDERED-FS,
// STANDARD-WRAP, RFE): every candidate subset is a fit, started from its parent's weights.
//
// Parametrisation (scikit-learn's LogisticRegression with penalty "l2"):
//   minimise  sum_i logloss_i + 1/(2C) ||W||^2,  the intercepts not penalised.
// Two classes: one weight vector (class 1 against class 0, sigmoid). K > 2 classes: K weight
// vectors (softmax, the symmetric parametrisation); the intercepts are then fixed only up to a
// common constant, and are returned with zero sum (as scikit-learn's lbfgs solver returns them
// when it starts from zero). C must be finite: on linearly separable data the unpenalised
// log-loss has no minimiser (the weights grow without bound).
//
// The weights are a (d + 1) x K' matrix Theta (K' = 1 for two classes, K otherwise): column k
// holds class k's weights on the d columns, then its intercept in the last row.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

// Columns S of a column-major X, as one m x |S| column-major block.
inline Eigen::MatrixXd gather_columns(const Eigen::MatrixXd& X, const std::vector<Index>& S) {
    Eigen::MatrixXd A(X.rows(), static_cast<Index>(S.size()));
    for (std::size_t j = 0; j < S.size(); ++j) A.col(static_cast<Index>(j)) = X.col(S[j]);
    return A;
}

struct LogisticOptions {
    double C = 1.0;
    double tol = 1e-8;  // converged when no weight moves by more than tol * max(1, |Theta|_inf)
    int max_iter = 100;
    const StopHook* stop = nullptr;  // polled every Newton step and CG iteration (Ctrl-C)
};

// Throws Interrupted when the options' stop hook asks to stop.
inline void poll_stop(const LogisticOptions& o) {
    if (o.stop && *o.stop && (*o.stop)()) throw Interrupted();
}

// Above this many columns, two-class fits solve the Newton step by conjugate gradients.
constexpr Index kNewtonCgColumns = 64;
// Above this many weights ((d + 1) x K), multinomial fits do too: the dense Hessian has the
// square of that many entries (3000 columns and 3 classes: 650 MB, and its Cholesky
// factorisation ran for minutes where CG takes a fraction of a second).
constexpr Index kNewtonCgWeights = 256;
// Conjugate-gradient iterations per multinomial Newton step at most (a truncated Newton step
// is still a descent direction; the next steps make up for it).
constexpr Index kCgMaxInner = 200;

struct LogisticFit {
    Eigen::MatrixXd theta;  // (d + 1) x K'
    double loss = 0.0;      // sum of the log-losses at theta (= -ln L)
    Eigen::MatrixXd Z;      // the linear scores A W + b at theta (m x K')
    int n_iter = 0;
    bool converged = false;
};

namespace detail {

inline double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
inline double sigmoid(double z) {
    if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
    const double e = std::exp(z);
    return e / (1.0 + e);
}

// Z = A W + 1 b^T for Theta = [W; b^T].
inline Eigen::MatrixXd linear_scores(const Eigen::MatrixXd& A, const Eigen::MatrixXd& theta) {
    const Index d = A.cols();
    Eigen::MatrixXd Z(A.rows(), theta.cols());
    if (d > 0) Z.noalias() = A * theta.topRows(d);
    else Z.setZero();
    Z.rowwise() += theta.row(d);
    return Z;
}

// Sum of log-losses of the scores Z against labels y.
inline double log_loss_sum(const Eigen::MatrixXd& Z, const Eigen::VectorXi& y) {
    double s = 0.0;
    if (Z.cols() == 1) {
        for (Index i = 0; i < Z.rows(); ++i) s += softplus(Z(i, 0)) - (y[i] == 1 ? Z(i, 0) : 0.0);
        return s;
    }
    for (Index i = 0; i < Z.rows(); ++i) {
        const double mx = Z.row(i).maxCoeff();
        s += mx + std::log((Z.row(i).array() - mx).exp().sum()) - Z(i, y[i]);
    }
    return s;
}

// Backtracking along -step from t = 1, halving t until the Armijo test holds (60 times at
// most); trial(t) returns f at theta - t step. Near the optimum the decrease of a Newton step
// is below the rounding of f: a step that does not raise f by more than `noise` is taken (the
// Armijo test alone would shrink it to nothing and stall at a gradient of ~1e-7). Returns
// whether f went down (or not up beyond rounding); t and f_new are the last trial's.
template <class Trial>
bool backtrack(double f, double slope, double noise, double& t, double& f_new, Trial&& trial) {
    t = 1.0;
    for (int ls = 0; ls < 60; ++ls) {
        f_new = trial(t);
        if (f_new <= f - 1e-4 * t * slope + noise || !(slope > 0)) break;
        t *= 0.5;
    }
    return f_new <= f + noise;
}

// The fallback of the CG paths when a truncated Newton step cannot descend: far from the
// optimum (every probability 0 or 1 after a start with intercepts of +-30 or 45) such a step
// can be huge, or not a descent direction in rounding. The gradient scaled to a largest entry
// of at most 1 descends; false (step untouched) for a zero gradient.
inline bool gradient_step(const Eigen::VectorXd& g, Eigen::VectorXd& step) {
    const double top = g.cwiseAbs().maxCoeff();
    if (!(top > 0)) return false;
    step = g / std::max(1.0, top);
    return true;
}

}  // namespace detail

// Two classes and many columns: Newton's method with the step solved by preconditioned
// conjugate gradients on Hessian-vector products (two passes over A each), never forming the
// (d + 1)^2 Hessian. The step is solved to a relative residual min(0.5, sqrt(|g|)) (Eisenstat
// and Walker's forcing term, superlinear convergence) and to 1e-10 for the final steps.
inline void newton_cg_binary(const Eigen::MatrixXd& A, const Eigen::VectorXi& y, double lam,
                             const LogisticOptions& o, LogisticFit& out) {
    const Index m = A.rows(), d = A.cols();
    Eigen::VectorXd th = out.theta.col(0);
    Eigen::VectorXd yv(m);
    for (Index i = 0; i < m; ++i) yv[i] = y[i] == 1 ? 1.0 : 0.0;
    auto scores = [&](const Eigen::VectorXd& t) {
        Eigen::VectorXd z = A * t.head(d);
        z.array() += t[d];
        return z;
    };
    auto objective = [&](const Eigen::VectorXd& z, const Eigen::VectorXd& t) {
        double f = 0.0;
        for (Index i = 0; i < m; ++i) f += detail::softplus(z[i]) - yv[i] * z[i];
        return f + 0.5 * lam * t.head(d).squaredNorm();
    };
    Eigen::VectorXd z = scores(th), p(m), w(m), g(d + 1), pre(d + 1);
    double f = objective(z, th), gn0 = 1.0;
    for (int it = 0; it < o.max_iter; ++it) {
        poll_stop(o);
        for (Index i = 0; i < m; ++i) {
            p[i] = detail::sigmoid(z[i]);
            w[i] = p[i] * (1.0 - p[i]);
        }
        const Eigen::VectorXd r = p - yv;
        g.head(d).noalias() = A.transpose() * r;
        g.head(d) += lam * th.head(d);
        g[d] = r.sum();
        for (Index j = 0; j < d; ++j) pre[j] = A.col(j).cwiseAbs2().dot(w) + lam;
        pre[d] = std::max(w.sum(), 1e-300);
        auto hess = [&](const Eigen::VectorXd& v) {
            Eigen::VectorXd u = A * v.head(d);
            u.array() += v[d];
            u.array() *= w.array();
            Eigen::VectorXd out_v(d + 1);
            out_v.head(d).noalias() = A.transpose() * u;
            out_v.head(d) += lam * v.head(d);
            out_v[d] = u.sum();
            return out_v;
        };
        // Preconditioned CG for H x = g.
        const double gn = g.norm();
        if (gn == 0.0) {
            out.converged = true;
            break;
        }
        if (it == 0) gn0 = gn;
        const double goal = std::max(std::min(0.1, std::sqrt(gn / gn0)), 1e-10) * gn;
        Eigen::VectorXd x = Eigen::VectorXd::Zero(d + 1), res = g;
        Eigen::VectorXd zr = res.cwiseQuotient(pre), dir = zr;
        double rz = res.dot(zr);
        for (Index k = 0; k < 4 * (d + 1) && res.norm() > goal; ++k) {
            poll_stop(o);
            const Eigen::VectorXd Hd = hess(dir);
            const double alpha = rz / dir.dot(Hd);
            x += alpha * dir;
            res -= alpha * Hd;
            zr = res.cwiseQuotient(pre);
            const double rz_new = res.dot(zr);
            dir = zr + (rz_new / rz) * dir;
            rz = rz_new;
        }
        const double noise = 1e-13 * std::max(1.0, std::abs(f));
        double t = 1.0, f_new = f;
        Eigen::VectorXd zt;
        auto line_search = [&](const Eigen::VectorXd& st) {
            if (!st.allFinite()) return false;
            const Eigen::VectorXd dz = scores(st);
            return detail::backtrack(f, g.dot(st), noise, t, f_new, [&](double tt) {
                zt = z - tt * dz;
                return objective(zt, th - tt * st);
            });
        };
        bool descended = line_search(x);
        if (!descended && detail::gradient_step(g, x)) descended = line_search(x);
        out.n_iter = it + 1;
        if (!descended) {
            out.converged = x.allFinite() &&
                            x.cwiseAbs().maxCoeff() <=
                                std::sqrt(o.tol) * std::max(1.0, th.cwiseAbs().maxCoeff());
            break;
        }
        th -= t * x;
        z = zt;
        f = f_new;
        if (t == 1.0 && x.cwiseAbs().maxCoeff() <= o.tol * std::max(1.0, th.cwiseAbs().maxCoeff())) {
            out.converged = true;
            break;
        }
    }
    out.theta.col(0) = th;
}

// The multinomial Newton step H^-1 g for K > 2 classes and many weights, by preconditioned
// conjugate gradients on Hessian-vector products, never forming the Q x Q Hessian (Q =
// (d + 1) K; g and the step are stored as fit_logistic's, class after class). The product for
// a direction V ((d + 1) x K) is A1^T S with U = A1 V and S_ik = P_ik (U_ik - sum_l P_il U_il)
// (the softmax Jacobian), plus the penalty on the weights and the c v v^T term of the dense
// path along the common shift of the intercepts; `goal` is the residual norm to reach.
//
// The preconditioner scales each column's weights by one number for every class, the mean
// over the classes of the Hessian's diagonal. A per-class diagonal (Jacobi) would leave the
// subspace where the K classes' weights on a column sum to zero: the gradient lies in it and
// the Hessian keeps it, but a common shift of one column's weights in every class leaves the
// log-loss unchanged (curvature lam only), and the Jacobi-scaled residuals reached those
// directions: CG ran to its cap of iterations in every Newton step (2000 x 600 with 4
// classes: 1486 products against 113, and 6691 against 342 with columns at scales spread
// over e^{+-3}).
inline Eigen::VectorXd multinomial_cg_step(const Eigen::MatrixXd& A1, const Eigen::MatrixXd& P,
                                           const Eigen::VectorXd& g, double lam, double goal,
                                           const LogisticOptions& o) {
    const Index q = A1.cols(), d = q - 1, K = P.cols();
    const Eigen::VectorXd w = (P.array() * (1.0 - P.array())).rowwise().sum() /
                              static_cast<double>(K);
    Eigen::VectorXd pre(q);
    for (Index j = 0; j < d; ++j) pre[j] = A1.col(j).cwiseAbs2().dot(w) + lam;
    pre[d] = w.sum();
    // The common shift of the intercepts is given the intercepts' own curvature (not the
    // weights', which hold 1/C: at C = 1e-10 that term swamped the intercepts' preconditioner
    // and CG left them at 0, "converged").
    const double c = std::max(1.0, pre[d]) / static_cast<double>(K);
    pre[d] += c;
    pre = pre.cwiseMax(1e-300);
    const Eigen::VectorXd inv = pre.cwiseInverse();
    auto hess = [&](const Eigen::MatrixXd& V) {
        Eigen::MatrixXd U = A1 * V;
        const Eigen::VectorXd pu = (P.array() * U.array()).rowwise().sum();
        U = P.array() * (U.colwise() - pu).array();
        Eigen::MatrixXd HV = A1.transpose() * U;
        HV.topRows(d) += lam * V.topRows(d);
        HV.row(d).array() += c * V.row(d).sum();
        return HV;
    };
    const Eigen::Map<const Eigen::MatrixXd> G(g.data(), q, K);
    Eigen::VectorXd step = Eigen::VectorXd::Zero(q * K);
    Eigen::Map<Eigen::MatrixXd> x(step.data(), q, K);
    Eigen::MatrixXd res = G, zr = inv.asDiagonal() * res, dir = zr;
    double rz = (res.array() * zr.array()).sum();
    for (Index k = 0; k < std::min<Index>(4 * q * K, kCgMaxInner) && res.norm() > goal; ++k) {
        poll_stop(o);
        const Eigen::MatrixXd Hd = hess(dir);
        const double alpha = rz / (dir.array() * Hd.array()).sum();
        x += alpha * dir;
        res -= alpha * Hd;
        zr.noalias() = inv.asDiagonal() * res;
        const double rz_new = (res.array() * zr.array()).sum();
        dir = zr + (rz_new / rz) * dir;
        rz = rz_new;
    }
    return step;
}

// Two classes and few columns: Newton's method with the (d + 1)^2 Hessian. One exp and one
// log1p per sample and trial point give both the log-loss and the probabilities of the next
// step (the fits of a wrapper search are bound by these transcendentals).
inline void newton_binary_small(const Eigen::MatrixXd& A, const Eigen::VectorXi& y, double lam,
                                const LogisticOptions& o, LogisticFit& out) {
    const Index m = A.rows(), d = A.cols(), q = d + 1;
    Eigen::VectorXd th = out.theta.col(0);
    Eigen::VectorXd yv(m);
    for (Index i = 0; i < m; ++i) yv[i] = y[i] == 1 ? 1.0 : 0.0;
    Eigen::MatrixXd A1(m, q);
    A1.leftCols(d) = A;
    A1.col(d).setOnes();
    // Sum of log-losses at scores zz; pp = the probabilities there.
    auto eval = [&](const Eigen::VectorXd& zz, Eigen::VectorXd& pp) {
        double s = 0.0;
        for (Index i = 0; i < m; ++i) {
            const double e = std::exp(-std::abs(zz[i]));
            s += std::max(zz[i], 0.0) + std::log1p(e) - yv[i] * zz[i];
            pp[i] = zz[i] >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
        }
        return s;
    };
    Eigen::VectorXd z = A1 * th, p(m), zt(m), pt(m), r(m), w(m), g(q);
    double loss = eval(z, p);
    double f = loss + 0.5 * lam * th.head(d).squaredNorm();
    Eigen::MatrixXd B(m, q), H(q, q);
    for (int it = 0; it < o.max_iter; ++it) {
        poll_stop(o);
        r = p - yv;
        w = p.array() * (1.0 - p.array());
        g.noalias() = A1.transpose() * r;
        g.head(d) += lam * th.head(d);
        B = A1.array().colwise() * w.array();
        H.noalias() = A1.transpose() * B;
        H.diagonal().head(d).array() += lam;
        Eigen::LLT<Eigen::MatrixXd> llt(H);
        Eigen::VectorXd step;
        if (llt.info() == Eigen::Success) step = llt.solve(g);
        else step = H.completeOrthogonalDecomposition().solve(g);
        if (!step.allFinite()) break;
        const Eigen::VectorXd dz = A1 * step;
        const double noise = 1e-13 * std::max(1.0, std::abs(f));
        double t = 1.0, f_new = f, loss_new = loss;
        const bool descended =
            detail::backtrack(f, g.dot(step), noise, t, f_new, [&](double tt) {
                zt = z - tt * dz;
                loss_new = eval(zt, pt);
                return loss_new + 0.5 * lam * (th.head(d) - tt * step.head(d)).squaredNorm();
            });
        out.n_iter = it + 1;
        if (!descended) {
            out.converged = step.cwiseAbs().maxCoeff() <=
                            std::sqrt(o.tol) * std::max(1.0, th.cwiseAbs().maxCoeff());
            break;
        }
        th -= t * step;
        z.swap(zt);
        p.swap(pt);
        loss = loss_new;
        f = f_new;
        if (t == 1.0 &&
            step.cwiseAbs().maxCoeff() <= o.tol * std::max(1.0, th.cwiseAbs().maxCoeff())) {
            out.converged = true;
            break;
        }
    }
    out.theta.col(0) = th;
    out.loss = loss;
    out.Z = z;
}

namespace detail {
// Column means to take out before a fit, or an empty vector when no column sits far from zero
// compared with its spread. The intercept is not penalised, so fitting on A - 1 mu^T with the
// intercept b + mu . w is the same problem, exactly; on columns offset by 1e8 the uncentred
// Newton steps stalled after one step at weights of 1e-19 (reported converged), and the L1
// path stopped converging from offsets of 1e3.
// `ratio`: centre when some |mean| exceeds ratio x its range (0: whenever a mean is not 0).
inline Eigen::RowVectorXd offsets_to_centre(const Eigen::MatrixXd& A, double ratio = 4.0) {
    if (A.rows() == 0 || A.cols() == 0) return {};
    const Eigen::RowVectorXd mu = A.colwise().mean();
    const Eigen::RowVectorXd range = A.colwise().maxCoeff() - A.colwise().minCoeff();
    for (Index j = 0; j < A.cols(); ++j)
        if (std::abs(mu[j]) > ratio * range[j]) return mu;
    return {};
}
}  // namespace detail

inline LogisticFit fit_logistic_uncentred(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                          int n_classes, const LogisticOptions& o,
                                          const Eigen::MatrixXd* theta0);

// Fits the model on A (m x d, column-major) and labels y in [0, n_classes). theta0, when not
// null, is the starting point ((d + 1) x K'); otherwise the fit starts from zero. Columns far
// from zero are centred for the fit (detail::offsets_to_centre); theta is of A as given.
inline LogisticFit fit_logistic(const Eigen::MatrixXd& A, const Eigen::VectorXi& y, int n_classes,
                                const LogisticOptions& o, const Eigen::MatrixXd* theta0 = nullptr) {
    const Eigen::RowVectorXd mu = detail::offsets_to_centre(A);
    if (mu.size() == 0) return fit_logistic_uncentred(A, y, n_classes, o, theta0);
    const Index d = A.cols();
    const Eigen::MatrixXd Ac = A.rowwise() - mu;
    Eigen::MatrixXd start;
    if (theta0) {
        require(theta0->rows() == d + 1, "logistic regression: bad start");
        start = *theta0;
        start.row(d) += mu * start.topRows(d);  // b_c = b + mu . w
    }
    LogisticFit out = fit_logistic_uncentred(Ac, y, n_classes, o, theta0 ? &start : nullptr);
    out.theta.row(d) -= mu * out.theta.topRows(d);  // b = b_c - mu . w; Z is unchanged
    if (out.theta.cols() > 1) {
        // the intercepts' common shift stays zero, as without centring (Z moves with it)
        const double shift = out.theta.row(d).mean();
        out.theta.row(d).array() -= shift;
        out.Z.array() -= shift;
    }
    return out;
}

inline LogisticFit fit_logistic_uncentred(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                          int n_classes, const LogisticOptions& o,
                                          const Eigen::MatrixXd* theta0) {
    require(n_classes >= 2, "logistic regression: needs at least 2 classes");
    require(std::isfinite(o.C) && o.C > 0,
            "C: must be finite and > 0 (without a penalty the logistic optimum does not exist "
            "on linearly separable data)");
    require(A.rows() == y.size(), "logistic regression: X and y have different lengths");
    const Index m = A.rows(), d = A.cols();
    const Index K = n_classes == 2 ? 1 : n_classes;
    const Index q = d + 1, Q = q * K;
    const double lam = 1.0 / o.C;
    LogisticFit out;
    if (theta0) {
        require(theta0->rows() == q && theta0->cols() == K, "logistic regression: bad start");
        out.theta = *theta0;
    } else {
        out.theta = Eigen::MatrixXd::Zero(q, K);
    }
    if (K == 1 && d > kNewtonCgColumns) {
        newton_cg_binary(A, y, lam, o, out);
        out.Z = detail::linear_scores(A, out.theta);
        out.loss = detail::log_loss_sum(out.Z, y);
        return out;
    }
    if (K == 1) {
        newton_binary_small(A, y, lam, o, out);
        return out;
    }
    // Many weights: the step by conjugate gradients, no Q x Q Hessian (see multinomial_cg_step)
    const bool cg = Q > kNewtonCgWeights;
    Eigen::MatrixXd Z = detail::linear_scores(A, out.theta);
    auto objective = [&](const Eigen::MatrixXd& Zs, const Eigen::MatrixXd& th) {
        return detail::log_loss_sum(Zs, y) + 0.5 * lam * th.topRows(d).squaredNorm();
    };
    double f = objective(Z, out.theta);
    // A1 = [A, 1]: the design with the intercept column.
    Eigen::MatrixXd A1(m, q);
    A1.leftCols(d) = A;
    A1.col(d).setOnes();
    Eigen::MatrixXd P(m, K), H(cg ? 0 : Q, cg ? 0 : Q), B(cg ? 0 : m, cg ? 0 : q);
    Eigen::VectorXd g(Q), wts(m);
    double gn0 = 1.0;
    for (int it = 0; it < o.max_iter; ++it) {
        poll_stop(o);
        // Probabilities and residuals P - Y.
        if (K == 1) {
            for (Index i = 0; i < m; ++i) P(i, 0) = detail::sigmoid(Z(i, 0));
        } else {
            for (Index i = 0; i < m; ++i) {
                const double mx = Z.row(i).maxCoeff();
                P.row(i) = (Z.row(i).array() - mx).exp();
                P.row(i) /= P.row(i).sum();
            }
        }
        Eigen::MatrixXd R = P;
        for (Index i = 0; i < m; ++i) {
            if (K == 1) R(i, 0) -= (y[i] == 1 ? 1.0 : 0.0);
            else R(i, y[i]) -= 1.0;
        }
        for (Index k = 0; k < K; ++k) {
            g.segment(k * q, q).noalias() = A1.transpose() * R.col(k);
            g.segment(k * q, d) += lam * out.theta.col(k).head(d);
        }
        Eigen::VectorXd step;
        if (cg) {
            // truncated Newton: the CG residual goes down with the gradient (Eisenstat and
            // Walker's forcing term), to 1e-10 of it for the final steps
            const double gn = g.norm();
            if (it == 0) gn0 = gn;
            const double goal =
                gn0 > 0 ? std::max(std::min(0.1, std::sqrt(gn / gn0)), 1e-10) * gn : 0.0;
            step = multinomial_cg_step(A1, P, g, lam, goal, o);
        } else {
            // Hessian blocks A1^T diag(P_k (delta_kl - P_l)) A1.
            H.setZero();
            for (Index k = 0; k < K; ++k) {
                for (Index l = k; l < K; ++l) {
                    if (K == 1) wts = P.col(0).array() * (1.0 - P.col(0).array());
                    else if (k == l) wts = P.col(k).array() * (1.0 - P.col(k).array());
                    else wts = -(P.col(k).array() * P.col(l).array());
                    B = A1.array().colwise() * wts.array();
                    H.block(k * q, l * q, q, q).noalias() = A1.transpose() * B;
                    if (l != k)
                        H.block(l * q, k * q, q, q) = H.block(k * q, l * q, q, q).transpose();
                }
                H.block(k * q, k * q, d, d).diagonal().array() += lam;
            }
            if (K > 1) {
                // The common shift of all intercepts changes nothing: H is singular along it
                // and the gradient orthogonal to it. Adding that direction (v v^T, v =
                // intercepts / sqrt K) makes H invertible without changing the step's other
                // components.
                const double c =
                    std::max(1.0, H.diagonal().maxCoeff()) / static_cast<double>(K);
                for (Index k = 0; k < K; ++k)
                    for (Index l = 0; l < K; ++l) H(k * q + d, l * q + d) += c;
            }
            Eigen::LLT<Eigen::MatrixXd> llt(H);
            if (llt.info() == Eigen::Success) step = llt.solve(g);
            else step = H.completeOrthogonalDecomposition().solve(g);
        }
        const double noise = 1e-13 * std::max(1.0, std::abs(f));
        double t = 1.0, f_new = f;
        Eigen::MatrixXd Zt;
        auto line_search = [&](const Eigen::VectorXd& st) {
            if (!st.allFinite()) return false;
            const Eigen::Map<const Eigen::MatrixXd> S(st.data(), q, K);
            const Eigen::MatrixXd dZ = detail::linear_scores(A, S);
            return detail::backtrack(f, g.dot(st), noise, t, f_new, [&](double tt) {
                Zt = Z - tt * dZ;
                return objective(Zt, out.theta - tt * S);
            });
        };
        // (a truncated Newton step that cannot descend: detail::gradient_step; Newton resumes
        // from the point it reaches)
        bool descended = line_search(step);
        if (!descended && cg && detail::gradient_step(g, step)) descended = line_search(step);
        out.n_iter = it + 1;
        if (!descended) {  // no descent left: at the optimum up to rounding
            out.converged = step.allFinite() &&
                            step.cwiseAbs().maxCoeff() <=
                                std::sqrt(o.tol) * std::max(1.0, out.theta.cwiseAbs().maxCoeff());
            break;
        }
        const Eigen::Map<const Eigen::MatrixXd> S(step.data(), q, K);
        out.theta -= t * S;
        Z = Zt;
        f = f_new;
        if (t == 1.0 && step.cwiseAbs().maxCoeff() <=
            o.tol * std::max(1.0, out.theta.cwiseAbs().maxCoeff())) {
            out.converged = true;
            break;
        }
    }
    if (K > 1) {
        const double shift = out.theta.row(d).mean();
        out.theta.row(d).array() -= shift;
        Z = detail::linear_scores(A, out.theta);
    }
    out.loss = detail::log_loss_sum(Z, y);
    out.Z = std::move(Z);
    return out;
}

// Predicted class per row of the scores Z (two classes: 1 when z > 0; else the first maximum).
inline Eigen::VectorXi predict_classes(const Eigen::MatrixXd& Z) {
    Eigen::VectorXi out(Z.rows());
    for (Index i = 0; i < Z.rows(); ++i) {
        if (Z.cols() == 1) {
            out[i] = Z(i, 0) > 0 ? 1 : 0;
        } else {
            Index k = 0;
            for (Index j = 1; j < Z.cols(); ++j)
                if (Z(i, j) > Z(i, k)) k = j;
            out[i] = static_cast<int>(k);
        }
    }
    return out;
}

// (number of errors, sum of log-losses) of Theta on (A, y).
inline std::pair<Index, double> logistic_errors(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                                const Eigen::MatrixXd& theta) {
    const Eigen::MatrixXd Z = detail::linear_scores(A, theta);
    const Eigen::VectorXi p = predict_classes(Z);
    return {static_cast<Index>((p.array() != y.array()).count()), detail::log_loss_sum(Z, y)};
}

struct RidgeFit {
    Eigen::VectorXd coef;  // d, then the intercept
    double rss = 0.0;
};

// Ridge regression min ||y - A w - b||^2 + alpha ||w||^2 (scikit-learn's Ridge), the intercept
// not penalised. alpha = 0 is least squares (minimum-norm solution when A is rank-deficient).
inline RidgeFit fit_ridge(const Eigen::MatrixXd& A, const Eigen::VectorXd& y, double alpha) {
    require(std::isfinite(alpha) && alpha >= 0, "alpha: must be finite and >= 0");
    const Index m = A.rows(), d = A.cols();
    RidgeFit out;
    out.coef = Eigen::VectorXd::Zero(d + 1);
    const double ym = y.mean();
    const Eigen::VectorXd yc = y.array() - ym;
    if (d > 0) {
        const Eigen::RowVectorXd xm = A.colwise().mean();
        const Eigen::MatrixXd Ac = A.rowwise() - xm;
        Eigen::VectorXd w;
        if (alpha > 0 && d > m) {
            // More columns than rows: the same w from the m x m system of the dual,
            // w = Ac^T (Ac Ac^T + alpha I)^-1 yc (a d x d Gram matrix and its O(d^3)
            // factorisation for 20 samples of 3000 columns took 144 MB and a second).
            Eigen::MatrixXd K = Ac * Ac.transpose();
            K.diagonal().array() += alpha;
            w.noalias() = Ac.transpose() * K.llt().solve(yc);
        } else if (alpha > 0) {
            Eigen::MatrixXd G = Ac.transpose() * Ac;
            G.diagonal().array() += alpha;
            w = G.llt().solve(Ac.transpose() * yc);
        } else {
            w = Ac.completeOrthogonalDecomposition().solve(yc);
        }
        out.coef.head(d) = w;
        out.coef[d] = ym - xm.dot(w);
        out.rss = (yc - Ac * w).squaredNorm();
    } else {
        out.coef[0] = ym;
        out.rss = yc.squaredNorm();
    }
    return out;
}

inline double ridge_sse(const Eigen::MatrixXd& A, const Eigen::VectorXd& y, const Eigen::VectorXd& coef) {
    const Index d = A.cols();
    Eigen::VectorXd r = y.array() - coef[d];
    if (d > 0) r.noalias() -= A * coef.head(d);
    return r.squaredNorm();
}

}  // namespace fastfs

namespace fastfs {

// L1-regularised two-class logistic regression along a path of C (embedded selection):
//   minimise  sum_i logloss_i + ||w||_1 / C,  the intercept not penalised,
// by proximal Newton steps: each outer step fits the quadratic model of the log-loss at the
// current weights (IRLS weights p(1 - p), floored at 1e-5) by cyclic coordinate descent with
// soft thresholding, then backtracks on the true objective. The path runs from the smallest C
// to the largest, each fit warm-started from the previous one.
struct L1PathOut {
    Eigen::MatrixXd coefs;       // d x n_C
    Eigen::VectorXd intercepts;  // n_C
    std::vector<int> n_iter;     // outer (Newton) steps per C
    std::vector<char> converged;
};

inline L1PathOut logistic_l1_path_uncentred(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                            const std::vector<double>& Cs, double tol,
                                            int max_iter, const StopHook& stop);

// Columns far from zero are centred for the path (as for fit_logistic; the L1 penalty is on w
// alone, so the problem is the same): the intercepts are of A as given.
inline L1PathOut logistic_l1_path(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                  const std::vector<double>& Cs, double tol, int max_iter,
                                  const StopHook& stop = {}) {
    // (coordinate descent couples the intercept with every uncentred column: offsets of one
    // range already cost thousands of steps, so the path centres any column off zero)
    const Eigen::RowVectorXd mu = detail::offsets_to_centre(A, 0.0);
    if (mu.size() == 0) return logistic_l1_path_uncentred(A, y, Cs, tol, max_iter, stop);
    const Eigen::MatrixXd Ac = A.rowwise() - mu;
    L1PathOut out = logistic_l1_path_uncentred(Ac, y, Cs, tol, max_iter, stop);
    out.intercepts -= (mu * out.coefs).transpose();
    return out;
}

inline L1PathOut logistic_l1_path_uncentred(const Eigen::MatrixXd& A, const Eigen::VectorXi& y,
                                            const std::vector<double>& Cs, double tol,
                                            int max_iter, const StopHook& stop) {
    const Index m = A.rows(), d = A.cols();
    require(m == y.size(), "logistic regression: X and y have different lengths");
    Eigen::VectorXd yv(m);
    for (Index i = 0; i < m; ++i) yv[i] = y[i] == 1 ? 1.0 : 0.0;
    L1PathOut out;
    out.coefs = Eigen::MatrixXd::Zero(d, static_cast<Index>(Cs.size()));
    out.intercepts = Eigen::VectorXd::Zero(static_cast<Index>(Cs.size()));
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(d);
    const double ybar = std::min(std::max(yv.mean(), 1e-12), 1.0 - 1e-12);
    double b = std::log(ybar / (1.0 - ybar));
    auto objective = [&](const Eigen::VectorXd& eta, const Eigen::VectorXd& be, double lam) {
        double f = 0.0;
        for (Index i = 0; i < m; ++i) f += detail::softplus(eta[i]) - yv[i] * eta[i];
        return f + lam * be.lpNorm<1>();
    };
    Eigen::VectorXd eta = A * beta;
    eta.array() += b;
    for (std::size_t c = 0; c < Cs.size(); ++c) {
        require(std::isfinite(Cs[c]) && Cs[c] > 0, "Cs: every C must be finite and > 0");
        const double lam = 1.0 / Cs[c];
        double f = objective(eta, beta, lam);
        int it = 0;
        bool done = false;
        for (; it < max_iter && !done; ++it) {
            Eigen::VectorXd w(m), z(m);
            for (Index i = 0; i < m; ++i) {
                const double p = detail::sigmoid(eta[i]);
                w[i] = std::max(p * (1.0 - p), 1e-5);
                z[i] = eta[i] + (yv[i] - p) / w[i];
            }
            // Coordinate descent on 1/2 sum w (z - b - A beta)^2 + lam |beta|_1.
            Eigen::VectorXd nb = beta;
            double nbb = b;
            Eigen::VectorXd r = z - eta;  // z - b - A beta at the current point
            Eigen::VectorXd h(d);
            for (Index j = 0; j < d; ++j) h[j] = (A.col(j).array().square() * w.array()).sum();
            const double wsum = w.sum();
            for (int sweep = 0; sweep < 1000; ++sweep) {
                if (stop && stop()) throw Interrupted();
                double change = 0.0;
                const double db = (w.array() * r.array()).sum() / wsum;
                nbb += db;
                r.array() -= db;
                change = std::max(change, std::abs(db) * std::sqrt(wsum));
                for (Index j = 0; j < d; ++j) {
                    if (h[j] <= 0) continue;
                    const double g = (A.col(j).array() * w.array() * r.array()).sum() + h[j] * nb[j];
                    const double v = (g > lam ? g - lam : (g < -lam ? g + lam : 0.0)) / h[j];
                    const double delta = v - nb[j];
                    if (delta != 0.0) {
                        r -= delta * A.col(j);
                        nb[j] = v;
                        change = std::max(change, std::abs(delta) * std::sqrt(h[j]));
                    }
                }
                if (change <= tol * 1e-2) break;
            }
            // Backtracking on the true objective along the proximal Newton direction.
            const Eigen::VectorXd dbeta = nb - beta;
            const double dbb = nbb - b;
            const Eigen::VectorXd deta = A * dbeta + Eigen::VectorXd::Constant(m, dbb);
            double t = 1.0, f_new = f;
            const double noise = 1e-13 * std::max(1.0, std::abs(f));
            for (int ls = 0; ls < 50; ++ls) {
                f_new = objective(eta + t * deta, beta + t * dbeta, lam);
                if (f_new <= f + noise) break;
                t *= 0.5;
            }
            if (!(f_new <= f + noise)) {
                done = true;
                break;
            }
            beta += t * dbeta;
            b += t * dbb;
            eta += t * deta;
            const double step = std::max(dbeta.cwiseAbs().maxCoeff() * t, std::abs(dbb) * t);
            f = f_new;
            if (t == 1.0 && step <= tol * std::max(1.0, beta.cwiseAbs().maxCoeff())) done = true;
        }
        out.coefs.col(static_cast<Index>(c)) = beta;
        out.intercepts[static_cast<Index>(c)] = b;
        out.n_iter.push_back(it);
        out.converged.push_back(done ? 1 : 0);
    }
    return out;
}

}  // namespace fastfs
