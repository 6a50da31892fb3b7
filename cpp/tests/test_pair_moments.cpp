// PairMoments (relief.hpp), STIR's moments of the neighbour differences, filled by the ReliefF
// and MultiSURF passes: checked against every (sample, neighbour) pair enumerated by brute
// force (ReliefF: k nearest of each class by (distance, index), self excluded; MultiSURF: the
// others closer than mu - sigma / 2), for 1 and 2 threads (the same bits), and the weights of a
// pass with moments equal those of a pass without; the pair graph (per sample its hit and miss
// pairs as query or neighbour, the mutual ordered pairs) against the same enumeration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fastfs/weights/relief.hpp"
#include "fastfs/weights/relief_radius.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

struct Brute {
    std::vector<double> hs, hq, ms, mq;
    double nh = 0, nm = 0;
    std::vector<std::int64_t> hit_pairs, miss_pairs;
    std::int64_t mutual_hit = 0, mutual_miss = 0;
};

Brute brute_moments(const Mat<double>& X, const Codes& codes, bool knn, Index k) {
    const Index m = X.rows(), n = X.cols();
    Mat<double> Z = X;
    for (Index f = 0; f < n; ++f) {
        const double lo = X.col(f).minCoeff(), hi = X.col(f).maxCoeff();
        for (Index i = 0; i < m; ++i) Z(i, f) = hi > lo ? (X(i, f) - lo) / (hi - lo) : 0.0;
    }
    auto dist = [&](Index i, Index j) { return (Z.row(i) - Z.row(j)).cwiseAbs().sum(); };
    Brute b;
    for (auto* v : {&b.hs, &b.hq, &b.ms, &b.mq}) v->assign(static_cast<std::size_t>(n), 0.0);
    b.hit_pairs.assign(static_cast<std::size_t>(m), 0);
    b.miss_pairs.assign(static_cast<std::size_t>(m), 0);
    std::vector<char> pair(static_cast<std::size_t>(m * m), 0);  // pair[i m + j]: j near i
    for (Index i = 0; i < m; ++i) {
        std::vector<Index> chosen;
        if (knn) {
            const std::int64_t C = codes.maxCoeff() + 1;
            for (std::int64_t c = 0; c < C; ++c) {
                std::vector<Index> members;
                for (Index j = 0; j < m; ++j)
                    if (j != i && codes[j] == c) members.push_back(j);
                std::sort(members.begin(), members.end(), [&](Index a, Index z) {
                    const double da = dist(i, a), dz = dist(i, z);
                    return da < dz || (da == dz && a < z);
                });
                for (Index r = 0; r < std::min<Index>(k, static_cast<Index>(members.size())); ++r)
                    chosen.push_back(members[static_cast<std::size_t>(r)]);
            }
        } else {
            double s = 0, s2 = 0;
            for (Index j = 0; j < m; ++j)
                if (j != i) s += dist(i, j);
            const double mu = s / static_cast<double>(m - 1);
            for (Index j = 0; j < m; ++j)
                if (j != i) s2 += (dist(i, j) - mu) * (dist(i, j) - mu);
            const double thr = mu - std::sqrt(s2 / static_cast<double>(m - 1)) / 2;
            for (Index j = 0; j < m; ++j)
                if (j != i && dist(i, j) < thr) chosen.push_back(j);
        }
        for (Index j : chosen) {
            const bool hit = codes[j] == codes[i];
            for (Index f = 0; f < n; ++f) {
                const double d = std::fabs(Z(i, f) - Z(j, f));
                (hit ? b.hs : b.ms)[static_cast<std::size_t>(f)] += d;
                (hit ? b.hq : b.mq)[static_cast<std::size_t>(f)] += d * d;
            }
            (hit ? b.nh : b.nm) += 1;
            pair[static_cast<std::size_t>(i * m + j)] = 1;
            for (Index e : {i, j}) ++(hit ? b.hit_pairs : b.miss_pairs)[static_cast<std::size_t>(e)];
        }
    }
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < m; ++j)
            if (pair[static_cast<std::size_t>(i * m + j)] && pair[static_cast<std::size_t>(j * m + i)])
                ++(codes[i] == codes[j] ? b.mutual_hit : b.mutual_miss);
    return b;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t f = 0; f < got.size(); ++f)
        EXPECT_NEAR(got[f], want[f], 1e-12 * (1.0 + std::fabs(want[f]))) << "feature " << f;
}

void run_case(bool knn, std::int64_t classes, Index n) {
    SCOPED_TRACE((knn ? "relieff" : "multisurf") + std::string(", classes ") +
                 std::to_string(classes) + ", n " + std::to_string(n));
    const Index m = 57, k = 4;
    const Mat<double> X = make_data(Family::continuous, m, n, 3 + static_cast<std::uint64_t>(n));
    Codes codes(m);
    for (Index i = 0; i < m; ++i) codes[i] = (i * 7 + i / 5) % classes;
    fastfs::PairMoments one, two;
    std::vector<double> w1, w2, plain;
    if (knn) {
        w1 = fastfs::relieff<double>(X, codes, k, 1, {}, {}, nullptr, {}, &one);
        w2 = fastfs::relieff<double>(X, codes, k, 2, {}, {}, nullptr, {}, &two);
        plain = fastfs::relieff<double>(X, codes, k, 2);
    } else {
        const auto rule = fastfs::RadiusRule::multisurf;
        w1 = fastfs::relief_radius<double>(X, codes, rule, 1, {}, {}, nullptr, {}, &one);
        w2 = fastfs::relief_radius<double>(X, codes, rule, 2, {}, {}, nullptr, {}, &two);
        plain = fastfs::relief_radius<double>(X, codes, rule, 2);
    }
    EXPECT_EQ(w1, w2);
    // MultiSURF without moments adds each pair's two contributions as one: equal up to rounding
    if (knn) EXPECT_EQ(w1, plain);
    else expect_close(w1, plain);
    EXPECT_EQ(one.hit_sum, two.hit_sum);
    EXPECT_EQ(one.miss_sq, two.miss_sq);
    const Brute b = brute_moments(X, codes, knn, k);
    EXPECT_EQ(one.n_hit, b.nh);
    EXPECT_EQ(one.n_miss, b.nm);
    expect_close(one.hit_sum, b.hs);
    expect_close(one.hit_sq, b.hq);
    expect_close(one.miss_sum, b.ms);
    expect_close(one.miss_sq, b.mq);
    for (const fastfs::PairMoments* r : {&one, &two}) {
        EXPECT_EQ(r->hit_pairs, b.hit_pairs);
        EXPECT_EQ(r->miss_pairs, b.miss_pairs);
        EXPECT_EQ(r->mutual_hit, b.mutual_hit);
        EXPECT_EQ(r->mutual_miss, b.mutual_miss);
    }
    EXPECT_GT(b.mutual_hit + b.mutual_miss, 0);
}

TEST(PairMoments, ReliefFEqualsEveryPairEnumerated) {
    for (std::int64_t c : {2, 3})
        for (Index n : {5, 70}) run_case(true, c, n);  // n = 70: the float32 shortlist
}

TEST(PairMoments, MultiSURFEqualsEveryPairEnumerated) {
    for (std::int64_t c : {2, 3}) run_case(false, c, 6);
}

TEST(PairMoments, StarredRulesRefuseMoments) {
    const Mat<double> X = make_data(Family::continuous, 20, 3, 1);
    Codes codes(20);
    for (Index i = 0; i < 20; ++i) codes[i] = i % 2;
    fastfs::PairMoments mom;
    EXPECT_THROW(fastfs::relief_radius<double>(X, codes, fastfs::RadiusRule::multisurf_star, 1,
                                               {}, {}, nullptr, {}, &mom),
                 std::invalid_argument);
}

}  // namespace
