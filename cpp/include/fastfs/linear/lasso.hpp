// LASSO by cyclic coordinate descent with soft thresholding (SPEC 4.2, seed 002 section
// 25.1.3), along a decreasing path of alphas with warm starts. Two forms of the same updates:
// on the data (column-major X and the residual r = y - Xw), or on the covariance (G = X^T X and
// q = X^T y - G w), which is cheaper once n_samples >= n_features. Per alpha: Gap Safe
// screening, a working set (nonzero coefficients and violators of the optimality condition),
// sweeps on it accelerated by Anderson extrapolation and by Newton steps on the current face
// (support and signs fixed), and the duality gap over all features as the only stopping rule.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES
#include "../core/parallel.hpp"
#include "../core/progress.hpp"
#include "../core/types.hpp"

namespace fastfs {

struct LassoOptions {
    double tol = 1e-7;   // stop when the duality gap <= tol * ||y||^2 (scikit-learn's rule)
    int max_iter = 1000; // passes over all features per alpha (and sweeps per working set)
    int n_threads = 0;
};

struct LassoPathOut {
    Eigen::MatrixXd coefs;       // n_features x n_alphas
    Eigen::VectorXd gaps;        // duality gap at the end of each alpha (objective x n_samples)
    std::vector<int> n_iter;     // passes over all features (gap evaluations) per alpha
    bool stopped_early = false;  // the progress hook stopped the path (the alphas done so far)
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
    static constexpr bool kCheapGap = false;  // the gap needs X^T r: a pass over X
    Eigen::Ref<const Eigen::MatrixXd> X;
    Eigen::Ref<const Eigen::VectorXd> y;
    Eigen::VectorXd col_sq, r, xtr, r_try;
    double xtr_inf = 0.0;
    int team;

    DataForm(const Eigen::Ref<const Eigen::MatrixXd>& X_,
             const Eigen::Ref<const Eigen::VectorXd>& y_,
             int n_threads)
        : X(X_), y(y_), col_sq(X_.colwise().squaredNorm().transpose()), r(y_),
          xtr(X_.cols()), r_try(X_.rows()),
          team(X_.rows() * X_.cols() >= (Index{1} << 20) ? resolve_threads(n_threads) : 1) {}

    Index n() const { return X.cols(); }
    double yy() const { return y.squaredNorm(); }
    double norm2(Index j) const { return col_sq[j]; }
    // X_j^T r as of the last gap().
    double corr(Index j) const { return xtr[j]; }
    void start(const Eigen::VectorXd& w) { r.noalias() = y - X * w; }
    const double* col(Index j) const { return X.data() + j * X.outerStride(); }
    // Returns |change| of w_j.
    double update(Index j, Eigen::VectorXd& w, double lam) {
        if (col_sq[j] == 0.0) return 0.0;
        const double old = w[j];
        const double rho = cd_dot(col(j), r.data(), X.rows()) + col_sq[j] * old;
        const double nw = soft_threshold(rho, lam) / col_sq[j];
        if (nw != old) {
            cd_axpy(old - nw, col(j), r.data(), X.rows());
            w[j] = nw;
        }
        return std::abs(nw - old);
    }
    void set_zero(Index j, Eigen::VectorXd& w) {
        cd_axpy(w[j], col(j), r.data(), X.rows());
        w[j] = 0.0;
    }
    double gap(const Eigen::VectorXd& w, double lam) {
        const Index n = X.cols();
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index j = 0; j < n; ++j) xtr[j] = cd_dot(col(j), r.data(), X.rows());
        xtr_inf = xtr.cwiseAbs().maxCoeff();
        return lasso_gap(r.squaredNorm(), r.dot(y), xtr_inf, w.lpNorm<1>(), lam);
    }
    // Objective 0.5 ||r||^2 + lam ||w||_1 of the current w (supported on `set`).
    double objective(const Eigen::VectorXd& w, const std::vector<Index>& set, double lam) const {
        double l1 = 0.0;
        for (Index j : set) l1 += std::abs(w[j]);
        return 0.5 * r.squaredNorm() + lam * l1;
    }
    // Objective of v (values of w on `set`, zero elsewhere); accept() then makes it current.
    double try_objective(const Eigen::VectorXd& v, const std::vector<Index>& set, double lam) {
        r_try = y;
        double l1 = 0.0;
        for (std::size_t k = 0; k < set.size(); ++k) {
            if (v[k] != 0.0) cd_axpy(-v[k], col(set[k]), r_try.data(), X.rows());
            l1 += std::abs(v[k]);
        }
        return 0.5 * r_try.squaredNorm() + lam * l1;
    }
    // G_SS = X_S^T X_S and X_S^T y, and the flops that cost.
    double face_cost(Index s) const { return static_cast<double>(X.rows()) * s * s; }
    double sweep_cost(Index s) const { return 2.0 * static_cast<double>(X.rows()) * s; }
    void face_system(const std::vector<Index>& S, Eigen::MatrixXd& A, Eigen::VectorXd& b) {
        const Index s = static_cast<Index>(S.size());
        Xs.resize(X.rows(), s);
        for (Index k = 0; k < s; ++k) Xs.col(k) = X.col(S[static_cast<std::size_t>(k)]);
        A.noalias() = Xs.transpose() * Xs;
        b.noalias() = Xs.transpose() * y;
    }
    Eigen::MatrixXd Xs;
    void accept(const Eigen::VectorXd& v, const std::vector<Index>& set, Eigen::VectorXd& w) {
        r.swap(r_try);
        for (std::size_t k = 0; k < set.size(); ++k) w[set[k]] = v[k];
    }
};

// Covariance form: state q = X^T y - G w = X^T r.
struct GramForm {
    static constexpr bool kCheapGap = true;  // q = X^T r is kept: the gap costs O(n)
    Eigen::Ref<const Eigen::MatrixXd> G;
    Eigen::Ref<const Eigen::VectorXd> Xy;
    double yy_;
    Eigen::VectorXd q, Gv;  // Gv: try_objective()'s G_S v
    double xtr_inf = 0.0;

    GramForm(const Eigen::Ref<const Eigen::MatrixXd>& G_,
             const Eigen::Ref<const Eigen::VectorXd>& Xy_,
             double yy)
        : G(G_), Xy(Xy_), yy_(yy), q(Xy_) {}

    Index n() const { return G.cols(); }
    double yy() const { return yy_; }
    double norm2(Index j) const { return G(j, j); }
    double corr(Index j) const { return q[j]; }
    void start(const Eigen::VectorXd& w) { q.noalias() = Xy - G * w; }
    const double* col(Index j) const { return G.data() + j * G.outerStride(); }
    double update(Index j, Eigen::VectorXd& w, double lam) {
        const double gjj = G(j, j);
        if (gjj == 0.0) return 0.0;
        const double old = w[j];
        const double nw = soft_threshold(q[j] + gjj * old, lam) / gjj;
        if (nw != old) {
            cd_axpy(old - nw, col(j), q.data(), G.rows());
            w[j] = nw;
        }
        return std::abs(nw - old);
    }
    void set_zero(Index j, Eigen::VectorXd& w) {
        cd_axpy(w[j], col(j), q.data(), G.rows());
        w[j] = 0.0;
    }
    double gap(const Eigen::VectorXd& w, double lam) {
        // ||r||^2 = y'y - 2 w'Xy + w'Gw with Gw = Xy - q; <r, y> = y'y - w'Xy.
        const double wxy = w.dot(Xy);
        const double r2 = std::max(0.0, yy_ - wxy - w.dot(q));
        xtr_inf = q.cwiseAbs().maxCoeff();
        return lasso_gap(r2, yy_ - wxy, xtr_inf, w.lpNorm<1>(), lam);
    }
    // 0.5 ||y - X w||^2 + lam ||w||_1 = 0.5 (y'y - w'Xy - w'q) + lam ||w||_1.
    double objective(const Eigen::VectorXd& w, const std::vector<Index>& set, double lam) const {
        double wxy = 0.0, wq = 0.0, l1 = 0.0;
        for (Index j : set) {
            wxy += w[j] * Xy[j];
            wq += w[j] * q[j];
            l1 += std::abs(w[j]);
        }
        return 0.5 * (yy_ - wxy - wq) + lam * l1;
    }
    // 0.5 y'y - v'Xy + 0.5 v' G_SS v + lam ||v||_1. G_SS v from the set's columns of G: on a
    // large set as s vectorised multiply-adds of whole columns (Gv = G_S v over all features,
    // n s products), on a small one by gathering the set's entries of each column (s^2), in four
    // independent sums (one chain of dependent additions was most of a path's time on
    // 1000 x 300 data, where the set grows to every feature).
    double try_objective(const Eigen::VectorXd& v, const std::vector<Index>& set, double lam) {
        const std::size_t s = set.size();
        const Index n = G.rows();
        double vxy = 0.0, vgv = 0.0, l1 = 0.0;
        for (std::size_t k = 0; k < s; ++k) {
            vxy += v[k] * Xy[set[k]];
            l1 += std::abs(v[k]);
        }
        if (static_cast<double>(n) <= 8.0 * static_cast<double>(s)) {
            Gv.setZero(n);
            for (std::size_t k = 0; k < s; ++k)
                if (v[k] != 0.0) cd_axpy(v[k], col(set[k]), Gv.data(), n);
            for (std::size_t k = 0; k < s; ++k) vgv += v[k] * Gv[set[k]];
        } else {
            for (std::size_t k = 0; k < s; ++k) {
                if (v[k] == 0.0) continue;
                const double* gk = col(set[k]);
                double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
                std::size_t l = 0;
                for (; l + 4 <= s; l += 4) {
                    a0 += gk[set[l]] * v[l];
                    a1 += gk[set[l + 1]] * v[l + 1];
                    a2 += gk[set[l + 2]] * v[l + 2];
                    a3 += gk[set[l + 3]] * v[l + 3];
                }
                for (; l < s; ++l) a0 += gk[set[l]] * v[l];
                vgv += v[k] * ((a0 + a1) + (a2 + a3));
            }
        }
        return 0.5 * yy_ - vxy + 0.5 * vgv + lam * l1;
    }
    double face_cost(Index s) const { return static_cast<double>(s) * s; }
    double sweep_cost(Index s) const { return static_cast<double>(G.rows()) * s; }
    void face_system(const std::vector<Index>& S, Eigen::MatrixXd& A, Eigen::VectorXd& b) const {
        const Index s = static_cast<Index>(S.size());
        A.resize(s, s);
        b.resize(s);
        for (Index k = 0; k < s; ++k) {
            const double* gk = col(S[static_cast<std::size_t>(k)]);
            for (Index l = 0; l < s; ++l) A(l, k) = gk[S[static_cast<std::size_t>(l)]];
            b[k] = Xy[S[static_cast<std::size_t>(k)]];
        }
    }
    void accept(const Eigen::VectorXd& v, const std::vector<Index>& set, Eigen::VectorXd& w) {
        for (std::size_t k = 0; k < set.size(); ++k) w[set[k]] = v[k];
        q = Xy;
        for (std::size_t k = 0; k < set.size(); ++k)
            if (v[k] != 0.0) cd_axpy(-v[k], col(set[k]), q.data(), G.rows());
    }
};

// Anderson extrapolation of the coordinate-descent iterates on a fixed working set (Bertrand
// and Massias, "Anderson acceleration of coordinate descent", AISTATS 2021): from the last
// K + 1 iterates, the affine combination whose differences are smallest in least squares.
class Anderson {
public:
    static constexpr int K = 5;
    void reset(Index size) {
        last_.resize(size, K + 1);
        count_ = 0;
    }
    // Records w on the set; true when K + 1 iterates are stored (extrapolate() may be called).
    bool push(const Eigen::VectorXd& w, const std::vector<Index>& set) {
        for (std::size_t k = 0; k < set.size(); ++k) last_(static_cast<Index>(k), count_) = w[set[k]];
        return ++count_ == K + 1;
    }
    // The extrapolated values on the set, or false when the system is degenerate.
    bool extrapolate(Eigen::VectorXd& out) {
        count_ = 0;
        const Eigen::MatrixXd U = last_.rightCols(K) - last_.leftCols(K);
        const Eigen::MatrixXd C = U.transpose() * U;
        Eigen::VectorXd z = C.ldlt().solve(Eigen::VectorXd::Ones(K));
        const double s = z.sum();
        if (!z.allFinite() || !std::isfinite(s) || s == 0.0) return false;
        z /= s;
        out.noalias() = last_.rightCols(K) * z;
        return out.allFinite();
    }

private:
    Eigen::MatrixXd last_;
    int count_ = 0;
};

// Newton step on the current face: with the support S and signs s of w fixed, the objective
// is the quadratic 0.5 w_S' G_SS w_S - w_S' X_S^T y + lam s' w_S, minimised by
// z = G_SS^{-1} (X_S^T y - lam s). The step goes from w towards z up to the first coefficient
// that would change sign (that one stops at zero), as a LARS step does; along the segment the
// quadratic decreases, so the step is taken when it lowers the objective (it fails only by
// rounding or when G_SS is singular). Coordinate descent on ill-conditioned data (correlated
// genes, neighbouring pixels) needs hundreds of sweeps to settle on a face this solves in one.
struct FaceStep {
    std::vector<Index> S;
    Eigen::MatrixXd A;
    Eigen::VectorXd b, v;

    template <class Form>
    bool run(Form& form, Eigen::VectorXd& w, double lam, const std::vector<Index>& ws) {
        S.clear();
        for (Index j : ws)
            if (w[j] != 0.0) S.push_back(j);
        if (S.empty()) return false;
        const Index s = static_cast<Index>(S.size());
        form.face_system(S, A, b);
        for (Index k = 0; k < s; ++k) b[k] -= w[S[static_cast<std::size_t>(k)]] > 0.0 ? lam : -lam;
        const Eigen::LDLT<Eigen::MatrixXd> ldlt(A);
        if (ldlt.info() != Eigen::Success || !(ldlt.rcond() > 1e-12)) return false;
        const Eigen::VectorXd z = ldlt.solve(b);
        if (!z.allFinite()) return false;
        double tau = 1.0;
        for (Index k = 0; k < s; ++k) {
            const double wk = w[S[static_cast<std::size_t>(k)]];
            if ((z[k] > 0.0) != (wk > 0.0)) tau = std::min(tau, wk / (wk - z[k]));
        }
        v.resize(s);
        for (Index k = 0; k < s; ++k) {
            const double wk = w[S[static_cast<std::size_t>(k)]];
            const double p = wk + tau * (z[k] - wk);
            v[k] = (p > 0.0) == (wk > 0.0) && p != 0.0 ? p : 0.0;
            // The coefficient that set tau lands on zero (up to rounding).
            if ((z[k] > 0.0) != (wk > 0.0) && wk / (wk - z[k]) <= tau * (1.0 + 1e-12)) v[k] = 0.0;
        }
        if (!v.allFinite()) return false;
        if (form.try_objective(v, S, lam) < form.objective(w, S, lam)) {
            form.accept(v, S, w);
            return true;
        }
        return false;
    }
};

// Gap Safe screening (Ndiaye, Fercoq, Gramfort and Salmon, JMLR 2017, eq. 11, as scikit-learn
// applies it): with the dual point theta = r / max(lam, ||X^T r||_inf), feature j has w_j = 0
// at the optimum when (1 - |X_j^T theta|) / ||X_j|| > sqrt(2 gap) / lam. `keep` receives the
// features that cannot be excluded (recomputed from all features each time, so a feature that
// rounding excluded once can come back); excluded coefficients are set to zero.
template <class Form>
void gap_safe_screen(Form& form, Eigen::VectorXd& w, double lam, double gap,
                     std::vector<Index>& keep) {
    keep.clear();
    const Index n = form.n();
    const double dual = std::max(lam, form.xtr_inf);
    const double radius = lam > 0.0 ? std::sqrt(2.0 * std::abs(gap)) / lam
                                    : std::numeric_limits<double>::infinity();
    for (Index j = 0; j < n; ++j) {
        const double nj = form.norm2(j);
        if (nj == 0.0) continue;
        if ((1.0 - std::abs(form.corr(j)) / dual) / std::sqrt(nj) <= radius) {
            keep.push_back(j);
        } else if (w[j] != 0.0) {
            form.set_zero(j, w);
        }
    }
}

// One alpha from the warm start w, with a working set (Friedman, Hastie and Tibshirani 2010,
// section 2.6; Massias, Gramfort and Salmon 2018): each outer iteration computes X^T r over all
// features (the duality gap, which decides convergence, and the screening), takes the working
// set = the nonzero coefficients and the features that violate the optimality condition
// |X_j^T r| <= lam, and runs coordinate sweeps on it (Anderson-accelerated) until they settle.
// A feature outside the working set would not move in a sweep, so the working set is a full
// sweep without the O(n_samples) cost of the features that stay at zero. Returns (outer
// iterations, gap).
template <class Form>
std::pair<int, double> lasso_one(Form& form, Eigen::VectorXd& w, double lam, double gap_tol,
                                 const LassoOptions& opt, const StopHook& stop) {
    double gap = form.gap(w, lam);
    if (gap <= gap_tol) return {0, gap};
    std::vector<Index> keep, ws, prev;
    gap_safe_screen(form, w, lam, gap, keep);
    Anderson acc;
    FaceStep newton;
    Eigen::VectorXd v;
    double settle = opt.tol;
    int iter = 0;
    bool done = false;
    while (iter < opt.max_iter && !done) {
        if (stop && stop()) throw Interrupted();
        ws.clear();
        for (Index j : keep)
            if (w[j] != 0.0 || std::abs(form.corr(j)) > lam) ws.push_back(j);
        if (ws.empty()) ws = keep;
        if (ws == prev) settle = std::max(settle * 0.1, 1e-15);
        prev = ws;
        acc.reset(static_cast<Index>(ws.size()));
        double spent = 0.0;
        for (int inner = 0; inner < opt.max_iter; ++inner) {
            double dm = 0.0, wm = 0.0;
            Index nnz = 0;
            bool moved = false;  // a coefficient entered, left or changed sign
            for (Index j : ws) {
                const double old = w[j];
                dm = std::max(dm, form.update(j, w, lam));
                wm = std::max(wm, std::abs(w[j]));
                moved = moved || (old > 0.0) != (w[j] > 0.0) || (old < 0.0) != (w[j] < 0.0);
                nnz += w[j] != 0.0;
            }
            spent += form.sweep_cost(static_cast<Index>(ws.size()));
            if (wm == 0.0 || dm <= settle * wm) break;
            if (Form::kCheapGap && form.gap(w, lam) <= gap_tol) {
                done = true;
                break;
            }
            const double face = form.face_cost(nnz) + static_cast<double>(nnz) * nnz * nnz / 3.0;
            if (!moved && nnz > 0 && spent >= face) {
                spent = 0.0;
                if (newton.run(form, w, lam, ws)) {
                    acc.reset(static_cast<Index>(ws.size()));
                    continue;
                }
            }
            if (acc.push(w, ws) && acc.extrapolate(v)) {
                const double now = form.objective(w, ws, lam);
                if (form.try_objective(v, ws, lam) < now) form.accept(v, ws, w);
            }
        }
        ++iter;
        gap = form.gap(w, lam);
        if (gap <= gap_tol) break;
        done = false;
        gap_safe_screen(form, w, lam, gap, keep);
    }
    return {iter, gap};
}

// Warm start for the next penalty from the last two solutions. On a fixed support with fixed
// signs the solution is affine in the penalty, w(lam) = G_SS^{-1} (X_S^T y - lam sign(w_S))
// (Efron, Hastie, Johnstone and Tibshirani 2004, the LARS path), so extrapolating linearly in
// lam from the previous two penalties is exact while the support holds. Coefficients that
// would change sign stop at zero. The prediction replaces w only when it lowers the objective
// at lam, so it can cost at most the evaluation.
template <class Form>
void predict_on_path(Form& form, Eigen::VectorXd& w, const Eigen::Ref<const Eigen::VectorXd>& w0,
                     double lam0, double lam1, double lam, std::vector<Index>& support,
                     Eigen::VectorXd& v) {
    if (!(lam1 < lam0) || !(lam < lam1)) return;
    const double t = (lam - lam1) / (lam1 - lam0);
    support.clear();
    for (Index j = 0; j < w.size(); ++j)
        if (w[j] != 0.0) support.push_back(j);
    if (support.empty()) return;
    v.resize(static_cast<Index>(support.size()));
    bool moved = false;
    for (std::size_t k = 0; k < support.size(); ++k) {
        const double w1 = w[support[k]];
        const double p = w1 + t * (w1 - w0[support[k]]);
        v[static_cast<Index>(k)] = (p > 0.0) == (w1 > 0.0) ? p : 0.0;
        moved = moved || v[static_cast<Index>(k)] != w1;
    }
    if (!moved || !v.allFinite()) return;
    if (form.try_objective(v, support, lam) < form.objective(w, support, lam))
        form.accept(v, support, w);
}

template <class Form>
LassoPathOut lasso_path_run(Form& form, const Eigen::Ref<const Eigen::VectorXd>& alphas,
                            double n_samples, const LassoOptions& opt, const StopHook& stop,
                            const ProgressHook& progress) {
    const Index n = form.n(), k = alphas.size();
    LassoPathOut out;
    out.coefs = Eigen::MatrixXd::Zero(n, k);
    out.gaps = Eigen::VectorXd::Zero(k);
    Eigen::VectorXd w = Eigen::VectorXd::Zero(n);
    form.start(w);
    const double gap_tol = opt.tol * form.yy();
    std::vector<Index> support;
    Eigen::VectorXd v;
    for (Index a = 0; a < k; ++a) {
        const double lam = alphas[a] * n_samples;
        if (a >= 2) predict_on_path(form, w, out.coefs.col(a - 2), alphas[a - 2] * n_samples,
                                    alphas[a - 1] * n_samples, lam, support, v);
        const auto res = lasso_one(form, w, lam, gap_tol, opt, stop);
        out.coefs.col(a) = w;
        out.gaps[a] = res.second;
        out.n_iter.push_back(res.first);
        if (progress) {  // step a + 1: the support at this alpha (no score: NaN)
            std::vector<Index> nonzero;
            for (Index j = 0; j < n; ++j)
                if (w[j] != 0.0) nonzero.push_back(j);
            if (progress(Progress::selection(0, a + 1, std::numeric_limits<double>::quiet_NaN(),
                                             &nonzero))) {
                out.coefs.conservativeResize(n, a + 1);
                out.gaps.conservativeResize(a + 1);
                out.stopped_early = true;
                break;
            }
        }
    }
    return out;
}

}  // namespace detail

// Minimises (1 / (2 m)) ||X w - y||^2 + alpha ||w||_1 for each alpha in order (warm starts).
// Gaps are reported on the scale 0.5 ||r||^2 + m alpha ||w||_1, as scikit-learn does.
inline LassoPathOut lasso_path_data(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                    const Eigen::Ref<const Eigen::VectorXd>& y,
                                    const Eigen::Ref<const Eigen::VectorXd>& alphas,
                                    const LassoOptions& opt, const StopHook& stop = {},
                                    const ProgressHook& progress = {}) {
    require(X.rows() == y.size(), "X and y have different numbers of samples");
    detail::DataForm form(X, y, opt.n_threads);
    return detail::lasso_path_run(form, alphas, static_cast<double>(X.rows()), opt, stop,
                                  progress);
}

// The same from G = X^T X, Xy = X^T y, yy = y^T y and m.
inline LassoPathOut lasso_path_gram(const Eigen::Ref<const Eigen::MatrixXd>& G,
                                    const Eigen::Ref<const Eigen::VectorXd>& Xy, double yy,
                                    Index n_samples,
                                    const Eigen::Ref<const Eigen::VectorXd>& alphas,
                                    const LassoOptions& opt, const StopHook& stop = {},
                                    const ProgressHook& progress = {}) {
    require(G.rows() == G.cols() && G.cols() == Xy.size(), "Gram: shape mismatch");
    detail::GramForm form(G, Xy, yy);
    return detail::lasso_path_run(form, alphas, static_cast<double>(n_samples), opt, stop,
                                  progress);
}

}  // namespace fastfs
