// The incremental orthonormal basis of a selected column set I of X (SPEC 4.1): Q with
// X_I = Q R, the residual r = y - Q Q^T y, and for EVERY column j the two numbers the greedy
// least-squares rules need, c_j = <X_j, r> (= <u_j, y>) and n_j = ||u_j||^2, u_j being the part
// of X_j orthogonal to span(X_I). Shared by OMP, backward elimination and the least-squares
// criterion of the sequential searches.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "errors.hpp"
#include "pair_kernels.hpp"  // FASTFS_SIMD_CLONES: AVX2 and baseline builds of a loop
#include "parallel.hpp"
#include "types.hpp"

namespace fastfs {

namespace detail {
// Four column dot products against one vector: q is loaded once per four columns, which is
// what the pass over X per round is bound by besides X itself. Compiled for AVX2 and the
// baseline, picked at load time (the order of the sums is fixed for a given CPU, whatever the
// thread count).
template <class T>
FASTFS_SIMD_CLONES void dot4(const T* __restrict x0, const T* __restrict x1,
                             const T* __restrict x2, const T* __restrict x3,
                             const T* __restrict q, Index m, T* out) {
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (Index i = 0; i < m; ++i) {
        const T v = q[i];
        s0 += x0[i] * v;
        s1 += x1[i] * v;
        s2 += x2[i] * v;
        s3 += x3[i] * v;
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}
}  // namespace detail

class OrthoBasis {  // float64
    template <class D>
    static constexpr bool direct_column_major() {
        return (D::Flags & Eigen::DirectAccessBit) != 0 && D::InnerStrideAtCompileTime == 1 &&
               ((D::Flags & Eigen::RowMajorBit) == 0 || D::ColsAtCompileTime == 1) &&
               std::is_same_v<typename D::Scalar, double>;
    }

public:
    using MatrixCRef = Eigen::Ref<const Eigen::MatrixXd>;  // column-major: columns are contiguous
    using VectorCRef = Eigen::Ref<const Eigen::VectorXd>;

    // Borrowing must not bind to a temporary: a row-major matrix or an expression would be
    // converted into a copy that dies with the constructor call. Refused at compile time.
    template <class DX, class DY,
              std::enable_if_t<!(direct_column_major<DX>() && direct_column_major<DY>()), int> = 0>
    OrthoBasis(const Eigen::MatrixBase<DX>&, const Eigen::MatrixBase<DY>&, double,
               int = 0) = delete;

    // X (m x n, column-major) and y (length m) are borrowed: the caller keeps them alive.
    // tol is RELATIVE to each column's own norm: X_j is addable while ||u_j|| > tol * ||X_j||
    // (a zero column never is). n_threads: 0 = the OpenMP runtime's default.
    OrthoBasis(MatrixCRef X, VectorCRef y, double tol, int n_threads = 0)
        : X_(X), y_(y), tol_(tol), n_threads_(n_threads) {
        require(X_.rows() == y_.size(), "X and y have different numbers of samples");
        require(X_.rows() >= 1 && X_.cols() >= 1, "X: needs at least one sample and one feature");
        require(tol >= 0 && std::isfinite(tol), "tol: must be finite and >= 0");
        const Index n = X_.cols();
        col_sq_.resize(n);
        c_.resize(n);
        n_.resize(n);
        ref_n_.resize(n);
        state_.assign(static_cast<std::size_t>(n), kFree);
        pos_.assign(static_cast<std::size_t>(n), -1);
        const int team = team_size();
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index j = 0; j < n; ++j) col_sq_[j] = X_.col(j).squaredNorm();
        reset_state();
    }

    Index size() const { return static_cast<Index>(selected_.size()); }
    Index n_features() const { return X_.cols(); }
    Index n_samples() const { return X_.rows(); }
    const std::vector<Index>& selected() const { return selected_; }
    double tol() const { return tol_; }

    // ||y - P_I y||^2 from the explicitly kept residual (no cancellation against ||y||^2).
    double rss() const { return r_.squaredNorm(); }
    const Eigen::VectorXd& residual() const { return r_; }

    bool in_set(Index j) const { return pos_[static_cast<std::size_t>(j)] >= 0; }

    bool addable(Index j) const {
        return state_[static_cast<std::size_t>(j)] == kFree && n_[j] > tol_ * tol_ * col_sq_[j];
    }

    // RSS(I) - RSS(I + j) = <u_j, y>^2 / ||u_j||^2 (0 if not addable). O(1), const, thread-safe.
    double add_gain(Index j) const { return addable(j) ? c_[j] * c_[j] / n_[j] : 0.0; }

    // <X_j, r>: the gradient of RSS / 2 along coordinate j, also <u_j, y>. 0 for j in I.
    double correlation(Index j) const { return c_[j]; }
    // ||u_j||^2 (0 for j in I) and ||X_j||^2.
    double residual_sq_norm(Index j) const { return n_[j]; }
    double column_sq_norm(Index j) const { return col_sq_[j]; }

    // Appends X_j to I. Throws std::invalid_argument when j is in I or not addable (its
    // residual part, recomputed explicitly, is at most tol * ||X_j||).
    void add(Index j) {
        check_column(j);
        require(!in_set(j),
                "OrthoBasis::add: column " + std::to_string(j) + " is already selected");
        require(try_add(j), "OrthoBasis::add: column " + std::to_string(j) +
                                " lies in the span of the selected columns (within tol)");
    }

    // add() that reports instead of throwing: false (and j marked not addable) when the
    // explicitly recomputed residual part of X_j is at most tol * ||X_j||. The downdated n_j can
    // be off by about eps * ||X_j||^2, so a driver picks with add_gain and confirms here.
    bool try_add(Index j) {
        check_column(j);
        if (in_set(j) || state_[static_cast<std::size_t>(j)] == kDead) return false;
        const Index t = size();
        grow(t + 1);
        Eigen::VectorXd u = X_.col(j);
        Eigen::VectorXd s = Eigen::VectorXd::Zero(t);
        // Classical Gram-Schmidt twice ("twice is enough"): the second pass removes what
        // rounding left of the first, so q stays orthogonal to Q to working precision.
        for (int pass = 0; pass < 2 && t > 0; ++pass) {
            const Eigen::VectorXd h = Q_.leftCols(t).transpose() * u;
            u.noalias() -= Q_.leftCols(t) * h;
            s += h;
        }
        const double norm = u.norm();
        if (!(norm > tol_ * std::sqrt(col_sq_[j]))) {
            state_[static_cast<std::size_t>(j)] = kDead;
            n_[j] = 0.0;
            return false;
        }
        Q_.col(t) = u / norm;
        R_.col(t).head(t) = s;
        R_(t, t) = norm;
        R_.col(t).tail(R_.rows() - t - 1).setZero();
        // One Gram-Schmidt step on r against the new direction; r keeps y's part outside Q.
        const double qr = Q_.col(t).dot(r_);
        r_.noalias() -= qr * Q_.col(t);
        theta_.conservativeResize(t + 1);
        theta_[t] = qr;
        update_rinv_after_add(t);
        pos_[static_cast<std::size_t>(j)] = t;
        state_[static_cast<std::size_t>(j)] = kSelected;
        selected_.push_back(j);
        c_[j] = 0.0;
        n_[j] = 0.0;
        sweep_direction(Q_.col(t), -qr, -1.0);
        return true;
    }

    // RSS(I - j) - RSS(I) for j in I: coef_j^2 / [(X_I^T X_I)^{-1}]_jj, the row of R^{-1}
    // giving the diagonal entry. O(|I|), const, thread-safe.
    double remove_cost(Index j) const {
        check_column(j);
        const Index p = pos_[static_cast<std::size_t>(j)];
        require(p >= 0,
                "OrthoBasis::remove_cost: column " + std::to_string(j) + " is not selected");
        const Index t = size();
        const double d = Rinv_.row(p).tail(t - p).squaredNorm();
        const double b = Rinv_.row(p).tail(t - p).dot(theta_.tail(t - p));
        return b * b / d;
    }

    // Drops j from I: Givens rotations restore the triangular R of the remaining columns, and
    // the direction that leaves the basis is added back to the residual and to every c_j, n_j
    // with one pass over X.
    void remove(Index j) {
        check_column(j);
        const Index p = pos_[static_cast<std::size_t>(j)];
        require(p >= 0, "OrthoBasis::remove: column " + std::to_string(j) + " is not selected");
        const Index t = size();
        // Delete column p of R (t x t) -> upper Hessenberg from column p on.
        for (Index k = p; k + 1 < t; ++k) R_.col(k).head(t) = R_.col(k + 1).head(t);
        for (Index k = p; k + 1 < t; ++k) {
            const double a = R_(k, k), b = R_(k + 1, k);
            const double h = std::hypot(a, b);
            const double cg = h == 0.0 ? 1.0 : a / h, sg = h == 0.0 ? 0.0 : b / h;
            for (Index col = k; col + 1 < t; ++col) {
                const double x0 = R_(k, col), x1 = R_(k + 1, col);
                R_(k, col) = cg * x0 + sg * x1;
                R_(k + 1, col) = -sg * x0 + cg * x1;
            }
            R_(k + 1, k) = 0.0;
            const double t0 = theta_[k], t1 = theta_[k + 1];
            theta_[k] = cg * t0 + sg * t1;
            theta_[k + 1] = -sg * t0 + cg * t1;
            for (Index i = 0; i < Q_.rows(); ++i) {
                const double q0 = Q_(i, k), q1 = Q_(i, k + 1);
                Q_(i, k) = cg * q0 + sg * q1;
                Q_(i, k + 1) = -sg * q0 + cg * q1;
            }
        }
        // The last rotated direction leaves the span; y's component along it returns to r.
        const Eigen::VectorXd gone = Q_.col(t - 1);
        const double back = theta_[t - 1];
        r_.noalias() += back * gone;
        theta_.conservativeResize(t - 1);
        R_.col(t - 1).setZero();
        R_.row(t - 1).setZero();
        selected_.erase(selected_.begin() + p);
        for (Index k = p; k < t - 1; ++k) pos_[static_cast<std::size_t>(selected_[k])] = k;
        pos_[static_cast<std::size_t>(j)] = -1;
        state_[static_cast<std::size_t>(j)] = kReopen;
        recompute_rinv();
        sweep_direction(gone, back, +1.0);
    }

    // The basis of an arbitrary subset, added in the given order (O(m n |subset|)). Throws
    // std::invalid_argument for a repeated index or a column in the span of the earlier ones.
    void reset(const std::vector<Index>& subset) {
        clear();
        for (Index j : subset) add(j);
    }

    // Back to the empty set.
    void clear() {
        selected_.clear();
        std::fill(pos_.begin(), pos_.end(), Index{-1});
        theta_.resize(0);
        Rinv_.resize(0, 0);
        reset_state();
    }

    // Least-squares coefficients on I, in insertion order (R b = Q^T y by back-substitution).
    Eigen::VectorXd coef() const {
        const Index t = size();
        if (t == 0) return Eigen::VectorXd();
        return R_.topLeftCorner(t, t).triangularView<Eigen::Upper>().solve(theta_);
    }

private:
    enum : char { kFree = 0, kSelected = 1, kDead = 2, kReopen = 3 };
    // A downdated n_j that fell below this fraction of its last exact value has lost digits to
    // cancellation; it is recomputed from an explicit projection (rare on ordinary data).
    static constexpr double kRefresh = 1e-3;
    // A parallel region per round only pays off above about a million elements of X (half a
// millisecond of work); below, waking the team costs more, and far more on a busy machine.
    static constexpr Index kParallelMin = Index{1} << 20;

    int team_size() const {
        return X_.rows() * X_.cols() >= kParallelMin ? resolve_threads(n_threads_) : 1;
    }

    void check_column(Index j) const {
        require_index(j >= 0 && j < X_.cols(),
                      "column index " + std::to_string(j) + " out of range for " +
                          std::to_string(X_.cols()) + " columns");
    }

    void reset_state() {
        const Index n = X_.cols();
        r_ = y_;
        const int team = team_size();
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index j = 0; j < n; ++j) {
            c_[j] = X_.col(j).dot(y_);
            n_[j] = col_sq_[j];
            ref_n_[j] = col_sq_[j];
            state_[static_cast<std::size_t>(j)] = col_sq_[j] > 0.0 ? kFree : kDead;
        }
    }

    void grow(Index need) {
        const Index m = X_.rows();
        if (Q_.cols() >= need) return;
        const Index cap = std::min<Index>(std::max<Index>(need, 2 * Q_.cols() + 8),
                                          std::max<Index>(need, std::min(m, X_.cols())));
        Q_.conservativeResize(m, cap);
        Eigen::MatrixXd R = Eigen::MatrixXd::Zero(cap, cap);
        const Index old = std::min(R_.rows(), cap);
        R.topLeftCorner(old, old) = R_.topLeftCorner(old, old);
        R_.swap(R);
    }

    void update_rinv_after_add(Index t) {
        // [R s; 0 rho]^{-1} = [R^{-1}, -R^{-1} s / rho; 0, 1 / rho]
        Eigen::MatrixXd Ri(t + 1, t + 1);
        Ri.setZero();
        if (t > 0) {
            Ri.topLeftCorner(t, t) = Rinv_;
            Ri.col(t).head(t) =
                -(Rinv_.triangularView<Eigen::Upper>() * R_.col(t).head(t)) / R_(t, t);
        }
        Ri(t, t) = 1.0 / R_(t, t);
        Rinv_.swap(Ri);
    }

    void recompute_rinv() {
        const Index t = size();
        Rinv_ = R_.topLeftCorner(t, t).triangularView<Eigen::Upper>().solve(
            Eigen::MatrixXd::Identity(t, t));
    }

    // After the basis gained (sign = -1) or lost (sign = +1) the unit direction q, with
    // `shift` = the change of r along q (r_new = r + shift * q): for every column not in I,
    // c_j += shift * <X_j, q> and n_j -= / += <X_j, q>^2, in one pass over X. Columns whose
    // n_j lost most of its digits, or that may have left the span of I, are recomputed exactly.
    void sweep_direction(const Eigen::Ref<const Eigen::VectorXd>& q, double shift, double sign) {
        const Index n = X_.cols(), m = X_.rows(), t = size();
        const int team = team_size();
        std::vector<Eigen::VectorXd> work_u(static_cast<std::size_t>(team), Eigen::VectorXd(m));
        std::vector<Eigen::VectorXd> work_h(static_cast<std::size_t>(team), Eigen::VectorXd(t));
        const double tol2 = tol_ * tol_;
        const Eigen::VectorXd qc = q;  // contiguous for the kernel
        const Index blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index b = 0; b < blocks; ++b) {
            const Index j0 = 4 * b;
            double p4[4];
            const double* cols[4];
            for (int k = 0; k < 4; ++k)
                cols[k] = X_.data() + std::min(j0 + k, n - 1) * X_.outerStride();
            detail::dot4(cols[0], cols[1], cols[2], cols[3], qc.data(), m, p4);
            for (Index j = j0; j < std::min(j0 + 4, n); ++j) {
                const char st = state_[static_cast<std::size_t>(j)];
                if (st == kSelected) continue;
                const double p = p4[j - j0];
                c_[j] += shift * p;
                n_[j] += sign * p * p;
                if (sign > 0) ref_n_[j] = std::max(ref_n_[j], n_[j]);
                const bool refresh = st == kReopen ||
                                     (st == kDead && sign > 0 && p * p > tol2 * col_sq_[j]) ||
                                     (st == kFree && n_[j] <= kRefresh * ref_n_[j]);
                if (refresh) {
#ifdef FASTFS_HAVE_OPENMP
                    const auto tid = static_cast<std::size_t>(omp_get_thread_num());
#else
                    const std::size_t tid = 0;
#endif
                    exact_column(j, t, work_u[tid], work_h[tid]);
                }
            }
        }
    }

    // Explicit twice-projected u_j: exact n_j, c_j = <u_j, r> and the free / dead decision.
    void exact_column(Index j, Index t, Eigen::VectorXd& u, Eigen::VectorXd& h) {
        u = X_.col(j);
        for (int pass = 0; pass < 2 && t > 0; ++pass) {
            h.noalias() = Q_.leftCols(t).transpose() * u;
            u.noalias() -= Q_.leftCols(t) * h;
        }
        n_[j] = u.squaredNorm();
        c_[j] = u.dot(r_);
        ref_n_[j] = n_[j];
        const bool alive = n_[j] > tol_ * tol_ * col_sq_[j];
        state_[static_cast<std::size_t>(j)] = alive ? kFree : kDead;
    }

    MatrixCRef X_;
    VectorCRef y_;
    double tol_;
    int n_threads_;
    Eigen::VectorXd col_sq_, c_, n_, ref_n_;
    std::vector<char> state_;
    std::vector<Index> pos_;
    std::vector<Index> selected_;
    Eigen::MatrixXd Q_;     // m x capacity; the first size() columns are the basis
    Eigen::MatrixXd R_;     // capacity x capacity; X_I = Q R (upper triangular)
    Eigen::MatrixXd Rinv_;  // size() x size(), R^{-1}, for remove_cost
    Eigen::VectorXd theta_; // Q^T y
    Eigen::VectorXd r_;     // y - Q theta
};

}  // namespace fastfs
