// NeighbourFinder (neighbours/finder.hpp): the nearest hit and nearest miss of every sample under a
// weighted squared distance, exact (float32 screen plus float64 refinement), against a brute
// force scan in long double. Contract (SPEC 1.4): a sample is never its own neighbour, equal
// distances go to the lowest sample index, a class of one sample has no hit (index -1), a
// single class has no miss; the answer does not depend on the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "fastfs/neighbours/finder.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

// Compares found distances with the reference: same infinity, else within float64 rounding.
::testing::AssertionResult same_distance(double got, long double want) {
    if (std::isinf(static_cast<double>(want)))
        return std::isinf(got) ? ::testing::AssertionSuccess()
                               : ::testing::AssertionFailure() << got << " instead of +inf";
    const long double err = std::fabs(static_cast<long double>(got) - want);
    if (err <= 1e-12L * want + 1e-300L) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << got << " instead of " << static_cast<double>(want);
}

template <class T>
struct Case {
    Mat<T> X;
    Codes codes;
    std::vector<double> w2;
    std::vector<RefHitMiss> ref;
    std::string label;

    Case(const Mat<double>& X64, Codes c, std::vector<double> w, std::string name)
        : X(X64.cast<T>()), codes(std::move(c)), w2(std::move(w)), label(std::move(name)) {
        for (Index i = 0; i < X.rows(); ++i) ref.push_back(ref_hit_miss(X, codes, w2, i));
    }

    // Index mismatches against the reference, at most a few reported.
    void expect_matches(const std::vector<fastfs::HitMiss>& got, const std::string& how) const {
        ASSERT_EQ(got.size(), ref.size());
        int reported = 0;
        for (std::size_t i = 0; i < got.size() && reported < 5; ++i) {
            const auto& g = got[i];
            const auto& r = ref[i];
            const bool ok = g.hit == r.hit && g.miss == r.miss && same_distance(g.hit_d, r.hit_d) &&
                            same_distance(g.miss_d, r.miss_d);
            if (!ok) {
                ++reported;
                ADD_FAILURE() << label << ", " << how << ", sample " << i << ": hit " << g.hit
                              << " (d " << g.hit_d << "), miss " << g.miss << " (d " << g.miss_d
                              << "); expected hit " << r.hit << " (d " << static_cast<double>(r.hit_d)
                              << "), miss " << r.miss << " (d " << static_cast<double>(r.miss_d) << ")";
            }
            EXPECT_NE(g.hit, static_cast<Index>(i));
            EXPECT_NE(g.miss, static_cast<Index>(i));
        }
    }

    void run_all() const {
        for (int threads : {1, 2}) {
            const auto got = fastfs::all_nearest_hit_miss<T>(X, codes, w2.data(), threads);
            expect_matches(got, "all_nearest_hit_miss, " + std::to_string(threads) + " threads");
        }
        // Single queries share one scratch, as Relief and Simba use them.
        const fastfs::NeighbourFinder<T> finder(X, codes);
        typename fastfs::NeighbourFinder<T>::Scratch s;
        finder.prepare(w2.data(), s);
        std::vector<fastfs::HitMiss> one, split;
        for (Index i = 0; i < X.rows(); ++i) {
            one.push_back(finder.query(i, w2.data(), s));
            split.push_back(finder.query_parallel(i, w2.data(), s, 2));
        }
        expect_matches(one, "query");
        expect_matches(split, "query_parallel, 2 threads");
    }
};


}  // namespace

template <class T>
class NeighbourFinderTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NeighbourFinderTest, Scalars);

// Every data family x weights x feature count (12: exhaustive float64 path; 70: float32
// screen) x class layout, by all four entry points and 1 and 2 threads.
TYPED_TEST(NeighbourFinderTest, HitAndMissEqualBruteForce) {
    using T = TypeParam;
    const Index m = 122;  // not a multiple of 4: the last block of four queries is short
    std::uint64_t seed = 1;
    for (Family family : kAllFamilies) {
        for (Index n : {12, 70}) {
            const Mat<double> X = make_data(family, m, n, ++seed);
            for (Weights weights : kAllWeights) {
                // classes 0: two classes, odd and even rows (for two_clusters, the misses lie
                // in the other cluster).
                for (int classes : {3, 1, 0}) {
                    std::ostringstream name;
                    name << family_name(family) << ", n " << n << ", weights " << weights_name(weights)
                         << ", " << classes << " class(es)";
                    Codes codes = make_codes(m, classes == 0 ? 2 : classes, ++seed);
                    if (classes == 0)
                        for (Index i = 0; i < m; ++i) codes[i] = i % 2;
                    Case<T> c(X, codes, make_w2(weights, n, ++seed), name.str());
                    c.run_all();
                }
            }
        }
    }
}

// All weights zero: every distance is 0, so the hit is the lowest other index of the class and
// the miss the lowest index of another class.
TYPED_TEST(NeighbourFinderTest, ZeroWeightsMakeEveryDistanceZero) {
    using T = TypeParam;
    const Index m = 40, n = 80;
    Case<T> c(make_data(Family::continuous, m, n, 3), make_codes(m, 3, 4),
              std::vector<double>(static_cast<std::size_t>(n), 0.0), "zero weights");
    for (Index i = 0; i < m; ++i) {
        Index hit = -1, miss = -1;
        for (Index j = 0; j < m && (hit < 0 || miss < 0); ++j) {
            if (j == i) continue;
            if (c.codes[j] == c.codes[i] && hit < 0) hit = j;
            if (c.codes[j] != c.codes[i] && miss < 0) miss = j;
        }
        ASSERT_EQ(c.ref[static_cast<std::size_t>(i)].hit, hit);
        ASSERT_EQ(c.ref[static_cast<std::size_t>(i)].miss, miss);
    }
    c.run_all();
}

// All rows identical: every distance is 0 whatever the weights.
TYPED_TEST(NeighbourFinderTest, IdenticalRowsTieOnTheLowestIndex) {
    using T = TypeParam;
    const Index m = 30, n = 66;
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f) X(i, f) = 0.25 * static_cast<double>(f % 5);
    Case<T> c(X, make_codes(m, 2, 7, false), make_w2(Weights::with_zeros, n, 8), "identical rows");
    c.run_all();
}

// Extreme scales within the contract of the Python layer (which multiplies X by a power of two
// when max |x| has a binary exponent beyond 200 for float64, 40 for float32): data at the edge
// of that range (and, for float64, 1e+-150 beyond it), and ordinary data with some columns at
// its far end.
TYPED_TEST(NeighbourFinderTest, ExtremeScalesWithinTheRescalingContract) {
    using T = TypeParam;
    const int edge = std::is_same<T, float>::value ? 40 : 200;
    const Index m = 90;
    std::uint64_t seed = 100;
    for (Index n : {12, 70}) {
        for (int e : exponents<T>()) {
            Mat<double> X = make_data(Family::continuous, m, n, ++seed);
            X *= std::ldexp(1.0, e);
            for (Weights weights : {Weights::ones, Weights::with_tiny, Weights::dyadic}) {
                if (!weights_fit(e, weights)) continue;
                const Codes codes = make_codes(m, 3, ++seed);
                Case<T> c(X, codes, make_w2(weights, n, ++seed),
                          "scale 2^" + std::to_string(e) + ", n " + std::to_string(n) + ", weights " +
                              weights_name(weights));
                c.run_all();
            }
        }
        // Integer columns (ties) broken only by columns 2^-edge smaller: invisible to float32.
        Mat<double> X = make_data(Family::integers, m, n, ++seed);
        const Mat<double> small = make_data(Family::continuous, m, n, ++seed);
        for (Index f = 0; f < n; f += 2) X.col(f) = small.col(f) * std::ldexp(1.0, -edge);
        for (Weights weights : {Weights::ones, Weights::with_zeros, Weights::dyadic}) {
            const Codes codes = make_codes(m, 3, ++seed);
            Case<T> c(X, codes, make_w2(weights, n, ++seed),
                      "mixed column scales, n " + std::to_string(n) + ", weights " + weights_name(weights));
            c.run_all();
        }
    }
}

// A row long enough to be split over threads (m n >= kRowParallelWork) by query_parallel.
TYPED_TEST(NeighbourFinderTest, RowSplitOverThreadsEqualsBruteForce) {
    using T = TypeParam;
    const Index m = 4099, n = 1024;
    ASSERT_GE(m * n, fastfs::kRowParallelWork);
    for (Family family : {Family::continuous, Family::duplicates}) {
        const Mat<double> X64 = make_data(family, m, n, 11);
        const Mat<T> X = X64.cast<T>();
        const Codes codes = make_codes(m, 3, 12);
        const auto w2 = make_w2(Weights::with_zeros, n, 13);
        const fastfs::NeighbourFinder<T> finder(X, codes);
        typename fastfs::NeighbourFinder<T>::Scratch s;
        finder.prepare(w2.data(), s);
        for (Index i : {Index{0}, Index{1}, Index{2047}, Index{4095}, Index{4098}}) {
            const auto r = ref_hit_miss(X, codes, w2, i);
            for (int threads : {1, 2, 3}) {
                const auto g = finder.query_parallel(i, w2.data(), s, threads);
                EXPECT_EQ(g.hit, r.hit) << family_name(family) << ", sample " << i << ", " << threads << " threads";
                EXPECT_EQ(g.miss, r.miss) << family_name(family) << ", sample " << i << ", " << threads << " threads";
            }
        }
    }
}

// The float32 screen drops a sample when its float32 lower bound exceeds the upper bound of
// the best float32 candidate. Squared weights below float32's normal range are rounded when
// converted (here 1.05e-45 becomes 2^-149 = 1.4e-45, 33% more), an error the bounds must
// carry. Query 0 sits at the origin; sample 1 differs in feature 0 only (weight^2 1e-34),
// sample 2 in the 63 tiny-weight features only, and is truly nearer (its squared distance is
// 1/1.1 of sample 1's), but float32 sees it 1.2 times farther.
TEST(NeighbourFinderBounds, SubnormalFloat32WeightsKeepTheTrueNearestHit) {
    // Regression: the conversion of w2 to float32 was allowed for only relatively; a squared
    // weight below float32's normal range errs by up to 2^-126 absolute, which the bound
    // missed once max w2 < ~5e-32 (fastfs.margins with user weights all below ~2e-16).
    const Index m = 6, n = 64;
    Mat<double> X = Mat<double>::Zero(m, n);
    const double E = 1e6;
    const double w2_tiny = 1.05e-45, w2_top = 1e-34;
    const double dj2 = static_cast<double>(n - 1) * w2_tiny * E * E;
    X(1, 0) = std::sqrt(1.1 * dj2 / w2_top);
    for (Index f = 1; f < n; ++f) X(2, f) = E;
    for (Index i = 3; i < m; ++i) X.row(i).setConstant(1e8);  // far away
    Codes codes(m);
    codes << 0, 0, 0, 0, 1, 1;
    std::vector<double> w2(static_cast<std::size_t>(n), w2_tiny);
    w2[0] = w2_top;
    const auto r = ref_hit_miss(X, codes, w2, 0);
    ASSERT_EQ(r.hit, 2);
    for (int threads : {1, 2}) {
        const auto got = fastfs::all_nearest_hit_miss<double>(X, codes, w2.data(), threads);
        EXPECT_EQ(got[0].hit, 2) << "float64 data: the float32 screen dropped the true nearest hit";
        const Mat<float> X32 = X.cast<float>();
        ASSERT_EQ(ref_hit_miss(X32, codes, w2, 0).hit, 2);
        const auto got32 = fastfs::all_nearest_hit_miss<float>(X32, codes, w2.data(), threads);
        EXPECT_EQ(got32[0].hit, 2) << "float32 data: the float32 screen dropped the true nearest hit";
    }
}
