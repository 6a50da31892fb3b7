// linear/omp.hpp: the score bounds of OMP's float32 screen, the run-time chosen (AVX2) kernel
// against the plain loop, including NaN and infinite inputs and columns out of play, and the
// bounds against scores they must enclose; the float32 copy and OMP from a row-major X against
// the column-major one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "fastfs/linear/omp.hpp"
#include "fastfs/state/float32_columns.hpp"
#include "reference.hpp"

using fastfs::Index;
using fastfs_test::Gen;
namespace d = fastfs::detail;

namespace {
template <d::OmpBoundsRule Rule>
void check_same(const d::OmpBoundsIn& in) {
    std::vector<double> a(static_cast<std::size_t>(in.n)), b(a.size());
    const double ba = d::omp_bounds<Rule>(in, a.data());
    const double bb = d::omp_bounds_plain<Rule>(in, 0, b.data());
    EXPECT_EQ(ba, bb);
    for (std::size_t j = 0; j < a.size(); ++j)
        EXPECT_EQ(std::memcmp(&a[j], &b[j], sizeof(double)), 0) << j << " " << a[j] << " " << b[j];
}
}  // namespace

TEST(OmpBounds, DispatchedKernelEqualsThePlainLoop) {
    Gen g(7);
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Index n = 37;  // not a multiple of four: the tail runs the plain loop
    std::vector<double> c(n), dc(n), col_sq(n), S(n), E(n), mask(n, 0.0);
    for (Index j = 0; j < n; ++j) {
        col_sq[j] = 1.0 + g.uniform();
        S[j] = col_sq[j] * g.uniform();
        E[j] = 1e-6 * g.uniform();
        c[j] = g.normal();
        dc[j] = 1e-3 * g.uniform();
        if (j % 5 == 0) mask[j] = -inf;
    }
    c[3] = inf;
    dc[3] = inf;      // inf - inf: NaN lower bound
    c[6] = nan;       // NaN everywhere
    S[7] = col_sq[7]; // n_j - dn_j <= 0: the cap
    col_sq[8] = 0.0;  // 0 / 0 for the coordinate rule
    c[8] = 0.0;
    dc[8] = 0.0;
    d::OmpBoundsIn in{c.data(), dc.data(), col_sq.data(), S.data(), E.data(), mask.data(),
                      1e-12, 4.0, n};
    check_same<d::OmpBoundsRule::exact>(in);
    check_same<d::OmpBoundsRule::gradient>(in);
    check_same<d::OmpBoundsRule::coordinate>(in);
}

TEST(OmpBounds, EncloseTheScores) {
    Gen g(9);
    const Index n = 64;
    std::vector<double> c(n), dc(n), col_sq(n), S(n), E(n, 0.0), mask(n, 0.0), up(n);
    std::vector<double> truth(n), nj(n);
    for (Index j = 0; j < n; ++j) {
        col_sq[j] = 1.0 + g.uniform();
        nj[j] = col_sq[j] * (0.1 + 0.9 * g.uniform());
        S[j] = col_sq[j] - nj[j];
        truth[j] = 0.5 * g.normal();
        dc[j] = 1e-2 * g.uniform();
        c[j] = truth[j] + dc[j] * (2.0 * g.uniform() - 1.0);
    }
    d::OmpBoundsIn in{c.data(), dc.data(), col_sq.data(), S.data(), E.data(), mask.data(),
                      0.0, 1e300, n};
    double best = d::omp_bounds<d::OmpBoundsRule::exact>(in, up.data());
    double top = 0.0;
    for (Index j = 0; j < n; ++j) {
        const double s = truth[j] * truth[j] / nj[j];
        EXPECT_LE(s, up[j] * (1 + 1e-12));
        top = std::max(top, s);
    }
    EXPECT_LE(best, top * (1 + 1e-12));
    best = d::omp_bounds<d::OmpBoundsRule::gradient>(in, up.data());
    top = 0.0;
    for (Index j = 0; j < n; ++j) {
        EXPECT_LE(std::abs(truth[j]), up[j] * (1 + 1e-12));
        top = std::max(top, std::abs(truth[j]));
    }
    EXPECT_LE(best, top * (1 + 1e-12));
}

// state/float32_columns.hpp: a column filled into a full panel (AVX2 transpose where the CPU
// has it) gives bit for bit the product it gives from a partial panel (the plain loop), and
// the products lie within their bounds of the float64 ones.
TEST(Float32Columns, FullAndPartialPanelsAgree) {
    Gen g(13);
    const Index m = 75, n = 17;  // m not a multiple of four: the tail rows
    Eigen::MatrixXd X(m, n);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i)
            X(i, j) = g.normal() * std::ldexp(1.0, static_cast<int>(j) - 8);
    Eigen::MatrixXd X2(m, n);  // column 0 moved to the last, partial panel
    X2.leftCols(n - 1) = X.rightCols(n - 1);
    X2.col(n - 1) = X.col(0);
    Eigen::VectorXd y(m);
    for (Index i = 0; i < m; ++i) y[i] = g.normal();
    fastfs::ColumnMoments ma, mb;
    const fastfs::Float32Columns A(X, y, 1, ma), B(X2, y, 1, mb);
    Eigen::VectorXd v(m);
    for (Index i = 0; i < m; ++i) v[i] = g.normal();
    Eigen::VectorXd oa, ea, ob, eb;
    A.products(v, nullptr, oa, ea, nullptr, nullptr);
    B.products(v, nullptr, ob, eb, nullptr, nullptr);
    EXPECT_EQ(oa[0], ob[n - 1]);
    for (Index j = 1; j < n; ++j) EXPECT_EQ(oa[j], ob[j - 1]);
    const Eigen::VectorXd exact = X.transpose() * v;
    for (Index j = 0; j < n; ++j) EXPECT_LE(std::abs(oa[j] - exact[j]), ea[j]) << j;
}

// The copy that computes every column's moments against y in the same read (what OMP builds):
// the moments are ||X_j||^2, <X_j, y> and max |X_ij| (the maximum exactly), and the copy's
// products lie within their bounds of the float64 ones. A column holding NaN or infinity gets
// a ||X_j||^2 that is not finite, which is what OMP's own input check looks at.
TEST(Float32Columns, MomentsFromTheSameRead) {
    Gen g(14);
    const Index m = 75, n = 21;
    Eigen::MatrixXd X(m, n);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i)
            X(i, j) = g.normal() * std::ldexp(1.0, static_cast<int>(j) - 10);
    Eigen::VectorXd y(m);
    for (Index i = 0; i < m; ++i) y[i] = g.normal();
    fastfs::ColumnMoments mom;
    const fastfs::Float32Columns A(X, y, 1, mom);
    ASSERT_EQ(mom.sq.size(), n);
    for (Index j = 0; j < n; ++j) {
        EXPECT_NEAR(mom.sq[j], X.col(j).squaredNorm(), 1e-13 * X.col(j).squaredNorm());
        EXPECT_NEAR(mom.xty[j], X.col(j).dot(y), 1e-13 * X.col(j).norm() * y.norm());
        EXPECT_EQ(mom.top[j], X.col(j).cwiseAbs().maxCoeff());
    }
    Eigen::VectorXd v(m), w(m);
    for (Index i = 0; i < m; ++i) {
        v[i] = g.normal();
        w[i] = g.normal() * 1e-3;
    }
    Eigen::VectorXd oa, ea, ob, eb;
    A.products(v, &w, oa, ea, &ob, &eb);
    const Eigen::VectorXd ev = X.transpose() * v, ew = X.transpose() * w;
    for (Index j = 0; j < n; ++j) {
        EXPECT_LE(std::abs(oa[j] - ev[j]), ea[j]) << j;
        EXPECT_LE(std::abs(ob[j] - ew[j]), eb[j]) << j;
        // The bound is a few float32 roundings of the column's scale, not a vacuous one.
        EXPECT_LE(ea[j], 1e-4 * X.col(j).norm() * v.norm()) << j;
    }
    for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
        Eigen::MatrixXd Xb = X;
        Xb(40, 17) = bad;
        fastfs::ColumnMoments mb;
        const fastfs::Float32Columns C(Xb, y, 1, mb);
        EXPECT_FALSE(std::isfinite(mb.sq[17]));
        EXPECT_TRUE(std::isfinite(mb.sq[16]));
        EXPECT_FALSE(fastfs::column_in_range(mb.sq[17], mb.top[17], 200));
    }
    EXPECT_TRUE(fastfs::column_in_range(1.0, 1.0, 200));
    EXPECT_TRUE(fastfs::column_in_range(0.0, 0.0, 200));
    EXPECT_TRUE(fastfs::column_in_range(1.0, std::ldexp(0.75, 200), 200));
    EXPECT_FALSE(fastfs::column_in_range(1.0, std::ldexp(0.75, 201), 200));
    EXPECT_TRUE(fastfs::column_in_range(1.0, std::ldexp(0.75, -200), 200));
    EXPECT_FALSE(fastfs::column_in_range(1.0, std::ldexp(0.75, -201), 200));
    EXPECT_THROW(fastfs::Float32Columns(X, y.head(m - 1), 1, mom), std::invalid_argument);
}

namespace {
// The bits of a double (EXPECT_EQ would take NaN != NaN and 0.0 == -0.0).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

Eigen::MatrixXd mixed_columns(Gen& g, Index m, Index n) {
    Eigen::MatrixXd X(m, n);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < m; ++i) {
            double v = g.normal() * std::ldexp(1.0, static_cast<int>(j % 23) - 11);
            if (j % 3 == 1) v = std::round(4.0 * v);  // ties and zeros
            X(i, j) = v;
        }
    if (n > 4) X.col(4) = X.col(1);  // a copy
    if (n > 2) X.col(2).setZero();
    return X;
}
}  // namespace

// The copy from a row-major X: the same moments and the same float32 panels, bit for bit, as
// from the column-major X, whatever the shape (partial panels, fewer rows than lanes, blocks of
// columns wider than 1024, a team of threads above 2^20 elements); not finite values reach the
// moments as they do from the columns.
TEST(Float32Columns, RowMajorXGivesTheSameCopyBitForBit) {
    Gen g(21);
    struct Shape {
        Index m, n;
    };
    for (const Shape sh : {Shape{1, 1}, Shape{1, 40}, Shape{15, 3}, Shape{16, 16},
                           Shape{17, 17}, Shape{75, 70}, Shape{300, 33}, Shape{40, 2100},
                           Shape{1100, 1000}}) {
        const Eigen::MatrixXd X = mixed_columns(g, sh.m, sh.n);
        const fastfs::RowMatrix<double> Xr = X;
        Eigen::VectorXd y(sh.m), v(sh.m), w(sh.m);
        for (Index i = 0; i < sh.m; ++i) {
            y[i] = g.normal();
            v[i] = g.normal();
            w[i] = 1e-3 * g.normal();
        }
        for (int threads : {1, 2}) {
            fastfs::ColumnMoments mc, mr;
            const fastfs::Float32Columns C(X, y, threads, mc);
            const fastfs::Float32Columns R(fastfs::MatrixRef<double>(Xr), y, threads, mr);
            Eigen::VectorXd oc, ec, pc, fc, orr, er, pr, fr;
            C.products(v, &w, oc, ec, &pc, &fc);
            R.products(v, &w, orr, er, &pr, &fr);
            int bad = 0;
            for (Index j = 0; j < sh.n; ++j) {
                bad += !same_bits(mc.sq[j], mr.sq[j]) + !same_bits(mc.xty[j], mr.xty[j]) +
                       !same_bits(mc.top[j], mr.top[j]);
                bad += !same_bits(oc[j], orr[j]) + !same_bits(ec[j], er[j]) +
                       !same_bits(pc[j], pr[j]) + !same_bits(fc[j], fr[j]);
                // and the moments are the columns' (an independent sum, to rounding)
                EXPECT_NEAR(mr.sq[j], X.col(j).squaredNorm(), 1e-13 * X.col(j).squaredNorm());
                EXPECT_EQ(mr.top[j], X.col(j).cwiseAbs().maxCoeff());
            }
            EXPECT_EQ(bad, 0) << sh.m << " x " << sh.n << ", " << threads << " threads";
        }
    }
    Eigen::MatrixXd X = mixed_columns(g, 50, 20);
    X(7, 3) = std::numeric_limits<double>::quiet_NaN();
    X(9, 5) = -std::numeric_limits<double>::infinity();
    const fastfs::RowMatrix<double> Xr = X;
    Eigen::VectorXd y = Eigen::VectorXd::Ones(50);
    fastfs::ColumnMoments mc, mr;
    const fastfs::Float32Columns C(X, y, 1, mc);
    const fastfs::Float32Columns R(fastfs::MatrixRef<double>(Xr), y, 1, mr);
    for (Index j = 0; j < 20; ++j) {
        EXPECT_TRUE(same_bits(mc.sq[j], mr.sq[j])) << j;
        EXPECT_EQ(std::isfinite(mr.sq[j]), j != 3 && j != 5) << j;
    }
    EXPECT_THROW(fastfs::Float32Columns(fastfs::MatrixRef<double>(Xr), y.head(49), 1, mr),
                 std::invalid_argument);
}

namespace {
// omp_qr on X and on its row-major copy Xr: the same selection, coefficients and residual sums,
// bit for bit.
void expect_same_omp_runs(const Eigen::MatrixXd& X, const fastfs::RowMatrix<double>& Xr,
                          const Eigen::VectorXd& y, Index k, fastfs::OmpCriterion crit,
                          int threads) {
    const auto a = fastfs::omp_qr(X, y, k, crit, 1e-10, threads, {}, {}, 200);
    const auto b = fastfs::omp_qr(fastfs::MatrixRef<double>(Xr), y, k, crit, 1e-10, threads, {},
                                  {}, 200);
    ASSERT_FALSE(a.needs_preparation);
    EXPECT_EQ(a.selected, b.selected);
    ASSERT_EQ(a.coef.size(), b.coef.size());
    for (Index t = 0; t < a.coef.size(); ++t) EXPECT_TRUE(same_bits(a.coef[t], b.coef[t])) << t;
    ASSERT_EQ(a.rss.size(), b.rss.size());
    for (std::size_t t = 0; t < a.rss.size(); ++t)
        EXPECT_TRUE(same_bits(a.rss[t], b.rss[t])) << t;
}
}  // namespace

// OMP on a row-major X (no column-major copy, or one made part way) makes the run it makes on
// the column-major X:
// the same selections, coefficients and residual sums, bit for bit, for every rule, 1 and 2
// threads, columns in the span (copies, a zero column) and a column of extreme magnitude,
// which both refuse in their own check.
TEST(Omp, RowMajorXGivesTheSameRunBitForBit) {
    Gen g(22);
    for (const auto& [m, n] : {std::pair<Index, Index>{60, 40}, {40, 120}, {1100, 1000}}) {
        const Eigen::MatrixXd X = mixed_columns(g, m, n);
        const fastfs::RowMatrix<double> Xr = X;
        Eigen::VectorXd y(m);
        for (Index i = 0; i < m; ++i)
            y[i] = X(i, 0) - 2.0 * X(i, 5 % n) + X(i, 7 % n) + 0.1 * g.normal();
        const Index k = std::min<Index>(30, n);
        for (auto crit : {fastfs::OmpCriterion::exact, fastfs::OmpCriterion::gradient,
                          fastfs::OmpCriterion::coordinate})
            for (int threads : {1, 2}) {
                SCOPED_TRACE(testing::Message() << m << " x " << n << ", " << threads);
                expect_same_omp_runs(X, Xr, y, k, crit, threads);
            }
    }
    // Runs that read many single columns: y = 0 (every column tied, every round), y exactly in
    // the span of a few columns (the residual down to rounding: every column's explicit part),
    // on tall data (fewer kept columns than candidates); the row-major run changes to a
    // column-major copy on the way, and nothing else changes.
    for (const auto& [m, n] : {std::pair<Index, Index>{300, 90}, {150000, 12}}) {
        const Eigen::MatrixXd X = mixed_columns(g, m, n);
        const fastfs::RowMatrix<double> Xr = X;
        for (int kind : {0, 1}) {
            Eigen::VectorXd y = Eigen::VectorXd::Zero(m);
            if (kind == 1) y = 3.0 * X.col(0) - X.col(7) + 0.5 * X.col(10);
            for (auto crit : {fastfs::OmpCriterion::exact, fastfs::OmpCriterion::gradient,
                              fastfs::OmpCriterion::coordinate}) {
                SCOPED_TRACE(testing::Message() << m << " x " << n << ", y kind " << kind);
                expect_same_omp_runs(X, Xr, y, 8, crit, 1);
            }
        }
    }
    Eigen::MatrixXd X = mixed_columns(g, 30, 10);
    X.col(6) *= std::ldexp(1.0, 300);
    const fastfs::RowMatrix<double> Xr = X;
    const Eigen::VectorXd y = X.col(0);
    const auto r = fastfs::omp_qr(fastfs::MatrixRef<double>(Xr), y, 3,
                                  fastfs::OmpCriterion::exact, 1e-10, 1, {}, {}, 200);
    EXPECT_TRUE(r.needs_preparation);
    EXPECT_TRUE(r.selected.empty());
}

// The candidate scan: next_reaching finds, from any start, the first column whose upper bound
// reaches the cut (-inf for columns out of play), as a plain loop does, for every length and
// position of the hits (the eight-column blocks and their tails).
TEST(OmpBounds, NextReachingIsTheFirstHit) {
    Gen g(15);
    const double ninf = -std::numeric_limits<double>::infinity();
    for (Index n : {0, 1, 7, 8, 9, 23, 64, 101}) {
        std::vector<double> up(static_cast<std::size_t>(n));
        for (auto& v : up) v = g.uniform() < 0.1 ? ninf : g.normal();
        for (double cut : {0.0, 1.5, 3.0, ninf}) {
            for (Index from = 0; from <= n; ++from) {
                Index want = n;
                for (Index j = from; j < n; ++j)
                    if (up[static_cast<std::size_t>(j)] >= cut) {
                        want = j;
                        break;
                    }
                EXPECT_EQ(fastfs::detail::next_reaching(up.data(), from, n, cut), want)
                    << n << " " << cut << " " << from;
            }
        }
    }
}
