// linear/omp.hpp: the score bounds of OMP's float32 screen, the run-time chosen (AVX2) kernel
// against the plain loop, including NaN and infinite inputs and columns out of play, and the
// bounds against scores they must enclose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "fastfs/linear/omp.hpp"
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
