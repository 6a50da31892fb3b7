// The tile reductions (neighbours/tiles.hpp, weights/relief_tiles.hpp): X split into row tiles
// of unequal sizes, every query tile's state carried through the reference tiles in order,
// gives the neighbours of the long double brute force (integer data with duplicate rows: exact
// distances, many ties, lowest index wins), the margins of one machine bit for bit, and the
// ReliefF and MultiSURF(*) scores of one machine to 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fastfs/criteria/margin.hpp"
#include "fastfs/neighbours/tiles.hpp"
#include "fastfs/weights/relief_tiles.hpp"
#include "reference.hpp"

using namespace fastfs_test;
using fastfs::MatrixRef;

namespace {

const std::vector<Index> kSplits = {0, 7, 30, 31, 52, 60};  // unequal tiles, one of one row

template <class T>
MatrixRef<T> tile(const Mat<T>& X, std::size_t t) {
    return X.middleRows(kSplits[t], kSplits[t + 1] - kSplits[t]);
}

fastfs::Labels codes_of(const Codes& c, std::size_t t) {
    return c.segment(kSplits[t], kSplits[t + 1] - kSplits[t]);
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b) {
    ASSERT_EQ(a.size(), b.size());
    double scale = 0.0;
    for (double v : a) scale = std::max(scale, std::abs(v));
    for (std::size_t f = 0; f < a.size(); ++f) EXPECT_NEAR(a[f], b[f], 1e-12 * scale) << f;
}

TEST(Tiles, NearestHitMissMatchesBruteForceAndOneMachine) {
    const Mat<double> X = make_data(Family::duplicates, 60, 5, 3);
    const Codes codes = make_codes(60, 3, 4);
    const std::vector<double> w2(5, 1.0);
    const std::size_t T = kSplits.size() - 1;
    std::vector<fastfs::HitMiss> hm(60);
    for (std::size_t q = 0; q < T; ++q)
        for (std::size_t r = 0; r < T; ++r)
            fastfs::tile_nearest_hit_miss<double>(tile(X, q), kSplits[q], codes_of(codes, q),
                                                  tile(X, r), kSplits[r], codes_of(codes, r),
                                                  w2.data(), hm.data() + kSplits[q], 2);
    const std::vector<double> theta =
        fastfs::margins_by_query<double>(X, codes, std::vector<double>{}, 1);
    for (Index i = 0; i < 60; ++i) {
        const RefHitMiss ref = ref_hit_miss(X, codes, w2, i);
        EXPECT_EQ(hm[static_cast<std::size_t>(i)].hit, ref.hit) << i;
        EXPECT_EQ(hm[static_cast<std::size_t>(i)].miss, ref.miss) << i;
        const double t = fastfs::margin_from_squared(hm[static_cast<std::size_t>(i)].hit_d,
                                                     hm[static_cast<std::size_t>(i)].miss_d);
        if (std::isnan(theta[static_cast<std::size_t>(i)])) EXPECT_TRUE(std::isnan(t));
        else EXPECT_EQ(t, theta[static_cast<std::size_t>(i)]) << i;
    }
}

TEST(Tiles, ReliefFMatchesOneMachine) {
    // integers 0 .. 4 with 0 and 4 in every column: the min-max scaled values are quarters,
    // so every Manhattan sum is exact and the ties are real ties
    Mat<double> X = make_data(Family::duplicates, 60, 5, 8);
    X.row(0).setZero();
    X.row(1).setConstant(4.0);
    X.row(40) = X.row(1);
    const Codes codes = make_codes(60, 3, 9, false);
    const int k = 4;
    const Index C = 3;
    std::vector<double> inv;
    const Mat<double> Z = fastfs::min_max_scaled<double>(X, inv);
    std::vector<Index> idx(60 * C * k, -1);
    std::vector<double> dist(idx.size(), std::numeric_limits<double>::infinity());
    std::vector<int> count(60 * C, 0);
    const std::size_t T = kSplits.size() - 1;
    for (std::size_t q = 0; q < T; ++q)
        for (std::size_t r = 0; r < T; ++r)
            fastfs::tile_k_nearest_per_class(tile(Z, q), kSplits[q], tile(Z, r), kSplits[r],
                                             codes_of(codes, r), k, C,
                                             idx.data() + kSplits[q] * C * k,
                                             dist.data() + kSplits[q] * C * k,
                                             count.data() + kSplits[q] * C, 2);
    for (Index i = 0; i < 60; ++i)
        for (Index c = 0; c < C; ++c) {
            std::vector<Index> pool;
            for (Index j = 0; j < 60; ++j)
                if (codes[j] == c) pool.push_back(j);
            const auto ref = ref_k_nearest(60, i, k, [&](Index j) { return l1_distance(Z, i, j); },
                                           pool);
            ASSERT_EQ(count[static_cast<std::size_t>(i * C + c)], static_cast<int>(ref.size()));
            for (std::size_t s = 0; s < ref.size(); ++s)
                EXPECT_EQ(idx[static_cast<std::size_t>((i * C + c) * k) + s], ref[s].second);
        }
    std::vector<double> acc(5, 0.0);
    for (std::size_t q = 0; q < T; ++q)
        for (std::size_t r = 0; r < T; ++r)
            fastfs::tile_relieff_contributions<double>(
                tile(X, q), kSplits[q], codes_of(codes, q), tile(X, r), kSplits[r],
                idx.data() + kSplits[q] * C * k, count.data() + kSplits[q] * C, k, C,
                inv.data(), acc.data());
    std::vector<double> one = fastfs::relieff_sums<double>(X, codes, k, 0, 60, 1);
    expect_close(one, acc);
}

TEST(Tiles, MultiSurfMatchesOneMachine) {
    for (bool star : {false, true}) {
        const Mat<double> X = make_data(Family::continuous, 60, 6, 12);
        const Codes codes = make_codes(60, 3, 13, false);
        const Index C = 3, n = 6;
        std::vector<double> inv;
        const Mat<double> Z = fastfs::min_max_scaled<double>(X, inv);
        const std::size_t T = kSplits.size() - 1;
        auto each_pair = [&](auto&& f) {
            for (std::size_t q = 0; q < T; ++q)
                for (std::size_t r = 0; r < T; ++r) f(q, r);
        };
        std::vector<double> s(60, 0.0), v(60, 0.0), mu(60), near(60), far(60);
        each_pair([&](std::size_t q, std::size_t r) {
            fastfs::tile_distance_sums(tile(Z, q), kSplits[q], tile(Z, r), kSplits[r], nullptr,
                                       s.data() + kSplits[q], 1);
        });
        for (Index i = 0; i < 60; ++i) mu[i] = s[i] / 59.0;
        each_pair([&](std::size_t q, std::size_t r) {
            fastfs::tile_distance_sums(tile(Z, q), kSplits[q], tile(Z, r), kSplits[r],
                                       mu.data() + kSplits[q], v.data() + kSplits[q], 1);
        });
        for (Index i = 0; i < 60; ++i) {
            const double sigma = std::sqrt(v[i] / 59.0);
            near[i] = mu[i] - sigma / 2.0;
            far[i] = mu[i] + sigma / 2.0;
        }
        std::vector<Index> nc(60 * C, 0), fc(60 * C, 0);
        std::vector<double> coef(60 * 2 * C), constant(60), acc(60 * n, 0.0);
        auto rule_of = [&](std::size_t q) {
            return fastfs::RadiusTiles{near.data() + kSplits[q],
                                       star ? far.data() + kSplits[q] : nullptr};
        };
        each_pair([&](std::size_t q, std::size_t r) {
            fastfs::tile_radius_counts(tile(Z, q), kSplits[q], tile(Z, r), kSplits[r],
                                       codes_of(codes, r), rule_of(q), C,
                                       nc.data() + kSplits[q] * C, fc.data() + kSplits[q] * C, 2);
        });
        fastfs::radius_coefficients(codes, star, star, C, nc.data(), fc.data(), coef.data(),
                                    constant.data());
        each_pair([&](std::size_t q, std::size_t r) {
            fastfs::tile_radius_contributions(tile(Z, q), kSplits[q], tile(Z, r), kSplits[r],
                                              codes_of(codes, r), rule_of(q), C,
                                              coef.data() + kSplits[q] * 2 * C,
                                              acc.data() + kSplits[q] * n, 2);
        });
        std::vector<double> w(static_cast<std::size_t>(n), 0.0);
        for (Index i = 0; i < 60; ++i)
            for (Index f = 0; f < n; ++f)
                if (inv[static_cast<std::size_t>(f)] > 0) w[f] += acc[i * n + f] + constant[i];
        const auto rule = star ? fastfs::RadiusRule::multisurf_star : fastfs::RadiusRule::multisurf;
        expect_close(fastfs::relief_radius_sums<double>(X, codes, rule, 0, 60, 1), w);
    }
}

}  // namespace
