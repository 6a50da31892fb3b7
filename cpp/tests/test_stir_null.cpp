// stir_null_components (weights/stir_null.hpp), STIR's per-feature null variance components
// from the sorted columns, against the Hoeffding decomposition written out over every pair of
// distinct samples (O(m^2) per feature), on continuous data, exact ties and duplicate rows and
// a constant feature; 1 and 3 threads give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fastfs/weights/stir_null.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

void brute(const Mat<double>& X, const std::vector<double>& a, std::vector<double>& v1,
           std::vector<double>& s2) {
    const Index m = X.rows(), n = X.cols();
    v1.assign(static_cast<std::size_t>(n), 0.0);
    s2.assign(static_cast<std::size_t>(n), 0.0);
    for (Index f = 0; f < n; ++f) {
        const double lo = X.col(f).minCoeff(), hi = X.col(f).maxCoeff();
        std::vector<double> z(static_cast<std::size_t>(m));
        for (Index i = 0; i < m; ++i)
            z[static_cast<std::size_t>(i)] = hi > lo ? (X(i, f) - lo) / (hi - lo) : 0.0;
        double theta = 0.0, d2 = 0.0;
        std::vector<double> g(static_cast<std::size_t>(m), 0.0);
        for (Index x = 0; x < m; ++x)
            for (Index y = 0; y < m; ++y) {
                if (x == y) continue;
                const double d = std::fabs(z[static_cast<std::size_t>(x)] - z[static_cast<std::size_t>(y)]);
                g[static_cast<std::size_t>(x)] += d / static_cast<double>(m - 1);
                theta += d;
                d2 += d * d;
            }
        const double pairs = static_cast<double>(m) * static_cast<double>(m - 1);
        theta /= pairs;
        double s1 = 0.0;
        for (Index x = 0; x < m; ++x) {
            const double gx = g[static_cast<std::size_t>(x)] - theta;
            v1[static_cast<std::size_t>(f)] += a[static_cast<std::size_t>(x)] * a[static_cast<std::size_t>(x)] * gx * gx;
            s1 += gx * gx / static_cast<double>(m);
        }
        s2[static_cast<std::size_t>(f)] = std::max(d2 / pairs - theta * theta - 2.0 * s1, 0.0);
    }
}

TEST(StirNull, EqualsEveryPairWrittenOut) {
    for (Family fam : {Family::continuous, Family::integers, Family::duplicates}) {
        SCOPED_TRACE(family_name(fam));
        const Index m = 41, n = 7;
        Mat<double> X = make_data(fam, m, n, 5);
        for (Index i = 0; i < m; ++i) X(i, 3) = 1.5;  // constant
        std::vector<double> a(static_cast<std::size_t>(m));
        for (Index i = 0; i < m; ++i) a[static_cast<std::size_t>(i)] = std::sin(0.7 * static_cast<double>(i));
        std::vector<double> v1, s2, v1_3, s2_3, bv1, bs2;
        fastfs::stir_null_components<double>(X, a, 1, v1, s2);
        fastfs::stir_null_components<double>(X, a, 3, v1_3, s2_3);
        EXPECT_EQ(v1, v1_3);
        EXPECT_EQ(s2, s2_3);
        brute(X, a, bv1, bs2);
        for (Index f = 0; f < n; ++f) {
            EXPECT_NEAR(v1[static_cast<std::size_t>(f)], bv1[static_cast<std::size_t>(f)], 1e-12 * (1.0 + bv1[static_cast<std::size_t>(f)])) << f;
            EXPECT_NEAR(s2[static_cast<std::size_t>(f)], bs2[static_cast<std::size_t>(f)], 1e-12) << f;
        }
        EXPECT_EQ(v1[3], 0.0);
        EXPECT_EQ(s2[3], 0.0);
    }
}

}  // namespace
