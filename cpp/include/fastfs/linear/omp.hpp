// Greedy least-squares selection (SPEC 4.1, seed 002 section 25.1.2): orthogonal matching
// pursuit on the incremental basis ("qr"), the book's SVD-every-round procedure ("svd", the
// reference), and backward elimination on the same basis.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SVD>

#include "../core/errors.hpp"
#include "../data/fortran_copy.hpp"
#include "../state/float32_columns.hpp"
#include "../state/ortho_basis.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"  // FASTFS_HAVE_AVX2_FMA, cpu_has_avx2_fma

namespace fastfs {

namespace detail {
// Bounds on every column's score for the float32 screen (omp_screened), from |c_j - <X_j, r>| <=
// dc_j: up_j >= the score >= lo_j, and the best lo_j is returned. mask_j is 0 for a column in
// play, -inf otherwise (up_j is then -inf and lo_j does not count). Scores are >= 0, so a
// negative or NaN lower bound becomes 0; a NaN upper bound (inf / inf) becomes +inf, or cap for
// the exact rule. Plain loops below; AVX2 versions with the same operations (the same results)
// are chosen at run time: the NaN tests keep the compiler from vectorising the plain loops.
//
// Exact rule, <X_j, r>^2 / ||u_j||^2: |n_j - ||u_j||^2| <= dn_j with n_j = col_sq_j - S_j and
// dn_j = E_j + slack col_sq_j; cap (from ||r||^2) bounds every score.
struct OmpBoundsIn {
    const double* c;
    const double* dc;
    const double* col_sq;
    const double* S;  // exact rule only
    const double* E;  // exact rule only
    const double* mask;
    double slack = 0.0, cap = 0.0;  // exact rule only
    Index n = 0;
};

enum class OmpBoundsRule { exact, gradient, coordinate };

template <OmpBoundsRule Rule>
inline double omp_bounds_at(const OmpBoundsIn& in, Index j, double* up) {
    const double inf = std::numeric_limits<double>::infinity();
    const double a = std::abs(in.c[j]), d = a - in.dc[j];
    double lo = d > 0.0 ? d : 0.0, hi = a + in.dc[j];
    if constexpr (Rule == OmpBoundsRule::exact) {
        const double nj = in.col_sq[j] - in.S[j], dn = in.E[j] + in.slack * in.col_sq[j];
        const double l0 = lo * lo / (nj + dn), den = nj - dn, v0 = hi * hi / den;
        const double vm = v0 < in.cap ? v0 : in.cap;
        lo = l0 > 0.0 ? l0 : 0.0;
        hi = den > 0.0 ? vm : in.cap;
    } else {
        if constexpr (Rule == OmpBoundsRule::coordinate) {
            lo = lo * lo / in.col_sq[j];
            hi = hi * hi / in.col_sq[j];
            lo = lo > 0.0 ? lo : 0.0;
        }
        hi = hi < inf ? hi : inf;
    }
    const bool in_play = in.mask[j] == 0.0;
    *up = in_play ? hi : -inf;
    return in_play ? lo : -inf;
}

template <OmpBoundsRule Rule>
double omp_bounds_plain(const OmpBoundsIn& in, Index from, double* up) {
    double best = -std::numeric_limits<double>::infinity();
    for (Index j = from; j < in.n; ++j) {
        const double l = omp_bounds_at<Rule>(in, j, up + j);
        best = l > best ? l : best;
    }
    return best;
}

#ifdef FASTFS_HAVE_AVX2_FMA
// _mm256_max_pd(x, y) and _mm256_min_pd(x, y) return y when either is NaN: the plain loop's
// "x > y ? x : y" and "x < y ? x : y".
template <OmpBoundsRule Rule>
__attribute__((target("avx2,fma"))) double omp_bounds_avx2(const OmpBoundsIn& in,
                                                           double* up) {
    const __m256d zero = _mm256_setzero_pd();
    const __m256d ninf = _mm256_set1_pd(-std::numeric_limits<double>::infinity());
    const __m256d pinf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    const __m256d cap = _mm256_set1_pd(in.cap), slack = _mm256_set1_pd(in.slack);
    __m256d best = ninf;
    Index j = 0;
    for (; j + 4 <= in.n; j += 4) {
        const __m256d a = _mm256_and_pd(_mm256_loadu_pd(in.c + j), absmask);
        const __m256d dcj = _mm256_loadu_pd(in.dc + j);
        __m256d lo = _mm256_max_pd(_mm256_sub_pd(a, dcj), zero);
        __m256d hi = _mm256_add_pd(a, dcj);
        if constexpr (Rule == OmpBoundsRule::exact) {
            const __m256d cs = _mm256_loadu_pd(in.col_sq + j);
            const __m256d nj = _mm256_sub_pd(cs, _mm256_loadu_pd(in.S + j));
            const __m256d dn = _mm256_add_pd(_mm256_loadu_pd(in.E + j), _mm256_mul_pd(slack, cs));
            const __m256d l0 = _mm256_div_pd(_mm256_mul_pd(lo, lo), _mm256_add_pd(nj, dn));
            const __m256d den = _mm256_sub_pd(nj, dn);
            const __m256d vm = _mm256_min_pd(_mm256_div_pd(_mm256_mul_pd(hi, hi), den), cap);
            lo = _mm256_max_pd(l0, zero);
            hi = _mm256_blendv_pd(cap, vm, _mm256_cmp_pd(den, zero, _CMP_GT_OQ));
        } else {
            if constexpr (Rule == OmpBoundsRule::coordinate) {
                const __m256d cs = _mm256_loadu_pd(in.col_sq + j);
                lo = _mm256_max_pd(_mm256_div_pd(_mm256_mul_pd(lo, lo), cs), zero);
                hi = _mm256_div_pd(_mm256_mul_pd(hi, hi), cs);
            }
            hi = _mm256_min_pd(hi, pinf);
        }
        const __m256d play = _mm256_cmp_pd(_mm256_loadu_pd(in.mask + j), zero, _CMP_EQ_OQ);
        _mm256_storeu_pd(up + j, _mm256_blendv_pd(ninf, hi, play));
        best = _mm256_max_pd(_mm256_blendv_pd(ninf, lo, play), best);
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, best);
    double b = omp_bounds_plain<Rule>(in, j, up);
    for (double l : lanes) b = l > b ? l : b;
    return b;
}
#endif

// The exact rule's per-round updates in one pass (vectorised, AVX2 clone): with p = X^T q for
// the direction q added last (error dp), S += p^2 and E += dp (2 |p| + dp); with update_c, also
// c -= theta p and its bound dc += |theta| dp + rho ||X_j|| + 2 eps (|c| + |theta p|) (times
// 1 + 8 eps for the rounding of the bound itself).
template <class T>
FASTFS_SIMD_CLONES void omp_exact_round(T* __restrict c, T* __restrict dc, T* __restrict S,
                                        T* __restrict E, const T* __restrict p,
                                        const T* __restrict dp, const T* __restrict col_norm,
                                        T theta, T rho, bool update_c, Index n) {
    const T eps = std::numeric_limits<T>::epsilon(), at = std::abs(theta);
    if (update_c) {
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
            const T pj = p[j], ap = std::abs(pj);
            const T grown = dc[j] + at * dp[j] + rho * col_norm[j];
            dc[j] = (grown + T(2) * eps * (std::abs(c[j]) + at * ap)) * (T(1) + T(8) * eps);
            c[j] -= theta * pj;
            S[j] += pj * pj;
            E[j] += dp[j] * (T(2) * ap + dp[j]);
        }
    } else {
#pragma omp simd
        for (Index j = 0; j < n; ++j) {
            const T pj = p[j];
            S[j] += pj * pj;
            E[j] += dp[j] * (T(2) * std::abs(pj) + dp[j]);
        }
    }
}

// The first j in [from, n) with up[j] >= cut, or n: the scan for the columns a round computes
// exactly. Eight columns per step with AVX2 (the scalar loop, a compare and a branch per column,
// was a twentieth of an OMP call on gene-expression data, which has few candidates among
// thousands of columns).
inline Index next_reaching_plain(const double* up, Index from, Index n, double cut) {
    for (Index j = from; j < n; ++j)
        if (up[j] >= cut) return j;
    return n;
}

#ifdef FASTFS_HAVE_AVX2_FMA
__attribute__((target("avx2"))) inline Index next_reaching_avx2(const double* up, Index from,
                                                                 Index n, double cut) {
    const __m256d c = _mm256_set1_pd(cut);
    Index j = from;
    for (; j + 8 <= n; j += 8) {
        const __m256d a = _mm256_cmp_pd(_mm256_loadu_pd(up + j), c, _CMP_GE_OQ);
        const __m256d b = _mm256_cmp_pd(_mm256_loadu_pd(up + j + 4), c, _CMP_GE_OQ);
        const int hit = _mm256_movemask_pd(a) | (_mm256_movemask_pd(b) << 4);
        if (hit) return j + __builtin_ctz(static_cast<unsigned>(hit));
    }
    return next_reaching_plain(up, j, n, cut);
}
#endif

inline Index next_reaching(const double* up, Index from, Index n, double cut) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (kernels::cpu_has_avx2_fma()) return next_reaching_avx2(up, from, n, cut);
#endif
    return next_reaching_plain(up, from, n, cut);
}

template <OmpBoundsRule Rule>
double omp_bounds(const OmpBoundsIn& in, double* up) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (kernels::cpu_has_avx2_fma()) return omp_bounds_avx2<Rule>(in, up);
#endif
    return omp_bounds_plain<Rule>(in, 0, up);
}
}  // namespace detail

// exact: largest <u_j, y>^2 / ||u_j||^2 (the RSS decrease of adding j, the book's OMP rule);
// gradient: largest |<X_j, r>| (classic OMP); coordinate: largest <X_j, r>^2 / ||X_j||^2 (the
// RSS decrease of a step along coordinate j alone). All three refit by least squares after each
// round.
enum class OmpCriterion { exact, gradient, coordinate };

inline OmpCriterion parse_omp_criterion(const std::string& s) {
    if (s == "exact") return OmpCriterion::exact;
    if (s == "gradient") return OmpCriterion::gradient;
    if (s == "coordinate") return OmpCriterion::coordinate;
    throw std::invalid_argument("criterion: unknown value '" + s +
                                "'; valid options are 'exact', 'gradient', 'coordinate'");
}

struct LinearSelection {
    std::vector<Index> selected;     // insertion order (OMP) or the kept set (backward)
    std::vector<Index> eliminated;   // backward elimination: removal order
    Eigen::VectorXd coef;            // least squares on `selected`, same order
    std::vector<double> rss;         // RSS after every round (backward: the start, then each)
    bool stopped_early = false;      // no column had a residual part above tol
    bool stopped_by_callback = false;
    Index n_passes = 0;              // passes over X after the first (OrthoBasis::n_passes)
    bool needs_preparation = false;  // omp_screened's own check refused X (nothing selected)
};

// The progress hook (core/progress.hpp) gets Progress::selection after every round: the round
// (1-based), minus the RSS (scores are maximised) and the current set; returning true ends the
// run with the result so far.

inline double omp_score(OmpCriterion crit, double c, double n, double col_sq) {
    switch (crit) {
        case OmpCriterion::exact: return c * c / n;
        case OmpCriterion::gradient: return std::abs(c);
        case OmpCriterion::coordinate: return c * c / col_sq;
    }
    return 0.0;
}

// Scores within this relative distance of the best are ties (the lowest column index wins):
// equivalent computations of one score (a basis grown round by round, a fresh SVD, a Gram
// column) differ in their last bits, and an exact tie, such as two columns whose parts outside
// the span coincide, must not be decided by that rounding.
constexpr double kOmpTie = 1e-10;

// (The first test keeps an infinite best, whose window would be inf - inf = NaN, tied with
// itself.)
inline bool omp_tied(double s, double best) {
    return s >= best || s >= best - kOmpTie * std::abs(best);
}

// The lowest index whose score ties with `best`; NaN marks a column that is not a candidate.
// -1 when there is none.
inline Index first_tied(const Eigen::VectorXd& score, double best) {
    for (Index j = 0; j < score.size(); ++j)
        if (omp_tied(score[j], best)) return j;
    return -1;
}

inline void check_stop(const StopHook& stop) {
    if (stop && stop()) throw Interrupted();
}

// The tail every OMP driver on OrthoBasis shares: a round that added a column records its RSS
// and calls the progress hook (true: the hook ended the run); a finished run takes the set and
// its least-squares coefficients from the basis.
inline bool omp_record_round(const OrthoBasis& basis, Index n_select, const ProgressHook& cb,
                             LinearSelection& out) {
    out.rss.push_back(basis.rss());
    if (cb && basis.size() < n_select &&
        cb(Progress::selection(0, basis.size(), -basis.rss(), &basis.selected()))) {
        out.stopped_by_callback = true;
        return true;
    }
    return false;
}

inline void omp_finish(const OrthoBasis& basis, LinearSelection& out) {
    out.selected = basis.selected();
    out.coef = basis.coef();
}

// OMP with a float32 screen (state/float32_columns.hpp): each round reads a float32 copy of X
// once, with one vector and a rigorous error bound per column: the correlations c = X^T r for
// the gradient and coordinate rules; for the exact rule the products p = X^T q of the direction
// added last, which give ||u_j||^2 = ||X_j||^2 - sum_k <X_j, q_k>^2 and update c (c -= theta p,
// theta = <q, r_prev>; a fresh X^T r, read alongside, when the updates' bounds have grown).
// Only the columns whose score bounds reach the best lower bound are computed in float64
// (explicit projected parts, O(m |I|) each; about one per round on every data family); ties
// and the tolerance are decided on those values, so the selection is the float64 one. The pick
// enters the basis with the part already computed. The basis keeps only Q, R and r: no pass
// over X in float64 per round.
//
// check_exponent > 0: X has not been checked by the caller. The first read of X (for the
// float32 copy and every column's moments) also checks that every value is finite and that
// every column's max |x| is 0 or has a binary exponent within +-check_exponent; when one is not,
// nothing is selected and the result says needs_preparation (the caller then checks X itself,
// raising or rescaling, and calls again): one read of X instead of a separate check.
inline bool column_in_range(double sq, double top, int limit) {
    if (!std::isfinite(sq)) return false;  // a value is NaN or infinite (or its square is)
    if (top == 0.0) return true;
    int e = 0;
    std::frexp(top, &e);
    return e >= -limit && e <= limit;
}

// XRef: a column-major X (Eigen::Ref<const Eigen::MatrixXd>) or a row-major one
// (MatrixRef<double>), with the same results bit for bit: both states build from either, and
// the sums over a column read here run in one fixed order (detail::lanes_dot).
template <class XRef>
LinearSelection omp_screened(const XRef& X, const Eigen::Ref<const Eigen::VectorXd>& y,
                             Index n_select,
                                    OmpCriterion crit, double tol, int n_threads,
                                    const StopHook& stop = {}, const ProgressHook& cb = {},
                                    int check_exponent = 0) {
    require(n_select >= 1 && n_select <= X.cols(), "n_features: must be in 1..n_features of X");
    // tol is checked here as well as by OrthoBasis, because the range check below may return
    // before the basis exists. The float32 copy checks that X and y have the same number of
    // samples.
    require(tol >= 0 && std::isfinite(tol), "tol: must be finite and >= 0");
    const Index n = X.cols();
    // One read of X gives the float32 copy and the moments the basis needs.
    ColumnMoments moments;
    const Float32Columns X32(X, y, n_threads, moments);
    if (check_exponent > 0)
        for (Index j = 0; j < n; ++j)
            if (!column_in_range(moments.sq[j], moments.top[j], check_exponent)) {
                LinearSelection refused;
                refused.needs_preparation = true;
                return refused;
            }
    OrthoBasis basis(X, y, tol, n_threads, OrthoBasis::Track::basis_only, &moments);
    const Eigen::VectorXd& col_sq = moments.sq;  // what the basis took as ||X_j||^2
    const Eigen::VectorXd& col_norm = X32.column_norms();  // their square roots
    const bool exact = crit == OmpCriterion::exact;
    // Exact rule: S_j = sum_k p~_jk^2 and E_j, the bound on |S_j - sum_k p_jk^2|.
    Eigen::VectorXd S = Eigen::VectorXd::Zero(n), E = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd c, dc, p, dp, up(n), score(n);
    std::vector<char> evaluated(static_cast<std::size_t>(n), 0), gone(static_cast<std::size_t>(n));
    Eigen::VectorXd mask = Eigen::VectorXd::Zero(n);  // 0 in play, -inf selected or dead
    auto retire = [&](Index j) {
        gone[static_cast<std::size_t>(j)] = 1;
        mask[j] = -std::numeric_limits<double>::infinity();
    };
    for (Index j = 0; j < n; ++j)
        if (basis.dead(j)) retire(j);
    // A row-major X gives a single column at a cache miss a value, about eight times the cost
    // of that column in a copy. Runs on the data families read 100-140 columns in 50 rounds;
    // one with ties everywhere or a residual down to rounding reads many more, and is better
    // off with a column-major copy: once the columns read pass half of X's (and eight), the
    // copy is made and read from then on. The values are the same, so are the results.
    Eigen::MatrixXd by_columns;
    Index column_reads = 0;
    auto will_read = [&](Index count) {
        if constexpr (std::is_same_v<XRef, MatrixRef<double>>) {
            column_reads += count;
            if (by_columns.size() == 0 && column_reads > n / 2 + 8) {
                by_columns.resize(X.rows(), n);
                if (X.outerStride() == n)
                    fortran_copy(X.data(), X.rows(), n, by_columns.data());
                else
                    by_columns = X;
                basis.use_columns(by_columns);
            }
        } else {
            (void)count;
        }
    };
    // X_j contiguous, for the sums over it: the column-major X's or copy's own, else gathered
    // into xj.
    Eigen::VectorXd xj;
    auto contiguous_column = [&](Index j) -> const double* {
        will_read(1);
        if (by_columns.size()) return by_columns.col(j).data();
        if constexpr (std::is_same_v<XRef, MatrixRef<double>>) {
            xj = X.col(j);
            return xj.data();
        } else {
            return X.col(j).data();
        }
    };
    // The columns read by column_products are kept for explicit_part_from up to this many
    // (at most 8 MiB of them; the others are read again).
    const std::size_t keep_columns = static_cast<std::size_t>(
        std::clamp<Index>((Index{1} << 20) / std::max<Index>(X.rows(), 1), 1, 64));
    Eigen::VectorXd spare_x;
    std::vector<Index> cand;
    Eigen::VectorXd u, h, sv, q_last, r_prev;
    constexpr std::size_t kKeep = 8;
    std::vector<Index> kept;
    std::vector<Eigen::VectorXd> kept_u, kept_s;
    // The exact rule's c = X^T r is updated round by round (see below) from a fresh product of
    // a residual of norm base_norm; drift = the sum of |theta| since then.
    constexpr double kFresh = 4.0;
    double base_norm = 0.0, drift = 0.0;
    Index last_t = -1;
    const double eps = std::numeric_limits<double>::epsilon();
    // Bounds within this relative margin of the threshold are computed exactly: it covers the
    // tie window and the rounding of the float64 scores.
    constexpr double kMargin = 1e-8;
    // Staged candidates (exact rule): bounds on the score from h = Q^T X_j (see below).
    struct Staged {
        std::size_t k;  // position in cand
        double lo, hi;
        bool alive;  // ||u_j||^2 clearly above tol^2 ||X_j||^2: lo counts towards the floor
    };
    struct StagedBound {
        double lo, hi;
        bool alive;
    };
    std::vector<Staged> stage;
    // A larger batch (a threshold that bounds nothing) goes straight to the explicit parts,
    // without keeping an h per candidate.
    constexpr std::size_t kStageMax = 64;
    std::vector<Eigen::VectorXd> stage_h, stage_x;  // a candidate's h and its column X_j
    double slack = 0.0, cap = 0.0;
    // ||u_j||^2 = ||X_j||^2 - ||Q^T X_j||^2 up to slack ||X_j||^2 (the screen's assumption on
    // the basis, below); h = fl(Q^T X_j) is within Delta = unit ||X_j|| (1 + 1e-6) of Q^T X_j
    // in every entry (a dot product of length m, ||q_k|| <= 1 + 1e-6), so ||h||^2 is within
    // Delta (2 ||h||_1 + |I| Delta) of ||Q^T X_j||^2, plus the roundings of ||h||^2, of
    // ||X_j||^2 and of the difference. The correlation's bound is the screen's.
    auto staged_bound = [&](const Eigen::VectorXd& hv, Index j, double unit) {
        const double tn = static_cast<double>(hv.size());
        const double hh = hv.squaredNorm(), h1 = hv.lpNorm<1>();
        const double delta = unit * col_norm[j] * (1.0 + 1e-6);
        const double nj = col_sq[j] - hh;
        const double dn = (slack * col_sq[j] + delta * (2.0 * h1 + tn * delta) +
                           (tn + 2.0) * eps * hh + (unit + 2.0 * eps) * col_sq[j]) *
                          (1.0 + 1e-6);
        const double a = std::abs(c[j]), d = a - dc[j];
        const double lo = d > 0.0 ? d : 0.0, hi = a + dc[j];
        const double l0 = lo * lo / (nj + dn), den = nj - dn;
        StagedBound b;
        b.lo = l0 > 0.0 ? l0 : 0.0;
        b.hi = den > 0.0 ? std::min(hi * hi / den, cap) : cap;
        // (NaN only from values that are not finite, which callers check: never dropped.)
        if (!(b.hi == b.hi)) b.hi = std::numeric_limits<double>::infinity();
        // Twice the bound away from tol: the explicit part of a dropped candidate would not
        // have found it dead (which retires it for the later rounds), whatever the tol.
        b.alive = den - dn > tol * tol * col_sq[j] * (1.0 + 1e-6);
        return b;
    };
    LinearSelection out;
    while (basis.size() < n_select) {
        check_stop(stop);
        const Index t = basis.size();
        const Eigen::VectorXd r = basis.residual();
        const double rss = r.squaredNorm(), r_norm = std::sqrt(rss);
        // (A retry after a pick that went dead finds the basis, hence the products, unchanged.)
        if (t != last_t && exact && t > 0) {
            // r = r_prev - theta q with q the direction added last, so X^T r = c - theta X^T q:
            // the product X^T q, which ||u_j||^2 needs anyway, updates c too, and a round reads
            // the float32 copy with one vector. The bound on c then grows by |theta| times that
            // of X^T q per round (plus the rounding of r and of the update); once it exceeds
            // kFresh times the bound of a fresh X^T r, the round computes both products.
            const double theta = q_last.dot(r_prev);
            drift += std::abs(theta);
            const bool fresh = base_norm + drift > kFresh * r_norm;
            if (fresh) {
                X32.products(r, &q_last, c, dc, &p, &dp);
                base_norm = r_norm;
                drift = 0.0;
            } else {
                X32.products(q_last, nullptr, p, dp, nullptr, nullptr);
            }
            // rho bounds ||fl(r) - (r_prev - theta q)||, the rounding of r's update.
            const double rho = 4.0 * eps * (std::abs(theta) + r_prev.norm());
            detail::omp_exact_round(c.data(), dc.data(), S.data(), E.data(), p.data(), dp.data(),
                                    col_norm.data(), theta, rho, !fresh, n);
            ++out.n_passes;
        } else if (t == 0 && last_t < 0) {
            // X^T y is known in float64 from the basis: only its rounding to bound.
            const double unit = 2.0 * static_cast<double>(X.rows() + 2) * eps * r_norm;
            c.resize(n);
            dc.resize(n);
            for (Index j = 0; j < n; ++j) {
                c[j] = basis.y_correlation(j);
                dc[j] = unit * col_norm[j];
            }
            base_norm = r_norm;
            drift = 0.0;
        } else if (t != last_t) {
            X32.products(r, nullptr, c, dc, nullptr, nullptr);
            base_norm = r_norm;
            drift = 0.0;
            ++out.n_passes;
        }
        last_t = t;
        r_prev = r;
        // Bounds on every candidate's score; the threshold is the best lower bound. Columns out
        // of play (selected or dead) get -inf.
        const double ninf = -std::numeric_limits<double>::infinity();
        double threshold = ninf;
        if (crit == OmpCriterion::exact) {
            slack = 64.0 * static_cast<double>(t + 1) * eps;
            // <u_j, r>^2 <= ||u_j||^2 ||r||^2 caps the score whatever n_j is.
            cap = rss * (1.0 + 1e-6);
            detail::OmpBoundsIn in{c.data(), dc.data(), col_sq.data(), S.data(), E.data(),
                                   mask.data(), slack, cap, n};
            threshold = detail::omp_bounds<detail::OmpBoundsRule::exact>(in, up.data());
        } else {
            detail::OmpBoundsIn in{c.data(), dc.data(), col_sq.data(), nullptr, nullptr,
                                   mask.data(), 0.0, 0.0, n};
            threshold = crit == OmpCriterion::gradient
                            ? detail::omp_bounds<detail::OmpBoundsRule::gradient>(in, up.data())
                            : detail::omp_bounds<detail::OmpBoundsRule::coordinate>(in,
                                                                                    up.data());
        }
        // Compute exactly every column whose upper bound reaches the threshold; the threshold
        // then becomes the best exact score, and the columns it newly lets in are computed too.
        double best = ninf;
        // The best lower bound of a staged candidate that is surely addable (<= its score).
        double floor = ninf;
        bool any = false;
        cand.clear();
        kept.clear();
        for (;;) {
            const double cut = threshold - kMargin * std::abs(threshold);
            const std::size_t before = cand.size();
            const bool all = cut != cut;
            auto next = [&](Index from) {
                return all ? from : detail::next_reaching(up.data(), from, n, cut);
            };
            for (Index j = next(0); j < n; j = next(j + 1))
                if (!gone[static_cast<std::size_t>(j)] && !evaluated[static_cast<std::size_t>(j)]) {
                    evaluated[static_cast<std::size_t>(j)] = 1;
                    cand.push_back(j);
                }
            // Exact rule, with a basis: first h = Q^T X_j for every new candidate (one product
            // with Q, a quarter of its explicit part when Gram-Schmidt takes its second pass),
            // which bounds ||u_j||^2 to float64 rounding; the candidates whose bound cannot
            // reach the best score are dropped without their explicit part.
            const bool staged = exact && t > 0 && cand.size() - before <= kStageMax;
            if (staged) {
                stage.clear();
                const double unit = static_cast<double>(X.rows() + 4) * eps;
                for (std::size_t k = before; k < cand.size(); ++k) {
                    const Index j = cand[k];
                    const std::size_t slot = k - before;
                    if (stage_h.size() <= slot) stage_h.resize(slot + 1);
                    will_read(1);
                    if (slot < keep_columns && stage_x.size() <= slot) stage_x.resize(slot + 1);
                    basis.column_products(j, slot < keep_columns ? stage_x[slot] : spare_x,
                                          stage_h[slot]);
                    const StagedBound b = staged_bound(stage_h[slot], j, unit);
                    stage.push_back({k, b.lo, b.hi, b.alive});
                    if (b.alive) floor = std::max(floor, b.lo);
                }
                // Highest upper bound first: the likely pick raises `best` before the rest are
                // tested against it.
                std::stable_sort(stage.begin(), stage.end(),
                                 [](const Staged& a, const Staged& b) { return a.hi > b.hi; });
            }
            const std::size_t batch = staged ? stage.size() : cand.size() - before;
            for (std::size_t q = 0; q < batch; ++q) {
                const std::size_t k = staged ? stage[q].k : before + q;
                const Index j = cand[k];
                // The gradient and coordinate rules need <X_j, r> only (O(m)); whether the pick
                // is addable, try_add decides. The exact rule needs ||u_j||^2: O(m |I|).
                double cj = 0.0, nj = 0.0;
                if (exact) {
                    if (staged && stage[q].alive) {
                        // Below the best score by more than the margin: not tied with it.
                        const double bar = std::max(best, floor);
                        if (stage[q].hi < bar - kMargin * std::abs(bar)) {
                            score[j] = std::numeric_limits<double>::quiet_NaN();
                            continue;
                        }
                    }
                    // The first kKeep candidates keep their parts: the pick's then enters the
                    // basis without a second projection.
                    const bool keep = kept.size() < kKeep;
                    const std::size_t slot = k - before;
                    const bool have_x = staged && slot < keep_columns;
                    if (!have_x) will_read(1);
                    nj = staged ? basis.explicit_part_from(j, stage_h[slot], u, h, &cj, sv,
                                                           have_x ? &stage_x[slot] : nullptr)
                                : basis.explicit_part(j, u, h, &cj, &sv);
                    if (keep) {
                        kept.push_back(j);
                        kept_u.resize(std::max(kept_u.size(), kept.size()));
                        kept_s.resize(kept_u.size());
                        kept_u[kept.size() - 1].swap(u);
                        kept_s[kept.size() - 1].swap(sv);
                    }
                    if (!(nj > tol * tol * col_sq[j])) {
                        basis.mark_dead(j);
                        retire(j);
                        score[j] = std::numeric_limits<double>::quiet_NaN();
                        continue;
                    }
                } else {
                    // (in a fixed order: the same bits whatever the layout of X)
                    cj = detail::lanes_dot(contiguous_column(j), r.data(), X.rows());
                }
                score[j] = omp_score(crit, cj, nj, col_sq[j]);
                if (std::isnan(score[j])) continue;
                any = true;
                best = std::max(best, score[j]);
            }
            if (cand.size() == before) break;
            if (!any) {
                // Every column computed so far fell below tol: the threshold came from them, so
                // the rest are computed (exact, and rare: tol above its default).
                threshold = std::numeric_limits<double>::quiet_NaN();
                continue;
            }
            if (!(best < threshold)) break;
            threshold = best;
        }
        for (Index j : cand) evaluated[static_cast<std::size_t>(j)] = 0;
        // No column left (above tol), or none lowers the RSS: every score is exactly zero (the
        // residual is zero, or orthogonal to every column's part outside the span).
        if (!any || !(best > 0.0)) {
            out.stopped_early = true;
            break;
        }
        std::sort(cand.begin(), cand.end());
        Index pick = -1;
        for (Index j : cand)
            if (!gone[static_cast<std::size_t>(j)] && !std::isnan(score[j]) &&
                omp_tied(score[j], best)) {
                pick = j;
                break;
            }
        const auto at = std::find(kept.begin(), kept.end(), pick);
        const std::size_t slot = static_cast<std::size_t>(at - kept.begin());
        if (at == kept.end()) will_read(1);
        const bool added = at != kept.end()
                               ? basis.try_add_explicit(pick, kept_u[slot], kept_s[slot])
                               : basis.try_add(pick);
        if (!added) {  // its part outside the span fell to tol: pick again
            basis.mark_dead(pick);
            retire(pick);
            continue;
        }
        retire(pick);
        if (exact) q_last = basis.basis_vectors().col(basis.size() - 1);
        if (omp_record_round(basis, n_select, cb, out)) break;
    }
    omp_finish(basis, out);
    return out;
}

// OMP on the incremental basis: the float32 screen, whatever the rule and the shape (with one
// float32 product per round for every rule it is faster than float64 passes over X on tall data
// too: 1.7x on MADELON, 2000 x 500, and even on 1000 x 300 Gaussian data).
inline LinearSelection omp_qr(const Eigen::Ref<const Eigen::MatrixXd>& X,
                              const Eigen::Ref<const Eigen::VectorXd>& y, Index n_select,
                              OmpCriterion crit, double tol, int n_threads,
                              const StopHook& stop = {}, const ProgressHook& cb = {},
                              int check_exponent = 0) {
    return omp_screened(X, y, n_select, crit, tol, n_threads, stop, cb, check_exponent);
}

// omp_qr on a row-major X, without a column-major copy: the same selection, coefficients and
// residuals, bit for bit. (Only a MatrixRef<double> itself: a column-major matrix must not
// convert to it.)
template <class R, std::enable_if_t<std::is_same_v<R, MatrixRef<double>>, int> = 0>
LinearSelection omp_qr(const R& X,
                              const Eigen::Ref<const Eigen::VectorXd>& y, Index n_select,
                              OmpCriterion crit, double tol, int n_threads,
                              const StopHook& stop = {}, const ProgressHook& cb = {},
                              int check_exponent = 0) {
    return omp_screened(X, y, n_select, crit, tol, n_threads, stop, cb, check_exponent);
}

// The book's procedure: every round, an orthonormal basis V of X_I from its SVD, the explicit
// residual parts U = X - V V^T X of all columns, and the rule on them. O(m n |I|) per round.
inline LinearSelection omp_svd(const Eigen::Ref<const Eigen::MatrixXd>& X,
                               const Eigen::Ref<const Eigen::VectorXd>& y, Index n_select,
                               OmpCriterion crit, double tol, const StopHook& stop = {},
                               const ProgressHook& cb = {}) {
    require(n_select >= 1 && n_select <= X.cols(), "n_features: must be in 1..n_features of X");
    const Index m = X.rows(), n = X.cols();
    const Eigen::VectorXd col_sq = X.colwise().squaredNorm().transpose();
    std::vector<char> chosen(static_cast<std::size_t>(n), 0);
    LinearSelection out;
    Eigen::MatrixXd V(m, 0);
    // The picked columns scaled by powers of two to norms in [1/2, 1) (exact): the rank cut
    // is relative to the largest singular value, so a column 1e14 times the others' norm
    // would otherwise hide their directions (the residual grew and the picks went wrong).
    // Returns (orthonormal basis of the span, the SVD, the column scales).
    auto basis_of = [&](const std::vector<Index>& I) {
        const Index k = static_cast<Index>(I.size());
        Eigen::MatrixXd XI(m, k);
        Eigen::VectorXd scale(k);
        for (Index c = 0; c < k; ++c) {
            int e = 0;
            std::frexp(std::sqrt(col_sq[I[static_cast<std::size_t>(c)]]), &e);
            scale[c] = std::ldexp(1.0, -e);
            XI.col(c) = X.col(I[static_cast<std::size_t>(c)]) * scale[c];
        }
        Eigen::BDCSVD<Eigen::MatrixXd> svd(XI, Eigen::ComputeThinU | Eigen::ComputeThinV);
        const auto& sv = svd.singularValues();
        const double cut = sv.size() ? sv[0] * std::numeric_limits<double>::epsilon() *
                                           static_cast<double>(std::max(m, XI.cols()))
                                     : 0.0;
        Index rank = 0;
        while (rank < sv.size() && sv[rank] > cut) ++rank;
        return std::make_tuple(Eigen::MatrixXd(svd.matrixU().leftCols(rank)), svd, scale);
    };
    for (Index round = 0; round < n_select; ++round) {
        check_stop(stop);
        const Eigen::VectorXd r = y - V * (V.transpose() * y);
        const Eigen::MatrixXd U = X - V * (V.transpose() * X);
        Eigen::VectorXd score =
            Eigen::VectorXd::Constant(n, std::numeric_limits<double>::quiet_NaN());
        double best_score = -1.0;
        for (Index j = 0; j < n; ++j) {
            if (chosen[static_cast<std::size_t>(j)]) continue;
            const double nj = U.col(j).squaredNorm();
            if (!(col_sq[j] > 0.0) || !(std::sqrt(nj) > tol * std::sqrt(col_sq[j]))) continue;
            const double s = omp_score(crit, U.col(j).dot(r), nj, col_sq[j]);
            if (std::isnan(s)) continue;
            score[j] = s;
            best_score = std::max(best_score, s);
        }
        const Index best = first_tied(score, best_score);
        if (best < 0) {
            out.stopped_early = true;
            break;
        }
        chosen[static_cast<std::size_t>(best)] = 1;
        out.selected.push_back(best);
        V = std::get<0>(basis_of(out.selected));
        const Eigen::VectorXd res = y - V * (V.transpose() * y);
        out.rss.push_back(res.squaredNorm());
        if (cb && round + 1 < n_select &&
            cb(Progress::selection(0, round + 1, -out.rss.back(), &out.selected))) {
            out.stopped_by_callback = true;
            break;
        }
    }
    if (!out.selected.empty()) {
        const auto b = basis_of(out.selected);
        out.coef = std::get<1>(b).solve(y).cwiseProduct(std::get<2>(b));
    }
    return out;
}

// Backward elimination (section 25.1.2): start from all columns and repeatedly drop the one
// whose removal raises the RSS least, until n_keep remain. Columns in the span of lower-indexed
// ones (always the case for n > m) cannot enter the basis: they are eliminated first, in
// decreasing index order, at no cost. Ties go to the lowest column index.
inline LinearSelection backward_elimination(const Eigen::Ref<const Eigen::MatrixXd>& X,
                                            const Eigen::Ref<const Eigen::VectorXd>& y,
                                            Index n_keep, double tol, int n_threads,
                                            const StopHook& stop = {},
                                            const ProgressHook& cb = {}) {
    require(n_keep >= 1 && n_keep <= X.cols(), "n_features: must be in 1..n_features of X");
    const Index n = X.cols();
    OrthoBasis basis(X, y, tol, n_threads);
    LinearSelection out;
    std::vector<Index> skipped;
    std::vector<Index> next;  // the columns that follow: their Gram columns come on the side
    for (Index j = 0; j < n; ++j) {
        if ((j & 63) == 0) check_stop(stop);
        next.clear();
        for (Index h = j + 1; h < std::min(n, j + 1 + OrthoBasis::kMaxHints); ++h)
            next.push_back(h);
        if (!basis.try_add(j, next)) skipped.push_back(j);
    }
    out.rss.push_back(basis.rss());  // the starting fit, before any removal
    Index alive = n;
    for (auto it = skipped.rbegin(); it != skipped.rend() && alive > n_keep; ++it) {
        out.eliminated.push_back(*it);
        out.rss.push_back(basis.rss());
        --alive;
    }
    std::vector<Index> extra;  // dependent columns that survive (n_keep above the rank)
    for (auto it = skipped.rbegin() + static_cast<std::ptrdiff_t>(out.eliminated.size());
         it != skipped.rend(); ++it)
        extra.push_back(*it);
    while (basis.size() > 0 && alive > n_keep) {
        check_stop(stop);
        Index worst = -1;
        double best_cost = std::numeric_limits<double>::infinity();
        std::vector<Index> order = basis.selected();
        std::sort(order.begin(), order.end());
        for (Index j : order) {
            const double cost = basis.remove_cost(j);
            if (cost < best_cost) {
                best_cost = cost;
                worst = j;
            }
        }
        basis.remove(worst);
        out.eliminated.push_back(worst);
        out.rss.push_back(basis.rss());
        --alive;
        if (cb && alive > n_keep &&
            cb(Progress::selection(0, static_cast<Index>(out.eliminated.size()), -basis.rss(),
                                &basis.selected()))) {
            out.stopped_by_callback = true;
            break;
        }
    }
    out.selected = basis.selected();
    out.coef = basis.coef();
    // Sort the kept columns by index, coefficients alongside; surviving dependent columns get 0.
    std::vector<std::pair<Index, double>> kept;
    for (std::size_t k = 0; k < out.selected.size(); ++k)
        kept.emplace_back(out.selected[k], out.coef[static_cast<Index>(k)]);
    for (Index j : extra) kept.emplace_back(j, 0.0);
    std::sort(kept.begin(), kept.end());
    out.selected.clear();
    out.coef.resize(static_cast<Index>(kept.size()));
    for (std::size_t k = 0; k < kept.size(); ++k) {
        out.selected.push_back(kept[k].first);
        out.coef[static_cast<Index>(k)] = kept[k].second;
    }
    return out;
}

}  // namespace fastfs
