// The incremental orthonormal basis of a selected column set I of X (SPEC 4.1): Q with
// X_I = Q R, the residual r = y - Q Q^T y, and for EVERY column j the two numbers the greedy
// least-squares rules need, c_j = <X_j, r> (= <u_j, y>) and n_j = ||u_j||^2, u_j being the part
// of X_j orthogonal to span(X_I). Shared by OMP, backward elimination and the least-squares
// criterion of the sequential searches.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_SIMD_CLONES: AVX2 and baseline builds of a loop
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "column_moments.hpp"

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

// Three columns against four vectors at once (out[4 * c + v] = <x_c, v_v>). One vector costs a
// pass over X bound by reading X; three more cost about half as much again (on a first-
// generation EPYC the multiplies then bind), which is what lets a round compute the Gram
// columns of likely next picks on the side. Twelve sums: three columns share each load of v.
template <class T>
FASTFS_SIMD_CLONES void dot3x4(const T* __restrict x0, const T* __restrict x1,
                               const T* __restrict x2, const T* __restrict v0,
                               const T* __restrict v1, const T* __restrict v2,
                               const T* __restrict v3, Index m, T* out) {
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0, c0 = 0, c1 = 0, c2 = 0,
      c3 = 0;
#pragma omp simd reduction(+ : a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3)
    for (Index i = 0; i < m; ++i) {
        const T p = x0[i], q = x1[i], r = x2[i];
        const T w0 = v0[i], w1 = v1[i], w2 = v2[i], w3 = v3[i];
        a0 += p * w0;
        a1 += p * w1;
        a2 += p * w2;
        a3 += p * w3;
        b0 += q * w0;
        b1 += q * w1;
        b2 += q * w2;
        b3 += q * w3;
        c0 += r * w0;
        c1 += r * w1;
        c2 += r * w2;
        c3 += r * w3;
    }
    const T sums[12] = {a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3};
    for (int k = 0; k < 12; ++k) out[k] = sums[k];
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
    // What the basis holds: a column-major view with any strides (a row-major X is one with
    // the rows' stride between the samples of a column).
    using StridedStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
    using StridedMap = Eigen::Map<const Eigen::MatrixXd, 0, StridedStride>;
    using VectorCRef = Eigen::Ref<const Eigen::VectorXd>;

    // At most this many hinted columns get their Gram column computed in a round's pass (the
    // pass reads X once for the new direction and up to three hinted columns); hints already
    // cached are skipped, so a longer hint list fills the three with the next ones.
    static constexpr int kMaxHints = 3;

    // The kMaxHints entries after position k of an ordered list of columns to be added: the
    // hints for adding list[k] (reset, a criterion's reset, backward elimination's start).
    static std::vector<Index> following(const std::vector<Index>& list, std::size_t k) {
        const std::size_t end = std::min(list.size(), k + 1 + kMaxHints);
        return std::vector<Index>(list.begin() + static_cast<std::ptrdiff_t>(std::min(k + 1, end)),
                                  list.begin() + static_cast<std::ptrdiff_t>(end));
    }

    // Borrowing must not bind to a temporary: an expression, or a row-major matrix that is not
    // a MatrixRef (which has its own constructor, below), would be converted into a copy that
    // dies with the constructor call. Refused at compile time.
    template <class DX, class DY, class... Rest,
              std::enable_if_t<!((direct_column_major<DX>() ||
                                  std::is_same_v<DX, MatrixRef<double>>) &&
                                 direct_column_major<DY>()),
                               int> = 0>
    OrthoBasis(const Eigen::MatrixBase<DX>&, const Eigen::MatrixBase<DY>&, Rest&&...) = delete;

    // What the basis keeps up to date after each addition or removal: c_j and n_j of every
    // column (one pass over X per change, or none through the Gram columns), or only Q, R and
    // r (basis_only: a driver that screens the columns itself, such as OMP's float32 screen,
    // asks for the parts it needs with explicit_part; no pass over X, no add_gain, addable,
    // correlation or remove).
    enum class Track { columns, basis_only };

    // X (m x n, column-major) and y (length m) are borrowed: the caller keeps them alive.
    // tol is RELATIVE to each column's own norm: X_j is addable while ||u_j|| > tol * ||X_j||
    // (a zero column never is). n_threads: 0 = the OpenMP runtime's default. `moments`: every
    // column's ||X_j||^2 and <X_j, y> when the caller's own read of X computed them
    // (ColumnMoments::compute); the basis then does not read X before its first change.
    OrthoBasis(MatrixCRef X, VectorCRef y, double tol, int n_threads = 0,
               Track track = Track::columns, const ColumnMoments* moments = nullptr)
        : X_(X.data(), X.rows(), X.cols(), StridedStride(X.outerStride(), 1)),
          y_(y),
          tol_(tol),
          n_threads_(n_threads),
          track_(track) {
        init(moments);
    }

    // A row-major X (borrowed likewise), for Track::basis_only with the moments given: the
    // basis then reads X only for the columns it adds or projects, each gathered into a
    // contiguous vector, so it computes what it computes on the column-major X, bit for bit.
    // (Only a MatrixRef<double> itself: a column-major matrix must not convert to it.)
    template <class R, std::enable_if_t<std::is_same_v<R, MatrixRef<double>>, int> = 0>
    OrthoBasis(const R& X, VectorCRef y, double tol, int n_threads, Track track,
               const ColumnMoments* moments)
        : X_(X.data(), X.rows(), X.cols(), StridedStride(1, X.outerStride())),
          y_(y), tol_(tol), n_threads_(n_threads), track_(track) {
        require(track == Track::basis_only && moments,
                "OrthoBasis: a row-major X needs Track::basis_only and the column moments");
        init(moments);
    }

    // Reads the columns from Xc from now on: a column-major copy of the X the basis was built
    // on (the same values, which the caller guarantees), for a driver that found single
    // columns of a row-major X too dear to read (each value a cache miss). Nothing else
    // changes, so neither do the results.
    void use_columns(const MatrixCRef& Xc) {
        require(Xc.rows() == X_.rows() && Xc.cols() == X_.cols(),
                "OrthoBasis::use_columns: Xc does not match X");
        new (&X_) StridedMap(Xc.data(), Xc.rows(), Xc.cols(), StridedStride(Xc.outerStride(), 1));
    }

private:
    void init(const ColumnMoments* moments) {
        require(X_.rows() == y_.size(), "X and y have different numbers of samples");
        require(X_.rows() >= 1 && X_.cols() >= 1, "X: needs at least one sample and one feature");
        require(tol_ >= 0 && std::isfinite(tol_), "tol: must be finite and >= 0");
        // (The passes over X, and the moments read here, take contiguous columns.)
        require(X_.innerStride() == 1 || track_ == Track::basis_only,
                "OrthoBasis: Track::columns needs a column-major X");
        const Index n = X_.cols(), m = X_.rows();
        c_.resize(n);
        n_.resize(n);
        ref_n_.resize(n);
        state_.assign(static_cast<std::size_t>(n), kFree);
        pos_.assign(static_cast<std::size_t>(n), -1);
        gram_slot_.assign(static_cast<std::size_t>(n), -1);
        // Memory for the products with the basis (n x size) and the cached Gram columns:
        // each at most half of X's own size, or 64 MiB when X is smaller than that.
        const double x_bytes = 8.0 * static_cast<double>(m) * static_cast<double>(n);
        const double budget = std::max(x_bytes / 2, 64.0 * 1024 * 1024);
        max_products_ = track_ == Track::columns
                            ? static_cast<Index>(budget / (8.0 * static_cast<double>(n)))
                            : 0;
        max_gram_ = max_products_;
        products_ok_ = track_ == Track::columns;
        check_scale_ = kCheck * std::sqrt(static_cast<double>(m)) *
                       std::numeric_limits<double>::epsilon();
        ColumnMoments own;
        if (!moments) {
            own.resize(n);
            const int team = round_team();
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
            for (Index j = 0; j < n; ++j) own.compute(column(j), y_.data(), m, j);
            moments = &own;
        }
        require(moments->sq.size() == n && moments->xty.size() == n,
                "OrthoBasis: the column moments do not match X");
        col_sq_ = moments->sq;
        xty_ = moments->xty;
        reset_state();
    }

public:

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

    // <X_j, y>, computed once at construction (whatever the tracking).
    double y_correlation(Index j) const { return xty_[j]; }

    // <X_j, r>: the gradient of RSS / 2 along coordinate j, also <u_j, y>. 0 for j in I.
    double correlation(Index j) const { return c_[j]; }
    // ||u_j||^2 (0 for j in I) and ||X_j||^2.
    double residual_sq_norm(Index j) const { return n_[j]; }
    double column_sq_norm(Index j) const { return col_sq_[j]; }

    // Caps the memory of the kept products X^T Q and of the Gram-column cache, in columns of
    // n doubles (by default each gets max(X's size / 2, 64 MiB)). Tests use it to reach the
    // paths of a full budget on small data.
    void limit_memory(Index product_columns, Index gram_columns) {
        require(product_columns >= 0 && gram_columns >= 0, "limit_memory: negative budget");
        max_products_ = product_columns;
        max_gram_ = gram_columns;
        if (size() > max_products_) drop_products();
        if (static_cast<Index>(gram_.size() - free_slots_.size()) > max_gram_) flush_gram();
    }

    // How many passes over X the basis has made since construction (its one before the first
    // round excluded): a round whose Gram column was cached makes none.
    Index n_passes() const { return n_passes_; }

    // Appends X_j to I. Throws std::invalid_argument when j is in I or not addable (its
    // residual part, recomputed explicitly, is at most tol * ||X_j||).
    void add(Index j, const std::vector<Index>& hints = {}) {
        check_column(j);
        require(!in_set(j),
                "OrthoBasis::add: column " + std::to_string(j) + " is already selected");
        require(try_add(j, hints), "OrthoBasis::add: column " + std::to_string(j) +
                                       " lies in the span of the selected columns (within tol)");
    }

    // add() that reports instead of throwing: false (and j marked not addable) when the
    // explicitly recomputed residual part of X_j is at most tol * ||X_j||. The downdated n_j can
    // be off by about eps * ||X_j||^2, so a driver picks with add_gain and confirms here.
    //
    // `hints`: the columns the caller expects to add next (e.g. the runners-up of this round).
    // When this round has to read X anyway, it also computes X^T X_h for up to kMaxHints of them;
    // the round that adds such a column then updates every c_j, n_j from that Gram column and
    // the products with the basis, without reading X. Hints change speed, and the state only
    // in its rounding.
    bool try_add(Index j, const std::vector<Index>& hints = {}) {
        check_column(j);
        if (in_set(j) || state_[static_cast<std::size_t>(j)] == kDead) return false;
        Eigen::VectorXd u, s, h;
        gram_schmidt(j, u, s, h);
        return append(j, u, s, hints);
    }

    // try_add with the part of X_j outside the span already at hand: u and s as explicit_part
    // returned them for the current basis (no pass over Q).
    bool try_add_explicit(Index j, const Eigen::VectorXd& u, const Eigen::VectorXd& s,
                          const std::vector<Index>& hints = {}) {
        check_column(j);
        require(u.size() == X_.rows() && s.size() == size(),
                "OrthoBasis::try_add_explicit: u or s does not match the basis");
        if (in_set(j) || state_[static_cast<std::size_t>(j)] == kDead) return false;
        return append(j, u, s, hints);
    }

private:
    // X_j = Q s + u with u orthogonal to Q (h: work). Classical Gram-Schmidt, repeated once when
    // the first pass removed most of X_j ("twice is enough"; the Daniel-Gragg-Kaufman-Stewart
    // test with 1/sqrt(2)): what rounding leaves of the span is then removed, so q stays
    // orthogonal to Q to working precision. A column mostly outside the span needs one pass.
    void gram_schmidt(Index j, Eigen::VectorXd& u, Eigen::VectorXd& s, Eigen::VectorXd& h) const {
        gram_schmidt_from(j, nullptr, nullptr, u, s, h);
    }

    // gram_schmidt with the first pass's products Q^T X_j given (h0, from column_products):
    // the same operations in the same order, so the same u and s bit for bit. xj: X_j as
    // column_products read it (none: read here).
    void gram_schmidt_from(Index j, const Eigen::VectorXd* h0, const Eigen::VectorXd* xj,
                           Eigen::VectorXd& u, Eigen::VectorXd& s, Eigen::VectorXd& h) const {
        const Index t = size();
        if (xj)
            u = *xj;
        else
            load_column(j, u);
        s.setZero(t);
        double norm = std::sqrt(col_sq_[j]);
        for (int pass = 0; pass < 2 && t > 0; ++pass) {
            if (pass == 0 && h0)
                h = *h0;
            else
                h.noalias() = Q_.leftCols(t).transpose() * u;
            u.noalias() -= Q_.leftCols(t) * h;
            s += h;
            const double before = norm;
            norm = u.norm();
            if (norm >= kReorthogonalise * before) break;
        }
    }

    // Appends X_j = Q s + u (u orthogonal to Q) to the basis, or marks j dead when ||u|| is at
    // most tol * ||X_j||.
    bool append(Index j, const Eigen::VectorXd& u, const Eigen::VectorXd& s,
                const std::vector<Index>& hints) {
        const Index t = size();
        grow(t + 1);
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
        if (track_ == Track::basis_only) return true;
        // X^T q: from j's cached Gram column when that is safe, else by a pass over X.
        Eigen::VectorXd p;
        if (!products_from_gram(j, s, norm, p)) pass_products(Q_.col(t), j, hints, p);
        release_gram(j);
        if (products_ok_) P_.col(t) = p;
        c_[j] = 0.0;
        n_[j] = 0.0;
        sweep_direction(p, -qr, -1.0);
        return true;
    }

public:
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
    // the direction that leaves the basis is added back to the residual and to every c_j, n_j.
    // The products X^T Q turn with Q, so the leaving direction's products come without a pass
    // over X while they are kept.
    void remove(Index j) {
        require(track_ == Track::columns, "OrthoBasis::remove: the basis tracks no columns");
        check_column(j);
        const Index p = pos_[static_cast<std::size_t>(j)];
        require(p >= 0, "OrthoBasis::remove: column " + std::to_string(j) + " is not selected");
        const Index t = size();
        // Delete column p of R (t x t) -> upper Hessenberg from column p on.
        for (Index k = p; k + 1 < t; ++k) R_.col(k).head(t) = R_.col(k + 1).head(t);
        // R^{-1} follows in O(t^2): with R_del = R without column p and G the rotations below,
        // G R_del = [R_new; 0], so R_new^{-1} is R^{-1} without row p times G^T, first t - 1
        // columns: the rotations applied to its columns.
        Eigen::MatrixXd S(t - 1, t);
        S.topRows(p) = Rinv_.topRows(p);
        S.bottomRows(t - 1 - p) = Rinv_.bottomRows(t - 1 - p);
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
            rotate(Q_, k, cg, sg);
            rotate(S, k, cg, sg);
            if (products_ok_) rotate(P_, k, cg, sg);
        }
        Rinv_ = S.leftCols(t - 1).triangularView<Eigen::Upper>();
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
        // The leaving direction is orthogonal to every column still in I: its products there
        // must vanish, which checks the turned products before they are trusted.
        Eigen::VectorXd pg;
        bool ok = products_ok_;
        if (ok) {
            pg = P_.col(t - 1);
            for (Index l : selected_) ok = ok && within_check(pg[l], 0.0, l);
        }
        if (!ok) pass_products(gone, -1, {}, pg);
        sweep_direction(pg, back, +1.0);
    }

    // The basis of an arbitrary subset, added in the given order (O(m n |subset|)). Throws
    // std::invalid_argument for a repeated index or a column in the span of the earlier ones.
    void reset(const std::vector<Index>& subset) {
        clear();
        for (std::size_t k = 0; k < subset.size(); ++k) add(subset[k], following(subset, k));
    }

    // Back to the empty set (no pass over X: X^T y is kept from the start).
    void clear() {
        selected_.clear();
        std::fill(pos_.begin(), pos_.end(), Index{-1});
        theta_.resize(0);
        Rinv_.resize(0, 0);
        products_ok_ = track_ == Track::columns;
        reset_state();
    }

    // The orthonormal basis Q of span(X_I), m x size().
    auto basis_vectors() const { return Q_.leftCols(size()); }

    // The explicit, twice-projected part u of X_j outside span(X_I) (u and h are work vectors
    // of any size): returns ||u||^2 and sets *corr = <u, r>. O(m |I|), const, thread-safe with
    // separate work vectors.
    // With `s`, the second projection is made only when the first removed most of X_j (the
    // test of try_add), and s = the coefficients of X_j on Q (X_j = Q s + u), for
    // try_add_explicit.
    double explicit_part(Index j, Eigen::VectorXd& u, Eigen::VectorXd& h, double* corr,
                         Eigen::VectorXd* s = nullptr) const {
        if (s) {
            gram_schmidt(j, u, *s, h);
        } else {
            project_out(j, size(), u, h);
        }
        *corr = u.dot(r_);
        return u.squaredNorm();
    }

    // h = Q^T X_j as the first pass of explicit_part computes it, O(m |I|), and xj = X_j (a
    // contiguous copy, which explicit_part_from can take instead of reading X again: a
    // row-major X gives its columns at a cache miss an entry): a driver can bound
    // ||u_j||^2 = ||X_j||^2 - ||h||^2 from h and continue with explicit_part_from only for the
    // columns the bound leaves open.
    void column_products(Index j, Eigen::VectorXd& xj, Eigen::VectorXd& h) const {
        const Index t = size();
        load_column(j, xj);
        if (t > 0)
            h.noalias() = Q_.leftCols(t).transpose() * xj;
        else
            h.resize(0);
    }

    // explicit_part with s, continuing from column_products' h0 (and, when given, its xj) for
    // the current basis: the same results bit for bit, one product with Q fewer.
    double explicit_part_from(Index j, const Eigen::VectorXd& h0, Eigen::VectorXd& u,
                              Eigen::VectorXd& h, double* corr, Eigen::VectorXd& s,
                              const Eigen::VectorXd* xj = nullptr) const {
        require(h0.size() == size(), "OrthoBasis::explicit_part_from: h0 does not match the basis");
        require(!xj || xj->size() == X_.rows(),
                "OrthoBasis::explicit_part_from: xj does not match X");
        gram_schmidt_from(j, &h0, xj, u, s, h);
        *corr = u.dot(r_);
        return u.squaredNorm();
    }

    // Marks X_j as never addable (a driver found its explicit part at most tol * ||X_j||).
    void mark_dead(Index j) {
        check_column(j);
        if (!in_set(j)) state_[static_cast<std::size_t>(j)] = kDead;
    }
    bool dead(Index j) const { return state_[static_cast<std::size_t>(j)] == kDead; }

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
    // The Gram route computes X^T q = (X^T X_j - P s) / ||u_j||: its rounding grows as ||u_j||
    // shrinks against ||X_j||, so it is taken only while ||u_j|| >= kGramMinResidual * ||X_j||.
    static constexpr double kGramMinResidual = 1.0 / 16;
    static constexpr double kReorthogonalise = 0.70710678118654752;  // 1 / sqrt(2)
    // Products that should be known exactly (0 for a column in the span of Q, ||u_j|| for j)
    // check a Gram-route or turned result: off by more than kCheck * sqrt(m) * eps * ||X_l||
    // and the round reads X after all. A pass over X itself is within about sqrt(m) * eps.
    static constexpr double kCheck = 64.0;

    int round_team() const {
        return X_.rows() * X_.cols() >= kParallelMin ? resolve_threads(n_threads_) : 1;
    }

    void check_column(Index j) const {
        require_index(j >= 0 && j < X_.cols(),
                      "column index " + std::to_string(j) + " out of range for " +
                          std::to_string(X_.cols()) + " columns");
    }

    bool within_check(double got, double want, Index l) const {
        return std::abs(got - want) <= check_scale_ * std::sqrt(col_sq_[l]);
    }

    static void rotate(Eigen::MatrixXd& A, Index k, double cg, double sg) {
        for (Index i = 0; i < A.rows(); ++i) {
            const double a0 = A(i, k), a1 = A(i, k + 1);
            A(i, k) = cg * a0 + sg * a1;
            A(i, k + 1) = -sg * a0 + cg * a1;
        }
    }

    void reset_state() {
        const Index n = X_.cols();
        r_ = y_;
        for (Index j = 0; j < n; ++j) {
            c_[j] = xty_[j];
            n_[j] = col_sq_[j];
            ref_n_[j] = col_sq_[j];
            state_[static_cast<std::size_t>(j)] = col_sq_[j] > 0.0 ? kFree : kDead;
        }
    }

    // Over budget: the products are freed and not kept until clear().
    void drop_products() {
        products_ok_ = false;
        P_.resize(0, 0);
    }

    void grow(Index need) {
        const Index m = X_.rows();
        if (need > max_products_) drop_products();
        if (Q_.cols() < need) {
            const Index cap = std::min<Index>(std::max<Index>(need, 2 * Q_.cols() + 8),
                                              std::max<Index>(need, std::min(m, X_.cols())));
            Q_.conservativeResize(m, cap);
            Eigen::MatrixXd R = Eigen::MatrixXd::Zero(cap, cap);
            const Index old = std::min(R_.rows(), cap);
            R.topLeftCorner(old, old) = R_.topLeftCorner(old, old);
            R_.swap(R);
        }
        if (products_ok_ && P_.cols() < need)
            P_.conservativeResize(X_.cols(), std::min(Q_.cols(), max_products_));
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

    // X^T q for the new direction q = (X_j - Q s) / norm from j's cached Gram column X^T X_j and
    // the kept products P = X^T Q: false (p untouched) when there is no Gram column, the
    // products are not kept, ||u_j|| is too small against ||X_j||, or the result fails the
    // check on the columns whose products are known (0 on I, norm on j).
    bool products_from_gram(Index j, const Eigen::VectorXd& s, double norm, Eigen::VectorXd& p) {
        const int slot = gram_slot_[static_cast<std::size_t>(j)];
        if (slot < 0 || !products_ok_ || norm < kGramMinResidual * std::sqrt(col_sq_[j]))
            return false;
        const Index t = s.size();
        Eigen::VectorXd out = gram_[static_cast<std::size_t>(slot)];
        if (t > 0) out.noalias() -= P_.leftCols(t) * s;
        out /= norm;
        if (!within_check(out[j], norm, j)) return false;
        for (Index k = 0; k < t; ++k)
            if (!within_check(out[selected_[k]], 0.0, selected_[k])) return false;
        p.swap(out);
        return true;
    }

    // One pass over X: p = X^T q, and the Gram columns X^T X_h of up to kMaxHints hinted columns
    // (not j, not in I, not dead, not cached yet) while the cache has room.
    void pass_products(const Eigen::Ref<const Eigen::VectorXd>& q, Index j,
                       const std::vector<Index>& hints, Eigen::VectorXd& p) {
        const Index n = X_.cols(), m = X_.rows();
        const Eigen::VectorXd qc = q;  // contiguous for the kernels
        std::vector<Index> extra;
        // Gram columns serve only the products route: none while the products are not kept.
        // A full cache is emptied (its columns were hints nobody picked, or that went dead).
        if (products_ok_ && !hints.empty() &&
            static_cast<Index>(gram_.size() - free_slots_.size()) + kMaxHints > max_gram_)
            flush_gram();
        for (Index h : hints) {
            if (!products_ok_ || static_cast<int>(extra.size()) == kMaxHints) break;
            if (h < 0 || h >= n || h == j || in_set(h) ||
                state_[static_cast<std::size_t>(h)] == kDead ||
                gram_slot_[static_cast<std::size_t>(h)] >= 0 ||
                std::find(extra.begin(), extra.end(), h) != extra.end() ||
                static_cast<Index>(gram_.size() - free_slots_.size()) >= max_gram_)
                continue;
            gram_slot_[static_cast<std::size_t>(h)] = take_slot();
            extra.push_back(h);
        }
        p.resize(n);
        const int team = round_team();
        ++n_passes_;
        if (extra.empty()) {
            const Index blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
            for (Index b = 0; b < blocks; ++b) {
                const Index j0 = 4 * b;
                double p4[4];
                const double* cols[4];
                for (int k = 0; k < 4; ++k) cols[k] = column(std::min(j0 + k, n - 1));
                detail::dot4(cols[0], cols[1], cols[2], cols[3], qc.data(), m, p4);
                for (Index l = j0; l < std::min(j0 + 4, n); ++l) p[l] = p4[l - j0];
            }
            return;
        }
        // Vectors: q, then the hinted columns (the last one repeated to fill four).
        const double* v[4];
        double* g[4] = {nullptr, nullptr, nullptr, nullptr};
        v[0] = qc.data();
        for (int k = 1; k < 4; ++k) {
            const std::size_t e = std::min<std::size_t>(static_cast<std::size_t>(k - 1),
                                                        extra.size() - 1);
            v[k] = column(extra[e]);
            if (static_cast<std::size_t>(k - 1) < extra.size()) {
                Eigen::VectorXd& col = gram_[static_cast<std::size_t>(
                    gram_slot_[static_cast<std::size_t>(extra[e])])];
                col.resize(n);
                g[k] = col.data();
            }
        }
        const Index blocks = (n + 2) / 3;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index b = 0; b < blocks; ++b) {
            const Index j0 = 3 * b, j2 = std::min(j0 + 2, n - 1);
            double o[12];
            detail::dot3x4(column(j0), column(std::min(j0 + 1, n - 1)), column(j2), v[0], v[1],
                           v[2], v[3], m, o);
            for (Index l = j0; l <= j2; ++l) {
                const double* ol = o + 4 * (l - j0);
                p[l] = ol[0];
                for (int k = 1; k < 4; ++k)
                    if (g[k]) g[k][l] = ol[k];
            }
        }
    }

    const double* column(Index j) const { return X_.data() + j * X_.outerStride(); }

    // u = X_j, contiguous (from a row-major X, a read of one value per row).
    void load_column(Index j, Eigen::VectorXd& u) const {
        if (X_.innerStride() == 1)
            u = Eigen::Map<const Eigen::VectorXd>(column(j), X_.rows());
        else
            u = X_.col(j);
    }

    int take_slot() {
        if (!free_slots_.empty()) {
            const int s = free_slots_.back();
            free_slots_.pop_back();
            return s;
        }
        gram_.emplace_back();
        return static_cast<int>(gram_.size()) - 1;
    }

    void flush_gram() {
        for (int& slot : gram_slot_) slot = -1;
        free_slots_.clear();
        for (int k = static_cast<int>(gram_.size()) - 1; k >= 0; --k) free_slots_.push_back(k);
    }

    // A column's Gram column is needed once, when it is added (again only after a removal).
    void release_gram(Index j) {
        int& slot = gram_slot_[static_cast<std::size_t>(j)];
        if (slot < 0) return;
        free_slots_.push_back(slot);
        slot = -1;
    }

    // After the basis gained (sign = -1) or lost (sign = +1) the unit direction q, with p = X^T q
    // and `shift` = the change of r along q (r_new = r + shift * q): for every column not in I,
    // c_j += shift * p_j and n_j -= / += p_j^2. Columns whose n_j lost most of its digits, or
    // that may have left the span of I, are recomputed exactly.
    void sweep_direction(const Eigen::VectorXd& p, double shift, double sign) {
        const Index n = X_.cols(), m = X_.rows(), t = size();
        const int team = round_team();
        std::vector<Eigen::VectorXd> work_u(static_cast<std::size_t>(team), Eigen::VectorXd(m));
        std::vector<Eigen::VectorXd> work_h(static_cast<std::size_t>(team), Eigen::VectorXd(t));
        const double tol2 = tol_ * tol_;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index j = 0; j < n; ++j) {
            const char st = state_[static_cast<std::size_t>(j)];
            if (st == kSelected) continue;
            const double pj = p[j];
            c_[j] += shift * pj;
            n_[j] += sign * pj * pj;
            if (sign > 0) ref_n_[j] = std::max(ref_n_[j], n_[j]);
            const bool refresh = st == kReopen ||
                                 (st == kDead && sign > 0 && pj * pj > tol2 * col_sq_[j]) ||
                                 (st == kFree && n_[j] <= kRefresh * ref_n_[j]);
            if (refresh) {
                const auto tid = static_cast<std::size_t>(thread_index());
                exact_column(j, t, work_u[tid], work_h[tid]);
            }
        }
    }

    // Explicit twice-projected u_j: exact n_j, c_j = <u_j, r> and the free / dead decision.
    void project_out(Index j, Index t, Eigen::VectorXd& u, Eigen::VectorXd& h) const {
        load_column(j, u);
        for (int pass = 0; pass < 2 && t > 0; ++pass) {
            h.noalias() = Q_.leftCols(t).transpose() * u;
            u.noalias() -= Q_.leftCols(t) * h;
        }
    }

    void exact_column(Index j, Index t, Eigen::VectorXd& u, Eigen::VectorXd& h) {
        project_out(j, t, u, h);
        n_[j] = u.squaredNorm();
        c_[j] = u.dot(r_);
        ref_n_[j] = n_[j];
        const bool alive = n_[j] > tol_ * tol_ * col_sq_[j];
        state_[static_cast<std::size_t>(j)] = alive ? kFree : kDead;
    }

    StridedMap X_;  // columns contiguous unless built from a row-major X (basis_only)
    VectorCRef y_;
    double tol_;
    int n_threads_;
    Track track_;
    Eigen::VectorXd col_sq_, xty_, c_, n_, ref_n_;
    std::vector<char> state_;
    std::vector<Index> pos_;
    std::vector<Index> selected_;
    Eigen::MatrixXd Q_;     // m x capacity; the first size() columns are the basis
    Eigen::MatrixXd R_;     // capacity x capacity; X_I = Q R (upper triangular)
    Eigen::MatrixXd Rinv_;  // size() x size(), R^{-1}, for remove_cost
    Eigen::VectorXd theta_; // Q^T y
    Eigen::VectorXd r_;     // y - Q theta
    // P = X^T Q (n x size), kept while it fits in max_products_ columns (products_ok_).
    Eigen::MatrixXd P_;
    bool products_ok_ = true;
    Index max_products_ = 0;
    // Gram columns X^T X_h of hinted columns, by slot; gram_slot_[h] = -1 when not cached.
    std::vector<Eigen::VectorXd> gram_;
    std::vector<int> gram_slot_;
    std::vector<int> free_slots_;
    Index max_gram_ = 0;
    Index n_passes_ = 0;
    double check_scale_ = 0.0;
};

}  // namespace fastfs
