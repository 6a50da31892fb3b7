// data/scan.hpp: the one-read finiteness and magnitude scan, and the radix ranking, against
// plain references (a loop with std::isfinite, std::stable_sort with the stated order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "fastfs/data/scan.hpp"
#include "reference.hpp"

using fastfs_test::Gen;

TEST(Scan, FiniteMaxAbsMatchesALoop) {
    Gen g(3);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8},
                          std::size_t{1001}}) {
        std::vector<double> x(n);
        for (auto& v : x) v = g.normal() * 1e3;
        double top = 0.0;
        for (double v : x) top = std::max(top, std::abs(v));
        const auto r = fastfs::finite_max_abs(x.data(), n);
        EXPECT_TRUE(r.finite);
        EXPECT_EQ(r.max_abs, top);
        const std::vector<float> xf(x.begin(), x.end());
        const auto rf = fastfs::finite_max_abs(xf.data(), n);
        EXPECT_TRUE(rf.finite);
        double topf = 0.0;
        for (float v : xf) topf = std::max(topf, std::abs(static_cast<double>(v)));
        EXPECT_EQ(rf.max_abs, topf);
        for (std::size_t at : {std::size_t{0}, n / 2, n ? n - 1 : 0}) {
            if (!n) break;
            for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()}) {
                std::vector<double> y = x;
                y[at] = bad;
                EXPECT_FALSE(fastfs::finite_max_abs(y.data(), n).finite) << n << " " << at;
            }
        }
    }
}

TEST(Scan, RankingIsTheStableDescendingOrder) {
    Gen g(11);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // Sizes below and above the switch to 11-bit digits (4096); the last three trials put
    // values within a relative 2^-20 of each other (one top half of the key, the order
    // decided by the bottom half alone): about two and about 100 to a signed base (runs
    // sorted by a comparison sort), and about 5000 and 4000 in two runs (a second radix pass
    // of 11-bit digits), among exact ties.
    for (int trial = 0; trial < 10; ++trial) {
        const std::size_t n = trial == 0   ? 0
                              : trial == 6 ? 5000
                              : trial == 7 ? 300
                              : trial == 8 ? 10000
                              : trial == 9 ? 2000
                                           : static_cast<std::size_t>(1 + 97 * trial);
        std::vector<double> w(n);
        for (auto& v : w) {
            const double u = g.uniform();
            if (trial >= 7) {
                // Near ties: 1 + k 2^-45 (k < 1000) and -3 - k 2^-44, some exact repeats;
                // with 300 values, +-75 bases times 1 + k 2^-40 (k < 3): about two a signed base.
                const double k = static_cast<double>(g.below(trial == 7 ? 3 : 1000));
                if (trial == 7 || trial == 9)
                    v = (u < 0.5 ? 1.0 : -1.0) * 0.37 *
                        static_cast<double>(1 + g.below(trial == 7 ? 75 : 10)) *
                        (1.0 + k * 0x1p-40);
                else
                    v = u < 0.5 ? 1.0 + k * 0x1p-45 : u < 0.9 ? -3.0 - k * 0x1p-44 : 2.0;
                continue;
            }
            // Many ties, both zeros, infinities, NaN, tiny and huge values, negatives.
            v = u < 0.2 ? std::round(g.normal() * 2.0) : u < 0.25 ? -0.0 : u < 0.3 ? nan
                : u < 0.33 ? inf : u < 0.36 ? -inf : u < 0.4 ? g.normal() * 1e-310
                : g.normal() * std::pow(10.0, static_cast<double>(g.below(40)) - 20.0);
        }
        std::vector<std::int64_t> want(n);
        std::iota(want.begin(), want.end(), 0);
        std::stable_sort(want.begin(), want.end(), [&](std::int64_t a, std::int64_t b) {
            const double x = w[static_cast<std::size_t>(a)], y = w[static_cast<std::size_t>(b)];
            if (std::isnan(x)) return false;
            if (std::isnan(y)) return true;
            return x > y;
        });
        EXPECT_EQ(fastfs::ranking_descending(w.data(), n), want) << trial;
    }
}

TEST(Scan, ColumnMaxAbsMatchesALoop) {
    Gen g(5);
    for (fastfs::Index m : {fastfs::Index{1}, fastfs::Index{7}, fastfs::Index{72}}) {
        const fastfs::Index n = 13;
        std::vector<double> x(static_cast<std::size_t>(m * n));
        for (auto& v : x) v = g.normal() * 1e-3;
        x[static_cast<std::size_t>(m * 4)] = -5.0;  // the largest magnitude is negative
        std::vector<double> got(static_cast<std::size_t>(n), -1.0);
        EXPECT_TRUE(fastfs::column_max_abs(x.data(), m, n, got.data()));
        for (fastfs::Index j = 0; j < n; ++j) {
            double top = 0.0;
            for (fastfs::Index i = 0; i < m; ++i)
                top = std::max(top, std::abs(x[static_cast<std::size_t>(j * m + i)]));
            EXPECT_EQ(got[static_cast<std::size_t>(j)], top) << m << " " << j;
        }
        EXPECT_EQ(got[4], 5.0);
        x[static_cast<std::size_t>(m * n - 1)] = std::numeric_limits<double>::quiet_NaN();
        EXPECT_FALSE(fastfs::column_max_abs(x.data(), m, n, got.data()));
    }
}
