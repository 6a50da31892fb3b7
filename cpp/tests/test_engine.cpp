// The neighbour engine's exactness contract (neighbours/engine.hpp): metric (ScaledL1,
// WeightedL2) x reduction (k nearest of every class, k nearest, split at a radius) x float32 /
// float64 data x threads x ties x duplicate rows x extreme scales, each answer against the long
// double brute force of reference.hpp. The nearest hit and miss reduction (NeighbourFinder) has
// its own matrix in test_neighbours.cpp, the Gram-expansion k nearest (KnnQuery) in
// test_knn_query.cpp.
//
// k_nearest_per_class, ReliefF's neighbour screen: from float32 Manhattan distances on min-max
// scaled data Z (every value in [0, 1]), it sets the exact float64 distance of every sample that
// can be among the k nearest of its class or of any other class, and +inf for the rest. Checked
// here: selecting the k nearest of each class from its output (by distance, then index, the
// sample itself excluded, as relieff_contribution does) gives the brute-force answer, and every
// finite entry is the exact distance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fastfs/neighbours/engine.hpp"
#include "fastfs/neighbours/gram_knn.hpp"
#include "fastfs/simd/column_kernels.hpp"
#include "fastfs/weights/relief.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

// Values in [0, 1], dyadic where the family is discrete, so that every Manhattan sum of the
// discrete families is exact in float64 and ties are real ties.
Mat<double> make_unit_data(Family family, Index m, Index n, std::uint64_t seed) {
    Mat<double> X = make_data(family, m, n, seed);
    switch (family) {
        case Family::integers:
        case Family::duplicates: return X * 0.25;  // {0, 1/4, 1/2, 3/4}
        case Family::near_ties:
        case Family::two_clusters: return X;  // already in (0, 1)
        case Family::continuous:
            for (Index i = 0; i < m; ++i)
                for (Index f = 0; f < n; ++f)
                    X(i, f) = static_cast<double>(static_cast<float>(std::min(1.0, std::max(0.0, X(i, f) / 12.0 + 0.5))));
            return X;
    }
    return X;
}

// sets: k_nearest_sets_per_class instead, whose selection must take the same members (in any
// order) and whose finite entries are exact distances or, in a class it settled, screen values.
void check(const Mat<double>& Z, const Codes& codes, Index k, const std::string& label,
           bool sets = false) {
    SCOPED_TRACE(label + ", k " + std::to_string(k) + (sets ? ", sets" : ""));
    const Index m = Z.rows(), n = Z.cols();
    const auto L = fastfs::ClassLayout::from_codes(codes);
    const Mat<float> Z32 = Z.cast<float>();
    std::vector<float> approx(static_cast<std::size_t>(m));
    std::vector<double> dist(static_cast<std::size_t>(m)), upper, bound;
    std::vector<std::vector<Index>> cand;
    const fastfs::NeighbourIndex<double> index(Z, 1, 1e15, false);
    fastfs::ScaledL1 metric;
    metric.prepare(index);
    int failures = 0;
    for (Index i = 0; i < m && failures < 3; ++i) {
        // float32 Manhattan distances by the screen's kernel (its bound covers the kernel's
        // lane order, not any order).
        for (Index j = 0; j < m; ++j) {
            float a[4];
            const float* zi = Z32.row(i).data();
            metric.screen4(Z32.row(j).data(), zi, zi, zi, zi, n, a);
            approx[static_cast<std::size_t>(j)] = a[0];
        }
        if (sets)
            fastfs::k_nearest_sets_per_class(index, metric, L, codes, k, i, approx.data(),
                                             nullptr, dist.data(), cand, upper, bound);
        else
            fastfs::k_nearest_per_class(index, metric, L, codes, k, i, approx.data(), nullptr,
                                        dist.data(), upper, bound);
        for (Index c = 0; c < L.n_classes(); ++c) {
            std::vector<Index> members;
            for (Index j = 0; j < m; ++j)
                if (codes[j] == c) members.push_back(j);
            auto ref = ref_k_nearest(m, i, k, [&](Index j) { return l1_distance(Z, i, j); }, members);
            auto got = ref_k_nearest(m, i, k, [&](Index j) {
                return static_cast<long double>(dist[static_cast<std::size_t>(j)]); }, members);
            bool ok = got.size() == ref.size();
            if (sets) {  // the same members; compare them in index order
                auto by_index = [](const auto& a, const auto& b) { return a.second < b.second; };
                std::sort(got.begin(), got.end(), by_index);
                std::sort(ref.begin(), ref.end(), by_index);
            }
            for (std::size_t r = 0; ok && r < got.size(); ++r) {
                ok = got[r].second == ref[r].second &&
                     (sets || std::fabs(got[r].first - ref[r].first) <= 1e-12L * ref[r].first);
            }
            if (!ok) {
                ++failures;
                std::string g, e;
                for (const auto& p : got) g += std::to_string(p.second) + " ";
                for (const auto& p : ref) e += std::to_string(p.second) + " ";
                ADD_FAILURE() << "sample " << i << ", class " << c << ": got " << g << ", expected " << e;
            }
        }
        // Every finite entry is an exact distance; the sample's own entry is +inf.
        EXPECT_TRUE(std::isinf(dist[static_cast<std::size_t>(i)]));
        for (Index j = 0; j < m && !sets; ++j) {
            const double d = dist[static_cast<std::size_t>(j)];
            if (std::isfinite(d)) {
                const long double want = l1_distance(Z, i, j);
                EXPECT_LE(std::fabs(d - want), 1e-12L * want) << "sample " << i << ", other " << j;
            }
        }
    }
}

}  // namespace

TEST(EngineKNearestPerClass, PerClassKNearestEqualBruteForce) {
    const Index m = 103;
    std::uint64_t seed = 500;
    for (Family family : kAllFamilies) {
        for (Index n : {8, 70}) {
            const Mat<double> Z = make_unit_data(family, m, n, ++seed);
            // classes 0: odd and even rows (for two_clusters, the misses lie in the other cluster)
            for (int classes : {3, 1, 0}) {
                Codes codes = make_codes(m, classes == 0 ? 2 : classes, ++seed);
                if (classes == 0)
                    for (Index i = 0; i < m; ++i) codes[i] = i % 2;
                for (Index k : {1, 3, 10})
                    for (bool sets : {false, true})
                        check(Z, codes, k,
                              "family " + std::to_string(static_cast<int>(family)) + ", n " +
                                  std::to_string(n) + ", " + std::to_string(classes) + " classes",
                              sets);
            }
        }
    }
}

// Columns at the bottom of the scale (their float32 copies are subnormal or 0) next to
// ordinary ones, and k above every class size.
TEST(EngineKNearestPerClass, TinyColumnsAndLargeK) {
    const Index m = 60, n = 66;
    Mat<double> Z = make_unit_data(Family::integers, m, n, 9);
    const Mat<double> small = make_unit_data(Family::continuous, m, n, 10);
    for (Index f = 0; f < n; f += 3) Z.col(f) = small.col(f) * 1e-45;
    const Codes codes = make_codes(m, 3, 11);
    for (bool sets : {false, true}) {
        check(Z, codes, 1, "tiny columns", sets);
        check(Z, codes, 70, "k > m", sets);
    }
}

// Regression: ScaledL1's conversion allowance was 2.02 n u, right for min-max scaled data in
// [0, 1] but not for data scaled by distance weights (ReliefF's and SURF's distance_weights):
// there converting a coordinate near 1e6 to float32 moves it by up to 0.03, which the bound
// missed. Sample 1 is truly nearest to sample 0 (0.04 against 0.06), but float32 rounds its
// coordinate to 1e6 + 0.0625 and sample 2's to 1e6, so the screen sees 0.0625 against 0.05.
TEST(EngineKNearestPerClass, LargeScaledCoordinatesWidenTheConversionBound) {
    const Index m = 6, n = 64;
    Mat<double> Z = Mat<double>::Zero(m, n);
    Z(0, 0) = 1e6;
    Z(1, 0) = 1e6 + 0.04;
    Z(2, 0) = 1e6 + 0.01;
    Z(2, 1) = 0.05;
    const Codes codes = Codes::Zero(m);
    ASSERT_EQ(ref_k_nearest(m, 0, 1, [&](Index j) { return l1_distance(Z, 0, j); })[0].second, 1);
    for (bool sets : {false, true}) {
        // sets: the screen cannot settle the class at k = 1 (both candidates may be nearest),
        // and its own order of the two is the wrong one, so the exact distances must decide.
        check(Z, codes, 1, "coordinates near 1e6", sets);
        check(Z, codes, 2, "coordinates near 1e6", sets);
    }
}

namespace {

// The float32 screen values of query i's row on the index.
template <class T, class Metric>
std::vector<float> screen_row(const fastfs::NeighbourIndex<T>& index, const Metric& metric, Index i) {
    const Index m = index.rows(), n = index.cols();
    std::vector<float> a(static_cast<std::size_t>(m));
    const Index ids[1] = {i};
    fastfs::distance_rows4(index.X32(), ids, 1,
                           [&](const float* x, const float* z0, const float* z1, const float* z2,
                               const float* z3, float* d) { metric.screen4(x, z0, z1, z2, z3, n, d); },
                           a.data(), m);
    return a;
}

// k nearest of every sample through the engine, the queries split over `threads` threads.
template <class T, class Metric>
void all_k_nearest_by_engine(const fastfs::NeighbourIndex<T>& index, const Metric& metric, Index k,
                             const std::vector<double>& w2, int threads, std::vector<Index>& idx,
                             std::vector<double>& dist) {
    const Index m = index.rows();
    idx.assign(static_cast<std::size_t>(m * k), -1);
    dist.assign(static_cast<std::size_t>(m * k), -1.0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (Index i = 0; i < m; ++i) {
        std::vector<double> tmp;
        const auto a = screen_row(index, metric, i);
        fastfs::k_nearest(index, metric, k, i, a.data(), w2.empty() ? nullptr : w2.data(),
                          idx.data() + i * k, dist.data() + i * k, tmp);
    }
}

template <class T, class Metric, class Ref>
void check_k_nearest(const fastfs::NeighbourIndex<T>& index, const Metric& metric, Index k,
                     const std::vector<double>& w2, Ref&& ref_dist, const std::string& label) {
    SCOPED_TRACE(label + ", k " + std::to_string(k));
    const Index m = index.rows();
    const Index kk = std::min(k, m - 1);
    std::vector<Index> idx1, idx2;
    std::vector<double> d1, d2;
    all_k_nearest_by_engine(index, metric, k, w2, 1, idx1, d1);
    all_k_nearest_by_engine(index, metric, k, w2, 2, idx2, d2);
    ASSERT_EQ(idx1, idx2) << "the thread count changed the neighbours";
    ASSERT_EQ(d1, d2) << "the thread count changed the distances";
    int failures = 0;
    for (Index i = 0; i < m && failures < 3; ++i) {
        const auto ref = ref_k_nearest(m, i, kk, [&](Index j) { return ref_dist(i, j); });
        for (Index r = 0; r < kk; ++r) {
            const Index got = idx1[static_cast<std::size_t>(i * k + r)];
            const long double gd = d1[static_cast<std::size_t>(i * k + r)];
            if (got != ref[static_cast<std::size_t>(r)].second ||
                std::fabs(gd - ref[static_cast<std::size_t>(r)].first) > 1e-12L * ref[static_cast<std::size_t>(r)].first) {
                ++failures;
                ADD_FAILURE() << "sample " << i << ", rank " << r << ": got " << got << ", expected "
                              << ref[static_cast<std::size_t>(r)].second;
                break;
            }
        }
    }
}


}  // namespace

namespace {

// k nearest under the weighted squared distance: every family (ties, duplicate rows) x weights
// (zeros, tiny, all tiny, dyadic) x k, 1 and 2 threads, on data of type T.
template <class T>
void weighted_l2_k_nearest() {
    const Index m = 77;
    std::uint64_t seed = 900;
    for (Family family : kAllFamilies) {
        for (Index n : {12, 70}) {
            const Mat<T> X = make_data(family, m, n, ++seed).template cast<T>();
            const fastfs::NeighbourIndex<T> index(X, 1, 1e15, true);
            for (Weights weights : kAllWeights) {
                const auto w2 = make_w2(weights, n, ++seed);
                fastfs::WeightedL2<T> metric;
                metric.prepare(index, w2.data());
                ASSERT_TRUE(metric.on);
                for (Index k : {1, 4, 100})
                    check_k_nearest(index, metric, k, w2,
                                    [&](Index i, Index j) { return sq_distance(X, w2, i, j); },
                                    "family " + std::to_string(static_cast<int>(family)) + ", n " +
                                        std::to_string(n) + ", weights " +
                                        std::to_string(static_cast<int>(weights)));
            }
        }
    }
}

// Data at the extreme scales the core handles, and all-zero weights (nothing to screen).
template <class T>
void weighted_l2_extreme_scales() {
    const Index m = 50, n = 66;
    std::uint64_t seed = 950;
    for (int e : exponents<T>()) {
        Mat<double> X64 = make_data(Family::continuous, m, n, ++seed) * std::ldexp(1.0, e);
        const Mat<T> X = X64.template cast<T>();
        const fastfs::NeighbourIndex<T> index(X, 1, 1e15, true);
        for (Weights weights : {Weights::ones, Weights::with_tiny, Weights::dyadic}) {
            if (!weights_fit(e, weights)) continue;
            const auto w2 = make_w2(weights, n, ++seed);
            fastfs::WeightedL2<T> metric;
            metric.prepare(index, w2.data());
            // Beyond float32's range the index refuses to screen (the callers scan in float64).
            if (e > 0 && !std::is_same<T, float>::value) {
                EXPECT_FALSE(metric.on);
                continue;
            }
            ASSERT_TRUE(metric.on);
            check_k_nearest(index, metric, 3, w2,
                            [&](Index i, Index j) { return sq_distance(X, w2, i, j); },
                            "scale 2^" + std::to_string(e));
        }
    }
    const Mat<T> X = make_data(Family::continuous, m, n, ++seed).template cast<T>();
    const fastfs::NeighbourIndex<T> index(X, 1, 1e15, true);
    const std::vector<double> zero(static_cast<std::size_t>(n), 0.0);
    fastfs::WeightedL2<T> metric;
    metric.prepare(index, zero.data());
    EXPECT_FALSE(metric.on) << "all-zero weights leave nothing to screen";
}

// The screen's bounds hold however small the weights: the power-of-two scaling keeps the float32
// pass out of the subnormal range and flushes the weights below 2^-100 of the largest, with
// the bound carrying them.
template <class T>
void weighted_l2_spread_weights() {
    const Index m = 60, n = 70;
    const Mat<T> X = make_data(Family::continuous, m, n, 17).template cast<T>();
    const fastfs::NeighbourIndex<T> index(X, 1, 1e15, true);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = std::ldexp(1.0, -static_cast<int>(f * 14 % 980));
    fastfs::WeightedL2<T> metric;
    metric.prepare(index, w2.data());
    ASSERT_TRUE(metric.on);
    for (float v : metric.w2s) EXPECT_TRUE(v == 0.0f || std::isnormal(v));
    check_k_nearest(index, metric, 2, w2, [&](Index i, Index j) { return sq_distance(X, w2, i, j); },
                    "spread weights");
}

// reach_limit() with the largest norm rejects at once what may_reach() rejects one sample at a
// time: beyond(a, limit) means may_reach() is false for every sample, whatever its norm; and
// the limit is not loose for the sample of the largest norm (just below it, that sample is
// still within reach). Rows of norms from 2^-20 to 2^20 times each other.
template <class T>
void weighted_l2_reach_limit_holds_for_every_sample() {
    const Index m = 40, n = 30;
    Mat<T> X = make_data(Family::continuous, m, n, 31).template cast<T>();
    for (Index i = 0; i < m; ++i) X.row(i) *= static_cast<T>(std::ldexp(1.0, static_cast<int>(i % 41) - 20));
    const fastfs::NeighbourIndex<T> index(X, 1, 1e15, true);
    double max_norm = 0.0;
    Index top = 0;
    for (Index j = 0; j < m; ++j)
        if (index.norm(j) > max_norm) max_norm = index.norm(j), top = j;
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = 0.25 + 0.05 * static_cast<double>(f);
    fastfs::WeightedL2<T> metric;
    metric.prepare(index, w2.data());
    ASSERT_TRUE(metric.on);
    int checked = 0;
    for (Index i = 0; i < m; i += 3)
        for (double bound : {0.0, 1e-6, 0.5, 3.0, 1e5}) {
            const double limit = metric.reach_limit(index, i, bound, max_norm);
            for (float a = 1e-8f; a < 1e13f; a *= 1.37f) {
                const float past = std::nextafter(static_cast<float>(limit), 3e38f);
                for (float v : {a, past}) {
                    if (!metric.beyond(v, limit)) continue;
                    for (Index j = 0; j < m; ++j) {
                        if (j == i) continue;
                        ++checked;
                        ASSERT_FALSE(metric.may_reach(index, i, j, v, bound))
                            << "i " << i << ", j " << j << ", bound " << bound << ", a " << v;
                    }
                }
            }
            // Just below the limit, the sample of the largest norm may still be in reach.
            const float below = std::nextafter(static_cast<float>(limit), 0.0f);
            if (top != i && !metric.beyond(below, limit) && below > metric.tiny) {
                EXPECT_TRUE(metric.may_reach(index, i, top, below, bound)) << "i " << i;
            }
        }
    EXPECT_GT(checked, 1000);
}

}  // namespace

TEST(EngineWeightedL2, KNearestEqualBruteForceFloat32Data) { weighted_l2_k_nearest<float>(); }
TEST(EngineWeightedL2, KNearestEqualBruteForceFloat64Data) { weighted_l2_k_nearest<double>(); }
TEST(EngineWeightedL2, ExtremeScalesAndZeroWeights) {
    weighted_l2_extreme_scales<float>();
    weighted_l2_extreme_scales<double>();
}
TEST(EngineWeightedL2, WeightsSpreadOverThreeHundredDecades) {
    weighted_l2_spread_weights<float>();
    weighted_l2_spread_weights<double>();
}
TEST(EngineWeightedL2, ReachLimitHoldsForEverySample) {
    weighted_l2_reach_limit_holds_for_every_sample<float>();
    weighted_l2_reach_limit_holds_for_every_sample<double>();
}

// k nearest and the split at a radius under ScaledL1, every family, 1 and 2 threads.
TEST(EngineScaledL1, KNearestAndRadiusEqualBruteForce) {
    const Index m = 71;
    std::uint64_t seed = 700;
    for (Family family : kAllFamilies) {
        for (Index n : {8, 70}) {
            const Mat<double> Z = make_unit_data(family, m, n, ++seed);
            const fastfs::NeighbourIndex<double> index(Z, 1, 1e15, false);
            fastfs::ScaledL1 metric;
            metric.prepare(index);
            const std::string label = "family " + std::to_string(static_cast<int>(family)) + ", n " + std::to_string(n);
            for (Index k : {1, 5, 80})
                check_k_nearest(index, metric, k, {}, [&](Index i, Index j) { return l1_distance(Z, i, j); },
                                label);
            // The radius: a distance of the data itself (exact ties with it on the discrete
            // families), moved off every distance on the continuous one.
            long double radius = l1_distance(Z, 0, m / 2);
            if (family == Family::continuous) radius *= 1.0L + 1e-9L;
            std::vector<double> dist(static_cast<std::size_t>(m));
            std::vector<Index> pending;
            for (Index i = 0; i < m; ++i) {
                const auto a = screen_row(index, metric, i);
                fastfs::within_radius(index, metric, static_cast<double>(radius), i, a.data(), nullptr,
                                      dist.data(), pending);
                for (Index j = 0; j < m; ++j) {
                    const long double want = l1_distance(Z, i, j);
                    const double got = dist[static_cast<std::size_t>(j)];
                    const double r = static_cast<double>(radius);
                    ASSERT_EQ(got < r, want < radius) << label << ", sample " << i << ", other " << j;
                    ASSERT_EQ(got > r, want > radius) << label << ", sample " << i << ", other " << j;
                }
            }
        }
    }
}

// ScaledL1's rounding allowance, pair by pair: the exact float64 distance d of every pair lies
// within [lower(a), upper(a)] of the float32 value a the screen's kernel gives, on wide rows
// (the allowance grows as n / 8 with the kernel's eight lanes, not as n) and on rows built to
// round one way: every term the same value (each lane's running sum then rounds in the same
// direction far more often than random terms do), values just off float32's grid, long runs
// of zeros next to full-scale terms. And the worst case of the bound itself, alone with a row
// of zeros (so the conversion allowance, which grows with the column maxima, stays small): each
// lane starts at 1 and then adds terms just over half a unit in the last place of 1, so every
// addition rounds up by almost the whole term and the float32 sum grows twice as fast as the
// exact one (relative error near gamma_{n/8}; a sequential sum would reach gamma_n).
TEST(EngineScaledL1, ScreenValuesStayWithinTheRoundingAllowance) {
    auto check_pairs = [](const Mat<double>& Z, const std::string& label) {
        const Index m = Z.rows(), n = Z.cols();
        const fastfs::NeighbourIndex<double> index(Z, 1, 1e15, false);
        fastfs::ScaledL1 metric;
        metric.prepare(index);
        ASSERT_TRUE(metric.on);
        for (Index i = 0; i < m; ++i) {
            const auto a = screen_row(index, metric, i);
            for (Index j = 0; j < m; ++j) {
                double d[4];
                const double* zi = Z.row(i).data();
                fastfs::kernels::l1_dist4(Z.row(j).data(), zi, zi, zi, zi, n, d);
                const float v = a[static_cast<std::size_t>(j)];
                EXPECT_LE(metric.lower(v), d[0]) << label << ", pair " << i << " " << j;
                EXPECT_GE(metric.upper(index, i, j, v), d[0]) << label << ", pair " << i << " " << j;
            }
        }
    };
    for (Index n : {64, 1001, 4099, 40000}) {
        const Index m = 12;
        Mat<double> Z(m, n);
        const double same[] = {1.0 / 3.0, 0.1, 0.7, 1.0 - 0x1.0p-30, 0x1.000001p-1 + 0x1.0p-40};
        for (Index f = 0; f < n; ++f) {
            Z(0, f) = 0.0;
            for (Index r = 0; r < 5; ++r) Z(1 + r, f) = same[r];
            Z(6, f) = f % 97 == 0 ? 1.0 : 0.0;
            Z(7, f) = static_cast<double>((f * 2654435761u) % 1000003u) / 1000003.0;
            Z(8, f) = 1.0 - Z(7, f) * 0x1.0p-20;
            Z(9, f) = std::ldexp(1.0 + static_cast<double>(f % 7) * 0x1.0p-26, -static_cast<int>(f % 3));
            Z(10, f) = 0.5 + (f % 2 ? 1 : -1) * 0x1.8p-25;
            Z(11, f) = static_cast<double>(f % 5) / 5.0;
        }
        check_pairs(Z, "n " + std::to_string(n));
        Mat<double> W = Mat<double>::Zero(2, n);
        for (Index f = 0; f < n; ++f) W(1, f) = f < 8 ? 1.0 : 0x1.0p-24 * (1.0 + 0x1.0p-10);
        check_pairs(W, "rounding up, n " + std::to_string(n));
    }
}

// The tie rule: keep_smallest keeps the same k pairs in the same order whatever the order they
// are offered in, lower index first among equal values.
TEST(EngineTieRule, KeepSmallestIgnoresTheOfferOrder) {
    const std::vector<double> v = {3, 1, 2, 1, 1, 0, 2, 3, 0, 1};
    std::vector<Index> order(v.size());
    for (std::size_t j = 0; j < v.size(); ++j) order[j] = static_cast<Index>(j);
    const std::vector<Index> want = {5, 8, 1, 3, 4, 9};
    for (int perm = 0; perm < 20; ++perm) {
        std::rotate(order.begin(), order.begin() + 3, order.end());
        if (perm % 2) std::reverse(order.begin(), order.end());
        double val[6];
        Index idx[6];
        int count = 0;
        for (Index j : order) fastfs::keep_smallest(v[static_cast<std::size_t>(j)], j, 6, count, val, idx);
        ASSERT_EQ(count, 6);
        for (int r = 0; r < 6; ++r) EXPECT_EQ(idx[r], want[static_cast<std::size_t>(r)]) << "rank " << r;
    }
}

// The selection of the screens' bounds: kth_smallest gives std::nth_element's k-th value of the
// values other than sample i's (or +inf with at most k of them), by the streamed buffer (k up to
// kStreamedSelection) and by the copy (larger k), on values with many repeats, sorted, reversed.
TEST(EngineSelection, KthSmallestEqualsNthElement) {
    std::mt19937_64 gen(77);
    std::vector<double> buf;
    for (Index size : {0, 1, 2, 9, 10, 11, 64, 65, 66, 200, 1000}) {
        for (int shape = 0; shape < 4; ++shape) {
            std::vector<double> v(static_cast<std::size_t>(size));
            std::uniform_int_distribution<int> few(0, shape == 0 ? 5 : 1000000);
            for (auto& x : v) x = few(gen) * 0.125;
            if (shape == 2) std::sort(v.begin(), v.end());
            if (shape == 3) std::sort(v.rbegin(), v.rend());
            for (Index k : {Index{1}, Index{2}, Index{10}, fastfs::kStreamedSelection,
                            fastfs::kStreamedSelection + 1, Index{150}}) {
                for (Index i : {Index{-1}, Index{0}, size / 2}) {
                    std::vector<double> rest;
                    for (Index j = 0; j < size; ++j)
                        if (j != i) rest.push_back(v[static_cast<std::size_t>(j)]);
                    double want = std::numeric_limits<double>::infinity();
                    if (static_cast<Index>(rest.size()) > k) {
                        std::nth_element(rest.begin(), rest.begin() + (k - 1), rest.end());
                        want = rest[static_cast<std::size_t>(k - 1)];
                    }
                    const double got = fastfs::kth_smallest(
                        0, size, [](Index p) { return p; }, i, k, buf,
                        [&](Index j) { return v[static_cast<std::size_t>(j)]; });
                    EXPECT_EQ(got, want) << "size " << size << ", shape " << shape << ", k " << k
                                         << ", skip " << i;
                }
            }
        }
    }
}

// The grouped exact distances every reduction (and the k nearest query of knn_query.hpp) goes
// through: exact_rows4 hands each row its own kernel value, in order, whatever the count (a
// short last group repeats its last row), and the feature-order kernel of RGS and SKS
// (kernels::sq_dist4_in_order) gives, bit for bit, the plain loop that adds term f after term
// f - 1, on ties, duplicate rows and extreme scales alike.
TEST(EngineExactRows, GroupedFeatureOrderDistancesEqualThePlainLoop) {
    for (Family family : {Family::continuous, Family::integers, Family::duplicates,
                          Family::near_ties}) {
        for (double scale : {1.0, 1e-150, 1e150}) {
            const Mat<double> X = make_data(family, 23, 37, 5) * scale;
            const fastfs::MatrixRef<double> Xr(X);
            std::vector<double> w2(37);
            for (std::size_t f = 0; f < w2.size(); ++f) w2[f] = f % 5 == 0 ? 0.0 : 1.0 / (1.0 + f);
            for (std::size_t count = 0; count <= 11; ++count) {
                std::vector<Index> j(count);
                for (std::size_t q = 0; q < count; ++q) j[q] = static_cast<Index>((7 * q + 3) % 23);
                std::vector<Index> got_j;
                std::vector<double> got_d;
                fastfs::exact_rows4(
                    Xr, 4, j.data(), count,
                    [&](const double* x, const double* z0, const double* z1, const double* z2,
                        const double* z3, double* d) {
                        fastfs::kernels::sq_dist4_in_order(x, z0, z1, z2, z3, w2.data(), 37, d);
                    },
                    [&](Index jj, double d) {
                        got_j.push_back(jj);
                        got_d.push_back(d);
                    });
                ASSERT_EQ(got_j, j);
                // The soft kNN lists' exact distances: eight rows per kernel call while more
                // than four are left, the same values.
                std::vector<Index> knn_j;
                std::vector<double> knn_d;
                fastfs::knn_exact_distances(Xr, 4, j.data(), count, w2.data(),
                                            [&](Index jj, double d) {
                                                knn_j.push_back(jj);
                                                knn_d.push_back(d);
                                            });
                ASSERT_EQ(knn_j, j);
                for (std::size_t q = 0; q < count; ++q) {
                    double want = 0.0;
                    for (Index f = 0; f < 37; ++f) {
                        const double t = X(4, f) - X(j[q], f);
                        want += w2[static_cast<std::size_t>(f)] * (t * t);
                    }
                    EXPECT_EQ(got_d[q], want) << "count " << count << ", row " << j[q];
                    EXPECT_EQ(knn_d[q], want) << "count " << count << ", row " << j[q];
                }
            }
        }
    }
}

// The AVX2 build of the feature-order kernel (transposed blocks of four features) adds the
// same terms in the same order as the plain loop: equal bit for bit, for float and double rows,
// lengths with and without a tail of fewer than four features, and extreme scales.
template <class T>
void expect_in_order_kernels_agree() {
    for (Family family : {Family::continuous, Family::integers, Family::near_ties}) {
        for (Index n : {1, 3, 4, 7, 37, 64, 301}) {
            for (double scale : {1.0, 1e-30, 1e30}) {
                const Mat<double> X = make_data(family, 9, n, 11) * scale;
                std::vector<T> rows(static_cast<std::size_t>(9 * n));
                for (Index i = 0; i < 9; ++i)
                    for (Index f = 0; f < n; ++f)
                        rows[static_cast<std::size_t>(i * n + f)] = static_cast<T>(X(i, f));
                std::vector<double> w2(static_cast<std::size_t>(n));
                for (std::size_t f = 0; f < w2.size(); ++f)
                    w2[f] = f % 5 == 0 ? 0.0 : 1.0 / (1.0 + static_cast<double>(f) / 3.0);
                const T* r = rows.data();
                double got[4], want[4];
                fastfs::kernels::sq_dist4_in_order(r, r + n, r + 2 * n, r + 3 * n, r + 4 * n,
                                                   w2.data(), n, got);
                fastfs::kernels::sq_dist4_in_order_plain(r, r + n, r + 2 * n, r + 3 * n,
                                                         r + 4 * n, w2.data(), n, want);
                for (int q = 0; q < 4; ++q) EXPECT_EQ(got[q], want[q]) << "n " << n << ", row " << q;
                // Eight rows in two chains: each row's value as the plain loop gives it.
                const T* z[8];
                for (int q = 0; q < 8; ++q) z[q] = r + (q + 1) * n;
                double got8[8], want8[8];
                fastfs::kernels::sq_dist8_in_order(r, z, w2.data(), n, got8);
                fastfs::kernels::sq_dist4_in_order_plain(r, z[0], z[1], z[2], z[3], w2.data(), n,
                                                         want8);
                fastfs::kernels::sq_dist4_in_order_plain(r, z[4], z[5], z[6], z[7], w2.data(), n,
                                                         want8 + 4);
                for (int q = 0; q < 8; ++q)
                    EXPECT_EQ(got8[q], want8[q]) << "n " << n << ", row " << q << " of eight";
            }
        }
    }
}

TEST(EngineExactRows, FeatureOrderKernelOfEveryBuildEqualsThePlainLoop) {
    expect_in_order_kernels_agree<double>();
    expect_in_order_kernels_agree<float>();
}

// The rounding helpers of every screen's thresholds: round_up_to_float never rounds a bound
// down (so a float32 comparison lets through every value the float64 bound does), and
// scaled_up(v, e) is at least v 2^-e, exactly that when it is representable.
TEST(EngineScreenRounding, BoundsAreRoundedUp) {
    for (double v : {0.0, 1.0, 1.0 / 3.0, 1e-40, 3.4028235677973366e38, 1e39, 0.1, 7e-46}) {
        const float f = fastfs::screen::round_up_to_float(v);
        EXPECT_GE(static_cast<double>(f), v);
        const float below = std::nextafter(f, -std::numeric_limits<float>::infinity());
        if (std::isfinite(f) && f > 0.0f) {
            EXPECT_LT(static_cast<double>(below), v) << v;
        }
    }
    EXPECT_EQ(fastfs::screen::round_up_to_float(std::numeric_limits<double>::infinity()),
              std::numeric_limits<float>::infinity());
    for (int e : {-1000, -20, 0, 20, 1000})
        for (double v : {0.0, 1.0, 1.0 / 3.0, 1e-300, 4.9e-324, 1e300}) {
            const long double want = std::ldexp(static_cast<long double>(v), -e);
            const double got = fastfs::screen::scaled_up(v, e);
            EXPECT_GE(static_cast<long double>(got), want) << v << " 2^" << -e;
            if (std::ldexp(std::ldexp(v, -e), e) == v) {
                EXPECT_EQ(got, std::ldexp(v, -e));
            }
        }
    EXPECT_TRUE(std::isinf(fastfs::screen::scaled_up(std::numeric_limits<double>::infinity(), 3)));
}

// The index and the min-max scaled copy split their rows (columns) over threads; every value
// they keep is a copy, a maximum or a minimum, so any split gives the same bits: the float32
// copy, the norms, the column bound and usable(), and the scaled values and inverse ranges.
TEST(EngineIndex, AnyThreadCountGivesTheSameIndex) {
    std::mt19937_64 gen(11);
    std::normal_distribution<double> g(0.0, 1.0);
    for (Index m : {1, 2, 7, 300}) {
        const Index n = 700;  // three stripes of min_max_scaled
        Mat<double> X(m, n);
        for (Index i = 0; i < m; ++i)
            for (Index f = 0; f < n; ++f) X(i, f) = std::ldexp(g(gen), static_cast<int>(f % 9) - 4);
        if (m > 2) X(2, 5) = std::numeric_limits<double>::quiet_NaN();  // skipped by the max
        std::vector<double> inv1;
        const Mat<double> Z1 = fastfs::min_max_scaled<double>(X, inv1);
        for (bool norms : {false, true}) {
            const fastfs::NeighbourIndex<double> one(X, 1, 1e15, norms, 1);
            for (int threads : {2, 3, 8}) {
                const fastfs::NeighbourIndex<double> many(X, 1, 1e15, norms, threads);
                ASSERT_EQ(one.usable(), many.usable());
                EXPECT_TRUE((one.X32().array() == many.X32().array() ||
                             (one.X32().array() != one.X32().array() &&
                              many.X32().array() != many.X32().array()))
                                .all());
                if (norms) {
                    for (Index i = 0; i < m; ++i) {
                        const double a = one.norm(i), b = many.norm(i);
                        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << "row " << i;
                    }
                } else {
                    EXPECT_EQ(one.col_abs_sum(), many.col_abs_sum());
                }
                std::vector<double> inv;
                const Mat<double> Z = fastfs::min_max_scaled<double>(X, inv, {}, threads);
                EXPECT_EQ(inv, inv1);
                EXPECT_TRUE((Z.array() == Z1.array() ||
                             (Z.array() != Z.array() && Z1.array() != Z1.array()))
                                .all());
            }
        }
    }
}

// LineNeighbours (SKS's k nearest on one feature, from the sorted values) against
// select_k_nearest on every full row of squared differences: the same lists, bit for bit, on
// distinct values, ties and duplicates, a constant feature, values symmetric about a sample
// (equal distances on both sides), differences that underflow to 0 or overflow to inf, and
// values whose distances round alike without being equal (also far from 0: 1e16 against small
// values), -0 beside +0; k from 1 to m - 1.
TEST(LineNeighbours, ListsEqualTheFullRowScan) {
    std::mt19937_64 gen(77);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 4);
    for (int data = 0; data < 10; ++data) {
        for (fastfs::Index m : {2, 3, 17, 120}) {
            std::vector<double> c(static_cast<std::size_t>(m));
            for (fastfs::Index j = 0; j < m; ++j) {
                double& v = c[static_cast<std::size_t>(j)];
                switch (data) {
                    case 0: v = u(gen); break;
                    case 1: v = small(gen); break;                          // ties
                    case 2: v = 3.25; break;                                // constant
                    case 3: v = static_cast<double>(j % 7) - 3.0; break;    // symmetric
                    case 4: v = u(gen) * 1e-170; break;                     // d underflows
                    case 5: v = small(gen) * 1e200 - 2e200; break;          // d overflows
                    case 6: v = 1.0 + small(gen) * 0x1.0p-52; break;        // nearly equal
                    case 7: v = j % 4 == 0 ? 1e16 : 0.5 * static_cast<double>(j % 7); break;
                    case 8: v = j % 3 == 0 ? 0.0 : j % 3 == 1 ? -0.0 : small(gen) - 2.0; break;
                    default: v = j % 3 == 0 ? u(gen) : c[static_cast<std::size_t>(j / 2)]; break;
                }
            }
            std::vector<int> ks;
            for (int k = 1; k < m - 1; k = k < 4 ? k + 1 : k * 3) ks.push_back(k);
            ks.push_back(static_cast<int>(m - 1));
            for (int k : ks) {
                std::vector<fastfs::Index> idx(static_cast<std::size_t>(m * k)), want_i(static_cast<std::size_t>(k));
                std::vector<double> dist(idx.size()), want_d(static_cast<std::size_t>(k)), row(static_cast<std::size_t>(m));
                fastfs::LineNeighbours line;
                line.run(c.data(), m, k, idx.data(), dist.data());
                for (fastfs::Index i = 0; i < m; ++i) {
                    for (fastfs::Index j = 0; j < m; ++j) {
                        const double t = c[static_cast<std::size_t>(i)] - c[static_cast<std::size_t>(j)];
                        row[static_cast<std::size_t>(j)] = t * t;
                    }
                    const int count = fastfs::select_k_nearest(row.data(), m, i, k, want_i.data(), want_d.data());
                    ASSERT_EQ(count, k);
                    for (int r = 0; r < k; ++r) {
                        ASSERT_EQ(idx[static_cast<std::size_t>(i * k + r)], want_i[static_cast<std::size_t>(r)])
                            << "data " << data << ", m " << m << ", k " << k << ", sample " << i << ", rank " << r;
                        ASSERT_EQ(dist[static_cast<std::size_t>(i * k + r)], want_d[static_cast<std::size_t>(r)])
                            << "data " << data << ", m " << m << ", k " << k << ", sample " << i << ", rank " << r;
                    }
                }
            }
        }
    }
}
